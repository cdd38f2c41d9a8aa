"""The global address map: disjoint regions, layout plans, interleave sets, lookup.

Every chip's HBM, every host's DRAM, NIC registers and storage windows have a
global address. A :class:`Region` is ``(base, size, owner, kind, permissions)``;
an :class:`AddressMap` holds disjoint regions inside an address width (57 bits
by default, UALink 1.0's physical address) and answers, for one address or a
numpy array of them, *which owner, at which offset*. Unmapped addresses are
reported (an error, or a mask when asked), never silently mapped.

Layout plans (where each region goes) are :class:`fabric.AddressPlan`, in
:mod:`fabric._plan`, which builds on this module.

Interleave sets follow the CXL HDM decoder rules (docs/sources.md s.3; CXL 2.0
specification, section 8.2.5.12, HDM decoder capability; Linux
``tools/testing/cxl/test/cxl_translate.c``): ``ways`` in
{1, 2, 4, 8, 16, 3, 6, 12}, granularity ``g`` a power of two from 256 B to
16 KiB; offset ``o`` into the set lives on target ``(o // g) % ways`` at device
offset ``(o // (g * ways)) * g + o % g`` (:func:`interleave_target`, inverse
:func:`interleave_offset`). An HDM decoder's base and size are programmed in
units of 256 MiB, and each of the ``ways`` targets holds ``size / ways``, so the
checker follows that rule for every interleave set (a region with more than one
owner, or with a granularity): **base a multiple of 256 MiB and size a multiple
of 256 MiB x ways** (:data:`HDM_DECODER_UNIT`); a ``misaligned`` error otherwise.
A plain region (one owner) follows only the 4 KiB page rule.

Validation yields :class:`Finding` records (code, severity, message, where),
so that :func:`fabric.check` can report every fault of a plan while the
constructors here refuse a plan with any error.

Examples
--------
>>> amap = AddressMap([Region(0, 4096, "chip0"), Region(8192, 8192, "chip1")], width=16)
>>> amap.lookup(8200)
Location(address=8200, region='chip1.hbm', owner='chip1', offset=8)
>>> amap.lookup(5000)
Traceback (most recent call last):
...
fabric.AddressMapError: address 0x1388 is not mapped (no region holds it)
"""

from dataclasses import dataclass, field

import numpy as np

from ._arrays import integer_array
from ._errors import AddressMapError
from ._params import Parameter
from ._units import (
    GiB,
    KiB,
    MiB,
    TiB,
    check_choice,
    check_count,
    choice_fault,
    format_address,
    format_size,
    int_of,
    is_bool,
    is_float,
    is_int,
    kind_error,
    name_list,
    one_of,
    parse_address,
    sequence_of,
    show_value,
    text_of,
)

__all__ = [
    "ADDRESS_WIDTH",
    "DEFAULT_HOST_MEMORY",
    "DEFAULT_NIC_MMIO",
    "DEFAULT_PACKED_ALIGNMENT",
    "HDM_DECODER_UNIT",
    "INTERLEAVE_GRANULARITIES",
    "INTERLEAVE_WAYS",
    "MAX_ADDRESS_WIDTH",
    "MAX_PAGE_SIZE",
    "MIN_PAGE_SIZE",
    "PERMISSIONS",
    "REGION_KINDS",
    "AddressMap",
    "Finding",
    "Location",
    "Locations",
    "Region",
    "check_interleave",
    "interleave_offset",
    "interleave_target",
    "region_findings",
    "validate_address",
]

ADDRESS_WIDTH = Parameter(
    "address.width", 57, "bit",
    "UALink 1.0: 57-bit physical address (docs/sources.md s.1, second-hand summaries)")
#: Addresses are held in int64 arrays; with at most 62 bits, base + size never overflows.
MAX_ADDRESS_WIDTH = 62
#: Magnitude beyond which a raw value cannot be held in the int64 tables (2**62).
INT64_SAFE = 1 << 62
INTERLEAVE_WAYS = (1, 2, 4, 8, 16, 3, 6, 12)
INTERLEAVE_GRANULARITIES = tuple(256 << i for i in range(7))  # 256 B .. 16 KiB
HDM_DECODER_UNIT = Parameter(
    "address.hdm_decoder_unit", 256 * MiB, "B",
    "CXL 2.0 specification sec. 8.2.5.12 (HDM decoder base and size registers hold "
    "address bits 63:28: a decoder range is in units of 256 MiB); Linux "
    "drivers/cxl/core/region.c alloc_hpa() refuses a region size that is not a multiple of "
    "256 MiB x interleave ways")
MIN_PAGE_SIZE = Parameter(
    "address.min_page_size", 4 * KiB, "B",
    "Linux include/linux/ntb.h: NTB window alignment at least 4 KiB; Gen-Z requester ZMMU "
    "smallest page 4 KiB (HewlettPackard/zhpe-driver); docs/sources.md s.3")
