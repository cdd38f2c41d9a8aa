"""MoE transformer decoder configurations for the decode model.

A :class:`MoEModel` describes what the decode model needs of a mixture-of-experts
decoder: how many layers and which are dense, the hidden size, the attention
block (with its KV-cache size per token), the routed and shared experts, the
FFN widths, the vocabulary, and bytes per weight and per activation. Parameter
counts are computed from the configuration, never typed in.

Presets (``MODELS``):

* ``deepseek-v3``: DeepSeek-V3 ``inference/configs/config_671B.json``
  (huggingface.co/deepseek-ai/DeepSeek-V3): vocab 129280, dim 7168, inter_dim
  18432, moe_inter_dim 2048, 61 layers of which the first 3 are dense, 128 heads,
  256 routed experts, 8 activated, 1 shared, q_lora_rank 1536, kv_lora_rank 512,
  qk_nope_head_dim 128, qk_rope_head_dim 64, v_head_dim 128, dtype fp8.
  Published: 671B total, 37B activated (arXiv 2412.19437; the 14B multi-token
  prediction module is not part of the 671B and not modelled).
* ``kimi-k2``: Kimi-K2 ``config.json`` (moonshotai/Kimi-K2-Instruct, model type
  ``kimi_k2``, the DeepSeek-V3 architecture): hidden 7168, intermediate 18432,
  moe_intermediate 2048, 61 layers, first_k_dense_replace 1, 64 heads, 384
  routed experts, 8 per token, 1 shared, q_lora_rank 1536, kv_lora_rank 512,
  qk_nope 128, qk_rope 64, v_head 128, vocab 163840; weights shipped in FP8.
  Published: 1T total, 32B activated (MoonshotAI/Kimi-K2 README). Values checked
  against copies of the config in public code (e.g. Megatron-Bridge's
  ``KimiK2Provider``, and test fixtures quoting the K2.5/K2.6 ``text_config``,
  which share these fields).
* ``kimi-k2.5-int4``: Kimi K2.5's language model (the ``kimi_k2`` / DeepSeek-V3
  architecture with the Kimi K2 fields above; vLLM runs it as
  ``KimiK25ForConditionalGeneration`` whose language model is its
  ``DeepseekV2ForCausalLM``) in the native INT4 release: **routed experts** in
  INT4, symmetric, group size 32, one BF16 scale per group (compressed-tensors
  ``pack-quantized``; the Kimi-K2-Thinking ``config.json`` quantization_config:
  ``num_bits 4, group_size 32, strategy group``, with attention, shared experts,
  dense MLPs and ``lm_head`` in the ignore list, so those stay BF16). The vision
  encoder (text-only prompts) is not modelled.
* ``kimi-k2.5-nvfp4``: the same, routed experts requantized to NVFP4 (E2M1 values,
  one FP8 E4M3 scale per 16 values, one FP32 scale per tensor: NVIDIA's NVFP4
  definition, "Introducing NVFP4" developer blog, 2025); that only the routed
  experts are requantized is an **assumption** (the INT4 release quantizes only
  those); the rest BF16. KV cache in FP8 (``kv_cache_bytes = 1``): NVIDIA ModelOpt
  NVFP4 checkpoints set ``kv_cache_quant_algo: FP8`` in ``hf_quant_config.json``.
* ``deepseek-r1``: DeepSeek-R1 (``deepseek-ai/DeepSeek-R1`` config: the
  DeepSeek-V3 architecture, identical fields) with its FP8 weights counted with
  their block scales: one FP32 ``weight_scale_inv`` per 128 x 128 block
  (``quantization_config.weight_block_size = [128, 128]``), embedding and head
  BF16 (the checkpoint ships them unquantized).
* ``deepseek-r1-nvfp4``: NVIDIA's NVFP4 checkpoint of DeepSeek-R1
  (``nvidia/DeepSeek-R1-FP4``, quantized with TensorRT Model Optimizer; the
  DeepSeek-V3 architecture fields above). Which tensors are NVFP4 is taken from
  NVIDIA's TensorRT-LLM tech blog 1 ("Pushing Latency Boundaries: Optimizing
  DeepSeek-R1 Performance on NVIDIA B200 GPUs", "Precision Strategy" table): 61
  attention modules BF16, the 3 dense FFN layers NVFP4, the 58 MoE FFN layers NVFP4
  (routed and shared experts: ``expert_format`` and ``ffn_weight_bytes``), the router
  GEMM BF16, the MTP layers BF16; the ``DeepSeek-R1-FP4-v2`` model card confirms that
  the first release leaves attention unquantized ("additionally quantizes the wo
  module in attention layers"). NVIDIA's recipe for it (TensorRT Model Optimizer
  ``examples/deepseek/ptq.py``) agrees and covers the rest: it quantizes the linear
  layers (dense MLPs, routed and shared experts), disables ``*head*`` (``lm_head``
  stays BF16) and ``*attn*`` (``wo`` only with ``--enable_wo_quant``: the v2
  checkpoint), and excludes the MTP layer; the embedding and the router gate are not
  linear layers there, so stay BF16. NVFP4 is
  E2M1 values with one FP8 E4M3 scale per 16 values and one FP32 scale per tensor
  (NVIDIA, "Introducing NVFP4", 2025): 0.5625 B/weight. KV cache BF16 (an FP8 cache
  is a deployment option: ``dataclasses.replace(m, kv_cache_bytes=1)``).
* ``glm-5``: Z.ai's GLM-5 (``zai-org/GLM-5``, ``GlmMoeDsaForCausalLM``, BF16 release):
  hidden 6144, intermediate 12288, moe_intermediate 2048, 78 layers of which the first 3
  are dense, MLA with 64 heads, q_lora_rank 2048, kv_lora_rank 512, qk_nope 192, qk_rope
  64, v_head 256, 256 routed experts, 8 per token, 1 shared, vocab 154880, one MTP layer
  (the checkpoint's ``model.layers.78``). Fields: Hugging Face transformers
  ``GlmMoeDsaConfig`` (``configuration_glm_moe_dsa.py``, documented against checkpoint
  ``zai-org/GLM-5``); layers, hidden, heads, experts cross-checked against NVIDIA NeMo
  AutoModel's GLM-5 page and Vultr's model page. Published: 744B total, 40B activated
  (zai-org GLM-5 README). **DeepSeek Sparse Attention** (``MLA`` with ``index_heads`` 32,
  ``index_head_dim`` 128, ``index_topk`` 2048, the same config): a lightning indexer (query
  projection from the q latent, a 128-wide key projection, a LayerNorm, 32 head weights:
  0.73B over 78 layers) picks the 2048 cached tokens each query attends to. Counted with it:
  743.9B / 40.8B.
* ``deepseek-v3.2``: DeepSeek-V3.2 (``deepseek-ai/DeepSeek-V3.2``, ``DeepseekV32ForCausalLM``):
  the DeepSeek-V3 fields and FP8 block-128 weights of ``deepseek-r1`` plus DeepSeek Sparse
  Attention, ``index_n_heads`` 64, ``index_head_dim`` 128, ``index_topk`` 2048 (its config
  as copied in public code; the same values are the ModelArgs defaults of
  DeepSeek-V3.2-Exp's ``inference/model.py``). Counted: 671.9B (+ 13.5B MTP module = 685.4B).
  DSA's indexer keys are cached in FP8 with one FP32 scale per 128 values
  (:data:`INDEX_KEY_BYTES`); :meth:`MLA.kv_read_tokens` and the decode model price the
  sparse read.
* ``hypothetical-2.8t``: **hypothetical**. No published model; a config of the
  seed article's reported scale (2.8T parameters), made from ``kimi-k2`` by
  scaling the routed experts 384 -> 1056 (x2.75), all else unchanged, which
  gives 2.80T total. Use it to ask "what would a model of that size do", never
  as a description of the seed's model, which is unpublished.

Weight formats (:data:`WEIGHT_FORMATS`): bytes per stored weight **including the
quantization scales**, ``bits / 8 + scale_bits / 8 / group``: ``bf16`` 2,
``fp8`` 1 (one per-tensor scale, negligible), ``fp8-block128`` 1 + 4/16384 (FP32
scale per 128 x 128 block, DeepSeek-V3 report sec. 3.3.2), ``int4-g32`` 0.5625
(BF16 scale per 32), ``nvfp4`` 0.5625 (FP8 scale per 16). A model has two:
``weight_bytes`` for everything but the routed experts, ``expert_weight_bytes`` for
the routed experts (default: the same); ``ffn_weight_bytes`` for the dense FFNs and
shared experts (default: ``weight_bytes``). The router gates, the output head and the input
embedding (:data:`UNQUANTIZED_PARTS`) are stored at 16 bits in every model, whatever the
others' formats (:meth:`MoEModel.part_bytes`: each preset's release keeps them BF16).

Counting conventions (say so, since published totals differ in them):
gated FFNs (SwiGLU: three matrices ``hidden x width``), RMSNorm weights counted,
router gate ``hidden x experts`` plus a per-expert bias, untied input embedding
and output head. **Active** parameters exclude the input embedding table (a
lookup reads one row, not the table) and count the ``experts_per_token`` routed
experts plus the shared ones. Under these conventions DeepSeek-V3 comes to
671.03B total / 36.6B active, Kimi K2 to 1026B / 31.7B.

Examples
--------
>>> m = model_config("deepseek-v3")
>>> round(m.total_params / 1e9, 2), round(m.active_params / 1e9, 1)
(671.03, 36.6)
>>> m.attention.kv_elements_per_token
576
"""

