"""TensorRT-LLM's MLA generation attention op on B200 / GB200 at its measured time (session 21).

aiconfigurator's B200 data for TensorRT-LLM 1.2.0rc5 (``generation_mla_perf.parquet``) times
the attention backend's generation call at DeepSeek's MLA shape (128 heads on the GPU, latent
512 + rope 64, BF16 KV cache, one new token): the rope and latent-cache append kernel and the
MLA attention kernel, batch 1-1024 x 1-131071 cached tokens. Under ``engine="trtllm"`` in a
CUDA graph the step's attention kernel runs at least that long (2-D lower envelope, bilinear
in batch and context), and the two kernels the op holds (``kv_cache_rope``, ``gen_attention``)
are charged no floor or boundary of their own. Since session 22 an FP8 KV cache on B200 /
GB200 takes the same file's FP8-KV rows (collected by collect_mla_1_1rc2.py, which the
collector runs for TensorRT-LLM 1.2.0; session 21 had read collect_mla.py, BF16 only). Other
chips' FP8 KV caches, other chips, shapes, engines, eager steps and points outside the grid
keep the roofline pricing. Before, the attention kernel on Blackwell ran at its roofline (no
published rate).
"""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import analysis
import topologies
from analysis import TRTLLM_B200_MLA_GENERATION_BF16, mla_generation_time
from fabric import SpecError

T = TRTLLM_B200_MLA_GENERATION_BF16


def _time(batch, context, chip="b200", kv=2, heads=128):
    return mla_generation_time(chip, heads, 512, 64, kv, batch, context)


def test_the_grid_and_its_envelope_by_hand():
    assert sorted(T) == [2 ** k for k in range(11)]
    assert sum(len(v) for v in T.values()) == 181
    for b, pts in T.items():
        assert [c for c, _ in pts] == [2 ** k - 1 for k in range(1, len(pts) + 1)]
        for c, ms in pts:
            # the lower envelope by brute force: no larger batch and context measured faster
            env = min(t for b2, p2 in T.items() if b2 >= b for c2, t in p2 if c2 >= c)
            assert _time(b, c) == pytest.approx(env * 1e-3, rel=1e-12)
            assert _time(b, c) <= ms * 1e-3
    # the outlier at batch 1, 31 cached tokens (0.21 ms) is taken at a larger context's
    assert dict(T[1])[31] > 0.2 and _time(1, 31) < 2e-5


def test_bilinear_between_the_grids_points():
    # batch 384 between 256 and 512, context 1535 between 1023 and 2047
    a, b, c, d = (_time(x, y) for x in (256, 512) for y in (1023, 2047))
    assert _time(384, 1535) == pytest.approx((a + b + c + d) / 4, rel=1e-12)
    assert _time(384, 2047) == pytest.approx((b + d) / 2, rel=1e-12)


def test_none_outside_the_measurement():
    assert _time(2048, 1023) is None and _time(1024, 32767) is None
    assert _time(8, 0.5) is None and _time(8, 200_000) is None
    assert _time(384, 2047, chip="b300") is None and _time(384, 2047, chip="h100") is None
    assert _time(384, 2047, kv=1, chip="h200") is None  # H200's FP8-KV rows: not read
    assert _time(384, 2047, kv=4) is None               # an FP32 KV cache: not measured
    assert _time(384, 2047, heads=8) is None            # 8 heads on the GPU: not measured
    # (128 heads since session 21, 16 since 24, 64 and 32 since 25: MLA_GENERATION_HEADS)
    with pytest.raises(SpecError, match="batch"):
        _time(-1, 2047)


@settings(max_examples=60, deadline=None)
@given(b=st.floats(1, 1024), c=st.floats(1, 16383), db=st.floats(0, 500), dc=st.floats(0, 8000))
def test_more_sequences_or_context_never_take_less_time(b, c, db, dc):
    b2, c2 = min(b + db, 1024), min(c + dc, 16383)
    assert _time(b, c) <= _time(b2, c) * (1 + 1e-12)
    assert _time(b, c) <= _time(b, c2) * (1 + 1e-12)


def _dense_held(step, other):
    """Kernels of ``step``'s dense layer charged no boundary, by its launches over the one
    boundary ``other``'s dense layer pays per kernel (none held there at tp = 1)."""
    per_kernel = other.layers[0].launch / other.layers[0].kernels
    return step.layers[0].kernels - round(step.layers[0].launch / per_kernel)


def test_decode_takes_the_measured_op_for_the_attention_kernel():
    # B200, DeepSeek-R1 NVFP4 (BF16 KV), attention DP8: 384 sequences a rank, 2047 cached
    # tokens; the B300 (no measurement) prices the same step at the roofline
    m = analysis.model_config("deepseek-r1-nvfp4")
    steps = {spec: analysis.decode_step(m, topologies.build(spec), batch=8 * 384, context=2047,
                                        layout="tp=1,dp=8", engine="trtllm")
             for spec in ("hgx-b200", "hgx-b200:chip=b300")}
    b200, b300 = steps["hgx-b200"], steps["hgx-b200:chip=b300"]
    op = _time(384, 2047)
    assert b200.layers[0].attention >= op
    # the op's two kernels are held (no boundary), the kernel count unchanged (and, since
    # session 22, the five measured attention GEMMs at 384 rows: tests/test_decode_gemm_measured.py)
    assert b200.layers[0].kernels == b300.layers[0].kernels
    assert _dense_held(b200, b300) == 2 + 5 and _dense_held(b300, b300) == 0
    names = {p.name for p in b200.parameters}
    assert {"decode.mla_generation_time.b200.bf16.b256.c2047",
            "decode.mla_generation_time.b200.bf16.b512.c2047"} <= names
    assert not any(n.startswith("decode.mla_generation_time") for n in
                   (p.name for p in b300.parameters))


