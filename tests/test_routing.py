"""Routing against brute force (networkx path enumeration) on small instances of every family."""

import itertools

import networkx as nx
import numpy as np
import pytest
from routing_brute import brute_loads, brute_paths, path_latency

import topologies
from fabric import Fabric, NodeError, Router, RoutingError, route, route_many

# Small instances of every family, none of them named in the issue.
SPECS = [
    ("torus:3x4", "dimension-order"),
    ("torus:4x2x3", "dimension-order"),
    ("torus:6", "dimension-order"),
    ("mesh:3x2x2", "dimension-order"),
    ("hypermesh:3x3", "dimension-order"),
    ("hypermesh:3x4x2,connect=full/ring/switch", "dimension-order"),
    ("hypermesh:4x3,connect=switch/line", "dimension-order"),
    ("fattree:k=4", "up-down"),
    ("leafspine:k=4,over=3", "up-down"),
    ("rail:servers=4,gpus=2,spines=2", "up-down"),
    ("switch:5,planes=3", "up-down"),
    ("dragonfly:h=1", "minimal"),
]


def _pairs(f, limit=80, seed=1):
    pairs = [(a, b) for a in f.endpoints for b in f.endpoints if a != b]
    if len(pairs) > limit:
        rng = np.random.default_rng(seed)
        pairs = [pairs[i] for i in sorted(rng.choice(len(pairs), limit, replace=False))]
    return pairs


def _idx(f, pairs):
    idx = f.node_index
    return (np.array([idx[a] for a, _ in pairs]), np.array([idx[b] for _, b in pairs]))


@pytest.fixture(scope="module", params=SPECS, ids=[s for s, _ in SPECS])
def case(request):
    spec, policy = request.param
    return topologies.build(spec), policy


def test_policy_follows_family(case):
    f, policy = case
    assert f.router.policy == policy


def test_link_arrays_follow_the_contract(case):
    f, _ = case
    r = f.router
    E = f.graph.number_of_edges()
    assert len(r.link_tail) == len(r.link_head) == len(r.link_bandwidth) == 2 * E
    for e, (u, v, d) in enumerate(f.graph.edges(data=True)):
        assert (r.link_tail[2 * e], r.link_head[2 * e]) == (f.node_index[u], f.node_index[v])
        assert (r.link_tail[2 * e + 1], r.link_head[2 * e + 1]) == (f.node_index[v],
                                                                    f.node_index[u])
        assert r.link_bandwidth[2 * e] == r.link_bandwidth[2 * e + 1] == d["bandwidth"]
        assert r.link_latency[2 * e] == d["latency"]


def test_loads_equal_brute_force(case):
    f, policy = case
    pairs = _pairs(f)
    s, d = _idx(f, pairs)
    got = f.router.loads(s, d, 3.0)
    want = brute_loads(f, pairs, policy, nbytes=3.0)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-9)


def test_loads_matrix_equals_pairwise(case):
    f, _ = case
    n = f.n_endpoints
    rng = np.random.default_rng(7)
    M = rng.integers(0, 4, size=(n, n)).astype(float)
    ep = f.endpoint_indices
    s, d = np.meshgrid(ep, ep, indexing="ij")
    np.testing.assert_allclose(f.router.loads_matrix(M), f.router.loads(s.ravel(), d.ravel(),
                                                                         M.ravel()),
                               rtol=1e-12, atol=1e-9)


def test_hops_and_latency_equal_brute_force(case):
    f, policy = case
    pairs = _pairs(f)
    s, d = _idx(f, pairs)
    hops = f.router.hops(s, d)
    lat = f.router.latency(s, d)
    for i, (a, b) in enumerate(pairs):
        ps = brute_paths(f, a, b, policy)
        assert hops[i] == len(ps[0]) - 1
        assert lat[i] == pytest.approx(max(path_latency(f, p) for p in ps), rel=1e-12)


def test_path_is_one_of_the_policy_paths(case):
    f, policy = case
    for a, b in _pairs(f, limit=25):
        p = f.route(a, b)
        assert p in brute_paths(f, a, b, policy)
        assert p == f.route(a, b)  # deterministic


