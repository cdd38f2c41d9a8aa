"""TensorRT-LLM's kernel list, counted from its code (analysis/_decode.py GRAPH_KERNELS).

* The routed experts run as the five kernels of TensorRT-LLM's CUTLASS MoE runner on its
  min-latency branch (moe_kernels.cu ``CutlassMoeFCRunner::runMoe``: expert maps, grouped
  GEMM strides, gemm1, the activation, gemm2), plus expand, finalize and the add of the
  shared and routed outputs off that branch (FP8 experts, more than 128 tokens on a rank,
  attention DP); a dense FFN as GatedMLP's three.
* A GEMM of FP8 block-scaled weights (``fp8-block128``) is two kernels: the input's 1x128
  quantization, then the GEMM (linear.py ``FP8BlockScalesLinearMethod.apply``; the MoE
  runner's block-scale grouped GEMM quantizes its input itself, ``moeGemm``).
* An NVFP4 dense FFN on FP4 tensor cores quantizes the BF16 input of ``down_proj`` in a
  kernel of its own (linear.py ``NVFP4LinearMethod.apply``), and that of ``gate_up_proj``
  too when no fused all-reduce + norm + quantization precedes it (``tp = 1``).
* The router is two kernels (the router GEMM and the fused ``noaux_tc_op``, which applies
  the sigmoid and the correction bias itself).

The commits each count was read at are in analysis/_decode.py and docs/sources.md s.7.

Checked against brute-force counts over the lists and by hand against a step without the
added kernels (the reference: the same step with no format quantized).
"""

import dataclasses
import pathlib

import networkx as nx
import pytest
from fake_collective import FakeResult
from fake_collective import linear_all_reduce as _cost
from hypothesis import given, settings
from hypothesis import strategies as st

import analysis._decode as dec
from analysis import WEIGHT_FORMATS, decode_step
from analysis._decode import (
    EMPTY_KERNEL_TIME,
    GRAPH_KERNEL_OVERHEAD,
    GRAPH_KERNELS,
    KERNEL_CLASSES,
    KERNEL_FLOORS,
    TRTLLM_INPUT_QUANT_FORMATS,
)
from analysis._models import load_model_toml
from fabric import Fabric, chip_spec

SMALL = load_model_toml(pathlib.Path(__file__).parent / "data" / "model_small.toml")
FORMATS = (None, "fp8", "fp8-block128", "nvfp4", "int4-g32")


def _model(att, ffn, experts=None):
    """SMALL with its attention stored in ``att``, its dense FFNs and shared experts in
    ``ffn`` and its routed experts in ``experts`` (None: BF16)."""
    wb = 2.0 if att is None else WEIGHT_FORMATS[att].bytes_per_weight
    kw = {"weight_bytes": wb, "weight_format": att,
          "expert_weight_bytes": 2.0 if experts is None else None,
          "expert_format": experts, "ffn_format": ffn, "ffn_weight_bytes": None}
    if ffn is None:
        kw["ffn_weight_bytes"] = 2.0
    return dataclasses.replace(SMALL, name=f"small-{att}-{ffn}", **kw)


def _fabric(chip):
    G = nx.complete_graph(2)
    nx.set_node_attributes(G, "chip", "kind")
    nx.set_edge_attributes(G, 1e9, "bandwidth")
    nx.set_edge_attributes(G, 1e-7, "latency")
    return Fabric.from_graph(G, chip=chip_spec(chip), name="toy2")


def _any_cost(fabric, op, nbytes, *, algorithm, ranks, transport):
    """1 us + ``nbytes`` at 1 GB/s for any collective (attention DP exchanges all-to-all)."""
    return FakeResult(1e-6 + float(nbytes) / 1e9)


def _step(model, chip="h200", **kw):
    kw = {"batch": 2, "context": 16, "layout": "tp=2,dp=1,etp=2", "collective": _cost,
          "engine": "trtllm", **kw}
    return decode_step(model, _fabric(chip), **kw)


