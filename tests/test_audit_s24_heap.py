"""Audit, session 24: a failed chip's symmetric-heap fault stays a fault of the plan.

A plan is laid out from the intact fabric, and a failed chip keeps its rank, its regions
and its heap override (fabric/_symmetric.py). ``fabric.check`` of a degraded copy still
reported a failed chip's overlapping or over-full regions, but the heap was checked on the
live chips only: a heap whose override on chip3 broke symmetry (or did not fit chip3's
HBM) checked clean once chip3 failed, and ``symmetric_memory`` built on the degraded copy
though the intact fabric refuses it. Now every chip of the plan is checked, in rank order.

The property: on random fabrics, a heap with one broken override, any chips failed, the
degraded copy's heap findings are the intact fabric's, and both refuse the heap.
"""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fabric
import topologies

SPECS = ("torus:4x4,chip=h100,hosts=2", "switch:8,planes=2,hosts=4,chip=h100",
         "rail:servers=2,gpus=4,chip=h100")
BROKEN = {"offset": 'offset = "1GiB"', "size": 'size = "2GiB"', "beyond": 'offset = "63GiB"'}


def _system(spec, chip, how):
    return topologies.read_system(
        f'[system]\ntopology = "{spec}"\n[address]\nhbm_bytes = "64GiB"\n'
        f'[heap]\nsize = "1GiB"\noffset = "0"\n[heap.chips.{chip}]\n{BROKEN[how]}\n').fabric


def _heap_findings(f):
    return [str(x) for x in fabric.check(f) if x.code == "symmetric-mismatch"]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(SPECS), st.sampled_from(sorted(BROKEN)), st.data())
def test_a_degraded_copy_keeps_every_heap_fault_of_its_plan(spec, how, data):
    chips = topologies.build(spec).endpoints
    chip = data.draw(st.sampled_from(chips))
    f = _system(spec, chip, how)
    failed = data.draw(st.lists(st.sampled_from(chips), min_size=1, max_size=2, unique=True)
                       | st.just([chip]))
    g = f.without(chips=failed)
    want = _heap_findings(f)
    assert want and _heap_findings(g) == want
    for x in (f, g):
        with pytest.raises(fabric.AddressMapError, match="invalid symmetric heap"):
            _ = x.symmetric_memory


def test_the_failed_chips_override_is_still_named():
    # before: [] on the degraded copy, and its symmetric_memory built
    g = _system(SPECS[0], "chip3", "offset").without(chips=["chip3"])
    (msg,) = _heap_findings(g)
    assert "on chip3: offset 0x40000000" in msg
