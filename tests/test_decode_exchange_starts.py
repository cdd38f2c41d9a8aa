"""A replayed decode step charges no boundary to a kernel whose GPU-side start its priced work
already holds (:func:`analysis._decode._held_starts`, one rule): an MoE exchange phase's first
kernel (its handshake, the ``symmetric-memory`` kernel floor in one load/store domain or NCCL's
LL step across the network, holds it: a stand-alone :func:`analysis.moe_exchange` charges
``n - 1`` gaps per phase of ``n`` kernels), the collective exchange's kernels and TensorRT-LLM's
fused all-reduce kernels when the collectives model prices them under a runtime whose cost
holds the start (NCCL's base latency, the symmetric-memory kernel floor; not ``"ideal"``).
The references count the boundaries without that helper: every kernel of the layer its
boundary, less the starts counted here from the exchange kernel's phases and the engine's kernel
lists; nothing else of the step moves (the fused kernels' norm floors stay)."""

import contextlib
import math
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
FUSED = ("allreduce_add_rmsnorm_quant", "allreduce_add_rmsnorm", "reduce_allreduce_add_rmsnorm")


def _double_counted():
    """The step as it was before the correction: every kernel its own boundary."""
    return mock.patch.object(D, "_held_starts", lambda s, kind: 0)


#: TensorRT-LLM's measured MLA generation op on B200 (session 21, tests/test_decode_mla_measured.py)
#: holds its two kernels' starts in every layer of these B200 steps (128 heads a GPU at tp=1,
#: BF16 KV, engine trtllm in a graph; four on H200 with FlashMLA's metadata and combine):
#: counted apart from the exchange's and all-reduce's.
MLA_OP = 2


def _mla_op_held(model, f, lay, graphs, engine, batch, context):
    """Brute force: the starts TensorRT-LLM's measured MLA generation op holds in one layer
    (its two kernels), from the model's MLA shape, the layout and the measurement's grid."""
    m = analysis.model_config(model)
    att = m.attention
    if not graphs or engine != "trtllm" or att.kind != "mla" or att.sparse:
        return 0
    t = analysis.mla_generation_time(f.chip.name, att.heads / lay.tp, att.kv_lora_rank,
                                     att.qk_rope_head_dim, m.kv_cache_bytes,
                                     math.ceil(batch / lay.dp), context)
    # the op's kernels in the engine's list: 2 on Blackwell, 4 with FlashMLA's metadata and
    # combine on Hopper
    lists = analysis.step_kernel_lists(model, f.chip, engine=engine, tp=lay.tp)
    return 0 if t is None else sum(n in analysis.TRTLLM_MLA_GENERATION_KERNELS
                                   for n in lists["mla"])


def _gemm_held(model, f, lay, graphs, engine, batch):
    """Brute force: the starts TensorRT-LLM's measured attention GEMMs hold in one layer
    (session 22, tests/test_decode_gemm_measured.py): each of the fused A (above 16 rows a
    rank when BF16), query up-, output projections and the W_UK / W_UV batched GEMMs whose
    shape at the rank's rows the chip's table covers, with the FP8 input quantization right
    before it, from the model's MLA shape, the layout and the public table lookups."""
    m = analysis.model_config(model)
    att = m.attention
    if (not graphs or engine != "trtllm" or att.kind != "mla" or att.sparse
            or not att.q_lora_rank):
        return 0
    rows, heads = math.ceil(batch / lay.dp), att.heads // lay.tp
    fmt, chip = m.part_format("attention"), f.chip.name
    gemms = {"fuse_a_gemm": (att.q_lora_rank + att.kv_lora_rank + att.qk_rope_head_dim,
                             m.hidden),
             "uq_qr_gemm": (heads * (att.qk_nope_head_dim + att.qk_rope_head_dim),
                            att.q_lora_rank),
             "wo_gemm": (m.hidden, heads * att.v_head_dim)}
    covered = {n for n, (nn, k) in gemms.items()
               if not (n == "fuse_a_gemm" and rows <= 16 and fmt == "bf16")
               and analysis.trtllm_gemm_time(chip, fmt, rows, nn, k) is not None}
    covered |= {n for n, op in (("uk_bgemm", "pre"), ("uv_gemm", "post"))
                if analysis.trtllm_mla_bmm_time(chip, fmt, op, heads, rows) is not None}
    names = analysis.step_kernel_lists(model, f.chip, engine=engine, tp=lay.tp)["mla"]
    return sum(n in covered or (n == "fp8_input_quant" and i + 1 < len(names)
                                and names[i + 1] in covered) for i, n in enumerate(names))


