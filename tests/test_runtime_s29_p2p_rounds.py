"""NCCL's all-to-all(v) work batches, every rank's rounds each on its own parts (session 29,
runtime; ``analysis._runtime_cost.p2p_batches``, ``p2p_schedule``, ``_p2p_replay``).

NVIDIA/nccl ``src/enqueue.cc`` ``scheduleP2pTasksToPlan`` walks a rank's rounds in the order of
its p2p schedule (``src/init.cc``: node then local quadratic deltas up to 2.28.3;
``ncclP2pSchedule``'s groups of ``P2P_SCHEDULE_GROUP_SIZE`` from 2.28.7, one node one group
from 2.28.9) and ``addP2pToPlan`` puts each round's work on ``max(send parts, receive parts)``
channels, each message's parts from its own bytes and connection (the copy to itself never LL);
``addWorkBatchToPlan`` opens a channel's new batch at 8 works, at a round already in it, and
from 2.28.7 (v2.28.7-1 l.138; session 26 read it as 2.29.2's) at a round of another round / 8
group. The model had taken one message's parts for every round of an all-to-allv (its mean
pair) and the 2.29.2 batch rule for 2.28.7-2.28.9.

The references here are literal: the schedule transliterated loop by loop, the parts from
``addP2pToPlan``'s formula, a batch list per channel.
"""
import math

import numpy as np
from degrade import built
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from p2p_groups import (
    group_view,
    nccl_busiest_channel,
    nccl_message,
    rank_group,
    skewed_pairs,
    version,
)

from analysis import cost
from analysis._runtime_cost import _p2p_plan, p2p_batches, p2p_channels, p2p_schedule
from fabric import runtime

RELEASES = ["2.22.3", "2.25.1", "2.28.3", "2.28.7", "2.28.9", "2.29.2", "2.30.7"]
SPECS = ["dgx-h100", "fattree:k=4", "torus:4x4,chip=h100", "rail:servers=2,gpus=4,chip=h100",
         "rail:servers=4,gpus=2,chip=h100"]


def _quad(n):
    # init.cc: delta = 0; do { if (delta < n) use it; round++; delta = (delta + round) &
    # (pow2Up(n) - 1) } while (round != pow2Up(n))
    m = 1
    while m < n:
        m *= 2
    out, delta, rnd = [], 0, 0
    while True:
        if delta < n:
            out.append(delta)
        rnd += 1
        delta = (delta + rnd) & (m - 1)
        if rnd == m:
            return out


def _nodes(view):
    # NCCL's nodes in the order of their first rank, each its ranks in rank order
    same = view.same_node()
    out = []
    for i in range(view.p):
        if not any(i in k for k in out):
            out.append([j for j in range(view.p) if same[i, j]])
    return out


