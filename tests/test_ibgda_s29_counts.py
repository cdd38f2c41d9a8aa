"""Session 29 (ibgda; reader's s28 item 8): ``moe_exchange(tokens_per_rank=[...])``, each EP
rank's own token count.

A decode batch whose sequences split unevenly over the attention groups (or a group's tokens
over its tp ranks) leaves the EP ranks holding different counts. Before, ``moe_exchange`` took
one count for every rank that holds tokens (``sources=``), so decode charged each the most any
holds. Now the rule of the module docstring ("Ranks that hold tokens"), ``t_r`` rank ``r``'s
count: what a rank sends follows its own ``t_r``, what it receives the tokens sent in all
(``sum t_r``), its own tokens' counts and the grids the busiest rank's (``max t_r``). Checked
here: the traffic against tests/exchange_brute.py's pair-by-pair brute force with drawn counts
on intact and degraded fabrics; one count for the holders is the old call, field for field;
every other term follows only ``sum`` and ``max`` (a call of another spread with both equal
gives them alike), the load/store-peer share of the combine's copies back against a per-rank
brute force; bad counts refused by name.
"""
import dataclasses

import numpy as np
import pytest
from degrade import built
from exchange_brute import (
    KERNELS,
    PER_EXPERT,
    SPECS,
    assert_model_is_brute_force,
    degraded,
    ep_group,
    loads,
    pairs,
)
from fake_collective import Recorder
from hypothesis import event, given, settings
from hypothesis import strategies as st

import topologies
from analysis import moe_exchange
from analysis._moe_exchange import _peer_sources
from analysis._schedules import NotApplicableError
from fabric import RoutingError, SpecError, chip_spec, exchange_kernel

ROUTINGS = ["uniform", "balanced", "node-limited:1", "node-limited:2"]


def _fields(r):
    return {f.name: getattr(r, f.name) for f in dataclasses.fields(r)}


@st.composite
def _counts(draw, ep, most=6):
    """``ep`` token counts from 0 to ``most``, at least one above 0."""
    held = draw(st.lists(st.integers(0, most), min_size=ep, max_size=ep))
    if not any(held):
        held[draw(st.integers(0, ep - 1))] = draw(st.integers(1, most))
    return held


@st.composite
def _cases(draw):
    """A fabric (intact, or with failed links, a failed chip, failed lanes), an EP group,
    a kernel, routing, RDMA-only transport, and each EP rank's tokens."""
    g = draw(degraded(built(draw(st.sampled_from(SPECS)))))
    chips = draw(ep_group(g))
    kernel = draw(st.sampled_from(KERNELS))
    rdma = kernel in PER_EXPERT and draw(st.booleans())
    routing = draw(st.sampled_from(ROUTINGS))
    return g, chips, kernel, draw(_counts(len(chips))), routing, rdma


@settings(max_examples=30, deadline=None)
@given(_cases())
def test_traffic_of_each_ranks_own_tokens_is_the_brute_force(case):
    """Dispatch: link and NIC bytes and both stage times from each rank's pairs at its own
    count; combine: those pairs sent back, at the combine's bytes. A draw the model refuses
    must be one the brute force cannot route either."""
    g, chips, kernel, held, routing, rdma = case
    kw = {"kernel": kernel, "dispatch_bytes": 1, "combine_bytes": 2, "routing": routing,
          "transport": "rdma" if rdma else None}
    try:
        r = moe_exchange(g, "deepseek-v3", held, chips, **kw)
    except RoutingError:
        event("refused: no route")
        with pytest.raises(LookupError):
            loads(g, chips, *pairs(g, chips, kernel, held, 1.0, routing, rdma))
        return
    except (NotApplicableError, SpecError) as e:   # a kernel's reach, a routing's node split
        event("refused: reach or split")
        with pytest.raises(type(e)):               # ... whatever the ranks hold
            moe_exchange(g, "deepseek-v3", 1, chips, **kw)
        return
    event(f"compared: {kernel}, {'network' if r.nic_bytes else 'one domain'}")
    assert r.tokens_per_rank == max(held)
    up, net = pairs(g, chips, kernel, held, r.dispatch_bytes, routing, rdma)
    # every link and NIC, grids' ring links included (session 30, audit: DimOrder._ring_loads
    # no longer leaves a float residue on links no pair crosses)
    assert_model_is_brute_force(r, g, chips, up, net)


