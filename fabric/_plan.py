"""Address plans: where every region goes, which windows each host has, who may access what.

An :class:`AddressPlan` is the whole description: the layout of the global map
(:func:`layout_regions`), extra regions and interleave sets, shadow windows,
grants, a symmetric heap and the domains' hardware limits. This module builds on
:mod:`fabric._address` (regions and the map), :mod:`fabric._domains` (windows,
grants, host domains) and :mod:`fabric._symmetric` (the heap); none of them
imports it, so the address modules form no import cycle.

Layouts (field ``layout``):

``"owner-bits"`` (default)
    chip ``r``'s HBM at ``r << k``, ``2**k`` the smallest power of two that
    holds one chip's HBM, so the owner of an address is a shift. Host DRAM,
    NIC registers, memory nodes, storage and interleave sets follow the chips,
    each aligned to its size rounded up to a power of two.
``"packed"``
    the same regions back to back, each base rounded up to ``alignment`` (an
    interleave set's to 256 MiB at least, the CXL HDM decoder unit).
``"explicit"``
    only the regions the plan lists (``AddressPlan.regions``), where they say.

**A plan is laid out once, from the intact fabric.** Layouts place chips by
rank and the default windows follow the chips' order, so a degraded fabric
(``fabric.without(chips=...)``) keeps the intact fabric's chips and host domains
in the plan (:func:`pin_placement`, fields ``chips`` and ``domains``): every
region and every window stays where it was, failures only mark chips dead, and
:func:`fabric.check` reports a window onto a dead chip as ``unreachable``. A pinned
placement must be the fabric's as built (:func:`placement_findings`): a plan pinned on
one fabric and given to another is an ``invalid`` finding, not a set of failed chips.

**Names are one namespace.** Region names, host domain names and node names
are looked up by name (a grant's or a window's ``target``, a region's owner),
so no name may mean two things: a host domain named like a node of another
kind, or a region named like a node or a host domain, is an ``invalid``
finding naming both (:func:`namespace_findings`), and a plan with one cannot be
built. Every region must be owned by a node or host domain of the fabric.

**Owners hold what their regions say** (:func:`owner_findings`). A region's kind must be
memory its owner has: ``hbm`` on chips; ``dram`` on chips (HBM is stacked DRAM), host
domains, host nodes and memory nodes; ``storage`` on host domains, host nodes and memory
nodes; ``mmio`` (registers) on any node or host domain. A switch or NIC holds no memory,
so a memory region or interleave set owned by one is an ``invalid`` finding, as is HBM
owned by a host. And no chip may give more memory than it has: its memory regions plus
its share (``size / ways``) of every interleave set over it must fit in its chip's
``hbm_bytes`` (a memory node's, in its ``capacity``), a ``capacity`` finding otherwise. Each member of an interleave set gives it
a span of its own device memory, next to its other decoders' spans (ndctl
Documentation/cxl/cxl-reserve-dpa.txt: the DPA span each member of an interleave set
contributes is reserved on that device), so a set over chips whose whole HBM the layout
already maps promises memory that is not there: make room with the plan's ``hbm_bytes``
(each chip's region) or the explicit layout. A host domain's DRAM is the plan's own
figure (``host_memory``), not a fact of the hardware, so sets over host DRAM are not
counted against it: no preset or builder carries a host's DRAM capacity (a host domain
is a label on its chips, not a node; the one published figure, SD200's 64 TB of host
memory in all, is second-hand and per system, docs/sources.md s.1), so no check could be
sourced (decided in session 11). To have host memory checked, describe it as a node of
kind ``"memory"`` with a ``capacity`` (bytes), whose regions and shares are counted.

Examples
--------
>>> import topologies
>>> f = topologies.build("sd200-ultra")
>>> g = f.without(chips=["chip9"])
>>> g.translate("host0", 0xA0_0000_0040).owner        # slot 10 is chip10, before and after
'chip10'
>>> from fabric import check
>>> sorted({x.code for x in check(g)})
['unreachable']
"""

import dataclasses
from collections import Counter
from dataclasses import dataclass

