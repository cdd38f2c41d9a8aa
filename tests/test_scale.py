"""Scale mechanisms (issue 16) against the general engines they shortcut, on random small shapes."""

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import topologies
from analysis import link_loads, traffic
from analysis._traffic import TrafficMatrix
from fabric import Router, SpecError


def _reference_loads(f, router=None):
    """Uniform all-to-all through the general engine (row blocks, every pair routed)."""
    r = router or f.router
    return r.loads_matrix(TrafficMatrix("u", f.n_endpoints, fill=1.0))


def _same(a, b):
    np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12 * float(np.abs(b).max()))


_SHAPES = st.lists(st.integers(1, 5), min_size=1, max_size=3)


@st.composite
def _specs(draw):
    kind = draw(st.sampled_from(["torus", "hypermesh", "mixed", "fattree", "leafspine", "rail",
                                 "switch", "dragonfly"]))
    if kind in ("torus", "hypermesh"):
        shape = draw(_SHAPES)
        return f"{kind}:" + "x".join(map(str, shape))
    if kind == "mixed":
        shape = draw(st.lists(st.integers(2, 4), min_size=2, max_size=3))
        conn = draw(st.lists(st.sampled_from(["ring", "full"]), min_size=len(shape),
                             max_size=len(shape)))
        return "hypermesh:" + "x".join(map(str, shape)) + ",connect=" + "/".join(conn)
    if kind == "fattree":
        return f"fattree:k={draw(st.sampled_from([2, 4, 6]))}"
    if kind == "leafspine":
        return f"leafspine:k={draw(st.sampled_from([4, 6]))},over={draw(st.integers(1, 3))}"
    if kind == "rail":
        return (f"rail:servers={draw(st.integers(2, 4))},gpus={draw(st.integers(1, 3))},"
                f"spines={draw(st.integers(1, 3))}")
    if kind == "switch":
        return f"switch:{draw(st.integers(2, 7))},planes={draw(st.integers(1, 3))}"
    h = draw(st.integers(1, 3))
    return f"dragonfly:h={h},a={draw(st.integers(1, 2 * h))},p={draw(st.integers(1, 3))}"


@settings(max_examples=60, deadline=None)
@given(_specs(), st.sampled_from(["all", "hash", "weighted"]))
def test_all_to_all_loads_match_the_general_engine(spec, ecmp):
    try:
        f = topologies.build(spec)
    except SpecError:  # a combination the builder refuses
        assume(False)
    assume(f.n_endpoints >= 2)
    policy = f.router.policy
    if policy == "dimension-order" and ecmp == "weighted":
        ecmp = "all"
    r = Router(f, ecmp=ecmp)
    _same(r.loads_all_to_all(1.0), _reference_loads(f, r))


def test_orbits_refuse_degraded_and_asymmetric_fabrics():
    f = topologies.build("torus:4x4")
    assert f.router.link_orbits is not None
    assert f.without(links=[("chip0", "chip1")]).router.link_orbits is None
    assert topologies.build("mesh:3x3").router.link_orbits is None
    assert topologies.build("hypermesh:3x3,connect=switch").router.link_orbits is None
    g = topologies.build("fattree:k=4").without(chips=[3])
    assert g.router.link_orbits is None


@pytest.mark.parametrize("spec,failure", [
    ("torus:4x3", {"links": [("chip0", "chip1")]}),
    ("fattree:k=4", {"links": ["agg0.0-core0"]}),
    ("dragonfly:h=2", {"chips": [5]}),
    ("dragonfly:h=2", {"links": [("r0.0", "r0.1")]}),
])
def test_degraded_fabrics_fall_back_to_the_general_engine(spec, failure):
    g = topologies.build(spec).without(**failure)
    _same(g.router.loads_all_to_all(1.0), _reference_loads(g))
    t = traffic(g, "all-to-all", 2.0)
    _same(link_loads(g, t).loads, g.router.loads_matrix(t))


def test_link_loads_of_uniform_traffic_use_the_same_numbers():
    f = topologies.build("hypermesh:4x3x2,connect=ring/full/ring")
    t = traffic(f, "all-to-all", 3.0)
    _same(link_loads(f, t).loads, f.router.loads_matrix(t))


# -- throughput LP reductions -------------------------------------------------------------


