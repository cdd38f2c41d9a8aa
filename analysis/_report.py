"""Topology comparison reports: findings, tables, figures, assumptions; HTML, Markdown, CSV.

:func:`build_report` computes everything from the public APIs (metrics,
routing and latency, collectives, failures) for a list of systems;
:func:`write_report` writes it to a directory:

* ``index.html``: one self-contained page (figures inline as SVG, CSS inline, no
  network access), readable on a screen and printable;
* ``report.md``: the same content, figures linked;
* ``<table>.csv``: every table, tidy (one row per system x ...), SI units named
  in the column names;
* ``figures/<name>.{pdf,svg,png}``: every figure, saved reproducibly.

The report is written to a temporary directory beside the target and moved
into place at the end, so a failure leaves nothing half-written; an existing
report is only replaced with ``force=True``. Output is deterministic: no dates,
fixed ordering, reproducible figure bytes.

Examples
--------
>>> r = build_report(["torus:3x3x3", "fattree:k=4"], sections=("structure",), quiet=True)
>>> [s.title for s in r.sections]
['Structure', 'Assumptions']
>>> r.findings[0].startswith("torus:3x3x3 reaches")
True
"""

import csv
import dataclasses
import functools
import html
import io
import math
import os
import re
import shutil
import tempfile
from pathlib import Path

import numpy as np

from fabric import format_bandwidth, format_size, format_time

from . import _metrics, _plots
from ._style import FIGURE_FORMATS, paper_style, save_figure

__all__ = [
    "DEFAULT_OPS",
    "DEFAULT_SIZES",
    "DEFAULT_SYSTEMS",
    "README_FIGURES",
    "SECTIONS",
    "Report",
    "build_report",
    "check_report_dir",
    "parse_sizes",
    "write_figures",
    "write_report",
]

#: The embedded default comparison: the seed supernode against a cluster of the same
#: size, with a one-tier switched rack and a torus cube alongside.
DEFAULT_SYSTEMS = ("sd200-ultra", "cluster-128", "nvl72", "tpu-v4-cube")

#: Report sections in the order they appear (the assumptions table always closes it).
SECTIONS = ("structure", "latency", "collectives", "symmetric", "decode", "utilization",
            "failures", "topology")

#: The figures ``cofabric figures`` regenerates for the README: figures of the report of
#: the default systems with the all-reduce sweep (``cofabric report --ops all-reduce``).
README_FIGURES = ("topology-sd200-ultra", "topology-cluster-128", "latency",
                  "collective-all-reduce", "symmetric-memory", "link-utilization")
_README_SECTIONS = ("latency", "collectives", "symmetric", "utilization", "topology")


# -- the report's parts -----------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Column:
    """A table column: ``key`` in the rows (and the CSV header), a label, a display format."""

    key: str
    label: str
    fmt: object = str


@dataclasses.dataclass(frozen=True)
class Table:
    """A table: rows are dicts of SI values; ``columns`` say how to show them.

    The CSV holds ``csv_rows`` under the keys ``csv_columns`` where given (a tidy
    form of a table shown merged or pivoted), else every field of the shown rows.
    """

    name: str
    title: str
    columns: tuple
    rows: tuple
    caption: str = ""
    csv_columns: tuple = None
    csv_rows: tuple = None


@dataclasses.dataclass(frozen=True)
class FigureSpec:
    """A figure: ``draw()`` returns a matplotlib Figure (called inside the paper style)."""

    name: str
    title: str
    caption: str
    draw: object
    column: str = "single"
    height: float = None


@dataclasses.dataclass(frozen=True)
class Section:
    """A titled part of the report: paragraphs, tables and figures."""

    key: str
    title: str
    text: tuple = ()
    tables: tuple = ()
    figures: tuple = ()
    parameters: tuple = ()  # (system, fabric.Parameter) used beyond the fabric's own


@dataclasses.dataclass(frozen=True)
class Report:
    """Everything a report shows, computed; :func:`write_report` renders it.

    Attributes
    ----------
    systems : tuple of str
        The system names (spec strings or presets), in the order compared.
    finding_groups : tuple of (str, tuple of str)
        Sentences stating what the numbers say, generated from them, grouped by topic.
    sections : tuple of Section
    command : str
        The command line that reproduces the report.
    """

    systems: tuple
    finding_groups: tuple
    sections: tuple
    command: str

    @property
    def findings(self):
        """Every finding sentence, in order."""
        return tuple(f for _, group in self.finding_groups for f in group)

    @property
    def tables(self):
        """Every table, in order of appearance."""
        return tuple(t for s in self.sections for t in s.tables)

    @property
    def figures(self):
        """Every figure, in order of appearance."""
        return tuple(f for s in self.sections for f in s.figures)


# -- formatting -----------------------------------------------------------------------------


def _fmt_float(digits=3):
    return lambda v: f"{v:.{digits}g}" if isinstance(v, float) else str(v)


