"""A collective's time under a communication runtime: schedules on the fabric, plus software.

The schedule (:mod:`analysis._schedules`) evaluated on the fabric gives, per
algorithm, the seconds per byte its busiest links need and the latency of one
step over load/store and over RDMA. A runtime (:mod:`fabric._runtime`) turns
that into a time: what it launches, how it synchronises each step, which
protocol carries the bytes and at what efficiency, how many channels share the
work. This module holds the two non-trivial evaluations:

``nccl``
    NCCL's own tuner model (``src/graph/tuning.cc`` ``ncclTopoTuneModel`` and
    ``ncclTopoGetAlgoTime``; ``src/enqueue.cc`` ``topoGetAlgoInfo``), with its
    graph bandwidths taken from the fabric instead of NCCL's topology search:

    * bus bandwidth of an algorithm: ring and NVLS from their schedules on the
      fabric (ring: ``f / t`` with ``t`` the schedule's seconds per byte and
      ``f`` NCCL's ``nsteps / nRanks``); tree from the ring's graph bandwidth as
      NCCL does; NVLS-tree as NCCL's ``min(intra, inter, nc x perChMaxNVLSTreeBw)``
      with ``intra`` the in-switch schedule over one node and ``inter`` the NICs
      of a node;
    * per protocol NCCL's refinements: LL ``min(llMaxBw, busBw / 2)``, LL128
      ``min(0.92 busBw, nc x perChMaxRingLL128Bw)``, tree ``x 0.92`` capped per
      channel, tree LL ``/ 3.8``, tree LL128 ``x 7/9`` (one node) or ``120/128``, tree
      ``x 0.85`` where NCCL's tree graph is its simple TREE pattern (from 2.26.2;
      :attr:`analysis._collectives._GroupView.simple_tree`);
    * latency: ``baseLatency + steps x hwLatency`` per algorithm as NCCL writes
      it (ring ``2(p-1)`` steps for all-reduce with the network ones at the
      network latency, tree ``2((ppn-1) intra + log2(nodes) inter)``, NVLS one
      25 us step, NVLS-tree ``intra + 2 log2(nodes) inter``). A step is never
      faster than the fabric's own step (path latency + transport overhead); in the
      TIME (not the tuner's choice) a step between two GPUs over load/store also pays
      the GPU side of its handoff (:func:`step_handoff`), so a ring or tree step is
      never faster than one way along the path plus that;
    * the tuner's choice: the (algorithm, protocol) pair with the least modelled
      time, with NCCL's tree correction factors and the multi-node ring plateau;
    * channels: the chosen pair then runs on fewer channels while ``n < nc x
      threads x threshold`` (``topoGetAlgoInfo``), and its transfer is the bytes of
      the busiest of them at one channel's bandwidth, with the bytes split as the
      release's scheduler splits them (:func:`nccl_channel_split`: cells from 2.22,
      aligned shares in 2.20-2.21, even before). This and the per-step latencies are
      what make the mid-size ramp. It is not monotone in size, and that is NCCL's own
      behaviour: one byte past ``nc x threads x threshold`` NCCL adds a channel and the
      busiest channel's bytes fall (nvl72, 8 ranks, 2.30.7: 57 KB on one channel takes
      23.8 us, 72 KB on two 20.7 us); the tuner (``ncclTopoGetAlgoTime``) prices every
      size at the full channel count, so it never sees this;
    * NVLS all-reduce in one node runs, like the ring, at its busiest channel's bytes
      (:func:`nvls_channel_split`: 2.18-2.19 give channel ``b`` the ``b``-th block of
      heads x chunk of each loop inside the kernel, so a message below one loop leaves
      channels idle; from 2.20 the scheduler's split) and pays its pipeline fill (two of
      that channel's iterations through NCCL's three warp groups, :func:`_nvls_fill`),
      neither of which NCCL's tuner costs: in the time, not in the choice;
    * ``ops_per_launch`` operations grouped into one launch (``ncclGroupStart`` /
      ``ncclGroupEnd``, nccl-tests ``-m``) share the base latency; grouped point-to-point
      operations run as further work batches of one kernel on their channels, each the
      batch chain counted in NCCL's compiled code (:func:`p2p_batch_chain`) and its step.

    An algorithm NCCL does not ship (asked for by name) is costed as NCCL would
    run it: the ring's base and per-step latencies per protocol over the
    schedule's steps, and its transfer at the protocol's efficiency.

    Point-to-point (``send-recv``) and all-to-all run as NCCL runs them: grouped
    sends and receives, the smallest kernel time (``kernel_floor``) plus one
    step's latency (NCCL's ring step of the message's protocol: a Simple step's flag round
    and fence cost 3.4 us on NVLink against LL's 0.6) plus the schedule's transfer, LL (at
    half the bandwidth) where NCCL
    picks it: per message to one peer, at most ``p2p["ll_threshold"]`` (16 KiB) per p2p
    channel, with the release's rule and NCCL's p2p channel counts, never the collective
    channels (:func:`p2p_protocol`). Rounds that queue on a channel (:func:`p2p_batches`) and
    grouped operations are further work batches: each pays :func:`p2p_batch_chain` (a lower
    bound counted in NCCL 2.29.2's SendRecv kernel) and its step.

``symmetric-memory``
    One-sided kernels over load/store, built as the published kernels are: a
    Lamport one-shot (FlashInfer / TensorRT-LLM: the pushed data is its own flag)
    costs ``kernel_floor`` + the bytes; a bulk kernel (NCCL ``src/device/symmetric``
    two-shot and multimem, FlashInfer's two-shot) costs
    ``kernel_floor`` + one further flag barrier (:func:`flag_barrier`: one store-and-spin
    handoff, the path one way plus :func:`step_handoff`; more for a schedule of more
    phases) + a release fence after stores
    into peers (one peer round trip) + the bytes at the links' bulk rate, starting
    one peer round trip late when it loads from peers (:func:`symmetric_candidates`).
    Needs every rank in one load/store domain.

Both return the candidates they tried; :func:`analysis.cost` picks and reports.
"""

import dataclasses
import functools
import math

from fabric import EXCHANGE_LATENCY, PROTOCOLS, SpecError, peer_access_latency, transport
from fabric._units import unknown_fault

from ._schedules import NotApplicableError

__all__ = []

#: NCCL algorithm -> the schedule it runs (the layer below the runtime).
NCCL_SCHEDULE = {"ring": "ring", "tree": "double-binary-tree", "nvls": "in-switch",
                 "nvls-tree": "hierarchical", "p2p": None}

#: Operations NCCL runs as grouped sends and receives (point-to-point tasks).
P2P_OPS = ("send-recv", "all-to-all", "all-to-allv")


def empty_operation(rt, op):
    """What the runtime ``rt`` does with ``op`` of 0 bytes over several ranks: ``(launches,
    why)``. Where nothing launches, :func:`analysis.cost` answers 0 s and reports ``why``;
    where something does, it refuses with ``why`` (a NotApplicableError).

    One rule: 0 s exactly where the runtime's source returns without a launch; where
    something runs, the model refuses rather than guess an empty kernel's time.

    * ``ideal``: the schedules with no software: nothing to move, nothing runs.
    * NCCL: an empty collective is discarded from 2.20.3 (``src/enqueue.cc`` ``taskAppend``:
      ``rt.factors["empty_discard"]``); before, it is a task and its kernel launches. A
      0-byte send or receive is a task like any other in every release, one channel's work
      (``p2pTaskAppend`` / ``addP2pToPlan``), so send-recv and all-to-allv of 0 bytes launch
      (NCCL has no all-to-allv call: it is grouped sends and receives). The model's
      all-to-all is the call nccl-tests' ``alltoall_perf`` makes (its sizes are that
      test's): one ``ncclAlltoAll`` from NCCL 2.28.3 (``rt.factors["alltoall_call"]``),
      which ``taskAppend`` discards at count 0 as a collective, before expanding it into
      sends and receives; before 2.28.3, grouped 0-byte sends and receives, which launch.
    * ``symmetric-memory``: NCCL's symmetric kernels (``src/device/symmetric``, 2.27 on)
      are chosen from the tasks ``taskAppend`` queued (``ncclPrepareTasks``:
      ``ncclMakeSymmetricTaskList``), after it has discarded an empty collective: its
      collectives of 0 bytes run nothing; its point-to-point and all-to-all
      kernels are the project's one-sided schedules, with no source for an empty call.
    * An engine's kernels (``vllm-custom-allreduce``, ``torch-symm-mem``): no source read
      says what they do with an empty tensor.

    >>> import fabric
    >>> empty_operation(fabric.runtime("nccl"), "all-reduce")[0]
    False
    >>> launches, why = empty_operation(fabric.runtime("nccl@2.19.4"), "all-reduce")
    >>> launches, why[:46]
    (True, 'NCCL 2.19.4 launches an empty collective: it i')
    """
    if rt.kind == "ideal":
        return False, "the ideal runtime: no software, and no byte to move"
    if rt.kind == "library":
        if op == "all-to-all" and rt.factors["alltoall_call"]:
            return False, ("NCCL discards an empty ncclAlltoAll before expanding it into "
                           "sends and receives (src/enqueue.cc taskAppend, 2.28.3 on; "
                           "nccl-tests' alltoall_perf makes that call): nothing launches")
        if op in P2P_OPS:
            call = (f"NCCL {rt.version} has no ncclAlltoAll (2.28.3 on): an all-to-all is "
                    "grouped sends and receives; " if op == "all-to-all" else "")
            return True, (f"{call}NCCL queues a 0-byte send and receive as tasks like any "
                          "other and launches them (src/enqueue.cc p2pTaskAppend / "
                          "addP2pToPlan: one channel's work); the model does not cost an "
                          "empty kernel")
        if not rt.factors["empty_discard"]:
            return True, (f"NCCL {rt.version} launches an empty collective: it is a task "
                          "and its kernel runs (src/enqueue.cc taskAppend discards one from "
                          "2.20.3); the model does not cost an empty kernel")
        return False, ("NCCL discards an empty collective before making a task "
                       "(src/enqueue.cc taskAppend, 2.20.3 on): nothing launches")
    if rt.name == "symmetric-memory" and op not in P2P_OPS:
        return False, ("NCCL's collective call discards an empty collective (src/enqueue.cc "
                       "taskAppend) before its symmetric kernels are chosen: nothing launches")
    return True, (f"no source read says what the {rt.name} runtime's kernels do with an "
                  f"empty {op}; the model does not cost an empty kernel")



@dataclasses.dataclass(frozen=True)
class Candidate:
    """One (algorithm, protocol) a runtime could run, and its time.

    ``schedule`` is the analysis algorithm it runs; ``choice`` the time the
    runtime's own tuner compares (NCCL: before channels are trimmed). ``plan_op`` is
    the operation whose schedule stands for the steps when it is not the operation
    itself (NCCL's ring broadcast / reduce run along the all-gather ring).
    ``choice_fixed`` is the fixed part the tuner's ``choice`` carries where it is not the
    time's ``fixed`` (NCCL's ring and tree: the time's steps also pay their handoff,
    :func:`step_handoff`, which the tuner does not see); :attr:`tuner_fixed` reads it.
    """

    library: str
    schedule: str
    protocol: str
    time: float
    choice: float
    channels: int
    fixed: float        # seconds that do not depend on the size (launch + steps)
    plan_op: str = None
    choice_fixed: float = None

    @property
    def label(self):
        return f"{self.library}/{self.protocol}" if self.protocol else self.library

    @property
    def tuner_fixed(self):
        """The seconds of ``choice`` that do not depend on the size: ``choice_fixed``, else
        ``fixed``."""
        return self.fixed if self.choice_fixed is None else self.choice_fixed


def _log2i(x):
    return max(0, math.floor(math.log2(x))) if x >= 1 else 0


def _nodes_index(n_nodes):
    return 0 if n_nodes <= 1 else (1 if n_nodes == 2 else 2)


def _tree_correction(rt, proto, n, limit=23):
    """NCCL's ``treeCorrectionFactor[proto][log2i(n >> 6)]`` where ``0 <= log2i < limit``
    (``ncclTopoGetAlgoTime``: 23 for the tree, 24 for NVLS-tree), else 1."""
    log_size = _log2i(int(n) >> 6) if int(n) >> 6 >= 1 else -1
    row = rt.tree_correction[proto]
    if 0 <= log_size < limit:
        return row[log_size]
    return 1.0


def _channels_used(rt, proto, nc, n, ring_ranks=1):
    """NCCL's topoGetAlgoInfo: drop channels while nBytes < nc * nThreads * threshold."""
    nt = rt.threads[proto]
    thr = rt.thread_threshold[proto] * ring_ranks
    used = nc
    while used > 1 and n < used * nt * thr:
        used -= 1
    return used


