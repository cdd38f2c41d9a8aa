"""MoE dispatch and combine through a named exchange kernel, on a fabric.

:func:`moe_exchange` costs one expert-parallel dispatch (tokens to the ranks of
their experts) and the matching combine (expert outputs back) the way a
published kernel does it (:mod:`fabric._exchange`: ``deepep-normal``,
``deepep-low-latency``, ``one-sided``, ``pplx``, ``all-to-allv``).

Per phase (terms add)::

    time = syncs x (base + hop latency)              fixed: the kernel's handshakes
         + (kernels - 1) x kernel gap                 fixed: boundaries between its kernels
         + serial chain                               fixed: one block's dependent memory ops
         + release fence                              fixed: one peer round trip, if any
         + max(scale-up time, network time)           pipelined stages (else their sum)
         + local copy time                            receive part through HBM, if any

and for a combine that pulls (``one-sided``) the transfer is at least its dependent
round trips, and its bandwidth time starts one round trip late (the first request out
and its data back): ``max(transfer + trip, rounds x trip)``, ``trip = round trip + peer
access``.

* **Routing** gives, per token, the probability that a given rank or a given
  node (a load/store domain: the GPUs of a server, or a whole NVL72 rack) holds
  at least one of its experts. Experts sit on ranks in blocks of ``E / ep``
  (expert ``e`` on rank ``e // (E/ep)``, as DeepEP and TensorRT-LLM place
  them); when ``ep`` does not divide ``E`` every rank is taken to hold the
  mean ``E / ep`` (the hypergeometric product extended to a fractional set). ``"uniform"``: a token's ``k`` experts are ``k`` distinct experts
  drawn uniformly (exact hypergeometric: a set of ``s`` experts is missed with
  probability ``C(E-s, k) / C(E, k)``). ``"node-limited:M"``: DeepSeek-V3's
  node-limited routing (arXiv 2412.19437 s.2.1.2: each token goes to at most
  ``M`` nodes, ``M = 4`` in V3): the token picks ``M`` of the nodes uniformly,
  then ``k`` experts uniformly among theirs (DeepEP's benchmark draws them so:
  group scores are the max over a node's experts, top-``M`` groups, then
  top-``k``). ``"balanced"``: every token goes to ``min(k, ep)`` distinct
  consecutive ranks, rotated by token and source (TensorRT-LLM's
  ``bench_moe_comm.py --perfect_router``). ``"grouped"``: NVIDIA's aiconfigurator
  collector's balanced generator (``collect_trtllm_alltoall.py``
  ``generate_balanced_expert_ids``): at ``ep >= k`` token ``t`` of EVERY rank goes to the
  ``k`` consecutive ranks of group ``t mod (ep // k)``, slot ``i`` to the group's ``i``-th
  rank (ranks past the last whole group receive nothing); at ``ep < k`` slot ``i`` goes to
  rank ``i mod ep``. Not rotated by source, so the ranks of one group receive every token of
  a batch that ``ep // k`` does not divide: its traffic and receivers are counted exactly
  (:func:`_grouped_pairs`); priced for the kernels that send one copy per (token, rank)
  (``one-sided``, ``all-to-allv``).
* **Traffic** follows from the kernel's de-duplication: one copy per (token,
  node) over the network then an NVLink fan-out (``deepep-normal``), one per
  (token, rank) (``one-sided``, ``all-to-allv``), or one per (token,
  expert) (``deepep-low-latency``, ``pplx``). Expected bytes, the same for every source
  rank under these symmetric routings.
* **Ranks that hold tokens** (``tokens_per_rank`` one count for every EP rank, or each EP
  rank's own count, 0 for a rank that holds none: a decode batch spread unevenly over the EP
  group; ``sources`` names the ranks that hold ``tokens_per_rank`` each, the others none:
  :func:`fabric._exchange.held_counts`, the one conversion). One rule, ``t_r`` the tokens EP
  rank ``r`` holds: what a rank **sends** follows its own ``t_r`` (its rows of the traffic
  matrices, DeepEP normal's forwarders the tokens of their rail's ranks, the collective's
  all-to-allv rows; the combine sends back along the transposed matrices, routed and timed
  as such; every rank still receives: its experts); what a rank **receives** (the dispatch's
  receive walk and copy, the combine's copies sent back, their posts and fences, the staging
  pass, and the dispatch's busiest token, the busiest of every token sent) follows the
  tokens sent in all, ``sum t_r``, every rank alike in expectation (each sender spreads its
  copies evenly); counts of a rank's **own** tokens (its send loop and waves, the combine's
  receive sum, its pulls and their busiest token, its own copies through HBM) and the
  kernels' grids (pplx launches by ``maxNumTokens``) are the busiest rank's, ``max t_r``:
  the phase ends with its slowest rank. Where ranks differ in what they receive back (the
  share of a rank's combine copies that go to load/store peers: its peers' tokens over every
  token sent) the busiest rank counts.
* **Scale-up time**: the scale-up traffic matrix routed on the fabric by its
  router (ECMP), the most loaded directed link's bytes over its effective
  bandwidth: NCCL's per-link bulk figure where one is published
  (``analysis.PROTOCOL_LINK_BANDWIDTH``: 20.6 GB/s per NVLink4, 40.1 per
  NVLink5; NVIDIA/nccl ``src/graph/topo.h``), else the load/store transport's
  payload fraction.
* **Network time**: bytes through each rank's NIC, over the narrowest link of
  its GPU-NIC-network path times the NIC's achieved fraction of line rate
  (:data:`fabric.EXCHANGE_NIC_EFFICIENCY`, 0.94: NVIDIA's 46-48 GB/s per 400 Gb/s
  NDR NIC; it covers headers and every other per-packet cost). The network behind
  the NICs is taken as non-blocking (rail-optimized clusters are built at full
  bisection).
* **Atomics after writes on a queue pair** (``adaptive_routing``, default the named
  assumption ``fabric._exchange.EXCHANGE_ADAPTIVE_ROUTING``: the fabric runs adaptive
  routing): on a multi-path network an RDMA atomic that follows writes on one RC queue pair
  waits for them, one network round trip (two :data:`fabric.EXCHANGE_SYNC` network steps;
  deepseek-ai/DeepEP PR #437). A phase whose signals are such atomics
  (:attr:`fabric.ExchangeKernel.qp_signals`: ``pplx``'s put-with-signal, each message;
  ``deepep-low-latency``'s count and flag, one per queue pair) takes at least its busiest
  remote queue pair's atomics times the round trip, plus, where each message's write is
  followed by its atomic, that queue pair's own writes at its NIC's rate (the writes behind
  a held atomic wait for it: the queue pair issues in order), and the network's time plus
  one round trip (``ExchangePhase.queue_pair``, a floor of the transfer).
* **Background NIC traffic** (``nic_background``, bytes/s into each EP rank's NIC, e.g. a
  disaggregated decode instance's KV-cache inflow): it shares the port with the network
  stage the way concurrent flows share a link in the collectives model (their bytes add),
  spread evenly over time: a phase of ``t`` seconds receives ``recv + background x t``
  bytes, so its receive side takes ``recv / (B - background)``. ``0`` leaves every figure
  as it was.
* **Local copy**: a receive part that moves the received copies through HBM
  (:attr:`ExchangeKernel.local_copy`), at the chip's HBM bandwidth, and, where one warp
  loads a token's copies whole into a few shared-memory stages
  (:attr:`ExchangeKernel.reduce_stages`: DeepEP's and NCCL EP's TMA receive), never faster
  than one such token (:meth:`ExchangeKernel.receive_floor`); and a
  combine that first stages the MoE output into its symmetric buffer
  (:attr:`ExchangeKernel.staging_copy`, ``one-sided``: TensorRT-LLM's prepare-combine
  kernel reads and writes every received copy, ``2 x copies_rank x combine_bytes``
  through HBM, before the combine's barrier; ``pplx``'s NVSHMEM kernels copy every
  received copy's expert output into their symmetric send buffer before they put it,
  and their dispatch stages the rank's own tokens the same way,
  :attr:`ExchangeKernel.send_staging`: ``2 x tokens x dispatch_bytes``). A **low-precision combine** (combine bytes
  below the MoE output's own, :attr:`ExchangeKernel.staging_source_bytes`: TensorRT-LLM's
  ``use_low_precision`` casts the BF16 output to FP8 in that pass, a plain saturating
  cast, no scales) reads the wider output and writes the narrow one:
  ``copies_rank x (2 x hidden + combine_bytes)``; its pulled rounds, links and block-rate
  bytes follow the combine bytes (FP8: 2 pulled rounds for a 7168-wide token, BF16: 4).
* **Fixed**: inside one load/store domain a phase's launch and first barrier
  cost what a one-sided kernel of the ``symmetric-memory`` runtime costs,
  ``runtime("symmetric-memory").kernel_floor`` for the fabric's GPU generation
  (:func:`fabric.runtime_arch`; NVIDIA/nccl issue 1940: about 2.3 us Hopper,
  3 us Blackwell, for a kernel that stores to its NVLink peers and synchronises
  once), each further barrier one store-and-spin handoff (:func:`_further_barrier`: the
  runtime's :func:`analysis._runtime_cost.flag_barrier`); a phase that
  crosses the network pays :data:`fabric.EXCHANGE_SYNC` (one NCCL LL step over
  the network hop) per synchronisation.
* **Kernel boundaries**: a phase of ``n`` kernels (e.g. TensorRT-LLM's dispatch:
  prepare, dispatch, sanitize) replayed in a CUDA graph pays ``n - 1`` gaps between
  them inside its own span (``kernel_gap``, default the decode model's
  :data:`analysis.GRAPH_KERNEL_OVERHEAD`, measured per kernel under CUDA graphs);
  the first kernel's start is what the handshake's base latency already covers.
  :func:`analysis.decode_step` charges every exchange kernel that gap itself and
  passes ``kernel_gap=0``.
* **Serial chain** (:attr:`ExchangeKernel.chain`, ``one-sided``): one thread block's
  dependent memory operations counted from the kernels' code (expert-id load, one slot
  atomic per destination rank one after the other, per payload each destination's pointer
  read from the kernel's parameters in turn, a load per copy round, the
  counters; a token sent as several payloads, e.g. values and scale factors, copies each in
  its own rounds; beyond 32 EP ranks, each further pass of the barriers' one-warp per-peer
  loops: :func:`fabric._exchange.lane_passes`), each at a published latency of the GPU generation
  (:data:`fabric.EXCHANGE_LATENCY`: HBM load, L2 hit, L2 atomic, L1 hit); charged once per
  phase, added to the transfer when it runs before the phase's first byte can move or after
  its last byte lands (fill and drain, :attr:`ExchangeKernel.chain`), a floor of the transfer
  (``max``) when it runs between the copies a block moves, which the other blocks' copies
  overlap (:attr:`ExchangeKernel.interleaved_chain`, ``ExchangePhase.interleaved``; lead's
  rule, session 17). ``pplx``'s dispatch: the count warp's walk over the experts while the
  other warps send (interleaved: its first index load, and per expert on a rank across the
  network one NVSHMEM IBGDA post's atomics, loads and fence on a queue pair the blocks share:
  :meth:`fabric.ExchangeKernel.count_walk`), then, added (drain), its receive part's walk
  over the received counts' slots, two dependent loads per slot, and its token copies
  (:meth:`fabric.ExchangeKernel.receive_walk`); its combine: each block's copies in turn, the
  first copy's loads added (fill), the later copies, each copy's post across the network,
  block 0's signal ahead of them (:meth:`fabric.ExchangeKernel.combine_posts`) and the
  per-copy fences interleaved, then, added (drain), its receive part's sum, an index load
  then the copy's load per (pass, copy) (:meth:`fabric.ExchangeKernel.receive_reduce`);
  lower bounds (a post's doorbell runs only when the post rings it: not counted).
  ``l2_flushed`` (default ``True``: the data left L2 between timed calls, flushed or
  pushed out by more traffic than L2 holds) makes the first touch of the token an HBM
  load; ``False`` (data left in L2 by the kernel before, as in a decode step, or by a
  benchmark that moves less than L2 holds between its calls) an L2 hit.
* **Release fence** (:attr:`ExchangeKernel.release_fence`): a phase that pushes stores
  into its peers and releases them before its flag (TensorRT-LLM's dispatch: stores into
  the peers' ``recv_counters`` then ``fence.release.sys``; DeepEP's NVLink paths: release
  stores after their copies) waits for the stores' acknowledgement, one peer round trip
  priced as one pulled round (below); only where the phase's handshake is the load/store
  kernel floor (one load/store domain, not ``transport="rdma"``). A combine whose blocks send
  their copies one after another, each put-with-signal to a load/store peer fencing before
  its signal (pplx), pays one per such copy of its slowest block (:func:`_copy_fences`),
  across the network too (there the copies to the sender's own node). A dispatch whose
  blocks send tokens in turn, each token's copies released before the block's next token
  (:attr:`fabric.ExchangeKernel.send_grid`, DeepEP low-latency), pays one per wave of its
  busiest block, each later wave with that token's chain before its first byte
  (:meth:`fabric.ExchangeKernel.send_waves`).
* **Block rate** (:attr:`ExchangeKernel.block_per_token`, ``one-sided``): one thread
  block carries a token's whole exchange, so a phase takes at least the token's remote
  copies at one block's rate (:data:`fabric.EXCHANGE_BLOCK_RATE`: NCCL's per-block figure
  for its symmetric load/store kernels, 44 GiB/s Hopper, 55 GiB/s Blackwell, measured on
  512-thread blocks and assumed per block for TensorRT-LLM's 256-thread ones); the dispatch's
  transfer is ``max(links, remote destinations x bytes / rate)``, and each pulled round
  adds its bytes at that rate to its round trip. Only inside one load/store domain.
* **Busiest token**: a phase of one-block-per-token kernels ends with its slowest block, so
  the counts that vary by token (the serial chain's slot atomics, one per distinct
  destination rank; the remote destinations at the block rate) are the busiest token's:
  :func:`busiest_token`, the expected largest count over the phase's tokens
  (:func:`expected_max` of :func:`reach_distribution`, exact by inclusion-exclusion for
  uniform and node-limited routing; the rotation's largest for the perfect router). The
  dispatch's closing barrier waits for every rank's blocks (the busiest of ``tokens x ep``
  tokens); the combine's blocks pull the rank's own tokens (the busiest of ``tokens``).
* **Pulled combine** (:attr:`ExchangeKernel.pull_threads`): one thread block per
  token loads ``pull_threads x pull_vector`` bytes per step from the peers and
  must have them back before its next step, so a combine takes at least
  ``rounds = ceil(bytes per token / (pull_threads x pull_vector))`` peer loads (the
  kernels narrow the vector to 8, 4, 2 or 1 bytes for a token whose bytes 16 does not
  divide: more rounds; the same rule counts the dispatch's and the staging pass's rounds); each
  is the fabric's own path latency there and back (the largest over the EP ranks'
  pairs, from the router: degraded fabrics lengthen it) plus the peer access, the
  rest of a measured peer load (:func:`fabric.peer_access_latency`: nvbandwidth's
  peer pointer chase, 0.83 us Hopper, 1.71 us Blackwell, less the 0.6 us path).
  Bandwidth and round trips are two floors: the larger sets the transfer; the bandwidth
  floor starts after one such round trip (no byte returns before the first request's).
  A kernel whose compiled round issues its top-k slots' loads in batches, each after the
  one before returns (:attr:`ExchangeKernel.late_pulls`: blog18's top-8 combine, slot 7 on
  Blackwell and slots 4-7 on Hopper; TensorRT-LLM 1.3's, by input width), pays one more
  round trip per later batch that holds a valid slot (a rank none of the token's earlier
  slots names) in every round of that token, and in round 1 one constant L1.5 fetch of that
  batch's pointer rows (``const_l15``, read there for the first time); the slowest block pays the expected largest
  count over the rank's tokens, from the per-token distribution (:func:`_late_trips`;
  one late slot: ``1 - (1 - q)^tokens``, ``q`` from :func:`_late_slot_valid`). A batch
  (the first included) whose valid slots all name the token's own rank waits for a local
  load, an L2 hit, not a peer round trip: the rank's own part of the workspace is its own
  memory (:func:`_round_wait`; under the perfect router slot 0 of token 0, so TensorRT-LLM
  1.3's FP8 round, which waits for slot 0 alone, pays one trip less at one token).

Sources: ``docs/sources.md s.7``. Checked against the check set's MoE rows
(``tests/fidelity_moe.py``; ``python benchmarks/bench_fidelity.py``).

Examples
--------
>>> import topologies
>>> f = topologies.build("nvl72")
>>> r = moe_exchange(f, "deepseek-v3", 2048, 8, kernel="one-sided",
...                  dispatch_bytes=2, combine_bytes=2, routing="balanced")
>>> round(r.dispatch * 1e6), r.bottleneck_dispatch
(301, 'scale-up')
>>> r.copies_rank                       # every token to all 8 ranks, own included
16384.0
"""

