"""Review, session 29: lasting checks of counts review re-derived on its own walks.

* The Blackwell one-sided combine entries re-read by session 28's slope rule (moe, session 29
  train 2): blog18's ('one-sided', flashinfer 579435f9 moeA2ACombineKernel<bf16, BlockPolicy,
  8>, sm_100a, session 24's build) and TensorRT-LLM 1.3's
  ('one-sided-1.3', flashinfer 5e891c6b moeA2ACombineKernel<T, 8, false, 0, 0>, sm_100a BF16
  and FP8, review's build of session 26). Walked by review's own tools (not in the project:
  r1walk_rv.py for blog18's round 1 from the instruction after BAR.SYNC through the back edge,
  walk13_rv.py for a later round with perd18_rv.py's slot map, perd13_rv.py for 1.3's round 1
  with every pointer row alone on its line) at the model's Blackwell latencies: a metadata
  array's first load l2_hit, later max(l1_hit, its return); a constant line's first read
  const_l15, later max(const_l1, its fill); the lines read before BAR.SYNC present; peer loads
  (LDG.E.128) as trips; the walks are the cycles beyond them. Each latency's count on a chain
  is the walk's slope in that latency (the walk again with it one cycle longer); a late batch's count the least it adds over every
  pattern where it holds a valid slot (late18.py, late13.py: blog18's slot 7 adds the same at
  each of the 64 patterns).
"""

import dataclasses
import math

from fabric import EXCHANGE_LATENCY, exchange_kernel

_BW = {n: p.value / EXCHANGE_LATENCY["blackwell"]["cycle"].value
       for n, p in EXCHANGE_LATENCY["blackwell"].items() if n != "peer_load"}
#: the combine chain's round-1 loads charged outside round_reads: the send-index and
#: target-rank arrays' first loads and slot 0's row fetch
_CHAIN = {"l2_hit": 2, "const_l15": 1}


def _counts(*parts):
    out = {}
    for steps in parts:
        for name, n in steps:
            out[name] = out.get(name, 0) + n
    return {n: c for n, c in out.items() if c}


def _less(a, b):
    return {n: a.get(n, 0) - b.get(n, 0) for n in set(a) | set(b) if a.get(n, 0) != b.get(n, 0)}


def _row(kernel, width):
    return next(e for e in exchange_kernel(kernel).round_reads
                if e[0] == "blackwell" and e[2] == width)


#: blog18 sm_100a slopes: valid slots -> (round 1, a later round)
_SLOPES18 = {
    (0,): ({"l2_hit": 2, "l1_hit": 1, "const_l15": 2, "const_l1": 3},
           {"l1_hit": 2, "const_l1": 2}),
    (0, 1, 2, 3, 4, 5, 6): ({"l2_hit": 2, "l1_hit": 2, "const_l15": 4, "const_l1": 3},
                            {"l1_hit": 4, "const_l1": 3}),
    (0, 7): ({"l2_hit": 2, "l1_hit": 1, "const_l15": 3, "const_l1": 5},
             {"l1_hit": 2, "const_l1": 5}),
    (0, 1, 2, 3, 4, 5, 6, 7): ({"l2_hit": 2, "l1_hit": 2, "const_l15": 5, "const_l1": 5},
                               {"l1_hit": 4, "const_l1": 6}),
}


def test_s29_blog18_blackwell_entry_is_the_walks_slopes_and_its_late_slot_adds_the_least():
    _, top, width, fmin, ffull, flate, lmin, lfull, llate = _row("one-sided", 0)
    assert (top, width) == (8, 0)
    assert exchange_kernel("one-sided").late_batches(8, 2, "blackwell") == ((7,),)
    lone, six = _SLOPES18[(0,)], _SLOPES18[tuple(range(7))]
    assert _counts(fmin, _CHAIN.items()) == lone[0]
    assert _counts(ffull, _CHAIN.items()) == six[0]
    assert _counts(lmin) == lone[1] and _counts(lfull) == six[1]
    # slot 7 adds the same with slot 0 alone and with slots 0-6 (and at every pattern):
    # round 1 its row's L1.5 fetch (moe_exchange's late fetch) and two const_l1, a later
    # round three const_l1
    for i, late in ((0, flate[0]), (1, llate[0])):
        add = _less(_SLOPES18[(0, 7)][i], lone[i])
        assert add == _less(_SLOPES18[tuple(range(8))][i], six[i])
        assert _counts(late, (("const_l15", 1),) if i == 0 else ()) == add, i


#: blog18 walks (r1walk_rv / walk13_rv): valid slots -> (round 1 cycles beyond the trips, its
#: trips, a later round's, its trips); the patterns of least excess over the entry's loads at
#: each d (round 1 {0}, {0,7}, {0,1,7}, {0-2,7}, {0-3,7}, {0-3,5,7}, {0-5,7}, {0-7}; later
#: rounds {0,2,7} at d = 3, {0-4,7} at d = 6) and the entry's ends
_WALKS18 = {
    (0,): (1200.89, 1, 421.396, 1),
    (0, 7): (1326.184, 2, 462.49, 2),
    (0, 1, 7): (1342.184, 2, 478.49, 2),
    (0, 2, 7): (1374.082, 2, 471.49, 2),
    (0, 1, 2, 7): (1381.082, 2, 478.49, 2),
    (0, 1, 2, 3, 7): (1401.082, 2, 490.49, 2),
    (0, 1, 2, 3, 4, 7): (1434.082, 2, 503.49, 2),
    (0, 1, 2, 3, 5, 7): (1418.082, 2, 515.49, 2),
    (0, 1, 2, 3, 4, 5, 6): (1520.686, 1, 594.094, 1),
    (0, 1, 2, 3, 4, 5, 7): (1442.082, 2, 515.49, 2),
    (0, 1, 2, 3, 4, 5, 6, 7): (1645.98, 2, 635.188, 2),
}