from ._address import (
    ADDRESS_WIDTH,
    DEFAULT_HOST_MEMORY,
    DEFAULT_NIC_MMIO,
    DEFAULT_PACKED_ALIGNMENT,
    HDM_DECODER_UNIT,
    MAX_ADDRESS_WIDTH,
    MAX_PAGE_SIZE,
    MIN_PAGE_SIZE,
    AddressMap,
    Finding,
    Region,
    align_up,
    is_int,
    pow2_ceil,
)
from ._domains import DomainLimits
from ._errors import AddressMapError
from ._fabric_arg import fabric_arg
from ._symmetric import HEAP_ALIGNMENT
from ._units import (
    choice_fault,
    format_size,
    is_bool,
    kind_error,
    name_list,
    sequence_of,
    show_value,
)

__all__ = ["LAYOUTS", "AddressPlan", "layout_regions"]

LAYOUTS = ("owner-bits", "packed", "explicit")

#: The plan's fields that hold a sequence, and what of (a message's words).
_SEQUENCES = {"interleave": "Region objects", "regions": "Region objects",
              "windows": "Window objects", "grants": "Grant objects"}


@dataclass(frozen=True)
class AddressPlan:
    """A complete address plan: the global layout, host windows, grants, heap and limits.

    ``Fabric.address_plan = None`` means ``AddressPlan()``, the default plan.
    Change one field with ``fabric.replace(address_plan=dataclasses.replace(plan, ...))``.

    Parameters
    ----------
    layout : str
        ``"owner-bits"`` (default), ``"packed"`` or ``"explicit"`` (see module docstring).
    width : int
        Address width in bits (default 57, :data:`ADDRESS_WIDTH`).
    alignment : int
        Region alignment of the packed layout (default :data:`DEFAULT_PACKED_ALIGNMENT`).
    hbm_bytes : int, optional
        HBM per chip; default ``fabric.chip.hbm_bytes``.
    host_memory : int
        DRAM per host domain (default :data:`DEFAULT_HOST_MEMORY`; 0 for none).
    nic_mmio : int
        Register window per node of kind ``"nic"`` (default :data:`DEFAULT_NIC_MMIO`).
    storage : int
        Storage window per host domain (kind ``"storage"``, e.g. an NVMe controller
        memory buffer); default 0, none.
    interleave : tuple of Region
        Interleave sets to place after the other regions (their ``base`` is
        ignored except in the explicit layout).
    regions : tuple of Region
        Regions placed where they say, in addition to the layout's (the explicit
        layout has only these and ``interleave``).
    windows : tuple of Window
        Shadow windows added to each host's domain (see :mod:`fabric._domains`).
    default_windows : bool
        Give every host a window onto every remote chip's HBM and an aperture onto
        its own chips and DRAM (default True). With ``grants``, the windows onto
        chips a host is not granted are ``isolation`` findings: a tenant partition
        sets ``default_windows=False`` and lists the windows each host needs.
    grants : tuple of Grant, optional
        ``None``: every domain may read and write every region. Otherwise only
        what is granted, plus a domain's own chips and host memory.
    heap : SymmetricHeap, optional
    limits : DomainLimits, optional
        Hardware limits of the host domains (default :class:`fabric.DomainLimits`).
    chips : tuple, optional
        The chips the layout places, in rank order (default: the fabric's
        endpoints). Set by :meth:`fabric.Fabric.without` to the intact fabric's
        chips, so that no address moves when a chip fails.
    domains : tuple of (str, tuple), optional
        The host domains the layout is made for, as ``(name, chips)`` pairs
        (default: the fabric's). Set with ``chips``.
    """

    layout: str = "owner-bits"
    width: int = ADDRESS_WIDTH.value
    alignment: int = DEFAULT_PACKED_ALIGNMENT.value
    hbm_bytes: int = None
    host_memory: int = DEFAULT_HOST_MEMORY.value
    nic_mmio: int = DEFAULT_NIC_MMIO.value
    storage: int = 0
    interleave: tuple = ()
    regions: tuple = ()
    windows: tuple = ()
    default_windows: bool = True
    grants: tuple = None
    heap: object = None
    limits: object = None
    chips: tuple = None
    domains: tuple = None

    def __post_init__(self):
        for key in ("width", "alignment", "hbm_bytes", "host_memory", "nic_mmio", "storage"):
            v = getattr(self, key)
            if is_int(v):
                # a numpy integer is held as the number it is: np.int32 arithmetic wraps
                # (1 << np.int32(57) is not 2**57), np.uint64's negation overflows
                object.__setattr__(self, key, int(v))
        if is_bool(self.default_windows):   # numpy's bool too, held as Python's (a flag)
            object.__setattr__(self, "default_windows", bool(self.default_windows))
        for key, items in _SEQUENCES.items():
            if key != "grants" or self.grants is not None:
                object.__setattr__(self, key, tuple(sequence_of(getattr(self, key),
                                                                f"AddressPlan {key}", items)))
        if self.chips is not None:
            object.__setattr__(self, "chips", _names_of(self.chips, "chips"))
        if self.domains is not None:
            d = self.domains.items() if isinstance(self.domains, dict) else self.domains
            try:
                pairs = [tuple(x) for x in d]
            except TypeError:
                pairs = None
            if pairs is None or any(len(x) != 2 for x in pairs):
                raise kind_error(self.domains, "AddressPlan domains", "a mapping (or pairs) of "
                                 "host domain name -> its chips")
            object.__setattr__(self, "domains", tuple(
                (_names_of((h,), "domains")[0], _names_of(cs, f"domains[{show_value(h)}]"))
                for h, cs in pairs))

    def replace(self, **changes):
        """A copy with some fields changed."""
        return dataclasses.replace(self, **changes)

    def parameters(self):
        """The plan's named numbers as :class:`~fabric.Parameter` records, for a report.

        >>> [p.name for p in AddressPlan().parameters()][:3]
        ['address.width', 'address.host_memory', 'address.nic_mmio']
        """
        out = [dataclasses.replace(ADDRESS_WIDTH, value=self.width),
               dataclasses.replace(DEFAULT_HOST_MEMORY, value=self.host_memory),
               dataclasses.replace(DEFAULT_NIC_MMIO, value=self.nic_mmio),
               MIN_PAGE_SIZE, MAX_PAGE_SIZE]
        if self.layout == "packed":
            out.append(dataclasses.replace(DEFAULT_PACKED_ALIGNMENT, value=self.alignment))
        out += list((self.limits or DomainLimits()).parameters())
        if self.heap is not None:
            out.append(dataclasses.replace(HEAP_ALIGNMENT, value=self.heap.alignment))
        return tuple(out)


