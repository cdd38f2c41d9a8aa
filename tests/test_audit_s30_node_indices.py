"""Audit, session 30: ``Fabric.node_indices`` answers one index and a one-dimensional int64
array by a fast path (the router and transport call it ~10-14 k times per sixteenth of the
suite; benchmarks/bench_node_indices.py measures it). The fast path must give the general
path's answers and errors: each property hands the same values once in the fast path's form
and once in a form only the general path takes (a 0-d array, a list) and compares outcomes.
These pin a speed path against the general one, so they pass on the parent by construction;
they fail if the fast path answers where the general path refuses, or answers otherwise.
"""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import topologies
from fabric import NodeError

F = topologies.build("torus:2x3")
N = len(F.nodes)


def outcome(x):
    try:
        r = F.node_indices(x, "src")
    except Exception as e:  # noqa: BLE001 - the error itself is the answer compared
        return type(e), str(e)
    return r.dtype, r.shape, r.tolist()


EDGES = [0, N - 1, N, -1, -N, 2**31, 2**62, 2**63 - 1, 2**63, -2**63, -2**63 - 1, 2**64 - 1,
         2**64, 2**70]
INTS = st.one_of(st.sampled_from(EDGES), st.integers(-3, N + 3), st.integers(-2**66, 2**66))
NUMPY_INTS = [np.int8, np.uint8, np.int16, np.int32, np.uint32, np.int64, np.uint64]


@settings(max_examples=60)
@given(INTS, st.sampled_from([None, *NUMPY_INTS]))
def test_one_index_answers_as_the_general_path(v, kind):
    if kind is not None:
        info = np.iinfo(kind)
        if not info.min <= v <= info.max:
            return
        v = kind(v)
    assert outcome(v) == outcome(np.array(v))      # a 0-d array goes the general way


ELEMENTS = st.one_of(st.integers(-2, N + 2), st.sampled_from([-2**63, 2**63 - 1, 2**40]))


@settings(max_examples=60)
@given(st.lists(ELEMENTS, min_size=1, max_size=40), st.sampled_from([1, 2, -1]))
def test_an_int64_array_answers_as_the_general_path(values, step):
    a = np.array(values, dtype=np.int64)[::step]            # strided views too
    assert outcome(a) == outcome(a.tolist())               # a list goes the general way


def test_a_valid_int64_array_is_returned_as_is():
    for a in (np.array([N - 1]), np.arange(40) % N, np.arange(N)[::-2]):
        assert F.node_indices(a) is a


def test_bad_single_indices_keep_their_errors():
    assert outcome(N) == (NodeError, f"torus:2x3: src holds node index {N}, outside 0..{N - 1}")
    assert outcome(np.int64(-1)) == (NodeError, "torus:2x3: src holds node index -1, outside 0..5")
    assert outcome(True)[1] == "src must be node indices (integers), got an array of dtype bool"
    assert outcome("chip0")[1] == "src must be node indices (integers), got an array of dtype <U5"
    assert outcome(np.array([0, N]))[1] == f"torus:2x3: src holds node index {N}, outside 0..5"
