"""Session 17 (lead): pplx's per-copy combine fences at any token count."""
import itertools
import math
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from analysis._moe_exchange import _copy_fences
from fabric._exchange import serial_copies


def _copy_fences_exact(copies, blocks, p, trip, lead):
    """The fences' expectation in exact rational arithmetic, over every count of every
    block's copies (the definition in _copy_fences' docstring, term by term)."""
    most = serial_copies(copies, blocks)
    if most == 0 or p <= 0:
        return 0.0
    full = math.ceil(copies) - (most - 1) * int(blocks)
    p, trip, lead = Fraction(p), Fraction(trip), Fraction(lead)
    def pmf_of(n):
        return [math.comb(n, j) * p ** j * (1 - p) ** (n - j) if j <= n else 0
                for j in range(most + 1)]
    pmf = pmf_of(most)
    others = [a ** (full - 1) * b ** (int(blocks) - full)
              for a, b in zip(itertools.accumulate(pmf), itertools.accumulate(pmf_of(most - 1)))]
    p_max = [others[0]] + [others[j] - others[j - 1] for j in range(1, most + 1)]
    return float(sum(pi * pj * max(lead + trip * i, trip * j)
                     for i, pi in enumerate(pmf) for j, pj in enumerate(p_max)) - lead)


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 2000), st.sampled_from([1, 8, 132]),
       st.sampled_from([1e-3, 1 / 16, 0.5, 7 / 8, 0.99, 1.0]),
       st.sampled_from([1.0, 8e-7]), st.sampled_from([0.0, 3.3e-7, 1e-6, 2.0]))
def test_copy_fences_equal_the_exact_expectation(copies, blocks, p, trip, lead):
    """To 1e-9: scipy's binomial pmf and cdf carry ~1e-13 relative error at small p."""
    if serial_copies(copies, blocks) > 12:
        copies = 12 * blocks                    # keep the rational reference small
    exact = _copy_fences_exact(copies, blocks, p, trip, lead)
    assert _copy_fences(copies, blocks, p, trip, lead) == pytest.approx(exact, rel=1e-9,
                                                                        abs=1e-300)
