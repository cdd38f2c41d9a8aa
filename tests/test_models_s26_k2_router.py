"""Session 26 (models; s25's item 4): Kimi K2's router gate (384 experts from 7168) at
TensorRT-LLM's measured BF16 ``Linear``: aiconfigurator 1.2.0rc5's (512, 7168) rows (B200 74
counts, H200 21) beside the (256, 7168) ones, K2's 384 read linearly between them (the fused A
projection's rule). TensorRT-LLM's dedicated router kernel runs only DeepSeek's 256 experts
(``analysis.TRTLLM_DSV3_ROUTER_KERNEL_SHAPES``; ``dsv3_router_gemm_op``: anything else falls
back to cuBLAS), so K2's router is the measured ``Linear`` at every token count, in every
release. The tests fail on the parent commit (no such rows, shape or constant)."""

import pytest
from decode_settings import decode_settings
from hypothesis import given, settings
from hypothesis import strategies as st

import analysis
import topologies

B200 = topologies.build("hgx-b200")
H200 = topologies.build("hgx-h200")
RELEASES = sorted(analysis.TRTLLM_RELEASE_DATES) + [None]


def test_the_rows_by_hand():
    # rows of the parquet files (ms): bfloat16, torch_flow, n 512, k 7168
    b = analysis.TRTLLM_B200_GEMM_BF16[(512, 7168)]
    assert len(b) == 74 and b[0] == (1, 0.00586027) and b[-1] == (32768, 0.18109)
    h = analysis.TRTLLM_H200_GEMM_BF16[(512, 7168)]
    assert len(h) == 21 and h[0] == (1, 0.00634027) and h[-1] == (8192, 0.0768661)
    assert set(analysis.TRTLLM_H200_GEMM_BF16) == {(256, 7168), (512, 7168)}
    assert analysis.TRTLLM_ROUTER_SHAPES == {(256, 7168), (384, 7168)}
    assert analysis.TRTLLM_DSV3_ROUTER_KERNEL_SHAPES == {(256, 7168)}


@pytest.mark.parametrize("chip", ["b200", "gb200", "h200"])
@pytest.mark.parametrize("m", [1, 4, 16, 64, 300, 1024])
def test_k2s_router_reads_between_256_and_512(chip, m):
    t256 = analysis.trtllm_gemm_time(chip, "bf16", m, 256, 7168)
    t512 = analysis.trtllm_gemm_time(chip, "bf16", m, 512, 7168)
    got = analysis.trtllm_gemm_time(chip, "bf16", m, 384, 7168)
    assert got == pytest.approx(t256 + (t512 - t256) * (384 - 256) / (512 - 256), rel=1e-12)
    # the corners read are the stored 256 and 512 (not 256 and 2048, the next stored before)
    names = {p.name for p in analysis.trtllm_gemm_parameters(chip, "bf16",
                                                              [("gemm", m, 384, 7168)])}
    key = "b200" if chip == "gb200" else chip
    assert any(f"{key}.bf16.n512.k7168" in n for n in names)
    assert not any(".n2048." in n for n in names)
    # the fused A projection's corners stay 2048 and 2560 (the new rows lie below them)
    if chip != "h200":
        f0 = analysis.trtllm_gemm_time(chip, "bf16", m, 2048, 7168)
        f1 = analysis.trtllm_gemm_time(chip, "bf16", m, 2560, 7168)
        assert analysis.trtllm_gemm_time(chip, "bf16", m, 2112, 7168) == pytest.approx(
            f0 + (f1 - f0) * 64 / 512, rel=1e-12)


def _settings(fab, model, batch, layout, release):
    return decode_settings(fab, model, batch, layout, trtllm_release=release)


@settings(max_examples=30, deadline=None)
@given(case=st.sampled_from([("b200", "kimi-k2.5-nvfp4"), ("b200", "kimi-k2.5-int4"),
                             ("h200", "kimi-k2"), ("b200", "deepseek-r1-nvfp4")]),
       per_rank=st.integers(1, 40), release=st.sampled_from(RELEASES))
def test_only_deepseeks_router_has_the_dedicated_kernel(case, per_rank, release):
    chip, model = case
    fab = B200 if chip == "b200" else H200
    s = _settings(fab, model, per_rank, "tp=8", release)
    assert s.t_dp == per_rank
    m = analysis.model_config(model)
    dedicated = ((m.routed_experts, m.hidden) == (256, 7168) and per_rank <= 16
                 and (release is None or analysis.trtllm_runs_dsv3_gemms(release)))
    if dedicated:
        assert s.router_measured is None
    else:
        assert s.router_measured == analysis.trtllm_gemm_time(
            chip, "bf16", per_rank, m.routed_experts, 7168)


def test_a_k2_step_lists_both_corners():
    step = analysis.decode_step("kimi-k2.5-nvfp4", B200, batch=1, context=2048, layout="tp=8")
    names = {p.name for p in step.parameters}
    assert {"decode.trtllm_gemm_time.b200.bf16.n256.k7168.m1",
            "decode.trtllm_gemm_time.b200.bf16.n512.k7168.m1"} <= names


def test_a_short_k2_prompt_runs_its_router_on_cublas():
    kw = {"isl": 8, "layout": "tp=8", "engine": "trtllm"}
    with_table = analysis.prefill_time("kimi-k2.5-nvfp4", B200, **kw)
    none = analysis.prefill_time("kimi-k2.5-nvfp4", B200, isl=8, layout="tp=8", engine="vllm")
    assert with_table.compute > none.compute
