"""Report sections computed by a sweep of collectives: collectives, symmetric memory.

The points of each sweep run through :func:`analysis.sweep` (serially or on an
executor), so the functions run per point are module-level.
"""

import functools
import math

from fabric import SpecError, format_size, format_time
from fabric._units import name_list

from . import _plots
from ._report_findings import (
    NCCL_ABOVE_IDEAL,
    collective_findings,
    nccl_above_ideal,
    nccl_above_ideal_findings,
    runtime_findings,
    size_ranges,
    size_runs,
    symmetric_findings,
    symmetric_runtime_findings,
)
from ._report_parts import (
    SEED_SYMMETRIC_CLAIM,
    Column,
    FigureSpec,
    Section,
    Table,
    computed_time,
    loadstore_everywhere,
    new_figure,
    ratio_text,
    report_fabric,
    runtime_label,
    runtime_phrase,
)

__all__ = []


# -- sizes and operations ---------------------------------------------------------------

#: Collective operations the report sweeps by default (all-to-allv needs a traffic matrix).
DEFAULT_OPS = ("all-reduce", "all-gather", "reduce-scatter", "broadcast", "reduce",
               "all-to-all")

#: Sizes per rank (nccl-tests convention) swept by default: 1 KiB to 1 GiB, doubling.
DEFAULT_SIZES = tuple(2 ** k for k in range(10, 31))

#: Runtime of the per-algorithm sweep: fabrics compared on the model's schedules with no
#: software costs (not a bound: the lower bound is each result's own); the symmetric-memory section's runtimes table adds what the software costs on top.
SWEEP_RUNTIME = "ideal"

def check_ops(ops):
    from ._closed_form import normalize_op

    if isinstance(ops, str):
        ops = [ops]
    names = []
    for op in ops:
        name = normalize_op(op)
        if name == "all-to-allv":
            raise SpecError("op all-to-allv needs a traffic matrix; the report sweeps "
                             "sizes of the other operations")
        if name not in names:
            names.append(name)
    if not names:
        raise SpecError("ops: give at least one collective operation")
    return names


# -- collectives ------------------------------------------------------------------------

#: Algorithms that work by loads and stores into peers' symmetric memory.
SYMMETRIC_ALGORITHMS = ("one-shot", "two-shot")


def _is_message_passing(algorithm):
    """Whether ``algorithm`` passes messages: neither symmetric memory nor in-switch."""
    return algorithm not in SYMMETRIC_ALGORITHMS and algorithm != "in-switch"


def _collective_curve(system, op, algorithm, transport, sizes):
    """Cost ``op`` with one algorithm at every size; rows, or a reason it does not apply.

    Module-level so that a process pool or a Dask cluster can run it.
    """
    from ._collectives import cost_sizes
    from ._schedules import NotApplicableError

    f = report_fabric(system)
    try:
        # the per-algorithm sweep compares fabrics with no software costs (runtime "ideal");
        # the symmetric-memory section adds what the runtimes cost on top
        results = cost_sizes(f, op, list(sizes), algorithm=algorithm, transport=transport,
                             runtime=SWEEP_RUNTIME)
    except NotApplicableError as e:
        return {"rows": [], "reason": str(e)}
    rows = [{"system": system, "op": op, "algorithm": algorithm,
             "transport_asked": transport or "native", "transport": r.transport,
             "size_bytes": int(r.size), "time_s": r.time, "algbw_Bps": r.algbw,
             "busbw_Bps": r.busbw, "lower_bound_s": r.lower_bound,
             "gap_to_bound": r.time / r.lower_bound if r.lower_bound > 0 else 1.0}
            for r in results]
    return {"rows": rows, "reason": None}


def _collective_grid(fabrics, ops, sizes):
    from ._schedules import ALGORITHMS

    points = []
    for name, f in fabrics.items():
        for op in ops:
            for a in ALGORITHMS[op]:
                points.append({"system": name, "op": op, "algorithm": a, "transport": None,
                               "sizes": tuple(sizes)})
                # Message passing over RDMA on a load/store fabric: the other side of the
                # symmetric-memory comparison (a cluster's native choice already uses RDMA).
                if loadstore_everywhere(f) and _is_message_passing(a):
                    points.append({"system": name, "op": op, "algorithm": a,
                                   "transport": "rdma", "sizes": tuple(sizes)})
    return points


