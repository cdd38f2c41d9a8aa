"""The multi-token-prediction draft step (``decode_step(draft=True)``) and its use by the
serving model: one MoE block of the model, the ``2 hidden -> hidden`` projection and the
shared head, priced like any step."""

import dataclasses

import pytest
from degrade import built
from hypothesis import given, settings
from hypothesis import strategies as st

import analysis
import topologies

NODE = "switch:8,planes=2,links=9,tech=nvlink5,chip=b200"


@pytest.fixture(scope="module")
def node():
    return topologies.build(NODE)


def test_draft_is_one_moe_block_plus_projection_and_head(node):
    kw = {"batch": 4, "context": 2000, "layout": "tp=8"}
    m = analysis.model_config("deepseek-v3")
    d = analysis.decode_step("deepseek-v3", node, draft=True, **kw)
    one = analysis.decode_step(dataclasses.replace(m, layers=1, dense_layers=0), node, **kw)
    assert len(d.layers) == 1 and d.layers[0].kind == "moe"
    assert d.layers[0] == one.layers[0]
    # the head gains the projection: 2 h h weights split over tp=8, at the step's bandwidth,
    # and one GEMM kernel (its fixed part and its boundary)
    bw = node.chip.hbm_bandwidth * analysis.DECODE_HBM_EFFICIENCY.value
    proj_w = 2 * m.hidden * m.hidden / 8 * m.weight_bytes / bw
    assert d.head.weights - one.head.weights == pytest.approx(proj_w, rel=1e-12)
    extra = (proj_w + analysis.GEMM_FIXED_TIME.value
             + analysis.GRAPH_KERNEL_OVERHEAD.value)       # memory-bound at batch 4
    assert d.time - one.time == pytest.approx(extra, rel=1e-9)


@settings(max_examples=10, deadline=None)
@given(batch=st.integers(1, 256), model=st.sampled_from(["deepseek-v3", "deepseek-r1-nvfp4"]))
def test_a_draft_token_costs_less_than_a_step(batch, model):
    f = built(NODE)
    kw = {"batch": batch, "context": 1000, "layout": "tp=8"}
    d = analysis.decode_step(model, f, draft=True, **kw)
    s = analysis.decode_step(model, f, **kw)
    # more than one of the step's MoE layers (it adds the head), far less than the step
    assert s.layers[-1].total < d.time < s.time / 10


def test_serving_prices_the_draft_with_the_draft_step(node):
    kw = {"isl": 1000, "osl": 1000, "batch": 8, "layout": "tp=8", "draft_length": 2,
          "acceptance": 0.8}
    p = analysis.serving_point("deepseek-v3", node, **kw)
    ctx = 1000 + 500
    base = analysis.decode_step("deepseek-v3", node, batch=8, context=ctx, layout="tp=8")
    d = analysis.decode_step("deepseek-v3", node, batch=8, context=ctx, layout="tp=8",
                             draft=True)
    q = analysis.serving_point("deepseek-v3", node, draft_cost=d.time / base.time, **kw)
    assert p.cycle_time == pytest.approx(q.cycle_time, rel=1e-12)
    verify = analysis.decode_step("deepseek-v3", node, batch=8, context=ctx, layout="tp=8",
                                  tokens_per_sequence=3)
    assert p.cycle_time == pytest.approx(2 * d.time + verify.time, rel=1e-12)


def test_draft_bad_input(node):
    with pytest.raises(TypeError, match="draft"):
        analysis.decode_step("deepseek-v3", node, batch=1, context=10, layout="tp=8", draft=1)
