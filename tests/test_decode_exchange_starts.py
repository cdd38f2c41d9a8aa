"""A replayed decode step charges an MoE exchange phase's kernels the boundaries a stand-alone
:func:`analysis.moe_exchange` charges them, not one more: the phase's fixed part opens with its
handshake (the ``symmetric-memory`` kernel floor in one load/store domain, NCCL's LL step
across the network), which already holds its first kernel's start
(:func:`analysis._decode._held_exchange_starts`). The reference counts the boundaries without
that helper: every kernel of the layer its boundary, the exchange's own kernels replaced by the
gaps ``moe_exchange`` puts between them at the step's per-kernel boundary (``n - 1`` per
phase), the two-batch receive launches one each; nothing else of the step moves."""

from unittest import mock

import pytest
from degrade import degrade
from hypothesis import assume, event, given, settings
from hypothesis import strategies as st

import analysis
import topologies
from analysis import _decode as D
from fabric import RoutingError, SpecError, exchange_kernel

BOUNDARY = analysis.GRAPH_KERNEL_OVERHEAD.value
GAP = analysis.PDL_HIDDEN_GAP.value


def _double_counted():
    """The step as it was before the correction: every exchange kernel its own boundary."""
    return mock.patch.object(D, "_held_exchange_starts", lambda s: 0)


def test_one_sided_moe_layer_by_hand():
    """deepseek-r1-nvfp4 on 8 B200s, tp=1,dp=8, TensorRT-LLM's one-sided exchange (dispatch 3
    kernels, combine 2): a MoE layer is 26 kernels, of which 24 pay a 1.3 us boundary (the
    dispatch's and the combine's first kernels start inside their kernel floors): 31.2 us, not
    33.8 us; the dense layers (15 kernels) keep 19.5 us; the step is 58 x 2.6 us faster."""
    f = topologies.build("hgx-b200")
    kw = {"batch": 64, "context": 2048, "layout": "tp=1,dp=8", "ep_kernel": "one-sided"}
    step = analysis.decode_step("deepseek-r1-nvfp4", f, **kw)
    moe = [x for x in step.layers if x.kind == "moe"]
    dense = [x for x in step.layers if x.kind == "dense"]
    assert (len(moe), len(dense)) == (58, 3)
    assert exchange_kernel("one-sided").kernels == (3, 2)
    for x in moe:
        assert x.kernels == 26
        assert x.launch == pytest.approx(24 * 1.3e-6, rel=1e-12)
    for x in dense:
        assert x.kernels == 15
        assert x.launch == pytest.approx(15 * 1.3e-6, rel=1e-12)
    with _double_counted():
        old = analysis.decode_step("deepseek-r1-nvfp4", f, **kw)
    assert old.time - step.time == pytest.approx(58 * 2 * 1.3e-6, rel=1e-9)


def test_exchange_boundaries_equal_moe_exchange_gaps():
    """The boundaries the step charges for the exchange's kernels are the gaps a stand-alone
    moe_exchange charges at the same per-kernel boundary: one-sided's (3 - 1) + (2 - 1)."""
    f = topologies.build("hgx-b200")
    kw = {"batch": 64, "context": 2048, "layout": "tp=1,dp=8"}
    step = analysis.decode_step("deepseek-r1-nvfp4", f, ep_kernel="one-sided", **kw)
    ex = analysis.moe_exchange(f, "deepseek-r1-nvfp4", 8, 8, kernel="one-sided",
                               dispatch_bytes=1, combine_bytes=2)
    gaps = ex.dispatch_phase.kernel_gaps + ex.combine_phase.kernel_gaps
    assert gaps == pytest.approx(3 * BOUNDARY)
    moe = next(x for x in step.layers if x.kind == "moe")
    others = moe.kernels - sum(exchange_kernel("one-sided").kernels)
    assert moe.launch == pytest.approx(others * BOUNDARY + gaps, rel=1e-12)


