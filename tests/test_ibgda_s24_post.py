"""Session 24 (ibgda): the cycles one NVSHMEM 3.2.5 IBGDA post schedules on its posting lane.

pplx-kernels 7af3059's dispatch sends each per-expert count with ``nvshmemx_signal_op(...,
NVSHMEM_SIGNAL_SET, pe)`` from lane 0 of each block's last warp, one after another; across the
network each is a call into libnvshmem_device.a's ``nvshmemi_transfer_amo_nonfetch<unsigned
long>``. Its loads were counted in session 17 (6 L2 trips, 2 L2 atomics: ``_ibgda_post``); the
code between them was not. Lane 0's path through the sm_90 SASS of the 3.2.5 wheel (RC queue
pair shared among CTAs, one lane, 2 WQEs + a NOP, the wrapped ring's slot already completed, no
doorbell) issues 636 instructions whose stall counts sum to 2,054 cycles, 137 of them under the
loads and fence session 17 priced; the path also waits for three more L2 trips (dev_idx, nwqes,
the CQ record's address: first touches of their sectors after the last post's CCTL.IVALL), 128
cycles under them: 9 L2 trips, 2 L2 atomics and 1,789 cycles a post (``post_cycles``). The
combine's posts take the same least: its sync signal is the same SIGNAL_SET, a copy's
put_signal<warp> issues 2,791 on its warp beyond its loads, a SIGNAL_ADD to an NVLink peer 1,794.
"""

import dataclasses
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from moe_cycle_counts import cycles_without

import topologies
from analysis import moe_exchange
from fabric import EXCHANGE_LATENCY, SpecError, exchange_kernel

_KERN = exchange_kernel("pplx")
_STEPS = {("cycle", "remote_signal_cycles"), ("cycle", "posted_copy_cycles")}
# the profile before session 24: no post cycles, no steps that count them
_NONE = dataclasses.replace(
    _KERN, name="pplx-no-post-cycles", cycles=cycles_without(_KERN, "post_cycles"),
    interleaved_chain=tuple(tuple(s for s in ph if s not in _STEPS)
                            for ph in _KERN.interleaved_chain))
_CYC = EXCHANGE_LATENCY["hopper"]["cycle"].value
_KW = {"dispatch_bytes": 1 + 4 / 128, "combine_bytes": 2, "routing": "uniform"}


_FABRICS = {}


def _h100(nodes):
    if nodes not in _FABRICS:
        _FABRICS[nodes] = topologies.build(
            f"rail:servers={nodes},gpus=8,links=18,nic=ib-ndr,chip=h100")
    return _FABRICS[nodes]


