"""The report's serving section: each system's throughput-interactivity frontier, cost per
token at matched interactivity, and the seed's speed claims read on it.

One :func:`analysis.serving_frontier` per system (Kimi K2 as shipped, FP8, under
:data:`SERVING_ISL` / :data:`SERVING_OSL`, aggregated serving, tokens/s per GPU in
InferenceX's definition), run through :func:`analysis.sweep`; the frontiers on one
plot as the public dashboards draw them (x tokens/s per user, y tokens/s per GPU);
a table of throughput, $ per million tokens and tokens/s per MW at
:data:`MATCHED_INTERACTIVITY`; and the seed's claims (5.85ms per token for a 2.8T
MoE; 490 tokens/s for one user) read on the frontiers, each with the settings it
needs.
"""

import functools

from fabric._units import is_float

from ._report_parts import (
    SEED_FUSION,
    SEED_MS_PER_TOKEN,
    SEED_TPOT_TEXT,
    Column,
    FigureSpec,
    Section,
    Table,
    computed_time,
    fmt_float,
    new_figure,
    report_fabric,
    runtime_label,
    runtime_phrase,
    shown_parts,
)

__all__ = []

#: The serving conditions of the report: 1k input / 1k output tokens (a dashboard
#: standard), Kimi K2 with its FP8 weights as shipped, plain decoding and 3 drafted
#: tokens at the MTP acceptance, four concurrencies per layout (the exchange kernels route
#: their traffic on every call: a finer grid costs the default report more than its budget).
SERVING_MODEL = "kimi-k2"
SERVING_ISL, SERVING_OSL = 1024, 1024
SERVING_BATCHES = 4
#: Interactivity (tokens/s per user) at which systems are compared for cost.
MATCHED_INTERACTIVITY = (20.0, 50.0, 100.0)
#: The "speed race" mark of the seed article's context: 490 tokens/s for one user, quoted
#: in the project's serving issue without an original source (docs/sources.md s.1 says so;
#: searched, not found): an unconfirmed mark for orientation, not a measurement.
SPEED_RACE_TOKENS_PER_S = 490.0
#: Where the figure comes from, said wherever the report quotes it (a bare '490 tokens/s'
#: read as the report's own target).
SPEED_RACE_ORIGIN = ("the seed article's speed race, quoted without a source: an unconfirmed "
                     "mark, not a measurement")
#: The seed's model scale, as the hypothetical config stands for it.
SEED_MODEL = "hypothetical-2.8t"


#: Per-token time shares grouped as the findings name them: the kernels' fixed costs
#: (boundaries and small-kernel floors) read as one part.
_SHARE_GROUPS = (("weights read", ("weights read",)), ("KV read", ("KV read",)),
                 ("compute", ("compute",)),
                 ("kernel boundaries and floors", ("launch/graph", "kernel floors")),
                 ("communication", ("communication",)), ("draft", ("draft",)),
                 ("prefill", ("prefill",)))


def _parts(shares):
    """``[(part, seconds)]`` of a point's per-token shares (:func:`analysis.speed_limits`),
    grouped by :data:`_SHARE_GROUPS`, largest first, parts the total cannot see left out
    (:func:`shown_parts`: zero, or a float residue)."""
    out = [(name, sum(shares.get(k, 0.0) for k in keys)) for name, keys in _SHARE_GROUPS]
    return sorted(shown_parts(out), key=lambda x: -x[1])


def _limiter(shares):
    """What limits a point, named as the findings group its parts (:data:`_SHARE_GROUPS`):
    the largest grouped part. ``analysis.speed_limits`` counts graph gaps and kernel floors
    apart, so its limiter could name a smaller part than the 'kernel boundaries and floors'
    the text lists first beside it.

    >>> _limiter({"weights read": 3.0, "launch/graph": 2.0, "kernel floors": 2.5})
    'kernel boundaries and floors'
    """
    parts = _parts(shares)
    return parts[0][0] if parts else ""


def _parts_text(shares):
    return ", ".join(f"{n} {computed_time(v)}" for n, v in _parts(shares))


def _drafts(model):
    """What the report's speculative settings give ``model``, in words."""
    from ._models import model_config
    from ._serving import MTP_ACCEPTANCE

    m = model_config(model)
    if m.mtp_modules:
        return f"plain decoding or 3 drafted tokens at acceptance {MTP_ACCEPTANCE.value:g}"
    return (f"plain decoding only ({m.name} has no multi-token-prediction module to draft "
            f"with, and the report prices no separate draft model)")


