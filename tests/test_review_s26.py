"""Review, session 26: lasting checks of what review re-derived on its own reading.

* Round 1 of the one-sided combine with the code between its barrier and it (moe, train 1):
  flashinfer 579435f9 moeA2ACombineKernel<bf16, BlockPolicy, 8>, session 24's sm_100a build,
  thread 0 on the 16-B path from the instruction after BAR.SYNC (0x0510) through round 1's back
  edge (0x1290), walked by review's own walker (session 26's, not in the project):
  the stall counts in issue order, each instruction after the scoreboards it waits for; the peer
  loads (LDG.E.128) as trips; a metadata load l2_hit for the first of its array, l1_hit (or the
  first's return) after; a constant load const_l15 at the first read of its 64-B line, const_l1
  after; the lines warp 0 reads before the barrier present (the completion flags' rows are at
  0x13c0 + 8 x rank, not the output pointer's line 0x380); predicated-off loads load nothing.
  Walked cycles beyond the trips, per pattern of valid slots (each valid slot a distinct rank;
  slot 0 always valid): {0} 1,200.9, {0..7} 1,646.0, {0..5, 7} 1,442.1 (the least excess over
  the model's charges), {0, 4, 6} 1,520.7 (the most). What the model charges round 1: the
  combine chain's round-1 loads (the send index and the target rank, l2_hit each, the row's
  const_l15), the 'blackwell' round_reads entry (round_read_latency, linear in distinct ranks)
  and, with slot 7 valid (its later batch), the late row's const_l15.
* The one-sided dispatch's own code beyond the loads its chain charges (dispatch, trains 2-3):
  flashinfer 579435f9, session 24's sm_100a and session 25's sm_90a builds, walked by review's
  own issue-clock walker (clockwalk.py, not in the project: the stall counts in issue order, the
  chain's loads as trips hiding what issues under them, a waited LDC const_l1 from its issue):
  moeA2APrepareDispatchKernel thread 0 to its EXIT's issue sm_90a 89.4 / sm_100a 121.1; the
  dispatch kernel's last block, lane 0, from the copy's BAR.SYNC to the release fence 283.7 /
  233.1; moeA2ASanitizeExpertIdsKernel, a valid token to its EXIT's issue 164.7 / 180.7. Each
  count is the least of the two.
"""

from fabric import EXCHANGE_LATENCY, exchange_kernel

#: review's round-1 walk (session 26): (distinct ranks, later batches with a valid slot, walked
#: cycles beyond the trips) for the patterns {0}, {0..7}, {0..5, 7}, {0, 4, 6}
_ROUND_ONE_WALK = ((1, 0, 1200.9), (8, 1, 1646.0), (7, 1, 1442.1), (3, 0, 1520.7))


def _round_one_charge(kern, distinct, late):
    """Cycles the model charges round 1 of a BF16 one-sided combine on Blackwell."""
    lat = EXCHANGE_LATENCY["blackwell"]
    reads, _ = kern.round_read_latency(8, 2, "blackwell", 1, distinct, late)
    loads = 2 * lat["l2_hit"].value + (1 + late) * lat["const_l15"].value
    return (reads + loads) / lat["cycle"].value


def test_s26_round_one_charges_at_most_the_walk_and_the_least_excess_is_spent():
    kern = exchange_kernel("one-sided")
    # the chain's round-1 loads the charge above takes: send index, target rank, the row
    assert kern.chain[1][-4:-1] == (("l2_hit", "one"), ("l2_hit", "one"), ("const_l15", "one"))
    assert {e[0]: e[3] for e in kern.late_pulls}["blackwell"] == ((7,),)
    excess = [walked - _round_one_charge(kern, d, late) for d, late, walked in _ROUND_ONE_WALK]
    # a lower bound at every walked pattern ...
    assert min(excess) >= 0
    # ... that spends the least excess but for the count's rounding down (under one cycle),
    # since session 27 (round_cycles, per number of valid slots: the least over d or more)
    # at both ends it charges: {0..5, 7} (d = 7: 298.5 cycles before the output line's
    # fetch) and {0..7} (d = 8)
    assert excess[2] < 1.0 and excess[1] < 1.0


def test_s26_round_one_count_is_the_least_excess_less_the_output_rows_fetch():
    lat = EXCHANGE_LATENCY["blackwell"]
    c15 = lat["const_l15"].value / lat["cycle"].value
    kern = exchange_kernel("one-sided")
    row = {e[0]: e[3:] for e in kern.round_reads}["blackwell"]
    first_min, first_full = row[0], row[1]
    # the round's issued cycles are round_cycles' round-1 table since session 27: 193 =
    # int(298.5 - c15) for up to 7 valid slots, the d = 8 walk's own least beyond that; since
    # session 29 (moe: the entry's slot-0 end holds one const_l1 more, the walk's slope) the
    # least at 7 slots is 1/7 of a const_l1 lower: 190
    c1 = lat["const_l1"].value / lat["cycle"].value
    spent = {e[0]: e[3] for e in kern.round_cycles}["blackwell"]
    assert int(298.5 - c1 / 7 - c15) == 190 and spent[:7] == (190,) * 7 and spent[7] > 190
    assert not [s for s in first_min + first_full if s[0] == "cycle"]
    # the output pointer's line is charged once more than before session 26 in both
    assert dict(first_min)["const_l15"] == 1 and dict(first_full)["const_l15"] == 3


#: review's walks of the one-sided dispatch's own code (session 26): count -> (sm_90a, sm_100a)
_DISPATCH_WALK = {"prepare_cycles": (89.4, 121.1), "release_cycles": (283.7, 233.1),
                  "sanitize_cycles": (164.7, 180.7)}


def test_s26_dispatch_counts_are_the_least_walked_and_charged_once():
    for name in ("one-sided", "one-sided-1.3"):
        kern = exchange_kernel(name)
        for count, walked in _DISPATCH_WALK.items():
            assert kern.cycle(count, 0) == int(min(walked)), (name, count)
            # the combine has its own staging kernel's count (294, session 25) and no other
            assert kern.cycle(count, 1) == (294 if count == "prepare_cycles" else 0), count
            steps = [s for s in kern.chain[0] if s == ("cycle", count)]
            assert len(steps) == 1, (name, count)
