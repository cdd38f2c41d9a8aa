"""Audit, session 29 (R29-2, lead's decision 02:16): the audit's modules ask the one int test,
``fabric._units.is_int``, where they spelled "an integer, not a bool" as ``numbers.Integral``
or ``(int, np.integer)``. Behaviour is the same on every value the packages meet; a registered
:class:`numbers.Integral` of another library (neither Python's nor numpy's) is now refused by
name where the ``numbers.Integral`` spelling took it (a torus of shape ``(_Registered(8),)``
was built as 8 chips, a graph's lanes counted it).
"""

import pathlib

import pytest
from test_reader_s29_int import _OLD, _Registered

import fabric
import topologies
from fabric import NodeError

MODULES = ["fabric/_access.py", "fabric/_fabric.py", "fabric/_routing.py", "fabric/_schema.py",
           "fabric/_structure.py", "fabric/_failures.py", "topologies/_common.py",
           "topologies/_switched.py"]


def test_the_audit_modules_spell_the_int_test_once():
    root = pathlib.Path(__file__).resolve().parent.parent
    found = [f"{name}:{i}" for name in MODULES
             for i, line in enumerate((root / name).read_text().splitlines(), 1)
             if _OLD.search(line) or "numbers.Integral" in line]
    assert found == []


F = topologies.build("torus:2x2")


@pytest.mark.parametrize("call, error, match", [
    # a count of the wrong kind is a TypeError (session 31; was a SpecError)
    (lambda v: topologies.torus((v,)), TypeError, r"shape\[0\] must be an integer"),
    (lambda v: topologies.switched(v), TypeError, "n must be an integer"),
    (lambda v: topologies.switched(4, planes=2, links=v), TypeError, "links must be an integer"),
    (lambda v: fabric.Grid((v,)), TypeError, r"shape\[0\] must be an integer"),
    (lambda v: fabric.access_to(F, 0, 1, size=v), TypeError, "size must be a positive int"),
    (lambda v: F.node(v), NodeError, "no node called _Registered"),
    (lambda v: F.router.loads_grouped([0], [1], 1.0, [0], v), TypeError,   # session 31
     "n_groups must be an integer"),
])
def test_a_registered_integral_is_refused_by_name(call, error, match):
    with pytest.raises(error, match=match):
        call(_Registered())
