"""Communication runtimes: how software drives the hardware, as named, sourced profiles.

Layer 3 of a cost (beside the transports): a collective's schedule says which
bytes cross which links; the runtime says what running it costs beyond the
wires: launching the kernel, synchronising each step, the protocol that carries
the payload (and how much of the link it leaves to data), how many channels
share the work and how that shrinks for small messages. Every figure is a
:class:`~fabric.Parameter` with its source (:meth:`Runtime.parameters`).

Profiles
--------
``"ideal"``
    The model's own schedules with no software costs: no launch, no
    synchronisation beyond the transport's per-message overhead, the bulk protocol
    at full efficiency. The model as it was before runtimes existed; reproduced
    exactly. Not a bound (a runtime with a better schedule can be faster, as NCCL's
    trees are on cluster-128); each result's ``lower_bound`` is the bound.
``"nccl"``
    NVIDIA's collective library as its own tuner models it
    (``src/graph/tuning.cc`` of NVIDIA/nccl at commit 5067397c, June 2026):
    algorithms ring, tree, NVLS (NVLink SHARP), NVLS-tree, CollNet, PAT x
    protocols LL, LL128, Simple; per algorithm and protocol a base latency, a
    per-step hardware latency by link class (NVLink, PCI, network), bandwidth
    refinements per protocol and per-channel caps. The tuner picks the pair with
    the least modelled time for each size; channels are then reduced for small
    messages (``src/enqueue.cc`` ``topoGetAlgoInfo``). See
    :mod:`analysis._runtime_cost` for the evaluation.
``"nccl@<release>"``
    The same model with the tuner constants of an older NCCL release (2.18.3 to
    2.30.7; 2.18.3 on), read from ``src/graph/tuning.cc`` at each release tag
    (:data:`_NCCL_HISTORY`): for a measurement taken with that release. The
    constants changed: NVLS latency 23 us before 2.21, NVLS-tree network latency
    14 us before 2.28.9, the tree's Simple latencies before 2.23, the Hopper LL
    ceiling and ring LL factor before 2.21, the Blackwell caps (none before 2.25),
    the NVLS-tree bandwidth before 2.28, MAXCHANNELS 32 before 2.25. The release
    chooses its (algorithm, protocol) with these; the time of its run takes, per
    constant, the later values that are sourced revisions of the prediction whose
    device code is identical from the release's own tag to the revision
    (:data:`PREDICTION_REVISIONS`, :func:`revision_holds`, :attr:`Runtime.timing`).
``"symmetric-memory"``
    GPU-initiated one-sided kernels over load/store on a symmetric heap
    (one-shot / two-shot / multimem, the NVSHMEM and NCCL symmetric-kernel
    class, and what Co-Fabric's symmetric memory is): one kernel; a Lamport one-shot
    whose pushed data is its own flag (FlashInfer / TensorRT-LLM), or a bulk kernel with
    an entry and an exit barrier, a release fence after its stores and a late first byte
    for its loads (NVIDIA/nccl ``src/device/symmetric``;
    :func:`analysis._runtime_cost.symmetric_candidates`).

Examples
--------
>>> runtime("nccl").name
'nccl'
>>> runtime("nccl").base_latency[("ring", "LL")]
6.6e-06
>>> sorted(RUNTIMES)
['ideal', 'nccl', 'symmetric-memory']
>>> runtime("mpi")
Traceback (most recent call last):
...
fabric.SpecError: unknown runtime 'mpi'; known: ideal, nccl, symmetric-memory (nccl also as nccl@<version>)
>>> runtime("nccl@2.21.5").hw_latency[("net", "nvls-tree", "Simple")]
1.4e-05
"""

import dataclasses
import datetime
import functools
import math
import re

from ._errors import SpecError
from ._fabric_arg import fabric_arg
from ._params import Parameter
from ._units import (
    check_choice,
    check_number,
    error_for,
    is_finite,
    is_int,
    kind_error,
    name_list,
    show_value,
    text_of,
    unknown_fault,
)

__all__ = ["EXECUTION_FACTORS", "NCCL_NEWEST", "NCCL_OLDEST", "NCCL_RELEASE_DATES",
           "PREDICTION_FIELDS", "PREDICTION_KERNEL_FILES", "PREDICTION_REVISIONS", "PROTOCOLS", "RUNTIMES", "TORCH_SYMM_MEM", "VLLM_CUSTOM_ALLREDUCE", "Protocol", "Runtime", "nccl_release_dates", "nccl_release_on", "release_tag", "revision_holds", "runtime",
           "runtime_arch"]

US = 1e-6
GBS = 1e9

_TUNING = "NVIDIA/nccl src/graph/tuning.cc (release tag v2.30.7-1; the same at commit 5067397c)"


@dataclasses.dataclass(frozen=True)
class Protocol:
    """How a library packs payload into stores: granularity and bandwidth efficiency.

    Attributes
    ----------
    name : str
    line : int
        Bytes per store unit on the wire (LL: a 16-byte line of 8 data + 8 flag
        bytes; LL128: a 128-byte line with an 8-byte flag; Simple: none, bulk
        copies with a separate flag per step).
    payload : int
        Data bytes per line.
    source : str
    """

    name: str
    line: int
    payload: int
    source: str

    @property
    def efficiency(self):
        """Fraction of the wire that carries data: ``payload / line``."""
        return self.payload / self.line


#: NCCL's three protocols (NVIDIA/nccl src/include/device.h).
PROTOCOLS = {p.name: p for p in (
    Protocol("LL", 16, 8,
             "NVIDIA/nccl src/include/device.h union ncclLLFifoLine: 16-byte lines of two "
             "4-byte data words and two 4-byte flags (8 data bytes per 16)"),
    Protocol("LL128", 128, 120,
             "NVIDIA/nccl src/include/device.h NCCL_LL128_LINESIZE 128, NCCL_LL128_DATAELEMS = "
             "NCCL_LL128_LINEELEMS - 1 (one 8-byte flag per 128-byte line: 120/128)"),
    Protocol("Simple", 1, 1,
             "NVIDIA/nccl: bulk stores of the payload with one flag per step (no per-line flag)"),
)}


#: How :mod:`analysis._runtime_cost` evaluates a :class:`Runtime` (its ``kind``).
RUNTIME_KINDS = ("ideal", "library", "one-sided")


@dataclasses.dataclass(frozen=True)
class Runtime:
    """A communication runtime: named tables of sourced constants (see the module docstring).

    The tables are keyed as NCCL's tuner keys them: ``(algorithm, protocol)``,
    ``(link class, algorithm, protocol)`` with link class ``"nvlink"``,
    ``"pci"`` or ``"net"``, and ``(architecture, nodes index)`` with
    architecture ``"hopper"`` or ``"blackwell"`` and nodes index 0 (one node),
    1 (two nodes) or 2 (more). Times in seconds, bandwidths in bytes/s.

    Attributes
    ----------
    name, description : str
    kind : {"ideal", "library", "one-sided"}
        How :mod:`analysis._runtime_cost` evaluates it.
    base_latency, hw_latency : dict
        NCCL's ``baseLatencies`` and ``hwLatencies``.
    ll_max_bw, ring_ll128_bw, tree_bw, tree_ll128_bw, nvls_tree_bw : dict
        NCCL's ``llMaxBws`` and per-channel caps ``perChMax*Bws``.
    nvls_efficiency : dict
        architecture -> NCCL's ``nvlsEfficiency``.
    factors : dict
        NCCL's scalar refinements (name -> value).
    tree_correction : dict
        protocol -> NCCL's ``treeCorrectionFactor`` row (powers of two from 64 B).
    threads, thread_threshold : dict
        protocol -> maximum threads per channel, and bytes per thread below which
        channels are dropped (``topoGetAlgoInfo``).
    max_channels : int
        ``MAXCHANNELS``.
    kernel_floor : dict
        architecture -> seconds: the least time of one kernel that exchanges a
        small message with its NVLink peers and synchronises.
    host_launch : float
        Seconds of host (CPU) time to launch one kernel on one device: a process
        driving several devices from one thread (nccl-tests ``-g N``) spends
        ``N x host_launch`` per iteration, overlapped with the GPUs' previous
        iterations (:func:`analysis.host_launch_delay`, :func:`analysis.cost`
        ``devices_per_process``); 0 where the runtime states none. CPU time of the
        call only: the GPU-side start of the kernel is in the library's own latencies
        (NCCL's base latency, ``kernel_floor``). Not the per-kernel gap of an eager
        decode step (``analysis.LAUNCH_OVERHEAD``: the GPU idles for the call and the
        submit-to-start of each launch that waits on the previous kernel), which
        would count that start twice here.
    nvls : dict
        NCCL's one-node NVLS all-reduce pipeline: channels per architecture
        (``("channels", arch)``), the largest chunk (``"chunk"``) and the sizes it is
        cut to (``("chunk_below", k)``: below ``k x channels x heads x chunk`` bytes),
        and the warp groups a chunk passes through (``"stages"``); NVLS-tree's chunk
        across nodes (``"tree_chunk"``, 0 for the Simple step; ``"tree_max_chunk_nodes4"``,
        the cap on 4 or more nodes, 0 for none; ``"tree_sm100_tuning"``, 1 where NCCL tunes
        Blackwell's multi-node NVLS-tree itself).
    p2p : dict
        NCCL's point-to-point protocol choice (LL or Simple) and the p2p channels it rests
        on: ``"ll_threshold"`` (bytes per channel), ``("chunk", path)`` (``p2pChunkSize`` for
        ``"net"``, ``"nvlink"``, ``"pci"``), ``"net_chunk_ratio_arm_blackwell"``,
        ``"net_bw_per_channel"`` (B/s), ``"work_per_batch"``, and the release's rules:
        ``"ll_rule"`` (0: each chunk of at most the threshold runs LL; 1: the message, against
        ``p2pnChannelsPerPeer`` x threshold; 2: against its own channels x threshold) and
        ``"net_peer_rule"`` (0: max(NICs, 2 halved while 2 x ranks > 4 x p2p channels); 1:
        max(NICs, NIC bandwidth / ``net_bw_per_channel``), then halved across nodes while
        channels x ranks / work_per_batch > p2p channels); an all-to-all's rounds on the
        channels: ``"batch_rule"`` (0: not read, one batch; 1: a batch holds up to 8 works;
        2: and only rounds of one round / 8 group), ``"reverse_rounds"`` (1: a round's base
        channel bit-reversed, its parts on the channels after it; 0: the parts bit-reversed)
        and ``"net_round_rule"`` (the p2p schedule, and across nodes the rounds sharing a
        base: 0 a node's, node then local deltas; 1 a schedule group's, group deltas then
        local ones; 2 as 1, one node a single group); ``"drain_hbm_share"`` (the share of
        the chip's datasheet HBM bandwidth at which a receiver copies a Simple part's last
        chunk out of its connection buffer: an ASSUMPTION with its own source,
        :func:`analysis._runtime_cost.p2p_drain`) and ``"part_align"`` (bytes a message's
        parts are aligned to from 2.22, ``ncclP2pPartBounds``; 0 before: ``calcP2pChunkSize``'s
        parts). See
        :func:`analysis._runtime_cost.p2p_protocol`,
        :func:`analysis._runtime_cost.p2p_batches`, :func:`analysis._runtime_cost.p2p_schedule`.
    search : dict
        NCCL's topology-search constants (speed arrays, NVLink bandwidth, doubling rules):
        :func:`analysis._runtime_cost.nccl_switch_channels`, ``nccl_net_channels``.
    split : dict
        How NCCL splits one ring or tree operation's bytes over the channels it runs on
        (:func:`analysis._runtime_cost.nccl_channel_split`): ``"rule"`` (0: evenly, inside
        the kernel, 2.18-2.19; 1: ``addCBDCollToPlan``'s per-channel bytes rounded up to the
        protocol's alignment, 2.20-2.21; 2: ``scheduleCollTasksToPlan``'s cells, 2.22 on),
        ``"byte_align"`` and ``("align", protocol)`` (rule 1, bytes; LL per thread, LL128 per
        warp), and for rule 2 ``"min_traffic"`` (``MinTrafficPerChannel``, B), ``"cell"`` (a
        fixed cell in bytes, 0: the cell is ``min_traffic`` over the traffic per byte),
        ``"ll_traffic"`` (LL's traffic per byte multiplier), ``"task_floor"`` (a task's traffic
        floored at ``min_traffic``), ``"lo_ceil"`` (the first channel's cells rounded up) and
        ``"round16"`` (traffic per channel rounded up to 16 B rather than floored at
        ``min_traffic``).
    sources : tuple of (str, str)
        Field name -> its source; ``"field.key"`` -> the source of one key of a table whose
        source is its own (``"p2p.drain_hbm_share"``: an assumption, not the table's code
        reading).
    version : str
        The library release whose constants these are (NCCL: ``"2.30.7"`` for
        ``"nccl"``; ``"nccl@2.21.5"`` carries 2.21.5's, see :func:`runtime`).
    timing : Runtime or None
        The runtime whose tables price the TIME of the pair this one chooses; None: this
        one. An older NCCL release (``"nccl@2.25.1"``) chooses with its own tuner tables
        but is timed, constant by constant, by the later values that are sourced revisions
        of the prediction with the kernel's device code identical from its own tag to the
        revision (:data:`PREDICTION_REVISIONS`, :func:`revision_holds`), with the
        release's own execution facts: see :func:`runtime`.
    """

    name: str
    kind: str
    description: str
    base_latency: dict = dataclasses.field(default_factory=dict)
    hw_latency: dict = dataclasses.field(default_factory=dict)
    ll_max_bw: dict = dataclasses.field(default_factory=dict)
    ring_ll128_bw: dict = dataclasses.field(default_factory=dict)
    tree_bw: dict = dataclasses.field(default_factory=dict)
    tree_ll128_bw: dict = dataclasses.field(default_factory=dict)
    nvls_tree_bw: dict = dataclasses.field(default_factory=dict)
    nvls_efficiency: dict = dataclasses.field(default_factory=dict)
    factors: dict = dataclasses.field(default_factory=dict)
    tree_correction: dict = dataclasses.field(default_factory=dict)
    threads: dict = dataclasses.field(default_factory=dict)
    thread_threshold: dict = dataclasses.field(default_factory=dict)
    max_channels: int = 0
    kernel_floor: dict = dataclasses.field(default_factory=dict)
    host_launch: float = 0.0
    nvls: dict = dataclasses.field(default_factory=dict)
    p2p: dict = dataclasses.field(default_factory=dict)
    search: dict = dataclasses.field(default_factory=dict)
    split: dict = dataclasses.field(default_factory=dict)
    sources: tuple = ()
    version: str = ""
    timing: object = None

    def __post_init__(self):
        # labels of the wrong kind: name=5 was kept (and keyed results by 5), kind="x" was
        # priced as a one-sided runtime
        text_of(self.name, "runtime name")
        text_of(self.description, f"runtime {show_value(self.name)}: description")
        text_of(self.version, f"runtime {show_value(self.name)}: version")
        check_choice(self.kind, f"runtime {show_value(self.name)}: kind", RUNTIME_KINDS)
        if self.kind == "library" and not self.split:
            raise SpecError(f"runtime {show_value(self.name)}: a library runtime needs its "
                            "channel-split table (split, with its 'rule')")
        _check_split(self.name, self.split)
        _check_tables(self)
        if isinstance(self.p2p, dict) and "drain_hbm_share" in self.p2p:
            # the drain divides by it: 0 was a ZeroDivisionError, nan a silent nan time
            check_number("drain_hbm_share", self.p2p["drain_hbm_share"], strict=True,
                         tail=f" (a share of its chip's HBM bandwidth, in the p2p table of "
                              f"runtime {show_value(self.name)})")

    def __hash__(self):
        return hash(self.name)

    def __eq__(self, other):
        return isinstance(other, Runtime) and self.name == other.name

    def parameters(self):
        """Every constant as a :class:`~fabric.Parameter` (name, value, unit, source).

        >>> ps = runtime("nccl").parameters()
        >>> [p.name for p in ps if p.name.endswith("ring.LL")][:2]
        ['nccl.base_latency.ring.LL', 'nccl.hw_latency.nvlink.ring.LL']
        """
        src = dict(self.sources)
        out = []
        for field, unit in (("base_latency", "s"), ("hw_latency", "s"), ("ll_max_bw", "B/s"),
                            ("ring_ll128_bw", "B/s"), ("tree_bw", "B/s"),
                            ("tree_ll128_bw", "B/s"), ("nvls_tree_bw", "B/s"),
                            ("nvls_efficiency", ""), ("factors", ""),
                            ("tree_correction", ""), ("threads", ""),
                            ("thread_threshold", "B"), ("kernel_floor", "s"), ("nvls", ""),
                            ("p2p", ""), ("search", ""), ("split", "")):
            table = getattr(self, field)
            for key, value in table.items():
                k = ".".join(map(str, key)) if isinstance(key, tuple) else str(key)
                u = unit if field not in ("p2p", "search", "split", "factors", "nvls") else (
                    (_NVLS_UNITS if field == "nvls" else _P2P_UNITS).get(
                        key[0] if isinstance(key, tuple) else key, unit))
                out.append(Parameter(f"{self.name}.{field}.{k}", value, u,
                                     src.get(f"{field}.{k}", src.get(field, ""))))
        if self.max_channels:
            out.append(Parameter(f"{self.name}.max_channels", self.max_channels, "",
                                 src.get("max_channels", "")))
        if self.host_launch:
            out.append(Parameter(f"{self.name}.host_launch", self.host_launch, "s",
                                 src.get("host_launch", "")))
        return tuple(out)


