"""Audit, session 30 (task 4, hostile plans): ``Fabric.address_plan`` must be an AddressPlan or
None. Anything else was taken: an empty or zero value (``{}``, ``0``, ``""``, ``[]``) was read
as the default plan by the ``address_plan or AddressPlan()`` reads, silently; any other value
failed deep inside the address map with Python's "'dict' object has no attribute 'layout'".
And (review's S30-R3, the lead's decision 05:01: numpy bools are flags as numpy ints are counts)
AddressPlan.default_windows takes numpy's bool, held as Python's (check() asks ``is False``);
1, 'no' and None stay refused.
"""

import numpy as np
import pytest

import topologies
from fabric import AddressMapError, AddressPlan, check


@pytest.mark.parametrize("plan", [{}, 0, "", [], 3, {"hbm_bytes": 1}])
def test_a_plan_that_is_no_address_plan_is_refused_by_name(plan):
    f = topologies.build("torus:2x2,chip=h100")
    with pytest.raises(TypeError, match=r"address_plan must be an AddressPlan or None, got "):
        _ = f.replace(address_plan=plan).address_map


def test_an_address_plan_and_none_are_taken():
    f = topologies.build("torus:2x2,chip=h100")
    assert f.replace(address_plan=None).address_map.regions == f.address_map.regions
    assert len(f.replace(address_plan=AddressPlan(host_memory=0)).address_map.regions) == 4


@pytest.mark.parametrize("flag", [np.True_, np.False_])
def test_default_windows_takes_numpys_bool_as_pythons(flag):
    f = topologies.build("torus:2x2,chip=h100")
    plan = AddressPlan(default_windows=flag)
    assert plan.default_windows is bool(flag)
    g, want = f.replace(address_plan=plan), f.replace(address_plan=AddressPlan(
        default_windows=bool(flag)))
    assert [x.message for x in check(g)] == [x.message for x in check(want)]
    assert g.host_domains["host0"].windows == want.host_domains["host0"].windows


@pytest.mark.parametrize("flag", [1, "no", None])
def test_default_windows_refuses_what_is_no_flag(flag):
    f = topologies.build("torus:2x2,chip=h100")
    with pytest.raises(AddressMapError, match="default_windows must be True or False"):
        _ = f.replace(address_plan=AddressPlan(default_windows=flag)).address_map