def test_hash_mode_loads_follow_the_hash_paths(case):
    f, _ = case
    r = Router(f, ecmp="hash")
    pairs = _pairs(f, limit=40)
    s, d = _idx(f, pairs)
    want = np.zeros(r.n_links)
    for i in range(len(s)):
        for k in r.path_links(s[i], d[i]):
            want[k] += 2.0
    np.testing.assert_allclose(r.loads(s, d, 2.0), want)


def test_self_pairs_and_zero_bytes_load_nothing(case):
    f, _ = case
    ep = f.endpoint_indices
    assert not f.router.loads(ep, ep, 5.0).any()
    assert not f.router.loads(ep[:1], ep[-1:], 0.0).any()
    assert (f.router.hops(ep, ep) == 0).all()


def test_shortest_policy_on_a_user_graph():
    G = nx.petersen_graph()
    nx.set_node_attributes(G, "chip", "kind")
    nx.set_edge_attributes(G, 10e9, "bandwidth")
    for k, (u, v) in enumerate(G.edges):
        G.edges[u, v]["latency"] = (1 + k % 3) * 1e-7
    f = Fabric.from_graph(G)
    assert f.router.policy == "shortest"
    pairs = [(a, b) for a in G for b in G if a != b]
    s, d = _idx(f, pairs)
    np.testing.assert_allclose(f.router.loads(s, d, 1.0), brute_loads(f, pairs, "shortest"))
    lat = f.router.latency(s, d)
    for i, (a, b) in enumerate(pairs):
        assert lat[i] == pytest.approx(max(path_latency(f, p)
                                           for p in nx.all_shortest_paths(G, a, b)))


def test_torus_tie_splits_both_ways():
    f = topologies.build("torus:4")
    r = f.router
    ep = f.endpoint_indices
    loads = r.loads(ep[:1], ep[2:3], 8.0)
    # chip0 -> chip2 on a 4-ring: two ways of 2 hops, 4 B each way on 4 links
    assert sorted(loads[loads > 0].tolist()) == [4.0] * 4
    assert route(f, 0, 2) == ["chip0", "chip1", "chip2"]


def test_sd200_calibration():
    f = topologies.build("sd200-ultra")
    ep = f.endpoint_indices
    s, d = np.meshgrid(ep, ep, indexing="ij")
    lat = f.router.latency(s.ravel(), d.ravel())
    # documented calibration: worst case 3 hops x 230 ns = 0.69 us
    assert lat.max() == pytest.approx(0.69e-6, rel=1e-12)
    assert f.router.hops(s.ravel(), d.ravel()).max() == 3
    hops, t = route_many(f, ["chip0"], ["chip127"])
    assert hops.tolist() == [3] and t[0] == pytest.approx(690e-9)


def test_fat_tree_uniform_loads_closed_form():
    # k-ary fat-tree, uniform all-to-all of 1 B per pair: a host link carries n - 1 B;
    # the h = k/2 hosts of an edge switch send h (n - h) B off it, split evenly over its
    # h up-links; a pod's h*h hosts send h*h (n - h*h) B off-pod over its h*h core links.
    k = 6
    f = topologies.build(f"fattree:k={k}")
    n = f.n_endpoints
    L = f.router.loads_matrix(np.ones((n, n)) - np.eye(n))
    r = f.router
    tiers = {}
    for i in range(r.n_links):
        a, b = r.link_name(i)
        tiers.setdefault((a.rstrip("0123456789.")[:4], b.rstrip("0123456789.")[:4]),
                         set()).add(round(L[i], 9))
    h = k // 2
    assert tiers[("chip", "edge")] == {n - 1}
    assert tiers[("edge", "agg")] == {round(h * (n - h) / h, 9)}
    assert tiers[("agg", "core")] == {round(h * h * (n - h * h) / (h * h), 9)}


def test_bad_input():
    f = topologies.build("fattree:k=4")
    with pytest.raises(NodeError, match="no node called 'edge9.9'"):
        f.route("chip0", "edge9.9")
    with pytest.raises(NodeError, match="rank 99"):
        f.route(0, 99)
    with pytest.raises(NodeError, match="node index"):
        f.router.loads([0], [10_000], 1.0)
    with pytest.raises(TypeError, match="node indices"):
        f.router.loads(["chip0"], ["chip1"], 1.0)
    with pytest.raises(ValueError, match="nbytes"):
        f.router.loads([0], [1], -1.0)
    with pytest.raises(ValueError, match="policy must be one of"):
        Router(f, policy="random-walk")
    with pytest.raises(ValueError, match="ecmp must be one of"):
        Router(f, ecmp="spray")


