"""Prompts prefilled together share one forward pass (session 12, review S11-R7).

With ``dp`` attention groups prefilling one prompt each at once (``prefill_time`` with
``one_at_a_time=False``: disaggregated prefill, ``adp_balance=True``), the ``dp`` prompts
run in ONE forward pass: one read of the weights (the experts their ``dp x tokens`` tokens
touch) and one set of kernel launches and boundaries, shared by them
(``PrefillTime.prompts``). Each prompt's figures are its share of that pass. Before, each
request was charged the pass's whole weight read (8x H200, deepseek-r1 tp=1,dp=8, isl 1024:
22.41 ms a request, as one prompt on tp=8)."""

import dataclasses
import itertools
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_serving_mixed_steps import _pass_by_resources

import analysis
import topologies
from analysis import PrefillTime, shared_weight_read
from analysis._serving import _prompt_saving
from fabric import SpecError
from fabric._units import is_real

H200 = "switch:8,planes=4,links=5/4/4/5,tech=nvlink4,chip=h200"
B200_8 = "switch:8,planes=2,links=9,tech=nvlink5,chip=b200"
times = st.floats(1e-4, 1.0)


def _touched_fraction(experts, k, tokens):
    """Expected fraction of ``experts`` a pass's ``tokens`` tokens touch, each token an
    equally likely k-subset: by counting, for each expert, the k-subsets that miss it."""
    subsets = list(itertools.combinations(range(experts), k))
    touched = 0.0
    for e in range(experts):
        miss = sum(e not in s for s in subsets) / len(subsets)
        touched += 1.0 - miss ** tokens
    return touched / experts


def _eager_pass(kernels, launch, boundary):
    """A pass launched kernel by kernel, by brute force: the host issues kernel ``i`` at
    ``(i + 1) x launch``; the GPU runs it from the later of that and the previous kernel's
    end, for its device seconds plus one boundary."""
    end = 0.0
    for i, d in enumerate(kernels):
        end = max((i + 1) * launch, end) + d + boundary
    return end


@st.composite
def passes(draw):
    """A pass of ``prompts`` prompts at pass level, and the PrefillTime of one of them."""
    prompts = draw(st.integers(1, 8))
    isl = draw(st.integers(1, 2000))
    per_token = draw(st.floats(1e-7, 1e-3))            # pass compute seconds per token
    dense, expert = draw(times), draw(times)           # pass read seconds
    comm = draw(st.floats(0.0, 1e-5))                  # seconds per token
    e = draw(st.integers(1, 6))
    k = draw(st.integers(1, e))
    flags = tuple(draw(st.lists(st.booleans(), min_size=1, max_size=4)))
    repeat = draw(st.integers(1, 3))
    launch = draw(st.sampled_from([0.0, 4e-6, 1e-3]))
    boundary = draw(st.sampled_from([0.0, 1.3e-6]))
    pre = PrefillTime(isl=isl, flops=0.0, compute=isl * per_token,
                      weights=(dense + expert) / prompts, comm=isl * comm, total=0.0,
                      expert_weights=expert / prompts, experts=e, experts_per_token=k,
                      launch=launch, launch_layers=((flags, repeat),), boundary=boundary,
                      prompts=prompts)
    whole = {"prompts": prompts, "per_token": per_token, "dense": dense, "expert": expert,
             "comm": comm, "e": e, "k": k, "kernels": list(flags) * repeat, "launch": launch,
             "boundary": boundary}
    return pre, whole


@settings(max_examples=150, deadline=None)
@given(case=passes(), tokens=st.integers(1, 40))
def test_a_pass_of_prompts_by_brute_force(case, tokens):
    """``prompts`` x a prompt's chunk seconds is the whole pass, by brute force: its FLOPs
    and its ONE read (the experts all its tokens touch, counted) drained together, its
    communication, then its kernels launched one by one with the device time spread over
    the heavy ones; the read per prompt is the pass's over the prompts."""
    pre, w = case
    p = w["prompts"]
    touched = _touched_fraction(w["e"], w["k"], p * tokens)
    read = w["dense"] + w["expert"] * touched
    assert p * pre.read(tokens) == pytest.approx(read, rel=1e-9)
    dt = 1e-5
    device = _pass_by_resources(p * tokens * w["per_token"], read, dt) + p * tokens * w["comm"]
    heavy = sum(w["kernels"])
    kernels = [(device / heavy if f else 0.0) for f in w["kernels"]] if heavy else \
        [0.0] * len(w["kernels"])
    want = _eager_pass(kernels, w["launch"], w["boundary"]) + (0.0 if heavy else device)
    assert p * pre.chunk_seconds(tokens) == pytest.approx(want, abs=2 * dt + 1e-12)