def _solve(c, A_ub, b_ub, A_eq, b_eq):
    from scipy.optimize import linprog

    res = linprog(c, A_ub=A_ub, b_ub=b_ub, A_eq=A_eq, b_eq=b_eq, bounds=(0, None),
                  method="highs")
    assert res.status == 0, res.message
    return res.fun


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 4), st.integers(2, 4), st.integers(2, 5), st.integers(0, 2**32 - 1))
def test_equitable_reduction_keeps_the_optimum(copies, m, k, seed):
    """Copies of one random LP sharing a variable: the reduction finds them, same optimum."""
    import scipy.sparse as sp

    from analysis._lp_reduce import reduce_lp

    rng = np.random.default_rng(seed)
    B = rng.integers(0, 4, size=(m, k)).astype(float)
    B[0] += 1  # every variable bounded
    col = rng.integers(1, 3, size=(m, 1)).astype(float)
    # copies of [B | col] over their own variables plus one shared last variable t
    A_ub = sp.hstack([sp.block_diag([sp.csr_matrix(B)] * copies),
                      sp.csr_matrix(np.tile(col, (copies, 1)))]).tocsr()
    b_ub = np.tile(rng.integers(1, 9, size=m).astype(float), copies)
    c = np.r_[np.tile(-rng.random(k), copies), -1.0]
    A_eq = sp.csr_matrix((0, A_ub.shape[1]))
    full = _solve(c, A_ub, b_ub, A_eq, np.zeros(0))
    red = reduce_lp(c, A_ub, b_ub, A_eq, np.zeros(0))
    assert red is not None
    c2, Au, bu, Ae, be, cls, n_cls = red
    assert n_cls <= k + 1  # the copies fold onto one
    assert len(cls) == A_ub.shape[1]
    assert _solve(c2, Au, bu, Ae, be) == pytest.approx(full, rel=1e-9, abs=1e-9)


@settings(max_examples=25, deadline=None)
@given(st.sampled_from(["torus:3x3", "torus:2x3x2", "torus:4x2", "hypermesh:3x3",
                        "hypermesh:2x3,connect=ring/full", "fattree:k=4", "switch:6,planes=2",
                        "leafspine:k=4,over=1", "rail:servers=2,gpus=2,spines=1"]))
def test_symmetric_throughput_equals_the_general_lp(spec):
    from analysis import throughput

    f = topologies.build(spec)
    t = traffic(f, "all-to-all", 1.0)
    sym = throughput(f, t, method="symmetric")
    assert sym.method == "symmetric"
    assert sym.k == pytest.approx(throughput(f, t, method="lp").k, rel=1e-6)


# -- all-pairs BFS over endpoints ---------------------------------------------------------


