"""Session 11: the report reads the seed's claims on the runtimes and its figures say so."""

import math

import matplotlib
import pytest

matplotlib.use("Agg")


def _close(fig):
    import matplotlib.pyplot as plt

    plt.close(fig)


def _labelled_ticks(ax):
    lo, hi = ax.get_ylim()
    return [t for t in ax.get_yticks() if lo * (1 - 1e-9) <= t <= hi * (1 + 1e-9)]


def test_fair_figure_names_its_runtime_and_labels_a_tick_above_every_bar():
    # s10: the all-reduce panel's label said 'nccl' and its top bar (7.9 ms) stood above
    # the last label (6): a reader could not read it off the axis
    from analysis._report_fair import _draw_fair
    from analysis._report_parts import runtime_label

    A, B, C = "torus:2x2", "torus:2x4", "torus:4x4"
    rows = [{"system": s, "basis": b, "bisection_per_chip_Bps": bis,
             "a2a_per_chip_Bps": a2a, "allreduce_1GiB_s": ar}
            for s, b, bis, a2a, ar in (
                (A, "as built", 64e9, 254e9, 3.7e-3), (B, "as built", 25e9, 53e9, 6.0e-3),
                (C, "as built", 25e9, 98e9, 7.924e-3), (A, "cost", 779e9, 3.09e12, 1.9e-3),
                (B, "cost", 25e9, 53e9, 6.0e-3), (C, "cost", 967e9, 3.8e12, 1.48e-3))]
    fig = _draw_fair(rows)
    try:
        keys = ("bisection_per_chip_Bps", "a2a_per_chip_Bps", "allreduce_1GiB_s")
        scales = (1e9, 1e9, 1e-3)
        for ax, key, scale in zip(fig.axes, keys, scales):
            top = max(r[key] / scale for r in rows)
            ticks = _labelled_ticks(ax)
            assert max(ticks) >= top, (key, ticks, top)
            assert ax.get_ylim()[1] >= top
            # plain numbers, every major tick labelled
            fig.canvas.draw()
            labels = [t.get_text() for t in ax.get_yticklabels() if t.get_text()]
            assert labels and all("^" not in t and "$" not in t for t in labels), labels
        assert runtime_label() in fig.axes[2].get_ylabel()
        assert "(ms)" in fig.axes[2].get_ylabel()
    finally:
        _close(fig)


def test_log_ticks_above_moves_the_top_to_the_next_label():
    from matplotlib.figure import Figure

    from analysis._plots import log_ticks_above

    for values, bottom, top in (([0.74, 7.924], 0.37, 10.0), ([1.0, 5.9], 0.5, 8.0),
                                ([26.0, 3809.0], 13.0, 5000.0), ([0.2, 400.0, 9e4], 0.1, 1e6),
                                # 967 under a top of 1000 touched the frame (session 14)
                                ([25.0, 967.2], 12.5, 2000.0)):
        ax = Figure().subplots()
        ax.set_yscale("log")
        log_ticks_above(ax, values, bottom)
        assert ax.get_ylim() == pytest.approx((bottom, top))
        assert max(ax.get_yticks()) == pytest.approx(top)
        assert all(t >= bottom for t in ax.get_yticks())
        # room above the tallest bar: at least 3% of the (log) axis height
        room = math.log10(top / max(values)) / math.log10(top / bottom)
        assert room >= 0.03, (values, room)


def test_symmetric_memory_figure_reads_the_claim_with_the_software():
    # the seed's 3.5x is a claim about software: the figure draws NCCL / symmetric-memory
    # kernels beside the model's schedules with no software costs, the dotted 3.5x in both,
    # each panel titled
    from analysis._report_parts import SEED_SYMMETRIC_CLAIM, runtime_label
    from analysis._report_sweeps import _draw_symmetric

    sizes = (1024, 2 ** 20, 2 ** 30)
    rows = [{"system": "s", "op": "all-reduce", "size_bytes": n, "ratio_same_transport": r}
            for n, r in zip(sizes, (1.2, 0.42, 0.31))]
    rt = [{"system": "s", "op": "all-reduce", "size_bytes": n, "ratio": r}
          for n, r in zip(sizes, (56.0, 15.0, 0.41))]
    rt.append({"system": "nic", "op": "all-reduce", "size_bytes": 1024, "ratio": None})
    fig = _draw_symmetric(rows, rt)
    try:
        assert len(fig.axes) == 2
        assert fig.axes[0].get_title() == "model's schedules, no software costs"
        assert runtime_label("nccl") in fig.axes[1].get_title()
        assert "symmetric-memory kernels" in fig.axes[1].get_title()
        for ax in fig.axes:
            assert any(list(ln.get_ydata()) == [SEED_SYMMETRIC_CLAIM] * 2
                       for ln in ax.get_lines())
        # the software panel's curve is the NCCL / symmetric ratio (a system with no
        # symmetric-memory kernels draws nothing)
        curves = [ln for ln in fig.axes[1].get_lines() if len(ln.get_xdata()) == 3]
        assert [list(c.get_ydata()) for c in curves] == [[56.0, 15.0, 0.41]]
        # one legend, for the figure (not one per panel)
        assert all(ax.get_legend() is None for ax in fig.axes) and fig.legends
        ticks = _labelled_ticks(fig.axes[0])
        assert 1.0 in ticks and 10.0 in ticks and 0.5 in ticks, ticks  # not only 10^0
    finally:
        _close(fig)
    # without the runtime rows: no software costs alone, as before
    fig = _draw_symmetric(rows)
    try:
        assert len(fig.axes) == 1
    finally:
        _close(fig)


