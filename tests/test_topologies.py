"""Builders against closed forms (docs/sources.md s.4) and the spec grammar."""

import itertools
import math
import re

import networkx as nx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import topologies
from fabric import SpecError
from fabric._schema import validate_graph


def _links(f):
    return sum(d["lanes"] for _, _, d in f.graph.edges(data=True))


def _switches(f):
    return sum(1 for _, k in f.graph.nodes(data="kind") if k == "switch")


@pytest.mark.parametrize("k, n", [(3, 2), (5, 3), (4, 3), (6, 2)])
def test_torus_counts(k, n):
    f = topologies.torus((k,) * n)
    assert f.n_endpoints == k**n
    assert _links(f) == n * k**n
    validate_graph(f.graph)


@pytest.mark.parametrize("k, n", [(3, 2), (5, 3), (2, 4)])
def test_mesh_counts(k, n):
    f = topologies.mesh((k,) * n)
    assert _links(f) == n * k ** (n - 1) * (k - 1)


@pytest.mark.parametrize("shape, K", [((3, 5), 1), ((2, 3, 4), 2), ((6,), 3)])
def test_hyperx_counts(shape, K):
    f = topologies.hypermesh(shape, "full", links=K)
    N = math.prod(shape)
    expected = K * sum(math.comb(s, 2) * N // s for s in shape)
    assert _links(f) == expected


def test_hypermesh_coords_and_ranks():
    f = topologies.hypermesh((3, 4, 2))
    for r, n in enumerate(f.endpoints):
        c = f.graph.nodes[n]["coord"]
        assert c[0] + 3 * (c[1] + 4 * c[2]) == r


def test_hypermesh_is_a_product_of_lines():
    # networkx's own products as independent truth: K3 x C4 x P3.
    f = topologies.hypermesh((3, 4, 3), ("full", "ring", "line"))
    H = nx.cartesian_product(nx.cartesian_product(nx.complete_graph(3), nx.cycle_graph(4)),
                             nx.path_graph(3))
    relabel = {n: ((c[0], c[1]), c[2]) for n, c in f.graph.nodes(data="coord")}
    ours = {frozenset(e) for e in nx.relabel_nodes(f.graph, relabel).edges}
    assert ours == {frozenset(e) for e in H.edges}


def test_switch_per_line():
    f = topologies.hypermesh((4, 3), "switch")
    assert _switches(f) == 3 + 4
    assert all(f.graph.degree(s) in (3, 4) for s, k in f.graph.nodes(data="kind")
               if k == "switch")


def test_ring_of_two_is_a_double_link():
    f = topologies.torus((2, 3))
    assert f.graph.edges["chip0", "chip1"]["lanes"] == 2


@pytest.mark.parametrize("k", [2, 4, 6, 8])
def test_fat_tree_counts(k):
    f = topologies.fat_tree(k)
    assert f.n_endpoints == k**3 // 4
    assert _switches(f) == 5 * k**2 // 4
    assert _links(f) == 3 * k**3 // 4
    assert all(f.graph.degree(s) == k for s, t in f.graph.nodes(data="tier") if t is not None
               and t < 2)
    validate_graph(f.graph)


@pytest.mark.parametrize("k", [4, 8, 16])
def test_leaf_spine_counts(k):
    f = topologies.leaf_spine(k)
    assert f.n_endpoints == k**2 // 2
    assert _switches(f) == 3 * k // 2


def test_leaf_spine_oversubscription():
    f = topologies.leaf_spine(12, 2)
    assert f.params["down"] == 8 and f.params["up"] == 4
    with pytest.raises(SpecError, match="multiple of 3"):
        topologies.leaf_spine(10, 2)


def test_rail_optimized_structure():
    f = topologies.rail_optimized(4, 8)
    assert f.n_endpoints == 32 and len(f.domains) == 4
    assert f.graph.has_edge("chip9", "nvs1") and f.graph.has_edge("nic9", "rail1")
    assert f.graph.edges["chip9", "nvs1"]["lanes"] == 18
    assert f.graph.edges["chip9", "nvs1"]["bandwidth"] == 450e9


@pytest.mark.parametrize("h", [1, 2, 3])
def test_dragonfly_balanced(h):
    f = topologies.dragonfly(h)
    a, p, g = 2 * h, h, 2 * h * h + 1
    assert f.params["groups"] == g
    assert f.n_endpoints == g * a * p
    routers = [n for n, k in f.graph.nodes(data="kind") if k == "switch"]
    R = f.graph.subgraph(routers)
    assert nx.diameter(R) <= 3
    # every pair of groups joined by exactly one global link
    group = {r: r.split(".")[0] for r in routers}
    pairs = [tuple(sorted((group[u], group[v]))) for u, v in R.edges if group[u] != group[v]]
    assert len(pairs) == len(set(pairs)) == g * (g - 1) // 2


def test_switched_planes_and_links():
    f = topologies.switched(8, 4, links=(5, 4, 4, 5), tech="nvlink4")
    bw = sum(d["bandwidth"] for _, _, d in f.graph.edges("chip3", data=True))
    assert bw == 450e9


@pytest.mark.parametrize("name, n", [("sd200-ultra", 128), ("cluster-128", 128),
                                     ("dgx-h100", 8), ("nvl72", 72), ("tpu-v4-cube", 64),
                                     ("gb300-nvl72", 72)])
def test_presets(name, n):
    f = topologies.build(name)
    assert f.n_endpoints == n and f.name == name
    assert f.chip is not None and f.assumptions
    validate_graph(f.graph)
    assert all(p.source for p in f.assumptions)


def test_sd200_worst_case_latency_is_the_calibration():
    f = topologies.build("sd200-ultra")
    path = nx.shortest_path(f.graph, "chip0", f.endpoints[-1])
    lat = sum(f.graph.edges[a, b]["latency"] for a, b in itertools.pairwise(path))
    assert len(path) - 1 == 3
    assert lat == pytest.approx(0.69e-6, rel=1e-12)


@pytest.mark.parametrize("spec, family, params", [
    ("hypermesh:4x4x8", "hypermesh", {"shape": (4, 4, 8)}),
    ("hypermesh:8x4x4,connect=switch", "hypermesh", {"connect": ("switch",) * 3}),
    ("hypermesh:4x4,connect=full/ring,links=1/2", "hypermesh",
     {"connect": ("full", "ring"), "links": (1, 2)}),
    ("torus:8x8x8", "hypermesh", {"connect": ("ring",) * 3}),
    ("mesh:4x4x4", "hypermesh", {"connect": ("line",) * 3}),
    ("fattree:k=8", "fat_tree", {"k": 8}),
    ("fattree:8", "fat_tree", {"k": 8}),
    ("leafspine:k=16,over=3", "leaf_spine", {"k": 16, "oversubscription": 3}),
    ("rail:servers=16,gpus=8", "rail_optimized", {"servers": 16, "gpus_per_server": 8}),
    ("switch:72", "switched", {"n": 72}),
    ("dragonfly:h=2", "dragonfly", {"h": 2, "a": 4, "p": 2}),
])
def test_spec_strings(spec, family, params):
    f = topologies.build(spec)
    assert f.family == family and f.name == spec
    for key, value in params.items():
        assert f.params[key] == value


@pytest.mark.parametrize("spec, match", [
    ("warp:4", "unknown topology family or preset 'warp'"),
    ("hypermesh:4x0x8", r"shape\[1\] must be an integer >= 1, got shape\[1\]=0"),
    ("hypermesh:4x-1", "shape"),
    ("hypermesh:axb", "shape must look like 4x4x8"),
    ("fattree:k=7", "fat-tree k must be even"),
    ("fattree:k=0", ">= 1"),
    ("fattree:k=eight", "k must be an integer"),
    ("fattree:k=400", "endpoints; the limit is"),
    ("torus:2048x2048", "the limit is"),
    ("torus:4x4,colour=red", "unknown option 'colour'"),
    ("torus:4x4,links=1,links=2", "given twice"),
    ("hypermesh:4x4,connect=star", "connect must be one of"),
    ("hypermesh:4x4,hosts=3", "chips_per_host=3 does not divide the 16 chips"),
    ("hypermesh:4x4,tech=warp", "unknown link technology"),
    ("switch", "switch needs n"),
    ("rail:servers=16,spines=5", "spines=5 must divide servers=16"),
    ("torus:4x4,8", "needs key=value"),
])
def test_bad_specs(spec, match):
    with pytest.raises(SpecError, match=match):
        topologies.build(spec)


def test_spec_must_be_a_string():
    with pytest.raises(TypeError):
        topologies.build(42)


@pytest.mark.parametrize("k,pods", [(4, 2), (8, 2), (8, 4), (12, 3), (12, 6), (16, 8)])
def test_pruned_fat_tree_keeps_full_radix_and_three_links_per_endpoint(k, pods):
    f = topologies.build(f"fattree:k={k},pods={pods}")
    n = pods * k * k // 4
    assert f.n_endpoints == n and f.graph.number_of_edges() == 3 * n
    switches = [s for s, kind in f.graph.nodes(data="kind") if kind == "switch"]
    assert all(f.graph.degree(s) == k for s in switches)
    assert len(switches) == pods * k + pods * k // 4


@pytest.mark.parametrize("k,leaves", [(8, 2), (8, 4), (64, 4)])
def test_partial_leaf_spine_fills_whole_spines(k, leaves):
    f = topologies.build(f"leafspine:k={k},leaves={leaves}")
    spines = [s for s in f.graph if s.startswith("spine")]
    assert len(spines) == leaves * (k // 2) // k
    for s in spines:      # a full-radix spine, reached equally by every leaf
        lanes = [d["lanes"] for *_, d in f.graph.edges(s, data=True)]
        assert sum(lanes) == k and len(set(lanes)) == 1


def test_pruned_trees_refuse_what_they_cannot_build():
    with pytest.raises(SpecError, match="pods must divide k=8"):
        topologies.build("fattree:k=8,pods=3")
    with pytest.raises(SpecError, match="fill whole spines"):
        topologies.build("leafspine:k=8,leaves=3")


# -- the order of the builders' checks (topologies._common.check_build) ------------------

#: Per builder: a good call, and per check of check_build a value of one keyword that fails
#: it and the start of its message. The size is broken through the builder's own size keyword.
_ORDER_CASES = {
    "hypermesh": (topologies.hypermesh, {"shape": (4, 4)},
                  {"size": ("shape", (2048, 1024), "hypermesh:2048x1024 has 2,097,152 endpoints"),
                   "hosts": ("chips_per_host", 3, "chips_per_host=3 does not divide"),
                   "tech": ("tech", "nope", "tech: unknown link technology")}),
    "fat_tree": (topologies.fat_tree, {"k": 4},
                 {"size": ("k", 162, "fattree:k=162 has 1,062,882 endpoints"),
                  "hosts": ("chips_per_host", 0, "chips_per_host must be an integer >= 1"),
                  "tech": ("tech", 5, ("tech: link technology must be a technology's name or "
                                       "a fabric.LinkTech, got 5 (an int)"))}),
    "leaf_spine": (topologies.leaf_spine, {"k": 8},
                   {"size": ("k", 2048, "leafspine:k=2048 has 2,097,152 endpoints"),
                    "hosts": ("chips_per_host", 3, "chips_per_host=3 does not divide"),
                    "tech": ("tech", None, ("tech: link technology must be a technology's "
                                            "name or a fabric.LinkTech, got None (a "
                                            "NoneType)"))}),
    "rail_optimized": (topologies.rail_optimized, {"servers": 2, "gpus_per_server": 4},
                       {"size": ("servers", 1 << 19, "rail:servers=524288,gpus=4 has 2,097,152"),
                        "tech": ("scaleup_tech", "nope", "scaleup_tech: unknown link")}),
    "switched": (topologies.switched, {"n": 8},
                 {"size": ("n", 1 << 21, "switch:2097152 has 2,097,152 endpoints"),
                  "hosts": ("chips_per_host", "abc", "chips_per_host must be an integer"),
                  "tech": ("tech", "nope", "tech: unknown link technology")}),
    "dragonfly": (topologies.dragonfly, {"h": 1},
                  {"size": ("h", 26, "dragonfly:h=26 has 1,829,256 endpoints"),
                   "hosts": ("chips_per_host", 4, "chips_per_host=4 does not divide the 6 chips"),
                   "tech": ("tech", "nope", "tech: unknown link technology 'nope'")}),
}


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(sorted(_ORDER_CASES)), st.data())
def test_a_spec_wrong_in_several_ways_reports_the_first_check(builder, data):
    """Reference: the order size, chips_per_host, link technology (check_build's docstring);
    breaking any non-empty subset of them reports the first broken one's error."""
    fn, good, checks = _ORDER_CASES[builder]
    broken = data.draw(st.lists(st.sampled_from(sorted(checks)), min_size=1, unique=True))
    kwargs = dict(good)
    for check in broken:
        key, value, _ = checks[check]
        kwargs[key] = value
    first = next(c for c in ("size", "hosts", "tech") if c in broken)
    # a technology of the wrong kind is a TypeError (session 36), the rest SpecErrors
    wrong_kind = first == "tech" and not isinstance(checks["tech"][1], str)
    with pytest.raises(TypeError if wrong_kind else SpecError) as e:
        fn(**kwargs)
    assert str(e.value).startswith(checks[first][2]), (broken, str(e.value))


@pytest.mark.parametrize("spec, message", [
    ("switch:8,planes=99999999999", ("switch:8,planes=99999999999 has 799,999,999,992 links; "
                                     "the limit is 16,777,216")),
    ("switch:8,planes=99999999999,links=0", "links must be an integer >= 1, got links=0"),
    ("switch:8,planes=99999999999,links=1/2", "links needs 1 or 99999999999 values"),
])
def test_a_giant_plane_count_is_refused_by_its_size_not_by_memory(spec, message):
    # audit s15 (11:24): the links of every plane were spelled out before the size check
    # (MemoryError); a bad links value is still reported first, as before
    with pytest.raises(SpecError, match=re.escape(message)):
        topologies.build(spec)