def _names_of(names, what):
    """``names`` as a tuple of node names (hashable, not one string read letter by letter)."""
    out = tuple(sequence_of(names, f"AddressPlan {what}", "node names"))
    try:
        for n in out:
            hash(n)
    except TypeError:
        raise kind_error(names, f"AddressPlan {what}", "a sequence of node names") from None
    return out


def plan_arg(plan, what="plan"):
    """``plan`` where an address plan is due: an :class:`AddressPlan`, or ``None`` for the
    default plan (``AddressPlan()``); anything else a TypeError naming ``what`` (the one
    check: ``{}`` or ``0`` was read as the default plan, ``'x'`` gave "'str' object has no
    attribute 'layout'")."""
    if plan is None:
        return AddressPlan()
    if not isinstance(plan, AddressPlan):
        raise kind_error(plan, what, "an AddressPlan or None")
    return plan


def _as_built(fabric):
    """The fabric a plan is laid out from: the intact one of a degraded copy (a plan given
    after a failure lays out as one given before it: no address moves)."""
    intact = getattr(fabric, "intact", None)
    return fabric if intact is None else intact


def placed_chips(fabric, plan):
    """The chips the plan lays out, in rank order: ``plan.chips`` or the intact fabric's
    endpoints."""
    return plan.chips if plan.chips is not None else _as_built(fabric).endpoints


