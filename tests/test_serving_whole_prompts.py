"""TensorRT-LLM runs a prompt only whole (chunked prefill off, its LLM-API default), so a rank
runs at most ``(max_num_tokens - isl) // (1 + k) + 1`` requests and the others wait (lead,
session 18: model the cap instead of refusing; session 17 refused such points).

TensorRT-LLM's MicroBatchScheduler (``cpp/tensorrt_llm/batch_manager/microBatchScheduler.cpp``,
``operator()``) walks the active requests in order: a generating request takes one token plus
its draft tokens, a context request without chunking its whole prompt, and the walk stops at
the first request that would pass ``max_num_tokens``. In a closed loop of ``C`` requests a
rank above the cap ``R`` runs at batch ``R`` and a request takes ``C / R`` times as long
(Little's law). vLLM V1 always chunks a prompt into what a step leaves
(``analysis.VLLM_MAX_BATCHED_TOKENS``): no cap there.
"""

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import analysis
import topologies
from analysis._serving import _admission_cap, _admits_whole, _run_steps
from fabric import SpecError

B200_8 = "switch:8,planes=2,links=9,tech=nvlink5,chip=b200"
KW = {"isl": 1024, "osl": 64, "layout": "tp=8"}


@pytest.fixture(scope="module")
def node():
    return topologies.build(B200_8)


def _point(node, batch, budget, **kw):
    return analysis.serving_point("kimi-k2", node, engine="trtllm", batch=batch,
                                  max_batched_tokens=budget, **{**KW, **kw})


def test_a_batch_above_the_cap_runs_at_the_cap_and_the_others_wait(node):
    # 7 others take 7 tokens: 1030 - 7 = 1023 < 1024, so a rank runs 7 of the 8 requests
    capped, seven = _point(node, 8, 1030), _point(node, 7, 1030)
    assert (capped.batch, capped.running, capped.admission_cap) == (8, 7, 7)
    assert (seven.running, seven.queue_time) == (7, 0.0)
    # every figure of a step is batch 7's, and so is the throughput
    for f in ("cycle_time", "tpot", "tokens_per_s_user", "prefill_time", "hbm_per_chip",
              "total_tokens_per_s_gpu", "output_tokens_per_s_gpu", "breakdown", "resources"):
        assert getattr(capped, f) == pytest.approx(getattr(seven, f), rel=1e-12), f
    # Little's law: 8 requests always in the system, 7 served at a time
    assert capped.request_time == pytest.approx(seven.request_time * 8 / 7, rel=1e-12)
    assert capped.queue_time == pytest.approx(seven.request_time / 7, rel=1e-12)
    assert capped.queue_time > 0


def test_the_boundary_and_the_engines_that_chunk_or_do_not_mix(node):
    ok = _point(node, 8, 1031)
    assert (ok.running, ok.queue_time, ok.admission_cap) == (8, 0.0, 8)
    # vLLM chunks the prompt into what the step leaves: every request runs, no cap
    v = analysis.serving_point("kimi-k2", node, engine="vllm", max_batched_tokens=1030, batch=8,
                               **KW)
    assert (v.running, v.queue_time, v.admission_cap) == (8, 0.0, None)
    # disaggregated: the decode GPUs run no prompt
    d = _point(node, 8, 1030, mode="disaggregated")
    assert (d.running, d.admission_cap) == (8, None)


def test_draft_tokens_take_their_share_of_the_budget(node):
    # with one draft token each of the 7 other requests takes 2 tokens: 1037 - 14 = 1023
    kw = {"draft_length": 1, "draft_cost": 0.1}
    assert _point(node, 8, 1037, **kw).running == 7
    assert _point(node, 8, 1038, **kw).running == 8
    # a plain point at the same budget runs all 8 (the cap is per speculative setting)
    assert _point(node, 8, 1037).running == 8


def test_only_a_prompt_above_the_budget_is_refused(node):
    with pytest.raises(SpecError) as e:
        _point(node, 1, 1000)
    msg = str(e.value)
    for part in ("no request can run", "isl=1024", "max_num_tokens=1000", "whole",
                 "max_batched_tokens >= 1024", "engine='vllm'"):
        assert part in msg, (part, msg)
    _point(node, 1, 1024)


def test_the_frontier_prices_the_capped_points_and_keeps_the_uncapped_one(node):
    kw = {"isl": 1024, "osl": 64, "layouts": ("tp=8",), "engine": "trtllm",
          "speculative": ((0, 0.0),), "keep_all": True}
    fr = analysis.serving_frontier("kimi-k2", node, batches=[1, 8, 16],
                                   max_batched_tokens=1031, **kw)
    runs = {p.batch: (p.running, p.admission_cap) for p in fr.all_points}
    assert runs == {1: (1, 8), 8: (8, 8), 16: (8, 8)}
    # batch 16 is batch 8 with a queue: the same axes, so the frontier keeps batch 8
    assert sorted(p.batch for p in fr.points) == [1, 8]
    # a budget below the prompt itself runs no request at all: one clear error
    with pytest.raises(SpecError, match="no request can run"):
        analysis.serving_frontier("kimi-k2", node, batches=[1, 8], max_batched_tokens=1000,
                                  **kw)


@settings(max_examples=200, deadline=None)
@given(budget=st.integers(1, 300), isl=st.integers(1, 300), k=st.integers(0, 5))
def test_the_cap_is_the_largest_count_the_admission_rule_admits(budget, isl, k):
    # brute force: the most requests a rank reaches, each admitted beside the others'
    # 1 + k tokens a step, one prompt at a time
    g = 0
    while _admits_whole(budget, g * (1 + k), isl):
        g += 1
    assert _admission_cap(budget, isl, k) == g


