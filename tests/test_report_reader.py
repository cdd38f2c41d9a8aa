"""What a reader of the report sees: findings that rank honestly (ties named, sizes not
mixed), conditions stated next to the numbers they qualify (session 9 review)."""

import pytest

from analysis import _report_scaling as rs
from analysis._report_findings import decode_findings, sensitivity_finding


def _rows(values):
    """Scaling rows: one per family and REPORT_SIZES entry; ``values[fam]`` gives the
    all-reduce time at each size (None: not evaluated)."""
    rows = []
    for fam, times in values.items():
        for n, t in zip(rs.REPORT_SIZES, times):
            rows.append({"family": fam, "chips": n, "bisection_per_chip_Bps": 1e9,
                         "a2a_per_chip_Bps": 1e9, "allreduce_1GiB_s": t,
                         "allreduce_algorithm": f"alg-{fam}", "alltoall_1MiB_s": None,
                         "alltoall_algorithm": "", "decode_step_s": None, "decode_layout": "",
                         "network_cost_usd_per_chip": 100.0,
                         "network_power_w_per_chip": 10.0})
    return rows


def _allreduce_finding(rows):
    (f,) = [s for s in rs._findings(rows, {}) if s.startswith("A 1GiB all-reduce")]
    return f


def test_scaling_ranking_does_not_mix_sizes():
    # 'small' was evaluated only at 64 chips, where it is fastest of all: it must not be
    # ranked against the others at 512 chips, and the finding says it was not evaluated
    f = _allreduce_finding(_rows({"a": [3e-3, 2e-3, None], "b": [4e-3, 5e-3, None],
                                  "small": [1e-3, None, None]}))
    assert "a fastest (2.000ms, alg-a)" in f and "b slowest (5.000ms, alg-b)" in f, f
    assert "small fastest" not in f and "(small: not evaluated at this size)" in f, f


def test_scaling_ranking_names_every_family_tied_at_an_end():
    f = _allreduce_finding(_rows({"a": [3e-3, 2e-3, None], "b": [4e-3, 45.04e-3, None],
                                  "c": [4e-3, 45.04e-3, None]}))
    assert "b (alg-b) and c (alg-c) slowest, tied at 45.04ms" in f, f
    assert "not evaluated" not in f


def test_decode_sensitivity_finding_calls_no_change_a_tie_not_least():
    rows = [{"system": "s", "model": "m", "parameter": p, "low": "x0.5", "high": "x2",
             "value_low": lo, "value_high": hi}
            for p, lo, hi in (("hbm", 16e-3, 8e-3), ("fusion", 11e-3, 7e-3),
                              ("latency", 10.9e-3, 11.6e-3), ("bandwidth", 11e-3, 11e-3),
                              ("transport", 11e-3, 11e-3))]
    f = sensitivity_finding(rows, 11e-3)
    assert "most sensitive to hbm" in f and "then fusion" in f and "least to latency" in f, f
    assert "unchanged by bandwidth and transport" in f, f
    assert "least to transport" not in f


def test_seed_decode_finding_states_the_conditions_of_its_number():
    rows = [{"system": s, "model": m, "layout": "tp=1,dp=8,ep=8", "time_s": 11e-3,
             "tokens_per_s_user": 90.0, "launch_s": 1e-3, "exposed_comm_s": 1e-3,
             "ep_kernel": "one-sided", "batch": 1, "context": 4096}
            for s in ("a", "b") for m in ("kimi-k2", "hypothetical-2.8t")]
    (seed,) = [f for f in decode_findings(rows, ["a", "b"]) if f.startswith("The seed's")]
    assert "default layout tp=1,dp=8,ep=8, batch 1, 4096-token context" in seed, seed


@pytest.mark.parametrize("layout, kernel, says", [
    ("tp=1,dp=128,ep=128", "one-sided", True),
    ("tp=8,dp=16,ep=128", "one-sided", False),      # TP all-reduces take the transport
    ("tp=1,dp=8,ep=8", "all-to-allv", False),        # the collective takes the transport
])
def test_decode_tornado_says_when_transport_reaches_nothing(layout, kernel, says):
    from analysis import _report_decode

    text = _report_decode._sensitivity_scope({"layout": layout, "ep_kernel": kernel})
    assert bool(text) == says and (not says or "transport setting applies to nothing" in text)


def test_assumptions_table_keeps_parentheses_whole_and_says_which_system_has_which_value():
    from analysis._report_sections import _by_source

    src = "NVIDIA blog module list (at commit abc): counted from the kernels"
    rows = [{"system": s, "parameter": "decode.kernels", "value": v, "unit": "", "source": src}
            for s, v in (("a", "9+17"), ("b", "9+14"), ("c", "9+17"))]
    rows.append({"system": "a", "parameter": "decode.runtime", "value": "nccl", "unit": "",
                 "source": "user (not given: analysis.cost's default runtime)"})
    first, second = _by_source(rows, ["a", "b", "c"])
    assert first["parameters"] == "decode.kernels = 9+17 [a, c]; decode.kernels = 9+14 [b]"
    # the colon inside the parenthesis is not a citation's end: the source stays whole
    assert second["source"] == "user (not given: analysis.cost's default runtime)"
    for r in (first, second):
        assert r["source"].count("(") == r["source"].count(")")


