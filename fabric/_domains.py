"""Host domains, shadow windows, cross-domain translation and protection.

Each host domain has a local address space. Its own chips and DRAM appear
through *apertures*; a remote chip (or part of one, or memory elsewhere)
appears through a **shadow window** ``(local_base, size, global_base,
page_size, permissions)``: a local access at ``a`` inside the window goes to
the global address ``global_base + (a - local_base)``, as through a PCIe
non-transparent bridge window (``remote = xlat + (local - window base)``, Linux
``include/linux/ntb.h``) or a Gen-Z requester ZMMU page grid. Both kinds are a
:class:`Window`; a window is a *shadow* window when its target region has an
owner outside the domain, and only shadow windows use translation entries.

Rules a window must follow (:func:`window_findings`, docs/sources.md s.3):

* ``page_size`` a power of two from 4 KiB to 256 TiB (the ZMMU's page sizes);
  ``size`` a whole number of pages.
* alignment: with ``DomainLimits.alignment == "size"`` (NTB windows, the default
  in the owner-bits layout) ``local_base`` and ``global_base`` are multiples of
  the window size rounded up to a power of two (an NTB aperture is a power of two
  at least 4 KiB); with ``"page"`` (ZMMU page grids, the default in the other
  layouts) multiples of ``page_size``.
* the window lies inside the local address width, starts inside a region (else
  *dangling*) and ends inside the same region (else *out of range*).
* windows of one domain do not overlap locally; two windows onto the same global
  bytes are an *alias* (allowed, a warning).
* at most ``DomainLimits.translation_entries`` shadow windows per domain.

Protection is checked at the responder: a :class:`Grant` lets a domain read
(``"r"``) or read and write (``"rw"``) a region (a tenant partition is a set of
grants). A translation that reaches a region the domain is not granted, or a
store through a read-only window or into read-only memory, raises
:class:`fabric.TranslationError`.

The default plan (``AddressPlan.default_windows``) gives every host, in this
local order: apertures onto its own chips' HBM, a shadow window onto every remote
chip's HBM in rank order (each in a slot of the chip window size rounded up to a
power of two), then an aperture onto its own DRAM.

Examples
--------
>>> import numpy as np
>>> import topologies
>>> f = topologies.build("sd200-ultra")          # 16 hosts of 8 chips, default plan
>>> d = f.host_domains["host1"]
>>> d.n_entries                                  # a shadow window per remote chip
120
>>> t = f.translate("host1", 0x10_0000_1000)     # local slot 1: host1's second chip
>>> t.owner, hex(t.global_address), hex(t.offset)
('chip9', '0x9000001000', '0x1000')
>>> tr = f.translate_many("host1", np.array([0x1000, 0x80_0000_0000]))
>>> [f.address_map.owners[o] for o in tr.owner]  # slot 8: the first remote chip, chip0
['chip8', 'chip0']
"""

import bisect
import dataclasses
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from ._address import (
    _INT64_SAFE,
    MAX_PAGE_SIZE,
    MIN_PAGE_SIZE,
    PERMISSIONS,
    AddressPlan,
    Finding,
    _as_address_array,
    _is_int,
    _pow2_ceil,
    _shift_table,
    validate_address,
)
from ._errors import AddressMapError, NodeError, TranslationError
from ._params import Parameter
from ._units import MiB, format_address, format_size

__all__ = [
    "ALIGNMENTS",
    "DEFAULT_PAGE_SIZE",
    "TRANSLATION_ENTRIES",
    "DomainLimits",
    "Grant",
    "HostDomain",
    "Translation",
    "Translations",
    "Window",
]

TRANSLATION_ENTRIES = Parameter(
    "domain.translation_entries", 1024, "",
    "assumption: shadow-window translation entries per host domain, sized so that one host can "
    "map every chip of a 1024-accelerator UALink 1.0 pod. Real requesters hold fewer windows "
    "each: an NTB port exposes a handful of memory windows (Linux include/linux/ntb.h, "
    "ntb_mw_count), a CXL port a small array of HDM decoders; a Gen-Z requester ZMMU holds "
    "page-table entries and refuses new ones when exhausted (docs/sources.md s.3)")
DEFAULT_PAGE_SIZE = Parameter(
    "domain.page_size", 2 * MiB, "B",
    "assumption: the largest translation page the default plan uses (a 2 MiB large page); "
    "within the Gen-Z ZMMU range 4 KiB..256 TiB (docs/sources.md s.3)")
ALIGNMENTS = ("size", "page")


