"""Audit, session 24: an access's bytes all lie with its first byte's owner and window.

``fabric.access(f, src, address, size=N)`` translated, permitted and timed only the first
byte. A load of 64 B at the last 32 bytes of chip1's HBM was timed as chip1's alone (half
of it is chip2's), and still so with chip2 failed; a 1 TiB load from chip1's 1 GiB passed;
a load running past the end of a read-only window onto another host's DRAM, into bytes no
window of the host maps, was permitted; one across a 4 KiB granule of an interleave set
was timed as the first granule's owner's. Now (fabric._access._span) one access reaches one
owner's memory through one window: its last byte lies in the region of its first (in an
interleave set, the same granule) and one window permitting the operation maps every
byte; otherwise a clear error naming the boundary.

The property checks that rule against a brute force over the bytes: the address map's
lookup of every 256th byte and the last (one owner, offsets consecutive) and the domain's
windows as plain :class:`fabric.Window` records, on the example system (host DRAM, a
4-way interleave pool, a read-only window) at addresses drawn around every boundary.
"""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import topologies
from fabric import AddressMapError, AddressPlan, Region, TranslationError, Window, access
from fabric._units import GiB, MiB


@pytest.fixture(scope="module")
def system():
    return topologies.load_system("examples/sd200-ultra.toml").fabric


def _boundaries(f):
    """Region ends, the pool's first granule ends and window ends (global) of host0."""
    out = set()
    for r in f.address_map.regions:
        out.update((r.base, r.end))
        if r.ways > 1:
            out.update(r.base + k * r.granularity for k in range(1, 9))
    for w in f.host_domains["host0"].windows:
        out.update((w.global_base, w.global_base + w.size))
    return sorted(out)


def _owned(f, first, size):
    """Brute force: every 256th byte and the last are the first byte's owner's, at
    consecutive offsets (an interleave set's next granule is another owner's, or the same
    owner's at a jump)."""
    amap = f.address_map
    a = amap.lookup(first)
    for k in sorted({*range(0, size, 256), size - 1}):
        try:
            b = amap.lookup(first + k)
        except AddressMapError:
            return False
        if (b.region, b.owner, b.offset) != (a.region, a.owner, a.offset + k):
            return False
    return True


def _one_window(f, src_host, first, size, op):
    """Brute force: a window of the host, permitting ``op``, maps all the bytes."""
    dom = f.host_domains[src_host]
    for w in dom.windows:
        if w.global_base <= first and first + size <= w.global_base + w.size:
            try:
                dom.translate(first - w.global_base + w.local_base,
                              "read" if op == "load" else "write")
                return True
            except TranslationError:
                pass
    return False


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                   HealthCheck.function_scoped_fixture])
@given(st.data(), st.sampled_from(["load", "store"]),
       st.integers(-300, 300), st.one_of(st.integers(1, 9000), st.sampled_from([1, 64, 4096])))
def test_an_access_is_refused_iff_its_bytes_leave_the_first_owner_or_window(system, data, op,
                                                                             shift, size):
    f = system
    first = data.draw(st.sampled_from(_boundaries(f))) + shift
    try:
        one = access(f, "chip0", first, op=op)          # the first byte alone
    except (AddressMapError, TranslationError):
        return                                          # nothing to span from
    ok = _owned(f, first, size) and _one_window(f, "host0", first, size, op)
    if ok:
        a = access(f, "chip0", first, op=op, size=size)
        assert (a.target, a.path) == (one.target, one.path)
    else:
        with pytest.raises((AddressMapError, TranslationError), match="runs past the end of"):
            access(f, "chip0", first, op=op, size=size)


def _pool_plan():
    return topologies.build("torus:4x4,chip=h100,hosts=2").replace(address_plan=AddressPlan(
        hbm_bytes=GiB, interleave=[Region(0, 4 * 256 * MiB, ("chip1", "chip2", "chip3", "chip5"),
                                          granularity=4096, name="pool")],
        windows=[Window("host0", 1 << 44, size=4 * 256 * MiB, target="pool", name="wpool")]))


@pytest.mark.parametrize("failed", [(), ("chip2",)])
def test_a_load_into_the_next_chips_memory_is_refused_failed_or_not(failed):
    # before: 491.5 ns, target chip1, with or without chip2
    f = _pool_plan()
    g = f.without(chips=list(failed)) if failed else f
    end = g.address_map.region("chip1.hbm").end
    assert access(g, "chip0", end - 64, size=64).target == "chip1"
    with pytest.raises(AddressMapError, match=r"runs past the end of region 'chip1.hbm'.*"
                                              r"into region 'chip2.hbm'"):
        access(g, "chip0", end - 32, size=64)
    with pytest.raises(AddressMapError, match="runs past the end of region 'chip1.hbm'"):
        access(g, "chip0", end - GiB, size=1 << 40)


def test_a_load_across_an_interleave_granule_is_refused():
    f = _pool_plan()
    base = f.address_map.region("pool").base
    assert access(f, "chip0", base + 4096 - 64, size=64).target == "chip1"
    assert access(f, "chip0", base + 4096, size=64).target == "chip2"
    with pytest.raises(AddressMapError, match="'chip1''s granule .* into region 'pool'"):
        access(f, "chip0", base + 4096 - 32, size=64)


def test_a_load_past_a_read_only_windows_end_is_refused(system):
    f = system
    (w,) = [w for w in f.host_domains["host0"].windows if w.name == "host5-dram-ro"]
    end = w.global_base + w.size
    assert access(f, "chip0", end - 64, size=64).size == 64
    with pytest.raises(TranslationError, match="runs past the end of window 'host5-dram-ro'"):
        access(f, "chip0", end - 32, size=64)


_TOP = """[system]
topology = "torus:4x4,chip=h100,hosts=2"
[address]
width = 62
[limits]
page_size = "4KiB"
[[regions]]
name = "top"
base = "0x3fff_ffff_ffff_f000"
size = "4KiB"
owner = "chip3"
kind = "mmio"
[[windows]]
host = "host0"
name = "topw"
local_base = "0x3fff_ffff_ffff_f000"
target = "top"
size = "4KiB"
page_size = "4KiB"
"""


@pytest.mark.parametrize("size", [65, 2**62, 2**63 - 1])
def test_an_access_at_the_top_of_the_widest_address_space_stops_there(size):
    # the last 64 B below 2**62 are chip3's registers; before, any size from there was timed
    f = topologies.read_system(_TOP).fabric
    assert access(f, "chip0", 2**62 - 64, size=64).target == "chip3"
    with pytest.raises(AddressMapError, match="past the 62-bit address width"):
        access(f, "chip0", 2**62 - 64, size=size)
