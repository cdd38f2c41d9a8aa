"""Audit, session 13: any set of failed chips and links on a grid, neighbours included, never
makes the survivors' same work faster (review S12-R4).

Before: a run through failed nodes ``p -> x ... y -> q`` became ``p -> p'``, one shortest
path, ``q' -> q``, with ``p'`` and ``q'`` live neighbours of its ends, even where every live
link of ``p`` (or ``q``) was wider than the dead one, and a link between two failed nodes had
no stand-in at all: ``torus:2x2x3`` without chip10 and chip6 (neighbours; chip2's two
64 GB/s dimension-2 links both dead, its live links 128 GB/s) ran a reduce-scatter of 16 MiB
over chip2, chip11, chip9 in 93.8 us against 186.4 us intact (runtime "ideal"). Now every
link of a run has one fixed live stand-in link no wider and no faster (its live end's
neighbour where one qualifies, else the nearest such link of the component), joined by
shortest paths (fabric/_routing.py, "Failures under dimension order"); live nodes left with no
live link are passed as failed. Checked here against the brute force of the rule
(tests/routing_brute.py) and as the property "no op over the survivors gets faster", on
random small grids of every family, 1-3 failed nodes drawn mostly next to each other, and
0-2 failed links.
"""

import itertools

import networkx as nx
import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from routing_brute import (
    assert_a_drawn_pair_is_the_rule,
    built_h100,
    degraded_dor_paths,
)
from test_audit_s11_routing import assert_not_faster

import analysis
from analysis._closed_form import OPERATIONS
from fabric import FabricError, RoutingError, access_latencies, access_to

GRIDS = ("torus:3x3", "torus:4x3", "mesh:3x3", "mesh:4x2", "torus:2x2x2", "torus:2x2x3",
         "torus:2x3x3", "mesh:2x2x3", "torus:2x4", "hypermesh:3x3,connect=full",
         "hypermesh:3x2,connect=full/ring", "hypermesh:2x3,connect=switch",
         "hypermesh:3x2,connect=switch/line", "hypermesh:2x2x2,connect=switch/ring/full",
         "torus:3x2,links=2", "mesh:5", "hypermesh:4x2,connect=full/line")

_grid = built_h100                 # one cache of built fabrics (routing_brute)


@st.composite
def _failures(draw):
    """A grid, 1-3 failed nodes (each after the first a neighbour of one already drawn,
    most of the time) and 0-2 failed links among the rest."""
    f = _grid(draw(st.sampled_from(GRIDS)))
    return f, draw_clustered_failures(draw, f, f.nodes)


def draw_clustered_failures(draw, f, first_from):
    """``f`` without 1-3 failed nodes (the first drawn from ``first_from``, each after it a
    neighbour of one already drawn, most of the time; at least two endpoints left alive) and
    0-2 failed links among the rest. Shared with tests/test_audit_s14_uturns.py."""
    dead = [draw(st.sampled_from(list(first_from)))]
    for _ in range(draw(st.integers(0, 2))):
        near = sorted({y for x in dead for y in f.graph[x]} - set(dead))
        pool = near if near and draw(st.integers(0, 3)) else sorted(set(f.nodes) - set(dead))
        if pool:
            dead.append(draw(st.sampled_from(pool)))
    if len(set(dead) & set(f.endpoints)) >= len(f.endpoints) - 1:
        dead = dead[:1]
    edges = sorted(tuple(sorted(e)) for e in f.graph.edges if not set(e) & set(dead))
    links = draw(st.lists(st.sampled_from(edges), max_size=2, unique=True)) if edges else []
    return f.without(chips=dead, links=links)


def _narrower(f, g, u, v, a, b):
    e, h = f.graph.edges[u, v], g.graph.edges[a, b]
    return h["bandwidth"] <= e["bandwidth"] and h["latency"] >= e["latency"]


def _linked_chips(g):
    """The chips of ``g`` that keep a live link (the survivors the claim is about)."""
    return [c for c in g.endpoints if g.graph.degree(c) > 0]


def _claimed(f, g):
    """The rule's claim (fabric/_routing.py), checked on the graphs: the live nodes with a
    live link form one component, in which every link of a failed node (or of a node left
    with no live link) has a live link no wider and no faster, and every other failed
    link's bypass holds one."""
    H = g.graph
    linked = [x for x in H if H.degree(x) > 0]
    if not linked or not nx.is_connected(H.subgraph(linked)):
        return False
    directed = list(H.edges) + [(b, a) for a, b in H.edges]
    gone = {x for x in f.graph if x not in H or H.degree(x) == 0}
    for u, v in f.graph.edges:
        if (u in gone or v in gone) and not any(_narrower(f, g, u, v, a, b)
                                                for a, b in directed):
            return False
    for x, y in g.failures.links:
        if x in gone or y in gone:
            continue
        if not nx.has_path(H, x, y):
            return False
        for u, v in ((x, y), (y, x)):     # each direction has its own bypass (session 14)
            p = g.route(u, v)
            if not any(_narrower(f, g, u, v, a, b) for a, b in itertools.pairwise(p)):
                return False
    return True