@settings(max_examples=8, deadline=None)
@given(_cases(), st.sampled_from([1, 3, 64]), st.data())
def test_one_count_for_the_holders_is_the_sources_call_field_for_field(case, tokens, data):
    """The counts ``tokens`` on the ranks ``sources`` names and 0 elsewhere are that call (the
    scalar call the one form's special case), every field, floats byte for byte."""
    g, chips, kernel, held, routing, rdma = case
    holders = [i for i, n in enumerate(held) if n]
    kw = {"kernel": kernel, "dispatch_bytes": 1, "combine_bytes": 2, "routing": routing,
          "transport": "rdma" if rdma else None}
    listed = [tokens if n else 0 for n in held]
    try:
        want = moe_exchange(g, "deepseek-v3", tokens, chips, sources=holders, **kw)
    except (RoutingError, NotApplicableError, SpecError) as e:
        with pytest.raises(type(e)):
            moe_exchange(g, "deepseek-v3", listed, chips, **kw)
        return
    got = moe_exchange(g, "deepseek-v3", listed, chips, **kw)
    assert _fields(got) == _fields(want)
    assert repr(got) == repr(want)


# the fields that do not come from the traffic matrices (a phase's links, NICs, queue pairs)
_NOT_TRAFFIC = ("fixed", "local_copy", "pull_latency", "kernel_gaps", "chain", "fence")


@settings(max_examples=15, deadline=None)
@given(st.sampled_from(KERNELS), st.sampled_from(["rail:servers=2,gpus=4,chip=h100",
                                                  "dgx-h100", "rail:servers=2,gpus=4,chip=gb200"]),
       st.sampled_from(ROUTINGS), st.integers(1, 5), st.data())
def test_every_other_term_follows_the_sum_and_the_most(kernel, spec, routing, most, data):
    """Two spreads of the tokens with the same busiest rank and the same total (``most`` on
    each of ``s`` holders, and a drawn spread of ``most x s`` tokens with ``most`` at most
    on a rank) give every term that does not come from the traffic alike: what a rank receives
    follows the total, its own tokens and the grids the busiest rank; over RDMA alone (no
    load/store peer whose share differs) the combine's interleaved copies and posts too."""
    f = built(spec)
    ep = len(f.endpoints)
    s = data.draw(st.integers(1, ep))
    rest = most * s - most
    # a spread: the busiest rank holds `most`, the rest over the other ranks, none above it
    others = [0] * (ep - 1)
    for _ in range(rest):
        free = [i for i, n in enumerate(others) if n < most]
        others[data.draw(st.sampled_from(free))] += 1
    at = data.draw(st.integers(0, ep - 1))
    held = others[:at] + [most] + others[at:]
    assert sum(held) == most * s and max(held) == most
    rdma = kernel in PER_EXPERT and "servers" in spec
    kw = {"kernel": kernel, "dispatch_bytes": 1, "combine_bytes": 2, "routing": routing,
          "transport": "rdma" if rdma else None}
    try:
        even = moe_exchange(f, "deepseek-v3", most, ep, sources=s, **kw)
    except (NotApplicableError, SpecError):
        event("refused")
        return
    got = moe_exchange(f, "deepseek-v3", held, ep, **kw)
    event(f"compared: {kernel}")
    for name in _NOT_TRAFFIC:
        assert getattr(got.dispatch_phase, name) == getattr(even.dispatch_phase, name), name
        assert getattr(got.combine_phase, name) == getattr(even.combine_phase, name), name
    if rdma or kernel != "pplx":
        assert got.combine_phase.interleaved == even.combine_phase.interleaved
    assert got.dispatch_phase.interleaved == even.dispatch_phase.interleaved
    assert (got.copies_rank, got.copies_node, got.copies_expert, got.tokens_per_rank) == (
        even.copies_rank, even.copies_node, even.copies_expert, even.tokens_per_rank)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(0, 3), min_size=1, max_size=12), st.data())
def test_the_peer_share_is_the_busiest_ranks_peers_tokens(dom, data):
    """The copies a rank's combine sends back to a load/store peer: for each EP rank, the
    tokens of the other ranks of its domain (brute force: every pair), the most over ranks."""
    held = data.draw(_counts(len(dom)))
    want = max(sum(held[j] for j in range(len(dom)) if j != i and dom[j] == dom[i])
               for i in range(len(dom)))
    assert _peer_sources(np.array(dom), np.array(held, dtype=float)) == want