MAX_PAGE_SIZE = Parameter(
    "address.max_page_size", 256 * TiB, "B",
    "Gen-Z requester ZMMU page sizes 4 KiB to 256 TiB (HewlettPackard/zhpe-driver); "
    "docs/sources.md s.3")
DEFAULT_HOST_MEMORY = Parameter(
    "address.host_memory", 1 * TiB, "B",
    "assumption: DRAM per host domain. Inspur SD200 reports 64 TB of host memory in all "
    "(China Daily, 2025-08-08, second-hand) without the host count")
DEFAULT_NIC_MMIO = Parameter(
    "address.nic_mmio", 32 * MiB, "B",
    "assumption: register (BAR) window per NIC node; not from a datasheet")
DEFAULT_PACKED_ALIGNMENT = Parameter(
    "address.packed_alignment", 1 * GiB, "B",
    "assumption: region alignment of the packed layout (a 1 GiB huge page)")

REGION_KINDS = ("hbm", "dram", "mmio", "storage")
PERMISSIONS = ("r", "rw")


@dataclass(frozen=True)
class Finding:
    """One fault found in an address plan.

    Attributes
    ----------
    code : str
        ``overlap``, ``misaligned``, ``out-of-range``, ``dangling-target``, ``alias``,
        ``isolation``, ``too-many-entries``, ``symmetric-mismatch``, ``roundtrip``,
        ``unreachable``, ``capacity`` (more memory claimed of an owner than it has) or
        ``invalid`` (a value that is not allowed at all).
    severity : str
        ``"error"`` or ``"warning"``.
    message : str
        Names the objects at fault and the rule.
    where : str
        The object (and, for a system file, its line): for a plan built in Python, the
        object's own name (a region's, a window's, ``"grant #k (host -> target)"``), kept
        whole, however long, since a caller matches findings by it; the message quotes it
        shortened (``fabric._units.show_value``). A system file's names its line and entry
        (``"plan.toml:3 regions[0]"``).
    """

    code: str
    severity: str
    message: str
    where: str = ""

    def __str__(self):
        where = f" [{self.where}]" if self.where else ""
        return f"{self.severity} {self.code}: {self.message}{where}"


def _error(code, message, where=""):
    return Finding(code=code, severity="error", message=message, where=where)


def pow2_ceil(n):
    """The smallest power of two >= ``n`` (1 for ``n <= 1``)."""
    return 1 << max(0, int(n) - 1).bit_length()


