"""Closed forms of docs/sources.md s.2 (Thakur, Rabenseifner, Gropp 2005; Chan et al. 2007).

The expected values are worked by hand from the printed formulas, on sizes, rank
counts and rates the issue does not name, so a transcription error shows.
"""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from analysis._closed_form import (
    OPERATIONS,
    busbw_factor,
    closed_form,
    closed_form_algorithms,
    normalize_op,
)
from fabric import SpecError

# p = 16 (lg 4), n = 3200 B, alpha = 2 s, beta = 0.5 s/B, gamma = 0.25 s/B:
# (p-1)/p n = 3000; n lg p = 12800.
P, N, A, B, G = 16, 3200.0, 2.0, 0.5, 0.25
CASES = [
    ("broadcast", "binomial", 4 * A + 12800 * B),
    ("broadcast", "scatter-recursive-doubling", 8 * A + 6000 * B),
    ("broadcast", "scatter-ring", (4 + 15) * A + 6000 * B),
    ("reduce", "binomial", 4 * (A + N * B + N * G)),
    ("all-gather", "ring", 15 * A + 3000 * B),
    ("all-gather", "recursive-doubling", 4 * A + 3000 * B),
    ("all-gather", "bruck", 4 * A + 3000 * B),
    ("reduce-scatter", "recursive-halving", 4 * A + 3000 * (B + G)),
    ("reduce-scatter", "pairwise", 15 * A + 3000 * (B + G)),
    ("all-reduce", "recursive-doubling", 4 * (A + N * B + N * G)),
    ("all-reduce", "rabenseifner", 8 * A + 6000 * B + 3000 * G),
    ("all-reduce", "ring", 30 * A + 6000 * B + 3000 * G),
    ("all-to-all", "bruck", 4 * A + 1600 * 4 * B),
    ("all-to-all", "pairwise", 15 * A + N * B),
    # Chan et al. 2007
    ("all-gather", "lower-bound", 4 * A + 3000 * B),
    ("reduce-scatter", "lower-bound", 4 * A + 3000 * B + 3000 * G),
    ("all-reduce", "lower-bound", 4 * A + 6000 * B + 3000 * G),
    ("broadcast", "lower-bound", 4 * A + N * B),
    ("reduce", "lower-bound", 4 * A + N * B + 3000 * G),
]


@pytest.mark.parametrize("op, algorithm, expected", CASES)
def test_table_values(op, algorithm, expected):
    assert closed_form(op, algorithm, P, N, A, B, G) == pytest.approx(expected, rel=1e-15)


def test_every_table_entry_is_tested():
    tested = {(op, alg) for op, alg, _ in CASES}
    for op, algs in closed_form_algorithms().items():
        for alg in algs:
            if alg != "lower-bound" or op != "all-to-all":
                assert (op, alg) in tested, (op, alg)


def test_lg_is_log2_as_printed_and_the_bound_uses_its_ceiling():
    # 12 ranks: the table's lg p is log2 12; Chan et al.'s bound has ceil(log2 12) = 4.
    assert closed_form("all-gather", "bruck", 12, 1200, 1.0, 0.0) == pytest.approx(
        math.log2(12))
    assert closed_form("all-reduce", "recursive-doubling", 6, 100, 0.0, 1.0) == pytest.approx(
        100 * math.log2(6))
    assert closed_form("all-gather", "lower-bound", 12, 1200, 1.0, 0.0) == 4.0
    assert closed_form("all-gather", "ring", 12, 1200, 0.0, 1.0) == 1100.0


def test_one_rank_moves_nothing():
    for op, algs in closed_form_algorithms().items():
        for alg in algs:
            assert closed_form(op, alg, 1, 1e6, 1e-6, 1e-9, 1e-10) == 0.0


def test_aliases():
    assert closed_form("allreduce", "halving_doubling", 8, 1e6, 1e-6, 1e-9) == \
        closed_form("all-reduce", "rabenseifner", 8, 1e6, 1e-6, 1e-9)
    assert normalize_op("All_To_All") == "all-to-all"


@pytest.mark.parametrize("op, p, factor", [
    ("all-reduce", 8, 1.75), ("all-reduce", 2, 1.0), ("all-gather", 4, 0.75),
    ("reduce-scatter", 16, 15 / 16), ("all-to-all", 10, 0.9), ("broadcast", 8, 1.0),
    ("reduce", 3, 1.0), ("all-to-allv", 5, 0.8)])
def test_busbw_factor(op, p, factor):
    # nccl-tests doc/PERFORMANCE.md
    assert busbw_factor(op, p) == pytest.approx(factor)


@given(k=st.integers(0, 16), n=st.floats(1, 1e12), a=st.floats(0, 1e-3),
       b=st.floats(0, 1e-8), g=st.floats(0, 1e-9))
@settings(max_examples=200, deadline=None)
def test_no_formula_beats_its_lower_bound(k, n, a, b, g):
    # the table's domain: powers of two (module docstring of analysis._closed_form)
    p = 2**k
    for op, algs in closed_form_algorithms().items():
        bound = closed_form(op, "lower-bound", p, n, a, b, g)
        for alg in algs:
            t = closed_form(op, alg, p, n, a, b, g)
            assert t >= bound * (1 - 1e-12), (op, alg, p)


@pytest.mark.parametrize("args, error", [
    (("all-reduce", "ring", 8, 0, 1e-6, 1e-9), ValueError),
    (("all-reduce", "ring", 8, -5, 1e-6, 1e-9), ValueError),
    (("all-reduce", "ring", 8, math.inf, 1e-6, 1e-9), ValueError),
    (("all-reduce", "ring", 0, 1e6, 1e-6, 1e-9), ValueError),
    (("all-reduce", "ring", 2.5, 1e6, 1e-6, 1e-9), TypeError),
    (("all-reduce", "ring", 8, 1e6, -1e-6, 1e-9), ValueError),
    (("all-reduce", "ring", 8, 1e6, 1e-6, 1e-9, -1.0), ValueError),
    (("all-shuffle", "ring", 8, 1e6, 1e-6, 1e-9), SpecError),
    (("all-reduce", "bruck", 8, 1e6, 1e-6, 1e-9), SpecError),
    (("all-reduce", "warp", 8, 1e6, 1e-6, 1e-9), SpecError),
    (("all-to-allv", "lower-bound", 8, 1e6, 1e-6, 1e-9), SpecError),
])
def test_bad_input(args, error):
    with pytest.raises(error):
        closed_form(*args)


def test_error_names_the_problem():
    with pytest.raises(SpecError, match="all-reduce.*algorithm 'bruck'"):
        closed_form("all-reduce", "bruck", 8, 1e6, 1e-6, 1e-9)
    with pytest.raises(ValueError, match="nbytes=0"):
        closed_form("all-reduce", "ring", 8, 0, 1e-6, 1e-9)


def test_operations_listed():
    assert set(OPERATIONS) >= {"all-reduce", "all-gather", "reduce-scatter", "broadcast",
                               "reduce", "all-to-all", "all-to-allv"}