def _spec():
    from ._serving import MTP_ACCEPTANCE

    return ((0, 0.0), (3, MTP_ACCEPTANCE.value))


def _frontier_point(system):
    """One system's frontier, single-user speed and cost; or why it cannot run."""
    from fabric import FabricError

    from ._report_decode import report_decode_settings
    from ._serving import SingleUserSpeed, serving_cost, serving_frontier, speed_limits

    f = report_fabric(system)
    try:
        fr = serving_frontier(SERVING_MODEL, f, isl=SERVING_ISL, osl=SERVING_OSL,
                              n_batches=SERVING_BATCHES, speculative=_spec(),
                              **report_decode_settings(f))
        # The frontier's first point is the fastest per user of all (batch 1): the
        # single-user speed over the same layouts and speculative settings.
        best = fr.points[0]
        limiter, shares = speed_limits(best)
        su = SingleUserSpeed(tokens_per_s=best.tokens_per_s_user, tpot=best.tpot, point=best,
                             limiter=limiter, shares=shares)
    except (FabricError, ValueError) as e:
        return {"system": system, "reason": str(e)}
    try:
        usd, kw, params, how = serving_cost(f)
    except (FabricError, ValueError) as e:
        usd = kw = None
        params, how = (), f"no cost: {e}"
    return {"system": system, "reason": None, "frontier": fr, "single": su, "usd": usd,
            "kw": kw, "cost_params": tuple(params), "cost_how": how}


def _seed_point(system, fusion):
    """The hypothetical 2.8T model for one user on the seed system, at one kernel fusion
    factor: the best point without and with 3 drafted tokens."""
    from fabric import FabricError

    from ._report_decode import report_decode_settings
    from ._serving import serving_frontier, speed_limits

    f = report_fabric(system)
    try:
        fr = serving_frontier(SEED_MODEL, f, isl=SERVING_ISL, osl=SERVING_OSL,
                              batches=(1,), speculative=_spec(), keep_all=True,
                              fusion_factor=fusion, **report_decode_settings(f))
    except (FabricError, ValueError) as e:
        return [{"case": f"fusion {fusion:g}", "system": system, "reason": str(e)}]
    out = []
    for k in sorted({p.draft_length for p in fr.all_points}):
        best = max((p for p in fr.all_points if p.draft_length == k),
                   key=lambda p: p.tokens_per_s_user)
        case = ("the report's decode settings" if fusion == 1 else
                f"kernel fusion {fusion:g}x (the seed's claim)")
        if k:
            case += f", {k} drafted tokens at acceptance {best.acceptance:g}"
        out.append({"case": case, "system": system, "reason": None, "tpot_s": best.tpot,
                    "tokens_per_s_user": best.tokens_per_s_user, "layout": best.layout,
                    "draft_length": k, "limiter": _limiter(speed_limits(best)[1]),
                    "shares": speed_limits(best)[1]})
    return out


def _at(fr, x):
    p = fr.at_interactivity(x)
    return None if p is None else p.tokens_per_s_gpu


def _row(r):
    from ._serving import cost_per_million_tokens, tokens_per_s_per_mw

    fr, su = r["frontier"], r["single"]
    row = {"system": r["system"], "model": fr.model, "single_user_tokens_per_s": su.tokens_per_s,
           "single_user_layout": (f"{su.point.layout}, "
                                  + (f"{su.point.draft_length} drafted"
                                     if su.point.draft_length else "plain")),
           "single_user_limiter": _limiter(su.shares), "single_user_shares": su.shares,
           "usd_per_gpu_hour": r["usd"],
           "cost_basis": r["cost_how"], "chip": _chip_name(r["system"])}
    for x in MATCHED_INTERACTIVITY:
        y = _at(fr, x)
        key = f"{x:g}"
        row[f"tokens_per_s_gpu_at_{key}"] = y
        row[f"usd_per_mtok_at_{key}"] = (cost_per_million_tokens(y, r["usd"])
                                        if y and r["usd"] else None)
        row[f"tokens_per_s_per_mw_at_{key}"] = (tokens_per_s_per_mw(y, r["kw"])
                                               if y and r["kw"] else None)
    return row


def _chip_name(system):
    """The name of the chip ``system`` is built with (``h100`` for ``nvl72:chip=h100``)."""
    chip = report_fabric(system).chip
    return str(getattr(chip, "name", chip))


