"""Review, session 27: lasting checks of counts review re-derived on its own walks.

* TensorRT-LLM 1.3's one-sided combine, a LATER round (moe, session 26 train 2): flashinfer
  5e891c6b moeA2ACombineKernel<T, 8, false, 0, 0> built by review for sm_100a (nvcc 13.0,
  flashinfer's JIT flags and -DENABLE_BF16), thread 0 on the 16-B path, one pass of the loop
  (BF16 0x06d0-0x1fc0, FP8 e4m3 0x0710-0x45a0) walked by review's own walker
  (notes/review-tools/walk13_rv.py of session 27, its predicate-to-slot map read from the
  listings): the stall counts in issue order, each instruction after the scoreboards it waits
  for; the peer loads (LDG.E.128) as trips; the metadata loads l1_hit, the constant loads
  const_l1; a load of an invalid slot predicated off (free) and its branch body skipped. The
  same numbers as the second of two consecutive rounds. Walked cycles beyond the trips, per
  pattern of valid slots (each a distinct rank; slot 0 always valid), below.
* The one-sided dispatch's further lane passes (dispatch, session 26 train 3): review's
  clockwalk.py (session 26) of flashinfer 579435f9's last block, one against two passes of its
  per-peer loops: sm_100a +12.0 (recv_counters) +35.7 (flags) +90.4 (polls) = 138.1 cycles,
  sm_90a +20.0 +48.7 +74.7 = 143.4; the count is the least of the two.
"""

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
        # ... that spends the least excess (the third pattern) but for the count's rounding
        # down (under one cycle)
        assert excess[2] == min(excess) < 1.0, (width, excess)


def test_s27_trtllm13_later_round_counts_are_the_walks_least_excess():
    row = {(e[0], e[2]): e[3:] for e in exchange_kernel("one-sided-1.3").round_reads}
    for width, least in ((2, 372.6), (1, 226.7)):
        # BF16's entry is the generation's any-width one (width 0), as late_batches looks it up
        later_min, later_full = row.get(("blackwell", width), row["blackwell", 0])[3:5]
        for steps in (later_min, later_full):
            assert dict(steps).get("cycle") == int(least), (width, steps)
    # blog18's kernel keeps its own later-round count (session 24: 242)
    blog = {e[0]: e[3:] for e in exchange_kernel("one-sided").round_reads}["blackwell"]
    assert dict(blog[3])["cycle"] == dict(blog[4])["cycle"] == 242


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
