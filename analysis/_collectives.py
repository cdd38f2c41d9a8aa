"""On-fabric cost of collective operations, algorithm selection, and calibration parameters.

An algorithm's :class:`~analysis.Schedule` is evaluated on a fabric step by
step (DESIGN.md s.5). One step, repeated ``repeat`` times, costs per repetition

    latency + overhead + transfer + reduction

where

* ``latency`` is the longest one-way path latency of the step's flows, from the
  fabric's :attr:`~fabric.Fabric.router` (the largest over ECMP paths);
* ``overhead`` is the transport's per-message overhead
  (:attr:`fabric.Transport.per_message_overhead`: translation and check for
  load/store, software and NIC processing for RDMA), once per step: the flows
  of a step are issued concurrently. A rank that sends ``m`` messages in one
  step over a message transport also posts them one after another: ``(m - 1)``
  more ``software_post`` (the NIC stages of successive messages overlap; an
  assumption). Load/store transactions issue back to back in hardware;
* ``transfer`` is the most loaded directed link's bytes over its effective
  bandwidth (the router's ECMP loads; contention between flows of a step is
  this sharing of links);
* ``reduction`` is the bytes the busiest rank reduces over the chip's
  ``reduce_rate`` (:mod:`fabric._chips`; none for in-switch reduction, and
  none when the fabric names no chip).

Terms add, except that a rank reduces data as it streams in: a step's
transfer and reduction overlap, and the step pays the larger of the two
(``overlap=True``, the default). This is how NCCL's ring and tree kernels
work (the ``recvReduceSend`` primitive reduces each slice as it arrives), and
NCCL's own cost model has no separate reduction term (``src/graph/tuning.cc``:
time = latency + bytes / bandwidth). ``overlap=False`` adds them, as the
alpha-beta-gamma closed forms do (Thakur et al. 2005). Steps add.

Pipelined schedules (double binary tree, in-switch) run one chunk per stage:
``(k + D)`` stages of ``1/k`` of the data, with the chunk count ``k`` chosen to
minimise the time (the pipeline's best case; at least one byte per chunk).

Effective link bandwidth (documented parameters, never fitted):

* a link whose technology has a published per-link bandwidth for a collective
  library's bulk protocol uses it: NCCL's ``SM90_NVLINK_BW`` = 20.6 GB/s per
  NVLink4 link and ``SM100_NVLINK_BW`` = 40.1 GB/s per NVLink5 link
  (NVIDIA/nccl ``src/graph/topo.h``), against line rates of 25 and 50 GB/s; this
  is the "protocol overhead (~20%)" that takes 450 GB/s to 370 GB/s on H100
  (NVIDIA/nccl-tests issue 212, NCCL maintainer);
* any other link carries the transport's payload fraction,
  ``max_payload / (max_payload + header)`` (:mod:`fabric._transport`);
* in-switch (NVLink SHARP) steps further scale the NVLink bandwidth by NCCL's
  ``nvlsEfficiency``: 0.85 on Hopper (NVLink4), 0.74 on Blackwell (NVLink5)
  (NVIDIA/nccl ``src/tuning/nvls.cc``).

Transports. ``transport=None`` is the native choice per step, as NCCL makes it:
load/store where every flow of the step stays in one load/store domain
(:func:`fabric.loadstore_domains`, the one rule: the graph without NIC nodes and
without links that carry messages only, :attr:`fabric.LinkTech.carries`), RDMA
otherwise. A
named transport is used for every step; ``"loadstore"`` cannot cross a NIC or
a message-only link (a :class:`~fabric.RoutingError` names the pair). One-shot, two-shot and in-switch
algorithms are loads and stores into symmetric memory: they need load/store.

Examples
--------
>>> import networkx as nx
>>> from fabric import Fabric
>>> G = nx.complete_graph(4)
>>> nx.set_node_attributes(G, "chip", "kind")
>>> nx.set_edge_attributes(G, 1e9, "bandwidth"); nx.set_edge_attributes(G, 1e-6, "latency")
>>> f = Fabric.from_graph(G)
>>> r = cost(f, "all-reduce", 4096, algorithm="ring", transport="loadstore", runtime="ideal")
>>> r.algorithm, r.transport, len(r.steps)
('ring', 'loadstore', 2)
>>> round(r.time * 1e6, 3)      # 6 (1 us + 30 ns) + 2 * 3/4 * 4096 B / (1 GB/s * 256/272)
12.708
"""

import copy
import dataclasses
import functools
import math

import numpy as np

from fabric import (
    TECHNOLOGIES,
    RoutingError,
    SpecError,
    link_tech,
    parse_size,
    peer_access_latency,
    runtime_arch,
    sends_messages,
)
from fabric import runtime as get_runtime
from fabric import transport as get_transport
from fabric._arrays import traffic_values
from fabric._fabric_arg import fabric_arg
from fabric._memo import fabric_memo
from fabric._schema import MAX_BYTES
from fabric._transport import transport_arg
from fabric._units import (
    check_count,
    check_number,
    flag_of,
    is_int,
    is_real,
    sequence_of,
    show_value,
)

from . import _runtime_cost
from ._bounds import cut_seconds_per_byte, flow_seconds_per_byte
from ._closed_form import busbw_factor, normalize_algorithm, normalize_op
from ._schedules import ALGORITHMS, NotApplicableError, resolve_ranks, schedule

__all__ = [
    "IN_SWITCH_EFFICIENCY",
    "MESSAGE_TECHNOLOGIES",
    "PROTOCOL_LINK_BANDWIDTH",
    "CollectiveCost",
    "StepCost",
    "applicable_algorithms",
    "communicator_channels",
    "cost",
    "cost_sizes",
    "host_launch_delay",
    "peer_round_trip",
]

#: Effective per-link bandwidth (B/s) of a collective library's bulk protocol, by link
#: technology. Source: NVIDIA/nccl src/graph/topo.h (SM90_NVLINK_BW 20.6, SM100_NVLINK_BW
#: 40.1, in GB/s per link); cited in the module docstring.
PROTOCOL_LINK_BANDWIDTH = {
    "nvlink4": 20.6e9,
    "nvlink5": 40.1e9,
}

#: The built-in link technologies that carry only messages (RDMA verbs over InfiniBand or
#: RoCE), never load/store. Derived from :attr:`fabric.LinkTech.carries`, which is where a
#: technology (your own included) says it; the rule that uses it is
#: :func:`fabric.loadstore_domains`.
MESSAGE_TECHNOLOGIES = frozenset(n for n, t in TECHNOLOGIES.items() if t.carries == "messages")

#: NVLink SHARP efficiency by link technology: NCCL's nvlsEfficiency (Hopper 0.85,
#: Blackwell 0.74; NVIDIA/nccl src/tuning/nvls.cc). Other technologies: 1 (no source).
IN_SWITCH_EFFICIENCY = {
    "nvlink4": 0.85,
    "nvlink5": 0.74,
}


@dataclasses.dataclass(frozen=True)
class StepCost:
    """The cost of one schedule step (per repetition, and in total).

    Attributes
    ----------
    label : str
    repeat : int
        Repetitions (for a pipelined schedule: chunks + fill stages).
    latency, overhead, transfer, reduction : float
        Seconds per repetition (see the module docstring).
    time : float
        ``repeat * (latency + overhead + transfer + reduction)``.
    bottleneck : tuple or None
        ``(u, v)``: the most loaded directed link of the step.
    link_bytes : float
        Bytes that link carries per repetition.
    transport : str
    """

    label: str
    repeat: int
    latency: float
    overhead: float
    transfer: float
    reduction: float
    time: float
    bottleneck: tuple
    link_bytes: float
    transport: str


@dataclasses.dataclass(frozen=True)
class CollectiveCost:
    """The cost of one collective operation on one fabric.

    Attributes
    ----------
    fabric : str
        The fabric's name.
    op : str
    size : float
        Bytes, nccl-tests convention (for all-to-allv: the mean bytes a rank
        sends, own block included).
    ranks : int
    algorithm : str
        The algorithm costed (for ``auto``: the fastest, see ``candidates``); ``"none"``
        for an operation of 0 bytes the runtime runs nothing for (see :func:`cost`).
    transport : str
        ``"loadstore"``, ``"rdma"``, or ``"loadstore+rdma"`` when steps differ; ``"none"``
        with the algorithm ``"none"``.
    time : float
        Seconds.
    algbw, busbw : float
        Bytes/s: ``size / time`` and ``algbw * busbw_factor`` (nccl-tests).
    steps : tuple of StepCost
    bottleneck : tuple or None
        ``(u, v)``, the link that limits the step with the largest transfer time.
    lower_bound : float
        Seconds no algorithm can beat on this fabric (see :func:`cost`).
    chunks : int or None
        Pipeline chunks, for pipelined algorithms.
    candidates : tuple
        For ``algorithm="auto"``: ``(algorithm, time or reason)`` of every algorithm
        tried; ``"<algorithm> over rdma"`` for the same algorithm over RDMA when the
        transport was left to the choice (see :func:`cost`); under a runtime,
        ``"algorithm/protocol"`` labels. With the algorithm ``"none"``: ``(("none",
        why nothing runs),)``.
    runtime : str
        The runtime that ran it (:mod:`fabric._runtime`): ``"ideal"`` is the model's schedules
        with no software costs (not a bound: see ``lower_bound``).
    protocol : str or None
        The runtime's protocol (NCCL: ``"LL"``, ``"LL128"``, ``"Simple"``).
    channels : int or None
        Channels the runtime ran on at this size.
    fixed : float
        Seconds of the time that do not depend on the size (launch, synchronisation,
        per-step latencies) under a runtime; 0 for ``"ideal"``.
    """

    fabric: str
    op: str
    size: float
    ranks: int
    algorithm: str
    transport: str
    time: float
    algbw: float
    busbw: float
    steps: tuple
    bottleneck: tuple
    lower_bound: float
    chunks: int = None
    candidates: tuple = ()
    runtime: str = "ideal"
    protocol: str = None
    channels: int = None
    fixed: float = 0.0

    def __repr__(self):
        # steps and candidates can run to hundreds of entries; keep the repr to one line
        return (f"CollectiveCost({self.op} of {self.size:.6g} B on {self.fabric!r}, "
                f"{self.ranks} ranks, {self.algorithm}"
                + (f"/{self.protocol}" if self.protocol else "")
                + f" over {self.transport} ({self.runtime}): "
                f"time={self.time:.6g} s, busbw={self.busbw / 1e9:.4g} GB/s, "
                f"{len(self.steps)} steps)")

    def as_dict(self):
        """The headline figures as a JSON-ready dict (the CLI's ``--json`` fields and more).

        Examples
        --------
        >>> import topologies
        >>> d = cost(topologies.build("dgx-h100"), "all-gather", 2**20).as_dict()
        >>> sorted(d)[:4]
        ['algbw', 'algorithm', 'bottleneck', 'busbw']
        """
        return {"fabric": self.fabric, "op": self.op, "size": self.size, "ranks": self.ranks,
                "algorithm": self.algorithm, "transport": self.transport, "time": self.time,
                "algbw": self.algbw, "busbw": self.busbw, "lower_bound": self.lower_bound,
                "bottleneck": list(self.bottleneck) if self.bottleneck else None,
                "chunks": self.chunks, "runtime": self.runtime, "protocol": self.protocol,
                "channels": self.channels}


