"""On-fabric collective costs: equality with the closed forms, bounds, calibration, errors."""

import math

import networkx as nx
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import topologies
from analysis import ALGORITHMS, NotApplicableError, closed_form, cost, cost_sizes
from fabric import ChipSpec, Fabric, NodeError, RoutingError, SpecError, Transport

BW = 10e9        # B/s per link direction
LAT = 500e-9     # s per link
RATE = 40e9      # B/s reduction rate of the test chip
CHIP = ChipSpec("test-chip", 10**9, 3 * RATE, 1e12, RATE, "a test figure")
# A transport with no overhead and no headers: alpha and beta are the links' own.
IDEAL = Transport("ideal", "memory", max_payload=4096, header=0)


def complete(p, chip=CHIP):
    G = nx.complete_graph(p)
    nx.set_node_attributes(G, "chip", "kind")
    nx.set_edge_attributes(G, BW, "bandwidth")
    nx.set_edge_attributes(G, LAT, "latency")
    return Fabric.from_graph(G, name=f"K{p}", chip=chip)


def ring(p, chip=CHIP):
    G = nx.cycle_graph(p)
    nx.set_node_attributes(G, "chip", "kind")
    nx.set_edge_attributes(G, BW, "bandwidth")
    nx.set_edge_attributes(G, LAT, "latency")
    return Fabric.from_graph(G, name=f"C{p}", chip=chip)


def star(p, chip=CHIP):
    """p chips on one switch that reduces in the network."""
    # networkx's star: node 0 the hub, 1..p the chips (ranks 0..p-1): relabelled, since an
    # int is read as a rank (session 34: from_graph refuses ints that are other chips' ranks)
    G = nx.relabel_nodes(nx.star_graph(p), {k: f"chip{k - 1}" if k else "sw" for k in range(p + 1)})
    nx.set_node_attributes(G, "chip", "kind")
    G.nodes["sw"]["kind"] = "switch"
    G.nodes["sw"]["reduction"] = True
    nx.set_edge_attributes(G, BW, "bandwidth")
    nx.set_edge_attributes(G, LAT, "latency")
    return Fabric.from_graph(G, name=f"star{p}", chip=chip)


# (op, on-fabric algorithm, closed-form algorithm, n for the closed form given the size)
MATCHES = [
    ("all-reduce", "ring", "ring", None),
    ("all-reduce", "recursive-doubling", "recursive-doubling", None),
    ("all-reduce", "rabenseifner", "rabenseifner", None),
    ("all-gather", "ring", "ring", None),
    ("all-gather", "recursive-doubling", "recursive-doubling", None),
    ("all-gather", "bruck", "bruck", None),
    ("reduce-scatter", "recursive-halving", "recursive-halving", None),
    ("reduce-scatter", "pairwise", "pairwise", None),
    ("reduce-scatter", "ring", "pairwise", None),  # same cost: (p-1) steps of n/p
    ("broadcast", "binomial", "binomial", None),
    ("broadcast", "scatter-recursive-doubling", "scatter-recursive-doubling", None),
    ("broadcast", "scatter-ring", "scatter-ring", None),
    ("reduce", "binomial", "binomial", None),
    # MPICH's Bruck all-to-all formula counts the whole buffer (module docstring of
    # analysis._closed_form); its pairwise formula counts only the data for others.
    ("all-to-all", "bruck", "bruck", lambda n, p: n),
    ("all-to-all", "pairwise", "pairwise", lambda n, p: n * (p - 1) / p),
]


@pytest.mark.parametrize("p", [4, 8, 16])
@pytest.mark.parametrize("op, alg, cf_alg, n_of", MATCHES)
def test_equals_closed_form_on_a_complete_graph(p, op, alg, cf_alg, n_of):
    n = 3 * 2**20
    f = complete(p)
    got = cost(f, op, n, algorithm=alg, transport=IDEAL, overlap=False, runtime="ideal")
    want = closed_form(op, cf_alg, p, n_of(n, p) if n_of else n, LAT, 1 / BW, 1 / RATE)
    assert got.time == pytest.approx(want, rel=1e-12)
    assert got.algorithm == alg


@pytest.mark.parametrize("op, cf_alg", [("all-reduce", "ring"), ("all-gather", "ring"),
                                        ("reduce-scatter", "pairwise")])
