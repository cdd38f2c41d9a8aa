"""Session 30 (reader): one flag check, ``fabric._units.flag_of``.

"True or False" was checked two ways: ``is_bool`` (numpy's bool too: ``cost(overlap=np.True_)``
since session 16) at analysis._collectives, _engine_allreduce and the format helpers, and
``isinstance(x, bool)`` at decode_step's cuda_graphs / pdl / draft / parameters,
instance_chips' and idle_chips' equal_domains, prefill_time's one_at_a_time and
serving_frontier's keep_all / adp_balance / kv_inflow, which refused ``np.True_``. ``flag_of``
is the one check (a Python bool handed back); the reader's and unowned modules use it.
"""
import pathlib
import re

import numpy as np
import pytest

import analysis
from fabric._units import flag_of
from tests.degrade import built


@pytest.mark.parametrize("value, want", [(True, True), (np.False_, False), (np.bool_(1), True)])
def test_flag_of_takes_bools_and_hands_back_a_python_bool(value, want):
    got = flag_of(value, "x")
    assert got is want


@pytest.mark.parametrize("value", [1, 0, 1.0, "no", None, np.array(True), [True]])
def test_flag_of_refuses_what_is_no_bool(value):
    with pytest.raises(TypeError, match="^pdl must be True or False, got "):
        flag_of(value, "pdl")


def test_decode_step_takes_numpy_bools_as_its_flags():
    f = built("hgx-b200")

    def step(**kw):
        return analysis.decode_step("deepseek-v3", f, batch=8, context=64, **kw)

    a = step(cuda_graphs=np.False_, pdl=np.False_, draft=np.True_)
    b = step(cuda_graphs=False, pdl=False, draft=True)
    assert a.time == b.time and a.cuda_graphs is False
    assert analysis.idle_chips(f, 4, equal_domains=np.True_) == analysis.idle_chips(
        f, 4, equal_domains=True)
    for flag in (True, False):      # review S30-R3: its kernel-list sibling too
        assert (analysis.step_kernel_lists("deepseek-r1", "h200", cuda_graphs=np.bool_(flag))
                == analysis.step_kernel_lists("deepseek-r1", "h200", cuda_graphs=flag))


def test_the_switched_modules_spell_the_flag_check_once():
    root = pathlib.Path(__file__).resolve().parent.parent
    old = re.compile(r"if not (isinstance\((\w+), bool\)|is_bool\((\w+)\)):\n\s+raise TypeError"
                     r"\(f\"[^\"]*must be True or False")
    found = {name: len(old.findall((root / name).read_text()))
             for name in ("analysis/_decode.py", "analysis/_serving.py",
                          "analysis/_engine_allreduce.py", "fabric/_units.py")}
    assert found == {"analysis/_decode.py": 0, "analysis/_serving.py": 0,
                     "analysis/_engine_allreduce.py": 0, "fabric/_units.py": 0}
    # flag_of's one spelling, through the one wrong-kind message (session 34); a flag that may
    # be None says so (session 36)
    assert (root / "fabric/_units.py").read_text().count(
        'raise kind_error(value, what, "True, False or None" if optional else "True or False")'
    ) == 1
