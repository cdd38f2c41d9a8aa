"""What a reader of the report sees, session 10: one finding per distinct comparison, the
decode tornado at a layout where the fabric what-ifs reach something, and figures that
name their conditions when used outside the report."""

from analysis._report_findings import collective_findings


def _best(op, times_a, times_b, bus_a=7e11, bus_b=3e11):
    sizes = (1024, 2**20, 2**30)
    return [{"system": s, "op": op, "size_bytes": n, "time_s": t, "busbw_Bps": bus,
             "algorithm": "ring", "transport": "rdma", "gap_to_bound": 1.1}
            for s, ts, bus in (("a", times_a, bus_a), ("b", times_b, bus_b))
            for n, t in zip(sizes, ts)]


def test_collective_findings_merge_operations_that_read_the_same():
    same = ([1e-6, 1e-5, 1e-3], [7e-6, 5e-5, 2e-3])
    best = (_best("all-reduce", *same) + _best("all-gather", *same)
            + _best("reduce-scatter", *same) + _best("broadcast", [1e-6, 1e-5, 1e-3],
                                                      [2e-6, 3e-5, 4e-3], bus_b=2e11))
    found = collective_findings(best, ["a", "b"],
                                ["all-reduce", "all-gather", "reduce-scatter", "broadcast"])
    assert len(found) == 2, found
    merged, alone = found
    assert "all-reduce, all-gather and reduce-scatter (the same figures for each" in merged
    assert "bus bandwidth of each is" in merged
    assert "broadcast, each system" in alone and "all-reduce" not in alone
    # a difference anywhere in the sentence keeps the operations apart
    best = _best("all-reduce", *same) + _best("all-gather", same[0], [7e-6, 5e-5, 2.1e-3])
    assert len(collective_findings(best, ["a", "b"], ["all-reduce", "all-gather"])) == 2


def test_decode_tornado_runs_at_the_searched_best_layout_where_the_fabric_reaches_the_step():
    # at tp=1 no tensor-parallel collective exists and link bandwidth and transport reach
    # nothing but the exchange; the tornado runs at the layout the search finds (not a
    # hand-picked one), names it in every row, and there the link bandwidth moves the step
    from analysis._decode import decode_step
    from analysis._fair import best_decode_layout
    from analysis._models import model_config
    from analysis._report_decode import _decode_sensitivity, report_decode_settings
    from analysis._report_parts import DECODE_BATCH, DECODE_CONTEXT, report_fabric

    system, model = "sd200-ultra:chip=h100", "kimi-k2"
    f = report_fabric(system)
    best, tried = best_decode_layout(model, f, batch=DECODE_BATCH, context=DECODE_CONTEXT,
                                     **report_decode_settings(f))
    base, rows, layout = _decode_sensitivity(system, model)
    assert layout == str(best.layout) and base == best.time
    assert base == min(t for _, t in tried)
    assert "tp=1," not in layout          # the search picks tensor parallelism here
    assert all(r["layout"] == layout for r in rows)
    bw = next(r for r in rows if r["parameter"] == "link bandwidth")
    assert bw["value_low"] > base > bw["value_high"], bw
    # each bar is that one setting at the same layout
    m = model_config(model)
    fused = decode_step(m, f, batch=DECODE_BATCH, context=DECODE_CONTEXT, layout=layout,
                        fusion_factor=10.0, **report_decode_settings(f)).time
    assert next(r for r in rows if r["parameter"] == "kernel fusion factor")["value_high"] \
        == fused


def test_decode_sensitivity_finding_names_its_layout():
    from analysis._report_findings import sensitivity_finding

    rows = [{"system": "s", "model": "m", "layout": "tp=8,dp=16,ep=128", "parameter": p,
             "low": "x0.5", "high": "x2", "value_low": lo, "value_high": hi}
            for p, lo, hi in (("hbm", 16e-3, 8e-3), ("bandwidth", 10.1e-3, 9.9e-3))]
    f = sensitivity_finding(rows, 10e-3)
    assert f.startswith("m on s (at tp=8,dp=16,ep=128, 10.00ms per step)"), f   # as its table


def test_decode_tornado_says_why_rdma_reads_faster_only_when_it_does():
    from analysis._report_decode import _transport_note

    def rows(lo, hi):
        return [{"parameter": "transport", "low": "load/store", "high": "RDMA",
                 "value_low": lo, "value_high": hi}]
    assert "RDMA reads faster than load/store" in _transport_note(rows(9.947e-3, 9.942e-3))
    assert _transport_note(rows(9.947e-3, 9.947e-3)) == ""
    assert _transport_note(rows(9.947e-3, 9.99e-3)) == ""


