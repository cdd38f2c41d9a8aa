"""Fair comparisons: equal cost and power by link scaling, best decode layout by search."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import topologies
from analysis import best_decode_layout, bill_of_materials, decode_step, equalize, scale_links
from fabric import SpecError


@settings(max_examples=12, deadline=None)
@given(spec=st.sampled_from(["cluster-128", "nvl72", "torus:4x4x4", "fattree:k=4",
                             "dragonfly:h=2", "sd200-ultra"]),
       basis=st.sampled_from(["cost", "power"]), factor=st.floats(0.3, 5.0))
def test_equalize_reaches_the_target(spec, basis, factor):
    f = topologies.build(spec)
    b = bill_of_materials(f)
    own = b.cost_usd_per_chip if basis == "cost" else b.power_w_per_chip
    # a target the fabric can reach: its own figure times a factor above the fixed part
    target = own * factor
    try:
        s, g = equalize(f, target, basis)
    except ValueError as e:
        assert "above the target" in str(e)
        return
    got = bill_of_materials(g)
    got = got.cost_usd_per_chip if basis == "cost" else got.power_w_per_chip
    assert got == pytest.approx(target, rel=1e-6)
    assert (s > 1) == (factor > 1) or s == pytest.approx(1.0)
    for (_, _, d), (_, _, e) in zip(f.graph.edges(data=True), g.graph.edges(data=True)):
        assert e["bandwidth"] == pytest.approx(s * d["bandwidth"], rel=1e-12)
        assert e["latency"] == d["latency"]


def test_equalize_at_own_cost_is_identity():
    f = topologies.build("cluster-128")
    s, _ = equalize(f, bill_of_materials(f).cost_usd_per_chip)
    assert s == pytest.approx(1.0, rel=1e-9)


def test_equalize_errors():
    f = topologies.build("torus:2x2")
    with pytest.raises(ValueError, match="basis must be one of"):
        equalize(f, 1.0, "joy")
    with pytest.raises(ValueError, match=r"target must be a finite number > 0 \(cost per chip\)"):
        equalize(f, -1.0)
    with pytest.raises(ValueError, match=r"bandwidth must be a finite number > 0 \(a factor\)"):
        scale_links(f, 0)


def test_scaled_throughput_scales_exactly():
    import analysis
    f = topologies.build("fattree:k=4")
    g = scale_links(f, 3.0)
    assert analysis.metrics(g).bisection_bandwidth == pytest.approx(
        3 * analysis.metrics(f).bisection_bandwidth, rel=1e-12)


def test_best_layout_is_the_minimum_over_explicit_layouts():
    f = topologies.build("sd200-ultra")
    step, tried = best_decode_layout("kimi-k2", f, batch=1, context=1024, tps=(1, 2, 8))
    brute = {tp: decode_step("kimi-k2", f, batch=1, context=1024, layout=f"tp={tp}").time
             for tp in (1, 2, 8)}
    assert [t for _, t in tried] == [brute[1], brute[2], brute[8]]
    assert step.time == min(brute.values())


def test_preset_with_another_chip():
    f = topologies.build("nvl72:chip=h100")
    assert f.chip.name == "h100" and f.n_endpoints == 72
    names = {p.name for p in f.assumptions}
    assert "h100.hbm_bandwidth" in names and not any(n.startswith("b200.") for n in names)
    with pytest.raises(SpecError, match="one option, chip="):
        topologies.build("nvl72:planes=3")


def test_cost_figure_names_absent_parts_and_leaves_room_past_the_longest_bar():
    import matplotlib

    matplotlib.use("Agg")
    from analysis import _report_fair

    rows = _report_fair._cost_rows({s: topologies.build(s)
                                    for s in ("torus:4x4", "switch:8,planes=2,links=9")})
    fig = _report_fair._draw_cost(rows)
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    # no optics on either fabric: transceivers keep their colour but say they are absent
    assert "transceivers (none here)" in labels and "switches" in labels
    cost_ax = fig.axes[0]
    longest = max(p.get_x() + p.get_width() for p in cost_ax.patches)
    assert longest < cost_ax.get_xlim()[1]
