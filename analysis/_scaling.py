"""Scaling study: each fabric family from about 64 to about 16k chips, per-chip metrics.

Families (:data:`SCALING_FAMILIES`), each at about 64, 512, 4k and 16k chips (the
builders' nearest sizes; every metric is per chip, so sizes need not match):

* ``hyperx``: 3D Hyper-Mesh with every line all-to-all (HyperX), Co-Fabric links;
* ``torus``: 3D torus, Co-Fabric links;
* ``fat-tree``: three-tier k-ary fat tree, 400G InfiniBand;
* ``rail``: 8-GPU NVSwitch servers joined by a rail-optimized 400G network;
* ``dragonfly``: balanced dragonfly (a = 2p = 2h), 400G;
* ``domains``: 64-chip switched scale-up domains (NVLink) joined by a rail network.

Metrics per point: bisection per chip (the structural balanced cut), uniform
all-to-all throughput per chip (routed by the fabric's policy), all-reduce time (1 GiB
per rank) and all-to-all time (1 MiB per rank) at the family's best algorithm, a decode
step (kimi-k2, batch 1, on the first :data:`DECODE_CHIPS` chips, with the report's
decode settings) at the best layout found by search, with what those chips span
(:func:`instance_span`: on a dragonfly, routed minimally, the groups and the global links
between them, which set its exchange), and network cost and power per chip
(:func:`analysis.bill_of_materials`). Chips are H100s throughout, so that the comparison
is of fabrics.

Collectives are costed by :func:`analysis.cost` on the built fabric at the hardware
floor (``runtime="ideal"``: no software launch or protocol costs, the same for every
family). "Best algorithm": up to ``auto_limit`` chips ``algorithm="auto"`` (every
applicable algorithm and transport); above it the fastest of the family's
:data:`CANDIDATES`, which hold ``auto``'s choices at 64 and 512 chips (tested equal to
``auto`` at 64 chips) and the family's bandwidth-optimal algorithms; each row's
``note`` says which were tried. A point above ``collective_limit`` (or
``decode_limit``) chips, or a family above its :data:`ROUTER_LIMIT` (none by default), is left
out and says so, rather than replaced by a different model.

Examples
--------
>>> rows = scaling_study(families=("torus",), sizes=(64,), collective_limit=64,
...                      decode_limit=0)
>>> r = rows[0]
>>> r["family"], r["chips"], round(r["bisection_per_chip_Bps"] / 1e9)
('torus', 64, 32)
"""

import math
import textwrap
import time

__all__ = ["SCALING_FAMILIES", "SCALING_METRICS", "draw_scaling", "scaling_study"]

#: Family -> the real system whose published rack density (:data:`fabric.RACK_CHIPS`) its
#: cost is laid out at: the rail family's servers are DGX/HGX H100s (four per rack, as
#: cluster-128's). The other families have no published rack and take the cost book's.
FAMILY_RACKS = {"rail": "dgx-h100"}

#: Family -> (spec at about N chips, the algorithm its all-reduce uses at scale).
SCALING_FAMILIES = {
    "hyperx": ("hypermesh:{shape},chip=h100", "multi-dimensional"),
    "torus": ("torus:{shape},chip=h100", "multi-dimensional"),
    "fat-tree": ("fattree:k={k},chip=h100", "double-binary-tree"),
    "rail": ("rail:servers={servers},gpus=8,chip=h100", "ring"),
    "dragonfly": ("dragonfly:h={h},chip=h100", "multi-ring"),
    "domains": ("rail:servers={domains},gpus=64,chip=h100", "multi-dimensional"),
}

#: Operation -> family -> candidate algorithms (name, largest chip count it is tried at).
#: Up to ``auto_limit`` chips a collective is ``analysis.cost(..., "auto")``: every
#: applicable algorithm and transport. Above it, the fastest of these candidates: the
#: algorithms ``auto`` picks on the family at 64 and 512 chips (tests/test_scaling.py
#: checks the candidates' best equals ``auto`` at 64 chips) and the family's
#: bandwidth-optimal one. ``scattered`` (every pair in one step, p^2 flows) stops at 1,024
#: chips: at 4k it takes 20-30 s on the engine and above 4k it is refused (flow limit).
CANDIDATES = {
    "all-reduce": {
        "hyperx": (("multi-dimensional", None), ("multi-dimensional-pipelined", None)),
        "torus": (("multi-dimensional", None), ("swing", 4096)),
        "fat-tree": (("ring", None), ("multi-ring", None), ("double-binary-tree", None)),
        "dragonfly": (("multi-ring", None), ("ring", None)),
        "rail": (("ring", None), ("hierarchical", 1024), ("multi-dimensional", None)),
        "domains": (("multi-dimensional", None), ("ring", None), ("two-shot", 64),
                    ("hierarchical", 1024)),
    },
    "all-to-all": {
        "hyperx": (("scattered", 1024), ("multi-dimensional", None)),
        "torus": (("scattered", 1024), ("multi-dimensional", None)),
        "fat-tree": (("scattered", 1024), ("bruck", None)),
        "dragonfly": (("scattered", 1024), ("bruck", None)),
        "rail": (("scattered", 1024), ("hierarchical", 1024), ("bruck", None)),
        "domains": (("scattered", 1024), ("hierarchical", 1024), ("bruck", None)),
    },
}