@settings(max_examples=150, deadline=None)
@given(case=passes(), w_b=times, c_b=times, tokens=st.integers(1, 40),
       step_launch=st.sampled_from([0.0, 1e-4]))
def test_a_mixed_step_with_every_groups_chunk(case, w_b, c_b, tokens, step_launch):
    """A step of the decodes and every group's chunk: the saving per prompt is the merged
    pass's (brute force: all chunks' FLOPs and the decode's, one read no less than either
    part's) over the prompts; the mixed step is never faster than either of its parts."""
    pre, w = case
    p = w["prompts"]
    s = shared_weight_read(pre, w_b, c_b, tokens, step_launch)
    flops = p * tokens * pre.compute / pre.isl
    read = p * pre.read(tokens)
    apart = max(flops, read)
    dt = 1e-5
    merged = _pass_by_resources(flops + c_b, max(read, w_b), dt)
    bounds = min(step_launch, sum(len(f) * r for f, r in pre.launch_layers) * pre.boundary)
    want = min(max(0.0, apart + w_b - merged), w_b, apart) + bounds
    assert p * s == pytest.approx(want, abs=2 * dt + 1e-12)
    decode = max(w_b, c_b) + step_launch
    chunks = p * pre.chunk_seconds(tokens)
    assert decode + chunks - p * s >= max(decode, chunks) - 1e-12


@settings(max_examples=100, deadline=None)
@given(case=passes(), w_b=times, c_b=times, batch=st.integers(1, 64),
       budget=st.integers(1, 3000), steps=st.floats(1.0, 5000.0))
def test_prompt_saving_caps_one_pass_per_step(case, w_b, c_b, batch, budget, steps):
    """Brute force: the prompt's chunks beside its rank's other requests each save their
    share; a step shares its read once, with every group's chunk in it, so the batch's
    prompts save at most ``steps`` passes' worth."""
    pre, w = case
    dp = w["prompts"]
    room = budget - (math.ceil(batch / dp) - 1)
    saved, left = 0.0, pre.isl
    while room >= 1 and left > 0:
        c = min(room, left)
        saved += shared_weight_read(pre, w_b, c_b, c)
        left -= c
    per_pass = dp * shared_weight_read(pre, w_b, c_b, min(room, pre.isl)) if room >= 1 else 0
    want = min(saved, steps * per_pass / batch)
    assert _prompt_saving(pre, w_b, c_b, pre.isl, batch, budget, steps, dp) == pytest.approx(
        want, rel=1e-9, abs=1e-15)


def _fits(model, f, layout):
    """Whether the fullest chip of ``layout`` holds ``model``'s weights (decode's memory count:
    kimi-k2's FP8 release at tp=1,dp=8 on 8 H200 does not since session 26 stores its router
    gates, head and embedding BF16, as the release does: 141.1 GB a chip)."""
    try:
        analysis.decode_step(model, f, batch=1, context=0, layout=layout)
    except SpecError as e:
        if "a chip needs" in str(e):
            return False
        raise
    return True


@settings(max_examples=12, deadline=None)
@given(model=st.sampled_from(["deepseek-r1", "kimi-k2", "deepseek-v3"]),
       dp=st.sampled_from([2, 4, 8]), isl=st.integers(1, 8192))
def test_prompts_together_share_the_pass(model, dp, isl):
    """dp prompts at once: one pass, read once (its read is one prompt's alone, shared dp
    ways); the pass takes no less than one prompt alone on the instance, and each prompt's
    share no more."""
    f = topologies.build(H200)
    kw = {"isl": isl, "layout": f"tp={8 // dp},dp={dp}"}
    if not _fits(model, f, kw["layout"]):     # a layout no chip can hold is refused by name
        with pytest.raises(SpecError, match="a chip needs"):
            analysis.prefill_time(model, f, **kw)
        return
    together = analysis.prefill_time(model, f, **kw)
    alone = analysis.prefill_time(model, f, one_at_a_time=True, **kw)
    assert (together.prompts, alone.prompts) == (dp, 1)
    assert dp * together.weights == pytest.approx(alone.weights, rel=1e-12)
    assert dp * together.expert_weights == pytest.approx(alone.expert_weights, rel=1e-12)
    assert together.total <= alone.total * (1 + 1e-12)
    assert dp * together.total >= alone.total * (1 - 1e-12)


