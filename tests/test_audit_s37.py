"""Session 37 (audit): one concept in one place, and answers that were silently wrong."""
import re

import pytest

import fabric


def test_a_set_inside_a_sequence_is_shown_sorted():
    """show_value sorted a set's items only when the set was the value shown: a set inside a
    tuple or a list was quoted in its hashes' order, so the same call's message read
    differently from one PYTHONHASHSEED to the next (Determinism)."""
    import topologies
    from fabric._units import show_value
    names = {f"chip{i}" for i in range(1, 8)}
    want = "{" + ", ".join(repr(n) for n in sorted(names)) + "}"
    assert show_value([("a", names)]) == f"[('a', {want})]"
    assert show_value({"k": (names,)}) == f"{{'k': ({want},)}}"
    few = {"chip3", "chip1", "chip9", "chip7", "chip5"}
    with pytest.raises(fabric.NodeError, match=re.escape(
            "cannot fail link ('chip0', {'chip1', 'chip3', 'chip5', 'chip7', 'chip9'})")):
        topologies.build("torus:4x4").without(links=[("chip0", few)])


@pytest.mark.parametrize("make, message", [
    (lambda: fabric.Window("host0", 1.5), "Window local_base must be an int, got 1.5 (a float)"),
    (lambda: fabric.Window("host0", 0, size="4KiB"),
     "Window size must be an int or None, got '4KiB' (a str)"),
    (lambda: fabric.Region(0, 4096, "chip0", granularity=2.5),
     "Region granularity must be an int or None, got 2.5 (a float)"),
], ids=["window-int", "window-optional", "region-optional"])
def test_an_int_field_of_the_wrong_kind_is_refused_by_one_check(make, message):
    """A record's integer field of the wrong kind had three spellings: Window's hand-written
    one ("got local_base=1.5"), Region's and SymmetricHeap's kind_error (an optional field
    read "must be an int" though None passes). Now fabric._units.int_of, text_of's twin."""
    with pytest.raises(TypeError, match=f"^{re.escape(message)}$"):
        make()


def test_the_documented_thinned_bundle_figures():
    """A pin of the figures fabric/_routing.py, without's docstring and the README quote: the
    weighted split is per hop, so a bundle thinned to 1 of 5 lanes drains slower than the
    link failed outright (lead's decision, session 37: the rule kept, its consequence said)."""
    import topologies
    from analysis import link_loads, traffic
    f = topologies.build("dgx-h100")
    e = ("chip0", "sw0")
    us = [round(link_loads(g, traffic(g, "all-to-all", 1e6)).drain_time * 1e6, 1)
          for g in (f, f.without(lanes=[e] * 4), f.without(links=[e]))]
    assert us == [15.6, 77.8, 21.5]
    t, e = topologies.build("torus:4x4,links=4"), ("chip0", "chip1")       # dimension order
    us = [round(link_loads(g, traffic(g, "all-to-all", 1e6)).drain_time * 1e6, 1)
          for g in (t, t.without(lanes=[e] * 3), t.without(links=[e]))]
    assert us == [31.2, 125.0, 62.5]


def _int_named():
    import networkx as nx
    G = nx.path_graph(4)
    nx.set_node_attributes(G, "chip", "kind")
    nx.set_edge_attributes(G, 1e9, "bandwidth")
    nx.set_edge_attributes(G, 1e-7, "latency")
    return fabric.Fabric.from_graph(G)


@pytest.mark.parametrize("make, error, message", [
    (lambda f: f.replace(ranks=(0, 0, 2, 3)), fabric.GraphError,
     r"^ranks must hold each rank 0\.\.3 once .*, got rank 0 twice$"),
    (lambda f: f.replace(ranks=(0, 1, 2, 2.5)), TypeError, r"^ranks\[3\] must be an integer"),
    (lambda f: f.replace(ranks=(0, 1, 2, -5)), fabric.GraphError, r"^ranks\[3\] must be an "),
    (lambda f: f.replace(ranks=(0, 1, 2, 9)), fabric.GraphError, r"got rank 9$"),
    (lambda f: f.replace(ranks={0, 1, 2, 3}), TypeError, r"^ranks must be a sequence of "),
    (lambda f: f.without(chips=[0]).replace(ranks=None), fabric.GraphError,
     (r"^ranks=None numbers the 3 live chips 0\.\.2, but the failed chips keep their ranks "
      r"\(failures\.ranks holds \{0: 0\}\)")),     # (session 38: was 'got rank 0 twice')
    (lambda f: f.replace(endpoints=(3, 2, 1, 0)), fabric.GraphError,
     (r"^invalid fabric graph: node 0 is named by an int, which cofabric reads as rank 0, "
     r"the chip 3 ")),
    (lambda f: fabric.Fabric(f.graph, (1, 0, 2, 3)), fabric.GraphError,
     r"node 0 is named by an int, .* the chip 1 "),
    (lambda f: f.replace(family=5), TypeError, r"^family must be a str, got 5 \(an int\)$"),
    (lambda f: f.replace(intact="x"), TypeError, r"^intact must be a fabric\.Fabric "),
], ids=["twice", "float", "negative", "past", "set", "failed-rank-reused", "replace-int-names",
        "constructor-int-names", "family", "intact"])
