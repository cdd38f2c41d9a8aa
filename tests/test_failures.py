"""Degraded fabrics: detours, dropped ECMP paths and clear errors, against brute force."""

import itertools

import networkx as nx
import numpy as np
import pytest
from routing_brute import brute_paths, degraded_dor_paths, path_latency

import fabric
import topologies
from analysis import link_loads, throughput, traffic
from fabric import NodeError, RoutingError, access_latencies


def _expected_paths(f, g, a, b):
    """The degraded policy: dimension order's paths with each failed link's bypass (else
    the pair's one shortest path); up/down: the surviving policy paths; minimal: those,
    else every shortest detour."""
    if f.router.policy == "dimension-order":
        return degraded_dor_paths(f, g, a, b)
    if f.router.policy == "minimal":
        # no minimal path left: the shortest detour of the surviving graph
        return (brute_paths(g, a, b, "minimal")
                or sorted(nx.all_shortest_paths(g.graph, a, b)))
    return brute_paths(g, a, b, g.router.policy)


def _loads(g, pairs, paths_of):
    out = np.zeros(g.router.n_links)
    for a, b in pairs:
        ps = paths_of(a, b)
        for p in ps:
            for u, v in itertools.pairwise(p):
                out[g.router.link_index(u, v)] += 1.0 / len(ps)
    return out


CASES = [
    ("torus:4x3", [("chip0", "chip1"), ("chip5", "chip9")], []),
    ("torus:4x4", [], ["chip5"]),
    ("mesh:3x3", [("chip4", "chip5")], []),
    ("hypermesh:3x3,connect=full/switch", [("chip0", "chip2")], []),
    ("fattree:k=4", [("agg0.0", "core0"), ("edge1.0", "agg1.1")], []),
    ("leafspine:k=4", [("leaf0", "spine0")], []),
    ("dragonfly:h=1", [], ["chip0"]),
    ("dragonfly:h=1,a=3", [("r0.0", "r0.1"), ("r1.1", "r2.1")], []),
]


@pytest.mark.parametrize("spec,links,chips", CASES, ids=[c[0] for c in CASES])
def test_degraded_loads_hops_latency_against_brute_force(spec, links, chips):
    f = topologies.build(spec)
    g = f.without(links=links, chips=chips)
    assert g.family == f.family and g.router.policy == f.router.policy
    pairs = [(a, b) for a in g.endpoints for b in g.endpoints if a != b]
    idx = g.node_index
    s = np.array([idx[a] for a, _ in pairs])
    d = np.array([idx[b] for _, b in pairs])
    want = _loads(g, pairs, lambda a, b: _expected_paths(f, g, a, b))
    np.testing.assert_allclose(g.router.loads(s, d, 1.0), want, atol=1e-9)
    hops, lat = g.router.hops(s, d), g.router.latency(s, d)
    for i, (a, b) in enumerate(pairs):
        ps = _expected_paths(f, g, a, b)
        assert hops[i] == max(len(p) for p in ps) - 1
        assert lat[i] == pytest.approx(max(path_latency(g, p) for p in ps))
        assert g.route(a, b) in ps


def test_dead_link_is_never_used():
    f = topologies.build("torus:5x5")
    g = f.without(links=["chip0-chip1", ("chip6", "chip11")])
    ep = g.endpoint_indices
    s, d = np.meshgrid(ep, ep, indexing="ij")
    loads = g.router.loads(s.ravel(), d.ravel(), 1.0)
    assert len(loads) == 2 * (f.graph.number_of_edges() - 2)
    assert loads.sum() == pytest.approx(g.router.hops(s.ravel(), d.ravel()).sum())


def test_failed_chip_leaves_the_endpoints():
    f = topologies.build("fattree:k=4")
    g = f.without(chips=["chip3", 7])
    assert g.n_endpoints == 14 and "chip3" not in g.endpoints and "chip7" not in g.endpoints
    assert g.endpoints[3] == "chip4"
    assert g.failures.nodes == ("chip3", "chip7")
    assert g.failures.chips == ("chip3", "chip7") and dict(g.failures.ranks) == {"chip3": 3,
                                                                                "chip7": 7}
    # ranks are stable: the survivors keep theirs, the failed ones are a clear error
    assert g.rank_of["chip4"] == 4 and g.node(4) == "chip4" and g.node(15) == "chip15"
    with pytest.raises(NodeError, match=r"rank 3 \(chip3\) has failed"):
        g.node(3)
    with pytest.raises(NodeError, match=r"chip7 \(rank 7\) has failed"):
        g.node("chip7")


