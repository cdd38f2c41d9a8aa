"""Audit, session 20: what ``route`` prices among a pair's equal-cost paths, and ``latency``.

An access goes over one path: ``fabric.access`` (``cofabric route``) times the one path the
routing's deterministic hash chooses among the pair's equal-cost paths and prints it, while
``fabric.access_latencies`` (``cofabric latency``, the report's latency figures) counts each
pair at the slowest of them (the policy's largest path latency, the narrowest link of the
paths). On an HGX H100/H200 board the NVSwitch bundles are 5, 4, 4 and 5 lanes, so the two
differed by up to 0.19 ns on 42 of 56 pairs (a 64 B load) and nothing said so: 'latency'
gave a minimum of 631.0 ns over the pairs, above the 630.9 ns 'route' printed for chip0 to
chip3 (session 19's notes). Now ``Access.slowest`` carries the pair's figure as
``access_latencies`` computes it, and route prints it where it differs.

The property below found a second fault: dimension order priced a pair's bottleneck at its
dimension's narrowest link, so one lane lost anywhere on a bundled grid dimension narrowed
every pair moving in it (fixed in fabric/_routing_dor.py, tests at the end).

Reference: tests/routing_brute.py enumerates the paths each policy allows (networkx), on
intact and degraded fabrics (tests/test_degraded_properties.py's draws and its policy paths,
with local repair on a degraded grid).
"""

import itertools
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from routing_brute import path_latency
from test_degraded_properties import PAIR_SPECS, _policy_paths, degraded, drawn_policy_paths

import topologies
from analysis._cli import main
from fabric import access_latencies, access_to
from fabric._access import _stages
from fabric._transport import transports_for


def _narrowest(g, paths):
    G = g.graph
    return min((min((G.edges[e]["bandwidth"] for e in itertools.pairwise(p)),
                    default=float("inf")) for p in paths), default=float("inf"))


def _priced(g, s, t, op, size, there, back):
    """The stage total of an access whose request may take any of ``there`` and whose reply
    any of ``back``, at their largest latency and narrowest link."""
    i = g.node_index
    (tr,) = transports_for(g, "native", [i[s]], [i[t]])
    fwd = max(path_latency(g, p) for p in there)
    rev = max((path_latency(g, p) for p in back), default=0.0)
    bw_b = _narrowest(g, back) if back else float("inf")
    return float(_stages(tr, op, size, fwd, rev, _narrowest(g, there), bw_b,
                         max(len(p) for p in there) - 1)[-1])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(degraded(PAIR_SPECS), st.data(), st.sampled_from(["load", "store"]),
       st.sampled_from([64, 4096]))
def test_route_prices_its_path_and_slowest_the_slowest_of_the_policys_paths(case, data, op,
                                                                            size):
    f, g = case
    drawn = drawn_policy_paths(case, data)
    if drawn is None:
        return
    s, t, there = drawn
    back = _policy_paths(f, g, t, s) if op == "load" else []
    if not there or (op == "load" and not back):
        return                      # no route: refused (tests/test_degraded_properties.py)
    a = access_to(g, s, t, op=op, size=size, transport="native")
    assert list(a.path) in there
    assert op == "store" or list(a.return_path) in back
    rel = 1e-12
    assert a.forward == pytest.approx(path_latency(g, a.path), rel=rel)
    assert a.total == pytest.approx(
        _priced(g, s, t, op, size, [list(a.path)], [list(a.return_path)] if back else []),
        rel=rel)
    assert a.slowest == pytest.approx(_priced(g, s, t, op, size, there, back), rel=rel)
    assert a.total <= a.slowest * (1 + rel)


@pytest.mark.parametrize("op", ["load", "store"])
def test_slowest_is_what_access_latencies_gives_the_pair(op):
    f = topologies.build("hgx-h200")
    i, j, lat = access_latencies(f, op=op)
    chips = f.endpoints
    got = [access_to(f, chips[a], chips[b], op=op) for a, b in zip(i, j)]
    assert [x.slowest for x in got] == lat.tolist()          # the same figure, bit for bit
    faster = sum(x.total < x.slowest for x in got)
    assert faster == {"load": 42, "store": 30}[op]          # the hash's 5-lane paths
    assert all(x.total <= x.slowest for x in got)


def test_route_says_what_latency_counts_where_the_paths_differ(capsys):
    assert main(["route", "hgx-h200", "chip0", "chip3"]) == 0
    out = capsys.readouterr().out
    assert "path: chip0 -> sw3 -> chip3" in out and "total: 630.9ns" in out
    assert "slowest equal-cost path: 631.0ns (what cofabric latency counts for this pair)" \
        in out
    assert main(["latency", "hgx-h200", "--quiet"]) == 0
    assert "min: 631.0ns" in capsys.readouterr().out
    # one path (or paths that price alike): no second figure
    assert main(["route", "sd200-ultra", "0", "127"]) == 0
    assert "slowest" not in capsys.readouterr().out


def test_route_json_carries_the_slowest_path_total(capsys):
    assert main(["route", "hgx-h200", "0", "3", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    f = topologies.build("hgx-h200")
    i, j, lat = access_latencies(f, op="load", chips=["chip0", "chip3"])
    assert out["slowest_total_s"] == float(lat[(i == 0) & (j == 1)][0])
    assert out["total_s"] < out["slowest_total_s"]
    assert main(["route", "sd200-ultra", "0", "127", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["slowest_total_s"] == out["total_s"]


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
