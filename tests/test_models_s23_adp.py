"""Session 23 (models): TensorRT-LLM's attention-DP MoE exchange is an allgather of every
rank's tokens and a reducescatter of the outputs (``analysis._decode.trtllm_gathers``), not an
all-to-all, wherever TensorRT-LLM does not run its MNNVL all-to-all (a Grace host with
``ep > top_k``). Each test below fails on the parent commit, which priced an all-to-all."""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import analysis
import topologies
from analysis import _decode as dec
from fabric import SpecError, chip_spec

B200, H200 = "hgx-b200", "hgx-h200"


@pytest.fixture(scope="module")
def b200():
    return topologies.build(B200)


def _cost(fab, op, nbytes, n, **kw):
    """The brute-force reference: the collectives model on the first ``n`` chips."""
    return float(analysis.cost(fab, op, nbytes, ranks=list(fab.endpoints[:n]), **kw).time)


def test_which_configurations_gather():
    m = analysis.model_config("deepseek-r1-nvfp4")
    lay = dec.parse_layout
    b2, gb = chip_spec("b200"), chip_spec("gb200")
    assert dec.trtllm_gathers(m, b2, lay("tp=1,dp=8", 8), "trtllm")
    # a Grace host runs the MNNVL all-to-all only with more ranks than experts per token
    assert dec.trtllm_gathers(m, gb, lay("tp=1,dp=8", 72), "trtllm")
    assert not dec.trtllm_gathers(m, gb, lay("tp=1,dp=16", 72), "trtllm")
    assert dec.trtllm_gathers(m, b2, lay("tp=1,dp=16", 16), "trtllm")      # no Grace host
    # another engine, a named exchange kernel, attention TP, experts split: no gather
    assert not dec.trtllm_gathers(m, b2, lay("tp=1,dp=8", 8), "vllm")
    assert not dec.trtllm_gathers(m, b2, lay("tp=1,dp=8", 8), "trtllm", "one-sided")
    assert not dec.trtllm_gathers(m, b2, lay("tp=2,dp=4", 8), "trtllm")
    assert not dec.trtllm_gathers(m, b2, lay("tp=8,dp=1,etp=8", 8), "trtllm")


def test_nvfp4_gathers_fp4_tokens_fp8_block_gathers_bf16():
    r1, fp4 = analysis.model_config("deepseek-r1"), analysis.model_config("deepseek-r1-nvfp4")
    assert dec.trtllm_gather_element_bytes(fp4, chip_spec("b200")) == 0.5625
    assert dec.trtllm_gather_element_bytes(r1, chip_spec("h200")) == r1.activation_bytes == 2


def test_decode_step_prices_the_gather_and_the_scatter(b200):
    """The B200 max-throughput rows' step: 384 tokens a rank, NVFP4 tokens gathered with
    8 bytes of routing per selected expert, BF16 outputs reduce-scattered."""
    step = analysis.decode_step("deepseek-r1-nvfp4", b200, batch=3072, context=2048,
                                layout="tp=1,dp=8", engine="trtllm", runtime="nccl")
    moe = step.layers[-1]
    part = 384 * (7168 * 0.5625 + 8 * (4 + 4))
    assert moe.dispatch == pytest.approx(_cost(b200, "all-gather", 8 * part, 8, runtime="nccl"))
    assert moe.combine == pytest.approx(
        _cost(b200, "reduce-scatter", 8 * 384 * 7168 * 2, 8, runtime="nccl"))
    # not the all-to-all of the routed copies the parent priced (both phases at one size)
    assert moe.dispatch != pytest.approx(moe.combine, rel=0.05)
    # and the step says which exchange it priced
    src = next(p.source for p in step.parameters if p.name == "decode.ep_kernel")
    assert "allgather + reducescatter" in src


def test_h200_fp8_rows_gather_bf16():
    f = topologies.build(H200)
    step = analysis.decode_step("deepseek-r1", f, batch=1024, context=2048, layout="tp=1,dp=8",
                                engine="trtllm", runtime="ideal")
    part = 128 * (7168 * 2 + 8 * 8)
    assert step.layers[-1].dispatch == pytest.approx(
        _cost(f, "all-gather", 8 * part, 8, runtime="ideal"))


