"""The report's fair-comparison sections: cost and power, equal cost and power, chips.

* ``cost``: each system's bill of materials (:func:`analysis.bill_of_materials`):
  parts counted one way on every system, network cost and power per chip and their
  share of the system; and how the cost finding moves with each price it rests on.
* ``fair``: every system brought to the baseline's (the second system's) network
  cost per chip, then to its network power per chip, by scaling link bandwidth
  (:func:`analysis.equalize`); bisection, all-to-all and a 1GiB all-reduce compared
  there; and decode at each system's best layout (:func:`analysis.best_decode_layout`).
* ``chips``: decode of each system with its own chip (the presets), labelled as a
  comparison of chips, not fabrics.
"""

import functools
import re

from fabric import format_bandwidth, format_time

from ._bom import bill_of_materials
from ._fair import best_decode_layout, equalize, scale_links
from ._report_parts import (
    DECODE_BATCH,
    DECODE_CONTEXT,
    DECODE_MODELS,
    NO_RUNTIME,
    Column,
    FigureSpec,
    Section,
    Table,
    computed_bandwidth,
    computed_time,
    default_runtime,
    new_figure,
    report_fabric,
    runtime_label,
    runtime_phrase,
    times_text,
)

__all__ = []

#: The cost book the report uses.
REPORT_BOOK = "street-2026"

#: Size per rank of the all-reduce compared at equal cost and power (bandwidth-bound).
FAIR_ALLREDUCE_BYTES = 2**30

#: Prices and powers the cost finding is most exposed to, varied x0.5 / x2 in its tornado.
_COST_KNOBS = ("switch_usd_per_gbps", "transceiver_usd_per_gbps", "dac_usd_per_gbps",
               "acc_usd_per_gbps", "optics_usd_per_cable", "nic_usd", "rack_chips")


def usd_text(v):
    """A dollar amount to the dollar: $1,234."""
    return f"${v:,.0f}"


def _watts(v):
    return f"{v:,.1f} W"


def _pct(v):
    return f"{100 * v:.1f}%"


# -- cost and power ---------------------------------------------------------------------


def _cost_rows(fabrics, book=REPORT_BOOK):
    rows = []
    for name, f in fabrics.items():
        b = bill_of_materials(f, book)
        rows.append({
            "system": name, "chips": b.chips, "board_traces": b.links["trace"],
            "cables_dac": b.links["dac"], "cables_acc": b.links["acc"],
            "cables_optics": b.links["optics"], "cables": b.cables,
            "transceivers": b.transceivers, "switch_asics": b.switch_asics,
            "switch_boxes": b.switch_boxes, "switch_ports": b.switch_ports, "nics": b.nics,
            **{f"cost_{k}_usd_per_chip": v / b.chips for k, v in b.cost_usd.items()},
            **{f"power_{k}_w_per_chip": v / b.chips for k, v in b.power_w.items()},
            "network_cost_usd_per_chip": b.cost_usd_per_chip,
            "network_power_w_per_chip": b.power_w_per_chip,
            "network_cost_share": b.cost_share, "network_power_share": b.power_share,
        })
    return rows


_PART_NAMES = {"cables": "cables", "transceivers": "transceivers", "switches": "switches",
               "nics": "NICs", "ports": "chip link ports"}


def _draw_cost(rows):
    from . import _plots

    fig = new_figure()
    axes = fig.subplots(1, 2)
    for k, (ax, (prefix, unit, scale, label)) in enumerate(zip(axes, (
            ("cost", "usd", 1e3, "network cost per chip (k$)"),
            ("power", "w", 1.0, "network power per chip (W)")))):
        items = [key[len(prefix) + 1:-len(unit) - 10] for key in rows[0]
                 if key.startswith(prefix + "_") and key.endswith(f"_{unit}_per_chip")]
        # the same part keeps its colour in both panels: every part in both, zeros included
        items = [i for i in _PART_NAMES if i in items or prefix == "cost" and i != "ports"]
        parts = [{"system": r["system"], "component": _PART_NAMES[item],
                  "value": r.get(f"{prefix}_{item}_{unit}_per_chip", 0.0)}
                 for r in rows for item in items]
        _plots.plot_stacked_bars(parts, ax=ax, value="value", scale=scale, unit_name="")
        ax.set_xlim(0, ax.get_xlim()[1] * 1.04)      # the longest bar does not touch the frame
        ax.set_xlabel(label)
        ax.get_legend().remove()
        if k:
            ax.set_yticklabels([])
    handles, labels = axes[1].get_legend_handles_labels()
    key = {name: part for part, name in _PART_NAMES.items()}
    drawn = {name for name in key if any(
        r.get(f"{p}_{key[name]}_{u}_per_chip", 0.0) for r in rows
        for p, u in (("cost", "usd"), ("power", "w")))}
    labels = [x if x in drawn else f"{x} (none here)" for x in labels]
    fig.legend(handles, labels, loc="outside lower center", ncol=len(labels),
               fontsize="x-small")
    return fig