import dataclasses
import math
import os
from dataclasses import dataclass

from fabric import Parameter, SpecError
from fabric._chips import check_math_format
from fabric._system import read_text, read_toml
from fabric._units import (
    check_choice,
    check_count,
    check_number,
    choice_fault,
    flag_of,
    kind_error,
    show_value,
    text_of,
    unknown_fault,
)

__all__ = ["GQA", "INDEX_KEY_BYTES", "MLA", "MODELS", "UNQUANTIZED_PARTS", "WEIGHT_FORMATS",
           "MoEModel", "WeightFormat", "load_model_toml", "model_config"]


def _set_ints(obj, names, minimum):
    """Check the int fields ``names`` of the frozen dataclass ``obj``
    (:func:`fabric._units.check_count`) and store them as Python ints: a numpy int computes as
    the int it equals."""
    for f in names:
        object.__setattr__(obj, f, check_count(getattr(obj, f), f, minimum))


def _format(name, what):
    """The :data:`WEIGHT_FORMATS` record of a format field ``what`` given (not None: a caller
    asks only a field that is set; the message says None is also a value of the field)."""
    return WEIGHT_FORMATS[check_choice(name, what, WEIGHT_FORMATS, optional=True)]


def _agree(bytes_name, value, fmt_name, name):
    """Check that a bytes-per-weight figure agrees with its named format."""
    fmt = _format(name, fmt_name)
    check_number(bytes_name, value, 0, strict=True)
    if not math.isclose(value, fmt.bytes_per_weight):
        raise SpecError(f"{bytes_name}={show_value(value)} disagrees with "
                        f"{fmt_name}={show_value(name)} ({fmt.bytes_per_weight} B/weight)")


def _set_number(obj, name):
    """Check the number field ``name`` of the frozen dataclass ``obj``, a positive finite
    real number (:func:`fabric._units.check_number`), and store it as a float."""
    object.__setattr__(obj, name, check_number(name, getattr(obj, name), 0, strict=True))


@dataclass(frozen=True)
class WeightFormat:
    """How weights are stored: value bits plus one scale per ``group`` values.

    Attributes
    ----------
    name : str
    bits : float
        Bits per stored value.
    scale_bits : float
        Bits of one scale (0: no per-group scale).
    group : int
        Values sharing one scale.
    source : str
    math : str
        The math format a GEMM of these weights runs in on a chip that has tensor cores
        for it (a key of ``fabric.MATH_FORMATS``): the activations' format too for
        weight-and-activation formats (FP8 W8A8, NVFP4 W4A4), BF16 for weight-only ones
        (INT4 W4A16). A chip without it runs BF16 (``ChipSpec.gemm_format``).
    math_source : str
        Where ``math`` comes from.

    Examples
    --------
    >>> WEIGHT_FORMATS["int4-g32"].bytes_per_weight
    0.5625
    >>> WEIGHT_FORMATS["nvfp4"].bytes_per_weight
    0.5625
    >>> WEIGHT_FORMATS["int4-g32"].math, WEIGHT_FORMATS["nvfp4"].math
    ('bf16', 'fp4')
    """

    name: str
    bits: float
    scale_bits: float
    group: int
    source: str
    math: str = "bf16"
    math_source: str = ""

    def __post_init__(self):
        text_of(self.name, "weight format name")
        for f in ("source", "math", "math_source"):
            text_of(getattr(self, f), f"weight format {show_value(self.name)}: {f}")
        for f, strict in (("bits", True), ("scale_bits", False)):
            # a float: np.float16 would compute as one
            object.__setattr__(self, f, check_number(
                f, getattr(self, f), 0, strict=strict,
                tail=f" (weight format {show_value(self.name)})"))
        object.__setattr__(self, "group", check_count(
            self.group, "group", 1, f"an integer >= 1 (weight format {show_value(self.name)})"))
        check_math_format(self.math, f"weight format {show_value(self.name)}: math")

    @property
    def bytes_per_weight(self):
        """Bytes per weight, scales included: ``bits/8 + scale_bits/8/group``."""
        return self.bits / 8 + (self.scale_bits / 8 / self.group if self.scale_bits else 0.0)


#: The model parts every model stores at 16 bits (BF16), whatever its other formats
#: (:meth:`MoEModel.part_bytes`, which gives the sources): the router gates, the output head and
#: the input embedding.
UNQUANTIZED_PARTS = ("router", "head", "embedding")
#: The parts :meth:`MoEModel.part_format` and :meth:`MoEModel.part_bytes` answer for.
_FORMAT_PARTS = ("attention", "ffn", "experts", "router", "head", "scores")
_BYTES_PARTS = ("attention", "ffn", "experts", *UNQUANTIZED_PARTS)

#: Weight formats by name (sources in each record and in the module docstring).
_FP8_MATH = ("W8A8: activations quantized to FP8 on the fly and the GEMM run on FP8 tensor "
             "cores (DeepSeek-V3 report, arXiv 2412.19437, sec. 3.3: the linear layers' GEMMs "
             "in FP8, activations scaled per 1 x 128 tile, weights per 128 x 128 block; "
             "DeepGEMM's FP8 x FP8 kernels, which serving engines run for these checkpoints)")

WEIGHT_FORMATS = {f.name: f for f in (
    WeightFormat("bf16", 16, 0, 1, "bfloat16, unquantized", "bf16", "BF16 weights and "
                 "activations"),
    WeightFormat("fp8", 8, 0, 1, "FP8 E4M3 with one per-tensor scale (negligible)", "fp8",
                 _FP8_MATH),
    WeightFormat("fp8-block128", 8, 32, 128 * 128,
                 "DeepSeek-V3 report (arXiv 2412.19437) sec. 3.3.2 and the checkpoints' "
                 "quantization_config weight_block_size [128, 128]: FP8 E4M3 values, one FP32 "
                 "scale per 128 x 128 block", "fp8", _FP8_MATH),
    WeightFormat("int4-g32", 4, 16, 32,
                 "Kimi-K2-Thinking / K2.5 config.json quantization_config (compressed-tensors "
                 "pack-quantized): INT4 symmetric, group_size 32, BF16 scales", "bf16",
                 "W4A16, weight-only: the quantization_config quantizes weights only (no "
                 "input_activations scheme), so vLLM runs it with its WNA16 (Marlin) kernels, "
                 "which dequantize the INT4 weights to BF16 and multiply in BF16"),
    WeightFormat("nvfp4", 4, 8, 16,
                 "NVIDIA NVFP4 (developer blog 'Introducing NVFP4', 2025): E2M1 values, one "
                 "FP8 E4M3 scale per 16 values, plus one FP32 per-tensor scale (negligible)",
                 "fp4",
                 "W4A4: NVIDIA ModelOpt NVFP4 checkpoints quantize the activations to NVFP4 too "
                 "(an input_scale per linear layer) and the GEMM runs on Blackwell's FP4 tensor "
                 "cores ('Introducing NVFP4': 'hardware-accelerated ... on Blackwell Tensor "
                 "Cores'; TensorRT-LLM tech blog 1: NVFP4 GEMMs for the MoE and dense FFNs)"),
)}


