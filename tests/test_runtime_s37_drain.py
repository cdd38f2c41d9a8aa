"""A Simple point-to-point part's last chunk is copied out after its bytes (session 37, runtime;
``analysis._runtime_cost.p2p_drain``, added to ``_p2p``'s time).

NCCL's send and receive run ``ProtoSimple<1, 1>`` (NVIDIA/nccl ``src/device/sendrecv.h``, every
release 2.18-2.30): one slice a chunk of ``p2pChunkSize`` (512 KiB over NVLink), the tail posted
after the whole slice, and no direct path without registered buffers, so the receiver copies a
chunk out of its buffer only once all of it is written. A part of at most one chunk (every
all-to-all part of NVIDIA's collector at 1 and 16 MiB) runs its write and its copy-out in
series. Priced at the chip's HBM bandwidth for the busiest receiver's messages from peers of its
node; LL messages and the copy to itself pay none.
"""
import numpy as np
import pytest
from degrade import built
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from p2p_groups import group_view, p2p_drain_brute, rank_group

from analysis import NotApplicableError, cost
from analysis._runtime_cost import p2p_drain
from fabric import RoutingError, runtime

MiB = 1 << 20


def test_a_part_of_one_chunk_is_copied_out_after_its_bytes():
    # 8 H100, 16 MiB: 2 MiB to each of 7 peers on 4 channels, 512 KiB parts = one chunk each:
    # every byte is copied out after it lands, read and written at 3.35 TB/s (8.76 us)
    f = built("dgx-h100")
    rt = runtime("nccl@2.29.2")
    view = group_view(f, "all-to-all")
    assert p2p_drain(rt, view, "all-to-all", 16 * MiB) == 2 * 7 * 2 * MiB / 3.35e12
    c = cost(f, "all-to-all", 16 * MiB, runtime="nccl@2.29.2")
    assert (c.protocol, c.channels) == ("Simple", 4)
    t = view.transfer("scattered", "all-to-all")
    assert c.time - c.fixed == pytest.approx(16 * MiB * t.per_byte + 2 * 14 * MiB / 3.35e12,
                                             rel=1e-12)
    # LL (512 B): the receiver reads each line as it lands, nothing after the bytes
    assert p2p_drain(rt, view, "all-to-all", 512) == 0.0


def test_network_peers_and_the_copy_to_itself_pay_none():
    # 2 servers x 4 H100: an all-to-all's 3 messages from the rank's own server pay it, the 4
    # from the other server (their copy-out waits on the proxy, their chunk cut by size) and
    # the copy to itself do not; 16 MiB: 2 MiB a message, 4 parts of the 128 KiB network chunk
    # (p2pChunkSize across nodes): 512 KiB a message
    f = built("rail:servers=2,gpus=4,chip=h100")
    rt = runtime("nccl@2.29.2")
    view = group_view(f, "all-to-all")
    chunk = 128 * 1024
    parts = cost(f, "all-to-all", 16 * MiB, runtime="nccl@2.29.2").channels
    assert p2p_drain(rt, view, "all-to-all", 16 * MiB) == pytest.approx(
        2 * 3 * min(2 * MiB, parts * chunk) / 3.35e12, rel=1e-12)
    # a send-recv between the servers: none
    far = group_view(f, "send-recv", ["chip0", "chip4"])
    assert p2p_drain(rt, far, "send-recv", 16 * MiB) == 0.0


_SPECS = ["dgx-h100", "hgx-b200", "switch:8,chip=h200", "rail:servers=2,gpus=4,chip=h100",
          "gb200-nvl72"]


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(group=rank_group(_SPECS, max_ranks=8),
       release=st.sampled_from(["nccl@2.21.5", "nccl@2.22.3", "nccl@2.25.1", "nccl@2.29.2",
                                "nccl"]),
       op=st.sampled_from(["all-to-all", "send-recv"]),
       size=st.sampled_from([65536, MiB, 3 * MiB + 4096, 16 * MiB, 100 * MiB + 4096,
                             256 * MiB]))
def test_drain_is_the_busiest_receivers_pair_by_pair(group, release, op, size):
    # any rank group of a (possibly degraded) fabric: an all-to-all is every pair's message of
    # size / p (the diagonal its copy), a send-recv one message from the first rank to the
    # second (the model's send-recv message is a network peer's in a group across nodes,
    # none priced); against the pair-by-pair loop, and inside the operation's time
    f, ranks, _nodes, _idx = group
    p = len(ranks)
    pairs = np.zeros((p, p))
    if op == "all-to-all":
        pairs[:] = size / p
    else:
        pairs[0, 1] = size
    rt = runtime(release)
    view = group_view(f, op, ranks)
    brute = (p2p_drain_brute(rt, view, pairs)
             if op == "all-to-all" or view.n_nodes == 1 else 0.0)
    assert p2p_drain(rt, view, op, size) == pytest.approx(brute, rel=1e-12, abs=1e-18)
    try:
        c = cost(f, op, size, ranks=ranks, runtime=release)
    except (RoutingError, NotApplicableError):
        assume(False)
    assert c.time - c.fixed >= brute


def test_a_uniform_all_to_allv_drains_as_the_all_to_all():
    f = built("hgx-b200")
    p = f.n_endpoints
    M = np.full((p, p), 2.0 * MiB)
    a = cost(f, "all-to-all", p * 2 * MiB, runtime="nccl@2.29.2")
    v = cost(f, "all-to-allv", M, runtime="nccl@2.29.2", algorithm="scattered")
    assert v.time == pytest.approx(a.time, rel=1e-12)


def test_before_2_23_a_peer_of_the_same_process_was_written_directly():
    # until 2.22 a Simple p2p to a peer of the same process ('P2P/direct pointer') took the
    # direct path without registered buffers (no copy-out); from 2.23 only with them. 8 H100,
    # 16 MiB: one process a device, every release pays 7 x 2 MiB; one process of 8 devices
    # (nccl-tests -g 8) none under 2.22.3 and all of it under 2.23.4; 2 processes of 4: 4 peers
    f = built("dgx-h100")
    full = 2 * 7 * 2 * MiB / 3.35e12
    for rel, devices, want in (("2.22.3", 1, full), ("2.22.3", 8, 0.0), ("2.23.4", 8, full),
                               ("2.22.3", 4, full * 4 / 7), ("2.21.5", 8, 0.0)):
        view = group_view(f, "all-to-all")
        view.process_devices = devices
        assert p2p_drain(runtime(f"nccl@{rel}"), view, "all-to-all", 16 * MiB) == \
            pytest.approx(want, rel=1e-12, abs=1e-18), (rel, devices)
    # cost() passes devices_per_process on: the bytes' part of the time moves by the drain
    kw = {"runtime": "nccl@2.22.3"}
    one = cost(f, "all-to-all", 16 * MiB, **kw)
    eight = cost(f, "all-to-all", 16 * MiB, devices_per_process=8, **kw)
    assert (one.time - one.fixed) - (eight.time - eight.fixed) == pytest.approx(full, rel=1e-9)
    # a send-recv ring: a message from another process unless one process holds every rank
    two = group_view(f, "send-recv", ["chip0", "chip1"])
    two.process_devices = 2
    assert p2p_drain(runtime("nccl@2.22.3"), two, "send-recv", 16 * MiB) == 0.0
    assert p2p_drain(runtime("nccl@2.29.2"), two, "send-recv", 16 * MiB) > 0.0

