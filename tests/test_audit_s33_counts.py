"""Audit session 33: a count too large for the models is refused by name.

``fabric._units.check_count`` took any integer above its minimum, so ``10**400`` tokens
passed and overflowed the first float product (``OverflowError: int too large to convert to
float``, naming nothing; ``cofabric decode --batch 1e400-digits`` an internal error, exit 3)
in decode_step, serving_point, prefill_time, moe_exchange, cost and the speculative model;
cost took ``iterations=10**400`` and moe_exchange ``routing=10**400``. ONE rule, in
check_count: a count beyond a float's range is out of range (the models compute in floats);
smaller counts meet each caller's own bound (the memory fit, MAX_BYTES, an array's length).

numpy's own limit on an array (``fabric._arrays.check_length``): traffic() with 2**62 tokens
on 8 ranks crashed the interpreter (np.repeat's length wrapped), 10**30 experts answered
"Maximum allowed size exceeded", a shift of 2**63 "Python int too large to convert to C
long", expert_activation with 2**62 experts "array is too big" (its own check compared the
length, not the bytes), traffic(True, ...) an AttributeError.
"""
import numpy as np
import pytest
from cli_run import run_cli

import topologies
from analysis import (
    cost,
    decode_step,
    expected_accepted_tokens,
    expert_activation,
    grouped_gemm_rate,
    moe_exchange,
    prefill_time,
    pull_rounds,
    schedule,
    serving_point,
    traffic,
)
from analysis._mla_measured import mla_generation_time
from fabric import SpecError
from fabric._units import check_count

HUGE = 10**400
_F = topologies.build("switch:8,chip=h100")
_M = "deepseek-v3"


def _exchange(**kw):
    return moe_exchange(_F, _M, **{"tokens_per_rank": 4, "ep": 8, "kernel": "pplx",
                                   "dispatch_bytes": 1, "combine_bytes": 2, **kw})


