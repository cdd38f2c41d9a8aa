"""Audit session 32: ``analysis.traffic``'s hotspot ``fraction`` and moe ``skew``, hostile values.

A fuzz of traffic()'s keywords (None, True, numpy bools, strings, lists, nan, 10**400, 1j):
``fraction`` was only compared with 0 and 1, so ``True`` was a fraction of 1 (a flag read as a
number) and ``None`` / ``"0.5"`` / ``[1]`` raised Python's "'<=' not supported between
instances of 'int' and 'str'", naming nothing; ``skew`` reached ``np.isfinite`` ("ufunc
'isfinite' not supported for the input types"), ``True`` was a skew of 1, ``np.True_`` hit
numpy's "boolean negative is not supported" and ``()`` "the truth value of an empty array is
ambiguous". Each is now an error naming the keyword (a TypeError for a wrong kind, a SpecError
for a number out of range: session 32), from the packages' one number checks
(fabric._units.check_fraction / check_number, review S32-R2: not re-spelled in _traffic);
numpy numbers still count as numbers.
"""
import numpy as np
import pytest

from analysis import traffic
from fabric import SpecError

_HOSTILE = [None, True, np.True_, "0.5", [1], (), 1j]


# STYLE's rule (session 32, reader): a value of the wrong kind is a TypeError, a number out
# of range a SpecError

@pytest.mark.parametrize("value", _HOSTILE + [float("nan"), 1.5, -0.1])
def test_a_hotspot_fraction_must_be_a_number_in_0_1(value):
    error = SpecError if isinstance(value, float) else TypeError
    with pytest.raises(error, match=r"fraction must be in \[0, 1\], got fraction=") as e:
        traffic(8, "hotspot", 10.0, hot=[3], fraction=value)
    assert type(e.value) is error


@pytest.mark.parametrize("value", _HOSTILE + [float("nan"), float("inf"), -1, 10**400])
def test_a_moe_skew_must_be_a_finite_number_at_least_0(value):
    error = SpecError if isinstance(value, (int, float)) and not isinstance(value, bool) \
        else TypeError
    with pytest.raises(error, match="skew must be a finite number >= 0, got skew=") as e:
        traffic(8, "moe", 1.0, experts=16, top_k=2, tokens=4, skew=value)
    assert type(e.value) is error


def test_numpy_numbers_are_the_numbers_they_equal():
    a = traffic(8, "hotspot", 10.0, hot=[3], fraction=np.float32(0.25)).dense()
    assert np.array_equal(a, traffic(8, "hotspot", 10.0, hot=[3], fraction=0.25).dense())
    b = traffic(8, "moe", 1.0, experts=16, top_k=2, tokens=4, skew=np.int64(2), seed=1).dense()
    assert np.array_equal(b, traffic(8, "moe", 1.0, experts=16, top_k=2, tokens=4, skew=2,
                                     seed=1).dense())