def _best(rows, key=("system", "op", "size_bytes")):
    best = {}
    for r in rows:
        k = tuple(r[x] for x in key)
        if k not in best or r["time_s"] < best[k]["time_s"]:
            best[k] = r
    return list(best.values())


def _plot_rows(rows):
    return [dict(r, size=r["size_bytes"], time=r["time_s"], busbw=r["busbw_Bps"]) for r in rows]


def _draw_collective(best, mine, op, system):
    fig = new_figure()
    axes = fig.subplots(2, 2)
    # a figure used outside the report says what its times include
    fig.suptitle(f"{op}, {runtime_label(SWEEP_RUNTIME)}", fontsize="medium")
    bound = [dict(r, size=r["size_bytes"], time=r["lower_bound_s"], what="lower bound")
             for r in best]
    best, mine = _plot_rows(best), _plot_rows(mine)
    for row, rows, group, what in ((0, best, ("system",), "best algorithm per system"),
                                   (1, mine, ("algorithm",), f"each algorithm, {system}")):
        _plots.plot_collective_sweep(rows, ax=axes[row, 0], metric="time", group=group)
        _plots.plot_collective_sweep(rows, ax=axes[row, 1], metric="busbw", group=group)
        if row == 0:
            drawn = len(axes[0, 0].lines)
            _plots.plot_collective_sweep(bound, ax=axes[0, 0], metric="time",
                                         group=("system", "what"))
            # One legend entry for the bounds (each in its system's colour): a label per
            # system made the legend long enough to sit on the curves.
            for line in axes[0, 0].lines[drawn:]:
                line.set_linestyle("--")
                line.set_marker("")
                line.set_label("_" + line.get_label())
            axes[0, 0].plot([], [], color="0.35", linestyle="--",
                            label="lower bound (dashed, in\nthe system's colour)")
        # Short titles that fit their panel; a legend on every panel.
        axes[row, 0].set_title(f"{op} time\n{what}")
        axes[row, 1].set_title(f"{op} bus bandwidth\n{what}")
        for ax in axes[row]:
            ax.legend(fontsize="xx-small", ncol=2 if row else 1)
        busbw, time = axes[row, 1], axes[row, 0]
        if row and busbw.get_yscale() == "log":
            # Every algorithm's bus bandwidth rises to the top right: the long legend gets
            # two empty decades above the curves instead of a place on them.
            lo, hi = busbw.get_ylim()
            busbw.set_ylim(lo, hi * 100)
            busbw.legend(fontsize="xx-small", ncol=3, loc="upper left", columnspacing=1.0,
                         handlelength=1.6)
        if row and time.get_yscale() == "log":
            # The times rise to the top right too (the slowest algorithm at 1 GiB): the
            # legend, in two columns, sat on those curves; three columns above them instead.
            lo, hi = time.get_ylim()
            time.set_ylim(lo, hi * 1000)
            time.legend(fontsize="xx-small", ncol=3, loc="upper left", columnspacing=1.0,
                        handlelength=1.6)
    return fig


def _merged_reasons(reasons):
    """The not-applicable rows merged where the system, algorithm and reason are the same
    (in-switch on a fabric without reducing switches is one row, not one per operation and
    transport), in order of first appearance."""
    merged = {}
    for r in reasons:
        m = merged.setdefault((r["system"], r["algorithm"], r["reason"]),
                              dict(r, op=[], transport_asked=[]))
        for key in ("op", "transport_asked"):
            if r[key] not in m[key]:
                m[key].append(r[key])
    return tuple(dict(m, op=", ".join(m["op"]), transport_asked=", ".join(m["transport_asked"]))
                 for m in merged.values())