@st.composite
def _graphs(draw):
    """A random graph (maybe disconnected): a random tree plus extra edges, leaves, endpoints."""
    n = draw(st.integers(1, 40))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    edges = [(int(rng.integers(0, i)), i) for i in range(1, n)]
    edges += [tuple(map(int, rng.integers(0, n, 2))) for _ in range(draw(st.integers(0, 30)))]
    if draw(st.booleans()) and n > 2:  # cut the graph in two
        edges = [(u, v) for u, v in edges if (u < n // 2) == (v < n // 2)]
    n_leaves = draw(st.integers(0, 30))
    hosts = rng.integers(0, n, n_leaves)
    edges += [(int(h), n + i) for i, h in enumerate(hosts)]
    N = n + n_leaves
    ep = np.flatnonzero(rng.random(N) < draw(st.floats(0.1, 1.0)))
    return N, edges, ep


def _matrix(N, edges):
    import scipy.sparse as sp

    u = np.array([e[0] for e in edges] or [0], dtype=np.int64)[:len(edges)]
    v = np.array([e[1] for e in edges] or [0], dtype=np.int64)[:len(edges)]
    A = sp.coo_matrix((np.ones(len(u)), (u, v)), shape=(N, N))
    return (A + A.T).tocsr()


@settings(max_examples=80, deadline=None)
@given(_graphs())
def test_endpoint_bfs_counts_match_all_pairs_distances(g):
    from scipy.sparse import csgraph

    from analysis import _metrics as m

    N, edges, ep = g
    A = _matrix(N, edges)
    D = csgraph.shortest_path(A, unweighted=True, indices=ep)[:, ep] if len(ep) else np.zeros((0, 0))
    connected = np.isfinite(D).all()
    want = np.bincount(D.astype(np.int64).ravel(), minlength=1) if connected else None
    if want is not None:
        want[0] = 0
    got = m._bfs_counts(A, ep)
    Af = A.copy()
    Af.data[:] = 1
    Ac, a, c = m._fold_leaves(Af.tocsr(), ep)
    src = np.flatnonzero(a + c > 0)
    ways = [got]
    if len(src) >= 2:
        start = np.zeros(2, dtype=np.int64)
        start = m._add(start, 2, int((a * (a - 1)).sum()))
        start = m._add(start, 1, int((2 * a * c).sum()))
        ways += [m._bitset_counts(Ac, src, a, c, start.copy()),
                 m._per_source_counts(Ac, src, a, c, start.copy())]
    for w in ways:
        if want is None:
            assert w is None
            continue
        assert w is not None
        k = max(len(w), len(want))
        np.testing.assert_array_equal(np.pad(w, (0, k - len(w))), np.pad(want, (0, k - len(want))))


def test_dragonfly_endpoints_are_not_all_alike():
    """Why a dragonfly's hops take no one-BFS shortcut (as a Clos's do): its endpoints see
    different distances. (They are its routed hops since session 26: a closed form per group
    pair, fabric.Router.hop_counts.)"""
    from scipy.sparse import csgraph

    from analysis._metrics import _adjacency

    f = topologies.build("dragonfly:h=2")
    ep = f.endpoint_indices
    D = csgraph.shortest_path(_adjacency(f), unweighted=True, indices=ep)[:, ep]
    rows = {tuple(np.bincount(r.astype(np.int64), minlength=8)) for r in D}
    assert len(rows) > 1


# -- dragonfly minimal routes in closed form ----------------------------------------------


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 3), st.integers(1, 6), st.integers(1, 3), st.integers(0, 2**32 - 1))
def test_dragonfly_routes_match_the_general_engine(h, a, p, seed):
    try:
        f = topologies.build(f"dragonfly:h={h},a={a},p={p}")
    except SpecError:
        assume(False)
    fast = Router(f)
    assert fast._df is not None
    ref = Router(f)
    ref._df = None  # the general engine over the minimal-routing state graph
    # hop counts over every ordered pair of chips: the closed form per group pair
    # (Router.hop_counts) is the general engine's count (cofabric metrics' mean hops)
    assert fast.hop_counts().tolist() == ref.hop_counts().tolist()
    assert fast.hop_counts().sum() == f.n_endpoints * (f.n_endpoints - 1)
    rng = np.random.default_rng(seed)
    N = len(f.nodes)
    s, d = rng.integers(0, N, 60), rng.integers(0, N, 60)
    w = rng.random(60)
    _same(fast.loads(s, d, w), ref.loads(s, d, w))
    g = rng.integers(0, 3, 60)
    _same(fast.loads_grouped(s, d, w, g, 3), ref.loads_grouped(s, d, w, g, 3))
    np.testing.assert_array_equal(fast.hops(s, d), ref.hops(s, d))
    _same(fast.latency(s, d), ref.latency(s, d))
    np.testing.assert_array_equal(fast.bottleneck(s, d), ref.bottleneck(s, d))
    np.testing.assert_array_equal(fast.path_links_many(s, d), ref.path_links_many(s, d))
    assert fast.path_links(s[0], d[0]) == ref.path_links(s[0], d[0])


def test_dragonfly_routes_refuse_a_degraded_fabric():
    f = topologies.build("dragonfly:h=2")
    assert f.router._df is not None
    assert f.without(links=[("r0.0", "r0.1")]).router._df is None


# -- edge arrays in bulk ------------------------------------------------------------------


def _naive_edge_arrays(f):
    idx = f.node_index
    rows = [(idx[a], idx[b], d["bandwidth"], d["latency"], d.get("lanes", 1), d.get("tech") or "",
             d.get("carries") or "") for a, b, d in f.graph.edges(data=True)]
    return [np.array([r[k] for r in rows]) for k in range(7)] if rows else None


@pytest.mark.parametrize("spec", ["torus:3x4", "hypermesh:3x4x2,connect=full/ring/switch",
                                  "fattree:k=4", "rail:servers=4,gpus=2,spines=2",
                                  "switch:5,planes=3", "dragonfly:h=2", "sd200-ultra",
                                  "dgx-h100"])