def test_trtllm_lists_count_the_cutlass_moe_runner_and_gated_mlp():
    moe = GRAPH_KERNELS["moe_ffn"]
    runner = moe[moe.index("expert_maps"):moe.index("expert_gemm2") + 1]
    assert [KERNEL_CLASSES[n] for n in runner] == [
        "moe_align", "elementwise", "moe_gemm", "elementwise", "moe_gemm"]
    assert moe[-1] == "reduce_allreduce_add_rmsnorm"     # local reduction in blog 1's module 13
    # module 10: router GEMM + the fused top-k (sigmoid and bias inside noaux_tc_op)
    assert moe[:2] == ("router_gemm", "topk")
    assert [KERNEL_CLASSES[n] for n in moe[:2]] == ["gemm", "topk"]
    assert [KERNEL_CLASSES[n] for n in GRAPH_KERNELS["dense_ffn"]] == [
        "gemm", "elementwise", "gemm", "norm"]


def _brute_extra(model, chip, engine="trtllm", cuda_graphs=True, tokens=1, tp=2):
    """Kernels TensorRT-LLM adds per (dense, MoE) layer to GRAPH_KERNELS at this step: the
    quantize kernels, counted over the lists one kernel at a time, and the MoE runner's
    expand + finalize + add off its min-latency branch (NVFP4 experts, tp > 1, <= 128
    tokens)."""
    if not cuda_graphs or engine != "trtllm":
        return 0, 0
    min_latency = model.part_format("experts") == "nvfp4" and tp > 1 and tokens <= 128
    c = chip_spec(chip)

    def quantized(part):
        return (model.part_format(part) in TRTLLM_INPUT_QUANT_FORMATS
                and c.gemm_format(model.math_format(part)) == "fp8")

    att = dec.KERNELS[model.attention.kind]      # GQA keeps the eager list's names
    n_att = sum(KERNEL_CLASSES[n] == "gemm" for n in att) if quantized("attention") else 0
    n_dense = (sum(KERNEL_CLASSES[n] == "gemm" for n in GRAPH_KERNELS["dense_ffn"])
               if quantized("ffn") else 0)
    # an NVFP4 dense FFN on FP4 tensor cores: down_proj quantizes swiglu's BF16 output
    # (NVFP4LinearMethod.apply); gate_up_proj too when nothing fused the quantization before
    # it (tp = 1)
    if model.part_format("ffn") == "nvfp4" and c.gemm_format(model.math_format("ffn")) == "fp4":
        n_dense += 1 if tp > 1 else 2
    n_moe = ((sum(KERNEL_CLASSES[n] == "gemm" and n != "router_gemm"
                  for n in GRAPH_KERNELS["moe_ffn"]) if quantized("ffn") else 0)
             + (sum(KERNEL_CLASSES[n] == "moe_gemm" for n in GRAPH_KERNELS["moe_ffn"])
                if quantized("experts") else 0))
    return n_att + n_dense, n_att + n_moe + (0 if min_latency else 3)


@settings(max_examples=30, deadline=None)
@given(att=st.sampled_from(FORMATS), ffn=st.sampled_from(FORMATS),
       experts=st.sampled_from((None, "nvfp4", "fp8-block128")),
       chip=st.sampled_from(("h200", "b200", "h20")),
       engine=st.sampled_from(("trtllm", "vllm", "sglang")), graphs=st.booleans(),
       batch=st.sampled_from((1, 64, 200)), tp=st.sampled_from((1, 2)))
