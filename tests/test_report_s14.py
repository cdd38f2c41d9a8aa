"""Session 14: runtime 'ideal' is named for what it is (the model's schedules with no
software costs, not a bound), and figures leave room above their tallest bar."""

import matplotlib
import pytest

matplotlib.use("Agg")


def test_ideal_is_not_called_a_floor_anywhere_the_report_labels_it():
    # session 13 showed NCCL's cluster-128 1 GiB all-reduce (5.60 ms) below 'ideal'
    # (5.96 ms): a label 'hardware floor' read as a bound it is not
    from analysis._report_parts import runtime_label, runtime_phrase

    label, phrase = runtime_label("ideal"), runtime_phrase("ideal")
    for text in (label, phrase):
        assert "floor" not in text and "schedules" in text, text
    assert "no software costs" in label
    assert phrase.endswith("not a lower bound")


def test_runtime_constants_table_says_ideal_has_none():
    from analysis._report_parts import runtime_label
    from analysis._report_sections import REPORT_RUNTIMES, runtime_parameters_table

    assert "ideal" not in REPORT_RUNTIMES
    table = runtime_parameters_table()
    assert [r["runtime"].split()[0] for r in table.rows] == [f"'{n}'" for n in REPORT_RUNTIMES]
    assert f"Runtime 'ideal' has none ({runtime_label('ideal')})." in table.caption


@pytest.mark.parametrize("hi, bottom", [(967.2, 12.5), (9e4, 0.1), (5.95, 0.5), (99.0, 1.0)])
def test_tallest_bar_never_touches_the_top_frame(hi, bottom):
    # the fair figure's 967 GB/s bar ended 0.7% of the axis below a top of 1000
    import math

    from matplotlib.figure import Figure

    from analysis._plots import LOG_TOP_ROOM, log_ticks_above

    ax = Figure().subplots()
    ax.set_yscale("log")
    log_ticks_above(ax, [bottom * 2, hi], bottom)
    lo, top = ax.get_ylim()
    assert lo == pytest.approx(bottom) and top > hi
    assert math.log10(top / hi) >= LOG_TOP_ROOM * math.log10(top / bottom) - 1e-12
    # and the top is a labelled tick
    assert max(ax.get_yticks()) == pytest.approx(top)


@pytest.mark.parametrize("runtime", ["nccl", "ideal"])
def test_equal_cost_lag_sentence_names_the_runtime_that_sets_the_time(monkeypatch, runtime):
    # 'NCCL's own bandwidth model set the time' was true only because analysis.cost's
    # default runtime is NCCL; the finding names whatever runtime its all-reduce ran under
    from analysis import _report_fair, _report_parts

    monkeypatch.setattr(_report_fair, "default_runtime", lambda: runtime)
    monkeypatch.setattr(_report_parts, "default_runtime", lambda: runtime)

    def row(system, basis, scale, t):
        return {"system": system, "basis": basis, "bandwidth_scale": scale,
                "bisection_per_chip_Bps": 25e9 * scale, "allreduce_1GiB_s": t}

    rows = [row("ref", "as built", 1.0, 6e-3), row("a", "as built", 1.0, 3.7e-3),
            row("a", "cost", 12.17, 1.95e-3), row("a", "power", 2.08, 2.5e-3)]
    cost_text, _ = _report_fair._fair_findings(rows, [], "ref")
    assert f"under the runtime '{runtime}'" in cost_text
    if runtime == "nccl":
        assert "NCCL's own bandwidth model set the time" in cost_text
        assert "(its tuner choosing anew on the scaled links)" in cost_text
    else:
        assert "NCCL" not in cost_text and "tuner" not in cost_text, cost_text
        assert "the runtime's own costs set the time" in cost_text


def test_latency_legend_names_both_transports_of_a_cluster():
    # the legend said 'cluster-128 RDMA across hosts' for a curve whose first step (the
    # pairs inside a host) is load/store
    import numpy as np

    from analysis._report_parts import report_fabric
    from analysis._report_sections import _transport_curves

    ((label, how, per_op),) = _transport_curves(report_fabric("cluster-128"))
    assert how == "load/store in a host, RDMA across hosts"
    assert label == f"cluster-128 {how}"
    # the in-host pairs are the fastest: 7 of the 127 peers of each chip
    store = np.asarray(per_op["store"])
    fast = store <= store.min() * 1.01
    assert fast.mean() == pytest.approx(7 / 127)
    ((label, how, _),) = _transport_curves(report_fabric("nvl72:chip=h100"))
    assert (label, how) == ("nvl72:chip=h100 load/store", "load/store")


def test_summary_captions_name_the_sizes_shown_when_not_1k_1m_1g():
    # 'at the sizes nearest 1 KiB, 1 MiB, 1 GiB' read as three sizes on a report swept at
    # 1 KiB and 1 MiB only
    from analysis._report_sweeps import _pick_sizes, _picked_text

    k, m, g = 2 ** 10, 2 ** 20, 2 ** 30
    default = _picked_text(_pick_sizes([2 ** e for e in range(10, 31)]))
    assert default == "the swept sizes nearest 1KiB, 1MiB and 1GiB"
    assert _picked_text(_pick_sizes([k, m])).endswith("(here 1KiB and 1MiB)")
    assert _picked_text(_pick_sizes([4 * k])).endswith("(here 4KiB)")
    assert _picked_text(_pick_sizes([3 * k, 3 * m, 3 * g])).endswith(
        "(here 3KiB, 3MiB and 3GiB)")
