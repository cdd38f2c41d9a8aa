"""Routed experts' NVFP4 grouped GEMMs on B200 / GB200 at TensorRT-LLM's measured CUTLASS MoE
time (session 21).

aiconfigurator's B200 data for TensorRT-LLM 1.2.0rc5 (``moe_perf.parquet``, kernel source
``moe_torch_flow_cutlass``: the CUTLASS backend, TensorRT-LLM's default MoE backend through
2025) times the whole NVFP4 MoE module on DeepSeek-V3 shapes for one GPU of EP8 (32 local
experts), 512-16384 tokens (16-512 rows per local expert). The decode step prices a B200's or
GB200's FP4 grouped GEMMs at the 32 experts' FLOPs over that time (linear in time between the
table's rows, never less at more rows), capped at the chip's FP4 peak, under
``engine="trtllm"`` in a CUDA graph (the module measured); the module's own kernels (top-k
through finalize, ``analysis.TRTLLM_MOE_MODULE_KERNELS``) then add no boundary or floor beyond
that time. Below 16 rows, on other chips (B300, GB300), other formats, other engines and eager
steps the step keeps its pricing. Before, every Blackwell FP4 grouped GEMM ran at the FP4 peak
(none published), so a large batch's MoE layer cost its weight read (~0.13 ms on B200 against
the measured 0.30-1.18 ms).
"""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import analysis
import topologies
from analysis import GROUPED_GEMM_TIME_BY_ROWS, TRTLLM_B200_NVFP4_CUTLASS_MOE, grouped_gemm_rate
from fabric import SpecError

#: A DeepSeek-V3 expert's GEMM FLOPs per token-expert pair: gate/up 7168 x 4096 and down
#: 2048 x 7168, two FLOPs a multiply-add.
PAIR_FLOPS = 2 * (7168 * 4096 + 2048 * 7168)


def test_the_table_by_hand():
    table = GROUPED_GEMM_TIME_BY_ROWS[("b200", "fp4")]
    assert GROUPED_GEMM_TIME_BY_ROWS[("gb200", "fp4")] == table
    assert [m for m, _ in table] == [16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512]
    raw = dict(TRTLLM_B200_NVFP4_CUTLASS_MOE)
    for (tokens, ms), (m, p) in zip(TRTLLM_B200_NVFP4_CUTLASS_MOE, table, strict=True):
        assert m == tokens * 8 // 256 and p.unit == "s"
        assert "aiconfigurator" in p.source and "1.2.0rc5" in p.source and "B200" in p.source
        # the lower envelope by brute force: no larger batch measured faster
        assert p.value == min(t for n, t in raw.items() if n >= tokens) * 1e-3
    # by hand: the 768-token time (0.339 ms) sits above the 1024-token one (0.310 ms)
    assert table[1][1].value == pytest.approx(0.3104106585184733e-3, rel=1e-15)
    assert "lower envelope" in table[1][1].source and "lower envelope" not in table[2][1].source


def test_the_rate_at_the_tables_rows_by_hand():
    # 3072 tokens: every rank's 3072 x 8 / 8 = 3072 token-expert pairs (96 rows on each of
    # its 32 experts) in 0.357 ms
    assert grouped_gemm_rate("b200", "fp4", 96) == pytest.approx(
        3072 * PAIR_FLOPS / 0.3571840127309163e-3, rel=1e-12)
    assert grouped_gemm_rate("gb200", "fp4", 512) == pytest.approx(
        16384 * PAIR_FLOPS / 1.1814506848653157e-3, rel=1e-12)
    # above the table: the last row's rate; between rows: linear in time
    assert grouped_gemm_rate("b200", "fp4", 4096) == grouped_gemm_rate("b200", "fp4", 512)
    t96, t128 = 0.3571840127309163e-3, 0.3943733374277751e-3
    assert grouped_gemm_rate("b200", "fp4", 112) == pytest.approx(
        32 * 112 * PAIR_FLOPS / ((t96 + t128) / 2), rel=1e-12)


def test_none_below_the_table_on_other_chips_and_formats():
    assert grouped_gemm_rate("b200", "fp4", 15.999) is None
    assert grouped_gemm_rate("b200", "fp4", 16) is not None
    for chip, fmt in (("b300", "fp4"), ("gb300", "fp4"), ("h100", "fp8"), ("h200", "fp4"),
                      ("b200", "fp8"), ("b200", "bf16")):
        assert grouped_gemm_rate(chip, fmt, 128) is None
    with pytest.raises(SpecError, match="rows per group"):
        grouped_gemm_rate("b200", "fp4", -1)
    with pytest.raises(SpecError, match="math format"):
        grouped_gemm_rate("b200", "fp5", 64)


@settings(max_examples=60, deadline=None)
@given(a=st.floats(16, 4000), b=st.floats(16, 4000))
def test_a_group_of_more_rows_never_takes_less_time(a, b):
    lo, hi = sorted((a, b))
    r_lo, r_hi = (grouped_gemm_rate("b200", "fp4", x) for x in (lo, hi))
    assert lo / r_lo <= hi / r_hi * (1 + 1e-12)


