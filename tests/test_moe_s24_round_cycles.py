"""The one-sided combine's later pulled rounds pay the cycles their compiled loop issues beyond
the loads round_reads charges (session 24, moe).

flashinfer 579435f9 moeA2ACombineKernel<bf16, BlockPolicy, 8> (blog18's kernel) rebuilt for
sm_100a with flashinfer's JIT flags and walked in issue order (loop 0x0660-0x1290) at the stall
counts, every load at the module's latency and the peer loads as trips. The walk's time beyond
the trips, less what the round_reads steps charge for the same slot pattern, is at least 242
cycles a later round: ('cycle', 242) in the 'blackwell' entry's later_min and later_full. The
Hopper build and TensorRT-LLM 1.3's kernels are not counted (a lower bound); round 1 is counted
since session 26 (tests/test_moe_s26_round_one.py): these tests take its count as it is.
"""

import dataclasses

import fidelity_moe
import pytest

from analysis import moe_exchange
from fabric import EXCHANGE_LATENCY, exchange_kernel

_K = exchange_kernel("one-sided")
_BW = {n: p.value for n, p in EXCHANGE_LATENCY["blackwell"].items()}
# the walk of one later round (cycles beyond its peer trips), per slot pattern, read from the
# sm_100a SASS (counts from compiled code; notes/moe.md of session 24)
_WALK = {"{0}": 421.4, "{0-6}": 594.1, "{0-7}": 635.2, "{0,7}": 462.5}


def _row(arch):
    return next(e for e in _K.round_reads if e[0] == arch)


def _cycles(steps):
    return sum(c for n, c in steps if n == "cycle")


def _priced(steps):
    """The steps' loads in cycles at the module's Blackwell latencies (cycles excluded)."""
    return sum(c * _BW[n] for n, c in steps if n != "cycle") / _BW["cycle"]


def _without_cycles(kern):
    """The profile without the later rounds' cycles (round 1's, session 26, kept)."""
    rows = tuple(tuple(tuple((n, c) for n, c in part if n != "cycle") if i in (6, 7)
                       and isinstance(part, tuple) and part and isinstance(part[0][0], str)
                       else part for i, part in enumerate(e)) for e in kern.round_reads)
    return dataclasses.replace(kern, name=kern.name + "-s23", round_reads=rows)


def test_the_later_rounds_carry_the_walks_least_excess():
    _, _, _, f_min, f_full, f_late, l_min, l_full, l_late = _row("blackwell")
    assert _cycles(l_min) == _cycles(l_full) == 242
    assert _cycles(f_min) == _cycles(f_full) == 193        # round 1: session 26's count
    assert all(_cycles(b) == 0 for b in f_late + l_late)
    late = _priced(l_late[0])
    excess = {"{0}": _WALK["{0}"] - _priced(l_min),
              "{0-6}": _WALK["{0-6}"] - _priced(l_full),
              "{0-7}": _WALK["{0-7}"] - _priced(l_full) - late,
              "{0,7}": _WALK["{0,7}"] - _priced(l_min) - late}
    assert int(min(excess.values())) == 242
    assert all(v >= 242 for v in excess.values())
    src = dict(_K.sources)["round_reads"]
    assert "Session 24" in src and "421.4" in src and "242" in src


def test_no_other_build_carries_them():
    assert all(_cycles(part) == 0 for part in _row("hopper")[3:5])
    k13 = exchange_kernel("one-sided-1.3")
    # TensorRT-LLM 1.3's own counts (session 26, tests/test_moe_s26_rounds_13.py) are its
    # kernels', not these: its BF16 round 1 carries 189, no entry carries 242 or 193
    assert not any(c in (242, 193) for e in k13.round_reads for part in (e[3], e[4], e[6], e[7])
                   for n, c in part if n == "cycle")


@pytest.mark.parametrize("ep", [2, 8])
def test_blog18s_one_token_combine_pays_them_on_each_later_round(ep):
    """EP2 and EP8 at one token on GB200 (balanced routing): a BF16 DeepSeek token is 4 rounds
    of 256 x 16 B; each of the 3 later rounds pays 242 cycles (round 1's own count, session
    26, is in both profiles); the dispatch does not move."""
    f = fidelity_moe.nvl72()
    kw = {"dispatch_bytes": 2, "combine_bytes": 2, "routing": "balanced"}
    new, old = (moe_exchange(f, "deepseek-v3", 1, ep, kernel=x, **kw)
                for x in (_K, _without_cycles(_K)))
    want = 3 * 242 * _BW["cycle"]
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