def _fmt_value(value, unit):
    """A parameter value in human units (the CSV keeps SI)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    if unit == "B/s":
        return format_bandwidth(value)
    if unit == "s":
        return format_time(value)
    if unit == "B":
        return format_size(value, binary=False)
    if unit == "FLOP/s":
        return f"{value / 1e12:.4g} TFLOP/s"
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def _ratio(a, b):
    return a / b if b else float("inf")


def _times(a, b):
    """The ratio a / b as '1.02x', '2.6x' or '12x' (both positive)."""
    r = _ratio(a, b)
    if r < 2:
        return f"{r:.2f}x"
    return f"{r:.1f}x" if r < 10 else f"{r:.0f}x"


# -- structure -----------------------------------------------------------------------------


def _draw_hops(hops):
    fig = _figure()
    ax = fig.subplots()
    names = list(hops)
    width = 0.8 / len(names)
    for i, name in enumerate(names):
        counts = hops[name]
        h = np.arange(len(counts))
        frac = counts / counts.sum()
        ax.bar(h[1:] + (i - (len(names) - 1) / 2) * width, frac[1:], width=width, label=name)
    ax.set_xlabel("hops between chips")
    ax.set_ylabel("fraction of chip pairs")
    ax.xaxis.set_major_locator(_integer_locator())
    ax.legend(fontsize="x-small")
    return fig


def _integer_locator():
    from matplotlib.ticker import MaxNLocator

    return MaxNLocator(integer=True)


def _structure_section(fabrics):
    import fabric as fab

    rows, hops = [], {}
    for name, f in fabrics.items():
        m = _metrics.metrics(f)
        counts, _ = _metrics.hop_distribution(f)
        hops[name] = counts
        try:
            ft = fab.forwarding_tables(f)
        except fab.AddressMapError:
            ft = None  # no address map without a chip (its HBM size): no tables to size
        rows.append({
            "system": name, "family": f.family, "endpoints": m.endpoints,
            "switches": m.switches, "links": m.links, "diameter_hops": m.diameter,
            "mean_hops": m.avg_hops, "bisection_links": m.bisection_links,
            "bisection_bandwidth_Bps": m.bisection_bandwidth,
            "bisection_exact": m.bisection_exact,
            "bisection_per_chip_Bps": m.bisection_bandwidth / m.endpoints,
            "injection_bandwidth_Bps": m.injection_bandwidth,
            "switch_ports": m.switch_ports, "ports": m.ports,
            "a2a_throughput_per_chip_Bps": _all_to_all(f)["throughput"],
            "forwarding_entries_max": None if ft is None else ft.max_entries,
            "forwarding_entries_per_dimension": None if ft is None else ft.per_dimension_entries,
        })
    columns = (
        Column("system", "system"), Column("endpoints", "chips"),
        Column("switches", "switches"), Column("links", "links (cables)"),
        Column("diameter_hops", "diameter (hops)"),
        Column("mean_hops", "mean hops", _fmt_float(3)),
        Column("bisection_bandwidth_Bps", "bisection bandwidth", format_bandwidth),
        Column("bisection_per_chip_Bps", "bisection per chip", format_bandwidth),
        Column("injection_bandwidth_Bps", "injection per chip", format_bandwidth),
        Column("a2a_throughput_per_chip_Bps", "all-to-all per chip", format_bandwidth),
        Column("forwarding_entries_max", "forwarding entries",
               lambda v: "-" if v is None else str(v)),
        Column("forwarding_entries_per_dimension", "per-dimension entries",
               lambda v: "-" if v is None else str(v)),
        Column("ports", "ports"), Column("switch_ports", "switch ports"),
    )
    inexact = [r["system"] for r in rows if not r["bisection_exact"]]
    caption = ("Links count parallel cables one by one (cables); ports are link ends; "
               "bandwidths are per direction. Mean hops over distinct ordered chip pairs. "
               "All-to-all per chip: uniform all-to-all routed by the fabric's policy (see "
               "below). Forwarding entries: the largest per-node table from address ranges "
               "to ports after merging; per-dimension: the entries per node when the owner "
               "bits of the address are the chip's coordinates (hyper-meshes with "
               "power-of-two sides).")
    if inexact:
        caption += (" Bisection of " + ", ".join(inexact) + " is that of a balanced structural "
                    "cut: an upper bound on the minimum bisection.")
    table = Table("summary", "Summary per system", columns, tuple(rows), caption)
    fig = FigureSpec("hops", "Hops between chip pairs",
                     "Distribution of the hop count over distinct ordered chip pairs.",
                     functools.partial(_draw_hops, hops))
    section = Section("structure", "Structure", tables=(table,), figures=(fig,))
    return section, _structure_findings(rows)


def _structure_findings(rows):
    a, out = rows[0], []
    if len(rows) > 1:
        b = rows[1]
        out.append(
            f"{a['system']} reaches any chip from any other in at most {a['diameter_hops']} "
            f"hops ({a['mean_hops']:.2f} on average); {b['system']} needs up to "
            f"{b['diameter_hops']} ({b['mean_hops']:.2f} on average).")
        bound = lambda r: "" if r["bisection_exact"] else " (upper bound)"
        ra, rb = a["bisection_per_chip_Bps"], b["bisection_per_chip_Bps"]
        more = "more" if ra >= rb else "less"
        hi, lo = max(ra, rb), min(ra, rb)
        out.append(
            f"Bisection bandwidth per chip: {a['system']} {format_bandwidth(ra)}{bound(a)}, "
            f"{b['system']} {format_bandwidth(rb)}{bound(b)}: {_times(hi, lo)} {more} "
            f"on {a['system']}.")
        out.append(f"{_switches(a)}; {_switches(b)}.")
        if a["forwarding_entries_max"] is not None and b["forwarding_entries_max"] is not None:
            out.append(f"Routing by address: the largest forwarding table holds {_entries(a)} "
                       f"on {a['system']} and {_entries(b)} on {b['system']}.")
    else:
        out.append(f"{a['system']} reaches any chip from any other in at most "
                   f"{a['diameter_hops']} hops ({a['mean_hops']:.2f} on average).")
    if len(rows) > 2:
        best = max(rows, key=lambda r: r["bisection_per_chip_Bps"])
        out.append(f"Of all {len(rows)} systems, {best['system']} has the most bisection "
                   f"bandwidth per chip ({format_bandwidth(best['bisection_per_chip_Bps'])}).")
    return out


def _entries(row):
    per_dim = row["forwarding_entries_per_dimension"]
    text = f"{row['forwarding_entries_max']} entries"
    if per_dim is not None:
        text += (f" ({per_dim} as per-dimension tables, the owner ID's bits being the chip's "
                 "coordinates)")
    return text


def _switches(row):
    if row["switches"] == 0:
        return f"{row['system']} needs no switches and {row['links']} cables"
    return (f"{row['system']} needs {row['switches']} switches ({row['switch_ports']} switch "
            f"ports) and {row['links']} cables")


# -- access latency ------------------------------------------------------------------------

#: Payload of the accesses in the latency distributions: one 64 B cache line.
ACCESS_BYTES = 64


def _transport_curves(f):
    """(label, transport description, latencies per op) for one system.

    Every system gets its load/store distribution; a system with NICs (a cluster)
    is shown as it is used: load/store inside a host domain (NVLink), RDMA across.
    """
    import fabric as fab

    curves = []
    if any(k == "nic" for _, k in f.graph.nodes(data="kind")):
        host = np.array([f.host_of[c] for c in f.endpoints])
        per_op = {}
        for op in ("store", "load"):
            i, j, ls = fab.access_latencies(f, op=op, size=ACCESS_BYTES, transport="loadstore")
            _, _, rd = fab.access_latencies(f, op=op, size=ACCESS_BYTES, transport="rdma")
            per_op[op] = np.where(host[i] == host[j], ls, rd)
        curves.append((f"{f.name} RDMA across hosts", "load/store in a host, RDMA across hosts",
                       per_op))
    else:
        per_op = {op: fab.access_latencies(f, op=op, size=ACCESS_BYTES,
                                           transport="loadstore")[2]
                  for op in ("store", "load")}
        curves.append((f"{f.name} load/store", "load/store", per_op))
    return curves


def _draw_latency(samples):
    fig = _figure()
    axes = fig.subplots(1, 2, sharey=True)
    for ax, op in zip(axes, ("store", "load")):
        what = "store, one way" if op == "store" else "load, round trip"
        _plots.plot_latency_cdf({k: v[op] for k, v in samples.items()}, ax=ax,
                                xlabel=f"64 B {what}")
        ax.get_legend().remove()
    axes[1].set_ylabel("")
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncol=min(len(labels), 4))
    return fig


def _latency_section(fabrics):
    import fabric as fab

    rows, samples, used = [], {}, []
    for name, f in fabrics.items():
        nics = any(k == "nic" for _, k in f.graph.nodes(data="kind"))
        for t in ("loadstore", "rdma") if nics else ("loadstore",):
            used += [(name, p) for p in fab.transport(t).parameters()]
        for label, how, per_op in _transport_curves(f):
            samples[label] = per_op
            for op, lat in per_op.items():
                st = fab.latency_stats(lat)
                rows.append({"system": name, "transport": how, "op": op,
                             "size_bytes": ACCESS_BYTES, "pairs": st.count, "min_s": st.min,
                             "mean_s": st.mean, "p50_s": st.p50, "p99_s": st.p99,
                             "max_s": st.max})
    columns = (Column("system", "system"), Column("transport", "transport"),
               Column("op", "op"), Column("min_s", "min", format_time),
               Column("mean_s", "mean", format_time), Column("p50_s", "median", format_time),
               Column("p99_s", "p99", format_time), Column("max_s", "max", format_time))
    table = Table("latency", "Access latency over all chip pairs", columns, tuple(rows),
                  "A 64 B load or store from every chip to every other chip's memory: "
                  "requester stages, path (hops and wires), serialization at the narrowest "
                  "link, responder stages, and for a load the return. Transport parameters "
                  "are listed under Assumptions.")
    fig = FigureSpec("latency", "Access latency over chip pairs",
                     "Distribution over all ordered chip pairs of a 64 B store (one way) and "
                     "load (round trip): memory-semantic load/store against RDMA on the "
                     "cluster.", functools.partial(_draw_latency, samples), column="double")
    return Section("latency", "Access latency", tables=(table,), figures=(fig,),
                   parameters=tuple(used)), _latency_findings(rows)


def _med_max(r):
    if r["p50_s"] == r["max_s"]:
        return f"{format_time(r['p50_s'])} (median and worst)"
    return f"{format_time(r['p50_s'])} median and {format_time(r['max_s'])} worst"


def _latency_findings(rows):
    systems = list(dict.fromkeys(r["system"] for r in rows))
    if len(systems) < 2:
        r = next(r for r in rows if r["op"] == "load")
        return [(f"A 64 B remote load on {r['system']} ({r['transport']}) takes "
                f"{format_time(r['p50_s'])} median, {format_time(r['max_s'])} worst.")]
    out = []
    for op, what in (("load", "remote load (round trip)"), ("store", "remote store")):
        a = next(r for r in rows if r["system"] == systems[0] and r["op"] == op)
        b = next(r for r in rows if r["system"] == systems[1] and r["op"] == op)
        faster = a if a["p50_s"] <= b["p50_s"] else b
        ratio = _times(max(a["p50_s"], b["p50_s"]), min(a["p50_s"], b["p50_s"]))
        out.append(
            f"A 64 B {what} takes {_med_max(a)} on {a['system']} ({a['transport']}), against "
            f"{_med_max(b)} on {b['system']} ({b['transport']}): {ratio} lower median on "
            f"{faster['system']}.")
    return out


# -- collectives --------------------------------------------------------------------------

#: Collective operations the report sweeps by default (all-to-allv needs a traffic matrix).
DEFAULT_OPS = ("all-reduce", "all-gather", "reduce-scatter", "broadcast", "reduce",
               "all-to-all")

#: Sizes per rank (nccl-tests convention) swept by default: 1 KiB to 1 GiB, doubling.
DEFAULT_SIZES = tuple(2 ** k for k in range(10, 31))

#: Algorithms that work by loads and stores into peers' symmetric memory.
SYMMETRIC_ALGORITHMS = ("one-shot", "two-shot")

#: The seed article's claim: symmetric memory cut collective time 3.5x (unconfirmed).
SEED_SYMMETRIC_CLAIM = 3.5

_RANGE = re.compile(r"^(?P<start>[^:]+):(?P<stop>[^:]+):(?P<op>[x*+])(?P<step>[^:]+)$")


def parse_sizes(values):
    """Sizes in bytes from sizes and ranges: ``"4KiB"``, ``"1KiB:1GiB:x2"``, ``"0:64KiB:+8KiB"``.

    A range ``start:stop:xF`` multiplies by ``F`` (an integer >= 2) from ``start``
    up to ``stop`` inclusive; ``start:stop:+S`` adds ``S``. The result is sorted
    and without repeats.

    Raises
    ------
    ValueError
        For a size that does not parse, a size <= 0, or a malformed range.

    Examples
    --------
    >>> parse_sizes(["1KiB:8KiB:x2", "3000"])
    [1024, 2048, 3000, 4096, 8192]
    """
    from fabric import parse_size

    if isinstance(values, (str, int)):
        values = [values]
    out = set()
    for v in values:
        m = _RANGE.match(v) if isinstance(v, str) else None
        if m:
            start, stop = parse_size(m["start"]), parse_size(m["stop"])
            if m["op"] in "x*":
                step = int(m["step"]) if m["step"].isdigit() else 0
                if step < 2:
                    raise ValueError(f"size range {v!r}: the factor after 'x' must be an "
                                     "integer >= 2")
            else:
                step = parse_size(m["step"])
                if step <= 0:
                    raise ValueError(f"size range {v!r}: the step after '+' must be > 0")
            if start <= 0 or stop < start:
                raise ValueError(f"size range {v!r} must have 0 < start <= stop")
            x = start
            while x <= stop:
                out.add(x)
                x = x * step if m["op"] in "x*" else x + step
        else:
            size = parse_size(v)
            if size <= 0:
                raise ValueError(f"sizes must be > 0 bytes, got {v!r}")
            out.add(size)
    if not out:
        raise ValueError("sizes: give at least one size")
    return sorted(out)


def _check_ops(ops):
    from ._closed_form import normalize_op

    if isinstance(ops, str):
        ops = [ops]
    names = []
    for op in ops:
        name = normalize_op(op)
        if name == "all-to-allv":
            raise ValueError("op all-to-allv needs a traffic matrix; the report sweeps "
                             "sizes of the other operations")
        if name not in names:
            names.append(name)
    if not names:
        raise ValueError("ops: give at least one collective operation")
    return names


@functools.cache
def _fabric(name):
    # One Fabric per name and process: its router and collective plans are cached on it.
    import topologies

    return topologies.build(name)


def _collective_curve(system, op, algorithm, transport, sizes):
    """Cost ``op`` with one algorithm at every size; rows, or a reason it does not apply.

    Module-level so that a process pool or a Dask cluster can run it.
    """
    from ._collectives import cost_sizes
    from ._schedules import NotApplicableError

    f = _fabric(system)
    try:
        results = cost_sizes(f, op, list(sizes), algorithm=algorithm, transport=transport)
    except NotApplicableError as e:
        return {"rows": [], "reason": str(e)}
    rows = [{"system": system, "op": op, "algorithm": algorithm,
             "transport_asked": transport or "native", "transport": r.transport,
             "size_bytes": int(r.size), "time_s": r.time, "algbw_Bps": r.algbw,
             "busbw_Bps": r.busbw, "lower_bound_s": r.lower_bound} for r in results]
    return {"rows": rows, "reason": None}


def _has_nics(f):
    return any(k == "nic" for _, k in f.graph.nodes(data="kind"))


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
                if not _has_nics(f) and a not in SYMMETRIC_ALGORITHMS + ("in-switch",):
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
    fig = _figure()
    axes = fig.subplots(2, 2)
    best, mine = _plot_rows(best), _plot_rows(mine)
    for row, rows, group, what in ((0, best, ("system",), "best algorithm per system"),
                                   (1, mine, ("algorithm",), f"each algorithm on {system}")):
        _plots.plot_collective_sweep(rows, ax=axes[row, 0], metric="time", group=group)
        _plots.plot_collective_sweep(rows, ax=axes[row, 1], metric="busbw", group=group)
        axes[row, 0].set_title(f"{op} time: {what}")
        axes[row, 1].set_title(f"{op} bus bandwidth: {what}")
        axes[row, 1].get_legend().remove()
        axes[row, 0].legend(fontsize="xx-small", ncol=2 if row else 1)
    return fig


def _pick_sizes(sizes, wanted=(2 ** 10, 2 ** 20, 2 ** 30)):
    """The swept sizes nearest (in log) to 1 KiB, 1 MiB, 1 GiB, for the summary table."""
    out = []
    for w in wanted:
        s = min(sizes, key=lambda x: (abs(math.log2(x) - math.log2(w)), x))
        if s not in out:
            out.append(s)
    return out


def _collectives_section(fabrics, ops, sizes, executor, quiet):
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
    best = _best(native)
    first = next(iter(fabrics))
    figures = []
    for op in ops:
        figures.append(FigureSpec(
            f"collective-{op}", f"{op} against size",
            f"{op} time and bus bandwidth (nccl-tests convention) against the size per rank. "
            f"Top: each system's fastest applicable algorithm at each size; bottom: every "
            f"applicable algorithm on {first}. Native transport: load/store inside a "
            "load/store domain, RDMA across NICs.",
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
                    f"{format_time(r['time_s'])} {r['algorithm']} ({r['transport']})")
            summary.append(row)
    columns = (Column("op", "op"), Column("size_bytes", "size", format_size),
               *(Column(name, name) for name in fabrics))
    full_cols = tuple(Column(k, k) for k in (
        "system", "op", "algorithm", "transport_asked", "transport", "size_bytes", "time_s",
        "algbw_Bps", "busbw_Bps", "lower_bound_s"))
    tables = [
        Table("collectives_best", "Fastest algorithm per system", columns, tuple(summary),
              "Time, algorithm and transport of each system's fastest algorithm at the swept "
              "sizes nearest 1 KiB, 1 MiB and 1 GiB; every size (with bus bandwidth) in "
              "collectives_best.csv, every algorithm in collectives.csv.",
              csv_columns=("system", "op", "size_bytes", "algorithm", "transport", "time_s",
                           "algbw_Bps", "busbw_Bps"),
              csv_rows=tuple(sorted(best, key=lambda r: (r["system"], r["op"],
                                                         r["size_bytes"])))),
        Table("collectives", "", full_cols, (),
              "Every operation, algorithm, transport and size (times in s, bandwidths in B/s)",
              csv_rows=tuple(rows)),
        Table("not_applicable", "Algorithms that do not apply, and why",
              (Column("system", "system"), Column("op", "op"), Column("algorithm", "algorithm"),
               Column("transport_asked", "transport"), Column("reason", "reason")),
              tuple(reasons)),
    ]
    section = Section("collectives", "Collectives", tables=tuple(tables),
                      figures=tuple(figures), parameters=_collective_parameters(fabrics))
    sym = _symmetric_section(fabrics, ops, rows, reasons)
    return section, _collective_findings(best, list(fabrics), ops), sym


def _collective_parameters(fabrics):
    """The collectives model's per-technology constants each system's links use, as
    Parameters (their sources are those :mod:`analysis._collectives` cites)."""
    from fabric import Parameter

    from ._collectives import IN_SWITCH_EFFICIENCY, PROTOCOL_LINK_BANDWIDTH

    src_bw = ("NCCL's bulk-protocol bandwidth per link: NVIDIA/nccl src/graph/topo.h "
              "(SM90_NVLINK_BW 20.6 GB/s, SM100_NVLINK_BW 40.1 GB/s)")
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


def _ranges(sizes):
    """'1KiB-64KiB and 1GiB' from sorted sizes of a swept list (contiguous runs)."""
    return sizes and ", ".join(
        format_size(a) if a == b else f"{format_size(a)}-{format_size(b)}" for a, b in sizes)


def _runs(flags, sizes):
    runs, start = [], None
    for i, (flag, s) in enumerate(zip(flags, sizes)):
        if flag and start is None:
            start = s
        if start is not None and (not flag or i == len(sizes) - 1):
            end = s if flag else sizes[i - 1]
            runs.append((start, end))
            start = None
    return runs


def _collective_findings(best, systems, ops):
    if len(systems) < 2:
        return []
    a, b = systems[0], systems[1]
    out = []
    for op in ops:
        ta = {r["size_bytes"]: r for r in best if r["system"] == a and r["op"] == op}
        tb = {r["size_bytes"]: r for r in best if r["system"] == b and r["op"] == op}
        sizes = sorted(set(ta) & set(tb))
        if not sizes:
            continue
        ratio = [tb[s]["time_s"] / ta[s]["time_s"] for s in sizes]
        parts = []
        for who, flags, rs in ((a, [r > 1 for r in ratio], ratio),
                               (b, [r < 1 for r in ratio], [1 / r for r in ratio])):
            won = [x for x, f in zip(rs, flags) if f]
            if won:
                parts.append(f"{who} is faster at {_ranges(_runs(flags, sizes))} (by "
                             f"{_times(min(won), 1)} to {_times(max(won), 1)})")
        big = sizes[-1]
        out.append(f"{op}: " + "; ".join(parts) + f". At {format_size(big)} the bus bandwidth "
                   f"is {format_bandwidth(ta[big]['busbw_Bps'])} on {a} "
                   f"({ta[big]['algorithm']}) and {format_bandwidth(tb[big]['busbw_Bps'])} on "
                   f"{b} ({tb[big]['algorithm']}).")
    return out


def _symmetric_rows(name, op, rows):
    """Per size: best symmetric-memory (load/store), best message passing over RDMA, and the
    same message-passing algorithms over load/store."""
    mine = [r for r in rows if r["system"] == name and r["op"] == op]
    sym = _best([r for r in mine if r["algorithm"] in SYMMETRIC_ALGORITHMS
                 and r["transport_asked"] == "native"], key=("size_bytes",))
    mp_rdma = _best([r for r in mine if r["algorithm"] not in SYMMETRIC_ALGORITHMS
                     and r["algorithm"] != "in-switch" and r["transport_asked"] == "rdma"],
                    key=("size_bytes",))
    mp_ls = _best([r for r in mine if r["algorithm"] not in SYMMETRIC_ALGORITHMS
                   and r["algorithm"] != "in-switch" and r["transport_asked"] == "native"],
                  key=("size_bytes",))
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


def _draw_symmetric(rows):
    fig = _figure()
    ax = fig.subplots()
    data = [{"label": f"{r['system']} {r['op']}", "size": r["size_bytes"],
             "ratio": r["ratio"]} for r in rows]
    _plots.plot_ratio(data, ax=ax, reference=SEED_SYMMETRIC_CLAIM,
                      reference_label=f"seed claim ({SEED_SYMMETRIC_CLAIM:g}x)",
                      ylabel="time ratio: RDMA / symmetric")
    return fig


def _symmetric_section(fabrics, ops, rows, reasons):
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
               Column("symmetric_time_s", "time", format_time),
               Column("rdma_algorithm", "message passing, RDMA"),
               Column("rdma_time_s", "time", format_time),
               Column("ratio", "ratio", lambda v: f"{v:.3g}x"),
               Column("loadstore_algorithm", "message passing, load/store"),
               Column("loadstore_time_s", "time", format_time),
               Column("ratio_same_transport", "ratio", lambda v: f"{v:.3g}x"))
    text = (("Symmetric memory: the one-shot and two-shot algorithms, in which each rank loads "
            "or stores its peers' buffers directly (load/store transport). Message passing: "
            "the fastest of the other applicable algorithms (all but one-shot, two-shot and "
            "in-switch) over RDMA, and the same algorithms over load/store, which separates "
            "the transport's share of the gain from the algorithm's."),)
    if missing:
        text += ("Not comparable on " + "; ".join(missing) + ".",)
    table = Table("symmetric_memory", "Symmetric memory against message passing", columns,
                  tuple(shown), "At the sizes nearest 1 KiB, 1 MiB, 1 GiB; every size in "
                  f"symmetric_memory.csv. Ratio > 1: symmetric memory is faster. Shown: "
                  f"{' and '.join(featured)}; every operation in symmetric_memory.csv.",
                  csv_columns=tuple(out[0]), csv_rows=tuple(out))
    fig = FigureSpec("symmetric-memory", "Symmetric memory against message passing",
                     "Time of the best message-passing algorithm over RDMA divided by the time "
                     "of the best symmetric-memory algorithm (load/store), per operation; the "
                     "dotted line is the seed article's 3.5x.",
                     functools.partial(_draw_symmetric,
                                       [r for r in out if r["op"] in featured]))
    section = Section("symmetric", "Symmetric memory versus message passing", text=text,
                      tables=(table,), figures=(fig,))
    return section, _symmetric_findings(out)


def _symmetric_findings(rows):
    out = []
    for name in dict.fromkeys(r["system"] for r in rows):
        mine = [r for r in rows if r["system"] == name]
        op = "all-reduce" if any(r["op"] == "all-reduce" for r in mine) else mine[0]["op"]
        curve = sorted((r for r in mine if r["op"] == op), key=lambda r: r["size_bytes"])
        small, large = curve[0], curve[-1]
        ratios = [r["ratio"] for r in mine]
        same = [r["ratio_same_transport"] for r in mine]
        inside = min(ratios) <= SEED_SYMMETRIC_CLAIM <= max(ratios)
        out.append(
            f"On {name}, {op} with symmetric memory ({small['symmetric_algorithm']}, "
            f"load/store) against the best message passing over RDMA "
            f"({small['rdma_algorithm']}): {small['ratio']:.2g}x at "
            f"{format_size(small['size_bytes'])}, {large['ratio']:.2g}x at "
            f"{format_size(large['size_bytes'])} ({large['symmetric_algorithm']} against "
            f"{large['rdma_algorithm']}). Over every operation and size the ratio spans "
            f"{min(ratios):.2g}x-{max(ratios):.2g}x, so the seed's {SEED_SYMMETRIC_CLAIM:g}x "
            f"is {'one point in' if inside else 'outside'} the model's range; with message "
            f"passing over load/store instead of RDMA it spans {min(same):.2g}x-"
            f"{max(same):.2g}x.")
    return out


# -- decode --------------------------------------------------------------------------------

#: Models the decode section runs: a published config and the seed's scale (hypothetical).
DECODE_MODELS = ("kimi-k2", "hypothetical-2.8t")

#: Decode conditions: one sequence (the latency-bound case the seed's 5.85 ms refers to)
#: with a 4096-token KV cache, the decode model's documented defaults otherwise.
DECODE_BATCH, DECODE_CONTEXT = 1, 4096

#: The seed article's claim for its 2.8T MoE on the 128-chip supernode (unconfirmed).
SEED_MS_PER_TOKEN = 5.85e-3

_DECODE_PARTS = ("attention", "ffn", "head", "exposed_comm", "launch")
_DECODE_LABELS = {"attention": "attention", "ffn": "FFN / experts", "head": "output head",
                  "exposed_comm": "exposed communication", "launch": "launch bubbles"}


def _decode_point(system, model):
    """One decode step; its breakdown rows and parameters, or why it cannot run."""
    from fabric import FabricError

    from ._decode import decode_step
    from ._models import model_config

    try:
        step = decode_step(model_config(model), _fabric(system), batch=DECODE_BATCH,
                           context=DECODE_CONTEXT)
    except (FabricError, ValueError) as e:
        return {"row": None, "reason": str(e), "parameters": ()}
    b = step.breakdown
    row = {"system": system, "model": model, "layout": str(step.layout),
           "batch": DECODE_BATCH, "context": DECODE_CONTEXT, "time_s": step.time,
           "tokens_per_s_user": step.tokens_per_s_user,
           "hbm_per_chip_bytes": step.hbm_per_chip,
           **{f"{k}_s": getattr(b, k) for k in _DECODE_PARTS}}
    return {"row": row, "reason": None, "parameters": tuple(step.parameters)}


def _draw_decode(rows):
    fig = _figure()
    ax = fig.subplots()
    parts = [{"system": f"{r['model']} on {r['system']}", "component": _DECODE_LABELS[k],
              "time": r[f"{k}_s"]} for r in rows for k in _DECODE_PARTS]
    _plots.plot_stacked_bars(parts, ax=ax)
    ax.axvline(SEED_MS_PER_TOKEN * 1e3, color="0.3", linestyle=":", linewidth=0.8)
    ax.set_xlabel("time per decode step (ms)")
    return fig


def _decode_section(fabrics, executor, quiet):
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
               Column("layout", "layout"), Column("time_s", "per token", format_time),
               Column("tokens_per_s_user", "tokens/s per user", _fmt_float(3)),
               *(Column(f"{k}_s", _DECODE_LABELS[k], format_time) for k in _DECODE_PARTS),
               Column("hbm_per_chip_bytes", "HBM per chip",
                      lambda v: format_size(v, binary=False)))
    text = ((f"One decode step of each model at batch {DECODE_BATCH} with a "
            f"{DECODE_CONTEXT}-token context, with the decode model's default layout and "
            "parameters (no kernel fusion, no overlap of communication with compute); the "
            "parts add up to the step time. The dotted line is the seed article's "
            f"{SEED_MS_PER_TOKEN * 1e3:g} ms per token."),)
    if skipped:
        text += ("Not run: " + "; ".join(skipped) + ".",)
    table = Table("decode", "Decode step time and its parts", columns, tuple(rows),
                  "Seconds in decode.csv. The decode model's parameters are listed under "
                  "Assumptions.")
    fig = FigureSpec("decode", "Decode step breakdown",
                     "Time per decode step split into attention, FFN/experts, output head, "
                     "communication not hidden under compute, and kernel-launch bubbles.",
                     functools.partial(_draw_decode, rows), column="double",
                     height=1.0 + 0.3 * len(rows))
    figures, tables = [fig], [table]
    first = next(iter(fabrics))
    if any(r["system"] == first and r["model"] == DECODE_MODELS[0] for r in rows):
        base, sens = _decode_sensitivity(first, DECODE_MODELS[0])
        tables.append(Table(
            "decode_sensitivity", f"Sensitivity of {DECODE_MODELS[0]} on {first}",
            (Column("parameter", "parameter"), Column("low", "low"),
             Column("value_low", "step time", format_time), Column("high", "high"),
             Column("value_high", "step time", format_time)), tuple(sens),
            f"One parameter at a time; every other at the base ({format_time(base)} per "
            "step). Seconds in decode_sensitivity.csv."))
        figures.append(FigureSpec(
            "decode-sensitivity", f"Decode sensitivity: {DECODE_MODELS[0]} on {first}",
            "Step time with one parameter at a low and a high setting, the others at the "
            "base (vertical line).", functools.partial(_draw_tornado, sens, base)))
    section = Section("decode", "MoE decode", text=text, tables=tuple(tables),
                      figures=tuple(figures), parameters=tuple(used))
    found = _decode_findings(rows, list(fabrics))
    if len(tables) > 1:
        found.append(_sensitivity_finding(sens, base))
    return section, found


def _scaled_fabric(f, latency=1.0, bandwidth=1.0):
    """``f`` with every link's latency and bandwidth multiplied (a what-if, not a preset)."""
    from fabric import Fabric

    G = _nx_copy(f.graph)
    for _, _, d in G.edges(data=True):
        d["latency"] *= latency
        d["bandwidth"] *= bandwidth
    return Fabric.from_graph(G, f.endpoints, name=f"{f.name} (latency x{latency:g}, "
                             f"bandwidth x{bandwidth:g})", domains=f.domains, chip=f.chip,
                             assumptions=f.assumptions, family=f.family, params=dict(f.params))


