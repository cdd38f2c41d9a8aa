"""Random small fabrics of every family with random failures, against brute force.

Hypothesis picks a builder (every family: mesh, torus, hyper-mesh with rings, lines,
full lines and per-line switches, fat-tree, leaf-spine, rail-optimized, dragonfly,
switched planes, and the small presets; the properties of one drawn pair, half the time,
dragonfly:h=2 or leafspine:k=8), fails up to two links, one chip, one
other node (a switch, NIC or host) and up to two lanes of bundled links, and checks the degraded fabric: hop histogram
against networkx BFS and against the router's own hop counts, bisection against
every balanced split (a valid cut never below the minimum, and equal to it when
marked exact), routes that use no dead element, exist exactly when the policy's
brute-force paths do (tests/routing_brute.py) and whose loads are the brute-force
ECMP split, traffic-matrix link loads equal to the sum of their pairs' loads,
throughput equal to an independent max-concurrent-flow LP (one commodity per
pair, any node forwards), stable ranks, and the CLI's ``--fail-link``/``--fail-chip``
on every family (exit 0 or a one-line error and exit 2, never a crash; ranks do
not move).
"""

import itertools
import math

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from cli_run import run_cli as _cli
from degrade import apart, built
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from routing_brute import (
    brute_loads,
    brute_paths,
    degraded_dor_hops,
    degraded_dor_paths,
    draw_pair,
    minimal_hops,
    policy_distances,
)
from scipy.optimize import linprog

import topologies
from analysis import link_loads, throughput, traffic
from analysis._metrics import bisection, hop_distribution
from fabric import Clos, Dragonfly, FabricError, Grid, NodeError, RoutingError, Switched

SPECS = ("torus:3x3", "mesh:3x2", "hypermesh:3x2", "hypermesh:2x3,connect=switch",
         "hypermesh:2x2x2,connect=switch/ring/full", "hypermesh:4x2,connect=switch/line",
         "fattree:k=4", "leafspine:k=4", "dragonfly:h=1", "switch:4,planes=2",
         "rail:servers=2,gpus=2", "mesh:2", "dgx-h100", "hgx-b200", "torus:3x2,links=2")
#: the properties of one drawn pair (and the matrix-loads one) draw half the time one of two
#: bigger switched fabrics (72 and 32 chips), whose pairs the BFS brute force
#: (routing_brute.brute_paths, ~3 ms a pair) checks fast
PAIR_SPECS = st.one_of(st.sampled_from(SPECS), st.sampled_from(("dragonfly:h=2", "leafspine:k=8")))
#: the hop histogram draws the big dragonfly (72 chips, 5,112 pairs) half the time too: its
#: degraded routes are counted by one search per source (routing_brute.minimal_hops)
HOP_SPECS = st.one_of(st.sampled_from(SPECS), st.just("dragonfly:h=2"))



@st.composite
def degraded(draw, specs=SPECS):
    """``(f, g)``: a fabric of ``specs`` (names, or a strategy of them) and ``g``, ``f`` with up
    to two links, a chip, another node and two lanes failed."""
    f = built(draw(specs if isinstance(specs, st.SearchStrategy) else st.sampled_from(specs)))
    edges = list(f.graph.edges)
    links = draw(st.lists(st.sampled_from(edges), max_size=2, unique=True))
    chips = draw(st.lists(st.sampled_from(f.endpoints), max_size=1))
    others = [v for v in f.nodes if f.graph.nodes[v]["kind"] != "chip"]
    if others:
        chips += draw(st.lists(st.sampled_from(others), max_size=1))
    bundles = [e for e in edges if f.graph.edges[e].get("lanes", 1) > 1]
    lanes = draw(st.lists(st.sampled_from(bundles), max_size=2)) if bundles else []
    links, lanes = apart(links, chips, lanes)
    return f, f.without(links=links, chips=chips, lanes=lanes)


