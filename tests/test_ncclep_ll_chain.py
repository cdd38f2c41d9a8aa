"""NVIDIA NCCL EP's low-latency kernel, counted from its own compiled code (session 19, ibgda).

NVIDIA/nccl 36191590 contrib/nccl_ep/device/low_latency.cu ("adapted from DeepEP"), compiled
with contrib/nccl_ep/Makefile's flags for sm_90 and read in SASS: DeepEP low-latency's
structure, but each peer pointer is NCCL's window lookup (the communicator's team fields, then
windows[comm], then the window's fields: three dependent loads where DeepEP de8cfca loads one
heap base) - before the dispatch's first copy, before its count store, before the combine's
first copy. Each priced with the project's Hopper latencies. Where the data sits (HBM or L2) is
the caller's switch (l2_flushed), as for every kernel: NVIDIA's ep_bench flushes nothing.
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


def test_one_node_adds_the_window_lookups():
    """In one load/store domain the dispatch takes two more dependent loads before its first
    copy and two more before its count (4 x l2_hit); the combine two more before its first
    copy; with the data in HBM or left in L2 alike."""
    hit = _HOP["l2_hit"]
    for flushed in (True, False):
        nccl, deepep = _pair(1, 8, l2_flushed=flushed)
        # DeepEP's 86 blocks send 128 tokens in two waves, NCCL EP's 128 blocks in one
        # (session 20): DeepEP's later token's own steps, then its release fence
        wave = (_HOP["hbm_load"] if flushed else hit) + _HOP["l2_atomic"] + _HOP["l1_hit"] + hit
        # each kernel's compiled cycles (session 24): DeepEP two tokens' send path and the
        # count's, NCCL EP one token's and the count's, each with its waited constant loads
        k, n = exchange_kernel("deepep-low-latency"), exchange_kernel("ncclep-low-latency")
        cycles_d = ((2 * k.cycle("send_cycles", 0) + k.cycle("count_cycles", 0)) * _HOP["cycle"]
                    + (2 * 4 + 3) * _HOP["const_l1"])
        cycles_n = (n.cycle("send_cycles", 0) + n.cycle("count_cycles", 0)) * _HOP["cycle"] + 9 * _HOP["const_l1"]
        assert nccl.dispatch_phase.chain - deepep.dispatch_phase.chain == pytest.approx(
            4 * hit - wave - cycles_d + cycles_n, rel=1e-9)
        assert deepep.dispatch_phase.fence == pytest.approx(2 * nccl.dispatch_phase.fence,
                                                            rel=1e-12)
        assert nccl.combine_phase.chain - deepep.combine_phase.chain == pytest.approx(
            2 * hit, rel=1e-9)
    nccl, _ = _pair(1, 8, l2_flushed=False)
    assert nccl.dispatch_phase.chain == pytest.approx(2.1217e-6, abs=1e-9)   # 1.6710 before s24
    assert nccl.combine_phase.chain == pytest.approx(1.3307e-6, abs=1e-9)


def test_over_the_network_nothing_differs():
    """Across nodes the lookup's first round (the team test) sends the copy to the network
    path, as DeepEP's one heap-base load does; NCCL's GIN put is taken as DeepEP's put."""
    nccl, deepep = _pair(2, 16)
    assert nccl.dispatch_phase.chain == pytest.approx(deepep.dispatch_phase.chain, rel=1e-12)
    assert nccl.combine_phase.chain == pytest.approx(deepep.combine_phase.chain, rel=1e-12)
    assert nccl.dispatch == pytest.approx(deepep.dispatch, rel=1e-12)
    assert nccl.combine == pytest.approx(deepep.combine, rel=1e-12)


def test_the_ep_bench_rows_leave_the_data_in_l2():
    """ep_bench runs nothing between its calls: the rows price the exchange with
    l2_flushed=False (every hbm_load an L2 hit)."""
    import fidelity_heldout_moe
    assert fidelity_heldout_moe._EP_BENCH_L2_FLUSHED is False
    nccl, _ = _pair(1, 8, l2_flushed=False)
    for phase in ("dispatch", "combine"):
        value, how = fidelity_heldout_moe.CASES[f"ncclep-h100-ep8-ll-{phase}"](None)
        kernel = nccl.dispatch if phase == "dispatch" else nccl.combine
        assert value * 1e-6 > kernel and "L2 warm" in how
        assert value * 1e-6 - kernel < 3.1e-6             # the host launch only


def test_everything_but_the_chain_is_deepeps_profile():
    """... and the send grid: NCCL EP's is ceil(E / ceil(E / the device's SMs)) blocks, which
    this profile does not take (one wave at its rows' 128 tokens; session 20); and the
    combine's TMA send and receive, which NCCL EP has as DeepEP has them since #299 / #345
    (de8cfca, the deepep-low-latency profile, predates both): the same three fields as the
    profile of DeepEP's d28bd67 build (session 36)."""
    nccl = exchange_kernel("ncclep-low-latency")
    deepep = exchange_kernel("deepep-low-latency")
    d28 = exchange_kernel("deepep-low-latency@d28bd67")
    assert nccl.send_grid == 0 and deepep.send_grid == 3
    assert (nccl.cycle("send_cycles", 0), nccl.cycle("count_cycles", 0)) == (424, 282)   # its own build's (session 24)
    assert ((nccl.interleaved_chain, nccl.stage_vector, nccl.reduce_stages)
            == (d28.interleaved_chain, d28.stage_vector, d28.reduce_stages))
    assert dataclasses.replace(nccl, name=deepep.name, chain=deepep.chain,
                               sources=deepep.sources, send_grid=3,
                               interleaved_chain=deepep.interleaved_chain, stage_vector=(),
                               reduce_stages=0,
                               cycles=({"send_cycles": 478, "count_cycles": 165}, ())) == deepep
    src = next(p.source for p in nccl.parameters() if p.name == "ncclep-low-latency.chain")
    assert "36191590" in src and "ncclGetP2pPtr" in src
