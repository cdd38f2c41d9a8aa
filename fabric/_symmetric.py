"""Symmetric memory: one heap at the same offset in every chip's HBM.

As in NVSHMEM (``nvshmem_ptr``; docs/sources.md s.3), a symmetric heap has
the same size on every rank and sits at the same offset in each chip's HBM, so
the global address of ``(rank, offset)`` is computed, not looked up:
``hbm_base[rank] + heap.offset + offset`` (in the owner-bits layout
``hbm_base[rank] = rank << k``, a shift). The peer address of a local symmetric
address is ``peer heap base + (address - local heap base)``; an address outside
the heap has no peer address, and asking for one is an error, not a wrong number.

Examples
--------
>>> import topologies
>>> f = topologies.build("sd200-ultra")
>>> from fabric import AddressPlan
>>> f = f.replace(address_plan=AddressPlan(heap=SymmetricHeap(16 * 2**30, offset=32 * 2**30)))
>>> mem = f.symmetric_memory
>>> hex(mem.address(3, 4096))
'0x3800001000'
>>> hex(mem.peer_address(mem.address(3, 4096), 5))
'0x5800001000'
"""

import dataclasses
from dataclasses import dataclass, field

import numpy as np

from ._address import (
    MIN_PAGE_SIZE,
    AddressMap,
    Finding,
    is_int,
    no_own_region,
    owned_regions,
    validate_address,
    whole_numbers,
)
from ._errors import AddressMapError, NodeError
from ._fabric_arg import fabric_arg
from ._params import Parameter
from ._units import (
    MiB,
    check_count,
    format_address,
    format_size,
    int_of,
    kind_error,
    show_value,
    text_of,
)

__all__ = ["HEAP_ALIGNMENT", "SymmetricHeap", "SymmetricMemory", "heap_findings"]

HEAP_ALIGNMENT = Parameter(
    "symmetric.alignment", 2 * MiB, "B",
    "assumption: symmetric allocations are power-of-two aligned (NVSHMEM, "
    "docs/sources.md s.3); 2 MiB is the large page GPU drivers map device memory with")


@dataclass(frozen=True)
class SymmetricHeap:
    """A symmetric heap: ``size`` bytes at ``offset`` in every chip's HBM.

    Parameters
    ----------
    size : int
        Bytes per chip.
    offset : int
        Offset of the heap in each chip's HBM region.
    alignment : int
        A power of two >= 4 KiB that ``offset`` and ``size`` are multiples of
        (:data:`HEAP_ALIGNMENT`).
    chips : mapping, optional
        Per-chip ``{"offset": ..., "size": ...}`` overrides. A symmetric heap has
        none; they exist so that a system file can describe a heap that is *not*
        symmetric, and :func:`fabric.check` can say so (``symmetric-mismatch``).
    name : str
    """

    size: int
    offset: int = 0
    alignment: int = HEAP_ALIGNMENT.value
    chips: dict = None
    name: str = "heap"
    where: str = field(default=None, compare=False, repr=False)

    def __post_init__(self):
        text_of(self.name, "SymmetricHeap name")
        text_of(self.where, "SymmetricHeap where", optional=True)
        for key in ("size", "offset", "alignment"):
            int_of(getattr(self, key), f"SymmetricHeap {key}")
        if self.chips is not None and (not isinstance(self.chips, dict) or not all(
                isinstance(v, dict) and set(v) <= {"offset", "size"} and all(
                    is_int(x) for x in v.values()) for v in self.chips.values())):
            raise kind_error(self.chips, "SymmetricHeap chips",
                             "a mapping of chip -> {'offset': int, 'size': int}")
        for key in ("size", "offset", "alignment"):
            object.__setattr__(self, key, int(getattr(self, key)))     # not a numpy integer
        if self.chips is not None:
            object.__setattr__(self, "chips", {c: {k: int(x) for k, x in v.items()}
                                               for c, v in self.chips.items()})

    def replace(self, **changes):
        """A copy with some fields changed."""
        return dataclasses.replace(self, **changes)


def _hbm_regions(regions):
    """``({chip: its own HBM region}, {chip: its HBM regions})`` (the second for chips of
    several, none named ``<chip>.hbm``): :func:`fabric._address.owned_regions`."""
    own, several = owned_regions(regions, "hbm")
    return ({o: regions[i] for o, i in own.items()},
            {o: [regions[i] for i in ix] for o, ix in several.items()})


