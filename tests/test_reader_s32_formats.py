"""Session 32 (reader): numpy floats are written as the floats they are, numpy numbers in JSON.

The report and JSON formatters asked ``isinstance(v, float)``, which np.float64 passes (a
float subclass) but np.float32/np.float16 do not: a float32 fell through to ``str`` (numpy's
shortest text of a float32, without the column's precision: '0.18' beside '0.283'; '2690.0'
where the serving table writes '2,690'), the CSV wrote numpy's text instead of the exact
``repr(float(v))``, and ``to_json`` raised "Object of type float32 is not JSON serializable"
(np.int64 and np.True_ too). One test, :func:`fabric._units.is_float`, now decides.
"""

import json

import numpy as np
import pytest
from source_trees import spelled

from analysis._json_units import to_json
from analysis._report_parts import Column, Table, fmt_float, fmt_value
from analysis._report_render import csv_text
from analysis._report_serving import _fmt_opt
from fabric import AddressMapError
from fabric._address import whole_numbers

_FLOATS = (np.float32(0.18), np.float16(2.5), np.float32(2690.0), np.float32(1e-7),
           np.longdouble(5.54))


@pytest.mark.parametrize("x", _FLOATS)
def test_a_numpy_float_is_shown_as_the_python_float_it_converts_to(x):
    assert fmt_float(3)(x) == fmt_float(3)(float(x))
    assert _fmt_opt(3)(x) == _fmt_opt(3)(float(x))
    assert fmt_value(x, "W") == fmt_value(float(x), "W")
    table = Table("t", "t", (Column("v", "v"),), ({"v": x},))
    assert csv_text(table) == f"v\n{float(x)!r}\n"


def test_the_column_precision_and_separators_reach_a_float32():
    assert fmt_float(3)(np.float32(0.18)) == "0.180"           # was '0.18'
    assert _fmt_opt(3)(np.float32(2690.0)) == "2,690"          # was '2690.0'


def test_json_takes_numpy_numbers_and_bools_as_the_python_ones():
    obj = {"a": np.int64(3), "b": np.float32(0.5), "c": np.float32("nan"), "d": np.True_,
           "e": [np.uint8(7), np.float16("inf")]}
    assert json.loads(to_json(obj)) == {"a": 3, "b": 0.5, "c": None, "d": True,
                                        "e": [7, None]}


def test_a_numpy_float_scalar_offset_is_named_as_a_float_not_an_array():
    with pytest.raises(TypeError, match=r"offset must be an integer >= 0, got "
                                        r"offset=np\.float32\(1\.0\) \(a float32\)"):
        whole_numbers(np.float32(1.0), "offset")
    with pytest.raises(AddressMapError):
        whole_numbers(np.int64(-1), "offset")


def test_no_package_module_asks_isinstance_float_but_the_float_test_and_toml_values():
    # is_float is the one float test; _system's TOML values are Python floats by the format
    assert spelled(r"isinstance\([^()]*, float\)") == [
        "fabric/_system.py: isinstance(v, float)", "fabric/_system.py: isinstance(v, float)",
        "fabric/_units.py: isinstance(x, float)"]
