"""A pass without a CUDA graph (session 11): kernel launches are asynchronous (CUDA
Programming Guide sec. 2.3), so the host issues kernels while earlier ones run:
analysis.eager_pass_seconds; every prompt pass (PrefillTime.chunk_seconds) adds what its own
launches leave exposed (PrefillTime.exposed_launch)."""

import math

import pytest
from degrade import built
from hypothesis import given, settings
from hypothesis import strategies as st

import analysis
from analysis import PrefillTime, eager_pass_seconds
from analysis._serving import _eager_makespan
from fabric import SpecError
from fabric._units import is_real

B200_8 = "switch:8,planes=2,links=9,tech=nvlink5,chip=b200"
secs = st.floats(0.0, 1e-3)


def _simulate(kernels, launch):
    """Event by event: the host spends ``launch`` on each launch, in order, never waiting;
    the GPU starts a kernel once it is issued and the previous one has ended."""
    host = gpu = 0.0
    for d in kernels:
        host += launch
        gpu = max(gpu, host) + d
    return gpu


@settings(max_examples=200, deadline=None)
@given(kernels=st.lists(secs, min_size=1, max_size=12), launch=st.floats(0.0, 1e-4),
       repeat=st.integers(1, 7))
def test_eager_pass_is_the_event_simulation(kernels, launch, repeat):
    got = eager_pass_seconds(kernels, launch=launch, repeat=repeat)
    want = _simulate(kernels * repeat, launch)
    assert got == pytest.approx(want, rel=1e-9, abs=1e-15)
    n, d = len(kernels) * repeat, sum(kernels) * repeat
    # between the host's launches or the GPU's work, whichever is longer, and the serial
    # charge decode_step(cuda_graphs=False) makes (the host never runs ahead)
    assert max(n * launch, d + launch) - 1e-12 <= got <= n * launch + d + 1e-12


@settings(max_examples=100, deadline=None)
@given(segments=st.lists(st.tuples(st.lists(secs, min_size=1, max_size=6), st.integers(1, 5)),
                         min_size=1, max_size=4), launch=st.floats(0.0, 1e-4))
def test_segments_are_the_concatenated_pass(segments, launch):
    flat = [d for ks, r in segments for _ in range(r) for d in ks]
    assert _eager_makespan(segments, launch) == pytest.approx(_simulate(flat, launch),
                                                              rel=1e-9, abs=1e-15)


def test_prompt_pass_hides_its_launches_but_a_tiny_one_pays_them():
    f = built(B200_8)
    m = analysis.model_config("kimi-k2")
    per_layer = len(analysis.KERNELS["mla"]) + len(analysis.KERNELS["moe_ffn"])
    dense = len(analysis.KERNELS["mla"]) + len(analysis.KERNELS["dense_ffn"])
    n = m.moe_layers * per_layer + m.dense_layers * dense + len(analysis.KERNELS["head"])
    h = analysis.LAUNCH_OVERHEAD.value
    g = analysis.GRAPH_KERNEL_OVERHEAD.value
    long = analysis.prefill_time(m, f, isl=8192, layout="tp=8")
    device = max(long.compute, long.read(8192)) + long.comm
    # tp=8: the experts whole on 8 ranks, so each MoE layer runs the collective exchange's
    # dispatch and combine, whose GPU-side start their NCCL cost holds (decode's rule,
    # analysis._decode._held_starts): no boundary of their own, their host launch stays
    held = 2 * m.moe_layers
    assert sum(sum(hs) * r for hs, (_, r) in zip(long.held_layers, long.launch_layers)) == held
    # an 8k-token pass runs ~1 ms per layer against ~25 x 4 us of launches: only the
    # launches before its first heavy kernel (attn_norm, q_a_proj: the second) are exposed,
    # plus every kernel's GPU-side boundary after the first (the first hides before the
    # second's launch) but the held ones, at least what a replayed graph of them pays
    assert long.kernels() == n and long.boundary == g
    assert long.total - device == pytest.approx(2 * h + (n - 1 - held) * g, rel=1e-9)
    assert long.total >= device + (n - held) * g - g
    one = analysis.prefill_time(m, f, isl=1, layout="tp=8")
    device = max(one.compute, one.read(1)) + one.comm
    assert device < n * h                          # launch-bound: every launch shows
    assert one.total == pytest.approx(_simulate_pass(one, device), rel=1e-9)
    assert n * h <= one.total <= n * h + device
    # no launch cost asked: the roofline and communication alone
    none = analysis.prefill_time(m, f, isl=1, layout="tp=8", launch_overhead=0.0,
                                 graph_kernel_overhead=0.0)
    assert none.total == pytest.approx(device, rel=1e-12)
    # no host launch but the GPU-side boundaries: a replayed graph's price
    graph = analysis.prefill_time(m, f, isl=1, layout="tp=8", launch_overhead=0.0)
    assert graph.total == pytest.approx(device + (n - held) * g, rel=1e-9)


