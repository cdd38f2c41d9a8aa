"""The typed structure and failures of a fabric, and right answers on degraded fabrics.

Each degraded-fabric test here failed before the structure was typed: the intact closed
forms were used on degraded graphs, the per-line switch tables were built from edge order,
detoured pairs under hash ECMP were split over every detour, and ranks were renumbered.
Independent truth: networkx breadth-first search and brute-force balanced cuts.
"""

import itertools
import math

import networkx as nx
import numpy as np
import pytest
from routing_brute import degraded_dor_hops, degraded_dor_paths

import topologies
from analysis import metrics, throughput, traffic
from analysis._metrics import bisection, hop_distribution
from fabric import (
    Clos,
    Dragonfly,
    Fabric,
    Failures,
    Grid,
    NodeError,
    SpecError,
    Switched,
)


@pytest.mark.parametrize("spec, kind", [
    ("torus:4x4", Grid), ("hypermesh:4x2,connect=switch", Grid), ("mesh:3x3", Grid),
    ("fattree:k=4", Clos), ("leafspine:k=4", Clos), ("cluster-128", Clos),
    ("dgx-h100", Switched), ("nvl72", Switched), ("dragonfly:h=1", Dragonfly),
])
def test_builders_set_a_typed_structure(spec, kind):
    f = topologies.build(spec)
    assert isinstance(f.structure, kind)
    assert f.failures == Failures() and not f.failures.degraded
    g = f.without(links=[next(iter(f.graph.edges))])
    assert g.structure == f.structure and g.failures.degraded


def test_user_graph_has_no_structure_and_is_routed_by_shortest_paths():
    G = nx.cycle_graph(5)
    nx.set_node_attributes(G, "chip", "kind")
    nx.set_edge_attributes(G, 1e9, "bandwidth")
    nx.set_edge_attributes(G, 1e-7, "latency")
    f = Fabric.from_graph(G)
    assert f.structure is None and f.router.policy == "shortest"
    # the builder's label does not choose the routing: a "hypermesh" label without a Grid
    g = Fabric.from_graph(G, family="hypermesh", params={"shape": (5,)})
    assert g.router.policy == "shortest"


def test_grid_checks_its_values():
    assert Grid((4, 4), ("ring", "full"), 2).links == (2, 2)
    with pytest.raises(SpecError, match="connect needs 1 or 2 values"):
        Grid((4, 4), ("ring", "full", "line"))
    with pytest.raises(SpecError, match=r"shape\[1\] must be an integer >= 1, got shape\[1\]=0"):
        Grid((4, 0))
    with pytest.raises(TypeError, match="structure must be one of"):
        topologies.build("torus:4x4").replace(structure={"shape": (4, 4)})


# -- metrics on degraded fabrics -------------------------------------------------------------

def _brute_hops(f):
    G = f.graph
    counts = {}
    for s in f.endpoints:
        dist = nx.single_source_shortest_path_length(G, s)
        for t in f.endpoints:
            if t != s:
                counts[dist[t]] = counts.get(dist[t], 0) + 1
    out = np.zeros(max(counts) + 1, dtype=np.int64)
    for h, c in counts.items():
        out[h] = c
    return out.tolist()


