"""One plotting function per figure: ``ax=None`` in, the axes out, never ``show()``.

The functions draw plain data (arrays, tidy rows as dicts) except
:func:`plot_topology`, which draws a :class:`fabric.Fabric`. None sets a style:
wrap calls in :func:`analysis.paper_style` and save with
:func:`analysis.save_figure`. Units on the axes are the human ones (us, GB/s,
KiB...); the data passed in are SI (seconds, bytes, bytes/s).

Examples
--------
>>> import numpy as np, matplotlib.pyplot as plt
>>> ax = plot_latency_cdf({"a": np.array([1e-6, 2e-6]), "b": np.array([3e-6])})
>>> ax.get_xlabel()
'latency (us)'
>>> plt.close(ax.figure)
"""

import math
import re

import numpy as np

from fabric import format_size

__all__ = [
    "palette",
    "plot_collective_sweep",
    "plot_failure_cost",
    "plot_latency_cdf",
    "plot_link_utilization",
    "plot_ratio",
    "plot_stacked_bars",
    "plot_topology",
    "plot_tornado",
]


def _new_axes(ax, projection=None):
    if ax is not None:
        return ax
    import matplotlib.pyplot as plt

    fig = plt.figure()
    return fig.add_subplot(projection=projection)


def palette():
    """The paper style's colours, in order (the colour cycle of the current rcParams).

    Figures that show several systems give system ``i`` of the report colour ``i``, so
    a system keeps its colour from figure to figure.
    """
    return _palette()


def _palette():
    import matplotlib as mpl

    colors = mpl.rcParams["axes.prop_cycle"].by_key().get("color")
    return colors or ["C0", "C1", "C2", "C3", "C4", "C5", "C6", "C7"]


def _rows_by(rows, keys):
    """Group dict rows by the tuple of ``keys``, groups in first-seen order."""
    groups = {}
    for row in rows:
        groups.setdefault(tuple(row[k] for k in keys), []).append(row)
    return groups


def _check_rows(rows, needed, what):
    rows = list(rows)
    if not rows:
        raise ValueError(f"{what}: no rows to plot")
    for i, row in enumerate(rows):
        missing = [k for k in needed if k not in row]
        if missing:
            raise ValueError(f"{what}: row {i} lacks {missing}; each row needs {list(needed)}")
    return rows


# -- topology drawings ---------------------------------------------------------------


def _bezier(p0, p1, bulge, n=12):
    """Points of a quadratic Bezier from p0 to p1 whose middle is pushed by ``bulge``."""
    t = np.linspace(0.0, 1.0, n)[:, None]
    ctrl = (p0 + p1) / 2 + 2 * bulge  # the curve's midpoint lies at mid + bulge
    return (1 - t) ** 2 * p0 + 2 * (1 - t) * t * ctrl + t ** 2 * p1


