"""vLLM's tensor-parallel all-reduce: its per-size dispatch (analysis.vllm_all_reduce) and its
custom all-reduce kernels priced by their steps (fabric.VLLM_CUSTOM_ALLREDUCE).

References: the kernels' steps read from vllm-project/vllm ``csrc/custom_all_reduce.cuh`` /
``csrc/custom_collective_common.cuh`` (1-stage: start barrier, loads of every peer's buffer,
end barrier; 2-stage: start barrier, reduce-scatter by loads into the rank's own buffer, a
release/acquire barrier, all-gather by loads), built here from the runtime's public pieces
(kernel floor, the flag barrier of a bulk kernel, analysis.peer_round_trip +
fabric.peer_access_latency), on intact and degraded 8-GPU boards.
"""

import math

import pytest
from degrade import built
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import analysis
import fabric
import topologies
from analysis._runtime_cost import VLLM_ONE_STAGE_BELOW

MiB = 1 << 20
BOARDS = ("hgx-h200", "hgx-b200")
TIERS = ("flashinfer one-shot", "flashinfer two-shot", "vllm-custom 1-stage",
         "vllm-custom 2-stage", "torch-symm-mem multimem", "torch-symm-mem two-shot", "nccl")


def _board(name, failed_links=()):
    f = topologies.build(name)
    return f.without(links=list(failed_links)) if failed_links else f


@st.composite
def degraded_boards(draw):
    """An HGX board with up to three chip-switch links failed, none cutting a chip off."""
    name = draw(st.sampled_from(BOARDS))
    f = built(name)
    links = sorted({tuple(sorted((u, v))) for u, v in f.graph.edges()
                    if u.startswith("chip") or v.startswith("chip")})
    failed = draw(st.lists(st.sampled_from(links), max_size=3, unique=True))
    g = f.without(links=failed) if failed else f
    chips = list(g.endpoints)
    try:  # every chip must still reach every other (a group vLLM could form)
        for a in chips:
            for b in chips:
                if a != b:
                    g.route(a, b)
    except fabric.RoutingError:
        failed, g = [], f
    return name, g, failed


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(board=degraded_boards(), tp=st.sampled_from([2, 4, 8]),
       kib=st.integers(min_value=1, max_value=16 * 1024))
def test_custom_allreduce_kernels_cost_their_steps(board, tp, kib):
    _name, f, _failed = board
    ranks = list(f.endpoints[:tp])
    n = kib * 1024
    rt = fabric.VLLM_CUSTOM_ALLREDUCE
    arch = fabric.runtime_arch(f)
    trip = analysis.peer_round_trip(f, ranks) + fabric.peer_access_latency(arch)[0]
    floor = rt.kernel_floor[arch]
    one = analysis.cost(f, "all-reduce", n, ranks=ranks, runtime=rt, algorithm="one-shot")
    two = analysis.cost(f, "all-reduce", n, ranks=ranks, runtime=rt, algorithm="two-shot")
    # the same bytes as the symmetric runtime's one-shot (pushed, Lamport: floor + bytes) ...
    lamport = analysis.cost(f, "all-reduce", n, ranks=ranks, runtime="symmetric-memory",
                            algorithm="one-shot")
    assert math.isclose(lamport.fixed, floor, rel_tol=1e-12)
    # ... and the symmetric runtime's bulk two-shot pays floor + barrier + release trip
    # (after its stores into peers) + one late pull; its barrier is what is left
    bulk = analysis.cost(f, "all-reduce", n, ranks=ranks, runtime="symmetric-memory",
                         algorithm="two-shot")
    barrier = bulk.fixed - floor - trip
    assert barrier > 0
    # 1-stage: floor + end barrier, one late pull, the one-shot's bytes
    assert math.isclose(one.fixed, floor + barrier, rel_tol=1e-9)
    assert math.isclose(one.time - one.fixed, trip + (lamport.time - lamport.fixed),
                        rel_tol=1e-9)
    # 2-stage: floor + middle barrier (local stores: no release trip), two late pulls, the
    # two-shot's bytes: the same total as the push/pull two-shot, by another split
    assert math.isclose(two.fixed, floor + barrier, rel_tol=1e-9)
    assert math.isclose(two.time - two.fixed, 2 * trip + (bulk.time - bulk.fixed - trip),
                        rel_tol=1e-9)
    assert math.isclose(two.time, bulk.time, rel_tol=1e-9)
    # vLLM's own rule picks between them (not the faster one)
    auto = analysis.cost(f, "all-reduce", n, ranks=ranks, runtime=rt)
    want = one if n < VLLM_ONE_STAGE_BELOW[tp] else two
    assert (auto.algorithm, auto.time) == (want.algorithm, want.time)