def _cost_sensitivity(fabrics, book=REPORT_BOOK):
    """The cost ratio of the first two systems with each price at x0.5 and x2."""
    from fabric import hardware_costs, rack_chips

    names = list(fabrics)[:2]
    base_book = hardware_costs(book)

    def ratio(knob, factor):
        bk, rack = base_book, 1.0
        if knob == "rack_chips":          # each system's own density (fabric.rack_chips)
            rack = factor
        elif factor != 1.0:
            bk = base_book.replace(**{knob: base_book.value(knob) * factor})
        a, b = (bill_of_materials(fabrics[n], bk, rack_chips_factor=rack).cost_usd_per_chip
                for n in names)
        return b / a

    rows = []
    for knob in _COST_KNOBS:
        row = {"parameter": getattr(base_book, knob).name, "low": "x0.5", "high": "x2",
               "value_low": ratio(knob, 0.5), "value_high": ratio(knob, 2.0),
               "source": getattr(base_book, knob).source}
        if knob == "rack_chips":
            own = [(n, rack_chips(fabrics[n], base_book)) for n in names]
            row["source"] = "; ".join(f"{n}: {p.value:g} chips per rack, {p.source}"
                                      for n, p in own)
        rows.append(row)
    return ratio(None, 1.0), rows


def _draw_tornado(rows, base, xlabel, title=None):
    from . import _plots

    fig = new_figure()
    ax = fig.subplots()
    _plots.plot_tornado(rows, base, ax=ax, scale=1.0, unit_name="x", xlabel=xlabel)
    if title:   # what the ratio is, for a figure read on its own
        fig.suptitle(title, fontsize="small")
    return fig


def cost_section(fabrics):
    from fabric import hardware_costs

    rows = _cost_rows(fabrics)
    book = hardware_costs(REPORT_BOOK)
    columns = (
        Column("system", "system"), Column("cables", "cables"),
        Column("cables_optics", "of which optical"), Column("board_traces", "board traces"),
        Column("transceivers", "transceivers"), Column("switch_asics", "switch ASICs"),
        Column("switch_boxes", "switch boxes"), Column("nics", "NICs"),
        Column("network_cost_usd_per_chip", "network $ per chip", usd_text),
        Column("network_power_w_per_chip", "network W per chip", _watts),
        Column("network_cost_share", "cost share", _pct),
        Column("network_power_share", "power share", _pct),
    )
    caption = ("Counted the same way on every system: a link is one lane; a lane between two "
               "parts of one board is a board trace, any other is a cable of the cheapest "
               "medium that reaches (passive copper to 3 m, active copper to 5 m, optics "
               "beyond; 2 m inside a rack, 4 m + 0.6 m per rack between racks, each system's "
               "own chips per rack, see the assumptions); two transceivers per optical "
               "cable; a switch ASIC per 51.2 Tb/s of switch capacity; a switch box per "
               f"switch not on a board. Street prices of 2026 (book {REPORT_BOOK!r}). "
               "Shares: of the system per chip "
               f"({usd_text(book.value('node_usd_per_chip'))} per chip for the node; the chip's "
               f"power plus {book.value('host_w_per_chip'):g} W of host).")
    table = Table("cost", "Parts, network cost and power", columns, tuple(rows), caption)
    figs = [FigureSpec("cost-power", "Network cost and power per chip",
                       "Network cost and power per chip, split by part (street prices of "
                       "2026; powers at the parts' maximum).",
                       functools.partial(_draw_cost, rows), column="double", height=2.6)]
    tables = [table]
    found = _cost_findings(rows, book)
    if len(fabrics) > 1:
        base, sens = _cost_sensitivity(fabrics)
        a, b = list(fabrics)[:2]
        tables.append(Table(
            "cost_sensitivity", f"Sensitivity of the cost ratio {b} / {a}",
            (Column("parameter", "parameter"), Column("low", "low"),
             Column("value_low", "ratio", lambda v: f"{v:.2f}"), Column("high", "high"),
             Column("value_high", "ratio", lambda v: f"{v:.2f}")), tuple(sens),
            f"One price at a time at x0.5 and x2; the others at the base (ratio {base:.2f})."))
        figs.append(FigureSpec(
            "cost-sensitivity", f"Cost ratio {b} / {a}: sensitivity",
            "Network cost per chip of the second system over the first, with one unit "
            "price at half and at twice its value (base: vertical line).",
            functools.partial(_draw_tornado, sens, base, "network cost ratio")))
        lo = min(min(r["value_low"], r["value_high"]) for r in sens)
        hi = max(max(r["value_low"], r["value_high"]) for r in sens)
        worst = max(sens, key=lambda r: abs(r["value_high"] - r["value_low"]))
        found.append(f"The cost ratio {b} / {a} ({base:.1f}x) stays between {lo:.1f}x and "
                     f"{hi:.1f}x with any one price halved or doubled; it rests most on "
                     f"{worst['parameter']} ({_why(worst, fabrics, book)}).")
    section = Section("cost", "Cost and power", tables=tuple(tables), figures=tuple(figs),
                      parameters=tuple((n, p) for n, f in fabrics.items()
                                       for p in bill_of_materials(f, book).parameters))
    return section, found


