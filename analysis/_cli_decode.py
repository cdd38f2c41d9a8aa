"""``cofabric decode SYSTEM --model NAME [...] [--json]``: per-token decode time."""

import argparse
import dataclasses
import math

from fabric import EXCHANGE_KERNELS, SpecError, format_size, format_time
from fabric._units import parse_real, show_value

from ._cli import real_number, whole_number
from ._decode import (
    TRTLLM_DSV3_GEMMS_RELEASE,
    TRTLLM_NEWEST,
    TRTLLM_RELEASE_DATES,
    TWO_BATCH,
    trtllm_release,
)
from ._gemm import MOE_BACKENDS
from ._json_units import to_json
from ._models import MODELS

__all__ = []


def model_help():
    """The --model help of decode and serve: every model the registry holds (a list
    written by hand had fallen behind it)."""
    return ", ".join(sorted(MODELS)) + ", or a .toml file"


def register(sub):
    p = sub.add_parser(
        "decode", help="per-token decode time of an MoE model on a system",
        description="Model one decode step of an MoE model on SYSTEM (a topology spec or "
                    "preset such as sd200-ultra, cluster-128, nvl72): HBM reads of weights "
                    "and KV cache, compute, expert dispatch/combine and tensor-parallel "
                    "collectives on the fabric, kernel-launch bubbles. Optionally with "
                    "speculative decoding (--draft-length, --acceptance, --draft-cost).")
    p.add_argument("system", metavar="SYSTEM", help="topology spec or preset")
    p.add_argument("--model", required=True, help=model_help())
    p.add_argument("--batch", type=whole_number, default=1, help="sequences decoded together (1)")
    p.add_argument("--context", type=whole_number, default=4096, help="tokens in each KV cache (4096)")
    p.add_argument("--layout", default=None,
                   help="e.g. tp=8 or tp=4,dp=32 (default tp=1 over every chip)")
    p.add_argument("--transport", default=None, choices=("loadstore", "rdma"),
                   help="force one transport (default: load/store inside a load/store "
                        "domain, RDMA across NICs)")
    p.add_argument("--algorithm", default="auto", help="collective algorithm (auto)")
    p.add_argument("--graph-batch", type=whole_number, default=None,
                   help="sequences of the CUDA graph the step replays when the engine pads "
                        "the batch to a captured size (vLLM): GEMMs, experts and "
                        "collectives at these rows, the KV cache at --batch's (default: "
                        "--batch, no padding)")
    add_step_options(p)
    p.add_argument("--skew", type=real_number, default=0.0, help="Zipf exponent of routing (0)")
    p.add_argument("--launch-overhead", type=real_number, default=None,
                   help="seconds per host kernel launch without CUDA graphs (default 4e-6, "
                        "see analysis.LAUNCH_OVERHEAD)")
    p.add_argument("--hbm-efficiency", type=real_number, default=None,
                   help="achieved fraction of peak HBM bandwidth for every read (default: "
                        "the published rate of each kernel that has one, else 0.78, see "
                        "analysis.DECODE_HBM_EFFICIENCY; 1: the roofline)")
    p.add_argument("--compute-efficiency", type=real_number, default=None,
                   help="achieved fraction of each GEMM's peak FLOP/s (default: the published "
                        "one per chip generation and format, analysis.GEMM_COMPUTE_EFFICIENCY, "
                        "else 1)")
    p.add_argument("--draft-length", type=whole_number, default=None,
                   help="speculative decoding: tokens drafted per cycle")
    p.add_argument("--acceptance", type=real_number, default=None,
                   help="speculative decoding: acceptance rate per drafted token")
    p.add_argument("--draft-cost", type=real_number, default=None,
                   help="speculative decoding: draft time per token / step time, a finite "
                        "number >= 0 (default: the model's MTP module priced by "
                        "analysis.decode_step(draft=True); a model without one needs it; "
                        "with --draft-length)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=run)


def _overlap_arg(text):
    """``--overlap``: a fraction, or the two-batch schedule's name."""
    if text == TWO_BATCH:
        return text
    try:
        return parse_real(text, "")
    except SpecError:
        raise argparse.ArgumentTypeError(
            f"expected a fraction in [0, 1] or {TWO_BATCH!r}, got {show_value(text)}") from None


def _release_arg(text):
    """``--trtllm-release``: a modelled TensorRT-LLM release (:func:`analysis.trtllm_release`)."""
    try:
        return trtllm_release(text)
    except SpecError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


#: The serving engines whose kernel lists ``--engine`` offers (``decode`` and ``serve``).
ENGINES = ("trtllm", "vllm", "sglang")


def add_step_options(p):
    """Add the decode-step options ``decode`` and ``serve`` share to parser (or group) ``p``:
    one definition, so the two commands cannot drift apart."""
    from ._collectives import default_runtime
    from ._engine_allreduce import TRTLLM_ALLREDUCE_CHIPS, VLLM_SM_VERSIONS

    p.add_argument("--runtime", default=None,
                   help="collective runtime of the tensor-parallel all-reduces, passed to "
                        "analysis.cost (e.g. nccl, symmetric-memory, ideal; default: "
                        f"{default_runtime()}, except --engine vllm on "
                        f"{' and '.join(VLLM_SM_VERSIONS)} chips, whose TP "
                        "all-reduces take vLLM's own dispatch, analysis.vllm_all_reduce); "
                        f"--engine trtllm on {' and '.join(sorted(TRTLLM_ALLREDUCE_CHIPS))} "
                        "chips: TensorRT-LLM's measured op, analysis.trtllm_all_reduce")
    p.add_argument("--ep-kernel", default=None,
                   help="MoE exchange kernel for dispatch/combine: "
                        + ", ".join(EXCHANGE_KERNELS)
                        + " (default: the collectives model's all-to-all; with --engine trtllm "
                          "under attention DP, tp=1 and dp>1, TensorRT-LLM's allgather + "
                          "reducescatter unless its MNNVL all-to-all runs: a Grace host with "
                          "more expert ranks than experts per token)")
    p.add_argument("--cuda-graphs", action=argparse.BooleanOptionalAction, default=True,
                   help="replay the step as a CUDA graph: each kernel pays the graph-replay "
                        "gap instead of a host launch (default: on, as analysis.decode_step "
                        "and the serving frameworks)")
    p.add_argument("--pdl", action=argparse.BooleanOptionalAction, default=False,
                   help="kernels launched with Programmatic Dependent Launch (TensorRT-LLM's "
                        "TRTLLM_ENABLE_PDL=1): each kernel boundary of the replayed graph "
                        "hides the 0.55 us dispatch gap, analysis.PDL_HIDDEN_GAP (default: "
                        "off; needs --cuda-graphs)")
    p.add_argument("--engine", default="trtllm", choices=ENGINES,
                   help="whose kernel list a replayed graph runs (trtllm: TensorRT-LLM's "
                        "published module list, the default; vllm, sglang: counted from their "
                        "code)")
    p.add_argument("--overlap", type=_overlap_arg, default=0.0,
                   help="fraction of communication hidden under compute (0), or 'two-batch': "
                        "SGLang/DeepSeek's decode two-batch overlap schedule (needs "
                        "--ep-kernel; with serve, --micro-batches 2)")
    p.add_argument("--fusion", type=real_number, default=1.0,
                   help="kernel fusion factor dividing launches (1)")
    p.add_argument("--kernel-floors", action=argparse.BooleanOptionalAction, default=True,
                   help="each small kernel runs at least its class's published minimum "
                        "duration and each weight GEMM its fixed part (analysis.KERNEL_FLOORS, "
                        "GEMM_FIXED_TIME; default: on); --no-kernel-floors prices kernels at "
                        "their boundary + roofline only")
    p.add_argument("--moe-hbm-efficiency", type=real_number, default=None,
                   help="achieved fraction of peak HBM bandwidth of the routed experts' "
                        "grouped GEMMs (default: 0.303 for vLLM graphs on INT4 experts, see "
                        "analysis.VLLM_INT4_MOE_HBM_EFFICIENCY; else the step's HBM efficiency)")
    p.add_argument("--expert-balance", type=real_number, default=None,
                   help="balance of the routed experts over the expert ranks, mean/max of "
                        "their token-expert pairs, as an expert load balancer (EPLB) reaches "
                        "it (default: round-robin placement)")
    p.add_argument("--moe-backend", default="cutlass", choices=MOE_BACKENDS,
                   help="TensorRT-LLM's MoE backend (analysis.MOE_BACKENDS): cutlass, its "
                        "PyTorch flow's default (the default), or trtllm, its trtllm-gen "
                        "kernels (needs --engine trtllm on a Blackwell chip). Under --engine "
                        "trtllm in a CUDA graph the routed experts of a decode step take the "
                        "backend's module time as measured at the step's expert layout where "
                        "one was (analysis.moe_module_time; decode's header says whether it "
                        "was), else the step's kernel list; the speculative verify and draft "
                        "steps too. Where a prompt pass's routed experts take a measured rate "
                        "it is the CUTLASS module's, whatever the backend (the trtllm module "
                        "was measured at 1-384 tokens a rank only)")
    oldest = min(TRTLLM_RELEASE_DATES, key=lambda v: TRTLLM_RELEASE_DATES[v])
    p.add_argument("--trtllm-release", type=_release_arg, default=None, metavar="VERSION",
                   help=f"the TensorRT-LLM release whose code the steps run "
                        f"(analysis.TRTLLM_RELEASE_DATES, {oldest} to {TRTLLM_NEWEST}; needs "
                        f"--engine trtllm; default: {TRTLLM_NEWEST}, the newest modelled, "
                        f"whose kernels the measured tables time). Before "
                        f"{TRTLLM_DSV3_GEMMS_RELEASE} DeepSeek's router and BF16 fused A GEMMs "
                        f"run on cuBLAS (their measured Linear times) at 1-16 tokens a rank "
                        f"too; from it, in their dedicated kernels")


def floor_kwargs(args):
    """decode_step keywords of ``--kernel-floors`` / ``--no-kernel-floors``."""
    return {} if args.kernel_floors else {"kernel_floors": {}, "gemm_fixed_time": 0.0}


def _jsonable(obj):
    if dataclasses.is_dataclass(obj):
        return {f.name: _jsonable(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, (tuple, list)):
        return [_jsonable(x) for x in obj]
    return obj


def _param(step, name):
    """The value of the step's Parameter called ``name``."""
    return next(p.value for p in step.parameters if p.name == name)


def runtime_text(collective, runtime=None):
    """How a step's collectives are priced, one phrase for ``decode``'s and ``serve``'s
    headers: ``collective`` is the label of the step's collective cost function
    (``"analysis.cost"``, ``"analysis.vllm_all_reduce"`` or ``"analysis.trtllm_all_reduce"``,
    :func:`analysis.engine_collective`) and ``runtime`` the --runtime given. The engines'
    own all-reduces price only the tensor-parallel all-reduces; every other collective runs
    under the default runtime.

    >>> runtime_text("analysis.cost")
    'runtime nccl'
    >>> runtime_text("analysis.vllm_all_reduce")
    "TP all-reduces by vLLM's own dispatch (analysis.vllm_all_reduce), other collectives runtime nccl"
    >>> runtime_text("analysis.trtllm_all_reduce")
    "TP all-reduces by TensorRT-LLM's measured op (analysis.trtllm_all_reduce), other collectives runtime nccl"
    >>> runtime_text("analysis.cost", "ideal")
    'runtime ideal'
    """
    from ._collectives import default_runtime, resolved_runtime_name
    from ._engine_allreduce import ENGINE_ALL_REDUCES

    if runtime:
        return f"runtime {resolved_runtime_name(runtime)}"
    if collective == "analysis.cost":
        return f"runtime {default_runtime()}"
    what = (ENGINE_ALL_REDUCES[collective].phrase if collective in ENGINE_ALL_REDUCES
            else collective)
    return f"TP all-reduces by {what}, other collectives runtime {default_runtime()}"


def settings_text(args):
    """The step's settings that differ from their defaults, said on the header line so that
    a reader sees they took: '; two-batch overlap, expert balance 0.81'.

    >>> import argparse
    >>> settings_text(argparse.Namespace(overlap="two-batch", expert_balance=0.81, skew=0.0,
    ...                                   fusion=1.0))
    '; two-batch overlap, expert balance 0.81'
    >>> settings_text(argparse.Namespace(overlap=0.5, expert_balance=None, skew=1.2,
    ...                                   fusion=10.0))
    '; 0.5 of communication hidden under compute, routing skew (Zipf) 1.2, kernel fusion 10x'
    """
    said = []
    if args.overlap == "two-batch":
        said.append("two-batch overlap")
    elif args.overlap:
        said.append(f"{args.overlap:g} of communication hidden under compute")
    if args.expert_balance is not None:
        said.append(f"expert balance {args.expert_balance:g}")
    if getattr(args, "skew", 0):      # decode only
        said.append(f"routing skew (Zipf) {args.skew:g}")
    if args.fusion != 1:
        said.append(f"kernel fusion {args.fusion:g}x")
    if getattr(args, "trtllm_release", None):      # given: the release the steps ran
        said.append(f"TensorRT-LLM {args.trtllm_release}")
    return "; " + ", ".join(said) if said else ""


def moe_backend_text(step, backend):
    """The header's word on a ``--moe-backend`` other than the default (the header says the
    settings that differ from theirs, :func:`settings_text`): whether the routed experts took
    the backend's measured module time (:func:`analysis.moe_module_time`; its Parameters are
    in the step) or the step's kernel list.

    >>> from types import SimpleNamespace as N
    >>> moe_backend_text(N(parameters=()), "cutlass")
    ''
    >>> moe_backend_text(N(parameters=()), "trtllm")
    "; MoE backend trtllm: no module measured at this step's expert layout and tokens (the step's kernel list)"
    >>> moe_backend_text(N(parameters=(N(name="gemm.moe_module_time.b200.fp4.trtllm.etp4.ep2.t1"),)),
    ...                  "trtllm")
    '; MoE backend trtllm: its module as measured (analysis.moe_module_time)'
    """
    if backend == "cutlass":      # decode_step's default
        return ""
    if any(p.name.startswith("gemm.moe_module_time.") for p in step.parameters):
        return f"; MoE backend {backend}: its module as measured (analysis.moe_module_time)"
    return (f"; MoE backend {backend}: no module measured at this step's expert layout and "
            f"tokens (the step's kernel list)")


def run(args):
    import topologies
    from analysis import DECODE_HBM_EFFICIENCY, LAUNCH_OVERHEAD, decode_step, speculative_decode

    fab = topologies.build(args.system)
    kw = {"batch": args.batch, "context": args.context, "layout": args.layout,
          "transport": args.transport, "algorithm": args.algorithm, "skew": args.skew,
          "overlap": args.overlap, "fusion_factor": args.fusion,
          "hbm_efficiency": args.hbm_efficiency,
          "compute_efficiency": args.compute_efficiency,
          "launch_overhead": (LAUNCH_OVERHEAD.value if args.launch_overhead is None
                              else args.launch_overhead),
          "runtime": args.runtime, "ep_kernel": args.ep_kernel,
          "cuda_graphs": args.cuda_graphs, "engine": args.engine, "pdl": args.pdl,
          "graph_batch": args.graph_batch,
          "moe_hbm_efficiency": args.moe_hbm_efficiency,
          "expert_balance": args.expert_balance, "moe_backend": args.moe_backend,
          "trtllm_release": args.trtllm_release, **floor_kwargs(args)}
    spec = None
    if (args.draft_length is None) != (args.acceptance is None):
        raise SpecError("--draft-length and --acceptance go together")
    if args.draft_cost is not None and args.draft_length is None:
        raise SpecError("--draft-cost goes with --draft-length and --acceptance")
    if args.draft_cost is not None and not (math.isfinite(args.draft_cost)
                                            and args.draft_cost >= 0):
        raise SpecError(f"--draft-cost must be a finite number >= 0 (a draft's time per token "
                        f"as a fraction of a plain step), got {args.draft_cost}")
    if args.draft_length is not None:
        from analysis import expected_accepted_tokens

        expected_accepted_tokens(args.draft_length, args.acceptance)    # validates both
        if args.draft_cost is not None:
            draft = {"draft_cost": args.draft_cost}
        else:
            # priced as the library's serving model prices a draft: the model's own MTP
            # module (decode_step(draft=True)); a model without one has no draft to price
            from analysis import model_config

            m = model_config(args.model)
            if not m.mtp_modules:
                raise SpecError(f"{m.name} has no multi-token-prediction module "
                                f"(mtp_modules=0) to price a draft from; pass --draft-cost "
                                f"(a draft model's time per token as a fraction of a plain "
                                f"step)")
            draft = {"draft_time": decode_step(m, fab, draft=True, **kw).time}
        spec = speculative_decode(args.model, fab, draft_length=args.draft_length,
                                  acceptance=args.acceptance, **draft, **kw)
        r = spec.base
    else:
        r = decode_step(args.model, fab, **kw)
    if args.json:
        out = _jsonable(r)
        if spec is not None:
            out["speculative"] = {k: v for k, v in _jsonable(spec).items()
                                  if k not in ("base", "verify")}
        print(to_json(out))
        return 0
    from ._table import format_table

    def us(x):
        return round(x * 1e6, 2)

    transport = r.transport or "auto (per step)"
    if r.transport and r.ep_kernel not in (None, "all-to-allv"):
        # decode_step hands the transport to the collectives only: a kernel picks its paths
        transport += f" (collectives; {r.ep_kernel} picks its own)"
    print(f"{r.model} on {r.system} ({r.chip} x {r.layout.chips}), layout {r.layout}, "
          f"batch {r.batch}, context {r.context}, transport {transport}")
    from ._decode import fabric_chip, trtllm_gathers
    from ._models import model_config

    gathers = trtllm_gathers(model_config(args.model), fabric_chip(fab), r.layout, args.engine,
                             args.ep_kernel)
    exchange = ("none (one expert rank)" if r.layout.ep == 1
                else "none (experts split over the ranks, output all-reduced)"
                if r.layout.etp > 1 else r.ep_kernel or (
                    "TensorRT-LLM's allgather + reducescatter (attention DP)" if gathers
                    else "all-to-all"))
    graphs = "host launch per kernel"
    if r.cuda_graphs:
        graphs = (f"CUDA graphs ({kw['engine']} kernels{', PDL' if args.pdl else ''}"
                  f"{f', padded to {r.graph_batch} sequences' if r.graph_batch != r.batch else ''})")
    runtime = runtime_text(_param(r, "decode.collective"), r.runtime)
    hbm = (f"{DECODE_HBM_EFFICIENCY.value:g} of peak (a kernel's own published rate where "
           f"it has one)" if kw["hbm_efficiency"] is None else
           f"{kw['hbm_efficiency']:g} of peak (every read)")
    print(f"{runtime}, MoE exchange {exchange}, {graphs}, "
          f"HBM at {hbm}, routed experts at "
          f"{_param(r, 'decode.moe_hbm_efficiency'):g}{settings_text(args)}"
          f"{moe_backend_text(r, args.moe_backend)}")
    headers = ["block", "count", "weights us", "kv us", "compute us", "dispatch us",
               "combine us", "tp coll us", "exposed comm us", "launch us", "floors us",
               "total us"]
    rows = []
    for kind in ("dense", "moe"):
        layers = [x for x in r.layers if x.kind == kind]
        if layers:
            x = layers[0]
            rows.append([f"{kind} layer", len(layers), us(x.attention_weights + x.ffn_weights),
                         us(x.kv_cache), us(x.attention_compute + x.ffn_compute),
                         us(x.dispatch), us(x.combine), us(x.tp_allreduce),
                         us(x.exposed_comm), us(x.launch), us(x.kernel_floor), us(x.total)])
    h = r.head
    rows.append(["head", 1, us(h.weights), 0.0, us(h.compute), 0.0, 0.0, 0.0, 0.0,
                 us(h.launch), us(h.kernel_floor), us(h.total)])
    print(format_table(headers, rows))
    b = r.breakdown
    def t(v):       # the parts side by side: four digits each
        return format_time(v, all_digits=True)

    print(f"step {t(r.time)}: attention {t(b.attention)}, ffn {t(b.ffn)}, head {t(b.head)}, "
          f"exposed comm {t(b.exposed_comm)}, launch {t(b.launch)} (kernel floors "
          f"{t(b.kernel_floor)}, inside attention, ffn and head)")
    moe = [x for x in r.layers if x.kind == "moe"]
    if moe:
        print(f"active experts per MoE layer: {moe[0].active_experts:.1f} (system), "
              f"{moe[0].active_experts_chip:.2f} on the critical chip")
    print(f"tokens/s: {r.tokens_per_s_user:.1f} per user, {r.tokens_per_s_system:.1f} per "
          f"system; HBM used on the fullest chip {format_size(r.hbm_per_chip, binary=False)}")
    if spec is not None:
        print(f"speculative k={spec.draft_length} a={spec.acceptance}: "
              f"{spec.expected_tokens:.2f} tokens per {t(spec.cycle_time)} cycle "
              f"(verify {t(spec.verify_time)}), {spec.tokens_per_s_user:.1f} "
              f"tokens/s per user, speedup {spec.speedup:.2f} (bound {spec.speedup_bound:.2f})")
    return 0