def _check_split(name, q):
    """A runtime's channel-split table (:attr:`Runtime.split`) holds the keys its rule reads, with
    usable values; an empty table (runtimes that split nothing) passes. STYLE's rule: a rule or
    value of the wrong kind (np.True_ is no rule 1, 2.0 no rule 2, '512' no byte count) is a
    TypeError; a key missing, a rule not 0, 1 or 2, or a value out of range a SpecError.

    >>> _check_split("x", {"rule": 7})
    Traceback (most recent call last):
    ...
    fabric.SpecError: runtime 'x': split rule must be 0, 1 or 2, got 7
    >>> _check_split("x", {"rule": 2.0})
    Traceback (most recent call last):
    ...
    TypeError: runtime 'x': split rule must be 0, 1 or 2, got 2.0 (a float)
    >>> _check_split("x", 5)
    Traceback (most recent call last):
    ...
    TypeError: runtime 'x': split must be a dict, got 5 (an int)
    """
    if not isinstance(q, dict):
        # (5 had reached 'rule' not in q: "argument of type 'int' is not iterable")
        raise kind_error(q, f"runtime {show_value(name)}: split", "a dict")
    if not q:
        return
    if "rule" not in q:
        raise SpecError(f"runtime {show_value(name)}: a split table needs its 'rule' (0, 1 or 2)")
    rule = q["rule"]
    # a rule is a whole number: 2.0 is a wrong kind (is_int), which error_for's is_real
    # would call a value out of range
    if not is_int(rule):
        raise kind_error(rule, f"runtime {show_value(name)}: split rule", "0, 1 or 2")
    if rule not in (0, 1, 2):
        raise SpecError(f"runtime {show_value(name)}: split rule must be 0, 1 or 2, got "
                        f"{show_value(rule)}")
    need = {1: [("byte_align", 1)] + [(("align", p), 1) for p in ("LL", "LL128", "Simple")],
            2: [("min_traffic", 1), ("cell", 0), ("ll_traffic", 1), ("task_floor", 0),
                ("lo_ceil", 0), ("round16", 0)]}.get(rule, [])
    for key, least in need:
        flag = key in ("task_floor", "lo_ceil", "round16")
        v = q.get(key)
        if v is not None and is_finite(v) and v >= least \
                and (not flag or v in (0, 1)):
            continue
        rule_text = (f"runtime {show_value(name)}: split rule {rule} needs {show_value(key)} "
                     f"{'0 or 1' if flag else f'>= {least}'}, got {show_value(v)}")
        raise SpecError(rule_text) if v is None else error_for(v, rule_text)   # None: missing


#: The tables a runtime's cost reads by key, and the keys, per kind: a library runtime's every
#: table of the ``"nccl"`` profile (every ``"nccl@<version>"`` profile holds the same keys; the
#: split table is checked by its rule, :func:`_check_split`), a one-sided runtime's kernel
#: floor per architecture. Filled once ``"nccl"`` exists (below its definition).
_NEEDED_KEYS = {}


def _check_tables(rt):
    """A runtime holds every key its kind's cost reads (:data:`_NEEDED_KEYS`): a runtime built
    by ``dataclasses.replace`` without one failed with a bare KeyError deep in
    :mod:`analysis._runtime_cost` (audit, session 33). A table that is not a dict is a
    TypeError, a key missing a SpecError naming the table and the keys.

    >>> import dataclasses
    >>> nccl = runtime("nccl")
    >>> dataclasses.replace(nccl, name="mine", factors={k: v for k, v in nccl.factors.items()
    ...                                                 if k not in ("pat", "ring_ll")})
    Traceback (most recent call last):
    ...
    fabric.SpecError: runtime 'mine': its factors table misses 'ring_ll' and 'pat': a library runtime holds every key of the 'nccl' profile's factors
    """
    for field, keys in _NEEDED_KEYS.get(rt.kind, {}).items():
        table = getattr(rt, field)
        if not isinstance(table, dict):
            raise kind_error(table, f"runtime {show_value(rt.name)}: {field}", "a dict")
        missing = [repr(k) for k in keys if k not in table]
        if missing:
            raise SpecError(f"runtime {show_value(rt.name)}: its {field} table misses "
                            f"{name_list(missing)}: a {rt.kind} runtime holds every key of the "
                            f"'nccl' profile's {field}")


_P2P_UNITS = {"ll_threshold": "B", "chunk": "B", "part_align": "B", "net_bw_per_channel": "B/s",
              "nvlink_bw": "B/s", "intra_speeds": "B/s", "dup_below": "B/s",
              "dup_slow_below": "B/s", "min_traffic": "B", "cell": "B", "align": "B",
              "byte_align": "B", "simple_step": "B", "simple_step_arm": "B",
              # search and factors keys (review S21-R1)
              "inter_speeds": "B/s", "pci_bw": "B/s", "postset_more_bw": "B/s",
              "net_overhead": "s", "collnet_arity_latency": "s", "pat_rank_latency": "s"}


# the 'nvls' group's byte-valued keys (chunks and the last loop's alignments); its channel
# counts, stage count and the SM100 tuning flag stay unitless
_NVLS_UNITS = {"chunk": "B", "chunk_below": "B", "tree_chunk": "B",
               "tree_max_chunk_nodes4": "B", "head_align": "B", "tree_head_align": "B"}


def _arch_table(values, scale):
    """(arch, nodes index) table from NCCL's rows [Volta, Ampere, Hopper, Blackwell]."""
    out = {}
    for arch, row in zip(("hopper", "blackwell"), values[2:]):
        for i, v in enumerate(row):
            out[(arch, i)] = v * scale
    return out


_ALGOS = ("tree", "ring", "collnet-direct", "collnet-chain", "nvls", "nvls-tree", "pat")
_PROTOS = ("LL", "LL128", "Simple")


def _table(rows, scale):
    # microseconds are parsed as written ("6.6e-6"), so the value is the float nearest NCCL's
    conv = (lambda v: float(f"{v}e-6")) if scale == US else (lambda v: v * scale)
    return {(a, p): conv(v) for a, row in zip(_ALGOS, rows) for p, v in zip(_PROTOS, row)}


