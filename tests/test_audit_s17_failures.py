"""Audit (session 17): a failure named twice in one call is refused as in two calls.

``without`` documents that "a link, lane or node named twice" is refused with "it has
already failed", and two calls refuse both overlaps: a lane of a link that failed, a link
of a chip that failed. One call took both silently: ``without(links=[l], lanes=[l])``
dropped the lane, ``without(chips=[c], links=[a link of c])`` dropped the link (a failed
node's links fail with it). Both are now the same NodeError, marked "(named twice)".
"""


import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import topologies
from fabric import NodeError

SETTINGS = settings(max_examples=30, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


@pytest.fixture(scope="module")
def bundled():
    return topologies.build("torus:4x4,links=2")


def test_a_link_and_a_lane_of_it_in_one_call_are_refused_as_in_two(bundled):
    with pytest.raises(NodeError, match=r"a lane of link \('chip0', 'chip1'\): it has already "
                                        r"failed$"):
        bundled.without(links=["chip0-chip1"]).without(lanes=["chip0-chip1"])
    for lane in ("chip0-chip1", "chip1-chip0", (1, 0)):
        with pytest.raises(NodeError, match=r"a lane of link \('chip\d', 'chip\d'\): it has "
                                            r"already failed \(named twice"):
            bundled.without(links=["chip0-chip1"], lanes=[lane])
    # every lane of it too (the lanes alone fail it: allowed, tests/test_audit_s7_failures.py)
    with pytest.raises(NodeError, match=r"named twice"):
        bundled.without(links=["chip0-chip1"], lanes=["chip0-chip1"] * 2)
    # a lane of another link is no overlap
    g = bundled.without(links=["chip0-chip1"], lanes=["chip0-chip4"])
    assert g.failures.links == (("chip0", "chip1"),)
    assert g.failures.lanes == ((("chip0", "chip4"), 1),)


def test_a_chip_and_a_link_of_it_in_one_call_are_refused_as_in_two():
    f = topologies.build("torus:4x4")
    with pytest.raises(NodeError, match=r"link \('chip5', 'chip6'\): chip5 has already "
                                        r"failed$"):
        f.without(chips=["chip5"]).without(links=["chip5-chip6"])
    for link in ("chip5-chip6", "chip6-chip5", (6, 5), ("chip6", "chip5")):
        with pytest.raises(NodeError, match=r"link \('chip\d', 'chip\d'\): chip5 has already "
                                            r"failed \(named twice"):
            f.without(chips=["chip5"], links=[link])
    with pytest.raises(NodeError, match=r"chip5 has already failed \(named twice"):
        f.without(chips=[5], links=["chip0-chip1", "chip5-chip6"])
    # a link between two other chips is no overlap
    g = f.without(chips=["chip5"], links=["chip0-chip1"])
    assert g.failures.links == (("chip0", "chip1"),) and g.failures.chips == ("chip5",)


def test_a_switch_and_a_lane_of_its_link_in_one_call_are_refused():
    f = topologies.build("switch:4,planes=2,links=2")
    with pytest.raises(NodeError, match=r"lane of link .*sw0.*: sw0 has already failed$"):
        f.without(chips=["sw0"]).without(lanes=["chip1-sw0"])
    with pytest.raises(NodeError, match=r"lane of link .*sw0.*: sw0 has already failed "
                                        r"\(named twice"):
        f.without(chips=["sw0"], lanes=["chip1-sw0"])
    with pytest.raises(NodeError, match=r"link .*sw0.*: sw0 has already failed \(named twice"):
        f.without(chips=["sw0"], links=["chip1-sw0"])


SPECS = ["torus:4x4,links=2", "switch:6,planes=2,links=2", "fattree:k=4",
         "rail:servers=2,gpus=4", "mesh:3x3"]


@given(st.sampled_from(SPECS), st.data())
@SETTINGS
def test_one_call_refuses_exactly_what_two_calls_refuse(spec, data):
    """Brute force over the overlaps: one call with links, lanes and a node is refused as
    "named twice" exactly when one of its links or lanes has an end among its nodes or its
    lanes share a link with its links; the same failures in two calls (nodes or links
    first, then the rest) are then refused with "has already failed" too, and otherwise
    one call and two give the same graph."""
    f = topologies.build(spec)
    edges = sorted(f.graph.edges, key=str)
    links = data.draw(st.lists(st.sampled_from(edges), max_size=2, unique_by=frozenset),
                      label="links")
    bundles = [e for e in edges if f.graph.edges[e].get("lanes", 1) > 1]
    lanes = data.draw(st.lists(st.sampled_from(bundles), max_size=2, unique_by=frozenset),
                      label="lanes") if bundles else []
    nodes = data.draw(st.lists(st.sampled_from(sorted(f.nodes)[1:]), max_size=1,
                               unique=True), label="node")
    dead = set(nodes)
    named = {frozenset(e) for e in links}
    overlap = (any(dead & set(e) for e in links + lanes)
               or any(frozenset(e) in named for e in lanes))
    def two_steps():                         # nodes, then links, then lanes
        g = f.without(chips=nodes) if nodes else f
        g = g.without(links=links) if links else g
        return g.without(lanes=lanes) if lanes else g

    if overlap:
        with pytest.raises(NodeError, match=r"has already failed \(named twice"):
            f.without(links=links, chips=nodes, lanes=lanes)
        with pytest.raises(NodeError, match=r"has already failed$"):
            two_steps()
        return
    one, two = f.without(links=links, chips=nodes, lanes=lanes), two_steps()
    assert sorted(map(frozenset, one.graph.edges)) == sorted(map(frozenset, two.graph.edges))
    assert one.endpoints == two.endpoints
    assert all(one.graph.edges[e] == two.graph.edges[e] for e in one.graph.edges)


_LINK_AND_LANE = [
    (["route", "torus:4x4,links=2", "0", "3", "--fail-link", "chip0-chip1",
      "--fail-lane", "chip1-chip0"],
     "cannot fail a lane of link ('chip1', 'chip0'): it has already failed (named twice"),
    (["cost", "torus:4x4", "--op", "all-reduce", "--size", "1MiB", "--fail-chip", "5",
      "--fail-link", "chip5-chip6"],
     "cannot fail link ('chip5', 'chip6'): chip5 has already failed (named twice"),
]


def test_cli_link_and_lane_or_chip_and_link_is_one_line_exit_2(capsys):
    from analysis._cli import main

    for args, msg in _LINK_AND_LANE:     # in this process (the exit status main returns)
        code = main(args)
        out, err = capsys.readouterr()
        assert code == 2, (args, out, err)
        assert len(err.strip().splitlines()) == 1 and msg in err, err
