"""The K-loop floor of dense NVFP4 decode GEMMs on Blackwell (``analysis.DECODE_GEMM_K_FLOOR``).

A small-N NVFP4 GEMM at decode size takes a time set by its reduction dimension K, not by its
bytes (flashinfer PR #2540's M = 1 CUTLASS column): every dense GEMM of an NVFP4 part on a
Blackwell chip runs at least ``intercept + slope x K`` kernel-only, i.e. beyond its boundary
``max(roofline + fixed part, intercept + slope x K - empty kernel)``; a fused FFN kernel runs
both of its GEMMs.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import analysis
import topologies
from analysis import _decode as D
from analysis._gemm import (
    DECODE_GEMM_K_FLOOR,
    FLASHINFER_GB200_NVFP4_CUTLASS_M1,
    HELION_B200_NVFP4_CUTLASS,
    decode_gemm_k_floor,
)
from fabric import SpecError

_B200 = topologies.build("switch:9,chip=b200")          # a spare chip for a failed one
_H200 = topologies.build("switch:9,chip=h200")
_PUBLISHED = {k: p.value for k, p in D.KERNEL_FLOORS.items()}


def test_floor_is_the_published_tables_least_squares_line():
    # flashinfer PR #2540, GB200 non-autotune, CUTLASS at M = 1 (us): time against K
    k = np.array([r[1] for r in FLASHINFER_GB200_NVFP4_CUTLASS_M1], dtype=float)
    t = np.array([r[2] for r in FLASHINFER_GB200_NVFP4_CUTLASS_M1]) * 1e-6
    slope, intercept = np.polyfit(k, t, 1)
    a, b = decode_gemm_k_floor("blackwell", "fp4")
    assert a.value == pytest.approx(intercept, rel=1e-9)
    assert b.value == pytest.approx(slope, rel=1e-9)
    assert a.unit == b.unit == "s" and "flashinfer" in a.source and "#2540" in b.source
    # a mean line: the table's points within 0.8 us of it
    assert np.max(np.abs(t - (a.value + b.value * k))) < 0.8e-6
    # the table's N are all below Helion's (>= 4096), where the bytes line is the longer one:
    # every Helion shape measured above the floor
    assert max(r[0] for r in FLASHINFER_GB200_NVFP4_CUTLASS_M1) < 4096
    for n, kk, us in HELION_B200_NVFP4_CUTLASS:
        assert n >= 4096 and us * 1e-6 > a.value + b.value * kk


def test_floor_only_where_published():
    assert set(DECODE_GEMM_K_FLOOR) == {("blackwell", "fp4")}
    for gen, fmt in (("hopper", "fp8"), ("blackwell", "bf16"), ("blackwell", "fp8"),
                     ("hopper", "bf16")):
        assert decode_gemm_k_floor(gen, fmt) is None
    with pytest.raises(SpecError, match="generation"):
        decode_gemm_k_floor("hoper", "fp4")


_ROW = {"batch": 1, "context": 2048, "layout": "tp=8,dp=1,etp=2", "engine": "trtllm",
        "runtime": "symmetric-memory", "pdl": True}


def test_shared_expert_by_hand():
    # the blog-1 rows' step (deepseek-r1-nvfp4, 8x B200, TP8, batch 1): TensorRT-LLM's fused
    # shared_expert runs gate/up (512 x 7168: K = 7168) and down (7168 x 256: K = 2048 / 8);
    # its floor beyond the boundary is both GEMMs' line less one empty kernel, longer than its
    # roofline + fixed part (3.1 MB at 0.314 of 8 TB/s + 2.6 us)
    f = topologies.build("hgx-b200")
    on = analysis.decode_step("deepseek-r1-nvfp4", f, **_ROW)
    off = analysis.decode_step("deepseek-r1-nvfp4", f, kernel_floors=_PUBLISHED, **_ROW)
    a, b = (p.value for p in decode_gemm_k_floor("blackwell", "fp4"))
    m = analysis.model_config("deepseek-r1-nvfp4")
    floor = (a + b * 7168) + (a + b * 256) - D.EMPTY_KERNEL_TIME.value
    shared_bytes = 3 * 7168 * 2048 * 0.5625 / 8                  # NVFP4, split over 8 ranks
    assert m.shared_expert_bytes / 8 == pytest.approx(shared_bytes, rel=1e-12)
    bw = 8e12 * analysis.decode_gemm_hbm_efficiency("blackwell", "fp4").value
    r_fixed = shared_bytes / bw + D.GEMM_FIXED_TIME.value
    assert floor > r_fixed
    moe_on, moe_off = on.layers[-1], off.layers[-1]
    assert moe_on.ffn - moe_off.ffn == pytest.approx(floor - r_fixed, rel=1e-9)
    assert moe_on.kernel_floor - moe_off.kernel_floor == pytest.approx(floor - r_fixed,
                                                                       rel=1e-9)
    # the dense layers' GEMMs (4608 x 7168, 7168 x 2304) stream longer than their floor
    assert on.layers[0].ffn == off.layers[0].ffn
    names = {p.name for p in on.parameters}
    assert {"gemm.decode_k_floor.blackwell.fp4.intercept",
            "gemm.decode_k_floor.blackwell.fp4.slope"} <= names
    assert not any("k_floor" in p.name for p in off.parameters)
    # a user's kernel_floors replaces every published floor, the K floor with them
    none = analysis.decode_step("deepseek-r1-nvfp4", f, kernel_floors={}, **_ROW)
    assert not any("k_floor" in p.name for p in none.parameters)


def _brute_floor_gap(step, m, lay, chip):
    """What the K floor adds to each FFN block, kernel by kernel from the kernel lists: each
    dense NVFP4 GEMM kernel costs max(roofline + fixed, its GEMMs' line - empty kernel)."""
    a, b = (p.value for p in decode_gemm_k_floor("blackwell", "fp4"))
    lists = D.step_kernel_lists(m, chip, engine=step_engine(step), tp=lay.tp,
                                tokens=-(-step.batch // lay.dp))
    sh = lay.tp if lay.etp > 1 else 1
    bw = chip.hbm_bandwidth * analysis.decode_gemm_hbm_efficiency("blackwell", "fp4").value
    peak = chip.peak("fp4")
    t = -(-step.batch // lay.dp)
    gaps = {}
    for kind, names in (("dense", lists["dense_ffn"]), ("moe", lists["moe_ffn"])):
        if kind == "dense":
            inner, params, tokens = m.dense_ffn / lay.tp, m.dense_ffn_params / lay.tp, t
        else:
            inner = m.shared_experts * m.expert_ffn / sh
            params = m.shared_experts * m.expert_params / sh
            tokens = t if lay.etp > 1 else t / lay.tp
        read = params * 0.5625 / bw
        comp = tokens * 2 * params / peak
        gemms = {"gate_up_proj": (2 / 3, (m.hidden,)), "down_proj": (1 / 3, (inner,)),
                 "shared_gate_up": (2 / 3, (m.hidden,)), "shared_down": (1 / 3, (inner,)),
                 "shared_expert": (1.0, (m.hidden, inner))}
        gap = 0.0
        for n in names:
            if n in gemms:
                share, ks = gemms[n]
                r = share * max(read, comp) + D.GEMM_FIXED_TIME.value
                line = sum(a + b * k for k in ks) - D.EMPTY_KERNEL_TIME.value
                gap += max(r, line) - r
        gaps[kind] = gap
    return gaps


def step_engine(step):
    return next(p.value for p in step.parameters if p.name == "decode.engine")


@settings(max_examples=40, deadline=None)
@given(model=st.sampled_from(("deepseek-r1-nvfp4",) * 4 + ("kimi-k2.5-nvfp4", "deepseek-r1")),
       chip=st.sampled_from(("b200",) * 3 + ("h200",)),
       layout=st.sampled_from(("tp=8,dp=1", "tp=8,dp=1,etp=2", "tp=8,dp=1,etp=8", "tp=1,dp=8",
                               "tp=2,dp=4")),
       batch=st.sampled_from((1, 8, 64, 512)), context=st.integers(1, 8000),
       engine=st.sampled_from(("trtllm", "vllm", "sglang")),
       failed=st.sampled_from((None, "chip3")))
def test_floor_adds_what_each_kernel_lacks(model, chip, layout, batch, context, engine, failed):
    # brute force, kernel by kernel: with the published floors on, each dense NVFP4 GEMM of an
    # FFN block on Blackwell costs at least its GEMMs' K line; nothing changes elsewhere
    f = {"b200": _B200, "h200": _H200}[chip]
    if failed:
        f = f.without(chips=[failed])
    kw = {"batch": batch, "context": context, "layout": layout, "engine": engine}
    try:
        on = analysis.decode_step(model, f, **kw)
    except SpecError as e:      # does not fit this layout's chips
        assert "a chip needs" in str(e)
        return
    off = analysis.decode_step(model, f, kernel_floors=_PUBLISHED, **kw)
    m = analysis.model_config(model)
    c = f.chip
    applies = c.generation == "blackwell" and c.gemm_format(m.math_format("ffn")) == "fp4"
    if not applies:
        assert on.time == off.time
        assert not any("k_floor" in p.name for p in on.parameters)
        return
    gaps = _brute_floor_gap(on, m, on.layout, c)
    for x, y in zip(on.layers, off.layers, strict=True):
        assert x.ffn - y.ffn == pytest.approx(gaps[x.kind], rel=1e-9, abs=1e-12)
        assert x.attention == y.attention
    assert on.time >= off.time
