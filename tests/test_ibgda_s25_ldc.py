"""Session 25 (ibgda, review S24-R4): one rule for the constant loads a counted path waits for.

The project's cycle counts read from SASS charge a load the path waits for (an LDC whose
consumer issues before the load can return) as a constant-L1 hit and leave out the stall
cycles issued under it: pplx's send, copy and walk counts, DeepEP's and NCCL EP's. Session 24's
count of pplx-kernels 7af3059's count loop (scatterKernel<10,true,true> 0x2690-0x2f10, 391
stall cycles on the NVLink-peer path, less 12 under the index load: 379) neither charged nor
named its two: ``LDC.64 c[0x3][RZ]`` at 0x2a30, waited for at 0x2a60 after 4 cycles, and
``@P0 LDC.64 c[0x3][RZ]`` at 0x2bf0, waited for at 0x2c30 after 7. By the one rule: 368 cycles
and two const_l1 per expert the slowest count warp walks, across the network only.
"""

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fabric import EXCHANGE_LATENCY, exchange_kernel

_KERN = exchange_kernel("pplx")
_HOP = EXCHANGE_LATENCY["hopper"]
# the listing's control words on lane 0's NVLink-peer path (session 18's build, cuobjdump 13.5):
# (address, stall count) from each LDC to the instruction before its waiting consumer
_UNDER_LDC = {0x2a30: (1, 2, 1), 0x2bf0: (1, 2, 2, 2)}
_PATH = 391                         # the path's stall counts (session 24, re-derived by review)
_UNDER_INDEX = 12                   # issued under the index load (priced as an L2 trip)


def test_the_count_loop_drops_the_cycles_under_its_waited_loads():
    assert _KERN.cycle("count_pass_cycles", 0) == _PATH - _UNDER_INDEX - sum(map(sum, _UNDER_LDC.values()))
    src = dict(_KERN.sources)["count_pass_cycles"]
    for text in ("0x2a30", "0x2a60", "0x2bf0", "0x2c30", "const_l1", "S24-R4"):
        assert text in src
    # each waited load charged once, on the chain that runs the loop (the dispatch's, across
    # the network), none elsewhere
    steps = [s for ph in _KERN.chain + _KERN.interleaved_chain for s in ph
             if s[1] == "count_passes"]
    assert steps == [("const_l1", "count_passes")] * len(_UNDER_LDC)
    assert _KERN.interleaved_chain[0].count(("const_l1", "count_passes")) == 2


@settings(max_examples=20, deadline=None)
@given(passes=st.integers(0, 64), signals=st.integers(0, 8))
def test_each_walked_expert_pays_the_loop_and_its_two_constant_loads(passes, signals):
    kw = {"interleaved": True, "remote_signals": signals}
    net = _KERN.chain_latency(0, "hopper", 1, 1, count_passes=passes, **kw)[0]
    base = _KERN.chain_latency(0, "hopper", 1, 1, count_passes=0, **kw)[0]
    assert net - base == pytest.approx(
        passes * (368 * _HOP["cycle"].value + 2 * _HOP["const_l1"].value), rel=1e-12, abs=1e-18)
    # in one node the counts are stores beside the copies: the loop is not on the chain
    one = _KERN.chain_latency(0, "hopper", 1, 1, count_passes=passes, loadstore=True, **kw)[0]
    assert one == _KERN.chain_latency(0, "hopper", 1, 1, count_passes=0, loadstore=True, **kw)[0]
    # the combine walks no experts
    assert (_KERN.chain_latency(1, "hopper", 1, 1, count_passes=passes, interleaved=True)[0]
            == _KERN.chain_latency(1, "hopper", 1, 1, interleaved=True)[0])


def test_a_count_passes_step_needs_the_count_grid():
    with pytest.raises(ValueError, match="counted in count_passes needs count_grid"):
        dataclasses.replace(
            exchange_kernel("deepep-low-latency"), name="x",
            chain=((("const_l1", "count_passes"),), ()))
