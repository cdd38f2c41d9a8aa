"""Audit (session 18): hostile explicit address plans and degraded fabrics, against a brute force.

Hypothesis draws explicit-layout plans on a ring of 6 chips (3 host domains of 2): regions
placed anywhere, some at or past the end of the address width, unaligned, overlapping, of
size 0 or negative; windows given by ``global_base`` (both alignment rules, pages that are no
power of two, offsets at and past a region's end, local bases at the width's end or on top of
another window); grants of every target kind; then failed chips and cut ring links. The
reference below is written from the module docstrings alone (``fabric/_address.py`` region
rules, ``fabric/_domains.py`` window and grant rules, ``fabric/_check.py`` ``unreachable``,
``fabric/_access.py`` and ``fabric/_forwarding.py``: a host's DRAM is served by its first
chip), by linear scans and networkx paths. It predicts every region and window fault, every
translation (scalar and vectorized) at every window's and region's edges (one before, first,
last, one past) and at the width's edges up to 2**64, the inverse and reach questions, and on
the degraded fabric every access's outcome and path, every forwarded path and every
``unreachable`` finding. Session 18's hunt ran these at 800-1,500 draws each with no
difference; they stay as regression properties at a few dozen draws.
"""

import networkx as nx
import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from routing_brute import memory_server

from fabric import (
    AddressMapError,
    AddressPlan,
    DomainLimits,
    Fabric,
    Grant,
    GraphError,
    NodeError,
    Region,
    RoutingError,
    TranslationError,
    Window,
    access,
    check,
)
from fabric._forwarding import forwarding_tables

K, MiB, GiB = 4096, 1 << 20, 1 << 30
CHIPS = [f"chip{r}" for r in range(6)]
HOSTS = ["host0", "host1", "host2"]
HOME = {**{c: f"host{r // 2}" for r, c in enumerate(CHIPS)}, **{h: h for h in HOSTS}}
RING = [(CHIPS[i], CHIPS[(i + 1) % 6]) for i in range(6)]
SAFE = 1 << 62                    # the int64-safe bound the window rows must stay inside
SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))


def _fabric(plan):
    G = nx.cycle_graph(CHIPS)
    for c in CHIPS:
        G.nodes[c].update(kind="chip", host=HOME[c])
    nx.set_edge_attributes(G, 25e9, "bandwidth")
    nx.set_edge_attributes(G, 1e-7, "latency")
    return Fabric.from_graph(G, chip="tpu-v4").replace(address_plan=plan)      # 32 GiB HBM


def _pow2ceil(x):
    return 1 << (x - 1).bit_length()


