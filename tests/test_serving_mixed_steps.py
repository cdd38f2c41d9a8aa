"""Mixed engine steps: a prompt chunk and the running decodes in ONE forward pass share the
weight read (analysis.shared_weight_read; vLLM V1 and TensorRT-LLM mix, SGLang by default
does not: analysis.MIXED_STEP_BUDGET, docs/sources.md s.8)."""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import analysis
import topologies
from analysis import PrefillTime, shared_weight_read
from analysis._serving import _prompt_saving
from fabric import SpecError

B200_8 = "switch:8,planes=2,links=9,tech=nvlink5,chip=b200"

times = st.floats(1e-4, 1.0)


def _merged_by_resources(prefill, w_b, c_b, chunk, dt):
    """The merged forward pass by brute force: HBM and the SMs work at once, each through its
    own queue in steps of ``dt`` seconds (the weights streamed once, no less than either part
    reads on its own; the FLOPs of both), until both are empty."""
    return _pass_by_resources(chunk * prefill.compute / prefill.isl + c_b,
                              max(prefill.read(chunk), w_b), dt)


def _pass_by_resources(flops_s, bytes_s, dt):
    """One forward pass by brute force: HBM and the SMs each work through their own queue,
    ``dt`` seconds a step, until both are empty."""
    t = 0.0
    while flops_s > 0 or bytes_s > 0:
        flops_s -= dt
        bytes_s -= dt
        t += dt
    return t


@settings(max_examples=150, deadline=None)
@given(compute=times, weights=times, isl=st.integers(1, 4000), w_b=times, c_b=times,
       frac=st.floats(0.0, 1.0))
def test_saving_is_what_the_merged_pass_saves(compute, weights, isl, w_b, c_b, frac):
    pre = PrefillTime(isl=isl, flops=0.0, compute=compute, weights=weights, comm=0.0,
                      total=max(compute, weights))
    chunk = max(1, round(frac * isl))
    s = shared_weight_read(pre, w_b, c_b, chunk)
    priced = max(chunk * compute / isl, weights)          # the chunk apart: its own pass
    # within [0, either part]: a mixed step is never faster than its decode or its chunk
    assert 0.0 <= s <= min(w_b, priced) + 1e-15
    # apart (chunk as priced + the decode's weight read) less the merged pass by brute force,
    # where that is within both parts
    dt = 1e-4
    merged = _merged_by_resources(pre, w_b, c_b, chunk, dt)
    want = min(max(0.0, priced + w_b - merged), w_b, priced)
    assert s == pytest.approx(want, abs=2 * dt)
    # a longer chunk never makes the mixed step cheaper (it may save less: its FLOPs fill
    # the time the decode's read had hidden)
    d = max(w_b, c_b)

    def mixed(c):
        return d + max(c * compute / isl, weights) - shared_weight_read(pre, w_b, c_b, c)

    assert mixed(chunk + 1) >= mixed(chunk) - 1e-12


@settings(max_examples=100, deadline=None)
@given(compute=times, weights=times, isl=st.integers(1, 3000), w_b=times, c_b=times,
       batch=st.integers(1, 64), budget=st.integers(1, 4000), steps=st.floats(1.0, 5000.0),
       dp=st.sampled_from([1, 2, 4, 8]))
def test_prompt_saving_walks_its_chunks(compute, weights, isl, w_b, c_b, batch, budget, steps,
                                        dp):
    # brute force: the prompt's tokens go into its steps one chunk at a time beside the other
    # requests of its rank, each chunk saving its own; a step shares its read once, so the
    # batch's prompts save at most `steps` full chunks' worth
    pre = PrefillTime(isl=isl, flops=0.0, compute=compute, weights=weights, comm=0.0,
                      total=max(compute, weights))
    room = budget - (math.ceil(batch / dp) - 1)
    saved, left = 0.0, isl
    while room >= 1 and left > 0:
        c = min(room, left)
        saved += shared_weight_read(pre, w_b, c_b, c)
        left -= c
    cap = steps * shared_weight_read(pre, w_b, c_b, min(room, isl)) / batch if room >= 1 else 0
    assert _prompt_saving(pre, w_b, c_b, isl, batch, budget, steps, dp) == pytest.approx(
        min(saved, cap), rel=1e-9, abs=1e-15)
    assert _prompt_saving(pre, w_b, c_b, isl, batch, None, steps, dp) == 0.0


