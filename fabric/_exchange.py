"""MoE exchange kernels: how software moves tokens to their experts and back (DESIGN.md s.7, layer 3).

An expert-parallel MoE layer sends each token to the ranks that hold its
routed experts (**dispatch**) and brings the expert outputs back (**combine**).
Published kernels differ in *what* they send and *over which link*, and that
difference, not the fabric alone, decides their time. An
:class:`ExchangeKernel` is a named, sourced profile of one such kernel family;
the cost is evaluated in :func:`analysis.moe_exchange`. Every number is a
:class:`~fabric.Parameter` with unit and source (:meth:`ExchangeKernel.parameters`).

Profiles (:data:`EXCHANGE_KERNELS`)
-----------------------------------
``"deepep-normal"``
    DeepEP's normal (high-throughput) kernels (deepseek-ai/DeepEP,
    ``csrc/kernels/legacy/internode.cu``, ``intranode.cu``; ``docs/legacy.md``).
    **Hierarchical**: across nodes a token crosses the network **once per
    destination node** (to the GPU with the same local index, its rail peer),
    then that GPU forwards it over NVLink to the local GPUs holding its experts;
    tokens bound for the sender's own node never touch the NIC. Inside one node
    (intranode kernels) a token goes once to each destination GPU over NVLink.
    RDMA and NVLink stages are pipelined through chunked ring buffers, so the
    slower stage sets the time. Each phase runs a notify kernel first (the
    dispatch's counts, or with a cached handle only the buffer clean-up; the
    combine's ``cached_notify_combine`` / ``cached_notify``), which synchronises
    the ranks twice, before and after cleaning: two kernels and two
    synchronisations per phase (DeepEP ebfe47e ``csrc/deep_ep.cpp``,
    ``csrc/kernels/intranode.cu``, ``internode.cu``; session 16). The legacy
    table was timed with CUDA events around each call (``tests/utils.py``
    ``bench`` up to 2025-07; later tests time the kernels named ``dispatch``
    and ``notify`` apart with ``bench_kineto``), so both kernels are in it.
``"deepep-low-latency"``
    DeepEP's low-latency kernels (``csrc/kernels/legacy/internode_ll.cu``):
    **every (token, expert) copy** is its own message straight to the expert's
    rank (expert-major receive buffer: no de-duplication per rank or node and
    no NVLink forwarding); a copy to a GPU reachable by load/store goes over
    NVLink (``nvshmemi_get_p2p_ptr`` succeeds), every other over RDMA from the
    sender's own NIC. One kernel per phase with a **send** part then a
    **receive** part that waits for every peer's count and copies the received
    tokens out of the receive buffer into the packed expert layout (dispatch)
    or reads the ``k`` copies and reduces them (combine): local HBM traffic
    after the network part. A dispatch message carries the FP8 token, its
    scales and 16 B of source info (``tests/legacy/test_low_latency.py``:
    ``hidden + hidden/128*4 + 16`` bytes).
``"deepep-low-latency@d28bd67"``
    ``"deepep-low-latency"`` (DeepEP de8cfca, 2025-06-05) as deep_ep 1.2.1+d28bd67
    (2026-04-29; SGLang 0.5.12's image, the build of NVIDIA's collector rows) builds it: the
    dispatch's grid takes ``ceil(E / ceil(E / SMs))`` blocks (2 experts a block for 256
    experts: one token a block up to 128 tokens), and its combine sends and receives through
    shared memory with TMA (#299, c874cb7, 2025-07-14: a sending warp loads its 2,048-B chunks
    two at a time; #345, c5facf5, 2025-08-07: the receive loads each of a token's copies whole
    into one of 3 stages).
``"ncclep-low-latency"``
    NVIDIA NCCL EP's low-latency kernels (NVIDIA/nccl ``contrib/nccl_ep``, adapted from
    DeepEP's): ``"deepep-low-latency"`` with the steps its compiled kernel takes instead
    before the first byte and after the last: its peer pointer is NCCL's window lookup, three
    dependent loads where DeepEP loads one heap base (the dispatch's copies, its count, the
    combine's copies); its combine sends and receives through shared memory with TMA (DeepEP's
    code since #299 and #345, which NCCL EP adapts): a sending warp loads its chunks two at a
    time, and the receive loads each of a token's copies whole into one of 3 stages.
``"one-sided"``
    Symmetric-memory kernels over the scale-up fabric, TensorRT-LLM's
    NVLinkOneSided class (NVIDIA/TensorRT-LLM
    ``docs/source/blogs/tech_blog/blog18``): dispatch **pushes** each token
    **once per destination rank** into the peer's symmetric receive buffer
    (rank-major, duplicates on one rank skipped) and ends with one flag
    barrier; combine starts with one flag barrier and **pulls** the ``k``
    partial outputs from the peers and reduces them. Only within one load/store
    domain. This is what Co-Fabric's symmetric memory offers. The pull is a chain
    of dependent remote loads (``moeA2ACombineKernel``: one thread block of 256
    threads per token loads one 16-byte vector per thread from each of the ``k``
    peers, reduces and stores, then loops over the token): a combine takes at
    least ``ceil(bytes per token / (256 x 16 B))`` round trips over the fabric
    (:attr:`ExchangeKernel.pull_threads`, :attr:`ExchangeKernel.pull_vector`). As
    compiled, a round of a top-8 token is two dependent round trips when its last slot
    holds a rank of its own: the loads of slots 0-6 go out together, slot 7's only after
    they return (:attr:`ExchangeKernel.late_pulls`; on Hopper slots 4-7's go out after slots
    0-3's return).
``"one-sided-1.3"``
    TensorRT-LLM 1.3's one-sided kernels: ``"one-sided"`` with the combine loop of its
    low-precision combine (NVIDIA/TensorRT-LLM PR #11844), which issues a round's loads in
    other batches: a BF16 round waits for slot 0's load before five of the others (two
    trips when any of slots 1, 4-7 is valid), an FP8 round for slot 0's and then for slots
    1-3's (up to three trips).
``"pplx"``
    Perplexity's pplx-kernels (perplexityai/pplx-kernels): NVSHMEM kernels that
    send a token **once per (token, expert)** directly, into the expert's slot on
    its rank (NVLink inside a node, RDMA across; no per-rank de-duplication, no
    forwarding), dispatch and combine each one cooperative launch with a send and a
    receive part. The NVSHMEM kernels (every published pplx measurement, and the
    multi-node path) stage each token through a local symmetric send buffer in HBM
    before they put it (:attr:`ExchangeKernel.send_staging` for the dispatch's own
    tokens, :attr:`ExchangeKernel.staging_copy` for the combine's received copies).
``"all-to-allv"``
    The exchange as a collective: a per-rank de-duplicated all-to-allv costed
    by the collectives model (``analysis.cost``) with its runtime.

Fixed costs
-----------
Each phase pays its kernels' synchronisation (``syncs``). Inside one load/store
domain these kernels are one-sided kernels over a symmetric heap, and a phase's
launch and first barrier cost what the ``symmetric-memory`` runtime charges such a
kernel, its ``kernel_floor`` (NVIDIA/nccl issue 1940: about 2.3 us on Hopper, 3 us
on Blackwell, for a kernel that stores to its NVLink peers and synchronises once;
the concept lives once, in :mod:`fabric._runtime`); a further barrier is one
store-and-spin handoff, the runtime's own rule (``analysis._runtime_cost.flag_barrier``:
the largest one-way path + the GPU side of a peer load). A synchronisation that crosses the network
(NVSHMEM/IBGDA flags) is costed as NCCL's tuner costs one step of its flag-based
LL protocol over the network (NVIDIA/nccl ``src/graph/tuning.cc``: base latency
6.6 us for Ring/LL plus 2.7 us for the NET hop; :data:`EXCHANGE_SYNC`, read from
the ``nccl`` runtime profile): a named assumption, since no one-sided kernel over
the network publishes its barrier's cost.

Atomics after writes on one queue pair
--------------------------------------
A GPU-initiated kernel that posts an RDMA atomic after RDMA writes on the same RC queue pair
(NVSHMEM's put-with-signal: a write, then its signal's atomic; DeepEP's low-latency count or
flag after an expert's tokens) relies on the queue pair's ordering for the signal to follow
the data. On multi-path capable adapters (ConnectX-7, BlueField-3) over a multi-path fabric
(InfiniBand adaptive routing, multi-path Ethernet) the adapter does not issue such an atomic
until every write in flight on that queue pair has completed: one network round trip per
atomic that follows writes (deepseek-ai/DeepEP pull request #437). Priced where
:attr:`ExchangeKernel.qp_signals` names the pattern, under the named assumption
:data:`EXCHANGE_ADAPTIVE_ROUTING` (``moe_exchange(adaptive_routing=False)`` switches it off),
the round trip being two of :data:`EXCHANGE_SYNC`'s network steps (no new figure): the phase's
busiest remote queue pair then takes at least its atomics after writes times the round trip,
and the last of them still waits one round trip after the network's last byte. A queue pair
issues its work requests in order, so the writes behind a held atomic wait for it: where each
message is a write followed by its atomic (``"each"``), the queue pair's own writes at its
NIC's achieved rate add to its round trips (session 32; with ``"last"`` the network's time
plus one round trip bounds them already).

NIC rate
--------
A kernel that crosses the network moves its payload through each NIC at
:data:`EXCHANGE_NIC_EFFICIENCY` of the NIC's line rate (0.94: 47 of 50 GB/s per
400 Gb/s NDR NIC, NVIDIA's figure for what NCCL reaches and what NVSHMEM's
``shmem_put_bw`` measures), the same for every kernel.

Serial chains
-------------
Inside a phase each thread block works through a chain of memory operations that
cannot overlap, each waiting for the one before. For ``one-sided`` the chain is
counted from TensorRT-LLM's kernels (:attr:`ExchangeKernel.chain`) and priced with
published latencies of the hardware (:data:`EXCHANGE_LATENCY`, per GPU generation):
the dispatch loads the token's expert ids (HBM: the benchmark flushes L2 before
every dispatch), claims a slot on each destination rank with ``atomicAdd`` one
after the other (thread 0; each result is stored before the next atomic issues),
copies the token in rounds of 256 x 16 B, each round a load from HBM before its
stores, then the last block counts itself done (one more atomic), reads the send
counters (L2) and the sanitize kernel reads the receive counters (L2); the combine
reads the receive counters and stages the MoE output in rounds of L2 loads, then
pulls each round from the peers, a peer load each
(:func:`peer_access_latency`: the remote side of a peer load, added to the
fabric's own round trip). Both barriers walk the EP ranks with one warp (lane ``l``
takes ranks ``l``, ``l + 32``, ...): beyond 32 ranks each further pass
(:func:`lane_passes`) adds a counter load (dispatch) and a flag poll (both phases), one
L2 latency each. Before each payload's first load the dispatch reads every destination's
pointer from its kernel parameters (constant memory), each after the one before (as
compiled; on Hopper the first two together): the first payload's from the L1.5 constant
cache, the later payloads' from the SM's constant L1 (``const_l15``, ``const_l1``:
:meth:`ExchangeKernel.pointer_loads`); the combine one L1.5 fetch before its first pulled
round. The chain is charged once per phase (one block's
critical path; the other blocks overlap it), in its fixed part.

Between its loads a chain also spends the cycles its compiled code schedules (stall counts
read from the kernel's SASS, one SM cycle each, ``EXCHANGE_LATENCY[arch]["cycle"]``). Each
phase of a kernel keeps them in its own cycle table (:attr:`ExchangeKernel.cycles`: name ->
cycles, e.g. the one-sided dispatch's ``claim_cycles`` = 125 a top-k slot); the names, what
each needs and the chain steps that charge it (``("cycle", "claim_cycles")``: ``slots`` times
the count) are one table, :data:`_CYCLE_COUNTS`, so a new count is an entry there and in the
phase's table.

Release fences
--------------
A phase that pushes stores into its peers' memory and then releases them before
raising its flag (:attr:`ExchangeKernel.release_fence`: TensorRT-LLM's dispatch
issues ``fence.release.sys`` right after storing its send counts into the peers'
``recv_counters``; DeepEP's NVLink paths and pplx's intranode kernels publish
counts, flags and channel tails with release stores after their copies) cannot
raise the flag before the peers
have acknowledged those stores: **one peer round trip**, priced as one pulled
round is (the fabric's round trip plus :func:`peer_access_latency`; assumption:
a store's acknowledgement costs what a load's round trip costs). The kernel floor
does not contain it: its kernel (NCCL's symmetric small all-reduce,
``AllReduce_AGxLL_R``) sends LL words that carry their own flag and never waits
for an acknowledgement. Charged where the phase's handshake is the load/store
kernel floor; across the network :data:`EXCHANGE_SYNC` stands for the whole
handshake.

Block rate
----------
A kernel that gives each token one thread block (:attr:`ExchangeKernel.block_per_token`:
TensorRT-LLM's one-sided kernels) cannot move a token faster than one block moves
bytes over the fabric, :data:`EXCHANGE_BLOCK_RATE` (NCCL's per-block figure for its
symmetric load/store kernels, measured on NCCL's 512-thread blocks and taken per block for
TensorRT-LLM's 256-thread ones: an assumption, stated in the Parameter). The dispatch's
block pushes its token to every remote destination at that rate (posted stores; the release
fence pays the round trip); each pulled combine round costs one round trip plus its bytes
at that rate. It matters at a few tokens, where one block's token outlasts the links' time.
A phase ends with its slowest block, so the per-token counts (the slot atomics per
destination rank in the serial chain, the remote copies at the block rate) are those of the
**busiest** token (``analysis._moe_exchange.busiest_token``: the expected largest count
over the phase's tokens under the routing), not of the average one.

The facts and their sources are collected in ``docs/sources.md s.7``.

Examples
--------
>>> k = exchange_kernel("deepep-normal")
>>> k.dedup, k.forwarding
('node', True)
>>> exchange_kernel("one-sided").scale_out
False
>>> exchange_kernel("carrier-pigeon")
Traceback (most recent call last):
...
fabric.SpecError: unknown MoE exchange kernel 'carrier-pigeon'; known: all-to-allv, deepep-low-latency, deepep-low-latency@d28bd67, deepep-normal, ncclep-low-latency, one-sided, one-sided-1.3, pplx
"""

import collections
import collections.abc
import dataclasses
import math

from ._errors import SpecError
from ._params import Parameter
from ._runtime import runtime
from ._tech import link_tech
from ._units import (
    check_choice,
    check_count,
    check_number,
    flag_of,
    is_bool,
    is_int,
    is_real,
    items_of,
    kind_error,
    lookup,
    sequence_of,
    show_value,
    text_of,
    unknown_fault,
)

__all__ = ["EXCHANGE_BLOCK_RATE", "EXCHANGE_KERNELS", "EXCHANGE_LATENCY", "EXCHANGE_NIC_EFFICIENCY",
           "EXCHANGE_SYNC", "ExchangeKernel", "exchange_kernel", "peer_access_latency"]

#: NCCL's own tuner constants, held once in the ``nccl`` runtime profile (:mod:`fabric._runtime`).
_NCCL = {p.name: p for p in runtime("nccl").parameters()}

#: Seconds per cross-rank synchronisation of a GPU-initiated exchange kernel across the
#: network: NCCL's tuner cost of one LL-protocol step, base latency (``"base"``) plus the
#: hardware latency of the network hop (``"network"``). The Parameters are the ``nccl``
#: runtime's own (``nccl.base_latency.ring.LL``, ``nccl.hw_latency.net.ring.LL``: 6.6 and
#: 2.7 us); that such a handshake costs one LL step is this module's assumption (see
#: "Fixed costs"). Inside one load/store domain the ``symmetric-memory`` runtime's
#: ``kernel_floor`` applies instead.
EXCHANGE_SYNC = {
    "base": _NCCL["nccl.base_latency.ring.LL"],
    "network": _NCCL["nccl.hw_latency.net.ring.LL"],
}

#: Whether an RDMA atomic that follows RDMA writes on one RC queue pair waits for them: the
#: named assumption that the fabric runs adaptive routing (multi-path), see "Atomics after
#: writes on one queue pair" and :attr:`ExchangeKernel.qp_signals`; the round trip it waits is
#: two :data:`EXCHANGE_SYNC` network steps. ``analysis.moe_exchange(adaptive_routing=False)``
#: prices the single-path fabric instead (the queue pair's order then holds on the wire).
EXCHANGE_ADAPTIVE_ROUTING = Parameter(
    "exchange.adaptive_routing", True, "",
    "deepseek-ai/DeepEP pull request #437 (2025-09-29, 'Eager RDMA'): 'On modern multi-path "
    "capable adapters (e.g., NVIDIA ConnectX-7, BlueField-3) and multi-path fabrics (InfiniBand "
    "Adaptive Routing, multi-path Ethernet), the network may reorder the atomic and write "
    "packets. To preserve ordering semantics, the stack will refrain from issuing the atomic "
    "until all in-flight writes on that QP have completed (i.e., the fence), effectively "
    "injecting one RTT of latency for each atomic that follows writes.' Assumption: the fabric "
    "runs adaptive routing (multi-path) - no measured row states its routing; the round trip is "
    "priced as two NCCL network steps (nccl.hw_latency.net.ring.LL, 2.7 us each: 5.4 us), the "
    "network latency the exchange model already uses, no new figure")


#: Payload bandwidth a NIC achieves under GPU-driven RDMA writes, as a fraction of its line
#: rate: NVIDIA's NCCL team gives 46-48 GB/s per 400 Gb/s NDR NIC (47 of 50 GB/s); NVSHMEM's
#: ``shmem_put_bw`` between two H100 nodes measures about 47 GB/s per NIC. It stands for every
#: per-packet and per-message cost on the way (IB headers, PCIe, the NIC's pipeline), so the
#: exchange model uses it *instead of* the RDMA transport's header fraction.
EXCHANGE_NIC_EFFICIENCY = Parameter(
    "exchange.nic_efficiency", 47.0 / 50.0, "",
    "NVIDIA/nccl-tests issue 290 (NVIDIA NCCL team, 2025-03-03): 'For NDR @ 400Gbps you should "
    "see 46-48GB/s per NIC' -> midpoint 47 of the 50 GB/s line rate; corroborated by "
    "deepseek-ai/DeepEP issue 155 (NVSHMEM shmem_put_bw between two H100 nodes: about 47 GB/s). "
    "Assumption: the same fraction of line rate for other NICs (RoCE, other speeds)")

#: The L1 data cache's fill unit: a miss fetches the missing 32-B sectors of a 128-B line, not
#: the line, so a walk over consecutive small slots pays an L2 trip per new sector (session 21;
#: :meth:`ExchangeKernel.walk_sectors`).
EXCHANGE_L1_SECTOR = Parameter(
    "exchange.l1_sector", 32, "B",
    "NVIDIA developer forums, 'Pascal L1 cache' thread, post 14 (Greg Smith, NVIDIA): Volta's "
    "L1 data cache has 128-B lines of four 32-B sectors and a miss fetches only the missing "
    "sectors, not the whole line from L2; Nsight Compute Kernel Profiling Guide (memory "
    "hardware model): a sector is an aligned 32-B chunk, L1 and L2 lines are four sectors. "
    "Assumption: Hopper and Blackwell keep Volta's sector fill")

_GH200 = ("RRZE-HPC/gpu-benches gpu-latency/gh200.txt (commit 1038c5d, 2025-02-11; the "
          "pointer-chase benchmark of Ernst et al.: one warp, random order, 128-B lines, "
          "clock 1980 MHz, printed cycles per access)")
_HOPPER_CLOCK = 1.98e9          # Hz: the clock gh200.txt prints; H100/H200 SXM boost alike
_AI_KERNELS = ("markdewing/AI_kernels latency/ (README.md at 0d701add; cuda/latency.cu at "
               "43782ac8, data/b200.dat and data/gh200.dat at b6bc5634): one thread chases a "
               "random permutation of a set's 128-B lines (one 4-B int each) from line 0, so it "
               "walks that permutation's cycle through line 0 (with libstdc++'s shuffle and "
               "default_random_engine ~87% of the lines at every set: review S30-R2), clock64 "
               "over 2^25 dependent loads, sets of 256 B to 1489 MiB, clocks not locked, printed "
               "cycles per load")
_MT4G = ("caps-tum/mt4g (MT4G, TU Munich's GPU memory-topology discovery tool) "
         "sample_results/'NVIDIA H100 80GB HBM3.json' (commit 043c8c64; run 2025-08-10, nvcc "
         "12.9, clock 1980 MHz; p-chase through constant memory; its H100 NVL run gives the "
         "same cycles)")

_STALL_COUNTS = ("a count, not an assumption: the stall counts the compiler writes into each "
                 "instruction's control word (bits 41-44 of its second 64-bit word, read with "
                 "cuobjdump 13.5 -sass) are the cycles the warp scheduler waits before issuing "
                 "the warp's next instruction, set to cover the fixed-latency pipes' results; "
                 "variable-latency loads wait on scoreboards instead, priced by the measured "
                 "load latencies. Summed from the instruction that consumes a load's result to "
                 "the issue of the next dependent load (in-order issue), they are the cycles the "
                 "chain spends beyond its loads; a lower bound (a taken branch's redirect beyond "
                 "its stall and other warps' issue not counted; review S22-R3, session 22)")

#: Latencies of the memory operations that an exchange kernel's serial chain is made of
#: (``EXCHANGE_LATENCY[arch][name]``, seconds), per GPU generation
#: (:func:`fabric.runtime_arch`): ``hbm_load`` (a load that misses L2), ``l2_hit`` (a load
#: that hits L2), ``l2_atomic`` (a global ``atomicAdd`` whose result is used), ``l1_hit`` (a
#: load that hits the SM's L1), ``const_l1`` and ``const_l15`` (a register-indexed load from
#: the constant bank that holds the kernel's parameters, LDC: a hit in the SM's constant L1,
#: and a miss there served by the L1.5 constant cache), ``shared_load`` (a load from the
#: block's shared memory, LDS), ``cycle`` (not a memory operation:
#: one SM clock cycle, the unit of the stall counts a kernel's compiled code schedules between
#: its dependent loads: the counts of :attr:`ExchangeKernel.cycles`, :data:`_CYCLE_COUNTS`),
#: and ``peer_load`` (a load from a peer GPU's memory over NVLink through NVSwitch, the whole
#: round trip). Each is a published microbenchmark figure, or a named assumption that
#: carries one to where none is published.
EXCHANGE_LATENCY = {
    "hopper": {
        "hbm_load": Parameter(
            "exchange.latency.hopper.hbm_load", 689.0 / _HOPPER_CLOCK, "s",
            _GH200 + ": 688.8-689.2 cycles per access for 1.2-2.3 GB working sets (DRAM), "
            "689 cycles / 1.98 GHz = 348 ns"),
        "l2_hit": Parameter(
            "exchange.latency.hopper.l2_hit", 280.4 / _HOPPER_CLOCK, "s",
            _GH200 + ": 280.3-280.8 cycles per access for 0.4-24 MB working sets (the near L2 "
            "partition), 280.4 cycles / 1.98 GHz = 141.6 ns"),
        "l2_atomic": Parameter(
            "exchange.latency.hopper.l2_atomic", (280.4 + 503.4) / 2 / _HOPPER_CLOCK, "s",
            "assumption: no Hopper figure for a global atomicAdd whose result is used was "
            "found; an L2 atomic costs one L2 round trip, to the near or the far L2 partition "
            "with equal odds (the counter's home partition is set by its address, not by the "
            "SM): mean of the near hit (280.4 cycles) and the far-partition plateau (503.4 "
            "cycles at 38 MB) of " + _GH200 + " = 391.9 cycles / 1.98 GHz = 197.9 ns. "
            "Blackwell's measured near atomic (148 ns) equals its near L2 hit (~150 ns), "
            "which supports the assumption"),
        "l1_hit": Parameter(
            "exchange.latency.hopper.l1_hit", 32.0 / _HOPPER_CLOCK, "s",
            _GH200 + ": 32.0-33.7 cycles per access for 2-213 kB working sets (the SM's L1), "
            "32.0 cycles / 1.98 GHz = 16.2 ns (the chase's generic loads; assumption: a "
            "read-only-path (__ldg) hit costs the same)"),
        "const_l1": Parameter(
            "exchange.latency.hopper.const_l1", 20.698 / _HOPPER_CLOCK, "s",
            _MT4G + ": constant L1 latency mean 20.70 cycles (p50 17) over 255 dependent "
            "accesses, line 64 B, size ~2 KB; 20.70 cycles / 1.98 GHz = 10.5 ns (an indexed "
            "constant load, LDC, that hits the SM's constant L1)"),
        "const_l15": Parameter(
            "exchange.latency.hopper.const_l15", 104.898 / _HOPPER_CLOCK, "s",
            _MT4G + ": constant L1.5 latency mean 104.90 cycles (p50 106) over 127 dependent "
            "accesses, fetch granularity 256 B; 104.90 cycles / 1.98 GHz = 53.0 ns (an indexed "
            "constant load that misses the SM's 64-B-line constant L1 and hits the L1.5; a miss "
            "there, to L2 or memory, is not priced: a lower bound)"),
        "cycle": Parameter(
            "exchange.latency.hopper.cycle", 1.0 / _HOPPER_CLOCK, "s",
            "one SM clock cycle at 1980 MHz, the clock " + _GH200 + " prints and every Hopper "
            "latency here converts with (H100/H200 SXM boost alike): 0.505 ns; the unit of the "
            "stall counts an exchange kernel's compiled code schedules between its dependent "
            "loads (" + _STALL_COUNTS + ")"),
        "shared_load": Parameter(
            "exchange.latency.hopper.shared_load", 29.882 / _HOPPER_CLOCK, "s",
            _MT4G + ": shared memory latency mean 29.88 cycles (p50 30) over 255 dependent "
            "accesses; 29.88 cycles / 1.98 GHz = 15.1 ns (a load from the block's shared "
            "memory, LDS, whose result the next instruction waits for)"),
        "peer_load": Parameter(
            "exchange.latency.hopper.peer_load", 46287.84 / 56 * 1e-9, "s",
            "NVIDIA nvbandwidth v0.10.0 testcase device_to_device_latency_sm (a pointer chase "
            "by one GPU's SM through a peer GPU's 2 MiB buffer) on 8x H100 80GB HBM3 (HGX, "
            "NVSwitch), driver 595.71.05: 56 ordered pairs 821.9-829.5 ns, sum 46287.84 ns, "
            "mean 826.6 ns. UNVERIFIABLE: read in a public acceptance-test report (GitHub "
            "Markdown, Korean, H100 server validation) whose repository could not be identified; "
            "a reader cannot open it (session 9 review S9-R5)"),
    },
    "blackwell": {
        "hbm_load": Parameter(
            "exchange.latency.blackwell.hbm_load", 859.45 / _HOPPER_CLOCK, "s",
            _AI_KERNELS + ": B200 858.8-859.5 cycles per load for 1082-1488 MiB working "
            "sets (DRAM; 855.3-858.0 at 416-787 MiB); the same chase on GH200 gives 687.7-689.8 "
            "at those sets, as " + _GH200 + " does (688.8-689.2: Hopper's hbm_load), so the two "
            "methods agree. 859.45 cycles (the 1488 MiB set) at the Blackwell clock assumption "
            "(1980 MHz, cycle: one clock for every Blackwell cycle count) = 434.1 ns. "
            "Assumption: GB200's "
            "GPU (the same B200 dies) alike; the same chase on B300 gives 848 cycles (810 with "
            "the clock locked at 2032 MHz). Session 30 (moe); before, Hopper's 348 ns was carried "
            "to Blackwell (assumption)"),
        "l2_hit": Parameter(
            "exchange.latency.blackwell.l2_hit", 150e-9, "s",
            "Chips and Cheese, 'Nvidia's B200: Keeping the CUDA Juggernaut Rolling' (2025, "
            "8x B200): L2 latency within the attached partition ~150 ns (read through two "
            "secondary copies: besthub.dev's summary and a public B200 survey that "
            "cross-checks it at ~298 cycles). Corroborated by " + _AI_KERNELS + ": B200 "
            "292.8-296.8 cycles per load for 0.37-32 MiB working sets (GH200 279.0-281.6 at "
            "0.37-23 MiB, as RRZE's gh200.txt), 294.2 at 995 KiB = 148.6 ns at 1980 MHz, within 1%"),
        "l2_atomic": Parameter(
            "exchange.latency.blackwell.l2_atomic", (148e-9 + 344e-9) / 2, "s",
            "P. Shankhdhar, 'Outperforming cuBLAS on NVFP4' (cudaforfun.substack.com, 2026; "
            "read through a translated copy on GitHub): a dependent atomicAdd chain on GB300 "
            "(each result feeds the next address) takes 148 ns when the SM is on the line's "
            "home L2 side and 344 ns from the far side; assumption: the counter's home side is "
            "independent of the SM (equal odds): mean 246 ns"),
        "l1_hit": Parameter(
            "exchange.latency.blackwell.l1_hit", 32.0 / _HOPPER_CLOCK, "s",
            "assumption: no named Blackwell L1 hit latency was found: Hopper's 32.0 cycles at "
            "1.98 GHz = 16.2 ns (" + _GH200 + ") carried to Blackwell. Supported by one "
            "method run on both: " + _AI_KERNELS + " gives B200 and GH200 the same L1 hit, "
            "39.625-39.646 cycles per load for 0.25-202 KiB working sets (a few cycles above "
            "RRZE's on both; the README: a difference not isolated)"),
        "const_l1": Parameter(
            "exchange.latency.blackwell.const_l1", 20.698 / _HOPPER_CLOCK, "s",
            "assumption: no named Blackwell constant-cache latency was found: Hopper's 20.70 "
            "cycles at 1.98 GHz = 10.5 ns (" + _MT4G + ") carried to Blackwell, as "
            "l1_hit is"),
        "const_l15": Parameter(
            "exchange.latency.blackwell.const_l15", 104.898 / _HOPPER_CLOCK, "s",
            "assumption: no named Blackwell constant-cache latency was found: Hopper's L1.5 "
            "104.90 cycles at 1.98 GHz = 53.0 ns (" + _MT4G + ") carried to Blackwell, as "
            "l1_hit and const_l1 are"),
        "cycle": Parameter(
            "exchange.latency.blackwell.cycle", 1.0 / _HOPPER_CLOCK, "s",
            "assumption: no named Blackwell clock is used for a kernel's scheduled cycles: "
            "Hopper's 1980 MHz (" + _GH200 + ") carried to Blackwell, as l1_hit is; "
            "hbm_load's B200 cycles convert with it. The cycle counts themselves are read "
            "from compiled code: TensorRT-LLM's "
            "one-sided kernels' 'blackwell' round_cycles tables from their sm_100a builds "
            "(flashinfer 579435f9 and 5e891c6b, sessions 24-29), their per-phase cycle counts "
            "the least of their sm_100a and sm_90a builds (sessions 25-27); DeepEP's, NCCL EP's "
            "and pplx's from sm_90 / sm_90a builds only (no sm_100a build walked: taken on "
            "Blackwell unchanged, an assumption) (" + _STALL_COUNTS + ")"),
        "shared_load": Parameter(
            "exchange.latency.blackwell.shared_load", 29.882 / _HOPPER_CLOCK, "s",
            "assumption: no named Blackwell shared-memory latency was found: Hopper's 29.88 "
            "cycles at 1.98 GHz = 15.1 ns (" + _MT4G + ") carried to Blackwell, as "
            "l1_hit and const_l1 are"),
        "peer_load": Parameter(
            "exchange.latency.blackwell.peer_load", 20525.53 / 12 * 1e-9, "s",
            "NVIDIA nvbandwidth testcase device_to_device_latency_sm on a 4-GPU GB300 NVL72 "
            "tray (Oracle, 'OCI GPU Quick Start: NVIDIA GB300', BM.GPU.GB300.4: "
            "oracle-quickstart/oci-gpu-quickstarts nvidia/GB300/README-GB300.md, since 96ac1ec "
            "(2026-02-24), l.940 at 6a0abdc: 'SUM device_to_device_latency_sm 20525.53' over "
            "the 12 ordered pairs: mean 1710.5 ns); assumption: the same for B200 and GB200 "
            "(same NVLink5 and NVSwitch "
            "generation; NVIDIA/nccl issue 1940 likewise finds B200's smallest one-sided "
            "all-reduce slower than Hopper's, 3 vs 2.3 us). Corroborated on GB200: Oracle's "
            "'OCI GPU Quick Start: NVIDIA GB200' (BM.GPU.GB200.4; oracle-quickstart/"
            "oci-gpu-quickstarts nvidia/GB200/README-GB200.md, since ba6f028 (2026-03-03), l.820 "
            "at 6a0abdc) prints 'SUM device_to_device_latency_sm 20725.53' "
            "over its tray's 12 ordered pairs: mean 1727.1 ns, within 1% (ordinary P2P memory "
            "inside one tray; no figure for fabric-handle memory across trays was found)"),
    },
}

_NCCL_SYMK = ("NVIDIA/nccl src/sym_kernels.cc queryModel_lsa (NCCL 2.28.3, commit f1308997, "
              "2025-09-02; unchanged at 5067397c, 2026-06-11): NCCL's time model of its symmetric "
              "load/store kernels gives each block (one per SM, up to 512 threads) a bandwidth "
              "smBw, time = baseLat + busBytes / softmin(nBlocks x smBw, peakBw)")

_BLOCK_THREADS = ("; ASSUMPTION (thread count): NCCL's figure is for its own blocks of "
                  "ncclSymkMaxThreads = 512 threads (src/include/sym_kernels.h), while "
                  "TensorRT-LLM's exchange blocks have 256 (getEnvMoeA2ADispatchBlockSize / "
                  "getEnvMoeA2ACombineBlockSize default 256, cpp/tensorrt_llm/common/envUtils.h); "
                  "the rate is taken per block (one block on its SM, as in NCCL's model: one "
                  "block per SM), not per thread, so it is used unscaled. No published "
                  "per-block NVLink rate for 256-thread blocks was found; if the rate scaled "
                  "with threads it would be half this (an alternative stated, not used)")

