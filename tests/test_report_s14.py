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