@pytest.mark.parametrize("p", [3, 5, 8, 13])
def test_ring_equals_closed_form_on_a_ring(op, cf_alg, p):
    n = 1e6
    got = cost(ring(p), op, n, algorithm="ring", transport=IDEAL, overlap=False, runtime="ideal")
    assert got.time == pytest.approx(closed_form(op, cf_alg, p, n, LAT, 1 / BW, 1 / RATE),
                                     rel=1e-12)


def test_closed_form_with_a_real_transport():
    # alpha = link latency + per-message overhead; beta charges the packet headers.
    f = complete(8)
    for name in ("loadstore", "rdma"):
        from fabric import transport
        t = transport(name)
        got = cost(f, "all-reduce", 2**24, algorithm="ring", transport=name, overlap=False, runtime="ideal")
        beta = (1 + t.header / t.max_payload) / BW
        want = closed_form("all-reduce", "ring", 8, 2**24, LAT + t.per_message_overhead,
                           beta, 1 / RATE)
        assert got.time == pytest.approx(want, rel=1e-12)
        assert got.transport == name


# Algorithms outside the MPICH table, against their own forms worked by hand on a
# complete graph (every flow has its own link).
@pytest.mark.parametrize("op, alg, form", [
    ("all-reduce", "one-shot", lambda p, n, a, b, g: a + n * b + (p - 1) * n * g),
    ("all-reduce", "two-shot",
     lambda p, n, a, b, g: 2 * a + 2 * n / p * b + (p - 1) / p * n * g),
    ("all-gather", "one-shot", lambda p, n, a, b, g: a + n / p * b),
    ("reduce-scatter", "one-shot", lambda p, n, a, b, g: a + n / p * b + (p - 1) / p * n * g),
    ("all-to-all", "one-shot", lambda p, n, a, b, g: a + n / p * b),
    ("broadcast", "one-shot", lambda p, n, a, b, g: a + n * b),
    ("reduce", "one-shot", lambda p, n, a, b, g: a + n * b + (p - 1) * n * g),
])
@pytest.mark.parametrize("p", [3, 8])
def test_direct_algorithms_on_a_complete_graph(op, alg, form, p):
    n = 5e6
    got = cost(complete(p), op, n, algorithm=alg, transport=IDEAL, overlap=False, runtime="ideal")
    assert got.time == pytest.approx(form(p, n, LAT, 1 / BW, 1 / RATE), rel=1e-12)


def test_overlap_takes_the_larger_of_transfer_and_reduction():
    f = complete(8)
    n = 8e6
    got = cost(f, "all-reduce", n, algorithm="ring", transport=IDEAL, runtime="ideal")
    per = n / 8
    want = 7 * (LAT + max(per / BW, per / RATE)) + 7 * (LAT + per / BW)
    assert got.time == pytest.approx(want, rel=1e-12)


def _nccl_dtree(p):
    """Parent lists of NCCL's two trees (src/graph/trees.cc), rebuilt here independently."""
    def btree(r):
        if r == 0:
            return -1
        bit = 1
        while not bit & r:
            bit <<= 1
        up = (r ^ bit) | (bit << 1)
        return up if up < p else r ^ bit
    t1 = {r: btree(r) for r in range(p)}
    if p % 2 == 0:
        t2 = {p - 1 - r: (p - 1 - u if u >= 0 else -1) for r, u in t1.items()}
    else:
        t2 = {(r + 1) % p: ((u + 1) % p if u >= 0 else -1) for r, u in t1.items()}
    return t1, t2


@pytest.mark.parametrize("p", [4, 7, 15, 16])
def test_double_binary_tree_pipeline_is_the_best_chunking(p):
    # complete graph: a stage sends one half-chunk up and one down every tree edge;
    # a directed link used by m of them carries m n / (2k). (k + 2h) stages; brute
    # force over k.
    from collections import Counter
    f = complete(p, chip=None)
    n = 2**22
    got = cost(f, "all-reduce", n, algorithm="double-binary-tree", transport=IDEAL, runtime="ideal")
    t1, t2 = _nccl_dtree(p)
    use = Counter()
    for t in (t1, t2):
        for r, u in t.items():
            if u >= 0:
                use[(r, u)] += 1
                use[(u, r)] += 1
    m = max(use.values())

    def depth(r):
        return 0 if t1[r] < 0 else 1 + depth(t1[r])
    h = max(depth(r) for r in range(p))
    best = min((k + 2 * h) * (LAT + m * n / (2 * k) / BW) for k in range(1, 20000))
    assert got.time == pytest.approx(best, rel=1e-12)
    assert got.steps[0].repeat == got.chunks + 2 * h


