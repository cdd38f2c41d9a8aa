"""Audit, session 16: a lane is a link, and a fabric's links are bounded (session 15's open
finding (a): specs accepted a 1e11-lane link).

Before: ``torus:4,links=99999999999`` built (metrics: 399,999,999,996 links, 12800000PB/s);
``switch:8`` and ``rail:servers=2,gpus=8`` with the same count reached the bisection's max-flow
solver and stopped there with an internal error (OverflowError, exit 3); a user graph with
``lanes=2**63`` overflowed the int64 edge arrays. The builders counted edges against
``MAX_LINKS`` except leaf_spine's and rail's spine bundles, which counted lanes; metrics counts
lanes. Now every builder and the graph schema count a fabric's lanes against the one limit
(``fabric._schema.MAX_LINKS``, 2**24), and the bisection's bandwidth-weighted cut takes a
coarser integer quantum where the old one (the slowest link / 1000) would overflow the
solver's int32: the cut it finds is a real cut, reported at its true bandwidth.
"""

import networkx as nx
import numpy as np
import pytest
from cli_run import run_cli as _cli

import topologies
from analysis import metrics
from analysis._metrics import bisection
from fabric import Fabric, GraphError, LinkTech, SpecError
from fabric._schema import MAX_LINKS


@pytest.mark.parametrize("spec, links", [
    ("torus:4,links=99999999999", 4 * 99999999999),
    ("torus:2,links=9000000", 2 * 9000000),        # a 2-ring: one edge of 2 x links lanes
    ("mesh:4x4,links=1000000", 24 * 1000000),
    ("hypermesh:4x4,links=99999999999", 48 * 99999999999),
    ("hypermesh:3x3,connect=switch,links=1000000", 18 * 1000000),
    ("switch:8,links=99999999999", 8 * 99999999999),
    ("switch:8,planes=3,links=1000000", 24 * 1000000),
])
def test_a_spec_whose_lanes_pass_the_limit_is_refused_by_its_link_count(spec, links):
    with pytest.raises(SpecError, match=f"has {links:,} links; the limit is {MAX_LINKS:,}"):
        topologies.build(spec)


def test_rail_counts_its_scale_up_bundles_lanes():
    # 16 chips x (scale-up lanes + PCIe + NIC) + 8 rails x 2 servers of rail-spine lanes
    spec = "rail:servers=2,gpus=8,links=99999999999"
    with pytest.raises(SpecError, match=f"has {16 * 99999999999 + 32 + 16:,} links"):
        topologies.build(spec)


@pytest.mark.parametrize("spec", ["switch:8,links=2097152", "torus:2,links=8388608",
                                  "switch:8,planes=2,links=1/2097151"])
def test_a_fabric_at_the_limit_builds_and_its_metrics_answer(spec):
    f = topologies.build(spec)
    m = metrics(f)
    assert m.links == int(f.edge_arrays.lanes.sum()) == MAX_LINKS
    assert m.bisection_links >= 1 and np.isfinite(m.bisection_bandwidth)


def test_mixed_bundles_have_a_bisection():
    """Plane 0's bundles are 1 lane, plane 1's 2,097,151 (2**24 lanes in all): the old quantum
    (the slowest link / 1000) summed past the int32 solver. A balanced cut puts each plane's
    switch on one side, so it crosses four bundles of each plane."""
    f = topologies.switched(8, 2, links=(1, 2097151), tech="nvlink5")
    links, bw, _, _ = bisection(f)
    one = f.graph["chip0"]["sw0"]["bandwidth"]
    assert links == 4 * 2097152
    assert bw == pytest.approx(4 * 2097152 * one, rel=1e-12)


@pytest.mark.parametrize("argv", [
    ["metrics", "torus:4,links=99999999999"],
    ["metrics", "switch:8,links=99999999999"],
    ["metrics", "rail:servers=2,gpus=8,links=99999999999"],
    ["cost", "torus:4,links=99999999999", "--op", "all-reduce", "--size", "1MiB"],
])
def test_the_cli_refuses_a_giant_bundle_in_one_line(argv):
    rc, out, err = _cli(argv)
    assert rc == 2 and out == "", (rc, out, err)
    assert err.count("\n") == 1 and "links; the limit is 16,777,216" in err, err
    assert "Traceback" not in err and "internal error" not in err


def _star(lanes=(1, 1), bandwidths=(1e9, 1e9)):
    G = nx.Graph()
    G.add_node("a", kind="chip")
    G.add_node("b", kind="chip")
    G.add_node("s", kind="switch")
    for c, k, bw in zip("ab", lanes, bandwidths):
        G.add_edge(c, "s", bandwidth=bw, latency=1e-6, lanes=k)
    return G


@pytest.mark.parametrize("lanes", [(2**40, 1), (2**63, 1), (10**30, 1), (MAX_LINKS, 1)])
def test_a_user_graph_whose_lanes_pass_the_limit_is_refused_by_the_schema(lanes):
    with pytest.raises(GraphError, match=f"{sum(lanes):,} links .*the limit is {MAX_LINKS:,}"):
        Fabric.from_graph(_star(lanes))


def test_a_user_graph_at_the_limit_is_read():
    f = Fabric.from_graph(_star((MAX_LINKS - 1, 1)))
    assert metrics(f).links == MAX_LINKS


@pytest.mark.parametrize("bandwidths", [(1e9, 1e16), (1e16, 1e9), (1.0, 1e18)])
def test_a_user_graph_of_very_unequal_links_has_a_bisection(bandwidths):
    """Before: the slowest link / 1000 as the max-flow's unit overflowed int32 (an internal
    error). The cut separating a from b crosses one of the two links; the least is the slower."""
    m = metrics(Fabric.from_graph(_star(bandwidths=bandwidths)))
    assert m.bisection_bandwidth == min(bandwidths)
    assert m.bisection_links == 1


def test_a_coarse_placement_is_not_claimed_exact():
    """1 B/s NIC links beside 1e18 B/s scale-up bundles: the coarse unit counts a NIC link as
    one unit (~1e10 B/s), so the cut found is a valid one but not the least: the bisection is
    reported as an upper bound, its method says why. The same fabric of ordinary links is
    placed at the fine unit, as before."""
    slow = LinkTech("slow", 1.0, 1e-7, "assumption")
    fast = LinkTech("fast", 1e18, 1e-7, "assumption")
    f = topologies.rail_optimized(2, 4, nic_tech=slow, scaleup_tech=fast)
    _, bw, exact, method = bisection(f)
    assert not exact and "coarse bandwidth unit" in method and "an upper bound" in method
    assert bw >= 4 * 1.0            # a real cut: at least the four NIC links of one side
    _, _, exact, method = bisection(topologies.rail_optimized(2, 4))
    assert "coarse" not in method