def _simulate_pass(p, device):
    """The pass's kernels in stream order, its device time spread evenly over the heavy ones,
    by event simulation."""
    heavy = sum(sum(fl) * r for fl, r in p.launch_layers)
    held = p.held_layers or [[False] * len(fl) for fl, _ in p.launch_layers]
    flat = [(device / heavy if f else 0.0) + (0.0 if h else p.boundary)
            for (fl, r), hs in zip(p.launch_layers, held) for _ in range(r)
            for f, h in zip(fl, hs)]
    return _simulate(flat, p.launch)


@settings(max_examples=60, deadline=None)
@given(isl=st.integers(1, 9000), frac=st.floats(0.0, 1.5),
       model=st.sampled_from(["kimi-k2", "deepseek-v3", "deepseek-r1-nvfp4"]))
def test_every_chunk_pays_its_own_exposed_launch(isl, frac, model):
    f = built(B200_8)
    p = analysis.prefill_time(model, f, isl=isl, layout="tp=8")
    c = max(1, round(frac * isl))
    # the chunk's collectives: PrefillTime.chunk_comm (session 12: each pays its latency)
    device = max(c * p.compute / p.isl, p.read(c)) + p.chunk_comm(c)
    assert p.chunk_seconds(c) == pytest.approx(_simulate_pass(p, device), rel=1e-9)
    assert p.chunk_seconds(c) >= device


@pytest.mark.parametrize("kw,match", [
    ({"kernel_seconds": [1.0, -1.0]}, "kernel_seconds"),
    ({"kernel_seconds": [math.nan]}, "kernel_seconds"),
    ({"kernel_seconds": "abc"}, "kernel_seconds"),
    ({"kernel_seconds": [1.0], "launch": -1e-6}, "launch"),
    ({"kernel_seconds": [1.0], "launch": math.inf}, "launch"),
    ({"kernel_seconds": [1.0], "repeat": 0}, "repeat"),
    ({"kernel_seconds": [1.0], "repeat": 1.5}, "repeat"),
])
def test_bad_eager_inputs_are_named(kw, match):
    # a count of the wrong kind (repeat=1.5) is a TypeError (session 31), as is a string for
    # the kernel times (session 34)
    error = TypeError if kw.get("repeat") == 1.5 or kw["kernel_seconds"] == "abc" else SpecError
    with pytest.raises(error, match=match):
        eager_pass_seconds(**kw)


@pytest.mark.parametrize("name", ["launch_overhead", "graph_kernel_overhead"])
@pytest.mark.parametrize("bad", [-1e-6, math.nan, math.inf, True, "4us"])
def test_bad_launch_overhead_is_named(bad, name):
    f = built(B200_8)
    with pytest.raises(SpecError if is_real(bad) else TypeError, match=name):   # a wrong kind: TypeError (s32)
        analysis.prefill_time("kimi-k2", f, isl=16, layout="tp=8", **{name: bad})