def _nx_copy(G):
    import networkx as nx

    return nx.Graph(G)


def _decode_sensitivity(system, model):
    """Step time with one parameter at a low and a high setting, the others at the base.

    The same one-at-a-time sweep as ``benchmarks/bench_decode.py`` (fabric latency and
    link bandwidth x0.5 / x2, HBM bandwidth x0.5 / x2, fusion factor 1 / 10, transport
    load/store / RDMA), under the report's decode conditions.
    """
    from ._decode import decode_step
    from ._models import model_config

    f = _fabric(system)
    m = model_config(model)

    def run(fab=f, **kw):
        return decode_step(m, fab, batch=DECODE_BATCH, context=DECODE_CONTEXT, **kw).time

    chip = f.chip
    half = dataclasses.replace(chip, hbm_bandwidth=chip.hbm_bandwidth / 2)
    double = dataclasses.replace(chip, hbm_bandwidth=chip.hbm_bandwidth * 2)
    cases = (("fabric latency", "x0.5", "x2", lambda: run(_scaled_fabric(f, latency=0.5)),
              lambda: run(_scaled_fabric(f, latency=2.0))),
             ("link bandwidth", "x0.5", "x2", lambda: run(_scaled_fabric(f, bandwidth=0.5)),
              lambda: run(_scaled_fabric(f, bandwidth=2.0))),
             ("HBM bandwidth", "x0.5", "x2", lambda: run(chip=half), lambda: run(chip=double)),
             ("kernel fusion factor", "1", "10", lambda: run(fusion_factor=1.0),
              lambda: run(fusion_factor=10.0)),
             ("transport", "load/store", "RDMA", lambda: run(transport="loadstore"),
              lambda: run(transport="rdma")))
    rows = [{"system": system, "model": model, "parameter": p, "low": lo, "high": hi,
             "value_low": low(), "value_high": high()} for p, lo, hi, low, high in cases]
    return run(), rows


