"""Session 12: what a reader of the default report sees (figures and their text)."""

import matplotlib

matplotlib.use("Agg")


def _close(fig):
    import matplotlib.pyplot as plt

    plt.close(fig)


def _marked_sizes(line):
    """The x values a line draws a marker at (its ``markevery``: 1, or (start, step))."""
    x = list(line.get_xdata())
    every = line.get_markevery()
    if every in (None, 1):
        return x
    start, step = every
    return x[start::step]


def test_lines_on_top_of_one_another_each_show_a_colour_and_are_named_on_the_panel():
    # s11: the symmetric-memory figure's left panel drew the three systems' all-to-all at
    # 1 on top of one another: only the last colour showed; the caption named them, the
    # panel did not
    from analysis import _report_sweeps
    from analysis._plots import system_colors

    systems = ("sd200-ultra:chip=h100", "nvl72:chip=h100", "tpu-v4-cube:chip=h100")
    sizes = [2 ** k for k in range(10, 31)]
    rows = [{"system": s, "op": op, "size_bytes": n,
             "ratio_same_transport": (1.0 + 0.001 * i if op == "all-to-all"
                                      else 10.0 / (1 + k) + i)}
            for i, s in enumerate(systems) for op in ("all-reduce", "all-to-all")
            for k, n in enumerate(sizes)]
    with system_colors(systems):
        fig = _report_sweeps._draw_symmetric(rows)
    try:
        ax = fig.axes[0]
        flat = [ln for ln in ax.lines if ln.get_label().endswith("all-to-all")]
        others = [ln for ln in ax.lines if ln.get_label().endswith("all-reduce")]
        assert len(flat) == 3 and len(others) == 3
        # every colour has markers of its own, at sizes no other coincident line marks,
        # and together they mark every size
        marked = [set(_marked_sizes(ln)) for ln in flat]
        assert all(marked), marked
        assert all(not (a & b) for i, a in enumerate(marked) for b in marked[i + 1:])
        assert set().union(*marked) == set(sizes)
        assert len({ln.get_color() for ln in flat}) == 3
        # lines that lie apart keep a marker at every size
        assert all(_marked_sizes(ln) == sizes for ln in others)
        # the panel names what lies on the 1-line; nothing else is labelled so
        texts = [t.get_text() for t in ax.texts]
        assert texts == ["all-to-all, 3 systems:\nlines on top of one another"], texts
        # the 1-line and the seed's line lie under the curves
        refs = [ln for ln in ax.lines if ln not in flat + others]
        assert refs and all(r.get_zorder() < min(ln.get_zorder() for ln in flat)
                            for r in refs)
        # the caption says where to look
        assert "labelled on the panel" in _report_sweeps._coincident(rows)
    finally:
        _close(fig)


def test_lines_that_part_somewhere_are_not_said_to_coincide():
    from analysis._plots import plot_ratio

    rows = [{"label": lab, "size": n, "ratio": r}
            for lab, rs in (("a", (1.0, 1.0, 1.0)), ("b", (1.0, 1.0, 1.5)))
            for n, r in zip((1024, 2048, 4096), rs)]
    ax = plot_ratio(rows)
    try:
        assert [t.get_text() for t in ax.texts] == []
        assert all(ln.get_markevery() in (None, 1) for ln in ax.lines)
    finally:
        _close(ax.figure)
