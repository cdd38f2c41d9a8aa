"""Audit session 23: bad input to an access names the problem.

``fabric.access`` from a switch or a NIC raised TranslationError "chip 'sw0' belongs to no host
domain": it called the switch a chip and blamed the address plan. ``access_to`` and
``access_latencies`` already said what the node is; now ``access`` does too.
"""

import pytest

import topologies
from fabric import NodeError, access, access_to


@pytest.mark.parametrize("spec, node, kind", [("hgx-h200", "sw0", "switch"),
                                              ("cluster-128", "nic0", "nic"),
                                              ("cluster-128", "nvs0", "switch")])
def test_an_access_from_a_node_that_is_no_chip_names_its_kind(spec, node, kind):
    f = topologies.build(spec)
    address = f.address_map.regions_of("chip5")[0].base
    for call in (lambda: access(f, node, address), lambda: access_to(f, node, "chip5")):
        with pytest.raises(NodeError, match=rf"'{node}' is a {kind}, not a chip: an access "
                                            "goes from a chip to memory"):
            call()
