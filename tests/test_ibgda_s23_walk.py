"""Session 23 (ibgda): the two stretches of pplx-kernels' dispatch loops that session 22 left
uncounted, read from the compiled code (pplx-kernels 7af3059 ``internode_scatter.cu``, nvcc
13.0 -arch=sm_90a -rdc=true -O3 against NVSHMEM 3.2.5's headers, cuobjdump 13.5, the stall
counts in bits 41-44 of each instruction's second control word):

- the send loop (``scatterKernel<10,true,true>`` 0x0bf0-0x2590): per token another block
  sends, warp 0 waits for the LDC of ``numExpertsPerToken`` (a constant-cache hit), the
  token's expert id (an L1 hit, charged since session 19), the LDS of its shared counter,
  and 202 cycles the loop schedules beyond those three loads;
- the receive walk (0x3f90-0x4110): leaving a local expert for the next takes the branch's
  fall-through path, 72 cycles where a slot inside a row takes 37, 35 more per expert left
  before the last;
- the receiving block's loop per received token outside its loads and later rounds
  (0x3ee0-0x47a0: 277 cycles and an LDC);
- the sending warp's own token in one node outside its loads and loops (0x0bf0-0x20d0: 590
  cycles and two LDCs).

The shared-memory load is priced with MT4G's H100 p-chase (29.88 cycles at 1.98 GHz), the
source of the constant-cache latencies already used.
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


def _walked_token(arch):
    """One walked token of the send loop, from the loads and cycles read in the SASS."""
    lat = EXCHANGE_LATENCY[arch]
    return (lat["l1_hit"].value + lat["const_l1"].value + lat["shared_load"].value
            + 202 * lat["cycle"].value)


def _walk_wraps_brute(experts, ep):
    """scatterKernel l.196-210 run over every slot: count the times ``++dp == numDPGroups``
    moves the walk to a next expert rather than breaking out after the last one."""
    local = experts // ep
    expert = dp = wraps = 0
    while True:
        dp += 1
        if dp == ep:
            dp = 0
            expert += 1
            if expert == local:
                break
            wraps += 1
    return wraps


def test_shared_load_is_mt4g_h100_p_chase():
    p = EXCHANGE_LATENCY["hopper"]["shared_load"]
    assert p.unit == "s" and p.value == pytest.approx(29.882 / 1.98e9, rel=1e-12)
    assert "mt4g" in p.source and "shared memory latency" in p.source
    b = EXCHANGE_LATENCY["blackwell"]["shared_load"]
    assert b.value == p.value and b.source.startswith("assumption")


@settings(max_examples=40, deadline=None)
@given(n=st.integers(0, 1024), arch=st.sampled_from(["hopper", "blackwell"]),
       loadstore=st.booleans())
def test_each_walked_token_costs_its_loop(n, arch, loadstore):
    """One node (load/store copies): each walked token adds its three loads and 202 cycles to
    the sending warps' chain; across the network the walk is not on it (session 19's rule)."""
    kw = {"remote_signals": 3, "loadstore": loadstore, "put_rounds": 15, "stage_rounds": 1,
          "interleaved": True}
    got = (_KERN.chain_latency(0, arch, 0, 0, walked_tokens=n, **kw)[0]
           - _KERN.chain_latency(0, arch, 0, 0, **kw)[0])
    want = 0.0
    for _ in range(n if loadstore else 0):
        want += _walked_token(arch)
    assert got == pytest.approx(want, rel=1e-9, abs=1e-15)


@settings(max_examples=60, deadline=None)
@given(ep_log=st.integers(0, 9), experts_log=st.integers(0, 10))
def test_walk_wraps_match_the_loop(ep_log, experts_log):
    ep, experts = 2 ** ep_log, 2 ** experts_log
    if experts < ep:                       # fewer experts than ranks: one slot row per rank
        assert _KERN.walk_wraps(experts, ep) == 0
        return
    w = _KERN.walk_wraps(experts, ep)
    assert w == _walk_wraps_brute(experts, ep)
    for arch in ("hopper", "blackwell"):
        cyc = EXCHANGE_LATENCY[arch]["cycle"].value
        got = (_KERN.chain_latency(0, arch, 0, 0, walk_slots=experts - 1, ep=ep, walk_wraps=w)[0]
               - _KERN.chain_latency(0, arch, 0, 0, walk_slots=experts - 1, ep=ep)[0])
        assert got == pytest.approx(35 * w * cyc, rel=1e-9, abs=1e-18)


def _h100(nodes):
    return topologies.build(f"rail:servers={nodes},gpus=8,links=18,nic=ib-ndr,chip=h100")


def test_one_node_128_token_dispatch_is_floored_by_the_send_walk():
    """pplx-h100-ep8-bs128-nvlink-dispatch (held-out 83.6 us): the block with token 127 sends
    it after 127 walked tokens (18.3 us), then stages and puts it; that chain is now longer
    than the links' time, so it sets the transfer."""
    r = moe_exchange(_h100(1), "deepseek-v3", 128, 8, kernel="pplx",
                     dispatch_bytes=1 + 4 / 128, combine_bytes=2, routing="uniform")
    walk = 127 * _walked_token("hopper")
    assert walk == pytest.approx(18.25e-6, rel=0.01)
    ph = r.dispatch_phase
    assert ph.interleaved > walk and ph.transfer == pytest.approx(ph.interleaved, rel=1e-12)
    # the receive walk at EP8: 32 local experts, 31 left by the wrap path
    assert _KERN.walk_wraps(256, 8) == 31


