"""GEMM compute at the peak of the math format each GEMM runs in.

Chips carry a dense tensor peak per math format (fabric/_chips.py, datasheets); weight
formats say which math their GEMMs run in (analysis/_models.py: FP8 W8A8 -> FP8, NVFP4
W4A4 -> FP4, INT4 W4A16 -> BF16); the decode step prices each part's GEMM FLOPs at the
chip's peak of that format, BF16 where the chip lacks it. Checked by hand on a toy model.
"""

import dataclasses
import pathlib

import networkx as nx
import pytest
from fake_collective import FakeResult
from fake_collective import linear_all_reduce as _cost
from hypothesis import given, settings
from hypothesis import strategies as st

from analysis import MODELS, WEIGHT_FORMATS, decode_step, grouped_gemm_efficiency, model_config
from analysis._models import load_model_toml
from fabric import ChipSpec, Fabric, SpecError

SMALL = load_model_toml(pathlib.Path(__file__).parent / "data" / "model_small.toml")
# FP8 attention (weight_bytes 1), NVFP4 dense FFNs, shared and routed experts
MIXED = dataclasses.replace(SMALL, name="small-mixed", weight_bytes=1.0, weight_format="fp8",
                            ffn_format="nvfp4", expert_format="nvfp4",
                            expert_weight_bytes=None)
BF16, FP8, FP4 = 1e9, 2e9, 4e9      # FLOP/s: slow, so that compute dominates the roofline


def _chip(tensor):
    return ChipSpec("toy", 10**12, 1e15, BF16, 1e15 / 3, "test: round numbers",
                    tensor_flops=tensor)


def _fabric(chip, n=2):
    G = nx.complete_graph(n)
    nx.set_node_attributes(G, "chip", "kind")
    nx.set_edge_attributes(G, 1e9, "bandwidth")
    nx.set_edge_attributes(G, 1e-7, "latency")
    return Fabric.from_graph(G, chip=chip, name=f"toy{n}")


def _step(model, chip, batch=64, context=16, **kw):
    # tp=2 with the experts split 2 ways (etp=2): every chip computes every token, routed
    # token-expert pairs = batch x top-k, shared experts split over the 2 chips
    return decode_step(model, _fabric(chip), batch=batch, context=context,
                       layout="tp=2,dp=1,etp=2", collective=_cost, cuda_graphs=False,
                       kernel_floors={}, gemm_fixed_time=0.0, **kw)


def test_presets_run_their_gemms_in_the_sourced_math():
    want = {   # attention, dense FFN + shared experts, routed experts
        "kimi-k2": ("fp8", "fp8", "fp8"),                 # FP8 release, W8A8
        "kimi-k2.5-int4": ("bf16", "bf16", "bf16"),       # INT4 W4A16: BF16 math
        "kimi-k2.5-nvfp4": ("bf16", "bf16", "fp4"),       # routed experts NVFP4 W4A4
        "deepseek-v3": ("fp8", "fp8", "fp8"),
        "deepseek-r1": ("fp8", "fp8", "fp8"),             # block-128 FP8
        "deepseek-v3.2": ("fp8", "fp8", "fp8"),           # DeepSeek-V3.2: block-128 FP8
        "deepseek-r1-nvfp4": ("bf16", "fp4", "fp4"),      # blog 1: attention BF16
        "hypothetical-2.8t": ("fp8", "fp8", "fp8"),
        "glm-5": ("bf16", "bf16", "bf16"),                # zai-org/GLM-5: BF16 release
    }
    assert set(want) == set(MODELS)
    for name, parts in want.items():
        m = model_config(name)
        assert tuple(m.math_format(p) for p in ("attention", "ffn", "experts")) == parts, name
        # router gate, head and attention scores stay BF16 (DeepSeek-V3 report sec. 3.3.1)
        assert {m.math_format(p) for p in ("router", "head", "scores")} == {"bf16"}
    assert {f.name: f.math for f in WEIGHT_FORMATS.values()} == {
        "bf16": "bf16", "fp8": "fp8", "fp8-block128": "fp8", "int4-g32": "bf16",
        "nvfp4": "fp4"}
    assert all(f.math_source for f in WEIGHT_FORMATS.values())


