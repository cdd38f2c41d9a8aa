"""DeepSeek Sparse Attention in the decode model (``MLA.index_topk``: DeepSeek-V3.2, GLM-5).

A DSA layer stores every token's latent and indexer key, but its attention kernel reads only
the selected tokens' latents (``MLA.kv_read_tokens``: ``min(context + q, q x index_topk)`` per
sequence) while the lightning indexer reads every cached key (``index_head_dim`` FP8 values
and an FP32 scale per 128) and runs its score FLOPs in FP8. The references are closed forms
written out here from those definitions, the same model without an indexer (its "dense
twin"), and a brute-force union of the tokens each query token can select.
"""

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import analysis
import topologies
from analysis import (
    DECODE_HBM_EFFICIENCY,
    DSA_FAST_PATH_SKIPS,
    DSA_INDEXER_KERNELS,
    KERNEL_CLASSES,
    MLA,
    model_config,
)
from fabric import chip_spec

_FABRIC = topologies.build("switch:9,chip=b200")          # a spare chip for a failed one
_BW = chip_spec("b200").hbm_bandwidth * DECODE_HBM_EFFICIENCY.value


def _fabric(failed):
    return _FABRIC.without(chips=[failed]) if failed else _FABRIC


def _dsa(heads=64, dim=128, topk=2048, kv_bytes=None):
    """DeepSeek-V3.2 with the given indexer (and KV-cache bytes)."""
    m = model_config("deepseek-v3.2")
    att = dataclasses.replace(m.attention, index_heads=heads, index_head_dim=dim,
                              index_topk=topk)
    m = dataclasses.replace(m, attention=att)
    return m if kv_bytes is None else dataclasses.replace(m, kv_cache_bytes=kv_bytes)


def _dense(m):
    return dataclasses.replace(m, attention=dataclasses.replace(
        m.attention, index_heads=0, index_head_dim=0, index_topk=0))


def _union_read(context, q, topk):
    """Brute force: the tokens q query tokens at positions context..context+q-1 can attend
    to, each its own top-k of the tokens up to itself, at most every token once."""
    per_query = [min(context + j + 1, topk) for j in range(q)]
    return min(context + q, sum(per_query))


@settings(max_examples=200, deadline=None)
@given(context=st.integers(0, 10**6), q=st.integers(1, 8), topk=st.integers(1, 10**5))
def test_kv_read_tokens_is_the_brute_force_union(context, q, topk):
    att = dataclasses.replace(model_config("deepseek-v3.2").attention, index_topk=topk)
    assert att.kv_read_tokens(context, q) == _union_read(context, q, topk)
    assert _dense(model_config("deepseek-v3.2")).attention.kv_read_tokens(context, q) == (
        context + q)


@settings(max_examples=60, deadline=None)
@given(tokens=st.integers(1, 300), topk=st.integers(1, 400), ih=st.integers(1, 8),
       idim=st.integers(1, 64))
def test_prefill_score_flops_by_brute_force(tokens, topk, ih, idim):
    att = MLA(4, 8, 16, 3, 2, 5, index_heads=ih, index_head_dim=idim, index_topk=topk)
    main = sum(2 * 4 * (3 + 2 + 5) * min(t, topk) for t in range(1, tokens + 1))
    indexer = sum(2 * ih * idim * t for t in range(1, tokens + 1))
    assert att.prefill_score_flops(tokens) == main + indexer


@settings(max_examples=40, deadline=None)
@given(batch=st.integers(1, 16), context=st.integers(0, 40000), q=st.integers(1, 4),
       topk=st.sampled_from([64, 512, 2048, 8192]), heads=st.sampled_from([8, 32, 64]),
       dim=st.sampled_from([64, 128]), kv_bytes=st.sampled_from([1.0, 2.0]),
       layout=st.sampled_from(["tp=8,dp=1", "tp=4,dp=2", "tp=2,dp=4"]),
       engine=st.sampled_from(["trtllm", "vllm", "sglang"]),
       failed=st.sampled_from([None, "chip3"]))