def _draw_3d(fabric, ax):
    from mpl_toolkits.mplot3d.art3d import Line3DCollection

    G = fabric.graph
    pos = {}
    for n, c in G.nodes(data="coord"):
        if c is not None:
            pos[n] = np.array(c, dtype=float)
    for n in G.nodes:  # per-line switches sit beside the line they serve
        if n not in pos:
            nbrs = [pos[m] for m in G.neighbors(n) if m in pos]
            pos[n] = np.mean(nbrs, axis=0) + np.array([0.0, -0.6, 0.6])
    colors = _palette()
    segments = {}
    for u, v in G.edges:
        pu, pv = pos[u], pos[v]
        delta = pv - pu
        moved = np.flatnonzero(np.abs(delta) > 1e-9)
        dim = int(moved[0]) if len(moved) == 1 else -1
        if dim >= 0 and abs(delta[dim]) > 1.0 + 1e-9:
            # Non-neighbours on one line (all-to-all lines, torus wrap links): arcs, so that
            # they do not hide under the straight links between neighbours.
            normal = np.zeros(3)
            normal[(dim + 1) % 3] = 0.18 * abs(delta[dim])
            normal[(dim + 2) % 3] = 0.10 * abs(delta[dim])
            pts = _bezier(pu, pv, normal)
        else:
            pts = np.stack([pu, pv])
        segments.setdefault(dim, []).append(pts)
    for dim in sorted(segments):
        label = f"dimension {dim}" if dim >= 0 else "switch links"
        ax.add_collection3d(Line3DCollection(
            segments[dim], colors=colors[dim % len(colors)] if dim >= 0 else "0.5",
            linewidths=0.45, alpha=0.55, label=label))
    chips = [n for n in fabric.endpoints]
    xyz = np.array([pos[n] for n in chips])
    ax.scatter(xyz[:, 0], xyz[:, 1], xyz[:, 2], s=7, c="black", depthshade=False, zorder=3)
    others = [n for n in G.nodes if G.nodes[n].get("kind") != "chip"]
    if others:
        oxyz = np.array([pos[n] for n in others])
        ax.scatter(oxyz[:, 0], oxyz[:, 1], oxyz[:, 2], s=10, marker="s", c="0.4",
                   depthshade=False)
    span = np.ptp(np.array(list(pos.values())), axis=0) + 1.0
    ax.set_box_aspect(span, zoom=0.82)  # room for the z label inside the figure
    lo = np.min(np.array(list(pos.values())), axis=0)
    hi = np.max(np.array(list(pos.values())), axis=0)
    for setter, a, b in zip((ax.set_xlim, ax.set_ylim, ax.set_zlim), lo, hi):
        setter(a - 0.5, b + 0.5)
    ax.set_xlabel("dim 0")
    ax.set_ylabel("dim 1")
    ax.set_zlabel("dim 2")
    for axis in (ax.xaxis, ax.yaxis, ax.zaxis):
        axis.set_major_locator(_integer_locator())
    ax.legend(loc="upper left", fontsize="x-small")
    return ax


def _integer_locator():
    from matplotlib.ticker import MaxNLocator

    return MaxNLocator(integer=True, nbins=4)


def _layer_of(G, n, has_nics):
    """Drawing layer: chips 0, NICs 1, switch tiers above; scale-up switches (tier 0, only
    chips as neighbours) below the chips when NICs lead to a scale-out network above."""
    data = G.nodes[n]
    kind = data.get("kind")
    if kind == "chip":
        return 0
    if kind == "nic":
        return 1
    tier = int(data.get("tier", 0))
    if has_nics and tier == 0 and all(G.nodes[m].get("kind") == "chip" for m in G.neighbors(n)):
        return -1
    return (2 if has_nics else 1) + tier


def _layer_name(G, nodes):
    kind = G.nodes[nodes[0]].get("kind")
    if kind == "chip":
        return f"chips ({len(nodes)})"
    if kind == "nic":
        return f"NICs ({len(nodes)})"
    prefix = re.sub(r"[0-9.]+$", "", str(nodes[0])).rstrip(".") or "switches"
    return f"{prefix} ({len(nodes)})"


