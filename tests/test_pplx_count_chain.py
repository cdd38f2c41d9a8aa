"""pplx's dispatch count warp as a serial chain (session 16, pplx).

pplx-kernels 7af3059's NVSHMEM dispatch (csrc/all_to_all/internode_scatter.cu) sends each
expert's token count from lane 0 of the last warp of every block, experts split across the
blocks (block b takes experts b, b + gridDim, ...), one nvshmemx_signal_op after another; the
grid is min(max(ceil(E / 10), tokens x k), 132) blocks. A signal to a rank across the network
is one NVSHMEM 3.2.5 IBGDA post (2 L2 atomics and 6 L2 round trips always on its dependent
path, read in the release's SASS; session 16 had 4 and 2), one to a rank in the sender's node a
store. The reference below walks the kernel's own loops for
every sender rank; the model's walk (``ExchangeKernel.count_walk``) keeps only the worst.
"""

import dataclasses
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fabric
import topologies
from analysis import moe_exchange
from fabric import EXCHANGE_LATENCY, exchange_kernel

_WARPS, _MOST_BLOCKS = 10, 132          # internode_scatter.cu: NUM_WARPS, the 132u cap


def _count_walk_brute(experts, k, tokens, ep, ranks_per_node):
    """Every sender rank, every block, as the scatter kernel's loops run them: the worst
    block's (remote signals, experts walked)."""
    blocks = min(max(math.ceil(experts / _WARPS), tokens * k), _MOST_BLOCKS)
    local_experts = experts // ep
    worst = (0, 0)
    for rank in range(ep):
        for block in range(blocks):
            walked = remote = 0
            dst_expert = block                       # blockIdx.x * dpSize + dpRank, dpSize 1
            while dst_expert < experts:
                dst_rank = dst_expert // local_experts
                walked += 1
                if dst_rank // ranks_per_node != rank // ranks_per_node:
                    remote += 1
                dst_expert += blocks                 # gridDim.x * dpSize
            worst = max(worst, (remote, walked))
    return worst


@settings(max_examples=40, deadline=None)
@given(ep_log=st.integers(0, 6), node_log=st.integers(0, 6), per_rank=st.integers(1, 8),
       k=st.integers(1, 8), tokens=st.integers(1, 200))