CASES = {
    **{f"decode {k}": (lambda k=k: decode_step(_M, _F, **{"batch": 1, "context": 128,
                                                          k: HUGE}))
       for k in ("batch", "context", "tokens_per_sequence", "graph_batch")},
    **{f"serving {k}": (lambda k=k: serving_point(_M, _F, **{"isl": 128, "osl": 8,
                                                             "batch": 1, k: HUGE}))
       for k in ("isl", "osl", "batch", "draft_length", "context", "max_batched_tokens")},
    "prefill isl": lambda: prefill_time(_M, _F, isl=HUGE),
    "exchange tokens_per_rank": lambda: _exchange(tokens_per_rank=HUGE),
    "exchange routing": lambda: _exchange(routing=HUGE),
    **{f"cost {k}": (lambda k=k: cost(_F, "all-reduce", 4096, **{k: HUGE}))
       for k in ("ops_per_launch", "iterations")},
    "speculative draft_length": lambda: expected_accepted_tokens(HUGE, 0.8),
    "traffic seed": lambda: traffic(8, "moe", seed=HUGE),
    "traffic shift": lambda: traffic(8, "shift", shift=-HUGE),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_count_beyond_a_float_is_refused_by_name(case):
    with pytest.raises(SpecError, match=r"=10{39}\.\.\. \(401 digits\): beyond a float's range"
                                        r"|=-10{39}\.\.\. \(401 digits\): beyond"):
        CASES[case]()


def test_check_count_says_why():
    with pytest.raises(SpecError, match=r"^tokens must be an integer >= 1, got tokens=10+\.\.\. "
                                        r"\(401 digits\): beyond a float's range \(\+-1\.798e\+308"):
        check_count(HUGE, "tokens", 1)
    assert check_count(10**308, "tokens", 1) == 10**308        # a float holds it: a count
    with pytest.raises(SpecError, match=r"^position must be an integer in \[0, 8\), got"):
        check_count(HUGE, "position", 0, below=8)       # a caller's own bound is said first


def test_the_decode_cli_refuses_such_a_batch_in_one_line():
    rc, out, err = run_cli(["decode", "switch:8,chip=h100", "--model", _M, "--batch",
                            str(HUGE)])
    assert (rc, out, len(err.splitlines())) == (2, "", 1), err
    assert "batch must be an integer >= 1" in err and "beyond a float's range" in err


@pytest.mark.parametrize("call, match", [
    (lambda: traffic(8, "moe", tokens=2**62),
     r"^tokens=4611686018427387904 on each of 8 ranks is more than an array can hold"),
    (lambda: traffic(8, "moe", experts=10**30), r"^experts=10{30} is more than an array"),
    (lambda: traffic(2**40, "shift"), r"^a traffic matrix of 1099511627776 endpoints is more"),
    (lambda: expert_activation(2**62, 8, 16),
     r"^experts=4611686018427387904 is more than an array can hold \(1152921504606846975 items"),
])
def test_an_array_numpy_cannot_make_is_refused_by_name(call, match):
    with pytest.raises(SpecError, match=match):
        call()


def test_a_shift_past_an_int64_is_the_shift_it_equals():
    assert (traffic(8, "shift", shift=2**64 + 3).data == traffic(8, "shift", shift=3).data).all()
    assert (traffic(8, "shift", shift=-(2**63) - 1).data
            == traffic(8, "shift", shift=7).data).all()


@pytest.mark.parametrize("n", [True, 8.0, "8"])
def test_traffic_names_an_endpoint_count_of_another_kind(n):
    with pytest.raises(TypeError, match="^fabric_or_n must be a Fabric or a number of endpoints"):
        traffic(n, "shift")


@pytest.mark.parametrize("kind", [np.int64, np.uint64])
def test_numpy_counts_of_a_moe_matrix_are_the_ints_they_equal(kind):
    # a probe: np.uint64 experts made float indices (an IndexError);
    # np.int64 tokens x 8 ranks wrapped (past the array check: the crash above)
    want = traffic(8, "moe", experts=64, top_k=2, tokens=4).data
    got = traffic(8, "moe", experts=kind(64), top_k=kind(2), tokens=kind(4)).data
    assert (got == want).all()
    with pytest.raises(SpecError, match="^tokens=4611686018427387905 on each of 8 ranks"):
        traffic(8, "moe", tokens=kind(2**62 + 1))


_DIGITS = "9" * 5000          # more than int() reads (Python's 4300-digit limit)


@pytest.mark.parametrize("argv", [
    ["cost", f"torus:{_DIGITS}x4", "--op", "all-reduce", "--size", "4KiB"],
    ["cost", f"switch:{_DIGITS}", "--op", "all-reduce", "--size", "4KiB"],
    ["cost", "hgx-h200", "--op", "all-reduce", "--size", "4KiB", "--ranks", _DIGITS],
    ["decode", "hgx-h200", "--model", _M, "--layout", f"tp={_DIGITS}"],
    ["route", "torus:4x4", "0", _DIGITS],
    ["metrics", "torus:4x4", "--fail-chip", _DIGITS],
])
def test_a_numeral_longer_than_int_reads_is_one_line(argv):
    # was: int() after is_numeral, "Exceeds the limit (4300 digits) for integer string
    # conversion": an internal error, exit 3
    rc, out, err = run_cli(argv)
    assert (rc, out, len(err.splitlines())) == (2, "", 1), err
    assert "internal error" not in err


def test_a_rank_range_past_the_last_rank_is_refused_before_it_is_listed():
    # was: a list of 10**12 ranks (MemoryError, exit 3, or the machine's memory)
    rc, out, err = run_cli(["cost", "hgx-h200", "--op", "all-reduce", "--size", "4KiB",
                            "--ranks", f"0-{10**12}"])
    want = f"cofabric cost: error: hgx-h200: rank {10**12} is out of range 0..7"
    assert (rc, out, err.strip()) == (2, "", want)


# -- a count is computed with as check_count returns it (a Python int) ----------------------


def test_no_package_statement_drops_check_counts_int():
    """33 statements called check_count for its error only and computed on with the value as
    given: a numpy count wrapped in int64 arithmetic (vllm_graph_batch(8, max_num_seqs=
    np.int64(2**62)) answered None, the doubled count negative). Each now computes with the
    returned int (a dataclass stores it): no line of the packages starts with the call."""
    from source_trees import spelled

    assert spelled(r"\n[ \t]+check_count\(") == []


def test_numpy_counts_answer_as_the_ints_they_equal():
    from analysis import vllm_graph_batch
    from fabric import exchange_kernel

    big = np.int64(2**62)
    assert vllm_graph_batch(8, max_num_seqs=big) == vllm_graph_batch(8, max_num_seqs=2**62) == 8
    # threads x vector wrapped to 0: a division-by-zero warning and 0 rounds
    assert pull_rounds(4096, big, 16) == pull_rounds(4096, 2**62, 16) == 1
    k = exchange_kernel("pplx")
    assert type(k.qp_chunk) is int and type(k.message_header) is int


@pytest.mark.parametrize("call, match", [
    (lambda: pull_rounds(float("nan"), 256, 16), "^nbytes must be a finite number >= 0 bytes"),
    (lambda: pull_rounds(4096, 0, 16), "^threads must be an integer >= 1"),
    (lambda: schedule("all-gather", "bruck", 2**63), r"^p=9223372036854775808 ranks is more"),
    (lambda: grouped_gemm_rate("b200", "fp4", HUGE),
     "^rows must be a finite number >= 0 rows per group"),   # check_number's words, s38
    (lambda: mla_generation_time("b200", 32, 512, 64, 2, HUGE, 2047),
     "^batch must be a finite number >= 0"),
])
def test_sizes_and_ranks_no_float_or_array_holds_are_named(call, match):
    # was: nan 'cannot convert float NaN to integer', 0 threads a ZeroDivisionError,
    # bruck p=2**63 a Schedule of empty steps, 10**400 rows/batch an OverflowError
    with pytest.raises(SpecError, match=match):
        call()


def test_a_probability_no_float_holds_is_no_distribution():
    from analysis import expected_max

    # was: float()'s OverflowError naming nothing
    with pytest.raises(ValueError, match=r"^pmf must be a non-empty list of probabilities"):
        expected_max([0.5, HUGE], 2)
    assert expected_max([0.25, 0.25, 0.5], 3) == 1.859375