def _why(row, fabrics, book):
    """What a cost tornado row rests on, as a clause: a price's source as an assumption; the
    rack density is each system's own (named with its source's title)."""
    from fabric import rack_chips

    if row["parameter"] != book.rack_chips.name:
        return _as_assumption(row["source"])
    own = ((n, rack_chips(fabrics[n], book)) for n in list(fabrics)[:2])
    return "each system's own rack density: " + "; ".join(
        f"{n} {p.value:g} chips per rack ({p.source.split(':')[0]})" for n, p in own)


def _cost_findings(rows, book):
    said = ", ".join(f"{r['system']} {usd_text(r['network_cost_usd_per_chip'])} and "
                     f"{r['network_power_w_per_chip']:.0f} W "
                     f"({_pct(r['network_cost_share'])} of the system's cost)" for r in rows)
    out = [(f"Network cost and power per chip: {said}. Assumes street prices of 2026 "
           f"(switch {usd_text(book.value('switch_usd_per_gbps') * 800)} per 800G port, "
           f"transceiver {usd_text(book.value('transceiver_usd_per_gbps') * 1600)} per 1.6T, "
           f"NIC {usd_text(book.value('nic_usd'))}) and each system's own rack density.")]
    a = rows[0]
    if len(rows) > 1:
        b = rows[1]
        out.append(f"Like for like: {a['system']} uses {a['cables']} cables "
                   f"({a['cables_optics']} optical), {a['switch_asics']} switch ASICs and "
                   f"{a['nics']} NICs; {b['system']} {b['cables']} cables "
                   f"({b['cables_optics']} optical), {b['switch_asics']} switch ASICs and "
                   f"{b['nics']} NICs (lanes on a board are traces, not cables).")
    return out


# -- equal cost, equal power, best decode layout ----------------------------------------


def _fair_point(system, basis, target):
    """One system at a target network cost or power per chip (or as built)."""
    import numpy as np

    from ._collectives import cost
    from ._metrics import metrics
    from ._traffic import link_loads

    f = report_fabric(system)
    try:
        s, g = (1.0, f) if basis == "as built" else equalize(f, target, basis, REPORT_BOOK)
    except ValueError as e:
        return {"system": system, "basis": basis, "skipped": str(e)}
    m = metrics(f)
    n = f.n_endpoints
    a2a = link_loads(f, np.ones((n, n)) - np.eye(n))
    ar = cost(g, "all-reduce", FAIR_ALLREDUCE_BYTES)
    b = bill_of_materials(g, REPORT_BOOK)
    return {"system": system, "basis": basis, "bandwidth_scale": s,
            "network_cost_usd_per_chip": b.cost_usd_per_chip,
            "network_power_w_per_chip": b.power_w_per_chip,
            # routed throughputs scale exactly with every link's bandwidth
            "bisection_per_chip_Bps": s * m.bisection_bandwidth / m.endpoints,
            "a2a_per_chip_Bps": s * (n - 1) / a2a.drain_time,
            "allreduce_1GiB_s": ar.time, "allreduce_algorithm": ar.algorithm}


def _decode_point(system, model):
    from fabric import FabricError

    from ._report_decode import report_decode_settings

    f = report_fabric(system)
    try:
        # the decode section's settings (exchange kernel, CUDA graphs and the one runtime
        # every comparison states, asked explicitly), so both agree
        step, tried = best_decode_layout(model, f, batch=DECODE_BATCH, context=DECODE_CONTEXT,
                                         **report_decode_settings(f))
    except (FabricError, ValueError) as e:
        return {"system": system, "model": model, "skipped": str(e)}
    default = dict(tried)[next(iter(dict(tried)))]   # tp=1, the decode model's default
    return {"system": system, "model": model, "chip": step_chip(system),
            "best_layout": str(step.layout), "time_s": step.time,
            "default_layout_time_s": default, "tokens_per_s_user": 1.0 / step.time}


def step_chip(system):
    f = report_fabric(system)
    return f.chip.name if f.chip is not None else ""


