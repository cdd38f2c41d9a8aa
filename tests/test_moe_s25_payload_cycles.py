"""Session 25 (moe): the one-sided dispatch's payload loop pays the cycles its compiled code
issues beyond the loads the chain charges (``ExchangeKernel.payload_cycles`` = (each payload,
each pointer row after its first, each copy round after a payload's first, once); the
``"payload_cycles"`` chain step for the payloads the caller gives, ``"small_payload_cycles"`` for
each of the two small payloads (expert ids, router weights)).

Counted from moeA2ADispatchKernel<BlockPolicy, 8> of flashinfer 579435f9 (sm_100a and sm_90a):
thread 0 after the claims' barrier, per payload and per round, the least of the two builds each
term (fabric/_exchange.py, one-sided sources["payload_cycles"])."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from moe_cycle_counts import assert_moves_only, gb200_one_token, without_count

from fabric import EXCHANGE_LATENCY, exchange_kernel

PAY = (333, 25, 97, 105)
STEPS = (("cycle", "payload_cycles"), ("cycle", "small_payload_cycles"))


def _without_payload_cycles(name):
    return without_count(name, "payload_cycles", (), STEPS)


def _reference_cycles(payloads, rounds, rows, small=2):
    """The payload loop walked as counted: every payload (the caller's and the small ones) its
    set-up and one row's address work per pointer-row wait after the first; each round after
    a payload's first; the block's set-up once."""
    total = PAY[3]
    for _ in range(payloads + small):
        total += PAY[0] + PAY[1] * max(rows - 1, 0)
    return total + PAY[2] * (rounds - payloads)


def test_the_one_sided_profiles_carry_the_counted_payload_cycles():
    for name in ("one-sided", "one-sided-1.3"):
        k = exchange_kernel(name)
        assert k.cycle("payload_cycles", 0) == PAY
        assert k.chain[0].count(STEPS[0]) == 1 and k.chain[0].count(STEPS[1]) == 2
        assert not set(STEPS) & set(k.chain[1])
        p = {q.name: q for q in k.parameters()}[f"{name}.payload_cycles"]
        assert p.value == "333+25+97+105" and p.unit == "cycles"
        assert "cuobjdump" in p.source and "0x1d90-0x5820" in p.source
    for name in ("deepep-low-latency", "ncclep-low-latency", "pplx", "deepep-normal"):
        assert all(exchange_kernel(name).cycle("payload_cycles", p) == () for p in (0, 1))


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(["blackwell", "hopper"]), st.integers(1, 8), st.integers(1, 2),
       st.integers(0, 5), st.booleans())
def test_the_dispatch_chain_pays_the_payload_loop(arch, ranks, payloads, extra_rounds, flushed):
    """Against the profile without the steps: the walked loop's cycles for the caller's payloads
    (each at least one round), the two small payloads, the rows the chain counts (one per
    destination on Blackwell, the first two together on Hopper), nothing in the combine."""
    k, bare = exchange_kernel("one-sided"), _without_payload_cycles("one-sided")
    rounds = payloads + extra_rounds
    kw = {"ranks": ranks, "rounds": rounds, "l2_flushed": flushed, "slots": 8,
          "payloads": payloads}
    rows = ranks if arch == "blackwell" else (ranks - 1 if ranks >= 2 else 1)
    assert k.pointer_loads(ranks, arch) == rows
    cycle = EXCHANGE_LATENCY[arch]["cycle"].value
    t, _ = k.chain_latency(0, arch, **kw)
    t0, _ = bare.chain_latency(0, arch, **kw)
    assert t - t0 == pytest.approx(_reference_cycles(payloads, rounds, rows) * cycle, rel=1e-9)
    assert k.chain_latency(1, arch, **kw)[0] == bare.chain_latency(1, arch, **kw)[0]


@pytest.mark.parametrize("degraded", [False, True])
def test_the_blog18_one_token_dispatch_moves_by_the_walked_loop(degraded):
    """EP8, one BF16 token (4 rounds of 256 x 16 B), 8 destinations on GB200: (3 x (333 + 7 x
    25) + 3 x 97 + 105) cycles = 1,920 = 0.970 us more in the dispatch, intact or with a link
    cut; the combine does not move."""
    r = gb200_one_token("one-sided", degraded)
    r0 = gb200_one_token(_without_payload_cycles("one-sided"), degraded)
    step = 1920 * EXCHANGE_LATENCY["blackwell"]["cycle"].value
    assert_moves_only(r, r0, "dispatch", step)


def test_bad_payload_cycles_are_refused_by_name():
    k = _without_payload_cycles("one-sided")
    for bad in ((1, 2, 3), (1, 2, 3, 4, 5), (-1, 0, 0, 0)):
        with pytest.raises(ValueError, match="payload_cycles"):
            k.with_cycles(0, payload_cycles=bad)
    # session 38: a wrong kind (a float or bool count, a list, a bare int) is a TypeError
    for bad in ((1.5, 0, 0, 0), (True, 0, 0, 0), [333, 25, 97, 105], 333):
        with pytest.raises(TypeError, match="payload_cycles"):
            k.with_cycles(0, payload_cycles=bad)
    # a chain that charges the loop needs the counts
    with pytest.raises(ValueError, match="payload_cycles"):
        exchange_kernel("one-sided").with_cycles(0, payload_cycles=())