_NCCL = Runtime(
    "nccl", "library",
    "NVIDIA NCCL as its own tuner models it: ring / tree / NVLS / NVLS-tree / CollNet / PAT "
    "x LL / LL128 / Simple, the least modelled time per size",
    base_latency=_table([(6.8, 14.0, 8.4), (6.6, 14.0, 8.4), (0, 0, 0), (0, 0, 0),
                         (0, 0, 0), (0, 0, 0), (8.0, 8.0, 8.0)], US),
    hw_latency={**{("nvlink",) + k: v for k, v in _table(
                    [(0.6, 1.25, 4.0), (0.6, 1.9, 3.4), (0, 0, 3.7), (0, 0, 2.8),
                     (0, 0, 25), (0, 0, 25), (0, 0, 4.0)], US).items()},
                **{("pci",) + k: v for k, v in _table(
                    [(1.0, 1.9, 4.0), (1.0, 2.5, 5.7), (0, 0, 3.7), (0, 0, 2.8),
                     (0, 0, 0), (0, 0, 0), (0, 0, 4.0)], US).items()},
                **{("net",) + k: v for k, v in _table(
                    [(5.0, 8.5, 14), (2.7, 4.0, 14.0), (0, 0, 31), (0, 0, 30),
                     (0, 0, 18), (0, 0, 20.9), (0, 0, 14)], US).items()}},
    ll_max_bw={**_arch_table([(39.0, 39.0, 20.4), (87.7, 22.5, 19.0), (141.0, 45.0, 35.0),
                              (282.0, 90.0, 70.0)], GBS),
               # several nodes: NCCL indexes the row by host CPU (0 Intel, 1 AMD); x86 Intel
               # hosts are assumed (the HGX servers of the check set)
               **{("x86", i): v * GBS for i, v in enumerate((39.0, 39.0, 20.4))}},
    ring_ll128_bw=_arch_table([(20.0,) * 3, (20.0,) * 3, (36.7,) * 3, (40.0,) * 3], GBS),
    tree_ll128_bw=_arch_table([(20.0,) * 3, (20.0,) * 3, (36.7, 36.7, 29.0),
                               (55.6, 31.67, 20.0)], GBS),
    tree_bw=_arch_table([(26.5, 18.5, 10.0), (24.0, 23.6, 17.8), (38.7, 41.4, 36.0),
                         (70.0, 42.8, 24.0)], GBS),
    nvls_tree_bw=_arch_table([(26.5, 18.5, 10.0), (24.0, 23.6, 17.8), (0.0, 57.7, 45.5),
                              (0.0, 96.0, 80.0)], GBS),
    nvls_efficiency={"hopper": 0.85, "blackwell": 0.74},
    factors={"ring_ll": 0.5, "ring_ll128": 0.92, "tree_allreduce": 0.92,
             "tree_ll": 1 / 3.8, "tree_ll128_one_node": 7 / 9, "tree_ll128_nodes": 120 / 128,
             "pat": 0.75, "collnet_hopper": 0.85, "collnet_net": 0.9,
             "ring_plateau": 1.4, "net_overhead": 1.0e-6, "net_overhead_simple": 3.0,
             "nvls_max_arity": 32, "collnet_arity_latency": 0.4e-6, "pat_rank_latency": 2.8e-6,
             "pat_log_divisor": 3.5,
             # terms whose value older releases had otherwise (see _NCCL_HISTORY)
             "ring_ll_gather": 0.5, "ring_allreduce_extra_net_steps": 0,
             "ppn1_tree_net_latency": 1, "nvls_tree_net_two_nodes": 2,
             "nvls_tree_net_many_nodes": 1, "nvls_tree_alg_ratio": 0,
             "nvls_tree_linear_net_steps": 0, "nvls_tree_ratio_nodes": 0,
             "ring_ll128_ppn1": 0.92, "nvls_min_gpus": 2, "tree_simple_pattern": 0.85,
             "nvls_multi_host": 1, "nvls_tree_correction_blackwell_x86": 1,
             # NVLS offered for all-gather / reduce-scatter (tuning.cc: ring only in 2.18)
             "nvls_gather": 1,
             # LL lines per thread per step (device.h NCCL_LL_LINES_PER_THREAD)
             "ll_lines_per_thread": 8,
             # LL128 words per thread per step, and per warp slice (device.h, prims_ll128.h);
             # a Simple step (init.cc DEFAULT_BUFFSIZE / NCCL_STEPS; on an Arm host in 2.18
             # DEFAULT_BUFFSIZE_ARM / NCCL_STEPS)
             "ll128_elems_per_thread": 120, "ll128_warp_words": 256,
             "simple_step": 524288, "simple_step_arm": 524288,
             # a ring Simple chunk and slice in steps (collectives.h ALLREDUCE_CHUNKSTEPS,
             # ALLREDUCE_SLICESTEPS; all-gather and reduce-scatter the same)
             "simple_chunk_steps": 4, "simple_slice_steps": 2,
             # the ring's channels raised to the NVLS channels where NVLS runs (connect.cc
             # ncclTopoPostset, 2.20-2.27 only)
             "nvls_raises_ring": 0,
             # the tuner's one-node NVLS bandwidth from the NVLS graph (search.cc, tuning.cc;
             # analysis._runtime_cost.nccl_nvls_graph / nccl_nvls_tuner_bw): heads capped at
             # NCCL_MAX_NVLS_ARITY in the search (from 2.25), pass 2 raises bwInter (from
             # 2.19.3), nvlsEfficiency and (heads - 1) / heads in the tuner (from 2.28), algBw =
             # busBw x 5/6 before 2.28 (nvls_alg_ratio; 0: nRanks / nsteps), all-gather /
             # reduce-scatter x 5/6 in 2.19-2.22 (nvls_gather_alg_ratio), their intra side x
             # (ppn - 1) / ppn from 2.27 and bwInter x 0.9 in 2.27 only
             "nvls_graph_arity": 1, "nvls_raise_inter": 1, "nvls_tuner_efficiency": 1,
             "nvls_alg_ratio": 0, "nvls_gather_alg_ratio": 1, "nvls_gather_ppn": 1,
             "nvls_gather_inter": 1.0,
             # a collective of count 0 returns without a task or a launch (enqueue.cc
             # taskAppend, from 2.20.3; before, it is a task and its kernel launches)
             "empty_discard": 1,
             # the model's all-to-all is one ncclAlltoAll call, as nccl-tests' alltoall_perf
             # posts it from NCCL 2.28 (collectives.cc, from 2.28.3; before: grouped
             # ncclSend / ncclRecv to every peer)
             "alltoall_call": 1},
    tree_correction={
        "LL": (1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8,
               .9, 1.0, 1.0, 1.0, 1.0, 1.0),
        "LL128": (1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9,
                  .9, .9, .9, 1.0, 1.0, 1.0),
        "Simple": (.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7,
                   .7, .8, .9, .9, .9)},
    threads={"LL": 512, "LL128": 640, "Simple": 512},
    thread_threshold={"LL": 8, "LL128": 8, "Simple": 64},
    max_channels=64,
    kernel_floor={"hopper": 2.3e-6, "blackwell": 3.0e-6},
    host_launch=3.0e-6,
    nvls={("channels", "hopper"): 16, ("channels", "blackwell"): 24,
          ("channels_nodes", "hopper"): 16, ("channels_nodes", "blackwell"): 32,
          "chunk": 131072,
          ("chunk_below", 64): 65536, ("chunk_below", 8): 32768, ("chunk_below", 2): 16384,
          "stages": 3, "tree_chunk": 131072, "tree_max_chunk_nodes4": 65536,
          "tree_sm100_tuning": 1,
          # one-node NVLS: a channel's last loop gives each head alignUp(ceil(rest / heads),
          # head_align) bytes (src/device/all_reduce.h; 0: whole chunks, 2.18-2.19); NVLS-tree's
          # alignUp(divUp(remCount, nHeads), 16 B) from 2.22.3 (tree_head_align)
          "head_align": 16384, "tree_head_align": 16},
    p2p={"ll_threshold": 16384, ("chunk", "net"): 131072, ("chunk", "nvlink"): 524288,
         ("chunk", "pci"): 131072, "net_chunk_ratio_arm_blackwell": 2,
         "net_bw_per_channel": 14e9, "work_per_batch": 8, "ll_rule": 2, "net_peer_rule": 1,
         "batch_rule": 2, "net_ll_buffers": 0, "reverse_rounds": 1, "net_round_rule": 2,
         "simple_slices": 1, "direct_unregistered": 0, "drain_hbm_share": 1.0,
         "part_align": 4096},
    search={("nvlink_bw", "hopper"): 20.6e9, ("nvlink_bw", "blackwell"): 40.1e9,
            ("intra_speeds", "hopper"): tuple(x * GBS for x in (
                60.0, 50.0, 40.0, 30.0, 24.0, 20.0, 15.0, 12.0, 11.0, 6.0, 3.0)),
            ("intra_speeds", "blackwell"): tuple(x * GBS for x in (
                90.0, 80.0, 70.0, 60.0, 50.0, 45.0, 40.0, 30.0, 24.0, 20.0, 19.0, 18.0)),
            # the ring graph's pass 2 raises its speed while the channels still fit (search.cc
            # 'increase bw for Ring', from 2.19.3; before, DupChannels ran last, after a pass 2
            # that raised only other patterns' bwIntra)
            "ring_raise": 1,
            "lower_ratio": 0.49, "dup_below": 25e9, "dup_slow_below": 50e9,
            "dup_slow_channels": 4,
            # several nodes: the ring search over the NICs (search.cc *SpeedArrayInter)
            ("inter_speeds", "hopper"): tuple(x * GBS for x in (
                48.0, 45.0, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5, 15.0, 12.0, 6.0, 3.0, 2.4,
                1.2, 0.24, 0.12)),
            ("inter_speeds", "blackwell"): tuple(x * GBS for x in (
                96.0, 86.0, 80.0, 48.0, 45.1, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5, 15.0, 12.0,
                6.0, 3.0, 2.4, 1.2, 0.24, 0.12)),
            # NCCL's PCIe link bandwidth: width x (GT/s code) / 80 (topo.cc): gen5 x16 -> 48
            ("pci_bw", "pcie5-x16"): 48e9,
            # connect.cc ncclTopoPostset: x 2 again across nodes while the ring's bwIntra > 45
            # GB/s and channels < postset_more_below; 2: every GPU of compute capability
            # >= 9.0, 1: == 9.0 only (Hopper), 0: no such rule
            "postset_more_rule": 2, "postset_more_bw": 45e9, "postset_more_below": 16},
    split={"rule": 2, "byte_align": 16, ("align", "Simple"): 4096, ("align", "LL"): 8,
           ("align", "LL128"): 480, "min_traffic": 32768, "cell": 0, "ll_traffic": 4,
           "task_floor": 1, "lo_ceil": 1, "round16": 1},
    version="2.30.7",
    sources=(
        ("base_latency", _TUNING + " ncclTunerConstantsDefaults.baseLatencies (us), per "
         "algorithm Tree, Ring, CollNetDirect, CollNetChain, NVLS, NVLSTree, PAT x LL, LL128, "
         "Simple"),
        ("hw_latency", _TUNING + " ncclTunerConstantsDefaults.hwLatencies (us) for NVLINK, PCI, "
         "NET: the per-step latency of each algorithm and protocol"),
        ("ll_max_bw", _TUNING + " llMaxBws (GB/s; one node: by GPU generation; several nodes: "
         "by host CPU, Intel x86 assumed)"),
        ("ring_ll128_bw", _TUNING + " perChMaxRingLL128Bws (GB/s per channel)"),
        ("tree_ll128_bw", _TUNING + " perChMaxTreeLL128Bws (GB/s per channel)"),
        ("tree_bw", _TUNING + " perChMaxTreeBws (GB/s per channel)"),
        ("nvls_tree_bw", _TUNING + " perChMaxNVLSTreeBws (GB/s per channel)"),
        ("nvls_efficiency", _TUNING + " nvlsEfficiency (Hopper 0.85, Blackwell 0.74)"),
        ("factors", _TUNING + " ncclTopoTuneModel refinements: ring LL busBw x .5, ring LL128 "
         "x 0.92, tree all-reduce x .92, tree LL x 1/3.8, tree LL128 x 7/9 (one node) or "
         "120/128, PAT x .75, CollNet x .85 (sm90) and inter x .9; ncclTopoGetAlgoTime ring "
         "plateau x1.4 (multi-node Simple all-reduce); getNetOverhead 1 us (x3 for Simple); "
         "NCCL_MAX_NVLS_ARITY 32 (src/include/device.h); CollNet 0.4 us arity serialisation; "
         "PAT 2.8 us per rank and interLat/3.5 per level; ring LL x .5 also for one-node "
         "all-gather / reduce-scatter / broadcast (ring_ll_gather); ring all-reduce network "
         "steps 2(nodes-1) (ring_allreduce_extra_net_steps 0); one rank per node pays the "
         "tree's network latency (ppn1_tree_net_latency 1); NVLS-tree network bandwidth x2 on "
         "2 nodes, x1 on more (nvls_tree_net_two_nodes / _many_nodes), of the NVLS graph's "
         "bwInter per head: the search's fastest inter speed (search.*_speeds) that the NIC's "
         "link rate and its PCIe link (search.pci_bw) both carry (search.cc ncclTopoCompute, "
         "ncclTopoSearchRecNet; analysis._runtime_cost.nccl_nvls_net_speed); NVLS-tree algBw = "
         "busBw x nRanks/nsteps (nvls_tree_alg_ratio 0 stands for that; "
         "nvls_tree_linear_net_steps and nvls_tree_ratio_nodes 0: 2.18's other NVLS-tree "
         "forms unused); ring LL128 x 0.92 also with one rank per node (ring_ll128_ppn1); "
         "src/transport/nvls.cc ncclNvlsInit: NVLS needs at least 2 GPUs in the node "
         "(nvls_min_gpus; 3 before 2.28.7), and with no algorithm left NCCL runs the ring "
         "(tuning.cc 'at least set ring algo available'); tree busBw x .85 when maxTreePattern is "
         "NCCL_TOPO_PATTERN_TREE (tree_simple_pattern; tuning.cc l.284 at v2.27.3-1, from "
         "v2.26.2-1, 1.0 before: the tree graph search ended on the simple TREE pattern, "
         "src/graph/search.cc ncclTopoCompute 'Try a simpler tree', src/init.cc maxTreePattern); "
         "NVLS enabled on a communicator of several hosts (nvls_multi_host 1; 0 in 2.20.x: "
         "src/transport/nvls.cc ncclNvlsInit l.240 at v2.20.3-1 / v2.20.5-1 returns when "
         "'comm->nNodes > 1 || comm->MNNVL', absent in 2.19, the MNNVL clique test from 2.21); "
         "NVLS priced for all-gather and reduce-scatter (nvls_gather 1; 0 in 2.18: tuning.cc "
         "ncclTopoTuneModel l.166-169 at v2.18.5-1 leaves both to the ring, so their NVLS time "
         "stays unset and NCCL_ALGO=NVLS has no algorithm, enqueue.cc getAlgoInfo 'no "
         "algorithm/protocol available'; NVLS allowed for both from v2.19.3-1 l.168-169); "
         "the tuner's one-node NVLS bandwidth from its NVLS graph (analysis._runtime_cost."
         "nccl_nvls_graph / nccl_nvls_tuner_bw): src/graph/search.cc ncclTopoCompute, the graph's "
         "heads capped at NCCL_MAX_NVLS_ARITY (nvls_graph_arity 1; all GPUs before v2.25.1-1), "
         "pass 2 raising bwInter alone while below 2 x bwIntra (nvls_raise_inter 1; absent at "
         "v2.18.x, whose pass 2 raises bwIntra of every graph but the ring's instead (v2.18.5-1 "
         "l.962-969); v2.19.1-1's pass 3 l.973-980, l.1274-1278 at v2.30.7-1); src/graph/tuning.cc "
         "ncclTopoTuneModel l.307-323 at v2.30.7-1: nvlsEfficiency x bwIntra x (heads - 1) / heads, "
         "x 2 for all-reduce, else x (ppn - 1) / ppn, min with bwInter (nvls_tuner_efficiency 1; "
         "from v2.28.3-1, before: min(bwIntra, bwInter)), all-reduce algBw = busBw x nRanks / "
         "nsteps (nvls_alg_ratio 0; 5/6 before v2.28.3-1), all-gather / reduce-scatter "
         "unconverted (nvls_gather_alg_ratio 1; 5/6 at v2.19.x-v2.22.3, whose conversion guard "
         "names CollNet only), x (ppn - 1) / ppn (nvls_gather_ppn 1, from v2.27.3-1) and bwInter x "
         "0.9 in v2.27.x only (nvls_gather_inter); "
         "NVLS-tree all-reduce bandwidth x treeCorrectionFactor[protocol][log2i(nBytes >> 6)] "
         "for log2i below 24 when minCompCap >= 100 and the host CPU is x86 "
         "(nvls_tree_correction_blackwell_x86 1; tuning.cc ncclTopoGetAlgoTime from v2.29.2-1, "
         "absent at v2.28.9-1; a Grace host, ChipSpec.grace_gpus, is Arm); "
         "an empty collective discarded (empty_discard 1): src/enqueue.cc taskAppend returns "
         "ncclSuccess for a collective of count 0 before making a task ('Empty collectives can be "
         "discarded', v2.22.3-1 l.1986, v2.30.7-1 l.3024; 'if (info->count == 0 && info->coll "
         "!= ncclFuncSend && info->coll != ncclFuncRecv)' at v2.20.3-1 l.1865, v2.21.5-1 "
         "l.1916), so nothing launches; absent at v2.18.3-1 .. v2.19.4-1, where the empty "
         "collective is a task and its kernel launches (0: refused by analysis.cost); "
         "an all-to-all one ncclAlltoAll call (alltoall_call 1): NVIDIA/nccl-tests "
         "src/alltoall.cu AlltoAllRunColl calls ncclAlltoAll when the running NCCL is 2.28 or "
         "later, else posts ncclSend / ncclRecv to every peer in one group (nccl-tests v2.17.0 "
         "on, 2025-09-04; v2.17.6 da0b547 l.272-276), and ncclAlltoAll is first at v2.28.3-1 "
         "(src/collectives.cc l.94, absent at v2.27.7-1); its taskAppend discards count 0 "
         "before expanding it into sends and receives (src/enqueue.cc l.2537-2538 and "
         "l.2568-2572 at v2.28.3-1, l.3024 / l.3070 at v2.30.7-1), so nothing launches "
         "(0: grouped 0-byte sends, which launch); "
         "NCCL_LL_LINES_PER_THREAD 8 (src/include/device.h, the same at every tag "
         "v2.18.3-1 .. v2.30.7-1): an LL step is 8 lines x NCCL_LL_MAX_NTHREADS 512 = 4096 "
         "16-byte lines, 32 KiB of data (src/init.cc DEFAULT_LL_BUFFSIZE / NCCL_STEPS; "
         "prims_ll.h stepLines), which the network proxy sends whole "
         "(analysis._runtime_cost.net_store_forward; src/transport/net.cc); "
         "NCCL_LL128_ELEMS_PER_THREAD 120 (ll128_elems_per_thread: an LL128 step is 120 x "
         "NCCL_LL128_MAX_NTHREADS 640 8-byte words, init.cc DEFAULT_LL128_BUFFSIZE / "
         "NCCL_STEPS; its chunk 15/16 of it, enqueue.cc calcCollChunking) and a warp slice of "
         "WARP_SIZE 32 x NCCL_LL128_SHMEM_ELEMS_PER_THREAD 8 = 256 words (ll128_warp_words; "
         "prims_ll128.h WireWordPerSlice, the size waitSend posts), both at every tag v2.18.3-1 "
         ".. v2.30.7-1; a Simple step DEFAULT_BUFFSIZE (1 << 22) / NCCL_STEPS 8 = 524288 B "
         "(simple_step, every tag; simple_step_arm on an Arm host: DEFAULT_BUFFSIZE_ARM "
         "(1 << 20) / 8 = 131072 B at v2.18.3-1 / v2.18.5-1, the ARM default absent from "
         "v2.19.3-1; src/init.cc computeBuffSizes); LL128 and Simple steps also leave for the "
         "network only when whole (net.cc sendProxyProgress waits for the tail the GPU posts "
         "after the step: prims_ll128.h postSend, prims_simple.h); a ring Simple chunk of "
         "NCCL_STEPS / 2 = 4 steps cut into slices of NCCL_STEPS / 4 = 2 steps "
         "(simple_chunk_steps, simple_slice_steps: src/include/collectives.h "
         "ALLREDUCE_CHUNKSTEPS / ALLREDUCE_SLICESTEPS, ALLGATHER_*, REDUCESCATTER_*; "
         "BROADCAST_* and REDUCE_* 1; every tag v2.18.3-1 .. v2.30.7-1)"),
        ("tree_correction", _TUNING + " treeCorrectionFactor (powers of two, 64 B to 256 MB)"),
        ("threads", ("NVIDIA/nccl src/include/device.h NCCL_LL_MAX_NTHREADS 512, "
         "NCCL_LL128_MAX_NTHREADS 640, NCCL_SIMPLE_MAX_NTHREADS 512")),
        ("thread_threshold", ("NVIDIA/nccl src/include/comm.h NCCL_LL_THREAD_THRESHOLD 8 (x nRanks "
         "for ring, tuning.cc), NCCL_LL128_THREAD_THRESHOLD 8, NCCL_SIMPLE_THREAD_THRESHOLD 64; "
         "src/enqueue.cc topoGetAlgoInfo drops channels while nBytes < nc * nt * threshold")),
        ("max_channels", ("NVIDIA/nccl src/include/device.h MAXCHANNELS 64; execution channels "
         "are twice the search channels (NCCL maintainer, NVIDIA/nccl issue 1041), one search "
         "channel per NVLink lane of a direct ring or per NIC across nodes; on one NVSwitch "
         "node NCCL's own ring search (the search table; 8 H800 '16 coll channels', NVIDIA/nccl "
         "issue 892; 8 H100 '24 coll channels' in NCCL's own logs)")),
        ("nvls", ("NVIDIA/nccl src/transport/nvls.cc NVLS_NCHANNELS_SM90 16, "
         "NVLS_NCHANNELS_SM100_NVL 24 (one node or one multi-node NVLink domain; 32 across "
         "nodes: channels_nodes, NVLS_NCHANNELS_SM100, 16 on Hopper; read only by the ring's "
         "raise to NVLS's channels in 2.20-2.27, connect.cc), NCCL_NVLS_CHUNKSIZE default 128 KiB; src/enqueue.cc NVLS chunk cut to 64 / "
         "32 / 16 KiB while bytes < 64 / 8 / 2 x (channels x heads x chunk); "
         "src/device/all_reduce.h one-node NVLS all-reduce: per channel three warp groups, "
         "scatter, reduce-and-broadcast through NVLS, gather, each looping over heads x chunk "
         "elements (3 stages); NVLS-tree across nodes (src/enqueue.cc calcCollChunking "
         "NVLS_TREE at v2.18.3-1 .. v2.30.7-1): its chunk starts at the Simple step (2.18-2.21) or "
         "NCCL_NVLS_CHUNKSIZE (tree_chunk, from 2.22), capped at 64 KiB on 4 or more nodes from "
         "2.20 (tree_max_chunk_nodes4, NCCL_NVLSTREE_MAX_CHUNKSIZE -2), cut to 256 / 128 / 64 / "
         "32 KiB below 32 / 16 / 4 / 1 x channels x heads x chunk bytes; from 2.30.3 "
         "(tree_sm100_tuning) Blackwell over several nodes takes nvls.cc "
         "ncclNvlsTreeSm100Tuning's channels, chunk and cap; NVLS-tree's last loop gives each "
         "head alignUp(divUp(rest, nHeads), 16 B) (tree_head_align 16: src/device/all_reduce.h "
         "NVLS_TREE lastChunkCount at v2.22.3-1 .. v2.30.7-1; 4096 B in 2.20-2.21 from "
         "src/enqueue.cc computeCollLastChunkInfo, whole chunks in 2.18-2.19)")),
        ("p2p", ("NVIDIA/nccl src/init.cc NCCL_PARAM AllocP2pNetLLBuffers default 0 "
         "(net_ll_buffers 0): src/transport/net.cc sendSetup / recvSetup make a p2p connection "
         "(no graph, connIndex 1) shared (NCCL_NET_SHARED_BUFFERS default), sendProxyConnect / "
         "recvProxyConnect give a shared one an LL buffer only with that parameter ('Only "
         "allocate dedicated buffers for ring/tree, not for p2p'), and addP2pToPlan runs LL "
         "only where conn->buffs[NCCL_PROTO_LL] is set: p2p to a network peer is Simple (every "
         "tag v2.18.3-1 .. v2.30.7-1), while a peer in the node, over the P2P or SHM "
         "transport (src/transport/p2p.cc, shm.cc: a buffer for every protocol), chooses LL "
         "as in one node; "
         "NVIDIA/nccl v2.30.7-1 src/enqueue.cc: NCCL_PARAM P2pLLThreshold 16384 "
         "(l.859); addP2pToPlan (l.915-933): per message nChannels = min(nChannelsMin, "
         "divUp(bytes, minPartSize)), doubled while partSize > maxPartSize and nChannels <= "
         "nChannelsMax / 2, minPartSize / maxPartSize = p2pChunkSize / 8 and x 32 in one node, "
         "/ 2 and x 1 across nodes; LL while bytes <= nChannels x P2pLLThreshold (ll_rule 2); "
         "a Simple send and receive run ProtoSimple<1, 1> (src/device/sendrecv.h runSend / "
         "runRecv, every tag v2.18.3-1 .. v2.30.7-1: simple_slices 1, one slice a chunk of "
         "p2pChunkSize; prims_simple.h genericOp posts the tail after the whole slice), and over "
         "NVLink on Hopper and Blackwell the connection is P2P write (src/graph/paths.cc: P2P "
         "read only between two sm80 GPUs), the Simple buffer the receiver's: without a direct "
         "path the receiver copies a chunk into the user's buffer only once all of it is "
         "written, so each part's last slice (a slice of p2pChunkSize / simple_slices, "
         "runRecv's loop over the part; the earlier slices' copies overlap the next writes) is "
         "copied out after the bytes, the parts from src/include/device.h ncclP2pPartBounds "
         "(v2.22.3-1 .. v2.30.7-1: alignUp(divUp(bytes, nParts), 4 KiB) each, the last the "
         "rest: part_align 4096) or before 2.22 from calcP2pChunkSize (part_align 0: parts of "
         "its size, aligned to minPartSize, the last the rest; src/enqueue.cc v2.18.3-1 .. "
         "v2.21.5-1) (analysis._runtime_cost.p2p_drain: the busiest receiver's, "
         "from peers of its node, read and written once at drain_hbm_share of the chip's HBM "
         "bandwidth, an ASSUMPTION with its own source); "
         "the direct path without "
         "registered buffers (direct_unregistered 1, 2.18-2.22: a peer of the same process, "
         "'P2P/direct pointer', the sender writes into the user's buffer: no copy-out; "
         "prims_simple.h loadRecvConn, v2.22.3-1 l.371-379) is gone from 2.23 (v2.23.4-1: "
         "only under 'Direct && regFlag'; nccl-tests registers no buffer by default); "
         "nChannelsMax = p2pnChannelsPerPeer, nChannelsMin halved while nChannelsMin x nRanks "
         "> p2pnChannels (l.1143-1146); src/init.cc computeBuffSizes: P2P_NET_CHUNKSIZE 128 "
         "KiB (x 2 on Arm hosts with Blackwell GPUs), P2P_NVL_CHUNKSIZE 512 KiB (one node, all "
         "NVLink), P2P_PCI_CHUNKSIZE 128 KiB, at most the Simple buffer (4 MiB) / NCCL_STEPS "
         "(8); a round's channel is its base ncclP2pChannelBaseForRound (one node the round; "
         "across nodes (round / L) x divUp(L, 8) + (round % L) / 8, L = maxLocalRanks to 2.28.3, "
         "the schedule group P2P_SCHEDULE_GROUP_SIZE 8 cut to its gcd with the nodes' ranks from "
         "2.28.7, src/init.cc ncclP2pSchedule; its low log2Up(p2pnChannels) bits reversed from "
         "2.28, src/include/channel.h) plus the part (src/include/device.h "
         "ncclP2pChannelForPart; the part bit-reversed in 2.22-2.27), mod p2pnChannels, on "
         "max(send parts, receive parts) channels (addP2pToPlan: nChannelsMax = "
         "max(nChannels[0], nChannels[1]); the copy to itself never LL, protoLL = !selfSend), "
         "each rank's rounds in the order of its p2p schedule (src/init.cc: node then local "
         "quadratic deltas, flat over unequal nodes, to 2.28.3; ncclP2pSchedule's quadratic "
         "group deltas then linear local deltas from 2.28.7, one node one group from 2.28.9: "
         "net_round_rule 0 / 1 / 2), and "
         "ncclAddWorkBatchToPlan (l.120-160) "
         "starts a new batch at "
         "NCCL_MAX_DEV_WORK_P2P_PER_BATCH 8 works or a round already in it (2.22 on, batch_rule "
         "1) and from 2.28.7 at a round of another round / 8 group (batch_rule 2: v2.28.7-1 "
         "addWorkBatchToPlan l.136-138, absent in v2.28.3-1); a channel's "
         "batches run in series (src/device/sendrecv.h RunWorkBatch); src/graph/paths.cc "
         "ncclTopoGetNchannels / ncclTopoComputeP2pChannels: "
         "p2pnChannels = pow2Up(min(nChannels, MAXCHANNELS)); per NVLink peer 2 x (path "
         "bandwidth / one NVLink's), PCI peer 2, network peer max(local NICs, divUp(their GB/s, "
         "P2P_PER_CHANNEL_NET_BW 14)) (net_peer_rule 1); the least over peers, pow2Up; across "
         "nodes halved while it x divUp(nRanks, NCCL_MAX_DEV_WORK_P2P_PER_BATCH 8) > "
         "p2pnChannels, in one node at most p2pnChannels")),
        ("p2p.drain_hbm_share", ("ASSUMPTION (no copy rate of a thread block is sourced): "
         "a receiver copies each Simple part's last chunk out of its connection buffer "
         "(analysis._runtime_cost.p2p_drain), reading and writing it once at this share of "
         "its chip's datasheet HBM bandwidth (fabric.ChipSpec.hbm_bandwidth, the chip's own "
         "Parameter with its source, e.g. h100 3.35 TB/s from NVIDIA's H100 SXM5 datasheet, "
         "b200 8 TB/s); 1: the whole datasheet rate. Not a bound: the chunk the peer has just "
         "written may still be in the receiver's L2, whose rate is not sourced either; NVIDIA's "
         "collector's all-to-all at 1 and 16 MiB (ai-dynamo/aiconfigurator nccl_perf, NCCL "
         "2.29.2) stays slower than the model with it")),
        ("search", ("NVIDIA/nccl v2.30.7-1 src/graph/topo.h SM90_NVLINK_BW 20.6, SM100_NVLINK_BW "
         "40.1 GB/s per NVLink (40.0 in 2.25-2.27, 20.0 for SM90 in 2.18); src/graph/search.cc "
         "sm90SpeedArrayIntra / sm100SpeedArrayIntra (the ring search's speeds, GB/s per channel), "
         "ncclTopoCompute: lower the speed while next / best > .49 (lower_ratio), stop once "
         "nChannels x speed reaches the total; ncclTopoDupChannels: no doubling below 25 GB/s "
         "(dup_below) nor, on sm > 80, below 50 GB/s (dup_slow_below) with more than 4 channels "
         "(dup_slow_channels), then pass 2 raises the ring's speed while its channels still "
         "fit (ring_raise 1; from v2.19.3-1: in 2.18.x and 2.19.1 DupChannels runs last and "
         "pass 2 skips the ring, search.cc v2.18.5-1 l.962-996); src/graph/connect.cc "
         "ncclTopoPostset: channels x 2, at most "
         "MAXCHANNELS, raised to the NVLS channels when NVLS runs in 2.20.3-2.27.7 only "
         "(factors nvls_raises_ring; 'if (comm->nChannels < comm->nvlsChannels)' absent at "
         "v2.18.3-1 .. v2.19.4-1 and from v2.28.3-1; in one node and, where NVLS runs across nodes, on several, analysis._collectives _nvls_nodes_channels) "
         "(analysis._runtime_cost.nccl_switch_channels). Several nodes "
         "(analysis._runtime_cost.nccl_net_channels): sm90SpeedArrayInter / "
         "sm100SpeedArrayInter; ncclTopoSearchInit: start at the first speed not above the best "
         "GPU-to-NET path (its narrowest link: net.bw = port Mb/s / 8000, topo.cc l.418; PCIe "
         "width x 240 / 80 = 48 GB/s at gen5 x16, topo.cc l.545-557 and l.657); "
         "ncclTopoSearchRecNet: every channel charges bwInter on its first NIC (net.bw -= bw) "
         "and the PCIe links; connect.cc ncclTopoPostset l.481: x 2 again when minCompCap >= 90, "
         "nNodes > 1, ring bwIntra > 45 and nChannels < 16 (== 90 in 2.20-2.24; == 90 and 2 x "
         "nChannels <= MAXCHANNELS in 2.18-2.19); init.cc l.1177-1185, 1280: ring maxChannels MAXCHANNELS / 2, comm "
         "channels min(tree, ring) with the tree searched at the ring's count. Older releases' "
         "arrays and NVLink bandwidths: git show v<tag>-1:src/graph/search.cc / topo.h")),
        ("split", ("NVIDIA/nccl v2.30.7-1 src/enqueue.cc scheduleCollTasksToPlan (ring, tree and "
         "one-node NVLS, NVLS in a bin of its own over the NVLS channels; not CollNet): MinTrafficPerChannel 32 KiB; a task's traffic = bytes x "
         "ncclFuncTrafficPerByte (all-reduce 2, all-gather / reduce-scatter nRanks, else 1), x 4 "
         "for LL (from v2.26.2-1), floored at MinTrafficPerChannel; trafficPerChannel = "
         "divUp(traffic / nChannels, 16) x 16 (v2.29.2-1 on; before: max(MinTrafficPerChannel, "
         "traffic / nChannels)); cellSize = divUp(divUp(MinTrafficPerChannel, trafficPerByte), "
         "16) x 16; cellsPerChannel = min(cells, divUp(trafficPerChannel, trafficPerCell)); the "
         "first channel, middle channels and last one (lo / mid / hi), the remainder taken off "
         "the last. v2.22.3-1: 16 B cells, MinTrafficPerChannel 512, no task floor, the first "
         "channel's cells floored; v2.23.4-1 - v2.28.9-1: MinTrafficPerChannel 16 KiB. "
         "v2.20.3-1 - v2.21.5-1 addCBDCollToPlan: maxBytesPerChannel = divUp(divUp(bytes, "
         "channels), NCCL_BYTES_ALIGNMENT 16) x 16, each channel's count rounded up to "
         "computeCollAlignCount's (NCCL_SIMPLE_ALIGNMENT 32 x 8 x 16 = 4096 B; LL 8 B "
         "(NCCL_LL_ALIGNMENT_PER_THREAD) x threads; LL128 NCCL_LL128_ALIGNMENT_PER_WARP 480 B x "
         "warps; src/include/enqueue.h); one-node NVLS the same over usableChannels = "
         "nvlsChannels (v2.20.5-1 l.777-778). v2.18.3-1 - v2.19.4-1: the kernel splits the count "
         "(src/collectives/device/all_reduce.h runRing), taken as an even split (rule 0); its "
         "NVLS all-reduce gives channel bid the bid-th block of nHeads x chunk of each loop of "
         "nChannels x nHeads x chunk (the same file, RunWorkElement NVLS; "
         "analysis._runtime_cost.nvls_channel_split)")),
        ("kernel_floor", ("NVIDIA/nccl issue 1940: the least time of an 8-byte all-reduce with "
         "NCCL 2.27's symmetric-memory kernels on 8 GPUs (one kernel, one exchange with the "
         "NVLink peers, one barrier): about 2.3 us on H800/H200, about 3 us on B200")),
        ("host_launch", ("meta-pytorch/tritonbench pull request 1017 (2026-04-14), per-kernel "
         "launch overhead on GB200: nop_triton_direct_culaunch, cuLaunchKernel called "
         "directly with pre-built arguments (the PR's 'raw CUDA driver' row, 'irreducible "
         "CUDA driver cost'), 3.0 us with 0 kernel arguments (3.3 us with 19). Taken by a "
         "rule fixed before use: the most recent published host-side cost of one direct "
         "kernel launch on a named Hopper or Blackwell system, fewest arguments. A Grace "
         "host's figure, applied to x86 hosts too; NCCL's launch per device "
         "(src/group.cc doLaunches: cudaSetDevice, ncclLaunchPrepare, launch, "
         "ncclLaunchFinish) does more than one cuLaunchKernel, so it is a lower bound. "
         "The host's CPU time per launch (the loop does not wait for each kernel), not "
         "the GPU-timeline gap of an exposed launch (decode.launch_overhead, 4 us)")),
    ),
)

