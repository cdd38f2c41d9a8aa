"""Session 25 (moe): the one-sided combine's staging kernel pays the cycles its compiled code
issues beyond the loads the chain charges (``ExchangeKernel.prepare_cycles`` = 294, the
``"prepare_cycles"`` step of the combine chain).

Counted from moeA2APrepareCombineKernel<BlockPolicy> of flashinfer 579435f9 (sm_100a and
sm_90a): block 0's thread 0 from entry to exit, the least over both builds and 1-8 rounds
(fabric/_exchange.py, one-sided sources["prepare_cycles"])."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from moe_cycle_counts import assert_moves_only, gb200_one_token, without_count

from fabric import EXCHANGE_LATENCY, exchange_kernel

STEP = ("cycle", "prepare_cycles")


def _without_prepare_cycles(name):
    # the combine's count alone (the dispatch's own prepare kernel is session 26's count)
    return without_count(name, "prepare_cycles", 0, (STEP,), phases=(1,))


def test_the_one_sided_profiles_carry_the_counted_prepare_cycles():
    for name in ("one-sided", "one-sided-1.3"):
        k = exchange_kernel(name)
        assert k.cycle("prepare_cycles", 1) == 294
        assert k.chain[1].count(STEP) == 1
        # the dispatch's step charges the dispatch's own prepare kernel (session 26: 89)
        assert k.chain[0].count(STEP) == 1 and k.cycle("prepare_cycles", 0) == 89
        p = {q.name: q for q in k.parameters()}[f"{name}.prepare_cycles"]
        assert p.value == "89+294" and p.unit == "cycles"
        assert "cuobjdump" in p.source and "0x0000-0x08d0" in p.source
    for name in ("deepep-low-latency", "ncclep-low-latency", "pplx", "deepep-normal"):
        assert all(exchange_kernel(name).cycle("prepare_cycles", p) == 0 for p in (0, 1))


@settings(max_examples=30, deadline=None)
@given(st.sampled_from(["blackwell", "hopper"]), st.integers(1, 8), st.integers(1, 8),
       st.booleans())
def test_the_combine_chain_pays_the_staging_kernel_once(arch, ranks, rounds, flushed):
    k, bare = exchange_kernel("one-sided"), _without_prepare_cycles("one-sided")
    kw = {"ranks": ranks, "rounds": rounds, "l2_flushed": flushed, "slots": 8}
    cycle = EXCHANGE_LATENCY[arch]["cycle"].value
    assert (k.chain_latency(1, arch, **kw)[0] - bare.chain_latency(1, arch, **kw)[0]
            == pytest.approx(294 * cycle, rel=1e-9))
    assert k.chain_latency(0, arch, **kw)[0] == bare.chain_latency(0, arch, **kw)[0]


@pytest.mark.parametrize("degraded", [False, True])
def test_a_staged_one_token_combine_moves_by_the_staging_kernel(degraded):
    """blog18's EP8 one-token combine (the MoE output staged by the prepare kernel): 294 cycles
    = 0.149 us more on GB200, intact or with a link cut; the dispatch does not move."""
    r = gb200_one_token("one-sided", degraded)
    r0 = gb200_one_token(_without_prepare_cycles("one-sided"), degraded)
    step = 294 * EXCHANGE_LATENCY["blackwell"]["cycle"].value
    assert_moves_only(r, r0, "combine", step)


def test_bad_prepare_cycles_are_refused_by_name():
    k = _without_prepare_cycles("one-sided")
    for bad in (-1, 1.5, True, "294"):     # a wrong kind is a TypeError (session 31)
        with pytest.raises(ValueError if bad == -1 else TypeError, match="prepare_cycles"):
            k.with_cycles(1, prepare_cycles=bad)
    with pytest.raises(ValueError, match="prepare_cycles"):
        exchange_kernel("one-sided").with_cycles(1, prepare_cycles=0)
