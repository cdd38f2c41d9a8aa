"""An all-to-allv's pairs choose their protocols each from its own bytes (session 27, runtime;
``analysis._runtime_cost._p2p_messages``, used by ``_p2p``).

NCCL plans every pair's send as its own message (NVIDIA/nccl ``src/enqueue.cc``
``scheduleP2pTasksToPlan`` -> ``addP2pToPlan`` once per round, its protocol and channels from
that message's bytes), so a skewed matrix's small pairs run LL (8 data bytes a 16-byte line)
while its large ones run Simple. Session 26 priced every pair as the mean pair. Now the pairs'
LL bytes cross at LL's rate (the wire matrix routed as the operation's traffic), the operation
pays the per-step latency of the slowest protocol among the messages that carry bytes, and it
reports the largest message's protocol and channels; a matrix whose every pair carries the
same LL share (a uniform one) keeps the all-to-all's scalar rule exactly.
"""
import numpy as np
import pytest
from degrade import built
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from p2p_groups import group_view, p2p_drain_brute, rank_group

from analysis import cost
from analysis._runtime_cost import p2p_protocol
from fabric import RoutingError, runtime

KiB = 1024
MiB = 1024 * KiB


def _wire(rt, view, pairs):
    # each pair's message as NCCL plans it (p2p_protocol: LL or Simple from its own bytes and,
    # across nodes, whether the peer is in the sender's node: session 28); an LL message's
    # bytes count twice on the wire, the self copies as they are
    out = pairs.copy()
    near = view.same_node()
    for i in range(len(pairs)):
        for j in range(len(pairs)):
            if i != j and p2p_protocol(rt, view, pairs[i, j], near[i, j])[0] == "LL":
                out[i, j] *= 2
    return out


def test_one_large_pair_runs_simple_the_rest_ll():
    # 8 H100, newest NCCL: 4 KiB between every two ranks but 0 -> 1 with 1 MiB. The mean pair
    # (18.8 KB) runs Simple, so session 26 priced all 56 messages as Simple; NCCL runs the 55
    # small ones LL (at most 16 KiB on their one channel) and the large one Simple
    f = built("dgx-h100")
    p = f.n_endpoints
    M = np.full((p, p), 4.0 * KiB)
    np.fill_diagonal(M, 0.0)
    M[0, 1] = 1024.0 * KiB
    rt = runtime("nccl")
    view = group_view(f, "all-to-allv", M=M)
    assert p2p_protocol(rt, view, 4 * KiB)[0] == "LL"
    assert p2p_protocol(rt, view, M.sum() / p / p)[0] == "Simple"
    c = cost(f, "all-to-allv", M, algorithm="scattered", runtime="nccl")
    assert (c.protocol, c.channels) == p2p_protocol(rt, view, 1024 * KiB)
    W = _wire(rt, view, M)
    t = view.transfer("scattered", "all-to-allv", traffic=W / W.sum())
    # the 1 MiB message's 2 parts of 512 KiB copied out of chip1's buffer after the bytes
    assert p2p_drain_brute(rt, view, M) == 2 * MiB / f.chip.hbm_bandwidth
    assert c.time - c.fixed == pytest.approx(W.sum() * t.per_byte + p2p_drain_brute(rt, view, M),
                                             rel=1e-12)
    assert W.sum() == M.sum() + 55 * 4 * KiB


def test_a_simple_pair_sets_the_step_of_a_mostly_ll_matrix():
    # the mean pair runs LL but one message runs Simple: the operation waits for the Simple
    # message's steps (NCCL's ring hwLat, NVLink: LL 0.6 us, Simple 3.4 us in every release)
    f = built("dgx-h100")
    p = f.n_endpoints
    small = np.full((p, p), 1.0 * KiB)
    np.fill_diagonal(small, 0.0)
    big = small.copy()
    big[2, 5] = 96.0 * KiB
    rt = runtime("nccl")
    assert p2p_protocol(rt, group_view(f, "all-to-allv", M=big), big.sum() / p / p)[0] == "LL"
    a = cost(f, "all-to-allv", small, algorithm="scattered", runtime="nccl")
    b = cost(f, "all-to-allv", big, algorithm="scattered", runtime="nccl")
    lat = rt.hw_latency
    assert a.protocol == "LL" and b.protocol == "Simple"
    assert b.fixed - a.fixed == pytest.approx(
        lat[("nvlink", "ring", "Simple")] - lat[("nvlink", "ring", "LL")], rel=1e-9)