def _draw_layers(fabric, ax):
    from matplotlib.collections import LineCollection

    G = fabric.graph
    has_nics = any(k == "nic" for _, k in G.nodes(data="kind"))
    layers = {}
    order = {n: i for i, n in enumerate(G.nodes)}
    for n in G.nodes:
        layers.setdefault(_layer_of(G, n, has_nics), []).append(n)
    levels = sorted(layers)
    x = {}
    # Chips first in rank order, then each layer outward from them: a node sits above the
    # mean of its neighbours already placed (barycentre heuristic), ties in graph order.
    for level in sorted(levels, key=lambda lv: (abs(lv), lv)):
        nodes = layers[level]
        if level == 0:
            ranked = [n for n in fabric.endpoints if n in set(nodes)] or nodes
        else:
            def key(n):
                placed = [x[m] for m in G.neighbors(n) if m in x]
                return (sum(placed) / len(placed) if placed else 0.5, order[n])
            ranked = sorted(nodes, key=key)
        k = len(ranked)
        for i, n in enumerate(ranked):
            x[n] = (i + 0.5) / k
    y = {n: float(rank) for rank, level in enumerate(levels) for n in layers[level]}
    colors = _palette()
    techs = {}
    for u, v, t in G.edges(data="tech"):
        techs.setdefault(t or "link", []).append(((x[u], y[u]), (x[v], y[v])))
    for i, (tech, segs) in enumerate(sorted(techs.items())):
        ax.add_collection(LineCollection(segs, colors=colors[i % len(colors)],
                                         linewidths=0.5, alpha=0.6, label=tech))
    markers = {"chip": ("o", 6, "black"), "nic": ("s", 5, "0.45"), "switch": ("s", 14, "0.15")}
    names = []
    for level in levels:
        nodes = layers[level]
        kind = G.nodes[nodes[0]].get("kind", "switch")
        marker, size, color = markers.get(kind, ("D", 8, "0.3"))
        ax.scatter([x[n] for n in nodes], [y[n] for n in nodes], s=size, marker=marker,
                   c=color, zorder=3, linewidths=0)
        names.append(_layer_name(G, nodes))
    ax.set_yticks(range(len(levels)), names)
    ax.set_xticks([])
    ax.set_xlim(0, 1)
    ax.set_ylim(-0.4, len(levels) - 0.6)
    ax.grid(False)
    for side in ("top", "right", "bottom"):
        ax.spines[side].set_visible(False)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.02), ncol=min(len(techs), 4),
              fontsize="x-small")
    return ax


def _draw_spring(fabric, ax):
    import networkx as nx

    pos = nx.spring_layout(fabric.graph, seed=0)
    nx.draw_networkx(fabric.graph, pos=pos, ax=ax, with_labels=False, node_size=8,
                     width=0.4, node_color="black", edge_color="0.6")
    ax.set_axis_off()
    return ax


def plot_topology(fabric, ax=None):
    """Draw a fabric: in 3D by chip ``coord`` where chips have 3-D coordinates,
    in layers by switch ``tier`` where switches have tiers, else a spring layout.

    Hyper-mesh links between non-neighbours of a line (all-to-all lines, torus
    wrap-around) are drawn as arcs so that they stay visible; links are coloured
    by dimension (3D) or by technology (layers).

    Parameters
    ----------
    fabric : fabric.Fabric
    ax : matplotlib axes, optional
        For a 3-D fabric it must be a 3-D axes (``projection="3d"``).

    Returns
    -------
    matplotlib.axes.Axes

    Raises
    ------
    ValueError
        If a 3-D fabric is given a 2-D axes.

    Examples
    --------
    >>> import topologies, matplotlib.pyplot as plt
    >>> ax = plot_topology(topologies.build("fattree:k=4"))
    >>> [t.get_text() for t in ax.get_yticklabels()]
    ['chips (16)', 'edge (8)', 'agg (8)', 'core (4)']
    >>> plt.close(ax.figure)
    """
    G = fabric.graph
    coords = [G.nodes[n].get("coord") for n in fabric.endpoints]
    if coords and all(c is not None and len(c) == 3 for c in coords):
        ax = _new_axes(ax, projection="3d")
        if getattr(ax, "name", "") != "3d":
            raise ValueError(f"{fabric.name} is drawn in 3D: pass an axes made with "
                             "projection='3d', or ax=None")
        return _draw_3d(fabric, ax)
    ax = _new_axes(ax)
    if any("tier" in d for _, d in G.nodes(data=True)):
        return _draw_layers(fabric, ax)
    return _draw_spring(fabric, ax)


# -- distributions and sweeps -------------------------------------------------------------


