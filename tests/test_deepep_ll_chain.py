"""DeepEP low-latency's serial steps before the first byte and after the last (session 18, ibgda).

Counted in the SASS of deepseek-ai/DeepEP de8cfca's csrc/kernels/internode_ll.cu (the commit
whose README shows the V1 low-latency table with NVLink peers), compiled as its setup.py does
(sm_90). Dispatch: the token's load, the slot atomicAdd, the peer's heap base (loaded after the
atomic's shuffle), the first round of the send buffer before the stores; in one load/store
domain the count warp's poll of the finish counter and its second heap-base load after the last
acknowledged copy; the receive part's packed_recv_count atomicAdd. Combine: layout_range, then
src_info, the heap base, then the token's first round (HBM after the test's 528 MB copy); the
grid sync after the peers' flags. Each priced with the project's Hopper latencies.
"""

import dataclasses

import pytest

import topologies
from analysis import moe_exchange
from fabric import EXCHANGE_LATENCY, exchange_kernel

_HOP = {name: p.value for name, p in EXCHANGE_LATENCY["hopper"].items()}
_FP8 = 1 + 4 / 128


def _h800(nodes):
    return topologies.build(f"rail:servers={nodes},gpus=8,links=8,nic=ib-ndr,chip=h800")


def _run(nodes, ep, **kw):
    return moe_exchange(_h800(nodes), "deepseek-v3", 128, ep, kernel="deepep-low-latency",
                        dispatch_bytes=_FP8, combine_bytes=2, **kw)


def _counted(flushed=True, loadstore=True, waves=0):
    """The steps above, by hand: (dispatch, combine) seconds. Over the network the first byte
    leaves after the warp's IBGDA put instead of the first round's load (dispatch) or x's
    load (combine): DeepEP's put is key lookups, the resv_head atomicAdd, the queue pair's
    fields, the fence after the WQE stores, the ready_head CAS (3 l2_hit + 2 l2_atomic), and a
    doorbell ring (lock CAS, atomicMax, fence, record pointer, fence, BlueFlame pointer:
    2 l2_atomic + 4 l2_hit). In one load/store domain a block's later token (``waves``:
    128 tokens over deepseek-v3's ceil(256 / 3) = 86 blocks, one; session 20) adds its own x,
    slot atomic, heap base (L1) and first round before its first byte. In one load/store
    domain each token of the busiest block (the first and each later one) also pays the cycles
    the compiled code schedules between those loads (send_cycles and four constant loads), and
    the count's path after the last release its own (count_cycles and three; session 24)."""
    hbm = _HOP["hbm_load"] if flushed else _HOP["l2_hit"]
    hit, atomic = _HOP["l2_hit"], _HOP["l2_atomic"]
    put = 7 * hit + 4 * atomic
    first = hit if loadstore else put           # the dispatch's first byte
    dispatch = hbm + atomic + hit + first + (2 * hit if loadstore else 0.0) + atomic
    if loadstore:
        dispatch += waves * (hbm + atomic + _HOP["l1_hit"] + hit)
        k = exchange_kernel("deepep-low-latency")
        cycle, const = _HOP["cycle"], _HOP["const_l1"]
        dispatch += (1 + waves) * (k.cycle("send_cycles", 0) * cycle + 4 * const)
        dispatch += k.cycle("count_cycles", 0) * cycle + 3 * const
    combine = 2 * hbm + hit + (hbm if loadstore else put) + (2 * hit + atomic)
    return dispatch, combine


def test_one_node_phases_carry_the_counted_fill_and_drain():
    r = _run(1, 8)
    want_d, want_c = _counted(waves=1)
    assert r.dispatch_phase.chain == pytest.approx(want_d, rel=1e-12)
    assert r.combine_phase.chain == pytest.approx(want_c, rel=1e-12)
    assert r.dispatch_phase.chain == pytest.approx(2.6951e-6, abs=1e-9)   # 2.014 before s24
    assert r.combine_phase.chain == pytest.approx(1.6667e-6, abs=1e-9)


@pytest.mark.parametrize("nodes, ep, transport", [(2, 16, None), (16, 128, None), (1, 8, "rdma")])
def test_over_the_network_the_first_byte_waits_for_the_put(nodes, ep, transport):
    """Over the network the first byte leaves after the warp's IBGDA put, and the count
    warp's steps after the last copy overlap the data's flight (not counted)."""
    r = _run(nodes, ep, transport=transport)
    want_d, want_c = _counted(loadstore=False)
    assert r.dispatch_phase.chain == pytest.approx(want_d, rel=1e-12)
    assert r.combine_phase.chain == pytest.approx(want_c, rel=1e-12)


def test_data_left_in_l2_prices_the_hbm_steps_as_l2_hits():
    r = _run(1, 8, l2_flushed=False)
    want_d, want_c = _counted(flushed=False, waves=1)
    assert r.dispatch_phase.chain == pytest.approx(want_d, rel=1e-12)
    assert r.combine_phase.chain == pytest.approx(want_c, rel=1e-12)


@pytest.mark.parametrize("nodes, ep", [(1, 8), (2, 16)])
def test_the_steps_add_to_the_phase_they_do_not_overlap_it(nodes, ep):
    kern = exchange_kernel("deepep-low-latency")
    bare = dataclasses.replace(kern, chain=((), ()))
    f = _h800(nodes)
    kw = {"dispatch_bytes": _FP8, "combine_bytes": 2}
    with_ = moe_exchange(f, "deepseek-v3", 128, ep, kernel=kern, **kw)
    without = moe_exchange(f, "deepseek-v3", 128, ep, kernel=bare, **kw)
    for a, b in ((with_.dispatch_phase, without.dispatch_phase),
                 (with_.combine_phase, without.combine_phase)):
        assert a.time - b.time == pytest.approx(a.chain, rel=1e-9)
        assert a.transfer == b.transfer and a.local_copy == b.local_copy


def test_loadstore_and_network_counts_are_one_or_none():
    k = exchange_kernel("deepep-low-latency")
    on = k.chain_latency(0, "hopper", 0, 0, loadstore=True)[0]
    off = k.chain_latency(0, "hopper", 0, 0, loadstore=False)[0]
    put = 7 * _HOP["l2_hit"] + 4 * _HOP["l2_atomic"]
    cycles = (k.cycle("send_cycles", 0) + k.cycle("count_cycles", 0)) * _HOP["cycle"] + 7 * _HOP["const_l1"]
    assert off - on == pytest.approx(put - 3 * _HOP["l2_hit"] - cycles, rel=1e-12)
    on_c = k.chain_latency(1, "hopper", 0, 0, loadstore=True)[0]
    off_c = k.chain_latency(1, "hopper", 0, 0, loadstore=False)[0]
    assert off_c - on_c == pytest.approx(put - _HOP["hbm_load"], rel=1e-12)


def test_a_chain_step_count_must_be_known():
    kern = exchange_kernel("deepep-low-latency")
    with pytest.raises(ValueError, match="loadstore"):
        dataclasses.replace(kern, chain=((("l2_hit", "load/store"),), ()))
