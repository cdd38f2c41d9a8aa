"""Held-out MoE dispatch/combine rows (``tests/data/heldout.csv``), expressed in the model.

Published measurements that are not in the check set: DeepEP at the other EP widths of
its own tables (legacy.md; the Feb-2025 pure-RDMA table), DeepEP pull request #173 on
H20, TensorRT-LLM blog18 at EP 16/32/64 and its post-quantised dispatch, DeepEP V2 on
B200, pplx-kernels' README table on H100 (NVLink EP8, IBGDA EP16-128; its other rows are
``LEFT_OUT`` with the reason), NVIDIA NCCL EP's low-latency reference table on H100 (the
single-node EP8 pair; the 2-8 node rows are ``LEFT_OUT``), NVIDIA's aiconfigurator collector
data for TensorRT-LLM's one-sided ops on GB200 at EP 2/4/8 (one tray and two; session 13) and
for DeepEP's low-latency kernels on one HGX H100 / H200 / B200 / B300 node or one GB200 / GB300
tray (session 35). They
are expressed exactly as the check set's MoE rows (``tests/fidelity_moe.py``:
the same systems, kernels, routings and byte counts, each row in its source's metric)
and **nothing of the model may change because of them**. Rows missed by more than the
goal (``fidelity.HELDOUT_TOLERANCE``) are ``KNOWN_MISSES``, filled from the evaluation.
"""

import dataclasses
import functools

from fidelity_moe import BF16_TOKEN, FP8_TOKEN, h800_nodes, kernel_span, nvl72, parts

import topologies
from analysis import (
    LAUNCH_OVERHEAD,
    PDL_HIDDEN_GAP,
    eager_pass_seconds,
    host_launch_delay,
    model_config,
    moe_exchange,
)
from fabric import exchange_kernel, runtime


@functools.cache
def _h20_nodes(nodes):
    """``nodes`` H20 servers: 18 NVLink4 per GPU; one 400G InfiniBand NIC per GPU (the
    source does not state the NIC; DeepEP's own tables use one 400G CX7 per GPU)."""
    return topologies.build(f"rail:servers={nodes},gpus=8,links=18,nic=ib-ndr,chip=h20")


@functools.cache
def _b200():
    return topologies.build("hgx-b200")


#: A post-quantized DeepSeek-V3 token's two payloads per hidden element: MXFP8 values and one
#: scale byte per 32 elements (7168 + 224 = 7392 B), NVFP4 values (half a byte) and one scale
#: byte per 16 elements (3584 + 448 = 4032 B): blog18's "Post-Quant Dispatch" byte counts.
MXFP8_TOKEN = (1.0, 1 / 32)
NVFP4_TOKEN = (0.5, 1 / 16)

#: DeepEP's low-latency test as pull request #173 ran it: 288 experts, top-8, hidden 7168.
_DEEPEP_TEST_288 = dataclasses.replace(model_config("deepseek-v3"), name="deepep-test-288",
                                       routed_experts=288)


def _metric(r, phase, metric):
    t = r.dispatch if phase == "dispatch" else r.combine
    if metric == "time":
        return t * 1e6
    per_token = FP8_TOKEN if phase == "dispatch" else BF16_TOKEN
    copies = r.copies_rank if metric == "recv" else r.copies_node
    return copies * per_token / t / 1e9


