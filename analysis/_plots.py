"""One plotting function per figure: ``ax=None`` in, the axes out, never ``show()``.

The functions draw plain data (arrays, tidy rows as dicts) except
:func:`plot_topology`, which draws a :class:`fabric.Fabric`. None sets a style:
wrap calls in :func:`analysis.paper_style` and save with
:func:`analysis.save_figure`. Units on the axes are the human ones (µs, GB/s,
KiB...); the data passed in are SI (seconds, bytes, bytes/s).

Examples
--------
>>> import numpy as np, matplotlib.pyplot as plt
>>> ax = plot_latency_cdf({"a": np.array([1e-6, 2e-6]), "b": np.array([3e-6])})
>>> ax.get_xlabel()
'latency (µs)'
>>> plt.close(ax.figure)
"""

import contextlib
import math
import re
from collections.abc import Mapping

import numpy as np

from fabric import SpecError, format_size
from fabric._arrays import real_array
from fabric._fabric_arg import fabric_arg
from fabric._units import (
    check_choice,
    check_number,
    is_finite,
    is_int,
    is_real,
    kind_error,
    sequence_of,
    show_value,
    text_of,
)

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
    "system_colors",
]


def _new_axes(ax, projection=None):
    """``ax``, else a new figure's axes: the one place a plot function takes its ``ax``
    (a string or a Figure was Python's "'str' object has no attribute 'step'")."""
    if ax is not None:
        from matplotlib.axes import Axes

        if not isinstance(ax, Axes):
            raise kind_error(ax, "ax", "a matplotlib Axes or None (a new figure's)")
        return ax
    import matplotlib.pyplot as plt

    fig = plt.figure()
    return fig.add_subplot(projection=projection)


#: System name -> colour, set by :func:`system_colors` for the figures drawn inside it.
_SYSTEM_COLORS = {}

#: Collective algorithms in a fixed order: each keeps one colour and marker in every
#: figure, from a colour map unlike the system palette (a colour never means a system in
#: one panel and an algorithm in the next).
_ALGORITHMS = ("ring", "double-binary-tree", "binomial", "recursive-doubling",
               "rabenseifner", "bruck", "pairwise", "scattered", "one-shot", "two-shot",
               "hierarchical", "in-switch", "multi-ring", "multi-dimensional",
               "multi-dimensional-pipelined", "swing")
_MARKERS = "os^Dv<>Px*hH8pd"


def system_colors(systems):
    """Within the block, system ``i`` of ``systems`` is drawn in colour ``i`` of the palette.

    Every plot here that draws one line or bar per system (or per label starting with a
    system's name) takes its colour from this map, so a system keeps its colour from
    figure to figure. Call it inside :func:`analysis.paper_style` (the palette is the
    style's).

    Parameters
    ----------
    systems : sequence of str
        The systems' names, in the order of the palette's colours.

    Returns
    -------
    context manager
        Checked when it is called (a TypeError for a set, one name, or a name that is not a
        str), not when its ``with`` block is entered.

    Examples
    --------
    >>> with system_colors(["a", "b"]):
    ...     _color_of("b load/store", 0) == palette()[1]
    True
    """
    # a sequence of names: a set gave each system a colour by its hash (another colour from
    # one PYTHONHASHSEED to the next), one name was read letter by letter; checked at the
    # call, as paper_style's (a wrong kind was raised only when the block was entered)
    systems = [text_of(n, f"systems[{i}]")
               for i, n in enumerate(sequence_of(systems, "systems", "system names"))]
    return _system_colors(systems)


@contextlib.contextmanager
def _system_colors(systems):
    old = dict(_SYSTEM_COLORS)
    pal = _palette()
    _SYSTEM_COLORS.clear()
    _SYSTEM_COLORS.update({n: pal[i % len(pal)] for i, n in enumerate(systems)})
    try:
        yield
    finally:
        _SYSTEM_COLORS.clear()
        _SYSTEM_COLORS.update(old)


def _system_of(label):
    """The registered system a label names (exactly, or as its first word), else None."""
    label = str(label)
    if label in _SYSTEM_COLORS:
        return label
    best = None
    for name in _SYSTEM_COLORS:
        if label.startswith(name + " ") and (best is None or len(name) > len(best)):
            best = name
    return best


def _color_of(label, i):
    """Colour of series ``i`` labelled ``label``: its system's, else the i-th of the palette."""
    system = _system_of(label)
    if system is not None:
        return _SYSTEM_COLORS[system]
    pal = _palette()
    return pal[i % len(pal)]


#: Algorithms beyond the 16 part colours take the colour of an algorithm (a kindred one
#: where it fits) that never appears beside them in one operation
#: (:data:`analysis.ALGORITHMS`), with a marker of their own: no two algorithms of one
#: operation share a colour, no two anywhere share colour and marker.
_ALGORITHM_KIN = {"recursive-halving": ("double-binary-tree", "v"),
                  "scatter-recursive-doubling": ("recursive-doubling", "^"),
                  "scatter-ring": ("ring", "D"), "point-to-point": ("ring", "X")}


def _algorithm_style(name, i):
    """(colour, marker) of an algorithm: fixed per name, from the non-system colours."""
    if name in _ALGORITHM_KIN:
        kin, marker = _ALGORITHM_KIN[name]
        return _PART_COLORS[_ALGORITHMS.index(kin)], marker
    k = _ALGORITHMS.index(name) if name in _ALGORITHMS else len(_ALGORITHMS) + i
    return _PART_COLORS[k % len(_PART_COLORS)], _MARKERS[k % len(_MARKERS)]


def part_colors():
    """Colours for things that are not systems (link technologies, algorithms, parts of a
    bar, bases of a comparison): none of them is in the system palette."""
    return list(_PART_COLORS)


