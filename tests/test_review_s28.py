"""Review, session 28: lasting checks of counts review re-derived on its own walks.

* blog18's one-sided combine on Hopper (moe, session 28 train 1: the 'hopper' round_reads entry
  and a Hopper round_cycles table): flashinfer 579435f9 moeA2ACombineKernel<bf16, BlockPolicy,
  8> for sm_90a (session 25's build, listing of session 27), walked by review's own
  walker (session 28's, not in the project) with the predicate-to-slot map review read from
  the listing: the loop 0x29f0-0x39c0 has no branch, every slot's loads predicated (P4, P3, P2
  slots 0-2; P1 slot 3, then 5 from 0x3170, then 7 from 0x34f0, each time after a carry write;
  P0 slot 4, then 6 from 0x3330); thread 0 on the 16-B path. Round 1 from the instruction after
  BAR.SYNC (0x05f0-0x0680, then 0x2950-0x39c0): a metadata array's first load l2_hit, later
  max(l1_hit, its return); a constant line's first read const_l15, later max(const_l1, its fill);
  the lines read before BAR.SYNC present (0x0, 0x200, 0x1240-0x1440: c[0x1468]/c[0x1474] on
  0x1440); the pointer rows c[0x250 + 64 x rank] each alone on its line. A later round
  0x29f0-0x39c0 (metadata l1_hit, constants const_l1). Peer loads (LDG.E.128) as trips; the
  walks below are the cycles beyond them at Hopper's latencies. Each latency's count on a chain
  is the walk's slope in that latency (review's own probe: the walk again with that latency one
  cycle longer).
"""

import dataclasses
import math

from fabric import EXCHANGE_LATENCY, exchange_kernel

_K = exchange_kernel("one-sided")
_HOP = {n: p.value / EXCHANGE_LATENCY["hopper"]["cycle"].value
        for n, p in EXCHANGE_LATENCY["hopper"].items() if n != "peer_load"}

#: review's walks (perd90_rv.py): valid slots -> (round 1 cycles beyond the trips, its trips,
#: a later round's, its trips); per d the patterns of least excess over the entry's loads
#: (round 1 {0}, {0,4}, {0,1,4}, {0,1,3,4}, {0-4}, {0-5}, {0-6}, {0-7}; later rounds {0,2,4}
#: and {0,2,3,4} at d = 3, 4) and the two ends of the entry ({0}, {0-3})
_WALKS = {
    (0,): (1216.698, 1, 556.698, 1),
    (0, 4): (1020.698, 2, 360.698, 2),
    (0, 1, 4): (1024.698, 2, 364.698, 2),
    (0, 2, 4): (1093.596, 2, 360.698, 2),
    (0, 1, 2, 3): (1293.596, 1, 560.698, 1),
    (0, 1, 3, 4): (1093.596, 2, 364.698, 2),
    (0, 2, 3, 4): (1093.596, 2, 360.698, 2),
    (0, 1, 2, 3, 4): (1097.596, 2, 364.698, 2),
    (0, 1, 2, 3, 4, 5): (1260.494, 2, 443.396, 2),
    (0, 1, 2, 3, 4, 5, 6): (1516.090, 2, 614.792, 2),
    (0, 1, 2, 3, 4, 5, 6, 7): (1669.686, 2, 684.188, 2),
}

#: the walks' slopes (cycles per cycle of each latency): valid slots -> (round 1, later round);
#: round 1 holds the combine chain's two metadata L2 loads and one row fetch (charged outside
#: round_reads)
_SLOPES = {
    (0,): ({"l2_hit": 2, "const_l15": 1, "l1_hit": 2}, {"l1_hit": 3, "const_l1": 1}),
    (0, 1, 2, 3): ({"l2_hit": 2, "const_l15": 2, "l1_hit": 2}, {"l1_hit": 3, "const_l1": 1}),
    # the late batch with slot 4 its only valid slot: no load beyond slot 0's
    (0, 4): ({"l2_hit": 2, "const_l15": 1}, {"l1_hit": 1, "const_l1": 1}),
    (0, 1, 2, 3, 4, 5, 6, 7): ({"l2_hit": 2, "const_l15": 5, "const_l1": 2, "l1_hit": 3},
                               {"l1_hit": 4, "const_l1": 6}),
}
_CHAIN = {"l2_hit": 2, "const_l15": 1}