def test_review_s12_r4_repro_and_where_the_bytes_go():
    f = _grid("torus:2x2x3")
    g = f.without(chips=["chip10", "chip6"])
    ranks = ["chip2", "chip11", "chip9"]
    for runtime in ("ideal", "symmetric-memory", "nccl"):
        a = analysis.cost(f, "reduce-scatter", 2**24, ranks=ranks, runtime=runtime).time
        b = analysis.cost(g, "reduce-scatter", 2**24, ranks=ranks, runtime=runtime).time
        assert b >= a, runtime          # before: 186.4 -> 93.8 us under "ideal"
    # chip2's live links are all 128 GB/s, its dead ones (to chip10, chip6) 64 GB/s: the
    # link chip10 -> chip2 now stands in a 64 GB/s link elsewhere, and both pairs that
    # crossed it (from chip11 and chip9) cross that one link
    bw = g.graph.edges
    r = g.router
    p11, p9 = g.route("chip11", "chip2"), g.route("chip9", "chip2")
    slow = [{e for e in itertools.pairwise(p) if bw[e]["bandwidth"] <= 64e9}
            for p in (p11, p9)]
    assert slow[0] & slow[1]
    assert r.hops(g.node_index["chip9"], g.node_index["chip2"])[0] == len(p9) - 1


def _loads(h, pairs):
    i = h.node_index
    s = np.array([i[a] for a, _ in pairs])
    d = np.array([i[b] for _, b in pairs])
    return h.router.loads(s, d, 1.0)


def test_every_byte_of_a_link_between_two_failed_chips_crosses_one_narrower_live_link():
    # torus:4x3 without chip5 and chip6 (neighbours along dimension 0): the survivors whose
    # intact route crossed chip5 -> chip6 now all cross one live link of no more bandwidth
    f = _grid("torus:4x3")
    g = f.without(chips=["chip5", "chip6"])
    assert "chip6" in f.graph["chip5"]
    live = list(g.endpoints)
    k = f.router.link_index("chip5", "chip6")
    i = f.node_index
    pairs = [(a, b) for a, b in itertools.permutations(live, 2)
             if k in f.router.path_links(i[a], i[b])]
    assert pairs
    before, after = _loads(f, pairs), _loads(g, pairs)
    rb, rg = f.router, g.router
    t0 = (before / rb.link_bandwidth).max()
    t1 = (after / rg.link_bandwidth).max()
    assert t1 >= t0
    full = [j for j in range(rg.n_links) if after[j] >= before[k] - 1e-12
            and rg.link_bandwidth[j] <= rb.link_bandwidth[k]]
    assert full


def test_a_chip_left_with_no_live_link_is_passed_as_failed():
    # mesh:3x3 without chip1 and chip3: the corner chip0 keeps no live link; routes that
    # crossed it are repaired by stand-ins (before: each such pair took one shortest path)
    f = _grid("mesh:3x3")
    g = f.without(chips=["chip1", "chip3"])
    assert g.graph.degree("chip0") == 0
    for s, t in itertools.permutations([c for c in g.endpoints if c != "chip0"], 2):
        want = degraded_dor_paths(f, g, s, t)
        assert g.route(s, t) in want


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_failures(), st.sampled_from(OPERATIONS),
       st.sampled_from([8, 4096, 114688, 2**20, 2**26]), st.data())
def test_losing_chips_or_links_never_makes_the_survivors_op_faster(case, op, n, data):
    f, g = case
    if g.n_endpoints < 2 or not _claimed(f, g):
        return
    linked = [c for c in g.endpoints if g.graph.degree(c) > 0]
    if len(linked) < 2:
        return
    ranks = data.draw(st.lists(st.sampled_from(linked), min_size=2, max_size=len(linked),
                               unique=True))
    event("neighbours failed" if any(y in g.failures.nodes for x in g.failures.nodes
                                     for y in f.graph[x]) else "no neighbours failed")
    assert_not_faster(f, g, op, n, ranks, data)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_failures(), st.data())
def test_routes_are_the_brute_force_rule(case, data):
    assert_a_drawn_pair_is_the_rule(case, data)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_failures())
