"""Session 33 (moe): routing ``"grouped"``, NVIDIA's aiconfigurator collector's balanced
generator (collect_trtllm_alltoall.py ``generate_balanced_expert_ids``, cef980f2b), against a
brute force that writes the generator's expert ids out token by token
(tests/exchange_brute.py ``grouped_expert_ids``) and reads each id's rank as the collector
does (``id // (E // ep)``).

Drawn: EP widths below, at and above top-k (8), multiples of it and not, each rank's token count
(0 to 9: ranks without tokens too), the load/store domains the ranks fill. Checked: the copies
each rank sends each other (one per (token, rank)) and receives, the busiest token's distinct
ranks, the reach and its distribution, which top-k slots name a first-time rank, the pulled
round's wait where a rank's own slot is loaded locally, and the traffic of ``moe_exchange`` on
the fabric families of tests/exchange_brute.py. The kernels that send per (token, expert) or
forward per node are refused by name.
"""
import math

import numpy as np
import pytest
from degrade import built
from exchange_brute import SPECS, assert_model_is_brute_force, ep_group, grouped_expert_ids, pairs
from hypothesis import event, given, settings
from hypothesis import strategies as st

from analysis import busiest_token, expert_reach, moe_exchange, reach_distribution
from analysis._moe_exchange import _grouped_pairs, _late_slot_valid, _round_wait
from analysis._schedules import NotApplicableError
from fabric import SpecError

E, K = 256, 8