def _up(x, k):
    """``x`` rounded up to a multiple of ``k`` (NCCL's ``divUp(x, k) * k``)."""
    return -(-x // k) * k


def nccl_channel_split(rt, op, proto, n, p, used, nc):
    """``(busiest, channels)``: the bytes of one rank's count on the busiest of the channels
    NCCL splits a ring or tree operation over, and how many channels carry any.

    ``used`` is the channel count NCCL picked for the size (:func:`_channels_used`), ``nc``
    the communicator's (the scheduler's last channel). The count is the operation's per-rank
    count in bytes: ``n`` (all-reduce, broadcast, reduce) or ``n / p`` (all-gather and
    reduce-scatter, whose ``n`` is the gathered buffer). By the release's rule (``rt.split``,
    NVIDIA/nccl ``src/enqueue.cc``):

    * 0 (2.18-2.19): even, ``count / used`` (the kernel splits the count; see the source);
    * 1 (2.20-2.21, ``addCBDCollToPlan``): every channel takes ``divUp(count, used)``
      rounded up to 16 B, then to the protocol's alignment, until the count runs out;
    * 2 (2.22 on, ``scheduleCollTasksToPlan``): cells of ``cellSize`` bytes, a first channel
      of ``divUp(trafficPerChannel, trafficPerCell)`` cells, as many middle channels of as
      many, the rest on the last; the cells' overhang comes off the last channel.

    So the busiest channel carries at least ``count / used`` bytes, and at a channel step
    (``used`` up by one) its share falls: NCCL's time on a channel-bound size drops there
    (the sawtooth of :func:`_nccl_ring`'s time, which this makes NCCL's own).

    >>> from fabric import runtime
    >>> nccl_channel_split(runtime("nccl"), "all-reduce", "LL", 72000, 8, 2, 24)
    (36864, 2)
    >>> nccl_channel_split(runtime("nccl@2.21.5"), "all-reduce", "LL", 72000, 8, 2, 24)
    (36864, 2)
    >>> nccl_channel_split(runtime("nccl@2.19.3"), "all-reduce", "LL", 72000, 8, 2, 24)
    (36000.0, 2)
    """
    gather = op in ("all-gather", "reduce-scatter")
    count = n / p if gather else n
    if used <= 1:
        return count, 1
    q = rt.split
    rule = q["rule"]
    if rule == 0:
        return count / used, used
    c = math.ceil(count)
    if rule == 1:
        align = q[("align", proto)] * (rt.threads[proto] if proto == "LL" else (
            rt.threads[proto] // 32 if proto == "LL128" else 1))
        per = _up(_up(_up(c, used) // used, q["byte_align"]), align)
        return min(c, per), _up(c, per) // per
    tpb = 2 if op == "all-reduce" else (p if gather else 1)
    if proto == "LL":
        tpb *= q["ll_traffic"]
    least = q["min_traffic"]
    traffic = c * tpb
    if q["task_floor"]:
        traffic = max(least, traffic)
    per_channel = (_up(traffic // used, 16) if q["round16"] else max(least, traffic // used))
    cell = q["cell"] or _up(_up(least, tpb) // tpb, 16)
    cells = _up(c, cell) // cell
    cell_traffic = cell * tpb
    per = min(cells, _up(per_channel, cell_traffic) // cell_traffic)
    lo = min(cells, (_up(per_channel, cell_traffic) // cell_traffic) if q["lo_ceil"]
             else per_channel // cell_traffic)
    mid, hi = divmod(cells - lo, per)
    if nc < (lo > 0) + mid + (hi > 0):
        mid = nc - 2
        per = (cells - lo) // (mid + 1)
        hi = per + (cells - lo) % (mid + 1)
    if hi == 0 and mid:
        hi, mid = per, mid - 1
    if lo == 0:
        if mid == 0:
            lo, hi = hi, 0
        else:
            lo, mid = per, mid - 1
    lo_b, hi_b = lo * cell, hi * cell
    if hi_b:
        hi_b -= cells * cell - c
    else:
        lo_b -= cells * cell - c
    return max(lo_b, per * cell if mid else 0, hi_b), (lo_b > 0) + mid + (hi > 0)


def _share_channels(rt, op, proto, n, p, used, nc):
    """``(effective, carrying)`` channels of NCCL's split (:func:`nccl_channel_split`): the
    count over the busiest channel's bytes (the channel count an even split would need to
    take as long), and the channels that carry any bytes."""
    busiest, carrying = nccl_channel_split(rt, op, proto, n, p, used, nc)
    count = n / p if op in ("all-gather", "reduce-scatter") else n
    c = count if rt.split["rule"] == 0 or used <= 1 else math.ceil(count)
    return (c / busiest if busiest > 0 else used), carrying


# -- NCCL --------------------------------------------------------------------------------


def comm_channels(rt, view):
    """The group's channels under the release ``rt`` (its own search constants), capped by
    its MAXCHANNELS (:meth:`analysis._collectives._GroupView.nccl_channels`)."""
    return max(1, min(view.nccl_channels(rt), rt.max_channels))


def _ring_busbw(rt, view, proto, B, nc, op="all-reduce"):
    arch, idx = view.arch, _nodes_index(view.n_nodes)
    f = rt.factors
    if proto == "LL":
        key = (arch, idx) if view.n_nodes == 1 else ("x86", idx)
        # releases before 2.21 took 1/4 (all-reduce, reduce, several nodes) or 1/3
        ll = f["ring_ll"] if view.n_nodes > 1 or op in ("all-reduce", "reduce") else (
            f["ring_ll_gather"])
        return min(rt.ll_max_bw[key], B * ll)
    if proto == "LL128":
        eff = f["ring_ll128"] if view.ppn >= 2 else f["ring_ll128_ppn1"]
        return min(B * eff, nc * rt.ring_ll128_bw[(arch, idx)])
    return B


def _tree_stages(rt, view, proto, nc):
    """The tuner's refinements of the tree's bus bandwidth, in NCCL's order: ``("x", f)``
    multiplies by ``f``, ``("cap", c)`` takes ``min(., c)`` (NVIDIA/nccl src/graph/tuning.cc
    ``ncclTopoTuneModel``): x .92 then ``nc x perChMaxTreeBw``; the protocol's (LL x 1/3.8 then
    ``llMaxBw``; LL128 x 7/9 on one node, 120/128 on more, then ``nc x perChMaxTreeLL128Bw``);
    x .85 for a simple TREE graph (from 2.26.2;
    :attr:`analysis._collectives._GroupView.simple_tree`). The one list of them:
    :func:`_tree_factor` is the product of the factors, :func:`_tree_busbw` the stages applied
    to a basis, so ``_tree_busbw(B) = min(B x _tree_factor, _tree_busbw(inf))``."""
    arch, idx = view.arch, _nodes_index(view.n_nodes)
    f = rt.factors
    out = [("x", f["tree_allreduce"]), ("cap", nc * rt.tree_bw[(arch, idx)])]
    if proto == "LL":
        key = (arch, idx) if view.n_nodes == 1 else ("x86", idx)
        out += [("x", f["tree_ll"]), ("cap", rt.ll_max_bw[key])]
    elif proto == "LL128":
        out += [("x", f["tree_ll128_one_node"] if view.n_nodes == 1 else f["tree_ll128_nodes"]),
                ("cap", nc * rt.tree_ll128_bw[(arch, idx)])]
    if view.simple_tree:
        # the tree graph is NCCL's simple TREE pattern (analysis._collectives._GroupView)
        out.append(("x", f["tree_simple_pattern"]))
    return out


def _tree_factor(rt, view, proto):
    """The tuner's multiplicative refinements of the tree's bus bandwidth, without its caps:
    the product of :func:`_tree_stages`' factors (x .92, the protocol's, x .85 for a simple
    TREE graph)."""
    out = 1.0
    for kind, v in _tree_stages(rt, view, proto, 1):
        if kind == "x":
            out *= v
    return out


def _tree_busbw(rt, view, proto, B, nc):
    """The tuner's tree bus bandwidth on ``nc`` channels from the basis ``B`` (B/s): the
    stages of :func:`_tree_stages` applied in order (``B = inf`` gives the caps alone)."""
    bw = B
    for kind, v in _tree_stages(rt, view, proto, nc):
        bw = bw * v if kind == "x" else min(bw, v)
    return bw


def _lat(rt, hw, algo, proto):
    return rt.hw_latency[(hw, algo, proto)]


def step_handoff(arch):
    """Seconds a ring or tree step between two GPUs over load/store spends beyond its path:
    the GPU side of the handoff, :func:`fabric.peer_access_latency` (a measured peer load's
    round trip less its links), charged once per step.

    What a step is, from NCCL's code (NVIDIA/nccl v2.25.1-1 ``src/device/prims_ll.h``
    ``LLGenericOp``, the same loop in every release modelled): the sending rank stores each
    16-byte line, data and flags, into the next rank's buffer (``storeLL``,
    ``st.volatile.global.v4``), and the next rank's threads spin on loads of their lines in
    their own memory until both flags match (``readLL``, ``ld.volatile.global.v4``); the next
    trip's loads wait behind that spin. Below a trip of the channel's threads per step (every
    LL step up to 4 KiB a channel) a step is one such handoff: the store's path one way (the
    fabric's step, :attr:`analysis._collectives._Transfer.step_loadstore`) and the remote
    write and the spin's read of it, the GPU side of a remote access that NCCL's tuner
    latency (``hwLat``, 0.6 us for LL on NVLink in every release, none for Blackwell) does
    not see. Assumption, named: the handoff pays the GPU side of a measured peer LOAD once
    (nvbandwidth's pointer chase: the remote access and both ends' work), for a store and
    the spin that reads it. Hopper 226.6 ns: 0.33 + 0.23 us stays under NCCL's 0.6, so no
    Hopper NVSwitch step moves; Blackwell 1110.5 ns (the measured round trip is twice
    Hopper's): a step of 1.44 us. Checked against a figure not used here: the least time of
    NCCL's symmetric 8-byte all-reduce, one push-and-poll handoff (NVIDIA/nccl issue 1940),
    about 2.3 us on Hopper and 3 us on B200, a difference of 0.7 us where this gives
    1.44 - 0.6 = 0.84 us.

    >>> round(step_handoff("blackwell") * 1e9, 1), round(step_handoff("hopper") * 1e9, 1)
    (1110.5, 226.6)
    """
    return peer_access_latency(arch)[0]


#: One-sided runtimes (by name) whose flag barrier claims each peer's flag by a
#: compare-and-swap the thread waits on, not by a store: PyTorch's ``sync_remote_blocks``
#: (``torch/csrc/distributed/c10d/symm_mem/CUDASymmetricMemory-inl.cuh``: ``put_signal`` loops
#: on a system-scope ``cas`` of the peer's signal-pad slot until it returns 0, then
#: ``wait_signal`` loops on a ``cas`` of the rank's own slot; :data:`fabric.TORCH_SYMM_MEM`).
CAS_BARRIERS = frozenset({"torch-symm-mem"})


def flag_barrier(rt, view):
    """Seconds of one flag barrier of a one-sided kernel over load/store, beyond the first (the
    kernel floor holds the launch and one barrier): each rank tells every peer it has arrived
    and waits until every peer has told it.

    Counted from the kernels' code, every barrier of every modelled kernel is a flag written
    into each peer and a spin on the rank's own flags: NCCL's ``ncclLsaBarrierSession``
    (NVIDIA/nccl v2.30.7-1 ``src/include/nccl_device/impl/lsa_barrier__funcs.h``: ``arrive``
    stores ``epoch + 1`` into each peer's inbox, or one ``multimem.red`` into the multicast
    inbox; ``wait`` spins on acquire loads of its own), FlashInfer's ``Barrier::sync``
    (``st.global.release.sys`` into each peer, ``ld.global.acquire.sys`` spin on its own) and
    vLLM's ``start_sync`` / ``end_sync`` (a volatile store into each peer's signal, "Latency =
    1 p2p write", and a spin on its own). The flags go one way at once, so a barrier is ONE
    handoff, priced by :func:`step_handoff`'s rule (the same as an NCCL LL step): the store's
    path one way, the largest between two ranks (the one-shot pattern's step: every rank
    stores into every peer), plus the GPU side of a peer load once. A runtime in
    :data:`CAS_BARRIERS` (PyTorch's) waits for the compare-and-swap on each peer's slot to
    return before it spins on its own: one peer round trip
    (:meth:`~analysis._collectives._GroupView.peer_trip`: the path there and back plus the same
    GPU side; assumption, named: a remote compare-and-swap pays a measured peer load's round
    trip); the peers' flags, sent at once, have landed by then.

    >>> import topologies
    >>> from fabric import runtime, TORCH_SYMM_MEM
    >>> from analysis._collectives import _GroupView
    >>> f = topologies.build("hgx-b200")
    >>> v = _GroupView(f, "all-reduce", tuple(f.endpoints), f.endpoint_indices, None, None, True)
    >>> round(flag_barrier(runtime("symmetric-memory"), v) * 1e9, 1)   # 300 + 30 + 1110.5
    1440.5
    >>> round(flag_barrier(TORCH_SYMM_MEM, v) * 1e9, 1)                # 2 x 300 + 1110.5
    1710.5
    """
    if rt.name in CAS_BARRIERS:
        return view.peer_trip()
    return view.transfer("one-shot", "all-gather").step_loadstore + step_handoff(view.arch)


def _node_step(view):
    """Across nodes, the load/store step inside the slowest node (its ranks' own ring,
    :meth:`analysis._collectives._GroupView.node_transfer`): the path of a chain's NVLink step,
    which the group's plan, whose every step also crosses the network, does not give on its
    own. 0 in one node (the plan's own step is the node's) and where a node has no load/store
    step."""
    if view.n_nodes == 1:
        return 0.0
    try:
        return view.node_transfer("ring", "all-reduce")[0].step_loadstore
    except NotApplicableError:
        return 0.0


def _intra_step(t, n_nodes, handoff=0.0):
    """The fabric's own step inside a node, that NCCL's per-step latency is floored by: the
    load/store step (plus ``handoff``, the GPU side of a step's handoff, in the time:
    :func:`step_handoff`), and in a one-node group whose steps go as messages
    (``transport="rdma"``) the message step too (across nodes the message step is the
    network's, priced apart)."""
    ls = t.step_loadstore + handoff if t.step_loadstore > 0 else 0.0
    return max(ls, t.step_message) if n_nodes == 1 else ls


def _per_channel_cap(view, B, nc, graph):
    """``B`` capped at ``nc`` channels of the intact fabric's per-channel bandwidth, where the
    channels are not NCCL's own search's.

    NCCL's bus bandwidth is channels x the graph's per-channel speed (``bwIntra``, found
    by the topology search from its highest speed down, src/graph/search.cc). Where the
    model's channel count is NCCL's search on the group as it stands (one node of GPUs in
    NVLink switches, or nodes searched over their NICs:
    :meth:`analysis._collectives._GroupView.channels_searched`), a degraded group is priced
    as the group built that way, as NCCL sees only the links that work: its search is not
    monotone in lanes (Hopper: 16 NVLinks 16 channels, 18 give 24), so a failure can cost
    channels faster than bandwidth and the per-channel rate rises with it (lead's decision,
    session 19). Elsewhere (the ``2 x lanes`` fallback) the model's per-channel bandwidth
    ``B / nc`` is held at the intact fabric's for the same group, where the channel count can
    fall further than the schedule's ``B`` (a failed link the ring does not use). ``graph``
    gives ``(B, nc)`` of a view."""
    if getattr(view, "channels_searched", False):
        return B
    iv = view.intact_view()
    if iv is None:
        return B
    try:
        B0, nc0 = graph(iv)
    except NotApplicableError:
        return B
    return min(B, nc * B0 / nc0)


def _ring_graph(rt, view, op):
    """``(schedule, transfer, B, nc)`` of NCCL's ring graph for the group (see _nccl_ring)."""
    sched_op = "all-gather" if op in ("broadcast", "reduce") else op
    sched, t = "ring", view.transfer("ring", sched_op)
    nc = comm_channels(rt, view)
    try:
        multi = view.transfer("multi-ring", sched_op)
        # channels on the lanes the rings found use (a failed link the rings avoid, or a
        # dimension they do not cross, leaves both B and the channels unchanged)
        rc = view.ring_channels()
        nc_multi = max(1, min(rc, rt.max_channels)) if rc else nc
        # equal within float rounding is a tie (ncclTopoCompareGraphs compares nChannels x
        # bwIntra; two schedules of the same loads can differ in the last bit of a sum)
        tie = abs(multi.per_byte - t.per_byte) <= 1e-9 * t.per_byte
        if (multi.per_byte < t.per_byte and not tie) or (
                tie and view.n_nodes == 1 and _fewer_hops(view, nc_multi, nc)):
            sched, t, nc = "multi-ring", multi, nc_multi
    except (NotApplicableError, KeyError):
        pass
    p = view.p
    f_graph = (2 * (p - 1) if op == "all-reduce" else p - 1) / p
    B = f_graph / t.per_byte if t.per_byte > 0 else math.inf
    return sched, t, B, nc


def _fewer_hops(view, nc_multi, nc_ring):
    """Whether the multi-ring graph crosses fewer links in all than the rank-order ring's, at
    a tie in bandwidth: NCCL's graph comparison (src/graph/search.cc
    ``ncclTopoCompareGraphs``, the same rule at every release 2.18.3-2.30.7) keeps the graph
    of higher ``nChannels x bwIntra``, and at equal bandwidth the one of fewer ``nHops`` (the
    links of every channel's ring steps), else the one it has. Each graph's channels spread
    over its rings as its bytes do, so its hops are ``channels x``
    :meth:`~analysis._collectives._GroupView.ring_hops` (equal within float rounding is a
    tie: the rank-order ring stays). Only inside one node: the search runs over one node's
    system (its GPUs, NVLinks, switches, NICs), and across nodes NCCL orders the rings by
    node (src/graph/connect.cc ``connectRings``), not by the network's hops, which it does
    not see."""
    multi = nc_multi * view.ring_hops("multi-ring")
    ring = nc_ring * view.ring_hops("ring")
    return multi < ring * (1 - 1e-9)


def _nccl_ring(rt, view, op, n, ops):
    """Ring candidates: (protocol, choice time, real time, channels, fixed)."""
    sched_op = "all-gather" if op in ("broadcast", "reduce") else op
    # NCCL's channels follow the rings its topology search finds (NVIDIA/nccl
    # src/graph/search.cc): ncclTopoSearchRecGpu completes one ring per channel, and
    # each hop reserves the graph's bwIntra on every link of its path (followPath),
    # rewinding when a link has too little left; after a ring closes, the search goes
    # on for the next channel with those links already charged (up to maxChannels),
    # and ncclTopoCompute retries with sameChannels = 0 when identical channels do not
    # fit. On a direct fabric the channels therefore land on different link-disjoint
    # rings: the multi-ring schedule (analysis.ring_search). Through switches it is
    # one ring per rank of a host, as before. The faster of the two is NCCL's graph.
    sched, t, B, nc = _ring_graph(rt, view, op)
    B = _per_channel_cap(view, B, nc, lambda v: _ring_graph(rt, v, op)[2:])
    p, nn = view.p, view.n_nodes
    nsteps = {"all-reduce": 2 * (p - 1), "all-gather": p - 1, "reduce-scatter": p - 1}.get(op, p)
    ratio = p / nsteps  # NCCL: ring algBw = busBw * nRanks / nsteps
    hw = view.intra_hw if nn == 1 else "net"
    handoff = step_handoff(view.arch)
    node_step = _node_step(view)
    out = []
    for proto in ("LL", "LL128", "Simple"):
        base = rt.base_latency[("ring", proto)]
        # per step: the tuner's (its choice) and the time's, whose load/store steps also pay
        # their handoff (step_handoff; NCCL's tuner does not see it)
        if op in ("broadcast", "reduce"):
            step = _lat(rt, hw, "tree" if proto == "Simple" else "ring", proto)
            steps = [nsteps * max(step, _intra_step(t, nn, h) if nn == 1 else t.step_message)
                     for h in (0.0, handoff)]
        else:
            inter_algo = "ring" if view.ppn > 1 or not rt.factors["ppn1_tree_net_latency"] else (
                "tree")
            inter = max(_lat(rt, "net", inter_algo, proto), t.step_message)
            n_inter = 0 if nn == 1 else (
                2 * (nn - 1) + rt.factors["ring_allreduce_extra_net_steps"]
                if op == "all-reduce" else nn - 1)
            n_inter = min(n_inter, nsteps)
            steps = []
            for h in (0.0, handoff):
                intra = max(_lat(rt, view.intra_hw, "ring", proto), _intra_step(t, nn, h),
                            node_step + h if h and node_step > 0 else 0.0)
                if nn > 1:
                    over = rt.factors["net_overhead"] * (rt.factors["net_overhead_simple"]
                                                        if proto == "Simple" else 1.0)
                    intra = max(intra, over)
                steps.append((nsteps - n_inter) * intra + n_inter * inter)
        lat, lat_time = (base / ops + s for s in steps)
        if (proto == "Simple" and nn > 1 and op == "all-reduce"
                and n / (nc * p) >= 64):
            lat *= rt.factors["ring_plateau"]
            lat_time *= rt.factors["ring_plateau"]
        bus = _ring_busbw(rt, view, proto, *_tuner_graph(rt, view, B, nc), op)
        choice = lat + n / (bus * ratio)
        used = _channels_used(rt, proto, nc, n, p if proto == "LL" else 1)
        # the bytes of the busiest channel bound the transfer (NCCL's split, which can leave
        # channels empty)
        picked = used
        eff, used = _share_channels(rt, op, proto, n, p, used, nc)
        real_bus = _ring_busbw(rt, view, proto, B * eff / nc, eff, op)
        # across nodes each network hop sends a step whole, in every protocol (the time
        # only; the tuner does not see it): one send per network hop on a chunk's path
        fill = _net_fill(rt, view, op, proto, n, picked, nc, nccl_ring_net_hops(
            op, tuple(int(k) for k in view.node_ranks()))) if nn > 1 else 0.0
        out.append(Candidate(library="ring", schedule=sched, protocol=proto,
                             time=lat_time + n / (real_bus * ratio) + fill, choice=choice,
                             channels=used, fixed=lat_time, choice_fixed=lat,
                             plan_op=None if sched_op == op else sched_op))
    return out


def _tree_graph(rt, view):
    """``(transfer, B, nc)`` of the tree's bandwidth basis for the group: NCCL's ring graph
    (:func:`_ring_graph`: the rank-order ring or, where faster, the multi-ring the topology
    search finds), whose bandwidth and channels the tuner's tree rests on."""
    _sched, t, B, nc = _ring_graph(rt, view, "all-reduce")
    return t, B, nc


def nccl_btree(nranks, rank):
    """``(parent, children)`` of ``rank`` in NCCL's binary tree over ``nranks`` (-1: none),
    transliterated from NVIDIA/nccl ``src/graph/trees.cc`` ``ncclGetBtree`` (the same logic at
    every tag v2.18.3-1 .. v2.30.7-1; later tags reformat it only).

    >>> [nccl_btree(3, r) for r in range(3)]
    [(-1, (2,)), (2, ()), (0, (1,))]
    """
    bit = 1
    while bit < nranks and not bit & rank:
        bit <<= 1
    if rank == 0:
        return -1, ((bit >> 1,) if nranks > 1 else ())
    up = (rank ^ bit) | (bit << 1)
    if up >= nranks:
        up = rank ^ bit
    low = bit >> 1
    down0 = -1 if low == 0 else rank - low
    down1 = -1 if low == 0 else rank + low
    while down1 >= nranks:
        down1 = -1 if low == 0 else rank + low
        low >>= 1
    return up, tuple(d for d in (down0, down1) if d != -1)


def nccl_dtree(nranks):
    """NCCL's double binary tree over ``nranks`` nodes: two lists of ``(parent, children)``
    per rank (``src/graph/trees.cc`` ``ncclGetDtree``: the binary tree, and its mirror for an
    even count or the tree shifted by one rank for an odd one).

    >>> nccl_dtree(2)
    ([(-1, (1,)), (0, ())], [(1, ()), (-1, (0,))])
    """
    t0 = [nccl_btree(nranks, r) for r in range(nranks)]
    if nranks % 2:
        def m(x):
            return -1 if x == -1 else (x + 1) % nranks
        src = [nccl_btree(nranks, (r - 1 + nranks) % nranks) for r in range(nranks)]
    else:
        def m(x):
            return -1 if x == -1 else nranks - 1 - x
        src = [nccl_btree(nranks, nranks - 1 - r) for r in range(nranks)]
    t1 = [(m(u), tuple(m(d) for d in ds)) for u, ds in src]
    return t0, t1


@functools.lru_cache(maxsize=1024)
def nccl_tree_net_share(n_nodes):
    """Bytes one node sends (and receives) across the network per byte all-reduced by NCCL's
    tree over ``n_nodes`` nodes, at the busiest node: each of the two trees carries half the
    data (``src/graph/connect.cc`` ``connectTrees``: channel c runs tree 0, channel c +
    nChannels tree 1); in a tree a node sends its share up to its parent and down to each
    child once (reduce up, broadcast down), and receives as much.

    >>> [nccl_tree_net_share(k) for k in (1, 2, 3, 4, 16)]
    [0.0, 1.0, 1.5, 2.0, 2.0]
    """
    if n_nodes <= 1:
        return 0.0
    trees = nccl_dtree(n_nodes)
    return max(sum(0.5 * ((u != -1) + len(ds)) for u, ds in (t[r] for t in trees))
               for r in range(n_nodes))


@functools.lru_cache(maxsize=1024)
def nccl_tree_net_depth(n_nodes):
    """The most network hops between a node and the root in NCCL's double binary tree over
    ``n_nodes`` nodes (:func:`nccl_dtree`: the deeper of the two trees), 0 for one node. A
    tree all-reduce's data goes up that many node-to-node hops and down as many.

    >>> [nccl_tree_net_depth(k) for k in (1, 2, 3, 4, 16)]
    [0, 1, 2, 2, 4]
    """
    if n_nodes <= 1:
        return 0
    best = 0
    for tree in nccl_dtree(n_nodes):
        for r in range(n_nodes):
            hops, x = 0, r
            while tree[x][0] != -1:
                x, hops = tree[x][0], hops + 1
            best = max(best, hops)
    return best


@functools.lru_cache(maxsize=1024)
def nccl_ring_net_hops(op, node_sizes):
    """The most node boundaries one chunk crosses on NCCL's ring over nodes of ``node_sizes``
    ranks (in ring order: NCCL links the nodes' rank chains in node order,
    ``src/graph/connect.cc`` ``connectRings``): a chunk of an all-reduce moves over 2(p - 1)
    consecutive ring edges (reduce-scatter, then all-gather), of the other ring operations
    over p - 1; the ring's edge out of a node's last rank is a network hop. 0 for one node.

    >>> nccl_ring_net_hops("all-reduce", (8,) * 16), nccl_ring_net_hops("all-reduce", (1,) * 4)
    (32, 6)
    >>> nccl_ring_net_hops("all-gather", (2, 2))
    2
    """
    nn, p = len(node_sizes), sum(node_sizes)
    if nn <= 1:
        return 0
    steps = 2 * (p - 1) if op == "all-reduce" else p - 1
    net = [0] * p
    end = -1
    for size in node_sizes:
        end += size
        net[end] = 1
    laps, rem = divmod(steps, p)
    cur = sum(net[:rem])
    best = cur
    for r in range(1, p):
        cur += net[(r + rem - 1) % p] - net[r - 1]
        best = max(best, cur)
    return laps * nn + best


def net_store_forward(view, wire, hops, channels):
    """Seconds NCCL's network transport adds by sending each network step whole.

    NCCL's network proxy posts a step to the network only once the GPU has written all of
    it (NVIDIA/nccl ``src/transport/net.cc`` ``sendProxyProgress``, the same at every tag
    v2.18.3-1 .. v2.30.7-1): LL's lines sit in host memory and the proxy waits for both flags
    of every line; LL128 and Simple post the step's tail only after the whole step (LL128:
    ``prims_ll128.h`` barrier, ``postSend``; Simple: ``prims_simple.h``, per slice of
    ``sliceSteps`` steps). At each network hop the step's ``wire`` bytes leave only after they
    are all written, where a cut-through pipeline would already be sending them: each of the
    ``hops`` network hops in series adds one send at the NIC's payload rate, shared by the
    ``channels`` that meet at one NIC (the ring search spreads the channels over the node's
    NICs in turn). 0 inside one node, or where the group's nodes have no NICs. The count is
    checked against an event simulation of the steps (``tests/store_forward_brute.py``):
    exact where writing a step takes no longer than sending it, a lower bound where it takes
    longer.

    Sixteen 8-GPU nodes with a 400G NIC per GPU (49.58 GB/s of payload), a 4 KiB LL step (8 KiB
    of lines) on one channel, 8 hops (a tree over 16 nodes, up and down):

    >>> from types import SimpleNamespace
    >>> v = SimpleNamespace(n_nodes=16, ppn=8, nics_per_node=8, nic_bandwidth=49.58e9)
    >>> round(net_store_forward(v, 8192, 8, 1) * 1e6, 3)
    1.322
    """
    if (hops <= 0 or view.n_nodes <= 1 or not view.nics_per_node
            or not view.nic_bandwidth > 0):
        return 0.0
    nics = max(1, min(view.nics_per_node, math.ceil(view.ppn)))
    return hops * wire * math.ceil(channels / nics) / view.nic_bandwidth


def _ll128_step_data(rt):
    """Data bytes of one LL128 step: ``ll128_elems_per_thread`` x NCCL_LL128_MAX_NTHREADS
    8-byte words less one flag word in 16 (``src/enqueue.cc`` ``calcCollChunking``)."""
    return rt.factors["ll128_elems_per_thread"] * rt.threads["LL128"] * 8 // 16 * 15


def _tree_ll128_chunk(rt, view, n, channels):
    """Data bytes of a tree LL128 chunk (``src/enqueue.cc`` ``calcCollChunking``, the same at
    every tag v2.18.3-1 .. v2.30.7-1): an LL128 step's lines (``ll128_elems_per_thread`` x
    NCCL_LL128_MAX_NTHREADS 8-byte words) less one flag word in 16, halved while
    ``n / (channels x chunk) < (1 + log2i(nodes) + 0.1 ppn) x 64 / ppn`` and above 131072,
    then while ``< ... x 16 / ppn`` and above 32768 (NCCL's integer division on the left).
    Before 2.22 NCCL calls it with the operation's bytes and channels; from 2.22
    (``scheduleCollTasksToPlan``) once per channel part with its bytes and one channel:
    the caller passes which (:func:`net_send_bytes`).

    >>> from types import SimpleNamespace
    >>> from fabric import runtime
    >>> v = SimpleNamespace(n_nodes=16, p=128)
    >>> [_tree_ll128_chunk(runtime("nccl"), v, n, 16) for n in (2**20, 2**27, 2**30)]
    [18000, 144000, 576000]
    """
    chunk = _ll128_step_data(rt)
    nn = view.n_nodes
    ppn = view.p / nn
    steps = 1 + _log2i(nn) + 0.1 * ppn
    ch = max(1, int(channels))
    while n // (ch * chunk) < steps * 64 / ppn and chunk > 131072:
        chunk //= 2
    while n // (ch * chunk) < steps * 16 / ppn and chunk > 32768:
        chunk //= 2
    return chunk


def net_send_bytes(rt, view, algo, proto, data, n, channels, op="all-reduce"):
    """Wire bytes NCCL's network proxy sends at once for a step of ``data`` bytes of an
    ``n``-byte ``algo`` (``"ring"`` / ``"tree"``) operation in ``proto`` on ``channels``:

    * LL: the step (at most NCCL_LL_LINES_PER_THREAD x NCCL_LL_MAX_NTHREADS 8-byte words, 32
      KiB) as 16-byte lines of 8 data bytes (``prims_ll.h`` ``waitSend``);
    * LL128: the step (at most the chunk, :func:`_tree_ll128_chunk` for the tree) as warp
      slices of ``ll128_warp_words`` 8-byte words, one in 16 a flag (``prims_ll128.h``
      ``waitSend(divUp(nelem, DataEltPerSlice) * WireWordPerSlice * 8)``);
    * Simple: one slice. The tree runs ``ProtoSimple<1, 1>`` (chunk = slice = a Simple
      step, DEFAULT_BUFFSIZE / NCCL_STEPS; DEFAULT_BUFFSIZE_ARM in 2.18 on an Arm host); a
      ring step of ``op`` carries at most ``simple_chunk_steps`` steps, cut into slices of
      ``max(ceil(d / (16 x slices per chunk)) x 16, slice steps x step / 32)`` bytes
      (``prims_simple.h`` genericOp; NCCL counts elements, taken here as bytes), and the
      proxy sends a slice once its tail is posted: the first slice goes whole.

    ``op`` names the ring's operation (its chunk and slice steps, ``collectives.h``:
    all-reduce, all-gather and reduce-scatter NCCL_STEPS / 2 and / 4, broadcast and reduce
    1 and 1).
    """
    if proto == "LL":
        ll = PROTOCOLS["LL"]
        step = rt.factors["ll_lines_per_thread"] * rt.threads["LL"] * ll.payload
        return math.ceil(min(step, data) / ll.payload) * ll.line
    if proto == "LL128":
        # from 2.22 (split rule 2) the chunk follows the channel's own bytes
        whole = (math.ceil(data), 1) if rt.split.get("rule") == 2 else (n, channels)
        chunk = (_tree_ll128_chunk(rt, view, *whole) if algo == "tree" else
                 _ll128_step_data(rt))
        wire = rt.factors["ll128_warp_words"] * 8
        return math.ceil(min(chunk, data) / (wire // 16 * 15)) * wire
    step = rt.factors["simple_step_arm" if view.arm_host else "simple_step"]
    if algo == "tree":
        return min(step, math.ceil(data))
    if op in ("broadcast", "reduce"):
        chunk_steps = slice_steps = 1
    else:
        chunk_steps = rt.factors["simple_chunk_steps"]
        slice_steps = rt.factors["simple_slice_steps"]
    d = min(math.ceil(data), step * chunk_steps)
    per = chunk_steps // slice_steps
    return min(d, max(-(-d // (16 * per)) * 16, step * slice_steps // 32))


def _net_fill(rt, view, op, proto, n, used, nc, hops):
    """:func:`net_store_forward` of a ring (``op``) or tree (``"tree"``) operation of ``n``
    bytes in ``proto`` on ``used`` of ``nc`` channels: a ring all-reduce step carries the
    busiest channel's bytes over the ranks (``all_reduce.h``), the others' steps (and the
    tree's) the channel's, at most one network send (:func:`net_send_bytes`). The NICs are
    shared by the ``used`` channels NCCL picks for the size (``topoGetAlgoInfo``); where the
    cell split leaves one of them empty or spills onto one more, that is not followed, so the
    fill never falls as the size grows unless the busiest channel's bytes do (NCCL's own
    sawtooth, :func:`nccl_channel_split`)."""
    if view.n_nodes <= 1 or hops <= 0:
        return 0.0
    split_op = "all-reduce" if op == "tree" else op
    busiest, _carrying = nccl_channel_split(rt, split_op, proto, n, view.p, used, nc)
    data = math.ceil(busiest / view.p) if op == "all-reduce" else math.ceil(busiest)
    wire = net_send_bytes(rt, view, "tree" if op == "tree" else "ring", proto, data, n, used, op)
    return net_store_forward(view, wire, hops, used)


def _tree_schedule_ratio(view, B):
    """The tree's algorithm bandwidth by the schedule it runs, over ``B`` (the tuner's basis,
    the ring graph's bus bandwidth): what replaces the tuner's busBw-to-algBw ratio .5 in the
    TIME of an NCCL tree (the choice keeps the tuner's .5).

    Inside a node each channel is a chain of the node's ranks: a middle rank sends the data
    up and down through its one port (2n), a 2-rank chain n; across nodes a node's NICs carry
    :func:`nccl_tree_net_share` x n each way. So the schedule's algBw is min(port / c, NICs
    x NIC rate / share) with c = 2 for 3+ ranks in a node, 1 for 2; port is the slowest node's
    one-node ring bus bandwidth (in one node, the basis itself).
    """
    if not (0 < B < math.inf):
        return 0.5
    q = int(view.node_ranks().max())
    c = 2 if q >= 3 else (1 if q == 2 else 0)
    nn = view.n_nodes
    if nn == 1:
        return 1.0 / c if c else 0.5
    alg = math.inf
    if view.nics_per_node and view.nic_bandwidth > 0:
        nics = max(1, min(view.nics_per_node, math.ceil(view.ppn)))
        alg = nics * view.nic_bandwidth / nccl_tree_net_share(nn)
    if c:
        t, k = view.node_transfer("ring", "all-reduce")
        if t.per_byte > 0:
            alg = min(alg, (2 * (k - 1) / k) / t.per_byte / c)
    return alg / B if alg < math.inf else 0.5


def _tree_sched(rt, view):
    """``(algBw, channels)`` of the tree's schedule on ``view`` (see :func:`_nccl_tree`)."""
    _t, B, nc = _tree_graph(rt, view)
    return _tree_schedule_ratio(view, B) * B, nc


def _nccl_tree(rt, view, n, ops):
    t, B, nc = _tree_graph(rt, view)
    B = _per_channel_cap(view, B, nc, lambda v: _tree_graph(rt, v)[1:])
    nn = view.n_nodes
    # NCCL chooses by its tuner (algBw = busBw x .5); the time follows the schedule the tree
    # runs (lead's decision, session 13): bytes per port and per NIC from trees.cc / connect.cc
    # the schedule's algBw at full channels, per channel never above the intact fabric's (a
    # degraded fabric can lose channels faster than bandwidth, as for B: _per_channel_cap)
    sched = _per_channel_cap(view, _tree_schedule_ratio(view, B) * B, nc,
                             lambda v: _tree_sched(rt, v))
    handoff = step_handoff(view.arch)
    node_step = _node_step(view)
    out = []
    for proto in ("LL", "LL128", "Simple"):
        inter = max(_lat(rt, "net", "tree", proto), t.step_message)
        # the chain inside the most populated node is the tree's depth there (on a uniform
        # group, ppn - 1 steps, NCCL's formula; on a degraded one the largest node decides);
        # the tuner's step (its choice) and the time's, which pays the handoff (step_handoff)
        lat, lat_time = (rt.base_latency[("tree", proto)] / ops + 2 * (
            (int(view.node_ranks().max()) - 1)
            * max(_lat(rt, view.intra_hw, "tree", proto), _intra_step(t, nn, h),
                  node_step + h if h and node_step > 0 else 0.0)
            + _log2i(nn) * inter) for h in (0.0, handoff))
        corr = _tree_correction(rt, proto, n)
        g_bus, g_nc = _tuner_graph(rt, view, B, nc)
        bus = _tree_busbw(rt, view, proto, g_bus * _tree_speed_ratio(rt, view), g_nc) * corr
        choice = lat + n / (bus * 0.5)
        picked = _channels_used(rt, proto, nc, n)
        eff, used = _share_channels(rt, "all-reduce", proto, n, view.p, picked, nc)
        # the time's algBw: the schedule's, with the tuner's refinements, on the channels the
        # split uses; then the tuner's caps in the same algBw terms (busBw x .5), so a lower
        # basis can never raise it (review S13-R3)
        caps = _tree_busbw(rt, view, proto, math.inf, eff)
        alg = min(sched * eff / nc * _tree_factor(rt, view, proto), caps * 0.5) * corr
        # across nodes each network hop, up and down the tree, sends a step whole (every
        # protocol: net.cc sends a step once the GPU has written all of it)
        fill = _net_fill(rt, view, "tree", proto, n, picked, nc,
                         2 * nccl_tree_net_depth(nn)) if nn > 1 else 0.0
        out.append(Candidate(library="tree", schedule="double-binary-tree", protocol=proto,
                             time=lat_time + n / alg + fill, choice=choice, channels=used,
                             fixed=lat_time, choice_fixed=lat))
    return out


def _nccl_nvls(rt, view, op, n, ops):
    """NVLS in one node. All-reduce over more ranks than NCCL_MAX_NVLS_ARITY (32): NCCL's
    NVLS graph has at most 32 heads (search.cc: maxChannels = min(arity, GPUs), each head's
    path charged twice), so its busBw is ``2 B eff (h-1)/(h+1)`` with ``h = min(p, 32)``,
    which is the schedule's ``n (1 + 1/p)`` per rank for ``p <= 32``."""
    if view.ppn < rt.factors["nvls_min_gpus"]:
        raise _NvlsOff(f"NCCL {rt.version} does not enable NVLS on a node with "
                       f"{int(view.ppn)} GPUs (src/transport/nvls.cc ncclNvlsInit); with no "
                       "other algorithm allowed it runs the ring (src/graph/tuning.cc)")
    _nvls_hosts(rt, view)
    if op != "all-reduce" and not rt.factors["nvls_gather"]:
        raise NotApplicableError(
            f"NCCL {rt.version} has no NVLS {op}: its tuner leaves all-gather and "
            "reduce-scatter to the ring (src/graph/tuning.cc), so NCCL_ALGO=NVLS finds no "
            "algorithm (src/enqueue.cc 'no algorithm/protocol available')")
    t = view.transfer("in-switch", op)
    # NCCL 2.18 put NVLS's 23 us in the base latency, later releases in the NVLink step
    lat = max(rt.base_latency[("nvls", "Simple")] / ops + _lat(rt, view.intra_hw, "nvls", "Simple"),
              t.step_loadstore)
    per_byte = t.per_byte
    p = view.p
    h = min(p, int(rt.factors["nvls_max_arity"]))
    if op == "all-reduce" and h < p and per_byte > 0:
        b_eff = (1 + 1 / p) / per_byte
        bus = 2 * b_eff * (h - 1) / (h + 1)
        per_byte = (2 * (p - 1) / p) / bus
    # NCCL's tuner compares NVLS at its NVLS graph's quantized speed (nccl_nvls_tuner_bw);
    # the time stays at the fabric's rate
    alg = nccl_nvls_tuner_bw(rt, view, op)
    if alg is None:
        choice = lat + n * per_byte
    elif alg > 0:
        choice = lat + n / alg
    else:
        k = int(view.lanes)
        heads = nccl_nvls_graph(rt, view.arch, view.lanes, round(view.ppn))[0]
        raise NotApplicableError(
            f"NCCL {rt.version}'s NVLS graph search finds no speed at which {heads} heads fit "
            f"on the least-connected GPU's {k} NVLink{'' if k == 1 else 's'} "
            "(src/graph/search.cc ncclTopoSearchTryNvls), so its tuner has no NVLS bandwidth "
            "(src/graph/tuning.cc)")
    time = lat + n * per_byte
    if op != "all-reduce" and per_byte > 0:
        # all-gather / reduce-scatter: the busiest channel's share of a rank's count at one
        # channel's rate (2.19's kernel: channel bid takes the bid-th chunk of each loop of
        # channels x chunk; from 2.20 the scheduler's split)
        channels, chunk = _nvls_chunking(rt, view, n, h)
        count = n / p
        busiest, _ = _nvls_split(rt, view, count, 1, channels, chunk, op=op)
        time = lat + n * per_byte * channels * busiest / count
    if op == "all-reduce":
        # the time (not the tuner's choice) runs at the busiest channel's bytes at one
        # channel's rate, as the ring's and the tree's, and fills the pipeline with that
        # channel's first iteration
        busiest, _ = nvls_channel_split(rt, view, n, h)
        channels, chunk = _nvls_chunking(rt, view, n, h)
        first = nvls_head_load(rt, min(busiest, h * chunk), h, chunk)
        time = lat + channels * (nvls_head_load(rt, busiest, h, chunk)
                                 + _nvls_fill(rt, first)) * per_byte
    return [Candidate(library="nvls", schedule="in-switch", protocol="Simple", time=time,
                      choice=choice, channels=0, fixed=lat)]


def nccl_nvls_graph(rt, arch, lanes, gpus):
    """``(heads, bwIntra, bwInter)`` (B/s) of NCCL's NVLS graph on one node of ``gpus`` GPUs,
    each with ``lanes`` NVLinks into the switch (the least-connected GPU's), under the release
    ``rt`` (its ``search`` speeds and NVLink bandwidth, its ``factors``); ``(heads, 0, 0)``
    where no speed fits.

    ``src/graph/search.cc`` ``ncclTopoCompute`` (the same at every tag v2.18.3-1 .. v2.30.7-1
    but where said): in one node the NVLS graph must have ``heads`` channels, all the GPUs
    (``minChannels = maxChannels``; from 2.25 at most NCCL_MAX_NVLS_ARITY,
    ``factors["nvls_graph_arity"]``); ``ncclTopoSearchTryNvls`` charges every GPU's link to
    and from the switch the channel's speed, twice for the channel's head GPU, so after all
    channels a head's link carries ``(heads + 1) x`` speed of its ``lanes x NVLINK_BW``; pass 1
    takes the first speed of the intra array that fits (from the top: the start index's
    ``maxBw`` / ``totalBw`` limits never exclude a speed that fits), and pass 2 (from 2.19.1,
    ``factors["nvls_raise_inter"]``) raises only ``bwInter`` while it is below ``2 x
    bwIntra`` (one speed at a time, up to the array's first).

    >>> from fabric import runtime
    >>> [nccl_nvls_graph(runtime("nccl"), a, 18, g) for a, g in (("hopper", 8),
    ...  ("blackwell", 8), ("blackwell", 4), ("blackwell", 72))]  # doctest: +NORMALIZE_WHITESPACE
    [(8, 40000000000.0, 60000000000.0), (8, 80000000000.0, 90000000000.0),
     (4, 90000000000.0, 90000000000.0), (32, 20000000000.0, 40000000000.0)]
    """
    f, q = rt.factors, rt.search
    gpus = int(gpus)
    heads = min(gpus, int(f["nvls_max_arity"])) if f["nvls_graph_arity"] else gpus
    speeds = q[("intra_speeds", arch)]
    link = max(0, int(lanes)) * q[("nvlink_bw", arch)]
    eps = 1e-9
    fits = [i for i, s in enumerate(speeds) if (heads + 1) * s <= link * (1 + eps)]
    if not fits or heads < 2:
        return heads, 0.0, 0.0
    i = fits[0]
    intra = inter = speeds[i]
    if f["nvls_raise_inter"]:
        while i > 0 and inter < 2 * intra * (1 - eps):
            i -= 1
            inter = speeds[i]
    return heads, intra, inter


def nccl_nvls_tuner_bw(rt, view, op):
    """NCCL's tuner bandwidth (B/s, the algBw its time divides the bytes by) for one-node NVLS
    ``op`` (all-reduce, all-gather, reduce-scatter) under the release ``rt``, from its NVLS graph
    (:func:`nccl_nvls_graph`); None where the group is not one node of GPUs meeting in NVLink
    switches (no NCCL graph to emulate: the fabric's own rate is the choice's then).

    ``src/graph/tuning.cc`` ``ncclTopoTuneModel`` at each tag: busBw = heads x bw with

    * until 2.27: all-reduce ``bw = min(bwIntra, bwInter)`` (2.18: bwIntra), algBw = busBw x 5/6
      (``factors["nvls_alg_ratio"]``); all-gather / reduce-scatter the same ``bw`` (from 2.27
      ``min(bwIntra x (ppn - 1) / ppn, 0.9 x bwInter)``), x 5/6 in 2.19-2.22 and unconverted
      from 2.23 (``nvls_gather_alg_ratio``);
    * from 2.28 (``nvls_tuner_efficiency``): ``bw = min(bwIntra x nvlsEfficiency x (heads - 1) /
      heads x (2 for all-reduce, else (ppn - 1) / ppn), bwInter)``, all-reduce's algBw = busBw x
      nRanks / nsteps, all-gather / reduce-scatter unconverted.

    The choice only: NCCL's number is its estimate, and the time stays at the fabric's rate
    (session 18: 7 H100 measure 460 GB/s where the tuner's speed gives 408).

    >>> from types import SimpleNamespace
    >>> from fabric import runtime
    >>> h100 = SimpleNamespace(_switch=True, arch="hopper", lanes=18, p=8, ppn=8.0)
    >>> [round(nccl_nvls_tuner_bw(runtime(r), h100, "all-reduce") * 14 / 8 / 1e9, 1)
    ...  for r in ("nccl@2.18.5", "nccl@2.25.1", "nccl")]  # as busBw
    [466.7, 466.7, 476.0]
    """
    if not getattr(view, "_switch", None):
        return None
    f = rt.factors
    heads, intra, inter = nccl_nvls_graph(rt, view.arch, view.lanes, round(view.ppn))
    if intra <= 0:
        return 0.0
    p, ppn = view.p, view.ppn
    if f["nvls_tuner_efficiency"]:
        bw = rt.nvls_efficiency[view.arch] * intra * (heads - 1) / heads
        bw = min(bw * (2 if op == "all-reduce" else (ppn - 1) / ppn), inter)
    elif op == "all-reduce":
        bw = min(intra, inter)
    else:
        bw = min(intra * ((ppn - 1) / ppn if f["nvls_gather_ppn"] else 1.0),
                 inter * f["nvls_gather_inter"])
    if op == "all-reduce":
        ratio = f["nvls_alg_ratio"] or p / (2 * (p - 1))
    else:
        ratio = f["nvls_gather_alg_ratio"]
    return heads * bw * ratio


def nccl_nvls_net_graph(rt, arch, lanes, gpus, nics, net_bw, pci_bw):
    """``(heads, bwIntra, bwInter)`` (B/s) of NCCL's NVLS graph searched over the NICs (a
    communicator across nodes: NVLS-tree's graph, ``init.cc`` ``graphs[NVLS_TREE] =
    nvlsGraph``), on nodes of ``gpus`` GPUs with ``lanes`` NVLinks each into the switch and
    ``nics`` NICs of ``net_bw`` (NCCL's net.bw) behind PCIe links of ``pci_bw`` (None: not a
    limit), each NIC local to its own GPU; ``(0, 0.0, 0.0)`` where no speed fits.

    ``src/graph/search.cc`` (v2.19.4-1 .. v2.30.7-1; 2.18.5 the same counts):
    ``ncclTopoSearchRecNet``'s NVLS branch gives channel ``c`` a NIC whose net.bw carries
    ``bwInter`` (charged) and that NIC's local GPU as its head, one head per NIC and per GPU
    (``nChannels < netCount``, the 'duplicate' test); the head's paths to and from its NIC
    carry ``bwInter``; ``ncclTopoSearchTryNvls`` charges every GPU's link to and from the
    switch ``bwIntra``, twice for the head, so ``k`` heads fit while ``(k + 1) x bwIntra <=
    lanes x NVLINK_BW``. With NICs the heads are not forced to the GPUs (``minChannels``
    only without them); at most ``min(32, gpus)`` from 2.25 (``factors["nvls_graph_arity"]``).
    ``ncclTopoCompute``: pass 1 from the inter array's first speed not above the best GPU-NIC
    path (``maxBw``), ``bwIntra = bwInter`` = the speed; a graph with more heads, else more
    heads x bwInter, is kept (``ncclTopoCompareGraphs``); done at the most heads or once heads
    x bwInter reaches ``totalBw`` (the larger of a GPU's NVLinks and its PCIe link), else the
    next speed while next / best > .49; no ``ncclTopoDupChannels`` for NVLS; pass 2 (from
    2.19.1, ``factors["nvls_raise_inter"]``) raises ``bwInter`` alone, one speed at a time,
    while it is below ``2 x bwIntra`` and the NIC and its PCIe link carry it; 2.18's pass 2
    raises ``bwIntra`` instead, while below ``2 x bwInter`` and the heads' links carry it.

    >>> from fabric import runtime
    >>> [tuple(x / 1e9 if i else x for i, x in enumerate(nccl_nvls_net_graph(
    ...     runtime(r), a, 18, 8, k, 50e9, 48e9))) for r, a, k in (
    ...     ("nccl", "hopper", 8), ("nccl", "hopper", 4), ("nccl", "blackwell", 8))]
    [(8, 40.0, 48.0), (4, 48.0, 48.0), (8, 48.0, 48.0)]
    """
    f, q = rt.factors, rt.search
    gpus, nics = max(1, int(gpus)), max(0, int(nics))
    # the graph's most channels: min(32, GPUs) from 2.25, MAXCHANNELS before (init.cc);
    # one head per NIC and per GPU in every release
    most = min(gpus, int(f["nvls_max_arity"])) if f["nvls_graph_arity"] else rt.max_channels
    speeds = q[("inter_speeds", arch)]
    top = min(net_bw, pci_bw) if pci_bw else net_bw
    link = max(0, int(lanes)) * q[("nvlink_bw", arch)]
    total = max(link, pci_bw or 0.0)
    eps = 1e-9

    def heads_at(s):
        if s > top * (1 + eps):
            return 0
        k = min(nics, most)
        while k > 0 and (k + 1) * s > link * (1 + eps):
            k -= 1
        return k

    # NVLS keeps more heads, else more heads x bwInter (ncclTopoCompareGraphs' NVLS rule); it
    # is done at the most heads (time -1) or at totalBw
    n, bw = _descend_speeds(q, speeds, top, heads_at,
                            lambda k, s, n, bw: k > n or k * s > n * bw * (1 + eps),
                            lambda n, bw: n >= most or n * bw >= total * (1 - eps))
    if n == 0:
        return 0, 0.0, 0.0
    intra = inter = bw
    j = speeds.index(bw)
    if f["nvls_raise_inter"]:
        while j > 0 and inter < 2 * intra * (1 - eps) and speeds[j - 1] <= top * (1 + eps):
            j -= 1
            inter = speeds[j]
    else:
        # 2.18: pass 2 raises bwIntra of every graph but the ring's (v2.18.5-1 l.962-969)
        while j > 0 and intra < 2 * inter * (1 - eps) and (n + 1) * speeds[j - 1] <= link * (
                1 + eps):
            j -= 1
            intra = speeds[j]
    return n, intra, inter


def nccl_nvls_tree_tuner_bus(rt, view):
    """NCCL's tuner busBw (B/s) for NVLS-tree across ``view``'s nodes, from its NVLS graph over
    the NICs (:func:`nccl_nvls_net_graph`), before the algBw ratio and the size correction;
    0.0 where that graph has no speed (NCCL then has no NVLS: ``init.cc`` ``nvlsSupport = 0``)
    or, from 2.28, one head only.

    ``src/graph/tuning.cc`` ``ncclTopoTuneModel``, busBw = heads x bw with: 2.18.5 (l.174, no
    NVLS line; the release of ``factors["nvls_tree_ratio_nodes"]``) ``bw = bwIntra`` on 2
    nodes, ``bwInter`` on more; 2.19.4-2.27.7 (l.176 / l.275) ``min(bwIntra, bwInter x
    nvls_tree_net_two_nodes | _many_nodes)`` (1 | 1/2); from 2.28 (``nvls_tuner_efficiency``)
    ``min(bwIntra x nvlsEfficiency x (heads - 1) / heads x 2, bwInter x (2 | 1),
    perChMaxNVLSTreeBw)`` (v2.30.7-1 l.309-323)."""
    f = rt.factors
    gpus = int(view.node_ranks().min())
    nics = max(1, min(view.nics_per_node, gpus))
    heads, intra, inter = nccl_nvls_net_graph(rt, view.arch, view.lanes, gpus, nics,
                                              view.nic_link_bandwidth, view.nic_pci_bw(rt))
    if heads == 0 or (heads < 2 and f["nvls_tuner_efficiency"]):
        # from 2.28 the tuner skips an NVLS graph of one channel ('NVLS/NVLStree needs at
        # least 2 channels', v2.28.3-1 tuning.cc)
        return 0.0
    nn = view.n_nodes
    net = inter * (f["nvls_tree_net_two_nodes"] if nn <= 2 else f["nvls_tree_net_many_nodes"])
    if f["nvls_tree_ratio_nodes"]:
        bw = intra if nn <= 2 else inter
    elif f["nvls_tuner_efficiency"]:
        bw = min(rt.nvls_efficiency[view.arch] * intra * (heads - 1) / heads * 2, net,
                 rt.nvls_tree_bw[(view.arch, _nodes_index(nn))])
    else:
        bw = min(intra, net)
    return heads * bw


class _NvlsOff(NotApplicableError):
    """NCCL's release does not enable NVLS on this group (forced NVLS then runs the ring)."""


def _nvls_hosts(rt, view):
    """NCCL 2.20.x enables NVLS only when the communicator has one host (``nNodes`` counts
    hosts): ``src/transport/nvls.cc`` ``ncclNvlsInit`` at v2.20.3-1 / v2.20.5-1 returns with
    NVLS off when ``comm->nNodes > 1 || comm->MNNVL`` (absent in 2.19, replaced by the MNNVL
    clique test in 2.21): no NVLS and no NVLS-tree over several hosts (``factors
    ["nvls_multi_host"]`` 0). Hosts are the fabric's (:attr:`fabric.Fabric.host_of`), so a
    multi-host NVLink domain (MNNVL) counts as several."""
    if rt.factors["nvls_multi_host"]:
        return
    hosts = {view.fabric.host_of.get(n, n) for n in view.nodes}
    if len(hosts) > 1:
        raise _NvlsOff(f"NCCL {rt.version} does not enable NVLS on a communicator of "
                       f"{len(hosts)} hosts (src/transport/nvls.cc ncclNvlsInit: nNodes > 1 "
                       "or MNNVL); with no other algorithm allowed it runs the ring")


def _nvls_chunking(rt, view, n, heads):
    """``(channels, chunk)`` of NCCL's one-node NVLS all-reduce: the architecture's NVLS
    channels (``src/transport/nvls.cc``; ``topoGetAlgoInfo`` keeps them all at every size)
    and the chunk (``src/enqueue.cc`` NVLS chunking: 128 KiB cut to 64 / 32 / 16 KiB while
    the bytes are below 64 / 8 / 2 x channels x heads x chunk)."""
    c = rt.nvls
    channels = c[("channels", view.arch)]
    chunk = c["chunk"]
    for k in (64, 8, 2):
        below = c[("chunk_below", k)]
        if n < k * channels * heads * chunk and chunk > below:
            chunk = below
    return channels, chunk


def nvls_channel_split(rt, view, n, heads):
    """``(busiest, channels)``: the bytes on the busiest channel of NCCL's one-node NVLS
    all-reduce of ``n`` bytes, and how many channels carry any.

    2.18-2.19 (``rt.split["rule"]`` 0) split inside the kernel
    (``src/collectives/device/all_reduce.h`` / ``src/device/all_reduce.h``, NVLS): every
    warp group of channel ``bid`` takes, in each loop of ``channels x heads x chunk`` bytes,
    the ``bid``-th block of ``heads x chunk``, so below one loop only the first
    ``ceil(n / (heads x chunk))`` channels carry bytes. From 2.20 the scheduler splits
    the work over the NVLS channels as it splits the ring's (``addCBDCollToPlan``, then
    ``scheduleCollTasksToPlan``: :func:`nccl_channel_split`, Simple).

    >>> from types import SimpleNamespace
    >>> from fabric import runtime
    >>> h100 = SimpleNamespace(arch="hopper", p=8)
    >>> nvls_channel_split(runtime("nccl@2.18.5"), h100, 256 * 1024, 8)
    (131072, 2)
    >>> nvls_channel_split(runtime("nccl@2.20.5"), h100, 256 * 1024, 8)
    (16384, 16)
    """
    return _nvls_split(rt, view, n, heads, *_nvls_chunking(rt, view, n, heads))


def _nvls_split(rt, view, n, heads, channels, chunk, op="all-reduce"):
    """:func:`nvls_channel_split` over ``channels`` channels of ``heads x chunk`` per loop (the
    one-node NVLS kernel's and NVLS-tree's: the same loop, ``src/device/all_reduce.h``; for
    all-gather and reduce-scatter ``n`` is a rank's count and the loop's block one chunk,
    ``heads`` 1: ``all_gather.h`` / ``reduce_scatter.h``)."""
    if rt.split["rule"] != 0:
        total = n * view.p if op in ("all-gather", "reduce-scatter") else n
        return nccl_channel_split(rt, op, "Simple", total, view.p, channels, channels)
    block = heads * chunk
    loops, rest = divmod(n, channels * block)
    busiest = loops * block + min(rest, block)
    carrying = channels if loops else max(1, math.ceil(rest / block))
    return busiest, carrying


def nvls_head_load(rt, nbytes, heads, chunk, align=None):
    """The bytes of an even split that load the busiest rank's links as much as NCCL's one-node
    NVLS all-reduce loads them for a channel of ``nbytes`` over ``heads`` heads in chunks of
    ``chunk`` bytes.

    The channel loops over blocks of ``heads x chunk`` (``src/device/all_reduce.h``, NVLS);
    in each, head ``j`` reduces its share through the switch (``multimem`` load-reduce, then a
    multicast store), so a rank's link carries the whole block once each way (the switch
    reading its data for every head, and writing every head's result into it) plus its own
    head's share: ``block + share`` against the even split's ``block (1 + 1/heads)``. Full
    blocks are even. The last, partial block of ``rest`` bytes gives each head
    ``alignUp(ceil(rest / heads), rt.nvls["head_align"])`` bytes in turn until the rest is
    used (2.20-2.21 ``computeCollLastChunkInfo``, 4096 B; 2.22 16 B; from 2.23 the kernel's
    ``lastChunkSize``, 16 KiB), whole chunks in 2.18-2.19 (``head_align`` 0), so its busiest
    rank carries ``rest + min(share, rest)``: returned as ``full blocks + (rest + share) / (1 +
    1/heads)``, equal to ``nbytes`` where the split is even. ``align``: the alignment in bytes
    (None: ``rt.nvls["head_align"]``; NVLS-tree's is ``rt.nvls["tree_head_align"]``).

    >>> from fabric import runtime
    >>> nvls_head_load(runtime("nccl@2.18.5"), 16384, 8, 16384)   # one head: 32 KiB / 1.125
    29127.11111111111
    >>> nvls_head_load(runtime("nccl"), 8 * 16384, 8, 16384)      # a full block: even
    131072.0
    """
    block = heads * chunk
    if heads < 2 or block <= 0:
        return float(nbytes)
    loops, rest = divmod(nbytes, block)
    if rest <= 0:
        return float(nbytes)
    share = _last_head_share(rt.nvls["head_align"] if align is None else align, rest, heads,
                             chunk)
    return loops * block + (rest + min(share, rest)) / (1 + 1 / heads)


def _last_head_share(align, rest, heads, chunk):
    """A head's share of an NVLS loop's last ``rest`` bytes: a whole chunk (``align`` 0) or
    ``alignUp(ceil(rest / heads), align)``."""
    return chunk if not align else math.ceil(math.ceil(rest / heads) / align) * align


def nvls_tree_head_loads(rt, nbytes, heads, chunk):
    """``(switch, network)``: the bytes of an even split that load NCCL's NVLS-tree channel of
    ``nbytes`` over ``heads`` heads in chunks of ``chunk`` as much as its busiest head does,
    inside the node and on the heads' NICs.

    NVLS_TREE's kernel (``src/device/all_reduce.h``) loops over blocks of ``heads x chunk``:
    the ranks scatter a block to the heads through the switch, head ``j`` reduces its share
    (``multimem`` load-reduce) and sends it up the tree over its NIC, receives the result from
    above and multicasts it back, and the ranks gather it. Inside the node that is one-node
    NVLS's load (:func:`nvls_head_load`); a head's NIC carries its share alone, so the busiest
    NIC carries ``full blocks / heads + min(share, rest)``, an even split ``nbytes / heads``:
    ``network = full blocks + heads x min(share, rest)``. The last block's share per release
    (``rt.nvls["tree_head_align"]``): whole chunks in 2.18-2.19 (the kernel's offset ``(bid x
    nHeads + headRank) x chunkSize``), ``computeCollLastChunkInfo``'s 4096 B in 2.20-2.21
    (the NVLS line, NVLS_TREE included), the kernel's ``alignUp(divUp(remCount, nHeads), 16 /
    sizeof(T))`` from 2.22.3 (16 B at every later tag; one-node NVLS went to 16 KiB in 2.23,
    NVLS_TREE did not).

    >>> from fabric import runtime
    >>> nvls_tree_head_loads(runtime("nccl@2.19.4"), 8 * 32768 + 8192, 8, 32768)
    (276707.55555555556, 327680)
    >>> nvls_tree_head_loads(runtime("nccl"), 8 * 32768 + 8192, 8, 32768)
    (270336.0, 270336)
    """
    align = rt.nvls["tree_head_align"]
    block = heads * chunk
    if heads < 2 or block <= 0:
        return float(nbytes), float(nbytes)
    loops, rest = divmod(nbytes, block)
    if rest <= 0:
        return float(nbytes), float(nbytes)
    share = min(_last_head_share(align, rest, heads, chunk), rest)
    return nvls_head_load(rt, nbytes, heads, chunk, align), loops * block + heads * share


def _nvls_fill(rt, first):
    """Bytes' worth of time NCCL's one-node NVLS all-reduce spends filling its pipeline,
    on a channel whose first iteration carries ``first`` bytes.

    Each channel loops over ``heads x chunk`` elements per iteration (:func:`_nvls_chunking`),
    and a chunk passes three warp groups in turn (scatter, reduce-and-broadcast through NVLS,
    gather: ``src/device/all_reduce.h``): the first iteration pays every stage, later ones
    stream behind it, so the channel runs ``stages - 1`` iterations longer than its bytes
    at its rate. NCCL's tuner does not cost this (it compares NVLS at its latency plus
    full bandwidth), so the fill is in the time, not in the choice.
    """
    return (rt.nvls["stages"] - 1) * first


def nvls_tree_chunking(rt, view, n, heads):
    """``(channels, chunk)``: the channels and the chunk (bytes) of NCCL's NVLS-tree all-reduce
    of ``n`` bytes across ``view``'s nodes with ``heads`` heads per node.

    ``src/enqueue.cc`` ``calcCollChunking`` (NVLS_TREE, v2.18.3-1 .. v2.30.7-1): the chunk
    starts at the Simple step (2.18-2.21) or NCCL_NVLS_CHUNKSIZE (128 KiB, from 2.22), at most
    64 KiB on 4 or more nodes (from 2.20), then is cut to 256 / 128 / 64 / 32 KiB while ``n``
    is below 32 / 16 / 4 / 1 x channels x heads x chunk. The channels are the multi-node NVLS
    count (``topoGetAlgoInfo``: ``nc = nvlsChannels``, never fewer for a small size). From
    2.30.3 NCCL tunes Blackwell's multi-node NVLS itself (``src/transport/nvls.cc``
    ``ncclNvlsTreeSm100Tuning``: channels, chunk and cap by nodes, GPUs per node, the NIC's
    speed and whether the NIC sits at most a PCIe switch from the GPU; taken here as every
    host but a Grace one, whose NICs hang off the CPU).

    Two 8-GPU Hopper nodes, 8 heads (8 GiB, then 1 MiB), and four:

    >>> from types import SimpleNamespace
    >>> from fabric import runtime
    >>> v = SimpleNamespace(n_nodes=2, arch="hopper", arm_host=False)
    >>> [nvls_tree_chunking(runtime(f"nccl@{r}"), v, 2**33, 8) for r in ("2.19.4", "2.26.6")]
    [(16, 524288), (16, 131072)]
    >>> nvls_tree_chunking(runtime("nccl@2.26.6"), v, 2**20, 8)
    (16, 32768)
    >>> nvls_tree_chunking(runtime("nccl@2.21.5"), SimpleNamespace(n_nodes=4, arch="hopper",
    ...                                                            arm_host=False), 2**33, 8)
    (16, 65536)
    """
    c = rt.nvls
    nn = view.n_nodes
    channels = c[("channels_nodes", view.arch)]
    chunk = c["tree_chunk"] or rt.factors["simple_step_arm" if view.arm_host else "simple_step"]
    cap = chunk
    if c["tree_max_chunk_nodes4"] and nn >= 4:
        cap = c["tree_max_chunk_nodes4"]
    if c["tree_sm100_tuning"] and view.arch == "blackwell" and nn > 1:
        channels, chunk, cap = _nvls_tree_sm100_tuning(view, channels, chunk)
    chunk = min(chunk, cap)
    ops = channels * heads
    for k, below in ((32, 262144), (16, 131072), (4, 65536), (1, 32768)):
        if n < k * ops * chunk and chunk > below:
            chunk = below
    return channels, chunk


def _nvls_tree_sm100_tuning(view, channels, chunk):
    """NCCL 2.30's ``ncclNvlsTreeSm100Tuning`` (``src/transport/nvls.cc`` at v2.30.3-1 ..
    v2.30.7-1): ``(channels, chunk, cap)`` of Blackwell's NVLS-tree over ``view``'s nodes, from
    the nodes, the fewest GPUs in a node, the NIC's speed (``minNetBw``, GB/s) and whether the
    NIC is at most a PCIe switch from the GPU (``typeInter <= PATH_PXB``; assumption: every
    host but a Grace one). Where no rule applies: the inputs, and the cap NCCL falls back to
    (64 KiB on 4 or more nodes, else the chunk)."""
    nn, ppn = view.n_nodes, int(view.node_ranks().min())
    bw = view.nic_link_bandwidth / 1e9
    pxb = not view.arm_host
    chunk, cap = 131072, 0
    if nn == 2 and bw >= 48.0:
        channels, cap = 32, 131072
        if ppn <= 4:
            chunk = cap = 262144
        elif ppn >= 16 or (ppn <= 8 and pxb and bw < 96.0):
            cap = 65536
    elif bw >= 96.0:
        if ppn <= 8:
            channels, chunk, cap = 24, 262144, 262144
        else:
            channels, cap = 32, (131072 if ppn < 32 else 65536)
    elif bw >= 48.0:
        channels, cap = 24, (65536 if pxb else 131072)
    if not cap:
        cap = 65536 if nn >= 4 else chunk
    return channels, chunk, cap


def nvls_tree_net_fill(rt, view, n, heads, intra_per_byte):
    """Seconds NVLS-tree's network hops add by sending each chunk whole.

    A head's reduce warps send the chunk up the tree over the network and its broadcast warps
    receive it from above, in ``ProtoSimple<1, 1>`` (``src/device/all_reduce.h`` NVLS_TREE: a
    chunk is one slice of one step); the GPU posts a step's tail after the whole slice and the
    proxy sends it only then (``src/transport/net.cc`` ``sendProxyProgress``), and a received
    step reaches the GPU whole (``recvProxyProgress``: the tail after the irecv and its flush).
    So on the path up the heads' tree and down again (``2 x`` :func:`nccl_tree_net_depth`
    network hops; ``connect.cc`` ``connectNvls``: NCCL's double binary tree over the nodes)
    each hop is a write of the chunk followed by its send:

    * the write: every channel's heads produce their chunk through the node's switch at once,
      ``channels x heads x wire`` bytes at the node's in-switch all-reduce rate
      (``intra_per_byte``: the schedule NVLS-tree's time already runs at inside a node);
    * the send: one ``wire`` at one NIC's payload rate, shared by the channels' heads on it;

    ``wire`` is a chunk (:func:`nvls_tree_chunking`), at most a head's 16-byte-aligned share of
    the busiest channel (the last loop's ``divUp(rem, nHeads)``). Against a cut-through pass
    whose step is the slower of the two (the schedule's bottleneck, which the bandwidth term
    already charges), the store-and-forward adds the faster of the two per hop, exactly (event
    simulation of the chain, ``tests/store_forward_brute.py``; the deepest leaf's path up and
    down: two children sharing a node's NIC are not simulated, as for the tree's fill). Time
    only: NCCL's tuner does not see it. 0 on one node or without NICs.
    """
    nn = view.n_nodes
    if nn <= 1 or not view.nics_per_node or not view.nic_bandwidth > 0:
        return 0.0
    channels, chunk = nvls_tree_chunking(rt, view, n, heads)
    busiest, _carrying = _nvls_split(rt, view, n, heads, channels, chunk)
    wire = min(chunk, _up(math.ceil(busiest / heads), 16))
    write = channels * heads * wire * intra_per_byte
    send = net_store_forward(view, wire, 1, channels * heads)
    return 2 * nccl_tree_net_depth(nn) * min(write, send)


def _nccl_nvls_tree(rt, view, n, ops):
    """NVLS inside each node, a tree of NICs between nodes (NCCL's NVLSTree, all-reduce).

    The CHOICE is the release's tuner (min of the NVLS graph's intra / inter bandwidth per
    head and, from 2.28, its per-channel cap perChMaxNVLSTreeBw, x the algBw ratio); the TIME
    is the schedule NVLS-tree runs (session 13): the node's in-switch all-reduce and the heads'
    NICs carrying :func:`nccl_tree_net_share` x n each way, concurrently, x the tuner's size
    correction where it has one, for the busiest of its channels' bytes at one channel's rate
    (the NVLS split, :func:`nvls_channel_split`: NVLS_TREE's kernel loops as NVLS's). The
    tuner's per-channel cap does not enter the time.
    """
    _nvls_hosts(rt, view)
    p, nn = view.p, view.n_nodes
    if int(view.node_ranks().min()) < 2 or view.nic_bandwidth <= 0:
        raise NotApplicableError("NVLS-tree needs several GPUs in every node on a reducing "
                                 "switch and NICs between the nodes")
    intra_t, q = view.node_transfer("in-switch", "all-reduce")  # the slowest node's ranks
    if intra_t.per_byte <= 0:
        raise NotApplicableError("NVLS-tree: a node's in-switch all-reduce moves no bytes")
    intra_bus = (2 * (q - 1) / q) / intra_t.per_byte
    heads = max(1, min(int(q), view.nics_per_node))
    f = rt.factors
    # each head's network share is the NVLS graph's bwInter, NCCL's search speed over the NIC
    # and its PCIe path (tuning.cc: bw from graphs[NVLS_TREE]->bwInter), not the NIC's payload rate
    speed = nccl_nvls_net_speed(rt, view.arch, view.nic_link_bandwidth, view.nic_pci_bw(rt))
    inter_bus = speed * heads * (f["nvls_tree_net_two_nodes"] if nn <= 2 else
                                 f["nvls_tree_net_many_nodes"])
    cap = heads * rt.nvls_tree_bw[(view.arch, _nodes_index(nn))]
    if cap <= 0:
        raise NotApplicableError("NCCL has no NVLS-tree bandwidth for this GPU generation")
    bus = min(intra_bus, inter_bus, cap)
    # NCCL's tuner compares NVLS-tree at its NVLS graph over the NICs (heads, bwIntra,
    # bwInter: nccl_nvls_tree_tuner_bus) where the nodes are searched over their NICs; the
    # time stays at the schedule's rates
    if getattr(view, "channels_searched", False):
        bus = nccl_nvls_tree_tuner_bus(rt, view)
        if bus <= 0:
            raise NotApplicableError(
                f"NCCL {rt.version}'s NVLS graph over the NICs finds no speed at which a head "
                "fits (src/graph/search.cc), so NCCL runs no NVLS across these nodes (init.cc)")
    corr = 1.0
    if f["nvls_tree_correction_blackwell_x86"] and view.arch == "blackwell" and not view.arm_host:
        # from 2.29.2 NCCL corrects NVLS-tree's bandwidth by size as the tree's, on Blackwell
        # with x86 hosts (tuning.cc ncclTopoGetAlgoTime: minCompCap >= 100, cpuArch x86)
        corr = _tree_correction(rt, "Simple", n, limit=24)
    bus *= corr
    # the schedule NVLS-tree runs (lead's decision, session 13; connect.cc connectNvls: the
    # heads form NCCL's double binary tree over the nodes, channel c on tree c % 2;
    # all_reduce.h NVLS_TREE: scatter / gather through the node's NVLS, each chunk's head
    # exchanging with its network parent and children): a node's NICs carry
    # nccl_tree_net_share x n each way, its NVLS the in-switch all-reduce (the slower of the
    # two, for the busiest head's bytes on each: below)
    net_rate = view.nic_bandwidth * heads / nccl_tree_net_share(nn)
    intra = max(_lat(rt, view.intra_hw, "nvls-tree", "Simple"), intra_t.step_loadstore)
    inter = max(_lat(rt, "net", "nvls-tree", "Simple"), view.transfer("ring", "all-reduce")
                .step_message)
    if f["nvls_tree_linear_net_steps"]:  # NCCL 2.18: 2 (nodes - 1) network steps only
        lat = rt.base_latency[("nvls-tree", "Simple")] / ops + 2 * (nn - 1) * inter
    else:
        lat = rt.base_latency[("nvls-tree", "Simple")] / ops + intra + 2 * _log2i(nn) * inter
    # algBw = busBw x nRanks / nsteps (2.28 on); before, busBw x 5/6 (nvls_tree_alg_ratio);
    # 2.18: busBw x 0.7 nodes / (2 (nodes - 1))
    ratio = (f["nvls_tree_ratio_nodes"] * nn / (2 * (nn - 1)) if f["nvls_tree_ratio_nodes"]
             else f["nvls_tree_alg_ratio"] or p / (2 * (p - 1)))
    # NCCL chooses by its tuner's time; the time is the schedule's
    # each network hop, up the tree and down, sends a chunk whole (net.cc): time only
    fill = nvls_tree_net_fill(rt, view, n, heads, intra_t.per_byte)
    # the time runs at the busiest channel's bytes at one channel's rate (NCCL's split over
    # the NVLS channels: in the kernel in 2.18-2.19, the scheduler's from 2.20), as NVLS's
    channels, chunk = nvls_tree_chunking(rt, view, n, heads)
    busiest, _ = _nvls_split(rt, view, n, heads, channels, chunk)
    # inside the channel its busiest head: the switch side and its NIC
    # (nvls_tree_head_loads); sched is min(switch rate, NIC rate) x corr
    switch, network = nvls_tree_head_loads(rt, busiest, heads, chunk)
    busy = max(switch * intra_t.per_byte, network / net_rate) / corr
    return [Candidate(library="nvls-tree", schedule="hierarchical", protocol="Simple",
                      time=lat + channels * busy + fill,
                      choice=lat + n / (bus * ratio),
                      channels=heads, fixed=lat)]


def _pow2_up(x):
    out = 1
    while out < x:
        out *= 2
    return out


def nccl_switch_channels(rt, lanes, arch, nvls=False):
    """NCCL's collective channels (``comm->nChannels``) on one node whose GPUs meet in an
    NVLink switch, each with ``lanes`` NVLinks (the least-connected GPU's), from NCCL's own
    ring graph search (NVIDIA/nccl v2.30.7-1; constants ``rt.search``):

    * ``src/graph/topo.h``: a GPU's NVLinks to the switch form one link of ``lanes x
      NVLINK_BW`` (``T``; 20.6 GB/s per NVLink on Hopper, 40.1 on Blackwell);
    * ``src/graph/search.cc`` ``ncclTopoCompute``: a ring channel at speed ``s`` charges ``s``
      on every GPU's link to and from the switch, so ``floor(T / s)`` channels fit (at most
      MAXCHANNELS / 2); the search starts at the first speed of the arch's intra array not
      above ``T``, keeps a strictly better ``channels x speed``, stops once that reaches
      ``T``, and goes to the next speed while ``next / best > .49``;
      ``ncclTopoDupChannels`` doubles the channels (speed halved) unless the speed is below 25
      GB/s, or below 50 GB/s with more than 4 channels; pass 2 raises the speed while the
      channels still fit;
    * ``src/graph/connect.cc`` ``ncclTopoPostset``: channels x 2 (at most MAXCHANNELS), raised to
      the NVLS channels when NVLS runs in 2.20.3-2.27.7 (``nvls``: that count, or False; the
      caller passes False for other releases, ``factors["nvls_raises_ring"]``).

    >>> from fabric import runtime
    >>> [nccl_switch_channels(runtime("nccl"), k, a) for k, a in
    ...  ((18, "hopper"), (8, "hopper"), (18, "blackwell"))]
    [24, 16, 32]
    """
    n, _bw = nccl_switch_ring_graph(rt, lanes, arch)
    if n == 0:
        return 1
    out = min(rt.max_channels, 2 * n)
    if nvls:
        out = max(out, min(rt.max_channels, int(nvls)))
    return max(1, out)


def nccl_switch_ring_graph(rt, lanes, arch):
    """``(nChannels, bwIntra)`` (B/s) of NCCL's ring graph on one node whose GPUs meet in an
    NVLink switch, each with ``lanes`` NVLinks (see :func:`nccl_switch_channels`: the search
    and ``ncclTopoDupChannels``, before ``ncclTopoPostset``); ``(0, 0.0)`` where no speed fits.
    Its ``nChannels x bwIntra`` is the ring's busBw in NCCL's tuner, and ``nChannels`` the
    count its per-channel caps multiply (``src/graph/tuning.cc`` ``ncclTopoTuneModel``:
    ``graphs[a]->nChannels * bw``).

    >>> from fabric import runtime
    >>> [(n, bw / 1e9) for n, bw in (nccl_switch_ring_graph(runtime(r), 18, a) for r, a in
    ...  (("nccl", "hopper"), ("nccl@2.18.5", "hopper"), ("nccl", "blackwell")))]
    [(12, 30.0), (12, 30.0), (16, 45.0)]
    """
    q = rt.search
    half = max(1, rt.max_channels // 2)
    total = max(0, int(lanes)) * q[("nvlink_bw", arch)]
    eps = 1e-9

    def fit(speed):
        return min(half, int(total / speed + eps))

    return _ring_search(q, q[("intra_speeds", arch)], fit, total, total, half)


def _tuner_graph(rt, view, B, nc):
    """``(B, nc)`` the tuner's ring and tree bandwidths rest on: in one node whose GPUs meet in
    NVLink switches, NCCL's own ring graph (:func:`nccl_switch_ring_graph`: ``nChannels x
    bwIntra`` and ``nChannels``, the speeds of its search rather than the fabric's rate, as
    NVLS's choice takes its graph's, :func:`nccl_nvls_tuner_bw`); across nodes searched over
    their NICs (:attr:`~analysis._collectives._GroupView.channels_searched`), the ring graph
    of that search (:func:`nccl_net_ring_graph`: ``nChannels x speed``, ``nChannels``; the
    tree's graph is taken as the ring's, as for the channels, at the speed of
    :func:`_tree_speed_ratio`); elsewhere the fabric's ``B`` on ``nc`` channels. The choice
    only: the time runs at the fabric's rate."""
    if getattr(view, "_switch", None) is None:
        if view.n_nodes < 2 or not getattr(view, "channels_searched", False):
            return B, nc
        n, bw = nccl_view_net_graph(rt, view)
        return (n * bw, n) if n else (B, nc)
    n, bw = nccl_switch_ring_graph(rt, view.lanes, view.arch)
    if n == 0:
        return B, nc
    return n * bw, n


def _descend_speeds(q, speeds, top, place, keep, done):
    """``(channels, speed)`` of pass 1 of NCCL's graph search (``src/graph/search.cc``
    ``ncclTopoCompute``): from the first speed of ``speeds`` not above ``top``, place
    channels at each speed (``place(speed)``), keep the graph ``keep(k, speed, n, bw)``
    prefers to the saved ``(n, bw)``, stop once ``done(n, bw)``, else go to the next speed
    while ``next / saved > q["lower_ratio"]`` (or none is saved)."""
    eps = 1e-9
    i = 0
    while i < len(speeds) - 1 and speeds[i] > top * (1 + eps):
        i += 1
    n, bw = 0, 0.0
    while True:
        k = place(speeds[i])
        if keep(k, speeds[i], n, bw):
            n, bw = k, speeds[i]
        if n and done(n, bw):
            break
        if i < len(speeds) - 1 and (n == 0 or speeds[i + 1] / bw > q["lower_ratio"]):
            i += 1
            continue
        break
    return n, bw


def _ring_search(q, speeds, fit, top, total, half):
    """``(channels, speed)`` of NCCL's ring graph search (``src/graph/search.cc``
    ``ncclTopoCompute``, passes 1 and 2, with ``ncclTopoDupChannels``; no pass-2 raise where
    ``q["ring_raise"]`` is 0: 2.18.x, 2.19.1) where ``fit(speed)`` is
    how many channels fit at a speed, ``top`` the highest usable speed (``system->maxBw``) and
    ``total`` the bandwidth at which the search stops (``system->totalBw``), ``half`` the graph's
    most channels (MAXCHANNELS / 2)."""
    eps = 1e-9
    n, bw = _descend_speeds(q, speeds, top, fit,
                            lambda k, s, n, bw: k * s > n * bw * (1 + eps),
                            lambda n, bw: n * bw >= total * (1 - eps))
    if n == 0:
        return 0, 0.0
    if bw >= q["dup_below"] and not (bw < q["dup_slow_below"] and n > q["dup_slow_channels"]):
        dup = min(2 * n, half)
        bw /= -(-dup // n)
        n = dup
        if not q["ring_raise"]:
            # 2.18.x, 2.19.1: DupChannels last, no pass 2 for the ring
            return n, bw
        j = 0
        while j < len(speeds) - 1 and speeds[j] > bw * (1 + eps):
            j += 1
        while j > 0 and fit(speeds[j - 1]) >= n:
            j -= 1
            n, bw = fit(speeds[j]), speeds[j]
    return n, bw


def nccl_nvls_net_speed(rt, arch, net_bw, pci_bw):
    """Per-channel network speed (B/s) of NCCL's NVLS graph over NICs of ``net_bw`` (NCCL's
    net.bw: the link rate, B/s) behind PCIe links of ``pci_bw`` (B/s; None: not a limit):
    the graph's ``bwInter``, which NCCL's tuner takes as NVLS-tree's network bandwidth per
    head (``src/graph/tuning.cc`` ``ncclTopoTuneModel``, every release).

    NCCL's search (``src/graph/search.cc`` at v2.26.6-1 and v2.30.7-1): ``ncclTopoSearchInit``
    sets ``maxBw`` to the best GPU-to-NIC path's bandwidth (its narrowest link);
    ``ncclTopoCompute`` starts at the first speed of the arch's inter array not above it;
    a head needs its NIC (``ncclTopoSearchRecNet``: ``net.bw >= bwInter``) and its path to
    carry the speed, so pass 2's raise of an NVLS graph's ``bwInter`` cannot pass the path.
    The result is the fastest array speed not above ``min(net_bw, pci_bw)`` (the slowest
    speed if none is).

    >>> from fabric import runtime
    >>> round(nccl_nvls_net_speed(runtime("nccl@2.26.6"), "hopper", 50e9, 48e9) / 1e9, 1)
    48.0
    >>> round(nccl_nvls_net_speed(runtime("nccl"), "blackwell", 50e9, None) / 1e9, 1)
    48.0
    >>> round(nccl_nvls_net_speed(runtime("nccl"), "hopper", 25e9, 48e9) / 1e9, 1)
    24.0
    """
    speeds = rt.search[("inter_speeds", arch)]
    top = min(net_bw, pci_bw) if pci_bw else net_bw
    eps = 1e-9
    for s in speeds:
        if s <= top * (1 + eps):
            return s
    return speeds[-1]


def nccl_net_channels(rt, arch, nics, ppn, lanes, net_bw, pci_bw):
    """NCCL's collective channels (``comm->nChannels``) for a group over several nodes, each
    with ``nics`` NICs of ``net_bw`` (NCCL's net.bw, B/s) behind PCIe links of ``pci_bw`` (B/s;
    None: not a limit), ``ppn`` ranks and ``lanes`` NVLinks per GPU into the node's switch,
    from NCCL's own ring graph search over the NICs (NVIDIA/nccl v2.30.7-1; constants
    ``rt.search``, the release's):

    * ``src/graph/search.cc`` ``ncclTopoSearchInit``: the search starts at the first speed of
      the arch's inter array not above the best GPU-to-NIC path (its narrowest link);
      ``ncclTopoSearchRecNet``: a channel starts at a NIC and charges its speed on it
      (``net.bw -= bwInter``) and on the PCIe links, so a NIC carries ``floor(min(net, pci) /
      speed)`` channels; every GPU's NVLink to the switch carries the speed of every channel
      but those it starts (in) or ends (out): ``speed x (k - floor(k / ppn)) <= lanes x
      NVLINK_BW``; then the one-node loop, ``ncclTopoDupChannels`` and pass 2
      (:func:`_ring_search`); at most MAXCHANNELS / 2 (``init.cc``);
    * ``src/graph/connect.cc`` ``ncclTopoPostset``: x 2 (at most MAXCHANNELS), and x 2 again
      while the ring's speed is above 45 GB/s and the channels below 16 (``postset_more_*``).

    The tree graph is searched at the ring's count and taken to reach it (``init.cc``:
    ``comm->nChannels = min(tree, ring)``; an assumption, as in one node).

    >>> from fabric import runtime
    >>> [nccl_net_channels(runtime(r), a, k, 4 if k == 4 else 8, 18, 50e9, 48e9) for r, a, k in
    ...  (("nccl", "hopper", 8), ("nccl@2.27.3", "blackwell", 4),
    ...   ("nccl@2.27.3", "blackwell", 8), ("nccl", "blackwell", 8))]
    [16, 16, 32, 16]
    """
    return nccl_net_postset(rt, arch, *nccl_net_ring_graph(rt, arch, nics, ppn, lanes, net_bw,
                                                            pci_bw))


def nccl_net_postset(rt, arch, n, bw):
    """``comm->nChannels`` from a multi-node ring graph of ``n`` channels at ``bw`` (B/s):
    ``src/graph/connect.cc`` ``ncclTopoPostset`` (see :func:`nccl_net_channels`)."""
    if n == 0:
        return 1
    q = rt.search
    eps = 1e-9
    out = min(rt.max_channels, 2 * n)
    rule = q["postset_more_rule"]
    if (rule == 2 or (rule == 1 and arch == "hopper")) and bw > q["postset_more_bw"] * (
            1 + eps) and out < q["postset_more_below"]:
        out = min(rt.max_channels, 2 * out)
    return max(1, out)


def nccl_net_ring_graph(rt, arch, nics, ppn, lanes, net_bw, pci_bw):
    """``(nChannels, speed)`` (B/s) of NCCL's ring graph searched over the NICs (the search of
    :func:`nccl_net_channels`, after ``ncclTopoDupChannels`` and pass 2, before
    ``ncclTopoPostset``); ``(0, 0.0)`` where no speed fits. Across nodes the ring's pass 2
    raises ``bwIntra`` and ``bwInter`` together (``src/graph/search.cc`` ``ncclTopoCompute``,
    'increase bw for Ring'), so both are ``speed``: the tuner's ring busBw is ``nChannels x
    speed`` and its per-channel caps multiply this ``nChannels`` (``src/graph/tuning.cc``
    ``ncclTopoTuneModel``: ``bw = nNodes <= 2 ? bwIntra : bwInter``, ``graphs[a]->nChannels``,
    every tag v2.18.5-1 .. v2.30.7-1).

    >>> from fabric import runtime
    >>> [(n, bw / 1e9) for n, bw in (nccl_net_ring_graph(runtime(r), a, 8, 8, 18, 50e9, 48e9)
    ...  for r, a in (("nccl", "hopper"), ("nccl@2.27.3", "blackwell")))]
    [(8, 48.0), (16, 24.0)]
    """
    q = rt.search
    half = max(1, rt.max_channels // 2)
    per_nic = min(net_bw, pci_bw) if pci_bw else net_bw
    nvl = max(0, int(lanes)) * q[("nvlink_bw", arch)]
    ppn = max(1, round(ppn))
    nics = max(1, int(nics))
    eps = 1e-9

    def fit(speed):
        k = min(half, nics * int(per_nic / speed + eps))
        if ppn > 1:
            while k > 0 and speed * (k - k // ppn) > nvl * (1 + eps):
                k -= 1
        return k

    total = max(nvl, pci_bw or 0.0)
    return _ring_search(q, q[("inter_speeds", arch)], fit, per_nic, total, half)


def _tree_speed_ratio(rt, view):
    """The tree graph's speed the tuner reads over the ring graph's, across nodes searched
    over their NICs (:func:`nccl_net_tree_graph`: bwIntra on 2 nodes, raised by the tree's
    pass 2; bwInter on more); 1 elsewhere (one node: the ring's graph)."""
    if (view.n_nodes < 2 or getattr(view, "_switch", None) is not None
            or not getattr(view, "channels_searched", False)):
        return 1.0
    n, bw = nccl_view_net_graph(rt, view)
    if not n:
        return 1.0
    intra, inter = nccl_net_tree_graph(rt, view.arch, n, view.ppn, view.lanes, bw)
    return (intra if view.n_nodes <= 2 else inter) / bw


def nccl_net_tree_graph(rt, arch, channels, ppn, lanes, speed):
    """``(bwIntra, bwInter)`` (B/s) of NCCL's tree graph across nodes whose ring graph is
    ``channels`` x ``speed``. The tree's graph is taken as the ring's (``init.cc`` searches it
    at the ring's channel count, and its chain NET -> GPU a -> .. -> GPU x charges the NVLinks
    and NICs as the ring's does), at a speed of the search's array: the first not above the
    ring's (a duplicated ring's halved speed can fall between two). ``src/graph/search.cc``
    ``ncclTopoCompute`` pass 2, 'increase bwIntra for trees (2 nodes or collnet)' (every tag
    v2.18.3-1 .. v2.30.7-1; DupChannels cannot add channels: the tree's most are the ring's),
    raises bwIntra alone one inter speed at a time while it is below ``2 x bwInter`` and every
    GPU's NVLink to the switch still carries the channels (``bwIntra x (channels - channels //
    ppn) <= lanes x NVLINK_BW``); the NICs carry bwInter, unchanged. The tuner reads bwIntra
    on 2 nodes, bwInter on more (``tuning.cc``: ``nNodes <= 2 ? bwIntra : bwInter``).

    >>> from fabric import runtime
    >>> [tuple(x / 1e9 for x in nccl_net_tree_graph(runtime(r), a, 8, 4 if a == "blackwell"
    ...  else 8, 18, s)) for r, a, s in (("nccl@2.27.3", "blackwell", 24e9),
    ...                                   ("nccl", "hopper", 48e9), ("nccl", "hopper", 22.5e9))]
    [(47.9, 24.0), (48.0, 48.0), (45.0, 22.0)]
    """
    q = rt.search
    speeds = q[("inter_speeds", arch)]
    nvl = max(0, int(lanes)) * q[("nvlink_bw", arch)]
    ppn = max(1, round(ppn))
    eps = 1e-9
    j = 0
    while j < len(speeds) - 1 and speeds[j] > speed * (1 + eps):
        j += 1
    inter = intra = speeds[j]
    while j > 0 and intra < 2 * inter * (1 - eps) and (
            ppn <= 1 or speeds[j - 1] * (channels - channels // ppn) <= nvl * (1 + eps)):
        j -= 1
        intra = speeds[j]
    return intra, inter


def nccl_view_net_graph(rt, view):
    """:func:`nccl_net_ring_graph` of a group over several nodes, as NCCL's allgather leaves
    it: every node searches its own graph (its ranks, its NICs with a network link, at most
    one per rank, behind their PCIe links; the group's least NVLink lanes) and every node
    keeps the least ``nChannels`` and the least speed (``src/init.cc``: ``nChannels``,
    ``bwIntra``, ``bwInter`` = min over the allgathered graphs, v2.18.5-1 l.996 .. v2.30.7-1
    l.1439). Nodes alike give the one node's graph (searched once: a 16,000-node group has
    one or two kinds of node)."""
    pci = view.nic_pci_bw(rt)
    graphs = {nccl_net_ring_graph(rt, view.arch, max(1, min(nics, ppn)), ppn, view.lanes,
                                  view.nic_link_bandwidth, pci)
              for ppn, nics in set(view.node_nets())}
    return min(n for n, _ in graphs), min(bw for _, bw in graphs)


def p2p_channels(rt, view):
    """NCCL's point-to-point channels for a rank group: ``(p2pnChannels, nChannelsMax,
    nChannelsMin, p2pChunkSize)`` (``src/graph/paths.cc`` ``ncclTopoGetNchannels`` /
    ``ncclTopoComputeP2pChannels``, ``src/enqueue.cc``, ``src/init.cc``; constants and the
    release's rules in ``rt.p2p``, see :class:`fabric.Runtime`).

    ``p2pnChannels`` is the collective channel count (:func:`comm_channels`) rounded up to a
    power of two; ``nChannelsMax`` (``p2pnChannelsPerPeer``) the least over the peers of 2 x
    the NVLink lanes of the path to the peer (a peer in the same load/store domain,
    :meth:`analysis._collectives._GroupView._p2p_lanes`; 2 over PCI) and a network peer's
    count (by the release's ``net_peer_rule``), rounded up to a power of two and bounded;
    ``nChannelsMin`` it halved while ``nChannelsMin x ranks > p2pnChannels``; the chunk is
    ``p2pChunkSize``: the network's across nodes (x ``net_chunk_ratio_arm_blackwell`` on a
    Grace host with Blackwell GPUs), NVLink's in one node, PCI's otherwise.
    """
    q = rt.p2p
    pre = comm_channels(rt, view)
    p2pn = _pow2_up(pre)
    n = view.p
    multi = view.n_nodes > 1
    peers = []
    if view.ppn > 1:
        peers.append(2 * max(1, int(view.p2p_lanes)) if view.intra_hw == "nvlink" else 2)
    if multi:
        # the GPU's local NICs (one shared by several GPUs counts once for each)
        nics = (max(1, int(view.nics_per_node // max(1, round(view.ppn))))
                if view.nics_per_node else 0)
        if q["net_peer_rule"] == 0:
            m = 2
            while m * n > pre * 4 and m > 1:
                m //= 2
            peers.append(max(nics, 1, m))
        else:
            gbs = int(nics * view.nic_link_bandwidth / 1e9)
            per = int(q["net_bw_per_channel"] / 1e9)
            peers.append(max(nics, -(-gbs // per)) if nics else 2)
    per_peer = _pow2_up(min(peers)) if peers else 1
    if q["net_peer_rule"] == 1 and multi:
        batches = -(-n // q["work_per_batch"])
        while per_peer * batches > p2pn and per_peer > 1:
            per_peer //= 2
    else:
        per_peer = min(per_peer, p2pn)
    nmin = per_peer
    while nmin * n > p2pn and nmin > 1:
        nmin //= 2
    if multi:
        chunk = q[("chunk", "net")] * (q["net_chunk_ratio_arm_blackwell"]
                                       if view.arm_host and view.arch == "blackwell" else 1)
    else:
        chunk = q[("chunk", "nvlink" if view.intra_hw == "nvlink" else "pci")]
    return p2pn, per_peer, nmin, chunk


def p2p_protocol(rt, view, nbytes, local=False):
    """``(protocol, channels)`` NCCL runs one point-to-point message of ``nbytes`` with (to
    one peer): LL or Simple by the release's ``ll_rule`` (``src/enqueue.cc``), on the p2p
    channels (:func:`p2p_channels`), never the collective channel count. ``local``: the
    peer is in the sender's node (load/store domain) of a group across nodes.

    * rule 0 (until 2.21): the message is cut into chunks of ``calcP2pChunkSize`` (at least
      the smallest part, channels doubled from ``nChannelsMin`` while a part exceeds the
      largest, aligned to the smallest part); each chunk is its own operation, LL when it is
      at most ``ll_threshold`` bytes: the protocol reported is the first chunk's (a trailing
      chunk of at most the threshold runs LL: :func:`p2p_ll_bytes`);
    * rule 1 (2.22-2.28): LL when ``nbytes <= nChannelsMax x ll_threshold``; then the
      channels as rule 2's, from that protocol's step (an LL message's from the LL step,
      :func:`p2p_ll_step`);
    * rule 2 (2.29 on): channels = min(nChannelsMin, parts of the smallest part size),
      doubled while a part exceeds the largest (up to nChannelsMax); LL when ``nbytes <=
      channels x ll_threshold``.

    The smallest / largest part is the step / 8 and x 32 in one node, / 2 and x 1 across
    nodes; the step is the chunk (``p2pChunkSize``) but for rule 1's LL messages. Every
    rule runs LL only over a connection with an LL buffer (``protoLL &=
    conn->conn.buffs[NCCL_PROTO_LL] != nullptr``, every release): NCCL's p2p connection to a
    network peer has none unless ``NCCL_ALLOC_P2P_NET_LL_BUFFERS`` is set (``rt.p2p``
    ``"net_ll_buffers"`` 0, its default), so across nodes a message to a network peer is
    Simple whatever its size; a peer in the sender's own node is reached over the P2P or SHM
    transport, which allocates every protocol's buffer (``src/transport/p2p.cc``,
    ``shm.cc``), so its message chooses as in one node (``local``), with the group's part
    bounds (a group across nodes: the step / 2 and x 1).
    """
    proto, ch, _ll = _p2p_plan(rt, view, nbytes, local)
    return proto, ch


def p2p_ll_bytes(rt, view, nbytes, local=False):
    """Bytes of one point-to-point message of ``nbytes`` that NCCL carries in LL.

    Rules 1 and 2 (from 2.22): the whole message or none (:func:`p2p_protocol`). Rule 0 (until
    2.21; NVIDIA/nccl v2.21.5-1 ``src/enqueue.cc`` ``scheduleP2pTasksToPlan`` and
    ``addP2pToPlan``): every chunk of ``calcP2pChunkSize`` bytes chooses its own protocol, LL
    when it is at most ``ll_threshold`` (16 KiB): all the chunks when the chunk size is, else
    only a trailing remainder of at most the threshold.
    """
    return _p2p_plan(rt, view, nbytes, local)[2]


def _p2p_plan(rt, view, nbytes, local=False, copy=False):
    """``(first chunk's protocol, channels, LL bytes)`` of one p2p message (see
    :func:`p2p_protocol`, :func:`p2p_ll_bytes`); ``local``: to a peer in the sender's node;
    ``copy``: the rank's message to itself, never LL (``addP2pToPlan``: ``protoLL[dir] =
    !selfSend``). One message of :func:`_p2p_plan_array`."""
    import numpy as np

    kind = 2 if copy else 1 if local else 0
    ll, channels, ll_bytes = _p2p_plan_array(rt, view, np.array([nbytes], dtype=float),
                                             np.array([kind]))
    return ("LL" if ll[0] else "Simple"), int(channels[0]), int(ll_bytes[0])


def _p2p_plan_array(rt, view, nbytes, kind, channels=None):
    """NCCL's plan of each of an array of p2p messages: ``nbytes`` their bytes, ``kind`` their
    peers (0: a network peer, 1: a peer of the sender's node, 2: itself, the copy, never LL:
    ``addP2pToPlan``'s ``protoLL[dir] = !selfSend``), ``channels`` :func:`p2p_channels` of the
    group where the caller has it. Returns three arrays of ``nbytes``' shape: whether the
    (first chunk's) protocol is LL, the channels (parts), and the LL bytes (the rules:
    :func:`p2p_protocol`, :func:`p2p_ll_bytes`). Whole bytes (``ceil``) in integers, exact:
    int64 below 2**62 bytes, Python integers above (a rounded-up chunk must not wrap).

    >>> import fabric, numpy as np, topologies
    >>> from analysis._collectives import _GroupView, resolve_ranks
    >>> f = topologies.build("dgx-h100")
    >>> nodes, idx = resolve_ranks(f, None)
    >>> view = _GroupView(f, "all-to-all", nodes, idx, None, None, True)
    >>> sizes, kinds = np.array([4096.0, 1 << 20, 4096.0]), np.array([1, 1, 2])
    >>> [a.tolist() for a in _p2p_plan_array(fabric.runtime("nccl"), view, sizes, kinds)]
    [[True, False, False], [1, 4, 1], [4096, 0, 0]]
    """
    import numpy as np

    _p2pn, nmax, nmin, chunk = p2p_channels(rt, view) if channels is None else channels
    q = rt.p2p
    b = np.ceil(np.asarray(nbytes, dtype=float))
    if not np.isfinite(b).all():
        raise ValueError(f"a p2p message's bytes must be finite, got {nbytes!r}")
    if b.size and np.abs(b).max() >= 2.0**62:
        b = np.array([int(x) for x in b.ravel()], dtype=object).reshape(b.shape)
    else:
        b = b.astype(np.int64)
    kind = np.asarray(kind)
    if kind.shape != b.shape:
        kind = np.broadcast_to(kind, b.shape)
    # no LL buffer: the copy to itself, and a network peer's p2p connection (net.cc: shared
    # p2p buffers, LL only with NCCL_ALLOC_P2P_NET_LL_BUFFERS) whatever the size (a peer in
    # the node has one: p2p.cc, shm.cc)
    no_ll = kind == 2
    if view.n_nodes > 1 and not q["net_ll_buffers"]:
        no_ll = no_ll | (kind == 0)
    thr = np.where(no_ll, -1, q["ll_threshold"])
    lo, hi = _p2p_part_bounds(view, chunk)
    if q["ll_rule"] == 1:
        # the protocol first (thresholdLL), then the parts from that protocol's step
        ll = b <= nmax * thr
        ll_lo, ll_hi = _p2p_part_bounds(view, p2p_ll_step(rt))
        ch = _p2p_parts(nmin, nmax, np.where(ll, ll_lo, lo), np.where(ll, ll_hi, hi), b)
        return ll, ch, np.where(ll, b, 0).astype(np.int64)
    if q["ll_rule"] == 0:
        ch, size = _p2p_chunk_parts(nmin, nmax, lo, hi, b)
        ll = (size <= thr) | (b <= thr)
        tail = b % np.where(size > 0, size, 1)
        ll_bytes = np.where(ll, b, np.where((tail > 0) & (tail <= thr), tail, 0))
        # an empty message: one channel, LL where the connection has an LL buffer
        empty = b == 0
        return (np.where(empty, thr >= 0, ll), np.where(empty, 1, ch),
                np.where(empty, 0, ll_bytes).astype(np.int64))
    ch = _p2p_parts(nmin, nmax, lo, hi, b)
    ll = b <= ch * thr
    return ll, ch, np.where(ll, b, 0).astype(np.int64)


def _p2p_plans(rt, view, nbytes, kind):
    """:func:`_p2p_plan_array` of every distinct message of an array: ``nbytes`` each
    message's bytes, ``kind`` its peer (0: a network peer, 1: a peer of the sender's node, 2:
    itself, the copy), broadcast to ``nbytes``' shape. Returns ``(values, kinds, plan,
    index)``: each distinct (bytes, kind) once (:func:`_distinct_messages`), ``plan`` the
    three arrays of their plans (LL, channels, LL bytes) and for each message the position of
    its own.

    A view (one cost's group) finds the distinct messages of an array once and plans them
    once per set of runtime plan facts (the release's p2p rules and LL step, the group's p2p
    channels; the view's ``runtime_memo``), so an all-to-allv's messages
    (:func:`_p2p_messages`) and batches (:func:`_p2p_pair_parts`), and their retiming under a
    later revision, read one plan of each distinct pair.
    """
    import numpy as np

    nbytes = np.asarray(nbytes, dtype=float)
    kind = np.asarray(kind, dtype=np.int64)
    if kind.shape != nbytes.shape:
        kind = np.broadcast_to(kind, nbytes.shape)
    values, kinds, index, plans = _distinct_messages(view, nbytes, kind)
    channels = p2p_channels(rt, view)
    key = (p2p_ll_step(rt), frozenset(rt.p2p.items()), channels)
    plan = plans.get(key)
    if plan is None:
        plan = _p2p_plan_array(rt, view, values, kinds, channels)
        for a in plan:
            a.flags.writeable = False   # shared by the view's readers
        plans[key] = plan
    return values, kinds, plan, index


def _distinct_messages(view, nbytes, kind):
    """``(values, kinds, index, plans)`` of :func:`_p2p_plans`: the distinct (bytes, kind) of
    the messages, kinds ascending and bytes ascending within a kind, each message's position
    among them, and the plans made of them so far (by runtime plan facts). They do not depend
    on the runtime, so a view finds them once for the same messages (sorting a large matrix's
    pairs was most of a retimed cost)."""
    import numpy as np

    key = ("distinct messages", nbytes.shape, nbytes.tobytes(), kind.astype(np.int8).tobytes())
    got = view.runtime_memo.get(key)
    if got is None:
        index = np.empty(nbytes.shape, dtype=np.int64)
        values, kinds = [], []
        present = np.flatnonzero(np.bincount(kind.ravel(), minlength=3)).tolist()
        for k in present:
            # one kind: every message (no selection to copy)
            sel = kind == k if len(present) > 1 else ...
            uniq, where = _sorted_distinct(nbytes[sel].ravel())
            index[sel] = (sum(map(len, values)) + where).reshape(np.shape(index[sel]))
            values.append(uniq)
            kinds.append(np.full(len(uniq), k, dtype=np.int64))
        values = np.concatenate(values) if values else np.empty(0)
        kinds = np.concatenate(kinds) if kinds else np.empty(0, dtype=np.int64)
        for a in (index, values, kinds):
            a.flags.writeable = False   # shared by every runtime's plans of the view
        got = view.runtime_memo[key] = (values, kinds, index, {})
    return got


def _sorted_distinct(x):
    """``np.unique(x, return_inverse=True)`` of a 1-d array, the same two arrays: where a
    sample says few values repeat often in many (an all-to-allv of a few pair sizes), numpy's
    hashed unique and a search of the few values, which spare the sort of every element (~10x
    at a million pairs); else the sort.

    >>> import numpy as np
    >>> uniq, where = _sorted_distinct(np.array([3.0, 1.0, 3.0, 2.0]))
    >>> uniq.tolist(), where.tolist()
    ([1.0, 2.0, 3.0], [2, 0, 2, 1])
    """
    import numpy as np

    if len(x) > 4096 and len(np.unique(x[::len(x) // 4096])) <= 1024:
        uniq = np.unique(x)
        if len(uniq) <= 4096:
            return uniq, np.searchsorted(uniq, x)
    uniq, where = np.unique(x, return_inverse=True)
    return uniq, where.ravel()


def _p2p_chunk_parts(nmin, nmax, lo, hi, nbytes):
    """Before 2.22, NCCL's channels and part size for p2p messages of ``nbytes`` (an array of
    whole bytes; ``src/enqueue.cc`` ``calcP2pChunkSize``, v2.18.3-1 .. v2.21.5-1):
    ``nChannelsMin`` doubled while ``divUp(bytes, channels)`` exceeds the largest part
    ``hi``, up to ``nChannelsMax``, the part at least the smallest ``lo`` and rounded up to
    it; the message is cut into parts of that size, the last one the rest. Returns
    ``(channels, part)``.

    >>> import numpy as np
    >>> [a.tolist() for a in _p2p_chunk_parts(2, 8, 65536, 1 << 24, np.array([3 << 20, 1024]))]
    [[2, 2], [1572864, 65536]]
    """
    import numpy as np

    b = nbytes
    ch = np.full(b.shape, nmin, dtype=np.int64)
    size = np.maximum(lo, -(-b // ch))
    while True:
        grow = (size > hi) & (ch <= nmax // 2)
        if not grow.any():
            break
        ch = np.where(grow, ch * 2, ch)
        size = np.where(grow, -(-b // ch), size)
    return ch, -(-size // lo) * lo


def _p2p_parts(nmin, nmax, lo, hi, nbytes):
    """NCCL's channels for p2p messages of ``nbytes`` (an array of whole bytes;
    ``addP2pToPlan``'s ``nChannels``, 2.22 on): ``min(nChannelsMin, divUp(bytes,
    minPartSize))``, doubled while a part exceeds ``maxPartSize`` up to ``nChannelsMax``; 1 for
    an empty message. ``lo`` / ``hi`` are the smallest / largest part (:func:`p2p_protocol`;
    scalars, or arrays of the messages' own).

    >>> import numpy as np
    >>> _p2p_parts(1, 16, 65536, 131072, np.array([1024, 1 << 20, 0])).tolist()
    [1, 8, 1]
    >>> _p2p_parts(4, 32, 65536, 16 << 20, np.array([0])).tolist()
    [1]
    """
    import numpy as np

    b = nbytes
    some = b > 0
    ch = np.where(some, np.minimum(nmin, -(-b // lo)), 1)
    part = np.maximum(lo, -(-b // ch))
    while True:
        grow = some & (part > hi) & (ch <= nmax // 2)
        if not grow.any():
            break
        ch = np.where(grow, ch * 2, ch)
        part = np.where(grow, -(-b // ch), part)
    return ch.astype(np.int64)


def p2p_batches(rt, view, nbytes=1):
    """Work batches NCCL's busiest p2p channel runs one after another for an all-to-all
    (every rank one round with each rank, itself included) of ``nbytes`` per peer, or for an
    all-to-allv whose ``nbytes`` is the ``p x p`` matrix of each pair's bytes (sender by row,
    the diagonal each rank's copy to itself; every pair a message, an empty one included: a
    0-byte ncclSend / ncclRecv is a task like any other, one channel's work (``addP2pToPlan``:
    ``bytes == 0`` -> 1 channel), and PyTorch's ``all_to_all_single`` posts every peer's pair
    whatever its count on NCCL >= 2.14: docs/sources.md).

    NCCL's placement replayed (2.22 on; before, ``batch_rule`` 0, not read: one): round ``r``
    of the rank's schedule starts at its base (``ncclP2pChannelBaseForRound``): in one node
    ``r``; across nodes ``(r / L) x divUp(L, 8) + (r % L) / 8``, with ``L`` the largest node's
    ranks (``maxLocalRanks``, ``net_round_rule`` 0, 2.22-2.28.3) or the schedule group
    (``P2P_SCHEDULE_GROUP_SIZE``, 8, cut to its gcd with every node's ranks that it does not
    divide: ``net_round_rule`` 1-2, 2.28.7 on), so the up to 8 rounds of one group share a
    base. A round sends one message and receives one (:func:`p2p_schedule`: the peers of
    round ``r``), and ``addP2pToPlan`` adds its work to ``max(send parts, receive parts)``
    channels, each message's parts (its channels, :func:`p2p_protocol`) from its own bytes and
    connection (the copy to itself never LL: ``protoLL = !selfSend``); they take the channels
    ``(base + part) mod p2pnChannels`` with the base's low ``log2(p2pnChannels)`` bits reversed
    from 2.28 (``reverse_rounds`` 1), and ``(base + reverseBits(part)) mod p2pnChannels`` in
    2.22-2.27 (``ncclP2pChannelForPart``); rounds are added in order, and a channel opens a new
    batch at 8 works (a round's parts never share a channel), and from 2.28.7 at a round of
    another round / 8 group (``batch_rule`` 2; ``src/enqueue.cc`` ``addWorkBatchToPlan``).
    The operation's batches are its busiest rank's (:func:`_p2p_replay`, every rank round by
    round, where rounds differ in parts; where every round of every rank has the same parts,
    one rank's placement is every rank's: :func:`_busiest_p2p_channel`; in an all-to-allv, a
    rank whose every message has the same parts places as one rank of an all-to-all of those
    parts, and only the other ranks are replayed).
    So in one node rounds ``p2pnChannels`` apart share a channel (at one part and at least 8
    channels ``ceil(p / p2pnChannels)`` batches under rule 2, ``ceil(that / 8)`` under rule 1;
    with fewer channels the rounds of one round / 8 group share a batch), and across nodes the
    groups do (e.g. 64 nodes of 8 on 16 channels: 4 batches); a large message's parts can
    stack further rounds on a channel.

    >>> import fabric, topologies
    >>> from analysis._collectives import _GroupView, resolve_ranks
    >>> f = topologies.build("sd200-ultra:chip=h100")
    >>> nodes, idx = resolve_ranks(f, None)
    >>> p2p_batches(fabric.runtime("nccl"), _GroupView(f, "all-to-all", nodes, idx, None, None, True))
    4
    """
    import numpy as np

    q = rt.p2p
    rule = q["batch_rule"]
    if rule == 0:
        return 1
    p2pn = p2p_channels(rt, view)[0]
    per_batch = int(q["work_per_batch"])
    if view.n_nodes > 1:
        counts = [int(c) for c in view.node_ranks()]
        if q["net_round_rule"] == 0:
            group = max(counts)
        else:
            group = _p2p_group_size(per_batch, counts)
    else:
        group = 0
    reverse = int(q["reverse_rounds"])
    p = int(view.p)
    parts = _p2p_pair_parts(rt, view, nbytes)
    if isinstance(parts, int):
        return _busiest_p2p_channel(rule, reverse, p, group, p2pn, parts, per_batch)
    most, ranks = 0, np.arange(p)
    if isinstance(parts, np.ndarray):
        # an all-to-allv: a rank whose every message (sent and received) has the same parts
        # c has every round on c, i.e. one rank's placement of an all-to-all of c parts; only
        # the other ranks are replayed
        table = parts
        c = table.min(axis=1)
        alike = (c == table.max(axis=1)) & (c == table.min(axis=0)) & (c == table.max(axis=0))
        most = max((_busiest_p2p_channel(rule, reverse, p, group, p2pn, int(k), per_batch)
                    for k in np.unique(c[alike]).tolist()), default=0)
        ranks = np.flatnonzero(~alike)

        def parts(i, j):
            return table[i, j]
        if not ranks.size:
            return most
    rounds = ((parts(ranks, send), parts(recv, ranks))
              for send, recv in p2p_schedule(rt, view, ranks))
    return max(most, _p2p_replay(rule, reverse, group, p2pn, per_batch, rounds, len(ranks)))


def _p2p_group_size(size, counts):
    """NCCL's p2p schedule group (``p2pSchedGroupSize``, 2.28.7 on, ``src/init.cc``
    ``ncclP2pSchedule``): ``size`` (``P2P_SCHEDULE_GROUP_SIZE``) cut to its gcd with every
    node's rank count it does not divide or exceeds."""
    for c in counts:
        if c % size or c < size:
            size = math.gcd(size, int(c))
    return size


def _quadratic_deltas(n):
    """NCCL's peer deltas over ``n`` (``src/init.cc``, p2p schedule): ``(x^2 + x) / 2`` mod
    ``pow2Up(n)`` for x = 0, 1, ..., those below ``n``.

    >>> _quadratic_deltas(16)
    [0, 1, 3, 6, 10, 15, 5, 12, 4, 13, 7, 2, 14, 11, 9, 8]
    >>> _quadratic_deltas(3)
    [0, 1, 2]
    """
    m = _pow2_up(n)
    out, d = [], 0
    for k in range(1, m + 1):
        if d < n:
            out.append(d)
        d = (d + k) & (m - 1)
    return out


def p2p_schedule(rt, view, ranks=None):
    """NCCL's point-to-point schedule for the group (``comm->p2pSchedule``, built at init):
    for each round ``r`` in order, ``(send, recv)``, each rank's peers (group positions) that
    round, as arrays over the ranks (``ranks``: over those positions only). Nodes (the model's load/store domains) are numbered in
    the order of their first rank and a node's ranks in group order (``src/init.cc``:
    ``nodesFirstRank``, ``localRankToRank``). By the release's ``rt.p2p["net_round_rule"]``:

    * 0 (2.19-2.28.3, the init.cc block 'Build p2p schedule'): over node deltas ``dn`` then
      local deltas ``dl``, each :func:`_quadratic_deltas`, a rank sends to local rank ``local +
      dl`` of node ``node + dn`` and receives from ``local - dl`` of ``node - dn`` (mod); nodes
      of unequal ranks make it flat: one node of every rank in rank order;
    * 1 (2.28.7, ``ncclP2pSchedule``): the nodes cut into groups of ``P2P_SCHEDULE_GROUP_SIZE``
      8 (:func:`_p2p_group_size`), over quadratic group deltas then local deltas 0, 1, ...,
      the group's size - 1 in order;
    * 2 (2.28.9 on): as 1, but in one node the group is all its ranks (``maxLocalRanks``).

    Round 0 is every rank's copy to itself.

    >>> import fabric, topologies
    >>> from analysis._collectives import _GroupView, resolve_ranks
    >>> f = topologies.build("dgx-h100")
    >>> nodes, idx = resolve_ranks(f, None)
    >>> view = _GroupView(f, "all-to-all", nodes, idx, None, None, True)
    >>> [int(s[1]) for s, _r in p2p_schedule(fabric.runtime("nccl@2.28.3"), view)]
    [1, 2, 4, 7, 3, 0, 6, 5]
    >>> [int(s[1]) for s, _r in p2p_schedule(fabric.runtime("nccl"), view)]
    [1, 2, 3, 4, 5, 6, 7, 0]
    """
    import numpy as np

    dom = view.node_labels()
    p = len(dom)
    _labels, first = np.unique(dom, return_index=True)
    nodes = [np.flatnonzero(dom == dom[i]) for i in sorted(first)]
    counts = [len(k) for k in nodes]
    rule = rt.p2p["net_round_rule"]
    if rule == 0:
        if len(set(counts)) == 1:
            size, inner = counts[0], _quadratic_deltas(counts[0])
            groups = nodes
        else:       # flat: one node of every rank
            size, inner = p, _quadratic_deltas(p)
            groups = [np.arange(p)]
    else:
        size = max(counts) if rule == 2 and len(nodes) == 1 else int(rt.p2p["work_per_batch"])
        size = _p2p_group_size(size, counts)
        inner = range(size)
        groups = [k[i:i + size] for k in nodes for i in range(0, len(k), size)]
    slot = np.array(groups, dtype=np.int64)          # [group, local] -> rank
    grp = np.empty(p, dtype=np.int64)
    loc = np.empty(p, dtype=np.int64)
    for g, members in enumerate(groups):
        grp[members] = g
        loc[members] = np.arange(len(members))
    if ranks is not None:
        grp, loc = grp[ranks], loc[ranks]
    n = len(groups)
    for dg in _quadratic_deltas(n):
        sg, rg = (grp + dg) % n, (grp - dg) % n
        for dl in inner:
            yield slot[sg, (loc + dl) % size], slot[rg, (loc - dl) % size]


def _p2p_pair_parts(rt, view, nbytes):
    """The parts (:func:`_p2p_plan`'s channels) of every message of an all-to-all of ``nbytes``
    per peer or of an all-to-allv's ``p x p`` matrix of pair bytes: an int where every message
    has the same, else a function ``(senders, receivers) -> parts`` over arrays of ranks (an
    all-to-all's) or the ``p x p`` table of each pair's parts (an all-to-allv's). A
    message's parts follow its bytes and its connection: to itself (never LL), to a peer of
    its node, to a network peer."""
    import numpy as np

    p = int(view.p)
    dom = view.node_labels()
    if np.ndim(nbytes) == 0:
        # the message to itself, to a peer of the node, to a network peer (those the group has)
        kind = _all_to_all_kinds(view)
        _values, _kinds, plan, index = _p2p_plans(rt, view, np.full(len(kind), float(nbytes)),
                                                  kind)
        parts = dict(zip(kind, plan[1][index].tolist()))
        copy = parts[2]
        near, far = parts.get(1, copy), parts.get(0, copy)
        if copy == near == far:
            return copy
        return lambda i, j: np.where(i == j, copy, np.where(dom[i] == dom[j], near, far))
    pairs = np.asarray(nbytes, dtype=float).reshape(p, p)
    _values, _kinds, plan, index = _p2p_plans(rt, view, pairs, _pair_kinds(view))
    table = plan[1][index]
    if (table == table[0, 0]).all():
        return int(table[0, 0])
    return table


def _p2p_channel_of(reverse, p2pn, group, per_batch, r, parts):
    """The channels of round ``r``'s parts 0 .. ``parts`` - 1 (``r`` an array: one row a
    round): its base (``ncclP2pChannelBaseForRound``; ``group`` 0 in one node, else the rounds
    sharing a base across nodes), reversed from 2.28 with the parts after it, else the parts
    reversed (``ncclP2pChannelForPart``), mod ``p2pn``."""
    import numpy as np

    r = np.asarray(r)
    if group:
        base = (r // group) * -(-group // per_batch) + (r % group) // per_batch
    else:
        base = r
    bits = max(0, (p2pn - 1).bit_length())

    def rev(x):   # reverseBits(x, log2 p2pnChannels): the low bits, reversed
        out = np.zeros_like(x)
        for i in range(bits):
            out |= ((x >> i) & 1) << (bits - 1 - i)
        return out

    base = base & (p2pn - 1)
    delta = np.arange(parts)
    if reverse:      # 2.28 on: the base reversed, the parts after it
        base = rev(base)
    else:            # 2.22-2.27: the base as it is, the parts reversed
        delta = rev(delta)
    return (base[..., None] + delta) & (p2pn - 1)


def _p2p_replay(rule, reverse, group, p2pn, per_batch, rounds, p):
    """Batches on the busiest channel of the busiest rank: every rank's rounds in order, each
    round's ``(send parts, receive parts)`` (arrays over the ranks) adding a work to the
    channels of ``max`` of the two parts (``addP2pToPlan``), a channel's new batch at
    ``per_batch`` works (``batch_rule`` 1) or at a round of another round / ``per_batch`` group
    (2)."""
    import numpy as np

    count = np.zeros((p, p2pn), dtype=np.int64)
    last = np.full((p, p2pn), -1, dtype=np.int64)
    for r, (send, recv) in enumerate(rounds):
        k = np.maximum(send, recv)
        top = int(k.max())
        for part, c in enumerate(_p2p_channel_of(reverse, p2pn, group, per_batch, r, top)):
            on = k > part
            if rule == 1:
                count[on, c] += 1
            else:
                new = on & (last[:, c] != r // per_batch)
                count[new, c] += 1
                last[on, c] = r // per_batch
    if rule == 1:
        return int(-(-count.max() // per_batch))
    return int(count.max())


def _p2p_part_bounds(view, chunk):
    """``(minPartSize, maxPartSize)`` of a p2p message: the step / 2 and x 1 across nodes,
    / 8 and x 32 in one node (``src/enqueue.cc`` ``addP2pToPlan``)."""
    return (chunk // 2, chunk) if view.n_nodes > 1 else (chunk // 8, chunk * 32)


def p2p_ll_step(rt):
    """Bytes of an LL step of NCCL's LL buffer, flags included: ``buffSizes[LL] /
    NCCL_STEPS`` = NCCL_LL_LINES_PER_THREAD x NCCL_LL_MAX_NTHREADS 16-byte lines
    (``src/init.cc`` DEFAULT_LL_BUFFSIZE; ``rt.factors["ll_lines_per_thread"]``,
    ``rt.threads["LL"]``). From 2.22 to 2.28 ``addP2pToPlan`` cuts an LL message's parts
    from this step, a Simple message's from ``p2pChunkSize`` (``stepSize =
    buffSizes[protocol] / NCCL_STEPS``, then ``p2pChunkSize`` for Simple; NVIDIA/nccl
    v2.22.3-1 .. v2.28.9-1 ``src/enqueue.cc``); from 2.29 every message's from
    ``p2pChunkSize`` ("assume SIMPLE protocol to start with").

    >>> import fabric
    >>> p2p_ll_step(fabric.runtime("nccl@2.25.1"))
    65536
    """
    ll = PROTOCOLS["LL"]
    return int(rt.factors["ll_lines_per_thread"] * rt.threads["LL"] * ll.line)


@functools.lru_cache(maxsize=256)
def _busiest_p2p_channel(rule, reverse, p, group, p2pn, parts, per_batch):
    """Batches on the busiest p2p channel (:func:`p2p_batches`'s placement): ``group`` 0 in
    one node, else the rounds sharing a base across nodes.

    >>> _busiest_p2p_channel(2, 1, 512, 8, 16, 1, 8), _busiest_p2p_channel(1, 0, 512, 8, 16, 1, 8)
    (4, 4)
    >>> _busiest_p2p_channel(2, 1, 128, 0, 32, 1, 8), _busiest_p2p_channel(2, 1, 128, 8, 16, 1, 8)
    (4, 1)
    """
    import numpy as np

    r = np.arange(p)
    chan = _p2p_channel_of(reverse, p2pn, group, per_batch, r, parts).ravel()
    if rule == 1:
        works = np.bincount(chan, minlength=p2pn)
        return int(-(-works.max() // per_batch))
    # rule 2: a channel's works come in round order, one batch per round / 8 group it holds
    grp = np.repeat(r // per_batch, parts)
    pairs = np.unique(chan * (p // per_batch + 1) + grp)
    return int(np.bincount(pairs // (p // per_batch + 1), minlength=p2pn).max())


#: One further work batch of NCCL's point-to-point kernel, counted in NCCL's own compiled code
#: (:func:`p2p_batch_chain`), per GPU generation: per stretch of the batch's serial path, its
#: scheduled cycles and the loads it waits for, ``{EXCHANGE_LATENCY name: (waits, cycles of
#: those waits the warp's own issue already covered)}``. Read from NVIDIA/nccl v2.29.2-1
#: ``ncclDevKernel_SendRecv`` (``src/device/common.h``, ``sendrecv.h``, ``prims_ll.h``; the
#: generated ``sendrecv.cu``), compiled by nvcc 13.0 with NCCL's flags (``-O3
#: -maxrregcount=96``, relocatable) for sm_90 (``"hopper"``) and sm_100 (``"blackwell"``),
#: cuobjdump -sass; the path of one batch of one work (a 1 KiB LL send and receive, one
#: channel) followed instruction by instruction (Hopper / Blackwell):
#:
#: * ``send``: the loop top (abort flag), ``profiler(START)`` (thread 0; profiling off), the
#:   specialised ``RunWorkBatch`` (warp 0: this channel's part of the work, a 32-bit division;
#:   two ballots on the converged path, two ``__syncthreads``), then warp 0's send: the LL
#:   Primitives' constructor (``channel->peers[peer]``, the connection's fields, a
#:   ``ld.volatile`` of its head), the named barrier of ``waitSend``, the ``ld.volatile`` of
#:   the user's bytes, up to the ``st.volatile.v4`` of its LL line: 424 / 404 instructions,
#:   1,321 / 1,310 scheduled cycles (sm_100 splits warp 0's send and receive part bounds by a
#:   branch: both sides counted);
#: * ``receive``: from the poll that sees the line to the end of ``run()`` (the byte stores
#:   to the user buffer, ``postRecv``'s barrier and head store, the destructor's step store
#:   and barrier): 92 / 86 instructions, 337 / 314 cycles;
#: * ``reload``: the batch loop's ``__syncthreads``, ``profiler(STOP)``, thread 0's
#:   ``loadWorkBatchToShmem`` (the next batch header from the kernel parameters, LDC, and its
#:   work from the persistent work buffer, a global load), ``__syncthreads``, the abort check:
#:   174 / 144 instructions, 619 / 521 cycles.
#:
#: A load's latency is the project's measured one for the generation (``shared_load``,
#: ``l1_hit`` for a local spill and for the read-only ``peers`` array and connection
#: pointers, ``l2_hit`` for a volatile load, the connection's step and the work, ``const_l15``
#: for the header); only the part of it the warp's own instructions did not cover is paid
#: (in-order issue: a load issues, the warp goes on until the first instruction that waits on
#: its scoreboard); the waits are those that bind at the generation's own latencies. Not
#: counted (no sourced figure; each would add): the latencies of special-register reads,
#: barriers and taken branches, instruction-cache misses, and any unfair sharing of the SM's
#: issue among the block's 20 warps (the issue capacity, one warp instruction per clock per SM
#: partition, does not bind: on Hopper partition 0 issues 388 instructions before the first
#: block barrier against warp 0's 883-cycle chain, 529 against 1,048 in ``reload``). Hopper:
#: 3,746.7 cycles, 1.89 us; Blackwell: 3,679.5 cycles, 1.86 us.
P2P_BATCH_CHAIN = {
    "hopper": (
        ("send", 1321, {"shared_load": (15, 168.764), "l1_hit": (8, 137.0),
                        "l2_hit": (3, 323.4)}),
        ("receive", 337, {"l1_hit": (3, 66.0), "shared_load": (1, 2.0)}),
        ("reload", 619, {"shared_load": (9, 119.646), "const_l15": (1, 18.0),
                         "l2_hit": (1, 21.0)}),
    ),
    "blackwell": (
        ("send", 1310, {"shared_load": (15, 161.764), "l1_hit": (6, 87.0), "l2_hit": (2, 60.0)}),
        ("receive", 314, {"l1_hit": (3, 33.0), "shared_load": (1, 2.0)}),
        ("reload", 521, {"shared_load": (7, 56.882), "const_l15": (1, 21.0),
                         "l2_hit": (1, 15.0)}),
    ),
}


def p2p_batch_chain(arch):
    """Seconds one further work batch of NCCL's point-to-point kernel holds its channel, beyond
    the handoff of its data (the step): :data:`P2P_BATCH_CHAIN`'s scheduled cycles at
    ``EXCHANGE_LATENCY[arch]["cycle"]`` plus each waited load's latency less the cycles the
    warp's issue had already covered.

    The batches of one channel run one after another in one thread block (``ncclKernelMain``'s
    loop: a batch's last receive, the block's barrier, the next batch's load, its send), so a
    further batch costs this plus one step; the kernel's first batch is inside the kernel
    floor. Counted in 2.29.2's code (sm_90 for Hopper, sm_100 for Blackwell) and taken for
    every release modelled (an assumption: the batch loop is the same from 2.19) and for
    Simple batches too (their constructor loads the same connection; the Simple step itself
    is the protocol's). A lower bound (what is not counted is listed at
    :data:`P2P_BATCH_CHAIN`).

    >>> round(p2p_batch_chain("hopper") * 1e9, 1), round(p2p_batch_chain("blackwell") * 1e9, 1)
    (1892.3, 1858.4)
    >>> p2p_batch_chain("volta")
    Traceback (most recent call last):
    ...
    fabric.SpecError: no counted NCCL p2p batch: unknown architecture 'volta'; known: blackwell, hopper
    """
    if not isinstance(arch, str) or arch not in P2P_BATCH_CHAIN:
        raise SpecError("no counted NCCL p2p batch: "
                        + unknown_fault(arch, "architecture", P2P_BATCH_CHAIN))
    lat = EXCHANGE_LATENCY[arch]
    cycle = lat["cycle"].value
    total = 0.0
    for _stretch, cycles, waits in P2P_BATCH_CHAIN[arch]:
        total += cycles * cycle
        for name, (count, covered) in waits.items():
            total += max(0.0, count * lat[name].value - covered * cycle)
    return total


def p2p_drain(rt, view, op, n):
    """Seconds one NCCL point-to-point operation pays after its last byte crosses to the
    peers: the copy of each Simple part's last chunk out of the receiver's connection buffer.

    A Simple send or receive runs ``ProtoSimple<1, 1>`` (``src/device/sendrecv.h`` runSend /
    runRecv, every release 2.18-2.30; ``rt.p2p["simple_slices"]``): one slice a chunk of
    ``p2pChunkSize`` (``prims_simple.h`` genericOp), the tail posted after the whole slice.
    Over NVLink on Hopper and Blackwell the connection is P2P write (P2P read only between two
    sm80 GPUs, ``src/graph/paths.cc``): the sender writes into the receiver's Simple buffer,
    and the receiver copies a chunk into the user's buffer only once all of it is written.
    Per channel part the write and the copy-out are a two-stage pipeline: the parts' writes
    are the bytes' time the model has, and after them the last slice of every part is copied
    out, ``min(part, chunk / slices)`` a part (parts taken equal: ``min(bytes, channels x
    chunk / slices)`` a message). Priced for the busiest receiver's messages from peers of its
    own node (the P2P or SHM transport: a chunk of ``p2pChunkSize`` as it is; a network peer's
    chunk is cut by the message's size and its copy-out waits on the proxy: not priced), read
    and written once at ``rt.p2p["drain_hbm_share"]`` of the chip's HBM bandwidth (an
    ASSUMPTION, a Parameter with its own source, not a bound: no copy rate of a thread block
    is sourced, and the chunk just written may still be in the receiver's L2, whose rate is
    not sourced either); 0 where the fabric names no chip. LL messages (their
    receiver reads each 16-byte line as it lands) and a rank's copy to itself pay none, nor,
    until 2.22 (``rt.p2p["direct_unregistered"]``), a peer of the receiver's own process (the
    sender wrote into the user's buffer: ``view.process_devices``, cost()'s
    ``devices_per_process``; from 2.23 that path needs registered buffers). ``n``: an
    all-to-all's bytes a rank, a send/recv's message, an all-to-allv's total.

    >>> import fabric, topologies
    >>> from analysis._collectives import _GroupView, resolve_ranks
    >>> f = topologies.build("dgx-h100")
    >>> nodes, idx = resolve_ranks(f, None)
    >>> view = _GroupView(f, "all-to-all", nodes, idx, None, None, True)
    >>> rt = fabric.runtime("nccl@2.29.2")
    >>> round(p2p_drain(rt, view, "all-to-all", 16 << 20) * 1e6, 3)   # 7 x 2 MiB, 4 parts each
    8.764
    >>> p2p_drain(rt, view, "all-to-all", 512)   # LL
    0.0
    """
    import numpy as np

    chip = getattr(view.fabric, "chip", None)
    if chip is None or view.p < 2:
        return 0.0
    q = rt.p2p
    # ranks k N .. k N + N - 1 share a process; before 2.23 their messages went direct
    shared = view.process_devices if q["direct_unregistered"] else 1
    proc = np.arange(view.p) // shared
    if op == "all-to-allv":
        sizes = np.asarray(view.M, dtype=float) * n
        kind = _pair_kinds(view)
    elif op == "all-to-all":
        kind = np.asarray(_all_to_all_kinds(view))
        sizes = np.full(len(kind), n / view.p)
    else:
        sizes, kind = np.array([float(n)]), np.array([0 if view.n_nodes > 1 else 1])
    values, kinds, (_ll, channels, ll_bytes), index = _p2p_plans(rt, view, sizes, kind)
    simple = values - np.minimum(ll_bytes, values)
    each = np.where(kinds == 1, _p2p_last_slices(rt, view, values, simple, channels), 0.0)[index]
    if op == "all-to-allv":
        if shared > 1:
            each = np.where(proc[:, None] == proc[None, :], 0.0, each)
        most = float(each.sum(axis=0).max())
    elif op == "all-to-all":
        if 1 not in kind.tolist():
            return 0.0
        # from every other rank of the receiver's node outside its process
        if shared == 1:
            peers = int(view.node_ranks().max()) - 1
        else:
            at_node = np.unique(view.node_labels(), return_inverse=True)[1].ravel()
            both = at_node * view.p + proc
            peers = int((np.bincount(at_node)[at_node]
                         - np.bincount(both, minlength=both.max() + 1)[both]).max())
        most = float(each[kind.tolist().index(1)] * peers)
    else:
        # nccl-tests' ring of messages: one from another process, unless one holds them all
        most = float(each[0]) if proc[-1] != proc[0] else 0.0
    return 2.0 * most / (chip.hbm_bandwidth * q["drain_hbm_share"])


def _p2p_last_slices(rt, view, nbytes, simple, channels):
    """Bytes of the last slice of each Simple part of p2p messages, summed over the message's
    parts: what :func:`p2p_drain` copies out after the bytes. ``nbytes``: each message's whole
    bytes, ``simple`` its Simple bytes (all, none, or before 2.22 all but an LL tail),
    ``channels`` its parts (:func:`_p2p_plan_array`). A part is copied out one slice at a time
    (``runRecv``'s loop, ``ProtoSimple<1, 1>``: a slice of ``p2pChunkSize /
    rt.p2p["simple_slices"]``), each slice once it is written, so the earlier slices' copies
    overlap the next writes and only the last slice, ``part - slice x floor((part - 1) /
    slice)``, follows the part's last byte. The parts: from 2.22 ``ncclP2pPartBounds``
    (``src/include/device.h``): ``alignUp(divUp(bytes, parts), rt.p2p["part_align"])`` each,
    the last the rest; before (``part_align`` 0) ``calcP2pChunkSize``'s size
    (:func:`_p2p_chunk_parts`), the last the rest. Arrays of bytes (int64, Python integers or
    floats: an all-to-all's n / p need not be whole); returns floats.

    >>> import fabric, numpy as np, topologies
    >>> from analysis._collectives import _GroupView, resolve_ranks
    >>> f = topologies.build("dgx-h100")
    >>> nodes, idx = resolve_ranks(f, ["chip0", "chip1"])
    >>> view = _GroupView(f, "send-recv", nodes, idx, None, None, True)
    >>> b = np.array([3 << 20, 2 << 20, 100_000])   # parts of 768 KiB, 512 KiB, 28,672 B
    >>> _p2p_last_slices(fabric.runtime("nccl"), view, b, b, np.array([4, 4, 4])).tolist()
    [1048576.0, 2097152.0, 100000.0]
    """
    import numpy as np

    q = rt.p2p
    _p2pn, nmax, nmin, chunk = p2p_channels(rt, view)
    piece = chunk // q["simple_slices"]
    if q["part_align"]:
        a = q["part_align"]
        per = -(-simple // channels)
        full = -(-per // a) * a
    else:
        lo, hi = _p2p_part_bounds(view, chunk)
        full = _p2p_chunk_parts(nmin, nmax, lo, hi, nbytes)[1]
    # in floats: a message's bytes are the model's (an all-to-all's n / p), not always whole
    full = np.maximum(np.asarray(full, dtype=float), 1.0)
    simple = np.asarray(simple, dtype=float)
    whole = simple // full
    rest = simple - whole * full

    def last(x):
        return np.where(x > 0, x - piece * np.maximum(np.ceil(x / piece) - 1, 0), 0.0)

    return whole * last(full) + last(rest)


def _p2p(rt, view, op, n, algorithm, ops=1):
    """Send/recv and all-to-all: grouped point-to-point transfers; ``ops`` grouped operations
    run as further work batches of one kernel (:func:`p2p_batch_chain`)."""
    t = view.transfer(algorithm, op)
    # one message's bytes: an all-to-all's n is one rank's (n / p to each peer), an
    # all-to-allv's the traffic matrix's total (cost()), each pair its own
    per_peer = n if op == "send-recv" else n / max(1, view.p)
    # the channels reported are the message's p2p channels (NCCL's, not the collective count);
    # every message chooses its protocol from its own bytes and its peer's connection (an
    # all-to-allv's pairs; across nodes the node's peers and the network's: _p2p_messages)
    # LL carries 8 data bytes per 16-byte line (the protocol's efficiency, not a tuner
    # figure): a message's LL bytes (all, none, or before 2.22 a trailing chunk) cross at
    # that rate
    eff = 1 / PROTOCOLS["LL"].efficiency
    multi = view.n_nodes > 1
    pairs = wire = None
    if op == "all-to-allv":
        import numpy as np

        # every pair, the copies to itself included (kind 2: no message to a peer), so the
        # messages and the batches (p2p_batches) read one set of distinct pairs
        pairs = np.asarray(view.M, dtype=float) * n
        sizes, kind = pairs, _pair_kinds(view)
    elif op == "all-to-all":
        import numpy as np

        # one message of each kind the group has, and the copy (left out of the messages),
        # the batches' own (p2p_batches): across nodes a rank's messages can be of two kinds,
        # to the peers of its node and to the network's (p2p_protocol: only the former have
        # an LL buffer)
        kind = _all_to_all_kinds(view)
        sizes = np.full(len(kind), float(per_peer))
    else:
        sizes, kind = (per_peer,), (0 if multi else 1,)
    proto, nc, step_lat, share, ll = _p2p_messages(rt, view, sizes, kind)
    if ll is not None:
        # messages whose LL shares differ: the matrix of bytes on the wire, each message's LL
        # bytes at LL's efficiency, the self copies as they are (an all-to-all's two kinds
        # spread over its pairs by node)
        import numpy as np

        off = ~np.eye(view.p, dtype=bool)
        if pairs is None:
            pairs = np.full((view.p, view.p), float(per_peer))
            by_kind = dict(zip(kind, ll.tolist()))
            ll = np.where(view.same_node(), by_kind[1], by_kind[0])
        wire = pairs.copy()
        wire[off] += (eff - 1.0) * ll[off]
    # one step of the protocol the message runs: a p2p step is a ring step (one send to a
    # peer, one receive), and a Simple step pays a flag round and a system fence an LL step
    # does not (prims_simple.h postPeer; tuning.cc ring hwLat: NVLink 0.6 / 3.4 us). Before
    # 2.22 a Simple message's trailing LL chunk runs on its own channel, in the shadow of the
    # Simple chunks: the message's step is the first chunk's protocol's.
    # (a load/store step also pays its handoff: step_handoff)
    ls = t.step_loadstore + step_handoff(view.arch) if t.step_loadstore > 0 else 0.0
    step = max(step_lat, ls, t.step_message)
    # an all-to-all's rounds beyond the channels queue as batches (p2p_batches), and every
    # grouped operation adds its own batches to the same channels (NCCL never puts two of a
    # group's works for one peer in one batch: a new p2pEpoch each, enqueue.cc
    # scheduleP2pTasksToPlan / ncclAddWorkBatchToPlan): the kernel floor holds the first
    # batch, each further one its counted chain (p2p_batch_chain), and each its step. A
    # message step's overhead is the operation's every message (the schedule: one message's
    # whole overhead, then a post for each further one the rank sends), and each message is
    # one work of one batch (scheduleP2pTasksToPlan dequeues a peer's task once): so a further
    # batch of the operation pays the path and its first message's whole overhead less the
    # post the step already counted for it, not every message again (session 26)
    # (each round on as many channels as the larger of its two messages' parts: an
    # all-to-allv's pairs by their own bytes, p2p_batches)
    per_op = (p2p_batches(rt, view, pairs if op == "all-to-allv" else per_peer)
              if op in ("all-to-all", "all-to-allv") else 1)
    batches = per_op * ops
    msg_first = 0.0
    for st in t.plan.steps:
        if st.link >= 0 and st.transport != "loadstore":
            tr = transport(st.transport)
            msg_first = max(msg_first,
                            st.latency + tr.per_message_overhead - tr.software_post)
    further = max(step_lat, ls, msg_first)
    fixed = (rt.kernel_floor[view.arch] + ops * step + (per_op - 1) * ops * further
             + (batches - 1) * p2p_batch_chain(view.arch)) / ops
    if wire is not None:
        # pairs whose LL shares differ: each pair's LL bytes cross at LL's rate, the matrix
        # of wire bytes routed as the operation's traffic
        total = float(wire.sum())
        time = fixed + total * view.transfer(algorithm, "all-to-allv",
                                             traffic=wire / total).per_byte
    else:
        time = fixed + n * t.per_byte * (1.0 + (eff - 1.0) * share)
    # each Simple part's last chunk copied out of the receiver's buffer after the bytes
    time += p2p_drain(rt, view, op, n)
    return [Candidate(library="p2p", schedule=algorithm, protocol=proto, time=time, choice=time,
                      channels=nc, fixed=fixed)]


def _p2p_messages(rt, view, sizes, kind):
    """The point-to-point messages of one operation, each planned as NCCL plans it
    (:func:`_p2p_plan_array`: ``addP2pToPlan`` once per round, protocol and channels from that
    message's own bytes and its peer's connection), so an all-to-allv's small pairs can run LL
    and its large ones Simple, and across nodes a message to a peer of the sender's node LL
    where the network peers' run Simple. ``sizes``: every message's bytes (a send/recv's or
    an all-to-all's one message; an all-to-allv's ``p x p`` pairs); ``kind``: for each, its
    peer (0: a network peer, 1: a peer of the sender's node, every message of a group in one
    node; 2: the rank itself, an all-to-allv's diagonal, a copy and no message: it is left
    out). Returns ``(protocol, channels, step, share, ll)``: the largest message's protocol
    and channels (the ones reported; a network peer's among equals); the per-step latency the
    operation pays (NCCL's ring hwLat of the slowest message among those that carry bytes,
    each on its own link class: the node's for a local peer, the network's otherwise); and
    either ``share``, the LL share of the bytes where every message that carries bytes has
    the same one (one message, or a uniform matrix: an empty message counts as its
    protocol's, 1 for LL), with ``ll`` None, or ``share`` None and ``ll`` each message's LL
    bytes (in the shape of ``sizes``; 0 for a copy).

    >>> import fabric, topologies
    >>> from analysis._collectives import _GroupView, resolve_ranks
    >>> f = topologies.build("dgx-h100")
    >>> nodes, idx = resolve_ranks(f, None)
    >>> view = _GroupView(f, "all-to-all", nodes, idx, None, None, True)
    >>> rt = fabric.runtime("nccl")
    >>> _p2p_messages(rt, view, (4096.0,), (1,))
    ('LL', 1, 6e-07, 1.0, None)
    >>> proto, nc, step, share, ll = _p2p_messages(rt, view, (4096.0, 1 << 20), (1, 1))
    >>> proto, step, share, ll.tolist()
    ('Simple', 3.4e-06, None, [4096.0, 0.0])
    """
    import numpy as np

    values, kinds, (is_ll, channels, ll_bytes), index = _p2p_plans(rt, view, sizes, kind)
    # the distinct messages to a peer: kinds ascending, so every kind but the copies' (2) is
    # a prefix, and of equal bytes a network peer's (0) comes first
    m = int(np.searchsorted(kinds, 2))
    sent, far = values[:m], kinds[:m] == 0
    last = int(np.flatnonzero(sent == sent.max())[0])
    big = ("LL" if is_ll[last] else "Simple"), int(channels[last])
    hw = {False: view.intra_hw, True: "net"}
    # the step: each (link class, protocol) that carries bytes, once
    some = sent > 0
    busy = ({(bool(c & 2), "LL" if c & 1 else "Simple")
             for c in np.unique(2 * far[some] + is_ll[:m][some]).tolist()}
            or {(bool(far[last]), big[0])})
    step = max(_lat(rt, hw[f], "ring", proto) for f, proto in busy)
    ll = np.minimum(ll_bytes, values)
    shares = np.minimum(1.0, ll[:m][some] / sent[some])
    if not shares.size or (shares == shares[0]).all():
        share = float(shares[0]) if shares.size else (1.0 if big[0] == "LL" else 0.0)
        return big[0], big[1], step, share, None
    return big[0], big[1], step, None, ll[index]


def _all_to_all_kinds(view):
    """The peers of an all-to-all's messages (:func:`_p2p_plans`' kinds): the copy to itself
    (2); a peer of the node (1), every peer in one node, across nodes where a node holds
    several of the group's ranks; a network peer (0) across nodes."""
    multi = view.n_nodes > 1
    return (2,) + ((1,) if not multi or view.ppn > 1 else ()) + ((0,) if multi else ())


def _pair_kinds(view):
    """The peer of each pair of a ``p x p`` all-to-allv (:func:`_p2p_plans`' kinds): 2 on the
    diagonal (a rank's copy to itself), 1 between ranks of one node, 0 across nodes."""
    import numpy as np

    return np.where(np.eye(view.p, dtype=bool), 2, view.same_node().astype(np.int64))


def _generic(rt, view, op, n, algorithm, ops):
    """A schedule NCCL does not ship, run with NCCL's costs: what it would cost as a kernel.

    Per protocol: the ring's base latency (shared by ``ops`` grouped operations), each
    sequential step at the ring's per-step latency for its link class (never below the
    fabric's step), and the schedule's transfer at the protocol's efficiency (LL 1/2,
    LL128 0.92; tuning.cc's ring refinements without the per-channel caps).
    """
    t = view.transfer(algorithm, op)
    handoff = step_handoff(view.arch) if t.step_loadstore > 0 else 0.0
    out = []
    for proto in ("LL", "LL128", "Simple"):
        intra = max(_lat(rt, view.intra_hw, "ring", proto), t.step_loadstore + handoff)
        inter = max(_lat(rt, "net", "ring", proto), t.step_message)
        lat = (rt.base_latency[("ring", proto)] / ops + t.steps_loadstore * intra
               + t.steps_message * inter)
        eff = {"LL": rt.factors["ring_ll"], "LL128": rt.factors["ring_ll128"]}.get(proto, 1.0)
        time = lat + t.data_time(n) / eff
        out.append(Candidate(library=algorithm, schedule=algorithm, protocol=proto, time=time,
                             choice=time, channels=comm_channels(rt, view), fixed=lat))
    return out


def nccl_candidates(rt, view, op, n, algorithm, ops):
    """Every (algorithm, protocol) NCCL could run here: (candidates, reasons not)."""
    tried, why = [], []

    def attempt(name, fn):
        if algorithm != "auto" and NCCL_SCHEDULE.get(name, name) != algorithm and not (
                name == "p2p" and algorithm in ("scattered", "point-to-point")) and not (
                name == "ring" and algorithm == "multi-ring"):
            return
        try:
            tried.extend(fn())
        except NotApplicableError as e:
            why.append((name, str(e)))
            errors.append(e)

    errors = []
    if op == "send-recv":
        attempt("p2p", lambda: _p2p(rt, view, op, n, "point-to-point", ops))
    elif op in ("all-to-all", "all-to-allv"):
        attempt("p2p", lambda: _p2p(rt, view, op, n, "scattered", ops))
    else:
        attempt("ring", lambda: _nccl_ring(rt, view, op, n, ops))
        if op == "all-reduce":
            attempt("tree", lambda: _nccl_tree(rt, view, n, ops))
        if op in ("all-reduce", "all-gather", "reduce-scatter"):
            if view.n_nodes == 1:
                attempt("nvls", lambda: _nccl_nvls(rt, view, op, n, ops))
            elif op == "all-reduce":
                attempt("nvls-tree", lambda: _nccl_nvls_tree(rt, view, n, ops))
            else:
                why.append(("nvls", ("NCCL runs NVLS all-gather / reduce-scatter across nodes "
                                    "only with CollNet (in-network reduction in the scale-out "
                                    "switches), which this fabric does not model")))
    if algorithm in ("in-switch", "hierarchical") and not tried and any(
            isinstance(w, _NvlsOff) for w in errors):
        # NCCL_ALGO=NVLS (or NVLSTree) where the release does not enable NVLS: no algorithm
        # is left, so NCCL sets the ring available (tuning.cc "at least set ring algo
        # available")
        tried.extend(_nccl_ring(rt, view, op, n, ops))
    if algorithm != "auto" and not tried and not why:
        # an algorithm NCCL does not ship: costed as NCCL would run it (see _generic)
        try:
            tried.extend(_generic(rt, view, op, n, algorithm, ops))
        except NotApplicableError as e:
            why.append((algorithm, str(e)))
    return tried, why


def retime(timing, view, op, n, algorithm, ops, tried, best):
    """``(tried, best)`` with every candidate's time (and fixed part) priced by ``timing``.

    A release's tuner chose ``best`` among ``tried`` by its own tables; ``timing`` (the
    release's :attr:`fabric.Runtime.timing`: the sourced later revisions of the prediction
    with this release's execution facts) says how long each of those runs takes. The choice is not
    redone. A candidate ``timing`` does not price keeps the release's own time.
    """
    again, _why = nccl_candidates(timing, view, op, n, algorithm, ops)
    by = {(c.library, c.schedule, c.protocol): c for c in again}

    def one(c):
        t = by.get((c.library, c.schedule, c.protocol))
        return c if t is None else dataclasses.replace(c, time=t.time, fixed=t.fixed)

    out = [one(c) for c in tried]
    return out, out[tried.index(best)]


_NCCL_ALGOS = {
    "all-reduce": ("ring", "tree", "nvls", "nvls-tree"),
    "all-gather": ("ring", "nvls"), "reduce-scatter": ("ring", "nvls"),
    "broadcast": ("ring",), "reduce": ("ring",),
    "all-to-all": ("p2p",), "all-to-allv": ("p2p",), "send-recv": ("p2p",),
}

# -- symmetric memory ----------------------------------------------------------------------

SYMMETRIC_ALGORITHMS = {
    "all-reduce": ("one-shot", "two-shot", "in-switch"),
    "all-gather": ("one-shot", "in-switch"), "reduce-scatter": ("one-shot", "in-switch"),
    "broadcast": ("one-shot", "in-switch"), "reduce": ("one-shot", "in-switch"),
    "all-to-all": ("one-shot",), "all-to-allv": ("one-shot",),
    "send-recv": ("point-to-point",),
}

#: One-sided runtimes (by name) that run fewer kernels than :data:`SYMMETRIC_ALGORITHMS`:
#: ``{runtime: {op: algorithms}}``. PyTorch's (:data:`fabric.TORCH_SYMM_MEM`): the two
#: all-reduce kernels vLLM launches, ``multimem_all_reduce_`` ("in-switch") and
#: ``two_shot_all_reduce_`` ("two-shot"; its one-shot is not FlashInfer's Lamport kernel).
RUNTIME_ALGORITHMS = {"torch-symm-mem": {"all-reduce": ("two-shot", "in-switch")}}

#: How a bulk (non-LL) symmetric kernel touches its peers' memory, per (op, algorithm):
#: ``(loads, stores)``, from NCCL's symmetric kernels (``src/device/symmetric/*.cuh``,
#: NVIDIA/nccl v2.30.7-1): two-shot all-reduce ``RSxLD_AGxST`` reduces by loading the peers'
#: blocks and gathers by storing into them; the in-switch (multimem) all-reduce
#: ``RSxLDMC_AGxSTMC`` loads through ``multimem.ld_reduce`` and stores through
#: ``multimem.st``; in-switch all-gather ``STMC`` stores, reduce-scatter ``LDMC`` loads.
#: Broadcast by multicast stores, reduce by a multicast load-reduce at the root. The
#: project's one-shot schedules store into every peer (``analysis._schedules``).
_PEER_ACCESS = {
    ("all-reduce", "two-shot"): (True, True), ("all-reduce", "in-switch"): (True, True),
    ("all-gather", "in-switch"): (False, True), ("reduce-scatter", "in-switch"): (True, False),
    ("broadcast", "in-switch"): (False, True), ("reduce", "in-switch"): (True, False),
}


#: Kernels that reach their peers by LOADS only, per engine runtime (by name): ``{runtime:
#: {(op, algorithm): pulled stages}}``. vLLM's custom all-reduce (the runtime
#: :data:`fabric.VLLM_CUSTOM_ALLREDUCE`; vllm-project/vllm ``csrc/custom_all_reduce.cuh`` and
#: ``csrc/custom_collective_common.cuh``): ``cross_device_reduce_1stage`` ("one-shot": start
#: barrier, every rank loads its slice of every peer's registered buffer and reduces, end barrier
#: without a fence) and ``cross_device_reduce_2stage`` ("two-shot": start barrier, reduce-scatter
#: by loads into the rank's OWN buffer, a barrier whose release/acquire orders those local stores,
#: all-gather by loads from the peers' buffers, no end barrier). Each pulled stage receives its
#: first byte one peer round trip after its first request; neither kernel stores into a peer, so
#: no release waits for a peer's acknowledgement.
PULL_KERNELS = {"vllm-custom-allreduce": {("all-reduce", "one-shot"): 1,
                                           ("all-reduce", "two-shot"): 2}}

#: vLLM's choice between its two custom all-reduce kernels (``CustomAllreduce::allreduce``):
#: the 1-stage kernel on 2 GPUs, and on fully NVLink-connected GPUs while the input is below
#: ``VLLM_ONE_STAGE_BELOW[gpus]`` bytes (4 or fewer: 512 KiB; 8 or fewer: 256 KiB), else the
#: 2-stage kernel; it runs on 2, 4, 6 or 8 GPUs (``CustomAllreduce._SUPPORTED_WORLD_SIZES``).
VLLM_ONE_STAGE_BELOW = {2: math.inf, 4: 512 * 1024, 6: 256 * 1024, 8: 256 * 1024}


def _pull_candidates(rt, view, op, n, algorithm, kernels):
    """Candidates of a runtime whose kernels only load from peers (:data:`PULL_KERNELS`):
    kernel floor (launch + start barrier) + one further barrier (:func:`flag_barrier`: vLLM's
    ``end_sync`` stores a flag into every peer and spins on its own) + one peer round trip per
    pulled stage + the bytes of the schedule the kernel
    follows (a pulled one-shot moves over each link the bytes the pushed one-shot schedule
    moves, in the other direction). ``"auto"`` is the engine's own size rule
    (:data:`VLLM_ONE_STAGE_BELOW`), not the faster kernel."""
    algs = tuple(a for o, a in kernels if o == op)
    if not algs:
        raise NotApplicableError(f"the {rt.name} runtime runs "
                                 f"{', '.join(sorted({o for o, _a in kernels}))} only, not {op}")
    if view.p not in VLLM_ONE_STAGE_BELOW:
        raise NotApplicableError(f"{rt.name} runs on 2, 4, 6 or 8 GPUs, not {view.p}")
    if algorithm == "auto":
        algorithm = "one-shot" if n < VLLM_ONE_STAGE_BELOW[view.p] else "two-shot"
    elif algorithm not in algs:
        raise NotApplicableError(f"the {rt.name} runtime runs {', '.join(algs)} for {op}, "
                                 f"not {algorithm}")
    t = view.transfer(algorithm, op)
    floor = rt.kernel_floor[view.arch]
    fixed = floor + flag_barrier(rt, view)
    time = fixed + kernels[(op, algorithm)] * view.peer_trip() + t.data_time(n)
    return [Candidate(library=algorithm, schedule=algorithm, protocol="pull", time=time,
                      choice=time, channels=0, fixed=fixed)], []


def symmetric_candidates(rt, view, op, n, algorithm, ops):
    """One-sided kernels over load/store: (candidates, reasons not).

    Per algorithm, as the published one-sided kernels are built:

    * one-shot: the Lamport kernel (FlashInfer / TensorRT-LLM
      ``allreduce_fusion_kernel_oneshot_lamport``, what vLLM's fused all-reduce + RMSNorm runs
      below its one-shot size): every rank pushes its data into each peer's buffer and polls
      its own until no word is the sentinel (-0) any more, so the data is its own flag: no
      barrier, no fence, and the full 16 bytes of a store are payload. The kernel floor (whose
      measured kernel, NCCL's ``AllReduce_AGxLL_R``, is the same push-and-poll) + the bytes.
      NCCL's LL one-shot (a flag in every 8 bytes) moves the same bytes at half the line's
      payload and is never faster, so it is not listed. The clearing of the previous buffer
      (local stores) is not charged (an assumption: it overlaps the pushes).
    * two-shot and in-switch: bulk kernels (NCCL ``RSxLD_AGxST`` / ``RSxLDMC_AGxSTMC``;
      FlashInfer ``allreduce_fusion_kernel_twoshot_sync`` has the same steps): an entry and an
      exit (or middle) barrier: the kernel floor + one further barrier (:func:`flag_barrier`:
      a flag stored into every peer and a spin on the rank's own, one handoff); a kernel that
      loads from its peers receives its first byte
      one peer round trip after its first request (the bandwidth starts late); a kernel that
      stores into its peers and then synchronises releases the stores first (NCCL
      ``bar.sync(memory_order_release)``, whose ``cuda::atomic_thread_fence`` waits for their
      acknowledgement): one peer round trip. A peer round trip is
      :meth:`analysis._collectives._GroupView.peer_trip` (the path there and back plus
      :func:`fabric.peer_access_latency`), the same the MoE exchange model charges for its
      release fences and pulled rounds.

    The per-block copy rate (:data:`fabric.EXCHANGE_BLOCK_RATE`) is not a floor here: a
    collective kernel spreads its bytes over up to ``ncclSymkMaxBlocks`` = 64 blocks
    (threads are numbered across ranks and blocks, ``flattenIx``), 64 x 44 GiB/s = 3.0 TB/s
    per rank on Hopper and 64 x 55 GiB/s = 3.8 TB/s on Blackwell, above any modelled chip's
    scale-up bandwidth; the MoE kernels it binds give one token one block.
    """
    # (ranks with no path between them were refused when read: _collectives.resolve_ranks)
    if view.n_nodes != 1:
        raise NotApplicableError(
            f"the {rt.name} runtime works by loads and stores into peers' symmetric "
            "heaps; this group spans several load/store domains (its flows cross a NIC or an "
            "InfiniBand/RoCE link)")
    if rt.name in PULL_KERNELS:
        return _pull_candidates(rt, view, op, n, algorithm, PULL_KERNELS[rt.name])
    table = RUNTIME_ALGORITHMS.get(rt.name, SYMMETRIC_ALGORITHMS)
    if op not in table:
        raise NotApplicableError(f"the {rt.name} runtime runs {', '.join(sorted(table))} only, "
                                 f"not {op}")
    algs = table[op]
    if algorithm != "auto":
        if algorithm not in algs:
            raise NotApplicableError(f"the {rt.name} runtime runs {', '.join(algs)} "
                                     f"for {op}, not {algorithm}")
        algs = (algorithm,)
    tried, why = [], []
    floor = rt.kernel_floor[view.arch]
    for a in algs:
        try:
            t = view.transfer(a, op)
        except NotApplicableError as e:
            why.append((a, str(e)))
            continue
        data = t.data_time(n)
        if a == "point-to-point" or view.p < 2:
            tried.append(Candidate(library=a, schedule=a, protocol="", time=floor + data,
                                   choice=floor + data, channels=0, fixed=floor))
            continue
        if a == "one-shot":
            # Lamport: the pushed data is its own flag (no barrier, no fence)
            tried.append(Candidate(library=a, schedule=a, protocol="Lamport", time=floor + data,
                                   choice=floor + data, channels=0, fixed=floor))
            continue
        trip = view.peer_trip()
        loads, stores = _PEER_ACCESS[(op, a)]
        fixed = floor + max(1, t.phases - 1) * flag_barrier(rt, view) + (trip if stores else 0.0)
        time = fixed + (trip if loads else 0.0) + data
        tried.append(Candidate(library=a, schedule=a, protocol="Simple", time=time,
                               choice=time, channels=0, fixed=fixed))
    return tried, why
