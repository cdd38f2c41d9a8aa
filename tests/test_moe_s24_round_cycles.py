"""The one-sided combine's later pulled rounds pay the cycles their compiled loop issues beyond
the loads round_reads charges (session 24, moe).

flashinfer 579435f9 moeA2ACombineKernel<bf16, BlockPolicy, 8> (blog18's kernel) rebuilt for
sm_100a with flashinfer's JIT flags and walked in issue order (loop 0x0660-0x1290) at the stall
counts, every load at the module's latency and the peer loads as trips. The walk's time beyond
the trips, less what the round_reads steps charge for the same slot pattern, was at least 242
cycles a later round at the four patterns walked then. Session 27: one count per number of
valid slots (ExchangeKernel.round_cycles, the least over all 128 patterns of that many or more
valid slots; tests/test_moe_s27_round_cycles.py); since session 29 (the entry's chains read as
the walk's slopes, tests/test_moe_s29_blackwell.py) 274 up to 5 slots, 275 with 6 or 7, 383 with
all 8; these tests check the later-round table against session 24's four walks. The Hopper build has its own table
since session 28 (tests/test_moe_s28_hopper.py); round 1 has its own table (tests/test_moe_s26_round_one.py).
"""

import dataclasses

import fidelity_moe
import pytest

from analysis import moe_exchange
from fabric import EXCHANGE_LATENCY, exchange_kernel

_K = exchange_kernel("one-sided")
_BW = {n: p.value for n, p in EXCHANGE_LATENCY["blackwell"].items()}
# the walk of one later round (cycles beyond its peer trips), per slot pattern, read from the
# sm_100a SASS (counts from compiled code, session 24)
_WALK = {"{0}": 421.4, "{0-6}": 594.1, "{0-7}": 635.2, "{0,7}": 462.5}


# each walked pattern's valid slots (distinct ranks) and late trips (slot 7 valid)
_PATTERN = {"{0}": (1, 0.0), "{0-6}": (7, 0.0), "{0-7}": (8, 1.0), "{0,7}": (2, 1.0)}


def _later_table():
    return next(e for e in _K.round_cycles if e[0] == "blackwell")[4]


def _without_cycles(kern):
    """The profile without the later rounds' cycles (round 1's kept)."""
    rows = tuple((a, k, w, first, (0,) * k) for a, k, w, first, later in kern.round_cycles)
    return dataclasses.replace(kern, name=kern.name + "-s23", round_cycles=rows)


def test_the_later_rounds_table_is_at_most_each_walk_and_exact_with_all_slots():
    bare = dataclasses.replace(_K, round_cycles=())
    later = _later_table()
    for pat, walk in _WALK.items():
        d, late = _PATTERN[pat]
        charged = (bare.round_read_latency(8, 2, "blackwell", 2, d, late)[0]
                   - bare.round_read_latency(8, 2, "blackwell", 1, d, late)[0]) / _BW["cycle"]
        assert later[d - 1] <= walk - charged, pat
        if d == 8:                       # one pattern: the table is its walk's excess
            assert later[d - 1] == int(walk - charged) == 383
    src = dict(_K.sources)["round_reads"]
    assert "Session 24" in src and "421.4" in src and "242" in src
    assert "22 of the 128" in dict(_K.sources)["round_cycles"]


def test_no_round_reads_entry_carries_cycles():
    """Since session 27 the issued cycles are round_cycles' alone (one place); of the Hopper
    builds only blog18's has an entry (session 28)."""
    for name, arches in (("one-sided", {"blackwell", "hopper"}), ("one-sided-1.3", {"blackwell"})):
        k = exchange_kernel(name)
        assert not any(n == "cycle" for e in k.round_reads for part in (e[3], e[4], e[6], e[7])
                       for n, c in part)
        assert {e[0] for e in k.round_cycles} == arches


@pytest.mark.parametrize("ep", [2, 8])
def test_blog18s_one_token_combine_pays_them_on_each_later_round(ep):
    """EP2 and EP8 at one token on GB200 (balanced routing): a BF16 DeepSeek token is 4 rounds
    of 256 x 16 B; each of the 3 later rounds pays the later table's cycles at its distinct
    ranks (2: 274; 8: 383; round 1's own count is in both profiles); the dispatch does not
    move."""
    f = fidelity_moe.nvl72()
    kw = {"dispatch_bytes": 2, "combine_bytes": 2, "routing": "balanced"}
    new, old = (moe_exchange(f, "deepseek-v3", 1, ep, kernel=x, **kw)
                for x in (_K, _without_cycles(_K)))
    want = 3 * {2: 274, 8: 383}[ep] * _BW["cycle"]
    assert new.combine_phase.pull_latency - old.combine_phase.pull_latency == pytest.approx(
        want, rel=1e-9)
    assert new.combine - old.combine == pytest.approx(want, rel=1e-9)
    assert new.dispatch == old.dispatch


def test_one_round_pays_no_later_rounds_cycles():
    lat = _K.round_read_latency(8, 2, "blackwell", 1, 8, 1.0)[0]
    assert lat == pytest.approx(_without_cycles(_K).round_read_latency(8, 2, "blackwell", 1, 8,
                                                                        1.0)[0], rel=1e-12)


def test_the_check_rows_move_closer():
    """trtllm-ep8-bs1-combine (31 us measured) and -bs16 (32.6): the model stays fast and moves
    up by the three later rounds' cycles."""
    for rid, meas in (("trtllm-ep8-bs1-combine", 31.0), ("trtllm-ep8-bs16-combine", 32.6)):
        got, _ = fidelity_moe.CASES[rid]({"gpus": 8})
        assert got < meas
    f = fidelity_moe.nvl72()
    new, old = (moe_exchange(f, "deepseek-v3", 1, 8, kernel=x, dispatch_bytes=2,
                             combine_bytes=2, routing="balanced")
                for x in (_K, _without_cycles(_K)))
    assert new.combine > old.combine
