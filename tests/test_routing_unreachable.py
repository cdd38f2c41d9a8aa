"""``fabric.Router.unreachable_pairs``: the ordered pairs of nodes the routing policy cannot
route, found without routing every pair under dimension order.

References, pair by pair over every ordered pair of live chips: ``fabric.route`` (raises
RoutingError where there is no route) and, for the grids (dimension order detours by
shortest paths over the live links), a path in the live graph (networkx ``has_path``).
Also the enumeration's own claim: every pair the closed-form routing flags dead
(``DimOrder.evaluate`` on all pairs) is among ``DimOrder.dead_candidates``.
"""

import itertools

import networkx as nx
import numpy as np
import pytest
from degrade import degrade
from hypothesis import given, settings
from hypothesis import strategies as st

import fabric
import topologies
from fabric import FabricError, RoutingError

_GRIDS = ("torus:3x4", "torus:3x3x2", "mesh:3x3", "mesh:2x4", "hypermesh:3x3",
          "hypermesh:3x3,connect=switch", "hypermesh:2x2x3,connect=switch/ring/full",
          "hypermesh:3x4,connect=full/switch")
_OTHERS = ("switch:5,planes=2", "rail:servers=2,gpus=3", "dragonfly:h=1", "fattree:k=4")


def _fabrics(specs):
    """A fabric of ``specs`` with up to 6 failed links and 3 failed chips (tests/degrade.py)."""
    return st.sampled_from(specs).map(topologies.build).flatmap(
        lambda f: degrade(f, max_links=6, max_chips=3))


def _brute(f):
    """Ordered pairs (i, j) of positions in f.endpoint_indices fabric.route cannot route."""
    names = list(f.endpoints)
    out = set()
    for i, j in itertools.permutations(range(len(names)), 2):
        try:
            f.route(names[i], names[j])
        except RoutingError:
            out.add((i, j))
    return out


def _pairs(f, nodes=None):
    nodes = f.endpoint_indices if nodes is None else nodes
    i, j = f.router.unreachable_pairs(nodes)
    got = list(zip(i.tolist(), j.tolist(), strict=True))
    assert got == sorted(set(got))                # each pair once, sorted
    return set(got)


@settings(max_examples=60, deadline=None)
@given(_fabrics(_GRIDS))
def test_grids_unreachable_pairs_are_the_brute_force(f):
    got = _pairs(f)
    assert got == _brute(f)
    live = f.graph
    names = list(f.endpoints)
    assert got == {(i, j) for i, j in itertools.permutations(range(len(names)), 2)
                   if not nx.has_path(live, names[i], names[j])}


@settings(max_examples=60, deadline=None)
@given(_fabrics(_GRIDS))
def test_dead_candidates_hold_every_dead_route(f):
    dor = f.router._dor
    nodes = np.asarray(f.endpoint_indices, dtype=np.int64)
    n = len(nodes)
    i, j = dor.dead_candidates(nodes)
    cand = set(zip(i.tolist(), j.tolist(), strict=True))
    ii, jj = (a.ravel() for a in np.meshgrid(np.arange(n), np.arange(n), indexing="ij"))
    keep = ii != jj
    ii, jj = ii[keep], jj[keep]
    dead = dor.evaluate(nodes[ii], nodes[jj], want_latency=False)[2]
    assert set(zip(ii[dead].tolist(), jj[dead].tolist(), strict=True)) <= cand
    if dor.intact:
        assert not cand


@settings(max_examples=40, deadline=None)
@given(_fabrics(_OTHERS))
def test_other_policies_unreachable_pairs_are_the_brute_force(f):
    assert _pairs(f) == _brute(f)


@settings(max_examples=30, deadline=None)
@given(f=_fabrics(_GRIDS + _OTHERS), data=st.data())
def test_a_subset_of_nodes_gives_its_own_pairs(f, data):
    # positions refer to the nodes given, in their order
    ends = list(f.endpoint_indices)
    pick = data.draw(st.permutations(range(len(ends))).map(
        lambda p: p[:data.draw(st.integers(0, len(p)))]))
    nodes = [ends[k] for k in pick]
    whole = _pairs(f)
    assert _pairs(f, nodes) == {(a, b) for a, b in itertools.permutations(range(len(pick)), 2)
                                if (pick[a], pick[b]) in whole}