def test_a_named_kernel_or_another_engine_keeps_its_exchange(b200):
    kw = {"batch": 256, "context": 1024, "layout": "tp=1,dp=8", "runtime": "ideal"}
    vllm = analysis.decode_step("deepseek-r1-nvfp4", b200, engine="vllm", **kw).layers[-1]
    trt = analysis.decode_step("deepseek-r1-nvfp4", b200, engine="trtllm", **kw).layers[-1]
    # vLLM's step keeps the all-to-all of the routed copies (dispatch and combine alike)
    assert vllm.dispatch == pytest.approx(vllm.combine)
    assert trt.dispatch != pytest.approx(vllm.dispatch)
    named = analysis.decode_step("deepseek-r1-nvfp4", b200, engine="trtllm",
                                 ep_kernel="all-to-allv", **kw).layers[-1]
    assert named.dispatch != pytest.approx(trt.dispatch)


@settings(max_examples=12, deadline=None)
@given(per_rank=st.integers(1, 300), dp=st.sampled_from([4, 8]),
       skew=st.sampled_from([0.0, 0.6]), degrade=st.booleans())
def test_gather_matches_the_collectives_on_any_fabric(per_rank, dp, skew, degrade):
    """Against the collectives model called directly: the step's dispatch and combine are the
    all-gather and reduce-scatter of every rank's tokens whatever the routing skew, on an
    intact node and on one whose first chip lost a switch link (never faster there)."""
    f = topologies.build("switch:8,planes=2,chip=b200")
    g = f.without(links=[("chip0", "sw0")]) if degrade else f
    m = analysis.model_config("deepseek-r1-nvfp4")
    step = analysis.decode_step(m, g, batch=per_rank * dp, context=512, layout=f"tp=1,dp={dp}",
                                engine="trtllm", runtime="ideal", skew=skew)
    moe = step.layers[-1]
    part = per_rank * (m.hidden * 0.5625 + m.experts_per_token * 8)
    gather = _cost(g, "all-gather", dp * part, dp, runtime="ideal")
    scatter = _cost(g, "reduce-scatter", dp * per_rank * m.hidden * 2, dp, runtime="ideal")
    assert moe.dispatch == pytest.approx(gather)
    assert moe.combine == pytest.approx(scatter)
    if degrade:
        whole = _cost(f, "all-gather", dp * part, dp, runtime="ideal")
        assert moe.dispatch >= whole * (1 - 1e-12)


def test_prompt_pass_gathers_too(b200):
    m = analysis.model_config("deepseek-r1-nvfp4")
    kw = {"isl": 1024, "layout": "tp=1,dp=8", "runtime": "ideal"}
    trt = analysis.prefill_time(m, b200, engine="trtllm", **kw)
    g, r = dec.gather_exchange_seconds(b200, m, 1024, range(8), 0.5625, 2, runtime="ideal")
    # dp prompts at once share the pass (one_at_a_time False): the pass's comm over dp
    assert trt.comm == pytest.approx(m.moe_layers * (g + r) / 8)
    # one prompt alone: its own rank's 1024 rows are the whole gather (equal parts of it)
    one = analysis.prefill_time(m, b200, engine="trtllm", one_at_a_time=True, **kw)
    g1, r1 = dec.gather_exchange_seconds(b200, m, 1024 / 8, range(8), 0.5625, 2,
                                         runtime="ideal")
    assert one.comm == pytest.approx(m.moe_layers * (g1 + r1))
    # a named exchange kernel: the pass keeps the collective runtime's all-to-all
    named = analysis.prefill_time(m, b200, engine="trtllm", ep_kernel="one-sided", **kw)
    other = analysis.prefill_time(m, b200, engine=None, **kw)
    assert named.comm == pytest.approx(other.comm)
    assert not math.isclose(named.comm, trt.comm)
    with pytest.raises(SpecError, match="nope"):
        analysis.prefill_time(m, b200, engine="trtllm", ep_kernel="nope", **kw)


def test_the_cli_names_the_exchange_it_priced(capsys):
    from analysis._cli import main

    main(["decode", "hgx-b200", "--model", "deepseek-r1-nvfp4", "--layout", "tp=1,dp=8",
          "--batch", "64"])
    assert "MoE exchange TensorRT-LLM's allgather + reducescatter" in capsys.readouterr().out
    main(["decode", "hgx-b200", "--model", "deepseek-r1-nvfp4", "--layout", "tp=1,dp=8",
          "--batch", "64", "--engine", "vllm"])
    assert "MoE exchange all-to-all" in capsys.readouterr().out
