"""An all-to-allv's ranks whose every message has the same parts are not replayed one by one
(session 30, runtime; ``analysis._runtime_cost.p2p_batches``).

A rank whose sent and received messages all take ``c`` parts puts every round of its schedule
on ``c`` channels: its placement is one rank's of an all-to-all of ``c`` parts
(``_busiest_p2p_channel``), so only the other ranks go through the per-rank replay, whose
time grows with ranks x rounds (a uniform matrix with one large pair replayed every rank).
Same answers: the replay over every rank is the reference.
"""
import numpy as np
from degrade import built
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from p2p_groups import group_view, skewed_pairs

from analysis import _runtime_cost
from analysis._runtime_cost import p2p_batches, p2p_schedule
from fabric import runtime

RELEASES = ["2.22.3", "2.27.7", "2.28.3", "2.28.7", "2.30.7"]


def test_one_large_pair_replays_its_two_ranks_only(monkeypatch):
    # sd200-ultra (128 ranks in one node): 1 KiB between every two ranks but rank 0 -> 1 256
    # MiB (2 parts): ranks 0 and 1 differ, the 126 others place as an all-to-all of 1 part
    f = built("sd200-ultra:chip=h100")
    M = np.full((128, 128), 1024.0)
    M[0, 1] = float(1 << 28)
    view = group_view(f, "all-to-allv", None, M)
    replayed = []
    replay = _runtime_cost._p2p_replay

    def spy(rule, reverse, group, p2pn, per_batch, rounds, p):
        replayed.append(p)
        return replay(rule, reverse, group, p2pn, per_batch, rounds, p)

    monkeypatch.setattr(_runtime_cost, "_p2p_replay", spy)
    assert p2p_batches(runtime("nccl"), view, M) == 5
    assert replayed == [2]


def _every_rank(rt, view, M):
    # the replay over every rank of the group, each round on max(send parts, receive parts),
    # each message's parts its own (_p2p_plan: bytes, peer in the node, copy to itself)
    q = rt.p2p
    if q["batch_rule"] == 0:
        return 1
    p2pn = _runtime_cost.p2p_channels(rt, view)[0]
    per_batch = int(q["work_per_batch"])
    counts = [int(c) for c in view.node_ranks()]
    group = 0
    if view.n_nodes > 1:
        group = (max(counts) if q["net_round_rule"] == 0
                 else _runtime_cost._p2p_group_size(per_batch, counts))
    ranks = np.arange(view.p)
    same = view.same_node()
    table = np.array([[_runtime_cost._p2p_plan(rt, view, M[i, j], bool(same[i, j]), copy=i == j)[1]
                       for j in ranks] for i in ranks])
    rounds = ((table[ranks, s], table[r, ranks]) for s, r in p2p_schedule(rt, view))
    return _runtime_cost._p2p_replay(q["batch_rule"], int(q["reverse_rounds"]), group, p2pn,
                                     per_batch, rounds, view.p)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pairs=skewed_pairs(["dgx-h100", "torus:4x4,chip=h100", "rail:servers=2,gpus=8,chip=h100",
                           "fattree:k=4"], small=(0.0, 1024.0, 40000.0, 1 << 20)),
       release=st.sampled_from(RELEASES))
def test_alike_ranks_answer_as_the_replay_of_every_rank(pairs, release):
    f, M = pairs
    view = group_view(f, "all-to-allv", None, M)
    rt = runtime(f"nccl@{release}")
    assert p2p_batches(rt, view, M) == _every_rank(rt, view, M)
