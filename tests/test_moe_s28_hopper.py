"""blog18's combine as compiled for Hopper: the 'hopper' round_reads entry and a Hopper round_cycles
table, re-derived together (session 28, moe).

flashinfer 579435f9 moeA2ACombineKernel<bf16, BlockPolicy, 8> for sm_90a (session 25's build
a2a90.o, its listing of session 26), walked with session 26's rules (fastwalk.py over the sm_90a
path, session 28) at Hopper's latencies: the cycles beyond the peer trips
of round 1 (from the instruction after BAR.SYNC) and of a later round, for each of the 128 slot
patterns (slot 0 valid), below. The entry's loads are the chains of its two ends (each latency's
count = the walk's slope in it); the late batch (slots 4-7) is charged in every pattern where it
holds a valid slot, so its steps are its least: none ({0, 4}: slot 4's loads go out before the
first wait). The table holds per d valid slots the least excess over the patterns of d or more
valid slots (session 27's rule). Before, the entry charged the full late batch's loads, {0, 1, 4}
123.1 cycles more than its walk, and there was no table.
"""

import dataclasses
import itertools
import math

import pytest
from degrade import built, degrade
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from analysis import moe_exchange
from fabric import EXCHANGE_LATENCY, FabricError, SpecError, exchange_kernel

_K = exchange_kernel("one-sided")
_HOP = {n: p.value for n, p in EXCHANGE_LATENCY["hopper"].items()}
#: (round 1, a later round): cycles beyond the peer trips of the sm_90a walk, for the slot
#: pattern whose bit i (i = 0 .. 6) says slot i + 1 is valid (slot 0 always is)
_WALKS = (
    (1216.698, 556.698), (1220.698, 560.698), (1289.596, 556.698), (1293.596, 560.698),
    (1285.596, 556.698), (1289.596, 560.698), (1289.596, 556.698), (1293.596, 560.698),
    (1020.698, 360.698), (1024.698, 364.698), (1093.596, 360.698), (1097.596, 364.698),
    (1089.596, 360.698), (1093.596, 364.698), (1093.596, 360.698), (1097.596, 364.698),
    (1183.596, 439.396), (1187.596, 443.396), (1256.494, 439.396), (1260.494, 443.396),
    (1252.494, 439.396), (1256.494, 443.396), (1256.494, 439.396), (1260.494, 443.396),
    (1183.596, 439.396), (1187.596, 443.396), (1256.494, 439.396), (1260.494, 443.396),
    (1252.494, 439.396), (1256.494, 443.396), (1256.494, 439.396), (1260.494, 443.396),
    (1342.294, 598.094), (1346.294, 602.094), (1415.192, 598.094), (1419.192, 602.094),
    (1411.192, 598.094), (1415.192, 602.094), (1415.192, 598.094), (1419.192, 602.094),
    (1342.294, 598.094), (1346.294, 602.094), (1415.192, 598.094), (1419.192, 602.094),
    (1411.192, 598.094), (1415.192, 602.094), (1415.192, 598.094), (1419.192, 602.094),
    (1439.192, 610.792), (1443.192, 614.792), (1512.09, 610.792), (1516.09, 614.792),
    (1508.09, 610.792), (1512.09, 614.792), (1512.09, 610.792), (1516.09, 614.792),
    (1439.192, 610.792), (1443.192, 614.792), (1512.09, 610.792), (1516.09, 614.792),
    (1508.09, 610.792), (1512.09, 614.792), (1512.09, 610.792), (1516.09, 614.792),
    (1357.294, 613.094), (1361.294, 617.094), (1430.192, 613.094), (1434.192, 617.094),
    (1426.192, 613.094), (1430.192, 617.094), (1430.192, 613.094), (1434.192, 617.094),
    (1357.294, 613.094), (1361.294, 617.094), (1430.192, 613.094), (1434.192, 617.094),
    (1426.192, 613.094), (1430.192, 617.094), (1430.192, 613.094), (1434.192, 617.094),
    (1454.192, 625.792), (1458.192, 629.792), (1527.09, 625.792), (1531.09, 629.792),
    (1523.09, 625.792), (1527.09, 629.792), (1527.09, 625.792), (1531.09, 629.792),
    (1454.192, 625.792), (1458.192, 629.792), (1527.09, 625.792), (1531.09, 629.792),
    (1523.09, 625.792), (1527.09, 629.792), (1527.09, 625.792), (1531.09, 629.792),
    (1495.89, 667.49), (1499.89, 671.49), (1568.788, 667.49), (1572.788, 671.49),
    (1564.788, 667.49), (1568.788, 671.49), (1568.788, 667.49), (1572.788, 671.49),
    (1495.89, 667.49), (1499.89, 671.49), (1568.788, 667.49), (1572.788, 671.49),
    (1564.788, 667.49), (1568.788, 671.49), (1568.788, 667.49), (1572.788, 671.49),
    (1592.788, 680.188), (1596.788, 684.188), (1665.686, 680.188), (1669.686, 684.188),
    (1661.686, 680.188), (1665.686, 684.188), (1665.686, 680.188), (1669.686, 684.188),
    (1592.788, 680.188), (1596.788, 684.188), (1665.686, 680.188), (1669.686, 684.188),
    (1661.686, 680.188), (1665.686, 684.188), (1665.686, 680.188), (1669.686, 684.188),
)
#: the entry before session 28 (sessions 22 and 26's reading; no table)
_OLD = ("hopper", 8, 0, (("l1_hit", 2),), (("const_l15", 1), ("l1_hit", 2)),
        ((("const_l15", 2), ("const_l1", 2), ("l1_hit", 1)),),
        (("l1_hit", 4), ("const_l1", 1)), (("l1_hit", 4), ("const_l1", 2)),
        ((("l1_hit", 2), ("const_l1", 5)),))


