"""The report's MoE decode section: step time and its parts, and its sensitivity.

One decode step per (model, system) under the report's decode conditions
(:data:`~analysis._report_parts.DECODE_BATCH`, ``DECODE_CONTEXT``), run through
:func:`analysis.sweep`; the one-at-a-time sensitivity of the first model on the first
system.

Software, said in the table and the text: the step is replayed as a CUDA graph (as
every serving framework runs decode), the tensor-parallel collectives go through
``analysis.cost``'s default runtime (asked explicitly: :func:`report_decode_settings`), and
dispatch/combine through a named MoE exchange kernel (:func:`_exchange_kernel`): DeepEP's low-latency kernels where the expert ranks
span servers joined by NICs (what DeepSeek serves decode with), one-sided
symmetric-memory kernels inside one load/store domain (TensorRT-LLM's NVLinkOneSided
class; what Co-Fabric's symmetric memory offers).
"""

import dataclasses
import functools

from fabric import format_size, format_time

from . import _plots
from ._report_findings import decode_findings, sensitivity_finding
from ._report_parts import (
    DECODE_BATCH,
    DECODE_CONTEXT,
    DECODE_MODELS,
    SEED_FUSION,
    SEED_MS_PER_TOKEN,
    SEED_TPOT_TEXT,
    Column,
    FigureSpec,
    Section,
    Table,
    computed_time,
    default_runtime,
    fmt_float,
    loadstore_everywhere,
    new_figure,
    report_fabric,
    runtime_label,
    runtime_phrase,
)

__all__ = []


_DECODE_PARTS = ("attention", "ffn", "head", "exposed_comm", "launch")

_DECODE_LABELS = {"attention": "attention", "ffn": "FFN / experts", "head": "output head",
                  "exposed_comm": "exposed communication",
                  "launch": "kernel gaps (graph replay)"}


def _exchange_kernel(f):
    """The MoE exchange kernel the report uses on ``f`` (see the module docstring)."""
    return "deepep-low-latency" if not loadstore_everywhere(f) else "one-sided"


def param_phrase(param, percent=False):
    """``value [source]`` of a :class:`~fabric.Parameter` for report prose: the value in its
    unit (seconds as the format helpers write them, a fraction as a percentage) and the source up to its first colon,
    so the sentence follows the Parameter and cannot go stale.

    >>> from fabric import Parameter
    >>> param_phrase(Parameter("x", 1.3e-6, "s", "A blog (2025): more detail"))
    '1.3us [A blog (2025)]'
    >>> param_phrase(Parameter("y", 0.78, "", "B post: detail"), percent=True)
    '78% [B post]'
    """
    if percent:
        value = f"{param.value:.0%}"
    elif param.unit == "s":
        value = format_time(param.value)     # sourced: its own digits
    else:
        value = f"{param.value:g} {param.unit}".strip()
    return f"{value} [{param.source.split(':')[0].strip()}]"


def hbm_rates_phrase(default):
    """'78% of peak, except where a kernel's own streaming rate is published (...)': how the
    decode model reads HBM, from its Parameters (the default's text given, e.g. with its
    source), so report prose follows the model when a published rate is added.

    >>> hbm_rates_phrase("78%").startswith("78% of peak, except where a kernel's own")
    True
    """
    from ._decode import MLA_DECODE_EFFICIENCY
    from ._gemm import DECODE_GEMM_HBM_EFFICIENCY

    rates = [f"{fmt.upper()} dense GEMMs on {gen.capitalize()} {p.value:.0%}"
             for (gen, fmt), p in sorted(DECODE_GEMM_HBM_EFFICIENCY.items())]
    rates += [f"MLA attention on {gen.capitalize()} (FlashMLA) {ps[0].value:.0%}"
              for gen, ps in sorted(MLA_DECODE_EFFICIENCY.items())]
    return (f"{default} of peak, except where a kernel's own streaming rate is published "
            f"({', '.join(rates)})")