def placed_domains(fabric, plan):
    """The host domains the plan lays out (a dict name -> chips): ``plan.domains`` or the
    intact fabric's."""
    return dict(plan.domains) if plan.domains is not None else dict(_as_built(fabric).domains)


def pin_placement(fabric):
    """The fabric's plan with its chips and host domains written in (see module docstring).

    A degraded copy of ``fabric`` gets this plan so that its layout and default
    windows are the intact fabric's; a plan already pinned stays as it is.
    """
    plan = fabric.plan
    if plan.chips is not None and plan.domains is not None:
        return plan
    return plan.replace(chips=placed_chips(fabric, plan),
                        domains=tuple(placed_domains(fabric, plan).items()))


def plan_errors(fabric, plan):
    """What is wrong with the plan's own fields (a list of messages; empty when valid)."""
    out = []
    if plan.layout not in LAYOUTS:
        out.append(choice_fault(plan.layout, "layout", LAYOUTS))
    if not is_int(plan.width) or not 1 <= plan.width <= MAX_ADDRESS_WIDTH:
        out.append(f"width must be an int in 1..{MAX_ADDRESS_WIDTH}, got "
                   f"width={show_value(plan.width)}")
    for key in ("host_memory", "nic_mmio", "storage"):
        v = getattr(plan, key)
        if not is_int(v) or v < 0:
            out.append(f"{key} must be an int >= 0 bytes, got {key}={show_value(v)}")
    if not isinstance(plan.default_windows, bool):
        out.append("default_windows must be True or False, got "
                   f"default_windows={show_value(plan.default_windows)}")
    built = _as_built(fabric)
    owners = list(placed_chips(fabric, plan)) + [
        n for n, k in built.graph.nodes(data="kind") if k in ("nic", "memory")]
    tuples = [n for n in owners if isinstance(n, tuple)]
    if tuples:
        # a Region reads a tuple owner as an interleave set's owners (chip (0, 0) as a set
        # over 0 and 0); networkx's own grids name their nodes so
        out.append(f"nodes {_few(tuples)} are named by tuples, which an address plan reads as "
                   "an interleave set's owners: relabel the graph's nodes with strings (or with "
                   "ints equal to their ranks, as networkx.convert_node_labels_to_integers "
                   "gives when every node is a chip) to give them addresses")
    a = plan.alignment
    if not is_int(a) or a < MIN_PAGE_SIZE.value or a & (a - 1):
        out.append(f"alignment must be a power of two >= 4 KiB, got alignment={show_value(a)}")
    if plan.layout != "explicit":
        hbm = plan.hbm_bytes if plan.hbm_bytes is not None else getattr(fabric.chip, "hbm_bytes",
                                                                       None)
        if hbm is None:
            out.append(f"fabric {show_value(fabric.name)} names no chip, so the HBM size is "
                       "unknown; give the plan hbm_bytes (in a system file, [address] "
                       "hbm_bytes) or build the fabric with a chip (spec option chip=...)")
        elif not is_int(hbm) or hbm < MIN_PAGE_SIZE.value:
            # the HBM region is the chip's whole 4 KiB pages: less than one is no region
            out.append(f"hbm_bytes must be an int of at least one 4 KiB page (4096 bytes), "
                       f"got hbm_bytes={show_value(hbm)}")
    return out