def _draw_fair(rows):
    from . import _plots

    fig = new_figure()
    axes = fig.subplots(1, 3)
    systems = list(dict.fromkeys(r["system"] for r in rows))
    bases = list(dict.fromkeys(r["basis"] for r in rows))

    colors = _plots.part_colors()
    hatches = ("", "//", "..")
    names = {"as built": "as built", "cost": "at equal network cost",
             "power": "at equal network power"}
    width = 0.8 / len(bases)
    have = {(r["system"], r["basis"]): r for r in rows}
    for ax, (key, label, scale) in zip(axes, (
            ("bisection_per_chip_Bps", "bisection per chip (GB/s)", 1e9),
            ("a2a_per_chip_Bps", "all-to-all per chip (GB/s)", 1e9),
            ("allreduce_1GiB_s", f"all-reduce 1 GiB (ms)\n{runtime_label()}", 1e-3))):
        for j, basis in enumerate(bases):
            vals = [have[(s, basis)][key] / scale if (s, basis) in have else 0.0
                    for s in systems]
            ax.bar([i + (j - (len(bases) - 1) / 2) * width for i in range(len(systems))], vals,
                   width=width, label=names.get(basis, basis), color=colors[j % len(colors)],
                   hatch=hatches[j % len(hatches)], edgecolor="white", linewidth=0.3)
        ax.set_xticks(range(len(systems)), [s.split(":")[0] for s in systems], rotation=30,
                      ha="right")
        ax.set_ylabel(label)
        ax.set_yscale("log")
        # A log axis has no zero: bars start at half the smallest value, so the shortest bar
        # has a visible height (starting just below it, a bar read as not computed).
        # ... and end at a labelled tick above the tallest bar
        shown = [r[key] / scale for r in rows if r[key] > 0]
        if shown:
            _plots.log_ticks_above(ax, shown, bottom=min(shown) / 2)
    handles, labels = axes[0].get_legend_handles_labels()
    # the tick labels drop ':chip=': a figure read on its own must still say the chip
    chips = sorted({step_chip(s) for s in systems})
    title = (f"every system with {chips[0]} chips (':chip=' where not its own)"
             if len(chips) == 1 and chips[0] else None)
    fig.legend(handles, labels, loc="outside lower center", ncol=len(labels),
               fontsize="x-small", title=title, title_fontsize="x-small")
    return fig


def _override_note(fabrics):
    """What a ``:chip=`` override changes and what it keeps (a reader would otherwise take
    nvl72:chip=h100 for a product): the chip's FLOP/s, HBM and reduce rate are swapped, the
    fabric's links stay as built, so the injection bandwidth per chip is the fabric's."""
    from ._metrics import metrics

    over = [n for n in fabrics if ":chip=" in n or ",chip=" in n]
    if not over:
        return ()
    inj = ", ".join(f"{n} {computed_bandwidth(metrics(fabrics[n]).injection_bandwidth)}"
                    for n in over)
    return ((f"A chip override (':chip=') swaps the chip (its FLOP/s, HBM and reduce rate) "
             f"and keeps the fabric's links as built, whatever I/O the chip itself has: "
             f"injection per chip {inj}. These are what-ifs of a fabric with that chip, not "
             "products."),)


def fair_section(fabrics, executor=None, quiet=False):
    from ._sweep import sweep

    names = list(fabrics)
    ref = names[1] if len(names) > 1 else names[0]
    rb = bill_of_materials(fabrics[ref], REPORT_BOOK)
    points = [{"system": s, "basis": "as built", "target": 0.0} for s in names]
    points += [{"system": s, "basis": basis, "target": target} for s in names
               for basis, target in (("cost", rb.cost_usd_per_chip),
                                     ("power", rb.power_w_per_chip))]
    rows = sweep(_fair_point, points, executor=executor, quiet=quiet, desc="equal cost")
    dpoints = [{"system": s, "model": DECODE_MODELS[0]} for s in names]
    drows = sweep(_decode_point, dpoints, executor=executor, quiet=quiet, desc="best layout")
    skipped = [f"{r['system']} ({r.get('basis', 'decode')}): {r['skipped']}"
               for r in rows + drows if "skipped" in r]
    rows = [r for r in rows if "skipped" not in r]
    drows = [r for r in drows if "skipped" not in r]
    columns = (
        Column("system", "system"), Column("basis", "basis"),
        Column("bandwidth_scale", "link bandwidth x", lambda v: f"{v:.2f}"),
        Column("bisection_per_chip_Bps", "bisection per chip", computed_bandwidth),
        Column("a2a_per_chip_Bps", "all-to-all per chip", computed_bandwidth),
        Column("allreduce_1GiB_s", "all-reduce 1GiB", computed_time),
    )
    table = Table("fair", f"At {ref}'s network cost and power per chip", columns,
                  tuple(rows),
                  f"Each system's link bandwidths scaled by one factor until its network "
                  f"cost (then power) per chip equals {ref}'s ({usd_text(rb.cost_usd_per_chip)}, "
                  f"{_watts(rb.power_w_per_chip)}); street prices of 2026. Bisection and "
                  "all-to-all scale exactly with the factor; the all-reduce (1GiB per rank, "
                  f"under the {runtime_phrase()}; the tuner chooses the algorithm and "
                  "protocol) is evaluated on the scaled fabric.")
    dcols = (Column("system", "system"), Column("model", "model"),
             Column("best_layout", "best layout"), Column("time_s", "per token", computed_time),
             Column("default_layout_time_s", "at tp=1", computed_time))
    dtable = Table("decode_best", f"Decode at each system's best layout ({DECODE_MODELS[0]})",
                   dcols, tuple(drows),
                   f"Batch {DECODE_BATCH}, {DECODE_CONTEXT}-token context; tensor "
                   "parallelism searched over the powers of two that divide the chips, "
                   "experts over every chip; tensor-parallel collectives under the "
                   f"{runtime_phrase()}.")
    fig = FigureSpec("fair", f"As built and at {ref}'s network cost and power",
                     "Bisection and all-to-all throughput per chip and the time of a 1GiB "
                     f"all-reduce ({runtime_phrase()}), as built and with link bandwidth "
                     "scaled to equal network cost and power per chip (log axes).",
                     functools.partial(_draw_fair, rows), column="double", height=2.9)
    text = (("The systems here share one chip where the default report is run, so that "
            "differences come from the fabric; the chip comparison is a separate section."),)
    text += _override_note(fabrics)
    if skipped:
        text += ("Not compared: " + "; ".join(skipped) + ".",)
    section = Section("fair", "Equal chip, equal cost, equal power", text=text,
                      tables=(table, dtable) if drows else (table,), figures=(fig,))
    return section, _fair_findings(rows, drows, ref)