@dataclass(frozen=True)
class DomainLimits:
    """Hardware limits of every host domain.

    Parameters
    ----------
    translation_entries : int
        Most shadow windows one domain may hold (:data:`TRANSLATION_ENTRIES`).
    page_size : int
        Largest page the default plan uses, and the page of a window that names
        none (:data:`DEFAULT_PAGE_SIZE`).
    alignment : {"size", "page"} or None
        Window alignment rule (module docstring); None: ``"size"`` in the owner-bits
        layout, ``"page"`` otherwise.
    """

    translation_entries: int = TRANSLATION_ENTRIES.value
    page_size: int = DEFAULT_PAGE_SIZE.value
    alignment: str = None
    where: str = field(default=None, compare=False, repr=False)

    def parameters(self):
        """The limits as :class:`~fabric.Parameter` records."""
        return (dataclasses.replace(TRANSLATION_ENTRIES, value=self.translation_entries),
                dataclasses.replace(DEFAULT_PAGE_SIZE, value=self.page_size))


@dataclass(frozen=True)
class Window:
    """One translation window of a host domain.

    Give the target either as ``global_base`` or as ``target`` (a region name,
    or an owner with one region or one ``hbm`` region) plus ``target_offset``.
    ``size`` defaults to the rest of the target region, ``page_size`` to the
    domain's :attr:`DomainLimits.page_size`.
    """

    host: str
    local_base: int
    size: int = None
    global_base: int = None
    target: str = None
    target_offset: int = 0
    page_size: int = None
    permissions: str = "rw"
    name: str = None
    where: str = field(default=None, compare=False, repr=False)

    def __post_init__(self):
        # Kinds are checked here (a TypeError); values are the checker's business.
        _check_types(self, ints=("local_base",),
                     optional_ints=("size", "global_base", "target_offset", "page_size"),
                     strs=("host", "permissions"), optional_strs=("target", "name"))


def _check_types(obj, ints=(), optional_ints=(), strs=(), optional_strs=()):
    name = type(obj).__name__
    for key in ints + optional_ints:
        v = getattr(obj, key)
        if not (_is_int(v) or (v is None and key in optional_ints)):
            raise TypeError(f"{name} {key} must be an int, got {v!r}")
    for key in strs + optional_strs:
        v = getattr(obj, key)
        if not (isinstance(v, str) or (v is None and key in optional_strs)):
            raise TypeError(f"{name} {key} must be a str, got {v!r}")


@dataclass(frozen=True)
class Grant:
    """Domain ``host`` may access ``target`` with ``permissions`` (``"r"`` or ``"rw"``).

    ``target`` is a region name, an owner (every region it holds memory in), or
    ``"*"`` (every region).
    """

    host: str
    target: str
    permissions: str = "rw"
    where: str = field(default=None, compare=False, repr=False)

    def __post_init__(self):
        _check_types(self, strs=("host", "target", "permissions"))


_new_tuple = tuple.__new__


class Translation(NamedTuple):
    """The result of translating one host-local address.

    A named tuple rather than a dataclass: scalar translation is on a hot path
    (:mod:`benchmarks.bench_address`), and a tuple is built several times faster.
    """

    host: str
    local_address: int
    global_address: int
    owner: object
    offset: int
    region: str
    window: str


@dataclass(frozen=True)
class Translations:
    """Vectorized translations: int64 arrays of equal length.

    ``owner`` indexes :attr:`AddressMap.owners`, ``window`` the domain's
    :attr:`HostDomain.windows`; ``offset`` is the offset on the owner. Where
    ``ok`` is False (only with ``unmapped="mask"``) all are -1.
    """

    global_address: np.ndarray
    owner: np.ndarray
    offset: np.ndarray
    window: np.ndarray
    ok: np.ndarray


# -- resolving a plan into per-domain window tables --------------------------------------

class _Table:
    """The windows of one domain as parallel arrays (no validation)."""

    def __init__(self, host, local_base, size, global_base, page_size, writable, names, wheres):
        self.host = host
        self.local_base = np.asarray(local_base, dtype=np.int64)
        self.size = np.asarray(size, dtype=np.int64)
        self.global_base = np.asarray(global_base, dtype=np.int64)
        self.page_size = np.asarray(page_size, dtype=np.int64)
        self.writable = np.asarray(writable, dtype=bool)
        self.names = list(names)
        self.wheres = list(wheres)

    def __len__(self):
        return len(self.local_base)

    def label(self, i):
        return f"{self.host} window {self.names[i]!r}"

    def where(self, i):
        return self.wheres[i] or self.label(i)


def limits_problems(limits):
    """What is wrong with a :class:`DomainLimits` (a list of messages, empty when valid)."""
    out = []
    e = limits.translation_entries
    if not _is_int(e) or e < 0:
        out.append(f"translation_entries must be an int >= 0, got {e!r}")
    p = limits.page_size
    if not _is_int(p) or not MIN_PAGE_SIZE.value <= p <= MAX_PAGE_SIZE.value or p & (p - 1):
        out.append(f"page_size must be a power of two from 4 KiB to 256 TiB, got {p!r}")
    if limits.alignment is not None and limits.alignment not in ALIGNMENTS:
        out.append(f"alignment must be one of {ALIGNMENTS} or unset, got {limits.alignment!r}")
    return out