def _slots(mask):
    return (0,) + tuple(i + 1 for i in range(7) if mask >> i & 1)


def _with_hopper(kern, entry=None, table=None):
    """``kern`` with its 'hopper' round_reads entry ``entry`` (None: kept) and 'hopper'
    round_cycles entry ``table`` (None: none)."""
    reads = tuple(e for e in kern.round_reads if e[0] != "hopper") + (
        (entry,) if entry else tuple(e for e in kern.round_reads if e[0] == "hopper"))
    cycles = tuple(e for e in kern.round_cycles if e[0] != "hopper") + ((table,) if table else ())
    return dataclasses.replace(kern, round_reads=reads, round_cycles=cycles)


def _charged(kern, slots):
    """Cycles the model charges beyond the peer trips for a token whose valid slots are
    ``slots``: round 1 (the chain's two metadata L2 loads and row fetch, one L1.5 fetch per late
    batch with a valid slot, the entry and table) and a later round."""
    late = float(any(s in slots for s in (4, 5, 6, 7)))
    r1, r2 = (kern.round_read_latency(8, 2, "hopper", n, len(slots), late)[0] for n in (1, 2))
    first = r1 + 2 * _HOP["l2_hit"] + (1 + late) * _HOP["const_l15"]
    return first / _HOP["cycle"], (r2 - r1) / _HOP["cycle"]


def _table():
    return next(e for e in _K.round_cycles if e[0] == "hopper")


def test_the_late_batch_is_slots_4_to_7():
    assert _K.late_batches(8, 2, "hopper") == ((4, 5, 6, 7),)


def test_the_table_is_the_suffix_minimum_of_the_walks():
    """Per d the least excess of the walks over the entry's charges, over d or more valid
    slots, rounded down, 0 below zero; monotone; all 8 valid is the one pattern's own."""
    arch, k, width, first, later = _table()
    assert (arch, k, width) == ("hopper", 8, 0)
    bare = _with_hopper(_K)
    least = [[math.inf] * 8, [math.inf] * 8]
    for mask, walk in enumerate(_WALKS):
        slots = _slots(mask)
        for i, (w, c) in enumerate(zip(walk, _charged(bare, slots))):
            least[i][len(slots) - 1] = min(least[i][len(slots) - 1], w - c)
    for walked, table in zip(least, (first, later)):
        # rounded down after rounding off the floats' noise (the walks are sums of 0.001-cycle
        # latencies: some least excesses are whole cycles, e.g. 244.0)
        assert table == tuple(max(math.floor(round(min(walked[d:]), 6)), 0) for d in range(8))
        assert all(a <= b for a, b in itertools.pairwise(table))
    assert (first[7], later[7]) == (730, 567)


