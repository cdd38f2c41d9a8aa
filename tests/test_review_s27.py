"""Review, session 27: lasting checks of counts review re-derived on its own walks.

* TensorRT-LLM 1.3's one-sided combine, a LATER round (moe, session 26 train 2): flashinfer
  5e891c6b moeA2ACombineKernel<T, 8, false, 0, 0> built by review for sm_100a (nvcc 13.0,
  flashinfer's JIT flags and -DENABLE_BF16), thread 0 on the 16-B path, one pass of the loop
  (BF16 0x06d0-0x1fc0, FP8 e4m3 0x0710-0x45a0) walked by review's own walker
  (session 27's, not in the project; its predicate-to-slot map read from the
  listings): the stall counts in issue order, each instruction after the scoreboards it waits
  for; the peer loads (LDG.E.128) as trips; the metadata loads l1_hit, the constant loads
  const_l1; a load of an invalid slot predicated off (free) and its branch body skipped. The
  same numbers as the second of two consecutive rounds. Walked cycles beyond the trips, per
  pattern of valid slots (each a distinct rank; slot 0 always valid), below.
* The one-sided dispatch's further lane passes (dispatch, session 26 train 3): review's
  clockwalk.py (session 26) of flashinfer 579435f9's last block, one against two passes of its
  per-peer loops: sm_100a +12.0 (recv_counters) +35.7 (flags) +90.4 (polls) = 138.1 cycles,
  sm_90a +20.0 +48.7 +74.7 = 143.4; the count is the least of the two.
* The one-sided combine's barrier lane passes (moe, session 27): review's clockwalk.py of block
  0, lane 0, one against two and three passes of the flag-store loop and the poll loop (every
  poll finding its flag at once; the poll a trip, every waited constant load const_l1, lower
  than moe's line-tracking walk): flashinfer 579435f9 moeA2ACombineKernel<bf16, BlockPolicy, 8>
  sm_90a (session 25's build, 0x02e0-0x05b0) 165.1 / 288.5 / 411.9 cycles, +123.4 a pass (the
  flag-store loop alone +48.7); sm_100a (session 24's build, 0x01e0-0x04b0) 173.8 / 326.6 /
  479.4, +152.8; TensorRT-LLM 1.3's (5e891c6b sm_100a, 0x0230-0x0500) +152.8. One trip (the
  poll) a pass in each.
"""

import itertools

from fabric import EXCHANGE_LATENCY, exchange_kernel

#: review's later-round walks (session 27): input bytes -> ((distinct ranks, later batches
#: holding a valid slot, walked cycles beyond the trips), ...) for the patterns named
_LATER_WALK = {
    2: ((1, 0, 676.7),          # {0}
        (8, 1, 873.5),          # {0..7}
        (2, 1, 619.7)),         # {0, 4}: the least excess over all 128 patterns
    1: ((1, 0, 1095.4),         # {0}
        (8, 2, 1606.8),         # {0..7}
        (3, 2, 857.2),          # {0, 1, 7}: the least excess
        (4, 1, 1717.6)),        # {0, 1, 2, 3}: the most
}


def _later_charge(kern, width, distinct, late):
    """Cycles the model charges one later round of a 1.3 combine on Blackwell (top-8)."""
    lat = EXCHANGE_LATENCY["blackwell"]
    two, _ = kern.round_read_latency(8, width, "blackwell", 2, distinct, late)
    one, _ = kern.round_read_latency(8, width, "blackwell", 1, distinct, late)
    return (two - one) / lat["cycle"].value


def test_s27_trtllm13_later_rounds_charge_at_most_the_walk_and_spend_the_least_excess():
    kern = exchange_kernel("one-sided-1.3")
    # the later batches the walks found (BF16 one, FP8 two)
    assert kern.late_batches(8, 2, "blackwell") == ((1, 4, 5, 6, 7),)
    assert kern.late_batches(8, 1, "blackwell") == ((1, 2, 3), (4, 5, 6, 7))
    for width, walks in _LATER_WALK.items():
        excess = [walked - _later_charge(kern, width, d, late) for d, late, walked in walks]
        # a lower bound at every walked pattern ...
        assert min(excess) >= 0, (width, excess)
        # ... that spends the least excess but for the count's rounding down (under one
        # cycle) at the patterns the per-slot-count table (round_cycles, session 27: the least
        # over d or more valid slots) takes: {0..7} (d = 8) and the all-pattern least (the
        # third: BF16 {0, 4}, FP8 {0, 1, 7})
        assert excess[1] < 1.0 and excess[2] < 1.0, (width, excess)


