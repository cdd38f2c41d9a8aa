"""Audit, session 16: why a degraded route may pass its destination and turn back (session 15's
open finding (d): U-turn routes after a chip cut off alone).

The rule (fabric/_routing.py, "Failures under dimension order"): the survivors route around a
chip cut off alone as around a failed node; a run's stand-ins can lie past the destination, and
every intact hop after the run stays, so the route may pass its destination and turn back. A
direction-aware stand-in would drop the turn. This file holds, by brute force over every
loop-free route, that on the repro below no route without the turn keeps the promise the rule
exists for (a failure never makes the same work faster): the U-turn is forced there, not a
choice. So no direction-aware stand-in is built; the rule stays as documented.

hypermesh:3x2,connect=switch/line without chip0-chip3, chip1-sw.d0.0 and chip2-sw.d0.0 (chip0
cut off alone with sw.d0.0): intact, chip1 -> chip5 is chip1 sw.d0.0 chip2 chip5 and chip2 ->
chip5 the direct link, so an all-to-allv of 1 MiB from each to chip5 puts 2 MiB on chip2-chip5.
Degraded, chip2 reaches nothing but chip5; a route from chip1 that crosses chip2 -> chip5 must
first reach chip2 through chip5.
"""

import itertools

import networkx as nx
import numpy as np
import pytest
from routing_brute import assert_route_is_the_rule, built_h100

import analysis

SPEC = "hypermesh:3x2,connect=switch/line"
FAILED = [("chip0", "chip3"), ("chip1", "sw.d0.0"), ("chip2", "sw.d0.0")]
RANKS = ["chip1", "chip2", "chip5"]
MIB = 2**20


def _case():
    f = built_h100(SPEC)
    return f, f.without(links=FAILED)


def _busiest(G, routes):
    """Brute force: the longest time any directed link is busy, each route carrying 1 MiB."""
    load = {}
    for r in routes:
        for u, v in itertools.pairwise(r):
            load[u, v] = load.get((u, v), 0) + MIB / G[u][v]["bandwidth"]
    return max(load.values())


def test_the_rule_turns_back_and_keeps_the_intact_bottleneck():
    f, g = _case()
    assert set(g.failures.cut_off) == {"chip0"}
    assert g.route("chip1", "chip5") == ["chip1", "chip4", "sw.d0.1", "chip5", "chip2", "chip5"]
    assert g.route("chip2", "chip5") == f.route("chip2", "chip5") == ["chip2", "chip5"]
    intact = _busiest(f.graph, [f.route(s, "chip5") for s in ("chip1", "chip2")])
    degraded = _busiest(g.graph, [g.route(s, "chip5") for s in ("chip1", "chip2")])
    assert degraded == intact == 2 * MIB / f.graph["chip2"]["chip5"]["bandwidth"]
    for s in RANKS:
        for t in RANKS:
            if s != t:
                assert_route_is_the_rule(f, g, s, t)


def test_every_route_without_the_turn_would_make_the_failure_faster():
    """Every loop-free route chip1 -> chip5 of the surviving graph (chip2 -> chip5 kept, as the
    rule keeps every pair the failures do not touch): the busiest link carries less than
    intact, so the exchange's time would fall with the failure."""
    f, g = _case()
    intact = _busiest(f.graph, [f.route(s, "chip5") for s in ("chip1", "chip2")])
    loop_free = list(nx.all_simple_paths(g.graph, "chip1", "chip5"))
    assert loop_free == [["chip1", "chip4", "sw.d0.1", "chip5"]]
    for r in loop_free:
        assert _busiest(g.graph, [r, ["chip2", "chip5"]]) == pytest.approx(intact / 2)


@pytest.mark.parametrize("runtime", ["ideal", "nccl", "symmetric-memory"])
def test_with_the_turn_the_exchange_is_not_faster_than_intact(runtime):
    f, g = _case()
    m = np.zeros((3, 3))
    m[0, 2] = m[1, 2] = MIB
    a = analysis.cost(f, "all-to-allv", m, runtime=runtime, ranks=RANKS).time
    b = analysis.cost(g, "all-to-allv", m, runtime=runtime, ranks=RANKS).time
    assert b >= a
