"""analysis.closed_loop_run: a benchmark client's run (closed loop, N requests, at most C in
flight, drain at the end) against a continuous-batching engine, measured as vLLM's
benchmark_serving.py measures it (InferenceX's harness; docs/sources.md s.8)."""

import math

import pytest
import serving_check as sc
from hypothesis import given, settings
from hypothesis import strategies as st
from serving_steps_brute import reference as _reference

import analysis
import topologies
from analysis._serving import _run_steps
from fabric import SpecError

B200_8 = "switch:8,planes=2,links=9,tech=nvlink5,chip=b200"


requests = st.integers(1, 12).flatmap(lambda n: st.tuples(
    st.lists(st.integers(1, 40), min_size=n, max_size=n),
    st.lists(st.integers(1, 30), min_size=n, max_size=n)))


@settings(max_examples=200, deadline=None)
@given(req=requests, concurrency=st.integers(1, 6), extra=st.integers(0, 60),
       base=st.floats(0.5, 5.0), slope=st.floats(0.0, 1.0), per_token=st.floats(0.01, 0.5))
def test_run_matches_the_step_by_step_reference(req, concurrency, extra, base, slope,
                                                per_token):
    # an engine whose step grows with its batch (any monotone cost will do), budgets from
    # "one token per running request" up; every request's send, first and last token and the
    # step count are those of the one-step-at-a-time reference
    ins, outs = req
    budget = concurrency + extra

    def step(b):
        return base + slope * b

    got = _run_steps(ins, outs, concurrency, budget, step, per_token)
    want = _reference(ins, outs, concurrency, budget, step, per_token)
    assert got[3] == want[3]
    for g, w in zip(got[:3], want[:3]):
        assert g == pytest.approx(w, rel=1e-9, abs=1e-9)


# a random workload and step-cost shape: the draws of the reference properties below
_STEPS = {"req": requests, "concurrency": st.integers(1, 6), "extra": st.integers(0, 60),
          "base": st.floats(0.5, 5.0), "slope": st.floats(0.0, 1.0),
          "per_token": st.floats(0.01, 0.5), "frac": st.floats(0.0, 1.0)}