def _fmt_opt(digits):
    """``digits`` significant digits with their trailing zeros (0.180 beside 0.283, 14.0
    beside 14.7: one precision down a column), whole numbers written out (2,690 rather
    than 2.69e+03)."""
    f = fmt_float(digits)

    def fmt(v):
        if v is None:
            return "-"
        return f"{float(v):,.0f}" if is_float(v) and abs(v) >= 10 ** digits else f(v)
    return fmt


def _draw_frontiers(results, seed_rows):
    from ._plots import dodge_markers, plain_log_labels

    fig = new_figure()
    ax = fig.subplots()
    markers = "osD^vP*X"
    for i, r in enumerate(results):
        pts = r["frontier"].points
        ax.plot([p.tokens_per_s_user for p in pts], [p.tokens_per_s_gpu for p in pts],
                marker=markers[i % len(markers)], markersize=3, linewidth=1.1,
                label=r["system"], drawstyle="default")
    ax.set_yscale("log")
    ax.set_xlabel("tokens/s per user")
    ax.set_ylabel("tokens/s per GPU (input + output)")
    seed_x = 1.0 / SEED_MS_PER_TOKEN
    ax.axvline(seed_x, color="0.35", linestyle=":", linewidth=0.8)
    ax.axvline(SPEED_RACE_TOKENS_PER_S, color="0.35", linestyle="--", linewidth=0.8)
    lo = ax.get_ylim()[0]
    # Labels at the bottom of the lines, where the frontiers (fast users, few tokens/s per
    # GPU) are sparse; a white box keeps them legible over a curve.
    box = {"facecolor": "white", "edgecolor": "none", "pad": 0.5}
    ax.text(seed_x, lo, f"seed: {SEED_TPOT_TEXT}/token ", rotation=90,
            va="bottom", ha="right", fontsize="x-small", color="0.3", bbox=box)
    ax.text(SPEED_RACE_TOKENS_PER_S, lo, f"{SPEED_RACE_TOKENS_PER_S:g} tokens/s ",
            rotation=90, va="bottom", ha="right", fontsize="x-small", color="0.3", bbox=box)
    # A log x axis: the reference lines (5.85ms/token, 490 tokens/s) sit several times
    # beyond the frontiers, and a linear axis squeezed every curve into its first fifth.
    ax.set_xscale("log")
    xs = [p.tokens_per_s_user for r in results for p in r["frontier"].points]
    ax.set_xlim(min(xs) / 1.3, max(max(xs), SPEED_RACE_TOKENS_PER_S) * 1.3)
    plain_log_labels(ax.xaxis)
    plain_log_labels(ax.yaxis)
    ax.legend(fontsize="x-small", loc="lower left")
    # read on its own, the figure says its model, request and runtime (the caption's short
    # form), as the report's other figures do
    fig.suptitle(f"{SERVING_MODEL}, {SERVING_ISL}/{SERVING_OSL} tokens per request, "
                 f"{_drafts_short(SERVING_MODEL)}; collectives: {runtime_label()}",
                 fontsize="small")
    dodge_markers(fig)      # near-equal frontiers (cluster-128, tpu-v4-cube) hid points
    return fig


def _drafts_short(model):
    """'plain decoding' or 'plain or 3 drafted tokens': :func:`_drafts` for a title."""
    from ._models import model_config

    return ("plain or 3 drafted tokens" if model_config(model).mtp_modules
            else "plain decoding")