def test_in_switch_on_a_star():
    p, n = 8, 2**26
    f = star(p)
    got = cost(f, "all-reduce", n, algorithm="in-switch", transport=IDEAL, runtime="ideal")
    # each stage: one hop, (1 + 1/p) n / k per link each way; no chip reduction
    best = min((k + 1) * (LAT + (1 + 1 / p) * n / k / BW) for k in range(1, 20000))
    assert got.time == pytest.approx(best, rel=1e-12)
    assert got.steps[0].reduction == 0


@pytest.mark.parametrize("op", ["reduce-scatter", "all-gather", "broadcast", "reduce"])
def test_in_switch_other_ops_on_a_star(op):
    # reduce-scatter: n up, n/p down per chip; all-gather: n/p up, n down (NVIDIA/nccl
    # issue 1506); broadcast: the root sends n up, every chip receives n; reduce: every
    # chip sends n up, the root receives n. The busiest link carries n/k per stage.
    p, n = 8, 2**26
    got = cost(star(p), op, n, algorithm="in-switch", transport=IDEAL, runtime="ideal")
    best = min((k + 1) * (LAT + n / k / BW) for k in range(1, 20000))
    assert got.time == pytest.approx(best, rel=1e-12)


def test_hierarchical_on_a_hypermesh_by_hand():
    f = topologies.build("hypermesh:4x4")
    n = 2**24
    got = cost(f, "all-reduce", n, algorithm="hierarchical", transport="loadstore",
               overlap=False, runtime="ideal")
    from fabric import link_tech, transport
    t = transport("loadstore")
    bw = link_tech("cofabric").bandwidth * t.max_payload / (t.max_payload + t.header)
    a = link_tech("cofabric").latency + t.per_message_overhead
    g = 1 / f.chip.reduce_rate if f.chip else 0.0
    # RS dim 0: n/4 per peer link, reduce 3n/4; RS dim 1: n/16, reduce 3n/16; AG back.
    want = (a + n / 4 / bw + 3 * n / 4 * g) + (a + n / 16 / bw + 3 * n / 16 * g) \
        + (a + n / 16 / bw) + (a + n / 4 / bw)
    assert got.time == pytest.approx(want, rel=1e-12)


# -- the lower bound: no result is ever below it -----------------------------------------

FABRICS = {
    "K8": lambda: complete(8),
    "C6": lambda: ring(6),
    "star8": lambda: star(8),
    "dgx-h100": lambda: topologies.build("dgx-h100"),
    "torus:4x4": lambda: topologies.build("torus:4x4"),
    "hypermesh:4x2x2": lambda: topologies.build("hypermesh:4x2x2"),
    "fattree:k=4": lambda: topologies.build("fattree:k=4"),
}
_BUILT = {}


def _fabric(name):
    if name not in _BUILT:
        _BUILT[name] = FABRICS[name]()
    return _BUILT[name]


@given(name=st.sampled_from(sorted(FABRICS)),
       op=st.sampled_from([o for o in ALGORITHMS if o != "all-to-allv"]),
       size=st.integers(1, 2**31), overlap=st.booleans(),
       transport=st.sampled_from([None, "loadstore", "rdma"]))
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_never_below_the_lower_bound(name, op, size, overlap, transport):
    f = _fabric(name)
    for alg in ALGORITHMS[op]:
        try:
            r = cost(f, op, size, algorithm=alg, transport=transport, overlap=overlap, runtime="ideal")
        except (NotApplicableError, RoutingError):
            continue
        assert r.time >= r.lower_bound * (1 - 1e-12), (name, op, alg)
        assert r.lower_bound > 0


