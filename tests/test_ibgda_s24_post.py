"""Session 24 (ibgda): the cycles one NVSHMEM 3.2.5 IBGDA post schedules on its posting lane.

pplx-kernels 7af3059's dispatch sends each per-expert count with ``nvshmemx_signal_op(...,
NVSHMEM_SIGNAL_SET, pe)`` from lane 0 of each block's last warp, one after another; across the
network each is a call into libnvshmem_device.a's ``nvshmemi_transfer_amo_nonfetch<unsigned
long>``. Its loads were counted in session 17 (6 L2 trips, 2 L2 atomics: ``_ibgda_post``); the
code between them was not. Lane 0's path through the sm_90 SASS of the 3.2.5 wheel (RC queue
pair shared among CTAs, one lane, 2 WQEs + a NOP, the wrapped ring's slot already completed, no
doorbell) issues 636 instructions whose stall counts sum to 2,054 cycles, 137 of them under the
loads and fence the post already prices: 1,917 cycles a post (``post_cycles[0]``). The
combine's posts (put_signal<warp> per copy) are not counted (``post_cycles[1] == 0``).
"""

import dataclasses
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import topologies
from analysis import moe_exchange
from fabric import EXCHANGE_LATENCY, exchange_kernel

_KERN = exchange_kernel("pplx")
_NONE = dataclasses.replace(_KERN, name="pplx-no-post-cycles", post_cycles=(0, 0))
_CYC = EXCHANGE_LATENCY["hopper"]["cycle"].value
_KW = {"dispatch_bytes": 1 + 4 / 128, "combine_bytes": 2, "routing": "uniform"}


def _h100(nodes):
    return topologies.build(f"rail:servers={nodes},gpus=8,links=18,nic=ib-ndr,chip=h100")


def _remote_signals(nodes, tokens, experts=256, k=8, warps=10, most=132):
    """scatterKernel's count branch walked by hand (7af3059 internode_scatter.cu l.80-101): block
    b's last warp sends the counts of experts b, b + blocks, ...; a count to an expert on a rank
    in another node is a NIC post. The most any warp of any sender node posts."""
    ep = 8 * nodes
    blocks = min(max(math.ceil(experts / warps), tokens * k), most)
    node_of = [(e // (experts // ep)) // 8 for e in range(experts)]
    worst = 0
    for sender in range(nodes):
        for b in range(blocks):
            worst = max(worst, sum(1 for e in range(b, experts, blocks) if node_of[e] != sender))
    return worst


def test_post_cycles_are_the_profiles_and_sourced():
    assert _KERN.post_cycles == (1917, 0)
    src = dict(_KERN.sources)["post_cycles"]
    for text in ("nvshmemi_transfer_amo_nonfetch", "SIGNAL_SET", "2,054", "137", "1,917",
                 "0x3af0-0x47b0", "1,959", "1,922", "put_signal<warp>"):
        assert text in src
    assert {p.name: p.unit for p in _KERN.parameters()}["pplx.post_cycles"] == "cycles"


def test_post_cycles_are_validated():
    for bad in ((1917,), (1917, -1), (True, 0), (1917.0, 0), [1917, 0]):
        with pytest.raises(ValueError, match="post_cycles must be \\(\\) or two ints >= 0"):
            dataclasses.replace(_KERN, name="x", post_cycles=bad)
    with pytest.raises(ValueError, match="counted in remote_signal_cycles needs post_cycles"):
        dataclasses.replace(_KERN, name="x", post_cycles=())
    base = exchange_kernel("deepep-low-latency")
    with pytest.raises(ValueError, match="post_cycles needs count_grid"):
        dataclasses.replace(base, name="x", post_cycles=(1, 2))


@settings(max_examples=25, deadline=None)
@given(nodes=st.sampled_from([2, 3, 4, 8, 16]), tokens=st.integers(1, 128))
def test_each_count_post_pays_its_cycles(nodes, tokens):
    """The count warp's chain (dispatch, interleaved) grows by 1,917 cycles per NIC post of the
    slowest warp, against a hand walk of the count branch; the combine, whose posts are not
    counted, does not move."""
    new = moe_exchange(_h100(nodes), "deepseek-v3", tokens, 8 * nodes, kernel=_KERN, **_KW)
    was = moe_exchange(_h100(nodes), "deepseek-v3", tokens, 8 * nodes, kernel=_NONE, **_KW)
    remote = _remote_signals(nodes, tokens)
    assert remote >= 1
    assert new.dispatch_phase.interleaved - was.dispatch_phase.interleaved == pytest.approx(
        remote * 1917 * _CYC, rel=1e-9)
    assert new.combine_phase.interleaved == was.combine_phase.interleaved
    assert new.dispatch_phase.chain == was.dispatch_phase.chain


def test_one_node_has_no_posts():
    """Inside one node the counts are stores into the peers: nothing moves."""
    new = moe_exchange(_h100(1), "deepseek-v3", 1, 8, kernel=_KERN, **_KW)
    was = moe_exchange(_h100(1), "deepseek-v3", 1, 8, kernel=_NONE, **_KW)
    assert new.dispatch == was.dispatch and new.combine == was.combine


def test_the_one_token_ibgda_dispatch_rows_move_by_their_posts():
    """The held-out rows' one-token IBGDA dispatches: 5 (EP16), 8 (EP32), 9 (EP64), 10 (EP128)
    posts on the slowest count warp, each 1,917 cycles (0.968 us) more; every row still below
    its measurement (102.7 / 115.7 / 121.0 / 125.9 us)."""
    for nodes, posts, measured in ((2, 5, 102.7e-6), (4, 8, 115.7e-6), (8, 9, 121.0e-6),
                                   (16, 10, 125.9e-6)):
        assert _remote_signals(nodes, 1) == posts
        new = moe_exchange(_h100(nodes), "deepseek-v3", 1, 8 * nodes, kernel="pplx", **_KW)
        was = moe_exchange(_h100(nodes), "deepseek-v3", 1, 8 * nodes, kernel=_NONE, **_KW)
        assert new.dispatch - was.dispatch == pytest.approx(posts * 1917 * _CYC, rel=1e-9)
        assert new.dispatch < measured
