"""NCCL's grouped point-to-point operations run as further work batches of one kernel, each
costing the batch chain counted in NCCL's own compiled code (session 24, runtime).

``analysis._runtime_cost.P2P_BATCH_CHAIN`` / ``p2p_batch_chain``: the serial path of one
further batch of NVIDIA/nccl v2.29.2-1's ``ncclDevKernel_SendRecv`` (sm_90), its scheduled
cycles and the loads it waits for. A group of ``m`` send/recv operations to one peer
(nccl-tests ``-m``) is ``m`` batches on one channel: the kernel floor and one step for the
first, the chain and one step for each further one; an all-to-all's rounds that queue on a
channel (``p2p_batches``) are further batches too.
"""
import math

import pytest
from degrade import built
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from p2p_groups import group_view

from analysis import cost
from analysis._runtime_cost import P2P_BATCH_CHAIN, p2p_batch_chain, p2p_batches
from fabric import EXCHANGE_LATENCY, SpecError, runtime

NCCL = runtime("nccl")


def _built(spec, degrade):
    f = built(spec)
    if degrade:   # rank 0 lost one of its links (first-class input)
        e0 = f.endpoints[0]
        f = f.without(links=[(e0, min(f.graph.neighbors(e0), key=str))])
    return f


@pytest.mark.parametrize("arch, stalls, cycles", [("hopper", 2277, 3746.74),
                                                   ("blackwell", 2145, 3679.54)])
def test_chain_is_the_counted_cycles_and_loads(arch, stalls, cycles):
    # Hopper (sm_90): 1,321 + 337 + 619 scheduled cycles; Blackwell (sm_100): 1,310 + 314 +
    # 521; every waited load is paid less what the warp's issue covered, and each stays on the
    # path (its latency exceeds what was covered)
    lat = EXCHANGE_LATENCY[arch]
    cyc = lat["cycle"].value
    assert sum(c for _s, c, _w in P2P_BATCH_CHAIN[arch]) == stalls
    total = 0.0
    for _stretch, n, waits in P2P_BATCH_CHAIN[arch]:
        total += n
        for name, (count, covered) in waits.items():
            assert count * lat[name].value > covered * cyc
            total += count * lat[name].value / cyc - covered
    assert total == pytest.approx(cycles, abs=0.01)
    assert p2p_batch_chain(arch) == pytest.approx(total * cyc, rel=1e-12)


def test_chain_refuses_an_uncounted_architecture():
    with pytest.raises(SpecError, match="no counted NCCL p2p batch: unknown architecture 'tpu'"):
        p2p_batch_chain("tpu")


def test_h800_sendrecv_group_of_100_is_100_batches():
    # NVIDIA/nccl issue 1984's sendrecv_perf -m 100 (-G 10): the 100 grouped 1 KiB sends and
    # receives of one rank run as 100 batches on one channel of one kernel
    f = built("hgx-h800")
    ranks = f.endpoints[:2]
    one = cost(f, "send-recv", 1024, ranks=ranks)
    many = cost(f, "send-recv", 1024, ranks=ranks, ops_per_launch=100)
    floor = NCCL.kernel_floor["hopper"]
    step = one.fixed - floor
    chain = p2p_batch_chain("hopper")
    assert many.fixed == pytest.approx((floor + 100 * step + 99 * chain) / 100, rel=1e-12)
    assert many.time - many.fixed == pytest.approx(one.time - one.fixed, rel=1e-12)
    assert (many.protocol, many.channels) == ("LL", 1)
    assert many.time * 1e6 == pytest.approx(2.509, abs=1e-3)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(spec=st.sampled_from(["hgx-h800", "dgx-h100", "hgx-b200", "nvl72"]),
       degrade=st.booleans(), pair=st.integers(0, 5), ops=st.integers(1, 300),
       size=st.sampled_from([1, 8, 1000, 4096, 16384, 65536, 2**20, 2**26]))
def test_grouped_send_recv_against_a_serial_channel(spec, degrade, pair, ops, size):
    """Brute force: the group's batches run one after another on the channel (the first in the
    kernel floor, every further one its chain and its step), each moving its own bytes."""
    f = _built(spec, degrade)
    ranks = [f.endpoints[pair % 2], f.endpoints[2 + pair]]
    one = cost(f, "send-recv", size, ranks=ranks)
    many = cost(f, "send-recv", size, ranks=ranks, ops_per_launch=ops)
    arch = "blackwell" if spec in ("hgx-b200", "nvl72") else "hopper"
    floor = NCCL.kernel_floor[arch]
    step = one.fixed - floor
    t = floor
    for _batch in range(ops):
        t += step + (one.time - one.fixed)
    t += (ops - 1) * p2p_batch_chain(arch)
    assert math.isclose(many.time * ops, t, rel_tol=1e-9)
    assert (many.protocol, many.channels) == (one.protocol, one.channels)
    # a further batch is cheaper than a kernel of its own: grouping never slows an operation
    assert many.time <= one.time * (1 + 1e-12)


@pytest.mark.parametrize("degrade", [False, True])
def test_all_to_all_rounds_queued_on_a_channel_pay_the_chain(degrade):
    f = _built("sd200-ultra:chip=h100", degrade)
    b = p2p_batches(NCCL, group_view(f, "all-to-all"))
    assert b == 4
    r = cost(f, "all-to-all", 2**20)
    m = cost(f, "all-to-all", 2**20, ops_per_launch=3)
    floor = NCCL.kernel_floor["hopper"]
    chain = p2p_batch_chain("hopper")
    step = (r.fixed - floor - (b - 1) * chain) / b
    assert step >= 0.6e-6 * (1 - 1e-12)    # never under NCCL's LL step on NVLink
    assert m.fixed == pytest.approx((floor + 3 * b * step + (3 * b - 1) * chain) / 3, rel=1e-12)
    # eight ranks never queue (one round per channel): one step, no chain
    e = cost(f, "all-to-all", 8192, ranks=f.endpoints[:8])
    assert 0.6e-6 * (1 - 1e-12) <= e.fixed - floor < chain
