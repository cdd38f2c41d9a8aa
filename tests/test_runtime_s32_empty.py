"""Empty operations, session 32 (runtime; ``analysis.cost``,
``analysis._runtime_cost.empty_operation``): session 31's one rule (0 s exactly where the
runtime launches nothing, an error naming what it launches elsewhere) carried to

* an all-to-allv whose bytes are all on the diagonal, each rank's copy to itself, which no
  schedule moves (nor an all-to-all's own block): it moves no byte between ranks, so it is
  an empty operation (0 s under ``ideal`` and on one rank; under NCCL its 0-byte sends and
  receives launch: refused). Before, every runtime refused it with a plain ValueError ("moves
  no bytes between distinct ranks"), even on one rank, where an all-to-all of any size is 0 s.
* the model's all-to-all under NCCL 2.28.3 on: one ``ncclAlltoAll`` call, as nccl-tests'
  ``alltoall_perf`` makes it from NCCL 2.28 (src/alltoall.cu), which ``taskAppend``
  (src/enqueue.cc) discards at count 0 before expanding it into sends and receives. Before,
  refused in every release.
"""
import numpy as np
import pytest
from cli_run import run_cli
from degrade import built

import fabric
from analysis import NotApplicableError, cost

DIAG = np.diag(np.arange(1.0, 9.0) * 1e6)      # 8 ranks, 36 MB of copies to self


@pytest.mark.parametrize("runtime", ["ideal", "nccl", "nccl@2.18.3", "symmetric-memory"])
def test_bytes_only_on_the_diagonal_are_an_empty_operation(runtime):
    f = built("dgx-h100")
    if runtime != "ideal":
        with pytest.raises(NotApplicableError,
                           match=r"^all-to-allv with no byte between distinct ranks \(its "
                                 r"3\.6e\+07 bytes are each rank's copy to itself.*\) under the "
                                 r".* runtime: .*(launch|no source read)"):
            cost(f, "all-to-allv", DIAG, runtime=runtime)
        return
    r = cost(f, "all-to-allv", DIAG, runtime=runtime)
    assert (r.time, r.fixed, r.algbw, r.busbw, r.lower_bound, r.steps) == (0.0,) * 5 + ((),)
    # size: bytes per rank, the matrix's total over its ranks, as for any all-to-allv
    assert (r.size, r.algorithm, r.transport) == (36e6 / 8, "none", "none")
    ((label, why),) = r.candidates
    assert label == "none" and why.startswith("the ideal runtime") and "to itself" in why


def test_one_rank_of_an_all_to_allv_moves_nothing_as_an_all_to_all():
    f = built("dgx-h100")
    for runtime in ("nccl", "nccl@2.18.3", "symmetric-memory"):
        r = cost(f, "all-to-allv", [[5.0]], ranks=[3], runtime=runtime)
        assert (r.time, r.size, r.ranks) == (0.0, 5.0, 1)
        M = np.full((8, 8), 1000.0)
        assert cost(f, "all-to-allv", M, runtime="ideal").size == M.sum() / 8 == 8000.0
        assert r.time == cost(f, "all-to-all", 5.0, ranks=[3], runtime=runtime).time


def test_a_bad_diagonal_is_still_named():
    f = built("dgx-h100")
    for bad in (-1.0, np.nan, np.inf):
        M = DIAG.copy()
        M[2, 2] = bad
        with pytest.raises(ValueError, match="finite byte counts >= 0"):
            cost(f, "all-to-allv", M, runtime="ideal")
    with pytest.raises(ValueError, match="the traffic matrix's total"):
        cost(f, "all-to-allv", np.diag(np.full(8, 2.0 ** 62)), runtime="ideal")
    # one byte off the diagonal is an operation again, costed as before
    M = DIAG.copy()
    M[0, 1] = 4096.0
    assert cost(f, "all-to-allv", M, runtime="ideal").time > 0


def test_the_all_to_all_call_and_its_release_boundary():
    f = built("dgx-h100")
    assert [fabric.runtime(f"nccl@{v}").factors["alltoall_call"]
            for v in ("2.18.3", "2.27.7", "2.28.3", "2.30.7")] == [0, 0, 1, 1]
    r = cost(f, "all-to-all", 0, runtime="nccl@2.28.3")
    assert (r.time, r.algorithm) == (0.0, "none") and "ncclAlltoAll" in r.candidates[0][1]
    with pytest.raises(NotApplicableError, match="NCCL 2.27.7 has no ncclAlltoAll"):
        cost(f, "all-to-all", 0, runtime="nccl@2.27.7")
    # grouped sends of 0 bytes still launch under every release (no all-to-allv call)
    with pytest.raises(NotApplicableError, match="0-byte send and receive"):
        cost(f, "all-to-allv", np.zeros((8, 8)), runtime="nccl@2.28.3")
    rc, out, err = run_cli(["cost", "dgx-h100", "--op", "all-to-all", "--size", "0"])
    assert rc == 0 and err == "" and "none" in out
    rc, out, err = run_cli(["cost", "dgx-h100", "--op", "all-to-all", "--size", "0",
                            "--runtime", "nccl@2.27.7"])
    assert rc == 2 and out == "" and err.count("\n") == 1 and "has no ncclAlltoAll" in err