def _draw_tornado(rows, base):
    fig = _figure()
    ax = fig.subplots()
    _plots.plot_tornado(rows, base, ax=ax, xlabel="time per decode step")
    return fig


def _sensitivity_finding(rows, base):
    r0 = rows[0]
    ranked = sorted(rows, key=lambda r: -abs(r["value_high"] - r["value_low"]))

    def swing(r):
        return (f"{r['parameter']} ({r['low']}: {format_time(r['value_low'])}, {r['high']}: "
                f"{format_time(r['value_high'])})")

    return (f"{r0['model']} on {r0['system']} ({format_time(base)} per step) is most "
            f"sensitive to {swing(ranked[0])}, then {swing(ranked[1])}; least to "
            f"{swing(ranked[-1])}.")


def _decode_findings(rows, systems):
    out = []
    for model in DECODE_MODELS:
        mine = {r["system"]: r for r in rows if r["model"] == model}
        if len(systems) >= 2 and systems[0] in mine and systems[1] in mine:
            a, b = mine[systems[0]], mine[systems[1]]
            launch = a["launch_s"] / a["time_s"]
            out.append(
                f"Decoding {model} at batch {DECODE_BATCH} takes {format_time(a['time_s'])} per "
                f"token on {a['system']} ({a['tokens_per_s_user']:.0f} tokens/s) and "
                f"{format_time(b['time_s'])} on {b['system']} ({b['tokens_per_s_user']:.0f} "
                f"tokens/s); on {a['system']} launch bubbles are {launch:.0%} of the step and "
                f"exposed communication {a['exposed_comm_s'] / a['time_s']:.0%}.")
    seed = [r for r in rows if r["model"] == "hypothetical-2.8t" and r["system"] == systems[0]]
    if seed:
        r = seed[0]
        out.append(f"The seed's {SEED_MS_PER_TOKEN * 1e3:g} ms per token for its 2.8T model: "
                   f"the model gives {format_time(r['time_s'])} for the hypothetical 2.8T "
                   f"config on {r['system']} under these defaults.")
    return out


