"""Session 29 (reader): a decode step does only the work its caller asks for.

A serving run prices hundreds of distinct decode steps and reads their times, never their
Parameters (listing them was a quarter of a step's time in a closed loop):
``decode_step(parameters=False)`` leaves them out, the rest of the step the same, and the
serving model's steps ask for that. A step reads its kernel lists in a dozen places: found
once a step. :func:`analysis.expected_max_active` is a pure function of its arrays' values:
remembered by them (a closed loop's large steps all have every expert certainly active).
"""
import numpy as np
import pytest
from degrade import built

import analysis
from analysis import _decode as D
from fabric import SpecError

KW = {"batch": 64, "context": 2048, "layout": "tp=1,dp=8", "engine": "trtllm"}


def _spy(monkeypatch, name):
    calls = []
    real = getattr(D, name)

    def spy(*a, **k):
        calls.append(name)
        return real(*a, **k)
    monkeypatch.setattr(D, name, spy)
    return calls


@pytest.mark.parametrize("model, kw", [("deepseek-r1", {}), ("deepseek-r1", {"draft": True}),
                                       ("deepseek-r1", {"cuda_graphs": False})])
def test_a_step_without_parameters_is_the_same_step(monkeypatch, model, kw):
    f = built("hgx-b200")
    full = analysis.decode_step(model, f, **{**KW, **kw})
    calls = _spy(monkeypatch, "_parameters")
    bare = analysis.decode_step(model, f, **{**KW, **kw}, parameters=False)
    assert calls == [] and bare.parameters == () and full.parameters
    assert bare == type(full)(**{**full.__dict__, "parameters": ()})


def test_serving_prices_its_steps_without_their_parameters(monkeypatch):
    f = built("hgx-b200")
    calls = _spy(monkeypatch, "_parameters")
    p = analysis.serving_point("deepseek-r1", f, isl=1024, osl=1024, batch=64,
                               layout="tp=1,dp=8", draft_length=1)
    assert p.tpot > 0 and calls == []
    with pytest.raises(SpecError, match="parameters are set by the serving sweep"):
        analysis.serving_point("deepseek-r1", f, isl=1024, osl=1024, batch=64,
                               layout="tp=1,dp=8", parameters=True)


@pytest.mark.parametrize("flag", [1, "no", None])
def test_parameters_is_a_bool(flag):
    with pytest.raises(TypeError, match="parameters must be True or False"):
        analysis.decode_step("deepseek-r1", built("hgx-b200"), **KW, parameters=flag)


def test_parameters_takes_numpy_bools_as_flags():
    # numpy bools are flags everywhere (session 30, lead's decision): np.False_ is False
    f = built("hgx-b200")
    step = analysis.decode_step("deepseek-r1", f, **KW, parameters=np.False_)
    assert step == analysis.decode_step("deepseek-r1", f, **KW, parameters=False)


def test_a_step_finds_its_kernel_lists_once(monkeypatch):
    f = built("hgx-b200")
    calls = _spy(monkeypatch, "step_kernel_lists")
    analysis.decode_step("deepseek-r1", f, **KW)
    assert len(calls) == 1


def test_expected_max_active_answers_equal_arrays_alike_and_refuses_as_before():
    D._expected_max_active.cache_clear()
    active, owner = np.linspace(0.1, 1.0, 12), np.arange(12) % 3
    first = analysis.expected_max_active(active, owner, 3)
    assert analysis.expected_max_active(list(active), list(owner), 3) == first
    assert analysis.expected_max_active(active.astype(np.float64), owner.astype(np.int32),
                                        np.int64(3)) == first
    assert D._expected_max_active.cache_info().hits >= 1
    # another owner of the same bytes' length is another answer
    assert analysis.expected_max_active(active, np.arange(12) % 4, 4) != first
    with pytest.raises(TypeError):            # numpy's refusal, as before the memo
        analysis.expected_max_active(active, owner, 3.0)