def _connected(g):
    reach = nx.node_connected_component(g.graph, g.endpoints[0])
    return all(c in reach for c in g.endpoints)


def _brute_hops(g, policy="shortest"):
    counts = {}
    for s in g.endpoints:
        dist = policy_distances(g, s, policy)
        for t in g.endpoints:
            if t != s:
                counts[dist[t]] = counts.get(dist[t], 0) + 1
    out = [0] * (max(counts) + 1)
    for h, c in counts.items():
        out[h] = c
    return out


def _brute_bisection(g):
    """Fewest links across a balanced split of the endpoints, other nodes placed freely."""
    ep = list(g.endpoints)
    n = len(ep)
    best = math.inf
    for side in itertools.combinations(ep, n // 2):
        a = set(side)
        H = nx.DiGraph()
        for u, v, d in g.graph.edges(data=True):
            H.add_edge(u, v, capacity=d.get("lanes", 1))
            H.add_edge(v, u, capacity=d.get("lanes", 1))
        for c in ep:
            H.add_edge("_s", c) if c in a else H.add_edge(c, "_t")
        best = min(best, nx.minimum_cut_value(H, "_s", "_t"))
    return best


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(degraded(HOP_SPECS))
def test_hops_are_brute_force(case):
    f, g = case
    if g.n_endpoints < 2:
        return
    if not _connected(g):
        with pytest.raises(RoutingError):
            hop_distribution(g)
        return
    if g.failures.degraded and isinstance(g.structure, Dragonfly):
        # minimal: one global link, the shortest paths where none is left (one search per
        # source: routing_brute.minimal_hops, the per-pair paths' count)
        want = minimal_hops(g)
        if want is None:
            with pytest.raises(RoutingError):
                hop_distribution(g)
            return
    elif g.failures.degraded and isinstance(g.structure, (Clos, Switched)):
        # up-down routing: chips never forward, paths valley-free (brute force over paths)
        want = {}
        for s, t in itertools.permutations(g.endpoints, 2):
            paths = _policy_paths(f, g, s, t)
            if not paths:
                with pytest.raises(RoutingError):
                    hop_distribution(g)
                return
            want[len(paths[0]) - 1] = want.get(len(paths[0]) - 1, 0) + 1
        want = [want.get(h, 0) for h in range(max(want) + 1)]
    elif g.failures.degraded and isinstance(g.structure, Grid):
        # dimension order: a failed link's bytes take its bypass (the longest way counts)
        want = degraded_dor_hops(f, g)
    elif isinstance(g.structure, Dragonfly):
        want = _brute_hops(g, "minimal")            # one global link at most
    else:
        want = _brute_hops(g)
    counts, method = hop_distribution(g)
    assert counts.tolist() == want
    if g.failures.degraded:
        assert "closed form" not in method and "one BFS" not in method


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(degraded())
def test_bisection_is_a_cut_and_exact_only_when_minimal(case):
    _, g = case
    if g.n_endpoints > 8 or g.n_endpoints < 2 or not _connected(g):
        return
    links, _, exact, _ = bisection(g)
    truth = _brute_bisection(g)
    assert links >= truth
    if exact:
        assert links == truth


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(degraded(PAIR_SPECS), st.data())
def test_routes_use_no_dead_element_and_loads_conserve_bytes(case, data):
    _, g = case
    s = data.draw(st.sampled_from(g.endpoints))
    t = data.draw(st.sampled_from(g.endpoints))
    i = g.node_index
    try:
        path = g.route(s, t)
    except RoutingError as e:
        # a grid or dragonfly detours over any surviving path; up/down routing (Clos,
        # switched) has no route when no valley-free path through switches survives
        if isinstance(g.structure, (Grid, Dragonfly)):
            assert not nx.has_path(g.graph, s, t)
        assert repr(s) in str(e) or str(s) in str(e)
        return
    assert path[0] == s and path[-1] == t
    assert all(g.graph.has_edge(a, b) for a, b in itertools.pairwise(path))
    assert not set(path) & set(g.failures.nodes)
    dead = {frozenset(x) for x in g.failures.links}
    assert not any(frozenset(e) in dead for e in itertools.pairwise(path))
    r = g.router
    hops = int(r.hops(i[s], i[t])[0])
    loads = r.loads(i[s], i[t], 1.0)
    assert (loads >= 0).all()
    if g.failures.degraded and isinstance(g.structure, Grid):
        # the two ways of a tie may differ in length once one takes a bypass: hops and
        # latency are the longer way's, and so is the path; the bytes split evenly
        assert len(path) - 1 <= hops and loads.sum() <= hops + 1e-9
        assert sum(g.graph.edges[a, b]["latency"] for a, b in itertools.pairwise(path)) \
            == pytest.approx(float(r.latency(i[s], i[t])[0]), rel=1e-12, abs=0)
    else:
        assert len(path) - 1 == hops and loads.sum() == pytest.approx(hops)
    # a unit of flow leaves s and arrives at t (a bypass may pass through either again)
    out_s = sum(loads[k] for k in range(r.n_links) if r.link_name(k)[0] == s)
    into_s = sum(loads[k] for k in range(r.n_links) if r.link_name(k)[1] == s)
    into_t = sum(loads[k] for k in range(r.n_links) if r.link_name(k)[1] == t)
    out_t = sum(loads[k] for k in range(r.n_links) if r.link_name(k)[0] == t)
    assert (out_s - into_s, into_t - out_t) == (pytest.approx(1.0 if s != t else 0.0),
                                                pytest.approx(1.0 if s != t else 0.0))


@settings(max_examples=30, deadline=None)
@given(degraded(PAIR_SPECS))
def test_ranks_are_stable(case):
    f, g = case
    for c in g.endpoints:
        assert g.rank_of[c] == f.rank_of[c] and g.node(f.rank_of[c]) == c
    for c in g.failures.chips:
        with pytest.raises(NodeError, match="has failed"):
            g.node(f.rank_of[c])
    assert g.n_ranks == f.n_endpoints
    assert np.array_equal(np.sort(g.ranks), np.array(sorted(g.rank_of.values())))


def _policy_paths(f, g, s, t):
    """The paths the degraded fabric's policy allows from ``s`` to ``t``, by brute force.

    Dimension order: the intact fabric's dimension-order paths, each failed link replaced
    by its bypass (routing_brute.degraded_dor_paths); up/down and minimal: the
    valley-free (one global hop) shortest paths through switches, and for a degraded
    dragonfly with none left, the shortest paths of the surviving graph.
    """
    policy = g.router.policy
    if policy == "dimension-order":
        return degraded_dor_paths(f, g, s, t)
    paths = brute_paths(g, s, t, policy)
    if not paths and policy == "minimal" and nx.has_path(g.graph, s, t):
        paths = sorted(nx.all_shortest_paths(g.graph, s, t))
    return paths


def drawn_policy_paths(case, data):
    """``(s, t, paths)``: a pair of the degraded fabric's live endpoints drawn from ``data``
    (routing_brute.draw_pair) and :func:`_policy_paths` between them; None when fewer than
    two endpoints are alive. ``case`` is ``(f, g)``."""
    f, g = case
    pair = draw_pair(g, data)
    return None if pair is None else (*pair, _policy_paths(f, g, *pair))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(degraded(PAIR_SPECS), st.data())
def test_routes_exist_iff_brute_force_and_loads_are_its_ecmp_split(case, data):
    g = case[1]
    drawn = drawn_policy_paths(case, data)
    if drawn is None:
        return
    s, t, want = drawn
    i = g.node_index
    r = g.router
    if not want:
        with pytest.raises(RoutingError):
            g.route(s, t)
        with pytest.raises(RoutingError):
            r.loads(i[s], i[t], 1.0)
        return
    assert g.route(s, t) in want
    assert int(r.hops(i[s], i[t])[0]) == max(len(p) for p in want) - 1
    if r.ecmp != "all":  # hash / weighted splits are checked in test_routing
        return
    ref = np.zeros(r.n_links)
    for p in want:
        for a, b in itertools.pairwise(p):
            ref[r.link_index(a, b)] += 1.0 / len(want)
    np.testing.assert_allclose(r.loads(i[s], i[t], 1.0), ref, atol=1e-12)
    if r.policy in ("up-down", "minimal") and brute_paths(g, s, t, r.policy):
        np.testing.assert_allclose(brute_loads(g, [(s, t)], r.policy), ref, atol=1e-12)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(degraded(PAIR_SPECS), st.sampled_from(["all-to-all", "permutation", "shift"]))
def test_matrix_loads_and_routed_hops_agree_with_pairs_and_bfs(case, pattern):
    _, g = case
    if g.n_endpoints < 2 or not _connected(g):
        return
    r = g.router
    ep = g.endpoint_indices
    tm = traffic(g, pattern, 1000.0)
    M = tm.dense()
    a, b = np.nonzero(M)
    try:
        ref = r.loads(ep[a], ep[b], M[a, b])
    except RoutingError:  # up/down with no valley-free path left for some pair
        with pytest.raises(RoutingError):
            link_loads(g, tm)
        return
    np.testing.assert_allclose(link_loads(g, tm).loads, ref, rtol=1e-9, atol=1e-9)
    a, b = np.nonzero(~np.eye(len(ep), dtype=bool))
    try:
        routed = r.hops(ep[a], ep[b])
    except RoutingError:  # a pair the permutation did not use has no route left
        with pytest.raises(RoutingError):
            hop_distribution(g)
        return
    counts, _ = hop_distribution(g)
    assert np.bincount(routed, minlength=len(counts)).tolist() == counts.tolist()


def test_hops_on_a_degraded_switched_domain_follow_routing():
    # hgx-b200 without chip0-sw0 and chip1-sw1: the two chips share no surviving plane,
    # and GPUs do not forward, so no route joins them (graph BFS found 4 hops via a chip)
    f = topologies.build("hgx-b200")
    with pytest.raises(RoutingError, match="no route"):
        hop_distribution(f.without(links=[("chip0", "sw0"), ("chip1", "sw1")]))
    counts, method = hop_distribution(f.without(links=[("chip0", "sw0")]))
    assert counts.tolist() == [0, 0, 56] and "routed" in method


@pytest.mark.parametrize("spec", ["torus:2x2", "fattree:k=4", "mesh:3"])
def test_one_live_chip_has_no_pairs(spec):
    f = topologies.build(spec)
    counts, _ = hop_distribution(f.without(chips=f.endpoints[1:]))
    assert counts.tolist() == [0]


def _brute_throughput(g, M):
    """Max-concurrent-flow K by an LP with one commodity per pair (any node forwards)."""
    r = g.router
    L, N = r.n_links, len(g.nodes)
    ep = g.endpoint_indices
    pairs = [(i, j) for i, j in zip(*np.nonzero(M))]
    nv = len(pairs) * L + 1
    rows, cols, vals = [], [], []
    for c, (i, j) in enumerate(pairs):
        rows += [c * N + r.link_tail, c * N + r.link_head, [c * N + ep[i], c * N + ep[j]]]
        cols += [c * L + np.arange(L), c * L + np.arange(L), [nv - 1, nv - 1]]
        vals += [np.ones(L), -np.ones(L), [-M[i, j], M[i, j]]]
    A_eq = sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                         shape=(len(pairs) * N, nv))
    scale = r.link_bandwidth.max()
    A_ub = sp.csr_matrix((np.ones(nv - 1), (np.tile(np.arange(L), len(pairs)),
                                             np.arange(nv - 1))), shape=(L, nv))
    cost = np.zeros(nv)
    cost[-1] = -1.0
    res = linprog(cost, A_ub=A_ub, b_ub=r.link_bandwidth / scale, A_eq=A_eq,
                  b_eq=np.zeros(A_eq.shape[0]), bounds=(0, None), method="highs")
    assert res.status == 0
    return res.x[-1] * scale


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(degraded(), st.sampled_from(["all-to-all", "shift", "permutation"]))
def test_throughput_is_the_brute_force_lp(case, pattern):
    _, g = case
    if g.n_endpoints < 2:
        return
    M = traffic(g, pattern, 1.0).dense()
    if not M.any():  # a permutation of two ranks may keep both in place
        return
    ep = g.endpoints
    if any(not nx.has_path(g.graph, ep[i], ep[j]) for i, j in zip(*np.nonzero(M))):
        with pytest.raises(FabricError, match="no path"):
            throughput(g, M)
        return
    assert throughput(g, M).k == pytest.approx(_brute_throughput(g, M), rel=1e-6)