_NEEDED_KEYS.update({
    "library": {f.name: tuple(getattr(_NCCL, f.name)) for f in dataclasses.fields(Runtime)
                if isinstance(getattr(_NCCL, f.name), dict) and f.name != "split"},
    "one-sided": {"kernel_floor": tuple(_NCCL.kernel_floor)}})

_SYMMETRIC = Runtime(
    "symmetric-memory", "one-sided",
    "GPU-initiated one-sided kernels over load/store into a symmetric heap (one-shot, "
    "two-shot, multimem): one launch and one barrier per phase",
    kernel_floor=_NCCL.kernel_floor,
    nvls_efficiency=_NCCL.nvls_efficiency,
    # a one-sided kernel is launched by the host on each device like NCCL's: the same
    # per-launch host cost (one process driving several devices, nccl-tests -g N / -z 1)
    host_launch=_NCCL.host_launch,
    sources=(("kernel_floor", dict(_NCCL.sources)["kernel_floor"] + "; used as the cost of the "
              "first phase (launch, stores, barrier) of every one-sided kernel"),
             ("nvls_efficiency", dict(_NCCL.sources)["nvls_efficiency"]),
             ("host_launch", dict(_NCCL.sources)["host_launch"])),
)

#: vLLM's custom all-reduce (``csrc/custom_all_reduce.cuh``): one-sided kernels over CUDA IPC
#: buffers inside one NVLink domain, priced by their own steps (loads from every peer, flag
#: barriers; :data:`analysis._runtime_cost.PULL_KERNELS`) with the same kernel floor and host
#: launch cost as ``"symmetric-memory"`` (the least time of one kernel that exchanges with its
#: NVLink peers and synchronises: an assumption carried to vLLM's kernel). An engine's kernel,
#: not a library a user picks by name: not in :data:`RUNTIMES`; pass the object
#: (``analysis.cost(..., runtime=VLLM_CUSTOM_ALLREDUCE)``), as :func:`analysis.vllm_all_reduce`
#: does. All-reduce only.
def _engine_kernels(name, description, kernels):
    """A one-sided runtime of an engine's own kernels (not in :data:`RUNTIMES`) with the
    ``"symmetric-memory"`` runtime's kernel floor and host launch cost; ``kernels`` names them
    in the floor's source (the assumption carried to them)."""
    return Runtime(
        name, "one-sided", description,
        kernel_floor=_NCCL.kernel_floor,
        host_launch=_NCCL.host_launch,
        sources=(("kernel_floor", dict(_NCCL.sources)["kernel_floor"] + "; used as the cost of "
                  f"the launch and the start barrier of {kernels} (assumption: the same least "
                  "time as NCCL's symmetric kernels)"),
                 ("host_launch", dict(_NCCL.sources)["host_launch"])))


VLLM_CUSTOM_ALLREDUCE = _engine_kernels(
    "vllm-custom-allreduce",
    "vLLM's custom all-reduce: 1-stage (every rank loads every peer's buffer between two flag "
    "barriers) or 2-stage (reduce-scatter by loads, a release/acquire barrier, all-gather by "
    "loads), chosen by size",
    "vLLM's custom all-reduce kernels")

#: PyTorch's symmetric-memory all-reduce kernels (pytorch/pytorch
#: ``torch/csrc/distributed/c10d/symm_mem/CUDASymmetricMemoryOps.cu``: ``multimem_all_reduce_``
#: and ``two_shot_all_reduce_``, what vLLM's ``SymmMemCommunicator`` launches): the steps of the
#: ``"symmetric-memory"`` runtime's ``"in-switch"`` and ``"two-shot"`` kernels, but their flag
#: barrier (``sync_remote_blocks``) claims each peer's signal slot with a compare-and-swap it
#: waits on (:data:`analysis._runtime_cost.CAS_BARRIERS`). The same kernel floor and host
#: launch cost as ``"symmetric-memory"`` (an assumption carried to PyTorch's kernels). An
#: engine's kernel, not a library a user picks by name: not in :data:`RUNTIMES`; pass the
#: object. All-reduce only.
TORCH_SYMM_MEM = _engine_kernels(
    "torch-symm-mem",
    "PyTorch's symmetric-memory all-reduce: multimem (an entry barrier, multimem.ld_reduce + "
    "multimem.st, a release barrier) or two-shot (an entry barrier, loads from every peer and "
    "stores into every peer, a release barrier); barriers by compare-and-swap on peers' "
    "signal pads",
    "PyTorch's symmetric-memory kernels")

