"""An operation of 0 bytes (session 31, runtime; ``analysis.cost``,
``analysis._runtime_cost.empty_operation``).

One rule: 0 s exactly where the runtime launches nothing for it, an error naming what it
launches elsewhere. NCCL's ``taskAppend`` (src/enqueue.cc) discards a collective of count 0
from 2.20.3 (before, the empty collective is a task and its kernel runs) and queues a 0-byte
send or receive as a task in every release; the ideal runtime has no software; the
symmetric-memory runtime's collectives are NCCL's symmetric kernels, chosen inside NCCL's
collective call after the discard. A refusal is a NotApplicableError (a SpecError and a
ValueError: one line at the CLI). Before session 31 every 0 was refused ("nbytes must be a
finite size > 0 bytes").
"""
import json
import re
import warnings

import numpy as np
import pytest
from cli_run import run_cli
from degrade import built

import fabric
from analysis import NotApplicableError, cost, cost_sizes

COLLECTIVES = ("all-reduce", "all-gather", "reduce-scatter", "broadcast", "reduce")
P2P = ("send-recv", "all-to-all", "all-to-allv")


def _zero(op, p):
    return np.zeros((p, p)) if op == "all-to-allv" else 0


@pytest.mark.parametrize("runtime, op, launches", [
    *[("nccl", op, False) for op in COLLECTIVES],
    *[("nccl@2.20.3", op, False) for op in ("all-reduce", "broadcast")],
    *[("nccl@2.19.4", op, True) for op in ("all-reduce", "broadcast")],
    ("nccl@2.18.3", "all-gather", True),
    *[(rt, op, True) for rt in ("nccl", "nccl@2.28.3") for op in ("send-recv", "all-to-allv")],
    # the model's all-to-all is nccl-tests' call: ncclAlltoAll from 2.28.3, whose count 0
    # taskAppend discards (session 32; was refused in every release)
    *[(rt, "all-to-all", False) for rt in ("nccl", "nccl@2.28.3")],
    ("nccl@2.27.7", "all-to-all", True),
    *[("ideal", op, False) for op in COLLECTIVES + P2P],
    *[("symmetric-memory", op, False) for op in ("all-reduce", "all-gather")],
    *[("symmetric-memory", op, True) for op in P2P],
    (fabric.VLLM_CUSTOM_ALLREDUCE, "all-reduce", True),
])
def test_zero_bytes_cost_nothing_only_where_nothing_launches(runtime, op, launches):
    f = built("dgx-h100")
    if launches:
        with pytest.raises(NotApplicableError, match=f"^{op} of 0 bytes under the .* runtime: "
                                                     ".*(launch|no source read)"):
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
        with pytest.raises(NotApplicableError, match="NCCL 2.19.4 launches an empty"):
            cost(f, "all-reduce", zero, runtime="nccl@2.19.4")
    # still refused: a bool, a negative size, below one byte
    with pytest.raises(TypeError, match="finite number > 0 bytes"):
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


def test_a_matrix_of_the_wrong_shape_is_named_before_its_total():
    # an all-to-allv matrix of zeros of the wrong shape was divided by its total 0 (a numpy
    # warning) before its shape was named
    f = built("dgx-h100")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for M in (np.zeros((3, 3)), np.ones((3, 3)), np.zeros((8, 8, 1))):
            for runtime in ("ideal", "nccl"):
                with pytest.raises(ValueError, match=r"traffic matrix \(bytes, 8 x 8\) .*"
                                                     + re.escape(f"shape {M.shape}")):
                    cost(f, "all-to-allv", M, runtime=runtime)


def test_the_cost_command_answers_what_cost_answers():
    # `cofabric cost --size 0` was refused by the size reader ("size '0' must be > 0 bytes");
    # now the command prints cost()'s answer; a sweep's sizes (report --sizes) stay > 0
    rc, out, err = run_cli(["cost", "dgx-h100", "--op", "all-reduce", "--size", "0,1KiB",
                            "--json"])
    assert rc == 0 and err == ""
    first, second = json.loads(out)
    assert (first["size"], first["algorithm"], first["time"]) == (0, "none", 0.0)
    assert second["size"] == 1024 and second["time"] > 0
    rc, out, err = run_cli(["cost", "dgx-h100", "--op", "all-reduce", "--size", "0",
                            "--runtime", "nccl@2.19.4"])
    assert rc == 2 and out == "" and err.count("\n") == 1
    assert "NCCL 2.19.4 launches an empty collective" in err
    rc, out, err = run_cli(["report", "dgx-h100", "--sizes", "0", "--out", "unused"])
    assert rc == 2 and "size '0' must be > 0 bytes" in err