_SPECS = ["dgx-h100", "nvl72", "hgx-h800", "switch:8,chip=h200", "rail:servers=2,gpus=8,chip=h100",
          "fattree:k=4"]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(group=rank_group(_SPECS, max_ranks=12),
       release=st.sampled_from(["nccl@2.22.3", "nccl@2.25.1", "nccl@2.29.2", "nccl"]),
       scale=st.sampled_from([256, 2048, 8192, 24576, 131072]), seed=st.integers(0, 2**32 - 1))
def test_wire_is_each_pairs_own_protocol(group, release, scale, seed):
    # any rank subset of a (possibly degraded) fabric, a random integer matrix: the transfer
    # part is the routed matrix of wire bytes, each pair by its own protocol (from 2.22 a
    # message is all LL or all Simple); a uniform share keeps the scalar rule, which routes
    # the matrix itself
    f, ranks, _nodes, _idx = group
    p = len(ranks)
    M = np.random.default_rng(seed).integers(0, 9, size=(p, p)).astype(float) * scale / 4
    assume(M.sum() - np.trace(M) > 0)
    try:
        c = cost(f, "all-to-allv", M, algorithm="scattered", runtime=release, ranks=ranks)
    except RoutingError:   # the failures leave two drawn ranks no path: refused by name
        assume(False)
    rt = runtime(release)
    view = group_view(f, "all-to-allv", ranks, M)
    W = _wire(rt, view, M)
    t = view.transfer("scattered", "all-to-allv", traffic=W / W.sum())
    assert c.time - c.fixed == pytest.approx(W.sum() * t.per_byte + p2p_drain_brute(rt, view, M),
                                             rel=1e-9)


def test_a_sparse_matrix_is_not_priced_ll_by_its_empty_pairs():
    # ibgda's finding (board 19:49): on a degraded torus, every rank sending 55,378 B to the
    # first s ranks cost 12.90 us at s = 2 and 10.30 us at s = 3 (more bytes, less time). The
    # mean pair over all 36 entries (zeros and the diagonal included) fell under LL's 16 KiB
    # at s <= 2 and doubled the wire of messages NCCL runs Simple (55,378 B each, all s)
    f = built("torus:4x4,chip=h100").without(links=[("chip1", "chip2"), ("chip8", "chip12")])
    ranks = ["chip12", "chip9", "chip2", "chip5", "chip4", "chip11"]
    for b in (55378.0, 27689.0):
        times = []
        for s in range(1, 7):
            m = np.zeros((6, 6))
            m[:, :s] = b
            np.fill_diagonal(m, 0.0)
            c = cost(f, "all-to-allv", m, algorithm="scattered", ranks=ranks)
            assert c.protocol == "Simple"
            times.append(c.time)
        assert times == sorted(times), (b, times)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(group=rank_group(_SPECS, max_ranks=12),
       release=st.sampled_from(["nccl@2.22.3", "nccl@2.25.1", "nccl@2.29.2", "nccl"]),
       scale=st.sampled_from([256, 2048, 8192, 24576, 131072]), seed=st.integers(0, 2**32 - 1))
def test_more_bytes_on_pairs_that_keep_their_protocol_never_cost_less(group, release, scale,
                                                                     seed):
    # a matrix and one with more bytes on some pairs, every pair keeping its protocol (across
    # a pair's own LL / Simple switch NCCL itself may get faster): never less time
    f, ranks, _nodes, _idx = group
    p = len(ranks)
    rng = np.random.default_rng(seed)
    M = rng.integers(0, 9, size=(p, p)).astype(float) * scale / 4
    more = M + rng.integers(0, 2, size=(p, p)) * rng.integers(1, 9, size=(p, p)) * scale / 4
    assume(M.sum() - np.trace(M) > 0)
    view = group_view(f, "all-to-allv", ranks, M)
    rt = runtime(release)
    off = ~np.eye(p, dtype=bool)
    assume(all(p2p_protocol(rt, view, a, near)[0] == p2p_protocol(rt, view, b, near)[0]
               for a, b, near in zip(M[off], more[off], view.same_node()[off])))
    try:
        a = cost(f, "all-to-allv", M, algorithm="scattered", runtime=release, ranks=ranks)
        b = cost(f, "all-to-allv", more, algorithm="scattered", runtime=release, ranks=ranks)
    except RoutingError:   # the failures leave two drawn ranks no path: refused by name
        assume(False)
    assert b.time >= a.time * (1 - 1e-12)