# -- per-fabric facts (cached in fabric_memo(fabric, __name__)) -------------------------

def _loadstore_domain(fabric):
    """Load/store domain label per node (-1 for NICs): :attr:`fabric.Fabric.loadstore_domains`,
    the one rule (:func:`fabric.loadstore_domains`)."""
    return fabric.loadstore_domains


def _edge_techs(fabric):
    return fabric.edge_arrays.tech


def _effective_bandwidth(fabric, tr, in_switch):
    """Per directed link: bandwidth x protocol efficiency (module docstring), cached."""
    key = ("bw", tr.name, tr.max_payload, tr.header, in_switch)
    c = fabric_memo(fabric, __name__)
    if key not in c:
        ea = fabric.edge_arrays
        techs = _edge_techs(fabric)
        payload = tr.max_payload / (tr.max_payload + tr.header)
        eff = np.full(len(techs), payload)
        for name, bw in PROTOCOL_LINK_BANDWIDTH.items():
            eff[techs == name] = bw / link_tech(name).bandwidth
        if in_switch:
            for name, e in IN_SWITCH_EFFICIENCY.items():
                eff[techs == name] *= e
        c[key] = np.repeat(np.asarray(ea.bandwidth, dtype=float) * eff, 2)
    return c[key]


# -- input checks ------------------------------------------------------------------------


# resolve_ranks (reading a collective's ranks) lives in analysis/_schedules.py, which
# analysis/_schedules_multi.ring_search also imports
_resolve_ranks = resolve_ranks       # the name runtime's tests import


def read_nbytes(nbytes):
    """A collective's size per rank as :func:`cost` reads it: a number of bytes >= 1 (a string
    such as ``"1MiB"`` parsed), as a float; a bool, None or a non-finite size is refused, and
    a size below one byte: no collective moves part of a byte, and 0.5 is most likely a
    size in another unit (0.5 GiB), and one above :data:`fabric._schema.MAX_BYTES` (an int64,
    the limit of :func:`fabric.access`). A fractional size above one byte is read as given."""
    if isinstance(nbytes, str):
        nbytes = parse_size(nbytes)
    # the number's one check (a float: np.float16 compared with MAX_BYTES overflowed)
    size = check_number("nbytes", nbytes, 0, " bytes", strict=True)
    if size < 1:
        raise SpecError(f"nbytes must be at least 1 byte (a size in bytes: no collective "
                        f"moves part of one), got nbytes={show_value(nbytes)}")
    _check_max_bytes(nbytes if is_int(nbytes) else size, "nbytes")   # 2**63 - 1 exactly
    return size


def _check_max_bytes(nbytes, what):
    if nbytes > MAX_BYTES:
        raise SpecError(f"{what} must be at most 2**63 - 1 bytes (an int64), as for an "
                         f"access (route, latency), got {show_value(nbytes)}")


def _transport_spec(transport):
    transport = transport_arg(transport)
    return None if transport is None else get_transport(transport)


# -- planning: routing work per schedule, independent of size ----------------------------


@dataclasses.dataclass(frozen=True)
class _StepPlan:
    label: str
    repeat: int
    latency: float
    overhead: float
    beta: float        # s per byte of size, transfer
    gamma: float       # s per byte of size, reduction (+ bounce copies)
    link: int          # index of the bottleneck directed link, -1 if none
    link_unit: float   # bytes on it per byte of size
    transport: str
    max_flow: float    # largest flow, as a fraction of size


@dataclasses.dataclass(frozen=True)
class _Plan:
    algorithm: str
    p: int
    steps: tuple
    pipeline: int
    transport: str
    alpha_min: float


def _step_transport(fabric, tr, s_nodes, d_nodes):
    if tr is not None:
        return tr
    dom = _loadstore_domain(fabric)
    ds, dd = dom[s_nodes], dom[d_nodes]
    if len(ds) == 0 or ((ds >= 0) & (ds == dd)).all():
        return get_transport("loadstore")
    return get_transport("rdma")


def _check_carry(fabric, tr, idx):
    """A load/store transport must reach every rank of the group without crossing a NIC."""
    if tr is None or tr.kind != "memory":
        return
    dom = _loadstore_domain(fabric)[idx]
    bad = np.flatnonzero(dom != dom[0])
    if len(bad):
        a, b = fabric.nodes[int(idx[0])], fabric.nodes[int(idx[bad[0]])]
        raise RoutingError(
            f"{fabric.name}: transport {tr.name!r} cannot carry this group: load/store does not "
            f"cross a NIC or an InfiniBand/RoCE link, and every path from {a!r} to {b!r} does; "
            f"use transport='rdma' or ranks inside one load/store domain")


def _pair_key(s_nodes, d_nodes):
    return (s_nodes.tobytes(), d_nodes.tobytes())


def _latencies(fabric, pairs):
    """Longest path latency of each step's flows; one batched Router query for the new ones.

    Cached per fabric by the flows (source and destination nodes), so steps that
    several algorithms share (a ring's, a shift's) are routed once.
    """
    cache = fabric_memo(fabric, __name__).setdefault("latency", {})
    todo = {}
    for s_nodes, d_nodes in pairs:
        key = _pair_key(s_nodes, d_nodes)
        if key not in cache and key not in todo:
            todo[key] = (s_nodes, d_nodes)
    if todo:
        srcs = np.concatenate([s for s, _ in todo.values()])
        dsts = np.concatenate([d for _, d in todo.values()])
        lats = np.asarray(fabric.router.latency(srcs, dsts), dtype=float)
        bounds = np.cumsum([0] + [len(s) for s, _ in todo.values()])
        for key, peak in zip(todo, np.maximum.reduceat(lats, bounds[:-1]).tolist()):
            cache[key] = peak
    return cache


def _loads_key(s_nodes, d_nodes, fraction):
    uniform = bool((fraction == fraction[0]).all())
    return _pair_key(s_nodes, d_nodes) + ((None,) if uniform else (fraction.tobytes(),)), uniform


def _prefetch_loads(fabric, flows):
    """Route the steps whose loads are not cached yet in one :meth:`Router.loads_grouped` call.

    ``flows`` is a list of (source nodes, destination nodes, fraction) per step.
    Each distinct pair of the schedule is then routed once, however many steps
    it appears in (the ``p - 1`` shifts of a pairwise exchange share them).
    """
    cache = fabric_memo(fabric, __name__).setdefault("loads", {})
    todo = {}
    for s_nodes, d_nodes, fraction in flows:
        key, uniform = _loads_key(s_nodes, d_nodes, fraction)
        if key not in cache and key not in todo:
            todo[key] = (s_nodes, d_nodes, np.ones(len(fraction)) if uniform else fraction)
    if len(todo) > 1:
        parts = list(todo.values())
        group = np.repeat(np.arange(len(parts)), [len(s) for s, _, _ in parts])
        got = fabric.router.loads_grouped(np.concatenate([s for s, _, _ in parts]),
                                          np.concatenate([d for _, d, _ in parts]),
                                          np.concatenate([w for _, _, w in parts]),
                                          group, len(parts))
        for key, row in zip(todo, got):
            cache[key] = _sparse(row)


def _sparse(row):
    """A step's loads as (loaded links, their bytes): a step's flows load a few of a large
    fabric's links, and a dense row per cached step held gigabytes (a decode layout search
    on the 16k-chip hypermesh of the scaling study: ~240 steps of 1.26 M links each)."""
    links = np.flatnonzero(row)
    return links, row[links]


def _loads(fabric, s_nodes, d_nodes, fraction):
    """Router loads of one step per byte of size, cached per fabric by the flows, as
    (loaded links, bytes on each) (:func:`_sparse`).

    Loads are linear in the bytes: a step whose flows all carry the same
    fraction reuses the loads of the same flows at one byte, scaled.
    """
    cache = fabric_memo(fabric, __name__).setdefault("loads", {})
    key, uniform = _loads_key(s_nodes, d_nodes, fraction)
    if key not in cache:
        cache[key] = _sparse(fabric.router.loads(s_nodes, d_nodes,
                                                 1.0 if uniform else fraction))
    links, unit = cache[key]
    return links, unit * fraction[0] if uniform else unit


def _busiest(links, loads, bw, n_links):
    """(link, seconds per byte, bytes) of the link with the most seconds per byte of a
    step's sparse loads: the first such link, as ``argmax`` over the dense row finds it."""
    per = loads / bw[links]
    k = int(np.argmax(per)) if len(per) else -1
    if k < 0 or not per[k] > 0:         # nothing loaded: the dense row's argmax, link 0
        row = np.zeros(n_links)
        row[links] = loads
        dense = row / bw
        j = int(np.argmax(dense))
        return j, float(dense[j]), float(row[j])
    return int(links[k]), float(per[k]), float(loads[k])


def _plan(fabric, sched, idx, tr):
    router = fabric.router
    nodes_of = idx
    if sched.switches:
        ni = fabric.node_index
        nodes_of = np.concatenate([idx, np.array([ni[s] for s in sched.switches],
                                                 dtype=np.int64)])
    chip = fabric.chip
    rate = chip.reduce_rate if chip is not None else math.inf
    pairs = [(nodes_of[st.src], nodes_of[st.dst]) for st in sched.steps]
    lat_of = _latencies(fabric, [p for p, st in zip(pairs, sched.steps) if st.n_flows])
    _prefetch_loads(fabric, [(s, d, st.fraction) for (s, d), st in zip(pairs, sched.steps)
                             if st.n_flows])
    steps = []
    names = set()
    base = []
    for st, (s_nodes, d_nodes) in zip(sched.steps, pairs):
        t = _step_transport(fabric, tr, s_nodes, d_nodes)
        if (sched.symmetric_memory or sched.in_network) and t.kind != "memory":
            why = (f"transport {t.name!r} is message passing" if tr is not None else
                   "this group is not one load/store domain (its flows cross a NIC or an "
                   "InfiniBand/RoCE link)")
            raise NotApplicableError(
                f"{sched.algorithm} works by loads and stores into peers' symmetric memory; "
                + why)
        names.add(t.name)
        j, beta, link_unit, lat = -1, 0.0, 0.0, 0.0
        if st.n_flows:
            links, loads = _loads(fabric, s_nodes, d_nodes, st.fraction)
            lat = lat_of[_pair_key(s_nodes, d_nodes)]
            j, beta, link_unit = _busiest(links, loads,
                                          _effective_bandwidth(fabric, t, sched.in_network),
                                          router.n_links)
        gamma = 0.0 if sched.in_network else st.reduce / rate
        if t.bounce and st.n_flows:
            sent = np.bincount(st.src, weights=st.fraction).max()
            gamma += 2 * float(sent) / t.copy_bandwidth
        overhead = 0.0
        if st.n_flows:
            overhead = t.per_message_overhead
            base.append(overhead)
            if t.kind == "message":
                messages = int(np.bincount(st.src).max())
                overhead += (messages - 1) * t.software_post
        steps.append(_StepPlan(label=st.label, repeat=st.repeat, latency=lat, overhead=overhead,
                               beta=beta, gamma=gamma, link=j,
                               link_unit=link_unit, transport=t.name,
                               max_flow=float(st.fraction.max(initial=0.0))))
    transport_name = "+".join(sorted(names)) if names else (tr.name if tr else "loadstore")
    ovh = min(base, default=0.0)
    return _Plan(algorithm=sched.algorithm, p=sched.p, steps=tuple(steps), pipeline=sched.pipeline,
                 transport=transport_name, alpha_min=ovh)