@pytest.mark.parametrize("name", ["cluster-128", "sd200-ultra"])
def test_never_below_the_lower_bound_on_the_compared_systems(name):
    f = topologies.build(name)
    for op, algs in ALGORITHMS.items():
        if op == "all-to-allv":
            continue
        for alg in algs:
            try:
                rs = cost_sizes(f, op, [1024, 2**20, 2**30], algorithm=alg, runtime="ideal")
            except NotApplicableError:
                continue
            for r in rs:
                assert r.time >= r.lower_bound > 0, (name, op, alg, r.size)


def test_single_port_algorithms_respect_chan_on_a_ring():
    # On a ring every rank has two links; single-port algorithms still meet Chan et al.
    p, n = 8, 2**20
    f = ring(p)
    for op, alg in (("all-reduce", "ring"), ("all-gather", "ring"),
                    ("reduce-scatter", "ring"), ("all-reduce", "recursive-doubling")):
        r = cost(f, op, n, algorithm=alg, transport=IDEAL, overlap=False, runtime="ideal")
        assert r.time >= closed_form(op, "lower-bound", p, n, LAT, 1 / BW, 1 / RATE)


# -- auto ----------------------------------------------------------------------------------

def test_auto_returns_the_fastest_and_says_which():
    f = topologies.build("torus:4x4")
    r = cost(f, "all-reduce", 2**20, runtime="ideal")
    times = {a: t for a, t in r.candidates if not isinstance(t, str)}
    assert r.algorithm == min(times, key=times.get)
    assert r.time == times[r.algorithm]
    reasons = {a: t for a, t in r.candidates if isinstance(t, str)}
    assert "in-switch" in reasons and "reduction=True" in reasons["in-switch"]


def test_small_messages_prefer_few_steps_large_prefer_bandwidth():
    f = complete(16, chip=None)
    small = cost(f, "all-gather", 1024, transport=IDEAL, runtime="ideal")
    large = cost(f, "all-gather", 2**30, transport=IDEAL, runtime="ideal")
    assert small.algorithm == "one-shot"  # one step on a complete graph
    assert large.time >= large.lower_bound


# -- calibration against published measurements -------------------------------------------

def test_dgx_h100_ring_allreduce_busbw_matches_nccl_tests():
    # NVIDIA/nccl-tests issue 212 (NCCL maintainer): ring busbw about 370 GB/s on a
    # DGX H100; docs/sources.md s.1. Tolerance 15% (the requirement).
    r = cost(topologies.build("dgx-h100"), "all-reduce", 8 * 2**30, algorithm="ring", runtime="ideal")
    assert r.busbw == pytest.approx(370e9, rel=0.15)


def test_dgx_h100_ring_uses_all_eighteen_nvlinks():
    # Closed form: the router splits a GPU's flows over the four NVSwitch planes in
    # proportion to its 5, 4, 4, 5 NVLinks (the switched family's weighted ECMP), so a
    # large ring all-reduce runs at the GPU's 18 links x NCCL's 20.6 GB/s per NVLink4
    # link (PROTOCOL_LINK_BANDWIDTH) = 370.8 GB/s busbw, latency terms aside (< 0.1% at
    # 8 GiB). Equal splits would cap it at 4 x 4 links (329.6 GB/s).
    r = cost(topologies.build("dgx-h100"), "all-reduce", 8 * 2**30, algorithm="ring", runtime="ideal")
    assert r.busbw == pytest.approx(18 * 20.6e9, rel=1e-3)


def test_dgx_h100_nvls_allreduce_busbw_matches_nccl_tests():
    # Same source: with NVLink SHARP, busbw about 480 GB/s (algbw about 275 GB/s).
    r = cost(topologies.build("dgx-h100"), "all-reduce", 8 * 2**30, runtime="ideal")
    assert r.algorithm == "in-switch"
    assert r.busbw == pytest.approx(480e9, rel=0.15)
    assert r.algbw == pytest.approx(275e9, rel=0.15)


@pytest.mark.parametrize("p, busbw, algbw", [(5, 420e9, 258e9), (6, 440e9, 265e9),
                                             (7, 460e9, 270e9), (8, 480e9, 273e9)])