@pytest.fixture(scope="module")
def node():
    return topologies.build(B200_8)


def test_engines_that_mix_and_one_that_does_not(node):
    kw = {"isl": 4096, "osl": 512, "batch": 32, "layout": "tp=8"}
    trt = analysis.serving_point("kimi-k2", node, **kw)                 # the default engine
    vllm = analysis.serving_point("kimi-k2", node, engine="vllm", **kw)
    sgl = analysis.serving_point("kimi-k2", node, engine="sglang", **kw)
    assert analysis.step_budget(None) == analysis.TRTLLM_MAX_NUM_TOKENS.value == 8192
    assert analysis.step_budget("vllm") == analysis.VLLM_MAX_BATCHED_TOKENS.value
    assert analysis.step_budget("sglang") is None
    assert trt.shared_read > 0 and vllm.shared_read > 0
    # SGLang runs a prompt as its own forward pass: the additive composition
    assert sgl.shared_read == 0.0
    assert sgl.request_time == pytest.approx(32 * sgl.prefill_time
                                             + 512 * sgl.cycle_time)
    # disaggregated: no prompt on the decode instance, nothing shared
    dis = analysis.serving_point("kimi-k2", node, mode="disaggregated", **kw)
    assert dis.shared_read == 0.0
    # a smaller budget (vLLM, which chunks prompts; TensorRT-LLM runs one only whole:
    # tests/test_serving_whole_prompts.py): the prompt rides on 5 steps (4096 tokens in
    # chunks of 1024 - 31); each 993-token chunk is a pass of its own, at least one read of
    # the weights (session 11; priced at 993/4096 of the prompt it fell below one read and,
    # merged, saved nothing), and riding on a decode step it shares that step's read
    kw = dict(kw, engine="vllm")
    small = analysis.serving_point("kimi-k2", node, max_batched_tokens=1024, **kw)
    pre = analysis.prefill_time("kimi-k2", node, isl=4096, layout="tp=8",
                                collective=analysis.engine_collective("vllm", node.chip))
    step = analysis.decode_step("kimi-k2", node, batch=32, context=4096 + 256, layout="tp=8",
                                engine="vllm")
    assert 993 * max(pre.compute, pre.weights) / 4096 < pre.weights
    assert small.prefill_time == pytest.approx(
        4 * pre.chunk_seconds(993) + pre.chunk_seconds(4096 - 4 * 993), rel=1e-12)
    assert small.prefill_time > pre.total
    w_b, c_b = step.breakdown.weights, step.breakdown.compute
    l_b = step.breakdown.launch
    per_chunk = [shared_weight_read(pre, w_b, c_b, c, l_b) for c in (993,) * 4 + (124,)]
    assert small.shared_read == pytest.approx(min(sum(per_chunk), 256 * per_chunk[0] / 32))
    assert small.shared_read > 0
    # a budget with room for one prompt token beside the 31 other decodes: the prompt takes
    # 4096 one-token passes, each at least the read its token touches; what they save is
    # capped by the 512 decode steps of a request's time, shared by the 32 prompts
    one = analysis.serving_point("kimi-k2", node, max_batched_tokens=32, **kw)
    assert one.prefill_time == pytest.approx(4096 * pre.chunk_seconds(1), rel=1e-12)
    s1 = shared_weight_read(pre, w_b, c_b, 1, l_b)
    assert one.shared_read == pytest.approx(512 * s1 / 32, rel=1e-12)
    assert one.request_time == pytest.approx(32 * (one.prefill_time - one.shared_read)
                                             + 512 * one.cycle_time)


@pytest.mark.parametrize("kw, match", [
    ({"max_batched_tokens": 0}, "max_batched_tokens"),
    ({"max_batched_tokens": 2.5}, "max_batched_tokens"),
    ({"max_batched_tokens": True}, "max_batched_tokens"),
    ({"max_batched_tokens": 4096, "engine": "sglang"}, "runs prompts on their own"),
    # vLLM's rule (max_num_batched_tokens >= max_num_seqs); TensorRT-LLM, the default engine,
    # refuses first that its whole prompt (1024 tokens) exceeds the budget
    ({"max_batched_tokens": 3, "engine": "vllm"}, "below the 4 sequences"),
    ({"max_batched_tokens": 3}, "no request can run"),
])
def test_bad_budgets_are_refused(node, kw, match):
    # a count of the wrong kind is a TypeError (session 31)
    error = TypeError if kw.get("max_batched_tokens") in (2.5, True) else SpecError
    with pytest.raises(error, match=match):
        analysis.serving_point("kimi-k2", node, isl=1024, osl=128, batch=4, layout="tp=8",
                               **kw)


