"""Session 6 audit: degraded fabrics as first-class inputs.

- A chip the failures cut off from every other chip (its only switch link failed, or
  every switch it reaches lost its other links) stays a live chip whose pairs raise
  ``RoutingError`` "no route from 'a' to 'b'", now followed by the cause naming the
  chip and the failed link or node (``Failures.cut_off``), through the API and the CLI.
- ``bill_of_materials`` of a degraded copy is the bill of the fabric as built.

Hypothesis runs few examples; the file takes a few seconds.
"""

import io
from contextlib import redirect_stderr, redirect_stdout

import networkx as nx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import analysis
import topologies
from analysis._cli import main
from fabric import FabricError, RoutingError

SPECS = ("switch:4", "switch:4,planes=2", "torus:3x3", "mesh:3x2", "hypermesh:3x2",
         "hypermesh:2x3,connect=switch", "fattree:k=4", "leafspine:k=4", "dragonfly:h=1",
         "rail:servers=2,gpus=2", "mesh:3", "dgx-h100")
_BUILT = {}


def _build(spec):
    if spec not in _BUILT:
        _BUILT[spec] = topologies.build(spec)
    return _BUILT[spec]


def _cli(argv):
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            rc = main(argv)
        except SystemExit as e:
            rc = e.code
    return rc, out.getvalue(), err.getvalue()


def _alone(g):
    """Brute force: live chips whose component of the degraded graph holds no other."""
    if g.n_endpoints < 2:
        return set()
    live = set(g.endpoints)
    out = set()
    for comp in nx.connected_components(g.graph):
        chips = comp & live
        if len(chips) == 1:
            out |= chips
    return out


@st.composite
def degraded(draw):
    f = _build(draw(st.sampled_from(SPECS)))
    edges = sorted(f.graph.edges)
    links = draw(st.lists(st.sampled_from(edges), max_size=4, unique=True))
    nodes = draw(st.lists(st.sampled_from(sorted(f.nodes, key=str)), max_size=2, unique=True))
    if set(f.endpoints) <= set(nodes):
        nodes = nodes[:-1]
    return f, links, nodes


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(degraded(), st.booleans())
def test_cut_off_chips_are_the_brute_force_lone_chips_and_errors_name_them(case, twice):
    f, links, nodes = case
    if twice and links:             # degraded in two steps: the record carries over
        g = f.without(links=links[:1]).without(links=links[1:], chips=nodes)
    else:
        g = f.without(links=links, chips=nodes)
    assert set(g.failures.cut_off) == _alone(g)
    dead = {frozenset(e) for e in g.failures.links} | {frozenset([n]) for n in g.failures.nodes}
    for chip, why in g.failures.cut_off.items():
        assert why, chip
        for w in why:                # every cause is one of the failures
            kind, _, name = w.partition(" ")
            key = frozenset(name.split("-")) if kind == "link" else frozenset([name])
            assert key in dead, (chip, w)
        other = next(c for c in g.endpoints if c != chip)
        with pytest.raises(RoutingError, match=f"no route from '{other}' to '{chip}'; .*"
                                               f"{chip} is cut off from every other chip: "):
            g.route(other, chip)
    # the intact fabric knows nothing cut off, and failing the lone chips leaves none
    assert not f.failures.cut_off and f.intact is None and g.intact is f
    if g.failures.cut_off and len(g.failures.cut_off) < g.n_endpoints:
        h = g.without(chips=list(g.failures.cut_off))
        assert not set(h.failures.cut_off) & set(g.failures.cut_off)


def test_a_chip_whose_only_switch_link_failed():
    g = _build("switch:4").without(links=["chip0-sw0"])
    assert dict(g.failures.cut_off) == {"chip0": ("link chip0-sw0",)}
    cause = "chip0 is cut off from every other chip: link chip0-sw0 failed"
    for call in (lambda: g.route("chip1", "chip0"), lambda: analysis.metrics(g),
                 lambda: analysis.cost(g, "all-reduce", 2**20, runtime="ideal"),
                 lambda: analysis.throughput(g, analysis.traffic(g, "all-to-all", 1.0))):
        with pytest.raises(FabricError, match=cause):
            call()
    # the rest still answers, and failing chip0 too prices the other three
    assert analysis.cost(g, "all-reduce", 2**20, ranks=[1, 2, 3]).time > 0
    assert analysis.metrics(g.without(chips=["chip0"])).endpoints == 3


@pytest.mark.parametrize("argv, cause", [
    (["route", "switch:4", "1", "0", "--fail-link", "chip0-sw0"],
     "chip0 is cut off from every other chip: link chip0-sw0 failed"),
    (["latency", "mesh:3", "--fail-link", "chip1-chip2"],
     "chip2 is cut off from every other chip: link chip1-chip2 failed"),
    (["metrics", "mesh:3", "--fail-chip", "chip1"],
     "chip0 is cut off from every other chip: node chip1 failed"),
    (["throughput", "switch:4", "--fail-link", "chip0-sw0"],
     "chip0 is cut off from every other chip: link chip0-sw0 failed"),
    (["route", "cluster-128", "0", "9", "--fail-link", "nic0-rail0", "--fail-link",
      "chip0-nvs0"],
     "chip0 is cut off from every other chip: link nic0-rail0 and link chip0-nvs0 failed"),
])
def test_cli_names_the_cut_off_chip_and_its_failed_link(argv, cause):
    rc, _, err = _cli(argv)
    assert rc == 2 and err.count("\n") == 1 and cause in err, err


def test_a_partition_into_larger_parts_names_no_cut_off_chip():
    f = topologies.build("rail:servers=2,gpus=4,chip=h100")
    g = f.without(links=[(f"nic{i}", f"rail{i}") for i in range(4)])
    assert not g.failures.cut_off
    with pytest.raises(RoutingError, match=r"no route from 'chip\d' to 'chip\d'$"):
        g.route("chip0", "chip4")


@settings(max_examples=8, deadline=None)
@given(st.sampled_from(["nvl72", "switch:8,planes=2,links=4", "cluster-128", "torus:4x4"]),
       st.data())
def test_bill_of_materials_of_a_degraded_copy_is_the_bill_as_built(spec, data):
    f = topologies.build(spec)
    links = data.draw(st.lists(st.sampled_from(sorted(f.graph.edges)), max_size=2,
                               unique=True))
    chips = data.draw(st.lists(st.sampled_from(sorted(f.nodes, key=str)), max_size=2,
                               unique=True))
    if set(f.endpoints) <= set(chips):
        chips = chips[:-1]
    g = f.without(links=links, chips=chips)
    a, b = analysis.bill_of_materials(f), analysis.bill_of_materials(g.without(chips=[]))
    assert a == b


def test_a_fabric_marked_degraded_by_hand_is_still_refused():
    from fabric import Failures, SpecError

    f = topologies.build("switch:4")
    with pytest.raises(SpecError, match="price the intact fabric"):
        analysis.bill_of_materials(f.replace(failures=Failures(links=(("chip0", "sw0"),))))