def _pick_sizes(sizes, wanted=(2 ** 10, 2 ** 20, 2 ** 30)):
    """The swept sizes nearest (in log) to 1KiB, 1MiB, 1GiB, for the summary table."""
    out = []
    for w in wanted:
        s = min(sizes, key=lambda x: (abs(math.log2(x) - math.log2(w)), x))
        if s not in out:
            out.append(s)
    return out


def _picked_text(picked, wanted=(2 ** 10, 2 ** 20, 2 ** 30)):
    """'the swept sizes nearest 1KiB, 1MiB and 1GiB', naming the sizes shown where they
    are not those three (a sweep of 1KiB and 1MiB shows two; one of 3KiB-3GiB others).

    >>> _picked_text([2 ** 10, 2 ** 20])
    'the swept sizes nearest 1KiB, 1MiB and 1GiB (here 1KiB and 1MiB)'
    """
    text = "the swept sizes nearest 1KiB, 1MiB and 1GiB"
    if list(picked) == list(wanted):
        return text
    return f"{text} (here {name_list(map(format_size, picked), most=None)})"


def collectives_section(fabrics, ops, sizes, executor, quiet):
    from ._sweep import sweep

    points = _collective_grid(fabrics, ops, sizes)
    results = sweep(_collective_curve, points, executor=executor, quiet=quiet,
                    desc="collectives")
    rows, reasons = [], []
    for point, res in zip(points, results):
        rows.extend(res["rows"])
        if res["reason"] is not None:
            reasons.append({"system": point["system"], "op": point["op"],
                            "algorithm": point["algorithm"],
                            "transport_asked": point["transport"] or "native",
                            "reason": res["reason"]})
    native = [r for r in rows if r["transport_asked"] == "native"]
    # each system at its best: every algorithm over the system's native transport
    # (load/store inside a load/store domain, RDMA across NICs). The RDMA rows the grid
    # adds on fabrics without NICs are a what-if for the symmetric-memory comparison
    # only: such a fabric has no NIC to send messages through (fabric.sends_messages)
    best = _best(native)
    first = next(iter(fabrics))
    figures = []
    for op in ops:
        figures.append(FigureSpec(
            f"collective-{op}", f"{op.capitalize()} against size",
            f"{op.capitalize()} time and bus bandwidth (nccl-tests convention) against the size per rank, "
            f"with no software costs ({runtime_phrase('ideal')}; the software-included "
            f"times are in the symmetric-memory section's "
            f"runtimes table). Top: each system's fastest applicable algorithm at each size, "
            f"with its lower bound dashed (time panel); bottom: every applicable algorithm "
            f"on {first} over the native transport (load/store inside a load/store domain, "
            "RDMA across NICs).",
            functools.partial(_draw_collective, [r for r in best if r["op"] == op],
                              [r for r in native if r["op"] == op and r["system"] == first],
                              op, first), column="double", height=4.8))
    shown = _pick_sizes(sizes)
    # Shown pivoted (one row per op and size, one column per system); the CSV stays tidy.
    cell = {(r["op"], r["size_bytes"], r["system"]): r for r in best}
    summary = []
    for op in ops:
        for size in shown:
            row = {"op": op, "size_bytes": size}
            for name in fabrics:
                r = cell.get((op, size, name))
                row[name] = "" if r is None else (
                    f"{computed_time(r['time_s'])} {r['algorithm']} ({r['transport']}; "
                    f"{r['gap_to_bound']:.2f}x bound)")
            summary.append(row)
    columns = (Column("op", "op"), Column("size_bytes", "size", format_size),
               *(Column(name, name) for name in fabrics))
    full_cols = tuple(Column(k, k) for k in (
        "system", "op", "algorithm", "transport_asked", "transport", "size_bytes", "time_s",
        "algbw_Bps", "busbw_Bps", "lower_bound_s", "gap_to_bound"))
    tables = [
        Table("collectives_best", "Fastest algorithm per system", columns, tuple(summary),
              f"No software costs ({runtime_phrase('ideal')}). "
              "Time, algorithm and transport of each system's fastest algorithm at "
              f"{_picked_text(shown)}, and its gap to the lower bound "
              "(time / the largest bound the model proves: injection, host cuts, and for "
              "all-to-all the max-concurrent-flow optimum; in-network reduction has its "
              "own). Considered: every algorithm of the operation that applies (the others "
              "in not_applicable, with the reason) over the native transport (the RDMA "
              "what-if on fabrics without NICs is only in collectives.csv and the "
              "symmetric-memory comparison). Every size "
              "(with bus bandwidth) in collectives_best.csv, every algorithm in "
              "collectives.csv.",
              csv_columns=("system", "op", "size_bytes", "algorithm", "transport", "time_s",
                           "algbw_Bps", "busbw_Bps", "lower_bound_s", "gap_to_bound"),
              csv_rows=tuple(sorted(best, key=lambda r: (r["system"], r["op"],
                                                         r["size_bytes"])))),
        Table("collectives", "", full_cols, (),
              "Every operation, algorithm, transport and size (times in s, bandwidths in B/s)",
              csv_rows=tuple(rows)),
        Table("not_applicable", "Algorithms that do not apply, and why",
              (Column("system", "system"), Column("algorithm", "algorithm"),
               Column("op", "operations"), Column("transport_asked", "transport"),
               Column("reason", "reason")),
              _merged_reasons(reasons),
              "One row per system, algorithm and reason, with the operations and transports "
              "it holds for; one row per case in not_applicable.csv.",
              csv_rows=tuple(reasons)),
    ]
    section = Section("collectives", "Collectives", tables=tuple(tables),
                      figures=tuple(figures), parameters=_collective_parameters(fabrics))
    # the featured collectives with the software, per system and size (one computation for
    # the collectives findings and the symmetric-memory section's runtimes table)
    # every swept size: the symmetric-memory figure draws the software-included ratio
    # against size; the tables and the NCCL finding quote the shown sizes
    featured = [op for op in ops if op in ("all-reduce", "all-to-all")] or [ops[0]]
    rt_rows = _runtime_rows(fabrics, featured, sizes)
    sym = _symmetric_section(fabrics, ops, rows, reasons, rt_rows)
    findings = (collective_findings(best, list(fabrics), ops)
                + runtime_findings([r for r in rt_rows if r["op"] == featured[0]
                                    and r["size_bytes"] in shown], list(fabrics))
                + nccl_above_ideal_findings(rt_rows))
    return section, findings, sym


