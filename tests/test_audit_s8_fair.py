"""Audit (session 8): fair comparisons keep the fabric they scale.

``analysis.scale_links`` (what ``equalize`` and the report's equal-cost and equal-power
rows evaluate) rebuilt the copy with ``Fabric.from_graph``: the copy lost its typed
structure, so its routing policy fell back to shortest paths and the structure-aware
collectives (swing, multi-dimensional) disappeared (sd200-ultra's 1 GiB all-reduce under
``runtime="ideal"``: 2.84 ms intact, 3.54 ms on a copy scaled by 1.000000001); and a
degraded fabric lost its failures, so ``equalize`` priced the degraded graph instead of
the hardware as built.

References: the edge-by-edge product (brute force), the intact fabric's own policy and
algorithm, and the bill of the fabric as built.
"""


import numpy as np
import pytest
from degrade import degrade
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from routing_brute import built_h100

import topologies
from analysis import bill_of_materials, cost, equalize, scale_links
from fabric._units import is_real

SETTINGS = settings(max_examples=25, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])

SPECS = ["torus:4x4", "hypermesh:2x2x2", "fattree:k=4", "switch:8,planes=2",
         "rail:servers=2,gpus=4", "dragonfly:h=1", "leafspine:k=4,over=3"]


@st.composite
def fabrics(draw):
    return draw(degrade(built_h100(draw(st.sampled_from(SPECS)))))


@SETTINGS
@given(fabrics(), st.sampled_from([0.5, 1.5, 2.0, 3.25]), st.sampled_from([1.0, 0.5, 2.0]))
def test_a_scaled_copy_is_the_same_fabric_with_every_link_scaled(f, bw, lat):
    g = scale_links(f, bw, lat)
    # every link, brute force
    for u, v, d in f.graph.edges(data=True):
        e = g.graph.edges[u, v]
        assert e["bandwidth"] == d["bandwidth"] * bw
        assert e["latency"] == d["latency"] * lat
        assert e.get("lanes", 1) == d.get("lanes", 1)
    assert set(g.graph.edges()) == set(f.graph.edges())
    # everything else is the fabric's own
    assert (g.endpoints, g.ranks, dict(g.domains)) == (f.endpoints, f.ranks, dict(f.domains))
    assert g.structure == f.structure and g.failures == f.failures
    assert g.router.policy == f.router.policy
    assert g.address_plan == f.address_plan
    # a degraded copy is priced as built: the bill of the scaled fabric it was made from
    if f.intact is not None:
        assert g.intact is not None and g.intact.failures == f.intact.failures
        assert bill_of_materials(g).as_dict() | {"system": ""} == \
            bill_of_materials(scale_links(f.intact, bw, lat)).as_dict() | {"system": ""}


@SETTINGS
@given(fabrics())
def test_equal_cost_of_a_degraded_fabric_is_that_of_the_hardware_as_built(f):
    intact = f.intact if f.intact is not None else f
    target = 2.5 * bill_of_materials(intact).cost_usd_per_chip
    s, g = equalize(f, target)
    s0, _ = equalize(intact, target)
    assert s == s0
    assert bill_of_materials(g).cost_usd_per_chip == pytest.approx(target, rel=1e-6)
    assert g.failures == f.failures


@pytest.mark.parametrize("spec", ["torus:4x4", "hypermesh:4x4", "hypermesh:2x2x2",
                                  "fattree:k=4"])
def test_a_scaled_copy_keeps_the_structure_aware_collectives(spec):
    f = topologies.build(spec)
    g = scale_links(f, 1.0 + 1e-9)
    a = cost(f, "all-reduce", 2**26, runtime="ideal")
    b = cost(g, "all-reduce", 2**26, runtime="ideal")
    assert b.algorithm == a.algorithm
    assert b.time == pytest.approx(a.time, rel=1e-6)


@pytest.mark.parametrize("bad", [True, 0, -1.0, float("nan"), float("inf"), "2", None])
def test_scale_factors_are_positive_finite_numbers(bad):
    f = built_h100("torus:4x4")
    error = ValueError if is_real(bad) else TypeError         # a wrong kind (s32)
    with pytest.raises(error, match=r"must be a finite number > 0 \(a factor\)"):
        scale_links(f, bandwidth=bad)
    with pytest.raises(error, match=r"must be a finite number > 0 \(a factor\)"):
        scale_links(f, latency=bad)


