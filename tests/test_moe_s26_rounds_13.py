"""TensorRT-LLM 1.3's pulled combine: each later round pays the cycles its compiled loop issues
beyond the loads round_reads charges (session 26, moe; session 24's method on the 1.3 kernels).

flashinfer 5e891c6b (the port of TensorRT-LLM's 1.3-era kernels, flashinfer PR #3697: the fi3697
rows' release) moeA2ACombineKernel<T, 8, false, 0, 0> rebuilt for sm_100a with flashinfer's JIT
flags and -DENABLE_BF16, one later round walked in issue order at the stall counts (the metadata
loads l1_hit, the constant loads const_l1, an invalid slot's branch skipped, the peer loads as
trips) for every one of the 128 slot patterns (slot 0 valid), against what the 'blackwell' entries'
steps charge for the same pattern: at least 372.6 cycles more with a BF16 input (loop
0x06d0-0x1fc0) and 226.7 with an FP8 one (0x0710-0x45a0): ('cycle', 372) and ('cycle', 226) in
later_min and later_full. Round 1 with the set-up after BAR.SYNC, walked with the first loads'
latencies and the most favourable sharing of the 48-B pointer rows' 64-B constant lines (every row
after the first a constant-L1 hit): BF16 at least 189.9 cycles more, FP8 below its charge.
Session 27: one count per number of valid slots (round_cycles; the least over the patterns of that
many or more slots and, in round 1, over the placements of the pointer rows on constant lines:
review S27-R1); these tests check the tables against the walks. The Hopper builds have none.
Session 29: the entries re-read as the walks' slopes and the tables re-derived on them
(tests/test_moe_s29_blackwell.py).
"""

import dataclasses

import fidelity_heldout_moe
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import topologies
from analysis import moe_exchange
from fabric import EXCHANGE_LATENCY, exchange_kernel

_K = exchange_kernel("one-sided-1.3")
_BW = {n: p.value for n, p in EXCHANGE_LATENCY["blackwell"].items()}
_KEY = {2: 0, 1: 1}                # the entry's input-bytes key
#: input bytes per element -> round_cycles' (round 1, later round) tables, 1 .. 8 valid slots
_TABLE = {2: ((253, 253, 326, 342, 362, 389, 431, 475), (535, 535, 567, 594, 629, 672, 729, 788)),
          1: ((514, 514, 514, 646, 779, 920, 1162, 1348),
              (625, 625, 625, 761, 891, 1031, 1189, 1375))}
#: round 1's least excess per number of valid slots over the patterns and the rows' placements
#: (session 27's walk; session 29 against the entries re-read as the
#: walks' slopes, tests/test_moe_s29_blackwell.py)
_LEAST1 = {2: (430.8, 253.917, 326.829, 342.844, 362.858, 389.873, 431.283, 475.996),
           1: (898.8, 526.6, 514.298, 646.298, 779.694, 920.09, 1162.686, 1348.082)}


def _at(table, distinct):
    """A table's cycles at ``distinct`` ranks, linear between slot counts."""
    d = min(max(distinct, 1.0), 8.0)
    lo = int(d)
    return table[lo - 1] + (d - lo) * (table[min(lo, 7)] - table[lo - 1])
#: round 1 with its set-up (cycles beyond the trips), rows' lines most favourably shared: the
#: ends and the least (gwalk.py 'first' mode, rows_l1_after_first)
_WALK1 = {2: {(0,): 1287.3, (0, 4): 1230.3}, 1: {(0, 1, 7): 1654.0}}
#: one later round's walk (cycles beyond its peer trips) per set of valid slots, read from the
#: sm_100a SASS (session 26's walk): the ends and the least
_WALK = {2: {(0,): 676.7, (0, 1, 2, 3, 4, 5, 6, 7): 873.5, (0, 4): 619.7},
         1: {(0,): 1095.4, (0, 1, 2, 3, 4, 5, 6, 7): 1606.8, (0, 1, 7): 857.2}}
#: the later batches of each input width (fabric one-sided-1.3 late_pulls, 'blackwell')
_BATCHES = {2: ({1, 4, 5, 6, 7},), 1: ({1, 2, 3}, {4, 5, 6, 7})}


def _entry(kern, width):
    return next(e for e in kern.round_reads if e[0] == "blackwell" and e[2] == _KEY[width])


def _before(kern):
    """The profile before the counts: no round_cycles."""
    return dataclasses.replace(kern, round_cycles=())


def _later_charge(kern, width, slots):
    """Cycles a later round's steps charge for a token with valid ``slots``: the round reads
    of two rounds less those of one (each later batch that holds a valid slot counted)."""
    late = float(sum(1 for b in _BATCHES[width] if slots & b))
    two, one = (kern.round_read_latency(8, width, "blackwell", r, len(slots), late)[0]
                for r in (2, 1))
    return (two - one) / _BW["cycle"]