def serving_section(fabrics, executor, quiet):
    """The serving section and its finding sentences."""
    from ._decode import DECODE_HBM_EFFICIENCY, GEMM_FIXED_TIME, GRAPH_KERNEL_OVERHEAD
    from ._report_decode import hbm_rates_phrase, param_phrase
    from ._serving import DEFINITIONS, USABLE_HBM_FRACTION
    from ._sweep import sweep

    systems = list(fabrics)
    results = sweep(_frontier_point, [{"system": s} for s in systems], executor=executor,
                    quiet=quiet, desc="serving")
    ok = [r for r in results if r["reason"] is None]
    skipped = [f"{r['system']}: {r['reason']}" for r in results if r["reason"] is not None]
    if not ok:
        return None, [f"Serving: {SERVING_MODEL} fits no system ({'; '.join(skipped)})."]
    seed_system = systems[0]
    seed = [row for rows in sweep(_seed_point, [{"system": seed_system, "fusion": x}
                                                 for x in SEED_FUSION],
                                  executor=executor, quiet=True, desc="seed")
            for row in rows]
    rows = [_row(r) for r in ok]
    points = [{"system": r["system"], "layout": p.layout, "chips": p.chips, "batch": p.batch,
               "draft_length": p.draft_length, "tokens_per_s_user": p.tokens_per_s_user,
               "tokens_per_s_gpu": p.tokens_per_s_gpu,
               "output_tokens_per_s_gpu": p.output_tokens_per_s_gpu, "tpot_s": p.tpot,
               "prefill_s": p.prefill_time, "hbm_per_chip_bytes": p.hbm_per_chip,
               **{f"{k}_s_per_token": v for k, v in p.breakdown.items()}}
              for r in ok for p in r["frontier"].points]
    fr0 = ok[0]["frontier"]
    text = (
        (f"The throughput-interactivity frontier of {SERVING_MODEL} (FP8 weights as shipped) "
        f"with {SERVING_ISL} input and {SERVING_OSL} output tokens per request, served "
        "aggregated (continuous batching, each prompt's prefill interleaved on the decode "
        "GPUs). Every point is a layout found by search (instance size, attention tensor / "
        "data parallelism, experts over the instance), a concurrency up to what the KV cache "
        f"at {SERVING_ISL + SERVING_OSL} tokens leaves room for in "
        f"{USABLE_HBM_FRACTION.value:.0%} of HBM, and {_drafts(SERVING_MODEL)}; the "
        "frontier keeps the points no other beats on both axes."),
        (f"Tokens/s per GPU: {DEFINITIONS[fr0.definition]}. Prefill GEMMs run at the "
        "compute efficiencies the decode steps' GEMMs take (published ones: DeepGEMM's FP8 "
        "tables on Hopper, contiguous-layout grouped GEMMs for the routed experts; the "
        "roofline where none is published, an optimistic bound); the decode steps "
        "are the decode model's with the MoE decode section's settings (CUDA-graph replay "
        f"at {param_phrase(GRAPH_KERNEL_OVERHEAD)} per kernel boundary, small kernels at "
        "their published minimum durations, weight GEMMs with a fixed "
        f"{param_phrase(GEMM_FIXED_TIME)}, HBM read at "
        f"{hbm_rates_phrase(param_phrase(DECODE_HBM_EFFICIENCY, percent=True))}; see "
        "Assumptions), "
        f"its exchange kernel per system, the collectives through {runtime_phrase()}; no "
        "kernel fusion, no overlap. A prompt rides on a decode step of the same forward pass "
        "(in-flight batching) and shares its weight read (analysis.shared_weight_read); that "
        "step, like a prompt pass of its own, runs without a CUDA graph (TensorRT-LLM's "
        "default for mixed iterations): its kernel launches are priced as an asynchronous "
        "host pipeline (analysis.eager_pass_seconds), hidden behind the pass's long kernels "
        "but for the first."),
        ("Cost: $ per million tokens = $ per GPU-hour / (tokens/s per GPU x 3600 / 1e6), "
        "from SemiAnalysis' TCO table (own, hyperscaler tier) where the GPU has a price; "
        "otherwise the cost book's node price per chip plus the network's bill of materials, "
        "over 4 years, plus power. A GPU in the table costs its $ per GPU-hour whatever the "
        "fabric (the table's own cluster network included), so between systems of one GPU "
        "the cost per token differs by throughput alone; a fabric's own cost enters only "
        "through the bill of materials of a GPU without a price. Tokens/s per MW use the "
        "table's all-in power or the bill of materials' IT power."))
    if skipped:
        text += ("Not run: " + "; ".join(skipped) + ".",)
    cols = [Column("system", "system"),
            Column("single_user_tokens_per_s", "1 user tok/s", _fmt_opt(3)),
            Column("single_user_layout", "at"),
            Column("single_user_limiter", "limited by"),
            Column("usd_per_gpu_hour", "$/GPU-h", lambda v: "-" if v is None else f"{v:.2f}")]
    for x in MATCHED_INTERACTIVITY:
        k = f"{x:g}"
        cols += [Column(f"tokens_per_s_gpu_at_{k}", f"tok/s/GPU @{k}", _fmt_opt(3)),
                 Column(f"usd_per_mtok_at_{k}", f"$/Mtok @{k}", _fmt_opt(3))]
    table = Table("serving", "Serving: single-user speed, throughput and cost at matched "
                  "interactivity", tuple(cols), tuple(rows),
                  f"{SERVING_MODEL}, {SERVING_ISL}/{SERVING_OSL} tokens per request, "
                  f"{_drafts(SERVING_MODEL).split(' (')[0]}; collectives under the "
                  f"{runtime_phrase()}. "
                  "Limited by: the largest part of the single user's time per token "
                  "(kernel boundaries and floors counted as one part, as in the findings). "
                  "@N: the frontier's best point at N or more tokens/s per user; tok/s/GPU "
                  "counts input + output tokens; $/Mtok = $/GPU-h / (tok/s/GPU x 3600 / "
                  "1e6). Cost basis per system and tokens/s per MW in serving.csv.")
    data = Table("serving_frontier", "", (Column("system", "system"),), (),
                 "Every frontier point with its layout, batch and per-token time breakdown",
                 csv_rows=tuple(points))
    seed_rows = [s for s in seed if s["reason"] is None]
    seed_table = Table(
        "serving_seed", f"The seed's {SEED_TPOT_TEXT} per token read on "
        f"{seed_system}", (Column("case", "assumption"),
                           Column("tpot_s", "per token", computed_time),
                           Column("tokens_per_s_user", "tok/s per user", _fmt_opt(3)),
                           Column("layout", "layout"), Column("limiter", "limited by")),
        tuple(seed_rows),
        f"{SEED_MODEL} (a config of the seed's 2.8T scale, not its model) for one user, "
        f"{SERVING_ISL}/{SERVING_OSL} tokens, best layout; collectives under the "
        f"{runtime_phrase()}. Limited by: the largest part of the time per token (kernel "
        "boundaries and floors counted as one part).")
    fig = FigureSpec(
        "serving-frontier", "Serving frontier",
        f"Tokens/s per GPU (input + output) against tokens/s per user (both axes log scale) for "
        f"{SERVING_MODEL}, {SERVING_ISL}/{SERVING_OSL} tokens, on each system. Dotted: the "
        f"seed's {SEED_TPOT_TEXT} per token (about {1 / SEED_MS_PER_TOKEN:.0f} "
        f"tokens/s); dashed: {SPEED_RACE_TOKENS_PER_S:g} tokens/s for one user "
        f"({SPEED_RACE_ORIGIN}). Collectives: "
        f"{runtime_phrase()}. Markers that would hide one another are set side by side by a "
        "few points; the lines pass through the true values, which serving_frontier.csv "
        "gives.",
        functools.partial(_draw_frontiers, ok, seed_rows), column="double", height=3.0)
    used = [(r["system"], q) for r in ok for q in r["frontier"].parameters + r["cost_params"]]
    section = Section("serving", "Serving", text=text, tables=(table, seed_table, data),
                      figures=(fig,), parameters=tuple(used))
    return section, _serving_findings(rows, seed_rows, seed_system)