def plot_latency_cdf(samples, ax=None, *, unit=1e-6, unit_name="us", xlabel="latency"):
    """Empirical CDF of latencies over chip pairs, one curve per label.

    Parameters
    ----------
    samples : mapping of str to array-like
        Label (e.g. ``"sd200-ultra load/store"``) -> latencies in seconds.
    ax : matplotlib axes, optional
    unit, unit_name
        Display unit of the x axis (default microseconds).
    xlabel : str
        What the latency is (the unit is appended).

    Returns
    -------
    matplotlib.axes.Axes
    """
    if not samples:
        raise ValueError("samples: nothing to plot")
    ax = _new_axes(ax)
    for label, values in samples.items():
        v = np.sort(np.asarray(values, dtype=float).ravel()) / unit
        if v.size == 0:
            raise ValueError(f"samples[{label!r}] is empty")
        # Step ECDF; steps are exact for the discrete hop counts of these fabrics.
        y = np.arange(1, v.size + 1) / v.size
        ax.step(np.concatenate([[v[0]], v]), np.concatenate([[0.0], y]), where="post",
                label=label)
    ax.set_xlabel(f"{xlabel} ({unit_name})")
    ax.set_ylabel("fraction of chip pairs")
    ax.set_ylim(0, 1.02)
    ax.legend(loc="lower right")
    return ax


def _size_axis(ax, sizes):
    ax.set_xscale("log", base=2)
    lo, hi = min(sizes), max(sizes)
    exps = range(math.floor(math.log2(lo)), math.ceil(math.log2(hi)) + 1)
    ticks = [2 ** e for e in exps]
    step = max(1, len(ticks) // 6)
    # Round to a multiple of 10 so that 1KiB, 1MiB, 1GiB are labelled when possible.
    if step > 1:
        step = 10 if len(ticks) > 20 else 5 if len(ticks) > 10 else step
    shown = [t for t in ticks if int(math.log2(t)) % step == 0] or ticks
    ax.set_xticks(shown, [format_size(t) for t in shown])
    ax.xaxis.set_minor_locator(_null_locator())


def _null_locator():
    from matplotlib.ticker import NullLocator

    return NullLocator()


def plot_collective_sweep(rows, ax=None, *, metric="time", group=("system", "algorithm")):
    """Collective time or bus bandwidth against message size, one line per group.

    Parameters
    ----------
    rows : iterable of mapping
        Tidy rows with ``"size"`` (bytes), ``metric`` and the ``group`` keys.
    metric : {"time", "busbw", "algbw"}
        ``time`` in seconds (plotted in us, log scale); bandwidths in B/s
        (plotted in GB/s, GB = 1e9 as nccl-tests reports).
    group : tuple of str
        Row keys whose values name a line.

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> rows = [{"system": "s", "algorithm": "ring", "size": n, "time": 1e-6 + n / 1e10}
    ...         for n in (1024, 4096, 16384)]
    >>> ax = plot_collective_sweep(rows)
    >>> len(ax.lines), ax.get_yscale()
    (1, 'log')
    >>> plt.close(ax.figure)
    """
    if metric not in ("time", "busbw", "algbw"):
        raise ValueError(f"metric must be 'time', 'busbw' or 'algbw', got metric={metric!r}")
    rows = _check_rows(rows, ("size", metric, *group), "plot_collective_sweep")
    ax = _new_axes(ax)
    scale = 1e-6 if metric == "time" else 1e9
    markers = "os^Dv<>Px*"
    for i, (key, grp) in enumerate(_rows_by(rows, group).items()):
        grp = sorted(grp, key=lambda r: r["size"])
        ax.plot([r["size"] for r in grp], [r[metric] / scale for r in grp],
                marker=markers[i % len(markers)], markersize=2.5, label=" ".join(map(str, key)))
    _size_axis(ax, [r["size"] for r in rows])
    ax.set_xlabel("message size per rank")
    if metric == "time":
        ax.set_yscale("log")
        ax.set_ylabel("time (us)")
    else:
        ax.set_ylabel(f"{'bus' if metric == 'busbw' else 'algorithm'} bandwidth (GB/s)")
        ax.set_ylim(bottom=0)
    ax.legend(fontsize="x-small")
    return ax


def plot_ratio(rows, ax=None, *, group=("label",), reference=None, reference_label=None,
               ylabel="ratio"):
    """A ratio against message size, one line per group, with an optional reference line.

    Parameters
    ----------
    rows : iterable of mapping
        Tidy rows with ``"size"``, ``"ratio"`` and the ``group`` keys.
    reference : float, optional
        A horizontal line (for example a claimed speed-up) drawn for comparison.
    reference_label : str, optional
    ylabel : str

    Returns
    -------
    matplotlib.axes.Axes
    """
    rows = _check_rows(rows, ("size", "ratio", *group), "plot_ratio")
    ax = _new_axes(ax)
    for key, grp in _rows_by(rows, group).items():
        grp = sorted(grp, key=lambda r: r["size"])
        ax.plot([r["size"] for r in grp], [r["ratio"] for r in grp], marker="o",
                markersize=2.5, label=" ".join(map(str, key)))
    ax.axhline(1.0, color="0.3", linewidth=0.6, linestyle="-")
    if reference is not None:
        ax.axhline(reference, color="0.3", linewidth=0.8, linestyle=":",
                   label=reference_label or f"{reference:g}")
    _size_axis(ax, [r["size"] for r in rows])
    ax.set_yscale("log")
    ax.set_xlabel("message size per rank")
    ax.set_ylabel(ylabel)
    ax.legend(fontsize="x-small")
    return ax


def plot_link_utilization(utilization, ax=None):
    """Per-link utilization, busiest first, one curve per label.

    Parameters
    ----------
    utilization : mapping of str to array-like
        Label -> utilization of every directed link (0..1, 1 = the busiest link
        is the bottleneck of the drain time). Links that carry nothing count.

    Returns
    -------
    matplotlib.axes.Axes
    """
    if not utilization:
        raise ValueError("utilization: nothing to plot")
    ax = _new_axes(ax)
    for label, values in utilization.items():
        u = np.sort(np.asarray(values, dtype=float).ravel())[::-1]
        if u.size == 0:
            raise ValueError(f"utilization[{label!r}] is empty")
        frac = (np.arange(u.size) + 0.5) / u.size
        ax.plot(frac, u, label=label)
    ax.set_xlabel("fraction of directed links (busiest first)")
    ax.set_ylabel("utilization")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1.05)
    ax.legend(fontsize="x-small")
    return ax


