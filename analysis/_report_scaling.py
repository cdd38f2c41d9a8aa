"""The report's scaling section: each fabric family at growing size, per-chip metrics.

A reduced run of :func:`analysis.scaling_study` that fits the default report's time
budget: every family at about :data:`REPORT_SIZES` chips, with the structural metrics
(bisection and routed all-to-all per chip), cost and power per chip at every size and
collectives and decode up to :data:`REPORT_EVALUATED_LIMIT` chips. The full study (64 to
16k chips, every metric at every size) is `cofabric scaling` (about 2 minutes on two
cores); the section says so, and its findings state the assumptions the curves rest on.
"""

import functools

from ._plots import dodge_markers
from ._report_fair import assumed_parameters, usd_text
from ._report_parts import (
    DECODE_BATCH,
    DECODE_CONTEXT,
    DECODE_MODELS,
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
)
from ._scaling import (
    DECODE_CHIPS,
    RUNTIME,
    SCALING_FAMILIES,
    SCALING_METRICS,
    draw_scaling,
    scaling_study,
)

__all__ = []

#: Target chip counts of the report's reduced study (each family's nearest buildable size).
REPORT_SIZES = (64, 512, 4096)

#: Largest chip count at which the report evaluates collectives and decode (the time budget:
#: the rail-optimized families' collectives take about 5 s each at 512 chips).
REPORT_EVALUATED_LIMIT = 512

#: The report's limit on the rail-optimized families' collectives (their router takes about
#: 5 s per collective at 512 chips, a third of the report's scaling budget), and why.
REPORT_ROUTER_LIMIT = ({"rail": 64, "domains": 64},
                       ("the report's time budget (about 5 s per rail-optimized collective at "
                        "512 chips); cofabric scaling evaluates them at every size"))

#: The metrics of the study that are collectives, timed under the study's runtime.
_COLLECTIVE_METRICS = ("allreduce_1GiB_s", "alltoall_1MiB_s")

#: Cost book of the study (the cost section's).
_BOOK = "street-2026"


def metric_runtime_label(metric):
    """The few words naming the runtime a study metric's times are under (no software costs
    for the collectives, NCCL for the decode step's), None for a metric that times nothing:
    a panel or figure of one metric, used on its own, says what its times include.

    >>> metric_runtime_label("allreduce_1GiB_s")
    "model's schedules, no software costs"
    >>> metric_runtime_label("bisection_per_chip_Bps") is None
    True
    """
    if metric in _COLLECTIVE_METRICS:
        return runtime_label(RUNTIME)
    if metric == "decode_step_s":
        return runtime_label(default_runtime())
    return None


def scaling_columns():
    """The study's table columns, each metric with its label and format: the report's
    scaling table and `cofabric scaling`'s scaling.md show the same."""
    def opt(fmt):
        return lambda v: "n/a" if v is None else fmt(v)

    return (
        Column("family", "family"), Column("chips", "chips", lambda v: f"{v:,}"),
        Column("bisection_per_chip_Bps", "bisection / chip", opt(computed_bandwidth)),
        Column("a2a_per_chip_Bps", "all-to-all / chip", opt(computed_bandwidth)),
        Column("allreduce_1GiB_s", "all-reduce 1GiB", opt(computed_time)),
        Column("alltoall_1MiB_s", "all-to-all 1MiB", opt(computed_time)),
        Column("decode_step_s", "decode step", opt(computed_time)),
        Column("decode_instance", "decode instance", opt(str)),
        Column("network_cost_usd_per_chip", "network $ / chip", opt(usd_text)),
        Column("network_power_w_per_chip", "network W / chip", opt(lambda v: f"{v:.0f} W")),
    )


def scaling_runtimes():
    """What the study's times include, one sentence for its table and figure captions."""
    return (f"All-reduce and all-to-all with no software costs ({runtime_phrase(RUNTIME)}, "
            f"the same for every family); the decode step ({DECODE_MODELS[0]}, batch "
            f"{DECODE_BATCH}, {DECODE_CONTEXT}-token context, best layout over the first "
            f"{DECODE_CHIPS} chips) with its tensor-parallel collectives under the "
            f"{runtime_phrase()} (the report's decode settings).")


