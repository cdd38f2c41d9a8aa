"""Session 25 (models): the MoE block's router gate GEMM at TensorRT-LLM's measured ``Linear``
time (aiconfigurator 1.2.0rc5 ``gemm_perf.parquet``, BF16, DeepSeek's (256, 7168) on B200 /
GB200 and H200; ``analysis.TRTLLM_ROUTER_SHAPES``, ``_Settings.router_measured``) above 16
tokens a rank, where every TensorRT-LLM code state runs it on cuBLAS (at 1-16 tokens the
dedicated ``dsv3_router_gemm_op`` kernel keeps its roofline, the fused A projection's rule).
The measured kernel is priced once: its time, no floor, fixed part or boundary of its own.
The tests fail on the parent commit (no such shape, table or property)."""

from unittest import mock

import pytest
from decode_settings import decode_settings
from hypothesis import given, settings
from hypothesis import strategies as st

import analysis
import topologies
from analysis import _decode as D

B200 = topologies.build("hgx-b200")
H200 = topologies.build("hgx-h200")
MODELS = {"b200": (B200, "deepseek-r1-nvfp4"), "h200": (H200, "deepseek-r1")}


def _settings(fab, model, batch, layout, **kw):
    return decode_settings(fab, model, batch, layout, **kw)


def _moe(step):
    return next(x for x in step.layers if x.kind == "moe")


def test_the_tables_by_hand():
    # rows of the parquet files (ms): B200 BF16 m = 1, 2, 384 is between 257 and 512; H200 BF16
    b = analysis.TRTLLM_B200_GEMM_BF16[(256, 7168)]
    assert b[:2] == ((1, 0.00544213), (2, 0.0058656)) and len(b) == 74
    h = analysis.TRTLLM_H200_GEMM_BF16[(256, 7168)]
    assert h[10] == (128, 0.00649387) and len(h) == 21
    assert set(analysis.TRTLLM_H200_GEMM_BF16) == {(256, 7168), (512, 7168)}  # 512: session 26
    assert analysis.trtllm_gemm_time("h200", "bf16", 128, 256, 7168) == pytest.approx(6.49387e-6)
    assert analysis.trtllm_gemm_time("gb200", "bf16", 64, 256, 7168) == \
        analysis.trtllm_gemm_time("b200", "bf16", 64, 256, 7168) == pytest.approx(5.92320e-6)
    # the lower envelope: 257 rows (8.71573 us) take 768's 7.90507 us
    assert analysis.trtllm_gemm_time("b200", "bf16", 257, 256, 7168) == pytest.approx(
        7.90507e-6)
    # the H200 FP8 attention table is untouched by the BF16 one beside it
    assert analysis.trtllm_gemm_time("h200", "fp8-block128", 128, 256, 7168) is None
    assert analysis.trtllm_gemm_time("h200", "bf16", 128, 7168, 16384) is None


@settings(max_examples=25, deadline=None)
@given(chip=st.sampled_from(sorted(MODELS)), per_rank=st.integers(1, 256),
       layout=st.sampled_from(["tp=1,dp=8", "tp=8", "tp=4,dp=2"]))
def test_the_router_reads_the_table_at_the_ranks_rows_above_16(chip, per_rank, layout):
    fab, model = MODELS[chip]
    dp = 8 if layout == "tp=1,dp=8" else 2 if layout == "tp=4,dp=2" else 1
    s = _settings(fab, model, per_rank * dp, layout)
    # each rank routes every token its MoE sees: its own under attention DP, its group's
    # under attention TP
    assert s.t_dp == per_rank
    got = s.router_measured
    if per_rank <= D.TRTLLM_FUSED_A_MIN_LATENCY_TOKENS:
        assert got is None and s.router_gemm_use is None
    else:
        assert got == analysis.trtllm_gemm_time(chip, "bf16", per_rank, 256, 7168)
        assert got is not None and got > 4e-6
        params = analysis.decode_step(model, fab, batch=per_rank * dp, context=2048,
                                      layout=layout).parameters
        assert any(p.name.startswith(f"decode.trtllm_gemm_time.{chip}.bf16.n256.k7168.m")
                   for p in params)
        # the router's compute efficiency is not among the step's figures any more
        assert not any(p.name.startswith("decode.compute_efficiency") and "router" in p.source
                       for p in params)


@settings(max_examples=15, deadline=None)
@given(chip=st.sampled_from(sorted(MODELS)), per_rank=st.integers(17, 256),
       layout=st.sampled_from(["tp=1,dp=8", "tp=8"]),
       x=st.floats(20e-6, 200e-6), dx=st.floats(1e-6, 100e-6))