def test_a_ranks_copies_through_hbm_are_its_own_and_what_it_receives():
    """DeepEP low-latency on one 8-H100 server, ranks holding 5, 2, 0, ...: the dispatch
    copies what a rank receives out of its buffer (read and write: 2 x received x bytes, every
    rank alike: 7 tokens x 8 experts / 8 ranks each); the combine's receive sum reads a rank's
    own tokens' 8 partials and writes their sum: the slowest rank, the one with 5 (a per-rank
    loop here)."""
    f = topologies.build("dgx-h100")
    hbm = chip_spec("h100").hbm_bandwidth
    held = [5, 2, 0, 0, 0, 0, 0, 0]
    b_d = 7168 + exchange_kernel("deepep-low-latency").message_header
    r = moe_exchange(f, "deepseek-v3", held, 8, kernel="deepep-low-latency",
                     dispatch_bytes=1, combine_bytes=2)
    received = sum(held) * 8 / 8
    assert r.dispatch_phase.local_copy == pytest.approx(2 * received * b_d / hbm, rel=1e-12)
    slowest = max((t * 8 + t) * 7168 * 2 / hbm for t in held)
    assert r.combine_phase.local_copy == pytest.approx(slowest, rel=1e-12)


def test_an_uneven_spread_costs_less_than_every_holder_at_the_most():
    """Two 8-GPU servers, EP 16, pplx over RDMA: ranks 0 and 9 hold 8 and 1 tokens. Charged
    as two holders of 8 (the old call), rank 9's NIC sent (and rank 0's received) 8 tokens'
    copies; now 1. Every rank receives 9 x 8 / 16 = 4.5 copies, not 8: the combine's staging
    pass copies that many expert outputs into its send buffer (2 x copies x bytes through
    HBM); the exchange is no slower anywhere."""
    f = topologies.build("rail:servers=2,gpus=8,links=8,nic=ib-ndr,chip=h100")
    kw = {"kernel": "pplx", "dispatch_bytes": 1, "combine_bytes": 2, "transport": "rdma"}
    held = [8] + [0] * 8 + [1] + [0] * 6
    got = moe_exchange(f, "deepseek-v3", held, 16, **kw)
    old = moe_exchange(f, "deepseek-v3", 8, 16, sources=[0, 9], **kw)
    assert got.nic_bytes["nic9"][0] == pytest.approx(old.nic_bytes["nic9"][0] / 8, rel=1e-12)
    assert got.nic_bytes["nic0"][0] == old.nic_bytes["nic0"][0]         # rank 0 sends its 8
    assert got.dispatch <= old.dispatch and got.combine <= old.combine
    hbm = chip_spec("h100").hbm_bandwidth
    assert old.combine_phase.local_copy - got.combine_phase.local_copy == pytest.approx(
        2 * (8 - 4.5) * 7168 * 2 / hbm, rel=1e-9)


def test_the_collective_kernel_gets_each_ranks_rows():
    spy = Recorder()
    f = topologies.build("dgx-h100")
    moe_exchange(f, "deepseek-v3", [3, 1, 0, 0, 0, 0, 0, 2], 8, kernel="all-to-allv",
                 dispatch_bytes=1, combine_bytes=2, collective=spy)
    (op_d, m_d), (op_c, m_c) = spy.calls
    assert op_d == op_c == "all-to-allv"
    rows = m_d.sum(axis=1)
    assert rows[2:7].sum() == 0
    assert rows[0] == pytest.approx(3 * rows[1], rel=1e-12) == pytest.approx(1.5 * rows[7])
    assert np.allclose(m_c, m_d.T * 2)


def test_pplx_receive_walk_takes_each_ranks_count():
    k = exchange_kernel("pplx")
    # 128 + 3 x 32 = 224 tokens x 8 experts / 8 ranks = 224 copies over 132 blocks (the grid
    # sized by the busiest rank's 128 tokens): 2 a block; as two holders of 112 alike
    assert k.receive_walk(256, 8, [128, 32, 32, 32, 0, 0, 0, 0], 8) == (255, 2)
    assert k.receive_walk(256, 8, [128, 32, 32, 32, 0, 0, 0, 0], 8) == k.receive_walk(
        256, 8, 112, 8, sources=2)
    with pytest.raises(SpecError, match="sources must be None where tokens lists"):
        k.receive_walk(256, 8, [1] * 8, 8, sources=2)
    with pytest.raises(SpecError, match="tokens must list the tokens of each of the 8 EP"):
        k.receive_walk(256, 8, [1] * 7, 8)
    # one count: an int >= 1 (review S29-R2: 2.5 answered, None and '8' raised Python's own);
    # another kind is a TypeError, a wrong value a SpecError (session 31, lead's rule)
    for bad, error in ((2.5, TypeError), (None, TypeError), ("8", TypeError), (0, SpecError),
                       (True, TypeError)):
        with pytest.raises(error, match=r"tokens must be an int >= 1 or a sequence of the "
                                        r"8 EP ranks' token counts, got "):
            k.receive_walk(256, 8, bad, 8)


