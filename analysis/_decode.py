"""Per-token decode time of an MoE model on a fabric.

:func:`decode_step` models one decode step: every sequence of the batch
produces one token (or ``tokens_per_sequence`` tokens, for speculative
verification). The model is a sum over layers of

``layer time = local + exposed communication + launch bubbles``

where

* **local** is the roofline of each block on the slowest chip:
  ``max(bytes read from HBM / HBM bandwidth, FLOPs / peak FLOP/s)`` (each GEMM's
  FLOPs at the chip's dense peak of the math format it runs in), for the
  attention block (its weights and the KV cache) and the FFN block (dense FFN,
  or router + shared experts + the routed experts the batch activates) added, each
  of a block's kernels at its own roofline, summed: they run one after another;
* **communication** is the expert dispatch and combine (two all-to-allv over
  the expert-parallel ranks) and the tensor-parallel all-reduces (two per dense
  layer; one per MoE layer, standing for the reduce-scatter after attention and
  the all-gather before the next, which move the same bytes), each costed on
  the fabric by the collectives model (``analysis.cost``); a fraction
  ``overlap`` of it hides under the local time (never more than the local time), or,
  with ``overlap="two-batch"``, each exchange's transfer hides under the stage the other
  micro-batch runs meanwhile (:data:`TWO_BATCH`);
* **launch bubbles** are ``kernels per layer x per-kernel cost / fusion_factor``,
  added (in a replayed graph less one boundary per MoE exchange phase whose handshake
  already holds its first kernel's start and each kernel whose start a runtime's cost holds,
  ``_held_starts``). Without CUDA graphs (``cuda_graphs=False``) each kernel pays a host
  launch (:data:`LAUNCH_OVERHEAD`; the pessimistic case where the host cannot run
  ahead of the GPU) and the kernels are one per operator (:data:`KERNELS`, an
  assumption). With CUDA graphs (``cuda_graphs=True``, the default, as every serving
  framework replays decode) the host launch is gone and each kernel pays only the
  GPU-side time of a kernel boundary in a replayed graph
  (:data:`GRAPH_KERNEL_OVERHEAD`, measured), over the kernels a graph-captured serving
  engine runs per layer (``engine``: :data:`GRAPH_KERNELS`, TensorRT-LLM's published
  module list for DeepSeek-R1 decode with the modules its code runs as several kernels, or :data:`VLLM_GRAPH_KERNELS`, counted from
  vLLM's code).

HBM reads run at :data:`DECODE_HBM_EFFICIENCY` of the peak bandwidth by default (the
best published decode weight streaming), except the kernels with a published streaming
rate of their own (``hbm_efficiency=None``, the default); a given ``hbm_efficiency`` is
every read's fraction, ``hbm_efficiency=1`` the roofline.

Kernels
-------
The step is the sum of its counted kernels. Each kernel of a block (attention, FFN, head)
costs its boundary (the launch or graph-replay cost above, which includes an empty kernel)
plus ``max(r_i, floor_i - EMPTY_KERNEL_TIME)``: ``r_i`` is its own roofline (a heavy kernel,
:data:`KERNEL_CLASSES` ``gemm``/``attention``/``moe_gemm``, ``max(its bytes / bandwidth, its
FLOPs / peak)``: in the FFN blocks its share of the router's, the shared or the routed
experts' weights and FLOPs; in the head the heavy kernels share the block's roofline evenly;
the small ones
move only activations, which the model does not count, so ``r_i = 0``) and ``floor_i`` the minimum duration of a kernel of its class in a replayed graph
(:data:`KERNEL_FLOORS`, measured: RMSNorm 2.9 us, elementwise 1.5 us, router top-k 4.1 us,
MoE align 8.23 us). A weight GEMM also runs a fixed part on top of its share,
:data:`GEMM_FIXED_TIME` (2.6 us, the intercept of published B200 decode GEMM times against
their bytes), so it costs ``max(r_i + 2.6 us, floor_i - EMPTY_KERNEL_TIME)``. At small batch
these fixed times, not bytes, are most of what a step's many kernels cost;
A dense GEMM of an NVFP4 part on a Blackwell chip runs at least its published K-loop floor,
``3.81 us + 0.858 us per 1024 of K`` kernel-only (``analysis.DECODE_GEMM_K_FLOOR``: at a small N
the published M = 1 times follow K, not bytes). ``kernel_floors={}`` and ``gemm_fixed_time=0``
turn them off (a ``kernel_floors`` mapping replaces every published floor, the K floor too).

The parts of a step, in the order :func:`decode_step` calls them: the inputs checked
and resolved (``_settings``), the memory fit (``_memory_fit``), the routing of the
step's tokens to experts (``_routing``), the collectives on the fabric
(``_communication``), the dense and MoE layer times (``_layer_times``), the output
head (``_head_time``), the additive breakdown (``_breakdown``) and the parameters
with their sources (``_parameters``).

Runtimes and exchange kernels
-----------------------------
``runtime`` names the collective runtime the tensor-parallel all-reduces go
through (``analysis.cost(..., runtime=...)``; ``None`` leaves the collectives
model's default). ``ep_kernel`` names the MoE exchange kernel of dispatch and
combine (:data:`fabric.EXCHANGE_KERNELS`, costed by
:func:`analysis.moe_exchange`: DeepEP normal / low-latency, one-sided symmetric
memory, pplx, or an all-to-allv through the collective runtime); ``None`` keeps
the plain all-to-all of the collectives model, except where TensorRT-LLM's attention
data parallelism exchanges by allgather + reducescatter (:func:`trtllm_gathers`). The
exchange kernel's own
kernels replace the ``dispatch`` and ``combine`` entries of the kernel count.

The output head is one more block. Tokens per second per user are
``tokens_per_sequence / step time``; per system, times the batch (for a
verification step these are tokens processed, not accepted: see
:func:`~analysis.speculative_decode`).

What is not modelled (so a reader can judge the error): the embedding lookup,
sampling and logits gather; activation traffic (norms and elementwise kernels cost their
minimum duration, which at large batch underestimates them); a minimum duration of skinny
GEMMs; attention and expert load imbalance other than the
routing skew below; caches (every weight byte comes from HBM each step);
multi-token-prediction modules; prefill.

Layout
------
A :class:`Layout` places ``tp x dp`` chips (ranks ``0 .. tp*dp-1``):
attention is tensor-parallel over groups of ``tp`` consecutive ranks (heads
split) and data-parallel over ``dp`` such groups (the batch split); the routed
experts are spread round-robin over the same ``ep = tp*dp`` ranks (expert ``i``
on rank ``i % ep``). Dense FFNs and the output head are tensor-parallel like
attention. Shared experts are replicated on every chip; each of the ``tp``
ranks of a group computes them for its ``1/tp`` of the group's tokens, which
it also dispatches. MLA caches one latent per token that every TP rank needs
whole; GQA splits its KV heads over up to ``kv_heads`` ranks.

Routing
-------
A token picks ``k`` of ``E`` experts. Under uniform routing expert ``i`` is
picked with probability ``k/E``; with ``skew = s > 0`` expert popularity follows
Zipf, ``q_i ~ (i+1)^-s``, and the pick probability is ``min(1, k q_i)`` (an
approximation: exact for uniform routing). Over ``T`` tokens, expert ``i`` is
active with probability ``1 - (1 - pick_i)^T``; for uniform routing the
expected number of distinct experts is ``E (1 - (1 - k/E)^T)``. The step
waits for the busiest chip: it reads the weights of ``E[max over chips of the
active experts on a chip]`` experts (:func:`expected_max_active`; at batch 1
that is one whole expert, not the mean fraction of one) and computes the
largest expected token load. A token is sent once to every remote chip
that hosts one of its experts (deduplicated per destination chip): chip ``j`` with
probability ``1 - prod over its experts e of (1 - pick_e)`` (picks taken as
independent; for uniform routing within 0.1% of the exact hypergeometric value
at Kimi K2's sizes). Dispatch and combine are all-to-allv with that expected
traffic matrix (combine its transpose), so hot chips receive more; under
uniform routing that matrix is an all-to-all and is costed as one.

Examples
--------
>>> expected_active_experts(256, 8, 1)
8.0
>>> round(expected_active_experts(256, 8, 64), 1)
222.4
"""

import collections
import dataclasses
import functools
import itertools
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from fabric import FabricError, Parameter, RoutingError, SpecError, chip_spec, exchange_kernel
from fabric._address import whole_numbers
from fabric._arrays import check_length, real_array
from fabric._fabric_arg import fabric_arg
from fabric._memo import fabric_memo
from fabric._runtime import release_on
from fabric._schema import MAX_BYTES
from fabric._transport import transport_arg
from fabric._units import (
    check_choice,
    check_count,
    check_fraction,
    check_number,
    flag_of,
    is_numeral,
    kind_error,
    show_value,
    unknown_fault,
)

from ._closed_form import normalize_algorithm, normalize_op
from ._collectives import default_runtime
from ._gemm import (
    GROUPED_GEMM_EFFICIENCY_BY_ROWS,
    GROUPED_GEMM_TIME_BY_ROWS,
    MEASURED_MOE_LOCAL_EXPERTS,
    MOE_BACKENDS,
    decode_gemm_hbm_efficiency,
    decode_gemm_k_floor,
    gemm_compute_efficiency,
    grouped_gemm_efficiency,
    grouped_gemm_rate,
    moe_module_parameters,
    moe_module_time,
)
from ._gemm_measured import (
    TRTLLM_ROUTER_SHAPES,
    trtllm_gemm_parameters,
    trtllm_gemm_time,
    trtllm_mla_bmm_time,
)
from ._mla_measured import mla_generation_parameters, mla_generation_time
from ._models import WEIGHT_FORMATS, model_config
from ._moe_exchange import check_background, check_collective

__all__ = [
    "DECODE_HBM_EFFICIENCY",
    "DSA_FAST_PATH_SKIPS",
    "DSA_INDEXER_KERNELS",
    "EMPTY_KERNEL_TIME",
    "ENGINE_KERNELS",
    "GEMM_FIXED_TIME",
    "GRAPH_KERNELS",
    "GRAPH_KERNEL_OVERHEAD",
    "KERNELS",
    "KERNEL_CLASSES",
    "KERNEL_FLOORS",
    "LAUNCH_OVERHEAD",
    "MIN_KERNEL_TIME",
    "MLA_DECODE_EFFICIENCY",
    "MTP_KERNELS",
    "PDL_HIDDEN_GAP",
    "SGLANG_GRAPH_KERNELS",
    "TRTLLM_DSV3_GEMMS_RELEASE",
    "TRTLLM_DSV3_ROUTER_KERNEL_SHAPES",
    "TRTLLM_FP4_REQUANT",
    "TRTLLM_FP8_MLA_KV_BYTES",
    "TRTLLM_INPUT_QUANT_FORMATS",
    "TRTLLM_MIN_LATENCY_TOKENS",
    "TRTLLM_MLA_GENERATION_KERNELS",
    "TRTLLM_MOE_FULL_BRANCH",
    "TRTLLM_MOE_MODULE_KERNELS",
    "TRTLLM_NEWEST",
    "TRTLLM_RELEASE_DATES",
    "TWO_BATCH",
    "VLLM_GRAPH_KERNELS",
    "VLLM_INT4_MOE_HBM_EFFICIENCY",
    "DecodeBreakdown",
    "DecodeStep",
    "HeadTime",
    "LayerTime",
    "Layout",
    "decode_step",
    "engine_collective",
    "expected_active_experts",
    "expected_max_active",
    "expert_activation",
    "idle_chips",
    "instance_chips",
    "parse_layout",
    "step_kernel_lists",
    "trtllm_code_state",
    "trtllm_release",
    "trtllm_release_on",
    "trtllm_release_parameter",
    "trtllm_runs_dsv3_gemms",
]

#: Seconds per kernel launch (host launch path, no CUDA Graph). Source: a
#: measurement of 4-6 us per launch through the CUDA runtime and driver
#: (susun-blog.com "pegainfer (3): From Launch Overhead to CUDA Graph", RTX 5070 Ti,
#: CUDA 13.0, second-hand); NVIDIA's "Getting Started with CUDA Graphs" blog
#: describes the same per-launch overhead that graphs amortise. The low end is used.
#: GPU idle per exposed launch (call + submit-to-start), unlike runtime host_launch (CPU time only).
LAUNCH_OVERHEAD = Parameter(
    "decode.launch_overhead", 4e-6, "s",
    "4-6 us per CUDA kernel launch (susun-blog.com pegainfer (3), RTX 5070 Ti, CUDA 13.0; "
    "second-hand); low end taken")

#: Kernels of one unfused decode layer, by operator: an assumption (one kernel per
#: operator of an eager implementation), listed so that a reader can recount.
KERNELS = {
    "mla": ("attn_norm", "q_a_proj", "q_a_norm", "q_b_proj", "kv_a_proj", "kv_a_norm", "rope",
            "kv_cache_write", "q_absorb", "attention", "v_absorb", "o_proj", "residual_add"),
    "gqa": ("attn_norm", "qkv_proj", "rope", "kv_cache_write", "attention", "o_proj",
            "residual_add"),
    "dense_ffn": ("ffn_norm", "gate_up_proj", "act_mul", "down_proj", "residual_add"),
    "moe_ffn": ("ffn_norm", "router_gemm", "topk", "dispatch", "expert_gate_up", "expert_act",
                "expert_down", "combine", "shared_gate_up", "shared_act", "shared_down",
                "residual_add"),
    "head": ("final_norm", "lm_head", "sample"),
}

#: Kernels a multi-token-prediction draft adds before the head (``decode_step(draft=True)``):
#: the projection of the concatenated embedding and hidden state, ``2 hidden -> hidden``
#: (DeepSeek-V3 report, arXiv 2412.19437, sec. 2.2, its ``M_k``).
MTP_KERNELS = ("mtp_proj",)

#: Kernels DeepSeek Sparse Attention's lightning indexer adds to an MLA block whose model has
#: one (``MLA.sparse``: DeepSeek-V3.2, GLM-5), before the attention kernel, counted from
#: vLLM's ``Indexer.forward`` on CUDA (``vllm/model_executor/models/deepseek_v2.py`` at commit
#: 002d6073, the fused-q branch): the replicated ``wq_b`` GEMM, the fused ``wk`` +
#: ``weights_proj`` GEMM, the ``k_norm`` LayerNorm, ``fused_indexer_q_rope_quant`` (the query's
#: rotary, FP8 quantization and head weights), the key's rotary, the ``torch.cat`` of its two
#: halves, then the ``SparseAttnIndexer`` op, taken as three kernels by what it must do (not
#: read): the key's FP8 quantization into the indexer cache, the logits over every cached key
#: (DeepGEMM's indexer logit kernels, DeepSeek-V3.2-Exp README: "indexer logit kernels
#: (including paged versions) are available in DeepGEMM"), and the top-``index_topk``
#: selection. One kernel per op (the convention of :data:`VLLM_GRAPH_KERNELS`), for every
#: engine and without CUDA graphs too (an assumption: the other engines' indexer paths were not
#: read). The logits kernel (class ``indexer``) reads the indexer's key cache and runs its
#: score FLOPs in FP8 (``MLA.index_score_flops_per_token``; DeepSeek's ``fp8_index``); the
#: fp32 logits it writes and the top-k reads back (8 B per cached token and query) are not
#: counted. With ``engine="trtllm"`` a step whose sequences hold at most ``index_topk`` tokens
#: (``context + q``) runs TensorRT-LLM's short-sequence fast path (NVIDIA TensorRT-LLM tech blog
#: 15, "A Fast Path for Short Sequences", PR-9524: every cached token would be selected, so a
#: separate CUDA graph skips the MQA logits and the top-k): :data:`DSA_FAST_PATH_SKIPS` do not run
#: and the indexer reads no key (its key is still written to the cache).
DSA_INDEXER_KERNELS = ("indexer_q_proj", "indexer_k_weights_proj", "indexer_k_norm",
                       "indexer_q_rope_quant", "indexer_k_rope", "indexer_k_concat",
                       "indexer_k_cache", "indexer_logits", "indexer_topk")

#: The indexer kernels TensorRT-LLM's short-sequence fast path skips (see
#: :data:`DSA_INDEXER_KERNELS`).
DSA_FAST_PATH_SKIPS = ("indexer_logits", "indexer_topk")

#: Kernels per layer of a graph-captured decode: TensorRT-LLM's DeepSeek-R1 decode on
#: 8xB200 ("Pushing Latency Boundaries: Optimizing DeepSeek-R1 Performance on NVIDIA B200
#: GPUs", NVIDIA/TensorRT-LLM docs/source/blogs/tech_blog/blog1, read at commit 01c4ece911eb,
#: section "Everything in One Diagram", modules 1-13 of an MoE layer), one kernel per module
#: and two for module 10 ("routerGEMM & topK"), except the modules the code shows to be
#: several kernels. Each count is pinned to the file and commit it was read at (the
#: repository's release tags could not be checked out here: its snapshot is over the fetch
#: limit, so the pins are stored file versions, docs/sources.md s.7):
#:
#: * module 12, "Sparse Experts": the kernels TensorRT-LLM's CUTLASS MoE runner launches
#:   (``cpp/tensorrt_llm/kernels/cutlass_kernels/moe_gemm/moe_kernels.cu`` at commit
#:   ac73e3116fb4, ``CutlassMoeFCRunner::runMoe``), counted on its min-latency branch (NVFP4,
#:   at most 128 tokens under tensor parallelism: the blog's setting):
#:   ``buildMinLatencyActiveExpertMaps`` (one block builds the per-expert token maps: the
#:   ``moe_align`` class), ``setupTmaWarpSpecializedInputs`` ->
#:   ``computeStridesTmaWarpSpecializedLowLatency`` (the grouped GEMM's per-expert pointers
#:   and strides), ``gemm1`` (``moeGemm``, then the ``doActivation`` kernel for a gated
#:   activation: SwiGLU and the quantization of its output) and ``gemm2``; its local
#:   reduction runs in module 13. At that commit the branch's call sequence is still in
#:   ``runMoe`` but its strides function throws "Min latency mode is no longer supported":
#:   the commit is later than the blog's code state, whose own version of the branch was
#:   not found in the store (the blog also names grouped-GEMM code "not open-source yet");
#: * module 10: ``DeepseekV3Gate.forward`` runs ``dsv3_router_gemm_op`` and
#:   ``Deepseekv3RoutingImpl.noaux_tc`` the fused ``noaux_tc_op(logits, bias, ...)``, which
#:   takes the sigmoid and the correction-bias add inside it
#:   (``tensorrt_llm/_torch/models/modeling_deepseekv3.py`` at commit a43cf9e363d5; they are
#:   separate ops only on the unfused fallback): two kernels, as the blog's module;
#: * dense FFN layers (not in the diagram): TensorRT-LLM's ``GatedMLP.forward``
#:   (``tensorrt_llm/_torch/modules/gated_mlp.py`` at commit 90f3bec14ca7: ``gate_up_proj``,
#:   ``swiglu``, ``down_proj``) and the fused all-reduce + norm after it
#:   (``DeepseekV3DecoderLayer.forward_mlp``, modeling_deepseekv3.py at a43cf9e363d5,
#:   ``POST_MLP_FUSION``), plus the NVFP4 input quantization of :data:`TRTLLM_FP4_REQUANT`.
#:
#: Module 11 (the shared expert) stays one kernel, as the blog draws it: the code runs it as
#: ``GatedMLP`` (gate_up, swiglu, down, with NVFP4 input quantizations) on an auxiliary
#: stream concurrently with modules 10 and 12 (``Deepseekv3MoE.forward``,
#: ``maybe_execute_in_parallel``, a43cf9e363d5), which a serial sum of kernels cannot
#: represent (counted serially it would add 3-4 kernels, hidden whole it would remove 1).
#: Its MoE layer ends in a fused local-reduction + all-reduce + norm kernel; an
#: expert-parallel exchange adds its own kernels (``ep_kernel``). GQA attention and the head
#: keep :data:`KERNELS`.
GRAPH_KERNELS = {
    "mla": ("fuse_a_gemm", "q_kv_rmsnorm", "uq_qr_gemm", "uk_bgemm", "kv_cache_rope",
            "gen_attention", "uv_gemm", "wo_gemm", "allreduce_add_rmsnorm_quant"),
    "dense_ffn": ("gate_up_proj", "silu_and_mul", "down_proj", "allreduce_add_rmsnorm"),
    "moe_ffn": ("router_gemm", "topk", "shared_expert", "expert_maps", "expert_strides",
                "expert_gemm1", "expert_activation", "expert_gemm2",
                "reduce_allreduce_add_rmsnorm"),
}

#: TensorRT-LLM's NVFP4 linears whose BF16 input the linear quantizes itself, in a kernel of
#: its own before the GEMM (``NVFP4LinearMethod.apply``: ``torch.ops.trtllm.fp4_quantize``
#: unless the input arrives as an ``Fp4QuantizedTensor``; ``tensorrt_llm/_torch/modules/
#: linear.py`` at commit ed53795b33fc), by block of :data:`GRAPH_KERNELS`: a dense layer's
#: ``down_proj`` takes the BF16 output of ``swiglu`` (``GatedMLP.forward``, gated_mlp.py at
#: 90f3bec14ca7), while its ``gate_up_proj`` gets an input already quantized by the fused
#: all-reduce + norm + NVFP4 quantization before it (``AllReduceFusionOp.
#: RESIDUAL_RMS_NORM_QUANT_NVFP4``, ``PRE_MLP_FUSION``, modeling_deepseekv3.py at
#: a43cf9e363d5: module 9's kernel) when the dense FFN is tensor-parallel; with ``tp = 1``
#: (attention data parallelism: ``mlp_tp_size = 1``, no fusion) ``gate_up_proj`` quantizes its
#: input too. Applies with ``engine="trtllm"`` and CUDA graphs when the block's part is stored
#: in ``nvfp4`` and the chip runs it on FP4 tensor cores; the kernel (``fp4_input_quant``) is
#: of the elementwise class (a maximum per 16 values, no row-wide reduction).
TRTLLM_FP4_REQUANT = {"dense_ffn": ("down_proj",)}
_TRTLLM_FP4_REQUANT_TP1 = {"dense_ffn": ("gate_up_proj", "down_proj")}

#: Kernels TensorRT-LLM's CUTLASS MoE runner adds on its other branch (``runMoe`` without
#: the min-latency mode: FP8 experts, more than :data:`TRTLLM_MIN_LATENCY_TOKENS` tokens on a
#: rank, or attention data parallelism), after the named kernel of :data:`GRAPH_KERNELS`:
#: ``expandInputRowsKernelLauncher`` (the tokens permuted to their experts and quantized)
#: after the expert maps (``fusedBuildExpertMapsSortFirstToken`` on this branch, one kernel),
#: and ``finalizeMoeRoutingKernelLauncher`` (unpermute and the weighted sum over the top-k)
#: after ``gemm2`` (moe_kernels.cu at commit ac73e3116fb4, ``runMoe``, ``gemm2``, and for FP8
#: block-scaled experts ``BlockScaleFC1`` = ``moeGemm`` + ``doActivation``, ``BlockScaleFC2`` =
#: ``moeGemm`` + the finalize). Both of the elementwise class (no row-wide reduction; the sum
#: over top-k is vLLM's ``moe_sum``'s job, also elementwise here). Off the min-latency mode
#: the shared and routed outputs are also added in a kernel of their own before the
#: all-reduce (``Deepseekv3MoE.forward``: ``shared_output + routed_output`` when the MoE
#: finalizes itself; modeling_deepseekv3.py at a43cf9e363d5). The finalize is counted on
#: every chip: at ac73e3116fb4 a TMA warp-specialized ``gemm2`` can fuse it into its epilogue
#: when its tactic asks for it (``using_fused_finalize``), which is not modelled.
TRTLLM_MOE_FULL_BRANCH = {"expert_maps": ("expert_expand",),
                          "expert_gemm2": ("expert_finalize", "moe_output_add")}

#: Kernels of one MoE layer that TensorRT-LLM's fused MoE module runs inside its own
#: ``forward`` (``CutlassFusedMoE.forward``: the routing method's top-k over the router logits,
#: the expert maps, the input's permutation with its FP4 quantization, the two grouped GEMMs
#: with the activation between them, the finalize), i.e. what aiconfigurator's
#: ``moe.forward`` timing holds (:data:`analysis.TRTLLM_B200_NVFP4_CUTLASS_MOE`; not the
#: router GEMM, whose logits are the module's input, the shared expert, the shared + routed
#: add, or any collective). Where the step prices its routed experts at that measured time
#: (:func:`_measured_moe_module`) these kernels' work, floors and launches are inside it: they
#: are charged no floor, fixed part or boundary of their own (priced once, in the time).
TRTLLM_MOE_MODULE_KERNELS = frozenset(("topk", "expert_maps", "expert_strides",
                                       "expert_expand", "expert_gemm1", "expert_activation",
                                       "expert_gemm2", "expert_finalize"))


def _moe_module_mask(names):
    """Per kernel of a MoE block's list ``names``, whether TensorRT-LLM's MoE module runs it
    (:data:`TRTLLM_MOE_MODULE_KERNELS`, and the FP8 activation quantization right before
    either grouped GEMM: the block-scaled FC1 / FC2 inputs on Hopper; not the one before the
    shared expert, which is outside the module)."""
    return tuple(n in TRTLLM_MOE_MODULE_KERNELS
                 or (n == "fp8_input_quant" and i + 1 < len(names)
                     and names[i + 1] in ("expert_gemm1", "expert_gemm2"))
                 for i, n in enumerate(names))

#: Kernels of one MLA block that TensorRT-LLM's attention op runs in its generation call
#: (``TrtllmAttention.forward``, ``AttentionInputType.generation_only``: the rope and
#: latent-cache append kernel, then the MLA attention kernel; on Hopper FlashMLA's metadata,
#: split-KV and combine kernels, :data:`TRTLLM_HOPPER_FLASHMLA`), i.e. what aiconfigurator's
#: ``mla_generation`` timing holds (:data:`analysis.TRTLLM_B200_MLA_GENERATION_BF16`,
#: :data:`analysis.TRTLLM_H200_MLA_GENERATION_BF16`; not the projections or batched GEMMs
#: around it). Where the step takes that measured time (:meth:`_Settings.mla_measured`) the
#: attention kernel runs at least that long and these kernels are charged no floor, fixed part
#: or boundary of their own (priced once).
TRTLLM_MLA_GENERATION_KERNELS = frozenset(("kv_cache_rope", "mla_metadata", "gen_attention",
                                           "mla_combine"))

#: Kernels of an MLA block of :data:`GRAPH_KERNELS` that TensorRT-LLM runs as one ``Linear`` or
#: one MLA batched GEMM each, i.e. what aiconfigurator's ``gemm`` and ``mla_bmm`` timings hold
#: (:mod:`analysis._gemm_measured`): the fused A projection, the query up-projection, the
#: output projection, and the ``W_UK`` / ``W_UV`` absorptions. Where the step takes a measured
#: time (:meth:`_Settings.attention_gemm_measured`) the kernel runs at least that long and it,
#: with the FP8 input quantization right before it (inside ``Linear.forward`` and the FP8
#: bmm's path), is charged no floor, fixed part or boundary of its own (priced once).
TRTLLM_MEASURED_ATTENTION_GEMMS = frozenset(("fuse_a_gemm", "uq_qr_gemm", "wo_gemm",
                                             "uk_bgemm", "uv_gemm"))

#: Tokens on a rank up to which TensorRT-LLM's DeepSeek model runs its BF16 fused A projection
#: (7168 -> 2112) in a dedicated kernel: ``dsv3_fused_a_gemm_op`` takes
#: ``invokeFusedAGemm`` (instantiated for 8 and 16 tokens) for 1 to 16 tokens on SM90 and
#: later, cuBLAS above (cpp/tensorrt_llm/thop/dsv3FusedAGemmOp.cpp, code-index text
#: 213513109), so the generic BF16 ``Linear`` aiconfigurator times stands for it only above:
#: at or below it a BF16 fused A GEMM keeps its roofline. The router gate's GEMM the same
#: (NVIDIA/TensorRT-LLM PRs #4115 / #4560, 2025-05: ``dsv3_router_gemm_op``, a dedicated
#: kernel "for num_tokens from 1 to 16"; PR #13646: "For batch<=16, the custom kernel avoids
#: cuBLAS overhead ... For larger batches, cuBLAS fallback is preserved"; the code before,
#: ``cublas_mm``, cuBLAS at every count): the measured ``Linear`` above, its roofline at or
#: below (:meth:`_Settings.router_measured`). Both kernels from
#: :data:`TRTLLM_DSV3_GEMMS_RELEASE` on; a release before it runs both on cuBLAS at every count
#: (the measured ``Linear``: :func:`trtllm_runs_dsv3_gemms`).
TRTLLM_FUSED_A_MIN_LATENCY_TOKENS = 16

#: The router gate shapes ``(routed experts, hidden size)`` TensorRT-LLM's dedicated router
#: kernel runs at 1-16 tokens; any other shape falls back to cuBLAS at every count
#: (``dsv3_router_gemm_op``: ``kNumExperts = 256`` with DeepSeek's hidden size 7168, "else //
#: fallback to cublas"; cpp/tensorrt_llm/thop/dsv3RouterGemmOp.cpp, read at commit 08c152eb,
#: whose later additions, GLM-5's 6144 and DeepSeek-V4's 4096 hidden sizes (PRs #13740,
#: #13646, 2026) and Kimi K3's 896 experts, came after the newest modelled release). So Kimi
#: K2's router (384 experts) runs cuBLAS, the measured ``Linear``, in every release.
TRTLLM_DSV3_ROUTER_KERNEL_SHAPES = frozenset(((256, 7168),))

#: Every TensorRT-LLM release whose code state the decode model tells apart (``decode_step(
#: trtllm_release=...)``), with the day it was published: version -> ISO date. Source: the
#: Python Package Index's record of ``tensorrt-llm`` (pypi.org/pypi/tensorrt-llm/json, read
#: 2026-12-06: the UTC upload date of each release's file); the releases and release
#: candidates (``rc``) of GitHub's tags ``v<version>``, not the ``.dev`` nightlies nor the
#: ``.post`` re-uploads, from 0.17.0 (the PyTorch flow's DeepSeek-V3 support came in 0.18-0.19)
#: to :data:`TRTLLM_NEWEST`. Used by :func:`trtllm_release_on` to say which release a
#: measurement that states none ran.
TRTLLM_RELEASE_DATES = {
    "0.17.0": "2025-01-30", "0.18.0": "2025-04-02", "0.18.1": "2025-04-09",
    "0.18.2": "2025-04-16", "0.19.0rc0": "2025-04-16", "0.20.0rc0": "2025-04-23",
    "0.20.0rc1": "2025-04-29", "0.19.0": "2025-05-09", "0.20.0rc2": "2025-05-13",
    "0.20.0rc3": "2025-05-20", "0.21.0rc0": "2025-06-04", "0.21.0rc1": "2025-06-11",
    "0.21.0rc2": "2025-06-18", "0.20.0": "2025-06-19", "1.0.0rc0": "2025-06-25",
    "1.0.0rc1": "2025-07-01", "1.0.0rc2": "2025-07-08", "1.0.0rc3": "2025-07-16",
    "1.0.0rc4": "2025-07-22", "0.21.0": "2025-08-04", "1.0.0rc5": "2025-08-04",
    "1.0.0rc6": "2025-08-07", "1.1.0rc0": "2025-08-15", "1.1.0rc1": "2025-08-22",
    "1.1.0rc2": "2025-08-30", "1.1.0rc3": "2025-09-04", "1.1.0rc4": "2025-09-10",
    "1.1.0rc5": "2025-09-17", "1.0.0": "2025-09-24", "1.2.0rc0": "2025-09-30",
    "1.2.0rc1": "2025-10-22", "1.2.0rc2": "2025-11-07", "1.2.0rc3": "2025-11-21",
    "1.2.0rc4": "2025-11-25", "1.2.0rc5": "2025-12-10", "1.1.0": "2025-12-19",
}

#: The newest TensorRT-LLM release the model describes, the code state of a step given no
#: release: 1.2.0rc5, the release whose kernels aiconfigurator's measured tables time (the
#: GEMMs, the MoE modules and the MLA ops of :mod:`analysis._gemm_measured`,
#: :mod:`analysis._gemm`, :mod:`analysis._mla_measured`).
TRTLLM_NEWEST = "1.2.0rc5"

#: The first TensorRT-LLM release that runs DeepSeek's router gate GEMM and BF16 fused A
#: projection in their dedicated kernels at 1-16 tokens a rank (``dsv3_router_gemm_op``,
#: ``dsv3_fused_a_gemm_op``; :data:`TRTLLM_FUSED_A_MIN_LATENCY_TOKENS`). They came with
#: NVIDIA/TensorRT-LLM PR #4560 ("add router gemm, fused a gemm, PDL", opened on main
#: 2025-05-22; PR #4115 of 2025-05-07 its first form: "The performance of these two kernel is
#: 1.5~3x speed up than previous cublas method"), so no release published before 2025-05-22
#: carries them (0.20.0rc3 and every earlier one: :data:`TRTLLM_RELEASE_DATES`). Named
#: ASSUMPTION: the first release cut from main after it, 0.21.0rc0 (2025-06-04), is the first to
#: carry them, and the release/0.20 branch (0.20.0, whose commit b6261862 TensorRT-LLM's own
#: CI records as ``LLM/release-0.20/L0_PostMerge``) did not take them: the release notes of
#: 0.20.0 and 0.21.0 name neither kernel. A release is ordered by its version number.
TRTLLM_DSV3_GEMMS_RELEASE = "0.21.0rc0"