#: The runtime the study's collectives are costed with: the model's schedules with no
#: software launch or protocol costs (runtime 'ideal'), so that the comparison is of fabrics and algorithms.
RUNTIME = "ideal"

#: Family -> largest chip count whose collectives are evaluated (none now: the up/down
#: router of fabric/_routing_updown.py routes rail-optimized fabrics of 8k+ routing states
#: from small cones; before it, ring all-reduce on ``rail:servers=512,gpus=8`` did not
#: finish in 60 s). Kept as a mechanism for :func:`scaling_study`'s ``router_limit``.
ROUTER_LIMIT = {}
ROUTER_LIMIT_WHY = ("the router of a rail-optimized fabric takes minutes above 1k chips "
                    "(per-state distance tables)")

#: Bytes per rank of the study's all-reduce and all-to-all.
ALLREDUCE_BYTES, ALLTOALL_BYTES = 2**30, 2**20

#: Metric -> (label, unit scale, unit name) for the figures.
SCALING_METRICS = {
    "bisection_per_chip_Bps": ("bisection per chip", 1e9, "GB/s"),
    "a2a_per_chip_Bps": ("all-to-all throughput per chip", 1e9, "GB/s"),
    "allreduce_1GiB_s": ("all-reduce, 1 GiB per rank", 1e-3, "ms"),
    "alltoall_1MiB_s": ("all-to-all, 1 MiB per rank", 1e-6, "µs"),
    "decode_step_s": ("decode step, kimi-k2, batch 1", 1e-3, "ms"),
    "network_cost_usd_per_chip": ("network cost per chip", 1e3, "k$"),
    "network_power_w_per_chip": ("network power per chip", 1.0, "W"),
}

#: Family -> (index in the paper style's system palette, marker): fixed, so a family keeps
#: its colour in every figure whatever subset is drawn. Each family takes the colour of the
#: default report's system of its kind (sd200-ultra is a Hyper-Mesh, cluster-128 is
#: rail-optimized, nvl72 is a switched domain, tpu-v4-cube a torus), so a colour means one
#: kind of fabric throughout; fat-tree and dragonfly take the next two colours.
FAMILY_STYLE = {"hyperx": (0, "o"), "rail": (1, "s"), "domains": (2, "^"), "torus": (3, "D"),
                "fat-tree": (4, "v"), "dragonfly": (5, "<")}

#: Chips one decoding instance of the model spans (expert parallelism), on every fabric.
DECODE_CHIPS = 128

_SHAPES = {64: "4x4x4", 512: "8x8x8", 4096: "16x16x16", 16384: "32x32x16"}