def test_a_fabrics_ranks_and_int_names_are_checked_at_every_construction(make, error, message):
    """OLDER-A-19/-16 (session 37's read of sessions 31-36): Fabric read ranks by a bare
    int() (two chips of rank 0, 2.5 truncated, -5 and a set's hash order kept), and the rule
    that a node named by an int is the chip of that rank ran only in from_graph: after
    replace(endpoints=(3, 2, 1, 0)) node(0) was node 3, silently. A degraded fabric given
    ranks=None handed failed chip0's rank 0 to chip1. family and intact were kept unread."""
    f = _int_named()
    with pytest.raises(error, match=message):
        make(f)


def test_a_tuple_of_link_texts_is_a_sequence_of_links():
    """OLDER-A-4: without(links=('chip0-chip1', 'chip1-chip2')), a sequence as the docstring
    allows, was read as ONE link between nodes named 'chip0-chip1' and 'chip1-chip2'
    ("no node called 'chip0-chip1'"); the list gave two links. lanes= alike."""
    import topologies
    f = topologies.build("torus:4x4,links=2")
    two = (("chip0", "chip1"), ("chip1", "chip2"))
    assert f.without(links=("chip0-chip1", "chip1-chip2")).failures.links == two
    assert f.without(lanes=("chip0-chip1", "chip1-chip2")).failures.lanes == tuple(
        (e, 1) for e in two)
    assert f.without(links=("chip0", "chip1")).failures.links == two[:1]     # a pair stays one


def test_a_window_onto_an_owner_takes_no_shared_interleave_set():
    """A window target naming an owner took the owner's only region, an interleave set too: a
    window onto 'chip3' whose only region was the set 'pool' over chip3 and chip4 translated
    every other 4 KiB line to chip4, and check() said nothing (lead's answer A, 22:49: an
    owner's name stands for its own region). global_address still reads chip3's share."""
    import topologies
    from fabric import AddressPlan, Region, Window
    pool = Region(1 << 40, 512 * 2**20, ("chip3", "chip4"), kind="hbm", granularity=4096,
                  name="pool")
    own = [Region(i << 36, 2**30, f"chip{i}", kind="hbm", name=f"chip{i}.hbm")
           for i in range(16) if i != 3]
    plan = AddressPlan(layout="explicit", regions=own, interleave=[pool],
                       windows=[Window("host0", 1 << 44, 2**21, target="chip3")])
    f = topologies.build("torus:4x4,chip=h100").replace(address_plan=plan)
    (finding,) = fabric.check(f)
    assert finding.code == "dangling-target" and finding.message.endswith(
        "target 'chip3' holds memory only in the interleave set 'pool' (shared with 'chip4'), "
        "no region of its own; name one of ['pool']")
    assert f.address_map.global_address("chip3", 4096) == (1 << 40) + 8192   # its own line


@pytest.mark.parametrize("change, error, message", [
    (lambda g, fr: g.replace(failures=fr({"chip3": -1})), fabric.SpecError,
     r"^ranks\['chip3'\] must be an integer >= 0, got ranks\['chip3'\]=-1$"),
    (lambda g, fr: g.replace(failures=fr({"chip3": "x"})), TypeError,
     r"^ranks\['chip3'\] must be an integer >= 0, got ranks\['chip3'\]='x' \(a str\)$"),
    (lambda g, fr: g.replace(failures=fr({"chip3": 2.5})), TypeError, r"=2\.5 \(a float\)$"),
    (lambda g, fr: g.replace(failures=fr({"chipX": 3})), fabric.GraphError,
     r"^failures\.ranks names 'chipX', no chip of the fabric as built \(torus:4x4\)$"),
    (lambda g, fr: g.replace(failures=fr({"chip4": 3})), fabric.GraphError,
     r"^chip 'chip4' is named twice among the endpoints and the failed chips"),
    (lambda g, fr: g.intact.replace(endpoints=("chip0", "chip0") + g.intact.endpoints[2:]),
     fabric.GraphError, r"^chip 'chip0' is named twice among the endpoints"),
], ids=["negative", "str", "float", "unknown-chip", "live-and-failed", "endpoint-twice"])
def test_failed_ranks_and_repeated_chips_are_refused(change, error, message):
    """The session's whole-diff read (lead's F3/F4): failures.ranks took any value (-1 a bare
    StopIteration, 'x' a bare '<=' error, 2.5 and a chip that never was accepted), and
    replace(endpoints=('chip0', 'chip0', ...)) was accepted (rank 1 lost; cost then a bare
    IndexError), as was a chip both live and failed."""
    import dataclasses

    import topologies
    g = topologies.build("torus:4x4").without(chips=["chip3"])
    with pytest.raises(error, match=message):
        change(g, lambda r: dataclasses.replace(g.failures, ranks=r))
