"""TensorRT-LLM's attention projections and MLA batched GEMMs at aiconfigurator's measured times
(session 22, :mod:`analysis._gemm_measured`): under ``engine="trtllm"`` in a CUDA graph, on a
chip and in a weight format the tables hold (B200/GB200 BF16, H200 FP8 block-scaled), each of
the fused A, query up-, output projections and the W_UK / W_UV batched GEMMs runs at least its
measured time at the rank's rows and is charged no fixed part, floor or boundary of its own
(nor the FP8 input quantization before it). Elsewhere the step keeps its rooflines."""

from unittest import mock

import pytest
from decode_settings import decode_settings
from hypothesis import given, settings
from hypothesis import strategies as st

import analysis
import topologies
from analysis import _decode as D
from fabric import SpecError
from fabric._units import is_real

GEMMS = ("fuse_a_gemm", "uq_qr_gemm", "uk_bgemm", "uv_gemm", "wo_gemm")


def _tables_off():
    """The step as before session 22: no measured attention GEMM."""
    return mock.patch.object(D._Settings, "attention_gemm_measured", lambda s, name: None)


def _settings(model, spec, batch, layout, **kw):
    return decode_settings(topologies.build(spec), model, batch, layout, **kw)


def test_the_tables_read_the_collected_rows():
    # rows of the parquet files as stored (ms), the lower envelope's where a larger m is faster
    assert analysis.TRTLLM_B200_GEMM_BF16[(7168, 16384)][-3:] == (
        (8192, 1.28517), (16384, 2.47599), (32768, 4.79893))
    assert analysis.trtllm_gemm_time("b200", "bf16", 512, 7168, 16384) == pytest.approx(
        91.3e-6, rel=1e-3)
    assert analysis.trtllm_gemm_time("gb200", "bf16", 512, 7168, 16384) == \
        analysis.trtllm_gemm_time("b200", "bf16", 512, 7168, 16384)
    # the fused A projection's 2112 outputs: linear between the stored 2048 and 2560
    lo = analysis.trtllm_gemm_time("b200", "bf16", 1024, 2048, 7168)
    hi = analysis.trtllm_gemm_time("b200", "bf16", 1024, 2560, 7168)
    assert analysis.trtllm_gemm_time("b200", "bf16", 1024, 2112, 7168) == pytest.approx(
        lo + (hi - lo) * 64 / 512, rel=1e-12)
    assert analysis.trtllm_mla_bmm_time("b200", "bf16", "post", 128, 384) == pytest.approx(
        10.7e-6, rel=2e-3)
    # the lower envelope: 1 token's 8.04 us is above 2 tokens' 6.93 us, which it takes
    assert analysis.TRTLLM_H200_MLA_BMM_FP8[("mla_gen_pre", 16)][:2] == (
        (1, 0.0080352), (2, 0.006928))
    assert analysis.trtllm_mla_bmm_time("h200", "fp8-block128", "pre", 16, 1) == pytest.approx(
        6.928e-6, rel=1e-12)
    # nothing measured: another chip, format, reduction width, head shape, or beyond the grid
    assert analysis.trtllm_gemm_time("b300", "bf16", 64, 7168, 16384) is None
    assert analysis.trtllm_gemm_time("b200", "fp8-block128", 64, 7168, 16384) is None
    assert analysis.trtllm_gemm_time("b200", "bf16", 64, 7168, 8192) is None
    assert analysis.trtllm_gemm_time("h200", "fp8-block128", 64, 24576, 1536) is None
    assert analysis.trtllm_gemm_time("b200", "bf16", 65536, 7168, 16384) is None
    assert analysis.trtllm_mla_bmm_time("b200", "bf16", "pre", 128, 64,
                                        shape=(128, 256, 128)) is None


@pytest.mark.parametrize("bad", [0, -1, 0.5, float("nan"), "8", True, None])
def test_a_bad_row_count_is_refused(bad):
    error = SpecError if is_real(bad) else TypeError        # a wrong kind (s32)
    with pytest.raises(error, match="m must be"):
        analysis.trtllm_gemm_time("b200", "bf16", bad, 7168, 16384)
    with pytest.raises(error, match="m must be"):
        analysis.trtllm_mla_bmm_time("b200", "bf16", "pre", 128, bad)
    with pytest.raises(SpecError, match="op must be"):
        analysis.trtllm_mla_bmm_time("b200", "bf16", "middle", 128, 8)