def test_ratios_keep_their_precision_and_the_coincident_lines_are_said():
    from analysis._report_parts import ratio_text
    from analysis._report_sweeps import _coincident

    # '1x' beside '1.24x' read as a rounder number than it is
    assert [ratio_text(v) for v in (1.0, 0.996, 1.24)] == ["1.00x", "0.996x", "1.24x"]
    rows = [{"system": s, "op": op, "ratio_same_transport": r}
            for s in ("a", "b") for op, r in (("all-reduce", 2.0), ("all-to-all", 1.004))]
    assert "all-to-all ratio is within 1% of 1" in _coincident(rows)
    assert _coincident([r for r in rows if r["op"] == "all-reduce"]) == ""


def test_symmetric_memory_figure_labels_a_short_log_axis():
    import matplotlib

    matplotlib.use("Agg")
    from analysis import _report_sweeps

    rows = [{"system": "torus:4x4", "op": "all-reduce", "size_bytes": s, "ratio_same_transport": r}
            for s, r in ((1024, 1.2), (2 ** 20, 0.42), (2 ** 30, 0.31))]
    fig = _report_sweeps._draw_symmetric(rows)
    ax = fig.axes[0]
    lo, hi = ax.get_ylim()
    shown = [t for t in ax.get_yticks() if lo <= t <= hi]
    assert 0.5 in shown and 1.0 in shown and 2.0 in shown, shown   # not only 10^0


def test_runtimes_caption_quotes_the_kernel_floors_the_runtime_uses():
    from analysis._report_sweeps import _kernel_floors
    from fabric import format_time, runtime

    floors = [p.value for p in runtime("symmetric-memory").parameters()
              if p.name.startswith("symmetric-memory.kernel_floor.")]
    # sourced values: their own digits, in the format helpers' spelling (session 16)
    assert floors and _kernel_floors() == (f"{format_time(min(floors))}-{format_time(max(floors))}"
                                           if min(floors) < max(floors)
                                           else format_time(floors[0]))


def test_a_chip_override_says_the_fabric_keeps_its_links():
    # nvl72:chip=h100 keeps NVLink5's 900 GB/s per chip: the section says it is a what-if
    # (900.0GB/s: a computed value reads as in the summary table, session 16)
    import topologies
    from analysis._report_fair import _override_note

    fabrics = {n: topologies.build(n) for n in ("nvl72:chip=h100", "torus:4x4")}
    (note,) = _override_note(fabrics)
    assert "nvl72:chip=h100 900.0GB/s" in note and "torus:4x4" not in note, note
    assert _override_note({"torus:4x4": fabrics["torus:4x4"]}) == ()


@pytest.mark.parametrize("exact_a, exact_b, qual", [
    (True, False, "at least 2.6x more"),    # the smaller side is an upper bound
    (False, True, "at most 2.6x more"),
    (True, True, ": 2.6x more"),
])
def test_bisection_ratio_against_an_upper_bound_is_a_bound(exact_a, exact_b, qual):
    from analysis._report_findings import structure_findings

    rows = [{"system": s, "diameter_hops": 3, "mean_hops": 2.0, "bisection_per_chip_Bps": bw,
             "bisection_exact": ex, "forwarding_entries_max": None}
            for s, bw, ex in (("a", 64e9, exact_a), ("b", 25e9, exact_b))]
    (f,) = [s for s in structure_findings(rows) if s.startswith("Bisection")]
    assert qual in f, f


def test_the_best_bisection_on_a_chip_override_is_called_a_what_if():
    from analysis._report_findings import structure_findings

    rows = [{"system": s, "diameter_hops": 2, "mean_hops": 2.0, "bisection_per_chip_Bps": bw,
             "bisection_exact": True, "forwarding_entries_max": None}
            for s, bw in (("a", 64e9), ("b", 25e9), ("nvl72:chip=h100", 450e9))]
    (f,) = [s for s in structure_findings(rows) if s.startswith("Of all")]
    assert "nvl72:chip=h100 has the most" in f and "what-if, not a product" in f, f
    rows[2]["system"] = "nvl72"
    (f,) = [s for s in structure_findings(rows) if s.startswith("Of all")]
    assert "what-if" not in f, f


def test_fair_figure_names_the_chip_its_tick_labels_drop():
    # the tick labels cut ':chip=h100'; read on its own the figure must still say the chip
    import matplotlib.pyplot as plt

    from analysis._report_fair import _draw_fair
    rows = [{"system": s, "basis": b, "bisection_per_chip_Bps": 1e11, "a2a_per_chip_Bps": 1e11,
             "allreduce_1GiB_s": 2e-3}
            for s in ("nvl72:chip=h100", "cluster-128") for b in ("as built", "cost")]
    fig = _draw_fair(rows)
    try:
        assert "h100" in fig.legends[0].get_title().get_text()
        ticks = [t.get_text() for t in fig.axes[0].get_xticklabels()]
        assert ticks == ["nvl72", "cluster-128"]
    finally:
        plt.close(fig)
    mixed = [dict(r, system="nvl72") if r["system"] == "nvl72:chip=h100" else r for r in rows]
    fig = _draw_fair(mixed)
    try:
        assert fig.legends[0].get_title().get_text() == ""   # gb200 and h100: no one chip
    finally:
        plt.close(fig)


def test_scaling_figure_says_which_runtime_its_times_are_under():
    # collectives at the study's runtime, decode under analysis.cost's default: the figure
    # read on its own (outside the report's caption) says both
    import matplotlib.pyplot as plt

    from analysis._collectives import default_runtime
    from analysis._scaling import RUNTIME
    fig = rs._draw(_rows({"a": [3e-3, 2e-3, None], "b": [4e-3, 5e-3, None]}))
    try:
        text = " ".join(t.get_text() for t in fig.axes[-1].texts)
    finally:
        plt.close(fig)
    assert f"collectives under runtime '{RUNTIME}'" in text, text
    assert f"decode under '{default_runtime()}'" in text, text