def plot_failure_cost(rows, ax=None, *, metric="change"):
    """Grouped horizontal bars: the cost of one failure per system and failure kind.

    Parameters
    ----------
    rows : iterable of mapping
        Rows with ``"system"``, ``"failure"`` (e.g. ``"one link"``) and ``metric``:
        the relative change in percent (positive = worse).

    Returns
    -------
    matplotlib.axes.Axes
    """
    rows = _check_rows(rows, ("system", "failure", metric), "plot_failure_cost")
    ax = _new_axes(ax)
    systems = list(dict.fromkeys(r["system"] for r in rows))
    failures = list(dict.fromkeys(r["failure"] for r in rows))
    height = 0.8 / len(failures)
    colors = _palette()
    values = {(r["system"], r["failure"]): r[metric] for r in rows}
    for j, failure in enumerate(failures):
        ys = [i + (j - (len(failures) - 1) / 2) * height for i in range(len(systems))]
        ax.barh(ys, [values.get((s, failure), np.nan) for s in systems], height=height,
                color=colors[j % len(colors)], label=failure)
    ax.set_yticks(range(len(systems)), systems)
    ax.invert_yaxis()
    ax.axvline(0, color="0.3", linewidth=0.6)
    ax.set_xlabel("change (%)")
    ax.legend(fontsize="x-small")
    return ax


