"""Session 38 (inputs): sourced chip power for the Blackwell chips, and bad input at the
edges the earlier probes had not reached (row plots' log axes, build_report's command and
callback, write_report's report and drawing).

CHIP_POWER had no gb200, b300 or gb300: each was priced at an H100's 700 W (an
assumption), so a bill of materials' system power per chip of nvl72, hgx-b300 and
gb300-nvl72 was 500-700 W short. NVIDIA's own system files (docs/sources.md s.10) give
1,200 W (GB200, a GPU), 1,100 W (HGX B300) and 1,400 W (GB300, a GPU). H800 and H20 have
no vendor figure and stay the assumption.
"""
import pytest

import topologies
from analysis import bill_of_materials
from fabric import CHIP_POWER, chip_power, hardware_costs


@pytest.mark.parametrize("chip, watts", [("gb200", 1200.0), ("b300", 1100.0),
                                         ("gb300", 1400.0)])
def test_a_blackwell_chip_has_its_vendors_power_not_the_h100_assumption(chip, watts):
    p = chip_power(chip)
    assert (p.name, p.value, p.unit) == (f"chip.{chip}.power", watts, "W")
    assert "assumption" not in p.source and "datasheet" in p.source
    assert CHIP_POWER[chip] is p


def test_a_bill_of_materials_takes_the_chips_own_power():
    book = hardware_costs("street-2026")
    b = bill_of_materials(topologies.build("hgx-b300"), book)
    assert b.system_w_per_chip == CHIP_POWER["b300"].value + book.value("host_w_per_chip")
    assert CHIP_POWER["b300"] in b.parameters


def _sweep(size):
    from analysis import plot_collective_sweep
    return plot_collective_sweep([{"system": "s", "algorithm": "ring", "size": size,
                                   "time": 1e-6}])


def _ratio(size):
    from analysis import plot_ratio
    return plot_ratio([{"label": "x", "size": size, "ratio": 1.0}])


def _scaling(chips):
    from analysis import draw_scaling
    return draw_scaling([{"family": "torus", "chips": chips, "decode_step_s": 3e-3}],
                        "decode_step_s")


@pytest.mark.parametrize("draw, key", [(_sweep, "size"), (_ratio, "size"),
                                       (_scaling, "chips")])
@pytest.mark.parametrize("value", [float("nan"), float("inf"), 0, -4])
def test_a_size_or_chip_count_on_a_log_axis_is_a_positive_finite_number(draw, key, value):
    # nan was numpy's 'cannot convert float NaN to integer' (draw_scaling: matplotlib's
    # 'Axis limits cannot be NaN or Inf'), 0 'math domain error' (draw_scaling drew an
    # empty log axis with a warning); 2**1100: below
    from fabric import SpecError
    with pytest.raises(SpecError, match=rf"rows\[0\]\['{key}'\] must be a finite number > 0 "
                                        r"\(\w+ draws it on a log axis\)"):
        draw(value)


@pytest.mark.parametrize("kw, match", [
    ({"command": 5}, r"command must be a str or None, got 5 \(an int\)"),
    ({"command": ["cofabric", "report"]}, r"command must be a str or None, got \['cofabric'"),
    ({"on_section": 5}, r"on_section must be a callable \(called with each Section\) or None"),
    ({"on_section": "print"}, r"on_section must be a callable"),
])
def test_build_reports_command_and_callback_are_checked_before_any_section(kw, match):
    # command=5 was written as '5' and failed only in write_report ("'int' object has no
    # attribute 'replace'"); on_section=5 failed after its first section was computed
    from analysis import build_report
    seen = []
    with pytest.raises(TypeError, match=match):
        build_report(("torus:2x2",), sections=("structure",), quiet=True,
                     **{"on_section": seen.append, **kw})
    assert seen == []