def _auto_transports(fabric, tr, idx):
    """(label, transport) pairs ``auto`` tries: the transport asked for; else the native
    choice ("") and every named transport that can carry the group and differs from it.

    Load/store is the native choice wherever it can carry a step, so besides native the
    one other choice is message passing (RDMA) for every step, offered only where every
    rank can send messages (:func:`fabric.sends_messages`: a NIC, or a message-only link);
    a fabric without NICs has no RDMA to choose.
    """
    if tr is not None:
        return [("", tr)]
    out = [("", None)]
    if not sends_messages(fabric)[idx].all():
        return out
    rdma = get_transport("rdma")
    try:
        _check_carry(fabric, rdma, idx)
        out.append(("rdma", rdma))
    except RoutingError:
        pass
    return out


def _get_plan(fabric, op, algorithm, nodes, idx, tr, traffic):
    tkey = None
    if traffic is not None:
        tkey = hash(np.ascontiguousarray(traffic, dtype=float).tobytes())
    key = ("plan", op, algorithm, nodes, None if tr is None else dataclasses.astuple(tr), tkey)
    c = fabric_memo(fabric, __name__)
    if key not in c:
        try:
            sched = schedule(op, algorithm, len(nodes), fabric=fabric, nodes=nodes,
                             traffic=traffic)
            c[key] = _plan(fabric, sched, idx, tr)
        except NotApplicableError as e:
            # cached without its traceback, and raised afresh each time: a traceback's frames
            # hold the fabric, and a memo value that holds its fabric keeps the fabric, its
            # router and every memo of it alive for the life of the process (the scaling
            # study's workers kept every 16k-chip fabric they had built); a raised exception
            # also gathers each raise's frames
            c[key] = copy.copy(e)
            raise
    got = c[key]
    if isinstance(got, NotApplicableError):
        raise copy.copy(got)
    return got


def _chunks(D, A, W, largest):
    """The chunk count k >= 1 minimising (k + D)(A + W/k), with at least one byte per flow."""
    kmax = max(1, int(largest))
    if A <= 0:
        return kmax
    k = math.sqrt(D * W / A)
    best = None
    for c in sorted({max(1, min(kmax, math.floor(k))), max(1, min(kmax, math.ceil(k)))}):
        t = (c + D) * (A + W / c)
        if best is None or t < best[0]:
            best = (t, c)
    return best[1]


def _evaluate(fabric, plan, n, overlap):
    """Time, per-step costs and chunks of a plan at size n (bytes)."""
    out = []
    chunks = None
    if plan.pipeline is not None and plan.steps:
        st = plan.steps[0]
        A = st.latency + st.overhead
        per_byte = max(st.beta, st.gamma) if overlap else st.beta + st.gamma
        chunks = _chunks(plan.pipeline, A, n * per_byte, n * st.max_flow)
        reps = chunks + plan.pipeline
        scale = n / chunks
        items = [(st, reps, scale)]
    else:
        items = [(st, st.repeat, n) for st in plan.steps]
    total = 0.0
    for st, reps, scale in items:
        transfer = st.beta * scale
        reduction = st.gamma * scale
        work = max(transfer, reduction) if overlap else transfer + reduction
        t = reps * (st.latency + st.overhead + work)
        total += t
        link = None
        if st.link >= 0:
            r = fabric.router
            link = (fabric.nodes[int(r.link_tail[st.link])], fabric.nodes[int(r.link_head[st.link])])
        out.append(StepCost(label=st.label, repeat=reps, latency=st.latency, overhead=st.overhead,
                            transfer=transfer, reduction=reduction, time=t,
                            bottleneck=link, link_bytes=st.link_unit * scale,
                            transport=st.transport))
    return total, tuple(out), chunks


def _injection(fabric, idx):
    c = fabric_memo(fabric, __name__)
    if "inj" not in c:
        ea = fabric.edge_arrays
        N = len(fabric.nodes)
        bw = (np.bincount(ea.u, weights=ea.bandwidth, minlength=N)
              + np.bincount(ea.v, weights=ea.bandwidth, minlength=N))
        lat = np.full(N, np.inf)
        np.minimum.at(lat, ea.u, ea.latency)
        np.minimum.at(lat, ea.v, ea.latency)
        c["inj"] = (bw, lat)
    bw, lat = c["inj"]
    return bw[idx], lat[idx]


def _lower_bound(fabric, op, n, idx, plan, in_network, traffic, overlap):
    """Seconds no algorithm can beat: one message plus the bytes a rank must move.

    Multi-port: a chip may use all its links at once, so the bound charges one
    message latency (the cheapest link incident to a rank, plus the smallest
    per-message overhead used) and, per rank, the bytes it must send or
    receive over the sum of its links' raw bandwidths (Chan et al.'s
    single-port ``ceil(lg p)`` latency term does not hold here). Bytes per rank:
    all-reduce ``2 (p-1)/p n`` when every rank has the same bandwidth, else the
    larger of ``n`` at the slowest rank and ``2 (p-1) n`` over all ranks' bandwidth
    (the ``2 (p-1)/p n`` is an average: a rank with fewer links, on a degraded fabric,
    may send only its data and receive the result), and ``n`` with in-network
    reduction (each rank still receives the whole result); all-gather, reduce-scatter, all-to-all
    ``(p-1)/p n``; broadcast and reduce ``n``; all-to-allv the larger of a rank's
    row and column. Reduction: ``(p-1)/p n`` at the busiest chip (Chan et al.),
    none in the network; added to the transfer term as Chan et al. do, or the
    larger of the two when reduction may overlap the transfer (``overlap``).

    The transfer term is the largest of that injection bound, the host-cut bound
    and, for all-to-all(v), the max-concurrent-flow optimum (:mod:`analysis._bounds`).
    """
    p = len(idx)
    if p == 1:
        return 0.0
    bw, lat = _injection(fabric, idx)
    alpha = float(lat.min()) + plan.alpha_min
    if op == "all-to-allv":
        M = np.asarray(traffic, dtype=float) * n
        M = M - np.diag(np.diag(M))
        need = np.maximum(M.sum(axis=1), M.sum(axis=0))
        flow = flow_seconds_per_byte(fabric, idx, np.asarray(traffic, dtype=float)) * n
        return alpha + max(float((need / bw).max()), flow)
    f = {"all-reduce": 1.0 if in_network else 2 * (p - 1) / p, "broadcast": 1.0,
         "reduce": 1.0}.get(op, (p - 1) / p)
    inject = f / float(bw.min())
    if op == "all-reduce" and not in_network and bw.min() != bw.max():
        # 2 (p-1)/p n is what ranks move on average (2 (p-1) n in all): a rank with
        # fewer links (a degraded fabric) may move only n, its data out and the result in
        inject = max(1.0 / float(bw.min()), 2 * (p - 1) / float(bw.sum()))
    move = max(inject, cut_seconds_per_byte(fabric, idx, op, in_network)) * n
    if op == "all-to-all":
        move = max(move, flow_seconds_per_byte(fabric, idx) * n)
    red = 0.0
    chip = fabric.chip
    if op in ("all-reduce", "reduce-scatter", "reduce") and not in_network and chip:
        red = (p - 1) / p * n / chip.reduce_rate
    return alpha + (max(move, red) if overlap else move + red)


# -- the public functions ----------------------------------------------------------------


def applicable_algorithms(fabric, op, ranks=None, transport=None, traffic=None):
    """Algorithms of ``op`` that apply to this fabric, group and transport.

    Parameters
    ----------
    fabric : fabric.Fabric
    op : str
        The operation (:func:`normalize_op` reads it).
    ranks : sequence of int or str, optional
        The group (ranks or names); default every rank.
    transport : str, optional
        ``"loadstore"``, ``"rdma"`` or None (the fabric's native one).
    traffic : array-like, optional
        An all-to-allv's bytes matrix: required for that operation, refused for another.

    Returns
    -------
    dict
        algorithm -> ``None`` if it applies, else the reason it does not (str).

    Examples
    --------
    >>> import topologies
    >>> ok = applicable_algorithms(topologies.build("dgx-h100"), "all-reduce")
    >>> ok["in-switch"] is None, ok["hierarchical"][:41]
    (True, 'hierarchical needs a hypermesh/torus grid')
    """
    fabric = fabric_arg(fabric)
    op = normalize_op(op)
    nodes, idx = resolve_ranks(fabric, ranks)
    tr = _transport_spec(transport)
    _check_carry(fabric, tr, idx)
    p = len(nodes)
    if (op == "all-to-allv") != (traffic is not None):   # not read as nbytes', nor dropped
        raise SpecError(f"all-to-allv needs traffic= (a traffic matrix, bytes, {p} x {p})"
                        if traffic is None else
                        f"traffic= is an all-to-allv's matrix; {op} takes none")
    M = _traffic_arg(op, traffic, p, "traffic")
    if M is not None:
        if _is_empty(op, traffic, M):
            raise SpecError("the traffic matrix moves no bytes between distinct ranks")
        M = M / _traffic_total(M)
    out = {}
    for a in ALGORITHMS[op]:
        try:
            _get_plan(fabric, op, a, nodes, idx, tr, M)
            out[a] = None
        except NotApplicableError as e:
            out[a] = str(e)
    return out


def _is_empty(op, nbytes, M):
    """Whether ``nbytes`` is an empty operation for :func:`cost`: 0 bytes (a number, not a
    bool, or a string such as ``"0B"``), or for all-to-allv a traffic matrix ``M`` (checked:
    :func:`_traffic_arg`) with no byte between distinct ranks: zeros, or bytes on the
    diagonal only, each rank's copy to itself, which no schedule moves (nor an all-to-all's
    own block); anything else is read as a size."""
    if M is not None:
        return not (M[~np.eye(len(M), dtype=bool)] != 0).any()
    if isinstance(nbytes, str):
        try:
            nbytes = parse_size(nbytes)
        except ValueError:
            return False        # read_nbytes names it
    return is_real(nbytes) and nbytes == 0