def report_decode_settings(f):
    """The ``decode_step`` settings every report section uses on ``f`` (one place): the
    exchange kernel of :func:`_exchange_kernel`, CUDA-graph replay, and the collectives'
    runtime the report's text names, ``analysis.cost``'s default asked explicitly: an
    engine's own default (TensorRT-LLM's measured all-reduce on B200 and H200,
    :func:`analysis.engine_collective`) would price some systems' collectives under another
    runtime than the one every caption states.

    >>> import topologies
    >>> report_decode_settings(topologies.build("dgx-h100"))["runtime"]
    'nccl'
    """
    return {"ep_kernel": _exchange_kernel(f), "cuda_graphs": True,
            "runtime": default_runtime()}


def _decode_point(system, model):
    """One decode step; its breakdown rows and parameters, or why it cannot run."""
    from fabric import FabricError

    from ._decode import decode_step
    from ._models import model_config

    f = report_fabric(system)
    try:
        step = decode_step(model_config(model), f, batch=DECODE_BATCH,
                           context=DECODE_CONTEXT, **report_decode_settings(f))
    except (FabricError, ValueError) as e:
        return {"row": None, "reason": str(e), "parameters": ()}
    b = step.breakdown
    row = {"system": system, "model": model, "layout": str(step.layout),
           "ep_kernel": step.ep_kernel, "runtime": step.runtime or "default",
           "batch": DECODE_BATCH, "context": DECODE_CONTEXT, "time_s": step.time,
           "tokens_per_s_user": step.tokens_per_s_user,
           "hbm_per_chip_bytes": step.hbm_per_chip,
           **{f"{k}_s": getattr(b, k) for k in _DECODE_PARTS}}
    return {"row": row, "reason": None, "parameters": tuple(step.parameters)}


def _exchange_title(rows):
    """Which MoE exchange kernel the bars run, and on which systems when they differ.

    >>> _exchange_title([{"system": "a", "ep_kernel": "one-sided"},
    ...                  {"system": "b", "ep_kernel": "deepep-low-latency"},
    ...                  {"system": "c", "ep_kernel": "one-sided"}])
    'MoE exchange: deepep-low-latency on b, one-sided on the others'
    """
    by = {}
    for r in rows:
        if r.get("ep_kernel"):
            systems = by.setdefault(r["ep_kernel"], [])
            if r["system"] not in systems:
                systems.append(r["system"])
    if len(by) == 1:
        return f"MoE exchange: {next(iter(by))}"
    # the kernel of the most systems last, as "the others"
    order = sorted(by, key=lambda k: (len(by[k]), k))
    return ("MoE exchange: " + ", ".join(f"{k} on {', '.join(by[k])}" for k in order[:-1])
            + f", {order[-1]} on the others")


def _draw_decode(rows):
    fig = new_figure()
    ax = fig.subplots()
    parts = [{"system": f"{r['model']} on {r['system']}", "component": _DECODE_LABELS[k],
              "time": r[f"{k}_s"]} for r in rows for k in _DECODE_PARTS]
    _plots.plot_stacked_bars(parts, ax=ax)
    ax.axvline(SEED_MS_PER_TOKEN * 1e3, color="0.3", linestyle=":", linewidth=0.8,
               label=f"seed: {SEED_TPOT_TEXT} per token")
    handles, labels = ax.get_legend_handles_labels()     # the parts, then the line
    ax.legend(handles[1:] + handles[:1], labels[1:] + labels[:1], fontsize="x-small", ncol=3,
              loc="lower center", bbox_to_anchor=(0.5, 1.01), borderaxespad=0.0,
              frameon=False)
    ax.set_xlabel("time per decode step (ms)")
    # read on its own, the figure says its conditions and runtime (the caption's short form)
    # (at tp=1 there is no tensor-parallel collective: the runtime then prices nothing)
    layouts = sorted({r["layout"].split(",")[0] for r in rows if r.get("layout")})
    at = f", default layout ({'/'.join(layouts)})" if layouts else ""
    comm = [_exchange_title(rows)] if any(r.get("ep_kernel") for r in rows) else []
    if layouts != ["tp=1"]:
        comm.append(f"collectives: {runtime_label()}")
    fig.suptitle(f"batch {DECODE_BATCH}, {DECODE_CONTEXT}-token context{at}, CUDA graphs"
                 + (f"\n{'; '.join(comm)}" if comm else ""), fontsize="small")
    return fig