def test_the_claim_is_read_where_it_holds_and_not_without_software_costs():
    from analysis._report_findings import symmetric_findings, symmetric_runtime_findings

    k = 1024
    rt = [{"system": "s", "op": op, "size_bytes": n, "ratio": r, "symmetric_time_s": 1e-6,
           "nccl_time_s": r * 1e-6}
          for op, ratios in (("all-reduce", (56.0, 4.0, 3.4, 0.41)),
                             ("all-to-all", (1.3, 1.9, 1.0, 1.0)))
          for n, r in zip((k, 2 * k, 4 * k, 8 * k), ratios)]
    rt += [{"system": "nic", "op": "all-reduce", "size_bytes": k, "ratio": None,
            "symmetric_time_s": None, "nccl_time_s": 1e-5}]
    found = symmetric_runtime_findings(rt, ["s", "nic"], (k, 8 * k))
    assert len(found) == 1, found          # a system with no symmetric-memory kernels: none
    text = found[0]
    assert "runtime 'symmetric-memory'" in text and "runtime 'nccl'" in text
    assert "3.5x or more at 1KiB-2KiB, less at 4KiB-8KiB" in text, text
    assert "all-to-all" in text and "below 3.5x at every size (at most 1.9x, at 2KiB)" in text
    # the sizes quoted are the shown ones
    assert "1KiB 1.000us against 56.00us" in text and "8KiB 1.000us against 410.0ns" in text, text
    every = symmetric_runtime_findings([dict(r, ratio=4.0) for r in rt if r["ratio"]], ["s"],
                                       (k,))
    assert "NCCL takes 3.5x or more at every size" in every[0]

    hw = [{"system": "s", "op": "all-reduce", "size_bytes": n, "symmetric_algorithm": "one-shot",
           "loadstore_algorithm": "ring", "ratio_same_transport": r, "ratio": 2 * r}
          for n, r in ((k, 1.2), (8 * k, 0.3))]
    text = symmetric_findings(hw)[0]
    assert text.startswith("With no software costs (runtime 'ideal')")
    # the times with no software costs no longer judge the claim (it was 'outside the model's range')
    assert "model's range" not in text and "read with the software" in text


@pytest.fixture(scope="module")
def small():
    from analysis._report import build_report

    return build_report(["torus:4x4", "rail:servers=2,gpus=4"],
                        sections=["collectives", "symmetric"],
                        sizes=["1KiB", "4KiB", "1MiB", "1GiB"],
                        ops=["all-reduce", "all-to-all"], quiet=True)


def test_runtimes_csv_holds_every_swept_size_and_the_claim_comes_first(small):
    sym = next(s for s in small.sections if s.key == "symmetric")
    runtimes = next(t for t in sym.tables if t.name == "runtimes")
    assert {r["size_bytes"] for r in runtimes.rows} == {1024, 2 ** 20, 2 ** 30}
    assert {r["size_bytes"] for r in runtimes.csv_rows} == {1024, 4096, 2 ** 20, 2 ** 30}
    fig = next(f for f in sym.figures if f.name == "symmetric-memory")
    assert "runtime 'nccl'" in fig.caption and "runtime 'symmetric-memory'" in fig.caption
    assert "runtime 'ideal'" in fig.caption
    groups = dict(small.finding_groups)["Symmetric memory"]
    assert groups[0].startswith("The seed's 3.5x read with the software, on torus:4x4")
    assert all(not g.startswith("The seed's") for g in groups[1:])