#: Bytes per second one thread block moves to or from its peers over the scale-up fabric with
#: plain loads and stores (``EXCHANGE_BLOCK_RATE[arch]``): NCCL's per-block figure for its
#: symmetric load/store kernels. A kernel that gives each token one block
#: (:attr:`ExchangeKernel.block_per_token`) cannot move a token faster than this, whatever
#: the links could carry. **Assumption** (stated in each Parameter): NCCL's figure is for
#: 512-thread blocks (``ncclSymkMaxThreads``), TensorRT-LLM's exchange blocks have 256
#: threads; the rate is taken per block (an SM's worth of one block), not per thread, and
#: used unscaled (a thread-proportional reading would halve it; no published figure decides
#: between the two).
EXCHANGE_BLOCK_RATE = {
    "hopper": Parameter(
        "exchange.block_rate.hopper", 44 * 2**30, "B/s",
        _NCCL_SYMK + ": cudaArch < 1000: smBw = 44 GiB/s for the kernels that are not "
        "all-reduces (all-gather by stores, reduce-scatter by loads; 65 GiB/s for all-reduce "
        "kernels, not used: an exchange is not an all-reduce)" + _BLOCK_THREADS),
    "blackwell": Parameter(
        "exchange.block_rate.blackwell", 55 * 2**30, "B/s",
        _NCCL_SYMK + ": cudaArch >= 1000: smBw = 55 GiB/s for every symmetric kernel"
        + _BLOCK_THREADS),
}

#: The NVLink generation each architecture's ``peer_load`` was measured over.
_PEER_TECH = {"hopper": "nvlink4", "blackwell": "nvlink5"}


def _latency_table(arch, what="exchange latencies", known=EXCHANGE_LATENCY):
    """:data:`EXCHANGE_LATENCY`'s table of GPU generation ``arch``: the one lookup of a
    generation's latencies; a TypeError for a name of the wrong kind (:func:`text_of`), a
    SpecError naming the ``known`` generations (those with ``what`` measured) for another."""
    if text_of(arch, "arch") not in known:
        raise SpecError(f"no measured {what}: " + unknown_fault(arch, "architecture", known))
    return EXCHANGE_LATENCY[arch]


def peer_access_latency(arch):
    """Seconds a peer load spends beyond the fabric's own round trip, and its Parameters.

    The measured ``peer_load`` (:data:`EXCHANGE_LATENCY`) is one load's whole round trip
    between two GPUs of one NVSwitch domain: the path there and back (GPU -> switch -> GPU,
    two links each way, each at its technology's latency) plus the remote memory access and
    both ends' overheads. The model routes the path itself (router latencies, so degraded
    fabrics lengthen it) and adds this remainder: ``peer_load - 4 x link latency``. The
    remainder is taken as the GPUs' own cost on every fabric (an assumption: it was
    measured over NVSwitch only).

    Parameters
    ----------
    arch : str
        A GPU generation of :data:`EXCHANGE_LATENCY`: ``"hopper"`` or ``"blackwell"``.

    Returns
    -------
    tuple
        The remainder in seconds and the :class:`Parameter` objects it is made of.

    Raises
    ------
    SpecError
        For an architecture with no measured peer load (not a key of
        :data:`EXCHANGE_LATENCY`).

    Examples
    --------
    >>> round(peer_access_latency("hopper")[0] * 1e9, 1)      # 826.6 - 4 x 150
    226.6
    >>> round(peer_access_latency("blackwell")[0] * 1e9, 1)   # 1710.5 - 4 x 150
    1110.5
    >>> peer_access_latency("volta")
    Traceback (most recent call last):
    ...
    fabric.SpecError: no measured peer-load latency: unknown architecture 'volta'; known: blackwell, hopper
    """
    table = _latency_table(arch, "peer-load latency",
                           sorted(set(EXCHANGE_LATENCY) & set(_PEER_TECH)))
    tech = link_tech(_PEER_TECH[arch])
    rest = max(0.0, table["peer_load"].value - 4 * tech.latency)
    latency = next(p for p in tech.parameters() if p.name == f"{tech.name}.latency")
    return rest, (table["peer_load"], latency)


#: How many times a chain entry repeats: once, once per destination rank of a token,
#: once per round of ``threads x vector`` bytes of the token, once per further pass of
#: one warp's loop over the EP ranks (``"lane_passes"``: lane ``l`` takes ranks ``l``,
#: ``l + 32``, ...; ``ceil(ep / 32) - 1`` passes beyond the first), or, for a dispatch whose
#: per-expert counts one warp per block sends (:attr:`ExchangeKernel.count_grid`), once per
#: expert of the slowest such warp whose rank is outside the sender's load/store domain
#: (``"remote_signals"``: a signal posted to the NIC, not a store):
#: :meth:`ExchangeKernel.count_walk`, or those signals after the first (``"further_signals"``:
#: each follows a post whose fence invalidated L1, so the warp's next pass re-reads its routing
#: indices from L2); or, for a combine whose blocks send their received
#: copies one after another (:attr:`ExchangeKernel.combine_blocks`), once per copy of the
#: slowest block (``"serial_copies"``) or once per NIC post that block makes
#: (``"posted_copies"``: when the EP ranks span the network, every copy's signal and the one
#: signal the block sends ahead of its copies; none inside one load/store domain):
#: :func:`serial_copies`, :meth:`ExchangeKernel.combine_posts`; ``"further_copies"``: those
#: copies after the first; or, for a dispatch whose receiving blocks walk the (local expert,
#: source) slots of the received counts (:attr:`ExchangeKernel.count_grid`'s kernel), once
#: per slot beyond the first (``"walk_slots"``: every block walks them all) or once per
#: received token of the block that holds the most (``"walk_tokens"``:
#: :meth:`ExchangeKernel.receive_walk`); or once per (pass, copy) of the combine's receive
#: sum on the block with the most tokens (``"reduce_loads"``:
#: :meth:`ExchangeKernel.receive_reduce`); or once when the phase's copies are load/store
#: stores into the peers (every EP rank in one load/store domain, and not sent over RDMA
#: alone), none otherwise (``"loadstore"``: a step that follows the last copy's
#: acknowledged stores there, and overlaps the data's flight when the copies are RDMA
#: writes queued ahead of it); or once when they are not (``"network"``: the EP ranks span
#: load/store domains, or every copy goes over RDMA); or, when they are load/store stores, once
#: per dependent round of a put's warp copy of the phase's token (``"put_rounds"``:
#: ``ceil(bytes / put_vector)``, :attr:`ExchangeKernel.put_vector`; none over the network);
#: or once per expert the slowest count warp walks, across the network only (``"count_passes"``:
#: a load its loop waits for on each pass, e.g. a constant load not covered by the cycles issued
#: before its consumer);
#: or once per round of a block's staging copy of the phase's token beyond the first
#: (``"stage_rounds"``: ``ceil(bytes / stage_vector) - 1``, :attr:`ExchangeKernel.stage_vector`),
#: or of every copy after the first (``"further_stage_rounds"``: ``"further_copies"`` times that),
#: or those of the phase's token when its copies are load/store stores, none over the network
#: (``"loadstore_stage_rounds"``); or, when they are, once per token the dispatch's send loop
#: walks before the slowest block reaches its last token (``"walked_tokens"``,
#: :meth:`ExchangeKernel.send_walk`; none over the network); or, when they are, once per
#: token a dispatch block sends after its first, each waiting for the release of the one
#: before (``"further_waves"``, :meth:`ExchangeKernel.send_waves`; none over the network); or
#: once per round of the receiving block's copy of a received token beyond the first, for each
#: received token of the block that holds the most (``"walk_token_rounds"``:
#: :meth:`ExchangeKernel.receive_rounds`); or once per load of a destination's row of the
#: kernel's per-rank pointer table that waits for the one before, for the phase's first
#: payload (``"pointer_rows"``: :meth:`ExchangeKernel.pointer_loads`) or for each of its
#: later payloads (``"pointer_rereads"``: that many times the payloads after the first); or
#: once per L1 sector the receive walk enters after its first (``"walk_sectors"``:
#: :meth:`ExchangeKernel.walk_sectors`) or per slot beyond the first whose first load finds
#: its sector already in L1 (``"walk_slot_hits"``: the walked slots less those sectors); or once
#: per top-k slot of the token after the first (``"further_slots"``: ``top_k - 1``, a loop over the
#: token's expert ids), or once per payload the caller gives apart after the first
#: (``"further_payloads"``: ``payloads - 1``), or once per distinct destination rank of the
#: token after the first (``"further_ranks"``: ``ranks - 1``, at least 0). A ``"cycle"`` step
#: may also be counted in the cycles a phase's compiled code schedules outside its loads: the
#: chain counts of :data:`_CYCLE_COUNTS` (``"claim_cycles"``, ``"put_round_cycles"``, ...), each
#: a count of the phase's own cycle table (:attr:`ExchangeKernel.cycles`) times how often the
#: phase runs that code.
_CHAIN_COUNTS = ("one", "ranks", "rounds", "lane_passes", "remote_signals", "serial_copies",
                 "posted_copies", "further_copies", "walk_slots", "walk_tokens", "reduce_loads",
                 "loadstore", "network", "put_rounds", "stage_rounds", "further_stage_rounds",
                 "loadstore_stage_rounds", "walked_tokens", "further_waves", "walk_token_rounds",
                 "pointer_rows", "pointer_rereads", "walk_sectors", "walk_slot_hits",
                 "further_slots", "further_payloads", "further_ranks", "further_signals",
                 "count_passes")


def _per(count):
    """A cycle count's chain step that charges it once per ``count`` (a key of the chain's
    times: a chain count, or ``"slots"``, ``"walk_wraps"``, ``"reduce_passes"``)."""
    return lambda cycles, times: times[count] * cycles


def _payload_step(pay, times):
    """The ``"payload_cycles"`` step: each payload ``pay[0]`` plus ``pay[1]`` per pointer row
    after its first, each copy round after a payload's first ``pay[2]``, ``pay[3]`` once."""
    per_payload = pay[0] + pay[1] * max(times["pointer_rows"] - 1.0, 0.0)
    return (times["payloads"] * per_payload
            + pay[2] * max(times["rounds"] - times["payloads"], 0.0) + pay[3])


# an entry of _CYCLE_COUNTS (see there)
_CycleCount = collections.namedtuple("_CycleCount", "what steps needs parts",
                                     defaults=(None, ()))


#: The cycle counts a phase's cycle table (:attr:`ExchangeKernel.cycles`) may hold: the cycles
#: a kernel's compiled code schedules outside the loads its chain charges, each read from a
#: kernel's SASS (its source names the build, the tool and the addresses) and priced at
#: ``EXCHANGE_LATENCY[arch]["cycle"]`` by the ``"cycle"`` chain steps it names. Each entry:
#: what the count is (for errors), its chain steps (chain count -> the cycles that step
#: charges, given the count and the chain's times), the kernel field or other cycle count
#: it needs (``(name, what that is)``; a cycle count of the same phase) and, for a count of
#: several ints, what each is (one int otherwise). Adding a count is one entry here and one in
#: the kernel's phase table; its Parameter is ``<kernel>.<name>``.
_CYCLE_COUNTS = {
    # a round of a put's warp copy beyond its load (the stall counts from the store that
    # consumes the load to the next round's load), for each put round the model charges:
    # the combine's fenced copies (analysis.moe_exchange) and a load/store dispatch's token
    "put_cycles": _CycleCount(
        "the cycles a round of a put's warp copy schedules beyond its load",
        {"put_round_cycles": _per("put_rounds")},
        ("put_vector", "the bytes of a put's warp copy per dependent load")),
    # the dispatch's receive walk per slot beyond its two loads, for the slots walked beyond
    # the first
    "walk_cycles": _CycleCount(
        "the cycles the receive walk schedules per slot", {"walk_cycles": _per("walk_slots")},
        ("count_grid", "the grid whose receive part walks the counts")),
    # the receive walk's path from a local expert's last slot to the next expert's first beyond
    # a slot's walk_cycles, for each expert it leaves before the last (ExchangeKernel.walk_wraps)
    "walk_wrap_cycles": _CycleCount(
        "the cycles the receive walk's path to the next local expert adds",
        {"walk_wrap_cycles": _per("walk_wraps")},
        ("walk_cycles", "the cycles the receive walk schedules per slot")),
    # the dispatch's send loop per token it walks past (ExchangeKernel.send_walk) beyond that
    # token's loads, when its copies are load/store stores
    "send_walk_cycles": _CycleCount(
        "the cycles the dispatch's send loop schedules per walked token",
        {"walked_token_cycles": _per("walked_tokens")},
        ("count_grid", "the grid whose send loop walks the tokens")),
    # the dispatch's receiving block per received token (ExchangeKernel.receive_walk) outside
    # its loads and the later rounds of its copy (receive_cycles)
    "receive_token_cycles": _CycleCount(
        "the cycles the receiving block schedules per received token",
        {"walk_token_cycles": _per("walk_tokens")},
        ("count_grid", "the grid whose receive part copies the tokens")),
    # a dispatch's sending warp on its own token outside its loads and its staging and put
    # loops, from its loop iteration's top to its signal, when its copies are load/store
    # stores; a dispatch whose blocks send tokens in turn (send_grid) pays them again for each
    # later token of its busiest block
    "send_cycles": _CycleCount(
        "the cycles a sending warp schedules on its own token",
        {"loadstore_send_cycles": _per("loadstore"),
         "further_wave_send_cycles": _per("further_waves")}),
    # the combine's receive sum per pass of its block's threads over the token outside its
    # (pass, copy) loop (reduce_cycles): its accumulators' set-up, the pass's output conversion
    # and stores and the loop back; the passes are the "reduce_loads" over the token's top-k
    "reduce_pass_cycles": _CycleCount(
        "the cycles the combine's receive sum schedules per pass",
        {"reduce_pass_cycles": _per("reduce_passes")},
        ("reduce_elements", "the elements a block sums per pass")),
    # a dispatch's per-expert count outside its loads from the sender's poll of the expert's
    # finish counter to the receiving warp's atomic on the received count, when the copies are
    # load/store stores (DeepEP and NCCL EP low-latency)
    "count_cycles": _CycleCount(
        "the cycles the per-expert count's path schedules after the last copy's release",
        {"loadstore_count_cycles": _per("loadstore")}),
    # one NVSHMEM IBGDA post on its posting lane outside its loads (those _ibgda_post prices)
    # when it does not ring the doorbell, the least over the kinds of post the kernel makes:
    # each of the count warp's NIC signals, or each of a combine block's NIC posts
    "post_cycles": _CycleCount(
        "the cycles one IBGDA post schedules on its posting lane",
        {"remote_signal_cycles": _per("remote_signals"),
         "posted_copy_cycles": _per("posted_copies")},
        ("count_grid", "the grid whose warps send the per-expert counts")),
    # the count warp's loop (count_grid) per expert it walks, outside its loads and its
    # signal's post, when the EP ranks span the network (ExchangeKernel.count_walk's passes of
    # the slowest warp; none in one load/store domain, where the counts are stores beside the
    # copies)
    "count_pass_cycles": _CycleCount(
        "the cycles the count warp's loop schedules per walked expert",
        {"count_pass_cycles": _per("count_passes")},
        ("count_grid", "the grid whose warps send the per-expert counts")),
    # a dispatch block's slot claims (the thread that walks the token's top-k slots: each
    # slot's expert id, its destination rank, the atomic that claims a slot there or the
    # duplicate's marks) per top-k slot outside the loads the chain charges (the ids, the
    # atomics, the counter base's constant loads), to the block's barrier before the copy
    "claim_cycles": _CycleCount(
        "the cycles the dispatch's slot claims schedule per top-k slot",
        {"claim_cycles": _per("slots")}),
    # a phase's prepare kernel outside the loads the chain charges, once: the dispatch's
    # (its epoch bump and the counters' zeroing before the dispatch kernel) and the combine's
    # staging kernel (the block that copies a received token into the symmetric buffer before
    # the pull: its epoch bump, the source and count arithmetic, the copy loop's set-up and
    # rounds)
    "prepare_cycles": _CycleCount(
        "the cycles the phase's prepare kernel schedules", {"prepare_cycles": _per("one")}),
    # the dispatch kernel's last block after its copy's barrier: the block counter's atomic,
    # the is-last broadcast, the send counts' stores into the peers' receive counters, the
    # epoch's load, to its release fence (the fence and the flag barrier after it priced
    # apart), outside the loads the chain charges, once
    "release_cycles": _CycleCount(
        "the cycles the dispatch's last block schedules from its copy's barrier to its "
        "release fence", {"release_cycles": _per("one")}),
    # the dispatch's expert-id sanitize kernel (a received token's slot, its source rank's
    # count and the test of the token against it) outside the loads the chain charges, once
    "sanitize_cycles": _CycleCount(
        "the cycles the dispatch's expert-id sanitize kernel schedules",
        {"sanitize_cycles": _per("one")}),
    # a barrier's per-peer loops run by one warp (lane l takes ranks l, l + 32, ...: the
    # dispatch's send-count stores, flag stores and polls; the combine's flag stores and
    # polls), per further lane pass (lane_passes), outside the loads the chain charges there;
    # their first pass is in the phase's other counts (release_cycles) and the kernel floor's
    # barrier
    "lane_pass_cycles": _CycleCount(
        "the cycles a barrier's per-peer loops schedule per further lane pass",
        {"lane_pass_cycles": _per("lane_passes")}),
    # the combine's receive sum per (pass, copy) beyond its loads
    "reduce_cycles": _CycleCount(
        "the cycles the combine's receive sum schedules per (pass, copy)",
        {"reduce_cycles": _per("reduce_loads")},
        ("reduce_elements", "the elements a block sums per pass")),
    # a round of the receiving block's copy of a received token beyond its load, for the
    # rounds after the first of the block's received tokens
    "receive_cycles": _CycleCount(
        "the cycles a round of the receiving block's copy schedules beyond its load",
        {"walk_token_round_cycles": _per("walk_token_rounds")},
        ("receive_vector", "the bytes of a receive round")),
    # a dispatch block's payload loop (after the slot claims' barrier: per payload its source
    # pointer and size, each destination's pointer row, its copy rounds, each a load then a
    # store per destination) outside the loads the chain charges: for the payloads the caller
    # gives, or for one further payload of one round
    "payload_cycles": _CycleCount(
        "the cycles the dispatch's payload loop schedules",
        {"payload_cycles": _payload_step,
         "small_payload_cycles": lambda pay, times: (
             pay[0] + pay[1] * max(times["pointer_rows"] - 1.0, 0.0))},
        parts=("each payload", "each pointer row after its first",
               "each round after a payload's first", "once")),
    # a combine block's copy loop (combine_blocks) outside its loads and its staging and put
    # loops: for the phase's first copy, for each later copy with its loop back, and (added
    # with each fenced copy by analysis.moe_exchange, with the signal's peer pointer reloaded
    # from L2 after the fence has invalidated L1: one l2_hit) a copy to a load/store peer's
    # put path and signal
    "copy_cycles": _CycleCount(
        "the cycles a combine block's copy loop schedules per copy",
        {"copy_cycles": lambda c, times: float(c[0]),
         "further_copy_cycles": lambda c, times: times["further_copies"] * (c[0] + c[1])},
        ("combine_blocks", "the blocks that send the received copies"),
        ("every copy", "each later copy's loop back", "a load/store copy's put path")),
    # a staging round of the phase's token (or copy) beyond its load, for the rounds counted in
    # "stage_rounds", "further_stage_rounds" and "loadstore_stage_rounds"
    "stage_cycles": _CycleCount(
        "the cycles a staging round schedules beyond its load",
        {"stage_round_cycles": _per("stage_rounds"),
         "further_stage_round_cycles": _per("further_stage_rounds"),
         "loadstore_stage_round_cycles": _per("loadstore_stage_rounds")},
        ("stage_vector", "the bytes of a staging round")),
}

# the phases of an exchange, in the order of a kernel's per-phase fields
_PHASES = ("dispatch", "combine")

def _phase_index(phase):
    """``phase`` (0 dispatch, 1 combine) checked: a clear error for anything else."""
    return check_count(phase, "phase", 0, "0 (dispatch) or 1 (combine)", below=2)


# the parts of a cycle count of several, in words (for the error)
_WORDS = {2: "two", 3: "three", 4: "four", 5: "five", 6: "six"}

# the chain counts of the cycle counts: chain count -> (cycle count, its step)
_CYCLE_STEPS = {step: (name, fn) for name, entry in _CYCLE_COUNTS.items()
                for step, fn in entry.steps.items()}


