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
* a window given by ``target`` has ``0 <= target_offset < target size``; a window
  given by ``global_base`` has no ``target_offset``; window names are unique in a
  domain.

Protection is checked at the responder: a :class:`Grant` lets a domain read
(``"r"``) or read and write (``"rw"``) a region (a tenant partition is a set of
grants). An owner grant covers only that owner's memory: an interleave set is
granted by its name, or when every owner in it is. A translation that reaches a
region the domain is not granted, or a store through a read-only window or into
read-only memory, raises :class:`fabric.TranslationError`; :func:`fabric.access`
makes every access through the same translator (:meth:`HostDomain.reach`).

The default plan (``AddressPlan.default_windows``) gives every host, in this
local order: apertures onto its own chips' HBM, a shadow window onto every remote
chip's HBM in rank order (each in a slot of the chip window size rounded up to a
power of two), then an aperture onto its own DRAM. Chips and hosts are the plan's
placement, the intact fabric's (:mod:`fabric._plan`), so failures move no window.

Each host's domain is built on first use (:class:`HostDomains`): a
:class:`DomainPlan` resolves what every host shares once, and one host's window
table costs that host's windows. A :class:`HostDomain` keeps its windows in one
:class:`WindowTable` sorted by local base; the translator's arrays derive from it.

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
    INT64_SAFE,
    MAX_PAGE_SIZE,
    MIN_PAGE_SIZE,
    PERMISSIONS,
    Finding,
    as_address_array,
    default_region,
    is_int,
    no_own_region,
    owned_regions,
    pow2_ceil,
    shift_table,
    validate_address,
)
from ._errors import AddressMapError, NodeError, TranslationError
from ._params import Parameter
from ._units import (
    MiB,
    check_choice,
    check_count,
    choice_fault,
    format_address,
    format_size,
    int_of,
    show_value,
    text_of,
)

