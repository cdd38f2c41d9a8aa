"""Each distinct message of an all-to-allv is planned once per cost (session 31, runtime;
``analysis._runtime_cost._p2p_plans``).

A cost of an all-to-allv plans every message (``_p2p_plan_array``: its protocol, parts and LL
bytes; session 32: one numpy pass over the distinct messages) for two readers: the operation's messages (``_p2p_messages``) and its batches
(``_p2p_pair_parts``), and an older release runs both again under its timing revisions
(``retime``). They share one plan of each distinct (bytes, peer kind) per cost; a plan made for
one runtime's p2p rules is never handed to another's.
"""
import numpy as np
from degrade import built
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from p2p_groups import group_view, rank_group

from analysis import _runtime_cost, cost
from analysis._collectives import _GroupView
from fabric import runtime


def test_one_plan_per_distinct_message(monkeypatch):
    # 8 ranks in one node, every pair its own size; nccl@2.28.3 is retimed by later revisions
    f = built("dgx-h100")
    M = np.arange(1.0, 65.0).reshape(8, 8) * 1000.0
    planned = []
    plan = _runtime_cost._p2p_plan_array

    def spy(rt, view, nbytes, kind, channels=None):
        planned.extend(zip(np.asarray(nbytes).ravel().tolist(),
                           np.broadcast_to(kind, np.shape(nbytes)).ravel().tolist()))
        return plan(rt, view, nbytes, kind, channels)

    monkeypatch.setattr(_runtime_cost, "_p2p_plan_array", spy)
    rt = runtime("nccl@2.28.3")
    assert rt.timing is not None
    cost(f, "all-to-allv", M, runtime=rt)
    # 56 messages to a peer of the node and 8 copies to itself, each once
    assert sorted(planned) == sorted((M[i, j], 2 if i == j else 1)
                                     for i in range(8) for j in range(8))


def _read(plan, k):
    """The ``k``-th distinct message's plan as ``_p2p_plan`` gives one."""
    return ("LL" if plan[0][k] else "Simple"), int(plan[1][k]), int(plan[2][k])


def test_plans_are_each_runtime_own():
    # one view planned under two releases whose p2p rules differ (ll_rule 0 and 2): each plan
    # is the release's own
    f = built("dgx-h100")
    M = np.array([[0.0, 1024.0], [20000.0, 3.0e6]])[np.ix_([0, 1] * 4, [1, 0] * 4)]
    view = group_view(f, "all-to-allv", None, M)
    kind = np.where(np.eye(8, dtype=bool), 2, 1)
    for name in ("nccl@2.18.3", "nccl", "nccl@2.18.3"):
        rt = runtime(name)
        values, kinds, plan, index = _runtime_cost._p2p_plans(rt, view, M, kind)
        for i in range(8):
            for j in range(8):
                k = index[i, j]
                assert (values[k], kinds[k]) == (M[i, j], kind[i, j])
                assert _read(plan, k) == _runtime_cost._p2p_plan(rt, view, M[i, j], True,
                                                                 copy=i == j)
    # the same bytes as other kinds on the same view (a view keeps the distinct messages it
    # found): each message still reads its own kind's plan
    rt = runtime("nccl")
    values, kinds, plan, index = _runtime_cost._p2p_plans(rt, view, M, np.ones((8, 8)))
    assert set(kinds.tolist()) == {1}
    assert [_read(plan, index[i, i]) for i in range(8)] == [
        _runtime_cost._p2p_plan(rt, view, M[i, i], True) for i in range(8)]


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(group=rank_group(["rail:servers=2,gpus=8,chip=h100", "fattree:k=4", "dgx-h100"],
                        max_ranks=12),
       release=st.sampled_from(["2.18.3", "2.22.3", "2.28.3", "2.30.7"]), data=st.data())
def test_each_message_reads_its_own_plan_on_degraded_groups(group, release, data):
    # every pair of an all-to-allv over a (perhaps degraded) group of one or several nodes:
    # the plan _p2p_plans hands it is _p2p_plan's for its bytes and its peer (a network
    # peer, a peer of its node, itself), planned twice on one view (the second from memo)
    f, _ranks, nodes, idx = group
    p = len(nodes)
    M = np.asarray(data.draw(st.lists(st.sampled_from([0.0, 16.0, 4096.0, 40000.0, 3e6]),
                                      min_size=p * p, max_size=p * p))).reshape(p, p)
    view = _GroupView(f, "all-to-allv", nodes, idx, None, None, True)
    same = view.same_node()
    kind = np.where(np.eye(p, dtype=bool), 2, same.astype(np.int64))
    rt = runtime(f"nccl@{release}")
    for _ in range(2):
        values, kinds, plan, index = _runtime_cost._p2p_plans(rt, view, M, kind)
        for i in range(p):
            for j in range(p):
                k = index[i, j]
                assert (values[k], kinds[k]) == (M[i, j], kind[i, j])
                assert _read(plan, k) == _runtime_cost._p2p_plan(
                    rt, view, M[i, j], bool(same[i, j]), copy=i == j)
