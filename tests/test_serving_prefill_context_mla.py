"""A prompt's context attention at TensorRT-LLM's measured context MLA op (session 22).

``prefill_time(engine="trtllm")`` prices each layer of a prompt's attention scores at no less
than aiconfigurator's 1.2.0rc5 context MLA op for one prompt of ``isl`` tokens
(:func:`analysis.mla_context_time`: rope, latent-cache write and causal attention; B200/GB200
with a BF16 or FP8 KV cache, H200 with BF16), where the model's MLA shape and 128 heads a GPU
match the measurement; elsewhere the scores keep the BF16 peak."""

import dataclasses
from unittest import mock

import pytest
from degrade import built
from hypothesis import given, settings
from hypothesis import strategies as st

import analysis
import topologies
from analysis import TRTLLM_MLA_CONTEXT, mla_context_time
from fabric import SpecError


def test_the_tables_and_their_envelope_by_hand():
    for key, pts in TRTLLM_MLA_CONTEXT.items():
        assert [x for x, _ in pts] == [16, 32, 64, 128, 256, 512, 1024, 1536, 2048, 3072, 4096,
                                       6144, 8192, 10240, 12288, 16384]
        chip, kv = key
        for x, ms in pts:
            env = min(t for x2, t in pts if x2 >= x)
            assert mla_context_time(chip, 128, 512, 64, {"bf16": 2, "fp8": 1}[kv], x) == \
                pytest.approx(env * 1e-3, rel=1e-12)
    assert dict(TRTLLM_MLA_CONTEXT[("b200", "bf16")])[1024] == 0.0867253
    # linear between the points
    a, b = (mla_context_time("h200", 128, 512, 64, 2, x) for x in (1024, 1536))
    assert mla_context_time("h200", 128, 512, 64, 2, 1280) == pytest.approx((a + b) / 2)
    for bad in (("b300", 128, 2, 1024), ("h200", 128, 1, 1024), ("b200", 64, 2, 1024),
                ("b200", 128, 2, 8), ("b200", 128, 2, 20000)):
        chip, heads, kv, isl = bad
        assert mla_context_time(chip, heads, 512, 64, kv, isl) is None
    with pytest.raises(SpecError, match="isl"):
        mla_context_time("b200", 128, 512, 64, 2, 0)


def _no_op():
    import analysis._serving as S
    return mock.patch.object(S, "_prefill_context_op", lambda *a: None)


@pytest.mark.parametrize("spec,model,kv", [("hgx-b200", "deepseek-r1-nvfp4", 2),
                                           ("hgx-b200", "deepseek-r1-nvfp4", 1),
                                           ("hgx-h200", "deepseek-r1", 2)])
@pytest.mark.parametrize("serial", [False, True])
def test_a_prompt_takes_the_measured_context_op(spec, model, kv, serial):
    # one 1024-token prompt a rank at tp=1: each layer's scores run at least the op's time
    # (B200 86.7 us BF16 KV, 118.3 us FP8 KV; H200 134.8 us), above the BF16 peak's 19-44 us;
    # a pass of 8 prompts at once is the op's time, each prompt's share an eighth
    f = topologies.build(spec)
    m = dataclasses.replace(analysis.model_config(model), name="m", kv_cache_bytes=float(kv))
    kw = {"isl": 1024, "layout": "tp=1,dp=8", "one_at_a_time": serial, "engine": "trtllm"}
    with_op = analysis.prefill_time(m, f, **kw)
    with _no_op():
        before = analysis.prefill_time(m, f, **kw)
    op = mla_context_time(f.chip.name, 128, 512, 64, kv, 1024)
    peak = m.layers * m.attention.prefill_score_flops(1024) / f.chip.peak("bf16")
    assert m.layers * op > peak
    share = 1 if serial else 8
    assert with_op.compute - before.compute == pytest.approx((m.layers * op - peak) / share,
                                                             rel=1e-9)
    assert (with_op.weights, with_op.comm) == (before.weights, before.comm)


@pytest.mark.parametrize("case", ["tp8", "kimi-k2", "b300", "vllm", "efficiency"])
def test_other_prompts_keep_the_peak(case):
    model, spec, kw = "deepseek-r1-nvfp4", "hgx-b200", {"layout": "tp=1,dp=8"}
    if case == "tp8":                 # 16 heads a GPU: not measured
        kw["layout"] = "tp=8"
    elif case == "kimi-k2":           # 64 heads: not measured
        model = "kimi-k2"
    elif case == "b300":
        spec = "hgx-b200:chip=b300"
    elif case == "efficiency":
        kw["efficiency"] = 0.5
    engine = "vllm" if case == "vllm" else "trtllm"
    f = topologies.build(spec)
    p = analysis.prefill_time(model, f, isl=1024, engine=engine, **kw)
    with _no_op():
        assert analysis.prefill_time(model, f, isl=1024, engine=engine, **kw) == p


@settings(max_examples=15, deadline=None)
@given(isl=st.integers(16, 12000), more=st.integers(0, 4000))
def test_a_longer_prompt_never_takes_less(isl, more):
    # under the ideal runtime: the pass's exchange (TensorRT-LLM's attention-DP allgather +
    # reducescatter since session 23) can price cheaper one row longer under nccl, where NCCL's
    # tuner switches protocol (review S22-R1; tests/test_serving_prefill_moe_module.py)
    f = built("hgx-h200")
    kw = {"layout": "tp=1,dp=8", "engine": "trtllm", "one_at_a_time": True,
          "runtime": "ideal"}
    a = analysis.prefill_time("deepseek-r1", f, isl=isl, **kw)
    b = analysis.prefill_time("deepseek-r1", f, isl=isl + more, **kw)
    assert a.total <= b.total * (1 + 1e-12)
