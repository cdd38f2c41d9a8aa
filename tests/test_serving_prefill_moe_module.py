"""A prompt pass's routed experts at TensorRT-LLM's measured MoE module rate (session 22).

``prefill_time(engine="trtllm")`` (the serving sweeps pass their decode engine, TensorRT-LLM by
default) prices the routed experts' FLOPs at :func:`analysis.grouped_gemm_rate` (aiconfigurator's
1.2.0rc5 module times: CUTLASS NVFP4 on B200/GB200, FP8 block-scaled on H200), as the decode step
prices its own, at the pass's rows per group: its prompts' tokens x experts per token over the
routed experts (every attention group's prompt in one pass, or the one prompt). Only with the
experts whole on their ranks and at least the measured shard's 32 local experts, no user
efficiency, from the table's first row; no faster than the published rate. Elsewhere (another
engine, None) the pass keeps :func:`analysis.prefill_gemm_efficiency`."""

from unittest import mock

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import analysis
import analysis._serving as S
import topologies
from analysis._collectives import default_runtime

B200 = "hgx-b200"


@pytest.fixture
def no_context_op():
    """The passes without the measured context MLA op (tests/test_serving_prefill_context_mla.py),
    the measured projection GEMMs (session 23, tests/test_models_s23_prompt_gemms.py) and the
    measured router GEMM (session 25, tests/test_models_s25_router.py): the routed experts'
    pricing alone."""
    with mock.patch.object(S, "_prefill_context_op", lambda *a: None), \
            mock.patch.object(S, "_prefill_projections", lambda *a: None), \
            mock.patch.object(S, "_prefill_router", lambda *a: None):
        yield


@pytest.fixture
def no_gather():
    """The passes without TensorRT-LLM's attention-DP allgather + reducescatter (session 23,
    tests/test_models_s23_adp.py), which moves the trtllm pass's collectives: the routed
    experts' pricing alone, against the plain pass's all-to-all."""
    with mock.patch.object(S, "trtllm_gathers", lambda *a: False):
        yield


def _experts_flops(m, isl):
    return 2 * isl * m.moe_layers * m.experts_per_token * m.expert_params


@pytest.mark.parametrize("one_at_a_time,rows", [(False, 256), (True, 32)])
def test_b200_pass_takes_the_module_rate_at_its_rows(one_at_a_time, rows, no_context_op,
                                                     no_gather):
    # deepseek-r1-nvfp4 on 8 B200 at attention DP8, 1024-token prompts: 8 prompts in one pass
    # put 8192 tokens into each rank's MoE (256 rows a group: the module measured at 8192
    # tokens, 0.658 ms, ~12% of the FP4 peak); one prompt alone, 1024 tokens (32 rows)
    f = topologies.build(B200)
    m = analysis.model_config("deepseek-r1-nvfp4")
    kw = {"isl": 1024, "layout": "tp=1,dp=8", "one_at_a_time": one_at_a_time}
    plain = analysis.prefill_time(m, f, **kw)
    trt = analysis.prefill_time(m, f, engine="trtllm", **kw)
    rate = analysis.grouped_gemm_rate("b200", "fp4", rows)
    peak = f.chip.peak("fp4")           # no published FP4 efficiency: the pass had the peak
    assert rate < peak
    delta = _experts_flops(m, 1024) / 8 * (1 / rate - 1 / peak)
    assert trt.compute - plain.compute == pytest.approx(delta, rel=1e-9)
    assert trt.total > plain.total
    assert (trt.weights, trt.comm, trt.flops) == (plain.weights, plain.comm, plain.flops)


def test_h200_fp8_pass_takes_its_module_rate(no_context_op):
    # deepseek-r1 (FP8 block-scaled experts) on 8 H200: the H200 module's rate at 256 rows
    # (0.51 PFLOP/s) is below DeepGEMM's contiguous efficiency x the FP8 peak (1.30 PFLOP/s)
    f = topologies.build("hgx-h200")
    m = analysis.model_config("deepseek-r1")
    kw = {"isl": 1024, "layout": "tp=1,dp=8"}
    plain = analysis.prefill_time(m, f, **kw)
    trt = analysis.prefill_time(m, f, engine="trtllm", **kw)
    published = f.chip.peak("fp8") * analysis.prefill_gemm_efficiency(f.chip, "fp8", "experts")
    rate = analysis.grouped_gemm_rate("h200", "fp8", 256)
    assert rate < published
    delta = _experts_flops(m, 1024) / 8 * (1 / rate - 1 / published)
    assert trt.compute - plain.compute == pytest.approx(delta, rel=1e-9)


