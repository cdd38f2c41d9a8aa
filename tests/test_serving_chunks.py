"""A prompt chunk at its own roofline (session 11): a forward pass of ``c`` prompt tokens
takes ``max(c x compute / isl, read(c)) + c x comm / isl`` (PrefillTime.chunk_seconds), one
read of the weights its tokens touch (PrefillTime.read, uniform routing), not ``c / isl`` of
the whole prompt; the mixed-step saving (shared_weight_read) on top."""

import dataclasses
import itertools
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_serving_closed_loop import _reference
from test_serving_mixed_steps import _pass_by_resources

import analysis
import topologies
from analysis import PrefillTime, shared_weight_read
from analysis._serving import _prompt_saving, _prompt_seconds, _run_steps
from fabric import SpecError
from fabric._units import is_real

B200_8 = "switch:8,planes=2,links=9,tech=nvlink5,chip=b200"
times = st.floats(1e-4, 1.0)


def _active_by_enumeration(experts, k, tokens):
    """Expected distinct experts ``tokens`` tokens pick, each token an equally likely
    k-subset (every assignment enumerated)."""
    subsets = list(itertools.combinations(range(experts), k))
    total = count = 0
    for picks in itertools.product(subsets, repeat=tokens):
        total += len(set().union(*picks))
        count += 1
    return total / count


@settings(max_examples=40, deadline=None)
@given(experts=st.integers(1, 5), k=st.integers(1, 5), tokens=st.integers(1, 3),
       dense=times, expert=times)
def test_read_is_the_touched_experts_by_enumeration(experts, k, tokens, dense, expert):
    k = min(k, experts)
    pre = PrefillTime(isl=10, flops=0.0, compute=0.0, weights=dense + expert, comm=0.0,
                      total=dense + expert, expert_weights=expert, experts=experts,
                      experts_per_token=k)
    want = dense + expert * _active_by_enumeration(experts, k, tokens) / experts
    assert pre.read(tokens) == pytest.approx(want, rel=1e-12)
    # more tokens never read less; a hand-built prefill without routing reads everything
    assert pre.read(tokens + 1) >= pre.read(tokens) - 1e-15
    bare = PrefillTime(isl=10, flops=0.0, compute=0.0, weights=dense + expert, comm=0.0,
                       total=0.0)
    assert bare.read(1) == dense + expert


def _prefill(isl, compute, dense, expert, comm, e, k):
    """A PrefillTime as prefill_time builds one: total = the prompt as one pass."""
    p = PrefillTime(isl=isl, flops=0.0, compute=compute, weights=dense + expert, comm=comm,
                    total=0.0, expert_weights=expert, experts=e, experts_per_token=min(k, e))
    return dataclasses.replace(p, total=p.chunk_seconds(isl))


prefills = st.builds(
    _prefill,
    isl=st.integers(1, 5000), compute=times, dense=times, expert=times,
    comm=st.floats(0.0, 0.1), e=st.integers(1, 384), k=st.integers(1, 8))


