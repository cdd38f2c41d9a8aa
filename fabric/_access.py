"""Access latency: one load or store from a chip to a global address, stage by stage.

One model of an access, from the requester's address space to the owner's
memory: the requesting chip's host domain must map the address through one of
its windows, and the access is translated and permission-checked exactly as
:meth:`fabric.Fabric.translate` does (:meth:`fabric.HostDomain.reach`), so an
access the protection model refuses raises :class:`~fabric.TranslationError`
and is never timed. The target is the owner the translation reaches; the path
is the routing policy's path from the requester to the target (of several
equal-cost paths, the one :meth:`fabric.Router.path` names: its deterministic hash,
or the + way of a ring at a tie; :func:`access_latencies` counts a pair at the
slowest of them, :attr:`Access.slowest`). (A fabric with
no address plan at all, because no chip says how much HBM it has, has no
protection model: its accesses are timed unchecked.) The time of one access is a sum of stages (they do
not overlap: each waits for the previous one):

load/store (``transport.kind == "memory"``)
    requester translation + forward path (per hop: link and receiving port's
    forwarding, one way) + serialization + responder check + (load only)
    return path + serialization of the returned data.
host memory (a load or store to a host's DRAM, :func:`access`)
    the serving chip's own load of its host's memory over its host link
    (:data:`HOST_MEMORY_LOAD`, :func:`host_link`: NVLink-C2C on a Grace superchip,
    PCIe for another NVIDIA GPU), added after the responder check; a store is
    posted and pays the link one way, half the measured load (assumption: the
    link is symmetric). A chip with no measured host link (a TPU, the seed
    system's assumed chip, a user's graph) is not charged one, nor is a message:
    its receiving NIC reads or writes host memory itself (``nic_rx``).
message passing (``"message"``, RDMA)
    software post + sending NIC + forward path + serialization + receiving
    NIC + (load = RDMA read: return path + serialization + the requester NIC
    writing the data) + completion + (optional) bounce copies.

Serialization is counted once, at the narrowest link of the path (cut-through
forwarding: a packet's head leaves a hop before its tail arrives): wire bytes
(payload plus a header per packet, :meth:`Transport.wire_bytes`) divided by that
link's bandwidth. A load's request carries headers only (one per packet of the
reply). A store is posted: no acknowledgement is waited for.

The sd200-ultra calibration: its worst case is 3 hops x 230 ns = 0.69 us of path
latency (``Access.forward``), the seed article's in-system latency.

Examples
--------
>>> import topologies
>>> f = topologies.build("sd200-ultra")
>>> a = access(f, "chip0", f.address_map.global_address("chip127", 0), op="store")
>>> a.target, a.hops, round(a.forward * 1e9)
('chip127', 3, 690)
>>> round(a.total * 1e9, 1)   # 20 ns translation + 690 + (64+16) B / 64 GB/s + 10 ns check
721.2
"""

import dataclasses

import numpy as np

from ._address import default_region, no_own_region, owned_regions
from ._arrays import real_array
from ._chips import chip_spec
from ._errors import (
    AddressMapError,
    FabricError,
    NodeError,
    RoutingError,
    SpecError,
    TranslationError,
)
from ._fabric_arg import fabric_arg
from ._params import Parameter
from ._schema import MAX_BYTES
from ._transport import NATIVE, transports_for
from ._transport import transport as _transport
from ._units import (
    check_choice,
    check_count,
    format_address,
    format_size,
    name_list,
    sequence_of,
    show_value,
)

__all__ = ["HOST_MEMORY_LOAD", "OPS", "Access", "LatencyStats", "access", "access_latencies",
           "access_to", "host_link", "latency_stats"]

OPS = ("load", "store")

_NVB = ("NVIDIA nvbandwidth `host_device_latency_sm`: one GPU thread chases pointers through a "
        "2 MiB pinned host buffer (cuMemHostAlloc, allocated on the GPU's own NUMA node) at a "
        "128-B stride, ns per dependent load (NVIDIA/nvbandwidth v0.8, 66746a3: "
        "testcases_sm.cpp, testcase.cpp latencyHelper, memcpy.cpp HostBuffer, kernels.cu "
        "ptrChasingKernel)")

