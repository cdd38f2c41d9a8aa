"""Random address plans against a brute-force reference of the documented semantics.

Hypothesis draws plans on a small fabric (8 chips all-to-all, 4 host domains of 2):
interleave sets, windows (by target, with offsets that may leave the target),
grants and failed chips. The reference below is written from the documentation
alone (``fabric/_plan.py``, ``fabric/_domains.py``, ``fabric/_address.py``), not from
the implementation: a linear scan over windows and regions, the CXL interleave
formula, and the grant rules. It predicts

* which windows are faulty (target offset or size outside the target),
* for every host and sampled local address and operation, the owner and offset
  reached, or a refusal,
* which windows are ``isolation`` findings and which are ``unreachable``, and which hosts
  map none of their own chips (a warning, with the default windows off),
* that failures change no translation of a surviving host.

The region bases themselves come from the address map (the layout is tested in
``tests/test_address.py``).
"""

import re

import networkx as nx
import pytest
from access_brute import granted
from hypothesis import given, settings
from hypothesis import strategies as st

from fabric import (
    AddressMapError,
    AddressPlan,
    DomainLimits,
    Fabric,
    Grant,
    Region,
    TranslationError,
    Window,
    check,
)
from fabric._units import GiB, MiB

CHIPS = [f"chip{r}" for r in range(8)]
HOSTS = [f"host{k}" for k in range(4)]
HOME = {**{c: f"host{r // 2}" for r, c in enumerate(CHIPS)}, **{h: h for h in HOSTS}}
PAGE = 2 * MiB
HOST_MEMORY = 4 * GiB
# Each chip's own region leaves 1 GiB of its 32 GiB (tpu-v4) for its shares of the sets
# (at most two sets of 512 MiB a way): a chip gives no more memory than it has.
HBM_BYTES = 31 * GiB


def _fabric(plan):
    G = nx.complete_graph(CHIPS)       # no failure of two chips disconnects the rest
    for c in CHIPS:
        G.nodes[c].update(kind="chip", host=HOME[c])
    nx.set_edge_attributes(G, 25e9, "bandwidth")
    nx.set_edge_attributes(G, 1e-7, "latency")
    return Fabric.from_graph(G, chip="tpu-v4").replace(address_plan=plan)   # 32 GiB HBM


@st.composite
def plans(draw):
    sets = []
    for i in range(draw(st.integers(0, 2))):
        ways = draw(st.sampled_from([2, 4]))
        owners = draw(st.permutations(CHIPS + HOSTS))[:ways]
        sets.append(Region(0, ways * 256 * MiB * draw(st.integers(1, 2)), tuple(owners),
                           kind="dram", granularity=draw(st.sampled_from([256, 4096, 16384])),
                           name=f"set{i}"))
    # windows onto the sets and grants of their owners are where grants go wrong: weight them
    targets = [f"{c}.hbm" for c in CHIPS] + [f"{h}.dram" for h in HOSTS] + CHIPS + \
        [s.name for s in sets] * 8
    wins = []
    for i in range(draw(st.integers(0, 4))):
        size = draw(st.one_of(st.none(), st.integers(1, 32).map(lambda k: k * PAGE)))
        # mostly inside every target (<= 140 MiB), sometimes past the end of most (64 GiB+)
        off = draw(st.one_of(st.none(), st.integers(0, 80).map(
            lambda k: k * PAGE if k <= 70 else (1 << 36) + k * PAGE)))
        wins.append(Window(draw(st.sampled_from(HOSTS)), (1 << 50) + i * (1 << 40), size=size,
                           target=draw(st.sampled_from(targets)), target_offset=off,
                           page_size=PAGE, permissions=draw(st.sampled_from(["r", "rw"])),
                           name=f"w{i}"))
    grant_targets = ["*"] + CHIPS + HOSTS + targets[:12] + [s.name for s in sets] + \
        [o for s in sets for o in s.owners] * 4
    grants = draw(st.one_of(st.none(), st.lists(st.builds(
        Grant, st.sampled_from(HOSTS), st.sampled_from(grant_targets),
        st.sampled_from(["r", "rw"])), max_size=4)))
    return AddressPlan(host_memory=HOST_MEMORY, hbm_bytes=HBM_BYTES, interleave=sets, windows=wins, grants=grants,
                       default_windows=draw(st.booleans()),
                       limits=DomainLimits(alignment="page", translation_entries=64))


# -- the reference ----------------------------------------------------------------------