@settings(max_examples=150, deadline=None)
@given(pre=prefills, frac=st.floats(0.0, 2.0))
def test_a_chunk_is_its_own_pass(pre, frac):
    """A chunk's seconds are the brute-force pass of its FLOPs and its read, plus its share of
    the communication; never below one read of what it touches (the linear pricing, c / isl of
    the prompt, went below it for small chunks); the whole prompt is one such pass."""
    c = max(1, round(frac * pre.isl))
    dt = 1e-4
    want = _pass_by_resources(c * pre.compute / pre.isl, pre.read(c), dt) + c * pre.comm / pre.isl
    assert pre.chunk_seconds(c) == pytest.approx(want, abs=2 * dt)
    assert pre.chunk_seconds(c) >= pre.read(c)
    # splitting a prompt never makes it cheaper; one chunk is the prompt
    whole = pre.chunk_seconds(pre.isl)
    for parts in (2, 3):
        if pre.isl >= parts:
            sizes = [pre.isl // parts + (i < pre.isl % parts) for i in range(parts)]
            assert sum(pre.chunk_seconds(s) for s in sizes) >= whole - 1e-12


def test_prefill_time_total_is_the_prompt_as_one_pass():
    f = topologies.build(B200_8)
    for isl in (1, 16, 1024, 8192):
        p = analysis.prefill_time("kimi-k2", f, isl=isl, layout="tp=8")
        assert p.total == pytest.approx(p.chunk_seconds(isl), rel=1e-12)
        m = analysis.model_config("kimi-k2")
        assert (p.experts, p.experts_per_token) == (m.routed_experts, m.experts_per_token)
        assert 0 < p.expert_weights < p.weights
    # a one-token prompt reads k of E experts' worth; a long one, every weight
    one = analysis.prefill_time("kimi-k2", f, isl=1, layout="tp=8")
    frac = analysis.expected_active_experts(384, 8, 1) / 384
    assert one.read(1) == pytest.approx(one.weights - one.expert_weights * (1 - frac))
    long = analysis.prefill_time("kimi-k2", f, isl=8192, layout="tp=8")
    assert long.read(8192) == pytest.approx(long.weights, rel=1e-12)


@settings(max_examples=150, deadline=None)
@given(pre=prefills, w_b=times, c_b=times, frac=st.floats(0.0, 1.0))
def test_small_chunk_saving_on_top_of_its_roofline(pre, w_b, c_b, frac):
    """The mixed step: chunk apart at its roofline + decode's read, less the merged pass
    (both parts' FLOPs, the larger read) by brute force; a mixed step costs no less than
    either part alone."""
    c = max(1, round(frac * pre.isl))
    s = shared_weight_read(pre, w_b, c_b, c)
    kappa = c * pre.compute / pre.isl
    apart = max(kappa, pre.read(c))
    dt = 1e-4
    merged = _pass_by_resources(kappa + c_b, max(pre.read(c), w_b), dt)
    assert s == pytest.approx(min(max(0.0, apart + w_b - merged), w_b, apart), abs=2 * dt)
    decode = max(w_b, c_b)
    assert decode + pre.chunk_seconds(c) - s >= max(decode, pre.chunk_seconds(c)) - 1e-12


@settings(max_examples=100, deadline=None)
@given(pre=prefills, batch=st.integers(1, 64), budget=st.integers(1, 6000),
       dp=st.sampled_from([1, 2, 8]))
def test_steady_prompt_is_its_chunks(pre, batch, budget, dp):
    """Brute force: walk the prompt through its steps, each taking what is left of the
    budget beside the rank's other requests, each chunk one pass of its own."""
    room = budget - (math.ceil(batch / dp) - 1)
    if room < 1:
        want = pre.chunk_seconds(pre.isl)
    else:
        want, left = 0.0, pre.isl
        while left > 0:
            c = min(room, left)
            want += pre.chunk_seconds(c)
            left -= c
    assert _prompt_seconds(pre, pre.isl, batch, budget, dp) == pytest.approx(want, rel=1e-9)
    assert _prompt_seconds(pre, pre.isl, batch, None, dp) == pre.total
    # what the chunks save never exceeds what they cost (up to the rounding of summing up to
    # isl one-token chunks: 3883 of them differed by 3e-14 relative, session 14)
    s = _prompt_saving(pre, 0.01, 0.001, pre.isl, batch, budget, 1e9, dp)
    assert 0.0 <= s <= want * (1 + 1e-12) + 1e-12


requests = st.integers(1, 10).flatmap(lambda n: st.tuples(
    st.lists(st.integers(1, 40), min_size=n, max_size=n),
    st.lists(st.integers(1, 20), min_size=n, max_size=n)))


@settings(max_examples=100, deadline=None)
@given(req=requests, concurrency=st.integers(1, 5), extra=st.integers(0, 60), pre=prefills,
       base=st.floats(0.01, 1.0))
def test_run_prices_each_step_chunk_as_one_pass(req, concurrency, extra, pre, base):
    """The closed loop's steps price their chunk (pieces of one prompt or several) as one pass:
    the step-by-step reference with the same chunk cost and saving."""
    ins, outs = req
    budget = concurrency + extra

    def step(b):
        return base * (1 + 0.1 * b)

    def shared(b, c):
        return shared_weight_read(pre, step(b) / 2, step(b) / 4, c)

    got = _run_steps(ins, outs, concurrency, budget, step, pre.chunk_seconds, shared)
    want = _reference(ins, outs, concurrency, budget, step, pre.chunk_seconds, shared)
    assert got[3] == want[3]
    for g, w in zip(got[:3], want[:3]):
        assert g == pytest.approx(w, rel=1e-9, abs=1e-9)


def test_small_budget_prices_every_chunk_a_read():
    """kimi-k2, a 4096-token prompt in 1024-token chunks beside 8 decodes on 8 B200s (vLLM,
    which chunks prompts): the prompt costs four passes, each at least one read of the weights
    (the linear pricing made it one); its chunks then save the decode step's read on top."""
    f = topologies.build(B200_8)
    kw = {"isl": 4096, "osl": 256, "batch": 8, "layout": "tp=8"}
    p = analysis.serving_point("kimi-k2", f, max_batched_tokens=1024 + 7, engine="vllm", **kw)
    pre = analysis.prefill_time("kimi-k2", f, isl=4096, layout="tp=8", one_at_a_time=True,
                                collective=analysis.engine_collective("vllm", f.chip))
    assert p.prefill_time == pytest.approx(4 * pre.chunk_seconds(1024), rel=1e-12)
    assert p.prefill_time > pre.total
    assert 4 * pre.chunk_seconds(1024) >= 4 * pre.weights
    big = analysis.serving_point("kimi-k2", f, engine="vllm", max_batched_tokens=8192,
                                 **kw)                          # 8192: one chunk
    assert big.prefill_time == pytest.approx(pre.total, rel=1e-12)
    assert p.shared_read > 0


@pytest.mark.parametrize("field,value,match", [
    ("expert_weights", 2.0, "cannot exceed"), ("expert_weights", -1.0, "expert_weights"),
    ("expert_weights", float("nan"), "expert_weights"), ("experts", 2, "experts_per_token"),
    ("experts_per_token", 1.5, "integers")])
def test_bad_hand_built_prefill_is_named(field, value, match):
    kw = {"isl": 10, "flops": 0.0, "compute": 1.0, "weights": 1.0, "comm": 0.0, "total": 1.0,
          "expert_weights": 0.5, "experts": 8, "experts_per_token": 4, field: value}
    with pytest.raises(SpecError, match=match):
        shared_weight_read(PrefillTime(**kw), 0.1, 0.1, 5)


@pytest.mark.parametrize("tokens, error", [
    (-1, SpecError), (-5, SpecError), (float("nan"), TypeError), (1.5, TypeError),
    (True, TypeError), (None, TypeError), ("3", TypeError)])
def test_bad_token_count_is_named(tokens, error):
    """A pass of a negative, fractional, nan, bool or non-number token count is refused by
    name (review S11-R4: read(-5) gave negative seconds, nan gave nan); a count of the wrong
    kind is a TypeError, a negative one a SpecError (session 31)."""
    p = PrefillTime(isl=100, flops=0.0, compute=0.1, weights=0.04, comm=0.01, total=0.11,
                    expert_weights=0.03, experts=4, experts_per_token=2)
    for method in (p.read, p.chunk_seconds):
        with pytest.raises(error, match="tokens must be an integer >= 0"):
            method(tokens)
    assert p.chunk_seconds(0) == pytest.approx(p.read(0))


def test_more_experts_per_token_than_experts_is_refused():
    """k > E would read more than every weight (review S11-R4: read(1) 0.07 s of 0.04)."""
    p = PrefillTime(isl=100, flops=0.0, compute=0.1, weights=0.04, comm=0.0, total=0.1,
                    expert_weights=0.03, experts=4, experts_per_token=8)
    with pytest.raises(SpecError, match="experts_per_token"):
        p.read(1)


@pytest.mark.parametrize("bad", [1.5, -1, 0, float("nan"), "0.5", True])
def test_prefill_gemm_efficiency_refuses_a_bad_efficiency(bad):
    """A given efficiency is checked as prefill_time checks its own (review S11-R2)."""
    from fabric import chip_spec
    with pytest.raises(SpecError if is_real(bad) else TypeError, match="efficiency must be in"):
        analysis.prefill_gemm_efficiency(chip_spec("h200"), "fp8", "experts", bad)


def test_prefill_gemm_efficiency_takes_a_chip_name():
    """A chip name reads as its ChipSpec; anything else is refused by name (was an
    AttributeError)."""
    from fabric import chip_spec
    assert analysis.prefill_gemm_efficiency("h200", "fp8", "experts") == \
        analysis.prefill_gemm_efficiency(chip_spec("h200"), "fp8", "experts")
    # a wrong kind is a TypeError (STYLE's rule; a SpecError before session 34)
    with pytest.raises(TypeError, match=r"chip must be .*, got 3 \(an int\)"):
        analysis.prefill_gemm_efficiency(3, "fp8", "experts")
