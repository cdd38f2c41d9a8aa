"""Audit, session 10 (second shift): this session's new parameters on degraded fabrics.

A failure never makes the priced work faster: a MoE exchange sharing its NICs with
background traffic (``nic_background``) and a decode step replayed from a padded CUDA graph
(``graph_batch``), on a fabric with lost NVLink lanes, a lost NIC-to-rail or rail-to-spine
link. Brute-force reference: the same call on the intact fabric.
"""

import math

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import topologies
from analysis import decode_step, moe_exchange
from fabric import RoutingError, SpecError

RAIL = topologies.build("rail:servers=2,gpus=4,chip=h200")
_NVLINK = [(f"chip{c}", f"nvs{c // 4}") for c in range(8)]
_NET = [(f"nic{n}", f"rail{n % 4}") for n in range(8)] + [
    (f"rail{r}", f"spine{s}") for r in range(4) for s in range(2)]


@st.composite
def failures(draw):
    lanes = draw(st.lists(st.sampled_from(_NVLINK), max_size=4))
    links = draw(st.lists(st.sampled_from(_NET), max_size=2, unique=True))
    return lanes, links


def _degraded(lanes, links):
    try:
        return RAIL.without(lanes=lanes, links=links)
    except (SpecError, RoutingError):
        return None


@settings(max_examples=40, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(fail=failures(), tokens=st.sampled_from([1, 16, 128]),
       kernel=st.sampled_from(["deepep-low-latency", "deepep-normal", "pplx"]),
       share=st.sampled_from([0.0, 0.25, 0.9]))
def test_background_traffic_on_a_degraded_rail_is_never_faster(fail, tokens, kernel, share):
    g = _degraded(*fail)
    if g is None:
        return
    kw = {"kernel": kernel, "dispatch_bytes": 7168, "combine_bytes": 14336,
              "nic_background": share * 40e9}       # under the NIC's achieved 47 GB/s
    a = moe_exchange(RAIL, "deepseek-v3", tokens, 8, **kw)
    try:
        b = moe_exchange(g, "deepseek-v3", tokens, 8, **kw)
    except (SpecError, RoutingError) as e:
        assert str(e)         # a cut-off rank is refused by name
        return
    for x, y in ((a.dispatch, b.dispatch), (a.combine, b.combine)):
        assert math.isfinite(y) and y > 0
        assert y >= x * (1 - 1e-12)


@settings(max_examples=25, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(fail=failures(), batch=st.sampled_from([1, 3, 8]), pad=st.sampled_from([0, 1, 5]),
       layout=st.sampled_from(["tp=8", "tp=1,dp=8,ep=8", "tp=4,dp=2,ep=8"]))
def test_a_padded_graph_on_a_degraded_rail_is_never_faster(fail, batch, pad, layout):
    g = _degraded(*fail)
    if g is None:
        return
    kw = {"batch": batch, "context": 1024, "layout": layout, "graph_batch": batch + pad}
    a = decode_step("deepseek-v3", RAIL, **kw).time
    try:
        b = decode_step("deepseek-v3", g, **kw).time
    except (SpecError, RoutingError) as e:
        assert str(e)
        return
    assert math.isfinite(b) and b >= a * (1 - 1e-12)
    # padding never makes the step faster than the real batch on the same fabric
    assert b >= decode_step("deepseek-v3", g, **{**kw, "graph_batch": None}).time * (1 - 1e-12)