def layout_regions(fabric, plan=None):
    """The global regions a plan places for a fabric (a list, not yet validated).

    Chips get an ``hbm`` region each (owner the chip node; the HBM size rounded down to
    whole 4 KiB pages, since datasheet capacities are decimal), hosts a ``dram``
    region (owner the host domain name) and optionally a ``storage`` region,
    nodes of kind ``"nic"`` an ``mmio`` region, nodes of kind ``"memory"`` a
    ``dram`` region of their ``capacity`` attribute (bytes) if they have one.
    Then the plan's interleave sets, then its explicit regions. Chips and host
    domains are the plan's placement (:func:`placed_chips`), which is the intact
    fabric's on a degraded copy; NICs and memory nodes are the intact fabric's too, so
    that no failure moves an address (a failed node keeps its region, reported as
    failed by :func:`fabric.check`).

    Parameters
    ----------
    fabric : Fabric
    plan : AddressPlan, optional
        Default: ``AddressPlan()``, the default plan.

    Returns
    -------
    list of Region

    Raises
    ------
    AddressMapError
        If the plan's own fields are invalid (unknown layout, no HBM size...).

    Examples
    --------
    >>> import networkx as nx
    >>> from fabric import Fabric
    >>> G = nx.path_graph(["chip0", "chip1"]); nx.set_node_attributes(G, "chip", "kind")
    >>> nx.set_edge_attributes(G, 1e9, "bandwidth"); nx.set_edge_attributes(G, 1e-7, "latency")
    >>> f = Fabric.from_graph(G, chip="h100")
    >>> [(r.name, hex(r.base)) for r in layout_regions(f, AddressPlan(host_memory=0))]
    [('chip0.hbm', '0x0'), ('chip1.hbm', '0x2000000000')]
    """
    fabric = fabric_arg(fabric)
    plan = plan_arg(plan)
    errors = plan_errors(fabric, plan)
    if errors:
        raise AddressMapError("invalid address plan: " + "; ".join(errors))
    regions = []
    if plan.layout != "explicit":
        hbm = plan.hbm_bytes if plan.hbm_bytes is not None else fabric.chip.hbm_bytes
        # Datasheet capacities are decimal (B200: 180 GB = 2**11 * 87890625 bytes), not always
        # whole pages; the region is the chip's whole 4 KiB pages.
        hbm -= hbm % MIN_PAGE_SIZE.value
        chips = placed_chips(fabric, plan)
        domains = placed_domains(fabric, plan)
        pieces = [(n, hbm, "hbm") for n in chips]
        if plan.host_memory:
            pieces += [(h, plan.host_memory, "dram") for h in domains]
        if plan.storage:
            pieces += [(h, plan.storage, "storage") for h in domains]
        for n, data in _as_built(fabric).graph.nodes(data=True):   # a failed NIC's too
            if data.get("kind") == "nic" and plan.nic_mmio:
                pieces.append((n, plan.nic_mmio, "mmio"))
            elif data.get("kind") == "memory" and data.get("capacity"):
                pieces.append((n, int(data["capacity"]), "dram"))
        pieces += [(reg.owner, reg.size, reg) for reg in plan.interleave]
        cursor = 0
        if plan.layout == "owner-bits":
            slot = pow2_ceil(hbm)
            cursor = len(chips) * slot
        for i, (owner, size, kind) in enumerate(pieces):
            if plan.layout == "owner-bits":
                base = i * slot if i < len(chips) else align_up(cursor, pow2_ceil(size))
            elif isinstance(kind, Region):
                # an interleave set's base is a multiple of the HDM decoder unit (256 MiB)
                base = align_up(cursor, max(plan.alignment, HDM_DECODER_UNIT.value))
            else:
                base = align_up(cursor, plan.alignment)
            if isinstance(kind, Region):
                regions.append(dataclasses.replace(kind, base=base))
            else:
                regions.append(Region(base, size, owner, kind))
            cursor = max(cursor, base + size)
    else:
        regions += list(plan.interleave)
    regions += list(plan.regions)
    return regions


