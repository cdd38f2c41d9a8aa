"""The one-sided combine pays its barrier's further lane passes' issued cycles (session 27, moe).

moeA2ACombineKernel's barrier runs in every block's first warp, lane l taking ranks l, l + 32, ...:
block 0 stores its flag into each peer, then every block polls each peer's flag. Beyond 32 ranks
each loop takes a further pass; the chain charged only the poll's load (one l2_hit a pass). The
loops' own cycles a further pass, walked for lane 0 of block 0 in flashinfer 579435f9's builds
(blog18's kernel; session 27's walk: the walk at ep ranks less the walk at 32,
every poll finding its flag at once, the polls as trips, a constant load const_l15 on a line no
earlier load read, else const_l1), are the combine table's ``lane_pass_cycles``: the least over the
builds and over ep 33-64, 123 (sm_90a at ep 33-38, whose peers 32-37's rows share a constant line
with peers 30-31's); one-sided-1.3 (flashinfer 5e891c6b sm_100a: 152.8 / 237.0) inherits it.
"""

import dataclasses

import fidelity_moe
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from analysis import moe_exchange
from fabric import EXCHANGE_LATENCY, exchange_kernel
from fabric._exchange import lane_passes

#: the walks' cycles beyond their trips at 32 ranks (one pass) and at ep ranks (two passes),
#: per build (session 27's walk; every rank gives the same)
_WALK = {"579435f9 sm_100a": {32: 173.8, 33: 410.8, 38: 410.8, 39: 410.8, 64: 410.8},
         "579435f9 sm_90a": {32: 156.1, 33: 279.5, 38: 279.5, 39: 363.7, 64: 363.7},
         "5e891c6b sm_100a": {32: 258.0, 33: 410.8, 34: 495.0, 39: 495.0, 64: 495.0}}
_COUNT = 123


def test_the_combine_table_holds_the_least_further_pass_of_the_walks():
    """The entry is the floor of the least further pass over the builds and the ep sizes walked
    (one request a constant load: a lower bound), in both one-sided profiles, and the combine
    chain charges it once per further lane pass beside the poll's l2_hit."""
    passes = {(b, ep): w[ep] - w[32] for b, w in _WALK.items() for ep in w if ep > 32}
    assert min(passes.values()) == pytest.approx(123.4, abs=0.05)
    assert min(passes, key=passes.get) == ("579435f9 sm_90a", 33)
    assert max(passes.values()) == pytest.approx(237.0, abs=0.05)
    assert _COUNT == int(min(passes.values()))
    for name in ("one-sided", "one-sided-1.3"):
        k = exchange_kernel(name)
        assert k.cycle("lane_pass_cycles", 1) == _COUNT
        assert k.cycle("lane_pass_cycles", 0) == 138           # the dispatch's own (session 26)
        assert ("cycle", "lane_pass_cycles") in k.chain[1]
        assert ("l2_hit", "lane_passes") in k.chain[1]
    text = dict(exchange_kernel("one-sided").sources)["lane_pass_cycles"]
    for fact in ("The combine's: session 27", "0x0130-0x04c0", "0x0150-0x05c0", "237.0",
                 "123.4", "207.6", "the least, 123", "152.8"):
        assert fact in text


_EP = st.sampled_from([2, 4, 8, 16, 32, 64])


def _without(k):
    """``k`` without the combine's lane_pass_cycles step and entry."""
    return dataclasses.replace(k, chain=(k.chain[0], tuple(
        s for s in k.chain[1] if s != ("cycle", "lane_pass_cycles")))).with_cycles(
            1, lane_pass_cycles=0)


@settings(max_examples=25, deadline=None)
@given(_EP, st.sampled_from([1, 2, 16, 128, 512]), st.sampled_from(["one-sided", "one-sided-1.3"]))
def test_each_further_lane_pass_adds_the_count_to_the_combine_only(ep, tokens, name):
    """On GB200 NVL72 the combine with the entry is exactly lane_passes(ep) x 123 cycles slower
    than the same kernel without it (fixed time and chain); the dispatch does not move; at <= 32
    ranks nothing moves."""
    f = fidelity_moe.nvl72()
    k = exchange_kernel(name)
    bare = _without(k)
    kw = {"dispatch_bytes": 2, "combine_bytes": 2, "routing": "balanced"}
    r = moe_exchange(f, "deepseek-v3", tokens, ep, kernel=k, **kw)
    b = moe_exchange(f, "deepseek-v3", tokens, ep, kernel=bare, **kw)
    add = lane_passes(ep) * _COUNT * EXCHANGE_LATENCY["blackwell"]["cycle"].value
    assert r.combine_phase.chain - b.combine_phase.chain == pytest.approx(add, rel=1e-9, abs=1e-15)
    assert r.combine_phase.fixed - b.combine_phase.fixed == pytest.approx(add, rel=1e-9, abs=1e-15)
    assert r.combine - b.combine == pytest.approx(add, rel=1e-9, abs=1e-15)
    assert r.dispatch == b.dispatch
    if ep <= 32:
        assert r.combine == b.combine


def test_the_collectors_combine_runs_the_same_barrier():
    """aiconfigurator's collector calls the same combine kernel: its chain carries the step."""
    import fidelity_heldout_moe
    k = fidelity_heldout_moe._A2A_COLLECTOR
    assert ("cycle", "lane_pass_cycles") in k.chain[1]
    assert k.cycle("lane_pass_cycles", 1) == _COUNT
    bare = _without(k)
    cyc = EXCHANGE_LATENCY["blackwell"]["cycle"].value
    for ep in (8, 64):
        got = (k.chain_latency(1, "blackwell", 1, 1, True, ep=ep)[0]
               - bare.chain_latency(1, "blackwell", 1, 1, True, ep=ep)[0])
        assert got == pytest.approx(lane_passes(ep) * _COUNT * cyc, abs=1e-15)