@settings(max_examples=10, deadline=None)
@given(dead=st.sampled_from(["chip7", "chip6"]), batch=st.integers(1, 48))
def test_degraded_fabric_shares_no_more_than_a_step_reads(dead, batch):
    # a degraded board (a chip failed): a 4-chip instance on the live chips; a prompt saves at
    # most one weight read (and one set of kernel boundaries) per step it rides on, and never
    # more than its own time
    f = topologies.build(B200_8).without(chips=[dead])
    p = analysis.serving_point("kimi-k2.5-nvfp4", f, isl=2048, osl=256, batch=batch,
                               layout="tp=4,dp=1")
    step = analysis.decode_step("kimi-k2.5-nvfp4", f, batch=batch, context=2048 + 128,
                                layout="tp=4,dp=1")
    # (plus, since session 11, one set of kernel boundaries: at most the step's own)
    assert 0.0 <= p.shared_read <= step.breakdown.weights + step.breakdown.launch + 1e-15
    assert p.shared_read <= p.prefill_time
    assert p.request_time == pytest.approx(batch * (p.prefill_time - p.shared_read)
                                           + 256 * p.cycle_time)


@pytest.mark.parametrize("args, match", [
    ((0.02, 0.001, -100), "chunk"),
    ((0.02, 0.001, 2.5), "chunk"),
    ((0.02, 0.001, True), "chunk"),
    ((-0.02, 0.001, 100), "step_weights"),
    ((float("nan"), 0.001, 100), "step_weights"),
    ((0.02, float("inf"), 100), "step_compute"),
])
def test_bad_saving_inputs_are_named(args, match):
    pre = PrefillTime(isl=1000, flops=0.0, compute=0.5, weights=0.1, comm=0.0, total=0.6)
    # a chunk (a count) of the wrong kind is a TypeError (session 31)
    with pytest.raises(TypeError if args[2] in (2.5, True) else SpecError, match=match):
        shared_weight_read(pre, *args)
    with pytest.raises(TypeError, match="PrefillTime"):     # a SpecError before session 34
        shared_weight_read(0.6, 0.02, 0.001, 100)
    with pytest.raises(SpecError, match="engine must be one of"):
        analysis.step_budget("foo")


@settings(max_examples=200, deadline=None)
@given(batch=st.integers(1, 1200), seqs=st.integers(1, 600), budget=st.integers(1, 9000))
def test_vllm_graph_batch_is_the_smallest_capture_size_that_holds_it(batch, seqs, budget):
    # brute force from the rule's words: sizes 1, 2, 4, the multiples of 8 below 256 and of
    # 16 from 256, none above min(2 x max_num_seqs, 512, max_num_batched_tokens)
    top = min(2 * seqs, 512, budget)
    sizes = [x for x in range(1, top + 1)
             if x in (1, 2, 4) or (x % 8 == 0 and x < 256) or (x % 16 == 0 and x >= 256)]
    want = min((x for x in sizes if x >= batch), default=None)
    assert analysis.vllm_graph_batch(batch, max_num_seqs=seqs, max_batched_tokens=budget) == want


