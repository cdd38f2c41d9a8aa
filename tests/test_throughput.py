"""Max-concurrent-flow throughput: closed forms, bisection bound, an independent LP."""

import itertools

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

import topologies
from analysis import bisection_bound, throughput, traffic


@pytest.mark.parametrize("spec", ["torus:4x4", "torus:6x4", "torus:6x6", "torus:4x4x2"])
def test_all_to_all_on_a_torus_meets_the_bisection_bound(spec):
    f = topologies.build(spec)
    res = throughput(f, traffic(f, "all-to-all", 1.0))
    # Jyothi et al., SC16: uniform all-to-all on a k-ary torus equals its bisection bound
    assert res.k == pytest.approx(bisection_bound(f, 1.0), rel=1e-6)
    assert res.time == pytest.approx(1 / res.k)


def test_fat_tree_is_host_limited():
    # full bisection: each host sends (n - 1) B over its 50 GB/s link, K = 50e9 / (n - 1)
    f = topologies.build("fattree:k=4")
    res = throughput(f, traffic(f, "all-to-all", 1.0))
    assert res.k == pytest.approx(50e9 / 15, rel=1e-6)
    assert throughput(f, traffic(f, "all-to-all", 1.0), method="lp").commodities == 8
    assert res.link_utilization.max() == pytest.approx(1.0, rel=1e-6)


def test_oversubscribed_leaf_spine_is_uplink_limited():
    # leafspine k=4, over=3: 3 hosts and 1 uplink per leaf; 4 leaves, 12 hosts.
    # each leaf sends 3 x 9 B off-leaf over one 50 GB/s uplink: K = 50e9 / 27
    f = topologies.build("leafspine:k=4,over=3")
    res = throughput(f, traffic(f, "all-to-all", 1.0))
    assert res.k == pytest.approx(50e9 / 27, rel=1e-6)


def _naive_lp(f, M):
    """One commodity per (source, destination) pair, no folding: an independent check."""
    r = f.router
    N, L = len(f.nodes), r.n_links
    ep = f.endpoint_indices
    pairs = [(i, j) for i, j in itertools.product(range(len(ep)), repeat=2) if M[i, j] > 0]
    P = len(pairs)
    nvar = P * L + 1
    rows, cols, vals = [], [], []
    b_rows = []
    for c, (i, j) in enumerate(pairs):
        for e in range(L):
            rows += [c * N + r.link_tail[e], c * N + r.link_head[e]]
            cols += [c * L + e, c * L + e]
            vals += [1.0, -1.0]
        rows += [c * N + ep[i], c * N + ep[j]]
        cols += [nvar - 1, nvar - 1]
        vals += [-M[i, j], M[i, j]]
        b_rows.append(c)
    A_eq = sp.csr_matrix((vals, (rows, cols)), shape=(P * N, nvar))
    A_ub = sp.hstack([sp.hstack([sp.identity(L)] * P), sp.csr_matrix((L, 1))])
    cost = np.zeros(nvar)
    cost[-1] = -1
    scale = r.link_bandwidth.max()
    res = linprog(cost, A_ub=A_ub, b_ub=r.link_bandwidth / scale, A_eq=A_eq,
                  b_eq=np.zeros(P * N), bounds=(0, None), method="highs")
    return res.x[-1] * scale


@pytest.mark.parametrize("spec", ["mesh:3x2", "rail:servers=2,gpus=2,spines=1", "switch:4,planes=2"])
def test_aggregated_lp_equals_the_per_pair_lp(spec):
    f = topologies.build(spec)
    n = f.n_endpoints
    M = np.random.default_rng(11).integers(0, 5, size=(n, n)).astype(float)
    np.fill_diagonal(M, 0)
    assert throughput(f, M).k == pytest.approx(_naive_lp(f, M), rel=1e-6)