def _largest_page(size, base, cap):
    """The largest power of two <= cap dividing both size and base, at least 4 KiB."""
    x = size | base | cap
    return max(x & -x, MIN_PAGE_SIZE.value)


def _alignment(plan):
    limits = plan.limits or DomainLimits()
    if limits.alignment is not None:
        return limits.alignment
    return "size" if plan.layout == "owner-bits" else "page"


def _default_tables(fabric, regions, plan):
    """Per host: arrays of the default windows (see module docstring)."""
    limits = plan.limits or DomainLimits()
    hbm = {}
    dram = {}
    for r in regions:
        if not _fits(r.base, r.end):
            continue        # reported as out-of-range by region_findings
        if r.ways == 1 and r.kind == "hbm":
            hbm.setdefault(r.owner, r)
        elif r.ways == 1 and r.kind == "dram":
            dram.setdefault(r.owner, r)
    chips = [c for c in fabric.endpoints if c in hbm]
    if not chips:
        return {h: [] for h in fabric.domains}
    slot = max(max(_pow2_ceil(hbm[c].size) for c in chips), MIN_PAGE_SIZE.value)
    c_base = np.array([hbm[c].base for c in chips], dtype=np.int64)
    c_size = np.array([hbm[c].size for c in chips], dtype=np.int64)
    c_page = np.array([_largest_page(s, b, limits.page_size) for s, b in
                       zip(c_size.tolist(), c_base.tolist())], dtype=np.int64)
    rank = {c: i for i, c in enumerate(chips)}
    out = {}
    for h, members in fabric.domains.items():
        own = [rank[c] for c in members if c in rank]
        own_set = set(own)
        order = own + [i for i in range(len(chips)) if i not in own_set]
        order = np.array(order, dtype=np.int64)
        local = np.arange(len(order), dtype=np.int64) * slot
        parts = [(local, c_size[order], c_base[order], c_page[order],
                  np.ones(len(order), dtype=bool),
                  [str(chips[i]) for i in order.tolist()])]
        if h in dram:
            d = dram[h]
            lb = -(-(len(order) * slot) // _pow2_ceil(d.size)) * _pow2_ceil(d.size)
            page = _largest_page(d.size, d.base, limits.page_size)
            parts.append((np.array([lb]), np.array([d.size]), np.array([d.base]),
                          np.array([page]), np.array([True]), [f"{h}.dram"]))
        out[h] = [_Table(h, np.concatenate([p[0] for p in parts]),
                         np.concatenate([p[1] for p in parts]),
                         np.concatenate([p[2] for p in parts]),
                         np.concatenate([p[3] for p in parts]),
                         np.concatenate([p[4] for p in parts]),
                         [n for p in parts for n in p[5]], [None] * sum(len(p[5]) for p in parts))]
    return out


def _resolve_target(win, by_name, by_owner):
    """global_base of a window given by target name; (base, size, message)."""
    if win.target in by_name:
        reg = by_name[win.target]
    elif win.target in by_owner:
        regs = by_owner[win.target]
        hbm = [r for r in regs if r.kind == "hbm"]
        if len(regs) == 1:
            reg = regs[0]
        elif len(hbm) == 1:
            reg = hbm[0]
        else:
            return None, None, (f"target {win.target!r} owns {len(regs)} regions; name one of "
                                f"{sorted(r.name for r in regs)}")
    else:
        return None, None, f"target {win.target!r} names no region and no owner of one"
    off = win.target_offset
    size = win.size if win.size is not None else reg.size - off
    return reg.base + off, size, None


def resolve_tables(fabric, regions, plan):
    """Window tables per host, and the findings met while resolving them.

    Returns ``(tables, findings)``: ``tables`` maps each host domain to a
    :class:`_Table`; findings are ``invalid`` (unknown host, bad field) and
    ``dangling-target`` (a target name that names nothing).
    """
    findings = []
    limits = plan.limits or DomainLimits()
    parts = _default_tables(fabric, regions, plan) if plan.default_windows else \
        {h: [] for h in fabric.domains}
    by_name = {r.name: r for r in regions}
    by_owner = {}
    for r in regions:
        for o in r.owners:
            by_owner.setdefault(o, []).append(r)
    extra = {h: [] for h in fabric.domains}
    for k, win in enumerate(plan.windows):
        label = f"window {win.name or k!r} of host {win.host!r}"
        where = win.where or label
        if win.host not in extra:
            findings.append(Finding("invalid", "error", f"{label}: no host domain called "
                                    f"{win.host!r}; hosts: {_few(fabric.domains)}", where))
            continue
        if win.permissions not in PERMISSIONS:
            findings.append(Finding("invalid", "error", f"{label}: permissions "
                                    f"{win.permissions!r} is not one of {PERMISSIONS}", where))
            continue
        gb, size = win.global_base, win.size
        if win.target is not None:
            if gb is not None:
                findings.append(Finding("invalid", "error", f"{label}: give global_base or "
                                        "target, not both", where))
                continue
            gb, size, msg = _resolve_target(win, by_name, by_owner)
            if msg:
                findings.append(Finding("dangling-target", "error", f"{label}: {msg}", where))
                continue
        elif gb is None:
            findings.append(Finding("invalid", "error", f"{label}: give global_base or target",
                                    where))
            continue
        if size is None:
            findings.append(Finding("invalid", "error", f"{label}: give a size", where))
            continue
        bad = [(k2, v) for k2, v in (("local_base", win.local_base), ("size", size),
                                    ("global_base", gb)) if not _is_int(v)]
        if bad:
            findings.append(Finding("invalid", "error", f"{label}: {bad[0][0]} must be an int, "
                                    f"got {bad[0][1]!r}", where))
            continue
        page = win.page_size if win.page_size is not None else limits.page_size
        if not _fits(win.local_base, win.local_base + size, gb, gb + size, page):
            findings.append(Finding("out-of-range", "error", f"{label}: local base, global "
                                    "base, size or page size reach beyond 2**62 bytes, past the "
                                    "widest address space", where))
            continue
        extra[win.host].append((win.local_base, size, gb, page, win.permissions == "rw",
                                win.name or f"#{k}", where))
    tables = {}
    for h in fabric.domains:
        t = parts[h][0] if parts[h] else None
        rows = extra[h]
        if t is None and not rows:
            tables[h] = _Table(h, [], [], [], [], [], [], [])
            continue
        cols = list(zip(*rows)) if rows else [[]] * 7
        if t is None:
            tables[h] = _Table(h, *cols)
        else:
            tables[h] = _Table(
                h, np.concatenate([t.local_base, np.asarray(cols[0], dtype=np.int64)]),
                np.concatenate([t.size, np.asarray(cols[1], dtype=np.int64)]),
                np.concatenate([t.global_base, np.asarray(cols[2], dtype=np.int64)]),
                np.concatenate([t.page_size, np.asarray(cols[3], dtype=np.int64)]),
                np.concatenate([t.writable, np.asarray(cols[4], dtype=bool)]),
                t.names + list(cols[5]), t.wheres + list(cols[6]))
    return tables, findings


def _fits(*values):
    return all(-_INT64_SAFE <= v <= _INT64_SAFE for v in values)


def _few(names, k=5):
    names = list(names)
    return ", ".join(map(str, names[:k])) + (", ..." if len(names) > k else "")


def resolve_grants(fabric, regions, plan, index=None):
    """Per host, boolean arrays ``(read, write)`` over ``regions``; and findings.

    ``plan.grants is None``: everything granted. Otherwise a domain may access
    what its grants name plus every region all of whose owners are its own chips
    or its host; writes also need the region to be writable (``permissions "rw"``).
    """
    findings = []
    n = len(regions)
    writable = np.array([r.permissions == "rw" for r in regions], dtype=bool)
    if plan.grants is None:
        return {h: (np.ones(n, dtype=bool), writable.copy()) for h in fabric.domains}, findings
    index = index or _RegionIndex(regions, fabric)
    out = {}
    for h, k in index.domain_index.items():
        own = index.home[:-1] == k
        out[h] = [own.copy(), own.copy()]
    by_name = {r.name: i for i, r in enumerate(regions)}
    for k, g in enumerate(plan.grants):
        where = g.where or f"grant #{k} ({g.host} -> {g.target})"
        if g.host not in out:
            findings.append(Finding("invalid", "error", f"grant of {g.target!r} to {g.host!r}: "
                                    f"no host domain called {g.host!r}", where))
            continue
        if g.permissions not in PERMISSIONS:
            findings.append(Finding("invalid", "error", f"grant of {g.target!r} to {g.host!r}: "
                                    f"permissions {g.permissions!r} is not one of "
                                    f"{PERMISSIONS}", where))
            continue
        if g.target == "*":
            idx = list(range(n))
        elif g.target in by_name:
            idx = [by_name[g.target]]
        else:
            idx = [i for i, r in enumerate(regions) if g.target in r.owners]
        if not idx:
            findings.append(Finding("invalid", "error", f"grant of {g.target!r} to {g.host!r}: "
                                    "it names no region and no owner of one", where))
            continue
        out[g.host][0][idx] = True
        if g.permissions == "rw":
            out[g.host][1][idx] = True
    return {h: (r, w & writable) for h, (r, w) in out.items()}, findings


# -- the findings of one domain's windows ------------------------------------------------

class _RegionIndex:
    """Per-region facts as arrays, computed once per plan, and a finder for window targets.

    Works on a possibly broken region list (overlaps, values past int64). Arrays
    over regions carry one sentinel entry at the end (index -1, for "no region").
    ``home[i]`` is the index (in ``fabric.domains`` order) of the host domain that
    owns all of region ``i`` (its chips, or the host itself), or -1.
    """

    def __init__(self, regions, fabric):
        order = sorted((i for i, r in enumerate(regions) if _fits(r.base, r.end)),
                       key=lambda i: regions[i].base)
        self.order = np.array(order, dtype=np.int64)
        self.domain_index = {h: k for k, h in enumerate(fabric.domains)}
        dom_of = dict(self.domain_index)
        for h, chips in fabric.domains.items():
            for c in chips:
                dom_of.setdefault(c, self.domain_index[h])
        home = []
        for r in regions:
            ks = {dom_of.get(o, -1) for o in r.owners}
            home.append(ks.pop() if len(ks) == 1 else -1)
        self.home = np.array(home + [-2], dtype=np.int64)   # sentinel: nobody's
        self.rw = np.array([r.permissions == "rw" for r in regions] + [False], dtype=bool)
        self.interleaved = np.array([r.ways > 1 for r in regions] + [False], dtype=bool)
        # every region's end, clipped into int64 (a region beyond 2**62 is never a target)
        self.end_all = np.array([min(r.end, _INT64_SAFE) for r in regions] + [0],
                                dtype=np.int64)
        self.base = np.array([regions[i].base for i in order], dtype=np.int64)
        self.end = np.array([regions[i].end for i in order], dtype=np.int64)

    def find(self, g):
        """Region index (into the caller's list) holding each address, -1 for none."""
        if len(self.base) == 0:
            return np.full(len(g), -1, dtype=np.int64)
        k = np.searchsorted(self.base, g, side="right") - 1
        ok = (k >= 0) & (g < self.end[np.maximum(k, 0)])
        return np.where(ok, self.order[np.maximum(k, 0)], -1)


def _running_partner(starts, ends):
    """For intervals sorted by start: per interval, an earlier one it overlaps (or -1)."""
    n = len(starts)
    if n < 2:
        return np.full(n, -1, dtype=np.int64)
    best = np.maximum.accumulate(ends)
    # the interval holding the running maximum of ends before each position
    holder = np.zeros(n, dtype=np.int64)
    is_new = np.concatenate([[True], ends[1:] > best[:-1]])
    holder = np.maximum.accumulate(np.where(is_new, np.arange(n), 0))
    prev_best = np.concatenate([[np.iinfo(np.int64).min], best[:-1]])
    prev_holder = np.concatenate([[-1], holder[:-1]])
    return np.where(starts < prev_best, prev_holder, -1)


def window_findings(table, regions, region_index, grants, plan):
    """Every fault of one domain's windows (see the module docstring for the rules).

    Returns ``(findings, target)``: ``target[i]`` is the index into ``regions`` of
    the region window ``i`` starts in (-1 when dangling).
    """
    out = []
    limits = plan.limits or DomainLimits()
    width = plan.width
    n = len(table)
    lb, sz, gb, pg = table.local_base, table.size, table.global_base, table.page_size
    target = region_index.find(gb) if n else np.zeros(0, dtype=np.int64)

    def add(code, i, msg, severity="error"):
        out.append(Finding(code, severity, f"{table.label(i)}: {msg}", table.where(i)))

    good_page = (pg >= MIN_PAGE_SIZE.value) & (pg <= MAX_PAGE_SIZE.value) & ((pg & (pg - 1)) == 0)
    for i in np.flatnonzero(~good_page).tolist():
        add("invalid", i, f"page size {int(pg[i])} must be a power of two from 4 KiB to 256 TiB")
    for i in np.flatnonzero(sz <= 0).tolist():
        add("invalid", i, f"size {int(sz[i])} must be > 0")
    live = (sz > 0) & good_page
    mode = _alignment(plan)
    if mode == "size":
        uniq, inv = np.unique(sz, return_inverse=True)    # few distinct sizes: no per-window loop
        up = np.array([_pow2_ceil(int(x)) if x > 0 else 1 for x in uniq.tolist()], dtype=np.int64)
        align = np.maximum(up[inv.reshape(-1)], pg)
    else:
        align = pg
    safe_pg = np.where(good_page, pg, 1)
    bad = live & ((sz % safe_pg != 0) | (lb % align != 0) | (gb % align != 0))
    for i in np.flatnonzero(bad).tolist():
        what = []
        if sz[i] % pg[i]:
            what.append(f"size {int(sz[i])} is not a whole number of {format_size(int(pg[i]))} "
                        "pages")
        rule = "window size rounded up to a power of two" if mode == "size" else "page size"
        for key, v in (("local_base", lb[i]), ("global_base", gb[i])):
            if v % align[i]:
                what.append(f"{key} {format_address(int(v))} is not a multiple of "
                            f"{format_size(int(align[i]))} (the {rule})")
        add("misaligned", i, "; ".join(what))
    limit = 1 << width
    for i in np.flatnonzero(live & ((lb < 0) | (lb + sz > limit))).tolist():
        add("out-of-range", i, f"local range [{format_address(int(lb[i]))}, "
            f"{format_address(int(lb[i] + sz[i]))}) leaves the {width}-bit address width")
    for i in np.flatnonzero(live & (target < 0)).tolist():
        add("dangling-target", i, f"global base {format_address(int(gb[i]))} is in no region")
    hit = live & (target >= 0)
    if hit.any():
        r_end = region_index.end_all[target]
        for i in np.flatnonzero(hit & (gb + sz > r_end)).tolist():
            reg = regions[target[i]]
            add("out-of-range", i, f"global range [{format_address(int(gb[i]))}, "
                f"{format_address(int(gb[i] + sz[i]))}) runs past the end of {reg}")
        read, write = grants
        t = np.where(hit, target, 0)
        no_read = hit & ~read[t]
        rw_perm = region_index.rw[t]
        no_write = hit & ~no_read & table.writable & ~write[t] & rw_perm
        for i in np.flatnonzero(no_read).tolist():
            add("isolation", i, f"reaches {regions[target[i]]}, which {table.host} is not "
                "granted")
        for i in np.flatnonzero(no_write).tolist():
            add("isolation", i, f"is read-write onto {regions[target[i]]}, which {table.host} "
                "may only read (make the window read-only or grant rw)")
    idx = np.flatnonzero(live)
    if len(idx) > 1:
        o = idx[np.argsort(lb[idx], kind="stable")]
        partner = _running_partner(lb[o], lb[o] + sz[o])
        for j in np.flatnonzero(partner >= 0).tolist():
            i, p = int(o[j]), int(o[partner[j]])
            add("overlap", i, f"local range [{format_address(int(lb[i]))}, "
                f"{format_address(int(lb[i] + sz[i]))}) overlaps window "
                f"{table.names[p]!r} [{format_address(int(lb[p]))}, "
                f"{format_address(int(lb[p] + sz[p]))})")
        o = idx[np.argsort(gb[idx], kind="stable")]
        partner = _running_partner(gb[o], gb[o] + sz[o])
        for j in np.flatnonzero(partner >= 0).tolist():
            i, p = int(o[j]), int(o[partner[j]])
            add("alias", i, f"maps global bytes [{format_address(int(max(gb[i], gb[p])))}, "
                f"{format_address(int(min(gb[i] + sz[i], gb[p] + sz[p])))}) that window "
                f"{table.names[p]!r} also maps", severity="warning")
    if n:
        dom = region_index.domain_index[table.host]
        count = int(((target >= 0) & (region_index.home[target] != dom)).sum())
        if count > limits.translation_entries:
            out.append(Finding(
                "too-many-entries", "error",
                f"host {table.host} needs {count} translation entries (shadow windows) but a "
                f"domain holds at most {limits.translation_entries}",
                f"{limits.where}, host {table.host}" if limits.where else f"host {table.host}"))
    return out, target


# -- the strict, fast translator -------------------------------------------------------

class _WindowIndex:
    """Find the window holding each local address (a shift table, or binary search)."""

    def __init__(self, local_base, size, width):
        order = np.argsort(local_base, kind="stable")
        self.order = order
        self.base = local_base[order]
        self.end = (local_base + size)[order]
        self.n = len(order)
        self.table = _shift_table(self.base, self.end, width) if self.n else None

    def find(self, a):
        """Sorted-window position per address; ``n`` (the sentinel) where none starts."""
        if self.table is not None:
            s, table = self.table
            slot = a >> s
            np.minimum(slot, len(table) - 1, out=slot)
            return table[slot]
        k = np.searchsorted(self.base, a, side="right") - 1
        k[k < 0] = self.n
        return k


class HostDomain:
    """One host's local address space: its windows, grants and translator.

    Built by :attr:`fabric.Fabric.host_domains`; construction refuses a domain
    with any error except ``isolation`` (a window onto a region the domain is
    not granted is allowed to exist; using it raises :class:`TranslationError`).

    Attributes
    ----------
    name : str
    chips : tuple
        The domain's own chips.
    address_map : AddressMap
    windows : tuple of Window
        Resolved (``global_base`` and ``size`` filled in), sorted by local base.
    """

    def __init__(self, name, chips, table, address_map, grants, plan, index):
        self.name = name
        self.chips = tuple(chips)
        self.address_map = address_map
        regions = list(address_map.regions)
        findings, target = window_findings(table, regions, index, grants, plan)
        errors = [f for f in findings if f.severity == "error" and f.code != "isolation"]
        if errors:
            more = f" (and {len(errors) - 10} more)" if len(errors) > 10 else ""
            raise AddressMapError(f"invalid host domain {name!r}: " + "; ".join(
                f"{f.code}: {f.message}" for f in errors[:10]) + more)
        self.width = plan.width
        idx = _WindowIndex(table.local_base, table.size, self.width)
        o = idx.order
        self._index = idx
        self._names = [table.names[i] for i in o.tolist()]
        self._target = target[o]
        self._table = table
        self._order = o
        read, write = grants
        amap = address_map
        lb, sz, gb = table.local_base[o], table.size[o], table.global_base[o]
        n = len(o)
        self._lb, self._sz, self._gb = lb, sz, gb
        self._writable = table.writable[o]
        self._can_read = read[self._target] if n else np.zeros(0, bool)
        self._can_write = (write[self._target] & self._writable) if n else np.zeros(0, bool)
        # sentinel at index n: end 0, so an address that finds no window fails "a < end"
        end = np.append(lb + sz, 0)
        self._end = {"read": np.where(np.append(self._can_read, False), end, 0),
                     "write": np.where(np.append(self._can_write, False), end, 0)}
        self._delta = np.append(gb - lb, 0)
        reg_base = amap._bases[self._target] if n else np.zeros(0, np.int64)
        self._offdelta = np.append(gb - lb - reg_base, -1)
        self._owner = np.append(amap._owner[self._target] if n else np.zeros(0, np.int64), -1)
        self._interleaved = np.append(index.interleaved[self._target], False)
        self._any_interleaved = bool(self._interleaved.any())
        self.shadow = index.home[self._target] != index.domain_index[name]
        self._scalar_tables()

    def __repr__(self):
        return (f"HostDomain({self.name!r}, chips={len(self.chips)}, "
                f"windows={len(self._names)}, shadow={int(self.shadow.sum())})")

    @property
    def windows(self):
        """The resolved windows, sorted by local base (a tuple of :class:`Window`)."""
        t, o = self._table, self._order.tolist()
        return tuple(Window(self.name, int(t.local_base[i]), int(t.size[i]),
                            int(t.global_base[i]), page_size=int(t.page_size[i]),
                            permissions="rw" if t.writable[i] else "r", name=t.names[i],
                            where=t.wheres[i]) for i in o)

    @property
    def n_entries(self):
        """Translation entries in use: the number of shadow windows."""
        return int(self.shadow.sum())

    def _fail(self, a, win, op):
        """The reason translating local address ``a`` (window position ``win``) fails."""
        if win == len(self._names) or a >= self._lb[win] + self._sz[win]:
            return (f"host {self.name}: local address {format_address(a)} is in no window "
                    "of this domain")
        reg = self.address_map.regions[self._target[win]]
        if not self._can_read[win]:
            return (f"host {self.name}: window {self._names[win]!r} reaches {reg}, which "
                    f"{self.name} is not granted")
        if not self._writable[win]:
            return (f"host {self.name}: store to {format_address(a)} through read-only window "
                    f"{self._names[win]!r}")
        if reg.permissions != "rw":
            return f"host {self.name}: store to read-only {reg}"
        return (f"host {self.name}: window {self._names[win]!r} reaches {reg}, which "
                f"{self.name} may only read")

    def _scalar_tables(self):
        """Python-list copies of the translator's arrays for the scalar path."""
        amap = self.address_map
        n = len(self._names)
        table = self._index.table
        self._s_shift = table[0] if table is not None else None
        self._s_table = table[1].tolist() if table is not None else None
        self._s_slots = len(table[1]) if table is not None else 0
        self._s_base = self._lb.tolist()
        self._s_end = {op: e.tolist() for op, e in self._end.items()}
        self._s_delta = self._delta.tolist()
        self._s_offdelta = self._offdelta.tolist()
        self._s_interleaved = self._interleaved.tolist()
        self._s_owner = [amap.owners[o] if o >= 0 else None for o in self._owner.tolist()]
        self._s_region = [amap.regions[t].name for t in self._target.tolist()] + [None]
        self._s_n = n
        self._s_limit = 1 << self.width
        self._fast = self._make_fast()

    def translate(self, local_address, op="read"):
        """Translate one local address; ``op`` is ``"read"`` or ``"write"``.

        Returns a :class:`Translation`.

        Raises
        ------
        TranslationError
            If the address is malformed or outside the width, in no window, or
            the access is not granted (the message says which).
        """
        return self._fast(local_address, op)

    def _make_fast(self):
        """The scalar translator as a closure over Python lists.

        Local names in a closure are cheaper than attribute look-ups on ``self``;
        scalar translation is on a hot path (``benchmarks/bench_address.py``).
        """
        name, width, limit = self.name, self.width, self._s_limit
        shift, table, slots = self._s_shift, self._s_table, self._s_slots
        base, n = self._s_base, self._s_n
        end_read, end_write = self._s_end["read"], self._s_end["write"]
        delta, offdelta, inter = self._s_delta, self._s_offdelta, self._s_interleaved
        owners, regions, names = self._s_owner, self._s_region, self._names
        lookup, fail, bisect_right = self.address_map.lookup, self._fail, bisect.bisect_right

        def fast(a, op):
            if type(a) is not int or a < 0 or a >= limit:
                try:
                    a = validate_address(a, width, what="local address")
                except AddressMapError as e:
                    raise TranslationError(str(e)) from None
            if op == "read":
                ends = end_read
            elif op == "write":
                ends = end_write
            else:
                raise ValueError(f"op must be 'read' or 'write', got {op!r}")
            if shift is not None:
                slot = a >> shift
                win = table[slot if slot < slots else -1]
            else:
                win = bisect_right(base, a) - 1
                if win < 0:
                    win = n
            if a >= ends[win]:
                raise TranslationError(fail(a, win, op))
            g = a + delta[win]
            if inter[win]:
                loc = lookup(g)
                owner, offset = loc.owner, loc.offset
            else:
                owner, offset = owners[win], a + offdelta[win]
            # tuple.__new__ skips the named tuple's generated __new__ (a measurable share)
            return _new_tuple(Translation, (name, a, g, owner, offset, regions[win], names[win]))

        return fast

    def translate_many(self, local_addresses, op="read", *, unmapped="raise"):
        """Vectorized :meth:`translate` of an integer numpy array.

        ``unmapped="raise"`` (default) raises :class:`TranslationError` naming the
        first failing address and the count; ``"mask"`` returns ``ok`` False there.
        """
        if op not in ("read", "write"):
            raise ValueError(f"op must be 'read' or 'write', got {op!r}")
        if unmapped not in ("raise", "mask"):
            raise ValueError(f"unmapped must be 'raise' or 'mask', got {unmapped!r}")
        a = _as_address_array(local_addresses, self.width, TranslationError, "local address")
        shape = a.shape
        a = a.ravel()
        win = self._index.find(a)
        ok = a < self._end[op][win]
        if not ok.all():
            if unmapped == "raise":
                bad = np.flatnonzero(~ok)
                first = int(bad[0])
                raise TranslationError(f"{len(bad)} of {len(a)} addresses cannot be "
                                       f"translated; first: {self._fail(int(a[first]), int(win[first]), op)}")
            win = np.where(ok, win, len(self._names))
        g = a + self._delta[win]
        owner = self._owner[win]
        offset = a + self._offdelta[win]
        if self._any_interleaved:
            m = self._interleaved[win]
            if m.any():
                loc = self.address_map.lookup_many(g[m])
                owner[m] = loc.owner
                offset[m] = loc.offset
        if not ok.all():
            g[~ok] = -1
            offset[~ok] = -1
            win = np.where(ok, win, -1)
        return Translations(g.reshape(shape), owner.reshape(shape), offset.reshape(shape),
                            win.reshape(shape), ok.reshape(shape))

    def local_addresses(self, global_address):
        """Every local address of this domain that translates to ``global_address``."""
        g = validate_address(global_address, self.width)
        hit = (self._gb <= g) & (g < self._gb + self._sz)
        return [int(x) for x in (g - self._gb[hit] + self._lb[hit]).tolist()]


def build_domains(fabric, address_map, plan=None):
    """The strict :class:`HostDomain` of every host (a dict), or an error naming the faults."""
    plan = plan if plan is not None else (fabric.address_plan or AddressPlan())
    problems = limits_problems(plan.limits or DomainLimits())
    if problems:
        raise AddressMapError("invalid domain limits: " + "; ".join(problems))
    regions = list(address_map.regions)
    index = _RegionIndex(regions, fabric)
    tables, findings = resolve_tables(fabric, regions, plan)
    grants, gfind = resolve_grants(fabric, regions, plan, index)
    errors = [f for f in findings + gfind if f.severity == "error"]
    if errors:
        raise AddressMapError("invalid address plan: " + "; ".join(
            f"{f.code}: {f.message}" for f in errors[:10]))
    return {h: HostDomain(h, fabric.domains[h], tables[h], address_map, grants[h], plan,
                          index) for h in fabric.domains}


def domain_of(fabric, host):
    """The :class:`HostDomain` called ``host``; :class:`NodeError` naming the known hosts."""
    try:
        return fabric.host_domains[host]
    except (KeyError, TypeError):
        raise NodeError(f"{fabric.name}: no host domain called {host!r}; hosts: "
                        f"{_few(fabric.domains)}") from None