@pytest.mark.parametrize("case", ["vllm", "efficiency", "etp", "few-local-experts", "b300",
                                  "few-rows"])
def test_other_passes_keep_their_pricing(case, no_context_op, no_gather):
    spec, model = B200, "deepseek-r1-nvfp4"
    kw = {"isl": 1024, "layout": "tp=1,dp=8"}
    if case == "efficiency":
        kw["efficiency"] = 0.5
    elif case == "etp":                 # experts split over the ranks: not the measured shard
        kw["layout"] = "tp=8,dp=1,etp=8"
    elif case == "few-local-experts":   # 256 experts over 72 chips: 3.6 a chip (S21-R4)
        spec, kw["layout"] = "gb200-nvl72", "tp=1,dp=72"
    elif case == "b300":
        spec = "hgx-b200:chip=b300"
    elif case == "few-rows":            # one 256-token prompt: 8 rows, below the first row
        kw.update(isl=256, one_at_a_time=True)
    f = topologies.build(spec)
    engine = "vllm" if case == "vllm" else "trtllm"
    # one runtime for both: a prompt pass takes its engine's collective (session 36), and
    # this compares the passes' GEMM pricing only
    kw["runtime"] = default_runtime()
    assert (analysis.prefill_time(model, f, engine=engine, **kw)
            == analysis.prefill_time(model, f, **kw))


def test_the_sweeps_pass_their_decode_engine():
    # serving_point's prompt pass is prefill_time under the step's engine (default trtllm)
    f = topologies.build(B200)
    kw = {"isl": 1024, "osl": 1024, "batch": 64, "layout": "tp=1,dp=8"}
    for engine in (None, "trtllm", "vllm"):
        extra = {} if engine is None else {"engine": engine}
        point = analysis.serving_point("deepseek-r1-nvfp4", f, **kw, **extra)
        alone = analysis.prefill_time("deepseek-r1-nvfp4", f, isl=1024, layout="tp=1,dp=8",
                                      one_at_a_time=True, engine=engine or "trtllm")
        assert point.prefill_time == pytest.approx(alone.total, rel=1e-12), engine
    with mock.patch.object(S, "_prefill_module_rate", lambda *a: None):
        before = analysis.serving_point("deepseek-r1-nvfp4", f, **kw)
    assert analysis.serving_point("deepseek-r1-nvfp4", f, **kw).prefill_time > \
        before.prefill_time


@pytest.mark.parametrize("bad", ["tensorrt", "", 3, ["trtllm"]])
def test_a_bad_engine_is_refused(bad):
    from fabric import SpecError
    # check_choice's two errors (session 38): a name of the wrong kind, then the set
    error, said = (SpecError, "one of sglang, trtllm, vllm or None, got") if \
        isinstance(bad, str) else (TypeError, "a str or None, got")
    with pytest.raises(error, match=f"^engine must be {said}"):
        analysis.prefill_time("deepseek-r1-nvfp4", topologies.build(B200), isl=1024,
                              layout="tp=1,dp=8", engine=bad)