def _router_held(model, f, lay, graphs, engine, batch):
    """Brute force: the start TensorRT-LLM's measured router GEMM holds in one MoE layer
    (session 25, tests/test_models_s25_router.py): 1 where the step runs DeepSeek's (256,
    7168) BF16 router at more than 16 rows a rank (the dedicated kernel's counts below), or
    Kimi K2's (384, 7168) at any count (no dedicated kernel for it: session 26,
    tests/test_models_s26_k2_router.py), and the chip's table holds that shape at those
    rows."""
    m = analysis.model_config(model)
    rows = math.ceil(batch / lay.dp)
    shape = (m.routed_experts, m.hidden)
    if (not graphs or engine != "trtllm" or not m.moe_layers
            or shape not in ((256, 7168), (384, 7168))
            or (shape == (256, 7168) and rows <= 16)):
        return 0
    return int(analysis.trtllm_gemm_time(f.chip.name, "bf16", rows, *shape) is not None)


def _module_held(model, f, lay, graphs, engine, tokens, kernel=None):
    """Brute force: the starts TensorRT-LLM's MoE module holds in one MoE layer where the step
    takes its time as measured at the layout (session 24, tests/test_models_s24_moe_module.py):
    the module's kernels of the engine's list (routing, expert maps, strides, permute, the
    grouped GEMMs, their activation and FP8 input quantizations, finalize) when
    :func:`analysis.moe_module_time` holds the step's tokens at its ``etp x ep``, CUTLASS, and
    the rank's MoE sees every token (no exchange, or TensorRT-LLM's attention-DP allgather)."""
    m = analysis.model_config(model)
    if not graphs or engine != "trtllm" or (
            lay.exchanges and not D.trtllm_gathers(m, f.chip, lay, engine, kernel)):
        return 0
    shape = (m.hidden, m.expert_ffn, m.routed_experts, m.experts_per_token)
    if analysis.moe_module_time(f.chip.name, f.chip.gemm_format(m.math_format("experts")),
                                shape, lay.etp, lay.ep, tokens) is None:
        return 0
    names = analysis.step_kernel_lists(model, f.chip, engine=engine, tp=lay.tp,
                                       tokens=math.ceil(tokens / lay.dp))["moe_ffn"]
    module = {"topk", "expert_maps", "expert_strides", "expert_expand", "expert_gemm1",
              "expert_activation", "expert_gemm2", "expert_finalize"}
    return sum(n in module or (n == "fp8_input_quant" and i + 1 < len(names)
                               and names[i + 1] in ("expert_gemm1", "expert_gemm2"))
               for i, n in enumerate(names))


@contextlib.contextmanager
def _no_measured_op():
    """The step without the measured MLA op and attention GEMMs (their kernels then hold no
    start)."""
    with mock.patch.object(D._Settings, "mla_measured", new=property(lambda s: None)), \
            mock.patch.object(D._Settings, "attention_gemm_measured", lambda s, name: None):
        yield


