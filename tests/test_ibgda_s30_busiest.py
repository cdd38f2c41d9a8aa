"""Session 30 (lead's decision 04:32): ``expected_max`` takes ``F = 1`` from the pmf's last
nonzero point on.

Summed in floats, the cumulative distribution can end an ulp short of 1, and ``(1 - 1e-16)^n``
then loses the top value at huge draw counts: ``busiest_token(256, 8, 16, 1, "uniform",
10**16)`` answered 2.64 remote ranks for the busiest token, not 8 (at 1e12 draws 7.9991).
"""
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from analysis._moe_exchange import busiest_token, expected_max, reach_distribution


def _exact(pmf, n):
    """E[max of n draws] in exact arithmetic: sum_j j (F(j)^n - F(j-1)^n), F in Fractions
    normalised to end at 1."""
    probs = [Fraction(p) for p in pmf]
    total, below, prev = Fraction(0), Fraction(0), Fraction(0)
    whole = sum(probs)
    for j, p in enumerate(probs):
        below += p
        cur = (below / whole) ** n
        total += j * (cur - prev)
        prev = cur
    return total


@pytest.mark.parametrize("draws", [10**12, 10**16, 2**70])
def test_the_busiest_token_reaches_the_top_at_huge_draw_counts(draws):
    # 8 experts of 256 over 16 (one node) or 64 ranks: at this many tokens one reaches 8 ranks,
    # none its own
    assert busiest_token(256, 8, 16, 1, "uniform", draws) == (8.0, 8.0)
    assert busiest_token(256, 8, 64, 8, "uniform", draws) == (8.0, 8.0)


@pytest.mark.parametrize("shape", [(256, 8, 16, 1), (256, 8, 64, 8), (64, 6, 8, 1)])
def test_more_draws_never_lower_the_expected_max(shape):
    for pmf in reach_distribution(*shape):
        got = [expected_max(pmf, n) for n in (1, 10, 10**3, 10**6, 10**9, 10**12, 10**15,
                                               10**18)]
        assert got == sorted(got)
        top = max(j for j, p in enumerate(pmf) if p > 0)
        assert got[-1] == top


@settings(max_examples=40, deadline=None)
@given(weights=st.lists(st.integers(0, 1000), min_size=1, max_size=9).filter(any),
       zeros=st.integers(0, 3), n=st.integers(1, 60))
def test_expected_max_is_the_exact_sum_in_floats(weights, zeros, n):
    """Against exact arithmetic, with trailing zeros (a reach the token cannot have)."""
    pmf = [w / sum(weights) for w in weights] + [0.0] * zeros
    assert expected_max(pmf, n) == pytest.approx(float(_exact(pmf, n)), rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("pmf, named", [
    ([True, False], r"pmf\[0\] must be a probability \(a number\), got pmf\[0\]=True"),
    (["0.5", "0.5"], r"pmf\[0\]='0\.5' \(a str\)"),
    (None, "pmf must be a sequence of probabilities, got None"),
    (0.5, "pmf must be a sequence of probabilities, got 0.5")])
def test_a_pmf_of_the_wrong_kind_is_a_type_error(pmf, named):
    # session 32 (reader): float() read True as 1 and '0.5' as 0.5; None/0.5 said 'not iterable'
    with pytest.raises(TypeError, match=named):
        expected_max(pmf, 2)
    assert expected_max([Fraction(1, 2), np.float32(0.5)], 2) == 0.75