def test_scaling_panels_say_what_their_times_include():
    # a panel taken for a paper says what its times include: the model's schedules with no
    # software costs (collectives; not a bound, once 'hardware floor') or the NCCL model
    # (decode) in its own title, not only in the report's caption
    import matplotlib.pyplot as plt

    from analysis import _report_scaling as rs
    from analysis._collectives import default_runtime
    from analysis._report_parts import runtime_label
    from analysis._scaling import RUNTIME, SCALING_METRICS

    rows = [{"family": fam, "chips": n, "bisection_per_chip_Bps": 1e9, "a2a_per_chip_Bps": 1e9,
             "allreduce_1GiB_s": t, "allreduce_algorithm": "ring", "alltoall_1MiB_s": t,
             "alltoall_algorithm": "scattered", "decode_step_s": t, "decode_layout": "tp=1",
             "network_cost_usd_per_chip": 100.0, "network_power_w_per_chip": 10.0}
            for fam in ("a", "b") for n, t in zip(rs.REPORT_SIZES, (3e-3, 2e-3, None))]
    fig = rs._draw(rows)
    try:
        titles = {ax.get_title().split("\n")[0]: ax.get_title() for ax in fig.axes
                  if ax.get_title()}
    finally:
        plt.close(fig)
    assert RUNTIME == "ideal"
    assert runtime_label(RUNTIME) == "model's schedules, no software costs"
    for metric in ("allreduce_1GiB_s", "alltoall_1MiB_s"):
        # one clause a line: the quarter-width panels' titles ran into one another
        assert titles[SCALING_METRICS[metric][0]].endswith("\nmodel's schedules,\n"
                                                           "no software costs")
    decode = titles[SCALING_METRICS["decode_step_s"][0]]
    assert decode.endswith(runtime_label(default_runtime())) and "NCCL" in decode
    # the metrics without a runtime say none
    assert titles["bisection per chip"] == "bisection per chip"


def test_collective_and_symmetric_figures_say_no_software_costs_on_the_figure():
    import matplotlib.pyplot as plt

    from analysis._report_sweeps import SWEEP_RUNTIME, _draw_collective, _draw_symmetric

    assert SWEEP_RUNTIME == "ideal"
    row = {"system": "s", "op": "all-reduce", "algorithm": "ring", "size_bytes": 1024,
           "time_s": 1e-6, "busbw_Bps": 1e9, "lower_bound_s": 5e-7}
    rows = [row, dict(row, size_bytes=2048, time_s=2e-6, lower_bound_s=1e-6)]
    fig = _draw_collective(rows, rows, "all-reduce", "s")
    try:
        assert fig.get_suptitle() == "all-reduce, model's schedules, no software costs"
    finally:
        plt.close(fig)
    fig = _draw_symmetric([{"system": "s", "op": "all-reduce", "size_bytes": n,
                            "ratio_same_transport": 1.5} for n in (1024, 2048)])
    try:
        assert fig.axes[0].get_title() == "model's schedules, no software costs"
    finally:
        plt.close(fig)


def test_chip_finding_says_what_it_times_and_which_chips_are_assumed():
    # was: "With their own chips: sd200-ultra (sd200-chip) 13.28ms, ..." (no quantity, no
    # conditions, no runtime) and a typed sentence on the sd200-chip whatever the systems
    from analysis._report_fair import chip_section
    from analysis._report_parts import runtime_phrase

    _, (found,) = chip_section(["sd200-ultra", "cluster-128"])
    assert found.startswith("Decode of kimi-k2 per token with each system's own chip"), found
    assert "batch 1, 4096-token context" in found and runtime_phrase() in found
    assert "the sd200-chip is an assumed 1.6TB/s HBM chip" in found
    _, (found,) = chip_section(["cluster-128"])
    assert "assumed" not in found and "sd200" not in found, found


def test_fastest_system_is_given_with_the_margins_of_the_others():
    from analysis._report_fair import _fair_findings

    drows = [{"system": s, "model": "m", "time_s": t, "best_layout": "tp=8",
              "default_layout_time_s": 11e-3}
             for s, t in (("a", 9.947e-3), ("b", 9.808e-3), ("c", 9.861e-3))]
    (found,) = _fair_findings([], drows, "b")
    assert "b is fastest (c +0.5%, a +1.4%)" in found, found
    assert "Serving also searches the instance size" in found


