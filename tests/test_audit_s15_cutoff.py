"""Audit, session 15: a chip cut off ALONE is a failed node to the survivors (review S14-R2).

Before: a group of two or more live chips cut off together (``failures.islands``) was passed
as failed to the other groups' twins, but a chip cut off alone (``failures.cut_off``) that kept
a link (to a per-line switch left with no other chip) was not: a survivors' route through it
lost its way (a failed link whose ends the failures disconnected) and took one shortest path of
the surviving graph, so a failure could remove a shared link from a traffic and make it faster:
``hypermesh:2x3,connect=switch`` without sw.d0.0-chip0 and chip1-sw.d1.1, an all-to-allv of
1 MiB from chip0 and chip3 to chip5 ran 35.77 -> 18.36 us (runtime "ideal"; the strict xfail
``test_repro_s14_r2...`` in tests/test_audit_s14_islands.py, now a plain test).

Now (fabric/_routing.py, "Failures under dimension order"): wherever the failures split the live
chips (an island or a chip cut off alone), each group of two or more live chips is routed with
every node outside its component passed as failed; the brute force (tests/routing_brute.py)
states the same. When every live chip is cut off alone there is no group to route.
"""

import itertools

import networkx as nx
import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from routing_brute import assert_route_is_the_rule, built_h100, degraded_dor_paths
from test_audit_s11_routing import assert_not_faster

import analysis
from analysis._closed_form import OPERATIONS
from fabric import FabricError, RoutingError

SWITCH_GRIDS = ("hypermesh:2x3,connect=switch", "hypermesh:3x2,connect=switch/line",
                "hypermesh:3x3,connect=switch", "hypermesh:2x2x2,connect=switch",
                "hypermesh:2x4,connect=switch/ring", "hypermesh:3x2,connect=full/switch")

_build = built_h100                 # one cache of built fabrics (routing_brute)


@st.composite
def _lone(draw):
    """A switch grid and a degraded copy in which 1-2 chips are cut off alone, most of the
    time keeping a link to a switch left with only them (every other link of that switch
    failed, and the chip's other links), sometimes with one more random link failed."""
    f = _build(draw(st.sampled_from(SWITCH_GRIDS)))
    G = f.graph
    links = set()
    for c in draw(st.lists(st.sampled_from(list(f.endpoints)), min_size=1, max_size=2,
                           unique=True)):
        near = sorted(G[c], key=str)
        keep = draw(st.sampled_from(near + [None]))     # None: every link of c fails
        for y in near:
            if y != keep:
                links.add(frozenset((c, y)))
        if keep is not None:     # (a chip kept by a direct link: an island of 2 with it)
            links |= {frozenset((keep, z)) for z in G[keep] if z != c}
    if draw(st.booleans()):
        links.add(frozenset(draw(st.sampled_from(sorted(G.edges, key=str)))))
    try:
        g = f.without(links=sorted(tuple(sorted(e, key=str)) for e in links))
    except FabricError:
        return f, f
    return f, g


def _survivors(g):
    """Brute force: the live chips of the component with the most live chips (the lowest
    rank at a tie), in rank order, when it holds two or more."""
    rank = {c: i for i, c in enumerate(g.endpoints)}
    comps = [sorted((c for c in comp if c in rank), key=rank.get)
             for comp in nx.connected_components(g.graph)]
    comps = sorted((c for c in comps if c), key=lambda c: (-len(c), rank[c[0]]))
    return comps[0] if comps and len(comps[0]) > 1 else []


def _through_lone(f, g, s, t):
    lone = set(g.failures.cut_off)
    return bool(lone & set(f.route(s, t)[1:-1]))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_lone(), st.data())
def test_survivors_routes_past_a_lone_cut_off_chip_are_the_brute_force_rule(case, data):
    f, g = case
    cs = _survivors(g)
    if not cs:
        return
    # most of the time a pair whose intact route crossed a chip cut off alone
    out = [(s, t) for s, t in itertools.permutations(cs, 2) if _through_lone(f, g, s, t)]
    if out and data.draw(st.integers(0, 3)):
        event("the intact route crossed a chip cut off alone")
        s, t = data.draw(st.sampled_from(out))
    else:
        s, t = data.draw(st.lists(st.sampled_from(cs), min_size=2, max_size=2, unique=True))
    assert_route_is_the_rule(f, g, s, t)


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_lone(), st.sampled_from(OPERATIONS), st.sampled_from([8, 4096, 2**20, 2**26]),
       st.data())