def _deepep(fabric_of, kernel, tokens, phase, metric, *, model="deepseek-v3", transport=None):
    def case(row):
        ep = int(row["gpus"])
        nodes = max(1, ep // 8)
        routing = f"node-limited:{min(nodes, 4)}" if kernel == "deepep-normal" else "uniform"
        r = moe_exchange(fabric_of(nodes), model, tokens, ep, kernel=kernel,
                         dispatch_bytes=1 + 4 / 128, combine_bytes=2, routing=routing,
                         transport=transport)
        ph = r.dispatch_phase if phase == "dispatch" else r.combine_phase
        how = (f"{getattr(kernel, 'name', kernel)}{' over rdma' if transport else ''}, "
               f"{nodes} node(s), {routing}; {parts(ph)}")
        return _metric(r, phase, metric), how
    return case


def _trtllm(tokens, phase, dispatch_bytes=2, combine_bytes=2, span=True, kernel="one-sided"):
    """TensorRT-LLM one-sided rows. ``span``: the row is a CUPTI kernel span (blog18's
    bench_moe_comm.py; :func:`fidelity_moe.kernel_span`); ``False`` where the timing method
    is not stated (flashinfer PR #3697's trtllm column): the phase time as modelled.
    ``kernel``: the release's profile (``"one-sided-1.3"`` for TensorRT-LLM 1.3.0rc20)."""
    def case(row):
        f = nvl72()
        r = moe_exchange(f, "deepseek-v3", tokens, int(row["gpus"]), kernel=kernel,
                         dispatch_bytes=dispatch_bytes, combine_bytes=combine_bytes,
                         routing="balanced")
        t = r.dispatch if phase == "dispatch" else r.combine
        ph = r.dispatch_phase if phase == "dispatch" else r.combine_phase
        how = f"{kernel} on gb200-nvl72, perfect router; {parts(ph)}"
        if not span:
            return t * 1e6, how
        return kernel_span(t, f) * 1e6, how + "; CUPTI span: less the floor's graph gap 0.55"
    return case


#: TensorRT-LLM's one-sided ops as NVIDIA's aiconfigurator collector calls them
#: (collector/slurm_comm_collector/collect_trtllm_alltoall.py at cef980f2b,
#: ``benchmark_nvlink_one_sided``): ``torch.ops.trtllm.moe_a2a_dispatch`` alone launches the
#: prepare and dispatch kernels (the sanitize kernel is nvlink_one_sided.py's, not called),
#: so the dispatch chain loses the sanitize kernel's counter read and its cycles
#: (``sanitize_cycles``); ``moe_a2a_combine`` with
#: ``payload_in_workspace=True`` launches the prepare kernel, which only bumps the epoch
#: (thop/moeAlltoAllOp.cpp: no prepare payload, one block), then the combine kernel: no
#: staging copy, no counter read, no staging rounds. Everything else is the one-sided profile.
_ONE_SIDED_D = exchange_kernel("one-sided").chain[0]
_A2A_COLLECTOR = dataclasses.replace(
    exchange_kernel("one-sided"), kernels=(2, 2), staging_copy=False,
    sources=exchange_kernel("one-sided").sources + (
        ("kernels", ("ai-dynamo/aiconfigurator collector/slurm_comm_collector/"
                     "collect_trtllm_alltoall.py (cef980f2b): torch.ops.trtllm.moe_a2a_dispatch "
                     "(prepare + dispatch) and moe_a2a_combine (prepare + combine)")),
        ("chain", ("the one-sided chain without the sanitize kernel's counter read and "
                   "cycles (dispatch) and, with the MoE output in the workspace, without the prepare kernel's "
                   "counter read and staging rounds (combine: the epoch bump, the combine "
                   "kernel's two dependent routing-metadata loads and its pointer rows' L1.5 "
                   "fetch before round 1, session 21)"))),
    # the dispatch chain without the sanitize kernel's counter read and cycles
    chain=(_ONE_SIDED_D[:_ONE_SIDED_D.index(("cycle", "sanitize_cycles")) - 1]
           + _ONE_SIDED_D[_ONE_SIDED_D.index(("cycle", "sanitize_cycles")) + 1:],
           (("l2_hit", "one"), ("cycle", "lane_pass_cycles"), ("l2_hit", "one"),
            ("l2_hit", "one"), ("const_l15", "one"),
            ("l2_hit", "lane_passes")))).with_cycles(0, sanitize_cycles=0)


#: Timed replays per aiconfigurator row: collect_trtllm_alltoall.py ``--iterations`` (default
#: 10; ``submit_trtllm_alltoall.sh`` passes none, and no COLLECTOR_MEASURE_POWER, so
#: helper.py's ``benchmark_with_power`` keeps ``num_runs`` = 10) at 700ab964b, the commit
#: that added the GB200 NVLinkOneSided data.
_AIC_REPLAYS = 10


def _aic(tokens, phase, routing="balanced"):
    """aiconfigurator's GB200 NVLinkOneSided rows (NVFP4 dispatch, BF16 combine, balanced,
    TensorRT-LLM 1.2.0rc6; ``routing``: the model's for the collector's generator, which
    ``"grouped"`` is written from and ``"balanced"`` equals at EP <= 8): one op per CUDA graph, replayed back to back between two CUDA
    events, no L2 flush. A replay's interval holds its kernels and one boundary before each:
    the graph-to-graph boundary before the first kernel, an intra-graph one before the
    second. The phase time already holds both: the kernel floor is a per-op time of NCCL's
    back-to-back loop (one boundary and the kernel: ``runtime("symmetric-memory")
    .kernel_floor`` holds the kernel's GPU-side start) and each further kernel pays
    ``GRAPH_KERNEL_OVERHEAD``. So the interval is the phase time (assumption: a
    graph-to-graph boundary costs what a kernel-to-kernel one does; no source prices its
    excess, session 14). The timer starts on an idle stream (helper.py synchronizes, records
    the start event, then calls ``g.replay()`` 10 times), so the first replay's launch is
    exposed and the others hide behind the replays before them: the loop of
    :func:`analysis.eager_pass_seconds` (one launch per replay at
    :data:`analysis.LAUNCH_OVERHEAD`, the GPU idle of an exposed launch: call plus
    submit-to-start; assumption: a graph launch costs at least a kernel launch, torch's
    Python ``replay()`` path unpriced), divided by the replays. The exposed launch's
    submit-to-start and the floor's own boundary overlap for the first replay, so this
    charges up to one boundary too much over the 10 (<= ~0.13 us per row; review, session
    14). Not priced: the peers' start skew at the first replay (no figure)."""
    def case(row):
        r = moe_exchange(nvl72(), "deepseek-v3", tokens, int(row["gpus"]), kernel=_A2A_COLLECTOR,
                         dispatch_bytes=NVFP4_TOKEN, combine_bytes=2, routing=routing,
                         l2_flushed=False)
        t = r.dispatch if phase == "dispatch" else r.combine
        ph = r.dispatch_phase if phase == "dispatch" else r.combine_phase
        interval = eager_pass_seconds([t] * _AIC_REPLAYS, launch=LAUNCH_OVERHEAD.value)
        how = (f"one-sided (collector's ops: 2+2 kernels, payload in workspace) on gb200-nvl72, "
               f"{routing}, L2 warm; {parts(ph)} (the floor holds the replay's first boundary) "
               f"+ exposed first launch / {_AIC_REPLAYS}")
        return interval / _AIC_REPLAYS * 1e6, how
    return case


@functools.cache
def _h100_nodes(nodes):
    """``nodes`` H100 servers as pplx-kernels' README ran them ("H100 clusters", "NVLINK
    bandwidth is 450GB/s": 18 NVLink4 per GPU); one 400G InfiniBand NIC per GPU (the source
    does not state the NIC; IBGDA needs a ConnectX, HGX H100 carries one 400G CX7 per GPU)."""
    return topologies.build(f"rail:servers={nodes},gpus=8,links=18,nic=ib-ndr,chip=h100")


#: H100's L2 cache, bytes: "A 50 MB L2 cache in H100 is 1.25x larger than the A100 40 MB L2"
#: (NVIDIA Technical Blog, "NVIDIA Hopper Architecture In-Depth", 2022; docs/sources.md s.7).
_H100_L2 = 50 * 10**6


def _pplx_l2_flushed(tokens):
    """Whether pplx-kernels' bench_all_to_all.py (7af3059) leaves L2 flushed when a phase
    starts: it flushes nothing itself, but between two samples' pplx calls it runs c10d's
    all_to_all_single and nvshmem_alltoall, each on an input and an output of world x local
    experts x tokens x 7392 B (l.115-128), 256 x tokens x 7392 B per rank whatever the EP:
    4 x 1.89 MB at 1 token, within the 50 MB L2, so the token (dp_x) and the expert outputs
    (expert_y) the phases first read, read every sample, are still there; 4 x 242 MB at 128
    tokens pass through L2 first."""
    return 4 * 256 * tokens * (7168 + 7168 // 128 * 4) > _H100_L2


def _pplx(tokens, phase):
    """pplx-kernels' README table (7af3059): the NVSHMEM kernels, DeepSeek-V3 (top-8 of 256,
    hidden 7168), k distinct experts drawn uniformly per token, FP8 + per-128 float32 scales
    out, BF16 back; NVLink (NVSHMEM P2P) inside a node, IBGDA across (transport None); L2 as
    the benchmark leaves it (:func:`_pplx_l2_flushed`)."""
    def case(row):
        ep = int(row["gpus"])
        nodes = max(1, ep // 8)
        r = moe_exchange(_h100_nodes(nodes), "deepseek-v3", tokens, ep, kernel="pplx",
                         dispatch_bytes=1 + 4 / 128, combine_bytes=2, routing="uniform",
                         l2_flushed=_pplx_l2_flushed(tokens))
        t = r.dispatch if phase == "dispatch" else r.combine
        ph = r.dispatch_phase if phase == "dispatch" else r.combine_phase
        return t * 1e6, f"pplx, {nodes} node(s) of H100, uniform; {parts(ph)}"
    return case


#: ep_bench flushes nothing: runPairedBenchmark (contrib/nccl_ep/ep_bench.cu at 36191590) runs
#: dispatch -> event -> stream sync -> combine -> event -> sync -> MPI barrier, no other kernel,
#: so what a phase reads was left in L2 by the calls before it (``moe_exchange``'s switch). Two
#: first loads may be optimistic under it (assumptions, ~0.21 us each): the dispatch's x and top-k
#: ids, read once per iteration with ~60 MB of other traffic between the reads (L2 50 MB), and the
#: combine's expert outputs, read by TMA with evict_first (review S19-R1).
_EP_BENCH_L2_FLUSHED = False

#: Kernels each timed NCCL EP call launches on its low-latency path (contrib/nccl_ep/nccl_ep.cc
#: at 36191590: ncclEpDispatch -> internode_ll::dispatch, ncclEpCombine -> internode_ll::combine,
#: one kernel each, no memset on that path).
_NCCLEP_LAUNCHES = 1


def _ncclep(phase):
    """NVIDIA NCCL EP's low-latency kernel (contrib/nccl_ep/device/low_latency.cu at 36191590,
    "adapted from DeepEP"): DeepEP's low-latency structure (one message per (token, expert)
    with a 16-B header into expert-major slots, P2P warp copies to NVLink peers, one kernel
    per phase), priced as ``ncclep-low-latency``: DeepEP's profile with the steps NCCL EP's own
    compiled kernel takes (its three-load window lookup for each peer pointer: session 19);
    ep_bench's defaults: BF16 both ways, top-8 of 256 distinct and uniform, one H100 node
    (NVLink only), nothing flushed between the calls (``l2_flushed=False``).

    Measurement condition (not a kernel constant): ep_bench's runPairedBenchmark records the
    start event on an idle stream (each call follows a cudaStreamSynchronize) and then calls
    the eager C++ API, so host and GPU take turns: the interval holds the call's host launch
    path before its kernel, nccl-tests' ``-z 1`` structure, priced by
    :func:`analysis.host_launch_delay` (``blocking=True``) at the ``nccl`` runtime's
    ``host_launch`` (one direct cuLaunchKernel, a lower bound of the call's host path) per
    kernel the call launches. The combine's interval also holds the host's wake-up from the
    synchronize, which has no sourced figure and is not added."""
    def case(row):
        r = moe_exchange(_h100_nodes(1), "deepseek-v3", 128, 8, kernel="ncclep-low-latency",
                         dispatch_bytes=2, combine_bytes=2, routing="uniform",
                         l2_flushed=_EP_BENCH_L2_FLUSHED)
        t = r.dispatch if phase == "dispatch" else r.combine
        ph = r.dispatch_phase if phase == "dispatch" else r.combine_phase
        host = _NCCLEP_LAUNCHES * host_launch_delay(t, runtime("nccl").host_launch, 1,
                                                    blocking=True)
        how = (f"ncclep-low-latency, 1 node of H100, uniform, BF16, L2 warm; {parts(ph)}; "
               f"+ host launch {host * 1e6:.1f} us (event-timed after a stream sync)")
        return (t + host) * 1e6, how
    return case


def _aic_ll_blackwell(fabric_of, tokens, phase):
    """NVIDIA's collector's DeepEP low-latency rows on Blackwell (session 35): DeepEP's own test
    on every GPU of one HGX B200 / B300 node (EP8) or one GB200 / GB300 tray (EP4, the first four
    ranks of the NVL72 rack), priced as the H100 / H200 rows (``deepep-low-latency@d28bd67``,
    uniform) and read as a one-kernel Kineto duration (:func:`fidelity_moe.kernel_span`: less
    the floor's graph gap on Blackwell, as the DeepEP V2 B200 rows)."""
    def case(row):
        fabric = fabric_of()
        r = moe_exchange(fabric, "deepseek-v3", tokens, int(row["gpus"]),
                         kernel="deepep-low-latency@d28bd67", dispatch_bytes=1 + 4 / 128,
                         combine_bytes=2, routing="uniform")
        ph = r.dispatch_phase if phase == "dispatch" else r.combine_phase
        how = (f"deepep-low-latency@d28bd67 on {fabric.name}, uniform; {parts(ph)}; one "
               f"kernel's kineto duration: less the floor's graph gap "
               f"{PDL_HIDDEN_GAP.value * 1e6:.2f}")
        return kernel_span(ph.time, fabric) * 1e6, how
    return case


#: How DeepEP V2's README rows are timed (b306af0, tests/elastic/test_ep.py): bench_kineto with
#: kernel_names ('dispatch_impl', 'dispatch_copy_epilogue_impl') or the combine's pair, and the
#: printed bandwidth divides by the first name's time alone: bench_kineto (deep_ep/utils/
#: testing.py) returns one named kernel's mean duration, not a sum, and the epilogue is timed
#: apart. V2's comm kernel holds its notify warps (csrc/kernels/elastic/dispatch.hpp): one
#: kernel per phase, so no boundary between kernels lies inside a row (``kernel_gap=0``, not
#: V1's notify + dispatch), and a one-kernel span leaves out the floor's graph gap
#: (:func:`fidelity_moe.kernel_span`) where the handshake is that floor (one NVLink domain).
_V2_KINETO = "one kernel's kineto duration"


def _v2_b200(phase):
    def case(row):
        r = moe_exchange(_b200(), "deepseek-v3", 8192, 8, kernel="deepep-normal",
                         dispatch_bytes=1 + 4 / 128, combine_bytes=2, routing="uniform",
                         kernel_gap=0)
        ph = r.dispatch_phase if phase == "dispatch" else r.combine_phase
        t = kernel_span(ph.time, _b200())
        per_token = FP8_TOKEN if phase == "dispatch" else BF16_TOKEN
        how = (f"deepep-normal on hgx-b200, no SM budget; {parts(ph)}; {_V2_KINETO}: no "
               f"kernel gap, less the floor's graph gap {PDL_HIDDEN_GAP.value * 1e6:.2f}")
        return r.copies_rank * per_token / t / 1e9, how
    return case


@functools.cache
def _b200_nodes(nodes):
    """``nodes`` B200 servers: 18 NVLink5 per GPU, one 400G InfiniBand NIC per GPU (DeepEP V2's
    table: 'SM100', 'CX7'; SM100 read as B200, as for the table's intranode rows). The rail
    builder's scale-up links are NVLink4 unless told (``scaleup=nvlink4`` is its default, whatever
    the chip): session 35 found this spec without ``scaleup=nvlink5``, i.e. 450 GB/s a GPU where
    B200 has 900; the 2-node rows are network-bound and did not move."""
    return topologies.build(
        f"rail:servers={nodes},gpus=8,links=18,scaleup=nvlink5,nic=ib-ndr,chip=b200")


def _v2_b200_2node(phase):
    """DeepEP V2's 'SM100 CX7 EP 8 x 2' row, expressed as the V2 intranode rows are (V1's
    hierarchical deepep-normal exchange, uniform routing, 8192 tokens, no SM budget), in the
    table's scale-out metric: (token, destination node) pairs, own node included. Timed as one
    kernel (``_V2_KINETO``): no kernel gap; the handshake across the network is
    ``fabric.EXCHANGE_SYNC`` (NCCL's LL step), not the graph-loop floor, so nothing else is
    left out."""
    def case(row):
        r = moe_exchange(_b200_nodes(2), "deepseek-v3", 8192, 16, kernel="deepep-normal",
                         dispatch_bytes=1 + 4 / 128, combine_bytes=2, routing="uniform",
                         kernel_gap=0)
        ph = r.dispatch_phase if phase == "dispatch" else r.combine_phase
        how = (f"deepep-normal on 2 x 8 B200 + 400G NIC, uniform, no SM budget; {parts(ph)}; "
               f"{_V2_KINETO}: no kernel gap")
        return _metric(r, phase, "rdma"), how
    return case


@functools.cache
def _h200_nodes(nodes):
    """``nodes`` H200 servers: 18 NVLink4 per GPU; one 400G InfiniBand NIC per GPU (DeepEP issue
    #493: 'CX7 400 Gb/s InfiniBand')."""
    return topologies.build(f"rail:servers={nodes},gpus=8,links=18,nic=ib-ndr,chip=h200")


#: DeepEP's normal kernels as issue #493 ran them (a84a248, 2025-04-16, before PR #130): NVSHMEM's
#: IBRC transport, one CPU-proxy RC queue pair per peer carrying each RDMA chunk's write and its
#: tail signal's atomic (session 32; the fields' sources below); each row takes the RDMA chunk
#: its own run printed as the sweep's best (:func:`_deepep_a84a248`).
_DEEPEP_A84A248 = dataclasses.replace(
    exchange_kernel("deepep-normal"), name="deepep-normal@a84a248",
    qp_signals=("each", "each"), qp_per_peer=1,
    sources=exchange_kernel("deepep-normal").sources + (
        ("qp_signals", (
            "deepseek-ai/DeepEP a84a248 csrc/kernels/internode.cu: the dispatch's RDMA sender "
            "coordinator (l.713-729) and the combine's (l.1561-1574) put each chunk of at most "
            "num_max_rdma_chunked_send_tokens tokens with nvshmemx_int8_put_nbi_warp, then "
            "nvshmem_fence, then nvshmemx_signal_op(tail, n, NVSHMEM_SIGNAL_ADD); the normal "
            "kernels run NVSHMEM's IBRC transport at this commit (deep_ep/buffer.py sets "
            "NVSHMEM_IB_ENABLE_IBGDA only in low-latency mode; PR #130, 5ab80c2, moved them to "
            "IBGDA), where NVSHMEM 3.2.5 (valgur/NVSHMEM-archive 6d8ab15 src/modules/transport/"
            "ibrc/ibrc.cpp) posts the put as one RDMA write (nvshmemt_ibrc_rma) and a 64-bit "
            "SIGNAL_ADD as a native IBV_WR_ATOMIC_FETCH_AND_ADD (nvshmemt_ibrc_amo, "
            "use_ib_native_atomics 1 by default, ahead of the GDRCopy path), and the fence is "
            "none (host_ops.fence NULL): each chunk is a write followed by its atomic")),
        ("qp_per_peer", (
            "NVSHMEM 3.2.5 ibrc.cpp nvshmemt_ibrc_rma / nvshmemt_ibrc_amo: a proxy-issued "
            "operation to PE pe uses ep[ep_count x pe + proxy_ep_idx], one RC queue pair per peer "
            "for every proxied put and atomic (5ab80c2's message: 'a single QP ... between two "
            "GPUs')")),
        ("qp_chunk", (
            "deepseek-ai/DeepEP issue #493 prints each phase's best of test_internode.py's sweep "
            "(a84a248 l.175-214: RDMA chunks 4-32 for the dispatch, 8-32 for the combine) at 2 "
            "nodes: 'Best dispatch (FP8): SMs 24, NVL chunk 28, RDMA chunk 24', 'Best dispatch "
            "(BF16): SMs 24, NVL chunk 28, RDMA chunk 16', 'Best combine: SMs 24, NVL chunk 2, "
            "RDMA chunk 20': each row takes its own run's chunk, the measurement's condition "
            "(review S32-R1, lead's decision 10:14)")),
    ))


def _deepep_a84a248(chunk):
    """:data:`_DEEPEP_A84A248` with ``chunk`` tokens per RDMA write (``qp_chunk``)."""
    return dataclasses.replace(_DEEPEP_A84A248, name=f"deepep-normal@a84a248/chunk{chunk}",
                               qp_chunk=chunk)


def _i493(phase, dispatch_bytes, chunk):
    """DeepEP issue #493's 2-node run on H200, expressed as the check set's EP16 normal rows
    (test_internode.py: 4096 tokens, top-2 groups of 2 nodes, top-8; the RDMA-counted metric,
    own node included); ``dispatch_bytes`` per hidden element (FP8 + scales, or BF16). The
    kernel as a84a248 ran it: IBRC, one queue pair per peer, ``chunk`` tokens per RDMA write
    (the row's own best, :func:`_deepep_a84a248`)."""
    def case(row):
        r = moe_exchange(_h200_nodes(2), "deepseek-v3", 4096, 16, kernel=_deepep_a84a248(chunk),
                         dispatch_bytes=dispatch_bytes, combine_bytes=2,
                         routing="node-limited:2")
        t = r.dispatch if phase == "dispatch" else r.combine
        ph = r.dispatch_phase if phase == "dispatch" else r.combine_phase
        per_token = 7168 * dispatch_bytes if phase == "dispatch" else BF16_TOKEN
        return (r.copies_node * per_token / t / 1e9,
                (f"deepep-normal@a84a248 (IBRC, RDMA chunk {chunk}), 2 node(s) of H200, "
                f"node-limited:2; {parts(ph)}"))
    return case


_DEEPEP_EBFE47E = dataclasses.replace(exchange_kernel("deepep-low-latency"),
                                      name="deepep-low-latency@ebfe47e", qp_signals=())

CASES = {
    "deepep-v1-ep64-normal-dispatch": _deepep(h800_nodes, "deepep-normal", 4096, "dispatch",
                                              "rdma"),
    "deepep-v1-ep64-normal-combine": _deepep(h800_nodes, "deepep-normal", 4096, "combine",
                                             "rdma"),
    **{f"deepep-v1-ep{ep}-ll-{ph}": _deepep(h800_nodes, "deepep-low-latency", 128, ph, "time")
       for ep in (16, 32, 64, 256) for ph in ("dispatch", "combine")},
    # DeepEP's February 2025 release (ebfe47e) sent the count and flag as RDMA writes
    # (nvshmemi_ibgda_rma_p); the atomics came with 2d0cf41 (2025-03-14): no atomic follows
    # the writes on a queue pair (fabric.ExchangeKernel.qp_signals, session 25)
    **{f"deepep-feb25-ep{ep}-ll-rdma-{ph}": _deepep(h800_nodes, _DEEPEP_EBFE47E, 128, ph,
                                                    "time", transport="rdma")
       for ep in (8, 16, 32, 64) for ph in ("dispatch", "combine")},
    **{f"deepep-pr173-h20-ep{ep}-ll-{tag}-{ph}": _deepep(
        _h20_nodes, "deepep-low-latency", 128, ph, "time", model=_DEEPEP_TEST_288,
        transport="rdma" if tag == "rdma" else None)
       for ep in (8, 16, 32, 64) for tag in ("rdma", "nvlink") for ph in ("dispatch", "combine")},
    **{f"trtllm-ep{ep}-bs{bs}-{ph}": _trtllm(bs, ph)
       for ep in (16, 32, 64) for bs in (1, 16, 128, 512, 2048) for ph in ("dispatch", "combine")},
    # post-quantized tokens travel as two payloads, values then scale factors (TensorRT-LLM
    # nvlink_one_sided.py: payloads = hidden, [sf], slots, [scales]); 7392 = 7168 + 224 (MXFP8,
    # one scale byte per 32 elements), 4032 = 3584 + 448 (NVFP4, one per 16); fi3697's
    # benchmark is taken to pass them the same way (its payload list is not stated)
    "trtllm-ep8-bs2048-mxfp8-dispatch": _trtllm(2048, "dispatch", dispatch_bytes=MXFP8_TOKEN),
    "trtllm-ep8-bs2048-nvfp4-dispatch": _trtllm(2048, "dispatch", dispatch_bytes=NVFP4_TOKEN),
    # fi3697: the benchmark's timing method is not in the stored thread: no span rule; the rows
    # ran TensorRT-LLM 1.3.0rc20, whose combine loop is the low-precision combine's (PR #11844)
    **{f"fi3697-trtllm-ep32-bs{bs}-nvfp4-dispatch": _trtllm(bs, "dispatch",
                                                            dispatch_bytes=NVFP4_TOKEN, span=False,
                                                            kernel="one-sided-1.3")
       for bs in (1, 128, 2048)},
    "fi3697-trtllm-ep32-bs1-bf16-combine": _trtllm(1, "combine", span=False,
                                                   kernel="one-sided-1.3"),
    "fi3697-trtllm-ep32-bs1-fp8-combine": _trtllm(1, "combine", combine_bytes=1, span=False,
                                                  kernel="one-sided-1.3"),
    **{f"deepep-v2-b200-ep8-{sm}sm-{ph}": _v2_b200(ph)
       for sm in (64, 24) for ph in ("dispatch", "combine")},
    **{f"deepep-v2-b200-2node-{ph}": _v2_b200_2node(ph) for ph in ("dispatch", "combine")},
    "deepep-i493-h200-ep16-normal-dispatch": _i493("dispatch", 1 + 4 / 128, 24),
    "deepep-i493-h200-ep16-normal-dispatch-bf16": _i493("dispatch", 2, 16),
    "deepep-i493-h200-ep16-normal-combine": _i493("combine", 2, 20),
    **{f"pplx-h100-ep{ep}-bs{bs}-{'nvlink' if ep == 8 else 'ibgda'}-{ph}": _pplx(bs, ph)
       for ep in (8, 16, 32, 64, 128) for bs in (1, 128) for ph in ("dispatch", "combine")},
    **{f"ncclep-h100-ep8-ll-{ph}": _ncclep(ph) for ph in ("dispatch", "combine")},
    **{f"aic-trtllm-ep{ep}-bs{bs}-nvfp4-{ph}": _aic(bs, ph)
       for ep in (2, 4, 8) for bs in (1, 16, 128, 2048) for ph in ("dispatch", "combine")},
    # EP16/EP32: the collector's own generator ("grouped", session 33; session 32 carried
    # 16-2048 tokens under "balanced", which prices them alike), 1 token too
    **{f"aic-trtllm-ep{ep}-bs{bs}-nvfp4-{ph}": _aic(bs, ph, "grouped")
       for ep in (16, 32) for bs in (1, 16, 128, 2048) for ph in ("dispatch", "combine")},
    # the same collector's DeepEP low-latency data (session 35): DeepEP's own test on one full
    # HGX node, timed as the check set's DeepEP rows (one kernel's Kineto mean; Hopper: no gap)
    **{f"aic-deepep-{chip}-ep8-ll-bs{bs}-{ph}": _deepep(
        _h100_nodes if chip == "h100" else _h200_nodes, "deepep-low-latency@d28bd67", bs, ph,
        "time")
       for chip in ("h100", "h200") for bs in (1, 16, 128) for ph in ("dispatch", "combine")},
    # Blackwell (lead's decision, session 35): one HGX B200 node (EP8) and one GB200 tray (EP4)
    **{f"aic-deepep-{chip}-ep{ep}-ll-bs{bs}-{ph}": _aic_ll_blackwell(
        _b200 if chip == "b200" else nvl72, bs, ph)
       for chip, ep in (("b200", 8), ("gb200", 4)) for bs in (1, 16, 128)
       for ph in ("dispatch", "combine")},
    # B300 and GB300 (lead's decision, session 35), the same rule
    **{f"aic-deepep-{chip}-ep{ep}-ll-bs{bs}-{ph}": _aic_ll_blackwell(
        functools.partial(topologies.build, spec), bs, ph)
       for chip, ep, spec in (("b300", 8, "hgx-b300"), ("gb300", 4, "gb300-nvl72"))
       for bs in (1, 16, 128) for ph in ("dispatch", "combine")},
}

#: Rows of the held-out sources that are NOT carried, and why (none of them is a row to fit).
LEFT_OUT = {
    "aiconfigurator GB200 NVLinkOneSided rows at other token counts, NVLinkTwoSided": (
        "the collector's balanced generator (collect_trtllm_alltoall.py generate_balanced_expert_ids, "
        "cef980f2b) sends token i of EVERY source rank to the same group of 8 consecutive ranks, "
        "i mod (ep/8): with fewer tokens than groups the ranks outside the first groups receive "
        "nothing and rank 0 receives ep copies, which is not the model's balanced routing (rotated "
        "by source); at EP <= 8 every token reaches every rank in both, so those rows are carried; "
        "1, 16, 128, 2048 tokens span latency to bandwidth as the blog18 rows do; NVLinkTwoSided has "
        "no profile. Rule fixed before any model figure for these rows (session 13). Session 32: "
        "the collector logs rank 0's time only (run_benchmark: 'Log results (only rank 0)'), and "
        "rank 0's tokens go where the perfect router's rotation sends them (token t to ranks "
        "8 (t mod ep/8) + i under both at rank 0), while at token counts that ep/8 divides every "
        "rank receives tokens x 8 copies under both: the EP16/EP32 rows at 16, 128 and 2048 tokens "
        "are carried (model figures for them were computed before this rule was written down, and "
        "the rule keeps the 1-token rows out on the receivers alone). Session 33: the model "
        "has the collector's generator itself (routing 'grouped', written from "
        "generate_balanced_expert_ids; equal to 'balanced' in every figure of the rows above) "
        "and the 1-token EP16/EP32 rows are carried with it"),
    "aiconfigurator DeepEP low-latency tables: other shapes and token counts, and the older "
    "0.5.6.post2 tables": (
        "three points of the sweep at the DeepSeek-V3 shape, the token counts of the same "
        "collector's TensorRT-LLM rows (1, 16, 128; 2048 not collected), rule posted before any "
        "model figure (session 35); the rule first left out the B200 and GB200 tables on a wrong "
        "reason (the kernel-span rule was thought unsettled on Blackwell; fidelity_moe.kernel_span "
        "covers it), and they are carried at the lead's decision (board 17:38; the B200 model "
        "figures had been seen, the GB200 ones had not); B300 / GB300 carried by the same rule, "
        "posted before any of their figures (board 17:52, lead 17:59); "
        "the 0.5.6.post2 tables (EP8-64, 1-8 nodes) are filed twice with byte-for-byte the same "
        "values under h100_sxm and h200_sxm, so the GPU cannot be told, and their harness masks "
        "10 random routes (of 16 at 2 tokens); their values are in docs/sources.md s.7 as "
        "evidence"),
    "NCCL EP README low-latency rows at 16/32/64 GPUs (2/4/8 H100 nodes)": (
        "the NIC is not stated and the inter-node traffic goes through NCCL's GIN transport "
        "(device-initiated puts and signals, GDAKI or a CPU proxy), for which the model has no "
        "profile; the IBGDA figures of the other rows would be borrowed"),
    "pplx-kernels README IBRC dispatch/combine (1 and 128 tokens, EP16-128)": (
        "NVSHMEM's IBRC transport posts RDMA through a CPU proxy thread; the model has only "
        "GPU-initiated network exchanges (EXCHANGE_SYNC, EXCHANGE_NIC_EFFICIENCY are "
        "GPU-driven figures) and no proxy cost: not expressible honestly. Session 32: what IBRC "
        "does to a queue pair is priced (one proxy RC queue pair per peer, each put a write and "
        "each 64-bit SIGNAL_ADD a native fetch-add on it: the deepep-i493 rows, ~340-510 "
        "proxied operations a rank per phase), but not the proxy thread's own time per operation (none "
        "published, docs/sources.md s.7), and pplx puts every (token, expert) message and its "
        "signal through that one thread, the NVLink peers' signals too (the job is not "
        "load/store-connected): ~1,700-2,200 operations a rank per phase at 128 tokens, whose "
        "proxy time the rows would set"),
    "pplx-kernels README Torch AtA / NVSHMEM AtA rows": (
        "dense all-to-alls (torch all_to_all_single = NCCL; nvshmemx_alltoallmem_on_stream) of "
        "world x local experts x tokens x 7392 B, not the pplx kernel: collective rows, the "
        "runtime area's to carry or not (board)"),
    "DeepEP V2 README 'SM90 CX7' rows (EP 8 x 2: 90/81 GB/s, 12 SMs; EP 8 x 4: 61/61, 6 SMs)": (
        "the chip is not named: SM90 covers H800 (8 NVLink4 links per GPU) and H100/H200/H20 (18), "
        "a 2.25x difference on the NVLink leg of a hierarchical exchange, so choosing one would "
        "choose the model's answer; the table's SM100 rows are carried (SM100 read as B200, as for "
        "its intranode rows). Rule fixed before any model figure for these rows (session 12)"),
    "flashinfer benchmarks/MoE_benchmarks.md s.3.1 (NCCL EP 2.30.7 on B200: LL EP8-32, HT EP8-64)": (
        "the low-latency kernel measured there is not the one the carried NCCL EP rows ran: since "
        "b615e121 (2026-03-09, 'Low-Latency kernel memory footprint optimization') its dispatch "
        "sends one message per (token, destination rank) with the top-k in a header ('avoid "
        "duplicate sending of tokens to the same rank', contrib/nccl_ep/device/low_latency.cu at "
        "5067397c), where DeepEP's and 36191590's send one per (token, expert): no profile in the "
        "model; the HT rows are NCCL EP's JIT kernels (not read) and the multi-node LL rows cross "
        "nodes over GIN (the README rows' reason). Rule fixed before any model figure (session 12)"),
    "DeepEP issue #137 (2 x 8 H20, RoCE, test_internode.py after the multi-QP fix)": (
        "the stored thread holds only chunk-size sweeps without their phase/dtype header (no 'Best "
        "dispatch'/'Best combine' line in the corpus) and the RoCE NIC's rate is not stated: the "
        "figures (40-44.7 GB/s RDMA-counted, 132-146 NVL) cannot be assigned to a phase without "
        "choosing; evidence only (docs/sources.md, session 12)"),
    "pplx-kernels README DeepEP Dispatch/Combine rows": (
        "copied from DeepEP's February-2025 pure-RDMA README table (H800): already held out as "
        "deepep-feb25-ep*-ll-rdma-*, EP128 left out there as not independent"),
}

#: Held-out MoE rows the model misses by more than the goal today (from the evaluation).
_FLOOR = ("one-sided small-batch floor: every kernel counted from the code is charged "
          "(dispatch: 2 graph nodes + the symmetric-memory kernel floor + one block's serial "
          "chain at published Blackwell latencies (since session 21 with the compiled "
          "per-destination pointer-row loads from the kernel's parameters, +0.6 us) + the "
          "release fence's peer round trip + the token at one block's rate, ~15 us; combine: 1 node + the floor + the "
          "staging chain + 4 pulled rounds, each two measured peer loads of 1.71 us (slot 7's "
          "load issues after slots 0-6's return, compiled SASS, session 17), + the token at "
          "one block's rate, ~21 us); "
          "blog18 measures ~19 us dispatch / ~31 us combine at 1-32 tokens at every EP width, "
          "and NVIDIA's barrier-off run at EP8 (an earlier revision of blog18, PR #12195) puts "
          "11.3 / 28.1 us of it outside the barriers: more per-kernel work than the sourced "
          "latencies price; the dispatch's part outside the barriers matches the model "
          "(11.3 us), the combine's by ~2 us per pulled round beyond the two round trips, "
          "TensorRT-LLM PR #11844's kernel-only combine times (15.7 us BF16, 7.7 us FP8) "
          "showing ~4 us per round "
          "(see tests/fidelity_moe.py); blog18's rows are CUPTI kernel spans and leave out the "
          "floor's intra-graph gap (0.55 us on GB200, session 15: the floor is a CUDA-graph "
          "loop's per-op time, nccl-tests issue 333); flashinfer PR #3697's timing is not "
          "stated, so its rows keep the whole floor")
_RATE = ("one-sided mid batch: the floor above plus an achieved NVLink rate below NCCL's "
         "40.1 GB/s per NVLink5 link as EP grows (blog18: 'synchronization overhead inside "
         "the larger communication domain'); not modelled")
_LL_NVLINK = ("DeepEP low-latency with NVLink peers (kernel times from bench_kineto: the "
              "floor's graph gap lies outside them, but no Hopper gap is published, so nothing "
              "is left out; session 15): the per-(token, expert) warp copies "
              "reach a lower NVLink rate than NCCL's per-link figure (also EP8 on H800 in the "
              "check set); no sourced per-warp store rate. Session 10: NVIDIA's NCCL EP README "
              "(a DeepEP-derived kernel, H100, BF16) and nixl PR #1751 (DeepEP on 8x H100) show "
              "the same ~10-11 GB/s per NVLink4 link: measurements of the design, not a source. "
              "Session 13, from DeepEP de8cfca's internode_ll.cu with the project's Hopper "
              "latencies: the dispatch's sending warps (top-k per token, one 7408-B message each in "
              "a slot atomic + 8 dependent L2-hit load rounds, posted stores) issue >= 1.4 TB/s per "
              "GPU, the combine's (one warp per 14336-B copy, 4 HBM load rounds, ~1000 warps at "
              "once) ~10 TB/s: no code-derived rate binds; the time follows the link count (H800 "
              "77 us, H20 37 us for the same bytes), i.e. the links' achieved rate, unsourced. "
              "Session 14: NVLink packetisation (SM stores: <= 128 B payload per packet, "
              "NVIDIA/nccl-tests #149; ~16 B header, NVIDIA/nccl #1397) bounds the cost of "
              "misaligned 7408-B / 14352-B messages at ~2.5% of the link time, not the gap. "
              "Session 20: a dispatch block's second token waits for its first token's release "
              "fence (send_waves: +1.5 us at 128 tokens), not the gap either")
_PPLX_SMALL = (
    "pplx-kernels at one token per rank (README table, 7af3059's NVSHMEM kernels, eager): the "
    "model charges the handshake (one node: the symmetric-memory kernel floor + the release "
    "fence, 3.1 us; across nodes: one NCCL LL step over the network, 9.3 us) plus the bytes; "
    "the measured 42 us (NVLink, one node) and 100-126 us dispatch / 55-63 us combine (IBGDA) "
    "are per-operation NVSHMEM costs the code serialises and the model has no sourced figure "
    "for: in the dispatch the last warp of each of 26 blocks signals ~10 experts' counts one "
    "after another (nvshmemx_signal_op to the expert's rank; session 16: priced as a lower "
    "bound, the count warp's chain: its first L2 index load and, per expert across the "
    "network, one NVSHMEM 3.2.5 IBGDA post; session 17 recounted the post in the release's "
    "SASS: the steps always run are 2 L2 atomics, 5 L2 loads and a GPU-scope fence priced as "
    "an L2 round trip, 1.25 us, the doorbell only when the post rings it: 0.1-12.6 us; "
    "session 24: three more L2 trips (dev_idx, nwqes, the CQ record's address; qp_type an L1 "
    "hit after dev_idx) and the 1,789 cycles (0.90 us) lane 0's code schedules outside its "
    "loads in NVSHMEM 3.2.5's amo_nonfetch, 6.0-12.0 us on the IBGDA dispatches, 1.6-2.0 on "
    "the combines; "
    "likewise the combine's blocks' serial sends, an L2 and an HBM load per copy and across "
    "the network one IBGDA post per copy plus block 0's sync signal ahead of them, 0.5-3.0 us "
    "at one token; and, counted in the kernels' SASS (session 17), the receive parts: the "
    "dispatch's blocks each walk all 256 count slots, two dependent loads per slot, +8.5-9.5 "
    "us (session 21: +12.4-13.4 us, the first load of each new 32-B sector an L2 trip, the L1 "
    "filling by sectors; session 20: and per received token a check, its copy's 2 rounds and "
    "its index load, +0.17-1.39 us), the combine's per-pass sum over the k copies, an index "
    "then a copy load each, +5.05 us; session 21: every NVSHMEM wait ends in a GPU-scope fence, "
    "+0.14 us per dispatch, +0.42 us per combine, across nodes +0.43 us more where the last "
    "count is the dispatch's last arrival), each token's 8 warps each post "
    "a put-with-signal (putmem_signal_nbi_warp: data, then the signal after it), then the "
    "receive part waits per (local expert, source) slot for the count and then for that many "
    "signals, a cooperative grid sync, and copies out; the combine signals every rank's sync "
    "flag, stages and puts each received copy with its signal, grid-syncs, waits for k "
    "signals per token and for every rank's flag. NVSHMEM's P2P put-with-signal is the group's "
    "copy, then one thread's __threadfence_system() and the signal (NVIDIA/nvshmem "
    "src/include/non_abi/device/common/nvshmemi_common_device.cuh, "
    "nvshmemii_put_signal_threadgroup): the release fence the model charges once per dispatch "
    "(the 8 warps of a token fence concurrently) and, since session 17, once per copy of the "
    "combine's slowest block (its copies go one after another). Timing (session 11, bench_all_to_all.py at "
    "7af3059): per sample an on-stream NVSHMEM barrier kernel, then events around one eager "
    "Python call each (one cooperative kernel per call), 10 samples with no host "
    "synchronisation between them: host time shows only where the host falls behind the "
    "GPU. With the one sourced host figure (the nccl runtime's host_launch, 3.0 us per "
    "cuLaunchKernel) the loop's >= 5 launches per sample are GPU-bound and add < 0.1 us, so "
    "nothing is added. A host-bound reading needs ~24 us per Python call (the four EP8 "
    "intervals sum to 168 us per sample); PyTorch's maintainers publish 6-15 us per custom-op "
    "call from Python (pytorch issue 177109, pull request 178216; other releases and hosts, "
    "not pplx's op: evidence, not an input), which with the 3 us launch and the model's kernel "
    "gives ~12-21 us for a host-bound dispatch interval: the host path alone would not reach "
    "41.6 us, so the device side is also slower than the model. Session 13 (7af3059 re-read): "
    "the table is rank 0's events only (no max over ranks), the mean over 20 runs of 10-sample "
    "means, each interval one cooperative kernel between two events, no stream synchronisation "
    "per call (ep_bench's host launch is in its interval by construction; here only if the host "
    "is behind); which side is behind at EP8 cannot be decided from the code with sourced "
    "figures (both sides are lower bounds), and even host-bound at the eager launch's 4 us "
    "(decode.launch_overhead) the pair would be ~7 us. The IBGDA loops' four intervals sum to "
    "344 (EP32) - 454 (EP128) us per sample against <= ~170 us at EP8 for the same pplx and "
    "NVSHMEM calls (only c10d's all-to-all grows with EP): GPU-bound, their intervals are "
    "device time and no host term applies")
_PPLX_NVLINK = (
    "pplx-kernels NVSHMEM P2P at 128 tokens on one H100 node: per-(token, expert) warp copies "
    "(putmem_signal_nbi_warp over NVLink) reach a lower rate than NCCL's 20.6 GB/s per NVLink4 "
    "link the model uses (18 links: 371 GB/s per GPU), as DeepEP low-latency's NVLink warp "
    "copies do (deepep-v1-ep8 check row, PR #173 H20 rows): less the model's fixed and HBM "
    "parts the rows imply ~88 GB/s (dispatch, 6.6 MB of link bytes per GPU) and ~150 GB/s "
    "(combine, 12.8 MB), plus the one-token floor above; no sourced per-warp store rate")
_PPLX_IBGDA = (
    "pplx-kernels IBGDA at 128 tokens: the model's NIC runs at 47 GB/s (0.94 of 400G); the "
    "measured times, less the model's fixed and HBM parts, imply 6 (EP16) to 24 (EP128) GB/s "
    "of remote-node bytes per rank in the dispatch (combine: 11 to 24), FALLING with fewer "
    "nodes although fewer bytes leave the node: not a bandwidth limit. Every "
    "(token, expert) message is its own GPU-posted RDMA write plus a signal atomic "
    "(nvshmemx_putmem_signal_nbi_warp: one WQE pair per message, 512 (EP16) to 960 (EP128) "
    "remote messages per rank per phase) and the count signals add one per (rank, expert); "
    "the model has no per-message IBGDA cost (no sourced figure). Session 11: the one code "
    "quantity that falls as EP grows is the messages per queue pair: NVSHMEM posts to an RC "
    "QP one after another (ibgda_device.cuh: slots reserved by an atomic on resv_head, "
    "submitted in order by a CAS on ready_head, the doorbell under the QP's post_send_lock), "
    "with NVSHMEM_IBGDA_NUM_RC_PER_PE QPs per peer (2 at NVSHMEM 3.2.5, the release pplx's "
    "install guide builds; mapped by CTA, session 16), so a rank's ~512 "
    "remote messages share 8 peers' QPs at EP16 and ~896 share 120 peers' at EP128, "
    "consistent with EP16 being the slowest; no sourced per-post time prices it. Session 16 "
    "(NVSHMEM 3.2.5's device code): the put-with-signal is one write and one atomic WQE in one "
    "post with no fence or completion wait, so no round trip per message; at one L2 atomic "
    "per link of the QP's submission order the chain is ~6 us at EP16, against ~16 us per "
    "post per QP the rows would need; and the combine rows (same messages per peer) do not "
    "fall with EP. The combine's blocks send their ~8 copies each one after another: priced "
    "as a lower bound chain (an L2 load, an HBM load and one IBGDA post per copy, and block "
    "0's sync signal: 15.1 us since session 17's recount of the post in NVSHMEM's SASS; "
    "and a peer round trip per copy to an NVLink peer, whose fence precedes its post: "
    "1.0-4.5 us); since review S17-R1 these chains between a block's copies (and the count "
    "warp's) are a floor of the transfer, not added to it. Session 32: the busiest queue "
    "pair's own writes add to its round trips (they wait behind each held atomic: +5.0 us "
    "dispatch, +9.8 us combine at EP16); the same README table's Torch AtA rows put 37.7-45.7 "
    "GB/s a GPU across these nodes (one 400G NIC a GPU), and at EP32-128 both phases sit at "
    "~2x the model's network time (~23.5 GB/s of remote bytes a GPU) where the same runs' "
    "IBGDA NVSHMEM AtA (NVSHMEM 3.2.5's one-block kernel: one 1.9-7.6 MB put per peer) "
    "reached 30.6-39.5 (session 34: its EP16 figure is that block's NVLink copies, not the "
    "network); DeepEP low-latency, the same bytes and messages with one atomic per local "
    "expert's queue pair, is within 9-21% of the model on Perplexity's ConnectX-7 table: a "
    "per-message cost of pplx's 7.4-14 KB put-with-signals (or its cluster) with no sourced "
    "figure")
_NCCLEP = (
    "NVIDIA NCCL EP low-latency (DeepEP-derived kernel, contrib/nccl_ep 36191590) over NVLink on "
    "one H100 node, BF16 both ways: the model (ncclep-low-latency: NCCL's 20.6 GB/s per NVLink4 "
    "link x 18, the release fence, the receive copy, the counted fill and drain of NCCL EP's "
    "compiled kernel (session 19), the host launch) gives ~51 us dispatch / ~47 us combine; "
    "the README's 224.3 / 185.2 GB/s are ~10.9 / ~9 GB/s of remote copies per link, the same "
    "per-link shortfall of the warp-copy design as DeepEP on H800 and H20 (_LL_NVLINK); the "
    "interval also holds the eager C++ call's host launch path (ep_bench: CUDA events around "
    "ncclEpDispatch; the combine's interval starts at the dispatch's end event, recorded before "
    "the host's cudaStreamSynchronize, so it also holds the host's wake-up from that sync and "
    "the whole ncclEpCombine call, which is why the combine reads slower than the dispatch for "
    "the same bytes): the launch is added at its sourced lower bound (3.0 us, one "
    "cuLaunchKernel; session 11), the call's own checks and the sync wake-up have no sourced "
    "figure (flashinfer benchmarks/MoE_benchmarks.md, af979cc90, measures ep_bench's event "
    "interval 6.1 / 6.0 us above the CUPTI kernel time for LL dispatch / combine on 8x B200 "
    "with NCCL 2.30.7: another chip, host and release, found after the 3.0 us term's effect "
    "was known, so evidence that 3.0 is a lower bound, not an input); the combine's sends go "
    "through shared memory and TMA stores and its receive through a 3-stage TMA warp "
    "(low_latency.cu), priced since session 36 (a warp's stage rounds, reduce_stages) as DeepEP "
    "d28bd67's: at 128 tokens the links and the receive copy bind, so they move nothing here; "
    "the model routes all 128 x 8 selections where ep_bench masks 10 of them (1% more bytes "
    "in the model, i.e. toward the measurement, not away). Session 13: the dispatch's sends "
    "(low_latency.cu at 36191590: ceil(256 / 132) = 2 warp groups of 16 warps, 128 blocks, one "
    "token each; the top-8 warps each copy the 14352-B message with UNROLLED_WARP_COPY(8, ...): "
    "3 unrolled + 5 remainder load rounds, posted stores) issue ~10.8 GB/s per warp at the "
    "project's Hopper latencies, ~11 TB/s for the 1024 warps against the links' 371 GB/s: no "
    "code-derived rate binds, as for DeepEP (_LL_NVLINK)")
_AIC_TRAY = ("NVIDIA's collector data put the one-sided small-batch excess mostly across trays: at "
             "1 token the combine takes 16.1 / 17.1 us at EP2 / EP4 (one tray) and 25.3 us at EP8 "
             "(two trays), the dispatch 12.9 / 14.9 / 18.3 us; the model counts the same phases at "
             "every width (the kernel floor, which holds the replay's first boundary, one kernel "
             "gap, the serial chain with L2 warm, the release fence and 4 pulled rounds at the "
             "in-tray peer load of 1.71 us) and has no cross-tray term: no published GB200 "
             "cross-tray round trip (session 13 notes). In one tray, at 1-16 tokens, the combine "
             "is 33-47% and the dispatch 56-79% fast: each op takes 4.0-7.1 us more than its "
             "counted steps and the first replay's exposed launch even there. Not located: "
             "TensorRT-LLM's op (thop moeAlltoAllOp.cpp, 2 + 2 kernels, BlockPolicy by default) "
             "and kernels were recounted in session 14 with no further phase; unpriced are a "
             "graph-to-graph boundary's excess over a kernel boundary, torch's Python replay() "
             "path and the peers' start skew at the first replay (spread over 10 replays), none "
             "with a published figure. Session 15: at one token in one tray both ops sit 4.0-4.6 "
             "us (EP2) above the model, a per-op quantity in both phases, which share only the "
             "launch, the kernel boundary and the flag barrier; that barrier is priced with an "
             "8x B200 server's NCCL floor (NCCL #1940), carried to GB200 NVL72's fabric-handle "
             "memory; an NVIDIA engineer reports NCCL's symmetric all-reduce up to 1 KB on one "
             "GB200 tray (4 GPUs) 'routinely under 8us', best 5.18 us on unmerged code "
             "(NVIDIA/nccl-tests issue #333): the size of this residual; not applied (the floor "
             "is one Parameter per architecture, B200 and GB200 alike; lead's decision)")
_AIC_BATCH = (_AIC_TRAY + "; at 128-2048 tokens one-token blocks outnumber the SMs (2048 blocks, "
              "148 SMs) and every block's slot atomic hits the same ep counters, neither of which "
              "the model charges")
_AIC_WIDE = ("NVIDIA's collector data grow with EP where the model barely does: at 16 tokens the "
             "combine takes 27.6 / 28.0 / 36.8 us at EP 8 / 16 / 32 (model 22.0 / 22.3 / 22.3), "
             "at 128 tokens 37.4 / 40.8 / 47.8 (model 24.7 / 26.0 / 26.6), the dispatch 19.0 / "
             "19.3 / 21.2 and 22.0 / 23.6 / 25.6 (model 13.1 / 13.1 / 13.1 and 17.4 / 17.8 / "
             "18.0); at 2048 tokens all four rows are within 25%. The model's growth is all in its "
             "scale-up transfer (the busiest link's bytes); its fixed part is the same at EP 8-32 "
             "(the barrier's per-peer loop is one warp pass up to 32 peers, ceil(ep / 32)); no "
             "term of the size of the combine's 9-10 us EP8 -> EP32 growth at 16-128 tokens (the "
             "dispatch's 2-4 us) is located (the trays crossed grow 2 -> 8; _AIC_TRAY's cross-tray "
             "round trip is unpublished). Session 35: the collector at aiconfigurator's newest "
             "snapshot (095f58a5) times as before (rank 0, 10 replays of one op after a "
             "synchronize, no CUPTI) and no newer one-sided data exists; blog18's CUPTI spans of "
             "the same dispatch kernel grow far less over the model (1 token +1.83 / +1.73 / "
             "+2.73 us at EP 8 / 16 / 32), so the dispatch's growth is the collector's harness "
             "more than the kernel; the one per-peer step the dispatch has and the combine lacks, "
             "its release fence over counter stores to every peer, could hold at most blog18's "
             "growth (docs/sources.md s.7)")
_AIC_WIDE_ONE = (_AIC_WIDE + ". At 1 token (routing 'grouped': the 8 ranks of one group receive "
                 "every rank's token) the dispatch takes 18.3 / 19.5 / 21.0 us at EP 8 / 16 / 32 "
                 "(model 12.9 / 13.0 / 13.0) and the combine 25.3 / 26.6 / 32.4 us (model 22.0 / "
                 "22.3 / 22.3): the model's one-token growth is the busiest token's eighth remote "
                 "copy (a rank outside the group reaches 8 peers); the measured growth at EP32 is "
                 "not located")
_AIC_LL = ("DeepEP low-latency over NVLink on one HGX H100 / H200 node, NVIDIA's collector "
           "(DeepEP's own test, bench_kineto kernel means, no masked route; session 35), priced "
           "since session 36 as the build it ran (deepep-low-latency@d28bd67: one token a "
           "dispatch block up to 128 tokens, the combine's TMA send and receive): at 1 token the "
           "kernels take 13.2 / 14.4 us (H100) and 11.9 / 12.6 us (H200) against the model's "
           "5.0 / 6.6 us (its fixed part, 4.8 us; the combine's TMA steps 1.5 us). Over the "
           "collector's whole H100 sweep (1-1024 tokens) the dispatch stays 7.6-9.5 us above the "
           "model up to 128 tokens (11.1 / 15.5 / 27.1 us at 256 / 512 / 1024): a per-kernel "
           "constant, not a per-link rate (with d28bd67's grid the 16 -> 128-token increment is "
           "within 13% of the model's on every chip); the combine's excess grows with the tokens, "
           "7.6-8.8 us at 1-8 tokens, 22.6 at 128, 168 at 1024 (slope 0.450 against 0.309 us a "
           "token, H200 0.463 against 0.298): less the model's receive copy, 13.6 GB/s of remote "
           "bytes per NVLink4 link (12.8 on H200) against the 20.6 the model takes. That excess is "
           "Hopper's, not the TMA path's (session 36: the TMA send and receive serialise no token "
           "at <= 128 tokens; the same build's 16 -> 128-token combine increment is 1.06 / 1.09x "
           "the model's on B200 / B300, 1.35 / 1.50x on H100 / H200), and every Hopper DeepEP "
           "low-latency NVLink row, warp copy or TMA, moves its bytes at ~0.6-0.75 of that rate. "
           "No sourced term for the ~8 us constant: not located. It is device time: the "
           "harness (DeepEP's bench_kineto) queues the 30 timed calls behind an 8192^3 FP32 "
           "matmul (>= 16 ms on H100) and an all-reduce, so the kernels run back to back, paced "
           "by the GPU, not by the host's call path (session 38). Candidates with no published "
           "figure: the cooperative launch and grid sync between the send and receive parts, "
           "the gaps between kernels as they differ by rank, and the receive part's polls of "
           "its 256 (local expert, source rank) count slots")
_AIC_LL_BW = ("DeepEP low-latency over NVLink on Blackwell, NVIDIA's collector (one HGX B200 / B300 "
              "node, EP8; one GB200 / GB300 tray, EP4; session 35, lead's decisions; priced as "
              "the build it ran, deepep-low-latency@d28bd67, since session 36): the kernels sit a "
              "near constant above the model at 1, 16 and 128 tokens, 13.7-15.9 us on B200 "
              "(22.1 / 22.1 us at 1 token against 6.2 / 8.3), 13.6-16.7 on B300, 9.6-12.8 on "
              "GB200 (16.6 / 18.1 against 6.2 / 8.3) and 8.9-13.1 on GB300, more than Hopper's "
              "~8 us (_AIC_LL) on the faster chips; the 16 -> 128-token increments are within "
              "1-11% of the model's (dispatch) and 6-29% (combine), and the B200 sweep's 512 -> "
              "1024-token slope, 0.112 / 0.164 us a token, is within 7% of the model's on "
              "hgx-b200 (0.120 / 0.155): a constant, not a per-link rate. No located term (the "
              "candidates of _AIC_LL)")
KNOWN_MISSES = {
    # deepep-i493-h200-ep16-normal-dispatch, -dispatch-bf16 and -combine left in session 32
    # (138.7% / 126.3% / 108.5% -> 0.3% / 8.1% / 11.2%): a84a248's IBRC path, one proxy queue
    # pair per peer carrying each RDMA chunk's write and its tail atomic, at each row's own RDMA
    # chunk (docs/sources.md s.7, session 32)
    **{f"ncclep-h100-ep8-ll-{ph}": _NCCLEP for ph in ("dispatch", "combine")},
    **{f"pplx-h100-ep{ep}-bs1-{'nvlink' if ep == 8 else 'ibgda'}-{ph}": _PPLX_SMALL
       for ep in (8, 16, 32, 64, 128) for ph in ("dispatch", "combine")},
    # pplx-h100-ep8-bs128-nvlink-combine left in session 23 (28.5% -> 22.0%: the copy loop's
    # scheduled cycles, its pointer reloads after each fence, counted from the compiled kernel)
    "pplx-h100-ep8-bs128-nvlink-dispatch": _PPLX_NVLINK,
    **{f"pplx-h100-ep{ep}-bs128-ibgda-{ph}": _PPLX_IBGDA
       for ep in (16, 32, 64, 128) for ph in ("dispatch", "combine")},
    # trtllm-ep32-bs16-dispatch left in session 22 (25.1% -> 23.5%: the dispatch's expert-id
    # loads and counter-base reloads of its slot claims, counted from the compiled kernel);
    # trtllm-ep16-bs1-dispatch left in session 25 (28.2% -> 24.0%: the issue cycles of the slot
    # claims beyond their loads, claim_cycles, counted from the compiled kernel), then
    # trtllm-ep32-bs1-dispatch (30.5% -> 22.7%) and trtllm-ep64-bs16-dispatch (26.6% -> 19.5%):
    # the payload loop's issue cycles beyond its loads (payload_cycles), counted the same way
    **{f"trtllm-ep{ep}-bs{bs}-{ph}": _FLOOR
       for ep in (16, 32, 64) for bs in (1, 16) for ph in ("dispatch", "combine")
       if (ep, bs, ph) not in ((16, 16, "dispatch"), (32, 16, "dispatch"), (16, 1, "dispatch"),
                               (32, 1, "dispatch"), (64, 16, "dispatch"),
                               (64, 1, "dispatch"))},
    "trtllm-ep64-bs1-dispatch": (
        _FLOOR + ". Session 32: blog18's EP64 dispatch is not monotone in the batch, 27.8 / 24.8 / "
        "29.1 / 20.4 / 20.6 us at 1 / 2 / 4 / 8 / 16 tokens (the model 17.4 / 17.7 / 17.7 / 17.7 / "
        "18.2; EP 8-32 stay at 17.6-19.8 us over 1-16 tokens): the 1-4 token excess falls by "
        "8.7 us from 4 to 8 tokens, which no per-token or per-peer step of the kernel does; at 8 "
        "tokens the same table sits 15% above the model"),
    # trtllm-ep64-bs128-dispatch left in session 22 (26.2% -> 24.97%: the dispatch's slot claims
    # and payload sizes, counted from the compiled kernel)
    **{f"trtllm-ep{ep}-bs128-{ph}": _FLOOR
       for ep in (16, 32, 64) for ph in ("dispatch", "combine")
       if (ep, ph) not in ((16, "dispatch"), (32, "dispatch"), (64, "dispatch"))},
    "deepep-pr173-h20-ep8-ll-nvlink-dispatch": _LL_NVLINK,
    **{f"aic-deepep-{chip}-ep8-ll-bs{bs}-{ph}": _AIC_LL
       for chip in ("h100", "h200") for bs in (1, 16, 128) for ph in ("dispatch", "combine")},
    **{f"aic-deepep-{chip}-ep{ep}-ll-bs{bs}-{ph}": _AIC_LL_BW
       for chip, ep in (("b200", 8), ("gb200", 4), ("b300", 8), ("gb300", 4))
       for bs in (1, 16, 128) for ph in ("dispatch", "combine")},
    "deepep-pr173-h20-ep8-ll-nvlink-combine": _LL_NVLINK,
    "fi3697-trtllm-ep32-bs1-nvfp4-dispatch": _FLOOR,
    "fi3697-trtllm-ep32-bs128-nvfp4-dispatch": _FLOOR,
    # fi3697-trtllm-ep32-bs2048-nvfp4-dispatch left in session 25 (25.3% -> 24.7%: the slot
    # claims' issue cycles, claim_cycles, counted from the compiled kernel)
    # aic-trtllm-ep2-bs1-nvfp4-combine left in session 24 (27.6% -> 24.0%: the pulled rounds'
    # issue cycles beyond their loads, counted from the compiled kernel)
    # aic-trtllm-ep4-bs1-nvfp4-combine left in session 26 (26.2% -> 24.8%: round 1's and its
    # set-up's issue cycles and the output row's L1.5 fetch, counted from the compiled kernel) and
    # is back in session 27 (24.8% -> 25.2%, moved away by a count: a later round's issue cycles
    # are the least over the patterns of 4 or more valid slots, 214, where session 24 charged 242,
    # the least of four patterns, which exceeded the walk for 22 of the 128)
    **{f"aic-trtllm-ep{ep}-bs{bs}-nvfp4-{ph}": (_AIC_TRAY if bs <= 16 else _AIC_BATCH)
       for ep in (2, 4, 8) for bs in (1, 16, 128, 2048) for ph in ("dispatch", "combine")
       if (ep, bs, ph) not in ((2, 2048, "combine"), (4, 2048, "dispatch"),
                               (4, 2048, "combine"), (8, 2048, "dispatch"), (8, 2048, "combine"),
                               (8, 1, "combine"), (2, 1, "combine"))},
    **{f"aic-trtllm-ep{ep}-bs{bs}-nvfp4-{ph}": _AIC_WIDE
       for ep in (16, 32) for bs in (16, 128) for ph in ("dispatch", "combine")},
    # the 1-token rows carried in session 33 (routing 'grouped'); EP16's combine is within 25%
    **{f"aic-trtllm-ep{ep}-bs1-nvfp4-{ph}": _AIC_WIDE_ONE
       for ep, ph in ((16, "dispatch"), (32, "dispatch"), (32, "combine"))},
    # fi3697-trtllm-ep32-bs1-bf16-combine left in session 27 (27.0% -> 24.7%: the rounds' issue
    # cycles per valid-slot count, round_cycles, counted from the compiled kernel)
    # session 23: 4.1% -> 27.2% (17.24 -> 14.12 us), moved away by a count: at one token the
    # perfect router puts slot 0 on the own rank, and 1.3's FP8 round waits for slot 0 alone
    # before slots 1-3 (analysis._moe_exchange._round_wait): an L2 hit, not a peer trip
    # fi3697-trtllm-ep32-bs1-fp8-combine left in session 26 (25.8% -> 24.8%: the later round's
    # issue cycles beyond its loads in TensorRT-LLM 1.3's FP8 loop, counted from the compiled
    # kernel); its one-token evidence (own slot 0 waited as an L2 hit, the 1 -> 2 token step of
    # the same thread) is in docs/sources.md (session 23)
    "deepep-v2-b200-ep8-24sm-dispatch": (
        "DeepEP V2 with its fewest SMs (24; the 64-SM run of the same table is within 13%). "
        "Not an SM-rate cap by DeepEP's own per-SM model (deep_ep/buffers/elastic.py "
        "get_theoretical_num_sms: 50 GB/s of writes and 200 GB/s of reads per SM, SM90 "
        "defaults): 24 SMs issue 1200 GB/s, 1.3x the NVLink bound it assumes (810 GB/s x 8/7), "
        "which is why it picks 24 as the minimum; the 643 vs 726 GB/s has no sourced cause"),
}