def test_compute_times_by_hand():
    m, t, tp = MIXED, 64, 2
    k = m.experts_per_token
    for tensor, fp8, fp4 in ((("fp8", FP8), ("fp4", FP4)), FP8, FP4), \
                            ((("fp8", FP8),), FP8, BF16):    # no FP4 tensor cores: BF16
        r = _step(m, _chip(tensor), batch=t)
        att = t * 2 * m.attention_params / tp / fp8 \
            + t * m.attention.score_flops_per_token(16) / tp / BF16
        assert r.layers[0].attention_compute == pytest.approx(att, rel=1e-12)
        assert r.layers[0].ffn_compute == pytest.approx(
            t * 2 * m.dense_ffn_params / tp / fp4, rel=1e-12)
        moe = (t * 2 * m.router_params / BF16
               + t * 2 * m.shared_experts * m.expert_params / tp / fp4
               + t * k * 2 * m.expert_params / tp / fp4)
        assert r.layers[1].ffn_compute == pytest.approx(moe, rel=1e-12)
        assert r.head.compute == pytest.approx(t * 2 * m.head_params / tp / BF16, rel=1e-12)
        # compute-bound at this batch: the block times are at least the compute
        assert r.layers[1].ffn >= r.layers[1].ffn_compute


def test_compute_efficiency_scales_every_format():
    a = _step(MIXED, _chip((("fp8", FP8), ("fp4", FP4))))
    b = _step(MIXED, _chip((("fp8", FP8), ("fp4", FP4))), compute_efficiency=0.5)
    for x, y in zip(a.layers, b.layers):
        assert y.attention_compute == pytest.approx(2 * x.attention_compute, rel=1e-12)
        assert y.ffn_compute == pytest.approx(2 * x.ffn_compute, rel=1e-12)


def test_bf16_models_are_unchanged_bit_for_bit_by_narrower_peaks():
    # a model whose GEMMs are all BF16 (the INT4 W4A16 preset's kind) reads only the BF16
    # peak: adding FP8/FP4 tensor cores to the chip changes nothing, bit for bit
    plain, rich = _chip(()), _chip((("fp8", FP8), ("fp4", FP4), ("int8", FP8)))
    for model in (SMALL, dataclasses.replace(SMALL, weight_format="bf16")):
        assert _step(model, plain) == dataclasses.replace(_step(model, rich),
                                                          parameters=_step(model, plain)
                                                          .parameters)


@settings(max_examples=25, deadline=None)
@given(att=st.sampled_from(["bf16", "fp8"]), ffn=st.sampled_from(["fp8", "nvfp4", "bf16"]),
       exp=st.sampled_from(["fp8", "nvfp4", "int4-g32", "bf16"]),
       fp8=st.floats(1.0, 8.0), fp4=st.floats(1.0, 8.0), batch=st.integers(1, 300))
def test_faster_tensor_cores_never_slow_a_step(att, ffn, exp, fp8, fp4, batch):
    wb = WEIGHT_FORMATS[att].bytes_per_weight
    m = dataclasses.replace(SMALL, weight_bytes=wb, weight_format=att, ffn_format=ffn,
                            ffn_weight_bytes=None, expert_format=exp,
                            expert_weight_bytes=None)
    base = _step(m, _chip(()), batch=batch)
    fast = _step(m, _chip((("fp8", fp8 * BF16), ("fp4", max(fp8, fp4) * BF16))), batch=batch)
    for x, y in zip(base.layers, fast.layers):
        assert y.attention_compute <= x.attention_compute * (1 + 1e-12)
        assert y.ffn_compute <= x.ffn_compute * (1 + 1e-12)
    assert fast.time <= base.time * (1 + 1e-12)
    # brute force: the routed experts' compute is the token-expert pairs at the format's peak
    rate = {"fp8": fp8, "nvfp4": max(fp8, fp4), "int4-g32": 1.0, "bf16": 1.0}[exp] * BF16
    sh = {"fp8": fp8, "nvfp4": max(fp8, fp4), "bf16": 1.0}[ffn] * BF16
    moe = (batch * 2 * m.router_params / BF16
           + batch * 2 * m.shared_experts * m.expert_params / 2 / sh
           + batch * m.experts_per_token * 2 * m.expert_params / 2 / rate)
    assert fast.layers[1].ffn_compute == pytest.approx(moe, rel=1e-9)


