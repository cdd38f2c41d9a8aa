"""The steady state's prompt-feed limit: an engine that runs a prompt only whole (TensorRT-LLM's
default) takes at most a whole number of prompts a step beside its generating requests; where
completions need more, the steady state at that batch cannot be held (requests queue), and the
point says so (ServingPoint.prompt_bound) instead of passing for a sustained throughput
(analysis._serving._prompt_bound; docs/sources.md s.8, session 19)."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import analysis
import topologies
from analysis._serving import _admission_cap, _prompt_bound, _run_steps
from fabric import SpecError


@st.composite
def _ranks(draw):
    isl = draw(st.integers(2, 30))
    r = draw(st.integers(1, 10))
    osl = draw(st.integers(1, 25))
    budget = draw(st.integers(isl + r - 1, 3 * isl + r))     # r within the cap
    return isl, r, osl, budget


@settings(max_examples=80, deadline=None)
@given(case=_ranks())
def test_the_flag_is_what_a_closed_loop_sustains(case):
    # brute force: a closed loop of r requests in flight on one rank, every step one time unit
    # (a mixed step as long as a decode-only one), prompts whole; over the middle of a long run
    # the completions a step reach r / osl (every slot refilled at once) exactly when the
    # point is not flagged, and stay clearly below it when it is
    isl, r, osl, budget = case
    assert _admission_cap(budget, isl) >= r
    n = 60 * r
    _, _, end, _ = _run_steps([isl] * n, [osl] * n, r, budget, lambda b: 1.0, lambda c: 1.0,
                              lambda b, c: 1.0, None, True)
    lo, hi = 0.3 * max(end), 0.9 * max(end)
    rate = sum(1 for e in end if lo < e <= hi) / (hi - lo) / (r / osl)
    if _prompt_bound(r, 1, budget, isl, osl, 1.0):
        assert rate < 0.95
    else:
        assert rate > 0.95


H200 = "hgx-h200"
_KW = {"layout": "tp=1,dp=8", "mode": "aggregated", "definition": "output-per-gpu",
       "usable_hbm": 1.0, "cuda_graphs": True, "engine": "trtllm", "max_batched_tokens": 1151}


def test_a_point_whose_prompts_outrun_its_steps_is_flagged():
    # the H200 max-throughput deployment (128 a rank, max_num_tokens 1151, 1024-token prompts:
    # one whole prompt a step): 2048 output tokens need 1 prompt in 16 steps; 100 need 1.28
    f = topologies.build(H200)
    row = analysis.serving_point("deepseek-r1", f, isl=1024, osl=2048, batch=1024, **_KW)
    short = analysis.serving_point("deepseek-r1", f, isl=1024, osl=100, batch=1024, **_KW)
    assert not row.prompt_bound and short.prompt_bound
    # vLLM chunks prompts: its prompt phase lengthens instead, nothing queues
    chunked = analysis.serving_point("deepseek-r1", f, isl=1024, osl=100, batch=1024,
                                     **{**_KW, "engine": "vllm", "max_batched_tokens": 8192})
    assert not chunked.prompt_bound


def test_the_frontier_leaves_flagged_points_off():
    f = topologies.build(H200)
    kw = {k: v for k, v in _KW.items() if k not in ("layout",)}
    fr = analysis.serving_frontier("deepseek-r1", f, isl=1024, osl=100, batches=[64, 1024],
                                   layouts=["tp=1,dp=8"], speculative=[(0, 0.0)],
                                   keep_all=True, **kw)
    flagged = [p for p in fr.all_points if p.prompt_bound]
    assert [p.batch for p in flagged] == [1024]
    assert fr.points and not any(p.prompt_bound for p in fr.points)
    with pytest.raises(SpecError, match="faster than the steps"):
        analysis.serving_frontier("deepseek-r1", f, isl=1024, osl=100, batches=[1024],
                                  layouts=["tp=1,dp=8"], speculative=[(0, 0.0)], **kw)