def test_no_pattern_is_charged_more_than_its_walk():
    """With the table, every one of the 128 patterns is charged at most its walk, both rounds
    (a lower bound for every token), and all 8 valid within a cycle of it; the entry before
    charged {0, 1, 4} 123.1 cycles more."""
    for mask, walk in enumerate(_WALKS):
        slots = _slots(mask)
        for w, c in zip(walk, _charged(_K, slots)):
            assert c <= w + 1e-9, slots
            if len(slots) == 8:
                assert w - c < 1.0
    old = _with_hopper(_K, _OLD)
    mask = 0b1001                                    # slots 1 and 4
    assert _slots(mask) == (0, 1, 4)
    assert _WALKS[mask][0] - _charged(old, (0, 1, 4))[0] == pytest.approx(-123.1, abs=0.05)


def test_the_entry_is_the_walks_chains_and_the_late_batch_its_least():
    """Round 1: l1 2 with slot 0 alone, const_l15 1 + l1 2 more with slots 0-3 (beyond the
    chain's two L2 loads and row); a later round l1 3 + const_l1 1 at both ends; the late
    batch adds none (its least pattern, {0, 4}); no issued cycle in the entry."""
    entry = next(e for e in _K.round_reads if e[0] == "hopper")
    assert entry == ("hopper", 8, 0, (("l1_hit", 2),), (("const_l15", 1), ("l1_hit", 2)), ((),),
                     (("l1_hit", 3), ("const_l1", 1)), (("l1_hit", 3), ("const_l1", 1)), ((),))
    # slot 4 alone late: the walk beyond the trips falls below slot 0 alone's (both rounds)
    assert all(a < b for a, b in zip(_WALKS[0b1000], _WALKS[0]))


def _one_token(f, kern):
    return moe_exchange(f, "deepseek-v3", 1, 8, kernel=kern, dispatch_bytes=2,
                        combine_bytes=2, routing="balanced")


#: what the entry and table charge a BF16 DeepSeek token (4 rounds of 256 x 16 B) of 8 distinct
#: ranks with its late batch valid (the perfect router at EP8), beyond the chain
_ONE_TOKEN = (_HOP["const_l15"] + 2 * _HOP["l1_hit"] + 730 * _HOP["cycle"]
              + 3 * (3 * _HOP["l1_hit"] + _HOP["const_l1"] + 567 * _HOP["cycle"]))


def test_a_one_token_hopper_combine_pays_it():
    f = built("dgx-h100")
    r = _one_token(f, _K)
    r0 = _one_token(f, dataclasses.replace(
        _K, round_reads=tuple(e for e in _K.round_reads if e[0] != "hopper"),
        round_cycles=tuple(e for e in _K.round_cycles if e[0] != "hopper")))
    assert r.combine_phase.pull_latency - r0.combine_phase.pull_latency == pytest.approx(
        _ONE_TOKEN, rel=1e-9)
    assert r.dispatch == r0.dispatch
    # the Blackwell profile does not move
    g = built("gb200-nvl72")
    assert _one_token(g, _K).combine == _one_token(g, _with_hopper(_K, _OLD)).combine


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_on_degraded_fabrics_too(data):
    """Failed links lengthen the trips, not these counts: the combine moves by the same
    seconds on any degraded dgx-h100 that still runs the kernel."""
    f = data.draw(degrade(built("dgx-h100"), max_links=3, max_chips=0))
    bare = dataclasses.replace(
        _K, round_reads=tuple(e for e in _K.round_reads if e[0] != "hopper"),
        round_cycles=tuple(e for e in _K.round_cycles if e[0] != "hopper"))
    try:
        r0 = _one_token(f, bare)
    except (FabricError, SpecError):
        return                         # a fabric the kernel refuses: nothing to compare
    r = _one_token(f, _K)
    assert r.combine_phase.pull_latency - r0.combine_phase.pull_latency == pytest.approx(
        _ONE_TOKEN, rel=1e-9)
    assert r.dispatch == r0.dispatch


def test_the_sources_say_so():
    src = dict(_K.sources)
    assert "Session 28" in src["round_reads"] and "slope" in src["round_reads"]
    assert "sm_90a" in src["round_cycles"] and "730.2" in src["round_cycles"]
    assert "123.1" in src["round_cycles"]