def test_format_fields_are_checked():
    with pytest.raises(SpecError, match="weight_bytes=2.0 disagrees with weight_format='fp8'"):
        dataclasses.replace(SMALL, weight_format="fp8")
    with pytest.raises(SpecError, match="weight_format must be one of"):
        dataclasses.replace(SMALL, weight_format="fp6")
    with pytest.raises(SpecError, match="ffn_weight_bytes=2.0 disagrees with ffn_format"):
        dataclasses.replace(SMALL, ffn_weight_bytes=2.0, ffn_format="nvfp4")
    # ffn_format alone sets the bytes; the same format as the weights keeps them following
    assert dataclasses.replace(SMALL, ffn_format="nvfp4").ffn_bytes_per_weight == 0.5625
    same = dataclasses.replace(SMALL, weight_format="bf16", ffn_format="bf16")
    assert same.ffn_weight_bytes is None
    with pytest.raises(SpecError, match="part must be one of"):
        SMALL.math_format("mlp")
    with pytest.raises(SpecError, match="math must be one of"):
        dataclasses.replace(WEIGHT_FORMATS["fp8"], math="fp16")
    # a config of no stated format prices its GEMMs in BF16, as before formats existed
    assert {SMALL.math_format(p) for p in ("attention", "ffn", "experts")} == {"bf16"}


# -- published compute efficiencies (analysis/_gemm.py) -------------------------------------

def test_deepgemm_efficiencies_by_hand():
    from analysis import DEEPGEMM_H800_FP8, GEMM_COMPUTE_EFFICIENCY, gemm_compute_efficiency

    # DeepGEMM README at 327ec92 (H800 SXM5, FP8): the rows above the ridge point
    # 1978.9 TFLOPS / 3.35 TB/s = 590.7 FLOP/B, counted by hand (intensity from the shape:
    # FP8 A and B, BF16 D): the five M=4096 normal rows but 4096x32768x512 (478 FLOP/B),
    # the masked rows of 1024 and 512 tokens per group (not 256: 452 and 398 FLOP/B)
    dense = [(4096, 2112, 7168, 1127), (4096, 24576, 1536, 1212), (4096, 7168, 16384, 1520),
             (4096, 4096, 7168, 1410), (4096, 7168, 2048, 1168)]
    grouped = [(1, 1024, 4096, 7168, 1233), (1, 1024, 7168, 2048, 925),
               (2, 512, 4096, 7168, 1040), (2, 512, 7168, 2048, 916)]

    def eff(rows):   # FLOPs over time over the dense FP8 peak
        flops = [2 * g * m * n * k for g, m, n, k, _ in rows]
        time = [f / (t * 1e12) for f, (*_, t) in zip(flops, rows)]
        return sum(flops) / sum(time) / 1978.9e12

    # the contiguous-layout table (prefill): every row far above the ridge
    contiguous = [(4, 8192, 4096, 7168, 1346), (4, 8192, 7168, 2048, 1214),
                  (8, 4096, 4096, 7168, 1346), (8, 4096, 7168, 2048, 1214)]
    want = {"dense": eff([(1, *r) for r in dense]), "grouped": eff(grouped),
            "contiguous": eff(contiguous)}
    assert want["dense"] == pytest.approx(0.6978, abs=1e-4)
    assert want["grouped"] == pytest.approx(0.5303, abs=1e-4)
    assert want["contiguous"] == pytest.approx(0.6564, abs=1e-4)
    for kind, v in want.items():
        p = GEMM_COMPUTE_EFFICIENCY[("hopper", "fp8", kind)]
        assert p.value == pytest.approx(v, rel=1e-12) and "DeepGEMM" in p.source
        assert gemm_compute_efficiency("hopper", "fp8", kind) is p
    assert len(DEEPGEMM_H800_FP8["dense"]) == 18 and len(DEEPGEMM_H800_FP8["grouped"]) == 6
    # nothing published elsewhere: the roofline (None)
    assert set(GEMM_COMPUTE_EFFICIENCY) == {("hopper", "fp8", "dense"),
                                            ("hopper", "fp8", "grouped"),
                                            ("hopper", "fp8", "contiguous")}
    for gen, fmt in (("blackwell", "fp4"), ("blackwell", "fp8"), ("hopper", "bf16"),
                     (None, "fp8")):
        assert gemm_compute_efficiency(gen, fmt, "dense") is None
    with pytest.raises(SpecError, match="GEMM kind"):
        gemm_compute_efficiency("hopper", "fp8", "batched")


