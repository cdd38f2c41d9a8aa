"""The one-sided combine's round 1, with the code between the block's barrier and it, pays what
its compiled code spends beyond the loads the model charges there (session 26, moe).

flashinfer 579435f9 moeA2ACombineKernel<bf16, BlockPolicy, 8> (blog18's kernel) for sm_100a
(session 24's build, flashinfer's JIT flags, nvcc 13.0, cuobjdump 13.5), walked in issue order at
the stall counts from the instruction after BAR.SYNC (0x0510: the 16-B width test, the output
row's address, the metadata bases) to round 1's back edge (0x1290), every load at the module's
latency and the peer loads as trips. Beyond what the chain's round-1 steps, the round-1 entry and
the late batch's row fetch charge, every one of the 128 slot patterns spends at least 298.5
cycles; on that path the first read of the output pointer's constant line (LDC.64 c[0x380],
waited) is charged nowhere: ('const_l15', 1) in the 'blackwell' entry's first_min and
first_full, and 193 cycles. Session 27: the cycles per number of valid slots (round_cycles'
round-1 table, the least over the patterns of that many or more slots; tests/test_moe_s27_round_cycles.py).
Session 29: the entry's chains read as the walk's slopes (one more const_l1 with slot 0 alone, so
1/7 of it at 7 slots: the least excess 298.5 -> 295.6), the table 190 up to 7 slots, 360 with all 8
(tests/test_moe_s29_blackwell.py). The sm_90a build's walk was below the entry's
charges for some patterns (nothing added; session 28 re-read the Hopper entry with its own table:
tests/test_moe_s28_hopper.py); TensorRT-LLM 1.3's kernels have their own tables.
"""

import dataclasses

import fidelity_moe
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from moe_cycle_counts import gb200_one_token

from analysis import moe_exchange
from fabric import EXCHANGE_LATENCY, exchange_kernel

_K = exchange_kernel("one-sided")
_BW = {n: p.value for n, p in EXCHANGE_LATENCY["blackwell"].items()}
#: the walk (cycles beyond its peer trips) from after BAR.SYNC through round 1, per set of valid
#: slots (slot 0 always: the own rank under the perfect router), read from the sm_100a SASS
#: (session 26's walk): the all-valid and one-rank ends, the least of the
#: 128 patterns ({0-5, 7}) and two between
_WALK = {(0,): 1200.9, (0, 1, 2, 3, 4, 5, 6, 7): 1646.0, (0, 1, 2, 3, 4, 5, 7): 1442.1,
         (0, 7): 1326.2, (0, 1, 2, 3, 4, 5, 6): 1520.7}
_FIRST = (190, 190, 190, 190, 190, 190, 190, 360)     # round_cycles' round 1, 1 .. 8 slots


def _count(distinct):
    """Seconds round 1's count adds for a token of ``distinct`` ranks: the output row's L1.5 fetch
    and the round-1 table's cycles there (linear between slot counts)."""
    d = min(max(distinct, 1.0), 8.0)
    lo = int(d)
    cyc = _FIRST[lo - 1] + (d - lo) * (_FIRST[min(lo, 7)] - _FIRST[lo - 1])
    return _BW["const_l15"] + cyc * _BW["cycle"]


def _row(kern, arch):
    return next(e for e in kern.round_reads if e[0] == arch)


def _before(kern):
    """The profile as it was before the count: the output row's fetch out of the Blackwell
    entry, the round-1 cycles out of its round_cycles entry (Hopper's own table, session 28,
    stays)."""
    def drop(steps):
        out = []
        for name, count in steps:
            if name == "const_l15":
                count -= 1
            if count:
                out.append((name, count))
        return tuple(out)
    rows = tuple((*e[:3], drop(e[3]), drop(e[4]), *e[5:]) if e[0] == "blackwell" else e
                 for e in kern.round_reads)
    cycles = tuple((a, k, w, (0,) * k if a == "blackwell" else first, later)
                   for a, k, w, first, later in kern.round_cycles)
    return dataclasses.replace(kern, round_reads=rows, round_cycles=cycles)


def _charged(kern, slots):
    """Cycles the model charges on round 1 beyond its trips for a token whose valid slots are
    ``slots``: the combine chain's two metadata L2 loads and row fetch, the round-1 entry, the
    late batch's row fetch (slot 7: the 'blackwell' late batch)."""
    late = 1.0 if 7 in slots else 0.0
    reads, _ = kern.round_read_latency(8, 2, "blackwell", 1, len(slots), late)
    return (2 * _BW["l2_hit"] + (1 + late) * _BW["const_l15"] + reads) / _BW["cycle"]


