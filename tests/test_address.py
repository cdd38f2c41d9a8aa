"""Tests for the global address map: regions, layouts, CXL interleave, lookup.

Independent truth: the CXL interleave formula written out by hand (docs/sources.md
s.3, Linux tools/testing/cxl/test/cxl_translate.c) and brute-force scans over
the region list.
"""

import itertools

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import topologies
from fabric import (
    AddressMap,
    AddressMapError,
    AddressPlan,
    Fabric,
    Region,
    check_interleave,
    interleave_offset,
    interleave_target,
    layout_regions,
    region_findings,
    validate_address,
)
from fabric._units import GB, GiB, KiB, MiB, TiB


def _fabric(n_chips=8, hosts=2, chip="h100", nics=0):
    G = nx.cycle_graph([f"chip{r}" for r in range(n_chips)])
    for r in range(n_chips):
        G.nodes[f"chip{r}"].update(kind="chip", host=f"host{r * hosts // n_chips}")
    for i in range(nics):
        G.add_node(f"nic{i}", kind="nic")
        G.add_edge(f"nic{i}", "chip0")
    nx.set_edge_attributes(G, 25e9, "bandwidth")
    nx.set_edge_attributes(G, 1e-7, "latency")
    return Fabric.from_graph(G, chip=chip)


# -- CXL interleave -----------------------------------------------------------------

WAYS = [1, 2, 4, 8, 16, 3, 6, 12]
GRANS = [256 << i for i in range(7)]


