"""Session 15: the format helpers' digits where values stand together; the scaling CLI's
figure sets coinciding families' markers side by side."""

import matplotlib
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_report_s13 import _hidden_pairs, _shown_markers

matplotlib.use("Agg")

_METRIC = "bisection_per_chip_Bps"


def _rows(values):
    """Scaling rows: family -> {chips: value in B/s}."""
    return [{"family": fam, "chips": n, _METRIC: v}
            for fam, pts in values.items() for n, v in pts.items()]


def _cli_figure(rows, metric=_METRIC):
    from analysis._cli_scaling import _drawer
    from analysis._style import paper_style

    with paper_style("single"):
        fig = _drawer(rows, metric)()
    return fig


def test_the_scaling_cli_figure_shows_rail_and_domains_where_they_coincide():
    # cofabric scaling at a78a8f7: rail and domains both 25 GB/s of bisection per chip at
    # 512 and 4,096 chips, one marker over the other (viewed)
    from matplotlib.figure import Figure

    from analysis._scaling import draw_scaling

    rows = _rows({"hyperx": {64: 64e9, 512: 128e9, 4096: 256e9},
                  "rail": {64: 25e9, 512: 25e9, 4096: 25e9},
                  "domains": {64: 250e9, 512: 25e9, 4096: 25e9}})
    fig = _cli_figure(rows)
    shown = _shown_markers(fig)
    assert _hidden_pairs(shown) == []
    # every point of every family keeps exactly one marker
    count = {}
    for _, label, x, y, *_ in shown:
        count[(label, x)] = count.get((label, x), 0) + 1
    assert count == {(r["family"], r["chips"]): 1 for r in rows}
    # the lines still run through the true points
    for ln in fig.axes[0].get_lines():
        if ln.get_label() in ("rail", "domains"):
            assert list(ln.get_ydata())[1:] == [25.0, 25.0]
    # without dodging they hide one another (the test can fail)
    plain = Figure()
    draw_scaling(rows, _METRIC, ax=plain.subplots())
    assert len(_hidden_pairs(_shown_markers(plain))) == 2


_value = st.floats(20e9, 26e9)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.lists(_value, min_size=3, max_size=3), min_size=2, max_size=5))
def test_dodged_scaling_markers_never_hide_one_another(values):
    fams = ["hyperx", "torus", "fat-tree", "rail", "domains"][:len(values)]
    rows = _rows({f: dict(zip((64, 512, 4096), v)) for f, v in zip(fams, values)})
    shown = _shown_markers(_cli_figure(rows))
    assert _hidden_pairs(shown) == []
    assert len(shown) == len(rows)


@pytest.mark.parametrize("value, key, cell", [
    (6.4e10, "bisection_per_chip_Bps", "64.00GB/s"), (0.003901, "allreduce_1GiB_s", "3.901ms"),
    (1.4e-3, "decode_step_s", "1.400ms"), (2e-5, "alltoall_1MiB_s", "20.00us"),
    (165.7, "network_power_w_per_chip", "166 W"), (None, "decode_step_s", "n/a"),
    (7000, "network_cost_usd_per_chip", "$7,000"), ("hyperx", "family", "hyperx")])
def test_scaling_md_cells_show_units_and_four_digits(value, key, cell):
    # scaling.md printed SI floats ('6.4e+10', '0.003901') under the SI column names
    from analysis._cli_scaling import _fmt

    assert _fmt(value, key) == cell


@pytest.mark.parametrize("value, unit, shown", [
    (1.9789e15, "OP/s", "1979 TOP/s"), (9.894e14, "FLOP/s", "989.4 TFLOP/s")])
def test_assumptions_show_peak_rates_in_tera(value, unit, shown):
    # the assumptions table at 6ac842e: 'h100.peak_flops.int8 = 1.979e+15 OP/s' beside
    # 'h100.peak_flops.fp8 = 1979 TFLOP/s'
    from analysis._report_parts import fmt_value

    assert fmt_value(value, unit) == shown
