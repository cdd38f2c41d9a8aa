"""``cofabric serve SYSTEM --model NAME --isl N --osl N [--json]``: the serving frontier."""

import dataclasses
import math

from fabric import SpecError, format_time
from fabric._units import integer_form, parse_integer, show_value

from ._cli import real_number, whole_number
from ._cli_decode import add_step_options, floor_kwargs, model_help
from ._cli_route import add_failure_options, degrade
from ._json_units import to_json
from ._report_parts import shown_parts

__all__ = []


def register(sub):
    p = sub.add_parser(
        "serve", help="throughput-interactivity frontier of a model on a system",
        description="Sweep concurrency x parallel layout (searched) x speculative decoding "
                    "for a model on SYSTEM and print the Pareto frontier of tokens/s per GPU "
                    "against tokens/s per user, the single-user speed and what limits it, "
                    "and the cost per million tokens.")
    p.add_argument("system", metavar="SYSTEM", help="topology spec or preset")
    p.add_argument("--model", required=True, help=model_help())
    p.add_argument("--isl", type=whole_number, required=True, help="input tokens per request")
    p.add_argument("--osl", type=whole_number, required=True, help="output tokens per request")
    p.add_argument("--mode", default="aggregated", choices=("aggregated", "disaggregated"),
                   help="prefill on the decode GPUs (aggregated, the default) or on others")
    p.add_argument("--definition", default="total-per-gpu",
                   choices=("total-per-gpu", "output-per-gpu", "output-per-decode-gpu"),
                   help="what tokens/s per GPU counts (default: input+output over all GPUs, "
                        "InferenceX)")
    # serve on SYSTEM without these (the search also tries instances that leave live
    # chips idle, and places an instance on whole intact domains)
    add_failure_options(p)
    p.add_argument("--layout", action="append", default=None,
                   help="a layout to try (repeatable; default: search them all)")
    p.add_argument("--batches", default=None,
                   help="comma-separated users per instance (default: powers of two up to "
                        "the memory limit)")
    p.add_argument("--no-speculative", action="store_true",
                   help="plain decoding only (default also tries 1 and 3 drafted tokens)")
    p.add_argument("--draft-cost", type=real_number, default=None,
                   help="speculative decoding: a separate draft model's time per token as a "
                        "fraction of a plain step, a finite number >= 0 (default: the model's "
                        "MTP module priced; a model without one is searched without drafts)")
    p.add_argument("--tier", default="own-hyperscaler",
                   choices=("own-hyperscaler", "own-neocloud", "rent-3yr"),
                   help="GPU-hour cost tier of the TCO table (default own-hyperscaler)")
    p.add_argument("--chip-price", type=real_number, default=None,
                   help="dollars per chip with its server share, for a system with no "
                        "published GPU-hour price (network cost from the bill of materials)")
    d = p.add_argument_group("decode step (passed to analysis.decode_step)")
    add_step_options(d)
    p.add_argument("--adp-balance", action="store_true",
                   help="aggregated serving under attention data parallelism: a scheduler "
                        "aligns every rank's prompts in one iteration (TensorRT-LLM's ADP "
                        "Balance); default: one prompt's prefill at a time holds the instance")
    p.add_argument("--max-batched-tokens", type=whole_number, default=None,
                   help="tokens per engine step of an engine that runs decodes and a prompt "
                        f"chunk in one forward pass (default the engine's own: {_budgets()}): "
                        "a prompt shares the weight read of the steps it rides on")
    p.add_argument("--kv-inflow", action="store_true",
                   help="--mode disaggregated: the prompts' KV caches arrive over the decode "
                        "ranks' NICs beside the expert exchange (osl = the requests' output "
                        "length)")
    d.add_argument("--micro-batches", type=whole_number, default=1,
                   help="decode steps split into this many micro-batches, at most the "
                        "batch (default 1; 2: two-batch overlap, with --overlap two-batch)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=run)


def _budgets():
    """Each engine's default token budget per step, from its sourced Parameter
    (:data:`analysis.MIXED_STEP_BUDGET`), for --max-batched-tokens' help; an engine that runs
    a prompt as a pass of its own has none and refuses the option.

    >>> _budgets()
    'trtllm 8192, vllm 8192; sglang: a prompt runs as a pass of its own, the option is refused'
    """
    from ._cli_decode import ENGINES
    from ._serving import MIXED_STEP_BUDGET

    said = ", ".join(f"{e} {MIXED_STEP_BUDGET[e].value:g}" for e in ENGINES
                     if e in MIXED_STEP_BUDGET)
    alone = [e for e in ENGINES if e not in MIXED_STEP_BUDGET]
    return said + (f"; {', '.join(alone)}: a prompt runs as a pass of its own, the option "
                   f"is refused" if alone else "")


def _step_text(args, fab):
    """What each decode step runs, said so that a reader sees the options took: 'decode step:
    sglang kernels, MoE exchange (where a layout has one) deepep-low-latency, runtime nccl,
    CUDA graphs, 2 micro-batches; two-batch overlap, expert balance 0.81'. The collectives
    are named by the rule the steps are priced with (:func:`analysis.engine_collective`:
    ``--engine vllm`` takes vLLM's own TP all-reduce dispatch, ``--engine trtllm`` on B200 and
    H200 TensorRT-LLM's measured all-reduce op, unless --runtime is given)."""
    from ._cli_decode import runtime_text, settings_text
    from ._decode import collective_label, engine_collective, fabric_chip

    label = collective_label(engine_collective(args.engine, fabric_chip(fab),
                                               runtime=args.runtime))
    exchange = args.ep_kernel or (
        "the collectives model's all-to-all, or TensorRT-LLM's allgather + reducescatter under "
        "attention DP (tp=1, dp>1) where it runs no MNNVL all-to-all" if args.engine == "trtllm"
        else "the collectives model's all-to-all")
    parts = [f"{args.engine} kernels", f"MoE exchange (where a layout has one) {exchange}",
             runtime_text(label, args.runtime),
             ("CUDA graphs" + (", PDL" if args.pdl else "")) if args.cuda_graphs
             else "host launch per kernel"]
    if not args.kernel_floors:
        parts.append("no kernel floors")
    if args.micro_batches != 1:
        parts.append(f"{args.micro_batches} micro-batches")
    if args.moe_hbm_efficiency is not None:
        parts.append(f"routed experts at {args.moe_hbm_efficiency:g} of peak HBM")
    if args.moe_backend != "cutlass":       # decode_step's default, not said
        parts.append(f"MoE backend {args.moe_backend}")
    return "decode step: " + ", ".join(parts) + settings_text(args)


def _batches(text):
    if text is None:
        return None
    try:
        # every item is a number: "4,,8" is a typo, not the list (4, 8)
        return tuple(parse_integer(x, "") for x in text.split(","))
    except SpecError:
        raise SpecError(f"--batches must be comma-separated integers in {integer_form()}, "
                        f"got {show_value(text)}") from None


def _point_json(p, usd_per_hour=None):
    d = dataclasses.asdict(p)
    out = {}
    for k, v in d.items():
        if k in ("cycle_time", "prefill_time", "request_time", "tpot", "shared_read",
                 "queue_time"):
            out[f"{k}_s"] = v
        elif k in ("hbm_per_chip", "hbm_capacity"):
            out[f"{k}_bytes"] = v
        elif k in ("breakdown", "resources"):
            out[f"{k}_s_per_token"] = v
        else:
            out[k] = v
    out["fits"] = p.fits
    if usd_per_hour is not None:
        from analysis import cost_per_million_tokens

        out["usd_per_million_tokens"] = cost_per_million_tokens(p.tokens_per_s_gpu,
                                                                usd_per_hour)
    return out


def run(args):
    import topologies
    from analysis import (
        DEFAULT_SPECULATIVE,
        cost_per_million_tokens,
        serving_cost,
        serving_frontier,
        single_user_speed,
        tokens_per_s_per_mw,
    )
    from fabric import FabricError

    if args.chip_price is not None and not (math.isfinite(args.chip_price)
                                            and args.chip_price > 0):
        raise SpecError(f"--chip-price must be a finite number of dollars > 0, got "
                        f"{args.chip_price}")
    fab = degrade(topologies.build(args.system), args)
    spec = ((0, 0.0),) if args.no_speculative else DEFAULT_SPECULATIVE
    if args.draft_cost is not None and args.no_speculative:
        raise SpecError("--draft-cost prices speculative drafts; --no-speculative has none")
    decode = {"cuda_graphs": args.cuda_graphs, "fusion_factor": args.fusion,
              "overlap": args.overlap, "micro_batches": args.micro_batches,
              "adp_balance": args.adp_balance, "pdl": args.pdl,
              "engine": args.engine, "moe_backend": args.moe_backend, **floor_kwargs(args)}
    decode.update({k: v for k, v in (("runtime", args.runtime), ("ep_kernel", args.ep_kernel),
                                     ("moe_hbm_efficiency", args.moe_hbm_efficiency),
                                     ("expert_balance", args.expert_balance),
                                     ("trtllm_release", args.trtllm_release))
                   if v is not None})
    from ._progress import Progress

    # a live bar (the frontier search is one long call): stages and elapsed time
    with Progress(3, "serve", quiet=args.quiet, live=True) as bar:
        bar.stage("frontier: layouts x batches x speculation")
        if args.draft_cost is not None:
            decode["draft_cost"] = args.draft_cost
        fr = serving_frontier(args.model, fab, isl=args.isl, osl=args.osl, mode=args.mode,
                              definition=args.definition, layouts=args.layout,
                              batches=_batches(args.batches), speculative=spec,
                              max_batched_tokens=args.max_batched_tokens,
                              kv_inflow=args.kv_inflow, **decode)
        bar.update()
        bar.stage("single-user speed")
        # one user's step is not split into micro-batches: the plain schedule
        one = {**decode, "micro_batches": 1}
        if one["overlap"] == "two-batch":
            one["overlap"] = 0.0
        su = single_user_speed(args.model, fab, isl=args.isl, osl=args.osl,
                               layouts=args.layout, speculative=spec, **one)
        bar.update()
        bar.stage("cost")
        try:
            usd, kw, _, how = serving_cost(fab, tier=args.tier, chip_price=args.chip_price)
        except FabricError as e:
            usd = kw = None
            how = f"no cost: {e}"
        bar.update()
        bar.stage("done")
    if args.json:
        # what was run, so a JSON file alone reproduces its command (audit s10: the engine,
        # PDL, the step budget and the KV inflow were not recorded)
        settings = {k: v for k, v in decode.items() if k not in ("kernel_floors",
                                                                  "gemm_fixed_time")}
        settings.update(kernel_floors=args.kernel_floors,
                        max_batched_tokens=args.max_batched_tokens, kv_inflow=args.kv_inflow,
                        speculative_options=[{"draft_length": d, "acceptance": a}
                                             for d, a in spec])
        out = {"model": fr.model, "system": fr.system, "isl": fr.isl, "osl": fr.osl,
               "settings": settings,
               "failed_chips": sorted(fab.failures.ranks.values()),
               "failed_links": [list(x) for x in fab.failures.links],
               "failed_lanes": [[list(e), k] for e, k in fab.failures.lanes],
               "failed_nodes": [n for n in fab.failures.nodes if n not in fab.failures.ranks],
               "mode": fr.mode, "definition": fr.definition,
               "definition_text": fr.definition_text, "evaluated_points": fr.evaluated,
               "layouts_searched": list(fr.layouts), "layouts_skipped": list(fr.skipped),
               "usd_per_gpu_hour": usd, "all_in_kw_per_gpu": kw, "cost_basis": how,
               "frontier": [_point_json(p, usd) for p in fr.points],
               "single_user": {"tokens_per_s": su.tokens_per_s, "tpot_s": su.tpot,
                               "limiter": su.limiter, "shares_s_per_token": su.shares,
                               "layout": su.point.layout,
                               "draft_length": su.point.draft_length}}
        print(to_json(out))
        return 0
    from ._table import format_table

    print(f"{fr.model} on {fr.system}: isl {fr.isl}, osl {fr.osl}, {fr.mode}; "
          f"{fr.evaluated} point{'s' * (fr.evaluated != 1)} over {len(fr.layouts)} "
          f"layout{'s' * (len(fr.layouts) != 1)}")
    print(f"tokens/s per GPU = {fr.definition_text}")
    print(_step_text(args, fab))
    headers = ["layout", "chips", "batch", "draft", "tok/s/user", "tok/s/GPU", "TPOT ms",
               "prefill share ms", "HBM GB"]
    if usd is not None:
        headers += ["$/Mtok", "Mtok/s/MW"]
    idle = any(p.idle_chips for p in fr.points)   # a degraded fabric's leftover live chips
    if idle:
        headers.insert(2, "idle chips")
    rows = []
    for p in fr.points:
        row = [p.layout, p.chips] + ([p.idle_chips] if idle else []) + [p.batch, p.draft_length, round(p.tokens_per_s_user, 1),
               round(p.tokens_per_s_gpu, 1), round(p.tpot * 1e3, 2),
               round(p.breakdown["prefill"] * 1e3, 2), round(p.hbm_per_chip / 1e9, 1)]
        if usd is not None:
            row += [round(cost_per_million_tokens(p.tokens_per_s_gpu, usd), 3),
                    round(tokens_per_s_per_mw(p.tokens_per_s_gpu, kw) / 1e6, 3)]
        rows.append(row)
    print(format_table(headers, rows))
    for p in fr.points:         # an engine's admission cap that binds: the others wait
        if p.running != p.batch:
            print(f"batch {p.batch} ({p.layout}, {p.draft_length} drafted) runs "
                  f"{p.running}: the engine admits {p.admission_cap} a rank (a prompt only "
                  f"whole within its max_num_tokens); the others wait, "
                  f"{format_time(p.queue_time)} a request before its prompt")
    for r in fr.skipped:        # layouts (or drafts) not evaluated, and why
        print(f"skipped {r}")
    # the parts side by side: four digits each, in the format helpers' spelling (as decode's)
    shares = ", ".join(f"{k} {format_time(v, all_digits=True)}"
                       for k, v in shown_parts(su.shares.items()))
    print(f"single user: {su.tokens_per_s:.1f} tokens/s ({su.point.layout}, "
          f"{su.point.draft_length} drafted), limited by {su.limiter}; per token: {shares}")
    if usd is None:
        print(f"cost: {how}")
    else:   # what the $/Mtok and Mtok/s/MW columns rest on, with its units
        print(f"cost: {how}: ${usd:.2f} per GPU-hour, {kw:.3g} kW per GPU; $/Mtok = $ per "
              f"million tokens, Mtok/s/MW = million tokens/s per megawatt")
    return 0
