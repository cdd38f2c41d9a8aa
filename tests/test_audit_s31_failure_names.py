"""Audit session 31: a fabric degraded in several calls is named as one call names it.

``Fabric.without`` named a degraded fabric by the call's own failures appended to the name
it was given, so the same failures in two calls gave "torus:4x4,links=2 without 1 node
without 1 link" where one call gives "... without 1 link and 1 node": equal graphs and
failure records under two names (the name heads every error message, report row and CLI
line about the fabric). Now the name counts everything that failed since the fabric was
built; a name the user gave a degraded fabric is kept, with the new call's failures added.
"""

import pytest
from degrade import built

STEPS = [
    [{"chips": ["chip3"]}, {"links": [("chip0", "chip1")]}],
    [{"links": [("chip0", "chip1")]}, {"lanes": ["chip4-chip5"]}, {"chips": ["chip9"]}],
    [{"lanes": ["chip0-chip1"]}, {"lanes": ["chip0-chip1"]}],     # the last lane: the link
    [{"lanes": ["chip0-chip1"]}, {"links": ["chip0-chip4"], "lanes": ["chip8-chip9"]}],
]


@pytest.mark.parametrize("steps", STEPS)
def test_failures_in_steps_are_named_as_in_one_call(steps):
    f = built("torus:4x4,links=2")
    g = f
    for step in steps:
        g = g.without(**step)
    one = f.without(**{k: [x for s in steps for x in s.get(k, ())]
                       for k in ("links", "chips", "lanes")})
    assert g.failures.links == one.failures.links and g.failures.nodes == one.failures.nodes
    assert g.name == one.name and " without " in g.name and g.name.count(" without ") == 1


def test_a_name_given_to_a_degraded_fabric_is_kept():
    f = built("torus:4x4,links=2")
    g = f.without(chips=["chip3"]).replace(name="rack A").without(links=[("chip0", "chip1")])
    assert g.name == "rack A without 1 link"