def test_custom_allreduce_refuses_what_vllm_does_not_run():
    f = topologies.build("hgx-h200")
    rt = fabric.VLLM_CUSTOM_ALLREDUCE
    with pytest.raises(analysis.NotApplicableError, match="all-reduce only"):
        analysis.cost(f, "all-gather", MiB, runtime=rt)
    with pytest.raises(analysis.NotApplicableError, match="2, 4, 6 or 8 GPUs, not 3"):
        analysis.cost(f, "all-reduce", MiB, ranks=list(f.endpoints[:3]), runtime=rt)
    with pytest.raises(analysis.NotApplicableError, match="not in-switch"):
        analysis.cost(f, "all-reduce", MiB, runtime=rt, algorithm="in-switch")
    g = topologies.build("rail:servers=2,gpus=4,chip=h100")
    with pytest.raises(analysis.NotApplicableError, match="several load/store domains"):
        analysis.cost(g, "all-reduce", MiB, runtime=rt)
    assert "vllm-custom-allreduce" not in fabric.RUNTIMES


_KERNELS = {"flashinfer one-shot": ("symmetric-memory", "one-shot"),
            "flashinfer two-shot": ("symmetric-memory", "two-shot"),
            "vllm-custom 1-stage": (fabric.VLLM_CUSTOM_ALLREDUCE, "one-shot"),
            "vllm-custom 2-stage": (fabric.VLLM_CUSTOM_ALLREDUCE, "two-shot"),
            "torch-symm-mem multimem": (fabric.TORCH_SYMM_MEM, "in-switch"),
            "torch-symm-mem two-shot": (fabric.TORCH_SYMM_MEM, "two-shot"),
            "nccl": ("nccl", "auto")}


def _reference_tiers(sm, tp, n, fuse, symm):
    """vLLM's dispatch read straight from its sources' tables (docs/sources.md s.8): every tier
    whose size range holds ``n``, in vLLM's order."""
    fi = {90: {2: 64, 4: 2, 8: 0.5}, 100: {2: 64, 4: 32, 8: 1}}[sm].get(tp)
    fi_one = {90: {2: 32, 4: 2, 8: 0.5}, 100: {2: 32, 4: 4, 8: 1}}[sm].get(tp)
    ca = {90: {2: 64, 4: 32, 6: 0.5, 8: 0.25}, 100: {2: 2, 4: 2, 6: 1, 8: 1}}[sm][tp] * MiB \
        if symm else 8 * MiB
    ca = min(ca, 8 * MiB)
    sym = {90: {2: 64, 4: 32, 6: 64, 8: 64}, 100: {2: 8, 4: 32, 6: 128, 8: 128}}[sm][tp] * MiB
    multi = tp in {90: (4, 6, 8), 100: (6, 8)}[sm]
    out = []
    if fuse and fi is not None and n <= fi * MiB:
        out.append("flashinfer one-shot" if n <= fi_one * MiB else "flashinfer two-shot")
    if n < ca:
        one = tp == 2 or (tp <= 4 and n < 512 * 1024) or n < 256 * 1024
        out.append("vllm-custom 1-stage" if one else "vllm-custom 2-stage")
    if symm and n < sym:
        out.append("torch-symm-mem multimem" if multi else "torch-symm-mem two-shot")
    return out + ["nccl"]


def _runs(f, ranks, n, kernel):
    rt, alg = _KERNELS[kernel]
    try:
        return analysis.cost(f, "all-reduce", n, ranks=ranks, runtime=rt, algorithm=alg)
    except analysis.NotApplicableError:
        return None


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(board=degraded_boards(), tp=st.sampled_from([2, 4, 8]),
       n=st.integers(min_value=16, max_value=200 * MiB), fuse=st.booleans(),
       symm=st.booleans())