def _empty_cost(fabric, op, p, rt, total=0.0):
    """:func:`cost` of ``op`` of 0 bytes over ``p`` ranks under ``rt``: 0 s where the runtime
    launches nothing (one rank: nothing to move under any runtime), else a
    NotApplicableError naming what it launches
    (:func:`analysis._runtime_cost.empty_operation`). ``total``: an all-to-allv's bytes, each
    rank's copy to itself (none crosses between ranks); its ``size`` is ``total / p``, the
    bytes per rank as for any all-to-allv (:func:`_result`)."""
    launches, why = (_runtime_cost.empty_operation(rt, op) if p > 1
                     else (False, "one rank: nothing to move"))
    own = f"its {total:g} bytes are each rank's copy to itself, which no schedule moves"
    if launches:
        what = (f"{op} with no byte between distinct ranks ({own})" if total
                else f"{op} of 0 bytes")
        raise NotApplicableError(f"{what} under the {rt.name} runtime: {why}")
    if total:
        why = f"{why}; {own}"
    return CollectiveCost(fabric=fabric.name, op=op, size=total / p, ranks=p,
                          algorithm="none", transport="none", time=0.0, algbw=0.0, busbw=0.0,
                          steps=(), bottleneck=None, lower_bound=0.0,
                          candidates=(("none", why),), runtime=rt.name)


def _traffic_arg(op, nbytes, p, name="nbytes"):
    """An all-to-allv's traffic matrix ``nbytes``, checked (:func:`fabric._arrays.
    traffic_values`: numbers, ``p x p``, finite, >= 0; None for another op), its messages
    naming the caller's parameter ``name``. Its total is checked by :func:`cost` once it
    knows whether the matrix moves a byte between ranks (:func:`_is_empty`)."""
    if op != "all-to-allv":
        return None
    # before the total: a matrix of the wrong shape and no bytes was divided by 0, and an
    # all-negative matrix divided by its (negative) total would pass for a valid one
    return traffic_values(nbytes, p,
                          f"all-to-allv takes a traffic matrix (bytes, {p} x {p}) as {name}",
                          name)


def _traffic_total(M):
    """The total of a traffic matrix that moves bytes between ranks: at least 1 byte."""
    n = float(M.sum())
    if n < 1:
        raise SpecError(f"the traffic matrix moves {n:.3g} bytes in all; at least 1 byte "
                         "(a matrix in bytes: no collective moves part of one)")
    return n


def cost(fabric, op, nbytes, algorithm="auto", runtime="nccl", ranks=None, transport=None, *,
         overlap=True, ops_per_launch=1, devices_per_process=1, iterations=20, blocking=False):
    """Cost a collective operation on a fabric, run by a communication runtime.

    Parameters
    ----------
    fabric : Fabric
    op : str
        ``"all-reduce"``, ``"all-gather"``, ``"reduce-scatter"``, ``"broadcast"``,
        ``"reduce"``, ``"all-to-all"``, ``"all-to-allv"`` or ``"send-recv"`` (one
        point-to-point message of ``nbytes`` from the first rank to the second;
        over more ranks each rank sends to the next, as nccl-tests' sendrecv).
    nbytes : int, float, str or array_like
        Size per rank in the nccl-tests sense (all-gather: the gathered
        output; all-to-all: the whole send buffer), 1 to 2**63 - 1 bytes; a string such as
        ``"1GiB"`` is parsed. For all-to-allv a ``p x p`` traffic matrix in bytes (at
        least 1 byte in all; numbers: a matrix of booleans, text or complex numbers is a
        TypeError). A fractional size is costed as given; where NCCL counts
        whole bytes (its point-to-point protocol plan) it is read at its ceiling.
        The number 0 (or an all-to-allv matrix with no byte between distinct ranks: zeros,
        or bytes on the diagonal only, each rank's copy to itself, which no schedule moves,
        as an all-to-all's own block) is an empty operation: 0 s where
        the runtime launches nothing for it (``"ideal"``; NCCL's collectives from 2.20.3,
        whose ``taskAppend`` discards an empty one, and its all-to-all from 2.28.3, one
        ``ncclAlltoAll`` call; ``"symmetric-memory"``'s collectives),
        its ``algorithm`` and ``transport`` ``"none"``, ``size`` the matrix's total over
        its ranks (as for any all-to-allv), and the reason in ``candidates``; a NotApplicableError naming why where the runtime
        launches something the model does not cost (NCCL before 2.20.3; NCCL's sends and
        receives of 0 bytes, so send-recv, all-to-allv, and all-to-all before 2.28.3):
        :func:`analysis._runtime_cost.empty_operation`.
    algorithm : str, default "auto"
        One of :data:`analysis.ALGORITHMS` for ``op``, or ``"auto"``: the runtime's
        choice (``"ideal"``: the fastest schedule, and with ``transport=None`` also every
        algorithm over RDMA for every step, candidates ``"<algorithm> over rdma"``;
        ``"nccl"``: NCCL's tuner; ``candidates`` lists what was tried).
    runtime : str or fabric.Runtime, default "nccl"
        The software that runs it (:mod:`fabric._runtime`): ``"nccl"`` (NCCL's
        algorithms, protocols and latencies), ``"symmetric-memory"`` (one-sided
        load/store kernels), or ``"ideal"`` (the model's schedules with no software costs: path latency,
        transport overhead and link bandwidth only). ``None`` is the default
        (:func:`default_runtime`), as for ``transport`` and for the ``runtime`` of
        :func:`analysis.decode_step` and :func:`analysis.moe_exchange`.
    ranks : sequence, optional
        The group, as ranks or chip names, in rank order. Default: every endpoint.
    transport : str or Transport, optional
        ``"loadstore"`` or ``"rdma"`` for every step; default: per step, load/store
        inside a load/store domain and RDMA across NICs (module docstring).
    overlap : bool, default True
        Reduction overlaps the transfer within a step (NCCL); False adds them
        (the closed forms' model).
    ops_per_launch : int, default 1
        Operations launched together (``ncclGroupStart/End``, nccl-tests ``-m``):
        they share the runtime's base latency (see :mod:`analysis._runtime_cost`).
    devices_per_process : int, default 1
        Devices one process drives from one thread (nccl-tests ``-g N``; at most the
        operation's ranks). NCCL's
        ``ncclGroupEnd`` launches on them one after another on the host
        (``src/group.cc`` ``doLaunches``: per device ``ncclLaunchPrepare``, the kernel
        launch, ``ncclLaunchFinish``; the host never waits for the GPU), inside
        nccl-tests' timed loop, which issues ``iterations`` launches back to back and
        synchronises once at the end (``src/common.cu`` ``BenchTime``/``startColl``).
        So the host's ``N x host_launch`` per iteration overlaps the GPU's previous
        iterations: see :func:`host_launch_delay`, which gives what this adds to the
        time (and to ``fixed``) against one process per device; nothing under
        ``"ideal"`` or a runtime that states no ``host_launch``.
    iterations : int, default 20
        Timed iterations of that loop (nccl-tests ``-n``; its default is 20): the
        pipeline's fill and drain are spread over them. Used only with
        ``devices_per_process > 1``.
    blocking : bool, default False
        nccl-tests ``-z 1``: the host waits for each iteration's kernels before it
        launches the next (``startColl``'s ``testStreamSynchronize``), so none of the
        ``N`` host launches overlaps the GPU: ``N x host_launch / ops_per_launch`` is
        added (also for ``N = 1``; see :func:`host_launch_delay`).

    Returns
    -------
    CollectiveCost
        With ``lower_bound`` <= ``time`` always (see :func:`_lower_bound`). On a degraded
        fabric (``fabric.without``) the time is never below the intact fabric's where the
        runtime runs the same schedule and protocol and, under NCCL, the same communicator
        channel count (:func:`communicator_channels`: NCCL's own search can give a GPU
        that lost an NVLink more channels, and then be faster, as NCCL is; or fewer, and
        then a candidate whose protocol runs at the tuner's cap, LL's ``llMaxBw``, can be
        faster too, its network whole-step sends shared by fewer channels per NIC: 2 x 8
        H100 with 3 of chip0's 18 lanes failed, NCCL 2.19.4, all-gather 16 MiB, ring/LL
        437.2 -> 431.9 us on 32 -> 16 channels, while the pick, ring/LL128, slows). The
        pick can also change to a candidate that is faster than the intact fabric's pick,
        where the tuner had passed it over (it chooses at its own graphs' speeds and does not
        see every cost the time carries: 4 GPUs of an HGX B200 with 4 of chip0's lanes to
        ``sw0`` failed, NCCL 2.18.5 (Hopper's tables), all-reduce 4 MiB: the intact
        fabric's in-switch 42.63 us, the degraded one's ring/LL128 42.45 us, the intact
        ring/LL128's own 34.87 us). Under NCCL the
        time is not monotone in size, as NCCL's own is not: it can fall where NCCL's
        scheduler puts fewer bytes on its busiest channel (a channel step) and where the
        tuner switches algorithm or protocol, since the tuner does not see every cost the
        time carries (the network's whole-step sends across nodes: on ``cluster-128`` an
        all-reduce of 207,225 B runs double-binary-tree/LL in 113.6 us, one of 207,226 B
        double-binary-tree/LL128 in 108.7 us).

    Raises
    ------
    SpecError
        Unknown operation or algorithm.
    NotApplicableError
        The algorithm does not apply (power-of-two only, no reducing switch, a
        symmetric-memory algorithm over RDMA, one the runtime does not run, ...), or the
        runtime launches a kernel for an operation of 0 bytes (not costed), naming why.
    NodeError
        A rank not in the fabric, not a chip, or listed twice.
    RoutingError
        A transport the fabric cannot carry for this group, or ranks the failures split
        into groups with no path between them (an island or a chip cut off alone), named,
        under every runtime and even when no byte would cross.
    SpecError, TypeError
        A size that is not a number of bytes >= 1 (or 0, above) or is above 2**63 - 1 (an
        int64); an unknown transport or runtime.

    Examples
    --------
    >>> import topologies
    >>> r = cost(topologies.build("dgx-h100"), "all-reduce", "1GiB", runtime="ideal")
    >>> r.algorithm, r.transport, round(r.busbw / 1e9)
    ('in-switch', 'loadstore', 484)
    >>> r = cost(topologies.build("dgx-h100"), "all-reduce", "1KiB")
    >>> r.runtime, r.algorithm, r.protocol, round(r.time * 1e6, 1)
    ('nccl', 'ring', 'LL', 15.2)
    >>> r4 = cost(topologies.build("dgx-h100"), "all-reduce", "1KiB", devices_per_process=4)
    >>> round((r4.time - r.time) * 1e6, 2)   # 4 x 3.0 us of host launches against 15.2 us
    0.45
    >>> r0 = cost(topologies.build("dgx-h100"), "all-reduce", 0)    # NCCL discards it
    >>> r0.time, r0.algorithm, r0.candidates[0][1][:38]
    (0.0, 'none', 'NCCL discards an empty collective befo')
    """
    fabric = fabric_arg(fabric)
    op = normalize_op(op)
    algorithm = normalize_algorithm(algorithm)
    rt = get_runtime(default_runtime() if runtime is None else runtime)
    ops_per_launch, devices_per_process, iterations = (check_count(v, name, 1) for name, v in (
        ("ops_per_launch", ops_per_launch), ("devices_per_process", devices_per_process),
        ("iterations", iterations)))
    overlap, blocking = flag_of(overlap, "overlap"), flag_of(blocking, "blocking")
    nodes, idx = resolve_ranks(fabric, ranks)
    p = len(nodes)
    if devices_per_process > p:
        raise SpecError(f"devices_per_process={show_value(devices_per_process)} exceeds the "
                        f"operation's {p} ranks (one process drives some of the ranks taking part)")
    M = _traffic_arg(op, nbytes, p)
    empty = _is_empty(op, nbytes, M)
    n = 0.0
    if M is not None:
        # plans are built from the matrix's shape (normalised), so scaled copies share
        # one routing; n is its total
        n = float(M.sum())
        _check_max_bytes(n, "the traffic matrix's total")
        M = None if empty else M / _traffic_total(M)
    elif not empty:
        n = read_nbytes(nbytes)
    tr = _transport_spec(transport)
    _check_carry(fabric, tr, idx)
    if algorithm != "auto" and algorithm not in ALGORITHMS[op]:
        schedule(op, algorithm, p)  # raises the right error for an unknown name
    if empty:
        return _empty_cost(fabric, op, p, rt, n)
    if rt.kind != "ideal" and p > 1:
        res = _runtime_result(fabric, op, n, M, nodes, idx, tr, rt, algorithm, overlap,
                              int(ops_per_launch), int(devices_per_process))
        return _with_host_launches(res, rt, int(devices_per_process), int(ops_per_launch),
                                   int(iterations), bool(blocking))
    if algorithm == "auto":
        tried, best = [], None
        for a, (how, t_r) in ((a, x) for x in _auto_transports(fabric, tr, idx)
                              for a in ALGORITHMS[op]):
            label = f"{a} over {how}" if how else a
            try:
                plan = _get_plan(fabric, op, a, nodes, idx, t_r, M)
            except NotApplicableError as e:
                tried.append((label, str(e)))
                continue
            t, steps, chunks = _evaluate(fabric, plan, n, overlap)
            tried.append((label, t))
            if best is None or t < best[0]:
                best = (t, plan, steps, chunks)
        if best is None:
            raise NotApplicableError(f"no algorithm for {op} applies: "
                                     + "; ".join(f"{a}: {why}" for a, why in tried))
        t, plan, steps, chunks = best
        candidates = tuple(tried)
    else:
        plan = _get_plan(fabric, op, algorithm, nodes, idx, tr, M)
        t, steps, chunks = _evaluate(fabric, plan, n, overlap)
        candidates = ()
    res = _result(fabric, op, n, M, p, plan, t, steps, chunks, candidates, idx, overlap)
    if rt.kind != "ideal":
        # one rank: nothing to move or synchronise under any runtime, but the result
        # says which runtime was asked for (it said "ideal")
        res = dataclasses.replace(res, runtime=rt.name)
    return res