def test_one_sided_moe_layer_by_hand():
    """deepseek-r1-nvfp4 on 8 B200s, tp=1,dp=8, TensorRT-LLM's one-sided exchange (dispatch 3
    kernels, combine 2): a MoE layer is 26 kernels, of which 24 pay a 1.3 us boundary (the
    dispatch's and the combine's first kernels start inside their kernel floors): 31.2 us, not
    33.8 us; the dense layers (15 kernels, no all-reduce at tp=1) keep 19.5 us; the step is
    58 x 2.6 us faster. Since session 21 the measured MLA generation op (MLA_OP) holds two
    more starts in every layer, and since session 22 the measured attention GEMMs four at 8
    rows a rank (query up-, output projections, W_UK, W_UV; the BF16 fused A runs its own
    kernel at <= 16 rows): 18 and 9 boundaries, 61 x 6 x 1.3 us more."""
    f = topologies.build("hgx-b200")
    kw = {"batch": 64, "context": 2048, "layout": "tp=1,dp=8", "ep_kernel": "one-sided"}
    step = analysis.decode_step("deepseek-r1-nvfp4", f, **kw)
    gemms = _gemm_held("deepseek-r1-nvfp4", f, step.layout, True, "trtllm", 64)
    assert gemms == 4
    moe = [x for x in step.layers if x.kind == "moe"]
    dense = [x for x in step.layers if x.kind == "dense"]
    assert (len(moe), len(dense)) == (58, 3)
    assert exchange_kernel("one-sided").kernels == (3, 2)
    for x in moe:
        assert x.kernels == 26
        assert x.launch == pytest.approx((24 - MLA_OP - gemms) * 1.3e-6, rel=1e-12)
    for x in dense:
        assert x.kernels == 15
        assert x.launch == pytest.approx((15 - MLA_OP - gemms) * 1.3e-6, rel=1e-12)
    with _double_counted():
        old = analysis.decode_step("deepseek-r1-nvfp4", f, **kw)
    assert old.time - step.time == pytest.approx((58 * 2 + 61 * (MLA_OP + gemms)) * 1.3e-6,
                                                 rel=1e-9)


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
    others = (moe.kernels - sum(exchange_kernel("one-sided").kernels) - MLA_OP
              - _gemm_held("deepseek-r1-nvfp4", f, step.layout, True, "trtllm", 64))
    assert moe.launch == pytest.approx(others * BOUNDARY + gaps, rel=1e-12)


def test_min_latency_layers_by_hand():
    """The r1-h200 min-latency deployment (deepseek-r1, 8 H200, tp=8 with experts etp=2 x ep=4,
    TensorRT-LLM's one-shot all-reduce: runtime 'symmetric-memory'): each layer's two fused
    all-reduce kernels (the attention output's and the FFN's) start inside the all-reduce's
    kernel floor: a dense layer 15 - 2 boundaries, a MoE layer 18 - 2 (no exchange at etp > 1);
    61 x 2 x 1.3 us = 158.6 us a step, and nothing but the launch moves. (Since session 22 the
    measured FP8 attention GEMMs hold 10 more starts a layer: the five GEMMs at 16 heads a GPU
    and the FP8 input quantization before each; since session 24 the CUTLASS FP8 MoE module at
    its measured time at etp=2 x ep=4 holds its kernels' starts in each MoE layer, and the MLA
    generation op measured at 16 heads a GPU its four.)"""
    f = topologies.build("hgx-h200")
    kw = {"batch": 1, "context": 2048, "layout": "tp=8,dp=1,etp=2", "engine": "trtllm",
          "runtime": "symmetric-memory"}
    step = analysis.decode_step("deepseek-r1", f, **kw)
    gemms = _gemm_held("deepseek-r1", f, step.layout, True, "trtllm", 1)
    assert gemms == 10
    module = _module_held("deepseek-r1", f, step.layout, True, "trtllm", 1)
    # top-k, maps, permute, strides, two FP8 quantizations, two GEMMs, activation, finalize
    # (FP8 block-scaled experts: no min-latency branch)
    assert module == 10
    # and the MLA generation op measured at 16 heads a GPU (session 24): FlashMLA's 4 kernels
    op = _mla_op_held("deepseek-r1", f, step.layout, True, "trtllm", 1, 2048)
    assert op == 4
    with _double_counted():
        old = analysis.decode_step("deepseek-r1", f, **kw)
    for a, b in zip(step.layers, old.layers, strict=True):
        assert a.kernels == b.kernels
        own = module if a.kind == "moe" else 0
        assert b.launch - a.launch == pytest.approx((2 + gemms + op + own) * 1.3e-6, rel=1e-9)
        assert (a.attention, a.ffn, a.exposed_comm, a.kernel_floor) == (
            b.attention, b.ffn, b.exposed_comm, b.kernel_floor)
    assert old.time - step.time == pytest.approx(
        (61 * (2 + gemms + op) + 58 * module) * 1.3e-6, rel=1e-9)
    # the fused kernels keep their norm floor: the norm's chain beyond an empty kernel
    assert step.breakdown.kernel_floor == old.breakdown.kernel_floor > 0