def test_step_reads_the_selected_latents_and_every_indexer_key(batch, context, q, topk, heads,
                                                                dim, kv_bytes, layout, engine,
                                                                failed):
    m = _dsa(heads, dim, topk, kv_bytes)
    f = _fabric(failed)
    kw = {"context": context, "layout": layout, "tokens_per_sequence": q, "engine": engine}
    s = analysis.decode_step(m, f, batch=batch, **kw)
    dp = s.layout.dp
    b = -(-batch // dp)
    # TensorRT-LLM's short-sequence fast path reads no indexer key (tech blog 15, PR-9524)
    fast = engine == "trtllm" and context + q <= topk
    latent = b * min(context + q, q * topk) * 576 * kv_bytes
    keys = 0.0 if fast else b * (context + q) * dim * (1 + 4 / 128)
    for layer in s.layers:
        assert layer.kv_cache * _BW == pytest.approx(latent + keys, rel=1e-12)
    # the memory fit stores every token: latent and indexer key, in every layer
    s0 = analysis.decode_step(m, f, batch=batch, **{**kw, "context": 0})
    per_token = 576 * kv_bytes + dim * (1 + 4 / 128)
    assert s.hbm_per_chip - s0.hbm_per_chip == pytest.approx(61 * b * context * per_token,
                                                             rel=1e-9, abs=1e-3)
    # attention compute: the projections (the indexer's whole on each rank), the main scores
    # over min(context, topk) tokens split over the heads' ranks, the indexer's in FP8
    tp, t = s.layout.tp, b * q
    chip = chip_spec("b200")
    att = m.attention
    proj = 2 * m.attention_params_per_rank(tp) if tp > 1 else 2 * m.attention_params
    scores = 2 * 128 * min(context, topk) * (2 * 512 + 64) / tp
    idx = 0 if fast else 2 * heads * dim * context
    want = (t * proj / chip.peak(chip.gemm_format(m.math_format("attention")))
            + t * scores / chip.peak("bf16") + t * idx / chip.peak("fp8"))
    if engine == "trtllm" and kv_bytes == 1.0:      # TensorRT-LLM's FP8 MLA: FP8 scores
        want += t * scores * (1 / chip.peak("fp8") - 1 / chip.peak("bf16"))
    assert s.layers[-1].attention_compute == pytest.approx(want, rel=1e-9)
    assert att.index_key_bytes_per_token == dim * (1 + 4 / 128)


@pytest.mark.parametrize("context", [100_000, 250_000])
def test_long_context_latent_read_falls_to_topk(context):
    # past index_topk the latent read stops growing with the context; only the indexer's
    # key read (132 B per token) does, and the dense twin reads every latent
    m, f = model_config("deepseek-v3.2"), _fabric(None)
    kw = {"batch": 2, "layout": "tp=8,dp=1", "engine": "vllm"}
    near = analysis.decode_step(m, f, context=context, **kw).layers[-1].kv_cache
    far = analysis.decode_step(m, f, context=context + 50_000, **kw).layers[-1].kv_cache
    assert (far - near) * _BW == pytest.approx(2 * 50_000 * 132, rel=1e-12)
    sparse_latent = near * _BW - 2 * (context + 1) * 132
    assert sparse_latent == pytest.approx(2 * 2048 * 576 * 2, rel=1e-12)
    dense = analysis.decode_step(_dense(m), f, context=context, **kw).layers[-1].kv_cache
    assert dense * _BW == pytest.approx(2 * (context + 1) * 576 * 2, rel=1e-12)
    assert near < dense         # 31.1 vs 230 MB per layer at 100k tokens


@settings(max_examples=30, deadline=None)
@given(batch=st.integers(1, 8), context=st.integers(0, 3000), q=st.integers(1, 3),
       engine=st.sampled_from(["trtllm", "vllm", "sglang"]), cuda_graphs=st.booleans())
def test_a_topk_covering_the_cache_reads_what_dense_reads(batch, context, q, engine,
                                                          cuda_graphs):
    m, f = _dsa(topk=context + q), _fabric(None)
    kw = {"batch": batch, "context": context, "layout": "tp=8,dp=1", "tokens_per_sequence": q,
          "engine": engine, "cuda_graphs": cuda_graphs}
    s = analysis.decode_step(m, f, **kw)
    d = analysis.decode_step(_dense(m), f, **kw)
    # every key is selected: TensorRT-LLM takes its fast path (no logits, top-k, key read)
    fast = engine == "trtllm"
    keys = 0.0 if fast else batch * (context + q) * 128 * (1 + 4 / 128)
    for ls, ld in zip(s.layers, d.layers, strict=True):
        assert (ls.kv_cache - ld.kv_cache) * _BW == pytest.approx(keys, rel=1e-9, abs=1e-3)
        # the indexer's kernels, as listed (vLLM's, for every engine), less the fast path's
        assert ls.kernels - ld.kernels == len(DSA_INDEXER_KERNELS) - (
            len(DSA_FAST_PATH_SKIPS) if fast else 0)
        assert ls.attention_weights > ld.attention_weights     # the replicated indexer
    assert s.time > d.time      # the same latent read plus the indexer's work


@pytest.mark.parametrize("engine", ["trtllm", "vllm", "sglang"])
@pytest.mark.parametrize("cuda_graphs", [True, False])
def test_indexer_kernels_run_before_the_attention_kernel(engine, cuda_graphs):
    m = model_config("glm-5")
    lists = analysis.step_kernel_lists(m, "b200", engine=engine, cuda_graphs=cuda_graphs,
                                       tp=8)
    dense = analysis.step_kernel_lists(_dense(m), "b200", engine=engine,
                                       cuda_graphs=cuda_graphs, tp=8)
    mla = list(lists["mla"])
    at = next(i for i, n in enumerate(mla) if KERNEL_CLASSES[n] == "attention")
    assert tuple(mla[at - len(DSA_INDEXER_KERNELS):at]) == DSA_INDEXER_KERNELS
    assert mla[:at - len(DSA_INDEXER_KERNELS)] + mla[at:] == list(dense["mla"])
    assert {k: v for k, v in lists.items() if k != "mla"} == {
        k: v for k, v in dense.items() if k != "mla"}


def test_glm5_runs_with_its_indexer_on_a_degraded_rack():
    f = topologies.build("nvl72").without(chips=["chip5"])
    s = analysis.decode_step("glm-5", f, batch=64, context=32768, layout="tp=8,dp=8")
    d = analysis.decode_step(_dense(model_config("glm-5")), f, batch=64, context=32768,
                             layout="tp=8,dp=8")
    assert s.time < d.time               # 2048 of 32769 latents read per sequence
    assert s.hbm_per_chip > d.hbm_per_chip     # and every indexer key stored


@pytest.mark.parametrize("engine", ["trtllm", "vllm", "sglang"])
def test_trtllm_short_sequence_fast_path_ends_past_topk(engine):
    # up to index_topk tokens per sequence TensorRT-LLM skips the indexer's logits and top-k
    # (blog 15, PR-9524); one token more and they run; the other engines always run them;
    # the keys are stored either way
    m, f = _dsa(topk=1024), _fabric(None)
    kw = {"batch": 4, "layout": "tp=8,dp=1", "engine": engine}
    at = analysis.decode_step(m, f, context=1023, **kw)           # 1023 + 1 = topk
    past = analysis.decode_step(m, f, context=1024, **kw)
    short = engine == "trtllm"
    la, lp = at.layers[-1], past.layers[-1]
    assert lp.kernels - la.kernels == (len(DSA_FAST_PATH_SKIPS) if short else 0)
    assert la.kv_cache * _BW == pytest.approx(
        4 * 1024 * 576 * 2 + (0 if short else 4 * 1024 * 132), rel=1e-12)
    assert lp.kv_cache * _BW == pytest.approx(4 * 1024 * 576 * 2 + 4 * 1025 * 132, rel=1e-12)
    per_token = 61 * 4 * (576 * 2 + 132)
    assert past.hbm_per_chip - at.hbm_per_chip == pytest.approx(per_token, rel=1e-9)


@pytest.mark.parametrize("engine", ["trtllm", "vllm"])
def test_indexer_logits_kernel_runs_at_least_its_published_floor(engine):
    # DeepGEMM's paged MQA logits at batch 1 takes ~4.2 us (TensorRT-LLM PR #14133), far more
    # than its key read at 32k keys (32,769 x 132 B at 0.78 of 8 TB/s = 0.69 us): each DSA
    # layer's logits kernel costs its boundary plus the floor less an empty kernel
    m = model_config("deepseek-v3.2")
    kw = {"batch": 1, "context": 32768, "layout": "tp=8,dp=1", "engine": engine}
    floors = {k: p.value for k, p in analysis.KERNEL_FLOORS.items()}
    assert floors["indexer"] == pytest.approx(4.2e-6)
    on = analysis.decode_step(m, _fabric(None), **kw)
    off = analysis.decode_step(m, _fabric(None), kernel_floors={
        k: v for k, v in floors.items() if k != "indexer"}, **kw)
    read = 32769 * 128 * (1 + 4 / 128) / _BW             # every cached key, FP8 + FP32 scale
    flops = 32769 * 2 * 64 * 128 / (chip_spec("b200").peak("fp8"))
    r = max(read, flops)
    gap = (floors["indexer"] - analysis.EMPTY_KERNEL_TIME.value) - r
    assert gap > 2.5e-6
    for x, y in zip(on.layers, off.layers, strict=True):
        assert x.attention - y.attention == pytest.approx(gap, rel=1e-6)
    p = {q.name: q for q in on.parameters}["decode.kernel_floor.indexer"]
    assert "#14133" in p.source and p.unit == "s"