def test_the_counts_need_their_fields_and_bad_input_is_named():
    with pytest.raises(ValueError, match="walk_wrap_cycles needs walk_cycles"):
        dataclasses.replace(_KERN, name="x", cycles=cycles_without(_KERN, "walk_cycles"), chain=((), ()),
                            interleaved_chain=((), ()))
    with pytest.raises(ValueError, match="send_walk_cycles must be an int >= 0"):
        dataclasses.replace(_KERN, name="x").with_cycles(0, send_walk_cycles=-1)
    with pytest.raises(TypeError, match="walk_wrap_cycles must be an int >= 0"):  # session 31
        dataclasses.replace(_KERN, name="x").with_cycles(0, walk_wrap_cycles=1.5)
    bare = dataclasses.replace(_KERN, name="x", cycles=cycles_without(_KERN, "send_walk_cycles"),
                               interleaved_chain=((), ()))
    with pytest.raises(ValueError, match="walked_token_cycles needs send_walk_cycles"):
        dataclasses.replace(bare, interleaved_chain=((("cycle", "walked_token_cycles"),), ()))
    with pytest.raises(SpecError, match="experts must be an int >= 1"):
        _KERN.walk_wraps(0, 8)
    with pytest.raises(TypeError, match="ep must be an int >= 1"):     # a wrong kind (s31)
        _KERN.walk_wraps(256, True)
    with pytest.raises(SpecError, match="walk_wraps must be an int >= 0"):
        _KERN.chain_latency(0, "hopper", 0, 0, walk_wraps=-1)
    assert exchange_kernel("deepep-low-latency").walk_wraps(256, 8) == 0
    assert math.isclose(_KERN.chain_latency(0, "hopper", 0, 0)[0],
                        _KERN.chain_latency(0, "hopper", 0, 0, walk_wraps=0)[0])


@settings(max_examples=30, deadline=None)
@given(n=st.integers(0, 64), arch=st.sampled_from(["hopper", "blackwell"]))
def test_each_received_token_costs_its_loop(n, arch):
    """The receiving block's token loop (scatterKernel 0x3ee0-0x47a0) outside its loads and its
    copy's later rounds: per received token the LDC of numTokensPerDP's base (a constant-cache
    hit) and 277 cycles (10 + 114 + the first round's top 54 + the last round's tail 29 + 29 +
    41), where session 22 counted only the rounds beyond the first."""
    assert _KERN.cycle("receive_token_cycles", 0) == 277
    assert "0x4730-0x47a0" in dict(_KERN.sources)["receive_token_cycles"]
    new = {("const_l1", "walk_tokens"), ("cycle", "walk_token_cycles")}
    old = dataclasses.replace(_KERN, name="pplx-s22", cycles=cycles_without(_KERN, "receive_token_cycles"), chain=(
        tuple(s for s in _KERN.chain[0] if s not in new), _KERN.chain[1]))
    lat = EXCHANGE_LATENCY[arch]
    got = (_KERN.chain_latency(0, arch, 0, 0, walk_tokens=n)[0]
           - old.chain_latency(0, arch, 0, 0, walk_tokens=n)[0])
    want = 0.0
    for _ in range(n):
        want += lat["const_l1"].value + 277 * lat["cycle"].value
    assert got == pytest.approx(want, rel=1e-9, abs=1e-15)
    with pytest.raises(ValueError, match="receive_token_cycles must be an int >= 0"):
        dataclasses.replace(_KERN, name="x").with_cycles(0, receive_token_cycles=-2)
    with pytest.raises(ValueError, match="counted in walk_token_cycles needs receive_token_cycles"):
        dataclasses.replace(_KERN, name="x").with_cycles(0, receive_token_cycles=0)


@settings(max_examples=20, deadline=None)
@given(arch=st.sampled_from(["hopper", "blackwell"]), loadstore=st.booleans(),
       walked=st.integers(0, 200))
def test_the_sending_warps_own_token_path(arch, loadstore, walked):
    """One load/store domain: the sending warp's own token outside its loads and loops
    (scatterKernel 0x0bf0-0x20d0 along its path: 590 cycles) and the two LDCs of NVSHMEM's peer
    table; across the network the dispatch's copies are posts and none of it is counted."""
    assert _KERN.cycle("send_cycles", 0) == 590
    assert "0x1e70-0x1f40" in dict(_KERN.sources)["send_cycles"]
    new = {("const_l1", "loadstore"), ("cycle", "loadstore_send_cycles")}
    old = dataclasses.replace(_KERN, name="pplx-s22", cycles=cycles_without(_KERN, "send_cycles"), interleaved_chain=(
        tuple(s for s in _KERN.interleaved_chain[0] if s not in new),
        _KERN.interleaved_chain[1]))
    lat = EXCHANGE_LATENCY[arch]
    kw = {"loadstore": loadstore, "walked_tokens": walked, "put_rounds": 15, "stage_rounds": 1,
          "interleaved": True}
    got = (_KERN.chain_latency(0, arch, 0, 0, **kw)[0]
           - old.chain_latency(0, arch, 0, 0, **kw)[0])
    want = (590 * lat["cycle"].value + 2 * lat["const_l1"].value) if loadstore else 0.0
    assert got == pytest.approx(want, rel=1e-9, abs=1e-15)
    with pytest.raises(ValueError, match="send_cycles must be an int >= 0"):
        dataclasses.replace(_KERN, name="x").with_cycles(0, send_cycles=-1)
    with pytest.raises(ValueError, match="counted in loadstore_send_cycles needs send_cycles"):
        dataclasses.replace(_KERN, name="x").with_cycles(0, send_cycles=0)
