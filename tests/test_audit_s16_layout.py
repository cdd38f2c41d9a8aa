"""Audit, session 16: ``best_decode_layout``'s default leaves out a chip cut off alone (session
15's open finding (c)).

Before: the default used every chip (``ep = f.n_endpoints``), so on an nvl72 whose chip0 lost
its 18 links every layout tried needed chip0 and the search stopped at a RoutingError ('chip0 is
cut off from every other chip'), though 71 chips could serve. A failed chip (a node) was
already left out (it leaves ``f.endpoints``). Now the default is every chip but those in
``f.failures.cut_off`` (no layout can use one; decode places an instance on the chips left,
``analysis._decode._usable_groups``); an ``ep`` the caller gives is costed as asked, so one
that needs a cut-off chip is still the clear error.
"""

import pytest

import analysis
import topologies
from fabric import RoutingError


@pytest.fixture(scope="module")
def lone():
    f = topologies.build("nvl72")
    g = f.without(links=[("chip0", f"sw{p}") for p in range(18)])
    assert set(g.failures.cut_off) == {"chip0"} and g.n_endpoints == 72
    return f, g


def test_the_default_leaves_out_the_chip_cut_off_alone(lone):
    _, g = lone
    step, tried = analysis.best_decode_layout("kimi-k2", g, batch=1, context=4096)
    assert [t for t, _ in tried] == ["tp=1,dp=71,ep=71"]     # 71: the powers of two: tp=1
    same = analysis.decode_step("kimi-k2", g, batch=1, context=4096, layout="tp=1,dp=71,ep=71")
    assert step.time == same.time


def test_the_default_equals_the_fabric_without_that_chip_as_a_failed_node(lone):
    """The chips used are the same 71 either way: chip0 as a failed node leaves f.endpoints."""
    f, g = lone
    a, _ = analysis.best_decode_layout("kimi-k2", g, batch=1, context=4096)
    b, _ = analysis.best_decode_layout("kimi-k2", f.without(chips=["chip0"]), batch=1,
                                       context=4096)
    assert str(a.layout) == str(b.layout)
    assert a.time == pytest.approx(b.time, rel=1e-9)


def test_an_ep_given_that_needs_the_cut_off_chip_is_still_refused_by_name(lone):
    _, g = lone
    with pytest.raises(RoutingError, match="chip0 is cut off from every other chip"):
        analysis.best_decode_layout("kimi-k2", g, batch=1, context=4096, ep=72)


def test_every_chip_cut_off_has_no_default_layout():
    g = topologies.build("switch:3,chip=gb200").without(links=[("chip0", "sw0"),
                                                               ("chip1", "sw0")])
    assert len(g.failures.cut_off) == 3          # chip2 too: alone with the switch
    with pytest.raises(ValueError, match="every chip is cut off from every other chip"):
        analysis.best_decode_layout("kimi-k2", g, batch=1, context=4096)
