"""Audit session 32: ``Fabric.replace(domains=...)`` checks its domains as from_graph does.

``Fabric.from_graph`` refused host domains naming a node the graph lacks, or a chip in two
domains; ``fabric.replace(domains={"h": ["nope"]})`` took both (``host_of`` then mapped 'nope'
to 'h', every real chip was homeless, and check() said only that). The checks now sit in the
one check every Fabric runs (``_check_domains``, given the graph). Likewise a Fabric's name
(a str), params (a mapping) and assumptions (Parameters), which only the builders and
from_graph had set right.
"""
import pytest

import topologies
from fabric import GraphError

_F = topologies.build("torus:2x2,chip=h100")


@pytest.mark.parametrize("domains, words", [
    ({"h": ["nope"]}, r"domains name nodes not in the graph: \['nope'\]"),
    ({"a": ["chip0", "chip1"], "b": ["chip1"]}, "a chip is listed in more than one host domain")])
def test_replaced_domains_are_checked_against_the_graph(domains, words):
    with pytest.raises(GraphError, match=words):
        _F.replace(domains=domains)


def test_replaced_domains_that_hold_are_kept():
    g = _F.replace(domains={"a": ["chip0", "chip1"], "b": ["chip2", "chip3"]})
    assert g.host_of == {"chip0": "a", "chip1": "a", "chip2": "b", "chip3": "b"}


@pytest.mark.parametrize("change, words", [
    ({"name": None}, "name must be a str, got None"),
    ({"params": None}, "params must be a mapping of labels, got None"),
    ({"assumptions": [1]}, r"assumptions must be a sequence of fabric.Parameter, got \[1\]"),
    ({"assumptions": 5}, "assumptions must be a sequence of fabric.Parameter, got 5")])
def test_replaced_labels_and_records_are_of_their_kind(change, words):
    # name=None was kept (messages then read "None without 1 link"), params=None failed with
    # "'NoneType' object is not iterable", assumptions=[1] was kept for the report to trip on
    with pytest.raises(TypeError, match=words):
        _F.replace(**change)
    assert _F.replace(assumptions=list(_F.assumptions)).assumptions == _F.assumptions
