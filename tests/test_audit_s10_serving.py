"""Audit, session 10 (second shift): vLLM's budget and graph limits in the serving model."""


import pytest

import topologies
from analysis import (
    PrefillTime,
    closed_loop_run,
    decode_step,
    serving_frontier,
    serving_point,
    shared_weight_read,
    vllm_graph_batch,
)
from fabric import SpecError

NODE = "switch:8,planes=2,links=9,tech=nvlink5,chip=b200"


def _run(budget, concurrency=3):
    return closed_loop_run("kimi-k2", topologies.build(NODE), input_lens=[64] * 12,
                           output_lens=[256] * 12, concurrency=concurrency, layout="tp=8",
                           engine="vllm", max_batched_tokens=budget)


def test_a_step_above_the_largest_capture_size_runs_without_a_graph():
    # max_batched_tokens=3 caps vLLM's capture sizes at (1, 2): three running requests
    # decode without a CUDA graph (eagerly), which must not read faster than the graph
    # padded to 4 that max_batched_tokens=4 gives them
    assert vllm_graph_batch(3, max_num_seqs=3, max_batched_tokens=3) is None
    assert vllm_graph_batch(3, max_num_seqs=3, max_batched_tokens=4) == 4
    f = topologies.build(NODE)
    kw = {"layout": "tp=8", "batch": 3, "context": 192, "engine": "vllm"}
    eager = decode_step("kimi-k2", f, cuda_graphs=False, **kw).time
    padded = decode_step("kimi-k2", f, graph_batch=4, **kw).time
    assert eager > padded        # the premise: here the eager step is the slower one
    assert _run(3).tpot > _run(4).tpot


def test_the_frontier_keeps_no_batch_the_budget_cannot_hold():
    f = topologies.build("nvl72")
    kw = {"isl": 1024, "osl": 256, "layouts": ["tp=8,dp=9,ep=72"], "engine": "vllm"}
    fr = serving_frontier("kimi-k2", f, batches=[1, 8, 64, 512], max_batched_tokens=1, **kw)
    pts = getattr(fr, "points", fr)
    assert {p.batch for p in pts} <= {1, 8}           # 64 and 512: 8 and 57 per rank > 1
    assert any("batches 64, 512 exceed the 9 that max_batched_tokens=1 holds" in s
               for s in fr.skipped)
    with pytest.raises(SpecError, match="max_batched_tokens=1: at most 1 per rank"):
        serving_frontier("kimi-k2", f, batches=[64, 512], max_batched_tokens=1, **kw)
    # without batches=, the grid stops at the budget
    fr = serving_frontier("kimi-k2", f, max_batched_tokens=2, **kw)
    assert max(p.batch for p in getattr(fr, "points", fr)) <= 2 * 9
    for p in pts:
        # every point the frontier keeps, serving_point computes too
        serving_point("kimi-k2", f, isl=1024, osl=256, batch=p.batch, layout="tp=8,dp=9,ep=72",
                      engine="vllm", max_batched_tokens=1)
    with pytest.raises(SpecError):
        serving_point("kimi-k2", f, isl=1024, osl=256, batch=64, layout="tp=8,dp=9,ep=72",
                      engine="vllm", max_batched_tokens=1)


def test_pdl_is_off_only_for_the_steps_that_run_without_a_graph():
    # review S10-R6: engine='vllm', pdl=True and a step above vLLM's largest capture size
    # (tp=8,dp=9: 513 sequences per rank at batch 4617): the eager step kept pdl=True and
    # decode_step refused the pair, failing the whole call
    f = topologies.build("nvl72")
    kw = {"isl": 1024, "osl": 1024, "engine": "vllm", "layout": "tp=8,dp=9,ep=72"}
    eager = [serving_point("kimi-k2", f, batch=4617, pdl=pdl, **kw) for pdl in (True, False)]
    assert eager[0].tokens_per_s_user == eager[1].tokens_per_s_user > 0
    graphed = [serving_point("kimi-k2", f, batch=4608, pdl=pdl, **kw) for pdl in (True, False)]
    assert graphed[0].tokens_per_s_user > graphed[1].tokens_per_s_user
    fr = serving_frontier("kimi-k2", f, isl=1024, osl=1024, engine="vllm", pdl=True,
                          speculative=((0, 0.0),))
    assert getattr(fr, "points", fr)


@pytest.mark.parametrize("field, value, error", [
    ("isl", 0, SpecError), ("isl", -5, SpecError), ("isl", 2.5, TypeError),
    ("isl", True, TypeError),   # a count of the wrong kind: TypeError (lead, session 31)
    ("compute", float("nan"), SpecError), ("compute", -1.0, SpecError),
    ("weights", -0.1, SpecError), ("weights", float("inf"), SpecError),
])
def test_shared_weight_read_names_a_malformed_prefill(field, value, error):
    # before: isl 0 a ZeroDivisionError, isl -5 a saving of -1.0 s, nan compute 0.0 silently
    good = {"isl": 100, "flops": 0.0, "compute": 0.5, "weights": 0.1, "comm": 0.0, "total": 0.6}
    assert shared_weight_read(PrefillTime(**good), 0.02, 0.001, 10) >= 0
    with pytest.raises(error, match=f"prefill.{field} must be"):
        shared_weight_read(PrefillTime(**{**good, field: value}), 0.02, 0.001, 10)
