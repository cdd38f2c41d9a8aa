"""Audit, session 19: a degraded fabric is priced as the fabric it has become.

Reference: a switched node that loses the same number of lanes on every chip's link to
every switch, a whole switch plane or its last chips is, as a graph, the node built that
way (``links=L-k``, ``planes=P-1``, ``switch:N-m``). Every higher layer must then give the
same answer on the two: a quantity read from the fabric as built (``fabric.intact``, the
builder's ``params``) instead of the live graph shows up as a difference. Checked: every
collective under NCCL (several releases) and the ideal runtime, every exchange kernel,
a decode step, a serving point and a prefill. Session 19's hunt found one
place that priced the intact fabric: NCCL's ring and tree bandwidth on a degraded node was
held at the intact node's per-channel speed (``analysis._runtime_cost._per_channel_cap``),
so a node that lost NVLinks was priced below the node built with as many, which NCCL, seeing
only the live links, cannot tell apart. Runtime removed that cap where the channels are
NCCL's own search (lead's decision, session 19), so every property here runs under NCCL's
ring and tree too (150 draws of each by hand, runtime's notes).
"""

import pytest
from built_oracle import collective_alike, decode_serving_prefill_alike, exchange_alike
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import analysis
import topologies
from fabric import EXCHANGE_KERNELS


@st.composite
def pairs(draw):
    """(degraded fabric, the same fabric as built, what was failed)."""
    n = draw(st.sampled_from([4, 8]))
    planes = draw(st.integers(1, 4))
    links = draw(st.integers(2, 9))
    tail = f"tech={draw(st.sampled_from(['nvlink4', 'nvlink5']))},chip=" \
           f"{draw(st.sampled_from(['h100', 'b200']))}"
    spec = f"switch:{n},planes={planes},links={links},{tail}"
    f = topologies.build(spec)
    kinds = ["lanes", "chips"] + (["plane"] if planes > 1 else [])
    kind = draw(st.sampled_from(kinds))
    if kind == "lanes":
        k = draw(st.integers(1, links - 1))
        lost = [f"{u}-{v}" for u, v in f.graph.edges if u.startswith("chip") != v.startswith(
            "chip")]
        return (f.without(lanes=lost * k),
                topologies.build(f"switch:{n},planes={planes},links={links - k},{tail}"), kind)
    if kind == "plane":
        return (f.without(chips=[f"sw{planes - 1}"]),
                topologies.build(f"switch:{n},planes={planes - 1},links={links},{tail}"), kind)
    m = draw(st.integers(1, n - 2))
    return (f.without(chips=[f"chip{n - 1 - i}" for i in range(m)]),
            topologies.build(f"switch:{n - m},planes={planes},links={links},{tail}"), kind)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pairs(), st.sampled_from(["all-reduce", "all-gather", "reduce-scatter", "all-to-all",
                                 "broadcast"]),
       st.sampled_from([4096, 2**20, 2**28]),
       st.sampled_from(["nccl", "nccl@2.18.3", "nccl@2.23.4", "ideal"]))
def test_a_collective_on_a_degraded_node_is_the_node_built_so(pair, op, size, runtime):
    g, h, _ = pair
    assert collective_alike(g, h, op, size, runtime)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pairs(), st.sampled_from(list(EXCHANGE_KERNELS)), st.sampled_from([1, 128, 4096]),
       st.sampled_from(["uniform", "balanced"]))
def test_an_exchange_on_a_degraded_node_is_the_node_built_so(pair, kernel, tokens, routing):
    g, h, _ = pair
    assert exchange_alike(g, h, kernel, tokens, routing)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pairs(), st.sampled_from([1, 64]), st.booleans())
def test_decode_serving_and_prefill_on_a_degraded_node_are_the_node_built_so(pair, batch, tp):
    g, h, _ = pair
    n = h.n_endpoints
    assert decode_serving_prefill_alike(g, h, batch, f"tp={n}" if tp else f"tp=1,dp={n}")


# passes since runtime's session-19 change (lead 22:07): no intact per-channel cap where the
# channels are NCCL's own search (analysis._collectives._GroupView.channels_searched)
@pytest.mark.parametrize("lanes", [["chip0-sw0", "chip0-sw1"],          # one GPU at 16
                                   [f"chip{i}-sw{j}" for i in range(8) for j in range(2)]])
def test_nccl_on_an_h100_node_that_lost_nvlinks_is_the_node_built_with_16(lanes):
    # 18 NVLinks per H100 (2 switches x 9): NCCL's search gives 24 channels; at 16 (the
    # weakest GPU's, which bounds every ring) 16, as on a node built with 2 x 8. The model
    # prices the degraded node's 1 GiB all-reduce at 245.4 GB/s bus bandwidth, the built
    # one at 326.4 (the intact 366.7 GB/s / 24 channels x 16).
    f = topologies.build("switch:8,planes=2,links=9,tech=nvlink4,chip=h100")
    built = topologies.build("switch:8,planes=2,links=8,tech=nvlink4,chip=h100")
    for size in (2**20, 2**24, 2**30):
        assert analysis.cost(f.without(lanes=lanes), "all-reduce", size).time == \
            pytest.approx(analysis.cost(built, "all-reduce", size).time, rel=1e-12)
