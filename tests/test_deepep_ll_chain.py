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


def _counted(flushed=True, loadstore=True):
    """The steps above, by hand: (dispatch, combine) seconds."""
    hbm = _HOP["hbm_load"] if flushed else _HOP["l2_hit"]
    hit, atomic = _HOP["l2_hit"], _HOP["l2_atomic"]
    dispatch = hbm + atomic + 2 * hit + (2 * hit if loadstore else 0.0) + atomic
    combine = 3 * hbm + hit + (2 * hit + atomic)
    return dispatch, combine


def test_one_node_phases_carry_the_counted_fill_and_drain():
    r = _run(1, 8)
    want_d, want_c = _counted()
    assert r.dispatch_phase.chain == pytest.approx(want_d, rel=1e-12)
    assert r.combine_phase.chain == pytest.approx(want_c, rel=1e-12)
    assert r.dispatch_phase.chain == pytest.approx(1.311e-6, abs=1e-9)
    assert r.combine_phase.chain == pytest.approx(1.6667e-6, abs=1e-9)


@pytest.mark.parametrize("nodes, ep, transport", [(2, 16, None), (16, 128, None), (1, 8, "rdma")])
def test_over_the_network_the_count_warp_steps_overlap_the_flight(nodes, ep, transport):
    r = _run(nodes, ep, transport=transport)
    want_d, want_c = _counted(loadstore=False)
    assert r.dispatch_phase.chain == pytest.approx(want_d, rel=1e-12)
    assert r.combine_phase.chain == pytest.approx(want_c, rel=1e-12)


def test_data_left_in_l2_prices_the_hbm_steps_as_l2_hits():
    r = _run(1, 8, l2_flushed=False)
    want_d, want_c = _counted(flushed=False)
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


def test_loadstore_count_is_one_or_none():
    k = exchange_kernel("deepep-low-latency")
    on = k.chain_latency(0, "hopper", 0, 0, loadstore=True)[0]
    off = k.chain_latency(0, "hopper", 0, 0, loadstore=False)[0]
    assert on - off == pytest.approx(2 * _HOP["l2_hit"], rel=1e-12)
    assert k.chain_latency(1, "hopper", 0, 0, loadstore=True) == k.chain_latency(
        1, "hopper", 0, 0, loadstore=False)


def test_a_chain_step_count_must_be_known():
    kern = exchange_kernel("deepep-low-latency")
    with pytest.raises(ValueError, match="loadstore"):
        dataclasses.replace(kern, chain=((("l2_hit", "load/store"),), ()))