@pytest.mark.parametrize("bad, error, match", [
    ([1] * 7, SpecError,
     r"tokens_per_rank must list the tokens of each of the 8 EP ranks, got 7 counts"),
    ([1] * 9, SpecError,
     r"tokens_per_rank must list the tokens of each of the 8 EP ranks, got 9 counts"),
    ([], SpecError, r"got 0 counts"),
    ([0] * 8, SpecError, r"tokens_per_rank must give at least one EP rank a token, got 8 zeros"),
    ([1, -1, 0, 0, 0, 0, 0, 0], SpecError,
     r"tokens_per_rank\[1\] must be an int >= 0 \(EP rank 1's tokens\), got tokens_per_rank\[1\]=-1"),
    # another kind: a TypeError (session 31, lead's rule)
    ([1, 1.5, 0, 0, 0, 0, 0, 0], TypeError, r"got tokens_per_rank\[1\]=1\.5 \(a float\)"),
    ([2.0, 0, 0, 0, 0, 0, 0, 0], TypeError, r"got tokens_per_rank\[0\]=2\.0 \(a float\)"),
    ([True, 0, 0, 0, 0, 0, 0, 0], TypeError, r"got tokens_per_rank\[0\]=True \(a bool\)"),
    (["1", 0, 0, 0, 0, 0, 0, 0], TypeError, r"got tokens_per_rank\[0\]='1' \(a str\)"),
    (np.array(3), TypeError,
     r"tokens_per_rank must be an int >= 1 or a sequence .* got tokens_per_rank=array\(3\)"),
    ("12345678", TypeError, r"tokens_per_rank must be an int >= 1 or a sequence"),
    (0, SpecError, r"tokens_per_rank must be an int >= 1 or a sequence"),
    (2.0, TypeError, r"tokens_per_rank must be an int >= 1 or a sequence"),
])
def test_bad_counts_are_named(bad, error, match):
    f = built("dgx-h100")
    with pytest.raises(error, match=match):
        moe_exchange(f, "deepseek-v3", bad, 8, kernel="pplx", dispatch_bytes=1, combine_bytes=2)


def test_counts_and_sources_together_are_refused():
    f = built("dgx-h100")
    with pytest.raises(SpecError, match=r"sources must be None where tokens_per_rank lists "
                                        r"each EP rank's tokens .* got sources=\[0\]"):
        moe_exchange(f, "deepseek-v3", [1] * 8, 8, kernel="pplx", dispatch_bytes=1,
                     combine_bytes=2, sources=[0])


def test_counts_too_large_for_an_int64_name_their_sum():
    f = built("dgx-h100")
    with pytest.raises(SpecError, match=r"tokens_per_rank summing to 2361183241434822606849 "
                                        r"over 8 EP ranks \(2 holding tokens\) moves"):
        moe_exchange(f, "deepseek-v3", [2**71, 1] + [0] * 6, 8, kernel="one-sided",
                     dispatch_bytes=1, combine_bytes=2)


def test_counts_in_any_sequence_are_the_list():
    """A tuple, a numpy array (numpy ints) or a generator of counts is the list (one test of
    'a sequence or one value' for the packages: fabric._units.items_of; review S29-R1)."""
    f = built("dgx-h100")
    kw = {"kernel": "pplx", "dispatch_bytes": 1, "combine_bytes": 2}
    held = [3, 0, 1, 0, 0, 2, 0, 0]
    want = _fields(moe_exchange(f, "deepseek-v3", held, 8, **kw))
    for spelled in (tuple(held), np.array(held), (n for n in held)):
        assert _fields(moe_exchange(f, "deepseek-v3", spelled, 8, **kw)) == want
    k = exchange_kernel("pplx")
    assert k.receive_walk(256, 8, np.array(held), 8) == k.receive_walk(256, 8, held, 8)