def test_decode_figures_name_their_conditions_and_runtime():
    from analysis._report_decode import _draw_decode, _draw_tornado
    from analysis._report_parts import DECODE_BATCH, DECODE_CONTEXT, runtime_label
    from analysis._style import paper_style
    from tests.test_report_s10 import _texts_outside

    parts = ("attention", "ffn", "head", "exposed_comm", "launch")
    rows = [{"model": m, "system": s, "layout": "tp=1,dp=8,ep=8", "ep_kernel": k,
             **{f"{p}_s": 1e-3 for p in parts}}
            for m in ("kimi-k2", "x") for s, k in (("a", "one-sided"), ("b", "deepep-normal"))]
    for tp in (1, 2):
        rows = [dict(r, layout=f"tp={tp},dp=8,ep=8") for r in rows]
        with paper_style("double"):
            fig = _draw_decode(rows)
            try:
                title = fig.get_suptitle()
                assert f"batch {DECODE_BATCH}" in title and f"{DECODE_CONTEXT}-token" in title
                assert f"(tp={tp})" in title
                # which kernel runs on which system (s12: "a/b" did not say which bar)
                assert "MoE exchange: deepep-normal on b, one-sided on the others" in title
                # the runtime is named where it prices something: no collective at tp=1
                assert (runtime_label() in title) == (tp > 1), title
                assert _texts_outside(fig) == []
            finally:
                _close(fig)
    trows = [{"parameter": "HBM bandwidth", "low": "x0.5", "high": "x2", "value_low": 13e-3,
              "value_high": 8e-3}]
    title = (f"kimi-k2 on sd200-ultra:chip=h100, tp=8,dp=16,ep=128\nbatch {DECODE_BATCH}, "
             f"{DECODE_CONTEXT}-token context, collectives: {runtime_label()}")
    with paper_style("single"):
        fig = _draw_tornado(trows, 9.9e-3, title)
        try:
            assert _texts_outside(fig) == []
        finally:
            _close(fig)


def test_decode_findings_state_the_software_their_times_rest_on():
    # the seed's 5.85 ms per token and the decode times are read on the decode model's
    # software (graph replay, kernel floors, the exchange kernel, NCCL), not a hardware
    # floor: each MoE decode finding says so, with the values the model uses
    from analysis._decode import DECODE_HBM_EFFICIENCY, GRAPH_KERNEL_OVERHEAD
    from analysis._report_fair import assumption_clause
    from analysis._report_parts import report_fabric, runtime_phrase
    from fabric import format_time

    names = ("torus:4x4", "rail:servers=2,gpus=4")
    clause = assumption_clause("decode", {n: report_fabric(n) for n in names})
    assert clause.startswith(" Assumes: the decode model's settings (CUDA-graph replay")
    assert runtime_phrase() in clause
    assert f"{format_time(GRAPH_KERNEL_OVERHEAD.value)} per kernel boundary" in clause
    assert f"from HBM at {DECODE_HBM_EFFICIENCY.value:.0%} of peak, except" in clause
    # the published streaming rates the model uses instead of the default are named
    from analysis._gemm import DECODE_GEMM_HBM_EFFICIENCY

    hopper = DECODE_GEMM_HBM_EFFICIENCY[("hopper", "fp8")].value
    assert f"FP8 dense GEMMs on Hopper {hopper:.0%}" in clause
    assert "MLA attention on Hopper (FlashMLA)" in clause
    assert "no kernel fusion unless varied" in clause


def test_decode_sensitivity_reads_the_seeds_fusion_factor():
    from analysis._report import build_report
    from analysis._report_parts import SEED_FUSION

    rep = build_report(["torus:4x4,chip=h100", "rail:servers=2,gpus=4,chip=h100"],
                       sections=["decode"], quiet=True)
    found = dict(rep.finding_groups)["MoE decode"]
    assert found and not found[0].startswith("Decode: no model runs"), found
    assert all(f.count("Assumes: the decode model's settings") == 1 for f in found), found
    # a decode that ran nothing assumes nothing
    (none,) = dict(build_report(["torus:4x4"], sections=["decode"],
                                quiet=True).finding_groups)["MoE decode"]
    assert none.startswith("Decode: no model runs") and "Assumes" not in none
    # every decode table and figure says its runtime (the step table did not)
    decode = next(s for s in rep.sections if s.key == "decode")
    for item in decode.tables + decode.figures:
        assert "runtime 'nccl'" in item.caption, item.name
    sens = next(t for s in rep.sections for t in s.tables if t.name == "decode_sensitivity")
    fusion = next(r for r in sens.rows if r["parameter"] == "kernel fusion factor")
    assert fusion["high"] == f"{SEED_FUSION[1]:g}"
    assert any(f"the seed's {SEED_FUSION[1]:g}x fewer kernels" in f for f in found)


