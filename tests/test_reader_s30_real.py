"""Session 30 (reader): one real-number test, ``fabric._units.is_real``.

"A real number, not a bool" was spelled ``isinstance(x, bool) or not isinstance(x,
numbers.Real)`` (or its negation, or with ``is_bool``) at ~30 sites, ``analysis._fair`` with a
helper of its own. ``is_real`` is that test, beside ``is_int``: a Python or numpy int or float or
any other :class:`numbers.Real` (a Fraction) is one, a bool (Python's or numpy's) is not, nor a
Decimal, a complex, a string or a 0-d array; finiteness and range stay each caller's rule. Every
switched site answered the same 21 values identically before and after (session 30's notes).
"""
import decimal
import fractions
import math
import numbers
import re

import numpy as np
import pytest
from source_trees import spelled

from fabric._units import is_real

VALUES = [True, False, np.True_, np.False_, 0, 1, -1, 2**70, 0.5, math.nan, math.inf,
          np.int8(1), np.int64(7), np.uint64(0), np.float16(0.5), np.float32(0.5),
          np.float64(0.5), np.longdouble(0.5), fractions.Fraction(1, 2), decimal.Decimal("0.5"),
          1j, np.complex64(1), "0.5", None, np.array(0.5), np.array([0.5]), object()]


@pytest.mark.parametrize("value", VALUES, ids=lambda v: f"{type(v).__name__}:{v!r:.20}")
def test_is_real_is_the_abc_spelling(value):
    assert is_real(value) == (isinstance(value, numbers.Real) and not isinstance(value, bool))


def test_is_real_takes_a_registered_real_as_the_abc_spelling_did():
    class Other:            # a real number type of another library
        pass

    numbers.Real.register(Other)
    assert is_real(Other())


#: Every package module: session 30's R30-1 switched the owners' sites (runtime's
#: _collectives, audit's _schema, ibgda's _moe_exchange and _exchange) in its second train.
_OLD = re.compile(r"isinstance\((\w+), (bool|numbers\.Real)\)\s*(or not|and not)\s+\(?\s*"
                  r"isinstance\(\1, (bool|numbers\.Real)\)|is_bool\((\w+)\)\s+or not "
                  r"isinstance\(\5, numbers\.Real\)|isinstance\((\w+), numbers\.Real\)\s*and "
                  r"not is_bool\(\6\)")


def test_no_package_module_spells_the_real_test_again():
    assert spelled(_OLD) == ["fabric/_units.py: isinstance(x, numbers.Real) and not is_bool(x)"]
    assert _OLD.search("if isinstance(v, bool) or not isinstance(v, numbers.Real) or v < 0:")
    assert _OLD.search("ok = (isinstance(v, numbers.Real)\n      and not is_bool(v))")
    assert _OLD.search("if isinstance(v, bool) or not (\n        isinstance(v, numbers.Real) and")