def scaling_placement():
    """Where the study's decode instance sits, one sentence for its table and page: the same
    rule on every family, and what follows on a dragonfly (a family's point can move with
    where its first chips fall, not with its size)."""
    return (f"Each decode instance is the first {DECODE_CHIPS} chips (all of a smaller fabric), "
            "as decode places every instance (whole load/store domains first; the same rule "
            "on every family, none placed by hand); the decode instance column says what they "
            "span. A dragonfly is routed minimally: every byte between two groups crosses the "
            "one global link joining them, so an instance over few groups waits on few "
            "global links, and a dragonfly's decode point moves with how its first "
            f"{DECODE_CHIPS} chips fall into groups, not with its size.")


def _draw(rows):
    fig = new_figure()
    metrics = list(SCALING_METRICS)
    axes = fig.subplots(2, 4).ravel()
    # a panel used on its own says what its times include (no software costs, or NCCL);
    # a label's clauses one per line: a quarter of the figure's width holds about 26
    # characters, and the label ran into the next panel's title
    under = {m: metric_runtime_label(m) for m in metrics}
    under = {m: label.replace(", ", ",\n") for m, label in under.items() if label}
    for ax, metric in zip(axes, metrics):
        draw_scaling(rows, metric, ax=ax, legend=False)
        lo, hi = ax.get_xlim()      # room at both ends for markers set side by side
        ax.set_xlim(lo / 1.3, hi * 1.3)
        ax.set_xticks(REPORT_SIZES)     # the study's sizes (a wider axis ticked 32, 512, 8k)
        title = SCALING_METRICS[metric][0]
        ax.set_title(f"{title}\n{under[metric]}" if metric in under else title,
                     fontsize="small")
        ax.set_ylabel(SCALING_METRICS[metric][2])
    axes[-1].set_axis_off()
    handles, labels = axes[0].get_legend_handles_labels()
    # two columns: in one, the legend ran down onto the note below it
    axes[-1].legend(handles, labels, loc="upper center", fontsize="small", frameon=False,
                    title="family", ncol=2, columnspacing=1.0)
    lim = REPORT_ROUTER_LIMIT[0]
    # a figure read on its own must say which runtime its times are under
    axes[-1].text(0.5, 0.02, f"collectives under runtime '{RUNTIME}', decode under "
                  f"'{default_runtime()}'\n"
                  f"collectives and decode to {REPORT_EVALUATED_LIMIT} chips\n"
                  f"(rail, domains collectives to {lim['rail']});\nall sizes: cofabric scaling\n"
                  "markers that would hide one another\nare set side by side",
                  ha="center", va="bottom", fontsize="x-small", transform=axes[-1].transAxes)
    # rail, domains and torus at 64 chips (all-reduce), rail and domains in cost and power:
    # values a few percent apart hid all but one marker
    dodge_markers(fig)
    return fig


def _links(rows):
    """'family tech/tech' for each family, from its smallest built fabric, and the assumed
    link and chip parameters among them (name -> what: bandwidth, latency, reduce_rate)."""
    said, assumed = [], {}
    for fam in dict.fromkeys(r["family"] for r in rows):
        spec = next(r["spec"] for r in rows if r["family"] == fam)
        f = report_fabric(spec)
        techs = sorted({d.get("tech") for *_, d in f.graph.edges(data=True)} - {None})
        said.append(f"{fam} {'/'.join(techs)}")
        assumed.update({n: what for n, (_, what) in assumed_parameters({spec: f}).items()})
    return "; ".join(said), assumed


def _assumes(assumed, rests_on, kinds):
    """' Assumes: ...' for one finding: what it rests on, the assumed parameters (``assumed``,
    from :func:`_links`) of the kinds it uses, and the report's reduced range."""
    names = sorted(n for n, what in assumed.items() if what in kinds)
    tail = f"; assumed (no published figure): {', '.join(names)}" if names else ""
    return (f" Assumes: {rests_on}{tail}; H100 chips everywhere. Report run: about "
            f"{', '.join(f'{n:,}' for n in REPORT_SIZES)} chips (full 64-16k: "
            "cofabric scaling).")


def _span(rows, metric, fmt):
    """'family a -> b' over the sizes each family was evaluated at."""
    out = []
    for fam in dict.fromkeys(r["family"] for r in rows):
        pts = [(r["chips"], r[metric]) for r in rows
               if r["family"] == fam and r[metric] is not None]
        if len(pts) >= 2:
            (n0, v0), (n1, v1) = pts[0], pts[-1]
            out.append(f"{fam} {fmt(v0)} at {n0:,} -> {fmt(v1)} at {n1:,} chips")
    return out