def test_disconnected_pair_names_the_pair():
    G = nx.Graph()
    G.add_nodes_from("abcd", kind="chip")
    G.add_edge("a", "b", bandwidth=1e9, latency=1e-7)
    G.add_edge("c", "d", bandwidth=1e9, latency=1e-7)
    f = Fabric(nx.freeze(G), tuple("abcd"))
    with pytest.raises(RoutingError, match="no route from 'a' to 'd'"):
        f.route("a", "d")
    idx = f.node_index
    with pytest.raises(RoutingError, match="no route from 'a' to 'c'"):
        f.router.loads([idx["a"]], [idx["c"]], 1.0)


def test_path_links_many_equals_path_links(case):
    f, _ = case
    r = f.router
    pairs = _pairs(f, limit=60) + [(f.endpoints[0], f.endpoints[0])]
    s, d = _idx(f, pairs)
    M = r.path_links_many(s, d)
    for i in range(len(s)):
        row = M[i][M[i] >= 0].tolist()
        assert row == r.path_links(s[i], d[i])


def test_bottleneck_is_the_narrowest_link_of_the_paths(case):
    f, policy = case
    pairs = _pairs(f, limit=40)
    s, d = _idx(f, pairs)
    bw = f.router.bottleneck(s, d)
    G = f.graph
    for i, (a, b) in enumerate(pairs):
        want = min(G.edges[u, v]["bandwidth"] for p in brute_paths(f, a, b, policy)
                   for u, v in itertools.pairwise(p))
        assert bw[i] == want


def test_dimension_order_to_a_switch_uses_shortest_paths():
    f = topologies.build("hypermesh:4x3,connect=switch/ring")
    G = f.graph
    sw = [n for n in G if G.nodes[n]["kind"] == "switch"]
    pairs = [(c, s) for c in f.endpoints for s in sw] + [(s, c) for s in sw for c in f.endpoints]
    s, d = _idx(f, pairs)
    want = brute_loads(f, pairs, "shortest")
    np.testing.assert_allclose(f.router.loads(s, d, 1.0), want, atol=1e-9)
    hops = f.router.hops(s, d)
    for i, (a, b) in enumerate(pairs):
        assert hops[i] == nx.shortest_path_length(G, a, b)
        assert f.route(a, b) in brute_paths(f, a, b, "shortest")


@pytest.mark.parametrize("pairwise", [True, False], ids=["pair-by-pair", "per-source"])
def test_both_engine_methods_equal_brute_force(case, pairwise):
    """Pair-by-pair DAGs and the per-source Brandes sweep, each forced, against brute force."""
    f, policy = case
    r = Router(f)
    if r._dor is not None:
        pytest.skip("dimension-order routing is closed-form; the engine only routes detours")
    r._engine._pairs_cheaper = lambda *counts: pairwise
    pairs = _pairs(f, limit=60)
    s, d = _idx(f, pairs)
    np.testing.assert_allclose(r.loads(s, d, 3.0), brute_loads(f, pairs, policy, nbytes=3.0),
                               rtol=1e-12, atol=1e-9)
    hops, lat, bw = r._measure(s, d, want_bandwidth=True)
    G = f.graph
    for i, (a, b) in enumerate(pairs):
        ps = brute_paths(f, a, b, policy)
        assert hops[i] == len(ps[0]) - 1
        assert lat[i] == pytest.approx(max(path_latency(f, p) for p in ps), rel=1e-12)
        assert bw[i] == min(G.edges[u, v]["bandwidth"] for p in ps
                            for u, v in itertools.pairwise(p))


