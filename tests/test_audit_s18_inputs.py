"""Audit (session 18): hostile input left over from session 17.

Each test failed on main 44942ae.
"""

import pytest

import topologies
from fabric import NodeError


@pytest.fixture(scope="module")
def sd200_without_host1():
    f = topologies.build("sd200-ultra")
    return f.without(chips=[f"chip{i}" for i in range(8, 16)])      # every chip of host1


def test_looking_up_a_failed_host_domain_names_the_failure(sd200_without_host1):
    g = sd200_without_host1
    # was a bare KeyError('host1'); Fabric.translate already said why
    with pytest.raises(NodeError, match="host domain 'host1' has failed: every chip"):
        g.host_domains["host1"]
    with pytest.raises(NodeError, match="host domain 'host1' has failed: every chip"):
        g.host_domains.build("host1")
    with pytest.raises(NodeError, match="no host domain called 'host99'; hosts: host0, host2"):
        g.host_domains["host99"]
    with pytest.raises(NodeError, match="no host domain called 3;"):
        g.host_domains[3]


def test_the_host_domains_mapping_still_behaves_as_a_mapping(sd200_without_host1):
    g = sd200_without_host1
    # a missing key is still a KeyError to code written for a mapping
    with pytest.raises(KeyError):
        g.host_domains["host1"]
    assert g.host_domains.get("host1") is None
    assert g.host_domains.get("host1", 7) == 7
    assert "host1" not in g.host_domains
    assert "host1" not in g.host_domains.keys()
    try:
        g.host_domains["host1"]
    except KeyError as e:                            # the message reads as text, not a repr
        assert str(e).startswith("sd200-ultra without 8 nodes: host domain 'host1'"), str(e)
    assert g.host_domains["host0"].translate(0x1000) == g.translate("host0", 0x1000)
