"""DeepEP low-latency's dispatch sends a block's tokens in waves (session 20, ibgda).

Read in the SASS of deepseek-ai/DeepEP de8cfca's csrc/kernels/internode_ll.cu for sm_90 (the
V1 low-latency table's commit; session 18's build): the host launches ceil(E / 3) blocks and
block b casts and sends tokens b, b + B, ... one after another (loop 0x20e0-0x44e0). Each
sending warp ends a token's copy with atomic_add_release_global (MEMBAR.ALL.GPU: it waits for
the copy's peer stores to be acknowledged) and is among the 928 threads of the next token's
bar.sync, so in one load/store domain a block's next token sends only after the token before
is released: per further wave one more release fence (a peer round trip) and that token's own
steps before its first byte (x from HBM, the slot atomic, the heap base from L1, the first
round from L2). Over the network the put is posted and the fence does not wait for the NIC.
"""

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import topologies
from analysis import moe_exchange
from fabric import EXCHANGE_LATENCY, exchange_kernel

_HOP = {name: p.value for name, p in EXCHANGE_LATENCY["hopper"].items()}
_FP8 = 1 + 4 / 128
_KERN = exchange_kernel("deepep-low-latency")
# the same kernel as if every block sent one token (the model before session 20)
_ONE_WAVE = dataclasses.replace(
    _KERN, name="deepep-one-wave", send_grid=0,
    chain=(tuple(s for s in _KERN.chain[0] if s[1] != "further_waves"), _KERN.chain[1]))


def _walk(experts, tokens, per_block=3):
    """The kernel's send loop, walked: ``num_sms = cell_div(num_experts, 3)``; block ``b``
    takes ``token_idx = b; token_idx < num_tokens; token_idx += num_sms``; the busiest block's
    tokens after its first."""
    sms = -(-experts // per_block)
    sent = [0] * sms
    for b in range(sms):
        t = b
        while t < tokens:
            sent[b] += 1
            t += sms
    return max(sent) - 1


@settings(max_examples=40, deadline=None)
@given(st.integers(8, 600), st.integers(1, 2048))
def test_the_waves_are_the_kernels_send_loop(experts, tokens):
    assert _KERN.send_waves(experts, tokens) == _walk(experts, tokens)


def _h800(nodes):
    return topologies.build(f"rail:servers={nodes},gpus=8,links=8,nic=ib-ndr,chip=h800")


def _both(nodes, ep, tokens, **kw):
    return tuple(moe_exchange(_h800(nodes), "deepseek-v3", tokens, ep, kernel=k,
                              dispatch_bytes=_FP8, combine_bytes=2, **kw)
                 for k in (_KERN, _ONE_WAVE))


@pytest.mark.parametrize("flushed", [True, False])
def test_one_node_pays_a_fence_and_a_token_per_further_wave(flushed):
    """128 tokens over deepseek-v3's 86 blocks: one further wave (the row's case)."""
    waves, one = _both(1, 8, 128, l2_flushed=flushed)
    first = _HOP["hbm_load"] if flushed else _HOP["l2_hit"]
    # ... and the cycles the later token's path schedules between them (session 24)
    steps = (first + _HOP["l2_atomic"] + _HOP["l1_hit"] + _HOP["l2_hit"]
             + _KERN.cycle("send_cycles", 0) * _HOP["cycle"] + 4 * _HOP["const_l1"])
    d, d1 = waves.dispatch_phase, one.dispatch_phase
    assert d1.fence > 0 and d.fence == pytest.approx(2 * d1.fence, rel=1e-12)
    assert d.chain - d1.chain == pytest.approx(steps, rel=1e-9)
    assert waves.dispatch - one.dispatch == pytest.approx(d1.fence + steps, rel=1e-9)
    assert d.transfer == d1.transfer and d.local_copy == d1.local_copy
    assert waves.combine == one.combine          # no fence between a sub-warp's copies


def test_the_waves_start_past_one_token_per_block():
    at, _ = _both(1, 8, 86)                      # 86 blocks, one token each
    past, _ = _both(1, 8, 87)
    three, _ = _both(1, 8, 173)                  # block 0 holds tokens 0, 86, 172
    assert at.dispatch == _both(1, 8, 86)[1].dispatch
    assert past.dispatch_phase.fence == pytest.approx(2 * at.dispatch_phase.fence, rel=1e-12)
    assert three.dispatch_phase.fence == pytest.approx(3 * at.dispatch_phase.fence, rel=1e-12)


@pytest.mark.parametrize("nodes, ep, transport", [(2, 16, None), (1, 8, "rdma")])
def test_over_the_network_the_waves_cost_nothing_more(nodes, ep, transport):
    waves, one = _both(nodes, ep, 128, transport=transport)
    assert waves.dispatch == one.dispatch and waves.combine == one.combine


def test_ncclep_sends_its_rows_in_one_wave():
    """NCCL EP's grid (128 blocks for 256 experts on an H100) is not modelled: no waves."""
    nccl = exchange_kernel("ncclep-low-latency")
    assert nccl.send_waves(256, 128) == 0 == nccl.send_waves(256, 4096)
    assert "SMs" in dict(nccl.sources)["send_grid"]
    src = next(p.source for p in _KERN.parameters() if p.name == "deepep-low-latency.send_grid")
    assert "de8cfca" in src and "0x20e0" in src


def test_a_wave_count_needs_the_send_grid():
    with pytest.raises(ValueError, match="send_grid"):
        dataclasses.replace(_ONE_WAVE, chain=((("l2_hit", "further_waves"),), ()))
    with pytest.raises(ValueError, match="send_grid"):
        dataclasses.replace(_KERN, send_grid=-1)


# NVIDIA nvbandwidth v0.2 on 8x NVIDIA H800 (driver 525.105.17), as published in
# liguodongiot/llm-action docs/llm-base/network-communication/nvbandwidth.md (e166c767): its SM
# copy kernel (16-B vectors, warp-contiguous stores), the store shape of DeepEP's warp copies.
_H800_SM_WRITE_ONE_PEER = 9271.04e9 / 56        # device_to_device_memcpy_write_sm, SUM / 56 pairs
_H800_SM_WRITE_BOTH_WAYS = 18341.61e9 / 56 / 2  # ..._bidirectional_memcpy_write_sm, one direction


@pytest.mark.parametrize("phase", ["dispatch_phase", "combine_phase"])
def test_one_node_moves_its_bytes_at_the_measured_sm_store_rate(phase):
    """The one-node transfer divides the remote bytes by the H800's NVLink rate, and that rate is
    what SM peer stores measure on the H800, into one peer and with both directions loaded, within
    1% (session 22). So the low-latency rows' remaining miss (deepep-v1-ep8-ll-dispatch 77 us
    against ~51) is not a lower per-link rate of SM stores; a lower link rate fitted to those rows
    would contradict this measurement (docs/sources.md s.7, session 22)."""
    ph = getattr(_both(1, 8, 128)[0], phase)
    assert ph.bottleneck == "scale-up" and ph.transfer == ph.scaleup > 0
    rate = ph.scaleup_bytes / ph.scaleup
    assert rate == pytest.approx(_H800_SM_WRITE_ONE_PEER, rel=0.01)
    assert rate == pytest.approx(_H800_SM_WRITE_BOTH_WAYS, rel=0.01)