def test_dispatch_follows_vllms_tables_and_prices_the_kernel_it_names(board, tp, n, fuse, symm):
    name, f, _failed = board
    ranks = list(f.endpoints[:tp])
    sm = 90 if name == "hgx-h200" else 100
    kernel = analysis.vllm_all_reduce_kernel(f, n, ranks, fuse_allreduce_rms=fuse,
                                             symm_mem=symm)
    # the first tier in vLLM's order whose kernel can run on this (possibly degraded) group
    want = next(k for k in _reference_tiers(sm, tp, n, fuse, symm) if _runs(f, ranks, n, k))
    assert kernel == want
    got = analysis.vllm_all_reduce(f, "all-reduce", n, ranks=ranks, algorithm="ring",
                                   transport=None, runtime="ideal", fuse_allreduce_rms=fuse,
                                   symm_mem=symm)
    assert got.time == _runs(f, ranks, n, kernel).time


@settings(max_examples=20, deadline=None)
@given(tp=st.sampled_from([2, 4, 8]), sizes=st.lists(st.integers(16, 200 * MiB), min_size=2,
                                                      max_size=6))
def test_a_larger_all_reduce_never_takes_an_earlier_tier(tp, sizes):
    # vLLM's tiers are size ranges in dispatch order: growing the input only moves down them
    f = built("hgx-b200")
    ranks = list(f.endpoints[:tp])
    tiers = [TIERS.index(analysis.vllm_all_reduce_kernel(f, n, ranks)) for n in sorted(sizes)]
    assert tiers == sorted(tiers)


def test_a_tier_that_cannot_run_falls_to_the_next():
    # without in-switch reduction torch's multimem kernel cannot run (vLLM disables its
    # symmetric-memory communicator without multicast): NCCL
    f = topologies.build("switch:8,planes=4,links=5/4/4/5,tech=nvlink4,chip=h200")
    assert analysis.vllm_all_reduce_kernel(f, 917504) == "nccl"
    assert analysis.vllm_all_reduce_kernel(topologies.build("hgx-h200"), 917504) == \
        "torch-symm-mem multimem"
    # other operations go through NCCL
    g = topologies.build("hgx-h200")
    got = analysis.vllm_all_reduce(g, "all-gather", MiB, ranks=list(g.endpoints))
    assert got.runtime == "nccl"


def test_bad_input_is_named():
    f = topologies.build("switch:8,chip=mi300x") if "mi300x" in fabric.CHIPS else None
    g = topologies.build("mesh:2")
    with pytest.raises(fabric.SpecError, match="Hopper .* Blackwell"):
        analysis.vllm_all_reduce_kernel(g, MiB)
    if f is not None:
        with pytest.raises(fabric.SpecError, match="Hopper"):
            analysis.vllm_all_reduce_kernel(f, MiB)
    with pytest.raises(fabric.SpecError, match="at least one rank"):
        analysis.vllm_all_reduce_kernel(topologies.build("hgx-h200"), MiB, ranks=[])


def test_sizes_as_strings_and_flags_as_booleans():
    # review S8-R5: a size string is read as analysis.cost reads it; a flag must be a bool
    f = topologies.build("hgx-h200")
    assert analysis.vllm_all_reduce_kernel(f, "1MiB") == \
        analysis.vllm_all_reduce_kernel(f, 1 << 20) == "torch-symm-mem multimem"
    got = analysis.vllm_all_reduce(f, "all-reduce", "896KiB", ranks=list(f.endpoints))
    assert got.time == analysis.vllm_all_reduce(f, "all-reduce", 917504,
                                                ranks=list(f.endpoints)).time
    for bad in ("no", 1, None):
        with pytest.raises(TypeError, match="fuse_allreduce_rms must be True or False"):
            analysis.vllm_all_reduce_kernel(f, 1 << 20, fuse_allreduce_rms=bad)
        with pytest.raises(TypeError, match="symm_mem must be True or False"):
            analysis.vllm_all_reduce_kernel(f, 1 << 20, symm_mem=bad)


# -- decode_step(engine="vllm")'s default collective (analysis.engine_collective) -----------

CHIPS = ("h100", "h200", "b200", "h800", "h20", "b300", "gb200", "gb300", "tpu-v4", "sd200-chip")