def plot_stacked_bars(rows, ax=None, *, category="system", part="component", value="time",
                      scale=1e-3, unit_name="ms"):
    """Stacked horizontal bars: ``value`` per ``part`` summed per ``category``.

    Parameters
    ----------
    rows : iterable of mapping
        Tidy rows with ``category``, ``part`` and ``value`` (seconds by default).
    scale, unit_name
        Display unit (default milliseconds).

    Returns
    -------
    matplotlib.axes.Axes
    """
    rows = _check_rows(rows, (category, part, value), "plot_stacked_bars")
    ax = _new_axes(ax)
    cats = list(dict.fromkeys(r[category] for r in rows))
    parts = list(dict.fromkeys(r[part] for r in rows))
    vals = {(r[category], r[part]): r[value] / scale for r in rows}
    left = np.zeros(len(cats))
    colors = _palette()
    hatches = ["", "//", "..", "xx", "\\\\", "oo", "--", "++"]
    for j, p in enumerate(parts):
        w = np.array([vals.get((c, p), 0.0) for c in cats])
        ax.barh(range(len(cats)), w, left=left, color=colors[j % len(colors)],
                hatch=hatches[(j // len(colors)) % len(hatches)], label=p, edgecolor="white",
                linewidth=0.3)
        left += w
    ax.set_yticks(range(len(cats)), cats)
    ax.invert_yaxis()
    ax.set_xlabel(f"{value} ({unit_name})")
    ax.legend(fontsize="x-small", ncol=2)
    return ax


def plot_tornado(rows, base, ax=None, *, scale=1e-3, unit_name="ms", xlabel="time"):
    """A tornado chart: each parameter at a low and a high value, one at a time.

    Bars run from the base value to the value at each end; parameters are
    sorted by their swing, the largest on top. Each bar end is labelled.

    Parameters
    ----------
    rows : iterable of mapping
        ``"parameter"``, ``"low"`` and ``"high"`` (labels of the two settings),
        ``"value_low"`` and ``"value_high"`` (seconds by default).
    base : float
        The value with every parameter at its base setting.
    scale, unit_name, xlabel
        Display unit and what the value is.

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> rows = [{"parameter": "a", "low": "x0.5", "high": "x2", "value_low": 1e-3,
    ...          "value_high": 4e-3}, {"parameter": "b", "low": "1", "high": "10",
    ...          "value_low": 2e-3, "value_high": 1.5e-3}]
    >>> ax = plot_tornado(rows, base=2e-3)
    >>> [t.get_text() for t in ax.get_yticklabels()]
    ['a', 'b']
    >>> plt.close(ax.figure)
    """
    rows = _check_rows(rows, ("parameter", "low", "high", "value_low", "value_high"),
                       "plot_tornado")
    ax = _new_axes(ax)
    rows = sorted(rows, key=lambda r: -abs(r["value_high"] - r["value_low"]))
    colors = _palette()
    b = base / scale
    for i, r in enumerate(rows):
        lo, hi = r["value_low"] / scale, r["value_high"] / scale
        for j, (v, label) in enumerate(((lo, r["low"]), (hi, r["high"]))):
            ax.barh(i, v - b, left=b, height=0.6, color=colors[j], alpha=0.85,
                    label=("low setting" if j == 0 else "high setting") if i == 0 else None)
            # The smaller end is labelled on its left, the larger on its right, so the two
            # labels never sit on each other (even when one end is the base).
            right = v > (hi if j == 0 else lo) or (v == (hi if j == 0 else lo) and j == 1)
            ax.annotate(label, (max(v, b) if right else min(v, b), i),
                        xytext=(3 if right else -3, 0), textcoords="offset points",
                        va="center", ha="left" if right else "right", fontsize="x-small")
    ax.axvline(b, color="0.2", linewidth=0.8)
    ax.set_yticks(range(len(rows)), [r["parameter"] for r in rows])
    ax.invert_yaxis()
    ax.set_xlabel(f"{xlabel} ({unit_name})")
    ax.margins(x=0.15)
    ax.legend(fontsize="x-small", loc="lower right")
    return ax
