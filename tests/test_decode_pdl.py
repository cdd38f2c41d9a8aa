"""Programmatic Dependent Launch in a replayed decode graph (``decode_step(pdl=True)``).

With PDL each kernel boundary of the replayed graph loses the dispatch gap PDL overlaps with
the preceding kernel (:data:`analysis.PDL_HIDDEN_GAP`); nothing else of the step changes. The
reference here counts the step's kernels independently (``LayerTime.kernels`` of every layer
plus the head's kernels) and takes the gap off each.
"""

import pytest
from degrade import built
from hypothesis import given, settings
from hypothesis import strategies as st

import analysis
import topologies
from analysis import _decode as D
from fabric import SpecError

GAP = analysis.PDL_HIDDEN_GAP.value


@pytest.fixture(scope="module")
def b200():
    return topologies.build("hgx-b200")


def _head_kernels(draft):
    return len(D.KERNELS["head"]) + (len(D.MTP_KERNELS) if draft else 0)


def test_the_gap_is_the_dispatch_gap_of_the_boundary():
    # the boundary = dispatch gap + empty kernel (Megatron-LM PR #6453: 0.55 + 0.72 us)
    assert GAP == pytest.approx(0.55e-6)
    assert analysis.GRAPH_KERNEL_OVERHEAD.value - GAP >= analysis.EMPTY_KERNEL_TIME.value
    assert "6453" in analysis.PDL_HIDDEN_GAP.source


@settings(max_examples=20, deadline=None)
@given(model=st.sampled_from(["deepseek-r1-nvfp4", "deepseek-r1", "kimi-k2"]),
       layout=st.sampled_from(["tp=8,dp=1,etp=2", "tp=8,dp=1,etp=8", "tp=4,dp=2",
                               "tp=8,dp=1,etp=4"]),
       batch=st.integers(1, 16), q=st.integers(1, 4),
       engine=st.sampled_from(["trtllm", "vllm", "sglang"]), draft=st.booleans(),
       failed=st.sampled_from([None, "chip3"]))
def test_each_kernel_boundary_loses_the_gap(model, layout, batch, q, engine, draft, failed):
    f = built("switch:9,chip=b200")       # a spare chip: a failed one is replaced
    if failed:
        f = f.without(chips=[failed])
    kw = {"batch": batch, "context": 1024, "layout": layout, "tokens_per_sequence": q,
          "engine": engine, "draft": draft and model != "kimi-k2", "runtime": "symmetric-memory"}
    off = analysis.decode_step(model, f, **kw)
    on = analysis.decode_step(model, f, pdl=True, **kw)
    kernels = sum(layer.kernels for layer in off.layers) + _head_kernels(kw["draft"])
    # the boundaries charged: every kernel's but those whose start the priced collective
    # already holds (analysis._decode._held_starts; tests/test_decode_exchange_starts.py)
    charged = off.breakdown.launch / analysis.GRAPH_KERNEL_OVERHEAD.value
    assert charged == pytest.approx(round(charged), abs=1e-6) and 0 < round(charged) <= kernels
    charged = round(charged)
    assert on.time == pytest.approx(off.time - charged * GAP, rel=1e-12, abs=1e-15)
    assert on.breakdown.launch == pytest.approx(off.breakdown.launch - charged * GAP,
                                                rel=1e-12, abs=1e-15)
    # nothing but the boundaries moves
    for part in ("attention", "ffn", "head", "exposed_comm", "kernel_floor", "weights"):
        assert getattr(on.breakdown, part) == pytest.approx(getattr(off.breakdown, part),
                                                            rel=1e-12, abs=1e-15)
    assert analysis.PDL_HIDDEN_GAP in on.parameters
    assert analysis.PDL_HIDDEN_GAP not in off.parameters


def test_pdl_is_the_shorter_boundary_under_two_batch_overlap_too():
    f = topologies.build("rail:servers=2,gpus=8,chip=h100")
    kw = {"batch": 256, "context": 2000, "layout": "tp=1,dp=16",
          "ep_kernel": "deepep-low-latency", "overlap": "two-batch", "engine": "sglang"}
    on = analysis.decode_step("deepseek-v3", f, pdl=True, **kw)
    short = analysis.decode_step("deepseek-v3", f,
                                 graph_kernel_overhead=analysis.GRAPH_KERNEL_OVERHEAD.value - GAP,
                                 **kw)
    off = analysis.decode_step("deepseek-v3", f, **kw)
    assert on.time == pytest.approx(short.time, rel=1e-12)
    assert on.time < off.time


def test_serving_passes_pdl_to_every_step(b200):
    kw = {"isl": 1024, "osl": 2048, "batch": 1, "layout": "tp=8,dp=1,etp=2", "engine": "trtllm",
          "runtime": "symmetric-memory", "draft_length": 3, "acceptance": 0.7}
    off = analysis.serving_point("deepseek-r1-nvfp4", b200, **kw)
    on = analysis.serving_point("deepseek-r1-nvfp4", b200, pdl=True, **kw)
    assert on.tokens_per_s_user > off.tokens_per_s_user


def test_bad_pdl_inputs_are_named(b200):
    kw = {"batch": 1, "context": 10, "layout": "tp=8"}
    with pytest.raises(TypeError, match="pdl must be True or False"):
        analysis.decode_step("deepseek-r1", b200, pdl="yes", **kw)
    with pytest.raises(SpecError, match="cuda_graphs=False"):
        analysis.decode_step("deepseek-r1", b200, pdl=True, cuda_graphs=False, **kw)
    with pytest.raises(SpecError, match="graph_kernel_overhead"):
        analysis.decode_step("deepseek-r1", b200, pdl=True, graph_kernel_overhead=0.5e-6, **kw)