# -- all-to-all, link utilization and failures ----------------------------------------------

#: Bytes each chip sends to each other chip in the all-to-all of the failure table.
A2A_BYTES_PER_PAIR = 2**20


def _all_to_all(f, chips=None):
    """Uniform all-to-all among ``chips`` (default all), one byte per ordered pair, routed.

    Returns the per-directed-link seconds per byte (load / bandwidth), the drain
    time (the busiest link's), each chip's throughput ((n - 1) bytes sent in the
    drain time) and the one-way path latencies of the pairs.
    """
    r = f.router
    ep = f.endpoint_indices if chips is None else np.array(
        [f.node_index[c] for c in chips], dtype=np.int64)
    src, dst = np.meshgrid(ep, ep, indexing="ij")
    off = src != dst
    src, dst = src[off], dst[off]
    seconds = r.loads(src, dst, 1.0) / r.link_bandwidth
    drain = float(seconds.max())
    return {"seconds": seconds, "drain": drain, "throughput": (len(ep) - 1) / drain,
            "latency": r.latency(src, dst)}


def _draw_utilization(util):
    fig = _figure()
    ax = fig.subplots()
    _plots.plot_link_utilization(util, ax=ax)
    return fig


def _utilization_section(fabrics):
    rows, util = [], {}
    for name, f in fabrics.items():
        a2a = _all_to_all(f)
        u = a2a["seconds"] / a2a["drain"]
        util[name] = u
        k = int(np.argmax(a2a["seconds"]))
        tail, head = f.router.link_name(k)
        rows.append({"system": name, "a2a_throughput_per_chip_Bps": a2a["throughput"],
                     "busiest_link": f"{tail}->{head}", "links_directed": len(u),
                     "links_idle": int(np.sum(u == 0)),
                     "links_over_half": int(np.sum(u > 0.5)),
                     "mean_utilization": float(u.mean())})
    columns = (Column("system", "system"),
               Column("a2a_throughput_per_chip_Bps", "all-to-all per chip", format_bandwidth),
               Column("mean_utilization", "mean link utilization", _fmt_float(2)),
               Column("links_over_half", "links > 50%"), Column("links_idle", "idle links"),
               Column("links_directed", "directed links"),
               Column("busiest_link", "a busiest link"))
    table = Table("all_to_all", "Uniform all-to-all, routed", columns, tuple(rows),
                  "Every chip sends the same amount to every other; routes by each fabric's "
                  "policy, bytes split evenly over equal-cost paths. Throughput per chip = "
                  "bytes a chip sends / time the busiest link needs. Utilization = a link's "
                  "load / bandwidth over the busiest link's.")
    fig = FigureSpec("link-utilization", "All-to-all link utilization",
                     "Utilization of every directed link under uniform all-to-all, busiest "
                     "first (1 = the bottleneck link).", functools.partial(_draw_utilization, util))
    return Section("utilization", "All-to-all and link utilization", tables=(table,),
                   figures=(fig,)), _utilization_findings(rows)


