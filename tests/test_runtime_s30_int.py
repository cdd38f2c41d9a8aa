"""Runtime, session 30: R29-2 and R29-3 at analysis/_collectives.py.

R29-2: the module asks the one int test, ``fabric._units.is_int``, where it spelled "an integer,
not a bool" as ``numbers.Integral``. Every value the packages meet is answered as before
(Python's and numpy's ints and bools, floats, strings); a registered :class:`numbers.Integral`
of another library is now refused by name where ``cost`` and ``host_launch_delay`` took it on.

R29-3: ``default_runtime()`` reads ``cost``'s signature once a process, not at every call (two
calls a decode step).

R30-1 (reader): the real-number tests (``cost``'s nbytes, ``host_launch_delay``'s gpu_time and
host_launch) ask ``fabric._units.is_real``; a numpy size is read as the Python number it holds
(an np.float16 compared with MAX_BYTES overflowed, with a RuntimeWarning).
"""
import inspect
import pathlib
import warnings

import numpy as np
import pytest
from degrade import built
from test_reader_s29_int import _OLD, _Registered

from analysis._collectives import cost, default_runtime, host_launch_delay
from fabric import SpecError

F = built("dgx-h100")   # read only


def test_the_collectives_module_spells_the_number_tests_once():
    root = pathlib.Path(__file__).resolve().parent.parent
    text = (root / "analysis/_collectives.py").read_text().splitlines()
    found = [i for i, line in enumerate(text, 1)
             if _OLD.search(line) or "numbers." in line]
    assert found == []


def test_a_numpy_size_is_its_python_number_without_a_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        half = cost(F, "all-reduce", np.float16(1024))
        assert half.time == cost(F, "all-reduce", 1024.0).time


@pytest.mark.parametrize("call, match", [
    (lambda v: cost(F, "all-reduce", 1024, ops_per_launch=v), "ops_per_launch must be an int"),
    (lambda v: cost(F, "all-reduce", 1024, devices_per_process=v), "devices_per_process must"),
    (lambda v: cost(F, "all-reduce", 1024, iterations=v), "iterations must be an integer"),
    (lambda v: host_launch_delay(10e-6, 3e-6, v), "devices must be an integer"),
    (lambda v: host_launch_delay(10e-6, 3e-6, 2, iterations=v), "iterations must be an int"),
])
def test_a_registered_integral_is_refused_by_name_and_numpy_ints_are_taken(call, match):
    # a count of the wrong kind is a TypeError, one out of range a SpecError (session 31)
    with pytest.raises(TypeError, match=match):
        call(_Registered())
    for bad in (True, np.True_, 2.0, "2"):
        with pytest.raises(TypeError, match=match):
            call(bad)
    with pytest.raises(SpecError, match=match):
        call(0)
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