# -- runtimes: the software between the schedule and the measurement ----------------------


@dataclasses.dataclass(frozen=True)
class _Transfer:
    """What a runtime needs from a schedule on the fabric (see analysis._runtime_cost)."""

    per_byte: float        # seconds per byte of size: busiest links, steps summed
    step_loadstore: float  # longest step latency + overhead over load/store (0 if none)
    step_message: float    # the same over RDMA
    phases: int            # steps that must follow one another (pipelined: 1)
    plan: object
    fabric: object = None
    overlap: bool = True
    steps_loadstore: int = 0   # sequential steps over load/store (repeats counted)
    steps_message: int = 0     # the same over RDMA

    def data_time(self, n):
        """Seconds of moving ``n`` bytes beyond the first step's latency.

        Non-pipelined: ``n`` times :attr:`per_byte`. Pipelined: the ``ideal``
        runtime's pipeline (chunks chosen as :func:`_chunks` does) less one step latency, so the
        fill and drain of the pipeline are kept.
        """
        if self.plan.pipeline is None or not self.plan.steps:
            return n * self.per_byte
        t, _steps, _chunks = _evaluate(self.fabric, self.plan, n, self.overlap)
        st = self.plan.steps[0]
        return max(n * self.per_byte, t - (st.latency + st.overhead))