def _collective_parameters(fabrics):
    """The collectives model's per-technology constants each system's links use, as
    Parameters (their sources are those :mod:`analysis._collectives` cites)."""
    from fabric import Parameter

    from ._collectives import IN_SWITCH_EFFICIENCY, PROTOCOL_LINK_BANDWIDTH

    src_bw = ("NCCL's bulk-protocol bandwidth per link: NVIDIA/nccl src/graph/topo.h "
              "(SM90_NVLINK_BW 20.6GB/s, SM100_NVLINK_BW 40.1GB/s)")
    src_eff = "NCCL's nvlsEfficiency: NVIDIA/nccl src/tuning/nvls.cc"
    out = []
    for name, f in fabrics.items():
        techs = sorted({t for _, _, t in f.graph.edges(data="tech") if t})
        for t in techs:
            if t in PROTOCOL_LINK_BANDWIDTH:
                out.append((name, Parameter(f"collectives.{t}.protocol_bandwidth",
                                            PROTOCOL_LINK_BANDWIDTH[t], "B/s", src_bw)))
            if t in IN_SWITCH_EFFICIENCY:
                out.append((name, Parameter(f"collectives.{t}.in_switch_efficiency",
                                            IN_SWITCH_EFFICIENCY[t], "", src_eff)))
    return tuple(out)


# -- symmetric memory -------------------------------------------------------------------