def _schedule(release, nodes, rank):
    """[(sendRank, recvRank)] of ``rank``, round by round (src/init.cc)."""
    v = version(release)
    nranks = sum(len(k) for k in nodes)
    node = next(n for n, k in enumerate(nodes) if rank in k)
    out = []
    if v < (2, 28, 7):
        n_nodes, n_locals, local = len(nodes), max(len(k) for k in nodes), nodes[node].index(rank)
        flat = any(len(k) != n_locals for k in nodes)
        if flat:
            n_nodes, node, n_locals, local = 1, 0, nranks, rank
        for dn in _quad(n_nodes):
            send_node, recv_node = (node + dn) % n_nodes, (node - dn) % n_nodes
            for dl in _quad(n_locals):
                s, r = (local + dl) % n_locals, (local - dl) % n_locals
                out.append((s, r) if flat else (nodes[send_node][s], nodes[recv_node][r]))
        return out
    size = 8 if (v < (2, 28, 9) or len(nodes) > 1) else max(len(k) for k in nodes)
    for k in nodes:
        if len(k) % size or len(k) < size:
            size = math.gcd(size, len(k))
    local_rank = nodes[node].index(rank)
    local, group = local_rank % size, local_rank // size
    to_node, to_local = [], []
    for n, k in enumerate(nodes):
        for g in range(len(k) // size):
            to_node.append(n)
            to_local.append(g * size)
        if n < node:
            group += len(k) // size
    n_groups = nranks // size
    for dg in _quad(n_groups):
        sg, rg = (group + dg) % n_groups, (group - dg) % n_groups
        for d in range(size):
            out.append((nodes[to_node[sg]][to_local[sg] + (local + d) % size],
                        nodes[to_node[rg]][to_local[rg] + (local - d + size) % size]))
    return out


def _parts(rt, view, nbytes, near, copy):
    # one message's channels (tests/p2p_groups.py, addP2pToPlan): LL only over a connection
    # with an LL buffer, a peer of the node (never the copy to itself), every peer in one node
    _p2pn, nmax, nmin, chunk = p2p_channels(rt, view)
    multi = view.n_nodes > 1
    return nccl_message(rt.version, nbytes, nmin, nmax, chunk, multi,
                        ll_buffer=not copy and (near or not multi))[1]


def _brute(release, view, pairs):
    # every rank's rounds in schedule order, a round's work on max(send, receive) parts
    # (addP2pToPlan), replayed on its channels (tests/p2p_groups.py); the busiest rank's
    if version(release) < (2, 22, 0):
        return 1
    rt = runtime(f"nccl@{release}")
    nodes = _nodes(view)
    same = view.same_node()
    counts = [len(k) for k in nodes]
    p2pn = p2p_channels(rt, view)[0]
    return max(nccl_busiest_channel(release, p2pn, counts, [
        (r, max(_parts(rt, view, pairs[rank][send], same[rank, send], send == rank),
                _parts(rt, view, pairs[recv][rank], same[rank, recv], recv == rank)))
        for r, (send, recv) in enumerate(_schedule(release, nodes, rank))])
        for rank in range(view.p))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(group=rank_group(SPECS, max_ranks=16, max_links=1, max_chips=0),
       release=st.sampled_from(RELEASES))
def test_p2p_schedule_is_nccls_init_loop(group, release):
    # every rank's rounds (send, receive) are init.cc's, ranks split unevenly over nodes too
    f, ranks = group[:2]
    view = group_view(f, "all-to-all", ranks)
    rounds = list(p2p_schedule(runtime(f"nccl@{release}"), view))
    nodes = _nodes(view)
    assert len(rounds) == view.p
    for rank in range(view.p):
        got = [(int(s[rank]), int(r[rank])) for s, r in rounds]
        assert got == _schedule(release, nodes, rank)
        assert got[0] == (rank, rank)                      # round 0: the copy to itself
        assert sorted(s for s, _r in got) == list(range(view.p))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(group=rank_group(SPECS, max_ranks=16, max_links=1, max_chips=0),
       release=st.sampled_from(RELEASES),
       scale=st.sampled_from([1, 1024, 20000, 40000, 1 << 20, 1 << 26]), data=st.data())
def test_batches_are_the_literal_replay(group, release, scale, data):
    # an all-to-allv's pairs (zeros, the diagonal and huge pairs included) and an all-to-all's
    # one size: the busiest rank's busiest channel, against the literal replay
    f, ranks = group[:2]
    p = len(ranks)
    rt = runtime(f"nccl@{release}")
    counts = data.draw(st.lists(st.lists(st.integers(0, 8), min_size=p, max_size=p),
                                min_size=p, max_size=p))
    M = np.array(counts, dtype=float) * scale
    if M.sum() == 0:
        M[0, 1] = scale
    view = group_view(f, "all-to-allv", ranks, M)
    assert p2p_batches(rt, view, M) == _brute(release, view, M.tolist())
    per = float(data.draw(st.sampled_from([0, 1, 40000, 200000, 1 << 22])))
    view = group_view(f, "all-to-all", ranks)
    assert p2p_batches(rt, view, per) == _brute(release, view, [[per] * p] * p)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pairs=skewed_pairs(["torus:4x4,chip=h100", "fattree:k=4", "mesh:3x3",
                           "rail:servers=4,gpus=4,chip=h100"]),
       release=st.sampled_from(RELEASES))
