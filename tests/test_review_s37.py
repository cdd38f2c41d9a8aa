"""Session 37 (review): an owner's own region is one rule for its window and its heap.

The default windows asked owned_regions to pass over a region out of the int64-safe range
while the heap (heap_findings) and access_to did not: a chip of two unnamed HBM regions, one
out of range, had "no own HBM" for its heap (a finding) and the other region for its default
window (no finding), and a chip whose ``<chip>.hbm`` was out of range had its window moved
to another of its HBM regions. Now one rule: the region out of range is still its owner's own
and takes no window.
"""
import dataclasses

import topologies
from fabric import AddressPlan, Region, SymmetricHeap, check

GiB = 2**30


def test_a_chips_far_unnamed_hbm_region_counts_for_its_window_as_for_its_heap():
    f = topologies.build("hypermesh:4x4,hosts=4,chip=h100")
    regions = tuple(dataclasses.replace(r, base=2**62, name="c3a") if r.name == "chip3.hbm"
                    else r for r in f.replace(address_plan=AddressPlan(hbm_bytes=48 * GiB))
                    .address_map.regions)
    extra = Region(base=0x2C_0000_0000, size=GiB, owner="chip3", kind="hbm", name="c3b")
    g = f.replace(address_plan=AddressPlan(layout="explicit", regions=regions + (extra,),
                                           heap=SymmetricHeap(size=GiB)))
    found = [x.message for x in check(g) if x.code == "invalid"]
    assert len(found) == 2, found
    assert all("2 HBM regions ('c3a' and 'c3b')" in m for m in found), found
    assert any("default window" in m for m in found) and any("heap" in m for m in found)
