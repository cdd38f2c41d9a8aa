"""Session 23 (ibgda): pplx-kernels' combine copy loop outside its loads and loops, counted in
the compiled code (7af3059 ``internode_gather.cu``, gatherKernel<bf16,8,true,true>, nvcc 13.0
-arch=sm_90a -rdc=true -O3, NVSHMEM 3.2.5 headers; stall counts of the control words):

- every copy: 206 cycles from sourceExpert's consumer to the P2P pointer's load (0x0a50-0x0c70,
  0x0cf0-0x0d90, 0x0e10-0x1020) and the LDC of dpSize;
- each later copy: its loop back (0x2320-0x23e0, 0x0a10: 77 cycles) and the LDC of
  sourceExpert's base;
- the P2P pointer is an L2 load: each put-with-signal's fence (MEMBAR.SC.SYS + CCTL.IVALL, or
  the IBGDA post's MEMBAR.SC.GPU + CCTL.IVALL) invalidates L1, and the block's first copy is its
  first touch (session 17 had counted an L1 hit);
- a copy to a load/store peer: its put path and signal (0x1050-0x1280, 0x1380-0x13a0,
  0x1e30-0x1f60, 0x2080-0x20d0: 208 cycles) and, after the fence, the signal's peer pointer
  again (L2); the dispatch's put reloads it the same way (scatterKernel 0x1f80-0x20b0);
- the receive sum, per pass: its accumulators' set-up and its stores (150 cycles).
"""

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from moe_cycle_counts import cycles_without

import topologies
from analysis import moe_exchange
from analysis._moe_exchange import _copy_fences
from fabric import EXCHANGE_LATENCY, exchange_kernel

_KERN = exchange_kernel("pplx")
_LAT = EXCHANGE_LATENCY["hopper"]
_NEW = {("cycle", "copy_cycles"), ("cycle", "further_copy_cycles"),
        ("const_l1", "one"), ("const_l1", "further_copies")}


def _old():
    """The profile as session 22 left it: no copy-loop cycles, the P2P pointer an L1 hit, no
    signal-pointer reload after the dispatch's fence."""
    def back(phase, cycles):
        # the P2P pointer is the L2 step right after the copy loop's cycles
        out = list(phase)
        i = out.index(("cycle", cycles)) + 1
        assert out[i][0] == "l2_hit"
        out[i] = ("l1_hit", out[i][1])
        return tuple(s for s in out if s not in _NEW)
    chain = _KERN.chain
    inter = _KERN.interleaved_chain
    # the combine's first copy: its last "one" L2 step before the waits is the P2P pointer
    c = back(chain[1], "copy_cycles")
    d = list(inter[0])
    j = d.index(("cycle", "put_round_cycles")) + 1
    assert d[j] == ("l2_hit", "loadstore")
    del d[j]
    return dataclasses.replace(_KERN, name="pplx-s22", cycles=cycles_without(_KERN, "copy_cycles"),
                               chain=(chain[0], c),
                               interleaved_chain=(tuple(d), back(inter[1], "further_copy_cycles")))


def test_copy_cycles_are_the_profiles_and_sourced():
    assert _KERN.cycle("copy_cycles", 1) == (206, 77, 208)
    src = dict(_KERN.sources)["copy_cycles"]
    for addr in ("0x0a50", "0x2320", "0x1050", "0x1f70", "CCTL.IVALL"):
        assert addr in src
    assert {p.name: p.unit for p in _KERN.parameters()}["pplx.copy_cycles"] == "cycles"


@settings(max_examples=30, deadline=None)
@given(copies=st.integers(1, 16), stage=st.integers(0, 4), arch=st.sampled_from(["hopper",
                                                                                 "blackwell"]))
def test_each_copy_pays_its_loop(copies, stage, arch):
    """The first copy (chain) and each later one (interleaved) against a step-by-step sum."""
    lat = EXCHANGE_LATENCY[arch]
    cyc, const = lat["cycle"].value, lat["const_l1"].value
    l1, l2 = lat["l1_hit"].value, lat["l2_hit"].value
    old = _old()
    kw = {"serial_copies": copies, "stage_rounds": stage}
    first = (_KERN.chain_latency(1, arch, 0, 0, **kw)[0]
             - old.chain_latency(1, arch, 0, 0, **kw)[0])
    assert first == pytest.approx(206 * cyc + const + l2 - l1, rel=1e-9)
    later = (_KERN.chain_latency(1, arch, 0, 0, interleaved=True, **kw)[0]
             - old.chain_latency(1, arch, 0, 0, interleaved=True, **kw)[0])
    want = 0.0
    for _ in range(copies - 1):
        want += (206 + 77) * cyc + 2 * const + l2 - l1
    assert later == pytest.approx(want, rel=1e-9, abs=1e-15)


def _h100(nodes):
    return topologies.build(f"rail:servers={nodes},gpus=8,links=18,nic=ib-ndr,chip=h100")