def test_a_torus_without_a_chip_examines_only_the_lines_through_it():
    f = topologies.build("torus:8x8x8").without(chips=["chip9"])
    nodes = np.asarray(f.endpoint_indices, dtype=np.int64)
    i, _ = f.router._dor.dead_candidates(nodes)
    n = len(nodes)
    # three damaged lines (one per dimension), each 8 x 511 sources x destinations at most
    assert 0 < len(i) <= 3 * 8 * n < n * (n - 1) // 20
    assert len(f.router.unreachable_pairs(nodes)[0]) == 0     # the torus routes round it


def test_bad_nodes_are_named():
    f = topologies.build("torus:3x3").without(chips=["chip4"])
    r = f.router
    with pytest.raises(ValueError, match="distinct"):
        r.unreachable_pairs([0, 0, 1])
    with pytest.raises(TypeError, match="node indices"):
        r.unreachable_pairs([0.5, 1.0])
    with pytest.raises(fabric.NodeError):
        r.unreachable_pairs([0, 99])
    assert [len(a) for a in r.unreachable_pairs([])] == [0, 0]


_LEAVES = ("fattree:k=4", "dragonfly:h=1", "dragonfly:h=2", "switch:6,planes=1",
           "rail:servers=2,gpus=2")


def _every_pair_reachable(r, nodes):
    """The per-pair answer (Router.reachable on every ordered pair), as a set of dead pairs."""
    n = len(nodes)
    ii, jj = (a.ravel() for a in np.meshgrid(np.arange(n), np.arange(n), indexing="ij"))
    keep = ii != jj
    ii, jj = ii[keep], jj[keep]
    ok = r.reachable(np.asarray(nodes)[ii], np.asarray(nodes)[jj])
    return set(zip(ii[~ok].tolist(), jj[~ok].tolist(), strict=True))


@settings(max_examples=60, deadline=None)
@given(f=_fabrics(_LEAVES), policy=st.sampled_from(("shortest", "minimal", "up-down")),
       cut=st.integers(0, 3))
def test_each_policy_by_core_pairs_is_every_pair(f, policy, cut):
    # chips that are leaves stand on their switch: the policy is asked per switch pair and
    # the answer spread over the chips; checked against asking every chip pair. `cut` more
    # links are taken off the first switches so that whole switches' chips lose each other.
    switches = [v for v in f.graph.nodes if v not in set(f.endpoints)]
    links = [tuple(e) for v in switches[:cut] for e in f.graph.edges(v)
             if not set(e) & set(f.endpoints)]
    try:
        f = f.without(links=links)
        r = fabric.Router(f, policy=policy)
    except (FabricError, RoutingError, ValueError):
        return
    nodes = f.endpoint_indices
    i, j = r.unreachable_pairs(nodes)
    got = list(zip(i.tolist(), j.tolist(), strict=True))
    assert got == sorted(set(got))
    assert set(got) == _every_pair_reachable(r, nodes)


def test_a_fat_tree_edge_switch_cut_off_loses_all_its_chips():
    # every uplink of one edge switch fails: its k/2 chips reach each other (one switch) and
    # nobody else; asked per switch pair, spread over the chips
    f = topologies.build("fattree:k=4")
    chips = set(f.endpoints)
    edge = next(f.graph.neighbors(f.endpoints[0]))
    up = [(edge, v) for v in f.graph.neighbors(edge) if v not in chips]
    g = f.without(links=up)
    names = list(g.endpoints)
    under = {k for k, c in enumerate(names) if next(g.graph.neighbors(c)) == edge}
    assert len(under) == 2
    i, j = g.router.unreachable_pairs(g.endpoint_indices)
    want = {(a, b) for a, b in itertools.permutations(range(len(names)), 2)
            if (a in under) != (b in under)}
    assert set(zip(i.tolist(), j.tolist(), strict=True)) == want == _brute(g)
