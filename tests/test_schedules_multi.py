"""Multi-ring, concurrent multi-dimensional and Swing: closed forms, validity, bounds."""

import itertools
import math

import networkx as nx
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import topologies
from analysis import NotApplicableError, cost, ring_search, schedule, throughput, traffic
from fabric import Fabric
from fabric import transport as get_transport

GiB = 2 ** 30
NEW = ("multi-ring", "multi-dimensional", "multi-dimensional-pipelined", "swing")


def _check_rings(G_adj, rings, p):
    used = set()
    for ring in rings:
        assert sorted(ring.tolist()) == list(range(p))          # Hamiltonian
        for a, b in zip(ring, np.roll(ring, -1)):
            e = frozenset((int(a), int(b)))
            assert int(b) in G_adj[int(a)]                       # a real link
            assert e not in used                                 # edge-disjoint
            used.add(e)


def _adj(f):
    pos = {n: i for i, n in enumerate(f.endpoints)}
    return [{pos[m] for m in f.graph[n] if m in pos} for n in f.endpoints]


@pytest.mark.parametrize("spec, k", [("torus:4x4", 2), ("torus:4x4x4", 3),
                                     ("sd200-ultra", 6), ("hypermesh:4x4x8", 6),
                                     ("torus:6x6x6", 3), ("torus:4x4x4x4", 4)])
def test_ring_search_finds_edge_disjoint_hamiltonian_cycles(spec, k):
    f = topologies.build(spec)
    rings = ring_search(f)
    assert len(rings) == k
    _check_rings(_adj(f), rings, f.n_endpoints)
    assert all(r[0] == r.min() for r in rings)
    again = ring_search(f)
    assert all((a == b).all() for a, b in zip(rings, again))   # deterministic


def test_ring_search_on_a_degraded_fabric_avoids_the_failed_link():
    f = topologies.build("torus:4x4x4")
    u, v = next(iter(f.graph.edges()))
    g = f.without(links=[(u, v)])
    rings = ring_search(g)
    assert len(rings) >= 1
    _check_rings(_adj(g), rings, g.n_endpoints)


def test_ring_search_through_switches_is_one_ring_per_rank_of_a_host():
    f = topologies.build("cluster-128")
    rings = ring_search(f)
    assert len(rings) == 8                      # 8 GPUs (and NICs) per server
    leave = set()
    for ring in rings:
        assert sorted(ring.tolist()) == list(range(128))
        hosts = [f.host_of[f.endpoints[i]] for i in ring]
        assert sum(a != b for a, b in itertools.pairwise(hosts)) == 15   # leaves a host once
        leave.add(f.endpoints[ring[7]])             # the rank the first host is left from
    assert len(leave) == 8                      # each ring leaves from another GPU
    (one,) = ring_search(topologies.build("fattree:k=4"))
    assert sorted(one.tolist()) == list(range(16))


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n=st.integers(8, 24), d=st.sampled_from([3, 4, 6]), seed=st.integers(0, 50))
def test_ring_search_on_random_regular_graphs(n, d, seed):
    n += (n * d) % 2
    G = nx.random_regular_graph(d, n, seed=seed)
    nx.set_node_attributes(G, "chip", "kind")
    nx.set_edge_attributes(G, 1e9, "bandwidth")
    nx.set_edge_attributes(G, 1e-6, "latency")
    f = Fabric.from_graph(G)
    rings = ring_search(f)
    adj = _adj(f)
    assert 1 <= len(rings) <= d // 2
    direct = all(int(b) in adj[int(a)] for a, b in zip(rings[0], np.roll(rings[0], -1)))
    if direct:
        _check_rings(adj, rings, n)
    else:  # no Hamiltonian cycle found: one ring over every rank, in locality order
        assert len(rings) == 1 and sorted(rings[0].tolist()) == list(range(n))


def _alpha_beta(f):
    tr = get_transport("loadstore")
    lat = min(d["latency"] for _, _, d in f.graph.edges(data=True))
    bw = min(d["bandwidth"] for _, _, d in f.graph.edges(data=True))
    return lat + tr.per_message_overhead, bw * tr.max_payload / (tr.max_payload + tr.header)


@pytest.mark.parametrize("spec", ["torus:4x4x4", "torus:8x8", "torus:6x6x6"])
def test_multi_dimensional_on_a_torus_is_its_closed_form(spec):
    # D dimensions of s chips: D (s - 1) ring steps per half, each dimension carrying 1/D
    # of the data as a bidirectional ring: n (1 - 1/p) / (2 D B) per half
    f = topologies.build(spec)
    shape = f.params["shape"]
    D, s, p = len(shape), shape[0], f.n_endpoints
    alpha, B = _alpha_beta(f)
    n = float(GiB)
    half = D * (s - 1) * alpha + n * (1 - 1 / p) / (2 * D * B)
    for op, halves in (("all-reduce", 2), ("reduce-scatter", 1), ("all-gather", 1)):
        r = cost(f, op, n, algorithm="multi-dimensional", runtime="ideal")
        assert r.time == pytest.approx(halves * half, rel=1e-9)


