"""Each distinct message of an all-to-allv is planned once per cost (session 31, runtime;
``analysis._runtime_cost._p2p_plans``).

A cost of an all-to-allv plans every message (``_p2p_plan``: its protocol, parts and LL bytes)
for two readers: the operation's messages (``_p2p_messages``) and its batches
(``_p2p_pair_parts``), and an older release runs both again under its timing revisions
(``retime``). They share one plan of each distinct (bytes, peer kind) per cost; a plan made for
one runtime's p2p rules is never handed to another's.
"""
import numpy as np
from degrade import built
from p2p_groups import group_view

from analysis import _runtime_cost, cost
from fabric import runtime


def test_one_plan_per_distinct_message(monkeypatch):
    # 8 ranks in one node, every pair its own size; nccl@2.28.3 is retimed by later revisions
    f = built("dgx-h100")
    M = np.arange(1.0, 65.0).reshape(8, 8) * 1000.0
    planned = []
    plan = _runtime_cost._p2p_plan

    def spy(rt, view, nbytes, local=False, copy=False, channels=None):
        planned.append((nbytes, local, copy))
        return plan(rt, view, nbytes, local, copy, channels)

    monkeypatch.setattr(_runtime_cost, "_p2p_plan", spy)
    rt = runtime("nccl@2.28.3")
    assert rt.timing is not None
    cost(f, "all-to-allv", M, runtime=rt)
    # 56 messages to a peer of the node and 8 copies to itself, each once
    assert sorted(planned) == sorted((M[i, j], True, i == j) for i in range(8) for j in range(8))


def test_plans_are_each_runtime_own():
    # one view planned under two releases whose p2p rules differ (ll_rule 0 and 2): each plan
    # is the release's own
    f = built("dgx-h100")
    M = np.array([[0.0, 1024.0], [20000.0, 3.0e6]])[np.ix_([0, 1] * 4, [1, 0] * 4)]
    view = group_view(f, "all-to-allv", None, M)
    kind = np.where(np.eye(8, dtype=bool), 2, 1)
    for name in ("nccl@2.18.3", "nccl", "nccl@2.18.3"):
        rt = runtime(name)
        values, kinds, plans, index = _runtime_cost._p2p_plans(rt, view, M, kind)
        for i in range(8):
            for j in range(8):
                k = index[i, j]
                assert (values[k], kinds[k]) == (M[i, j], kind[i, j])
                assert plans[k] == _runtime_cost._p2p_plan(rt, view, M[i, j], True, copy=i == j)
