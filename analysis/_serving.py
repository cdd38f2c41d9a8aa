"""Serving on a fabric: the throughput-interactivity frontier, single-user speed, cost per token.

:func:`serving_frontier` sweeps, for one model on one system, the concurrency
(batch) x the parallel layout x speculative-decoding settings, and returns the
Pareto frontier of **tokens per second per GPU** (y) against **tokens per second
per user** (x), the plot public dashboards publish. Every point carries its
layout, batch, per-output-token time breakdown and its memory fit.

The pieces, each from the layer below (nothing here re-models a decode step):

* **Decode step**: :func:`analysis.decode_step` (weights and KV read, compute,
  dispatch/combine and tensor-parallel collectives on the fabric, launch
  overheads), at the mean context of a request's output, ``isl + osl / 2``
  (the KV cache grows linearly while it decodes). Keyword arguments the caller
  gives (``runtime=``, ``overlap=``, ``hbm_efficiency=`` ...) pass straight to it.
* **Speculative decoding**: a verification step with ``k + 1`` tokens per
  sequence (:func:`analysis.decode_step`), ``k`` draft steps (each one MTP block, its
  projection and the head: ``decode_step(draft=True)``; or ``draft_cost`` plain steps
  each, when given), and Leviathan et al.'s expected tokens per cycle
  (:func:`analysis.expected_accepted_tokens`), as :func:`analysis.speculative_decode`
  composes them; a request of ``osl`` tokens takes :func:`expected_cycles` cycles (its
  last cycle emits no more tokens than are left).
* **Prefill** (:func:`prefill_time`): a request's prompt on the same instance,
  ``max(FLOPs / (chips x peak x efficiency), fullest chip's weights / HBM)``
  (each GEMM's FLOPs at the dense peak of its math format times its published compute
  efficiency, the rule decode prices its own GEMMs by: :func:`prefill_gemm_efficiency`;
  the roofline where none is published)
  plus its tensor-parallel all-reduces and expert dispatch/combine, costed on the
  fabric by ``analysis.cost``. Aggregated serving under attention data parallelism
  prefills one prompt at a time on its attention group (TensorRT-LLM tech blog 10's
  in-flight batching baseline) unless ``adp_balance=True``; ``dp`` prompts prefilled at
  once (that, or disaggregated prefill) are one forward pass, one weight read and one set
  of kernels shared by them (:attr:`PrefillTime.prompts`).
* **Memory fit**: weights plus the KV cache of the batch at the full context
  ``isl + osl`` must fit in :data:`USABLE_HBM_FRACTION` of HBM on the fullest chip.

Serving modes and the definitions of "per GPU" (every result says which it uses):

* ``"aggregated"`` (continuous batching, prefill interleaved on the decode GPUs,
  as vLLM and SGLang run one node): ``B`` users share an instance; in the time
  ``R`` in which each of them finishes a request, the instance prefills ``B``
  prompts and runs ``osl / E`` decode cycles (``E`` tokens per cycle), so
  ``R = B T_prefill + (osl / E) T_cycle`` (work-conserving time sharing), less what
  the prompts' chunks share with the decode steps they ride on: an engine that runs
  decodes and a prompt chunk in one forward pass (vLLM V1, TensorRT-LLM's in-flight
  batching; not SGLang by default, :data:`MIXED_STEP_BUDGET`) reads the weights once
  for both (:func:`shared_weight_read`), so ``R = B (T_prefill - S) + (osl / E) T_cycle``
  with ``S`` the saving over a prompt's chunks. A prompt split into chunks (its step's room
  beside the other requests' decode tokens, then the rest) costs each chunk as a pass of its
  own, at least one read of the weights it touches (:meth:`PrefillTime.chunk_seconds`);
  ``T_prefill`` is their sum. A user sees ``TTFT = T_prefill - S`` and
  ``osl`` tokens in ``R - TTFT``. An engine that runs a prompt only whole (TensorRT-LLM by
  default, :data:`CHUNKED_PREFILL`) admits one only while the rank's generating requests
  leave ``isl`` tokens of its budget: above that cap (:attr:`ServingPoint.admission_cap`) a
  rank runs the cap's requests, the others wait, and ``R`` and the TTFT grow by the queue,
  ``R x (B / running - 1)`` (Little's law). A prompt's pass, mixed or on its own, runs without the
  decode CUDA graph (TensorRT-LLM runs mixed iterations outside its generation-only graph by
  default, its piecewise graphs being off; vLLM runs a step above its largest capture size
  eagerly): each chunk adds the kernel launches its own eager pass leaves exposed
  (:func:`eager_pass_seconds`: launches are asynchronous, so they hide behind long kernels;
  the merged step is at least as long, so this bounds its exposure from above; its decode
  part keeps the graph's per-kernel boundaries, a small over-charge).
* ``"disaggregated"`` (prefill on other GPUs, as in the lmsys large-scale EP
  deployment): the decode instance runs cycles only, ``R = (osl / E) T_cycle``;
  the prefill GPUs that keep up with it are ``(B / R) T_prefill n`` (requests per
  second x GPU-seconds of prefill each).

``definition`` picks the y of the frontier (all three are on every point):

* ``"total-per-gpu"``: (input + output) tokens per second over all GPUs, prefill
  ones included (SemiAnalysis InferenceX);
* ``"output-per-gpu"``: output tokens per second over all GPUs;
* ``"output-per-decode-gpu"``: output tokens per second per decode GPU (lmsys).

Tokens per second per user are ``osl / (R - T_prefill)`` (aggregated) or
``osl / R`` (disaggregated): one over InferenceX's "TPOT" (the time between a
user's output tokens, other users' prefills included when they interleave).

A benchmark run (:func:`closed_loop_run`): what a client such as vLLM's
``benchmark_serving.py`` (InferenceX's harness) measures: a finite list of requests with
their own lengths, at most ``C`` in flight, the engine stepping (decode tokens plus prompt
chunks in its token budget) through the cold start and the drain at the end, per-request
TPOTs averaged and tokens counted over the run's wall time. The steady state above is its
limit with many requests per slot.

Cost and power (:func:`serving_cost`): ``$ per million tokens = $ per GPU-hour /
(tokens/s per GPU x 3600 / 1e6)`` and ``tokens/s per MW = tokens/s per GPU /
(all-in kW per GPU / 1000)``, from :data:`TCO` (SemiAnalysis' TCO model as
published in the InferenceX app) or, for a system with no published price, from a
chip price plus the fabric's bill of materials (``analysis.bill_of_materials``).

Sources of every figure used here (TCO table, weight formats, MTP acceptance,
usable HBM) and of the published serving points the model is
checked against: docs/sources.md s.8.

Examples
--------
>>> import topologies
>>> f = topologies.build("switch:8,planes=2,links=9,tech=nvlink5,chip=b200")
>>> fr = serving_frontier("kimi-k2", f, isl=1024, osl=1024, batches=(1, 16),
...                       layouts=("tp=8",), speculative=((0, 0.0),))
>>> [p.batch for p in fr.points]
    [1, 16]
>>> fr.points[0].tokens_per_s_gpu == fr.points[0].total_tokens_per_s_gpu
True
"""

import dataclasses
import functools
import heapq
import inspect
import io
import math
import operator
import pickle
import sys
import types
from dataclasses import dataclass

from fabric import Fabric, Parameter, RoutingError, SpecError, chip_spec, exchange_kernel
from fabric._fabric_arg import fabric_arg
from fabric._units import (
    check_choice,
    check_count,
    check_fraction,
    check_number,
    error_for,
    flag_of,
    is_finite,
    is_int,
    is_real,
    items_of,
    kind_error,
    sequence_of,
    show_value,
    text_of,
)

from ._decode import (
    DECODE_HBM_EFFICIENCY,
    GRAPH_KERNEL_OVERHEAD,
    KERNEL_CLASSES,
    KERNEL_FLOORS,
    KERNELS,
    LAUNCH_OVERHEAD,
    TWO_BATCH,
    check_engine,
    check_trtllm_release,
    collective_holds_starts,
    collective_seconds,
    decode_step,
    engine_collective,
    expected_active_experts,
    fabric_chip,
    gather_exchange_seconds,
    instance_chips,
    parse_layout,
    slowest_group_seconds,
    trtllm_gather_element_bytes,
    trtllm_gathers,
    trtllm_projection_shapes,
    trtllm_router_shape,
    unreached_pair,
)
from ._gemm import (
    GEMM_COMPUTE_EFFICIENCY,
    MEASURED_MOE_LOCAL_EXPERTS,
    gemm_compute_efficiency,
    grouped_gemm_rate,
)
from ._gemm_measured import trtllm_gemm_max_rows, trtllm_gemm_time
from ._mla_measured import mla_context_max_isl, mla_context_time
from ._models import model_config
from ._speculative import expected_accepted_tokens

__all__ = [
    "CHUNKED_PREFILL",
    "DEFAULT_SPECULATIVE",
    "DEFINITIONS",
    "MIXED_STEP_BUDGET",
    "MTP_ACCEPTANCE",
    "PREFILL_GEMM_KIND",
    "TCO",
    "TRTLLM_MAX_NUM_TOKENS",
    "USABLE_HBM_FRACTION",
    "VLLM_MAX_BATCHED_TOKENS",
    "VLLM_MAX_CUDAGRAPH_SIZE",
    "ClosedLoopRun",
    "PrefillTime",
    "ServingFrontier",
    "ServingPoint",
    "SingleUserSpeed",
    "TcoEntry",
    "candidate_layouts",
    "closed_loop_run",
    "cost_per_million_tokens",
    "eager_pass_seconds",
    "expected_cycles",
    "instance_sizes",
    "pareto_front",
    "prefill_gemm_efficiency",
    "prefill_time",
    "serving_cost",
    "serving_frontier",
    "serving_point",
    "shared_weight_read",
    "single_user_speed",
    "speed_limits",
    "step_budget",
    "tokens_per_s_per_mw",
    "vllm_graph_batch",
]

#: What "tokens per second per GPU" means, by name.
DEFINITIONS = {
    "total-per-gpu": "input + output tokens per second over all GPUs, prefill ones included "
                     "(SemiAnalysis InferenceX)",
    "output-per-gpu": "output tokens per second over all GPUs, prefill ones included",
    "output-per-decode-gpu": "output tokens per second per decode GPU, prefill GPUs not counted "
                             "(lmsys large-scale EP blog)",
}

MODES = ("aggregated", "disaggregated")

#: Fraction of HBM a serving engine lets weights and KV cache use.
USABLE_HBM_FRACTION = Parameter(
    "serving.usable_hbm_fraction", 0.9, "",
    "vLLM's default gpu_memory_utilization = 0.9 (vLLM engine arguments documentation): the "
    "rest is activations, CUDA graphs and workspace")

#: The kind of GEMM (``analysis.GEMM_KINDS``) each model part's prefill GEMMs are: the
#: routed experts run DeepGEMM's contiguous-layout grouped GEMMs ("for ... inference
#: prefilling", its README), every other part plain GEMMs. (Decode runs its routed experts
#: as masked grouped GEMMs: ``"grouped"``.) The attention scores have no GEMM kind: they run
#: at the roofline, as decode's do.
PREFILL_GEMM_KIND = {"attention": "dense", "ffn": "dense", "router": "dense",
                     "experts": "contiguous", "head": "dense"}


def prefill_gemm_efficiency(chip, math, part, efficiency=None):
    """Compute efficiency of a prefill's GEMMs of model part ``part`` running in math format
    ``math`` (as :func:`analysis.decode_step` prices its own, one rule for both): a given
    ``efficiency`` for every GEMM; else the published one of the chip's generation, the
    format and the part's kind (:data:`PREFILL_GEMM_KIND`:
    :func:`analysis.gemm_compute_efficiency`); else 1, the roofline (none is published:
    BF16 anywhere, Blackwell's formats, the attention scores), an optimistic bound.

    Parameters
    ----------
    chip : str or fabric.ChipSpec
        The chip (:func:`fabric.chip_spec` reads a name).
    math : str
        The GEMM's math format.
    part : str
        The model part (``"experts"``, ``"attention"``, ...: a key of
        :data:`PREFILL_GEMM_KIND`).
    efficiency : float, optional
        One fraction for every GEMM, in (0, 1].

    Returns
    -------
    float
        A fraction of the format's peak FLOP/s.

    Examples
    --------
    >>> from fabric import chip_spec
    >>> round(prefill_gemm_efficiency(chip_spec("h200"), "fp8", "experts"), 3)
    0.656
    >>> prefill_gemm_efficiency(chip_spec("b200"), "fp4", "experts")
    1.0
    """
    # the one choice check (a list was 'unhashable', an array numpy's 'ambiguous')
    check_choice(part, "part", (*PREFILL_GEMM_KIND, "scores"))
    if isinstance(chip, str):
        chip = chip_spec(chip)
    elif not hasattr(chip, "generation"):
        raise kind_error(chip, "chip", "a chip name or a fabric.ChipSpec")
    if efficiency is not None:
        return check_fraction("efficiency", efficiency, 0, 1, lo_open=True,
                              tail=" or None (the published one)")
    if part == "scores":
        return 1.0
    p = gemm_compute_efficiency(chip.generation, math, PREFILL_GEMM_KIND[part])
    return 1.0 if p is None else p.value


#: Acceptance per drafted token for multi-token-prediction drafts.
MTP_ACCEPTANCE = Parameter(
    "serving.draft_acceptance", 0.85, "",
    "DeepSeek-V3 technical report (arXiv 2412.19437) sec. 5.4.3: acceptance of the second "
    "(MTP-predicted) token 85-90%; the low end, taken per drafted token")


#: How a drafted token is priced when ``draft_cost`` is not given: its own decode step
#: (``analysis.decode_step(draft=True)``: one MoE block of the model, the MTP module of
#: DeepSeek-V3's report, arXiv 2412.19437 sec. 2.2, its ``2 hidden -> hidden`` projection and
#: the shared output head), at the same batch, context and layout as the target's steps.
DRAFT_SOURCE = ("decode_step(draft=True): one MoE block + 2h->h projection + shared head "
                "(DeepSeek-V3 report sec. 2.2, MTP module), priced at each point")


# -- cost and power ---------------------------------------------------------------------

@dataclass(frozen=True)
class TcoEntry:
    """Cost of a GPU-hour and all-in power per GPU.

    Attributes
    ----------
    gpu : str
    usd_per_gpu_hour : dict
        By ownership tier: ``"own-hyperscaler"``, ``"own-neocloud"``, ``"rent-3yr"``.
    all_in_kw_per_gpu : float
        kW per GPU including its share of CPU, network, cooling (facility power).
    source : str
    """

    gpu: str
    usd_per_gpu_hour: dict
    all_in_kw_per_gpu: float
    source: str

    def parameters(self, tier):
        """``$ / GPU-hour`` of ``tier`` and the power as :class:`~fabric.Parameter` records."""
        check_choice(tier, "tier", self.usd_per_gpu_hour)
        return (Parameter(f"tco.{self.gpu}.usd_per_gpu_hour.{tier}",
                          self.usd_per_gpu_hour[tier], "$/h", self.source),
                Parameter(f"tco.{self.gpu}.all_in_kw_per_gpu", self.all_in_kw_per_gpu, "kW",
                          self.source))


_TCO_SOURCE = ("SemiAnalysis InferenceX app, packages/app/src/lib/constants.ts (analyst TCO "
               "model, July 2026)")

#: Analyst cost of a GPU-hour (three ownership tiers) and all-in power, per GPU type.
TCO = {e.gpu: e for e in (
    TcoEntry(gpu=g, usd_per_gpu_hour={"own-hyperscaler": a, "own-neocloud": b, "rent-3yr": c},
             all_in_kw_per_gpu=kw,
             source=_TCO_SOURCE + note)
    for g, a, b, c, kw, note in (
        ("H100", 1.30, 1.69, 1.30, 1.73, ""),
        ("H200", 1.41, 1.74, 1.60, 1.73, ""),
        ("B200", 1.95, 2.34, 2.90, 2.17, ""),
        ("B300", 2.34, 2.808, 3.48, 2.17, "; B300 temporarily 1.2x B200 in the source"),
        ("GB200 NVL72", 2.21, 2.75, 3.30, 2.10, ""),
        ("GB300 NVL72", 2.652, 3.30, 3.96, 2.10, "; temporarily 1.2x GB200 in the source"),
        ("MI300X", 1.12, 1.40, 1.55, 1.79, ""),
        ("MI355X", 1.48, 1.90, 2.10, 2.65, ""),
    ))}

TIERS = ("own-hyperscaler", "own-neocloud", "rent-3yr")

# Chip presets (fabric.CHIPS) priced by the TCO table, and named products priced as a
# whole (the nvl72 and gb200-nvl72 presets stand for a GB200 NVL72 rack, gb300-nvl72 for a
# GB300 NVL72 rack, each priced as one). b300 was missing (the chip came after this table):
# hgx-b300 was priced at the cost book's H100-era node price and ignored the tier.
_CHIP_TCO = {"h100": "H100", "h200": "H200", "b200": "B200", "b300": "B300"}
# A rack's price applies only with the preset's own chip (nvl72's stand-in GPU is b200):
# nvl72 with_chip('h100') was priced as a GB200 rack.
_SYSTEM_TCO = {"nvl72": ("GB200 NVL72", "b200"), "gb200-nvl72": ("GB200 NVL72", "gb200"),
               "gb300-nvl72": ("GB300 NVL72", "gb300")}


def cost_per_million_tokens(tokens_per_s_gpu, usd_per_gpu_hour):
    """``$ per GPU-hour / (tokens/s per GPU x 3600 / 1e6)``.

    Parameters
    ----------
    tokens_per_s_gpu : float
        Tokens per second per GPU.
    usd_per_gpu_hour : float
        US dollars per GPU-hour, all-in.

    Returns
    -------
    float
        US dollars per million tokens.

    Examples
    --------
    >>> round(cost_per_million_tokens(1000.0, 1.80), 4)
    0.5

    Both must be finite: nan, inf or a negative figure is refused by name.
    """
    tokens_per_s_gpu = check_number("tokens_per_s_gpu", tokens_per_s_gpu, strict=True)
    usd_per_gpu_hour = check_number("usd_per_gpu_hour", usd_per_gpu_hour)
    return usd_per_gpu_hour / (tokens_per_s_gpu * 3600 / 1e6)


def tokens_per_s_per_mw(tokens_per_s_gpu, kw_per_gpu):
    """Tokens per second per megawatt of all-in power: ``tokens/s per GPU / (kW / 1000)``.

    Parameters
    ----------
    tokens_per_s_gpu : float
        Tokens per second per GPU.
    kw_per_gpu : float
        Kilowatts per GPU, all-in (its share of CPU, network and cooling: facility power).

    Returns
    -------
    float
        Tokens per second per megawatt.

    Examples
    --------
    >>> tokens_per_s_per_mw(1000.0, 2.0)
    500000.0
    >>> tokens_per_s_per_mw(float("nan"), 1.0)
    Traceback (most recent call last):
    ...
    fabric.SpecError: tokens_per_s_gpu must be a finite number >= 0, got tokens_per_s_gpu=nan
    """
    tokens_per_s_gpu = check_number("tokens_per_s_gpu", tokens_per_s_gpu)
    kw_per_gpu = check_number("kw_per_gpu", kw_per_gpu, strict=True)
    return tokens_per_s_gpu / (kw_per_gpu / 1000.0)


#: Parameters of the chip-price path (a system with no published GPU-hour price).
AMORTIZATION_YEARS = Parameter(
    "serving.amortization_years", 4.0, "y",
    "assumption: straight-line over 4 years, within the 4-6 year server lives hyperscalers "
    "report in their filings (second-hand)")
USD_PER_KWH = Parameter(
    "serving.usd_per_kwh", 0.087, "$/kWh",
    "assumption: a US industrial electricity price of about 8-9 cents per kWh (EIA Electric "
    "Power Monthly, 2025, second-hand)")


def _bill_of_materials(fabric):
    """The fabric's bill of materials (``analysis.bill_of_materials``), or None if absent."""
    import analysis

    bom = getattr(analysis, "bill_of_materials", None)
    return None if bom is None else bom(fabric)