def _serving_assumes(rows, decoding=True):
    """' Assumes: ...' for a serving finding: the request, the decoding (unless the finding
    says it itself, ``decoding=False``), the chips, the decode model's software and the
    collectives' runtime its tokens/s rest on (a finding quoted alone must say them; the
    section text says them once for the tables)."""
    chips = dict.fromkeys(r.get("chip") for r in rows)
    chip_text = (f"{next(iter(chips))} chips everywhere" if len(chips) == 1 and None not in chips
                 else "each system's chip as named")
    how = (f", {_drafts(SERVING_MODEL)}, no kernel fusion" if decoding else "")
    return (f" Assumes: {SERVING_MODEL} with {SERVING_ISL}/{SERVING_OSL} tokens per request"
            f"{how}, no overlap of communication with "
            f"compute; {chip_text}; the decode model's settings (CUDA-graph replay, published "
            "kernel floors and HBM streaming rates, each system's MoE exchange kernel) with "
            f"the collectives under the {runtime_phrase()}; and the link bandwidths and "
            "latencies.")


def _cost_basis(priced, k):
    """What a $/Mtok comparison rests on: one price per GPU-hour for every system (then the
    order is that of throughput alone, not of the fabrics' cost), else each system's."""
    prices = {r["usd_per_gpu_hour"] for r in priced}
    if len(prices) == 1 and len({r["cost_basis"] for r in priced}) == 1:
        return (f" Every system here is priced at ${prices.pop():.2f} per GPU-hour "
                f"(SemiAnalysis' {priced[0]['cost_basis']}), whatever its "
                f"fabric, so the order is that of tokens/s per GPU at {k} tokens/s per user, "
                "not of the fabrics' cost.")
    return (" Priced per GPU-hour: " + ", ".join(
        f"{r['system']} ${r['usd_per_gpu_hour']:.2f} ({r['cost_basis']})" for r in priced)
        + ".")


