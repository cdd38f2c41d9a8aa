"""Audit, session 29 (session 28's item 3): a scalar where a list is due.

A number, None or a 0-d array given where a sequence is due raised Python's "'numpy.int64'
object is not iterable", naming no parameter; a string was read letter by letter
(route_many(f, "01", "23") routed ranks 0 -> 2 and 1 -> 3); a generator was read twice
where a list is read once (access_latencies missed a chip named twice, region_findings
found no overlap). Now one check, fabric._units.sequence_of (items_of where one value may
stand for all), names the parameter at every such entry point of the fabric and topologies
packages.
"""

import networkx as nx
import numpy as np
import pytest

import fabric
import topologies
from fabric import AddressPlan, Fabric, GraphError, NodeError, Region, SpecError

F = topologies.build("torus:2x2,chip=h100")
SCALARS = [3, np.int64(3), 1.5, None, np.array(3)]


def _calls():
    node = "node names or ranks"
    pairs = "links, each a pair"
    return [
        ("route_many src", lambda v: fabric.route_many(F, v, [0]), f"src must be a sequence of {node}"),
        ("route_many dst", lambda v: fabric.route_many(F, [0], v), f"dst must be a sequence of {node}"),
        ("without links", lambda v: F.without(links=v), f"links must be a sequence of {pairs}"),
        ("without lanes", lambda v: F.without(lanes=v), f"lanes must be a sequence of {pairs}"),
        ("access_latencies", lambda v: fabric.access_latencies(F, chips=v),
         "chips must be a sequence of chip names or ranks"),
        ("AddressMap", lambda v: fabric.AddressMap(v), "regions must be a sequence of Region"),
        ("region_findings", lambda v: fabric.region_findings(v),
         "regions must be a sequence of Region"),
        ("AddressPlan regions", lambda v: AddressPlan(regions=v),
         "AddressPlan regions must be a sequence of Region"),
        ("AddressPlan windows", lambda v: AddressPlan(windows=v),
         "AddressPlan windows must be a sequence of Window"),
        ("AddressPlan interleave", lambda v: AddressPlan(interleave=v),
         "AddressPlan interleave must be a sequence of Region"),
        ("AddressPlan chips", lambda v: AddressPlan(chips=v),
         "AddressPlan chips must be a sequence of node names"),
    ]


@pytest.mark.parametrize("value", SCALARS, ids=repr)
@pytest.mark.parametrize("label,call,match", _calls(), ids=[c[0] for c in _calls()])
def test_a_scalar_where_a_sequence_is_due_names_the_parameter(label, call, match, value):
    if value is None and label in ("AddressPlan chips", "access_latencies"):
        return                                      # None: the fabric's chips (the default)
    with pytest.raises(TypeError, match=match):
        call(value)


def test_chips_of_without_may_be_one_chip_given_bare_also_as_a_numpy_integer():
    one = F.without(chips=[3])
    assert F.without(chips=np.int64(3)).failures == one.failures == F.without(chips=3).failures
    with pytest.raises(TypeError, match="chips must be a sequence of node names or ranks, "
                       "got 1.5"):
        F.without(chips=1.5)


def test_a_string_is_not_read_letter_by_letter():
    # before: ranks 0 -> 2 and 1 -> 3, silently
    with pytest.raises(TypeError, match="src must be a sequence of node names or ranks, "
                       "got '01'"):
        fabric.route_many(F, "01", "23")
    with pytest.raises(TypeError, match="chips must be a sequence of chip names or ranks"):
        fabric.access_latencies(F, chips="chip0")


def test_a_generator_is_read_once_as_its_list():
    # before: access_latencies zipped an exhausted generator (chip0 named twice was timed),
    # region_findings found no overlap (its overlap pass saw nothing)
    with pytest.raises(NodeError, match="chips lists 'chip0' twice"):
        fabric.access_latencies(F, chips=iter(["chip0", "chip0"]))
    a = fabric.access_latencies(F, chips=iter(["chip0", "chip3"]))
    b = fabric.access_latencies(F, chips=["chip0", "chip3"])
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    regions = [Region(0, 4096, "chip0"), Region(0, 4096, "chip1")]
    assert [f.code for f in fabric.region_findings(iter(regions))] == ["overlap"]
    assert fabric.region_findings(iter(regions)) == fabric.region_findings(regions)
    h, t = fabric.route_many(F, iter([0, 1]), (x for x in [3, 2]))
    assert [h.tolist(), t.tolist()] == [x.tolist() for x in fabric.route_many(F, [0, 1], [3, 2])]


def test_next_hops_refuses_a_fractional_node_index():
    # before: [1.5] was cast to node 1 (np.asarray(..., dtype=int64))
    with pytest.raises(TypeError, match="nodes must be node indices"):
        F.router.next_hops([1.5], [0])
    with pytest.raises(TypeError, match="targets must be node indices"):
        F.router.next_hops([1], np.array([0.9]))
    assert F.router.next_hops(1, 0) == F.router.next_hops([1], [0])


@pytest.mark.parametrize("build", [topologies.torus, topologies.mesh, topologies.hypermesh])
@pytest.mark.parametrize("shape", [1.5, None, np.float64(2), "4x4"], ids=repr)
def test_a_bare_shape_is_one_dimension_its_check_names(build, shape):
    # a shape of the wrong kind is a TypeError, spec text not a numeral a SpecError (s31)
    with pytest.raises(SpecError if shape == "4x4" else TypeError,
                       match="shape must be an integer >= 1"):
        build(shape)


@pytest.mark.parametrize("links", [1.5, None, np.float64(2)], ids=repr)
def test_a_bare_per_dimension_value_is_checked_once_by_its_own_rule(links):
    # a count of the wrong kind is a TypeError (session 31)
    with pytest.raises(TypeError, match="links must be an integer >= 1"):
        topologies.torus((2, 2), links=links)
    with pytest.raises(TypeError, match="links must be an integer >= 1"):
        topologies.switched(4, planes=2, links=links)


def test_host_domains_must_be_a_mapping_of_sequences():
    g = nx.Graph(F.graph)
    with pytest.raises(GraphError, match="domains must be a mapping of host domain name"):
        Fabric.from_graph(g, domains=[("h", F.endpoints)])
    with pytest.raises(GraphError, match="host domain 'h' must hold a sequence of chips, got 3"):
        Fabric.from_graph(g, domains={"h": 3})
    assert Fabric.from_graph(g, domains={"h": iter(F.endpoints)}).domains["h"] == F.endpoints


def test_a_grid_shape_given_as_text_is_not_read_digit_by_digit():
    # before: "each value of shape must be an integer >= 1, got '4'" for the shape '44'
    # a wrong kind: a TypeError since session 36 (was a SpecError)
    with pytest.raises(TypeError, match="shape must be an integer or a sequence of integers, "
                       r"got '44' \(a str\)"):
        fabric.Grid("44")
    assert fabric.Grid(iter([2, 2])).shape == (2, 2)