def serving_cost(fabric, *, tier="own-hyperscaler", gpu=None, chip_price=None,
                 kw_per_gpu=None):
    """``($ per GPU-hour, all-in kW per GPU, parameters, how)`` for a system.

    From :data:`TCO` by ``gpu`` (a key of it) or by the fabric's chip. For a chip with
    no published price, ``chip_price``: dollars per chip **including its share of
    the server, without the network** (default: the cost book's node price per chip,
    ``BillOfMaterials.system_usd_per_chip``); then

    ``$ / GPU-hour = (chip_price + network cost per chip) / (AMORTIZATION_YEARS x 8760 h)
    + kW x USD_PER_KWH``

    with the network cost per chip from ``analysis.bill_of_materials`` (the
    fair-comparison cost model), and, unless ``kw_per_gpu`` is given, the power per
    chip from it too (chip and host power plus the network's share: IT power, no
    cooling or facility overhead, so lower than the table's all-in figures).

    Parameters
    ----------
    fabric : fabric.Fabric
    tier : str
        An ownership tier of :data:`TCO`: ``"own-hyperscaler"``, ``"own-neocloud"`` or
        ``"rent-3yr"``.
    gpu : str, optional
        A key of :data:`TCO`; default the system's own row where the table has one
        (``nvl72``, ``gb200-nvl72`` ...), else the fabric's chip.
    chip_price : float, optional
        US dollars per chip, as above.
    kw_per_gpu : float, optional
        Kilowatts per chip.

    Returns
    -------
    tuple
        US dollars per GPU-hour, kilowatts per GPU, the :class:`fabric.Parameter` objects
        used, and a sentence saying how.

    Examples
    --------
    >>> import topologies
    >>> usd, kw, _, how = serving_cost(topologies.build("dgx-h100"))
    >>> usd, kw, how
    (1.3, 1.73, 'TCO table: H100, own-hyperscaler')
    >>> usd, kw, _, how = serving_cost(topologies.build("sd200-ultra"), chip_price=20000)
    >>> how.startswith("chip price $20,000 + network $"), 0 < kw < 2
    (True, True)
    >>> serving_cost(topologies.build("sd200-ultra"))[3].startswith("chip price $38,750")
    True
    """
    fabric = fabric_arg(fabric)
    check_choice(tier, "tier", TIERS)
    if gpu is not None:
        # checked whatever prices the system (with chip_price it went unread: any name, or a
        # list's "unhashable type" without)
        check_choice(gpu, "gpu", TCO)
        if chip_price is not None:
            raise SpecError(f"give gpu (a row of the TCO table) or chip_price (the chip's price, "
                            f"the network's from the cost book), not both: got "
                            f"gpu={show_value(gpu)}, chip_price={show_value(chip_price)}")
    if kw_per_gpu is not None:
        kw_per_gpu = check_number("kw_per_gpu", kw_per_gpu, strict=True)
    if chip_price is not None:
        chip_price = check_number("chip_price", chip_price, strict=True)
    chip = fabric.chip
    # a failure renames the fabric ("nvl72 without 1 link"); the hardware paid for is the same
    built = fabric if fabric.intact is None else fabric.intact
    rack, rack_chip = _SYSTEM_TCO.get(built.name, (None, None))
    own = chip is not None and chip_spec(chip).name == rack_chip
    name = gpu if gpu is not None else rack if own else None
    if name is None and chip is not None:
        name = _CHIP_TCO.get(chip_spec(chip).name)
    if chip_price is None and name is not None:
        e = TCO[name]
        if kw_per_gpu is not None:      # the user's power replaces the table's (was ignored)
            usd, _ = e.parameters(tier)
            return (e.usd_per_gpu_hour[tier], kw_per_gpu,
                    (usd, Parameter("serving.kw_per_gpu", kw_per_gpu, "kW", "user")),
                    f"TCO table: {name}, {tier}; power {kw_per_gpu:g} kW per GPU (user)")
        return (e.usd_per_gpu_hour[tier], e.all_in_kw_per_gpu, e.parameters(tier),
                f"TCO table: {name}, {tier}")
    bom = _bill_of_materials(fabric)
    price_source = "user"
    if chip_price is None and bom is not None:
        chip_price = bom.system_usd_per_chip
        price_source = (f"the cost book's node price per chip ({bom.book}; an assumption for "
                        "chips it does not price)")
    if chip_price is None:
        raise SpecError(f"no published GPU-hour price for {fabric.name!r} (chip "
                        f"{getattr(chip, 'name', chip)!r}): give chip_price (dollars per chip "
                        "with its server share)")
    chip_price = check_number("chip_price", chip_price, strict=True)
    kw_source = "user" if kw_per_gpu is not None else "analysis.bill_of_materials (IT power)"
    if bom is None:
        if kw_per_gpu is None:
            raise SpecError("kw_per_gpu is needed: analysis.bill_of_materials is not "
                            "available to give the power")
        net, net_params = 0.0, ()
        what = " (network cost not included: analysis.bill_of_materials not available)"
    else:
        net, net_params = bom.cost_usd_per_chip, tuple(bom.parameters)
        what = f" + network ${net:,.0f} per chip (analysis.bill_of_materials, {bom.book})"
        if kw_per_gpu is None:
            kw_per_gpu = (bom.system_w_per_chip + bom.power_w_per_chip) / 1000.0
    hours = AMORTIZATION_YEARS.value * 8760
    usd = (chip_price + net) / hours + kw_per_gpu * USD_PER_KWH.value
    how = (f"chip price ${chip_price:,.0f}{what} over {AMORTIZATION_YEARS.value:g} years "
           f"+ {kw_per_gpu:.2f} kW at ${USD_PER_KWH.value}/kWh")
    params = (Parameter("serving.chip_price", chip_price, "$", price_source),
              Parameter("serving.kw_per_gpu", kw_per_gpu, "kW", kw_source),
              AMORTIZATION_YEARS, USD_PER_KWH) + net_params
    return usd, kw_per_gpu, params, how


# -- prefill ----------------------------------------------------------------------------

@dataclass(frozen=True)
class PrefillTime:
    """Instance-seconds one request's prefill takes (throughput view), and its parts.

    With ``dp`` attention groups, ``dp`` prompts are prefilled at once, one per
    group, in ONE forward pass (``prompts = dp``): one read of the weights and one set of
    kernels for all of them. ``compute``, ``weights``, ``expert_weights``, ``comm`` and
    ``total`` are the instance's time per request, i.e. that pass's divided by
    ``prompts``. ``total = max(compute, read(isl)) + comm`` (communication not
    overlapped: an assumption, the pessimistic case) plus the pass's exposed launches
    shared by its prompts: :meth:`chunk_seconds` of the whole prompt.

    Attributes
    ----------
    isl : int
    flops : float
        FLOPs of one request: ``2 x (active weights - head) x isl`` for the
        projections and experts, the causal attention scores
        (``prefill_score_flops``), and the head for the last token only.
    compute, weights, comm, total : float
        Seconds per prompt; ``weights`` is a prompt's share (over ``prompts``) of the
        pass's weight read: the weights of the instance's fullest chip (decode's memory
        count: each attention group's copy of the non-expert weights, the chip's experts),
        which its HBM reads while the others read theirs.
    expert_weights : float
        Seconds of ``weights`` that are the routed experts' (0: a pass reads every weight).
    experts, experts_per_token : int
        Routed experts ``E`` and experts per token ``k`` (for :meth:`read`; 0: no routing).
    launch : float
        Seconds of host time per kernel launch of the pass (0: launches not priced).
    launch_layers : tuple
        The pass's kernels as ``((heavy flags of one layer's kernels, repeats), ...)`` in
        stream order (:meth:`exposed_launch`; empty: launches not priced).
    boundary : float
        GPU seconds of each kernel boundary (decode's graph-replay figure: an eager stream's
        boundary is no shorter), paid whether or not the host is ahead, by every kernel but a
        held one (:attr:`held_layers`).
    held_layers : tuple
        Per segment of :attr:`launch_layers`, one flag per kernel: True where the pass's
        pricing of that kernel's work already holds its GPU-side start, so it pays no
        :attr:`boundary` (its host launch stays: the host still issues it): the collective
        exchange's dispatch and combine kernels when the pass's collectives are costed under
        a runtime whose cost holds each kernel's start (decode's rule,
        ``analysis._decode.collective_holds_starts``). Empty: none held.
    prompts : int
        Prompts one pass holds, one per attention group (``dp`` when prefilled at once, 1
        when one prompt holds the instance); they share its weight read and its kernels.
    comm_one : float or None
        Seconds per prompt of the collectives of a pass of ONE token per prompt (each
        collective's fixed latency and its one token's bytes): without :attr:`comm_at`,
        :meth:`chunk_comm` prices a chunk's collectives between this and ``comm`` (None: in
        proportion to its tokens).
    comm_at : callable or None
        ``tokens -> seconds`` per prompt of the pass's collectives when each prompt runs
        ``tokens`` tokens, costed by the collectives model at that size (what
        :func:`prefill_time` gives, cached per size); None (a hand-built one): the
        :attr:`comm_one` rule. Not compared, not printed (two results of the same inputs
        are equal); pickled with what it costs on, the fabric included, so an unpickled
        PrefillTime prices every chunk as the original.
    """

    isl: int
    flops: float
    compute: float
    weights: float
    comm: float
    total: float
    expert_weights: float = 0.0
    experts: int = 0
    experts_per_token: int = 0
    launch: float = 0.0
    launch_layers: tuple = ()
    boundary: float = 0.0
    held_layers: tuple = ()
    prompts: int = 1
    comm_one: float = None
    comm_at: object = dataclasses.field(default=None, compare=False, repr=False)

    def __copy__(self):
        # a copy in this process keeps the cost function (every field is immutable)
        return dataclasses.replace(self)

    def __deepcopy__(self, memo):
        return dataclasses.replace(self)

    def _prompts(self):
        """:attr:`prompts`, checked (a hand-built one may hold anything)."""
        return check_count(self.prompts, "prompts", 1, "an integer >= 1 (prompts in one pass)")

    def read(self, tokens):
        """Seconds per prompt a forward pass reads weights when each of its :attr:`prompts`
        prompts runs ``tokens`` tokens: all but the routed experts, and of those the
        expected share the pass's ``prompts x tokens`` tokens activate under uniform
        routing (:func:`analysis.expected_active_experts`, decode's own formula,
        ``1 - (1 - k/E)^T``): every weight for a few times ``E / k`` tokens or more.

        >>> p = PrefillTime(isl=100, flops=0.0, compute=0.1, weights=0.04, comm=0.0,
        ...                 total=0.1, expert_weights=0.03, experts=4, experts_per_token=2)
        >>> round(p.read(1), 6), round(p.read(100), 6)      # one token: half the experts
        (0.025, 0.04)
        >>> round(dataclasses.replace(p, prompts=2).read(1), 6)   # 2 tokens in the pass
        0.0325
        """
        tokens = _prompt_tokens(tokens)
        prompts = self._prompts()
        if not self.experts or not self.expert_weights:
            return self.weights
        if not 0 <= self.experts_per_token <= self.experts:
            raise SpecError(f"experts_per_token ({self.experts_per_token!r}) must be between 0 "
                            f"and experts ({self.experts!r})")
        active = expected_active_experts(self.experts, self.experts_per_token,
                                         prompts * tokens)
        return self.weights - self.expert_weights * (1.0 - active / self.experts)

    def kernels(self):
        """Kernels of one pass (0 when launches are not priced)."""
        return sum(len(flags) * r for flags, r in self.launch_layers)

    def _held(self):
        """:attr:`held_layers` checked against :attr:`launch_layers` (one flag per kernel of
        each segment), or all False when empty."""
        if not self.held_layers:
            return tuple((False,) * len(flags) for flags, _ in self.launch_layers)
        held = tuple(tuple(h) for h in self.held_layers)
        if [len(h) for h in held] != [len(flags) for flags, _ in self.launch_layers]:
            raise SpecError(f"held_layers must hold one flag per kernel of each segment of "
                            f"launch_layers, got {self.held_layers!r} for "
                            f"{self.launch_layers!r}")
        return held

    def boundaries(self):
        """GPU seconds of one pass's kernel boundaries: :attr:`boundary` for each kernel
        that is not held (:attr:`held_layers`).

        >>> p = PrefillTime(isl=1, flops=0.0, compute=0.0, weights=0.0, comm=0.0, total=0.0,
        ...                 launch_layers=(((False, True), 2),), boundary=1e-6,
        ...                 held_layers=((False, True),))
        >>> round(p.boundaries() * 1e6, 6), p.kernels()
        (2.0, 4)
        """
        return self.boundary * sum((len(h) - sum(map(bool, h))) * r
                                   for h, (_, r) in zip(self._held(), self.launch_layers))

    def exposed_launch(self, device):
        """Seconds the kernel launches add to a pass whose kernels run ``device`` seconds on
        the GPU, launched one by one without a CUDA graph (prompt passes run eagerly:
        TensorRT-LLM's mixed iterations, vLLM's steps above its largest capture size):
        :func:`eager_pass_seconds` of :attr:`launch_layers`, ``device`` spread evenly over
        the heavy kernels and every kernel's :attr:`boundary` on the GPU, less ``device``:
        the boundaries, and the host's launches where they are not hidden.

        >>> p = PrefillTime(isl=1, flops=0.0, compute=0.0, weights=0.0, comm=0.0, total=0.0,
        ...                 launch=4e-6, launch_layers=(((False, True), 2),))
        >>> round(p.exposed_launch(1.0) * 1e6, 6)   # long kernels: the launches up to the first
        8.0
        >>> round(p.exposed_launch(0.0) * 1e6, 6)      # empty ones: every launch
        16.0
        >>> q = dataclasses.replace(p, boundary=1e-6)   # + the 3 boundaries after the 1st issue
        >>> round(q.exposed_launch(1.0) * 1e6, 6)
        11.0
        >>> h = dataclasses.replace(q, held_layers=((False, True),))  # the heavy ones' held
        >>> round(h.exposed_launch(1.0) * 1e6, 6)
        9.0
        """
        device = check_number("device", device, unit=" seconds")
        if not self.launch_layers or not (self.launch or self.boundary):
            return 0.0
        heavy = sum(sum(flags) * r for flags, r in self.launch_layers)
        each = device / heavy if heavy else 0.0
        segments = [(tuple((each if f else 0.0) + (0.0 if h else self.boundary)
                           for f, h in zip(flags, held, strict=True)), r)
                    for (flags, r), held in zip(self.launch_layers, self._held(), strict=True)]
        return max(0.0, _eager_makespan(segments, self.launch) - (each * heavy if heavy
                                                                    else 0.0))

    def chunk_seconds(self, tokens):
        """Seconds per prompt of a forward pass in which each of its :attr:`prompts`
        prompts runs ``tokens`` tokens, on its own: its own roofline, ``max(tokens x
        compute / isl, read(tokens))`` (one weight read for the pass however many tokens,
        or prompts' pieces, it holds; compute linear in tokens), plus its collectives
        (:meth:`chunk_comm`: their bytes grow with the tokens, and each pays its fixed
        latency once per pass), plus what the pass's eager launches add (:meth:`exposed_launch` of the whole pass, ``prompts``
        times that device time, shared by its prompts). ``chunk_seconds(isl) == total``
        for :func:`prefill_time`'s result.

        >>> p = PrefillTime(isl=1000, flops=0.0, compute=0.5, weights=0.1, comm=0.02,
        ...                 total=0.52)
        >>> round(p.chunk_seconds(1000), 6), round(p.chunk_seconds(100), 6)
        (0.52, 0.102)
        """
        tokens = _prompt_tokens(tokens)
        prompts = self._prompts()
        device = max(tokens * self.compute / self.isl, self.read(tokens)) + self.chunk_comm(
            tokens)
        return device + self.exposed_launch(prompts * device) / prompts

    def chunk_comm(self, tokens):
        """Seconds per prompt of the collectives of a pass of ``tokens`` tokens per prompt:
        with :attr:`comm_at` (:func:`prefill_time`'s), the collectives costed at that size
        (each pays its fixed latency once per pass, and a runtime's protocol and algorithm
        are those it picks for the chunk's bytes). A hand-built one without it: each
        collective's cost taken as affine in its bytes (a fixed latency plus bytes over
        bandwidth), through the one-token pass (:attr:`comm_one`) and the whole prompt
        (``comm``), exact at those two sizes and wherever the cost is affine between them;
        without :attr:`comm_one` either, ``tokens x comm / isl``.

        >>> p = PrefillTime(isl=101, flops=0.0, compute=0.0, weights=0.0, comm=0.02,
        ...                 total=0.0, comm_one=0.01)
        >>> [round(p.chunk_comm(t), 6) for t in (0, 1, 51, 101)]
        [0.0, 0.01, 0.015, 0.02]
        """
        tokens = _prompt_tokens(tokens)
        if tokens == 0:
            return 0.0
        if self.comm_at is not None:
            return self.comm_at(tokens)
        if self.comm_one is None or self.isl < 2:
            return tokens * self.comm / self.isl
        v = check_number("comm_one", self.comm_one, unit=" seconds", tail=" or None")
        slope = max(0.0, (self.comm - v) / (self.isl - 1))
        return v + slope * (tokens - 1)


def _prompt_tokens(tokens):
    """``tokens`` (prompt tokens of a pass) as an int if it is an integer ``>= 0``, else a
    SpecError naming it (a negative count read as negative seconds, nan as nan)."""
    return check_count(tokens, "tokens", 0, "an integer >= 0 (prompt tokens)")


def _eager_makespan(segments, launch):
    """:func:`eager_pass_seconds` of kernels given as ``[(seconds of one period's kernels,
    repeats), ...]`` in stream order, in closed form: the end of the last kernel is
    ``max_j ((j + 1) launch + sum_{i >= j} d_i)``; within a repeated segment that is linear in
    the period, so its maximum sits at the first or the last period."""
    tail = 0.0                                  # device seconds after the current segment
    ends = []
    offset = sum(len(d) * r for d, r in segments)
    for d, r in reversed(segments):
        n, period = len(d), sum(d)
        offset -= n * r                         # kernels before this segment
        suffix = 0.0
        for q in range(n - 1, -1, -1):
            suffix += d[q]
            for p in {0, r - 1}:
                ends.append((offset + p * n + q + 1) * launch + tail + (r - p - 1) * period
                            + suffix)
        tail += r * period
    return max(ends, default=0.0)


def eager_pass_seconds(kernel_seconds, *, launch=LAUNCH_OVERHEAD.value, repeat=1):
    """Seconds a forward pass takes when its kernels are launched one by one from the host,
    without a CUDA graph, ``kernel_seconds`` (device seconds of each, in stream order;
    ``repeat`` times over: one list per layer).

    Kernel launches are asynchronous (CUDA Programming Guide, sec. 2.3 "Asynchronous
    Execution": a kernel launch "returns immediately" and "may return before the
    asynchronous operation has started"), so the host issues kernel ``i`` at ``(i + 1) x
    launch`` while earlier ones run, and the GPU runs it from the later of its issue and the
    previous kernel's end: the pass ends at ``max_j ((j + 1) launch + sum_{i >= j} d_i)``.
    Long kernels hide the launches behind them (``launch + sum d``); empty ones pay every
    launch (``n x launch``); the serial sum ``sum (launch + d_i)`` that
    :func:`analysis.decode_step` charges without graphs is the bound where the host cannot
    run ahead. ``launch``: :data:`analysis.LAUNCH_OVERHEAD`, decode's figure per launch.

    Parameters
    ----------
    kernel_seconds : sequence of float
        Each kernel's device time in seconds, in stream order.
    launch : float
        Seconds of host time per launch.
    repeat : int
        Times the sequence runs (layers).

    Returns
    -------
    float
        Seconds of the whole pass.

    Examples
    --------
    >>> round(eager_pass_seconds([1e-3, 0.0, 1e-3], launch=4e-6) * 1e6, 6)
    2004.0
    >>> round(eager_pass_seconds([0.0, 0.0], launch=4e-6, repeat=3) * 1e6, 6)
    24.0
    """
    # each time through the one number check, named by position: a bool is not a duration
    # (True read as 1 s), nor a string (a wrong kind: TypeErrors since session 34), and
    # 10**5000 raised float()'s bare OverflowError
    ds = [check_number(f"kernel_seconds[{i}]", d, 0, " seconds") for i, d in
          enumerate(sequence_of(kernel_seconds, "kernel_seconds", "seconds"))]
    launch = check_number("launch", launch, unit=" seconds")
    return _eager_makespan([(ds, check_count(repeat, "repeat", 1))], launch)


def _pass_kernel_names(m, lay):
    """A prompt pass's eager kernels (decode's :data:`analysis.KERNELS`, one per operator) on
    layout ``lay`` as ``((names of one layer's kernels, repeats), ...)`` in stream order: the
    dense layers, the MoE layers, the head. A MoE layer holds the exchange's dispatch and
    combine only where tokens cross ranks (:attr:`Layout.exchanges`, as decode's kernel list
    and :class:`_PassCollectives` have it): with the experts split (``etp > 1``) or on every
    chip no engine launches them."""
    att = KERNELS[m.attention.kind]
    moe = tuple(k for k in KERNELS["moe_ffn"]
                if lay.exchanges or KERNEL_CLASSES[k] != "exchange")
    out = []
    if m.dense_layers:
        out.append((att + KERNELS["dense_ffn"], m.dense_layers))
    if m.moe_layers:
        out.append((att + moe, m.moe_layers))
    out.append((KERNELS["head"], 1))
    return tuple(out)


def _pass_kernels(m, lay):
    """:func:`_pass_kernel_names` as ``((heavy flags of a layer's kernels, repeats), ...)``.
    Heavy: the classes that carry the pass's device time (weight GEMMs, attention, routed
    experts, the MoE exchange): every class decode gives no minimum duration (its small
    kernels have one, :data:`analysis.KERNEL_FLOORS`) but sampling."""
    return tuple((tuple(KERNEL_CLASSES[k] not in KERNEL_FLOORS and KERNEL_CLASSES[k] != "other"
                        for k in names), r) for names, r in _pass_kernel_names(m, lay))


def _pass_held(m, lay, cost_kwargs):
    """Per segment of :func:`_pass_kernels`, which kernels' GPU-side start the pass's pricing
    already holds (:attr:`PrefillTime.held_layers`): the collective exchange's dispatch and
    combine (class ``exchange``, listed where the exchange runs, :attr:`Layout.exchanges`, as
    :class:`_PassCollectives` prices it) when the pass's collectives hold each kernel's start
    (``analysis._decode.collective_holds_starts``: decode's rule,
    ``analysis._decode._held_starts``)."""
    held = collective_holds_starts(cost_kwargs.get("collective"), cost_kwargs.get("runtime"))
    return tuple(tuple(held and KERNEL_CLASSES[k] == "exchange" for k in names)
                 for names, _ in _pass_kernel_names(m, lay))


