"""Session 32 (ibgda): a queue pair's writes do not overlap its atomics' round trips.

Under adaptive routing the adapter holds an RDMA atomic that follows writes on an RC queue pair
until those writes have completed, 'one RTT of latency for each atomic that follows writes'
(deepseek-ai/DeepEP PR #437), and a queue pair issues its work requests in order, so the writes
after an atomic wait behind it. Where every message is a write followed by its signal's atomic
(``qp_signals`` ``"each"``: NVSHMEM's put-with-signal) the busiest queue pair's chain is its
writes' wire time at the NIC's achieved rate plus one round trip per atomic; session 25 had the
round trips alone. With one atomic after all of a queue pair's writes (``"last"``) the network's
time plus one round trip bounds the chain already. ``qp_chunk``: the tokens one such write carries
before its atomic (DeepEP normal's RDMA chunk; the held-out deepep-i493 rows run a84a248's IBRC
path, one proxy queue pair per peer: tests/fidelity_heldout_moe._DEEPEP_A84A248).
"""

import dataclasses
import functools
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import topologies
from analysis import moe_exchange
from fabric import EXCHANGE_SYNC, SpecError, exchange_kernel

_KW = {"dispatch_bytes": 1 + 4 / 128, "combine_bytes": 2, "routing": "uniform"}
_TRIP = 2 * EXCHANGE_SYNC["network"].value
_RATE = 50e9 * 0.94                      # a 400G NDR NIC at exchange.nic_efficiency


@functools.cache
def _h100(nodes):
    return topologies.build(f"rail:servers={nodes},gpus=8,links=18,nic=ib-ndr,chip=h100")


@pytest.mark.parametrize("qps", [1, 2, 4])
def test_the_queue_pairs_own_writes_add_to_its_round_trips(qps):
    # 128 tokens x top-8 over EP16: 64 messages to each remote rank, spread over qps queue pairs
    k = dataclasses.replace(exchange_kernel("pplx"), name=f"pplx-{qps}qp", qp_per_peer=qps)
    r = moe_exchange(_h100(2), "deepseek-v3", 128, 16, kernel=k, **_KW)
    n = 64 // qps
    for ph, nbytes in ((r.dispatch_phase, r.dispatch_bytes), (r.combine_phase, r.combine_bytes)):
        own = 64 * nbytes / qps / _RATE
        assert ph.queue_pair == pytest.approx(max(ph.network + _TRIP, own + n * _TRIP),
                                              rel=1e-12)
    # one queue pair a peer: its 64 writes (10.1 us) beside 64 round trips (345.6 us)
    if qps == 1:
        assert r.dispatch_phase.queue_pair == pytest.approx(
            64 * _TRIP + 64 * r.dispatch_bytes / _RATE, rel=1e-12)
        assert r.dispatch_phase.queue_pair - 64 * _TRIP > 10e-6


def test_one_atomic_after_a_queue_pairs_writes_keeps_the_network_floor():
    r = moe_exchange(_h100(2), "deepseek-v3", 128, 16, kernel="deepep-low-latency", **_KW)
    for ph in (r.dispatch_phase, r.combine_phase):
        assert ph.queue_pair == pytest.approx(ph.network + _TRIP, rel=1e-12)


@pytest.mark.parametrize("chunk", [1, 8, 32])
def test_a_chunk_of_tokens_is_one_write_and_one_atomic(chunk):
    """DeepEP's normal kernels at a84a248 over IBRC: each RDMA chunk is one write and one tail
    atomic on the one proxy queue pair to the rail peer (at 2 nodes a rank's whole network
    traffic), so the chain is all its bytes plus one round trip per chunk."""
    k = dataclasses.replace(exchange_kernel("deepep-normal"), name=f"deepep-normal-{chunk}",
                            qp_signals=("each", "each"), qp_per_peer=1, qp_chunk=chunk)
    r = moe_exchange(_h100(2), "deepseek-v3", 512, 16, kernel=k, dispatch_bytes=1 + 4 / 128,
                     combine_bytes=2, routing="node-limited:2")
    for ph, nbytes in ((r.dispatch_phase, r.dispatch_bytes), (r.combine_phase, r.combine_bytes)):
        n = math.ceil(ph.nic_bytes / nbytes / chunk)
        assert ph.queue_pair == pytest.approx(
            max(ph.network + _TRIP, ph.nic_bytes / _RATE + n * _TRIP), rel=1e-12)
        assert ph.bottleneck == "queue pair"
    plain = moe_exchange(_h100(2), "deepseek-v3", 512, 16, kernel="deepep-normal",
                         dispatch_bytes=1 + 4 / 128, combine_bytes=2, routing="node-limited:2")
    assert plain.dispatch_phase.queue_pair == 0.0 and plain.dispatch < r.dispatch
    # a chunk other than one token is a Parameter of the kernel
    assert (f"{k.name}.qp_chunk" in {p.name for p in k.parameters()}) == (chunk != 1)


def test_qp_chunk_is_a_count_of_tokens():
    k = exchange_kernel("pplx")
    assert k.qp_chunk == 1 and k.qp_atomics(0, 64.0) == 32
    assert dataclasses.replace(k, name="x", qp_chunk=8).qp_atomics(0, 64.0) == 4
    with pytest.raises(SpecError, match=r"qp_chunk must be an int of tokens >= 1, got qp_chunk=0"):
        dataclasses.replace(k, name="x", qp_chunk=0)
    for bad in (2.5, True, "8"):
        with pytest.raises(TypeError, match="qp_chunk must be an int of tokens >= 1"):
            dataclasses.replace(k, name="x", qp_chunk=bad)


@settings(max_examples=10, deadline=None)
@given(qps=st.integers(1, 4), chunk=st.integers(1, 6), tokens=st.integers(1, 160),
       nodes=st.sampled_from([2, 3, 4]))
def test_the_floor_against_a_hand_count(qps, chunk, tokens, nodes):
    """A pplx-shaped kernel with any queue pairs a peer and tokens a write, uniform routing:
    tokens x 8 / ep messages to each remote rank (counted by hand), ceil(that / (chunk x qps))
    atomics on the busiest queue pair, its writes (that / qps messages) at 47 GB/s."""
    k = dataclasses.replace(exchange_kernel("pplx"), name="pplx-x", qp_per_peer=qps,
                            qp_chunk=chunk)
    ep = 8 * nodes
    r = moe_exchange(_h100(nodes), "deepseek-v3", tokens, ep, kernel=k, **_KW)
    per_peer = tokens * 8 / ep
    n = math.ceil(per_peer / (chunk * qps))
    for ph, nbytes in ((r.dispatch_phase, r.dispatch_bytes), (r.combine_phase, r.combine_bytes)):
        want = max(ph.network + _TRIP, per_peer * nbytes / qps / _RATE + n * _TRIP)
        assert ph.queue_pair == pytest.approx(want, rel=1e-9)