_IDEAL = Runtime(
    "ideal", "ideal",
    "the model's schedules with no software costs: path latency, transport overhead "
    "and link bandwidth only (not a bound)",
)

#: The runtime profiles by name.
RUNTIMES = {r.name: r for r in (_IDEAL, _NCCL, _SYMMETRIC)}

#: Oldest NCCL release whose tuner the ``"nccl@<version>"`` profiles reproduce, and the newest
#: (the ``"nccl"`` profile's).
NCCL_OLDEST, NCCL_NEWEST = (2, 18, 3), (2, 30, 7)

#: Changes of NCCL's tuner tables that are sourced as REVISIONS OF ITS PREDICTION of an
#: unchanged kernel: ``(field, key, first release of the new value) -> source``, over the
#: change points of :data:`_NCCL_HISTORY`. NCCL revises its prediction against measurements
#: of the same hardware (2.28.3 release notes: "Improved NVLS/NVLSTree tuning prediction to
#: improve algorithm and protocol selection ... NVLSTree Tuning Fixes. Update tuning data for
#: H100, GB200-NV72"). A change is a candidate revision where the release notes say so or
#: the device code the constant describes is the same across the change (the sources below,
#: between the two release tags adjacent to it). Whether it TIMES a given older release is
#: decided by the strict rule (review R5, the lead's decision of session 8): the files of the
#: kernel the value describes (:data:`PREDICTION_KERNEL_FILES`) must be identical (``git diff
#: -w``, licence/copyright header lines excepted) from that release's own tag all the way to
#: the change (:func:`revision_holds`, evidence :data:`_DEVICE_IDENTITY`). Every other change
#: point is a change of what the release RUNS, and an older release keeps its own value.
_DEVICE = "NVIDIA/nccl git diff v{a}-1 v{b}-1 -- src/device/"
_REV_LL = (_DEVICE.format(a="2.20.5", b="2.21.5") + ": prims_ll.h, broadcast.h and reduce.h "
           "identical; all_reduce.h, all_gather.h and reduce_scatter.h change only their "
           "CollNet paths, common.h only NVLS arity array sizes: the LL kernels unchanged")
_REV_228 = ("NVIDIA/nccl v2.28.3-1 release notes (commit f1308997): 'Improved NVLS/NVLSTree "
            "tuning prediction ... NVLSTree Tuning Fixes. Update tuning data for H100, "
            "GB200-NV72'; " + _DEVICE.format(a="2.27.7", b="2.28.3") + ": all_reduce.h, "
            "prims_simple.h, prims_ll128.h identical (common.h renames ncclDevComm only)")
_REV_2289 = _DEVICE.format(a="2.28.7", b="2.28.9") + ": empty (no kernel change)"
_REV_2287 = (_DEVICE.format(a="2.28.3", b="2.28.7") + ": all_reduce.h, all_gather.h, "
             "reduce_scatter.h, broadcast.h, reduce.h, prims_ll128.h identical")
_REV_2292 = (_DEVICE.format(a="2.28.9", b="2.29.2") + ": prims_ll128.h identical; all_reduce.h "
             "changes only CollNet paths, all_gather.h / reduce_scatter.h / broadcast.h only "
             "drop one argument of reduceCopy; common.h passes kernel arguments as "
             "__grid_constant__, sizes the work storage and adds a broadcast work type (the "
             "launch, not the LL128 data path)")
_REV_2297 = (_DEVICE.format(a="2.29.3", b="2.29.7") + ": prims_ll128.h, all_reduce.h and common.h "
             "differ only in their licence headers (git diff -w)")
_REV_2303 = (_DEVICE.format(a="2.29.7", b="2.30.3") + ": all_reduce.h identical; prims_simple.h "
             "changes only the cross-clique point-to-point peer index, common.h a Windows "
             "declaration and type spellings")
PREDICTION_REVISIONS = {
    ("hw_latency", ("net", "nvls-tree", "Simple"), "2.28.9"): _REV_2289,
    **{("ll_max_bw", ("hopper", i), "2.21.0"): _REV_LL for i in range(3)},
    ("factors", "ring_ll", "2.21.0"): _REV_LL,
    ("factors", "ring_ll_gather", "2.21.0"): _REV_LL,
    **{("factors", k, "2.28.0"): _REV_228 for k in (
        "nvls_tree_net_two_nodes", "nvls_tree_net_many_nodes", "nvls_tree_alg_ratio")},
    **{(f, ("blackwell", i), "2.28.0"): _REV_228 for f in ("tree_bw", "tree_ll128_bw")
       for i in range(3)},
    **{("nvls_tree_bw", (a, i), "2.28.0"): _REV_228 for a in ("hopper", "blackwell")
       for i in range(3)},
    **{("nvls_tree_bw", ("blackwell", i), v): src for i in range(3)
       for v, src in (("2.28.9", _REV_2289), ("2.30.3", _REV_2303))},
    **{("ring_ll128_bw", ("blackwell", i), v): src for i in range(3)
       for v, src in (("2.28.7", _REV_2287), ("2.29.2", _REV_2292), ("2.29.7", _REV_2297))},
}

#: The NVIDIA/nccl ``src/device`` files a revision's value describes: the kernel path it
#: prices. Every kernel unit includes ``common.h`` (entry and work loop) and ``primitives.h``
#: (the protocol dispatch), with ``common_kernel.h``, ``reduce_kernel.h`` and ``op128.h``
#: (``reduceCopy``, the reduction arithmetic, 128-bit loads and stores: NCCL's
#: ``src/device/generate.py`` and the headers' includes); then the protocol's primitives and
#: the collectives the constant prices (``src/graph/tuning.cc``: the LL ceiling ``llMaxBws``
#: caps ring LL of every collective and tree LL; ``perChMaxRingLL128Bws`` ring LL128 of every
#: collective; ``perChMaxTreeBws`` tree all-reduce of every protocol; ``perChMaxTreeLL128Bws``
#: tree LL128; the NVLS-tree terms NVLS-tree all-reduce, Simple only). Not included: the
#: net-device unpack (``src/device/network``) and ``src/include`` (host-shared declarations).
_BASE_FILES = ("common.h", "primitives.h", "common_kernel.h", "reduce_kernel.h", "op128.h")
_COLL_FILES = ("all_reduce.h", "all_gather.h", "reduce_scatter.h", "broadcast.h", "reduce.h")
_KERNEL_FILES = {
    "ring and tree LL": _BASE_FILES + ("prims_ll.h",) + _COLL_FILES,
    "ring LL128": _BASE_FILES + ("prims_ll128.h",) + _COLL_FILES,
    "tree all-reduce": _BASE_FILES + ("all_reduce.h", "prims_ll.h", "prims_ll128.h",
                                      "prims_simple.h"),
    "tree LL128 all-reduce": _BASE_FILES + ("all_reduce.h", "prims_ll128.h"),
    "NVLS-tree all-reduce": _BASE_FILES + ("all_reduce.h", "prims_simple.h"),
}


def _kernel_of(field, key):
    """The kernel (a key of :data:`_KERNEL_FILES`) a revised constant describes."""
    if field == "ll_max_bw" or key in ("ring_ll", "ring_ll_gather"):
        return "ring and tree LL"
    if field == "ring_ll128_bw":
        return "ring LL128"
    if field == "tree_bw":
        return "tree all-reduce"
    if field == "tree_ll128_bw":
        return "tree LL128 all-reduce"
    return "NVLS-tree all-reduce"


#: The tables of the ``"nccl"`` profile some of whose changes are sourced revisions of the
#: prediction (:data:`PREDICTION_REVISIONS`). An older release CHOOSES with its own tables
#: and its run is TIMED (:attr:`Runtime.timing`) with, per constant, the value the sourced
#: revisions after it lead to: from the release's own value, each later change that is a
#: sourced revision AND whose kernel files are identical from the release's own tag to the
#: change (:func:`revision_holds`) is taken, up to the first that is not (an assumption,
#: applied to every release: the same kernel runs as NCCL's later prediction of it says).
#: With that strict rule (session 8) only 2.28.3 and 2.28.7 take revisions (2.28.9's NVLS-tree
#: network latency and Blackwell NVLS-tree cap, 2.28.7's Blackwell ring LL128 cap for
#: 2.28.3); e.g. NVLS-tree's all_reduce.h, prims_simple.h and common.h differ between 2.26.6
#: and 2.28.3, and all_reduce.h between 2.20.5 and 2.21.5 (CollNet paths), so those releases
#: keep their own values.
#: ``base_latency`` is not among them (its changes, NVLS's in 2.19 and the tree's Simple
#: latency in 2.23, came with changed device code: ``prims_simple.h``, ``all_reduce.h``),
#: nor ``tree_correction`` (the same in every release reproduced).
PREDICTION_FIELDS = tuple(sorted({f for f, _k, _v in PREDICTION_REVISIONS}))

#: For every revision of :data:`PREDICTION_REVISIONS`, the ``src/device`` files of the kernel
#: its value describes (:data:`_KERNEL_FILES`): ``(field, key, release) -> (kernel, files)``.
PREDICTION_KERNEL_FILES = {r: (_kernel_of(r[0], r[1]), _KERNEL_FILES[_kernel_of(r[0], r[1])])
                           for r in PREDICTION_REVISIONS}


@functools.cache
def _change_tag(first):
    """The first modelled release tag carrying a value first released in ``first``
    (``"2.28.0"`` -> ``"2.28.3"``)."""
    v = _parse_version(first)
    return min((u, t) for u, t in _release_versions() if u >= v)[1]


@functools.cache
def _release_versions():
    """Every modelled release tag (:data:`NCCL_RELEASE_DATES`) as ``(version, tag)``, oldest
    first: the tags parsed once (the version rules below compare them for every release and
    revision a run is timed by)."""
    return tuple(sorted((_parse_version(t), t) for t in NCCL_RELEASE_DATES))


#: Identity evidence, read from git at the release tags of NVIDIA/nccl (regenerated by
#: ``tests/nccl_device_identity.py``): ``(file, change tag) -> the modelled releases older than
#: the change tag whose src/device/<file> is identical to the change tag's`` (``git diff -w
#: v<old>-1 v<change>-1 -- src/device/<file>`` shows no change outside the leading
#: licence/copyright comment block), space-separated.
_DEVICE_IDENTITY = {
    ('all_gather.h', '2.21.5'): '',
    ('all_reduce.h', '2.21.5'): '',
    ('broadcast.h', '2.21.5'): '2.20.3 2.20.5',
    ('common.h', '2.21.5'): '',
    ('common_kernel.h', '2.21.5'): '2.20.3 2.20.5',
    ('op128.h', '2.21.5'): '2.19.1 2.19.3 2.19.4 2.20.3 2.20.5',
    ('primitives.h', '2.21.5'): '2.19.1 2.19.3 2.19.4 2.20.3 2.20.5',
    ('prims_ll.h', '2.21.5'): '2.20.3 2.20.5',
    ('reduce.h', '2.21.5'): '2.20.3 2.20.5',
    ('reduce_kernel.h', '2.21.5'): '2.20.3 2.20.5',
    ('reduce_scatter.h', '2.21.5'): '',
    ('all_reduce.h', '2.28.3'): '2.27.3 2.27.5 2.27.6 2.27.7',
    ('common.h', '2.28.3'): '',
    ('common_kernel.h', '2.28.3'): '2.24.3 2.25.1 2.26.2 2.26.3 2.26.5 2.26.6 2.27.3 2.27.5 2.27.6 2.27.7',
    ('op128.h', '2.28.3'): '2.27.3 2.27.5 2.27.6 2.27.7',
    ('primitives.h', '2.28.3'): '2.26.2 2.26.3 2.26.5 2.26.6 2.27.3 2.27.5 2.27.6 2.27.7',
    ('prims_ll.h', '2.28.3'): '2.26.2 2.26.3 2.26.5 2.26.6 2.27.3 2.27.5 2.27.6 2.27.7',
    ('prims_ll128.h', '2.28.3'): '2.26.2 2.26.3 2.26.5 2.26.6 2.27.3 2.27.5 2.27.6 2.27.7',
    ('prims_simple.h', '2.28.3'): '2.27.3 2.27.5 2.27.6 2.27.7',
    ('reduce_kernel.h', '2.28.3'): '2.27.5 2.27.6 2.27.7',
    ('all_gather.h', '2.28.7'): '2.27.3 2.27.5 2.27.6 2.27.7 2.28.3',
    ('all_reduce.h', '2.28.7'): '2.27.3 2.27.5 2.27.6 2.27.7 2.28.3',
    ('broadcast.h', '2.28.7'): '2.26.2 2.26.3 2.26.5 2.26.6 2.27.3 2.27.5 2.27.6 2.27.7 2.28.3',
    ('common.h', '2.28.7'): '2.28.3',
    ('common_kernel.h', '2.28.7'): '2.24.3 2.25.1 2.26.2 2.26.3 2.26.5 2.26.6 2.27.3 2.27.5 2.27.6 2.27.7 2.28.3',
    ('op128.h', '2.28.7'): '2.27.3 2.27.5 2.27.6 2.27.7 2.28.3',
    ('primitives.h', '2.28.7'): '2.26.2 2.26.3 2.26.5 2.26.6 2.27.3 2.27.5 2.27.6 2.27.7 2.28.3',
    ('prims_ll128.h', '2.28.7'): '2.26.2 2.26.3 2.26.5 2.26.6 2.27.3 2.27.5 2.27.6 2.27.7 2.28.3',
    ('reduce.h', '2.28.7'): '2.23.4 2.24.3 2.25.1 2.26.2 2.26.3 2.26.5 2.26.6 2.27.3 2.27.5 2.27.6 2.27.7 2.28.3',
    ('reduce_kernel.h', '2.28.7'): '2.27.5 2.27.6 2.27.7 2.28.3',
    ('reduce_scatter.h', '2.28.7'): '2.27.3 2.27.5 2.27.6 2.27.7 2.28.3',
    ('all_reduce.h', '2.28.9'): '2.27.3 2.27.5 2.27.6 2.27.7 2.28.3 2.28.7',
    ('common.h', '2.28.9'): '2.28.3 2.28.7',
    ('common_kernel.h', '2.28.9'): '2.24.3 2.25.1 2.26.2 2.26.3 2.26.5 2.26.6 2.27.3 2.27.5 2.27.6 2.27.7 2.28.3 2.28.7',
    ('op128.h', '2.28.9'): '2.27.3 2.27.5 2.27.6 2.27.7 2.28.3 2.28.7',
    ('primitives.h', '2.28.9'): '2.26.2 2.26.3 2.26.5 2.26.6 2.27.3 2.27.5 2.27.6 2.27.7 2.28.3 2.28.7',
    ('prims_simple.h', '2.28.9'): '2.27.3 2.27.5 2.27.6 2.27.7 2.28.3 2.28.7',
    ('reduce_kernel.h', '2.28.9'): '2.27.5 2.27.6 2.27.7 2.28.3 2.28.7',
    ('all_gather.h', '2.29.2'): '',
    ('all_reduce.h', '2.29.2'): '',
    ('broadcast.h', '2.29.2'): '',
    ('common.h', '2.29.2'): '',
    ('common_kernel.h', '2.29.2'): '',
    ('op128.h', '2.29.2'): '2.27.3 2.27.5 2.27.6 2.27.7 2.28.3 2.28.7 2.28.9',
    ('primitives.h', '2.29.2'): '2.26.2 2.26.3 2.26.5 2.26.6 2.27.3 2.27.5 2.27.6 2.27.7 2.28.3 2.28.7 2.28.9',
    ('prims_ll128.h', '2.29.2'): '2.26.2 2.26.3 2.26.5 2.26.6 2.27.3 2.27.5 2.27.6 2.27.7 2.28.3 2.28.7 2.28.9',
    ('reduce.h', '2.29.2'): '2.23.4 2.24.3 2.25.1 2.26.2 2.26.3 2.26.5 2.26.6 2.27.3 2.27.5 2.27.6 2.27.7 2.28.3 2.28.7 2.28.9',
    ('reduce_kernel.h', '2.29.2'): '2.27.5 2.27.6 2.27.7 2.28.3 2.28.7 2.28.9',
    ('reduce_scatter.h', '2.29.2'): '',
    ('all_gather.h', '2.29.7'): '2.29.2 2.29.3',
    ('all_reduce.h', '2.29.7'): '2.29.2 2.29.3',
    ('broadcast.h', '2.29.7'): '2.29.2 2.29.3',
    ('common.h', '2.29.7'): '2.29.2 2.29.3',
    ('common_kernel.h', '2.29.7'): '',
    ('op128.h', '2.29.7'): '2.27.3 2.27.5 2.27.6 2.27.7 2.28.3 2.28.7 2.28.9 2.29.2 2.29.3',
    ('primitives.h', '2.29.7'): '2.26.2 2.26.3 2.26.5 2.26.6 2.27.3 2.27.5 2.27.6 2.27.7 2.28.3 2.28.7 2.28.9 2.29.2 2.29.3',
    ('prims_ll128.h', '2.29.7'): '2.26.2 2.26.3 2.26.5 2.26.6 2.27.3 2.27.5 2.27.6 2.27.7 2.28.3 2.28.7 2.28.9 2.29.2 2.29.3',
    ('reduce.h', '2.29.7'): '2.23.4 2.24.3 2.25.1 2.26.2 2.26.3 2.26.5 2.26.6 2.27.3 2.27.5 2.27.6 2.27.7 2.28.3 2.28.7 2.28.9 2.29.2 2.29.3',
    ('reduce_kernel.h', '2.29.7'): '2.27.5 2.27.6 2.27.7 2.28.3 2.28.7 2.28.9 2.29.2 2.29.3',
    ('reduce_scatter.h', '2.29.7'): '2.29.2 2.29.3',
    ('all_reduce.h', '2.30.3'): '2.29.2 2.29.3 2.29.7',
    ('common.h', '2.30.3'): '',
    ('common_kernel.h', '2.30.3'): '',
    ('op128.h', '2.30.3'): '',
    ('primitives.h', '2.30.3'): '2.26.2 2.26.3 2.26.5 2.26.6 2.27.3 2.27.5 2.27.6 2.27.7 2.28.3 2.28.7 2.28.9 2.29.2 2.29.3 2.29.7',
    ('prims_simple.h', '2.30.3'): '',
    ('reduce_kernel.h', '2.30.3'): '',
}