def _at_size(rows, metric, target):
    """([(value, family, row)], [family]) at about ``target`` chips (an entry of
    :data:`REPORT_SIZES`): each family's row built for that target, smallest value first, and
    the families whose ``metric`` was not evaluated there. A family evaluated only at
    smaller sizes is not ranked with the others (it would compare 64 chips with 512)."""
    i = REPORT_SIZES.index(target)
    ranked, missing = [], []
    for fam in dict.fromkeys(r["family"] for r in rows):
        mine = [r for r in rows if r["family"] == fam]      # one per target, growing
        if len(mine) > i and mine[i][metric] is not None:
            ranked.append((mine[i][metric], fam, mine[i]))
        else:
            missing.append(fam)
    return sorted(ranked, key=lambda x: (x[0], x[1])), missing


def _ends(ranked, fmt, alg=None):
    """'a fastest (t, alg), b slowest (t, alg)' of a ranking, naming every family that
    ties an end at the shown precision (a tie is not a ranking)."""
    def end(value, word):
        tied = [(fam, r) for v, fam, r in ranked if fmt(v) == fmt(value)]
        if len(tied) == 1:
            fam, r = tied[0]
            return f"{fam} {word} ({fmt(value)}" + (f", {r[alg]})" if alg else ")")
        names = " and ".join(f"{fam} ({r[alg]})" if alg else fam for fam, r in tied)
        return f"{names} {word}, tied at {fmt(value)}"

    return f"{end(ranked[0][0], 'fastest')}, {end(ranked[-1][0], 'slowest')}"


def _evaluated_at():
    """The largest entry of :data:`REPORT_SIZES` at which collectives and decode run."""
    return max(n for n in REPORT_SIZES if n <= REPORT_EVALUATED_LIMIT)


def _findings(rows, assumed):
    out = []
    span = _span(rows, "bisection_per_chip_Bps", computed_bandwidth)
    if span:
        out.append("Bisection per chip as the families grow: " + "; ".join(span) + "."
                   + _assumes(assumed, "the link bandwidths as built", ("bandwidth",)))
    ranked, _ = _at_size(rows, "network_cost_usd_per_chip", REPORT_SIZES[-1])
    if ranked:
        cheap, dear = ranked[0], ranked[-1]
        out.append(f"Network cost per chip at about {REPORT_SIZES[-1]:,} chips: {cheap[1]} "
                   f"cheapest ({usd_text(cheap[0])}), {dear[1]} dearest "
                   f"({usd_text(dear[0])}); power per chip, least first: "
                   + ", ".join(f"{r['family']} {r['network_power_w_per_chip']:.0f} W"
                               for r in sorted((r for _, _, r in ranked),
                                               key=lambda r: r["network_power_w_per_chip"]))
                   + "."
                   + _assumes(assumed, f"the cost book {_BOOK!r} (street prices of 2026) and "
                              "its rack layouts (rail: four H100 servers, 32 chips, per "
                              "rack as in NVIDIA's DGX SuperPOD; the other families the "
                              "book's 72, no rack of theirs being published)", ()))
    # (an all-to-all reduces nothing: the chip's reduce rate is not among its assumptions)
    for metric, what, alg, reduces in (
            ("allreduce_1GiB_s", "A 1GiB all-reduce", "allreduce_algorithm", True),
            ("alltoall_1MiB_s", "A 1MiB all-to-all", "alltoall_algorithm", False)):
        ranked, missing = _at_size(rows, metric, _evaluated_at())
        if len(ranked) >= 2:
            out.append(f"{what} at each family's best algorithm, at about "
                       f"{_evaluated_at():,} chips: "
                       f"{_ends(ranked, computed_time, alg)}"
                       + (f" ({', '.join(missing)}: not evaluated at this size)"
                          if missing else "") + "."
                       + _assumes(assumed, f"no software costs ({runtime_phrase(RUNTIME)}, "
                                  "the same for every family), the link bandwidths and "
                                  "latencies" + (" and the chip's reduce rate" if reduces
                                                 else ""),
                                  ("bandwidth", "latency")
                                  + (("reduce_rate",) if reduces else ())))
    ranked, missing = _at_size(rows, "decode_step_s", _evaluated_at())
    if len(ranked) >= 2:
        out.append(f"Decode step ({DECODE_MODELS[0]}, batch {DECODE_BATCH}, {DECODE_CONTEXT}-"
                   f"token context, best layout over the first {DECODE_CHIPS} "
                   f"chips) on fabrics of about {_evaluated_at():,} chips: "
                   + ", ".join(f"{fam} {computed_time(t)} ({r['decode_layout']}; "
                               f"{r['decode_instance']})" for t, fam, r in ranked)
                   + (f" ({', '.join(missing)}: not evaluated at this size)" if missing else "")
                   + "." + _assumes(assumed, "the report's decode settings (exchange kernel, CUDA "
                              "graphs, tensor-parallel collectives under the "
                              f"{runtime_phrase()}) and the link bandwidths and latencies",
                              ("bandwidth", "latency")))
    return out


