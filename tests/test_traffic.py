"""Traffic matrices, link loads and drain time."""

import numpy as np
import pytest

import topologies
from analysis import TRAFFIC, TrafficMatrix, link_loads, traffic
from fabric import NodeError


@pytest.mark.parametrize("n", [2, 5, 16])
def test_all_to_all(n):
    m = traffic(n, "all-to-all", 3.0)
    D = m.dense()
    assert D.shape == (n, n) and (np.diag(D) == 0).all()
    assert (D[~np.eye(n, dtype=bool)] == 3.0).all()
    assert m.total == 3.0 * n * (n - 1)
    np.testing.assert_array_equal(m.rows(1, 2), D[1:2])


def test_permutation_is_a_seeded_permutation():
    a = traffic(32, "permutation", 1.0, seed=4).dense()
    b = traffic(32, "permutation", 1.0, seed=4).dense()
    c = traffic(32, "permutation", 1.0, seed=5).dense()
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    p = np.random.default_rng(4).permutation(32)
    fixed = p == np.arange(32)
    assert (a.sum(axis=1) == np.where(fixed, 0, 1)).all()
    assert (a.sum(axis=0) <= 1).all()


def test_shift_and_hotspot():
    s = traffic(6, "shift", 2.0, shift=-1).dense()
    assert s[0, 5] == 2.0 and s.sum() == 12.0
    h = traffic(8, "hotspot", 10.0, hot=[3], fraction=0.5).dense()
    np.testing.assert_allclose(h.sum(axis=1), 10.0)
    assert h[0, 3] == pytest.approx(5.0 + 5.0 / 7)
    assert h[3, 0] == pytest.approx(10.0 / 7)
    np.testing.assert_allclose(traffic(4, "hotspot", 6.0, hot=[1]).dense().sum(axis=1), 6.0)


def test_moe_counts_and_skew():
    n, E, k, tok = 8, 32, 4, 200
    m = traffic(n, "moe", 2.0, experts=E, top_k=k, tokens=tok, seed=3).dense()
    # each token reaches k distinct experts; those on its own rank move nothing
    assert m.sum() <= n * tok * k * 2.0
    assert np.all(m.sum(axis=1) <= tok * k * 2.0)
    flat = traffic(n, "moe", 1.0, experts=E, top_k=k, tokens=tok, skew=0.0, seed=3).dense()
    hot = traffic(n, "moe", 1.0, experts=E, top_k=k, tokens=tok, skew=2.0, seed=3).dense()
    # with skew experts 0, 8, 16, 24 (rank 0, round-robin) draw the most tokens
    assert hot.sum(axis=0)[0] > flat.sum(axis=0)[0]
    assert hot.sum(axis=0).std() > flat.sum(axis=0).std()
    # with uniform choice, expected bytes per token off-rank: k * (1 - 1/n) (E % n == 0)
    assert flat.sum() / (n * tok) == pytest.approx(k * (1 - 1 / n), rel=0.05)


def test_bad_traffic():
    with pytest.raises(ValueError, match="unknown traffic 'tornado'"):
        traffic(4, "tornado")
    with pytest.raises(ValueError, match="nbytes must be"):
        traffic(4, "all-to-all", -1)
    with pytest.raises(ValueError, match="top_k=9 must not exceed experts=8"):
        traffic(4, "moe", experts=8, top_k=9)
    with pytest.raises(NodeError, match="hot ranks"):
        traffic(4, "hotspot", hot=[7])
    with pytest.raises(ValueError, match="at least 2 endpoints"):
        traffic(1, "all-to-all")
    assert set(TRAFFIC) == {"all-to-all", "permutation", "shift", "hotspot", "moe"}


@pytest.mark.parametrize("spec", ["torus:4x3", "fattree:k=4", "rail:servers=2,gpus=4,spines=2",
                                  "hypermesh:4x2,connect=full/switch", "dragonfly:h=1"])
@pytest.mark.parametrize("name", ["all-to-all", "permutation", "moe"])
def test_link_loads_equal_pairwise_routing(spec, name):
    f = topologies.build(spec)
    t = traffic(f, name, 5.0, seed=2, experts=2 * f.n_endpoints, top_k=2, tokens=7)
    ll = link_loads(f, t)
    D = t.dense()
    ep = f.endpoint_indices
    i, j = np.nonzero(D)
    want = f.router.loads(ep[i], ep[j], D[i, j])
    np.testing.assert_allclose(ll.loads, want, rtol=1e-12, atol=1e-9)
    r = f.router
    np.testing.assert_allclose(ll.link_time, want / r.link_bandwidth)
    inj_bw = np.array([sum(d["bandwidth"] for _, _, d in f.graph.edges(n, data=True))
                       for n in f.endpoints])
    np.testing.assert_allclose(ll.injection_time, D.sum(axis=1) / inj_bw)
    assert ll.drain_time == pytest.approx(max(ll.link_time.max(), ll.injection_time.max(),
                                              ll.ejection_time.max()))


def test_drain_time_by_hand():
    # 4x4 torus, 1000 B per pair: 16 sources x 32 hops x 1000 B spread evenly on 64 links
    f = topologies.build("torus:4x4")
    ll = link_loads(f, traffic(f, "all-to-all", 1000.0))
    assert ll.max_load == 8000.0 and ll.loads.min() == 8000.0
    assert ll.drain_time == pytest.approx(8000 / 64e9)
    assert ll.bottleneck[0] == "link"
    # a star of 8 chips on one switch: every chip injects 7 x 1000 B on its 64 GB/s link
    g = topologies.build("switch:8,planes=1,tech=pcie5-x16")
    lg = link_loads(g, traffic(g, "all-to-all", 1000.0))
    assert lg.drain_time == pytest.approx(7000 / 64e9)


def test_link_loads_accepts_arrays_and_checks_shape():
    f = topologies.build("torus:3x3")
    M = np.ones((9, 9))
    assert link_loads(f, M).loads.sum() == link_loads(f, TrafficMatrix("u", 9, fill=1.0)).loads.sum()
    with pytest.raises(ValueError, match="9 x 9"):
        link_loads(f, np.ones((4, 4)))
    with pytest.raises(ValueError, match=">= 0"):
        link_loads(f, -M)
    with pytest.raises(ValueError, match="for 4 ranks"):
        link_loads(f, traffic(4, "all-to-all"))


def test_failure_cost_rows():
    from analysis import failure_cost

    f = topologies.build("torus:4x4")
    c = failure_cost(f, links=["chip0-chip1"], with_throughput=True, label="one link")
    rows = c.rows()
    assert [r["metric"] for r in rows] == ["drain_time", "throughput", "mean_latency",
                                          "max_latency"]
    assert all(r["system"] == "torus:4x4" and r["failure"] == "one link" for r in rows)
    by = {r["metric"]: r for r in rows}
    assert by["drain_time"]["change"] > 0 and by["throughput"]["change"] < 0
    assert by["throughput"]["before"] == pytest.approx(8e9)
    g = failure_cost(f, chips=[5])
    assert g.failure == "without 1 node" and g.throughput is None