def _trtllm_version(text):
    """``(major, minor, patch, rc)`` of a TensorRT-LLM release name, a final release after
    its release candidates; SpecError for any other text."""
    found = _release_numbers(text) if isinstance(text, str) else None
    if found is None:
        raise SpecError(f"a TensorRT-LLM release is written like 0.20.0 or 1.2.0rc5, got "
                        f"{show_value(text)}")
    return found


@functools.cache
def _release_numbers(text):
    """:func:`_trtllm_version` of a string, or None (parsed once: every step asks)."""
    found = re.fullmatch(r"(\d+)\.(\d+)\.(\d+)(?:rc(\d+))?", text)
    if found is None:
        return None
    major, minor, patch, rc = found.groups()
    return int(major), int(minor), int(patch), math.inf if rc is None else int(rc)


def trtllm_release(release):
    """``release`` checked: one of :data:`TRTLLM_RELEASE_DATES` (None: :data:`TRTLLM_NEWEST`).

    Parameters
    ----------
    release : str or None
        A TensorRT-LLM version of :data:`TRTLLM_RELEASE_DATES`; None: the newest modelled
        (:data:`TRTLLM_NEWEST`).

    Returns
    -------
    str
        The release's version.

    Examples
    --------
    >>> trtllm_release(None), trtllm_release("0.20.0rc2")
    ('1.2.0rc5', '0.20.0rc2')
    >>> trtllm_release("1.3.0rc1")
    Traceback (most recent call last):
    ...
    fabric.SpecError: TensorRT-LLM 1.3.0rc1 is not a modelled release: the model describes the releases 0.17.0 to 1.2.0rc5 (analysis.TRTLLM_RELEASE_DATES)
    """
    if release is None:
        return TRTLLM_NEWEST
    _trtllm_version(release)
    if release not in TRTLLM_RELEASE_DATES:
        oldest = min(TRTLLM_RELEASE_DATES, key=_trtllm_version)
        raise SpecError(f"TensorRT-LLM {release} is not a modelled release: the model describes "
                        f"the releases {oldest} to {TRTLLM_NEWEST} "
                        f"(analysis.TRTLLM_RELEASE_DATES)")
    return release


def trtllm_runs_dsv3_gemms(release):
    """Whether TensorRT-LLM ``release`` runs DeepSeek's router and BF16 fused A GEMMs in their
    dedicated kernels at 1-16 tokens a rank (:data:`TRTLLM_DSV3_GEMMS_RELEASE` and later, by
    version); an earlier release runs both on cuBLAS, the measured ``Linear``, at every count.

    Parameters
    ----------
    release : str or None
        As :func:`trtllm_release` reads it.

    Examples
    --------
    >>> [trtllm_runs_dsv3_gemms(r) for r in ("0.20.0", "0.21.0rc0", None)]
    [False, True, True]
    """
    return (_trtllm_version(trtllm_release(release))
            >= _trtllm_version(TRTLLM_DSV3_GEMMS_RELEASE))


def trtllm_code_state(release):
    """What the model tells apart of TensorRT-LLM ``release``'s code (None: the newest
    modelled), as a tuple of named facts: two releases of one state price every step alike.

    Parameters
    ----------
    release : str or None
        As :func:`trtllm_release` reads it.

    Returns
    -------
    tuple
        ``(fact, value)`` pairs.

    Examples
    --------
    >>> trtllm_code_state("0.18.1") == trtllm_code_state("0.20.0"), trtllm_code_state(None)
    (True, (('dsv3_gemms', True),))
    """
    return (("dsv3_gemms", trtllm_runs_dsv3_gemms(release)),)


def trtllm_release_on(date):
    """The TensorRT-LLM release a measurement dated ``date`` stands for when its source states
    none: the newest release (highest version) published on or before that date
    (:data:`TRTLLM_RELEASE_DATES`), as :func:`fabric.nccl_release_on` for NCCL. A date before
    the oldest modelled release is an error, not a silent fallback.

    Parameters
    ----------
    date : str or datetime.date
        The measurement's date; text in ISO form (``"2025-05-16"``).

    Returns
    -------
    str
        A release of :data:`TRTLLM_RELEASE_DATES`.

    Raises
    ------
    SpecError
        For a date that does not read or precedes the oldest modelled release.

    Examples
    --------
    >>> trtllm_release_on("2025-05-16")
    '0.20.0rc2'
    >>> trtllm_release_on("2025-04-16")          # two releases that day: the higher version
    '0.19.0rc0'
    >>> trtllm_release_on("2024-12-01")
    Traceback (most recent call last):
    ...
    fabric.SpecError: no modelled TensorRT-LLM release was published on or before 2024-12-01 (the oldest, 0.17.0, is of 2025-01-30)
    """
    return release_on(date, TRTLLM_RELEASE_DATES, _trtllm_version,
                      "modelled TensorRT-LLM release was published")


def trtllm_release_parameter(release):
    """TensorRT-LLM ``release`` as a :class:`~fabric.Parameter` (value: the release, unit
    ``"release"``) whose source says when it was published and which code state it runs.

    Parameters
    ----------
    release : str or None
        A release (a version, or None for the newest modelled), checked by
        :func:`trtllm_release`.

    Examples
    --------
    >>> p = trtllm_release_parameter("0.20.0rc2")
    >>> (p.name, p.value), p.source.split(";")[0]
    (('decode.trtllm_release', '0.20.0rc2'), 'TensorRT-LLM 0.20.0rc2, published 2025-05-13 (pypi.org/pypi/tensorrt-llm/json)')
    """
    release = trtllm_release(release)
    state = ("router and BF16 fused A GEMMs in their dedicated kernels at 1-16 tokens a rank"
             if trtllm_runs_dsv3_gemms(release) else
             "router and BF16 fused A GEMMs on cuBLAS at every token count (before "
             f"{TRTLLM_DSV3_GEMMS_RELEASE}, NVIDIA/TensorRT-LLM PR #4560)")
    return Parameter("decode.trtllm_release", release, "release",
                     f"TensorRT-LLM {release}, published {TRTLLM_RELEASE_DATES[release]} "
                     f"(pypi.org/pypi/tensorrt-llm/json); its code: {state}")

def trtllm_projection_shapes(m, tp, rows, release=None):
    """``{kernel: (n, k)}`` of the MLA projection GEMMs TensorRT-LLM ``release`` (None: the
    newest modelled, :data:`TRTLLM_NEWEST`) runs as ``Linear`` layers on a rank of ``tp`` (a
    decode step's and a prompt pass's alike), for ``rows`` tokens on the rank: the fused A
    projection ``fuse_a_gemm`` (``q_lora + kv_lora + rope`` outputs from ``hidden``, whole on
    every rank; not for a BF16 one at or below :data:`TRTLLM_FUSED_A_MIN_LATENCY_TOKENS` rows
    in a release with its dedicated kernel, :func:`trtllm_runs_dsv3_gemms`), the query
    up-projection ``uq_qr_gemm`` and the output projection ``wo_gemm`` (the rank's heads).
    The kernels :data:`TRTLLM_MEASURED_ATTENTION_GEMMS` names; shapes only, whether measured
    is :func:`analysis.trtllm_gemm_time`'s.

    >>> from analysis import model_config
    >>> trtllm_projection_shapes(model_config("deepseek-r1"), 1, 1024)
    {'fuse_a_gemm': (2112, 7168), 'uq_qr_gemm': (24576, 1536), 'wo_gemm': (7168, 16384)}
    >>> m = model_config("deepseek-r1-nvfp4")         # BF16 attention, 4 rows a rank
    >>> [sorted(trtllm_projection_shapes(m, 8, 4, r)) for r in (None, "0.20.0rc2")]
    [['uq_qr_gemm', 'wo_gemm'], ['fuse_a_gemm', 'uq_qr_gemm', 'wo_gemm']]
    """
    att, heads = m.attention, m.attention.heads // tp
    out = {}
    if not (rows <= TRTLLM_FUSED_A_MIN_LATENCY_TOKENS and m.part_format("attention") == "bf16"
            and trtllm_runs_dsv3_gemms(release)):
        out["fuse_a_gemm"] = (att.q_lora_rank + att.kv_lora_rank + att.qk_rope_head_dim,
                              m.hidden)
    out["uq_qr_gemm"] = (heads * (att.qk_nope_head_dim + att.qk_rope_head_dim), att.q_lora_rank)
    out["wo_gemm"] = (m.hidden, heads * att.v_head_dim)
    return out


def trtllm_router_shape(m, rows, release=None):
    """``(n, k)`` of the MoE router gate GEMM TensorRT-LLM ``release`` (None: the newest
    modelled) runs as a ``Linear`` (cuBLAS, the measured GEMM) for ``rows`` tokens on a rank,
    a decode step's and a prompt pass's alike: the routed experts from the hidden size, where
    the shape is one :data:`analysis.TRTLLM_ROUTER_SHAPES` holds; None for a model without MoE
    layers, another shape, or at most :data:`TRTLLM_FUSED_A_MIN_LATENCY_TOKENS` rows in a
    release with the dedicated router kernel (:func:`trtllm_runs_dsv3_gemms`) for a shape it
    was built for (:data:`TRTLLM_DSV3_ROUTER_KERNEL_SHAPES`). The one rule for
    :attr:`_Settings.router_gemm_use` and ``analysis._serving._prefill_router``.

    >>> from analysis import model_config
    >>> m, k2 = model_config("deepseek-r1"), model_config("kimi-k2")
    >>> trtllm_router_shape(m, 17), trtllm_router_shape(m, 16), trtllm_router_shape(k2, 16)
    ((256, 7168), None, (384, 7168))
    >>> trtllm_router_shape(m, 16, "0.20.0")      # before the dedicated kernel: cuBLAS
    (256, 7168)
    """
    shape = (m.routed_experts, m.hidden)
    if (not m.moe_layers or shape not in TRTLLM_ROUTER_SHAPES
            or (rows <= TRTLLM_FUSED_A_MIN_LATENCY_TOKENS and trtllm_runs_dsv3_gemms(release)
                and shape in TRTLLM_DSV3_ROUTER_KERNEL_SHAPES)):
        return None
    return shape


#: Kernels TensorRT-LLM's MLA generation launches on Hopper around the attention kernel of
#: :data:`GRAPH_KERNELS` (``gen_attention``), by position: on SM90 with 576-wide latent + rope
#: heads it runs FlashMLA (``ModelConfig.enable_flash_mla``; the executor then forces
#: ``tokens_per_block = 64``, ``py_executor_creator.py``), and every FlashMLA call, i.e. every
#: attention layer, first launches FlashMLA's tile-scheduler kernel (``get_mla_metadata_func``
#: in ``AttentionOp::mlaGeneration``, cpp/tensorrt_llm/common/attentionOp.cpp at commit
#: eea41b73a7bd, commented "metadata should only be init once per iter, to fix later"), then
#: the split-KV kernel and, always, the combine kernel (``run_flash_splitkv_fwd_mla``,
#: cpp/tensorrt_llm/kernels/flashMLA/flash_fwd_mla_kernel.h at commit 08f1ea313edf; the
#: combine's blocks return early for a sequence of one split). TensorRT-LLM PR #3322
#: (2025-04-07, closed unmerged): "get_mla_metadata is slow and currently it is called before
#: each FlashMLA kernel"; PR #12161 (merged 2026-03) computes the metadata once per forward
#: pass: this list is the per-layer state in between, the era of the Hopper rows this engine
#: list describes. Both kernels are of class ``other`` (no class floor, no bytes counted): the
#: combine's work is in FlashMLA's published rates (:data:`MLA_DECODE_EFFICIENCY`, which time
#: ``flash_mla_with_kvcache``, split-KV and combine; the FlashMLA README computes the metadata
#: once before its layer loop), the scheduler's single-warp scan over the batch has no
#: published duration: each costs its kernel boundary, a lower bound. Not for DeepSeek Sparse
#: Attention (another kernel) nor Blackwell (trtllm-gen).
TRTLLM_HOPPER_FLASHMLA = {"gen_attention": (("mla_metadata",), ("mla_combine",))}

#: Width of the latent + rope head (``kv_lora_rank + qk_rope_head_dim``) TensorRT-LLM runs
#: FlashMLA for on Hopper (``ModelConfig.enable_flash_mla``: 576, DeepSeek-V3's 512 + 64).
TRTLLM_FLASHMLA_HEAD = 576


#: Tokens on a rank up to which TensorRT-LLM runs DeepSeek's MoE in its min-latency mode
#: (``hidden_states.size(0) <= 128`` with NVFP4 and the post-MoE all-reduce fusion:
#: ``DeepseekV3DecoderLayer.forward``). NOT pinned: read by an earlier session in a version of
#: modeling_deepseekv3.py whose commit was not recorded and which the store no longer holds
#: under a known commit. At the pinned a43cf9e363d5 the CUTLASS min-latency mode is gone; its
#: successor hands the MoE's unfinalized output to the fused MoE all-reduce when the step has
#: at most ``MoEAllReduce.max_token`` tokens, the MoE backend is ``TRTLLM``, the experts are
#: NVFP4 and the job is on one node (``forward_MoE``, ``do_finalize``).
TRTLLM_MIN_LATENCY_TOKENS = 128

#: Weight formats whose GEMMs TensorRT-LLM runs as two kernels: the dynamic quantization of
#: the BF16 input (FP8, one scale per token and group of 128 values), then the FP8 block-
#: scaling GEMM (``tensorrt_llm/_torch/modules/linear.py`` at commit ed53795b33fc,
#: ``FP8BlockScalesLinearMethod.apply``, its branch for chips other than SM100:
#: ``torch.ops.trtllm.fp8_quantize_1x128(input)`` then ``torch.ops.trtllm.fp8_block_scaling_gemm``). With ``engine="trtllm"`` and CUDA graphs, every
#: ``gemm`` kernel of :data:`GRAPH_KERNELS` whose part is stored in one of these formats and
#: runs in FP8 on the chip is preceded by one ``fp8_input_quant`` kernel (the elementwise
#: class, like SGLang's quantize kernels: a maximum per group of 128 values, no row-wide
#: reduction). The routed experts' grouped GEMMs of such weights take one each too: the
#: MoE runner's FP8 block-scale grouped GEMM quantizes its BF16 input itself first
#: (``CutlassFp8BlockScaleGemmRunner::moeGemm``, ``internal_quantize_a`` when the activations
#: are not FP8, handed to ``fp8_grouped_gemm_run``:
#: cpp/tensorrt_llm/kernels/cutlass_kernels/fp8_blockscale_gemm/fp8_blockscale_gemm.cu at commit
#: 0bf8132cc509; ``fp8_grouped_gemm_run`` launches ``scale_1x128_kernel`` then DeepGEMM's JIT
#: grouped-with-offset GEMM: fp8_blockscale_gemm_kernel.cuh at commit eef8cda79111, where the
#: dense Hopper path, ``gemm_dispatch``, is DeepGEMM's normal GEMM too). The router and head run BF16. Taken for Blackwell's FP8 branch too,
#: an assumption: at ed53795b33fc SM100 by default calls one op on the BF16 input
#: (``fp8_swap_ab_gemm``) whose kernels were not read.
TRTLLM_INPUT_QUANT_FORMATS = ("fp8-block128",)

#: TensorRT-LLM's MLA generation kernel with an FP8 KV cache runs its arithmetic in FP8:
#: "FP8 KV Cache and MLA quantization ... MLA kernel of the generation phase is accelerated by
#: FP8 arithmetic and reduced KV cache memory access", on Hopper (FP8 FlashMLA) and Blackwell
#: (trtllm-gen kernels) (NVIDIA/TensorRT-LLM ``examples/models/core/deepseek_v3/README.md`` at
#: commit a98a9061d72f, section "FP8 KV Cache and MLA"). With ``engine="trtllm"``, MLA attention
#: and a KV cache of this many bytes per element, the attention scores (``"scores"``) run at
#: the chip's FP8 peak where it has FP8 tensor cores (``ChipSpec.gemm_format("fp8")``), not
#: BF16. Other engines keep BF16 scores (their FP8-KV kernels were not read).
TRTLLM_FP8_MLA_KV_BYTES = 1.0

TRTLLM_FP8_MLA_SOURCE = ("NVIDIA/TensorRT-LLM examples/models/core/deepseek_v3/README.md at "
                         "a98a9061d72f, 'FP8 KV Cache and MLA': the generation-phase MLA kernel "
                         "runs FP8 arithmetic with an FP8 KV cache (Hopper and Blackwell)")

#: The dense MLA decode kernel TensorRT-LLM runs on Hopper, FlashMLA ("TensorRT LLM has
#: already integrated FlashMLA in the PyTorch backend. It is enabled automatically when
#: running DeepSeek-V3/R1": examples/models/core/deepseek_v3/README.md at a98a9061d72f):
#: "achieves up to 3000 GB/s in memory-bound configuration and 660 TFLOPS in
#: computation-bound configuration on H800 SXM5 with CUDA 12.8" (deepseek-ai/FlashMLA README
#: at commit 9241ae3; 660 since the 2025-04-22 update, 580 before). As fractions of the
#: H800's 3.35 TB/s and 989.4 dense BF16 TFLOPS: with ``engine="trtllm"`` the attention kernel
#: of an MLA decode step on a Hopper chip reads its KV cache at
#: ``MLA_DECODE_EFFICIENCY["hopper"][0]`` of peak HBM bandwidth (not
#: :data:`DECODE_HBM_EFFICIENCY`) and computes its scores at ``[1]`` of the peak of the format
#: they run in, under the default ``hbm_efficiency`` and ``compute_efficiency``. Both are the
#: kernel's best published figures ("up to"), taken for every Hopper chip (assumption). They
#: are the BF16 kernel's: with an FP8 KV cache (:data:`TRTLLM_FP8_MLA_KV_BYTES`, FP8 FlashMLA,
#: no published rate) the step keeps its defaults. Not for vLLM (its Hopper default became
#: FlashAttention MLA, vLLM PR #27363) or SGLang (not read), nor for Blackwell (no published
#: figure for its dense MLA decode kernels).
def _flashmla_h800():
    """FlashMLA's published H800 SXM5 rates over the H800's own peaks (fabric ``h800``)."""
    h800 = chip_spec("h800")
    return (
        Parameter("decode.mla_kernel.hbm_efficiency.hopper", 3000e9 / h800.hbm_bandwidth, "",
                  f"deepseek-ai/FlashMLA README at 9241ae3: dense MLA decoding 'up to 3000 GB/s "
                  f"in memory-bound configuration' on H800 SXM5 "
                  f"({h800.hbm_bandwidth / 1e12:.2f} TB/s); BF16 KV cache; every Hopper chip "
                  f"(assumption)"),
        Parameter("decode.mla_kernel.compute_efficiency.hopper", 660e12 / h800.peak("bf16"), "",
                  f"deepseek-ai/FlashMLA README at 9241ae3: dense MLA decoding '660 TFLOPS in "
                  f"computation-bound configuration' on H800 SXM5 "
                  f"({h800.peak('bf16') / 1e12:.1f} dense BF16 TFLOPS); BF16 KV cache; every "
                  f"Hopper chip (assumption)"))


MLA_DECODE_EFFICIENCY = {"hopper": _flashmla_h800()}

#: Kernels per layer of vLLM's graph-captured decode of the DeepSeek-V3 architecture (Kimi K2
#: is the same architecture) under plain tensor parallelism with INT4/FP4 routed experts,
#: counted from vLLM's code (vllm-project/vllm: ``model_executor/models/deepseek_v2.py``
#: decoder layer, ``model_executor/layers/mla.py`` MLA wrapper and its decode backend,
#: ``fused_moe`` Marlin path: align tokens to experts, two Marlin grouped GEMMs, the
#: activation, the sum over the top-k), one kernel per op; the tensor-parallel all-reduces
#: are costed by the collectives model (``analysis.cost``), not counted here. Attention: the
#: fused residual-add + RMSNorm, the fused q_a/kv_a projection, two RMSNorms, q_b, rotary,
#: the latent-cache write, the W_UK absorb, the MLA decode kernel, the W_UV absorb, o_proj.
#: MoE: the fused residual-add + RMSNorm, the router GEMM, the top-k with its bias, the
#: shared expert's gate/up GEMM, activation and down GEMM, the routed experts' five
#: kernels, and the add of shared and routed outputs. Dense FFN layers: the norm, gate/up,
#: activation, down. GQA attention and the head keep :data:`KERNELS`.
VLLM_GRAPH_KERNELS = {
    "mla": ("add_rmsnorm", "fused_qkv_a_proj", "q_a_rmsnorm", "kv_a_rmsnorm", "q_b_proj",
            "rotary", "mla_cache_write", "w_uk_bmm", "mla_decode", "w_uv_bmm", "o_proj"),
    "dense_ffn": ("add_rmsnorm", "gate_up_proj", "silu_and_mul", "down_proj"),
    "moe_ffn": ("add_rmsnorm", "router_gemm", "topk", "shared_gate_up", "shared_silu_and_mul",
                "shared_down", "moe_align", "marlin_gemm1", "silu_and_mul", "marlin_gemm2",
                "moe_sum", "add_shared_routed"),
}

#: Kernels per layer of SGLang's graph-captured decode of DeepSeek-V3 (FP8 block-quantized
#: weights) under data-parallel attention and DeepEP low-latency expert parallelism, counted
#: from SGLang's code (sgl-project/sglang ``python/sglang/srt/models/deepseek_v2.py`` of
#: mid-2025: ``forward_absorb_prepare`` / ``forward_absorb_core``, the MoE's ``op_*`` steps
#: for DeepEP, ``DeepseekV2MLP``; its FP8 block linear quantizes the activations per token
#: group in a kernel of its own before each FP8 GEMM; the DeepEP MoE runs DeepGEMM's masked
#: grouped GEMMs around a fused SiLU-and-quantize kernel), one kernel per op. Attention: the
#: fused residual-add + RMSNorm, quantize + fused q_a/kv_a projection, the two RMSNorms,
#: quantize + q_b, quantize + the W_UK batched GEMM (FP8), rotary, the latent-cache write,
#: the MLA decode kernel, quantize + W_UV, quantize + o_proj. MoE: the fused add + RMSNorm,
#: the router GEMM, the biased grouped top-k, the EPLB map of logical to physical experts,
#: the shared expert (quantize + gate/up, SiLU-and-mul, quantize + down), the two masked
#: grouped GEMMs and their SiLU-and-quantize, and the add of shared and routed outputs; the
#: exchange's kernels come from ``ep_kernel``. Dense FFN layers: norm, quantize + gate/up,
#: SiLU-and-mul, quantize + down. The quantize kernels are taken as elementwise (a max per
#: group of 128 values, no row-wide reduction: an assumption). GQA attention and the head
#: keep :data:`KERNELS`.
SGLANG_GRAPH_KERNELS = {
    "mla": ("add_rmsnorm", "qkv_a_quant", "fused_qkv_a_proj", "q_a_rmsnorm", "kv_a_rmsnorm",
            "q_b_quant", "q_b_proj", "q_nope_quant", "w_uk_bmm", "rotary", "mla_cache_write",
            "mla_decode", "attn_out_quant", "w_uv_bmm", "o_proj_quant", "o_proj"),
    "dense_ffn": ("add_rmsnorm", "gate_up_quant", "gate_up_proj", "silu_and_mul", "down_quant",
                  "down_proj"),
    "moe_ffn": ("add_rmsnorm", "router_gemm", "topk", "expert_location_map",
                "shared_gate_up_quant", "shared_gate_up", "shared_silu_and_mul",
                "shared_down_quant", "shared_down", "masked_gemm1", "masked_silu_and_mul_quant",
                "masked_gemm2", "add_shared_routed"),
}

#: Kernel lists of a graph-captured decode, by serving engine (``decode_step(engine=...)``).
ENGINE_KERNELS = {"trtllm": GRAPH_KERNELS, "vllm": VLLM_GRAPH_KERNELS,
                  "sglang": SGLANG_GRAPH_KERNELS}

#: What each kernel of the lists above does, by class: ``gemm`` (a weight GEMM or batched
#: GEMM), ``attention`` (the attention kernel, reading the KV cache), ``moe_gemm`` (the routed
#: experts' grouped GEMMs), ``exchange`` (MoE dispatch/combine, timed by the exchange model),
#: and the small kernels whose bytes the model does not count (activations only): ``norm``
#: (one row reduction per token: RMSNorm, fused add + RMSNorm, and TensorRT-LLM's fused
#: all-reduce + norm, whose all-reduce the collectives model times), ``elementwise`` (no
#: reduction: residual add, activation, rotary, cache write, the sum over the top-k),
#: ``topk`` (router selection, DSA's token selection), ``moe_align`` (the per-expert token
#: count, aligned prefix sum and sort of the tokens, vLLM's ``moe_align_block_size``) and
#: ``other`` (sampling; FlashMLA's scheduler and combine kernels on Hopper,
#: :data:`TRTLLM_HOPPER_FLASHMLA`); ``indexer`` is DSA's logits kernel
#: (:data:`DSA_INDEXER_KERNELS`), reading the indexer's key cache. The small kernels' time is their minimum duration
#: (:data:`KERNEL_FLOORS`); the heavy ones (``gemm``, ``attention``, ``moe_gemm``,
#: ``indexer``) run at their roofline.
KERNEL_CLASSES = {
    **dict.fromkeys(("q_a_proj", "q_b_proj", "kv_a_proj", "q_absorb", "v_absorb", "o_proj",
                     "qkv_proj", "gate_up_proj", "down_proj", "router_gemm", "shared_gate_up",
                     "shared_down", "lm_head", "fuse_a_gemm", "uq_qr_gemm", "uk_bgemm",
                     "uv_gemm", "wo_gemm", "ffn", "shared_expert", "fused_qkv_a_proj",
                     "w_uk_bmm", "w_uv_bmm", "mtp_proj", "indexer_q_proj",
                     "indexer_k_weights_proj"), "gemm"),
    **dict.fromkeys(("attention", "gen_attention", "mla_decode"), "attention"),
    **dict.fromkeys(("expert_gate_up", "expert_down", "sparse_experts", "marlin_gemm1",
                     "marlin_gemm2", "masked_gemm1", "masked_gemm2", "expert_gemm1",
                     "expert_gemm2"), "moe_gemm"),
    **dict.fromkeys(("dispatch", "combine", "exchange"), "exchange"),
    **dict.fromkeys(("attn_norm", "q_a_norm", "kv_a_norm", "ffn_norm", "final_norm",
                     "q_kv_rmsnorm", "allreduce_add_rmsnorm_quant", "allreduce_add_rmsnorm",
                     "reduce_allreduce_add_rmsnorm", "add_rmsnorm", "q_a_rmsnorm",
                     "kv_a_rmsnorm", "indexer_k_norm"), "norm"),
    **dict.fromkeys(("rope", "kv_cache_write", "residual_add", "act_mul", "expert_act",
                     "shared_act", "kv_cache_rope", "rotary", "mla_cache_write",
                     "silu_and_mul", "shared_silu_and_mul", "moe_sum", "add_shared_routed",
                     "qkv_a_quant", "q_b_quant", "q_nope_quant", "attn_out_quant",
                     "o_proj_quant", "gate_up_quant", "down_quant", "expert_location_map",
                     "shared_gate_up_quant", "shared_down_quant", "masked_silu_and_mul_quant",
                     "expert_strides", "expert_activation", "fp8_input_quant", "expert_expand",
                     "expert_finalize", "moe_output_add", "fp4_input_quant",
                     "indexer_q_rope_quant", "indexer_k_rope", "indexer_k_concat",
                     "indexer_k_cache"),
                    "elementwise"),
    **dict.fromkeys(("topk", "indexer_topk"), "topk"),
    "indexer_logits": "indexer",
    **dict.fromkeys(("moe_align", "expert_maps"), "moe_align"),
    **dict.fromkeys(("sample", "mla_metadata", "mla_combine"), "other"),
}

#: Kernel classes that share their block's roofline (weights, KV cache, FLOPs); the others
#: move only activations, which the model does not count.
_HEAVY = frozenset(("gemm", "attention", "moe_gemm", "indexer"))

#: Seconds: GPU time of an empty kernel in a replayed CUDA graph. Source: NVIDIA/Megatron-LM
#: PR #6453 (2026-08-11, Qwen3-30B-A3B decode campaign on GB200, per-kernel breakdown under
#: CUDA-graph replay): "the intra-graph dispatch gap is only 0.55 us and an empty kernel is
#: 0.72 us". Gap + empty kernel = 1.27 us, which is what :data:`GRAPH_KERNEL_OVERHEAD`
#: (1.3 us, Hazy Research, H100) charges per kernel and what the same campaign prices one
#: no-op graph node at (1.34 us, PR #6064): the boundary already includes an empty kernel,
#: so a kernel's minimum duration adds only what it runs beyond an empty kernel.
EMPTY_KERNEL_TIME = Parameter(
    "decode.empty_kernel_time", 0.72e-6, "s",
    "NVIDIA/Megatron-LM PR #6453 (2026-08-11): an empty kernel is 0.72 us under CUDA-graph "
    "replay (GB200; the dispatch gap is 0.55 us)")

#: Seconds: the duration of a small kernel of each class in a replayed CUDA graph when it
#: moves almost no data (its latency chain: DRAM round trips, a block reduction, the write).
#: All from one published per-kernel campaign, NVIDIA/Megatron-LM PRs #6453-#6463 (split from
#: PR #6064, 2026-08-11: Qwen3-30B-A3B decode, ~256 tokens per step, Megatron-Core inference
#: with CUDA graphs, measured on GB200):
#:
#: * ``norm`` 2.9 us: TransformerEngine ``rmsnorm_fwd_tuned`` at the decode point (PR #6463);
#: * ``elementwise`` 1.5 us: the residual add ``triton_poi_fused_add_copy`` (PR #6463);
#: * ``topk`` 4.10 us: router softmax + top-8 selection fused into one kernel, one CTA per
#:   token, under CUDA-graph replay at 256 tokens (PR #6456);
#: * ``moe_align`` 8.23 us: the MoE indirection table (per-expert count, aligned prefix sum,
#:   block-to-expert fill, scatter: what vLLM's ``moe_align_block_size`` builds) in one
#:   kernel under CUDA-graph replay (PR #6453).
#:
#: * ``indexer`` 4.2 us: DeepSeek Sparse Attention's indexer logits kernel (DeepGEMM's FP8
#:   paged MQA logits, the kernel vLLM's and TensorRT-LLM's indexers call on Blackwell) at its
#:   smallest published load, batch 1 over 1,024 cached keys (the ``DG (us)`` column of
#:   NVIDIA/TensorRT-LLM PR #14133, 2026-05, SM100, 148 SMs; kernel time as its performance
#:   test reads it, torch.profiler device time per call): 4.1-4.3 us from batch 1 to 16 and
#:   1,024 to 8,192 keys, a latency floor (PR #13219's table: 3.8 us at batch 1 over 32,768
#:   keys for the same kernel; 45.3 us at batch 32 over 65,536, where the key read dominates).
#:   Not from the Megatron campaign: its own source.
#:
#: Assumptions that carry them over: a small kernel's duration is set by its latency chain,
#: not by the model or the engine that launches it (the Megatron kernels move ~1 MB, far
#: below the bandwidth floor, like the 57-917 KB of a Kimi K2 step at 4-64 tokens), and is
#: the same on Hopper as on Blackwell. Corroboration: on an RTX 5090 (ninfer PR #67, nsys
#: node-level) an RMSNorm takes ~2.4 us, an elementwise multiply ~1.4 us and a top-8 of 256
#: routing kernel ~4.8 us; vLLM's own fused add + RMSNorm at DeepSeek's hidden size 7168
#: takes 6.7-6.9 us per call in a CUDA graph (vLLM PR #36899, GPU not stated), so the norm
#: figure is a low estimate for vLLM. ``gemm``, ``attention``, ``moe_gemm``, ``exchange``
#: and ``other`` have no class floor, so they cost their roofline (the exchange its own
#: model); one kind of GEMM has a published floor of its own, by its reduction dimension:
#: dense NVFP4 GEMMs on Blackwell (``analysis.DECODE_GEMM_K_FLOOR``, flashinfer PR #2540's
#: M = 1 times; :func:`_ffn_kernel_floors`), taken with these floors (``kernel_floors=None``).
KERNEL_FLOORS = {
    "norm": Parameter("decode.kernel_floor.norm", 2.9e-6, "s",
                      "NVIDIA/Megatron-LM PR #6463 (2026-08-11): TE rmsnorm_fwd_tuned ~2.9 us "
                      "per decode call, CUDA graph, GB200"),
    "elementwise": Parameter("decode.kernel_floor.elementwise", 1.5e-6, "s",
                             "NVIDIA/Megatron-LM PR #6463 (2026-08-11): residual add "
                             "triton_poi_fused_add_copy ~1.5 us, CUDA graph, GB200"),
    "topk": Parameter("decode.kernel_floor.topk", 4.10e-6, "s",
                      "NVIDIA/Megatron-LM PR #6456 (2026-08-11): fused router softmax + top-k, "
                      "4.10 us per layer under CUDA-graph replay, GB200"),
    "moe_align": Parameter("decode.kernel_floor.moe_align", 8.23e-6, "s",
                           "NVIDIA/Megatron-LM PR #6453 (2026-08-11): MoE indirection table "
                           "built in one kernel, 8.23 us per layer under CUDA-graph replay, "
                           "GB200"),
    "indexer": Parameter("decode.kernel_floor.indexer", 4.2e-6, "s",
                         "NVIDIA/TensorRT-LLM PR #14133 (2026-05): DeepGEMM FP8 paged MQA "
                         "logits (the DSA indexer's logits kernel) at batch 1 over 1,024 "
                         "cached keys, 4.2 us kernel time, SM100 (4.1-4.3 us up to batch 16 "
                         "and 8,192 keys)"),
}

