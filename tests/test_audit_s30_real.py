"""Audit, session 30 (reader's R30-1): fabric/_schema.py's link-value checks ask the one real-
number test, ``fabric._units.is_real``, where they spelled "a numbers.Real, not a bool". The
predicates are the same on every value (numpy's bool is no numbers.Real): a probe of 27 values
through bandwidth_fault / latency_fault answered identically on main e92a1e3 and here.
"""

import pathlib
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest
from test_reader_s30_real import _OLD

from fabric._schema import bandwidth_fault, latency_fault


def test_the_schema_spells_the_real_test_once():
    text = (pathlib.Path(__file__).resolve().parent.parent / "fabric/_schema.py").read_text()
    assert [m.group(0) for m in _OLD.finditer(text)] == []


@pytest.mark.parametrize("value, bandwidth_ok, latency_ok", [
    (25e9, True, False), (np.float32(1e-7), False, True), (Fraction(1, 10**7), False, True),
    (np.int64(10**10), True, False), (0, False, True), (True, False, False),
    (np.True_, False, False), (Decimal("1e-7"), False, False), (float("nan"), False, False),
    ("1e-7", False, False), (np.array(1e-7), False, False),
])
def test_link_values_are_read_as_before(value, bandwidth_ok, latency_ok):
    assert (bandwidth_fault(value) is None, latency_fault(value) is None) == (bandwidth_ok,
                                                                              latency_ok)