def release_tag(version):
    """The modelled NCCL release tag a version stands for: itself when it is a tag, else the
    latest tag of its own ``major.minor`` series not after it (``"2.28.5"`` -> ``"2.28.3"``),
    and for a version before its series' first tag, that first tag (``"2.28"`` -> ``"2.28.3"``,
    ``"2.27.1"`` -> ``"2.27.3"``: NCCL's git tags skip some versions of a series, whose code
    is the series', not the previous series'; every modelled series but 2.18, whose 2.18.1 is
    a tag not reproduced and is refused by :func:`runtime`, starts at its first git tag). The
    one rule for a release's identity: its
    tuner constants (:func:`runtime`), the revisions that time its run
    (:func:`revision_holds`) and the kernels it is checked against are all that tag's.

    Parameters
    ----------
    version : str
        An NCCL version, ``major.minor`` or ``major.minor.patch`` (``"2.28"``, ``"2.21.5"``).

    Returns
    -------
    str
        A tag of :data:`NCCL_RELEASE_DATES`.

    Examples
    --------
    >>> release_tag("2.28.5"), release_tag("2.21.5"), release_tag("2.28"), release_tag("2.27.1")
    ('2.28.3', '2.21.5', '2.28.3', '2.27.3')
    """
    return _release_tag(_parse_version(version))


@functools.cache
def _release_tag(v):
    """:func:`release_tag` of a parsed version ``v``."""
    series = [(u, t) for u, t in _release_versions() if u[:2] == v[:2]]
    if not series:
        raise SpecError(f"NCCL {'.'.join(map(str, v))} names no modelled release: no tag of "
                        f"the {v[0]}.{v[1]} series is reproduced (oldest "
                        f"{'.'.join(map(str, NCCL_OLDEST))}, newest "
                        f"{'.'.join(map(str, NCCL_NEWEST))})")
    return max(((u, t) for u, t in series if u <= v), default=series[0])[1]


def revision_holds(release, revision):
    """Whether ``revision`` (a key of :data:`PREDICTION_REVISIONS`) may time ``release``'s run:
    every kernel file of the revision (:data:`PREDICTION_KERNEL_FILES`) is identical
    (:data:`_DEVICE_IDENTITY`) from the release's tag (:func:`release_tag`) through every
    modelled tag up to the change tag.

    Parameters
    ----------
    release : str
        An NCCL version (:func:`release_tag` reads it).
    revision : tuple
        A key of :data:`PREDICTION_REVISIONS`: ``(field, entry, tag of the change)``, the
        field one of :data:`PREDICTION_FIELDS`.

    Returns
    -------
    bool

    Examples
    --------
    >>> revision_holds("2.28.7", ("hw_latency", ("net", "nvls-tree", "Simple"), "2.28.9"))
    True
    >>> revision_holds("2.26.6", ("factors", "nvls_tree_alg_ratio", "2.28.0"))
    False
    """
    v = _parse_version(release)
    try:
        known = isinstance(revision, tuple) and revision in PREDICTION_KERNEL_FILES
    except TypeError:                       # a tuple holding a list: no key of the table
        known = False
    if not known:
        raise SpecError(f"{show_value(revision)} is not a revision of fabric.PREDICTION_REVISIONS "
                        "(a (field, key, release) key)")
    return _revision_holds(v, revision)


@functools.cache
def _revision_holds(v, revision):
    """:func:`revision_holds` of a parsed version ``v`` and a known ``revision`` (pure: the
    tables it reads are constants; cached, as every release's timing asks it per change)."""
    change = _change_tag(revision[2])
    cv = _parse_version(change)
    if v >= cv:
        return False
    if not NCCL_OLDEST <= v <= NCCL_NEWEST:
        return False
    own = _parse_version(_release_tag(v))
    if own >= cv:
        return False
    between = [t for u, t in _release_versions() if own <= u < cv]
    _kernel, files = PREDICTION_KERNEL_FILES[revision]
    return all(t in _DEVICE_IDENTITY.get((f, change), "").split()
               for f in files for t in between)


def _change_files():
    """change tag -> the kernel files identity must be known for (read by
    tests/nccl_device_identity.py, which regenerates :data:`_DEVICE_IDENTITY`)."""
    out = {}
    for (_f, _k, first), (_kernel, files) in PREDICTION_KERNEL_FILES.items():
        out.setdefault(_change_tag(first), set()).update(files)
    return out

def _row(v, scale=GBS):
    return tuple(x * scale for x in v)


