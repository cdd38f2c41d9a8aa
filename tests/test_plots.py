"""Plot functions: ax in, axes out; the data drawn is the data given."""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import topologies
from analysis import (
    plot_collective_sweep,
    plot_failure_cost,
    plot_latency_cdf,
    plot_link_utilization,
    plot_ratio,
    plot_stacked_bars,
    plot_topology,
    plot_tornado,
)


def _segments(ax):
    return sum(len(c.get_segments()) for c in ax.collections if hasattr(c, "get_segments"))


def test_hypermesh_is_drawn_in_3d_with_every_link():
    f = topologies.build("sd200-ultra")
    ax = plot_topology(f)
    assert ax.name == "3d"
    # one drawn segment (line or arc) per graph edge: 8x4x4 all-to-all lines
    assert sum(len(c._segments3d) for c in ax.collections if hasattr(c, "_segments3d")) \
        == f.graph.number_of_edges() == 832
    assert [t.get_text() for t in ax.get_legend().get_texts()] == [
        "dimension 0", "dimension 1", "dimension 2", "chips, shaded by host (16 hosts)"]
    # every chip drawn once, in its host's shade (one scatter per host)
    shades = [c for c in ax.collections if not hasattr(c, "_segments3d")]
    assert len(shades) == len({f.host_of[n] for n in f.endpoints}) == 16
    assert sum(len(c.get_offsets()) for c in shades) == f.n_endpoints


def test_3d_fabric_refuses_a_2d_axes():
    _, ax = plt.subplots()
    with pytest.raises(ValueError, match="projection='3d'"):
        plot_topology(topologies.build("torus:3x3x3"), ax=ax)


def test_rail_cluster_is_drawn_in_layers():
    f = topologies.build("cluster-128")
    ax = plot_topology(f)
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels == ["nvs (16)", "chips (128)", "NICs (128)", "rail (8)", "spine (8)"]
    assert _segments(ax) == f.graph.number_of_edges()


def test_given_axes_are_returned():
    _, ax = plt.subplots()
    assert plot_topology(topologies.build("fattree:k=4"), ax=ax) is ax
    _, ax = plt.subplots()
    assert plot_latency_cdf({"a": [1e-6]}, ax=ax) is ax


def test_latency_cdf_reaches_one_at_the_maximum():
    lat = np.array([0.23, 0.46, 0.46, 0.69]) * 1e-6
    ax = plot_latency_cdf({"x": lat, "y": lat * 2})
    line = ax.lines[0]
    # each curve steps to 1.0 at its own maximum, then runs on at 1.0 to the right edge
    # (inside the axes), so that its last step is visible
    assert line.get_ydata()[-2] == line.get_ydata()[-1] == 1.0
    assert np.isclose(line.get_xdata()[-2], 0.69)
    assert np.isclose(ax.lines[1].get_xdata()[-2], 1.38)
    right = ax.get_xlim()[1]
    assert all(np.isclose(ln.get_xdata()[-1], right) for ln in ax.lines) and right > 1.38
    assert ax.get_ylim()[1] > 1.0


@pytest.mark.parametrize("bad, match", [({}, "nothing to plot"), ({"a": []}, "is empty")])
def test_latency_cdf_rejects_empty(bad, match):
    with pytest.raises(ValueError, match=match):
        plot_latency_cdf(bad)


def _rows():
    return [{"system": s, "algorithm": a, "size": n, "time": t * n * 1e-9 + 1e-6,
             "busbw": n / (t * n * 1e-9 + 1e-6)}
            for s, t in (("A", 1.0), ("B", 2.0)) for a in ("ring", "tree")
            for n in (4096, 1024, 2 ** 20)]


@pytest.mark.parametrize("metric, yscale", [("time", "log"), ("busbw", "linear")])
def test_collective_sweep_one_line_per_group_sorted_by_size(metric, yscale):
    ax = plot_collective_sweep(_rows(), metric=metric)
    assert len(ax.lines) == 4 and ax.get_yscale() == yscale
    assert list(ax.lines[0].get_xdata()) == [1024, 4096, 2 ** 20]
    scale = 1e-6 if metric == "time" else 1e9
    assert np.isclose(ax.lines[0].get_ydata()[0], _rows()[1][metric] / scale)


@pytest.mark.parametrize("kwargs, match", [({"metric": "speed"}, "metric must be"),
                                           ({"group": ("nope",)}, "lacks")])
def test_collective_sweep_rejects_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        plot_collective_sweep(_rows(), **kwargs)


def test_ratio_draws_unity_and_the_reference():
    rows = [{"label": "all-reduce", "size": n, "ratio": r} for n, r in ((1024, 4.0), (2048, 2.0))]
    ax = plot_ratio(rows, reference=3.5, reference_label="claim")
    ys = sorted(line.get_ydata()[0] for line in ax.lines[1:])
    assert ys == [1.0, 3.5]


def test_link_utilization_sorted_busiest_first():
    ax = plot_link_utilization({"x": [0.2, 1.0, 0.0, 0.5]})
    assert list(ax.lines[0].get_ydata()) == [1.0, 0.5, 0.2, 0.0]