def _by_hand(o, ways, g):
    return (o // g) % ways, (o // (g * ways)) * g + o % g


@pytest.mark.parametrize("ways", WAYS)
@pytest.mark.parametrize("g", GRANS)
def test_interleave_round_trip_both_ways(ways, g):
    rng = np.random.default_rng(ways * 100 + g)
    o = rng.integers(0, 1 << 40, size=2000)
    pos, dev = interleave_target(o, ways, g)
    hp, hd = _by_hand(o, ways, g)
    assert np.array_equal(pos, hp) and np.array_equal(dev, hd)
    # set offset -> (position, device offset) -> set offset
    assert np.array_equal(interleave_offset(pos, dev, ways, g), o)
    # (position, device offset) -> set offset -> (position, device offset)
    p2 = rng.integers(0, ways, size=2000)
    d2 = rng.integers(0, 1 << 36, size=2000)
    back = interleave_target(interleave_offset(p2, d2, ways, g), ways, g)
    assert np.array_equal(back[0], p2) and np.array_equal(back[1], d2)


def test_interleave_bytes_are_a_bijection_on_a_small_set():
    ways, g = 3, 256
    size = g * ways * 4
    seen = set()
    for o in range(size):
        pos, dev = interleave_target(o, ways, g)
        assert 0 <= dev < size // ways
        seen.add((pos, dev))
    assert len(seen) == size


@pytest.mark.parametrize("ways, g", [
    (0, 256), (5, 256), (7, 4096), (9, 256), (10, 256), (24, 256), (32, 256), (-1, 256),
    (2, 0), (2, 128), (2, 255), (2, 384), (2, 1000), (2, 32 * KiB), (2, 64 * KiB),
    (2, -256),
])
def test_interleave_refused_inputs(ways, g):
    with pytest.raises(AddressMapError, match="interleave"):
        check_interleave(ways, g)
    with pytest.raises(AddressMapError):
        interleave_target(0, ways, g)


@pytest.mark.parametrize("ways, g, what", [
    (2.0, 256, "ways"), (True, 256, "ways"), (None, 256, "ways"), (np.True_, 256, "ways"),
    (2, 256.0, "granularity"), (2, None, "granularity"), (2, "256", "granularity")])
def test_interleave_of_the_wrong_kind_is_a_type_error(ways, g, what):
    # STYLE's rule (session 32; was AddressMapError)
    for ask in (check_interleave, lambda w, gr: interleave_target(0, w, gr),
                lambda w, gr: interleave_offset(0, 0, w, gr)):
        with pytest.raises(TypeError, match=rf"interleave {what} must be .* \(a "):
            ask(ways, g)


def test_interleave_position_out_of_range_refused():
    with pytest.raises(AddressMapError, match="position"):
        interleave_offset(4, 0, 4, 256)


# -- regions and the map ------------------------------------------------------------

def test_lookup_plain_and_interleaved():
    amap = AddressMap([Region(0, 64 * KiB, "chip0"),
                       Region(1 << 30, 3 * 256 * MiB, ("a", "b", "c"), kind="dram",
                              granularity=1024)], width=32)
    assert amap.lookup(100).owner == "chip0"
    loc = amap.lookup((1 << 30) + 5 * 1024 + 7)      # stripe 5 -> position 2, device stripe 1
    assert (loc.owner, loc.offset) == ("c", 1024 + 7)
    assert amap.global_address("c", 1024 + 7) == (1 << 30) + 5 * 1024 + 7
    assert amap.owners == ("chip0", "a", "b", "c")


@pytest.mark.parametrize("bad, shown, error", [
    ("zz", "'zz'", AddressMapError), (-1, "-1", AddressMapError),
    (1 << 32, "0x100000000", AddressMapError), (2.5, "2.5", TypeError),
    ("0x1_0000_0000", "'0x1_0000_0000'", AddressMapError), (None, "None", TypeError),
])
def test_lookup_refuses_bad_addresses_naming_them(bad, shown, error):
    # STYLE's rule (session 32): a wrong kind is a TypeError, a wrong value AddressMapError
    amap = AddressMap([Region(0, 4096, "chip0")], width=32)
    with pytest.raises(error) as e:
        amap.lookup(bad)
    assert type(e.value) is error
    assert shown in str(e.value)


def test_lookup_many_reports_unmapped():
    amap = AddressMap([Region(0, 4096, "chip0"), Region(8192, 4096, "chip1")], width=20)
    with pytest.raises(AddressMapError, match="1 of 3 addresses are not mapped.*0x1388"):
        amap.lookup_many(np.array([1, 8193, 5000]))
    loc = amap.lookup_many(np.array([1, 8193, 5000, 1 << 19]), unmapped="mask")
    assert loc.mapped.tolist() == [True, True, False, False]
    assert loc.owner.tolist() == [0, 1, -1, -1]
    with pytest.raises(AddressMapError, match="negative"):
        amap.lookup_many(np.array([-1]))
    with pytest.raises(AddressMapError, match="wider"):
        amap.lookup_many(np.array([1 << 20]))
    with pytest.raises(TypeError, match=r"^addresses must be integers, got an array of dtype "
                                        r"float64$"):      # integer_array's (session 38)
        amap.lookup_many(np.array([1.5]))


@pytest.mark.parametrize("regions, code", [
    ([Region(0, 8192, "a"), Region(4096, 8192, "b")], "overlap"),
    ([Region(0, 8192, "a"), Region(0, 4096, "b")], "overlap"),
    ([Region(100, 4096, "a")], "misaligned"),
    ([Region(0, 5000, "a")], "misaligned"),
    ([Region(1 << 20, 4096, "a")], "out-of-range"),
    ([Region(0, 0, "a")], "invalid"),
    ([Region(0, 4096, "a", kind="flash")], "invalid"),
    ([Region(0, 4096, "a", permissions="w")], "invalid"),
    ([Region(0, 4096, "a"), Region(4096, 4096, "a")], "invalid"),         # same name twice
    ([Region(0, 5 * 4096, ("a", "b", "c", "d", "e"), granularity=4096)], "invalid"),
    ([Region(0, 8192, ("a", "b"), granularity=3000)], "invalid"),
    ([Region(0, 3 * 4096, ("a", "b"), granularity=4096)], "misaligned"),
    ([Region(0, 8192, ("a", "a"), granularity=4096)], "invalid"),
])
def test_region_findings_and_refusal(regions, code):
    found = region_findings(regions, width=20)
    assert code in [f.code for f in found]
    with pytest.raises(AddressMapError, match=code):
        AddressMap(regions, width=20)


def test_every_overlap_is_reported():
    regions = [Region(0, 1 << 20, "big")] + [Region(i * 8192, 4096, f"r{i}") for i in range(5)]
    assert sum(f.code == "overlap" for f in region_findings(regions, 32)) == 5


@pytest.mark.parametrize("width", [0, 64, 57.0, "57"])
def test_width_refused(width):
    assert region_findings([Region(0, 4096, "a")], width)[0].code == "invalid"


def test_validate_address():
    assert validate_address("0x4000_0000", 57) == 1 << 30
    for bad, msg in [("hello", "'hello'"), (-5, "-5"), (1 << 57, "0x200000000000000")]:
        with pytest.raises(AddressMapError, match=msg):
            validate_address(bad, 57)


# -- layouts -------------------------------------------------------------------------

def test_owner_bits_layout_is_a_shift():
    f = _fabric(8, 2, nics=1)
    amap = f.address_map
    k = (80 * GB - 1).bit_length()           # 2**37 > 80 GB > 2**36
    for r in range(8):
        reg = amap.region(f"chip{r}.hbm")
        assert reg.base == r << k and reg.size == 80 * GB
    addr = np.array([(r << k) + 12345 for r in range(8)])
    loc = amap.lookup_many(addr)
    assert [amap.owners[o] for o in loc.owner] == [f"chip{r}" for r in range(8)]
    assert np.array_equal(addr >> k, np.arange(8))
    dram = amap.region("host1.dram")
    assert dram.base >= 8 << k and dram.base % TiB == 0
    assert amap.region("nic0.mmio").kind == "mmio"


def test_packed_layout_back_to_back():
    f = _fabric(4, 1).replace(address_plan=AddressPlan(layout="packed", alignment=GiB))
    regs = f.address_map.regions
    for a, b in itertools.pairwise(regs):
        assert b.base == -(-a.end // GiB) * GiB


def test_interleave_set_placed_and_looked_up():
    f = _fabric(4, 2)
    s = Region(0, 4 * GiB, ("host0", "host1"), kind="dram", granularity=4096, name="pool")
    f = f.replace(address_plan=AddressPlan(interleave=[s]))
    pool = f.address_map.region("pool")
    assert pool.base % (4 * GiB) == 0
    loc = f.address_map.lookup(pool.base + 4096 * 3 + 1)
    assert (loc.owner, loc.offset) == ("host1", 4096 + 1)


def test_plan_without_hbm_size_is_refused():
    G = nx.path_graph(["chip0", "chip1"])
    nx.set_node_attributes(G, "chip", "kind")
    nx.set_edge_attributes(G, 1e9, "bandwidth")
    nx.set_edge_attributes(G, 1e-7, "latency")
    f = Fabric.from_graph(G)
    with pytest.raises(AddressMapError, match="hbm_bytes"):
        _ = f.address_map
    assert len(f.replace(address_plan=AddressPlan(hbm_bytes=GiB)).address_map) == 3


@pytest.mark.parametrize("field, value", [("layout", "sparse"), ("width", 70),
                                          ("host_memory", -1), ("alignment", 3000)])
def test_bad_plan_fields_refused(field, value):
    with pytest.raises(AddressMapError, match=field):
        layout_regions(_fabric(), AddressPlan(**{field: value}))


def test_too_wide_for_the_address_width():
    # 1024 chips x 2**37 bytes need 47 bits; 40 bits is not enough
    f = topologies.build("sd200-ultra").replace(address_plan=AddressPlan(width=40))
    with pytest.raises(AddressMapError, match="out-of-range"):
        _ = f.address_map


# -- property-based ------------------------------------------------------------------

@st.composite
def _regions(draw):
    """Random regions on a 4 KiB grid, some overlapping, some interleaved."""
    n = draw(st.integers(1, 12))
    out = []
    for i in range(n):
        pages = draw(st.integers(1, 64))
        base = draw(st.integers(0, 512)) * 4096
        if draw(st.booleans()):
            ways = draw(st.sampled_from([2, 3, 4]))
            g = draw(st.sampled_from([256, 1024, 4096]))
            size = -(-pages * 4096 // (g * ways * 4096 // np.gcd(g * ways, 4096))) \
                * (g * ways * 4096 // np.gcd(g * ways, 4096))
            out.append(Region(base, int(size), tuple(f"o{i}.{k}" for k in range(ways)),
                              kind="dram", granularity=g, name=f"r{i}"))
        else:
            out.append(Region(base, pages * 4096, f"o{i}", name=f"r{i}"))
    return out


def _brute(regions, a):
    for reg in regions:
        if reg.base <= a < reg.end:
            o = a - reg.base
            if reg.ways == 1:
                return reg.owner, o
            pos, dev = (o // reg.granularity) % reg.ways, \
                (o // (reg.granularity * reg.ways)) * reg.granularity + o % reg.granularity
            return reg.owners[pos], dev
    return None


@settings(max_examples=150, deadline=None)
@given(_regions(), st.lists(st.integers(0, 600 * 4096), min_size=1, max_size=50))
def test_random_plans(regions, addresses):
    found = region_findings(regions, width=32)
    if any(f.severity == "error" for f in found):
        with pytest.raises(AddressMapError):
            AddressMap(regions, width=32)
        # the checker's verdict agrees with a brute-force overlap scan
        overl = any(a.base < b.end and b.base < a.end
                    for i, a in enumerate(regions) for b in regions[i + 1:])
        assert overl == any(f.code == "overlap" for f in found)
        return
    amap = AddressMap(regions, width=32)
    # accepted: no two regions overlap
    rs = amap.regions
    assert all(a.end <= b.base for a, b in itertools.pairwise(rs))
    loc = amap.lookup_many(np.array(addresses), unmapped="mask")
    for k, a in enumerate(addresses):
        truth = _brute(regions, a)
        if truth is None:
            assert not loc.mapped[k]
            with pytest.raises(AddressMapError, match="not mapped"):
                amap.lookup(a)
        else:
            assert (amap.owners[loc.owner[k]], int(loc.offset[k])) == truth
            one = amap.lookup(a)
            assert (one.owner, one.offset) == truth
            # round trip: (owner, offset) -> global
            assert amap.global_address(one.owner, one.offset, region=one.region) == a


@st.composite
def _layout_plans(draw):
    sets = []
    for i in range(draw(st.integers(0, 2))):
        ways = draw(st.sampled_from([2, 3, 4]))
        g = draw(st.sampled_from(GRANS))
        # CXL HDM decoders: a set's size is a multiple of 256 MiB x ways
        sets.append(Region(0, ways * 256 * MiB * draw(st.integers(1, 8)),
                           tuple(f"host{k}" for k in range(ways)), kind="dram",
                           granularity=g, name=f"set{i}"))
    return AddressPlan(
        layout=draw(st.sampled_from(["owner-bits", "packed"])),
        alignment=draw(st.sampled_from([4096, 2 << 20, GiB])),
        host_memory=draw(st.sampled_from([0, 4096, 3 * GiB, TiB])),
        storage=draw(st.sampled_from([0, 8192, 5 * GiB])),
        hbm_bytes=draw(st.sampled_from([None, 4096, 5 * GiB + 4096, 80 * GB])),
        interleave=sets)


@settings(max_examples=80, deadline=None)
@given(_layout_plans(), st.integers(4, 12), st.lists(st.integers(0, 1 << 50), max_size=20))
def test_random_layouts_accepted_are_disjoint_and_looked_up(plan, n_chips, addresses):
    f = _fabric(n_chips, hosts=4 if n_chips >= 4 else 1, nics=1).replace(address_plan=plan)
    amap = f.address_map                  # every generated plan is valid: it must be accepted
    rs = amap.regions
    assert all(a.end <= b.base for a, b in itertools.pairwise(rs))
    if plan.layout == "owner-bits":
        k = (amap.region("chip0.hbm").size - 1).bit_length()
        for r in range(n_chips):
            assert amap.region(f"chip{r}.hbm").base == r << k
    loc = amap.lookup_many(np.array(addresses + [r.base for r in rs]), unmapped="mask")
    for j, a in enumerate(addresses + [r.base for r in rs]):
        truth = _brute(list(rs), a)
        assert (truth is None) == (not loc.mapped[j])
        if truth is not None:
            assert (amap.owners[loc.owner[j]], int(loc.offset[j])) == truth