@settings(max_examples=60, deadline=None)
@given(engine=st.sampled_from(["trtllm", "vllm", "sglang"]), chip=st.sampled_from(CHIPS),
       runtime=st.sampled_from([None, "nccl", "symmetric-memory"]),
       algorithm=st.sampled_from(["auto", "ring", {"all-reduce": "ring"}]),
       given_fn=st.booleans())
def test_engine_collective_is_vllms_dispatch_exactly_when_nothing_else_is_asked(
        engine, chip, runtime, algorithm, given_fn):
    # the rule, enumerated: a caller's collective wins; vLLM's dispatch only for engine vllm
    # on a chip its tables list (SM90 Hopper, SM100 Blackwell) with no runtime or algorithm
    # chosen; else the collectives model
    from analysis._decode import _default_collective

    def mine(*a, **k):
        raise AssertionError("not called here")

    spec = fabric.chip_spec(chip)
    got = analysis.engine_collective(engine, spec, collective=mine if given_fn else None,
                                     runtime=runtime, algorithm=algorithm)
    if given_fn:
        want = mine
    elif (engine == "vllm" and runtime is None and algorithm == "auto"
          and spec.generation in ("hopper", "blackwell")):
        want = analysis.vllm_all_reduce
    else:
        want = _default_collective
    assert got is want


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(board=degraded_boards(), batch=st.sampled_from([1, 16, 64]),
       layout=st.sampled_from(["tp=8,dp=1,etp=8", "tp=4,dp=2"]))
def test_vllm_steps_default_to_vllms_dispatch_on_intact_and_degraded_boards(board, batch,
                                                                            layout):
    # decode_step(engine="vllm") without a collective == with analysis.vllm_all_reduce, byte
    # for byte; and the step names the collective among its parameters
    _, board, _ = board
    kw = {"batch": batch, "context": 4096, "layout": layout, "engine": "vllm"}
    default = analysis.decode_step("kimi-k2.5-int4", board, **kw)
    given_ = analysis.decode_step("kimi-k2.5-int4", board, collective=analysis.vllm_all_reduce,
                                  **kw)
    assert default.time == given_.time and default.breakdown == given_.breakdown
    p = {q.name: q for q in default.parameters}["decode.collective"]
    assert p.value == "analysis.vllm_all_reduce" and "vllm/config/vllm.py" in p.source


def test_vllm_dispatch_moves_the_step_and_an_explicit_runtime_keeps_its_choice():
    f = topologies.build("hgx-h200")
    kw = {"batch": 16, "context": 4096, "layout": "tp=8,dp=1,etp=8", "engine": "vllm"}
    default = analysis.decode_step("kimi-k2.5-int4", f, **kw)
    nccl = analysis.decode_step("kimi-k2.5-int4", f, collective=analysis.cost, **kw)
    # 229 KB all-reduces: FlashInfer's one-shot, not NCCL's choice
    assert default.breakdown.exposed_comm < nccl.breakdown.exposed_comm
    asked = analysis.decode_step("kimi-k2.5-int4", f, runtime="nccl", **kw)
    assert asked.time == nccl.time
    assert {q.name: q.value for q in asked.parameters}["decode.collective"] == "analysis.cost"
    # a chip vLLM's tables do not list: the collectives model, and the step still runs
    tpu = topologies.build("tpu-v4-cube")
    step = analysis.decode_step("kimi-k2", tpu, batch=4, context=1000, layout="tp=8",
                                engine="vllm")
    assert {q.name: q.value for q in step.parameters}["decode.collective"] == "analysis.cost"


def test_serving_prices_a_vllm_prefill_with_the_same_collective():
    # the prefill's all-reduces follow decode's rule (one place): serving_point(engine="vllm")
    # equals the same point with vLLM's dispatch passed explicitly, prefill included
    f = topologies.build("hgx-b200")
    kw = {"isl": 2000, "osl": 200, "batch": 8, "layout": "tp=8,dp=1,etp=8", "engine": "vllm"}
    default = analysis.serving_point("kimi-k2.5-int4", f, **kw)
    given_ = analysis.serving_point("kimi-k2.5-int4", f, collective=analysis.vllm_all_reduce,
                                    **kw)
    nccl = analysis.serving_point("kimi-k2.5-int4", f, collective=analysis.cost, **kw)
    assert default == given_
    assert default.prefill_time != nccl.prefill_time