def test_one_node_fenced_copies_pay_their_put_path_and_signal_pointer():
    """EP8 x 128 tokens: the slowest block's 8 copies (expected largest fenced count over the
    100 full blocks), each fenced copy 208 cycles and an L2 trip more; 7 later copies each
    their loop's cycles, two LDCs, and their pointer from L2; the dispatch's put one L2 trip."""
    kw = {"dispatch_bytes": 1 + 4 / 128, "combine_bytes": 2, "routing": "uniform"}
    new = moe_exchange(_h100(1), "deepseek-v3", 128, 8, kernel=_KERN, **kw)
    was = moe_exchange(_h100(1), "deepseek-v3", 128, 8, kernel=_old(), **kw)
    cyc, const, l1, l2 = (_LAT[n].value for n in ("cycle", "const_l1", "l1_hit", "l2_hit"))
    trip = new.dispatch_phase.fence
    rounds = 28 * (l2 + 35 * cyc)                    # the put's warp copy (sessions 18, 22)
    fences_new = _copy_fences(1024, 132, 7 / 8, trip + rounds + l2 + 208 * cyc, 0.0)
    fences_old = _copy_fences(1024, 132, 7 / 8, trip + rounds, 0.0)
    want = 7 * ((206 + 77) * cyc + 2 * const + l2 - l1) + fences_new - fences_old
    got = new.combine_phase.interleaved - was.combine_phase.interleaved
    assert got == pytest.approx(want, rel=1e-9)
    assert 3.5e-6 < got < 4.5e-6
    assert new.combine_phase.chain - was.combine_phase.chain == pytest.approx(
        206 * cyc + const + l2 - l1, rel=1e-9)
    assert new.dispatch_phase.interleaved - was.dispatch_phase.interleaved == pytest.approx(
        l2, rel=1e-9)
    # across the network the dispatch's copies are posts: no reload on the counted chain
    new2 = moe_exchange(_h100(2), "deepseek-v3", 128, 16, kernel=_KERN, **kw)
    was2 = moe_exchange(_h100(2), "deepseek-v3", 128, 16, kernel=_old(), **kw)
    assert new2.dispatch_phase.interleaved == was2.dispatch_phase.interleaved
    assert new2.combine_phase.interleaved > was2.combine_phase.interleaved


def test_copy_cycles_are_validated():
    with pytest.raises(ValueError, match="copy_cycles must be \\(\\) or three ints >= 0"):
        dataclasses.replace(_KERN, name="x").with_cycles(1, copy_cycles=(206, 77))
    with pytest.raises(ValueError, match="copy_cycles must be \\(\\) or three ints >= 0"):
        dataclasses.replace(_KERN, name="x").with_cycles(1, copy_cycles=(206, 77, -1))
    with pytest.raises(TypeError, match="each of copy_cycles must be an int, got True"):  # s38
        dataclasses.replace(_KERN, name="x").with_cycles(1, copy_cycles=(206, True, 1))
    with pytest.raises(ValueError, match="counted in copy_cycles needs copy_cycles"):
        dataclasses.replace(_KERN, name="x").with_cycles(1, copy_cycles=())
    base = exchange_kernel("deepep-low-latency")
    with pytest.raises(ValueError, match="copy_cycles needs combine_blocks"):
        dataclasses.replace(base, name="x").with_cycles(1, copy_cycles=(1, 2, 3))


@settings(max_examples=30, deadline=None)
@given(tokens=st.integers(1, 400), hidden=st.sampled_from([2048, 4096, 5120, 7168]),
       k=st.sampled_from([1, 2, 4, 8]), arch=st.sampled_from(["hopper", "blackwell"]))
def test_each_receive_pass_costs_its_set_up_and_stores(tokens, hidden, k, arch):
    """gatherKernel's receive sum per pass (2048 elements of the token, 8 per thread) outside
    its (pass, copy) loop: the accumulators' set-up (0x2ad0-0x2bc0: 23) and the pass's BF16
    stores and back branch (0x30f0-0x3600: 127): 150 cycles per pass of the busiest block."""
    assert _KERN.cycle("reduce_pass_cycles", 1) == 150
    assert "0x30f0-0x3600" in dict(_KERN.sources)["reduce_pass_cycles"]
    old = dataclasses.replace(_KERN, name="pplx-s22", cycles=cycles_without(_KERN, "reduce_pass_cycles"), chain=(
        _KERN.chain[0], tuple(s for s in _KERN.chain[1] if s != ("cycle", "reduce_pass_cycles"))))
    loads = _KERN.receive_reduce(256, k, tokens, hidden)
    got = (_KERN.chain_latency(1, arch, 0, 0, reduce_loads=loads, slots=k)[0]
           - old.chain_latency(1, arch, 0, 0, reduce_loads=loads, slots=k)[0])
    blocks = min(_KERN.combine_blocks, 256 * tokens)
    passes = 0
    for _ in range(-(-tokens // blocks)):          # the busiest block's tokens, pass by pass
        for _ in range(0, hidden, 256 * 8):
            passes += 1
    assert got == pytest.approx(passes * 150 * EXCHANGE_LATENCY[arch]["cycle"].value, rel=1e-9)
    with pytest.raises(ValueError, match="reduce_pass_cycles must be an int >= 0"):
        dataclasses.replace(_KERN, name="x").with_cycles(1, reduce_pass_cycles=-5)
    with pytest.raises(ValueError, match="counted in reduce_pass_cycles needs reduce_pass_cycles"):
        dataclasses.replace(_KERN, name="x").with_cycles(1, reduce_pass_cycles=0)