def heap_findings(heap, fabric, regions):
    """Every fault of a heap on a fabric's regions (``misaligned``, ``symmetric-mismatch``,
    ``invalid``).

    Parameters
    ----------
    heap : SymmetricHeap
        Its offset and size in bytes into every chip's HBM.
    fabric : Fabric
    regions : sequence of Region
        The fabric's laid-out regions (:func:`layout_regions`).

    Returns
    -------
    list of Finding

    Examples
    --------
    >>> import topologies
    >>> from fabric import layout_regions
    >>> f = topologies.build("torus:2x2,chip=h100")                # 80 GB of HBM a chip
    >>> heap_findings(SymmetricHeap(size=2**30), f, layout_regions(f))
    []
    >>> late = heap_findings(SymmetricHeap(size=2**30, offset=79 * 2**30), f, layout_regions(f))
    >>> len(late), late[0].code                       # past the end of every chip's HBM
    (4, 'symmetric-mismatch')
    """
    fabric = fabric_arg(fabric)
    if not isinstance(heap, SymmetricHeap):     # ('x' was "'str' object has no attribute")
        raise kind_error(heap, "heap", "a fabric.SymmetricHeap")
    where = heap.where or f"symmetric heap {show_value(heap.name)}"
    out = []
    a = heap.alignment
    if not is_int(a) or a < MIN_PAGE_SIZE.value or a & (a - 1):
        return [Finding(code="invalid", severity="error",
                        message=f"heap {show_value(heap.name)}: alignment must be a power of "
                        f"two >= 4 KiB, got {show_value(a)}", where=where)]
    for key in ("size", "offset"):
        v = getattr(heap, key)
        if not is_int(v) or v < (1 if key == "size" else 0):
            return [Finding(code="invalid", severity="error",
                            message=f"heap {show_value(heap.name)}: {key} must be an int "
                            f"{'> 0' if key == 'size' else '>= 0'}, got "
                            f"{show_value(v)}", where=where)]
        if v % a:
            out.append(Finding(code="misaligned", severity="error",
                               message=f"heap {show_value(heap.name)}: {key} {v} is not a "
                               f"multiple of the {format_size(a)} alignment", where=where))
    hbm, several = _hbm_regions(regions)
    overrides = dict(heap.chips or {})
    # a failed chip keeps its rank (and its override): it is still a chip of the plan
    failed = fabric.failures.ranks
    for chip in overrides:
        if chip not in fabric.rank_of and chip not in failed:
            out.append(Finding(code="invalid", severity="error",
                               message=f"heap {show_value(heap.name)}: override for "
                               f"{show_value(chip)}, which is not a chip of the "
                               f"fabric", where=where))
    for chip in fabric.endpoints:
        ov = overrides.get(chip, {})
        off = ov.get("offset", heap.offset)
        size = ov.get("size", heap.size)
        if off != heap.offset or size != heap.size:
            out.append(Finding(code="symmetric-mismatch", severity="error",
                               message=f"heap {show_value(heap.name)} on {chip}: offset "
                               f"{format_address(off)}, size "
                               f"{format_size(size)}; every chip must have offset "
                               f"{format_address(heap.offset)}, size {format_size(heap.size)}",
                               where=where))
        reg = hbm.get(chip)
        if chip in several:
            out.append(Finding(code="invalid", severity="error",
                               message=f"heap {show_value(heap.name)}: " + no_own_region(
                                   chip, several[chip], "hbm",
                                   "its heap has no one place (name its own one so)"),
                               where=where))
        elif reg is None:
            out.append(Finding(code="symmetric-mismatch", severity="error",
                               message=f"heap {show_value(heap.name)}: {chip} has "
                               "no HBM region to hold it", where=where))
        elif off + size > reg.size:
            out.append(Finding(code="symmetric-mismatch", severity="error",
                               message=f"heap {show_value(heap.name)} on {chip}: offsets "
                               f"[{format_address(off)}, "
                               f"{format_address(off + size)}) do not fit in {reg} of "
                               f"{reg.size} bytes ({format_size(reg.size)})", where=where))
    return out