def test_collective_exchange_by_hand():
    """ep_kernel None (the collectives model's all-to-all under NCCL, the r1 max-throughput
    rows' exchange): each MoE layer's dispatch and combine kernels start inside NCCL's base
    latency: 58 x 2 x 1.3 us a step; under runtime 'ideal' (no software cost) nothing moves.
    (Since session 21 the measured MLA generation op on H200 holds its 4 kernels' starts in each
    of the 61 layers under any runtime, counted by _mla_op_held.)"""
    f = topologies.build("hgx-h200")
    kw = {"batch": 256, "context": 2048, "layout": "tp=1,dp=8", "engine": "trtllm"}
    lay = analysis.decode_step("deepseek-r1", f, **kw).layout
    op = _mla_op_held("deepseek-r1", f, lay, True, "trtllm", 256, 2048)
    assert op == 4
    # and the measured FP8 attention GEMMs at 32 rows a rank (session 22): fused A, output
    # projection, W_UK, W_UV with their input quantizations (the query up-projection's 24576
    # outputs are beyond the H200 table's widest, 16384)
    gemms = _gemm_held("deepseek-r1", f, lay, True, "trtllm", 256)
    assert gemms == 8
    op += gemms
    # and the CUTLASS FP8 MoE module at its measured time at EP8 and 256 gathered tokens
    # (session 24), under any runtime
    module = _module_held("deepseek-r1", f, lay, True, "trtllm", 256)
    assert module == 10
    # and the router GEMM at its measured Linear time at 32 rows a rank (session 25)
    router = _router_held("deepseek-r1", f, lay, True, "trtllm", 256)
    assert router == 1
    module += router
    for runtime, moved in ((None, 58 * 2 * 1.3e-6), ("nccl", 58 * 2 * 1.3e-6), ("ideal", 0.0)):
        moved += (61 * op + 58 * module) * 1.3e-6
        step = analysis.decode_step("deepseek-r1", f, runtime=runtime, **kw)
        with _double_counted():
            old = analysis.decode_step("deepseek-r1", f, runtime=runtime, **kw)
        assert old.time - step.time == pytest.approx(moved, rel=1e-9, abs=1e-15), runtime


def test_eager_and_ideal_steps_unchanged():
    """No priced work holds a kernel's start there: an eager step (a host launch per kernel)
    and the 'ideal' runtime (no software cost). (The measured MLA generation op's and attention
    GEMMs' own kernels are taken out: they hold their starts under any runtime,
    tests/test_decode_mla_measured.py, tests/test_decode_gemm_measured.py.)"""
    f = topologies.build("hgx-b200")
    cases = [{"layout": "tp=1,dp=8", "ep_kernel": "one-sided", "cuda_graphs": False},
             {"layout": "tp=8,dp=1,etp=2", "cuda_graphs": False},
             {"layout": "tp=8,dp=1,etp=2", "runtime": "ideal"},
             {"layout": "tp=1,dp=8", "runtime": "ideal"},
             {"layout": "tp=1,dp=8", "ep_kernel": "all-to-allv", "runtime": "ideal"}]
    for kw in cases:
        with _no_measured_op():
            new = analysis.decode_step("deepseek-r1-nvfp4", f, batch=16, context=1024, **kw)
            with _double_counted():
                old = analysis.decode_step("deepseek-r1-nvfp4", f, batch=16, context=1024, **kw)
        assert new.time == old.time and new.layers == old.layers, kw


