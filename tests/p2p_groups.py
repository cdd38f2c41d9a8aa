"""One Hypothesis strategy for "a rank group of a perhaps degraded fabric, as a runtime sees it",
one way to build that view, and the literal references of NCCL's p2p placement that the
point-to-point tests of sessions 24-30 share (tests only): a message's channels and protocol
(``nccl_message``) and a rank's batches on its busiest channel (``nccl_busiest_channel``), each
written from NVIDIA/nccl's code at the release tags, not from the model's."""

import math

import numpy as np
from degrade import built, degrade
from hypothesis import assume
from hypothesis import strategies as st

from analysis._collectives import _GroupView, resolve_ranks
from fabric import RoutingError


@st.composite
def rank_group(draw, specs, max_ranks=None, max_links=2, max_chips=1):
    """``(f, ranks, nodes, idx)``: a fabric of ``specs`` with up to ``max_links`` links and
    ``max_chips`` chips failed, 2..``max_ranks`` (default all) distinct endpoints of it, and
    their resolved group (``analysis._collectives.resolve_ranks``); a draw whose failures cut a
    rank off (refused by name, no group) is rejected."""
    f = draw(degrade(built(draw(st.sampled_from(specs))), max_links=max_links,
                     max_chips=max_chips))
    eps = list(f.endpoints)
    top = len(eps) if max_ranks is None else min(len(eps), max_ranks)
    ranks = draw(st.lists(st.sampled_from(eps), min_size=2, max_size=top, unique=True))
    try:
        nodes, idx = resolve_ranks(f, ranks)
    except RoutingError:
        assume(False)
    return f, ranks, nodes, idx


@st.composite
def skewed_pairs(draw, specs, small=(0.0, 1024.0, 40000.0)):
    """``(f, M)``: a fabric of ``specs`` (every rank) and an all-to-allv's ``p x p`` pair
    matrix, one of ``small`` bytes between every two ranks but 1 to 4 pairs of 1, 16 or 256
    MiB, whose rounds take more parts than the rest."""
    f = built(draw(st.sampled_from(specs)))
    p = f.n_endpoints
    M = np.full((p, p), float(draw(st.sampled_from(small))))
    large = draw(st.lists(st.tuples(st.integers(0, 15), st.integers(0, 15),
                                    st.sampled_from([1 << 20, 1 << 24, 1 << 28])),
                          min_size=1, max_size=4))
    for i, j, b in large:
        M[i % p, j % p] = float(b)
    return f, M


def group_view(f, op="send-recv", ranks=None, M=None, transport=None):
    """The runtime's view of ``ranks`` (None: every endpoint) of ``f`` running ``op``
    (``analysis._collectives._GroupView``): ``M`` an all-to-allv's traffic matrix (normalised
    here to a total of 1), ``transport`` a transport spec or None (the fabric's own)."""
    nodes, idx = resolve_ranks(f, ranks)
    return _GroupView(f, op, nodes, idx, transport, None if M is None else M / M.sum(), True)


#: NCCL's LL step in bytes, flags included: DEFAULT_LL_BUFFSIZE / NCCL_STEPS (src/init.cc;
#: src/include/device.h: NCCL_LL_LINES_PER_THREAD 8 x NCCL_LL_MAX_NTHREADS 512 x NCCL_STEPS 8
#: x sizeof(union ncclLLFifoLine) 16 B, over the 8 steps), v2.18.3-1 .. v2.30.7-1
LL_STEP = 8 * 512 * 8 * 16 // 8
#: NCCL_PARAM(P2pLLThreshold, "P2P_LL_THRESHOLD", 16384) (src/enqueue.cc, every tag read)
LL_THRESHOLD = 16384


def version(release):
    """``"2.28.7"`` -> ``(2, 28, 7)``."""
    return tuple(map(int, release.split(".")))