@pytest.mark.parametrize("ecmp", ["all", "hash"])
def test_loads_grouped_equals_per_group_calls(case, ecmp):
    f, _ = case
    r = Router(f, ecmp=ecmp)
    ep = f.endpoint_indices
    n = len(ep)
    # the steps of a pairwise exchange (shift permutations), one group each, bytes per pair
    # varying, plus a self pair and a group left empty (the last)
    shifts = range(1, n)
    s = np.concatenate([ep for _ in shifts] + [ep[:1]])
    d = np.concatenate([np.roll(ep, -k) for k in shifts] + [ep[:1]])
    g = np.concatenate([np.full(n, k - 1) for k in shifts] + [[0]])
    w = 1.0 + np.arange(len(s)) % 5
    got = r.loads_grouped(s, d, w, g, n)
    assert got.shape == (n, r.n_links)
    for k in range(n):
        m = g == k
        np.testing.assert_allclose(got[k], r.loads(s[m], d[m], w[m]), rtol=1e-12, atol=1e-9)
    assert not got[-1].any()


def test_loads_grouped_bad_input():
    r = topologies.build("fattree:k=4").router
    with pytest.raises(ValueError, match="n_groups must be an integer >= 1"):
        r.loads_grouped([0], [1], 1.0, [0], 0)
    with pytest.raises(ValueError, match=r"group holds 3, outside 0..1"):
        r.loads_grouped([0, 1], [1, 2], 1.0, [0, 3], 2)
    with pytest.raises(ValueError, match="group must have the length of src"):
        r.loads_grouped([0, 1], [1, 2], 1.0, [0, 1, 1], 2)
    with pytest.raises(TypeError, match="group must be integers"):
        r.loads_grouped([0], [1], 1.0, [0.5], 1)


def _brute_weighted(f, pairs, policy, nbytes=1.0):
    """Per-hop bandwidth-weighted split, by enumerating every policy path of each pair.

    At position ``i`` of node ``u`` (its distance from the source on these
    shortest paths) the next hops are the nodes following it on any path; a
    path's share is the product over its hops of the hop's bandwidth over the
    sum of the bandwidths of the next hops there.
    """
    G = f.graph
    r = f.router
    out = np.zeros(r.n_links)
    for a, b in pairs:
        ps = brute_paths(f, a, b, policy)
        nxt = {}
        for p in ps:
            for i in range(len(p) - 1):
                nxt.setdefault((p[i], i), set()).add(p[i + 1])
        for p in ps:
            share = 1.0
            for i in range(len(p) - 1):
                total = sum(G.edges[p[i], x]["bandwidth"] for x in nxt[(p[i], i)])
                share *= G.edges[p[i], p[i + 1]]["bandwidth"] / total
            for u, v in itertools.pairwise(p):
                out[r.link_index(u, v)] += share * nbytes
    return out


def _uneven_graph():
    """A small irregular graph with uneven link bandwidths (every node a chip, shortest paths)."""
    G = nx.grid_2d_graph(3, 4)
    G.add_edge((0, 0), (1, 1))
    G.add_edge((1, 2), (2, 3))
    G = nx.convert_node_labels_to_integers(G)
    nx.set_node_attributes(G, "chip", "kind")
    rng = np.random.default_rng(3)
    for u, v in G.edges:
        G.edges[u, v]["bandwidth"] = float(rng.choice([1e9, 2e9, 5e9]))
        G.edges[u, v]["latency"] = 1e-7
    return Fabric.from_graph(G)


WEIGHTED = SPECS[7:] + [("switch:4,planes=3,links=3/1/2", "up-down"),
                        ("rail:servers=3,gpus=2,spines=3", "up-down")]


@pytest.mark.parametrize("pairwise", [True, False], ids=["pair-by-pair", "per-target"])
@pytest.mark.parametrize("spec,policy", WEIGHTED, ids=[s for s, _ in WEIGHTED])
def test_weighted_ecmp_equals_brute_force(spec, policy, pairwise):
    f = topologies.build(spec)
    r = Router(f, ecmp="weighted")
    r._engine._pairs_cheaper = lambda *counts: pairwise
    pairs = _pairs(f, limit=60)
    s, d = _idx(f, pairs)
    want = _brute_weighted(f, pairs, policy, nbytes=2.0)
    np.testing.assert_allclose(r.loads(s, d, 2.0), want, rtol=1e-12, atol=1e-9)
    g = np.arange(len(s)) % 3
    got = r.loads_grouped(s, d, 2.0, g, 3)
    np.testing.assert_allclose(got.sum(axis=0), want, rtol=1e-12, atol=1e-9)
    np.testing.assert_allclose(got[1], _brute_weighted(f, [pairs[i] for i in range(1, len(s), 3)],
                                                       policy, nbytes=2.0), rtol=1e-12, atol=1e-9)
    # the paths are the same as for equal splits: same hops and latencies
    np.testing.assert_array_equal(r.hops(s, d), Router(f, ecmp="all").hops(s, d))