def _fair_findings(rows, drows, ref):
    out = []
    by = {(r["system"], r["basis"]): r for r in rows}
    systems = list(dict.fromkeys(r["system"] for r in rows))
    for basis, what in (("cost", "network cost"), ("power", "network power")):
        parts, lagging = [], []
        for s in systems:
            if s == ref or (s, basis) not in by or (ref, "as built") not in by:
                continue
            r, q = by[(s, basis)], by[(ref, "as built")]
            parts.append(f"{s} runs its links x{r['bandwidth_scale']:.2f} and gets "
                         f"{times_text(r['bisection_per_chip_Bps'], q['bisection_per_chip_Bps'])} "
                         f"{ref}'s bisection per chip and a 1GiB all-reduce in "
                         f"{computed_time(r['allreduce_1GiB_s'])} (vs "
                         f"{computed_time(q['allreduce_1GiB_s'])})")
            own = by.get((s, "as built"))
            # links x12 and the all-reduce only 1.9x faster: something else binds it
            if own and r["bandwidth_scale"] > 2:
                gain = own["allreduce_1GiB_s"] / r["allreduce_1GiB_s"]
                if gain < r["bandwidth_scale"] / 2:
                    lagging.append(f"{s} {times_text(gain, 1)} faster for links "
                                   f"x{r['bandwidth_scale']:.2f}")
        if parts:
            # what binds beside the reduce rate, and who chooses the algorithm, are the
            # runtime's: NCCL's bandwidth model and tuner under the default runtime
            nccl = default_runtime().startswith("nccl")
            lag = (f" The all-reduce gains far less than the links ({', '.join(lagging)}, "
                   "against each one's own time as built): once the links are that fast they "
                   "stop binding, and the chip's reduce rate (assumed: HBM bandwidth / 3) and "
                   + ("NCCL's own bandwidth model" if nccl else "the runtime's own costs")
                   + " set the time." if lagging else "")
            out.append(f"At {ref}'s {what} per chip: " + "; ".join(parts) + "." + lag
                       + " Assumes: street prices of 2026, link bandwidth bought at today's "
                       "price per Gb/s of each medium, "
                       + ("the chip's reduce rate, " if lagging else "")
                       + f"and the all-reduce under the {runtime_phrase()} ("
                       + ("its tuner" if nccl else "the runtime") + " choosing anew on the "
                       "scaled links).")
    if drows:
        said = ", ".join(f"{r['system']} {computed_time(r['time_s'])} ({r['best_layout']})"
                         for r in drows)
        slow = max(r["default_layout_time_s"] / r["time_s"] - 1 for r in drows)
        out.append(f"Decode of {drows[0]['model']} at each system's best layout (batch "
                   f"{DECODE_BATCH}, {DECODE_CONTEXT}-token context, the MoE decode section's "
                   "exchange kernel and CUDA graphs; tensor parallelism searched): "
                   f"{said}; {_fastest(drows)}. The MoE decode section's step table is "
                   f"at the default layout (tp=1), up to {100 * slow:.0f}% slower. The search "
                   "keeps the experts over every chip; Serving also searches the instance "
                   "size and expert tensor parallelism, at its own context lengths, so its "
                   "single-user speeds differ from these. Assumes: "
                   f"tensor-parallel collectives under the {runtime_phrase()}; the decode "
                   "model's defaults otherwise, each system's chip as named.")
    return out