def test_degraded_and_bad_input():
    f = topologies.build("torus:4x4")
    t = traffic(f, "all-to-all", 1.0)
    assert throughput(f.without(links=[("chip0", "chip1")]), t).k < throughput(f, t).k
    with pytest.raises(ValueError, match="max_variables"):
        throughput(f, t, max_variables=100, method="lp")
    with pytest.raises(ValueError, match="no bytes"):
        throughput(f, np.zeros((16, 16)))
    with pytest.raises(ValueError, match="16 x 16"):
        throughput(f, np.ones((3, 3)))
    with pytest.raises(ValueError, match="tori"):
        bisection_bound(topologies.build("fattree:k=4"))


@pytest.mark.parametrize("spec", ["torus:4x3", "torus:4x2x3", "hypermesh:3x3", "dgx-h100",
                                  "switch:6,planes=3", "fattree:k=4", "leafspine:k=4,over=3",
                                  "rail:servers=4,gpus=2,spines=2",
                                  "hypermesh:4x2x2,connect=full/ring/full"])
def test_symmetric_reduction_equals_the_general_lp(spec):
    f = topologies.build(spec)
    t = traffic(f, "all-to-all", 3.0)
    sym = throughput(f, t)
    assert sym.method == "symmetric" and sym.commodities == 1
    lp = throughput(f, t, method="lp")
    assert lp.method == "lp"
    assert sym.k == pytest.approx(lp.k, rel=1e-6)


def test_symmetric_needs_uniform_traffic_on_an_intact_grid():
    f = topologies.build("torus:4x4")
    with pytest.raises(ValueError, match="symmetric"):
        throughput(f, traffic(f, "shift", 1.0), method="symmetric")
    g = f.without(links=["chip0-chip1"])
    assert throughput(g, traffic(g, "all-to-all", 1.0)).method == "lp"


# -- column generation ("paths") against the link formulation ---------------------------------

def _random_fabric(seed, n_sw, extra, leaves, doubles, n_fail):
    """A connected random graph of switches with chips on them (some on two switches)."""
    import networkx as nx

    from fabric import Fabric

    rng = np.random.default_rng(seed)
    G = nx.Graph()
    sw = [f"s{i}" for i in range(n_sw)]
    G.add_nodes_from(sw, kind="switch")
    for i in range(1, n_sw):  # a random tree, then extra links
        G.add_edge(sw[i], sw[int(rng.integers(i))])
    for _ in range(extra):
        a, b = rng.choice(n_sw, 2, replace=False)
        G.add_edge(sw[a], sw[b])
    chips = [f"c{i}" for i in range(leaves + doubles)]
    G.add_nodes_from(chips, kind="chip")
    for i, c in enumerate(chips):
        for s in rng.choice(n_sw, 1 if i < leaves else 2, replace=False):
            G.add_edge(c, sw[s])
    for e in G.edges:
        G.edges[e]["bandwidth"] = float(rng.choice([25e9, 50e9, 100e9]))
        G.edges[e]["latency"] = 1e-7
    f = Fabric.from_graph(G)
    if n_fail:
        links = [e for e in G.edges if e[0].startswith("s") and e[1].startswith("s")]
        pick = rng.choice(len(links), min(n_fail, len(links)), replace=False)
        f = f.without(links=[links[int(i)] for i in pick])
    return f


@settings(max_examples=25)
@given(seed=st.integers(0, 2**31), n_sw=st.integers(2, 6), extra=st.integers(0, 5),
       leaves=st.integers(2, 5), doubles=st.integers(0, 2), n_fail=st.integers(0, 2),
       uniform=st.booleans())
