"""The one-sided combine's round 1, with the code between the block's barrier and it, pays what
its compiled code spends beyond the loads the model charges there (session 26, moe).

flashinfer 579435f9 moeA2ACombineKernel<bf16, BlockPolicy, 8> (blog18's kernel) for sm_100a
(session 24's build, flashinfer's JIT flags, nvcc 13.0, cuobjdump 13.5), walked in issue order at
the stall counts from the instruction after BAR.SYNC (0x0510: the 16-B width test, the output
row's address, the metadata bases) to round 1's back edge (0x1290), every load at the module's
latency and the peer loads as trips. Beyond what the chain's round-1 steps, the round-1 entry and
the late batch's row fetch charge, every one of the 128 slot patterns spends at least 298.5
cycles; on that path the first read of the output pointer's constant line (LDC.64 c[0x380],
waited) is charged nowhere: ('const_l15', 1) and ('cycle', 193) in the 'blackwell' entry's
first_min and first_full. The sm_90a build's walk is below the entry's charges for some patterns
(nothing added); TensorRT-LLM 1.3's kernels are not walked.
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
_NEW = (("const_l15", 1), ("cycle", 193))
#: the walk (cycles beyond its peer trips) from after BAR.SYNC through round 1, per set of valid
#: slots (slot 0 always: the own rank under the perfect router), read from the sm_100a SASS
#: (r1walk.py, notes/moe.md of session 26): the all-valid and one-rank ends, the least of the
#: 128 patterns ({0-5, 7}) and two between
_WALK = {(0,): 1200.9, (0, 1, 2, 3, 4, 5, 6, 7): 1646.0, (0, 1, 2, 3, 4, 5, 7): 1442.1,
         (0, 7): 1326.2, (0, 1, 2, 3, 4, 5, 6): 1520.7}
_COUNT = (_BW["const_l15"] + 193 * _BW["cycle"])


def _row(kern, arch):
    return next(e for e in kern.round_reads if e[0] == arch)


def _before(kern):
    """The profile as it was before the count: round 1's new steps out of the Blackwell entry."""
    def drop(steps):
        out = []
        for name, count in steps:
            if (name, count) == ("cycle", 193):
                continue
            if name == "const_l15":
                count -= 1
            if count:
                out.append((name, count))
        return tuple(out)
    rows = tuple((*e[:3], drop(e[3]), drop(e[4]), *e[5:]) if e[0] == "blackwell" else e
                 for e in kern.round_reads)
    return dataclasses.replace(kern, round_reads=rows)


def _charged(kern, slots):
    """Cycles the model charges on round 1 beyond its trips for a token whose valid slots are
    ``slots``: the combine chain's two metadata L2 loads and row fetch, the round-1 entry, the
    late batch's row fetch (slot 7: the 'blackwell' late batch)."""
    late = 1.0 if 7 in slots else 0.0
    reads, _ = kern.round_read_latency(8, 2, "blackwell", 1, len(slots), late)
    return (2 * _BW["l2_hit"] + (1 + late) * _BW["const_l15"] + reads) / _BW["cycle"]


def test_round_one_carries_the_walks_least_excess():
    first_min, first_full = _row(_K, "blackwell")[3:5]
    for steps in (first_min, first_full):
        assert ("cycle", 193) in steps
    old = _before(_K)
    excess = {s: w - _charged(old, s) for s, w in _WALK.items()}
    least = min(excess.values())
    assert least == pytest.approx(298.5, abs=0.05)
    # the count charged is the least excess, a load it holds named as such
    assert int(least - _BW["const_l15"] / _BW["cycle"]) == 193
    # after the count, no pattern is charged more than its walk
    assert all(w - _charged(_K, s) >= 0 for s, w in _WALK.items())
    src = dict(_K.sources)["round_reads"]
    assert "Session 26" in src and "298.5" in src and "c[0x0][0x380]" in src


def test_only_the_blackwell_entry_carries_it():
    for arch in ("hopper",):
        assert not any(n == "cycle" for part in _row(_K, arch)[3:5] for n, _ in part)
    # TensorRT-LLM 1.3's kernels carry their own round-1 count (BF16 189, test_moe_s26_rounds_13),
    # not this kernel's 193
    k13 = exchange_kernel("one-sided-1.3")
    assert not any((n, c) == ("cycle", 193) for e in k13.round_reads for part in e[3:5]
                   for n, c in part)


@settings(max_examples=40, deadline=None)
@given(rounds=st.integers(0, 9), distinct=st.floats(1.0, 8.0), late=st.floats(0.0, 1.0))
def test_every_pull_pays_it_once(rounds, distinct, late):
    """Whatever the rounds, ranks and late trips, round 1 (and its set-up) comes once: the pull's
    round reads grow by the count's seconds exactly, and not at all without a round."""
    new = _K.round_read_latency(8, 2, "blackwell", rounds, distinct, late)[0]
    old = _before(_K).round_read_latency(8, 2, "blackwell", rounds, distinct, late)[0]
    want = _COUNT if rounds >= 1 else 0.0
    assert new - old == pytest.approx(want, rel=1e-9, abs=1e-18)
    hop = _K.round_read_latency(8, 2, "hopper", rounds, distinct, late)[0]
    assert hop == _before(_K).round_read_latency(8, 2, "hopper", rounds, distinct, late)[0]


@pytest.mark.parametrize("degraded", [False, True])
def test_a_one_token_combine_moves_by_it(degraded):
    """EP8, one BF16 token on GB200 NVL72 (round trips bind), intact and with a cut link: the
    combine grows by the count, the dispatch does not move."""
    new = gb200_one_token(_K, degraded)
    old = gb200_one_token(_before(_K), degraded)
    assert new.combine - old.combine == pytest.approx(_COUNT, rel=1e-9)
    assert new.combine_phase.pull_latency - old.combine_phase.pull_latency == pytest.approx(
        _COUNT, rel=1e-9)
    assert new.dispatch == old.dispatch


def test_the_check_rows_stay_fast_and_move_up():
    """trtllm-ep8-bs1-combine (31 us measured) and -bs16 (32.6 us): both still fast, both up by
    the count (0.15 us)."""
    f = fidelity_moe.nvl72()
    for tokens, rid, meas in ((1, "trtllm-ep8-bs1-combine", 31.0),
                              (16, "trtllm-ep8-bs16-combine", 32.6)):
        got, _ = fidelity_moe.CASES[rid]({"gpus": 8})
        assert got < meas
        new, old = (moe_exchange(f, "deepseek-v3", tokens, 8, kernel=x, dispatch_bytes=2,
                                 combine_bytes=2, routing="balanced")
                    for x in (_K, _before(_K)))
        assert new.combine - old.combine == pytest.approx(_COUNT, rel=1e-9)