def _router(chip, per_rank, flops):
    """A MoE layer's router compute under engine 'trtllm' in a graph: its measured BF16
    ``Linear`` above 16 rows a rank (session 25, tests/test_models_s25_router.py), else its
    FLOPs at ``flops``."""
    m = analysis.model_config("deepseek-r1")
    if per_rank > 16:
        return analysis.trtllm_gemm_time(chip, "bf16", per_rank, 256, 7168)
    return per_rank * 2 * m.router_params / flops


@pytest.mark.parametrize("per_rank", [64, 384])
def test_decode_prices_the_routed_experts_at_the_measured_time(per_rank):
    # B200, DeepSeek-R1 NVFP4, attention DP8 + EP8 (the trtllm-bench rows' layout): the MoE
    # layer's routed compute is the busiest chip's pairs at the table's rate for its rows per
    # group, below the chip's FP4 peak
    f = topologies.build("hgx-b200")
    batch = 8 * per_rank
    step = analysis.decode_step("deepseek-r1-nvfp4", f, batch=batch, context=2048,
                                layout="tp=1,dp=8", engine="trtllm")
    m = analysis.model_config("deepseek-r1-nvfp4")
    L = step.layers[-1]
    pairs = batch * m.experts_per_token / 8
    rows = pairs / L.active_experts_chip
    rate = grouped_gemm_rate("b200", "fp4", rows)
    assert rows >= 16 and rate < f.chip.peak("fp4")
    fp4, bf16 = f.chip.peak("fp4"), f.chip.gemm_flops("bf16")
    shared_and_router = (_router("b200", per_rank, bf16)
                         + per_rank * 2 * m.shared_experts * m.expert_params / fp4)
    assert L.ffn_compute == pytest.approx(shared_and_router + pairs * 2 * m.expert_params / rate,
                                          rel=1e-9)
    assert {p.name for p in step.parameters} >= {"gemm.grouped_time.b200.fp4.m96"}


def test_below_the_table_and_on_a_b300_the_experts_keep_the_peak():
    # 8 requests a rank on B200: 2 rows per expert, no measured time; 384 a rank on a B300
    # chip: none for that chip. Both price the experts at the FP4 peak, as before.
    m = analysis.model_config("deepseek-r1-nvfp4")
    for spec, per_rank in (("hgx-b200", 8), ("hgx-b200:chip=b300", 384)):
        f = topologies.build(spec)
        step = analysis.decode_step(m, f, batch=8 * per_rank, context=2048, layout="tp=1,dp=8")
        L = step.layers[-1]
        pairs = 8 * per_rank * m.experts_per_token / 8
        fp4, bf16 = f.chip.peak("fp4"), f.chip.gemm_flops("bf16")
        assert L.ffn_compute == pytest.approx(per_rank * 2 * m.router_params / bf16
                                              + per_rank * 2 * m.shared_experts
                                              * m.expert_params / fp4
                                              + pairs * 2 * m.expert_params / fp4, rel=1e-9)


def _held(step, other):
    """Kernels of ``step``'s MoE layer charged no boundary: its kernels less its launches over
    the boundary one kernel pays (``other``'s dense layer's, whose kernels hold none: tp = 1 on
    a chip without measured kernels)."""
    per_kernel = other.layers[0].launch / other.layers[0].kernels
    return step.layers[-1].kernels - round(step.layers[-1].launch / per_kernel)


@pytest.mark.parametrize("per_rank", [8, 384])
def test_the_modules_own_kernels_are_inside_its_measured_time(per_rank):
    # aiconfigurator times moe.forward whole: top-k, expert maps, permute + quantize, both
    # grouped GEMMs and the activation, finalize. Where that time prices the routed experts
    # (384 a rank on B200, 96 rows a group) those 8 kernels add no boundary or floor of their
    # own; the kernel count is unchanged. At 8 a rank (2 rows: no measured time) and on a B300
    # (none for that chip) they keep both, as before.
    m = analysis.model_config("deepseek-r1-nvfp4")
    steps = {spec: analysis.decode_step(m, topologies.build(spec), batch=8 * per_rank,
                                        context=2048, layout="tp=1,dp=8", engine="trtllm")
             for spec in ("hgx-b200", "hgx-b200:chip=b300")}
    b200, b300 = steps["hgx-b200"], steps["hgx-b200:chip=b300"]
    assert b200.layers[-1].kernels == b300.layers[-1].kernels
    module = 8 if per_rank == 384 else 0
    assert len(analysis.TRTLLM_MOE_MODULE_KERNELS) == 8
    # (+2 on B200 at both sizes: the measured MLA generation op's two kernels,
    # tests/test_decode_mla_measured.py; and the measured attention GEMMs,
    # tests/test_decode_gemm_measured.py: query up-, output projections, W_UK, W_UV, and the
    # fused A above 16 rows a rank)
    gemms = 5 if per_rank == 384 else 4
    # (and the router GEMM's measured Linear above 16 rows a rank, session 25)
    router = 1 if per_rank == 384 else 0
    assert _held(b200, b300) == _held(b300, b300) + module + 2 + gemms + router
    # the floors the MoE block drops: the MoE layer's less the dense layer's (whose attention
    # block drops the same MLA kernels' floors and whose FFN is priced alike on both chips)
    drop = [b300.layers[i].kernel_floor - b200.layers[i].kernel_floor for i in (0, -1)]
    if module:
        assert drop[1] > drop[0] + 1e-6
    else:
        assert drop[1] == pytest.approx(drop[0], rel=1e-9, abs=1e-15)