class _PassCollectives:
    """``tokens -> seconds`` per prompt of a prefill pass's collectives when each of its
    prompts runs ``tokens`` tokens, costed by the collectives model at that size and cached
    per size (:attr:`PrefillTime.comm_at`, what :func:`prefill_time` gives).

    It pickles with what it costs on, the fabric included (a :class:`fabric.Fabric` does not
    pickle by itself: :func:`_dumps_with_fabrics`), so that an unpickled
    :class:`PrefillTime` prices every chunk as the original does; a cost function that does
    not pickle (a user's lambda as ``collective``) makes pickling fail, naming it.
    """

    def __init__(self, model, fabric, positions, layout, dispatch_bytes, serial, cost_kwargs,
                 gathers=False):
        self._args = (model, fabric, tuple(positions), layout, dispatch_bytes, bool(serial),
                      dict(cost_kwargs), bool(gathers))
        self._cache = {}

    def __call__(self, tokens):
        if tokens not in self._cache:
            self._cache[tokens] = self._cost(tokens)
        return self._cache[tokens]

    def _cost(self, tokens):
        m, fabric, pos, lay, db, serial, cost_kwargs, gathers = self._args
        tp, ep, ab = lay.tp, lay.ep, m.activation_bytes
        # each attention group's all-reduce: the slowest group's (the groups step together)
        allreduce = slowest_group_seconds(fabric, "all-reduce", tokens * m.hidden * ab, pos,
                                          tp, **cost_kwargs)
        if gathers:
            # TensorRT-LLM's attention DP: the prompts' tokens allgathered (db bytes an
            # element, with their routing), the outputs reduce-scattered (as decode_step);
            # one prompt alone is one rank's rows: the gather's whole output is its tokens
            # (priced as equal parts of it, gather_exchange_seconds' assumption)
            dispatch, combine = gather_exchange_seconds(
                fabric, m, tokens / ep if serial else tokens, pos[:ep], db, ab, **cost_kwargs)
        else:
            # A rank sends each of its tokens/tp tokens to up to k experts (an upper bound: no
            # deduplication per destination chip), dispatch in db bytes, combine in ab bytes.
            # (none when the experts are split over the ranks, etp > 1: every rank has every
            # token)
            pairs = tokens / tp * min(m.experts_per_token,
                                      ep - 1 if lay.exchanges else 0)
            dispatch = collective_seconds(fabric, "all-to-all", pairs * m.hidden * db, pos[:ep],
                                          **cost_kwargs)
            combine = collective_seconds(fabric, "all-to-all", pairs * m.hidden * ab, pos[:ep],
                                         **cost_kwargs)
        # experts split over the ranks (etp > 1): the MoE output is all-reduced like a dense
        # FFN's, two all-reduces per layer and no exchange (as decode_step)
        moe_allreduces = 2 if lay.etp > 1 else 1
        return (m.dense_layers * 2 * allreduce
                + m.moe_layers * (moe_allreduces * allreduce + dispatch + combine)) / (
                    1 if serial else lay.dp)

    def __reduce_ex__(self, protocol):
        # the cache is not carried: an unpickled one costs each size again, the same way
        return (_load_pass_collectives, (_dumps_with_fabrics(self._args, protocol),))


def _load_pass_collectives(blob):
    out = _PassCollectives.__new__(_PassCollectives)
    out._args = pickle.loads(blob)
    out._cache = {}
    return out


def _mapping_proxy(mapping):
    return types.MappingProxyType(mapping)


def _fabric_from_fields(cls, fields):
    obj = object.__new__(cls)
    for name, value in fields.items():
        object.__setattr__(obj, name, value)
    return obj


def _dumps_with_fabrics(obj, protocol):
    """``obj`` pickled with every :class:`fabric.Fabric` in it by its dataclass fields
    (the graph, endpoints, failures, ...: everything else a fabric holds is derived from
    them and cached on first use) and every read-only mapping as a dict made read-only
    again on loading: the two things in a fabric that do not pickle by themselves."""
    class _Pickler(pickle.Pickler):
        def reducer_override(self, x):
            if isinstance(x, types.MappingProxyType):
                return _mapping_proxy, (dict(x),)
            if isinstance(x, Fabric):
                return _fabric_from_fields, (type(x), {f.name: getattr(x, f.name)
                                                       for f in dataclasses.fields(x)})
            return NotImplemented

    buf = io.BytesIO()
    try:
        _Pickler(buf, protocol).dump(obj)
    except (pickle.PicklingError, TypeError, AttributeError) as e:
        raise TypeError(f"cannot pickle a PrefillTime whose collectives are costed with an "
                        f"object that does not pickle ({e})") from e
    return buf.getvalue()


#: The keywords a prompt pass hands to its collectives: ``collective_seconds``'s own.
_PASS_COST_KEYWORDS = frozenset(
    name for name, p in inspect.signature(collective_seconds).parameters.items()
    if p.kind is p.KEYWORD_ONLY)


def _prefill_module_rate(m, chip, fmt, lay, tokens, engine, efficiency):
    """FLOP/s of TensorRT-LLM's measured MoE module (:func:`analysis.grouped_gemm_rate`) for a
    prompt pass whose ``tokens`` (all its prompts' tokens) enter each expert rank's MoE, or
    None: only ``engine="trtllm"``, no user ``efficiency``, experts whole on their ranks
    (``etp = 1``), at least :data:`analysis.MEASURED_MOE_LOCAL_EXPERTS` routed experts a rank
    (the measured shard), at least the table's first row per group. Rows per group = the
    pass's token-expert pairs over the routed experts, ``tokens x k / E`` (what each rank's
    local experts see under a uniform spread, the rows the decode step takes at its own
    batch). The module was timed in a CUDA graph; a prompt pass runs eagerly, its launches
    hidden behind the module's kernels (counted by the pass's own boundaries)."""
    if (engine != "trtllm" or efficiency is not None or not m.moe_layers or lay.etp != 1
            or m.routed_experts / lay.ep < MEASURED_MOE_LOCAL_EXPERTS):
        return None
    return grouped_gemm_rate(chip, fmt, tokens * m.experts_per_token / m.routed_experts)


def _moe_module_seconds(m, chip, fmt, lay, tokens):
    """Seconds one MoE layer's routed experts take on a rank at TensorRT-LLM's measured module
    rate (:func:`analysis.grouped_gemm_rate`) with ``tokens`` entering every rank's MoE (the
    module's num_tokens: ``tokens x k / ep`` token-expert pairs a rank, ``tokens x k / E`` rows a
    group), or None where the rate does not apply (experts split, fewer than
    :data:`analysis.MEASURED_MOE_LOCAL_EXPERTS` a rank, below the table's first row, no table)."""
    if (not m.moe_layers or tokens <= 0 or lay.etp != 1
            or m.routed_experts / lay.ep < MEASURED_MOE_LOCAL_EXPERTS):
        return None
    rate = grouped_gemm_rate(chip, fmt, tokens * m.experts_per_token / m.routed_experts)
    if rate is None:
        return None
    return tokens * m.experts_per_token / lay.ep * 2 * m.expert_params / rate


def module_overlap(m, chip, lay, decode_tokens, prompt_tokens):
    """Seconds a mixed step's routed experts are priced twice when its decode step (its
    ``decode_tokens`` entering every rank's MoE) and its prompt pass (``prompt_tokens``) each
    take TensorRT-LLM's measured module at their own rows: TensorRT-LLM runs the step's tokens
    through ONE fused MoE call, whose fixed part is paid once. Per step, over the MoE layers:
    ``T(decode) + T(prompt) - T(decode + prompt)`` (:func:`_moe_module_seconds`, never below
    0); 0 unless all three take the measured rate. The caller applies it only where both parts
    are priced at it (``engine="trtllm"``, the decode in a CUDA graph, no user efficiency).

    >>> import analysis, fabric
    >>> m, lay = analysis.model_config("deepseek-r1-nvfp4"), analysis.parse_layout("tp=1,dp=8", 8)
    >>> round(module_overlap(m, fabric.chip_spec("b200"), lay, 3072, 8192) * 1e3, 2)   # ms
    9.42
    >>> module_overlap(m, fabric.chip_spec("b300"), lay, 3072, 8192)
    0.0
    """
    fmt = chip.gemm_format(m.math_format("experts"))
    t = [_moe_module_seconds(m, chip, fmt, lay, x)
         for x in (decode_tokens, prompt_tokens, decode_tokens + prompt_tokens)]
    if None in t:
        return 0.0
    return m.moe_layers * max(0.0, t[0] + t[1] - t[2])


def _prefill_projections(m, chip, lay, isl, engine, efficiency, release=None):
    """``(seconds, flops)`` of a layer's attention projections one ``isl``-token prompt runs as
    TensorRT-LLM's measured ``Linear`` GEMMs (:func:`analysis.trtllm_gemm_time` at the prompt's
    rows on a rank, the shapes :func:`analysis._decode.trtllm_projection_shapes` gives, as the
    decode step takes them): the measured ones' one-chip seconds (a rank's time x ``tp``: the
    pass divides the part by ``tp``) and the FLOPs they cover (the rest of the part stays at
    its rate), or None: only ``engine="trtllm"``, no user ``efficiency``, dense MLA with a
    query low-rank, heads split evenly, and at least one shape measured on the chip. Above the
    table's largest row count a shape takes that count's time per row (named in the loop).
    ``release``: TensorRT-LLM's (:func:`analysis.trtllm_projection_shapes`)."""
    att = m.attention
    if (engine != "trtllm" or efficiency is not None or att.kind != "mla" or att.sparse
            or not att.q_lora_rank or att.heads % lay.tp):
        return None
    shapes = trtllm_projection_shapes(m, lay.tp, isl, release)
    # the fused A projection runs whole on every rank: its FLOPs are counted once
    return _prefill_measured_gemms(chip, m.part_format("attention"), lay, isl, shapes,
                                   whole=("fuse_a_gemm",))


def _prefill_measured_gemms(chip, fmt, lay, isl, shapes, whole=()):
    """``(seconds, flops)`` of the GEMMs ``shapes`` (``{name: (n, k)}`` on a rank) one
    ``isl``-token prompt runs at TensorRT-LLM's measured ``Linear`` times in ``fmt``
    (:func:`analysis.trtllm_gemm_time` at the prompt's rows): the measured ones' one-chip
    seconds (a rank's time x ``tp``: the pass divides the part by ``tp``) and the FLOPs they
    cover (``whole``: GEMMs every rank runs whole, counted once), or None where none is
    measured. Above the table's largest row count a shape takes that count's time per row
    (named in the loop)."""
    seconds, flops = 0.0, 0.0
    for name, (n, k) in shapes.items():
        t = trtllm_gemm_time(chip, fmt, isl, n, k)
        top = trtllm_gemm_max_rows(chip, fmt, n, k)
        if t is None and top is not None and isl > top:
            # more rows than measured: the largest measured row count's time per row (a
            # GEMM that many rows long is compute-bound, its time linear in its rows; an
            # ASSUMPTION beyond the table, so that a longer prompt never costs less)
            t = trtllm_gemm_time(chip, fmt, top, n, k) * isl / top
        if t is None:
            continue
        seconds += t * lay.tp
        flops += 2 * isl * n * k * (1 if name in whole else lay.tp)
    return None if not flops else (seconds, flops)


def _prefill_router(m, chip, lay, isl, engine, efficiency, release=None):
    """``(seconds, flops)`` of a MoE layer's router gate GEMM for one ``isl``-token prompt at
    TensorRT-LLM's measured BF16 ``Linear`` time, as the decode step takes it
    (:meth:`analysis._decode._Settings.router_measured`), at the shape
    :func:`analysis._decode.trtllm_router_shape` gives for the prompt's rows in TensorRT-LLM
    ``release`` (the shape measured, not the dedicated kernel's), every rank routing the
    prompt's tokens whole; or None: only ``engine="trtllm"``, no user ``efficiency``, a shape
    there."""
    if engine != "trtllm" or efficiency is not None:
        return None
    shape = trtllm_router_shape(m, isl, release)
    if shape is None:
        return None
    return _prefill_measured_gemms(chip, chip.gemm_format(m.math_format("router")), lay, isl,
                                   {"router_gemm": shape}, whole=("router_gemm",))


def _prefill_context_op(m, chip, lay, isl, engine, efficiency):
    """Seconds a layer of one ``isl``-token prompt's context attention takes as TensorRT-LLM's
    measured context MLA op (:func:`analysis.mla_context_time`: the op's rope, latent-cache
    write and causal attention, one prompt on a rank), or None: only ``engine="trtllm"``, no
    user ``efficiency``, dense MLA at the measured shape and heads per GPU, a KV format the
    chip's table holds. Above the table's longest prompt (:func:`analysis.mla_context_max_isl`)
    the longest prompt's time per score FLOP (named in the body)."""
    att = m.attention
    if (engine != "trtllm" or efficiency is not None or att.kind != "mla" or att.sparse
            or att.heads % lay.tp):
        return None
    shape = (chip, att.heads // lay.tp, att.kv_lora_rank, att.qk_rope_head_dim,
             m.kv_cache_bytes)
    top = mla_context_max_isl(chip, m.kv_cache_bytes)
    if top is not None and isl > top:
        # a longer prompt than measured: the longest measured prompt's time per score FLOP
        # (ASSUMPTION beyond the table: the op that long is compute-bound, its time linear in
        # its causal FLOPs, near the table's own last doubling: 8192 -> 16384 tokens x3.5-4.0
        # the time for x4.00 the FLOPs), so that a longer prompt never costs less
        at_top = mla_context_time(*shape, top)
        return None if at_top is None else (
            at_top * att.prefill_score_flops(isl) / att.prefill_score_flops(top))
    return mla_context_time(*shape, isl)


def prefill_time(model, fabric, *, isl, layout=None, chip=None, efficiency=None,
                 hbm_efficiency=None,
                 dispatch_bytes=None, one_at_a_time=False, instance=None,
                 launch_overhead=LAUNCH_OVERHEAD.value,
                 graph_kernel_overhead=GRAPH_KERNEL_OVERHEAD.value, engine=None,
                 ep_kernel=None, trtllm_release=None, **cost_kwargs):
    """Prefill of one ``isl``-token prompt on the instance a layout describes.

    Parameters
    ----------
    model : str or MoEModel
    fabric : fabric.Fabric
    isl : int
        Input (prompt) tokens.
    layout : Layout, str, dict or None
        As for :func:`analysis.decode_step`; the instance is its ``tp x dp`` chips.
    chip : str or ChipSpec, optional
        Overrides ``fabric.chip``.
    efficiency : float in (0, 1], optional
        Achieved fraction of peak FLOP/s for every GEMM. Default None: each part's GEMMs at
        :func:`prefill_gemm_efficiency` (the published efficiency of the chip's generation,
        their format and kind, as the decode step takes its own: DeepGEMM's FP8 tables on
        Hopper, contiguous-layout grouped GEMMs for the routed experts; 1, the roofline,
        where none is published).
    hbm_efficiency : float in (0, 1] or None
        Achieved fraction of peak HBM bandwidth of the pass's weight read (dimensionless).
        ``None`` (default, as :func:`analysis.decode_step`'s): decode's
        :data:`~analysis.DECODE_HBM_EFFICIENCY` for every weight read (decode's published
        per-kernel streaming rates were measured at decode's few rows, not at a prompt's);
        a given fraction, that one. E.g. ``hbm_efficiency=1``: the pass reads its weights
        at peak bandwidth.
    dispatch_bytes : float, optional
        Bytes per element dispatched to experts (default the activation bytes).
    one_at_a_time : bool, default False
        False: the ``dp`` attention groups prefill ``dp`` prompts at once, one forward
        pass (a prompt's time is that pass's divided by ``dp``: they share its weight read
        and its kernels, :attr:`PrefillTime.prompts`). True: one prompt at a time holds the
        whole instance (in-flight batching under attention data parallelism without a
        context-balancing scheduler: the ranks step together, an iteration lasts as long
        as its slowest rank, and contexts arrive on one rank per iteration, NVIDIA
        TensorRT-LLM tech blog 10 "ADP Balance Strategy", baseline): its attention, dense
        FFNs, shared experts, router and head run on its own ``tp`` group, its routed
        experts over the ``ep`` ranks, and its collectives are not shared.
    instance : sequence of str, optional
        The chips the instance runs on (the first ``tp`` its first attention group), as
        :attr:`analysis.DecodeStep.instance` gives them, so that prefill and decode run on
        the same chips; default :func:`analysis.instance_chips` of the layout's chips.
    launch_overhead : float
        Host seconds per kernel launch; a prompt pass runs without a CUDA graph and its
        launches hide behind its long kernels (:func:`eager_pass_seconds`); default decode's
        :data:`analysis.LAUNCH_OVERHEAD`.
    graph_kernel_overhead : float
        GPU seconds of each of the pass's kernel boundaries, paid even with the host ahead
        (an eager stream's boundary is taken as no shorter than a replayed graph's); default
        decode's :data:`analysis.GRAPH_KERNEL_OVERHEAD`.
    engine : str or None
        The serving engine whose prompt pass this is (as :func:`analysis.decode_step`'s
        ``engine``; the serving sweeps pass their decode steps' engine). With ``"trtllm"``,
        no ``efficiency``, the experts whole on their ranks (``etp = 1``) and at least
        :data:`analysis.MEASURED_MOE_LOCAL_EXPERTS` experts a rank, the routed experts run at
        TensorRT-LLM's measured MoE module rate where the chip and format have one
        (:func:`analysis.grouped_gemm_rate`, as the decode step prices its own), at the
        pass's rows per group: its prompts' tokens (every attention group's prompt in one pass,
        or the one prompt) x experts per token over the routed experts; no more than the
        published rate. None (default) or another engine: :func:`prefill_gemm_efficiency`.
        With ``"trtllm"`` under attention data parallelism the expert exchange is
        TensorRT-LLM's allgather + reducescatter where it runs one
        (:func:`analysis._decode.trtllm_gathers`, as the decode step prices it).
    ep_kernel : str or None
        The MoE exchange kernel the instance's decode steps name (the serving sweeps pass
        theirs). A prompt pass prices no exchange kernel: its exchange runs through the
        collective runtime, an all-to-all, or, with ``engine="trtllm"`` and no kernel named,
        TensorRT-LLM's attention-DP allgather + reducescatter where it applies.
    trtllm_release : str, optional
        TensorRT-LLM's release, as :func:`analysis.decode_step` takes it (None: the newest
        modelled); a prompt of at most 16 tokens in a release before the dedicated DeepSeek
        GEMMs runs its router and BF16 fused A on cuBLAS (measured). Needs
        ``engine="trtllm"``.
    **cost_kwargs
        How the collectives are costed, as decode steps cost theirs
        (``analysis._decode.collective_seconds``): ``collective`` (default: the engine's,
        :func:`analysis.engine_collective`, as :func:`decode_step` takes it), ``algorithm``
        (a name or a mapping per operation),
        ``transport``, ``runtime``.

    Returns
    -------
    PrefillTime

    Examples
    --------
    >>> import topologies
    >>> f = topologies.build("switch:8,planes=2,links=9,tech=nvlink5,chip=b200")
    >>> p = prefill_time("kimi-k2", f, isl=8192, layout="tp=8")
    >>> p.compute < p.weights, round(p.total, 3)   # FP8 on Blackwell: no published efficiency
    (True, 0.06)
    >>> q = prefill_time("kimi-k2", f, isl=8192, layout="tp=8", efficiency=0.4)
    >>> q.compute > q.weights, round(q.total, 3)
    (True, 0.085)
    """
    unknown = sorted(set(cost_kwargs) - _PASS_COST_KEYWORDS)
    if unknown:
        raise TypeError(
            f"prefill_time() got an unexpected keyword argument {unknown[0]!r}: a prompt "
            f"pass's collectives take {', '.join(sorted(_PASS_COST_KEYWORDS))} (its expert "
            f"exchange runs through the collective runtime)")
    m = model_config(model)
    chip = fabric_chip(fabric, chip)
    isl = check_count(isl, "isl", 1)
    launch_overhead = check_number("launch_overhead", launch_overhead, unit=" seconds")
    graph_kernel_overhead = check_number("graph_kernel_overhead", graph_kernel_overhead,
                                         unit=" seconds")
    if efficiency is not None:
        efficiency = check_fraction("efficiency", efficiency, 0, 1, lo_open=True)
    if hbm_efficiency is not None:
        hbm_efficiency = check_fraction("hbm_efficiency", hbm_efficiency, 0, 1, lo_open=True)
    lay = parse_layout(layout, fabric.n_endpoints)
    n, tp, dp, ep = lay.chips, lay.tp, lay.dp, lay.ep
    if instance is None:
        pos = instance_chips(fabric, n, tp=tp)
    else:
        where = {c: i for i, c in enumerate(fabric.endpoints)}
        names = items_of(instance)
        if names is None:               # one chip named bare
            names = [instance]
        pos = tuple(where.get(c, -1) if isinstance(c, str) else -1 for c in names)
        if len(pos) != n or -1 in pos or len(set(pos)) != n:
            bad = [c for c, p in zip(names, pos) if p < 0]
            twice = sorted({c for c, p in zip(names, pos) if p >= 0 and pos.count(p) > 1})
            raise SpecError(f"instance must name the {n} distinct live chips of layout {lay} "
                            f"by name (as DecodeStep.instance gives them), got {len(names)}"
                            + (f"; not live chips of {fabric.name}: {show_value(bad[:4])}"
                               if bad else "")
                            + (f"; named twice: {show_value(twice[:4])}" if twice else ""))
    one_at_a_time = flag_of(one_at_a_time, "one_at_a_time")
    check_engine(engine, none_ok=True)
    if trtllm_release is not None:
        trtllm_release = check_trtllm_release(trtllm_release, engine)
    flops = (2 * (m.active_params - m.head_params) * isl + 2 * m.head_params
             + m.layers * m.attention.prefill_score_flops(isl))
    # FLOPs by the math format their GEMMs run in (as decode_step prices them)
    parts = {
        "attention": 2 * isl * m.layers * m.attention_params,
        "scores": m.layers * m.attention.prefill_score_flops(isl),
        "ffn": 2 * isl * (m.dense_layers * m.dense_ffn_params
                          + m.moe_layers * m.shared_experts * m.expert_params),
        "router": 2 * isl * m.moe_layers * m.router_params,
        "experts": 2 * isl * m.moe_layers * m.experts_per_token * m.expert_params,
        "head": 2 * m.head_params,
    }
    serial = one_at_a_time and dp > 1
    seconds = {}
    for p, f in parts.items():
        fmt = chip.gemm_format(m.math_format(p))
        rate = chip.peak(fmt) * prefill_gemm_efficiency(chip, fmt, p, efficiency)
        if p == "experts":
            measured = _prefill_module_rate(m, chip, fmt, lay, isl * (1 if serial else dp),
                                            engine, efficiency)
            rate = rate if measured is None else min(rate, measured)
        seconds[p] = f / rate
        if p in ("attention", "router"):    # TensorRT-LLM's GEMMs as measured, at least
            layers, proj = ((m.layers, _prefill_projections) if p == "attention"
                            else (m.moe_layers, _prefill_router))
            proj = proj(m, chip, lay, isl, engine, efficiency, trtllm_release)
            if proj is not None:
                seconds[p] = max(seconds[p], layers * proj[0] + (f - layers * proj[1]) / rate)
        if p == "scores":       # TensorRT-LLM's context MLA op as measured, at least
            op = _prefill_context_op(m, chip, lay, isl, engine, efficiency)
            seconds[p] = max(seconds[p], 0.0 if op is None else m.layers * op)
    # one at a time: the prompt's routed experts spread over every chip, everything else on
    # its own attention group; else dp prompts at once share every chip
    compute = (sum(t for p, t in seconds.items() if p != "experts") / (tp if serial else n)
               + seconds["experts"] / n)
    # one pass holds the prompts of every attention group at once (one each) or one prompt:
    # its weight read and its kernels are shared by them (each request pays its share)
    prompts = 1 if serial else dp
    # the pass ends when its busiest HBM has read its chip's weights: decode's own count of
    # the fullest chip (each attention group holds the non-expert weights / tp, MLA's latent
    # down-projections whole on every rank, ceil(E / ep) experts a chip, split etp ways),
    # not the instance's weights spread evenly over its chips
    bw = chip.hbm_bandwidth * (DECODE_HBM_EFFICIENCY.value if hbm_efficiency is None
                               else hbm_efficiency)
    weights = _chip_weight_bytes(m, fabric, lay, chip) / bw / prompts
    ab = m.activation_bytes
    # TensorRT-LLM's attention DP gathers the prompt's tokens (NVFP4 experts: quantized first)
    if ep_kernel is not None:
        exchange_kernel(ep_kernel)      # a name it knows (SpecError names the choices)
    gathers = trtllm_gathers(m, chip, lay, engine, ep_kernel)
    db = ((trtllm_gather_element_bytes(m, chip) if gathers else ab) if dispatch_bytes is None
          else check_number("dispatch_bytes", dispatch_bytes, strict=True))
    # a chunk's collectives are costed at the chunk's own size (PrefillTime.chunk_comm): each
    # pays its fixed latency once per pass, and the runtime picks its protocol for the
    # chunk's bytes (under NCCL the cost is not affine in them), once per size
    # the collective given (checked), else the engine's, as its decode steps take it
    cost_kwargs = {**cost_kwargs, "collective": engine_collective(
        engine, chip, collective=cost_kwargs.get("collective"),
        runtime=cost_kwargs.get("runtime"), algorithm=cost_kwargs.get("algorithm", "auto"),
        fabric=fabric)}
    comm_at = _PassCollectives(m, fabric, pos, lay, db, serial, cost_kwargs, gathers)
    comm = comm_at(isl)
    comm_one = comm_at(1) if isl > 1 else None
    # the routed experts' share of that read (a short pass reads only the experts it touches)
    experts = (m.moe_layers * math.ceil(m.routed_experts / ep) * m.routed_expert_bytes
               / lay.etp / bw) / prompts
    pre = PrefillTime(isl=isl, flops=float(flops), compute=compute, weights=weights, comm=comm,
                      total=0.0, expert_weights=experts, experts=m.routed_experts,
                      experts_per_token=m.experts_per_token, launch=float(launch_overhead),
                      launch_layers=_pass_kernels(m, lay), boundary=float(graph_kernel_overhead),
                      held_layers=_pass_held(m, lay, cost_kwargs),
                      prompts=prompts, comm_one=comm_one, comm_at=comm_at)
    return dataclasses.replace(pre, total=pre.chunk_seconds(isl))


