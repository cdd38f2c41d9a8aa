"""``analysis._decode.collective_seconds`` keeps each answer per fabric: a decode step, a
prefill and a serving frontier ask the same collective of the same chips many times (the
default report: 7,844 such calls, 2,803 distinct). The memo must give the same float, and
must not keep what a caller can change under the same name."""

import dataclasses

import pytest

import analysis
import topologies
from analysis._decode import collective_seconds, slowest_group_seconds
from fabric import runtime


@pytest.fixture
def counted(monkeypatch):
    """analysis.cost, counting its calls (the default collective looks it up there)."""
    real = analysis.cost
    calls = []

    def cost(*args, **kwargs):
        calls.append(args[1:3])
        return real(*args, **kwargs)

    monkeypatch.setattr(analysis, "cost", cost)
    return calls


def _fabric():
    return topologies.build("switch:8,chip=b200")      # a new object: an empty memo


def test_the_same_question_is_costed_once_and_answered_the_same(counted):
    f = _fabric()
    first = collective_seconds(f, "all-reduce", 1 << 20, range(4))
    again = [collective_seconds(f, "all-reduce", float(1 << 20), (0, 1, 2, 3)) for _ in range(3)]
    assert counted == [("all-reduce", 1 << 20)]
    assert again == [first] * 3 and type(first) is float
    # whatever differs is costed afresh: size, chips, operation, runtime, algorithm
    collective_seconds(f, "all-reduce", 1 << 21, range(4))
    collective_seconds(f, "all-reduce", 1 << 20, range(1, 5))
    collective_seconds(f, "all-gather", 1 << 20, range(4))
    collective_seconds(f, "all-reduce", 1 << 20, range(4), runtime="ideal")
    collective_seconds(f, "all-reduce", 1 << 20, range(4), algorithm="ring")
    assert len(counted) == 6
    # another fabric object has its own memo
    collective_seconds(_fabric(), "all-reduce", 1 << 20, range(4))
    assert len(counted) == 7


def test_a_slowest_group_search_reuses_the_groups_it_costed(counted):
    f = topologies.build("torus:4x4")     # direct: every group is costed on its own chips
    t = slowest_group_seconds(f, "all-reduce", 1 << 20, range(16), 4)
    n = len(counted)
    assert n == 4
    assert slowest_group_seconds(f, "all-reduce", 1 << 20, range(16), 4) == t
    assert len(counted) == n


def test_what_a_caller_can_change_under_one_name_is_not_kept(counted):
    f = _fabric()
    rt = runtime("nccl")
    slow = dataclasses.replace(rt, base_latency={k: 10 * v for k, v in rt.base_latency.items()})
    assert slow == rt                   # a Runtime compares by its name alone
    a = collective_seconds(f, "all-reduce", 1 << 10, range(8), runtime=rt)
    b = collective_seconds(f, "all-reduce", 1 << 10, range(8), runtime=slow)
    assert b > a and len(counted) == 2
    # a stand-in for analysis.cost (a test's fake) is its own key
    calls = []

    def fake(fabric, op, nbytes, **kw):
        calls.append(op)
        return type("R", (), {"time": 1e-6})()

    before = collective_seconds(f, "all-gather", 1 << 10, range(8))
    analysis.cost = fake
    assert collective_seconds(f, "all-gather", 1 << 10, range(8)) == 1e-6 != before
    # a caller's own collective is called every time (it may count)
    for _ in range(2):
        collective_seconds(f, "all-gather", 1 << 10, range(8), collective=fake)
    assert calls == ["all-gather"] * 3
