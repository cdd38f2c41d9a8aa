"""The closed loop under attention data parallelism: each rank schedules its own requests in
its own step budget, a request placed on a rank when sent by its engine's rule
(analysis._serving.DP_PLACEMENT: TensorRT-LLM's attention-DP router, SGLang's round robin, vLLM's
least-loaded engine), the ranks stepping together, paced by the slowest (docs/sources.md s.8,
session 19)."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from serving_steps_brute import reference

import analysis
import topologies
from analysis._serving import _admission_cap, _run_steps
from fabric import SpecError

requests = st.integers(1, 14).flatmap(lambda n: st.tuples(
    st.lists(st.integers(1, 40), min_size=n, max_size=n),
    st.lists(st.integers(1, 25), min_size=n, max_size=n)))


@settings(max_examples=120, deadline=None)
@given(req=requests, concurrency=st.integers(1, 8), extra=st.integers(0, 50),
       ranks=st.integers(1, 4), rule=st.sampled_from(analysis._serving.DP_PLACEMENT),
       whole=st.booleans(), padded=st.booleans(), base=st.floats(0.5, 5.0),
       slope=st.floats(0.0, 1.0), per_token=st.floats(0.01, 0.5), frac=st.floats(0.0, 1.0),
       together=st.booleans())
def test_ranks_match_the_step_by_step_reference(req, concurrency, extra, ranks, rule, whole,
                                                padded, base, slope, per_token, frac,
                                                together):
    # every request's send, first and last token, the step count and each rank's peak holding
    # are those of the one-step-at-a-time reference of per-rank schedulers
    ins, outs = req
    budget = (max(ins) if whole else concurrency) + extra

    def step(b):
        return base + slope * b

    def shared(b, chunk, k=1):  # with ranks' passes, more saved with more ranks' chunks
        return frac * min(step(b), chunk * per_token) * (1 + frac * (k - 1)) / (1 + frac)

    def alone(b):
        return step(-(-b // 4) * 4) * (1 + frac)

    def price(c):
        return c * per_token

    def rank_pass(c, k):       # a pass whose k ranks run chunks costs more with k
        return price(c) * (1 + frac * (k - 1))

    ranked = rank_pass if together else None
    peaks = []
    got = _run_steps(ins, outs, concurrency, budget, step, price, shared,
                     alone if padded else None, whole, ranks=ranks, place=rule, peaks=peaks,
                     rank_pass=ranked)
    want = reference(ins, outs, concurrency, budget, step, price, shared,
                     alone if padded else None, whole, ranks, rule, ranked)
    assert got[3] == want[3]
    for g, w in zip(got[:3], want[:3]):
        assert g == pytest.approx(w, rel=1e-9, abs=1e-9)
    assert peaks == want[4]
    if whole:      # a rank never holds more than the cap of the shortest prompt
        assert max(peaks) <= _admission_cap(budget, min(ins))


def test_placement_rules_as_read():
    place = analysis._serving._place
    # TensorRT-LLM: longest prompt first, to the rank of fewest active prompt tokens, no rank
    # past ceil((active + new) / ranks)
    pairs, _ = place("trtllm", [0, 1, 2, 3], [10, 30, 20, 5], 2, [1, 0], [100, 0], [0, 0],
                     [1, 0], 0)
    # expected = max(ceil((1 + 4) / 2), 1) = 3; 30, 20 and 10 go to rank 1 (30, 50, 60 active
    # tokens against rank 0's 100), which then holds 3; 5 to rank 0
    assert pairs == [(1, 1), (2, 1), (0, 1), (3, 0)]
    # vLLM: waiting counts four times a running request
    assert place("vllm", [7], [1] * 8, 2, [1, 4], [0, 0], [1, 0], [0, 4], 0)[0] == [(7, 0)]
    assert place("vllm", [7], [1] * 8, 2, [2, 4], [0, 0], [2, 0], [0, 4], 0)[0] == [(7, 1)]


B200 = "hgx-b200"


def test_a_trtllm_rank_admits_in_its_own_budget():
    # TensorRT-LLM, attention DP over 8 ranks, max_num_tokens 67 and 64-token prompts: a rank
    # runs at most (67 - 64) // 1 + 1 = 4 requests, so 8 ranks run all 32; one scheduler for
    # the instance (the model before session 19) ran 4 and queued 28 behind a first completion
    run = analysis.closed_loop_run("deepseek-r1", topologies.build(B200), engine="trtllm",
                                   input_lens=[64] * 32, output_lens=[40] * 32,
                                   concurrency=32, layout="tp=1,dp=8", max_batched_tokens=67)
    assert max(run.ttfts) < 6 * run.tpot
    # one rank: the cap holds the instance to 4 running, 28 wait for a completion
    one = analysis.closed_loop_run("deepseek-r1", topologies.build(B200), engine="trtllm",
                                   input_lens=[64] * 32, output_lens=[40] * 32,
                                   concurrency=32, layout="tp=8,dp=1", max_batched_tokens=67)
    assert max(one.ttfts) > 30 * one.tpot


def test_a_rank_whose_kv_cache_overflows_is_named():
    # 0.57 of a B200 holds 6 sequences of 8000 tokens a rank beside the weights (98.9 GB, 0.56
    # GB each): 64 requests over 8 ranks put 8 on each
    with pytest.raises(SpecError, match="a rank holds"):
        analysis.closed_loop_run("deepseek-r1", topologies.build(B200), engine="trtllm",
                                 input_lens=[4000] * 64, output_lens=[4000] * 64,
                                 concurrency=64, layout="tp=1,dp=8", max_batched_tokens=8192,
                                 usable_hbm=0.57)


def test_a_step_of_every_rank_s_prompt_is_one_pass_of_them_all():
    # 8 prompts at once on 8 ranks (the router puts one on each): the first step is the pass of
    # dp prompts at once (prefill_time, one_at_a_time=False: dp x its per-prompt time); one
    # prompt alone is one rank's prompt holding the instance (one_at_a_time=True)
    from analysis import model_config
    from analysis._serving import _Sweep

    f = topologies.build(B200)
    kw = {"engine": "trtllm", "layout": "tp=1,dp=8", "max_batched_tokens": 67}
    runs = {c: analysis.closed_loop_run("deepseek-r1", f, input_lens=[64] * c,
                                        output_lens=[4] * c, concurrency=c, **kw)
            for c in (1, 8)}
    sweep = _Sweep(model_config("deepseek-r1"), f, isl=64, osl=4, mode="aggregated",
                   definition="total-per-gpu", prefill_efficiency=None, usable_hbm=0.9,
                   decode_kwargs={"engine": "trtllm"}, context=66, max_batched_tokens=67)
    info = sweep.layout_info("tp=1,dp=8")
    one = sweep.prefill(info["layout"], 64, info["instance"])
    every = sweep.prefill(info["layout"], 64, info["instance"], one_at_a_time=False)
    assert runs[1].ttfts[0] == pytest.approx(one.chunk_seconds(64), rel=1e-12)
    assert runs[8].ttfts == pytest.approx((8 * every.chunk_seconds(64),) * 8, rel=1e-12)
    # together cheaper than one after another, dearer than one alone
    assert one.chunk_seconds(64) < runs[8].ttfts[0] < 8 * one.chunk_seconds(64)