def test_numpy_scale_factors_are_numbers():
    f = built_h100("torus:4x4")
    g = scale_links(f, np.int64(2), np.float32(0.5))
    e = g.graph.edges["chip0", "chip1"]
    assert e["bandwidth"] == 2 * f.graph.edges["chip0", "chip1"]["bandwidth"]
    assert g.name.endswith("(bandwidth x2, latency x0.5)")


# -- bad numbers in the comparison API ---------------------------------------------------

def test_a_bool_is_no_target_and_numpy_numbers_are():
    f = built_h100("torus:4x4")
    usd = bill_of_materials(f).cost_usd_per_chip
    with pytest.raises(TypeError, match=r"^target must be a finite number > 0 \(cost per chip\)"):
        equalize(f, True)                         # was: priced to $1 (s ~ 1e-4)
    assert equalize(f, np.float32(2 * usd))[0] == pytest.approx(2.0, rel=1e-6)
    assert equalize(f, np.int64(round(2 * usd)))[0] == pytest.approx(
        equalize(f, float(round(2 * usd)))[0])


@pytest.mark.parametrize("bad", [True, 0, -1, float("nan"), float("inf")])
def test_rack_density_factor_is_a_positive_number_not_a_bool(bad):
    from fabric import SpecError
    with pytest.raises(SpecError if is_real(bad) else TypeError, match="rack_chips_factor must be a finite number > 0"):
        bill_of_materials(built_h100("fattree:k=4"), rack_chips_factor=bad)


def test_numpy_rack_density_factor_is_the_same_as_python():
    f = built_h100("fattree:k=4")
    assert bill_of_materials(f, rack_chips_factor=np.int64(2)).as_dict() == \
        bill_of_materials(f, rack_chips_factor=2).as_dict()


@pytest.mark.parametrize("ep", [8.9, 8.0, True, "8"])
def test_best_layout_takes_a_whole_number_of_chips(ep):
    from analysis import best_decode_layout
    f = topologies.build("nvl72")
    # a count of the wrong kind is a TypeError (session 31; was a ValueError)
    with pytest.raises(TypeError, match="ep must be an integer number of chips"):
        best_decode_layout("kimi-k2", f, batch=1, context=4096, ep=ep)   # 8.9 ran ep=8


@pytest.mark.parametrize("spec", ["sd200-ultra", "cluster-128", "nvl72"])
@pytest.mark.parametrize("what", ["bandwidth", "latency"])
def test_the_tornados_one_parameter_what_if_keeps_the_fabric(spec, what):
    """The report's all-reduce tornado scales one link technology; the copy lost its
    structure (routing fell back to shortest paths) the way scale_links did."""
    from analysis._report_fair import _with
    f = topologies.build(spec)
    techs = sorted({d.get("tech") for *_, d in f.graph.edges(data=True)})
    tech = techs[0]
    g = _with(f, tech, what, 2.0)
    assert g.structure == f.structure and g.router.policy == f.router.policy
    assert (g.endpoints, dict(g.domains), g.chip) == (f.endpoints, dict(f.domains), f.chip)
    for u, v, d in f.graph.edges(data=True):              # brute force, edge by edge
        want = d[what] * (2.0 if d.get("tech") == tech else 1.0)
        assert g.graph.edges[u, v][what] == want


def test_the_fair_captions_name_the_runtime_the_rows_use():
    """The equal-cost table and the all-reduce tornado said 'fastest algorithm'; their
    all-reduce is analysis.cost's default runtime, NCCL's tuner (not the fastest)."""
    import inspect

    from analysis._report_fair import _fair_point, _sens_point, fair_section, sensitivity_section
    assert inspect.signature(cost).parameters["runtime"].default == "nccl"
    for fn in (_fair_point, _sens_point):        # neither passes a runtime of its own
        assert "runtime" not in inspect.getsource(fn)
    fabs = {s: built_h100(s) for s in ("torus:4x4", "fattree:k=4")}
    fair, _ = fair_section(fabs, quiet=True)
    sens, _ = sensitivity_section(fabs, quiet=True)
    for caption in (fair.tables[0].caption, sens.tables[0].caption):
        assert "NCCL" in caption and "fastest algorithm" not in caption
