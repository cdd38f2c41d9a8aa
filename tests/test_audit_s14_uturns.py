"""Audit, session 14: consecutive equal stand-ins of a run share one crossing.

Session 13's rule (fabric/_routing.py, "Failures under dimension order") joined the stand-ins
of a run through failed nodes by one shortest path each, so where two consecutive failed links
had the same stand-in the route crossed it, went back over a tunnel and crossed it again:
``torus:2x2x3`` without chip10 and chip6 routed chip9 -> chip2 as chip9 chip8 chip0 chip8
chip0 chip2 (the stand-in chip8 -> chip0 of both chip8 -> chip10 and chip10 -> chip2). No
router sends a packet over one directed link twice in a row (a destination-based table would
loop forever; an intermediate-node scheme re-routes by dimension order from the
intermediate node), and the rule's reasons do not need it: every byte of each failed link
still crosses its stand-in (no wider, no faster) when the two crossings are one, no other
hop moves, and on a grid whose dimension order is minimal any walk between the run's ends is
no shorter than the run. The rule now merges them, and keeps the two crossings only where
the merged run would have fewer hops or less latency than the run it repairs (possible only
on a grid whose links of one dimension differ in latency). The reduce-scatter of review
S12-R4 (16 MiB over chip2, chip11, chip9, runtime "ideal") goes 279.9 -> 187.1 us against
186.4 us intact; symmetric-memory 280.8 -> 188.0 us, equal to intact.

Checked against the rule's brute force (tests/routing_brute.py) and as "never faster / never
fewer hops or less latency", also on grids given random per-link latencies (where the guard
can act).
"""

import functools
import itertools
import random

import networkx as nx
import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from routing_brute import assert_a_drawn_pair_is_the_rule, built_h100, path_latency
from test_audit_s11_routing import assert_not_faster
from test_audit_s13_routing import GRIDS, _claimed, draw_clustered_failures

import analysis
from analysis._closed_form import OPERATIONS


@functools.cache
def _grid(spec, seed=None):
    """``spec`` with chip=h100 (routing_brute.built_h100); with ``seed``, every link given a
    latency drawn from 100, 200 or 500 ns (the links of one dimension no longer alike), made
    once per (spec, seed)."""
    f = built_h100(spec)
    if seed is None:
        return f
    rng = random.Random(seed)
    H = nx.Graph(f.graph)
    for a, b in sorted(H.edges, key=str):
        H.edges[a, b]["latency"] = rng.choice([1e-7, 2e-7, 5e-7])
    nx.freeze(H)
    return f.replace(graph=H)


@st.composite
def _failures(draw, mixed=False):
    """A grid (with ``mixed``, random per-link latencies), 1-3 failed chips drawn mostly
    next to each other, and 0-2 failed links."""
    f = _grid(draw(st.sampled_from(GRIDS)), draw(st.integers(0, 3)) if mixed else None)
    return f, draw_clustered_failures(draw, f, f.endpoints)


def test_review_s12_r4_route_crosses_its_shared_stand_in_once():
    f = _grid("torus:2x2x3")
    g = f.without(chips=["chip10", "chip6"])
    assert f.route("chip9", "chip2") == ["chip9", "chip8", "chip10", "chip2"]
    # before: chip9 chip8 chip0 chip8 chip0 chip2
    assert g.route("chip9", "chip2") == ["chip9", "chip8", "chip0", "chip2"]
    for u, v in (("chip8", "chip10"), ("chip10", "chip2")):      # the stand-in of both
        assert g.graph.edges["chip8", "chip0"]["bandwidth"] <= f.graph.edges[u, v]["bandwidth"]
    r, i = g.router, g.node_index
    load = r.loads(i["chip9"], i["chip2"], 1.0)
    assert load[r.link_index("chip8", "chip0")] == 1.0
    assert load[r.link_index("chip0", "chip8")] == 0.0
    assert r.hops(i["chip9"], i["chip2"])[0] == 3
    ranks = ["chip2", "chip11", "chip9"]
    for runtime in ("ideal", "symmetric-memory"):
        a = analysis.cost(f, "reduce-scatter", 2**24, ranks=ranks, runtime=runtime).time
        b = analysis.cost(g, "reduce-scatter", 2**24, ranks=ranks, runtime=runtime).time
        assert a <= b < 1.01 * a, runtime         # before: 1.50x (279.9 vs 186.4 us ideal)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_failures(mixed=True), st.data())
def test_routes_are_the_brute_force_rule_with_mixed_latencies(case, data):
    assert_a_drawn_pair_is_the_rule(case, data)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_failures(mixed=True))
def test_no_pair_gets_fewer_hops_or_less_latency_with_mixed_latencies(case):
    f, g = case
    if not _claimed(f, g):
        return
    r, r0 = g.router, f.router
    live = [c for c in g.endpoints if g.graph.degree(c) > 0]
    pairs = list(itertools.permutations(live, 2))
    if not pairs:
        return
    s = np.array([g.node_index[a] for a, _ in pairs])
    t = np.array([g.node_index[b] for _, b in pairs])
    s0 = np.array([f.node_index[a] for a, _ in pairs])
    t0 = np.array([f.node_index[b] for _, b in pairs])
    assert (r.hops(s, t) >= r0.hops(s0, t0)).all()
    assert (r.latency(s, t) >= r0.latency(s0, t0) * (1 - 1e-12)).all()
    for a, b in pairs[:6]:                       # the latency is the path's
        assert abs(r.latency(g.node_index[a], g.node_index[b])[0]
                   - path_latency(g, g.route(a, b))) < 1e-15


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_failures(mixed=True), st.sampled_from(OPERATIONS),
       st.sampled_from([8, 4096, 114688, 2**20, 2**26]), st.data())
def test_no_op_of_the_survivors_gets_faster_with_mixed_latencies(case, op, n, data):
    f, g = case
    if not _claimed(f, g):
        return
    live = [c for c in g.endpoints if g.graph.degree(c) > 0]
    if len(live) < 2:
        return
    ranks = data.draw(st.lists(st.sampled_from(live), min_size=2, max_size=len(live),
                               unique=True))
    assert_not_faster(f, g, op, n, ranks, data)
