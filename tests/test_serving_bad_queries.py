"""Bad arguments to the serving results' queries get a SpecError naming them (session 14):
ServingFrontier.at_interactivity(nan) answered None (nan compares false with every point),
a bool was a speed of 1, a string broke in a comparison; PrefillTime.exposed_launch priced a
negative or nan device time; pareto_front with a name the points lack broke in getattr."""

import math

import numpy as np
import pytest

import analysis
import topologies
from analysis import PrefillTime
from fabric import SpecError
from fabric._units import is_real


@pytest.fixture(scope="module")
def frontier():
    f = topologies.build("hgx-h200")
    return analysis.serving_frontier("deepseek-r1", f, isl=1024, osl=256, n_batches=3,
                                     layouts=["tp=8"])


@pytest.mark.parametrize("bad", [math.nan, math.inf, -1.0, True, np.bool_(True), "10", None])
def test_at_interactivity_names_a_bad_speed(frontier, bad):
    with pytest.raises(SpecError if is_real(bad) else TypeError, match="tokens_per_s_user must be"):  # kind: TypeError
        frontier.at_interactivity(bad)


def test_at_interactivity_by_brute_force(frontier):
    for v in (0, 0.0, np.float32(5.0), np.int64(20), 1e9):
        ok = [p for p in frontier.points if p.tokens_per_s_user >= v]
        want = max(ok, key=lambda p: p.tokens_per_s_gpu) if ok else None
        assert frontier.at_interactivity(v) == want


@pytest.mark.parametrize("bad", [math.nan, -1e-6, math.inf, True, "1"])
def test_exposed_launch_names_a_bad_device_time(bad):
    p = PrefillTime(isl=1, flops=0.0, compute=0.0, weights=0.0, comm=0.0, total=0.0,
                    launch=4e-6, launch_layers=(((False, True), 2),))
    with pytest.raises(SpecError if is_real(bad) else TypeError, match="device must be"):
        p.exposed_launch(bad)
    assert p.exposed_launch(np.float64(1.0)) == p.exposed_launch(1.0)


@pytest.mark.parametrize("x, y", [("nosuch", "y"), ("x", 3), ("x", None)])
def test_pareto_front_names_a_missing_attribute(x, y):
    pts = [{"x": 1, "y": 5}, {"x": 2, "y": 4}]
    # a key that is no name (3, None) is a wrong kind: a TypeError (session 38; was a
    # SpecError 'every point must have 3')
    error, match = ((SpecError, "pareto_front: every point must have") if isinstance(y, str)
                    else (TypeError, "^y must be a str, got "))
    with pytest.raises(error, match=match):
        analysis.pareto_front(pts, x, y)
    with pytest.raises(error, match=match):
        analysis.pareto_front([type("P", (), {"x": 1, "y": 2})()], x, y)


@pytest.mark.parametrize("bad", ["nosuch", None, 5, ["rent-3yr"]])
def test_tco_parameters_name_a_bad_tier(bad):
    """A tier the entry has no price for raised a bare KeyError (session 14)."""
    entry = analysis.TCO["H200"]
    # a tier of the wrong kind is a TypeError (a SpecError before session 34)
    with pytest.raises(SpecError if isinstance(bad, str) else TypeError,
                       match="tier must be one of own-hyperscaler" if isinstance(bad, str) else
                       "tier must be a str, got"):
        entry.parameters(bad)
    usd, kw = entry.parameters("rent-3yr")
    assert (usd.value, usd.unit, kw.value) == (1.60, "$/h", 1.73)
