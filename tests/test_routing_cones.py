"""Up/down routing from cones (fabric/_routing_updown.py) against the engine's per-state tables.

Random small rail-optimized clusters (one-GPU to many-GPU servers, switched domains of
many GPUs, one to several spines) and other up/down fabrics, intact or with failed
links, switches, NICs, chips and lanes: the cone router must give the same state pair
DAGs (every entry, bit for bit), the same target states, hops, latencies, bottlenecks
and link loads (equal splits and bandwidth-weighted), the same errors for pairs left
without a route, and the brute-force paths of tests/routing_brute.py.
"""

import numpy as np
import pytest
from degrade import apart
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from routing_brute import brute_loads, brute_paths

import fabric._routing_engine as engine
import topologies
from fabric import Router, RoutingError


def _on_cones(router):
    """The router, made to route pairs from cones whatever its fabric's size."""
    saved = engine.CONE_STATES, engine.CONE_RATIO
    engine.CONE_STATES, engine.CONE_RATIO = 0, 0
    try:
        assert router._engine.cones is not None
    finally:
        engine.CONE_STATES, engine.CONE_RATIO = saved
    return router


def _pair_routers(f, ecmp=None):
    """(router on the per-state tables, router on cones) of one fabric."""
    dense = Router(f, ecmp=ecmp)
    assert dense._engine.cones is None          # small: below CONE_STATES
    return dense, _on_cones(Router(f, ecmp=ecmp))


@st.composite
def updown_fabrics(draw):
    """A small up/down fabric, intact or degraded (links, a switch or NIC, a chip, lanes)."""
    kind = draw(st.sampled_from(["rail", "rail", "domains", "fattree", "leafspine", "switch"]))
    if kind == "rail":
        servers = draw(st.integers(1, 5))
        spines = draw(st.sampled_from([d for d in range(1, servers + 1) if servers % d == 0]))
        spec = f"rail:servers={servers},gpus={draw(st.integers(1, 4))},spines={spines}"
    elif kind == "domains":
        spec = f"rail:servers={draw(st.integers(1, 3))},gpus={draw(st.integers(5, 9))}"
    elif kind == "fattree":
        spec = "fattree:k=4"
    elif kind == "leafspine":
        spec = f"leafspine:k=4,over={draw(st.sampled_from([1, 3]))}"
    else:
        spec = f"switch:{draw(st.integers(2, 5))},planes={draw(st.integers(1, 3))}"
    f = topologies.build(spec)
    if not draw(st.booleans()):
        return f
    edges = list(f.graph.edges)
    links = draw(st.lists(st.sampled_from(edges), max_size=3, unique=True))
    others = [v for v in f.nodes if f.graph.nodes[v]["kind"] != "chip"]
    nodes = draw(st.lists(st.sampled_from(others), max_size=1))
    if len(f.endpoints) > 1:
        nodes += draw(st.lists(st.sampled_from(f.endpoints), max_size=1))
    bundles = [e for e in edges if f.graph.edges[e].get("lanes", 1) > 1]
    lanes = draw(st.lists(st.sampled_from(bundles), max_size=3)) if bundles else []
    # at most a bundle's lanes per bundle: failing more than it has is refused (it would
    # fail the link again after its last lane)
    kept, count = [], {}
    for e in lanes:
        k = count[frozenset(e)] = count.get(frozenset(e), 0) + 1
        if k <= f.graph.edges[e].get("lanes", 1):
            kept.append(e)
    links, kept = apart(links, nodes, kept)
    return f.without(links=links, chips=nodes, lanes=kept)


def _routable(router, s, d):
    """Mask of the pairs the router routes (each tried alone)."""
    ok = np.ones(len(s), dtype=bool)
    for i in range(len(s)):
        try:
            router.hops(s[i:i + 1], d[i:i + 1])
        except RoutingError:
            ok[i] = False
    return ok


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(f=updown_fabrics(), seed=st.integers(0, 2**16), ecmp=st.sampled_from(["all", "weighted"]))
def test_cones_equal_the_state_tables(f, seed, ecmp):
    dense, cones = _pair_routers(f, ecmp)
    rng = np.random.default_rng(seed)
    N = len(f.nodes)
    s, d = rng.integers(0, N, 60), rng.integers(0, N, 60)     # chips, NICs and switches
    ok = _routable(dense, s, d)
    for i in np.flatnonzero(~ok)[:3]:
        with pytest.raises(RoutingError, match="no route from"):
            cones.hops(s[i:i + 1], d[i:i + 1])
    s, d = s[ok], d[ok]
    for r in (dense, cones):             # route pair by pair on both (it is what cones do)
        r._engine._pairs_cheaper = lambda *counts: True
    for x, y in zip(dense.measure(s, d, want_bandwidth=True),
                    cones.measure(s, d, want_bandwidth=True)):
        np.testing.assert_array_equal(x, y)
    w = 1.0 + np.arange(len(s)) % 3
    np.testing.assert_array_equal(dense.loads(s, d, w), cones.loads(s, d, w))
    g = np.arange(len(s)) % 4
    np.testing.assert_array_equal(dense.loads_grouped(s, d, w, g, 4),
                                  cones.loads_grouped(s, d, w, g, 4))
    # the state-pair DAGs themselves, entry by entry
    de, ce = dense._engine, cones._engine
    cs, cd, _, _ = de._ends(s, d)
    inner = cs != cd
    if inner.any():
        a = de.sg.node_states[cs[inner], 0]
        z = de._pair_targets(a, cd[inner], s[inner], d[inner])
        np.testing.assert_array_equal(z, ce._pair_targets(a, cd[inner], s[inner], d[inner]))
        for x, y in zip(de._pair_dag(a, z), ce._pair_dag(a, z)):
            np.testing.assert_array_equal(x, y)