def test_count_walk_equals_the_kernels_loops(ep_log, node_log, per_rank, k, tokens):
    ep = 2 ** ep_log
    ranks_per_node = 2 ** min(node_log, ep_log)
    experts = ep * per_rank
    domains = [r // ranks_per_node for r in range(ep)]
    got = exchange_kernel("pplx").count_walk(experts, k, tokens, domains)
    assert got == _count_walk_brute(experts, k, tokens, ep, ranks_per_node)


def _h100(nodes):
    return topologies.build(f"rail:servers={nodes},gpus=8,links=18,nic=ib-ndr,chip=h100")


def _post_and_pass():
    """One IBGDA post's unconditional dependent steps, as counted (session 17) in the SASS of
    NVSHMEM 3.2.5's libnvshmem_device.a (sm_90): qp_group_switches, qp_type, the resv_head
    atomicAdd, the wrapped ring's CQ record and cons_idx, the fence after the WQE stores (an
    L2 round trip), the ready_head CAS and the resv_head read; session 24: three more L2 trips
    (dev_idx, nwqes, the CQ record's address), qp_type an L1 hit after dev_idx (review S24-R2),
    and the 1,789 cycles its code schedules outside them (amo_nonfetch's SASS)."""
    lat = EXCHANGE_LATENCY["hopper"]
    post = (2 * lat["l2_atomic"].value + 8 * lat["l2_hit"].value + lat["l1_hit"].value
            + 1789 * lat["cycle"].value)
    return post, lat["l2_hit"].value


def _put_rounds(nbytes=2 * 7168):
    """A put to a load/store peer (session 18): NVSHMEM's warp memcpy, one dependent L2 load of
    the staged copy per 32 lanes x 16 B (gatherKernel's SASS), before the copy's fence; before
    each round's load, the 35 cycles its compiled loop schedules (session 22)."""
    lat = EXCHANGE_LATENCY["hopper"]
    return math.ceil(nbytes / 512) * (lat["l2_hit"].value + 35 * lat["cycle"].value)


def _ring():
    """A doorbell ring (session 18): NVSHMEM 3.2.5's ibgda_post_send, whoever runs it (the
    poster, or a later reserver on the queue pair after this post's submit): the lock CAS,
    the atomicMax on prod_idx, a fence, the doorbell record's pointer, a fence, the BlueFlame
    pointer. Once on a chain that posts: its last post departs no earlier than one ring."""
    lat = EXCHANGE_LATENCY["hopper"]
    return 2 * lat["l2_atomic"].value + 4 * lat["l2_hit"].value


def _copy_recount():
    """Session 23, gatherKernel<bf16,8,true,true>'s copy loop outside its loads and loops
    (nvcc 13.0 sm_90a, stall counts): every copy 206 cycles (0x0a50-0x0c70, 0x0cf0-0x0d90,
    0x0e10-0x1020) and the LDC of dpSize (a constant-cache hit); each later copy 77 cycles more
    (its loop back, 0x2320-0x23e0 and 0x0a10) and the LDC of sourceExpert's base; its P2P
    pointer an L2 load, since the previous copy's fence (or the first touch) left nothing in L1
    (CCTL.IVALL); a copy to a load/store peer 208 cycles of its put path and signal (0x1050-0x1280,
    0x1380-0x13a0, 0x1e30-0x1f60, 0x2080-0x20d0) and the signal's peer pointer again (L2).
    Returns (the first copy's, a later copy's, a fenced copy's) extra seconds beyond the
    staging loads and loops counted before."""
    lat = EXCHANGE_LATENCY["hopper"]
    cyc, const, load = lat["cycle"].value, lat["const_l1"].value, lat["l2_hit"].value
    return (206 * cyc + const + load, (206 + 77) * cyc + 2 * const + load, 208 * cyc + load)


def _send_token():
    """Session 23, scatterKernel's sending warp on its own token in one node, outside its loads
    and loops (0x0bf0-0x20d0 along its path): 590 cycles and two LDCs of NVSHMEM's peer table."""
    lat = EXCHANGE_LATENCY["hopper"]
    return 590 * lat["cycle"].value + 2 * lat["const_l1"].value


def test_pplx_dispatch_chain_is_the_count_warps_walk():
    """DeepSeek-V3 (top-8 of 256) at one token per rank: 26 blocks, 10 experts per count
    warp; over 2 nodes the worst warp signals 5 of them across the network, over 16 nodes
    all 10; inside one node none. The first index load is an L2 load (later passes re-read
    the same indices from L1: not counted). The other warps send tokens meanwhile: the
    chain runs between the phase's copies (interleaved), not before or after them."""
    post, load = _post_and_pass()
    l1 = EXCHANGE_LATENCY["hopper"]["l1_hit"].value
    # the grid sync after the receive loop's waits (drain, session 18): thread 0's fence (an
    # L2 round trip), the barrier atomicAdd, the polled load that sees the flip
    sync = 2 * load + EXCHANGE_LATENCY["hopper"]["l2_atomic"].value
    # session 22: between a slot's two loads, the 74 cycles the compiled walk schedules
    cyc = EXCHANGE_LATENCY["hopper"]["cycle"].value
    const = EXCHANGE_LATENCY["hopper"]["const_l1"].value
    walk_cycles = 74 * 255 * cyc
    for nodes, remote in ((1, 0), (2, 5), (16, 10)):
        # session 23: the walk leaves 256 / ep - 1 local experts by the path that wraps to the
        # next expert, 35 cycles longer than a slot's (scatterKernel 0x3ff0-0x40e0)
        wraps = 35 * (256 // (8 * nodes) - 1) * cyc
        r = moe_exchange(_h100(nodes), "deepseek-v3", 1, 8 * nodes, kernel="pplx",
                         dispatch_bytes=1 + 4 / 128, combine_bytes=2, routing="uniform")
        # + the receive walk (drain, added): 256 slots (first an L2 load, 255 x 2 L1 hits),
        # 1 token: its slot check (L1), its copy's 2 rounds of 320 x 16 B (L2), its index (L1)
        # (session 20; session 17 had one L2 load per token); before the grid sync, the last
        # slot's wait ends in NVSHMEM's syncapi fence (an L2 round trip, session 21)
        # session 21: the first load of each further 32-B sector of the uint32 slots (31 of
        # the 255 slots after the first) goes to L2, not L1
        walk = load + sync + load + (255 + 224) * l1 + 31 * load + walk_cycles + (2 * load + 2 * l1)
        walk += 83 * cyc                 # the token's copy round beyond the first (session 22)
        walk += wraps
        # session 23: the receiving block's token loop outside its loads and later rounds,
        # 277 cycles and the LDC of numTokensPerDP's base per received token
        token = 277 * cyc + EXCHANGE_LATENCY["hopper"]["const_l1"].value
        walk += token
        if nodes > 1:
            # + after the last count's arrival (session 21): its wait's fence, the count's
            # re-read and the token poll's first load
            # session 24: the count warp's own loop for each of its 10 experts (session 25:
            # 368 cycles and its two waited peer-table LDCs, const_l1 each; s24 379), and
            # after each post but the last its next pass re-reads the indices from L2
            want = (load + remote * post + 10 * (368 * cyc + 2 * const) + (remote - 1) * load
                    + _ring() + 3 * load)
        else:
            # one node: the sending warps' chain is the larger (session 18): the staged token's
            # loads (HBM; 288 threads x 16 B per dependent round, the next round's load after
            # the store that waits for this one's: ceil(7396 / 4608) = 2 rounds, session 19),
            # the expert id, the put's P2P pointer, then ceil(7396 / 512) = 15 rounds of the
            # put's warp copy
            hbm = EXCHANGE_LATENCY["hopper"]["hbm_load"].value
            # session 22: the staging loop's 89 scheduled cycles before its second round;
            # session 23: after the put's fence the signal's peer pointer again, from L2 (the
            # fence's CCTL.IVALL invalidated L1; scatterKernel 0x1f80-0x20b0)
            want = 2 * hbm + 2 * load + _put_rounds(7396) + 89 * cyc + load
            want += _send_token()            # the own token's path outside them (session 23)
        assert abs(r.dispatch_phase.interleaved - want) < 1e-15
        assert abs(r.dispatch_phase.chain - walk) < 1e-15
    # 128 tokens: 132 blocks, at most 2 experts per warp, at 2 nodes one across the network;
    # the receiving block with the most tokens copies ceil(1024 / 132) = 8
    r = moe_exchange(_h100(2), "deepseek-v3", 128, 16, kernel="pplx",
                     dispatch_bytes=1 + 4 / 128, combine_bytes=2, routing="uniform")
    walk = load + sync + load + (255 + 224) * l1 + 31 * load + walk_cycles + 8 * (2 * load + 2 * l1)
    walk += 8 * 83 * cyc + 35 * 15 * cyc + 8 * token
    assert abs(r.dispatch_phase.interleaved
               - (load + post + 2 * (368 * cyc + 2 * const) + _ring() + 3 * load)) < 1e-15
    assert abs(r.dispatch_phase.chain - walk) < 1e-15


def _send_walk_brute(tokens, experts=256, k=8):
    """scatterKernel's send loop (7af3059 l.111-161) as it runs in every block: warp 0 counts
    every token into tokenIndex before the block's next token of its own can go; the most
    tokens any block walks before sending its last one."""
    blocks = min(max(math.ceil(experts / _WARPS), tokens * k), _MOST_BLOCKS)
    worst = 0
    for block in range(blocks):
        counted = set()                      # the tokens warp 0 has counted into tokenIndex
        for i in range(tokens):
            if i % blocks == block:          # the block's token: sent after the walk so far
                worst = max(worst, len(counted))
            counted.add(i)
    return worst


def test_one_node_dispatch_walks_the_earlier_tokens_first():
    """Session 19: in one node the block holding the last token sends it only after warp 0
    has counted every earlier token and then staged it (2 dependent HBM rounds); across the
    network the count warp's chain is the one counted and the walk is not added. Session 23:
    each walked token is its index load (an L1 hit), the loop's LDC of numExpertsPerToken (a
    constant-cache hit), the LDS of the token's counter, and the 202 cycles the compiled loop
    schedules beyond them (scatterKernel 0x0bf0-0x2590); session 19 had the L1 hit only."""
    lat = EXCHANGE_LATENCY["hopper"]
    l1, load, hbm = lat["l1_hit"].value, lat["l2_hit"].value, lat["hbm_load"].value
    per_token = l1 + lat["const_l1"].value + lat["shared_load"].value + 202 * lat["cycle"].value
    kern = exchange_kernel("pplx")
    for tokens in (1, 2, 16, 128, 300):
        assert kern.send_walk(tokens) == _send_walk_brute(tokens) == tokens - 1
        r = moe_exchange(_h100(1), "deepseek-v3", tokens, 8, kernel="pplx",
                         dispatch_bytes=1 + 4 / 128, combine_bytes=2, routing="uniform")
        want = (tokens - 1) * per_token + 2 * hbm + 2 * load + _put_rounds(7396) + 89 * lat["cycle"].value
        want += load                     # the signal's pointer after the fence (session 23)
        want += _send_token()            # the own token's path outside its loads (session 23)
        assert abs(r.dispatch_phase.interleaved - want) < 1e-14
    for loadstore, added in ((True, 15 * per_token), (False, 0.0)):
        kw = {"remote_signals": 3, "loadstore": loadstore, "put_rounds": 15, "stage_rounds": 1,
              "interleaved": True}
        walked = kern.chain_latency(0, "hopper", 0, 0, walked_tokens=15, **kw)[0]
        assert abs(walked - kern.chain_latency(0, "hopper", 0, 0, **kw)[0] - added) < 1e-15


def test_pplx_interleaved_chain_is_a_max_with_the_links():
    """Lead's rule (session 17, review S17-R1): a block's serial work between its copies
    overlaps the other blocks' copies, so the transfer is max(links, that chain), not their
    sum; switching the interleaved chain off leaves the links' time (1 token: the chain
    wins; 128 tokens: the links win and the chain adds nothing)."""
    import dataclasses
    kw = {"dispatch_bytes": 1 + 4 / 128, "combine_bytes": 2, "routing": "uniform"}
    kern = exchange_kernel("pplx")
    # off: no interleaved chain, and no per-copy fences (they run between the copies too)
    off = dataclasses.replace(kern, interleaved_chain=((), ()), release_fence=(True, False))
    for tokens in (1, 128):
        r = moe_exchange(_h100(4), "deepseek-v3", tokens, 32, kernel=kern, **kw)
        r0 = moe_exchange(_h100(4), "deepseek-v3", tokens, 32, kernel=off, **kw)
        for ph, ph0 in ((r.dispatch_phase, r0.dispatch_phase),
                        (r.combine_phase, r0.combine_phase)):
            assert ph.interleaved > 0 and ph0.interleaved == 0.0
            assert ph.fixed == ph0.fixed and ph.local_copy == ph0.local_copy
            assert abs(ph.transfer - max(ph0.transfer, ph.interleaved)) < 1e-15
            assert abs(ph.time - (ph.fixed + ph.transfer + ph.local_copy)) < 1e-15
            if tokens == 1:
                assert ph.bottleneck == "serial chain"
    names = {p.name for p in r.parameters}
    assert {"pplx.count_grid", "pplx.chain", "pplx.interleaved_chain",
            "exchange.latency.hopper.l2_atomic", "exchange.latency.hopper.l2_hit"} <= names


def test_count_grid_is_validated():
    import dataclasses

    import pytest
    k = exchange_kernel("pplx")
    for bad in ((10,), (0, 132)):
        with pytest.raises(ValueError, match="count_grid"):
            dataclasses.replace(k, count_grid=bad)
    for bad in ((10, True), [10, 132], "10x132", None):   # session 38: a kind, a TypeError
        with pytest.raises(TypeError, match="count_grid"):
            dataclasses.replace(k, count_grid=bad)
    with pytest.raises(ValueError, match="needs count_grid"):
        dataclasses.replace(k, count_grid=())
    assert exchange_kernel("deepep-low-latency").count_walk(256, 8, 1, [0, 1]) == (0, 0)


def _serial_copies_brute(copies, blocks):
    """gatherKernel's send loop: block b takes copies b, b + gridDim, ... below ``copies``."""
    return max(len(range(b, copies, blocks)) for b in range(blocks))


@settings(max_examples=40, deadline=None)
@given(copies=st.integers(0, 5000), blocks=st.integers(1, 200))
def test_serial_copies_equals_the_gather_loop(copies, blocks):
    from fabric._exchange import serial_copies
    assert serial_copies(copies, blocks) == _serial_copies_brute(copies, blocks)


def test_pplx_combine_chain_is_the_blocks_serial_sends():
    """The combine's 132 blocks send tokens x k received copies (expected) one after
    another: 8 per block at 128 tokens, 1 at one token; each an L2 load of sourceExpert and
    an HBM load of the expert output, and across the network one IBGDA post for its signal
    (NVLink peers' included: the job is not load/store-connected). The first copy's loads
    come before the phase's first byte (added, chain); the rest runs between the copies
    (interleaved, with the per-copy fences)."""
    from analysis._moe_exchange import _copy_fences
    post, load = _post_and_pass()
    hbm = EXCHANGE_LATENCY["hopper"]["hbm_load"].value
    trip = moe_exchange(_h100(1), "deepseek-v3", 1, 8, kernel="pplx", dispatch_bytes=1 + 4 / 128,
                        combine_bytes=2, routing="uniform").dispatch_phase.fence
    l1 = EXCHANGE_LATENCY["hopper"]["l1_hit"].value
    # session 22: each (pass, copy) of the receive sum also pays its loop's 118 scheduled cycles
    dep = 118 * EXCHANGE_LATENCY["hopper"]["cycle"].value
    # session 23: each of its 4 passes (7168 / 2048) its set-up, stores and loop back: 150
    passes = 150 * EXCHANGE_LATENCY["hopper"]["cycle"].value
    for nodes, tokens, copies in ((1, 128, 8), (2, 128, 8), (16, 128, 8), (1, 1, 1), (2, 1, 1)):
        r = moe_exchange(_h100(nodes), "deepseek-v3", tokens, 8 * nodes, kernel="pplx",
                         dispatch_bytes=1 + 4 / 128, combine_bytes=2, routing="uniform")
        posted = copies + 1 if nodes > 1 else 0      # + block 0's gatherSync signal
        fences = _copy_fences(tokens * 8, 132, 7 / (8 * nodes),
                              trip + _put_rounds() + _copy_recount()[2],
                              post if nodes > 1 else 0.0)
        # the first copy's loads (fill) and the receive sum (drain: 1 token per block, 4
        # passes of 2048 elements x 8 copies) add; the rest runs between the copies
        # each copy (session 18): sourceExpert, the source index/group/offset (one L2 trip),
        # 4 staging rounds of 4096 B (HBM), the P2P pointer (L1)
        # + the receive part's waits (session 21): the fence after the k-signal poll, block 0's
        # sync-flag load and its fence after the reduce
        # + the staging loop's 35 scheduled cycles before each round beyond the first (s22)
        # + session 23: the copy loop's cycles, its LDCs, the P2P pointer from L2
        first, later, fenced = _copy_recount()
        each = 2 * load + 4 * hbm + 3 * 35 * EXCHANGE_LATENCY["hopper"]["cycle"].value
        assert abs(r.combine_phase.chain - (each + first + 32 * (l1 + load + dep) + 4 * passes + 3 * load)) < 1e-14
        want = (copies - 1) * (each + later) + posted * post + fences
        want += _ring() if nodes > 1 else 0.0
        assert abs(r.combine_phase.interleaved - want) < 1e-15
        assert r.combine_phase.fence == 0.0
    # data left in L2 (a decode step): the expert output's load is an L2 hit
    r = moe_exchange(_h100(2), "deepseek-v3", 128, 16, kernel="pplx", dispatch_bytes=1 + 4 / 128,
                     combine_bytes=2, routing="uniform", l2_flushed=False)
    first, later, fenced = _copy_recount()
    fences = _copy_fences(1024, 132, 7 / 16, trip + _put_rounds() + fenced, post)
    each = 6 * load + 3 * 35 * EXCHANGE_LATENCY["hopper"]["cycle"].value  # HBM as L2
    assert abs(r.combine_phase.chain - (each + first + 32 * (l1 + load + dep) + 4 * passes + 3 * load)) < 1e-14
    assert abs(r.combine_phase.interleaved
               - (7 * (each + later) + 9 * post + fences + _ring())) < 1e-14


def test_combine_blocks_is_validated():
    import dataclasses

    import pytest
    k = exchange_kernel("pplx")
    for bad in (-1, True, 1.5):     # a wrong kind is a TypeError (session 31)
        with pytest.raises(ValueError if bad == -1 else TypeError, match="combine_blocks"):
            dataclasses.replace(k, combine_blocks=bad)
    with pytest.raises(ValueError, match="needs combine_blocks"):
        dataclasses.replace(k, combine_blocks=0)


def _gather_posts_brute(copies, blocks, ep, ranks_per_node, warps=8):
    """gatherKernel's send part for every sender rank and block: warp w of block b signals rank
    b x warps + w first (a NIC post when that rank is on another node), then the block's copies
    b, b + blocks, ... each post their signal (the job spans nodes): the worst block's posts."""
    nodes = -(-ep // ranks_per_node)
    worst = 0
    for rank in range(ep):
        for b in range(blocks):
            targets = range(b * warps, min(b * warps + warps, ep))
            sync = any(t // ranks_per_node != rank // ranks_per_node for t in targets)
            own = len(range(b, copies, blocks)) if nodes > 1 else 0
            worst = max(worst, own + (1 if sync else 0))
    return worst


@settings(max_examples=40, deadline=None)
@given(ep_log=st.integers(1, 6), node_log=st.integers(0, 6), copies=st.integers(1, 1200),
       blocks=st.integers(1, 140))
def test_combine_posts_equals_the_gather_loops(ep_log, node_log, copies, blocks):
    ep = 2 ** ep_log
    ranks_per_node = 2 ** min(node_log, ep_log)
    domains = [r // ranks_per_node for r in range(ep)]
    got = exchange_kernel("pplx").combine_posts(copies, blocks, domains)
    assert got == _gather_posts_brute(copies, blocks, ep, ranks_per_node)


def test_single_node_combine_fences_every_copy():
    """One node (EP8): each copy's put-with-signal is a warp copy, lane 0's
    __threadfence_system, then the signal, and the block's next copy waits for it: at 128
    tokens the slowest of the 100 blocks with 8 copies sends all 8 to other ranks (expected
    largest of Binomial(8, 7/8) over 100 blocks), 8 peer round trips where the dispatch (one
    token per warp) has one. At one token: one copy per block, one fence."""
    from analysis._moe_exchange import expected_max
    lat = EXCHANGE_LATENCY["hopper"]
    copy = (2 * lat["l2_hit"].value + 4 * lat["hbm_load"].value
            + 3 * 35 * lat["cycle"].value          # the staging rounds' cycles (session 22)
            + _copy_recount()[1])                   # the copy loop's own (session 23)
    fenced = _copy_recount()[2]
    for tokens, most, full in ((128, 8, 100), (1, 1, 8)):
        r = moe_exchange(_h100(1), "deepseek-v3", tokens, 8, kernel="pplx",
                         dispatch_bytes=1 + 4 / 128, combine_bytes=2, routing="uniform")
        trip = r.dispatch_phase.fence
        assert trip > 0
        pmf = [math.comb(most, j) * (7 / 8) ** j * (1 / 8) ** (most - j) for j in range(most + 1)]
        fences = r.combine_phase.interleaved - (most - 1) * copy     # no posts in one node
        # each copy to a peer: the put's 28 warp-copy rounds (14336 B / 512 B), then its fence
        assert abs(fences - (trip + _put_rounds() + fenced) * expected_max(pmf, full)) < 1e-14
    assert fences <= trip + _put_rounds() + fenced
    r = moe_exchange(_h100(1), "deepseek-v3", 128, 8, kernel="pplx",
                     dispatch_bytes=1 + 4 / 128, combine_bytes=2, routing="uniform")
    assert (r.combine_phase.interleaved - 7 * copy
            > 7.99 * (r.dispatch_phase.fence + _put_rounds() + fenced))


def _copy_fences_brute(copies, blocks, p, trip, lead):
    """Every outcome of every copy (each to a load/store peer with probability p,
    independently), block b holding copies b, b + blocks, ...: the expected slowest block,
    block 0 carrying ``lead`` more."""
    import itertools
    want = 0.0
    for outcome in itertools.product((0, 1), repeat=copies):
        prob = math.prod(p if x else 1 - p for x in outcome)
        fences = [sum(outcome[b::blocks]) for b in range(min(blocks, copies))]
        slowest = max([lead + trip * fences[0]] + [trip * f for f in fences[1:]])
        want += prob * (slowest - lead)
    return want


@settings(max_examples=40, deadline=None)
@given(copies=st.integers(1, 12), blocks=st.integers(1, 12), p=st.floats(0.05, 1.0),
       lead=st.sampled_from([0.0, 0.5, 1.0, 2.5]))
def test_copy_fences_equals_enumerating_the_blocks(copies, blocks, p, lead):
    """Every block counts, those holding one copy fewer too (session 17: one more copy never
    lowers the time)."""
    from analysis._moe_exchange import _copy_fences
    got = _copy_fences(copies, blocks, p, 1.0, lead)
    assert abs(got - _copy_fences_brute(copies, blocks, p, 1.0, lead)) < 1e-9


def test_multi_node_combine_fences_its_nvlink_copies():
    """Across nodes a copy to an NVLink peer is still a warp copy, lane 0's
    __threadfence_system (MEMBAR.SC.SYS in gatherKernel's SASS), then its signal's IBGDA post:
    one in-node peer round trip more on its block's chain, after the put's 28 warp-copy
    rounds (session 18); block 0 also posts its sync signal. At EP16 x 128 tokens (100 blocks
    of 8 copies, each from the sender's node but not itself with probability 7/16) the
    expected slowest block adds ~6.7 such copies; over RDMA alone (no NVLink copies) none."""
    from analysis._moe_exchange import _copy_fences
    kw = {"dispatch_bytes": 1 + 4 / 128, "combine_bytes": 2, "routing": "uniform"}
    one = moe_exchange(_h100(1), "deepseek-v3", 1, 8, kernel="pplx", **kw)
    trip = one.dispatch_phase.fence                 # the in-node peer round trip
    post, _ = _post_and_pass()
    lat = EXCHANGE_LATENCY["hopper"]
    copy = (2 * lat["l2_hit"].value + 4 * lat["hbm_load"].value
            + 3 * 35 * lat["cycle"].value          # the staging rounds' cycles (session 22)
            + _copy_recount()[1])                   # the copy loop's own (session 23)
    fenced = _copy_recount()[2]
    for nodes, tokens in ((2, 128), (16, 128), (2, 1)):
        r = moe_exchange(_h100(nodes), "deepseek-v3", tokens, 8 * nodes, kernel="pplx", **kw)
        most = -(-tokens * 8 // 132)
        want = _copy_fences(tokens * 8, 132, 7 / (8 * nodes), trip + _put_rounds() + fenced,
                            post)
        assert want > 0
        fences = (r.combine_phase.interleaved - (most - 1) * copy - (most + 1) * post
                  - _ring())
        assert abs(fences - want) < 1e-14
        assert r.dispatch_phase.fence == r.combine_phase.fence == 0.0
    r = moe_exchange(_h100(2), "deepseek-v3", 128, 16, kernel="pplx", **kw)
    per = trip + _put_rounds() + fenced
    got = r.combine_phase.interleaved - 7 * copy - 9 * post - _ring()
    # max(lead + a, b) - lead lies within [max(a, b) - lead, max(a, b)]: block 0's sync post
    # (lead) only ever hides fences; without it the slowest of the 100 full blocks adds ~6.7
    # (session 18); session 24's recount of the post (lead 2.57 us) leaves ~6.5
    bare = _copy_fences(1024, 132, 7 / 16, per, 0.0)
    assert 6.5 * per < bare < 7.0 * per
    assert bare - post < got < bare
    assert 6.4 * per < got < 6.6 * per
    rdma = moe_exchange(_h100(1), "deepseek-v3", 128, 8, kernel="pplx", transport="rdma", **kw)
    assert abs(rdma.combine_phase.interleaved - 7 * copy - 9 * post - _ring()) < 1e-15
    assert rdma.combine_phase.fence == 0.0


def _draw_received(data, ep, per_rank, k, tokens):
    """The receiving rank's grid, its (local expert, source group) slot count and a drawn split
    of its ``tokens x k`` received copies over those slots: ``(grid, slots, counts)``."""
    grid = min(max(-(-(ep * per_rank) // _WARPS), tokens * k), _MOST_BLOCKS)
    slots = per_rank * ep
    cuts = sorted(data.draw(st.lists(st.integers(0, tokens * k), min_size=slots - 1,
                                     max_size=slots - 1)))
    return grid, slots, [b - a for a, b in zip([0] + cuts, cuts + [tokens * k])]


def _receive_walks_brute(counts, grid, local_experts, groups):
    """scatterKernel's copy loop after its grid sync (7af3059 l.196-210), for every block of the
    grid, over the received counts per (local expert, source group) slot: the slots its __ldg
    loads read, in order (two per slot advanced, one for the check that finds a token), and its
    tokens, as ``[(slots, tokens), ...]`` by block."""
    total = sum(counts)
    max_batch = len(counts) * max(total, 1)
    out = []
    for block in range(grid):
        expert = dp = offset = 0
        loaded = []
        tokens = 0
        token = block
        while token < max_batch:
            done = False
            while True:
                loaded.append(expert * groups + dp)          # the while condition's load
                if offset + counts[expert * groups + dp] > token:
                    break
                loaded.append(expert * groups + dp)          # the body's re-read
                offset += counts[expert * groups + dp]
                dp += 1
                if dp == groups:
                    dp = 0
                    expert += 1
                    if expert == local_experts:
                        done = True
                        break
            if done or expert >= local_experts:
                break
            tokens += 1
            token += grid
        out.append((loaded, tokens))
    return out


def _receive_walk_brute(counts, grid, local_experts, groups):
    """The receive walk's __ldg loads and tokens per block (:func:`_receive_walks_brute`)."""
    return [(len(slots), tokens)
            for slots, tokens in _receive_walks_brute(counts, grid, local_experts, groups)]


@settings(max_examples=40, deadline=None)
@given(ep_log=st.integers(0, 4), per_rank=st.integers(1, 4), k=st.integers(1, 4),
       tokens=st.integers(1, 6), data=st.data())
def test_receive_walk_is_a_lower_bound_of_the_kernels_loop(ep_log, per_rank, k, tokens, data):
    """Every block walks every slot (2 dependent loads per slot beyond the first, at least),
    whatever the received counts; the block with the most tokens holds ceil(copies / grid)
    when the rank receives the expected tokens x k copies."""
    ep = 2 ** ep_log
    experts = ep * per_rank
    walk_slots, walk_tokens = exchange_kernel("pplx").receive_walk(experts, k, tokens, ep)
    grid, slots, counts = _draw_received(data, ep, per_rank, k, tokens)
    walks = _receive_walk_brute(counts, grid, per_rank, ep)
    assert walk_slots == slots - 1
    assert all(loads >= 2 * walk_slots + 1 for loads, _ in walks)
    assert max(t for _, t in walks) == walk_tokens


def _receive_reduce_brute(tokens, blocks, hidden, k, threads=256, vec=8):
    """gatherKernel's receive part: block b sums tokens b, b + blocks, ...; thread t passes
    j = vec x t, vec x t + threads x vec, ... < hidden, each pass over the k copies in turn:
    the most (pass, copy) steps of any thread of any block."""
    worst = 0
    for b in range(min(blocks, tokens)):
        mine = len(range(b, tokens, blocks))
        for t in range(threads):
            passes = len(range(vec * t, hidden, threads * vec))
            worst = max(worst, mine * passes * k)
    return worst


@settings(max_examples=30, deadline=None)
@given(tokens=st.integers(1, 300), hidden=st.integers(1, 9000), k=st.integers(1, 8),
       experts=st.sampled_from([1, 8, 64, 256]))
def test_receive_reduce_equals_the_gather_loops(tokens, hidden, k, experts):
    kern = exchange_kernel("pplx")
    blocks = min(132, experts * tokens)
    assert kern.receive_reduce(experts, k, tokens, hidden) == _receive_reduce_brute(
        tokens, blocks, hidden, k)


# pplx's count fields: (field, pplx's value, values of the wrong kind, their message, the
# unset value, the message of the chain step that needs it)
_COUNT_FIELDS = (
    ("reduce_elements", 2048, (-1, True, 2.5), "reduce_elements", 0, "needs reduce_elements"),
    ("put_vector", 512, (-1, 1.5, True), "put_vector must be an int", 0,
     "put_rounds needs put_vector"),
    ("stage_vector", (4608, 4096), ((0, 0), (-1, 4096), (4096,), (1.5, 2), [4608, 4096],
                                    (True, 4096)),
     "stage_vector must be", (), "stage_rounds needs stage_vector"),
    ("walk_slot_bytes", 4, (-1, 1.5, True), "walk_slot_bytes must be an int", 0,
     "needs walk_slot_bytes"),
)


def test_count_fields_are_validated_and_sourced():
    """reduce_elements (elements one block reduces per pass), put_vector (bytes per dependent
    round of a put's warp copy) and stage_vector (bytes per staging round, dispatch and
    combine) refuse values of the wrong kind, are needed by pplx's chain steps that count with
    them, and are listed with their source; reduce_elements and put_vector need the combine's
    serial blocks."""
    import dataclasses

    import pytest
    kern = exchange_kernel("pplx")
    for field, value, bads, bad_message, unset, needs in _COUNT_FIELDS:
        assert getattr(kern, field) == value
        assert f"pplx.{field}" in {p.name for p in kern.parameters()}
        for bad in bads:
            # a count of the wrong kind is a TypeError (session 31), and so is a pair's or an
            # item's of stage_vector (session 38); a wrong value a ValueError
            if field == "stage_vector":
                kind = not isinstance(bad, tuple) or not all(type(x) is int for x in bad)
            else:
                kind = bad != -1
            with pytest.raises(TypeError if kind else ValueError, match=bad_message):
                dataclasses.replace(kern, **{field: bad})
        with pytest.raises(ValueError, match=needs):
            dataclasses.replace(kern, **{field: unset})
    with pytest.raises(ValueError, match="needs combine_blocks"):
        dataclasses.replace(exchange_kernel("one-sided"), reduce_elements=2048)
    with pytest.raises(ValueError, match="put_vector needs combine_blocks"):
        dataclasses.replace(exchange_kernel("deepep-low-latency"), put_vector=512)
    assert exchange_kernel("one-sided").receive_reduce(256, 8, 4, 7168) == 0


def _receive_copy_rounds_brute(nbytes, threads=320):
    """scatterKernel 7af3059 l.222-228, walked: thread t copies k = t, t + blockDim.x, ... while
    k x 16 < tokenDim, one load then its store per iteration (SASS 0x43c0-0x45b0); the
    slowest thread's iterations."""
    most = 0
    for t in range(threads):
        k, n = t, 0
        while k * 16 < nbytes:
            n, k = n + 1, k + threads
        most = max(most, n)
    return most


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 40000))
def test_the_receive_copy_rounds_are_the_kernels_loop(nbytes):
    assert exchange_kernel("pplx").receive_rounds(nbytes) == _receive_copy_rounds_brute(nbytes)


def test_each_received_token_adds_its_check_its_rounds_and_its_index():
    """Session 20 (scatterKernel SASS 0x3ee0-0x47a0): per received token of the busiest block,
    the slot check (L1), the copy's rounds (L2 each), thread 0's index load (L1) before warp 0
    moves on; session 17 had counted one L2 load. At 128 tokens over 132 blocks: 8 tokens."""
    lat = EXCHANGE_LATENCY["hopper"]
    kern = exchange_kernel("pplx")
    old = dataclasses.replace(kern, chain=(tuple(
        s for s in kern.chain[0] if s not in (("l2_hit", "walk_token_rounds"),
                                              ("l1_hit", "walk_tokens"))), kern.chain[1]))
    assert len(old.chain[0]) == len(kern.chain[0]) - 3
    kw = {"dispatch_bytes": 1 + 4 / 128, "combine_bytes": 2}
    for nodes, tokens, per_block in ((1, 128, 8), (2, 128, 8), (1, 1, 1)):
        new = moe_exchange(_h100(nodes), "deepseek-v3", tokens, 8 * nodes, kernel=kern, **kw)
        was = moe_exchange(_h100(nodes), "deepseek-v3", tokens, 8 * nodes, kernel=old, **kw)
        added = per_block * (lat["l2_hit"].value + 2 * lat["l1_hit"].value)
        assert new.dispatch_phase.chain - was.dispatch_phase.chain == pytest.approx(added, rel=1e-9)
        assert new.combine == was.combine


def test_the_receive_copys_round_is_a_sourced_field():
    """Review S20-R4: the bytes per round are the profile's own field, listed as a Parameter
    like put_vector and stage_vector; a chain step counted in receive rounds needs it."""
    kern = exchange_kernel("pplx")
    p = next(p for p in kern.parameters() if p.name == "pplx.receive_vector")
    assert p.value == 320 * 16 and "0x43c0" in p.source
    with pytest.raises(ValueError, match="receive_vector"):
        dataclasses.replace(kern, receive_vector=0)
    assert dataclasses.replace(kern, receive_vector=2560).receive_rounds(7392) == 3


def test_the_copies_bytes_per_load_are_bytes():
    """Lead 02:25 (as review S20-R3 for runtime): each byte-valued profile field carries 'B'."""
    units = {p.name: p.unit for p in exchange_kernel("pplx").parameters()}
    for field in ("put_vector", "receive_vector", "stage_vector", "message_header"):
        assert units[f"pplx.{field}"] == "B"
    assert units["pplx.combine_blocks"] == units["pplx.reduce_elements"] == ""


def test_each_nvshmem_wait_ends_in_a_gpu_scope_fence():
    """Session 21: NVSHMEM 3.2.5's nvshmem_uint64_wait_until polls, then calls
    nvshmemi_transfer_syncapi_update_mem (MEMBAR.SC.GPU + ERRBAR + CCTL.IVALL in the linked
    SASS; its CPU-proxy branch is off with GDRCopy). After the phase's last arrival the
    dispatch runs one such fence (the last slot's, scatterKernel 0x37b0), the combine three
    steps (the fence after the k-signal poll, 0x29f0; after the reduce block 0's sync-flag
    load and fence, 0x3c50-0x3cc0): one L2 round trip each, in every pplx row, one node or
    many. Nothing else moves."""
    from fabric._exchange import _nvshmem_wait
    lat = EXCHANGE_LATENCY["hopper"]["l2_hit"].value
    kern = exchange_kernel("pplx")
    wait = _nvshmem_wait()
    assert wait == (("l2_hit", "one"),)
    d, c = list(kern.chain[0]), list(kern.chain[1])
    d.remove(wait[0])
    for _ in range(3):
        c.remove(("l2_hit", "one"))
    # the combine's first copy's L2 trips: sourceExpert, the three source loads, its P2P pointer
    # (session 23: from L2, nothing in L1 after the fences)
    assert c.count(("l2_hit", "one")) == 3
    old = dataclasses.replace(kern, chain=(tuple(d), tuple(c)))
    kw = {"dispatch_bytes": 1 + 4 / 128, "combine_bytes": 2}
    for nodes, tokens in ((1, 1), (1, 128), (2, 1), (16, 128)):
        new = moe_exchange(_h100(nodes), "deepseek-v3", tokens, 8 * nodes, kernel=kern, **kw)
        was = moe_exchange(_h100(nodes), "deepseek-v3", tokens, 8 * nodes, kernel=old, **kw)
        assert new.dispatch_phase.chain - was.dispatch_phase.chain == pytest.approx(lat, rel=1e-9)
        assert new.combine_phase.chain - was.combine_phase.chain == pytest.approx(3 * lat,
                                                                                rel=1e-9)
        assert new.dispatch_phase.interleaved == was.dispatch_phase.interleaved
        assert new.combine_phase.interleaved == was.combine_phase.interleaved


def test_across_nodes_the_last_count_is_followed_by_its_waits_steps():
    """Session 21 (scatterKernel SASS 0x3670-0x37b0): a slot thread fences after its count
    arrives, re-reads the count, polls its token signals, fences again. Across the network the
    counts (the count warp's serial posts) are what the dispatch waits for last, so the three
    L2 trips before the last fence follow the count warp's chain: the 1-token IBGDA dispatches
    move by 3 L2 trips; in one node (counts are stores beside the tokens) and where the links
    dominate (128 tokens over the network) nothing moves; the combine never."""
    from fabric._exchange import _count_arrival
    lat = EXCHANGE_LATENCY["hopper"]["l2_hit"].value
    kern = exchange_kernel("pplx")
    assert _count_arrival("network") == (("l2_hit", "network"),) * 3
    steps = list(kern.interleaved_chain[0])
    for step in _count_arrival("network"):
        steps.remove(step)
    old = dataclasses.replace(kern, interleaved_chain=(tuple(steps), kern.interleaved_chain[1]))
    kw = {"dispatch_bytes": 1 + 4 / 128, "combine_bytes": 2}
    for nodes, tokens, moved in ((1, 1, 0), (1, 128, 0), (2, 1, 3), (16, 1, 3), (2, 128, 0)):
        new = moe_exchange(_h100(nodes), "deepseek-v3", tokens, 8 * nodes, kernel=kern, **kw)
        was = moe_exchange(_h100(nodes), "deepseek-v3", tokens, 8 * nodes, kernel=old, **kw)
        assert new.dispatch - was.dispatch == pytest.approx(moved * lat, rel=1e-9, abs=1e-15)
        assert new.combine == was.combine


def _walk_sector_misses_brute(counts, grid, local_experts, groups, slot_bytes=4, sector=32):
    """scatterKernel's receive walk (7af3059 l.196-210, SASS 0x3f90-0x4110) for every block,
    each with its own empty L1 that fills by 32-B sectors and keeps them (1 KB of counts): the
    loads that miss (go to L2) are the distinct sectors of the slots it loads."""
    return [len({slot * slot_bytes // sector for slot in slots})
            for slots, _ in _receive_walks_brute(counts, grid, local_experts, groups)]


@settings(max_examples=30, deadline=None)
@given(ep_log=st.integers(0, 5), per_rank=st.integers(1, 40), k=st.integers(1, 8),
       tokens=st.integers(1, 64), data=st.data())
def test_the_walks_l2_loads_are_its_sectors(ep_log, per_rank, k, tokens, data):
    """Session 21: the L1 fills 32-B sectors (exchange.l1_sector), so a block walking the uint32
    slots pays an L2 load for the first slot of every sector it enters; the block that walks
    to the end (every grid has one: its tokens run past the received ones) enters all of
    them: walk_sectors + 1 (the first counted apart); no block enters more."""
    ep = 2 ** ep_log
    experts = ep * per_rank
    kern = exchange_kernel("pplx")
    walk_slots, _ = kern.receive_walk(experts, k, tokens, ep)
    grid, slots, counts = _draw_received(data, ep, per_rank, k, tokens)
    misses = _walk_sector_misses_brute(counts, grid, per_rank, ep)
    assert max(misses) == kern.walk_sectors(walk_slots) + 1 == -(-slots * 4 // 32)
    assert kern.walk_sectors(walk_slots) <= walk_slots


def test_the_walks_new_sectors_cost_l2_trips():
    """DeepSeek-V3 (256 slots, 32 sectors): 31 of the walk's slot loads move from an L1 hit to
    an L2 trip in every pplx dispatch, nothing else moves; the sector size is a listed,
    sourced Parameter and walk_sectors refuses a non-count."""
    from fabric._exchange import EXCHANGE_L1_SECTOR
    lat = EXCHANGE_LATENCY["hopper"]
    kern = exchange_kernel("pplx")
    assert EXCHANGE_L1_SECTOR.value == 32 and EXCHANGE_L1_SECTOR.unit == "B"
    assert "sector" in EXCHANGE_L1_SECTOR.source
    assert EXCHANGE_L1_SECTOR in kern.parameters()
    assert EXCHANGE_L1_SECTOR not in exchange_kernel("deepep-low-latency").parameters()
    with pytest.raises(fabric.SpecError, match="walk_slots"):
        kern.walk_sectors(-1)
    old = dataclasses.replace(kern, walk_slot_bytes=0, chain=(tuple(
        ("l1_hit", "walk_slots") if s[1] == "walk_slot_hits" else s
        for s in kern.chain[0] if s[1] != "walk_sectors"), kern.chain[1]))
    kw = {"dispatch_bytes": 1 + 4 / 128, "combine_bytes": 2}
    step = 31 * (lat["l2_hit"].value - lat["l1_hit"].value)
    for nodes, tokens in ((1, 1), (1, 128), (2, 1), (16, 128)):
        new = moe_exchange(_h100(nodes), "deepseek-v3", tokens, 8 * nodes, kernel=kern, **kw)
        was = moe_exchange(_h100(nodes), "deepseek-v3", tokens, 8 * nodes, kernel=old, **kw)
        assert new.dispatch - was.dispatch == pytest.approx(step, rel=1e-9)
        assert new.combine == was.combine


# The cycles pplx 7af3059's compiled loops schedule beyond their loads, read from the stall
# counts of sm_90a control words (session 22, review S22-R3): (cycle count, cycles, the chain
# count, the SASS addresses its source names, the phase whose cycle table holds it for that
# chain count)
_CYCLES = (("walk_cycles", 74, "walk_cycles", "0x3ff0", 0),
           ("put_cycles", 35, "put_round_cycles", "0x1360", 0),
           ("reduce_cycles", 118, "reduce_cycles", "0x2d80", 1),
           ("receive_cycles", 83, "walk_token_round_cycles", "0x4550", 0),
           ("walk_wrap_cycles", 35, "walk_wrap_cycles", "0x4000", 0),
           ("send_walk_cycles", 202, "walked_token_cycles", "0x2590", 0),
           ("receive_token_cycles", 277, "walk_token_cycles", "0x4730", 0),
           ("send_cycles", 590, "loadstore_send_cycles", "0x1f50", 0),
           ("reduce_pass_cycles", 150, "reduce_pass_cycles", "0x30f0", 1))


@pytest.mark.parametrize("arch", ["hopper", "blackwell"])
def test_the_loops_pay_their_scheduled_cycles(arch):
    """Each loop the chains count pays, per iteration beyond its loads, the cycles its compiled
    code schedules (the stall counts from the instruction that consumes a load to the next
    load's issue): the receive walk 74 per slot (scatterKernel 0x3f90-0x4110), a put round 35
    (gatherKernel 0x1290-0x1370, scatterKernel 0x1d80-0x1e60), the combine sum 118 per (pass,
    copy) (gatherKernel 0x2bd0-0x30e0); one SM cycle at the project's 1.98 GHz, carried to
    Blackwell."""
    kern = exchange_kernel("pplx")
    cycle = EXCHANGE_LATENCY[arch]["cycle"]
    assert cycle.unit == "s" and cycle.value == pytest.approx(1 / 1.98e9, rel=1e-12)
    assert "stall count" in cycle.source
    src = dict(kern.sources)
    for field, cycles, count, addr, phase in _CYCLES:
        assert kern.cycle(field, phase) == cycles and addr in src[field]
        assert {p.name: p.unit for p in kern.parameters()}[f"pplx.{field}"] == "cycles"
    assert (kern.cycle("stage_cycles", 0), kern.cycle("stage_cycles", 1)) == (89, 35)
    assert "0x10a0" in src["stage_cycles"]
    assert {p.name: p.unit for p in kern.parameters()}["pplx.stage_cycles"] == "cycles"
    without = dataclasses.replace(
        kern, name="pplx-no-cycles", cycles=((), ()), chain=tuple(tuple(s for s in ph if s[0] != "cycle") for ph in kern.chain),
        interleaved_chain=tuple(tuple(s for s in ph if s[0] != "cycle")
                                for ph in kern.interleaved_chain))
    # session 23: the combine's first copy pays its copy loop's 206 cycles in every call, each
    # later copy 206 + 77
    first = 206 * cycle.value
    for n in (0, 7, 255):
        got = kern.chain_latency(0, arch, 0, 0, walk_slots=n)[0]
        assert got - without.chain_latency(0, arch, 0, 0, walk_slots=n)[0] == pytest.approx(
            74 * n * cycle.value, rel=1e-12, abs=1e-18)
        got = kern.chain_latency(1, arch, 0, 0, reduce_loads=n)[0]
        assert got - without.chain_latency(1, arch, 0, 0, reduce_loads=n)[0] == pytest.approx(
            (118 + 150) * n * cycle.value + first, rel=1e-12, abs=1e-18)
        got = kern.chain_latency(0, arch, 0, 0, walk_token_rounds=n)[0]
        assert got - without.chain_latency(0, arch, 0, 0, walk_token_rounds=n)[0] == pytest.approx(
            83 * n * cycle.value, rel=1e-12, abs=1e-18)
        got = kern.chain_latency(1, arch, 0, 0, stage_rounds=n)[0]       # the combine's staging
        assert got - without.chain_latency(1, arch, 0, 0, stage_rounds=n)[0] == pytest.approx(
            35 * n * cycle.value + first, rel=1e-12, abs=1e-18)
        kw = {"stage_rounds": n, "serial_copies": 3, "interleaved": True}  # its later copies
        got = kern.chain_latency(1, arch, 0, 0, **kw)[0]
        assert got - without.chain_latency(1, arch, 0, 0, **kw)[0] == pytest.approx(
            2 * 35 * n * cycle.value + 2 * (206 + 77) * cycle.value, rel=1e-12, abs=1e-18)
        for loadstore in (True, False):       # one node: the dispatch's staging, 89 a round
            kw = {"stage_rounds": n, "loadstore": loadstore, "interleaved": True}
            got = kern.chain_latency(0, arch, 0, 0, **kw)[0]
            assert got - without.chain_latency(0, arch, 0, 0, **kw)[0] == pytest.approx(
                (89 * n + 590) * cycle.value * loadstore, rel=1e-12, abs=1e-18)
        for loadstore in (True, False):       # over the network the puts are posted
            kw = {"put_rounds": n, "loadstore": loadstore, "interleaved": True}
            got = kern.chain_latency(0, arch, 0, 0, **kw)[0]
            assert got - without.chain_latency(0, arch, 0, 0, **kw)[0] == pytest.approx(
                (35 * n + 590) * cycle.value * loadstore, rel=1e-12, abs=1e-18)
    # each count on the phase that runs the loop, once
    steps = [(ph, s) for ph, chain in enumerate((kern.chain, kern.interleaved_chain))
             for i, p in enumerate(chain) for s in p if s[0] == "cycle"]
    assert sorted(s[1] for _, s in steps) == sorted(
        ["put_round_cycles", "reduce_cycles", "walk_cycles", "stage_round_cycles",
         "further_stage_round_cycles", "loadstore_stage_round_cycles", "walk_token_round_cycles",
         "walk_wrap_cycles", "walked_token_cycles", "copy_cycles", "further_copy_cycles",
         "walk_token_cycles", "loadstore_send_cycles", "reduce_pass_cycles",
         "remote_signal_cycles", "posted_copy_cycles",    # session 24: the IBGDA posts
         "count_pass_cycles"])                            # and the count warp's loop
    # the combine's fenced copies, one node: 28 rounds of a BF16 copy for each fenced copy of
    # the block with the most (expected: about 1 at one token, up to 8 at 128 tokens)
    kw = {"dispatch_bytes": 1 + 4 / 128, "combine_bytes": 2, "routing": "uniform"}
    no_put = dataclasses.replace(kern, name="pplx-no-put-cycles", cycles=tuple(
        tuple(e for e in table if e[0] != "put_cycles") for table in kern.cycles), interleaved_chain=(
        tuple(s for s in kern.interleaved_chain[0] if s[1] != "put_round_cycles"),
        kern.interleaved_chain[1]))
    for tokens, low, high in ((1, 0.99, 1.0 + 1e-9), (128, 6.0, 8.0 + 1e-9)):
        a = moe_exchange(_h100(1), "deepseek-v3", tokens, 8, kernel=kern, **kw)
        b = moe_exchange(_h100(1), "deepseek-v3", tokens, 8, kernel=no_put, **kw)
        extra = a.combine_phase.interleaved - b.combine_phase.interleaved
        per = 28 * 35 * EXCHANGE_LATENCY["hopper"]["cycle"].value
        assert low <= extra / per <= high
        assert a.combine - b.combine == pytest.approx(extra, rel=1e-9)


def test_cycle_fields_are_validated():
    """walk_cycles, put_cycles and reduce_cycles are ints >= 0, each needs the field of the
    loop it counts, and a chain step counted in them needs them set."""
    kern = exchange_kernel("pplx")
    for field, _, count, _, phase in _CYCLES:
        for bad in (-1, 1.5, True):     # a wrong kind is a TypeError (session 31)
            with pytest.raises(ValueError if bad == -1 else TypeError,
                               match=f"{field} must be an int"):
                kern.with_cycles(phase, **{field: bad})
        with pytest.raises(ValueError, match=f"{count} needs {field}"):
            kern.with_cycles(phase, **{field: 0})
    base = exchange_kernel("deepep-low-latency")
    for field, needs in (("put_cycles", "put_vector"), ("walk_cycles", "count_grid"),
                         ("reduce_cycles", "reduce_elements"), ("receive_cycles",
                                                                "receive_vector")):
        with pytest.raises(ValueError, match=f"{field} needs {needs}"):
            base.with_cycles(0, **{field: 1})
    # a phase's staging count is one int (the pair (dispatch, combine) before session 26)
    for bad in ((89,), (89, 35), -1, 1.5, [89, 35], True):   # a wrong kind: TypeError
        with pytest.raises(ValueError if bad == -1 else TypeError, match="stage_cycles must be"):
            kern.with_cycles(0, stage_cycles=bad)
    with pytest.raises(ValueError, match="stage_cycles needs stage_vector"):
        base.with_cycles(0, stage_cycles=1)
    with pytest.raises(ValueError, match="loadstore_stage_round_cycles needs stage_cycles"):
        kern.with_cycles(0, stage_cycles=0)
    with pytest.raises(ValueError, match="stage_round_cycles needs stage_cycles"):
        kern.with_cycles(1, stage_cycles=0)