class _GroupView:
    """A rank group on a fabric, as a runtime sees it (consumed by analysis._runtime_cost)."""

    def __init__(self, fabric, op, nodes, idx, tr, M, overlap):
        self.fabric, self.op, self.nodes, self.idx = fabric, op, nodes, idx
        self.tr, self.M, self.overlap = tr, M, overlap
        self.p = len(nodes)
        # what a runtime works out for this view during one cost (analysis._runtime_cost:
        # each p2p message's plan), shared by the release's candidates and their retiming
        self.runtime_memo = {}
        # devices one process drives (cost()'s devices_per_process: ranks k N .. k N + N - 1
        # share one): before 2.23 NCCL wrote a same-process peer's Simple p2p directly
        # (analysis._runtime_cost.p2p_drain)
        self.process_devices = 1
        # the group's facts depend on the fabric and the ranks only: computed once, cached
        key = ("group", idx.tobytes())
        c = fabric_memo(fabric, __name__)
        if key not in c:
            self._facts()
            c[key] = {k: getattr(self, k) for k in (
                "n_nodes", "_node_ranks", "ppn", "_dom", "arch", "intra_hw", "nics_per_node",
                "nic_bandwidth", "nic_link_bandwidth", "lanes", "arm_host", "channels",
                "simple_tree", "p2p_lanes", "_switch", "_nodes_switched", "nic_pci_techs")}
        for k, v in c[key].items():
            setattr(self, k, v)

    def _facts(self):
        fabric, idx = self.fabric, self.idx
        dom = _loadstore_domain(fabric)[idx]
        labels, counts = np.unique(dom, return_counts=True)
        counts.flags.writeable = False      # shared by every view of the group (node_ranks)
        self.n_nodes, self._node_ranks = len(labels), counts
        self.ppn = self.p / self.n_nodes
        dom.flags.writeable = False         # shared likewise (node_labels)
        self._dom = dom
        techs = set(_edge_techs(fabric).tolist())
        self.arch = runtime_arch(fabric)
        self.intra_hw = "pci" if techs & {"pcie5-x16"} and not techs - {
            "pcie5-x16"} - MESSAGE_TECHNOLOGIES else "nvlink"
        # computed once per fabric and group: __init__ caches these facts
        lanes, nic_bw, nics = self._links()
        self.nics_per_node = nics
        self.nic_bandwidth = nic_bw
        # NCCL's p2p channels (analysis._runtime_cost.p2p_protocol): the NVLink lanes of the
        # least-connected rank, one NIC's link rate before the RDMA header, and whether the
        # host is Arm (Grace: the GB200 / GB300 superchips)
        self.lanes = lanes
        self.p2p_lanes = self._p2p_lanes()
        rdma = get_transport("rdma")
        self.nic_link_bandwidth = nic_bw * (rdma.max_payload + rdma.header) / rdma.max_payload
        # a Grace superchip's host (fabric.ChipSpec.grace_gpus: the one record of it)
        self.arm_host = bool(getattr(getattr(fabric, "chip", None), "grace_gpus", 0))
        G = fabric.graph
        self.nic_pci_techs = tuple(sorted({
            str(d.get("tech")) for r in self.nodes for v, d in G[r].items()
            if G.nodes[v].get("kind") == "nic"}))
        self._switch = self._nvlink_switch()
        self._nodes_switched = all(
            all(G.nodes[v].get("kind") == "switch" and str(d.get("tech", "")).startswith("nvlink")
                for v, d in G[r].items() if G.nodes[v].get("kind") != "nic"
                and d.get("tech") not in MESSAGE_TECHNOLOGIES) for r in self.nodes)
        # the newest release's count (what a Result reports without a release);
        # analysis._runtime_cost takes the release's own (nccl_channels)
        self.channels = self.nccl_channels(get_runtime("nccl"))
        self.simple_tree = self._simple_tree()

    def nccl_channels(self, rt):
        """NCCL's collective channels (``comm->nChannels``) for the group under the NCCL
        release ``rt`` (its search constants, MAXCHANNELS): one node whose GPUs meet in NVLink
        switches, NCCL's ring graph search (analysis._runtime_cost.nccl_switch_channels);
        several nodes of such (or single-GPU) nodes with NICs, its search over the NICs
        (analysis._runtime_cost.nccl_net_channels); otherwise 2 x the least-connected rank's
        lanes (one node) or 2 x the NICs per node."""
        key = ("nccl-channels", self.idx.tobytes(), rt.version, rt.max_channels)
        c = fabric_memo(self.fabric, __name__)
        if key not in c:
            c[key] = self._nccl_channels(rt)
        return c[key]

    def nic_pci_bw(self, rt):
        """NCCL's bandwidth (B/s) of the PCIe links the group's NICs hang off under release
        ``rt`` (``rt.search`` ``("pci_bw", tech)``, the slowest), or None where one is not
        known (not a limit)."""
        pci = [rt.search.get(("pci_bw", t)) for t in self.nic_pci_techs]
        return min(pci) if pci and all(pci) else None

    @property
    def channels_searched(self):
        """Whether :meth:`nccl_channels` is NCCL's own graph search on the group as it stands
        (one node of GPUs in NVLink switches; nodes of such, every GPU with an NVLink left, or
        of single GPUs, searched over their NICs), not the ``2 x lanes`` fallback. A GPU left
        with no NVLink in a node of several is not searched here (NCCL would route it over
        PCIe, which the model's search does not follow)."""
        return self._switch is not None or bool(
            self.n_nodes > 1 and self.nics_per_node and self._nodes_switched
            and (self.lanes > 0 or self.ppn <= 1))

    def _nccl_channels(self, rt):
        if self._switch is not None:
            # NCCL 2.20-2.27 raise the ring channels to NVLS's where NVLS runs (connect.cc
            # ncclTopoPostset; absent in 2.18-2.19 and from 2.28.3); NVLS needs
            # nvls_min_gpus GPUs in the node (nvls.cc)
            nvls = rt.nvls[("channels", self.arch)] if (
                self._switch and self.ppn >= rt.factors["nvls_min_gpus"]
                and rt.factors["nvls_raises_ring"]) else False
            return _runtime_cost.nccl_switch_channels(rt, self.lanes, self.arch, nvls)
        if self.n_nodes > 1 and self.nics_per_node and self._nodes_switched:
            out = _runtime_cost.nccl_net_postset(rt, self.arch,
                                                 *_runtime_cost.nccl_view_net_graph(rt, self))
            return max(out, self._nvls_nodes_channels(rt))
        search = self.lanes if self.n_nodes == 1 else max(1, self.nics_per_node)
        return max(1, min(rt.max_channels, 2 * int(search)))

    def _nvls_nodes_channels(self, rt):
        """The channels NCCL 2.20-2.27 raise a multi-node ring to where NVLS runs
        (``src/graph/connect.cc`` ncclTopoPostset, ``factors["nvls_raises_ring"]``), else 0.
        NVLS runs across nodes where every node's GPUs meet in reducing switches (the
        in-switch transfer exists), every node holds at least ``nvls_min_gpus`` of the group
        (``src/transport/nvls.cc`` ``ncclNvlsInit``: off at ``gpuCount <= 2`` before 2.28.7)
        and the release enables NVLS over several hosts (``nvls_multi_host``); the count is a
        multi-node communicator's NCCL_NVLS_NCHANNELS (``rt.nvls`` ``("channels_nodes",
        arch)``: 16 on Hopper; 32 on Blackwell from 2.25)."""
        f = rt.factors
        if not (f["nvls_raises_ring"] and f["nvls_multi_host"]):
            return 0
        if int(self.node_ranks().min()) < f["nvls_min_gpus"]:
            return 0
        try:
            t, _q = self.node_transfer("in-switch", "all-reduce")
        except NotApplicableError:
            return 0
        if not t.per_byte > 0:
            return 0
        return min(rt.max_channels, int(rt.nvls[("channels_nodes", self.arch)]))

    def _nvlink_switch(self):
        """None unless the group is one node of two or more ranks whose every scale-up link
        is an NVLink into a switch (NCCL's NVSwitch ring search applies); then whether every
        such switch reduces in the network (NVLS)."""
        if self.n_nodes != 1 or self.p < 2:
            return None
        G = self.fabric.graph
        reduces = True
        for r in self.nodes:
            up = [(v, d) for v, d in G[r].items() if G.nodes[v].get("kind") != "nic"
                  and d.get("tech") not in MESSAGE_TECHNOLOGIES]
            if not up or any(G.nodes[v].get("kind") != "switch"
                             or not str(d.get("tech", "")).startswith("nvlink") for v, d in up):
                return None
            reduces = reduces and all(G.nodes[v].get("reduction") for v, _d in up)
        return reduces

    def _simple_tree(self):
        """Whether NCCL's tree graph search ends on its simple TREE pattern here (the tuner
        then takes x ``factors["tree_simple_pattern"]`` of the tree's bandwidth).

        NVIDIA/nccl v2.27.3-1 ``src/graph/search.cc`` ``ncclTopoCompute``: the tree search
        starts with the BALANCED_TREE pattern, whose channel leaves the node through the NIC
        it entered by from the chain's FIRST and SECOND GPU (``ncclTopoSearchRecGpu``: the
        same NET id, half the bandwidth from each); when that fails at a path type, sm90+
        retries the same path type with the simple TREE pattern (one GPU to and from the
        NIC) before raising the path type, and a node with one GPU is TREE outright.
        A NIC is reached at the first path type (PIX) by the GPUs linked to it and by those
        the fabric records under its PCIe switch (a NIC's ``pix``: rail ``pix=2``, two GPUs
        and two NICs per switch as on some B200 boards), each while its own PCIe link to
        that switch stands.
        ``src/init.cc``: ``maxTreePattern`` is the largest pattern over the ranks (TREE 3 >
        BALANCED_TREE 1). One node: no NIC is in NCCL's system (``ncclTopoTrimSystem``), the
        balanced chain is found, False. Several nodes: True when some node has one rank of the
        group or no NIC that two or more of its ranks reach directly (a NIC per GPU, a chip's
        own network port: the second GPU reaches the first's NIC only over another GPU, a
        worse path type); a node whose NIC two of its GPUs share is taken to find the
        balanced tree (an assumption: its channels complete there).

        On a Grace superchip (GB200 / GB300) the NICs hang off the Grace CPU, and NCCL turns
        every GPU's PHB path to such a NIC into PATH_P2C when the GPU reaches that CPU over
        C2C (``src/graph/paths.cc`` ``ncclTopoComputePaths`` l.669-681 at v2.27.3-1; PXN over
        C2C off by default until 2.27, ``NCCL_PXN_C2C`` 0, l.609; on from 2.28.3, l.620, where
        it lets another Grace's GPU reach the NIC through a peer GPU at PATH_PXN, still a
        worse type than the PATH_P2C the search starts at, ``src/graph/topo.h``): the two
        GPUs of one Grace reach its NICs at the path type the search starts at, another
        Grace's GPUs do not. The fabric
        records that pairing as the NICs' ``pix`` (:func:`topologies.rail_optimized` takes
        the chip's ``grace_gpus`` as its default), so the rule above reads it: a node whose
        ranks include both GPUs of one Grace finds the balanced tree, one whose ranks sit on
        different Graces (ranks 0 and 2 of a four-GPU tray) the simple TREE."""
        if self.n_nodes <= 1:
            return False
        labels, counts = np.unique(self._dom, return_counts=True)
        G = self.fabric.graph
        dom = dict(zip(self.nodes, self._dom.tolist()))
        shared = set()
        for n in self.nodes:
            for v in G[n]:
                if G.nodes[v].get("kind") != "nic":
                    continue
                peers = {w for w in G[v] if w in dom and dom[w] == dom[n]}
                # GPUs under the NIC's PCIe switch (a fabric's ``pix``, e.g. rail pix=2)
                # reach it at PIX too, while their own PCIe link into that switch stands
                group = G.nodes[v].get("pix", ())
                peers |= {w for w in group if w in dom and dom[w] == dom[n] and any(
                    G.nodes[u].get("kind") == "nic" and w in G.nodes[u].get("pix", ())
                    for u in G[w])}
                if len(peers) >= 2:
                    shared.add(dom[n])
        return any(c == 1 or lab not in shared for lab, c in zip(labels.tolist(), counts.tolist()))

    def _p2p_lanes(self):
        """The NVLink lanes of NCCL's path between the two ranks of one node that have the
        fewest, over every such pair (NCCL's per-peer p2p channels are 2 x this,
        analysis._runtime_cost.p2p_channels); 0 without two ranks in one node.

        NVIDIA/nccl v2.28.7-1 ``src/graph/paths.cc`` ``ncclTopoGetNchannels``: a peer in the
        node on a ``PATH_NVL`` path gets ``2 x max(1, path bw / NVLink bw)`` channels, any other
        path type 2; ``ncclTopoComputeP2pChannels`` takes the least over every local GPU and
        peer. The path's bandwidth is its narrowest link: a direct link's lanes; through NVLink
        switches (NCCL's topology holds a node's switches as one NVSwitch node, each GPU
        joined to it by all its NVLinks) the smaller of the two GPUs' lanes; a path through
        another GPU (a torus or mesh hop) is not ``PATH_NVL`` and counts as 1 (2 channels)."""
        G = self.fabric.graph
        up, switch_only = {}, {}
        for r in self.nodes:
            links = [(v, d) for v, d in G[r].items() if G.nodes[v].get("kind") != "nic"
                     and d.get("tech") not in MESSAGE_TECHNOLOGIES]
            up[r] = sum(d.get("lanes", 1) for _v, d in links)
            switch_only[r] = bool(links) and all(G.nodes[v].get("kind") == "switch"
                                                 for v, _d in links)
        # the least over the pairs inside each node, read from each rank's own links rather
        # than pair by pair (a pass over every pair took seconds on a node of 1,024 ranks):
        # a pair joined by a link has its lanes; any other pair has min(up) when both reach
        # only switches, else 1, and the least min(up) over such pairs is the least up of a
        # switch-only rank with a switch-only partner it has no link to
        least = []
        for keep in self._node_members():
            ranks = [self.nodes[i] for i in keep]
            if len(ranks) < 2:
                continue
            switched = {r for r in ranks if switch_only[r]}
            members = set(ranks)
            for a in ranks:
                linked = [(b, d) for b, d in G[a].items()
                          if b in members and d.get("tech") not in MESSAGE_TECHNOLOGIES]
                least.extend(d.get("lanes", 1) for _b, d in linked)
                in_switched = sum(b in switched for b, _d in linked)
                unlinked_switched = len(switched) - (a in switched) - in_switched
                unlinked_other = len(ranks) - len(switched) - (a not in switched) - (
                    len(linked) - in_switched)
                if unlinked_other or (unlinked_switched and a not in switched):
                    least.append(1)
                if unlinked_switched and a in switched:
                    least.append(up[a])
        return min(least, default=None) or 0

    def _links(self):
        """(scale-up lanes of the group's least-connected rank, bandwidth of one NIC's network
        link, NICs per node). The least over the ranks, so that the answer does not depend on
        which rank is listed first on a degraded fabric."""
        G = self.fabric.graph
        lanes = min(sum(d.get("lanes", 1) for v, d in G[r].items()
                        if G.nodes[v].get("kind") != "nic"
                        and d.get("tech") not in MESSAGE_TECHNOLOGIES) for r in self.nodes)
        rdma = get_transport("rdma")
        payload = rdma.max_payload / (rdma.max_payload + rdma.header)
        nic_bw, nics = math.inf, set()
        for n in self.nodes:
            for v, d in G[n].items():
                if G.nodes[v].get("kind") == "nic":
                    nics.add(v)
                    out = [e["bandwidth"] for w, e in G[v].items() if w != n]
                    if out:
                        nic_bw = min(nic_bw, sum(out) * payload)
                elif d.get("tech") in MESSAGE_TECHNOLOGIES:
                    # a chip cabled straight into the network: the port is its NIC
                    nics.add((n, v))
                    nic_bw = min(nic_bw, d["bandwidth"] * payload)
        per_node = max(1, round(len(nics) / self.n_nodes)) if nics else 0
        # no bandwidth where no NIC has a link past it (a user graph's stub NIC): 0, not inf
        return lanes, (nic_bw if nics and math.isfinite(nic_bw) else 0.0), per_node

    def ring_channels(self):
        """NCCL's channels on the direct rings the multi-ring schedule runs: one search
        channel per NVLink lane the rings use at a rank (the least over the ranks), twice as
        many execution channels (NVIDIA/nccl issue 1041, the rule of ``channels``); None when
        the rings are not made of direct chip-to-chip links. Lanes the rings do not use (a
        failed neighbour's, another dimension's) carry no channel, so a link the rings never
        used changes nothing."""
        key = ("ring-channels", self.idx.tobytes())
        c = fabric_memo(self.fabric, __name__)
        if key not in c:
            c[key] = self._ring_channels()
        return c[key]

    def _ring_channels(self):
        from ._schedules_multi import ring_search
        G, nodes = self.fabric.graph, self.nodes
        try:
            rings = ring_search(self.fabric, nodes)
        except (NotApplicableError, KeyError, ValueError):
            return None
        used = [set() for _ in nodes]
        for ring in rings:
            if len(ring) < 2:
                return None
            for a, b in zip(ring, np.roll(ring, -1)):
                a, b = int(a), int(b)
                if not G.has_edge(nodes[a], nodes[b]):
                    return None  # rings through switches: the lane rule stands
                used[a].add(b)
                used[b].add(a)
        lanes = min(sum(G.edges[nodes[a], nodes[b]].get("lanes", 1) for b in peers)
                    for a, peers in enumerate(used))
        return 2 * lanes if lanes else None

    def ring_hops(self, algorithm):
        """Links one ring of a ring schedule crosses, on average over its rings by their share
        of the bytes: ``p x sum(fraction x hops)`` over the flows of one step (routed paths: a
        step through a switch or another chip counts each link). ``algorithm`` is ``"ring"``
        (the rank-order ring, or its per-host rotations) or ``"multi-ring"`` (the rings
        :func:`analysis.ring_search` finds). What NCCL's graph comparison counts as ``nHops``
        (src/graph/search.cc ``ncclTopoFollowPath`` adds each hop's ``path->count``), per
        ring; see analysis._runtime_cost ``_ring_graph``.

        >>> import topologies
        >>> f = topologies.build("mesh:4x4")
        >>> v = _GroupView(f, "all-reduce", tuple(f.endpoints[:4]), f.endpoint_indices[:4],
        ...                None, None, True)
        >>> round(v.ring_hops("ring"), 9)     # chip0-1-2-3 and back along the row: 3 + 3
        6.0
        """
        if algorithm not in ("ring", "multi-ring"):
            raise SpecError(f"ring_hops: {algorithm!r} is not a ring schedule")
        key = ("ring-hops", algorithm, self.idx.tobytes())
        c = fabric_memo(self.fabric, __name__)
        if key not in c:
            step = schedule("all-gather", algorithm, self.p, fabric=self.fabric,
                            nodes=self.nodes).steps[0]
            hops = self.fabric.router.hops(self.idx[step.src], self.idx[step.dst])
            c[key] = self.p * float(np.dot(step.fraction, hops))
        return c[key]

    def transfer(self, algorithm, op=None, nodes=None, idx=None, traffic=None):
        """The schedule's transfer over the group (``traffic``: an all-to-allv's matrix in
        place of the group's own, normalised to a total of 1)."""
        op = op or self.op
        nodes = self.nodes if nodes is None else nodes
        idx = self.idx if idx is None else idx
        M = (self.M if traffic is None else traffic) if op == "all-to-allv" else None
        plan = _get_plan(self.fabric, op, algorithm, nodes, idx, self.tr, M)
        if plan.pipeline is not None and plan.steps:
            st = plan.steps[0]
            per = max(st.beta, st.gamma) if self.overlap else st.beta + st.gamma
            phases = 1
        else:
            per = sum(st.repeat * (max(st.beta, st.gamma) if self.overlap else
                                   st.beta + st.gamma) for st in plan.steps)
            phases = len(plan.steps)
        ls = [st.latency + st.overhead for st in plan.steps
              if st.link >= 0 and st.transport == "loadstore"]
        msg = [st.latency + st.overhead for st in plan.steps
               if st.link >= 0 and st.transport != "loadstore"]
        n_ls = n_msg = 0
        for st in plan.steps:
            if st.link < 0:
                continue
            reps = (plan.pipeline + 1) if plan.pipeline is not None else st.repeat
            if st.transport == "loadstore":
                n_ls += reps
            else:
                n_msg += reps
        return _Transfer(per_byte=per, step_loadstore=max(ls, default=0.0),
                         step_message=max(msg, default=0.0), phases=max(1, phases), plan=plan,
                         fabric=self.fabric, overlap=self.overlap, steps_loadstore=n_ls,
                         steps_message=n_msg)

    def node_transfer(self, algorithm, op=None):
        """``(transfer, ranks)``: :meth:`transfer` over the ranks of each node alone, the
        slowest node's (largest seconds per byte; a degraded node is the one that sets the
        pace), with that node's rank count. The least-populated node decides among equals."""
        best = None
        single = False
        for keep in self._node_members():
            if len(keep) == 1:
                # a one-rank node has no step: its plan is the same empty one whichever rank
                # it holds (schedule's p = 1), so every later one ties the first and cannot
                # displace it (a 16,000-node fat-tree's ring made 16,000 such plans)
                if single:
                    continue
                single = True
            t = self.transfer(algorithm, op, tuple(self.nodes[i] for i in keep), self.idx[keep])
            key = (t.per_byte, -len(keep))
            if best is None or key > best[0]:
                best = (key, t, len(keep))
        return best[1], best[2]

    def _node_members(self):
        """The positions in the group of each node's ranks, nodes in label order, ranks in
        group order: ``[np.flatnonzero(self._dom == label) for label in
        np.unique(self._dom)]``, in one sort rather than one pass over the group per node."""
        order = np.argsort(self._dom, kind="stable")
        return np.split(order, np.flatnonzero(np.diff(self._dom[order])) + 1)

    def intact_view(self):
        """The same group on the intact fabric (``fabric.intact``) of a degraded one, or None
        on an intact fabric: what a runtime's per-channel speed is bounded by."""
        intact = getattr(self.fabric, "intact", None)
        if intact is None:
            return None
        idx = np.array([intact.node_index[n] for n in self.nodes], dtype=np.int64)
        return _GroupView(intact, self.op, self.nodes, idx, self.tr, self.M, self.overlap)

    def node_nets(self):
        """``(ranks, NICs)`` of each node (load/store domain) of the group: its ranks and the
        NICs next to them that keep a link past them (a chip's own message-only link counts as
        its NIC), what NCCL's ring graph search on that node sees (``nccl_view_net_graph``)."""
        key = ("node-nets", self.idx.tobytes())
        c = fabric_memo(self.fabric, __name__)
        if key not in c:
            G = self.fabric.graph
            out = []
            for keep in self._node_members():
                nics = set()
                for i in keep:
                    r = self.nodes[i]
                    for v, d in G[r].items():
                        if d.get("tech") in MESSAGE_TECHNOLOGIES:
                            nics.add((r, v))
                        elif G.nodes[v].get("kind") == "nic" and any(
                                G.nodes[w].get("kind") != "chip" for w in G[v]):
                            nics.add(v)
                out.append((len(keep), len(nics)))
            c[key] = tuple(out)
        return c[key]

    def node_ranks(self):
        """How many ranks the group has in each node (load/store domain), a read-only array
        (one of the group's facts, found once: a runtime asks ~10 times a cost)."""
        return self._node_ranks

    def node_labels(self):
        """Each rank's node (load/store domain) label, in group order, a read-only array:
        ranks of one node share a label (what NCCL's p2p schedule groups by,
        ``analysis._runtime_cost.p2p_schedule``)."""
        return self._dom

    def same_node(self):
        """A ``p x p`` boolean array: whether ranks ``i`` and ``j`` of the group are in one
        node (load/store domain), the diagonal included."""
        return self._dom[:, None] == self._dom[None, :]

    def peer_trip(self):
        """Seconds of one peer round trip inside the group: :func:`peer_round_trip` (the
        largest there-and-back path between two of its ranks in one load/store domain) plus
        the remote side of a peer access (:func:`fabric.peer_access_latency`, nvbandwidth's
        peer pointer chase less its path). What a release fence (the acknowledgement of stores
        into peers) or the first byte of a load from a peer costs; the MoE exchange model
        prices the same round trip. 0 for a group without two ranks in one domain.
        """
        path = _peer_round_trip(self.fabric, self.idx)
        return path + peer_access_latency(self.arch)[0] if path > 0 else 0.0


