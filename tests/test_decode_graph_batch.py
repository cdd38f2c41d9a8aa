"""A decode step replayed from a CUDA graph padded to a captured size
(``decode_step(graph_batch=...)``, vLLM's CUDA-graph batch padding).

The padded rows run through every weight GEMM, the router, the routed experts and the
collectives; the attention kernel reads the KV cache and computes scores for the real
sequences only; tokens/s count the real batch. The references here are other steps: the
step at ``batch=graph_batch`` (everything but attention), the step at the real batch (KV
cache and memory fit), and, while every attention GEMM is memory-bound (a GEMM's time then
does not depend on its token count), the unpadded step's attention block.
"""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import analysis
import topologies
from fabric import SpecError


def _fabric(failed):
    f = topologies.build("switch:9,chip=b200")       # a spare chip: a failed one is replaced
    return f.without(chips=[failed]) if failed else f


_LAYER_PARTS = ("ffn_weights", "ffn_compute", "ffn", "dispatch", "combine", "tp_allreduce",
                "comm", "exposed_comm", "launch", "kernels", "active_experts",
                "active_experts_chip")


@settings(max_examples=25, deadline=None)
@given(model=st.sampled_from(["deepseek-r1-nvfp4", "deepseek-v3", "kimi-k2.5-int4"]),
       layout=st.sampled_from(["tp=8,dp=1", "tp=8,dp=1,etp=2", "tp=4,dp=2", "tp=2,dp=4"]),
       engine=st.sampled_from(["trtllm", "vllm", "sglang"]),
       batch=st.integers(1, 12), pad=st.integers(0, 12), q=st.integers(1, 4),
       context=st.integers(0, 4096), failed=st.sampled_from([None, "chip2"]))
def test_padded_rows_run_the_gemms_but_not_the_kv_cache(model, layout, engine, batch, pad, q,
                                                        context, failed):
    f = _fabric(failed)
    g = batch + pad
    kw = {"context": context, "layout": layout, "tokens_per_sequence": q, "engine": engine,
          "runtime": "symmetric-memory"}
    padded = analysis.decode_step(model, f, batch=batch, graph_batch=g, **kw)
    at_graph = analysis.decode_step(model, f, batch=g, **kw)      # every row real
    real = analysis.decode_step(model, f, batch=batch, **kw)      # no padding
    assert padded.graph_batch == g and real.graph_batch == batch
    # the GEMMs, routing, experts, collectives and head run the graph's rows
    for lp, lg in zip(padded.layers, at_graph.layers, strict=True):
        for part in _LAYER_PARTS:
            assert getattr(lp, part) == pytest.approx(getattr(lg, part), rel=1e-12,
                                                      abs=1e-15), part
    assert padded.head == at_graph.head
    # the KV cache is the real sequences'
    for lp, lr in zip(padded.layers, real.layers, strict=True):
        assert lp.kv_cache == pytest.approx(lr.kv_cache, rel=1e-12, abs=1e-18)
        assert lp.attention_weights == lr.attention_weights
    assert padded.hbm_per_chip == pytest.approx(real.hbm_per_chip, rel=1e-12)
    # every attention GEMM memory-bound (intensity ~ tokens per group, far below the ridge):
    # their time does not depend on the rows, so attention is the unpadded step's; unless a
    # GEMM is priced at TensorRT-LLM's measured time at its rows (session 22, listed among the
    # step's parameters): then padding never makes attention cheaper
    measured = any(p.name.startswith(("decode.trtllm_gemm_time", "decode.trtllm_mla_bmm_time"))
                   for p in padded.parameters + real.parameters)
    if math.ceil(g / padded.layout.dp) * q <= 64:
        for lp, lr in zip(padded.layers, real.layers, strict=True):
            if measured:
                assert lp.attention >= lr.attention * (1 - 1e-12)
            else:
                assert lp.attention == pytest.approx(lr.attention, rel=1e-12, abs=1e-15)
    # tokens/s count the real batch
    assert padded.tokens_per_s_system == pytest.approx(batch * q / padded.time, rel=1e-12)
    assert padded.tokens_per_s_user == pytest.approx(q / padded.time, rel=1e-12)
    # padding costs something only when it adds rows, and never more than real rows
    assert real.time <= padded.time * (1 + 1e-12)
    assert padded.time <= at_graph.time * (1 + 1e-12)


def test_no_padding_is_byte_identical():
    f = topologies.build("hgx-h200")
    kw = {"batch": 5, "context": 8192, "layout": "tp=8", "engine": "vllm"}
    a = analysis.decode_step("kimi-k2.5-int4", f, **kw)
    b = analysis.decode_step("kimi-k2.5-int4", f, graph_batch=5, **kw)
    assert a == b


def test_vllm_pads_five_users_to_the_graph_of_eight():
    # Kimi K2.5 INT4 on 8 H200, 5 users padded to vLLM's captured size 8: the routed experts
    # of 8 tokens are read (more experts active), the KV cache of 5 sequences
    f = topologies.build("hgx-h200")
    kw = {"context": 8192, "layout": "tp=8", "engine": "vllm"}
    five = analysis.decode_step("kimi-k2.5-int4", f, batch=5, **kw)
    padded = analysis.decode_step("kimi-k2.5-int4", f, batch=5, graph_batch=8, **kw)
    eight = analysis.decode_step("kimi-k2.5-int4", f, batch=8, **kw)
    moe = padded.layers[-1]
    assert moe.active_experts == pytest.approx(eight.layers[-1].active_experts)
    assert moe.active_experts > five.layers[-1].active_experts
    assert moe.kv_cache == pytest.approx(five.layers[-1].kv_cache)
    assert five.time < padded.time < eight.time


def test_bad_graph_batch_is_named():
    f = topologies.build("hgx-h200")
    kw = {"batch": 8, "context": 1024, "layout": "tp=8"}
    with pytest.raises(SpecError, match=r"graph_batch=4 is smaller than batch=8"):
        analysis.decode_step("kimi-k2.5-int4", f, graph_batch=4, **kw)
    with pytest.raises(SpecError, match="graph_batch must be an integer >= 1"):
        analysis.decode_step("kimi-k2.5-int4", f, graph_batch=0, **kw)
    for bad in (True, 8.0, "8"):
        with pytest.raises(TypeError, match="graph_batch must be an int"):
            analysis.decode_step("kimi-k2.5-int4", f, graph_batch=bad, **kw)
    with pytest.raises(SpecError, match="cuda_graphs=False"):
        analysis.decode_step("kimi-k2.5-int4", f, graph_batch=16, cuda_graphs=False, **kw)