import dataclasses
import functools
import math
import types

import numpy as np
import scipy.sparse as sp

from fabric import (
    EXCHANGE_BLOCK_RATE,
    EXCHANGE_LATENCY,
    EXCHANGE_NIC_EFFICIENCY,
    EXCHANGE_SYNC,
    NodeError,
    Parameter,
    RoutingError,
    SpecError,
    chip_spec,
    exchange_kernel,
    link_tech,
    peer_access_latency,
    runtime_arch,
)
from fabric import runtime as get_runtime
from fabric import transport as get_transport
from fabric._exchange import (
    EXCHANGE_ADAPTIVE_ROUTING,
    held_counts,
    received_copies,
    serial_copies,
)
from fabric._fabric_arg import fabric_arg
from fabric._failures import require_joined
from fabric._memo import fabric_memo
from fabric._schema import MAX_BYTES
from fabric._transport import transport_arg
from fabric._units import (
    check_count,
    check_number,
    flag_of,
    is_finite,
    is_int,
    is_numeral,
    is_real,
    items_of,
    kind_error,
    kind_of,
    name_list,
    sequence_of,
    show_value,
    text_of,
)

from ._collectives import (
    MESSAGE_TECHNOLOGIES,
    PROTOCOL_LINK_BANDWIDTH,
    further_barrier,
    peer_round_trip,
)
from ._models import model_config
from ._schedules import NotApplicableError

__all__ = ["ExchangePhase", "MoEExchange", "busiest_token", "expected_max", "expert_reach",
           "moe_exchange", "parse_routing", "pull_rounds", "reach_distribution"]

#: Elements wider than this many bytes do not exist; smaller byte counts are per element.
_MAX_ELEMENT_BYTES = 16

# -- routing ------------------------------------------------------------------------------

def parse_routing(routing):
    """Normalise a routing name: ``("uniform", None)``, ``("node-limited", M)``, ``("balanced", None)``,
    ``("grouped", None)``.

    ``routing`` is a name (``"node-limited:4"``), a node count M (``3``: node-limited), a
    pair ``(name, M or None)`` or ``{"max_nodes": M}``. STYLE's rule: another kind (a float,
    None, a bool, a list), or an M of another kind, is a TypeError; a name, key or M that
    is not one (``"zipf"``, M = 0) a SpecError.

    Parameters
    ----------
    routing : str, int, tuple or dict
        As above.

    Returns
    -------
    tuple
        ``(name, M)``: the routing's name and, node-limited, its nodes per token (else None).

    Examples
    --------
    >>> parse_routing("node-limited:4")
    ('node-limited', 4)
    >>> parse_routing("node-limited")          # DeepSeek-V3: at most 4 nodes per token
    ('node-limited', 4)
    >>> parse_routing({"max_nodes": 2}), parse_routing(3)
    (('node-limited', 2), ('node-limited', 3))
    >>> parse_routing("zipf")
    Traceback (most recent call last):
    ...
    fabric.SpecError: routing must be 'uniform', 'balanced', 'grouped' or 'node-limited[:M]', got 'zipf'
    >>> parse_routing(2.5)
    Traceback (most recent call last):
    ...
    TypeError: routing must be a name such as 'node-limited:4', a node count, a pair (name, M) or {'max_nodes': M}, got 2.5 (a float)
    """
    rule = "an integer >= 1 (nodes a token reaches under node-limited routing)"
    if isinstance(routing, dict):
        if len(routing) != 1 or str(next(iter(routing))).replace("_", "-") not in (
                "nodes", "max-nodes", "node-limited"):
            raise SpecError(f"a routing given as a dict is {{'max_nodes': M}}, got "
                            f"{show_value(routing)}")
        (key, val), = routing.items()
        routing = ("node-limited", check_count(val, str(key), 1, rule))
    elif is_int(routing):
        routing = ("node-limited", check_count(routing, "routing", 1, rule))
    elif isinstance(routing, tuple):
        if len(routing) != 2:
            raise SpecError(f"a routing given as a pair is (name, M or None), got "
                            f"{show_value(routing)}")
        # a name of another kind was written into the text ((None, 2) read as 'None:2')
        text_of(routing[0], "routing[0] (the routing's name)")
        if routing[1] is not None:
            routing = (routing[0], check_count(routing[1], "routing[1]", 1, rule))
    if isinstance(routing, tuple):
        routing = routing[0] if routing[1] is None else f"{routing[0]}:{routing[1]}"
    if not isinstance(routing, str):
        raise kind_error(routing, "routing", "a name such as 'node-limited:4', a node count, a "
                         "pair (name, M) or {'max_nodes': M}")
    text = routing.strip().lower().replace("_", "-").replace("=", ":")
    name, _, arg = text.partition(":")
    if name in ("uniform", "balanced", "grouped") and not arg:
        return name, None
    if name == "node-limited":
        if not arg:
            return name, 4
        if is_numeral(arg) and int(arg) >= 1:
            return name, int(arg)
        raise SpecError(f"node-limited routing needs M >= 1 nodes per token, got "
                        f"{show_value(routing)}")
    raise SpecError(f"routing must be 'uniform', 'balanced', 'grouped' or 'node-limited[:M]', "
                    f"got {show_value(routing)}")


def _check_counts(experts, k, ep, nodes):
    """``(experts, k, ep, nodes)`` as ints where the reach formulas can take them (``1 <= k <=
    experts``, ``1 <= ep <= experts``, ``nodes >= 1`` dividing ``ep``: the ranks fill their
    nodes equally), else a SpecError naming the argument."""
    experts, k, ep, nodes = (check_count(v, label, 1, "an int >= 1") for label, v in (
        ("experts", experts), ("k", k), ("ep", ep), ("nodes", nodes)))
    if k > experts:
        raise SpecError(f"k={k} experts per token exceed the {experts} experts")
    if ep > experts:
        raise SpecError(f"ep={ep} ranks exceed the {experts} experts (every rank holds one)")
    if ep % nodes:
        raise SpecError(f"the ep={ep} ranks do not fill nodes={nodes} nodes equally")
    return experts, k, ep, nodes


