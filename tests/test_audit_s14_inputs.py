"""Audit, session 14: hostile input to what changed this session.

- A system file's size or address given as a TOML ``nan`` or ``inf`` float was refused with
  the reason for large floats ("a float is exact only below 2**53"): true of 1e300, not of a
  value that is no number at all. Now: "is not a finite number".
- ``Failures.group_of`` (new this session) answered 0, the connected survivors' group, for a
  chip that has failed; now a NodeError says it failed.
- ``Failures.islands`` after a fabric is degraded twice: the components of the live graph,
  and the causes recorded the first time kept (brute force: networkx).
"""

import itertools

import networkx as nx
import pytest
from degrade import apart, built
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fabric
import topologies
from fabric import FabricError, NodeError

with open("examples/sd200-ultra.toml") as _f:
    _HEAD = _f.read().split("[[windows]]")[0]


@pytest.mark.parametrize("text", [
    "[heap]\nsize = nan\n", "[heap]\nsize = inf\n", "[heap]\nsize = -inf\n",
    '[[windows]]\nhost = "host0"\nlocal_base = nan\n',
    ('[[windows]]\nhost = "host0"\nlocal_base = "0x1000_0000_0000"\ntarget = "chip3"\n'
     'size = inf\n')])
def test_a_non_finite_toml_float_is_refused_as_no_number(text):
    found = [x for x in fabric.check(topologies.read_system(_HEAD + text))
             if x.code == "invalid"]
    assert len(found) == 1, found
    msg = found[0].message
    # an address's float is refused by kind (session 38), a size's nan as no number
    said = "(a float)" if "local_base = nan" in text else "is not a finite number"
    assert said in msg and "2**53" not in msg, msg


def test_a_large_finite_float_still_names_its_lost_bits():
    found = [x for x in fabric.check(topologies.read_system(_HEAD + "[heap]\nsize = 1e300\n"))
             if x.code == "invalid"]
    assert len(found) == 1 and "exact only below 2**53" in found[0].message


def test_group_of_refuses_a_failed_chip():
    g = topologies.build("mesh:4x4").without(chips=["chip2", "chip4", "chip5"])
    assert g.failures.group_of("chip0") == 1 and g.failures.group_of("chip3") == 0
    with pytest.raises(NodeError, match="chip4 has failed"):
        g.failures.group_of("chip4")
    with pytest.raises(NodeError, match="chip2 has failed"):
        fabric._failures.require_joined(g, ["chip3", "chip2"])


SPECS = ("torus:4x4", "mesh:4x4", "torus:2x3x3", "hypermesh:3x3,connect=switch",
         "rail:servers=3,gpus=2", "switch:6,planes=2", "fattree:k=4")


def _groups(g):
    rank = {c: i for i, c in enumerate(g.endpoints)}
    out = [sorted((c for c in comp if c in rank), key=rank.get)
           for comp in nx.connected_components(g.graph)]
    return sorted((c for c in out if c), key=lambda c: (-len(c), rank[c[0]]))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(SPECS), st.data())
def test_islands_after_two_degradations_are_the_components(spec, data):
    f = built(spec)
    g = f
    for _ in range(2):
        edges = sorted(g.graph.edges, key=str)
        links = data.draw(st.lists(st.sampled_from(edges), max_size=4, unique_by=frozenset))
        chips = data.draw(st.lists(st.sampled_from(list(g.endpoints)), max_size=2, unique=True))
        try:
            g = g.without(links=apart(links, chips)[0], chips=chips)
        except FabricError:
            pass
    groups = _groups(g)
    rest = groups[1:] if len(g.endpoints) > 1 else []
    assert [cs for cs, _ in g.failures.islands] == sorted(
        (tuple(c) for c in rest if len(c) > 1), key=lambda c: g.rank_of[c[0]])
    failed = ({f"link {a}-{b}" for a, b in g.failures.links}
              | {f"node {n}" for n in g.failures.nodes})
    for cs, why in g.failures.islands:
        assert why and set(why) <= failed, (cs, why)
    for a, b in itertools.combinations(g.endpoints, 2):
        assert (g.failures.group_of(a) == g.failures.group_of(b)) == nx.has_path(g.graph, a, b)


def test_communicator_channels_refuses_ranks_with_no_path_between_them():
    """analysis.communicator_channels (runtime, session 14) answered (2, 2) for ranks the
    failures split (NCCL's rings join every rank: no such communicator is built)."""
    import analysis
    from fabric import RoutingError
    g = topologies.build("mesh:3x3,chip=h100").without(chips=["chip3", "chip4", "chip5"])
    for ranks in (["chip0", "chip7"], None):
        with pytest.raises(RoutingError, match=r"chip6, chip7 and chip8 are cut off"):
            analysis.communicator_channels(g, ranks=ranks)
    assert analysis.communicator_channels(g, ranks=["chip6", "chip7"]) == \
        analysis.communicator_channels(g, ranks=["chip6", "chip8"])