@settings(max_examples=60, deadline=None)
@given(m=st.floats(1, 8192), dm=st.floats(0, 5000),
       shape=st.sampled_from([("b200", "bf16", 7168, 16384), ("b200", "bf16", 2112, 7168),
                              ("b200", "bf16", 24576, 1536), ("h200", "fp8-block128", 2112, 7168),
                              ("h200", "fp8-block128", 7168, 2048)]))
def test_more_rows_never_take_less_time(m, dm, shape):
    chip, fmt, n, k = shape
    m2 = min(m + dm, 8192)          # the H200 table's largest m
    assert (analysis.trtllm_gemm_time(chip, fmt, m, n, k)
            <= analysis.trtllm_gemm_time(chip, fmt, m2, n, k) * (1 + 1e-12))
    for op in ("pre", "post"):
        a = analysis.trtllm_mla_bmm_time(chip, fmt, op, 128, m)
        b = analysis.trtllm_mla_bmm_time(chip, fmt, op, 128, m2)
        assert a <= b * (1 + 1e-12)


def test_b200_max_throughput_step_takes_the_measured_gemms():
    # deepseek-r1-nvfp4 (BF16 attention) on 8 B200, attention DP8, 384 a rank: every one of
    # the five GEMMs is measured and slower than its roofline there; the step lists the grid
    # points it read and is slower than without the tables (a workload correction)
    f = topologies.build("hgx-b200")
    kw = {"batch": 8 * 384, "context": 2048, "layout": "tp=1,dp=8", "engine": "trtllm"}
    step = analysis.decode_step("deepseek-r1-nvfp4", f, **kw)
    s = _settings("deepseek-r1-nvfp4", "hgx-b200", 8 * 384, "tp=1,dp=8")
    times = {n: s.attention_gemm_measured(n) for n in GEMMS}
    assert times["wo_gemm"] == analysis.trtllm_gemm_time("b200", "bf16", 384, 7168, 16384)
    assert times["uq_qr_gemm"] == analysis.trtllm_gemm_time("b200", "bf16", 384, 24576, 1536)
    assert times["uk_bgemm"] == analysis.trtllm_mla_bmm_time("b200", "bf16", "pre", 128, 384)
    mem = D._memory_fit(s)
    names = D._attention_names(s)
    with _tables_off():
        plain = dict(zip(names, (r for _, r in D._attention_kernel_times(s, mem, names)),
                         strict=True))
        before = analysis.decode_step("deepseek-r1-nvfp4", f, **kw)
    for n in GEMMS:
        assert times[n] > plain[n]
    # the attention block holds each measured time at least, and moves by no more than the
    # measured times over the rooflines (the overheads it no longer charges are less)
    op = analysis.mla_generation_time("b200", 128, 512, 64, 2, 384, 2048)
    assert step.layers[0].attention >= sum(times.values()) + op
    grow = sum(times[n] - plain[n] for n in GEMMS)
    assert 0 < step.layers[0].attention - before.layers[0].attention < grow
    assert step.time > before.time
    names = {p.name for p in step.parameters}
    assert {"decode.trtllm_gemm_time.b200.bf16.n7168.k16384.m257",
            "decode.trtllm_gemm_time.b200.bf16.n7168.k16384.m512",
            "decode.trtllm_mla_bmm_time.b200.bf16.pre.h128.m384"} <= names
    assert all(p.unit == "s" and "1.2.0rc5" in p.source for p in step.parameters
               if p.name.startswith("decode.trtllm_"))


@pytest.mark.parametrize("case", ["vllm", "eager", "hbm_efficiency", "b300", "fp8-on-b200",
                                  "bf16-on-h200"])