def test_no_op_over_the_survivors_gets_faster_when_a_chip_is_cut_off_alone(case, op, n, data):
    f, g = case
    cs = _survivors(g)
    if len(cs) < 2:
        return
    ranks = data.draw(st.lists(st.sampled_from(cs), min_size=2, max_size=len(cs), unique=True))
    if any(_through_lone(f, g, s, t) for s, t in itertools.permutations(ranks, 2)):
        event("an intact route crossed a chip cut off alone")
    assert_not_faster(f, g, op, n, ranks, data)


def test_a_lone_chip_and_its_switch_are_failed_nodes_to_the_survivors():
    # chip0 is cut off alone with sw.d0.0 (its link to chip3 and sw.d0.0's other links
    # failed); chip1 -> chip5 crossed sw.d0.0 intact. The run chip1 -> sw.d0.0 -> chip2 takes
    # its stand-ins chip1 -> chip4 and chip5 -> chip2 (the mirror of chip2's live link), then
    # the intact hop chip2 -> chip5: local repair passes the destination and turns back.
    # Before: one shortest path, chip1 chip4 sw.d0.1 chip5 (3 hops, as intact).
    f = _build("hypermesh:3x2,connect=switch/line")
    g = f.without(links=[("chip0", "chip3"), ("chip1", "sw.d0.0"), ("chip2", "sw.d0.0")])
    assert set(g.failures.cut_off) == {"chip0"} and not g.failures.islands
    assert f.route("chip1", "chip5") == ["chip1", "sw.d0.0", "chip2", "chip5"]
    assert g.route("chip1", "chip5") == ["chip1", "chip4", "sw.d0.1", "chip5", "chip2", "chip5"]
    assert degraded_dor_paths(f, g, "chip1", "chip5") == [g.route("chip1", "chip5")]
    for s, t in itertools.permutations(["chip1", "chip2", "chip3", "chip4", "chip5"], 2):
        assert_route_is_the_rule(f, g, s, t)


def test_the_s14_r2_route_takes_the_stand_ins():
    f = _build("hypermesh:2x3,connect=switch")
    g = f.without(links=[("sw.d0.0", "chip0"), ("chip1", "sw.d1.1")])
    assert f.route("chip0", "chip5") == ["chip0", "sw.d0.0", "chip1", "sw.d1.1", "chip5"]
    # before: chip0 sw.d1.0 chip4 sw.d0.2 chip5 (one shortest path, off sw.d1.1 -> chip5)
    assert g.route("chip0", "chip5") == ["chip0", "sw.d1.0", "chip2", "sw.d0.1", "chip3",
                                         "sw.d1.1", "chip5"]
    assert_route_is_the_rule(f, g, "chip0", "chip5")
    ranks = ["chip0", "chip2", "chip4", "chip3", "chip5"]
    m = np.zeros((5, 5))
    m[0, 4] = m[3, 4] = 2**20
    for runtime in ("ideal", "nccl", "symmetric-memory"):
        a = analysis.cost(f, "all-to-allv", m, runtime=runtime, ranks=ranks).time
        b = analysis.cost(g, "all-to-allv", m, runtime=runtime, ranks=ranks).time
        assert b >= a, runtime         # before: ideal 35.77 -> 18.36 us


@pytest.mark.parametrize("spec, kw", [
    ("mesh:5", {"chips": ["chip1", "chip3"]}),
    ("hypermesh:2x2,connect=switch", {"links": [("chip1", "sw.d0.0"), ("chip3", "sw.d0.1"),
                                                ("chip2", "sw.d1.0"), ("chip3", "sw.d1.1")]}),
])
def test_when_every_live_chip_is_cut_off_alone_nothing_is_routed_between_two(spec, kw):
    g = _build(spec).without(**kw)
    assert set(g.failures.cut_off) == set(g.endpoints) and not g.failures.islands
    r, i = g.router, g.node_index
    for a in g.endpoints:
        assert g.route(a, a) == [a]
        assert int(r.hops(i[a], i[a])[0]) == 0
        assert not r.loads(i[a], i[a], 1.0).any()
    for a, b in itertools.permutations(g.endpoints, 2):
        with pytest.raises(RoutingError, match=f"{b} is cut off from every other chip"):
            g.route(a, b)
        with pytest.raises(RoutingError, match="is cut off from every other chip"):
            analysis.cost(g, "all-reduce", 2**20, ranks=[a, b], runtime="ideal")