def test_decode_prices_hopper_fp8_gemms_at_the_published_efficiency():
    from analysis import GEMM_COMPUTE_EFFICIENCY

    d = GEMM_COMPUTE_EFFICIENCY[("hopper", "fp8", "dense")].value
    g = GEMM_COMPUTE_EFFICIENCY[("hopper", "fp8", "grouped")].value
    hopper = dataclasses.replace(_chip((("fp8", FP8), ("int8", FP8))), generation="hopper")
    m, t, tp, k = MIXED, 64, 2, MIXED.experts_per_token   # FP8 attention; NVFP4 FFNs run BF16
    m8 = dataclasses.replace(m, ffn_format="fp8", expert_format="fp8",
                             ffn_weight_bytes=None, expert_weight_bytes=None)
    r = _step(m8, hopper, batch=t)
    att = t * 2 * m.attention_params / tp / (FP8 * d) \
        + t * m.attention.score_flops_per_token(16) / tp / BF16
    assert r.layers[0].attention_compute == pytest.approx(att, rel=1e-12)
    assert r.layers[0].ffn_compute == pytest.approx(
        t * 2 * m.dense_ffn_params / tp / (FP8 * d), rel=1e-12)
    # the routed experts at DeepGEMM's masked-table efficiency for their rows per group (the
    # t x k pairs over the chip's active experts: every expert on each chip at etp=2)
    rows = t * k / r.layers[1].active_experts_chip
    g_rows = grouped_gemm_efficiency("hopper", "fp8", rows)
    assert g_rows != g
    moe = (t * 2 * m.router_params / BF16
           + t * 2 * m.shared_experts * m.expert_params / tp / (FP8 * d)
           + t * k * 2 * m.expert_params / tp / (FP8 * g_rows))
    assert r.layers[1].ffn_compute == pytest.approx(moe, rel=1e-12)
    names = [p.name for p in r.parameters]
    assert "gemm.compute_efficiency.hopper.fp8.dense" in names
    assert {"gemm.compute_efficiency.hopper.fp8.grouped.m256",
            "gemm.compute_efficiency.hopper.fp8.grouped.m512",
            "gemm.compute_efficiency.hopper.fp8.grouped.m1024"} <= set(names)
    # NVFP4 on Hopper runs weight-only in BF16: no published efficiency, the roofline
    r4 = _step(m, hopper, batch=t)
    assert r4.layers[0].ffn_compute == pytest.approx(
        t * 2 * m.dense_ffn_params / tp / BF16, rel=1e-12)
    # a user's compute_efficiency replaces the published ones for every GEMM
    r1 = _step(m8, hopper, batch=t, compute_efficiency=1.0)
    assert r1.layers[0].ffn_compute == pytest.approx(
        t * 2 * m.dense_ffn_params / tp / FP8, rel=1e-12)
    assert not any(p.name.startswith("gemm.compute_efficiency") for p in r1.parameters)
    # the same chip stated as Blackwell has no published FP8 figure: the roofline
    bw = _step(m8, dataclasses.replace(hopper, generation="blackwell"), batch=t)
    assert bw.layers[0].ffn_compute == pytest.approx(r1.layers[0].ffn_compute, rel=1e-12)


def test_mla_latent_down_projections_are_whole_on_every_tp_rank():
    # vLLM/SGLang deepseek_v2.py: q_a_proj, kv_a_proj_with_mqa (ReplicatedLinear) and their
    # norms replicated; q_b_proj, kv_b_proj, o_proj split; TensorRT-LLM: "Fuse_A GEMM: DP8"
    for name in ("deepseek-v3", "kimi-k2", "deepseek-r1-nvfp4"):
        m = model_config(name)
        a, h = m.attention, m.hidden
        rep = h * a.q_lora_rank + a.q_lora_rank + h * (a.kv_lora_rank + a.qk_rope_head_dim) \
            + a.kv_lora_rank
        assert a.replicated_params(h) == rep == 15_140_864
        assert m.attention_params_per_rank(1) == m.attention_params
        whole = rep                  # the layer's two RMSNorms counted in the split part
        for tp in (2, 4, 8):
            assert m.attention_params_per_rank(tp) == pytest.approx(
                whole + (m.attention_params - whole) / tp, rel=1e-15)
        # brute force over the modules: split ones over tp, replicated whole
        qk = a.qk_nope_head_dim + a.qk_rope_head_dim
        split = (a.q_lora_rank * a.heads * qk
                 + a.kv_lora_rank * a.heads * (a.qk_nope_head_dim + a.v_head_dim)
                 + a.heads * a.v_head_dim * h)
        assert rep + split + 2 * h == m.attention_params
    assert SMALL.attention.replicated_params(SMALL.hidden) == 0     # GQA: none counted