def _ranks(t, ep):
    """Slot -> rank of token ``t`` under the generator (its expert ids, read as it reads them)."""
    return [e // (E // ep) for e in grouped_expert_ids(t, ep)]


@st.composite
def _groups(draw):
    ep = draw(st.sampled_from([2, 4, 6, 8, 12, 16, 24, 32, 40, 64]))
    held = draw(st.lists(st.integers(0, 9), min_size=ep, max_size=ep).filter(any))
    nodes = draw(st.sampled_from([n for n in (1, 2, 4) if ep % n == 0]))
    return ep, held, nodes


@settings(max_examples=25, deadline=None)
@given(_groups())
def test_copies_busiest_token_reach_and_slots_are_the_generators(case):
    ep, held, nodes = case
    # copies, own included: one per (token, rank) the token reaches
    brute = np.zeros((ep, ep))
    for r, c in enumerate(held):
        for t in range(c):
            for j in set(_ranks(t, ep)):
                brute[r, j] += 1
    assert np.array_equal(_grouped_pairs(K, np.array(held), diagonal=True), brute)
    np.fill_diagonal(brute, 0.0)
    assert np.array_equal(_grouped_pairs(K, np.array(held)), brute)
    # the busiest token of any rank that holds tokens
    busiest = max((len(set(_ranks(t, ep))), len(set(_ranks(t, ep)) - {r}))
                  for r, c in enumerate(held) for t in range(c))
    assert busiest_token(E, K, ep, nodes, "grouped", held, None) == tuple(map(float, busiest))
    # reach: a random sender's token, over a whole number of the generator's periods
    g = ep // nodes
    tokens = range(ep)
    p_rank = sum(len(set(_ranks(t, ep))) for t in tokens) / len(tokens) / ep
    p_node = sum(len({j // g for j in _ranks(t, ep)}) for t in tokens) / len(tokens) / nodes
    assert expert_reach(E, K, ep, nodes, "grouped") == pytest.approx((p_rank, p_node), rel=1e-12)
    reach = min(K, ep)
    remote = [0.0] * (reach + 1)
    for r in range(ep):
        for t in tokens:
            remote[len(set(_ranks(t, ep)) - {r})] += 1 / (ep * len(tokens))
    all_, rem = reach_distribution(E, K, ep, nodes, "grouped")
    assert all_ == [0.0] * reach + [1.0]
    assert rem == pytest.approx(remote, abs=1e-12)
    # a slot is valid (the first to name its rank) alike for every token
    for i in range(K):
        first = {_ranks(t, ep)[i] not in _ranks(t, ep)[:i] for t in tokens}
        assert len(first) == 1
        assert _late_slot_valid(E, K, ep, nodes, "grouped", i) == float(first.pop())


@settings(max_examples=20, deadline=None)
@given(_groups(), st.sampled_from([((7,),), ((1, 2, 3), (4, 5, 6, 7)), ((1, 4, 5, 6, 7),)]))
def test_the_pulled_rounds_wait_is_the_slowest_tokens(case, batches):
    """Per block (a held token of a rank): a batch of its slots whose valid slots are all the
    own rank's waits for a local load, one with a peer's for a round trip; the slowest block
    bounds the round, and None says a block with no local wait is among the slowest."""
    ep, held, nodes = case
    trip, local = 1.71e-6, 0.15e-6
    first = tuple(s for s in range(K) if all(s not in b for b in batches))
    costs = []
    for r, c in enumerate(held):
        for t in range(c):
            dest = _ranks(t, ep)
            valid = [[s for s in b if dest[s] not in dest[:s]] for b in (first,) + batches]
            peer = sum(1 for b in valid if any(dest[s] != r for s in b))
            alone = sum(1 for b in valid if b and all(dest[s] == r for s in b))
            costs.append((peer * trip + alone * local, alone))
    top = max(cost for cost, _ in costs)
    want = None if any(cost == top and not alone for cost, alone in costs) else top
    got = _round_wait(E, K, ep, nodes, "grouped", batches, tuple(held), trip, local)
    assert got == (None if want is None else pytest.approx(want, rel=1e-12))


@settings(max_examples=20, deadline=None)
@given(st.data())
def test_traffic_on_the_fabric_families_is_the_generators(data):
    """Link and NIC bytes and both stage times of the one-sided kernel against the pairs the
    generator gives, routed pair by pair (tests/exchange_brute.py)."""
    g = built(data.draw(st.sampled_from(SPECS)))
    chips = data.draw(ep_group(g, mixed=False))
    held = data.draw(st.lists(st.integers(0, 9), min_size=len(chips), max_size=len(chips))
                     .filter(any))
    try:
        r = moe_exchange(g, "deepseek-v3", held, chips, kernel="one-sided", dispatch_bytes=1,
                         combine_bytes=2, routing="grouped")
    except NotApplicableError as e:    # the kernel's reach: one load/store domain
        assert "works within one load/store domain" in str(e)
        event("refused: several domains")
        return
    event("compared")
    assert_model_is_brute_force(r, g, chips, *pairs(g, chips, "one-sided", held,
                                                    r.dispatch_bytes, "grouped", False))


def test_the_collector_rows_one_token():
    """aiconfigurator's EP16 row at 1 token: group 0's 8 ranks receive every rank's token (16
    copies each, the others none) and a rank outside the group reaches 8 peers, where the
    perfect router's rotation gives every rank 8 copies and the busiest token 7 peers."""
    pair = _grouped_pairs(K, np.ones(16, dtype=int), diagonal=True)
    assert pair.sum(axis=0).tolist() == [16.0] * 8 + [0.0] * 8
    assert busiest_token(E, K, 16, 1, "grouped", 1, None) == (8.0, 8.0)
    assert busiest_token(E, K, 16, 1, "grouped", 1, 1) == (8.0, 7.0)      # rank 0 alone: own
    assert busiest_token(E, K, 16, 1, "balanced", 1, None) == (8.0, 7.0)
    f = built("switch:16,chip=gb200")
    kw = {"kernel": "one-sided", "dispatch_bytes": 2, "combine_bytes": 2}
    grouped = moe_exchange(f, "deepseek-v3", 1, 16, routing="grouped", **kw)
    balanced = moe_exchange(f, "deepseek-v3", 1, 16, routing="balanced", **kw)
    assert grouped.dispatch > balanced.dispatch and grouped.combine > balanced.combine
    # where ep / 8 divides the tokens the two routings price alike
    for tokens in (2, 16):
        a = moe_exchange(f, "deepseek-v3", tokens, 16, routing="grouped", **kw)
        b = moe_exchange(f, "deepseek-v3", tokens, 16, routing="balanced", **kw)
        assert (a.dispatch, a.combine) == (b.dispatch, b.combine)
    assert math.isclose(grouped.copies_rank, balanced.copies_rank)


@pytest.mark.parametrize("kernel, per", [("pplx", "(token, expert)"),
                                         ("deepep-low-latency", "(token, expert)"),
                                         ("deepep-normal", "(token, node)")])
def test_kernels_that_send_per_expert_or_node_are_refused_by_name(kernel, per):
    f = built("switch:16,chip=gb200")
    with pytest.raises(SpecError, match=rf"routing 'grouped'.*'{kernel}' sends one per "
                                        + per.replace("(", r"\(").replace(")", r"\)")):
        moe_exchange(f, "deepseek-v3", 4, 16, kernel=kernel, dispatch_bytes=2, combine_bytes=2,
                     routing="grouped")
