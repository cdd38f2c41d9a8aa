"""Session 37 (review): an owner's own region is one rule for its window and its heap.

The default windows asked owned_regions to pass over a region out of the int64-safe range
while the heap (heap_findings) and access_to did not: a chip of two unnamed HBM regions, one
out of range, had "no own HBM" for its heap (a finding) and the other region for its default
window (no finding), and a chip whose ``<chip>.hbm`` was out of range had its window moved
to another of its HBM regions. Now one rule: the region out of range is still its owner's own
and takes no window.

Found by a reader of sessions 31-36's change: chip_power priced a
misspelt chip ('b20O', 'nope', 5, True) as an H100's 700 W 'assumption'; a system file's
``chip = "b200"`` on dgx-h100 kept h100.* in the fabric's assumptions (the report's table)
where the preset's ``:chip=b200`` swaps them: Fabric.with_chip is now the one swap.
"""
import dataclasses

import pytest

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


def test_a_misspelt_chip_has_no_power_and_a_known_one_keeps_its_own():
    from fabric import SpecError, chip_power
    with pytest.raises(SpecError, match="unknown chip 'b20O'"):
        chip_power("b20O")                                    # was 700 W, 'an assumption'
    for bad in (5, True, [1]):
        with pytest.raises(TypeError, match="chip must be a chip name, a fabric.ChipSpec or None"):
            chip_power(bad)
    assert [chip_power(c).value for c in ("b200", "a100", None, "sd200-chip")] == [
        1000.0, 400.0, 700.0, 700.0]


def test_a_system_files_chip_replaces_the_presets_chip_in_its_assumptions():
    f = topologies.read_system('[system]\ntopology = "dgx-h100"\nchip = "b200"\n').fabric
    names = [p.name for p in f.assumptions]
    assert names == [p.name for p in topologies.build("dgx-h100:chip=b200").assumptions]
    assert "b200.hbm_bytes" in names and not any(n.startswith("h100.") for n in names)