def _peer_round_trip(fabric, idx):
    key = ("peer-round-trip", np.asarray(idx).tobytes())
    c = fabric_memo(fabric, __name__)
    if key not in c:
        dom = np.asarray(_loadstore_domain(fabric))[idx]
        same = (dom[:, None] == dom[None, :]) & ~np.eye(len(idx), dtype=bool)
        a, b = np.nonzero(same)
        if not len(a):
            c[key] = 0.0
        else:
            src, dst = idx[a], idx[b]
            router = fabric.router
            c[key] = float(np.max(router.latency(src, dst) + router.latency(dst, src)))
    return c[key]


def peer_round_trip(fabric, ranks=None):
    """Seconds of the longest there-and-back path between two of ``ranks`` (default: every
    rank) that share a load/store domain (:attr:`fabric.Fabric.loadstore_domains`), from the
    fabric's router: the path part of a peer round trip, so a degraded fabric's detours
    lengthen it. A load's or a store acknowledgement's whole round trip adds the remote
    access, :func:`fabric.peer_access_latency`; the symmetric-memory runtime's fences and
    late pulls and the MoE exchange model's release fences and pulled rounds are that sum.
    0.0 when no two ranks share a domain.

    Parameters
    ----------
    fabric : fabric.Fabric
    ranks : sequence of int or str, optional
        The chips (ranks or names); default every rank.

    Returns
    -------
    float
        Seconds, there and back.

    Examples
    --------
    >>> import topologies
    >>> round(peer_round_trip(topologies.build("dgx-h100")) * 1e9)   # 2 x (2 links x 150 ns)
    600
    """
    fabric = fabric_arg(fabric)
    _nodes, idx = resolve_ranks(fabric, ranks)
    return _peer_round_trip(fabric, np.asarray(idx))


def communicator_channels(fabric, ranks=None, runtime="nccl"):
    """``(collective, p2p)``: the channel counts of NCCL's communicator over ``ranks`` (default:
    every rank) under an NCCL release: ``nChannels`` (its ring graph search, capped by
    MAXCHANNELS: analysis._runtime_cost ``comm_channels``) and ``p2pnChannels`` (that rounded
    up to a power of two). Not :attr:`CollectiveCost.channels`, which is what one operation
    of one size uses (an all-to-all's per-peer channels, a small message's few).

    What a degraded fabric's comparison under NCCL needs: a failure never makes NCCL faster
    where it runs the same schedule, protocol AND communicator channel count. NCCL's own
    search can give a GPU that lost an NVLink MORE channels (gb200-nvl72: 18 lanes find 16
    channels at 45 GB/s, 17 lanes 17 at 40, doubled: 32 -> 34; p2p 32 -> 64), and what
    follows from the count (point-to-point batches, the split over channels) can then be
    faster, as in NCCL itself.

    Parameters
    ----------
    fabric : fabric.Fabric
    ranks : sequence of int or str, optional
        The communicator's chips (ranks or names); default every rank.
    runtime : str or fabric.Runtime
        An NCCL runtime (``"nccl"``, ``"nccl@2.21.5"``).

    Returns
    -------
    tuple of int
        ``(nChannels, p2pnChannels)``.

    Examples
    --------
    >>> import topologies
    >>> f = topologies.build("gb200-nvl72")
    >>> communicator_channels(f), communicator_channels(f.without(links=[("chip0", "sw0")]))
    ((32, 32), (34, 64))
    """
    fabric = fabric_arg(fabric)
    rt = get_runtime(runtime)
    if rt.name.split("@")[0] != "nccl":
        raise SpecError(f"communicator_channels: {rt.name!r} is not an NCCL release "
                         "(runtime 'nccl' or 'nccl@<version>')")
    nodes, idx = resolve_ranks(fabric, ranks)   # refuses ranks the failures split
    view = _GroupView(fabric, "all-reduce", nodes, idx, None, None, True)
    return (_runtime_cost.comm_channels(rt, view), _runtime_cost.p2p_channels(rt, view)[0])


def further_barrier(fabric, ranks=None, runtime="symmetric-memory"):
    """Seconds of one flag barrier of ``runtime``'s one-sided kernels over ``ranks`` beyond
    the first (which the kernel floor holds): :func:`analysis._runtime_cost.flag_barrier`,
    for callers outside the runtime model (the MoE exchange model's further barriers).

    >>> import topologies
    >>> round(further_barrier(topologies.build("hgx-b200")) * 1e9, 1)
    1440.5
    """
    nodes, idx = resolve_ranks(fabric, ranks)   # refuses ranks the failures split
    view = _GroupView(fabric, "all-gather", nodes, idx, None, None, True)
    return _runtime_cost.flag_barrier(get_runtime(runtime), view)