#: A GPU's dependent load of its own host's memory over its host link, by link kind
#: (:func:`host_link`), seconds: the whole load as the GPU sees it (docs/sources.md s.3).
HOST_MEMORY_LOAD = {
    "nvlink-c2c": Parameter(
        "host_memory.load.nvlink-c2c", 2343.55e-9 / 4, "s",
        _NVB + "; GB200 (Grace over NVLink-C2C), Oracle's 'OCI GPU Quick Start: NVIDIA GB200' "
        "(BM.GPU.GB200.4, one tray): SUM host_device_latency_sm 2343.55 ns over 4 GPUs, mean "
        "585.9 ns (oracle-quickstart/oci-gpu-quickstarts nvidia/GB200/README-GB200.md, read at "
        "6a0abdc); corroborated by the GB300 tray of the same guide, 2312.78 / 4 = 578.2 ns "
        "(nvidia/GB300/README-GB300.md); taken for every Grace superchip's GPU"),
    "pcie": Parameter(
        "host_memory.load.pcie", 1191.19e-9, "s",
        _NVB + "; H200 on an x86 host over PCIe (GKE A3 Ultra, a3-ultragpu-8g, one GPU with its "
        "host memory on its own socket; nvbandwidth -i 100 -m: the mean of 100 samples, which the "
        "page's table calls the median): 1191.19 ns, 1321.51 ns across sockets (ai-on-gke/"
        "website aa89a12, site/content/docs/tutorials/dynamic-resource-allocation/"
        "gpu-nic-cpu-alignment/index.md); corroborated by H100 on AWS p5 (a PCIe switch, a Gen4 "
        "x8 uplink), ~1.4 us read off a figure (Hugging Face, 'The Smol Training Playbook', "
        "GPU-to-CPU, second-hand); taken for every NVIDIA GPU on a PCIe host (assumption for "
        "H100, H800, H20, B200, B300: not measured here)"),
}


def host_link(chip):
    """The kind of link by which a chip reaches its host's memory (a key of
    :data:`HOST_MEMORY_LOAD`): ``"nvlink-c2c"`` for a GPU of a Grace superchip
    (:attr:`~fabric.ChipSpec.grace_gpus`), ``"pcie"`` for another NVIDIA GPU (a
    :attr:`~fabric.ChipSpec.generation`), else ``None``: no measured figure, and the
    host link is not charged.

    Parameters
    ----------
    chip : ChipSpec, str or None
        The chip (``Fabric.chip``) or its name (:func:`fabric.chip_spec`); None: no chip, no
        host link.

    Returns
    -------
    str or None
        A key of :data:`HOST_MEMORY_LOAD`, or None.

    Examples
    --------
    >>> from fabric import chip_spec
    >>> host_link(chip_spec("gb200")), host_link(chip_spec("h200")), host_link(chip_spec("tpu-v4"))
    ('nvlink-c2c', 'pcie', None)
    """
    if chip is None:
        return None
    chip = chip_spec(chip)          # a name was "'str' object has no attribute 'grace_gpus'"
    if chip.grace_gpus:
        return "nvlink-c2c"
    return "pcie" if chip.generation is not None else None


def _host_memory(fabric, op):
    """Seconds the serving chip's host link adds to an access to its host's DRAM: the
    measured load, half of it for a (posted) store; 0 where :func:`host_link` is None."""
    kind = host_link(fabric.chip)
    if kind is None:
        return 0.0
    t = float(HOST_MEMORY_LOAD[kind].value)
    return t if op == "load" else t / 2


@dataclasses.dataclass(frozen=True)
class Access:
    """The outcome of one access, with its latency broken down by stage (seconds).

    Attributes
    ----------
    src, target : node names
    address : int
        The global address accessed; -1 where no address plan names one (:func:`access_to`
        on a fabric without a plan).
    op : {"load", "store"}
    size : int
        Payload bytes.
    transport : str
    path, return_path : tuple of node names
        The request's path, and for a load the reply's (empty for a store).
    hops : int
        Links the request crosses.
    per_hop : tuple of (u, v, seconds)
        Each link of the request path and its latency.
    requester : float
        Translation (load/store) or software post + sending NIC (message).
    forward : float
        Sum of link latencies of the request path.
    serialization : float
        Wire bytes of the request at the narrowest link of its path.
    responder : float
        Permission check (load/store) or receiving NIC (message).
    reply : float
        Load only: return path latency + serialization of the data (+ the
        requester's NIC writing it, for a message transport).
    completion : float
        Message transport: the completion seen by software.
    copy : float
        Bounce-buffer copies, if the transport uses them.
    host_memory : float
        An access to a host's DRAM: the serving chip's load of its host's memory over
        its host link (half of it for a store; module docstring), else 0.
    total : float
        The sum of the stages.
    slowest : float
        The pair's time at the slowest of its equal-cost paths (the policy's largest path
        latency and narrowest link, each way: what :func:`access_latencies` gives this
        pair). The stages above are those of the one path :attr:`path` names, which the
        routing chooses among them (:meth:`fabric.Router.path`), so ``total <=
        slowest``; equal where the pair has one path or its paths price alike (an HGX
        H100 board's 5- and 4-lane NVSwitch bundles do not: 630.9 and 631.0 ns for a
        64 B load from chip0 to chip3).
    """

    src: str
    target: str
    address: int
    op: str
    size: int
    transport: str
    path: tuple
    return_path: tuple
    hops: int
    per_hop: tuple
    requester: float
    forward: float
    serialization: float
    responder: float
    reply: float
    completion: float
    copy: float
    total: float
    slowest: float
    host_memory: float = 0.0

    #: The stages, in order: the keys of :meth:`breakdown` (and of ``cofabric route
    #: --json``'s ``breakdown_s``, which its help lists from here).
    STAGES = ("requester", "forward", "serialization", "responder", "host_memory", "reply",
              "completion", "copy")

    def breakdown(self):
        """The stages as an ordered dict of name -> seconds (they sum to :attr:`total`)."""
        return {k: getattr(self, k) for k in self.STAGES}