# -- chips ------------------------------------------------------------------------------


def chip_section(systems, executor=None, quiet=False):
    """Decode with each system's own chip: a comparison of chips as much as fabrics."""
    from ._sweep import sweep

    if not systems:
        return None, []
    points = [{"system": s, "model": DECODE_MODELS[0]} for s in systems]
    rows = [r for r in sweep(_decode_point, points, executor=executor, quiet=quiet,
                             desc="chips") if "skipped" not in r]
    if not rows:
        return None, []
    columns = (Column("system", "system"), Column("chip", "chip"),
               Column("best_layout", "best layout"), Column("time_s", "per token", computed_time))
    conditions = (f"batch {DECODE_BATCH}, {DECODE_CONTEXT}-token context, the MoE decode "
                  "section's exchange kernel and CUDA graphs, tensor-parallel collectives "
                  f"under the {runtime_phrase()}")
    table = Table("chips", f"Decode with each system's own chip ({DECODE_MODELS[0]})", columns,
                  tuple(rows), f"Time per token of one decode step at each system's best "
                  f"layout, searched as in the fair comparison; {conditions}.")
    text = (("Each preset with the chip it ships with. Differences here mix the chips' HBM "
            "bandwidth and FLOP/s with the fabric; the fabric comparison holds the chip "
            "fixed."),)
    found = [(f"Decode of {DECODE_MODELS[0]} per token with each system's own chip, at its "
              f"best layout ({conditions}): " + ", ".join(
                  f"{r['system']} ({r['chip']}) {computed_time(r['time_s'])}" for r in rows)
              + f"; {_fastest(rows)}. This compares chips as much as fabrics"
              + _assumed_chips(rows) + ".")]
    return Section("chips", "Chip comparison (not a fabric comparison)", text=text,
                   tables=(table,)), found


def _fastest(rows):
    """'a is fastest (b +0.5%, c +8.5%)': the fastest and how far behind each other is, so
    a lead of a percent is not read as a clear win.

    >>> _fastest([{"system": "a", "time_s": 1.0}, {"system": "b", "time_s": 1.085}])
    'a is fastest (b +8.5%)'
    """
    best = min(rows, key=lambda r: r["time_s"])
    behind = sorted((r for r in rows if r is not best), key=lambda r: r["time_s"])
    margins = ", ".join(f"{r['system']} +{100 * (r['time_s'] / best['time_s'] - 1):.1f}%"
                        for r in behind)
    return f"{best['system']} is fastest" + (f" ({margins})" if margins else "")


def _assumed_chips(rows):
    """'; the sd200-chip is an assumed 1.6TB/s HBM chip (no published figure)' for each chip
    of ``rows`` whose source is an assumption (read from the chip, not typed)."""
    from fabric import chip_spec

    said = []
    for name in dict.fromkeys(r["chip"] for r in rows if r.get("chip")):
        c = chip_spec(name)
        if c.source.lower().startswith("assumption"):
            said.append(f"the {name} is an assumed {format_bandwidth(c.hbm_bandwidth)} HBM "
                        "chip (no published figure)")
    return "".join(f"; {s}" for s in said)


# -- sensitivity of the fabric findings -------------------------------------------------


def _is_assumed(source, what):
    """Whether ``source`` calls the ``what`` figure an assumption (or a calibration to an
    unconfirmed claim): the clause about it
    (``"bandwidth: ...; latency: assumption, ..."``) if there is one, else the whole."""
    clauses = [c.strip().lower() for c in source.replace(". ", "; ").split(";")]
    mine = [c for c in clauses if c.startswith(what + ":")]
    # a figure calibrated to an unconfirmed claim is as assumed as one stated outright
    return any(w in c for c in (mine or [source.lower()])
               for w in ("assumption", "unconfirmed", "calibrated"))


def assumed_parameters(fabrics):
    """Parameter name -> (tech or None, what) of every assumed link or chip parameter of
    ``fabrics`` (a name -> Fabric mapping); ``what`` is bandwidth, latency or reduce_rate."""
    out = {}
    for f in fabrics.values():
        for p in f.assumptions:
            head, _, what = p.name.rpartition(".")
            if not _is_assumed(p.source, what):
                continue
            if what in ("bandwidth", "latency") and any(
                    d.get("tech") == head for *_, d in f.graph.edges(data=True)):
                out.setdefault(p.name, (head, what))
            elif what == "reduce_rate" and f.chip is not None and head == f.chip.name:
                out.setdefault(p.name, (None, what))
    return out