def test_added_kernels_match_a_brute_force_count(att, ffn, experts, chip, engine, graphs,
                                                 batch, tp):
    m = _model(att, ffn, experts)
    kw = ({"layout": "tp=2,dp=1,etp=2"} if tp == 2
          else {"layout": "tp=1,dp=2", "collective": _any_cost})
    got = _step(m, chip, engine=engine, cuda_graphs=graphs, batch=batch, **kw)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(dec, "TRTLLM_INPUT_QUANT_FORMATS", ())
        mp.setattr(dec, "TRTLLM_MOE_FULL_BRANCH", {})
        mp.setattr(dec, "TRTLLM_FP4_REQUANT", {})
        mp.setattr(dec, "_TRTLLM_FP4_REQUANT_TP1", {})
        ref = _step(m, chip, engine=engine, cuda_graphs=graphs, batch=batch, **kw)
    n_dense, n_moe = _brute_extra(m, chip, engine, graphs, tokens=-(-batch // (2 // tp)), tp=tp)
    dense, moe = got.layers[0], got.layers[-1]
    assert dense.kernels - ref.layers[0].kernels == n_dense
    assert moe.kernels - ref.layers[-1].kernels == n_moe
    # each added kernel is a boundary plus the elementwise floor beyond an empty kernel, and
    # moves no counted bytes: the rest of the step is the reference's
    extra = GRAPH_KERNEL_OVERHEAD.value + max(
        0.0, KERNEL_FLOORS["elementwise"].value - EMPTY_KERNEL_TIME.value)
    assert dense.total - ref.layers[0].total == pytest.approx(n_dense * extra, abs=1e-15)
    assert moe.total - ref.layers[-1].total == pytest.approx(n_moe * extra, abs=1e-15)
    assert got.breakdown.weights == ref.breakdown.weights


def test_r1_fp8_on_hopper_quantizes_its_projections_nvfp4_does_not():
    # the FP8 block-128 release on H200: fuse_a, uq_qr, uk_bgemm, uv_gemm, wo_gemm each get a
    # quantize kernel, and so do the shared expert and the two grouped GEMMs, and its FP8 experts take the MoE
    # runner's full branch (expand, finalize, the shared + routed add); NVFP4 (attention BF16) at batch 1 gets none
    import topologies
    from analysis import model_config

    kw = {"batch": 1, "context": 1024, "layout": "tp=8,dp=1,etp=2",
          "runtime": "symmetric-memory"}
    h = decode_step("deepseek-r1", topologies.build("switch:8,chip=h200"), **kw)
    b = decode_step("deepseek-r1-nvfp4", topologies.build("switch:8,chip=b200"), **kw)
    base = len(GRAPH_KERNELS["mla"]) + len(GRAPH_KERNELS["moe_ffn"])
    # (+ 2 on Hopper: FlashMLA's scheduler and combine kernels, TRTLLM_HOPPER_FLASHMLA)
    assert h.layers[-1].kernels == base + 5 + 1 + 2 + 3 + 2
    assert b.layers[-1].kernels == base
    assert model_config("deepseek-r1").part_format("router") is None


def test_r1_nvfp4_on_blackwell_quantizes_the_dense_down_proj_input():
    # NVIDIA's R1 NVFP4 on B200 under attention TP8: a dense layer's down_proj takes swiglu's
    # BF16 output and quantizes it (NVFP4LinearMethod.apply), its gate_up_proj takes module 9's
    # fused quantization; on H200 (no FP4 tensor cores, W4A16) neither
    import topologies

    kw = {"batch": 1, "context": 1024, "layout": "tp=8,dp=1,etp=2",
          "runtime": "symmetric-memory"}
    base = len(GRAPH_KERNELS["mla"]) + len(GRAPH_KERNELS["dense_ffn"])
    b = decode_step("deepseek-r1-nvfp4", topologies.build("switch:8,chip=b200"), **kw)
    h = decode_step("deepseek-r1-nvfp4", topologies.build("switch:8,chip=h200"), **kw)
    assert b.layers[0].kernels == base + 1
    # H200: no quantize kernel; its MLA layer runs FlashMLA's scheduler and combine kernels
    # around the attention kernel (TRTLLM_HOPPER_FLASHMLA), which B200 does not
    assert h.layers[0].kernels == base + 2
    assert dec.step_kernel_lists("deepseek-r1-nvfp4", "b200", tp=1)["dense_ffn"] == (
        "fp4_input_quant", "gate_up_proj", "silu_and_mul", "fp4_input_quant", "down_proj",
        "allreduce_add_rmsnorm")
