"""Audit (session 7): failing what has already failed is an error that says so.

A link, lane or chip named twice in one call, or failed again on a degraded copy,
used to be either quietly dropped or refused as "there is no such link" (a link that
exists in the rack, and failed). Each is now a NodeError naming the element and
saying "it has already failed"; the CLI prints it as one line and exits 2.
"""

import types

import pytest
from degrade import apart
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import topologies
from fabric import NodeError

SETTINGS = settings(max_examples=40, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


@pytest.fixture(scope="module")
def torus():
    return topologies.build("torus:4x4")


@pytest.fixture(scope="module")
def bundled():
    return topologies.build("torus:4x4,links=2")


def test_a_failed_link_failed_again_says_it_has_already_failed(torus):
    g = torus.without(links=["chip0-chip1"])
    for again in ("chip0-chip1", "chip1-chip0", ("chip1", "chip0"), (0, 1)):
        with pytest.raises(NodeError, match=r"cannot fail link .*: it has already failed$"):
            g.without(links=[again])
    with pytest.raises(NodeError, match=r"a lane of link \('chip0', 'chip1'\): it has already"):
        g.without(lanes=["chip0-chip1"])
    # a link that never existed is still "no such link", on the degraded copy too
    with pytest.raises(NodeError, match="there is no such link"):
        g.without(links=["chip0-chip5"])


def test_a_failed_chip_failed_again_or_its_link_says_so(torus):
    g = torus.without(chips=["chip5"])
    for again in ("chip5", 5, "rank:5"):
        with pytest.raises(NodeError, match=r"cannot fail chip5: it has already failed$"):
            g.without(chips=[again])
    with pytest.raises(NodeError, match=r"link \('chip5', 'chip6'\): chip5 has already failed"):
        g.without(links=["chip5-chip6"])
    with pytest.raises(NodeError, match=r"lane of link \(6, 5\): chip5 has already failed"):
        g.without(lanes=[(6, 5)])
    # a switch too
    s = topologies.build("switch:4").without(chips=["sw0"])
    with pytest.raises(NodeError, match="cannot fail sw0: it has already failed"):
        s.without(chips=["sw0"])


def test_a_failure_named_twice_in_one_call_is_refused(torus):
    with pytest.raises(NodeError, match=r"link \('chip1', 'chip0'\): it has already failed "
                                        r"\(named twice\)"):
        torus.without(links=["chip0-chip1", "chip1-chip0"])
    with pytest.raises(NodeError, match=r"chip5: it has already failed \(named twice\)"):
        torus.without(chips=["chip5", 5])


def test_lanes_beyond_what_a_bundle_has_left_are_refused(bundled):
    with pytest.raises(NodeError, match=r"3 lanes of link \('chip0', 'chip1'\): it has only 2 "
                                        r"lanes left"):
        bundled.without(lanes=["chip0-chip1"] * 3)
    g = bundled.without(lanes=["chip0-chip1"])
    with pytest.raises(NodeError, match="it has only 1 lane left"):
        g.without(lanes=["chip1-chip0"] * 2)
    # the last lane still fails the link, in one call or two
    assert bundled.without(lanes=["chip0-chip1"] * 2).failures.links == (("chip0", "chip1"),)
    h = g.without(lanes=["chip0-chip1"])
    assert h.failures.links == (("chip0", "chip1"),) and h.failures.lanes == ()
    assert not h.graph.has_edge("chip0", "chip1")


def test_failures_lanes_has_one_live_entry_per_bundle(bundled):
    """Degraded twice, ``failures.lanes`` listed a dead bundle as still carrying traffic."""
    g = bundled.without(lanes=["chip0-chip1"])
    assert g.without(links=["chip0-chip1"]).failures.lanes == ()
    assert g.without(chips=["chip1"]).failures.lanes == ()
    big = topologies.build("torus:4x4,links=4")
    k = big.without(lanes=["chip0-chip1"]).without(lanes=["chip1-chip0"])
    assert k.failures.lanes == ((("chip0", "chip1"), 2),)
    assert k.graph.edges["chip0", "chip1"]["lanes"] == 2


def _cli(capsys, *args):
    """The CLI run in this process (``analysis._cli.main``, what ``python -m analysis._cli``
    exits with): its status and what it printed, as ``subprocess.run`` gives them (a run
    in a fresh interpreter costs ~0.9 s of imports; tests/test_audit_cli.py runs the real
    entry point)."""
    from analysis._cli import main

    capsys.readouterr()
    code = main(list(args))
    out, err = capsys.readouterr()
    return types.SimpleNamespace(returncode=code, stdout=out, stderr=err)


_NAMED_TWICE = [
    (["cost", "torus:4x4", "--op", "all-reduce", "--size", "1MiB",
      "--fail-link", "chip0-chip1", "--fail-link", "chip1-chip0"],
     "cannot fail link ('chip1', 'chip0'): it has already failed (named twice)"),
    (["route", "torus:4x4", "0", "3", "--fail-chip", "5", "--fail-chip", "chip5"],
     "cannot fail chip5: it has already failed (named twice)"),
    (["metrics", "torus:4x4,links=2", "--fail-lane", "chip0-chip1", "--fail-lane",
      "chip0-chip1", "--fail-lane", "chip0-chip1"], "it has only 2 lanes left"),
]


def test_cli_failure_named_twice_is_one_line_exit_2(capsys):
    runs = [_cli(capsys, *args) for args, _ in _NAMED_TWICE]
    for out, (args, msg) in zip(runs, _NAMED_TWICE, strict=True):
        assert out.returncode == 2, (args, out.stderr)
        assert len(out.stderr.strip().splitlines()) == 1 and msg in out.stderr, args
        assert "Traceback" not in out.stderr


SPECS = ["torus:4x4,links=2", "switch:6,planes=2,links=2", "fattree:k=4",
         "rail:servers=2,gpus=4"]


@given(st.sampled_from(SPECS), st.data())
@SETTINGS
def test_two_steps_equal_one_and_every_repeat_is_refused(spec, data):
    """Brute force: degrading in two calls gives the graph of one call with the union,
    and failing again anything of the first call is refused with 'already failed'."""
    f = topologies.build(spec)
    edges = sorted(f.graph.edges, key=str)
    links = data.draw(st.lists(st.sampled_from(edges), max_size=3, unique_by=frozenset),
                      label="links")
    rest = [e for e in edges if frozenset(e) not in {frozenset(x) for x in links}]
    more = data.draw(st.lists(st.sampled_from(rest), max_size=2, unique_by=frozenset),
                     label="more links")
    chips = data.draw(st.lists(st.sampled_from(f.endpoints[1:]), max_size=1), label="chip")
    links = apart(links, chips)[0]     # a link of a failed chip is named twice in one call
    try:
        g = f.without(links=links, chips=chips)
    except NodeError:
        return                                      # e.g. every chip failed: not this test
    # a link of the second call whose end died with a chip of the first is refused
    dead = set(chips)
    more_ok = [e for e in more if not dead & set(e)]
    for e in more:
        if dead & set(e):
            with pytest.raises(NodeError, match="has already failed"):
                g.without(links=[e])
    one = f.without(links=links + more_ok, chips=chips)
    two = g.without(links=more_ok)
    assert sorted(map(frozenset, one.graph.edges)) == sorted(map(frozenset, two.graph.edges))
    assert one.endpoints == two.endpoints and one.ranks == two.ranks
    assert {frozenset(e) for e in one.failures.links} == {frozenset(e) for e in
                                                          two.failures.links}
    for e in links:
        if dead & set(e):
            continue
        with pytest.raises(NodeError, match="it has already failed"):
            two.without(links=[e[::-1]])
        with pytest.raises(NodeError, match="it has already failed"):
            two.without(lanes=[e])
    for c in chips:
        with pytest.raises(NodeError, match=f"cannot fail {c}: it has already failed"):
            two.without(chips=[f.rank_of[c]])


def test_a_pair_the_failures_disconnect_says_what_failed(capsys):
    """cluster-128 without chip8's NIC link: chip8 still reaches its server (not cut off),
    but no other server; the error said only 'no route from chip7 to chip8'. (Session 21:
    under NCCL the all-reduce now runs, chip8 inside every channel's chain as in NCCL's
    graphs; the ideal runtime's flat schedules still send from chip4 to chip8.)"""
    out = _cli(capsys, "cost", "cluster-128", "--op", "all-reduce", "--size", "1MiB",
               "--fail-link", "chip8-nic8", "--runtime", "ideal")
    assert out.returncode == 2 and len(out.stderr.strip().splitlines()) == 1
    assert ("no route from 'chip4' to 'chip8'; the failures leave the routing policy no path "
            "between them: link chip8-nic8 failed") in out.stderr


def test_serve_json_records_failed_lanes_and_switches(capsys):
    import json
    node = "switch:8,planes=2,links=9,tech=nvlink5,chip=b200"
    base = ["serve", node, "--model", "deepseek-r1-nvfp4", "--isl", "1024", "--osl", "256",
            "--batches", "1", "--no-speculative", "--quiet", "--json"]
    lanes = _cli(capsys, *base, "--fail-lane", "chip1-sw1", "--fail-lane", "chip1-sw1")
    out = _cli(capsys, *base, "--fail-chip", "sw1", "--fail-chip", "chip3")
    assert lanes.returncode == 0, lanes.stderr
    d = json.loads(lanes.stdout)
    assert d["failed_lanes"] == [[["chip1", "sw1"], 2]] and d["failed_links"] == []
    assert out.returncode == 0, out.stderr
    d = json.loads(out.stdout)
    assert d["failed_nodes"] == ["sw1"] and d["failed_chips"] == [3]


def test_check_says_why_a_window_is_unreachable():
    """fabric.check on sd200-ultra with every link of chip8 failed: each other host's window
    onto chip8 is 'unreachable'; the finding now also says chip8 is cut off and by what."""
    import fabric
    f = topologies.build("sd200-ultra")
    g = f.without(links=[("chip8", n) for n in sorted(f.graph.neighbors("chip8"))])
    found = [x for x in fabric.check(g) if x.code == "unreachable" and x.severity == "error"]
    assert len(found) == 15                      # every host but chip8's own (host1)
    # chip8's own host is split and chip8's windows fail: warnings (tests/test_check.py)
    assert [x.where for x in fabric.check(g) if x.severity == "warning"] == [
        "host1", "host1 window 'chip0'"]
    assert all("no route from any chip of" in x.message and "'chip8'; chip8 is cut off from "
               "every other chip: link chip8-chip0" in x.message for x in found)