def _utilization_findings(rows):
    a = rows[0]
    if len(rows) == 1:
        return [(f"Under uniform all-to-all, {a['system']} sustains "
                f"{format_bandwidth(a['a2a_throughput_per_chip_Bps'])} per chip.")]
    b = rows[1]
    ta, tb = a["a2a_throughput_per_chip_Bps"], b["a2a_throughput_per_chip_Bps"]
    winner, loser = (a, b) if ta >= tb else (b, a)
    out = [(f"Under uniform all-to-all (routed, equal-cost paths split evenly), {a['system']} "
           f"sustains {format_bandwidth(ta)} per chip and {b['system']} {format_bandwidth(tb)}: "
           f"{winner['system']} is {_times(max(ta, tb), min(ta, tb))} faster; the "
           f"bottleneck on {loser['system']} is a link such as {loser['busiest_link']}.")]
    return out


def _reduce_link(f, u, v):
    """``f`` with one physical link of the edge (u, v) failed: a bundle loses one lane's
    bandwidth; a single link is removed (:meth:`fabric.Fabric.without`)."""
    import networkx as nx

    data = f.graph.edges[u, v]
    lanes = data.get("lanes", 1)
    if lanes <= 1:
        return f.without(links=[(u, v)])
    H = nx.Graph(f.graph)
    H.edges[u, v]["bandwidth"] = data["bandwidth"] * (lanes - 1) / lanes
    H.edges[u, v]["lanes"] = lanes - 1
    nx.freeze(H)
    return f.replace(graph=H, name=f"{f.name} without one link of {u}-{v}")


def _failure_candidates(f):
    """Edges whose failure is a fabric link failing: switch-switch links, or chip-chip
    links of a direct network; where there are none (one switch tier), every edge."""
    G = f.graph
    kinds = {n: k for n, k in G.nodes(data="kind")}
    core = [i for i, (u, v) in enumerate(G.edges)
            if kinds[u] == kinds[v] and kinds[u] in ("switch", "chip")]
    return core or list(range(G.number_of_edges()))


def _failure_rows(name, f):
    from fabric import RoutingError

    healthy = _all_to_all(f)
    per_edge = healthy["seconds"].reshape(-1, 2).max(axis=1)
    cand = _failure_candidates(f)
    e = cand[int(np.argmax(per_edge[cand]))]
    u, v = list(f.graph.edges)[e]
    victim = f.endpoints[0]
    survivors = [c for c in f.endpoints if c != victim]
    cases = (("one link", f"{u}-{v}", lambda: _reduce_link(f, u, v), None),
             ("one chip", str(victim), lambda: f.without(chips=[victim]), survivors))
    rows = []
    for failure, what, degrade, chips in cases:
        base = healthy if chips is None else _all_to_all(f, chips)
        try:
            bad = _all_to_all(degrade())
        except RoutingError as err:
            rows.append({"system": name, "failure": failure, "failed": what,
                         "metric": "all-to-all time",
                         "healthy": base["drain"] * A2A_BYTES_PER_PAIR,
                         "degraded": float("inf"), "change": float("inf"),
                         "note": f"disconnects: {err}"})
            continue
        for metric, key in (("all-to-all time", "drain"), ("mean path latency", "latency"),
                            ("worst path latency", "latency")):
            if key == "drain":
                h, d = base["drain"] * A2A_BYTES_PER_PAIR, bad["drain"] * A2A_BYTES_PER_PAIR
            elif metric == "mean path latency":
                h, d = float(base["latency"].mean()), float(bad["latency"].mean())
            else:
                h, d = float(base["latency"].max()), float(bad["latency"].max())
            rows.append({"system": name, "failure": failure, "failed": what, "metric": metric,
                         "healthy": h, "degraded": d, "change": 100.0 * (d - h) / h,
                         "note": ""})
    return rows


def _draw_failures(rows):
    fig = _figure()
    ax = fig.subplots()
    shown = [r for r in rows if r["metric"] == "all-to-all time" and np.isfinite(r["change"])]
    _plots.plot_failure_cost(shown, ax=ax)
    ax.set_xlabel("all-to-all time change (%)")
    return fig


def _failure_section(fabrics):
    rows = []
    for name, f in fabrics.items():
        rows.extend(_failure_rows(name, f))
    columns = (Column("system", "system"), Column("failure", "failure"),
               Column("failed", "what failed"), Column("metric", "metric"),
               Column("healthy", "healthy", _fmt_metric), Column("degraded", "degraded",
                                                                 _fmt_metric),
               Column("change", "change (%)", lambda v: f"{v:+.1f}"),
               Column("note", "note"))
    table = Table("failures", "The cost of one failure", columns, tuple(rows),
                  "One link: the busiest fabric link under all-to-all (one cable of a bundle "
                  "loses its share of the bundle's bandwidth, and ECMP keeps splitting evenly; "
                  "a single cable is removed and routes detour). One chip: the first chip, "
                  "compared with the healthy fabric carrying the same survivors' all-to-all. "
                  "All-to-all time: 1 MiB from every chip to every other (seconds in the CSV).")
    fig = FigureSpec("failures", "Cost of one failed link and one failed chip",
                     "Change of the all-to-all time (the busiest link's load over its "
                     "bandwidth) after one failure.", functools.partial(_draw_failures, rows))
    return Section("failures", "Failures", tables=(table,), figures=(fig,)), \
        _failure_findings(rows)


def _fmt_metric(v):
    return "disconnected" if v == float("inf") else format_time(v)


def _failure_findings(rows):
    out = []
    systems = list(dict.fromkeys(r["system"] for r in rows))
    for failure in ("one link", "one chip"):
        parts = []
        for s in systems[:2]:
            r = next(r for r in rows if r["system"] == s and r["failure"] == failure
                     and r["metric"] == "all-to-all time")
            if np.isfinite(r["change"]):
                parts.append(f"{s} {r['change']:+.1f}% ({r['failed']})")
            else:
                parts.append(f"{s}: some chip pairs lose every path ({r['failed']})")
        out.append(f"One failed {failure.split()[1]} changes the all-to-all time by: "
                   + "; ".join(parts) + ".")
    return out


# -- topology drawings and assumptions ----------------------------------------------------


def _draw_topology(name):
    fabric = _fabric(name)
    fig = _figure()
    coords = [fabric.graph.nodes[n].get("coord") for n in fabric.endpoints]
    three_d = all(c is not None and len(c) == 3 for c in coords)
    ax = fig.add_subplot(projection="3d" if three_d else None)
    _plots.plot_topology(fabric, ax=ax)
    return fig


def _topology_section(fabrics):
    figures = []
    for name, f in fabrics.items():
        m = f.graph.number_of_edges()
        figures.append(FigureSpec(
            f"topology-{_slug(name)}", f"Topology of {name}",
            f"{name}: {f.n_endpoints} chips, {m} graph edges (a bundle of parallel links is "
            "one edge). Hyper-meshes and tori are drawn in 3D by chip coordinate (links "
            "between non-neighbours of a line as arcs); switched fabrics in layers by tier.",
            functools.partial(_draw_topology, name), height=3.0))
    return Section("topology", "Topology drawings", figures=tuple(figures)), []


def _assumptions_section(fabrics, extra=()):
    """Every Parameter each system's model used: the fabric's own (links, chip, builder)
    and ``extra`` (system, Parameter) pairs from the sections (transports...)."""
    rows = []
    for name, f in fabrics.items():
        params = list(f.assumptions)
        for system, p in extra:
            if system == name and p not in params:
                params.append(p)
        for p in params:
            rows.append({"system": name, "parameter": p.name, "value": p.value,
                         "unit": p.unit, "source": p.source})
    # One row per parameter for reading (with the systems using it); the CSV stays tidy.
    merged = {}
    for r in rows:
        key = (r["parameter"], repr(r["value"]), r["unit"], r["source"])
        merged.setdefault(key, dict(r, systems=[]))["systems"].append(r["system"])
    shown = tuple(dict(r, systems=", ".join(r["systems"]),
                       shown=_fmt_value(r["value"], r["unit"]))
                  for r in merged.values())
    columns = (Column("parameter", "parameter"), Column("shown", "value"),
               Column("unit", "unit"), Column("systems", "used by"),
               Column("source", "source"))
    table = Table("assumptions", "Every parameter the systems use", columns, shown,
                  "Values in SI units in assumptions.csv (one row per system and parameter).",
                  csv_columns=("system", "parameter", "value", "unit", "source"),
                  csv_rows=tuple(rows))
    return Section("assumptions", "Assumptions", tables=(table,)), []


def _slug(name):
    return re.sub(r"[^A-Za-z0-9.]+", "-", name).strip("-")