__all__ = [
    "ALIGNMENTS",
    "DEFAULT_PAGE_SIZE",
    "TRANSLATION_ENTRIES",
    "DomainLimits",
    "Grant",
    "HostDomain",
    "HostDomains",
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

    def __post_init__(self):
        _as_python_ints(self, ("translation_entries", "page_size"))

    def parameters(self):
        """The limits as :class:`~fabric.Parameter` records."""
        return (dataclasses.replace(TRANSLATION_ENTRIES, value=self.translation_entries),
                dataclasses.replace(DEFAULT_PAGE_SIZE, value=self.page_size))


@dataclass(frozen=True)
class Window:
    """One translation window of a host domain.

    Give the target either as ``global_base`` or as ``target`` (a region name,
    or an owner with one region or one ``hbm`` region) plus ``target_offset``
    (bytes into that region, in ``[0, region size)``; default 0). Giving
    ``global_base`` and ``target_offset`` together is refused: the offset would
    mean nothing. ``size`` defaults to the rest of the target region,
    ``page_size`` to the domain's :attr:`DomainLimits.page_size`. Window names
    are unique within a domain (default windows are named after their chip, and
    ``"{host}.dram"``).
    """

    host: str
    local_base: int
    size: int = None
    global_base: int = None
    target: str = None
    target_offset: int = None
    page_size: int = None
    permissions: str = "rw"
    name: str = None
    where: str = field(default=None, compare=False, repr=False)

    def __post_init__(self):
        # Kinds are checked here (a TypeError); values are the checker's business.
        _check_types(self, ints=("local_base",),
                     optional_ints=("size", "global_base", "target_offset", "page_size"),
                     strs=("host", "permissions"), optional_strs=("target", "name"))


def _as_python_ints(obj, keys):
    """Hold ``obj``'s integer fields ``keys`` as Python ints (a frozen dataclass): a numpy
    integer's arithmetic wraps (np.int32) or overflows on negation (np.uint64). Another kind
    is left to the record's checker (a finding)."""
    for key in keys:
        v = getattr(obj, key)
        if is_int(v):
            object.__setattr__(obj, key, int(v))


def _check_types(obj, ints=(), optional_ints=(), strs=(), optional_strs=()):
    """Check ``obj``'s fields' kinds (a frozen dataclass) and hold its integer fields as Python
    ints: a numpy integer's arithmetic wraps (np.int32) or overflows on negation (np.uint64)."""
    name = type(obj).__name__
    for key in ints + optional_ints:
        object.__setattr__(obj, key, int_of(getattr(obj, key), f"{name} {key}",
                                            optional=key in optional_ints))
    for key in strs + optional_strs:
        text_of(getattr(obj, key), f"{name} {key}", optional=key in optional_strs)


@dataclass(frozen=True)
class Grant:
    """Domain ``host`` may access ``target`` with ``permissions`` (``"r"`` or ``"rw"``).

    ``target`` is ``"*"`` (every region), a region name (that region), a host
    domain name (every region whose memory is wholly that domain's: its chips'
    HBM, its DRAM and storage) or a node (the regions whose memory is that
    node's). An owner grant covers only that owner's memory: an interleave set
    is granted by its name, or when every owner in it is granted (or the
    domain's own); a set holding memory of an ungranted owner is an
    ``isolation`` finding naming the owner.
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


# -- the window table: one representation ---------------------------------------------

class WindowTable:
    """The windows of one domain as parallel arrays (no validation).

    The one representation of a domain's windows: :class:`HostDomain` keeps its
    table sorted by local base, and its translator's arrays (and, on first use,
    the scalar path's lists) are derived from it.
    """

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

    def take(self, order):
        """The table with its rows in ``order`` (an index array)."""
        o = order.tolist()
        return WindowTable(self.host, self.local_base[order], self.size[order],
                           self.global_base[order], self.page_size[order],
                           self.writable[order], [self.names[i] for i in o],
                           [self.wheres[i] for i in o])

    def label(self, i):
        """How findings name window ``i``."""
        return f"{self.host} window {show_value(self.names[i])}"

    def where(self, i):
        """Where window ``i`` was described (a file and line), or its label."""
        return self.wheres[i] or self.label(i)


def limits_problems(limits):
    """What is wrong with a :class:`DomainLimits` (a list of messages, empty when valid)."""
    out = []
    e = limits.translation_entries
    if not is_int(e) or e < 0:
        out.append(f"translation_entries must be an int >= 0, got {show_value(e)}")
    p = limits.page_size
    if not is_int(p) or not MIN_PAGE_SIZE.value <= p <= MAX_PAGE_SIZE.value or p & (p - 1):
        out.append(f"page_size must be a power of two from 4 KiB to 256 TiB, got {show_value(p)}")
    if limits.alignment is not None and limits.alignment not in ALIGNMENTS:
        out.append(choice_fault(limits.alignment, "alignment", ALIGNMENTS, optional="unset"))
    return out


def _largest_page(size, base, cap):
    """The largest power of two <= cap dividing both size and base, at least 4 KiB."""
    x = size | base | cap
    return max(x & -x, MIN_PAGE_SIZE.value)


def fits(*values):
    """True when every value is within the int64-safe range ``[-2**62, 2**62]``."""
    return all(-INT64_SAFE <= v <= INT64_SAFE for v in values)


def _few(names, k=5):
    names = list(names)
    return ", ".join(map(str, names[:k])) + (", ..." if len(names) > k else "")


# -- regions as arrays, owners and their home domains ---------------------------------

class RegionIndex:
    """Per-region facts as arrays, computed once per plan, and a finder for window targets.

    Works on a possibly broken region list (overlaps, values past int64). Arrays
    over regions carry one sentinel entry at the end (index -1, for "no region").
    ``home[i]`` is the index (in :attr:`domain_names` order) of the host domain
    that owns all of region ``i`` (its chips, or the host itself), or -1.

    Parameters
    ----------
    regions : list of Region
    domains : dict
        Host domain name -> its chips, as the plan places them (the intact fabric's).
    """

    def __init__(self, regions, domains):
        order = sorted((i for i, r in enumerate(regions) if fits(r.base, r.end)),
                       key=lambda i: regions[i].base)
        self.order = np.array(order, dtype=np.int64)
        self.domain_names = list(domains)
        self.domain_index = {h: k for k, h in enumerate(self.domain_names)}
        dom_of = dict(self.domain_index)
        for h, chips in domains.items():
            for c in chips:
                dom_of.setdefault(c, self.domain_index[h])
        self.dom_of = dom_of
        # owners: every owner of a region, in order of first appearance
        owners = {}
        for r in regions:
            for o in r.owners:
                try:
                    owners.setdefault(o, len(owners))
                except TypeError:
                    pass
        self.owners = list(owners)
        self.owner_pos = owners
        self.owner_home = np.array([dom_of.get(o, -1) for o in self.owners] + [-1],
                                   dtype=np.int64)
        home, single = [], []
        for r in regions:
            ks = {dom_of.get(o, -1) for o in r.owners}
            home.append(ks.pop() if len(ks) == 1 else -1)
            single.append(owners.get(r.owners[0], -1) if r.ways == 1 else -1)
        self.home = np.array(home + [-2], dtype=np.int64)   # sentinel: nobody's
        self.single_owner = np.array(single + [-1], dtype=np.int64)
        self.multi = [i for i, r in enumerate(regions) if r.ways != 1]
        self.rw = np.array([r.permissions == "rw" for r in regions] + [False], dtype=bool)
        self.interleaved = np.array([r.ways > 1 for r in regions] + [False], dtype=bool)
        # every region's end, clipped into int64 (a region beyond 2**62 is never a target)
        self.end_all = np.array([min(r.end, INT64_SAFE) for r in regions] + [0],
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


class DomainGrants:
    """What one host domain may access: per-region booleans, and why not.

    ``read[i]`` / ``write[i]`` over the regions (with the sentinel entry False):
    a region is readable when a grant names it (or ``"*"``), or when every owner
    in it is readable (the domain's own, or granted by owner or by its host
    domain). Writes also need the grant to be ``"rw"`` and the region writable.
    """

    def __init__(self, host, regions, index, read, write, owner_read, owner_write):
        self.host = host
        self.regions = regions
        self.index = index
        self.read = read
        self.write = write
        self.owner_read = owner_read
        self.owner_write = owner_write

    def ungranted(self, i, op="read"):
        """The owners of region ``i`` the domain is not granted for ``op`` (a list)."""
        ok = self.owner_read if op == "read" else self.owner_write
        pos = self.index.owner_pos
        return [o for o in self.regions[i].owners if not ok[pos.get(o, -1)]]

    def why_not(self, i, op="read"):
        """Why region ``i`` is refused for ``op`` (a phrase naming the owners)."""
        reg = self.regions[i]
        missing = self.ungranted(i, op)
        verb = "read" if op == "read" else "write"
        if reg.ways > 1 and missing:
            return (f"{reg}, which holds memory of {', '.join(map(show_value, missing))} that "
                    f"{self.host} may not {verb} (grant the set by name, or every owner in it)")
        return f"{reg}, which {self.host} is not granted" if op == "read" else \
            f"{reg}, which {self.host} may only read"


# -- a plan resolved for its host domains, once; each domain's table on demand ----------

class DomainPlan:
    """A plan resolved for building host domains: shared parts once, each host's on demand.

    Everything every host shares is computed here, once per fabric and plan
    (the region index, the default windows' chip arrays, the user windows
    resolved to rows per host, the grants parsed per host); a host's window
    table and grants are then built in time proportional to its own windows
    (:meth:`table`, :meth:`grants`). ``findings`` holds the plan-level faults met
    while resolving (``invalid``, ``dangling-target``, ``out-of-range``).

    Parameters
    ----------
    fabric : Fabric
    regions : list of Region
        The plan's regions (possibly broken, for the checker).
    plan : AddressPlan
    chips, domains
        The placement (:func:`fabric._plan.placed_chips`): the intact fabric's chips
        in rank order and its host domains.
    """

    def __init__(self, fabric, regions, plan, chips, domains):
        self.fabric = fabric
        self.regions = list(regions)
        self.plan = plan
        self.limits = plan.limits or DomainLimits()
        self.placed = dict(domains)
        all_domains = dict(domains)
        for h, cs in fabric.domains.items():
            all_domains.setdefault(h, cs)
        self.index = RegionIndex(self.regions, all_domains)
        self.hosts = list(fabric.domains)
        # a host of the plan whose chips have all failed is no domain now; its windows and
        # grants are not faults of the plan, they just have no domain to live in
        self.known_hosts = set(self.placed) | set(self.hosts)
        self.findings = []
        self.alignment = self.limits.alignment if self.limits.alignment is not None else \
            ("size" if plan.layout == "owner-bits" else "page")
        self._grant_rows = self._parse_grants()
        self._defaults = self._default_parts(chips) if plan.default_windows else None
        self._extra = self._user_windows()

    # -- grants --------------------------------------------------------------------------

    def _parse_grants(self):
        """Per host: ``(region indices, owner indices, domain indices, rw)`` of each grant."""
        plan, index, regions = self.plan, self.index, self.regions
        rows = {h: [] for h in self.hosts}
        if plan.grants is None:
            return None
        by_name = {}
        for i, r in enumerate(regions):
            by_name.setdefault(r.name, i)
        for k, g in enumerate(plan.grants):
            where = g.where or f"grant #{k} ({g.host} -> {g.target})"
            label = f"grant of {show_value(g.target)} to {show_value(g.host)}"
            if g.host not in rows and g.host in self.known_hosts:
                continue
            if g.host not in rows:
                self.findings.append(Finding(code="invalid", severity="error",
                                             message=f"{label}: no host domain "
                                             f"called {show_value(g.host)}; hosts: "
                                             f"{_few(self.hosts)}",
                                             where=where))
                continue
            if g.permissions not in PERMISSIONS:
                self.findings.append(Finding(code="invalid", severity="error",
                                             message=f"{label}: permissions "
                                             f"{show_value(g.permissions)} is not one of "
                                             f"{PERMISSIONS}", where=where))
                continue
            rw = g.permissions == "rw"
            if g.target == "*":
                rows[g.host].append(("all", None, rw))
            elif g.target in by_name:
                rows[g.host].append(("region", by_name[g.target], rw))
            elif g.target in index.domain_index:
                rows[g.host].append(("domain", index.domain_index[g.target], rw))
            elif g.target in index.owner_pos:
                rows[g.host].append(("owner", index.owner_pos[g.target], rw))
            else:
                self.findings.append(Finding(
                    code="invalid", severity="error",
                    message=f"{label}: it names no region, no host domain and no owner of a region",
                    where=where))
        return rows

    def grants(self, host):
        """The :class:`DomainGrants` of one host."""
        index, n = self.index, len(self.regions)
        writable = np.append(index.rw[:-1], False)
        n_own = len(index.owners)
        if self._grant_rows is None:
            every = np.ones(n_own + 1, dtype=bool)
            every[-1] = False
            read = np.ones(n + 1, dtype=bool)
            read[-1] = False
            return DomainGrants(host, self.regions, index, read, writable.copy(), every,
                                every.copy())
        k = index.domain_index.get(host, -3)
        own = index.owner_home == k
        own[-1] = False
        o_read, o_write = own.copy(), own.copy()
        r_read = np.zeros(n + 1, dtype=bool)
        r_write = np.zeros(n + 1, dtype=bool)
        for kind, key, rw in self._grant_rows.get(host, ()):
            if kind == "all":
                r_read[:-1] = True
                o_read[:-1] = True
                if rw:
                    r_write[:-1] = True
                    o_write[:-1] = True
            elif kind == "region":
                r_read[key] = True
                r_write[key] |= rw
            elif kind == "domain":
                m = index.owner_home == key
                m[-1] = False
                o_read |= m
                if rw:
                    o_write |= m
            else:
                o_read[key] = True
                o_write[key] |= rw
        single = index.single_owner
        read = r_read | o_read[single]
        write = r_write | o_write[single]
        pos = index.owner_pos
        for i in index.multi:
            owners = [pos.get(o, -1) for o in self.regions[i].owners]
            if owners and all(o_read[j] for j in owners):
                read[i] = True
            if owners and all(o_write[j] for j in owners):
                write[i] = True
        read[-1] = write[-1] = False
        own_region = index.home == k
        read |= own_region
        write |= own_region
        return DomainGrants(host, self.regions, index, read, write & writable, o_read, o_write)

    # -- windows -------------------------------------------------------------------------

    def _default_parts(self, chips):
        """Shared arrays of the default windows (module docstring), or None."""
        limits = self.limits
        # an owner's own region is owned_regions' one rule, as its heap and access_to take it;
        # one out of range is reported by region_findings and takes no window (the owner's
        # window does not move to another of its regions)
        hbm, several = owned_regions(self.regions, "hbm")
        dram, several_dram = owned_regions(self.regions, "dram")
        hbm, dram = ({o: i for o, i in own.items()
                      if fits(self.regions[i].base, self.regions[i].end)} for own in (hbm, dram))
        for table, kind, owners in ((several, "hbm", chips), (several_dram, "dram", self.placed)):
            for o, ix in table.items():
                if o not in owners:
                    continue
                self.findings.append(Finding(
                    code="invalid", severity="error", message=no_own_region(
                        o, [self.regions[i] for i in ix], kind,
                        "its default window has no one target (name its own one so, or set "
                        "default_windows = false and give each window a region by name)"),
                    where="address plan"))
        chips = [c for c in chips if c in hbm]
        if not chips:
            return None
        regs = self.regions
        c_base = np.array([regs[hbm[c]].base for c in chips], dtype=np.int64)
        c_size = np.array([regs[hbm[c]].size for c in chips], dtype=np.int64)
        slot = max(pow2_ceil(int(c_size.max())), MIN_PAGE_SIZE.value)
        c_page = np.array([_largest_page(s, b, limits.page_size) for s, b in
                           zip(c_size.tolist(), c_base.tolist())], dtype=np.int64)
        c_region = np.array([hbm[c] for c in chips], dtype=np.int64)
        return {"chips": chips, "rank": {c: i for i, c in enumerate(chips)}, "base": c_base,
                "size": c_size, "page": c_page, "region": c_region, "slot": slot,
                "names": [str(c) for c in chips], "dram": dram}

    def _default_table(self, host):
        d = self._defaults
        if d is None:
            return None
        rank = d["rank"]
        own = [rank[c] for c in self.placed.get(host, ()) if c in rank]
        n = len(d["chips"])
        if own:
            rest = np.ones(n, dtype=bool)
            rest[own] = False
            order = np.concatenate([np.array(own, dtype=np.int64), np.flatnonzero(rest)])
        else:
            order = np.arange(n, dtype=np.int64)
        local = np.arange(n, dtype=np.int64) * d["slot"]
        names = d["names"]
        cols = [local, d["size"][order], d["base"][order], d["page"][order],
                np.ones(n, dtype=bool)]
        row_names = [names[i] for i in order.tolist()]
        parts = [cols]
        dram = d["dram"].get(host)
        if dram is not None:
            r = self.regions[dram]
            up = pow2_ceil(r.size)
            lb = -(-(n * d["slot"]) // up) * up
            page = _largest_page(r.size, r.base, self.limits.page_size)
            parts.append([np.array([lb]), np.array([r.size]), np.array([r.base]),
                          np.array([page]), np.array([True])])
            row_names.append(f"{host}.dram")
        cat = [np.concatenate([p[j] for p in parts]) for j in range(5)]
        return WindowTable(host, *cat, row_names, [None] * len(row_names))

    def _resolve_target(self, win, label, where, by_name, by_owner):
        """``(global_base, size)`` of a window given by target, or None (and a finding)."""
        def bad(code, msg):
            self.findings.append(Finding(code=code, severity="error", message=f"{label}: {msg}",
                                         where=where))

        if win.target in by_name:
            reg = self.regions[by_name[win.target]]
        elif win.target in by_owner:
            regs = by_owner[win.target]
            reg = default_region(regs)
            if reg is None or reg.ways > 1:
                # a window maps its whole target: an interleave set is no owner's own (a
                # window onto "chip3" whose only region was a set with chip4 reached chip4)
                bad("dangling-target", f"target {no_own_region(win.target, regs)}; name one "
                    f"of {sorted(r.name for r in regs)}")
                return None
        else:
            bad("dangling-target", f"target {show_value(win.target)} names no region and no "
                "owner of one")
            return None
        off = 0 if win.target_offset is None else win.target_offset
        if not is_int(off) or not 0 <= off < reg.size:
            bad("out-of-range", f"target_offset must be an offset into {reg} of "
                f"{reg.size} bytes, 0 <= target_offset < {reg.size}, got "
                f"target_offset={show_value(off)}")
            return None
        size = win.size if win.size is not None else reg.size - off
        return reg.base + off, size

    def _user_windows(self):
        """The plan's windows resolved to rows per host (findings for the faulty ones)."""
        plan, limits = self.plan, self.limits
        extra = {h: [] for h in self.hosts}
        if not plan.windows:
            return extra
        by_name, by_owner = {}, {}
        for i, r in enumerate(self.regions):
            by_name.setdefault(r.name, i)
            for o in r.owners:
                try:
                    by_owner.setdefault(o, []).append(r)
                except TypeError:
                    pass
        names = {}
        for k, win in enumerate(plan.windows):
            label = f"window {show_value(win.name or k)} of host {show_value(win.host)}"
            where = win.where or label

            def bad(code, msg, label=label, where=where):
                self.findings.append(Finding(code=code, severity="error", message=f"{label}: {msg}",
                                             where=where))

            if win.host not in extra and win.host in self.known_hosts:
                continue
            if win.host not in extra:
                bad("invalid", f"no host domain called {show_value(win.host)}; hosts: "
                    f"{_few(self.hosts)}")
                continue
            if win.permissions not in PERMISSIONS:
                bad("invalid", f"permissions {show_value(win.permissions)} is not one of "
                    f"{PERMISSIONS}")
                continue
            name = win.name if win.name is not None else f"#{k}"
            if (win.host, name) in names:
                bad("invalid", f"window name {show_value(name)} is used twice in host {win.host} "
                    f"(also {names[(win.host, name)]}); window names are unique in a domain")
                continue
            names[(win.host, name)] = where
            gb, size = win.global_base, win.size
            if win.target is not None:
                if gb is not None:
                    bad("invalid", "give global_base or target, not both")
                    continue
                got = self._resolve_target(win, label, where, by_name, by_owner)
                if got is None:
                    continue
                gb, size = got
            elif gb is None:
                bad("invalid", "give global_base or target")
                continue
            elif win.target_offset is not None:
                bad("invalid", f"target_offset={show_value(win.target_offset)} is an offset into "
                    "target, and this window gives global_base instead: give global_base "
                    "alone, or target with target_offset")
                continue
            if size is None:
                bad("invalid", "give a size")
                continue
            page = win.page_size if win.page_size is not None else limits.page_size
            if not fits(win.local_base, win.local_base + size, gb, gb + size, page):
                # name what is out: the file's field, or the window's end it reaches
                past = [f"{k} = {show_value(v)}" for k, v in (
                    ("local_base", win.local_base), ("global_base", gb), ("size", size),
                    ("page_size", page), ("local_base + size", win.local_base + size),
                    ("global_base + size", gb + size)) if not fits(v)]
                bad("out-of-range", f"{past[0]} reaches beyond 2**62 bytes, past the widest "
                    "address space")
                continue
            extra[win.host].append((win.local_base, size, gb, page, win.permissions == "rw",
                                    name, where))
        return extra

    def table(self, host):
        """The :class:`WindowTable` of one host: its default windows, then the plan's."""
        t = self._default_table(host)
        rows = self._extra.get(host, [])
        if t is None and not rows:
            return WindowTable(host, [], [], [], [], [], [], [])
        cols = list(zip(*rows)) if rows else [[]] * 7
        if t is None:
            return WindowTable(host, *cols)
        return WindowTable(
            host, np.concatenate([t.local_base, np.asarray(cols[0], dtype=np.int64)]),
            np.concatenate([t.size, np.asarray(cols[1], dtype=np.int64)]),
            np.concatenate([t.global_base, np.asarray(cols[2], dtype=np.int64)]),
            np.concatenate([t.page_size, np.asarray(cols[3], dtype=np.int64)]),
            np.concatenate([t.writable, np.asarray(cols[4], dtype=bool)]),
            t.names + list(cols[5]), t.wheres + list(cols[6]))

    def has_windows(self, host):
        """Whether the plan gives ``host`` windows of its own (beyond the default ones)."""
        return bool(self._extra.get(host))

    def name_findings(self):
        """``invalid`` findings for user windows named like a default window of their host."""
        out = []
        if self._defaults is None:
            return out
        default = set(self._defaults["names"])
        for h, rows in self._extra.items():
            for row in rows:
                if row[5] in default or row[5] == f"{h}.dram":
                    out.append(Finding(code="invalid", severity="error",
                                       message=f"{h} window {show_value(row[5])}: the name of "
                                       f"one of {h}'s default windows; window names are unique "
                                       "in a domain", where=row[6] or f"{h} window "
                                                                      f"{show_value(row[5])}"))
        return out


# -- the findings of one domain's windows ------------------------------------------------

def _running_partner(starts, ends):
    """For intervals sorted by start: per interval, an earlier one it overlaps (or -1)."""
    n = len(starts)
    if n < 2:
        return np.full(n, -1, dtype=np.int64)
    best = np.maximum.accumulate(ends)
    # the interval holding the running maximum of ends before each position
    is_new = np.concatenate([[True], ends[1:] > best[:-1]])
    holder = np.maximum.accumulate(np.where(is_new, np.arange(n), 0))
    prev_best = np.concatenate([[np.iinfo(np.int64).min], best[:-1]])
    prev_holder = np.concatenate([[-1], holder[:-1]])
    return np.where(starts < prev_best, prev_holder, -1)


def _overlap_pairs(idx, base, size):
    """``(i, p)`` for the intervals ``[base, base + size)`` of indices ``idx`` (in order of
    base, ties in ``idx`` order) that overlap an earlier one, ``p``: see :func:`_running_partner`."""
    o = idx[np.argsort(base[idx], kind="stable")]
    partner = _running_partner(base[o], base[o] + size[o])
    return [(int(o[j]), int(o[partner[j]])) for j in np.flatnonzero(partner >= 0).tolist()]


def window_findings(table, regions, region_index, grants, plan, alignment):
    """Every fault of one domain's windows (see the module docstring for the rules).

    Returns ``(findings, target)``: ``target[i]`` is the index into ``regions`` of
    the region window ``i`` starts in (-1 when dangling). ``grants`` is the
    domain's :class:`DomainGrants`; ``alignment`` is ``"size"`` or ``"page"``.
    """
    out = []
    limits = plan.limits or DomainLimits()
    width = plan.width
    n = len(table)
    lb, sz, gb, pg = table.local_base, table.size, table.global_base, table.page_size
    target = region_index.find(gb) if n else np.zeros(0, dtype=np.int64)

    def add(code, i, msg, severity="error"):
        out.append(Finding(code=code, severity=severity, message=f"{table.label(i)}: {msg}",
                           where=table.where(i)))

    good_page = (pg >= MIN_PAGE_SIZE.value) & (pg <= MAX_PAGE_SIZE.value) & ((pg & (pg - 1)) == 0)
    for i in np.flatnonzero(~good_page).tolist():
        add("invalid", i, f"page size {int(pg[i])} must be a power of two from 4 KiB to 256 TiB")
    for i in np.flatnonzero(sz <= 0).tolist():
        add("invalid", i, f"size {int(sz[i])} must be > 0")
    live = (sz > 0) & good_page
    if alignment == "size":
        uniq, inv = np.unique(sz, return_inverse=True)    # few distinct sizes: no per-window loop
        up = np.array([pow2_ceil(int(x)) if x > 0 else 1 for x in uniq.tolist()], dtype=np.int64)
        align = np.maximum(up[inv.reshape(-1)], pg)
    else:
        align = pg
    safe_pg = np.where(good_page, pg, 1)
    safe_align = np.where(align > 0, align, 1)
    bad = live & ((sz % safe_pg != 0) | (lb % safe_align != 0) | (gb % safe_align != 0))
    for i in np.flatnonzero(bad).tolist():
        what = []
        if sz[i] % pg[i]:
            what.append(f"size {int(sz[i])} is not a whole number of {format_size(int(pg[i]))} "
                        "pages")
        rule = "window size rounded up to a power of two" if alignment == "size" else \
            "page size"
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
        t = np.where(hit, target, -1)
        no_read = hit & ~grants.read[t]
        rw_perm = region_index.rw[t]
        no_write = hit & ~no_read & table.writable & ~grants.write[t] & rw_perm
        for i in np.flatnonzero(no_read).tolist():
            add("isolation", i, f"reaches {grants.why_not(int(target[i]), 'read')}")
        for i in np.flatnonzero(no_write).tolist():
            add("isolation", i, f"is read-write onto {grants.why_not(int(target[i]), 'write')} "
                "(make the window read-only or grant rw)")
    idx = np.flatnonzero(live)
    if len(idx) > 1:
        for i, p in _overlap_pairs(idx, lb, sz):
            add("overlap", i, f"local range [{format_address(int(lb[i]))}, "
                f"{format_address(int(lb[i] + sz[i]))}) overlaps window "
                f"{show_value(table.names[p])} [{format_address(int(lb[p]))}, "
                f"{format_address(int(lb[p] + sz[p]))})")
        for i, p in _overlap_pairs(idx, gb, sz):
            add("alias", i, f"maps global bytes [{format_address(int(max(gb[i], gb[p])))}, "
                f"{format_address(int(min(gb[i] + sz[i], gb[p] + sz[p])))}) that window "
                f"{show_value(table.names[p])} also maps", severity="warning")
    if n:
        dom = region_index.domain_index.get(table.host, -3)
        count = int(((target >= 0) & (region_index.home[target] != dom)).sum())
        if count > limits.translation_entries:
            out.append(Finding(
                code="too-many-entries", severity="error",
                message=f"host {table.host} needs {count} translation entries (shadow windows) "
                f"but a domain holds at most {limits.translation_entries}",
                where=(f"{limits.where}, host {table.host}" if limits.where
                       else f"host {table.host}")))
    return out, target


# -- the strict, fast translator -------------------------------------------------------

class WindowIndex:
    """Find the window holding each local address (a shift table, or binary search)."""

    def __init__(self, local_base, size, width):
        order = np.argsort(local_base, kind="stable")
        self.order = order
        self.base = local_base[order]
        self.end = (local_base + size)[order]
        self.n = len(order)
        self.table = shift_table(self.base, self.end, width) if self.n else None

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


def _check_op(op):
    check_choice(op, "op", ("read", "write"))


class HostDomain:
    """One host's local address space: its windows, grants and translator.

    Built by :attr:`fabric.Fabric.host_domains` (each host on first use);
    construction refuses a domain with any error except ``isolation`` (a window
    onto a region the domain is not granted may exist; using it raises
    :class:`TranslationError`).

    Attributes
    ----------
    name : str
    chips : tuple
        The domain's own chips.
    address_map : AddressMap
    table : WindowTable
        The windows, sorted by local base: the one representation the translator's
        arrays are derived from.
    """

    def __init__(self, name, chips, table, address_map, grants, plan, index, alignment="size"):
        self.name = name
        self.chips = tuple(chips)
        self.address_map = address_map
        regions = list(address_map.regions)
        findings, target = window_findings(table, regions, index, grants, plan, alignment)
        errors = [f for f in findings if f.severity == "error" and f.code != "isolation"]
        if errors:
            more = f" (and {len(errors) - 10} more)" if len(errors) > 10 else ""
            raise AddressMapError(f"invalid host domain {show_value(name)}: " + "; ".join(
                f"{f.code}: {f.message}" for f in errors[:10]) + more)
        self.width = plan.width
        self._grants = grants
        idx = WindowIndex(table.local_base, table.size, self.width)
        o = idx.order
        self._index = idx
        self.table = table.take(o)
        self._target = target[o]
        amap = address_map
        t = self.table
        n = len(o)
        self._can_read = grants.read[self._target] if n else np.zeros(0, bool)
        self._can_write = (grants.write[self._target] & t.writable) if n else np.zeros(0, bool)
        # sentinel at index n: end 0, so an address that finds no window fails "a < end"
        end = np.append(t.local_base + t.size, 0)
        self._end = {"read": np.where(np.append(self._can_read, False), end, 0),
                     "write": np.where(np.append(self._can_write, False), end, 0)}
        self._delta = np.append(t.global_base - t.local_base, 0)
        reg_base = amap.bases[self._target] if n else np.zeros(0, np.int64)
        self._offdelta = np.append(t.global_base - t.local_base - reg_base, -1)
        self._owner = np.append(amap.owner_of_region[self._target] if n else
                                np.zeros(0, np.int64), -1)
        self._interleaved = np.append(index.interleaved[self._target], False)
        self._any_interleaved = bool(self._interleaved.any())
        self.shadow = index.home[self._target] != index.domain_index.get(name, -3)
        # the scalar translator, built on first use (batched users never pay for it); an
        # instance attribute, so a call is one closure call (:meth:`translate` documents it)
        self.translate = self._first_scalar

    def __repr__(self):
        return (f"HostDomain({self.name!r}, chips={len(self.chips)}, "
                f"windows={len(self.table)}, shadow={int(self.shadow.sum())})")

    @property
    def windows(self):
        """The resolved windows, sorted by local base (a tuple of :class:`Window`)."""
        t = self.table
        return tuple(Window(self.name, int(t.local_base[i]), int(t.size[i]),
                            int(t.global_base[i]), page_size=int(t.page_size[i]),
                            permissions="rw" if t.writable[i] else "r", name=t.names[i],
                            where=t.wheres[i]) for i in range(len(t)))

    @property
    def n_entries(self):
        """Translation entries in use: the number of shadow windows."""
        return int(self.shadow.sum())

    def _fail(self, a, win, op):
        """The reason translating local address ``a`` (window position ``win``) fails."""
        t = self.table
        if win == len(t) or a >= t.local_base[win] + t.size[win]:
            return (f"host {self.name}: local address {format_address(a)} is in no window "
                    "of this domain")
        i = int(self._target[win])
        reg = self.address_map.regions[i]
        name = t.names[win]
        if not self._can_read[win]:
            return (f"host {self.name}: window {show_value(name)} reaches "
                    f"{self._grants.why_not(i, 'read')}")
        if not t.writable[win]:
            return (f"host {self.name}: store to {format_address(a)} through read-only window "
                    f"{show_value(name)}")
        if reg.permissions != "rw":
            return f"host {self.name}: store to read-only {reg}"
        return (f"host {self.name}: window {show_value(name)} reaches "
                f"{self._grants.why_not(i, 'write')}")

    def translate(self, local_address, op="read"):
        """Translate one local address; ``op`` is ``"read"`` or ``"write"``.

        Returns a :class:`Translation`.

        Raises
        ------
        TranslationError
            If the address is malformed or outside the width, in no window, or
            the access is not granted (the message says which).
        ValueError
            If ``op`` is not ``"read"`` or ``"write"``.
        """
        return self._first_scalar(local_address, op)    # replaced per instance on first use

    def _first_scalar(self, a, op="read"):
        """Build the scalar translator on first use (batched users never pay for it)."""
        self.translate = self._make_fast()
        return self.translate(a, op)

    def _make_fast(self):
        """The scalar translator as a closure over Python lists derived from :attr:`table`.

        Local names in a closure are cheaper than attribute look-ups on ``self``;
        scalar translation is on a hot path (``benchmarks/bench_address.py``).
        """
        amap = self.address_map
        name, width = self.name, self.width
        limit = 1 << width
        st = self._index.table
        shift = st[0] if st is not None else None
        table = st[1].tolist() if st is not None else None
        slots = len(st[1]) if st is not None else 0
        base, n = self.table.local_base.tolist(), len(self.table)
        end_read, end_write = self._end["read"].tolist(), self._end["write"].tolist()
        delta, offdelta = self._delta.tolist(), self._offdelta.tolist()
        inter = self._interleaved.tolist()
        owners = [amap.owners[o] if o >= 0 else None for o in self._owner.tolist()]
        regions = [amap.regions[t].name for t in self._target.tolist()] + [None]
        names = self.table.names
        lookup, fail, bisect_right = amap.lookup, self._fail, bisect.bisect_right

        def fast(a, op="read"):
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
                _check_op(op)
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
        _check_op(op)
        check_choice(unmapped, "unmapped", ("raise", "mask"))
        a = as_address_array(local_addresses, self.width, TranslationError, "local address")
        shape = a.shape
        a = a.ravel()
        win = self._index.find(a)
        ok = a < self._end[op][win]
        if not ok.all():
            if unmapped == "raise":
                bad = np.flatnonzero(~ok)
                first = int(bad[0])
                raise TranslationError(f"{len(bad)} of {len(a)} addresses cannot be "
                                       f"translated; first: "
                                       f"{self._fail(int(a[first]), int(win[first]), op)}")
            win = np.where(ok, win, len(self.table))
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
        return Translations(global_address=g.reshape(shape), owner=owner.reshape(shape),
                            offset=offset.reshape(shape),
                            window=win.reshape(shape), ok=ok.reshape(shape))

    def local_addresses(self, global_address):
        """Every local address of this domain whose window maps ``global_address``, in local
        order, whether or not :meth:`translate` permits an access through it (a window
        the domain is not granted, a read-only one for a write): :meth:`reach` asks
        :meth:`translate` of each."""
        g = validate_address(global_address, self.width)
        t = self.table
        hit = (t.global_base <= g) & (g < t.global_base + t.size)
        return [int(x) for x in (g - t.global_base[hit] + t.local_base[hit]).tolist()]

    def maps(self, global_addresses, op="read", size=1):
        """Whether each global address is reached by a window of this domain permitting ``op``.

        The vectorized question behind :meth:`reach`: a boolean array, True where
        some window maps the address and :meth:`translate` through it would
        succeed for ``op``; with ``size``, where one such window maps all ``size``
        bytes from the address (an access's span, :func:`fabric.access`).
        """
        _check_op(op)
        size = check_count(size, "size", 1, "a positive int of bytes")
        g = as_address_array(global_addresses, self.width, AddressMapError, "global address")
        ok = self._can_read if op == "read" else self._can_write
        t = self.table
        gb, end = t.global_base[ok], (t.global_base + t.size)[ok]
        if len(gb) == 0:
            return np.zeros(g.shape, dtype=bool)
        o = np.argsort(gb, kind="stable")
        gb, reach = gb[o], np.maximum.accumulate(end[o])
        k = np.searchsorted(gb, g, side="right") - 1
        # reach[k]: the furthest end of a permitting window starting at or below g (that
        # window holds all of g .. g + size - 1; a difference, so no sum overflows int64)
        return (k >= 0) & (reach[np.maximum(k, 0)] - g > int(size) - 1)

    def reach(self, global_address, op="read"):
        """Translate an access to ``global_address`` as this domain makes it.

        The access goes through a window of this domain that maps the address (the
        first, in local order, that permits ``op``) and is translated and checked
        by :meth:`translate`: the one model of an access that
        :func:`fabric.access` and :func:`fabric.access_to` use.

        Returns
        -------
        Translation

        Raises
        ------
        TranslationError
            If no window of this domain maps the address, or none permits ``op``
            (the message is the refusal of the first window that maps it).
        AddressMapError
            If the address is malformed or no region holds it.
        """
        _check_op(op)
        locals_ = self.local_addresses(global_address)
        if not locals_:
            loc = self.address_map.lookup(global_address)   # AddressMapError when unmapped
            raise TranslationError(f"host {self.name}: no window of this domain maps global "
                                   f"address {format_address(loc.address)} (region "
                                   f"{show_value(loc.region)} of {show_value(loc.owner)})")
        first = None
        for a in sorted(locals_):
            try:
                return self.translate(a, op)
            except TranslationError as e:
                first = first or e
        raise first


class HostDomains(dict):
    """Host domain name -> :class:`HostDomain`, each built on first use.

    A mapping over every host domain of the fabric; a host's domain (its window
    table, grants and translator) is built the first time it is looked up, in
    time and memory proportional to that host's windows. Iterating over
    ``values()`` or ``items()`` builds every domain. Looking up a host that has no
    domain (one whose chips all failed, or no such host) raises a :class:`NodeError`
    saying which, that is also a ``KeyError`` (so ``get`` and ``in`` work as for a dict).
    """

    def __init__(self, fabric, address_map, domain_plan):
        super().__init__()
        self._fabric = fabric
        self._map = address_map
        self._plan = domain_plan
        self._names = tuple(fabric.domains)

    def __missing__(self, host):
        d = self.build(host)
        self[host] = d
        return d

    def build(self, host):
        """The :class:`HostDomain` of ``host``, built afresh and not kept.

        For a sweep over every host (e.g. permission checks over all chip pairs) that
        should hold one domain at a time; a domain already looked up is returned as is.
        """
        if not isinstance(host, str) or host not in self._fabric.domains:
            raise _no_host_domain(self._fabric, host)
        if dict.__contains__(self, host):
            return dict.__getitem__(self, host)
        p = self._plan
        return HostDomain(host, self._fabric.domains[host], p.table(host), self._map,
                          p.grants(host), p.plan, p.index, p.alignment)

    def __contains__(self, host):
        return isinstance(host, str) and host in self._fabric.domains

    def __iter__(self):
        return iter(self._names)

    def __len__(self):
        return len(self._names)

    def __repr__(self):
        return f"HostDomains({len(self._names)} hosts, {dict.__len__(self)} built)"

    def keys(self):
        """The host names, in the fabric's order."""
        return list(self._names)

    def values(self):
        """Every host's :class:`HostDomain` (building those not built yet)."""
        return [self[h] for h in self._names]

    def items(self):
        """``(name, HostDomain)`` for every host (building those not built yet)."""
        return [(h, self[h]) for h in self._names]

    def get(self, host, default=None):
        """The domain of ``host``, or ``default`` if there is no such host."""
        try:
            return self[host]
        except KeyError:
            return default

    def __eq__(self, other):
        return self is other

    __hash__ = None


def build_domains(fabric, address_map, plan, chips, domains):
    """The lazy :class:`HostDomains` of a fabric, after checking the plan-level faults.

    Raises
    ------
    AddressMapError
        Naming the faults of the limits, the plan's windows and its grants, and
        of the first host's windows and of every host with windows of its own;
        any other host's windows are checked when that host is first used.
    """
    problems = limits_problems(plan.limits or DomainLimits())
    if problems:
        raise AddressMapError("invalid domain limits: " + "; ".join(problems))
    p = DomainPlan(fabric, address_map.regions, plan, chips, domains)
    errors = [f for f in p.findings + p.name_findings() if f.severity == "error"]
    if errors:
        more = f" (and {len(errors) - 10} more)" if len(errors) > 10 else ""
        raise AddressMapError("invalid address plan: " + "; ".join(
            f"{f.code}: {f.message}" for f in errors[:10]) + more)
    domains = HostDomains(fabric, address_map, p)
    # A host with windows of its own is checked now (they are where a plan goes wrong); so
    # is the first host, whose default windows stand for everyone's. The rest are checked
    # when first used, and fabric.check checks every one.
    eager = [h for h in fabric.domains if p.has_windows(h)][:64] + list(fabric.domains)[:1]
    for h in dict.fromkeys(eager):
        domains[h]
    return domains


class _NoHostDomain(NodeError, KeyError):
    """A :class:`NodeError` that is also the mapping's KeyError (``get`` and ``in`` still work)."""

    __str__ = Exception.__str__          # the message as text, not KeyError's repr of it


def _no_host_domain(fabric, host):
    """The error for a host that has no domain: one that failed, or one never there."""
    placed = dict(getattr(fabric.address_plan, "domains", None) or ())
    if isinstance(host, str) and host in placed:
        return _NoHostDomain(f"{fabric.name}: host domain {show_value(host)} has failed: every "
                             f"chip of it ({_few(placed[host])}) has failed")
    return _NoHostDomain(f"{fabric.name}: no host domain called {show_value(host)}; hosts: "
                         f"{_few(fabric.domains)}")


def domain_of(fabric, host):
    """The :class:`HostDomain` called ``host``; :class:`NodeError` naming the known hosts."""
    try:
        return fabric.host_domains[host]
    except TypeError:                    # an unhashable name
        raise _no_host_domain(fabric, host) from None