def test_a_callers_collective_keeps_every_boundary():
    """A collective function of the caller's is not known to hold a kernel's start: the step
    charges every kernel its boundary, as before the correction (here one wrapping
    analysis.cost: the step is the default's plus the held starts' boundaries, counted by
    hand: a tp=8 MoE layer's attention all-reduce kernel, a dense layer's two)."""
    f = topologies.build("hgx-b200")

    def own(fabric, op, nbytes, **kw):
        return analysis.cost(fabric, op, nbytes, **kw)

    kw = {"batch": 16, "context": 1024, "layout": "tp=8,dp=1,etp=8"}
    with _no_measured_op():     # measured kernels hold their starts whatever the collective
        mine = analysis.decode_step("deepseek-r1-nvfp4", f, collective=own, **kw)
        with _double_counted():
            assert analysis.decode_step("deepseek-r1-nvfp4", f, collective=own, **kw) == mine
        # analysis.cost's runtime asked: on B200 engine='trtllm' takes TensorRT-LLM's measured
        # all-reduce op by default (analysis.trtllm_all_reduce, session 36)
        default = analysis.decode_step("deepseek-r1-nvfp4", f, runtime="nccl", **kw)
    # etp = 8: the MoE output's all-reduce too, so every layer holds two starts
    assert mine.time - default.time == pytest.approx(61 * 2 * 1.3e-6, rel=1e-9)


def _expected_held(model, f, lay, kind, kernel, graphs, runtime, engine):
    """Brute force: the starts one layer of ``kind`` holds, counted from the layout, the
    exchange kernel's phases and the engine's kernel lists."""
    if not graphs:
        return 0
    # nccl (the default) and symmetric-memory hold it, and so does vLLM's dispatch (the vllm
    # engine's collective on these Hopper and Blackwell chips when no runtime is asked)
    starts_held = runtime != "ideal"
    lists = analysis.step_kernel_lists(model, f.chip, engine=engine, tp=lay.tp)
    att = sum(n in FUSED for n in lists["mla"])
    held = att if starts_held and lay.tp > 1 else 0
    if kind == "dense":
        return held + (sum(n in FUSED for n in lists["dense_ffn"])
                       if starts_held and lay.tp > 1 else 0)
    if starts_held and lay.etp > 1:
        held += sum(n in FUSED for n in lists["moe_ffn"])
    if lay.ep > 1 and lay.etp == 1:
        kern = exchange_kernel(kernel) if kernel is not None else None
        if kern is not None and kern.dedup != "collective":
            assert all(n > 0 for n in kern.syncs)   # each phase opens with a handshake
            held += sum(1 for n in kern.kernels if n > 0)
        elif starts_held:
            held += 2
    return held


@settings(max_examples=40, deadline=None)
@given(model=st.sampled_from(["deepseek-r1", "deepseek-r1-nvfp4", "kimi-k2", "glm-5"]),
       system=st.sampled_from(["hgx-b200", "hgx-h200", "switch:9,chip=h200",
                               "rail:servers=2,gpus=8,chip=h200"]),
       layout=st.sampled_from(["tp=1,dp=8", "tp=2,dp=4", "tp=8,dp=1", "tp=8,dp=1,etp=2",
                               "tp=8,dp=1,etp=8"]),
       kernel=st.sampled_from([None, "all-to-allv", "one-sided", "deepep-low-latency",
                               "deepep-normal", "pplx"]),
       runtime=st.sampled_from([None, "nccl", "symmetric-memory", "ideal"]),
       engine=st.sampled_from(["trtllm", "trtllm", "vllm", "sglang"]),
       graphs=st.booleans(), pdl=st.booleans(), two_batch=st.booleans(),
       fusion=st.sampled_from([1.0, 2.0]), batch=st.integers(1, 256),
       context=st.integers(1, 8192), data=st.data())
