"""Prefill GEMMs at the published GEMM efficiencies decode takes (one rule, session 11):
``analysis.prefill_gemm_efficiency`` reads ``analysis.GEMM_COMPUTE_EFFICIENCY``."""


import pytest
from degrade import built
from hypothesis import given, settings
from hypothesis import strategies as st
from test_serving_prefill_dp import _part_flops

import analysis
import topologies
from fabric import Parameter, SpecError, chip_spec
from fabric._units import is_real

B200 = "switch:8,planes=2,links=9,tech=nvlink5,chip=b200"
H200 = "switch:8,planes=4,links=5/4/4/5,tech=nvlink4,chip=h200"


@pytest.mark.parametrize("chip,fmt,part,want", [
    ("h200", "fp8", "attention", ("hopper", "fp8", "dense")),
    ("h100", "fp8", "ffn", ("hopper", "fp8", "dense")),
    ("h200", "fp8", "experts", ("hopper", "fp8", "contiguous")),
])
def test_published_cases_read_the_table(chip, fmt, part, want):
    assert analysis.prefill_gemm_efficiency(chip_spec(chip), fmt, part) == \
        analysis.GEMM_COMPUTE_EFFICIENCY[want].value


@pytest.mark.parametrize("chip,fmt,part", [
    ("h200", "bf16", "attention"), ("b200", "fp4", "experts"), ("b200", "fp8", "ffn"),
    ("h200", "fp8", "scores"), ("tpu-v4", "bf16", "head")])
def test_unpublished_cases_are_the_roofline(chip, fmt, part):
    assert analysis.prefill_gemm_efficiency(chip_spec(chip), fmt, part) == 1.0
    assert analysis.prefill_gemm_efficiency(chip_spec(chip), fmt, part, 0.3) == 0.3


def test_a_new_published_figure_reaches_the_prefill(monkeypatch):
    """The prefill reads the one table: a Blackwell FP4 contiguous figure added to it slows
    exactly the routed experts' share of a B200 NVFP4 prefill by its factor."""
    f = topologies.build(B200)
    m = analysis.model_config("deepseek-r1-nvfp4")
    before = analysis.prefill_time(m, f, isl=4096, layout="tp=8")
    experts = 2 * 4096 * m.moe_layers * m.experts_per_token * m.expert_params
    table = dict(analysis.GEMM_COMPUTE_EFFICIENCY)
    table[("blackwell", "fp4", "contiguous")] = Parameter("test.eff", 0.5, "", "test")
    monkeypatch.setattr("analysis._gemm.GEMM_COMPUTE_EFFICIENCY", table)
    after = analysis.prefill_time(m, f, isl=4096, layout="tp=8")
    # each routed-expert FLOP now takes twice as long
    added = experts / (8 * f.chip.peak("fp4"))
    assert after.compute - before.compute == pytest.approx(added, rel=1e-9)


def test_decode_compute_efficiency_prices_the_prompts_too():
    """One GEMM efficiency: serving_point(compute_efficiency=x) runs the prefill at x too,
    unless prefill_efficiency says otherwise."""
    f = topologies.build(H200)
    kw = {"isl": 1024, "osl": 128, "batch": 8, "layout": "tp=8"}
    x = analysis.serving_point("deepseek-r1", f, compute_efficiency=0.5, **kw)
    # the prompt's collectives as the point's steps price theirs (the default engine's rule:
    # TensorRT-LLM's measured all-reduce op on H200, analysis.engine_collective)
    own = analysis.engine_collective("trtllm", f.chip)
    alone = analysis.prefill_time("deepseek-r1", f, isl=1024, layout="tp=8", efficiency=0.5,
                                  collective=own)
    assert x.prefill_time == pytest.approx(alone.total, rel=1e-12)
    y = analysis.serving_point("deepseek-r1", f, compute_efficiency=0.5, prefill_efficiency=0.25,
                               **kw)
    quarter = analysis.prefill_time("deepseek-r1", f, isl=1024, layout="tp=8", efficiency=0.25,
                                    collective=own)
    assert y.prefill_time == pytest.approx(quarter.total, rel=1e-12)


@pytest.mark.parametrize("bad", [0, 1.5, True, "0.4", float("nan")])
def test_prefill_efficiency_is_refused_by_name(bad):
    f = topologies.build(H200)
    with pytest.raises(SpecError if is_real(bad) else TypeError,
                       match="prefill_efficiency must be in"):
        analysis.serving_point("deepseek-r1", f, isl=64, osl=8, batch=1, layout="tp=8",
                               prefill_efficiency=bad)


def test_frontier_lists_the_efficiencies_it_used():
    f = topologies.build(H200)
    fr = analysis.serving_frontier("deepseek-r1", f, isl=256, osl=64, batches=(1,),
                                   layouts=("tp=8",), speculative=((0, 0.0),))
    names = {p.name for p in fr.parameters}
    assert "gemm.compute_efficiency.hopper.fp8.contiguous" in names
    assert "serving.prefill_compute_efficiency" not in names
    fr = analysis.serving_frontier("deepseek-r1", f, isl=256, osl=64, batches=(1,),
                                   layouts=("tp=8",), speculative=((0, 0.0),),
                                   prefill_efficiency=0.3)
    assert any(p.name == "serving.prefill_compute_efficiency" and p.value == 0.3
               for p in fr.parameters)


@settings(max_examples=25, deadline=None)
@given(isl=st.integers(1, 16384), tp=st.sampled_from([1, 2, 4, 8]),
       model=st.sampled_from(["deepseek-r1", "kimi-k2.5-int4", "deepseek-r1-nvfp4"]),
       system=st.sampled_from([H200, B200]))
def test_prefill_compute_is_the_parts_at_the_rule_by_hand(isl, tp, model, system):
    """Brute force: every part's FLOPs over the chip's peak of its format times the
    efficiency looked up by hand (the table; 1 where absent and for the scores)."""
    f = built(system)
    m = analysis.model_config(model)
    chip = f.chip
    flops = _part_flops(m, isl)
    t = 0.0
    for part, fl in flops.items():
        fmt = chip.gemm_format(m.math_format(part))
        key = (chip.generation, fmt, "contiguous" if part == "experts" else "dense")
        eff = 1.0 if part == "scores" or key not in analysis.GEMM_COMPUTE_EFFICIENCY else \
            analysis.GEMM_COMPUTE_EFFICIENCY[key].value
        t += fl / (chip.peak(fmt) * eff)
    lay = f"tp={tp},dp={8 // tp}"
    p = analysis.prefill_time(m, f, isl=isl, layout=lay)
    assert p.compute == pytest.approx(t / 8, rel=1e-9)


def test_unknown_part_is_named():
    with pytest.raises(SpecError, match="part must be one of attention, ffn, router, experts, "
                                        "head, scores, got 'mtp'"):
        analysis.prefill_gemm_efficiency(chip_spec("h200"), "fp8", "mtp")