def test_other_engines_and_eager_steps_keep_the_peak():
    # the measured module is TensorRT-LLM's, timed in a CUDA graph: vLLM's kernels and an
    # eager step (host launches) keep today's pricing of the routed experts
    m = analysis.model_config("deepseek-r1-nvfp4")
    f = topologies.build("hgx-b200")
    fp4 = f.chip.peak("fp4")
    pairs = 3072 * m.experts_per_token / 8
    for kw in ({"engine": "vllm"}, {"engine": "trtllm", "cuda_graphs": False}):
        L = analysis.decode_step(m, f, batch=3072, context=2048, layout="tp=1,dp=8",
                                 **kw).layers[-1]
        routed = L.ffn_compute - (384 * 2 * m.router_params / f.chip.gemm_flops("bf16")
                                  + 384 * 2 * m.shared_experts * m.expert_params / fp4)
        assert routed == pytest.approx(pairs * 2 * m.expert_params / fp4, rel=1e-9)


def test_h200_fp8_experts_take_the_modules_h200_time_under_trtllm():
    # H200, DeepSeek-R1 FP8 block-scaled experts, 128 a rank (1024 tokens: 32 rows a group):
    # TensorRT-LLM's CUTLASS module as measured on H200 (0.474 ms for 32 experts) prices the
    # routed experts; SGLang keeps DeepGEMM's masked table (H800) at the same rows
    from analysis import TRTLLM_H200_FP8_BLOCK_CUTLASS_MOE, grouped_gemm_efficiency
    assert grouped_gemm_rate("h200", "fp8", 32) == pytest.approx(
        1024 * PAIR_FLOPS / (dict(TRTLLM_H200_FP8_BLOCK_CUTLASS_MOE)[1024] * 1e-3), rel=1e-12)
    m = analysis.model_config("deepseek-r1")
    f = topologies.build("hgx-h200")
    fp8 = f.chip.gemm_flops("fp8")
    for engine in ("trtllm", "sglang"):
        step = analysis.decode_step(m, f, batch=1024, context=2048, layout="tp=1,dp=8",
                                    engine=engine)
        L = step.layers[-1]
        pairs = 1024 * m.experts_per_token / 8
        rows = pairs / L.active_experts_chip
        rate = (grouped_gemm_rate("h200", "fp8", rows) if engine == "trtllm" else
                fp8 * grouped_gemm_efficiency("hopper", "fp8", rows))
        dense = analysis.gemm_compute_efficiency("hopper", "fp8", "dense").value
        router = (_router("h200", 128, None) if engine == "trtllm"
                  else 128 * 2 * m.router_params / f.chip.gemm_flops("bf16"))
        want = (router + 128 * 2 * m.shared_experts * m.expert_params / (fp8 * dense)
                + pairs * 2 * m.expert_params / rate)
        assert L.ffn_compute == pytest.approx(want, rel=1e-9), engine
        names = {p.name for p in step.parameters}
        assert ("gemm.grouped_time.h200.fp8.m32" in names) == (engine == "trtllm")


@pytest.mark.parametrize("per_rank", [8, 16, 64])
def test_fewer_local_experts_than_the_table_keep_todays_pricing(per_rank):
    # review S21-R4 (lead 03:58): the table times 32 local experts (EP8 of 256); over 72 GB200s
    # a chip holds 3.6, so the module's fixed part would shrink with the FLOPs carried as a
    # rate: the step keeps its pricing there (identical to the step with no table at all)
    from unittest import mock

    from analysis import MEASURED_MOE_LOCAL_EXPERTS
    assert MEASURED_MOE_LOCAL_EXPERTS == 32
    f = topologies.build("gb200-nvl72")
    kw = {"batch": 72 * per_rank, "context": 2048, "layout": "tp=1,dp=72", "engine": "trtllm",
          "runtime": "ideal"}
    step = analysis.decode_step("deepseek-r1-nvfp4", f, **kw)
    with mock.patch.dict(GROUPED_GEMM_TIME_BY_ROWS, clear=True):
        plain = analysis.decode_step("deepseek-r1-nvfp4", f, **kw)
    assert step.layers[-1] == plain.layers[-1]
    assert not any(p.name.startswith("gemm.grouped_time") for p in step.parameters)