@settings(max_examples=15, deadline=None)
@given(isl=st.integers(17, 6000), more=st.integers(0, 4000), serial=st.booleans())
@example(isl=82, more=1, serial=False)          # nccl's LL -> LL128 switch (below)
def test_a_longer_prompt_never_takes_less_time(isl, more, serial):
    # from 17 rows: the BF16 fused A projection's measured time applies above 16 (session 23's
    # measured prompt projections, tests/test_models_s23_prompt_gemms.py, are in this pass too).
    # Under the ideal runtime: since session 23 the pass's exchange is TensorRT-LLM's
    # allgather + reducescatter, and NCCL's tuner prices a reduce-scatter one row larger
    # cheaper where it switches LL -> LL128 (9.40 MB LL 45.9 us, 9.52 MB LL128 41.1 us on
    # hgx-b200; the switch of review S22-R1, pinned in the runtime's tests), so under nccl a
    # 1-token-longer prompt can take less time; the pass's own pricing stays monotone
    f = topologies.build(B200)
    kw = {"layout": "tp=1,dp=8", "one_at_a_time": serial, "engine": "trtllm",
          "runtime": "ideal"}
    a = analysis.prefill_time("deepseek-r1-nvfp4", f, isl=isl, **kw)
    b = analysis.prefill_time("deepseek-r1-nvfp4", f, isl=isl + more, **kw)
    assert a.total <= b.total * (1 + 1e-12)
    assert a.compute <= b.compute * (1 + 1e-12)


# -- a mixed step runs ONE MoE module (its fixed part paid once) ------------------------------

def _module_time(m, chip, lay, tokens):
    """By hand: one layer's routed experts on a rank at the module's rate for ``tokens``."""
    rate = analysis.grouped_gemm_rate(chip.name, "fp4", tokens * 8 / 256)
    return tokens * 8 / lay.ep * 2 * m.expert_params / rate


def test_the_module_overlap_by_hand():
    # decode step of 3072 tokens (384 a rank x 8) and a pass of 8 x 1024 prompt tokens: priced
    # apart 0.357 + 0.658 ms a layer, as one module at 11264 tokens 0.853 ms
    f = topologies.build(B200)
    m = analysis.model_config("deepseek-r1-nvfp4")
    lay = analysis.parse_layout("tp=1,dp=8", 8)
    t = [_module_time(m, f.chip, lay, x) for x in (3072, 8192, 3072 + 8192)]
    assert [round(x * 1e3, 3) for x in t] == [0.357, 0.658, 0.853]
    want = m.moe_layers * (t[0] + t[1] - t[2])
    assert S.module_overlap(m, f.chip, lay, 3072, 8192) == pytest.approx(want, rel=1e-12)
    assert 0 < want < m.moe_layers * t[1]
    # nothing measured on one side: nothing to take back
    assert S.module_overlap(m, f.chip, lay, 64, 8192) == 0.0          # 2 rows a group
    assert S.module_overlap(m, f.chip, analysis.parse_layout("tp=8,dp=1,etp=8", 8),
                            3072, 8192) == 0.0
    assert S.module_overlap(m, topologies.build("hgx-b200:chip=b300").chip, lay,
                            3072, 8192) == 0.0


def test_mixed_steps_pay_the_module_once():
    # a small trtllm-bench-like run (B200, DP8, whole 1024-token prompts): taking the overlap
    # back makes the run shorter, and the steady state's prompt cheaper; vLLM's runs (no
    # measured module) keep theirs
    f = topologies.build(B200)
    kw = {"input_lens": [1024] * 2048, "output_lens": [256] * 2048, "concurrency": 1024,
          "layout": "tp=1,dp=8", "engine": "trtllm", "max_batched_tokens": 1536}
    run = analysis.closed_loop_run("deepseek-r1-nvfp4", f, **kw)
    point = analysis.serving_point("deepseek-r1-nvfp4", f, isl=1024, osl=1024, batch=1024,
                                   layout="tp=1,dp=8", max_batched_tokens=1536)
    with mock.patch.object(S, "module_overlap", lambda *a: 0.0):
        apart = analysis.closed_loop_run("deepseek-r1-nvfp4", f, **kw)
        apart_point = analysis.serving_point("deepseek-r1-nvfp4", f, isl=1024, osl=1024,
                                             batch=1024, layout="tp=1,dp=8",
                                             max_batched_tokens=1536)
        vllm = analysis.closed_loop_run("deepseek-r1-nvfp4", f, **{**kw, "engine": "vllm"})
    assert run.steps == apart.steps and run.duration < apart.duration
    assert point.tpot < apart_point.tpot
    assert analysis.closed_loop_run("deepseek-r1-nvfp4", f,
                                    **{**kw, "engine": "vllm"}).duration == vllm.duration
