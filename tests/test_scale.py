"""Scale mechanisms (issue 16) against the general engines they shortcut, on random small shapes."""

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import topologies
from analysis import link_loads, traffic
from analysis._traffic import TrafficMatrix
from fabric import Router, SpecError


def _reference_loads(f, router=None):
    """Uniform all-to-all through the general engine (row blocks, every pair routed)."""
    r = router or f.router
    return r.loads_matrix(TrafficMatrix("u", f.n_endpoints, fill=1.0))


def _same(a, b):
    np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12 * float(np.abs(b).max()))


_SHAPES = st.lists(st.integers(1, 5), min_size=1, max_size=3)


@st.composite
def _specs(draw):
    kind = draw(st.sampled_from(["torus", "hypermesh", "mixed", "fattree", "leafspine", "rail",
                                 "switch", "dragonfly"]))
    if kind in ("torus", "hypermesh"):
        shape = draw(_SHAPES)
        return f"{kind}:" + "x".join(map(str, shape))
    if kind == "mixed":
        shape = draw(st.lists(st.integers(2, 4), min_size=2, max_size=3))
        conn = draw(st.lists(st.sampled_from(["ring", "full"]), min_size=len(shape),
                             max_size=len(shape)))
        return "hypermesh:" + "x".join(map(str, shape)) + ",connect=" + "/".join(conn)
    if kind == "fattree":
        return f"fattree:k={draw(st.sampled_from([2, 4, 6]))}"
    if kind == "leafspine":
        return f"leafspine:k={draw(st.sampled_from([4, 6]))},over={draw(st.integers(1, 3))}"
    if kind == "rail":
        return (f"rail:servers={draw(st.integers(2, 4))},gpus={draw(st.integers(1, 3))},"
                f"spines={draw(st.integers(1, 3))}")
    if kind == "switch":
        return f"switch:{draw(st.integers(2, 7))},planes={draw(st.integers(1, 3))}"
    h = draw(st.integers(1, 3))
    return f"dragonfly:h={h},a={draw(st.integers(1, 2 * h))},p={draw(st.integers(1, 3))}"


@settings(max_examples=60, deadline=None)
@given(_specs(), st.sampled_from(["all", "hash", "weighted"]))
def test_all_to_all_loads_match_the_general_engine(spec, ecmp):
    try:
        f = topologies.build(spec)
    except SpecError:  # a combination the builder refuses
        assume(False)
    assume(f.n_endpoints >= 2)
    policy = f.router.policy
    if policy == "dimension-order" and ecmp == "weighted":
        ecmp = "all"
    r = Router(f, ecmp=ecmp)
    _same(r.loads_all_to_all(1.0), _reference_loads(f, r))


def test_orbits_refuse_degraded_and_asymmetric_fabrics():
    f = topologies.build("torus:4x4")
    assert f.router.link_orbits is not None
    assert f.without(links=[("chip0", "chip1")]).router.link_orbits is None
    assert topologies.build("mesh:3x3").router.link_orbits is None
    assert topologies.build("hypermesh:3x3,connect=switch").router.link_orbits is None
    g = topologies.build("fattree:k=4").without(chips=[3])
    assert g.router.link_orbits is None


@pytest.mark.parametrize("spec,failure", [
    ("torus:4x3", {"links": [("chip0", "chip1")]}),
    ("fattree:k=4", {"links": ["agg0.0-core0"]}),
    ("dragonfly:h=2", {"chips": [5]}),
    ("dragonfly:h=2", {"links": [("r0.0", "r0.1")]}),
])
def test_degraded_fabrics_fall_back_to_the_general_engine(spec, failure):
    g = topologies.build(spec).without(**failure)
    _same(g.router.loads_all_to_all(1.0), _reference_loads(g))
    t = traffic(g, "all-to-all", 2.0)
    _same(link_loads(g, t).loads, g.router.loads_matrix(t))


def test_link_loads_of_uniform_traffic_use_the_same_numbers():
    f = topologies.build("hypermesh:4x3x2,connect=ring/full/ring")
    t = traffic(f, "all-to-all", 3.0)
    _same(link_loads(f, t).loads, f.router.loads_matrix(t))