@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(SPECS), st.data())
def test_cli_with_failures_on_every_family(spec, data):
    f = built(spec)
    links = data.draw(st.lists(st.sampled_from(list(f.graph.edges)), max_size=2, unique=True))
    chips = data.draw(st.lists(st.sampled_from(f.endpoints), max_size=1))
    links = apart(links, chips)[0]
    by_rank = data.draw(st.booleans())
    fails = [x for u, v in links for x in ("--fail-link", f"{u}-{v}")]
    fails += [x for c in chips for x in ("--fail-chip", str(f.rank_of[c]) if by_rank else c)]
    s, t = (data.draw(st.integers(0, f.n_endpoints - 1)) for _ in range(2))
    g = f.without(links=links, chips=chips)
    for argv in (["route", spec, str(s), str(t)], ["latency", spec], ["throughput", spec],
                 ["metrics", spec]):
        rc, out, err = _cli(argv + fails)
        assert rc in (0, 2), err
        if rc == 2:
            assert len(err.strip().splitlines()) == 1 and err.startswith(f"cofabric {argv[0]}")
            continue
        if argv[0] == "route":
            # ranks are stable: rank s is the intact fabric's s-th chip, failures or not
            src, dst = f.endpoints[s], f.endpoints[t]
            assert f" from {src} to {dst} " in out.splitlines()[0]
            assert src not in chips and dst not in chips
            assert out.splitlines()[1].startswith("path: " + src)
        if argv[0] == "route" and (f.endpoints[s] in chips or f.endpoints[t] in chips):
            pytest.fail("a failed chip was routed")
    if chips:
        rc, _, err = _cli(["route", spec, str(f.rank_of[chips[0]]), "0"] + fails)
        assert rc == 2 and "has failed" in err
    if g.n_endpoints >= 2 and not _connected(g):
        rc, _, err = _cli(["latency", spec] + fails)
        assert rc == 2 and "no route" in err


@pytest.mark.parametrize("spec, fail", [
    ("mesh:2", ["--fail-link", "chip0-chip1"]),
    ("hypermesh:2,connect=switch", ["--fail-chip", "sw.d0.0"]),
    ("hypermesh:2,connect=full", ["--fail-link", "chip0-chip1"]),
    ("torus:2x2", ["--fail-chip", "chip1", "--fail-chip", "chip2"]),
])
def test_a_grid_left_without_links_is_unroutable_not_a_crash(spec, fail):
    # the dimension-order tables indexed an empty latency array: IndexError, exit 3
    last = str(built(spec).n_endpoints - 1)
    for cmd in (["route", spec, "0", last], ["latency", spec]):
        rc, _, err = _cli(cmd + fail)
        assert rc == 2 and "no route from" in err, err
    g = built(spec).without(links=[tuple(x.split("-")) for x in fail[1::2]
                                    if fail[0] == "--fail-link"],
                             chips=[x for x in fail[1::2] if fail[0] == "--fail-chip"])
    i = g.endpoint_indices
    with pytest.raises(RoutingError):
        g.router.hops(i[:1], i[-1:])