def _brute_bisection(f):
    """Fewest links across any balanced split of the endpoints (a direct network)."""
    G = f.graph
    ep = list(f.endpoints)
    n = len(ep)
    best = math.inf
    for side in itertools.combinations(ep, n // 2):
        a = set(side)
        best = min(best, sum(d.get("lanes", 1) for u, v, d in G.edges(data=True)
                             if (u in a) != (v in a)))
    return best


def test_torus_without_a_link_hop_histogram_is_brute_force():
    f = topologies.build("torus:4x4")
    g = f.without(links=["chip0-chip1"])
    counts, method = hop_distribution(g)
    # the routed hops (a failed link's bytes take its bypass; the longer way of a tie
    # counts), not the graph distance [0, 62, 96, 66, 16]
    assert counts.tolist() == degraded_dor_hops(f, g)
    assert _brute_hops(g) == [0, 62, 96, 66, 16]
    assert "closed form" not in method


def test_torus_without_a_link_bisection_is_the_true_minimum():
    g = topologies.build("torus:4x4").without(links=["chip0-chip1"])
    links, _, exact, _ = bisection(g)
    assert links == _brute_bisection(g) == 7
    assert exact


def test_chip_removed_no_self_pairs_counted():
    f = topologies.build("torus:4x4")
    g = f.without(chips=["chip5"])
    counts, _ = hop_distribution(g)
    assert counts[0] == 0
    # the routed hops (a run through the failed chip takes its stand-ins; the longer way
    # of a tie counts), not the graph distance [0, 56, 84, 56, 14]
    assert counts.tolist() == degraded_dor_hops(f, g)
    assert _brute_hops(g) == [0, 56, 84, 56, 14]
    m = metrics(g)
    assert m.endpoints == 15 and m.bisection_links == _brute_bisection(g)


def test_degraded_large_fabric_bisection_is_not_claimed_exact():
    g = topologies.build("torus:8x8").without(links=["chip0-chip1"])
    links, _, exact, method = bisection(g)
    assert not exact and links == 15 and "spectral" in method


# -- routing on degraded grids ---------------------------------------------------------------

def test_switch_hypermesh_lines_keep_their_own_switch_when_a_link_fails():
    f = topologies.build("hypermesh:4x2x2,connect=switch")
    g = f.without(links=["chip0-sw.d0.0"])
    ep = list(f.endpoints)
    dead = {("chip0", "sw.d0.0"), ("sw.d0.0", "chip0")}
    fi, gi = f.node_index, g.node_index
    for s, t in itertools.permutations(ep, 2):
        p = f.router.path(fi[s], fi[t])
        q = g.router.path(gi[s], gi[t])
        assert not ({(a, b) for a, b in itertools.pairwise(q)} & dead)
        if not ({(a, b) for a, b in itertools.pairwise(p)} & dead):
            # a pair whose own path is alive keeps it, and its loads
            assert q == p, (s, t)
            lf = f.router.loads(fi[s], fi[t], 1.0)
            lg = g.router.loads(gi[s], gi[t], 1.0)
            assert {f.router.link_name(k): v for k, v in enumerate(lf) if v} == \
                {g.router.link_name(k): v for k, v in enumerate(lg) if v}
        else:
            # the dead hop replaced by its one bypass, a shortest path of what survives
            assert [q] == degraded_dor_paths(f, g, s, t), (s, t)


def test_hash_ecmp_detour_loads_follow_the_one_path():
    from fabric import Router

    g = topologies.build("torus:4x4").without(links=["chip0-chip1"])
    r = Router(g, ecmp="hash")
    i = g.node_index
    for s, t in itertools.permutations(g.endpoints, 2):
        loads = r.loads(i[s], i[t], 1.0)
        path = r.path(i[s], i[t])
        want = {(a, b) for a, b in itertools.pairwise(path)}
        got = {r.link_name(k) for k in np.flatnonzero(loads)}
        assert got == want and set(loads[loads > 0]) <= {1.0}, (s, t)


# -- stable ranks ----------------------------------------------------------------------------

def test_ranks_stay_stable_under_failures():
    f = topologies.build("sd200-ultra")
    g = f.without(chips=["chip3"])
    assert g.node(127) == "chip127" and g.rank_of["chip127"] == 127
    assert g.route(0, 127) == f.route(0, 127)
    with pytest.raises(NodeError, match=r"rank 3 \(chip3\) has failed"):
        g.route(0, 3)
    h = g.without(chips=[5])  # failing twice: ranks still the intact ones
    assert h.failures.chips == ("chip3", "chip5") and h.node(6) == "chip6"
    with pytest.raises(NodeError, match="out of range 0..127"):
        h.node(128)


def test_cli_route_to_a_failed_chip_is_an_error_and_ranks_do_not_move(capsys):
    from analysis._cli import main

    cli = ["route", "sd200-ultra", "0"]     # in this process: main's status and its output
    code = main([*cli, "5", "--fail-chip", "chip5"])
    err = capsys.readouterr().err
    assert code == 2 and "rank 5 (chip5) has failed" in err
    assert len(err.strip().splitlines()) == 1
    assert main([*cli, "127", "--fail-chip", "chip3"]) == 0
    assert "to chip127" in capsys.readouterr().out


# -- throughput --------------------------------------------------------------------------------

@pytest.mark.parametrize("spec, fail", [("mesh:2", []), ("mesh:4", ["chip1-chip2"])])
def test_throughput_of_two_chips_linked_only_to_each_other(spec, fail):
    f = topologies.build(spec).without(links=fail)
    M = np.zeros((f.n_endpoints, f.n_endpoints))
    M[0, 1] = M[1, 0] = 1.0
    res = throughput(f, M)
    assert res.k == pytest.approx(64e9)  # one 64 GB/s link each way


def test_throughput_names_a_pair_left_without_a_path():
    from fabric import FabricError

    g = topologies.build("mesh:3").without(links=["chip0-chip1"])
    with pytest.raises(FabricError, match="chip0 sends to chip1 and no path joins them"):
        throughput(g, traffic(g, "all-to-all", 1.0))


def test_auto_offers_no_rdma_on_a_fabric_without_nics():
    # RDMA's smaller header share made `auto` pick message passing on sd200-ultra and
    # tpu-v4-cube, which have no NIC to send a message from
    from analysis import cost
    from fabric import sends_messages

    for spec in ("sd200-ultra", "tpu-v4-cube"):
        f = topologies.build(spec)
        assert not sends_messages(f).any()
        for op in ("all-gather", "all-to-all"):
            for runtime in ("ideal", "nccl"):
                r = cost(f, op, 2**30, runtime=runtime)
                assert "rdma" not in r.transport, (spec, op, runtime, r.algorithm, r.transport)
    f = topologies.build("cluster-128")
    assert sends_messages(f)[f.endpoint_indices].all()


def test_forwarding_tables_of_a_degraded_clos_skip_the_failed_chip():
    from fabric import forwarding_tables

    f = topologies.build("fattree:k=4,chip=h100").without(chips=["chip3"])
    ft = forwarding_tables(f)
    base5 = f.address_map.global_address("chip5", 0)
    assert ft.forward("chip0", base5)[-1] == "chip5"


def test_a_failed_lane_is_a_typed_failure_that_thins_its_bundle():
    f = topologies.build("torus:4x4,links=2")
    g = f.without(lanes=["chip0-chip1"])
    assert g.failures.degraded and g.failures.lanes == ((("chip0", "chip1"), 1),)
    assert g.failures.links == () and g.name == "torus:4x4,links=2 without 1 lane"
    e, e0 = g.graph.edges["chip0", "chip1"], f.graph.edges["chip0", "chip1"]
    assert (e["lanes"], e["bandwidth"], e["latency"]) == (1, e0["bandwidth"] / 2, e0["latency"])
    assert f.graph.edges["chip0", "chip1"]["lanes"] == 2  # the intact fabric is untouched
    # a degraded fabric takes no closed form: the torus's 16-lane cut lost one lane
    links, _, exact, _ = bisection(g)
    assert (links, exact) == (_brute_bisection(g), True) and links == 15
    # routes stay (the link still carries), two failed lanes fail the link, and a lane
    # failure is recorded once even when named from the other end
    assert g.route("chip0", "chip1") == ["chip0", "chip1"]
    h = f.without(lanes=["chip0-chip1", ("chip1", "chip0")])
    assert h.failures.links == (("chip0", "chip1"),) and h.failures.lanes == ()
    assert not h.graph.has_edge("chip0", "chip1")
    assert f.without(lanes=["chip0-chip1"]).without(lanes=["chip4-chip5"]).failures.lanes == \
        ((("chip0", "chip1"), 1), (("chip4", "chip5"), 1))
    with pytest.raises(NodeError, match="no such link"):
        f.without(lanes=["chip0-chip5"])
