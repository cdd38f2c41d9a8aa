"""Session 25 (moe): the one-sided dispatch's slot claims pay the cycles their compiled code
issues beyond the loads the chain charges (``ExchangeKernel.claim_cycles``, the
``"claim_cycles"`` chain step: ``slots`` times it).

Counted from moeA2ADispatchKernel<BlockPolicy, 8> of flashinfer 579435f9 (sm_100a and sm_90a):
thread 0's path from the expert ids' pointer to the block's barrier, over every pattern of new
and repeated destination ranks; the least over both builds, 1,006.7 cycles over 8 slots, is
125 a slot (fabric/_exchange.py, one-sided sources["claim_cycles"])."""
import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from moe_cycle_counts import assert_moves_only, gb200_one_token, without_count

from fabric import EXCHANGE_LATENCY, ExchangeKernel, exchange_kernel

CLAIM = 125


def _without_claims(name):
    """The profile as it was before: no claim_cycles field set and no step charging it."""
    return without_count(name, "claim_cycles", 0, (("cycle", "claim_cycles"),))


def test_the_one_sided_profiles_carry_the_counted_claim_cycles():
    for name in ("one-sided", "one-sided-1.3"):
        k = exchange_kernel(name)
        assert k.cycle("claim_cycles", 0) == CLAIM
        assert ("cycle", "claim_cycles") in k.chain[0]
        assert ("cycle", "claim_cycles") not in k.chain[1]
        p = {q.name: q for q in k.parameters()}[f"{name}.claim_cycles"]
        assert p.value == CLAIM and p.unit == "cycles"
        assert "cuobjdump" in p.source and "0x0140-0x1d80" in p.source
    # kernels whose claims were not walked this way charge none
    for name in ("deepep-low-latency", "ncclep-low-latency", "pplx", "deepep-normal"):
        assert all(exchange_kernel(name).cycle("claim_cycles", p) == 0 for p in (0, 1))


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(["blackwell", "hopper"]), st.integers(1, 8), st.integers(1, 8),
       st.integers(1, 6), st.booleans(), st.sampled_from(["one-sided", "one-sided-1.3"]))
def test_the_dispatch_chain_pays_the_claims_once_per_slot(arch, slots, ranks, rounds, flushed,
                                                          name):
    """Against the same profile without the field: exactly slots x 125 cycles more in the
    dispatch, nothing in the combine, at every shape."""
    ranks = min(ranks, slots)
    k, bare = exchange_kernel(name), _without_claims(name)
    cycle = EXCHANGE_LATENCY[arch]["cycle"]
    kw = {"ranks": ranks, "rounds": rounds, "l2_flushed": flushed, "slots": slots,
          "payloads": 2}
    t, used = k.chain_latency(0, arch, **kw)
    t0, _ = bare.chain_latency(0, arch, **kw)
    assert t - t0 == pytest.approx(slots * CLAIM * cycle.value, rel=1e-9)
    assert cycle in used
    assert k.chain_latency(1, arch, **kw)[0] == bare.chain_latency(1, arch, **kw)[0]


@pytest.mark.parametrize("degraded", [False, True])
def test_a_one_token_dispatch_on_gb200_moves_by_eight_slots(degraded):
    """EP8, one token, top-8 (DeepSeek-V3): the dispatch's fixed part moves by 8 x 125 cycles
    (0.505 us at the Blackwell cycle), intact or with a link cut; the combine does not."""
    r = gb200_one_token("one-sided", degraded)
    r0 = gb200_one_token(_without_claims("one-sided"), degraded)
    step = 8 * CLAIM * EXCHANGE_LATENCY["blackwell"]["cycle"].value
    assert_moves_only(r, r0, "dispatch", step)
    assert 0.50e-6 < step < 0.51e-6


def test_bad_claim_cycles_are_refused_by_name():
    k = exchange_kernel("one-sided")
    for bad in (-1, 1.5, True, "125"):     # a wrong kind is a TypeError (session 31)
        with pytest.raises(ValueError if bad == -1 else TypeError, match="claim_cycles"):
            k.with_cycles(0, claim_cycles=bad)
    # a chain that charges the claims needs the count
    with pytest.raises(ValueError, match="claim_cycles"):
        dataclasses.replace(exchange_kernel("deepep-normal"),
                            chain=((("cycle", "claim_cycles"),), ()))
    with pytest.raises(ValueError, match="claim_cycles"):
        k.with_cycles(0, claim_cycles=0)      # its chain still charges them
    assert isinstance(_without_claims("one-sided"), ExchangeKernel)