def _symmetric_rows(name, op, rows):
    """Per size: best symmetric-memory (load/store), best message passing over RDMA, and the
    same message-passing algorithms over load/store."""
    mine = [r for r in rows if r["system"] == name and r["op"] == op]
    sym = _best([r for r in mine if r["algorithm"] in SYMMETRIC_ALGORITHMS
                 and r["transport_asked"] == "native"], key=("size_bytes",))
    mp_rdma, mp_ls = (_best([r for r in mine if _is_message_passing(r["algorithm"])
                             and r["transport_asked"] == asked], key=("size_bytes",))
                      for asked in ("rdma", "native"))
    by = {k: {r["size_bytes"]: r for r in v} for k, v in
          (("sym", sym), ("rdma", mp_rdma), ("ls", mp_ls))}
    out = []
    for size in sorted(set(by["sym"]) & set(by["rdma"]) & set(by["ls"])):
        s, m, ls = by["sym"][size], by["rdma"][size], by["ls"][size]
        out.append({"system": name, "op": op, "size_bytes": size,
                    "symmetric_algorithm": s["algorithm"], "symmetric_time_s": s["time_s"],
                    "rdma_algorithm": m["algorithm"], "rdma_time_s": m["time_s"],
                    "loadstore_algorithm": ls["algorithm"], "loadstore_time_s": ls["time_s"],
                    "ratio": m["time_s"] / s["time_s"],
                    "ratio_same_transport": ls["time_s"] / s["time_s"]})
    return out


def _coincident(rows):
    """A caption's note on the operations whose ratio is 1 at every size on every system
    (symmetric memory and message passing run the same schedule): their lines lie on top
    of one another; the figure alternates their markers and labels them on the panel."""
    flat = [op for op in dict.fromkeys(r["op"] for r in rows)
            if len({r["system"] for r in rows if r["op"] == op}) > 1
            and all(abs(r["ratio_same_transport"] - 1) < 0.01 for r in rows if r["op"] == op)]
    if not flat:
        return ""
    return (f" The {' and '.join(flat)} ratio is within 1% of 1 at every size on every "
            "system (the same schedule either way): its lines lie on top of one another "
            "at 1, labelled on the panel, their markers alternating between the systems' "
            "colours.")


def _draw_symmetric(rows, rt_rows=()):
    """The symmetric-memory ratio against size: with no software costs (message passing over
    the same load/store fabric / symmetric-memory algorithms) and, given ``rt_rows``
    (``_runtime_rows``), with the software (NCCL / symmetric-memory kernels), each panel
    with the seed's 3.5x. The claim is about software, so the second panel is where it is
    read; the first shows what the algorithm and the fabric alone give."""
    rt = [r for r in rt_rows if r.get("ratio") is not None]
    fig = new_figure()
    axes = fig.subplots(1, 2 if rt else 1, sharey=bool(rt), squeeze=False)[0]
    data = [{"label": f"{r['system']} {r['op']}", "size": r["size_bytes"],
             "ratio": r["ratio_same_transport"]} for r in rows]
    ref = {"reference": SEED_SYMMETRIC_CLAIM,
           "reference_label": f"seed claim ({SEED_SYMMETRIC_CLAIM:g}x)"}
    _plots.plot_ratio(data, ax=axes[0], **ref,
                      ylabel="time ratio:\nmessage passing /\nsymmetric memory")
    axes[0].set_title(runtime_label(SWEEP_RUNTIME), fontsize="small")   # read on its own
    if not rt:
        return fig
    _plots.plot_ratio([{"label": f"{r['system']} {r['op']}", "size": r["size_bytes"],
                        "ratio": r["ratio"]} for r in rt], ax=axes[1], **ref,
                      ylabel="time ratio:\nNCCL / symmetric-\nmemory kernels")
    axes[1].set_title(f"with the software:\n{runtime_label('nccl')} / symmetric-memory "
                      "kernels", fontsize="small")
    axes[1].yaxis.set_tick_params(labelleft=True)   # shared limits, its own labels
    # the shared axis labelled for both panels' values (each call saw only its own)
    _plots._readable_log_ticks(axes[0], [d["ratio"] for d in data]
                               + [r["ratio"] for r in rt] + [SEED_SYMMETRIC_CLAIM])
    # one legend for both panels (the same systems and operations; a system whose group
    # is not one load/store domain has neither), below them where it hides no curve
    handles, labels = axes[0].get_legend_handles_labels()
    for ax in axes:
        ax.get_legend().remove()
    fig.legend(handles, labels, loc="outside lower center", ncol=2, fontsize="x-small",
               frameon=False)
    return fig