#: The report's reduced study by its inputs, computed once a process: every argument of
#: :func:`analysis.scaling_study` but where (``executor``) and how loudly (``quiet``) it runs,
#: which do not change its rows. Each row is kept as a tuple of (key, value) pairs and handed
#: out as a new dict, so no caller can change what the next one reads. (The test suite builds
#: the small report and then its CLI run in one process: the study is about 6 s of CPU.)
_STUDIES = {}


def _frozen(value):
    """``value`` with every dict a sorted tuple of its items and every list a tuple."""
    if isinstance(value, dict):
        return tuple(sorted((k, _frozen(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return tuple(_frozen(v) for v in value)
    return value


def _report_rows(executor, quiet):
    """The rows of the report's reduced study (without the run time: not a result), each a
    new dict."""
    args = {"families": tuple(SCALING_FAMILIES), "sizes": REPORT_SIZES,
            "collective_limit": REPORT_EVALUATED_LIMIT, "decode_limit": REPORT_EVALUATED_LIMIT,
            "book": _BOOK, "router_limit": REPORT_ROUTER_LIMIT}
    key = _frozen(args)
    if key not in _STUDIES:
        rows = scaling_study(**args, executor=executor, quiet=quiet)
        _STUDIES[key] = tuple(tuple((k, v) for k, v in r.items() if k != "seconds")
                              for r in rows)
    return [dict(r) for r in _STUDIES[key]]


def scaling_report_section(executor=None, quiet=False):
    """(Section, finding sentences) of the report's reduced scaling study."""
    rows = _report_rows(executor, quiet)
    runtimes = scaling_runtimes()
    table = Table("scaling", "Each family at growing size (per chip)", scaling_columns(),
                  tuple(rows),
                  runtimes + " " + scaling_placement() + " n/a: not evaluated in the report (collectives and decode up to "
                  f"{REPORT_EVALUATED_LIMIT} chips, the rail-optimized families' collectives "
                  f"up to {REPORT_ROUTER_LIMIT[0]['rail']}; the CSV's note column says why for "
                  "each row). The specs built and the algorithms chosen are in scaling.csv.")
    fig = FigureSpec(
        "scaling", "Scaling: per-chip metrics against chips",
        "Each family from about 64 to about 4,096 chips (log x; log y where a panel spans a "
        f"decade). {runtimes} Lines stop where a metric was not evaluated in the report (collectives "
        f"and decode above {REPORT_EVALUATED_LIMIT} chips, rail-optimized collectives above "
        f"{REPORT_ROUTER_LIMIT[0]['rail']}; the note under the legend says where each stops); "
        "cofabric scaling runs every "
        "metric from 64 to 16k chips. Markers that would hide one another (values a few "
        "percent apart, as rail, domains and torus all-reduce at 64 chips) are set side by "
        "side by a few points; the lines pass through the true values, which the table gives.",
        functools.partial(_draw, rows), column="double", height=4.2)
    links, assumed = _links(rows)
    text = (("Every family (" + ", ".join(SCALING_FAMILIES) + ") built at about "
             + ", ".join(f"{n:,}" for n in REPORT_SIZES) + " chips with H100 chips, so the "
             f"curves compare fabrics; links: {links}. This is a reduced run that fits the report's time "
             "budget; the full study from 64 to 16k chips is cofabric scaling --out DIR "
             "(about 2 minutes on 2 cores, every metric at every size)."),)
    return Section("scaling", "Scaling", text=text, tables=(table,), figures=(fig,)), \
        _findings(rows, assumed)
