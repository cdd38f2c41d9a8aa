"""Session 24 (models): TensorRT-LLM's MLA generation op at 16 query heads on the GPU
(DeepSeek's 128 at tensor parallelism 8), as aiconfigurator measured it (the same 1.2.0rc5
files as the 128-head tables: rows num_heads 16, tp_size 8), and a step of ``q > 1`` tokens a
sequence (a speculative cycle's verification) takes the one-token op's time as its floor
(named assumption: the same cache read, ``q`` times the score math). Before, a tp=8 step's
attention kernel ran at its roofline (about 1.1 us at batch 1 and 2k context against 12.7 us
measured) and a ``q > 1`` step took no measured op. Each test fails on the parent commit."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import analysis
import topologies
from analysis import (
    TRTLLM_B200_MLA_GENERATION_BF16_16_HEADS,
    TRTLLM_B200_MLA_GENERATION_FP8KV_16_HEADS,
    TRTLLM_H200_MLA_GENERATION_BF16_16_HEADS,
    mla_generation_time,
)

TABLES = {("b200", 2): TRTLLM_B200_MLA_GENERATION_BF16_16_HEADS,
          ("b200", 1): TRTLLM_B200_MLA_GENERATION_FP8KV_16_HEADS,
          ("h200", 2): TRTLLM_H200_MLA_GENERATION_BF16_16_HEADS}


def _time(batch, context, chip="b200", kv=2, heads=16):
    return mla_generation_time(chip, heads, 512, 64, kv, batch, context)


def test_the_16_head_grids_and_their_envelopes_by_hand():
    # values copied from the parquet files (ms): batch 1 at 2047 cached tokens
    assert dict(TRTLLM_B200_MLA_GENERATION_BF16_16_HEADS[1])[2047] == 0.0148267
    for (chip, kv), t in TABLES.items():
        assert sorted(t) == [2 ** k for k in range(11)]
        assert sum(len(v) for v in t.values()) == 181
        for b, pts in t.items():
            for c, ms in pts:
                env = min(x for b2, p2 in t.items() if b2 >= b for c2, x in p2 if c2 >= c)
                assert _time(b, c, chip, kv) == pytest.approx(env * 1e-3, rel=1e-12)
                assert _time(b, c, "gb200" if chip == "b200" else chip, kv) == _time(b, c, chip, kv)
    # measured at 16 and 128 heads (32 and 64 since session 25); H200's FP8-KV rows not read
    assert _time(1, 2047, heads=24) is None and _time(1, 2047, heads=8) is None
    assert _time(1, 2047, chip="h200", kv=1) is None


@settings(max_examples=40, deadline=None)
@given(key=st.sampled_from(sorted(TABLES)), b=st.floats(1, 1024), c=st.floats(1, 16383),
       db=st.floats(0, 500), dc=st.floats(0, 8000))
def test_more_sequences_or_context_never_take_less_time(key, b, c, db, dc):
    chip, kv = key
    b2, c2 = min(b + db, 1024), min(c + dc, 16383)
    assert _time(b, c, chip, kv) <= _time(b2, c, chip, kv) * (1 + 1e-12)
    assert _time(b, c, chip, kv) <= _time(b, c2, chip, kv) * (1 + 1e-12)


def _step(spec, model, q=1, **kw):
    return analysis.decode_step(model, topologies.build(spec), batch=1, context=2047,
                                layout="tp=8,dp=1,etp=2", tokens_per_sequence=q,
                                engine="trtllm", runtime="symmetric-memory", **kw)


@pytest.mark.parametrize("spec,model,chip", [("hgx-b200", "deepseek-r1-nvfp4", "b200"),
                                             ("hgx-h200", "deepseek-r1", "h200")])
@pytest.mark.parametrize("q", [1, 4])
def test_a_tp8_step_takes_the_16_head_op(spec, model, chip, q):
    step = _step(spec, model, q)
    op = _time(1, 2047, chip)
    assert step.layers[0].attention >= op
    assert f"decode.mla_generation_time.{chip}.bf16.h16.b1.c2047" in {
        p.name for p in step.parameters}
    # the op's kernels are priced once by it: no boundary of their own (the user's
    # hbm_efficiency turns the published rates, and the measured op, off)
    plain = _step(spec, model, q, hbm_efficiency=0.78)
    assert step.layers[0].kernels == plain.layers[0].kernels
    assert step.layers[0].launch < plain.layers[0].launch


def test_more_tokens_a_sequence_never_take_less_attention():
    # q = 4 reads the same cache as q = 1 and does four times the scores: at least its time
    a, b = (_step("hgx-b200", "deepseek-r1-nvfp4", q).layers[0].attention for q in (1, 4))
    assert b >= a >= _time(1, 2047)