def test_nvls_scaling_with_gpu_count(p, busbw, algbw):
    # NVIDIA/nccl issue 1455: 8x H100 SXM, NCCL_ALGO=NVLS, 2-4 GiB: busbw 420, 440,
    # 460, 480 GB/s and algbw 258, 265, 270, 273 GB/s on 5, 6, 7, 8 GPUs. Tolerance 5%.
    r = cost(topologies.build("dgx-h100"), "all-reduce", 4 * 2**30, algorithm="in-switch",
             ranks=range(p), runtime="ideal")
    assert r.busbw == pytest.approx(busbw, rel=0.05)
    assert r.algbw == pytest.approx(algbw, rel=0.05)


def test_h200_allreduce_peak():
    # NVIDIA/nccl-tests issue 272: 8x H200 on NVLink4 (the same NVSwitch fabric as
    # DGX H100), all_reduce_perf peak busbw 475 GB/s (NVLS, NCCL 2.20). Tolerance 15%.
    r = cost(topologies.build("dgx-h100"), "all-reduce", 4 * 2**30, runtime="ideal")
    assert r.busbw == pytest.approx(475e9, rel=0.15)


def test_nvlink5_eight_gpus_against_b300():
    # NVIDIA/nccl issue 2140: 8x B300 (NVLink5, 18 links, 900 GB/s per GPU): ring busbw
    # 695 GB/s, NVLS busbw 845 GB/s. Modelled as 8 GPUs of the nvl72 preset (the same
    # NVLink5 link count and switch planes; a B300 HGX, not an NVL72). Tolerance 15%.
    f = topologies.build("nvl72")
    ring_ = cost(f, "all-reduce", 4 * 2**30, algorithm="ring", ranks=range(8), runtime="ideal")
    nvls = cost(f, "all-reduce", 4 * 2**30, algorithm="in-switch", ranks=range(8), runtime="ideal")
    assert ring_.busbw == pytest.approx(695e9, rel=0.15)
    assert nvls.busbw == pytest.approx(845e9, rel=0.15)


def test_h800_eight_nvlinks():
    # H800: 8 NVLink4 links per GPU instead of 18, here 2 to each of 4 NVSwitches (an
    # assumption about the HGX H800 board). Measurements: NVLS all-reduce busbw 215 GB/s
    # on 8x H800 (NVIDIA/nccl issue 1374, a user's nccl-tests run); NVLink about 160 GB/s
    # achievable per GPU (DeepSeek-V3 report s.3.2.2; docs/sources.md s.1), compared with
    # ring all-gather busbw. Tolerance 15%.
    f = topologies.switched(8, 4, links=2, tech="nvlink4", reduction=True, chip="h100",
                            name="hgx-h800")
    nvls = cost(f, "all-reduce", 4 * 2**30, algorithm="in-switch", runtime="ideal")
    ring_ = cost(f, "all-gather", 4 * 2**30, algorithm="ring", runtime="ideal")
    assert nvls.busbw == pytest.approx(215e9, rel=0.15)
    assert ring_.busbw == pytest.approx(160e9, rel=0.15)


def test_cluster_ring_allreduce_against_multi_node_h100():
    # NVIDIA/nccl issue 1649 (a user quoting NVIDIA's GTC 2024 NCCL talk; second-hand):
    # multi-node H100 all-reduce busbw about 380 GB/s without SHARP, 8 x 400G NICs per
    # node. cluster-128 is 16 such servers. Tolerance 15%.
    r = cost(topologies.build("cluster-128"), "all-reduce", 4 * 2**30, algorithm="ring", runtime="ideal")
    assert r.busbw == pytest.approx(380e9, rel=0.15)
    assert r.bottleneck[0].startswith("nic") or r.bottleneck[1].startswith("nic")


# -- result fields -------------------------------------------------------------------------

def test_result_fields_and_busbw_factor():
    f = topologies.build("dgx-h100")
    r = cost(f, "all-gather", 2**28, algorithm="ring", runtime="ideal")
    assert r.algbw == pytest.approx(2**28 / r.time)
    assert r.busbw == pytest.approx(r.algbw * 7 / 8)
    assert sum(s.time for s in r.steps) == pytest.approx(r.time)
    assert r.bottleneck[0].startswith("chip") and r.bottleneck[1].startswith("sw")
    assert r.fabric == "dgx-h100" and r.ranks == 8 and r.transport == "loadstore"
    with pytest.raises(AttributeError):
        r.time = 0