#: What NCCL's tuner had otherwise in older releases, read from ``src/graph/tuning.cc``
#: (and ``src/include/device.h``) at each release tag of NVIDIA/nccl: (field, key) ->
#: ((first release carrying the value, value), ...), oldest first; the newest value is the
#: ``"nccl"`` profile's. A release between two tags takes the latest value whose first
#: release is not after it. Before 2.25 NCCL had no Blackwell row (every GPU of compute
#: capability >= 9.0 took the Hopper row): handled in :func:`_nccl_version`.
_NCCL_HISTORY = {
    # NVLS / NVLS-tree: a 23 us base latency and no NVLink step in 2.18; a 23 us NVLink step
    # in 2.19-2.20, 25 us from 2.21
    ("base_latency", ("nvls", "Simple")): (((2, 18, 3), 23e-6), ((2, 19, 0), 0.0)),
    ("base_latency", ("nvls-tree", "Simple")): (((2, 18, 3), 23e-6), ((2, 19, 0), 0.0)),
    ("hw_latency", ("nvlink", "nvls", "Simple")): (((2, 18, 3), 0.0), ((2, 19, 0), 23e-6),
                                                   ((2, 21, 0), 25e-6)),
    ("hw_latency", ("nvlink", "nvls-tree", "Simple")): (((2, 18, 3), 0.0), ((2, 19, 0), 23e-6),
                                                        ((2, 21, 0), 25e-6)),
    # NVLS-tree network latency: 19 us in 2.18, 14 us until 2.28.7, 20.9 us from 2.28.9
    ("hw_latency", ("net", "nvls-tree", "Simple")): (((2, 18, 3), 19e-6), ((2, 19, 0), 14e-6),
                                                     ((2, 28, 9), 20.9e-6)),
    # tree Simple: base 0 and 4 / 6 / 14 us per step (NVLink, PCI, network) in 2.18; base 0
    # and 28 / 28 / 28 us in 2.19-2.22; base 8.4 and 4 / 4 / 14 us from 2.23
    ("base_latency", ("tree", "Simple")): (((2, 18, 3), 0.0), ((2, 23, 0), 8.4e-6)),
    ("hw_latency", ("nvlink", "tree", "Simple")): (((2, 18, 3), 4e-6), ((2, 19, 0), 28e-6),
                                                   ((2, 23, 0), 4.0e-6)),
    ("hw_latency", ("pci", "tree", "Simple")): (((2, 18, 3), 6e-6), ((2, 19, 0), 28e-6),
                                                ((2, 23, 0), 4.0e-6)),
    ("hw_latency", ("net", "tree", "Simple")): (((2, 18, 3), 14e-6), ((2, 19, 0), 28e-6),
                                                ((2, 23, 0), 14e-6)),
    # NVLS-tree in 2.18: 2 (nodes - 1) network steps (later: one NVLink step + 2 log2(nodes)
    # network steps) and algBw = busBw x 0.7 nodes / (2 (nodes - 1))
    ("factors", "nvls_tree_linear_net_steps"): (((2, 18, 3), 1), ((2, 19, 0), 0)),
    ("factors", "nvls_tree_ratio_nodes"): (((2, 18, 3), 0.7), ((2, 19, 0), 0)),
    # NVLS off on a node of 2 GPUs or fewer from 2.18.1 to 2.28.3 (nvls.cc gpuCount <= 2);
    # from 2.28.7 only below 2 GPUs
    ("factors", "nvls_min_gpus"): (((2, 18, 3), 3), ((2, 28, 7), 2)),
    # NVLS (and so NVLS-tree) off on a communicator of several hosts in 2.20.x only
    # (nvls.cc ncclNvlsInit 'comm->nNodes > 1 || comm->MNNVL', v2.20.3-1 / v2.20.5-1)
    ("factors", "nvls_multi_host"): (((2, 18, 3), 1), ((2, 20, 0), 0), ((2, 21, 0), 1)),
    # NVLS all-gather / reduce-scatter in the tuner: from 2.19 (tuning.cc; 2.18: ring only)
    ("factors", "nvls_gather"): (((2, 18, 3), 0), ((2, 19, 0), 1)),
    # a Simple step on an Arm host: DEFAULT_BUFFSIZE_ARM 1 MiB / 8 in 2.18 (init.cc), 4 MiB / 8
    # from 2.19
    ("factors", "simple_step_arm"): (((2, 18, 3), 131072), ((2, 19, 0), 524288)),
    # connect.cc ncclTopoPostset raises the ring channels to the NVLS channels ('if
    # (comm->nChannels < comm->nvlsChannels) copyChannels') from 2.20.3 to 2.27.7; absent at
    # 2.18.3-2.19.4 and from 2.28.3 (its release notes: 'Decreased max CTA count from 32 to 16
    # on Blackwell')
    ("factors", "nvls_raises_ring"): (((2, 18, 3), 0), ((2, 20, 0), 1), ((2, 28, 0), 0)),
    # enqueue.cc taskAppend discards a collective of count 0 from 2.20.3 (absent at
    # 2.18.3-2.19.4: the empty collective is a task and its kernel launches)
    ("factors", "empty_discard"): (((2, 18, 3), 0), ((2, 20, 0), 1)),
    # ncclAlltoAll first in 2.28.3 (collectives.cc; absent at 2.27.7), and nccl-tests'
    # alltoall_perf calls it when NCCL is 2.28 or later (src/alltoall.cu, from v2.17.0)
    ("factors", "alltoall_call"): (((2, 18, 3), 0), ((2, 28, 0), 1)),
    # the tuner's one-node NVLS bandwidth (search.cc ncclTopoCompute, tuning.cc
    # ncclTopoTuneModel at each tag): the NVLS graph's heads capped at NCCL_MAX_NVLS_ARITY
    # from 2.25 (all GPUs before); pass 2 raises bwInter from 2.19.3 (before: bwIntra only);
    # busBw x 5/6 until 2.27, from 2.28 nvlsEfficiency x (heads - 1) / heads (x 2 for
    # all-reduce) and algBw = busBw x nRanks / nsteps; all-gather / reduce-scatter x 5/6 in
    # 2.19-2.22, unconverted from 2.23; x (ppn - 1) / ppn from 2.27, bwInter x 0.9 in 2.27
    ("factors", "nvls_graph_arity"): (((2, 18, 3), 0), ((2, 25, 0), 1)),
    ("factors", "nvls_raise_inter"): (((2, 18, 3), 0), ((2, 19, 0), 1)),
    ("factors", "nvls_tuner_efficiency"): (((2, 18, 3), 0), ((2, 28, 0), 1)),
    ("factors", "nvls_alg_ratio"): (((2, 18, 3), 5 / 6), ((2, 28, 0), 0)),
    ("factors", "nvls_gather_alg_ratio"): (((2, 18, 3), 5 / 6), ((2, 23, 0), 1)),
    ("factors", "nvls_gather_ppn"): (((2, 18, 3), 0), ((2, 27, 0), 1)),
    ("factors", "nvls_gather_inter"): (((2, 18, 3), 1.0), ((2, 27, 0), 0.9), ((2, 28, 0), 1.0)),
    # NVLS-tree bandwidth corrected by size as the tree's on Blackwell x86 hosts: from 2.29.2
    ("factors", "nvls_tree_correction_blackwell_x86"): (((2, 18, 3), 0), ((2, 29, 0), 1)),
    # tree busBw x .85 when the tree graph is the simple TREE pattern: from 2.26.2 (tuning.cc)
    ("factors", "tree_simple_pattern"): (((2, 18, 3), 1.0), ((2, 26, 0), 0.85)),
    # ring LL128 x 0.7 with one rank per node until 2.22 (x 0.92 otherwise and from 2.23)
    ("factors", "ring_ll128_ppn1"): (((2, 18, 3), 0.7), ((2, 23, 0), 0.92)),
    # Hopper LL ceiling 87.7 / 22.5 / 19.0 GB/s until 2.20, 141 / 45 / 35 from 2.21
    **{("ll_max_bw", ("hopper", i)): (((2, 18, 3), a * GBS), ((2, 21, 0), b * GBS))
       for i, (a, b) in enumerate(((87.7, 141.0), (22.5, 45.0), (19.0, 35.0)))},
    # ring LL: busBw x 1/4 (all-reduce, reduce, or several nodes) or x 1/3 (one-node
    # gather-like) until 2.20; x .5 from 2.21
    ("factors", "ring_ll"): (((2, 18, 3), 0.25), ((2, 21, 0), 0.5)),
    ("factors", "ring_ll_gather"): (((2, 18, 3), 1 / 3), ((2, 21, 0), 0.5)),
    # NVLS arity 8 until 2.20 (device.h NCCL_MAX_NVLS_ARITY), 32 from 2.21
    ("factors", "nvls_max_arity"): (((2, 18, 3), 8), ((2, 21, 0), 32)),
    # ring all-reduce network steps 2 nodes until 2.22, 2 (nodes - 1) from 2.23
    ("factors", "ring_allreduce_extra_net_steps"): (((2, 18, 3), 2), ((2, 23, 0), 0)),
    # one rank per node pays the tree's network latency from 2.23 (before: the algorithm's)
    ("factors", "ppn1_tree_net_latency"): (((2, 18, 3), 0), ((2, 23, 0), 1)),
    # NVLS-tree bandwidth until 2.27: min(bwIntra, bwInter (2 nodes) or bwInter / 2), algBw
    # = busBw x 5/6; from 2.28 the network side doubles on 2 nodes and algBw = busBw x
    # nRanks / nsteps (0 stands for that)
    ("factors", "nvls_tree_net_two_nodes"): (((2, 18, 3), 1), ((2, 28, 0), 2)),
    ("factors", "nvls_tree_net_many_nodes"): (((2, 18, 3), 0.5), ((2, 28, 0), 1)),
    ("factors", "nvls_tree_alg_ratio"): (((2, 18, 3), 5 / 6), ((2, 28, 0), 0)),
    # NVLS channels: NCCL_NVLS_NCHANNELS 16 for every GPU until 2.24; 32 on Blackwell in
    # 2.25-2.26; 24 on Blackwell in one node or one NVLink domain from 2.27 (nvls.cc)
    ("nvls", ("channels", "blackwell")): (((2, 18, 3), 16), ((2, 25, 0), 32), ((2, 27, 0), 24)),
    # a communicator over several hosts: 16 until 2.24, NVLS_NCHANNELS_SM100 32 on Blackwell
    # from 2.25 (nvls.cc; from 2.27 'multiNode ? NVLS_NCHANNELS_SM100 : ..._NVL')
    ("nvls", ("channels_nodes", "blackwell")): (((2, 18, 3), 16), ((2, 25, 0), 32)),
    # NVLS-tree's chunk (src/enqueue.cc calcCollChunking): from the Simple step until 2.21
    # (tree_chunk 0 stands for it), NCCL_NVLS_CHUNKSIZE 128 KiB from 2.22; at most 64 KiB on 4+
    # nodes from 2.20 (NCCL_NVLSTREE_MAX_CHUNKSIZE -2; 0 = no cap); 2.30's SM100 multi-node
    # tuning (nvls.cc ncclNvlsTreeSm100Tuning) sets Blackwell's channels, chunk and cap
    ("nvls", "tree_chunk"): (((2, 18, 3), 0), ((2, 22, 0), 131072)),
    ("nvls", "tree_max_chunk_nodes4"): (((2, 18, 3), 0), ((2, 20, 0), 65536)),
    ("nvls", "tree_sm100_tuning"): (((2, 18, 3), 0), ((2, 30, 0), 1)),
    # one-node NVLS all-reduce, a channel's last (partial) loop per head: whole chunks in
    # 2.18-2.19 (the kernel's loop, 0), lastChunkCount aligned to NCCL_SIMPLE_ALIGNMENT (4096 B)
    # in 2.20-2.21 (enqueue.cc computeCollLastChunkInfo), to 16 B in 2.22, to 16 KiB from 2.23
    # (all_reduce.h lastChunkSize = alignUp(divUp(remCount, nHeads), 16384 / sizeof(T)))
    # NVLS-tree's last loop per head: whole chunks in 2.18-2.19 (the kernel's offsets), 4096 B
    # in 2.20-2.21 (computeCollLastChunkInfo's NVLS / NVLS_TREE line), 16 B from 2.22 (the
    # kernel's alignUp(divUp(remCount, nHeads), 16 / sizeof(T)), v2.22.3-1 .. v2.30.7-1)
    ("nvls", "tree_head_align"): (((2, 18, 3), 0), ((2, 20, 0), 4096), ((2, 22, 0), 16)),
    ("nvls", "head_align"): (((2, 18, 3), 0), ((2, 20, 0), 4096), ((2, 22, 0), 16),
                             ((2, 23, 0), 16384)),
    # point-to-point protocol choice (src/enqueue.cc): until 2.21 each chunk of a split message
    # is its own operation and runs LL at most P2pLLThreshold bytes (ll_rule 0); 2.22-2.28 the
    # message runs LL at most p2pnChannelsPerPeer x threshold (thresholdLL, rule 1); from 2.29
    # at most its own channels x threshold (rule 2). Network peers' channels (paths.cc): until
    # 2.28 max(NICs, 2 halved while 2 x nRanks > 4 x p2pnChannels) (rule 0), from 2.29 by NIC
    # bandwidth / 14 GB/s and halved across nodes (rule 1); the Arm-Blackwell network chunk x 2
    # from 2.29 (init.cc)
    ("p2p", "ll_rule"): (((2, 18, 3), 0), ((2, 22, 0), 1), ((2, 29, 0), 2)),
    ("p2p", "net_peer_rule"): (((2, 18, 3), 0), ((2, 29, 0), 1)),
    # one node: rounds p2pnChannels apart share a channel; a channel's batch holds up to 8 works
    # of distinct rounds from 2.22 (rule 1), and from 2.28.7 only rounds of one round / 8 group
    # (rule 2: the round-epoch test of enqueue.cc addWorkBatchToPlan, in v2.28.7-1 l.136-138
    # and every later tag, absent in v2.28.3-1); before 2.22 not read (rule 0: one batch)
    ("p2p", "batch_rule"): (((2, 18, 3), 0), ((2, 22, 0), 1), ((2, 28, 7), 2)),
    # a round's base channel (src/include/channel.h ncclP2pChannelBaseForRound): its low
    # log2(p2pnChannels) bits reversed from 2.28 (reverseBits) and its parts on the channels
    # after it; in 2.22-2.27 the base as it is and the parts reversed (src/include/device.h
    # ncclP2pChannelForPart: base + reverseBits(part, log2 p2pnChannels));
    # across nodes the rounds step by node (maxLocalRanks) until 2.28.3 and by the schedule
    # group (P2P_SCHEDULE_GROUP_SIZE, default 8, src/init.cc ncclP2pSchedule) from 2.28.7;
    # the schedule itself (the peers of each round): node deltas then local deltas, both
    # quadratic, until 2.28.3 (init.cc 'Build p2p schedule', identical v2.22.3-1 .. v2.28.3-1);
    # quadratic group deltas then linear local deltas from 2.28.7, the one node's group all its
    # ranks from 2.28.9 (ncclP2pSchedule: groupSize = nNodes > 1 ? GroupSize : maxLocalRanks)
    ("p2p", "reverse_rounds"): (((2, 18, 3), 0), ((2, 28, 0), 1)),
    ("p2p", "net_round_rule"): (((2, 18, 3), 0), ((2, 28, 7), 1), ((2, 28, 9), 2)),
    ("p2p", "net_chunk_ratio_arm_blackwell"): (((2, 18, 3), 1), ((2, 29, 0), 2)),
    # a Simple p2p to a peer of the same process went straight into the receiver's buffer
    # without registration until 2.22 (prims_simple.h loadRecvConn / loadSendConn: the
    # connection's NCCL_DIRECT_WRITE, set by p2p.cc for 'P2P/direct pointer', gives DirectWrite
    # to a P2p primitive, v2.18.3-1 .. v2.22.3-1); from 2.23 only with registered buffers
    # (v2.23.4-1 .. v2.30.7-1: the branch under 'Direct && regFlag')
    ("p2p", "direct_unregistered"): (((2, 18, 3), 1), ((2, 23, 0), 0)),
    # a message's parts: from 2.22 src/include/device.h ncclP2pPartBounds, alignUp(divUp(bytes,
    # nParts), 4 KiB) each, the last the rest (part_align); before, calcP2pChunkSize's parts
    # (0: aligned to minPartSize, src/enqueue.cc v2.18.3-1 .. v2.21.5-1)
    ("p2p", "part_align"): (((2, 18, 3), 0), ((2, 22, 0), 4096)),
    # the ring graph search's constants (src/graph/search.cc speed arrays, src/graph/topo.h
    # SM90_NVLINK_BW / SM100_NVLINK_BW, connect.cc ncclTopoPostset's second doubling)
    ("search", ("nvlink_bw", "hopper")): (((2, 18, 3), 20.0e9), ((2, 20, 0), 20.6e9)),
    ("search", ("nvlink_bw", "blackwell")): (((2, 25, 0), 40.0e9), ((2, 27, 5), 40.1e9)),
    ("search", ("intra_speeds", "hopper")): (
        ((2, 18, 3), _row((60.0, 40.0, 30.0, 24.0, 20.0, 15.0, 12.0, 6.0, 3.0))),
        ((2, 19, 0), _row((60.0, 50.0, 40.0, 30.0, 24.0, 20.0, 15.0, 12.0, 6.0, 3.0))),
        ((2, 21, 0), _row((60.0, 50.0, 40.0, 30.0, 24.0, 20.0, 15.0, 12.0, 11.0, 6.0, 3.0)))),
    ("search", ("inter_speeds", "hopper")): (
        ((2, 18, 3), _row((48.0, 45.0, 42.0, 40.0, 30.0, 24.0, 20.0, 17.5, 15.0, 12.0, 6.0, 3.0,
                           2.4, 1.2, 0.24, 0.12))),
        ((2, 19, 3), _row((48.0, 45.0, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5, 15.0, 12.0, 6.0,
                           3.0, 2.4, 1.2, 0.24, 0.12)))),
    ("search", ("intra_speeds", "blackwell")): (
        ((2, 25, 0), _row((90.0, 80.0, 70.0, 60.0, 50.0, 40.0, 30.0, 24.0, 20.0, 19.0))),
        ((2, 27, 0), _row((90.0, 80.0, 70.0, 60.0, 50.0, 40.0, 30.0, 24.0, 20.0, 19.0, 18.0))),
        ((2, 29, 0), _row((90.0, 80.0, 70.0, 60.0, 50.0, 45.0, 40.0, 30.0, 24.0, 20.0, 19.0,
                           18.0)))),
    ("search", ("inter_speeds", "blackwell")): (
        ((2, 25, 0), _row((48.0, 45.0, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5, 15.0, 12.0, 6.0,
                           3.0, 2.4, 1.2, 0.24, 0.12))),
        ((2, 27, 0), _row((47.9, 45.0, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5, 15.0, 12.0, 6.0,
                           3.0, 2.4, 1.2, 0.24, 0.12))),
        ((2, 27, 5), _row((48.0, 45.1, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5, 15.0, 12.0, 6.0,
                           3.0, 2.4, 1.2, 0.24, 0.12))),
        ((2, 27, 6), _row((96.0, 48.0, 45.1, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5, 15.0, 12.0,
                           6.0, 3.0, 2.4, 1.2, 0.24, 0.12))),
        ((2, 29, 7), _row((96.0, 80.0, 48.0, 45.1, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5, 15.0,
                           12.0, 6.0, 3.0, 2.4, 1.2, 0.24, 0.12))),
        ((2, 30, 0), _row((96.0, 86.0, 80.0, 48.0, 45.1, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5,
                           15.0, 12.0, 6.0, 3.0, 2.4, 1.2, 0.24, 0.12)))),
    # x 2 again across nodes: == 90 and 2 x nChannels <= MAXCHANNELS (32) in 2.18-2.19,
    # == 90 and nChannels < 16 in 2.20-2.24, >= 90 and < 16 from 2.25 (connect.cc)
    # no pass-2 raise of the ring's speed in 2.18.x and 2.19.1 (search.cc v2.18.5-1 l.962-969:
    # 'increase bwIntra for trees' skips the ring; DupChannels inline at the end, l.987-996;
    # v2.19.1-1 the same, l.961-1005); 'increase bw for Ring' after DupChannels from v2.19.3-1
    ("search", "ring_raise"): (((2, 18, 3), 0), ((2, 19, 3), 1)),
    ("search", "postset_more_rule"): (((2, 18, 3), 1), ((2, 25, 0), 2)),
    ("search", "postset_more_below"): (((2, 18, 3), 17), ((2, 20, 0), 16)),
    # MAXCHANNELS 32 until 2.24, 64 from 2.25 (device.h)
    ("max_channels", None): (((2, 18, 3), 32), ((2, 25, 0), 64)),
    # how one operation's bytes are split over its channels (src/enqueue.cc; see the
    # "split" source): even in the kernel until 2.19, addCBDCollToPlan's aligned shares in
    # 2.20-2.21, scheduleCollTasksToPlan's cells from 2.22 (16 B cells and MinTrafficPerChannel
    # 512 in 2.22; 16 KiB 2.23-2.28, 32 KiB from 2.29; LL traffic x 4 from 2.26); the cell
    # rule's first entries are 2.22's, unread by rules 0 and 1
    ("split", "rule"): (((2, 18, 3), 0), ((2, 20, 0), 1), ((2, 22, 0), 2)),
    ("split", "min_traffic"): (((2, 18, 3), 512), ((2, 23, 0), 16384), ((2, 29, 0), 32768)),
    ("split", "cell"): (((2, 18, 3), 16), ((2, 23, 0), 0)),
    ("split", "ll_traffic"): (((2, 18, 3), 1), ((2, 26, 0), 4)),
    ("split", "task_floor"): (((2, 18, 3), 0), ((2, 23, 0), 1)),
    ("split", "lo_ceil"): (((2, 18, 3), 0), ((2, 23, 0), 1)),
    ("split", "round16"): (((2, 18, 3), 0), ((2, 29, 0), 1)),
    # Blackwell rows (from 2.25)
    **{("ring_ll128_bw", ("blackwell", i)): (((2, 25, 0), 73.4 * GBS),
                                              ((2, 28, 7), (73.4, 34.6, 73.4)[i] * GBS),
                                              ((2, 29, 2), (34.5, 34.6, 34.5)[i] * GBS),
                                              ((2, 29, 7), 40.0 * GBS)) for i in range(3)},
    **{("tree_ll128_bw", ("blackwell", i)): (((2, 25, 0), (73.4, 73.4, 58.0)[i] * GBS),
                                              ((2, 28, 0), (55.6, 31.67, 20.0)[i] * GBS))
       for i in range(3)},
    **{("tree_bw", ("blackwell", i)): (((2, 25, 0), (77.4, 82.8, 72.0)[i] * GBS),
                                        ((2, 28, 0), (70.0, 42.8, 24.0)[i] * GBS))
       for i in range(3)},
    # NVLS-tree per-channel caps appear in 2.28 (before: none)
    **{("nvls_tree_bw", (arch, i)): (((2, 18, 3), math.inf),) + rows
       for arch, rows3 in (("hopper", ((((2, 28, 0), (0.0, 57.7, 45.5)),))),
                           ("blackwell", (((2, 28, 0), (0.0, 96.0, 43.1)),
                                          ((2, 28, 9), (0.0, 96.0, 43.8)),
                                          ((2, 30, 3), (0.0, 96.0, 80.0)))))
       for i in range(3)
       for rows in [tuple((v, r[i] * GBS) for v, r in rows3)]},
}

#: Entries of ``factors`` that change between releases with no sourced revision of the
#: prediction among their changes (:data:`PREDICTION_REVISIONS`): what a release runs (NVLS's
#: largest arity, ``src/include/device.h NCCL_MAX_NVLS_ARITY``; the fewest GPUs of a node
#: NVLS runs on, ``src/transport/nvls.cc``) or a change that came with changed device code;
#: an older release's run is timed with its own value of each.
EXECUTION_FACTORS = tuple(sorted(
    k for (f, k) in _NCCL_HISTORY if f == "factors"
    and not any(r[:2] == (f, k) for r in PREDICTION_REVISIONS)))


#: Every NCCL release whose tuner the ``"nccl@<version>"`` profiles reproduce, with the date of
#: its release tag: version -> ISO date. Source: the NVIDIA/nccl git repository, tag
#: ``v<version>-1``, the commit date of the tagged commit (``git log -1 --format=%cs
#: v<version>-1``; the tags are lightweight, so the commit date is the tag's date). Used by
#: :func:`nccl_release_on` to say which release a measurement that states none was taken with.
NCCL_RELEASE_DATES = {
    "2.18.3": "2023-06-14", "2.18.5": "2023-08-23", "2.19.1": "2023-09-26",
    "2.19.3": "2023-09-26", "2.18.6": "2023-10-10", "2.19.4": "2023-11-13",
    "2.20.3": "2024-02-13", "2.20.5": "2024-02-26", "2.21.5": "2024-04-02",
    "2.22.3": "2024-06-19", "2.23.4": "2024-09-16", "2.24.3": "2025-01-07",
    "2.25.1": "2025-01-27", "2.26.2": "2025-03-12", "2.26.3": "2025-04-22",
    "2.26.5": "2025-04-22", "2.26.6": "2025-05-20", "2.27.3": "2025-05-29",
    "2.27.5": "2025-06-18", "2.27.6": "2025-07-11", "2.27.7": "2025-07-24",
    "2.28.3": "2025-09-02", "2.28.7": "2025-10-17", "2.28.9": "2025-11-10",
    "2.29.2": "2025-12-24", "2.29.3": "2026-02-03", "2.29.7": "2026-02-27",
    "2.30.3": "2026-04-14", "2.30.4": "2026-04-22", "2.30.7": "2026-06-04",
}