def test_round_one_carries_the_walks_least_excess():
    assert next(e for e in _K.round_cycles if e[0] == "blackwell")[3] == _FIRST
    old = _before(_K)
    excess = {s: w - _charged(old, s) for s, w in _WALK.items()}
    least = min(excess.values())
    # session 26's 298.5 against its entry; session 29's slope reading charges one const_l1 more
    # with slot 0 alone (1/7 of it at the least pattern's 7 slots)
    assert least == pytest.approx(298.5 - _BW["const_l1"] / _BW["cycle"] / 7, abs=0.05)
    # the count charged is the least excess, a load it holds named as such (up to 7 slots; the
    # least over all 128 patterns is this one, {0-5, 7}); with all 8 valid the one pattern's own
    full = excess[(0, 1, 2, 3, 4, 5, 6, 7)] - _BW["const_l15"] / _BW["cycle"]
    assert int(least - _BW["const_l15"] / _BW["cycle"]) == _FIRST[6] == 190
    assert int(full) == _FIRST[7] == 360
    # after the count, no pattern is charged more than its walk
    assert all(w - _charged(_K, s) >= 0 for s, w in _WALK.items())
    src = dict(_K.sources)["round_reads"]
    assert "Session 26" in src and "298.5" in src and "c[0x0][0x380]" in src


def test_only_the_blackwell_entry_carries_it():
    # Hopper's round-1 table is its own walk's (session 28), not this count
    assert [e[3] for e in _K.round_cycles if e[3] == _FIRST] == [_FIRST]
    assert next(e for e in _K.round_cycles if e[0] == "hopper")[3] != _FIRST
    # TensorRT-LLM 1.3's kernels carry their own round-1 tables (test_moe_s27_round_cycles)
    k13 = exchange_kernel("one-sided-1.3")
    assert all(e[3] != _FIRST for e in k13.round_cycles)


@settings(max_examples=40, deadline=None)
@given(rounds=st.integers(0, 9), distinct=st.floats(1.0, 8.0), late=st.floats(0.0, 1.0))
def test_every_pull_pays_it_once(rounds, distinct, late):
    """Whatever the rounds, ranks and late trips, round 1 (and its set-up) comes once: the pull's
    round reads grow by the count's seconds exactly, and not at all without a round."""
    new = _K.round_read_latency(8, 2, "blackwell", rounds, distinct, late)[0]
    old = _before(_K).round_read_latency(8, 2, "blackwell", rounds, distinct, late)[0]
    want = _count(distinct) if rounds >= 1 else 0.0
    assert new - old == pytest.approx(want, rel=1e-9, abs=1e-18)
    hop = _K.round_read_latency(8, 2, "hopper", rounds, distinct, late)[0]
    assert hop == _before(_K).round_read_latency(8, 2, "hopper", rounds, distinct, late)[0]


@pytest.mark.parametrize("degraded", [False, True])
def test_a_one_token_combine_moves_by_it(degraded):
    """EP8, one BF16 token on GB200 NVL72 (round trips bind), intact and with a cut link: the
    combine grows by the count, the dispatch does not move."""
    new = gb200_one_token(_K, degraded)
    old = gb200_one_token(_before(_K), degraded)
    assert new.combine - old.combine == pytest.approx(_count(8), rel=1e-9)
    assert new.combine_phase.pull_latency - old.combine_phase.pull_latency == pytest.approx(
        _count(8), rel=1e-9)
    assert new.dispatch == old.dispatch


def test_the_check_rows_stay_fast_and_move_up():
    """trtllm-ep8-bs1-combine (31 us measured) and -bs16 (32.6 us): both still fast, both up by
    the count (all 8 slots valid: 0.23 us)."""
    f = fidelity_moe.nvl72()
    for tokens, rid, meas in ((1, "trtllm-ep8-bs1-combine", 31.0),
                              (16, "trtllm-ep8-bs16-combine", 32.6)):
        got, _ = fidelity_moe.CASES[rid]({"gpus": 8})
        assert got < meas
        new, old = (moe_exchange(f, "deepseek-v3", tokens, 8, kernel=x, dispatch_bytes=2,
                                 combine_bytes=2, routing="balanced")
                    for x in (_K, _before(_K)))
        assert new.combine - old.combine == pytest.approx(_count(8), rel=1e-9)