def _symmetric_section(fabrics, ops, rows, reasons, rt_rows=None):
    out = []
    for name in fabrics:
        for op in ops:
            out.extend(_symmetric_rows(name, op, rows))
    missing = []
    for name in fabrics:
        if not any(r["system"] == name for r in out):
            why = next((r["reason"] for r in reasons if r["system"] == name
                        and r["algorithm"] in SYMMETRIC_ALGORITHMS), None)
            missing.append(f"{name}: " + (why or "no symmetric-memory algorithm was costed"))
    if not out:
        return None, [(f"Symmetric memory versus message passing: not comparable on these "
                      f"systems ({'; '.join(missing)}).")]
    # Shown: the two collectives of MoE inference (tensor-parallel all-reduce, expert
    # all-to-all) where swept, else the first op; every op and size is in the CSV.
    featured = [op for op in ops if op in ("all-reduce", "all-to-all")] or [ops[0]]
    picked = _pick_sizes(sorted({r["size_bytes"] for r in out}))
    shown = [r for r in out if r["size_bytes"] in picked and r["op"] in featured]
    columns = (Column("system", "system"), Column("op", "op"),
               Column("size_bytes", "size", format_size),
               Column("symmetric_algorithm", "symmetric memory"),
               Column("symmetric_time_s", "time", computed_time),
               Column("loadstore_algorithm", "message passing, load/store"),
               Column("loadstore_time_s", "time", computed_time),
               Column("ratio_same_transport", "ratio", ratio_text),
               Column("rdma_algorithm", "what-if: over RDMA NICs"),
               Column("rdma_time_s", "time", computed_time),
               Column("ratio", "ratio", ratio_text))
    text = (("Symmetric memory: the one-shot and two-shot algorithms, in which each rank loads "
            "or stores its peers' buffers directly (load/store transport). Message passing: "
            "the fastest of the other applicable algorithms (all but one-shot, two-shot and "
            "in-switch) over the same fabric's load/store transport, the only one these "
            "systems offer (they have no NICs). The what-if columns run the message passing "
            "over RDMA NICs the systems do not have, to separate the transport's share of "
            "the gain from the algorithm's; the findings with no software costs use the load/store "
            "comparison."),)
    if missing:
        text += ("Not comparable on " + "; ".join(missing) + ".",)
    table = Table("symmetric_memory", "Symmetric memory against message passing", columns,
                  tuple(shown), "No software costs (runtime 'ideal'). At "
                  f"{_picked_text(picked)}; every size in "
                  f"symmetric_memory.csv. Ratio > 1: symmetric memory is faster. The RDMA "
                  f"columns are a what-if (no NIC on these systems). Shown: "
                  f"{' and '.join(featured)}; every operation in symmetric_memory.csv.",
                  csv_columns=tuple(out[0]), csv_rows=tuple(out))
    fig = FigureSpec("symmetric-memory", "Symmetric memory against message passing",
                     f"Left, {runtime_label('ideal')} (runtime 'ideal'): time of the best "
                     "message-passing algorithm over the same load/store fabric divided by "
                     "the time of the best symmetric-memory algorithm, per operation (the "
                     "algorithm and the fabric alone)."
                     + _coincident([r for r in out if r["op"] in featured])
                     + " Right, with the software: NCCL's time (runtime 'nccl', "
                     "its tuner's choice) divided by the symmetric-memory kernels' "
                     "(runtime 'symmetric-memory'), on the systems that are one load/store "
                     "domain; the seed's claim is a ratio of this kind. The dotted line in "
                     f"each is the seed article's {SEED_SYMMETRIC_CLAIM:g}x.",
                     functools.partial(_draw_symmetric,
                                       [r for r in out if r["op"] in featured],
                                       [r for r in (rt_rows or ()) if r["op"] in featured]),
                     column="double", height=3.2)
    if rt_rows is None:
        rt_rows = _runtime_rows(fabrics, featured, picked)
    every_size = [r for r in rt_rows if r["op"] in featured]
    rt_rows = [r for r in every_size if r["size_bytes"] in picked]
    tables = (table,)
    if rt_rows:
        tables += (Table(
            "runtimes", "The same collectives without and with the software: no software "
            "costs, NCCL, symmetric-memory kernels",
            (Column("system", "system"), Column("op", "op"),
             Column("size_bytes", "size", format_size),
             Column("ideal_time_s", runtime_label("ideal"), computed_time),
             Column("nccl", "nccl runs"), Column("nccl_time_s", "time", computed_time),
             Column("symmetric", "symmetric-memory runs"),
             Column("symmetric_time_s", "time", _fmt_time_or_dash),
             Column("ratio", "nccl / symmetric", _fmt_ratio_or_dash)),
            tuple(rt_rows),
            f"Every rank of the system. {runtime_label('ideal').capitalize()}: runtime 'ideal' "
            "(the fastest of the model's own schedules, path latency, transport overhead and "
            "link bandwidth only, not a lower bound: the collectives table's gaps are to the "
            "bound; the collectives "
            "tables and figures, the symmetric-memory table above and the left panel of the "
            "figure below use it). nccl: NCCL's tuner model "
            "(launch and per-step latencies, "
            "LL/LL128/Simple, channels; fabric/_runtime.py). symmetric-memory: one-sided "
            f"load/store kernels (a kernel floor of {_kernel_floors()}: a Lamport one-shot, or "
            "a bulk kernel "
            "with one more barrier, a release fence after its stores into peers and a first "
            "byte one peer round trip late for its loads); "
            "'-' where the group spans more than one load/store domain. The seed's 3.5x is a "
            "ratio of this kind, read here per size (every swept size in runtimes.csv and "
            "the figure's right panel)." + _below_ideal_text(every_size, fabrics)
            + _above_ideal_text(every_size),
            csv_rows=tuple(every_size)),)
        text += (("The second table and the figure's right panel add the software that runs "
                 "the collectives: NCCL as its own tuner models it and symmetric-memory kernels, "
                 "beside the model's schedules with no software costs (runtime 'ideal'); "
                 "the seed's 3.5x (symmetric memory against a collectives "
                 "library) is read there. At small sizes both runtimes are launch- and "
                 "synchronisation-bound, so the symmetric-memory gain over NCCL is a ratio of "
                 f"fixed costs{_fixed_costs_text(rt_rows)}, not of the fabric's latencies."),)
    section = Section("symmetric", "Symmetric memory versus message passing", text=text,
                      tables=tables, figures=(fig,))
    # the claim read with the software first; the ratios with no software costs after it
    return section, (symmetric_runtime_findings(every_size, list(fabrics), picked)
                     + symmetric_findings(out))


