"""Session 24 (models): a prompt longer than the measured context MLA table's longest (16384
tokens) takes that prompt's time per score FLOP (``analysis._serving._prefill_context_op``,
named assumption), where the pass had fallen back to the scores' BF16 peak: a 20000-token
prompt priced cheaper than a 16384-token one. Each test fails on the parent commit."""

import dataclasses

import pytest
from degrade import built
from hypothesis import example, given, settings
from hypothesis import strategies as st

import analysis
import analysis._serving as S
import topologies
from analysis import mla_context_max_isl, mla_context_time

CASES = [("hgx-h200", "deepseek-r1", 2), ("hgx-b200", "deepseek-r1-nvfp4", 2),
         ("hgx-b200", "deepseek-r1-nvfp4", 1)]


def _model(model, kv):
    return dataclasses.replace(analysis.model_config(model), name="m", kv_cache_bytes=float(kv))


def test_the_longest_measured_prompt():
    for chip in ("b200", "gb200"):
        assert mla_context_max_isl(chip, 2) == mla_context_max_isl(chip, 1) == 16384
    assert mla_context_max_isl("h200", 2) == 16384
    for chip, kv in (("h200", 1), ("b300", 2), ("b200", 4)):
        assert mla_context_max_isl(chip, kv) is None


@pytest.mark.parametrize("spec,model,kv", CASES)
def test_beyond_the_table_the_longest_prompts_time_per_flop(spec, model, kv):
    f = topologies.build(spec)
    m = _model(model, kv)
    lay = analysis.parse_layout("tp=1,dp=8", 8)
    att = m.attention
    top = mla_context_time(f.chip.name, 128, 512, 64, kv, 16384)
    assert top is not None and mla_context_time(f.chip.name, 128, 512, 64, kv, 16385) is None
    for isl in (16385, 20000, 32768):
        got = S._prefill_context_op(m, f.chip, lay, isl, "trtllm", None)
        want = top * att.prefill_score_flops(isl) / att.prefill_score_flops(16384)
        assert got == pytest.approx(want, rel=1e-12)
        assert got > top
    # inside the table: the table, as before
    assert S._prefill_context_op(m, f.chip, lay, 16384, "trtllm", None) == top
    # where nothing is measured, still nothing: 16 heads a GPU, another engine, an efficiency
    tp8 = analysis.parse_layout("tp=8", 8)
    assert S._prefill_context_op(m, f.chip, tp8, 20000, "trtllm", None) is None
    assert S._prefill_context_op(m, f.chip, lay, 20000, "vllm", None) is None
    assert S._prefill_context_op(m, f.chip, lay, 20000, "trtllm", 0.5) is None


@pytest.mark.parametrize("spec,model,kv", CASES)
def test_a_20000_token_prompt_costs_more_than_16384(spec, model, kv):
    # the parent priced 16385-~20000 tokens below 16384 (H200 1816.9 ms at 16384, 1339.8 at
    # 16385, 1816.8 at 20000; B200 868.8, 644.9, 862.6)
    f = topologies.build(spec)
    kw = {"layout": "tp=1,dp=8", "engine": "trtllm", "one_at_a_time": True, "runtime": "ideal"}
    a, b, c = (analysis.prefill_time(_model(model, kv), f, isl=isl, **kw).total
               for isl in (16384, 16385, 20000))
    assert a < b < c


@settings(max_examples=12, deadline=None)
@given(isl=st.integers(12000, 24000), more=st.integers(0, 12000))
@example(isl=16384, more=1)
@example(isl=16384, more=3616)
def test_a_longer_prompt_never_takes_less_across_the_table_edge(isl, more):
    # under the ideal runtime (NCCL's LL -> LL128 switch makes the pass's reduce-scatter
    # cheaper one row longer, review S22-R1; the property's subject is the compute pricing)
    f = built("hgx-h200")
    kw = {"layout": "tp=1,dp=8", "engine": "trtllm", "one_at_a_time": True, "runtime": "ideal"}
    a = analysis.prefill_time("deepseek-r1", f, isl=isl, **kw)
    b = analysis.prefill_time("deepseek-r1", f, isl=isl + more, **kw)
    assert a.total <= b.total * (1 + 1e-12)
    assert a.compute <= b.compute * (1 + 1e-12)