def test_weighted_ecmp_on_uneven_bandwidths_equals_brute_force():
    f = _uneven_graph()
    r = Router(f, ecmp="weighted")
    assert r.policy == "shortest"
    pairs = _pairs(f, limit=132)
    s, d = _idx(f, pairs)
    want = _brute_weighted(f, pairs, "shortest")
    for pairwise in (True, False):  # pair by pair, and swept per target
        r._engine._pairs_cheaper = lambda *counts, p=pairwise: p
        np.testing.assert_allclose(r.loads(s, d, 1.0), want, rtol=1e-12, atol=1e-9)
    # uneven bandwidths make it differ from equal splits somewhere
    assert not np.allclose(want, Router(f, ecmp="all").loads(s, d, 1.0))


def test_weighted_ecmp_splits_nvswitch_planes_by_links():
    """DGX H100: 5, 4, 4, 5 NVLinks to the four NVSwitch planes, so 5/18, 4/18, 4/18, 5/18."""
    f = topologies.build("dgx-h100")
    assert f.router.ecmp == "weighted"  # the switched family's default
    assert topologies.build("fattree:k=4").router.ecmp == "all"
    i = f.node_index
    loads = f.router.loads([i["chip0"]], [i["chip1"]], 18.0)
    per_plane = [loads[f.router.link_index("chip0", f"sw{p}")] for p in range(4)]
    assert per_plane == pytest.approx([5.0, 4.0, 4.0, 5.0], rel=1e-12)
    even = Router(f, ecmp="all").loads([i["chip0"]], [i["chip1"]], 18.0)
    assert [even[f.router.link_index("chip0", f"sw{p}")] for p in range(4)] == \
        pytest.approx([4.5] * 4, rel=1e-12)


def test_weighted_ecmp_refused_for_dimension_order():
    with pytest.raises(ValueError, match="not modelled for dimension-order"):
        Router(topologies.build("torus:4x4"), ecmp="weighted")


def test_pair_tables_evicted_and_batched_give_the_same_answers(monkeypatch):
    """Tiny work blocks and a table cache of a few states: many batches, the cache restarting."""
    import fabric._routing_engine as engine

    f = topologies.build("fattree:k=4")
    pairs = _pairs(f, limit=120, seed=5)
    s, d = _idx(f, pairs)
    want = brute_loads(f, pairs, "up-down", nbytes=1.0)
    lat_want = Router(f).latency(s, d)
    r = Router(f)
    S = r._engine.sg.n_states
    monkeypatch.setattr(engine, "BLOCK", 8 * S)
    monkeypatch.setattr(engine, "_TABLE", 3 * S)
    r._engine._pairs_cheaper = lambda *counts: True
    for _ in range(2):  # the second run starts from a full cache
        np.testing.assert_allclose(r.loads(s, d, 1.0), want, rtol=1e-12, atol=1e-9)
        np.testing.assert_array_equal(r.latency(s, d), lat_want)
        assert len(r._engine._D[0]) <= 3


def test_a_pair_dags_arcs_tested_in_runs_route_the_same(monkeypatch):
    # fabric._routing_engine tests a pair DAG's candidate arcs _DAG_CHUNK at a time (session
    # 18): runs of one arc, of a few, and all in one run give the same loads, bit for bit
    import fabric._routing_engine as engine
    got = []
    for chunk in (1, 7, 1 << 40):
        monkeypatch.setattr(engine, "_DAG_CHUNK", chunk)
        f = topologies.build("switch:6,planes=2,chip=h100").without(links=[("chip1", "sw0")])
        ep = f.endpoint_indices
        src, dst = np.repeat(ep, len(ep)), np.tile(ep, len(ep))
        w = 1.0 + np.arange(len(src)) % 5
        got.append((f.router.loads(src, dst, w).tobytes(), f.router.hops(src, dst).tobytes()))
    assert got[0] == got[1] == got[2]
