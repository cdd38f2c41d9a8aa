"""Routed experts' grouped GEMMs on Hopper FP8 at their rows per group (session 13).

DeepGEMM's masked-layout table (README at 327ec92, H800, the decoding kernel) gives, at 1024,
512 and 256 rows per group, the achieved TFLOPS of the gate/up (4096 x 7168) and down
(7168 x 2048) shapes. The decode step prices its routed experts' FLOPs at the table's
FLOP-weighted efficiency for the busiest chip's rows per group (token-expert pairs over its
active experts), linear between the table's rows and clamped outside; before, one figure
(the rows above the H800 ridge: 1024 and 512) was taken at every size, so the 256-row shape
(reaching neither roof) was priced 13% under the table's own time.
"""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import analysis
import topologies
from analysis import DEEPGEMM_H800_FP8, GROUPED_GEMM_EFFICIENCY_BY_ROWS, grouped_gemm_efficiency
from fabric import SpecError
from fabric._units import is_real

H800_FP8 = 1978.9e12


def _table_efficiency(m):
    """Brute force from the raw table: FLOPs over summed time of the rows at ``m`` per group."""
    rows = [r for r in DEEPGEMM_H800_FP8["grouped"] if r[1] == m]
    flops = [2 * g * mm * n * k for g, mm, n, k, _ in rows]
    time = sum(f / (r[4] * 1e12) for f, r in zip(flops, rows, strict=True))
    return sum(flops) / time / H800_FP8


def test_the_table_by_hand():
    table = GROUPED_GEMM_EFFICIENCY_BY_ROWS[("hopper", "fp8")]
    assert [m for m, _ in table] == [256, 512, 1024]
    for m, p in table:
        assert p.value == pytest.approx(_table_efficiency(m), rel=1e-12)
        assert "DeepGEMM" in p.source and p.name.endswith(f".m{m}")
    # by hand at 256 rows: 4 x 2 x 256 x (4096 x 7168 at 932 TFLOPS + 7168 x 2048 at 815)
    f1, f2 = 8 * 256 * 4096 * 7168, 8 * 256 * 7168 * 2048
    assert table[0][1].value == pytest.approx((f1 + f2) / (f1 / 932e12 + f2 / 815e12)
                                              / H800_FP8, rel=1e-12)
    assert [round(p.value, 3) for _, p in table] == [0.449, 0.503, 0.561]


@settings(max_examples=200, deadline=None)
@given(a=st.floats(0, 5000), b=st.floats(0, 5000))
def test_a_group_of_more_rows_never_takes_less_time(a, b):
    # time per group ~ rows / efficiency(rows): non-decreasing in rows (more pairs never
    # finish sooner), and the efficiency stays within the table's range
    lo, hi = sorted((a, b))
    e_lo, e_hi = (grouped_gemm_efficiency("hopper", "fp8", x) for x in (lo, hi))
    table = [p.value for _, p in GROUPED_GEMM_EFFICIENCY_BY_ROWS[("hopper", "fp8")]]
    assert min(table) <= e_lo <= e_hi <= max(table)
    assert lo / e_lo <= hi / e_hi * (1 + 1e-12)


def test_interpolation_and_clamps():
    e = {m: grouped_gemm_efficiency("hopper", "fp8", m) for m in (0, 100, 256, 384, 512, 768,
                                                                  1024, 9999)}
    t = dict(GROUPED_GEMM_EFFICIENCY_BY_ROWS[("hopper", "fp8")])
    assert e[0] == e[100] == e[256] == t[256].value
    assert e[384] == pytest.approx((t[256].value + t[512].value) / 2, rel=1e-12)
    assert e[768] == pytest.approx((t[512].value + t[1024].value) / 2, rel=1e-12)
    assert e[1024] == e[9999] == t[1024].value
    for gen, fmt in (("blackwell", "fp4"), ("blackwell", "fp8"), ("hopper", "bf16")):
        assert grouped_gemm_efficiency(gen, fmt, 256) is None


@pytest.mark.parametrize("bad", [-1, True, "256", float("nan")])
def test_bad_rows_are_named(bad):
    with pytest.raises(SpecError if is_real(bad) else TypeError, match="rows per group"):
        grouped_gemm_efficiency("hopper", "fp8", bad)


@settings(max_examples=12, deadline=None)
@given(per_rank=st.sampled_from((1, 16, 64, 128, 256, 512)), failed=st.booleans())
def test_decode_prices_the_busiest_chips_rows_per_group(per_rank, failed):
    # by hand, EP8 with EPLB's balance 0.8 (the busiest rank's pairs: the mean over 0.8): the
    # MoE layer's FLOP time is the router's (BF16, peak), the shared expert's (DeepGEMM's dense
    # figure) and the routed experts' at the table's efficiency for pairs / active experts
    # (engine sglang: TensorRT-LLM on H200 takes its measured CUTLASS MoE module from 16 rows a
    # group since session 21, tests/test_decode_fp4_moe_time.py; the table prices the others)
    f = topologies.build("switch:9,chip=h200")
    if failed:
        f = f.without(chips=["chip4"])
    batch = per_rank * 8
    step = analysis.decode_step("deepseek-v3", f, batch=batch, context=512, layout="tp=1,dp=8",
                                expert_balance=0.8, engine="sglang")
    m = analysis.model_config("deepseek-v3")
    fp8, bf16 = f.chip.gemm_flops("fp8"), f.chip.gemm_flops("bf16")
    dense = analysis.gemm_compute_efficiency("hopper", "fp8", "dense").value
    L = step.layers[-1]
    pairs = batch * m.experts_per_token / 8 / 0.8
    eff = grouped_gemm_efficiency("hopper", "fp8", pairs / L.active_experts_chip)
    want = (per_rank * 2 * m.router_params / bf16
            + per_rank * 2 * m.shared_experts * m.expert_params / (fp8 * dense)
            + pairs * 2 * m.expert_params / (fp8 * eff))
    assert L.ffn_compute == pytest.approx(want, rel=1e-9)