def _counts(*parts):
    out = {}
    for steps in parts:
        for name, n in steps:
            out[name] = out.get(name, 0) + n
    return out


def _row():
    return next(e for e in _K.round_reads if e[0] == "hopper")


def test_s28_hopper_entry_is_the_walks_chain_at_each_end_and_its_late_batch_adds_none():
    _, top, width, fmin, ffull, flate, lmin, lfull, llate = _row()
    assert (top, width) == (8, 0) and _K.late_batches(8, 2, "hopper") == ((4, 5, 6, 7),)
    assert _counts(fmin, _CHAIN.items()) == _SLOPES[(0,)][0]
    assert _counts(ffull, _CHAIN.items()) == _SLOPES[(0, 1, 2, 3)][0]
    assert _counts(lmin) == _SLOPES[(0,)][1] and _counts(lfull) == _SLOPES[(0, 1, 2, 3)][1]
    # the late batch's steps are its least pattern's: {0, 4} adds no load to either chain
    assert flate == ((),) and llate == ((),)
    for i in (0, 1):
        lone, four = _SLOPES[(0,)][i], _SLOPES[(0, 4)][i]
        assert all(four.get(n, 0) <= lone[n] for n in set(lone) | set(four)), i
    # the full batch's further loads are in the all-8 cycle counts, not charged as loads
    full = _SLOPES[(0, 1, 2, 3, 4, 5, 6, 7)]
    assert sum(full[0].values()) > sum(_SLOPES[(0, 1, 2, 3)][0].values())


def _charge(kern, slots):
    """Cycles the model charges beyond the trips: (round 1, a later round)."""
    late = float(any(s in slots for s in (4, 5, 6, 7)))
    cyc = EXCHANGE_LATENCY["hopper"]["cycle"].value
    r1, r2 = (kern.round_read_latency(8, 2, "hopper", n, len(slots), late)[0] / cyc
              for n in (1, 2))
    return r1 + 2 * _HOP["l2_hit"] + (1 + late) * _HOP["const_l15"], r2 - r1


def test_s28_hopper_tables_are_the_walks_least_excess_and_charge_no_more_than_a_walk():
    bare = dataclasses.replace(
        _K, round_cycles=tuple(e for e in _K.round_cycles if e[0] != "hopper"))
    _, top, width, first, later = next(e for e in _K.round_cycles if e[0] == "hopper")
    assert (top, width) == (8, 0)
    least = [[math.inf] * 8, [math.inf] * 8]
    for slots, (w1, n1, w2, n2) in _WALKS.items():
        assert n1 == n2 == 1 + any(s >= 4 for s in slots)      # the late batch's trip
        walked = (w1, w2)
        for i, (w, c) in enumerate(zip(walked, _charge(bare, slots))):
            least[i][len(slots) - 1] = min(least[i][len(slots) - 1], w - c)
        # with the tables, every walked pattern is charged at most its walk ...
        for w, c in zip(walked, _charge(_K, slots)):
            assert c <= w + 1e-6, (slots, w, c)
    for walked, table in zip(least, (first, later)):
        assert table == tuple(max(math.floor(round(min(walked[d:]), 6)), 0) for d in range(8))
    # ... and all eight valid within a cycle of it (the count rounded down)
    w1, _, w2, _ = _WALKS[tuple(range(8))]
    c1, c2 = _charge(_K, tuple(range(8)))
    assert 0 <= w1 - c1 < 1 and 0 <= w2 - c2 < 1
