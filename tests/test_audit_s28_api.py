"""Audit, session 28: hostile arguments to the vectorized and access functions (a library fuzz of
route, route_many, access, access_to, access_latencies, loadstore_reaches, reach, without,
forwarding_tables(...).forward and Fabric.node over ~60 values each).

- ``loadstore_reaches`` took node indices unchecked: -1 read as the last node (a silently
  wrong answer: True for a pair that is no pair), 2**63 or a float failed in numpy
  (OverflowError). One check now, ``Fabric.node_indices``, shared with the router's queries.
- ``route_many`` with lists of different lengths reached the routing engine unchecked (an
  IndexError on a rail fabric, numpy's broadcast error on a torus): the router's own
  length rule now applies (one of them broadcasts, else a ValueError naming both shapes).
- ``access_to(..., address=inf)`` failed in int() (OverflowError). Session 29 (lead's decision
  01:46): the parameter is gone: it only labelled the result with an address the access did
  not time (``access`` is the by-address call).
"""

import numpy as np
import pytest
from degrade import built

from fabric import NodeError, access, access_to, loadstore_reaches, route_many

TORUS, RAIL = "torus:4x4,chip=h100", "rail:servers=2,gpus=2,chip=h100"


@pytest.mark.parametrize("bad, said", [([-1], "src holds node index -1, outside 0..15"),
                                       (2**63, f"src holds node index {2**63}, outside"),
                                       (np.uint64(16), "src holds node index 16, outside")])
def test_loadstore_reaches_checks_its_indices(bad, said):
    with pytest.raises(NodeError, match=said):
        loadstore_reaches(built(TORUS), bad, [0])


def test_loadstore_reaches_refuses_what_is_no_index():
    with pytest.raises(TypeError, match="dst must be node indices"):
        loadstore_reaches(built(TORUS), [0], [float("inf")])


@pytest.mark.parametrize("spec", [TORUS, RAIL])
def test_route_many_takes_the_routers_length_rule(spec):
    f = built(spec)
    with pytest.raises(ValueError, match=r"same length, got \(3,\) and \(2,\)"):
        route_many(f, [0, 1, 2], [3, 2])
    hops, _ = route_many(f, [1, 2], [3])            # one side of one: it broadcasts
    assert hops.tolist() == route_many(f, [1, 2], [3, 3])[0].tolist()


def test_access_to_reports_the_address_it_times():
    f = built(TORUS)
    a = access_to(f, "chip0", "chip3")
    assert a.address == f.address_map.regions_of("chip3")[0].base
    # session 28 recorded a given address=0x1000 (chip0's memory) on this chip0 -> chip3 access
    with pytest.raises(TypeError, match="address"):
        access_to(f, "chip0", "chip3", address=0x1000)
    assert access(f, "chip0", a.address) == a


def test_forwarding_reads_an_address_written_as_text():
    """forward(src, '0x...') looked the address up as a number (the map reads text) and then
    compared the text with the tables' integer bounds: TypeError."""
    from fabric import forwarding_tables

    f = built(TORUS)
    ft = forwarding_tables(f)
    base = f.address_map.regions_of("chip5")[0].base
    assert ft.forward("chip0", hex(base)) == ft.forward("chip0", base) == ["chip0", "chip1", "chip5"]
    assert ft.lookup_per_dimension("chip0", hex(base)) == ft.lookup_per_dimension("chip0", base)


def test_an_op_that_is_no_string_is_named():
    from fabric import access

    # a choice's kind first: a TypeError (a SpecError 'op must be one of load, store, got
    # array(...)' before session 34)
    with pytest.raises(TypeError, match=r"op must be a str, got array\(\[1, 2\]\) \(an ndarray\)"):
        access(built(TORUS), "chip0", 64, op=np.array([1, 2]))