def _parse_date(text):
    """``text``, an ISO date such as ``"2024-05-10"`` (or a :class:`datetime.date`), as a date:
    a SpecError for text that is no ISO date, a TypeError for another kind (the number
    20240919 was read as its digits)."""
    if isinstance(text, datetime.datetime):
        return text.date()
    if isinstance(text, datetime.date):
        return text
    if not isinstance(text, str):
        raise kind_error(text, "date", "an ISO date as text, such as '2024-05-10', or a "
                         "datetime.date")
    try:
        return datetime.date.fromisoformat(text.strip())
    except ValueError:
        raise SpecError(f"date {show_value(text)} is not an ISO date such as 2024-05-10") from None


def nccl_release_dates():
    """:data:`NCCL_RELEASE_DATES` as :class:`~fabric.Parameter` s (value: the ISO date of the
    release tag, unit ``"date"``), oldest release first, each with its source.

    >>> p = nccl_release_dates()[0]
    >>> (p.name, p.value, p.unit)
    ('nccl.release_date.2.18.3', '2023-06-14', 'date')
    """
    return tuple(Parameter(f"nccl.release_date.{v}", d, "date",
                           f"NVIDIA/nccl git tag v{v}-1: commit date of the tagged commit "
                           f"(git log -1 --format=%cs v{v}-1)")
                 for v, d in sorted(NCCL_RELEASE_DATES.items(), key=lambda i: _parse_version(i[0])))


def nccl_release_on(date):
    """The NCCL release a measurement dated ``date`` stands for when its source states none:
    the newest release (highest version) tagged on or before that date
    (:data:`NCCL_RELEASE_DATES`).

    One rule for every such measurement. A date before the oldest reproduced release's tag
    (2.18.3, 2023-06-14) is an error rather than a silent fallback: that release's tuner is
    not reproduced here. "Newest" is the highest version, not the latest tag: on 2023-10-10
    NCCL tagged 2.18.6 after 2.19.3, and 2.19.3 stands for that day.

    Parameters
    ----------
    date : str or datetime.date
        An ISO date (``"2024-09-19"``).

    Returns
    -------
    str
        An NCCL release tag (``"2.23.4"``).

    Raises
    ------
    SpecError
        For a date that does not read or precedes 2.18.3's tag.

    Examples
    --------
    >>> nccl_release_on("2024-09-19")
    '2.23.4'
    >>> nccl_release_on("2024-04-02")          # a tag's own day counts
    '2.21.5'
    >>> nccl_release_on("2023-10-10")
    '2.19.3'
    >>> nccl_release_on("2023-01-01")
    Traceback (most recent call last):
    ...
    fabric.SpecError: no reproduced NCCL release was tagged on or before 2023-01-01 (the oldest, 2.18.3, is of 2023-06-14)
    """
    return release_on(date, NCCL_RELEASE_DATES, _parse_version,
                      "reproduced NCCL release was tagged")


def release_on(date, dates, version, what):
    """The newest release (highest ``version(name)``) of ``dates`` (release name -> ISO date)
    dated on or before ``date``: the one rule by which a measurement that states no release
    stands for one (:func:`nccl_release_on`, ``analysis.trtllm_release_on``). SpecError for a
    text that is not an ISO date, and for a date before the oldest release (``what`` names
    the releases in that message: "no <what> on or before ...").

    >>> release_on("2024-01-02", {"1.0": "2024-01-01", "0.9": "2024-01-02"}, float, "release")
    '1.0'
    """
    day = _parse_date(date)
    out = [v for v, d in dates.items() if _parse_date(d) <= day]
    if not out:
        oldest = min(dates, key=version)
        raise SpecError(f"no {what} on or before {day.isoformat()} (the oldest, {oldest}, is "
                        f"of {dates[oldest]})")
    return max(out, key=version)


_HISTORY_SOURCE = ("NVIDIA/nccl src/graph/tuning.cc and src/include/device.h read at the release "
                   "tags v2.18.3-1 ... v2.30.7-1 (git show <tag>:src/graph/tuning.cc)")


def _parse_version(text):
    if not isinstance(text, str):     # a wrong kind (STYLE): 2.28 is not read as "2.28"
        raise kind_error(text, "NCCL version", "a string of the form 2.21.5")
    return _parse_version_text(text)


@functools.cache
def _parse_version_text(text):
    # cached: building one release's runtime compares versions ~26,000 times (revision_holds
    # over every tag); a text that does not parse raises each time (exceptions are not cached)
    # as NCCL writes a release: ASCII digits without leading zeros ('02.30.7', '2.+30.7',
    # '2.3_0.7' and other digits int() reads would name 2.30.7 by another string)
    if not _VERSION_RE.fullmatch(text.strip()):
        raise SpecError(f"NCCL version {show_value(text)} is not of the form 2.21.5")
    nums = tuple(int(x) for x in text.strip().split("."))
    return nums + (0,) * (3 - len(nums))


_VERSION_RE = re.compile(r"(?:0|[1-9][0-9]*)(?:\.(?:0|[1-9][0-9]*)){1,2}", re.ASCII)


#: Constants that are parts of one formula of NCCL's tuner and so are revised together:
#: the NVLS-tree latency (``src/graph/tuning.cc``: base and per-step latencies, and the 2.18
#: form's 2 (nodes - 1) network steps) and the NVLS-tree bandwidth (the 2.18 form's algBw =
#: busBw x 0.7 nodes / (2 (nodes - 1)); the later form's network factors, ``nRanks / nsteps``
#: ratio and per-channel caps). A release's run is never timed by a mix of two forms no
#: release had: every part's walk stops at the first change of ANY part of its formula that
#: is not a sourced revision (both forms changed shape in 2.19).
_FORMULAS = (
    frozenset({("base_latency", ("nvls-tree", "Simple")),
               ("hw_latency", ("nvlink", "nvls-tree", "Simple")),
               ("hw_latency", ("pci", "nvls-tree", "Simple")),
               ("hw_latency", ("net", "nvls-tree", "Simple")),
               ("factors", "nvls_tree_linear_net_steps")}),
    frozenset({*(("factors", k) for k in ("nvls_tree_ratio_nodes", "nvls_tree_net_two_nodes",
                                          "nvls_tree_net_many_nodes", "nvls_tree_alg_ratio")),
               *(("nvls_tree_bw", (a, i)) for a in ("hopper", "blackwell") for i in range(3))}),
)


def _tag(first):
    return ".".join(map(str, first))


def _history_values(field, key, steps, v):
    """``(own, timed)``: the value release ``v`` has for one history entry, and the value its
    run is timed with: from its own, every later change that :data:`PREDICTION_REVISIONS`
    sources as a revision of the prediction AND whose kernel files are identical from ``v``'s
    tag to the change (:func:`revision_holds`) is taken, up to the first that is not, its
    own or, for a constant that is part of a formula (:data:`_FORMULAS`), any other part's
    (``(None, None)`` when ``v`` predates the entry)."""
    own = None
    for i, (first, val) in enumerate(steps):
        if first <= v:
            own, at = val, i
    if own is None:
        return None, None
    members = next((g for g in _FORMULAS if (field, key) in g), {(field, key)})
    stops = [first for f, k in members for first, _val in _NCCL_HISTORY.get((f, k), ())
             if first > v and not _taken(v, (f, k, _tag(first)))]
    stop = min(stops, default=None)
    timed = own
    for first, val in steps[at + 1:]:
        if (stop is not None and first >= stop) or not _taken(v, (field, key, _tag(first))):
            break
        timed = val
    return own, timed


def _taken(v, revision):
    """Whether the change ``revision`` = (field, key, first release) times release ``v``'s run:
    a sourced revision (:data:`PREDICTION_REVISIONS`) whose kernel files are identical from
    ``v``'s tag to the change (:func:`revision_holds`)."""
    return revision in PREDICTION_REVISIONS and revision_holds(_tag(v), revision)


@functools.cache
def _nccl_version(text):
    """The ``"nccl"`` profile with the constants NCCL ``text`` had (see :data:`_NCCL_HISTORY`)."""
    v = _parse_version(text)
    fmt = ".".join(map(str, v))
    if v > NCCL_NEWEST or v < NCCL_OLDEST:
        raise SpecError(f"NCCL {fmt} is outside the releases whose tuner is reproduced "
                        f"({'.'.join(map(str, NCCL_OLDEST))} to {'.'.join(map(str, NCCL_NEWEST))})")
    # one identity: the tag the version stands for gives its constants and its timing
    fmt = release_tag(fmt)
    v = _parse_version(fmt)
    if v == NCCL_NEWEST:
        return _NCCL
    fields = ("base_latency", "hw_latency", "ll_max_bw", "ring_ll128_bw", "tree_bw",
              "tree_ll128_bw", "nvls_tree_bw", "factors", "nvls", "p2p", "search", "split")
    tables = {f: dict(getattr(_NCCL, f)) for f in fields}
    timed = {f: dict(getattr(_NCCL, f)) for f in fields}
    max_channels = _NCCL.max_channels
    changed, revised = set(), set()
    for (field, key), steps in _NCCL_HISTORY.items():
        value, timed_value = _history_values(field, key, steps, v)
        if value is None:
            continue
        if field == "max_channels":
            max_channels = value
        else:
            tables[field][key] = value
            timed[field][key] = timed_value
            if timed_value != value:
                revised.add(field)
        changed.add(field)
    if v < (2, 25, 0):
        # no Blackwell row: compCapIndex is Hopper's for every GPU of compute capability >= 9.0
        for field in ("ll_max_bw", "ring_ll128_bw", "tree_bw", "tree_ll128_bw", "nvls_tree_bw"):
            for i in range(3):
                tables[field][("blackwell", i)] = tables[field][("hopper", i)]
                timed[field][("blackwell", i)] = timed[field][("hopper", i)]
            changed.add(field)
        # the search too: sm90's speed arrays and SM90_NVLINK_BW (search.cc, topo.h)
        for k in ("nvlink_bw", "intra_speeds", "inter_speeds"):
            tables["search"][(k, "blackwell")] = tables["search"][(k, "hopper")]
            timed["search"][(k, "blackwell")] = timed["search"][(k, "hopper")]
        changed.add("search")
    note = (f"; NCCL {fmt}: the values this release had ({_HISTORY_SOURCE}; before 2.25 the "
            "Blackwell row is Hopper's)")
    sources = tuple((f, s + note if f in changed else s) for f, s in _NCCL.sources)
    release = dataclasses.replace(_NCCL, name=f"nccl@{fmt}", version=fmt,
                                  max_channels=max_channels, sources=sources, **tables)
    what = (f"sourced revisions of {', '.join(sorted(revised))}" if revised
            else "its own tables")
    timed_note = (f"; timing NCCL {fmt}'s run: where a later release revised the prediction "
                  f"and the kernel's device code is identical from {fmt}'s tag to the revision, "
                  "the revised value (fabric.PREDICTION_REVISIONS, fabric.revision_holds)")
    timing = dataclasses.replace(
        release, name=f"nccl@{fmt} timed with {what}", **timed,
        sources=tuple((f, s + timed_note if f in revised else s) for f, s in sources))
    return dataclasses.replace(release, timing=timing)


#: Chips NCCL runs with its Blackwell rows (compute capability 10.x). Every other chip,
#: NVIDIA or not, takes the Hopper rows (an assumption, applied everywhere).
def runtime_arch(fabric):
    """The architecture row a runtime's tables use for ``fabric``'s GPUs: ``"hopper"`` or
    ``"blackwell"`` (NCCL indexes its tuner tables and the kernel floor by GPU generation).

    The fabric's chip decides through its ``generation`` (:class:`fabric.ChipSpec`: B200,
    B300, GB200, GB300 are Blackwell; a chip of neither generation, such as an assumed or
    non-NVIDIA chip, takes Hopper's tables: an assumption); a fabric without a chip is
    Blackwell when its scale-up links are NVLink5, else Hopper.

    Parameters
    ----------
    fabric : Fabric
        Or any object with a fabric's ``chip`` (a :class:`ChipSpec`); without a chip, a
        Fabric (its links decide), else a TypeError (:func:`fabric._fabric_arg.fabric_arg`).

    Returns
    -------
    str
        ``"hopper"`` or ``"blackwell"``.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> from fabric import chip_spec
    >>> runtime_arch(SimpleNamespace(chip=chip_spec("gb200")))
    'blackwell'
    >>> runtime_arch(SimpleNamespace(chip=chip_spec("gb300")))
    'blackwell'
    >>> runtime("symmetric-memory").kernel_floor[runtime_arch(SimpleNamespace(chip=chip_spec("h100")))]
    2.3e-06
    """
    chip = getattr(fabric, "chip", None)
    if chip is not None:
        return getattr(chip, "generation", None) or "hopper"
    # no chip to read: a fabric is due ('torus:4x4' was "'str' object has no attribute ...")
    techs = {d.get("tech") for _u, _v, d in fabric_arg(fabric).graph.edges(data=True)}
    return "blackwell" if "nvlink5" in techs else "hopper"


def runtime(name, version=None, date=None):
    """The :class:`Runtime` called ``name`` (a Runtime passes through).

    ``"nccl"`` is NCCL's tuner as of the newest release modelled (2.30.7);
    ``"nccl@2.21.5"`` (or ``runtime("nccl", version="2.21.5")``) is the same model with
    the constants of that release, for measurements taken with it (2.18.3 and later). A
    version that is no modelled tag is the tag it stands for (:func:`release_tag`:
    ``"nccl@2.28"`` is ``"nccl@2.28.3"``, constants, timing and kernels alike).
    ``runtime("nccl", date="2024-09-19")`` is the release :func:`nccl_release_on` gives for
    that date (for a measurement whose source states no release). A name or a version that
    is not text (``5``, ``True``, ``version=2.28``) is a TypeError; an unknown name or
    release a SpecError.

    Parameters
    ----------
    name : str or Runtime
        ``"ideal"``, ``"nccl"`` (``"nccl@<version>"`` too) or ``"symmetric-memory"``
        (:data:`RUNTIMES`).
    version : str, optional
        An NCCL version, for ``"nccl"`` only.
    date : str or datetime.date, optional
        A measurement's date: the NCCL release tagged by then, for ``"nccl"`` only.

    Returns
    -------
    Runtime
        Its constants, each a sourced :class:`Parameter` (seconds, bytes/s).

    Examples
    --------
    >>> runtime("nccl@2.20.5").hw_latency[("nvlink", "nvls", "Simple")]
    2.3e-05
    >>> runtime("nccl", version="2.30.7") is runtime("nccl")
    True
    >>> runtime("nccl", date="2024-09-19").name
    'nccl@2.23.4'
    >>> runtime(runtime("nccl"), version="2.20.5")
    Traceback (most recent call last):
    ...
    fabric.SpecError: a Runtime ('nccl') names its own release: pass version= or date= with a name, e.g. runtime('nccl', version='2.20.5')
    """
    if isinstance(name, Runtime):
        # version= / date= with a Runtime were dropped (the Runtime came back as it was)
        if version is not None or date is not None:
            raise SpecError(f"a Runtime ({show_value(name.name)}) names its own release: pass "
                            "version= or date= with a name, e.g. runtime('nccl', "
                            "version='2.20.5')")
        return name
    # STYLE's rule: a name of the wrong kind is a TypeError (5 and True were "unknown
    # runtime" SpecErrors); a version's kind is checked where it is read (_parse_version)
    if not isinstance(name, str):
        raise kind_error(name, "runtime", "a name such as 'nccl', 'nccl@2.21.5' or 'ideal', or "
                         "a fabric.Runtime")
    key = name.strip().lower()
    if date is not None:
        if version is not None or "@" in name:
            raise SpecError("pass a release or a date, not both")
        if key != "nccl":
            # (the date was turned into a version first: the message named a version)
            raise SpecError(f"only the nccl runtime takes a date, not {show_value(name)}")
        version = nccl_release_on(date)
    if "@" in key:
        key, at = key.split("@", 1)
        if version is not None:
            raise SpecError(f"runtime {show_value(name)} names its version; do not pass "
                            "version= too")
        version = at
    if version is not None:
        if key != "nccl":
            raise SpecError(f"only the nccl runtime takes a version, not {show_value(name)}")
        return _nccl_version(version)
    if key not in RUNTIMES:     # the name as given (key is its part before '@')
        raise SpecError(unknown_fault(name, "runtime", RUNTIMES,
                                      " (nccl also as nccl@<version>)"))
    return RUNTIMES[key]