def test_skewed_matrices_on_every_rank_are_the_literal_replay(pairs, release):
    # every rank of a 9-16 rank group (rounds in two or more round / 8 groups): a few large
    # pairs among small ones, whose rounds take more parts than the rest
    f, M = pairs
    view = group_view(f, "all-to-allv", None, M)
    assert p2p_batches(runtime(f"nccl@{release}"), view, M) == _brute(release, view, M.tolist())


def test_one_large_pair_stacks_its_parts_on_the_channels():
    # sd200-ultra (128 ranks, one node, newest release, 32 p2p channels, nChannelsMax 2): 1
    # KiB between every two ranks but rank 0 -> 1 256 MiB. Each channel holds 4 rounds of 4
    # round / 8 groups (4 batches); the large message's 2 parts (a part at most 16 MiB) put
    # round 1 of ranks 0 and 1 also on channel 17 (reverseBits(1) + 1), beside rounds 17, 49,
    # 81, 113: a fifth group there. The parent priced every round as the mean pair (1 part)
    f = built("sd200-ultra:chip=h100")
    rt = runtime("nccl")
    M = np.full((128, 128), 1024.0)
    M[0, 1] = float(1 << 28)
    view = group_view(f, "all-to-allv", None, M)
    want = _brute("2.30.7", view, M.tolist())
    assert p2p_batches(rt, view, M) == want == 5
    uniform = group_view(f, "all-to-all")
    assert p2p_batches(rt, uniform, 1024.0) == 4
    # the same matrix with a 16 MiB pair (one part: 4 batches) costs one batch less
    one = M.copy()
    one[0, 1] = float(1 << 24)
    assert p2p_batches(rt, group_view(f, "all-to-allv", None, one), one) == 4
    stacked, single = (cost(f, "all-to-allv", m, runtime=rt) for m in (M, one))
    assert stacked.fixed > single.fixed


def test_2_28_7_batches_a_channel_by_round_group():
    # nvl72, 72 ranks in one node on 32 p2p channels: rounds 32 apart share a channel (up to
    # 3 works, one batch under rule 1); from 2.28.7 (v2.28.7-1 addWorkBatchToPlan l.138) a
    # channel's batch holds rounds of one round / 8 group only: 3 batches. The parent took
    # 2.29.2 as the first such release
    f = built("nvl72")
    view = group_view(f, "all-to-all")
    got = {r: p2p_batches(runtime(f"nccl@{r}"), view, 1.0) for r in ("2.28.3", "2.28.7",
                                                                       "2.28.9", "2.29.2")}
    assert got == {r: _brute(r, view, [[1.0] * 72] * 72) for r in got}
    assert got == {"2.28.3": 1, "2.28.7": 3, "2.28.9": 3, "2.29.2": 3}


def test_the_copy_to_itself_is_never_ll():
    # addP2pToPlan: protoLL = !selfSend; a 16 KiB copy is Simple on Simple's parts where a
    # message to a peer of the same size is LL on the LL step's (2.22-2.28)
    f = built("dgx-h100")
    rt = runtime("nccl@2.28.3")
    view = group_view(f, "all-to-all")
    peer = _p2p_plan(rt, view, 16384.0, True)
    copy = _p2p_plan(rt, view, 16384.0, True, copy=True)
    assert (peer[0], copy[0]) == ("LL", "Simple")
    assert (peer[1], copy[1]) == (_parts(rt, view, 16384, True, False),
                                  _parts(rt, view, 16384, True, True))
    assert peer[1] > copy[1]