def decode_section(fabrics, executor, quiet):
    from ._decode import (
        DECODE_HBM_EFFICIENCY,
        GEMM_FIXED_TIME,
        GRAPH_KERNEL_OVERHEAD,
        KERNEL_FLOORS,
    )
    from ._sweep import sweep

    points = [{"system": s, "model": m} for m in DECODE_MODELS for s in fabrics]
    results = sweep(_decode_point, points, executor=executor, quiet=quiet, desc="decode")
    rows = [r["row"] for r in results if r["row"] is not None]
    used = [(p["system"], q) for p, r in zip(points, results) for q in r["parameters"]]
    skipped = [f"{p['model']} on {p['system']}: {r['reason']}"
               for p, r in zip(points, results) if r["row"] is None]
    if not rows:
        return None, [f"Decode: no model runs on these systems ({'; '.join(skipped)})."]
    columns = (Column("model", "model"), Column("system", "system"),
               Column("layout", "layout"), Column("ep_kernel", "MoE exchange"),
               Column("time_s", "per token", computed_time),
               Column("tokens_per_s_user", "tokens/s per user", fmt_float(3)),
               *(Column(f"{k}_s", _DECODE_LABELS[k], computed_time) for k in _DECODE_PARTS),
               Column("hbm_per_chip_bytes", "HBM per chip",
                      lambda v: format_size(v, binary=False)))
    text = ((f"One decode step of each model at batch {DECODE_BATCH} with a "
            f"{DECODE_CONTEXT}-token context, with the decode model's default layout and "
            "parameters (no kernel fusion, no overlap of communication with compute); the "
            "parts add up to the step time. The dotted line is the seed article's "
            f"{SEED_TPOT_TEXT} per token."),
            ("Software: the step is replayed as a CUDA graph of the kernels per layer "
            "TensorRT-LLM publishes for DeepSeek-R1 decode, so each kernel pays the "
            f"graph-replay gap between dependent kernels, {param_phrase(GRAPH_KERNEL_OVERHEAD)}"
            ", not a host launch; a small kernel runs at least its class's published minimum "
            f"duration (RMSNorm {param_phrase(KERNEL_FLOORS['norm'])}) and a weight GEMM "
            f"a fixed {param_phrase(GEMM_FIXED_TIME)} beyond its streaming time; "
            "weights and KV cache stream from HBM at "
            f"{hbm_rates_phrase(param_phrase(DECODE_HBM_EFFICIENCY, percent=True))}; "
            f"tensor-parallel collectives (none at tp=1) under the {runtime_phrase()}; "
            "expert dispatch and combine through "
            "the MoE exchange kernel named in the table: DeepEP's low-latency kernels on "
            "systems whose expert ranks span NIC-joined servers, one-sided symmetric-memory "
            "kernels (TensorRT-LLM's NVLinkOneSided class) inside one load/store domain, each "
            "with its fixed synchronisation cost."))
    if skipped:
        text += ("Not run: " + "; ".join(skipped) + ".",)
    table = Table("decode", "Decode step time and its parts", columns, tuple(rows),
                  f"Batch {DECODE_BATCH}, {DECODE_CONTEXT}-token context, CUDA-graph replay; "
                  "the MoE exchange kernel of each row; tensor-parallel collectives (none at "
                  f"tp=1) under the {runtime_phrase()}. Seconds in decode.csv. The decode "
                  "model's parameters are listed under Assumptions.")
    fig = FigureSpec("decode", "Decode step breakdown",
                     "Time per decode step split into attention, FFN/experts, output head, "
                     "communication not hidden under compute, and the gaps between kernels "
                     "of the replayed CUDA graph, at each system's default layout (table). "
                     "Communication: the MoE exchange kernel named in the table, and "
                     f"tensor-parallel collectives (none at tp=1) under the {runtime_phrase()}.",
                     functools.partial(_draw_decode, rows), column="double",
                     height=1.0 + 0.3 * len(rows))
    figures, tables = [fig], [table]
    first = next(iter(fabrics))
    base_row = next((r for r in rows if r["system"] == first
                     and r["model"] == DECODE_MODELS[0]), None)
    if base_row is not None:
        base, sens, layout = _decode_sensitivity(first, DECODE_MODELS[0])
        scope = _sensitivity_scope({"layout": layout, "ep_kernel": base_row["ep_kernel"]})
        what_if = _rdma_what_if(report_fabric(first), first)
        where = (f"{layout}, the best layout of the tensor-parallel search as in the Equal "
                 f"chip section; the step table is at the default {base_row['layout']}"
                 if layout != base_row["layout"] else layout)
        tables.append(Table(
            "decode_sensitivity", f"Sensitivity of {DECODE_MODELS[0]} on {first} at {layout}",
            (Column("parameter", "parameter"), Column("low", "low"),
             Column("value_low", "step time", computed_time), Column("high", "high"),
             Column("value_high", "step time", computed_time)), tuple(sens),
            f"Batch {DECODE_BATCH}, {DECODE_CONTEXT}-token context. One parameter at a "
            f"time; every other at the base ({computed_time(base)} per step at {where}). "
            f"{scope}{what_if}{_transport_note(sens)}"
            "Tensor-parallel all-reduces, where the layout has them, run under the "
            f"{runtime_phrase()}: NCCL's own prediction (its per-step latencies, which the "
            "fabric's path latency and transport overhead bind only where a step would be "
            "faster than they allow, and its protocol bandwidth caps on the schedule's "
            "bandwidth over the fabric); the MoE exchange is priced from the fabric's paths. "
            "A fabric what-if moves the step only where one of these binds"
            + ((", so an unchanged step time says the modelled software hides that parameter "
                "at this step's message sizes"
                + (" (or, as above, that nothing at this layout uses it)" if scope else ""))
               if _any_unchanged(sens, base) else "")
            + ". Seconds in decode_sensitivity.csv."))
        figures.append(FigureSpec(
            "decode-sensitivity", f"Decode sensitivity: {DECODE_MODELS[0]} on {first}",
            f"Step time of {DECODE_MODELS[0]} on {first} (batch {DECODE_BATCH}, "
            f"{DECODE_CONTEXT}-token context) with one parameter at a low and a high "
            f"setting, the others at the base (vertical line), at {where}. "
            f"{scope}{what_if}{_transport_note(sens)}"
            f"Tensor-parallel collectives under the {runtime_phrase()}; the MoE exchange "
            f"through the {base_row['ep_kernel']} kernel.",
            functools.partial(_draw_tornado, sens, base,
                              f"{DECODE_MODELS[0]} on {first}, {layout}\nbatch "
                              f"{DECODE_BATCH}, {DECODE_CONTEXT}-token context, "
                              f"collectives: {runtime_label()}")))
    section = Section("decode", "MoE decode", text=text, tables=tuple(tables),
                      figures=tuple(figures), parameters=tuple(used))
    found = decode_findings(rows, list(fabrics))
    if len(tables) > 1:
        found.append(sensitivity_finding(sens, base) + (
            " RDMA reads faster only through a limitation of the NCCL model (the decode "
            "tornado's caption says which)." if _transport_note(sens) else "")
            + f" The kernel fusion factor {SEED_FUSION[1]:g} is the seed's "
            f"{SEED_FUSION[1]:g}x fewer kernels, read here on kimi-k2; its "
            f"{SEED_TPOT_TEXT} per token for a 2.8T MoE is read under Serving.")
    return section, found