@pytest.mark.parametrize("spec", ["hypermesh:4x4x4", "hypermesh:8x8"])
def test_multi_dimensional_on_hyperx_is_direct_per_dimension(spec):
    # one direct step per dimension and half; each rank's (s-1) links of a dimension carry
    # its 1/D of the data: n (1 - 1/p) / (D (s - 1) B) per half, the injection bound's bytes
    f = topologies.build(spec)
    shape = f.params["shape"]
    D, s, p = len(shape), shape[0], f.n_endpoints
    alpha, B = _alpha_beta(f)
    n = float(GiB)
    half = D * alpha + n * (1 - 1 / p) / (D * (s - 1) * B)
    r = cost(f, "all-reduce", n, algorithm="multi-dimensional", runtime="ideal")
    assert r.time == pytest.approx(2 * half, rel=1e-9)
    r = cost(f, "reduce-scatter", n, algorithm="multi-dimensional", runtime="ideal")
    assert r.time == pytest.approx(half, rel=1e-9)


def test_multi_ring_on_a_torus_is_k_rings_each_way():
    # 3 Hamiltonian cycles each way on 4x4x4: 6 directed rings share the data; each ring
    # step moves n / (6 p) over one link; 2 (p - 1) steps
    f = topologies.build("torus:4x4x4")
    alpha, B = _alpha_beta(f)
    p, n = 64, float(GiB)
    r = cost(f, "all-reduce", n, algorithm="multi-ring", runtime="ideal")
    assert r.time == pytest.approx(2 * (p - 1) * (alpha + n / (6 * p * B)), rel=1e-9)


def test_swing_peers_pair_up_and_send_rabenseifners_bytes():
    f = topologies.build("torus:8x4")
    s = schedule("all-reduce", "swing", 32, fabric=f)
    for step in s.steps:
        pairs = set(zip(step.src.tolist(), step.dst.tolist()))
        assert all((b, a) in pairs for a, b in pairs)            # exchanges
    assert s.bytes_sent(1.0) == pytest.approx(2 * 31 / 32)
    with pytest.raises(NotApplicableError, match="power of two"):
        schedule("all-reduce", "swing", 36, fabric=topologies.build("torus:6x6"))
    with pytest.raises(NotApplicableError, match="tori"):
        schedule("all-reduce", "swing", 128, fabric=topologies.build("sd200-ultra"))


@pytest.mark.parametrize("spec, says", [
    ("cluster-128", ("3-tier Clos network (16 servers of 8)", "through switches",
                     "not a torus")),
    ("nvl72", ("switched domain (every chip linked to 18 switch planes)", "not a torus")),
    ("dgx-h100", ("switched domain", "not a torus")),
    ("sd200-ultra", ("grid of 8x4x4 chips", "every dimension is all-to-all", "none a ring")),
    ("hypermesh:4x4,connect=ring/full", ("grid of 4x4 chips",
                                         "dimension 1 (4 chips) is all-to-all", "not a ring")),
    ("mesh:4x4", ("line without wrap-around",)),
])
def test_swing_says_why_a_fabric_is_not_a_torus(spec, says):
    # the reason the report's not-applicable table shows: what swing needs (a torus) and what
    # this fabric is instead, never the grid helper's internal labels ('host, hosts')
    f = topologies.build(spec)
    for fab in (f, f.without(links=[next(iter(f.graph.edges))])):     # degraded: same reason
        with pytest.raises(NotApplicableError) as e:
            cost(fab, "all-reduce", 2**20, algorithm="swing", runtime="ideal")
        msg = str(e.value)
        assert msg.startswith("swing runs on tori (a grid of chips whose every dimension is a "
                              "ring of direct links); " + spec)
        assert all(s in msg for s in says), msg
        assert "host, hosts" not in msg and "this algorithm" not in msg
    # a torus is accepted; part of one is refused by name
    t = topologies.build("torus:4x4")
    assert cost(t, "all-reduce", 2**20, algorithm="swing", runtime="ideal").time > 0
    with pytest.raises(NotApplicableError, match="^swing needs the whole 4x4 grid"):
        cost(t, "all-reduce", 2**20, algorithm="swing", runtime="ideal", ranks=t.endpoints[:8])