@settings(max_examples=150, deadline=None)
@given(**_STEPS)
def test_mixed_steps_match_the_reference(req, concurrency, extra, base, slope, per_token,
                                         frac):
    # a step running decodes and a chunk saves some of the cheaper part (any saving below
    # both parts will do): the runs of _run_steps are the one-step-at-a-time reference's
    ins, outs = req
    budget = concurrency + extra

    def step(b):
        return base + slope * b

    def shared(b, chunk):
        return frac * min(step(b), chunk * per_token)

    def alone(b):                     # a decode-only step priced its own way (a padded graph)
        return step(-(-b // 4) * 4) * (1 + frac)

    got = _run_steps(ins, outs, concurrency, budget, step, per_token, shared, alone)
    want = _reference(ins, outs, concurrency, budget, step, per_token, shared, alone)
    assert got[3] == want[3]
    for g, w in zip(got[:3], want[:3]):
        assert g == pytest.approx(w, rel=1e-9, abs=1e-9)
    # and nothing shared is the additive run of before
    plain = _run_steps(ins, outs, concurrency, budget, step, per_token)
    assert plain == _run_steps(ins, outs, concurrency, budget, step, per_token,
                               lambda b, c: 0.0)
    mixed = _run_steps(ins, outs, concurrency, budget, step, per_token, shared)
    assert max(mixed[2]) <= max(plain[2]) + 1e-9
    assert mixed == _run_steps(ins, outs, concurrency, budget, step, per_token, shared, step)


@settings(max_examples=150, deadline=None)
@given(**_STEPS)
def test_whole_prompts_match_the_reference(req, concurrency, extra, base, slope, per_token,
                                           frac):
    # an engine that runs a prompt only whole (TensorRT-LLM's default): the runs of
    # _run_steps are the one-step-at-a-time reference's; every prompt fits the budget alone
    ins, outs = req
    budget = max(concurrency, max(ins)) + extra

    def step(b):
        return base + slope * b

    def shared(b, chunk):
        return frac * min(step(b), chunk * per_token)

    got = _run_steps(ins, outs, concurrency, budget, step, per_token, shared, whole=True)
    want = _reference(ins, outs, concurrency, budget, step, per_token, shared, whole=True)
    assert got[3] == want[3]
    for g, w in zip(got[:3], want[:3]):
        assert g == pytest.approx(w, rel=1e-9, abs=1e-9)
    # a budget that holds every prompt beside everything else is the chunking run
    roomy = sum(ins) + concurrency
    assert _run_steps(ins, outs, concurrency, roomy, step, per_token, shared, whole=True) \
        == _run_steps(ins, outs, concurrency, roomy, step, per_token, shared)


@settings(max_examples=100, deadline=None)
@given(req=requests, budget=st.integers(1, 50), t1=st.floats(0.1, 3.0),
       per_token=st.floats(0.01, 0.5))
def test_one_request_at_a_time_is_the_sum_of_its_parts(req, budget, t1, per_token):
    # concurrency 1: a request's prompt (in chunks of the budget, nothing else running), then
    # out - 1 decode steps alone; the next is sent when it ends
    ins, outs = req
    start, first, end, _ = _run_steps(ins, outs, 1, budget, lambda b: t1, per_token)
    t = 0.0
    for i, (li, lo) in enumerate(zip(ins, outs)):
        assert start[i] == pytest.approx(t)
        t += li * per_token
        assert first[i] == pytest.approx(t)
        t += (lo - 1) * t1
        assert end[i] == pytest.approx(t)


def test_the_run_reports_what_the_harness_computes():
    f = topologies.build(B200_8)
    ins, outs = [900, 1000, 1100, 950, 1050, 980], [200, 150, 260, 90, 300, 120]
    run = analysis.closed_loop_run("kimi-k2", f, input_lens=ins, output_lens=outs,
                                   concurrency=3, layout="tp=8")
    # benchmark_serving.calculate_metrics: mean of per-request TPOTs; (prompt + output)
    # tokens over the duration; process_result: per GPU over TP
    assert run.tpot == pytest.approx(sum(run.tpots) / len(run.tpots))
    assert run.tokens_per_s_user == pytest.approx(1 / run.tpot)
    assert run.total_tokens_per_s_gpu == pytest.approx(
        (sum(ins) + sum(outs)) / run.duration / 8)
    assert run.tokens_per_s_gpu == run.total_tokens_per_s_gpu
    assert run.output_tokens_per_s_gpu == pytest.approx(sum(outs) / run.duration / 8)
    assert (run.requests, run.concurrency, run.chips) == (6, 3, 8)
    assert all(x > 0 for x in run.ttfts) and run.ttft == pytest.approx(sum(run.ttfts) / 6)
    # trtllm-bench's per-user output throughput: the mean of each request's output tokens over
    # its latency (first token included), latency = TTFT + (out - 1) x its TPOT
    assert run.request_tokens_per_s_user == pytest.approx(sum(
        o / (f_ + (o - 1) * t) for o, f_, t in zip(outs, run.ttfts, run.tpots)) / 6)
    out = analysis.closed_loop_run("kimi-k2", f, input_lens=ins, output_lens=outs,
                                   concurrency=3, layout="tp=8", definition="output-per-gpu")
    assert out.tokens_per_s_gpu == pytest.approx(run.output_tokens_per_s_gpu)
    # deterministic
    again = analysis.closed_loop_run("kimi-k2", f, input_lens=ins, output_lens=outs,
                                     concurrency=3, layout="tp=8")
    assert again == run


def test_many_requests_per_slot_tend_to_the_steady_state():
    # lengths spread as InferenceX's are (the slots fall out of step, so a request's decode
    # meets the others' prompts as serving_point assumes): as requests per slot grow, the cold
    # start and the drain become a small share and the run tends to the steady state
    import numpy as np

    f = topologies.build(B200_8)
    gaps = []
    for n in (8, 80, 1600):
        r = np.random.RandomState(1)
        ins, outs = r.randint(800, 1201, size=n).tolist(), r.randint(160, 241, size=n).tolist()
        run = analysis.closed_loop_run("kimi-k2", f, input_lens=ins, output_lens=outs,
                                       concurrency=8, layout="tp=8")
        gaps.append(max(abs(run.tokens_per_s_user / run.steady.tokens_per_s_user - 1),
                        abs(run.tokens_per_s_gpu / run.steady.tokens_per_s_gpu - 1)))
    assert gaps[0] > gaps[1] > gaps[2] and gaps[2] < 0.01


@settings(max_examples=30, deadline=None)
@given(conc=st.integers(1, 6), waves=st.integers(1, 4), isl=st.integers(1, 50),
       osl=st.integers(2, 30))
def test_equal_requests_run_in_waves(conc, waves, isl, osl):
    # equal lengths and a budget that holds every prompt of a wave: the slots stay in step;
    # each wave is one prefill step of all prompts, then osl - 1 decode steps at batch conc,
    # so a TPOT is one decode step at conc (no other prompt interrupts it)
    t = {b: 1.0 + 0.25 * b for b in range(1, conc + 1)}
    n = conc * waves
    _, first, end, steps = _run_steps([isl] * n, [osl] * n, conc, conc * isl, t.get, 0.1)
    wave = conc * isl * 0.1 + (osl - 1) * t[conc]
    assert max(end) == pytest.approx(waves * wave)
    assert steps == waves * osl
    for i in range(n):
        assert (end[i] - first[i]) / (osl - 1) == pytest.approx(t[conc])


def test_a_drain_lowers_throughput_and_speeds_its_last_requests():
    # one request far longer than the others: it finishes alone, its late tokens at batch 1
    f = topologies.build(B200_8)
    outs = [100] * 7 + [800]
    run = analysis.closed_loop_run("kimi-k2", f, input_lens=[500] * 8, output_lens=outs,
                                   concurrency=8, layout="tp=8")
    assert run.tpots[-1] < min(run.tpots[:-1])
    assert run.tokens_per_s_gpu < run.steady.tokens_per_s_gpu


def test_degraded_fabric_runs_on_the_live_chips_and_names_an_unreachable_instance():
    f = topologies.build(B200_8).without(chips=["chip7"])
    run = analysis.closed_loop_run("kimi-k2.5-nvfp4", f, input_lens=[1000] * 4,
                                   output_lens=[100] * 4, concurrency=2, layout="tp=4,dp=1")
    assert run.chips == 4 and run.duration > 0
    cut = topologies.build(B200_8).without(links=[("chip3", "sw0"), ("chip3", "sw1")])
    with pytest.raises(SpecError, match="chip3"):
        analysis.closed_loop_run("kimi-k2", cut, input_lens=[1000] * 4,
                                 output_lens=[100] * 4, concurrency=2, layout="tp=8")


@pytest.mark.parametrize("kw, match", [
    ({"input_lens": [10, 10], "output_lens": [5]}, "one entry per request"),
    ({"input_lens": [], "output_lens": []}, "non-empty"),
    ({"input_lens": [0], "output_lens": [5]}, "input_lens"),
    ({"input_lens": [10], "output_lens": [2.5]}, "output_lens"),
    ({"input_lens": [10], "output_lens": [1]}, "second output token"),
    ({"concurrency": 0}, "concurrency"),
    ({"concurrency": True}, "concurrency"),
    # vLLM's rule (max_num_batched_tokens >= max_num_seqs); TensorRT-LLM (the default engine)
    # runs its admission cap and refuses only a prompt longer than the budget
    ({"max_batched_tokens": 2, "concurrency": 4, "engine": "vllm"}, "below concurrency"),
    ({"max_batched_tokens": 2, "concurrency": 4}, "no request can run"),
    ({"micro_batches": 2}, "micro_batches"),
    ({"draft_length": 1}, "draft_length is not a condition"),
    ({"graph_batch": 8}, "graph_batch is not a condition"),
    ({"concurrency": 4000, "input_lens": [200_000], "output_lens": [1000], "engine": "vllm"},
     "exceeds the largest batch whose KV cache fits"),
])
def test_bad_runs_are_refused(kw, match):
    f = topologies.build(B200_8)
    args = {"input_lens": [100, 120], "output_lens": [10, 12], "concurrency": 2,
            "layout": "tp=8", **kw}
    # a count of the wrong kind (concurrency=True) is a TypeError (session 31)
    error = (TypeError if kw.get("concurrency") is True or kw.get("output_lens") == [2.5]
             else SpecError)
    with pytest.raises(error, match=match):
        analysis.closed_loop_run("kimi-k2", f, **args)


def test_inferencex_request_list_is_the_harness_s_draw():
    # benchmark_serving.py: np.random.seed(0); the prefix (size 0), then input lengths, then
    # output lengths, each np.random.randint(int(L r), L + 1, size=N)
    import numpy as np

    np.random.seed(0)
    np.random.randint(0, 163840, size=0)
    ins = np.random.randint(int(8192 * 0.8), 8193, size=160).tolist()
    outs = np.random.randint(int(1024 * 0.8), 1025, size=160).tolist()
    assert sc.inferencex_requests(8192, 1024, 16) == (ins, outs)
    # its means are near the mean lengths the steady rows use
    assert abs(sum(ins) / 160 - sc.inferencex_mean_length(8192)) < 60
    assert abs(sum(outs) / 160 - sc.inferencex_mean_length(1024)) < 10


def test_inferencex_rows_run_the_harness():
    for row in sc.load_rows():
        h = sc.harness(row)
        if row["id"].startswith("dsv3-"):
            assert h is None
            continue
        conc = int(row["concurrency"])
        assert h["concurrency"] == conc and len(h["input_lens"]) == 10 * conc
        assert h["max_batched_tokens"] == (16384 if "nvfp4" in row["id"] else 8192)
        assert math.isclose(sum(h["input_lens"]) / (10 * conc), 7373, rel_tol=0.02)


def test_vllm_pads_decode_only_steps_to_its_graphs():
    # engine="vllm": a step with no prompt chunk runs the CUDA graph of the next capture size
    # up (analysis.vllm_graph_batch, max_num_seqs = concurrency): decode_step(graph_batch=g);
    # a step with a chunk runs unpadded. The run assembled from the public pieces by hand:
    f = topologies.build(B200_8)
    ins, outs = [900, 1000, 1100, 950, 1050], [200, 150, 260, 90, 300]
    kw = {"layout": "tp=8", "engine": "vllm"}
    run = analysis.closed_loop_run("kimi-k2", f, input_lens=ins, output_lens=outs,
                                   concurrency=5, **kw)
    isl, context = round(sum(ins) / 5), round(sum(ins) / 5 + sum(outs) / 5 / 2)
    pre = analysis.prefill_time("kimi-k2", f, isl=isl, layout="tp=8",
                                one_at_a_time=True,
                                collective=analysis.engine_collective(
                                    "vllm", f.chip))

    def step(b, g=None):
        return analysis.decode_step("kimi-k2", f, batch=b, context=context, graph_batch=g,
                                    **kw)

    def alone(b):
        return step(b, analysis.vllm_graph_batch(b, max_num_seqs=5)).time

    def shared(b, c):
        br = step(b).breakdown
        return analysis.shared_weight_read(pre, br.weights, br.compute, c)

    budget = analysis.VLLM_MAX_BATCHED_TOKENS.value
    _, _, end, steps = _run_steps(ins, outs, 5, budget, lambda b: step(b).time,
                                  pre.chunk_seconds, shared, alone)
    assert (run.duration, run.steps) == (pytest.approx(max(end), rel=1e-12), steps)
    # b = 5, 3 pad to 8 and 4: the padded steps cost more, the run is longer than unpadded
    assert step(5, 8).time > step(5).time and step(3, 4).time >= step(3).time
    _, _, unpadded, _ = _run_steps(ins, outs, 5, budget, lambda b: step(b).time,
                                   pre.chunk_seconds, shared)
    assert max(end) > max(unpadded)
    # the padded rows' KV is not read
    assert step(5, 8).breakdown.kv_cache == pytest.approx(step(5).breakdown.kv_cache)
