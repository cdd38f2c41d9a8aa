"""Audit, session 25: the brute-force route reference, fast enough for dragonfly:h=2.

tests/routing_brute.py's ``brute_paths`` enumerated every simple path of up to 8 hops
(networkx ``all_simple_paths``) and kept the shortest the policy allows: 0.46 s a pair on
dragonfly:h=2 (72 chips), too slow for session 24's degraded-cost property there. It now
searches breadth first over (node, policy state) pairs (up/down: whether a down step was
taken; minimal: the global hops taken) and walks every shortest path back through the
layers (~1 ms a pair). This checks the search against the enumeration, kept as
``simple_paths_reference``, on random degraded fabrics of every switched policy, then
runs session 24's degraded-cost property on dragonfly:h=2.
"""


import pytest
from degrade import built, degrade
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from routing_brute import brute_paths, draw_pair, simple_paths_reference
from test_audit_s24_cost import assert_cost_is_brute_force, cases

SPECS = ("dragonfly:h=1,chip=h100", "fattree:k=4,chip=h100", "leafspine:k=4,chip=h100",
         "rail:servers=2,gpus=4,chip=h100", "switch:6,planes=2,chip=h100")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data(), st.sampled_from(SPECS))
def test_the_layered_search_finds_the_enumerations_paths(data, spec):
    g = data.draw(degrade(built(spec), max_links=3, max_chips=1))
    pair = draw_pair(g, data)
    if pair is None:
        return
    # either end may be a switch too (brute_paths takes any node)
    s, t = pair
    if data.draw(st.booleans()):
        s = data.draw(st.sampled_from([n for n in g.graph if n != t]))
    policy = g.router.policy                    # up-down or minimal: the searched policies
    assert brute_paths(g, s, t, policy) == simple_paths_reference(g, s, t, policy)


@pytest.mark.parametrize("pair", [("chip0", "chip1"), ("chip0", "chip71"), ("chip5", "chip40")])
def test_the_layered_search_on_dragonfly_h2(pair):
    f = built("dragonfly:h=2,chip=h100")
    # a global link of router r0.0 failed: minimal paths detour or vanish
    g = f.without(links=[next(e for e in f.graph.edges("r0.0") if e[1].startswith("r")
                              and not e[1].startswith("r0."))])
    for x in (f, g):
        assert brute_paths(x, *pair, "minimal") == simple_paths_reference(x, *pair, "minimal")


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases(specs=("dragonfly:h=2,chip=h100",), max_links=4), st.sampled_from([64, 65536, 2**24]))
def test_ideal_cost_on_a_degraded_dragonfly_h2_is_its_schedule_on_brute_force_routes(case, n):
    # session 24's property (test_audit_s24_cost), which the enumeration made too slow here
    assert_cost_is_brute_force(case, n)
