"""NVIDIA NCCL EP's low-latency kernel, counted from its own compiled code (session 19, ibgda).

NVIDIA/nccl 36191590 contrib/nccl_ep/device/low_latency.cu ("adapted from DeepEP"), compiled
with contrib/nccl_ep/Makefile's flags for sm_90 and read in SASS: DeepEP low-latency's
structure, but each peer pointer is NCCL's window lookup (the communicator's team fields, then
windows[comm], then the window's fields: three dependent loads where DeepEP de8cfca loads one
heap base) - before the dispatch's first copy, before its count store, before the combine's
first copy - and the combine's layout_range and src_info were written by the dispatch just
before (ep_bench runs nothing between the phases): L2 hits, not DeepEP's HBM loads after its
test's 528 MB copy. Each priced with the project's Hopper latencies.
"""

import dataclasses

import pytest

import topologies
from analysis import moe_exchange
from fabric import EXCHANGE_LATENCY, exchange_kernel

_HOP = {name: p.value for name, p in EXCHANGE_LATENCY["hopper"].items()}


def _h100(nodes):
    return topologies.build(f"rail:servers={nodes},gpus=8,links=18,nic=ib-ndr,chip=h100")


def _pair(nodes, ep, **kw):
    """(NCCL EP, DeepEP) exchanges of ep_bench's shape: 128 tokens, BF16 both ways."""
    return tuple(moe_exchange(_h100(nodes), "deepseek-v3", 128, ep, kernel=k, dispatch_bytes=2,
                              combine_bytes=2, **kw)
                 for k in ("ncclep-low-latency", "deepep-low-latency"))


def test_one_node_adds_the_window_lookups_and_reads_the_layout_from_l2():
    """In one load/store domain the dispatch takes two more dependent loads before its first
    copy and two more before its count (4 x l2_hit); the combine two more before its first
    copy, and its layout and source-index loads hit L2 instead of HBM."""
    nccl, deepep = _pair(1, 8)
    hit, hbm = _HOP["l2_hit"], _HOP["hbm_load"]
    assert nccl.dispatch_phase.chain - deepep.dispatch_phase.chain == pytest.approx(
        4 * hit, rel=1e-9)
    assert nccl.combine_phase.chain - deepep.combine_phase.chain == pytest.approx(
        2 * hit - 2 * (hbm - hit), rel=1e-9)
    assert nccl.dispatch_phase.chain == pytest.approx(1.8774e-6, abs=1e-9)
    assert nccl.combine_phase.chain == pytest.approx(1.5371e-6, abs=1e-9)


def test_over_the_network_only_the_combines_layout_loads_differ():
    """Across nodes the lookup's first round (the team test) sends the copy to the network
    path, as DeepEP's one heap-base load does; the combine still finds its layout in L2."""
    nccl, deepep = _pair(2, 16)
    hit, hbm = _HOP["l2_hit"], _HOP["hbm_load"]
    assert nccl.dispatch_phase.chain == pytest.approx(deepep.dispatch_phase.chain, rel=1e-12)
    assert deepep.combine_phase.chain - nccl.combine_phase.chain == pytest.approx(
        2 * (hbm - hit), rel=1e-9)


def test_with_data_left_in_l2_the_window_lookups_remain():
    nccl, deepep = _pair(1, 8, l2_flushed=False)
    hit = _HOP["l2_hit"]
    assert nccl.dispatch_phase.chain - deepep.dispatch_phase.chain == pytest.approx(
        4 * hit, rel=1e-9)
    assert nccl.combine_phase.chain - deepep.combine_phase.chain == pytest.approx(
        2 * hit, rel=1e-9)


def test_everything_but_the_chain_is_deepeps_profile():
    nccl = exchange_kernel("ncclep-low-latency")
    deepep = exchange_kernel("deepep-low-latency")
    assert dataclasses.replace(nccl, name=deepep.name, chain=deepep.chain,
                               sources=deepep.sources) == deepep
    src = next(p.source for p in nccl.parameters() if p.name == "ncclep-low-latency.chain")
    assert "36191590" in src and "ncclGetP2pPtr" in src