def source_clause(source, parameter):
    """The part of a link's source that is about ``parameter``'s quantity: sources of link
    technologies say "...; bandwidth: <fact>; latency: <fact>", and a finding about the
    bandwidth quotes only its fact (whole, not cut mid-word).

    >>> source_clause("the link. bandwidth: assumed, 64 GB/s; latency: 230 ns", "x.latency")
    '230 ns'
    >>> source_clause("a datasheet", "x.bandwidth")
    'a datasheet'
    """
    what = parameter.rpartition(".")[2]
    m = re.search(rf"(?:^|[.;] ){re.escape(what)}: (.*?)(?=; [a-z_]+: |$)", source)
    return m.group(1) if m else source


def _as_assumption(clause):
    """``clause`` labelled as an assumption once (sources often begin with the word).

    >>> _as_assumption("assumption, 64 GB/s"), _as_assumption("a datasheet")
    ('assumption, 64 GB/s', 'assumption: a datasheet')
    """
    return clause if clause.lower().startswith("assum") else f"assumption: {clause}"


def _with(f, tech, what, factor):
    """``f`` with one assumed parameter scaled: a link technology's bandwidth or latency
    (its links only), or the chip's reduction rate."""
    import dataclasses

    if what == "reduce_rate":
        if f.chip is None:
            return f
        return f.with_chip(dataclasses.replace(f.chip, reduce_rate=f.chip.reduce_rate * factor))
    if not any(d.get("tech") == tech for *_, d in f.graph.edges(data=True)):
        return f        # a parameter of the other system's links: this one is as it was
    # the same fabric in every other respect (structure and routing policy included), a
    # degraded one's intact fabric scaled too: the one link scaling (a hand-written copy here
    # left a degraded fabric's intact one unscaled)
    return scale_links(f, **{what: factor}, tech=tech)


def _sens_point(system, name, tech, what, factor):
    from ._collectives import cost

    g = _with(report_fabric(system), tech, what, factor)
    return {"system": system, "parameter": name, "factor": factor,
            "allreduce_1GiB_s": cost(g, "all-reduce", FAIR_ALLREDUCE_BYTES).time}


def sensitivity_section(fabrics, executor=None, quiet=False):
    """Tornado of the head-to-head all-reduce finding over every assumed parameter."""
    from ._sweep import sweep

    names = list(fabrics)[:2]
    if len(names) < 2:
        return None, []
    a, b = names
    params = assumed_parameters({n: fabrics[n] for n in names})
    points = [{"system": s, "name": "base", "tech": None, "what": "none", "factor": 1.0}
              for s in names]
    points += [{"system": s, "name": p, "tech": tech, "what": what, "factor": k}
               for p, (tech, what) in params.items() for k in (0.5, 2.0) for s in names]
    res = sweep(_sens_point, points, executor=executor, quiet=quiet, desc="sensitivity")
    t = {(r["system"], r["parameter"], r["factor"]): r["allreduce_1GiB_s"] for r in res}
    base = t[(b, "base", 1.0)] / t[(a, "base", 1.0)]
    rows = [{"parameter": p, "low": "x0.5", "high": "x2",
             "value_low": t[(b, p, 0.5)] / t[(a, p, 0.5)],
             "value_high": t[(b, p, 2.0)] / t[(a, p, 2.0)],
             "source": next(q.source for f in fabrics.values() for q in f.assumptions
                            if q.name == p)} for p in params]
    table = Table("sensitivity", f"Sensitivity: 1GiB all-reduce time, {b} / {a}",
                  (Column("parameter", "parameter"), Column("low", "low"),
                   Column("value_low", "ratio", lambda v: f"{v:.2f}"), Column("high", "high"),
                   Column("value_high", "ratio", lambda v: f"{v:.2f}")), tuple(rows),
                  f"Every parameter of the two systems whose source is an assumption, one at "
                  f"a time at x0.5 and x2 (base ratio {base:.2f}); the all-reduce under the "
                  f"{runtime_phrase()} (the tuner choosing the algorithm anew each time).")
    fig = FigureSpec("sensitivity", f"All-reduce ratio {b} / {a}: sensitivity",
                     "Time of a 1GiB all-reduce on the second system over the first "
                     f"({runtime_phrase()}), with one assumed parameter at half and at twice "
                     "its value (base: vertical line).", functools.partial(
                         _draw_tornado, rows, base, "all-reduce time ratio",
                         f"1 GiB all-reduce, {b} / {a}\n{runtime_label()}"))
    worst = max(rows, key=lambda r: abs(r["value_high"] - r["value_low"])) if rows else None
    found = []
    if worst is not None:
        lo = min(min(r["value_low"], r["value_high"]) for r in rows)
        hi = max(max(r["value_low"], r["value_high"]) for r in rows)
        holds = "holds" if (lo - 1) * (hi - 1) > 0 and (base - 1) * (lo - 1) > 0 else \
            "does not hold"
        found.append(
            f"A 1GiB all-reduce ({runtime_phrase()}) takes {base:.2f}x as long on {b} as "
            f"on {a}; with any one "
            f"assumed parameter halved or doubled the ratio spans {lo:.2f}x-{hi:.2f}x, so "
            f"the ordering {holds} over that range. It rests most on {worst['parameter']} "
            f"({_as_assumption(source_clause(worst['source'], worst['parameter']))}).")
    section = Section("sensitivity", "Sensitivity of the findings to their assumptions",
                      text=(("Each finding that rests on an assumed parameter, varied over "
                            "every assumed parameter it uses. The cost finding's tornado is "
                            "under Cost and power; the decode finding's under MoE decode."),),
                      tables=(table,), figures=(fig,))
    return section, found