def align_up(x, a):
    """``x`` rounded up to a multiple of ``a``."""
    return -(-x // a) * a


def whole_numbers(values, what, rule="integers >= 0", *, high=None, exc=AddressMapError):
    """An int, or an integer numpy array, each ``>= 0`` and ``< high`` (when given).

    An int is checked by :func:`fabric._units.check_count` (``rule`` said of one value:
    "an integer in ..."); an array's dtype must be an integer one. STYLE's rule: a value or
    array of another kind (a float, a string, a bool, None; a float or bool array) is a
    TypeError, an integer out of range an ``exc``; the message names ``what``, the value (an
    array: its dtype, or its first value out of range) and the rule. An empty sequence holds
    no value of a wrong kind: ``[]`` (which numpy reads as float64) is an empty int64 array,
    as :func:`as_address_array` takes it (fabric._errors, session 34).

    >>> whole_numbers(np.array([0, 5]), "interleave position", "integers in 0..7", high=8)
    array([0, 5])
    >>> whole_numbers(True, "offset")
    Traceback (most recent call last):
    ...
    TypeError: offset must be an integer >= 0, got offset=True (a bool)
    >>> whole_numbers(np.array([0, 9]), "interleave position", "integers in 0..7", high=8)
    Traceback (most recent call last):
    ...
    fabric.AddressMapError: interleave position must be integers in 0..7, got interleave position=9
    """
    if is_int(values) or is_bool(values) or is_float(values) or isinstance(values, str) \
            or values is None:
        return check_count(values, what, 0, rule.replace("integers", "an integer"), below=high,
                           error=exc)
    a = integer_array(values, what, rule)
    if a.size == 0:
        return a
    lo, hi = a.min(), a.max()
    if lo < 0:
        raise exc(f"{what} must be {rule}, got {what}={int(lo)}")
    if high is not None and hi >= high:
        raise exc(f"{what} must be {rule}, got {what}={int(hi)}")
    return a.astype(np.int64, copy=False)


def validate_address(address, width=57, what="address"):
    """Return ``address`` as an ``int`` after checking it is a number in ``[0, 2**width)``.

    Strings go through :func:`fabric.parse_address` (``"0x4000_0000"``).

    Parameters
    ----------
    address : int or str
        A byte address.
    width : int
        Address bits (:data:`ADDRESS_WIDTH`, 57, by default).
    what : str
        The value's name in messages.

    Returns
    -------
    int

    Raises
    ------
    TypeError
        If it is neither an integer nor a string (a float, a bool, None): STYLE's rule, as
        :func:`fabric._units.check_count`.
    AddressMapError
        If it is negative, ``width`` bits or wider, or a string that is no address; the
        message names the value.

    Examples
    --------
    >>> validate_address("0x10", width=8)
    16
    >>> validate_address(256, width=8)
    Traceback (most recent call last):
    ...
    fabric.AddressMapError: address 0x100 is wider than the 8-bit address width (max 0xff)
    """
    if not (is_int(address) or isinstance(address, str)):
        raise kind_error(address, what, "an integer >= 0 or a string such as '0x1000'")
    try:
        value = parse_address(address)
    except (TypeError, ValueError) as e:
        # parse_address's sentence quotes the value: said once ("local address '' is
        # refused: address '' is not a number" said it twice)
        raise AddressMapError(f"{what}: {e}") from e
    if value >> width:
        shown = format_address(value)       # it shortens a value beyond any width itself
        if isinstance(address, str) and address.strip() != shown:
            shown = f"{show_value(address)} ({shown})"
        raise AddressMapError(f"{what} {shown} is wider than the {width}-bit "
                              f"address width (max {format_address((1 << width) - 1)})")
    return value


# -- interleave sets (CXL HDM decoders) ------------------------------------------------

def check_interleave(ways, granularity):
    """Raise :class:`AddressMapError` unless ``ways`` and ``granularity`` follow the CXL rules.

    ``ways`` in {1, 2, 4, 8, 16, 3, 6, 12}; ``granularity`` a power of two from
    256 B to 16 KiB (docs/sources.md s.3). Either of the wrong kind (a float, a bool, None)
    is a TypeError (STYLE's rule, as :func:`fabric._units.check_count`).

    Parameters
    ----------
    ways : int
        Members of the set.
    granularity : int
        Bytes of one member's granule.

    Examples
    --------
    >>> check_interleave(3, 4096)
    >>> check_interleave(5, 4096)
    Traceback (most recent call last):
    ...
    fabric.AddressMapError: interleave ways must be one of 1, 2, 4, 8, 16, 3, 6, 12, got interleave ways=5
    >>> check_interleave(2, 256.0)
    Traceback (most recent call last):
    ...
    TypeError: interleave granularity must be a power of two from 256 B to 16 KiB, got interleave granularity=256.0 (a float)
    """
    for what, value, rule, allowed in (
            ("ways", ways, one_of(INTERLEAVE_WAYS), INTERLEAVE_WAYS),
            ("granularity", granularity, "a power of two from 256 B to 16 KiB",
             INTERLEAVE_GRANULARITIES)):
        # the kind by check_count (its TypeError), then the CXL set, in check_count's words
        name = f"interleave {what}"
        if check_count(value, name, None, rule, error=AddressMapError) not in allowed:
            raise AddressMapError(f"{name} must be {rule}, got {name}={show_value(value)}")


def interleave_target(offset, ways, granularity):
    """Return ``(position, device_offset)`` of ``offset`` into an interleave set.

    ``position = (o // g) % ways``; ``device_offset = (o // (g * ways)) * g + o % g``
    (CXL HDM decode, as in Linux ``tools/testing/cxl/test/cxl_translate.c``).
    Works elementwise on integer numpy arrays.

    Parameters
    ----------
    offset : int or numpy.ndarray of int
        Byte offset into the set.
    ways : int
        Members of the set.
    granularity : int
        Bytes of one member's granule.

    Returns
    -------
    tuple
        ``(position, device_offset)``: the member and the byte offset in its share (ints, or
        arrays for an array).

    Raises
    ------
    TypeError
        If ``offset`` is not an integer or integer array (a bool, a float, a float array), or
        ``ways`` or ``granularity`` not an integer.
    AddressMapError
        Unless ``offset`` is in ``[0, 2**62)`` and ``ways`` and ``granularity`` follow
        :func:`check_interleave`.

    Examples
    --------
    >>> interleave_target(5 * 256 + 7, 4, 256)
    (1, 263)
    >>> interleave_target(-1, 4, 256)
    Traceback (most recent call last):
    ...
    fabric.AddressMapError: interleave offset must be an integer in [0, 2**62), got interleave offset=-1
    """
    check_interleave(ways, granularity)
    offset = whole_numbers(offset, "interleave offset", "integers in [0, 2**62)",
                           high=INT64_SAFE)
    return (offset // granularity) % ways, (offset // (granularity * ways)) * granularity \
        + offset % granularity


def interleave_offset(position, device_offset, ways, granularity):
    """Inverse of :func:`interleave_target`: the set offset of ``device_offset`` on ``position``.

    Parameters
    ----------
    position : int or numpy.ndarray of int
        The member, ``0..ways - 1``.
    device_offset : int or numpy.ndarray of int
        The byte offset in that member's share.
    ways, granularity : int
        As :func:`check_interleave` takes them (bytes).

    Returns
    -------
    int or numpy.ndarray of int
        The byte offset into the set.

    Examples
    --------
    >>> interleave_offset(1, 263, 4, 256)
    1287

    Errors as :func:`interleave_target`'s (``position`` in ``0..ways - 1``).
    """
    check_interleave(ways, granularity)
    position = whole_numbers(position, "interleave position", f"integers in 0..{ways - 1}",
                             high=ways)
    device_offset = whole_numbers(device_offset, "device offset", "integers in [0, 2**62)",
                                  high=INT64_SAFE)
    g = granularity
    return (device_offset // g) * g * ways + position * g + device_offset % g


# -- regions -------------------------------------------------------------------------

@dataclass(frozen=True)
class Region:
    """A contiguous range of global addresses owned by one device, or interleaved over several.

    Parameters
    ----------
    base, size : int
        Bytes.
    owner : str or tuple of str
        The node (or host domain) that holds the memory; a tuple makes an
        interleave set over those owners in position order.
    kind : str
        ``"hbm"``, ``"dram"``, ``"mmio"`` or ``"storage"``.
    permissions : str
        ``"rw"`` or ``"r"`` (read-only memory).
    name : str, optional
        Default ``"{owner}.{kind}"`` (``"{owner0}+...{kind}"`` for a set).
    granularity : int, optional
        Interleave granularity in bytes; required for a set of more than one owner.
    where : str, optional
        Where the region was described (a system file and line), for findings.

    The constructor checks only types; :class:`AddressMap` and
    :func:`fabric.check` check the rules, so that a broken plan can be held and
    reported rather than refused on sight.
    """

    base: int
    size: int
    owner: object
    kind: str = "hbm"
    permissions: str = "rw"
    name: str = None
    granularity: int = None
    where: str = field(default=None, compare=False, repr=False)

    def __post_init__(self):
        for key in ("base", "size"):
            object.__setattr__(self, key, int_of(getattr(self, key), f"Region {key}"))
        if isinstance(self.owner, (list, tuple)):
            owners = tuple(self.owner)
            object.__setattr__(self, "owner", owners[0] if len(owners) == 1 else owners)
        for o in self.owners:
            try:
                hash(o)
            except TypeError:
                raise kind_error(o, "Region owner", "a node or host name") from None
        for key in ("kind", "permissions", "name"):
            text_of(getattr(self, key), f"Region {key}", optional=key == "name")
        object.__setattr__(self, "granularity",
                           int_of(self.granularity, "Region granularity", optional=True))
        if self.name is None:
            label = "+".join(map(str, self.owners)) if self.ways > 1 else str(self.owner)
            object.__setattr__(self, "name", f"{label}.{self.kind}")

    @property
    def owners(self):
        """The owners in interleave position order (one for a plain region)."""
        return self.owner if isinstance(self.owner, tuple) else (self.owner,)

    @property
    def ways(self):
        """How many owners the region is interleaved over."""
        return len(self.owners)

    @property
    def end(self):
        """One past the last address."""
        return self.base + self.size

    def __str__(self):
        return (f"region {show_value(self.name)} [{format_address(self.base)}, "
                f"{format_address(self.end)})")


def _regions(regions):
    """``regions`` as a list of :class:`Region` (TypeError naming the parameter otherwise)."""
    regions = sequence_of(regions, "regions", "Region objects")
    for reg in regions:
        if not isinstance(reg, Region):
            raise kind_error(reg, "regions", "Region objects")
    return regions


def region_findings(regions, width=57):
    """Every fault of a list of regions, as :class:`Finding` records (empty when valid).

    Rules: address width an int in 1..62 (:data:`MAX_ADDRESS_WIDTH`); size > 0 and both
    base and size multiples of 4 KiB (:data:`MIN_PAGE_SIZE`); end within the address width;
    an owner (not None, not empty); kind and permissions known; names unique;
    interleave ways and granularity per CXL, base a multiple of 256 MiB and size a
    multiple of 256 MiB x ways (:data:`HDM_DECODER_UNIT`); no two regions overlap
    (each overlapping region is reported once, with one partner). Whether each
    owner is a node or host domain of a fabric is :func:`fabric.check`'s rule.

    Parameters
    ----------
    regions : sequence of Region
    width : int
        Address bits (:data:`ADDRESS_WIDTH`, 57, by default).

    Returns
    -------
    list of Finding

    Examples
    --------
    >>> findings = region_findings([Region(0, 2**30, "chip0", name="a"),
    ...                             Region(2**29, 2**30, "chip1", name="b")])
    >>> [(f.code, f.message) for f in findings]
    [('overlap', "region 'b' [0x20000000, 0x60000000) overlaps region 'a' [0x0, 0x40000000)")]
    """
    regions = _regions(regions)
    out = []
    if not is_int(width) or not 1 <= width <= MAX_ADDRESS_WIDTH:
        return [_error("invalid", f"address width must be an int in 1..{MAX_ADDRESS_WIDTH} "
                       f"bits, got width={show_value(width)}", "address plan")]
    page = MIN_PAGE_SIZE.value
    limit = 1 << width
    names = {}
    for reg in regions:
        where = reg.where or reg.name
        if not reg.owners or any(o is None or o == "" for o in reg.owners):
            out.append(_error("invalid", f"{reg}: a region is owned by a node or host domain, "
                              f"got owner={show_value(reg.owner)} (nobody)", where))
        if reg.kind not in REGION_KINDS:
            out.append(_error("invalid", f"{reg}: " + choice_fault(reg.kind, "kind",
                                                                   REGION_KINDS), where))
        if reg.permissions not in PERMISSIONS:
            out.append(_error("invalid", f"{reg}: " + choice_fault(
                reg.permissions, "permissions", PERMISSIONS), where))
        if reg.name in names:
            out.append(_error("invalid", f"{reg}: name {show_value(reg.name)} is used "
                                         f"twice", where))
        names[reg.name] = reg
        if reg.size <= 0:
            out.append(_error("invalid", f"{reg}: size {show_value(reg.size)} must be > 0",
                              where))
            continue
        if reg.base < 0:
            out.append(_error("out-of-range", f"{reg}: base is negative", where))
        elif reg.end > limit:
            out.append(_error("out-of-range", f"{reg}: ends at {format_address(reg.end)}, "
                              f"beyond the {width}-bit address width", where))
        if reg.base % page or reg.size % page:
            out.append(_error("misaligned", f"{reg}: base {format_address(reg.base)} and size "
                              f"{show_value(reg.size)} must be multiples of {format_size(page)}",
                              where))
        if reg.ways > 1 or reg.granularity is not None:
            try:
                check_interleave(reg.ways, reg.granularity)
            except AddressMapError as e:
                out.append(_error("invalid", f"{reg}: {e}", where))
            else:
                unit = HDM_DECODER_UNIT.value
                if reg.size % (unit * reg.ways) or reg.base % unit:
                    out.append(_error(
                        "misaligned", f"{reg}: an interleave set (CXL HDM decoder) has its base "
                        f"a multiple of {format_size(unit)} and its size a multiple of "
                        f"{format_size(unit)} x ways = {format_size(unit * reg.ways)}; got "
                        f"base {format_address(reg.base)}, size {show_value(reg.size)}", where))
            if len(set(reg.owners)) != reg.ways:
                out.append(_error("invalid", f"{reg}: an owner appears twice in the interleave "
                                  f"set {reg.owners}", where))
    valid = [r for r in regions if r.size > 0]
    order = sorted(range(len(valid)), key=lambda i: (valid[i].base, valid[i].end))
    reach = None
    for i in order:
        reg = valid[i]
        if reach is not None and reg.base < reach.end:
            out.append(_error("overlap", f"{reg} overlaps {reach}", reg.where or reg.name))
        if reach is None or reg.end > reach.end:
            reach = reg
    return out


def default_region(regions):
    """The region an owner's name stands for: its only region, else its own HBM region
    (:func:`owned_regions`: the one named ``<owner>.hbm``, else its only HBM region of its
    own): the region :meth:`AddressMap.global_address` and :func:`fabric.access_to` take (an
    owner's bytes in it: its share of an interleave set), and a window target naming an owner
    when the region is its own (a window maps the whole region, so an interleave set, shared,
    is refused there: :func:`no_own_region`). The default windows and the heap take
    :func:`owned_regions`' HBM rule alone, so an owner whose only region is DRAM or an
    interleave set stands for it here and has no HBM there.

    ``regions`` are the regions one owner holds (its interleave sets too); None when neither
    rule picks one (the caller asks for a region by name).
    """
    if len(regions) == 1:
        return regions[0]
    own, _ = owned_regions(regions, "hbm")
    return regions[next(iter(own.values()))] if len(own) == 1 else None


def owned_regions(regions, kind):
    """Each owner's own region of ``kind``: ``({owner: index}, {owner: [index, ...]})``.

    "A chip's HBM" (the default windows' target, the symmetric heap's home) and "a host's
    DRAM" (its default aperture) are the owner's own region: the one named
    ``"<owner>.<kind>"`` (``chip3.hbm``, ``host1.dram``: the layouts' names), else its only
    single-owner region of ``kind``. The second dict holds the owners of several such
    regions, none so named: they have no own region, and the callers say so
    (:func:`default_region`, the region an owner's name stands for, is built on this rule).
    A region's place does not enter the rule: one out of range is still its owner's own (the
    default windows give it no window; region_findings reports it).
    """
    owned = {}
    for i, r in enumerate(regions):
        if r.ways == 1 and r.kind == kind:
            try:
                owned.setdefault(r.owner, []).append(i)
            except TypeError:           # an unhashable owner: region_findings reports it
                pass
    own, several = {}, {}
    for o, ix in owned.items():
        named = [i for i in ix if regions[i].name == f"{o}.{kind}"]
        if len(ix) == 1 or len(named) == 1:
            own[o] = named[0] if named else ix[0]
        else:
            several[o] = ix
    return own, several


def no_own_region(owner, regions, kind="hbm", so=None):
    """Why ``owner``'s name stands for no region of its own among ``regions`` (the regions it
    holds memory in), the one sentence of that rule (:func:`owned_regions`,
    :func:`default_region`): its only region is an interleave set (a window or an access
    maps a whole region: a set is shared); or it holds several regions of ``kind`` (an
    ``"hbm"`` or ``"dram"``) and none is named ``<owner>.<kind>``; or none of its several
    regions is one of ``kind`` of its own. ``so``: what that leaves without a region (a
    default window, a heap, an access), said after it; its five callers each wrote one of
    two sentences (session 37's F8).

    >>> no_own_region("chip3", [Region(0, 2**30, ("chip3", "chip4"), name="pool")])
    "'chip3' holds memory only in the interleave set 'pool' (shared with 'chip4'), no region of its own"
    >>> regs = [Region(0, 2**30, "chip3", name="c3a"), Region(2**30, 2**30, "chip3", name="c3b")]
    >>> no_own_region("chip3", regs, "hbm", "its heap has no one place")
    "'chip3' holds 2 HBM regions ('c3a' and 'c3b') and none is named 'chip3.hbm', so its heap has no one place"
    """
    _, several = owned_regions(regions, kind)       # the rule's own list, not written again
    mine = [regions[i] for i in several.get(owner, ())]
    if len(regions) == 1 and regions[0].ways > 1:
        others = name_list([show_value(o) for o in regions[0].owners if o != owner])
        why = (f"{show_value(owner)} holds memory only in the interleave set "
               f"{show_value(regions[0].name)} (shared with {others}), no region of its own")
    elif len(mine) > 1:
        why = (f"{show_value(owner)} holds {len(mine)} {kind.upper()} regions "
               f"({name_list([show_value(r.name) for r in mine])}) and none is named "
               f"{show_value(f'{owner}.{kind}')}")
    else:
        why = (f"{show_value(owner)} holds {len(regions)} regions and no {kind.upper()} region "
               "of its own")
    return why if so is None else f"{why}, so {so}"


def _raise_errors(findings, exc, what):
    errors = [f for f in findings if f.severity == "error"]
    if errors:
        more = f" (and {len(errors) - 10} more)" if len(errors) > 10 else ""
        raise exc(f"invalid {what}: " + "; ".join(f"{f.code}: {f.message}"
                                                    for f in errors[:10]) + more)


@dataclass(frozen=True)
class Location:
    """Where one global address lives: its region, the owner and the offset on that owner.

    For an interleave set ``owner`` is the device that holds the byte and
    ``offset`` its device offset within the set's share on that device.
    """

    address: int
    region: str
    owner: object
    offset: int


@dataclass(frozen=True)
class Locations:
    """The vectorized form of :class:`Location`: int64 arrays of equal length.

    ``region`` and ``owner`` are indices into :attr:`AddressMap.regions` and
    :attr:`AddressMap.owners`; ``-1`` (and ``offset`` -1) where ``mapped`` is False.
    """

    region: np.ndarray
    owner: np.ndarray
    offset: np.ndarray
    mapped: np.ndarray


def as_address_array(addresses, width, exc, what="address"):
    """``addresses`` as an int64 array of addresses in ``[0, 2**width)``: a TypeError unless
    its dtype is an integer one (an empty array of any dtype is no address), an ``exc``
    naming the first address out of range (STYLE's rule, as :func:`validate_address`)."""
    # a bool in a sequence named by its position ('address[1]=True'), then the dtype
    a = integer_array(addresses, f"{what}es", name=what)
    if a.size == 0:
        return a
    if a.dtype == np.uint64:
        big = a >= np.uint64(1 << width)
        if big.any():
            v = int(a.ravel()[np.argmax(big.ravel())])      # any shape, a 0-d array too
            raise exc(f"{what} {format_address(v)} is wider than the {width}-bit address width")
        return a.astype(np.int64)
    a = a.astype(np.int64, copy=False)
    lo, hi = a.min(), a.max()
    if lo < 0:
        raise exc(f"{what} {int(lo)} is negative")
    if hi >> width:
        raise exc(f"{what} {format_address(int(hi))} is wider than the {width}-bit address width")
    return a


def shift_table(bases, ends, width, max_entries=1 << 20):
    """A direct-indexed table ``slot -> interval`` when every base is a multiple of ``2**s``.

    With bases on a ``2**s`` grid each slot meets at most one interval (an
    interval's first slot starts at its base; a later interval starts on a
    later slot), so ``interval = table[address >> s]`` followed by one check
    ``address < end`` replaces a binary search. Returns ``(s, table)`` or None
    when the table would exceed ``max_entries``. Holes hold ``len(bases)``, the
    index of a sentinel interval with end 0.
    """
    n = len(bases)
    if n == 0:
        return None
    nz = [int(b) for b in bases if b]
    s = min(((b & -b).bit_length() - 1 for b in nz), default=width)
    s = min(s, width)
    top = int(max(ends))
    entries = ((top - 1) >> s) + 2     # the last slot is the out-of-range catch-all
    if entries > max_entries:
        return None
    table = np.full(entries, n, dtype=np.int64)
    first = np.asarray(bases, dtype=np.int64) >> s
    count = ((np.asarray(ends, dtype=np.int64) - 1) >> s) - first + 1
    # slots of interval i: first[i] .. first[i] + count[i] - 1, all at once
    owner = np.repeat(np.arange(n, dtype=np.int64), count)
    start = np.repeat(first - np.concatenate([[0], np.cumsum(count)[:-1]]), count)
    table[start + np.arange(len(owner))] = owner
    return s, table


class AddressMap:
    """Disjoint regions of one global address space, with scalar and vectorized lookup.

    Parameters
    ----------
    regions : iterable of Region
    width : int
        Address width in bits (default 57, :data:`ADDRESS_WIDTH`).

    Raises
    ------
    AddressMapError
        Listing every error :func:`region_findings` finds.

    Attributes
    ----------
    regions : tuple of Region
        Sorted by base; ``Locations.region`` indexes it.
    owners : tuple
        Every owner, in order of first appearance in ``regions``; ``Locations.owner``
        indexes it.

    Examples
    --------
    >>> amap = AddressMap([Region(0, 512 * MiB, ("a", "b"), kind="dram", granularity=256)])
    >>> amap.lookup(256 + 3).owner, amap.lookup(256 + 3).offset
    ('b', 3)
    >>> amap.global_address("b", 3)
    259
    """

    def __init__(self, regions, width=ADDRESS_WIDTH.value):
        regions = _regions(regions)
        _raise_errors(region_findings(regions, width), AddressMapError, "address map")
        self.width = int(width)
        self.regions = tuple(sorted(regions, key=lambda r: r.base))
        owners = {}
        for reg in self.regions:
            for o in reg.owners:
                owners.setdefault(o, len(owners))
        self.owners = tuple(owners)
        self.owner_index = owners
        self.region_index = {r.name: i for i, r in enumerate(self.regions)}
        n = len(self.regions)
        # one sentinel entry at index n: end 0, so "address < end" fails for holes
        # public for the translators built on the map (fabric._domains): arrays over the
        # regions plus the sentinel
        self.bases = np.array([r.base for r in self.regions] + [0], dtype=np.int64)
        self.ends = np.array([r.end for r in self.regions] + [0], dtype=np.int64)
        self.owner_of_region = np.array([owners[r.owners[0]] if r.ways == 1 else -1
                                for r in self.regions] + [-1], dtype=np.int64)
        self._interleaved = [i for i, r in enumerate(self.regions) if r.ways > 1]
        self._set_owners = {i: np.array([owners[o] for o in self.regions[i].owners],
                                        dtype=np.int64) for i in self._interleaved}
        self._table = shift_table(self.bases[:n], self.ends[:n], self.width)

    def __repr__(self):
        return f"AddressMap({len(self.regions)} regions, width={self.width})"

    def __len__(self):
        return len(self.regions)

    def region(self, name):
        """The region called ``name``; :class:`AddressMapError` if there is none."""
        try:
            return self.regions[self.region_index[name]]
        except KeyError:
            raise AddressMapError(f"no region called {show_value(name)}") from None

    def regions_of(self, owner):
        """The regions ``owner`` holds memory in (a tuple, possibly empty)."""
        return tuple(r for r in self.regions if owner in r.owners)

    def _find(self, a):
        """Region index for each address of int64 array ``a`` (``n`` where unmapped)."""
        if self._table is not None:
            s, table = self._table
            slot = a >> s
            np.minimum(slot, len(table) - 1, out=slot)
            idx = table[slot]
        else:
            idx = np.searchsorted(self.bases[:-1], a, side="right") - 1
            idx[idx < 0] = len(self.regions)
        idx[a >= self.ends[idx]] = len(self.regions)
        return idx

    def lookup(self, address):
        """The :class:`Location` of one address.

        Raises
        ------
        TypeError
            If the address is neither an integer nor a string (:func:`validate_address`).
        AddressMapError
            If the address is not in the address width, or no region holds it.
        """
        a = validate_address(address, self.width)
        i = int(self._find(np.array([a], dtype=np.int64))[0])
        if i == len(self.regions):
            raise AddressMapError(f"address {format_address(a)} is not mapped (no region "
                                  "holds it)")
        reg = self.regions[i]
        off = a - reg.base
        if reg.ways == 1:
            return Location(address=a, region=reg.name, owner=reg.owner, offset=off)
        pos, dev = interleave_target(off, reg.ways, reg.granularity)
        return Location(address=a, region=reg.name, owner=reg.owners[pos], offset=dev)

    def lookup_many(self, addresses, *, unmapped="raise"):
        """Vectorized :meth:`lookup` of an integer numpy array.

        Parameters
        ----------
        addresses : array_like of int
        unmapped : {"raise", "mask"}
            ``"raise"``: an :class:`AddressMapError` naming the first unmapped
            addresses and their count. ``"mask"``: report them in
            ``Locations.mapped`` (False) with region, owner and offset -1. An array
            whose dtype is not an integer one is a TypeError, an address out of the
            width an AddressMapError, either way.

        Returns
        -------
        Locations

        Examples
        --------
        >>> amap = AddressMap([Region(0, 4096, "chip0"), Region(8192, 4096, "chip1")])
        >>> loc = amap.lookup_many(np.array([1, 8193, 5000]), unmapped="mask")
        >>> loc.owner.tolist(), loc.offset.tolist(), loc.mapped.tolist()
        ([0, 1, -1], [1, 1, -1], [True, True, False])
        """
        check_choice(unmapped, "unmapped", ("raise", "mask"))
        a = as_address_array(addresses, self.width, AddressMapError)
        shape = a.shape
        a = a.ravel()
        n = len(self.regions)
        idx = self._find(a)
        mapped = idx != n
        if unmapped == "raise" and not mapped.all():
            bad = a[~mapped]
            shown = ", ".join(format_address(int(x)) for x in bad[:5])
            raise AddressMapError(f"{len(bad)} of {len(a)} addresses are not mapped "
                                  f"(no region holds them), first: {shown}")
        owner = self.owner_of_region[idx]
        offset = a - self.bases[idx]
        for i in self._interleaved:
            m = idx == i
            if m.any():
                reg = self.regions[i]
                pos, dev = interleave_target(offset[m], reg.ways, reg.granularity)
                owner[m] = self._set_owners[i][pos]
                offset[m] = dev
        idx = np.where(mapped, idx, -1)
        offset[~mapped] = -1
        return Locations(region=idx.reshape(shape), owner=owner.reshape(shape),
                         offset=offset.reshape(shape),
                         mapped=mapped.reshape(shape))

    def global_address(self, owner, offset, region=None):
        """The global address of ``offset`` on ``owner`` (the inverse of :meth:`lookup`).

        ``region`` (a name) chooses among several regions of one owner; by
        default the owner's only region, or its ``hbm`` region.

        Raises
        ------
        TypeError
            If ``offset`` is not an integer (a float, a bool).
        AddressMapError
            If the owner has no such region or the offset is outside its share.
        """
        if region is not None:
            reg = self.region(region)
            if owner not in reg.owners:
                raise AddressMapError(f"{show_value(owner)} holds no memory in region "
                                      f"{show_value(region)}")
        else:
            regs = self.regions_of(owner)
            if not regs:
                raise AddressMapError(f"{show_value(owner)} owns no region of this address map")
            reg = default_region(regs)
            if reg is None:
                raise AddressMapError(f"{no_own_region(owner, regs)}; name one with region=")
        share = reg.size // reg.ways
        offset = check_count(offset, "offset", 0, f"an integer in [0, {share}) (the bytes of "
                             f"{show_value(owner)} in {reg})", below=share, error=AddressMapError)
        if reg.ways == 1:
            return reg.base + offset
        pos = reg.owners.index(owner)
        return reg.base + int(interleave_offset(pos, offset, reg.ways, reg.granularity))
