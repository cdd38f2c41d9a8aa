"""Prefill under attention data parallelism (``prefill_time(one_at_a_time=...)``,
``serving_point(adp_balance=...)``) and prefill GEMMs at their math format's peak."""

import dataclasses

import pytest
from degrade import built
from hypothesis import given, settings
from hypothesis import strategies as st

import analysis
import topologies

H200 = "switch:8,planes=4,links=5/4/4/5,tech=nvlink4,chip=h200"


@pytest.fixture(scope="module")
def node():
    return topologies.build(H200)


def _part_flops(m, isl):
    """FLOPs of one ``isl``-token prompt by model part, by hand (the head for one token)."""
    L, moe = m.layers, m.moe_layers
    return {"attention": 2 * isl * L * m.attention_params,
            "scores": L * m.attention.prefill_score_flops(isl),
            "ffn": 2 * isl * (m.dense_layers * m.dense_ffn_params
                              + moe * m.shared_experts * m.expert_params),
            "router": 2 * isl * moe * m.router_params,
            "experts": 2 * isl * moe * m.experts_per_token * m.expert_params,
            "head": 2 * m.head_params}


def _seconds(m, chip, isl, eff):
    """Seconds of each part's FLOPs at its format's peak, by hand."""
    flops = _part_flops(m, isl)
    return {p: f / (chip.gemm_flops(m.math_format(p)) * (_published(chip, m, p) if eff is None
                                                          else eff))
            for p, f in flops.items()}


def _published(chip, m, part):
    """The GEMM efficiency decode takes, looked up by hand in the published table: the
    chip's generation, the format the part runs in, plain GEMMs but for the routed experts
    (contiguous-layout grouped GEMMs in prefill); the scores and unpublished ones at 1."""
    if part == "scores":
        return 1.0
    kind = "contiguous" if part == "experts" else "dense"
    p = analysis.GEMM_COMPUTE_EFFICIENCY.get(
        (chip.generation, chip.gemm_format(m.math_format(part)), kind))
    return 1.0 if p is None else p.value


def test_parts_add_up_to_the_request_flops(node):
    m = analysis.model_config("deepseek-r1")
    p = analysis.prefill_time(m, node, isl=1024, layout="tp=1,dp=8")
    parts = _seconds(m, node.chip, 1024, 1.0)
    flops = sum(t * node.chip.gemm_flops(m.math_format(k)) for k, t in parts.items())
    assert flops == pytest.approx(p.flops, rel=1e-12)


def test_one_at_a_time_by_hand(node):
    m = analysis.model_config("deepseek-r1")
    eff = None                  # the published efficiencies (FP8 on Hopper: DeepGEMM's)
    together = analysis.prefill_time(m, node, isl=1024, layout="tp=1,dp=8")
    alone = analysis.prefill_time(m, node, isl=1024, layout="tp=1,dp=8", one_at_a_time=True)
    sec = _seconds(m, node.chip, 1024, eff)
    others = sum(t for k, t in sec.items() if k != "experts")
    # on its own rank (tp=1) but for its routed experts, spread over the 8 chips
    assert alone.compute == pytest.approx(others + sec["experts"] / 8, rel=1e-12)
    assert together.compute == pytest.approx((others + sec["experts"]) / 8, rel=1e-12)
    # its collectives are its own (not shared by 8 prompts at once)
    assert alone.comm == pytest.approx(8 * together.comm, rel=1e-12)
    # one attention group: nothing changes
    tp8 = analysis.prefill_time(m, node, isl=1024, layout="tp=8", one_at_a_time=True)
    assert tp8 == analysis.prefill_time(m, node, isl=1024, layout="tp=8")


@settings(max_examples=10, deadline=None)
@given(isl=st.integers(1, 8192), dp=st.sampled_from([2, 4, 8]))
def test_one_at_a_time_is_never_faster(isl, dp):
    f = built(H200)
    kw = {"isl": isl, "layout": f"tp={8 // dp},dp={dp}"}
    a = analysis.prefill_time("deepseek-v3", f, one_at_a_time=True, **kw)
    b = analysis.prefill_time("deepseek-v3", f, **kw)
    assert a.total >= b.total


def test_bf16_model_keeps_the_bf16_peak(node):
    # every GEMM in BF16: the prefill is FLOPs / (chips x BF16 peak x efficiency)
    m = dataclasses.replace(analysis.model_config("kimi-k2"), weight_bytes=2.0,
                            weight_format="bf16", ffn_format=None)
    assert {m.math_format(p) for p in ("attention", "ffn", "experts")} == {"bf16"}
    p = analysis.prefill_time(m, node, isl=4096, layout="tp=8")
    peak = node.chip.gemm_flops("bf16")
    # no BF16 efficiency is published: the roofline, as decode's BF16 GEMMs
    assert p.compute == pytest.approx(p.flops / (8 * peak), rel=1e-12)
    q = analysis.prefill_time(m, node, isl=4096, layout="tp=8", efficiency=0.5)
    assert q.compute == pytest.approx(p.flops / (8 * peak * 0.5), rel=1e-12)


def test_serving_aggregated_dp_prefills_one_at_a_time(node):
    kw = {"isl": 1024, "osl": 1024, "batch": 64, "layout": "tp=1,dp=8"}
    serial = analysis.serving_point("deepseek-r1", node, **kw)
    balanced = analysis.serving_point("deepseek-r1", node, adp_balance=True, **kw)
    # the serving point's engine (decode_step's default, trtllm) prices its prompt pass: the
    # routed experts at TensorRT-LLM's measured module rate where it has one (session 22)
    alone = analysis.prefill_time("deepseek-r1", node, isl=1024, layout="tp=1,dp=8",
                                  one_at_a_time=True, engine="trtllm")
    assert serial.prefill_time == pytest.approx(alone.total, rel=1e-12)
    assert balanced.prefill_time < serial.prefill_time
    # disaggregated prefill runs on its own GPUs, batched: unchanged by the flag
    d = analysis.serving_point("deepseek-r1", node, mode="disaggregated", **kw)
    e = analysis.serving_point("deepseek-r1", node, mode="disaggregated", adp_balance=True,
                               **kw)
    assert d.prefill_time == e.prefill_time


def test_bad_input(node):
    with pytest.raises(TypeError, match="one_at_a_time"):
        analysis.prefill_time("deepseek-r1", node, isl=8, layout="tp=8", one_at_a_time=1)
    with pytest.raises(TypeError, match="adp_balance"):
        analysis.serving_point("deepseek-r1", node, isl=8, osl=8, batch=8, layout="tp=8",
                               adp_balance="yes")


def test_cli_serve_adp_balance(capsys):
    import json

    from analysis._cli import main

    base = ["serve", "switch:8,planes=2,links=9,tech=nvlink5,chip=b200", "--model",
            "deepseek-r1", "--isl", "1024", "--osl", "128", "--batches", "64", "--layout",
            "tp=1,dp=8", "--no-speculative", "--json", "--quiet"]
    assert main(base) == 0
    serial = json.loads(capsys.readouterr().out)["frontier"][0]
    assert main([*base, "--adp-balance"]) == 0
    balanced = json.loads(capsys.readouterr().out)["frontier"][0]
    # the same decode steps; the prefill of dp prompts at once shortens the request
    assert balanced["tokens_per_s_gpu"] > serial["tokens_per_s_gpu"]
