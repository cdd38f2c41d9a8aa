"""Audit, session 16: a link's bandwidth and latency are checked wherever a link is made.

Before: the graph schema refused a bandwidth <= 0 but took 1e-300 B/s, and a user's
``fabric.LinkTech`` took anything: ``LinkTech("mine", -1.0, 1e-7, ...)`` built a torus whose
all-reduce of 1 MiB cost 1.16 us, a latency of -1 s gave a time of -524,292 s, an infinite one
an infinite time, nan bandwidth a ValueError from int(); ``analysis.scale_links(f, 5e-324)``
(or 1e308) made links of 3e-313 (or inf) B/s, and costing them raised ZeroDivisionError
(nccl) or OverflowError (ideal); a user graph of 1e300 B/s links raised OverflowError in
NCCL's p2p channel count. Now one rule (``fabric._schema.bandwidth_fault`` / ``latency_fault``)
is read by the schema, by ``LinkTech`` and by ``scale_links``: a bandwidth is a number from
``MIN_BANDWIDTH`` = 1 to ``MAX_BANDWIDTH`` = 1e18 bytes/s (outside, the model's float arithmetic
overflows; no interconnect is near either: a 1200-baud serial line moves 150 B/s, an 18-lane
NVLink5 bundle 9e11 B/s), a latency a number from 0 to ``MAX_LATENCY`` = 1 s (not a bool; a
latency of 1.5e308 s gave an infinite time: sums over hops overflow).
"""

import math
import re

import networkx as nx
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import analysis
import topologies
from fabric import (
    MAX_BANDWIDTH,
    MAX_LATENCY,
    MIN_BANDWIDTH,
    Fabric,
    GraphError,
    LinkTech,
    SpecError,
)


def _pair(**edge):
    G = nx.Graph()
    G.add_node("a", kind="chip")
    G.add_node("b", kind="chip")
    G.add_edge("a", "b", **{"bandwidth": 1e9, "latency": 1e-6, **edge})
    return G


BAD_BANDWIDTHS = [0, -3.0, 1e-300, 5e-324, 0.999, 1.0001e18, 1e300, math.inf, math.nan, True,
                  "1e9", None]
BAD_LATENCIES = [-1.0, -1e-300, 1.0000001, 1.5e308, math.inf, math.nan, True, False, "0"]


@pytest.mark.parametrize("bw", [b for b in BAD_BANDWIDTHS if b is not None])
def test_the_schema_refuses_a_bandwidth_outside_one_byte_to_1e18_per_second(bw):
    with pytest.raises(GraphError, match=r"has bandwidth .*; it must be a number "
                                         r"from 1 to 1e\+18 bytes/s"):
        Fabric.from_graph(_pair(bandwidth=bw))


@pytest.mark.parametrize("lat", BAD_LATENCIES)
def test_the_schema_refuses_a_latency_below_zero_or_not_finite(lat):
    with pytest.raises(GraphError, match=r"has latency .*; it must be a number from 0 to 1 seconds"):
        Fabric.from_graph(_pair(latency=lat))


@pytest.mark.parametrize("bw, lat", [(MIN_BANDWIDTH, 0), (1, 0.0), (np.float64(1e9), 1e-7),
                                     (MAX_BANDWIDTH, MAX_LATENCY)])
def test_the_schema_takes_links_at_the_bounds(bw, lat):
    f = Fabric.from_graph(_pair(bandwidth=bw, latency=lat))
    t = analysis.cost(f, "all-reduce", 2**20, runtime="ideal").time
    assert math.isfinite(t) and t >= 0


@pytest.mark.parametrize("bw", [b for b in BAD_BANDWIDTHS if not isinstance(b, str)])
def test_a_link_technology_refuses_a_bad_bandwidth_by_name(bw):
    with pytest.raises(SpecError, match=r"link technology 'mine': bandwidth .* must be a "
                                        r"number from 1 to 1e\+18 bytes/s"):
        LinkTech("mine", bw, 1e-7, "assumption")