def test_review_row_by_hand():
    """The review's row (S11-R7): deepseek-r1 on 8 H200, tp=1,dp=8, isl 1024: compute-bound
    once the read is shared (22.41 ms read / 8 = 2.80 ms < 7.20 ms compute), so a request
    costs its compute, communication and an eighth of the pass's launches."""
    f = topologies.build(H200)
    m = analysis.model_config("deepseek-r1")
    p = analysis.prefill_time(m, f, isl=1024, layout="tp=1,dp=8")
    # the pass reads each chip's weights once: every non-expert weight (tp=1: a whole copy
    # per chip) and its 256 / 8 experts of each MoE layer, shared by the 8 prompts
    routed = m.moe_layers * m.routed_experts * m.routed_expert_bytes
    chip = m.weight_bytes_total - routed + routed / 8
    bw = f.chip.hbm_bandwidth * analysis.DECODE_HBM_EFFICIENCY.value
    assert 8 * p.weights == pytest.approx(chip / bw, rel=1e-9)
    assert 8 * p.expert_weights == pytest.approx(routed / 8 / bw, rel=1e-9)
    assert p.read(1024) < p.compute
    device = p.compute + p.comm
    assert p.total == pytest.approx(device + p.exposed_launch(8 * device) / 8, rel=1e-12)
    assert 10e-3 < p.total < 12e-3                     # was 26.0 ms


@settings(max_examples=12, deadline=None)
@given(model=st.sampled_from(["deepseek-r1", "kimi-k2", "deepseek-v3", "deepseek-r1-nvfp4"]),
       layout=st.sampled_from(["tp=1,dp=8", "tp=2,dp=4", "tp=4,dp=2", "tp=8,dp=1",
                               "tp=8,dp=1,etp=8", "tp=4,dp=1,etp=4", "tp=1,dp=4"]),
       serial=st.booleans())
def test_a_pass_reads_its_fullest_chip(model, layout, serial):
    """Review S12-R1: a pass ends when its busiest HBM has read its chip's weights, decode's
    own count of the fullest chip (hbm_per_chip of a one-token step, less that token's KV),
    never less than the instance's weights spread evenly over its chips (the old read: the
    dp groups' copies of the non-expert weights, MLA's replicated down-projections, uneven
    expert counts were missing)."""
    f = topologies.build(H200)
    m = analysis.model_config(model)
    chips = analysis.parse_layout(layout, 8).chips
    if m.weight_bytes_total > chips * f.chip.hbm_bytes:      # no chip count to read: named
        with pytest.raises(SpecError, match="weights need"):
            analysis.prefill_time(m, f, isl=512, layout=layout, one_at_a_time=serial)
        return
    if not _fits(m, f, layout):                   # the fullest chip overflows: named too
        with pytest.raises(SpecError, match="a chip needs"):
            analysis.prefill_time(m, f, isl=512, layout=layout, one_at_a_time=serial)
        return
    p = analysis.prefill_time(m, f, isl=512, layout=layout, one_at_a_time=serial)
    step = analysis.decode_step(m, f, batch=1, context=0, layout=layout)
    chip = step.hbm_per_chip - m.kv_bytes_per_chip(1, step.layout.tp)
    bw = f.chip.hbm_bandwidth * analysis.DECODE_HBM_EFFICIENCY.value
    assert p.prompts * p.weights == pytest.approx(chip / bw, rel=1e-9)
    lay = step.layout
    assert p.prompts * p.weights * bw >= m.weight_bytes_total / lay.chips * (1 - 1e-12)
    assert 0 < p.expert_weights < p.weights


@pytest.mark.parametrize("bad, error", [(0, SpecError), (-1, SpecError), (1.5, TypeError),
                                        (True, TypeError), ("2", TypeError), (None, TypeError)])
def test_bad_prompts_is_named(bad, error):
    # a count of the wrong kind is a TypeError, one out of range a SpecError (session 31)
    pre = PrefillTime(isl=10, flops=0.0, compute=0.1, weights=0.1, comm=0.0, total=0.0,
                      prompts=bad)
    for call in (lambda: pre.read(1), lambda: pre.chunk_seconds(1),
                 lambda: shared_weight_read(pre, 0.1, 0.1, 1)):
        with pytest.raises(error, match="prompts"):
            call()


@settings(max_examples=25, deadline=None)
@given(model=st.sampled_from(["kimi-k2", "deepseek-v3"]), isl=st.integers(2, 4096),
       frac=st.floats(0.0, 1.5), serial=st.booleans(),
       layout=st.sampled_from(["tp=1,dp=8", "tp=8", "tp=2,dp=4", "tp=8,dp=1,etp=8"]),
       runtime=st.sampled_from(["ideal", "nccl", "symmetric-memory"]),
       failed=st.booleans())
