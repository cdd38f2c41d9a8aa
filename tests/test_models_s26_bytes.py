"""Session 26 (models; lead's decision on s25 item 5): a part's stored bytes are its format's.
The router gates, the output head and the input embedding (``analysis.UNQUANTIZED_PARTS``) are
BF16 in every preset's release, so the FP8 presets (deepseek-v3 / -r1 / -v3.2, kimi-k2 and the
hypothetical model made from it) store them at 2 bytes, not at their ``weight_bytes`` (~1): in
the weight totals, the memory fit and the decode step's reads (``MoEModel.part_bytes``). The
tests fail on the parent commit (no ``part_bytes``; those parts counted at ``weight_bytes``)."""

import dataclasses
import math

import pytest
from decode_settings import decode_settings
from hypothesis import given, settings
from hypothesis import strategies as st

import analysis
import topologies
from analysis import _decode as D
from analysis._serving import _chip_weight_bytes
from fabric import SpecError

FORMATS = analysis.WEIGHT_FORMATS
BF16 = 2.0


def _total_by_parts(m, routed):
    """Brute force: every part's weights at its own bytes, written out from the parts."""
    return (m.layers * m.attention_params * m.weight_bytes
            + (m.dense_layers * m.dense_ffn_params
               + m.moe_layers * m.shared_experts * m.expert_params) * m.ffn_bytes_per_weight
            + m.moe_layers * routed * m.expert_params * m.expert_weight_bytes
            + (m.moe_layers * m.router_params + m.head_params) * BF16)


@pytest.mark.parametrize("name", sorted(analysis.MODELS))
def test_every_preset_keeps_router_head_and_embedding_bf16(name):
    m = analysis.model_config(name)
    assert analysis.UNQUANTIZED_PARTS == ("router", "head", "embedding")
    for part in analysis.UNQUANTIZED_PARTS:
        assert m.part_bytes(part) == BF16 == FORMATS["bf16"].bytes_per_weight
        assert m.math_format(part if part != "embedding" else "head") == "bf16"
    assert (m.part_bytes("attention"), m.part_bytes("ffn"), m.part_bytes("experts")) == (
        m.weight_bytes, m.ffn_bytes_per_weight, m.expert_weight_bytes)
    assert m.weight_bytes_total == pytest.approx(
        _total_by_parts(m, m.routed_experts) + m.embedding_params * BF16, rel=1e-12)
    assert m.active_weight_bytes == pytest.approx(
        _total_by_parts(m, m.experts_per_token), rel=1e-12)


def test_the_fp8_releases_move_by_their_bf16_parts():
    # DeepSeek-R1: 1.96B router / head / embedding weights at 2 B instead of 1.000244 B
    m = analysis.model_config("deepseek-r1")
    assert m.unquantized_params() == 58 * (7168 * 256 + 256) + 2 * 129280 * 7168 + 7168
    assert m.weight_bytes_total / 1e9 == pytest.approx(673.15, abs=0.01)
    assert m.unquantized_params(embedding=False) == m.unquantized_params() - 129280 * 7168
    # a release that is all BF16 does not move
    glm = analysis.model_config("glm-5")
    assert glm.weight_bytes_total == pytest.approx(glm.total_params * 2, rel=1e-12)
    with pytest.raises(SpecError, match="part must be one of"):
        m.part_bytes("scores")


@settings(max_examples=40, deadline=None)
@given(base=st.sampled_from(["deepseek-v3", "kimi-k2", "deepseek-r1", "glm-5"]),
       wf=st.sampled_from(["bf16", "fp8", "fp8-block128"]),
       ef=st.sampled_from(["bf16", "fp8", "int4-g32", "nvfp4"]),
       ff=st.sampled_from([None, "bf16", "nvfp4"]))
def test_totals_are_each_part_at_its_bytes(base, wf, ef, ff):
    m = dataclasses.replace(
        analysis.model_config(base), weight_bytes=FORMATS[wf].bytes_per_weight,
        weight_format=wf, expert_format=ef, expert_weight_bytes=None, ffn_format=ff,
        ffn_weight_bytes=None if ff is None else FORMATS[ff].bytes_per_weight, mtp_format=None)
    assert m.weight_bytes_total == pytest.approx(
        _total_by_parts(m, m.routed_experts) + m.embedding_params * BF16, rel=1e-12)
    assert m.active_weight_bytes == pytest.approx(
        _total_by_parts(m, m.experts_per_token), rel=1e-12)


@pytest.mark.parametrize("name, system, layout", [
    ("deepseek-r1", "hgx-h200", "tp=8"), ("deepseek-r1", "hgx-h200", "tp=1,dp=8"),
    ("deepseek-v3", "nvl72", "tp=8,dp=9"), ("kimi-k2", "nvl72", "tp=4,dp=18"),
    ("deepseek-r1-nvfp4", "hgx-b200", "tp=8,dp=1,etp=2")])
def test_the_fullest_chip_holds_each_part_at_its_bytes(name, system, layout):
    m = analysis.model_config(name)
    fab = topologies.build(system)
    lay = analysis.parse_layout(layout, fab.n_endpoints)
    shared_split = lay.tp if lay.etp > 1 else 1
    want = (m.layers * m.attention_params_per_rank(lay.tp) * m.weight_bytes
            + m.dense_layers * m.dense_ffn_params / lay.tp * m.ffn_bytes_per_weight
            + m.moe_layers * (m.shared_experts * m.expert_params / shared_split
                              * m.ffn_bytes_per_weight
                              + math.ceil(m.routed_experts / lay.ep) * m.expert_params
                              * m.expert_weight_bytes / lay.etp
                              + m.router_params * BF16)
            + (m.embedding_params + m.head_params) / lay.tp * BF16)
    assert _chip_weight_bytes(m, fab, layout, None) == pytest.approx(want, rel=1e-9)


def test_the_step_reads_router_and_head_at_two_bytes():
    fab = topologies.build("hgx-h200")
    m = analysis.model_config("deepseek-r1")
    step = analysis.decode_step(m, fab, batch=64, context=2048, layout="tp=8",
                                hbm_efficiency=0.5)
    bw = D.fabric_chip(fab).hbm_bandwidth * 0.5
    assert step.head.weights == pytest.approx(m.head_params * BF16 / 8 / bw, rel=1e-12)
    s = decode_settings(fab, m, 64, "tp=8", hbm_efficiency=0.5)
    read, _ = D._moe_ffn_work(s, s.routing)["router"]
    assert read == pytest.approx(m.router_params * BF16 / bw, rel=1e-12)