#: Seconds a weight GEMM of a decode step runs beyond its streaming time and its boundary
#: (pipeline fill, last wave, epilogue): added to every ``gemm`` kernel, whatever its size.
#: Source: vLLM PR #53534 (2026-08-24, Kimi K3 BF16 decode projections on B200, times per call
#: under CUDA-graph replay, cuBLAS column, M = 1): 3072x7168 10.26 us, 3584x7168 12.31,
#: 6288x7168 15.45, 7168x8448 26.19, 10240x7168 29.52, 16896x7168 40.57, 20480x7168 51.28.
#: A least-squares line through time against weight bytes (2 B per weight; 44-294 MB) has
#: slope 1/6.25 TB/s (0.78 of the B200's 8 TB/s: :data:`DECODE_HBM_EFFICIENCY`, independently)
#: and intercept 3.90 us, the fixed part of one replayed GEMM call; minus the boundary the
#: model already charges (:data:`GRAPH_KERNEL_OVERHEAD`, 1.3 us) that is 2.60 us.
#: Assumptions: the same on Hopper, for FP8/BF16 GEMMs of any size and for the batched
#: absorb GEMMs; residuals of the fit are up to 2.9 us, so it is a mean. The routed experts'
#: grouped GEMMs (``moe_gemm``) do not take it (their measured bandwidth,
#: :data:`VLLM_INT4_MOE_HBM_EFFICIENCY`, is a whole-kernel time), nor does attention.
GEMM_FIXED_TIME = Parameter(
    "decode.gemm_fixed_time", 2.60e-6, "s",
    "vLLM PR #53534 (2026-08-24): B200 BF16 decode GEMMs at M=1 under CUDA-graph replay, "
    "least-squares time = 3.90 us + bytes / 6.25 TB/s over 7 shapes; minus the 1.3 us "
    "boundary")

#: Seconds per kernel of a replayed CUDA graph: the GPU-side time of a kernel boundary (the
#: next kernel's launch and the previous one's drain), during which no weight is loaded.
#: Source: Hazy Research, "Look Ma, No Bubbles! Designing a Low-Latency Megakernel for
#: Llama-1B" (2025-05-27): measured on an H100, launching kernels through CUDA graphs still
#: costs about 1.3 us per kernel. Consistent with TensorRT-LLM tech_blog1 (DeepSeek-R1,
#: 8xB200), where Programmatic Dependent Launch hides about 0.5 us of each kernel's gap
#: (168 -> 173 tokens/s/user at 2.82 tokens per step over ~900 kernels): PDL hides part of
#: the 1.3 us, not more. Taken for every chip (an assumption: measured on H100 only).
GRAPH_KERNEL_OVERHEAD = Parameter(
    "decode.graph_kernel_overhead", 1.3e-6, "s",
    "Hazy Research 'Look Ma, No Bubbles!' (2025-05-27): ~1.3 us per kernel launched "
    "through CUDA graphs, measured on H100; taken for every chip (assumption)")

#: Seconds of each kernel boundary that Programmatic Dependent Launch hides in a replayed CUDA
#: graph (``decode_step(pdl=True)``). PDL launches a kernel before the kernel it depends on has
#: finished (the CUDA C++ Programming Guide, "Programmatic Dependent Launch and
#: Synchronization": the dependent grid's launch overlaps the primary's execution), so the
#: intra-graph dispatch gap between the two, 0.55 us on GB200 (NVIDIA/Megatron-LM PR #6453,
#: 2026-08-11: "the intra-graph dispatch gap is only 0.55 us and an empty kernel is 0.72 us"),
#: overlaps the predecessor; the empty kernel's own run stays. Of
#: :data:`GRAPH_KERNEL_OVERHEAD` (1.3 us = gap + empty kernel) a kernel then pays
#: ``1.3 - 0.55 = 0.75`` us. Taken for every kernel of the step: an upper bound on the saving
#: (in TensorRT-LLM only its own kernels launch with the PDL attribute when
#: ``TRTLLM_ENABLE_PDL=1``, not cuBLAS's). Corroboration, not a fit: TensorRT-LLM tech_blog1's
#: "Enable PDL" step, 168 -> 173 tokens/s/user at 2.82 tokens per cycle, is 0.49 ms per cycle,
#: 0.42 us for each of the ~1160 kernels of an MTP-3 cycle in this module's lists.
PDL_HIDDEN_GAP = Parameter(
    "decode.pdl_hidden_gap", 0.55e-6, "s",
    "NVIDIA/Megatron-LM PR #6453 (2026-08-11): the intra-graph dispatch gap, 0.55 us (GB200), "
    "which Programmatic Dependent Launch overlaps with the preceding kernel; every kernel "
    "(upper bound: TensorRT-LLM's own kernels launch with PDL, cuBLAS's do not)")

#: Achieved fraction of peak HBM bandwidth when decode streams weights and KV cache. Source:
#: Hazy Research, "Look Ma, No Bubbles!" (2025-05-27): a decode forward pass fused into one
#: kernel (Llama-3.2-1B, batch 1, BF16, H100), i.e. with no kernel boundaries, uses 78% of
#: the H100's memory bandwidth, the highest published figure for decode weight streaming
#: (the same post measures vLLM and SGLang at no more than 50% with their kernel
#: boundaries, which :data:`GRAPH_KERNEL_OVERHEAD` accounts for separately). Taken for every
#: chip and every weight format (an assumption: measured on H100, BF16).
DECODE_HBM_EFFICIENCY = Parameter(
    "decode.hbm_efficiency", 0.78, "",
    "Hazy Research 'Look Ma, No Bubbles!' (2025-05-27): a whole decode forward in one "
    "kernel reaches 78% of H100 HBM bandwidth (Llama-3.2-1B, batch 1); taken for every "
    "chip (assumption)")

#: Seconds: a uniform minimum run of every kernel beyond its boundary, for a user who wants
#: one floor for all kernels on top of the per-class :data:`KERNEL_FLOORS` (kernel ``i``
#: costs ``max(r_i, floor_i - EMPTY_KERNEL_TIME, min_kernel_time)`` beyond its boundary).
#: Default 0 (off): the sourced per-class floors are :data:`KERNEL_FLOORS`.
MIN_KERNEL_TIME = Parameter(
    "decode.min_kernel_time", 0.0, "s",
    "user (0 = off): a uniform floor on top of decode.kernel_floor.*")

#: Achieved fraction of peak HBM bandwidth of vLLM's INT4 W4A16 grouped-MoE GEMMs (the
#: routed experts' two grouped GEMMs of a ``compressed-tensors`` INT4 checkpoint), in this
#: module's accounting of routed-expert bytes (uniform routing, each active expert read
#: once per chip). Source: vLLM issue #32832 ("H200 Kimi K2 TP8 Triton MoE min-latency",
#: NVIDIA engineer, 2026-01-22): an Nsight Systems trace of one decode step of Kimi K2 with
#: INT4 W4A16 weights, TP=8 on 8x H200, 16 concurrent requests: the two MoE GEMM kernels of
#: a layer take 234 us. At 16 tokens, top-8 of 384 experts, uniform routing activates
#: ``384 (1 - (1 - 8/384)**16) = 109.8`` experts; each H200 holds 1/8 of each (TP=8 splits
#: every expert), 3 x 7168 x 2048 / 8 weights at 0.5625 B (INT4, BF16 scale per 32):
#: 340.1 MB per chip, read in 234 us = 1.45 TB/s = 0.303 of the H200's 4.8 TB/s.
#: The same trace puts DeepSeek-V3.1's FP8 MoE GEMMs at 109 us, which this accounting
#: reads as 1.07 of peak: real routing activates fewer distinct experts than uniform
#: routing, so the INT4 figure is an effective fraction tied to this accounting, and the
#: INT4 path runs at about 0.28 of the FP8 path's bandwidth on the same GPU. Independent
#: corroboration: vLLM's Marlin W4A16 fused MoE measured on one H20 (4.0 TB/s) with 256
#: experts, top-8, hidden 7168, expert width 2048, random routing (FlagGems PR #3609,
#: 2026-05-29: 0.143 / 1.395 / 2.973 ms at 1 / 16 / 64 tokens) is 0.32 / 0.41 / 0.42 of peak
#: in the same accounting (group-128 scales assumed; group 32 gives 9% more). Assumptions:
#: the fraction is the same at every batch, on every chip (measured on H200) and in vLLM
#: 0.21 (the trace predates it); it applies to vLLM's default W4A16 MoE path (Marlin /
#: Triton WNA16), not to FlashInfer's TRT-LLM MXINT4 kernel that
#: ``VLLM_USE_FLASHINFER_MOE_INT4=1`` selects on Blackwell.
VLLM_INT4_MOE_HBM_EFFICIENCY = Parameter(
    "decode.vllm_int4_moe_hbm_efficiency", 0.303, "",
    "vLLM issue #32832 (2026-01-22): Nsight trace, Kimi K2 INT4 W4A16, TP=8 on 8x H200, 16 "
    "concurrent requests: the MoE layer's two grouped GEMMs take 234 us; 109.8 active "
    "experts (uniform routing) x 3.10 MB per H200 = 340 MB in 234 us = 0.303 of 4.8 TB/s; "
    "taken for every batch and chip and for vLLM 0.21 (assumptions)")

#: ``decode_step(overlap=TWO_BATCH)``: the decode two-batch overlap of DeepSeek's inference
#: system as SGLang runs it. Each decode step is split into two micro-batches of half the
#: sequences that take turns on one stream, layer by layer, in five stages (sgl-project/sglang
#: ``two_batch_overlap.py`` and the DeepSeek decode operation list, ``tbo_delta_stages=2``;
#: DeepSeek's decode design in deepseek-ai/profile-data README, 2025-03-21; lmsys blog
#: 2025-05-05 "Deploying DeepSeek with PD Disaggregation and Large-scale Expert Parallelism on
#: 96 H100 GPUs", section Two-batch Overlap):
#:
#: 1. input norm and the attention up to its absorbed query (``op_prepare``);
#: 2. the attention kernel, the value absorb and output projection (``op_core``), the
#:    post-attention norm, the router GEMM and top-k;
#: 3. the dispatch's send, then the shared experts;
#: 4. the dispatch's receive, the routed experts, the combine's send;
#: 5. the combine's receive and the layer output.
#:
#: Micro-batch B runs two stages behind A on the same stream (A1 A2 A3 B1 A4 B2 A5 B3 A1' B4
#: ...), so between a micro-batch's dispatch send and its receive the stream runs its own
#: shared experts and the other micro-batch's stage 1; between its combine send and receive,
#: the other's stage 2. An exchange's transfer (the RDMA/NVLink writes in flight, which hold no
#: SMs: DeepEP low-latency's receive hook, "after RDMA messages are issued, all GPU SMs are
#: freed", profile-data README) hides under that window only; what is left is a busy-wait of
#: the receive kernel; the kernels' own work (``fixed`` and the receive-side copy of
#: :func:`analysis.moe_exchange`) stays on the stream. Per micro-batch and MoE layer:
#:
#: ``exposed = fixed_d + copy_d + max(0, transfer_d - (shared + stage1))
#: + fixed_c + copy_c + max(0, transfer_c - stage2)``
#:
#: with the stage times each kernel's own roofline plus its floors and boundary (the other
#: micro-batch's equal ones: the batch is split in halves). No two waits overlap another
#: micro-batch's transfer in this order, so the sum is exact for the schedule (checked against
#: an event simulation in the tests). Not modelled: SM sharing while a send or receive runs.
#: The lmsys blog's decode profile (9 x 8 H100, 256 sequences per GPU) is consistent: dispatch
#: waits (~0.17 ms per layer against 0.06 ms of SM work in a unit test) because stage 1 is
#: short, and combine waits longer when attention is shorter.
TWO_BATCH = "two-batch"

TWO_BATCH_SOURCE = ("SGLang two-batch overlap for DeepSeek decode (sgl-project/sglang "
                    "two_batch_overlap.py, decode operations in five stages, delta 2; "
                    "deepseek-ai/profile-data README 2025-03-21; lmsys blog 2025-05-05)")

# Collective operation names of the collectives model (analysis/_collectives.py).
_ALL_TO_ALL = "all-to-all"
_ALL_TO_ALLV = "all-to-allv"
_ALL_REDUCE = "all-reduce"


# -- routing ------------------------------------------------------------------------------

def expert_activation(experts, k, tokens, skew=0.0):
    """Per-expert pick probability per token and probability of being active.

    Parameters
    ----------
    experts : int
        Routed experts ``E``.
    k : int
        Experts per token.
    tokens : int
        Tokens routed in this step ``T``.
    skew : float
        Zipf exponent of expert popularity; 0 is uniform routing.

    Returns
    -------
    pick, active : ndarray of shape (experts,)
        ``pick[i]``: probability that one token picks expert ``i``;
        ``active[i] = 1 - (1 - pick[i])**tokens``.

    Examples
    --------
    >>> pick, active = expert_activation(4, 2, 1)
    >>> pick.tolist(), active.tolist()
    ([0.5, 0.5, 0.5, 0.5], [0.5, 0.5, 0.5, 0.5])
    """
    check_number("skew", skew)      # a bool is not an exponent (True read as 1), nor a string
    experts = check_count(experts, "experts", 1, "an integer >= 1 (routed experts)")
    if check_count(k, "k", 0, f"an integer between 0 and experts ({experts})") > experts:
        raise SpecError(f"k must be an integer between 0 and experts ({experts}), got "
                        f"k={show_value(k)}")
    # a negative count would make an expert more than certainly active
    check_number("tokens", tokens, tail=" (tokens routed)")
    experts, k = int(experts), int(k)
    check_length(experts, f"experts={show_value(experts)}")     # one probability per expert
    if skew == 0:
        pick = np.full(experts, k / experts)
    else:
        q = np.arange(1, experts + 1, dtype=float) ** -float(skew)
        pick = np.minimum(1.0, k * q / q.sum())
    active = 1.0 - (1.0 - pick) ** tokens
    return pick, active


def expected_active_experts(experts, k, tokens, skew=0.0):
    """Expected number of distinct experts that ``tokens`` tokens activate.

    Uniform routing: ``E (1 - (1 - k/E)^T)``; see :func:`expert_activation` for skew.

    Parameters
    ----------
    experts : int
        Routed experts (``E``).
    k : int
        Experts per token.
    tokens : int
        Tokens routed (``T``).
    skew : float
        Routing skew, >= 0 (0: uniform; :func:`expert_activation`).

    Returns
    -------
    float
        Experts.

    Examples
    --------
    >>> expected_active_experts(384, 8, 1000) <= 384
    True
    """
    return float(expert_activation(experts, k, tokens, skew)[1].sum())


def expected_max_active(active, owner, chips):
    """Expected active experts on the busiest chip: ``E[max_c N_c]``.

    ``N_c``, the active experts on chip ``c``, is a sum of independent Bernoulli
    variables (a Poisson-binomial) with the probabilities ``active[e]`` of the
    experts ``e`` that chip holds; chips are taken as independent, so
    ``P(max <= m) = prod_c P(N_c <= m)`` and ``E[max] = sum_m (1 - P(max <= m))``.
    At small batch this is what sets the weight-read time: a chip that hosts
    one active expert reads all of it, however unlikely that was.

    Parameters
    ----------
    active : ndarray (experts,)
        Probability that each expert is active this step.
    owner : ndarray (experts,) of int
        The chip of each expert.
    chips : int

    Examples
    --------
    >>> import numpy as np
    >>> expected_max_active(np.array([0.5, 0.5]), np.array([0, 1]), 2)   # 1 - 0.5 * 0.5
    0.75

    Raises
    ------
    TypeError
        For values of the wrong kind: ``active`` not numbers (a bool among them too),
        ``owner`` not integers, ``chips`` not an integer.
    SpecError
        For an ``active`` entry outside [0, 1] (nan too), an ``owner`` outside
        ``0..chips-1``, arrays of different lengths or not 1-D, ``chips`` < 1.
    """
    # the public face checks (a bool was read as probability 1, owner 1.7 as chip 1, a longer
    # active silently cut to owner's length, active=2 answered nan); the step's own arrays go
    # straight to _busiest_active
    chips = check_count(chips, "chips", 1)
    owner = whole_numbers(owner, "owner", f"integers in 0..{chips - 1} (chips)", high=chips,
                          exc=SpecError)
    a = real_array(active, "active", "active must be probabilities (numbers)")
    if np.ndim(owner) != 1 or a.shape != owner.shape:
        raise SpecError(f"active and owner must be 1-D arrays of one entry per expert, got "
                        f"shapes {a.shape} and {np.shape(owner)}")
    bad = np.flatnonzero(~((a >= 0) & (a <= 1)))      # nan is neither
    if len(bad):
        raise SpecError(f"active must be probabilities in [0, 1], got active[{bad[0]}]="
                        f"{float(a[bad[0]])!r}")
    return _busiest_active(a, owner, chips)


def _busiest_active(active, owner, chips):
    """:func:`expected_max_active` of checked arrays (a decode step's own routing)."""
    # a pure function of its arrays' values, remembered by them: from ~1,200 tokens on every
    # one of DeepSeek's 256 experts (8 a token) is certainly active (``active`` all 1.0), so
    # a serving run's hundreds of step sizes ask for a few distinct answers
    active = np.asarray(active, dtype=float)
    owner = np.asarray(owner, dtype=np.int64)
    return _expected_max_active(active.tobytes(), active.shape, owner.tobytes(), owner.shape,
                                chips)


@functools.lru_cache(maxsize=1024, typed=True)    # typed: 8.0 chips is refused as before
def _expected_max_active(active, active_shape, owner, owner_shape, chips):
    """:func:`expected_max_active` of the arrays given by their bytes and shapes."""
    active = np.frombuffer(active, dtype=float).reshape(active_shape)
    owner = np.frombuffer(owner, dtype=np.int64).reshape(owner_shape)
    counts = np.bincount(owner, minlength=chips)
    most = int(counts.max()) if len(counts) else 0
    # probs[c, j]: the j-th expert of chip c (in expert order), zero-padded: every chip's
    # distribution is built at once, one Bernoulli per column
    order = np.argsort(owner, kind="stable")
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    slot = np.arange(len(owner)) - np.repeat(starts, counts)
    probs = np.zeros((chips, most))
    probs[owner[order], slot] = active[order]
    dist = np.zeros((chips, most + 1))
    dist[:, 0] = 1.0
    for j in range(most):                           # add one Bernoulli(q) to every chip
        q = probs[:, j:j + 1]
        dist[:, 1:] = dist[:, 1:] * (1 - q) + dist[:, :-1] * q
        dist[:, :1] *= 1 - q
    cdf = np.minimum(np.cumsum(dist, axis=1), 1.0)
    with np.errstate(divide="ignore"):
        log_cdf = np.log(cdf).sum(axis=0)           # sum over chips of log P(N_c <= m)
    return float(np.sum(1.0 - np.exp(log_cdf[:-1])))


# -- layout -------------------------------------------------------------------------------

@dataclass(frozen=True)
class Layout:
    """How a model is placed on the chips (see the module docstring).

    Attributes
    ----------
    tp : int
        Tensor-parallel ranks per attention group.
    dp : int
        Attention data-parallel groups.
    ep : int
        Expert-parallel ranks; ``ep * etp`` must equal ``tp * dp`` (experts live on the
        same chips).
    etp : int
        Expert tensor parallelism: each routed expert is split ``etp`` ways (its
        intermediate dimension). Default 1 (whole experts). ``etp > 1`` is offered with
        attention tensor-parallel over every chip (``dp = 1``) and ``etp`` dividing
        ``tp``: the routed experts are spread over ``ep = tp / etp`` groups of ``etp``
        chips, every chip holds the group's experts' ``1/etp`` slices, the shared experts
        are split over the ``tp`` chips, and since attention leaves every token on every
        chip the MoE output is all-reduced with no dispatch or combine. ``etp = tp``
        (``ep = 1``) is vLLM's plain tensor parallelism ("TP=8" without expert
        parallelism); ``1 < etp < tp`` is TensorRT-LLM's mixed layout (``--tp 8 --ep 2``:
        routed experts TP4 x EP2, shared experts TP8; NVIDIA TensorRT-LLM tech blog 1,
        "Parallelism Strategy").
    """

    tp: int
    dp: int
    ep: int
    etp: int = 1

    @property
    def chips(self):
        """Chips used: ``tp * dp``."""
        return self.tp * self.dp

    @property
    def exchanges(self):
        """Whether a MoE layer sends tokens to their experts' ranks and back (dispatch and
        combine): whole experts (``etp == 1``) over ``ep > 1`` ranks. With ``etp > 1`` every
        chip has every token and the MoE output is all-reduced instead; with ``ep == 1`` every
        expert is on every chip. The one test of decode's kernel lists, held starts and
        exchange, and of a prompt pass's kernels and collectives."""
        return self.ep > 1 and self.etp == 1

    def __str__(self):
        base = f"tp={self.tp},dp={self.dp},ep={self.ep}"
        return base if self.etp == 1 else f"{base},etp={self.etp}"


def parse_layout(layout, n_chips):
    """Resolve a layout for a system of ``n_chips`` chips.

    ``layout`` is a :class:`Layout`, ``None`` (``tp=1``, every chip), a mapping, or a
    string like ``"tp=8"``, ``"tp=4,dp=32"``, ``"ep=64"``, ``"tp=8,etp=8"``. Missing
    values default to ``tp=1``, ``dp = ep * etp / tp`` or ``n_chips / tp``,
    ``etp=1``, ``ep = tp * dp / etp``.

    Parameters
    ----------
    layout : Layout, str, mapping or None
        As above.
    n_chips : int
        Chips of the system (or instance), >= 1.

    Returns
    -------
    Layout

    Examples
    --------
    >>> str(parse_layout("tp=8", 128))
    'tp=8,dp=16,ep=128'
    >>> str(parse_layout("tp=8,dp=1,etp=8", 8))
    'tp=8,dp=1,ep=1,etp=8'
    >>> str(parse_layout("tp=8,dp=1,etp=4", 8))       # TensorRT-LLM's --tp 8 --ep 2
    'tp=8,dp=1,ep=2,etp=4'
    >>> parse_layout("tp=3", 128)
    Traceback (most recent call last):
    ...
    fabric.SpecError: layout: tp=3 does not divide the 128 chips; give dp explicitly
    """
    keys = ("tp", "dp", "ep", "etp")
    # n_chips=None was "unsupported operand type(s) for %", an array numpy's "ambiguous"
    n_chips = check_count(n_chips, "n_chips", 1, "an integer >= 1 (the chips laid out)")
    if isinstance(layout, Layout):
        values = dataclasses.asdict(layout)
    elif layout is None:
        values = {}
    elif isinstance(layout, str):
        values = {}
        for part in filter(None, (p.strip() for p in layout.split(","))):
            key, sep, val = part.partition("=")
            key = key.strip()
            if not sep or key not in keys or not is_numeral(val.strip()) or val.strip().startswith("-"):
                raise SpecError(f"layout: cannot read {show_value(part)}; expected tp=N, dp=N, "
                                f"ep=N or etp=N, comma separated")
            if key in values:
                raise SpecError(f"layout: {key} is given twice in {show_value(layout)}")
            values[key] = int(val)
    elif isinstance(layout, dict):
        values = dict(layout)
    else:
        raise kind_error(layout, "layout", "a Layout, str, dict or None")
    unknown = set(values) - set(keys)
    if unknown:
        # sorted by str: keys of mixed kinds were "'<' not supported" (inputs, session 38)
        raise SpecError("layout: " + unknown_fault(sorted(unknown, key=str), "keys", keys))
    values = {key: check_count(val, key, 1, "an integer >= 1 (a layout's group size)")
              for key, val in values.items()}
    tp = values.get("tp", 1)
    dp = values.get("dp")
    ep = values.get("ep")
    etp = values.get("etp", 1)
    derived = ""
    if dp is None:
        base = ep * etp if ep is not None else n_chips
        if base % tp:
            what = f"ep={ep}" if ep is not None else f"the {n_chips} chips"
            raise SpecError(f"layout: tp={tp} does not divide {what}; give dp explicitly")
        dp = base // tp
        # a dp the text did not give is named as derived ('tp=8,ep=8,etp=8' read "got dp=8")
        derived = (f" (not given: ep x etp / tp = {ep} x {etp} / {tp})" if ep is not None
                   else f" (not given: the {n_chips} chips / tp)")
    if etp > 1 and (tp % etp or dp != 1):
        raise SpecError(f"layout: etp={etp} (experts split over ranks) is offered with "
                        f"dp = 1 and etp dividing tp: etp = tp (plain tensor parallelism) or "
                        f"1 < etp < tp (mixed, experts etp x ep), got tp={tp}, dp={dp}{derived}")
    if ep is None:
        ep = tp * dp // etp
    if ep * etp != tp * dp:
        raise SpecError(f"layout: ep={ep} must equal tp*dp={tp}*{dp}={tp * dp} divided by "
                        f"etp={etp} (experts are spread over the same chips as attention)")
    if tp * dp > n_chips:
        raise SpecError(f"layout: tp*dp={tp}*{dp}={tp * dp} chips but the system has "
                        f"{n_chips}")
    return Layout(tp, dp, ep, etp)


# -- the instance's chips -------------------------------------------------------------------

def _check_chips(chips):
    return check_count(chips, "chips", 1, "an integer >= 1 (chips per instance)")


def _check_tp(tp, chips):
    rule = (f"an integer >= 1 dividing the instance's {chips} chips (its tensor-parallel group "
            "size)")
    if chips % check_count(tp, "tp", 1, rule):
        raise SpecError(f"tp must be {rule}, got tp={show_value(tp)}")
    return int(tp)


def _check_instance_chips(fabric, chips):
    _check_chips(chips)
    if chips > fabric.n_endpoints:
        raise SpecError(f"an instance of {chips} chips but {fabric.name} has "
                        f"{fabric.n_endpoints} live chips")
    return chips


def _domain_groups(fabric):
    """Positions (in ``fabric.endpoints``) of the live chips, one tuple per load/store domain
    (:attr:`fabric.Fabric.loadstore_domains`, the one rule), domains in order of their first
    chip. Cached per fabric (a frontier asks for every step)."""
    memo = fabric_memo(fabric, __name__)
    out = memo.get("groups")
    if out is None:
        label, index = fabric.loadstore_domains, fabric.node_index
        groups = {}
        for pos, name in enumerate(fabric.endpoints):
            groups.setdefault(int(label[index[name]]), []).append(pos)
        out = memo["groups"] = tuple(tuple(g) for g in groups.values())
    return out


def _usable_groups(fabric, chips):
    """:func:`_domain_groups` without the chips a failure cut off from every other chip
    (``fabric.failures.cut_off``) when the instance has more than one chip: no copy of it
    can use them. Unchanged when too few chips would be left (the instance then needs a
    cut-off chip, and costing its collectives says so)."""
    groups = _domain_groups(fabric)
    cut = fabric.failures.cut_off
    if chips < 2 or not cut:
        return groups
    alone = {i for i, n in enumerate(fabric.endpoints) if n in cut}
    kept = tuple(g for g in (tuple(p for p in g if p not in alone) for g in groups) if g)
    return kept if sum(map(len, kept)) >= chips else groups


def _reach(fabric):
    """``R[i, j]``: whether the fabric's routing (``fabric.route``, any transport) joins
    live chips ``i`` and ``j`` (positions in ``fabric.endpoints``) both ways.

    Every pair on an intact fabric. On a degraded one, not the pairs the failures leave
    without a path: a chip cut off from every other (``fabric.failures.cut_off``), a GPU
    whose only NIC link failed and another server's GPUs, or, on a switch of several
    planes, two chips that each lost a different plane's links: each still reaches the
    rest, but not the other (reachability is not transitive there, so sharing a load/store
    domain does not make chips a group). The router names the pairs it cannot route
    (``fabric.Router.unreachable_pairs``: under dimension order only the pairs the failures
    touch are examined). Cached per fabric; read-only."""
    memo = fabric_memo(fabric, __name__)
    got = memo.get("reach")
    if got is not None:
        return got
    n = fabric.n_endpoints
    ok = np.ones((n, n), dtype=bool)
    if fabric.failures.degraded and n > 1:
        cut = np.array([c in fabric.failures.cut_off for c in fabric.endpoints])
        ok[cut, :] = False
        ok[:, cut] = False
        live = np.flatnonzero(~cut)
        ends = np.asarray(fabric.endpoint_indices, dtype=np.int64)[live]
        i, j = fabric.router.unreachable_pairs(ends)
        ok[live[i], live[j]] = False
        ok &= ok.T
    np.fill_diagonal(ok, True)
    ok.flags.writeable = False
    memo["reach"] = ok
    return ok


def unreached_pair(fabric, positions):
    """Two chips among ``positions`` (indices into ``fabric.endpoints``) that the fabric's
    routing does not join both ways, as ``(name, name)``, or None when every pair is joined:
    the first such pair of the cached reach table (:func:`_reach`), the one rule decode's
    collectives (:func:`collective_seconds`) and the serving search's skip reasons use.

    >>> import topologies
    >>> g = topologies.build("switch:4,planes=2").without(links=["chip1-sw0", "chip2-sw1"])
    >>> unreached_pair(g, [0, 1, 3]) is None, unreached_pair(g, [0, 1, 2, 3])
    (True, ('chip1', 'chip2'))
    """
    if not fabric.failures.degraded:
        return None
    pos = np.asarray(positions, dtype=np.int64)
    sub = _reach(fabric)[np.ix_(pos, pos)]
    if sub.all():
        return None
    i, j = (int(x) for x in np.argwhere(~sub)[0])
    return fabric.endpoints[pos[i]], fabric.endpoints[pos[j]]


def _check_reach(fabric, positions):
    """Raise RoutingError naming two of ``positions`` (live chips) that no route joins: a
    collective of a step (a tensor-parallel all-reduce, an expert exchange) moves data
    between every pair of its chips (a one-shot all-reduce reads every peer's buffer; an
    all-to-all sends to every rank), so its chips must reach each other pairwise."""
    pair = unreached_pair(fabric, positions)
    if pair is None:
        return
    a, b = pair
    why = fabric.failures.explain(a, b).replace("between them", f"between {a} and {b}")
    raise RoutingError(f"{fabric.name}: no route from {a!r} to {b!r}{why} (the chips of a "
                       f"tensor-parallel or expert-parallel group must reach each other "
                       f"pairwise)")


#: Largest sets of pairwise-reaching chips (:func:`_reach_cliques`) every placement examines
#: (kept and sorted per fabric, largest first).
_MAX_CLIQUES = 256

#: Further sets :func:`instance_chips` examines past :data:`_MAX_CLIQUES`, in the search's
#: own order, while none found so far places the instance as well as the bound (the
#: placement on all usable chips, reachability aside) allows; a bound on the work.
_CLIQUE_BUDGET = 20_000


def _reach_kinds(fabric):
    """None when every pair of live chips reaches (:func:`_reach`); else ``(every, members,
    G)``: the chips that reach every chip, the other chips grouped into kinds (chips that
    cannot reach the same chips: they reach each other and are interchangeable, so a maximal
    clique holds all of a kind or none) and the graph of kinds that reach each other."""
    R = _reach(fabric)
    partial = ~R.all(axis=1)
    if not partial.any():
        return None
    import networkx as nx

    every = np.flatnonzero(~partial).tolist()
    kinds = {}
    for p in np.flatnonzero(partial).tolist():
        kinds.setdefault(tuple(np.flatnonzero(~R[p]).tolist()), []).append(p)
    members = list(kinds.values())
    G = nx.Graph()
    G.add_nodes_from(range(len(members)))
    G.add_edges_from((i, j) for i in range(len(members)) for j in range(i + 1, len(members))
                     if R[members[i][0], members[j][0]])
    return every, members, G


def _all_reach_cliques(fabric):
    """Every largest set of live chips that reach each other pairwise (the maximal cliques
    of :func:`_reach`), each a sorted tuple of positions, lazily in the clique search's
    order (networkx ``find_cliques`` over :func:`_reach_kinds`, deterministic for a
    fabric); nothing when every pair reaches."""
    got = _reach_kinds(fabric)
    if got is None:
        return
    import networkx as nx

    every, members, G = got
    for c in nx.find_cliques(G):
        yield tuple(sorted(every + [p for i in c for p in members[i]]))


def _reach_cliques(fabric):
    """The first :data:`_MAX_CLIQUES` of :func:`_all_reach_cliques` (all of them when there
    are fewer), largest first, then by positions; None when every pair reaches. Cached per
    fabric."""
    memo = fabric_memo(fabric, __name__)
    if "cliques" in memo:
        return memo["cliques"]
    found = list(itertools.islice(_all_reach_cliques(fabric), _MAX_CLIQUES))
    out = tuple(sorted(found, key=lambda c: (-len(c), c))) if found else None
    memo["cliques"] = out
    return out