def test_a_chunks_collectives_at_its_own_size_by_brute_force(model, isl, frac, serial, layout,
                                                             runtime, failed):
    """A chunk's collectives are those of a pass of its own size (session 13; session 12 drew
    them on the line through one token and the whole prompt, exact only for costs affine in
    the bytes): brute force, prefill_time(isl=c), for any runtime, layout and chunk (a pass
    of several prompts' tokens, c > isl, too), on an intact fabric and one with a failed
    chip (a spare chip keeps eight)."""
    f = topologies.build("switch:9,planes=2,links=9,tech=nvlink5,chip=b200")
    f = f.without(chips=["chip3"]) if failed else f.without(chips=["chip8"])
    kw = {"layout": layout, "one_at_a_time": serial, "runtime": runtime}
    p = analysis.prefill_time(model, f, isl=isl, **kw)
    c = max(1, round(frac * isl))
    want = analysis.prefill_time(model, f, isl=c, **kw).comm
    assert p.chunk_comm(c) == pytest.approx(want, rel=1e-12)


@pytest.mark.parametrize("layout", ["tp=8", "tp=2,dp=4", "tp=8,dp=1,etp=8"])
def test_a_chunks_collectives_under_nccl(layout):
    """Under NCCL (not affine in the bytes: protocol and algorithm steps) a chunk's collectives
    are costed at the chunk's own size (session 13; session 12 interpolated between one token
    and the whole prompt, under-charging mid-size chunks): brute force, a prompt of the
    chunk's size; they grow with the chunk (up to rounding) and never fall to the old
    c / isl share."""
    f = topologies.build(B200_8)
    p = analysis.prefill_time("kimi-k2", f, isl=2048, layout=layout)
    sizes = [0, 1, 2, 7, 100, 300, 1000, 2047, 2048, 5000]
    got = [p.chunk_comm(c) for c in sizes]
    for c, g in zip(sizes, got, strict=True):
        want = analysis.prefill_time("kimi-k2", f, isl=c, layout=layout).comm if c else 0.0
        assert g == pytest.approx(want, rel=1e-12)
        if c <= 2048:
            assert g >= c * p.comm / 2048 - 1e-15
    for a, b in itertools.pairwise(got):
        assert b >= a * (1 - 1e-12)
    assert p.total == pytest.approx(p.chunk_seconds(2048), rel=1e-12)


def test_a_mid_chunk_under_nccl_is_dearer_than_the_affine_rule():
    """The case session 12 left (kimi-k2 tp=8 on 8 B200, a 4096-token prompt, 300-token
    chunks): NCCL's cost is concave in the bytes there, so the affine rule through one token
    and the whole prompt (what a hand-built PrefillTime with ``comm_one`` still gets) priced
    the chunk below its own collectives."""
    f = topologies.build(B200_8)
    p = analysis.prefill_time("kimi-k2", f, isl=4096, layout="tp=8")
    affine = dataclasses.replace(p, comm_at=None)
    assert affine.chunk_comm(300) < p.chunk_comm(300)
    assert affine.chunk_comm(1) == pytest.approx(p.chunk_comm(1), rel=1e-12)
    assert affine.chunk_comm(4096) == pytest.approx(p.chunk_comm(4096), rel=1e-12)
    assert p == affine                     # the cost function is neither compared nor printed
    assert "comm_at" not in repr(p)


@pytest.mark.parametrize("bad", [-1.0, math.nan, math.inf, True, "0.1"])
def test_bad_comm_one_is_named(bad):
    pre = PrefillTime(isl=10, flops=0.0, compute=0.1, weights=0.1, comm=0.1, total=0.0,
                      comm_one=bad)
    with pytest.raises(SpecError if is_real(bad) else TypeError, match="comm_one"):
        pre.chunk_seconds(3)


def test_a_prefill_time_pickles_with_its_cost_function():
    """A PrefillTime crosses process boundaries (a sweep's executor) with its collectives'
    cost function and the fabric it costs on (session 14, review S13-R5: session 13 dropped
    it, and the copy, still equal, priced a mid chunk by the affine rule): the copy prices
    every chunk as the original; in one process copies share it."""
    import copy
    import pickle

    f = topologies.build(B200_8)
    p = analysis.prefill_time("kimi-k2", f, isl=4096, layout="tp=8")
    q = pickle.loads(pickle.dumps(p))
    assert q == p and q.comm_at is not None and q.comm_at is not p.comm_at
    affine = dataclasses.replace(p, comm_at=None).chunk_comm(300)
    assert q.chunk_comm(300) == p.chunk_comm(300) != affine
    for c in (copy.copy(p), copy.deepcopy(p)):        # in one process it is kept
        assert c == p and c.comm_at is p.comm_at
