"""Audit/maint, session 16: one bool test, ``fabric._units.is_bool`` (behaviour unchanged).

Session 15's lead left ``isinstance(x, (bool, np.bool_))`` in analysis/_fair, _traffic,
_collectives, _bom, _engine_allreduce and fabric/_address beside the format helpers'
``_is_bool``: two spellings of one rule. Now every one of them is ``is_bool`` (the format
helpers' predicate, made the packages' one): it agrees with the old spelling on every kind of
value, and no package module spells the old one.
"""

import fractions

import numpy as np
import pytest
from source_trees import spelled

import analysis
import topologies
from fabric._units import is_bool

VALUES = [True, False, np.True_, np.False_, np.bool_(1), 0, 1, -1, 2**70, np.int8(1),
          np.uint64(0), 0.0, 1.0, np.float16(1), np.float64("nan"), 1j, fractions.Fraction(1, 2),
          "True", "", None, b"1", [True], (False,), np.array(True), np.array([True]),
          np.array(1), object()]


@pytest.mark.parametrize("value", VALUES, ids=lambda v: f"{type(v).__name__}:{v!r:.20}")
def test_is_bool_is_the_old_spelling(value):
    assert is_bool(value) == isinstance(value, (bool, np.bool_))


def test_no_package_module_spells_the_bool_test_again():
    assert spelled(r"np\.bool_\)") == []


@pytest.mark.parametrize("flag", [np.True_, np.False_, True])
def test_cost_takes_numpy_bools_as_flags_and_refuses_ints(flag):
    f = topologies.build("switch:4")
    assert analysis.cost(f, "all-reduce", 4096, overlap=flag, blocking=flag).time > 0
    with pytest.raises(TypeError, match="overlap must be True or False, got 1"):
        analysis.cost(f, "all-reduce", 4096, overlap=1)