def _runtime_result(fabric, op, n, M, nodes, idx, tr, rt, algorithm, overlap, ops, devices=1):
    view = _GroupView(fabric, op, nodes, idx, tr, M, overlap)
    view.process_devices = devices
    if rt.kind == "library":
        tried, why = _runtime_cost.nccl_candidates(rt, view, op, n, algorithm, ops)
    else:
        tried, why = _runtime_cost.symmetric_candidates(rt, view, op, n, algorithm, ops)
    if not tried:
        raise NotApplicableError(f"the {rt.name} runtime runs nothing for {op} here: "
                                 + "; ".join(f"{a}: {w}" for a, w in why))
    best = min(tried, key=lambda c: (c.choice, c.time))
    if rt.kind == "library" and rt.timing is not None:
        # an older release chooses with its own tuner tables; the run it chose is timed by
        # the sourced later revisions of the prediction of it (fabric.PREDICTION_REVISIONS)
        tried, best = _runtime_cost.retime(rt.timing, view, op, n, algorithm, ops, tried, best)
    plan_op = best.plan_op or op
    label = None
    try:
        plan = _get_plan(fabric, plan_op, best.schedule, nodes, idx, tr,
                         M if op == "all-to-allv" else None)
    except (NotApplicableError, RoutingError) as e:
        label = best.schedule if isinstance(e, RoutingError) else None
        # a composition the schedules do not hold as one (NVLS-tree on fabrics without a
        # host split), or a flat schedule's pair NCCL's own graph never sends between (a GPU
        # that lost its NIC link: NCCL's tree and NVLS-tree chains enter and leave a node at
        # GPUs local to a NIC, src/graph/search.cc; the candidate's time routed no such
        # pair): the ring's steps stand for the breakdown
        plan = _get_plan(fabric, "all-gather" if op in ("broadcast", "reduce") else op,
                         "ring", nodes, idx, tr, None)
    _t, steps, chunks = _evaluate(fabric, plan, n, overlap)
    candidates = tuple((c.label, c.time) for c in tried) + tuple(why)
    res = _result(fabric, op, n, M, len(nodes), plan, best.time, steps, chunks,
                  candidates if algorithm == "auto" else (), idx, overlap,
                  in_network=best.library == "nvls-tree")
    return dataclasses.replace(res, runtime=rt.name, protocol=best.protocol or None,
                               channels=best.channels or None, fixed=best.fixed,
                               algorithm=label or res.algorithm)


def host_launch_delay(gpu_time, host_launch, devices, iterations=20, blocking=False):
    """Seconds one process driving ``devices`` devices adds to a timed loop's iteration.

    nccl-tests times ``iterations`` iterations issued back to back and synchronises
    once at the end (``src/common.cu`` ``BenchTime``: timer, the loop of
    ``startColl``, ``completeColl``, elapsed / iterations). In each iteration the
    one host thread launches on its ``N`` devices in turn (NCCL ``src/group.cc``
    ``doLaunches``; the default ``NCCL_LAUNCH_MODE=PARALLEL`` has no intra-process
    barrier), ``c = host_launch`` each, and never waits for the GPU: stream order is
    kept with CUDA events, and the work FIFO's back-pressure (``src/enqueue.cc``
    ``waitWorkFifoAvailable``) holds the host only when the GPU is behind. A
    collective needs every device's kernel, so iteration ``k`` ends at
    ``E_k = max(k h, E_{k-1}) + g`` with ``h = N c`` and ``g`` the GPU time of one
    iteration; the loop reports ``E_n / n = max(h, g) + min(h, g) / n``: host and GPU
    overlap, with one fill or drain spread over the ``n`` iterations. ``gpu_time`` is
    the time of a run with one process per device (its ``h = c``), so what ``N``
    devices add is the difference of the two:
    ``[max(Nc, g) + min(Nc, g) / n] - [max(c, g) + min(c, g) / n]``.

    With ``blocking`` (nccl-tests ``-z 1``) ``startColl`` waits for the streams
    (``testStreamSynchronize``) before the next iteration's launches, so host and GPU
    take turns: ``E_n / n = N c + g``, and what it adds is ``N c`` (for one device too).

    Parameters
    ----------
    gpu_time : float
        Seconds of GPU time of one iteration (a collective: :func:`cost`'s time
        times the operations launched together), >= 0.
    host_launch : float
        Seconds of host time to launch on one device (``Runtime.host_launch``), >= 0.
    devices : int
        Devices the one process drives (nccl-tests ``-g``), >= 1.
    iterations : int, default 20
        Timed iterations (nccl-tests ``-n``), >= 1.
    blocking : bool, default False
        nccl-tests ``-z 1``: the host synchronises after every iteration.

    Returns
    -------
    float
        Seconds per iteration, >= 0; 0 for one device (not blocking). Never more
        than the ``(N - 1) x host_launch`` of launches that did not overlap at all, and
        at least the host's excess ``N x host_launch - gpu_time`` once it is host-bound;
        ``N x host_launch`` when blocking.

    Raises
    ------
    TypeError
        ``gpu_time`` or ``host_launch`` not a real number (a bool included), ``blocking``
        not a bool.
    fabric.SpecError
        (a ``ValueError``) ``gpu_time`` or ``host_launch`` negative or not finite,
        ``devices`` or ``iterations`` not an integer >= 1.

    Examples
    --------
    >>> round(host_launch_delay(23e-6, 3e-6, 8, 40) * 1e6, 3)   # host-bound: 24 us > 23
    1.5
    >>> round(host_launch_delay(100e-6, 3e-6, 8, 40) * 1e6, 3)  # GPU-bound: 7 x 3 / 40
    0.525
    >>> host_launch_delay(23e-6, 3e-6, 1)
    0.0
    >>> round(host_launch_delay(350e-6, 3e-6, 4, blocking=True) * 1e6, 3)   # -z 1
    12.0
    """
    g = check_number("gpu_time", gpu_time, 0, " seconds")
    c = check_number("host_launch", host_launch, 0, " seconds")
    devices = check_count(devices, "devices", 1)
    n = check_count(iterations, "iterations", 1)
    blocking = flag_of(blocking, "blocking")
    if blocking:
        return devices * c
    return max(0.0, _timed_loop(devices * c, g, n) - _timed_loop(c, g, n)) if devices > 1 else 0.0


def _timed_loop(h, g, n):
    """Seconds per iteration nccl-tests reports for ``n`` eager iterations that never wait:
    ``h`` of host time and ``g`` of GPU time each, host and GPU overlapping (iteration
    ``k`` ends at ``E_k = max(k h, E_{k-1}) + g``, so ``E_n / n = max(h, g) + min(h, g) / n``;
    :func:`host_launch_delay`)."""
    return max(h, g) + min(h, g) / n


def _with_host_launches(res, rt, devices, ops, iterations, blocking):
    """``res`` with the host launches of one process driving ``devices`` devices added
    (see :func:`cost` and :func:`host_launch_delay`)."""
    if (devices <= 1 and not blocking) or rt.host_launch <= 0:
        return res
    extra = host_launch_delay(res.time * ops, rt.host_launch, devices, iterations,
                              blocking) / ops
    if extra <= 0:
        return res
    t = res.time + extra
    algbw, busbw = _bandwidths(res.op, res.size, res.ranks, t)
    return dataclasses.replace(res, time=t, algbw=algbw, busbw=busbw, fixed=res.fixed + extra)


def _bandwidths(op, size, p, t):
    """(algbw, busbw) in bytes/s of ``size`` bytes per rank moved in ``t`` seconds by ``p``
    ranks (nccl-tests' convention; one rank's busbw is 0, as nccl-tests reports)."""
    algbw = size / t if t > 0 else math.inf
    factor = busbw_factor(op, p)
    return algbw, (algbw * factor if factor > 0 else 0.0)


def _result(fabric, op, n, M, p, plan, t, steps, chunks, candidates, idx, overlap,
            in_network=False):
    # the bound with in-network reduction where the algorithm reduces in the switches: the
    # in-switch schedule, or a runtime's NVLS-tree (NVLS inside each node; analysis._runtime_cost)
    in_network = in_network or plan.algorithm == "in-switch"
    lb = _lower_bound(fabric, op, n, idx, plan, in_network, M, overlap)
    size = n / p if M is not None else n
    algbw, busbw = _bandwidths(op, size, p, t)
    big = max(steps, key=lambda s: s.transfer * s.repeat, default=None)
    return CollectiveCost(fabric=fabric.name, op=op, size=size, ranks=p, algorithm=plan.algorithm,
                          transport=plan.transport, time=t, algbw=algbw,
                          busbw=busbw, steps=steps,
                          bottleneck=big.bottleneck if big is not None else None, lower_bound=lb,
                          chunks=chunks, candidates=candidates)


@functools.cache
def default_runtime():
    """The runtime :func:`cost` uses when none is given, read from its signature (so a
    caption or a parameter table that names it follows the code), once a process: a
    signature does not change, and reading it was ~4% of a closed-loop decode step.

    >>> default_runtime()
    'nccl'
    """
    import inspect

    return inspect.signature(cost).parameters["runtime"].default


def resolved_runtime_name(name):
    """How output names runtime ``name``: the modelled runtime's own name, followed by the
    name asked when that is a version standing for another tag (:func:`fabric.release_tag`),
    so a reader sees both what was asked and what ran.

    >>> resolved_runtime_name("nccl@2.28.5"), resolved_runtime_name("nccl@2.21.5")
    ('nccl@2.28.3 (for nccl@2.28.5)', 'nccl@2.21.5')
    """
    from fabric import runtime as _runtime

    used = _runtime(name).name
    return used if used == str(name).strip().lower() else f"{used} (for {name})"


def cost_sizes(fabric, op, sizes, algorithm="auto", runtime=None, ranks=None, transport=None,
               *, overlap=True, ops_per_launch=1, devices_per_process=1, iterations=20,
               blocking=False):
    """:func:`cost` at many sizes; the routing work is done once and shared.

    Link loads scale linearly with the size, so each algorithm's schedule is
    routed once per fabric, group and transport (cached on the fabric) and
    every size only rescales it.

    Parameters
    ----------
    sizes : sequence of float or str
        Bytes per rank, one result each (as :func:`cost` reads ``nbytes``); not a set (its
        order is its hashes').
    fabric, op, algorithm, runtime, ranks, transport, overlap, ops_per_launch
        As for :func:`cost`.
    devices_per_process, iterations, blocking
        As for :func:`cost`.

    Returns
    -------
    list of CollectiveCost
        One per size, in order.

    Examples
    --------
    >>> import topologies
    >>> f = topologies.build("dgx-h100")
    >>> [round(r.time * 1e6, 1) for r in cost_sizes(f, "all-gather", [2**20, 2**30],
    ...                                             runtime="ideal")]
    [2.8, 2534.1]
    """
    return [cost(fabric, op, s, algorithm=algorithm, runtime=runtime, ranks=ranks,
                 transport=transport, overlap=overlap, ops_per_launch=ops_per_launch,
                 devices_per_process=devices_per_process, iterations=iterations,
                 blocking=blocking)
            # a sequence: 5 or None was Python's "not iterable", a set costed in hash order
            for s in sequence_of(sizes, "sizes", "sizes (bytes, or text such as '1KiB')")]