#: review's per-d walks (session 27, perd13_rv.py: walk13_rv's later round; round 1 from
#: 0x0570 over every pointer-row placement: a slot on rank 0 (the output pointer's line
#: 0x380), one on rank 63 (completion_flags[0]'s line 0xf80, read before the barrier), ranks
#: 4m+3 / 4m+4 sharing a line): the least excess over the model's charges without cycle steps
#: among the patterns of d = 1..8 valid slots, per (input bytes, round)
#: (session 27, against the entries read by inspection: BF16 later 539.3 372.6 400.3 423.0 453.7
#: 493.1 545.2 600.6, FP8 later 873.3 406.5 226.7 362.7 492.1 632.5 790.9 976.3, BF16 first
#: 451.5 105.7 178.6 194.6 214.7 241.7 283.1 327.8, FP8 first 971.7 252.3 -95.9 36.1 169.5
#: 309.9 552.5 737.9; session 29, moe: against the entries re-read as the walks' slopes,
#: tests/test_moe_s29_blackwell.py, below)
_PER_D_WALK = {
    (2, "later"): (592.0, 535.0, 567.0, 594.0, 629.0, 672.698, 729.094, 788.792),
    (1, "later"): (926.0, 638.0, 625.698, 761.698, 891.094, 1031.49, 1189.886, 1375.282),
    (2, "first"): (430.8, 253.917, 326.829, 342.844, 362.858, 389.873, 431.283, 475.996),
    (1, "first"): (898.8, 526.6, 514.298, 646.298, 779.694, 920.09, 1162.686, 1348.082),
}


def test_s27_trtllm13_round_tables_are_the_walks_least_excess_over_d_or_more_slots():
    kern = exchange_kernel("one-sided-1.3")
    row = {(e[0], e[2]): e[3:] for e in kern.round_cycles}
    for (width, which), walked in _PER_D_WALK.items():
        # BF16's entry is the generation's any-width one (width 0), as late_batches finds it
        first, later = row.get(("blackwell", width), row.get(("blackwell", 0)))
        want = tuple(max(int(min(walked[d:])), 0) for d in range(8))
        assert (later if which == "later" else first) == want, (width, which)
    # the all-pattern least is the table's least: 372 / 226 (later rounds) against session
    # 26's entries, 535 / 625 against session 29's
    assert min(row["blackwell", 0][1]) == 535 and min(row["blackwell", 1][1]) == 625
    # the loads stay in round_reads, the issued cycles left them
    assert not [s for e in kern.round_reads for steps in e[3:5] + e[6:8] for s in steps
                if s[0] == "cycle"]


#: review's walks of one further lane pass of the dispatch's last block (session 26):
#: (recv_counters loop, completion flags, polls) cycles, per build
_LANE_PASS_WALK = {"sm_90a": (20.0, 48.7, 74.7), "sm_100a": (12.0, 35.7, 90.4)}


def test_s27_dispatch_lane_pass_count_is_the_least_walked_and_charged_once():
    walked = {b: round(sum(parts), 1) for b, parts in _LANE_PASS_WALK.items()}
    assert walked == {"sm_90a": 143.4, "sm_100a": 138.1}
    for name in ("one-sided", "one-sided-1.3"):
        kern = exchange_kernel(name)
        assert kern.cycle("lane_pass_cycles", 0) == int(min(walked.values())) == 138, name
        steps = [s for s in kern.chain[0] if s == ("cycle", "lane_pass_cycles")]
        assert len(steps) == 1, name


#: review's walks of one further lane pass of the combine's barrier (session 27): build ->
#: cycles (1, 2, 3 passes) of block 0's lane 0 through the flag-store and poll loops
_COMBINE_PASS_WALK = {"sm_90a": (165.1, 288.5, 411.9), "sm_100a": (173.8, 326.6, 479.4)}


def test_s27_combine_lane_pass_count_is_the_least_walked_and_charged_once():
    per_pass = set()
    for build, walked in _COMBINE_PASS_WALK.items():
        steps = {round(b - a, 1) for a, b in itertools.pairwise(walked)}
        assert len(steps) == 1, build              # every further pass the same
        per_pass |= steps
    assert per_pass == {123.4, 152.8}
    for name in ("one-sided", "one-sided-1.3"):
        kern = exchange_kernel(name)
        # the combine's own count (its table), not the dispatch's 138
        assert kern.cycle("lane_pass_cycles", 1) == int(min(per_pass)) == 123, name
        assert kern.cycle("lane_pass_cycles", 0) == 138, name
        chain = kern.chain[1]
        assert chain.count(("cycle", "lane_pass_cycles")) == 1, name
        # beside the poll's one l2_hit a further pass (the walks' one trip a pass)
        assert chain.count(("l2_hit", "lane_passes")) == 1, name