def namespace_findings(fabric, plan, regions):
    """``invalid`` findings for names that mean two things, and regions owned by nobody.

    Rules (module docstring): a host domain may not be named like a node, unless
    that node is the domain's own ``kind="host"`` node; a region may not be named
    like a node or a host domain; neither may be called ``"*"`` (a grant's "every
    region"); every owner of a region is a node or a host
    domain (placed chips and domains count: a failed chip still owns its memory).
    """
    out = []
    graph = _as_built(fabric).graph     # a failed node's name is still taken (and its memory)
    domains = placed_domains(fabric, plan)
    domains.update(fabric.domains)
    chips = set(placed_chips(fabric, plan))
    for h in domains:
        if h == "*":
            out.append(Finding(code="invalid", severity="error",
                               message="host domain '*': '*' means every region in "
                               "a grant, so no domain may be called that", where="host domain '*'"))
        if h in graph and not (graph.nodes[h].get("kind") == "host"
                               and graph.nodes[h].get("host", h) == h):
            kind = graph.nodes[h].get("kind", "node")
            home = fabric.host_of.get(h)
            also = f" of host domain {show_value(home)}" if home is not None else ""
            out.append(Finding(code="invalid", severity="error",
                               message=f"host domain {show_value(h)} has the name of {kind} "
                               f"{show_value(h)}{also}: domain, node and region names are one "
                               "namespace (rename the domain)",
                               where=f"host domain {show_value(h)}"))
        elif h in chips:
            out.append(Finding(code="invalid", severity="error",
                               message=f"host domain {show_value(h)} has the name of chip "
                               f"{show_value(h)}: domain, node and region names are one namespace",
                               where=f"host domain {show_value(h)}"))
    for r in regions:
        name = r.name
        where = r.where or name
        try:
            clash_node = name in graph or name in chips
        except TypeError:
            clash_node = False
        if name == "*":
            out.append(Finding(code="invalid", severity="error",
                               message="region '*': '*' means every region in a "
                               "grant, so no region may be called that (rename the region)",
                               where=where))
        if clash_node:
            kind = graph.nodes[name].get("kind", "node") if name in graph else "chip"
            out.append(Finding(code="invalid", severity="error",
                               message=f"region {show_value(name)} has the name of {kind} "
                               f"{show_value(name)}: domain, node and region names are one "
                               "namespace (rename the region)", where=where))
        elif name in domains:
            out.append(Finding(code="invalid", severity="error",
                               message=f"region {show_value(name)} has the name of host "
                               f"domain {show_value(name)}: domain, node and region names are one "
                               "namespace (rename the region)", where=where))
        for o in r.owners:
            if o is None or o == "":
                continue        # region_findings reports an empty owner
            try:
                known = o in graph or o in domains or o in chips
            except TypeError:
                known = False
            if not known:
                out.append(Finding(code="invalid", severity="error",
                                   message=f"{r}: owner {show_value(o)} is nobody: "
                                   "not a node or host domain of the fabric", where=where))
    return out


#: The owners a region of each kind may have (node kinds, and "domain" for a host domain).
OWNER_KINDS = {"hbm": ("chip",), "dram": ("chip", "domain", "host", "memory"),
               "storage": ("domain", "host", "memory")}


_PLURAL = {"chip": "chips", "domain": "host domains", "host": "host nodes",
           "memory": "memory nodes"}
_A = {"hbm": "an", "dram": "a", "storage": "a"}


def _owner_kind(fabric, graph, chips, domains, owner):
    """``"domain"``, a node's kind, ``"chip"`` for a placed chip, or None (nobody)."""
    try:
        if owner in domains:
            # a domain named like a node other than its own host node: namespace_findings'
            host = owner in graph and graph.nodes[owner].get("kind") == "host"
            return "domain" if host or (owner not in graph and owner not in chips) else None
        if owner in graph:
            return graph.nodes[owner].get("kind", "node")
        return "chip" if owner in chips else None
    except TypeError:
        return None


def _capacity(fabric, plan, graph, owner, kind):
    """The bytes of memory ``owner`` has (a chip's HBM, a memory node's capacity), or None."""
    if kind == "chip":
        hbm = getattr(fabric.chip, "hbm_bytes", None)
        return hbm if is_int(hbm) and hbm > 0 else None
    if kind == "memory":
        cap = graph.nodes[owner].get("capacity")     # read as layout_regions reads it
        try:
            cap = int(cap)
        except (TypeError, ValueError, OverflowError):
            return None
        return cap if cap > 0 else None
    return None


def _bytes(n):
    """``'80GB (80000000000 bytes)'``: a size read both ways (datasheets are decimal)."""
    return f"{format_size(n, binary=False)} ({n} bytes)"