def test_edge_arrays_follow_the_graph_edge_order(spec):
    f = topologies.build(spec)
    for g in (f, f.without(links=[list(f.graph.edges)[len(f.graph.edges) // 2][:2]])):
        e = g.edge_arrays
        want = _naive_edge_arrays(g)
        for got, ref in zip(e, want):
            np.testing.assert_array_equal(np.asarray(got), ref)


def test_edge_arrays_of_a_user_graph_in_its_own_node_order():
    import networkx as nx

    from fabric import Fabric

    G = nx.Graph()
    G.add_nodes_from(["z", "a", "m", "b"], kind="chip")
    G.add_edge("m", "z", bandwidth=2.0, latency=1e-9, tech="x")
    G.add_edge("b", "a", bandwidth=3.0, latency=2e-9, lanes=2)
    G.add_edge("a", "z", bandwidth=4.0, latency=3e-9)
    G.add_edge("m", "b", bandwidth=5.0, latency=4e-9)
    f = Fabric.from_graph(G)
    e = f.edge_arrays
    for got, ref in zip(e, _naive_edge_arrays(f)):
        np.testing.assert_array_equal(np.asarray(got), ref)


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 12), st.lists(st.tuples(st.integers(0, 11), st.integers(0, 11),
                                              st.integers(0, 2)), max_size=40))
def test_bulk_links_make_the_graph_networkx_makes(n, edges):
    import networkx as nx

    from topologies._common import add_links

    edges = [(a % n, b % n, c) for a, b, c in edges]
    names = [f"x{(7 * i) % 13}" for i in range(n)]  # node order unlike name order
    attrs = [{"bandwidth": 1.0 + c, "latency": 2.0, "lanes": c + 1} for c in range(3)]
    ref = nx.Graph()
    ref.add_nodes_from(names, kind="chip")
    for a, b, c in edges:
        ref.add_edge(names[a], names[b], **attrs[c])
    G = nx.Graph()
    G.add_nodes_from(names, kind="chip")
    add_links(G, names, [e[0] for e in edges], [e[1] for e in edges], attrs,
              [e[2] for e in edges])
    assert list(G.edges(data=True)) == list(ref.edges(data=True))
    assert [list(G.adj[x]) for x in G] == [list(ref.adj[x]) for x in ref]


def _graph_view(G):
    return (list(G.nodes(data=True)), [(u, v, dict(d)) for u, v, d in G.edges(data=True)],
            [list(G.adj[n]) for n in G])


@pytest.mark.parametrize("k", [2, 4, 6])
def test_fat_tree_in_bulk_is_the_per_edge_graph(k):
    import networkx as nx

    f = topologies.build(f"fattree:k={k}")
    h, n = k // 2, k**3 // 4
    attrs = dict(next(iter(f.graph.edges(data=True)))[2])
    G = nx.Graph()
    G.add_nodes_from(f.graph.nodes(data=True))
    G.add_edges_from(((f"chip{r}", f"edge{r // (h * h)}.{(r % (h * h)) // h}") for r in range(n)),
                     **attrs)
    G.add_edges_from(((f"edge{p}.{i}", f"agg{p}.{j}")
                      for p in range(k) for i in range(h) for j in range(h)), **attrs)
    G.add_edges_from(((f"agg{p}.{i}", f"core{i * h + j}")
                      for p in range(k) for i in range(h) for j in range(h)), **attrs)
    assert _graph_view(f.graph) == _graph_view(G)


@pytest.mark.parametrize("h,a,p", [(1, 2, 1), (2, 4, 2), (3, 4, 2), (2, 3, 1)])
def test_dragonfly_in_bulk_is_the_per_edge_graph(h, a, p):
    import networkx as nx

    f = topologies.build(f"dragonfly:h={h},a={a},p={p}")
    groups, n = a * h + 1, (a * h + 1) * a * p
    attrs = dict(f.graph.edges["chip0", "r0.0"])
    G = nx.Graph()
    G.add_nodes_from(f.graph.nodes(data=True))
    routers = [[f"r{g}.{i}" for i in range(a)] for g in range(groups)]
    G.add_edges_from(((f"chip{r}", routers[r // (a * p)][(r // p) % a]) for r in range(n)),
                     **attrs)
    for g in range(groups):
        G.add_edges_from(((routers[g][i], routers[g][j])
                          for i in range(a) for j in range(i + 1, a)), **attrs)
    for g in range(groups):
        for port in range(a * h):
            other = port if port < g else port + 1
            if other > g:
                G.add_edge(routers[g][port // h], routers[other][g // h], **attrs)
    assert _graph_view(f.graph) == _graph_view(G)