def _charge(kern, slots):
    """Cycles the model charges beyond the trips: (round 1, a later round)."""
    late = float(7 in slots)
    cyc = EXCHANGE_LATENCY["blackwell"]["cycle"].value
    r1, r2 = (kern.round_read_latency(8, 2, "blackwell", n, len(slots), late)[0] / cyc
              for n in (1, 2))
    return r1 + 2 * _BW["l2_hit"] + (1 + late) * _BW["const_l15"], r2 - r1


def test_s29_blog18_blackwell_tables_are_the_walks_least_excess_and_charge_no_more():
    kern = exchange_kernel("one-sided")
    bare = dataclasses.replace(
        kern, round_cycles=tuple(e for e in kern.round_cycles if e[0] != "blackwell"))
    _, top, width, first, later = next(e for e in kern.round_cycles if e[0] == "blackwell")
    assert (top, width) == (8, 0)
    least = [[math.inf] * 8, [math.inf] * 8]
    for slots, (w1, n1, w2, n2) in _WALKS18.items():
        assert n1 == n2 == 1 + (7 in slots)                    # slot 7's own trip
        for i, (w, c) in enumerate(zip((w1, w2), _charge(bare, slots))):
            least[i][len(slots) - 1] = min(least[i][len(slots) - 1], w - c)
        for w, c in zip((w1, w2), _charge(kern, slots)):
            assert c <= w + 1e-6, (slots, w, c)
    for walked, table in zip(least, (first, later)):
        assert table == tuple(max(math.floor(round(min(walked[d:]), 6)), 0) for d in range(8))
    assert first == (190,) * 7 + (360,) and later == (274,) * 5 + (275, 275, 383)
    w1, _, w2, _ = _WALKS18[tuple(range(8))]
    c1, c2 = _charge(kern, tuple(range(8)))
    assert -1e-6 <= w1 - c1 < 1 and -1e-6 <= w2 - c2 < 1     # (walks kept to 3 decimals)


#: TensorRT-LLM 1.3 sm_100a slopes (round 1 with every pointer row alone on its 64-B line, the
#: full first batch's two rows 2, 3 sharing one): (width, valid slots) -> (round 1, later)
_SLOPES13 = {
    (0, (0,)): ({"l2_hit": 2, "l1_hit": 1, "const_l15": 1, "const_l1": 2},
                {"l1_hit": 2, "const_l1": 1}),
    (0, (0, 2, 3)): ({"l2_hit": 2, "l1_hit": 1, "const_l15": 2, "const_l1": 2},
                     {"l1_hit": 2, "const_l1": 1}),
    (1, (0,)): ({"l2_hit": 2, "l1_hit": 2, "const_l15": 2, "const_l1": 2},
                {"l1_hit": 4, "const_l1": 2}),
}
#: the least each late batch adds, per latency, over the patterns where it holds a valid slot
#: (round 1, later): BF16's (1, 4-7) nothing (least at {0, 1}; its row fetch off the chain);
#: FP8's (1, 2, 3) and (4-7)
_LATE13 = {
    0: (({}, {}),),
    1: (({"const_l15": 1, "const_l1": 1}, {"const_l1": 2}),
        ({"const_l15": 1}, {"const_l1": 1})),
}


def test_s29_trtllm13_blackwell_entries_are_the_walks_slopes_and_late_batches_their_least():
    kern = exchange_kernel("one-sided-1.3")
    firsts = {0: (0, 2, 3), 1: (0,)}            # the first batch: slot 0 and what is not late
    for width, full in firsts.items():
        _, top, _, fmin, ffull, flate, lmin, lfull, llate = _row("one-sided-1.3", width)
        batches = kern.late_batches(8, 2 if width == 0 else 1, "blackwell")
        assert top == 8 and set(range(8)) - {s for b in batches for s in b} == set(full)
        lone, whole = _SLOPES13[(width, (0,))], _SLOPES13[(width, full)]
        assert _counts(fmin, _CHAIN.items()) == lone[0], width
        assert _counts(ffull, _CHAIN.items()) == whole[0], width
        assert _counts(lmin) == lone[1] and _counts(lfull) == whole[1], width
        late = _LATE13[width]
        assert len(flate) == len(llate) == len(late) == len(batches)
        for (r1, r2), f, lt in zip(late, flate, llate):
            # round 1: the late fetch's const_l15 is moe_exchange's, beside the entry's steps;
            # where the walk adds none (BF16) the entry adds nothing (it cannot take one off)
            assert _counts(f) == _less(r1, {"const_l15": 1} if r1.get("const_l15") else {})
            assert _counts(lt) == r2