def _ref_windows(plan, regions, host):
    """(name, local_base, size, global_base, writable, faulty) per window, as documented."""
    by_name = {r.name: r for r in regions}
    out = []
    if plan.default_windows:
        hbm = {r.owner: r for r in regions if r.kind == "hbm" and r.ways == 1}
        slot = 1 << (max(hbm[c].size for c in CHIPS) - 1).bit_length()
        own = [c for c in CHIPS if HOME[c] == host]
        order = own + [c for c in CHIPS if c not in own]
        for k, c in enumerate(order):
            out.append((c, k * slot, hbm[c].size, hbm[c].base, True, False))
        d = by_name[f"{host}.dram"]
        up = 1 << (d.size - 1).bit_length()
        out.append((f"{host}.dram", -(-(len(order) * slot) // up) * up, d.size, d.base, True,
                    False))
    for w in plan.windows:
        if w.host != host:
            continue
        if w.target in by_name:
            reg = by_name[w.target]
        else:
            mine = [r for r in regions if w.target in r.owners]
            hbm = [r for r in mine if r.kind == "hbm"]
            reg = mine[0] if len(mine) == 1 else hbm[0]
        off = w.target_offset or 0
        size = w.size if w.size is not None else reg.size - off
        faulty = not (0 <= off < reg.size) or off + size > reg.size
        out.append((w.name, w.local_base, size, reg.base + off, w.permissions == "rw", faulty))
    return out


def _ref_allowed(plan, host, reg, op):
    """The documented grant rules for one region (tests/access_brute.py)."""
    return granted(plan, HOME, host, reg, op)


def _ref_translate(plan, regions, host, a, op):
    """(owner, offset) reached from local address ``a``, or None when refused."""
    for name, lb, size, gb, writable, _ in _ref_windows(plan, regions, host):
        if lb <= a < lb + size:
            g = gb + (a - lb)
            reg = next(r for r in regions if r.base <= g < r.base + r.size)
            if not _ref_allowed(plan, host, reg, "read"):
                return None
            if op == "write" and not (writable and reg.permissions == "rw"
                                      and _ref_allowed(plan, host, reg, "write")):
                return None
            o = g - reg.base
            if reg.ways == 1:
                return reg.owner, o
            gr, ways = reg.granularity, reg.ways
            return reg.owners[(o // gr) % ways], (o // (gr * ways)) * gr + o % gr
    return None


def _ref_unmapped(plan, regions):
    """The hosts no window of which meets a region of its chips (default windows off)."""
    if plan.default_windows:
        return set()
    out = set()
    for h in HOSTS:
        regs = [r for r in regions if any(HOME.get(o) == h and o in CHIPS for o in r.owners)]
        if not any(gb < r.base + r.size and r.base < gb + size for r in regs
                   for _, _, size, gb, _, _ in _ref_windows(plan, regions, h)):
            out.add(h)
    return out


def _windows_named(found, codes):
    out = set()
    for f in found:
        if f.code in codes:
            m = re.search(r"host(\d) window '([^']+)'|window '([^']+)' of host 'host(\d)'",
                          f.message)
            out.add((f"host{m.group(1) or m.group(4)}", m.group(2) or m.group(3)))
    return out


# -- the properties -----------------------------------------------------------------------

@settings(max_examples=40, deadline=None)
@given(plans(), st.lists(st.sampled_from(CHIPS), max_size=2, unique=True),
       st.lists(st.integers(0, 1 << 45), max_size=6))
def test_random_plans_match_the_reference(plan, dead, extra):
    f = _fabric(plan)
    regions = list(f.address_map.regions)
    found = check(f)
    faulty = {(h, w[0]) for h in HOSTS for w in _ref_windows(plan, regions, h) if w[5]}
    assert _windows_named(found, {"out-of-range"}) == faulty
    blocking = [x for x in found if x.severity == "error"
                and x.code not in ("isolation", "unreachable")]
    assert bool(blocking) == bool(faulty), blocking
    if faulty:
        with pytest.raises(AddressMapError):
            _ = [f.host_domains[h] for h in HOSTS]
        return
    # isolation: windows onto a region the host may not read, or rw onto one it may not write
    iso = set()
    for h in HOSTS:
        for name, lb, size, gb, writable, _ in _ref_windows(plan, regions, h):
            reg = next(r for r in regions if r.base <= gb < r.base + r.size)
            if not _ref_allowed(plan, h, reg, "read") or (
                    writable and reg.permissions == "rw"
                    and not _ref_allowed(plan, h, reg, "write")):
                iso.add((h, name))
    assert _windows_named(found, {"isolation"}) == iso
    # all-to-all: every target reachable; a host of chips none of which it maps is warned
    unmapped = {x.where for x in found if "maps none of its own chips" in x.message}
    assert all(x.severity == "warning" for x in found if x.where in unmapped)
    assert not any(x.code == "unreachable" and x.where not in unmapped for x in found)
    assert unmapped == _ref_unmapped(plan, regions)
    # translation of sampled addresses, both operations
    g = f.without(chips=dead) if dead else None
    for h in HOSTS:
        wins = _ref_windows(plan, regions, h)
        sample = [a for _, lb, size, *_ in wins for a in (lb, lb + size // 2, lb + size - 1)]
        for a in sample + extra:
            for op in ("read", "write"):
                want = _ref_translate(plan, regions, h, a, op)
                try:
                    t = f.translate(h, a, op)
                    got = (t.owner, t.offset)
                except TranslationError:
                    got = None
                assert got == want, (h, hex(a), op)
                if g is not None and h in g.domains:      # failures move nothing
                    try:
                        t2 = g.translate(h, a, op)
                        got2 = (t2.owner, t2.offset)
                    except TranslationError:
                        got2 = None
                    assert got2 == want, (h, hex(a), op, dead)
    if g is not None:
        gone = set(dead) | {h for h in HOSTS if all(c in dead for c in CHIPS if HOME[c] == h)}
        unreachable = set()
        for h in HOSTS:
            if h not in g.domains:
                continue
            for name, lb, size, gb, *_ in _ref_windows(plan, regions, h):
                reg = next(r for r in regions if r.base <= gb < r.base + r.size)
                if set(reg.owners) & gone:
                    unreachable.add((h, name))
        found = check(g)
        unmapped = {x.where for x in found if "maps none of its own chips" in x.message}
        assert unmapped == _ref_unmapped(plan, regions) & set(g.domains)    # the plan's
        assert _windows_named([x for x in found if "maps none of its own" not in x.message],
                              {"unreachable"}) == unreachable


def test_a_set_of_a_granted_owner_and_the_domains_own_chip_is_granted():
    # Found by the property above (the reference, not the code, was wrong): host2 owns
    # chip4 and is granted chip0, so it may read a set interleaved over the two.
    both = Region(0, 512 * MiB, ("chip0", "chip4"), kind="dram", granularity=256, name="set1")
    w = Window("host2", 1 << 50, target="set1", page_size=PAGE, permissions="r", name="w0")
    plan = AddressPlan(host_memory=HOST_MEMORY, hbm_bytes=HBM_BYTES, interleave=[both], windows=[w],
                       grants=[Grant("host2", "chip0", "r")], default_windows=False,
                       limits=DomainLimits(alignment="page", translation_entries=64))
    f = _fabric(plan)
    assert not [x for x in check(f) if x.code == "isolation"]
    assert f.translate("host2", (1 << 50) + 256, "read").owner == "chip4"
    with pytest.raises(TranslationError):
        f.translate("host2", 1 << 50, "write")                   # read-only window
    # with chip0 not granted, the same window is an isolation finding naming chip0
    f2 = _fabric(plan.replace(grants=(Grant("host2", "chip5", "r"),)))
    assert any(x.code == "isolation" and "chip0" in x.message for x in check(f2))


@pytest.mark.parametrize("perm", ["r", "rw"])
@pytest.mark.parametrize("granted", ["chip5", "host2"])
def test_a_set_is_not_granted_by_a_grant_of_a_third_chip(granted, perm):
    # Built by hand from a once-saved Hypothesis example that could not be replayed: a set
    # interleaved over chip0 (host0) and chip2 (host1), reached by host3 whose only grant is
    # of a third chip (or of that chip's host). Neither owner is granted nor host3's own, so
    # the window is an isolation finding and every access through it is refused.
    both = Region(0, 512 * MiB, ("chip0", "chip2"), kind="dram", granularity=256, name="set1")
    w = Window("host3", 1 << 50, target="set1", page_size=PAGE, permissions=perm, name="w0")
    plan = AddressPlan(host_memory=HOST_MEMORY, hbm_bytes=HBM_BYTES, interleave=[both], windows=[w],
                       grants=[Grant("host3", granted, perm)], default_windows=False,
                       limits=DomainLimits(alignment="page", translation_entries=64))
    f = _fabric(plan)
    assert _windows_named(check(f), {"isolation"}) == {("host3", "w0")}
    for op in ("read", "write"):
        with pytest.raises(TranslationError, match="may not read"):
            f.translate("host3", (1 << 50) + 256, op)