def _texts_outside(fig):
    """Titles, axis labels, annotations and legend texts of ``fig`` that reach past its
    edges once drawn (cut in the saved file: the paper style saves the figure as laid out,
    no tight bbox). Tick labels are left out: matplotlib keeps hidden ones beyond the axes."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    renderer = canvas.get_renderer()
    texts = list(fig.texts) + [t for lg in fig.legends for t in lg.get_texts()]
    for ax in fig.axes:
        texts += [ax.title, ax._left_title, ax._right_title, ax.xaxis.label, ax.yaxis.label,
                  *ax.texts]
        if ax.get_legend() is not None:
            texts += ax.get_legend().get_texts()
    box = fig.bbox
    out = []
    for t in texts:
        if not t.get_visible() or not t.get_text().strip():
            continue
        e = t.get_window_extent(renderer)
        if e.x0 < box.x0 - 1 or e.x1 > box.x1 + 1 or e.y0 < box.y0 - 1 or e.y1 > box.y1 + 1:
            out.append(t.get_text())
    return out


def test_figure_titles_fit_their_figure():
    # the titles added so that a figure names its conditions on its own must fit the
    # single-column figure (the sensitivity title in one line filled it edge to edge)
    import matplotlib.pyplot as plt

    from analysis._report_decode import _draw_tornado as decode_tornado
    from analysis._report_fair import _draw_tornado as fair_tornado
    from analysis._report_parts import runtime_label
    from analysis._style import paper_style

    rows = [{"parameter": p, "low": "x0.5", "high": "x2", "value_low": lo, "value_high": hi}
            for p, lo, hi in (("cofabric.bandwidth", 0.89, 2.36), ("h100.reduce_rate", 1.45,
                                                                    1.63))]
    drows = [dict(r, value_low=r["value_low"] * 1e-2, value_high=r["value_high"] * 1e-2)
             for r in rows]
    draws = (lambda: fair_tornado(rows, 1.63, "all-reduce time ratio",
                                  "1 GiB all-reduce, cluster-128 / sd200-ultra:chip=h100\n"
                                  + runtime_label()),
             lambda: decode_tornado(drows, 1.63e-2,
                                    "kimi-k2 on sd200-ultra:chip=h100, tp=8,dp=16,ep=128"))
    for draw in draws:
        with paper_style("single"):
            fig = draw()
            try:
                assert _texts_outside(fig) == []
            finally:
                plt.close(fig)


def test_scaling_decode_finding_states_the_conditions_its_numbers_were_run_at():
    # the finding names the model, batch and context of the report's decode section; the
    # study's decode point must be that step (it sets its own arguments)
    from analysis import _report_scaling as rs
    from analysis._fair import best_decode_layout
    from analysis._report_decode import report_decode_settings
    from analysis._report_parts import DECODE_BATCH, DECODE_CONTEXT, DECODE_MODELS
    from analysis._scaling import DECODE_CHIPS, _point

    row = _point("hyperx", 64, collective_limit=0, decode_limit=64, book="street-2026")
    f = __import__("topologies").build(row["spec"])
    step, _ = best_decode_layout(DECODE_MODELS[0], f, batch=DECODE_BATCH,
                                 context=DECODE_CONTEXT, ep=min(64, DECODE_CHIPS),
                                 **report_decode_settings(f))
    assert row["decode_step_s"] == step.time and row["decode_layout"] == str(step.layout)
    rows = [dict(row, chips=n, decode_step_s=t if n == rs._evaluated_at() else None,
                 family=fam)
            for fam, t in (("a", 1e-2), ("b", 2e-2)) for n in rs.REPORT_SIZES]
    (found,) = [s for s in rs._findings(rows, {}) if s.startswith("Decode step")]
    assert (f"({DECODE_MODELS[0]}, batch {DECODE_BATCH}, {DECODE_CONTEXT}-token context, "
            in found), found


def test_decode_finding_flags_an_rdma_what_if_faster_than_load_store():
    # the finding quoted alone ("least to transport (load/store: 9.947ms, RDMA: 9.942ms)")
    # would read as RDMA being faster; it points at the caption's explanation while it holds
    from analysis._report_decode import _transport_note, decode_section
    from analysis._report_parts import report_fabric

    fabrics = {s: report_fabric(s) for s in ("sd200-ultra:chip=h100", "cluster-128")}
    section, found = decode_section(fabrics, None, True)
    (sens,) = [f for f in found if "most sensitive to" in f]
    flagged = "limitation of the NCCL model" in sens
    assert flagged == bool(_transport_note(section.tables[1].rows)), sens


def test_decode_tornado_calls_rdma_a_what_if_on_a_fabric_without_nics():
    from analysis._report_decode import _rdma_what_if
    from analysis._report_parts import report_fabric

    assert "what-if" in _rdma_what_if(report_fabric("sd200-ultra:chip=h100"), "sd200")
    assert _rdma_what_if(report_fabric("cluster-128"), "cluster-128") == ""


def test_decode_tornado_explains_an_unchanged_step_only_when_one_is_shown():
    from analysis._report_decode import _any_unchanged

    rows = [{"value_low": 10.05e-3, "value_high": 9.896e-3},
            {"value_low": 9.947e-3, "value_high": 12.22e-3}]
    assert not _any_unchanged(rows, 9.947e-3)
    assert _any_unchanged(rows + [{"value_low": 9.947e-3, "value_high": 9.947e-3}], 9.947e-3)