def _sensitivity_scope(row):
    """What the fabric what-ifs of the decode tornado can move at ``row``'s layout: at tp=1
    there is no tensor-parallel collective, and an exchange kernel picks its own paths, so
    the transport setting reaches nothing (an unchanged step is not a measured insensitivity
    of the fabric's transport)."""
    tp = dict(p.split("=") for p in row["layout"].split(",")).get("tp", "1")
    if tp != "1" or row.get("ep_kernel") in (None, "all-to-allv"):
        return ""
    return (f"At tp=1 the step has no tensor-parallel collective: the fabric enters only "
            f"through the {row['ep_kernel']} MoE exchange, which picks its own paths, so the "
            "transport setting applies to nothing here. ")


def _any_unchanged(rows, base):
    """Whether some parameter of the tornado leaves the step as it is at both settings (at the
    precision shown): only then does the caption explain what an unchanged step means."""
    return any(computed_time(r["value_low"]) == computed_time(r["value_high"]) == computed_time(base)
               for r in rows)


def _rdma_what_if(f, name):
    """The tornado's RDMA setting on a fabric without NICs is a what-if: said so."""
    from fabric import sends_messages

    if sends_messages(f).any():
        return ""
    return (f"RDMA is a what-if on {name}, which has no NICs: the tensor-parallel "
            "all-reduces priced as RDMA messages over its links. ")


