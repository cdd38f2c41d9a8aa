"""Session 23 (models): a prompt pass's attention projections (fused A, query up-projection,
output projection) under ``engine="trtllm"`` take TensorRT-LLM's measured ``Linear`` times at
the prompt's rows (``analysis._serving._prefill_projections``), as the decode step takes them
at its own rows; the rest of the attention part (the KV up-projection, norms) keeps its rate.
The measured cases fail on the parent commit, whose prompt pass priced every projection at its
rate. That a longer prompt never takes less time under ``engine="trtllm"`` (these projections
included) is tests/test_serving_prefill_moe_module.py's property."""

from unittest import mock

import pytest

import analysis
import analysis._serving as S
import topologies


@pytest.fixture
def alone():
    """The pass's projections alone: no measured context MLA op, MoE module or router GEMM
    (session 25, tests/test_models_s25_router.py)."""
    with mock.patch.object(S, "_prefill_context_op", lambda *a: None), \
            mock.patch.object(S, "_prefill_module_rate", lambda *a: None), \
            mock.patch.object(S, "_prefill_router", lambda *a: None):
        yield


def _rate(chip, m):
    fmt = chip.gemm_format(m.math_format("attention"))
    return chip.peak(fmt) * analysis.prefill_gemm_efficiency(chip, fmt, "attention")


# (n, k) written out from DeepSeek-R1's MLA at tp = 1: fused A 1536 + 512 + 64 outputs from
# 7168, query up 128 heads x 192 from 1536, output 7168 from 128 heads x 128
FUSED_A, Q_B, O = (2112, 7168), (24576, 1536), (7168, 16384)


@pytest.mark.parametrize("system,model,fmt,measured", [
    ("hgx-b200", "deepseek-r1-nvfp4", "bf16", (FUSED_A, Q_B, O)),
    # the H200 FP8 table's widest output is 16384: the query up-projection keeps its rate
    ("hgx-h200", "deepseek-r1", "fp8-block128", (FUSED_A, O)),
])
@pytest.mark.parametrize("isl", [1024, 3000])
def test_projections_take_the_measured_gemms(system, model, fmt, measured, isl, alone):
    f = topologies.build(system)
    m = analysis.model_config(model)
    kw = {"isl": isl, "layout": "tp=1,dp=8", "one_at_a_time": True}
    plain = analysis.prefill_time(m, f, **kw)
    trt = analysis.prefill_time(m, f, engine="trtllm", **kw)
    rate, chip = _rate(f.chip, m), f.chip.name
    times = [analysis.trtllm_gemm_time(chip, fmt, isl, n, k) for n, k in measured]
    covered = sum(2 * isl * n * k for n, k in measured)
    assert None not in times
    delta = m.layers * (sum(times) - covered / rate)
    assert delta > 0
    # one prompt alone on its tp = 1 rank: the part's seconds are the compute's
    assert trt.compute - plain.compute == pytest.approx(delta, rel=1e-9)


@pytest.mark.parametrize("case", ["vllm", "efficiency", "b300", "sparse"])
def test_other_passes_keep_their_rate(case, alone):
    system, model, kw = "hgx-b200", "deepseek-r1-nvfp4", {"isl": 1024, "layout": "tp=1,dp=8"}
    engine = "vllm" if case == "vllm" else "trtllm"
    if case == "efficiency":
        kw["efficiency"] = 0.5
    elif case == "b300":
        system = "hgx-b200:chip=b300"
    elif case == "sparse":              # DeepSeek sparse attention: not the measured MLA
        model = "deepseek-v3.2"
    f = topologies.build(system)
    with mock.patch.object(S, "trtllm_gathers", lambda *a: False):
        assert (analysis.prefill_time(model, f, engine=engine, **kw).compute
                == analysis.prefill_time(model, f, **kw).compute)