def test_failure_bars_and_stacked_bars_hold_the_values():
    rows = [{"system": "A", "failure": "one link", "change": 5.0},
            {"system": "A", "failure": "one chip", "change": 1.0},
            {"system": "B", "failure": "one link", "change": 0.0}]
    ax = plot_failure_cost(rows)
    widths = sorted(p.get_width() for p in ax.patches if not np.isnan(p.get_width()))
    assert widths == [0.0, 1.0, 5.0]
    parts = [{"system": "A", "component": c, "time": t}
             for c, t in (("weights", 2e-3), ("comm", 1e-3))]
    ax = plot_stacked_bars(parts)
    right = max(p.get_x() + p.get_width() for p in ax.patches)
    assert np.isclose(right, 3.0)


def test_tornado_sorted_by_swing_and_anchored_at_base():
    rows = [{"parameter": "small", "low": "a", "high": "b", "value_low": 9e-3,
             "value_high": 11e-3},
            {"parameter": "big", "low": "c", "high": "d", "value_low": 5e-3,
             "value_high": 20e-3}]
    ax = plot_tornado(rows, base=10e-3)
    assert [t.get_text() for t in ax.get_yticklabels()] == ["big", "small"]
    lefts = {round(p.get_x(), 9) for p in ax.patches}
    assert lefts == {10.0}  # every bar starts at the base (ms)
    ends = sorted(round(p.get_x() + p.get_width(), 9) for p in ax.patches)
    assert ends == [5.0, 9.0, 11.0, 20.0]


def test_one_colour_per_system_across_figures():
    from analysis import paper_style, plot_collective_sweep, plot_link_utilization, system_colors

    rows = [{"system": s, "size": n, "time": k * 1e-6 + n / 1e10}
            for k, s in enumerate(("b", "a"), 1) for n in (1024, 4096)]
    with paper_style(), system_colors(["a", "b"]):
        ax1 = plot_collective_sweep(rows, group=("system",))
        ax2 = plot_link_utilization({"a": [1.0, 0.5], "b": [1.0, 1.0]})
        ax3 = plot_latency_cdf({"b load/store": [1e-6], "a RDMA": [2e-6]})
    color = {ln.get_label(): ln.get_color() for ax in (ax1, ax2) for ln in ax.lines}
    assert color["a"] != color["b"]
    assert [ln.get_color() for ln in ax1.lines] == [color["b"], color["a"]]
    assert [ln.get_color() for ln in ax3.lines] == [color["b"], color["a"]]


def test_identical_series_are_named_and_busbw_goes_log_over_decades():
    from analysis import plot_collective_sweep

    rows = [{"algorithm": a, "size": n, "busbw": n / 1e-3} for a in ("scattered", "one-shot")
            for n in (1024, 2**20, 2**30)]
    ax = plot_collective_sweep(rows, metric="busbw", group=("algorithm",))
    assert [ln.get_label() for ln in ax.lines] == ["scattered", "one-shot (= scattered)"]
    assert ax.get_yscale() == "log"


def test_algorithms_of_one_operation_have_distinct_colours_and_styles():
    """Every operation's algorithms (analysis.ALGORITHMS, exhaustively) are drawn in
    distinct colours, and no two algorithms anywhere share both colour and marker."""
    from analysis import ALGORITHMS
    from analysis._plots import _algorithm_style

    for op, names in ALGORITHMS.items():
        colours = [_algorithm_style(n, i)[0] for i, n in enumerate(names)]
        assert len(set(colours)) == len(colours), op
    every = sorted({n for names in ALGORITHMS.values() for n in names})
    styles = [_algorithm_style(n, 0) for n in every]
    assert len(set(styles)) == len(styles)


@settings(max_examples=20, deadline=None)
@given(ratio=st.floats(0.5, 2.0))
def test_nearly_identical_series_are_named(ratio):
    """Brute force on the rule: a series within COINCIDE_RTOL of an earlier one at every
    size is labelled "(\u2248 earlier)", an equal one "(= earlier)", any other plainly."""
    import matplotlib.pyplot as plt

    from analysis._plots import COINCIDE_RTOL, plot_collective_sweep

    sizes = (1024, 2**20, 2**30)
    rows = [{"algorithm": "ring", "size": n, "time": 1e-6 * n} for n in sizes]
    rows += [{"algorithm": "pairwise", "size": n, "time": 1e-6 * n * ratio} for n in sizes]
    ax = plot_collective_sweep(rows, group=("algorithm",))
    label = ax.lines[1].get_label()
    if ratio == 1.0:
        assert label == "pairwise (= ring)"
    elif abs(ratio - 1.0) <= COINCIDE_RTOL * ratio:         # np.allclose's test, y=ring
        assert label == "pairwise (\u2248 ring)"
    else:
        assert label == "pairwise"
    plt.close(ax.figure)


def test_topology_bands_and_host_boxes():
    from matplotlib.patches import Polygon, Rectangle

    import topologies
    from analysis import plot_topology

    ax = plot_topology(topologies.build("nvl72"))
    assert sum(isinstance(p, Polygon) for p in ax.patches) == 1      # 72 x 18 as one band
    assert all(len(c.get_segments()) < 150 for c in ax.collections
               if hasattr(c, "get_segments"))
    ax = plot_topology(topologies.build("cluster-128"))
    boxes = [p for p in ax.patches if isinstance(p, Rectangle) and p.get_zorder() == 0]
    assert len(boxes) == 16                                          # one per server
