"""Runtime, session 30: R29-2 and R29-3 at analysis/_collectives.py.

R29-2: the module asks the one int test, ``fabric._units.is_int``, where it spelled "an integer,
not a bool" as ``numbers.Integral``. Every value the packages meet is answered as before
(Python's and numpy's ints and bools, floats, strings); a registered :class:`numbers.Integral`
of another library is now refused by name where ``cost`` and ``host_launch_delay`` took it on.

R29-3: ``default_runtime()`` reads ``cost``'s signature once a process, not at every call (two
calls a decode step).
"""
import inspect
import pathlib

import numpy as np
import pytest
from degrade import built
from test_reader_s29_int import _OLD, _Registered

from analysis._collectives import cost, default_runtime, host_launch_delay
from fabric import SpecError

F = built("dgx-h100")   # read only


def test_the_collectives_module_spells_the_int_test_once():
    root = pathlib.Path(__file__).resolve().parent.parent
    text = (root / "analysis/_collectives.py").read_text().splitlines()
    found = [i for i, line in enumerate(text, 1)
             if _OLD.search(line) or "numbers.Integral" in line]
    assert found == []


@pytest.mark.parametrize("call, match", [
    (lambda v: cost(F, "all-reduce", 1024, ops_per_launch=v), "ops_per_launch must be an int"),
    (lambda v: cost(F, "all-reduce", 1024, devices_per_process=v), "devices_per_process must"),
    (lambda v: cost(F, "all-reduce", 1024, iterations=v), "iterations must be an integer"),
    (lambda v: host_launch_delay(10e-6, 3e-6, v), "devices must be an integer"),
    (lambda v: host_launch_delay(10e-6, 3e-6, 2, iterations=v), "iterations must be an int"),
])
def test_a_registered_integral_is_refused_by_name_and_numpy_ints_are_taken(call, match):
    with pytest.raises(SpecError, match=match):
        call(_Registered())
    for bad in (True, np.True_, 2.0, "2", 0):
        with pytest.raises((SpecError, TypeError)):
            call(bad)
    assert call(np.int64(2)) == call(2)


def test_the_default_runtime_reads_the_signature_at_most_once(monkeypatch):
    reads = []
    signature = inspect.signature

    def counting(obj, *args, **kwargs):
        if obj is cost:
            reads.append(obj)
        return signature(obj, *args, **kwargs)

    monkeypatch.setattr(inspect, "signature", counting)
    answers = {default_runtime() for _ in range(3)}
    times = {cost(F, "all-gather", 4096, runtime=None).time for _ in range(3)}
    assert answers == {"nccl"} and len(times) == 1
    assert times == {cost(F, "all-gather", 4096, runtime="nccl").time}
    assert len(reads) <= 1