def palette():
    """The paper style's colours, in order (the colour cycle of the current rcParams).

    Figures that show several systems give system ``i`` of the report colour ``i``, so
    a system keeps its colour from figure to figure.

    Examples
    --------
    >>> len(palette()), len(palette()[0])     # RGB tuples, components in [0, 1]
    (10, 3)
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


def _check_rows(rows, needed, what, *, numbers=(), gaps=(), logs=(), empty=False):
    """``rows`` as a list of the tidy rows (mappings) a row plot ``what`` draws, each holding
    the ``needed`` keys (those a caller names checked first: :func:`_row_keys`), the values
    of its ``numbers`` keys real numbers (:func:`fabric._units.is_real`; None too for a key
    in ``gaps``, a point not evaluated; an int a float holds), those of its ``logs`` keys (an axis always
    logarithmic: a message size, a chip count) finite and > 0; else a TypeError for a wrong
    kind (5 was Python's "not iterable", a row that is no mapping "argument of type 'int' is
    not iterable", a value '1e-5' "unsupported operand", True was drawn as 1) or a ValueError
    naming what a row lacks, a size of nan, inf or 0 (numpy's "cannot convert float NaN to
    integer", matplotlib's "Axis limits cannot be NaN or Inf"), or that there is no row
    (unless ``empty``: a plot that draws its frame without rows)."""
    rows = sequence_of(rows, f"{what}: rows", "rows (dicts of key -> value)")
    if not rows and not empty:
        raise ValueError(f"{what}: no rows to plot")
    for i, row in enumerate(rows):
        if not isinstance(row, Mapping):
            raise kind_error(row, f"{what}: rows[{i}]", "a dict of key -> value (one row)")
        missing = [k for k in needed if k not in row]
        if missing:
            raise ValueError(f"{what}: row {i} lacks {show_value(missing)}; each row needs "
                             f"{show_value(list(needed))}")
        for k in numbers:
            if not (is_real(row[k]) or (row[k] is None and k in gaps)):
                raise kind_error(row[k], f"{what}: rows[{i}][{show_value(k)}]",
                                 "a number or None" if k in gaps else "a number")
            if is_int(row[k]) and not is_finite(row[k]):     # 10**400: numpy's OverflowError
                raise SpecError(f"{what}: rows[{i}][{show_value(k)}] must be within a float's "
                                f"range, got {show_value(row[k])}")
        for k in logs:
            check_number(f"rows[{i}][{show_value(k)}]", row[k], 0, strict=True,
                         tail=f" ({what} draws it on a log axis)")
    return rows


def _row_keys(keys, name):
    """``keys``, the row keys a caller names (``group``), as a list of str: a sequence (one
    key given bare was read letter by letter, a set in its hash order), each a str (a list
    among them was 'unhashable')."""
    return [text_of(k, f"{name}[{i}]")
            for i, k in enumerate(sequence_of(keys, name, "row keys (str)"))]


def _display_unit(scale, unit_name, name="scale"):
    """A plot's display unit: the factor values are divided by (a finite number > 0: a
    string was "unsupported operand", nan drew nothing) and its name (a str)."""
    return check_number(name, scale, 0, strict=True), text_of(unit_name, "unit_name")


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
    _palette()
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
            segments[dim], colors=_part_color(dim) if dim >= 0 else "0.5",
            linewidths=0.45, alpha=0.55, label=label))
    chips = [n for n in fabric.endpoints]
    # chips shaded by their host (server) domain, so the hosts a plan spans can be seen
    host_of = fabric.host_of
    hosts = list(dict.fromkeys(host_of.get(n) for n in chips))
    if len(hosts) > 1 and None not in hosts:
        import matplotlib as mpl

        cmap = mpl.colormaps["cividis"]
        for k, h in enumerate(hosts):
            mine = np.array([pos[n] for n in chips if host_of.get(n) == h])
            shade = cmap(k / max(len(hosts) - 1, 1))
            label = (f"chips of {h}" if len(hosts) <= 8 else
                     f"chips, shaded by host ({len(hosts)} hosts)" if k == 0 else None)
            ax.scatter(mine[:, 0], mine[:, 1], mine[:, 2], s=9, color=shade,
                       edgecolors="black", linewidths=0.3, depthshade=False, zorder=3,
                       label=label)
    else:
        xyz = np.array([pos[n] for n in chips])
        ax.scatter(xyz[:, 0], xyz[:, 1], xyz[:, 2], s=7, c="black", depthshade=False,
                   zorder=3)
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
    ax.legend(loc="upper left", fontsize="x-small", ncol=2)
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


#: Colours of things that are not systems (link technologies, algorithms, parts, failure
#: kinds): dark and light tones of tab20b/tab20c, none of them in the system palette.
_PART_COLORS = ("#393b79", "#8c6d31", "#637939", "#843c39", "#7b4173", "#6b6ecf",
                "#e7ba52", "#b5cf6b", "#d6616b", "#ce6dbd", "#9c9ede", "#636363",
                "#a55194", "#8ca252", "#bd9e39", "#ad494a")

#: A layer pair joined completely (every node to every node) with more links than this is
#: drawn as one shaded band, not as lines (which merge into a moire pattern).
_BAND_LINKS = 150


def _part_color(i):
    return _PART_COLORS[i % len(_PART_COLORS)]


def _host_of_node(G, n):
    """The host a chip or NIC belongs to, or that a board switch serves (None otherwise)."""
    host = G.nodes[n].get("host")
    if host is not None and G.nodes[n].get("kind") != "switch":
        return host
    if G.nodes[n].get("kind") == "switch":
        hosts = {G.nodes[m].get("host") for m in G.neighbors(n)}
        kinds = {G.nodes[m].get("kind") for m in G.neighbors(n)}
        if len(hosts) == 1 and kinds == {"chip"}:
            return hosts.pop()
    return None


def _draw_layers(fabric, ax):
    from matplotlib.collections import LineCollection
    from matplotlib.patches import Polygon, Rectangle

    G = fabric.graph
    has_nics = any(k == "nic" for _, k in G.nodes(data="kind"))
    layers = {}
    order = {n: i for i, n in enumerate(G.nodes)}
    for n in G.nodes:
        layers.setdefault(_layer_of(G, n, has_nics), []).append(n)
    levels = sorted(layers)
    host = {n: _host_of_node(G, n) for n in G.nodes}
    hosts = list(dict.fromkeys(fabric.host_of.get(n) for n in fabric.endpoints))
    boxed = 2 <= len(hosts) <= 64 and len(fabric.endpoints) > len(hosts)
    x = {}
    # Chips first in rank order, a gap between host domains (servers) when they are drawn
    # as boxes; then each layer outward from them: a node sits above the mean of its
    # neighbours already placed (barycentre heuristic), ties in graph order.
    for level in sorted(levels, key=lambda lv: (abs(lv), lv)):
        nodes = layers[level]
        if level == 0:
            ranked = [n for n in fabric.endpoints if n in set(nodes)] or nodes
            gaps = [hosts.index(host[n]) if boxed and host[n] in hosts else 0 for n in ranked]
            width = len(ranked) + (0.6 * len(hosts) if boxed else 0)
            for i, (n, g) in enumerate(zip(ranked, gaps)):
                x[n] = (i + 0.5 + (0.6 * g + 0.3 if boxed else 0)) / width
            continue

        def key(n):
            placed = [x[m] for m in G.neighbors(n) if m in x]
            return (sum(placed) / len(placed) if placed else 0.5, order[n])
        ranked = sorted(nodes, key=key)
        k = len(ranked)
        for i, n in enumerate(ranked):
            x[n] = (i + 0.5) / k
        # Nodes of one host (NICs, board switches) sit above or below their host's chips.
        if boxed and all(host[n] is not None for n in ranked):
            for n in ranked:
                x[n] = key(n)[0]
    y = {n: float(rank) for rank, level in enumerate(levels) for n in layers[level]}
    level_of = {n: lv for lv in levels for n in layers[lv]}
    if boxed:
        for h in hosts:
            members = [n for n in G.nodes if host[n] == h]
            xs, ys = [x[n] for n in members], [y[n] for n in members]
            pad = 0.35 / max(len(fabric.endpoints), 1)
            ax.add_patch(Rectangle((min(xs) - pad - 0.004, min(ys) - 0.22),
                                   max(xs) - min(xs) + 2 * pad + 0.008, max(ys) - min(ys) + 0.44,
                                   facecolor="0.92", edgecolor="0.55", linewidth=0.4, zorder=0,
                                   label="host domain (server)" if h == hosts[0] else None))
    techs, bands = {}, []
    pairs = {}
    for u, v, t in G.edges(data="tech"):
        pairs.setdefault((min(level_of[u], level_of[v]), max(level_of[u], level_of[v]), t),
                         []).append((u, v))
    for (la, lb, t), edges in sorted(pairs.items(), key=lambda kv: (kv[0][0], kv[0][1],
                                                                    str(kv[0][2]))):
        na, nb = len(layers[la]), len(layers[lb])
        if la != lb and len(edges) == na * nb and len(edges) > _BAND_LINKS:
            bands.append((la, lb, t or "link", na, nb))
            techs.setdefault(t or "link", [])
            continue
        techs.setdefault(t or "link", []).extend(
            ((x[u], y[u]), (x[v], y[v])) for u, v in edges)
    names = sorted(techs)
    for tech in names:
        if techs[tech]:
            ax.add_collection(LineCollection(techs[tech], colors=_part_color(names.index(tech)),
                                             linewidths=0.5, alpha=0.6, label=tech))
    for la, lb, tech, na, nb in bands:
        xa = [x[n] for n in layers[la]]
        xb = [x[n] for n in layers[lb]]
        ya, yb = y[layers[la][0]], y[layers[lb][0]]
        color = _part_color(names.index(tech))
        ax.add_patch(Polygon([(min(xa), ya), (max(xa), ya), (max(xb), yb), (min(xb), yb)],
                             closed=True, facecolor=color, alpha=0.22, edgecolor=color,
                             linewidth=0.6, zorder=1,
                             label=tech if not techs[tech] else None))
        ax.text(0.5, (ya + yb) / 2, f"every one of the {na} to every one of the {nb}:\n"
                f"{na * nb} {tech} links (drawn as a band)", ha="center", va="center",
                fontsize="x-small", color="0.15",
                bbox={"facecolor": "white", "edgecolor": "none", "alpha": 0.8, "pad": 1.5})
    markers = {"chip": ("o", 6, "black"), "nic": ("s", 5, "0.45"), "switch": ("s", 14, "0.15")}
    labels = []
    for level in levels:
        nodes = layers[level]
        kind = G.nodes[nodes[0]].get("kind", "switch")
        marker, size, color = markers.get(kind, ("D", 8, "0.3"))
        ax.scatter([x[n] for n in nodes], [y[n] for n in nodes], s=size, marker=marker,
                   c=color, zorder=3, linewidths=0)
        labels.append(_layer_name(G, nodes))
    ax.set_yticks(range(len(levels)), labels)
    ax.set_xticks([])
    ax.set_xlim(0, 1)
    ax.set_ylim(-0.4, len(levels) - 0.6)
    ax.grid(False)
    for side in ("top", "right", "bottom"):
        ax.spines[side].set_visible(False)
    handles, texts = ax.get_legend_handles_labels()
    ax.legend(handles, texts, loc="upper center", bbox_to_anchor=(0.5, -0.02),
              ncol=min(len(texts), 4), fontsize="x-small")
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
    fabric = fabric_arg(fabric)
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


def plot_latency_cdf(samples, ax=None, *, unit=1e-6, unit_name="\u00b5s", xlabel="latency"):
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

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> ax = plot_latency_cdf({"load/store": [0.6e-6, 0.9e-6, 1.2e-6]}, ax=Figure().subplots())
    >>> ax.get_xlabel(), [round(float(y), 3) for y in ax.lines[0].get_ydata()]
    ('latency (µs)', [0.0, 0.333, 0.667, 1.0, 1.0])
    """
    if not isinstance(samples, Mapping):     # one curve's array: a label names each curve
        raise kind_error(samples, "samples", "a mapping of label -> latencies "
                                             "(e.g. {'load/store': [...]})")
    unit, unit_name = _display_unit(unit, unit_name, "unit")
    xlabel = text_of(xlabel, "xlabel")
    if not samples:
        raise ValueError("samples: nothing to plot")
    curves = []
    for label, values in samples.items():
        key = f"samples[{show_value(label)}]"
        v = np.sort(real_array(values, key, f"{key} must be latencies in seconds").ravel()) / unit
        if v.size == 0:
            raise ValueError(f"{key} is empty")
        curves.append((label, v))
    ax = _new_axes(ax)          # after the checks: a refused input leaves no figure behind
    lo = min(v[0] for _, v in curves)
    hi = max(v[-1] for _, v in curves)
    right = hi + 0.06 * (hi - lo if hi > lo else hi or 1.0)
    for i, (label, v) in enumerate(curves):
        # Step ECDF, carried on at 1.0 to the right edge so that every curve visibly
        # reaches 1 (its last step is not hidden under the axis' edge).
        y = np.arange(1, v.size + 1) / v.size
        ax.step(np.concatenate([[v[0]], v, [right]]), np.concatenate([[0.0], y, [1.0]]),
                where="post", label=label, color=_color_of(label, i), clip_on=False)
    ax.set_xlim(right=right)
    ax.set_xlabel(f"{xlabel} ({unit_name})")
    ax.set_ylabel("fraction of chip pairs")
    ax.set_ylim(0, 1.05)
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


def plain_log_labels(axis):
    """Label a log axis in plain numbers (2, 5, 10, 20, ...) rather than powers of ten.

    Readers of a report compare values read off the axis; "10^2" makes them convert.
    """
    from matplotlib.ticker import LogFormatter

    fmt = {"labelOnlyBase": False, "minor_thresholds": (2, 1)}
    axis.set_major_formatter(LogFormatter(**fmt))
    axis.set_minor_formatter(LogFormatter(**fmt))


#: Room above the tallest bar of :func:`log_ticks_above`, as a fraction of the axis height.
LOG_TOP_ROOM = 0.03


def log_ticks_above(ax, values, bottom):
    """Plain-number ticks on a log y axis whose top is a labelled tick at or above every
    value (a bar above the last label, as 7.9 over a top label of 6, cannot be read off the
    axis), with :data:`LOG_TOP_ROOM` of the axis between the tallest bar and the top. Ticks at 1-2-3-4-6-8 per decade for a short axis, 1-2-5 for up to three decades,
    powers of ten beyond; ``bottom`` is the axis' lower limit.

    >>> from matplotlib.figure import Figure
    >>> ax = Figure().subplots()
    >>> _ = ax.bar([0, 1], [0.74, 7.9]); ax.set_yscale("log")
    >>> log_ticks_above(ax, [0.74, 7.9], bottom=0.37)
    >>> float(ax.get_ylim()[1]), [f"{t:g}" for t in ax.get_yticks()]
    (10.0, ['0.4', '0.6', '0.8', '1', '2', '3', '4', '6', '8', '10'])
    """
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter

    v = [x for x in values if x is not None and x > 0]
    if not v or not bottom > 0:
        return
    hi = max(v)
    span = math.log10(hi / bottom)
    subs = (1, 2, 3, 4, 6, 8) if span <= 1.5 else (1, 2, 5) if span <= 3 else (1,)
    ticks = [m * 10.0 ** k for k in range(math.floor(math.log10(bottom)) - 1,
                                          math.ceil(math.log10(hi)) + 2) for m in subs]
    ticks = [float(f"{t:.6g}") for t in ticks]     # 3 * 0.1 is 0.30000000000000004
    # the top label above the tallest bar with room on the page (a bar touching the top
    # frame reads as cut off): 2% in value was 0.7% of a two-decade axis, and the fair
    # figure's 967 GB/s bar touched its 1000 frame
    top = min(t for t in ticks if t >= hi and math.log10(t / hi)
              >= LOG_TOP_ROOM * math.log10(t / bottom))
    ax.set_ylim(bottom, top)
    ax.yaxis.set_major_locator(FixedLocator([t for t in ticks if bottom <= t <= top]))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{x:g}"))
    ax.yaxis.set_minor_formatter(NullFormatter())


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
        ``time`` in seconds (plotted in µs, log scale); bandwidths in B/s
        (plotted in GB/s, GB = 1e9 as nccl-tests reports; log scale when the
        values span more than a factor of 20).
    group : tuple of str
        Row keys whose values name a line.
    ax : matplotlib.axes.Axes, optional
        The axes drawn on; default a new figure's.

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
    check_choice(metric, "metric", ("time", "busbw", "algbw"))
    group = _row_keys(group, "group")
    rows = _check_rows(rows, ("size", metric, *group), "plot_collective_sweep",
                       numbers=("size", metric), logs=("size",))
    ax = _new_axes(ax)
    scale = 1e-6 if metric == "time" else 1e9
    series, drawn = [], []
    for key, grp in _rows_by(rows, group).items():
        grp = sorted(grp, key=lambda r: r["size"])
        series.append((" ".join(map(str, key)), [r["size"] for r in grp],
                       np.array([r[metric] / scale for r in grp], dtype=float)))
    by_algorithm = tuple(group) == ("algorithm",)
    for i, (label, x, y) in enumerate(series):
        if by_algorithm:
            color, marker = _algorithm_style(label, i)
        else:
            color, marker = _color_of(label, i), _MARKERS[i % len(_MARKERS)]
        # A series equal (or within COINCIDE_RTOL at every size: closer than a marker on
        # these axes) to one drawn before would hide under it: say so in the legend and
        # put its markers between the other's.
        same, sign = None, "="
        for lab, xx, yy in drawn:
            if xx != x:
                continue
            if np.allclose(yy, y, rtol=1e-9, atol=0):
                same = lab
                break
            if same is None and np.allclose(yy, y, rtol=COINCIDE_RTOL, atol=0):
                same, sign = lab, "\u2248"
        # Algorithms: open markers, so they never read as the filled markers of systems.
        ax.plot(x, y, marker=marker, markersize=2.5 if same is None else 4,
                markevery=(1, 2) if same is not None else 1, color=color,
                markerfacecolor="white" if by_algorithm else color,
                linestyle="-" if same is None else (0, (2, 2)),
                label=label if same is None else f"{label} ({sign} {same})")
        drawn.append((label, x, y))
    _size_axis(ax, [r["size"] for r in rows])
    ax.set_xlabel("message size per rank")
    if metric == "time":
        ax.set_yscale("log")
        ax.set_ylabel("time (\u00b5s)")
    else:
        ax.set_ylabel(f"{'bus' if metric == 'busbw' else 'algorithm'} bandwidth (GB/s)")
        values = np.concatenate([y for _, _, y in series])
        positive = values[values > 0]
        if positive.size and positive.max() / positive.min() > 20:
            ax.set_yscale("log")     # the curves span decades: a linear axis piles them at 0
        else:
            ax.set_ylim(bottom=0)
    ax.legend(fontsize="x-small", title="algorithm" if by_algorithm else None,
              title_fontsize="x-small")
    return ax


#: Two curves of a collective sweep closer than this (relative, at every size) are drawn as
#: one hiding the other: the later one dashed, labelled "(\u2248 the other)". 10 % is 0.04 of
#: a decade, about the size of a marker on the sweeps' log axes.
COINCIDE_RTOL = 0.10


def _readable_log_ticks(ax, values):
    """Label a log y axis at 1-2-5 steps when its data span less than three decades (a
    span of 0.3 to 11 would otherwise show only the labels 1 and 10, one of 0.3 to 56 only
    10^0 and 10^1), as plain numbers."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    v = [x for x in values if x is not None and x > 0]
    if not v or max(v) / min(v) >= 1000:
        return
    ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{x:g}"))
    ax.yaxis.set_minor_formatter(NullFormatter())


#: Lines of a ratio figure closer than this (relative, at every size) lie on top of one
#: another: the 1% a caption calls "within 1% of 1" (``_report_sweeps._coincident``).
RATIO_COINCIDE_RTOL = 0.01


def _coincident_groups(series):
    """Indices of ``series`` (label, sizes, ratios) in groups whose lines lie on top of one
    another (the same sizes, ratios within :data:`RATIO_COINCIDE_RTOL` at every size),
    each group in drawing order; series alone are left out."""
    groups = []
    for i, (_, x, y) in enumerate(series):
        for g in groups:
            _, xx, yy = series[g[0]]
            if xx == x and np.allclose(yy, y, rtol=RATIO_COINCIDE_RTOL, atol=0):
                g.append(i)
                break
        else:
            groups.append([i])
    return [g for g in groups if len(g) > 1]


def plot_ratio(rows, ax=None, *, group=("label",), reference=None, reference_label=None,
               ylabel="ratio"):
    """A ratio against message size, one line per group, with an optional reference line.

    Lines that lie on top of one another (within 1% at every size) would show only the
    last one drawn: their markers alternate along the line, one colour after the other,
    and the line is labelled on the axes with what lies there (for example
    "all-to-all, 3 systems: lines on top of one another").

    Parameters
    ----------
    rows : iterable of mapping
        Tidy rows with ``"size"``, ``"ratio"`` and the ``group`` keys.
    reference : float, optional
        A horizontal line (for example a claimed speed-up) drawn for comparison; > 0 (the
        ratio's axis is logarithmic).
    reference_label : str, optional
    ylabel : str
    group : tuple of str
        Row keys whose values name a line.
    ax : matplotlib.axes.Axes, optional
        The axes drawn on; default a new figure's.

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> rows = [{"label": op, "size": n, "ratio": 1.0}
    ...         for op in ("a", "b") for n in (1024, 2048, 4096)]
    >>> ax = plot_ratio(rows)
    >>> [t.get_text() for t in ax.texts]
    ['a, b:\\nlines on top of one another']
    >>> plt.close(ax.figure)
    """
    group = _row_keys(group, "group")
    if reference is not None:       # a line on a log axis
        reference = check_number("reference", reference, 0, strict=True)
    reference_label = text_of(reference_label, "reference_label", optional=True)
    ylabel = text_of(ylabel, "ylabel")
    rows = _check_rows(rows, ("size", "ratio", *group), "plot_ratio",
                       numbers=("size", "ratio"), gaps=("ratio",), logs=("size",))
    ax = _new_axes(ax)
    # one colour per system (its colour in every figure); the rest of the label (the
    # operation) picks the line style and marker, the same for every system
    styles, markers = ("-", "--", ":", "-."), ("o", "s", "^", "D")
    series = []
    for key, grp in _rows_by(rows, group).items():
        grp = sorted(grp, key=lambda r: r["size"])
        series.append((" ".join(map(str, key)), [r["size"] for r in grp],
                       np.array([r["ratio"] for r in grp], dtype=float)))
    # lines on top of one another: each shows its markers at every k-th size, shifted by
    # its place in the group, so every colour is seen along the line
    stagger = {i: (j, len(g)) for g in _coincident_groups(series) for j, i in enumerate(g)}
    rests = {}
    for i, (label, x, y) in enumerate(series):
        system = _system_of(label)
        rest = label[len(system):].strip() if system else ""
        k = rests.setdefault(rest, len(rests))
        ax.plot(x, y, marker=markers[k % len(markers)],
                markersize=2.5 if i not in stagger else 3.5,
                markevery=stagger.get(i, 1), zorder=2.2 if i in stagger else 2,
                linestyle=styles[k % len(styles)], color=_color_of(label, i), label=label)
    # the reference lines under the curves (a curve at 1 stays seen)
    ax.axhline(1.0, color="0.3", linewidth=0.6, linestyle="-", zorder=1.5)
    if reference is not None:
        ax.axhline(reference, color="0.3", linewidth=0.8, linestyle=":", zorder=1.5,
                   label=reference_label or f"{reference:g}")
    for g in _coincident_groups(series):
        _label_coincident(ax, [series[i] for i in g])
    _size_axis(ax, [r["size"] for r in rows])
    ax.set_yscale("log")
    _readable_log_ticks(ax, [r["ratio"] for r in rows]
                        + ([reference] if reference is not None else []))
    ax.set_xlabel("message size per rank")
    ax.set_ylabel(ylabel)
    # below the axes, where no curve can be hidden under it; centred on the figure when
    # the axes are its only ones (centred on axes pushed right by their y label, a wide
    # legend ran off the figure's right edge)
    if len(ax.figure.axes) == 1 and ax.figure.get_layout_engine() is not None:
        handles, labels = ax.get_legend_handles_labels()
        ax.figure.legend(handles, labels, loc="outside lower center", ncol=2,
                         fontsize="x-small", frameon=False)
    else:
        ax.legend(fontsize="x-small", loc="upper center", bbox_to_anchor=(0.5, -0.22), ncol=2,
                  borderaxespad=0.0, frameon=False)
    return ax


#: Clear space (points) :func:`dodge_markers` keeps between markers of different lines:
#: closer than a marker width plus this, two markers read as one.
MARKER_CLEARANCE_PT = 1.0


def _marker_points(line):
    """(index, x, y) of each marker ``line`` draws: every point, or its ``markevery``
    ones when that is a list of indices or a step (what the plotting functions here use)."""
    x, y = np.asarray(line.get_xdata(), float), np.asarray(line.get_ydata(), float)
    every = line.get_markevery()
    if every is None:
        idx = range(len(x))
    elif isinstance(every, int):
        idx = range(0, len(x), every)
    elif isinstance(every, tuple) and all(isinstance(v, int) for v in every):
        idx = range(every[0], len(x), every[1])
    elif isinstance(every, (list, np.ndarray)) and all(isinstance(v, (int, np.integer))
                                                       for v in every):
        idx = [int(v) for v in every]
    else:
        raise ValueError(f"dodge_markers: line {line.get_label()!r} has markevery={every!r}; "
                         "only None, a step, (start, step) or a list of indices are read")
    return [(i, x[i], y[i]) for i in idx if np.isfinite(x[i]) and np.isfinite(y[i])]


def _hide(p, q, p_at, q_at):
    """Whether markers ``p`` and ``q`` (of different lines), drawn at page x ``p_at`` and
    ``q_at``, are closer than a marker width plus :data:`MARKER_CLEARANCE_PT`."""
    w = (p[6] + q[6]) / 2 + MARKER_CLEARANCE_PT
    return p[0] != q[0] and abs(p_at - q_at) < w and abs(p[5] - q[5]) < w


def _spread(group):
    """Page x of each marker of ``group`` (sorted in place by page x, then line): left to
    right, each as far right as the markers beside it vertically leave room for, then the
    whole group moved back so its markers move by nothing on average."""
    group.sort(key=lambda p: (p[4], p[0]))
    at = []
    for j, p in enumerate(group):
        room = [at[m] + (p[6] + q[6]) / 2 + MARKER_CLEARANCE_PT
                for m, q in enumerate(group[:j])
                if q[0] != p[0] and abs(p[5] - q[5]) < (p[6] + q[6]) / 2 + MARKER_CLEARANCE_PT]
        at.append(max([p[4], *room]))
    centre = sum(a - p[4] for a, p in zip(at, group)) / len(group)
    return [a - centre for a in at]


def _dodge_groups(pts):
    """``pts`` in groups to spread: markers that hide one another share a group, and
    groups whose spread markers would hide a marker of another group are merged and spread
    again, until no two markers hide one another (each merge leaves one group fewer)."""
    groups = [[p] for p in pts]
    while True:
        at = []
        for g in groups:
            spread = _spread(g)                 # sorts g
            at.append({id(p): a for p, a in zip(g, spread)})
        hit = next(((a, b) for a in range(len(groups)) for b in range(a)
                    for p in groups[a] for q in groups[b]
                    if _hide(p, q, at[a][id(p)], at[b][id(q)])), None)
        if hit is None:
            return groups
        a, b = hit
        groups[b].extend(groups.pop(a))


def dodge_markers(fig):
    """Set side by side, on the page, markers of different lines that would hide one another.

    Two markers hide one another when their boxes (marker size plus edge, in points) overlap
    on the page at the figure's final layout (closer than a marker width plus
    :data:`MARKER_CLEARANCE_PT`). Each such group, on one axes, is spread sideways: left to
    right (by x, then drawing order), each marker goes as far right as the markers beside
    it vertically leave room for, and the group is re-centred on its markers' own places.
    Groups whose spread markers would hide another marker are merged and spread again, so
    no two markers of different lines hide one another at the end. The lines themselves
    stay through the true points: only the markers move, by a few points. Every line's
    colour and shape then show at every point, and a legend names them. Call it once every axes of ``fig`` is drawn (it lays the
    figure out once, without rendering, to know where the markers fall).

    Parameters
    ----------
    fig : matplotlib.figure.Figure

    Returns
    -------
    list of (axes, list of (label, x, y))
        The groups moved, each member with its line's label and its data point, for a
        caption to name (lines with no label, ``_``-prefixed, are never moved).

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> fig, ax = plt.subplots()
    >>> _ = ax.plot([1, 2], [1.0, 5.0], marker="o", label="a")
    >>> _ = ax.plot([1, 2], [1.001, 9.0], marker="s", label="b")
    >>> [[m[0] for m in g] for _, g in dodge_markers(fig)]
    [['a', 'b']]
    >>> plt.close(fig)
    """
    from matplotlib.lines import Line2D
    from matplotlib.transforms import ScaledTranslation

    fig.draw_without_rendering()
    to_pt = 72.0 / fig.dpi
    moved = []
    for ax in fig.axes:
        lines = [ln for ln in ax.get_lines() if not ln.get_label().startswith("_")
                 and ln.get_marker() not in (None, "None", "none", "", " ")]
        pts = []          # (line number, index, x, y, page x, page y, width), in points
        for k, ln in enumerate(lines):
            width = ln.get_markersize() + ln.get_markeredgewidth()
            for i, x, y in _marker_points(ln):
                px, py = ax.transData.transform((x, y)) * to_pt
                pts.append((k, i, x, y, px, py, width))
        groups = _dodge_groups(pts)
        for group in groups:
            if len(group) < 2:
                continue
            for (k, i, x, y, px, _, _), a in zip(group, _spread(group)):
                ln = lines[k]
                keep = [m for m, *_ in _marker_points(ln) if m != i]
                ln.set_markevery(keep)
                ax.add_line(Line2D(
                    [x], [y], linestyle="none", marker=ln.get_marker(),
                    markersize=ln.get_markersize(), markeredgewidth=ln.get_markeredgewidth(),
                    markerfacecolor=ln.get_markerfacecolor(),
                    markeredgecolor=ln.get_markeredgecolor(), zorder=ln.get_zorder() + 0.1,
                    label="_dodged", clip_on=False,
                    transform=ax.transData + ScaledTranslation((a - px) / 72.0, 0,
                                                               fig.dpi_scale_trans)))
            moved.append((ax, [(lines[k].get_label(), x, y) for k, _, x, y, *_ in group]))
    return moved


def _label_coincident(ax, group):
    """Say on the axes which lines lie on top of one another: two short lines of text just
    above the group's line, from its first size. Lines of one operation on several systems
    read "<operation>, <n> systems: / lines on top of one another"; others name every
    line."""
    labels = [lab for lab, _, _ in group]
    systems = [_system_of(lab) for lab in labels]
    rests = {lab[len(s):].strip() if s else None for lab, s in zip(labels, systems)}
    if None not in systems and len(rests) == 1 and "" not in rests:
        text = f"{rests.pop()}, {len(group)} systems:\nlines on top of one another"
    else:
        text = f"{', '.join(labels)}:\nlines on top of one another"
    _, x, y = group[0]
    ax.annotate(text, xy=(x[0], y[0]), xytext=(1, 9), textcoords="offset points",
                ha="left", va="bottom", fontsize="x-small", color="0.2", linespacing=1.1)


def plot_link_utilization(utilization, ax=None):
    """Per-link utilization, busiest first, one curve per label.

    Parameters
    ----------
    utilization : mapping of str to array-like
        Label -> utilization of every directed link (0..1, 1 = the busiest link
        is the bottleneck of the drain time). Links that carry nothing count.
    ax : matplotlib.axes.Axes, optional
        The axes drawn on; default a new figure's.

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> ax = plot_link_utilization({"ring": [0.0, 1.0, 0.0, 0.5]}, ax=Figure().subplots())
    >>> ax.lines[0].get_ydata().tolist()          # busiest first
    [1.0, 0.5, 0.0, 0.0]
    """
    if not isinstance(utilization, Mapping):     # one curve's array: a label names each curve
        raise kind_error(utilization, "utilization", "a mapping of label -> link utilizations "
                                                     "(e.g. {'ring': [...]})")
    if not utilization:
        raise ValueError("utilization: nothing to plot")
    sorted_values = {}
    for label, values in utilization.items():
        key = f"utilization[{show_value(label)}]"
        u = np.sort(real_array(values, key, f"{key} must be fractions").ravel())[::-1]
        if u.size == 0:
            raise ValueError(f"{key} is empty")
        sorted_values[label] = u
    ax = _new_axes(ax)          # after the checks: a refused input leaves no figure behind
    k = len(utilization)
    for i, (label, u) in enumerate(sorted_values.items()):
        frac = (np.arange(u.size) + 0.5) / u.size
        # Curves that coincide (every link equally busy: a flat line at 1) stay visible:
        # markers at staggered places along each curve, drawn over the axes' edge.
        spots = (np.arange(6) + (i + 1) / (k + 1)) / 6          # 6 marks, shifted per curve
        marks = sorted({int(v) for v in np.rint(spots * (u.size - 1))})
        ax.plot(frac, u, label=label, color=_color_of(label, i), clip_on=False,
                marker=_MARKERS[i % len(_MARKERS)], markevery=marks, markersize=3.5)
    ax.set_xlabel("fraction of directed links (busiest first)")
    ax.set_ylabel("utilization")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1.1)
    ax.legend(fontsize="x-small")
    return ax


def plot_failure_cost(rows, ax=None, *, metric="change"):
    """Grouped horizontal bars: the cost of one failure per system and failure kind.

    Parameters
    ----------
    rows : iterable of mapping
        Rows with ``"system"``, ``"failure"`` (e.g. ``"one link"``) and ``metric``:
        the relative change in percent (positive = worse).
    metric : str
        The row key holding the change, in percent.
    ax : matplotlib.axes.Axes, optional
        The axes drawn on; default a new figure's.

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> rows = [{"system": "torus:4x4", "failure": "one link", "change": 12.5},
    ...         {"system": "torus:4x4", "failure": "one chip", "change": 0.0}]
    >>> ax = plot_failure_cost(rows, ax=Figure().subplots())
    >>> [t.get_text() for t in ax.texts]          # every bar labelled, a zero too
    ['+12.5%', '+0.0%']
    """
    metric = text_of(metric, "metric")
    rows = _check_rows(rows, ("system", "failure", metric), "plot_failure_cost",
                       numbers=(metric,))
    ax = _new_axes(ax)
    systems = list(dict.fromkeys(r["system"] for r in rows))
    failures = list(dict.fromkeys(r["failure"] for r in rows))
    height = 0.8 / len(failures)
    values = {(r["system"], r["failure"]): r[metric] for r in rows}
    for j, failure in enumerate(failures):
        ys = [i + (j - (len(failures) - 1) / 2) * height for i in range(len(systems))]
        vals = [values.get((s, failure), np.nan) for s in systems]
        ax.barh(ys, vals, height=height, color=_part_color(j), label=failure)
        # Every bar gets its value, so a change of 0 reads "+0.0%" (computed, no effect)
        # rather than an empty slot; a tick marks it on the axis.
        for y_, v in zip(ys, vals):
            if np.isfinite(v):
                ax.annotate(f"{v:+.1f}%", (v, y_), xytext=(2 if v >= 0 else -2, 0),
                            textcoords="offset points", va="center",
                            ha="left" if v >= 0 else "right", fontsize="xx-small")
                if v == 0:
                    ax.plot([0], [y_], marker="|", markersize=6, color=_part_color(j))
    ax.set_yticks(range(len(systems)), systems)
    ax.invert_yaxis()
    ax.axvline(0, color="0.3", linewidth=0.6)
    ax.margins(x=0.15)
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
    category, part, value : str
        The row keys of a bar's label, a segment's label and its value.
    ax : matplotlib.axes.Axes, optional
        The axes drawn on; default a new figure's.

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> rows = [{"system": "a", "component": "gemm", "time": 2e-3},
    ...         {"system": "a", "component": "all-reduce", "time": 0.5e-3}]
    >>> ax = plot_stacked_bars(rows, ax=Figure().subplots())
    >>> ax.get_xlabel(), [float(bar.get_width()) for bar in ax.patches]
    ('time (ms)', [2.0, 0.5])
    """
    category, part, value = (text_of(k, name) for k, name in (
        (category, "category"), (part, "part"), (value, "value")))
    scale, unit_name = _display_unit(scale, unit_name)
    rows = _check_rows(rows, (category, part, value), "plot_stacked_bars", numbers=(value,))
    ax = _new_axes(ax)
    cats = list(dict.fromkeys(r[category] for r in rows))
    parts = list(dict.fromkeys(r[part] for r in rows))
    vals = {(r[category], r[part]): r[value] / scale for r in rows}
    left = np.zeros(len(cats))
    colors = _palette()
    hatches = ["", "//", "..", "xx", "\\\\", "oo", "--", "++"]
    for j, p in enumerate(parts):
        w = np.array([vals.get((c, p), 0.0) for c in cats])
        ax.barh(range(len(cats)), w, left=left, color=_part_color(j),
                hatch=hatches[(j // len(colors)) % len(hatches)], label=p, edgecolor="white",
                linewidth=0.3)
        left += w
    ax.set_yticks(range(len(cats)), cats)
    ax.invert_yaxis()
    ax.set_xlabel(f"{value} ({unit_name})")
    # above the bars, where it hides none of them
    ax.legend(fontsize="x-small", ncol=min(len(parts), 3), loc="lower center",
              bbox_to_anchor=(0.5, 1.01), borderaxespad=0.0, frameon=False)
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
        The value with every parameter at its base setting (a finite number).
    scale, unit_name, xlabel
        Display unit and what the value is.
    ax : matplotlib.axes.Axes, optional
        The axes drawn on; default a new figure's.

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
    base = check_number("base", base, None)
    scale, unit_name = _display_unit(scale, unit_name)
    xlabel = text_of(xlabel, "xlabel")
    rows = _check_rows(rows, ("parameter", "low", "high", "value_low", "value_high"),
                       "plot_tornado", numbers=("value_low", "value_high"))
    ax = _new_axes(ax)
    rows = sorted(rows, key=lambda r: -abs(r["value_high"] - r["value_low"]))
    b = base / scale
    for i, r in enumerate(rows):
        lo, hi = r["value_low"] / scale, r["value_high"] / scale
        if max(abs(lo - b), abs(hi - b)) <= 1e-9 * max(abs(b), 1e-300):
            # no effect: a bar of zero width reads as "not computed", so say it
            ax.plot([b], [i], marker="D", markersize=3, color="0.2", linestyle="none")
            ax.annotate(f"no effect ({r['low']}, {r['high']})", (b, i), xytext=(5, 0),
                        textcoords="offset points", va="center", ha="left",
                        fontsize="x-small")
            continue
        for j, (v, label) in enumerate(((lo, r["low"]), (hi, r["high"]))):
            ax.barh(i, v - b, left=b, height=0.6, color=_part_color(j), alpha=0.85,
                    label=("low setting" if j == 0 else "high setting") if i == 0 else None)
            # a tick at the bar's end: a bar too short to see (a 0.1 % effect) still shows
            ax.plot([v], [i], marker="|", markersize=9, color=_part_color(j),
                    linestyle="none")
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
    # above the axes: inside, it covered the labels of the bottom rows
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize="x-small", loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=2,
                  frameon=False)
    return ax