def test_column_generation_equals_the_link_lp(seed, n_sw, extra, leaves, doubles, n_fail,
                                              uniform):
    from fabric import FabricError

    f = _random_fabric(seed, n_sw, extra, leaves, doubles, n_fail)
    n = f.n_endpoints
    if uniform:
        M = traffic(f, "all-to-all", 2.0)
    else:
        rng = np.random.default_rng(seed + 1)
        M = rng.integers(0, 4, size=(n, n)) * (rng.random((n, n)) < 0.5).astype(float)
        np.fill_diagonal(M, 0)
        M[0, -1] += 1.0  # never empty
    try:
        ref = throughput(f, M, method="lp")
    except FabricError:  # a failure cut a pair with demand off: both must say so
        with pytest.raises(FabricError, match="no path"):
            throughput(f, M, method="paths")
        return
    got = throughput(f, M, method="paths")
    assert got.method == "paths"
    assert got.k == pytest.approx(ref.k, rel=1e-6)
    # the flows found carry K within every link's bandwidth
    assert got.link_utilization.max() <= 1 + 1e-6


@pytest.mark.parametrize("spec", ["dragonfly:h=1", "fattree:k=4", "torus:4x4", "mesh:3x2",
                                  "switch:4"])
def test_column_generation_on_builders_and_degraded_copies(spec):
    f = topologies.build(spec)
    fabrics = [f]
    if spec != "switch:4":
        a, b = next((u, v) for u, v in f.graph.edges
                    if f.graph.degree(u) > 1 and f.graph.degree(v) > 1)
        fabrics.append(f.without(links=[(a, b)]))
    for g in fabrics:
        for name in ("all-to-all", "permutation"):
            t = traffic(g, name, 1.0)
            assert throughput(g, t, method="paths").k == pytest.approx(
                throughput(g, t, method="lp").k, rel=1e-6)


def test_auto_uses_column_generation_above_the_link_lp_size():
    # dragonfly:h=5 (2,550 endpoints) folds to 510 routers x 7,140 directed router links:
    # 3.6 M link-LP variables, above what the link formulation takes (refused before)
    f = topologies.build("dragonfly:h=5")
    t = traffic(f, "all-to-all", 1.0)
    res = throughput(f, t)
    assert res.method == "paths"
    # the chips' own links bind: each sends 2,549 B over 50 GB/s (minimal routing loads a
    # global link with (a p)^2 = 2,500 B and a local one with 2 p^2 h + p^2 = 2,525 B)
    assert res.k == pytest.approx(50e9 / 2549, rel=1e-9)
    assert res.link_utilization.max() == pytest.approx(1.0, rel=1e-9)
    with pytest.raises(ValueError, match="max_variables"):
        throughput(f, t, max_variables=10_000)
    with pytest.raises(ValueError, match="max_variables"):
        throughput(f, t, method="lp")


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**31), n_sw=st.integers(2, 6), extra=st.integers(0, 5),
       leaves=st.integers(2, 6), doubles=st.integers(0, 2), n_fail=st.integers(0, 2),
       perm=st.booleans(), per_pair=st.booleans())
def test_column_generation_by_pair_paths_equals_the_link_lp(seed, n_sw, extra, leaves, doubles,
                                                            n_fail, perm, per_pair):
    """Sparse traffic (a permutation, or a few random pairs) priced per (source, destination)
    pair and per source (trees), degraded fabrics included: the link LP's K either way."""
    import analysis._throughput as T
    from fabric import FabricError

    f = _random_fabric(seed, n_sw, extra, leaves, doubles, n_fail)
    n = f.n_endpoints
    rng = np.random.default_rng(seed + 2)
    if perm:
        M = traffic(f, "permutation", 3.0, seed=seed % 1000).dense()
    else:
        M = np.zeros((n, n))
        for _ in range(n):
            a, b = rng.choice(n, 2, replace=False)
            M[a, b] += float(rng.integers(1, 4))
    if not M.any():
        M[0, -1] = 1.0
    try:
        ref = throughput(f, M, method="lp")
    except FabricError:
        with pytest.raises(FabricError, match="no path"):
            throughput(f, M, method="paths")
        return
    saved = T._PAIR_COLUMNS
    T._PAIR_COLUMNS = n * n if per_pair else 0
    try:
        got = throughput(f, M, method="paths")
    finally:
        T._PAIR_COLUMNS = saved
    assert got.k == pytest.approx(ref.k, rel=1e-6)
    assert got.link_utilization.max() <= 1 + 1e-6