def test_vllm_steady_points_run_vllm_s_graphs(node):
    # serving_point(engine="vllm"): each DP rank's engine (max_num_seqs its own sequences)
    # replays the graph of the next capture size up; above the largest it runs eagerly
    kw = {"isl": 1024, "osl": 128, "engine": "vllm"}

    def cycle(batch, layout):
        return analysis.serving_point("kimi-k2.5-nvfp4", node, batch=batch, layout=layout,
                                      **kw).cycle_time

    def step(batch, layout, **extra):
        return analysis.decode_step("kimi-k2.5-nvfp4", node, batch=batch, context=1024 + 64,
                                    layout=layout, engine="vllm", **extra).time

    assert cycle(5, "tp=8") == pytest.approx(step(5, "tp=8", graph_batch=8))
    assert cycle(8, "tp=8") == pytest.approx(step(8, "tp=8"))
    # two ranks of 5 sequences each: 8 each, 16 in all
    assert cycle(10, "tp=4,dp=2") == pytest.approx(step(10, "tp=4,dp=2", graph_batch=16))
    # 600 sequences: above min(2 x 600, 512): no graph
    big = analysis.serving_point("kimi-k2.5-nvfp4", node, batch=600, layout="tp=8",
                                 isl=128, osl=64, engine="vllm")
    eager = analysis.decode_step("kimi-k2.5-nvfp4", node, batch=600, context=128 + 32,
                                 layout="tp=8", engine="vllm", cuda_graphs=False)
    assert big.cycle_time == pytest.approx(eager.time)
    # other engines: no padding
    trt = analysis.serving_point("kimi-k2.5-nvfp4", node, batch=5, layout="tp=8", isl=1024,
                                 osl=128)
    assert trt.cycle_time == pytest.approx(analysis.decode_step(
        "kimi-k2.5-nvfp4", node, batch=5, context=1024 + 64, layout="tp=8").time)


@settings(max_examples=100, deadline=None)
@given(base=st.floats(0.01, 1.0), slope=st.floats(0.0, 5.0), load=st.floats(0.0, 2.0),
       cap=st.one_of(st.none(), st.floats(0.5, 50.0)))
def test_self_consistent_step_brute_force(base, slope, load, cap):
    # a step base + slope x r that the NIC cannot carry above `cap`, fed r = load / t: the
    # bisection's t against a scan of t for the first point where the step fits in it
    from analysis._serving import _self_consistent_step

    def step_at(r):
        return math.inf if cap is not None and r >= cap else base + slope * r

    def rate_at(t):
        return load / t

    t = _self_consistent_step(step_at, rate_at)
    assert step_at(rate_at(t)) <= t * (1 + 1e-12)
    ratio = 1 + 1e-4                        # a geometric scan from the bare step up
    x = base
    while step_at(rate_at(x)) > x:
        x *= ratio
    assert x / ratio * (1 - 1e-9) <= t <= x * (1 + 1e-9)


def test_kv_inflow_is_a_disaggregated_condition_and_self_consistent():
    import serving_check as sc

    row = {r["id"]: r for r in sc.load_rows()}["dsv3-72xh100-ep72"]
    kw = dict(sc.conditions(row))
    system, model = kw.pop("system"), kw.pop("model")
    f = topologies.build(system)
    p = analysis.serving_point(model, f, **kw)
    off = analysis.serving_point(model, f, **{**kw, "kv_inflow": False})
    assert p.cycle_time > off.cycle_time
    # the cycle is the step at the rate its own length gives: 256 / 100 new requests per
    # rank per cycle, 2000 tokens of KV cache each
    rate = 256 / 100 * analysis.model_config(model).kv_bytes_per_chip(2000, 1) / p.cycle_time
    dk = {k: v for k, v in kw.items() if k not in (
        "isl", "osl", "batch", "mode", "definition", "usable_hbm", "micro_batches",
        "kv_inflow", "context")}
    assert p.context == 2000 + 100 // 2         # the mean over a request's 100 steps
    half = analysis.decode_step(model, f, batch=256 * 72 // 2, context=p.context,
                                nic_background=rate, **dk)
    assert p.cycle_time == pytest.approx(2 * half.time, rel=1e-6)
    with pytest.raises(SpecError, match="disaggregated"):
        analysis.serving_point(model, f, **{**kw, "mode": "aggregated"})
    with pytest.raises(SpecError, match="one or the other"):
        analysis.serving_point(model, f, **{**kw, "nic_background": 1e9})
    with pytest.raises(TypeError, match="kv_inflow"):
        analysis.serving_point(model, f, **{**kw, "kv_inflow": 1})
    # experts exchanged through the collectives model (no exchange kernel): no NIC stage to
    # load, said so (not priced as if nothing arrived)
    node = topologies.build(B200_8)
    with pytest.raises(SpecError, match="kv_inflow: nic_background"):
        analysis.serving_point("deepseek-v3", node, isl=1024, osl=100, batch=64,
                               layout="tp=1,dp=8", mode="disaggregated", kv_inflow=True)
