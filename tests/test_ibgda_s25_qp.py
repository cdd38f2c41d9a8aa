"""Session 25 (ibgda; lead's decision 14:31): an RDMA atomic after writes on one queue pair.

On multi-path capable adapters (ConnectX-7, BlueField-3) over a multi-path fabric (InfiniBand
adaptive routing) the adapter does not issue an atomic until every write in flight on its queue
pair has completed: one round trip per atomic that follows writes (deepseek-ai/DeepEP PR #437).
NVSHMEM 3.2.5's put-with-signal writes one RDMA-write WQE and then the signal's atomic WQE on the
same RC queue pair (pplx-kernels: every message, ``qp_signals`` ``"each"``; a rank's messages to
one peer over NVSHMEM's default 2 queue pairs); DeepEP low-latency (since 2d0cf41) posts one
atomic per queue pair after its expert's writes (``"last"``). Named assumption: the fabric runs
adaptive routing (``EXCHANGE_ADAPTIVE_ROUTING``; ``adaptive_routing=False`` switches it off); the
round trip is two of NCCL's network steps, a latency the model already holds.

The reference below counts by hand: the expected messages from a rank to one rank across the
network (tokens x k / ep: one per (token, expert)), over the queue pairs they spread over.
"""

import dataclasses
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import topologies
from analysis import moe_exchange
from fabric import EXCHANGE_SYNC, SpecError, exchange_kernel
from fabric._exchange import EXCHANGE_ADAPTIVE_ROUTING

_KW = {"dispatch_bytes": 1 + 4 / 128, "combine_bytes": 2, "routing": "uniform"}
_TRIP = 2 * EXCHANGE_SYNC["network"].value
_FABRICS = {}


def _h100(nodes, failed=()):
    key = (nodes, failed)
    if key not in _FABRICS:
        f = topologies.build(f"rail:servers={nodes},gpus=8,links=18,nic=ib-ndr,chip=h100")
        _FABRICS[key] = f.without(links=list(failed)) if failed else f
    return _FABRICS[key]


def _without_rule(name):
    return dataclasses.replace(exchange_kernel(name), name=f"{name}-no-qp", qp_signals=(),
                               qp_per_peer=0)


def _atomics(kernel, tokens, ep, k=8):
    """Atomics after writes on the busiest remote queue pair, counted by hand."""
    per_peer = tokens * k / ep
    if kernel == "pplx":                  # each message a write + its atomic, over 2 QPs
        return math.ceil(per_peer / 2)
    return 1                              # DeepEP: one atomic after each queue pair's writes


def _own(kernel, tokens, ep, nbytes, k=8):
    """Seconds the busiest queue pair's own writes take at a 400G NIC's achieved 47 GB/s where
    each is followed by its atomic (session 32: the queue pair holds its later writes behind
    the atomic, so they do not overlap its round trips); 0 for DeepEP's one atomic."""
    if kernel != "pplx":
        return 0.0
    return tokens * k / ep * nbytes / 2 / 47e9


def _floor(kernel, tokens, ep, network, nbytes):
    return max(network + _TRIP, _own(kernel, tokens, ep, nbytes)
               + _atomics(kernel, tokens, ep) * _TRIP)


@settings(max_examples=12, deadline=None)
@given(kernel=st.sampled_from(["pplx", "deepep-low-latency"]),
       nodes=st.sampled_from([2, 3, 4, 8]), tokens=st.integers(1, 160))
def test_the_busiest_queue_pair_waits_a_round_trip_per_atomic_after_writes(kernel, nodes,
                                                                            tokens):
    f, ep = _h100(nodes), 8 * nodes
    on = moe_exchange(f, "deepseek-v3", tokens, ep, kernel=kernel, **_KW)
    off = moe_exchange(f, "deepseek-v3", tokens, ep, kernel=kernel, adaptive_routing=False,
                       **_KW)
    for a, b, nbytes in ((on.dispatch_phase, off.dispatch_phase, on.dispatch_bytes),
                         (on.combine_phase, off.combine_phase, on.combine_bytes)):
        want = _floor(kernel, tokens, ep, b.network, nbytes)
        assert a.queue_pair == pytest.approx(want, rel=1e-12)
        assert a.transfer == pytest.approx(max(b.transfer, want), rel=1e-12)
        assert a.time - a.transfer == pytest.approx(b.time - b.transfer, rel=1e-12, abs=1e-15)
        assert (a.bottleneck == "queue pair") == (want > b.transfer)
        assert b.queue_pair == 0.0
    assert EXCHANGE_ADAPTIVE_ROUTING in on.parameters
    assert EXCHANGE_ADAPTIVE_ROUTING not in off.parameters


@settings(max_examples=8, deadline=None)
@given(kernel=st.sampled_from(["pplx", "deepep-low-latency"]),
       nodes=st.sampled_from([2, 4]), tokens=st.integers(1, 128))
def test_switched_off_or_without_atomics_nothing_moves(kernel, nodes, tokens):
    """adaptive_routing=False prices what a kernel without atomics after writes prices."""
    f, ep = _h100(nodes), 8 * nodes
    off = moe_exchange(f, "deepseek-v3", tokens, ep, kernel=kernel, adaptive_routing=False,
                       **_KW)
    none = moe_exchange(f, "deepseek-v3", tokens, ep, kernel=_without_rule(kernel), **_KW)
    assert (off.dispatch, off.combine) == (none.dispatch, none.combine)