def test_no_link_of_the_survivors_carries_less_of_their_all_to_all(case):
    f, g = case
    if not _claimed(f, g):
        return
    live = _linked_chips(g)
    pairs = list(itertools.permutations(live, 2))
    if not pairs:
        return
    try:
        after = _loads(g, pairs)
    except RoutingError:
        return
    before = _loads(f, pairs)
    rf, rg = f.router, g.router
    for k in range(rg.n_links):
        link = rg.link_name(k)
        assert after[k] >= before[rf.link_index(*link)] - 1e-9, (g.name, link)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_failures(), st.data())
def test_the_pairs_of_one_failed_link_never_get_a_less_busy_busiest_link(case, data):
    # the traffic that exposes a missing stand-in: exactly the survivors' pairs whose intact
    # route crossed one failed link (an exhaustive scan of 15 grid families, every chip and
    # every neighbouring pair failed: 12 of 2,908 such cases read faster before, all on
    # torus:2x2x3 with two neighbouring chips failed)
    f, g = case
    if not _claimed(f, g):
        return
    gone = [x for x in g.failures.nodes] or [None]
    x = data.draw(st.sampled_from(gone))
    if x is None:
        return
    y = data.draw(st.sampled_from(sorted(f.graph[x])))
    u, v = data.draw(st.sampled_from([(x, y), (y, x)]))
    k = f.router.link_index(u, v)
    i = f.node_index
    live = _linked_chips(g)
    pairs = [(a, b) for a, b in itertools.permutations(live, 2)
             if k in f.router.path_links(i[a], i[b])]
    if not pairs:
        return
    t0 = (_loads(f, pairs) / f.router.link_bandwidth).max()
    t1 = (_loads(g, pairs) / g.router.link_bandwidth).max()
    assert t1 >= t0 * (1 - 1e-12), (g.name, g.failures.nodes, (u, v), t0, t1)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_failures())
def test_no_surviving_pair_gets_fewer_hops_or_less_latency(case):
    # paths only lengthen: a run of m failed links becomes at least its m stand-ins, each
    # no faster; the figures are those of local repair (Router.local_repair), upper bounds
    f, g = case
    if not _claimed(f, g):
        return
    live = _linked_chips(g)
    pairs = list(itertools.permutations(live, 2))
    if not pairs:
        return
    i0, i1 = f.node_index, g.node_index
    s0 = np.array([i0[a] for a, _ in pairs])
    d0 = np.array([i0[b] for _, b in pairs])
    s1 = np.array([i1[a] for a, _ in pairs])
    d1 = np.array([i1[b] for _, b in pairs])
    assert g.router.local_repair and not f.router.local_repair
    assert (g.router.hops(s1, d1) >= f.router.hops(s0, d0)).all()
    assert (g.router.latency(s1, d1) >= f.router.latency(s0, d0) * (1 - 1e-12)).all()


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_failures(), st.sampled_from(["load", "store"]), st.data())
def test_one_access_takes_the_latency_the_distribution_reports(case, op, data):
    # fabric.access_to (one path) and fabric.access_latencies (the larger over a tie's
    # ways) agree with routes through neighbouring failed chips too
    _, g = case
    live = _linked_chips(g)
    if len(live) < 2:
        return
    chips = data.draw(st.lists(st.sampled_from(live), min_size=2, max_size=4, unique=True))
    try:
        s, d, lat = access_latencies(g, op=op, chips=chips)
    except FabricError:
        return
    for k in range(len(lat)):
        a = access_to(g, chips[s[k]], chips[d[k]], op=op)
        assert a.total == pytest.approx(float(lat[k]), rel=1e-12, abs=0)


def test_the_cli_says_a_degraded_grids_hops_and_latencies_are_upper_bounds(capsys):
    from analysis._cli import main

    note = "upper bounds on a fabric that re-routes globally"
    for argv in (["route", "torus:3x3", "0", "2", "--fail-chip", "1"],
                 ["latency", "torus:3x3", "--fail-link", "chip0-chip1", "--quiet"],
                 ["metrics", "torus:3x3", "--fail-chip", "1", "--quiet"],
                 ["route", "torus:3x3", "0", "2", "--fail-chip", "1", "--json"],
                 ["cost", "torus:3x3", "--op", "all-gather", "--size", "1KiB", "--fail-chip",
                  "1"],
                 ["throughput", "torus:3x3", "--fail-chip", "1", "--quiet"]):
        assert main(argv) == 0
        assert note in capsys.readouterr().out, argv
    # not where routes did not change: intact, or a lane of a two-lane bundle lost
    for argv in (["route", "torus:3x3", "0", "2"],
                 ["metrics", "torus:3x3,links=2", "--fail-lane", "chip0-chip1", "--quiet"],
                 ["route", "fattree:k=4", "0", "5", "--fail-chip", "1"]):
        assert main(argv) == 0
        assert note not in capsys.readouterr().out, argv