@st.composite
def plans(draw, hostile=True):
    width = draw(st.sampled_from([40, 48, 57, 62]))
    top = 1 << width
    rate = draw(st.one_of(st.just(0.0), st.floats(0, 0.12))) if hostile else 0.0

    def bad():
        return rate > 0 and draw(st.floats(0, 1)) < rate

    kinds = {**{c: ["hbm", "dram", "mmio"] for c in CHIPS},
             **{h: ["dram", "storage", "mmio"] for h in HOSTS}}
    regions, cursor = [], draw(st.sampled_from([0, GiB, 1 << 35]))
    for i in range(draw(st.integers(1, 6))):
        owner = draw(st.sampled_from(CHIPS + HOSTS))
        size = draw(st.sampled_from([K, 2 * K, 64 * K, MiB, 3 * MiB, GiB]))
        base = cursor + draw(st.sampled_from([0, 0, K, GiB]))
        if bad():
            base = draw(st.sampled_from([top - size, top - K, top, SAFE - K, base + 5,
                                         max(0, base - K), 0]))
        if bad():
            size = draw(st.sampled_from([5 * K + 1, 0, -K, top, 1 << 63]))
        cursor = -(-max(cursor, base + max(size, 0)) // GiB) * GiB
        regions.append(Region(base, size, owner, kind=draw(st.sampled_from(kinds[owner])),
                              permissions=draw(st.sampled_from(["rw", "r"])), name=f"r{i}"))
    if draw(st.booleans()):                          # a region holding the width's last byte
        regions.append(Region(top - MiB, MiB, draw(st.sampled_from(CHIPS)), kind="dram",
                              name="last"))
    align = draw(st.sampled_from(["page", "size"]))
    wins = []
    for i in range(draw(st.integers(0 if hostile else 3, 6))):
        reg = draw(st.sampled_from(regions))
        page = draw(st.sampled_from([K, K, 64 * K]))
        rs = max(reg.size, K)
        size = draw(st.sampled_from([K, 2 * K, 64 * K, MiB, rs]))
        size = max(page, size - size % page)
        a = max(_pow2ceil(size), page) if align == "size" else page
        off = draw(st.sampled_from([o for o in (0, a, 2 * a, rs - size)
                                    if o % a == 0 and 0 <= o <= rs - size] or [0]))
        lb = draw(st.integers(1, 40)) << 36 if width > 42 else draw(st.integers(1, 15)) << 34
        if bad():
            page = draw(st.sampled_from([3 * K, 1024, 2 * MiB, 1 << 50]))
        if bad():
            off = draw(st.sampled_from([rs, rs - K, K + 1, 2 * rs, -K]))
        if bad():
            size = draw(st.sampled_from([0, 3 * K, rs + K, 5]))
        if bad():
            lb = draw(st.sampled_from([0, top - K, top - size, top, lb + K, lb + 1, -K,
                                       wins[-1].local_base if wins else 0]))
        wins.append(Window(draw(st.sampled_from(HOSTS)), lb, size=size,
                           global_base=reg.base + off, page_size=page,
                           permissions=draw(st.sampled_from(["r", "rw"])), name=f"w{i}"))
    targets = ["*"] + HOSTS + sorted({o for r in regions for o in r.owners}) + \
        [r.name for r in regions]
    some = st.lists(st.builds(Grant, st.sampled_from(HOSTS), st.sampled_from(targets),
                              st.sampled_from(["r", "rw"])), max_size=4)
    grants = None if not hostile and draw(st.booleans()) else draw(st.one_of(st.none(), some))
    return AddressPlan(layout="explicit", width=width, regions=regions, windows=wins,
                       default_windows=False, grants=grants, hbm_bytes=32 * GiB,
                       limits=DomainLimits(alignment=align, translation_entries=64))


# -- the reference ----------------------------------------------------------------------

def _region_at(plan, g):
    hit = [r for r in plan.regions if r.size > 0 and r.base <= g < r.base + r.size]
    return hit[0] if hit else None


def _region_faults(plan):
    """Region name -> the codes the documented rules give it ('pair': it overlaps another)."""
    top, regs = 1 << plan.width, plan.regions
    out = {r.name: set() for r in regs}
    for r in regs:
        if r.size <= 0:
            out[r.name].add("invalid")
            continue
        if r.base < 0 or r.base + r.size > top:
            out[r.name].add("out-of-range")
        if r.base % K or r.size % K:
            out[r.name].add("misaligned")
    live = [r for r in regs if r.size > 0]
    for i, a in enumerate(live):
        for b in live[i + 1:]:
            if a.base < b.base + b.size and b.base < a.base + a.size:
                out[a.name].add("pair")
                out[b.name].add("pair")
    return out


def _good_page(pg):
    return K <= pg <= 256 << 40 and pg & (pg - 1) == 0


def _window_faults(plan, host):
    """Window name -> the codes the documented rules give it ('pair': a local overlap)."""
    top, out, live = 1 << plan.width, {}, []
    for w in (w for w in plan.windows if w.host == host):
        c = out.setdefault(w.name, set())
        ends = (w.local_base, w.local_base + w.size, w.global_base, w.global_base + w.size,
                w.page_size)
        if not all(-SAFE <= v <= SAFE for v in ends):
            c.add("out-of-range")
            continue
        if not _good_page(w.page_size) or w.size <= 0:
            c.add("invalid")
            continue
        live.append(w)
        pg = w.page_size
        a = max(_pow2ceil(w.size), pg) if plan.limits.alignment == "size" else pg
        if w.size % pg or w.local_base % a or w.global_base % a:
            c.add("misaligned")
        if w.local_base < 0 or w.local_base + w.size > top:
            c.add("out-of-range")
        r = _region_at(plan, w.global_base)
        if r is None:
            c.add("dangling-target")
        elif w.global_base + w.size > r.base + r.size:
            c.add("out-of-range")
    for x in live:
        for y in live:
            if x is not y and x.local_base < y.local_base + y.size and \
                    y.local_base < x.local_base + x.size:
                out[x.name].add("pair")
    return out


def _granted(plan, host, reg, op):
    writable = op == "read" or reg.permissions == "rw"
    if plan.grants is None or all(HOME.get(o) == host for o in reg.owners):
        return writable
    mine = [g for g in plan.grants if g.host == host and (op == "read" or g.permissions == "rw")]
    return writable and (any(g.target in ("*", reg.name) for g in mine) or all(
        HOME.get(o) == host or any(g.target in (o, HOME.get(o)) for g in mine)
        for o in reg.owners))


def _translate(plan, host, a, op):
    """(owner, offset, global address) host's local address ``a`` reaches, or None."""
    wins = [w for w in plan.windows if w.host == host and w.local_base <= a < w.local_base + w.size]
    if not wins:
        return None
    (w,) = wins
    g = w.global_base + a - w.local_base
    r = _region_at(plan, g)
    if not _granted(plan, host, r, "read") or op == "write" and not (
            w.permissions == "rw" and _granted(plan, host, r, "write")):
        return None
    return r.owner, g - r.base, g


def _serving_chip(owner, dead, src=None, g=None):
    """The node an owner's memory is reached at, or None when it has failed: a host's DRAM at
    its first live chip, and from a chip ``src`` of fabric ``g`` at the chip the rule of
    routing_brute.memory_server names (session 22)."""
    if owner in HOSTS:
        live = [c for c in CHIPS if HOME[c] == owner and c not in dead]
        if live and src is not None:
            return memory_server(g, owner, src)
        return live[0] if live else None
    return None if owner in dead else owner


def _edges(plan, host=None):
    out = set()
    for r in plan.regions:
        out |= {r.base - 1, r.base, r.base + r.size - 1, r.base + r.size}
    for w in plan.windows:
        if w.host == host:
            out |= {w.local_base - 1, w.local_base, w.local_base + w.size // 2,
                    w.local_base + w.size - 1, w.local_base + w.size}
    return out


def _clean(f):
    return not any(x.severity == "error" and x.code != "isolation" for x in check(f))


def _degrade(f, dead, cut):
    cut = [link for link in cut if not set(link) & set(dead)]
    try:
        return f.without(chips=dead, links=cut)
    except (NodeError, GraphError):
        return None                 # a failure the fabric refuses (the last links of a chip)


# -- the properties -----------------------------------------------------------------------

@settings(SETTINGS, max_examples=50)
@given(plans())
def test_hostile_plans_are_found_and_clean_ones_translate_as_the_reference(plan):
    f = _fabric(plan)
    found = check(f)
    rf = _region_faults(plan)
    for name, codes in rf.items():
        for code in codes - {"pair"}:
            assert any(x.code == code and f"'{name}'" in x.message for x in found), (name, code)
    assert any("pair" in c for c in rf.values()) == any(
        x.code == "overlap" and x.message.startswith("region") for x in found)
    if any(rf.values()):
        with pytest.raises(AddressMapError):
            _ = f.address_map
        return
    amap = f.address_map
    wf = {h: _window_faults(plan, h) for h in HOSTS}
    for h in HOSTS:
        for name, codes in wf[h].items():
            got = {x.code for x in found if f"'{name}'" in x.message and h in x.message} - {
                "overlap", "roundtrip", "alias", "isolation", "too-many-entries"}
            assert got == codes - {"pair"}, (h, name, got, codes)
        pairs = any("pair" in c for c in wf[h].values())
        assert pairs == any(x.code == "overlap" and x.message.startswith(f"{h} window")
                            for x in found), h
    if any(c for h in HOSTS for c in wf[h].values()):
        for h in HOSTS:            # every host with windows of its own is checked at build
            with pytest.raises(AddressMapError):
                f.host_domains[h]
        return
    top = 1 << plan.width
    for h in HOSTS:
        d = f.host_domains[h]
        probes = sorted(_edges(plan, h) | {0, 1, top - 1, top, SAFE, 2**63 - 1, 2**63,
                                           2**64 - 1, 2**64, -1})
        inside = [a for a in probes if 0 <= a < top]
        for op in ("read", "write"):
            many = d.translate_many(np.array(inside, dtype=np.int64), op, unmapped="mask")
            for j, a in enumerate(inside):
                want = _translate(plan, h, a, op)
                try:
                    t = f.translate(h, a, op)
                    got = (t.owner, t.offset, t.global_address)
                except TranslationError:
                    got = None
                assert got == want, (h, hex(a), op)
                assert bool(many.ok[j]) == (want is not None)
                if want is not None:
                    assert (amap.owners[many.owner[j]], int(many.offset[j]),
                            int(many.global_address[j])) == want
            for a in (a for a in probes if not 0 <= a < top):
                with pytest.raises(TranslationError, match="width|negative|>= 0"):
                    f.translate(h, a, op)
                if 0 <= a < 2**64:
                    with pytest.raises(TranslationError, match="width"):
                        d.translate_many(np.array([a], dtype=np.uint64), op)
            maps = d.maps(np.array(inside, dtype=np.int64), op)
            for j, g in enumerate(inside):
                mine = [w for w in plan.windows
                        if w.host == h and w.global_base <= g < w.global_base + w.size]
                local = sorted(g - w.global_base + w.local_base for w in mine)
                assert sorted(d.local_addresses(g)) == local, (h, hex(g))
                reached = any(_translate(plan, h, a, op) is not None for a in local)
                assert bool(maps[j]) == reached, (h, hex(g), op)
                if _region_at(plan, g) is None:
                    with pytest.raises((AddressMapError, TranslationError)):
                        d.reach(g, op)
                elif reached:
                    assert d.reach(g, op).global_address == g
                else:
                    with pytest.raises(TranslationError):
                        d.reach(g, op)


@SETTINGS
@given(plans(hostile=False), st.lists(st.sampled_from(CHIPS), max_size=3, unique=True),
       st.lists(st.sampled_from(RING), max_size=2, unique=True),
       st.sampled_from(["load", "store"]))
def test_accesses_and_forwarding_on_a_degraded_fabric_match_the_reference(plan, dead, cut, op):
    f = _fabric(plan)
    assume(_clean(f))
    g = _degrade(f, dead, cut)
    assume(g is not None)
    G, ft = g.graph, forwarding_tables(g)
    probes = sorted(a for a in _edges(plan) if 0 <= a < 1 << plan.width)
    gop = "read" if op == "load" else "write"
    for src in CHIPS:
        if src in dead:
            with pytest.raises(NodeError):
                access(g, src, probes[0], op)
            continue
        h = HOME[src]
        for addr in probes:
            r = _region_at(plan, addr)
            try:
                got, err = access(g, src, addr, op), None
            except (TranslationError, AddressMapError, RoutingError) as e:
                got, err = None, e
            try:
                path, ferr = ft.forward(src, addr), None
            except (AddressMapError, RoutingError) as e:
                path, ferr = None, e
            if r is None:
                assert isinstance(err, (AddressMapError, TranslationError)), (src, hex(addr))
                assert isinstance(ferr, AddressMapError), (src, hex(addr))
                continue
            tgt = _serving_chip(r.owner, dead, src, g)
            routed = tgt is not None and nx.has_path(G, src, tgt)
            if routed:
                assert ferr is None and list(path) == (
                    [src] if src == tgt else list(g.route(src, tgt))), (src, hex(addr))
            else:
                assert isinstance(ferr, RoutingError), (src, hex(addr), ferr)
            local = [w.local_base + addr - w.global_base for w in plan.windows
                     if w.host == h and w.global_base <= addr < w.global_base + w.size]
            # an access of 64 B (its default size): every byte in the first's region and in
            # one window that permits it (session 24, fabric._access._span)
            last = addr + 63
            whole = [w.local_base + addr - w.global_base for w in plan.windows
                     if w.host == h and w.global_base <= addr and last < w.global_base + w.size]
            if not any(_translate(plan, h, a, gop) is not None for a in local):
                assert isinstance(err, TranslationError), (src, hex(addr), err)
            elif _region_at(plan, last) is not r:
                assert isinstance(err, AddressMapError) and "runs past the end of" in str(err)
            elif not any(_translate(plan, h, a, gop) is not None for a in whole):
                assert isinstance(err, TranslationError) and "runs past the end of" in str(err)
            elif tgt is None:
                assert isinstance(err, RoutingError) and "has failed" in str(err)
            elif not routed:
                assert isinstance(err, RoutingError), (src, hex(addr), err)
            else:
                assert err is None, (src, hex(addr), op, err)
                assert got.target == tgt and got.path[0] == src and got.path[-1] == tgt
                assert all(G.has_edge(u, v) for u, v in zip(got.path, got.path[1:]))
                assert len(got.path) - 1 == nx.shortest_path_length(G, src, tgt)
                assert 0 < got.total < float("inf")


@SETTINGS
@given(plans(hostile=False), st.lists(st.sampled_from(CHIPS), max_size=3, unique=True),
       st.lists(st.sampled_from(RING), max_size=3, unique=True))
def test_unreachable_findings_on_a_degraded_fabric_match_the_reference(plan, dead, cut):
    import re
    f = _fabric(plan)
    assume(_clean(f))
    g = _degrade(f, dead, cut)
    assume(g is not None)
    alive = [h for h in HOSTS if any(HOME[c] == h and c not in dead for c in CHIPS)]
    gone, noroute, partial = set(), set(), set()
    for h in alive:
        chips = [c for c in CHIPS if HOME[c] == h and c not in dead]
        for w in (w for w in plan.windows if w.host == h):
            r = _region_at(plan, w.global_base)
            if any(_serving_chip(o, dead) is None for o in r.owners):
                gone.add((h, w.name))
                continue
            for o in (o for o in r.owners if HOME.get(o) != h):
                # a host's DRAM is served by any of its live chips the requester reaches
                nodes = ([c for c in CHIPS if HOME[c] == o and c not in dead] if o in HOSTS
                         else [o])
                label = o if len(nodes) > 1 else nodes[0]
                reach = [any(nx.has_path(g.graph, c, n) for n in nodes) for c in chips]
                if not any(reach):
                    noroute.add((h, label))
                elif not all(reach):
                    partial.add((h, label))
    found = [x for x in check(g) if x.code == "unreachable"]
    errors = [x.message for x in found if x.severity == "error"]
    assert {m.groups() for m in (re.match(r"(host\d) window '([^']+)': reaches .* which has "
                                          r"failed", e) for e in errors) if m} == gone
    pat = r"no route from any chip of (host\d) to (?:'([^']+)'|any chip of (host\d))"
    got = {(m.group(1), m.group(2) or m.group(3)) for m in (re.search(pat, e) for e in errors)
           if m}
    assert got == noroute
    for h, node in partial:
        label = f"any chip of {node}" if node in HOSTS else repr(node)
        assert any(x.severity == "warning" and h in x.message and label in x.message
                   for x in found), (h, node)