def test_the_fp8_kv_grid_and_its_envelope_by_hand():
    F = analysis.TRTLLM_B200_MLA_GENERATION_FP8KV
    assert sorted(F) == [2 ** k for k in range(11)]
    assert sum(len(v) for v in F.values()) == 181
    # rows as collected (ms): 128 / 512 / 1024 sequences at 2047 cached tokens, each below the
    # BF16 cache's (half the bytes read)
    assert [dict(F[b])[2047] for b in (128, 512, 1024)] == [0.057888, 0.175296, 0.333893]
    for b, pts in F.items():
        for c, ms in pts:
            env = min(t for b2, p2 in F.items() if b2 >= b for c2, t in p2 if c2 >= c)
            assert _time(b, c, kv=1) == pytest.approx(env * 1e-3, rel=1e-12)
            assert _time(b, c, kv=1, chip="gb200") == _time(b, c, kv=1)
    assert _time(384, 1535, kv=1) == pytest.approx(
        sum(_time(x, y, kv=1) for x in (256, 512) for y in (1023, 2047)) / 4, rel=1e-12)


def test_an_fp8_kv_cache_takes_the_fp8_measurement():
    # DeepSeek-R1-0528 NVFP4 with its FP8 KV cache (the R1-0528 trtllm-bench row's model) on
    # B200, attention DP8, 896 a rank: the attention kernel runs at least the FP8-KV op's time,
    # the op's two kernels held, the step lists the FP8 table's grid points (not the BF16's)
    import dataclasses
    m = dataclasses.replace(analysis.model_config("deepseek-r1-nvfp4"), name="r1-fp8kv",
                            kv_cache_bytes=1.0)
    kw = {"batch": 8 * 896, "context": 2047, "layout": "tp=1,dp=8", "engine": "trtllm"}
    b200 = analysis.decode_step(m, topologies.build("hgx-b200"), **kw)
    b300 = analysis.decode_step(m, topologies.build("hgx-b200:chip=b300"), **kw)
    op = _time(896, 2047, kv=1)
    assert op == pytest.approx(0.175296e-3 + (0.333893e-3 - 0.175296e-3) * 384 / 512, rel=1e-3)
    assert b200.layers[0].attention >= op
    assert _dense_held(b200, b300) == 2 + 5 and _dense_held(b300, b300) == 0
    names = {p.name for p in b200.parameters}
    assert {"decode.mla_generation_time.b200.fp8kv.b512.c2047",
            "decode.mla_generation_time.b200.fp8kv.b1024.c2047"} <= names
    assert not any(n.startswith("decode.mla_generation_time.b200.bf16") for n in names)
    src = next(p.source for p in b200.parameters
               if p.name == "decode.mla_generation_time.b200.fp8kv.b512.c2047")
    assert "FP8 KV" in src and "collect_mla_1_1rc2.py" in src


@pytest.mark.parametrize("case", ["fp8-kv-h200", "vllm", "eager", "8-heads"])
def test_other_steps_keep_the_roofline(case):
    import dataclasses
    m = analysis.model_config("deepseek-r1-nvfp4")
    kw = {"batch": 8 * 384, "context": 2047, "layout": "tp=1,dp=8", "engine": "trtllm"}
    spec = "hgx-b200"
    if case == "fp8-kv-h200":
        m = dataclasses.replace(analysis.model_config("deepseek-r1"), name="r1-fp8kv",
                                kv_cache_bytes=1.0)
        spec, kw["batch"] = "hgx-h200", 8 * 128
    elif case == "vllm":
        kw["engine"] = "vllm"
    elif case == "eager":
        kw["cuda_graphs"] = False
    else:       # Kimi K2's 64 heads at tp=8: 8 on the GPU, not measured (128, 64, 32 and 16
        # are: sessions 21, 24, 25, tests/test_models_s25_mla_heads.py)
        m = analysis.model_config("kimi-k2")
        kw.update(layout="tp=8", batch=64)
    step = analysis.decode_step(m, topologies.build(spec), **kw)
    assert not any(p.name.startswith("decode.mla_generation_time") for p in step.parameters)


def test_h200_takes_its_own_measurement_with_flashmlas_kernels_held():
    # H200 (FlashMLA's path): the op holds FlashMLA's metadata and combine kernels too, 4 starts;
    # the attention kernel runs at least the H200 op's time (0.164 ms at 128 x 2047), above the
    # roofline at FlashMLA's published rates
    # (a user's hbm_efficiency turns the published rates off: no measured op, no held start)
    m = analysis.model_config("deepseek-r1")
    kw = {"batch": 8 * 128, "context": 2047, "layout": "tp=1,dp=8", "engine": "trtllm"}
    f = topologies.build("hgx-h200")
    h200 = analysis.decode_step(m, f, **kw)
    plain = analysis.decode_step(m, f, hbm_efficiency=0.78, **kw)
    assert _time(128, 2047, chip="h200") == pytest.approx(0.16420e-3, rel=1e-3)
    assert h200.layers[0].attention >= _time(128, 2047, chip="h200")
    assert h200.layers[0].kernels == plain.layers[0].kernels
    # (+ 8 since session 22: the measured FP8 fused A, output projection, W_UK and W_UV with
    # their input quantizations; the query up-projection is beyond the H200 table)
    assert _dense_held(h200, plain) == 4 + 8 and _dense_held(plain, plain) == 0
    assert {"decode.mla_generation_time.h200.bf16.b128.c2047"} <= {p.name for p in h200.parameters}