def _grouped_slots(k, ep, t):
    """Destination rank of each top-k slot of token ``t`` under ``"grouped"`` routing (the
    collector's ``generate_balanced_expert_ids``, every source rank alike).

    >>> _grouped_slots(8, 16, 0), _grouped_slots(8, 16, 1)
    ((0, 1, 2, 3, 4, 5, 6, 7), (8, 9, 10, 11, 12, 13, 14, 15))
    >>> _grouped_slots(8, 2, 5)
    (0, 1, 0, 1, 0, 1, 0, 1)
    """
    if ep >= k:
        base = (t % (ep // k)) * k
        return tuple(base + i for i in range(k))
    return tuple(i % ep for i in range(k))


def _grouped_period(k, ep):
    """Tokens after which ``"grouped"`` routing repeats: ``ep // k`` (1 where ``ep < k``)."""
    return ep // k if ep >= k else 1


def _grouped_tokens(k, ep, count):
    """``[(token pattern t, tokens of a rank holding ``count`` that follow it)]``."""
    period = _grouped_period(k, ep)
    return [(t, count // period + (t < count % period)) for t in range(min(count, period))]


def _grouped_pairs(k, counts, diagonal=False):
    """Copies each EP rank sends each other one under ``"grouped"`` routing, one per (token,
    rank) (row the sender; the diagonal, the own rank's copies, zero unless ``diagonal``),
    from the tokens each holds (``counts``, an array over the EP ranks).

    >>> _grouped_pairs(8, np.array([1] * 16)).sum(axis=0).tolist()[6:10]   # group 0 receives
    [15.0, 15.0, 0.0, 0.0]
    """
    ep = len(counts)
    pair = np.zeros((ep, ep))
    for i, c in enumerate(counts):
        for t, n in _grouped_tokens(k, ep, int(c)):
            pair[i, list(set(_grouped_slots(k, ep, t)))] += n
    if not diagonal:
        np.fill_diagonal(pair, 0.0)
    return pair


def _grouped_busiest(k, ep, held):
    """``(all, remote)``: the distinct ranks, own included and not, of the busiest token any
    rank holding tokens (``held``, each EP rank's count) sends under ``"grouped"`` routing."""
    out = (0.0, 0.0)
    for r, c in enumerate(held):
        for t, _ in _grouped_tokens(k, ep, int(c)):
            dest = set(_grouped_slots(k, ep, t))
            out = max(out, (float(len(dest)), float(len(dest - {r}))))
    return out


def _miss(total, subset, k):
    """P(k distinct draws from ``total`` items all avoid a set of ``subset``): C(t-s,k)/C(t,k)."""
    if subset >= total:
        return 0.0
    if k > total - subset:
        return 0.0
    p = 1.0
    for i in range(k):
        p *= (total - subset - i) / (total - i)
    return p


def expert_reach(experts, k, ep, nodes, routing="uniform"):
    """Probability that one token reaches a given rank and a given node.

    Parameters
    ----------
    experts, k : int
        Routed experts and experts per token.
    ep : int
        Expert-parallel ranks (each holds ``experts / ep`` experts).
    nodes : int
        Nodes (load/store domains) the ranks fill equally.
    routing : str
        See :func:`parse_routing`.

    Returns
    -------
    p_rank, p_node : float

    Examples
    --------
    >>> p_rank, p_node = expert_reach(256, 8, 8, 1)
    >>> round(p_rank, 4), p_node                  # 1 - C(224,8)/C(256,8)
    (0.6618, 1.0)
    >>> expert_reach(256, 8, 16, 2, "balanced")   # 8 consecutive of 16 ranks: 1 + 7/8 nodes
    (0.5, 0.9375)
    >>> expert_reach(256, 8, 16, 2, "grouped")    # a group of 8 is one node of 8 ranks
    (0.5, 0.5)
    """
    name, m = parse_routing(routing)
    experts, k, ep, nodes = _check_counts(experts, k, ep, nodes)
    if name == "grouped":
        # the mean over the ranks and over the tokens of one period
        period, g = _grouped_period(k, ep), ep // nodes
        spans = [len({r // g for r in _grouped_slots(k, ep, t)}) for t in range(period)]
        return min(k, ep) / ep, sum(spans) / period / nodes
    if name == "balanced":
        reach = min(k, ep)
        g = ep // nodes
        return reach / ep, min(nodes, (reach - 1) / g + 1) / nodes
    per_rank, per_node = experts / ep, experts / nodes
    if name == "node-limited" and m < nodes:
        pool = m * per_node
        frac = m / nodes
        return (frac * (1 - _miss(pool, per_rank, k)), frac * (1 - _miss(pool, per_node, k)))
    return 1 - _miss(experts, per_rank, k), 1 - _miss(experts, per_node, k)


def _gbinom(x, k):
    """``C(x, k)`` for a real ``x`` and an integer ``k >= 0`` (the falling factorial over
    ``k!``): exact for integer ``x`` (0 when ``x < k``), the same polynomial in between."""
    out = 1.0
    for i in range(k):
        out *= (x - i) / (i + 1)
    return out


def _uniform_counts(experts, k, ranks):
    """Probabilities that ``k`` distinct experts drawn uniformly from ``experts`` spread
    equally over ``ranks`` ranks reach exactly ``j`` ranks (``D``), and exactly ``j`` ranks
    other than a given one (``R``), ``j = 0 .. min(k, ranks)``, by inclusion-exclusion over
    the ranks the draw may use: ``P(D = j) = C(n, j) sum_i (-1)^(j-i) C(j, i) C(i s, k) /
    C(E, k)`` (``s = E / n`` experts per rank), and for ``R`` the same over the other
    ``n - 1`` ranks with the given rank always usable (``C(s + i s, k)``). A fractional
    ``s`` (``ep`` not dividing ``E``) uses the same polynomials; negative terms are clipped
    and the rest renormalised."""
    s = experts / ranks
    total = _gbinom(experts, k)
    top = min(k, ranks)

    def pmf(n, base):
        out = []
        for j in range(top + 1):
            if j > n:
                out.append(0.0)
                continue
            acc = sum((-1) ** (j - i) * math.comb(j, i) * _gbinom(base + i * s, k)
                      for i in range(j + 1))
            out.append(max(0.0, math.comb(n, j) * acc / total))
        norm = sum(out)
        return [x / norm for x in out]

    return pmf(ranks, 0.0), pmf(ranks - 1, s)


@functools.lru_cache(maxsize=4096)
def _reach_distribution(experts, k, ep, nodes, routing):
    return tuple(tuple(x) for x in _reach_lists(experts, k, ep, nodes, routing))


def reach_distribution(experts, k, ep, nodes, routing="uniform"):
    """Distribution of the distinct ranks one token reaches, for a random token.

    Returns ``(pmf_all, pmf_remote)``: lists indexed by ``j`` of the probability that the
    token reaches exactly ``j`` distinct ranks (its own included), and exactly ``j``
    distinct ranks other than its own. ``"uniform"`` and ``"node-limited:M"`` are exact
    (inclusion-exclusion; node-limited: the ``M`` chosen nodes hold the sender's own node
    with probability ``M / nodes``); ``"balanced"`` is the perfect router's rotation over
    the tokens of one rotation period, each equally likely, and ``"grouped"`` the same over
    every sender and the tokens of one period. Their means are
    :func:`expert_reach`'s ``ep x p_rank`` and, for the remote count, ``(ep - 1) x p_rank``
    under the symmetric routings.

    Parameters
    ----------
    experts : int
        Routed experts, spread evenly over the ranks.
    k : int
        Experts each token picks (top-k).
    ep : int
        Expert-parallel ranks.
    nodes : int
        Nodes the ranks span (for ``"node-limited"``).
    routing : str
        ``"uniform"``, ``"node-limited[:M]"``, ``"balanced"`` or ``"grouped"``
        (:func:`parse_routing`).

    Examples
    --------
    >>> all_, remote = reach_distribution(16, 2, 4, 1)
    >>> [round(p, 4) for p in all_]              # 2 experts: 1 rank (4 x C(4,2)/C(16,2))
    [0.0, 0.2, 0.8]
    >>> [round(p, 4) for p in remote]
    [0.05, 0.55, 0.4]
    """
    name, m = parse_routing(routing)
    experts, k, ep, nodes = _check_counts(experts, k, ep, nodes)
    all_, remote = _reach_distribution(experts, k, ep, nodes,
                                       name if m is None else f"{name}:{m}")
    return list(all_), list(remote)


def _reach_lists(experts, k, ep, nodes, routing):
    name, m = parse_routing(routing)
    if name == "grouped":
        # a random sender and token of one period: its own rank among the token's or not
        period, reach = _grouped_period(k, ep), min(k, ep)
        pairs = [(r, t) for r in range(ep) for t in range(period)]
        own = sum(1 for r, t in pairs if r in _grouped_slots(k, ep, t))
        remote = [0.0] * (reach + 1)
        remote[reach - 1] += own / len(pairs)
        remote[reach] += (len(pairs) - own) / len(pairs)
        return [0.0] * reach + [1.0], remote
    if name == "balanced":
        reach = min(k, ep)
        if reach >= ep:
            return ([0.0] * ep + [1.0], [0.0] * (ep - 1) + [1.0])
        period = ep // math.gcd(k, ep)
        # token t of rank r goes to ranks (t k + r + i) mod ep, i < k: own included iff
        # (-t k) mod ep < k
        own = sum(1 for t in range(period) if (-t * k) % ep < k)
        remote = [0.0] * (reach + 1)
        remote[reach - 1] += own / period
        remote[reach] += (period - own) / period
        return [0.0] * reach + [1.0], remote
    if name == "node-limited" and m < nodes:
        g = ep // nodes
        pool_ranks, pool_experts = m * g, m * experts / nodes
        all_, remote_in = _uniform_counts(pool_experts, k, pool_ranks)
        frac = m / nodes
        # own node chosen: remote as in one pool; not chosen: every reached rank is remote
        remote = [frac * a + (1 - frac) * b for a, b in zip(remote_in, all_)]
        return all_, remote
    return _uniform_counts(experts, k, ep)


def expected_max(pmf, n):
    """Expected largest of ``n`` independent draws from ``pmf`` (a list over ``0, 1, ...``):
    ``sum_j j (F(j)^n - F(j-1)^n)``, with ``F = 1`` from the last ``j`` of nonzero probability
    on (the definition: summed in floats it can fall an ulp short of 1, and ``(1 - 1e-16)^n``
    lost the top at ``n`` ~ 1e12 draws and more).

    A pmf that is no sequence, or holds what is no number (a bool, a string: ``float()`` read
    True as 1 and '0.5' as 0.5), is a TypeError naming it; probabilities that are not a
    distribution a ValueError.

    Parameters
    ----------
    pmf : sequence of float
        Probabilities of ``0, 1, ...``, summing to 1.
    n : int
        Independent draws, >= 1.

    Returns
    -------
    float

    Examples
    --------
    >>> expected_max([0.5, 0.5], 1), expected_max([0.5, 0.5], 2)
    (0.5, 0.75)
    """
    n = check_count(n, "n", 1, "an int >= 1")
    probs = sequence_of(pmf, "pmf", "probabilities")
    for i, p in enumerate(probs):
        if not is_real(p):
            raise TypeError(f"pmf[{i}] must be a probability (a number), got "
                            f"pmf[{i}]={show_value(p)} ({kind_of(p)})")
    # is_finite before float(): a probability of 10**400 raised float()'s OverflowError
    ok = bool(probs) and all(is_finite(p) and p >= 0 for p in probs)
    probs = [float(p) for p in probs] if ok else probs
    if not ok or abs(sum(probs) - 1) > 1e-9:
        raise ValueError(f"pmf must be a non-empty list of probabilities >= 0 summing to 1, "
                         f"got {show_value(pmf)}")
    top = max(j for j, p in enumerate(probs) if p > 0)    # F = 1 from the support's top on
    total, below, prev = 0.0, 0.0, 0.0
    for j, p in enumerate(probs[:top + 1]):
        below += p
        cur = 1.0 if j == top else min(1.0, below) ** n
        total += j * (cur - prev)
        prev = cur
    return total


def busiest_token(experts, k, ep, nodes, routing, tokens, sources=1):
    """``(all, remote)``: the distinct ranks, own included and not, that the busiest of
    ``tokens`` tokens on each of ``sources`` ranks (the first that many of the ``ep``, or
    their positions; None: all) reaches, in expectation (:func:`expected_max` of the tokens
    sent in all, ``tokens x sources``, independent tokens over :func:`reach_distribution`;
    for ``"balanced"`` the largest over the rotation's first ``tokens`` tokens, which the
    perfect router gives every source rank alike; for ``"grouped"`` the largest over every
    rank that holds tokens, which differ). ``tokens`` may instead list each EP
    rank's count (``sources=None`` then): the busiest rank's count and their sum
    (:func:`fabric._exchange.held_counts`).

    A kernel that gives each token one thread block finishes with its slowest block, so
    the per-token floors of a phase (the slot atomics per destination rank, the remote
    copies at one block's rate) are charged for the busiest token, not the average one.

    Parameters
    ----------
    experts, k, ep, nodes, routing
        As for :func:`reach_distribution`.
    tokens : int or sequence of int
        Tokens on each source rank, or each EP rank's own count.
    sources : int, sequence of int or None
        Source ranks (a count, or their positions); None with a list of counts.

    Returns
    -------
    tuple of float
        Ranks, own included and not.

    Examples
    --------
    >>> busiest_token(256, 8, 16, 1, "balanced", 1)   # token 0: ranks r..r+7, own included
    (8.0, 7.0)
    >>> busiest_token(256, 8, 16, 1, "balanced", 2)   # token 1: ranks r+8..r+15
    (8.0, 8.0)
    """
    name, m = parse_routing(routing)
    experts, k, ep, nodes = _check_counts(experts, k, ep, nodes)
    held = held_counts(tokens, ep, sources)
    if name == "grouped":
        return _grouped_busiest(k, ep, held)
    return _busiest(experts, k, ep, nodes,
                    name if m is None else f"{name}:{m}", max(held), sum(held))


@functools.lru_cache(maxsize=65536)
def _busiest(experts, k, ep, nodes, routing, tokens, draws):
    """:func:`busiest_token` of ``draws`` tokens in all, ``tokens`` on the rank that holds the
    most (the perfect router's rotation depends on a rank's own tokens only)."""
    name, _ = parse_routing(routing)
    if name == "balanced":
        reach = min(k, ep)
        if reach >= ep:
            return float(ep), float(ep - 1)
        own_all = all((-t * k) % ep < k for t in range(min(tokens, ep)))
        return float(reach), float(reach - 1 if own_all else reach)
    all_, remote = reach_distribution(experts, k, ep, nodes, routing)
    return expected_max(all_, draws), expected_max(remote, draws)


def _late_slot_valid(experts, k, ep, nodes, routing, slot):
    """Probability that top-k ``slot`` of one token names a rank that none of its slots
    ``0 .. slot - 1`` names (the dispatch claims a slot per first-time rank and marks repeats
    ``-1``; the combine loads only valid slots).

    Slot order is exchangeable under ``"uniform"`` and ``"node-limited:M"`` (a router's
    top-k by score): the other ``slot`` experts, distinct and uniform over the token's pool
    (all experts, or the ``M`` chosen nodes' ``M x experts / nodes``), all miss the
    ``experts / ep - 1`` other experts of the slot's rank. ``"balanced"`` puts slot ``i`` on
    rank ``base + i`` (mod ``ep``; :func:`reach_distribution`): first-time iff ``slot < ep``.

    >>> round(_late_slot_valid(256, 8, 8, 1, "uniform", 7), 4)     # C(224, 7) / C(255, 7)
    0.3989
    >>> _late_slot_valid(256, 8, 8, 1, "balanced", 7), _late_slot_valid(256, 8, 4, 1, "balanced", 7)
    (1.0, 0.0)
    """
    name, m = parse_routing(routing)
    if name in ("balanced", "grouped"):
        # both put slot i on a new rank while i < ep (grouped: group + i, or i mod ep)
        return 1.0 if slot < ep else 0.0
    pool = m * experts / nodes if name == "node-limited" and m < nodes else float(experts)
    same = experts / ep - 1                          # the slot's rank's other experts
    q = 1.0
    for i in range(slot):
        left = pool - 1 - same - i
        if left <= 0:
            return 0.0
        q *= left / (pool - 1 - i)
    return q


@functools.lru_cache(maxsize=512)
def _late_trips(experts, k, ep, nodes, routing, batches):
    """Distribution of one token's extra peer round trips per pulled round: ``p[j]`` the
    probability that exactly ``j`` of the later ``batches`` of top-k slots
    (:meth:`fabric.ExchangeKernel.late_batches`) hold a valid slot (a first-time rank, as in
    :func:`_late_slot_valid`).

    ``"balanced"``: slot ``i`` is valid iff ``i < ep`` (deterministic). ``"uniform"`` and
    ``"node-limited:M"``: the slots' experts are distinct and uniform over the token's pool
    (all experts, or the ``M`` chosen nodes'); with ``d`` distinct ranks among slots
    ``0 .. i - 1``, slot ``i`` is a first-time rank with probability
    ``(pool - g d) / (pool - i)``, ``g = experts / ep``: an exact walk over (slot, d, batches
    with a valid slot). One batch of one slot is :func:`_late_slot_valid`'s closed form.

    >>> _late_trips(256, 8, 32, 1, "balanced", ((1, 2, 3), (4, 5, 6, 7)))
    (0.0, 0.0, 1.0)
    >>> [round(x, 4) for x in _late_trips(256, 8, 8, 1, "uniform", ((7,),))]
    [0.6011, 0.3989]
    """
    if len(batches) == 1 and len(batches[0]) == 1:
        q = _late_slot_valid(experts, k, ep, nodes, routing, batches[0][0])
        return (1.0 - q, q)
    which = {s: j for j, b in enumerate(batches) for s in b}
    name, m = parse_routing(routing)
    out = [0.0] * (len(batches) + 1)
    if name in ("balanced", "grouped"):
        hit = {which[s] for s in which if s < ep}
        out[len(hit)] = 1.0
        return tuple(out)
    pool = m * experts / nodes if name == "node-limited" and m < nodes else float(experts)
    g = experts / ep
    states = {(0, frozenset()): 1.0}          # (distinct ranks so far, later batches hit)
    for i in range(k):
        nxt = {}
        for (d, hit), p in states.items():
            new = min(max((pool - g * d) / (pool - i), 0.0), 1.0) if pool > i else 0.0
            for fresh, w in ((True, new), (False, 1.0 - new)):
                if w <= 0.0:
                    continue
                key = (d + fresh, hit | {which[i]} if fresh and i in which else hit)
                nxt[key] = nxt.get(key, 0.0) + p * w
        states = nxt
    for (_, hit), p in states.items():
        out[len(hit)] += p
    return tuple(out)


def _late_rounds(dist, tokens):
    """Expected largest number of extra trips per round over ``tokens`` independent tokens
    whose count is distributed as ``dist`` (:func:`_late_trips`): the slowest block's."""
    total, below = 0.0, 0.0
    for j in range(1, len(dist)):
        below += dist[j - 1]
        total += 1.0 - min(below, 1.0) ** tokens
    return total


def _own_walk(experts, k, ep, pool, batches, own_in_pool):
    """``{(remote, own): p}`` for one token of ``k`` distinct experts drawn uniformly from a
    pool of ``pool`` experts (``experts / ep`` a rank; the own rank's among them iff
    ``own_in_pool``): ``remote`` the batches (the first: slots no later batch names; then
    ``batches``) holding a valid slot on a peer, ``own`` those whose valid slots are all the
    own rank's (a valid slot: the first of its rank)."""
    which = {s: j + 1 for j, b in enumerate(batches) for s in b}
    g = experts / ep
    # (distinct ranks so far, own rank seen, batches with a peer's valid slot, own's batch)
    states = {(0, False, frozenset(), -1): 1.0}
    for i in range(k):
        nxt = {}
        j = which.get(i, 0)
        for (d, seen, peer, own), p in states.items():
            left = pool - i
            if left <= 0:
                continue
            # the unseen ranks' experts: pool - g d, the own rank's g among them while unseen
            own_left = g if own_in_pool and not seen else 0.0
            fresh_own = own_left / left
            fresh_peer = min(max((pool - g * d - own_left) / left, 0.0), 1.0)
            for kind, w in (("own", fresh_own), ("peer", fresh_peer),
                            ("again", 1.0 - fresh_own - fresh_peer)):
                if w <= 0.0:
                    continue
                key = ((d + 1, True, peer, j) if kind == "own" else
                       (d + 1, seen, peer | {j}, own) if kind == "peer" else (d, seen, peer, own))
                nxt[key] = nxt.get(key, 0.0) + p * w
        states = nxt
    out = {}
    for (_, _, peer, own), p in states.items():
        key = (len(peer), int(own >= 0 and own not in peer))
        out[key] = out.get(key, 0.0) + p
    return out


@functools.lru_cache(maxsize=4096)
def _round_wait(experts, k, ep, nodes, routing, batches, tokens, trip, local):
    """Seconds the slowest of ``tokens`` blocks waits per pulled round, where a batch of its
    top-k slot loads (the first: the slots no later batch names; then ``batches``,
    :meth:`fabric.ExchangeKernel.late_batches`) can hold valid slots of the token's own rank
    only: such a batch waits for a local load (``local``: the own rank's part of the
    workspace is its own memory), one with a peer's valid slot for a peer round trip
    (``trip``), one with no valid slot not at all. ``None`` where no such batch can bound the
    slowest block: every wait is a peer's, the caller's ``trip x (1 + late)``.

    ``"balanced"``: token ``t``'s slot ``i`` is the own rank's iff ``(t k + i) mod ep == 0``
    (the rotation of :func:`_reach_lists`); the largest over the rotation's first ``tokens``
    tokens. ``"grouped"``: ``tokens`` lists each EP rank's count; token ``t`` of rank ``r``
    waits for a local load where ``r`` is in its group (:func:`_grouped_slots`); the largest
    over every rank's tokens of one period. ``"uniform"`` / ``"node-limited:M"``: an exact walk
    over the slots
    (:func:`_own_walk`; node-limited: the own node among the ``M`` chosen with probability
    ``M / nodes``), then the expected largest over ``tokens`` independent tokens.

    >>> trip, local = 1.71e-6, 0.15e-6        # TensorRT-LLM 1.3's FP8 round: {0}, {1-3}, {4-7}
    >>> fp8 = ((1, 2, 3), (4, 5, 6, 7))
    >>> round(_round_wait(256, 8, 32, 1, "balanced", fp8, 1, trip, local) * 1e6, 2)  # slot 0 own
    3.57
    >>> _round_wait(256, 8, 32, 1, "balanced", fp8, 2, trip, local)   # token 1: every slot a peer's
    >>> _round_wait(256, 8, 32, 1, "balanced", ((1, 4, 5, 6, 7),), 1, trip, local)   # BF16: {0, 2, 3} has peers
    """
    name, m = parse_routing(routing)
    first = tuple(s for s in range(k) if all(s not in b for b in batches))
    groups = (first,) + tuple(batches)
    if name in ("balanced", "grouped"):
        costs = []
        valid = [[s for s in b if s < ep] for b in groups]    # a slot's first rank: i < ep
        if name == "balanced":
            owns = [(-t * k) % ep for t in range(min(tokens, ep))]
        else:
            owns = [s.index(r) if r in (s := _grouped_slots(k, ep, t)) else -1
                    for r, c in enumerate(tokens) for t, _ in _grouped_tokens(k, ep, c)]
        for own in owns:
            peer = sum(1 for b in valid if any(s != own for s in b))
            alone = sum(1 for b in valid if b and all(s == own for s in b))
            costs.append((peer * trip + alone * local, alone))
        top = max(c for c, _ in costs)
        if any(c == top and alone == 0 for c, alone in costs):
            return None
        return top
    if name == "node-limited" and m < nodes:
        pool = m * experts / nodes
        walks = ((m / nodes, _own_walk(experts, k, ep, pool, batches, True)),
                 (1.0 - m / nodes, _own_walk(experts, k, ep, pool, batches, False)))
    else:
        walks = ((1.0, _own_walk(experts, k, ep, float(experts), batches, True)),)
    dist = {}
    for w, walk in walks:
        for (peer, alone), p in walk.items():
            dist[(peer, alone)] = dist.get((peer, alone), 0.0) + w * p
    if not any(p > 0.0 for (_, alone), p in dist.items() if alone):
        return None
    total, below, prev = 0.0, 0.0, 0.0
    for cost, p in sorted((peer * trip + alone * local, p) for (peer, alone), p in dist.items()):
        below += p
        cur = min(1.0, below) ** tokens
        total += cost * (cur - prev)
        prev = cur
    return total


# -- fabric facts: scale-up domains, NICs, effective bandwidths ---------------------------

def _domains(fabric):
    """Load/store domain label of every rank (``fabric.endpoints`` order): the one rule,
    :attr:`fabric.Fabric.loadstore_domains` (components without NICs and message links)."""
    c = fabric_memo(fabric, __name__)
    if "domains" not in c:
        labels = np.asarray(fabric.loadstore_domains)
        c["domains"] = labels[np.asarray(fabric.endpoint_indices)].astype(np.int64)
    return c["domains"]


def _split_by_failures(fabric, ranks):
    """``"; on the intact fabric they share one load/store domain, which the failures split:
    link chip0-nvs0 failed"``: where the EP ranks (positions in ``fabric.endpoints``) lie in
    more load/store domains than on the intact fabric, what failed inside the intact domains
    that held them (failed links with both ends there, failed nodes there); ``""`` on an
    intact fabric and where the failures did not part them.

    >>> import topologies
    >>> f = topologies.build("cluster-128")
    >>> _split_by_failures(f.without(links=["chip0-nvs0"]), list(range(8)))
    '; on the intact fabric they share one load/store domain, which the failures split: link chip0-nvs0 failed'
    >>> _split_by_failures(f.without(links=["chip9-nvs1"]), list(range(8)))
    ''
    """
    intact = fabric.intact
    if intact is None:
        return ""
    label, index = intact.loadstore_domains, intact.node_index
    held = {int(label[index[fabric.endpoints[int(r)]]]) for r in ranks}
    if len(held) >= len(set(_domains(fabric)[ranks].tolist())):
        return ""
    what = fabric.failures.inside(n for n, i in index.items() if int(label[i]) in held)
    if not what:
        return ""
    where = ("share one load/store domain" if len(held) == 1
             else f"span {len(held)} load/store domains")
    return f"; on the intact fabric they {where}, which the failures split: {what} failed"


def _network_port(fabric, node, efficiency):
    """``(name, effective bytes/s)`` of the chip's way onto the network, or ``(None, 0)``.

    A NIC node next to the chip that still has a link to the network (its narrowest
    link: PCIe to the GPU or the network side; a NIC whose network links are all cut
    is no way out), else the chip's own message links (a chip cabled straight into an
    InfiniBand or RoCE fabric); times the NIC's achieved fraction of line rate.
    """
    G = fabric.graph
    best, name = 0.0, None
    for nb in sorted(G.neighbors(node), key=str):
        if G.nodes[nb].get("kind") == "nic":
            if all(v == node for _, v in G.edges(nb)):
                continue                 # cut off from the network: a dead end
            bw = min(float(e["bandwidth"]) for _, _, e in G.edges(nb, data=True))
            if bw * efficiency > best:
                best, name = bw * efficiency, nb
    if name is None:
        links = [float(G.edges[node, nb]["bandwidth"]) for nb in G.neighbors(node)
                 if G.edges[node, nb].get("tech") in MESSAGE_TECHNOLOGIES]
        if links:
            best, name = sum(links) * efficiency, node
    return name, best


def _lost_port(fabric, node):
    """``": link nic1-rail1 failed"``: the failures that took chip ``node``'s way onto the
    network (its NICs on the intact fabric, failed or cut from the network, and the links
    between them and it; the network's nodes next to them, failed with their links), or
    ``""`` where none did (a chip that never had a NIC).

    >>> import topologies
    >>> f = topologies.build("rail:servers=2,gpus=2,chip=h100")
    >>> g = f.without(links=["nic1-rail1"])
    >>> _lost_port(g, "chip1"), _lost_port(g, "chip0")
    (': link nic1-rail1 failed', '')
    >>> _lost_port(f.without(chips=["rail0"]), "chip0")
    ': node rail0 failed'
    """
    G0 = (fabric.intact or fabric).graph
    nics = {n for n in G0[node] if G0.nodes[n].get("kind") == "nic"}
    near = nics | {x for n in nics for x in G0[n] if x != node}
    lost = [f"node {n}" for n in fabric.failures.nodes if n in near]
    lost += [f"link {u}-{v}" for u, v in fabric.failures.links if {u, v} & nics]
    if not lost:
        return ""
    return f": {name_list(lost, most=None)} failed"


def _link_efficiency(tech, payload):
    if tech in PROTOCOL_LINK_BANDWIDTH:
        return PROTOCOL_LINK_BANDWIDTH[tech] / link_tech(tech).bandwidth
    return payload


# -- results ------------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class ExchangePhase:
    """One phase (dispatch or combine), seconds; ``time = fixed + transfer + local_copy``.

    Attributes
    ----------
    fixed : float
        Synchronisations of the kernel.
    scaleup, network : float
        Time of the scale-up stage (most loaded link) and of the network stage
        (busiest NIC).
    transfer : float
        ``max(scaleup, network)`` for pipelined kernels, else their sum; for a pulling
        phase ``max(that + one peer round trip, pull_latency)``; at least ``interleaved``.
    local_copy : float
        Receive-side copy through HBM.
    time : float
    bottleneck : str
        ``"scale-up"``, ``"network"``, ``"round trips"`` (a pulled combine whose
        dependent round trips outlast its bandwidth time), ``"serial chain"`` (one block's
        work between its copies outlasts the links), ``"block rate"`` (one block's token
        outlasts the links), ``"queue pair"`` (a queue pair's atomics after writes, each
        waiting one network round trip, outlast the links: ``queue_pair``) or ``"fixed"``
        (when nothing moves).
    scaleup_bytes, nic_bytes : float
        Bytes on the most loaded scale-up link, and through the busiest NIC
        (sent + received counted separately; the larger direction).
    pull_latency : float
        Dependent round trips of a pulling combine (``rounds x round trip``, a second one
        per round where the slowest block's late slot is valid, plus the
        token's remote bytes at one block's rate for a block-per-token kernel); the
        transfer is at least this. 0 for phases that push.
    kernel_gaps : float
        The part of ``fixed`` spent between the phase's kernels.
    chain : float
        The part of ``fixed`` spent in one block's serial chain of memory operations before
        the phase's first byte can move or after its last byte lands (fill and drain).
    fence : float
        The part of ``fixed`` spent waiting for the acknowledgement of the phase's
        pushed peer stores before its release flag (one peer round trip; 0 for phases
        without a release fence and across the network, and where the fences run between a
        block's copies: ``interleaved``).
    interleaved : float
        One block's serial work between the copies it moves (its chain there and its
        per-copy fences), which the other blocks' copies overlap: the transfer is at least
        this (``ExchangeKernel.interleaved_chain``; lead's rule, session 17).
    queue_pair : float
        On a multi-path network (``adaptive_routing``), the busiest remote RC queue pair's
        RDMA atomics that follow writes, each waiting one network round trip for them
        (:meth:`fabric.ExchangeKernel.qp_atomics` x two ``EXCHANGE_SYNC`` network steps),
        plus that queue pair's own writes at its NIC's achieved rate where each is followed
        by its atomic (``qp_signals`` ``"each"``: they do not overlap the round trips), and
        at least the network's time plus one such round trip (the last atomic follows the
        last write): the transfer is at least this. 0 where no atomic follows writes on a
        queue pair across the network, or ``adaptive_routing=False``.
    """

    fixed: float
    scaleup: float
    network: float
    transfer: float
    local_copy: float
    time: float
    bottleneck: str
    scaleup_bytes: float
    nic_bytes: float
    pull_latency: float = 0.0
    kernel_gaps: float = 0.0
    chain: float = 0.0
    fence: float = 0.0
    interleaved: float = 0.0
    queue_pair: float = 0.0


@dataclasses.dataclass(frozen=True)
class MoEExchange:
    """Result of :func:`moe_exchange`.

    Attributes
    ----------
    kernel, routing : str
    ep : int
    nodes : int
        Load/store domains the EP ranks span.
    tokens_per_rank : int
        The tokens of the EP rank that holds the most (the given int, or the largest of the
        given counts).
    dispatch_bytes, combine_bytes : float
        Bytes per token message (kernel metadata included).
    dispatch, combine : float
        Seconds.
    dispatch_phase, combine_phase : ExchangePhase
    copies_rank : float
        Expected (token, destination rank) pairs a rank sends, own rank included (the rank
        that holds the most tokens, as in the other per-rank counts).
    copies_node : float
        Expected (token, destination node) pairs a rank sends, own node included.
    copies_expert : float
        (token, expert) pairs a rank sends: ``tokens x k``.
    link_bytes : dict
        ``{(tail, head): bytes}``: dispatch bytes on each directed scale-up link
        that carries any (combine carries ``combine_bytes / dispatch_bytes`` times
        as much the other way).
    nic_bytes : dict
        ``{nic: (sent, received)}``: dispatch bytes through each NIC.
    parameters : tuple of Parameter
    """

    kernel: str
    routing: str
    ep: int
    nodes: int
    tokens_per_rank: int
    dispatch_bytes: float
    combine_bytes: float
    dispatch: float
    combine: float
    dispatch_phase: ExchangePhase
    combine_phase: ExchangePhase
    copies_rank: float
    copies_node: float
    copies_expert: float
    link_bytes: dict
    nic_bytes: dict
    parameters: tuple

    @property
    def bottleneck_dispatch(self):
        """What sets the dispatch time (``"scale-up"``, ``"network"`` or ``"fixed"``)."""
        return self.dispatch_phase.bottleneck

    @property
    def bottleneck_combine(self):
        """What sets the combine time."""
        return self.combine_phase.bottleneck


# -- the model ----------------------------------------------------------------------------

def _token_bytes(value, hidden, name):
    value = check_number(name, value, 0, " bytes", strict=True)
    return value * hidden if value <= _MAX_ELEMENT_BYTES else value


def _payloads(value, hidden, name):
    """A token's payloads in bytes: one number (one payload) or a tuple/list of them (e.g. a
    post-quantized token's values and its scale factors, each its own payload), each read by
    :func:`_token_bytes` (per element if at most 16)."""
    if isinstance(value, (tuple, list)):
        if not value:
            raise SpecError(f"{name} must name at least one payload, got {name}={value!r}")
        return tuple(_token_bytes(v, hidden, name) for v in value)
    return (_token_bytes(value, hidden, name),)


def _resolve_ep(fabric, ep):
    listed = items_of(ep)
    if listed is None:
        if not is_int(ep):
            raise kind_error(ep, "ep", "an int or a sequence of ranks")
        if not 1 <= ep <= fabric.n_endpoints:
            raise SpecError(f"ep must be between 1 and the {fabric.n_endpoints} ranks of "
                            f"{fabric.name}, got ep={ep}")
        return np.arange(int(ep))
    nodes = [fabric.node(x) for x in listed]
    # positions in fabric.endpoints (what every array here is indexed by), not the stable
    # ranks of rank_of: on a degraded fabric the two differ after the first failed chip
    position = {n: i for i, n in enumerate(fabric.endpoints)}
    ranks = []
    for n in nodes:
        if n not in position:
            raise NodeError(f"{fabric.name}: {n!r} is not a chip endpoint")
        ranks.append(position[n])
    if len(set(ranks)) != len(ranks) or not ranks:
        raise SpecError("ep must list at least one rank, each once")
    return np.array(ranks, dtype=np.int64)


def _matrices(kern, ranks, dom, p_rank, p_node, k, counts, nbytes, rdma_only=False,
              grouped=False):
    """Expected dispatch bytes (scale-up matrix over the EP ranks, network matrix), row the
    sender; each EP rank sends its own ``counts`` tokens (an array over the EP ranks; 0: it
    holds none). The combine's are their transposes (the copies go back). ``grouped``: the
    copies of ``"grouped"`` routing, counted (:func:`_grouped_pairs`; a kernel without
    forwarding)."""
    ep = len(ranks)
    same = dom[:, None] == dom[None, :]
    if rdma_only:
        same = np.eye(ep, dtype=bool)
    pair = (_grouped_pairs(k, counts) if grouped
            else _copy_pairs(kern.dedup, k, counts, p_rank)) * nbytes
    if kern.forwarding:
        # Network: once per (token, remote node), to the rail peer (same local index).
        labels = np.unique(dom)
        local = np.zeros(ep, dtype=np.int64)
        for d in labels:
            idx = np.flatnonzero(dom == d)
            local[idx] = np.arange(len(idx))
        rail = (local[:, None] == local[None, :]) & ~same
        net = np.where(rail, (counts * p_node * nbytes)[:, None], 0.0)
        # Scale-up: the forwarder in each node delivers every token that reaches a local
        # rank, for the ranks of its rail (at most one per node, its own included): their
        # tokens in all.
        rail_tokens = _holders(local, counts)
        up = np.where(same, (rail_tokens * p_rank * nbytes)[:, None], 0.0)
        np.fill_diagonal(up, 0.0)
    else:
        net = np.where(same, 0.0, pair)
        up = np.where(same, pair, 0.0)
    return up, net


def _copy_pairs(dedup, k, counts, p_rank):
    """Expected copies each EP rank sends each other one (row the sender, the diagonal zero),
    from the tokens it holds (``counts``, an array over the EP ranks): ``tokens x k / ep``
    (token, expert) copies where the kernel sends one per expert (``dedup`` ``"expert"``), else
    ``tokens x p_rank`` (token, rank) copies. :func:`_matrices` and the collective's
    all-to-allv.

    >>> _copy_pairs("rank", 8, np.array([0, 2, 4]), 0.5).tolist()
    [[0.0, 0.0, 0.0], [1.0, 0.0, 1.0], [2.0, 2.0, 0.0]]
    """
    ep = len(counts)
    per = counts * k / ep if dedup == "expert" else counts * p_rank
    pair = np.repeat(per[:, None], ep, axis=1)
    np.fill_diagonal(pair, 0.0)
    return pair


def _holders(label, counts):
    """For each EP rank, the tokens the EP ranks that share its ``label`` (its load/store
    domain, or its local index: its rail) hold in all, its own included (``counts``, an array
    over the EP ranks).

    >>> _holders(np.array([0, 0, 1, 1]), np.array([1, 3, 2, 0])).tolist()
    [4, 4, 2, 2]
    """
    out = np.zeros(int(label.max()) + 1, dtype=np.asarray(counts).dtype)
    np.add.at(out, label, counts)
    return out[label]


def _unit_link_loads(fabric, ranks, pattern, payload):
    """Link loads of the traffic pattern ``pattern`` (EP rank x EP rank), cached per fabric.

    Returns ``(names, loads, capacity)`` over the links that carry any of it: their
    ``(tail, head)`` names, their bytes per unit of ``pattern``, and their effective
    bytes/s. Routing is linear in the matrix, so a phase of ``c x pattern`` bytes loads
    each link ``c x loads``: a decode sweep that calls :func:`moe_exchange` once per
    step routes each (fabric, ranks, pattern) once (the pattern is the same-domain mask
    for every kernel here, whatever the batch and bytes).
    """
    facts = fabric_memo(fabric, __name__)
    cache = facts.setdefault("unit_loads", {})
    key = (ranks.tobytes(), pattern.shape, pattern.tobytes(), payload)
    hit = cache.get(key)
    if hit is not None:
        return hit
    links, loads = _route_pattern(fabric, ranks, pattern)
    G = fabric.graph
    names, capacity = [], np.empty(len(links))
    for i, (u, v) in enumerate(links):
        d = G.edges[u, v]
        tech = d.get("tech", "") or ""
        if tech in MESSAGE_TECHNOLOGIES or "nic" in (G.nodes[u].get("kind"),
                                                     G.nodes[v].get("kind")):
            raise RoutingError(f"{fabric.name}: scale-up traffic between ranks of one "
                               f"load/store domain was routed over {u!r}-{v!r}, a message link")
        names.append((u, v))
        capacity[i] = float(d["bandwidth"]) * _link_efficiency(tech, payload)
    hit = cache[key] = (tuple(names), loads, capacity)
    return hit


def _route_pattern(fabric, ranks, pattern):
    """``(links, loads)``: the traffic ``pattern`` (EP rank x EP rank, ``ranks`` their
    fabric ranks) routed by the fabric's router; the ``(tail, head)`` names of the links
    that carry any of it and their bytes per unit of ``pattern``."""
    n = fabric.n_endpoints
    rr, cc = np.nonzero(pattern)
    m = sp.csr_matrix((pattern[rr, cc], (ranks[rr], ranks[cc])), shape=(n, n))
    r = fabric.router
    loads = r.loads_matrix(m)
    hot = np.flatnonzero(loads > 0)
    return tuple(r.link_name(kk) for kk in hot), loads[hot]


def _scaleup_time(fabric, ranks, up, payload):
    """Most loaded scale-up link: (time, bytes, {link: bytes}) of the matrix ``up``.

    ``up`` is split into a scale ``c`` (its largest entry) and a pattern ``up / c``
    whose link loads are routed once and cached (:func:`_unit_link_loads`).
    """
    if not up.any():
        return 0.0, 0.0, {}
    c = float(up.max())
    names, unit, capacity = _unit_link_loads(fabric, ranks, up / c, payload)
    loads = unit * c
    times = loads / capacity
    out = {name: float(b) for name, b in zip(names, loads)}
    if not len(times):
        return 0.0, 0.0, out
    # The first link with the largest time (ties: routing order), as the loop it replaces.
    i = int(np.argmax(times))
    return float(times[i]), float(loads[i]), out


def _qp_own_time(kern, phase, fabric, rank, pair_bytes, efficiency):
    """Seconds the busiest remote queue pair's own writes take on its sender's NIC, where
    each of them is followed by its signal's atomic (``qp_signals`` ``"each"``): the pair's
    ``pair_bytes`` spread over ``qp_per_peer`` queue pairs, at the port's achieved rate
    (0 otherwise). A queue pair issues its work requests in order, and under adaptive
    routing the adapter holds an atomic until the writes before it have completed
    (deepseek-ai/DeepEP PR #437: 'one RTT of latency for each atomic that follows
    writes'), so its writes do not overlap its atomics' round trips: the queue pair's chain
    is its writes' wire time plus the round trips. With ``"last"`` (one atomic after all of
    a queue pair's writes) the network's time plus one round trip already bounds it.

    >>> import topologies
    >>> from fabric._exchange import exchange_kernel
    >>> f = topologies.build("rail:servers=2,gpus=1,nic=ib-ndr,chip=h100")
    >>> t = _qp_own_time(exchange_kernel("pplx"), 0, f, 0, 47e6 * 2, 0.94)
    >>> round(t * 1e6, 6)       # 47 MB a queue pair at 47 GB/s
    1000.0
    >>> _qp_own_time(exchange_kernel("deepep-low-latency"), 0, f, 0, 1e6, 0.94)
    0.0
    """
    if kern.qp_signals[phase] != "each":
        return 0.0
    _, bw = _network_port(fabric, fabric.endpoints[int(rank)], efficiency)
    return pair_bytes / kern.qp_per_peer / bw


def _port_time(sent, recv, bw, background=0.0):
    """Seconds a NIC port of ``bw`` effective bytes/s takes to send ``sent`` and receive
    ``recv`` bytes while a background stream of ``background`` bytes/s arrives on it too.

    Concurrent flows share a link as in the collectives model (their bytes add on it): in a
    phase of ``t`` seconds the receive direction carries ``recv + background x t`` bytes, so
    ``t = recv / (bw - background)``; the send direction is not touched. ``(seconds, bytes)``:
    the direction that sets the time and its exchange bytes. The caller refuses
    ``background >= bw``.

    >>> _port_time(10.0, 10.0, 5.0)                  # 10 bytes each way at 5 B/s
    (2.0, 10.0)
    >>> _port_time(10.0, 10.0, 5.0, background=1.0)  # 10 B in 2.5 s, with 2.5 B beside them
    (2.5, 10.0)
    """
    t_send = sent / bw
    t_recv = recv / (bw - background)
    if t_send == t_recv:
        return t_send, float(max(sent, recv))
    return (t_send, float(sent)) if t_send > t_recv else (t_recv, float(recv))


def _network_time(fabric, ranks, net, efficiency, background=0.0):
    if not net.any():
        return 0.0, 0.0, {}
    sent, recv = net.sum(axis=1), net.sum(axis=0)
    worst, worst_bytes, out = 0.0, 0.0, {}
    for i, r in enumerate(ranks):
        node = fabric.endpoints[r]
        if sent[i] == 0 and recv[i] == 0:
            continue
        nic, bw = _network_port(fabric, node, efficiency)
        if bw <= 0:
            raise RoutingError(f"{fabric.name}: rank {int(r)} ({node!r}) must reach ranks "
                               f"outside its load/store domain but has no NIC with a link to "
                               f"the network{_lost_port(fabric, node)}")
        if background >= bw:
            raise SpecError(f"nic_background={background / 1e9:.6g} GB/s fills the "
                            f"{bw / 1e9:.6g} GB/s (achieved) of {nic!r}, the NIC of rank {int(r)} "
                            f"({node!r}): the exchange would never finish")
        out[nic] = (float(sent[i]), float(recv[i]))
        t, b = _port_time(sent[i], recv[i], bw, background)
        if t > worst:
            worst, worst_bytes = t, b
    return worst, worst_bytes, out


def _routed_network_time(fabric, ranks, net, efficiency):
    """Seconds of the network stage's busiest link, the matrix ``net`` routed on the fabric.

    :func:`_network_time` charges each rank's NIC port. On a non-blocking network the
    busiest routed link is such a port (equal to it to rounding, tested on the rail
    presets), but an oversubscribed network (``leafspine:k=8,over=3``: 2x) or failed
    switches or links (cluster-128 with 1 of 8 spines left: 7x) concentrate traffic on
    fewer links, which the ports alone cannot see. Every link pays
    the same achieved fraction of line rate as a NIC. The pattern ``net / max`` is routed
    once per fabric and cached, as :func:`_unit_link_loads` does for the scale-up stage.
    """
    c = float(net.max())
    pattern = net / c
    cache = fabric_memo(fabric, __name__).setdefault("unit_network", {})
    key = (ranks.tobytes(), pattern.shape, pattern.tobytes())
    if key not in cache:
        links, loads = _route_pattern(fabric, ranks, pattern)
        G = fabric.graph
        cache[key] = max((float(load) / float(G.edges[u, v]["bandwidth"])
                          for (u, v), load in zip(links, loads)), default=0.0)
    return c * cache[key] / efficiency


def _phase(kern, which, fixed, up_t, up_b, net_t, net_b, copy_t, pull=0.0, gaps=0.0, chain=0.0,
           fence=0.0, trip=0.0, block=0.0, interleaved=0.0, queue_pair=0.0):
    links = max(up_t, net_t) if kern.pipelined else up_t + net_t
    moved = max(links, block)          # one block's token at the block's rate (a push)
    # a pull receives its first byte one round trip (``trip``) after its first request
    streamed = moved + trip if moved > 0 else 0.0
    # one block's serial work between its copies overlaps the other blocks' copies
    # the busiest queue pair's atomics after writes, each a network round trip (multi-path)
    transfer = max(streamed, pull, interleaved, queue_pair)
    time = fixed + transfer + copy_t
    if transfer == 0:
        bott = "fixed"
    elif queue_pair > max(streamed, pull, interleaved):
        bott = "queue pair"
    elif interleaved > max(streamed, pull):
        bott = "serial chain"
    elif pull > streamed:
        bott = "round trips"
    elif block > links:
        bott = "block rate"
    else:
        bott = "network" if net_t >= up_t else "scale-up"
    return ExchangePhase(fixed=fixed, scaleup=up_t, network=net_t, transfer=transfer,
                         local_copy=copy_t, time=time, bottleneck=bott, scaleup_bytes=up_b,
                         nic_bytes=net_b, pull_latency=pull, kernel_gaps=gaps, chain=chain,
                         fence=fence, interleaved=interleaved, queue_pair=queue_pair)


def pull_rounds(nbytes, threads, vector):
    """Dependent steps of one thread block pulling ``nbytes`` with ``threads`` threads
    that each load ``vector`` bytes per step: ``ceil(nbytes / (threads x vector))``.

    Parameters
    ----------
    nbytes : int
        Bytes the block pulls.
    threads : int
        Threads of the block.
    vector : int
        Bytes each thread loads per step.

    Returns
    -------
    int
        Dependent steps.

    Examples
    --------
    >>> pull_rounds(7168 * 2, 256, 16)          # a BF16 DeepSeek-V3 token
    4
    >>> pull_rounds(1, 256, 16), pull_rounds(4096, 256, 16), pull_rounds(4097, 256, 16)
    (1, 1, 2)
    """
    # counts as ints: np.int64 threads x vector wrapped (2**62 threads: 0 rounds, a division
    # by zero warning); a size as a finite number (10**400 read exactly, nan unnamed)
    nbytes = check_number("nbytes", nbytes, 0, " bytes")
    threads, vector = (check_count(v, name, 1) for name, v in (("threads", threads),
                                                               ("vector", vector)))
    return -(-math.ceil(nbytes) // (threads * vector))


def _aligned_vector(nbytes, widest):
    """Bytes per thread per step of TensorRT-LLM's one-sided copy loops: the widest of
    ``widest``, ``widest/2``, ... 1 bytes that divides the token's bytes (moeAlltoAllKernels.cu
    ``vectorized_copy`` / ``vectorized_dispatch`` / ``vectorized_combine`` pick 16, 8, 4, 2 or
    1 by ``bytes % 16 == 0``, ``% 8``, ...; the FP8 cast likewise picks 16, 8, ... elements by
    the element count, one byte each). A fractional byte count is taken at its ceiling.

    >>> _aligned_vector(7168 * 2, 16), _aligned_vector(7170 * 2, 16), _aligned_vector(7171, 16)
    (16, 4, 1)
    """
    n = math.ceil(nbytes)
    v = widest
    while v > 1 and n % v:
        v //= 2
    return v


def _rounds(kern, nbytes):
    """A one-block-per-token kernel's steps over a token of ``nbytes``: :func:`pull_rounds`
    at the vector its copy loop picks for that size (:func:`_aligned_vector`)."""
    return pull_rounds(nbytes, kern.pull_threads, _aligned_vector(nbytes, kern.pull_vector))


def _copy_fences(copies, blocks, p, trip, lead=0.0):
    """Seconds the release fences add to the slowest combine block when each of its copies to
    a load/store peer is released by its own fence, a peer round trip ``trip``, before the
    next copy (pplx-kernels' gatherKernel: NVSHMEM's put-with-signal to a load/store peer).
    ``copies`` are spread over ``blocks`` as :func:`fabric._exchange.serial_copies` spreads
    them; each copy's source is such a peer with probability ``p``, independently; block 0
    has ``lead`` seconds more on its chain (its sync signal's NIC post across the network).
    The expectation, over every block, of ``max(lead + trip x N0, trip x max(N1, ...)) - lead``
    with ``N`` binomial over each block's own copies (block 0 holds the most; the blocks
    with one copy fewer count too, so one more copy never lowers it).

    >>> round(_copy_fences(1024, 132, 7 / 8, 1.0), 4), round(_copy_fences(8, 132, 7 / 8, 1.0), 6)
    (8.0, 1.0)
    >>> round(_copy_fences(8, 132, 0.5, 1.0, lead=2.0), 4)   # block 0 slowest: its own fence
    0.5
    """
    most = serial_copies(copies, blocks)
    if most == 0 or p <= 0:
        return 0.0
    full = math.ceil(copies) - (most - 1) * int(blocks)     # blocks holding `most` copies
    # The binomial's mass lies near its mean: beyond 12 standard deviations and 40 counts
    # (the skewed, Poisson-like case of a small p) the tails are far under a double's
    # precision, so the sums run over that window (and j = 0) only: a block of 10**9 copies
    # costs little more than one of 10.
    mean, sd = most * p, math.sqrt(most * p * (1 - p))
    lo = max(0, math.floor(mean - 12 * sd) - 40)
    hi = min(most, math.ceil(mean + 12 * sd) + 40)
    j = np.unique(np.r_[0, np.arange(lo, hi + 1)])
    from scipy.stats import binom  # at call time: ~0.5 s of importing analysis

    pmf = binom.pmf(j, most, p)
    others = (binom.cdf(j, most, p) ** (full - 1)           # P(max of the others <= j)
              * binom.cdf(j, most - 1, p) ** (int(blocks) - full))
    p_max = np.diff(others, prepend=0.0)
    # E[max(trip x N0, trip x M - lead)] over N0 ~ pmf and M ~ p_max, independent (lead taken
    # out inside the max, not after it: no cancellation): for N0 = i, with a = trip x i,
    # P(trip x M - lead <= a) a + E[trip x M - lead; trip x M - lead > a].
    vals = trip * j - lead
    below = np.cumsum(p_max)
    above = np.append(np.cumsum((vals * p_max)[::-1])[::-1], 0.0)
    a = trip * j
    k = np.searchsorted(vals, a, side="right")
    return float(np.dot(pmf, a * np.where(k > 0, below[np.maximum(k - 1, 0)], 0.0) + above[k]))


def _peer_sources(dom, counts):
    """The most tokens the ranks of one EP rank's load/store domain other than itself hold
    (``counts``, an array over the EP ranks; ``dom`` their domains), over the EP ranks:
    the copies that rank's combine sends back to a load/store peer, out of every token sent.

    >>> dom = np.array([0, 0, 0, 0, 1, 1, 1, 1])
    >>> _peer_sources(dom, np.ones(8, dtype=int)), _peer_sources(dom, np.array([2, 0, 0, 0, 0, 3, 0, 0]))
    (3, 3)
    """
    return int((_holders(dom, counts) - counts).max())


def _round_trip(fabric, ranks):
    """Largest there-and-back path latency between two EP ranks of one domain (s):
    :func:`analysis.peer_round_trip` over the ranks (positions in ``fabric.endpoints``),
    cached per rank set (a frontier asks for every step)."""
    cache = fabric_memo(fabric, __name__).setdefault("round_trip", {})
    key = np.asarray(ranks).tobytes()
    if key not in cache:
        cache[key] = peer_round_trip(fabric, [fabric.endpoints[i] for i in ranks])
    return cache[key]


def _further_barrier(fabric, ranks):
    """Seconds of one flag barrier beyond a load/store kernel's first (which its kernel floor
    holds) over the EP ranks, and its Parameters: the symmetric-memory runtime's rule for a
    store-and-spin barrier, :func:`analysis._runtime_cost.flag_barrier` (one handoff: the
    largest one-way path + the GPU side of a peer load), one place for every one-sided kernel.
    DeepEP's notify barrier is one (``barrier_device``, deepseek-ai/DeepEP ebfe47e
    ``csrc/kernels/utils.cuh``: an atomic on the rank's own slot, ``fence.acq_rel.sys``, an
    atomic on each peer's slot whose result is discarded (compiled for sm_90a / sm_100a:
    ``ATOM.E.ADD.STRONG.SYS PT, RZ``, nothing waits for it), then a spin on its own slots;
    session 23)."""
    cache = fabric_memo(fabric, __name__).setdefault("further_barrier", {})
    key = np.asarray(ranks).tobytes()
    if key not in cache:
        cache[key] = (further_barrier(fabric, [fabric.endpoints[i] for i in ranks]),
                      peer_access_latency(runtime_arch(fabric))[1])
    return cache[key]


def _kernel_floor(fabric):
    """The ``symmetric-memory`` runtime's kernel floor for ``fabric``'s GPUs, as its Parameter."""
    name = f"symmetric-memory.kernel_floor.{runtime_arch(fabric)}"
    return next(p for p in get_runtime("symmetric-memory").parameters() if p.name == name)


def _syncs(n, first, further):
    """Seconds of ``n`` synchronisations: the first costs ``first``, each further ``further``."""
    return 0.0 if n == 0 else first + (n - 1) * further


def _collective_phase(fabric, ranks, pair, runtime, transport, collective):
    import analysis
    cost = collective or analysis.cost
    ep = len(ranks)
    names = [fabric.endpoints[r] for r in ranks]
    off = pair[~np.eye(ep, dtype=bool)]
    kwargs = {"algorithm": "auto", "ranks": names, "transport": transport}
    if runtime is not None:
        kwargs["runtime"] = runtime
    if off.size and np.allclose(off, off[0]):
        res = cost(fabric, "all-to-all", float(off[0]) * ep, **kwargs)
    else:
        res = cost(fabric, "all-to-allv", pair, **kwargs)
    return float(res.time)


def check_background(nic_background):
    """``nic_background`` (bytes/s into each EP rank's NIC from outside the exchange) as a
    float if it is a finite real number >= 0, else an error naming it (a TypeError for what
    is no number, STYLE's rule; a SpecError for nan, inf or a negative rate): the one check of
    :func:`moe_exchange`'s and :func:`analysis.decode_step`'s ``nic_background``.

    >>> check_background(25e9)
    25000000000.0
    >>> check_background(True)
    Traceback (most recent call last):
    ...
    TypeError: nic_background must be a finite number >= 0 bytes/s, got nic_background=True (a bool)
    """
    return check_number("nic_background", nic_background, unit=" bytes/s")


def check_collective(collective):
    """``collective`` if it is None or callable, else a TypeError naming it: the one check of
    the ``collective=`` cost function that :func:`moe_exchange` and the decode, prefill and
    serving models (through :func:`analysis._decode.engine_collective`) take, made whether
    or not a collective is priced (a value no call would ever use was silently accepted).

    >>> check_collective(None) is None
    True
    >>> check_collective("nccl")
    Traceback (most recent call last):
    ...
    TypeError: collective must be a cost function like analysis.cost (called as collective(fabric, op, nbytes, **options), returning an object with .time in seconds) or None, got 'nccl' (a str); a runtime by name is runtime='nccl'
    """
    if collective is not None and not callable(collective):
        hint = ""
        if isinstance(collective, str):
            try:
                get_runtime(collective)
                hint = f"; a runtime by name is runtime={collective!r}"
            except (SpecError, TypeError):
                pass
        raise kind_error(collective, "collective", "a cost function like analysis.cost (called "
                         "as collective(fabric, op, nbytes, **options), returning an object "
                         "with .time in seconds) or None", hint)
    return collective


def moe_exchange(fabric, model, tokens_per_rank, ep, *, kernel, dispatch_bytes, combine_bytes,
                 transport=None, routing="uniform", runtime=None, chip=None, collective=None,
                 kernel_gap=None, l2_flushed=True, nic_background=0.0, adaptive_routing=None,
                 sources=None):
    """Cost one MoE dispatch and combine with a named exchange kernel; see the module docstring.

    Parameters
    ----------
    fabric : fabric.Fabric
    model : str or MoEModel
        Gives the hidden size, routed experts and experts per token.
    tokens_per_rank : int or sequence of int
        Tokens each EP rank that holds tokens dispatches (>= 1; see ``sources``), or the
        tokens of each EP rank in ``ep``'s order (ints >= 0, at least one > 0; a rank with 0
        holds none, but holds experts: it receives in the dispatch and sends in the combine),
        e.g. a decode batch whose sequences split unevenly over the attention groups
        (:func:`fabric._exchange.held_counts`). See the module docstring ("Ranks that hold
        tokens").
    ep : int or sequence
        Expert-parallel ranks: the first ``ep`` live chips of the fabric in rank
        order, or the ranks (or chip names) themselves (a failed chip's rank is
        refused; :meth:`fabric.Fabric.node`).
    kernel : str or fabric.ExchangeKernel
        One of :data:`fabric.EXCHANGE_KERNELS`.
    dispatch_bytes, combine_bytes : float
        Bytes per token; a value of at most 16 is read as bytes per hidden
        element (1 for FP8, 2 for BF16, ``1 + 4/128`` for FP8 with per-128
        scales), as :func:`analysis.decode_step` takes them. ``dispatch_bytes`` may
        also be a tuple of the token's payloads, each read the same way, when the
        kernel sends them apart: TensorRT-LLM's one-sided dispatch sends a
        post-quantized token's values and its scale factors as two payloads
        (NVFP4 ``(0.5, 1/16)``, MXFP8 ``(1, 1/32)``); traffic is their sum, the
        serial chain counts each payload's copy rounds. For ``one-sided`` a
        combine narrower than the BF16 MoE output (e.g. ``combine_bytes=1``) is
        TensorRT-LLM's low-precision combine: the staging pass reads the BF16 output
        and writes the narrow copy (:attr:`fabric.ExchangeKernel.staging_source_bytes`).
    transport : str or fabric.Transport, optional
        ``None`` or ``"native"``: each kernel's own choice (load/store inside a load/store
        domain, RDMA across). ``"rdma"`` sends every copy of a direct kernel
        (``deepep-low-latency``, ``pplx``) over the NIC, peer-to-peer over the
        scale-up fabric switched off (DeepEP's original "pure RDMA" low-latency
        mode); ``"loadstore"`` requires one load/store domain. Passed to the
        collectives model for ``kernel="all-to-allv"`` (which also takes a
        :class:`fabric.Transport`; a kernel of its own paths takes a name only).
    routing : str
        ``"uniform"``, ``"node-limited[:M]"``, ``"balanced"`` or ``"grouped"``
        (:func:`parse_routing`).
    runtime : str, optional
        Collective runtime for ``kernel="all-to-allv"``, passed to ``analysis.cost``
        when given.
    chip : str or ChipSpec, optional
        For the local-copy stage (HBM bandwidth); default ``fabric.chip``.
    collective : callable, optional
        Replaces ``analysis.cost`` for ``kernel="all-to-allv"``.
    kernel_gap : float, optional
        Seconds between two consecutive kernels of one phase (CUDA-graph replay);
        default :data:`analysis.GRAPH_KERNEL_OVERHEAD`; ``0`` leaves the gaps out
        (for a caller that charges every kernel itself, as ``decode_step`` does).
    l2_flushed : bool
        The token's data starts in HBM (``True``, default: flushed between timed calls,
        or pushed out by more traffic than L2 holds) or in L2 (``False``: written by the
        kernel just before, as in a decode step, or read by a benchmark that moves less
        than L2 holds between its calls); prices the serial chain's first loads.
    nic_background : float
        Bytes per second that traffic outside the exchange delivers to EACH EP rank's NIC
        while the exchange runs (its receive direction), spread evenly over time: e.g. a
        disaggregated decode instance's KV-cache inflow, which the prefill side RDMA-writes
        into the decode GPUs' memory through their own NICs (SGLang's Mooncake backend:
        ``transfer_sync`` writes from a background thread, the target NIC the one on the
        GPU's PCIe switch). The network stage shares each NIC port with it as concurrent
        flows share a link in the collectives model (bytes add): a phase of ``t`` seconds
        receives ``recv + nic_background x t`` bytes, ``t = recv / (B - nic_background)``
        (``B`` the port's achieved bytes/s; the send direction unchanged). ``0`` (default):
        no background. Stages inside one load/store domain do not use a NIC and are not
        slowed; ``kernel="all-to-allv"`` (the collectives model) refuses a background.
    adaptive_routing : bool, optional
        Whether the network is multi-path (InfiniBand adaptive routing), so that an RDMA
        atomic after writes on one queue pair waits one network round trip for them
        (:attr:`fabric.ExchangeKernel.qp_signals`); default the named assumption
        ``fabric._exchange.EXCHANGE_ADAPTIVE_ROUTING`` (``True``). ``False``: a single-path
        network, whose queue pairs keep their order on the wire.
    sources : int or sequence of int, optional
        With one ``tokens_per_rank`` for every holder (None with a sequence of counts, which
        says it already), the EP ranks that hold tokens (a decode batch smaller than the EP
        group): an int, the first ``sources`` of the EP ranks in ``ep``'s order; or their
        positions in ``ep`` (indices ``0 .. ep - 1``, each once), which keeps ``ep``'s order,
        i.e. which rank holds which experts and, across nodes, each rank's rail peer
        (:func:`fabric._exchange.held_counts`). Each dispatches ``tokens_per_rank`` tokens and gets their
        combine back; the others hold none, but hold experts, so they receive in the dispatch
        and send in the combine. ``None`` (default): every EP rank.

    Returns
    -------
    MoEExchange

    Raises
    ------
    SpecError
        Unknown kernel, routing, runtime, transport or chip, ``ep`` with more ranks than
        experts or that fills nodes unequally, bytes that are not positive, ``sources``
        that is neither an int from 1 to the EP ranks nor their positions each once (or
        given beside a sequence of counts), a ``tokens_per_rank`` that is neither an int >= 1
        nor one count per EP rank (ints >= 0, not all 0); a
        ``nic_background`` that is not finite bytes/s >= 0, that the collective kernel
        is given, or that fills the NIC of a rank that uses the network; a
        ``tokens_per_rank`` whose exchange moves more than 2**63 - 1 bytes in a phase (the
        all-to-allv total :func:`analysis.cost` takes, ``fabric._schema.MAX_BYTES``).
    RoutingError
        A kernel that cannot leave its load/store domain (``one-sided``) given
        ranks in several, or a rank without a NIC that must use one.
    TypeError
        An argument of the wrong kind: ``l2_flushed`` that is no flag, ``adaptive_routing``
        neither a flag nor None (``"yes"`` is not read by its truth), ``transport`` neither
        a str, a :class:`fabric.Transport` nor None.

    Examples
    --------
    >>> import topologies
    >>> r = moe_exchange(topologies.build("nvl72"), "deepseek-v3", 64, 8, kernel="one-sided",
    ...                  dispatch_bytes=1, combine_bytes=2)
    >>> r.nodes, r.dispatch_phase.bottleneck      # one NVLink domain, its links the limit
    (1, 'scale-up')
    >>> r.dispatch == r.dispatch_phase.fixed + r.dispatch_phase.transfer + r.dispatch_phase.local_copy
    True
    """
    fabric = fabric_arg(fabric)
    kern = exchange_kernel(kernel)
    background = check_background(nic_background)
    check_collective(collective)
    transport = transport_arg(transport)
    adaptive_routing = flag_of(adaptive_routing, "adaptive_routing", optional=True)
    if adaptive_routing is None:
        adaptive_routing = EXCHANGE_ADAPTIVE_ROUTING.value
    if background > 0 and kern.dedup == "collective":
        raise SpecError(f"nic_background is priced on an exchange kernel's own network stage; "
                        f"kernel {kern.name!r} runs through the collectives model, which has no "
                        f"background traffic")
    l2_flushed = flag_of(l2_flushed, "l2_flushed")
    m = model_config(model)
    if runtime is not None:
        get_runtime(runtime)      # an unknown name is refused even where it goes unused
    if chip is not None:
        chip_spec(chip)
    ranks = _resolve_ep(fabric, ep)
    require_joined(fabric, [fabric.endpoints[int(r)] for r in ranks])  # names chips cut off
    n_ep = len(ranks)
    E, k, h = m.routed_experts, m.experts_per_token, m.hidden
    if n_ep > E:
        raise SpecError(f"ep={n_ep} ranks but {m.name} has only {E} routed experts")
    # each EP rank's tokens (0: it holds none), one form for both spellings: the rule of
    # "Ranks that hold tokens" (module docstring)
    held = held_counts(tokens_per_rank, n_ep, sources, "tokens_per_rank")
    tokens = max(held)            # the busiest rank's own tokens: its loops, the grids
    sent = sum(held)              # every rank's: what a rank receives
    sources = sum(1 for c in held if c)
    name, mm = parse_routing(routing)
    routing_name = name if mm is None else f"{name}:{mm}"
    dom = _domains(fabric)[ranks]
    labels, counts = np.unique(dom, return_counts=True)
    nodes = len(labels)
    if nodes > 1 and not kern.scale_out:
        # a kernel's reach, not a missing route: every pair may have one (serving skips the
        # layout with this reason; a RoutingError read as an unreached pair); before the
        # routing model's equal fill, which cannot matter to a kernel that runs in none
        raise NotApplicableError(f"kernel {kern.name!r} works within one load/store domain, "
                                 f"but the {n_ep} EP ranks span {nodes} of {fabric.name}"
                                 f"{_split_by_failures(fabric, ranks)}")
    if len(set(counts.tolist())) != 1:
        raise SpecError(f"the {n_ep} EP ranks fill their {nodes} load/store domains unequally "
                        f"({sorted(counts.tolist())} ranks); the routing model needs equal nodes"
                        f"{_split_by_failures(fabric, ranks)}")
    if name == "node-limited" and E % nodes:
        raise SpecError(f"node-limited routing needs the {E} experts to split over the "
                        f"{nodes} nodes")
    if name == "grouped" and kern.dedup not in ("rank", "collective"):
        raise SpecError(f"routing 'grouped' is priced for kernels that send one copy per "
                        f"(token, rank) (one-sided, all-to-allv); kernel {kern.name!r} sends one "
                        f"per {'(token, expert)' if kern.dedup == 'expert' else '(token, node)'}")
    payloads_d = _payloads(dispatch_bytes, h, "dispatch_bytes")
    b_d = sum(payloads_d) + kern.message_header
    b_c = _token_bytes(combine_bytes, h, "combine_bytes")
    p_rank, p_node = expert_reach(E, k, n_ep, nodes, routing)
    # one limit with cost(): the exchange's all-to-allv total (each rank's copies to every
    # other rank) within the int64 a collective carries, named before any kernel's counts
    total = sent * p_rank * (n_ep - 1) * max(b_d, b_c)
    if total > MAX_BYTES:
        few = "" if sources == n_ep else f" ({sources} holding tokens)"
        given = f"={tokens}" if is_int(tokens_per_rank) else f" summing to {sent}"
        raise SpecError(f"tokens_per_rank{given} over {n_ep} EP ranks{few} moves {total:.3g} "
                        f"bytes in a phase, more than the 2**63 - 1 bytes (an int64) a collective "
                        f"carries")
    per_rank = np.array(held, dtype=float)       # exact below 2**53 tokens
    copies_rank = tokens * n_ep * p_rank
    copies_node = tokens * nodes * p_node
    copies_expert = float(tokens * k)
    # what one EP rank receives in the dispatch (the copies it holds experts for), expected:
    # (token, expert) copies, (token, rank) copies; every rank alike (every source spreads
    # its copies evenly over the ranks)
    received_expert = received_copies(sent, k, n_ep)
    received_rank = sent * p_rank
    if name == "grouped":
        # its receivers differ (one group takes a batch that ep // k does not divide): the
        # busiest one's, own copies included; one copy per (token, rank) is one per expert
        received_expert = received_rank = float(
            _grouped_pairs(k, np.array(held), diagonal=True).sum(axis=0).max())

    ls = get_transport("loadstore")
    ls_payload = ls.max_payload / (ls.max_payload + ls.header)
    nic_rate = EXCHANGE_NIC_EFFICIENCY.value     # achieved / line rate, headers included
    rdma_only = False
    if transport is not None and kern.dedup != "collective":
        if not isinstance(transport, str):
            # a kernel prices its own paths from the fabric's transports: only a name says one
            raise SpecError(f"kernel {kern.name!r} picks its own paths: transport must be "
                            f"'loadstore', 'rdma', 'native' or None, got "
                            f"{show_value(transport)}")
        if transport == "rdma" and not kern.forwarding and kern.scale_out:
            rdma_only = True          # peer-to-peer over NVLink switched off (pure RDMA)
        elif transport == "loadstore" and nodes > 1:
            raise RoutingError(f"transport='loadstore' cannot reach the {nodes} load/store "
                               f"domains the {n_ep} EP ranks span")
        elif transport == "rdma":
            raise SpecError(f"kernel {kern.name!r} cannot run over RDMA alone (it forwards over "
                            f"the scale-up fabric, or has no RDMA path)")
    up, net = _matrices(kern, ranks, dom, p_rank, p_node, k, per_rank, b_d, rdma_only,
                        grouped=name == "grouped")

    params = kern.parameters()
    if nodes > 1 or rdma_only:
        first = further = EXCHANGE_SYNC["base"].value + EXCHANGE_SYNC["network"].value
    else:
        # one load/store domain: the symmetric-memory runtime's one-sided kernel (one place)
        floor = _kernel_floor(fabric)
        params = params + (floor,)
        first, further = floor.value, 0.0
        if max(kern.syncs) > 1:
            further, used = _further_barrier(fabric, ranks)
            # the kernel's own steps before its flag goes out (DeepEP: the own slot's atomic,
            # the peer pointer's reload; review S23-R9)
            lat = EXCHANGE_LATENCY[runtime_arch(fabric)]
            further += sum(c * lat[n].value for n, c in kern.sync_steps)
            used = used + tuple(lat[n] for n, _ in kern.sync_steps)
            params = params + tuple(p for p in used if p not in params)
    if kern.dedup == "collective":
        if n_ep < 2:
            t_d = t_c = 0.0
        else:
            pair = (_grouped_pairs(k, per_rank) if name == "grouped"
                    else _copy_pairs(kern.dedup, k, per_rank, p_rank))
            t_d = _collective_phase(fabric, ranks, pair * b_d, runtime, transport, collective)
            t_c = _collective_phase(fabric, ranks, pair.T * b_c, runtime, transport, collective)
        zero = {"scaleup": 0.0, "network": 0.0, "local_copy": 0.0, "scaleup_bytes": 0.0, "nic_bytes": 0.0}
        ph_d = ExchangePhase(fixed=0.0, transfer=t_d, time=t_d, bottleneck="collective", **zero)
        ph_c = ExchangePhase(fixed=0.0, transfer=t_c, time=t_c, bottleneck="collective", **zero)
        return MoEExchange(kernel=kern.name, routing=routing_name, ep=n_ep, nodes=nodes,
                           tokens_per_rank=tokens, dispatch_bytes=b_d, combine_bytes=b_c,
                           dispatch=t_d, combine=t_c,
                           dispatch_phase=ph_d, combine_phase=ph_c, copies_rank=copies_rank,
                           copies_node=copies_node, copies_expert=copies_expert, link_bytes={},
                           nic_bytes={}, parameters=params)

    def stages(up, net):
        up_t, up_b, links = _scaleup_time(fabric, ranks, up, ls_payload)
        net_t, net_b, nics = _network_time(fabric, ranks, net, nic_rate, background)
        if net_t > 0:
            # An oversubscribed or degraded network is busier than its ports. On a
            # non-blocking one the two agree to rounding, and the port figure is kept. The
            # background is known at the ports only (its path through the network is not).
            routed = _routed_network_time(fabric, ranks, net, nic_rate)
            if routed > net_t * (1 + 1e-9):
                net_t = routed
        return up_t, up_b, net_t, net_b, links, nics

    up_t, up_b, net_t, net_b, links, nics = stages(up, net)
    # the combine sends the copies back: the transposed matrices (when every rank holds
    # as many tokens they are symmetric, the dispatch's own), at the combine's bytes
    up_tc, up_bc, net_tc, net_bc = (stages(up.T, net.T)[:4] if sent != tokens * n_ep
                                    else (up_t, up_b, net_t, net_b))
    scale = b_c / b_d
    copy_d = copy_c = 0.0
    c = chip if chip is not None else fabric.chip     # None: no HBM known, no copy priced
    if (kern.local_copy or kern.staging_copy or kern.send_staging) and c is not None:
        hbm = chip_spec(c).hbm_bandwidth
        # a source's own tokens' copies (sent in the dispatch, back in the combine) and
        # what a rank receives in the dispatch (the copies its experts hold); a source
        # does both its own part and a receiver's
        own, recv = ((copies_expert, received_expert) if kern.dedup == "expert"
                     else (copies_rank, received_rank))
        if kern.local_copy:
            copy_d = 2 * recv * b_d / hbm          # read the receive buffer, write out
            copy_c = (own + tokens) * b_c / hbm    # read the k partials, write the sum
        if kern.send_staging:
            copy_d += 2 * tokens * b_d / hbm      # own tokens -> symmetric send buffer
        if kern.staging_copy:
            copy_c += 2 * recv * b_c / hbm         # MoE output -> symmetric buffer
            # a low-precision combine casts a wider MoE output there: the extra bytes read
            wider = kern.staging_source_bytes * h - b_c
            if wider > 0:
                copy_c += recv * wider / hbm
        params = params + (Parameter(f"{chip_spec(c).name}.hbm_bandwidth", hbm, "B/s",
                                     chip_spec(c).source),)
    if kernel_gap is None:
        import analysis  # the decode model's Parameter, through the package
        gap = analysis.GRAPH_KERNEL_OVERHEAD.value
        params = params + (analysis.GRAPH_KERNEL_OVERHEAD,)
    else:
        gap = check_number("kernel_gap", kernel_gap, unit=" seconds")
    gaps_d = max(kern.kernels[0] - 1, 0) * gap
    gaps_c = max(kern.kernels[1] - 1, 0) * gap
    # one block's serial chain, at the latencies of the GPU generation that runs it
    arch = runtime_arch(fabric if chip is None else types.SimpleNamespace(chip=chip_spec(chip)))
    # a dispatch grid the code sets from the device's SMs, where the chip's count is known
    sms = chip_spec(c).sms if c is not None and kern.send_grid_sms else 0
    if sms:
        params = params + (Parameter(f"{chip_spec(c).name}.sms", sms, "",
                                     chip_spec(c).sms_source),)
    if kern.reduce_stages and kern.local_copy and c is not None:
        # one receiving group's sum of a token, its copies loaded whole into a few stages: a
        # floor under the chip-wide receive copy, not added to it (ExchangeKernel.reduce_stages)
        floor, used = kern.receive_floor(arch, int(k), l2_flushed)
        copy_c = max(copy_c, floor)
        params = params + tuple(p for p in used if p not in params)
    chain = [0.0, 0.0]
    # the busiest token's distinct ranks (own included, and not), per phase: the dispatch
    # ends in a barrier that waits for every EP rank's last block (every token sent); the
    # combine's blocks pull the rank's own tokens (the busiest rank's) and nothing waits after
    busiest = [(0.0, 0.0), (0.0, 0.0)]
    serial_work = any(kern.chain) or any(kern.interleaved_chain)
    if serial_work or kern.block_per_token:
        busiest = ([_grouped_busiest(int(k), n_ep, held)] * 2 if name == "grouped" else
                   [_busiest(int(E), int(k), n_ep, nodes, routing_name, tokens, n)
                    for n in (sent, tokens)])
    # the combine's blocks send the copies their rank received (expected) in turn; across
    # the network every copy's signal is a NIC post. The grid is the kernel's launch, sized
    # by the tokens a rank may hold (pplx: maxNumTokens), the same on every rank.
    blocks_c = min(kern.combine_blocks, E * tokens)
    serial = serial_copies(received_expert, blocks_c) if kern.combine_blocks else 0
    posted = (kern.combine_posts(received_expert, blocks_c,
                                 np.arange(n_ep) if rdma_only else dom)
              if kern.combine_blocks else 0)
    # one block's serial work between the copies it moves: max with the links' time
    inter = [0.0, 0.0]
    # a put's warp copy of the phase's message to a load/store peer: its dependent rounds
    put_rounds = [math.ceil(b / kern.put_vector) if kern.put_vector else 0 for b in (b_d, b_c)]
    if serial_work:
        # the count warp's walk over the experts (a signal across the network is a NIC post;
        # over RDMA alone every other rank is across it)
        remote, passes = kern.count_walk(E, k, tokens, np.arange(n_ep) if rdma_only else dom)
        # the dispatch's receive part: every block walks the received counts' slots
        walk_slots, walk_tokens = kern.receive_walk(E, k, held, n_ep)
        # ... leaving each local expert but the last by a longer path
        wraps = kern.walk_wraps(E, n_ep)
        # ... and copies each of its received tokens out in rounds of its threads' loads
        token_rounds = walk_tokens * max(kern.receive_rounds(sum(payloads_d)) - 1, 0)
        # the combine's receive part: each block sums its tokens' k copies pass by pass
        reduce_loads = kern.receive_reduce(E, k, tokens, h)
        # a block's staging copy of the phase's message: its dependent rounds beyond the first
        stage_rounds = [math.ceil(b / v) - 1 if v else 0
                        for b, v in zip((b_d, b_c), kern.stage_vector)]
        stage_rounds = stage_rounds or [0, 0]
        # the dispatch's send loop: the block holding the last token walks every earlier one
        walked = kern.send_walk(tokens)
        # the dispatch's later tokens per block, each after the release of the one before
        waves = kern.send_waves(E, tokens, sms)
        for i, parts in enumerate((payloads_d, (b_c,))):
            # the kernel copies payload by payload, each in its own rounds
            rounds = sum(_rounds(kern, p) for p in parts) if kern.pull_threads else 0
            for out, between in ((chain, False), (inter, True)):
                out[i], used = kern.chain_latency(i, arch, busiest[i][0], rounds, l2_flushed,
                                                  ep=n_ep, remote_signals=remote,
                                                  serial_copies=serial, posted_copies=posted,
                                                  walk_slots=walk_slots,
                                                  walk_tokens=walk_tokens,
                                                  reduce_loads=reduce_loads,
                                                  loadstore=nodes == 1 and not rdma_only,
                                                  put_rounds=put_rounds[i],
                                                  stage_rounds=stage_rounds[i],
                                                  walked_tokens=walked if i == 0 else 0,
                                                  further_waves=waves if i == 0 else 0,
                                                  walk_token_rounds=token_rounds,
                                                  interleaved=between, payloads=len(parts),
                                                  slots=k, walk_wraps=wraps,
                                                  count_passes=passes if i == 0 else 0)
                params = params + tuple(p for p in used if p not in params)
    # one peer round trip: a load pulled from a peer, or the acknowledgement of pushed stores
    peer_trip = 0.0
    fence = [0.0, 0.0]
    in_domain = nodes == 1 and not rdma_only
    # a combine whose blocks send their copies in turn fences each copy to a load/store peer,
    # across the network too (there its signal then goes to the NIC)
    copy_fenced = bool(kern.combine_blocks and kern.release_fence[1] and not rdma_only
                       and n_ep > nodes)
    if n_ep > 1 and (kern.pull_threads or (in_domain and any(kern.release_fence))
                     or copy_fenced):
        access, used = peer_access_latency(arch)
        params = params + tuple(p for p in used if p not in params)
        peer_trip = _round_trip(fabric, ranks) + access
        if in_domain:
            fence = [peer_trip if f else 0.0 for f in kern.release_fence]
            # a dispatch block's later tokens each wait for the release of the one before
            fence[0] *= 1 + kern.send_waves(E, tokens, sms)
        if copy_fenced:
            # block 0's sync signal is one NIC post more on its chain across the network
            lead = 0.0
            if posted > serial:
                lead = (posted - serial) * (
                    kern.chain_latency(1, arch, 0, 0, l2_flushed, posted_copies=1,
                                       interleaved=True)[0]
                    - kern.chain_latency(1, arch, 0, 0, l2_flushed, interleaved=True)[0])
            # the copies' fences run between the block's copies (they replace the one release);
            # before each, the put's warp copy: one dependent L2 load per put_vector bytes, and
            # the cycles its compiled loop schedules per round beyond the load (put_cycles,
            # session 22)
            fence[1] = 0.0
            per_copy = peer_trip
            if kern.put_vector:
                hit = EXCHANGE_LATENCY[arch]["l2_hit"]
                per_copy += put_rounds[1] * hit.value              # its put's warp copy
                used_p = (hit,)
                if kern.cycle("put_cycles", 1):
                    cycle = EXCHANGE_LATENCY[arch]["cycle"]
                    per_copy += put_rounds[1] * kern.cycle("put_cycles", 1) * cycle.value
                    used_p = (hit, cycle)
                params = params + tuple(p for p in used_p if p not in params)
            if kern.cycle("copy_cycles", 1):
                # after the fence, the signal's peer pointer again (the fence invalidated L1),
                # and the cycles of the copy's put path and signal (session 23)
                hit, cycle = EXCHANGE_LATENCY[arch]["l2_hit"], EXCHANGE_LATENCY[arch]["cycle"]
                per_copy += hit.value + kern.cycle("copy_cycles", 1)[2] * cycle.value
                params = params + tuple(p for p in (hit, cycle) if p not in params)
            inter[1] += _copy_fences(received_expert, blocks_c,
                                     _peer_sources(dom, per_rank) / sent, per_copy, lead)
    # one block per token: it moves its token's remote copies at one block's rate
    block = [0.0, 0.0]
    if kern.block_per_token and n_ep > 1 and in_domain:
        rate = EXCHANGE_BLOCK_RATE[arch]
        params = params + (rate,)
        # the slowest block: the busiest token's remote ranks
        block = [busiest[0][1] * b_d / rate.value, busiest[1][1] * b_c / rate.value]
    # On a multi-path network an RDMA atomic after writes on one queue pair waits for them:
    # one network round trip each (two NCCL network steps), on the busiest remote queue pair,
    # and the last one after the network's last byte (DeepEP PR #437; the named assumption
    # EXCHANGE_ADAPTIVE_ROUTING)
    qp_wait = [0.0, 0.0]
    if adaptive_routing and kern.qp_signals and net_t > 0:
        step = EXCHANGE_SYNC["network"]
        trip = 2 * step.value
        messages = float(net.max()) / b_d           # expected messages to one remote peer
        # the busiest pair's sender (the dispatch's row, the combine's column)
        src, dst = np.unravel_index(int(np.argmax(net)), net.shape)
        for i, (t, sender) in enumerate(((net_t, src), (net_tc * scale, dst))):
            n = kern.qp_atomics(i, messages)
            if n:
                own = _qp_own_time(kern, i, fabric, ranks[sender], float(net.max()) * (
                    scale if i else 1.0), nic_rate)
                qp_wait[i] = max(t + trip, own + n * trip)
        params = params + tuple(p for p in (EXCHANGE_ADAPTIVE_ROUTING, step) if p not in params)
    fixed_d = _syncs(kern.syncs[0], first, further) + gaps_d + chain[0] + fence[0]
    fixed_c = _syncs(kern.syncs[1], first, further) + gaps_c + chain[1] + fence[1]
    ph_d = _phase(kern, "dispatch", fixed_d, up_t, up_b, net_t, net_b, copy_d, gaps=gaps_d,
                  chain=chain[0], fence=fence[0], block=block[0], interleaved=inter[0],
                  queue_pair=qp_wait[0])
    pull = pull_trip = 0.0
    if kern.pull_threads and n_ep > 1:
        # each round: one round trip, one more per later batch of its slot loads that holds
        # a valid slot (the slowest block's token), then its bytes at the block's rate
        late, batches = 0.0, kern.late_batches(k, b_c / h, arch)
        fetch = 0.0
        if batches:
            late = _late_rounds(_late_trips(E, k, n_ep, nodes, routing_name, batches), tokens)
            # round 1's later batch reads its slots' pointer rows for the first time (rows no
            # earlier slot holds): one constant L1.5 fetch before its peer loads (session 21)
            const = EXCHANGE_LATENCY[arch]["const_l15"]
            fetch = late * const.value
            params = params + tuple(p for p in (const,) if p not in params)
        # the loop's other dependent loads on each round's critical chain (session 22)
        reads, used = kern.round_read_latency(k, b_c / h, arch, _rounds(kern, b_c),
                                              busiest[1][0], late)
        params = params + tuple(p for p in used if p not in params)
        # a batch whose valid slots are all the token's own rank waits for a local load
        # (session 23), not a peer round trip
        hit = EXCHANGE_LATENCY[arch]["l2_hit"]
        wait = _round_wait(E, k, n_ep, nodes, routing_name, batches,
                           tuple(held) if name == "grouped" else tokens, peer_trip,
                           hit.value)
        if wait is None:
            wait = peer_trip * (1.0 + late)
        else:
            params = params + tuple(p for p in (hit,) if p not in params)
        pull = _rounds(kern, b_c) * wait + fetch + reads + block[1]
        pull_trip = peer_trip
    ph_c = _phase(kern, "combine", fixed_c, up_tc * scale, up_bc * scale, net_tc * scale,
                  net_bc * scale, copy_c, pull, gaps=gaps_c, chain=chain[1], fence=fence[1],
                  trip=pull_trip, interleaved=inter[1], queue_pair=qp_wait[1])
    return MoEExchange(kernel=kern.name, routing=routing_name, ep=n_ep, nodes=nodes,
                       tokens_per_rank=tokens, dispatch_bytes=b_d, combine_bytes=b_c,
                       dispatch=ph_d.time,
                       combine=ph_c.time, dispatch_phase=ph_d, combine_phase=ph_c,
                       copies_rank=copies_rank, copies_node=copies_node,
                       copies_expert=copies_expert, link_bytes=links,
                       nic_bytes=nics, parameters=params)
