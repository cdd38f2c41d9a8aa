"""An operation of 0 bytes (session 31, runtime; ``analysis.cost``,
``analysis._runtime_cost.empty_operation``).

One rule: 0 s exactly where the runtime launches nothing for it, a ValueError naming what it
launches elsewhere. NCCL's ``taskAppend`` (src/enqueue.cc) discards a collective of count 0
from 2.20.3 (before, the empty collective is a task and its kernel runs) and queues a 0-byte
send or receive as a task in every release; the ideal runtime has no software; the
symmetric-memory runtime's collectives are NCCL's symmetric kernels, chosen inside NCCL's
collective call after the discard. Before session 31 every 0 was refused ("nbytes must be a
finite size > 0 bytes").
"""
import numpy as np
import pytest
from degrade import built

import fabric
from analysis import cost, cost_sizes

COLLECTIVES = ("all-reduce", "all-gather", "reduce-scatter", "broadcast", "reduce")
P2P = ("send-recv", "all-to-all", "all-to-allv")


def _zero(op, p):
    return np.zeros((p, p)) if op == "all-to-allv" else 0


@pytest.mark.parametrize("runtime, op, launches", [
    *[("nccl", op, False) for op in COLLECTIVES],
    *[("nccl@2.20.3", op, False) for op in ("all-reduce", "broadcast")],
    *[("nccl@2.19.4", op, True) for op in ("all-reduce", "broadcast")],
    ("nccl@2.18.3", "all-gather", True),
    *[(rt, op, True) for rt in ("nccl", "nccl@2.28.3") for op in P2P],
    *[("ideal", op, False) for op in COLLECTIVES + P2P],
    *[("symmetric-memory", op, False) for op in ("all-reduce", "all-gather")],
    *[("symmetric-memory", op, True) for op in P2P],
    (fabric.VLLM_CUSTOM_ALLREDUCE, "all-reduce", True),
])
def test_zero_bytes_cost_nothing_only_where_nothing_launches(runtime, op, launches):
    f = built("dgx-h100")
    if launches:
        with pytest.raises(ValueError, match=f"^{op} of 0 bytes under the .* runtime: .*"
                                             "(launch|no source read)"):
            cost(f, op, _zero(op, 8), runtime=runtime)
        return
    r = cost(f, op, _zero(op, 8), runtime=runtime, devices_per_process=4, ops_per_launch=3)
    assert (r.time, r.fixed, r.algbw, r.busbw, r.lower_bound) == (0.0,) * 5
    assert (r.size, r.ranks, r.steps, r.algorithm, r.transport) == (0.0, 8, (), "none", "none")
    assert r.runtime == fabric.runtime(runtime).name
    ((label, why),) = r.candidates
    assert label == "none" and ("nothing launches" in why or "no byte to move" in why)


def test_every_spelling_of_zero_and_the_release_boundary():
    f = built("dgx-h100")
    for zero in (0, 0.0, -0.0, np.int64(0), np.float32(0), "0", "0B", "0 KiB"):
        assert cost(f, "all-reduce", zero).time == 0.0
        assert cost(f, "all-reduce", zero, runtime="nccl@2.20.3").time == 0.0
        with pytest.raises(ValueError, match="NCCL 2.19.4 launches an empty collective"):
            cost(f, "all-reduce", zero, runtime="nccl@2.19.4")
    # still refused: a bool, a negative size, below one byte
    with pytest.raises(TypeError, match="number of bytes"):
        cost(f, "all-reduce", False)
    with pytest.raises(ValueError, match="nbytes=-1"):
        cost(f, "all-reduce", -1)
    with pytest.raises(ValueError, match="at least 1 byte"):
        cost(f, "all-reduce", 0.5)
    # cost_sizes is cost at each size
    assert [r.time == 0.0 for r in cost_sizes(f, "all-gather", [0, 4096])] == [True, False]
    # one rank: nothing to move under any runtime, as for any size
    assert cost(f, "all-reduce", 0, ranks=[3], runtime="nccl@2.18.3").time == 0.0


def test_bad_input_is_named_before_the_empty_answer():
    f = built("dgx-h100")
    with pytest.raises(fabric.SpecError, match="unknown algorithm"):
        cost(f, "all-reduce", 0, algorithm="quantum")
    with pytest.raises(fabric.NodeError, match="rank 99 is out of range"):
        cost(f, "all-reduce", 0, ranks=[0, 99])
    with pytest.raises(ValueError, match="unknown transport"):
        cost(f, "all-reduce", 0, transport="pigeon")
    # a failed chip, a chip the failures cut off: named, even with nothing to move
    with pytest.raises(fabric.NodeError, match="chip2 .* has failed"):
        cost(f.without(chips=["chip2"]), "all-reduce", 0, ranks=["chip1", "chip2"])
    cut = f.without(links=[("chip1", v) for v in f.graph["chip1"]])
    with pytest.raises(fabric.RoutingError, match="chip1 is cut off"):
        cost(cut, "all-reduce", 0, ranks=["chip0", "chip1"], runtime="ideal")
