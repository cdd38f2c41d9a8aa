"""Audit, session 30 (task 4, hostile plans): ``Fabric.address_plan`` must be an AddressPlan or
None. Anything else was taken: an empty or zero value (``{}``, ``0``, ``""``, ``[]``) was read
as the default plan by the ``address_plan or AddressPlan()`` reads, silently; any other value
failed deep inside the address map with Python's "'dict' object has no attribute 'layout'".
"""

import pytest

import topologies
from fabric import AddressPlan


@pytest.mark.parametrize("plan", [{}, 0, "", [], 3, {"hbm_bytes": 1}])
def test_a_plan_that_is_no_address_plan_is_refused_by_name(plan):
    f = topologies.build("torus:2x2,chip=h100")
    with pytest.raises(TypeError, match=r"address_plan must be an AddressPlan or None, got "):
        _ = f.replace(address_plan=plan).address_map


def test_an_address_plan_and_none_are_taken():
    f = topologies.build("torus:2x2,chip=h100")
    assert f.replace(address_plan=None).address_map.regions == f.address_map.regions
    assert len(f.replace(address_plan=AddressPlan(host_memory=0)).address_map.regions) == 4