def _below_ideal_text(rows, fabrics):
    """' NCCL comes out below the model's schedules on ...': where NCCL's time (rows of
    ``_runtime_rows``, every swept size) is under runtime 'ideal''s, which a reader could
    take for a contradiction (the column was once called 'hardware floor'). 'ideal' is the
    fastest of the model's own schedules with no software cost; NCCL's pipelined trees (its double
    binary tree over the nodes, NVLS-tree overlapping the in-switch reduction with the
    network) are not among those schedules. Both stay above the proven lower bound."""
    low = [r for r in rows if r.get("nccl_time_s") is not None
           and r["nccl_time_s"] < r["ideal_time_s"]]
    if not low:
        return ""
    parts = []
    for system, op in dict.fromkeys((r["system"], r["op"]) for r in low):
        mine = [r for r in rows if r["system"] == system and r["op"] == op]
        sizes = [r["size_bytes"] for r in mine]
        flags = [r in low for r in mine]
        runs = sorted({r["nccl"] for r in low if r["system"] == system and r["op"] == op})
        parts.append(f"{system} {op} at {size_ranges(size_runs(flags, sizes))} "
                     f"({', '.join(runs)})")
    return (" NCCL comes out below the model's schedules with no software costs on "
            + "; ".join(parts) + ": its pipelined trees (the double binary tree over the "
            "nodes, NVLS-tree's in-switch reduction overlapped with the network, labelled "
            "hierarchical) are not among those schedules; both stay above the lower bound "
            "the collectives table's gaps use.")