def serial_copies(copies, blocks):
    """Copies the slowest of ``blocks`` blocks handles one after another when block ``b``
    takes copies ``b``, ``b + blocks``, ...: ``ceil(copies / blocks)``.

    >>> serial_copies(1024, 132), serial_copies(8, 132), serial_copies(0, 132)
    (8, 1, 0)
    """
    return -(-math.ceil(copies) // int(blocks))


def received_copies(sent, k, ep):
    """The (token, expert) copies one of ``ep`` EP ranks receives in a dispatch, expected,
    when the ranks send ``sent`` tokens in all, each to ``k`` experts spread evenly over the
    ranks: ``sent x k / ep``, every rank alike, however the tokens are spread over the senders
    (the one count of it: :meth:`ExchangeKernel.receive_walk` and ``analysis.moe_exchange``'s
    receiving side).

    >>> received_copies(128 * 16, 8, 16), received_copies(2, 8, 16)
    (1024.0, 1.0)
    """
    return sent * k / ep


def rank_counts(counts, ep, name="tokens"):
    """The tokens each of ``ep`` EP ranks holds, as a tuple of ints, from ``counts``: a
    sequence of ``ep`` ints >= 0 (a rank with 0 holds none: it sends nothing, but holds
    experts), at least one of them > 0. What is wrong is named (``name`` the argument's): a
    TypeError for what is no sequence or a count of another kind, a SpecError for a wrong
    length or value (:func:`fabric._units.check_count`).

    >>> rank_counts([2, 0, 1], 3), rank_counts(range(3), 3)
    ((2, 0, 1), (0, 1, 2))
    >>> rank_counts([2, 0], 3)
    Traceback (most recent call last):
    ...
    fabric.SpecError: tokens must list the tokens of each of the 3 EP ranks, got 2 counts: [2, 0]
    >>> rank_counts([2, 1.5], 2)
    Traceback (most recent call last):
    ...
    TypeError: tokens[1] must be an int >= 0 (EP rank 1's tokens), got tokens[1]=1.5 (a float)
    """
    got = sequence_of(counts, name, f"the {ep} EP ranks' token counts")
    if len(got) != ep:
        raise SpecError(f"{name} must list the tokens of each of the {ep} EP ranks, got "
                        f"{len(got)} counts: {show_value(counts)}")
    got = tuple(check_count(c, f"{name}[{i}]", 0, f"an int >= 0 (EP rank {i}'s tokens)")
                for i, c in enumerate(got))
    if not any(got):
        raise SpecError(f"{name} must give at least one EP rank a token, got {ep} zeros")
    return got


def held_counts(tokens, ep, sources=None, name="tokens"):
    """The tokens each of ``ep`` EP ranks holds, as a tuple of ints (0: the rank holds none,
    but holds experts), from either spelling of who holds tokens: ``tokens`` one int >= 1
    that each rank ``sources`` names holds (every one for None, the first ``sources`` for an
    int from 1 to ``ep``, or the positions ``0 .. ep - 1`` it lists, each once, the others
    none), or ``tokens`` a sequence of each rank's count (:func:`rank_counts`; ``sources``
    then None). The one conversion of the two spellings: ``analysis.moe_exchange``,
    :meth:`ExchangeKernel.receive_walk` and ``analysis._moe_exchange.busiest_token`` read the
    busiest rank's tokens (``max``) and the tokens sent in all (``sum``) from it. What is
    wrong is named (``name`` the argument's): a value of another kind a TypeError, a wrong
    value a SpecError (:func:`fabric._units.check_count`).

    >>> held_counts(3, 4), held_counts(3, 4, 2), held_counts(3, 4, [3, 1])
    ((3, 3, 3, 3), (3, 3, 0, 0), (0, 3, 0, 3))
    >>> held_counts([2, 0, 1], 3)
    (2, 0, 1)
    >>> held_counts(3, 4, [4])
    Traceback (most recent call last):
    ...
    fabric.SpecError: sources must be an int from 1 to the 4 EP ranks (the first that many hold tokens) or the positions 0..3 of those that do, each once, got sources=[4]
    >>> held_counts(3, 4, 2.0)
    Traceback (most recent call last):
    ...
    TypeError: sources must be an int from 1 to the 4 EP ranks (the first that many hold tokens) or the positions 0..3 of those that do, each once, got sources=2.0 (a float)
    """
    ep = check_count(ep, "ep", 1, "an int >= 1")
    counts = items_of(tokens)
    if counts is not None:
        if sources is not None:
            raise SpecError(f"sources must be None where {name} lists each EP rank's tokens "
                            f"(a rank with 0 holds none), got sources={show_value(sources)}")
        return rank_counts(counts, ep, name)
    tokens = check_count(tokens, name, 1,
                         f"an int >= 1 or a sequence of the {ep} EP ranks' token counts")
    rule = (f"an int from 1 to the {ep} EP ranks (the first that many hold tokens) or the "
            f"positions 0..{ep - 1} of those that do, each once")
    if sources is None:
        return (tokens,) * ep
    pos = items_of(sources)
    if pos is None:
        first = check_count(sources, "sources", 1, rule)
        if first > ep:
            raise SpecError(f"sources must be {rule}, got sources={first}")
        held = range(first)
    else:
        pos = [check_count(p, f"sources[{i}]", 0, f"a position 0..{ep - 1} of the EP ranks")
               for i, p in enumerate(pos)]
        if not pos or max(pos) >= ep or len(set(pos)) != len(pos):
            raise SpecError(f"sources must be {rule}, got sources={show_value(sources)}")
        held = set(pos)
    return tuple(tokens if r in held else 0 for r in range(ep))


#: Lanes of one warp (CUDA's ``warpSize``): a loop over the EP ranks run by one warp, one
#: rank per lane per pass, takes ``ceil(ep / WARP_LANES)`` passes.
WARP_LANES = 32


def lane_passes(ep):
    """Passes of one warp's loop over ``ep`` ranks beyond the first, ``ceil(ep / 32) - 1``:
    the steps a per-peer loop run by one warp (lane ``l`` takes ranks ``l``, ``l + 32``, ...)
    adds to a chain that already holds one pass.

    >>> lane_passes(8), lane_passes(32), lane_passes(33), lane_passes(64), lane_passes(128)
    (0, 0, 1, 1, 3)
    """
    return -(-check_count(ep, "ep", 1, "an int >= 1") // WARP_LANES) - 1


# an optional field that is priced only with another one set: (field, the field it needs, what
# that one is), checked in this order (a cycle count's needs: _CYCLE_COUNTS)
_FIELD_NEEDS = (
    ("put_vector", "combine_blocks", "the blocks that put the received copies"),
    ("reduce_elements", "combine_blocks", "the blocks that take the tokens"),
)

# the kernel field a chain count is read from, and what that field is (for the error); a cycle
# count's chain step needs its count in the phase's cycle table (_CYCLE_COUNTS)
_CHAIN_COUNT_NEEDS = {
    "walk_token_rounds": ("receive_vector", (" (the bytes of the receiving block's copy of "
                                             "a received token per dependent load)")),
    **dict.fromkeys(("walk_sectors", "walk_slot_hits"),
                    ("walk_slot_bytes", " (the bytes of one slot of the walked counts)")),
    **dict.fromkeys(("remote_signals", "further_signals", "walk_slots", "walk_tokens",
                     "walked_tokens", "count_passes"),
                    ("count_grid", " (the grid whose warps send the per-expert counts)")),
    "reduce_loads": ("reduce_elements", ""),
    "further_waves": ("send_grid", " (the experts per dispatch block, which set its grid)"),
    "put_rounds": ("put_vector", " (the bytes of a put's warp copy per dependent load)"),
    **dict.fromkeys(("stage_rounds", "further_stage_rounds", "loadstore_stage_rounds"),
                    ("stage_vector", " (the bytes of a block's staging copy per dependent load)")),
    **dict.fromkeys(("serial_copies", "posted_copies", "further_copies"),
                    ("combine_blocks", " (the blocks that send the received copies)")),
}


def _python_numbers(value):
    """``value`` with each numpy number in it (at any depth of tuples) the Python one it
    equals: a kernel's counts add as ints (an np.uint8 would wrap), its flags are bools, its
    byte figures floats (an np.float16 would compute as one)."""
    if isinstance(value, tuple):
        return tuple(_python_numbers(v) for v in value)
    return value.item() if type(value).__module__ == "numpy" else value


def _tuple_of(value, field, due, item=None, item_due=""):
    """``value`` if it is a tuple whose items each pass ``item`` (a test of their kind; None:
    any), else the TypeError naming ``field`` (STYLE: a wrong kind; :func:`kind_error`):
    "``field`` must be ``due``, got 'x' (a str)", or for an item "each of ``field`` must be
    ``item_due``, got ...". A tuple of the right kinds whose length or values break the
    field's rule is the caller's SpecError. The kind check of every tuple field of
    :class:`ExchangeKernel`.

    >>> _tuple_of((32, 128), "count_grid", "() or two ints", is_int, "an int")
    (32, 128)
    >>> _tuple_of("32x128", "count_grid", "() or two ints", is_int, "an int")
    Traceback (most recent call last):
    ...
    TypeError: count_grid must be () or two ints, got '32x128' (a str)
    >>> _tuple_of((32, 1.5), "count_grid", "() or two ints", is_int, "an int")
    Traceback (most recent call last):
    ...
    TypeError: each of count_grid must be an int, got 1.5 (a float)
    """
    if not isinstance(value, tuple):
        raise kind_error(value, field, due)
    if item is not None:
        for x in value:
            if not item(x):
                raise kind_error(x, f"each of {field}", item_due)
    return value


def _entry_kinds(entries, field, name):
    """Refuse an entry of ``field`` (a tuple of ``(name, count)`` tuples) whose first part is
    not a str or whose second is not an int: the TypeError of :func:`kind_error` naming the
    part. Entries of another length are left to the caller's SpecError."""
    for e in entries:
        if len(e) == 2:
            if not isinstance(e[0], str):
                raise kind_error(e[0], f"each {name} of {field}", "a str")
            if not is_int(e[1]):
                raise kind_error(e[1], f"each count of {field}", "an int")


def _is_tuple(x):
    """Whether ``x`` is a tuple (an item kind for :func:`_tuple_of`)."""
    return isinstance(x, tuple)


def _slot_key_ok(entry, size):
    """Whether ``entry`` is a tuple of ``size`` whose key ``(arch, top_k, input_bytes)`` is well
    formed: arch ``''`` or a generation of :data:`EXCHANGE_LATENCY`, ints top_k >= 1 and
    input_bytes >= 0."""
    if not isinstance(entry, tuple) or len(entry) != size:
        return False
    arch, top_k, width = entry[:3]
    return (arch in ("",) + tuple(EXCHANGE_LATENCY)
            and all(is_int(x) for x in (top_k, width))
            and top_k >= 1 and width >= 0)


def _late_pulls_entry_ok(entry, names):
    """Whether ``entry`` is a well-formed :attr:`ExchangeKernel.late_pulls` entry."""
    if not _slot_key_ok(entry, 4):
        return False
    top_k, batches = entry[1], entry[3]
    if not (isinstance(batches, tuple) and batches
            and all(isinstance(b, tuple) and b for b in batches)):
        return False
    slots = tuple(s for b in batches for s in b)
    return (all(is_int(x) for x in slots)
            and len(set(slots)) == len(slots) and all(1 <= x < top_k for x in slots))


def _round_reads_entry_ok(entry, names):
    """Whether ``entry`` is a well-formed :attr:`ExchangeKernel.round_reads` entry."""
    def steps_ok(steps):
        return isinstance(steps, tuple) and all(
            isinstance(st, tuple) and len(st) == 2 and st[0] in names
            and is_real(st[1]) and 0 <= st[1] < float("inf") for st in steps)
    if not _slot_key_ok(entry, 9):
        return False
    first_min, first_full, first_late, later_min, later_full, later_late = entry[3:]
    return (all(steps_ok(x) for x in (first_min, first_full, later_min, later_full))
            and all(isinstance(x, tuple) and all(steps_ok(b) for b in x)
                    for x in (first_late, later_late))
            and len(first_late) == len(later_late))


def _round_cycles_entry_ok(entry, names):
    """Whether ``entry`` is a well-formed :attr:`ExchangeKernel.round_cycles` entry."""
    if not _slot_key_ok(entry, 5):
        return False
    return all(isinstance(x, tuple) and len(x) == entry[1] and all(
        is_int(c) and c >= 0 for c in x) for x in entry[3:])


#: The pulling combine's per-generation tables, each entry keyed ``(arch, top_k, input_bytes)``
#: (one rule: well-formed entries, each key once, a pulling combine): the field, whether an
#: entry is well formed, the entry's fields after the key and what else an entry needs (the
#: error's words; ``{names}``: the latency names).
_SLOT_TABLES = (
    ("late_pulls", _late_pulls_entry_ok, "batches",
     "and non-empty tuples of distinct slots 1 .. top_k - 1"),
    ("round_reads", _round_reads_entry_ok,
     "first_min, first_full, first_late, later_min, later_full, later_late",
     ("steps (latency, count) with latency in {names} and a finite count >= 0 (first_late, "
      "later_late: one tuple of steps per later batch, as many as each other)")),
    ("round_cycles", _round_cycles_entry_ok, "first, later",
     "and top_k ints >= 0 each (cycles with 1 .. top_k valid slots)"),
)


def _slot_row(table, arch, k, input_bytes):
    """The entry of a :data:`_SLOT_TABLES` table for a GPU of generation ``arch``, a top-``k``
    token and ``input_bytes`` per element, without its key: the entry of that generation, else
    one for any (``''``); of that width, else one for any (``0``); ``None`` if there is none."""
    rows = {entry[:3]: entry[3:] for entry in table}
    return next((rows[key] for key in ((arch, k, input_bytes), (arch, k, 0),
                                       ("", k, input_bytes), ("", k, 0)) if key in rows), None)


@dataclasses.dataclass(frozen=True)
class ExchangeKernel:
    """A MoE dispatch/combine kernel family (see the module docstring).

    Attributes
    ----------
    name : str
    dedup : {"node", "rank", "expert", "collective"}
        What one network/link copy stands for: one per (token, destination
        node) then fan-out (``"node"``, with ``forwarding``), one per (token,
        destination rank) (``"rank"``), one per (token, expert) (``"expert"``),
        or the collectives model's all-to-allv (``"collective"``).
    forwarding : bool
        Tokens cross the network to a rail peer once per node, which forwards
        them over the scale-up fabric.
    scale_out : bool
        Can reach ranks outside the sender's load/store domain (over RDMA).
    pipelined : bool
        Network and scale-up stages overlap (chunked buffers): the slower one
        sets the time; otherwise they add.
    local_copy : bool
        A receive part copies the received tokens through local HBM after the
        network part (dispatch: read + write of every received copy; combine:
        read of the ``k`` copies per token and write of the result).
    staging_copy : bool
        The combine's first kernel copies every received copy's expert output
        from the MoE's output tensor into the symmetric receive buffer before
        the barrier (read + write of every received copy through local HBM):
        TensorRT-LLM's ``moeA2APrepareCombineKernel`` when the MoE does not write
        into the workspace (``payload_in_workspace=False``).
    staging_source_bytes : float
        Bytes per hidden element of the MoE output that the staging copy reads, when it
        is wider than what the combine moves: a low-precision combine casts it in the
        staging pass (TensorRT-LLM's ``use_low_precision``: the BF16 output is cast to
        FP8 there, read 2 B and written 1 B per element). The pass reads
        ``max(combine bytes, staging_source_bytes x hidden)`` and writes the combine
        bytes per received copy; ``0``: the combine's own bytes (a plain copy). Unused
        without ``staging_copy``.
    send_staging : bool
        The dispatch's send part first copies each of the rank's own tokens into its local
        symmetric send buffer, then sends from there (read + write of ``tokens x dispatch
        bytes`` through local HBM): pplx-kernels' NVSHMEM kernels (``xBufferIn``).
    chain : tuple of two tuples
        The serial chain of one thread block per (dispatch, combine) phase (see
        "Serial chains" in the module docstring): ``(latency, count)`` pairs, ``latency``
        a key of :data:`EXCHANGE_LATENCY` other than ``peer_load`` and ``count`` one of
        ``"one"``, ``"ranks"`` (once per destination rank of a token, one after the
        other), ``"rounds"`` (once per round of ``pull_threads x pull_vector`` bytes of
        the phase's token) or ``"lane_passes"`` (once per further pass of a one-warp loop
        over the EP ranks, :func:`lane_passes`) or ``"remote_signals"`` (the count warp's
        experts that it signals through the NIC, :meth:`count_walk`; needs ``count_grid``),
        ``"serial_copies"`` or ``"posted_copies"`` (the combine's slowest block's copies, and
        its NIC posts, :meth:`combine_posts`; need ``combine_blocks``) or
        ``"further_copies"`` (those copies after the first) or ``"loadstore"`` (once when the
        phase's copies are load/store stores, none over the network) or ``"network"`` (the
        reverse). A pulling combine's
        peer loads are its pull rounds, not part of this. These steps come before the phase's first
        byte can move or after its last byte lands (fill and drain): they add to the
        transfer.
    interleaved_chain : tuple of two tuples
        Steps of one block's serial chain, in the same form, that run between the copies
        the phase moves (a block's copy -> fence -> post -> next copy; a warp signalling
        counts while the others send): the other blocks' copies keep the links busy
        meanwhile, so the phase's transfer is ``max(links, this chain)``, not their sum
        (lead's rule, session 17 review S17-R1).
    count_grid : tuple of int
        ``()``, or ``(warps, max_blocks)`` for a dispatch whose per-expert token counts are
        sent by the last warp of every block, experts split across the blocks (block ``b``
        takes experts ``b``, ``b + B``, ...), one signal per expert, one after another; the
        grid is ``B = min(max(ceil(E / warps), tokens x k), max_blocks)`` blocks
        (pplx-kernels' NVSHMEM dispatch).
    combine_blocks : int
        ``0``, or the most blocks of a combine whose blocks send their received copies one
        after another (block ``b`` takes copies ``b``, ``b + B``, ...; pplx-kernels' NVSHMEM
        combine: ``B = min(132, E x tokens)``).
    reduce_elements : int
        ``0``, or the hidden elements one block of such a combine sums per pass of its
        receive part, each pass taking the token's ``k`` copies one after another (an index
        load, then the copy's load: pplx-kernels' gatherKernel, 256 threads x 8 elements):
        :meth:`receive_reduce`. Needs ``combine_blocks``.
    reduce_stages : int
        ``0``, or the shared-memory stages into which one warp of the combine's receive part
        loads each of a token's ``k`` received copies whole for its block's reduction warps
        (DeepEP's low-latency combine since #345: a TMA load warp and 14 reduction warps per
        token): one token's sum is then its top-k ids' load and ``ceil(k / reduce_stages)``
        dependent loads of copies the peers have just stored (L2), a floor under the phase's
        receive copy (:meth:`receive_floor`).
    put_vector : int
        ``0``, or the bytes one warp copies per dependent load when such a combine's block puts
        a copy to a load/store peer (NVSHMEM's warp memcpy: 32 lanes x 16 B, a load then its
        store per step): each such copy adds ``ceil(bytes / put_vector)`` L2 hits to the
        block's chain before its fence (charged with the combine's per-copy release fences); a
        chain step counted in ``"put_rounds"`` uses it for a phase's token. Needs
        ``combine_blocks``.
    cycles : tuple of two tuples
        Per (dispatch, combine) phase the phase's cycle table: ``(name, cycles)`` pairs (or a
        mapping), each a count of :data:`_CYCLE_COUNTS` (``"claim_cycles"``, ``"put_cycles"``,
        ...): the cycles the phase's compiled code schedules outside the loads its chain
        charges, an int >= 0, or for a count of several parts (``"payload_cycles"``,
        ``"copy_cycles"``) a tuple of that many. A ``("cycle", step)`` chain step charges the
        count of its own phase that names ``step`` (:meth:`chain_latency`); a count used outside
        the chain (the combine's fenced copies' ``"put_cycles"`` and ``copy_cycles[2]``,
        :func:`analysis.moe_exchange`) is read with :meth:`cycle`. ``0`` or ``()`` is no count.
        Kept sorted by name (equal tables compare equal). Each count is read from a build's
        SASS (``sources[name]``; its Parameter is ``<kernel>.<name>``, one value, or
        ``dispatch+combine`` when the phases' differ).
    send_grid : int
        ``0``, or the experts each block of a dispatch whose blocks send tokens in turn takes:
        the grid is ``B = ceil(E / send_grid)`` blocks, block ``b`` sends tokens ``b``, ``b +
        B``, ..., and each token's copies end in a release fence that the block's next token
        waits for (its sending warps are among the threads of the next token's barrier):
        :meth:`send_waves`, the ``"further_waves"`` chain steps, and one release fence per
        wave in one load/store domain (DeepEP low-latency's dispatch).
    send_grid_experts : tuple of int
        ``()``, or the (fewest, most) routed experts for which ``send_grid`` holds, where the
        code sets it from the device (DeepEP d28bd67: ``ceil(E / SMs)`` experts a block) and
        the chip's SM count is not known (:attr:`fabric.ChipSpec.sms` 0): :meth:`send_waves`
        refuses other expert counts there.
    send_grid_sms : bool
        The dispatch's experts a block are ``ceil(E / S)`` for a device of ``S`` SMs (DeepEP
        d28bd67's ``num_warp_groups``): where the chip's SM count is known,
        :meth:`send_waves` takes its grid from it, ``ceil(E / ceil(E / S))`` blocks;
        ``send_grid`` and ``send_grid_experts`` stand where it is not. Needs ``send_grid``.
    receive_vector : int
        ``0``, or the bytes the dispatch's receiving block copies per dependent load when it
        copies a received token out of the receive buffer (its threads x 16 B, a load then its
        store per round: pplx's scatterKernel): :meth:`receive_rounds`, the
        ``"walk_token_rounds"`` chain steps.
    pointer_overlap : tuple of (str, int)
        ``(arch, n)`` entries: as compiled for a GPU of generation ``arch`` the loads of the
        first ``n`` destinations' rows of the kernel's per-rank pointer table go out together,
        each later one after the one before returns (:meth:`pointer_loads`); a generation
        without an entry loads every row after the one before (``n = 1``).
    walk_slot_bytes : int
        ``0``, or the bytes of one slot of the received counts the dispatch's receiving blocks
        walk (pplx's uint32 ``numTokensPerDP``): with the L1's 32-B sector fill
        (``exchange.l1_sector``) every sector after the first costs its first load an L2 trip:
        :meth:`walk_sectors`, the ``"walk_sectors"`` and ``"walk_slot_hits"`` chain steps.
    stage_vector : tuple of int
        ``()``, or per (dispatch, combine) phase the bytes a block's staging copy of a token
        moves per dependent load (its threads x 16 B, a load then its store per step: pplx's
        copy into the symmetric buffer before a put; DeepEP's and NCCL EP's low-latency
        combine through shared memory with TMA), ``0`` for a phase that stages no copy (their
        dispatch copies with warps): the chain counts ``"stage_rounds"``,
        ``"further_stage_rounds"`` and ``"loadstore_stage_rounds"`` use the phase's entry.
    kernels : tuple of int
        Kernels launched per (dispatch, combine) phase.
    syncs : tuple of int
        Cross-rank synchronisations per (dispatch, combine) phase.
    message_header : int
        Bytes of per-message metadata the kernel adds to each dispatched token.
    pull_threads, pull_vector : int
        For a combine that **pulls** (remote loads): threads that load one token
        and bytes each loads per step; ``0`` for kernels that push. Each step's
        loads must return before the next step's issue, so the combine takes at
        least ``ceil(bytes per token / (pull_threads x pull_vector))`` round trips.
    late_pulls : tuple of (str, int, int, tuple)
        For a pulling combine, ``(arch, top_k, input_bytes, batches)`` entries: on a GPU of
        generation ``arch`` (``""``: any generation) with ``top_k`` experts per token and a
        combine input of ``input_bytes`` per element (``0``: any width) the compiled kernel
        issues a round's peer loads in batches, each batch only after the one before has
        returned; ``batches`` lists the top-k slots of the batches after the first (the first
        holds the other slots, slot 0 among them). A batch holding a valid slot (a rank the
        token's earlier slots do not hold; the dispatch marks repeats ``-1`` and the combine
        skips them) costs the round one more peer round trip; slot 0 is always valid, so a
        round takes ``1 +`` (later batches with a valid slot) trips (:meth:`late_batches`).
        ``()``: every load of a round goes out together. Read from the kernel's instruction
        schedule as compiled for each generation (``sources["late_pulls"]``).
    round_reads : tuple of (str, int, int, tuple, tuple, tuple, tuple, tuple, tuple)
        For a pulling combine, ``(arch, top_k, input_bytes, first_min, first_full, first_late,
        later_min, later_full, later_late)`` entries (keys as ``late_pulls``): the dependent
        loads that the compiled loop puts on each round's critical path besides its peer
        loads, beyond what the combine chain and the late batches' row fetch already charge
        (round 1: the send-index and target-rank L2 loads and one constant L1.5 row fetch),
        as ``(latency, count)`` steps (latency names of :data:`EXCHANGE_LATENCY`). ``first_*``
        is round 1, ``later_*`` each round after it; ``*_min`` with only slot 0 valid,
        ``*_full`` with every slot of the first batch valid (a distinct rank), ``*_late`` one
        tuple of steps per later batch, in the order of its trip, added when it holds a valid
        slot (:meth:`round_read_latency`). Read by a scoreboard walk of the loop's SASS
        (``sources["round_reads"]``).
    round_cycles : tuple of (str, int, int, tuple, tuple)
        For a pulling combine, ``(arch, top_k, input_bytes, first, later)`` entries (keys as
        ``late_pulls``): the cycles the compiled loop issues in round 1 (with the code between
        the block's barrier and it) and in each later round beyond the loads the chain,
        :attr:`round_reads` and the late batches' row fetch charge, for a token of ``d`` = 1 ..
        ``top_k`` valid slots (``first[d - 1]``, ``later[d - 1]``): each the least over the slot
        patterns of ``d`` or more valid slots and the placements of their pointer rows in the
        constant bank (a lower bound for every token, never less for more ranks); between two
        slot counts linear in the token's (expected) distinct ranks
        (:meth:`round_read_latency`). Read by a scoreboard walk of the loop's SASS
        (``sources["round_cycles"]``).
    block_per_token : bool
        Each token's whole exchange is one thread block's work (TensorRT-LLM's one block
        per token): a phase cannot move a token faster than one block's rate
        (:data:`EXCHANGE_BLOCK_RATE`; see "Block rate" in the module docstring).
    sync_steps : tuple of (str, int)
        Dependent steps a further barrier inside one load/store domain takes before its flag
        goes out, beyond the store-and-spin handoff (``analysis._runtime_cost.flag_barrier``):
        ``(latency name, count)`` pairs of :data:`EXCHANGE_LATENCY`, as compiled
        (``sources["sync_steps"]``; DeepEP's ``barrier_device``: the own slot's atomic waited
        by the fence, then the peer pointer's reload).
    release_fence : tuple of bool
        Per (dispatch, combine) phase: the phase pushes stores into peers' memory and
        then releases them (a ``fence.release.sys``, a release store or a release
        atomic) before its flag, so the flag waits for the stores' acknowledgement:
        one peer round trip (see "Release fences" in the module docstring).
    qp_signals : tuple of str
        ``()``, or per (dispatch, combine) phase how its RDMA atomics follow its RDMA writes
        on one RC queue pair to a rank across the network: ``"each"`` (every message is a
        write, then its signal's atomic: NVSHMEM's put-with-signal; the messages to one peer
        spread over ``qp_per_peer`` queue pairs), ``"last"`` (one atomic per queue pair,
        after all its writes: DeepEP low-latency's count and flag) or ``""`` (none). Under
        :data:`EXCHANGE_ADAPTIVE_ROUTING` each such atomic waits one network round trip (see
        "Atomics after writes on one queue pair"; :meth:`qp_atomics`).
    qp_per_peer : int
        ``0``, or the RC queue pairs a rank spreads its messages to one peer over (NVSHMEM
        3.2.5's ``NVSHMEM_IBGDA_NUM_RC_PER_PE``, default 2, by CTA). Needed by a ``"each"``
        phase of ``qp_signals``.
    qp_chunk : int
        Tokens a ``"each"`` message carries to its peer before its signal's atomic: 1 where
        every token is its own put-with-signal (pplx), a kernel's chunk where a write of
        several tokens is followed by one tail signal (DeepEP normal's RDMA chunk).
    sources : tuple of (field, source)
    """

    name: str
    dedup: str
    forwarding: bool
    scale_out: bool
    pipelined: bool
    local_copy: bool
    kernels: tuple
    syncs: tuple
    message_header: int = 0
    pull_threads: int = 0
    pull_vector: int = 0
    staging_copy: bool = False
    chain: tuple = ((), ())
    interleaved_chain: tuple = ((), ())
    sources: tuple = ()
    release_fence: tuple = (False, False)
    block_per_token: bool = False
    staging_source_bytes: float = 0.0
    send_staging: bool = False
    count_grid: tuple = ()
    combine_blocks: int = 0
    late_pulls: tuple = ()
    reduce_elements: int = 0
    reduce_stages: int = 0
    put_vector: int = 0
    cycles: tuple = ((), ())
    stage_vector: tuple = ()
    send_grid: int = 0
    send_grid_experts: tuple = ()
    send_grid_sms: bool = False
    receive_vector: int = 0
    pointer_overlap: tuple = ()
    walk_slot_bytes: int = 0
    round_reads: tuple = ()
    round_cycles: tuple = ()
    sync_steps: tuple = ()
    qp_signals: tuple = ()
    qp_per_peer: int = 0
    qp_chunk: int = 1

    def __post_init__(self):
        text_of(self.name, "exchange kernel name")
        check_choice(self.dedup, "dedup", ("node", "rank", "expert", "collective"))
        for field in ("forwarding", "scale_out", "pipelined", "local_copy", "staging_copy",
                      "send_staging", "block_per_token",
                      "send_grid_sms"):   # 'no' or 1 would be read as True
            object.__setattr__(self, field, flag_of(getattr(self, field), field))
        object.__setattr__(self, "message_header", check_count(
            self.message_header, "message_header", 0, "an int of bytes >= 0"))
        if self.forwarding and self.dedup != "node":
            raise SpecError("forwarding needs dedup='node' (one network copy per node)")
        for field in ("pull_threads", "pull_vector"):
            object.__setattr__(self, field, check_count(getattr(self, field), field, 0,
                                                        "an int >= 0"))
        if bool(self.pull_threads) != bool(self.pull_vector):
            raise SpecError("pull_threads and pull_vector are both set (a pulling combine) or "
                             "both 0")
        check_number("staging_source_bytes", self.staging_source_bytes,
                     unit=" bytes per element")
        due = "two bools (dispatch, combine)"
        if len(_tuple_of(self.release_fence, "release_fence", due, is_bool, "a bool")) != 2:
            raise SpecError(f"release_fence must be {due}, got {show_value(self.release_fence)}")
        for field in ("kernels", "syncs"):
            due = "two ints >= 0 (dispatch, combine)"
            v = _tuple_of(getattr(self, field), field, due, is_int, "an int")
            if len(v) != 2 or any(x < 0 for x in v):
                raise SpecError(f"{field} must be {due}, got {show_value(v)}")
        due = ("() or two ints >= 0, not both 0 (dispatch, combine bytes per staging round; "
               "0: the phase stages no copy)")
        v = _tuple_of(self.stage_vector, "stage_vector", due, is_int, "an int")
        if v != () and (len(v) != 2 or any(x < 0 for x in v) or not any(v)):
            raise SpecError(f"stage_vector must be {due}, got {show_value(v)}")
        names = set(EXCHANGE_LATENCY["hopper"]) - {"peer_load"}
        for field in ("chain", "interleaved_chain"):
            due = "a (dispatch, combine) pair of tuples of (latency, count) steps"
            v = _tuple_of(getattr(self, field), field, due, _is_tuple, "a tuple of steps")
            if len(v) != 2:
                raise SpecError(f"{field} must be {due}, got {show_value(v)}")
            for i, phase in enumerate(v):
                _tuple_of(phase, f"{field}[{i}]", "a tuple of (latency, count) steps",
                          _is_tuple, "a (latency, count) tuple")
        self._check_cycles()
        for field, entry_ok, form, needs in _SLOT_TABLES:
            due = f"(arch, top_k, input_bytes, {form}) entries"
            v = _tuple_of(getattr(self, field), field, f"a tuple of {due}", _is_tuple,
                          "a tuple")
            for e in v:   # the key's kinds (the rest of an entry is its table's values)
                if len(e) >= 3:
                    text_of(e[0], f"each arch of {field}")
                    for x in e[1:3]:
                        if not is_int(x):
                            raise kind_error(x, f"each top_k and input_bytes of {field}",
                                             "an int")
            if not all(entry_ok(e, names) for e in v):
                raise SpecError(
                    f"{field} must be {due}: arch '' or one "
                    f"of {sorted(EXCHANGE_LATENCY)}, ints top_k >= 1 and input_bytes >= 0, "
                    f"{needs.format(names=sorted(names))}, got {show_value(v)}")
            if len({p[:3] for p in v}) != len(v):
                raise SpecError(f"{field} names an (arch, top_k, input_bytes) twice: "
                                f"{show_value(v)}")
            if v and not self.pull_threads:
                raise SpecError(f"{field} needs a pulling combine (pull_threads and "
                                 f"pull_vector)")
        v = _tuple_of(self.sync_steps, "sync_steps", "a tuple of (latency, count) pairs",
                      _is_tuple, "a (latency, count) tuple")
        _entry_kinds(v, "sync_steps", "latency")
        if any(len(e) != 2 or e[0] not in names or e[1] < 1 for e in v):
            raise SpecError(f"sync_steps must be (latency, count) pairs, latency in "
                             f"{sorted(names)} and count an int >= 1, got {show_value(v)}")
        v = _tuple_of(self.pointer_overlap, "pointer_overlap", "a tuple of (arch, n) entries",
                      _is_tuple, "an (arch, n) tuple")
        _entry_kinds(v, "pointer_overlap", "arch")
        if any(len(e) != 2 or e[0] not in EXCHANGE_LATENCY or e[1] < 1 for e in v) or len(
                {e[0] for e in v}) != len(v):
            raise SpecError(f"pointer_overlap must be (arch, n) entries, one per arch in "
                             f"{sorted(EXCHANGE_LATENCY)}, n an int >= 1, got {show_value(v)}")
        for field in ("combine_blocks", "reduce_elements", "reduce_stages", "put_vector",
                      "send_grid", "receive_vector", "walk_slot_bytes"):
            object.__setattr__(self, field, check_count(getattr(self, field), field, 0,
                                                        "an int >= 0"))
        due = "() or two ints >= 1 (warps per block, most blocks)"
        v = _tuple_of(self.count_grid, "count_grid", due, is_int, "an int")
        if v != () and (len(v) != 2 or any(x < 1 for x in v)):
            raise SpecError(f"count_grid must be {due}, got {show_value(v)}")
        due = "() or two of '', 'each', 'last' (dispatch, combine)"
        v = _tuple_of(self.qp_signals, "qp_signals", due, lambda x: isinstance(x, str), "a str")
        if v != () and (len(v) != 2 or any(x not in ("", "each", "last") for x in v)):
            raise SpecError(f"qp_signals must be {due}, got {show_value(v)}")
        object.__setattr__(self, "qp_per_peer", check_count(self.qp_per_peer, "qp_per_peer", 0,
                                                            "an int >= 0"))
        object.__setattr__(self, "qp_chunk", check_count(self.qp_chunk, "qp_chunk", 1,
                                                         "an int of tokens >= 1"))
        if "each" in self.qp_signals and not self.qp_per_peer:
            raise SpecError("qp_signals 'each' needs qp_per_peer (the queue pairs a rank's "
                             "messages to one peer spread over)")
        due = "() or two ints 1 <= fewest <= most (the routed experts send_grid holds for)"
        v = _tuple_of(self.send_grid_experts, "send_grid_experts", due, is_int, "an int")
        if v != () and (len(v) != 2 or any(x < 1 for x in v) or v[0] > v[1]):
            raise SpecError(f"send_grid_experts must be {due}, got {show_value(v)}")
        if v and not self.send_grid:
            raise SpecError("send_grid_experts needs send_grid (the experts per dispatch block)")
        if self.send_grid_sms and not self.send_grid:
            raise SpecError("send_grid_sms needs send_grid (the experts per dispatch block where "
                            "the chip's SM count is not known)")
        for i, phase in enumerate(self.chain + self.interleaved_chain):
            for step in phase:
                for x in step:
                    text_of(x, "each part of a chain step (latency, count)")
                if (len(step) != 2 or step[0] not in names
                        or (step[1] not in _CHAIN_COUNTS and step[1] not in _CYCLE_STEPS)):
                    raise SpecError(f"a chain step is (latency, count) with latency in "
                                     f"{sorted(names)} and count in "
                                     f"{list(_CHAIN_COUNTS) + list(_CYCLE_STEPS)}, got "
                                     f"{show_value(step)}")
                if step[1] in _CYCLE_STEPS:
                    cycles = _CYCLE_STEPS[step[1]][0]
                    if not self.cycle(cycles, i % 2):
                        raise SpecError(f"a chain step counted in {step[1]} needs {cycles} "
                                         f"({_CYCLE_COUNTS[cycles].what}) in the "
                                         f"{_PHASES[i % 2]}'s cycles")
                if step[1] == "rounds" and not self.pull_threads:
                    raise SpecError("a chain step counted in rounds needs pull_threads and "
                                     "pull_vector (the block's bytes per round)")
                need = _CHAIN_COUNT_NEEDS.get(step[1])
                if need and not self._phase_field(need[0], i % 2):
                    raise SpecError(f"a chain step counted in {step[1]} needs {need[0]}"
                                     f"{need[1]}{self._phase_entry(need[0], i % 2)}")
        for field, need, what in _FIELD_NEEDS:
            if getattr(self, field) and not getattr(self, need):
                raise SpecError(f"{field} needs {need} ({what})")
        for phase, table in enumerate(self.cycles):
            for name, _ in table:
                need = _CYCLE_COUNTS[name].needs
                if need and not (self.cycle(need[0], phase) if need[0] in _CYCLE_COUNTS
                                 else self._phase_field(need[0], phase)):
                    raise SpecError(f"{name} needs {need[0]} ({need[1]})"
                                     f"{self._phase_entry(need[0], phase)}")
        for field in dataclasses.fields(self):
            object.__setattr__(self, field.name, _python_numbers(getattr(self, field.name)))

    def _phase_field(self, field, phase):
        """Kernel field ``field`` as ``phase`` (0 dispatch, 1 combine) has it: a per-phase
        pair's own entry (:attr:`stage_vector`'s), any other field whole."""
        v = getattr(self, field)
        return v[phase] if field == "stage_vector" and v else v

    def _phase_entry(self, field, phase):
        """Where per-phase ``field`` is set but not for ``phase``: the words naming that
        phase's entry (for an error), else ``''``."""
        return (f" in its {_PHASES[phase]} entry" if field == "stage_vector"
                and self.stage_vector and not self.stage_vector[phase] else "")

    def _check_cycles(self):
        """Check :attr:`cycles` and keep each phase's table as ``(name, cycles)`` pairs sorted
        by name, without the empty ones."""
        due = "a (dispatch, combine) pair of cycle tables"
        v = _tuple_of(self.cycles, "cycles", due)
        if len(v) != 2:
            raise SpecError(f"cycles must be {due}, got {show_value(v)}")
        tables = []
        for phase, table in zip(_PHASES, v):
            due = f"the {phase}'s cycles"
            if isinstance(table, collections.abc.Mapping):
                pairs = tuple(table.items())
            else:
                pairs = _tuple_of(table, due, "(name, cycles) pairs or a mapping", _is_tuple,
                                  "a (name, cycles) tuple")
            if any(len(e) != 2 for e in pairs):
                raise SpecError(f"{due} must be (name, cycles) pairs or a "
                                 f"mapping, got {show_value(table)}")
            seen, checked = set(), []
            for name, value in pairs:
                text_of(name, f"each name of the {phase}'s cycles")   # ['x'] is unhashable
                if name not in _CYCLE_COUNTS:
                    raise SpecError(f"the {phase}'s cycles: "
                                    + unknown_fault(name, "cycle count", _CYCLE_COUNTS))
                if name in seen:
                    raise SpecError(f"the {phase}'s cycles name {name} twice")
                seen.add(name)
                parts = _CYCLE_COUNTS[name].parts
                if not parts:
                    value = check_count(value, name, 0, "an int >= 0")
                if parts:
                    many = _WORDS.get(len(parts), len(parts))
                    due = f"() or {many} ints >= 0 ({', '.join(parts)})"
                    _tuple_of(value, name, due, is_int, "an int")
                    if value != () and (len(value) != len(parts) or any(x < 0 for x in value)):
                        raise SpecError(f"{name} must be {due}, got {show_value(value)}")
                checked.append((name, value))
            tables.append(tuple(sorted((n, c) for n, c in checked if c)))
        object.__setattr__(self, "cycles", tuple(tables))

    def cycle(self, name, phase):
        """The cycle count ``name`` of :data:`_CYCLE_COUNTS` in ``phase``'s (0 dispatch, 1
        combine) cycle table (:attr:`cycles`): an int, or a tuple for a count of several parts;
        ``0`` or ``()`` when the phase has none.

        >>> k = exchange_kernel("pplx")
        >>> k.cycle("stage_cycles", 0), k.cycle("stage_cycles", 1), k.cycle("copy_cycles", 1)
        (89, 35, (206, 77, 208))
        >>> exchange_kernel("one-sided").cycle("copy_cycles", 1)
        ()
        """
        lookup(_CYCLE_COUNTS, name, "cycle count")
        return dict(self.cycles[_phase_index(phase)]).get(
            name, () if _CYCLE_COUNTS[name].parts else 0)

    def with_cycles(self, phase, **counts):
        """This kernel with ``phase``'s (0 dispatch, 1 combine) cycle counts set to ``counts``
        (``0`` or ``()`` removes one); the kernel's checks apply.

        >>> k = exchange_kernel("one-sided").with_cycles(0, claim_cycles=100)
        >>> k.cycle("claim_cycles", 0), k.name
        (100, 'one-sided')
        >>> k.with_cycles(2, claim_cycles=1)
        Traceback (most recent call last):
        ...
        fabric.SpecError: phase must be 0 (dispatch) or 1 (combine), got phase=2
        """
        phase = _phase_index(phase)
        table = dict(self.cycles[phase])
        table.update(counts)
        tables = list(self.cycles)
        tables[phase] = tuple(table.items())
        return dataclasses.replace(self, cycles=tuple(tables))

    def late_batches(self, k, input_bytes, arch):
        """The batches of top-k slots whose peer loads a round issues one after another, after
        the first batch, for a token of ``k`` experts, a combine input of ``input_bytes`` per
        element and a GPU of generation ``arch`` (:attr:`late_pulls`: the entry of that
        generation, else one for any; of that width, else one for any), or ``()``.

        >>> k = exchange_kernel("one-sided")
        >>> k.late_batches(8, 2, "blackwell"), k.late_batches(8, 2, "hopper"), k.late_batches(4, 2, "hopper")
        (((7,),), ((4, 5, 6, 7),), ())
        >>> k13 = exchange_kernel("one-sided-1.3")
        >>> k13.late_batches(8, 1, "blackwell"), k13.late_batches(8, 1, "hopper")
        (((1, 2, 3), (4, 5, 6, 7)), ())
        """
        _latency_table(arch)
        row = _slot_row(self.late_pulls, arch, k, input_bytes)
        return row[0] if row else ()

    def round_read_latency(self, k, input_bytes, arch, rounds, distinct, late):
        """Seconds of a pulled combine's non-peer dependent loads over ``rounds`` rounds beyond
        those charged elsewhere (:attr:`round_reads`), and their Parameters: round 1's steps
        plus ``rounds - 1`` times a later round's, for a token of ``distinct`` distinct ranks
        (``*_min`` at one, ``*_full`` at ``top_k``, linear between: an assumption) with
        ``late`` expected later-batch trips per round (whole batches' steps, then that fraction
        of the next). No entry for the key (looked up as :meth:`late_batches`): ``(0.0, ())``.

        >>> k = exchange_kernel("one-sided")
        >>> t, used = k.round_read_latency(8, 2, "blackwell", 4, 8, 1.0)
        >>> round(t * 1e9, 1), sorted(p.name for p in used)[:2]
        (1387.8, ['exchange.latency.blackwell.const_l1', 'exchange.latency.blackwell.const_l15'])
        >>> round(k.round_read_latency(8, 2, "blackwell", 4, 2, 0.0)[0] * 1e9, 1)
        807.1
        >>> k.round_read_latency(8, 2, "blackwell", 0, 8, 1.0)
        (0.0, ())
        """
        lat = _latency_table(arch)
        row = _slot_row(self.round_reads, arch, k, input_bytes)
        spent = _slot_row(self.round_cycles, arch, k, input_bytes)
        if (row is None and spent is None) or rounds < 1:
            return 0.0, ()
        first_min, first_full, first_late, later_min, later_full, later_late = (
            row if row is not None else ((), (), (), (), (), ()))
        v = min(max((float(distinct) - 1.0) / max(k - 1, 1), 0.0), 1.0)
        late = min(max(float(late), 0.0), float(len(first_late)))
        used = []

        def cost(steps, weight=1.0):
            total = 0.0
            for name, count in steps:
                if weight * count:
                    total += weight * count * lat[name].value
                    if lat[name] not in used:
                        used.append(lat[name])
            return total

        def batches(per_batch):
            whole = int(late)
            total = sum(cost(b) for b in per_batch[:whole])
            if whole < len(per_batch):
                total += cost(per_batch[whole], late - whole)
            return total

        def issued(per_count):
            """The cycles of ``spent`` at the token's distinct ranks, as a step (linear
            between the two slot counts around it)."""
            d = min(max(float(distinct), 1.0), float(k))
            lo = int(d)
            hi = min(lo + 1, k)
            return (("cycle", per_count[lo - 1] + (d - lo) * (per_count[hi - 1]
                                                              - per_count[lo - 1])),)

        first = cost(first_min, 1.0 - v) + cost(first_full, v) + batches(first_late)
        if spent is not None:
            first += cost(issued(spent[0]))
        if rounds < 2:              # no later round: its steps neither cost nor are used
            return first, tuple(used)
        later = cost(later_min, 1.0 - v) + cost(later_full, v) + batches(later_late)
        if spent is not None:
            later += cost(issued(spent[1]))
        return first + (rounds - 1) * later, tuple(used)

    def pointer_loads(self, ranks, arch):
        """Loads of a payload's per-destination pointer rows that each wait for the one before,
        for a token of ``ranks`` distinct destination ranks on a GPU of generation ``arch``:
        the first ``n`` rows' loads go out together (:attr:`pointer_overlap`, default ``n =
        1``), each later one after the one before returns: ``ranks - n + 1``, at least one
        when there is a destination. ``ranks`` may be an expected (fractional) count.

        >>> k = exchange_kernel("one-sided")
        >>> k.pointer_loads(8, "blackwell"), k.pointer_loads(8, "hopper"), k.pointer_loads(1, "hopper")
        (8.0, 7.0, 1.0)
        >>> k.pointer_loads(0, "blackwell")
        0.0
        """
        _latency_table(arch)
        n = dict(self.pointer_overlap).get(arch, 1)
        ranks = check_number("ranks", ranks)
        return max(ranks - n + 1, min(ranks, 1.0))

    def qp_atomics(self, phase, messages):
        """RDMA atomics after writes on the phase's busiest queue pair to a rank across the
        network, ``messages`` the phase's expected messages to one such rank (``0``: none
        crosses the network): ``ceil(messages / (qp_chunk x qp_per_peer))`` where each
        message's write (``qp_chunk`` tokens) is followed by its atomic (``"each"``), one
        where each queue pair's writes end in one (``"last"``), none otherwise (see
        :attr:`qp_signals`).

        >>> k = exchange_kernel("pplx")
        >>> k.qp_atomics(0, 128 * 8 / 16), k.qp_atomics(0, 8 / 16), k.qp_atomics(1, 0)
        (32, 1, 0)
        >>> exchange_kernel("deepep-low-latency").qp_atomics(0, 64.0)
        1
        >>> exchange_kernel("one-sided").qp_atomics(0, 64.0)
        0
        """
        messages = check_number("messages", messages)
        mode = self.qp_signals[phase] if self.qp_signals else ""
        if not mode or messages == 0:
            return 0
        if mode == "last":
            return 1
        return math.ceil(messages / (self.qp_chunk * self.qp_per_peer))

    def count_walk(self, experts, k, tokens, domains):
        """``(remote, passes)`` of the slowest count warp (see ``count_grid``): of the experts
        ``0 .. experts - 1`` (expert ``e`` on EP rank ``min(e // max(experts // ep, 1), ep -
        1)``, ``ep = len(domains)``: when ``ep`` does not divide the experts the last rank
        holds the rest), the ones one warp walks and those of them on a rank whose load/store
        domain (``domains[rank]``) is not the sender's, for the warp and sender domain with
        the most remote ones (then the most passes).
        ``(0, 0)`` without ``count_grid``.

        >>> k = exchange_kernel("pplx")
        >>> k.count_walk(256, 8, 1, [0] * 8 + [1] * 8)     # 26 blocks, 10 experts, 5 remote
        (5, 10)
        >>> k.count_walk(256, 8, 128, [0] * 8)             # 132 blocks, one node
        (0, 2)
        """
        if not self.count_grid:
            return (0, 0)
        warps, most = self.count_grid
        ep = len(domains)
        per_rank = max(experts // ep, 1)
        blocks = min(max(-(-experts // warps), tokens * k), most)
        owner = [domains[min(e // per_rank, ep - 1)] for e in range(experts)]
        worst = (0, 0)
        for d in dict.fromkeys(domains):
            for b in range(min(blocks, experts)):
                walk = owner[b::blocks]
                worst = max(worst, (sum(1 for o in walk if o != d), len(walk)))
        return worst

    def receive_walk(self, experts, k, tokens, ep, sources=None):
        """``(slots, tokens)`` of the dispatch's slowest receiving block (see ``count_grid``):
        the (local expert, source rank) slots of the received counts it walks beyond the first,
        and the received tokens it copies, when the ranks ``sources`` names (default all; the
        first ``sources``, or their positions) each send ``tokens`` tokens, or the ``ep`` ranks
        send the counts ``tokens`` lists (``sources`` then None): :func:`held_counts`.

        pplx-kernels 7af3059's scatterKernel, after its grid sync: block ``b`` copies received
        tokens ``b``, ``b + B``, ... (``B`` the grid: sized by ``maxNumTokens``, here
        ``tokens``, or the most any rank sends, on every rank alike), finding each by walking
        the ``experts / ep x ep`` slots in order with state kept across its tokens (every rank
        sends every expert its count, zero included), and its loop runs on past its last token
        to the end of the slots: every block walks them all; the block with the last of the
        :func:`received_copies` (expected: ``tokens x sources`` or the counts' sum, ``x k /
        ep``) holds the most of them, ``ceil(that / B)``. ``(0, 0)`` without ``count_grid``.

        >>> k = exchange_kernel("pplx")
        >>> k.receive_walk(256, 8, 1, 16), k.receive_walk(256, 8, 128, 8)
        ((255, 1), (255, 8))
        >>> k.receive_walk(256, 8, 128, 8, sources=2)     # 256 copies over 132 blocks
        (255, 2)
        >>> k.receive_walk(256, 8, [128, 64, 0, 0, 0, 0, 0, 0], 8)   # 192 over 132 blocks
        (255, 2)
        """
        if not self.count_grid:
            return (0, 0)
        held = held_counts(tokens, ep, sources)
        grid, sent = max(held), sum(held)
        warps, most = self.count_grid
        blocks = min(max(-(-experts // warps), grid * k), most)
        slots = max(experts // ep, 1) * ep
        return (slots - 1, serial_copies(received_copies(sent, k, ep), blocks))

    def walk_wraps(self, experts, ep):
        """Local experts the dispatch's receive walk (:meth:`receive_walk`) leaves before its
        last, each by the longer path to the next expert's first slot (see
        ``walk_wrap_cycles``): ``max(experts // ep, 1) - 1``; ``0`` without ``walk_wrap_cycles``.

        pplx-kernels 7af3059's scatterKernel (l.198-206): when ``++dp == numDPGroups`` the
        walk resets ``dp``, records ``start`` and moves to the next expert; after the last
        expert it breaks out (the walk's end, not counted).

        >>> k = exchange_kernel("pplx")
        >>> k.walk_wraps(256, 8), k.walk_wraps(256, 128), k.walk_wraps(256, 512)
        (31, 1, 0)
        >>> exchange_kernel("one-sided").walk_wraps(256, 8)
        0
        """
        if not self.cycle("walk_wrap_cycles", 0):
            return 0
        experts, ep = (check_count(v, name, 1, "an int >= 1")
                       for name, v in (("experts", experts), ("ep", ep)))
        return max(experts // ep, 1) - 1

    def receive_rounds(self, nbytes):
        """Dependent rounds of the dispatch's receiving block's copy of one received token of
        ``nbytes`` (see ``receive_vector``): ``ceil(nbytes / receive_vector)``; ``0`` without
        ``receive_vector``.

        pplx-kernels 7af3059's scatterKernel copies each received token out of xBufferOut with
        ``k += blockDim.x`` (SASS 0x43c0-0x45b0 for sm_90a: LDG.E.128 -> STG.E.128 per
        iteration, the next load issued after the store): 320 threads x 16 B = 5120 B a round,
        so a DeepSeek FP8 token (7168 + 224 B) takes 2.

        >>> exchange_kernel("pplx").receive_rounds(7168 + 224), exchange_kernel("pplx").receive_rounds(5120)
        (2, 1)
        """
        if not self.receive_vector:
            return 0
        return math.ceil(nbytes / self.receive_vector)

    def walk_sectors(self, walk_slots):
        """L1 sectors the dispatch's receive walk enters after its first, for ``walk_slots``
        slots walked beyond the first (:meth:`receive_walk`): ``ceil((walk_slots + 1) x
        walk_slot_bytes / exchange.l1_sector) - 1``; ``0`` without ``walk_slot_bytes``.

        The L1 fills a miss by 32-B sectors, not 128-B lines (NVIDIA, for Volta and later), so
        the walk's load of the first slot of each new sector goes to L2: pplx-kernels
        7af3059's scatterKernel walks 256 uint32 slots (SASS 0x3f90-0x4110: the next slot's
        LDG.E.CONSTANT at 0x40e0, waited for before the branch), 32 sectors, 31 after the
        first.

        >>> exchange_kernel("pplx").walk_sectors(255), exchange_kernel("pplx").walk_sectors(7)
        (31, 0)
        """
        if not self.walk_slot_bytes:
            return 0
        w = check_count(walk_slots, "walk_slots", 0, "an int >= 0")
        return -(-(w + 1) * self.walk_slot_bytes // int(EXCHANGE_L1_SECTOR.value)) - 1

    def send_walk(self, tokens):
        """Tokens the dispatch's send loop walks before the block holding the last token
        reaches it (see ``count_grid``): ``tokens - 1``, ``0`` without ``count_grid``.

        pplx-kernels 7af3059's scatterKernel loops over every token in every block: for each,
        warp 0 loads the token's expert ids and counts them into the block's shared
        ``tokenIndex`` (the slot of the block's next token depends on every earlier one), and
        the block's own token waits at ``bar.sync 1`` for warp 0: the block holding token
        ``tokens - 1`` walks all the tokens before it, one dependent load each (an L1 hit once
        the count warp has read the line; in the SASS the load's result addresses the shared
        counter's load and store before the next iteration).

        >>> k = exchange_kernel("pplx")
        >>> k.send_walk(1), k.send_walk(128), exchange_kernel("one-sided").send_walk(128)
        (0, 127, 0)
        """
        if not self.count_grid:
            return 0
        return max(int(tokens) - 1, 0)

    def send_waves(self, experts, tokens, sms=0):
        """Tokens a dispatch block sends after its first, for the block with the most (see
        ``send_grid``): ``ceil(tokens / B) - 1``, ``B = ceil(experts / send_grid)`` the grid;
        ``0`` without ``send_grid``. With ``send_grid_sms`` and a device of ``sms`` SMs
        (``0``: not known) the experts a block are ``ceil(experts / sms)`` instead.

        DeepEP de8cfca's low-latency dispatch (``internode_ll.cu``, SASS loop 0x20e0-0x44e0
        for sm_90): block ``b`` casts and sends tokens ``b``, ``b + B``, ...; each sending
        warp ends a token's copy with ``atomic_add_release_global`` (MEMBAR.ALL.GPU: it waits
        for the copy's peer stores to be acknowledged) and takes part in the next token's
        ``bar.sync 1`` (928 threads), so a block's next token sends only after its previous
        token's copies are acknowledged. 288 experts (DeepEP's test) give 96 blocks, 256 give
        86: at 128 tokens per rank one further wave.

        >>> k = exchange_kernel("deepep-low-latency")
        >>> k.send_waves(288, 128), k.send_waves(288, 96), k.send_waves(256, 1), k.send_waves(256, 256)
        (1, 0, 0, 2)
        >>> exchange_kernel("pplx").send_waves(256, 128)
        0
        >>> d28 = exchange_kernel("deepep-low-latency@d28bd67")   # 384 experts, 132 SMs:
        >>> d28.send_waves(384, 128, sms=132), d28.send_waves(384, 129, sms=132)  # 128 blocks
        (0, 1)
        """
        if not self.send_grid:
            return 0
        experts = check_count(experts, "experts", 1)
        tokens = check_count(tokens, "tokens", 0)
        sms = check_count(sms, "sms", 0, "an integer >= 0 (the device's SMs; 0: not known)")
        if self.send_grid_sms and sms:
            per_block = -(-experts // sms)
        else:
            per_block = self.send_grid
            lo, hi = self.send_grid_experts or (1, experts)
            if not lo <= experts <= hi:
                held = f"{lo}" if lo == hi else f"{lo}-{hi}"
                raise SpecError(f"{self.name}'s dispatch grid ({self.send_grid} experts a "
                                f"block) holds for {held} routed experts only, got {experts}: "
                                "its code sets the grid from the device's SMs, which this "
                                "chip does not carry (ChipSpec.sms 0)")
        blocks = -(-experts // per_block)
        return max(-(-tokens // blocks) - 1, 0)

    def receive_reduce(self, experts, k, tokens, hidden):
        """(pass, copy) steps of the combine's receive sum on its block with the most tokens
        (see ``reduce_elements``): ``ceil(tokens / B) x ceil(hidden / reduce_elements) x k``,
        ``B = min(combine_blocks, E x tokens)`` the combine's grid (block ``b`` sums the rank's
        tokens ``b``, ``b + B``, ...). ``0`` without ``reduce_elements``.

        >>> exchange_kernel("pplx").receive_reduce(256, 8, 128, 7168)     # 1 x 4 x 8
        32
        """
        if not self.reduce_elements:
            return 0
        blocks = min(self.combine_blocks, experts * tokens)
        return (-(-tokens // blocks)) * (-(-int(hidden) // self.reduce_elements)) * k

    def receive_floor(self, arch, k, l2_flushed=True):
        """Seconds one receiving warp group's sum of one token takes at least, with
        :attr:`reduce_stages` (``0.0`` and no Parameter without it), and the latency Parameters
        used: the token's top-k ids (``hbm_load``; ``l2_hit`` with ``l2_flushed=False``), then
        its ``k`` copies loaded whole into ``reduce_stages`` stages, each stage reused after the
        reduction warps free it: ``ceil(k / reduce_stages)`` dependent ``l2_hit`` (copies the
        peers stored into this GPU in the same kernel, after which only flags and a grid sync).

        Parameters
        ----------
        arch : str
            GPU generation (``"hopper"`` or ``"blackwell"``): the latency table.
        k : int
            The token's received copies (its top-k).
        l2_flushed : bool
            ``False`` when the top-k ids are still in L2.

        Returns
        -------
        tuple
            (seconds, tuple of :class:`~fabric.Parameter`).

        Examples
        --------
        >>> import dataclasses
        >>> k = dataclasses.replace(exchange_kernel("deepep-low-latency"), name="x",
        ...                         reduce_stages=3)
        >>> t, used = k.receive_floor("hopper", 8)     # 689 + 3 x 280.4 cycles at 1.98 GHz
        >>> round(t * 1e9, 1), [p.name for p in used]
        (772.8, ['exchange.latency.hopper.hbm_load', 'exchange.latency.hopper.l2_hit'])
        >>> exchange_kernel("deepep-low-latency").receive_floor("hopper", 8)
        (0.0, ())
        """
        k = check_count(k, "k", 1, "an int >= 1 (the token's top-k)")
        table = _latency_table(arch)
        l2_flushed = flag_of(l2_flushed, "l2_flushed")
        if not self.reduce_stages:
            return 0.0, ()
        first = table["hbm_load" if l2_flushed else "l2_hit"]
        hit = table["l2_hit"]
        waves = -(-k // self.reduce_stages)
        used = (first,) if first is hit else (first, hit)
        return first.value + waves * hit.value, used

    def combine_posts(self, copies, blocks, domains):
        """NIC posts of the slowest combine block (see ``combine_blocks``) when ``copies``
        received copies are spread over ``blocks`` blocks (block ``b`` takes copies ``b``,
        ``b + blocks``, ...) and EP rank ``r`` sits in load/store domain ``domains[r]``.

        pplx-kernels 7af3059's gatherKernel first has warp ``w`` of block ``b`` signal rank
        ``b x warps + w`` (a store to a rank in the sender's domain, a NIC post to one
        across it), and its copy loop waits for that (``__syncthreads``); then every copy's
        signal is a NIC post when the job spans domains (NVSHMEM 3.2.5's signal rule). Block
        0 has the most copies, and for a sender outside rank 0's domain its signals cross
        the network, so the slowest block posts :func:`serial_copies` + 1 times; inside one
        domain none. ``0`` without ``combine_blocks``.

        >>> k = exchange_kernel("pplx")
        >>> k.combine_posts(1024, 132, [0] * 8 + [1] * 8), k.combine_posts(1024, 132, [0] * 8)
        (9, 0)
        """
        if not self.combine_blocks or len(set(domains)) < 2:
            return 0
        return serial_copies(copies, blocks) + 1

    def chain_latency(self, phase, arch, ranks, rounds, l2_flushed=True, ep=1,
                      remote_signals=0, serial_copies=0, posted_copies=0, walk_slots=0,
                      walk_tokens=0, reduce_loads=0, loadstore=False, put_rounds=0,
                      stage_rounds=0, walked_tokens=0, further_waves=0, walk_token_rounds=0,
                      interleaved=False, payloads=1, slots=1, walk_wraps=0, count_passes=0):
        """Seconds of one block's serial chain in ``phase`` (0 dispatch, 1 combine), and the
        latency Parameters it used.

        ``ranks`` is the number of distinct destination ranks of the token,
        ``rounds`` the phase's rounds of ``pull_threads x pull_vector`` bytes
        (:func:`analysis.moe_exchange` passes the busiest token's count: the phase ends with
        its slowest block), ``ep`` the EP ranks a one-warp per-peer loop walks (its
        ``"lane_passes"`` steps; the default 1 has none), ``remote_signals`` the slowest
        count warp's signals through the NIC (:meth:`count_walk`), ``serial_copies`` the
        combine's slowest block's copies (:func:`serial_copies`) and ``posted_copies`` its NIC
        posts (:meth:`combine_posts`), ``walk_slots`` and ``walk_tokens`` the dispatch's
        receive walk (:meth:`receive_walk`), ``reduce_loads`` the combine's receive sum
        (:meth:`receive_reduce`), ``loadstore`` whether the phase's copies are load/store
        stores (its ``"loadstore"`` steps; otherwise its ``"network"`` steps), ``put_rounds``
        the dependent rounds of a put's warp copy of the phase's token (counted only with
        ``loadstore``), ``stage_rounds`` the rounds of a block's staging copy of it beyond the
        first (:attr:`stage_vector`; its ``"loadstore_stage_rounds"`` steps only with
        ``loadstore``), ``walked_tokens`` the tokens the dispatch's send loop walks before the
        slowest block's last token (:meth:`send_walk`; counted only with ``loadstore``),
        ``further_waves`` the tokens the busiest dispatch block sends after its first
        (:meth:`send_waves`; counted only with ``loadstore``), ``walk_token_rounds`` the
        receiving block's copy rounds beyond the first over its received tokens
        (:meth:`receive_rounds`), ``payloads`` the phase's payloads that the caller gives
        apart (a token's values and scale factors: 2; its ``"pointer_rereads"`` steps are
        :meth:`pointer_loads` times the payloads after the first), ``slots`` the token's top-k
        slots (its ``"further_slots"`` steps: one per slot after the first), ``walk_wraps`` the
        local experts the receive walk leaves before its last (:meth:`walk_wraps`),
        ``count_passes`` the experts the slowest count warp walks (:meth:`count_walk`; its
        ``"count_pass_cycles"`` and ``"count_passes"`` steps only across the network). ``interleaved=True``
        prices ``interleaved_chain`` instead of ``chain``. With
        ``l2_flushed=False`` (data left in L2 by the kernel before, as in a decode step) an
        ``hbm_load`` costs an ``l2_hit``.

        >>> k = exchange_kernel("one-sided")
        >>> t, used = k.chain_latency(0, "blackwell", ranks=8, rounds=4, slots=8)
        >>> round(t * 1e9)      # 2 x 434 + 8 x 246 + 53 + 7 x 10.5 + 7 x 16.2 + 8 x 125 x 0.505 + 53 + 8 x 53 + (4 + 2) x 434 + 2 x (8 + 1) x 10.5 + (3 x 508 + 3 x 97 + 105) x 0.505 + 246 + 2 x 150 + (89 + 233 + 164) x 0.505
        8611
        >>> round(k.chain_latency(0, "blackwell", ranks=8, rounds=4, ep=64, slots=8)[0] * 1e9)
        8981
        """
        table = _latency_table(arch)
        times = {"one": 1.0, "ranks": float(ranks), "rounds": float(rounds),
                 "lane_passes": float(lane_passes(ep)), "remote_signals": float(remote_signals),
                 "serial_copies": float(serial_copies), "posted_copies": float(posted_copies),
                 "further_copies": float(max(serial_copies - 1, 0)),
                 "further_signals": float(max(remote_signals - 1, 0)),
                 "walk_slots": float(walk_slots), "walk_tokens": float(walk_tokens),
                 "reduce_loads": float(reduce_loads), "loadstore": float(bool(loadstore)),
                 "network": float(not loadstore),
                 "put_rounds": float(put_rounds) if loadstore else 0.0,
                 "stage_rounds": float(stage_rounds),
                 "further_stage_rounds": float(max(serial_copies - 1, 0) * stage_rounds),
                 "loadstore_stage_rounds": float(stage_rounds) if loadstore else 0.0,
                 "walked_tokens": float(walked_tokens) if loadstore else 0.0,
                 "further_waves": float(further_waves) if loadstore else 0.0,
                 "walk_token_rounds": float(walk_token_rounds),
                 "count_passes": 0.0 if loadstore else float(count_passes),
                 "walk_sectors": float(self.walk_sectors(walk_slots)),
                 "walk_slot_hits": float(walk_slots - self.walk_sectors(walk_slots))}
        payloads = check_count(payloads, "payloads", 1, "an int >= 1")
        slots = check_count(slots, "slots", 1, "an int >= 1 (the token's top-k)")
        walk_wraps = check_count(walk_wraps, "walk_wraps", 0, "an int >= 0")
        count_passes = check_count(count_passes, "count_passes", 0, "an int >= 0")
        times["further_slots"] = float(slots - 1)
        times["further_payloads"] = float(payloads - 1)
        times["further_ranks"] = max(float(ranks) - 1.0, 0.0)
        times["pointer_rows"] = self.pointer_loads(ranks, arch)
        times["pointer_rereads"] = times["pointer_rows"] * (payloads - 1)
        # what the cycle counts' steps multiply besides the chain counts: the token's top-k
        # slots, the receive walk's wraps, the receive sum's passes (its (pass, copy) steps
        # over the top-k), the payloads
        times.update(slots=float(slots), walk_wraps=float(walk_wraps),
                     reduce_passes=float(reduce_loads // slots), payloads=float(payloads))
        total, used = 0.0, []
        for name, count in (self.interleaved_chain if interleaved else self.chain)[phase]:
            if name == "hbm_load" and not l2_flushed:
                name = "l2_hit"
            p = table[name]
            if count in _CYCLE_STEPS:
                cycles, step = _CYCLE_STEPS[count]
                total += step(self.cycle(cycles, phase), times) * p.value
            else:
                total += times[count] * p.value
            if p not in used:
                used.append(p)
        return total, tuple(used)

    def parameters(self):
        """The profile's figures as :class:`~fabric.Parameter` records, with their sources.

        >>> [p.name for p in exchange_kernel("one-sided").parameters()][:2]
        ['one-sided.dedup', 'one-sided.kernels']
        """
        src = dict(self.sources)
        out = [Parameter(f"{self.name}.dedup", self.dedup, "", src.get("dedup", "")),
               Parameter(f"{self.name}.kernels", "{}+{}".format(*self.kernels), "",
                         src.get("kernels", "")),
               Parameter(f"{self.name}.syncs", "{}+{}".format(*self.syncs), "", src.get("syncs", ""))]
        if self.message_header:
            out.append(Parameter(f"{self.name}.message_header", self.message_header, "B",
                                 src.get("message_header", "")))
        if self.staging_copy:
            out.append(Parameter(f"{self.name}.staging_copy", True, "",
                                 src.get("staging_copy", "")))
        if self.send_staging:
            out.append(Parameter(f"{self.name}.send_staging", True, "",
                                 src.get("send_staging", "")))
        if self.staging_copy and self.staging_source_bytes:
            out.append(Parameter(f"{self.name}.staging_source_bytes", self.staging_source_bytes,
                                 "B", src.get("staging_source_bytes", "")))
        for field in ("chain", "interleaved_chain"):
            if any(getattr(self, field)):
                text = " | ".join(", ".join(f"{n} x {c}" for n, c in ph) or "-"
                                  for ph in getattr(self, field))
                out.append(Parameter(f"{self.name}.{field}", text, "", src.get(field, "")))
        if self.stage_vector:
            out.append(Parameter(f"{self.name}.stage_vector",
                                 "{}+{}".format(*(x or "none" for x in self.stage_vector)),
                                 "B", src.get("stage_vector", "")))
        for name, entry in _CYCLE_COUNTS.items():
            values = [v for v in (self.cycle(name, 0), self.cycle(name, 1)) if v]
            if values:
                text = ["+".join(map(str, v)) if entry.parts else v for v in values]
                value = text[0] if text[0] == text[-1] else "+".join(map(str, text))
                out.append(Parameter(f"{self.name}.{name}", value, "cycles", src.get(name, "")))
        if self.qp_signals:
            out.append(Parameter(f"{self.name}.qp_signals", "{}+{}".format(
                *(x or "none" for x in self.qp_signals)), "", src.get("qp_signals", "")))
        if self.qp_per_peer:
            out.append(Parameter(f"{self.name}.qp_per_peer", self.qp_per_peer, "",
                                 src.get("qp_per_peer", "")))
        if self.qp_chunk != 1:
            out.append(Parameter(f"{self.name}.qp_chunk", self.qp_chunk, "tokens",
                                 src.get("qp_chunk", "")))
        if self.count_grid:
            out.append(Parameter(f"{self.name}.count_grid",
                                 "{} warps per block, at most {} blocks".format(*self.count_grid),
                                 "", src.get("count_grid", "")))
        # counts (blocks, elements, experts per block) and a flag carry no unit; the copies'
        # bytes per dependent load are bytes, as stage_vector and pull_vector
        for field, unit in (("combine_blocks", ""), ("reduce_elements", ""), ("reduce_stages", ""),
                            ("block_per_token", ""), ("put_vector", "B"), ("send_grid", ""),
                            ("receive_vector", "B"), ("walk_slot_bytes", "B")):
            if getattr(self, field):
                out.append(Parameter(f"{self.name}.{field}", getattr(self, field), unit,
                                     src.get(field, "")))
        if self.send_grid_experts:
            lo, hi = self.send_grid_experts
            out.append(Parameter(f"{self.name}.send_grid_experts",
                                 f"{lo}" if lo == hi else f"{lo}-{hi}", "",
                                 src.get("send_grid_experts", "")))
        if self.send_grid_sms:
            out.append(Parameter(f"{self.name}.send_grid_sms", "ceil(E / the chip's SMs)", "",
                                 src.get("send_grid_sms", "")))
        if self.walk_slot_bytes:
            out.append(EXCHANGE_L1_SECTOR)
        if any(self.release_fence):
            out.append(Parameter(f"{self.name}.release_fence",
                                 "{}+{}".format(*(int(x) for x in self.release_fence)), "",
                                 src.get("release_fence", "")))
        if self.pull_threads:
            out.append(Parameter(f"{self.name}.pull_threads", self.pull_threads, "",
                                 src.get("pull", "")))
            out.append(Parameter(f"{self.name}.pull_vector", self.pull_vector, "B",
                                 src.get("pull", "")))
        if self.late_pulls:
            out.append(Parameter(f"{self.name}.late_pulls", "; ".join(
                f"{a or 'any GPU'}, top-{k}, {f'{w}-B' if w else 'any'} input: "
                + " then ".join("slots " + ",".join(map(str, b)) for b in batches)
                for a, k, w, batches in self.late_pulls), "", src.get("late_pulls", "")))
        if self.round_reads:
            def fmt(steps):
                return " + ".join(f"{c:g} {n}" for n, c in steps) or "-"
            out.append(Parameter(f"{self.name}.round_reads", "; ".join(
                f"{a or 'any GPU'}, top-{k}, {f'{w}-B' if w else 'any'} input: round 1 "
                f"{fmt(f0)} .. {fmt(f1)}, late {' / '.join(fmt(b) for b in fl) or '-'}; later "
                f"rounds {fmt(l0)} .. {fmt(l1)}, late {' / '.join(fmt(b) for b in ll) or '-'}"
                for a, k, w, f0, f1, fl, l0, l1, ll in self.round_reads), "",
                src.get("round_reads", "")))
        if self.round_cycles:
            out.append(Parameter(f"{self.name}.round_cycles", "; ".join(
                f"{a or 'any GPU'}, top-{k}, {f'{w}-B' if w else 'any'} input, 1 .. {k} valid "
                f"slots: round 1 {'/'.join(map(str, f))}, later rounds {'/'.join(map(str, la))}"
                for a, k, w, f, la in self.round_cycles), "cycles",
                src.get("round_cycles", "")))
        if self.sync_steps:
            out.append(Parameter(f"{self.name}.sync_steps", ", ".join(
                f"{n} x {c}" for n, c in self.sync_steps), "", src.get("sync_steps", "")))
        if self.pointer_overlap:
            out.append(Parameter(f"{self.name}.pointer_overlap", "; ".join(
                f"{a}: first {n} rows together" for a, n in self.pointer_overlap), "",
                src.get("pointer_overlap", "")))
        if self.scale_out and self.dedup != "collective":
            out.extend((*EXCHANGE_SYNC.values(), EXCHANGE_NIC_EFFICIENCY))
        return tuple(out)


_DEEPEP = "deepseek-ai/DeepEP"
_PPLX = "perplexityai/pplx-kernels"


def _ibgda_post(count):
    """The dependent steps of one NVSHMEM 3.2.5 IBGDA post on an RC queue pair the blocks
    share, each repeated once per ``count`` (a chain count): those the posting lane always
    runs, read in the SASS of libnvshmem_device.a's sm_90 ``nvshmemi_transfer_amo_nonfetch``
    and ``nvshmemi_transfer_put_signal<warp>`` (session 17): the load of qp_group_switches
    (the queue pair's address depends on it), the queue pair's qp_type (the reservation's
    size depends on it; the fence before ran CCTL.IVALL, so from L2), the reservation
    atomicAdd on resv_head, the completion-queue check of the wrapped send ring (the CQ
    record's cons_idx pointer, then cons_idx itself), the GPU-scope fence after the WQE
    stores (their acknowledgement from L2, an L2 round trip as the release fence prices
    pushed stores), the ready_head compare-and-swap, and the read of resv_head: 6 L2 round
    trips and 2 L2 atomics. Session 24, lane 0's whole path: three more L2 trips its code
    waits for, each the first touch of its 32-B sector after the last post's CCTL.IVALL (the
    184-B queue pair, 8-B aligned, puts them in untouched sectors at every alignment): the
    queue pair's dev_idx (with nvshmemi_device_state_d.npes in flight beside it), the send
    ring's nwqes and its CQ record's address; qp_type, loaded after dev_idx, shares its sector
    at 3 of the 4 alignments (review S24-R2): an L1 hit (the least); and the cycles the posting
    code schedules outside those loads (the phase's ``post_cycles``,
    :attr:`ExchangeKernel.cycles`, the ``"remote_signal_cycles"`` or ``"posted_copy_cycles"``
    step): 8 L2 round trips, an L1 hit,
    2 L2 atomics. The doorbell (lock, atomicMax, two more fences, the DBR and BlueFlame stores)
    runs only when the post rings it: not counted."""
    cycles = {"remote_signals": "remote_signal_cycles", "posted_copies": "posted_copy_cycles"}
    return ((("l2_hit", count),) * 8) + (("l1_hit", count),) + ((("l2_atomic", count),) * 2) + (
        ("cycle", cycles[count]),)


def _doorbell(count):
    """The dependent steps of ringing an RC queue pair's doorbell from the GPU, each repeated
    once per ``count``: the same in NVSHMEM 3.2.5's ``ibgda_post_send`` (libnvshmem_device.a,
    sm_90, session 17) and in DeepEP de8cfca's own (``csrc/kernels/ibgda_device.cuh``, sm_90,
    session 18): the lock compare-and-swap, the atomicMax on prod_idx (its result awaited), a
    GPU-scope fence, the doorbell record's pointer (L2: the fence invalidated L1), the record's
    store, a fence, the queue pair number and BlueFlame pointer, the BlueFlame (MMIO) store:
    ``2 x l2_atomic + 4 x l2_hit``. A post whose submit sees a later reservation leaves the ring
    to that reserver, whose ring comes after this post's submit: the last post of a chain, or
    the first a transfer waits for, departs no earlier than one ring after it."""
    return ((("l2_atomic", count),) * 2) + ((("l2_hit", count),) * 4)


def _deepep_put(count):
    """The dependent steps of one warp's IBGDA put in DeepEP de8cfca's own
    ``nvshmemi_ibgda_put_nbi_warp`` (``csrc/kernels/ibgda_device.cuh``; SASS of
    ``internode_ll.cu`` for sm_90, session 18), each repeated once per ``count``: the lanes'
    key lookups (shuffled), the resv_head atomicAdd (shuffled), the queue pair's fields, the
    WQE stores, the GPU-scope fence (MEMBAR.SC.GPU + ERRBAR: an L2 round trip), the
    ready_head compare-and-swap, then a ring (:func:`_doorbell`: DeepEP rings on every fourth
    message of a queue pair; the first byte waits for some ring): ``7 x l2_hit + 4 x
    l2_atomic``. No send-queue check (DeepEP sizes the queue above its messages in flight)."""
    return ((("l2_hit", count), ("l2_atomic", count), ("l2_hit", count), ("l2_hit", count),
             ("l2_atomic", count)) + _doorbell(count))


def _nvshmem_wait():
    """What an NVSHMEM 3.2.5 ``nvshmem_uint64_wait_until`` runs after its poll sees the value:
    ``nvshmemi_transfer_syncapi_update_mem()`` (include/device/nvshmem_defines.h,
    NVSHMEM_WAIT_UNTIL), a call into the device library whose SASS is ``MEMBAR.SC.GPU`` +
    ``ERRBAR`` + ``CCTL.IVALL`` (pplx-kernels 7af3059 linked against libnvshmem_device.a,
    session 17's build); its CPU-proxy consistency round trip runs only when the job's
    connectivity is GPU_PROXY_CST, which IBRC sets only without GDRCopy (the rows' builds have
    it). One GPU-scope fence with nothing outstanding: an L2 round trip, as :func:`_grid_sync`
    prices its ``MEMBAR.GPU`` (session 21)."""
    return (("l2_hit", "one"),)


def _count_arrival(count):
    """What pplx-kernels 7af3059's dispatch receive loop runs between a slot's count arriving
    and the fence of its last wait (scatterKernel SASS 0x3670-0x37b0, session 21): the count
    wait's fence (:func:`_nvshmem_wait`), the count's re-read (``LDG``, L1 just invalidated: an
    L2 trip) and the token-signal poll's first load (its tokens already in): three L2 trips.
    Where the count is the slot's last arrival (across the network the count warp's serial
    posts are the chain) they follow the count warp's chain; the last fence is the chain's
    (drain)."""
    return ((("l2_hit", count),) * 3)


def _grid_sync():
    """The steps of a cooperative kernel's grid-wide barrier (``cg::this_grid().sync()``)
    after the last block arrives, as compiled in both pplx-kernels 7af3059 and DeepEP de8cfca
    (sm_90, sessions 17 and 18): thread 0's MEMBAR.GPU + ERRBAR (its block's earlier memory
    operations acknowledged: an L2 round trip, as the release-fence rule prices a fence without
    peer stores), the atomicAdd on the barrier word, the polled load that sees the phase flip:
    ``l2_hit + l2_atomic + l2_hit``. Counted where the barrier follows the phase's last byte
    and signal (pplx's dispatch, DeepEP low-latency's combine); where it precedes the waits
    for the peers (pplx's combine, DeepEP low-latency's dispatch) it runs while they fly."""
    return (("l2_hit", "one"), ("l2_atomic", "one"), ("l2_hit", "one"))
_ROUND_READS_SOURCE = (
    "session 22 (moe): a scoreboard walk of the compiled combine loop, 16-B path, top-8 "
    "(flashinfer-ai/flashinfer moeA2ACombineKernel<T, 8> compiled with nvcc 13.0 -O3 "
    "-use_fast_math, flashinfer's JIT flags, read with cuobjdump 13.5 and its control bits "
    "decoded: sessions 17-19's builds): instructions issue in order, each waits for the "
    "scoreboards its control bits name (a predicated-off one still waits, a branched-over one "
    "is absent); a metadata load is an L1 hit after round 1 (in round 1 an L2 hit until its "
    "32-B sector has arrived), a register-indexed row load a constant-L1 hit (in round 1 the "
    "L1.5 for a rank's first row), a scalar parameter load a constant-L1 hit, at this "
    "module's Parameters; ALU latencies are not priced. The walk finds the peer trips per "
    "round that late_pulls names in each build. Counted on the round's critical chain besides "
    "its peer loads: ")

#: What every ``sources["round_cycles"]`` text says first (session 27, moe): the method.
_ROUND_CYCLES_SOURCE = (
    "Session 27 (moe; lead's decision 20:00, one count per valid-slot count): the cycles a "
    "pulled round's compiled loop issues beyond the loads the chain, round_reads and the late "
    "batches' row fetch charge, walked in issue order at the stall counts (session 22's method; "
    "session 24's later rounds, session 26's round 1 with the set-up after BAR.SYNC; the builds "
    "of those sessions, nvcc 13.0, SASS by cuobjdump 13.5) for every "
    "one of the 128 slot patterns (slot 0 valid) and, where the kernel's per-rank pointer rows "
    "share 64-B constant lines, every placement of the valid slots' rows, against what the "
    "entry without its cycles charges for the same pattern (round_read_latency with the "
    "pattern's distinct ranks and late batches; round 1 also the chain's two metadata L2 loads "
    "and row fetch and one L1.5 fetch per late batch with a valid slot). Per count d of valid "
    "slots the least over the patterns of d slots and the placements; the table holds for d "
    "the least of those over d, d + 1, .., top_k valid slots, rounded down (0 below zero): "
    "exact at d = top_k (one pattern: every token of the perfect router at EP >= top_k), a "
    "lower bound for every token, and never less for more ranks at the same late trips (the "
    "least pattern of a small d often holds a late batch its charge already counts, e.g. {0, 7}); "
    "between two counts linear in the token's expected distinct ranks. Sessions 24 and 26 had "
    "put one count, the least over every pattern, in both ends of round_reads. The walks: "
    "session 27's, by session 26's rules. ")


EXCHANGE_KERNELS = {k.name: k for k in (
    ExchangeKernel(
        "deepep-normal", dedup="node", forwarding=True, scale_out=True, pipelined=True,
        local_copy=False, kernels=(2, 2), syncs=(2, 2),
        sources=(
            ("dedup", (f"{_DEEPEP} docs/legacy.md and csrc/kernels/legacy/internode.cu: RDMA "
                      "once per destination node to the rail peer, NVLink fan-out inside the "
                      "node; tests/legacy/test_internode.py counts RDMA bytes per (token, node)")),
            ("kernels", (f"{_DEEPEP} csrc/deep_ep.cpp at ebfe47e (the V1 table's commit; the "
                        "same in csrc/kernels/legacy at dd758ca): dispatch = (cached_)"
                        "notify_dispatch + dispatch; combine = cached_notify_combine "
                        "(intranode) or cached_notify (internode) + combine ('Launch barrier "
                        "and reset queue head and tail'): two kernels each (session 16; the "
                        "combine's notify kernel was missed before)")),
            ("syncs", (f"{_DEEPEP} csrc/kernels/intranode.cu and internode.cu at ebfe47e: each "
                       "notify kernel synchronises the ranks twice, 'barrier before cleaning' "
                       "and 'barrier after cleaning' (barrier_device over NVLink; across nodes "
                       "also two nvshmem_barrier_all over RDMA, in parallel); the data kernel "
                       "then streams behind the peers' tail pointers (overlapped with the "
                       "transfer); costed as the symmetric-memory kernel floor + one flag "
                       "barrier (the runtime's store-and-spin handoff, session 23) inside one "
                       "node, two NCCL LL steps across the network (assumption, "
                       "EXCHANGE_SYNC)")),
            ("sync_steps", (f"{_DEEPEP} csrc/kernels/utils.cuh barrier_device at ebfe47e "
                            "(session 23; review S23-R9): atomicAdd_system on the rank's own "
                            "slot, memory_fence (fence.acq_rel.sys), atomicSub_system on the "
                            "peer's slot, then the spin; compiled (nvcc 13.0, sm_90a and "
                            "sm_100a) ATOM.E.ADD.STRONG.SYS PT, RZ (own slot) -> MEMBAR.ALL.SYS "
                            "(waits for that atomic's acknowledgement: an L2 atomic) -> ERRBAR "
                            "-> CCTL.IVALL -> LDG of task_fifo_ptrs[peer] (reloaded after the "
                            "fence's 'memory' clobber, L1 just invalidated: an L2 hit) -> ATOM "
                            "(peer slot, result discarded) -> spin: two dependent steps before "
                            "the flag goes out, each further barrier (the first's are in the "
                            "kernel floor)")),
            ("release_fence", (f"{_DEEPEP} csrc/kernels/legacy/intranode.cu (dd758ca): the "
                               "senders copy tokens into the peer's channel buffer with "
                               "st_na_global, then publish the channel tail with "
                               "st_release_sys_global (dispatch and combine); DeepEP V2's "
                               "kernels (deep_ep/include/deep_ep/impls) were not checked"))),
        release_fence=(True, True), sync_steps=(("l2_atomic", 1), ("l2_hit", 1)),
    ),
    ExchangeKernel(
        "deepep-low-latency", dedup="expert", forwarding=False, scale_out=True,
        pipelined=True, local_copy=True, kernels=(1, 1), syncs=(1, 1), message_header=16,
        sources=(
            ("dedup", (f"{_DEEPEP} csrc/kernels/legacy/internode_ll.cu: one message per "
                      "(token, expert), expert-major receive buffer; NVLink for peers with a "
                      "P2P pointer, IBGDA RDMA otherwise")),
            ("kernels", (f"{_DEEPEP} internode_ll.cu: one dispatch and one combine kernel, each "
                        "a send phase then a receive phase")),
            ("syncs", (f"{_DEEPEP} internode_ll.cu: the receive phase waits for every peer's "
                      "per-expert count (one handshake per phase); costed as the symmetric-"
                      "memory kernel floor inside one node, one NCCL LL step across the network "
                      "(assumption, EXCHANGE_SYNC)")),
            ("message_header", (f"{_DEEPEP} tests/legacy/test_low_latency.py: FP8 message = "
                               "hidden + hidden/128*4 + 16 bytes")),
            ("release_fence", (f"{_DEEPEP} csrc/kernels/legacy/internode_ll.cu (dd758ca): "
                               "dispatch warps copy a token to an NVLink peer with st_na_global "
                               "then atomic_add_release_global, and the per-expert count goes "
                               "with st_release_sys_global; the combine's TMA stores to the "
                               "peer are followed by st_release_sys_global of its flag: both "
                               "phases release pushed peer stores before their flag")),
            ("chain", (f"{_DEEPEP} de8cfca (2025-06-05, the README commit of the V1 low-latency "
                       "table with NVLink peers) csrc/kernels/internode_ll.cu, compiled as its "
                       "setup.py does (nvcc -O3 -rdc=true, sm_90; nvcc 13.0, session 18) and read "
                       "in the SASS: the steps before a phase's first byte can move or after its "
                       "last byte lands. Dispatch, per token of a block: the token's x and top-k "
                       "ids (__ldg, in parallel; HBM: tests/test_low_latency.py's timed call runs "
                       "a 528 MB copy into the combine buffer between the phases), the FP8 cast "
                       "(shuffles, not priced), bar.sync, the sending warp's slot atomicAdd "
                       "(result shuffled to the warp), then the peer's heap base (__ldg of "
                       "peer_heap_base_p2p, issued after the shuffle), then the first round of "
                       "the send buffer (8 x 16 B per lane, written by the block just before: "
                       "L2) before its stores to the peer: hbm_load + l2_atomic + 2 x l2_hit; "
                       "over RDMA the warp's IBGDA put (DeepEP's own nvshmemi_ibgda_put_nbi_warp: "
                       "key lookups, resv_head atomicAdd, the queue pair's fields, the WQE "
                       "stores and a GPU-scope fence, the ready_head CAS, then a ring, which "
                       "DeepEP makes on every fourth message of a queue pair and the first byte "
                       "waits for: 7 x l2_hit + 4 x l2_atomic) replaces the first-round load. "
                       "Each copy ends in atomic_add_release_global (MEMBAR.GPU + "
                       "ERRBAR: it waits for the copy's peer stores, the release fence); then "
                       "the expert's count warp sees the finish counter (a polled L2 load) and "
                       "loads the peer base again (after CCTL.IVALL: L2) before its release "
                       "store of the count: two l2_hit after the last acknowledged store, in one "
                       "load/store domain (across the network the count is an IBGDA atomic on the "
                       "data's own queue pair, posted while the data flies: not counted there). "
                       "The receive part's atomicAdd on packed_recv_count (its result addresses "
                       "the copy-out) follows the count: l2_atomic. The grid sync between the "
                       "send and receive parts runs while the counts fly (inside the handshake): "
                       "not counted. Combine, per token of a sub-warp: layout_range, then "
                       "src_info[token] (the loop bound and the destination slot depend on "
                       "them; written by the dispatch's receive before the 528 MB copy: HBM), "
                       "the peer base, then the first round of x (HBM) before the stores: "
                       "3 x hbm_load + l2_hit (over RDMA the put from x, zero-copy in the timed "
                       "run, replaces x's load: 2 x hbm_load + l2_hit + the put); the receive part waits for every flag, then "
                       "cg::this_grid().sync() (thread 0: MEMBAR.GPU + ERRBAR, an atomicAdd on "
                       "the grid barrier, a polled load; priced as the release-fence rule prices "
                       "a fence without peer stores, an L2 round trip): 2 x l2_hit + l2_atomic "
                       "after the last flag. The send part's flag poll and peer-base load run "
                       "while the release fence waits (not counted). Not counted: across the "
                       "network the per-copy work between a block's tokens (the puts are posted "
                       "and the release does not wait for the NIC: it overlaps the other blocks' "
                       "copies), the receive copies' own loads (under the local copy's HBM time). NVIDIA "
                       "NCCL EP's low-latency kernel (adapted from DeepEP) has its own count: "
                       "ncclep-low-latency (session 19). A block's later tokens (send_grid): "
                       "in one load/store domain each waits for the release fence of the "
                       "block's token before (one peer round trip, charged per wave with the "
                       "phase's fence), then its own x (HBM), cast, bar.sync, slot atomicAdd, "
                       "the heap base (the line the block's warps read for the token before, "
                       "through the non-coherent path with no CCTL between: L1) and the first "
                       "round (L2) before its first byte: hbm_load + l2_atomic + l1_hit + l2_hit "
                       "per further wave (session 20)")),
            ("send_grid", (f"{_DEEPEP} de8cfca csrc/kernels/internode_ll.cu (SASS for sm_90, "
                           "session 18's build re-read in session 20): the host wrapper "
                           "launches num_sms = cell_div(num_experts, kNumWarpGroups = 3) blocks; "
                           "block b casts and sends tokens b, b + num_sms, ... (loop 0x20e0-0x44e0, "
                           "stride gridDim.x, no CCTL inside): per token x's 16-B loads "
                           "(LDG.E.128.CONSTANT, 896 threads), the FP8 cast, BAR.SYNC 0x1, 0x3a0 "
                           "(warps 0-28), then warp j < top-k: slot ATOMG.E.ADD -> SHFL -> "
                           "LDG.E.64.CONSTANT peer_heap_base_p2p -> the 7408-B copy in 4 dependent "
                           "load->store rounds (8, 1, 2, 4 x 512 B; STG.E.NA.128, posted) -> lane "
                           "0's MEMBAR.ALL.GPU + ATOMG.E.ADD (atomic_add_release_global; the other "
                           "lanes wait at BSYNC), then the next token. tests/test_low_latency.py "
                           "(288 experts, 128 tokens): 96 blocks, blocks 0-31 send a second token "
                           "after their first token's copies are acknowledged. ASSUMPTION: a wave's "
                           "senders (equal bytes each) share the links fairly and finish together, "
                           "so the links idle for the fence and the next token's chain between "
                           "the waves")),
            ("send_cycles", (f"{_DEEPEP} de8cfca csrc/kernels/internode_ll.cu, dispatch<true, 3, "
                             "10, 7168> (FP8, the V1 table's shape) built as its setup.py does "
                             "(nvcc 13.0 -O3 -rdc=true --register-usage-level=10, sm_90, "
                             "--expt-relaxed-constexpr and torch's -D__CUDA_NO_* flags; "
                             "NVSHMEM 3.2.5 wheel headers; session 24) and read with cuobjdump "
                             "13.5: a sending warp's token to a remote rank, outside the loads "
                             "the chain counts (x, the slot atomic, the heap base, the first "
                             "round): the loop top to x's LDG.E.128 (0x20e0-0x2280: 95, the "
                             "top-k id's LDG issued on the way), from x's consumer through the "
                             "FP8 cast (8 BF16 -> FP32, 8 FMNMX for the amax, 4 SHFL.BFLY + FMNMX "
                             "for the half-warp max of a 128-channel group, MUFU.RCP + FFMA "
                             "refinement + FCHK for 448 / amax with the slow path branched "
                             "over, the scale_inv store by lanes 0 and 16, 8 FMUL + 4 F2FP to "
                             "E4M3, the STG.E.64), BAR.SYNC 0x1, 0x3a0 and lane 0's way to the "
                             "slot ATOMG (0x22e0-0x2590, 0x25e0-0x2700, 0x2b90-0x2c40: 189), "
                             "from the atomic's SHFL.IDX through the dst_rank / local-expert "
                             "division and the destination address to the heap base's LDG "
                             "(0x2c90-0x2fc0: 140), from its consumer to the first round's LDG "
                             "(0x2ff0-0x30e0: 72): 496 cycles, less 18 issued under four waited "
                             "constant loads (LDC at 0x2130, 0x2c20, 0x2fb0, 0x3010: 12 + 2 + 2 "
                             "+ 2 cycles before their consumers), each charged const_l1 instead; "
                             "the LDC at 0x2100 hides under 37 cycles (not charged): 478 cycles "
                             "+ 4 x const_l1 per token of the busiest block, its first and each "
                             "further wave (send_waves). Not added: the 59 cycles from the "
                             "copy's last STG to the release ATOMG (0x34f0-0x3510, 0x4380-0x4470: "
                             "branches, a waited LDC, MEMBAR.ALL.CTA / MEMBAR.ALL.GPU) issue while "
                             "the copy's stores fly and end in the release fence, whose wait is "
                             "priced as a peer round trip (review S24-R1). Not priced (a lower "
                             "bound): the SHFL, MUFU, I2F and F2I results (scoreboards), the "
                             "loop's tail from the release ATOMG to the loop top (31) and the "
                             "copy's later rounds (under the links). " + _STALL_COUNTS)),
            ("count_cycles", (f"{_DEEPEP} de8cfca internode_ll.cu, the same build: the count "
                              "warp (sub-warp 0, lane 0) from its finish-counter poll's consumer "
                              "to the peer's heap-base LDG (0x4830-0x4950: 61) and from that "
                              "load's consumer through MEMBAR.ALL.SYS to the count's "
                              "STG.E.STRONG.SYS (0x4990-0x4ac0: 80); the receiving warp group's "
                              "sub-warp 1 from its count poll's consumer to the ATOMG on "
                              "packed_recv_count (0x5d80-0x5de0: 31): 172 cycles, less 7 under "
                              "three waited constant loads (0x4940, 0x49b0, 0x5db0), each charged "
                              "const_l1: 165 cycles + 3 x const_l1 after the last copy's release, "
                              "in one load/store domain. Not counted: the grid sync (while the "
                              "counts fly), and after the receiver's atomic its STS, named "
                              "BAR.SYNC, LDS and lane 0's src_info load before the copy (the copy "
                              "is priced as its HBM traffic, local_copy). " + _STALL_COUNTS)),
            ("qp_signals", (f"{_DEEPEP} csrc/kernels/internode_ll.cu at de8cfca: the dispatch's "
                            "warps put an expert's tokens with nvshmemi_ibgda_put_nbi_warp on "
                            "queue pair dst_expert_local_idx (l.154), then the count with "
                            "nvshmemi_ibgda_amo_nonfetch_add on the same queue pair (l.221); the "
                            "combine puts on local_expert_idx (l.425), then its flag's "
                            "amo_nonfetch_add on the same (l.440): one atomic per queue pair, "
                            "after all its writes ('last'). Since 2d0cf41 (2025-03-14, 'Low "
                            "latency kernels use rdma atomic to support AR'); before it "
                            "(ebfe47e, the February 2025 release) the count and flag were "
                            "nvshmemi_ibgda_rma_p writes, no atomic: a kernel of that commit "
                            "takes qp_signals=() (the deepep-feb25 rows)"))),
        release_fence=(True, True), send_grid=3,
        cycles=({"send_cycles": 478, "count_cycles": 165}, ()),
        qp_signals=("last", "last"),
        chain=((("hbm_load", "one"), ("l2_atomic", "one"), ("l2_hit", "one"),
                ("l2_hit", "loadstore"), ("l2_hit", "loadstore"), ("l2_hit", "loadstore"),
                ("hbm_load", "further_waves"), ("l2_atomic", "further_waves"),
                ("l1_hit", "further_waves"), ("l2_hit", "further_waves"),
                ("cycle", "loadstore_send_cycles"), ("cycle", "further_wave_send_cycles"),
                ("cycle", "loadstore_count_cycles"))
               + (("const_l1", "loadstore"),) * 7 + (("const_l1", "further_waves"),) * 4
               + _deepep_put("network") + (("l2_atomic", "one"),),
               (("hbm_load", "one"), ("hbm_load", "one"), ("l2_hit", "one"),
                ("hbm_load", "loadstore")) + _deepep_put("network") + _grid_sync()),
    ),
    ExchangeKernel(
        "one-sided", dedup="rank", forwarding=False, scale_out=False, pipelined=True,
        local_copy=False, kernels=(3, 2), syncs=(1, 1), pull_threads=256, pull_vector=16,
        staging_copy=True,
        chain=((("hbm_load", "one"), ("cycle", "prepare_cycles"), ("hbm_load", "one"),
                ("l2_atomic", "ranks"), ("l1_hit", "further_slots"), ("const_l15", "one"),
                ("const_l1", "further_ranks"), ("cycle", "claim_cycles"),
                ("const_l15", "one"), ("const_l1", "further_payloads"),
                ("const_l15", "pointer_rows"), ("const_l1", "pointer_rereads"),
                ("hbm_load", "rounds"), ("cycle", "payload_cycles"),
                ("const_l1", "one"), ("const_l1", "pointer_rows"),
                ("hbm_load", "one"), ("cycle", "small_payload_cycles"),
                ("const_l1", "one"), ("const_l1", "pointer_rows"),
                ("hbm_load", "one"), ("cycle", "small_payload_cycles"),
                ("l2_atomic", "one"), ("l2_hit", "one"), ("cycle", "release_cycles"),
                ("l2_hit", "one"), ("cycle", "sanitize_cycles"),
                ("l2_hit", "lane_passes"), ("l2_hit", "lane_passes"),
                ("cycle", "lane_pass_cycles")),
               (("l2_hit", "one"), ("l2_hit", "one"), ("l2_hit", "rounds"),
                ("cycle", "prepare_cycles"), ("cycle", "lane_pass_cycles"),
                ("l2_hit", "one"), ("l2_hit", "one"), ("const_l15", "one"),
                ("l2_hit", "lane_passes"))),
        pointer_overlap=(("hopper", 2),),
        sources=(
            ("dedup", ("NVIDIA/TensorRT-LLM docs/source/blogs/tech_blog/blog18: each token sent "
                      "at most once per (source, target) pair into a rank-major symmetric "
                      "buffer; dispatch pushes, combine pulls")),
            ("kernels", ("NVIDIA/TensorRT-LLM cpp/tensorrt_llm/kernels/communicationKernels/"
                         "moeAlltoAllKernels.cu: dispatch = moeA2APrepareDispatchKernel + "
                         "moeA2ADispatchKernel + moeA2ASanitizeExpertIdsKernel; combine = "
                         "moeA2APrepareCombineKernel + moeA2ACombineKernel (counted in the "
                         "port flashinfer-ai/flashinfer 579435f9 csrc/trtllm_moe_alltoall.cu, "
                         "whose dispatch op launches prepare + dispatch and whose combine op "
                         "launches prepare + combine, and in TensorRT-LLM "
                         "tensorrt_llm/_torch/modules/fused_moe/communication/"
                         "nvlink_one_sided.py, whose dispatch adds moe_a2a_sanitize_expert_ids)")),
            ("chain", ("counted from moeAlltoAllKernels.cu as ported to flashinfer-ai/flashinfer "
                       "579435f9 (2026-02-12, the TensorRT-LLM kernels of blog18's benchmark, "
                       "PR #12195 of 2026-03-13). Dispatch: moeA2APrepareDispatchKernel bumps the "
                       "epoch (flag_val = flag_val + 1: one dependent load, cold after the L2 "
                       "flush); then moeA2ADispatchKernel (one block of "
                       "256 threads per token): load the token's top-k expert ids (HBM: "
                       "bench_moe_comm.py flushes L2 before every dispatch); thread 0 claims a "
                       "slot on each distinct destination rank with atomicAdd, storing each "
                       "result before the next (serial); vectorized_dispatch copies the token "
                       "in rounds of 256 x 16 B, each a load before its stores; the last block "
                       "atomicAdds local_token_counter and reads send_counters (L2) before its "
                       "release fence; moeA2ASanitizeExpertIdsKernel reads recv_counters (L2). "
                       "Combine: moeA2APrepareCombineKernel's block 0 bumps the epoch (flag_val, "
                       "just read by the dispatch barrier: L2) before it reads recv_counters "
                       "(same thread; int and uint32 pointers may alias), then copies "
                       "the slot in rounds (the MoE output, written just before: L2); "
                       "moeA2ACombineKernel reads the token's topk_target_ranks / "
                       "topk_send_indices (written by this iteration's dispatch: L2) before it "
                       "can address its first pulled round: two dependent L2 loads, as "
                       "compiled (session 17: nvcc 13.0 -O3 sm_100a, flashinfer's JIT flags; "
                       "the target-rank load is predicated on send_index >= 0, another array "
                       "and line). The dispatch's payload loop copies "
                       "the two small payloads every MoE dispatch carries after the token "
                       "(token_selected_experts, token_final_scales: blog18 'Interface Between "
                       "Communication and MoE'; nvlink_one_sided.py builds payloads = hidden, "
                       "[sf], slots, [scales]), one round each whose load (another tensor, cold "
                       "after the L2 flush) cannot be hoisted above the previous payload's "
                       "stores (plain pointers, no restrict): two more HBM loads. A post-quantized "
                       "token's scale factors are one more payload (nvlink_one_sided.py: hidden, "
                       "[sf], ...), its rounds counted when dispatch_bytes gives the payloads "
                       "apart (analysis.moe_exchange: a tuple). Not in this "
                       "chain: later pulled rounds' L1 re-reads of the routing metadata (session "
                       "21: the 16-B loop's back edge, 0x1290 -> 0x0660 in 579435f9's sm_100a "
                       "combine, re-runs the send-index and target-rank loads and the pointer-row "
                       "read every round; charged per round by round_reads since session 22, as "
                       "each build's schedule waits on them). Not counted: the "
                       "flags' first pass (in the kernel floor); the "
                       "release fence is its own step (release_fence: one peer round trip). "
                       "Per-peer loops (session 13, TensorRT-LLM moeAlltoAllKernels.cu "
                       "01f0021 and its blog18-era PDL form; flashinfer fb28d7242's port the "
                       "same): both barriers' per-peer work is one warp's, lane l taking peers "
                       "l, l + 32, ...: the dispatch's last block copies send_counters[t] "
                       "into peer t's recv_counters (the store needs the load: one L2 load per "
                       "pass), stores the epoch flags (posted) and polls its own flag slots "
                       "(ld.relaxed.sys until equal: the next peer's poll starts after the "
                       "last one exits, one more L2 load per pass); every combine block's first "
                       "warp stores and polls the same way. The floor and the single counter "
                       "read hold the first pass; each further pass (ceil(ep / 32) - 1, "
                       "warpSize 32) adds one l2_hit to the combine and two to the dispatch. "
                       "flashinfer 5e891c6b "
                       "(2026-07-21) claims the slots in parallel lanes (one atomic): newer "
                       "measurements need ('l2_atomic', 'one'). Session 21 (the compiled "
                       "code: moeA2ADispatchKernel<BlockPolicy, 8> of 579435f9, nvcc 13.0 -O3 "
                       "sm_100a): vectorized_dispatch_impl reads each valid slot's destination "
                       "pointer ptrs.recv_buffers[target_rank][payload] from the kernel's "
                       "parameters (constant bank 0, register-indexed LDC.64) before the "
                       "payload's first load, and the compiled loop checks each pointer before "
                       "it issues the next slot's (LDC.64 R4, c[0x0][R6+0x3c0], then ISETP "
                       "waiting on its scoreboard, per slot): one load per distinct destination "
                       "rank, one after another, for every payload; a destination's row "
                       "(kMaxPayloads = 8 pointers) is 64 B and its first four payloads' "
                       "pointers lie in one 64-B line of the SM's constant L1 (rows at 0x3c8 + "
                       "64 x rank on sm_100a, 0x258 + 64 x rank on sm_90a: after the "
                       "token_selected_experts pointer), so the first payload's loads miss it "
                       "and are served by the L1.5 "
                       "(const_l15 x pointer_rows) and the later payloads' hit it (const_l1: "
                       "the given parts after the first, pointer_rereads, and the two small "
                       "payloads, pointer_rows each); TensorRT-LLM 1.3's kernels (flashinfer "
                       "5e891c6b, LDCU.64 c[0x0][UR+0x3b0], one per slot, each waited) the same. "
                       "The combine's slots' pointer loads (LDC.64 c[0x0][R+0x380]) go out "
                       "together after the routing metadata and before round 1's peer loads: one "
                       "L1.5 fetch (const_l15 x one); a later batch of late_pulls reads its "
                       "slots' rows for the first time in round 1 (0x10b0 @P0 LDC.64 c[0x0]"
                       "[R11+0x380] before slot 7's peer load; review S21-R2): one more L1.5 "
                       "fetch per later batch, in the pull (analysis.moe_exchange). Session 22 "
                       "(a scoreboard walk of the same dispatch's SASS, thread 0's slot claims, "
                       "0x0000-0x1f00): each slot after the first loads its expert id only after "
                       "the previous slot's atomic result (an L1 hit: the ids' 32-B sector came "
                       "with slot 0's load; l1_hit x further_slots) and each valid slot reloads "
                       "the send_counters base from the parameters before its atomic (the first "
                       "from the L1.5: the kernel's first read of that constant line, review "
                       "S22-R6; const_l15 x one, then const_l1 x further_ranks); before each payload's rows the block loads that payload's "
                       "bytes per token from the parameters and waits for it (LDCU c[0x0]"
                       "[UR5+0x13c0], 0x2050, waited at 0x2060; sm_90a c[R+0x1250]; 5e891c6b "
                       "c[UR+0xfb0]): its line's first read from the L1.5 for the first payload "
                       "(const_l15 x one), a constant-L1 hit for each later one (const_l1 x "
                       "further_payloads and once per small payload). Not charged: an L1.5 miss (the rows' 256-B "
                       "L1.5 lines taken as present: a lower bound), the barriers' flag-pointer "
                       "loads (in the kernel floor's barrier); the combine's later rounds' "
                       "constant-L1 and L1 metadata re-reads are round_reads' (session 22)")),
            ("pointer_overlap", ("the same kernels compiled for sm_90a (579435f9 and 5e891c6b, "
                                 "nvcc 13.0 -O3, session 21): slots 0 and 1's pointer loads go "
                                 "out together (@P5 / @P4 LDC.64 c[0x0][R+0x210]), slots 2-7's "
                                 "one after another (LDC.64 c[0x0][R+0x250], each waited): "
                                 "ranks - 1 serial loads on Hopper; sm_100a waits for each "
                                 "(no entry: ranks)")),
            ("staging_copy", ("NVIDIA/TensorRT-LLM moeAlltoAllKernels.cu "
                              "moeA2APrepareCombineKernel: with a payload outside the workspace "
                              "it copies every valid received slot (token_idx < recv_counters"
                              "[source], own rank included) into the symmetric buffer; "
                              "tests/microbenchmarks/bench_moe_comm.py (the blog18 benchmark: "
                              "every stored --perfect_router version up to one importing "
                              "tensorrt_llm._torch.moe, a package of PR #17952, 2026-08-24, "
                              "five months after blog18's tables; only the later 162db94 "
                              "defaults to the workspace) and ConfigurableMoE pass "
                              "payload_in_workspace=False; costed as a read and a write of every "
                              "received copy at the chip's HBM bandwidth")),
            ("staging_source_bytes", (
                "per element of the MoE output (BF16): NVIDIA/TensorRT-LLM thop/moeAlltoAllOp.cpp "
                "moeA2ACombineOp takes a half/bf16/float payload only and returns the payload "
                "dtype; with use_low_precision moeA2APrepareCombineKernel casts it to FP8 "
                "(vectorized_quant: per round each of 256 threads loads 16 source elements, "
                "__syncthreads, a saturating cvt to e4m3, no scale, no amax pass, stores 16 B) "
                "into the symmetric buffer, and moeA2ACombineKernel pulls FP8 (16-B vectors, "
                "converted to float in registers) and writes BF16. The staging pass thus reads "
                "2 B and writes 1 B per element (BF16: 2 and 2). Added by NVIDIA/TensorRT-LLM "
                "PR #11844 ('add fp8 combine in moe_a2a', merged 2026-03; payload_in_workspace="
                "False: the prepare kernel reads the caller's BF16 tensor and writes compact FP8 "
                "to the workspace); read in moeAlltoAllKernels.cu at reasonsolo/TensorRT-LLM "
                "2c5ea89a (a fork carrying it) and in its flashinfer-ai/flashinfer port (PR "
                "#3139): the same steps. "
                "Not charged: the cvt instructions and the per-round __syncthreads (no "
                "Parameter)")),
            ("syncs", ("NVIDIA/TensorRT-LLM blog18: one flag barrier at the tail of dispatch, "
                      "one at the head of combine; the phase's launch and barrier costed as the "
                      "symmetric-memory runtime's kernel floor (NVIDIA/nccl issue 1940)")),
            ("pull", ("NVIDIA/TensorRT-LLM moeAlltoAllKernels.cu moeA2ACombineKernel: one block "
                      "per token (blog18: 'each CTA handles one (reduced) token'), "
                      "getEnvMoeA2ACombineBlockSize default 256 threads (envUtils.h), 16-byte "
                      "vectors loaded from the top-k peers into registers, reduced and stored "
                      "before the loop's next step; every copy loop (vectorized_copy, "
                      "vectorized_dispatch, vectorized_combine; the FP8 cast by elements) "
                      "narrows its vector to 8, 4, 2 or 1 bytes when 16 does not divide the "
                      "token's bytes (size % 16, % 8, % 4, % 2): pull_vector is the widest")),
            ("late_pulls", ("moeA2ACombineKernel<__nv_bfloat16 or half, BlockPolicy, 8> of "
                            "flashinfer-ai/flashinfer 579435f9 moeAlltoAllKernels.cu (the "
                            "combine loop's text is TensorRT-LLM 01f0021's, blog18's kernel), "
                            "compiled for sm_100a with nvcc 13.0 -O3 -use_fast_math (flashinfer's "
                            "JIT flags; ptxas 12.9 schedules it the same) and read in SASS "
                            "(session 17): per round the loads of slots 0-5 are predicated "
                            "(P0-P5), slot 6's is in a branch (no predicate register left) and "
                            "slot 7's metadata load, target-rank load, pointer-table load and "
                            "peer load come after the first reduction instruction, which waits "
                            "on the scoreboard of slots 0-6's peer loads: two dependent peer "
                            "round trips per round when slot 7 is valid, one otherwise (the "
                            "'blackwell' entry). Hopper (sm_90a, the same source and flags; "
                            "review's compile of session 17, recompiled in session 18): slots "
                            "0-3's peer loads go out, the first reduction waits for slots 0-1's, "
                            "then slots 4-7's loads issue: a second trip when any of slots 4-7 "
                            "is valid (the 'hopper' entry). Top-k "
                            "1, 2 and 4: every load before the first consumer (one). Read on "
                            "the 16-B vector path (every preset model's token); the 8-B path "
                            "of a token 16 B does not divide waits three times per round as "
                            "compiled (slot 0's load, then five more, then slots 6-7), so "
                            "there the count is a lower bound. The "
                            "July 2026 kernels (flashinfer 5e891c6b) issue three of the "
                            "eight loads, convert slot 0's (waiting for it), then issue the "
                            "other five: two as well for BF16 (profile 'one-sided-1.3'; their FP8 "
                            "combine waits three times, metadata loads sharing the peer loads' "
                            "scoreboard)")),
            ("round_reads", _ROUND_READS_SOURCE + (
                "579435f9 sm_100a (the 'blackwell' entry; loop 0x0660-0x1290): a later round's "
                "critical chain is slot 0's send-index and target-rank loads (L1), its row, the "
                "scalar loads of the stride and size (c[0x15d8], c[0x15e4]; each waited in turn, "
                "on scoreboards the row loads share), then slot 6's target-rank load and row (in "
                "a branch, issued after them), its peer load; after slots 0-6's loads return, "
                "slot 7's check (c[0x15d0], its send index) and, when valid, c[0x15c8], c[0x15d8], "
                "c[0x15e4] and its row before its peer load: later round {l1 3, const_l1 3} with "
                "only slot 0 valid, {l1 4, const_l1 6} with slots 0-6, {l1 4, const_l1 9} with "
                "all 8; round 1 (the sectors' first loads from L2, each rank's row from the L1.5; "
                "the rows of slots 0 and 2 share a scoreboard with scalar loads, so their L1.5 "
                "fetches follow one another) {l2 2, const_l15 1, const_l1 2, l1 1} / {l2 2, "
                "const_l15 3, const_l1 3, l1 2} / {l2 2, const_l15 4, const_l1 5, l1 2}. 579435f9 "
                "sm_90a (the 'hopper' entry; 0x29f0-0x39c0): later round {l1 4, const_l1 1} / "
                "{l1 4, const_l1 2} with slots 0-3 / {l1 6, const_l1 7} with all 8; round 1 {l2 2, "
                "const_l15 1, l1 2} / {l2 2, const_l15 2, l1 2} / {l2 2, const_l15 5, const_l1 2, "
                "l1 3}. The entries are these less the chain's round-1 send-index and target-rank "
                "L2 loads and one L1.5 fetch, and the late batch's L1.5 fetch. Session 24 (moe): "
                "the cycles the compiled loop issues beyond those loads, the stall counts "
                "(session 22's method) walked in issue order over one later round of the "
                "sm_100a loop (rebuilt here: flashinfer's JIT flags, nvcc 13.0, cuobjdump 13.5; "
                "the addresses equal session 22's), every load at this module's latency (the "
                "metadata loads l1_hit, the LDC/LDCU loads const_l1, a predicated-off load free at "
                "once, slot 6's branch skipped when invalid) and the peer loads as trips: 421.4 / "
                "594.1 / 635.2 / 462.5 cycles beyond the trips with slots {0} / {0-6} / {0-7} / "
                "{0, 7} valid, against 158.1 / 252.2 / 314.3 / 220.2 that the steps above charge: "
                "at least 242 cycles more a later round (the least of the four): ('cycle', 242) in "
                "later_min and later_full. A lower bound: the more-valid patterns' extra (up to "
                "100 cycles) not counted; Hopper's later rounds not walked. Session 26 (moe): round "
                "1 with the code between the block's BAR.SYNC and it (sm_100a 0x0510-0x0650: the "
                "16-B width test, the output row's address, the metadata bases), walked the same "
                "way from the instruction after BAR.SYNC to round 1's back edge (0x0510-0x1290), "
                "every load at this module's latency (a metadata load the first of its array "
                "l2_hit, l1_hit once its sector is back; a constant load the first read of its "
                "64-B line in the kernel const_l15, const_l1 after; the lines warp 0's barrier "
                "reads before BAR.SYNC present), the peer loads as trips: 1,200.9 / 1,646.0 / "
                "1,442.1 cycles beyond the trips with slots {0} / {0-7} / {0-5, 7} valid, against "
                "772.3 / 1,181.1 / 1,143.6 that the chain's round-1 steps, the round-1 entry and "
                "the late batch's fetch charge; over all 128 patterns (slot 0 always valid) at "
                "least 298.5 more (slots {0-5, 7}; {0, 4, 6} the most, 673.4). On that path, "
                "uncharged: the first read of the output pointer's constant line (LDC.64 "
                "c[0x0][0x380] at 0x0530, waited at 0x0570: ('const_l15', 1)) and 193 cycles "
                "issued beyond the loads: both in first_min and first_full. sm_90a (the 'hopper' "
                "entry; the set-up 0x05f0-0x0680 and 0x2950-0x29e0 reads its constants "
                "through the uniform datapath, round 1 0x29f0-0x39c0): for some patterns the "
                "entry's steps charge more than the walk ({0, 1, 4}: 123.1 cycles more, its late "
                "batch's row fetches overlapping the first trip), so nothing is added there (a "
                "lower bound). The combine kernel's tail after the last round is its loop test "
                "and EXIT (the last round's STG drains unpriced). "
                "Session 27: the ('cycle', 242) and "
                "('cycle', 193) steps above left this entry for round_cycles (one count per "
                "valid-slot count). Session 28 (moe): the 'hopper' entry re-read together with its "
                "round_cycles table, on the same sm_90a walk, each latency's count on a pattern's "
                "critical chain read as the walk's slope in that latency (the cycles beyond the "
                "trips grow by the count when the latency grows by one cycle): round 1 {l2 2, "
                "const_l15 1, l1 2} with only slot 0 valid and {l2 2, const_l15 2, l1 2} with slots "
                "0-3 (as above); a later round {l1 3, const_l1 1} with either (the totals above "
                "counted 4 l1 and 1 / 2 const_l1: slot 0's send-index load returns before the "
                "check that waits on it issues). The late batch's steps are charged for every "
                "pattern in which it holds a valid slot, so they are its least: with slot 4 its "
                "only valid slot ({0, 4}) the batch adds no load to either chain (slot 4's metadata "
                "and row go out before the first wait; its trip hides the first batch's later "
                "loads, so the chain holds fewer loads than with slot 0 alone): empty steps. The "
                "full batch's loads beyond slots 0-3's (round 1 const_l15 3, const_l1 2, l1 1, one "
                "const_l15 the late batch's row fetch charges; a later round l1 1, const_l1 5) are "
                "in the all-8 counts of round_cycles (the steps before: round 1 {const_l15 2, "
                "const_l1 2, l1 1}, a later round {l1 2, const_l1 5}). Session 29 (moe): the "
                "'blackwell' entry re-read by the same rule (each latency's count the walk's "
                "slope in it; the late batch's steps its least over the patterns where it holds "
                "a valid slot) on session 26's sm_100a walks (round 1 0x0510-0x1290, the lines "
                "0x15c0, 0x13c0 and 0x340 present; a later round 0x0660-0x1290): a later round "
                "{l1 2, const_l1 2} with only slot 0 valid (the chain: slot 6's send index, which "
                "the first predicate test waits on with slots 1-5's, the peer load, c[0x15d0], "
                "slot 7's send index, c[0x360]; slot 0's target-rank load, its row and the "
                "stride and size loads return before the instructions waiting on them issue: "
                "the totals above counted {l1 3, const_l1 3}) and {l1 4, const_l1 3} with slots "
                "0-6 (above: const_l1 6); round 1 {l2 2, const_l15 2, const_l1 3, l1 1} with "
                "only slot 0 (above: const_l1 2; the chain's three: c[0x15e4] at 0x0630, "
                "c[0x15d0] at 0x0ee0, c[0x360] at 0x1110), "
                "slots 0-6 and the late batch (slot 7: a later round const_l1 3, round 1 "
                "const_l15 1 and const_l1 2 at its least) as above")),
            ("round_cycles", _ROUND_CYCLES_SOURCE + (
                "579435f9 sm_100a (the 'blackwell' entry; round 1 0x0510-0x1290 with the set-up "
                "after BAR.SYNC, a later round 0x0660-0x1290; the pointer rows c[0x0][0x3c0 + 64 "
                "x rank] each on its own 64-B line, away from the output pointer's 0x380 and "
                "the flag rows' 0x13c0 on: no placement changes a walk): round 1 323.7 / 265.2 "
                "/ 243.7 / 245.1 / 227.6 / 207.1 / 193.6 / 360.0 cycles with 1 .. 8 valid slots "
                "(least patterns {0} / {0, 7} / {0, 1, 7} / {0-2, 7} / {0-3, 7} / {0-3, 5, 7} / "
                "{0-5, 7} / {0-7}), a later round 263.3 / 228.9 / 224.4 / 218.0 / 216.5 / 216.1 / 214.7 / "
                "320.9 ({0} / {0, 7} / {0, 2, 7} / {0-2, 7} / {0-3, 7} / {0-4, 7} / {0-5, 7} / "
                "{0-7}): the table (193 x 7, 360) and (214 x 7, 320); session 24's four patterns reproduced: 421.4 / 594.1 / 635.2 / 462.5 "
                "beyond the trips for {0} / {0-6} / {0-7} / {0, 7}; its 242, the least of those "
                "four, exceeded the walk for 22 of the 128 patterns, slot 7 valid and slot 6 not, "
                "by up to 27.3 cycles). Session 29 (moe): against the 'blackwell' entry re-read "
                "as the walks' slopes (round_reads), the same walks give round 1 303.0 / 247.5 / "
                "228.9 / 233.3 / 218.7 / 201.2 / 190.6 / 360.0 and a later round 316.0 / 282.9 / "
                "279.8 / 274.7 / 274.6 / 275.5 / 275.4 / 383.0 (the same least patterns): the "
                "tables (190 x 7, 360) and (274 x 5, 275, 275, 383); no pattern charged more than "
                "its walk, all 8 valid within a cycle. 579435f9 sm_90a (the 'hopper' entry; session 28, with the "
                "entry's round_reads re-read: session 25's build a2a90.o; round 1 from the "
                "instruction after BAR.SYNC, 0x05f0-0x0680, then the 16-B path 0x2950-0x39c0, a "
                "later round 0x29f0-0x39c0; Hopper's latencies; the pointer rows c[0x0][0x250 + 64 "
                "x rank] each alone on its 64-B line, none read before round 1: no placement "
                "changes a walk): round 1 487.0 / 171.1 / 160.1 / 214.0 / 203.1 / 351.0 / 591.6 / "
                "730.2 cycles with 1 .. 8 valid slots (least patterns {0} / {0, 4} / {0, 1, 4} / "
                "{0, 1, 3, 4} and {0, 2-4} / {0-4} / {0-5} / {0-6} / {0-7}), a later round 440.0 / "
                "244.0 / 244.0 / 244.0 / 248.0 / 326.7 / 498.1 / 567.5 ({0} / {0, 4} / {0, 2, 4} and "
                "{0, 3, 4} / {0, 2-4} / {0-4} / {0-5} / {0-6} / {0-7}): the tables (160, 160, 160, "
                "203, 203, 350, 591, 730) and (244, 244, 244, 244, 248, 326, 498, 567); with them no "
                "pattern is charged more than its walk (before, with no table, the entry's late "
                "batch steps charged {0, 1, 4} 123.1 cycles more than its walk)")),
            ("release_fence", ("NVIDIA/TensorRT-LLM moeAlltoAllKernels.cu (flashinfer-ai/"
                               "flashinfer 579435f9 port): moeA2ADispatchKernel's last block "
                               "stores send_counters into every peer's recv_counters, then "
                               "issues fence.release.sys before its relaxed completion-flag "
                               "stores; moeA2ACombineKernel's fence is commented out (its flags "
                               "go relaxed, no pushed data before them)")),
            ("block_per_token", ("NVIDIA/TensorRT-LLM moeAlltoAllKernels.cu (flashinfer-ai/"
                                 "flashinfer 579435f9 port): TLLM_MOE_A2A_ONE_BLOCK_PER_TOKEN "
                                 "defaults to true; moeA2ADispatchKernel's block copies its token "
                                 "to every destination rank, moeA2ACombineKernel's block pulls "
                                 "its token from every source (BlockPolicy::token_idx = "
                                 "blockIdx.x)")),
            ("claim_cycles", (
                "session 25 (moe): moeA2ADispatchKernel<BlockPolicy, 8> of flashinfer-ai/"
                "flashinfer 579435f9 (TensorRT-LLM's kernel, blog18's dispatch) compiled with "
                "flashinfer's JIT flags (nvcc 13.0 -O3 -use_fast_math) for sm_100a (session 24's "
                "build) and sm_90a, read with cuobjdump 13.5: thread 0's path from the load of the "
                "expert ids' pointer to the block's BAR.SYNC (sm_100a 0x0140-0x1d80, sm_90a "
                "0x00f0-0x1830), followed through the compiled "
                "branches for every pattern of new and repeated destination ranks over the 8 "
                "slots (128 patterns; slot 0 always new) and issued at the stall counts, each "
                "instruction after the scoreboards it waits for: per slot the expert id's load, "
                "the division of the id by the experts per rank (IMAD.HI, ISETP, SEL: ~50 "
                "cycles), the already-copied mask test, then either the claim (the counter base "
                "LDC.64, the ATOMG, on sm_100a the compiler's warp-aggregated form: VOTEU, FLO, "
                "POPC, SHFL.IDX of the result; the two index stores, global and shared) or the "
                "duplicate's -1 marks. The loads the chain charges (the ids, the ATOMGs, the "
                "counter base's const_l15 then const_l1) are taken as the chain prices them, "
                "other constant loads at const_l1 where exposed, S2R/SHFL/MUFU/I2F/F2I "
                "scoreboards free (a lower bound). Beyond those: sm_100a 1,063.4-1,161.4 cycles "
                "(least: ranks 2, the second at slot 7), sm_90a 1,006.7-1,031.7 (least: 8 ranks); "
                "the least over both builds and every pattern, 1,006.7, over the 8 slots: 125 "
                "cycles a slot (the kernel's prologue before the ids' pointer, 88 cycles on "
                "sm_100a, and the SHFL/S2R latencies not counted). Other top-k builds not walked: "
                "their claims are taken at the same cycles a slot (assumption).")),
            ("payload_cycles", (
                "session 25 (moe), the same two builds (nvcc 13.0, read with cuobjdump 13.5): "
                "every thread of the block, after the "
                "claims' BAR.SYNC (sm_100a 0x1d90-0x5820, sm_90a 0x1840-0x5420), reads the "
                "staged ranks and indices (LDS), then per payload its source pointer and bytes per "
                "token (waited), the 16-B width test, each valid slot's destination row (LDC.64, "
                "waited; sm_90a slots 0-1 together) and its address, then the copy loop (per "
                "round an LDG.E.128, then a predicated STG.E.128 per slot and the loop test), and "
                "the payload loop's back edge. Walked for thread 0 (it copies a round of every "
                "payload) in issue order at the stall counts, the chain's own loads (the rounds' "
                "loads as trips; bytes and rows at const_l15 for the first payload, const_l1 "
                "after, as the chain charges them) subtracted, LDS at shared_load and other "
                "constant loads at const_l1 where exposed, for 1-4 payloads of 1-3 rounds with 1, "
                "2, 4, 8 valid slots. sm_100a: the first payload 463.9 + 25 per row after the "
                "first (638.9 with 8), each further payload 346 + 25 a row, each round after a "
                "payload's first 97; sm_90a: 438.9 / 616.9 (rows 1 and 2 together), 333 + 26-30 "
                "a row after the first load, 100 a round. The least of the two, each term: 333 a "
                "payload, 25 a pointer row after its first, 97 a further round, 105 once (the "
                "first payload's extra: the LDS of the staged routing and the rows' 8 address "
                "products; 117.9 / 105.9). Not counted here: the block's tail after the loop (its "
                "counter atomic's set-up: release_cycles, session 26), the SHFL/S2R latencies, "
                "other vector widths (a "
                "payload that 16 B does not divide: 8-, 4-, 2-, 1-B loops not walked, taken "
                "alike: assumption)")),
            ("release_cycles", (
                "session 26 (dispatch): moeA2ADispatchKernel<BlockPolicy, 8> of flashinfer-ai/"
                "flashinfer 579435f9, the builds of claim_cycles (sm_100a session 24's, sm_90a "
                "session 25's; nvcc 13.0 -O3 -use_fast_math, cuobjdump 13.5): the last block's "
                "first warp, lane 0, from after the payload loop's BAR.SYNC to its release "
                "fence's MEMBAR.ALL.SYS (sm_100a 0x5830-0x5bf0, sm_90a 0x5430-0x5880; sm_90a "
                "first computes the lane id threadIdx.x % warpSize by I2F/MUFU.RCP/F2I): "
                "local_num_tokens' test (LDC, waited), the local_token_counter atomic in the "
                "compiler's warp-aggregated form (its base LDC.64 waited; VOTEU, FLO, POPC, the "
                "ATOMG, SHFL.IDX of its result), the is-last test and its SHFL broadcast, "
                "ep_size (LDC, waited), the send_counters base (LDC.64, waited), one pass of the "
                "recv_counters loop (the send count's LDG beside the peer row's LDC.64 "
                "c[0x0][R+0x380], then the STG), the epoch's LDG (hidden behind the fence). "
                "Issued in order at the stall counts (session 22's method), the chain's loads "
                "(the ATOMG: l2_atomic; the send count: l2_hit) as trips, other constant loads "
                "const_l1 where exposed, S2R/SHFL/VOTEU/FLO/POPC/MUFU/I2F/F2I free: sm_100a 233.1 "
                "cycles, sm_90a 283.7; the least, 233, once per dispatch (a lower bound). Not "
                "counted: the recv_counters loop's further lane passes beyond 32 ranks (+12 "
                "cycles each on sm_100a, +20 on sm_90a, beside their l2_hit lane_passes step); "
                "the lanes' distinct rows in that LDC.64 (one constant-cache request per distinct "
                "address; no sourced cost per request: hidden behind the send count's L2 load "
                "unless a request costs more than its share of it); the fence (release_fence) and "
                "after it the flag stores and polls (the flag barrier the kernel floor holds). "
                "The same source text in TensorRT-LLM 01f0021 and 439e0799 (1.3, EPLB off): "
                "one-sided-1.3 inherits it.")),
            ("sanitize_cycles", (
                "session 26 (dispatch): moeA2ASanitizeExpertIdsKernel of flashinfer-ai/flashinfer "
                "579435f9 (the third kernel of TensorRT-LLM nvlink_one_sided.py's dispatch: one "
                "thread per received slot, ep x max_tokens_per_rank), the same two builds (nvcc "
                "13.0, cuobjdump 13.5): a "
                "thread from entry to the EXIT after its recv_counters test (0x0000-0x0270 on "
                "both): the global index, its division by max_tokens_per_rank (I2F/MUFU.RCP/F2I "
                "and the IMAD correction: source rank and token), the source's count (the "
                "chain's l2_hit, a trip) and the test. Issued at the stall counts, other constant "
                "loads const_l1 where exposed: sm_100a 180.7 cycles, sm_90a 164.7; the least, "
                "164, once per dispatch. A valid token's path: every thread walks at least this "
                "far, an invalid one then stores its top-k -1 ids (323.1 / 383.1 cycles to its "
                "EXIT): a lower bound. The aiconfigurator collector's op does not launch this "
                "kernel (no step there).")),
            ("lane_pass_cycles", (
                "session 26 (dispatch): moeA2ADispatchKernel<BlockPolicy, 8> of flashinfer-ai/"
                "flashinfer 579435f9, the builds of claim_cycles (nvcc 13.0, cuobjdump 13.5): the "
                "last block's first warp runs three per-peer loops, lane l taking ranks l, l + "
                "32, ... (the send counts into the peers' recv_counters before the release "
                "fence, the flag stores and the polls after it); their first pass is "
                "release_cycles' and the kernel floor's barrier, each further pass (beyond 32 "
                "ranks: lane_passes) is walked here for lane 0, every poll finding its flag at "
                "once (a lower bound): the send-count loop's back edge (sm_100a 0x5ad0-0x5b70, "
                "sm_90a 0x5770-0x5810) 12.0 / 20.0 cycles beyond its load (the chain's l2_hit "
                "lane_passes), the flag-store loop's (0x5ca0-0x5d00 / 0x5930-0x59a0: the peer "
                "row's LDC.64 waited, ST.E.STRONG.SYS) and the poll loop's (0x5d30-0x5f10 / "
                "0x59d0-0x5bb0: CS2R clock, the own row's LDC.64 and ep_size's LDCU waited, the "
                "LD.E.STRONG.SYS poll, the chain's other l2_hit lane_passes) 126.1 / 123.4 "
                "together: sm_100a 138.1, sm_90a 143.4 a further pass; the least, 138 (the lanes' "
                "distinct peer rows in the LDC.64 loads taken as one constant-L1 hit: a lower "
                "bound). The "
                "combine's: session 27 (moe), moeA2ACombineKernel<__nv_bfloat16, BlockPolicy, 8> "
                "of the same two builds: every block's first warp polls the peers' flags (lane l "
                "taking ranks l, l + 32, ...) and block 0's first stores its own flag into them "
                "before; their first pass is the kernel floor's barrier. Block 0, lane 0 walked "
                "from the flag's load to the CCTL.IVALL before BAR.SYNC (sm_100a 0x0130-0x04c0, "
                "sm_90a 0x0150-0x05c0) at ep ranks less the same walk at 32, for every ep 33-64 "
                "and rank, every poll finding its flag at once (a lower bound), the LD.E.STRONG."
                "SYS polls as trips (the chain's l2_hit lane_passes), a constant load const_l1 "
                "when its 64-B line was read before and const_l15 when not (a row load's lanes "
                "taken as one request): the flag-store loop's back edge (sm_100a 0x01e0-0x0240, "
                "sm_90a 0x02e0-0x0350: the peer row's LDC.64 waited, the ST.E.STRONG.SYS) and "
                "the poll loop's (0x0290-0x04a0 / 0x03c0-0x05a0: CS2R clock, the rank's LDC "
                "waited (sm_100a; hoisted on sm_90a), the own row's LDC.64 waited, the poll, "
                "ep_size's LDCU waited (sm_100a; a ULDC on sm_90a)): sm_100a 237.0 cycles a further pass at every ep (the rows of "
                "peers 32-63, c[0x0][0x14c0-0x15bf], lie in lines no earlier load read: one "
                "L1.5 fetch), sm_90a 123.4 at ep 33-38 (peers 32-37's rows share the line of "
                "peers 30-31's, c[0x0][0x1340]) and 207.6 at ep >= 39; the least, 123. "
                "TensorRT-LLM 1.3's combine (flashinfer 5e891c6b sm_100a, BF16 and FP8 "
                "instances: the same loops, 0x0180-0x0510) 152.8 at ep 33, 237.0 beyond: "
                "one-sided-1.3 inherits 123, a lower bound there.")),
            ("prepare_cycles", (
                "the dispatch's (session 26, dispatch): moeA2APrepareDispatchKernel of "
                "flashinfer-ai/flashinfer 579435f9 (one block of ep threads) in the builds of "
                "claim_cycles (nvcc 13.0, cuobjdump 13.5), thread 0 (it zeroes send_counters[0] "
                "and local_token_counter and bumps the epoch) from entry to its EXIT "
                "(0x0000-0x0130 on both): the global index, the counters' pointers (LDC.64) and "
                "stores, the epoch's load (the dispatch chain's first step, a trip) and store. "
                "Issued at the stall counts, other constant loads const_l1 where exposed, S2R "
                "free: sm_100a 121.1 cycles (blockDim and ep_size by waited LDC / LDCU besides "
                "the three pointer LDC.64s), sm_90a 89.4 (those two by ULDC; the three pointer "
                "LDC.64s waited on both: review S26-R1); the least, 89, once per dispatch (the EXIT's own stall not counted; a "
                "lower bound). TensorRT-LLM 1.3 (439e0799) adds PDL calls "
                "(cudaGridDependencySynchronize, cudaTriggerProgrammaticLaunchCompletion) to this "
                "kernel, not in these builds: one-sided-1.3 inherits 89, a lower bound there. "
                "The combine's: "
                "session 25 (moe), the same two builds (nvcc 13.0, cuobjdump 13.5): "
                "moeA2APrepareCombineKernel<BlockPolicy> for block 0, thread 0 (it bumps the epoch "
                "and stages a token), a BF16 payload on the 16-B path, from the kernel's entry to "
                "its EXIT: the epoch's load and store, the division of the block index by "
                "max_tokens_per_rank (source rank, token), the recv_counters load and test, the "
                "copy loop's trip-count division (sm_100a: I2F/MUFU.RCP/F2I, then a remainder loop "
                "and a 4x-unrolled one, 0x0000-0x08d0; sm_90a: one round a pass, 0x0000-0x0df0), "
                "each round's LDG.E.128 then STG.E.128. The chain's loads (the epoch, the counter, "
                "the rounds' loads) as trips, other constant loads const_l1 where exposed, "
                "MUFU/I2F/F2I/S2R free: sm_100a 425.4-484.4 cycles for 1-8 rounds, sm_90a 294.4 "
                "+ 34 a round after the first; the least, 294, once per staged combine (a lower "
                "bound). The combine kernel's own code before round 1 and round 1's issue: "
                "round_reads' round-1 entries (session 26)"))),
        release_fence=(True, False), block_per_token=True, staging_source_bytes=2,
        cycles=({"prepare_cycles": 89, "claim_cycles": 125, "payload_cycles": (333, 25, 97, 105),
                 "release_cycles": 233, "sanitize_cycles": 164, "lane_pass_cycles": 138},
                {"prepare_cycles": 294, "lane_pass_cycles": 123}),
        late_pulls=(("blackwell", 8, 0, ((7,),)), ("hopper", 8, 0, ((4, 5, 6, 7),))),
        round_reads=(
            ("blackwell", 8, 0,
             (("const_l15", 1), ("const_l1", 3), ("l1_hit", 1)),
             (("const_l15", 3), ("const_l1", 3), ("l1_hit", 2)),
             ((("const_l1", 2),),),
             (("l1_hit", 2), ("const_l1", 2)),
             (("l1_hit", 4), ("const_l1", 3)),
             ((("const_l1", 3),),)),
            ("hopper", 8, 0,
             (("l1_hit", 2),),
             (("const_l15", 1), ("l1_hit", 2)),
             ((),),
             (("l1_hit", 3), ("const_l1", 1)),
             (("l1_hit", 3), ("const_l1", 1)),
             ((),))),
        round_cycles=(("blackwell", 8, 0, (190, 190, 190, 190, 190, 190, 190, 360),
                       (274, 274, 274, 274, 274, 275, 275, 383)),
                      ("hopper", 8, 0, (160, 160, 160, 203, 203, 350, 591, 730),
                       (244, 244, 244, 244, 248, 326, 498, 567))),
    ),
    ExchangeKernel(
        "pplx", dedup="expert", forwarding=False, scale_out=True, pipelined=True,
        local_copy=True, kernels=(1, 1), syncs=(1, 1), message_header=4, staging_copy=True,
        send_staging=True,
        sources=(
            ("dedup", (f"{_PPLX} 7af3059 (the README table's kernels) csrc/all_to_all/"
                      "internode_scatter.cu and internode_gather.cu, and 2bd6e30 internode_"
                      "{dispatch,combine}.cu and intranode_{dispatch,combine}.cu: warp j of the "
                      "token's block sends the token to the rank of its j-th expert, into that "
                      "expert's slot (nvshmemx_putmem_signal_nbi_warp; intranode: a warp copy "
                      "into remoteBuffer.getTokenPtr(dstRank, dstLocalExpert, index)), and the "
                      "combine sends one copy back per (token, expert): one message per (token, "
                      "expert), no per-rank de-duplication; NVLink (NVSHMEM P2P) inside a node, "
                      "RDMA (IBGDA) across, no forwarding")),
            ("message_header", (f"{_PPLX} 7af3059 internode_scatter.cu: the staged token is "
                               "hidden + scale bytes followed by a uint32 source index, token "
                               "stride round_up(bytes + 4, 16); the 4 B are charged, the <= 12 B "
                               "of alignment padding are not (7392 -> 7408 B for a DeepSeek FP8 "
                               "token with per-128 scales: 0.16%)")),
            ("send_staging", (f"{_PPLX} 7af3059 internode_scatter.cu (and 2bd6e30 internode_"
                             "dispatch.cu): the token's block copies it (int4) from dp_x into "
                             "the local symmetric buffer xBufferIn, bar.sync, then puts from "
                             "there; charged as a read and a write of each own token at the "
                             "chip's HBM bandwidth, added to the phase (exact when a block holds "
                             "one token; an upper bound when its later copies overlap earlier "
                             "puts). 2bd6e30's intranode_dispatch.cu stages through shared "
                             "memory instead (no HBM pass): overstated for it")),
            ("staging_copy", (f"{_PPLX} 7af3059 internode_gather.cu (and 2bd6e30 internode_"
                             "combine.cu): per received (token, expert) copy the block copies "
                             "the expert output from expert_y into the local symmetric buffer "
                             "xBufferIn, __syncthreads, then puts it back to the source rank; "
                             "costed as a read and a write of every received copy at the chip's "
                             "HBM bandwidth, added to the phase (as send_staging). 2bd6e30's "
                             "intranode_combine.cu copies straight from expert_x (no staging): "
                             "overstated for it")),
            ("kernels", (f"{_PPLX} 2bd6e30 csrc/all_to_all/intranode_dispatch.cu, "
                         "intranode_combine.cu, internode_dispatch.cu, internode_combine.cu (and "
                         "7af3059 internode_scatter.cu / internode_gather.cu): "
                         "dispatch and combine are each one cudaLaunchCooperativeKernel with its "
                         "send and receive parts (SplitMode::NONE, the default of "
                         "AllToAll.dispatch/combine do_send=do_recv=True); SplitMode::SEND / RECV "
                         "launch the parts apart on request")),
            ("syncs", (f"{_PPLX}: the receive part waits for every peer's per-expert token "
                      "count, then for that many tokens; costed as the symmetric-memory kernel "
                      "floor inside one node, one NCCL LL step across the network (assumption, "
                      "EXCHANGE_SYNC)")),
            ("release_fence", (f"{_PPLX} 2bd6e30 csrc/all_to_all/"
                               "intranode_dispatch.cu: warps copy tokens into the peers' buffers, "
                               "a grid sync, then st.release.sys of the per-expert counts "
                               "(st_flag_release); intranode_combine.cu: the copy to the peer, "
                               "then atom.release.sys of its flag (add_flag_release); the NVSHMEM "
                               "kernels (7af3059) use nvshmemx_putmem_signal_nbi_warp, whose "
                               "signal is delivered only after the data (NVSHMEM put-with-signal "
                               "semantics): to a load/store peer NVSHMEM 3.2.5's "
                               "nvshmemii_put_signal_threadgroup copies with the warp, then lane 0 "
                               "runs __threadfence_system (MEMBAR.SC.SYS in 7af3059's gatherKernel "
                               "SASS, nvcc -arch=sm_90a -O3 -rdc=true) before the signal. The "
                               "combine's blocks send their copies one after another "
                               "(combine_blocks), each copy's fence before the next: one peer "
                               "round trip per copy to another rank, the slowest block's count "
                               "(the expected largest over the blocks with the most copies, each "
                               "copy's source another rank with probability (ep - 1) / ep). Across "
                               "the network a copy to a load/store peer still fences (MEMBAR.SC.SYS) "
                               "before its signal, which then goes to the NIC (the job is not "
                               "load/store-connected): one in-node peer round trip more per such "
                               "copy on its block's chain (each copy's source a load/store peer "
                               "with probability (ranks per domain - 1) / ep; block 0 also posts "
                               "its sync signal); over RDMA alone none. The dispatch's warps send "
                               "one token each at every published size (132 blocks): one fence, "
                               "in one node")),
            ("count_grid", (f"{_PPLX} 7af3059 csrc/all_to_all/internode_scatter.cu: the "
                            "dispatch launches NUM_WARPS = 10 warps per block and min(max("
                            "ceil(numExperts / 10), maxNumTokens x expertsPerToken), 132) blocks "
                            "(AllToAllInterNode::scatter); the last warp of block b counts the "
                            "tokens of experts b, b + gridDim, ... (dpSize 1, as in "
                            "tests/bench_all_to_all.py) and lane 0 sends each count with "
                            "nvshmemx_signal_op before the next expert (scatterKernel, the "
                            "count branch). Assumption: maxNumTokens = the tokens per rank (the "
                            "benchmark's use_max_tokens)")),
            ("chain", (f"the count warp's serial chain ({_PPLX} 7af3059 internode_scatter.cu, "
                       "NVSHMEM 3.2.5-1 as archived in valgur/NVSHMEM-archive 6d8ab15, "
                       "src/include/non_abi/device/pt-to-pt/ibgda_device.cuh, the release "
                       "pplx's docs/install-driver-and-dependencies.md builds at 32ef585): each "
                       "expert's count re-reads the routing indices (__ldg) before the warp's sum "
                       "and the signal: the first pass one L2 load (the same indices every "
                       "sample), later passes L1 hits (not counted, a lower bound: session "
                       "16 had no L1 Parameter; 9 x l1_hit, 0.15 us, at one token); a signal "
                       "to a rank in the "
                       "sender's load/store domain is a store (posted, off the chain); to a "
                       "rank across the network it is one IBGDA post on that peer's RC QP, "
                       "shared by the CTAs (NVSHMEM_IBGDA_NUM_RC_PER_PE 2, RC_MAP_BY cta, the "
                       "defaults: pplx sets neither). Its steps were counted in the SASS of "
                       "the release's own precompiled sm_90 code (libnvshmem_device.a "
                       "transfer_device.cu.o: the kernels CALL nvshmemi_transfer_amo_nonfetch "
                       "and nvshmemi_transfer_put_signal<warp>, __noinline__ in 3.2.5; pplx "
                       "compiled with nvcc -arch=sm_90a -rdc=true -O3 as its CMakeLists.txt, "
                       "session 17): those the posting lane always runs are the load of "
                       "qp_group_switches (the QP's address depends on it), the QP's qp_type "
                       "(the reservation's size depends on it; L1 was invalidated by the "
                       "previous post's fence), the atomicAdd on resv_head, the completion-queue "
                       "check once the 1024-WQE send ring has wrapped (the CQ record, then "
                       "cons_idx: wrapped in every published row, the benchmark runs the V2-Lite "
                       "configurations first in the same NVSHMEM job), the __threadfence "
                       "(MEMBAR.SC.GPU) after the WQE stores, priced as their acknowledgement "
                       "from L2 (an L2 round trip, as release_fence prices pushed stores), the "
                       "atomicCAS on ready_head and the read of resv_head: 6 L2 round trips and "
                       "2 L2 atomics. A lower bound: the doorbell (the lock atomicCAS, the "
                       "atomicMax on prod_idx, two more __threadfence, the doorbell-record and "
                       "BlueFlame (MMIO) stores) runs only when the post rings it (session 16 "
                       "had counted its two atomics on every post); not counted either: the "
                       "QP fields that may hit L1, the key-table lookups (constant memory). "
                       "The dispatch's receive loop waits for every slot's count and then "
                       "for that many tokens before cg::this_grid().sync(): the grid sync "
                       "follows the last byte and signal (MEMBAR.GPU + ERRBAR, the barrier "
                       "atomicAdd, the polled load: l2_hit + l2_atomic + l2_hit, session 18; "
                       "the combine's grid sync comes before its waits, while the copies fly: "
                       "not counted). "
                       "After its grid sync the dispatch's receive part (scatterKernel, "
                       "lines 191-237) has every block walk all experts / ep x ep slots of "
                       "numTokensPerDP in order (its loop runs past its last token to the end "
                       "of the slots), two dependent __ldg per slot in the SASS (LDG.E.CONSTANT "
                       "re-read of the slot, then the next slot's, each waited for before the "
                       "branch): the first an L2 load (written before the sync), the rest "
                       "L1 hits but the first load of each further 32-B sector (8 uint32 "
                       "slots), an L2 load since the L1 fills by sectors (walk_slot_bytes, "
                       "exchange.l1_sector; session 21: 31 of the 256 slots' first loads, "
                       "counted as L1 hits before); between a slot's loads the cycles the "
                       "compiled loop schedules (walk_cycles, session 22); and per received "
                       "token of the block with the most "
                       "(receive_walk; SASS loop 0x3ee0-0x47a0, session 20): the slot's first "
                       "check (0x3f30, L1), the copy's rounds (0x43c0-0x45b0: one LDG.E.128 then "
                       "its STG.E.128 per 320 x 16 B, 2 for a DeepSeek FP8 token; the received "
                       "tokens in L2: receive_rounds), then thread 0's load of the token's index "
                       "(0x4650, after the copy's last store; its line loaded by that round: L1) "
                       "before the sourceIndex store, which warp 0 waits for: per token "
                       "l1_hit + receive_rounds x l2_hit + l1_hit (session 17 had counted one "
                       "L2 load). "
                       "Combine (7af3059 internode_gather.cu, "
                       "gatherKernel's send loop): each block sends its received copies one "
                       "after another: the load of sourceExpert[token] (L2, written by the "
                       "dispatch), then after __syncthreads the copy's expert output (HBM at "
                       "128 tokens: the benchmark's c10d and NVSHMEM all-to-alls, ~4 x 242 MB, "
                       "run between samples; at 1 token they move ~4 x 1.9 MB, the output "
                       "stays in L2: l2_flushed=False) into xBufferIn, __syncthreads, and warp 0's put-with-signal; "
                       "in a job whose ranks span the network every copy's signal is an IBGDA "
                       "post (also to an NVLink peer: NVSHMEM 3.2.5's nvshmemi_signal_op uses "
                       "atomicAdd_system only when the whole job is load/store-connected, "
                       "init.cu set_job_connectivity), the same 6 L2 round trips and 2 L2 "
                       "atomics; and before its first copy warp w of block b signals rank "
                       "b x 8 + w (gatherSyncBuffer, SIGNAL_SET: a store inside the sender's "
                       "node, an IBGDA post across it) and the copy loop's __syncthreads waits "
                       "for it: across the network the slowest block (block 0) posts once more "
                       "(combine_posts). Inside one node each copy's put-with-signal is a warp "
                       "copy, then lane 0's __threadfence_system (MEMBAR.SC.SYS in the gather "
                       "kernel's SASS) and atomicAdd_system, and the next copy's __syncthreads "
                       "waits for warp 0: one release fence per copy (release_fence: the "
                       "slowest block's copies to other ranks; across the network its copies "
                       "to NVLink peers). Expected received copies per rank: tokens x k. "
                       "Every nvshmem_uint64_wait_until in the receive parts ends in "
                       "nvshmemi_transfer_syncapi_update_mem (NVSHMEM 3.2.5 include/device/"
                       "nvshmem_defines.h NVSHMEM_WAIT_UNTIL; src/device/comm/"
                       "transfer_device.cu at valgur/NVSHMEM-archive 6d8ab15), a CALL whose "
                       "SASS is MEMBAR.SC.GPU + ERRBAR + CCTL.IVALL, then the CPU proxy's "
                       "consistency round trip only when job_connectivity > GPU_PROXY: not in "
                       "the rows (IBRC sets enforce_cst_at_target only without GDRCopy, "
                       "ibrc.cpp, and pplx's 32ef585 install guide builds with it; "
                       "init.cu set_job_connectivity): one GPU-scope fence per wait, priced as "
                       "an L2 round trip (session 21): in the dispatch the fence after the "
                       "last slot's final poll (scatterKernel SASS 0x37b0; a lower bound: a "
                       "count arriving after its tokens adds the first fence, the count's "
                       "re-read and the poll), in the combine the fence after the k-signal "
                       "poll (gatherKernel 0x29f0) and, after block 0's reduce, its sync-flag "
                       "poll (an L2 load) and fence (0x3c50-0x3cc0) before the kernel exits; "
                       "across the network, where the count warp's posts are the dispatch's "
                       "chain, the slot whose count arrives last also runs the count wait's "
                       "fence, the count's re-read and the token poll's first load (0x3670-"
                       "0x3740: 3 L2 trips, after the count warp's chain)")),
            ("interleaved_chain", ("in one node the dispatch's sending warps (scatterKernel "
                                   "7af3059 l.107-150, SASS nvcc 13.0 sm_90a, session 18): the "
                                   "block's token staged into xBufferIn (LDG.E.128 -> STG.E.128 "
                                   "per 288 x 16 B round, the next round's load issued after the "
                                   "store that waits for this one's: 2 dependent HBM rounds for a "
                                   "DeepSeek FP8 token, both counted since session 19), "
                                   "after warp 0's walk over the earlier tokens (l.157-161: an "
                                   "__ldg of the token's expert ids whose result addresses the "
                                   "shared tokenIndex increment, SASS 24c0-2550, one per token; "
                                   "the __ldg an L1 hit, the count warp having read the lines "
                                   "(send_walk, session 19), with the loop's LDC, its LDS and "
                                   "its scheduled cycles (send_walk_cycles, session 23)), "
                                   "bar.sync, the expert id (__ldg), the put's P2P pointer "
                                   "(__ldg), then the put's warp copy (put_rounds, one L2 load of "
                                   "the staged token per 512 B); they run beside the count warp, "
                                   "whose chain in one node is one load (the sending warps' is the "
                                   "larger: counted instead), across nodes its posts (the larger at "
                                   "one token; at 128 tokens the links dominate both); and "
                                   "the count warp's chain (dispatch, across nodes) and the combine's "
                                   "slowest block's copies after its first, their posts and "
                                   "their fences (release_fence) run while the other warps and "
                                   "blocks send: composed with the links' time as a max (lead's "
                                   "rule, session 17, review S17-R1); the combine's first copy's "
                                   "loads (sourceExpert, then the expert output) come before its "
                                   "first byte can move: added (chain)")),
            ("count_pass_cycles", (f"{_PPLX} 7af3059 csrc/all_to_all/internode_scatter.cu "
                                   "l.77-101 (the count branch), compiled as its CMakeLists.txt "
                                   "does (nvcc 13.0 -arch=sm_90a -rdc=true -O3; session 18's "
                                   "build, cuobjdump 13.5; session 24): the last warp's loop "
                                   "over its experts, scatterKernel<10,true,true> 0x2690-0x2f10 "
                                   "on lane 0's path (the division for the expert's rank, one "
                                   "pass of the index loop at 8 entries, the 5-shuffle warp sum, "
                                   "nvshmem_ptr's peer-table load and its test, the count's "
                                   "address), for an expert on an NVLink peer (its count a "
                                   "ST.E.64.STRONG.SYS, 0x2c50): 101 instructions, 391 cycles of "
                                   "stall counts; to a peer across the network the same path "
                                   "reaches the CALL of nvshmemi_transfer_amo_nonfetch (0x2ce0) "
                                   "and returns through 0x2cf0-0x2f10: 431 (the least, 391, "
                                   "taken); less the 12 issued under the index load (the first "
                                   "pass's is priced as an L2 trip) and the 11 under the two "
                                   "constant loads of NVSHMEM's peer table (bank 3) the path "
                                   "waits for (LDC.64 c[0x3][RZ] 0x2a30, waited for at 0x2a60 "
                                   "after 4 cycles; @P0 LDC.64 0x2bf0, at 0x2c30 after 7), each "
                                   "charged const_l1 instead, the rule of the other cycle counts "
                                   "(send_walk_cycles, copy_cycles; DeepEP's and NCCL EP's; "
                                   "review S24-R4, session 25): 368 cycles + 2 x const_l1 per "
                                   "walked expert (session 24 had 379 and no LDC). Not "
                                   "counted: the shuffles' and the peer-table load's latency "
                                   "beyond their windows. The pass after a post re-reads the "
                                   "routing indices (LDG.E.CONSTANT 0x2890) from L2, the post's "
                                   "fence (MEMBAR.SC.GPU; CCTL.IVALL) having emptied L1: one "
                                   "l2_hit per signal after the first ('further_signals'; each "
                                   "post but the last has a pass after it). In one node the counts are stores beside the "
                                   "copies and the sending warps' chain is the longer: none. "
                                   + _STALL_COUNTS)),
            ("post_cycles", ("NVSHMEM 3.2.5 (the nvidia-nvshmem-cu12 3.2.5 wheel's "
                             "lib/libnvshmem_device.a, transfer_device.cu's sm_90 cubin, cuobjdump "
                             "13.5 -sass; session 24): nvshmemi_transfer_amo_nonfetch<unsigned "
                             "long> is a called function (pplx-kernels 7af3059's scatterKernel "
                             "calls it for each count signal, nvshmemx_signal_op with "
                             "NVSHMEM_SIGNAL_SET, by lane 0 alone). Lane 0's path for a SIGNAL_SET "
                             "to a peer across the network, IBGDA initialised, RC queue pair "
                             "(rc_map_type cta, shared among CTAs), one lane active (no warp "
                             "coalescing: 2 WQEs + a NOP), the send ring wrapped with its slot "
                             "already completed, NIC buffers in GPU memory (GPU-scope fence), no "
                             "doorbell (the submit sees a later reservation): entry 0x0000 "
                             "(register saves), the support_half_av_seg=true instance 0x0240-"
                             "0x7e40 (get_rc 0x1e50-0x3a50, reserve 0x3af0-0x47b0 with the CQ "
                             "check 0x3f80-0x4040, the atomic WQE 0x4880-0x63c0, the NOP and "
                             "submit 0x6460-0x6b30), return 0x109f0-0x10b30: 636 instructions, "
                             "2,054 cycles of stall counts, less the 137 issued under the loads "
                             "and fence the post's other steps already price (qp_group_switches "
                             "54, qp_type 29, resv_head atomic 15, the CQ record's cons_idx "
                             "pointer 4 and cons_idx 5, MEMBAR.SC.GPU 6, ready_head CAS 15, "
                             "resv_head 9): 1,917; and less the cycles under the three further "
                             "L2 trips the path waits for (first touches of their sectors after the "
                             "last post's CCTL.IVALL: dev_idx at qp+0xc, 0x3420, with npes beside "
                             "it, 117; nwqes at qp+0x28, 0x3f10, 7; the CQ record's address at "
                             "qp+0x48, 0x3fa0, 4): 1,789. The =false instance (0x7e50-0xfb10) takes "
                             "2,143 - 184 - 115 = 1,844, SIGNAL_ADD 2,059 - 137 - 128 = 1,794: the "
                             "least is taken. The combine's posts (gatherKernel: block 0's sync signal, "
                             "the same SIGNAL_SET; per copy nvshmemx_putmem_signal_nbi_warp, "
                             "across the network nvshmemi_transfer_put_signal<warp>, to an NVLink "
                             "peer a warp copy, its fence and a SIGNAL_ADD amo_nonfetch) take the "
                             "same least: put_signal<warp>'s warp issues lane 0's path (get_rc, "
                             "keys, reserve, the RDMA-write WQE: 0x0000-0x19f70, 2,029), lane "
                             "1's atomic WQE (0x175c0-0x19340, 581) and lane 1's submit and "
                             "return (0x19f80-0x74490, 370): 2,980, less 74 + 115 under the "
                             "priced steps: 2,791. Not counted: the caller's call and argument set-up, "
                             "other warps' issue. " + _STALL_COUNTS)),
            ("copy_cycles", (f"{_PPLX} 7af3059 csrc/all_to_all/internode_gather.cu l.56-91, "
                             "compiled as its CMakeLists.txt does (nvcc 13.0 -arch=sm_90a "
                             "-rdc=true -O3, NVSHMEM 3.2.5 headers; cuobjdump 13.5; session 23): "
                             "gatherKernel<bf16,8,true,true>'s copy loop on warp 0 (dpSize 1: "
                             "warp 0 puts, lane 0 fences and signals), a BF16 copy with 16-B "
                             "aligned source and peer address, outside the loads and the "
                             "staging and put loops already counted: every copy, from "
                             "sourceExpert's consumer to the last source load (0x0a50-0x0c70: "
                             "81), from that load's consumer through the first staging round's "
                             "top (0x0cf0-0x0d90: 36), from the last staging round's STG through "
                             "BAR.SYNC and the put's set-up to the P2P pointer's load "
                             "(0x0e10-0x0ff0, 0x1000, 0x1020: 89; the LDC of dpSize waited "
                             "for: const_l1) = 206; each later copy its loop back (0x2320-0x23e0, "
                             "0x0a10: 77; the LDC of sourceExpert's base waited for: const_l1); "
                             "a copy to a load/store peer, from the P2P pointer's consumer to "
                             "the put loop's top (0x1050-0x1280: 110), from the put loop's exit "
                             "to the fence (0x1380-0x13a0, 0x1e30-0x1f10: 63), after it "
                             "(0x1f20-0x1f60: 16) and from the signal pointer's consumer through "
                             "the ATOM.E.ADD.64.STRONG.SYS (0x2080-0x20d0: 19) = 208, with the "
                             "signal's peer pointer reloaded after the fence (LDG.E.64.CONSTANT "
                             "0x1f70, waited for at 0x2080: an L2 trip, the fence's CCTL.IVALL "
                             "having invalidated L1; the dispatch's put the same, scatterKernel "
                             "0x1f80-0x20b0). The same invalidation makes each copy's "
                             "P2P pointer (0x1030) an L2 trip (session 17: an L1 hit after the "
                             "first copy; the block's first copy is its first touch), across the "
                             "network too (the IBGDA post's MEMBAR.SC.GPU + CCTL.IVALL). Not "
                             "counted (a lower bound): the first copy's put path in one node, "
                             "the remote copies' own path, the BAR.SYNC waits, scoreboard waits "
                             "beyond the stalls. " + _STALL_COUNTS)),
            ("reduce_pass_cycles", (f"{_PPLX} 7af3059 csrc/all_to_all/internode_gather.cu "
                                    "l.108-132, the same build and method (session 23): "
                                    "gatherKernel<bf16,8,true,true>'s receive sum, per pass j of "
                                    "the block's threads (2048 elements), outside the (pass, copy) "
                                    "loop that reduce_cycles counts: the accumulators' set-up "
                                    "(0x2ad0-0x2bc0: 23; its LDCs of indices and weights run "
                                    "under it) and the pass's end, the eight sums packed to BF16 "
                                    "and stored (STG.E.U16 x 8) and the back branch (0x30f0-0x3600: "
                                    "127): 150 cycles per pass, 4 per DeepSeek token "
                                    "(7168 / 2048). " + _STALL_COUNTS)),
            ("reduce_elements", (f"{_PPLX} 7af3059 csrc/all_to_all/internode_gather.cu "
                                 "(gatherKernel's receive part, lines 102-133): after the "
                                 "signal wait, thread t of the block (8 warps) sums elements "
                                 "j = 8t, 8t + 2048, ... (VEC_SIZE 8) of the token over its k "
                                 "copies; per copy an index load (indices[i][k]), then the "
                                 "copy's 8 loads whose address depends on it, then the FFMAs: "
                                 "the k loop is not unrolled in the SASS (nvcc 13.0 -O3 "
                                 "sm_90a, loop 0x2bd0-0x30e0: LDG.E index -> IMAD.WIDE address "
                                 "-> 8 x LDG.E.U16 -> FFMA -> branch back), so each (pass, "
                                 "copy) is one L1 hit (the token's indices after the first) and "
                                 "one L2 load (the copy, written by a peer's put or the NIC) "
                                 "in series; a lower bound; between them the cycles the "
                                 "compiled loop schedules (reduce_cycles, session 22)")),
            ("stage_vector", (f"{_PPLX} 7af3059, compiled as its CMakeLists.txt does (nvcc "
                              "13.0 -arch=sm_90a -rdc=true -O3; session 18): the blocks copy a "
                              "token into the symmetric buffer before they put it, a loop of one "
                              "LDG.E.128 then its STG.E.128 per thread and step, not unrolled "
                              "(scatterKernel 0f70-10a0: 9 sending warps, 288 x 16 B = 4608 B per "
                              "step; gatherKernel 0d40-0e40: 8 warps, 256 x 16 B = 4096 B, so 4 "
                              "dependent loads of the expert output (HBM) per BF16 copy). The "
                              "combine's copy also waits, after sourceExpert and __syncthreads, "
                              "for sourceIndex / sourceGroup / sourceOffset (three loads in "
                              "parallel, 0bb0-0c80: one L2 trip; written by this sample's "
                              "dispatch) and, before the put, for the P2P pointer (__ldg, "
                              "1030: an L2 trip, session 23's copy_cycles). The "
                              "dispatch's staging rounds beyond the first are not counted (a "
                              "lower bound)")),
            ("put_vector", (f"{_PPLX} 7af3059 internode_gather.cu compiled as its "
                            "CMakeLists.txt does (nvcc 13.0 -arch=sm_90a -rdc=true -O3, NVSHMEM "
                            "3.2.5 headers; session 18): nvshmemx_putmem_signal_nbi_warp to a "
                            "load/store peer inlines NVSHMEM's warp memcpy as a loop of one "
                            "LDG.E.128 of the staged copy (xBufferIn, written by the block just "
                            "before: L2) and its ST.E.128 to the peer, 32 lanes x 16 B = 512 B "
                            "per step, not unrolled (gatherKernel<bf16,8,true,true> 0x1290-0x1370), "
                            "before lane 0's fence and signal; with dpSize 1 only warp 0 puts and "
                            "the next copy waits for it at __syncthreads: ceil(bytes / 512) L2 "
                            "hits per copy to a peer on the block's chain (a copy to the own rank "
                            "is the same loop: not counted, a lower bound)")),
            ("put_cycles", (f"{_PPLX} 7af3059 compiled as its CMakeLists.txt does (nvcc 13.0 "
                            "-arch=sm_90a -rdc=true -O3, session 18's objects), the stall counts "
                            "of the control words (cuobjdump 13.5 -sass; session 22, review "
                            "S22-R3): NVSHMEM's warp memcpy inlined in each put, "
                            "gatherKernel<bf16,8,true,true> 0x1290-0x1370 and "
                            "scatterKernel<10,true,true> 0x1d80-0x1e60 (the same body): from the "
                            "ST.E.128 that waits for the round's load through the back branch "
                            "(0x1360-0x1370: 12 + 5) and the next address IMAD.SHL -> R2UR x 2 -> "
                            "SHF -> IADD3 -> IMAD.X (0x1290-0x12e0: 1 + 2 + 2 + 2 + 5 + 6) before "
                            "the next LDG.E.128: 35 cycles per round. " + _STALL_COUNTS)),
            ("walk_cycles", (f"{_PPLX} 7af3059 csrc/all_to_all/internode_scatter.cu l.196-210, "
                             "the same build and method (session 22, review S22-R3): the receive "
                             "walk's loop, scatterKernel<10,true,true> 0x3f90-0x4110 (one body, "
                             "not unrolled, issued in order): from the IMAD.IADD that waits for "
                             "the slot's re-read (0x3ff0) to the next slot's load: IMAD.IADD 12, "
                             "BRA 5, BSYNC 5, R2UR 1, IMAD 1, R2UR 3, IMAD.WIDE 10 = 37; from the "
                             "IADD3 that waits for that load (0x40f0) to the next re-read: IADD3 "
                             "4, ISETP 13, BRA 5, R2UR 2, R2UR 13 = 37: 74 cycles per slot (the "
                             "path that wraps to the next expert, once per row of DP groups: "
                             "walk_wrap_cycles). " + _STALL_COUNTS)),
            ("send_cycles", (f"{_PPLX} 7af3059 csrc/all_to_all/internode_scatter.cu l.111-150, "
                             "the same build and method (session 23): a sending warp's own "
                             "token in one load/store domain (warp 0: it also walks the "
                             "tokens), a 16-B aligned token, outside its loads (the staging "
                             "rounds, the expert id, the P2P pointer, the put rounds, the "
                             "signal pointer's reload) and the staging and put loops' counted "
                             "cycles: its iteration's top (0x0bf0-0x0d50: 113), the entry to "
                             "the staging loop (0x0d60-0x0e60: 50), the first round's top "
                             "(0x0e70-0x1020: 66) and the last round's tail (0x10a0-0x10f0: 23), "
                             "BAR.SYNC and the set-up to the expert id's load (0x1100-0x12e0: "
                             "83), from its consumer through the division by numLocalExperts "
                             "and the LDS of tokenIndex (0x13d0-0x14b0: 64, the LDS under it) to "
                             "the LDC of NVSHMEM's peer table (0x14c0-0x1540: 25; waited for: "
                             "const_l1; then 0x1580: 12), from the P2P pointer's consumer "
                             "(0x15b0-0x15d0: 22; an LDC of the table again: const_l1) to the "
                             "put loop (0x1610-0x1650, 0x1d30-0x1d70: 57), from the put loop's "
                             "exit to the fence (0x1e70-0x1f40: 45), after it (0x1f50-0x1f90: "
                             "16) and from the reload's consumer to the ATOM (0x20b0-0x20d0: 14): "
                             "590 cycles. " + _STALL_COUNTS)),
            ("receive_token_cycles", (f"{_PPLX} 7af3059 csrc/all_to_all/internode_scatter.cu "
                                      "l.189-237, the same build and method (session 23): per "
                                      "received token of the receiving block, on warp 0 (thread "
                                      "0 loads the token's index and stores the four source "
                                      "fields), outside the loads counted (the slot check, the "
                                      "copy's rounds, the index) and the copy's later rounds "
                                      "(receive_cycles): the loop top's LDC of numTokensPerDP's "
                                      "base waited for (const_l1) and 0x3f20 (10), from the slot "
                                      "check's consumer through the while test, the exit test "
                                      "and the copy's set-up (0x3f50-0x3f70, 0x4120-0x43b0: "
                                      "114), the first round's top (0x43c0-0x44c0: 54), the last "
                                      "round's STG to its back branch (0x4550-0x45b0: 29), to "
                                      "thread 0's index load (0x45c0-0x4640: 29), and from its "
                                      "consumer through the four stores and the loop's back "
                                      "branch (0x4730-0x47a0: 41) = 277 cycles. " + _STALL_COUNTS)),
            ("walk_wrap_cycles", (f"{_PPLX} 7af3059 csrc/all_to_all/internode_scatter.cu "
                                  "l.198-206, the same build and method (nvcc 13.0 -arch=sm_90a "
                                  "-rdc=true -O3, NVSHMEM 3.2.5 headers; cuobjdump 13.5; session "
                                  "23): when a slot ends a row of DP groups (++dp == numDPGroups) "
                                  "the receive walk falls through the branch at 0x4000 instead of "
                                  "taking it: from the IMAD.IADD that waits for the re-read "
                                  "(0x3ff0) to the next slot's load (0x40e0) IMAD.IADD 12, BRA 5, "
                                  "VIADD 1, MOV 1, IMAD.MOV 1, MOV 2, ISETP 13, @!P0 BREAK 5, "
                                  "@!P0 BRA 5, MOV 7, BSYNC 5, R2UR 1, IMAD 1, R2UR 3, IMAD.WIDE "
                                  "10 = 72 cycles where a slot inside a row takes 37: 35 more per "
                                  "local expert left before the last (the last one's exit path "
                                  "not counted). " + _STALL_COUNTS)),
            ("send_walk_cycles", (f"{_PPLX} 7af3059 csrc/all_to_all/internode_scatter.cu "
                                  "l.107-161, the same build and method (session 23): the "
                                  "dispatch's send loop (scatterKernel<10,true,true> 0x0bf0-"
                                  "0x2590), one iteration for a token another block sends, on "
                                  "warp 0 (lanes < k count the token's experts): the loop top's "
                                  "i % (gridDim.x x dpSize) test through its taken branch "
                                  "(0x0bf0-0x0d50: 113 cycles; its I2F / MUFU.RCP / F2I results "
                                  "wait on scoreboards, not priced), BSYNC and S2R (0x23a0-0x23b0: "
                                  "6; the S2R's result waited for, not priced), the LDC of "
                                  "numExpertsPerToken (0x23c0, waited for at 0x2400: const_l1, "
                                  "the 6 stall cycles under it not added), the lane test and the "
                                  "index address (0x2400-0x24b0: 44), the LDG.E.CONSTANT of the "
                                  "expert id (0x24c0, l1_hit; the 15 stall cycles to its consumer "
                                  "run under it), LEA 5, the LDS of tokenIndex[expert] (0x2530, "
                                  "shared_load), then from its consumer VIADD through STS, BSYNC, "
                                  "the loop counter and the back branch (0x2540-0x2590: 34): "
                                  "113 + 6 + 44 + 5 + 34 = 202 cycles per walked token beyond "
                                  "l1_hit + const_l1 + shared_load (session 19 charged the "
                                  "l1_hit only). " + _STALL_COUNTS)),
            ("stage_cycles", (f"{_PPLX} 7af3059, the same builds and method (session 22): the "
                              "staging copies' loops, per round beyond its load: dispatch "
                              "(scatterKernel<10,true,true> 0x0e70-0x10f0, two predicated paths "
                              "issued in turn) from the !P0 STG.E.128 that consumes the round's "
                              "load (0x10a0) through the back branch (0x10a0-0x10f0: 23) and the "
                              "loop top to the next LDG.E.128 (0x0e70-0x1020: 66) = 89; combine "
                              "(gatherKernel<bf16,8,true,true> 0x0d40-0x0e40) from the STG.E.128 "
                              "(0x0e10-0x0e40: 17) to the next load (0x0d40-0x0d90: 18) = 35. "
                              + _STALL_COUNTS)),
            ("receive_cycles", (f"{_PPLX} 7af3059 csrc/all_to_all/internode_scatter.cu "
                                "l.222-228, the same build and method (session 22): the receive "
                                "copy's loop (scatterKernel 0x43c0-0x45b0, two predicated paths "
                                "issued in turn): from the !P0 STG.E.128 that consumes the round's "
                                "load (0x4550-0x45b0: 29) through the loop top to the next load "
                                "(0x43c0-0x44c0: 54) = 83 per round (the P0 path 84; the first "
                                "round's preceding token set-up is longer: a lower bound). "
                                + _STALL_COUNTS)),
            ("reduce_cycles", (f"{_PPLX} 7af3059 csrc/all_to_all/internode_gather.cu "
                               "l.117-124, the same build and method (session 22): "
                               "gatherKernel<bf16,8,true,true>'s receive sum, one body per copy "
                               "k (0x2bd0-0x30e0, issued in order): from the IMAD.WIDE that waits "
                               "for the index load (0x2d80) to the first element load "
                               "(0x2d80-0x2e70: 34), the eight element loads' issue, the last "
                               "one's data waited for (0x2e80-0x2f70: 34), from its consumer "
                               "(0x2fe0) through the back branch (0x2fe0-0x30e0: 30) and the loop "
                               "top to the next index load (0x2bd0-0x2c50: 20): 118 cycles per "
                               "(pass, copy) (the 26 cycles between the index load and its "
                               "consumer run under that load's L1 hit). " + _STALL_COUNTS)),
            ("receive_vector", (f"{_PPLX} 7af3059 csrc/all_to_all/internode_scatter.cu "
                                "l.222-228, compiled as its CMakeLists.txt does (nvcc 13.0 "
                                "-arch=sm_90a -rdc=true -O3; session 18's build, read in session "
                                "20): the receive part copies each received token out of "
                                "xBufferOut with k += blockDim.x, one LDG.E.128 then its STG.E.128 "
                                "per iteration, the next load issued after the store (scatterKernel "
                                "0x43c0-0x45b0): the block's 10 warps x 32 x 16 B = 5120 B per "
                                "dependent load, 2 rounds for a DeepSeek FP8 token")),
            ("walk_slot_bytes", (f"{_PPLX} 7af3059 csrc/all_to_all/internode_scatter.cu "
                                 "l.191-210: the receive part walks numTokensPerDP, a uint32_t "
                                 "per (local expert, DP group) slot, one slot after another "
                                 "(SASS 0x3f90-0x4110, nvcc 13.0 -arch=sm_90a -rdc=true -O3: "
                                 "the next slot's LDG.E.CONSTANT at 0x40e0 is waited for before "
                                 "the branch); the array was written by block 0's slot threads "
                                 "before the grid sync and is read by no walking block before: "
                                 "each 32-B sector's first load is an L2 trip (session 21)")),
            ("combine_blocks", (f"{_PPLX} 7af3059 csrc/all_to_all/internode_gather.cu: "
                                "AllToAllInterNode::gather launches min(132, numLocalExperts x "
                                "numDPGroups x maxNumTokens) blocks (132 for every published "
                                "row); block b takes received copies b, b + gridDim, ... until "
                                "sourceExpert is 0")),
            ("qp_signals", (f"{_PPLX} 7af3059 internode_scatter.cu (each token's warp j: "
                            "nvshmemx_putmem_signal_nbi_warp, NVSHMEM_SIGNAL_ADD) and "
                            "internode_gather.cu (each copy back: the same call): to a rank "
                            "across the network NVSHMEM 3.2.5's nvshmemi_ibgda_put_signal_impl "
                            "(src/include/non_abi/device/pt-to-pt/ibgda_device.cuh, "
                            "valgur/NVSHMEM-archive 6d8ab15) writes one RDMA-write WQE and then "
                            "the signal's atomic WQE on the same RC queue pair, no fence bit: "
                            "every message is a write followed by its atomic ('each'; the count "
                            "signals, SIGNAL_SET atomics that may or may not follow writes, are "
                            "not counted: a lower bound)")),
            ("qp_per_peer", ("NVSHMEM 3.2.5 src/modules/transport/common/env_defs.h "
                             "(valgur/NVSHMEM-archive 6d8ab15): NVSHMEM_IBGDA_NUM_RC_PER_PE "
                             "default 2, NVSHMEM_IBGDA_RC_MAP_BY default 'cta' (round-robin by "
                             "CTA id); pplx sets neither (its README's inter-node run sets only "
                             "NVSHMEM_IB_ENABLE_IBGDA=1): a rank's messages to one peer spread "
                             "over 2 queue pairs by the sending block"))),
        release_fence=(True, True), count_grid=(10, 132), combine_blocks=132,
        chain=(_nvshmem_wait() + _grid_sync()
               + (("l2_hit", "one"), ("l1_hit", "walk_slots"),
                  ("l1_hit", "walk_slot_hits"), ("l2_hit", "walk_sectors"),
                  ("cycle", "walk_cycles"), ("cycle", "walk_wrap_cycles"),
                  ("l2_hit", "walk_tokens"),
                  ("l2_hit", "walk_token_rounds"), ("cycle", "walk_token_round_cycles"), ("l1_hit", "walk_tokens"),
                  ("l1_hit", "walk_tokens"), ("const_l1", "walk_tokens"),
                  ("cycle", "walk_token_cycles")),
               (("l2_hit", "one"), ("l2_hit", "one"), ("hbm_load", "one"),
                ("hbm_load", "stage_rounds"), ("cycle", "stage_round_cycles"),
                ("const_l1", "one"), ("cycle", "copy_cycles"),
                ("l2_hit", "one")) + _nvshmem_wait()
               + (("l1_hit", "reduce_loads"), ("l2_hit", "reduce_loads"))
               + (("cycle", "reduce_cycles"), ("cycle", "reduce_pass_cycles"), ("l2_hit", "one"))
               + _nvshmem_wait()),
        interleaved_chain=((("l2_hit", "network"),) + _ibgda_post("remote_signals")
                           + (("cycle", "count_pass_cycles"), ("const_l1", "count_passes"),
                              ("const_l1", "count_passes"), ("l2_hit", "further_signals"))
                           + _doorbell("network") + _count_arrival("network")
                           + (("l1_hit", "walked_tokens"), ("const_l1", "walked_tokens"),
                              ("shared_load", "walked_tokens"),
                              ("cycle", "walked_token_cycles"), ("hbm_load", "loadstore"),
                              ("hbm_load", "loadstore_stage_rounds"),
                              ("cycle", "loadstore_stage_round_cycles"), ("l2_hit", "loadstore"),
                              ("l2_hit", "loadstore"), ("l2_hit", "put_rounds"),
                              ("cycle", "put_round_cycles"), ("l2_hit", "loadstore"),
                              ("const_l1", "loadstore"), ("const_l1", "loadstore"),
                              ("cycle", "loadstore_send_cycles")),
                           (("l2_hit", "further_copies"), ("l2_hit", "further_copies"),
                            ("hbm_load", "further_copies"), ("hbm_load", "further_stage_rounds"),
                            ("cycle", "further_stage_round_cycles"),
                            ("const_l1", "further_copies"), ("const_l1", "further_copies"),
                            ("cycle", "further_copy_cycles"), ("l2_hit", "further_copies"))
                           + _ibgda_post("posted_copies") + _doorbell("network")),
        reduce_elements=256 * 8, put_vector=32 * 16,
        cycles=({"walk_cycles": 74, "walk_wrap_cycles": 35, "receive_cycles": 83,
                 "receive_token_cycles": 277, "post_cycles": 1789, "count_pass_cycles": 368,
                 "send_walk_cycles": 202, "stage_cycles": 89, "put_cycles": 35,
                 "send_cycles": 590},
                {"stage_cycles": 35, "copy_cycles": (206, 77, 208), "put_cycles": 35,
                 "reduce_cycles": 118, "reduce_pass_cycles": 150, "post_cycles": 1789}),
        stage_vector=(288 * 16, 256 * 16),
        receive_vector=320 * 16, walk_slot_bytes=4,
        qp_signals=("each", "each"), qp_per_peer=2,
    ),
    ExchangeKernel(
        "all-to-allv", dedup="collective", forwarding=False, scale_out=True, pipelined=True,
        local_copy=False, kernels=(1, 1), syncs=(0, 0),
        sources=(
            ("dedup", "per-rank de-duplicated traffic matrix costed by analysis.cost"),
            ("kernels", "one collective kernel per phase"),
            ("syncs", "inside the collective's own cost")),
    ),
)}


def _one_sided_1_3():
    """TensorRT-LLM 1.3's one-sided kernels: blog18's profile with the combine loop of the
    low-precision combine (NVIDIA/TensorRT-LLM PR #11844), whose round issues its peer loads in
    other batches (``sources["late_pulls"]``); nothing else differs as read."""
    base = EXCHANGE_KERNELS["one-sided"]
    src = dict(base.sources)
    src["late_pulls"] = (
        "TensorRT-LLM 1.3's combine loop (vectorized_combine_impl over an input type InT: "
        "'Pass 1' loads the top-k slots, 'Pass 2' casts InT to float, then the tree "
        "reduction; the same loop text in reasonsolo/TensorRT-LLM 2c5ea89a, a fork carrying "
        "PR #11844 'add fp8 combine in moe_a2a', and in flashinfer-ai/flashinfer 5e891c6b, the "
        "port of TensorRT-LLM's 1.3-era kernels, PR #3697). moeA2ACombineKernel<T, 8, ...> of "
        "flashinfer 5e891c6b compiled for sm_100a with nvcc 13.0 -O3 -use_fast_math "
        "(flashinfer's JIT flags, -DENABLE_BF16 -DENABLE_FP8) and read in SASS (sessions 17-18), "
        "16-B path, top-8. BF16 input (FP16 the same; other widths not read, given this "
        "schedule): slots 0, 2 and 3's peer loads go out, the first cast "
        "waits for slot 0's (its scoreboard), then slots 1, 4, 5, 6 and 7's: a second trip "
        "when any of those is valid. FP8 (e4m3) input: the metadata loads share the peer "
        "loads' scoreboard, so the check of slot 1 waits for slot 0's peer load and the check "
        "of slot 5 for slots 1-3's: batches {0}, {1, 2, 3}, {4, 5, 6, 7}, up to three trips "
        "per round. Assumption (stated): TensorRT-LLM's own build schedules this loop as "
        "flashinfer's does. The dispatch is blog18's (thread 0 claims the slots one after "
        "another in TensorRT-LLM's file at 439e0799; the warp-parallel claim of flashinfer "
        "5e891c6b is flashinfer's own PR #3846, 97f3b035a). The same source compiled for sm_103a "
        "(B300, GB300) issues the same batches as sm_100a (session 19). Hopper (session 19): the "
        "same source and flags for sm_90a: a BF16 round (FP16 the same) issues slot 0's peer load, "
        "and the next slot's address waits on the scoreboard it shares with the pointer-table "
        "constant loads, i.e. for slot 0's load, before slots 1-7's go out: a second trip when any "
        "of slots 1-7 is valid; an FP8 (e4m3) round issues all eight peer loads before its first "
        "wait: one trip per round. Other input widths on Hopper not read (no entry: one batch)")
    src["round_reads"] = _ROUND_READS_SOURCE + (
        "5e891c6b sm_100a BF16 (0x06d0-0x1fc0; FP16 taken alike): before a round's first peer "
        "load the chain runs through slot 6's target-rank load and row and slot 7's send index, "
        "target rank and row (issued after slots 0-5's): later round {l1 3, const_l1 2} with only "
        "slot 0 valid, {l1 2, const_l1 5} with slots 0, 2, 3, {l1 4, const_l1 7} with all 8; "
        "round 1 {l2 2, const_l15 1, l1 1, const_l1 1} with slot 0, {l2 2, const_l15 2, l1 1, "
        "const_l1 1} with slots 0, 2, 3, {l2 2, const_l15 4, l1 3, const_l1 1} with all 8 "
        "(review S22-R4: the only-slot-0 case first read with slots 4-5 on). FP8 e4m3 input (0x0710-0x45a0; slots 0-3 "
        "in branches, 4-7 predicated; the target-rank base c[0x11c0] is reloaded before each "
        "slot): later round {l1 5, const_l1 3} with slot 0, {l1 8, const_l1 9} with slots 0-3, "
        "{l1 10, const_l1 15} with all 8; round 1 {l2 2, const_l1 2, const_l15 1, l1 3} / {l2 2, "
        "const_l1 5, const_l15 4, l1 6} / {l2 2, const_l1 8, const_l15 7, l1 8}. Less what the "
        "chain and the late batches' L1.5 fetches charge. 5e891c6b sm_90a (session 19's build, "
        "moeA2ACombineKernel<T, 8, false, 0, 0>): BF16 (0x3640-0x5010) later round {l1 2, "
        "const_l1 1} with only slot 0 valid, {l1 3, const_l1 5} with all 8; round 1 {l2 2, "
        "const_l15 1} / {l2 2, const_l15 4, l1 1}; FP8 (0x6700-0xa400, one trip) later round "
        "{l1 2, const_l1 2} / {l1 4, const_l1 6}; round 1 {l2 2, const_l15 2} / {l2 2, const_l15 "
        "6, l1 2}. Session 26 (moe): the cycles the sm_100a loops issue beyond those loads in a "
        "later round (session 24's method on 5e891c6b, rebuilt here with flashinfer's JIT flags "
        "and -DENABLE_BF16, nvcc 13.0, cuobjdump 13.5; moeA2ACombineKernel<T, 8, false, 0, 0>): "
        "one later round walked in issue order at the stall counts, the metadata loads l1_hit, "
        "the constant loads const_l1, a predicated-off load free, an invalid slot's branch "
        "skipped, the peer loads as trips, against what these steps charge for the same "
        "pattern (the later batches' steps by the batches holding a valid slot), over all 128 "
        "patterns (slot 0 valid): BF16 (0x06d0-0x1fc0) 676.7 / 873.5 cycles beyond the trips "
        "with slots {0} / {0-7}, at least 372.6 more ({0, 4}): ('cycle', 372) in later_min and "
        "later_full; FP8 (0x0710-0x45a0) 1,095.4 / 1,606.8, at least 226.7 more ({0, 1, 7}): "
        "('cycle', 226). A lower bound. Round 1 with the set-up after BAR.SYNC (0x0570 on), "
        "walked the same way with the first loads' latencies (a metadata array's first load "
        "l2_hit; a constant line's first read in the kernel const_l15; the lines the barrier "
        "reads before BAR.SYNC present): its pointer rows lie 48 B apart (c[0x0][R+0x380], R = "
        "48 x rank + 0x38), so which rows share a 64-B line depends on the ranks; taking the most "
        "favourable sharing (every row after the first a constant-L1 hit) BF16 still spends at "
        "least 189.9 cycles more than charged over the 128 patterns ({0, 4}; 218.9 with every "
        "row an L1.5 fetch): ('cycle', 189) in first_min and first_full; FP8 then falls below its "
        "charge ({0, 1, 7}: -95.9): nothing added. The sm_90a loops not walked. "
        "Session 27: the ('cycle', 372), "
        "('cycle', 226) and ('cycle', 189) steps left these entries for round_cycles (one "
        "count per valid-slot count). Session 29 (moe): the 'blackwell' entries re-read by session "
        "28's rule (each latency's count on a chain the walk's slope in it; a late batch's steps "
        "its least, per latency, over the patterns where it holds a valid slot), on the same "
        "walks (round 1 with every valid row alone on a 64-B line no load read before): BF16 a "
        "later round {l1 2, const_l1 1} at both ends (above: {l1 3, const_l1 2} / {l1 2, "
        "const_l1 5}), round 1 {l2 2, const_l15 1, const_l1 2, l1 1} / {l2 2, const_l15 2, "
        "const_l1 2, l1 1} (above: const_l1 1); its late batch (slots 1, 4-7) adds no load at its "
        "least pattern ({0, 4}) in either round (above: the full batch's); FP8 a later round {l1 "
        "4, const_l1 2} (above: {l1 5, const_l1 3}), the batches {1-3} and {4-7} adding const_l1 "
        "2 and 1 at their least (above: l1 3 + const_l1 6 and l1 2 + const_l1 6); round 1 {l2 2, "
        "const_l15 2, const_l1 2, l1 2} (above: const_l15 1, l1 3), the batches const_l1 1 and "
        "none beyond their row fetches (above: const_l15 2, const_l1 3 and l1 3 / 2 each)")
    src["round_cycles"] = _ROUND_CYCLES_SOURCE + (
        "5e891c6b sm_100a (session 26's build; moeA2ACombineKernel<T, 8, false, 0, 0>). Later "
        "rounds (rows re-read from the constant L1: no placement changes a walk): BF16 "
        "(0x06d0-0x1fc0) 539.3 / 372.6 / 400.3 / 423.0 / 453.7 / 493.1 / 545.2 / 600.6 cycles "
        "with 1 .. 8 valid slots ({0} / {0, 4} / {0, 3, 4} / {0, 2-4} / {0, 2-5} / {0-5} / "
        "{0-5, 7} / {0-7}); FP8 (0x0710-0x45a0) 873.3 / 406.5 / 226.7 / 362.7 / 492.1 / 632.5 / "
        "790.9 / 976.3 ({0} / {0, 7} / {0, 1, 7} / {0, 1, 4, 5} / {0, 1, 4, 5, 7} / {0, 1, 4-7} "
        "/ {0-2, 4-7} / {0-7}). Round 1 with the set-up after BAR.SYNC (0x0570 on): the pointer "
        "rows lie 48 B apart, c[0x0][0x3b8 + 48 x rank] (CombineKernelPointers, kMaxPayloads 6), "
        "so the walk depends on which ranks hold the valid slots: rank 0's row lies on the "
        "output pointer's line 0x380 (read in the set-up; review S27-R1), rank 63's on line "
        "0xf80 with completion_flags[0] (0xfb8), which block 0's flag-store loop reads before "
        "BAR.SYNC (present), ranks 4m+3 and 4m+4 share a line, every other row is alone; over "
        "every placement (at most one slot on rank 0, at most one on rank 63, the others matched "
        "maximally into line-sharing pairs: a pair of two lone rows only lowers the walk): BF16 "
        "451.5 / 105.7 / 178.6 / 194.6 / 214.7 / 241.7 / 283.1 / 327.8 (d = 2: {0, 4}, slot 0 on "
        "rank 0 and slot 4 on rank 63); FP8 971.7 / 252.3 / -95.9 / 36.1 / 169.5 / 309.9 / "
        "552.5 / 737.9 (d = 3: {0, 1, 7}). The tables: BF16 round 1 (105, 105, 178, 194, 214, "
        "241, 283, 327), later (372, 372, 400, 423, 453, 493, 545, 600); FP8 round 1 (0, 0, 0, "
        "36, 169, 309, 552, 737), later (226, 226, 226, 362, 492, 632, 790, 976). Session 26's round-1 count 189 (BF16) took "
        "every row after the first as a constant-L1 hit but not rank 0's row on the output "
        "pointer's line: not the least (review S27-R1). Session 29 (moe): against the entries "
        "re-read as the walks' slopes (round_reads), the same walks and placements give BF16 "
        "round 1 430.8 / 253.9 / 326.8 / 342.8 / 362.9 / 389.9 / 431.3 / 475.996, a later round "
        "592.0 / 535.0 / 567.0 / 594.0 / 629.0 / 672.7 / 729.1 / 788.8; FP8 round 1 898.8 / "
        "526.6 / 514.3 / 646.3 / 779.7 / 920.1 / 1162.7 / 1348.1, a later round 926.0 / 638.0 / "
        "625.7 / 761.7 / 891.1 / 1031.5 / 1189.9 / 1375.3 (the same least patterns): the tables "
        "BF16 (253, 253, 326, 342, 362, 389, 431, 475) and (535, 535, 567, 594, 629, 672, 729, "
        "788), FP8 (514, 514, 514, 646, 779, 920, 1162, 1348) and (625, 625, 625, 761, 891, "
        "1031, 1189, 1375). The FP8 entry before charged {0, 1, 7} 95.9 cycles more than its "
        "walk in round 1 (its full batches' loads where one slot of each holds; its table's 0 "
        "could not take that back): now no pattern is charged more than its walk. The sm_90a "
        "loops not walked: no entry")
    return dataclasses.replace(base, name="one-sided-1.3", sources=tuple(src.items()),
                               late_pulls=(("blackwell", 8, 0, ((1, 4, 5, 6, 7),)),
                                           ("blackwell", 8, 1, ((1, 2, 3), (4, 5, 6, 7))),
                                           ("hopper", 8, 2, ((1, 2, 3, 4, 5, 6, 7),))),
                               round_reads=(
                                   ("blackwell", 8, 0,
                                    (("l1_hit", 1), ("const_l1", 2)),
                                    (("const_l15", 1), ("l1_hit", 1), ("const_l1", 2)),
                                    ((),),
                                    (("l1_hit", 2), ("const_l1", 1)),
                                    (("l1_hit", 2), ("const_l1", 1)),
                                    ((),)),
                                   ("blackwell", 8, 1,
                                    (("const_l15", 1), ("const_l1", 2), ("l1_hit", 2)),
                                    (("const_l15", 1), ("const_l1", 2), ("l1_hit", 2)),
                                    ((("const_l1", 1),), ()),
                                    (("l1_hit", 4), ("const_l1", 2)),
                                    (("l1_hit", 4), ("const_l1", 2)),
                                    ((("const_l1", 2),), (("const_l1", 1),))),
                                   ("hopper", 8, 2,
                                    (), (),
                                    ((("const_l15", 2), ("l1_hit", 1)),),
                                    (("l1_hit", 2), ("const_l1", 1)),
                                    (("l1_hit", 2), ("const_l1", 1)),
                                    ((("l1_hit", 1), ("const_l1", 4)),)),
                                   ("hopper", 8, 1,
                                    (("const_l15", 1),),
                                    (("const_l15", 5), ("l1_hit", 2)),
                                    (),
                                    (("l1_hit", 2), ("const_l1", 2)),
                                    (("l1_hit", 4), ("const_l1", 6)),
                                    ())),
                               round_cycles=(
                                   ("blackwell", 8, 0, (253, 253, 326, 342, 362, 389, 431, 475),
                                    (535, 535, 567, 594, 629, 672, 729, 788)),
                                   ("blackwell", 8, 1, (514, 514, 514, 646, 779, 920, 1162, 1348),
                                    (625, 625, 625, 761, 891, 1031, 1189, 1375))))


EXCHANGE_KERNELS["one-sided-1.3"] = _one_sided_1_3()


#: DeepEP's low-latency combine through shared memory with TMA (its send since #299, c874cb7;
#: its receive since #345, c5facf5), which NVIDIA NCCL EP adapts: a send chunk is
#: kNumTMABufferBytes = 16 B x 32 lanes x kNumSendUnrolls 4, kNumStages 3 with kNumPrefetch 1
#: keep two chunks' loads in flight; the receive loads each copy whole into one of 3 stages
_TMA_CHUNK = 16 * 32 * 4
_TMA_LOADS_IN_FLIGHT = 2
_TMA_STAGES = 3


def _tma_combine(base, name, sources, send, receive, chunk, **fields):
    """``base`` called ``name`` with the low-latency combine's TMA send and receive (DeepEP's
    since #299 and #345; NVIDIA NCCL EP's adaptation of them), ``sources`` (a mapping) for its
    other fields' sources and ``fields`` replaced too.

    The three terms are written here once; ``send``, ``receive`` and ``chunk`` are the
    citations (repository, commit, file and lines, and what that code's grid adds) of the
    send loop, the receive loop and the chunk constants in the code the kernel describes.
    The send (``interleaved_chain``): a warp's TMA loads go two at a time, so its last chunk
    leaves ``ceil(bytes / stage_vector) - 1`` HBM loads after its first (``hbm_load`` x
    ``loadstore_stage_rounds``, :attr:`ExchangeKernel.stage_vector` two chunks); the receive:
    :attr:`ExchangeKernel.reduce_stages` (:meth:`ExchangeKernel.receive_floor`)."""
    src = dict(sources)
    src["interleaved_chain"] = (
        f"{send}: a warp copies a token's row (14,336 B for a hidden of 7,168 in BF16) in "
        f"chunks of {_TMA_CHUNK:,} B, tma_load_1d HBM -> shared memory on an mbarrier "
        f"({_TMA_STAGES} stages, {_TMA_LOADS_IN_FLIGHT - 1} load prefetched: the next chunk's "
        "load is issued before the current one is waited for), then tma_store_1d to the peer; "
        "cp.async.bulk.wait_group.read waits for the stores' shared-memory reads only, before "
        "a stage is reused. So the loads go two at a time and a warp's last chunk leaves "
        "ceil(bytes / stage_vector) - 1 HBM loads after its first (the chain's; 3 for "
        "14,336 B): one warp's copy overlaps the other warps' copies on the links, the phase's "
        "transfer is at least it; a warp's later tokens are not counted (a lower bound)")
    src["stage_vector"] = (
        f"{chunk}: kNumTMABufferBytes = 16 B x 32 lanes x kNumSendUnrolls 4 = "
        f"{_TMA_CHUNK:,} B a chunk, {_TMA_LOADS_IN_FLIGHT} chunks' loads in flight "
        f"(kNumStages {_TMA_STAGES}, kNumPrefetch {_TMA_LOADS_IN_FLIGHT - 1}): "
        f"{_TMA_LOADS_IN_FLIGHT * _TMA_CHUNK:,} B per dependent load (combine); none for the "
        "dispatch, which copies with warps (UNROLLED_WARP_COPY)")
    src["reduce_stages"] = (
        f"{receive}: after every flag and cg::this_grid().sync(), groups of 15 warps (at most "
        "2 a block) each sum one token: the group's TMA warp loads the token's top-k ids, then "
        f"each of its k copies whole (tma_load_1d) into one of {_TMA_STAGES} shared-memory "
        "stages after the stage's empty mbarrier, the 14 reduction warps add their slices and "
        "free it. One token a group up to 128 tokens: ceil(k / "
        f"{_TMA_STAGES}) dependent loads of copies the peers stored into this GPU in the same "
        "kernel (L2, as pplx's receive sum prices its copies) after the top-k ids' load: a "
        "floor under the receive copy")
    inter = (base.interleaved_chain[0],
             base.interleaved_chain[1] + (("hbm_load", "loadstore_stage_rounds"),))
    return dataclasses.replace(base, name=name, sources=tuple(src.items()),
                               interleaved_chain=inter,
                               stage_vector=(0, _TMA_LOADS_IN_FLIGHT * _TMA_CHUNK),
                               reduce_stages=_TMA_STAGES, **fields)


def _ncclep_low_latency():
    """NVIDIA NCCL EP's low-latency kernels (contrib/nccl_ep/device/low_latency.cu at 36191590,
    "adapted from DeepEP"): DeepEP low-latency's profile with the steps NCCL EP's compiled
    kernel takes instead (``sources["chain"]``): the peer pointer is NCCL's window lookup, three
    dependent loads where DeepEP loads one heap base; and its combine sends and receives
    through shared memory with TMA, as DeepEP's since #299 and #345 (:func:`_tma_combine`)."""
    base = EXCHANGE_KERNELS["deepep-low-latency"]
    src = dict(base.sources)
    src["dedup"] = ("NVIDIA/nccl contrib/nccl_ep/device/low_latency.cu at 36191590: one message "
                    "per (token, expert) with a 16-B header into expert-major slots, warp copies "
                    "to peers with a P2P pointer (ncclGetP2pPtr), a GIN put otherwise")
    src["kernels"] = ("NVIDIA/nccl contrib/nccl_ep/nccl_ep.cc at 36191590: ncclEpDispatch -> "
                      "internode_ll::dispatch, ncclEpCombine -> internode_ll::combine, one "
                      "kernel each, a send part then a receive part")
    src["chain"] = (
        "NVIDIA/nccl 36191590 contrib/nccl_ep/device/low_latency.cu, compiled with "
        "contrib/nccl_ep/Makefile's NVCUFLAGS for sm_90 (its README's NVCC_GENCODE; nvcc 13.0, "
        "cuobjdump 13.5; session 19) and read in the SASS of dispatch<BF16, 7168> and "
        "combine<no LogFMT, 7168> (ep_bench's defaults: BF16 both ways, zero_copy=false, "
        "rankMask=nullptr so no mask load). Dispatch, per sending warp: the token's x and "
        "top-k ids (__ldg, HBM: assumption, as DeepEP's profile), bar.sync, the slot atomicAdd "
        "(result shuffled), then ncclGetP2pPtr: the communicator's team fields (three loads in "
        "parallel; across nodes the membership test sends the copy to the GIN path here), then "
        "windows[comm], then the window's fields (ncclGetPeerPointer): three dependent loads "
        "where DeepEP loads one heap base, then the send buffer's first round before the "
        "stores: hbm_load + l2_atomic + l2_hit + 3 x l2_hit in one load/store domain. The "
        "count warp polls the finish counter (after CCTL.IVALL), then the same three-load "
        "lookup, then MEMBAR.SYS and the count's release store: 4 x l2_hit after the last "
        "acknowledged copy (DeepEP: 2); the receive part's atomicAdd on the received count: "
        "l2_atomic. Combine, per token of a sub-warp: layout_range, then src_info[token], then "
        "the three-load lookup, then x's first 2048 B by TMA (cp.async.bulk into shared memory, "
        "its mbarrier waited) before the TMA store to the peer: 2 x hbm_load + 3 x l2_hit + "
        "hbm_load in one load/store domain (layout_range and src_info are the handle's tensors "
        "the dispatch's receive part wrote, first touched here: HBM after the kernels between "
        "the phases, as DeepEP's profile; L2 with l2_flushed=False, as in NVIDIA's ep_bench, "
        "which runs nothing between the calls). The flag's poll and lookup "
        "(4 L2 trips) run while its release fence waits for the TMA stores (not counted, as "
        "DeepEP's); the grid sync after the peers' flags: 2 x l2_hit + l2_atomic. Over RDMA "
        "NCCL EP posts through NCCL's GIN (not read): DeepEP's put is taken for it "
        "(assumption; no multi-node NCCL EP row is carried)")
    put = _deepep_put("network")
    chain = ((("hbm_load", "one"), ("l2_atomic", "one"), ("l2_hit", "one"),
              ("l2_hit", "loadstore"), ("l2_hit", "loadstore"), ("l2_hit", "loadstore"),
              ("l2_hit", "loadstore"), ("l2_hit", "loadstore"), ("l2_hit", "loadstore"),
              ("l2_hit", "loadstore"), ("cycle", "loadstore_send_cycles"),
              ("cycle", "loadstore_count_cycles")) + (("const_l1", "loadstore"),) * 9
             + put + (("l2_atomic", "one"),),
             (("hbm_load", "one"), ("hbm_load", "one"), ("l2_hit", "one"), ("l2_hit", "loadstore"),
              ("l2_hit", "loadstore"), ("hbm_load", "loadstore")) + put + _grid_sync())
    src["send_grid"] = (
        "NVIDIA/nccl 36191590 contrib/nccl_ep/device/low_latency.cu l.461-498: the same per-token "
        "send loop as DeepEP's (a release per copy, bar.sync per token), but the host launches "
        "ceil(E / numWarpGroups) blocks with numWarpGroups = ceil(E / the device's SMs) (l.639-645): "
        "128 blocks for 256 experts on a 132-SM H100, one token per block at its rows' 128 tokens. "
        "Its later waves beyond that are not counted (a lower bound there): unlike "
        "deepep-low-latency@d28bd67 (send_grid_sms) this profile takes no SM count, which the "
        "project records for H100 and H800 only (ChipSpec.sms, session 38)")
    src["send_cycles"] = (
        "NVIDIA/nccl 36191590 contrib/nccl_ep/device/low_latency.cu rebuilt here with its "
        "Makefile's NVCUFLAGS for sm_90 (nvcc 13.0; headers: src/include with nccl.h generated "
        "from src/nccl.h.in as src/Makefile does, nccl_device/ and the DOCA GPUNetIO device "
        "headers copied as its install rules do; session 24), dispatch<false, false, 7168> "
        "(ep_bench's BF16, rankMask null) read with cuobjdump 13.5: a sending warp's token to a "
        "remote rank outside the loads the chain counts (x, the slot atomic, the team fields, "
        "windows[comm], the window's fields, the first round), walked in issue order with the "
        "scoreboards of its constant loads (a waited LDC costs const_l1 where the cycles issued "
        "since do not cover it): loop top to x's LDG (0x1fd0-0x21f0, the top-k id's LDG and "
        "thread 0's source index store on the way), x's consumer STG into the send buffer, "
        "BAR.SYNC 1 and lane 0's way to the slot ATOMG (0x2240-0x2310), the atomic's SHFL.IDX, "
        "the rank / local-expert division and the addresses to the team fields' LDGs "
        "(0x2360-0x26b0), their consumer to windows[comm] (0x2700-0x2770), the window fields' "
        "consumer through the rankMask test (null: branched over) to the first round's LDG "
        "(0x27c0-0x2870, 0x2910-0x2a50): 489 stall cycles, 424 + 6 x const_l1 issued (the DeepEP "
        "entry's own build gives 478 + 4). Not priced: SHFL, MUFU, I2F, F2I scoreboards. "
        + _STALL_COUNTS)
    src["count_cycles"] = (
        "NVIDIA/nccl 36191590 low_latency.cu, the same build and walk: the count warp's poll "
        "consumer to the team fields' LDGs (0x5170-0x52a0), their consumer to windows[comm] "
        "(0x52e0-0x5350), the window fields' consumer through the rankMask test to MEMBAR.ALL.SYS "
        "and the count's STG.E.STRONG.SYS (0x53a0-0x53e0, 0x5450-0x54a0, 0x5510-0x5610); the "
        "receiving warp's count poll consumer past the timeout test and the null recvStats / "
        "waitStats branches (nccl_ep.cc passes nullptr) to the ATOMG on the received count "
        "(0x8930-0x8990, 0x8b10-0x8bd0, 0x8c10): 321 stall cycles, 282 + 3 x const_l1 issued. "
        "Not priced: the poll loop's period (a clock64 timeout test per iteration). "
        + _STALL_COUNTS)
    src["qp_signals"] = (
        "across the network NCCL EP posts through NCCL's GIN (not read): DeepEP low-latency's "
        "pattern is taken for it, one atomic per queue pair after its writes ('last'; "
        "assumption, as for its put; no multi-node NCCL EP row is carried)")
    src["send_grid"] = src["send_grid"] + (
        ". The same grid as DeepEP d28bd67's (2 experts a block for 256 experts on 128-255 "
        "SMs), whose later waves the project prices with DeepEP de8cfca's per-wave steps; NCCL "
        "EP's per-wave steps were not read, so its waves stay uncounted here")
    return _tma_combine(
        base, "ncclep-low-latency", src,
        send=("NVIDIA/nccl 36191590 contrib/nccl_ep/device/low_latency.cu processAndSendToken "
              "(l.1016-1100, the combine send; kNumStages and kNumPrefetch at l.1219-1221), "
              "DeepEP's code since #299 (c874cb7), which NCCL EP adapts"),
        receive=("NVIDIA/nccl 36191590 low_latency.cu combine receive (l.1303-1420; "
                 "numDecodeWarps + 1 = 15 warps a group, group g of SM smId sums token smId + "
                 "numSms x g), DeepEP's receive since #345 (c5facf5)"),
        chunk="NVIDIA/nccl 36191590 low_latency.cu combine send (l.1218-1221)",
        chain=chain, send_grid=0, cycles=({"send_cycles": 424, "count_cycles": 282}, ()))


EXCHANGE_KERNELS["ncclep-low-latency"] = _ncclep_low_latency()


def _deepep_low_latency_d28bd67():
    """DeepEP's low-latency kernels as deep_ep 1.2.1+d28bd67 (2026-04-29) builds them, the build
    of NVIDIA's collector rows (session 36; ``"deepep-low-latency"`` is de8cfca's, 2025-06-05):
    its dispatch grid and its combine's TMA send (#299, c874cb7, 2025-07-14) and receive (#345,
    c5facf5, 2025-08-07), each from the code and priced at the project's own latencies."""
    base = EXCHANGE_KERNELS["deepep-low-latency"]
    src = dict(base.sources)
    src["send_grid"] = (
        "deepseek-ai/DeepEP d28bd67 csrc/kernels/internode_ll.cu (dispatch host, l.600-605): "
        "num_warp_groups = ceil(num_experts / the device's SMs), num_sms = ceil(num_experts / "
        "num_warp_groups): 2 experts a block, 128 blocks for 256 experts on H100 (132 SMs) and "
        "on Blackwell (148: the collector's chips), block b sends tokens b, b + 128, ... (l.283), "
        "each after the release of the one before as at de8cfca: one token a block up to 128 "
        "tokens, no later wave (de8cfca: 3 experts a block, 86 blocks). Where the chip's SM "
        "count is not known (ChipSpec.sms 0): 2, which holds for 256 experts on 128-255 SMs")
    src["send_grid_experts"] = (
        "deepseek-ai/DeepEP d28bd67 internode_ll.cu l.600-605: the grid is ceil(E / the "
        "device's SMs) experts a block; on a chip whose SM count is not known send_grid 2 is "
        "taken only for the 256 routed experts the code was read for and its rows ran (2 there "
        "on every GPU of 128-255 SMs); other expert counts are refused there, not priced with a "
        "wrong grid (session 37, whole-diff read F1)")
    src["send_grid_sms"] = (
        "deepseek-ai/DeepEP d28bd67 internode_ll.cu l.600-605: num_warp_groups = "
        "ceil(num_experts / the device's SMs) experts a block, num_sms = ceil(num_experts / "
        "num_warp_groups) blocks, from the chip's SM count where it is known (ChipSpec.sms; "
        "session 38): e.g. 384 experts on 132 SMs, 3 a block, 128 blocks")
    for name in ("send_cycles", "count_cycles", "chain"):
        src[name] = src[name] + (
            "; taken for d28bd67 as de8cfca's: d28bd67's build was not compiled and read "
            "(assumption; NCCL EP's adaptation of the same loop counts 424 / 282)")
    return _tma_combine(
        base, "deepep-low-latency@d28bd67", src,
        send=("deepseek-ai/DeepEP d28bd67 internode_ll.cu combine send (l.1410-1490, TMA since "
              "#299, c874cb7; the group's 16 warps take an (expert, rank) pair's tokens in turn: "
              "one a warp up to 128 tokens, ~4 a pair)"),
        receive=("deepseek-ai/DeepEP d28bd67 internode_ll.cu combine receive (l.1540-1675, since "
                 "#345, c5facf5; group g of block b sums token b + 128 g; each copy 16 + "
                 "14,336 B; one TMA store of the sum)"),
        chunk=("deepseek-ai/DeepEP d28bd67 internode_ll.cu combine (kNumSendUnrolls l.1346, the "
               "TMA constants l.1394-1397)"),
        send_grid=2, send_grid_experts=(256, 256), send_grid_sms=True)


EXCHANGE_KERNELS["deepep-low-latency@d28bd67"] = _deepep_low_latency_d28bd67()


def exchange_kernel(name):
    """The :class:`ExchangeKernel` called ``name`` (an ExchangeKernel passes through).

    Parameters
    ----------
    name : str or ExchangeKernel
        A kernel of :data:`EXCHANGE_KERNELS` (``"deepep-normal"``, ``"deepep-low-latency"``,
        ``"one-sided"``, ``"pplx"``, ``"all-to-allv"``, ...).

    Returns
    -------
    ExchangeKernel

    Examples
    --------
    >>> k = exchange_kernel("deepep-normal")
    >>> k.scale_out, k.forwarding, k.dedup   # RDMA once per node, NVLink fan-out
    (True, True, 'node')
    """
    if isinstance(name, ExchangeKernel):
        return name
    if not isinstance(name, str):
        raise kind_error(name, "kernel", "a name such as 'deepep-low-latency' or a "
                         "fabric.ExchangeKernel")
    return lookup(EXCHANGE_KERNELS, name, "MoE exchange kernel")