#: Bytes per element of DeepSeek Sparse Attention's cached indexer keys: FP8 E4M3 values plus
#: one FP32 scale per 128 values (DeepSeek-V3.2-Exp ``inference/model.py`` at commit 6d8cb70,
#: ``Indexer``: ``k_cache`` float8_e4m3fn of ``index_head_dim`` per token, ``k_scale_cache``
#: float32 of ``index_head_dim // block_size`` per token, ``block_size = 128``; vLLM
#: ``model_executor/models/deepseek_v2.py`` at commit 002d6073 sizes its indexer cache the same:
#: ``head_dim + head_dim // quant_block_size * 4`` bytes, 132 B per token at 128). Taken for
#: every DSA model (GLM-5 too: an assumption, its engines run the DeepSeek-V3.2 indexer path).
INDEX_KEY_BYTES = Parameter(
    "models.dsa.index_key_bytes", 1 + 4 / 128, "B",
    "DeepSeek-V3.2-Exp inference/model.py (6d8cb70) Indexer k_cache FP8 + k_scale_cache FP32 per "
    "128 values; vLLM deepseek_v2.py (002d6073) indexer cache head_dim + head_dim/128 x 4 B")


@dataclass(frozen=True)
class MLA:
    """Multi-head latent attention (DeepSeek-V2/V3, Kimi K2), optionally with DeepSeek
    Sparse Attention (DeepSeek-V3.2, GLM-5).

    The KV cache holds, per token and layer, the compressed latent
    (``kv_lora_rank``) plus the shared rotary key (``qk_rope_head_dim``); at
    decode time the up-projections are absorbed, so attention reads only that.

    **DeepSeek Sparse Attention** (``index_topk > 0``; DeepSeek-V3.2-Exp ``inference/model.py``
    at 6d8cb70, ``Indexer``): a lightning indexer scores every cached token for each query,
    ``I_s = sum_j w_j ReLU(q_j . k_s)`` over ``index_heads`` heads of ``index_head_dim``, from
    its own weights (``wq_b``: ``q_lora_rank x index_heads x index_head_dim`` from the query
    latent; ``wk``: ``hidden x index_head_dim``; ``k_norm``: a LayerNorm, weight and bias;
    ``weights_proj``: ``hidden x index_heads``) and its own key cache (``index_head_dim`` FP8
    values per token, :data:`INDEX_KEY_BYTES`); the query then attends to the ``index_topk``
    tokens it selects (``topk(min(index_topk, end_pos))``), not to the whole cache. The
    indexer's weights are plain (replicated) linears there, as in vLLM ("no tensor parallel,
    just replicated") and TensorRT-LLM (tech blog 15: under attention TP "TP is not applied to
    the indexer layers"), so every tensor-parallel rank holds and runs them whole
    (:meth:`replicated_params`). ``index_topk = 0``: dense MLA (no indexer).

    Attributes
    ----------
    heads : int
    q_lora_rank : int
        0 means queries are projected directly (no low-rank query path).
    kv_lora_rank, qk_nope_head_dim, qk_rope_head_dim, v_head_dim : int
    index_heads, index_head_dim, index_topk : int
        The DSA indexer's heads, head size and the tokens each query attends to; all 0
        (dense MLA) or all >= 1 (needs ``q_lora_rank`` >= 1: the indexer's queries come from
        the query latent).

    Examples
    --------
    >>> dsa = MLA(2, 3, 4, 1, 1, 1, index_heads=2, index_head_dim=4, index_topk=8)
    >>> dsa.indexer_params(10)          # 3x2x4 + 10x4 + 2x4 + 10x2
    92
    >>> dsa.kv_read_tokens(100, 1), dsa.kv_read_tokens(5, 1), dsa.kv_read_tokens(100, 2)
    (8, 6, 16)
    """

    heads: int
    q_lora_rank: int
    kv_lora_rank: int
    qk_nope_head_dim: int
    qk_rope_head_dim: int
    v_head_dim: int
    index_heads: int = 0
    index_head_dim: int = 0
    index_topk: int = 0
    kind = "mla"

    def __post_init__(self):
        _set_ints(self, ("heads", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim",
                         "v_head_dim"), 1)
        _set_ints(self, ("q_lora_rank",), 0)
        dsa = ("index_heads", "index_head_dim", "index_topk")
        _set_ints(self, dsa, 0)
        given = [f for f in dsa if getattr(self, f)]
        if given and len(given) != len(dsa):
            raise SpecError("DeepSeek Sparse Attention needs index_heads, index_head_dim and "
                            "index_topk all >= 1 (or all 0 for dense MLA); got "
                            + ", ".join(f"{f}={getattr(self, f)}" for f in dsa))
        if given and not self.q_lora_rank:
            raise SpecError("DeepSeek Sparse Attention's indexer projects its queries from the "
                            "query latent: it needs q_lora_rank >= 1, got 0")

    @property
    def sparse(self):
        """True for DeepSeek Sparse Attention (an indexer and ``index_topk`` >= 1)."""
        return self.index_topk > 0

    def indexer_params(self, hidden):
        """Weights of one layer's DSA indexer (0 for dense MLA): ``wq_b``, ``wk``, the
        LayerNorm ``k_norm`` (weight and bias) and ``weights_proj``."""
        if not self.sparse:
            return 0
        d, h = self.index_head_dim, self.index_heads
        return self.q_lora_rank * h * d + hidden * d + 2 * d + hidden * h

    def params(self, hidden):
        """Weights of one attention block (projections and their norms, the DSA indexer's)."""
        qk = self.qk_nope_head_dim + self.qk_rope_head_dim
        if self.q_lora_rank:
            q = hidden * self.q_lora_rank + self.q_lora_rank + self.q_lora_rank * self.heads * qk
        else:
            q = hidden * self.heads * qk
        kv = (hidden * (self.kv_lora_rank + self.qk_rope_head_dim) + self.kv_lora_rank
              + self.kv_lora_rank * self.heads * (self.qk_nope_head_dim + self.v_head_dim))
        o = self.heads * self.v_head_dim * hidden
        return q + kv + o + self.indexer_params(hidden)

    def replicated_params(self, hidden):
        """Weights of one attention block that every tensor-parallel rank holds whole: the
        down-projections to the query and KV latents (with the rotary key) and their norms.
        Engines run them replicated, since each rank's heads need the whole latents: vLLM's
        and SGLang's ``deepseek_v2.py`` build ``q_a_proj`` and ``kv_a_proj_with_mqa`` (or
        their fusion ``fused_qkv_a_proj``) as ``ReplicatedLinear`` and only ``q_b_proj``,
        ``kv_b_proj`` (column-parallel) and ``o_proj`` (row-parallel) split; TensorRT-LLM
        runs the same "Fuse_A GEMM" data-parallel, whole on each GPU (tech blog 1,
        "Parallelism Strategy": "Fuse_A GEMM: Data Parallelism 8"). The DSA indexer's
        weights too (:meth:`indexer_params`: plain linears in DeepSeek-V3.2's reference,
        ``ReplicatedLinear`` / ``disable_tp`` in vLLM).

        >>> MLA(2, 3, 4, 1, 1, 1).replicated_params(10)   # 10x3 + 3 + 10x(4+1) + 4
        87
        """
        q = hidden * self.q_lora_rank + self.q_lora_rank if self.q_lora_rank else 0
        return (q + hidden * (self.kv_lora_rank + self.qk_rope_head_dim) + self.kv_lora_rank
                + self.indexer_params(hidden))

    @property
    def kv_elements_per_token(self):
        """Cached latent elements per token and layer: latent plus rotary key (the DSA
        indexer's keys are :attr:`index_key_bytes_per_token`, in their own format)."""
        return self.kv_lora_rank + self.qk_rope_head_dim

    @property
    def index_key_bytes_per_token(self):
        """Bytes of the DSA indexer's cached key per token and layer (0 for dense MLA):
        ``index_head_dim`` x :data:`INDEX_KEY_BYTES`."""
        return self.index_head_dim * INDEX_KEY_BYTES.value if self.sparse else 0.0

    def kv_read_tokens(self, context, q=1):
        """Latent entries the attention kernel reads per sequence when ``q`` query tokens
        decode after ``context`` cached ones: every one, ``context + q``, for dense MLA; under
        DSA each query token attends to its ``index_topk`` selected tokens, so at most
        ``q x index_topk``, and no more than the cache holds (an assumption for ``q > 1``: the
        tokens several queries select are read from HBM once)."""
        n = context + q
        return min(n, q * self.index_topk) if self.sparse else n

    def attended_tokens(self, context):
        """Tokens one query's scores run over: ``context``, or ``min(context, index_topk)``
        under DSA."""
        return min(context, self.index_topk) if self.sparse else context

    def score_flops_per_token(self, context):
        """FLOPs of scores and weighted sum for one query over ``context`` cached tokens.

        With the up-projections absorbed (DeepSeek-V2 report, sec. 2.1.2), each head
        computes scores against ``kv_lora_rank + qk_rope_head_dim`` elements and sums
        ``kv_lora_rank`` values: 2 FLOPs per multiply-add. Under DSA over the
        :meth:`attended_tokens` only; the indexer's own FLOPs are
        :meth:`index_score_flops_per_token`.
        """
        return (2 * self.heads * self.attended_tokens(context)
                * (2 * self.kv_lora_rank + self.qk_rope_head_dim))

    def index_score_flops_per_token(self, context):
        """FLOPs of the DSA indexer's scores for one query over ``context`` cached keys:
        ``2 x index_heads x index_head_dim`` per key (the head-weighted ReLU sum is
        negligible); 0 for dense MLA. DeepSeek's ``fp8_index`` runs them in FP8.

        >>> MLA(2, 3, 4, 1, 1, 1, 2, 4, 8).index_score_flops_per_token(10)
        160
        """
        return 2 * self.index_heads * self.index_head_dim * context if self.sparse else 0

    def kv_shards(self, tp):
        """Ways the cache splits over ``tp`` ranks: 1, every rank needs the whole latent."""
        return 1

    def prefill_score_flops(self, tokens):
        """Attention-score FLOPs of a causal prefill of ``tokens`` tokens, one layer.

        Prefill runs MLA un-absorbed (as multi-head attention with the keys and
        values up-projected: DeepSeek-V2 report sec. 2.1.2; vLLM and SGLang do so
        for prefill): per query-key pair ``2 x heads x (qk_nope + qk_rope)`` for the
        scores and ``2 x heads x v_head_dim`` for the weighted sum; a causal prompt
        has ``tokens (tokens + 1) / 2`` pairs. Under DSA query ``t`` attends to
        ``min(t, index_topk)`` keys and the indexer scores every causal pair
        (:meth:`index_score_flops_per_token`).

        >>> MLA(2, 0, 4, 3, 1, 5).prefill_score_flops(2)    # 3 pairs x 2 x 2 x (4 + 5)
        108
        >>> MLA(2, 1, 4, 3, 1, 5, 1, 2, 1).prefill_score_flops(2)   # 2 pairs x 36 + 3 x 4
        84
        """
        pairs = tokens * (tokens + 1) // 2
        attended = pairs
        if self.sparse:
            k = self.index_topk
            below = min(tokens, k)
            attended = below * (below + 1) // 2 + (tokens - below) * k
        return (2 * self.heads * (self.qk_nope_head_dim + self.qk_rope_head_dim
                                  + self.v_head_dim) * attended
                + self.index_score_flops_per_token(1) * pairs)