def test_replicated_attention_is_read_and_computed_whole():
    m, t, tp = MIXED, 64, 2          # GQA: nothing replicated, unchanged
    r = _step(m, _chip((("fp8", FP8), ("fp4", FP4))), batch=t)
    assert r.layers[0].attention_weights == pytest.approx(
        m.attention_params * 1.0 / tp / 1e15 / 0.78, rel=1e-12)
    import topologies

    f = topologies.build("switch:8,planes=2,links=9,tech=nvlink5,chip=b200")
    kw = {"batch": 1, "context": 1024, "collective": _cost, "cuda_graphs": False,
          "kernel_floors": {}, "gemm_fixed_time": 0.0, "hbm_efficiency": 1.0}
    k2 = model_config("kimi-k2.5-int4")
    r8 = decode_step(k2, f, layout="tp=8,dp=1,etp=8", **kw)
    rep = k2.attention.replicated_params(k2.hidden)
    assert r8.layers[0].attention_weights == pytest.approx(
        (rep + (k2.attention_params - rep) / 8) * 2 / 8e12, rel=1e-12)
    # memory fit: the replicated part counted on every chip, 61 layers of it
    r1 = decode_step(k2, f, layout="tp=1,dp=8", **{**kw, "collective": lambda *a, **k: FakeResult(0)})
    assert r1.layers[0].attention_weights == pytest.approx(
        k2.attention_params * 2 / 8e12, rel=1e-12)


def test_mtp_draft_reads_its_block_in_the_mtp_format():
    # NVIDIA's R1 NVFP4 keeps its MTP layers BF16 (TensorRT-LLM blog 1 precision table):
    # a draft step reads one MoE block at 2 B/weight, the main layers stay NVFP4
    import topologies

    f = topologies.build("switch:8,planes=2,links=9,tech=nvlink5,chip=b200")
    m = model_config("deepseek-r1-nvfp4")
    assert m.mtp_format == "bf16"
    same = dataclasses.replace(m, mtp_format=None)
    kw = {"batch": 1, "context": 1024, "layout": "tp=8,dp=1,etp=8", "cuda_graphs": False,
          "kernel_floors": {}, "gemm_fixed_time": 0.0, "hbm_efficiency": 1.0,
          "collective": lambda *a, **k: FakeResult(0)}
    bf, nv = (decode_step(x, f, draft=True, **kw) for x in (m, same))
    main_bf, main_nv = (decode_step(x, f, **kw) for x in (m, same))
    assert main_bf.time == main_nv.time            # the main model is untouched
    # the draft's MoE block: shared expert + routed experts (all 8 active, 1/8 of each per
    # chip) + router at 2 B instead of NVFP4's 0.5625 (router BF16 in both)
    lay_bw = 8e12
    ffn = (m.shared_experts * m.expert_params / 8 + 8 * m.expert_params / 8) * (2 - 0.5625)
    assert bf.layers[0].ffn_weights - nv.layers[0].ffn_weights == pytest.approx(
        ffn / lay_bw, rel=1e-9)
    assert bf.layers[0].attention_weights == nv.layers[0].attention_weights   # BF16 already
    with pytest.raises(SpecError, match="mtp_format must be one of"):
        dataclasses.replace(m, mtp_format="fp6")


@pytest.mark.parametrize("args, match", [
    (("hoper", "fp8", "dense"), "generation must be one of"),
    (("hopper", "fp16", "dense"), "math format must be one of"),
    (("hopper", "fp8", "denser"), "GEMM kind must be one of"),
])
def test_gemm_efficiency_lookup_refuses_misspelt_keys(args, match):
    # a misspelt key must not read as "none published" (which silently prices at peak)
    from analysis import gemm_compute_efficiency
    with pytest.raises(SpecError, match=match):
        gemm_compute_efficiency(*args)


@pytest.mark.parametrize("tp, exc", [(0, SpecError), (-1, SpecError), (1.5, TypeError),
                                     (True, TypeError), (float("nan"), TypeError)])
def test_attention_params_per_rank_refuses_a_bad_tp(tp, exc):
    with pytest.raises(exc, match="tp"):
        model_config("deepseek-v3").attention_params_per_rank(tp)