class SymmetricMemory:
    """A symmetric heap placed on a fabric's address map: addresses of (rank, offset).

    Built by :attr:`fabric.Fabric.symmetric_memory`; refuses a heap with any fault.

    Attributes
    ----------
    heap : SymmetricHeap
    bases : numpy.ndarray
        int64, the heap's global base on each rank (stable ranks: on a degraded fabric
        a failed chip keeps its rank and its entry, and asking for it is a NodeError).
    stride : int or None
        ``bases[r] == bases[0] + r * stride`` when the bases are evenly spaced (the
        owner-bits layout), so an address is ``bases[0] + rank * stride + offset``.
    """

    def __init__(self, heap, fabric, address_map):
        if not isinstance(address_map, AddressMap):     # (None: "'NoneType' ... 'regions'")
            raise kind_error(address_map, "address_map", "a fabric.AddressMap")
        errors = [f for f in heap_findings(heap, fabric, address_map.regions)
                  if f.severity == "error"]
        if errors:
            raise AddressMapError("invalid symmetric heap: " + "; ".join(
                f"{f.code}: {f.message}" for f in errors[:10]))
        self.heap = heap
        self.width = address_map.width
        hbm, _ = _hbm_regions(address_map.regions)
        # ranks are stable: on a degraded fabric a failed chip keeps its rank (and its
        # region, the plan being pinned) and asking for it is an error, not the next chip
        self._dead = {r: c for c, r in fabric.failures.ranks.items()}
        chip_of = {**self._dead, **dict(zip(fabric.ranks, fabric.endpoints))}
        self.n_ranks = fabric.n_ranks
        self.bases = np.array([hbm[chip_of[r]].base + heap.offset if chip_of[r] in hbm else -1
                               for r in range(self.n_ranks)], dtype=np.int64)
        steps = np.diff(self.bases)
        self.stride = int(steps[0]) if len(steps) and (steps == steps[0]).all() and \
            steps[0] > 0 else None
        known = np.flatnonzero(self.bases >= 0)
        self._order = known[np.argsort(self.bases[known], kind="stable")]
        self._sorted = self.bases[self._order]

    def _failed(self, rank):
        return NodeError(f"rank {rank} ({self._dead[rank]}) has failed, so its symmetric heap "
                         f"is gone")

    def __repr__(self):
        return f"SymmetricMemory({self.heap.name!r}, size={self.heap.size}, ranks={self.n_ranks})"

    def _rank(self, rank):
        rank = check_count(rank, "rank", 0, f"an integer in 0..{self.n_ranks - 1}",
                           below=self.n_ranks, error=NodeError)
        if rank in self._dead:
            raise self._failed(rank)
        return rank

    def address(self, rank, offset=0):
        """The global address of ``offset`` into the heap on ``rank``.

        Raises
        ------
        TypeError
            If ``rank`` or ``offset`` is not an integer (a float, a bool: STYLE's rule).
        NodeError
            If ``rank`` is not a rank, or has failed.
        AddressMapError
            If ``offset`` is outside ``[0, heap.size)``.
        """
        r = self._rank(rank)
        offset = check_count(offset, "offset", 0, f"an integer in [0, {self.heap.size}) (an "
                             f"offset outside the symmetric heap {show_value(self.heap.name)} is "
                             "refused)",
                             below=self.heap.size, error=AddressMapError)
        if self.stride is not None:
            return int(self.bases[0]) + r * self.stride + offset
        return int(self.bases[r]) + offset

    def addresses(self, ranks, offsets):
        """Vectorized :meth:`address` over integer arrays (broadcast together); its errors
        are :meth:`address`'s (an array's dtype must be an integer one)."""
        ranks = whole_numbers(ranks, "rank", f"integers in 0..{self.n_ranks - 1}",
                              high=self.n_ranks, exc=NodeError)
        offsets = whole_numbers(offsets, "offset",
                                f"integers in [0, {self.heap.size}) (the heap's size)",
                                high=self.heap.size)
        ranks, offsets = np.broadcast_arrays(np.asarray(ranks), np.asarray(offsets))
        if self._dead:
            gone = np.isin(ranks, list(self._dead))
            if gone.any():
                raise self._failed(int(ranks[gone].flat[0]))
        return self.bases[ranks] + offsets

    def locate(self, address):
        """``(rank, offset)`` of a global address inside the heap.

        Raises
        ------
        AddressMapError
            If the address is in no rank's heap: it has no symmetric counterpart.
        """
        a = validate_address(address, self.width)
        k = int(np.searchsorted(self._sorted, a, side="right")) - 1
        if k < 0 or a >= self._sorted[k] + self.heap.size:
            raise AddressMapError(f"address {format_address(a)} is outside the symmetric heap "
                                  f"{show_value(self.heap.name)} of every rank, so it has no "
                                  "peer address")
        if int(self._order[k]) in self._dead:
            raise self._failed(int(self._order[k]))
        return int(self._order[k]), a - int(self._sorted[k])

    def peer_address(self, address, peer):
        """``peer heap base + (address - local heap base)`` (``nvshmem_ptr``).

        Raises
        ------
        AddressMapError
            If ``address`` is outside the heap (there is no peer address).
        NodeError
            If ``peer`` is not a rank.
        """
        _, off = self.locate(address)
        return int(self.bases[self._rank(peer)]) + off


def build_symmetric(fabric, address_map, plan):
    """The :class:`SymmetricMemory` of a plan's heap, or None when the plan has no heap."""
    if plan.heap is None:
        return None
    return SymmetricMemory(plan.heap, fabric, address_map)