@pytest.mark.parametrize("matrix, kind", [
    (np.ones((8, 8), dtype=bool), "booleans"),          # was 1 byte a pair, silently
    ([[True] * 8] * 8, "booleans"),
    (np.full((8, 8), 1 + 1j), "complex numbers"),       # was its real part, with a warning
    ([["1KiB"] * 8] * 8, "text"),                       # was numpy's own message
    ("1KiB", "text"),
    ([[None] * 8] * 8, "values that are not numbers"),
    ({"a": 1}, "values that are not numbers"),
])
def test_a_traffic_matrix_of_the_wrong_kind_is_named(matrix, kind):
    # STYLE's rule: a wrong kind is a TypeError naming the argument; numbers held as Python
    # objects (ints, fractions) are still read
    f = built("dgx-h100")
    with pytest.raises(TypeError, match=r"^all-to-allv takes a traffic matrix \(bytes, 8 x 8\) "
                                        rf"as nbytes, got {kind}: "):
        cost(f, "all-to-allv", matrix, runtime="ideal")
    with pytest.raises(ValueError, match="got rows of different lengths"):
        cost(f, "all-to-allv", [[1.0] * 8] * 7 + [[1.0] * 7], runtime="ideal")
    ints = cost(f, "all-to-allv", np.full((8, 8), 1024, dtype=object), runtime="ideal")
    assert ints.time == cost(f, "all-to-allv", np.full((8, 8), 1024.0), runtime="ideal").time


@pytest.mark.parametrize("matrix, error, text", [
    (np.ones((4, 4), dtype=bool), TypeError, "got booleans"),   # was 1 byte a pair
    (np.full((4, 4), 1 + 1j), TypeError, "got complex numbers"),  # was the real part
    ([["a"] * 4] * 4, TypeError, "got text"),
    (np.ones((3, 3)), ValueError, r"got an array of shape \(3, 3\)"),
    (np.full((4, 4), -1.0), ValueError, r"not finite byte counts >= 0 \(\[0, 0\] = -1.0\)"),
    # one bool among numbers in a nested list (numpy coerces it to 1 before a dtype check):
    # fabric._arrays.number_array names it by position
    ([[1.0] * 4] * 3 + [[1.0, 1.0, True, 1.0]], TypeError,
     r"\[3\]\[2\] must be a number, got \w+\[3\]\[2\]=True \(a bool\)"),
])
def test_every_reader_of_a_traffic_matrix_checks_it_one_way(matrix, error, text):
    # one check (analysis._traffic.traffic_values) for cost's all-to-allv, schedule(traffic=),
    # throughput and link_loads: three of them read a bool or complex matrix silently
    from analysis import link_loads, schedule, throughput

    f = built("torus:2x2")
    for call in (lambda: cost(f, "all-to-allv", matrix, runtime="ideal"),
                 lambda: schedule("all-to-allv", "pairwise", 4, traffic=matrix),
                 lambda: throughput(f, matrix), lambda: link_loads(f, matrix)):
        with pytest.raises(error, match=text):
            call()


def test_a_traffic_matrix_object_checks_what_it_holds():
    # TrafficMatrix (public) took any data: a bool array was read as 1-byte pairs by
    # link_loads and throughput, a wrong shape failed later with an IndexError
    from analysis import TrafficMatrix

    with pytest.raises(TypeError, match=r"^data must be a traffic matrix \(4 x 4 bytes\), got "
                                        r"booleans"):
        TrafficMatrix("x", 4, data=np.ones((4, 4), dtype=bool))
    with pytest.raises(ValueError, match=r"got an array of shape \(3, 3\)"):
        TrafficMatrix("x", 4, data=np.ones((3, 3)))
    # check_number's one text (session 33: this check spelled its own)
    with pytest.raises(TypeError, match=r"^fill must be a finite number >= 0 bytes, got "
                                        r"fill=True \(a bool\)$"):
        TrafficMatrix("x", 4, fill=True)
    with pytest.raises(ValueError, match="^fill must be a finite number >= 0 bytes, got "
                                         "fill=-1.0$"):
        TrafficMatrix("x", 4, fill=-1.0)
    with pytest.raises(ValueError, match="n must be an integer >= 1, got n=0"):
        TrafficMatrix("x", 0, fill=1.0)
    data = np.full((4, 4), 2.0)
    assert TrafficMatrix("x", 4, data=data).data is data        # no copy of a float array