def test_a_measured_router_is_priced_once(chip, per_rank, layout, x, dx):
    # the MoE layer is affine in the router's measured time with slope 1 (above its weight
    # read): the kernel adds its time and nothing else (no floor, fixed part or boundary
    # that would depend on it or be charged beside it)
    fab, model = MODELS[chip]
    dp = 8 if layout == "tp=1,dp=8" else 1
    kw = {"batch": per_rank * dp, "context": 2048, "layout": layout}

    def layer(t):
        with mock.patch.object(D._Settings, "router_measured", property(lambda s: t)):
            return _moe(analysis.decode_step(model, fab, **kw))

    a, b = layer(x), layer(x + dx)
    assert b.total - a.total == pytest.approx(dx, rel=1e-9, abs=1e-15)
    assert b.ffn - a.ffn == pytest.approx(dx, rel=1e-9, abs=1e-15)
    assert b.launch == a.launch and b.kernel_floor == a.kernel_floor


def test_one_boundary_and_the_overheads_fewer_than_the_priced_kernel():
    # the same step with the router priced as before (its roofline, fixed part and boundary):
    # the measured step charges one boundary less a MoE layer
    kw = {"batch": 8 * 384, "context": 2048, "layout": "tp=1,dp=8"}
    now = _moe(analysis.decode_step("deepseek-r1-nvfp4", B200, **kw))
    with mock.patch.object(D._Settings, "router_measured", property(lambda s: None)):
        before = _moe(analysis.decode_step("deepseek-r1-nvfp4", B200, **kw))
    s = _settings(B200, "deepseek-r1-nvfp4", 8 * 384, "tp=1,dp=8")
    assert before.launch - now.launch == pytest.approx(s.per_kernel, rel=1e-12)
    assert now.kernels == before.kernels         # the kernel count is unchanged
    # 384 rows: 8.7 us measured against ~1.7 us the roofline and its fixed part gave
    assert now.total - before.total > 3e-6


def test_elsewhere_nothing_is_taken():
    kw = (B200, "deepseek-r1-nvfp4", 8 * 384, "tp=1,dp=8")
    assert _settings(*kw).router_measured is not None
    for extra in ({"engine": "vllm"}, {"cuda_graphs": False}, {"compute_efficiency": 0.5}):
        assert _settings(*kw, **extra).router_measured is None, extra
    # the hypothetical 2.8T model's 1056 experts: not a stored shape (Kimi K2's 384 is, since
    # session 26: read between the stored 256 and 512, tests/test_models_s26_k2_router.py)
    assert _settings(B200, "hypothetical-2.8t", 8 * 384, "tp=1,dp=8").router_measured is None
    # a chip without a table
    assert _settings(topologies.build("switch:8,chip=b300"), "deepseek-r1-nvfp4", 8 * 384,
                     "tp=1,dp=8").router_measured is None


# -- a prompt pass's router: the same measured Linear at the prompt's rows ------------------

@pytest.mark.parametrize("spec, chip, model, layout, tp", [
    ("hgx-b200", "b200", "deepseek-r1-nvfp4", "tp=8", 8),
    ("hgx-b200", "b200", "deepseek-r1-nvfp4", "tp=1,dp=8", 1),
    ("hgx-h200", "h200", "deepseek-r1", "tp=4,dp=2", 4),
])
def test_a_prompt_pass_takes_the_routers_measured_time(spec, chip, model, layout, tp):
    from analysis import _serving as S
    fab = topologies.build(spec)
    m, lay = analysis.model_config(model), analysis.parse_layout(layout, 8)
    for isl in (17, 1024, 5000):
        t = analysis.trtllm_gemm_time(chip, "bf16", isl, 256, 7168)
        # every rank routes the prompt's tokens whole: a rank's time x tp as one-chip seconds,
        # the GEMM's FLOPs once
        assert S._prefill_router(m, fab.chip, lay, isl, "trtllm", None) == pytest.approx(
            (t * tp, 2 * isl * 256 * 7168), rel=1e-12)
    # beyond the table's rows: its largest count's time per row (the projections' rule)
    top = analysis.trtllm_gemm_max_rows(chip, "bf16", 256, 7168)
    got = S._prefill_router(m, fab.chip, lay, 3 * top, "trtllm", None)[0]
    assert got == pytest.approx(
        analysis.trtllm_gemm_time(chip, "bf16", top, 256, 7168) * 3 * tp, rel=1e-12)
    # the dedicated kernel's counts, other engines, a user efficiency: nothing taken
    for args in ((16, "trtllm", None), (1024, "vllm", None), (1024, "trtllm", 0.5)):
        assert S._prefill_router(m, fab.chip, lay, args[0], *args[1:]) is None, args
    other = analysis.model_config("hypothetical-2.8t")     # 1056 experts: not stored
    assert S._prefill_router(other, fab.chip, lay, 1024, "trtllm", None) is None
    # and the pass is slower by it (the router's FLOPs at the BF16 rate were ~10x faster)
    kw = {"isl": 1024, "layout": layout, "engine": "trtllm", "one_at_a_time": True}
    now = analysis.prefill_time(model, fab, **kw).total
    with mock.patch.object(S, "_prefill_router", lambda *a: None):
        before = analysis.prefill_time(model, fab, **kw).total
    assert now > before