def test_no_path_left_names_the_pair():
    f = topologies.build("fattree:k=4")
    g = f.without(links=[("chip0", "edge0.0")])
    with pytest.raises(RoutingError, match="no route from 'chip1' to 'chip0'"):
        g.route("chip1", "chip0")
    with pytest.raises(RoutingError, match="chip0"):
        access_latencies(g)
    h = topologies.build("mesh:3").without(links=[("chip1", "chip2")])
    with pytest.raises(RoutingError, match="no route from 'chip0' to 'chip2'"):
        h.route(0, 2)


def test_dragonfly_detours_when_no_minimal_path_is_left():
    # a=2, p=1: with the local link dead, chip0 and chip1 have no path with one global link
    g = topologies.build("dragonfly:h=1").without(links=[("r0.0", "r0.1")])
    p = g.route("chip0", "chip1")
    assert p in sorted(nx.all_shortest_paths(g.graph, "chip0", "chip1"))
    assert sum(a[1] != b[1] for a, b in itertools.pairwise(p)) > 1  # more than one global
    idx = g.node_index
    assert g.router.hops([idx["chip0"]], [idx["chip1"]])[0] == len(p) - 1


def test_up_down_never_detours_through_a_chip():
    # rail-optimized: a dead rail link leaves the NVSwitch path (chip -> nvs -> chip -> nic)
    # which is not valley-free, so the pair has no up/down route
    f = topologies.build("rail:servers=2,gpus=2,spines=1")
    g = f.without(links=[("nic0", "rail0")])
    with pytest.raises(RoutingError, match="no route from 'chip0' to 'chip2'"):
        g.route("chip0", "chip2")
    assert g.route("chip0", "chip1") == ["chip0", "nvs0", "chip1"]


def test_failure_costs_throughput_and_drain_time():
    f = topologies.build("torus:4x4")
    g = f.without(links=[("chip0", "chip1")])
    t = traffic(f, "all-to-all", 1.0)
    assert throughput(g, t).k < throughput(f, t).k
    assert link_loads(g, t).drain_time > link_loads(f, t).drain_time


def test_bad_failure_lists():
    f = topologies.build("torus:4x4")
    with pytest.raises(NodeError, match="no such link"):
        f.without(links=[("chip0", "chip10")])
    with pytest.raises(NodeError, match="no node called 'chip99'"):
        f.without(links=["chip0-chip99"])
    with pytest.raises(NodeError, match="no node called 'bogus'"):
        f.without(chips=["bogus"])
    with pytest.raises(NodeError, match="pair of nodes"):
        f.without(links=[("chip0",)])
    with pytest.raises(NodeError, match="leaves no chip"):
        f.without(chips=list(range(16)))


@pytest.mark.parametrize("spec,links", [("torus:4x3", ["chip0-chip1", "chip5-chip9"]),
                                        ("fattree:k=4", ["agg0.0-core0"]),
                                        ("dragonfly:h=1", ["r0.0-r0.1"])])
def test_batched_paths_on_degraded_fabrics(spec, links):
    g = topologies.build(spec).without(links=links)
    ep = g.endpoint_indices
    s, d = np.meshgrid(ep, ep, indexing="ij")
    s, d = s.ravel(), d.ravel()
    M = g.router.path_links_many(s, d)
    for i in range(0, len(s), 5):
        assert M[i][M[i] >= 0].tolist() == g.router.path_links(s[i], d[i])


def test_failed_chips_do_not_move_the_address_map():
    # Hardware failing does not reprogram the address plan: surviving chips keep their
    # regions and hosts' windows translate to the same global addresses.
    f = topologies.build("sd200-ultra")
    g = f.without(chips=["chip5", 20])
    for chip in ("chip0", "chip6", "chip21", "chip127"):
        assert g.address_map.regions_of(chip) == f.address_map.regions_of(chip)
    for host, local in (("host1", 0x1000), ("host15", 0x40_0000_0000)):
        assert g.translate(host, local) == f.translate(host, local)
    # the windows onto the dead chips stay, and are reported unreachable (and nothing else)
    found = fabric.check(g)
    assert {x.code for x in found} == {"unreachable"}
    assert len(found) == 2 * len(f.domains)