def owner_findings(fabric, plan, regions):
    """Findings for regions their owners cannot hold (module docstring, "Owners hold ...").

    ``invalid``: a region of a kind its owner has no memory of (an ``hbm`` region on a
    switch, a NIC or a host; storage on a chip; any memory on a switch or NIC). ``capacity``:
    an owner whose regions and interleave shares claim more memory than it has (a chip's
    HBM, a memory node's capacity; a host domain's DRAM has no hardware figure and is not
    counted, see the module docstring). Owners that are nobody are
    :func:`namespace_findings`'s; regions with invalid sizes :func:`region_findings`'s.

    Examples
    --------
    >>> import topologies
    >>> from fabric import Region
    >>> f = topologies.build("hgx-h200")
    >>> pool = Region(0, 512 << 20, ("chip0", "chip1"), granularity=4096, name="pool")
    >>> [x.code for x in owner_findings(f, AddressPlan(), layout_regions(f, AddressPlan(
    ...     interleave=[pool])))]
    ['capacity', 'capacity']
    >>> owner_findings(f, AddressPlan(), layout_regions(f, AddressPlan(
    ...     hbm_bytes=140 * 10**9, interleave=[pool])))
    []
    """
    out = []
    graph = _as_built(fabric).graph
    domains = placed_domains(fabric, plan)
    domains.update(fabric.domains)
    chips = set(placed_chips(fabric, plan))
    used, parts = {}, {}
    for r in regions:
        if r.kind not in OWNER_KINDS or r.size <= 0 or not r.owners:
            continue        # mmio anywhere; bad kinds and sizes are region_findings'
        where = r.where or r.name
        allowed = OWNER_KINDS[r.kind]
        wrong = []
        for o in r.owners:
            k = _owner_kind(fabric, graph, chips, domains, o)
            if k is None:
                continue
            if k not in allowed:
                wrong.append((o, k))
                continue
            share = r.size // r.ways
            used[o] = used.get(o, 0) + share
            parts.setdefault(o, []).append((r, share))
        if wrong:
            who = ", ".join(f"{'host domain' if k == 'domain' else k} "
                            f"{show_value(o)}" for o, k in wrong)
            names = [_PLURAL[k] for k in allowed]
            holders = names[0] if len(names) == 1 else \
                f"{', '.join(names[:-1])} or {names[-1]}"
            what = "interleaved over" if r.ways > 1 else "owned by"
            out.append(Finding(code="invalid", severity="error",
                               message=f"{r}: {r.kind} {what} {who}, which holds "
                               f"no {r.kind}: {_A[r.kind]} {r.kind} region is held by {holders} "
                               "(mmio registers may be anywhere)", where=where))
    chip_hbm = _capacity(fabric, plan, graph, None, "chip")
    given = plan.hbm_bytes if plan.layout != "explicit" and is_int(plan.hbm_bytes) else None
    whole = None if given is None else given - given % MIN_PAGE_SIZE.value   # the region
    if chip_hbm is not None and whole is not None and whole > chip_hbm:
        # one cause for every chip: the layout's own region is larger than the chip's HBM
        out.append(Finding(code="capacity", severity="error",
                           message=f"hbm_bytes={show_value(given)}, the size of each chip's "
                           f"own region, is more than the {_bytes(chip_hbm)} of HBM of its "
                           f"chip ({fabric.chip.name}): every chip would be given memory it "
                           "does not have", where="address plan"))
    for o, total in used.items():
        k = _owner_kind(fabric, graph, chips, domains, o)
        cap = _capacity(fabric, plan, graph, o, k)
        if cap is None or total <= cap or (k == "chip" and whole is not None
                                           and whole > cap):
            continue
        what = (f"the {_bytes(cap)} of HBM of its chip ({fabric.chip.name})" if k == "chip"
                else f"its capacity of {_bytes(cap)}")
        claims = ", ".join(f"{format_size(share, binary=False)} of {show_value(r.name)}" + (
            f" (1/{r.ways} of the set)" if r.ways > 1 else "") for r, share in parts[o])
        fix = (" (make room with the plan's hbm_bytes, the size of each chip's own region, "
               "or the explicit layout)" if k == "chip" else "")
        where = next((r.where for r, _ in parts[o] if r.where), o)
        out.append(Finding(code="capacity", severity="error",
                           message=f"{k} {show_value(o)} is given {_bytes(total)} of memory, more "
                           f"than {what}: {claims}; an interleave set's share is memory of "
                           f"its owners{fix}", where=where))
    return out


