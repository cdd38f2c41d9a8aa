"""fabric._memo.fabric_memo: one dict per (fabric, owner), held as long as the fabric lives."""

import copy
import gc
import weakref

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import topologies
from fabric import _memo
from fabric._memo import fabric_memo

FABRICS = [topologies.build("torus:2x2"), topologies.build("torus:2x2"),
           topologies.build("mesh:3")]
OWNERS = ["a", "b", "analysis._bounds"]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, len(FABRICS) - 1), st.sampled_from(OWNERS),
                          st.integers(0, 3), st.integers()), max_size=30))
def test_memo_is_a_dict_per_fabric_object_and_owner(ops):
    """Brute force: a reference dict keyed by (the fabric's identity, owner, key). Two
    fabrics built from the same spec are different objects and never share a memo."""
    token = object()     # a fresh owner per example: earlier examples' entries stay apart
    ref = {}
    for i, owner, key, value in ops:
        fabric_memo(FABRICS[i], (token, owner))[key] = value
        ref[(i, owner, key)] = value
    for i, f in enumerate(FABRICS):
        for owner in OWNERS:
            got = fabric_memo(f, (token, owner))
            want = {k: v for (j, o, k), v in ref.items() if j == i and o == owner}
            assert got == want
            assert fabric_memo(f, (token, owner)) is got


def test_memo_lives_as_long_as_its_fabric_and_is_not_copied(frozen_heap):
    f = topologies.build("torus:2x3")
    memo = fabric_memo(f, "test")
    memo["x"] = 1
    twin = copy.copy(f)
    assert fabric_memo(twin, "test") == {} and fabric_memo(f, "test") == {"x": 1}
    assert fabric_memo(f.without(chips=["chip0"]), "test") == {}
    alive = weakref.ref(f)
    del f, twin
    gc.collect()
    assert alive() is None                   # the memo did not keep its fabric alive
    assert all(m is not memo for memos in _memo._MEMOS.values() for m in memos.values())


def test_analyses_cache_under_their_module_names():
    from analysis import ring_search
    from analysis._bounds import cut_seconds_per_byte

    f = topologies.build("torus:3x3")
    assert ring_search(f) is ring_search(f)      # the second call is the memo's
    assert set(fabric_memo(f, "analysis._schedules_multi")) == {(tuple(f.endpoints), 0)}
    a = cut_seconds_per_byte(f, f.endpoint_indices, "all-reduce")
    assert list(fabric_memo(f, "analysis._bounds").values()) == [a]


@pytest.mark.parametrize("spec", ["torus:3x3", "nvl72", "fattree:k=4", "mesh:1"])
def test_cached_rings_and_rank_indices_are_read_only(spec):
    """What a fabric or a memo hands out is shared by every later caller: changing it in
    place must fail, not corrupt later analyses (audit s15: a sorted ring was priced)."""
    f = topologies.build(spec)
    with pytest.raises(ValueError, match="read-only"):
        f.endpoint_indices[:] = 0
    from analysis import ring_search

    rings = ring_search(f)
    assert isinstance(rings, tuple)
    for ring in rings:
        with pytest.raises(ValueError, match="read-only"):
            ring[:] = 0


def test_a_ring_changed_by_its_caller_is_not_priced():
    from analysis import cost, ring_search

    f = topologies.build("torus:3x3")
    before = cost(f, "all-gather", 2**20, runtime="ideal", algorithm="multi-ring").time
    ring = ring_search(f)[0]
    with pytest.raises(ValueError):
        ring[:] = sorted(ring)
    assert cost(f, "all-gather", 2**20, runtime="ideal", algorithm="multi-ring").time == before
