"""Session 25 (models): TensorRT-LLM's MLA generation op at 64 and 32 query heads on the GPU
(DeepSeek's 128 under tensor parallelism 2 and 4), from the same aiconfigurator 1.2.0rc5
``generation_mla_perf.parquet`` rows as the 128- and 16-head tables (B200 BF16 and FP8 KV, H200
BF16 KV). A step at tp 2 or 4 under ``engine="trtllm"`` in a CUDA graph takes the op as
measured. The tests fail on the parent commit (no such tables; those steps read nothing)."""

import pytest
from decode_settings import decode_settings
from hypothesis import given, settings
from hypothesis import strategies as st

import analysis
import topologies
from analysis import (
    TRTLLM_B200_MLA_GENERATION_BF16_32_HEADS,
    TRTLLM_B200_MLA_GENERATION_BF16_64_HEADS,
    TRTLLM_B200_MLA_GENERATION_FP8KV_32_HEADS,
    TRTLLM_B200_MLA_GENERATION_FP8KV_64_HEADS,
    TRTLLM_H200_MLA_GENERATION_BF16_32_HEADS,
    TRTLLM_H200_MLA_GENERATION_BF16_64_HEADS,
    mla_generation_time,
)

TABLES = {("b200", 2, 64): TRTLLM_B200_MLA_GENERATION_BF16_64_HEADS,
          ("b200", 2, 32): TRTLLM_B200_MLA_GENERATION_BF16_32_HEADS,
          ("b200", 1, 64): TRTLLM_B200_MLA_GENERATION_FP8KV_64_HEADS,
          ("b200", 1, 32): TRTLLM_B200_MLA_GENERATION_FP8KV_32_HEADS,
          ("h200", 2, 64): TRTLLM_H200_MLA_GENERATION_BF16_64_HEADS,
          ("h200", 2, 32): TRTLLM_H200_MLA_GENERATION_BF16_32_HEADS}


def test_the_tables_by_hand():
    # rows of the parquet files (ms) at batch 1 / 2 / 64 and 2047 cached tokens
    assert dict(TRTLLM_B200_MLA_GENERATION_BF16_64_HEADS[1])[2047] == 0.015184
    assert dict(TRTLLM_B200_MLA_GENERATION_BF16_32_HEADS[64])[2047] == 0.054128
    assert dict(TRTLLM_B200_MLA_GENERATION_FP8KV_64_HEADS[64])[2047] == 0.031664
    assert dict(TRTLLM_H200_MLA_GENERATION_BF16_32_HEADS[2])[2047] == 0.033488
    assert dict(TRTLLM_H200_MLA_GENERATION_BF16_64_HEADS[64])[2047] == 0.0925547
    for table in TABLES.values():       # 181 points each: batch 1-1024, context 1-131071
        assert sorted(table) == [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024]
        assert sum(len(p) for p in table.values()) == 181
    assert analysis.MLA_GENERATION_HEADS == (128, 64, 32, 16)
    # B200 64 heads at batch 1: 15.18 us measured, taken at batch 2's 14.97 (the envelope)
    assert mla_generation_time("b200", 64, 512, 64, 2, 1, 2047) == pytest.approx(14.9653e-6)
    assert mla_generation_time("gb200", 32, 512, 64, 1, 64, 2047) == \
        mla_generation_time("b200", 32, 512, 64, 1, 64, 2047)
    # not measured: H200's FP8 KV, 48 heads, another chip
    assert mla_generation_time("h200", 64, 512, 64, 1, 64, 2047) is None
    assert mla_generation_time("b200", 48, 512, 64, 2, 64, 2047) is None
    assert mla_generation_time("b300", 64, 512, 64, 2, 64, 2047) is None


@settings(max_examples=60, deadline=None)
@given(key=st.sampled_from(sorted(TABLES)), data=st.data())
def test_grid_points_read_the_brute_force_lower_envelope(key, data):
    # at a measured (batch, context) the op's time is the least measurement at that batch and
    # context or more of both (a brute force over the raw table)
    chip, kv, heads = key
    raw = TABLES[key]
    b = data.draw(st.sampled_from(sorted(raw)))
    c = data.draw(st.sampled_from([x for x, _ in raw[b]]))
    want = min(ms for b2, pts in raw.items() if b2 >= b for c2, ms in pts if c2 >= c) * 1e-3
    assert mla_generation_time(chip, heads, 512, 64, kv, b, c) == pytest.approx(want,
                                                                                rel=1e-12)


def _settings(fab, model, batch, layout):
    return decode_settings(fab, model, batch, layout)


@pytest.mark.parametrize("spec, chip, model, layout, heads", [
    ("hgx-b200", "b200", "deepseek-r1-nvfp4", "tp=2,dp=4", 64),
    ("hgx-b200", "b200", "deepseek-r1-nvfp4", "tp=4,dp=2", 32),
    ("hgx-h200", "h200", "deepseek-r1", "tp=4,dp=2", 32),
    ("nvl72", "b200", "deepseek-v3", "tp=2,dp=36", 64),
])
def test_a_step_at_tp_2_or_4_takes_the_op(spec, chip, model, layout, heads):
    fab = topologies.build(spec)
    s = _settings(fab, model, 16 * 36 if spec == "nvl72" else 64, layout)
    want = mla_generation_time(chip, heads, 512, 64, s.m.kv_cache_bytes, s.b_dp, 2048)
    assert want is not None and s.mla_measured == want
    step = analysis.decode_step(model, fab, batch=16 * 36 if spec == "nvl72" else 64,
                                context=2048, layout=layout)
    names = [p.name for p in step.parameters if p.name.startswith("decode.mla_generation_time")]
    assert names and all(f".h{heads}." in n for n in names), names