def _pairwise_complete(fabric, chips, groups):
    """Whether every pair of the usable chips (``groups``, :func:`_usable_groups`) reaches
    each other (:func:`_reach`), or ``chips < 2``: then any of them may form an instance."""
    if chips < 2 or not fabric.failures.degraded:
        return True
    usable = [p for g in groups for p in g]
    return bool(_reach(fabric)[np.ix_(usable, usable)].all())


def _clique_pools(fabric, chips, groups):
    """For each largest set of pairwise-reaching chips in turn, first those of
    :func:`_reach_cliques` (largest first), then the rest of :func:`_all_reach_cliques`
    (lazily): its usable chips (``groups``) as groups in domain order when it holds
    ``chips`` of them and no earlier set gave the same, else None (one item per set, so a
    caller can bound the sets it examines). Every instance whose chips reach each other
    pairwise lies in one of the pools. Nothing when :func:`_pairwise_complete`."""
    if _pairwise_complete(fabric, chips, groups):
        return
    keep_usable = {p for g in groups for p in g}
    seen = set()
    head = _reach_cliques(fabric) or ()
    rest = itertools.islice(_all_reach_cliques(fabric), len(head), None)
    for clique in itertools.chain(head, rest):
        keep = keep_usable.intersection(clique)
        pool = None
        if len(keep) >= chips:
            pool = tuple(t for t in (tuple(p for p in g if p in keep) for g in groups) if t)
            if pool in seen:
                pool = None
            else:
                seen.add(pool)
        yield pool


