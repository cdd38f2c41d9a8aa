"""An all-to-allv's messages planned as arrays, their distinct pairs found once a cost
(session 32, speed; ``analysis._runtime_cost._p2p_plan_array``, ``_p2p_plans``,
``_distinct_messages``, ``_sorted_distinct``).

The plan of every distinct message is one numpy pass (``_p2p_plan_array``; the scalar
``_p2p_plan`` is one message of it), checked message by message against NCCL's own
statements (tests/p2p_groups.py: ``nccl_message`` from 2.22, ``nccl_chunked_message``
before) on perhaps degraded groups of one or several nodes; the messages' distinct pairs are
found once a cost, by one search over the whole matrix that the operation's messages and its
batches both read.
"""
import numpy as np
from degrade import built
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from p2p_groups import nccl_chunked_message, nccl_message, rank_group, version

from analysis import _runtime_cost, cost
from analysis._collectives import _GroupView
from fabric import runtime

#: sizes at NCCL's plan boundaries (the LL threshold, part sizes, chunk steps) and around them
EDGES = [0, 1, 4095, 16383, 16384, 16385, 32769, 65535, 65536, 65537, 131072, 131073,
         262145, 524288, 524289, 1 << 20, (1 << 20) + 1, 3 << 22, (16 << 20) + 1, 1 << 28]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(group=rank_group(["rail:servers=2,gpus=8,chip=h100", "fattree:k=4", "dgx-h100",
                         "rail:servers=2,gpus=4,chip=gb200"], max_ranks=12),
       release=st.sampled_from(["2.18.3", "2.21.5", "2.22.3", "2.27.3", "2.28.9", "2.29.2",
                                "2.30.7"]),
       messages=st.lists(st.tuples(st.one_of(st.sampled_from(EDGES), st.integers(0, 1 << 27),
                                             st.floats(1.0, 1e8)),
                                   st.integers(0, 2)), min_size=1, max_size=30))
def test_array_plans_are_nccls_message_by_message(group, release, messages):
    f, _ranks, nodes, idx = group
    view = _GroupView(f, "all-to-allv", nodes, idx, None, None, True)
    rt = runtime(f"nccl@{release}")
    nbytes = np.array([float(b) for b, _k in messages])
    kind = np.array([k for _b, k in messages])
    _p2pn, n_max, n_min, chunk = _runtime_cost.p2p_channels(rt, view)
    multi = view.n_nodes > 1
    is_ll, channels, ll_bytes = _runtime_cost._p2p_plan_array(rt, view, nbytes, kind)
    values, kinds, plan, index = _runtime_cost._p2p_plans(rt, view, nbytes, kind)
    for m, (b, k) in enumerate(messages):
        # an LL buffer: a peer of the node, or any peer of a group in one node; never the
        # copy to itself (addP2pToPlan: protoLL = !selfSend)
        ll_buffer = k == 1 or (k == 0 and not multi)
        if version(release) < (2, 22, 0):
            proto, parts, ll = nccl_chunked_message(b, n_min, n_max, chunk, multi, ll_buffer)
        else:
            proto, parts = nccl_message(release, b, n_min, n_max, chunk, multi, ll_buffer)
            ll = -(-b // 1) if proto == "LL" else 0
        got = ("LL" if is_ll[m] else "Simple", int(channels[m]), int(ll_bytes[m]))
        assert got[0::2] == (proto, ll), (release, b, k, got, proto, ll)
        if parts is not None:
            assert got[1] == parts, (release, b, k, got, parts)
        # the distinct messages' plans, read through each message's index, are its own
        j = index[m]
        assert (values[j], kinds[j]) == (float(b), k)
        assert (bool(plan[0][j]), int(plan[1][j]), int(plan[2][j])) == (
            bool(is_ll[m]), int(channels[m]), int(ll_bytes[m]))


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 20000), k=st.integers(1, 8000),
       zeros=st.booleans())
def test_sorted_distinct_is_numpys_unique(seed, n, k, zeros):
    # few values repeated (numpy's hashed unique and a search) or many (the sort): the same
    # distinct values and positions as np.unique(..., return_inverse=True)
    rng = np.random.default_rng(seed)
    x = rng.choice(np.round(rng.gamma(1.0, 50000.0, k)), n)
    if zeros:
        x[rng.random(n) < 0.3] = 0.0
    uniq, where = _runtime_cost._sorted_distinct(x)
    want, inverse = np.unique(x, return_inverse=True)
    assert np.array_equal(uniq, want)
    assert np.array_equal(where, inverse.ravel())
    assert np.array_equal(uniq[where], x)


def test_a_cost_finds_the_distinct_pairs_once(monkeypatch):
    # the operation's messages and its batches read one search of the whole matrix (an
    # all-to-all's: one message of each kind), under a release retimed by later revisions
    # too: one set of distinct pairs a cost, each kind of peer (copy, node, network) sorted
    # once
    found, sorted_ = set(), []
    distinct, search = _runtime_cost._distinct_messages, _runtime_cost._sorted_distinct

    def spy(view, nbytes, kind):
        found.add((id(view), nbytes.shape, nbytes.tobytes(), kind.tobytes()))
        return distinct(view, nbytes, kind)

    def count(x):
        sorted_.append(len(x))
        return search(x)

    monkeypatch.setattr(_runtime_cost, "_distinct_messages", spy)
    monkeypatch.setattr(_runtime_cost, "_sorted_distinct", count)
    rng = np.random.default_rng(32)
    for spec, kinds in (("dgx-h100", 2), ("rail:servers=2,gpus=4,chip=h100", 3)):
        f = built(spec)
        p = f.n_endpoints
        M = rng.choice([0.0, 1024.0, 20000.0, 3e6], (p, p))
        for name in ("nccl@2.28.3", "nccl"):
            found.clear()
            sorted_.clear()
            cost(f, "all-to-allv", M, runtime=name)
            assert len(found) == 1, (spec, name, len(found))
            assert len(sorted_) == kinds and sum(sorted_) == p * p, (spec, name, sorted_)
            # an all-to-all: one message of each kind the group has, and the copy
            found.clear()
            sorted_.clear()
            cost(f, "all-to-all", 1 << 20, runtime=name)
            assert len(found) == 1 and len(sorted_) == kinds, (spec, name, found, sorted_)
