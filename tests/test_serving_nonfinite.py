"""Serving's public functions refuse nan, inf and negative figures by name (session 11: the
cost and power helpers returned nan, inf or negative answers, serving_cost ignored a given
kW per GPU on a priced GPU)."""

import math

import pytest

import analysis
import topologies
from fabric import SpecError
from fabric._units import is_real

nan, inf = math.nan, math.inf


@pytest.mark.parametrize("args,name", [
    ((nan, 1.0), "tokens_per_s_gpu"), ((inf, 1.0), "tokens_per_s_gpu"),
    ((-1.0, 1.0), "tokens_per_s_gpu"), ((True, 1.0), "tokens_per_s_gpu"),
    ((1.0, nan), "kw_per_gpu"), ((1.0, inf), "kw_per_gpu"), ((1.0, 0.0), "kw_per_gpu"),
    ((1.0, "2"), "kw_per_gpu")])
def test_tokens_per_mw_refuses_by_name(args, name):
    error = SpecError if all(map(is_real, args)) else TypeError    # a kind: s32
    with pytest.raises(error, match=f"{name} must be a finite number"):
        analysis.tokens_per_s_per_mw(*args)


def test_tokens_per_mw_zero_tokens_is_zero():
    assert analysis.tokens_per_s_per_mw(0.0, 2.0) == 0.0


@pytest.mark.parametrize("args,name", [
    ((nan, 1.0), "tokens_per_s_gpu"), ((inf, 1.0), "tokens_per_s_gpu"),
    ((0.0, 1.0), "tokens_per_s_gpu"), ((1000.0, nan), "usd_per_gpu_hour"),
    ((1000.0, -1.0), "usd_per_gpu_hour"), ((1000.0, inf), "usd_per_gpu_hour")])
def test_cost_per_million_refuses_by_name(args, name):
    with pytest.raises(SpecError, match=f"{name} must be a finite number"):
        analysis.cost_per_million_tokens(*args)


@pytest.fixture(scope="module")
def sd():
    return topologies.build("sd200-ultra")


@pytest.mark.parametrize("kw,name", [
    ({"chip_price": inf}, "chip_price"), ({"chip_price": nan}, "chip_price"),
    ({"chip_price": 1000.0, "kw_per_gpu": nan}, "kw_per_gpu"),
    ({"chip_price": 1000.0, "kw_per_gpu": -1.0}, "kw_per_gpu"),
    ({"chip_price": 1000.0, "kw_per_gpu": inf}, "kw_per_gpu")])
def test_serving_cost_refuses_by_name(sd, kw, name):
    with pytest.raises(SpecError, match=f"{name} must be a finite number"):
        analysis.serving_cost(sd, **kw)


def test_priced_gpu_takes_a_given_power():
    f = topologies.build("dgx-h100")
    usd, kw, params, how = analysis.serving_cost(f, kw_per_gpu=1.2)
    table = analysis.TCO["H100"]
    assert (usd, kw) == (table.usd_per_gpu_hour["own-hyperscaler"], 1.2)
    assert any(p.name == "serving.kw_per_gpu" and p.source == "user" for p in params)
    assert "(user)" in how
    with pytest.raises(SpecError, match="kw_per_gpu"):
        analysis.serving_cost(f, kw_per_gpu=nan)


@pytest.mark.parametrize("bad", [nan, -1.0, 0.0, inf])
def test_prefill_dispatch_bytes_refused_by_name(bad):
    f = topologies.build("switch:8,planes=2,links=9,tech=nvlink5,chip=b200")
    with pytest.raises(SpecError, match="dispatch_bytes must be a finite number > 0"):
        analysis.prefill_time("kimi-k2", f, isl=64, layout="tp=8", dispatch_bytes=bad)


@pytest.mark.parametrize("bad", [nan, -1.0, 0.0, 1.5, True])
def test_candidate_layouts_usable_hbm(bad):
    f = topologies.build("switch:8,planes=2,links=9,tech=nvlink5,chip=b200")
    with pytest.raises(SpecError if is_real(bad) else TypeError, match="usable_hbm must be in"):
        analysis.candidate_layouts("kimi-k2", f, usable_hbm=bad)


def test_pareto_front_refuses_nan():
    with pytest.raises(SpecError, match="tokens_per_s_user must be a number"):
        analysis.pareto_front([{"tokens_per_s_user": nan, "tokens_per_s_gpu": 1.0}])
    assert analysis.pareto_front([{"tokens_per_s_user": 1.0, "tokens_per_s_gpu": 1.0}])


@pytest.mark.parametrize("bad", [None, 3, {"breakdown": {}}])
def test_speed_limits_needs_a_point(bad):
    # a wrong kind is a TypeError (STYLE's rule; a SpecError before session 34)
    with pytest.raises(TypeError, match="point must be a ServingPoint"):
        analysis.speed_limits(bad)