# -- mixed steps (decodes and a prompt chunk in one forward pass) ---------------------

#: vLLM's scheduler token budget per engine step when ``vllm serve`` is not told otherwise.
VLLM_MAX_BATCHED_TOKENS = Parameter(
    "serving.vllm_max_num_batched_tokens", 8192, "tokens per step",
    "vllm-project/vllm vllm/engine/arg_utils.py EngineArgs.get_batch_defaults: a GPU with "
    ">= 70 GiB that is not an A100 (H100, H200, B200 ...), usage context OpenAI API server "
    "(vllm serve): max_num_batched_tokens = 8192. vLLM V1 always chunks prefill: a step runs "
    "one token of every running request, then waiting prompts' chunks, first come first "
    "served, in what is left of the budget")

#: TensorRT-LLM's token budget per engine iteration when not told otherwise.
TRTLLM_MAX_NUM_TOKENS = Parameter(
    "serving.trtllm_max_num_tokens", 8192, "tokens per step",
    "NVIDIA/TensorRT-LLM tensorrt_llm/builder.py BuildConfig.max_num_tokens default 8192 (the "
    "PyTorch backend's LLM API takes the same default); its in-flight batching packs context "
    "tokens and generation tokens into one input tensor per iteration (TensorRT-LLM docs, "
    "'Paged Attention, IFB, and Request Scheduling': 'sequences in the context phase can be "
    "processed together with sequences in the generation phase', context tokens first)")

#: Engines whose steps run the running requests' decode tokens and a prompt's chunk in ONE
#: forward pass, with their token budget per step. An engine not listed runs a prompt as its
#: own forward pass (SGLang: ``ServerArgs.enable_mixed_chunk`` defaults to False, and without
#: it a prefill batch runs alone, decode steps between: sgl-project/sglang
#: python/sglang/srt/server_args.py, managers/scheduler.py ``is_mixed_chunk``).
MIXED_STEP_BUDGET = {
    # vllm/v1/core/sched/scheduler.py Scheduler.schedule (v0.21, the InferenceX image): "no
    # decoding phase nor prefill phase": running requests' tokens first, then waiting prompts,
    # in one budget; one SchedulerOutput per step, one forward over all its tokens
    "vllm": VLLM_MAX_BATCHED_TOKENS,
    "trtllm": TRTLLM_MAX_NUM_TOKENS,
}

#: Whether each mixing engine of :data:`MIXED_STEP_BUDGET` splits a prompt over steps when it
#: does not fit what a step leaves beside the running requests (chunked prefill). vLLM V1
#: always does (:data:`VLLM_MAX_BATCHED_TOKENS`). TensorRT-LLM does only with
#: ``enable_chunked_prefill``, False by default (tensorrt_llm/llmapi/llm_args.py): its
#: MicroBatchScheduler (cpp/tensorrt_llm/batch_manager/microBatchScheduler.cpp,
#: ``operator()``) walks the active requests in order, a generating request taking one token
#: plus its draft tokens and a context request without chunking its whole prompt, and stops at
#: the first that would pass ``max_num_tokens``: a prompt runs only whole, in a step whose
#: other tokens leave room for all of it (:func:`_admits_whole`), so a rank runs at most
#: :func:`_admission_cap` requests and the others wait.
CHUNKED_PREFILL = {
    "vllm": True,
    "trtllm": False,
}


def _admits_whole(budget, taken, prompt):
    """Whether a step of an engine that runs a prompt only whole (:data:`CHUNKED_PREFILL`)
    admits a ``prompt``-token prompt beside requests already taking ``taken`` of its
    ``budget`` tokens: TensorRT-LLM's MicroBatchScheduler adds a context request's whole
    prompt and stops its walk at the first request that would pass ``max_num_tokens``. The
    one admission rule of the steady state (:func:`_admission_cap`) and of the closed loop
    (:func:`closed_loop_run`).

    >>> _admits_whole(1151, 127, 1024), _admits_whole(1127, 104, 1024)
    (True, False)
    """
    return taken + prompt <= budget


def _admission_cap(budget, isl, draft_length=0):
    """Requests one rank runs at most when its engine runs a prompt only whole
    (:func:`_admits_whole`): the largest ``g`` whose ``g - 1`` generating requests, ``1 +
    draft_length`` tokens each (a token and its drafts), leave ``isl`` tokens of ``budget``
    (a prompt joins them only then; two prompts in one step would need ``isl <= 1`` more):
    ``(budget - isl) // (1 + draft_length) + 1``; 0 when ``isl > budget`` (no request ever
    runs). Requests beyond it wait for a free slot before their prompt runs.

    >>> _admission_cap(1151, 1024), _admission_cap(1127, 1024), _admission_cap(1127, 1024, 3)
    (128, 104, 26)
    >>> _admission_cap(1000, 1024)
    0
    """
    budget, isl = (check_count(v, name, 1) for name, v in (("budget", budget), ("isl", isl)))
    draft_length = check_count(draft_length, "draft_length", 0)
    if not _admits_whole(budget, 0, isl):
        return 0
    # the closed form of the rule: cap - 1 others admit the prompt, cap others do not
    return (budget - isl) // (1 + draft_length) + 1