# -- building ----------------------------------------------------------------------------------


def _build_fabrics(systems):
    if isinstance(systems, str):
        systems = [systems]
    systems = list(systems)
    if not systems:
        raise ValueError("systems: name at least one system")
    if len(set(systems)) != len(systems):
        raise ValueError(f"systems must be distinct, got {systems!r}")
    fabrics = {}
    for name in systems:
        if not isinstance(name, str):
            raise TypeError(f"a system is a preset name or spec string, got {name!r}")
        fabrics[name] = _fabric(name)
    return fabrics


def build_report(systems=DEFAULT_SYSTEMS, *, sizes=None, ops=None, sections=SECTIONS,
                 executor=None, quiet=False, command=None):
    """Compute a comparison report of ``systems``.

    Parameters
    ----------
    systems : sequence of str
        Preset names or spec strings (``topologies.build`` accepts them); the
        first two are compared head to head in the findings, the rest alongside.
    sizes : sequence of int or str, optional
        Collective sizes per rank (nccl-tests convention), sizes or ranges as
        :func:`parse_sizes` reads them. Default :data:`DEFAULT_SIZES` (1 KiB-1 GiB).
    ops : sequence of str, optional
        Collective operations. Default :data:`DEFAULT_OPS`.
    sections : sequence of str
        Which of :data:`SECTIONS` to include (the assumptions always are;
        ``"symmetric"`` comes with ``"collectives"``).
    executor : concurrent.futures.Executor, optional
        Runs the collective sweep (see :func:`analysis.sweep`); results are the same.
    quiet : bool
        No progress bar.
    command : str, optional
        The command line shown as how to reproduce the report.

    Returns
    -------
    Report

    Raises
    ------
    fabric.SpecError
        For a system no builder knows, or an unknown operation.
    ValueError
        For an unknown section, no systems, or a size that does not parse.
    """
    unknown = [s for s in sections if s not in SECTIONS]
    if unknown:
        raise ValueError(f"unknown report section(s) {unknown}; known: {', '.join(SECTIONS)}")
    sizes = parse_sizes(DEFAULT_SIZES if sizes is None else sizes)
    ops = _check_ops(DEFAULT_OPS if ops is None else ops)
    fabrics = _build_fabrics(systems)
    builders = {"structure": _structure_section, "latency": _latency_section,
                "utilization": _utilization_section, "failures": _failure_section,
                "topology": _topology_section}
    parts, groups = [], []
    titles = {"structure": "Structure", "latency": "Access latency",
              "collectives": "Collectives", "symmetric": "Symmetric memory",
              "decode": "MoE decode", "utilization": "All-to-all", "failures": "Failures",
              "topology": "Topology"}

    def found(key, sentences):
        if sentences:
            groups.append((titles[key], tuple(sentences)))

    # No progress bar of its own: the long stages (sweeps, figures) draw theirs, and two
    # bars on one terminal line would overwrite each other.
    for key in (s for s in SECTIONS if s in sections and s != "symmetric"):
        if key == "collectives":
            section, sentences, (sym, sym_sentences) = _collectives_section(
                fabrics, ops, sizes, executor, quiet)
            parts.append(section)
            found(key, sentences)
            if "symmetric" in sections:
                if sym is not None:
                    parts.append(sym)
                found("symmetric", sym_sentences)
        elif key == "decode":
            section, sentences = _decode_section(fabrics, executor, quiet)
            if section is not None:
                parts.append(section)
            found(key, sentences)
        else:
            section, sentences = builders[key](fabrics)
            parts.append(section)
            found(key, sentences)
    used = [sp for section in parts for sp in section.parameters]
    assumptions, _ = _assumptions_section(fabrics, used)
    parts.append(assumptions)
    if command is None:
        command = "cofabric report " + " ".join(fabrics)
    return Report(tuple(fabrics), tuple(groups), tuple(parts), command)


# -- rendering ----------------------------------------------------------------------------------

_CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1a1a1a;
       max-width: 62rem; margin: 2rem auto; padding: 0 1rem; line-height: 1.45; }
h1 { font-size: 1.6rem; margin-bottom: 0.2rem; }
h2 { font-size: 1.25rem; border-bottom: 1px solid #ccc; padding-bottom: 0.2rem;
     margin-top: 2.2rem; }
