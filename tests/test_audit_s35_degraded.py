"""Session 35 (audit): answers wrong without an error (degraded fabrics, hostile plans).

A probe: failing a link with every chip alive never makes a schedule
cheaper. hypermesh:4x4 without chip4-chip7 ran multi-dimensional-pipelined all-reduce
faster than intact (600 -> 518 us at 64 MiB): the dimension-order shares came from a linear
program whose times were in seconds (~1e-12 a byte), below HiGHS's absolute tolerances, so
any share vector passed as optimal; the intact fabric got (1, 0) where its symmetry wants
(1/2, 1/2). The shares are now the program's optimum (analysis/_schedules_multi._shares).

A plan giving a chip a second HBM region (a host a second DRAM region) listed before its own:
every host's default window onto the chip, the chip's symmetric heap and access_to's target
went to the first in the list (a 1 GiB extra region instead of the chip's 48 GiB; a 2 GiB
access refused), and check() said nothing.
An owner's own region is now the one named ``<owner>.hbm`` / ``<owner>.dram`` (the layouts'
names), else its only one; several, none so named, is a finding
(fabric._address.owned_regions, under default_region: the one rule of them all).
"""
import dataclasses
import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import topologies
from analysis import cost
from analysis._schedules_multi import _shares
from fabric import AddressPlan, Region, SymmetricHeap, Window, access_to, check


def _objective(w, orders, shape, cost_of, a2a, pipelined):
    """The program's objective at shares ``w``, written out: per phase the busiest
    dimension's seconds (phases in sequence: their sum), or, pipelined, the busiest
    dimension over every phase at once."""
    K = len(orders[0])
    load = np.zeros((K, max(cost_of) + 1))
    for wo, o in zip(w, orders):
        rest = 1.0
        for k, d in enumerate(o):
            load[k, d] += wo * cost_of[d] * rest
            rest = rest if a2a else rest / shape[d]
    return load.sum(axis=0).max() if pipelined else load.max(axis=1).sum()


@settings(max_examples=20, deadline=None)
@given(shape=st.lists(st.integers(2, 8), min_size=2, max_size=3),
       costs=st.lists(st.floats(0.5, 4.0), min_size=3, max_size=3),
       a2a=st.booleans(), pipelined=st.booleans(), seed=st.integers(0, 2**16))
def test_the_dimension_order_shares_are_the_programs_optimum(shape, costs, a2a, pipelined,
                                                              seed):
    # seconds per byte as the router gives them (~1e-12): the scale that hid the optimum
    dims = list(range(len(shape)))
    cost_of = {d: costs[d] * 1e-12 for d in dims}
    orders = list(itertools.permutations(dims))
    w, _ = _shares(orders, shape, cost_of, a2a, pipelined)
    best = _objective(w, orders, shape, cost_of, a2a, pipelined)
    rng = np.random.default_rng(seed)
    trials = [np.eye(len(orders))[i] for i in range(len(orders))]
    trials += [np.full(len(orders), 1 / len(orders))] + list(rng.dirichlet(
        np.ones(len(orders)), 100))
    assert best <= min(_objective(t, orders, shape, cost_of, a2a, pipelined)
                       for t in trials) * (1 + 1e-6)


def test_a_symmetric_grid_pipelines_half_its_data_each_dimension_order():
    # hypermesh:4x4: an order's first phase puts 1/4 of a chunk on a link, its second
    # 1/16; half the data each order: (1/2)(1/4 + 1/16) per half, 5/16 of a chunk for both
    n = 2**26
    r = cost(topologies.build("hypermesh:4x4"), "all-reduce", n,
             "multi-dimensional-pipelined", runtime="ideal")
    assert r.steps[0].link_bytes * r.chunks == pytest.approx(n * 5 / 16, rel=1e-9)


HM = "hypermesh:4x4,hosts=4,chip=h100"
GiB = 2**30


def test_a_chips_second_hbm_region_takes_neither_its_window_nor_its_heap():
    # 48 GiB chips in 64 GiB owner-bits slots: a 1 GiB region of chip3 in chip2's gap,
    # below chip3's own region
    extra = Region(base=0x2C_0000_0000, size=GiB, owner="chip3", kind="hbm", name="c3x")
    f = topologies.build(HM).replace(address_plan=AddressPlan(
        hbm_bytes=48 * GiB, regions=(extra,), heap=SymmetricHeap(size=GiB)))
    own = next(r for r in f.address_map.regions if r.name == "chip3.hbm")
    (w,) = [w for w in f.host_domains["host1"].windows if w.name == "chip3"]
    assert (w.global_base, w.size) == (own.base, own.size)
    assert f.symmetric_memory.address(3) == own.base and not check(f)
    assert access_to(f, "chip0", "chip3", size=2 * GiB).address == own.base   # 1 GiB was all


def test_a_chip_of_two_hbm_regions_neither_its_own_is_a_finding():
    f = topologies.build(HM)
    regions = tuple(dataclasses.replace(r, name="c3a") if r.name == "chip3.hbm" else r
                    for r in f.replace(address_plan=AddressPlan(hbm_bytes=48 * GiB))
                    .address_map.regions)
    extra = Region(base=0x2C_0000_0000, size=GiB, owner="chip3", kind="hbm", name="c3b")
    g = f.replace(address_plan=AddressPlan(layout="explicit", regions=regions + (extra,),
                                           heap=SymmetricHeap(size=GiB)))
    found = [x.message for x in check(g) if x.code == "invalid"]
    assert len(found) == 2 and all("chip3" in m and "2 HBM regions ('c3a' and 'c3b')" in m
                                   for m in found), found


def test_an_owners_name_stands_for_its_own_region_everywhere():
    # review S35-R2: a window target naming chip3 and global_address("chip3", 0) asked for
    # a region by name ("owns 2 regions") where the default window and the heap took
    # chip3.hbm: one rule now (fabric._address.default_region on owned_regions)
    extra = Region(base=0x2C_0000_0000, size=GiB, owner="chip3", kind="hbm", name="c3x")
    w3 = Window(host="host1", local_base=1 << 50, target="chip3", size=GiB, name="w3")
    f = topologies.build(HM).replace(address_plan=AddressPlan(
        hbm_bytes=48 * GiB, regions=(extra,), windows=(w3,)))
    own = next(r for r in f.address_map.regions if r.name == "chip3.hbm")
    assert f.address_map.global_address("chip3", 4096) == own.base + 4096
    (w,) = [w for w in f.host_domains["host1"].windows if w.name == "w3"]
    assert w.global_base == own.base and not [x for x in check(f) if x.severity == "error"]