def test_failure_text_states_the_grid_repair_rule():
    # session 11 (audit): on a grid a failed link's bytes take one bypass (local repair);
    # the findings and the table said 'shortest paths left' / 'routes detour' for every
    # fabric, which no longer explains a +100% on the hyper-mesh
    from analysis._report_fair import assumption_clause
    from analysis._report_parts import report_fabric
    from analysis._report_sections import failure_section

    fabrics = {n: report_fabric(n) for n in ("torus:4x4", "fattree:k=4")}
    clause = assumption_clause("failures", fabrics)
    assert "bypass" in clause and "dimension order" in clause
    section, found = failure_section(fabrics)
    assert "one bypass" in section.tables[0].caption
    assert all("bypass" in f + clause for f in found)


def test_equal_cost_findings_name_the_runtime_of_their_all_reduce():
    from analysis._report_fair import _fair_findings
    from analysis._report_parts import runtime_phrase

    rows = [{"system": s, "basis": b, "bandwidth_scale": k, "bisection_per_chip_Bps": 25e9 * k,
             "allreduce_1GiB_s": 6e-3 / k}
            for s in ("ref", "x") for b, k in (("as built", 1.0), ("cost", 2.0),
                                                ("power", 1.5))]
    found = _fair_findings(rows, [], "ref")
    assert len(found) == 2
    assert all(runtime_phrase() in f and "1GiB all-reduce" in f for f in found), found


# -- serving (analysis/_report_serving.py, handed to report by the lead at 00:33) ---------

_NODE = "switch:8,planes=2,links=9,tech=nvlink5,chip=b200"


@pytest.fixture(scope="module")
def serving():
    from analysis._report import build_report

    r = build_report([_NODE], sections=("serving",), quiet=True)
    return r, next(s for s in r.sections if s.key == "serving")


def test_serving_limiter_is_the_part_the_text_lists_first(serving):
    # 'limited by weights read' stood beside 'kernel boundaries and floors 4.5 ms, weights
    # read 3.07 ms': speed_limits counts graph gaps and floors apart, the text together
    from analysis._report_serving import _limiter, _parts

    shares = {"weights read": 3.07e-3, "launch/graph": 2.0e-3, "kernel floors": 2.5e-3,
              "communication": 2.43e-3}
    assert _limiter(shares) == "kernel boundaries and floors"
    assert _limiter({"weights read": 3.0e-3, "launch/graph": 1e-3}) == "weights read"
    _, sec = serving
    table = next(t for t in sec.tables if t.name == "serving")
    for row in table.rows:
        assert row["single_user_limiter"] == _parts(row["single_user_shares"])[0][0]
    seed = next(t for t in sec.tables if t.name == "serving_seed")
    for row in seed.rows:
        assert row["limiter"] == _parts(row["shares"])[0][0]
    assert "counted as one part" in table.caption and "counted as one part" in seed.caption
    assert "runtime 'nccl'" in seed.caption


def test_serving_figure_states_its_conditions_and_runtime(serving):
    from analysis._report_parts import runtime_label
    from analysis._report_serving import SERVING_ISL, SERVING_MODEL, SERVING_OSL
    from analysis._style import paper_style
    from tests.test_report_s10 import _texts_outside

    _, sec = serving
    spec = sec.figures[0]
    with paper_style(spec.column, height=spec.height):
        fig = spec.draw()
        try:
            title = fig.get_suptitle()
            assert SERVING_MODEL in title and f"{SERVING_ISL}/{SERVING_OSL}" in title
            assert runtime_label() in title
            assert _texts_outside(fig) == []
        finally:
            _close(fig)


def test_serving_uses_the_report_wide_seed_constants_and_hbm_rates(serving):
    from analysis import _report_parts, _report_serving
    from analysis._decode import DECODE_HBM_EFFICIENCY
    from analysis._report_decode import hbm_rates_phrase, param_phrase

    assert _report_serving.SEED_FUSION is _report_parts.SEED_FUSION
    _, sec = serving
    text = " ".join(sec.text)
    assert hbm_rates_phrase(param_phrase(DECODE_HBM_EFFICIENCY, percent=True)) in text