def _transport_name(transport):
    """Check a transport argument early: a name, a Transport, or "native"."""
    if not (isinstance(transport, str) and transport == NATIVE):
        _transport(transport)


def _check_op(op, size):
    check_choice(op, "op", OPS)
    size = check_count(size, "size", 1, "a positive int of bytes")
    if size > MAX_BYTES:
        # the batched paths hold sizes in int64, and the timing divides them as floats
        raise SpecError(f"size must be at most 2**63 - 1 bytes (an int64), got {show_value(size)}")
    return size             # check_count's int: a numpy integer's payload + headers wrapped


_OP_ACCESS = {"load": "read", "store": "write"}


def checks_accesses(fabric):
    """False only for a fabric with the default plan and no HBM size (no address map): no
    chip type, so no memory size is known and an access is timed unchecked (any size).

    >>> import topologies
    >>> [checks_accesses(topologies.build(s)) for s in ("torus:4x4", "torus:4x4,chip=h100")]
    [False, True]
    """
    if fabric.address_plan is not None:
        return True
    try:
        _ = fabric.address_map
    except AddressMapError:
        return fabric.chip is not None
    return True


def _requester_domain(fabric, src):
    host = fabric.host_of.get(src)
    if host is None:
        raise TranslationError(f"{fabric.name}: chip {src!r} belongs to no host domain, so it "
                               "has no address space to make an access from")
    return fabric.host_domains[host]


def permit(fabric, src, address, op):
    """The :class:`~fabric.Translation` of an access by chip ``src`` to a global ``address``.

    The permission side of one access (:meth:`fabric.HostDomain.reach`): raises
    :class:`~fabric.TranslationError` when ``src``'s host domain has no window
    onto the address or is not granted ``op`` (``"load"`` or ``"store"``).
    """
    return _requester_domain(fabric, src).reach(address, _OP_ACCESS[op])