def nccl_message(release, nbytes, n_min, n_max, chunk, multi, ll_buffer=True):
    """``(protocol, nChannels)`` of one p2p message of ``nbytes``, as NVIDIA/nccl
    ``src/enqueue.cc`` ``addP2pToPlan`` sets them for one direction (v2.22.3-1 .. v2.30.7-1;
    before 2.22 not read: refused). ``n_min`` / ``n_max``: the plan's nChannelsMin /
    nChannelsMax, ``chunk`` p2pChunkSize (the model's, tested elsewhere), ``multi`` nNodes > 1,
    ``ll_buffer`` whether the connection has an LL buffer (a peer of the node; never the copy to
    itself: ``protoLL = !selfSend``).

    The statement: an empty message takes 1 channel; else nChannels starts at
    ``min(nChannelsMin, divUp(bytes, minPartSize))`` and doubles, while it is at most
    ``nChannelsMax / 2``, until its parts ``divUp(bytes, nChannels)`` fit ``maxPartSize`` (the
    start's part is at least minPartSize): the first count of that doubling ladder whose parts
    fit, the ladder's top if none does. Parts are ``step / 2 .. step`` across nodes and ``step /
    8 .. step x 32`` in one node. To 2.28 the protocol comes first (LL while bytes <=
    nChannelsMax x P2pLLThreshold) and an LL message's step is the LL buffer's; from 2.29 the
    step is p2pChunkSize ("assume SIMPLE protocol to start with") and LL is decided after, on
    bytes <= nChannels x P2pLLThreshold."""
    v = version(release)
    if v < (2, 22, 0):
        raise ValueError(f"addP2pToPlan's channels before 2.22 were not read ({release})")
    b = math.ceil(nbytes)
    early = v < (2, 29, 0)
    ll = early and ll_buffer and b <= n_max * LL_THRESHOLD
    step = LL_STEP if ll else chunk
    smallest, largest = (step // 2, step) if multi else (step // 8, step * 32)
    if b == 0:
        channels = 1
    else:
        start = min(n_min, -(-b // smallest))
        ladder = [start]
        while ladder[-1] <= n_max // 2:
            ladder.append(2 * ladder[-1])
        channels = next((c for c in ladder if -(-b // c) <= largest), ladder[-1])
    if not early:
        ll = ll_buffer and b <= channels * LL_THRESHOLD
    return ("LL" if ll else "Simple"), channels


def nccl_chunked_message(nbytes, n_min, n_max, chunk, multi, ll_buffer=True):
    """``(protocol of the first chunk, nChannels, LL bytes)`` of one p2p message of ``nbytes``
    as NVIDIA/nccl 2.18-2.21 plans it (v2.21.5-1 ``src/enqueue.cc``: ``calcP2pChunkSize``,
    then ``scheduleP2pTasksToPlan`` cuts the message into chunks of that size and
    ``addP2pToPlan`` runs each chunk LL when it is at most ``P2pLLThreshold`` and the
    connection has an LL buffer). Arguments as :func:`nccl_message`'s. The statement:
    nChannels starts at nChannelsMin with a chunk of ``max(minPartSize, divUp(bytes,
    nChannels))`` and doubles, while the chunk exceeds maxPartSize and nChannels is at most
    nChannelsMax / 2, to chunks of ``divUp(bytes, nChannels)``; the chunk is then rounded up
    to a multiple of minPartSize. An empty message is one empty chunk (its channels not
    read: None)."""
    b = math.ceil(nbytes)
    smallest, largest = (chunk // 2, chunk) if multi else (chunk // 8, chunk * 32)
    channels = n_min
    size = max(smallest, -(-b // channels))
    while size > largest and channels <= n_max // 2:
        channels *= 2
        size = -(-b // channels)
    size = -(-size // smallest) * smallest
    left, protocols, ll = b, [], 0
    while True:
        c = min(left, size)
        runs_ll = ll_buffer and c <= LL_THRESHOLD
        protocols.append("LL" if runs_ll else "Simple")
        ll += c if runs_ll else 0
        left -= c
        if left <= 0:
            break
    return protocols[0], (channels if b else None), ll


def nccl_busiest_channel(release, p2pn, counts, works):
    """Work batches on one rank's busiest p2p channel: ``works`` its rounds in the order it
    plans them, each ``(round, parts)``; ``p2pn`` p2pnChannels (a power of two), ``counts``
    the ranks of each node (one entry: one node). Before 2.22 (not read): 1.

    Replayed from NVIDIA/nccl: a round's base (``src/include/channel.h``
    ``ncclP2pChannelBaseForRound``) is the round in one node, and across nodes ``(round / L) x
    divUp(L, 8) + (round % L) / 8`` with L the largest node's ranks to 2.28.3, from 2.28.7 the
    schedule group (``P2P_SCHEDULE_GROUP_SIZE`` 8, cut to its gcd with each node's ranks it
    does not divide or exceeds: ``src/init.cc``); the base's low log2(p2pn) bits reversed from
    2.28; part k's channel (``src/include/device.h`` ``ncclP2pChannelForPart``) ``base +
    k`` from 2.28, ``base + reverseBits(k)`` in 2.22-2.27, mod p2pn; a channel's work goes to
    its open batch unless that holds 8 works or this round already, or (from 2.28.7:
    ``addWorkBatchToPlan`` v2.28.7-1 l.138) a round of another round / 8 group
    (``src/enqueue.cc``)."""
    v = version(release)
    if v < (2, 22, 0):
        return 1
    if len(counts) > 1:
        group = max(counts)
        if v >= (2, 28, 7):
            group = 8
            for c in counts:
                if c % group or c < group:
                    group = math.gcd(group, c)
    bits = (p2pn - 1).bit_length()

    def reverse(x):
        low = format(x % (1 << bits), f"0{bits}b") if bits else ""
        return int(low[::-1] or "0", 2)

    batches = {}
    for r, parts in works:
        base = (r // group) * -(-group // 8) + (r % group) // 8 if len(counts) > 1 else r
        if v >= (2, 28, 0):
            base = reverse(base)
        for part in range(parts):
            c = (base + (part if v >= (2, 28, 0) else reverse(part))) & (p2pn - 1)
            open_batch = batches.setdefault(c, [[]])[-1]
            if (len(open_batch) == 8 or r in open_batch
                    or (v >= (2, 28, 7) and any(r // 8 != q // 8 for q in open_batch))):
                batches[c].append([r])
            else:
                open_batch.append(r)
    return max(len(b) for b in batches.values())


def p2p_drain_brute(rt, view, pairs):
    """Seconds the busiest receiver of an all-to-allv's ``p x p`` byte matrix ``pairs`` copies
    its Simple parts' last slices out of its buffer after the bytes, pair by pair and part by
    part (sessions 37-38; the model's ``analysis._runtime_cost.p2p_drain``): each message from
    a peer of the receiver's node, its whole bytes less its LL bytes cut into parts as NCCL
    cuts them (from 2.22 ``ncclP2pPartBounds``: ``alignUp(divUp(bytes, parts), 4 KiB)`` each,
    ``rt.p2p["part_align"]``; before, ``calcP2pChunkSize``'s size, the loop written out here),
    each part walked one ``p2pChunkSize`` slice at a time to its last, the column's sum at
    most over receivers, read and written once at the runtime's share (``drain_hbm_share``)
    of the chip's HBM bandwidth."""
    from analysis._runtime_cost import p2p_channels, p2p_ll_bytes, p2p_protocol

    _p2pn, nmax, nmin, chunk = p2p_channels(rt, view)
    lo, hi = (chunk // 2, chunk) if view.n_nodes > 1 else (chunk // 8, chunk * 32)
    align = rt.p2p["part_align"]
    near = view.same_node()

    def last_slices(nbytes, simple, parts):
        if align:
            per = -(-simple // parts)
            size = -(-per // align) * align
        else:
            c, size = nmin, max(lo, -(-nbytes // nmin))
            while size > hi and c <= nmax // 2:
                c *= 2
                size = -(-nbytes // c)
            size = -(-size // lo) * lo
        total, beg = 0, 0
        while beg < simple:
            end = min(beg + size, simple)
            piece = beg
            while end - piece > chunk:
                piece += chunk
            total += end - piece
            beg = end
        return total

    most = 0.0
    for j in range(len(pairs)):
        got = 0.0
        for i in range(len(pairs)):
            if i != j and near[i, j]:
                nbytes = float(pairs[i, j])     # the model's bytes (n / p), not rounded
                _proto, ch = p2p_protocol(rt, view, pairs[i, j], True)
                simple = nbytes - min(nbytes, p2p_ll_bytes(rt, view, pairs[i, j], True))
                got += last_slices(nbytes, simple, ch) if simple > 0 else 0.0
        most = max(most, got)
    chip = view.fabric.chip
    share = rt.p2p["drain_hbm_share"]
    return 2 * most / (chip.hbm_bandwidth * share) if chip is not None else 0.0