def placement_findings(fabric, plan):
    """``invalid`` findings when a pinned placement is not the fabric's as built.

    ``chips`` and ``domains`` are written by :meth:`fabric.Fabric.without` (:func:`pin_placement`)
    so that a degraded copy lays out as the intact fabric did; they are the intact fabric's
    endpoints in rank order and host domains. A placement that differs (a plan pinned on one
    fabric given to another, or written by hand) would move every later chip's HBM, give a
    name that is no chip a region (then reported as a failed chip) or leave a chip with no
    address at all: one finding for each of ``chips`` and ``domains``, naming the difference.
    """
    out = []
    built = _as_built(fabric)
    if plan.chips is not None:
        want = tuple(built.endpoints)
        got = tuple(plan.chips)
        if got != want:
            known, placed = set(want), Counter(got)
            parts = []
            strange = [c for c in placed if c not in known]
            missing = [c for c in want if c not in placed]
            twice = [c for c, k in placed.items() if k > 1]
            if strange:
                parts.append(f"{_few(strange)} {'is' if len(strange) == 1 else 'are'} not "
                             "a chip of it")
            if missing:
                parts.append(f"{_few(missing)} {'is' if len(missing) == 1 else 'are'} not "
                             "placed (no HBM address)")
            if twice:
                parts.append(f"{_few(twice)} placed twice")
            if not parts:
                parts.append("the order differs (each chip's HBM would move to another "
                             "rank's slot)")
            out.append(Finding(code="invalid", severity="error",
                               message=f"the plan's chips are not the chips of "
                                       f"{show_value(built.name)} as "
                               f"built, in rank order: {'; '.join(parts)}. chips and domains "
                               "pin the layout of a degraded copy (fabric.without); a plan "
                               "given to another fabric leaves them None", where="address plan"))
    if plan.domains is not None:
        want = {h: tuple(cs) for h, cs in built.domains.items()}
        got = dict(plan.domains)
        if got != want:
            parts = []
            strange = [h for h in got if h not in want]
            missing = [h for h in want if h not in got]
            other = [h for h in got if h in want and tuple(got[h]) != want[h]]
            if strange:
                parts.append(f"{_few(strange)} {'is' if len(strange) == 1 else 'are'} not a "
                             "host domain of it")
            if missing:
                parts.append(f"{_few(missing)} {'is' if len(missing) == 1 else 'are'} not "
                             "placed (no DRAM, no apertures)")
            if other:
                parts.append(f"{_few(other)} {'holds' if len(other) == 1 else 'hold'} other "
                             "chips")
            out.append(Finding(code="invalid", severity="error",
                               message=f"the plan's host domains are not those of "
                                       f"{show_value(built.name)} "
                               f"as built: {'; '.join(parts or ['their order differs'])}. chips "
                               "and domains pin the layout of a degraded copy (fabric.without); "
                               "a plan given to another fabric leaves them None",
                               where="address plan"))
    return out


def _few(names, most=4):
    """``"'a', 'b' and 'c'"``; past ``most`` names, ``"'a', 'b', 'c' and 5 more"``."""
    return name_list([show_value(n) for n in names], most)


def plan_regions(fabric, plan):
    """The validated :class:`AddressMap` of a plan on a fabric (used by ``Fabric.address_map``).

    Raises
    ------
    AddressMapError
        Naming every fault of the regions, and every name that means two things.
    """
    regions = layout_regions(fabric, plan)
    errors = placement_findings(fabric, plan) + namespace_findings(fabric, plan, regions) + [
        f for f in owner_findings(fabric, plan, regions) if f.severity == "error"]
    if errors:
        more = f" (and {len(errors) - 10} more)" if len(errors) > 10 else ""
        raise AddressMapError("invalid address plan: " + "; ".join(
            f"{f.code}: {f.message}" for f in errors[:10]) + more)
    return AddressMap(regions, plan.width)