def _transport_note(rows):
    """A sentence when the RDMA what-if reads faster than load/store (a reader would take it
    for an error, and it is one of the model's): the NCCL model floors each step of a group
    inside one host by its load/store steps only, so the RDMA per-message costs drop out and
    only RDMA's lighter framing enters (reported to the runtime owner, session 10). Said
    only while the numbers show it."""
    r = next((r for r in rows if r["parameter"] == "transport"), None)
    if r is None or not r["value_high"] < r["value_low"]:
        return ""
    return ("RDMA reads faster than load/store here, a limitation of the NCCL model: for a "
            "group inside one host it floors each step by the load/store steps only, so the "
            "RDMA what-if's per-message costs (posting, NIC, completion) do not enter, only "
            "its lighter framing (larger packets, less header per byte). ")


def _decode_sensitivity(system, model):
    """Step time with one parameter at a low and a high setting, the others at the base.

    The same one-at-a-time sweep as ``benchmarks/bench_decode.py`` (fabric latency and
    link bandwidth x0.5 / x2, HBM bandwidth x0.5 / x2, fusion factor 1 / 10, transport
    load/store / RDMA), under the report's decode conditions, at the system's best layout
    (:func:`analysis.best_decode_layout`, the search of the Equal chip section's table): at
    the default tp=1 the step has no tensor-parallel collective, so the link bandwidth and
    the transport would reach nothing but the exchange kernel. The layout stays fixed over
    the settings (each bar moves one parameter, not the layout).

    Returns ``(base time, rows, layout)``; each row names the layout.
    """
    from ._decode import decode_step
    from ._fair import best_decode_layout, scale_links
    from ._models import model_config

    f = report_fabric(system)
    m = model_config(model)
    best, _ = best_decode_layout(m, f, batch=DECODE_BATCH, context=DECODE_CONTEXT,
                                 **report_decode_settings(f))
    layout = str(best.layout)

    def run(fab=f, **kw):
        return decode_step(m, fab, batch=DECODE_BATCH, context=DECODE_CONTEXT, layout=layout,
                           **report_decode_settings(f), **kw).time

    chip = f.chip
    half = dataclasses.replace(chip, hbm_bandwidth=chip.hbm_bandwidth / 2)
    double = dataclasses.replace(chip, hbm_bandwidth=chip.hbm_bandwidth * 2)
    cases = (("fabric latency", "x0.5", "x2", lambda: run(scale_links(f, latency=0.5)),
              lambda: run(scale_links(f, latency=2.0))),
             ("link bandwidth", "x0.5", "x2", lambda: run(scale_links(f, bandwidth=0.5)),
              lambda: run(scale_links(f, bandwidth=2.0))),
             ("HBM bandwidth", "x0.5", "x2", lambda: run(chip=half), lambda: run(chip=double)),
             ("kernel fusion factor", "1", f"{SEED_FUSION[1]:g}",
              lambda: run(fusion_factor=SEED_FUSION[0]),
              lambda: run(fusion_factor=SEED_FUSION[1])),
             ("transport", "load/store", "RDMA", lambda: run(transport="loadstore"),
              lambda: run(transport="rdma")))
    rows = [{"system": system, "model": model, "layout": layout, "parameter": p, "low": lo,
             "high": hi, "value_low": low(), "value_high": high()}
            for p, lo, hi, low, high in cases]
    return run(), rows, layout


def _draw_tornado(rows, base, title=None):
    fig = new_figure()
    ax = fig.subplots()
    _plots.plot_tornado(rows, base, ax=ax, xlabel="time per decode step")
    if title:   # a figure read on its own names the step it varies (system and layout)
        fig.suptitle(title, fontsize="small")
    return fig