def _placement_key(groups, sel, chips, equal_domains, tp):
    """How good an instance's chips ``sel`` are, smaller better, by :func:`instance_chips`'s
    rules: under ``equal_domains`` a ``c`` that is a multiple of ``tp``, then the fewest
    domains; else every TP group inside one domain, then the fewest domains; then the first
    ``chips`` chips, then the positions."""
    spans = _domains_spanned(groups, sel)
    if equal_domains:
        first = (chips // len(spans) % tp != 0, len(spans))
    else:
        first = (not _groups_inside(groups, sel, tp), len(spans))
    return first + (sel != tuple(range(chips)), sel)


def _equal_shape(groups, chips, tp=1):
    """``(d, c)``: the fewest domains ``d`` that hold ``c = chips / d`` live chips each, or
    None when no ``d`` does; with ``tp > 1`` the fewest whose ``c`` is a multiple of ``tp``
    (every tensor-parallel group inside one domain) when any is, else the fewest."""
    shapes = [(d, chips // d) for d in range(1, chips + 1)
              if chips % d == 0 and sum(len(g) >= chips // d for g in groups) >= d]
    return next((x for x in shapes if x[1] % tp == 0), shapes[0] if shapes else None)


def _tp_capacity(groups, chips, tp):
    """Live chips each domain gives an instance of ``chips`` chips in whole tensor-parallel
    groups of ``tp``: ``len(g) // tp * tp`` when those hold the instance (every TP group
    inside one domain), else every live chip (a group must straddle)."""
    cap = [len(g) // tp * tp for g in groups]
    return cap if sum(cap) >= chips else [len(g) for g in groups]


def _groups_inside(groups, positions, tp):
    """Whether every ``tp`` consecutive ``positions`` (a TP group) lie in one domain."""
    where = {p: i for i, g in enumerate(groups) for p in g}
    return all(len({where[p] for p in positions[i:i + tp]}) == 1
               for i in range(0, len(positions), tp))


def _domains_spanned(groups, positions):
    """Chips per domain of ``positions`` (the domains they touch, in domain order)."""
    where = {p: i for i, g in enumerate(groups) for p in g}
    counts = {}
    for p in positions:
        counts[where[p]] = counts.get(where[p], 0) + 1
    return list(counts.values())


def instance_chips(fabric, chips, *, equal_domains=False, tp=1):
    """The live chips one instance of ``chips`` chips runs on: positions in
    ``fabric.endpoints``, its first ``tp`` the first attention group.

    An instance spans as few load/store domains (:attr:`fabric.Fabric.loadstore_domains`:
    an NVLink domain, a scale-up node) as the live chips allow, taking whole domains first,
    the fullest first: on a fabric with failed chips (or a link failure that cuts a chip off
    its domain) the damaged domain's chips are left over, as an operator places an instance
    on intact nodes. With ``equal_domains`` (an expert-parallel exchange kernel, whose
    routing model needs the same number of ranks in every domain,
    :func:`analysis.moe_exchange`) the instance takes ``c`` chips in each of ``d`` domains,
    ``d`` the fewest that hold ``c = chips / d`` live chips each. Where the first ``chips``
    live chips already do that (an intact fabric) they are the instance, as before.

    With ``tp > 1`` (the instance's attention tensor-parallel groups: each ``tp``
    consecutive chips of the answer) every group lies inside one domain whenever the live
    chips allow it: each domain gives the instance a multiple of ``tp`` chips, and under
    ``equal_domains`` ``c`` is a multiple of ``tp`` when some such ``(d, c)`` fits (fewest
    ``d`` among them). A group straddles only where no placement avoids it (``tp`` larger
    than a domain, or too few whole groups left in damaged domains); the step then pays
    the slowest group's all-reduce (:func:`decode_step`). An instance of two chips or
    more leaves out a chip a failure cut off from every other chip
    (``fabric.failures.cut_off``) while the others hold it.

    Its chips reach each other pairwise whenever some set of live chips does (the TP
    all-reduce and the expert exchange move data between every pair): on a degraded
    fabric reachability need not be transitive (a switch of two planes where chip2 lost
    plane 0's links and chip6 plane 1's: each reaches the other six, not each other), so
    the rules above are applied within each largest set of pairwise-reaching chips and
    the best answer taken (the first ``chips`` chips outright when they reach pairwise and
    place as well as all live chips would; where there are very many such sets, the
    search stops at the first answer that places as well as all live chips would, reachability
    aside, or after a bounded number of sets). Where no such set holds the instance, the answer has a pair
    that cannot reach each other, and costing the step's collectives raises RoutingError
    naming it (:func:`decode_step`; the serving search skips the layout with that reason).

    Parameters
    ----------
    fabric : fabric.Fabric
        Intact or degraded.
    chips : int
        Chips of the instance, in ``[1, live chips]``.
    equal_domains : bool
        The same number of chips in every load/store domain the instance spans.
    tp : int
        The attention tensor-parallel group's chips.

    Returns
    -------
    tuple of int
        Positions in ``fabric.endpoints``.

    Raises
    ------
    SpecError
        ``chips`` not an integer in ``[1, live chips]``, or ``equal_domains`` and no set of
        domains holds the instance equally (the message gives the live chips per domain).

    Examples
    --------
    >>> import topologies
    >>> rail = topologies.build("rail:servers=3,gpus=4")        # three 4-GPU domains
    >>> instance_chips(rail, 4), instance_chips(rail, 6)
    ((0, 1, 2, 3), (0, 1, 2, 3, 4, 5))
    >>> instance_chips(rail, 6, equal_domains=True)            # 3 + 3, not 4 + 2
    (0, 1, 2, 4, 5, 6)
    >>> damaged = rail.without(chips=["chip1"])                 # live chips 3, 4, 4
    >>> instance_chips(damaged, 4), instance_chips(damaged, 8, equal_domains=True)
    ((3, 4, 5, 6), (3, 4, 5, 6, 7, 8, 9, 10))
    >>> instance_chips(rail, 6, equal_domains=True, tp=2)      # 2 + 2 + 2: no TP group split
    (0, 1, 4, 5, 8, 9)
    >>> node = topologies.build("switch:8,planes=2").without(
    ...     links=["chip1-sw0", "chip2-sw0", "chip5-sw1", "chip6-sw1"])
    >>> instance_chips(node, 6)                  # chips 5, 6 cannot reach chips 1, 2
    (0, 1, 2, 3, 4, 7)
    """
    fabric = fabric_arg(fabric)
    chips = _check_instance_chips(fabric, chips)
    equal_domains = flag_of(equal_domains, "equal_domains")
    tp = _check_tp(tp, chips)
    groups = _usable_groups(fabric, chips)
    if _pairwise_complete(fabric, chips, groups):
        return _place(fabric, groups, chips, equal_domains, tp)
    best = _best_in_cliques(fabric, groups, chips, equal_domains, tp)
    return best if best is not None else _place(fabric, groups, chips, equal_domains, tp)


def _best_in_cliques(fabric, groups, chips, equal_domains, tp):
    """:func:`instance_chips` where the usable chips do not all reach each other: the best
    placement (:func:`_placement_key`) among those inside each largest set of
    pairwise-reaching chips (:func:`_clique_pools`); None when no such set holds it.

    The placement on all usable chips, reachability aside, bounds every answer's first two
    key parts (TP groups inside / equal shape, domains spanned). The first ``chips`` chips
    win outright when they reach each other pairwise and meet that bound (nothing places
    better). The first :data:`_MAX_CLIQUES` sets are always examined; past them the search
    goes on, at most :data:`_CLIQUE_BUDGET` sets more, only while no placement found meets
    the bound: one that does is the best in those parts (the positions that break its ties
    come from the sets examined)."""
    try:
        bound = _placement_key(groups, _place(fabric, groups, chips, equal_domains, tp),
                               chips, equal_domains, tp)[:2]
    except SpecError:               # no set of domains holds it equally, even unconstrained
        return None
    first = tuple(range(chips))
    usable = {p for g in groups for p in g}
    if (usable.issuperset(first) and _reach(fabric)[np.ix_(first, first)].all()
            and (not equal_domains or len(set(_domains_spanned(groups, first))) == 1)
            and _placement_key(groups, first, chips, equal_domains, tp)[:2] == bound):
        return first
    best = None
    for i, pool in enumerate(_clique_pools(fabric, chips, groups)):
        if i >= _MAX_CLIQUES and ((best is not None and best[0][:2] == bound)
                                  or i >= _MAX_CLIQUES + _CLIQUE_BUDGET):
            break
        if pool is None:            # this set holds too few of the chips, or a repeat
            continue
        try:
            sel = _place(fabric, pool, chips, equal_domains, tp)
        except SpecError:           # this pool fills no set of domains equally
            continue
        key = _placement_key(groups, sel, chips, equal_domains, tp)
        if best is None or key < best[0]:
            best = (key, sel)
    return None if best is None else best[1]


def _place(fabric, groups, chips, equal_domains, tp):
    """:func:`instance_chips` on the live chips ``groups`` (positions per domain), every
    pair of which is taken to reach each other."""
    first = tuple(range(chips))
    usable = {p for g in groups for p in g}
    spanned = _domains_spanned(groups, first) if usable.issuperset(first) else []
    if equal_domains:
        fullest = sorted(groups, key=lambda g: (-len(g), g[0]))
        shape = _equal_shape(groups, chips, tp)
        if shape is None:
            raise SpecError(f"an instance of {chips} expert-parallel chips fills no set of "
                            f"{fabric.name}'s load/store domains equally (live chips per "
                            f"domain {[len(g) for g in groups]}); the exchange kernel's "
                            f"routing model needs equal domains")
        d, c = shape
        if (len(spanned) == d and set(spanned) == {c}
                and (c % tp or _groups_inside(groups, first, tp))):
            return first
        picked = sorted([g for g in fullest if len(g) >= c][:d], key=lambda g: g[0])
        return tuple(p for g in picked for p in g[:c])
    cap = _tp_capacity(groups, chips, tp)
    aligned = sum(x // tp * tp for x in cap) == sum(cap)
    order = sorted(range(len(groups)), key=lambda i: (-cap[i], groups[i][0]))
    need, fewest = chips, 0
    for i in order:
        if need <= 0:
            break
        need -= cap[i]
        fewest += 1
    if len(spanned) == fewest and (not aligned or _groups_inside(groups, first, tp)):
        return first
    out, need = [], chips
    for i in order:
        take = groups[i][:min(cap[i], need)]
        out += list(take)
        need -= len(take)
        if not need:
            break
    return tuple(out)


def _instance_copies(fabric, chips, equal_domains, tp=1):
    """:func:`_copies` cached per fabric (a frontier asks for every step)."""
    memo = fabric_memo(fabric, __name__).setdefault("copies", {})
    key = (chips, equal_domains, tp)
    if key not in memo:
        memo[key] = _copies(fabric, chips, equal_domains, tp)
    return memo[key]


def _copies(fabric, chips, equal_domains, tp=1):
    """Disjoint copies of the instance :func:`instance_chips` chooses that the live chips
    hold (every copy alike: ``c`` chips in each of ``d`` domains under ``equal_domains``;
    whole tensor-parallel groups of ``tp`` inside domains where the instance has them)."""
    if chips > fabric.n_endpoints:
        return 0
    groups = _usable_groups(fabric, chips)
    if not _pairwise_complete(fabric, chips, groups):
        try:
            sel = instance_chips(fabric, chips, equal_domains=equal_domains, tp=tp)
        except SpecError:           # no set of domains holds it equally: no copy
            return 0
        if _reach(fabric)[np.ix_(sel, sel)].all():
            return _most_cliques(fabric, groups, chips, sel, equal_domains, tp)
        # no copy runs (the step says which pair cannot reach): counted as before
    if not equal_domains:
        cap = _tp_capacity(groups, chips, tp)
        if tp > 1 and all(x % tp == 0 for x in cap):    # whole groups inside domains
            return sum(x // tp for x in cap) // (chips // tp)
        return sum(map(len, groups)) // chips
    shape = _equal_shape(groups, chips, tp)
    if shape is None:
        return 0
    d, c = shape
    slots = [len(g) // c for g in groups]          # c-chip pieces each domain holds
    # k copies need d distinct domains each: feasible iff sum(min(slots, k)) >= k d
    return max(k for k in range(sum(slots) // d + 1)
               if sum(min(x, k) for x in slots) >= k * d)


#: Work bounds of :func:`_most_cliques`'s exact search: copy shapes generated, and copies
#: tried; beyond either it answers with copies placed one at a time (which do fit).
_SHAPE_BUDGET = 20_000
_COPY_SEARCH_BUDGET = 20_000


def _shape_rule(groups, sel, chips, equal_domains, tp):
    """What every copy of the instance ``sel`` must look like: ``("equal", c)`` (``c``
    chips in each domain it touches), ``("aligned", tp)`` (a multiple of ``tp`` in each:
    its TP groups inside domains) or ``("any", None)``."""
    if equal_domains:
        return ("equal", chips // len(_domains_spanned(groups, sel)))
    if tp > 1 and _groups_inside(groups, sel, tp):
        return ("aligned", tp)
    return ("any", None)


def _copies_one_at_a_time(fabric, groups, chips, rule):
    """Copies of shape ``rule`` (:func:`_shape_rule`) placed one after another, the chip
    with the fewest partners left first: each copy is built around it from the chips that
    reach every chip already taken (:func:`_copy_around`); a chip no copy can hold is left
    idle. Copies that fit, not always the most (a lower bound on the copies, an upper bound
    on the idle chips)."""
    R = _reach(fabric)
    where = {p: i for i, g in enumerate(groups) for p in g}
    left = sorted(where)
    copies = 0
    while len(left) >= chips:
        arr = np.array(left, dtype=np.int64)
        partners = R[np.ix_(arr, arr)].sum(axis=1)
        order = [left[i] for i in np.lexsort((arr, partners))]
        made = _copy_around(order, R, where, chips, rule)
        if made is None:
            left.remove(order[0])
            continue
        taken = set(made)
        left = [p for p in left if p not in taken]
        copies += 1
    return copies


def _copy_around(order, R, where, chips, rule):
    """``chips`` chips of ``order`` (most constrained first) that reach each other pairwise
    (``R``, :func:`_reach`), holding ``order[0]`` and shaped by ``rule``, or None: domain by
    domain (``order[0]``'s first), each chip taken if it reaches every chip taken before,
    each domain's share cut to what the rule allows (a multiple of ``tp``, or ``c``)."""
    v = order[0]
    by_domain = {where[v]: []}
    for p in order:
        by_domain.setdefault(where[p], []).append(p)
    taken = []
    for d, members in by_domain.items():
        need = chips - len(taken)
        if not need:
            break
        here = []
        for p in members:
            if len(here) == need:
                break
            if all(R[p, q] for q in taken + here):
                here.append(p)
        if rule[0] == "equal":
            here = here[:rule[1]] if len(here) >= rule[1] else []
        elif rule[0] == "aligned":
            here = here[:len(here) // rule[1] * rule[1]]
        if d == where[v] and (not here or here[0] != v):
            return None
        taken += here
    return taken if len(taken) == chips else None


def _most_cliques(fabric, groups, chips, sel, equal_domains, tp):
    """The most disjoint copies of the instance ``sel`` (:func:`instance_chips`) whose chips
    all reach each other pairwise (:func:`_reach`), each shaped like ``sel``
    (:func:`_shape_rule`): ``c`` chips in each of ``d`` domains under ``equal_domains``,
    whole tensor-parallel groups of ``tp`` inside domains where ``sel`` has them, else any
    ``chips`` usable chips.

    The usable chips fall into kinds: chips of one domain (where the shape counts domains)
    with the same set of chips they cannot reach are interchangeable, and two chips of one
    kind reach each other. A copy is a count per kind whose kinds reach each other; the most
    copies is a search over those counts, exact within :data:`_SHAPE_BUDGET` shapes and
    :data:`_COPY_SEARCH_BUDGET` copies tried; beyond, the larger of what it found and of
    copies placed one at a time (:func:`_copies_one_at_a_time`): copies that do fit."""
    R = _reach(fabric)
    where = {p: i for i, g in enumerate(groups) for p in g}
    usable = np.array([p for g in groups for p in g], dtype=np.int64)
    rule = _shape_rule(groups, sel, chips, equal_domains, tp)
    kinds, count, rep = {}, [], []
    for p in usable.tolist():
        miss = tuple(usable[~R[p, usable]].tolist())
        key = (miss,) if rule[0] == "any" else (where[p], miss)
        if key not in kinds:
            kinds[key] = len(count)
            count.append(0)
            rep.append(p)
        count[kinds[key]] += 1
    k = len(count)
    dom = [where[p] for p in rep]           # kinds of one domain are consecutive
    apart = [[not R[rep[a], rep[b]] for b in range(k)] for a in range(k)]
    most_domains = chips // rule[1] if rule[0] == "equal" else chips

    def closes(total):
        """Whether a domain may end with ``total`` of the copy's chips."""
        if rule[0] == "equal":
            return total in (0, rule[1])
        return rule[0] == "any" or total % rule[1] == 0

    shapes = []
    visits = [_SHAPE_BUDGET]

    def grow(t, left, vec, used, here, domains):
        visits[0] -= 1
        if visits[0] < 0:
            return
        last = t == k or (t > 0 and dom[t] != dom[t - 1])
        if t > 0 and last:                  # the domain of kind t - 1 is complete
            if not closes(here):
                return
            domains += here > 0
            here = 0
            if domains > most_domains:
                return
        if left == 0:
            shapes.append(tuple(vec) + (0,) * (k - len(vec)))
            return
        if t == k:
            return
        ok = not any(apart[t][u] for u in used)
        for x in range(min(left, count[t]) if ok else 0, -1, -1):
            grow(t + 1, left - x, vec + [x], used + [t] if x else used, here + x, domains)

    grow(0, chips, [], [], 0, 0)
    if visits[0] < 0:
        return _copies_one_at_a_time(fabric, groups, chips, rule)
    budget = [_COPY_SEARCH_BUDGET]
    best = [0]
    memo = {}
    table = np.array(shapes, dtype=np.int64).reshape(len(shapes), k)

    def most(left, start, have):
        best[0] = max(best[0], have)
        if budget[0] <= 0:
            return 0
        key = (left, start)
        if key in memo:
            return memo[key]
        bound = sum(left) // chips
        out = 0
        # the shapes from ``start`` on that fit in what is left, in order (one array test)
        fits = np.flatnonzero((table[start:] <= np.array(left, dtype=np.int64)).all(axis=1))
        for i in (fits + start).tolist():
            v = shapes[i]
            budget[0] -= 1
            out = max(out, 1 + most(tuple(b - a for a, b in zip(v, left)), i, have + 1))
            if out == bound or budget[0] <= 0:
                break
        memo[key] = out
        return out

    exact = most(tuple(count), 0, 0)
    if budget[0] > 0:
        return exact
    return max(exact, best[0],
               _copies_one_at_a_time(fabric, groups, chips, rule))


def idle_chips(fabric, chips, *, equal_domains=False, tp=1):
    """Live chips of ``fabric`` no copy of a ``chips``-chip instance uses.

    ``live % chips`` when an instance takes any chips; with ``equal_domains`` (an
    expert-parallel exchange kernel: ``c`` chips in each of ``d`` load/store domains, as
    :func:`instance_chips` places them) the chips the most such copies leave over, e.g.
    a damaged domain's; with ``tp > 1`` the copies keep their tensor-parallel groups inside
    domains as the instance does (:func:`instance_chips`); a chip cut off from every
    other chip serves only one-chip instances; every copy's chips reach each other
    pairwise (where reachability is not transitive, the most such copies by a bounded
    search; on a fabric too large or too damaged for it, copies placed one at a time,
    which fit: then the count is an upper bound on the idle chips, :func:`_most_cliques`).

    Parameters
    ----------
    fabric : fabric.Fabric
        Intact or degraded.
    chips : int
        Chips per instance.
    equal_domains, tp
        As for :func:`instance_chips`.

    Returns
    -------
    int
        Chips.

    Examples
    --------
    >>> import topologies
    >>> idle_chips(topologies.build("switch:8,chip=b200").without(chips=["chip3"]), 4)
    3
    >>> rail = topologies.build("rail:servers=3,gpus=4").without(chips=["chip1"])
    >>> idle_chips(rail, 8), idle_chips(rail, 6), idle_chips(rail, 6, equal_domains=True)
    (3, 5, 5)
    >>> idle_chips(topologies.build("rail:servers=3,gpus=4"), 6, equal_domains=True, tp=2)
    0
    >>> node = topologies.build("switch:8,planes=2").without(
    ...     links=["chip1-sw0", "chip2-sw0", "chip5-sw1", "chip6-sw1"])
    >>> idle_chips(node, 6), idle_chips(node, 4)   # 0-4 + 7 one copy; 0-3 and 4-7 two
    (2, 0)
    """
    fabric = fabric_arg(fabric)
    chips = _check_chips(chips)
    equal_domains = flag_of(equal_domains, "equal_domains")
    tp = _check_tp(tp, chips)
    return fabric.n_endpoints - chips * _instance_copies(fabric, chips, equal_domains, tp)


# -- results ------------------------------------------------------------------------------

@dataclass(frozen=True)
class LayerTime:
    """Time of one transformer layer on the critical chip, seconds.

    ``total = attention + ffn + exposed_comm + launch``; the other fields say
    where ``attention`` and ``ffn`` come from (each is the sum of its kernels' rooflines,
    ``max(memory, compute)`` kernel by kernel, plus what its kernels' minimum durations add,
    ``kernel_floor`` for both together).

    Attributes
    ----------
    kind : str
        ``"dense"`` or ``"moe"``.
    attention_weights, kv_cache, attention_compute : float
        HBM time of attention weights, of the KV cache read (under DeepSeek Sparse Attention:
        the selected tokens' latents and every cached indexer key), and compute time.
    attention : float
        Its kernels' rooflines summed (each at its kernel's rates: a published streaming
        rate may differ from the step's, so it is not bound by the two fields above) plus
        its kernels' floors.
    ffn_weights, ffn_compute, ffn : float
        The same for the FFN block (routed experts: the most loaded chip).
    dispatch, combine, tp_allreduce : float
        Communication times as the collectives model gives them.
    comm : float
        Their sum.
    exposed_comm : float
        ``comm`` minus the part hidden under local time.
    launch : float
        Launch bubbles: ``kernels`` boundaries, less one per exchange phase whose first
        kernel's start the exchange's handshake already holds in a replayed graph
        (:func:`_held_starts`).
    kernels : int
        Kernels launched (before fusion).
    active_experts : float
        Expected distinct routed experts active in this layer, whole system.
    active_experts_chip : float
        Expected active routed experts on the busiest chip (``E[max]`` over chips).
    total : float
    kernel_floor : float
        Seconds the minimum durations of the layer's kernels and its GEMMs' fixed parts
        add to the rooflines of ``attention`` and ``ffn`` (included in them).
    """

    kind: str
    attention_weights: float
    kv_cache: float
    attention_compute: float
    attention: float
    ffn_weights: float
    ffn_compute: float
    ffn: float
    dispatch: float
    combine: float
    tp_allreduce: float
    comm: float
    exposed_comm: float
    launch: float
    kernels: int
    active_experts: float
    active_experts_chip: float
    total: float
    kernel_floor: float = 0.0


@dataclass(frozen=True)
class HeadTime:
    """The output head (final norm, LM head, sampling) on one chip, seconds.

    ``total = max(weights, compute) + kernel_floor + launch`` (``kernel_floor``: what the
    kernels' minimum durations and the LM head GEMM's fixed part add); ``kernels``: the
    kernels it launches (before fusion), as :attr:`LayerTime.kernels`.
    """

    weights: float
    compute: float
    launch: float
    total: float
    kernel_floor: float = 0.0
    kernels: int = 0


@dataclass(frozen=True)
class DecodeBreakdown:
    """Step time split into additive parts (they sum to ``total``), seconds.

    Also ``weights``, ``kv_cache``, ``compute``, ``comm``: the raw times of those
    resources summed over layers, not additive (rooflines take maxima, overlap hides);
    ``kernel_floor``: what the kernels' minimum durations and the GEMMs' fixed parts add,
    summed over layers and head (included in ``attention``, ``ffn`` and ``head``).
    """

    attention: float
    ffn: float
    head: float
    exposed_comm: float
    launch: float
    total: float
    weights: float
    kv_cache: float
    compute: float
    comm: float
    kernel_floor: float = 0.0


@dataclass(frozen=True)
class DecodeStep:
    """Result of :func:`decode_step`.

    Attributes
    ----------
    model, system, chip : str
    batch, context, tokens_per_sequence : int
    layout : Layout
    transport : str, fabric.Transport or None
        As asked (``"native"`` recorded as None).
    layers : tuple of LayerTime
        One per layer, in order (dense layers first).
    head : HeadTime
    breakdown : DecodeBreakdown
    time : float
        Seconds per step.
    tokens_per_s_user, tokens_per_s_system : float
    hbm_per_chip : float
        Bytes of weights and KV cache on the fullest chip.
    parameters : tuple of Parameter
        Every number the model used, with unit and source (``()`` under
        ``decode_step(parameters=False)``).
    runtime, ep_kernel : str or None
        The collective runtime and the MoE exchange kernel used (None: defaults).
    cuda_graphs : bool
        Whether kernels were replayed from a CUDA graph.
    instance : tuple of str
        The live chips the step runs on (:func:`instance_chips`; the first ``tp`` are the
        first attention group).
    idle_chips : int
        Live chips no copy of the instance uses (:func:`idle_chips`).
    graph_batch : int
        Sequences of the replayed graph (``batch`` unless ``decode_step(graph_batch=...)``
        padded it).
    """

    model: str
    system: str
    chip: str
    batch: int
    context: int
    tokens_per_sequence: int
    layout: Layout
    transport: str
    layers: tuple
    head: HeadTime
    breakdown: DecodeBreakdown
    time: float
    tokens_per_s_user: float
    tokens_per_s_system: float
    hbm_per_chip: float
    parameters: tuple
    runtime: str = None
    ep_kernel: str = None
    cuda_graphs: bool = False
    instance: tuple = ()
    idle_chips: int = 0
    graph_batch: int = None

    def __repr__(self):
        # the full record holds one LayerTime per layer and every parameter; keep the repr short
        return (f"DecodeStep({self.model!r} on {self.system!r}, layout {self.layout}, "
                f"batch={self.batch}, context={self.context}, time={self.time * 1e3:.4g} ms)")


# -- the model ----------------------------------------------------------------------------

def engine_collective(engine, chip, *, collective=None, runtime=None, algorithm="auto",
                      fabric=None):
    """The collective cost function a step (and a prefill) prices its collectives with: the
    one rule behind :func:`decode_step`'s ``collective`` default.

    * ``collective`` when given;
    * ``engine="vllm"`` on a Hopper or Blackwell chip with no ``runtime`` and ``algorithm``
      ``"auto"``: :func:`analysis.vllm_all_reduce` at vLLM's own defaults, the kernel vLLM
      launches for each TP all-reduce's size (FlashInfer's fused all-reduce + RMSNorm, its
      custom all-reduce, torch symmetric memory, NCCL) and NCCL for every other operation.
      vLLM's default optimization level is -O2 (``VllmConfig.optimization_level``), whose
      ``fuse_allreduce_rms`` is ``enable_allreduce_rms_fusion``: on for TP > 1 on SM90 and
      SM100 with FlashInfer installed (a dependency of vLLM's CUDA build,
      ``requirements/cuda.txt``), i.e. ``fuse_allreduce_rms=True``; torch symmetric memory
      on (``VLLM_ALLREDUCE_USE_SYMM_MEM`` default 1). vllm-project/vllm
      ``vllm/config/vllm.py``; docs/sources.md s.8;
    * ``engine="trtllm"`` on a chip TensorRT-LLM's all-reduce op was measured on (B200, H200:
      :data:`analysis.TRTLLM_ALLREDUCE_BF16`, TensorRT-LLM 1.2.0rc5) with no ``runtime`` and
      ``algorithm`` ``"auto"``: :func:`analysis.trtllm_all_reduce`, each TP all-reduce at
      that op's measured time and every other operation through :func:`analysis.cost`
      (session 36; the rows of 2025 code it prices ran 0.18-0.20 releases: assumed no faster);
    * otherwise :func:`analysis.cost` (its default runtime, or the ``runtime`` and
      ``algorithm`` asked for: a caller's explicit choice wins over the engine's dispatch
      and measured op, so a comparison that states one runtime for every system asks it;
      vLLM's tables list no other chip generation, TensorRT-LLM's op no other chip).

    An engine's own all-reduce (vLLM's dispatch tables, TensorRT-LLM's measured op) is read
    from the chip of the fabric it runs on (:func:`analysis.vllm_all_reduce` and
    :func:`analysis.trtllm_all_reduce` take only the fabric), so with ``fabric`` given it is
    taken only when the step's ``chip`` is the fabric's: a step whose ``chip=`` differs from
    its fabric's (or a fabric naming no chip) is priced by :func:`analysis.cost`, not by
    another chip's tables.

    Parameters
    ----------
    engine : str or None
        ``"vllm"``, ``"sglang"``, ``"trtllm"``, or None (the generic kernel list).
    chip : fabric.ChipSpec, str or None
        The step's chip, or its name (its generation decides vLLM's tables).
    collective : callable, optional
        A cost function to use as it is.
    runtime : str or fabric.Runtime, optional
        A collective runtime the caller asked for.
    algorithm : str
        A collective algorithm the caller asked for (``"auto"``: none).
    fabric : fabric.Fabric, optional
        The fabric the step runs on (its chip must be ``chip`` for an engine's own
        all-reduce); None: ``chip`` alone decides.

    Returns
    -------
    callable
        ``(fabric, op, nbytes, **kw) -> CollectiveCost``.

    Examples
    --------
    >>> from fabric import chip_spec
    >>> engine_collective("vllm", chip_spec("h200")).__name__
    'vllm_all_reduce'
    >>> [engine_collective(e, chip_spec(c), runtime=r).__name__
    ...  for e, c, r in (("trtllm", "h200", None), ("trtllm", "h200", "nccl"),
    ...                  ("trtllm", "gb200", None), ("vllm", "h200", "nccl"),
    ...                  ("vllm", "tpu-v4", None))]
    ['trtllm_all_reduce', '_default_collective', '_default_collective', '_default_collective', '_default_collective']
    """
    engine = check_engine(engine, none_ok=True)
    chip = None if chip is None else chip_spec(chip)        # a name is read as its chip
    if check_collective(collective) is not None:
        return collective
    return _engine_rule(engine, chip, runtime, collective_algorithms(algorithm), fabric)


def _engine_rule(engine, chip, runtime, algorithm, fabric):
    """:func:`engine_collective`'s choice for inputs already read (``engine`` checked,
    ``chip`` a ChipSpec or None, ``algorithm`` as :func:`collective_algorithms` returns it:
    decode_step's settings read them once and pass them here; ``runtime`` is checked here,
    as the rule reads only whether one was asked)."""
    if runtime is not None:
        from fabric import runtime as get_runtime

        get_runtime(runtime)
    if fabric is not None and getattr(fabric_arg(fabric).chip, "name", None) != \
            getattr(chip, "name", None):
        return _default_collective
    # an engine's own dispatch only where the caller asked no runtime or algorithm
    if runtime is not None or not (isinstance(algorithm, str) and algorithm == "auto"):
        return _default_collective
    from ._engine_allreduce import (
        TRTLLM_ALLREDUCE_CHIPS,
        VLLM_SM_VERSIONS,
        trtllm_all_reduce,
        vllm_all_reduce,
    )

    if engine == "vllm" and getattr(chip, "generation", None) in VLLM_SM_VERSIONS:
        return vllm_all_reduce
    if engine == "trtllm" and getattr(chip, "name", None) in TRTLLM_ALLREDUCE_CHIPS:
        return trtllm_all_reduce
    return _default_collective


#: Bytes of routing TensorRT-LLM gathers beside each token's activations per selected expert
#: when its MoE exchanges by allgather + reducescatter (:func:`trtllm_gathers`): the token's
#: ``token_selected_experts`` (int32) and ``token_final_scales`` (float32), gathered with the
#: activations in one ``allgather([x, x_sf, token_selected_experts, token_final_scales])``
#: (a count of the tensors' element sizes: the routing method asserts ``int32`` and
#: ``float32``).
TRTLLM_GATHER_ROUTING_BYTES = Parameter(
    "trtllm.gather_routing_bytes", 8, "B per selected expert",
    "NVIDIA/TensorRT-LLM tensorrt_llm/_torch/modules/fused_moe.py (FusedMoE.forward_chunk, "
    "stored version 01503f55): under attention DP without the MNNVL all-to-all each rank "
    "allgathers [x, x_sf, token_selected_experts, token_final_scales]; the routing asserts "
    "token_selected_experts int32 and token_final_scales float32 (4 + 4 bytes per selected "
    "expert)")


def trtllm_gathers(m, chip, lay, engine, ep_kernel=None):
    """Whether a step's (or prompt pass's) MoE exchange is TensorRT-LLM's allgather +
    reducescatter: ``engine="trtllm"``, no ``ep_kernel`` named, attention data parallel
    (``tp = 1``, ``dp > 1``) with whole experts exchanged over the ranks, and not TensorRT-LLM's
    MNNVL all-to-all. TensorRT-LLM (``Deepseekv3MoE.should_enable_alltoall``, the code state of
    the rows' release 0.20) enables that all-to-all only with attention DP, more than one rank,
    ``MnnvlMemory.supports_mnnvl()`` (an aarch64 host with every NVLink up: a Grace host,
    ``ChipSpec.grace_gpus``) and ``moe_ep_size > top_k``. Otherwise ``FusedMoE.forward_chunk``
    allgathers every rank's tokens (quantized to NVFP4 first for NVFP4 experts,
    :func:`trtllm_gather_element_bytes`) with their routing
    (:data:`TRTLLM_GATHER_ROUTING_BYTES`), each rank runs its own experts on all of them, and
    the BF16 outputs are reduce-scattered back (``reducescatter_or_allreduce``).

    >>> from analysis import model_config
    >>> m = model_config("deepseek-r1-nvfp4")
    >>> [trtllm_gathers(m, chip_spec(c), parse_layout(l, 72), "trtllm")
    ...  for c, l in (("b200", "tp=1,dp=8"), ("gb200", "tp=1,dp=8"), ("gb200", "tp=1,dp=16"))]
    [True, True, False]
    >>> trtllm_gathers(m, chip_spec("b200"), parse_layout("tp=1,dp=8", 8), "vllm")
    False
    """
    return (engine == "trtllm" and ep_kernel is None and lay.exchanges and lay.tp == 1
            and lay.dp > 1
            and not (getattr(chip, "grace_gpus", 0) and lay.ep > m.experts_per_token))


def trtllm_gather_element_bytes(m, chip):
    """Bytes per activation element TensorRT-LLM's attention-DP allgather moves
    (:func:`trtllm_gathers`): NVFP4 experts run on FP4 tensor cores quantize the tokens before
    the gather (``fp4_quantize`` with 16-element blocks: :data:`WEIGHT_FORMATS` ``nvfp4``'s
    0.5625 bytes, an FP8 scale per 16 values; ``TLLM_DISABLE_FP4_ALLGATHER`` default "0"),
    every other format gathers the model's activations (FP8 block-scaled experts quantize
    inside the fused MoE op: ``use_fp8_block_scaling``)."""
    if chip.gemm_format(m.math_format("experts")) == "fp4":
        return WEIGHT_FORMATS["nvfp4"].bytes_per_weight
    return m.activation_bytes


def gather_exchange_seconds(fabric, m, tokens, positions, element_bytes, combine_bytes,
                            **cost_kwargs):
    """``(allgather, reducescatter)`` seconds of TensorRT-LLM's attention-DP MoE exchange
    (:func:`trtllm_gathers`) when each of the ranks at ``positions`` holds ``tokens`` tokens:
    an all-gather of every rank's tokens (``element_bytes`` per activation element and
    :data:`TRTLLM_GATHER_ROUTING_BYTES` per selected expert) and a reduce-scatter of the
    outputs of all of them (``combine_bytes`` per element), by :func:`collective_seconds`.
    TensorRT-LLM passes each rank's token count (``sizes``) unless it pads the ranks to the
    largest; with sizes its allgather is a group of one ``ncclBroadcast`` per rank and its
    reducescatter one ``ncclReduce`` per rank (``cpp/tensorrt_llm/thop/allgatherOp.cpp``,
    ``reducescatterOp.cpp``): priced as the all-gather and reduce-scatter of the same parts
    (named assumption: equal parts, the same bytes into and out of every rank).

    >>> import topologies
    >>> from analysis import model_config
    >>> f, m = topologies.build("hgx-b200"), model_config("deepseek-r1-nvfp4")
    >>> g, r = gather_exchange_seconds(f, m, 384, range(8), 0.5625, 2, runtime="ideal")
    >>> 0 < g < r
    True
    """
    ep = len(positions)
    part = tokens * (m.hidden * element_bytes
                     + m.experts_per_token * TRTLLM_GATHER_ROUTING_BYTES.value)
    gather = collective_seconds(fabric, "all-gather", ep * part, positions, **cost_kwargs)
    scatter = collective_seconds(fabric, "reduce-scatter", ep * tokens * m.hidden * combine_bytes,
                                 positions, **cost_kwargs)
    return gather, scatter


def collective_algorithms(algorithm, *, names=True):
    """``algorithm`` as :func:`decode_step` and :func:`collective_seconds` take it, read once:
    an algorithm's name, or a mapping from operation names to one each. A mapping's keys are
    read as operation names (:func:`analysis.normalize_op`: ``{"allreduce": "ring"}`` reaches
    the all-reduce, which looks itself up as ``"all-reduce"``; a misspelt operation is
    refused) and come back as a dict. With ``names`` (the library prices the collectives)
    each algorithm is read as :func:`analysis.cost` reads it (:func:`analysis.normalize_algorithm`)
    and must be ``"auto"`` or one of :data:`analysis.ALGORITHMS`: a mapping's for its
    operation (:func:`analysis.schedule`'s refusal, as cost's), a single name for some
    operation (each collective it is used for checks it there); even where the step prices
    no collective it names. Else a caller's own collective gets its names as given.

    >>> collective_algorithms({"AllReduce": "Tree"}), collective_algorithms("AUTO")
    ({'all-reduce': 'double-binary-tree'}, 'auto')
    """
    if isinstance(algorithm, _ReadAlgorithms) and (algorithm.names or not names):
        return algorithm                    # read already (a step passes its own down)
    if not isinstance(algorithm, Mapping):
        return _known_algorithm(normalize_algorithm(algorithm)) if names else algorithm
    out = _ReadAlgorithms()
    out.names = names
    for op, name in algorithm.items():
        key = normalize_op(op)
        if key in out:
            raise SpecError(f"algorithm: {show_value(op)} names the {key} a second time "
                            f"(keys {show_value(list(algorithm))})")
        out[key] = _known_algorithm(normalize_algorithm(name), key) if names else name
    return out


class _ReadAlgorithms(dict):
    """A mapping :func:`collective_algorithms` has read (its keys canonical; ``names``:
    its algorithms checked too), so the functions it is passed down to do not read it again."""

    names = False


def _known_algorithm(name, op=None):
    """``name`` (spelled) if it is ``"auto"`` or an algorithm of ``op`` (None: of any
    operation), else the refusal analysis.cost gives."""
    from ._schedules import ALGORITHMS, schedule

    every = {a for algs in ALGORITHMS.values() for a in algs}
    if name == "auto" or name in (ALGORITHMS[op] if op is not None else every):
        return name
    if op is not None:
        schedule(op, name, 1)               # its NotApplicableError or SpecError
    raise SpecError(unknown_fault(name, "algorithm", {"auto", *every}))


def _default_collective(fabric, op, nbytes, *, algorithm, ranks, transport, **kw):
    import analysis
    cost = getattr(analysis, "cost", None)
    if cost is None:
        raise FabricError("decode_step needs analysis.cost (the collectives model) to cost "
                          "communication, and it is not available; pass collective=... to "
                          "use another cost function")
    try:
        return cost(fabric, op, nbytes, algorithm=algorithm, ranks=ranks, transport=transport,
                    **kw)
    except TypeError as e:
        if kw and "runtime" in str(e):
            raise FabricError(f"this analysis.cost takes no runtime=; got runtime="
                              f"{kw.get('runtime')!r}") from e
        raise


def decode_step(model, fabric, *, batch, context, layout=None, tokens_per_sequence=1,
                transport=None, algorithm="auto", skew=0.0, overlap=0.0,
                fusion_factor=1.0, launch_overhead=LAUNCH_OVERHEAD.value,
                hbm_efficiency=None, compute_efficiency=None,
                dispatch_bytes=None, combine_bytes=None, chip=None, collective=None,
                runtime=None, ep_kernel=None, cuda_graphs=True,
                graph_kernel_overhead=GRAPH_KERNEL_OVERHEAD.value, engine="trtllm",
                min_kernel_time=MIN_KERNEL_TIME.value, moe_hbm_efficiency=None,
                kernel_floors=None, gemm_fixed_time=GEMM_FIXED_TIME.value,
                expert_balance=None, draft=False, pdl=False, graph_batch=None,
                nic_background=0.0, moe_backend="cutlass", trtllm_release=None,
                parameters=True):
    """Time one decode step of ``model`` on ``fabric``; see the module docstring.

    Parameters
    ----------
    model : str or MoEModel
        A preset name, a ``.toml`` path, or a config.
    fabric : fabric.Fabric
        The system; its ``chip`` gives HBM and FLOP figures unless ``chip`` is given.
    batch : int
        Sequences decoded together (users), whole system.
    context : int
        Tokens already in each sequence's KV cache.
    layout : Layout, str, dict or None
        See :func:`parse_layout`. Default ``tp=1`` over every chip.
    tokens_per_sequence : int
        Tokens each sequence processes in this step (1 for decode, ``k+1`` to
        verify ``k`` drafted tokens).
    transport : str, fabric.Transport or None
        ``"loadstore"`` or ``"rdma"`` (or a :class:`fabric.Transport`) for every
        collective; ``None`` or ``"native"`` lets the collectives model choose per step
        (load/store inside a load/store domain, RDMA across NICs): the one check,
        ``fabric._transport.transport_arg``, that :func:`analysis.cost` applies. An
        ``ep_kernel`` other than ``"all-to-allv"`` chooses its own paths (see
        :func:`analysis.moe_exchange`).
    algorithm : str or dict
        Collective algorithm, passed to the collectives model (``"auto"``: the
        fastest); a dict maps ``"all-reduce"``, ``"all-to-all"`` and ``"all-to-allv"``
        to one each (its keys read as operation names, :func:`collective_algorithms`).
    skew : float
        Zipf exponent of expert popularity (0: uniform routing).
    overlap : float in [0, 1] or ``"two-batch"``
        Fraction of communication that may hide under local time; or :data:`TWO_BATCH`,
        the decode two-batch overlap schedule of SGLang and DeepSeek: the step is one of two
        equal micro-batches (``serving_point(micro_batches=2)`` runs both), each exchange's
        transfer hiding only under the stage the other micro-batch runs meanwhile (needs
        ``ep_kernel``; tensor-parallel all-reduces are not hidden).
    fusion_factor : float >= 1
        Kernels launched are divided by this (10 for the seed's "10x fewer").
    launch_overhead : float
        Seconds per host kernel launch without CUDA graphs; default :data:`LAUNCH_OVERHEAD`.
    hbm_efficiency : float in (0, 1] or None
        Achieved fraction of peak HBM bandwidth (dimensionless; 1: the roofline).
        ``None`` (default): the published rates. Each kernel with a published streaming
        rate of its own takes it (dense NVFP4 GEMMs on Blackwell, dense FP8 GEMMs on
        Hopper: :meth:`_Settings.dense_gemm_hbm_efficiency`; TensorRT-LLM's MLA kernel on
        Hopper: :data:`MLA_DECODE_EFFICIENCY`) and every other read runs at
        :data:`DECODE_HBM_EFFICIENCY` (0.78, the best published decode weight streaming).
        A given fraction is every read's, those kernels' too (the routed experts' unless
        ``moe_hbm_efficiency`` says otherwise), so a sweep of given values is continuous
        and a higher given value never slows a step; ``hbm_efficiency=0.78`` is therefore
        not the default (it drops the published per-kernel rates).
    compute_efficiency : float in (0, 1]
        Achieved fraction of peak FLOP/s (1: roofline), for every GEMM. Each GEMM's peak is
        the chip's dense tensor peak of the math format it runs in (``ChipSpec.gemm_flops``
        of ``MoEModel.math_format``: FP8 for FP8 W8A8 weights, FP4 for NVFP4 on Blackwell,
        BF16 for INT4 W4A16 and the attention scores, router and head). Default None:
        each GEMM at its published efficiency (:func:`analysis.gemm_compute_efficiency` of
        the chip's generation, the format and the kind, grouped for the routed experts:
        DeepGEMM's FP8 tables on Hopper), 1 where none is published.
    dispatch_bytes, combine_bytes : float, optional
        Bytes per element sent in dispatch and combine; default the model's
        ``activation_bytes`` (DeepSeek-V3 dispatches FP8, 1 byte, and combines BF16).
    chip : str or ChipSpec, optional
        Overrides ``fabric.chip``.
    collective : callable, optional
        ``collective(fabric, op, nbytes, algorithm=, ranks=, transport=)`` returning
        an object with ``.time`` (seconds); default :func:`engine_collective`'s rule:
        ``analysis.cost``, or with ``engine="vllm"`` on a Hopper or Blackwell chip and no
        ``runtime`` / ``algorithm`` chosen, :func:`analysis.vllm_all_reduce` (the kernel
        vLLM launches for each TP all-reduce's size, at vLLM's defaults). ``nbytes``
        is the full vector per rank for ``"all-reduce"``; for ``"all-to-all"`` (uniform
        routing) the whole per-rank send buffer, own block included (nccl-tests
        convention); for ``"all-to-allv"`` (skewed routing) an ``ep x ep`` array,
        ``nbytes[i, j]`` the expected bytes rank ``i`` sends to rank ``j``.
        ``algorithm`` may also be a mapping from these operation names to an
        algorithm each. Given ``runtime``, it is also passed ``runtime=``.
    runtime : str, optional
        Collective runtime of the tensor-parallel all-reduces (and of
        ``ep_kernel="all-to-allv"``), passed to ``analysis.cost``; ``None``: its default.
    ep_kernel : str, optional
        MoE exchange kernel for dispatch and combine (:data:`fabric.EXCHANGE_KERNELS`),
        costed by :func:`analysis.moe_exchange` with uniform routing: each expert rank sends
        the tokens it holds (:func:`_rank_tokens`: the sequences spread over the attention
        groups, each group's tokens over its ranks; passed rank by rank, 0 for a rank that
        holds none), at every token count (batch 1 on ep 72 is one rank's token, not one on
        each of 72; a group whose tokens split unevenly over its ranks sends each rank's
        own); ``None``: the
        collectives model's all-to-all (or all-to-allv under skew), or, with
        ``engine="trtllm"`` under attention data parallelism where TensorRT-LLM runs no
        MNNVL all-to-all, its allgather + reducescatter (:func:`trtllm_gathers`).
    cuda_graphs : bool, default True
        Replay the step as a CUDA graph: each kernel pays ``graph_kernel_overhead``
        over the engine's kernel list (:data:`ENGINE_KERNELS`) instead of a host
        launch over :data:`KERNELS`, but a kernel whose start the pricing of its work
        already holds (an exchange phase's handshake, a collective priced under NCCL or
        the symmetric-memory runtime: :func:`_held_starts`) pays none. The default is True because the serving
        frameworks whose published measurements the model is checked against (vLLM,
        SGLang, TensorRT-LLM) all replay decode as a CUDA graph by default; pass False
        for an eager implementation (one host launch per operator).
    graph_kernel_overhead : float
        Seconds per kernel in a replayed graph; default :data:`GRAPH_KERNEL_OVERHEAD`.
    engine : str
        Whose kernel list a replayed graph runs (:data:`ENGINE_KERNELS`): ``"trtllm"``
        (TensorRT-LLM's DeepSeek-R1 module list counted from its code, :data:`GRAPH_KERNELS`),
        ``"vllm"`` (counted from vLLM's code, :data:`VLLM_GRAPH_KERNELS`; its TP
        all-reduces also take vLLM's per-size dispatch unless ``collective``, ``runtime`` or
        ``algorithm`` say otherwise, :func:`engine_collective`) or ``"sglang"``
        (counted from SGLang's code, :data:`SGLANG_GRAPH_KERNELS`).
    min_kernel_time : float
        Seconds one kernel runs at least beyond its boundary, for every kernel (a uniform
        floor on top of ``kernel_floors``). Default :data:`MIN_KERNEL_TIME` (0, off).
    kernel_floors : mapping or None
        Seconds: the duration of a small kernel of each class (:data:`KERNEL_CLASSES`) in a
        replayed graph; a kernel costs its boundary plus ``max(its roofline share,
        floor - EMPTY_KERNEL_TIME)`` (see "Kernels" in the module docstring). ``None``: the
        sourced :data:`KERNEL_FLOORS` (norm 2.9 us, elementwise 1.5 us, top-k 4.1 us,
        MoE align 8.23 us) and the K-loop floor of dense NVFP4 GEMMs on Blackwell
        (``analysis.DECODE_GEMM_K_FLOOR``); a mapping gives the class floors exactly (missing
        classes: none; no K-loop floor), so ``{}`` turns them off.
    gemm_fixed_time : float
        Seconds every weight GEMM runs beyond its streaming time and boundary; default
        :data:`GEMM_FIXED_TIME` (2.6 us); 0 turns it off.
    expert_balance : float in (0, 1], optional
        Balance of the routed experts' work over the expert-parallel ranks, as an expert
        load balancer (EPLB: redundant experts placed by measured popularity) achieves it:
        mean over maximum of the ranks' token-expert pairs (the lmsys blog's
        "balancedness"). The busiest rank computes ``mean / expert_balance`` pairs. ``None``
        (default): round-robin placement of the experts under the routing above (uniform
        or ``skew``). The exchange stays uniform (the busiest rank's extra receive is not
        counted).
    draft : bool, default False
        Time one multi-token-prediction draft token instead of a step of the model: one
        MoE block of the model (an MTP module: DeepSeek-V3 report, arXiv 2412.19437, sec.
        2.2), its ``2 hidden -> hidden`` projection and the shared output head, at the
        same batch, context and layout (``layers`` then holds the one block; the memory fit
        is that block's). The MTP block's weights are in :attr:`MoEModel.mtp_format` when the
        model names one (``deepseek-r1-nvfp4``: BF16, as TensorRT-LLM runs them), else in the
        main model's formats.
    pdl : bool, default False
        Kernels launched with Programmatic Dependent Launch (TensorRT-LLM's
        ``TRTLLM_ENABLE_PDL=1``): each boundary of the replayed graph costs
        ``graph_kernel_overhead - PDL_HIDDEN_GAP`` (:data:`PDL_HIDDEN_GAP`, 0.55 us: the dispatch
        gap PDL overlaps with the preceding kernel). Needs ``cuda_graphs=True`` and
        ``graph_kernel_overhead`` of at least the gap (SpecError otherwise).
    graph_batch : int, optional
        Sequences (whole system, like ``batch``) of the CUDA graph the step replays when the
        engine pads a batch up to a captured size. vLLM pads the step's token count to the
        next captured size and runs the graph on the padded input (vllm-project/vllm
        ``vllm/v1/worker/gpu_model_runner.py``: ``num_input_tokens =
        vllm_config.pad_for_cudagraph(num_scheduled_tokens)`` when CUDA graphs are on and
        the step fits the largest captured size; data-parallel ranks then pad to the largest
        of them, ``get_dp_padding``): ``graph_batch`` is that padded count over
        ``tokens_per_sequence`` (the caller rounds up). The padded rows go through every
        weight GEMM, the router and the routed experts (a padded row is routed like a real
        one: an assumption; vLLM's persistent input buffers hold stale token ids past the
        scheduled tokens, so the router sees real tokens there, whose experts are not
        modelled), the TP all-reduces and the
        exchange, and count in the kernel lists' token threshold: all at
        ``ceil(graph_batch / dp) x tokens_per_sequence`` tokens per attention group. The
        attention kernel reads the KV cache and computes scores for the ``batch`` real
        sequences only (assumption: the padded rows belong to no request and have no cached
        tokens), the memory fit holds their KV cache, and tokens/s count the real batch.
        ``None`` (default): ``batch`` (no padding). An int ``>= batch`` (SpecError
        otherwise); needs ``cuda_graphs=True``. Neither engine has a fixed bound on a
        captured graph's batch (vLLM: capture sizes <= ``max_num_batched_tokens``, a
        setting; TensorRT-LLM: ``CudaGraphConfig.max_batch_size``, any non-negative int):
        a ``graph_batch`` whose TP all-reduce or expert exchange would pass 2**63 - 1 bytes
        (an int64, the most a collective carries) is a SpecError naming it.
    moe_hbm_efficiency : float in (0, 1], optional
        Achieved fraction of peak HBM bandwidth of the routed experts' grouped GEMMs.
        ``None``: :data:`VLLM_INT4_MOE_HBM_EFFICIENCY` when the step replays vLLM's graph
        (``cuda_graphs=True, engine="vllm"``) on a model whose routed experts are INT4
        (``expert_format="int4-g32"``: vLLM's W4A16 MoE GEMMs, measured), else
        ``hbm_efficiency`` (every other read's fraction).
    nic_background : float, default 0
        Bytes per second that traffic outside the step delivers to each expert-parallel
        rank's NIC while it runs (e.g. a disaggregated decode instance's KV-cache inflow from
        its prefill instance), passed to the exchange kernel
        (:func:`analysis.moe_exchange`'s ``nic_background``: its network stage shares the
        port). Needs an ``ep_kernel`` other than ``"all-to-allv"`` when the experts are
        exchanged (the collectives model has no background traffic; SpecError); a step
        without an exchange (``ep=1`` or tensor-parallel experts) is not slowed, nor is its
        TP all-reduce.
    moe_backend : str, default "cutlass"
        TensorRT-LLM's MoE backend (:data:`analysis.MOE_BACKENDS`): ``"cutlass"``, its
        PyTorch flow's default, or ``"trtllm"``, its trtllm-gen kernels (Blackwell;
        ``moe_backend: TRTLLM`` in a run's options). Under ``engine="trtllm"`` in a replayed
        graph the routed experts take the backend's measured module time where one was
        measured at the step's own expert layout and tokens (:func:`analysis.moe_module_time`:
        eight GPUs, DeepSeek's expert shape, 1-384 tokens: ``"trtllm"`` on B200 / GB200 with
        NVFP4 experts, ``"cutlass"`` on H200 with FP8 ones; the rank's MoE must see every token
        of its instance: experts split over the ranks, or the attention-DP allgather);
        elsewhere the step's own pricing of its kernel list (CUTLASS's, for either backend).
        ``"trtllm"`` needs ``engine="trtllm"`` on a Blackwell chip (SpecError otherwise).
    trtllm_release : str, optional
        The TensorRT-LLM release whose code the step runs (:data:`analysis.TRTLLM_RELEASE_DATES`;
        a measurement that states none: :func:`analysis.trtllm_release_on` of its date). None:
        the newest modelled, :data:`analysis.TRTLLM_NEWEST`. A release before
        :data:`analysis.TRTLLM_DSV3_GEMMS_RELEASE` runs DeepSeek's router gate GEMM and BF16
        fused A projection on cuBLAS at 1-16 tokens a rank too (their measured ``Linear``
        times), a later one in their dedicated kernels (:func:`analysis.trtllm_runs_dsv3_gemms`);
        above 16 tokens every release runs the same. Given, it is listed in the step's
        Parameters. Needs ``engine="trtllm"`` (SpecError otherwise).
    parameters : bool, default True
        Whether the step lists the Parameters it used (:attr:`DecodeStep.parameters`;
        ``False``: ``()``, the rest of the step the same). A serving run prices hundreds of
        steps and reads only their times (:func:`analysis.closed_loop_run`): listing them was
        a quarter of a step's time there.

    Returns
    -------
    DecodeStep

    Raises
    ------
    SpecError
        Unknown model, a layout that does not fit (ranks that do not divide, more
        expert ranks than experts, more chips than the system has), weights or
        KV cache that exceed HBM; each message names the numbers.
    FabricError
        If no collective cost function is available.

    Examples
    --------
    >>> import topologies
    >>> f = topologies.build("sd200-ultra")
    >>> r = decode_step("kimi-k2", f, batch=64, context=4096, layout="tp=8")
    >>> str(r.layout), len(r.layers), round(r.layers[-1].active_experts, 1)
    ('tp=8,dp=16,ep=128', 61, 284.2)
    >>> b = r.breakdown
    >>> abs(b.attention + b.ffn + b.head + b.exposed_comm + b.launch - r.time) < 1e-12
    True
    >>> h = topologies.build("switch:8,chip=h200")   # FP8 weights on Hopper
    >>> kw = {"batch": 64, "context": 2048, "layout": "tp=8"}
    >>> [round(decode_step("deepseek-r1", h, hbm_efficiency=e, **kw).time * 1e3, 2)
    ...  for e in (None, 0.78, 1.0)]    # published rates, measured GEMMs and MLA op; 0.78; roofline
    [37.96, 35.37, 29.96]
    >>> decode_step("kimi-k2", f, batch=64, context=4096, layout="tp=3,dp=40")
    Traceback (most recent call last):
    ...
    fabric.SpecError: layout: tp=3 does not divide the 64 attention heads of kimi-k2
    """
    fabric = fabric_arg(fabric)
    parameters = flag_of(parameters, "parameters")
    s = _settings(model, fabric, batch=batch, context=context, layout=layout,
                  tokens_per_sequence=tokens_per_sequence, transport=transport,
                  algorithm=algorithm, skew=skew, overlap=overlap, fusion_factor=fusion_factor,
                  launch_overhead=launch_overhead, hbm_efficiency=hbm_efficiency,
                  compute_efficiency=compute_efficiency, dispatch_bytes=dispatch_bytes,
                  combine_bytes=combine_bytes, chip=chip, collective=collective,
                  runtime=runtime, ep_kernel=ep_kernel, cuda_graphs=cuda_graphs,
                  graph_kernel_overhead=graph_kernel_overhead, engine=engine,
                  min_kernel_time=min_kernel_time, moe_hbm_efficiency=moe_hbm_efficiency,
                  kernel_floors=kernel_floors, gemm_fixed_time=gemm_fixed_time,
                  expert_balance=expert_balance, draft=draft, pdl=pdl, graph_batch=graph_batch,
                  nic_background=nic_background, moe_backend=moe_backend,
                  trtllm_release=trtllm_release)
    mem = _memory_fit(s)
    route = s.routing
    comm = _communication(s, route)
    dense, moe = _layer_times(s, mem, route, comm)
    head = _head_time(s)
    layers = (dense,) * s.m.dense_layers + (moe,) * s.m.moe_layers
    bd = _breakdown(layers, head)
    m, lay, kern = s.m, s.lay, s.kern
    return DecodeStep(model=m.name, system=s.fabric.name, chip=s.chip.name, batch=s.batch,
                      context=s.context, tokens_per_sequence=s.q, layout=lay,
                      transport=s.transport, layers=layers, head=head, breakdown=bd, time=bd.total,
                      tokens_per_s_user=s.q / bd.total,
                      tokens_per_s_system=s.batch * s.q / bd.total,
                      hbm_per_chip=mem.weights_chip + mem.kv_chip,
                      parameters=_parameters(s, moe, comm) if parameters else (),
                      runtime=s.runtime,
                      ep_kernel=kern.name if kern is not None else None,
                      cuda_graphs=s.cuda_graphs,
                      instance=tuple(s.fabric.endpoints[i] for i in s.pos),
                      idle_chips=idle_chips(s.fabric, lay.chips, equal_domains=s.equal_domains,
                                            tp=lay.tp),
                      graph_batch=s.graph_batch)


# -- the parts of a step (decode_step calls them in this order) ----------------------------

def step_kernel_lists(model, chip, *, engine="trtllm", cuda_graphs=True, tp=1, tokens=1):
    """The kernel lists a decode step of ``model`` on ``chip`` runs per block (keys ``mla`` or
    ``gqa``, ``dense_ffn``, ``moe_ffn``): the eager :data:`KERNELS` without CUDA graphs, else
    the engine's graph lists. TensorRT-LLM's (:data:`GRAPH_KERNELS`) take three changes by the
    step: its MoE runner's other branch (:data:`TRTLLM_MOE_FULL_BRANCH`) unless the
    min-latency one applies (NVFP4 routed experts, ``tp > 1``, at most
    :data:`TRTLLM_MIN_LATENCY_TOKENS` ``tokens`` on a rank), an input quantization before
    each GEMM of a part stored in a format of :data:`TRTLLM_INPUT_QUANT_FORMATS` that the chip
    runs in FP8, and the NVFP4 linears' own input quantization (:data:`TRTLLM_FP4_REQUANT`)
    where the chip runs NVFP4 on FP4 tensor cores.

    Parameters
    ----------
    model : str or MoEModel
    chip : str or fabric.ChipSpec
    engine : str
        ``"trtllm"`` (the default), ``"vllm"`` or ``"sglang"``.
    cuda_graphs : bool
        False: the eager lists.
    tp : int
        Attention tensor-parallel ranks.
    tokens : int
        Tokens a rank runs in the step.

    Returns
    -------
    dict
        Block name -> tuple of kernel names, in launch order.

    Examples
    --------
    >>> lists = step_kernel_lists("deepseek-r1", "h200", tp=8)
    >>> lists["mla"][:2], lists["moe_ffn"][4:6]
    (('fp8_input_quant', 'fuse_a_gemm'), ('expert_maps', 'expert_expand'))
    >>> b200 = step_kernel_lists("deepseek-r1-nvfp4", "b200", tp=8)
    >>> b200["moe_ffn"] == GRAPH_KERNELS["moe_ffn"], b200["dense_ffn"][2:4]
    (True, ('fp4_input_quant', 'down_proj'))

    A model with DeepSeek Sparse Attention (``MLA.sparse``) runs the lightning indexer's
    kernels (:data:`DSA_INDEXER_KERNELS`) before its attention kernel, whatever the engine
    (:func:`decode_step` drops :data:`DSA_FAST_PATH_SKIPS` on TensorRT-LLM's short-sequence fast
    path, which depends on the context):

    >>> glm = step_kernel_lists("glm-5", "b200", tp=8)["mla"]
    >>> glm[glm.index("indexer_logits") + 2]
    'gen_attention'

    ``tp`` and ``tokens`` are ints >= 1 (else SpecError, or TypeError for a non-int),
    ``cuda_graphs`` a bool, Python's or numpy's (TypeError); an unknown model, chip or engine is a SpecError
    whatever the other arguments.
    """
    tp, tokens = check_count(tp, "tp", 1), check_count(tokens, "tokens", 1)
    cuda_graphs = flag_of(cuda_graphs, "cuda_graphs")
    check_engine(engine)
    m, chip = model_config(model), chip_spec(chip)     # named wrongly: refused on every path
    lists = _engine_kernel_lists(m, chip, engine, cuda_graphs, tp, tokens)
    if not m.attention.sparse:
        return lists
    mla = lists.get("mla", KERNELS["mla"])
    at = next(i for i, n in enumerate(mla) if KERNEL_CLASSES[n] == "attention")
    return {**lists, "mla": (*mla[:at], *DSA_INDEXER_KERNELS, *mla[at:])}


def _engine_kernel_lists(m, chip, engine, cuda_graphs, tp, tokens):
    """:func:`step_kernel_lists` before the DSA indexer's kernels."""
    if not cuda_graphs:
        return KERNELS
    lists = ENGINE_KERNELS[engine]
    if engine != "trtllm":
        return lists
    quantized = {p for p in ("attention", "ffn", "experts")
                 if m.part_format(p) in TRTLLM_INPUT_QUANT_FORMATS
                 and chip.gemm_format(m.math_format(p)) == "fp8"}
    # the runner's min-latency branch: NVFP4 experts, at most 128 tokens on a rank, the MoE
    # output reduced by a tensor-parallel all-reduce (modeling_deepseekv3.py)
    min_latency = (m.part_format("experts") == "nvfp4" and tp > 1
                   and tokens <= TRTLLM_MIN_LATENCY_TOKENS)
    fp4 = {p for p in ("ffn",)
           if m.part_format(p) == "nvfp4" and chip.gemm_format(m.math_format(p)) == "fp4"}
    requant = TRTLLM_FP4_REQUANT if tp > 1 else _TRTLLM_FP4_REQUANT_TP1
    att = m.attention
    flash_mla = (chip.generation == "hopper" and att.kind == "mla" and not att.sparse
                 and att.kv_lora_rank + att.qk_rope_head_dim == TRTLLM_FLASHMLA_HEAD)
    if not quantized and min_latency and not fp4 and not flash_mla:
        return lists

    def part(key, name):
        if key in ("mla", "gqa"):
            return "attention"
        if KERNEL_CLASSES[name] == "moe_gemm":
            return "experts"
        return "router" if name == "router_gemm" else "ffn"

    def expand(key, n):
        quant = (("fp8_input_quant",) if KERNEL_CLASSES[n] in ("gemm", "moe_gemm")
                 and part(key, n) in quantized else
                 ("fp4_input_quant",) if n in requant.get(key, ()) and part(key, n) in fp4
                 else ())
        full = (TRTLLM_MOE_FULL_BRANCH.get(n, ()) if key == "moe_ffn" and not min_latency
                else ())
        before, after = (TRTLLM_HOPPER_FLASHMLA.get(n, ((), ())) if key == "mla" and flash_mla
                         else ((), ()))
        return (*quant, *before, n, *after, *full)

    kind = m.attention.kind        # GQA keeps the eager list (_attention_names)
    lists = {kind: KERNELS[kind], **lists}
    return {key: tuple(k for n in names for k in expand(key, n)) for key, names in lists.items()}


@dataclass(frozen=True)
class _Settings:
    """Validated inputs of one step and the figures derived from them at once."""

    m: object
    fabric: object
    chip: object
    batch: int
    context: int
    q: int
    lay: Layout
    transport: str
    algorithm: object
    skew: float
    overlap: float
    fusion_factor: float
    launch_overhead: float
    hbm_eff: float              # every read's fraction without a published rate of its own
    fl_eff: float | None
    dispatch_b: float
    combine_b: float
    collective: object
    runtime: str
    kern: object
    cuda_graphs: bool
    graph_kernel_overhead: float
    engine: str
    min_kernel_time: float = 0.0
    moe_eff: float = None
    floors: tuple = ()
    gemm_fixed: float = 0.0
    balance: float = None
    draft: bool = False
    pos: tuple = ()             # the instance's chips (positions in fabric.endpoints)
    equal_domains: bool = False
    pdl: bool = False
    graph_batch: int = None     # sequences of the replayed graph (>= batch; batch: no padding)
    nic_background: float = 0.0  # B/s into each EP rank's NIC from outside the step
    published_floors: bool = True  # kernel_floors=None: the published floors, GEMM K floor too
    published_rates: bool = True   # hbm_efficiency=None: kernels with a published streaming
    #                                rate of their own take it (dense GEMMs, the MLA kernel)
    gathers: bool = False          # TensorRT-LLM's attention-DP allgather + reducescatter
    moe_backend: str = "cutlass"   # TensorRT-LLM's MoE backend (analysis.MOE_BACKENDS)
    trtllm_release: str = None     # TensorRT-LLM's release (None: TRTLLM_NEWEST)

    @functools.cached_property
    def dsv3_gemms(self):
        """Whether the step's TensorRT-LLM release runs DeepSeek's router and BF16 fused A
        GEMMs in their dedicated kernels at 1-16 tokens a rank
        (:func:`trtllm_runs_dsv3_gemms`)."""
        return trtllm_runs_dsv3_gemms(self.trtllm_release)

    @functools.cached_property
    def routing(self):
        """The step's routed experts (:func:`_routing`), found once a step."""
        return _routing(self)

    @functools.cached_property
    def busiest_active(self):
        """:func:`expected_max_active` of :attr:`routing` over the ``ep`` ranks, found once a
        step (the step, its MoE block and :func:`_measured_moe_module` read it)."""
        return _busiest_active(self.routing.active, self.routing.owner, self.lay.ep)

    def fixed(self, name):
        """Seconds kernel ``name`` runs beyond its boundary and its streaming time, whatever
        its size (:data:`GEMM_FIXED_TIME` for a ``gemm``, else 0)."""
        return self.gemm_fixed if KERNEL_CLASSES[name] == "gemm" else 0.0

    def extra(self, name):
        """Seconds kernel ``name`` runs at least beyond its boundary (its class's floor
        minus an empty kernel, or ``min_kernel_time``, the larger)."""
        return max(dict(self.floors).get(KERNEL_CLASSES[name], 0.0), self.min_kernel_time)

    def gemm_k_floor(self, part):
        """The published K-loop floor ``(intercept, slope)`` Parameters of the dense GEMMs of
        model part ``part`` on this chip (``analysis._gemm.DECODE_GEMM_K_FLOOR``: NVFP4 on
        Blackwell), or None: with the published kernel floors only (``kernel_floors=None``)."""
        if not self.published_floors:
            return None
        return decode_gemm_k_floor(self.chip.generation, self.gemm_format(part))

    @property
    def bw(self):
        """Achieved HBM bandwidth, bytes/s."""
        return self.chip.hbm_bandwidth * self.hbm_eff

    def dense_gemm_hbm_efficiency(self, part):
        """The published fraction of peak HBM bandwidth at which the dense GEMMs of model
        part ``part`` stream their weights on this chip (``analysis._gemm.
        DECODE_GEMM_HBM_EFFICIENCY``: NVFP4 on Blackwell, FP8 on Hopper), as a Parameter, or None: the
        step's ``hbm_efficiency`` applies. Only when ``hbm_efficiency`` is not given (None: a
        user's fraction, 1 for the roofline, is taken for every read)."""
        if not self.published_rates or part not in ("attention", "ffn"):
            return None
        return decode_gemm_hbm_efficiency(self.chip.generation, self.gemm_format(part))

    @property
    def mla_kernel(self):
        """The published (HBM, compute) efficiencies of TensorRT-LLM's MLA decode kernel on
        this chip (:data:`MLA_DECODE_EFFICIENCY`), or None: the step's defaults apply (another
        engine, not MLA, an FP8 KV cache, no figure for the generation, or a user's
        ``hbm_efficiency`` / ``compute_efficiency``)."""
        if (self.engine != "trtllm" or self.m.attention.kind != "mla" or self.fp8_mla
                or self.fl_eff is not None or not self.published_rates):
            return None
        return MLA_DECODE_EFFICIENCY.get(self.chip.generation)

    @property
    def mla_measured(self):
        """Seconds of TensorRT-LLM's measured MLA generation op (rope + cache append and the
        attention kernel, :func:`analysis.mla_generation_time`) for this step's largest
        attention group, or None: only ``engine="trtllm"`` in a replayed graph with the
        published rates (no user ``hbm_efficiency`` / ``compute_efficiency``), dense MLA at
        the measured shape and heads per GPU (128, 64, 32 or 16:
        :data:`analysis.MLA_GENERATION_HEADS`), a KV cache in a measured format (BF16; FP8 on
        B200 and GB200), on a chip and at a batch and context the measurement covers. The op
        was measured at one new token a sequence; a step of ``q > 1`` tokens a sequence (a
        speculative cycle's verification) takes the one-token op's time as its floor (named
        ASSUMPTION: ``q`` query tokens of a sequence read the same cache and do ``q`` times
        the score math, so the op takes no less than for one; the attention kernel's roofline
        still counts the ``q`` tokens)."""
        att = self.m.attention
        if (self.engine != "trtllm" or not self.cuda_graphs or not self.published_rates
                or self.fl_eff is not None or att.kind != "mla" or att.sparse):
            return None
        heads = att.heads / self.lay.tp
        return mla_generation_time(self.chip, heads, att.kv_lora_rank,
                                   att.qk_rope_head_dim, self.m.kv_cache_bytes, self.b_dp,
                                   self.context)

    def attention_gemm_use(self, name):
        """What TensorRT-LLM's measured attention GEMMs (:mod:`analysis._gemm_measured`) would
        read for attention kernel ``name`` of this step: ``("gemm", m, n, k)``, ``("pre" |
        "post", m, heads)`` or None (not one of :data:`TRTLLM_MEASURED_ATTENTION_GEMMS`, or not
        ``engine="trtllm"`` in a replayed graph with the published rates and no user
        ``compute_efficiency``, dense MLA with a query low-rank, heads not split evenly). ``m``
        the rank's rows (:attr:`t_dp`); a BF16 fused A projection only above
        :data:`TRTLLM_FUSED_A_MIN_LATENCY_TOKENS` rows in a release with its dedicated kernel
        (:attr:`dsv3_gemms`), at every count in an earlier one."""
        att, m = self.m.attention, self.t_dp
        if (name not in TRTLLM_MEASURED_ATTENTION_GEMMS or self.engine != "trtllm"
                or not self.cuda_graphs or not self.published_rates
                or self.fl_eff is not None or att.kind != "mla" or att.sparse
                or not att.q_lora_rank or att.heads % self.lay.tp):
            return None
        if name in ("uk_bgemm", "uv_gemm"):
            return ("pre" if name == "uk_bgemm" else "post", m, att.heads // self.lay.tp)
        shape = trtllm_projection_shapes(self.m, self.lay.tp, m, self.trtllm_release).get(name)
        return None if shape is None else ("gemm", m, *shape)

    def attention_gemm_measured(self, name):
        """Seconds of attention kernel ``name`` as TensorRT-LLM 1.2.0rc5 ran it on this chip
        (:func:`analysis.trtllm_gemm_time`, :func:`analysis.trtllm_mla_bmm_time`, at
        :meth:`attention_gemm_use`), or None where nothing was measured."""
        return self._attention_gemm_times.get(name)

    @functools.cached_property
    def _attention_gemm_times(self):
        """:meth:`attention_gemm_measured` of each measured kind of kernel, read once a step."""
        fmt, att, out = self.m.part_format("attention"), self.m.attention, {}
        for name in TRTLLM_MEASURED_ATTENTION_GEMMS:
            use = self.attention_gemm_use(name)
            if use is None:
                continue
            out[name] = (trtllm_gemm_time(self.chip, fmt, *use[1:]) if use[0] == "gemm"
                         else trtllm_mla_bmm_time(self.chip, fmt, use[0], use[2], use[1],
                                                  (att.qk_nope_head_dim, att.kv_lora_rank,
                                                   att.v_head_dim)))
        return out

    @property
    def router_gemm_use(self):
        """What TensorRT-LLM's measured GEMMs (:func:`analysis.trtllm_gemm_time`) would read
        for the MoE block's router gate GEMM (``router_gemm``): ``("gemm", m, n, k)``, ``m``
        the rank's rows (:attr:`t_dp`: each rank routes every token its MoE sees, its own
        under attention DP, all of its group's under attention TP), ``n`` the routed experts,
        ``k`` the hidden size; or None: not ``engine="trtllm"`` in a replayed graph with the
        published rates and no user ``compute_efficiency``, no ``router_gemm`` kernel, or no
        shape :func:`trtllm_router_shape` gives at those rows in the step's release (a shape
        not measured, or the dedicated kernel's rows and shapes: its counts)."""
        if (self.engine != "trtllm" or not self.cuda_graphs or not self.published_rates
                or self.fl_eff is not None or not self.m.moe_layers
                or "router_gemm" not in self.kernel_lists["moe_ffn"]):
            return None
        shape = trtllm_router_shape(self.m, self.t_dp, self.trtllm_release)
        return None if shape is None else ("gemm", self.t_dp, *shape)

    @functools.cached_property
    def router_measured(self):
        """Seconds of the router gate GEMM as TensorRT-LLM 1.2.0rc5 ran it as a ``Linear``
        (cuBLAS) on this chip, BF16 (:func:`analysis.trtllm_gemm_time` at
        :meth:`router_gemm_use`), or None. Named ASSUMPTION: the 2025 code's ``cublas_mm``
        with FP32 logits runs as that BF16-output ``Linear`` (the same BF16 weight read and
        GEMM; a row's outputs, one a routed expert, written in 4 bytes instead of 2)."""
        use = self.router_gemm_use
        return None if use is None else trtllm_gemm_time(
            self.chip, self.gemm_format("router"), *use[1:])

    def kv_bw(self):
        """Achieved HBM bandwidth of the attention kernel's KV-cache read, bytes/s."""
        k = self.mla_kernel
        return self.bw if k is None else self.chip.hbm_bandwidth * k[0].value

    def scores_flops(self):
        """Achieved FLOP/s of the attention kernel's score math."""
        k = self.mla_kernel
        return self.gemm_flops("scores") * (1.0 if k is None else k[1].value)

    def index_flops(self):
        """Achieved FLOP/s of the DSA indexer's logits (``MLA.index_score_flops_per_token``):
        the chip's FP8 peak (DeepSeek-V3.2's ``fp8_index``; BF16 on a chip without FP8 tensor
        cores) times ``compute_efficiency`` (1 when None: no published figure)."""
        return (self.chip.peak(self.chip.gemm_format("fp8"))
                * (1.0 if self.fl_eff is None else self.fl_eff))

    def part_bw(self, part):
        """Achieved HBM bandwidth of the dense GEMMs of model part ``part``, bytes/s
        (:attr:`bw` unless :meth:`dense_gemm_hbm_efficiency` gives a published fraction)."""
        p = self.dense_gemm_hbm_efficiency(part)
        return self.bw if p is None else self.chip.hbm_bandwidth * p.value

    @property
    def moe_bw(self):
        """Achieved HBM bandwidth of the routed experts' grouped GEMMs, bytes/s."""
        return self.chip.hbm_bandwidth * (self.hbm_eff if self.moe_eff is None else self.moe_eff)

    @property
    def flops(self):
        """Achieved FLOP/s at the chip's BF16 peak (``compute_efficiency``, 1 when None);
        the model's blocks price each part at :meth:`gemm_flops`."""
        return self.chip.peak_flops * (1.0 if self.fl_eff is None else self.fl_eff)

    def gemm_efficiency(self, part):
        """Compute efficiency of the GEMMs of model part ``part``: the user's
        ``compute_efficiency``, else the published one of the chip's generation, the format
        they run in and their kind (routed experts: grouped), else 1. ``None`` for 1 by
        default (no published figure), so that :meth:`gemm_flops` keeps the roofline's
        arithmetic bit for bit."""
        if self.fl_eff is not None or part == "scores":
            return self.fl_eff
        p = gemm_compute_efficiency(self.chip.generation, self.gemm_format(part),
                                    "grouped" if part == "experts" else "dense")
        return None if p is None else p.value

    @property
    def fp8_mla(self):
        """True when the attention scores run FP8 (:data:`TRTLLM_FP8_MLA_KV_BYTES`):
        TensorRT-LLM's MLA generation kernel over an FP8 KV cache."""
        return (self.engine == "trtllm" and self.m.attention.kind == "mla"
                and self.m.kv_cache_bytes == TRTLLM_FP8_MLA_KV_BYTES)

    def gemm_format(self, part):
        """The math format the GEMMs of model part ``part`` run in on this chip (the
        attention scores in FP8 under :attr:`fp8_mla`)."""
        if part == "scores" and self.fp8_mla:
            return self.chip.gemm_format("fp8")
        return self.chip.gemm_format(self.m.math_format(part))

    def gemm_flops(self, part):
        """Achieved FLOP/s of the GEMMs of model part ``part`` (``MoEModel.math_format``):
        the chip's dense peak of the math format they run in (``ChipSpec.gemm_flops``:
        FP8 W8A8 on FP8 tensor cores, NVFP4 on FP4 ones where the chip has them, INT4
        W4A16 and formats the chip lacks in BF16) times :meth:`gemm_efficiency`."""
        eff = self.gemm_efficiency(part)
        return self.chip.peak(self.gemm_format(part)) * (1.0 if eff is None else eff)

    def expert_flops(self, rows):
        """Achieved FLOP/s of the routed experts' grouped GEMMs at ``rows`` rows per group
        (token-expert pairs per active expert on the busiest chip): the chip's peak of their
        format times the published efficiency at that many rows
        (:func:`analysis.grouped_gemm_efficiency`: DeepGEMM's masked table on Hopper FP8),
        or, under ``engine="trtllm"`` in a replayed graph, the rate of TensorRT-LLM's measured
        MoE module on the chip (:func:`analysis.grouped_gemm_rate`: its CUTLASS NVFP4 MoE on
        B200 and GB200, from 16 rows a group; :func:`_measured_moe_module`), no more than the
        chip's own figure; :meth:`gemm_flops` of the experts where none is published
        or under a user's ``compute_efficiency``."""
        if self.fl_eff is not None:
            return self.gemm_flops("experts")
        fmt = self.gemm_format("experts")
        r = self.moe_module_rate(rows)
        if r is not None:           # TensorRT-LLM's own module as measured on the chip
            return min(self.gemm_flops("experts"), r)
        e = grouped_gemm_efficiency(self.chip.generation, fmt, rows)
        return self.gemm_flops("experts") if e is None else self.chip.peak(fmt) * e

    def moe_module_rate(self, rows):
        """The rate of TensorRT-LLM's measured MoE module on this chip at ``rows`` rows per group
        (:func:`analysis.grouped_gemm_rate`), or None: only ``engine="trtllm"`` in a replayed
        graph, no user ``compute_efficiency``, and where a chip holds at least the measured
        shape's local experts (:data:`analysis.MEASURED_MOE_LOCAL_EXPERTS`, its EP8 shard: with
        fewer, e.g. 256 experts over 72 chips, the module's fixed part would shrink with the
        FLOPs; review S21-R4, lead's decision 03:58)."""
        if (self.engine != "trtllm" or not self.cuda_graphs or self.fl_eff is not None
                or self.m.routed_experts / self.lay.ep < MEASURED_MOE_LOCAL_EXPERTS):
            return None
        return grouped_gemm_rate(self.chip, self.gemm_format("experts"), rows)

    @functools.cached_property
    def moe_module(self):
        """Seconds of TensorRT-LLM's MoE module (its :attr:`moe_backend`) as measured at this
        step's own expert layout and tokens (:func:`analysis.moe_module_time`: DeepSeek's
        expert shape, ``etp x ep`` of eight GPUs, 1-384 tokens), or None: only
        ``engine="trtllm"`` in a replayed graph, no user ``compute_efficiency``, and where
        each rank's MoE sees every token of the instance (no exchange: experts split over
        the ranks, or TensorRT-LLM's attention-DP allgather), as in the measurement, whose
        one GPU runs ``tokens`` tokens through its experts."""
        if (self.engine != "trtllm" or not self.cuda_graphs or self.fl_eff is not None
                or not self.m.moe_layers or (self.lay.exchanges and not self.gathers)):
            return None
        return moe_module_time(self.chip, self.gemm_format("experts"),
                               self.moe_shape, self.lay.etp, self.lay.ep, self.tokens,
                               self.moe_backend)

    @property
    def moe_shape(self):
        """``(hidden, expert width, routed experts, experts per token)`` of the model."""
        m = self.m
        return (m.hidden, m.expert_ffn, m.routed_experts, m.experts_per_token)

    @property
    def b_dp(self):
        """Real sequences in the largest attention group (their KV cache is read)."""
        return math.ceil(self.batch / self.lay.dp)

    @property
    def t_kv(self):
        """Real tokens in the largest attention group: the attention scores' rows."""
        return self.b_dp * self.q

    @property
    def t_dp(self):
        """Tokens the largest attention group's graph runs through its GEMMs, collectives
        and routed experts: the real ones, or with ``graph_batch`` the padded ones."""
        return math.ceil(self.graph_batch / self.lay.dp) * self.q

    @property
    def tokens(self):
        """Tokens the whole step routes to the experts (padded rows included)."""
        return self.graph_batch * self.q

    @functools.cached_property
    def kernel_lists(self):
        """The kernel lists of this step (:func:`step_kernel_lists`), found once a step (read
        by the attention, MoE and dense blocks, the router, the held starts and the
        Parameters)."""
        return step_kernel_lists(self.m, self.chip, engine=self.engine,
                                 cuda_graphs=self.cuda_graphs, tp=self.lay.tp,
                                 tokens=self.t_dp)

    @property
    def dsa_fast_path(self):
        """True when TensorRT-LLM runs DeepSeek Sparse Attention's short-sequence fast path:
        ``engine="trtllm"``, a DSA model and at most ``index_topk`` tokens per sequence
        (``context + q``): no indexer logits, top-k or key read (:data:`DSA_INDEXER_KERNELS`)."""
        att = self.m.attention
        return (self.engine == "trtllm" and att.sparse
                and self.context + self.q <= att.index_topk)

    @property
    def per_kernel(self):
        """Seconds per kernel: graph-replay boundary (less the dispatch gap PDL hides) or host
        launch."""
        if not self.cuda_graphs:
            return self.launch_overhead
        return self.graph_kernel_overhead - (PDL_HIDDEN_GAP.value if self.pdl else 0.0)


def _settings(model, fabric, *, batch, context, layout, tokens_per_sequence, transport,
              algorithm, skew, overlap, fusion_factor, launch_overhead, hbm_efficiency,
              compute_efficiency, dispatch_bytes, combine_bytes, chip, collective, runtime,
              ep_kernel, cuda_graphs, graph_kernel_overhead, engine, min_kernel_time=0.0,
              moe_hbm_efficiency=None, kernel_floors=None,
              gemm_fixed_time=GEMM_FIXED_TIME.value, expert_balance=None, draft=False,
              pdl=False, graph_batch=None, nic_background=0.0, moe_backend="cutlass",
              trtllm_release=None):
    """Check every input of :func:`decode_step` (clear errors) and resolve the defaults."""
    m = model_config(model)
    check_choice(moe_backend, "moe_backend", MOE_BACKENDS)
    # read even where no collective is priced (tp=1): a wrong one is refused, not ignored
    algorithm = collective_algorithms(algorithm, names=collective is None)
    if trtllm_release is not None:
        trtllm_release = check_trtllm_release(trtllm_release, engine)
    draft = flag_of(draft, "draft")
    if draft:
        if not m.mtp_modules:
            raise SpecError(f"draft=True prices a multi-token-prediction module, but {m.name} "
                            f"has none (mtp_modules=0); a separate draft model's cost is "
                            f"serving's draft_cost=")
        m = _mtp_block(m)
    chip = fabric_chip(fabric, chip)
    batch = check_count(batch, "batch", 1)
    context = check_count(context, "context", 0)
    q = check_count(tokens_per_sequence, "tokens_per_sequence", 1)
    if isinstance(overlap, str) and overlap != TWO_BATCH:
        raise SpecError(f"overlap must be a fraction in [0, 1] or {TWO_BATCH!r}, "
                        f"got {show_value(overlap)}")
    overlap = (TWO_BATCH if isinstance(overlap, str)
               else check_fraction("overlap", overlap, 0.0, 1.0))
    # None: the published per-kernel streaming rates where a kernel has one, the default
    # fraction for every other read; a given fraction: every read at it
    published_rates = hbm_efficiency is None
    hbm_eff = (DECODE_HBM_EFFICIENCY.value if published_rates else
               check_fraction("hbm_efficiency", hbm_efficiency, 0.0, 1.0, lo_open=True))
    fl_eff = (None if compute_efficiency is None else
              check_fraction("compute_efficiency", compute_efficiency, 0.0, 1.0, lo_open=True))
    fusion_factor = check_number("fusion_factor", fusion_factor, 1)
    launch_overhead = check_number("launch_overhead", launch_overhead, 0, " seconds")
    min_kernel_time = check_number("min_kernel_time", min_kernel_time, 0, " seconds")
    gemm_fixed_time = check_number("gemm_fixed_time", gemm_fixed_time, 0, " seconds")
    graph_kernel_overhead = check_number("graph_kernel_overhead", graph_kernel_overhead, 0,
                                          " seconds")
    floors = _check_floors(kernel_floors)
    cuda_graphs = flag_of(cuda_graphs, "cuda_graphs")
    pdl = flag_of(pdl, "pdl")
    if pdl and not cuda_graphs:
        raise SpecError("pdl=True hides the dispatch gap between kernels of a replayed CUDA "
                        "graph; with cuda_graphs=False each kernel pays a host launch")
    padded = graph_batch is not None
    if not padded:
        graph_batch = batch
    else:
        graph_batch = check_count(graph_batch, "graph_batch", 1)
        if graph_batch < batch:
            raise SpecError(f"graph_batch={graph_batch} is smaller than batch={batch}: a padded "
                            f"graph holds at least the real sequences")
        if not cuda_graphs:
            raise SpecError("graph_batch pads the batch to a captured CUDA graph's size; with "
                            "cuda_graphs=False each kernel runs at the real batch")
    if pdl and graph_kernel_overhead < PDL_HIDDEN_GAP.value:
        raise SpecError(f"pdl=True takes the {PDL_HIDDEN_GAP.value * 1e6:.2f} us dispatch gap "
                        f"off each kernel boundary, but graph_kernel_overhead="
                        f"{graph_kernel_overhead!r} s is shorter")
    check_engine(engine)
    if moe_backend == "trtllm" and (engine != "trtllm" or chip.generation != "blackwell"):
        raise SpecError(f"moe_backend='trtllm' is TensorRT-LLM's trtllm-gen MoE, on Blackwell "
                        f"chips: got engine {engine!r} on {chip.name} ({chip.generation})")
    if moe_hbm_efficiency is not None:
        moe_eff = check_fraction("moe_hbm_efficiency", moe_hbm_efficiency, 0.0, 1.0,
                                  lo_open=True)
    elif cuda_graphs and engine == "vllm" and m.expert_format == "int4-g32":
        moe_eff = VLLM_INT4_MOE_HBM_EFFICIENCY.value
    else:
        moe_eff = None
    kern = exchange_kernel(ep_kernel) if ep_kernel is not None else None
    if overlap == TWO_BATCH and kern is None:
        raise SpecError(f"overlap={TWO_BATCH!r} schedules an exchange kernel's send and "
                        f"receive apart (ep_kernel=...); ep_kernel=None runs the exchange as "
                        f"one collective")
    if kern is not None and skew:
        raise SpecError(f"ep_kernel={kern.name!r} is costed under uniform routing; skew="
                        f"{skew} needs ep_kernel=None (the collectives model's all-to-allv)")
    transport = transport_arg(transport)
    lay = parse_layout(layout, fabric.n_endpoints)
    if expert_balance is not None:
        expert_balance = check_fraction("expert_balance", expert_balance, 0.0, 1.0,
                                         lo_open=True)
        if lay.etp > 1:
            raise SpecError(f"expert_balance is the balance of expert-parallel ranks; layout "
                            f"{lay} splits every expert over etp={lay.etp} ranks")
    att = m.attention
    if att.heads % lay.tp:
        raise SpecError(f"layout: tp={lay.tp} does not divide the {att.heads} attention heads "
                        f"of {m.name}")
    if lay.ep > m.routed_experts:
        raise SpecError(f"layout: ep={lay.ep} expert ranks but {m.name} has only "
                        f"{m.routed_experts} routed experts")
    for name, b in (("dispatch_bytes", dispatch_bytes), ("combine_bytes", combine_bytes)):
        if b is not None:
            check_number(name, b, 0, " bytes", strict=True)
    gathers = trtllm_gathers(m, chip, lay, engine, ep_kernel)
    dispatch_b = ((trtllm_gather_element_bytes(m, chip) if gathers else m.activation_bytes)
                  if dispatch_bytes is None else float(dispatch_bytes))
    combine_b = m.activation_bytes if combine_bytes is None else float(combine_bytes)
    if padded:          # a real batch is bounded first by the memory fit (its KV cache)
        _check_graph_bytes(m, lay, graph_batch, q, dispatch_b, combine_b)
    # an exchange kernel's routing model needs the same ranks in every domain it spans
    equal = kern is not None and lay.exchanges
    nic_background = check_background(nic_background)
    if nic_background > 0 and lay.exchanges and (
            kern is None or kern.dedup == "collective"):
        raise SpecError("nic_background is priced on an exchange kernel's network stage; "
                        "the experts' exchange runs through the collectives model, which has "
                        "no background traffic (give ep_kernel, e.g. 'deepep-low-latency')")
    return _Settings(m, fabric, chip, batch, context, q, lay, transport, algorithm, skew,
                     overlap, fusion_factor, launch_overhead, hbm_eff, fl_eff, dispatch_b,
                     combine_b, (check_collective(collective) or _engine_rule(
                         engine, chip, runtime, algorithm, fabric)),
                     runtime, kern, cuda_graphs,
                     graph_kernel_overhead, engine, float(min_kernel_time), moe_eff, floors,
                     float(gemm_fixed_time), expert_balance, draft,
                     instance_chips(fabric, lay.chips, equal_domains=equal, tp=lay.tp), equal,
                     pdl, graph_batch, nic_background, kernel_floors is None,
                     published_rates, gathers, moe_backend, trtllm_release)


def check_engine(engine, none_ok=False):
    """``engine`` if it names an engine of :data:`ENGINE_KERNELS` (or is None, with
    ``none_ok``): the one engine check of the decode and serving models, by
    :func:`fabric._units.check_choice` (a name of the wrong kind, a list, is a TypeError;
    another name a SpecError listing the engines).

    >>> check_engine("vllm")
    'vllm'
    >>> check_engine("tgi")
    Traceback (most recent call last):
    ...
    fabric.SpecError: engine must be one of sglang, trtllm, vllm, got 'tgi'
    """
    return check_choice(engine, "engine", frozenset(ENGINE_KERNELS), optional=none_ok)


def check_trtllm_release(release, engine):
    """``decode_step``'s ``trtllm_release`` checked (:func:`trtllm_release`): TensorRT-LLM's,
    so only under ``engine="trtllm"``."""
    if engine != "trtllm":
        raise SpecError(f"trtllm_release={show_value(release)} is a TensorRT-LLM release; "
                        f"engine is {show_value(engine)}")
    return trtllm_release(release)


def _check_graph_bytes(m, lay, graph_batch, q, dispatch_b, combine_b):
    """Refuse a (padded) step whose collectives the model cannot carry: its TP all-reduce
    (one attention group's activations) or its expert exchange (at most ``tokens x
    min(k, ep - 1) x hidden`` elements leave their ranks) above :data:`fabric._schema.MAX_BYTES`.
    A real batch is bounded by the memory fit (each sequence holds KV cache); the padded
    rows of ``graph_batch`` hold none, and neither engine puts a fixed bound on a captured graph's
    batch (vLLM keeps only capture sizes <= its ``max_num_batched_tokens``, a setting:
    ``vllm/config/vllm.py``; TensorRT-LLM's ``CudaGraphConfig.max_batch_size`` is any
    non-negative int), so this is the bound."""
    tokens = graph_batch * q
    sizes = [("TP all-reduce", -(-graph_batch // lay.dp) * q * m.hidden * m.activation_bytes)]
    if lay.exchanges:
        sizes.append(("expert exchange", tokens * min(m.experts_per_token, lay.ep - 1)
                      * m.hidden * max(dispatch_b, combine_b)))
    what, size = max(sizes, key=lambda x: x[1])
    if size > MAX_BYTES:
        raise SpecError(f"graph_batch={graph_batch} x tokens_per_sequence={q} = {tokens} tokens "
                        f"in one step: its {what} would move {size:.3g} bytes, more than the "
                        f"2**63 - 1 bytes (an int64) a collective carries")


def fabric_chip(fabric, chip=None):
    """The chip a decode step or a serving computation runs on (a ``fabric.ChipSpec``):
    ``chip`` (a name or spec), else the fabric's; one clear error when neither names one.

    >>> import topologies
    >>> fabric_chip(topologies.build("mesh:2"), "h100").name
    'h100'
    >>> fabric_chip(topologies.build("mesh:2"))
    Traceback (most recent call last):
    ...
    fabric.SpecError: fabric 'mesh:2' names no chip; pass chip=... (or chip=NAME in the topology spec, e.g. mesh:2,chip=b200)
    """
    fabric = fabric_arg(fabric)         # the serving entry points' one fabric reader
    if chip is None and fabric.chip is None:
        raise SpecError(f"fabric {fabric.name!r} names no chip; pass chip=... (or chip=NAME "
                        f"in the topology spec, e.g. {fabric.name},chip=b200)")
    return chip_spec(chip if chip is not None else fabric.chip)


def _mtp_block(m):
    """The model of one multi-token-prediction draft step: one MoE block of ``m`` (its MTP
    module, DeepSeek-V3 report sec. 2.2) before the shared head; in the main model's formats,
    or all in ``m.mtp_format`` when the checkpoint keeps its MTP layers apart (NVIDIA's R1
    NVFP4: BF16)."""
    if m.mtp_format is not None:
        fmt = WEIGHT_FORMATS[m.mtp_format]
        m = dataclasses.replace(m, weight_bytes=fmt.bytes_per_weight, weight_format=fmt.name,
                                ffn_format=None, ffn_weight_bytes=None, expert_format=fmt.name,
                                expert_weight_bytes=None)
    return dataclasses.replace(m, name=f"{m.name}-mtp", layers=1, dense_layers=0)


def _check_floors(kernel_floors):
    """``kernel_floors`` as sorted (class, seconds beyond an empty kernel) pairs."""
    if kernel_floors is None:
        kernel_floors = {k: p.value for k, p in KERNEL_FLOORS.items()}
    if not hasattr(kernel_floors, "items"):     # a wrong kind (STYLE's rule; session 33)
        raise kind_error(kernel_floors, "kernel_floors",
                         "a mapping of kernel class to seconds or None")
    classes = set(KERNEL_CLASSES.values())
    out = []
    for cls, val in sorted(kernel_floors.items()):
        if cls not in classes:
            raise SpecError(f"kernel_floors: unknown kernel class {show_value(cls)}; classes: "
                            f"{sorted(classes)}")
        check_number(f"kernel_floors[{show_value(cls)}]", val, 0, " seconds")
        extra = max(0.0, float(val) - EMPTY_KERNEL_TIME.value)
        if extra > 0:
            out.append((cls, extra))
    return tuple(out)


@dataclass(frozen=True)
class _Memory:
    """Bytes on the fullest chip: weights, KV cache of one layer and of all layers (what is
    stored), and what one layer's attention kernel reads of it (``kv_read_layer_chip``:
    everything, or under DeepSeek Sparse Attention the selected tokens' latents) and its DSA
    indexer reads (``index_read_layer_chip``: every cached indexer key; 0 without DSA)."""

    weights_chip: float
    kv_layer_chip: float
    kv_chip: float
    kv_read_layer_chip: float = None
    index_read_layer_chip: float = 0.0

    def __post_init__(self):
        if self.kv_read_layer_chip is None:
            object.__setattr__(self, "kv_read_layer_chip", self.kv_layer_chip)


def _shared_split(lay):
    """Ways each shared expert is split: ``etp`` (1 under expert parallelism, the ``tp``
    chips under plain or mixed expert tensor parallelism, where it is a dense FFN)."""
    return lay.tp if lay.etp > 1 else 1


def _memory_fit(s):
    """What the fullest chip holds; raises SpecError when the model does not fit."""
    m, chip, lay = s.m, s.chip, s.lay
    tp, ep, etp = lay.tp, lay.ep, lay.etp
    wb = m.weight_bytes
    n = lay.chips
    system_hbm = n * chip.hbm_bytes
    if m.weight_bytes_total > system_hbm:
        raise SpecError(f"{m.name}: weights need {m.weight_bytes_total / 1e9:.1f} GB but the "
                        f"{n} chips used have {system_hbm / 1e9:.1f} GB of HBM "
                        f"({chip.name}: {chip.hbm_bytes / 1e9:.1f} GB each)")
    experts_chip_max = math.ceil(m.routed_experts / ep)
    b_dp = s.b_dp
    if m.ffn_bytes_per_weight == wb:   # one format for all but the routed experts
        weights_chip = wb * (m.layers * (m.attention_params_per_rank(tp) - m.attention_params / tp)
                             + (m.layers * m.attention_params + m.dense_layers * m.dense_ffn_params
                                + m.embedding_params + m.head_params) / tp
                             + m.moe_layers * (m.router_params + m.shared_experts
                                               * m.expert_params / _shared_split(lay))
                             ) + m.moe_layers * experts_chip_max * m.routed_expert_bytes / etp
    else:
        weights_chip = (wb * (m.layers * (m.attention_params_per_rank(tp)
                                          - m.attention_params / tp)
                              + (m.layers * m.attention_params + m.embedding_params
                                 + m.head_params) / tp + m.moe_layers * m.router_params)
                        + m.dense_layers * m.dense_ffn_bytes / tp
                        + m.moe_layers * (m.shared_experts * m.shared_expert_bytes
                                          / _shared_split(lay)
                                          + experts_chip_max * m.routed_expert_bytes / etp))
    ub = m.part_bytes("router")     # the router gates, head and embedding: 16 bits, counted
    if ub != wb:                    # at weight_bytes above
        weights_chip += (ub - wb) * ((m.embedding_params + m.head_params) / tp
                                     + m.moe_layers * m.router_params)
    att = m.attention
    kv_layer_chip = (b_dp * (s.context + s.q) * att.kv_elements_per_token * m.kv_cache_bytes
                     / att.kv_shards(tp))
    kv_read = index_read = None
    if att.sparse:      # DSA: the cache keeps every token; the kernel reads the selected ones
        kv_read = (b_dp * att.kv_read_tokens(s.context, s.q) * att.kv_elements_per_token
                   * m.kv_cache_bytes / att.kv_shards(tp))
        index_read = b_dp * (s.context + s.q) * att.index_key_bytes_per_token
        kv_layer_chip += index_read     # every key stored
        if s.dsa_fast_path:             # ... but none read (TensorRT-LLM's fast path)
            index_read = 0.0
    kv_chip = m.layers * kv_layer_chip
    if weights_chip + kv_chip > chip.hbm_bytes:
        raise SpecError(
            f"{m.name} with layout {lay}: a chip needs {(weights_chip + kv_chip) / 1e9:.1f} GB "
            f"(weights {weights_chip / 1e9:.1f} GB incl. {experts_chip_max} experts per MoE "
            f"layer, KV cache {kv_chip / 1e9:.1f} GB for {b_dp} sequences x {s.context} "
            f"tokens) but {chip.name} has {chip.hbm_bytes / 1e9:.1f} GB")
    if att.sparse:
        return _Memory(weights_chip=weights_chip, kv_layer_chip=kv_layer_chip, kv_chip=kv_chip,
                       kv_read_layer_chip=kv_read, index_read_layer_chip=index_read)
    return _Memory(weights_chip=weights_chip, kv_layer_chip=kv_layer_chip, kv_chip=kv_chip)


@dataclass(frozen=True)
class _Routing:
    """Where the step's tokens go: pick and active probabilities per expert, each
    expert's chip, the token-expert pairs per chip, and the expected traffic matrix."""

    pick: np.ndarray
    active: np.ndarray
    owner: np.ndarray
    load_chip: np.ndarray
    traffic: np.ndarray


def _routing(s):
    """Routed experts under round-robin placement (see the module docstring)."""
    m, lay = s.m, s.lay
    ep, n = lay.ep, lay.chips
    tokens = s.tokens
    pick, active = expert_activation(m.routed_experts, m.experts_per_token, tokens, s.skew)
    owner = np.arange(m.routed_experts) % ep
    load_chip = tokens * np.bincount(owner, weights=pick, minlength=ep)   # token-expert pairs
    # Expected traffic: each chip dispatches tokens / n tokens; a token goes once to each
    # remote chip hosting one of its experts, chip j with probability
    # hit_j = 1 - prod_{e on j} (1 - pick_e) (picks taken as independent).
    hit = 1.0 - np.exp(np.bincount(owner, weights=np.log1p(-np.minimum(pick, 1 - 1e-15)),
                                   minlength=ep))
    traffic = np.tile((tokens / n) * hit * m.hidden, (ep, 1))
    np.fill_diagonal(traffic, 0.0)
    return _Routing(pick=pick, active=active, owner=owner, load_chip=load_chip, traffic=traffic)


def _busiest_pairs(s, route):
    """Token-expert pairs the busiest expert rank computes: the routing's expected maximum
    over the ranks under round-robin placement, or, given ``expert_balance`` (EPLB's
    balancedness, mean over maximum), the mean over the ranks divided by it."""
    if s.balance is None:
        return float(route.load_chip.max())
    return float(route.load_chip.sum()) / s.lay.ep / s.balance


@dataclass(frozen=True)
class _Communication:
    """Seconds of one tensor-parallel all-reduce, of dispatch and of combine, and the
    exchange kernel's result when one was used."""

    allreduce: float
    dispatch: float
    combine: float
    exchange: object


def collective_seconds(fabric, op, nbytes, positions, *, collective=None, algorithm="auto",
                       transport=None, runtime=None):
    """Seconds of one collective among the chips at layout ``positions`` of ``fabric``.

    The one place decode steps and prefills cost a collective. ``positions`` index the
    live chips, ``fabric.endpoints`` (a layout's ``tp x dp`` chips are its first
    positions); on a degraded fabric they are mapped to those chips, not to the stable
    ranks (which skip nothing: rank 3 of a fabric without ``chip3`` has failed). Fewer
    than two positions or no bytes cost nothing. The chips must reach each other pairwise
    (a one-shot all-reduce reads every peer; an all-to-all sends to every rank): on a
    degraded fabric two that no route joins raise RoutingError naming them and what failed.

    Parameters
    ----------
    fabric : fabric.Fabric
    op : str
        ``"all-reduce"``, ``"all-to-all"``, ``"all-to-allv"`` ...
    nbytes : float or array
        As ``analysis.cost`` takes it (an all-to-allv's per-pair matrix).
    positions : sequence of int
        Positions in ``fabric.endpoints``.
    collective : callable, optional
        ``collective(fabric, op, nbytes, algorithm=, ranks=, transport=[, runtime=])``
        returning an object with ``.time``; default ``analysis.cost``.
    algorithm : str or dict
        An algorithm, or a mapping from operation names to one (``"auto"`` for the rest;
        :func:`collective_algorithms` reads its keys).
    transport, runtime : optional
        Passed on (``runtime`` only when given).

    Examples
    --------
    >>> import topologies
    >>> f = topologies.build("switch:8,chip=b200").without(chips=["chip3"])
    >>> t = collective_seconds(f, "all-reduce", 1 << 20, range(4), runtime="ideal")
    >>> t > 0, collective_seconds(f, "all-reduce", 1 << 20, [0]) == 0.0
    (True, True)
    """
    if isinstance(algorithm, Mapping):  # its keys the canonical names
        algorithm = collective_algorithms(algorithm, names=False)
    return _collective_seconds(fabric, op, nbytes, positions, collective, algorithm, transport,
                               runtime)


def _collective_seconds(fabric, op, nbytes, positions, collective, algorithm, transport,
                        runtime):
    """:func:`collective_seconds` with ``algorithm`` already read (a step's settings)."""
    size = float(np.sum(nbytes))
    if len(positions) < 2 or size <= 0:
        return 0.0
    if size < 1:        # analysis.cost's ValueError, which a CLI would report as a bug
        raise SpecError(f"{op} of {size:.3g} bytes: a collective moves whole bytes, and the "
                        f"bytes per element (the model's activation_bytes, or dispatch_bytes / "
                        f"combine_bytes) make a message of less than one")
    _check_reach(fabric, positions)
    algo = algorithm.get(op, "auto") if isinstance(algorithm, dict) else algorithm
    extra = {} if runtime is None else {"runtime": runtime}
    chips = [fabric.endpoints[i] for i in positions]
    scalar = not np.ndim(nbytes)
    key = _collective_key(collective, op, float(nbytes) if scalar else None, chips, algo,
                          transport, runtime)
    memo = fabric_memo(fabric, __name__).setdefault("collective_seconds", {})
    got = memo.get(key) if key is not None else None
    if got is None:
        res = (collective or _default_collective)(
            fabric, op, float(nbytes) if scalar else nbytes, algorithm=algo, ranks=chips,
            transport=transport, **extra)
        got = float(res.time)
        if key is not None:
            memo[key] = got
    return got


def _collective_key(collective, op, nbytes, chips, algorithm, transport, runtime):
    """The key of :func:`collective_seconds`' per-fabric memo, or None where it keeps
    nothing: the same default cost function (``analysis.cost`` as it is now: a test may
    stand in another), operation, scalar size, chips, and ``algorithm``, ``transport`` and
    ``runtime`` given as names or None. A :class:`fabric.Runtime` or transport object is not
    a key (a Runtime compares by name alone, and a changed copy keeps the name), nor is a
    caller's own ``collective`` (it may count its calls; :func:`engine_collective`'s default
    is ``_default_collective``, which is ``analysis.cost``) or a traffic matrix."""
    if collective not in (None, _default_collective) or nbytes is None or not all(
            v is None or isinstance(v, str) for v in (algorithm, transport, runtime)):
        return None
    import analysis

    return (getattr(analysis, "cost", None), op, nbytes, tuple(chips), algorithm, transport,
            runtime)


def _switched_domains(fabric):
    """The load/store domains in which any two chips are interchangeable, as ``{label:
    signature}`` (the bandwidths and latencies of a chip's links to its switches): no chip of
    the domain has a chip as a neighbour (a switched domain, not a mesh, torus or
    hyper-mesh), and every chip has the same switches as neighbours over links of the same
    bandwidths and latencies (NICs aside: one each). A collective on ``k`` chips of such a
    domain costs the same whichever ``k`` it is; in a direct topology chips a row apart are
    several hops apart, so there it depends on the chips."""
    memo = fabric_memo(fabric, __name__)
    got = memo.get("switched")
    if got is not None:
        return got
    G, label, index = fabric.graph, fabric.loadstore_domains, fabric.node_index
    signatures = {}
    for chip in fabric.endpoints:
        dom = int(label[index[chip]])
        sig = []
        for nb in G.neighbors(chip):
            kind = G.nodes[nb].get("kind")
            if kind == "chip":
                sig = None
                break
            if kind == "switch":
                e = G.edges[chip, nb]
                sig.append((nb, e.get("bandwidth"), e.get("latency")))
        sig = None if sig is None else tuple(sorted(sig, key=repr))
        signatures.setdefault(dom, set()).add(sig)
    # label -> the domain's links to its switches without the switches' names: domains of
    # one such signature and size are alike
    got = {d: tuple(sorted((bw, lat) for _, bw, lat in next(iter(sigs))))
           for d, sigs in signatures.items() if len(sigs) == 1 and None not in sigs}
    memo["switched"] = got
    return got


def slowest_group_seconds(fabric, op, nbytes, positions, size, **kwargs):
    """Seconds of the slowest of the collectives the groups of ``size`` consecutive
    ``positions`` (an instance's attention groups) each run on their own, as
    :func:`collective_seconds`: the groups step together, so the step waits for the
    slowest (one that straddles two load/store domains, holds a chip with failed links, or,
    in a direct topology, has chips several hops apart).

    On a degraded fabric every group is costed. On an intact one, the groups that lie
    inside one switched load/store domain (:func:`_switched_domains`: its chips are
    interchangeable) are costed once per kind of domain (its size and its switch links);
    every other group (in a mesh, torus or hyper-mesh, or across domains) is costed on its
    own chips.

    >>> import topologies
    >>> f = topologies.build("switch:8,planes=2,chip=b200")
    >>> g = f.without(links=[("chip5", "sw0")])       # chip5 keeps one of its two planes
    >>> one = collective_seconds(f, "all-reduce", 1 << 20, range(4), runtime="ideal")
    >>> slowest_group_seconds(f, "all-reduce", 1 << 20, range(8), 4, runtime="ideal") == one
    True
    >>> slowest_group_seconds(g, "all-reduce", 1 << 20, range(8), 4, runtime="ideal") > one
    True

    ``positions`` must be non-empty and a whole number of groups of ``size`` (SpecError).
    """
    positions = tuple(positions)
    size = check_count(size, "size", 1)
    if not positions or len(positions) % size:
        raise SpecError(f"slowest_group_seconds: {len(positions)} positions are not a whole, "
                        f"non-zero number of groups of {size}")
    groups = [positions[i:i + size] for i in range(0, len(positions), size)]
    if not fabric.failures.degraded and len(groups) > 1:
        label, index, ends = fabric.loadstore_domains, fabric.node_index, fabric.endpoints
        where = [int(label[index[n]]) for n in ends]
        sizes = collections.Counter(where)
        switched = _switched_domains(fabric)
        kept = {}
        for grp in groups:
            doms = {where[p] for p in grp}
            d = next(iter(doms))
            key = ((sizes[d], switched[d]) if len(doms) == 1 and d in switched
                   else grp)                      # costed on its own chips
            kept.setdefault(key, grp)
        groups = list(kept.values())
    return max(collective_seconds(fabric, op, nbytes, grp, **kwargs) for grp in groups)


def _collective_time(s, op, nbytes, ranks):
    """One collective of a step's settings ``s`` (:func:`collective_seconds`), seconds."""
    return _collective_seconds(s.fabric, op, nbytes, ranks, s.collective, s.algorithm,
                               s.transport, s.runtime)


def _slowest_tp_allreduce(s, nbytes):
    """Seconds of the step's tensor-parallel all-reduce: the slowest of the instance's TP
    groups (each ``tp`` consecutive chips of ``s.pos``; the ranks step together), by
    :func:`slowest_group_seconds` (every group on a degraded fabric: a chip that lost some
    of its links slows its own group only)."""
    return slowest_group_seconds(s.fabric, _ALL_REDUCE, nbytes, s.pos, s.lay.tp,
                                  collective=s.collective, algorithm=s.algorithm,
                                  transport=s.transport, runtime=s.runtime)


def _communication(s, route):
    """The step's collectives on the fabric: TP all-reduce, expert dispatch and combine."""
    m, lay, kern = s.m, s.lay, s.kern
    ep = lay.ep
    t_allreduce = _slowest_tp_allreduce(s, _tp_bytes(s))
    traffic = route.traffic
    exchange = None
    if lay.etp > 1:
        # tensor-parallel attention leaves every token on every chip: each chip runs its
        # experts' slices for all of them, the MoE output is all-reduced (no exchange)
        t_dispatch = t_combine = 0.0
    elif kern is not None and ep > 1:
        from ._moe_exchange import moe_exchange
        ranks = [s.fabric.endpoints[i] for i in s.pos[:ep]]
        # each EP rank sends its own tokens (0: it holds none), in the instance's rank order
        held = _rank_tokens(s.graph_batch, s.q, lay.dp, lay.tp)
        exchange = moe_exchange(s.fabric, m, held, ranks, kernel=kern,
                                dispatch_bytes=s.dispatch_b, combine_bytes=s.combine_b,
                                # a kernel picks its own paths; only the collective takes one
                                transport=s.transport if kern.dedup == "collective" else None,
                                runtime=s.runtime, chip=s.chip,
                                collective=s.collective,
                                # the step charges the boundaries (_held_starts)
                                kernel_gap=0.0, nic_background=s.nic_background)
        t_dispatch, t_combine = exchange.dispatch, exchange.combine
    elif kern is not None:
        t_dispatch = t_combine = 0.0
    elif s.gathers:
        # TensorRT-LLM's attention DP without its MNNVL all-to-all: every rank gathers every
        # rank's tokens and routing, runs its own experts on all of them, and the outputs are
        # reduce-scattered back (whatever the routing: skew moves no byte of it)
        t_dispatch, t_combine = gather_exchange_seconds(
            s.fabric, m, s.t_dp, s.pos[:ep], s.dispatch_b, s.combine_b,
            collective=s.collective, algorithm=s.algorithm, transport=s.transport,
            runtime=s.runtime)
    elif s.skew == 0:
        # Uniform routing makes the matrix uniform off the diagonal: exactly an
        # all-to-all whose per-rank buffer (own block included) is ep blocks. Costing it
        # as one lets the collectives model use every all-to-all algorithm
        # (hierarchical, Bruck, ...), which it offers for all-to-allv only in part.
        block = float(traffic[0, 1]) if ep > 1 else 0.0
        t_dispatch = _collective_time(s, _ALL_TO_ALL, ep * block * s.dispatch_b, s.pos[:ep])
        t_combine = _collective_time(s, _ALL_TO_ALL, ep * block * s.combine_b, s.pos[:ep])
    else:
        t_dispatch = _collective_time(s, _ALL_TO_ALLV, traffic * s.dispatch_b, s.pos[:ep])
        t_combine = _collective_time(s, _ALL_TO_ALLV, traffic.T * s.combine_b, s.pos[:ep])
    return _Communication(allreduce=t_allreduce, dispatch=t_dispatch, combine=t_combine,
                          exchange=exchange)


def _rank_tokens(batch, tokens_per_sequence, dp, tp):
    """Tokens each EP rank holds for the exchange, in the instance's rank order: the
    ``batch`` sequences spread over the ``dp`` attention groups as evenly as they go (the
    first groups one more), each group's ``sequences x tokens_per_sequence`` tokens over its
    ``tp`` ranks the same way (each token is sent by one rank of its group).

    >>> _rank_tokens(1, 1, 8, 1), _rank_tokens(3, 1, 2, 4)
    ([1, 0, 0, 0, 0, 0, 0, 0], [1, 1, 0, 0, 1, 0, 0, 0])
    >>> _rank_tokens(1, 4, 4, 2)     # one sequence, 3 drafts: its group's two ranks, 2 each
    [2, 2, 0, 0, 0, 0, 0, 0]
    """
    out = []
    for g in range(dp):
        t = (batch // dp + (g < batch % dp)) * tokens_per_sequence
        out += [t // tp + (j < t % tp) for j in range(tp)]
    return out


def _moe_kernels(s):
    """Kernel names of one MoE FFN block (the exchange's own kernels included)."""
    moe_list = [k for k in s.kernel_lists["moe_ffn"] if k not in ("dispatch", "combine")]
    if s.lay.exchanges:   # the exchange's kernels (one each for the collective)
        moe_list += ["exchange"] * (sum(s.kern.kernels) if s.kern is not None else 2)
        if s.overlap == TWO_BATCH:          # each phase's receive is its own launch
            moe_list += ["exchange"] * 2
    return moe_list


#: TensorRT-LLM's fused all-reduce kernels (:data:`GRAPH_KERNELS`), by the block whose
#: all-reduce they run: the attention output's (``allreduce_add_rmsnorm_quant``), the dense
#: FFN's (``allreduce_add_rmsnorm``) and the MoE output's (``reduce_allreduce_add_rmsnorm``).
#: The step prices each of those all-reduces with the collectives model and counts the kernel
#: as a norm (its norm floor, the norm's latency chain beyond an empty kernel, stays).
FUSED_ALLREDUCE_KERNELS = frozenset(("allreduce_add_rmsnorm_quant", "allreduce_add_rmsnorm",
                                     "reduce_allreduce_add_rmsnorm"))


def collective_holds_starts(collective=None, runtime=None):
    """True when collectives priced with ``collective`` under ``runtime`` (as
    :func:`collective_seconds` takes them) hold each collective kernel's GPU-side start in
    their cost (:attr:`fabric.Runtime.host_launch`): :func:`analysis.cost` (``collective``
    None, the default) under NCCL (its base latency) or the ``symmetric-memory`` runtime (its
    ``kernel_floor``, NCCL issue 1940's per-op loop time), not ``"ideal"`` (the model's
    schedules, no software cost); or vLLM's dispatch (:func:`analysis.vllm_all_reduce`,
    :func:`engine_collective`), which prices its kernels under those two runtimes whatever
    runtime is asked; or TensorRT-LLM's measured all-reduce
    (:func:`analysis.trtllm_all_reduce`: each op timed with its graph boundary, the rest
    through :func:`analysis.cost` at its default runtime). A caller's own ``collective`` function is not known to hold the start:
    its kernels keep their boundaries. The one test behind :func:`_held_starts` (decode
    steps, their two-batch windows) and :func:`analysis.prefill_time` (prompt passes)."""
    from ._engine_allreduce import engine_all_reduce_label
    if engine_all_reduce_label(collective) is not None:
        return True
    if collective is not None and collective is not _default_collective:
        return False
    from fabric import runtime as get_runtime
    return get_runtime(default_runtime() if runtime is None else runtime).kind != "ideal"


def _runtime_holds_starts(s):
    """:func:`collective_holds_starts` of the step's collectives."""
    return collective_holds_starts(s.collective, s.runtime)


def _held_mask(s, names, block):
    """Per kernel of ``names`` (one block of a layer: ``"attention"``, ``"dense"`` or
    ``"moe"``), whether its GPU-side start the step's pricing of its work already holds:
    TensorRT-LLM's fused all-reduce kernels (:data:`FUSED_ALLREDUCE_KERNELS`) whose all-reduce
    the step prices (attention and dense FFN: ``tp > 1``; MoE: ``etp > 1``) under a runtime
    that holds the start (:func:`_runtime_holds_starts`), in a replayed graph. The exchange's
    phases are counted apart (:func:`_held_starts`). The same mask prices the stream
    (:func:`_layer_times`) and the two-batch windows (:func:`_two_batch_windows`)."""
    split = s.lay.etp if block == "moe" else s.lay.tp
    held = s.cuda_graphs and split > 1 and _runtime_holds_starts(s)
    if block == "moe":
        module = _moe_measured_mask(s, names)
    elif block == "attention":
        module = _attention_measured_mask(s, names)
    else:
        module = (False,) * len(names)
    return tuple((held and n in FUSED_ALLREDUCE_KERNELS) or m
                 for n, m in zip(names, module, strict=True))


def _moe_measured_mask(s, names):
    """Per kernel of a MoE block's ``names``, whether a measured time of TensorRT-LLM's holds it
    whole (priced once: no floor, fixed part or boundary of its own): the MoE module's
    kernels where the step takes the module's time (:func:`_measured_moe_module`,
    :func:`_moe_module_mask`) and the router gate GEMM where it takes its measured ``Linear``
    (:meth:`_Settings.router_measured`). The one rule of the stream (:func:`_layer_times`,
    :func:`_held_mask`) and the two-batch windows."""
    module = (_moe_module_mask(names) if _measured_moe_module(s)
              else (False,) * len(names))
    router = s.router_measured is not None
    return tuple(m or (router and n == "router_gemm")
                 for n, m in zip(names, module, strict=True))


def _measured_moe_module(s):
    """True when the step prices its routed experts at a measured time of TensorRT-LLM's whole
    MoE module (:func:`analysis.grouped_gemm_rate`: ``engine="trtllm"`` in a replayed graph,
    the chip and the experts' format in :data:`analysis.GROUPED_GEMM_TIME_BY_ROWS`, at least
    its first row per group, no user ``compute_efficiency``): the module's own kernels
    (:data:`TRTLLM_MOE_MODULE_KERNELS`) then add nothing beyond that time."""
    if s.moe_module is not None:        # measured at the step's own layout and tokens
        return True
    if (not s.m.moe_layers
            or (s.chip.name, s.gemm_format("experts")) not in GROUPED_GEMM_TIME_BY_ROWS):
        return False
    busiest = s.busiest_active
    return busiest > 0 and s.moe_module_rate(_busiest_pairs(s, s.routing) / busiest) is not None


def _held_starts(s, kind):
    """Kernels of one layer of ``kind`` (``"dense"`` or ``"moe"``) whose GPU-side start the
    step's pricing of their work already holds, so that a replayed graph charges them no
    boundary of their own (one rule, session 15; the kernel count is unchanged):

    * each phase of an ``ep_kernel`` exchange (:func:`analysis.moe_exchange`) whose fixed part
      opens with a synchronisation (:attr:`fabric.ExchangeKernel.syncs`; every kernel but
      ``all-to-allv``): that first handshake is the ``symmetric-memory`` runtime's
      ``kernel_floor`` inside one load/store domain or :data:`fabric.EXCHANGE_SYNC` (NCCL's LL
      base latency) across the network, both holding the kernel's start
      (:attr:`fabric.Runtime.host_launch`); a stand-alone :func:`analysis.moe_exchange` charges
      ``n - 1`` gaps per phase of ``n`` kernels for that reason;
    * each phase of the collective exchange (``ep_kernel`` None or ``"all-to-allv"``: one
      collective kernel per phase) and each of TensorRT-LLM's fused all-reduce kernels
      (:data:`FUSED_ALLREDUCE_KERNELS`) whose all-reduce the step prices (attention and dense
      FFN: ``tp > 1``; MoE: ``etp > 1``), when the collectives are priced under a runtime that
      holds the start (:func:`_runtime_holds_starts`).

    0 for an eager step (a host launch is the call and the start; the start's share has no
    source). Two-batch receive launches (:data:`TWO_BATCH`) keep their boundaries: each is a
    launch of its own after the handshake."""
    if not s.cuda_graphs:
        return 0
    lay, kern = s.lay, s.kern
    held = sum(_held_mask(s, _attention_names(s), "attention"))   # the attention output's
    if kind == "dense":
        return held + sum(_held_mask(s, s.kernel_lists["dense_ffn"], "dense"))
    held += sum(_held_mask(s, s.kernel_lists["moe_ffn"], "moe"))  # the MoE output's
    if lay.exchanges:                           # the exchange's phases
        if kern is not None and kern.dedup != "collective":
            held += sum(1 for n_sync, n_kern in zip(kern.syncs, kern.kernels, strict=True)
                        if n_sync > 0 and n_kern > 0)
        elif _runtime_holds_starts(s):
            held += 2                            # one collective kernel per phase
    return held


def _attention_names(s):
    """Kernel names of one attention block (without :data:`DSA_FAST_PATH_SKIPS` on
    TensorRT-LLM's short-sequence fast path, :attr:`_Settings.dsa_fast_path`)."""
    kind = s.m.attention.kind
    names = list(s.kernel_lists.get(kind, KERNELS[kind]))
    if s.dsa_fast_path:
        names = [n for n in names if n not in DSA_FAST_PATH_SKIPS]
    return names


def _attention_kernels(s):
    """Kernels of one attention block."""
    return len(_attention_names(s))


def _block_time(s, names, roofline):
    """Seconds the kernels ``names`` of one block run (boundaries aside), and the part of it
    their minimum durations add: the heavy kernels (:data:`_HEAVY`) share the block's
    ``roofline`` evenly (for any other split the per-kernel sum is larger or equal), the
    small ones move no counted bytes, each kernel runs at least its floor beyond the
    boundary and a GEMM its fixed part on top of its share, ``sum_i max(r_i + fixed_i,
    extra_i) = roofline + sum_i (fixed_i + max(0, extra_i - r_i - fixed_i))``; fused kernels
    (``fusion_factor``) take their floors and fixed parts with them. Used for the output
    head only (its GEMMs have one roofline each: the LM head, and a draft's MTP projection
    at the same weights-to-FLOPs ratio); the attention and FFN blocks are priced kernel by
    kernel (:func:`_kernels_block_time`)."""
    heavy = sum(KERNEL_CLASSES[n] in _HEAVY for n in names)
    share = roofline / heavy if heavy else 0.0
    floor = sum(_kernel_overhead(s, n, share if KERNEL_CLASSES[n] in _HEAVY else 0.0)
                for n in names) / s.fusion_factor
    return roofline + floor, floor


def _kernels_block_time(s, names, rooflines, roofline, floors=None):
    """Seconds the kernels ``names`` of one block run one after another (boundaries aside),
    each at its own roofline ``rooflines[i]`` with its fixed part and floor
    (:func:`_kernel_overhead`), and the part of it those overheads add: ``(roofline +
    overheads, overheads)``, where ``roofline`` is the block's, ``sum_i rooflines[i]`` plus
    any roofline time no kernel of the list carries (the attention norms' weights, read by no
    GEMM), summed by the caller so that it is exact per group. The one place a block's
    kernels are priced: the stream (:func:`_layer_times`) and the two-batch windows
    (:func:`_two_batch_windows`) take the same per-kernel times, so a faster kernel never
    lengthens a step (review S11-R6). ``floors``: each kernel's own floor beyond its boundary
    (:func:`_kernel_overhead`; None: none)."""
    floors = floors or [0.0] * len(names)
    floor = sum(_kernel_overhead(s, n, r, f)
                for n, r, f in zip(names, rooflines, floors, strict=True))
    floor /= s.fusion_factor
    return roofline + floor, floor


def _kernel_overhead(s, name, roofline, floor=0.0):
    """Seconds kernel ``name`` adds beyond its ``roofline`` share: its fixed part, and what
    its minimum duration still lacks after roofline and fixed part,
    ``fixed + max(0, extra - (roofline + fixed))`` (before kernel fusion); ``extra`` is its
    class's (:meth:`_Settings.extra`) or this kernel's own ``floor`` (seconds beyond its
    boundary: the GEMM K-loop floor, :func:`_ffn_kernel_floors`), the larger."""
    fixed = s.fixed(name)
    return fixed + max(0.0, max(s.extra(name), floor) - (roofline + fixed))


def _attention_work(m):
    """Weights of each projection of one attention block, by the name of its work:
    ``q_a``, ``kv_a``, ``q_b`` (or ``q`` without a query low-rank), ``w_uk``, ``w_uv``, ``o``
    for MLA (the key and value up-projections absorbed: DeepSeek-V2 report, sec. 2.1.2);
    ``qkv``, ``o`` for GQA; under DeepSeek Sparse Attention also the indexer's ``idx_q``
    (``wq_b``) and ``idx_kw`` (``wk`` and ``weights_proj``, one fused GEMM in vLLM). With the
    norms they add up to ``attention.params(hidden)``."""
    att, h = m.attention, m.hidden
    if att.kind == "gqa":
        return {"qkv": h * att.head_dim * (att.heads + 2 * att.kv_heads),
                "o": h * att.head_dim * att.heads}
    qk = att.qk_nope_head_dim + att.qk_rope_head_dim
    q = ({"q_a": h * att.q_lora_rank, "q_b": att.q_lora_rank * att.heads * qk}
         if att.q_lora_rank else {"q": h * att.heads * qk})
    work = {**q, "kv_a": h * (att.kv_lora_rank + att.qk_rope_head_dim),
            "w_uk": att.kv_lora_rank * att.heads * att.qk_nope_head_dim,
            "w_uv": att.kv_lora_rank * att.heads * att.v_head_dim,
            "o": att.heads * att.v_head_dim * h}
    if att.sparse:      # the DSA indexer's query and fused key + head-weight projections
        work["idx_q"] = att.q_lora_rank * att.index_heads * att.index_head_dim
        work["idx_kw"] = h * (att.index_head_dim + att.index_heads)
    return work


#: The projections of :func:`_attention_work` every tensor-parallel rank runs whole: the
#: latent down-projections and the DSA indexer's (:meth:`analysis.MLA.replicated_params`);
#: the others split ``tp`` ways.
_REPLICATED_WORK = frozenset(("q_a", "kv_a", "idx_q", "idx_kw"))

#: The projections each attention GEMM of the kernel lists runs (names of
#: :func:`_attention_work`; a fused kernel runs several).
_ATTENTION_GEMM_WORK = {
    **dict.fromkeys(("fuse_a_gemm", "fused_qkv_a_proj"), ("q_a", "q", "kv_a")),
    "q_a_proj": ("q_a", "q"), "kv_a_proj": ("kv_a",),
    **dict.fromkeys(("q_b_proj", "uq_qr_gemm"), ("q_b",)),
    **dict.fromkeys(("q_absorb", "uk_bgemm", "w_uk_bmm"), ("w_uk",)),
    **dict.fromkeys(("v_absorb", "uv_gemm", "w_uv_bmm"), ("w_uv",)),
    **dict.fromkeys(("o_proj", "wo_gemm"), ("o",)),
    "qkv_proj": ("qkv",),
    "indexer_q_proj": ("idx_q",), "indexer_k_weights_proj": ("idx_kw",),
}


def _kernel_time(s, name, nbytes, nflops, part="attention"):
    """Seconds kernel ``name`` runs with its own roofline (``nbytes`` at the achieved HBM
    bandwidth, ``nflops`` at the achieved FLOP/s of the math format ``part`` runs in, the
    larger), its fixed part and floor and its boundary, as :func:`_block_time` charges them."""
    r = max(nbytes / s.part_bw(part), nflops / s.gemm_flops(part) if nflops else 0.0)
    return _bounded(s, name, r)


def _bounded(s, name, roofline, floor=0.0, held=False):
    """Seconds kernel ``name`` runs given its ``roofline``: that, its fixed part and floor
    (:func:`_kernel_overhead`, ``floor`` its own) and its boundary, the fused share of both;
    ``held``: its start is held by the pricing of its work (:func:`_held_mask`), no boundary."""
    return roofline + (_kernel_overhead(s, name, roofline, floor)
                       + (0.0 if held else s.per_kernel)) / s.fusion_factor


def _attention_gemm_params(s, name):
    """Parameters attention GEMM kernel ``name`` multiplies on one rank: its share of
    :func:`_attention_work` over the ``tp`` ranks (the latent down-projections whole on
    every rank, :data:`_REPLICATED_WORK`)."""
    work, tp = _attention_work(s.m), s.lay.tp
    return sum(work.get(g, 0) / (1 if g in _REPLICATED_WORK else tp)
               for g in _ATTENTION_GEMM_WORK.get(name, ()))


def _attention_kernel_times(s, mem, names):
    """Per kernel of one attention block, ``(read, roofline)`` in seconds (both 0 for the
    small kernels): a projection GEMM reads its weights (its share of
    :func:`_attention_work`, the latent down-projections whole on every rank) at the part's
    bandwidth and its roofline is ``max(that read, its FLOPs / the part's peak)``; the
    attention kernel reads the KV cache and its roofline is ``max(that read, score FLOPs /
    the scores' peak)``."""
    m, lay = s.m, s.lay
    tp, wb, t = lay.tp, m.weight_bytes, s.t_dp
    out = []
    for n in names:
        cls = KERNEL_CLASSES[n]
        if cls == "attention":
            read = mem.kv_read_layer_chip / s.kv_bw()
            sc = s.t_kv * m.attention.score_flops_per_token(s.context) / tp
            measured = s.mla_measured or 0.0     # TensorRT-LLM's op as measured, at least
            out.append((read, max(read, sc / s.scores_flops() if sc else 0.0, measured)))
        elif cls == "indexer":      # DSA logits: every cached key, whole on each rank
            read = mem.index_read_layer_chip / s.bw
            sc = s.t_kv * m.attention.index_score_flops_per_token(s.context)
            out.append((read, max(read, sc / s.index_flops() if sc else 0.0)))
        elif cls in _HEAVY:
            p = _attention_gemm_params(s, n)
            read = p * wb / s.part_bw("attention")
            measured = s.attention_gemm_measured(n) or 0.0  # TensorRT-LLM's, at least
            out.append((read, max(read, 2 * p * t / s.gemm_flops("attention") if p else 0.0,
                                  measured)))
        else:
            out.append((0.0, 0.0))
    return out


def _attention_measured_mask(s, names):
    """Per kernel of an attention block's ``names``, whether a measured time of TensorRT-LLM's
    holds it whole (priced once: no floor, fixed part or boundary of its own): the MLA
    generation op's kernels (:data:`TRTLLM_MLA_GENERATION_KERNELS`, when
    :attr:`_Settings.mla_measured`), a projection or batched GEMM with a measured time
    (:meth:`_Settings.attention_gemm_measured`) and the FP8 input quantization right before
    such a GEMM (inside its ``Linear.forward`` / FP8 bmm). The one rule of the stream
    (:func:`_attention_block_time`, :func:`_held_mask`) and the two-batch windows."""
    op = s.mla_measured is not None
    gemm = [s.attention_gemm_measured(n) is not None for n in names]
    return tuple((op and n in TRTLLM_MLA_GENERATION_KERNELS) or gemm[i]
                 or (n == "fp8_input_quant" and i + 1 < len(names) and gemm[i + 1])
                 for i, n in enumerate(names))


def _attention_block_time(s, mem, names, reads):
    """Seconds the attention block's kernels run (boundaries aside) and the part their floors
    add, as :func:`_block_time` but with each heavy kernel at its OWN roofline
    (:func:`_attention_kernel_times`): the kernels run one after another, so a memory-bound
    projection does not overlap a compute-bound attention kernel and the block is
    ``sum_i max(bytes_i / bw, flops_i / peak)``, not the max of the sums. ``reads`` (the
    block's weight and KV-cache read time) is kept whole: bytes no GEMM kernel reads (the
    norms' weights) are added on top. At a batch where every kernel is memory-bound this is
    the block roofline of before."""
    times = _attention_kernel_times(s, mem, names)
    kernel_reads, rs = [r for r, _ in times], [x for _, x in times]
    kv = sum(r for n, r in zip(names, kernel_reads, strict=True)
             if KERNEL_CLASSES[n] in ("attention", "indexer"))
    # the weights no GEMM kernel reads (the norms'): ``reads`` less the GEMMs' and the KV's
    weights_only = reads - (mem.kv_read_layer_chip + mem.index_read_layer_chip) / s.bw
    block = sum(rs) + max(0.0, weights_only - (sum(kernel_reads) - kv))
    # the kernels a measured time holds (the MLA op's, measured GEMMs): in that time
    keep = [not h for h in _attention_measured_mask(s, names)]
    names, rs = ([x for x, k in zip(v, keep, strict=True) if k] for v in (names, rs))
    return _kernels_block_time(s, names, rs, block)


#: The group of FFN weights and the share of that group's weights and FLOPs each FFN GEMM
#: kernel of the kernel lists runs (:func:`_ffn_kernel_times`): ``dense`` (a dense layer's
#: FFN), ``router``, ``shared`` (the shared experts), ``routed`` (the routed experts' grouped
#: GEMMs). A gated FFN's gate/up projection holds two of its three weight matrices (2/3 of
#: its weights and FLOPs), the down projection one (1/3); a fused kernel runs its whole group.
_FFN_GEMM_WORK = {
    "gate_up_proj": ("dense", 2 / 3), "down_proj": ("dense", 1 / 3), "ffn": ("dense", 1.0),
    "router_gemm": ("router", 1.0),
    "shared_gate_up": ("shared", 2 / 3), "shared_down": ("shared", 1 / 3),
    "shared_expert": ("shared", 1.0),
    **dict.fromkeys(("expert_gate_up", "marlin_gemm1", "masked_gemm1", "expert_gemm1"),
                    ("routed", 2 / 3)),
    **dict.fromkeys(("expert_down", "marlin_gemm2", "masked_gemm2", "expert_gemm2"),
                    ("routed", 1 / 3)),
    "sparse_experts": ("routed", 1.0),
}


def _dense_ffn_work(s):
    """A dense layer's FFN on one rank as ``{"dense": (read, compute)}`` seconds: its weights
    at the part's bandwidth, its FLOPs at the part's rate (:func:`_ffn_kernel_times`)."""
    m, tp = s.m, s.lay.tp
    return {"dense": (m.dense_ffn_bytes / tp / s.part_bw("ffn"),
                      s.t_dp * 2 * m.dense_ffn_params / tp / s.gemm_flops("ffn"))}


def _moe_ffn_work(s, route, busiest=None):
    """A MoE FFN block on the critical chip as ``{group: (read, compute)}`` seconds: the
    router GEMM (router part), the shared experts (ffn part, for the rank's 1/tp of its
    group's tokens, all of them under expert tensor parallelism, split as
    :func:`_shared_split`) and the routed experts the busiest rank holds and computes
    (:func:`_busiest_pairs`, their grouped GEMMs' bandwidth :attr:`_Settings.moe_bw`).
    ``busiest``: the expected active experts on the busiest chip, when the caller has it
    (:func:`expected_max_active` of ``route`` otherwise)."""
    m, lay = s.m, s.lay
    tp, etp = lay.tp, lay.etp
    sh = _shared_split(lay)
    tokens = s.t_dp if etp > 1 else s.t_dp / tp
    if busiest is None:
        busiest = _busiest_active(route.active, route.owner, lay.ep)
    pairs = _busiest_pairs(s, route)
    rows = pairs / busiest if busiest > 0 else 0.0      # rows per group of the grouped GEMMs
    routed_read = busiest * m.routed_expert_bytes / etp / s.moe_bw
    # the module as measured at the step's own layout and tokens: its time, its read inside
    routed_compute = (s.moe_module if s.moe_module is not None
                      else pairs * 2 * m.expert_params / etp / s.expert_flops(rows))
    # the router gate's GEMM as measured (its read inside) above the dedicated kernel's counts
    router_compute = (s.router_measured if s.router_measured is not None
                      else tokens * 2 * m.router_params / s.gemm_flops("router"))
    return {
        "router": (m.router_params * m.part_bytes("router") / s.part_bw("router"),
                   router_compute),
        "shared": (m.shared_experts * m.shared_expert_bytes / sh / s.part_bw("ffn"),
                   tokens * 2 * m.shared_experts * m.expert_params / sh / s.gemm_flops("ffn")),
        "routed": (routed_read, routed_compute),
    }


#: The reduction dimension of each GEMM an FFN kernel of the kernel lists runs: ``"in"`` the
#: model's hidden size (a gate/up projection), ``"out"`` the FFN's intermediate size over its
#: split (a down projection); a fused FFN kernel runs both (:func:`_ffn_kernel_floors`).
_FFN_GEMM_K = {"gate_up_proj": ("in",), "down_proj": ("out",), "ffn": ("in", "out"),
               "shared_gate_up": ("in",), "shared_down": ("out",),
               "shared_expert": ("in", "out")}


def _ffn_kernel_floors(s, names, kind):
    """Per kernel of an FFN block (``kind`` ``"dense"`` or ``"moe"``), its own floor beyond
    its boundary in seconds, or None when the FFN part's dense GEMMs have none: the published
    K-loop floor (:meth:`_Settings.gemm_k_floor`, ``analysis.DECODE_GEMM_K_FLOOR``: NVFP4 on
    Blackwell) of each GEMM it runs, ``intercept + slope x K``, summed over a fused kernel's
    GEMMs, less the empty kernel its boundary already charges (:data:`EMPTY_KERNEL_TIME`); 0
    for the other kernels (the router's GEMM runs BF16, the routed experts' grouped GEMMs
    have no published floor)."""
    kf = s.gemm_k_floor("ffn")
    if kf is None:
        return None
    a, b = (p.value for p in kf)
    m, lay = s.m, s.lay
    out = m.dense_ffn / lay.tp if kind == "dense" else (
        m.shared_experts * m.expert_ffn / _shared_split(lay))
    width = {"in": m.hidden, "out": out}
    return [sum(a + b * width[k] for k in _FFN_GEMM_K[n]) - EMPTY_KERNEL_TIME.value
            if n in _FFN_GEMM_K else 0.0 for n in names]


def _ffn_kernel_times(names, work):
    """Per kernel of one FFN block, its roofline in seconds (0 for the small kernels and the
    exchange's), and the block's roofline. ``work`` maps a group of :data:`_FFN_GEMM_WORK` to
    its ``(read, compute)`` seconds (:func:`_dense_ffn_work`, :func:`_moe_ffn_work`); each
    GEMM kernel runs its share of its group (the shares of a group's kernels in the list
    scaled to add up to 1) at its OWN roofline, ``max(share x read, share x compute)``: the
    kernels run one after another, so a memory-bound shared expert does not overlap a
    compute-bound grouped GEMM (as the attention block, :func:`_attention_block_time`). A
    group's kernels share its weights-to-FLOPs ratio, so their rooflines add up to the
    group's ``max(read, compute)``: the block's roofline is the sum of those over the groups
    (a group no kernel of ``names`` runs included), ``>= max(sum reads, sum computes)``.

    >>> r, block = _ffn_kernel_times(["router_gemm", "topk", "shared_gate_up", "shared_down",
    ...                               "expert_gemm1", "expert_gemm2"],
    ...                              {"router": (1.0, 0.5), "shared": (3.0, 1.5),
    ...                               "routed": (6.0, 9.0)})
    >>> [round(x, 9) for x in r], block
    ([1.0, 0.0, 2.0, 1.0, 6.0, 3.0], 13.0)
    """
    present = {}
    for n in names:
        if n in _FFN_GEMM_WORK:
            group, share = _FFN_GEMM_WORK[n]
            present[group] = present.get(group, 0.0) + share
    rooflines = []
    for n in names:
        group, share = _FFN_GEMM_WORK.get(n, (None, 0.0))
        read, compute = work.get(group, (0.0, 0.0))
        f = share / present[group] if group in present else 0.0
        rooflines.append(max(f * read, f * compute))
    return rooflines, sum(max(r, c) for r, c in work.values())


def _two_batch_attention_stages(s, mem):
    """Seconds of one micro-batch's attention block in the two-batch schedule, split at its
    attention kernel: ``(prepare, core)``, the kernels before it and the kernels from it on.
    Each kernel at the roofline the single-batch pass gives it
    (:func:`_attention_kernel_times`: the attention kernel's KV read and score math at the
    engine's published rates where it has them, :data:`MLA_DECODE_EFFICIENCY`) with its
    fixed part, floor and boundary (:func:`_bounded`; none for a kernel whose start is held,
    :func:`_held_mask`, as on the stream): one attention pricing for both."""
    names = _attention_names(s)
    core_at = next(i for i, n in enumerate(names) if KERNEL_CLASSES[n] == "attention")
    # a kernel a measured time holds (the MLA op's, a measured GEMM's): that time, nothing more
    times = [r if m else _bounded(s, n, r, held=h)
             for n, (_, r), h, m in zip(names, _attention_kernel_times(s, mem, names),
                                        _held_mask(s, names, "attention"),
                                        _attention_measured_mask(s, names), strict=True)]
    return sum(times[:core_at]), sum(times[core_at:])


def _two_batch_windows(s, mem, work=None):
    """Seconds of the stages an exchange's transfer hides under in the two-batch schedule
    (:data:`TWO_BATCH`): ``(dispatch window, combine window)`` = (the shared experts + the
    other micro-batch's attention-prepare stage, its attention-core stage with the
    post-attention norm, router GEMM and top-k), each kernel priced exactly as the stream
    prices it (:func:`_attention_kernel_times`, :func:`_ffn_kernel_times`) plus its boundary
    unless its start is held (:func:`_held_mask`: the stream charges it none either).
    ``work``: the MoE FFN block's :func:`_moe_ffn_work`, as the stream has it (the step's
    routing's, :func:`_routing`, when None)."""
    prepare, core = _two_batch_attention_stages(s, mem)
    names = _moe_kernels(s)
    rooflines, _ = _ffn_kernel_times(names, work or _moe_ffn_work(s, s.routing, s.busiest_active))
    floors = _ffn_kernel_floors(s, names, "moe") or [0.0] * len(names)
    shared = 0.0
    routing = True     # the MoE block's kernels before its exchange and routed experts
    # the measured module's kernels: their time is the routed experts' (on the stream); a
    # measured router GEMM: its time, nothing more (as the stream)
    measured = _moe_measured_mask(s, names)
    for n, r, f, h, mod in zip(names, rooflines, floors, _held_mask(s, names, "moe"), measured,
                               strict=True):
        cls = KERNEL_CLASSES[n]
        if mod and n != "router_gemm":
            routing = routing and cls not in ("moe_gemm", "exchange", "moe_align")
            continue
        t = r if mod else _bounded(s, n, r, f, h)
        if "shared" in n:
            shared += t
        elif cls in ("moe_gemm", "exchange", "moe_align"):
            routing = False
        elif routing:
            core += t
    return shared + prepare, core


def _two_batch_exposed(s, exchange, windows):
    """Seconds of one micro-batch's exchange left on the stream under the two-batch
    schedule (:data:`TWO_BATCH`): each phase's fixed part and receive-side copy, and the part
    of its transfer longer than its window."""
    out = 0.0
    for ph, window in zip((exchange.dispatch_phase, exchange.combine_phase), windows):
        out += ph.fixed + ph.local_copy + max(0.0, ph.transfer - window)
    return out


def _layer_times(s, mem, route, comm):
    """The dense and the MoE layer on the critical chip (:class:`LayerTime` each)."""
    m, lay = s.m, s.lay
    tp, etp = lay.tp, lay.etp
    bw, wb, t_dp = s.bw, m.weight_bytes, s.t_dp
    att = m.attention
    # the MLA latent down-projections are replicated over the tp ranks (MLA.replicated_params)
    att_p = m.attention_params_per_rank(tp)
    att_w = (m.attention_params * wb / tp if tp == 1 else att_p * wb) / s.part_bw("attention")
    kv_t = (mem.kv_read_layer_chip + mem.index_read_layer_chip) / bw
    # GEMM compute at each part's math-format peak: projections and scores each at theirs
    f_att, f_sc = s.gemm_flops("attention"), s.gemm_flops("scores")
    proj = 2 * m.attention_params / tp if tp == 1 else 2 * att_p
    scores = att.score_flops_per_token(s.context) / tp
    att_c = t_dp * proj / f_att + s.t_kv * scores / f_sc
    if att.sparse and not s.dsa_fast_path:  # the DSA indexer's scores, whole on each rank, FP8
        att_c += s.t_kv * att.index_score_flops_per_token(s.context) / s.index_flops()
    att_names = _attention_names(s)
    kernels_att = len(att_names)
    attention, att_floor = _attention_block_time(s, mem, att_names, att_w + kv_t)
    # the MoE FFN block's work, once for the stream and the two-batch windows (below)
    busiest = s.busiest_active if route is s.routing else _busiest_active(
        route.active, route.owner, lay.ep)
    moe_work = _moe_ffn_work(s, route, busiest)
    windows = _two_batch_windows(s, mem, moe_work) if s.overlap == TWO_BATCH else None

    def finish(kind, work, ffn_names, comm_t, dispatch, combine, act_sys, act_chip):
        ffn_w, ffn_c = (sum(x[i] for x in work.values()) for i in (0, 1))
        ffn_kernels = len(ffn_names)
        rooflines, block = _ffn_kernel_times(ffn_names, work)
        floors = _ffn_kernel_floors(s, ffn_names, kind) or [0.0] * len(ffn_names)
        if kind == "moe":   # the measured module's kernels and router GEMM: in their times
            keep = [not m for m in _moe_measured_mask(s, ffn_names)]
            ffn_names, rooflines, floors = ([x for x, k in zip(v, keep, strict=True) if k]
                                            for v in (ffn_names, rooflines, floors))
        ffn, ffn_floor = _kernels_block_time(s, ffn_names, rooflines, block, floors)
        local = attention + ffn
        if s.overlap == TWO_BATCH:
            exposed = comm_t - dispatch - combine + (
                _two_batch_exposed(s, comm.exchange, windows) if dispatch + combine else 0.0)
        else:
            exposed = comm_t - min(s.overlap * comm_t, local)
        kernels = kernels_att + ffn_kernels
        # kernels whose start their priced work already holds pay no boundary (_held_starts)
        held = _held_starts(s, kind)
        launch = (kernels - held) * s.per_kernel / s.fusion_factor
        return LayerTime(kind=kind, attention_weights=att_w, kv_cache=kv_t, attention_compute=att_c,
                         attention=attention, ffn_weights=ffn_w, ffn_compute=ffn_c, ffn=ffn,
                         dispatch=dispatch,
                         combine=combine, tp_allreduce=comm_t - dispatch - combine, comm=comm_t,
                         exposed_comm=exposed, launch=launch, kernels=kernels,
                         active_experts=act_sys, active_experts_chip=act_chip,
                         total=local + exposed + launch, kernel_floor=att_floor + ffn_floor)

    dense = finish("dense", _dense_ffn_work(s), list(s.kernel_lists["dense_ffn"]),
                   2 * comm.allreduce, 0.0, 0.0, 0.0, 0.0)

    # MoE FFN on each chip: router + shared experts (for its 1/tp of the group's tokens)
    # + its routed experts (_moe_ffn_work); the step waits for the slowest chip.
    # With expert tensor parallelism (etp > 1: plain or mixed TP) every rank holds 1/etp
    # of its group's experts and computes them for all of the tokens, the shared experts
    # split over the tp ranks; the MoE output is all-reduced over the ranks like a dense
    # FFN's (two all-reduces per layer, no exchange).
    moe_comm = ((2 * comm.allreduce if etp > 1 else comm.allreduce) + comm.dispatch
                + comm.combine)
    moe = finish("moe", moe_work, _moe_kernels(s), moe_comm, comm.dispatch,
                 comm.combine, float(route.active.sum()), busiest)
    return dense, moe


def _head_time(s):
    """The output head (final norm, LM head, sampling) on one chip; a draft step's head also
    runs the MTP projection (:data:`MTP_KERNELS`)."""
    m, tp = s.m, s.lay.tp
    head_w = m.head_params * m.part_bytes("head") / tp / s.bw
    head_c = s.t_dp * 2 * m.head_params / tp / s.gemm_flops("head")
    names = KERNELS["head"]
    if s.draft:
        proj = 2 * m.hidden * m.hidden / tp
        head_w += proj * m.weight_bytes / s.bw
        head_c += s.t_dp * 2 * proj / s.gemm_flops("attention")
        names = MTP_KERNELS + names
    head_l = len(names) * s.per_kernel / s.fusion_factor
    local, floor = _block_time(s, names, max(head_w, head_c))
    return HeadTime(weights=head_w, compute=head_c, launch=head_l, total=local + head_l,
                    kernel_floor=floor, kernels=len(names))


def _breakdown(layers, head):
    """Additive parts of the step and the raw resource times (:class:`DecodeBreakdown`)."""
    total = sum(layer.total for layer in layers) + head.total
    return DecodeBreakdown(
        attention=sum(x.attention for x in layers),
        ffn=sum(x.ffn for x in layers),
        head=max(head.weights, head.compute) + head.kernel_floor,
        exposed_comm=sum(x.exposed_comm for x in layers),
        launch=sum(x.launch for x in layers) + head.launch,
        total=total,
        weights=sum(x.attention_weights + x.ffn_weights for x in layers) + head.weights,
        kv_cache=sum(x.kv_cache for x in layers),
        compute=sum(x.attention_compute + x.ffn_compute for x in layers) + head.compute,
        comm=sum(x.comm for x in layers),
        kernel_floor=sum(x.kernel_floor for x in layers) + head.kernel_floor)


def collective_label(fn):
    """How output names the collective cost function ``fn`` a step is priced with (one
    label for a step's parameter table and the CLI headers): ``analysis.cost``, an engine's
    own all-reduce (``ENGINE_ALL_REDUCES``, :func:`engine_collective`), or a caller's
    function by its own name.

    >>> from fabric import chip_spec
    >>> [collective_label(engine_collective(e, chip_spec("h200"))) for e in ("trtllm", None)]
    ['analysis.trtllm_all_reduce', 'analysis.cost']
    >>> collective_label(len)
    'len'
    """
    from ._engine_allreduce import engine_all_reduce_label

    if not callable(fn):                    # None too: there is no function to name
        raise kind_error(fn, "collective", "a cost function to name")
    if fn is _default_collective:
        return "analysis.cost"
    return engine_all_reduce_label(fn) or getattr(fn, "__name__", type(fn).__name__)


def _collective_parameter(fn):
    """Which collective cost function priced the step (:func:`engine_collective`)."""
    from ._engine_allreduce import ENGINE_ALL_REDUCES

    label = collective_label(fn)
    source = ("analysis.cost, the collectives model (decode_step's default)"
              if fn is _default_collective else
              ENGINE_ALL_REDUCES[label].source if label in ENGINE_ALL_REDUCES else "user")
    return Parameter("decode.collective", label, "", source)


def _parameters(s, moe, comm):
    """Every number the step used, with unit and source."""
    kern, lists = s.kern, s.kernel_lists
    if s.cuda_graphs:
        launch_param = Parameter(
            "decode.graph_kernel_overhead", s.graph_kernel_overhead, "s",
            GRAPH_KERNEL_OVERHEAD.source
            if s.graph_kernel_overhead == GRAPH_KERNEL_OVERHEAD.value else "user")
        count_source = ({"trtllm": "NVIDIA/TensorRT-LLM tech_blog1 module list (at commit "
                                   "01c4ece911eb), modules counted from moe_kernels.cu at "
                                   "ac73e3116fb4, modeling_deepseekv3.py at a43cf9e363d5, "
                                   "gated_mlp.py at 90f3bec14ca7, linear.py at ed53795b33fc "
                                   "(analysis._decode.GRAPH_KERNELS; docs/sources.md s.7)",
                         "vllm": "counted from vLLM's deepseek_v2.py, mla.py and fused_moe "
                                 "Marlin path (analysis._decode.VLLM_GRAPH_KERNELS)",
                         "sglang": "counted from SGLang's deepseek_v2.py (absorbed MLA, FP8 "
                                   "block linears, DeepEP MoE with DeepGEMM masked GEMMs) "
                                   "(analysis._decode.SGLANG_GRAPH_KERNELS)"}[s.engine]
                        + "; GQA and head: one kernel per operator (assumption)")
    else:
        launch_param = Parameter("decode.launch_overhead", s.launch_overhead, "s",
                                 LAUNCH_OVERHEAD.source
                                 if s.launch_overhead == LAUNCH_OVERHEAD.value else "user")
        count_source = "assumption: one kernel per operator, analysis._decode.KERNELS"
    kernels_att = _attention_kernels(s)
    exch_params = comm.exchange.parameters if comm.exchange is not None else (
        kern.parameters() if kern is not None else ())
    hbm_eff = s.hbm_eff
    return s.chip.parameters() + (
        launch_param,
        Parameter("decode.cuda_graphs", s.cuda_graphs, "", "user (True: replayed CUDA graph)"),
    ) + ((PDL_HIDDEN_GAP,) if s.pdl else ()) + ((
        Parameter("decode.nic_background", s.nic_background, "B/s",
                  "user (traffic into each EP rank's NIC beside the exchange)"),)
        if s.nic_background else ()) + (
        Parameter("decode.kernels_per_layer", f"{kernels_att}+{len(_moe_kernels(s))} (moe), "
                  f"{kernels_att}+{len(lists['dense_ffn'])} (dense)", "", count_source),
        Parameter("decode.runtime", s.runtime or default_runtime(), "",
                  "user" if s.runtime else "not given: analysis.cost's default runtime"),
        _collective_parameter(s.collective),
        Parameter("decode.ep_kernel", kern.name if kern is not None else "collective", "",
                  "user" if kern is not None else (
                      "not given: dispatch and combine as TensorRT-LLM's attention-DP "
                      "allgather + reducescatter (trtllm_gathers)" if s.gathers else
                      "not given: dispatch and combine as the collectives model's "
                      "all-to-all")),
        Parameter("decode.fusion_factor", s.fusion_factor, "", "user"),
        Parameter("decode.min_kernel_time", s.min_kernel_time, "s",
                  MIN_KERNEL_TIME.source if s.min_kernel_time == MIN_KERNEL_TIME.value
                  else "user"),
        EMPTY_KERNEL_TIME,
        GEMM_FIXED_TIME if s.gemm_fixed == GEMM_FIXED_TIME.value else Parameter(
            "decode.gemm_fixed_time", s.gemm_fixed, "s", "user"),
    ) + tuple(
        (KERNEL_FLOORS[cls] if cls in KERNEL_FLOORS and math.isclose(
            extra, KERNEL_FLOORS[cls].value - EMPTY_KERNEL_TIME.value, rel_tol=1e-12)
         else Parameter(f"decode.kernel_floor.{cls}", extra + EMPTY_KERNEL_TIME.value, "s",
                        "user"))
        for cls, extra in s.floors) + (
        Parameter("decode.overlap", s.overlap, "",
                  TWO_BATCH_SOURCE if s.overlap == TWO_BATCH else "user"),
        DECODE_HBM_EFFICIENCY if s.published_rates else Parameter(
            "decode.hbm_efficiency", hbm_eff, "", "user: every read (1: peak bandwidth)"),
    ) + ((Parameter("decode.engine", s.engine, "",
                    "user: whose kernel list a replayed graph runs"),)
         if s.cuda_graphs else ()) + ((Parameter(
             "decode.attention_scores_format", s.gemm_format("scores"), "",
             TRTLLM_FP8_MLA_SOURCE),) if s.fp8_mla else ()) + (
        tuple(s.mla_kernel) if s.mla_kernel is not None else ()) + (
        Parameter("decode.moe_hbm_efficiency", hbm_eff if s.moe_eff is None else s.moe_eff, "",
                  ("as decode.hbm_efficiency" if s.moe_eff is None else
                   VLLM_INT4_MOE_HBM_EFFICIENCY.source
                   if s.moe_eff == VLLM_INT4_MOE_HBM_EFFICIENCY.value else "user")),
    ) + ((Parameter("decode.compute_efficiency", s.fl_eff, "", "user (1: peak FLOP/s)"),)
         if s.fl_eff is not None else ()) + (
        Parameter("decode.routing_skew", s.skew, "", "user (0: uniform routing)"),
    ) + ((Parameter("decode.expert_balance", s.balance, "",
                    "user: mean/max of the expert ranks' token-expert pairs (EPLB's "
                    "balancedness)"),) if s.balance is not None else ()) + (
        Parameter("decode.dispatch_bytes", s.dispatch_b, "B", "bytes per element dispatched"),
        Parameter("decode.combine_bytes", s.combine_b, "B", "bytes per element combined"),
    ) + _efficiency_parameters(s) + tuple(
        {q.name: q for q in (s.dense_gemm_hbm_efficiency(part) for part in ("attention", "ffn"))
         if q is not None}.values()) + tuple(s.gemm_k_floor("ffn") or ()) + exch_params + (
        mla_generation_parameters(s.chip, s.b_dp, s.context, s.m.kv_cache_bytes,
                                  s.m.attention.heads / s.lay.tp)
        if s.mla_measured is not None else ()) + (
        moe_module_parameters(s.chip, s.gemm_format("experts"), s.moe_shape, s.lay.etp,
                              s.lay.ep, s.tokens, s.moe_backend)
        if s.moe_module is not None else ()
    ) + trtllm_gemm_parameters(
        s.chip, s.m.part_format("attention"),
        [u for u in (s.attention_gemm_use(n) for n in _attention_names(s)
                     if s.attention_gemm_measured(n) is not None) if u is not None]) + (
        trtllm_gemm_parameters(s.chip, s.gemm_format("router"), [s.router_gemm_use])
        if s.router_measured is not None else ()) + (
        (trtllm_release_parameter(s.trtllm_release),) if s.trtllm_release is not None
        else ()) + _measured_all_reduce_parameters(s) + (
        s.m.parameters())


def _measured_all_reduce_parameters(s):
    """The points of TensorRT-LLM's measured all-reduce op the step's tensor-parallel
    all-reduce read (:func:`analysis.trtllm_all_reduce`, where its collective is that op)."""
    from ._engine_allreduce import trtllm_all_reduce, trtllm_all_reduce_parameters

    if s.collective is not trtllm_all_reduce or s.lay.tp < 2:
        return ()
    size, tp = _tp_bytes(s), s.lay.tp
    algo = s.algorithm.get(_ALL_REDUCE, "auto") if isinstance(s.algorithm, dict) else s.algorithm
    for i in range(0, len(s.pos) - tp + 1, tp):
        # the op's own answer says whether it read the table (it falls back to analysis.cost
        # off a load/store domain, e.g. a TP group across two servers)
        chips = [s.fabric.endpoints[p] for p in s.pos[i:i + tp]]
        if trtllm_all_reduce(s.fabric, _ALL_REDUCE, size, algorithm=algo, ranks=chips,
                             transport=s.transport).algorithm == "trtllm measured":
            return trtllm_all_reduce_parameters(s.chip, tp, size)
    return ()


def _tp_bytes(s):
    """Bytes of one tensor-parallel group's all-reduce in a step: its activations."""
    return s.t_dp * s.m.hidden * s.m.activation_bytes


def _efficiency_parameters(s):
    """The published GEMM compute efficiencies the step used (none under a user's
    ``compute_efficiency``)."""
    if s.fl_eff is not None:
        return ()
    used, peak = {}, []
    for part in ("attention", "ffn", "experts", "router", "head"):
        if part == "experts" and s.moe_module is not None:
            continue        # the module's measured time at the step's layout (its Parameters)
        if part == "router" and s.router_measured is not None:
            continue        # the router GEMM's measured time (its Parameters)
        by_rows = (((GROUPED_GEMM_TIME_BY_ROWS.get((s.chip.name, s.gemm_format(part)))
                     if _measured_moe_module(s) else None)
                    or GROUPED_GEMM_EFFICIENCY_BY_ROWS.get((s.chip.generation,
                                                            s.gemm_format(part))))
                   if part == "experts" and s.m.moe_layers else None)
        if by_rows is not None:     # the routed experts at their rows per group
            for _, p in by_rows:
                used.setdefault(p.name, p)
            continue
        p = gemm_compute_efficiency(s.chip.generation, s.gemm_format(part),
                                    "grouped" if part == "experts" else "dense")
        if p is not None:
            used.setdefault(p.name, p)
        else:
            peak.append(part)
    if peak:       # the rule's other branch, as a number: no published figure, peak FLOP/s
        used["peak"] = Parameter(
            "decode.compute_efficiency.unpublished", 1.0, "",
            f"{s.chip.generation} GEMMs with no published efficiency for their format and "
            f"kind (analysis.GEMM_COMPUTE_EFFICIENCY) run at peak FLOP/s: "
            f"{', '.join(peak)}")
    return tuple(used.values())