def _prompt_bound(batch, dp, budget, isl, osl, e, draft_length=0):
    """Whether, for an engine that runs a prompt only whole (:func:`_admits_whole`), prompts
    arrive at a rank faster than its steps can take them, so that the steady state of
    ``batch`` running requests (over ``dp`` ranks, ``budget`` tokens a rank's step) cannot be
    held: requests queue and fewer run. Each of a rank's ``r = ceil(batch / dp)`` requests
    lives ``osl / e`` steps (its prompt's step, then ``osl / e - 1`` decode steps; ``e``
    tokens a cycle), so ``r e / osl`` prompts a step must join; a step that takes ``q``
    prompts holds ``q x isl`` prompt tokens beside the ``r - q`` others' ``1 +
    draft_length`` tokens each (the slots the prompts refill decode no more), so at most
    ``q = floor((budget - r (1 + draft_length)) / (isl - 1 - draft_length))`` a step. False
    when a prompt costs a step no more than a decode slot. (A chunking engine spreads a
    prompt over steps instead: its prompt phase lengthens, priced by its chunks, and nothing
    queues.)

    >>> _prompt_bound(1024, 8, 1151, 1024, 2048, 1.0)     # 128 a rank: 1 prompt in 16 steps
    False
    >>> _prompt_bound(1024, 8, 1151, 1024, 100, 1.0)      # 1.28 prompts a step, 1 fits
    True
    >>> _prompt_bound(16, 1, 8192, 1024, 100, 1.0)        # 0.16 a step, 7 fit
    False
    """
    r = -(-batch // dp)
    per = isl - 1 - draft_length
    if per <= 0:
        return False
    return r * e / osl > math.floor((budget - r * (1 + draft_length)) / per)


#: vLLM's largest default CUDA-graph capture size.
VLLM_MAX_CUDAGRAPH_SIZE = Parameter(
    "serving.vllm_max_cudagraph_capture_size", 512, "sequences",
    "vllm-project/vllm vllm/config/vllm.py VllmConfig._set_cudagraph_sizes (stored version "
    "09f030ea; the rule restated in CompilationConfig.max_cudagraph_capture_size): with no "
    "sizes given, the largest capture size is min(max_num_seqs x (1 + speculative tokens) x 2, "
    "512), then at most max_num_batched_tokens; the sizes are 1, 2, 4, multiples of 8 below "
    "256 and multiples of 16 from 256; a batch runs the smallest captured graph that holds it "
    "(padded), a batch above the largest runs without a graph")


def vllm_graph_batch(batch, *, max_num_seqs, max_batched_tokens=VLLM_MAX_BATCHED_TOKENS.value):
    """The CUDA graph a vLLM decode step of ``batch`` sequences runs: the smallest of vLLM's
    default capture sizes (:data:`VLLM_MAX_CUDAGRAPH_SIZE`) that holds it, the padded rows
    computed with the real ones; None when ``batch`` is above the largest (no graph).

    Parameters
    ----------
    batch : int
        Sequences in the step.
    max_num_seqs : int
        vLLM's ``--max-num-seqs``, which caps its capture sizes.
    max_batched_tokens : int
        vLLM's ``--max-num-batched-tokens`` (tokens per step), which caps them too.

    Returns
    -------
    int or None
        Rows the graph runs.

    Examples
    --------
    >>> [vllm_graph_batch(b, max_num_seqs=64) for b in (1, 3, 5, 9, 63, 64, 128, 129)]
    [1, 4, 8, 16, 64, 64, 128, None]
    >>> vllm_graph_batch(300, max_num_seqs=1024), vllm_graph_batch(9, max_num_seqs=5)
    (304, None)
    """
    batch, max_num_seqs, max_batched_tokens = (check_count(v, name, 1) for name, v in (
        ("batch", batch), ("max_num_seqs", max_num_seqs),
        ("max_batched_tokens", max_batched_tokens)))
    top = min(max_num_seqs * 2, VLLM_MAX_CUDAGRAPH_SIZE.value, max_batched_tokens)
    return next((size for size in _vllm_capture_sizes(top) if size >= batch), None)


@functools.lru_cache(maxsize=64)
def _vllm_capture_sizes(top):
    """vLLM's default capture sizes up to ``top``, ascending."""
    return (tuple(i for i in (1, 2, 4) if i <= top) + tuple(range(8, min(top + 1, 256), 8))
            + tuple(range(256, top + 1, 16)))

def _default_engine():
    """The engine :func:`analysis.decode_step` prices when none is given (its signature)."""
    return inspect.signature(decode_step).parameters["engine"].default


def step_budget(engine):
    """Tokens per step of ``engine``'s mixed steps (:data:`MIXED_STEP_BUDGET`), or None when
    the engine runs prompts as their own forward passes (None: :func:`analysis.decode_step`'s
    default engine).

    Parameters
    ----------
    engine : str or None
        ``"vllm"``, ``"trtllm"``, ``"sglang"``, or None (:func:`analysis.decode_step`'s
        default).

    Returns
    -------
    int or None
        Tokens.

    Examples
    --------
    >>> step_budget("vllm"), step_budget("trtllm"), step_budget("sglang")
    (8192, 8192, None)
    """
    engine = _default_engine() if engine is None else engine
    check_engine(engine)
    p = MIXED_STEP_BUDGET.get(engine)
    return None if p is None else p.value


def shared_weight_read(prefill, step_weights, step_compute, chunk, step_launch=0.0):
    """Seconds a mixed engine step saves by running a ``chunk``-token piece of a prompt and a
    decode step in ONE forward pass instead of two: the GEMMs read the weights once, and the
    pass has one set of kernel boundaries.

    Priced apart, the chunk's GEMM time is its own roofline, ``max(chunk x compute / isl,
    prefill.read(chunk))`` (:meth:`PrefillTime.chunk_seconds` without its communication:
    a pass of ``chunk`` tokens reads the weights they touch once, however small) and the
    decode step reads ``step_weights``; merged, the GEMMs take ``max(chunk x compute / isl +
    step_compute, prefill.read(chunk), step_weights)`` (one read of the weights, no less than
    either part reads on its own, and the FLOPs of both; the union of two partial expert
    reads is at least the larger, so where both parts leave experts unread the saving is an
    upper bound). The saving is the difference, clamped to ``[0, min(step_weights, chunk's
    priced time)]``: a mixed step is never faster than either of its parts alone. With a
    compute-bound chunk it is ``step_weights - step_compute``. ``step_compute`` counts every
    FLOP of the decode step (its attention scores too), so the saving is a lower bound
    where scores matter. Plus ``min(step_launch, the chunk pass's kernel boundaries)``
    (:meth:`PrefillTime.boundaries`): the merged pass runs each operator once for both
    parts' tokens, so the cheaper part's boundaries are not paid twice (each term within
    its part: still never faster than either part alone).

    With ``prefill.prompts = P > 1`` (the attention groups' prompts in one pass, each
    group's chunk ``chunk`` tokens) the step merges all ``P`` chunks with the decode step:
    the pass's saving (``P`` chunks' FLOPs and ``prefill.read(chunk)`` scaled to the pass
    against the one decode read and boundaries) per prompt, i.e. divided by ``P``.

    Parameters
    ----------
    prefill : PrefillTime
    step_weights, step_compute : float
        Seconds: the decode step's weight read and compute (``DecodeBreakdown.weights`` and
        ``.compute``).
    chunk : int
        Prompt tokens in the step.
    step_launch : float, default 0
        Seconds of the decode step's kernel boundaries (``DecodeBreakdown.launch``).

    >>> p = PrefillTime(isl=1000, flops=0.0, compute=0.5, weights=0.1, comm=0.0, total=0.6)
    >>> round(shared_weight_read(p, 0.02, 0.001, 1000), 6)          # compute-bound chunk
    0.019
    >>> round(shared_weight_read(p, 0.02, 0.001, 100), 6)   # a small chunk: the read is shared
    0.02
    """
    if not isinstance(prefill, PrefillTime):
        raise kind_error(prefill, "prefill", "a PrefillTime (analysis.prefill_time)")
    step_weights = check_number("step_weights", step_weights, unit=" seconds")
    step_compute = check_number("step_compute", step_compute, unit=" seconds")
    step_launch = check_number("step_launch", step_launch, unit=" seconds")
    chunk = check_count(chunk, "chunk", 0, "an integer >= 0 (prompt tokens)")
    # a PrefillTime built by hand (as below) is checked as prefill_time's own would hold:
    # isl 0 divided by zero, a negative isl or time gave a negative saving, nan read as 0
    isl = check_count(prefill.isl, "prefill.isl", 1, "an integer >= 1 (prompt tokens)")
    for name in ("compute", "weights", "expert_weights", "boundary"):
        check_number(f"prefill.{name}", getattr(prefill, name), unit=" seconds")
    if prefill.expert_weights > prefill.weights:
        raise SpecError(f"prefill.expert_weights ({prefill.expert_weights!r} s) is part of "
                        f"prefill.weights ({prefill.weights!r} s): it cannot exceed it")
    e, k = prefill.experts, prefill.experts_per_token
    if any(not is_int(v) for v in (e, k)) or not 0 <= k <= e:
        raise SpecError(f"prefill.experts and prefill.experts_per_token must be integers with "
                        f"0 <= experts_per_token <= experts, got {e!r} and {k!r}")
    prompts = prefill._prompts()
    # the whole pass: every group's chunk (per-prompt figures times the prompts)
    flops = prompts * chunk * prefill.compute / isl
    read = prompts * prefill.read(chunk) if chunk else 0.0
    priced = max(flops, read)
    merged = max(flops + step_compute, read, step_weights)
    boundaries = prefill.boundaries() if chunk else 0.0
    return (min(max(0.0, priced + step_weights - merged), step_weights, priced)
            + min(step_launch, boundaries)) / prompts


def _room(batch, budget, dp):
    """Prompt tokens a rank's step holds beside its other requests' decode tokens (0 for an
    engine that does not mix, ``budget`` None)."""
    return (budget - (math.ceil(batch / dp) - 1)) if budget is not None else 0


def _prompt_seconds(prefill, isl, batch, budget, dp=1):
    """Seconds one ``isl``-token prompt takes in its own passes: with a mixing engine's
    ``budget``, its chunks (what is left of the budget beside the rank's other requests, then
    the rest), each at its own roofline (:meth:`PrefillTime.chunk_seconds`: every chunk reads
    the weights again); else, or with no room, one pass (``prefill.total``)."""
    room = _room(batch, budget, dp)
    if room < 1 or room >= isl:
        return prefill.total
    full, rest = divmod(isl, room)
    return full * prefill.chunk_seconds(room) + (prefill.chunk_seconds(rest) if rest else 0.0)


def _prompt_saving(prefill, step_weights, step_compute, isl, batch, budget, steps, dp=1,
                   step_launch=0.0, overlap=None):
    """Seconds one ``isl``-token prompt saves over the decode steps it rides on in the steady
    state: alone in its steps beside the other requests of its scheduler (``ceil(batch / dp)
    - 1``: with ``dp`` attention groups each rank schedules its own tokens, TensorRT-LLM's
    ``max_num_tokens`` and a vLLM DP engine's budget are per rank), in chunks of what is left
    of ``budget``, then the rest, each :func:`shared_weight_read`; but a step shares its read
    once, so the ``batch`` prompts of one request time save at most ``steps`` (the decode
    steps in it) times a full chunk's saving (of the step's pass: ``prefill.prompts``
    groups' chunks in it, each saving :func:`shared_weight_read`'s share), shared among
    them. 0 when the engine does not mix (``budget`` None) or a step has no room for a
    chunk. ``overlap``: seconds a step's pass of ``prefill.prompts`` chunks of ``c`` tokens
    prices twice against its decode step (:func:`module_overlap` of ``c x prompts`` prompt
    tokens), added to each chunk's saving at its share (``1 / prompts``), no more than the
    chunk's priced time; None: nothing."""
    room = _room(batch, budget, dp)
    if room < 1:
        return 0.0
    P = prefill.prompts

    def one(c):
        s = shared_weight_read(prefill, step_weights, step_compute, c, step_launch)
        if overlap is None:
            return s
        return min(s + overlap(c * P) / P, prefill.chunk_seconds(c))

    full, rest = divmod(isl, room)
    saved = full * one(room)
    if rest:
        saved += one(rest)
    # one saving per step, of the step's pass: every group's chunk in it (prompts per pass)
    most = steps * P * one(min(room, isl))
    return min(saved, most / batch)


# -- layouts ----------------------------------------------------------------------------

def _divisors(n):
    return [d for d in range(1, n + 1) if n % d == 0]


def instance_sizes(fabric):
    """Instance sizes (chips) the layout search tries on ``fabric``.

    On an intact fabric, every divisor ``n`` of its chips: the system runs ``N / n``
    copies and no chip is idle. On a fabric with failed chips the failure breaks that
    tiling (a 72-chip rack without one chip has 71 live chips, a prime), so the search
    tries the intact system's sizes that the live chips still hold (``live // n``
    copies, ``live % n`` live chips idle: :func:`idle_chips`) and the sizes that tile
    the live chips exactly. Not every size up to the live chips: the intact search does
    not try those either, and a failed chip must not make a system look better than
    intact by widening its search. Failed links alone change no chip count.

    Parameters
    ----------
    fabric : fabric.Fabric
        Intact or degraded: its live chips are what an instance takes.

    Returns
    -------
    list of int
        Chips per instance, ascending.

    Examples
    --------
    >>> import topologies
    >>> node = topologies.build("switch:8,chip=b200")
    >>> instance_sizes(node), instance_sizes(node.without(chips=["chip3"]))
    ([1, 2, 4, 8], [1, 2, 4, 7])
    """
    fabric = fabric_arg(fabric)
    live, intact = fabric.n_endpoints, fabric.n_ranks
    return [n for n in range(1, live + 1) if live % n == 0 or intact % n == 0]


def candidate_layouts(model, fabric, *, chip=None, usable_hbm=USABLE_HBM_FRACTION.value):
    """Every layout worth evaluating for ``model`` on ``fabric``, as strings.

    The search space, generated (not listed by hand): an instance of ``n`` chips
    for every size :func:`instance_sizes` gives (every divisor of the system's chips;
    on a fabric with failed chips also the intact system's sizes the live chips still
    hold, leaving ``live % n`` idle), whose HBM holds the weights; attention tensor-parallel over
    every ``tp`` dividing both ``n`` and the attention heads, data-parallel over
    ``dp = n / tp``; experts spread over the ``ep = n`` chips (the decode model's
    placement), at most one rank per routed expert; and, for ``n > 1`` dividing the
    heads, plain tensor parallelism with every expert split over the ``n`` chips
    (``tp=n,dp=1,etp=n``: vLLM's "TP=n" without expert parallelism). Ordered by
    ``n``, then ``tp``, the expert-split layout last.

    Parameters
    ----------
    model : str or MoEModel
    fabric : fabric.Fabric
        Intact or degraded.
    chip : str or fabric.ChipSpec, optional
        Default: the fabric's chip.
    usable_hbm : float
        Fraction of each chip's HBM the weights may take, in (0, 1].

    Returns
    -------
    list of str

    Examples
    --------
    >>> import topologies
    >>> node = topologies.build("switch:8,planes=2,links=9,tech=nvlink5,chip=b200")
    >>> candidate_layouts("kimi-k2", node)
    ['tp=1,dp=8', 'tp=2,dp=4', 'tp=4,dp=2', 'tp=8,dp=1', 'tp=8,dp=1,etp=8']
    >>> rack = topologies.build("nvl72").without(chips=["chip3"])    # 71 live chips
    >>> [x for x in candidate_layouts("kimi-k2", rack) if x.startswith("tp=8")]  # 7, 23 idle
    ['tp=8,dp=1', 'tp=8,dp=1,etp=8', 'tp=8,dp=3']
    """
    fabric = fabric_arg(fabric)
    m = model_config(model)
    chip = fabric_chip(fabric, chip)
    usable_hbm = check_fraction("usable_hbm", usable_hbm, 0, 1, lo_open=True)
    out = []
    for n in instance_sizes(fabric):
        if n > m.routed_experts or m.weight_bytes_total > n * chip.hbm_bytes * usable_hbm:
            continue
        for tp in _divisors(n):
            if m.attention.heads % tp == 0:
                out.append(f"tp={tp},dp={n // tp}")
        if n > 1 and m.attention.heads % n == 0:
            out.append(f"tp={n},dp=1,etp={n}")
    return out


def _batch_grid(b_max, count):
    """Powers of two up to ``b_max`` and ``b_max`` itself, thinned to ``count`` values."""
    grid = sorted({2 ** i for i in range(int(math.log2(b_max)) + 1)} | {b_max})
    if len(grid) <= count:
        return grid
    idx = sorted({round(i * (len(grid) - 1) / (count - 1)) for i in range(count)})
    return [grid[i] for i in idx]


# -- points -----------------------------------------------------------------------------

@dataclass(frozen=True)
class ServingPoint:
    """One operating point: a layout, a concurrency, a speculative setting.

    Attributes
    ----------
    system, model, mode, definition : str
        ``definition`` says what :attr:`tokens_per_s_gpu` counts (:data:`DEFINITIONS`).
    layout : str
        The instance's layout (``tp=..,dp=..``); experts over its ``chips``.
    chips : int
        Chips of one decode instance (per-GPU figures count these: every copy of the
        instance runs alike).
    batch : int
        Concurrent users (sequences) per instance.
    draft_length : int
    acceptance : float
    isl, osl, context : int
        Input and output tokens; the mean decode context ``isl + osl // 2``.
    tokens_per_cycle : float
        Tokens per decode cycle per user over a request, ``osl / expected_cycles`` (1
        without speculation; the speculative mean less the last cycle's surplus).
    cycle_time, prefill_time, request_time : float
        Seconds: one decode cycle; one prefill (instance-seconds per request; aggregated
        with a mixing engine, the prompt's chunks each at its own roofline,
        :meth:`PrefillTime.chunk_seconds`); ``R``.
    tpot : float
        Seconds between a user's output tokens, prefill interruptions included.
    tokens_per_s_user : float
        ``1 / tpot``.
    tokens_per_s_gpu : float
        In ``definition``; the three definitions follow.
    total_tokens_per_s_gpu, output_tokens_per_s_gpu, output_tokens_per_s_decode_gpu : float
    prefill_gpus : float
        GPUs prefilling for this instance (disaggregated mode; 0 when aggregated).
    breakdown : dict
        Seconds per output token, additive (they sum to ``tpot``): ``attention``,
        ``ffn``, ``head``, ``exposed_comm``, ``launch`` (from the decode model),
        ``draft`` and ``prefill`` (other users' prefills interleaved).
    resources : dict
        Seconds per output token of ``weights``, ``kv_cache``, ``compute``, ``comm``
        (raw, not additive: rooflines take maxima).
    hbm_per_chip, hbm_capacity : float
        Bytes needed on the fullest chip at the full context ``isl + osl``; bytes usable.
    idle_chips : int
        Live chips of the system no copy of the instance uses (:func:`idle_chips`:
        ``live % chips``, or with an exchange kernel what copies of equal domains leave
        over): 0 on an intact fabric's searched layouts; on a degraded fabric the chips the
        failure leaves over (a damaged domain's). Not counted in the per-GPU figures.
    shared_read : float
        Seconds one prompt's chunks save over the decode steps they ride on (aggregated
        mode, an engine that mixes them in one forward pass: :func:`shared_weight_read`
        summed over the chunks); 0 otherwise. ``request_time = queue_time + running x
        (prefill_time - shared_read) + osl x cycle_time / tokens_per_cycle`` and a user's
        first token comes ``queue_time + prefill_time - shared_read`` after the request.
    running : int
        Requests of the instance in its engine steps: ``batch``, unless the engine admits
        fewer (``admission_cap`` a rank binds): then ``min(batch, admission_cap x dp)``
        run, every figure of a step (``cycle_time``, ``tpot``, ``breakdown``, the KV cache
        in ``hbm_per_chip``) is at ``running``, and the other requests wait.
    queue_time : float
        Seconds a request waits for a slot before its prompt runs: by Little's law
        (``batch`` requests always in the system, ``running`` served at a time) a request
        takes ``batch / running`` times its time at ``running``, so ``request_time`` and the
        first token include ``queue_time``; 0 when every request runs.
    admission_cap : int or None
        Requests one rank runs at most: an engine that runs a prompt only whole
        (:data:`CHUNKED_PREFILL`: TensorRT-LLM by default) admits a prompt only when the
        rank's generating requests (``1 + draft_length`` tokens each) leave ``isl`` tokens of
        its ``max_num_tokens`` (:func:`_admission_cap`); None when the engine chunks prompts
        or runs none on these GPUs.
    prompt_bound : bool
        True when an engine that runs a prompt only whole (``admission_cap`` set) cannot
        take prompts as fast as they arrive (:func:`_prompt_bound`: the ``running``
        requests' completions need more whole prompts a step than the step budget leaves
        room for beside their decode tokens): the figures are those of a state the engine
        cannot hold (requests queue and fewer run), not a throughput it sustains;
        :func:`serving_frontier` leaves such points off its front. False otherwise (a
        chunking engine lengthens the prompt phase instead, priced by its chunks).
    step_kernels : int
        Kernels one verification step launches (before fusion; every micro-batch's): each
        adds at most a term to each per-token part, the count :func:`speed_limits` bounds
        the rounding of its compute share by.
    """

    system: str
    model: str
    mode: str
    definition: str
    layout: str
    chips: int
    batch: int
    draft_length: int
    acceptance: float
    isl: int
    osl: int
    context: int
    tokens_per_cycle: float
    cycle_time: float
    prefill_time: float
    request_time: float
    tpot: float
    tokens_per_s_user: float
    tokens_per_s_gpu: float
    total_tokens_per_s_gpu: float
    output_tokens_per_s_gpu: float
    output_tokens_per_s_decode_gpu: float
    prefill_gpus: float
    breakdown: dict
    resources: dict
    hbm_per_chip: float
    hbm_capacity: float
    idle_chips: int = 0
    shared_read: float = 0.0
    running: int = None
    queue_time: float = 0.0
    admission_cap: int = None
    prompt_bound: bool = False
    step_kernels: int = 0

    @property
    def fits(self):
        """Whether weights and the KV cache at the full context fit in usable HBM."""
        return self.hbm_per_chip <= self.hbm_capacity


def _speculative_setting(setting):
    """``(draft_length, acceptance)`` read strictly: an integer >= 0 (numpy integers too, as
    plain ints) and a number in [0, 1]; never a float draft length rounded down."""
    try:
        k, a = setting
    except (TypeError, ValueError):
        raise SpecError(f"a speculative setting is a (draft_length, acceptance) pair, got "
                        f"{show_value(setting)}") from None
    k, a = check_count(k, "draft_length", 0), check_fraction("acceptance", a, 0, 1)
    expected_accepted_tokens(k, a)                   # validates the ranges
    return k, a


def _check_draft_cost(draft_cost):
    """``draft_cost``: None (priced) or a finite fraction of a plain step >= 0."""
    if draft_cost is None:
        return None
    return check_number("draft_cost", draft_cost,
                   tail=" (a fraction of a plain step) or None (priced)")


def _no_mtp(m):
    return (f"{m.name} has no multi-token-prediction module (mtp_modules=0) to price a draft "
            f"from; pass draft_cost= (CLI: --draft-cost; a draft model's time per token as a "
            f"fraction of a plain step)")


#: Output lengths up to which :func:`expected_cycles` runs its recursion exactly; beyond, the
#: recursion's transient has died out (it decays geometrically) and each further token adds
#: ``1 / E`` cycles.
_EXACT_CYCLES_UP_TO = 1 << 16


def expected_cycles(osl, draft_length, acceptance):
    """Expected decode cycles for one request of ``osl`` output tokens under speculative
    decoding with ``draft_length`` drafted tokens of ``acceptance`` each.

    A cycle emits ``j`` tokens with probability ``p_j = a^(j-1) (1 - a)`` for ``j <= k`` and
    ``a^k`` for ``j = k + 1`` (the accepted drafts, then the target's own token: mean
    :func:`analysis.expected_accepted_tokens`), but never more than the request has left:
    the engine stops a sequence at its length and discards the surplus drafts. So
    ``N(0) = 0`` and ``N(r) = 1 + sum_j p_j N(max(0, r - j))``, not ``osl / E`` (audit S9 5:
    x2.95 at osl 1, +0.12% at osl 1024 for k = 3, a = 0.8). Exact up to
    :data:`_EXACT_CYCLES_UP_TO` tokens, then ``1 / E`` per token.

    Parameters
    ----------
    osl : int
        Output tokens of the request, >= 0.
    draft_length : int
        Drafted tokens per cycle (``k``), >= 0.
    acceptance : float
        Probability each draft token is accepted (``a``), in [0, 1].

    Returns
    -------
    float
        Cycles (target-model steps).

    Examples
    --------
    >>> expected_cycles(1, 3, 0.8), expected_cycles(8, 0, 0.5)
    (1.0, 8.0)
    >>> round(expected_cycles(1024, 3, 0.8), 2)
    347.3
    """
    osl = check_count(osl, "osl", 0)
    k, a = _speculative_setting((draft_length, acceptance))
    return _expected_cycles(osl, k, a)


@functools.lru_cache(maxsize=256)
def _expected_cycles(osl, k, a):
    e = expected_accepted_tokens(k, a)
    if k == 0 or a == 0.0:
        return float(osl)
    top = min(osl, _EXACT_CYCLES_UP_TO)
    return _exact_cycles(top, k, a) + (osl - top) / e


@functools.lru_cache(maxsize=256)
def _exact_cycles(top, k, a):
    """``N(top)`` of :func:`expected_cycles`' recursion (one table for every ``osl`` that
    reaches :data:`_EXACT_CYCLES_UP_TO`)."""
    # a cycle emitting j >= r tokens ends a request with r left (N(0) = 0): only the
    # probabilities of j < top tokens enter the recursion (and a huge k costs no memory)
    p = [a ** (j - 1) * (1 - a) for j in range(1, min(k, top) + 1)] + (
        [a ** k] if k < top else [])
    m = len(p)
    n = [0.0] * (top + 1)
    for r in range(1, top + 1):
        if r > m:   # n[r - 1], ..., n[r - m]: the same terms in the same order as below
            n[r] = 1.0 + sum(map(operator.mul, p, n[r - 1:r - m - 1:-1]))
        else:
            n[r] = 1.0 + sum(pj * n[max(0, r - j)] for j, pj in enumerate(p, 1))
    return n[top]


def _compose(verify, base_time, *, k, a, draft_cost, prefill, batch, isl, osl, n,
             mode, definition, system, model, layout, context, hbm, capacity, idle=0,
             budget=None, micro_batches=1, dp=1, users=None, cap=None, overlap=None):
    """A :class:`ServingPoint` from its decode steps and prefill (see the module docstring):
    a request takes :func:`expected_cycles` cycles, i.e. ``e = osl / cycles`` tokens per
    cycle (the speculative mean :func:`analysis.expected_accepted_tokens`, less the surplus
    of the last cycle). Aggregated, with a mixing engine's ``budget`` (tokens per step,
    :func:`step_budget`): each prompt saves ``S`` (:func:`_prompt_saving`) over the
    (verification) steps it rides on, one micro-batch's weight read per step, at most one
    saving per step of the ``osl / e`` steps in a request's time. ``batch`` requests run
    (the steps' batch); ``users`` (default ``batch``) are in the system, the others waiting
    (``cap``: the engine's admission cap a rank, :func:`_admission_cap`): a request's time
    is ``users / batch`` times its time at ``batch`` (Little's law), the throughputs
    ``batch``'s."""
    e = osl / expected_cycles(osl, k, a)
    draft = k * draft_cost * base_time
    verify_time, b = verify
    cycle = draft + verify_time
    tok = cycle / e
    t_p = prefill.total
    shared = 0.0
    if mode == "aggregated":
        t_p = _prompt_seconds(prefill, isl, batch, budget, dp)
        shared = _prompt_saving(prefill, b["weights"] / micro_batches,
                                b["compute"] / micro_batches, isl, batch, budget, osl / e, dp,
                                b["launch"] / micro_batches, overlap)
        request = batch * (t_p - shared) + osl * tok
        prefill_share = (batch - 1) * (t_p - shared) / osl
        g_p = 0.0
    else:
        request = osl * tok
        prefill_share = 0.0
        g_p = batch / request * t_p * n
    tpot = tok + prefill_share
    out_decode = batch * osl / request / n
    out_all = batch * osl / request / (n + g_p)
    total_all = batch * (isl + osl) / request / (n + g_p)
    users = batch if users is None else users
    queue = 0.0
    if users != batch:          # the waiting requests: each request's time x users / batch
        queue = request * (users / batch - 1.0)
        request += queue
    y = {"total-per-gpu": total_all, "output-per-gpu": out_all,
         "output-per-decode-gpu": out_decode}[definition]
    parts = {k_: b[k_] / e for k_ in ("attention", "ffn", "head", "exposed_comm", "launch")}
    parts["draft"] = draft / e
    parts["prefill"] = prefill_share
    res = {k_: b[k_] / e for k_ in ("weights", "kv_cache", "compute", "comm", "kernel_floor")}
    return ServingPoint(system=system, model=model, mode=mode, definition=definition, layout=layout,
                        chips=n, batch=users, draft_length=k, acceptance=float(a), isl=isl,
                        osl=osl, context=context, tokens_per_cycle=e, cycle_time=cycle,
                        prefill_time=t_p, request_time=request, tpot=tpot,
                        tokens_per_s_user=1.0 / tpot, tokens_per_s_gpu=y,
                        total_tokens_per_s_gpu=total_all,
                        output_tokens_per_s_gpu=out_all, output_tokens_per_s_decode_gpu=out_decode,
                        prefill_gpus=g_p, breakdown=parts, resources=res, hbm_per_chip=hbm,
                        hbm_capacity=capacity, idle_chips=idle, shared_read=shared,
                        running=batch, queue_time=queue, admission_cap=cap,
                        prompt_bound=cap is not None and _prompt_bound(
                            batch, dp, budget, isl, osl, e, k), step_kernels=b["kernels"])


_STEP_PARTS = ("attention", "ffn", "head", "exposed_comm", "launch", "weights", "kv_cache",
               "compute", "comm", "kernel_floor")


def _vllm_graph(batch, dp, q, budget):
    """vLLM's graph for a decode step of ``batch`` sequences (whole system) of ``q`` tokens
    each: ``{"graph_batch": g}`` (each DP rank's engine pads its ``ceil(batch / dp) x q``
    tokens to a capture size, ``max_num_seqs`` its own sequences: :func:`vllm_graph_batch`),
    or :data:`_VLLM_EAGER` when they are above the largest capture size (vLLM runs the
    step without a graph)."""
    rank = math.ceil(batch / dp)
    tokens = vllm_graph_batch(rank * q, max_num_seqs=rank * q,
                              max_batched_tokens=budget or VLLM_MAX_BATCHED_TOKENS.value)
    if tokens is None:
        return dict(_VLLM_EAGER)
    return {"graph_batch": math.ceil(tokens / q) * dp}


#: A vLLM step above the largest capture size runs without a CUDA graph: each kernel pays a
#: host launch, and ``pdl`` (which :func:`analysis.decode_step` prices as hiding the gap
#: between a replayed graph's kernels) has no graph gap to hide, so it is off for that step
#: whatever the caller asked for the graph-replayed ones.
_VLLM_EAGER = {"cuda_graphs": False, "pdl": False}


def _self_consistent_step(step_at, rate_at, rel=1e-9):
    """The step time ``t`` with ``t = step_at(rate_at(t))``: a step that slows as background
    traffic grows (``step_at`` non-decreasing in the rate; ``inf`` where the rate cannot be
    carried) fed by a rate that falls as the step grows (``rate_at`` decreasing in ``t``).
    ``g(t) = step_at(rate_at(t)) - t`` falls in ``t`` and is >= 0 at ``step_at(0)``:
    bisection to ``rel``.

    >>> round(_self_consistent_step(lambda r: 1.0 + r, lambda t: 2.0 / t), 9)   # t = 1 + 2/t
    2.0
    """
    lo = step_at(0.0)
    hi = lo
    while step_at(rate_at(hi)) > hi:
        hi *= 2.0
    while hi - lo > rel * hi:
        mid = 0.5 * (lo + hi)
        if step_at(rate_at(mid)) > mid:
            lo = mid
        else:
            hi = mid
    return hi


def _steps(m, fabric, layout, batch, context, ks, micro_batches, decode_kwargs,
           vllm_graphs=False, budget=None):
    """Plain and verification step times and breakdowns at one (layout, batch).

    Returns ``{k: (seconds, {part: seconds})}`` (and ``"kernels"``: the kernels the step
    launches, :attr:`ServingPoint.step_kernels`). With ``micro_batches = u > 1``
    (two-batch overlap, as SGLang and DeepSeek run decode) a step is ``u`` steps of
    ``ceil(batch / u)`` sequences, one after the other on the compute units, each
    reading the weights again; how much communication hides under the other
    micro-batch's compute is the decode model's ``overlap`` (``overlap="two-batch"``: the
    stage schedule SGLang and DeepSeek run, :data:`analysis.TWO_BATCH`). ``vllm_graphs``:
    with ``engine="vllm"`` and CUDA graphs, each step runs vLLM's graph for its tokens
    (:func:`_vllm_graph`, ``budget`` the engine's tokens per step).
    """
    out = {}
    sub = math.ceil(batch / micro_batches)
    graphs = (vllm_graphs and decode_kwargs.get("engine") == "vllm"
              and decode_kwargs.get("cuda_graphs", True))
    dp = parse_layout(layout, fabric.n_endpoints).dp if graphs else 1
    for k in sorted(set(ks) | {0}):
        kw = {**decode_kwargs, **_vllm_graph(sub, dp, k + 1, budget)} if graphs \
            else decode_kwargs
        st = decode_step(m, fabric, batch=sub, context=context, layout=layout,
                         tokens_per_sequence=k + 1, parameters=False, **kw)
        out[k] = (micro_batches * st.time,
                  {p: micro_batches * getattr(st.breakdown, p) for p in _STEP_PARTS}
                  | {"kernels": micro_batches * (sum(x.kernels for x in st.layers)
                                                 + st.head.kernels)})
    return out


def _draft_time(m, fabric, layout, batch, context, micro_batches, decode_kwargs):
    """Seconds of one drafted token for the whole batch (``decode_step(draft=True)``, run as
    the target's steps are: ``micro_batches`` halves one after the other)."""
    st = decode_step(m, fabric, batch=math.ceil(batch / micro_batches), context=context,
                     layout=layout, draft=True, parameters=False, **decode_kwargs)
    return micro_batches * st.time


def serving_point(model, fabric, *, isl, osl, batch, layout=None, draft_length=0,
                  acceptance=None, draft_cost=None, mode="aggregated",
                  definition="total-per-gpu", prefill_efficiency=None,
                  usable_hbm=USABLE_HBM_FRACTION.value, context=None, micro_batches=1,
                  adp_balance=False, max_batched_tokens=None, kv_inflow=False,
                  **decode_kwargs):
    """One serving point (see the module docstring); raises if it does not fit in HBM.

    One ``batch`` (users per instance), one ``layout`` and one speculative setting of
    :func:`serving_frontier`'s sweep (``acceptance``'s default :data:`MTP_ACCEPTANCE`).

    Parameters
    ----------
    model, fabric, isl, osl, draft_cost, mode, definition, prefill_efficiency, usable_hbm
        As for :func:`serving_frontier`.
    context, micro_batches, adp_balance, max_batched_tokens, kv_inflow
        As for :func:`serving_frontier`.
    batch : int
        Users (concurrent requests) per instance.
    layout : str or Layout, optional
        Default: ``tp=1`` over every chip of the fabric (:func:`parse_layout`).
    draft_length : int
        Drafted tokens per cycle, >= 0.
    acceptance : float, optional
        Probability each draft token is accepted.
    **decode_kwargs
        Passed to :func:`analysis.decode_step`.

    Returns
    -------
    ServingPoint
        Tokens/s per user and per GPU, the per-token time in seconds and its parts.

    Examples
    --------
    >>> import topologies
    >>> f = topologies.build("switch:8,planes=2,links=9,tech=nvlink5,chip=b200")
    >>> p = serving_point("kimi-k2", f, isl=1024, osl=1024, batch=8, layout="tp=8")
    >>> abs(sum(p.breakdown.values()) - p.tpot) < 1e-12, p.fits
    (True, True)
    """
    fabric = fabric_arg(fabric)
    m = model_config(model)
    fr = _Sweep(m, fabric, isl=isl, osl=osl, mode=mode, definition=definition,
                prefill_efficiency=prefill_efficiency, usable_hbm=usable_hbm,
                decode_kwargs=decode_kwargs, context=context, micro_batches=micro_batches,
                adp_balance=adp_balance, max_batched_tokens=max_batched_tokens,
                kv_inflow=kv_inflow)
    k, a = _speculative_setting(
        (draft_length, MTP_ACCEPTANCE.value if acceptance is None else acceptance))
    batch = check_count(batch, "batch", 1)
    if batch < fr.micro:
        raise SpecError(f"micro_batches={fr.micro} exceeds batch={batch}: each micro-batch "
                        f"needs at least one sequence")
    draft_cost = _check_draft_cost(draft_cost)
    if k and draft_cost is None and not m.mtp_modules:
        raise SpecError(_no_mtp(m))
    lay = str(parse_layout(layout, fabric.n_endpoints))
    info = fr.layout_info(lay)
    if info["reason"]:
        raise SpecError(info["reason"])
    fr.check_runs()
    per_rank = math.ceil(batch / info["layout"].dp)
    # (an engine that runs prompts only whole runs at most its admission cap, below the budget)
    if max_batched_tokens is not None and not fr.whole_prompts and fr.budget < per_rank:
        raise SpecError(f"max_batched_tokens={fr.budget} is below the {per_rank} sequences "
                        f"a rank decodes at batch {batch}: a step could not hold one token of "
                        f"each (vLLM refuses max_num_batched_tokens < max_num_seqs)")
    pt = fr.point(lay, info, batch, [(k, a)], draft_cost)[0]
    if not pt.fits:
        raise SpecError(f"{m.name} with layout {lay} at batch {batch}: a chip needs "
                        f"{pt.hbm_per_chip / 1e9:.1f} GB at context {isl + osl} but "
                        f"{pt.hbm_capacity / 1e9:.1f} GB are usable")
    return pt


@dataclass(frozen=True)
class ClosedLoopRun:
    """Result of :func:`closed_loop_run`: one benchmark run, measured as its client measures it.

    Attributes
    ----------
    system, model, definition, layout : str
    chips : int
        Chips of the instance (per-GPU figures divide by these).
    concurrency, requests : int
        Requests in flight at most; requests in the run.
    steps : int
        Engine steps the run took.
    duration : float
        Seconds from the first request's send to the last one's completion (the cold start,
        every prompt at once, and the drain at the end included).
    tpot : float
        Mean over requests with two output tokens or more of ``(latency - ttft) / (out - 1)``
        (seconds): each request weighs the same, whatever its length.
    ttft : float
        Mean seconds from a request's send to its first token.
    tokens_per_s_user : float
        ``1 / tpot`` (InferenceX's "interactivity").
    tokens_per_s_gpu : float
        In ``definition``: ``total_tokens_per_s_gpu`` for ``"total-per-gpu"``, else
        ``output_tokens_per_s_gpu`` (one instance serves; every GPU decodes).
    total_tokens_per_s_gpu, output_tokens_per_s_gpu : float
        (Prompt + output) tokens, and output tokens, over ``duration`` and ``chips``.
    tpots, ttfts : tuple of float
        Per request, in request order (a request with one output token has no TPOT: None).
    request_tokens_per_s_user : float
        Mean over requests of output tokens over the request's latency, first token
        included: trtllm-bench's "Per User Output Throughput [w/ ctx]" (the average of its
        requests' output throughputs, ``tensorrt_llm/bench/dataclasses/reporting.py``).
    steady : ServingPoint
        :func:`serving_point` at the run's mean lengths and ``batch = concurrency``: the
        steady state the run tends to with many requests per slot; its ``breakdown`` says
        what a step is made of.
    """

    system: str
    model: str
    definition: str
    layout: str
    chips: int
    concurrency: int
    requests: int
    steps: int
    duration: float
    tpot: float
    ttft: float
    tokens_per_s_user: float
    tokens_per_s_gpu: float
    total_tokens_per_s_gpu: float
    output_tokens_per_s_gpu: float
    tpots: tuple
    ttfts: tuple
    steady: object
    request_tokens_per_s_user: float = None


def _lengths(name, values):
    vals = sequence_of(values, name, "integers >= 1")      # a wrong kind a TypeError
    if not vals:
        raise SpecError(f"{name} must be a non-empty sequence of integers >= 1, got []")
    # plain ints first: a run's lengths are, and check_count of each of 100,000 of them is
    # most of a long run's set-up (0.17 s against 0.03 s)
    if all(type(v) is int and v >= 1 for v in vals) and is_finite(max(vals)):
        return vals
    # each length named by its position when it is wrong (a wrong kind a TypeError)
    return [check_count(v, f"{name}[{i}]", 1) for i, v in enumerate(vals)]


#: How each engine places a new request on one of its attention data-parallel ranks (each
#: rank then schedules its own requests in its own step budget; :func:`_place`):
#:
#: * ``"trtllm"`` -- TensorRT-LLM's attention-DP router (tensorrt_llm/_torch/pyexecutor/
#:   executor_request_queue.py ``_schedule_attention_dp_requests`` and
#:   ``_balance_requests_across_ranks``): the requests fetched in one iteration, longest prompt
#:   first, each to the rank of fewest active prompt tokens (then fewest active requests, then
#:   the lowest rank) among those below ``max(ceil((active + new) / ranks), most active)``;
#:   a rank's active tokens are its active requests' prompt lengths (``py_orig_prompt_len``).
#: * ``"sglang"`` -- SGLang's DataParallelController, ``round_robin`` (its default): the
#:   ranks in turn, in arrival order.
#: * ``"vllm"`` -- vLLM's DPLBAsyncMPClient.get_core_engine_for_request
#:   (vllm/v1/engine/core_client.py): the rank of least ``4 x waiting + running``, the first
#:   of equals; its counts taken current (the DP coordinator publishes them every 100 ms and
#:   the client adds its own routed requests between: that lag is not simulated).
DP_PLACEMENT = ("trtllm", "sglang", "vllm")


def _place(rule, new, ins, ranks, active, tokens, waiting_count, running_count, turn):
    """Ranks of the requests ``new`` (sent in one step, in arrival order) under an engine's
    attention-DP placement ``rule`` (:data:`DP_PLACEMENT`), given each rank's ``active``
    requests (placed, not finished), their prompt ``tokens``, its requests still in their
    prompt (``waiting_count``) and decoding (``running_count``), and the round-robin
    counter ``turn``. Returns ``(pairs, turn)``: ``(request, rank)`` in the order each rank
    takes them, and the counter after.

    >>> _place("trtllm", [0, 1, 2], [5, 9, 7], 2, [0, 0], [0, 0], [0, 0], [0, 0], 0)[0]
    [(1, 0), (2, 1), (0, 1)]
    >>> _place("sglang", [0, 1, 2], [5, 9, 7], 2, [0, 0], [0, 0], [0, 0], [0, 0], 1)
    ([(0, 1), (1, 0), (2, 1)], 4)
    """
    if rule == "sglang":
        return [(i, (turn + j) % ranks) for j, i in enumerate(new)], turn + len(new)
    if rule == "vllm":
        waiting, pairs = list(waiting_count), []
        for i in new:
            r = min(range(ranks), key=lambda x: (4 * waiting[x] + running_count[x], x))
            waiting[r] += 1
            pairs.append((i, r))
        return pairs, turn
    active, tokens = list(active), list(tokens)
    expected = max(-(-(sum(active) + len(new)) // ranks), max(active))
    pairs = []
    for i in sorted(new, key=lambda x: -ins[x]):        # stable: equal prompts in arrival order
        r = min((x for x in range(ranks) if active[x] < expected),
                key=lambda x: (tokens[x], active[x], x))
        active[r] += 1
        tokens[r] += ins[i]
        pairs.append((i, r))
    return pairs, turn


def _run_steps(ins, outs, concurrency, budget, decode_seconds, prefill_seconds,
               shared=None, decode_alone=None, whole=False, ranks=1, place="trtllm",
               peaks=None, rank_pass=None):
    """Simulate a closed-loop client against a continuous-batching engine.

    ``concurrency`` requests in flight at most; when one completes, the next request (in list
    order) is sent at once. An engine step runs one decode token of each of the ``b``
    requests past their prefill (``decode_seconds(b)``) plus prompt chunks of waiting
    requests, first come first served, in ``budget - b`` tokens (``whole``: an engine that
    runs a prompt only whole takes waiting prompts whole while they fit, :func:`_admits_whole`,
    and stops at the first that does not; ``prefill_seconds(chunk)``
    for the step's ``chunk`` prompt tokens, one pass: :meth:`PrefillTime.chunk_seconds`; a
    number is seconds per token), less ``shared(b, chunk)`` when both run (one forward pass: the weight read
    they share, :func:`shared_weight_read`; None: nothing shared); a request's first token
    comes at the end of the step that finishes its prompt. Steps with no prompt waiting are
    taken in runs up to the next completion; such a step (no chunk) takes ``decode_alone(b)``
    when given (vLLM runs it as a CUDA graph padded to a capture size), else
    ``decode_seconds(b)``.

    With ``ranks`` attention data-parallel ranks each request is placed on one when sent
    (``place``, :data:`DP_PLACEMENT`; one rank: arrival order, no placement) and each rank
    schedules its own: its own waiting prompts, running requests and ``budget`` (TensorRT-
    LLM's ``max_num_tokens``, a vLLM DP engine's and an SGLang DP worker's budgets are per
    rank). The ranks step together, paced by the slowest: a step's decode is priced at
    ``ranks x`` its largest per-rank running batch (each rank at the slowest's,
    :func:`analysis.decode_step`'s per-rank ``ceil(batch / dp)``), its prompt part by
    ``rank_pass(c, k)``: one pass in which ``k`` ranks run prompt chunks, the largest of
    ``c`` tokens (None: ``prefill_seconds(c)``, one rank's prompt holding the instance). One
    rank is the single scheduler above, to the same arithmetic. ``peaks``: a list, filled with
    each rank's largest number of requests holding KV cache at once (decoding, or their
    prompt begun).

    Returns ``(start, first, end, steps)``: per request, seconds of send, first and last
    token; and the number of steps.

    >>> _run_steps([4], [3], 1, 8, lambda b: 1.0, 0.5)     # prefill 2 s, two decode steps
    ([0.0], [2.0], [4.0], 3)
    """
    chunk_cost = prefill_seconds if callable(prefill_seconds) else (
        lambda c: c * prefill_seconds)
    n = len(ins)
    if whole and not all(_admits_whole(budget, 0, x) for x in ins):
        raise SpecError(f"a prompt of {max(ins)} tokens never runs whole in a {budget}-token "
                        f"step")
    check_choice(place, "place", DP_PLACEMENT)
    start, first, end = [0.0] * n, [0.0] * n, [0.0] * n
    # per rank: [request, prompt tokens left] in its scheduler's order; a heap of (the step
    # count at which its last token comes, request) of its decoding requests (a request's
    # tokens left are that count less ``steps``: nothing walks every running request a step)
    waiting, decoding = [[] for _ in range(ranks)], [[] for _ in range(ranks)]
    rank_of, active, tokens, peak = [0] * n, [0] * ranks, [0] * ranks, [0] * ranks
    t, steps, done, sent, in_flight, turn = 0.0, 0, 0, 0, 0, 0
    while done < n:
        new = []
        while sent < n and in_flight < concurrency:
            start[sent] = t
            new.append(sent)
            sent += 1
            in_flight += 1
        if ranks == 1 or not new:
            pairs = [(i, 0) for i in new]
        else:
            pairs, turn = _place(place, new, ins, ranks, active, tokens,
                                 [len(w) for w in waiting], [len(d) for d in decoding], turn)
        for i, r in pairs:
            rank_of[i] = r
            active[r] += 1
            tokens[r] += ins[i]
            waiting[r].append([i, ins[i]])
        if any(waiting):
            bs, chunks, prefilled = [len(d) for d in decoding], [0] * ranks, []
            for r in range(ranks):
                left, chunk, fin = budget - bs[r], 0, []
                for entry in waiting[r]:
                    if left <= 0 or whole and not _admits_whole(budget, budget - left, entry[1]):
                        break
                    take = min(entry[1], left)
                    entry[1] -= take
                    left -= take
                    chunk += take
                    if entry[1] == 0:
                        fin.append(entry[0])
                del waiting[r][:len(fin)]        # only the first ones can have finished
                chunks[r] = chunk
                prefilled += fin
                # only the first waiting prompt can be part-way (they are taken in order)
                peak[r] = max(peak[r], bs[r] + len(fin) + (
                    1 if waiting[r] and waiting[r][0][1] < ins[waiting[r][0][0]] else 0))
            b, chunk = ranks * max(bs), max(chunks)
            k = 1
            alone = decode_seconds if chunk or decode_alone is None else decode_alone
            if chunk and rank_pass is not None:
                priced = rank_pass(chunk, sum(1 for c in chunks if c))
            else:
                priced = chunk_cost(chunk) if chunk else 0.0
            dt = (alone(b) if b else 0.0) + priced
            if b and chunk and shared is not None:      # (the ranks' pass: its ranks too)
                dt -= (shared(b, chunk) if rank_pass is None
                       else shared(b, chunk, sum(1 for c in chunks if c)))
        else:
            k = min(d[0][0] for d in decoding if d) - steps
            b = ranks * max(len(d) for d in decoding)
            prefilled = []
            dt = k * (decode_seconds if decode_alone is None else decode_alone)(b)
        t += dt
        steps += k
        for d in decoding:
            while d and d[0][0] == steps:
                i = heapq.heappop(d)[1]
                end[i] = t
                done += 1
                in_flight -= 1
                active[rank_of[i]] -= 1
                tokens[rank_of[i]] -= ins[i]
        for i in prefilled:
            first[i] = t
            if outs[i] > 1:
                heapq.heappush(decoding[rank_of[i]], (steps + outs[i] - 1, i))
            else:
                end[i] = t
                done += 1
                in_flight -= 1
                active[rank_of[i]] -= 1
                tokens[rank_of[i]] -= ins[i]
    if peaks is not None:
        peaks[:] = peak
    return start, first, end, steps


def closed_loop_run(model, fabric, *, input_lens, output_lens, concurrency, layout=None,
                    max_batched_tokens=VLLM_MAX_BATCHED_TOKENS.value,
                    definition="total-per-gpu", prefill_efficiency=None,
                    usable_hbm=USABLE_HBM_FRACTION.value, **decode_kwargs):
    """A benchmark client's run against one instance, step by step, measured as the client
    measures it (vLLM's ``benchmark_serving.py``, which InferenceX runs).

    The client sends ``len(input_lens)`` requests with at most ``concurrency`` in flight (a
    semaphore: request ``i + concurrency`` is sent when one of the first finishes), every
    output run to its length (``--ignore-eos``); trtllm-bench's throughput client issues
    them the same way, each latency timed from its send (docs/sources.md s.8, session 37). The engine (continuous batching, vLLM V1)
    runs steps of one decode token per running request plus prompt chunks in the rest of
    ``max_batched_tokens`` (:data:`VLLM_MAX_BATCHED_TOKENS`); an engine that runs a prompt
    only whole (:data:`CHUNKED_PREFILL`: TensorRT-LLM) takes waiting prompts whole while they
    fit and stops at the first that does not (:func:`_admits_whole`, the rule of
    :attr:`ServingPoint.admission_cap`), so requests beyond its cap wait. So the run starts
    with every slot's prompt at once and ends with a drain, fewer requests in flight for
    the last ones: what the steady state (:func:`serving_point`) leaves out. With attention
    data parallelism (``dp > 1``) each rank schedules its own requests in its own
    ``max_batched_tokens`` (TensorRT-LLM's ``max_num_tokens``, a vLLM DP engine's and an
    SGLang DP worker's budgets are per rank, as in the steady state), a request placed on a
    rank when sent by its engine's rule (:data:`DP_PLACEMENT`), and every step is paced by
    the slowest rank (:func:`_run_steps`).

    Metrics as ``benchmark_serving.py`` computes them: ``duration`` from the first send to the
    last completion; per request ``TPOT = (latency - TTFT) / (out - 1)`` and its mean over
    requests; (prompt + output) tokens over ``duration``; per GPU over the instance's chips.

    Pieces, from the layer below: a decode step at ``b`` running requests is
    :func:`analysis.decode_step` at batch ``b`` and the run's mean decode context
    (``mean input + mean output / 2``); a step's prompt tokens (pieces of one prompt or of
    several) cost one pass at its own roofline, :meth:`PrefillTime.chunk_seconds` of the
    mean prompt's :func:`prefill_time` (compute linear in tokens, one weight read), and a
    step that runs both, with an engine that mixes them in one forward pass
    (:data:`MIXED_STEP_BUDGET`: vLLM V1, TensorRT-LLM), is their sum less the weight read
    they share (:func:`shared_weight_read`). Means stand for the lengths' spread inside a
    step (attention is not linear in context). With ``engine="vllm"`` (and CUDA graphs) a step
    with no prompt chunk runs the graph of the next capture size up (:func:`vllm_graph_batch`,
    ``max_num_seqs = concurrency``): ``decode_step(graph_batch=...)``, its padded rows' GEMMs,
    routing and collectives paid, their KV reads not; above the largest capture size it runs
    without a graph (host launches, no PDL), as vLLM does.

    Parameters
    ----------
    model : str or MoEModel
    fabric : fabric.Fabric
    input_lens, output_lens : sequence of int
        Each request's prompt and output tokens, in the order the client sends them.
    concurrency : int
        Requests in flight at most (``--max-concurrency``).
    layout : str, optional
    max_batched_tokens : int
        The engine's tokens per step, per attention-DP rank (>= ``concurrency``, as vLLM
        requires of ``max_num_seqs``; an engine that runs a prompt only whole needs only the
        longest prompt: it runs at most its admission cap and the others wait).
    definition : str
        ``"total-per-gpu"`` (InferenceX), ``"output-per-gpu"`` or ``"output-per-decode-gpu"``
        (the same here: every GPU of the instance decodes).
    prefill_efficiency, usable_hbm, **decode_kwargs
        As :func:`serving_point`. The KV cache of ``concurrency`` requests at the longest
        request's full context must fit.

    Returns
    -------
    ClosedLoopRun

    Examples
    --------
    >>> import topologies
    >>> f = topologies.build("switch:8,planes=2,links=9,tech=nvlink5,chip=b200")
    >>> run = closed_loop_run("kimi-k2", f, input_lens=[1000] * 8, output_lens=[200] * 8,
    ...                       concurrency=4, layout="tp=8")
    >>> run.requests, run.tokens_per_s_user > run.steady.tokens_per_s_user
    (8, True)
    """
    m = model_config(model)
    ins, outs = _lengths("input_lens", input_lens), _lengths("output_lens", output_lens)
    if len(ins) != len(outs):
        raise SpecError(f"input_lens and output_lens must have one entry per request, got "
                        f"{len(ins)} and {len(outs)}")
    concurrency, budget = (check_count(v, name, 1) for name, v in (
        ("concurrency", concurrency), ("max_batched_tokens", max_batched_tokens)))
    if max(outs) < 2:
        raise SpecError("no request has a second output token: TPOT (latency - TTFT) / "
                        "(out - 1) is undefined")
    for bad in ("micro_batches", "mode", "context", "adp_balance", "draft_length",
                "acceptance", "draft_cost", "graph_batch"):
        if bad in decode_kwargs:
            raise SpecError(f"{bad} is not a condition of a closed-loop run (one aggregated "
                            f"instance, one micro-batch, plain decoding, the run's own "
                            f"contexts)")
    n = len(ins)
    mean_in, mean_out = sum(ins) / n, sum(outs) / n
    isl, osl = max(1, round(mean_in)), max(1, round(mean_out))
    context = round(mean_in + mean_out / 2)
    mixing = step_budget(decode_kwargs.get("engine")) is not None
    sweep = _Sweep(m, fabric, isl=max(ins), osl=max(outs), mode="aggregated",
                   definition=definition, prefill_efficiency=prefill_efficiency,
                   usable_hbm=usable_hbm, decode_kwargs=decode_kwargs, context=context,
                   max_batched_tokens=budget if mixing else None)
    if budget < concurrency and not sweep.whole_prompts:
        raise SpecError(f"max_batched_tokens={budget} is below concurrency={concurrency}: a "
                        f"step could not hold one token of every running request (vLLM "
                        f"refuses max_num_batched_tokens < max_num_seqs)")
    lay = str(parse_layout(layout, fabric.n_endpoints))
    info = sweep.layout_info(lay)
    if info["reason"]:
        raise SpecError(info["reason"])
    sweep.check_runs()
    dp = info["layout"].dp
    # an engine that runs prompts only whole holds at most the cap of the shortest prompt
    # (the others wait with no KV cache: their prompt has not run); with attention DP each
    # rank holds its own, checked against a rank's share after the run (below)
    held = min(concurrency, _admission_cap(budget, min(ins))) if sweep.whole_prompts \
        else concurrency
    if dp == 1 and held > info["b_max"]:
        who = (f"concurrency {concurrency}" if held == concurrency else
               f"the {held} requests of concurrency {concurrency} the engine runs at once")
        raise SpecError(f"{m.name} with layout {lay}: {who} exceeds the "
                        f"largest batch whose KV cache fits, {info['b_max']} (at the longest "
                        f"request's context {sweep.full})")
    pre = sweep.prefill(info["layout"], isl, info["instance"])
    rank_pass = None
    if dp > 1:
        # a step whose k ranks run prompt chunks at once: between one rank's prompt holding
        # the instance (pre) and every rank's in one pass (prefill_time's dp prompts at once,
        # ``dp x`` its per-prompt time), linearly in k. An ASSUMPTION (no source times such a
        # pass): the pass's compute (each rank's own attention and dense layers, the experts'
        # work of every rank's tokens over all chips) and its collectives grow linearly with
        # k; where the weight read binds the line is an upper bound
        every = sweep.prefill(info["layout"], isl, info["instance"], one_at_a_time=False)

        def rank_pass(c, k):
            one = chunk(c)
            if (c, k) not in passes:
                passes[c, k] = one + (k - 1) / (dp - 1) * (dp * every.chunk_seconds(c) - one)
            return passes[c, k]
    # each distinct step size priced once (a run repeats a handful of them thousands of times)
    step, chunks, passes, saved = {}, {}, {}, {}

    def chunk(c):
        if c not in chunks:
            chunks[c] = pre.chunk_seconds(c)
        return chunks[c]

    def decode(b):
        if b not in step:
            step[b] = _steps(m, fabric, lay, b, context, [0], 1, sweep.kw)[0]
        return step[b]

    # TensorRT-LLM runs a mixed step's tokens through one MoE module: where the decode step
    # and the prompt pass each take its measured time, its fixed part is paid once
    one_module = sweep.one_module()

    def shared(b, c, k=1):
        if (b, c, k) not in saved:
            parts = decode(b)[1]
            saved[b, c, k] = shared_weight_read(pre, parts["weights"], parts["compute"], c,
                                                parts["launch"]) + (
                module_overlap(m, sweep.chip, info["layout"], b, k * c) if one_module else 0.0)
        return saved[b, c, k]

    mixes = sweep.budget is not None
    # vLLM replays a decode-only step as the CUDA graph of the next capture size up, its
    # padded rows computed (and routed) with the real ones (vllm_graph_batch); a step with a
    # prompt chunk holds more tokens than the largest graph and runs without one
    graphs = decode_kwargs.get("engine") == "vllm" and decode_kwargs.get("cuda_graphs", True)
    padded = {}

    def alone(b):       # b = dp x the largest rank's batch: each rank pads to that one's graph
        g = vllm_graph_batch(b // dp, max_num_seqs=concurrency, max_batched_tokens=budget)
        g = None if g is None else g * dp
        if g == b:
            return decode(b)[0]
        if b not in padded:     # padded to a captured graph, or above them all: eager
            padded[b] = _steps(m, fabric, lay, b, context, [0], 1,
                               {**sweep.kw, **({"graph_batch": g} if g is not None
                                               else _VLLM_EAGER)})[0][0]
        return padded[b]

    peaks = []
    start, first, end, steps = _run_steps(ins, outs, concurrency, budget,
                                          lambda b: decode(b)[0], chunk,
                                          shared if mixes else None,
                                          alone if graphs else None, sweep.whole_prompts,
                                          ranks=dp, place=decode_kwargs.get("engine")
                                          or _default_engine(), peaks=peaks,
                                          rank_pass=rank_pass)
    if dp > 1 and max(peaks) > info["b_max"] // dp:
        raise SpecError(f"{m.name} with layout {lay}: a rank holds {max(peaks)} requests at "
                        f"once (concurrency {concurrency} placed over {dp} attention groups) "
                        f"but a rank's KV cache fits {info['b_max'] // dp} (at the longest "
                        f"request's context {sweep.full})")
    tpots = tuple((e - f) / (o - 1) if o > 1 else None for e, f, o in zip(end, first, outs))
    ttfts = tuple(f - s for f, s in zip(first, start))
    timed = [x for x in tpots if x is not None]
    tpot = sum(timed) / len(timed)
    duration = max(end)
    chips = info["layout"].chips
    total = (sum(ins) + sum(outs)) / duration / chips
    output = sum(outs) / duration / chips
    steady = serving_point(m, fabric, isl=isl, osl=osl, batch=concurrency, layout=lay,
                           definition=definition, prefill_efficiency=prefill_efficiency,
                           usable_hbm=usable_hbm, max_batched_tokens=budget if mixes else None,
                           **decode_kwargs)
    return ClosedLoopRun(system=fabric.name, model=m.name, definition=definition,
                         layout=_layout_label(info["layout"]), chips=chips,
                         concurrency=concurrency, requests=n, steps=steps, duration=duration,
                         tpot=tpot, ttft=sum(ttfts) / n, tokens_per_s_user=1.0 / tpot,
                         tokens_per_s_gpu=total if definition == "total-per-gpu" else output,
                         total_tokens_per_s_gpu=total, output_tokens_per_s_gpu=output,
                         tpots=tpots, ttfts=ttfts, steady=steady,
                         request_tokens_per_s_user=sum(
                             o / (e - s_) for o, e, s_ in zip(outs, end, start)) / n)


@dataclass(frozen=True)
class _Free:
    time: float = 0.0


def _no_collective(fabric, op, nbytes, **kwargs):
    """A collective cost function that costs nothing (for memory-only decode steps)."""
    return _Free()


def _step_weight_bytes(step, m, tokens):
    """Bytes of weights on the fullest chip of a decode ``step`` of one sequence of ``tokens``
    cached tokens: its ``hbm_per_chip`` less that sequence's KV cache."""
    return step.hbm_per_chip - m.kv_bytes_per_chip(tokens, step.layout.tp)


def _chip_weight_bytes(m, fabric, layout, chip):
    """Bytes of weights on the fullest chip of ``layout``, by decode's memory count (a
    memory-only decode step of one sequence, one token cached)."""
    step = decode_step(m, fabric, batch=1, context=0, layout=layout, chip=chip,
                       collective=_no_collective, parameters=False)
    return _step_weight_bytes(step, m, 1)


class _Sweep:
    """Shared state of one frontier computation (model, fabric, conditions)."""

    def __init__(self, m, fabric, *, isl, osl, mode, definition, prefill_efficiency,
                 usable_hbm, decode_kwargs, context=None, micro_batches=1, adp_balance=False,
                 max_batched_tokens=None, kv_inflow=False):
        isl, osl = (check_count(v, name, 1) for name, v in (("isl", isl), ("osl", osl)))
        check_choice(mode, "mode", MODES)
        check_choice(definition, "definition", DEFINITIONS)
        usable_hbm = check_fraction("usable_hbm", usable_hbm, 0, 1, lo_open=True)
        bad = {"batch", "context", "layout", "tokens_per_sequence", "graph_batch",
               "parameters"} & set(decode_kwargs)
        if bad:
            raise SpecError(f"{', '.join(sorted(bad))} are set by the serving sweep, not "
                            "passed to decode_step")
        self.m, self.fabric, self.isl, self.osl = m, fabric, isl, osl
        self.mode, self.definition = mode, definition
        self.usable = usable_hbm
        if prefill_efficiency is not None:
            prefill_efficiency = check_fraction(
                "prefill_efficiency", prefill_efficiency, 0, 1, lo_open=True,
                tail=" or None (each GEMM at its published efficiency)")
        # one GEMM efficiency for prefill and decode: a compute_efficiency given for the
        # decode steps prices the prompts' GEMMs too, unless prefill_efficiency says otherwise
        self.eff = (decode_kwargs.get("compute_efficiency") if prefill_efficiency is None
                    else prefill_efficiency)
        self.kw = decode_kwargs
        self.chip = fabric_chip(fabric, decode_kwargs.get("chip"))
        micro_batches = check_count(micro_batches, "micro_batches", 1)
        if decode_kwargs.get("overlap") == TWO_BATCH and micro_batches != 2:
            raise SpecError(f"overlap={TWO_BATCH!r} is the schedule of two micro-batches; "
                            f"pass micro_batches=2 (cofabric serve --micro-batches 2), "
                            f"got {micro_batches!r}")
        self.micro = micro_batches
        adp_balance = flag_of(adp_balance, "adp_balance")
        self.adp_balance = adp_balance
        kv_inflow = flag_of(kv_inflow, "kv_inflow")
        if kv_inflow and mode != "disaggregated":
            raise SpecError("kv_inflow is the prompts' KV cache arriving from prefill GPUs: "
                            "a condition of mode='disaggregated'")
        if kv_inflow and "nic_background" in decode_kwargs:
            raise SpecError("kv_inflow sets decode_step's nic_background; pass one or the other")
        self.kv_inflow = kv_inflow
        if max_batched_tokens is None:
            self.budget = step_budget(decode_kwargs.get("engine"))
        else:
            self.budget = check_count(max_batched_tokens, "max_batched_tokens", 1,
                                      "an integer >= 1 or None (the engine's default)")
            if step_budget(decode_kwargs.get("engine")) is None:
                raise SpecError(f"max_batched_tokens is a budget of an engine that runs decodes "
                                f"and prompt chunks in one step ({', '.join(MIXED_STEP_BUDGET)}); "
                                f"engine {decode_kwargs.get('engine')!r} runs prompts on their "
                                f"own")
        engine = decode_kwargs.get("engine") or _default_engine()
        # an engine that runs prompts only whole, beside decodes, on these GPUs
        self.whole_prompts = (mode == "aggregated" and self.budget is not None
                              and not CHUNKED_PREFILL.get(engine, True))
        self.context = isl + osl // 2 if context is None else check_count(context, "context", 0)
        self.full = max(isl + osl, self.context)
        # the prefill's collectives are costed as the decode steps' are (one helper, and
        # decode's rule for the engine's default collective)
        self.cost_kw = {k: decode_kwargs[k]
                        for k in ("algorithm", "transport", "runtime")
                        if decode_kwargs.get(k) is not None}
        self.cost_kw["collective"] = engine_collective(
            engine, self.chip,
            collective=decode_kwargs.get("collective"), runtime=decode_kwargs.get("runtime"),
            algorithm=decode_kwargs.get("algorithm", "auto"), fabric=fabric)

    def check_runs(self):
        """Raise when no request can run: an engine that runs a prompt only whole with a
        prompt longer than its step budget (checked after the layouts' own reasons)."""
        if self.whole_prompts and not _admits_whole(self.budget, 0, self.isl):
            raise SpecError(f"{self.m.name} on {self.fabric.name}: no request can run: "
                            f"TensorRT-LLM runs a prompt only whole "
                            f"(chunked prefill off, its default: its MicroBatchScheduler "
                            f"schedules a context request only when all its tokens fit) and "
                            f"isl={self.isl} exceeds max_num_tokens={self.budget}; use "
                            f"max_batched_tokens >= {self.isl} or engine='vllm' (which chunks "
                            f"prompts)")

    def cap(self, k):
        """Requests a rank runs at most with ``k`` drafts (:func:`_admission_cap`) when the
        engine runs a prompt only whole beside decodes on these GPUs, else None."""
        return _admission_cap(self.budget, self.isl, k) if self.whole_prompts else None

    def running(self, batch, dp, k):
        """Requests of ``batch`` (over ``dp`` attention groups) in the engine's steps with
        ``k`` drafts: all of them, or ``cap(k)`` a rank when fewer."""
        cap = self.cap(k)
        return batch if cap is None else min(batch, cap * dp)

    def layout_info(self, layout):
        """Weights per chip, KV per sequence per chip, largest batch, prefill: or None."""
        m = self.m
        # Only the memory figures of this step are used: skip costing its collectives.
        kw = {**self.kw, "collective": _no_collective}
        try:
            one = decode_step(m, self.fabric, batch=1, context=self.full, layout=layout,
                              parameters=False, **kw)
        except RoutingError:        # its chips do not all reach each other pairwise
            return {"reason": self.unreached(layout)}
        except SpecError as e:
            return {"reason": str(e)}
        lay = one.layout
        kv_seq = m.kv_bytes_per_chip(self.full + 1, lay.tp)
        weights = _step_weight_bytes(one, m, self.full + 1)
        capacity = self.chip.hbm_bytes * self.usable
        b_dp = math.floor((capacity - weights) / kv_seq) if capacity > weights else 0
        if b_dp < 1:
            return {"reason": f"{m.name} with layout {lay}: weights {weights / 1e9:.1f} GB and "
                              f"one sequence's KV cache at context {self.full} "
                              f"({kv_seq / 1e9:.2f} GB) exceed the usable "
                              f"{capacity / 1e9:.1f} GB of a chip"}
        try:
            pre = self.prefill(lay, self.isl, one.instance)
        except RoutingError:        # the instance needs a chip cut off from the others
            return {"reason": self.unreached(layout, one.instance)}
        return {"reason": None, "layout": lay, "weights": weights, "kv_seq": kv_seq,
                "capacity": capacity,
                "b_max": b_dp * lay.dp, "prefill": pre, "idle": one.idle_chips,
                "instance": one.instance}

    def one_module(self):
        """Whether a mixed step's decode step and prompt pass both price the routed experts
        at TensorRT-LLM's measured module (``engine="trtllm"``, the decode in a CUDA graph, no
        user efficiency), so that :func:`module_overlap` applies."""
        return ((self.kw.get("engine") or _default_engine()) == "trtllm"
                and self.kw.get("cuda_graphs", True) and self.eff is None
                and self.kw.get("compute_efficiency") is None)

    def prefill(self, lay, isl, instance, one_at_a_time=None):
        """:func:`prefill_time` of one ``isl``-token prompt on ``lay``'s ``instance``, under
        this sweep's conditions (its collectives costed as the decode steps' are);
        ``one_at_a_time`` None: this sweep's (aggregated without ADP balance: True)."""
        if one_at_a_time is None:
            one_at_a_time = self.mode == "aggregated" and not self.adp_balance
        return prefill_time(self.m, self.fabric, isl=isl, layout=lay, chip=self.chip,
                            efficiency=self.eff,
                            hbm_efficiency=self.kw.get("hbm_efficiency"),
                            dispatch_bytes=self.kw.get("dispatch_bytes"),
                            launch_overhead=self.kw.get("launch_overhead",
                                                        LAUNCH_OVERHEAD.value),
                            graph_kernel_overhead=self.kw.get("graph_kernel_overhead",
                                                              GRAPH_KERNEL_OVERHEAD.value),
                            one_at_a_time=one_at_a_time, instance=instance,
                            engine=self.kw.get("engine") or _default_engine(),
                            ep_kernel=self.kw.get("ep_kernel"),
                            trtllm_release=self.kw.get("trtllm_release"), **self.cost_kw)

    def unreached(self, layout, instance=None):
        """Why ``layout`` cannot run here when the fabric's routing does not join two chips
        of its instance (what a ``RoutingError`` from pricing it means): the pair and what
        failed, from the fabric's structured failures (:func:`_unreached_reason`), not from
        the error's words. ``instance``: its chips' names, default the instance
        :func:`decode_step` places (:func:`instance_chips` under decode's rule: the same
        chips in every domain when an expert-exchange kernel runs ``ep > 1`` whole experts).
        A routing error with no such pair is not a reason to skip: it is raised."""
        f = self.fabric
        if instance is None:
            lay = parse_layout(layout, f.n_endpoints)
            equal = self.kw.get("ep_kernel") is not None and lay.exchanges
            pos = instance_chips(f, lay.chips, equal_domains=equal, tp=lay.tp)
        else:
            pos = [f.endpoints.index(c) for c in instance]
        why = _unreached_reason(f, pos)
        if why is None:
            raise RoutingError(f"{f.name}: pricing layout {layout} found no route, but every "
                               f"pair of its instance's chips has one (an internal "
                               f"inconsistency)")
        return why

    def _with_kv_inflow(self, lay, batch, k, a, draft):
        """The verification step of ``k`` drafts (``(seconds, parts)``) while the prompts' KV
        caches arrive at the decode ranks' NICs (disaggregated serving: the prefill GPUs write
        each new request's cache into its decode rank): a rank takes ``ceil(batch / dp) x e /
        osl`` new requests per cycle (``e`` tokens per cycle), each ``isl`` tokens of KV cache
        (``MoEModel.kv_bytes_per_chip``), spread over the cycle: ``decode_step(nic_background=
        r)`` (:func:`analysis.moe_exchange`'s network stage shares the port), with ``r`` and
        the cycle consistent (:func:`_self_consistent_step`). A rate the NIC cannot carry at
        a cycle length means a longer cycle."""
        e = self.osl / expected_cycles(self.osl, k, a)
        per_cycle = math.ceil(batch / lay.dp) * e / self.osl * self.m.kv_bytes_per_chip(
            self.isl, lay.tp)
        cache = {}

        def verify(r):
            if r not in cache:
                cache[r] = _steps(self.m, self.fabric, str(lay), batch, self.context, [k],
                                  self.micro, {**self.kw, "nic_background": r},
                                  vllm_graphs=True, budget=self.budget)[k]
            return cache[r]

        def cycle_at(r):
            if r == 0.0:
                return draft + verify(r)[0]
            try:
                return draft + verify(r)[0]
            except SpecError:           # more than the NIC carries: the cycle is longer
                return math.inf

        def rate_at(t):
            return per_cycle / t

        try:                            # a step that takes no background at all is named
            verify(1.0)
        except SpecError as e:
            raise SpecError(f"kv_inflow: {e}") from None
        t = _self_consistent_step(cycle_at, rate_at)
        return verify(rate_at(t))

    def point(self, layout, info, batch, spec, draft_cost):
        """The points of one (layout, batch) for every speculative setting in ``spec``, in
        its order: each priced at the requests its engine runs (:meth:`running`), the
        others waiting."""
        groups = {}
        for k, a in spec:
            groups.setdefault(self.running(batch, info["layout"].dp, k), []).append((k, a))
        got = {}
        for run, these in groups.items():
            for s, p in zip(these, self._points(info, run, batch, these, draft_cost)):
                got[s] = p
        return [got[s] for s in spec]

    def _points(self, info, batch, users, spec, draft_cost):
        """:meth:`point` for the settings in ``spec`` that run ``batch`` of the ``users``."""
        m = self.m
        lay = info["layout"]
        ks = [k for k, _ in spec]
        steps = _steps(m, self.fabric, str(lay), batch, self.context, ks, self.micro,
                       self.kw, vllm_graphs=True, budget=self.budget)
        if draft_cost is not None:
            c = draft_cost
        elif any(k for k in ks):
            c = _draft_time(m, self.fabric, str(lay), batch, self.context, self.micro,
                            self.kw) / steps[0][0]
        else:
            c = 0.0
        hbm = info["weights"] + math.ceil(batch / lay.dp) * info["kv_seq"]
        out = []
        for k, a in spec:
            verify = self._with_kv_inflow(lay, batch, k, a, c * k * steps[0][0]) \
                if self.kv_inflow else steps[k]
            out.append(_compose(verify, steps[0][0], k=k, a=a, draft_cost=c,
                                prefill=info["prefill"], batch=batch, isl=self.isl,
                                osl=self.osl, n=lay.chips, mode=self.mode,
                                definition=self.definition, system=self.fabric.name,
                                model=m.name, layout=_layout_label(lay),
                                context=self.context, hbm=hbm, capacity=info["capacity"],
                                idle=info["idle"], budget=self.budget,
                                micro_batches=self.micro, dp=lay.dp, users=users,
                                cap=self.cap(k),
                                overlap=(functools.partial(module_overlap, m, self.chip, lay,
                                                           batch)
                                         if self.one_module() else None)))
        return out


def _unreached_pair(fabric, positions):
    """Two chips among ``positions`` (indices into ``fabric.endpoints``) that ``fabric``'s
    routing does not join both ways, as ``(name, name)``, or None when every pair is joined:
    decode's rule (:func:`~analysis._decode.unreached_pair`, so non-transitive reachability
    is seen too: a switch of two planes whose chip2 lost plane 0 and chip6 plane 1), except
    that a chip cut off from every other, when the instance has one, is named first (the
    most telling pair).

    >>> import topologies
    >>> f = topologies.build("switch:4,planes=2")
    >>> _unreached_pair(f, [0, 1, 2, 3]) is None
    True
    >>> g = f.without(links=[("chip1", "sw0"), ("chip2", "sw1")])
    >>> _unreached_pair(g, [0, 1, 3]) is None, _unreached_pair(g, [0, 1, 2, 3])
    (True, ('chip1', 'chip2'))
    """
    if not fabric.failures.degraded:
        return None
    names = [fabric.endpoints[int(p)] for p in positions]
    alone = [c for c in names if c in fabric.failures.cut_off]
    if alone and len(names) > 1:
        return alone[0], next(c for c in names if c != alone[0])
    return unreached_pair(fabric, positions)


def _unreached_reason(fabric, positions):
    """A skipped layout's reason when two chips of its instance (``positions``) have no route
    between them (:func:`_unreached_pair`): the pair and what failed, in the fabric's own
    words (:meth:`fabric.Failures.explain`: the chip a failure cut off from every other chip,
    or the failures that leave the two without a path); None when every pair has a route."""
    pair = _unreached_pair(fabric, positions)
    if pair is None:
        return None
    a, b = pair
    why = fabric.failures.explain(a, b).removeprefix("; ")
    if any(c in fabric.failures.cut_off for c in pair):
        return f"its instance needs a chip that cannot reach the others: {why}"
    return (f"its instance needs chips that cannot reach each other: "
            f"{why.replace('between them', f'between {a} and {b}')}")


def _layout_label(lay):
    """A point's layout as :func:`candidate_layouts` spells it: ``tp=..,dp=..``, plus
    ``,etp=..`` when every expert is split (else an expert-split layout and the expert-
    parallel one of the same tp and dp would print alike).

    >>> from analysis._decode import Layout
    >>> _layout_label(Layout(8, 1, 8)), _layout_label(Layout(8, 1, 1, etp=8))
    ('tp=8,dp=1', 'tp=8,dp=1,etp=8')
    """
    base = f"tp={lay.tp},dp={lay.dp}"
    return base if lay.etp == 1 else f"{base},etp={lay.etp}"


# -- the frontier -----------------------------------------------------------------------

def pareto_front(points, x="tokens_per_s_user", y="tokens_per_s_gpu"):
    """The points no other point beats in both ``x`` and ``y`` (higher is better).

    Sorted by ``x`` descending (so ``y`` ascends along the result); of equal points the
    first is kept. Points are objects with those attributes, or mappings.

    Parameters
    ----------
    points : sequence
        Objects with attributes ``x`` and ``y``, or mappings with those keys (a set or
        one point is refused: TypeError).
    x, y : str
        The two figures to maximise (default: tokens/s per user and per GPU).

    Returns
    -------
    list
        The frontier's points, as given.

    Examples
    --------
    >>> pts = [{"x": 1, "y": 5}, {"x": 2, "y": 4}, {"x": 2, "y": 3}, {"x": 0, "y": 5}]
    >>> pareto_front(pts, "x", "y")
    [{'x': 2, 'y': 4}, {'x': 1, 'y': 5}]
    """
    def get(p, key):
        try:
            return p[key] if isinstance(p, dict) else getattr(p, key)
        except (KeyError, AttributeError, TypeError):
            raise SpecError(f"pareto_front: every point must have {show_value(key)} (x and y "
                            f"name a number of each point), got {show_value(p)}") from None

    # names (x=5 was 'no attribute 5'; a 5,000-character name was quoted whole)
    x, y = text_of(x, "x"), text_of(y, "y")

    points = sequence_of(points, "points", "serving points (or mappings)")
    for p in points:
        for key in (x, y):
            v = get(p, key)
            if not is_real(v) or math.isnan(v):
                raise error_for(v, f"pareto_front: every point's {key} must be a number (not "
                                   f"nan), got {show_value(v)}")
    order = sorted(range(len(points)), key=lambda i: (-get(points[i], x), -get(points[i], y),
                                                       i))
    front, best_y = [], -math.inf
    for i in order:
        if get(points[i], y) > best_y:
            front.append(points[i])
            best_y = get(points[i], y)
    return front


@dataclass(frozen=True)
class ServingFrontier:
    """Result of :func:`serving_frontier`.

    Attributes
    ----------
    model, system, mode, definition : str
    definition_text : str
        What ``tokens_per_s_gpu`` counts, in words.
    isl, osl : int
    points : tuple of ServingPoint
        The Pareto frontier, fastest per user first.
    evaluated : int
        Points computed (every layout x batch x speculative setting that fits).
    layouts : tuple of str
        Layouts searched.
    skipped : tuple of str
        Layouts that do not fit (or need a chip cut off from the others), speculative
        settings not priced, and batches asked for that a layout cannot hold, with why.
    parameters : tuple of Parameter
    """

    model: str
    system: str
    mode: str
    definition: str
    definition_text: str
    isl: int
    osl: int
    points: tuple
    evaluated: int
    layouts: tuple
    skipped: tuple
    parameters: tuple
    all_points: tuple = ()

    def at_interactivity(self, tokens_per_s_user):
        """The frontier's best tokens/s per GPU among points at least this fast per user,
        or None if none is."""
        # nan compares false with every point (None, silently); a bool is not a speed
        tokens_per_s_user = check_number("tokens_per_s_user", tokens_per_s_user)
        ok = [p for p in self.points if p.tokens_per_s_user >= tokens_per_s_user]
        return max(ok, key=lambda p: p.tokens_per_s_gpu) if ok else None


DEFAULT_SPECULATIVE = ((0, 0.0), (1, MTP_ACCEPTANCE.value), (3, MTP_ACCEPTANCE.value))


def serving_frontier(model, fabric, *, isl, osl, batches=None, n_batches=10, layouts=None,
                     speculative=DEFAULT_SPECULATIVE, draft_cost=None, mode="aggregated",
                     definition="total-per-gpu", prefill_efficiency=None,
                     usable_hbm=USABLE_HBM_FRACTION.value, context=None, micro_batches=1,
                     keep_all=False, adp_balance=False, max_batched_tokens=None,
                     kv_inflow=False, **decode_kwargs):
    """The Pareto frontier of tokens/s per GPU against tokens/s per user.

    Parameters
    ----------
    model : str or MoEModel
    fabric : fabric.Fabric
    isl, osl : int
        Input and output tokens per request.
    batches : sequence of int, optional
        Users per instance to try; default per layout: powers of two up to the
        largest batch whose KV cache fits, and that largest batch, thinned to
        ``n_batches`` values.
    n_batches : int
        Batches per layout in the default grid, >= 2.
    layouts : sequence, optional
        Layouts to try; default :func:`candidate_layouts` (the search space).
    speculative : sequence of (draft_length, acceptance)
        Default: none, and 1 and 3 drafted tokens at :data:`MTP_ACCEPTANCE`.
    draft_cost : float, optional
        Draft time per token as a fraction of a plain step; default: priced at each point
        by ``analysis.decode_step(draft=True)`` (one MoE block, the MTP projection and the
        head, :data:`DRAFT_SOURCE`). A model without an MTP module (``mtp_modules=0``, e.g.
        Kimi K2) has no draft to price: its drafted settings are skipped (and named in
        ``skipped``) unless ``draft_cost`` is given.
    mode : ``"aggregated"`` or ``"disaggregated"``
    definition : str
        What the frontier's y counts: a key of :data:`DEFINITIONS`.
    prefill_efficiency : float in (0, 1], optional
        One compute efficiency for every prefill GEMM. Default None: decode's
        ``compute_efficiency`` when given, else each GEMM at its published efficiency
        (:func:`prefill_gemm_efficiency`, the rule the decode steps follow; 1 where none is
        published).
    usable_hbm : float
        :data:`USABLE_HBM_FRACTION`.
    context : int, optional
        Decode context (cached tokens) of the steps; default the mean over a
        request's output, ``isl + osl // 2``. For measurements that state the KV
        length instead.
    micro_batches : int
        Decode steps split into this many micro-batches run one after the other
        (2: two-batch overlap; see ``_steps``). Default 1. At most the batch: the default
        batches start there, and a batch below it is refused.
    adp_balance : bool, default False
        Aggregated serving under attention data parallelism (``dp > 1``): False, a prompt's
        prefill holds the whole instance (:func:`prefill_time` ``one_at_a_time``: the
        in-flight batching baseline of TensorRT-LLM tech blog 10, contexts on one rank per
        iteration while the others wait); True, a scheduler that aligns every rank's
        contexts in one iteration (that blog's ADP Balance), ``dp`` prompts at once.
    max_batched_tokens : int, optional
        Tokens per engine step of an engine that runs decodes and prompt chunks in one
        forward pass (:data:`MIXED_STEP_BUDGET`; default that engine's own budget), per
        attention-DP rank: a prompt rides on ``ceil(isl / (max_batched_tokens - (batch /
        dp - 1)))`` decode steps and shares their weight read (:func:`shared_weight_read`).
        Refused for an engine that does not mix. Given, a batch of more than
        ``max_batched_tokens`` sequences per rank is not searched (listed in ``skipped``):
        :func:`serving_point` refuses it, as vLLM refuses a budget below ``max_num_seqs``
        (not with an engine that runs a prompt only whole: it runs its admission cap, below
        the budget, and the others wait).
        An engine that runs a prompt only whole (:data:`CHUNKED_PREFILL`: TensorRT-LLM)
        admits one only when the rank's generating requests (``1 + k`` tokens each with
        ``k`` drafts) leave ``isl`` tokens: a rank runs at most
        ``(max_batched_tokens - isl) // (1 + k) + 1`` requests, and a point of more is
        priced at those with the others waiting (:attr:`ServingPoint.running`,
        ``queue_time``, ``admission_cap``); ``isl`` above the budget runs nothing (refused).
    kv_inflow : bool, default False
        Disaggregated serving only: the prefill GPUs write each new request's KV cache
        (``isl`` tokens) into its decode rank over that rank's NIC, beside the expert
        exchange: ``decode_step(nic_background=)`` at ``ceil(batch / dp) / osl`` requests per
        step per rank (``osl`` the requests' output length), self-consistent with the step
        time. Opt-in: where the prefill instances sit (another node's NIC, or the same scale-up
        domain) is a condition of the deployment, not of the fabric.
    keep_all : bool
        Also return every evaluated point (``all_points``).
    **decode_kwargs
        Passed to :func:`analysis.decode_step` (``runtime``, ``overlap``,
        ``hbm_efficiency``, ``dispatch_bytes`` ...).

    Returns
    -------
    ServingFrontier

    Raises
    ------
    fabric.SpecError
        Bad conditions, or no layout fits the model.
    TypeError
        An argument of the wrong kind: ``batches``, ``layouts`` or ``speculative`` that is no
        sequence (a string or a number), a batch that is no integer, a flag that is no bool.

    Examples
    --------
    >>> import topologies
    >>> fr = serving_frontier("deepseek-v3", topologies.build("hgx-h200"), isl=1024, osl=1024,
    ...                       batches=(1, 16), speculative=((0, 0.0),))
    >>> [(p.layout, p.batch) for p in fr.points]  # measured MoE module, MLA op, all-reduce
    [('tp=8,dp=1', 1), ('tp=8,dp=1', 16)]
    >>> one, many = fr.points     # tokens/s per user falls, tokens/s per GPU rises with batch
    >>> one.tokens_per_s_user > many.tokens_per_s_user, one.tokens_per_s_gpu < many.tokens_per_s_gpu
    (True, True)
    """
    m = model_config(model)
    sw = _Sweep(m, fabric, isl=isl, osl=osl, mode=mode, definition=definition,
                prefill_efficiency=prefill_efficiency, usable_hbm=usable_hbm,
                decode_kwargs=decode_kwargs, context=context, micro_batches=micro_batches,
                adp_balance=adp_balance, max_batched_tokens=max_batched_tokens,
                kv_inflow=kv_inflow)
    settings = sequence_of(speculative, "speculative",
                           "(draft_length, acceptance) settings, e.g. ((0, 0.0),)")
    spec = tuple(_speculative_setting(s) for s in settings)
    if not spec:
        raise SpecError("speculative must name at least one setting, e.g. ((0, 0.0),)")
    keep_all = flag_of(keep_all, "keep_all")
    n_batches = check_count(n_batches, "n_batches", 2, "an integer >= 2 (the thinned grid "
                            "keeps the smallest and the largest batch; pass batches= for one)")
    if layouts is not None:             # a string is one layout, not a sequence of them
        layouts = sequence_of(layouts, "layouts", "layouts (e.g. ['tp=8']) or None (search "
                              "them all)")
        if not layouts:
            raise SpecError("layouts must be a non-empty sequence of layouts (e.g. ['tp=8']) "
                            "or None (search them all), got []")
    if batches is not None:
        given = sequence_of(batches, "batches", "integers >= 1")
        if not given:
            raise SpecError("batches must be integers >= 1, got []")
        # a wrong kind a TypeError, named by its position; numpy integers as the ints they are
        batches = sorted({check_count(b, f"batches[{i}]", 1) for i, b in enumerate(given)})
        if batches[0] < sw.micro:
            raise SpecError(f"micro_batches={sw.micro} exceeds batch={batches[0]}: each "
                            f"micro-batch needs at least one sequence")
    draft_cost = _check_draft_cost(draft_cost)
    unpriced = []
    if draft_cost is None and not m.mtp_modules and any(k for k, _ in spec):
        # no MTP module to price a draft from: plain decoding only, and say so
        unpriced = [f"speculative settings {[k for k, _ in spec if k]}: {_no_mtp(m)}"]
        spec = tuple((k, a) for k, a in spec if not k)
        if not spec:
            raise SpecError(_no_mtp(m))
    cands = (candidate_layouts(m, fabric, chip=sw.chip, usable_hbm=usable_hbm)
             if layouts is None else [str(parse_layout(x, fabric.n_endpoints))
                                      for x in layouts])
    infos, skipped = {}, list(unpriced)
    for lay in cands:
        info = sw.layout_info(lay)
        if info["reason"]:
            skipped.append(f"{lay}: {info['reason']}")
        else:
            infos[lay] = info

    # a given max_batched_tokens holds at most that many sequences per attention-DP rank
    # (serving_point refuses more, as vLLM refuses max_num_batched_tokens < max_num_seqs;
    # an engine that runs prompts only whole runs its admission cap, the others waiting)
    cap = sw.budget if max_batched_tokens is not None and not sw.whole_prompts else None

    def limit(info):
        return info["b_max"] if cap is None else min(info["b_max"], cap * info["layout"].dp)

    def grid(info, count):        # a micro-batch holds one sequence at least
        return ([b for b in _batch_grid(limit(info), count) if b >= sw.micro]
                if batches is None else [b for b in batches if b <= limit(info)])

    if infos:       # a layout fits: then whether any request runs at all
        sw.check_runs()
    searched, points, dropped = [], [], []
    for lay, info in infos.items():
        over = [b for b in batches if b > limit(info)] if batches is not None else []
        if over:        # asked for, but the KV cache (or the step budget) does not hold them
            these = (f"batch {over[0]} exceeds" if len(over) == 1 else
                     f"batches {', '.join(map(str, over))} exceed")
            why = (f"the largest that fits, {info['b_max']} (KV cache at context {sw.full})"
                   if limit(info) == info["b_max"] else
                   f"the {limit(info)} that max_batched_tokens={cap} holds (at most {cap} "
                   f"per rank x dp={info['layout'].dp})")
            dropped.append(f"{lay}: {these} {why}")
        try:
            mine = []
            for b in grid(info, n_batches):
                mine += sw.point(lay, info, b, spec, draft_cost)
        except RoutingError:        # the instance needs a chip cut off from the others
            skipped.append(f"{lay}: {sw.unreached(lay, info['instance'])}")
            continue
        searched.append(lay)
        points.extend(mine)
    if not points:
        unfit = skipped[len(unpriced):]        # the layouts' reasons (not the drafts')
        reasons = {r.partition(": ")[2] for r in unfit}
        if len(reasons) == 1:          # a bad setting, not a layout that does not fit
            raise SpecError(f"{m.name} on {fabric.name}, every layout: {reasons.pop()}")
        if len(unfit) > 2:      # one line a reader can take in: the largest instance's
            why = f"all {len(unfit)} layouts are refused; the largest instance, {unfit[-1]}"
        elif unfit:
            why = "; ".join(unfit)
        elif not cands:     # candidate_layouts found no instance that holds the weights
            why = (f"its weights ({m.weight_bytes_total / 1e9:.1f} GB) exceed {usable_hbm:g} "
                   f"of the HBM of all {fabric.n_endpoints} chips ({sw.chip.name}: "
                   f"{sw.chip.hbm_bytes / 1e9:.1f} GB each)")
        else:               # layouts fit, but not at any of the batches asked
            why = "every batch asked exceeds the largest that fits: " + ", ".join(
                f"{lay} holds {limit(infos[lay])}" for lay in searched) + (
                f" (max_batched_tokens={cap}: at most {cap} per rank)" if cap is not None else "")
        raise SpecError(f"{m.name} fits no layout on {fabric.name} at context {sw.full}: "
                        + why)
    skipped += dropped
    # a point whose prompts arrive faster than its steps take them is not a state the engine
    # holds (ServingPoint.prompt_bound): evaluated and kept, never on the front
    held = [p for p in points if not p.prompt_bound]
    if points and not held:
        raise SpecError(f"{m.name} on {fabric.name}: at every batch asked, prompts of {isl} "
                        f"tokens arrive faster than the steps' max_batched_tokens={sw.budget} "
                        f"can take them beside the running requests ({osl} output tokens a "
                        f"request): raise max_batched_tokens, or the batches are not "
                        f"sustainable")
    front = pareto_front(held)
    # a priced draft is the decode model's (its parameters are the steps'); a given one is
    # a number
    # the prefill GEMMs' efficiency: the user's, or the published ones of this chip's
    # generation (the roofline elsewhere)
    eff = (Parameter("serving.prefill_compute_efficiency", sw.eff, "",
                     "user: one compute efficiency for every prefill GEMM")
           if sw.eff is not None else None)
    params = (USABLE_HBM_FRACTION,) + ((eff,) if eff is not None else tuple(
        p for (g, *_), p in GEMM_COMPUTE_EFFICIENCY.items() if g == sw.chip.generation)) + (
        MTP_ACCEPTANCE,) + (
        () if draft_cost is None else
        (Parameter("serving.draft_cost", draft_cost, "", "user: draft time per token as a "
                   "fraction of a plain step"),))
    return ServingFrontier(model=m.name, system=fabric.name, mode=mode, definition=definition,
                           definition_text=DEFINITIONS[definition],
                           isl=isl, osl=osl, points=tuple(front), evaluated=len(points),
                           layouts=tuple(searched),
                           skipped=tuple(skipped), parameters=params,
                           all_points=tuple(points) if keep_all else ())


# -- single-user speed ------------------------------------------------------------------

@dataclass(frozen=True)
class SingleUserSpeed:
    """Result of :func:`single_user_speed`.

    Attributes
    ----------
    tokens_per_s : float
        The best tokens/s one user gets.
    tpot : float
        Seconds per output token.
    point : ServingPoint
        Where it is reached (layout, speculative setting).
    limiter : str
        The largest share of the per-token time.
    shares : dict
        Seconds per output token, additive (they sum to ``tpot``): ``weights read``,
        ``KV read``, ``compute`` (beyond the memory time where compute-bound),
        ``launch/graph``, ``kernel floors``, ``communication`` (exposed), ``draft``.
    """

    tokens_per_s: float
    tpot: float
    point: object
    limiter: str
    shares: dict


def speed_limits(point):
    """``(limiter, shares)`` of a :class:`ServingPoint`: what its per-token time is made of.

    ``shares`` (seconds per output token) add up to ``point.tpot``: ``weights read``,
    ``KV read``, ``compute`` (beyond the memory time where compute-bound),
    ``launch/graph`` (kernel boundaries), ``kernel floors`` (what kernels run beyond their
    bytes: small kernels' minimum durations, GEMMs' fixed parts), ``communication``
    (exposed), ``draft`` and ``prefill`` (other users' prefills); ``limiter`` is the
    largest.

    Parameters
    ----------
    point : ServingPoint

    Returns
    -------
    tuple
        ``(limiter, shares)``: the largest share's name and a dict from each part's name to
        its seconds per output token.

    Examples
    --------
    >>> import topologies
    >>> from analysis import single_user_speed
    >>> su = single_user_speed("deepseek-v3", topologies.build("hgx-h200"),
    ...                        speculative=((0, 0.0),))
    >>> limiter, shares = speed_limits(su.point)   # shares: seconds per token
    >>> limiter in shares, shares[limiter] == max(shares.values())
    (True, True)
    """
    if not isinstance(point, ServingPoint):
        raise kind_error(point, "point",
                         "a ServingPoint (analysis.serving_point, a frontier's points)")
    shares = _shares(point)
    return max(shares, key=lambda k: shares[k]), shares


def _shares(p):
    b, r = p.breakdown, p.resources
    memory = r["weights"] + r["kv_cache"]
    local = b["attention"] + b["ffn"] + b["head"]
    floors = r.get("kernel_floor", 0.0)
    # What the local parts hold beyond their reads and floors. Each of the three is a float
    # sum of at most one term a kernel of the step (p.step_kernels = n), so each is off its
    # exact sum by at most (n - 1) u times its size (Higham, Accuracy and Stability of
    # Numerical Algorithms, 2nd ed., eq. 4.4; u = eps / 2; eps here leaves each term's own
    # few roundings room): a difference within that bound is none, not a residue such as
    # 5e-18 s that a reader would see as a compute share, whatever the engine's kernels.
    compute = local - floors - memory
    if compute <= p.step_kernels * sys.float_info.epsilon * (local + floors + memory):
        compute = 0.0
    return {"weights read": r["weights"], "KV read": r["kv_cache"],
            "compute": compute, "launch/graph": b["launch"],
            "kernel floors": floors,
            "communication": b["exposed_comm"], "draft": b["draft"],
            "prefill": b["prefill"]}


def single_user_speed(model, fabric, *, isl=1024, osl=1024, layouts=None,
                      speculative=DEFAULT_SPECULATIVE, **kwargs):
    """The best tokens/s for one user on ``fabric``, and what limits it.

    One user (batch 1) over every layout (:func:`candidate_layouts`) and speculative
    setting; the fastest point, with its per-token time split into weights read, KV
    read, compute, launch or graph overhead, communication and drafting.

    Parameters
    ----------
    model : str or MoEModel
    fabric : fabric.Fabric
    isl, osl : int
        Input and output tokens of the request.
    layouts : sequence of str, optional
        Default: :func:`candidate_layouts`.
    speculative : sequence of (int, float)
        ``(draft_length, acceptance)`` settings tried.
    **kwargs
        Passed to :func:`serving_point`.

    Returns
    -------
    SingleUserSpeed
        The best point's tokens/s, its per-token time in seconds and its shares.

    Examples
    --------
    >>> import topologies
    >>> f = topologies.build("switch:8,planes=2,links=9,tech=nvlink5,chip=b200")
    >>> s = single_user_speed("kimi-k2", f, speculative=((0, 0.0),))
    >>> s.limiter in s.shares, abs(sum(s.shares.values()) - s.tpot) < 1e-12
    (True, True)
    """
    # its kind first (a str was a SpecError quoting it whole, 5 KB)
    if check_count(kwargs.get("micro_batches", 1), "micro_batches", 1) != 1:
        raise SpecError(f"one user's step cannot be split into micro_batches="
                        f"{kwargs['micro_batches']}; single-user speed runs micro_batches=1")
    fr = serving_frontier(model, fabric, isl=isl, osl=osl, batches=(1,), layouts=layouts,
                          speculative=speculative, keep_all=True, **kwargs)
    best = max(fr.all_points, key=lambda p: (p.tokens_per_s_user, p.tokens_per_s_gpu))
    limiter, shares = speed_limits(best)
    return SingleUserSpeed(tokens_per_s=best.tokens_per_s_user, tpot=best.tpot, point=best,
                           limiter=limiter, shares=shares)