#: What each older section's findings rest on (besides the parameters named with it).
_RESTS_ON = {
    "structure": ("the topology as built; bisection from the link bandwidths", ("bandwidth",)),
    "latency": (f"the per-hop latencies and the transport's fixed costs ({NO_RUNTIME})",
                ("latency",)),
    "collectives": (("the link bandwidths and latencies, the chip's reduce rate and the runtime "
                    "named"), ("bandwidth", "latency", "reduce_rate")),
    "symmetric": (("the link bandwidths and latencies, the chip's reduce rate and the runtime "
                  "named"), ("bandwidth", "latency", "reduce_rate")),
    "utilization": (("shortest-path routing with equal-cost paths split evenly, and the link "
                    f"bandwidths (routed link loads, {NO_RUNTIME})"), ("bandwidth",)),
    "failures": (("the fabric's own routing around the failure (on a grid routed in "
                  "dimension order a local repair and an upper bound: a failed link's bytes "
                  "on one bypass, a failed chip's on one stand-in link per neighbour; "
                  "elsewhere the shortest paths left; 'with the best routing': the "
                  "max-concurrent-flow optimum before and after, what a fabric that re-routes "
                  "globally could reach), and the link bandwidths (routed link loads, "
                  f"{NO_RUNTIME})"), ("bandwidth",)),
    # a callable: its phrase quotes Parameters and the runtime's version, read when used
    "decode": (lambda: _decode_rests_on(), ("bandwidth", "latency")),
}


def _decode_rests_on():
    """What a decode finding's times rest on: the software the decode model charges (the
    seed's 5.85ms is read on these, not on times with no software costs) and the fabric's
    links."""
    from ._decode import DECODE_HBM_EFFICIENCY, GRAPH_KERNEL_OVERHEAD
    from ._report_decode import hbm_rates_phrase

    return ("the decode model's settings (CUDA-graph replay with "
            f"{format_time(GRAPH_KERNEL_OVERHEAD.value)} per kernel boundary, the published "
            "minimum kernel durations, weights and KV cache read from HBM at "
            f"{hbm_rates_phrase(f'{DECODE_HBM_EFFICIENCY.value:.0%}')}, the MoE exchange "
            "kernel of the "
            "step table, tensor-parallel collectives (none at tp=1) under the "
            f"{runtime_phrase()}; no kernel fusion unless varied, no overlap of communication "
            "with compute) "
            "and the link bandwidths and latencies")


#: Operations that reduce (the chip's reduce rate enters their time; no other's).
_REDUCING = re.compile(r"(?<![\w-])(all-reduce|reduce-scatter|reduce)(?![\w-])")


def assumption_clause(section, fabrics, sentence=None):
    """' Assumes: ...' for a finding of ``section`` that does not say what it assumes:
    what the section's figures rest on and the parameters of the first two systems whose
    sources call them assumptions (the sensitivity section varies those); '' if the
    section is not one of these. Given the finding's ``sentence``, a collectives finding
    that names no reducing operation (a broadcast, an all-to-all) does not claim the
    chip's reduce rate.

    >>> assumption_clause("collectives", {}, "all-to-all, each system at its best")
    ' Assumes: the link bandwidths and latencies and the runtime named; every one of them from a published figure.'
    """
    if section not in _RESTS_ON:
        return ""
    what, kinds = _RESTS_ON[section]
    what = what() if callable(what) else what
    if sentence is not None and "reduce_rate" in kinds and not _REDUCING.search(sentence):
        what = what.replace(", the chip's reduce rate and", " and")
        kinds = tuple(k for k in kinds if k != "reduce_rate")
    first_two = dict(list(fabrics.items())[:2])
    names = [n for n, (_, k) in assumed_parameters(first_two).items() if k in kinds]
    tail = (f"; assumed (no published figure): {', '.join(sorted(names))}" if names
            else "; every one of them from a published figure")
    return f" Assumes: {what}{tail}."