def test_eager_and_collective_steps_unchanged():
    """No handshake holds a start there: an eager step (a host launch per kernel), the
    collectives model's exchange (ep_kernel None or 'all-to-allv'), and a layer with no
    exchange (experts split over the TP ranks)."""
    f = topologies.build("hgx-b200")
    cases = [({"layout": "tp=1,dp=8", "ep_kernel": "one-sided", "cuda_graphs": False}),
             ({"layout": "tp=1,dp=8"}),
             ({"layout": "tp=1,dp=8", "ep_kernel": "all-to-allv"}),
             ({"layout": "tp=8,dp=1,etp=2", "ep_kernel": "one-sided"})]
    for kw in cases:
        new = analysis.decode_step("deepseek-r1-nvfp4", f, batch=16, context=1024, **kw)
        with _double_counted():
            old = analysis.decode_step("deepseek-r1-nvfp4", f, batch=16, context=1024, **kw)
        assert new == old, kw


@settings(max_examples=40, deadline=None)
@given(model=st.sampled_from(["deepseek-r1", "deepseek-r1-nvfp4", "kimi-k2", "glm-5"]),
       system=st.sampled_from(["hgx-b200", "hgx-h200", "switch:9,chip=h200",
                               "rail:servers=2,gpus=8,chip=h200"]),
       layout=st.sampled_from(["tp=1,dp=8", "tp=2,dp=4", "tp=8,dp=1", "tp=8,dp=1,etp=2"]),
       kernel=st.sampled_from([None, "all-to-allv", "one-sided", "deepep-low-latency",
                               "deepep-normal", "pplx"]),
       graphs=st.booleans(), pdl=st.booleans(), two_batch=st.booleans(),
       fusion=st.sampled_from([1.0, 2.0]), batch=st.integers(1, 256),
       context=st.integers(1, 8192), data=st.data())
def test_boundaries_match_the_exchange_models_gaps(model, system, layout, kernel, graphs, pdl,
                                                   two_batch, fusion, batch, context, data):
    f = data.draw(degrade(topologies.build(system), max_links=2, max_chips=1))
    kw = {"batch": batch, "context": context, "layout": layout, "ep_kernel": kernel,
          "cuda_graphs": graphs, "pdl": pdl and graphs, "fusion_factor": fusion}
    if two_batch and kernel not in (None, "all-to-allv"):   # refused for the collective
        kw["overlap"] = "two-batch"
    try:
        new = analysis.decode_step(model, f, **kw)
    except (SpecError, RoutingError):           # not a valid deployment: nothing to compare
        assume(False)
    with _double_counted():
        old = analysis.decode_step(model, f, **kw)
    lay = new.layout
    per_kernel = (BOUNDARY - (GAP if kw["pdl"] else 0.0)) if graphs else \
        analysis.LAUNCH_OVERHEAD.value
    kern = exchange_kernel(kernel) if kernel is not None else None
    held = 0
    if graphs and kern is not None and kern.dedup != "collective" and lay.ep > 1 \
            and lay.etp == 1:
        # brute force: moe_exchange's own gaps, n - 1 per phase of n kernels, each phase
        # opening with a handshake
        assert all(n > 0 for n in kern.syncs)
        held = sum(1 for n in kern.kernels if n > 0)
    event(f"held starts per MoE layer: {held}")
    for a, b in zip(new.layers, old.layers, strict=True):
        assert a.kernels == b.kernels
        if a.kind == "moe":
            assert a.launch == pytest.approx((a.kernels - held) * per_kernel / fusion,
                                             rel=1e-12, abs=1e-18)
        else:
            assert a.launch == b.launch
        assert (a.attention, a.ffn, a.comm, a.exposed_comm) == (b.attention, b.ffn, b.comm,
                                                                 b.exposed_comm)
    moe_layers = sum(x.kind == "moe" for x in new.layers)
    assert old.time - new.time == pytest.approx(moe_layers * held * per_kernel / fusion,
                                                rel=1e-9, abs=1e-15)
