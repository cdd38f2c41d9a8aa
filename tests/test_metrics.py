"""Structural metrics against closed forms (docs/sources.md s.4) and brute force (networkx)."""

import itertools
import math

import networkx as nx
import numpy as np
import pytest
from routing_brute import policy_distances

import topologies
from analysis import bisection, hop_distribution, metrics
from fabric import Fabric


def _brute_hops(f):
    """Mean and max hops over distinct ordered endpoint pairs along the routed paths: by
    networkx's shortest paths, or on a dragonfly (minimal routing: one global link at most)
    by a search over (node, global links taken) pairs (routing_brute.policy_distances)."""
    total, worst, pairs = 0, 0, 0
    for s in f.endpoints:
        dist = (policy_distances(f, s, "minimal") if f.router.policy == "minimal" else
                nx.single_source_shortest_path_length(f.graph, s))
        for t in f.endpoints:
            if t != s:
                total += dist[t]
                worst = max(worst, dist[t])
                pairs += 1
    return total / pairs, worst


@pytest.mark.parametrize("spec", [
    "torus:3x4", "torus:5x2x3", "mesh:3x4", "hypermesh:3x4", "hypermesh:4x3,connect=switch",
    "hypermesh:3x4x2,connect=full/ring/line", "fattree:k=4", "fattree:k=6", "leafspine:k=6",
    "leafspine:k=8,over=3", "rail:servers=3,gpus=4", "switch:6,planes=3", "dragonfly:h=1",
    "dragonfly:h=2",
])
def test_hops_against_brute_force(spec):
    f = topologies.build(spec)
    m = metrics(f)
    mean, worst = _brute_hops(f)
    assert m.avg_hops == pytest.approx(mean, rel=1e-12)
    assert m.diameter == worst


@pytest.mark.parametrize("k, n", [(4, 2), (6, 3), (5, 3), (3, 4), (8, 2)])
def test_torus_closed_forms(k, n):
    N = k**n
    m = metrics(topologies.torus((k,) * n))
    assert m.diameter == n * (k // 2)
    mean_incl = n * k / 4 if k % 2 == 0 else n * (k * k - 1) / (4 * k)
    assert m.avg_hops == pytest.approx(mean_incl * N / (N - 1), rel=1e-12)
    assert m.links == n * N
    if k % 2 == 0:
        assert m.bisection_links == 2 * k ** (n - 1) and m.bisection_exact


@pytest.mark.parametrize("k, n", [(4, 2), (6, 3), (2, 3)])
def test_mesh_closed_forms(k, n):
    m = metrics(topologies.mesh((k,) * n))
    assert m.diameter == n * (k - 1)
    assert m.bisection_links == k ** (n - 1)


@pytest.mark.parametrize("shape, K", [((4, 6), 1), ((2, 4, 6), 2), ((8, 4, 4), 1)])
def test_hyperx_closed_forms(shape, K):
    N = math.prod(shape)
    m = metrics(topologies.hypermesh(shape, "full", links=K))
    assert m.diameter == sum(1 for s in shape if s > 1)
    mean_incl = sum((s - 1) / s for s in shape)
    assert m.avg_hops == pytest.approx(mean_incl * N / (N - 1), rel=1e-12)
    assert m.bisection_links == min(K * (s // 2) ** 2 * N // s for s in shape if s % 2 == 0)


@pytest.mark.parametrize("k", [4, 6, 8, 12])
def test_fat_tree_closed_forms(k):
    m = metrics(topologies.fat_tree(k))
    N = k**3 // 4
    assert (m.endpoints, m.switches, m.links) == (N, 5 * k * k // 4, 3 * k**3 // 4)
    assert m.diameter == 6
    assert m.bisection_links == k**3 // 8
    assert m.bisection_bandwidth == pytest.approx(k**3 / 8 * 50e9)
    same_edge, same_pod = k // 2 - 1, k * k // 4 - k // 2
    other = N - k * k // 4
    assert m.avg_hops == pytest.approx((2 * same_edge + 4 * same_pod + 6 * other) / (N - 1))


def test_leaf_spine_full_bisection():
    m = metrics(topologies.leaf_spine(8))
    assert m.bisection_links == m.endpoints // 2


def _brute_bisection(f):
    """Minimum balanced endpoint cut over every split, switches placed by brute force too."""
    eps = list(f.endpoints)
    others = [n for n in f.graph if n not in set(eps)]
    best = None
    for chosen in itertools.combinations(eps[1:], len(eps) // 2 - 1):
        a = {eps[0], *chosen}
        for bits in itertools.product((0, 1), repeat=len(others)):
            side = a | {o for o, b in zip(others, bits) if b}
            cut = sum(d["lanes"] for u, v, d in f.graph.edges(data=True)
                      if (u in side) != (v in side))
            best = cut if best is None else min(best, cut)
    return best


@pytest.mark.parametrize("spec", ["torus:4x2", "mesh:2x4", "hypermesh:2x4", "fattree:k=2",
                                  "switch:4,planes=2", "leafspine:k=4"])
def test_bisection_against_brute_force(spec):
    f = topologies.build(spec)
    links, _, exact, _ = bisection(f)
    truth = _brute_bisection(f)
    assert links >= truth  # a cut is never below the minimum
    if exact:
        assert links == truth


def test_bisection_picks_the_slow_hop_for_bandwidth():
    # In cluster-128 the fewest-links cut and the least-bandwidth cut differ only in which
    # hop of the NIC path they cross; bandwidth must be the NIC links' (50 GB/s each).
    m = metrics(topologies.build("cluster-128"))
    assert m.bisection_links == 64
    assert m.bisection_bandwidth == pytest.approx(64 * 50e9)


def test_user_graph_uses_bfs_and_spectral_cut():
    G = nx.petersen_graph()
    nx.set_node_attributes(G, "chip", "kind")
    nx.set_edge_attributes(G, 1e9, "bandwidth")
    nx.set_edge_attributes(G, 1e-7, "latency")
    m = metrics(Fabric.from_graph(G))
    assert m.diameter == 2
    assert m.avg_hops == pytest.approx(nx.average_shortest_path_length(G))
    assert m.hops_method == "exact: BFS from every endpoint"
    assert not m.bisection_exact and m.bisection_method == "spectral cut"
    assert m.bisection_links >= _brute_bisection(Fabric.from_graph(G))


def test_hop_distribution_counts_every_ordered_pair():
    f = topologies.build("hypermesh:4x3,connect=full/line")
    counts, _ = hop_distribution(f)
    assert counts.sum() == 12 * 11 and counts[0] == 0


def test_injection_and_ports():
    m = metrics(topologies.build("sd200-ultra"))
    assert m.injection_bandwidth == pytest.approx(13 * 64e9)
    assert m.ports == 2 * m.links and m.switch_ports == 0
    m = metrics(topologies.build("nvl72"))
    assert m.switch_ports == 72 * 18 and m.injection_bandwidth == pytest.approx(900e9)


def test_metrics_are_deterministic():
    f = topologies.build("dragonfly:h=2")
    assert metrics(f) == metrics(topologies.build("dragonfly:h=2"))
    assert np.array_equal(hop_distribution(f)[0], hop_distribution(f)[0])