@pytest.mark.parametrize("kw, match", [
    ({"report": 5}, r"report must be a Report \(analysis.build_report's\), got 5"),
    ({"report": None}, r"report must be a Report"),
    ({"drawing": "figures"}, (r"drawing must be an analysis._report_render.FigureDrawing "
                              r"or None, got 'figures' \(a str\)")),
])
def test_write_report_names_a_report_or_drawing_of_another_kind(kw, match, tmp_path):
    # was AttributeError: 'int' object has no attribute 'figures' / 'str' ... 'finish'
    from analysis import build_report, write_report
    args = {"report": build_report(("torus:2x2",), sections=("structure",), quiet=True)}
    args.update(kw)
    with pytest.raises(TypeError, match=match):
        write_report(args.pop("report"), tmp_path / "r", quiet=True, **args)
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("call, error, match", [
    # was "unsupported operand type(s) for %: 'NoneType' and 'int'" / numpy's 'ambiguous'
    (lambda a: a.parse_layout("tp=8", None), TypeError,
     r"^n_chips must be an integer >= 1 \(the chips laid out\), got n_chips=None"),
    (lambda a: a.parse_layout("tp=8", [8]), TypeError, r"^n_chips must be an integer >= 1"),
    # keys of two kinds were "'<' not supported between instances of 'str' and 'int'"
    (lambda a: a.parse_layout({1: 2, "x": 3}, 8), ValueError,
     r"^layout: unknown keys \[1, 'x'\]; known: dp, ep, etp, tp$"),
    # a list was 'unhashable'; the choice now in check_choice's one form
    (lambda a: a.prefill_gemm_efficiency("h200", "fp8", ["experts"]), TypeError,
     r"^part must be a str, got \['experts'\]"),
    (lambda a: a.pareto_front([{"y": 1.0}], x=5), TypeError, r"^x must be a str, got 5"),
])
def test_moes_entry_points_name_an_argument_of_another_kind(call, error, match):
    import analysis
    with pytest.raises(error, match=match):
        call(analysis)


def test_pareto_front_quotes_a_missing_key_short():
    # a 5,000-character x was quoted whole (a 5 KB message)
    from analysis import pareto_front
    from fabric import SpecError
    with pytest.raises(SpecError, match=r"\(5002 characters\) \(x and y name") as e:
        pareto_front([{"y": 1.0}], x="x" * 5000)
    assert len(str(e.value)) < 200


@pytest.mark.parametrize("draw", [
    lambda a, v: a.plot_collective_sweep([{"system": "s", "algorithm": "ring", "size": 8,
                                           "time": v}]),
    lambda a, v: a.plot_stacked_bars([{"system": "s", "component": "c", "time": v}]),
    lambda a, v: a.plot_failure_cost([{"system": "s", "failure": "f", "change": v}]),
    lambda a, v: a.plot_ratio([{"label": "x", "size": v, "ratio": 1.0}]),
])
def test_a_plotted_value_beyond_a_floats_range_is_named(draw):
    # was numpy's 'OverflowError: int too large to convert to float'
    import analysis
    from fabric import SpecError
    with pytest.raises(SpecError, match=r"rows\[0\]\['\w+'\] must be within a float's range, "
                                        r"got 1000000000.*\(401 digits\)"):
        draw(analysis, 10**400)


@pytest.mark.parametrize("tier, usd", [("own-hyperscaler", 2.34), ("own-neocloud", 2.808),
                                       ("rent-3yr", 3.48)])
def test_a_b300_system_takes_the_tco_tables_b300_row(tier, usd):
    # was the cost book's node price per chip ($38,750, an H100 node's) over 4 years plus
    # the bill of materials' power: $1.478 a GPU-hour and 1.82 kW for every tier
    from analysis import serving_cost
    from analysis._serving import TCO
    price, kw, _, how = serving_cost(topologies.build("hgx-b300"), tier=tier)
    assert (price, kw) == (TCO["B300"].usd_per_gpu_hour[tier], TCO["B300"].all_in_kw_per_gpu)
    assert price == usd and how.startswith("TCO table: B300")


@pytest.mark.parametrize("value, error, match", [
    ("x" * 5000, TypeError, (r"^micro_batches must be an integer >= 1, got micro_batches='x+"
                             r"\.\.\. \(5002 characters\) \(a str\)$")),
])
def test_single_user_speed_names_a_micro_batch_count_of_another_kind(value, error, match):
    # a str was a SpecError quoting it whole (5 KB)
    from analysis import single_user_speed
    with pytest.raises(error, match=match):
        single_user_speed("deepseek-v3", topologies.build("hgx-h200"), micro_batches=value)


@pytest.mark.parametrize("systems", [{"a", "b"}, "ab", ["a", 5]])
def test_system_colors_refuses_its_systems_when_called_as_paper_style_does(systems):
    # the generator checked them only when its block was entered
    from analysis import system_colors
    with pytest.raises(TypeError, match=r"^systems(\[1\])? must be"):
        system_colors(systems)


@pytest.mark.parametrize("spec, chip, row", [("nvl72", "h100", "H100"),
                                             ("gb300-nvl72", "b200", "B200")])
def test_a_racks_price_applies_only_with_its_own_chip(spec, chip, row):
    # HANDOVER W-1: nvl72.with_chip('h100') was priced as a GB200 NVL72 rack ($2.21, 2.1 kW)
    from analysis import serving_cost
    from analysis._serving import TCO
    price, kw, _, how = serving_cost(topologies.build(spec).with_chip(chip))
    assert (price, kw) == (TCO[row].usd_per_gpu_hour["own-hyperscaler"],
                           TCO[row].all_in_kw_per_gpu)
    assert how.startswith(f"TCO table: {row},")