@pytest.mark.parametrize("kernel", ["pplx", "deepep-low-latency"])
def test_inside_one_node_no_queue_pair_is_used(kernel):
    f = _h100(1)
    on = moe_exchange(f, "deepseek-v3", 128, 8, kernel=kernel, **_KW)
    off = moe_exchange(f, "deepseek-v3", 128, 8, kernel=kernel, adaptive_routing=False, **_KW)
    assert (on.dispatch, on.combine) == (off.dispatch, off.combine)
    assert on.dispatch_phase.queue_pair == on.combine_phase.queue_pair == 0.0
    # over RDMA alone the node's ranks are reached through the NIC: the rule applies
    rd = moe_exchange(f, "deepseek-v3", 128, 8, kernel=kernel, transport="rdma", **_KW)
    assert rd.dispatch_phase.queue_pair > 0


def test_pplx_128_tokens_across_two_nodes_is_queue_pair_bound():
    # 128 x 8 / 16 = 64 messages to each remote rank, 32 on each of its 2 queue pairs: 32 round
    # trips (172.8 us) and the queue pair's own 32 writes (session 32: 5.0 us at 47 GB/s)
    # outlast the network's 80.6 us
    r = moe_exchange(_h100(2), "deepseek-v3", 128, 16, kernel="pplx", **_KW)
    assert r.dispatch_phase.bottleneck == "queue pair"
    assert r.dispatch_phase.queue_pair == pytest.approx(
        32 * 5.4e-6 + 32 * r.dispatch_bytes / 47e9, rel=1e-12)
    # at 64 nodes... 128 ranks: 8 messages a peer, 4 a queue pair: under the network + one trip
    r = moe_exchange(_h100(16), "deepseek-v3", 128, 128, kernel="pplx", **_KW)
    assert r.dispatch_phase.queue_pair == pytest.approx(r.dispatch_phase.network + 5.4e-6,
                                                        rel=1e-12)


_DEGRADED = {}


def _cluster(spines_left):
    """cluster-128 (16 nodes x 8 H100, rails and 8 spines) with the links of all but the first
    ``spines_left`` spines failed: the network's detours load fewer links."""
    if spines_left not in _DEGRADED:
        f = topologies.build("cluster-128")
        edges = [(u, v) for u, v in f.graph.edges if "spine" in f"{u}{v}"]
        spines = sorted({x for e in edges for x in e if "spine" in str(x)})
        cut = [f"{u}-{v}" for u, v in edges if {u, v} & set(spines[spines_left:])]
        _DEGRADED[spines_left] = f.without(links=cut) if cut else f
    return _DEGRADED[spines_left]


@settings(max_examples=6, deadline=None)
@given(tokens=st.integers(1, 128), spines=st.sampled_from([1, 2, 8]),
       kernel=st.sampled_from(["pplx", "deepep-low-latency"]))
def test_a_degraded_network_is_priced_and_never_faster(tokens, spines, kernel):
    """Failed spine links concentrate the network stage on fewer links; the queue pair's floor
    follows the network's (longer) time, and the rule never makes an exchange faster."""
    f = _cluster(spines)
    on = moe_exchange(f, "deepseek-v3", tokens, 32, kernel=kernel, **_KW)
    off = moe_exchange(f, "deepseek-v3", tokens, 32, kernel=kernel, adaptive_routing=False,
                       **_KW)
    assert on.dispatch >= off.dispatch and on.combine >= off.combine
    assert on.dispatch_phase.queue_pair == pytest.approx(
        _floor(kernel, tokens, 32, off.dispatch_phase.network, on.dispatch_bytes), rel=1e-12)


def test_bad_input_names_the_problem():
    f = _h100(2)
    # a wrong kind is a TypeError (STYLE), named by flag_of as every flag is
    with pytest.raises(TypeError, match=r"^adaptive_routing must be True, False or None, got "
                                        r"'yes' \(a str\)$"):
        moe_exchange(f, "deepseek-v3", 8, 16, kernel="pplx", adaptive_routing="yes", **_KW)
    k = exchange_kernel("pplx")
    with pytest.raises(ValueError, match="qp_signals must be"):
        dataclasses.replace(k, name="x", qp_signals=("each",))
    with pytest.raises(ValueError, match="qp_signals must be"):
        dataclasses.replace(k, name="x", qp_signals=("every", ""))
    with pytest.raises(ValueError, match="'each' needs qp_per_peer"):
        dataclasses.replace(k, name="x", qp_per_peer=0)
    with pytest.raises(ValueError, match="qp_per_peer must be an int >= 0"):
        dataclasses.replace(k, name="x", qp_per_peer=-1)
    with pytest.raises(SpecError, match="messages must be a finite number >= 0"):
        k.qp_atomics(0, -1)


def test_the_sources_name_the_code_and_the_assumption():
    src = EXCHANGE_ADAPTIVE_ROUTING.source
    assert "#437" in src and "Assumption: the fabric runs adaptive routing" in src
    pplx = dict(exchange_kernel("pplx").sources)
    assert "nvshmemi_ibgda_put_signal_impl" in pplx["qp_signals"]
    assert "NVSHMEM_IBGDA_NUM_RC_PER_PE" in pplx["qp_per_peer"]
    deepep = dict(exchange_kernel("deepep-low-latency").sources)["qp_signals"]
    assert "l.221" in deepep and "2d0cf41" in deepep
    # NCCL EP's GIN path is not read: DeepEP's pattern, named as an assumption
    ncclep = exchange_kernel("ncclep-low-latency")
    assert ncclep.qp_signals == ("last", "last")
    assert "GIN (not read)" in dict(ncclep.sources)["qp_signals"]
    names = {p.name for p in exchange_kernel("pplx").parameters()}
    assert {"pplx.qp_signals", "pplx.qp_per_peer"} <= names