def test_boundaries_match_the_held_starts(model, system, layout, kernel, runtime, engine, graphs,
                                          pdl, two_batch, fusion, batch, context, data):
    f = data.draw(degrade(topologies.build(system), max_links=2, max_chips=1))
    kw = {"batch": batch, "context": context, "layout": layout, "ep_kernel": kernel,
          "cuda_graphs": graphs, "pdl": pdl and graphs, "fusion_factor": fusion,
          "runtime": runtime, "engine": engine}
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
    total = 0.0
    # batch <= 256 keeps every draw below 16 rows a group (the measured MoE rate's first); the
    # module measured at the layout (session 24) holds its kernels' starts up to 384 tokens
    op = (_mla_op_held(model, f, lay, graphs, engine, batch, context)
          + _gemm_held(model, f, lay, graphs, engine, batch))
    module = (_module_held(model, f, lay, graphs, engine, batch, kernel)
              + _router_held(model, f, lay, graphs, engine, batch))
    for a, b in zip(new.layers, old.layers, strict=True):
        held = (_expected_held(model, f, lay, a.kind, kernel, graphs, runtime, engine) + op
                + (module if a.kind == "moe" else 0))
        event(f"{a.kind} layer starts held: {held}")
        assert a.kernels == b.kernels
        assert a.launch == pytest.approx((a.kernels - held) * per_kernel / fusion,
                                         rel=1e-12, abs=1e-18)
        assert b.launch == pytest.approx(b.kernels * per_kernel / fusion, rel=1e-12, abs=1e-18)
        assert (a.attention, a.ffn, a.comm, a.exposed_comm, a.kernel_floor) == (
            b.attention, b.ffn, b.comm, b.exposed_comm, b.kernel_floor)
        total += held * per_kernel / fusion
    assert old.time - new.time == pytest.approx(total, rel=1e-9, abs=1e-15)


# -- prompt passes follow the same rule (session 16) ------------------------------------------

B200_8 = "switch:8,planes=2,links=9,tech=nvlink5,chip=b200"


def _own_cost(fabric, op, nbytes, **kw):
    """A caller's own collective function (analysis.cost behind it): not known to hold a
    kernel's start."""
    return analysis.cost(fabric, op, nbytes, **kw)


@pytest.mark.parametrize("layout,kw,held", [
    ("tp=8", {}, 2 * 58),                           # the exchange on 8 ranks, NCCL's cost
    ("tp=1,dp=8", {"runtime": "symmetric-memory"}, 2 * 58),
    ("tp=8", {"runtime": "ideal"}, 0),              # no software cost holds a start
    ("tp=8,dp=1,etp=8", {}, 0),                     # experts split over the ranks: no exchange
    ("tp=8", {"collective": _own_cost}, 0),         # a caller's own cost function
])
def test_a_prompt_pass_charges_no_boundary_to_a_held_exchange_start(layout, kw, held):
    """prefill_time's eager pass: the collective exchange's dispatch and combine kernels (one
    each per MoE layer, DeepSeek-V3's 58) start inside their priced collective when it runs
    (ep > 1, experts whole) under a runtime whose cost holds the start, as decode's replayed
    step has it: no GPU-side boundary of their own, their host launches stay. The pass (8k
    tokens: GPU-bound, its launches hidden) is that many boundaries shorter than with every
    kernel charged, per prompt of the pass."""
    import analysis._serving as S

    f = topologies.build(B200_8)
    p = analysis.prefill_time("deepseek-v3", f, isl=8192, layout=layout, **kw)
    lay = analysis.parse_layout(layout, 8)
    names = [n for names, r in S._pass_kernel_names(analysis.model_config("deepseek-v3"), lay)
             for _ in range(r) for n in names]
    flags = [h for hs, (_, r) in zip(p.held_layers, p.launch_layers) for _ in range(r)
             for h in hs]
    assert len(flags) == len(names) == p.kernels()
    assert sum(flags) == held
    assert {n for n, h in zip(names, flags) if h} <= {"dispatch", "combine"}
    assert p.boundaries() == pytest.approx((p.kernels() - held) * BOUNDARY, rel=1e-12)
    with mock.patch.object(S, "collective_holds_starts", lambda *a, **k: False):
        every = analysis.prefill_time("deepseek-v3", f, isl=8192, layout=layout, **kw)
    assert sum(sum(hs) for hs in every.held_layers) == 0
    assert every.total - p.total == pytest.approx(held * BOUNDARY / p.prompts, rel=1e-6)


def test_a_hand_built_pass_with_a_wrong_held_shape_is_refused():
    p = analysis.PrefillTime(isl=1, flops=0.0, compute=0.0, weights=0.0, comm=0.0, total=0.0,
                             launch=4e-6, launch_layers=(((False, True), 2),), boundary=1e-6,
                             held_layers=((True,),))
    with pytest.raises(SpecError, match="held_layers must hold one flag per kernel"):
        p.exposed_launch(1.0)