@pytest.mark.parametrize("width", [2, 1])
def test_the_later_rounds_carry_the_walks_least_excess(width):
    e = next(x for x in _K.round_cycles if x[0] == "blackwell" and x[2] == _KEY[width])
    assert (e[3], e[4]) == _TABLE[width]
    later = _TABLE[width][1]
    old = _before(_K)
    excess = {s: w - _later_charge(old, width, set(s)) for s, w in _WALK[width].items()}
    for s, v in excess.items():
        assert later[len(s) - 1] <= v
    # the least over all 128 patterns (session 26's count 372 / 226 against the entries read by
    # inspection; session 29's against the walks' slopes), and all 8 slots' own excess
    assert int(min(excess.values())) == min(later) == {2: 535, 1: 625}[width]
    assert int(excess[(0, 1, 2, 3, 4, 5, 6, 7)]) == later[7]
    src = dict(_K.sources)["round_reads"]
    assert "Session 26" in src and "372.6" in src and "226.7" in src
    assert "S27-R1" in dict(_K.sources)["round_cycles"]


def test_hopper_and_blog18_tables_are_their_own():
    assert {e[0] for e in _K.round_cycles} == {"blackwell"}
    k = exchange_kernel("one-sided")
    assert all((e[3], e[4]) not in _TABLE.values() for e in k.round_cycles)


@settings(max_examples=40, deadline=None)
@given(width=st.sampled_from([2, 1]), rounds=st.integers(0, 9), distinct=st.floats(1.0, 8.0),
       late=st.floats(0.0, 2.0))
def test_each_later_round_pays_it_once(width, rounds, distinct, late):
    """Reference: (rounds - 1) x the count, whatever the ranks and late trips; nothing without
    a later round."""
    new = _K.round_read_latency(8, width, "blackwell", rounds, distinct, late)[0]
    old = _before(_K).round_read_latency(8, width, "blackwell", rounds, distinct, late)[0]
    first, later = _TABLE[width]
    want = (max(rounds - 1, 0) * _at(later, distinct)
            + (rounds >= 1) * _at(first, distinct)) * _BW["cycle"]
    assert new - old == pytest.approx(want, rel=1e-9, abs=1e-18)


@pytest.mark.parametrize("degraded", [False, True])
@pytest.mark.parametrize("width,rounds", [(2, 4), (1, 2)])
def test_flashinfer_3697s_one_token_combines_move_by_it(width, rounds, degraded):
    """EP32 of GB200 NVL72, one token, BF16 (4 rounds) and FP8 (2 rounds) combines as the
    fi3697 rows express them, intact and with a cut link: the combine grows by (rounds - 1) x
    the count, the dispatch not at all."""
    f = topologies.build("gb200-nvl72")
    if degraded:
        a = f.endpoints[1]
        f = f.without(links=[(a, min(f.graph.neighbors(a), key=str))])
    kw = {"dispatch_bytes": 0.5 + 1 / 16, "combine_bytes": width, "routing": "balanced"}
    new, old = (moe_exchange(f, "deepseek-v3", 1, 32, kernel=x, **kw) for x in (_K, _before(_K)))
    first, later = _TABLE[width]                 # EP32, perfect router: all 8 slots valid
    want = ((rounds - 1) * later[7] + first[7]) * _BW["cycle"]
    assert new.combine - old.combine == pytest.approx(want, rel=1e-9)
    assert new.dispatch == old.dispatch


def test_the_rows_stay_fast():
    for rid, meas in (("fi3697-trtllm-ep32-bs1-bf16-combine", 28.45),
                      ("fi3697-trtllm-ep32-bs1-fp8-combine", 17.95)):
        got, _ = fidelity_heldout_moe.CASES[rid]({"gpus": 32})
        assert got < meas


def _first_charge(kern, width, slots):
    """Cycles the model charges on round 1 beyond its trips: the combine chain's two metadata L2
    loads and row fetch, the round-1 entry, one row fetch per later batch holding a valid slot."""
    late = float(sum(1 for b in _BATCHES[width] if slots & b))
    reads = kern.round_read_latency(8, width, "blackwell", 1, len(slots), late)[0]
    return (2 * _BW["l2_hit"] + (1 + late) * _BW["const_l15"] + reads) / _BW["cycle"]


@pytest.mark.parametrize("width", [2, 1])
def test_round_one_carries_the_least_excess_where_there_is_one(width):
    """Under session 26's most favourable sharing (every row after the first a constant-L1 hit)
    the walks reproduce (against session 26's entries BF16 {0, 4} 189.9 beyond the charges, FP8
    {0, 1, 7} 95.9 below them; against session 29's, re-read as the walks' slopes, 338.1 and
    514.3 beyond); but the rows' real placements may go lower (rank 0's row on the output
    pointer's line, rank 63's on a flag row's line, review S27-R1), so round 1's table is the
    least over the placements too: per number of valid slots the least over that many or more,
    rounded down, 0 below zero."""
    old = _before(_K)
    excess = {s: w - _first_charge(old, width, set(s)) for s, w in _WALK1[width].items()}
    least = min(excess.values())
    if width == 2:
        assert least == pytest.approx(338.1, abs=0.05)
        assert _LEAST1[2][1] < least          # {0, 4} with slot 0 on rank 0, slot 4 on rank 63
    else:
        assert least == pytest.approx(514.3, abs=0.05) == _LEAST1[1][2]
    want = tuple(max(int(min(_LEAST1[width][d:])), 0) for d in range(8))
    assert _TABLE[width][0] == want