def _above_ideal_text(rows):
    """' NCCL comes out more than 1.5x above them again at a larger size on ...': the sizes
    :func:`nccl_above_ideal` finds (every swept size), told in full in the collectives
    findings."""
    found = nccl_above_ideal(rows)
    if not found:
        return ""
    parts = [f"{above[0]['system']} {above[0]['op']} at "
             + ", ".join(format_size(r["size_bytes"]) for r in above)
             + f" ({', '.join(dict.fromkeys(r['nccl'] for r in above))})"
             for above, _ in found]
    return (f" NCCL comes out more than {NCCL_ABOVE_IDEAL:g}x above them again at a larger "
            "size on " + "; ".join(parts) + ", where its tuner runs an algorithm whose fixed "
            "part the bytes do not yet cover (the collectives findings give both times).")


def _fixed_costs_text(rows):
    """' (at 1KiB: 2.4-3us for the symmetric-memory kernels against 25-159us for NCCL)',
    from the runtimes table's smallest size (the figures were once written by hand)."""
    small = min(r["size_bytes"] for r in rows)
    both = [r for r in rows if r["size_bytes"] == small and r["symmetric_time_s"] is not None]
    if not both:
        return ""

    def span(key):
        lo, hi = min(r[key] for r in both), max(r[key] for r in both)
        return computed_time(lo) if computed_time(lo) == computed_time(hi) else \
            f"{computed_time(lo)}-{computed_time(hi)}"

    return (f" (at {format_size(small)}: {span('symmetric_time_s')} for the symmetric-memory "
            f"kernels against {span('nccl_time_s')} for NCCL)")


def _fmt_time_or_dash(v):
    return "-" if v is None else computed_time(v)


def _kernel_floors():
    """The symmetric-memory runtime's kernel floors over the GPU generations it knows, as
    '2.3us-3us' (read from its Parameters, so the caption follows them; sourced: their own
    digits)."""
    from fabric import runtime as get_runtime

    v = sorted(p.value for p in get_runtime("symmetric-memory").parameters()
               if p.name.startswith("symmetric-memory.kernel_floor."))
    return format_time(v[0]) if v[0] == v[-1] else f"{format_time(v[0])}-{format_time(v[-1])}"


def _fmt_ratio_or_dash(v):
    return "-" if v is None else ratio_text(v)


def _runtime_rows(fabrics, ops, sizes):
    """Per system, op and size: the times with no software costs, NCCL's and the
    symmetric-memory kernels'."""
    from ._collectives import cost_sizes
    from ._schedules import NotApplicableError

    rows = []
    for name in fabrics:
        f = report_fabric(name)
        for op in ops:
            try:
                ideal = cost_sizes(f, op, list(sizes), runtime="ideal")
                nccl = cost_sizes(f, op, list(sizes), runtime="nccl")
            except NotApplicableError:
                continue
            try:
                sym = cost_sizes(f, op, list(sizes), runtime="symmetric-memory")
            except NotApplicableError:
                sym = [None] * len(sizes)
            for a, b, c in zip(ideal, nccl, sym):
                rows.append({
                    "system": name, "op": op, "size_bytes": int(a.size),
                    "ranks": f.n_endpoints,
                    "ideal_time_s": a.time, "ideal_algorithm": a.algorithm,
                    "nccl": f"{b.algorithm}/{b.protocol}", "nccl_time_s": b.time,
                    "nccl_fixed_s": b.fixed,
                    "symmetric": c.algorithm if c is not None else "-",
                    "symmetric_time_s": c.time if c is not None else None,
                    "ratio": b.time / c.time if c is not None else None})
    return rows