@pytest.mark.parametrize("spec", ["rail:servers=4,gpus=2,spines=2", "rail:servers=2,gpus=6",
                                  "fattree:k=4", "switch:4,planes=3"])
def test_cones_equal_brute_force(spec):
    f = topologies.build(spec)
    _, r = _pair_routers(f)
    r._engine._pairs_cheaper = lambda *counts: True
    pairs = [(a, b) for a in f.endpoints for b in f.endpoints if a != b][::3]
    idx = f.node_index
    s = np.array([idx[a] for a, _ in pairs])
    d = np.array([idx[b] for _, b in pairs])
    np.testing.assert_allclose(r.loads(s, d, 2.0), brute_loads(f, pairs, "up-down", nbytes=2.0),
                               rtol=1e-12, atol=1e-9)
    hops = r.hops(s, d)
    for i, (a, b) in enumerate(pairs):
        assert hops[i] == len(brute_paths(f, a, b, "up-down")[0]) - 1


def test_cones_used_only_on_large_up_down_fabrics():
    """Rail-optimized clusters of 8k chips route pairs from cones; small fabrics keep tables."""
    big = topologies.build("rail:servers=1024,gpus=8")
    eng = big.router._engine
    assert eng.sg.n_states >= engine.CONE_STATES
    assert eng.cones is not None
    assert topologies.build("rail:servers=16,gpus=8").router._engine.cones is None
    # and the answers of a ring on it are those of the state tables (cones switched off)
    ep = big.endpoint_indices
    s, d = ep[::97], np.roll(ep, -1)[::97]
    ref = Router(big)
    ref._engine._cones = (False, ref._engine.sg.n_states)
    np.testing.assert_array_equal(big.router.latency(s, d), ref.latency(s, d))
    np.testing.assert_array_equal(big.router.loads(s, d, 1.0), ref.loads(s, d, 1.0))


def test_a_turn_arc_whose_bound_is_tight_still_ties():
    """Two routes of equal length, one found first through a turn arc with a loose bound.

    NIC ``c0`` climbs to the top switch ``T`` in one hop, so a NIC's climbing bound to
    ``T`` is 1, but ``a`` needs 3 (via ``s1``, ``s2``): its turn at ``T`` down to ``z``
    (length 4, bound 2) is found before the turn at ``s2`` down through ``m`` (length
    4, bound 4, tight). Both are shortest and carry half of the bytes each.
    """
    import networkx as nx

    from fabric import Fabric

    G = nx.Graph()
    for n in ("a", "z", "c0"):
        G.add_node(n, kind="nic")
        G.add_node("chip_" + n, kind="chip")
        G.add_edge("chip_" + n, n)
    for n, tier in (("m", 0), ("s1", 1), ("s2", 2), ("T", 3)):
        G.add_node(n, kind="switch", tier=tier)
    G.add_edges_from([("c0", "T"), ("a", "s1"), ("s1", "s2"), ("s2", "T"), ("z", "m"),
                      ("m", "s2"), ("T", "z")])
    nx.set_edge_attributes(G, 1e9, "bandwidth")
    nx.set_edge_attributes(G, 1e-7, "latency")
    f = Fabric.from_graph(G)
    dense, cones = Router(f, policy="up-down"), _on_cones(Router(f, policy="up-down"))
    i = f.node_index
    s, d = [i["chip_a"]], [i["chip_z"]]
    want = dense.loads(s, d, 2.0)
    np.testing.assert_array_equal(cones.loads(s, d, 2.0), want)
    assert want[cones.link_index("T", "z")] == want[cones.link_index("m", "z")] == 1.0
    assert cones.hops(s, d).tolist() == [6]
