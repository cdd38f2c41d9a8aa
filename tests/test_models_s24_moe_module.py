"""Session 24 (models): TensorRT-LLM's MoE module at decode token counts, as aiconfigurator
measured it at the step's own expert layout (``analysis.moe_module_time``,
``analysis.TRTLLM_MOE_MODULE_BY_LAYOUT``): the TRTLLM backend (trtllm-gen) on B200 with NVFP4
experts, opt-in by ``decode_step(moe_backend="trtllm")``, and the CUTLASS backend on H200 with
FP8 experts. The mechanism's tests fail on the parent commit (no such function or keyword; its
H200 step priced the module's kernels one by one)."""

import dataclasses
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import analysis
import analysis._decode as D
import topologies
from analysis import MEASURED_MOE_SHAPE, TRTLLM_MOE_MODULE_BY_LAYOUT, moe_module_time
from fabric import SpecError

B200 = topologies.build("hgx-b200")
H200 = topologies.build("hgx-h200")


def _step(fab, model, layout, q=4, batch=1, **kw):
    return analysis.decode_step(model, fab, batch=batch, context=2048, layout=layout,
                                tokens_per_sequence=q, engine="trtllm",
                                runtime="symmetric-memory", **kw)


def test_the_tables_by_hand():
    # the values copied from the parquet files (ms): B200 trtllm-gen TP4 x EP2 at 4 tokens,
    # H200 CUTLASS FP8 TP2 x EP4 at 4 tokens
    assert dict(TRTLLM_MOE_MODULE_BY_LAYOUT[("b200", "fp4", "trtllm")][(4, 2)])[4] == 0.0393867
    assert dict(TRTLLM_MOE_MODULE_BY_LAYOUT[("h200", "fp8", "cutlass")][(2, 4)])[4] == 0.0933707
    assert dict(TRTLLM_MOE_MODULE_BY_LAYOUT[("b200", "bf16", "cutlass")][(2, 4)])[1] == 0.0502987
    assert set(TRTLLM_MOE_MODULE_BY_LAYOUT) == {("b200", "fp4", "trtllm"),
                                                ("b200", "bf16", "cutlass"),
                                                ("h200", "fp8", "cutlass")}
    for table in TRTLLM_MOE_MODULE_BY_LAYOUT.values():
        assert set(table) == {(1, 8), (2, 4), (4, 2), (8, 1)}
        for pts in table.values():
            assert [x for x, _ in pts] == [1, 2, 4, 8, 16, 32, 48, 64, 80, 96, 128, 160, 192,
                                           256, 320, 384]
    ds = MEASURED_MOE_SHAPE
    assert moe_module_time("gb200", "fp4", ds, 4, 2, 4, "trtllm") == pytest.approx(39.3867e-6)
    # B200 CUTLASS (1.2.0rc5 has no min-latency branch: not the rows' kernel), other layouts,
    # shapes, formats and counts: nothing
    for args in (("b200", "fp4", ds, 2, 4, 4, "cutlass"), ("h200", "fp8", ds, 1, 72, 4),
                 ("h200", "fp8", (7168, 2048, 384, 8), 2, 4, 4), ("h200", "fp4", ds, 2, 4, 4),
                 ("h200", "fp8", ds, 2, 4, 385), ("h200", "fp8", ds, 2, 4, 0.5),
                 ("b300", "fp4", ds, 4, 2, 4, "trtllm")):
        assert moe_module_time(*args) is None, args
    with pytest.raises(SpecError, match="moe_backend"):
        moe_module_time("h200", "fp8", ds, 2, 4, 4, "deepgemm")
    with pytest.raises(SpecError, match="tokens"):
        moe_module_time("h200", "fp8", ds, 2, 4, -1)


@settings(max_examples=40, deadline=None)
@given(key=st.sampled_from(sorted(TRTLLM_MOE_MODULE_BY_LAYOUT)),
       lay=st.sampled_from([(1, 8), (2, 4), (4, 2), (8, 1)]),
       a=st.floats(1, 384), b=st.floats(1, 384))
def test_the_envelope_against_brute_force(key, lay, a, b):
    chip, math, backend = key
    pts = TRTLLM_MOE_MODULE_BY_LAYOUT[key][lay]
    t = moe_module_time(chip, math, MEASURED_MOE_SHAPE, *lay, a, backend)
    # never more than any measurement at a count at least as large
    assert t <= min(ms for x, ms in pts if x >= a) * 1e-3 * (1 + 1e-12)
    # never less than the envelope at the measured count just below (a non-decreasing line)
    below = max(x for x, _ in pts if x <= a)
    assert t >= min(ms for x, ms in pts if x >= below) * 1e-3 * (1 - 1e-12)
    lo, hi = sorted((a, b))
    assert t == moe_module_time(chip, math, MEASURED_MOE_SHAPE, *lay, a, backend)
    assert (moe_module_time(chip, math, MEASURED_MOE_SHAPE, *lay, lo, backend)
            <= moe_module_time(chip, math, MEASURED_MOE_SHAPE, *lay, hi, backend))


def _moe_layer(step):
    return step.layers[-1]


