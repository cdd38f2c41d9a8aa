"""Session 30 (reader): the serving model's checks hand on the number they checked as a float.

A numpy float16 or float32 (or a Fraction) passed every "finite number >= 0" or "in (0, 1]"
check of ``analysis._serving`` but was used as given, so the model computed in its precision:
``candidate_layouts(usable_hbm=np.float16(0.5))`` overflowed float16 in ``hbm_bytes x share``
and listed 13 layouts where 0.5 lists 5, ``prefill_time(hbm_efficiency=np.float32(0.5))``
answered a float32. The decode model's ``check_number`` and ``check_fraction`` (which return
``float(value)``) are now the one check of a number at every such site of the decode, serving
and speculative models (serving's inline checks and its ``_finite``, speculative's
``_check_cost`` and ``_check_a`` were near-copies of them).
"""
import fractions

import numpy as np
import pytest

import analysis
from analysis import _serving
from fabric import SpecError
from tests.degrade import built

HALF = [np.float16(0.5), np.float32(0.5), np.float64(0.5), fractions.Fraction(1, 2)]


@pytest.mark.parametrize("half", HALF, ids=lambda v: type(v).__name__)
def test_a_share_computes_as_the_float_it_is(half):
    f = built("hgx-b200")
    assert (analysis.candidate_layouts("deepseek-v3", f, usable_hbm=half)
            == analysis.candidate_layouts("deepseek-v3", f, usable_hbm=0.5))
    p = analysis.prefill_time("deepseek-v3", f, isl=64, hbm_efficiency=half)
    assert type(p.total) is float
    assert p == analysis.prefill_time("deepseek-v3", f, isl=64, hbm_efficiency=0.5)


@pytest.mark.parametrize("half", HALF, ids=lambda v: type(v).__name__)
def test_seconds_compute_as_the_float_they_are(half):
    p = _serving.PrefillTime(isl=101, flops=0.0, compute=0.0, weights=0.0, comm=2.0,
                             total=0.0, comm_one=half)
    assert type(p.chunk_comm(1)) is float and p.chunk_comm(51) == 1.25
    assert type(_serving._check_draft_cost(half)) is float


def test_one_check_of_a_number():
    from analysis import _decode, _speculative
    assert _serving.check_number is _decode.check_number is _speculative.check_number
    assert _serving.check_fraction is _decode.check_fraction
    for module, old in ((_serving, "_finite"), (_serving, "_share"),
                        (_speculative, "_check_cost"), (_speculative, "_check_a")):
        assert not hasattr(module, old)


@pytest.mark.parametrize("call, message", [
    (lambda: analysis.eager_pass_seconds([1e-6], launch=-1),
     "launch must be a finite number >= 0 seconds, got launch=-1"),
    (lambda: analysis.prefill_gemm_efficiency("h100", "bf16", "attention", 0),
     "efficiency must be in (0, 1] or None (the published one), got efficiency=0"),
    (lambda: _serving._check_draft_cost(True),          # a wrong kind: TypeError (s32)
     ("draft_cost must be a finite number >= 0 (a fraction of a plain step) or None (priced), "
      "got draft_cost=True (a bool)")),
    (lambda: _serving.PrefillTime(isl=3, flops=0.0, compute=0.0, weights=0.0, comm=1.0,
                                  total=0.0, comm_one=np.nan).chunk_comm(2),
     "comm_one must be a finite number >= 0 seconds or None, got comm_one=nan"),
])
def test_the_messages_name_the_value_and_its_rule(call, message):
    with pytest.raises((SpecError, TypeError)) as e:
        call()
    assert str(e.value) == message
    assert type(e.value) is (TypeError if message.endswith("(a bool)") else SpecError)


def test_equalize_and_bill_of_materials_compute_as_the_float_given():
    """The same at two unowned modules: equalize's target (float16: 'fixed cost above the
    target' for a target it meets) and bill_of_materials' rack_chips_factor (a Fraction
    failed in a format string)."""
    f = built("hgx-b200")
    scale = analysis.equalize(f, 0.5)[0]
    assert analysis.equalize(f, np.float16(0.5))[0] == scale
    assert type(analysis.equalize(f, np.float32(0.5))[0]) is float
    assert (analysis.bill_of_materials(f, rack_chips_factor=fractions.Fraction(1, 2)).as_dict()
            == analysis.bill_of_materials(f, rack_chips_factor=0.5).as_dict())


@pytest.mark.parametrize("kw", [{"fusion_factor": 2.5}, {"launch_overhead": 3e-6,
                                                        "cuda_graphs": False},
                                {"graph_kernel_overhead": 2e-6}])
def test_decode_step_computes_its_numbers_as_floats(kw):
    """decode_step's checked numbers (fusion_factor and the four kernel times) were stored as
    given: fusion_factor=np.float16(2.5) answered a float16 step time (0.01168 s where 2.5
    gives 0.0116130 s), a Fraction was refused where decode's fractions take one."""
    f = built("hgx-b200")
    name, value = next(iter(kw.items()))
    rest = {k: v for k, v in kw.items() if k != name}

    def step(v):
        return analysis.decode_step("deepseek-v3", f, batch=8, context=64, **rest, **{name: v})

    for v in (np.float32(value), np.float16(value), fractions.Fraction(value)):
        got = step(v).time
        assert type(got) is float
        assert got == step(float(v)).time      # the number given, computed in float64


@pytest.mark.parametrize("call", [
    lambda v: analysis.grouped_gemm_efficiency("hopper", "fp8", v),
    lambda v: analysis.grouped_gemm_rate("b200", "fp4", v),
    lambda v: analysis.mla_generation_time("b200", 128, 512, 64, 2, v, 2047),
    lambda v: analysis.mla_context_time("b200", 128, 512, 64, 2, v),
    lambda v: analysis.trtllm_gemm_time("h200", "fp8-block128", v, 7168, 16384),
    lambda v: analysis.trtllm_mla_bmm_time("b200", "bf16", "pre", 128, v),
], ids=["grouped_efficiency", "grouped_rate", "mla_generation", "mla_context", "gemm", "bmm"])
def test_the_measured_tables_take_numpy_numbers(call):
    """The measured-table functions spelled the real test (int, float): a numpy int or float
    (a numpy sweep's rows, batch or prompt) was refused as 'must be a number'."""
    assert call(np.int64(384)) == call(384) is not None
    assert call(np.float32(384.5)) == call(fractions.Fraction(769, 2)) == call(384.5)
    assert type(call(np.float32(384.5))) is float
    with pytest.raises(TypeError, match="must be a finite number"):    # a wrong kind (s32)
        call(np.True_)