def _count_walk(nodes, tokens, experts=256, k=8, warps=10, most=132):
    """scatterKernel's count branch walked by hand (7af3059 internode_scatter.cu l.80-101): block
    b's last warp sends the counts of experts b, b + blocks, ...; a count to an expert on a rank
    in another node is a NIC post. ``(posts, experts walked)`` of the warp, over every sender
    node, with the most posts (then the most experts)."""
    ep = 8 * nodes
    blocks = min(max(math.ceil(experts / warps), tokens * k), most)
    node_of = [min(e // (experts // ep), ep - 1) // 8 for e in range(experts)]
    worst = (0, 0)
    for sender in range(nodes):
        for b in range(blocks):
            walk = range(b, experts, blocks)
            worst = max(worst, (sum(1 for e in walk if node_of[e] != sender), len(walk)))
    return worst


def _remote_signals(nodes, tokens):
    return _count_walk(nodes, tokens)[0]


def test_both_post_counts_carry_the_cycles():
    """One step per post count, in the phase that posts: the dispatch's count warp, the
    combine's copies."""
    assert [s for s in _KERN.interleaved_chain[0] if s in _STEPS] == [
        ("cycle", "remote_signal_cycles")]
    assert [s for s in _KERN.interleaved_chain[1] if s in _STEPS] == [
        ("cycle", "posted_copy_cycles")]
    assert not any(s in _STEPS for ph in _KERN.chain for s in ph)


def test_a_post_waits_for_eight_l2_trips_an_l1_hit_and_two_atomics():
    """Session 17's six L2 trips and two atomics, and session 24's three: dev_idx, nwqes and
    the CQ record's address, each the first touch of a 32-B sector of the 184-B queue pair;
    qp_type, loaded after dev_idx, shares dev_idx's sector at 3 of the 4 alignments of an
    rcs[] element: an L1 hit, the least (review S24-R2)."""
    from fabric._exchange import _ibgda_post
    for count in ("remote_signals", "posted_copies"):
        steps = _ibgda_post(count)
        assert steps.count(("l2_hit", count)) == 8
        assert steps.count(("l1_hit", count)) == 1
        assert steps.count(("l2_atomic", count)) == 2
        assert len(steps) == 12
    # the queue pair's fields the path loads, in order: dev_idx (+0xc), qp_type (+0x4), nwqes
    # (+0x28), the CQ record's address (+0x48); rcs[i] at i x 184 B from an aligned base
    shared = 0
    for i in range(32):
        base = i * 184
        seen = {(base + 0xc) // 32}
        shared += (base + 0x4) // 32 in seen        # qp_type after dev_idx: an L1 hit if so
        seen.add((base + 0x4) // 32)
        assert (base + 0x28) // 32 not in seen
        seen.add((base + 0x28) // 32)
        assert (base + 0x48) // 32 not in seen
    assert shared == 24                             # 3 of every 4 queue pairs


def test_post_cycles_are_the_profiles_and_sourced():
    assert (_KERN.cycle("post_cycles", 0), _KERN.cycle("post_cycles", 1)) == (1789, 1789)
    src = dict(_KERN.sources)["post_cycles"]
    for text in ("nvshmemi_transfer_amo_nonfetch", "SIGNAL_SET", "2,054", "137", "1,917",
                 "0x3af0-0x47b0", "1,789", "1,844", "1,794", "put_signal<warp>", "2,980",
                 "2,791", "qp+0x28", "qp+0x48", "CCTL.IVALL"):
        assert text in src
    assert {p.name: p.unit for p in _KERN.parameters()}["pplx.post_cycles"] == "cycles"


def test_post_cycles_are_validated():
    for bad in (-1, True, 1917.0, (1917, 0)):     # a wrong kind is a TypeError (session 31)
        with pytest.raises(ValueError if bad == -1 else TypeError,
                           match="post_cycles must be an int >= 0"):
            dataclasses.replace(_KERN, name="x").with_cycles(0, post_cycles=bad)
    with pytest.raises(ValueError, match="counted in remote_signal_cycles needs post_cycles"):
        dataclasses.replace(_KERN, name="x").with_cycles(0, post_cycles=0)
    base = exchange_kernel("deepep-low-latency")
    with pytest.raises(ValueError, match="post_cycles needs count_grid"):
        dataclasses.replace(base, name="x").with_cycles(0, post_cycles=1)


@settings(max_examples=12, deadline=None)
@given(nodes=st.sampled_from([2, 3, 4, 8]), tokens=st.integers(1, 128))
def test_each_count_post_pays_its_cycles(nodes, tokens):
    """The count warp's chain (dispatch, interleaved) grows by 1,789 cycles per NIC post of the
    slowest warp, against a hand walk of the count branch. The combine's chain grows too, by
    at most 1,789 per post of its slowest block (block 0's sync signal and one per copy of the
    block with the most, ceil(tokens x 8 / 132)): its fenced copies' expected maximum takes the
    post inside (tests/test_pplx_count_chain.py pins that composition)."""
    new = moe_exchange(_h100(nodes), "deepseek-v3", tokens, 8 * nodes, kernel=_KERN, **_KW)
    was = moe_exchange(_h100(nodes), "deepseek-v3", tokens, 8 * nodes, kernel=_NONE, **_KW)
    remote = _remote_signals(nodes, tokens)
    assert remote >= 1
    assert new.dispatch_phase.interleaved - was.dispatch_phase.interleaved == pytest.approx(
        remote * 1789 * _CYC, rel=1e-9)
    posts = math.ceil(tokens * 8 / 132) + 1
    grew = new.combine_phase.interleaved - was.combine_phase.interleaved
    assert 1789 * _CYC < grew <= posts * 1789 * _CYC * (1 + 1e-9)
    assert new.dispatch_phase.chain == was.dispatch_phase.chain
    assert new.combine_phase.chain == was.combine_phase.chain


_LOOP_STEPS = {("cycle", "count_pass_cycles"), ("const_l1", "count_passes")}
_LOOP = dataclasses.replace(
    _KERN, name="pplx-no-count-loop", cycles=cycles_without(_KERN, "count_pass_cycles"),
    interleaved_chain=tuple(tuple(s for s in ph if s not in _LOOP_STEPS)
                            for ph in _KERN.interleaved_chain))
# per walked expert: the loop's cycles (session 25: 368, its two waited constant loads charged
# const_l1 each, review S24-R4) and those two loads
_PASS = 368 * _CYC + 2 * EXCHANGE_LATENCY["hopper"]["const_l1"].value


def test_count_pass_cycles_are_the_profiles_and_sourced():
    assert _KERN.cycle("count_pass_cycles", 0) == 368
    src = dict(_KERN.sources)["count_pass_cycles"]
    for text in ("0x2690-0x2f10", "391", "431", "0x2ce0", "368", "ST.E.64.STRONG.SYS"):
        assert text in src
    assert {p.name: p.unit for p in _KERN.parameters()}["pplx.count_pass_cycles"] == "cycles"
    assert [s for s in _KERN.interleaved_chain[0] if s == ("cycle", "count_pass_cycles")] == [
        ("cycle", "count_pass_cycles")]
    for bad in (-1, True, 379.0):     # a wrong kind is a TypeError (session 31)
        with pytest.raises(ValueError if bad == -1 else TypeError,
                           match="count_pass_cycles must be an int >= 0"):
            dataclasses.replace(_KERN, name="x").with_cycles(0, count_pass_cycles=bad)
    with pytest.raises(ValueError, match="count_pass_cycles needs count_grid"):
        dataclasses.replace(exchange_kernel("deepep-low-latency"), name="x").with_cycles(0, count_pass_cycles=1)


@settings(max_examples=10, deadline=None)
@given(nodes=st.sampled_from([1, 2, 3, 4, 8]), tokens=st.integers(1, 128))
def test_the_count_warp_pays_its_loop_per_walked_expert(nodes, tokens):
    """Across the network the count warp's chain grows by 368 cycles and two constant-L1 loads
    per expert the slowest warp walks (hand walk of the count branch); in one node nothing
    moves."""
    new = moe_exchange(_h100(nodes), "deepseek-v3", tokens, 8 * nodes, kernel=_KERN, **_KW)
    was = moe_exchange(_h100(nodes), "deepseek-v3", tokens, 8 * nodes, kernel=_LOOP, **_KW)
    walked = _count_walk(nodes, tokens)[1] if nodes > 1 else 0
    assert new.dispatch_phase.interleaved - was.dispatch_phase.interleaved == pytest.approx(
        walked * _PASS, rel=1e-9, abs=1e-18)
    assert new.combine == was.combine
    with pytest.raises(SpecError, match="count_passes must be an int >= 0"):
        _KERN.chain_latency(0, "hopper", 1, 1, count_passes=-1)


_RELOAD = dataclasses.replace(
    _KERN, name="pplx-no-index-reload",
    interleaved_chain=tuple(tuple(s for s in ph if s != ("l2_hit", "further_signals"))
                            for ph in _KERN.interleaved_chain))


@settings(max_examples=8, deadline=None)
@given(nodes=st.sampled_from([1, 2, 4, 8]), tokens=st.integers(1, 128))
def test_each_pass_after_a_post_rereads_the_indices_from_l2(nodes, tokens):
    """A post's fence (MEMBAR.SC.GPU; CCTL.IVALL) empties L1: the count warp's pass after it
    re-reads the routing indices from L2. Every post but the last has a pass after it: one L2
    trip per NIC signal after the first (hand walk of the count branch)."""
    new = moe_exchange(_h100(nodes), "deepseek-v3", tokens, 8 * nodes, kernel=_KERN, **_KW)
    was = moe_exchange(_h100(nodes), "deepseek-v3", tokens, 8 * nodes, kernel=_RELOAD, **_KW)
    posts = _count_walk(nodes, tokens)[0] if nodes > 1 else 0
    assert new.dispatch_phase.interleaved - was.dispatch_phase.interleaved == pytest.approx(
        max(posts - 1, 0) * EXCHANGE_LATENCY["hopper"]["l2_hit"].value, rel=1e-9, abs=1e-18)
    assert new.combine == was.combine
    assert "0x2890" in dict(_KERN.sources)["count_pass_cycles"]


def test_one_node_has_no_posts():
    """Inside one node the counts are stores into the peers: nothing moves."""
    new = moe_exchange(_h100(1), "deepseek-v3", 1, 8, kernel=_KERN, **_KW)
    was = moe_exchange(_h100(1), "deepseek-v3", 1, 8, kernel=_NONE, **_KW)
    assert new.dispatch == was.dispatch and new.combine == was.combine


def test_the_one_token_ibgda_dispatch_rows_move_by_their_posts():
    """The held-out rows' one-token IBGDA dispatches: 5 (EP16), 8 (EP32), 9 (EP64), 10 (EP128)
    posts on the slowest count warp, each 1,789 cycles (0.904 us) more beyond its loads; every
    row still below its measurement (102.7 / 115.7 / 121.0 / 125.9 us)."""
    for nodes, posts, measured in ((2, 5, 102.7e-6), (4, 8, 115.7e-6), (8, 9, 121.0e-6),
                                   (16, 10, 125.9e-6)):
        assert _remote_signals(nodes, 1) == posts
        new = moe_exchange(_h100(nodes), "deepseek-v3", 1, 8 * nodes, kernel="pplx", **_KW)
        was = moe_exchange(_h100(nodes), "deepseek-v3", 1, 8 * nodes, kernel=_NONE, **_KW)
        assert new.dispatch - was.dispatch == pytest.approx(posts * 1789 * _CYC, rel=1e-9)
        assert new.dispatch < measured
