"""Audit, session 20: a lost lane narrows only the pairs that cross it (dimension order).

Reference: tests/routing_brute.py enumerates the paths each policy allows (networkx), on
intact and degraded fabrics (tests/test_degraded_properties.py's draws and its policy paths,
with local repair on a degraded grid).
"""

import itertools

import pytest
from test_degraded_properties import _policy_paths

import topologies
from analysis._cli import main


def _narrowest(g, paths):
    G = g.graph
    return min((min((G.edges[e]["bandwidth"] for e in itertools.pairwise(p)),
                    default=float("inf")) for p in paths), default=float("inf"))


@pytest.mark.parametrize("spec, lane", [("torus:4x4,links=2", "chip0-chip1"),
                                        ("hypermesh:4x4,links=2", "chip5-chip6"),
                                        ("hypermesh:2x2x2,connect=switch/ring/full",
                                         "chip0-chip2")])
def test_a_lost_lane_narrows_only_the_pairs_that_cross_it(spec, lane):
    # dimension order took a dimension's narrowest link for every pair moving in it: one
    # lane lost on chip0-chip1 of a 2-lane 4x4 torus halved the bottleneck of 176 of 240
    # pairs (24 cross it), and 'cofabric latency --size 1MiB' read p50 19.38 us
    # for 10.17 intact
    f = topologies.build(spec)
    g = f.without(lanes=[lane])
    i = g.node_index
    pairs = [(s, t) for s in g.endpoints for t in g.endpoints if s != t]
    got = g.router.bottleneck([i[s] for s, _ in pairs], [i[t] for _, t in pairs])
    want = [_narrowest(g, _policy_paths(f, g, s, t)) for s, t in pairs]
    assert got.tolist() == want
    assert min(want) < max(want)                # the lane's pairs are narrower, the rest not


def test_latency_after_a_lost_lane_slows_only_the_pairs_that_cross_it(capsys):
    argv = ["latency", "torus:4x4,links=2", "--size", "1MiB", "--quiet"]
    assert main(argv) == 0
    intact = capsys.readouterr().out
    assert main(argv + ["--fail-lane", "chip0-chip1"]) == 0
    lost = capsys.readouterr().out
    assert "p50: 10.17us" in intact and "p50: 10.17us" in lost
    assert "max: 11.09us" in intact and "max: 19.79us" in lost
