"""Review (session 8): deterministic checks of mechanisms landed this session, with answers
worked out by hand in the comments (no timing assertions)."""

import functools
import itertools

import pytest

import analysis
import topologies
from analysis._decode import collective_seconds
from fabric import RoutingError

# S8-R1: a 128-chip rail with dead NIC links in 7 of its 16 servers. A GPU whose NIC link
# failed reaches its own server's GPUs only (GPUs do not forward); every other pair reaches.
_DEAD_NICS = ("chip16", "chip30", "chip34", "chip65", "chip97", "chip115", "chip120", "chip126")


@functools.cache
def _rail():
    f = topologies.build("rail:servers=16,gpus=8")
    return f.without(links=[(c, "nic" + c[4:]) for c in _DEAD_NICS])


@pytest.mark.parametrize("chips,tp,equal,idle", [
    # whole servers: every server's 8 chips reach each other over its NVSwitch -> 16 copies
    (8, 8, False, 0),
    # two whole servers, TP groups inside servers: only the 9 servers without a dead NIC pair
    # (a dead-NIC chip cannot reach another server) -> 4 copies, 64 chips idle
    (16, 8, False, 64),
    (16, 8, True, 64),
    # any 16 chips that reach each other: the 120 healthy chips -> 7 copies; a dead-NIC chip
    # reaches 7 chips only, so joins no copy -> 128 - 112 = 16 idle
    (16, 1, False, 16),
])
def test_copies_on_a_large_rail_with_dead_nics(chips, tp, equal, idle):
    g = _rail()
    assert analysis.idle_chips(g, chips, tp=tp, equal_domains=equal) == idle
    sel = analysis.instance_chips(g, chips, tp=tp, equal_domains=equal)
    names = [g.endpoints[i] for i in sel]
    assert not set(names) & set(_DEAD_NICS) or chips <= 8
    for a in names:
        for b in names:
            if a != b:
                g.route(a, b)          # raises RoutingError if the pair cannot reach


@functools.cache
def _complements():
    # switch:70,planes=8: chip 2i keeps only the planes of S_i (the 35 four-plane sets that
    # hold plane 0), chip 2i+1 only its complement. Two chips reach each other iff they
    # share a plane: each chip misses exactly its twin, so the reach graph has 2^35 maximal
    # cliques (one chip of every pair), each of 35 chips
    sets = [s for s in itertools.combinations(range(8), 4) if 0 in s]
    f = topologies.build("switch:70,planes=8")
    links = []
    for i, s in enumerate(sets):
        links += [(f"chip{2 * i}", f"sw{p}") for p in range(8) if p not in s]
        links += [(f"chip{2 * i + 1}", f"sw{p}") for p in s]
    return f.without(links=links)


def test_many_maximal_cliques_are_placed_by_hand():
    g = _complements()
    # any 4 (or 8) chips without a twin pair reach pairwise, and 70 chips pack into 17 copies
    # of 4 (2 idle) and 8 copies of 8 (6 idle); 35 chips: all even chips (every set holds
    # plane 0) and all odd ones (two 4-sets of planes 1-7 meet) -> 2 copies, none idle
    assert [analysis.idle_chips(g, n) for n in (4, 35)] == [2, 0]
    assert analysis.idle_chips(g, 8, tp=8) == 6
    for n in (4, 8, 35):
        sel = analysis.instance_chips(g, n)
        assert len(sel) == n and not any(a // 2 == b // 2 for a, b in
                                         itertools.combinations(sel, 2))
    # 36 chips hold a twin pair whatever the choice: pricing its exchange names the pair
    sel = analysis.instance_chips(g, 36)
    with pytest.raises(RoutingError, match="must reach each other pairwise"):
        collective_seconds(g, "all-to-all", 1024.0, sel, collective=_free)


class _Free:
    time = 0.0


def _free(fabric, op, nbytes, **kwargs):
    return _Free()