@dataclass(frozen=True)
class GQA:
    """Grouped-query attention (``kv_heads == heads`` is plain multi-head attention).

    Attributes
    ----------
    heads, kv_heads, head_dim : int
    """

    heads: int
    kv_heads: int
    head_dim: int
    kind = "gqa"

    def __post_init__(self):
        _set_ints(self, ("heads", "kv_heads", "head_dim"), 1)
        if self.heads % self.kv_heads:
            raise SpecError(f"heads must be a multiple of kv_heads, got heads={self.heads}, "
                            f"kv_heads={self.kv_heads}")

    def params(self, hidden):
        """Weights of one attention block: Q, K, V and output projections."""
        return hidden * self.head_dim * (2 * self.heads + 2 * self.kv_heads)

    def replicated_params(self, hidden):
        """Weights every tensor-parallel rank holds whole: none counted (K/V heads are
        split while ``tp <= kv_heads``; their replication beyond is not modelled)."""
        return 0

    @property
    def kv_elements_per_token(self):
        """Cached elements per token and layer: keys and values of every KV head."""
        return 2 * self.kv_heads * self.head_dim

    def score_flops_per_token(self, context):
        """FLOPs of QK^T and PV for one query over ``context`` tokens (2 per multiply-add)."""
        return 2 * 2 * self.heads * self.head_dim * context

    def kv_shards(self, tp):
        """Ways the cache splits over ``tp`` ranks (KV heads are split, at most ``kv_heads``)."""
        return min(tp, self.kv_heads)

    #: Dense attention: no sparse-attention indexer (the same interface as :class:`MLA`).
    sparse = False
    index_key_bytes_per_token = 0.0

    def indexer_params(self, hidden):
        """0: no indexer."""
        return 0

    def kv_read_tokens(self, context, q=1):
        """Cached entries the attention kernel reads per sequence: all, ``context + q``."""
        return context + q

    def attended_tokens(self, context):
        """Tokens one query's scores run over: ``context``."""
        return context

    def index_score_flops_per_token(self, context):
        """0: no indexer."""
        return 0

    def prefill_score_flops(self, tokens):
        """QK^T and PV FLOPs of a causal prefill of ``tokens`` tokens, one layer.

        >>> GQA(2, 1, 4).prefill_score_flops(2)    # 3 pairs x 2 x 2 x 2 heads x 4
        96
        """
        return 2 * 2 * self.heads * self.head_dim * (tokens * (tokens + 1) // 2)


@dataclass(frozen=True)
class MoEModel:
    """A mixture-of-experts transformer decoder.

    Attributes
    ----------
    name : str
    layers : int
        Transformer blocks.
    dense_layers : int
        How many of them (the first ones) have a dense FFN instead of experts.
    hidden : int
        Model (hidden) size.
    attention : MLA or GQA
    routed_experts : int
        Routed experts per MoE layer.
    experts_per_token : int
        Routed experts each token activates (top-k).
    shared_experts : int
        Experts every token uses, per MoE layer.
    expert_ffn : int
        Intermediate width of one expert (gated: three ``hidden x expert_ffn`` matrices).
    dense_ffn : int
        Intermediate width of a dense layer's FFN.
    vocab : int
    weight_bytes : float
        Bytes per stored weight of everything but the routed experts (1 for FP8,
        2 for BF16), quantization scales included (see :data:`WEIGHT_FORMATS`).
    activation_bytes : float
        Bytes per activation element and per KV-cache element.
    source : str
    hypothetical : bool
        True for a config that describes no published model.
    expert_weight_bytes : float, optional
        Bytes per stored weight of the routed experts, scales included (INT4
        group-32: 0.5625). Default: ``weight_bytes``.
    kv_cache_bytes : float, optional
        Bytes per KV-cache element (1 for an FP8 cache). Default: ``activation_bytes``.
    expert_format : str, optional
        Name of the routed experts' weight format (a key of :data:`WEIGHT_FORMATS`),
        when known: kernels differ by format (e.g. vLLM's INT4 W4A16 grouped-MoE
        GEMMs, see ``analysis.decode_step``'s ``moe_hbm_efficiency``). Given alone it
        sets ``expert_weight_bytes``; given with it, the two must agree.
    ffn_weight_bytes : float, optional
        Bytes per stored weight of the dense layers' FFNs and of the shared experts,
        scales included (NVIDIA's DeepSeek-R1 NVFP4 checkpoint quantizes those with the
        routed experts while attention, router and head stay BF16). Default None:
        ``weight_bytes`` (the resolved figure is :attr:`ffn_bytes_per_weight`).
    weight_format : str, optional
        Name of the format of the weights at ``weight_bytes`` (attention; a key of
        :data:`WEIGHT_FORMATS`): the math their GEMMs run in (:meth:`math_format`). Given,
        ``weight_bytes`` must agree with it. Default None: BF16 math.
    ffn_format : str, optional
        Name of the format of the dense FFNs and shared experts. Given alone it sets
        ``ffn_weight_bytes``; given with it, the two must agree. Default None: as
        ``weight_format`` while ``ffn_weight_bytes`` is None, else BF16 math.
    mtp_format : str, optional
        Name of the format of every weight of the MTP modules when it differs from the main
        model's (NVIDIA's DeepSeek-R1 NVFP4: "bf16", TensorRT-LLM tech blog 1 "3x MTP
        Layers: bf16"; ModelOpt's recipe excludes the MTP layer). Default None: the main
        model's formats. Read by ``decode_step(draft=True)``.
    mtp_modules : int, optional
        Multi-token-prediction modules the checkpoint ships (DeepSeek-V3/R1:
        ``num_nextn_predict_layers = 1``). They are **not** part of ``total_params``
        (published totals exclude them, see :attr:`mtp_params`), nor of the weights the
        decode model reads. Default 0.
    """

    name: str
    layers: int
    dense_layers: int
    hidden: int
    attention: object
    routed_experts: int
    experts_per_token: int
    shared_experts: int
    expert_ffn: int
    dense_ffn: int
    vocab: int
    weight_bytes: float = 1.0
    activation_bytes: float = 2.0
    source: str = ""
    hypothetical: bool = False
    expert_weight_bytes: float = None
    kv_cache_bytes: float = None
    expert_format: str = None
    ffn_weight_bytes: float = None
    mtp_modules: int = 0
    weight_format: str = None
    ffn_format: str = None
    mtp_format: str = None

    def __post_init__(self):
        text_of(self.name, "model name")        # name=5 was kept, and printed as 5
        text_of(self.source, f"model {show_value(self.name)}: source")
        if self.mtp_format is not None:
            _format(self.mtp_format, "mtp_format")
        if self.weight_format is not None:
            _agree("weight_bytes", self.weight_bytes, "weight_format", self.weight_format)
        if self.ffn_format is not None:
            if self.ffn_weight_bytes is None and self.ffn_format != self.weight_format:
                object.__setattr__(self, "ffn_weight_bytes",
                                   _format(self.ffn_format, "ffn_format").bytes_per_weight)
            elif self.ffn_weight_bytes is not None:
                _agree("ffn_weight_bytes", self.ffn_weight_bytes, "ffn_format", self.ffn_format)
        if self.expert_format is not None:
            fmt = _format(self.expert_format, "expert_format")
            if self.expert_weight_bytes is None:
                object.__setattr__(self, "expert_weight_bytes", fmt.bytes_per_weight)
            elif not math.isclose(self.expert_weight_bytes, fmt.bytes_per_weight):
                raise SpecError(f"expert_weight_bytes={show_value(self.expert_weight_bytes)} "
                                f"disagrees with expert_format={show_value(self.expert_format)} "
                                f"({fmt.bytes_per_weight} B/weight)")
        if self.expert_weight_bytes is None:
            object.__setattr__(self, "expert_weight_bytes", self.weight_bytes)
        _set_number(self, "expert_weight_bytes")
        if self.kv_cache_bytes is None:
            object.__setattr__(self, "kv_cache_bytes", self.activation_bytes)
        _set_number(self, "kv_cache_bytes")
        if self.ffn_weight_bytes is not None:   # None: as weight_bytes (kept None, so that
            _set_number(self, "ffn_weight_bytes")                       # replace() follows)
        _set_ints(self, ("mtp_modules",), 0)
        _set_ints(self, ("layers", "hidden", "routed_experts", "experts_per_token", "expert_ffn",
                         "dense_ffn", "vocab"), 1)
        _set_ints(self, ("dense_layers", "shared_experts"), 0)
        _set_number(self, "weight_bytes")
        _set_number(self, "activation_bytes")
        if self.dense_layers > self.layers:
            raise SpecError(f"dense_layers must be <= layers, got dense_layers="
                            f"{self.dense_layers}, layers={self.layers}")
        if self.experts_per_token > self.routed_experts:
            raise SpecError(f"experts_per_token must be <= routed_experts, got "
                            f"experts_per_token={self.experts_per_token}, "
                            f"routed_experts={self.routed_experts}")
        if not isinstance(self.attention, (MLA, GQA)):
            raise kind_error(self.attention, "attention", "MLA or GQA")
        object.__setattr__(self, "hypothetical", flag_of(self.hypothetical, "hypothetical"))
        try:            # huge sizes: an int too large for a float, or inf - inf = nan below
            total = float(self.weight_bytes_total)
        except OverflowError:
            total = math.inf
        if not math.isfinite(total):
            raise SpecError(f"{self.name}: its weights come to more bytes than a float holds: "
                            f"its sizes (layers, hidden, routed_experts, expert_ffn, dense_ffn, "
                            f"vocab, attention) or bytes per weight are too large")

    def math_format(self, part):
        """The math format (a key of ``fabric.MATH_FORMATS``) the GEMMs of ``part`` run in
        on a chip that has tensor cores for it (else BF16: ``ChipSpec.gemm_format``).

        ``part`` is ``"attention"`` (the attention projections, at ``weight_format``),
        ``"ffn"`` (dense FFNs and shared experts), ``"experts"`` (routed experts, at
        ``expert_format``), ``"router"`` or ``"head"``; a part of no stated format runs
        BF16. The router gate and the output head run BF16 always, and so does the
        attention kernel's score math (``"scores"``): DeepSeek-V3 report (arXiv
        2412.19437) sec. 3.3.1 keeps "the embedding module, the output head, MoE gating
        modules, normalization operators, and attention operators" in BF16/FP32, and every
        preset's release keeps them unquantized (Kimi K2.5 INT4 ignore list: lm_head;
        NVIDIA DeepSeek-R1 NVFP4: router and head BF16).

        >>> m = model_config("deepseek-r1-nvfp4")
        >>> [m.math_format(p) for p in ("attention", "ffn", "experts", "router", "head")]
        ['bf16', 'fp4', 'fp4', 'bf16', 'bf16']
        >>> model_config("kimi-k2.5-int4").math_format("experts")
        'bf16'
        """
        name = self.part_format(part)
        return "bf16" if name is None else WEIGHT_FORMATS[name].math

    def part_format(self, part):
        """The weight format (a key of :data:`WEIGHT_FORMATS`) the weights of ``part`` are
        stored in, or ``None`` for 16-bit weights of no stated format (the router gate, the
        output head and the attention scores always: see :meth:`math_format`; ``part`` as
        there).

        >>> m = model_config("deepseek-r1")
        >>> m.part_format("attention"), m.part_format("router")
        ('fp8-block128', None)
        """
        if check_choice(part, "part", _FORMAT_PARTS) in ("router", "head", "scores"):
            return None
        if part == "attention":
            return self.weight_format
        if part == "ffn":
            return (self.ffn_format if self.ffn_format is not None else
                    self.weight_format if self.ffn_weight_bytes is None else None)
        return (self.expert_format if self.expert_format is not None else
                self.weight_format if self.expert_weight_bytes == self.weight_bytes else None)

    # -- structure --------------------------------------------------------------------

    def attention_params_per_rank(self, tp):
        """Attention weights of one block one of ``tp`` tensor-parallel ranks holds and
        reads: the replicated latent down-projections whole (``MLA.replicated_params``), the
        rest split ``tp`` ways (exactly :attr:`attention_params` at ``tp = 1``; the layer's two
        hidden-size RMSNorms, 2 x hidden weights, stay in the split part as before: engines
        hold them whole, a negligible difference).

        >>> m = model_config("deepseek-v3")
        >>> round(m.attention_params_per_rank(8) / 1e6, 2), round(m.attention_params / 8 / 1e6, 2)
        (36.64, 23.39)
        """
        tp = check_count(tp, "tp", 1)
        if tp == 1:
            return self.attention_params
        rep = self.attention.replicated_params(self.hidden)
        return rep + (self.attention_params - rep) / tp

    @property
    def moe_layers(self):
        """Layers with experts."""
        return self.layers - self.dense_layers

    @property
    def expert_params(self):
        """Weights of one expert (gated FFN: three matrices)."""
        return 3 * self.hidden * self.expert_ffn

    @property
    def attention_params(self):
        """Weights of one attention block plus the layer's two RMSNorms."""
        return self.attention.params(self.hidden) + 2 * self.hidden

    @property
    def dense_ffn_params(self):
        """Weights of one dense FFN."""
        return 3 * self.hidden * self.dense_ffn

    @property
    def router_params(self):
        """Router gate and per-expert bias of one MoE layer."""
        return self.hidden * self.routed_experts + self.routed_experts

    @property
    def embedding_params(self):
        """Input embedding table (not active: a lookup)."""
        return self.vocab * self.hidden

    @property
    def head_params(self):
        """Output head and final norm."""
        return self.vocab * self.hidden + self.hidden

    @property
    def total_params(self):
        """Every weight of the model."""
        return (self.layers * self.attention_params
                + self.dense_layers * self.dense_ffn_params
                + self.moe_layers * (self.router_params
                                     + (self.routed_experts + self.shared_experts)
                                     * self.expert_params)
                + self.embedding_params + self.head_params)

    @property
    def active_params(self):
        """Weights one token uses (see the module docstring for the convention)."""
        return (self.layers * self.attention_params
                + self.dense_layers * self.dense_ffn_params
                + self.moe_layers * (self.router_params
                                     + (self.experts_per_token + self.shared_experts)
                                     * self.expert_params)
                + self.head_params)

    @property
    def mtp_params(self):
        """Weights of the checkpoint's multi-token-prediction modules (not in ``total_params``).

        One module (DeepSeek-V3 report, arXiv 2412.19437 sec. 2.2; the Hugging Face
        checkpoint's layer ``num_hidden_layers``): a MoE transformer block, the
        projection ``2 hidden -> hidden``, two RMSNorms on its inputs and the head's
        norm, plus the checkpoint's own copies of the embedding and output head
        (shared with the main model at run time, stored again in the checkpoint).
        DeepSeek-V3's README: 685B on Hugging Face = 671B main model + 14B MTP module.

        >>> round(model_config("deepseek-v3").mtp_params / 1e9, 1)
        13.5
        """
        block = (self.attention_params + self.router_params
                 + (self.routed_experts + self.shared_experts) * self.expert_params)
        per_module = (block + 2 * self.hidden * self.hidden + 3 * self.hidden
                      + self.embedding_params + self.vocab * self.hidden)
        return self.mtp_modules * per_module

    @property
    def routed_expert_bytes(self):
        """Bytes of one routed expert, at ``expert_weight_bytes`` per weight."""
        return self.expert_params * self.expert_weight_bytes

    @property
    def ffn_bytes_per_weight(self):
        """Bytes per weight of the dense FFNs and shared experts: ``ffn_weight_bytes``, or
        ``weight_bytes`` when that is None."""
        return self.weight_bytes if self.ffn_weight_bytes is None else self.ffn_weight_bytes

    @property
    def dense_ffn_bytes(self):
        """Bytes of one dense layer's FFN, at :attr:`ffn_bytes_per_weight`."""
        return self.dense_ffn_params * self.ffn_bytes_per_weight

    @property
    def shared_expert_bytes(self):
        """Bytes of one shared expert, at :attr:`ffn_bytes_per_weight`."""
        return self.expert_params * self.ffn_bytes_per_weight

    def _bytes(self, params, routed_experts, embedding):
        """``params`` weights of which ``routed_experts`` experts per MoE layer are routed, the
        router gates and head (and the ``embedding`` table, when counted) among them."""
        routed = self.moe_layers * routed_experts * self.expert_params
        ffn = (self.dense_layers * self.dense_ffn_params
               + self.moe_layers * self.shared_experts * self.expert_params)
        if self.ffn_bytes_per_weight == self.weight_bytes:   # the expression of before, bit for bit
            out = (params - routed) * self.weight_bytes + routed * self.expert_weight_bytes
        else:
            out = ((params - routed - ffn) * self.weight_bytes + ffn * self.ffn_bytes_per_weight
                   + routed * self.expert_weight_bytes)
        unquantized = self.part_bytes("router")
        if unquantized != self.weight_bytes:    # the 16-bit parts counted at weight_bytes above
            out += (unquantized - self.weight_bytes) * self.unquantized_params(embedding)
        return out

    def unquantized_params(self, embedding=True):
        """Weights of :data:`UNQUANTIZED_PARTS`: every MoE layer's router gate, the output head
        and (``embedding``) the input embedding table.

        >>> round(model_config("deepseek-v3").unquantized_params() / 1e9, 3)
        1.96
        """
        return (self.moe_layers * self.router_params + self.head_params
                + (self.embedding_params if embedding else 0))

    @property
    def weight_bytes_total(self):
        """Bytes of all weights: routed experts at ``expert_weight_bytes``, dense FFNs and
        shared experts at ``ffn_weight_bytes``, the router gates, head and embedding at 16
        bits (:meth:`part_bytes`), the rest at ``weight_bytes``.

        >>> round(model_config("deepseek-r1").weight_bytes_total / 1e9, 2)   # FP8 + BF16 parts
        673.15
        """
        return self._bytes(self.total_params, self.routed_experts, embedding=True)

    @property
    def active_weight_bytes(self):
        """Bytes of the weights one token uses (each part at its own format)."""
        return self._bytes(self.active_params, self.experts_per_token, embedding=False)

    def part_bytes(self, part):
        """Bytes per stored weight of model part ``part``: ``"attention"`` (every weight of no
        other part: ``weight_bytes``), ``"ffn"`` (dense FFNs and shared experts:
        :attr:`ffn_bytes_per_weight`), ``"experts"`` (``expert_weight_bytes``), or one of
        :data:`UNQUANTIZED_PARTS` (``"router"``, ``"head"``, ``"embedding"``): 16 bits (BF16) in
        every model, as their GEMMs run BF16 (:meth:`math_format`). Each preset's release
        keeps them so: DeepSeek-V3 / R1's FP8 checkpoints quantize only the ``Linear``
        projections (deepseek-ai/DeepSeek-V3 ``inference/model.py`` at 1ea5a1a7:
        ``Linear.dtype`` FP8 for ``Linear`` layers, while the ``Gate`` weight is an
        ``nn.Parameter`` and the ``ParallelEmbedding`` a table at the default dtype, BF16, and the
        head a ``ColumnParallelLinear(dtype=torch.get_default_dtype())``); DeepSeek-V3.2's the
        same (DeepSeek-V3.2-Exp ``inference/model.py`` at 6d8cb70: "lm_head in the checkpoint is
        stored in bf16", the gate an ``nn.Parameter``); Kimi K2's release is that block-FP8
        format on that architecture (its README: "Our model checkpoints are stored in the
        block-fp8 format"; config ``quantization_config`` fp8 e4m3, ``weight_block_size``
        [128, 128], as DeepSeek-V3's: the gate, head and embedding taken as BF16 with it, an
        inference from the shared format); Kimi K2.5 INT4 (``lm_head`` in its
        ``quantization_config`` ignore list, the gate no ``Linear``), NVIDIA's DeepSeek-R1
        NVFP4 (tech blog 1: "RouterGEMM bf16"; ModelOpt's recipe disables ``*head*``, the
        embedding and gate not linear layers) and GLM-5 (BF16 release) keep every such part
        BF16 already.

        >>> m = model_config("deepseek-r1")
        >>> [m.part_bytes(p) for p in ("attention", "experts", "router", "head", "embedding")]
        [1.000244140625, 1.000244140625, 2.0, 2.0, 2.0]
        """
        if check_choice(part, "part", _BYTES_PARTS) in UNQUANTIZED_PARTS:
            return WEIGHT_FORMATS["bf16"].bytes_per_weight
        if part == "attention":
            return self.weight_bytes
        if part == "ffn":
            return self.ffn_bytes_per_weight
        return self.expert_weight_bytes

    @property
    def kv_bytes_per_token(self):
        """KV-cache bytes per token, summed over all layers (``kv_cache_bytes`` each), with
        the DSA indexer's cached keys (``MLA.index_key_bytes_per_token``) where there are."""
        att = self.attention
        per_layer = att.kv_elements_per_token * self.kv_cache_bytes
        if att.sparse:
            per_layer += att.index_key_bytes_per_token
        return self.layers * per_layer

    def kv_bytes_per_chip(self, tokens, tp=1):
        """KV-cache bytes of ``tokens`` cached tokens on one of ``tp`` tensor-parallel ranks.

        MLA keeps the whole latent on every rank; GQA splits KV heads (see ``kv_shards``).

        >>> m = model_config("kimi-k2")
        >>> m.kv_bytes_per_chip(1000, tp=8) == 1000 * m.kv_bytes_per_token
        True
        """
        return tokens * self.kv_bytes_per_token / self.attention.kv_shards(tp)

    def parameters(self):
        """The config as :class:`~fabric.Parameter` records, for a report."""
        src = self.source or "user config"
        resolved = {"ffn_weight_bytes": self.ffn_bytes_per_weight}
        out = [Parameter(f"{self.name}.{f.name}", resolved.get(f.name, getattr(self, f.name)),
                         "B" if f.name.endswith("_bytes") else "", src)
               for f in dataclasses.fields(self)
               if f.name not in ("name", "attention", "source", "hypothetical")]
        out += [Parameter(f"{self.name}.attention.{f.name}", getattr(self.attention, f.name),
                          "", src) for f in dataclasses.fields(self.attention)
                if self.attention.sparse or not f.name.startswith("index_")]
        if self.attention.sparse:
            out.append(INDEX_KEY_BYTES)
        return tuple(out)


_DSV3_MLA = MLA(heads=128, q_lora_rank=1536, kv_lora_rank=512, qk_nope_head_dim=128,
                qk_rope_head_dim=64, v_head_dim=128)
_K2_MLA = dataclasses.replace(_DSV3_MLA, heads=64)

_GLM5_MLA = MLA(heads=64, q_lora_rank=2048, kv_lora_rank=512, qk_nope_head_dim=192,
                qk_rope_head_dim=64, v_head_dim=256, index_heads=32, index_head_dim=128,
                index_topk=2048)
_DSV32_MLA = dataclasses.replace(_DSV3_MLA, index_heads=64, index_head_dim=128, index_topk=2048)

_KIMI_K2 = MoEModel(
    "kimi-k2", layers=61, dense_layers=1, hidden=7168, attention=_K2_MLA,
    routed_experts=384, experts_per_token=8, shared_experts=1, expert_ffn=2048,
    dense_ffn=18432, vocab=163840, weight_bytes=1.0, activation_bytes=2.0, weight_format="fp8",
    source="moonshotai/Kimi-K2-Instruct config.json (kimi_k2); MoonshotAI/Kimi-K2 README "
           "(1T total, 32B active); FP8 weights as shipped, BF16 activations and KV cache")

_BF16 = WEIGHT_FORMATS["bf16"].bytes_per_weight
_K25_SOURCE = ("Kimi K2.5 language model = kimi_k2 / DeepSeek-V3 architecture with the Kimi K2 "
               "fields (moonshotai/Kimi-K2-Instruct config.json; vLLM kimi_k25 runs it as "
               "DeepseekV2ForCausalLM); ")

_DEEPSEEK_R1 = MoEModel(
    "deepseek-r1", layers=61, dense_layers=3, hidden=7168, attention=_DSV3_MLA,
    routed_experts=256, experts_per_token=8, shared_experts=1, expert_ffn=2048,
    dense_ffn=18432, vocab=129280,
    weight_bytes=WEIGHT_FORMATS["fp8-block128"].bytes_per_weight, activation_bytes=2.0,
    mtp_modules=1, weight_format="fp8-block128",
    source="deepseek-ai/DeepSeek-R1 config.json (DeepSeek-V3 architecture, same fields; "
           "num_nextn_predict_layers 1); FP8 weights with one FP32 scale per 128x128 block "
           "(weight_block_size [128, 128]); router gates, embedding and head BF16 as in the "
           "checkpoint (MoEModel.part_bytes); BF16 activations and KV cache")

MODELS = {m.name: m for m in (
    _KIMI_K2,
    dataclasses.replace(
        _KIMI_K2, name="kimi-k2.5-int4", weight_bytes=_BF16, weight_format="bf16",
        expert_format="int4-g32",
        expert_weight_bytes=WEIGHT_FORMATS["int4-g32"].bytes_per_weight,
        source=_K25_SOURCE + "native INT4 release: routed experts INT4 group 32 with BF16 "
               "scales (0.5625 B/weight), attention, shared experts, dense MLP and head BF16 "
               "(Kimi-K2-Thinking/K2.5 config.json quantization_config ignore list); BF16 "
               "activations and KV cache"),
    dataclasses.replace(
        _KIMI_K2, name="kimi-k2.5-nvfp4", weight_bytes=_BF16, weight_format="bf16",
        expert_format="nvfp4",
        expert_weight_bytes=WEIGHT_FORMATS["nvfp4"].bytes_per_weight, kv_cache_bytes=1.0,
        source=_K25_SOURCE + "routed experts requantized to NVFP4 (FP8 scale per 16: 0.5625 "
               "B/weight; NVIDIA 'Introducing NVFP4' blog); the rest BF16 (assumption: as in "
               "the INT4 release); BF16 activations; FP8 KV cache (NVIDIA ModelOpt NVFP4 "
               "checkpoints set kv_cache_quant_algo FP8 in hf_quant_config.json, which vLLM's "
               "kv_cache_dtype auto follows)"),
    MoEModel(
        "deepseek-v3", layers=61, dense_layers=3, hidden=7168, attention=_DSV3_MLA,
        routed_experts=256, experts_per_token=8, shared_experts=1, expert_ffn=2048,
        dense_ffn=18432, vocab=129280, weight_bytes=1.0, activation_bytes=2.0,
        mtp_modules=1, weight_format="fp8",
        source="deepseek-ai/DeepSeek-V3 inference/configs/config_671B.json (dtype fp8); "
               "arXiv 2412.19437 (671B total, 37B activated); one MTP module "
               "(num_nextn_predict_layers 1; README: 685B = 671B + 14B MTP); BF16 activations "
               "and KV cache"),
    _DEEPSEEK_R1,
    MoEModel(
        "deepseek-r1-nvfp4", layers=61, dense_layers=3, hidden=7168, attention=_DSV3_MLA,
        routed_experts=256, experts_per_token=8, shared_experts=1, expert_ffn=2048,
        dense_ffn=18432, vocab=129280, weight_bytes=_BF16, activation_bytes=2.0,
        expert_format="nvfp4", ffn_weight_bytes=WEIGHT_FORMATS["nvfp4"].bytes_per_weight,
        mtp_modules=1, weight_format="bf16", ffn_format="nvfp4", mtp_format="bf16",
        source="nvidia/DeepSeek-R1-FP4 (NVIDIA TensorRT Model Optimizer NVFP4 checkpoint of "
               "deepseek-ai/DeepSeek-R1; DeepSeek-V3 architecture fields); precision per NVIDIA "
               "TensorRT-LLM tech blog 1 'Precision Strategy' table: attention BF16, dense FFNs "
               "and MoE FFNs (routed and shared experts) NVFP4, router GEMM BF16, MTP layers "
               "BF16; the DeepSeek-R1-FP4-v2 card: v2 'additionally quantizes the wo module in "
               "attention layers' (v1 leaves attention unquantized); NVIDIA's recipe "
               "(TensorRT-Model-Optimizer examples/deepseek/ptq.py): '*head*' and '*attn*' "
               "disabled, MTP layer excluded, embedding and router gate not linear layers, so "
               "BF16; NVFP4 = E2M1 + FP8 E4M3 scale "
               "per 16 (0.5625 B/weight; per-tensor FP32 scale negligible); BF16 activations "
               "and KV cache"),
    MoEModel(
        "glm-5", layers=78, dense_layers=3, hidden=6144, attention=_GLM5_MLA,
        routed_experts=256, experts_per_token=8, shared_experts=1, expert_ffn=2048,
        dense_ffn=12288, vocab=154880, weight_bytes=_BF16, activation_bytes=2.0,
        mtp_modules=1, weight_format="bf16",
        source="zai-org/GLM-5 (GlmMoeDsaForCausalLM, BF16): Hugging Face transformers "
               "GlmMoeDsaConfig (models/glm_moe_dsa/configuration_glm_moe_dsa.py, checkpoint "
               "zai-org/GLM-5): vocab 154880, hidden 6144, intermediate 12288, "
               "moe_intermediate 2048, 78 layers, first_k_dense_replace 3, 64 heads, "
               "q_lora_rank 2048, kv_lora_rank 512, qk_nope 192, qk_rope 64, v_head 256, 256 "
               "routed experts, top-8, 1 shared; one MTP layer (modeling: "
               "model.layers.78.* ignored on load); DeepSeek Sparse Attention: index_n_heads 32, "
               "index_head_dim 128, index_topk 2048 (the same config; indexer weights wq_b, wk, "
               "k_norm, weights_proj as DeepSeek-V3.2's); zai-org GLM-5 README: 744B total, 40B "
               "activated; BF16 activations and KV cache; indexer keys FP8 + FP32 scale per 128 "
               "(models.dsa.index_key_bytes, DeepSeek-V3.2's format: an assumption)"),
    dataclasses.replace(
        _DEEPSEEK_R1, name="deepseek-v3.2", attention=_DSV32_MLA,
        source="deepseek-ai/DeepSeek-V3.2 config.json (DeepseekV32ForCausalLM: the DeepSeek-V3 "
               "fields, first_k_dense_replace 3, num_nextn_predict_layers 1, plus index_n_heads "
               "64, index_head_dim 128, index_topk 2048; quantization_config fp8 e4m3, "
               "weight_block_size [128, 128]) as copied in public code; the same index fields "
               "are the ModelArgs defaults of deepseek-ai/DeepSeek-V3.2-Exp inference/model.py "
               "(6d8cb70), whose Indexer gives the weights (wq_b, wk, k_norm, weights_proj) and "
               "the FP8 key cache; every weight counted at the FP8 block-128 bytes but the router "
               "gates, embedding and head, BF16 (MoEModel.part_bytes; the indexer's "
               "weights_proj is BF16 in the checkpoint too, 0.46M per layer: not modelled); "
               "BF16 activations and latent KV cache"),
    dataclasses.replace(
        _KIMI_K2, name="hypothetical-2.8t", routed_experts=1056, hypothetical=True,
        source="HYPOTHETICAL: kimi-k2 with routed experts scaled 384 -> 1056 to reach the "
               "seed article's reported 2.8T scale; describes no published model"),
)}


def model_config(name):
    """Return the :class:`MoEModel` called ``name``, or read it from a ``.toml`` path.

    A :class:`MoEModel` passes through.

    Parameters
    ----------
    name : str or MoEModel
        A model of :data:`MODELS` (``"deepseek-v3"``, ``"kimi-k2"``, ...) or a path ending in
        ``.toml`` (:func:`load_model_toml`).

    Returns
    -------
    MoEModel

    Raises
    ------
    SpecError
        For a name no model has.

    Examples
    --------
    >>> model_config("kimi-k2").routed_experts
    384
    >>> model_config("gpt-5")
    Traceback (most recent call last):
    ...
    fabric.SpecError: unknown model 'gpt-5'; known: deepseek-r1, deepseek-r1-nvfp4, deepseek-v3, deepseek-v3.2, glm-5, hypothetical-2.8t, kimi-k2, kimi-k2.5-int4, kimi-k2.5-nvfp4 (or a path to a .toml file)
    """
    if isinstance(name, MoEModel):
        return name
    if isinstance(name, str) and name in MODELS:
        return MODELS[name]
    if isinstance(name, os.PathLike) or (isinstance(name, str) and name.endswith(".toml")):
        return load_model_toml(name)
    raise SpecError(unknown_fault(name, "model", MODELS, " (or a path to a .toml file)"))


_ATTENTION = {"mla": MLA, "gqa": GQA}


def load_model_toml(path):
    """Read a user-defined :class:`MoEModel` from a TOML file.

    The top-level keys are the :class:`MoEModel` fields; the ``[attention]``
    table has ``type = "mla"`` or ``"gqa"`` and that class's fields. Unknown or
    missing keys are errors naming them.

    Parameters
    ----------
    path : str or path-like

    Raises
    ------
    SpecError
        On a missing or unknown key, a bad value, malformed TOML, or a file that is not
        UTF-8 text (a byte order mark is accepted).
    OSError
        If the file cannot be read.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> lines = ['name = "small"', "layers = 4", "dense_layers = 1", "hidden = 64",
    ...          "routed_experts = 8", "experts_per_token = 2", "shared_experts = 1",
    ...          "expert_ffn = 32", "dense_ffn = 128", "vocab = 100",
    ...          "[attention]", 'type = "gqa"', "heads = 4", "kv_heads = 2", "head_dim = 16"]
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = pathlib.Path(folder, "small.toml")
    ...     _ = path.write_text("\\n".join(lines), encoding="utf-8")
    ...     m = load_model_toml(path)
    >>> m.name, m.layers, type(m.attention).__name__, m.total_params
    ('small', 4, 'GQA', 254552)
    """
    data = read_toml(read_text(path), path)     # SpecError where it is not UTF-8 or TOML
    att = data.pop("attention", None)
    if not isinstance(att, dict):
        raise SpecError(f"{path}: needs an [attention] table with type = 'mla' or 'gqa'")
    att = dict(att)
    kind = att.pop("type", None)
    if kind not in _ATTENTION:
        raise SpecError(f"{path}: " + choice_fault(kind, "attention.type", _ATTENTION))
    cls = _ATTENTION[kind]
    attention = _build(cls, att, f"{path} [attention]")
    data.setdefault("name", str(path))
    data.setdefault("source", f"user config {path}")
    data["attention"] = attention
    return _build(MoEModel, data, str(path))


def _build(cls, values, where):
    names = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(values) - names)
    if unknown:
        raise SpecError(f"{where}: " + unknown_fault(unknown, "keys", names))
    required = {f.name for f in dataclasses.fields(cls)
                if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING}
    missing = sorted(required - set(values))
    if missing:
        raise SpecError(f"{where}: missing keys {missing}")
    try:
        return cls(**values)
    except (TypeError, SpecError) as e:     # a bad value: the file names where it is
        raise SpecError(f"{where}: {e}") from e
