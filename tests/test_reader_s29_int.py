"""Session 29 (reader, lead's decision 02:16): one int test, ``fabric._units.is_int``.

"An integer, not a bool" was spelled ``isinstance(x, bool) or not isinstance(x,
numbers.Integral)`` at ~40 sites and ``isinstance(x, (int, np.integer)) and not isinstance(x,
bool)`` at ~20 (``fabric._address.is_int`` among them). The two agree on every value the
packages meet (Python's and numpy's ints, bools, floats, strings...) and differ only on a
registered :class:`numbers.Integral` that is neither (sympy's, gmpy2's): the first spelling took
it on to numpy and arithmetic it was not written for. ``is_int`` is the second, numpy-free
beside ``is_bool``; the reader's and the unowned modules use it (the other owners' follow).
"""
import fractions
import numbers
import re

import numpy as np
import pytest
from source_trees import spelled

import analysis
from fabric._units import is_int


class _Registered:
    """An integer type of another library: a registered numbers.Integral."""

    def __index__(self):
        return 8

    def __int__(self):
        return 8

    def __repr__(self):
        return "_Registered(8)"

    def __lt__(self, other):
        return 8 < other

    def __ge__(self, other):
        return 8 >= other

    def __le__(self, other):
        return 8 <= other


numbers.Integral.register(_Registered)

VALUES = [True, False, np.True_, np.False_, 0, 1, -1, 2**70, np.int8(1), np.int64(7),
          np.uint64(0), np.intp(3), 0.0, 1.0, np.float64(3), 1j, fractions.Fraction(2, 1), "3",
          None, np.array(3), np.array([3]), object(), _Registered()]


@pytest.mark.parametrize("value", VALUES, ids=lambda v: f"{type(v).__name__}:{v!r:.20}")
def test_is_int_is_the_numpy_spelling_and_the_abc_one_but_for_registered_types(value):
    numpy_spelling = isinstance(value, (int, np.integer)) and not isinstance(value, bool)
    abc_spelling = not (isinstance(value, bool) or not isinstance(value, numbers.Integral))
    assert is_int(value) == numpy_spelling
    assert is_int(value) == abc_spelling or isinstance(value, _Registered)


#: Every package module (session 30: the owners' sites of R29-2 switched in session 30's
#: first train; the test spanned the reader's and unowned modules before).
_OLD = re.compile(r"isinstance\((\w+), bool\)\s+or\s+not\s+isinstance\(\s*\1,\s*(numbers\.Integral|"
                  r"\(int, np\.integer\))\)|isinstance\((\w+),\s*(numbers\.Integral|\(int, "
                  r"np\.integer\))\)\s+and\s+not\s+isinstance\(\3, bool\)|is_bool\((\w+)\)\s+or\s+not\s+"
                  r"isinstance\(\5, numbers\.Integral\)")


def test_no_package_module_spells_the_int_test_again():
    assert spelled(_OLD) == []
    assert _OLD.search("if isinstance(v, bool) or not isinstance(\n        v, numbers.Integral):")


@pytest.mark.parametrize("call, match", [
    (lambda v: analysis.expert_activation(v, 2, 10), "experts must be an integer"),
    (lambda v: analysis.expert_activation(8, v, 10), "k must be an integer"),
    (lambda v: analysis.parse_layout({"tp": v}, 8), "tp must be an integer"),
    (lambda v: analysis.traffic(8, "permutation", seed=v), "seed must be an int"),
])
def test_a_registered_integral_is_refused_by_name(call, match):
    # another library's integer is a count of the wrong kind: TypeError (session 31's rule)
    with pytest.raises(TypeError, match=match):
        call(_Registered())
    call(8)
    call(np.int64(8))
