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