@settings(max_examples=40, deadline=None)
@given(isl=st.integers(2, 12), cap=st.integers(2, 6), extra_osl=st.integers(0, 10),
       extra_c=st.integers(1, 12), d=st.floats(0.5, 2.0), p=st.floats(0.01, 0.3))
def test_the_closed_loop_queue_is_littles_law_at_the_cap(isl, cap, extra_osl, extra_c, d, p):
    # a discrete-event run of the closed loop (the engine stepping request by request, the
    # prompts admitted whole: _run_steps, itself checked step by step against the brute-force
    # reference in test_serving_closed_loop.py) with C > R requests of equal lengths: once the
    # cold start is over, R requests are served every step and the rates are exactly the
    # steady rule's: throughput R / T_R, a request's time in the system C / R x T_R, with
    # T_R = R prompts + osl decode steps (the steady point's request time at batch R)
    budget = isl + cap - 1
    assert _admission_cap(budget, isl) == cap
    osl, c = cap + extra_osl, cap + extra_c       # osl >= R: one prompt a step suffices
    n = c + 30 * cap
    start, first, end, _ = _run_steps([isl] * n, [osl] * n, c, budget, lambda b: d, p,
                                      whole=True)
    t_r = cap * isl * p + osl * d
    ends = sorted(end)
    j1 = 10 * cap
    j2 = j1 + (n - c - j1) // cap * cap
    assert (j2 - j1) / (ends[j2] - ends[j1]) == pytest.approx(cap / t_r, rel=1e-9)
    stay = [e - s for s, e in zip(start[j1:j2], end[j1:j2])]
    assert sum(stay) / len(stay) == pytest.approx(c / cap * t_r, rel=1e-6)
    # and no step ever runs more than R: at any first token, at most R requests between
    # their prompt's step and their last token
    for t in first:
        assert sum(1 for f, e in zip(first, end) if f <= t < e) <= cap


def test_the_closed_loop_runs_prompts_whole_under_trtllm(node):
    # 4 prompts of 600 tokens in a 1030-token budget: TensorRT-LLM runs one per step (the
    # second does not fit whole), vLLM chunks the second into the same step
    kw = {"input_lens": [600] * 4, "output_lens": [8] * 4, "concurrency": 4,
          "layout": "tp=8", "max_batched_tokens": 1030}
    t = analysis.closed_loop_run("kimi-k2", node, engine="trtllm", **kw)
    v = analysis.closed_loop_run("kimi-k2", node, engine="vllm", **kw)
    # TensorRT-LLM: one whole prompt a step (601 + 600 > 1030), first tokens at steps 1-4;
    # vLLM: 600 + 430 | 1 + 170 + 600 + 259 | 3 + 341: the 2nd and 3rd first tokens together
    assert len(set(t.ttfts)) == 4
    assert len(set(v.ttfts)) == 3 and sorted(v.ttfts)[1] == sorted(v.ttfts)[2]
    with pytest.raises(SpecError, match="no request can run"):
        analysis.closed_loop_run("kimi-k2", node, engine="trtllm",
                                 **{**kw, "input_lens": [1100] * 4})


def test_a_capped_point_pickles_and_reports_its_cap(node):
    p = _point(node, 8, 1030)
    d = dataclasses.asdict(p)
    assert (d["running"], d["admission_cap"]) == (7, 7) and d["queue_time"] > 0


def test_each_speculative_setting_runs_at_its_own_cap_on_the_frontier(node):
    # 1037 tokens: 14 a rank run plain, 7 with one draft each (2 tokens): batch 8 runs 8 plain
    # and 7 drafted, each frontier point the serving point of its setting, in the given order
    spec = ((0, 0.0), (1, 0.7))
    fr = analysis.serving_frontier("kimi-k2", node, isl=1024, osl=64, layouts=("tp=8",),
                                   engine="trtllm", batches=[8], speculative=spec,
                                   draft_cost=0.1, max_batched_tokens=1037, keep_all=True)
    assert [(p.draft_length, p.running) for p in fr.all_points] == [(0, 8), (1, 7)]
    for p, (k, a) in zip(fr.all_points, spec):
        alone = _point(node, 8, 1037, draft_length=k, acceptance=a, draft_cost=0.1)
        assert (p.request_time, p.queue_time, p.tpot) == (alone.request_time,
                                                          alone.queue_time, alone.tpot)


def test_more_requests_than_the_budget_wait_rather_than_refuse(node):
    # vLLM refuses a budget below the sequences a rank decodes (max_num_seqs); TensorRT-LLM
    # runs its cap (70 - 64 + 1 = 7 a rank) and the other 93 wait, in a point and a closed loop
    kw = {"isl": 64, "osl": 64, "layout": "tp=8", "max_batched_tokens": 70}
    p = analysis.serving_point("kimi-k2", node, engine="trtllm", batch=100, **kw)
    assert (p.running, p.admission_cap) == (7, 7)
    with pytest.raises(SpecError, match="below the 100 sequences"):
        analysis.serving_point("kimi-k2", node, engine="vllm", batch=100, **kw)
    fr = analysis.serving_frontier("kimi-k2", node, engine="trtllm", batches=[100],
                                   speculative=((0, 0.0),), isl=64, osl=64, layouts=("tp=8",),
                                   max_batched_tokens=70)
    assert [(q.batch, q.running) for q in fr.points] == [(100, 7)]
    run = analysis.closed_loop_run("kimi-k2", node, engine="trtllm", input_lens=[64] * 120,
                                   output_lens=[8] * 120, concurrency=100, layout="tp=8",
                                   max_batched_tokens=70)
    assert run.steady.running == 7 and max(run.ttfts) > 10 * min(run.ttfts)