def _span(fabric, src, t, size, op):
    """Refuse an access whose ``size`` bytes from ``t.global_address`` (``t``: its first byte's
    :class:`~fabric.Translation`) do not all lie with that byte's owner and window.

    One access reaches one owner's memory through one window: its last byte must lie in
    the region of its first (in an interleave set, the same granule: the next one is
    another owner's), and one window of ``src``'s domain that permits ``op`` must map
    every byte (a window's end is the end of what the host maps there). An access that
    runs on into the next owner, or past a window onto another one (a read-only one,
    or none), would otherwise be timed and permitted as if every byte were the first's.
    """
    first = t.global_address
    last = first + size - 1
    if size == 1:
        return
    amap = fabric.address_map
    reg = amap.region(t.region)
    end, what = reg.end, str(reg)
    if reg.ways > 1:
        g = reg.granularity
        end = reg.base + ((first - reg.base) // g + 1) * g
        what = f"{t.owner!r}'s granule [{format_address(end - g)}, {format_address(end)}) of {reg}"
    if last >= end:
        try:
            into = f"into {amap.region(amap.lookup(end).region)}"
        except AddressMapError:
            into = ("into addresses no region holds" if end < 1 << amap.width else
                    f"past the {amap.width}-bit address width")
        raise AddressMapError(
            f"{fabric.name}: a {op} of {size} B at {format_address(first)} runs past the end of "
            f"{what} at {format_address(end)}, {into}: one access reaches one owner's memory "
            "(split it at the boundary)")
    dom = _requester_domain(fabric, src)
    tab = dom.table
    gb = tab.global_base
    for i in np.flatnonzero((gb <= first) & (last < gb + tab.size)).tolist():
        try:
            dom.translate(int(first - gb[i] + tab.local_base[i]), _OP_ACCESS[op])
            return
        except TranslationError:
            continue
    raise TranslationError(
        f"host {dom.name}: a {op} of {size} B at {format_address(first)} runs past the end of "
        f"window {t.window!r}, and no window of this domain that permits it maps all of "
        f"[{format_address(first)}, {format_address(last + 1)}): one access goes through one "
        "window")


def whole_set(fabric, reg, address=None):
    """Raise :class:`~fabric.RoutingError` when ``reg`` is an interleave set one of whose
    members has failed (nothing for a plain region, or a set whose members all live).

    An interleave set with a failed member is gone as a whole: its granules rotate over
    the members, so no span of it is the memory it was, and :func:`fabric.check` reports
    a window onto it as ``unreachable`` (the window keeps its target; the memory is
    gone). An access to any of its granules, a live member's too, is refused with the
    same reason, naming the set and the member that failed (decided in session 27). A
    member is failed as :func:`target_node` says: a chip or node gone from the graph, or
    a host domain with no live chip left.

    >>> import topologies
    >>> from fabric import AddressPlan, Region
    >>> pool = Region(0, 512 << 20, ("chip0", "chip1"), granularity=4096, name="pool")
    >>> f = topologies.build("hgx-h200").replace(address_plan=AddressPlan(
    ...     hbm_bytes=140 * 10**9, interleave=[pool]))
    >>> whole_set(f, f.address_map.region("pool"))          # both members live: nothing
    >>> g = f.without(chips=["chip1"])
    >>> whole_set(g, g.address_map.region("pool"))   # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    fabric.RoutingError: ...: region 'pool' [...) is interleaved over 'chip0' and 'chip1', and 'chip1' has failed: the set is gone as a whole, so no access reaches any of its granules, a live member's too (cofabric check reports a window onto it as unreachable)
    """
    if reg.ways == 1:
        return
    gone = []
    for o in reg.owners:
        try:
            target_node(fabric, o)
        except RoutingError:
            gone.append(o)
        except AddressMapError:
            continue            # not a node at all: the plan's fault (check's namespace rule)
    if not gone:
        return
    what = str(reg) if address is None else \
        f"the address {format_address(address)} lies in {reg}, which"
    owners, failed = name_list(map(show_value, reg.owners)), name_list(map(show_value, gone))
    raise RoutingError(f"{fabric.name}: {what} is interleaved over {owners}, and {failed} "
                       f"{'has' if len(gone) == 1 else 'have'} failed: the set is gone as a "
                       "whole, so no access reaches any of its granules, a live member's "
                       "too (cofabric check reports a window onto it as unreachable)")


def _memory_region(fabric, node):
    """The :class:`~fabric.Region` of ``node``'s memory: the region its name stands for
    (:func:`fabric._address.default_region`: its only region, else its own HBM region, the
    default windows' target); for an owner of no HBM and several regions, its first of its
    own."""
    regs = fabric.address_map.regions_of(node)
    if not regs:
        raise AddressMapError(f"{fabric.name}: {node!r} holds no memory in the address map, so "
                              "there is nothing there to load or store")
    reg = default_region(regs)
    if reg is not None:
        return reg
    _, several = owned_regions(regs, "hbm")
    if node in several:
        raise AddressMapError(f"{fabric.name}: " + no_own_region(
            node, regs, "hbm",
            "its memory is no one region (give fabric.access an address)"))
    plain = [r for r in regs if r.ways == 1]
    return (plain or list(regs))[0]


def _memory_of(fabric, node, reg=None):
    """The global address of the first byte of ``node``'s memory (its HBM, or its only region;
    ``reg``: that region when already known)."""
    reg = _memory_region(fabric, node) if reg is None else reg
    return fabric.address_map.global_address(node, 0, region=reg.name)


def _fits(fabric, node, reg, size, op):
    """Refuse ``size`` bytes into ``node``'s memory ``reg`` from its first byte when they exceed
    what ``node`` holds there (a transfer of 1 TiB into a 1 GiB HBM is no transfer that
    exists), or, in an interleave set, its first granule (the next is another owner's:
    :func:`_span`'s rule, for every target of :func:`access_latencies` at once)."""
    held = reg.size // reg.ways
    if size > held:
        raise AddressMapError(
            f"{fabric.name}: a {op} of {size} B ({format_size(size)}) to {node!r} is larger than "
            f"its memory, {reg} of {held} B ({format_size(held)}): one access reaches one "
            "owner's memory (split it)")
    if reg.ways > 1 and size > reg.granularity:
        raise AddressMapError(
            f"{fabric.name}: a {op} of {size} B ({format_size(size)}) to {node!r} is larger than "
            f"a granule of its interleaved memory, {reg} ({reg.granularity} B): one access "
            "reaches one owner's memory, and the next granule is another owner's (split it)")


#: Path latencies within this fraction of the least are a tie, broken in domain order
#: (sums of the same link latencies in another order differ in the last bits).
_TIE = 1e-9


def nearest(latencies):
    """Index of the least of ``latencies`` (a sequence of path latencies in domain order),
    the first one at a tie (within :data:`_TIE`): the chip of a host that serves its DRAM."""
    least = min(latencies)
    return next(i for i, x in enumerate(latencies) if x <= least * (1 + _TIE))


def target_node(fabric, owner, src=None):
    """The graph node that serves an owner of address space to requester ``src``.

    A chip, NIC or memory node serves its own memory. The model has no host nodes, so a
    host's DRAM is served through a chip of that host: to a chip of the same host by the
    chip itself (its own PCIe or chip-to-chip link to the host's memory, no fabric hop:
    every chip of a host reaches its host's memory the same way, as the first chip
    does), and to any other requester by the live chip of that host nearest it: the
    least path latency of the routing policy (:meth:`fabric.Router.latency`, the
    slowest of a pair's equal-cost paths; its detours included, so a chip cut off or one
    that lost its network port is passed over), the first in domain order at a tie (on
    a switched domain every chip of a host is as near: its first chip). A failure
    never makes this faster than on the intact fabric (its chips' routes are no
    faster, and it has no more of them). Where no chip of the host is reached, and with
    no ``src``, its first live chip (a route to it then fails and names the failure).
    (The host link's own time, PCIe or NVLink-C2C, is :attr:`Access.host_memory`, the same
    for every chip of a host, so it does not change which chip serves.)

    Raises :class:`~fabric.RoutingError` when the owner has failed, and
    :class:`~fabric.AddressMapError` when it is no node or host domain of the fabric.

    >>> import topologies
    >>> f = topologies.build("nvl72")                  # trays of 4 GPUs: host0 = chip0..chip3
    >>> target_node(f, "host0"), target_node(f, "host0", "chip1"), target_node(f, "host0", "chip4")
    ('chip0', 'chip1', 'chip0')
    >>> g = f.without(links=[("chip0", f"sw{p}") for p in range(18)])   # chip0 cut off
    >>> target_node(g, "host0", "chip4")
    'chip1'
    >>> f = topologies.build("sd200-ultra")    # host1: chip8..chip15, a line of dimension 0
    >>> target_node(f, "host1", "chip0"), target_node(f, "host1", "chip1")   # 1 hop each
    ('chip8', 'chip9')
    """
    if owner in fabric.graph:
        return owner
    if owner in fabric.domains:
        chips = fabric.domains[owner]
        if src is None or len(chips) == 1:
            return chips[0]
        if src in chips:
            return src
        idx = fabric.node_index
        if src not in idx:
            return chips[0]
        r = fabric.router
        try:
            to = np.array([idx[c] for c in chips], dtype=np.int64)
            ok = r.reachable(np.full(len(chips), idx[src], dtype=np.int64), to)
            if not ok.any():
                return chips[0]
            lat = r.latency(np.full(int(ok.sum()), idx[src], dtype=np.int64), to[ok])
        except FabricError:
            return chips[0]
        return [c for c, k in zip(chips, ok.tolist(), strict=True) if k][nearest(lat.tolist())]
    failures = getattr(fabric, "failures", None)
    if owner in (getattr(failures, "nodes", None) or ()) or owner in dict(
            (fabric.address_plan.domains or ()) if fabric.address_plan else ()):
        # the plan keeps the window onto it; the memory is gone
        raise RoutingError(f"{fabric.name}: the owner {owner!r} of this address has failed, so "
                           "no access reaches it")
    raise AddressMapError(f"{fabric.name}: the owner {owner!r} of this address is not a node "
                          "of the fabric, so no route reaches it")


def _stages(t, op, size, fwd, back, bw_fwd, bw_back, hops):
    """Stage times of one access from path latencies and bottleneck bandwidths (arrays ok)."""
    reply_bytes = t.wire_bytes(size)
    if op == "store":
        req_bytes = reply_bytes
    else:
        req_bytes = t.packets(size) * t.header
    local = hops == 0
    ser = np.where(local, 0.0, req_bytes / bw_fwd)
    if t.kind == "memory":
        requester, responder = t.requester_translation, t.responder_check
        completion, nic_back = 0.0, 0.0
    else:
        requester, responder = t.software_post + t.nic_tx, t.nic_rx
        completion, nic_back = t.completion, t.nic_rx
    if op == "load":
        reply = back + np.where(local, 0.0, reply_bytes / bw_back) + nic_back
    else:
        reply = 0.0 * fwd
    copy = t.copy_time(size)
    total = requester + fwd + ser + responder + reply + completion + copy
    return requester, ser, responder, reply, completion, copy, total


def _require_chip(fabric, x):
    """:class:`~fabric.NodeError` unless node ``x`` is a live chip (an access's requester)."""
    if x not in fabric.rank_of:
        raise NodeError(f"{fabric.name}: {x!r} is a {fabric.graph.nodes[x].get('kind')}, not "
                        f"a chip: an access goes from a chip to memory")


def access(fabric, src, address, op="load", size=64, transport="loadstore"):
    """One load or store from chip ``src`` to a global ``address``, with its latency.

    Parameters
    ----------
    fabric : Fabric
    src : node name or rank
        The requesting chip.
    address : int
        A global address; its owner is the target.
    op : {"load", "store"}
    size : int
        Payload bytes, 1 to 2**63 - 1 (default 64, a cache line).
    transport : str or Transport
        ``"loadstore"`` or ``"rdma"`` (:data:`fabric.TRANSPORTS`), or your own,
        or ``"native"``: load/store where it reaches, RDMA otherwise
        (:func:`fabric.reach`, the one rule). Load/store never crosses a NIC or
        a message-only link: asked for across one, it raises RoutingError.

    Returns
    -------
    Access
        Timed on the one path the routing chooses among the pair's equal-cost paths
        (:attr:`Access.path`); :attr:`Access.slowest` is the pair at the slowest of them,
        as :func:`access_latencies` counts it.

    Raises
    ------
    NodeError
        If ``src`` names no node.
    TranslationError
        If ``src``'s host domain has no window onto the address, or the
        protection model refuses the access (not granted, a store through a
        read-only window or into read-only memory), or no window that permits it maps
        every one of its ``size`` bytes: a refused access is not timed.
    AddressMapError
        If no region holds the address, or its owner is not reachable in the graph, or
        its bytes run past the end of the region holding the first (in an interleave
        set, past its granule: the next is another owner's). One access reaches one
        owner's memory through one window.
    RoutingError
        If no path joins requester and target, or load/store cannot reach it, or the
        owner has failed (the message ends with the address); in an interleave set, if any
        member has failed (the set is gone as a whole, a live member's granules too:
        :func:`whole_set`).

    Examples
    --------
    >>> import topologies
    >>> f = topologies.build("sd200-ultra")
    >>> a = access(f, "chip0", f.address_map.regions_of("chip5")[0].base + 64)
    >>> a.target, a.path, round(a.total * 1e9, 1)      # total in seconds: 491.5 ns
    ('chip5', ('chip0', 'chip5'), 491.5)
    """
    fabric = fabric_arg(fabric)
    size = _check_op(op, size)
    _transport_name(transport)
    a = fabric.node(src)
    _require_chip(fabric, a)              # a switch or NIC issues no access
    t = permit(fabric, a, address, op)
    _span(fabric, a, t, size, op)
    whole_set(fabric, fabric.address_map.region(t.region), t.global_address)
    try:
        target = target_node(fabric, t.owner, a)
        dram = (t.owner in fabric.domains and t.owner not in fabric.graph
                and fabric.address_map.region(t.region).kind == "dram")
        return _access_to(fabric, a, target, op=op, size=size, transport=transport,
                          address=t.global_address, host_dram=dram)
    except RoutingError as e:   # no path, or the owner failed: say which address was asked
        raise RoutingError(f"{e} (address {format_address(t.global_address)})") from None


def access_to(fabric, src, target, op="load", size=64, transport="loadstore"):
    """:func:`access` to the first byte of ``target``'s memory (its HBM, or its only region).

    The access is translated and permission-checked through ``src``'s host domain
    like :func:`access`, and :attr:`Access.address` is that first byte's global address (to
    time an access at another address, call :func:`access` with it: its owner is the
    target). Its ``size`` bytes must fit in that memory (else
    :class:`~fabric.AddressMapError` names the target, its memory's size and the size
    asked: 1 TiB into an 80 GB HBM is no transfer that exists) and, as for :func:`access`,
    lie in one window that permits ``op`` (else :class:`~fabric.TranslationError`);
    where that memory is an interleave set with a failed member, the set is gone
    (:func:`whole_set`: :class:`~fabric.RoutingError`). On a fabric with no address plan (no
    HBM size) there is no protection model and the access is timed unchecked, with
    ``address`` -1 (no address names the memory).

    Parameters
    ----------
    fabric : Fabric
    src : str or int
        The requesting chip (name or rank).
    target : str or int
        The node whose memory is accessed (name, or a chip's rank).
    op : {"load", "store"}
    size : int
        Bytes accessed.
    transport : str or Transport
        ``"loadstore"`` (the default), ``"rdma"``, or ``"native"`` for the pair's own.

    Returns
    -------
    Access
        The time in seconds, its stages, the paths and the global address.

    Examples
    --------
    >>> import topologies
    >>> a = access_to(topologies.build("torus:4x4"), 0, 10, op="load")
    >>> a.path            # dimension 0 first; at a tie (half-way round a ring) the + way
    ('chip0', 'chip1', 'chip2', 'chip6', 'chip10')
    >>> a.return_path
    ('chip10', 'chip11', 'chip8', 'chip12', 'chip0')
    >>> f = topologies.build("torus:4x4,chip=h100")               # 80 GB of HBM a chip
    >>> access_to(f, 0, 10, size=2**40)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    fabric.AddressMapError: ...: a load of 1099511627776 B (1TiB) to 'chip10' is larger than ...
    """
    fabric = fabric_arg(fabric)
    size = _check_op(op, size)
    _transport_name(transport)
    a, target = fabric.node(src, "src"), fabric.node(target, "target")
    protected = checks_accesses(fabric)
    # a chip issues the access; without an address plan only a chip's memory is known
    # (with one, the map says what holds memory: a NIC's MMIO does, a switch does not)
    for x in (a,) if protected else (a, target):
        _require_chip(fabric, x)
    if protected:
        reg = _memory_region(fabric, target)
        t = permit(fabric, a, _memory_of(fabric, target, reg), op)
        _fits(fabric, target, reg, size, op)
        _span(fabric, a, t, size, op)       # and one window maps every byte, as for access
        whole_set(fabric, reg, t.global_address)
    return _access_to(fabric, a, target, op=op, size=size, transport=transport,
                      address=t.global_address if protected else None)


def _access_to(fabric, a, target, op, size, transport, address, host_dram=False):
    """The timing of an access already permitted (stages from the routed paths); with
    ``host_dram``, of an access to a host's DRAM that ``target`` serves."""
    r = fabric.router
    idx = fabric.node_index
    s, d = idx[a], idx[target]
    (t,) = transports_for(fabric, transport, [s], [d])
    links = r.path_links(s, d)
    path = (a,) + tuple(fabric.nodes[int(r.link_head[k])] for k in links)
    per_hop = tuple((fabric.nodes[int(r.link_tail[k])], fabric.nodes[int(r.link_head[k])],
                     float(r.link_latency[k])) for k in links)
    fwd = float(sum(h[2] for h in per_hop))
    bw_f = float(min((r.link_bandwidth[k] for k in links), default=np.inf))
    back_path, back, bw_b = (), 0.0, np.inf
    if op == "load":
        blinks = r.path_links(d, s)
        back_path = (target,) + tuple(fabric.nodes[int(r.link_head[k])] for k in blinks)
        back = float(sum(r.link_latency[k] for k in blinks))
        bw_b = float(min((r.link_bandwidth[k] for k in blinks), default=np.inf))
    req, ser, resp, reply, comp, copy, total = _stages(t, op, size, fwd, back, bw_f, bw_b,
                                                       len(links))
    slowest = _slowest(fabric, [t], np.array([s]), np.array([d]), op, size)[0]
    # a load or store reaches a host's DRAM through the serving chip's host link; a message's
    # receiving NIC writes or reads host memory itself (its nic_rx stage: a DMA over PCIe)
    h = _host_memory(fabric, op) if host_dram and t.kind == "memory" else 0.0
    return Access(src=a, target=target, address=-1 if address is None else int(address), op=op,
                  size=int(size), transport=t.name,
                  path=path, return_path=back_path, hops=len(links), per_hop=per_hop,
                  requester=float(req), forward=fwd, serialization=float(ser),
                  responder=float(resp), reply=float(reply), completion=float(comp),
                  copy=float(copy), total=float(total + h), slowest=float(slowest + h),
                  host_memory=h)


def access_latencies(fabric, op="load", size=64, transport="loadstore", chips=None):
    """Access latency between every ordered pair of distinct chips (for distributions).

    Each access goes from a chip to the first byte of another chip's memory,
    so the target is that chip. Latencies use the same stages as
    :func:`access`, vectorized, each pair at the slowest of its equal-cost
    paths: the path latency is the policy's (the largest over ECMP paths) and
    serialization is at the narrowest link of the paths (:attr:`Access.slowest`;
    :func:`access` times the one path it names, which may be faster).

    Parameters
    ----------
    fabric : Fabric
    op, size, transport
        As for :func:`access`; ``size`` must fit in every chip's memory (an
        :class:`~fabric.AddressMapError` names the first chip it does not) and lie in
        one window of each requester's host that permits ``op`` (a
        :class:`~fabric.TranslationError` names the window's end), and no chip's memory may
        be an interleave set with a failed member (:func:`whole_set`), as :func:`access_to`.
    chips : sequence, optional
        Restrict to these chips (names or ranks, each once). Default: every endpoint.

    Returns
    -------
    src, dst : ndarray of int64
        Ranks (positions in ``chips``) of each pair.
    latency : ndarray
        Seconds, one value per ordered pair ``src != dst``.

    Examples
    --------
    >>> import topologies
    >>> f = topologies.build("sd200-ultra")
    >>> s, d, lat = access_latencies(f, op="store", transport="loadstore")
    >>> len(lat), round(float(lat.max()) * 1e9, 1)
    (16256, 721.2)
    """
    fabric = fabric_arg(fabric)
    size = _check_op(op, size)
    _transport_name(transport)
    if chips is None:
        nodes = fabric.endpoint_indices
    else:
        idx = fabric.node_index
        chips = sequence_of(chips, "chips", "chip names or ranks")
        names = [fabric.node(c) for c in chips]
        seen = {}
        for c, name in zip(chips, names):
            if name not in fabric.rank_of:
                raise NodeError(f"{fabric.name}: {name!r} is a "
                                f"{fabric.graph.nodes[name].get('kind')}, not a chip: an "
                                "access goes from a chip to a chip's memory")
            if name in seen:
                raise NodeError(f"{fabric.name}: chips lists {name!r} twice ({seen[name]!r} "
                                f"and {c!r}); latencies are over pairs of distinct chips")
            seen[name] = c
        nodes = np.array([idx[n] for n in names], dtype=np.int64)
    n = len(nodes)
    if n < 2:
        raise NodeError(f"{fabric.name}: latency over chip pairs needs at least 2 chips, got {n}")
    if checks_accesses(fabric):
        _permit_all(fabric, [fabric.nodes[k] for k in nodes.tolist()], op, size)
    i, j = np.nonzero(~np.eye(n, dtype=bool))
    ts = transports_for(fabric, transport, nodes[i], nodes[j])
    rev = None
    if op == "load":
        # the reply of pair (i, j) is the request path of pair (j, i)
        pos = np.full((n, n), -1, dtype=np.int64)
        pos[i, j] = np.arange(len(i))
        rev = pos[j, i]
    total = _slowest(fabric, ts, nodes[i], nodes[j], op, size, reverse=rev)
    return i.astype(np.int64), j.astype(np.int64), total


def _slowest(fabric, ts, s, d, op, size, reverse=None):
    """Seconds of accesses from nodes ``s`` to nodes ``d`` (transports ``ts``), each pair at
    the slowest of its equal-cost paths: the policy's largest path latency and narrowest
    link (:meth:`fabric.Router.measure`), each way. ``reverse[k]``, when given, is the
    position of pair ``(d[k], s[k])`` in the arrays (its reply path is measured once)."""
    n = len(s)
    if op == "load" and reverse is None:
        # both ways in one routing: the reply of pair k is pair n + k
        s, d, reverse = np.concatenate([s, d]), np.concatenate([d, s]), np.arange(n, 2 * n)
    hops, fwd, bw_f = fabric.router.measure(s, d, want_bandwidth=True)
    if op == "load":
        back, bw_b = fwd[reverse], bw_f[reverse]
    else:
        back, bw_b = 0.0 * fwd, np.full(len(fwd), np.inf)
    hops, fwd, bw_f = hops[:n], fwd[:n], bw_f[:n]
    total = np.empty(n)
    for t in set(ts):  # one or two transports: vectorized per transport
        m = np.fromiter((x is t for x in ts), dtype=bool, count=n)
        total[m] = _stages(t, op, size, fwd[m], back[m], bw_f[m], bw_b[m], hops[m])[-1]
    return total


def _permit_all(fabric, chips, op, size):
    """Raise :class:`~fabric.TranslationError` unless every chip may ``op`` every other's memory
    (and :class:`~fabric.AddressMapError` where ``size`` bytes exceed a chip's memory)."""
    regs = [_memory_region(fabric, c) for c in chips]
    for c, reg in zip(chips, regs, strict=True):
        _fits(fabric, c, reg, size, op)
    g = np.array([_memory_of(fabric, c, reg) for c, reg in zip(chips, regs, strict=True)],
                 dtype=np.int64)
    by_host = {}
    for k, c in enumerate(chips):
        by_host.setdefault(fabric.host_of.get(c), []).append(k)
    for host, ks in by_host.items():
        if host is None:
            _requester_domain(fabric, chips[ks[0]])      # raises, naming the chip
        # the host's requesters reach every chip but themselves: pairs are of distinct chips,
        # so a host with one requester here need not map that chip's own memory
        targets = np.flatnonzero(np.arange(len(chips)) != ks[0]) if len(ks) == 1 else \
            np.arange(len(chips))
        # one domain at a time: a sweep over every host keeps none of them
        dom = fabric.host_domains.build(host)
        for whole in (1, size):         # the first bytes, then every byte (access's span rule)
            ok = dom.maps(g[targets], _OP_ACCESS[op], size=whole)
            if not ok.all():
                j = int(targets[np.flatnonzero(~ok)[0]])
                src = chips[ks[0]] if chips[ks[0]] != chips[j] else chips[ks[-1]]
                t = permit(fabric, src, int(g[j]), op)    # raises the translator's refusal
                _span(fabric, src, t, size, op)           # or names the window's end
                raise TranslationError(f"host {host}: may not {op} {chips[j]!r}'s memory")
    for k, reg in enumerate(regs):
        whole_set(fabric, reg, int(g[k]))       # permitted, but gone (as access_to says)


@dataclasses.dataclass(frozen=True)
class LatencyStats:
    """Summary of a latency distribution, seconds."""

    count: int
    min: float
    mean: float
    p50: float
    p99: float
    max: float


def latency_stats(latencies):
    """Min, mean, median, 99th percentile (linear interpolation) and max of latencies.

    A value of the wrong kind (None, text, a bool: STYLE's rule) is a TypeError; no value, or
    one that is no latency (nan, inf, negative), a SpecError.

    Parameters
    ----------
    latencies : sequence or numpy.ndarray of float
        Seconds, one per access; at least one.

    Returns
    -------
    LatencyStats
        ``count`` and, in seconds, ``min``, ``mean``, ``p50``, ``p99``, ``max``.

    Examples
    --------
    >>> latency_stats([1.0, 2.0, 3.0, 4.0]).p50
    2.5
    """
    x = real_array(latencies, "latencies", "latency_stats takes seconds (numbers)")
    if x.size == 0:
        raise SpecError("latency_stats needs at least one latency")
    bad = ~np.isfinite(x) | (x < 0)
    if bad.any():
        # a NaN would make every figure NaN, an infinity the mean and max: no latency is either
        raise SpecError(f"latency_stats takes finite latencies >= 0 (seconds), got "
                        f"{float(x.ravel()[np.flatnonzero(bad.ravel())[0]])!r}")
    return LatencyStats(count=int(x.size), min=float(x.min()), mean=float(x.mean()),
                        p50=float(np.percentile(x, 50)), p99=float(np.percentile(x, 99)),
                        max=float(x.max()))