def _spec(family, n):
    """The family's spec nearest ``n`` chips."""
    template, _ = SCALING_FAMILIES[family]
    if family in ("hyperx", "torus"):
        # at least 2 x 2 x 2, the smallest 3-D build, as the other families take their
        # smallest (a size of 2 or 3 rounded to 1 x 1 x 1: one chip, refused deep inside)
        shape = _SHAPES.get(n) or "x".join([str(max(2, round(n ** (1 / 3))))] * 3)
        return template.format(shape=shape)
    if family == "fat-tree":
        k = max(4, 2 * round((4 * n) ** (1 / 3) / 2))           # k^3/4 chips
        return template.format(k=k)
    if family == "rail":
        return template.format(servers=max(1, n // 8))
    if family == "domains":
        return template.format(domains=max(1, n // 64))
    # dragonfly: a = 2h, p = h, g = a h + 1: 2h^2 (2h^2 + 1) chips
    h = min(range(1, 12), key=lambda h: abs(math.log(2 * h * h * (2 * h * h + 1) / n)))
    return template.format(h=h)


def _counts(sizes, unit):
    """'72 + 56 chips', '8 chips each' or '7 x 18 + 2 chips': how many chips of an instance
    each part it spans holds, in the parts' order, runs of equal sizes shortened."""
    if len(sizes) > 1 and len(set(sizes)) == 1:
        return f"{sizes[0]} {unit} each"
    runs = [[sizes[0], 0]]
    for v in sizes:
        if v == runs[-1][0]:
            runs[-1][1] += 1
        else:
            runs.append([v, 1])
    return " + ".join(f"{k} x {v}" if k > 1 else f"{v}" for v, k in runs) + f" {unit}"


def _of(spanned, total, group, sizes):
    """'2 of 73 groups (72 + 56 chips)', 'all 9 groups (8 chips each)', 'the one server (64
    chips)': ``spanned`` of a fabric's ``total`` groups (``group``: their plural name) and
    the instance's chips in each."""
    one = {"leaves": "leaf"}.get(group, group.removesuffix("s"))
    where = (f"the one {one}" if total == 1 else f"all {total} {group}" if spanned == total
             else f"1 of {total} {group}" if spanned == 1 else f"{spanned} of {total} {group}")
    return f"{where} ({_counts(sizes, 'chips')})"


def instance_span(f, chips):
    """What the chips of one decoding instance span, in the terms of the fabric's structure
    (:attr:`fabric.Fabric.structure`): a dragonfly's groups and the global links joining
    them (routed minimally, every byte between two groups crosses the links between them),
    a Clos network's groups (servers, pods), a grid's block; else the chip count.

    The study places the instance on the chips :func:`analysis.decode_step` gives it
    (:func:`analysis._decode.instance_chips`: on an intact fabric the first chips, whole
    load/store domains first): the same rule on every family. This says where that lands.

    Examples
    --------
    >>> import topologies
    >>> f = topologies.build("dragonfly:h=6")            # 72 chips a group
    >>> instance_span(f, f.endpoints[:128])
    '2 of 73 groups (72 + 56 chips), 1 global link'
    >>> instance_span(topologies.build("dragonfly:h=8"), [f"chip{i}" for i in range(128)])
    '1 of 129 groups (128 chips), no global link'
    >>> instance_span(topologies.build("torus:8x8x8"), [f"chip{i}" for i in range(128)])
    '8x8x2 block of 8x8x8'
    >>> instance_span(topologies.build("rail:servers=32,gpus=8"), [f"chip{i}" for i in range(128)])
    '16 of 32 servers (8 chips each)'
    """
    import numpy as np

    from fabric import Clos, Dragonfly, Grid
    from fabric._routing_engine import group_of

    s = f.structure
    if isinstance(s, Dragonfly):
        g = group_of(f)
        mine = g[[f.node_index[c] for c in chips]]
        spanned, sizes = np.unique(mine, return_counts=True)
        ea = f.edge_arrays
        gu, gv = g[ea.u], g[ea.v]
        joins = int(np.sum((gu != gv) & np.isin(gu, spanned) & np.isin(gv, spanned)))
        where = _of(len(spanned), s.groups, "groups", sizes.tolist())
        return where + (f", {joins} global link{'s' if joins != 1 else ''}" if len(sizes) > 1
                        else ", no global link")
    if isinstance(s, Clos):
        parts = np.unique([f.rank_of[c] // s.group_size for c in chips], return_counts=True)[1]
        return _of(len(parts), s.groups, s.group, parts.tolist())
    if isinstance(s, Grid):
        coords = np.array([f.graph.nodes[c]["coord"] for c in chips])
        ext = tuple(int(x) for x in coords.max(axis=0) - coords.min(axis=0) + 1)
        block, whole = "x".join(map(str, ext)), "x".join(map(str, s.shape))
        if ext == tuple(s.shape) and math.prod(ext) == len(chips):
            return f"all of {whole}"
        if math.prod(ext) == len(chips):
            return f"{block} block of {whole}"
        return f"{len(chips)} chips within {block} of {whole}"
    return f"{len(chips)} chips"


def _best(f, op, nbytes, family, auto_limit):
    """(time s, algorithm, how) of ``op`` at the family's best algorithm (see CANDIDATES)."""
    from fabric import FabricError

    from ._collectives import cost

    chips = f.n_endpoints
    if chips <= auto_limit:
        r = cost(f, op, nbytes, "auto", runtime=RUNTIME)
        return float(r.time), r.algorithm, "auto"
    best, tried = None, []
    for alg, upto in CANDIDATES[op][family]:
        if upto is not None and chips > upto:
            continue
        try:
            r = cost(f, op, nbytes, alg, runtime=RUNTIME)
        except FabricError:            # not applicable here (e.g. two-shot across NICs)
            continue
        tried.append(alg)
        if best is None or r.time < best.time:
            best = r
    if best is None:
        raise FabricError(f"no candidate algorithm applies to {op} on {f.name}")
    return float(best.time), best.algorithm, "best of " + ", ".join(tried)


def _point(family, n, collective_limit, decode_limit, book, auto_limit=64, router_limit=None):
    import numpy as np

    import topologies
    from fabric import RACK_CHIPS, FabricError

    from ._bom import bill_of_materials
    from ._fair import best_decode_layout
    from ._metrics import metrics
    from ._report_decode import report_decode_settings
    from ._traffic import link_loads, traffic

    start = time.perf_counter()
    spec = _spec(family, n)
    f = topologies.build(spec)
    if family in FAMILY_RACKS:
        f = f.replace(assumptions=f.assumptions + (RACK_CHIPS[FAMILY_RACKS[family]],))
    chips = f.n_endpoints
    m = metrics(f)
    loads = link_loads(f, traffic(f, "all-to-all"))
    b = bill_of_materials(f, book)
    row = {"family": family, "spec": spec, "chips": chips,
           "bisection_per_chip_Bps": m.bisection_bandwidth / chips,
           "a2a_per_chip_Bps": (chips - 1) / loads.drain_time,
           "allreduce_1GiB_s": None, "allreduce_algorithm": "",
           "alltoall_1MiB_s": None, "alltoall_algorithm": "",
           "decode_step_s": None, "decode_layout": "", "decode_instance": None,
           "network_cost_usd_per_chip": b.cost_usd_per_chip,
           "network_power_w_per_chip": b.power_w_per_chip, "note": ""}
    notes = []
    router_limit, why = router_limit or (ROUTER_LIMIT, ROUTER_LIMIT_WHY)
    limit = min(collective_limit, router_limit.get(family, collective_limit))
    if chips <= limit:
        for op, nbytes, key in (("all-reduce", ALLREDUCE_BYTES, "allreduce"),
                                ("all-to-all", ALLTOALL_BYTES, "alltoall")):
            try:
                t, alg, how = _best(f, op, nbytes, family, auto_limit)
            except FabricError as e:
                notes.append(f"{op}: {e}")
                continue
            row[f"{key}_{'1GiB' if key == 'allreduce' else '1MiB'}_s"] = t
            row[f"{key}_algorithm"] = alg
            notes.append(f"{op}: {how}")
    elif chips > collective_limit:
        notes.append(f"collectives not evaluated above {collective_limit} chips")
    else:
        notes.append(f"collectives not evaluated: {why}")
    if chips <= decode_limit:
        try:
            step, _ = best_decode_layout("kimi-k2", f, batch=1, context=4096,
                                         ep=min(chips, DECODE_CHIPS),
                                         **report_decode_settings(f))
            row["decode_step_s"], row["decode_layout"] = step.time, str(step.layout)
            row["decode_instance"] = instance_span(f, step.instance)
        except (ValueError, FabricError) as e:
            notes.append(f"decode: {e}")
    else:
        notes.append(f"decode not evaluated above {decode_limit} chips")
    row["note"] = "; ".join(notes)
    # run time: for the progress and the benchmarks, not a result (the study's CSV leaves it out)
    row["seconds"] = float(np.round(time.perf_counter() - start, 3))
    return row


def scaling_study(families=tuple(SCALING_FAMILIES), sizes=(64, 512, 4096, 16384), *,
                  collective_limit=20000, decode_limit=20000, book="street-2026",
                  quiet=True, executor=None, router_limit=None):
    """Per-chip metrics of each family at each size; a list of tidy rows (SI units).

    Parameters
    ----------
    families : sequence of str
        Keys of :data:`SCALING_FAMILIES`.
    sizes : sequence of int
        Target chip counts (each family's nearest buildable size is used).
    collective_limit, decode_limit : int
        Largest chip count at which collectives and decode are evaluated on the
        fabric (they take minutes at 16k chips on two cores); >= 0.
    book : str
        Cost book for cost and power.
    quiet : bool
        No progress bar.
    executor : concurrent.futures.Executor, optional
        Runs the points (:func:`sweep`); default this process.
    router_limit : (dict, str), optional
        Family -> largest chip count whose collectives are evaluated, and why; default
        (:data:`ROUTER_LIMIT`, :data:`ROUTER_LIMIT_WHY`).

    Raises
    ------
    SpecError
        An unknown family, a size below 2 chips, a negative limit.
    TypeError
        ``families`` or ``sizes`` not a sequence (one name, a set: its order is its
        hashes'), an item or limit of the wrong kind, ``router_limit`` not a (dict, str) pair.

    Returns
    -------
    list of dict
        One row per (family, size): ``spec``, ``chips``, every key of
        :data:`SCALING_METRICS` (None where not evaluated, with ``note`` saying
        why), ``seconds`` spent.

    Examples
    --------
    >>> rows = scaling_study(["torus"], [64], collective_limit=0, decode_limit=0)
    >>> rows[0]["spec"], rows[0]["chips"], rows[0]["bisection_per_chip_Bps"]   # B/s per chip
    ('torus:4x4x4,chip=h100', 64, 32000000000.0)
    """
    from fabric import SpecError
    from fabric._units import check_count, sequence_of, text_of, unknown_fault

    from ._sweep import sweep

    # sequences, not sets (rows in hash order) or one name read letter by letter; a wrong
    # kind a TypeError, named by its position
    families = [text_of(f, f"families[{i}]")
                for i, f in enumerate(sequence_of(families, "families", "family names"))]
    unknown = [f for f in families if f not in SCALING_FAMILIES]
    if unknown:
        raise SpecError(unknown_fault(unknown, "families", SCALING_FAMILIES))
    sizes = [check_count(n, f"sizes[{i}]", 2, "a chip count >= 2")
             for i, n in enumerate(sequence_of(sizes, "sizes", "chip counts"))]
    collective_limit, decode_limit = (check_count(v, name, 0, "a chip count >= 0") for name, v in (
        ("collective_limit", collective_limit), ("decode_limit", decode_limit)))
    if router_limit is not None:
        router_limit = _router_limit(router_limit)
    points = [{"family": fam, "n": n, "collective_limit": collective_limit,
               "decode_limit": decode_limit, "book": book, "router_limit": router_limit}
              for fam in families for n in sizes]
    return sweep(_point, points, executor=executor, quiet=quiet, desc="scaling")


def _router_limit(value):
    """:func:`scaling_study`'s ``router_limit`` checked: a (mapping of family -> chip count
    >= 0, reason text) pair, each family one of :data:`SCALING_FAMILIES` (a misspelt one
    would limit nothing, silently); a wrong kind a TypeError."""
    from collections.abc import Mapping

    from fabric import SpecError
    from fabric._units import check_count, items_of, kind_error, show_value, text_of, unknown_fault

    pair = items_of(value)
    if pair is None or len(pair) != 2 or not isinstance(pair[0], Mapping):
        raise kind_error(value, "router_limit", "a (dict of family -> chip count, str) pair")
    for family in pair[0]:
        if text_of(family, "a router_limit family") not in SCALING_FAMILIES:
            raise SpecError("router_limit: " + unknown_fault(family, "family", SCALING_FAMILIES))
    return ({family: check_count(n, f"router_limit[{show_value(family)}]", 0,
                                 "a chip count >= 0") for family, n in pair[0].items()},
            text_of(pair[1], "router_limit's reason"))


def _chips_text(v, _=None):
    """A chip count as a tick label: 64, 512, 4k, 16k."""
    return f"{v / 1024:g}k" if v >= 1024 else f"{v:g}"


def _minor_text(v, _=None):
    """A minor log tick's label: only at 2 and 5 times a power of ten (else crowded)."""
    if v <= 0:
        return ""
    mantissa = v / 10 ** math.floor(math.log10(v) + 1e-9)
    return f"{v:g}" if round(mantissa, 6) in (2.0, 5.0) else ""


def draw_scaling(rows, metric, ax=None, legend=True, dodge=False):
    """One metric against chips, one line per family (log x; log y where it spans a decade).

    Each family keeps its colour and marker (:data:`FAMILY_STYLE`). A family evaluated at
    none of its sizes stays in the legend as "(not evaluated)"; one evaluated only up to
    some size says "(to N chips)", so a line that stops is not read as a trend.

    ``dodge=True`` sets the markers of families that coincide (rail and domains at 25 GB/s
    of bisection per chip) side by side with :func:`analysis._plots.dodge_markers`, the
    lines staying through the true points. It lays the figure out, so only the figure's
    last drawing may ask for it: the report, which draws several panels, calls
    ``dodge_markers`` once on its whole figure instead.

    Parameters
    ----------
    rows : iterable of mapping
        The scaling study's rows (:func:`scaling_study`).
    metric : str
        The row key plotted.
    ax : matplotlib.axes.Axes, optional
        The axes drawn on; default a new figure's.
    legend : bool
        Draw the legend.
    dodge : bool
        As above.

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> rows = [{"family": "torus", "chips": 64, "bisection_per_chip_Bps": 100e9},
    ...         {"family": "torus", "chips": 512, "bisection_per_chip_Bps": 50e9},
    ...         {"family": "rail", "chips": 64, "bisection_per_chip_Bps": None}]
    >>> ax = draw_scaling(rows, "bisection_per_chip_Bps", ax=Figure().subplots())
    >>> ax.get_ylabel(), ax.lines[0].get_xydata().tolist()
    ('bisection per chip (GB/s)', [[64.0, 100.0], [512.0, 50.0]])
    >>> [t.get_text() for t in ax.get_legend().get_texts()]
    ['torus', 'rail (not evaluated)']
    """
    from matplotlib.ticker import FuncFormatter

    from fabric._units import check_choice

    from . import _plots

    # before the axes: a refused input leaves no figure behind (a metric no row holds was a
    # KeyError, rows=5 "not iterable")
    check_choice(metric, "metric", SCALING_METRICS)
    rows = _plots._check_rows(rows, ("family", "chips", metric), "draw_scaling", empty=True,
                              numbers=("chips", metric), gaps=(metric,), logs=("chips",))
    ax = _plots._new_axes(ax)
    label, scale, unit = SCALING_METRICS[metric]
    pal = _plots.palette()
    drawn = False
    for fam in dict.fromkeys(r["family"] for r in rows):
        k, marker = FAMILY_STYLE.get(fam, (len(FAMILY_STYLE), "o"))
        mine = [r for r in rows if r["family"] == fam]
        pts = [(r["chips"], r[metric] / scale) for r in mine if r[metric] is not None]
        if not pts:
            name = f"{fam} (not evaluated)"
        elif len(pts) < len(mine):
            name = f"{fam} (to {max(x for x, _ in pts):,} chips)"
        else:
            name = fam
        x, y = zip(*pts) if pts else ((), ())
        # open markers: families that coincide (rail, domains and torus at 64 chips) stay
        # visible one through the other
        ax.plot(x, y, marker=marker, markersize=4, markerfacecolor="none", label=name,
                color=pal[k % len(pal)])
        drawn = drawn or bool(pts)
    ax.set_xscale("log", base=2)
    chips = [r["chips"] for r in rows]
    if chips:           # every size of the study, so a line that stops is seen to stop
        ax.set_xlim(min(chips) / 1.4, max(chips) * 1.4)
    ax.xaxis.set_major_formatter(FuncFormatter(_chips_text))   # 64, 1k, 16k: not 2^6
    ys = [v for line in ax.get_lines() for v in line.get_ydata() if v > 0]
    if ys and max(ys) >= 10 * min(ys):         # log only where the curves span a decade
        ax.set_yscale("log")
        # plain numbers (20, 50, 100), not 2x10^1; minor ticks labelled at 2 and 5 only
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        if max(ys) < 100 * min(ys):            # over more decades the minor labels crowd
            ax.yaxis.set_minor_formatter(FuncFormatter(_minor_text))
        else:
            ax.yaxis.set_minor_formatter(FuncFormatter(lambda v, _: ""))
    ax.margins(y=0.06)                          # the top point sat on the axes' edge
    ax.set_xlabel("chips")
    ax.set_ylabel(textwrap.fill(f"{label} ({unit})", 30))   # long labels ran off the top
    if legend and ax.get_lines():               # below the axes: inside it hid points
        long = any("(" in ln.get_label() for ln in ax.get_lines())
        ax.legend(fontsize="x-small", loc="upper center", bbox_to_anchor=(0.5, -0.22),
                  ncol=2 if long else 3, frameon=False)    # three long labels ran off the edge
    if not drawn:
        ax.text(0.5, 0.5, "not evaluated at these sizes", ha="center", va="center",
                transform=ax.transAxes)
    if dodge:
        _plots.dodge_markers(ax.figure)
    return ax