def test_other_steps_keep_their_rooflines(case):
    model, spec, kw = "deepseek-r1-nvfp4", "hgx-b200", {}
    if case == "vllm":
        kw["engine"] = "vllm"
    elif case == "eager":
        kw["cuda_graphs"] = False
    elif case == "hbm_efficiency":
        kw["hbm_efficiency"] = 0.78
    elif case == "b300":
        spec = "hgx-b200:chip=b300"
    elif case == "fp8-on-b200":         # FP8 block GEMMs were not collected on SM100 then
        model = "deepseek-r1"
    else:
        spec = "hgx-h200"
    s = _settings(model, spec, 8 * 384, "tp=1,dp=8", **kw)
    assert all(s.attention_gemm_measured(n) is None for n in GEMMS)
    # (the router's measured BF16 Linear, session 25, is the B200's and the H200's whatever the
    # attention's format: taken out here, tests/test_models_s25_router.py)
    with mock.patch.object(D._Settings, "router_measured", property(lambda s: None)):
        step = analysis.decode_step(model, topologies.build(spec), batch=8 * 384, context=2048,
                                    layout="tp=1,dp=8", **{"engine": "trtllm", **kw})
        with _tables_off():
            before = analysis.decode_step(model, topologies.build(spec), batch=8 * 384,
                                          context=2048, layout="tp=1,dp=8",
                                          **{"engine": "trtllm", **kw})
    assert step == before
    assert not any(p.name.startswith("decode.trtllm_") for p in step.parameters)


def test_bf16_fused_a_keeps_its_roofline_up_to_16_rows():
    # TensorRT-LLM runs the BF16 7168 -> 2112 fused A projection in its own kernel for 1-16
    # tokens (dsv3_fused_a_gemm_op), cuBLAS above: the generic Linear's time only above
    at16 = _settings("deepseek-r1-nvfp4", "hgx-b200", 8 * 16, "tp=1,dp=8")
    at17 = _settings("deepseek-r1-nvfp4", "hgx-b200", 8 * 17, "tp=1,dp=8")
    assert at16.attention_gemm_measured("fuse_a_gemm") is None
    assert at16.attention_gemm_measured("wo_gemm") is not None
    assert at17.attention_gemm_measured("fuse_a_gemm") == pytest.approx(
        analysis.trtllm_gemm_time("b200", "bf16", 17, 2112, 7168), rel=1e-12)
    # the FP8 fused A on H200 is the FP8 Linear at any rows
    h = _settings("deepseek-r1", "hgx-h200", 1, "tp=8")
    assert h.attention_gemm_measured("fuse_a_gemm") == pytest.approx(
        analysis.trtllm_gemm_time("h200", "fp8-block128", 1, 2112, 7168), rel=1e-12)


def test_h200_holds_the_input_quantization_with_its_gemm():
    # H200 FP8 block-scaled attention at 128 a rank: the fused A, output projection and both
    # batched GEMMs are measured with their input quantization inside (Linear.forward; the FP8
    # bmm's quantize-and-permute): each such pair holds its two starts; the query
    # up-projection (24576 outputs at tp = 1, beyond the H200 table's 16384) keeps its
    # roofline, its quantization its boundary. At tp = 8 (3072 outputs) it is measured.
    s = _settings("deepseek-r1", "hgx-h200", 8 * 128, "tp=1,dp=8")
    names = D._attention_names(s)
    mask = D._attention_measured_mask(s, names)
    held = [n for n, h in zip(names, mask, strict=True) if h]
    assert s.attention_gemm_measured("uq_qr_gemm") is None
    assert sorted(n for n in held if n != "fp8_input_quant") == sorted(
        ["fuse_a_gemm", "uk_bgemm", "uv_gemm", "wo_gemm", "mla_metadata", "gen_attention",
         "mla_combine", "kv_cache_rope"])
    assert held.count("fp8_input_quant") == 4
    i = names.index("uq_qr_gemm")
    assert names[i - 1] == "fp8_input_quant" and not mask[i - 1] and not mask[i]
    tp8 = _settings("deepseek-r1", "hgx-h200", 8, "tp=8")
    assert tp8.attention_gemm_measured("uq_qr_gemm") == pytest.approx(
        analysis.trtllm_gemm_time("h200", "fp8-block128", 1, 3072, 1536), rel=1e-12)