def test_new_algorithms_need_a_grid_or_a_fabric():
    with pytest.raises(NotApplicableError, match="needs a fabric"):
        schedule("all-reduce", "multi-dimensional", 8)
    f = topologies.build("nvl72")
    with pytest.raises(NotApplicableError, match="grid"):
        cost(f, "all-reduce", GiB, algorithm="multi-dimensional", ranks=range(3), runtime="ideal")


def test_all_to_all_bound_is_the_max_concurrent_flow():
    f = topologies.build("sd200-ultra")
    r = cost(f, "all-to-all", GiB, runtime="ideal")
    mcf = throughput(f, traffic(f, "all-to-all", GiB / 128)).time
    assert r.lower_bound >= mcf
    assert r.lower_bound == pytest.approx(mcf, rel=1e-3)      # plus one latency


def test_cluster_bound_is_the_host_cut():
    f = topologies.build("cluster-128")
    r = cost(f, "all-reduce", GiB, algorithm="ring", runtime="ideal")
    cut = 2 * 15 / 16 * GiB / (8 * 50e9)
    assert r.lower_bound >= cut and r.lower_bound == pytest.approx(cut, rel=1e-3)


def test_mesh_all_to_all_bound_is_its_bisection():
    # mesh 4x4x4 cut in the middle of one dimension: 16 links; 32 x 32 pairs of n/64 each
    # way: 16 n bytes over 16 links of B
    f = topologies.build("mesh:4x4x4")
    B = next(iter(f.graph.edges(data=True)))[2]["bandwidth"]
    r = cost(f, "all-to-all", GiB)
    assert r.lower_bound == pytest.approx(GiB / B, rel=1e-3)
    assert r.lower_bound >= GiB / B


@pytest.mark.parametrize("spec, op, target", [
    ("sd200-ultra", "all-reduce", 1.15), ("sd200-ultra", "all-to-all", 1.1),
    ("tpu-v4-cube", "all-reduce", 1.2), ("hypermesh:4x4x8", "all-reduce", 1.15),
    ("torus:4x4x8", "all-reduce", 1.2)])
def test_best_is_near_the_bound_at_1GiB(spec, op, target):
    r = cost(topologies.build(spec), op, GiB, runtime="ideal")
    assert r.time <= target * r.lower_bound


_SHAPES = st.lists(st.integers(2, 5), min_size=1, max_size=3)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(shape=_SHAPES, connect=st.sampled_from(["full", "ring", "line", "mixed"]),
       log_size=st.integers(4, 32), op=st.sampled_from(["all-reduce", "reduce-scatter",
                                                         "all-gather", "all-to-all",
                                                         "broadcast", "reduce"]))
def test_new_algorithms_never_beat_the_bound(shape, connect, log_size, op):
    if connect == "mixed":
        connect = tuple(("full", "ring", "line")[i % 3] for i in range(len(shape)))
    f = topologies.hypermesh(tuple(shape), connect)
    if f.n_endpoints < 2:
        return
    for a in NEW:
        try:
            r = cost(f, op, 2.0 ** log_size, algorithm=a, runtime="ideal")
        except NotApplicableError:
            continue
        assert r.time >= r.lower_bound * (1 - 1e-12)
        assert math.isfinite(r.time)


def test_auto_tries_every_transport_and_says_so():
    f = topologies.build("tpu-v4-cube")
    r = cost(f, "all-reduce", GiB, runtime="ideal")
    labels = [a for a, _ in r.candidates]
    # tpu-v4-cube has no NIC: no RDMA to offer (fabric.sends_messages), only load/store
    assert "swing" in labels and "swing over rdma" not in labels
    times = {a: t for a, t in r.candidates if isinstance(t, float)}
    assert r.time == min(times.values())
    loadstore = cost(f, "all-reduce", GiB, algorithm="swing", transport="loadstore",
                     runtime="ideal")
    assert times["swing"] == pytest.approx(loadstore.time)
    # a transport asked for is the only one tried
    r = cost(f, "all-reduce", GiB, transport="loadstore", runtime="ideal")
    assert not any(" over " in a for a, _ in r.candidates)


def test_multi_ring_broadcast_pipelines_every_directed_ring_from_the_root():
    f = topologies.build("torus:4x4")
    s = schedule("broadcast", "multi-ring", 16, fabric=f)
    (step,) = s.steps
    assert s.pipeline == 14                                   # p - 2 fill stages
    assert step.n_flows == 4 * 15                             # 2 rings x 2 ways x (p-1) hops
    assert np.bincount(step.dst, weights=step.fraction, minlength=16)[1:] == pytest.approx(1.0)
    assert 0 not in step.dst.tolist()                         # nothing flows into the root
    r = cost(f, "broadcast", GiB, algorithm="multi-ring", runtime="ideal")
    old = cost(f, "broadcast", GiB, algorithm="double-binary-tree", runtime="ideal")
    assert r.lower_bound <= r.time < old.time