.sub { color: #555; margin-top: 0; }
.findings { background: #f4f7fb; border-left: 4px solid #0072B2; padding: 0.2rem 1rem; }
.findings h4 { margin: 0.6rem 0 0.1rem 0; font-size: 0.95rem; }
.findings ul { margin: 0.1rem 0 0.4rem 0; padding-left: 1.4rem; }
table { border-collapse: collapse; margin: 0.8rem 0; font-size: 0.85rem; }
th, td { border-bottom: 1px solid #ddd; padding: 0.25rem 0.6rem; text-align: left;
         vertical-align: top; }
th { background: #f0f0f0; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
caption { caption-side: bottom; text-align: left; color: #555; font-size: 0.8rem;
          padding-top: 0.3rem; }
figure { margin: 1.2rem 0; }
figure svg { width: 100%; height: auto; display: block; }
figure.single svg { max-width: 36rem; }
figure.double svg { max-width: 60rem; }
figcaption { color: #444; font-size: 0.85rem; max-width: 44rem; }
.wide { overflow-x: auto; }
code { background: #f3f3f3; padding: 0 0.2rem; }
footer { margin-top: 3rem; color: #666; font-size: 0.8rem; }
nav ol { columns: 2; }
@media print {
  body { max-width: none; margin: 0; font-size: 10pt; }
  nav { display: none; }
  figure, table { break-inside: avoid; }
  .wide { overflow: visible; }
  table { font-size: 7.5pt; }
  h2 { break-after: avoid; }
  a { color: inherit; text-decoration: none; }
}
"""


def _prefix_svg_ids(svg, prefix):
    """Make the ids of one inline SVG unique in the page (matplotlib reuses glyph ids)."""
    ids = set(re.findall(r'\bid="([^"]+)"', svg))
    svg = re.sub(r'\bid="([^"]+)"', lambda m: f'id="{prefix}{m.group(1)}"', svg)

    def ref(m):
        return m.group(1) + prefix + m.group(2) if m.group(2) in ids else m.group(0)

    svg = re.sub(r'(url\(#)([^)]+)(?=\))', ref, svg)
    return re.sub(r'((?:xlink:)?href="#)([^"]+)(?=")', ref, svg)


def _cell(col, row):
    value = row.get(col.key, "")
    return col.fmt(value) if value != "" else ""


def _is_numeric_column(col, rows):
    return bool(rows) and all(isinstance(r.get(col.key), (int, float))
                              and not isinstance(r.get(col.key), bool) for r in rows)


def _html_table(t):
    if not t.rows:  # a table kept only as data (every row of a sweep)
        return (f'<p class="sub">{html.escape(t.caption or "All rows")}: '
                f'<a href="{t.name}.csv">{t.name}.csv</a></p>')
    head = "".join(f"<th>{html.escape(c.label)}</th>" for c in t.columns)
    numeric = [_is_numeric_column(c, t.rows) for c in t.columns]
    body = []
    for row in t.rows:
        cells = "".join(
            f'<td class="num">{html.escape(_cell(c, row))}</td>' if num
            else f"<td>{html.escape(_cell(c, row))}</td>" for c, num in zip(t.columns, numeric))
        body.append(f"<tr>{cells}</tr>")
    caption = f"<caption>{html.escape(t.caption)}</caption>" if t.caption else ""
    title = f"<h3>{html.escape(t.title)}</h3>" if t.title else ""
    return (f'{title}<div class="wide"><table id="table-{t.name}">{caption}'
            f"<thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table></div>"
            f'<p class="sub">Data: <a href="{t.name}.csv">{t.name}.csv</a></p>')


def render_html(report, svgs):
    """The report as one self-contained HTML page; ``svgs`` maps figure name to SVG text."""
    esc = html.escape
    parts = ["<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
             '<meta name="viewport" content="width=device-width, initial-scale=1">',
             f"<title>cofabric report: {esc(' vs '.join(report.systems[:2]))}</title>",
             f"<style>{_CSS}</style>", "</head>", "<body>",
             f"<h1>Fabric comparison: {esc(', '.join(report.systems))}</h1>",
             ('<p class="sub">Generated by cofabric. Reproduce with '
             f"<code>{esc(report.command)}</code>.</p>"),
             "<h2 id=\"findings\">Findings</h2>", '<div class="findings">']
    for title, group in report.finding_groups:
        parts.append(f"<h4>{esc(title)}</h4><ul>")
        parts += [f"<li>{esc(s)}</li>" for s in group]
        parts.append("</ul>")
    parts.append("</div>")
    parts.append("<nav><h2>Contents</h2><ol>")
    parts += [f'<li><a href="#{s.key}">{esc(s.title)}</a></li>' for s in report.sections]
    parts.append("</ol></nav>")
    for s in report.sections:
        parts.append(f'<section id="{s.key}"><h2>{esc(s.title)}</h2>')
        parts += [f"<p>{esc(p)}</p>" for p in s.text]
        parts += [_html_table(t) for t in s.tables]
        for f in s.figures:
            svg = _prefix_svg_ids(svgs[f.name], f"{_slug(f.name)}-")
            parts.append(
                f'<figure id="fig-{f.name}" class="{f.column}">{svg}<figcaption><b>'
                f"{esc(f.title)}.</b> {esc(f.caption)} Files: "
                + ", ".join(f'<a href="figures/{f.name}.{x}">{x.upper()}</a>'
                            for x in FIGURE_FORMATS)
                + "</figcaption></figure>")
        parts.append("</section>")
    parts.append("<footer>All numbers come from the model and the parameters listed under "
                 "Assumptions; none is measured. Tables are in the CSV files beside this "
                 "page.</footer>")
    parts += ["</body>", "</html>", ""]
    return "\n".join(parts)


def _md_escape(text):
    return str(text).replace("|", "\\|").replace("\n", " ")


def render_markdown(report):
    """The report as Markdown, figures linked from ``figures/``."""
    lines = [f"# Fabric comparison: {', '.join(report.systems)}", "",
             f"Generated by cofabric. Reproduce with `{report.command}`.", "",
             "## Findings", ""]
    for title, group in report.finding_groups:
        lines += [f"**{title}**", ""] + [f"- {s}" for s in group] + [""]
    for s in report.sections:
        lines += ["", f"## {s.title}", ""]
        for p in s.text:
            lines += [p, ""]
        for t in s.tables:
            if not t.rows:
                lines += [f"{t.caption or 'All rows'}: [{t.name}.csv]({t.name}.csv)", ""]
                continue
            if t.title:
                lines += [f"### {t.title}", ""]
            lines.append("| " + " | ".join(_md_escape(c.label) for c in t.columns) + " |")
            lines.append("|" + "|".join(
                "---:" if _is_numeric_column(c, t.rows) else "---" for c in t.columns) + "|")
            for row in t.rows:
                lines.append("| " + " | ".join(_md_escape(_cell(c, row)) for c in t.columns)
                             + " |")
            lines += ["", (t.caption + " " if t.caption else "") + f"Data: [{t.name}.csv]"
                      f"({t.name}.csv)", ""]
        for f in s.figures:
            lines += [f"![{f.title}](figures/{f.name}.svg)", "",
                      (f"*{f.title}.* {f.caption} ([PDF](figures/{f.name}.pdf), "
                      f"[PNG](figures/{f.name}.png))"), ""]
    return "\n".join(lines).rstrip() + "\n"


def _csv_text(table):
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    rows = table.csv_rows if table.csv_rows is not None else table.rows
    # Every field of the rows (not only the shown columns), in first-seen order.
    keys = list(table.csv_columns or dict.fromkeys(k for row in rows for k in row)
                or [c.key for c in table.columns])
    w.writerow(keys)
    for row in rows:
        # repr of a float round-trips exactly; float() first, since numpy 2's repr of its
        # scalars is "np.float64(...)"
        w.writerow([repr(float(v)) if isinstance(v, float) else v
                    for v in (row.get(k, "") for k in keys)])
    return buf.getvalue()


def _figure():
    # A bare Figure, not pyplot: no backend, no global figure registry, nothing to close,
    # so report figures neither need a display nor touch a user's interactive session.
    from matplotlib.figure import Figure

    return Figure()


def _render_one(spec, directory):
    """Draw one figure in the paper style, save PDF/SVG/PNG, return its SVG text."""
    with paper_style(spec.column, height=spec.height):
        fig = spec.draw()
        paths = save_figure(fig, Path(directory) / spec.name)
    svg = paths[FIGURE_FORMATS.index("svg")].read_text(encoding="utf-8")
    return svg[svg.find("<svg"):]


def _render_figures(figures, directory, quiet=False, executor=None):
    """Draw each figure once (in parallel on ``executor``); return name -> SVG text."""
    from ._sweep import sweep

    svgs = sweep(_render_one, [{"spec": f, "directory": str(directory)} for f in figures],
                 executor=executor, quiet=quiet, desc="figures")
    return {f.name: svg for f, svg in zip(figures, svgs)}


def check_report_dir(out, force=False):
    """Check that a report can be written to ``out``; return it as a Path.

    Call it before a long computation to fail early; :func:`write_report` calls
    it again.

    Raises
    ------
    FileExistsError
        If ``out`` is a file, or a non-empty directory and ``force`` is false.
    FileNotFoundError, PermissionError
        If the parent of ``out`` is missing or not writable.

    Examples
    --------
    >>> check_report_dir("/no/such/dir/report")
    Traceback (most recent call last):
    ...
    FileNotFoundError: cannot write the report to /no/such/dir/report: /no/such/dir does not exist
    """
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise FileExistsError(f"--out {out} exists and is not a directory")
    if out.is_dir() and any(out.iterdir()) and not force:
        raise FileExistsError(f"{out} already holds files; pass --force to replace it")
    parent = out.resolve().parent
    if not parent.is_dir():
        raise FileNotFoundError(f"cannot write the report to {out}: {parent} does not exist")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise PermissionError(f"cannot write the report to {out}: {parent} is not writable")
    return out


def _replace_dir(tmp, out):
    """Move the finished ``tmp`` to ``out``, replacing what was there, never half-way."""
    old = None
    if out.exists():
        old = Path(tempfile.mkdtemp(prefix=f".{out.name}.old-", dir=out.resolve().parent))
        os.rename(out, old / out.name)
    try:
        os.rename(tmp, out)
    except OSError:
        if old is not None:  # put the old report back
            os.rename(old / out.name, out)
        raise
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def write_report(report, out="report", *, force=False, quiet=False, executor=None):
    """Write ``report`` to the directory ``out``; return the path of its ``index.html``.

    Parameters
    ----------
    report : Report
    out : str or os.PathLike
        The directory to create. An existing non-empty directory is only replaced
        with ``force=True``.
    force : bool
    quiet : bool
        No progress bar.
    executor : concurrent.futures.Executor, optional
        Draws the figures in parallel; the files are the same.

    Raises
    ------
    FileExistsError
        If ``out`` holds files and ``force`` is false, or is a file.
    PermissionError, FileNotFoundError
        If ``out``'s parent is not a writable directory.

    Examples
    --------
    >>> import tempfile
    >>> r = build_report(["torus:4x4"], sections=("structure",), quiet=True)
    >>> with tempfile.TemporaryDirectory() as d:
    ...     index = write_report(r, Path(d) / "report", quiet=True)
    ...     sorted(p.name for p in index.parent.iterdir())
    ['assumptions.csv', 'figures', 'index.html', 'report.md', 'summary.csv']
    """
    out = check_report_dir(out, force)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.tmp-", dir=out.resolve().parent))
    try:
        svgs = _render_figures(report.figures, tmp / "figures", quiet=quiet,
                               executor=executor)
        for table in report.tables:
            (tmp / f"{table.name}.csv").write_text(_csv_text(table), encoding="utf-8")
        (tmp / "index.html").write_text(render_html(report, svgs), encoding="utf-8")
        (tmp / "report.md").write_text(render_markdown(report), encoding="utf-8")
        os.chmod(tmp, 0o755)  # mkdtemp makes it private; a report is for reading
        _replace_dir(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return out / "index.html"


def write_figures(out="figures", names=README_FIGURES, *, quiet=False, executor=None):
    """Regenerate the figures the README shows into ``out``; return the files written.

    They are figures of the default systems' report with the all-reduce sweep
    (``cofabric report --ops all-reduce``); the same inputs give the same bytes.

    Parameters
    ----------
    out : str or os.PathLike
        Directory (created if missing); existing files of these names are replaced.
    names : sequence of str
        Which figures (default :data:`README_FIGURES`).
    quiet : bool
    executor : concurrent.futures.Executor, optional
        Draws the figures in parallel.

    Raises
    ------
    ValueError
        If a name is not a figure of that report.
    """
    report = build_report(DEFAULT_SYSTEMS, ops=("all-reduce",), sections=_README_SECTIONS,
                          executor=executor, quiet=quiet, command="cofabric figures")
    known = {f.name: f for f in report.figures}
    unknown = [n for n in names if n not in known]
    if unknown:
        raise ValueError(f"unknown figure(s) {unknown}; known: {', '.join(known)}")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    _render_figures([known[n] for n in names], out, quiet=quiet, executor=executor)
    return [out / f"{n}.{x}" for n in names for x in FIGURE_FORMATS]
