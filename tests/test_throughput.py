"""Max-concurrent-flow throughput: closed forms, bisection bound, an independent LP."""

import itertools

import numpy as np
import pytest
import scipy.sparse as sp
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