@pytest.mark.parametrize("lat", BAD_LATENCIES)
def test_a_link_technology_refuses_a_bad_latency_by_name(lat):
    with pytest.raises(SpecError, match=r"link technology 'mine': latency .* must be a number "
                                        r"from 0 to 1 seconds"):
        LinkTech("mine", 1e9, lat, "assumption")


def test_a_good_link_technology_builds_and_costs():
    t = LinkTech("mine", 1e9, 1e-7, "assumption")
    f = topologies.torus((4,), tech=t, chip="h100")
    assert analysis.cost(f, "all-reduce", 2**20, runtime="ideal").time > 0


@pytest.mark.parametrize("factor", [5e-324, 1e-300, 1e308, 1e8])
def test_scale_links_refuses_a_bandwidth_factor_that_leaves_no_link(factor):
    f = topologies.build("torus:4,chip=h100")
    with pytest.raises(ValueError, match=re.escape(f"bandwidth x{factor:.4g} makes link ")):
        analysis.scale_links(f, bandwidth=factor)


def test_scale_links_refuses_a_latency_factor_that_leaves_no_link():
    f = Fabric.from_graph(_pair(latency=1e-3))
    with pytest.raises(ValueError, match=r"latency x1e\+04 makes link a-b's latency 10.0; "
                                         r"it must be a number from 0 to 1 seconds"):
        analysis.scale_links(f, latency=1e4)


def test_scale_links_at_a_sane_factor_is_unchanged():
    f = topologies.build("torus:4,chip=h100")
    g = analysis.scale_links(f, bandwidth=1e-9, latency=1e3)
    assert g.graph.edges["chip0", "chip1"]["bandwidth"] == f.graph.edges["chip0", "chip1"][
        "bandwidth"] * 1e-9


def _stub(nic):
    G = _pair(bandwidth=25e9, latency=1e-6, carries="messages")
    if nic:
        G.add_node("nic", kind="nic")
        G.add_edge("b", "nic", bandwidth=50e9, latency=1e-7)
    return Fabric.from_graph(G)


@pytest.mark.parametrize("runtime", ["nccl", "nccl@2.18.3", "nccl@2.22.3"])
@pytest.mark.parametrize("op", ["send-recv", "all-to-all", "all-reduce"])
def test_a_nic_with_no_link_past_it_carries_nothing(op, runtime):
    """Before: a user graph's NIC with no link past its chip left the group's NIC bandwidth at
    inf (the least over no links), and NCCL's p2p channel count raised OverflowError."""
    with_stub = analysis.cost(_stub(True), op, 4096, runtime=runtime).time
    assert math.isfinite(with_stub)
    assert with_stub == analysis.cost(_stub(False), op, 4096, runtime=runtime).time


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(st.floats(allow_nan=True, allow_infinity=True, allow_subnormal=True),
                st.floats(MIN_BANDWIDTH, MAX_BANDWIDTH)),
       st.one_of(st.floats(allow_nan=True, allow_infinity=True, allow_subnormal=True),
                 st.floats(0, MAX_LATENCY)),
       st.sampled_from(["ideal", "nccl", "symmetric-memory"]))
def test_any_link_technology_is_refused_by_name_or_costs_a_finite_time(bw, lat, runtime):
    """Property: a technology of any two floats is either refused (SpecError naming it) or
    builds a fabric whose collectives cost a finite time > 0."""
    try:
        t = LinkTech("mine", bw, lat, "assumption")
    except SpecError as e:
        assert "link technology 'mine'" in str(e)
        return
    f = topologies.torus((4,), tech=t, chip="h100")
    for op in ("all-reduce", "all-to-all"):
        for n in (1, 2**20, 2**40):
            got = analysis.cost(f, op, n, runtime=runtime).time
            assert math.isfinite(got) and got > 0, (bw, lat, op, n, got)