@pytest.mark.parametrize("fab,model,layout,backend,key", [
    (B200, "deepseek-r1-nvfp4", "tp=8,dp=1,etp=4", "trtllm", "b200.fp4.trtllm.etp4.ep2.t4"),
    (H200, "deepseek-r1", "tp=8,dp=1,etp=2", "cutlass", "h200.fp8.cutlass.etp2.ep4.t4"),
])
def test_a_step_takes_the_module_at_its_layout_and_tokens(fab, model, layout, backend, key):
    step = _step(fab, model, layout, moe_backend=backend)
    names = [p.name for p in step.parameters]
    assert f"gemm.moe_module_time.{key}" in names
    etp, ep = step.layout.etp, step.layout.ep
    math = fab.chip.gemm_format(analysis.model_config(model).math_format("experts"))
    t = moe_module_time(fab.chip.name, math, MEASURED_MOE_SHAPE, etp, ep, 4, backend)
    layer = _moe_layer(step)
    assert layer.ffn >= t
    # the module enters the MoE block once, whole: a module dearer by d makes the layer dearer
    # by exactly d (its kernels charge no floor, fixed part or boundary of their own)
    with mock.patch.object(D, "moe_module_time", lambda *a: t + 5e-6):
        dearer = _moe_layer(_step(fab, model, layout, moe_backend=backend))
    assert dearer.ffn - layer.ffn == pytest.approx(5e-6, rel=1e-9)
    assert (dearer.launch, dearer.attention) == (layer.launch, layer.attention)


def test_the_module_kernels_pay_no_boundary_of_their_own():
    # TP4 x EP2, 4 tokens: the CUTLASS pricing (no B200 CUTLASS table) charges the module's
    # kernels (top-k, expert maps, strides, two grouped GEMMs, activation) their boundaries
    cut = _moe_layer(_step(B200, "deepseek-r1-nvfp4", "tp=8,dp=1,etp=4", pdl=True))
    gen = _moe_layer(_step(B200, "deepseek-r1-nvfp4", "tp=8,dp=1,etp=4", pdl=True,
                           moe_backend="trtllm"))
    assert gen.kernels == cut.kernels
    assert cut.launch - gen.launch == pytest.approx(6 * (1.3e-6 - 0.55e-6), rel=1e-9)
    assert gen.ffn > cut.ffn      # trtllm-gen's measured module: dearer than the rooflines


def test_the_rows_that_keep_their_pricing():
    # the default CUTLASS backend on B200: the step's own pricing, as on the parent
    a = _step(B200, "deepseek-r1-nvfp4", "tp=8,dp=1,etp=2", pdl=True)
    with mock.patch.object(D, "moe_module_time", lambda *x: None):
        b = _step(B200, "deepseek-r1-nvfp4", "tp=8,dp=1,etp=2", pdl=True)
    assert a.time == b.time and not any("moe_module_time" in p.name for p in a.parameters)
    # an exchange kernel: each rank's MoE sees only the tokens sent to it, not the table's
    c = analysis.decode_step("deepseek-r1", H200, batch=8, context=2048, layout="tp=1,dp=8",
                             engine="trtllm", ep_kernel="deepep-low-latency")
    assert not any("moe_module_time" in p.name for p in c.parameters)
    # attention DP with the allgather: every rank sees all 8 tokens (EP8)
    g = analysis.decode_step("deepseek-r1", H200, batch=8, context=2048, layout="tp=1,dp=8",
                             engine="trtllm")
    assert "gemm.moe_module_time.h200.fp8.cutlass.etp1.ep8.t8" in [p.name for p in g.parameters]
    # another engine, eager steps, a user's compute efficiency: not TensorRT-LLM's graph
    for kw in ({"engine": "vllm"}, {"cuda_graphs": False}, {"compute_efficiency": 0.5}):
        s = analysis.decode_step("deepseek-r1", H200, batch=1, context=2048,
                                 layout="tp=8,dp=1,etp=2", **{"engine": "trtllm", **kw})
        assert not any("moe_module_time" in p.name for p in s.parameters), kw


def test_bad_backends_are_named():
    with pytest.raises(SpecError, match="moe_backend must be one of"):
        _step(B200, "deepseek-r1-nvfp4", "tp=8,dp=1,etp=4", moe_backend="nope")
    with pytest.raises(SpecError, match="Blackwell"):
        _step(H200, "deepseek-r1", "tp=8,dp=1,etp=2", moe_backend="trtllm")
    with pytest.raises(SpecError, match="engine 'vllm'"):
        analysis.decode_step("deepseek-r1-nvfp4", B200, batch=1, context=2048,
                             layout="tp=8,dp=1,etp=4", engine="vllm", moe_backend="trtllm")


def test_a_draft_step_takes_the_bf16_module():
    # the MTP layer's experts are BF16 (the NVFP4 checkpoint's): CUTLASS's BF16 module (no
    # min-latency branch for BF16 experts in 2025 either); trtllm-gen's table has no BF16
    m = analysis.model_config("deepseek-r1-nvfp4")
    assert m.mtp_modules
    kw = {"batch": 1, "context": 2048, "layout": "tp=8,dp=1,etp=2", "engine": "trtllm",
          "draft": True}
    s = analysis.decode_step(m, B200, **kw)
    assert "gemm.moe_module_time.b200.bf16.cutlass.etp2.ep4.t1" in [p.name for p in s.parameters]
    g = analysis.decode_step(m, B200, moe_backend="trtllm", **kw)
    assert not any("moe_module_time" in p.name for p in g.parameters)


def test_the_shape_must_match():
    m = dataclasses.replace(analysis.model_config("deepseek-r1"), name="narrow", expert_ffn=1024)
    s = analysis.decode_step(m, H200, batch=1, context=2048, layout="tp=8,dp=1,etp=2",
                             engine="trtllm")
    assert not any("moe_module_time" in p.name for p in s.parameters)