def test_native_transport_mixes_per_step_on_a_cluster():
    f = topologies.build("cluster-128")
    r = cost(f, "all-reduce", 2**26, algorithm="hierarchical", runtime="ideal")
    assert r.transport == "loadstore+rdma"
    assert [s.transport for s in r.steps] == ["loadstore", "rdma", "rdma", "loadstore"]
    one_server = cost(f, "all-reduce", 2**26, ranks=range(8), runtime="ideal")
    assert one_server.transport == "loadstore"


def test_cost_sizes_matches_cost():
    f = topologies.build("torus:4x4")
    sizes = [1024, 2**20, 2**30]
    many = cost_sizes(f, "reduce-scatter", sizes, algorithm="ring", runtime="ideal")
    for s, r in zip(sizes, many):
        assert r.time == cost(f, "reduce-scatter", s, algorithm="ring", runtime="ideal").time


def test_all_to_allv_matrix():
    f = complete(4, chip=None)
    M = np.full((4, 4), 1000.0)
    r = cost(f, "all-to-allv", M, algorithm="one-shot", transport=IDEAL, runtime="ideal")
    assert r.time == pytest.approx(LAT + 1000 / BW)
    assert r.size == pytest.approx(4000)
    uniform = cost(f, "all-to-all", 4000, algorithm="one-shot", transport=IDEAL, runtime="ideal")
    assert r.time == pytest.approx(uniform.time)


# -- bad input -----------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs, error, match", [
    # 0 bytes under "ideal" costs 0 s since session 31 (tests/test_runtime_s31_empty.py)
    ({"nbytes": -4096}, ValueError, "nbytes=-4096"),
    ({"nbytes": math.nan}, ValueError, "finite"),
    ({"nbytes": True}, TypeError, "finite number > 0 bytes"),
    ({"op": "all-shuffle"}, SpecError, "unknown collective operation 'all-shuffle'"),
    ({"algorithm": "quantum"}, SpecError, "unknown algorithm 'quantum'"),
    ({"ranks": [0, 1, 99]}, NodeError, "rank 99 is out of range"),
    ({"ranks": [0, 1, 1]}, NodeError, "twice"),
    ({"ranks": ["sw0", "chip1"]}, NodeError, "'sw0' is not a chip endpoint"),
    ({"ranks": []}, ValueError, "at least one rank"),
    ({"transport": "pigeon"}, ValueError, "unknown transport 'pigeon'"),
    ({"algorithm": "one-shot", "transport": "rdma"}, NotApplicableError,
     "symmetric memory; transport 'rdma' is message passing"),
    ({"algorithm": "recursive-doubling", "ranks": range(6)}, NotApplicableError,
     "power-of-two"),
])
def test_bad_input(kwargs, error, match):
    args = {"op": "all-reduce", "nbytes": 2**20}
    args.update(kwargs)
    f = topologies.build("dgx-h100")
    with pytest.raises(error, match=match):
        cost(f, args.pop("op"), args.pop("nbytes"), **args, runtime="ideal")


def test_a_transport_the_fabric_cannot_carry():
    f = topologies.build("cluster-128")
    with pytest.raises(RoutingError, match="load/store does not cross a NIC"):
        cost(f, "all-reduce", 2**20, transport="loadstore", runtime="ideal")
    # inside one server it can
    assert cost(f, "all-reduce", 2**20, transport="loadstore", ranks=range(8), runtime="ideal").time > 0


def test_infiniband_carries_only_messages():
    # a fat-tree of InfiniBand switches has no NIC nodes, but its links carry RDMA only
    f = topologies.build("fattree:k=4")
    assert cost(f, "all-reduce", 2**20, runtime="ideal").transport == "rdma"
    with pytest.raises(RoutingError, match="InfiniBand/RoCE"):
        cost(f, "all-reduce", 2**20, transport="loadstore", runtime="ideal")


def test_one_rank_costs_nothing():
    r = cost(topologies.build("dgx-h100"), "all-reduce", 2**20, ranks=[3], runtime="ideal")
    assert r.time == 0 and r.lower_bound == 0
    assert r.algbw == math.inf and r.busbw == 0.0  # nccl-tests' factor is 0 for one rank