def test_hand_built_prefill_prices_no_launch():
    p = PrefillTime(isl=10, flops=0.0, compute=1.0, weights=0.5, comm=0.1, total=1.1)
    assert p.exposed_launch(0.0) == 0.0 and p.chunk_seconds(10) == pytest.approx(1.1)


@settings(max_examples=60, deadline=None)
@given(isl=st.integers(1, 9000), frac=st.floats(0.0, 1.5), w_b=st.floats(1e-4, 0.05),
       c_b=st.floats(1e-5, 0.05), l_b=st.floats(0.0, 0.01))
def test_merged_pass_pays_one_set_of_boundaries(isl, frac, w_b, c_b, l_b):
    """A mixed step shares the cheaper part's kernel boundaries on top of the weight read,
    and stays no cheaper than either part alone (decode priced as read + boundaries)."""
    f = built(B200_8)
    p = analysis.prefill_time("deepseek-v3", f, isl=isl, layout="tp=8")
    c = max(1, round(frac * isl))
    plain = analysis.shared_weight_read(p, w_b, c_b, c)
    s = analysis.shared_weight_read(p, w_b, c_b, c, l_b)
    # the chunk's boundaries: every kernel's but the exchange's dispatch and combine, whose
    # start their NCCL cost holds (58 MoE layers, experts whole on the 8 ranks)
    assert p.boundaries() == pytest.approx((p.kernels() - 2 * 58) * p.boundary, rel=1e-12)
    assert s == pytest.approx(plain + min(l_b, p.boundaries()), rel=1e-12)
    decode = max(w_b, c_b) + l_b
    assert decode + p.chunk_seconds(c) - s >= max(decode, p.chunk_seconds(c)) - 1e-12


@pytest.mark.parametrize("layout,exchange", [("tp=8", True), ("tp=1,dp=8", True),
                                             ("tp=8,dp=1,etp=8", False),
                                             ("tp=8,dp=1,etp=2", False)])
def test_a_prompt_pass_launches_the_exchange_only_where_tokens_cross_ranks(layout, exchange):
    # decode's rule (Layout.exchanges): a MoE layer runs the exchange's dispatch and combine
    # only with whole experts on ep > 1 ranks; with the experts split (etp > 1: vLLM's plain
    # TP, TensorRT-LLM's mixed layout) every chip has every token and no engine launches them.
    # The eager prompt pass listed them always (session 16: two launches and two boundaries a
    # MoE layer that no kernel runs)
    import dataclasses

    import analysis._serving as S

    f = built(B200_8)
    m = analysis.model_config("deepseek-v3")
    lay = analysis.parse_layout(layout, 8)
    assert lay.exchanges == exchange
    att, ffn = len(analysis.KERNELS["mla"]), len(analysis.KERNELS["moe_ffn"])
    per_moe = att + ffn - (0 if exchange else 2)
    n = (m.moe_layers * per_moe + m.dense_layers * (att + len(analysis.KERNELS["dense_ffn"]))
         + len(analysis.KERNELS["head"]))
    p = analysis.prefill_time(m, f, isl=8192, layout=layout)
    assert p.kernels() == n
    # the same count as decode's eager step (one kernel per operator, the exchange's two
    # kernels where it runs)
    step = analysis.decode_step(m, f, batch=8, context=1000, layout=layout, cuda_graphs=False)
    assert step.layers[-1].kernels == per_moe
    if not exchange:
        # against the list with the two phantom kernels (host launches hidden behind the 8k
        # pass's long kernels: their two boundaries a MoE layer)
        every = dataclasses.replace(p, launch_layers=S._pass_kernels(m, analysis.parse_layout(
            "tp=8", 8)), held_layers=())
        g = analysis.GRAPH_KERNEL_OVERHEAD.value
        assert every.chunk_seconds(8192) - p.total == pytest.approx(
            2 * m.moe_layers * g / p.prompts, rel=1e-6)
