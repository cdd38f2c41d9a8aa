"""Audit, session 30 (task 3; reader's s29 list): analysis/_sweep.py's parameter_grid asks
fabric._units.items_of, the one "one value or a sequence" test, where it spelled its own
(a string, or no ``__iter__``). Answers are the same on every list, tuple, range, generator,
array and mapping; what changed: a 0-d array and an object whose ``__iter__`` is None or
raises TypeError are refused by the axis's name (were a raw TypeError from ``list()``), and an
object iterable by ``__getitem__`` is read as Python reads it (was refused).
"""

import numpy as np
import pytest

from analysis._sweep import parameter_grid


class _IterNone:
    __iter__ = None


@pytest.mark.parametrize("value", [np.array(4), _IterNone()])
def test_an_axis_that_is_no_sequence_is_named(value):
    # a wrong kind: a TypeError since session 36 (was a ValueError)
    with pytest.raises(TypeError, match="axis 'size' must be a sequence of values, got "):
        parameter_grid(op=["all-reduce"], size=value)


class _ByIndex:
    def __getitem__(self, i):
        if i < 2:
            return 2 ** (10 + i)
        raise IndexError


def test_an_axis_iterable_by_index_is_read_as_python_reads_it():
    assert parameter_grid(size=_ByIndex()) == [{"size": 1024}, {"size": 2048}]


@pytest.mark.parametrize("value", ["1024", b"1024", 1024, None])
def test_one_value_bare_is_still_refused(value):
    with pytest.raises(TypeError, match="axis 'size' must be a sequence of values"):
        parameter_grid(size=value)