def _serving_findings(rows, seed_rows, seed_system):
    out = []
    assumes = _serving_assumes(rows)
    fastest = max(rows, key=lambda r: r["single_user_tokens_per_s"])
    out.append(
        f"One user gets at most {fastest['single_user_tokens_per_s']:.0f} tokens/s of "
        f"{SERVING_MODEL} on {fastest['system']} ({fastest['single_user_layout']}), limited "
        f"by {fastest['single_user_limiter']}; "
        + "; ".join(f"{r['system']} {r['single_user_tokens_per_s']:.0f} tokens/s" for r in rows
                    if r is not fastest) + "." + assumes)
    reach = [r["system"] for r in rows
             if r["single_user_tokens_per_s"] >= SPEED_RACE_TOKENS_PER_S]
    budget = 1 / SPEED_RACE_TOKENS_PER_S
    line = (f"{SPEED_RACE_TOKENS_PER_S:g} tokens/s for one user ({SPEED_RACE_ORIGIN}), "
            f"{computed_time(budget)} per token: "
            + (f"reached on {', '.join(reach)}." if reach else
               f"no system reaches it under these settings: {_drafts(SERVING_MODEL)}, "
               "no kernel fusion."))
    shares = fastest.get("single_user_shares")
    if not reach and shares:
        tpot = 1 / fastest["single_user_tokens_per_s"]
        read = shares.get("weights read", 0.0) + shares.get("KV read", 0.0)
        line += (f" On {fastest['system']} a token takes {computed_time(tpot)}: {_parts_text(shares)}; "
                 + (f"the weights and KV read alone exceed {computed_time(budget)}, so it needs more "
                    "than one token per step, speculative decoding, or faster HBM."
                    if read >= budget else
                    f"it needs the other {computed_time(tpot - read)} cut to {computed_time(budget - read)} "
                    "with "
                    "the weights and KV read as they are."))
    # (a sentence that says no system reaches it names its decoding and fusion itself)
    out.append(line + _serving_assumes(rows, decoding=bool(reach)))
    x = MATCHED_INTERACTIVITY[1]
    k = f"{x:g}"
    priced = [r for r in rows if r[f"usd_per_mtok_at_{k}"] is not None]
    if len(priced) >= 2:
        lo = min(priced, key=lambda r: r[f"usd_per_mtok_at_{k}"])
        out.append(
            f"At {k} tokens/s per user the cheapest is {lo['system']} at "
            f"${lo[f'usd_per_mtok_at_{k}']:.3g} per million tokens ("
            + ", ".join(f"{r['system']} ${r[f'usd_per_mtok_at_{k}']:.3g}" for r in priced
                        if r is not lo) + ")." + _cost_basis(priced, k) + assumes)
    if seed_rows:
        target = SEED_MS_PER_TOKEN
        meets = [r for r in seed_rows if r["tpot_s"] <= target]
        best = min(seed_rows, key=lambda r: r["tpot_s"])
        chip = report_fabric(seed_system).chip
        readings = "; ".join(
            f"{r['case']}: {computed_time(r['tpot_s'])}"
            + (f", of which {_parts_text(r['shares'])}" if r.get("shares") else "")
            for r in seed_rows)
        if meets:
            verdict = f"{SEED_TPOT_TEXT} is reached with {meets[0]['case']}."
        else:
            short = best["tpot_s"] - target
            comm = (best.get("shares") or {}).get("communication", 0.0)
            verdict = (f"{SEED_TPOT_TEXT} is not reached: it needs {computed_time(short)} less "
                       "than "
                       f"the best reading"
                       + (", e.g. that much of its communication hidden under compute, which "
                          "one user's step does not do here." if comm >= short else "."))
        out.append(
            f"The seed's {SEED_TPOT_TEXT} per token for a 2.8T MoE, read on {seed_system} "
            f"with the assumptions it needs: the hypothetical 2.8T config, not the seed's "
            f"model; {getattr(chip, 'name', chip)} chip figures, the seed naming no chip; one "
            f"user, {SERVING_ISL}/{SERVING_OSL} tokens; {_drafts(SEED_MODEL)}; no overlap of "
            f"communication with compute; collectives under the {runtime_phrase()}. Per "
            f"token: {readings}. {verdict}")
    return out
