"""Session 26 (dispatch): TensorRT-LLM's one-sided dispatch pays the cycles its compiled code
issues outside the loads the chain charges in three more places, each counted from flashinfer
579435f9's kernels built for sm_100a and sm_90a (the least of the two builds; the sources of
fabric/_exchange.py's one-sided profile):

- its prepare kernel (moeA2APrepareDispatchKernel, entry to EXIT): ``prepare_cycles`` = 89 in
  the dispatch's cycle table (the combine's staging kernel keeps its 294);
- the dispatch kernel's last block from its copy's barrier to its release fence (the block
  counter's atomic, the is-last broadcast, the send counts' stores): ``release_cycles`` = 233;
- the expert-id sanitize kernel (blog18's third dispatch kernel; not launched by the
  aiconfigurator collector's op): ``sanitize_cycles`` = 164;
- the last block's per-peer loops (send counts, flag stores, polls: one warp, lane l taking
  ranks l, l + 32, ...) per further lane pass beyond 32 ranks: ``lane_pass_cycles`` = 138."""
import dataclasses

import fidelity_heldout_moe
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from moe_cycle_counts import assert_moves_only, gb200_one_token

import topologies
from analysis import moe_exchange
from fabric import EXCHANGE_KERNELS, EXCHANGE_LATENCY, exchange_kernel

ONCE = {"prepare_cycles": 89, "release_cycles": 233, "sanitize_cycles": 164}
COUNTS = {**ONCE, "lane_pass_cycles": 138}
STEPS = tuple(("cycle", name) for name in COUNTS)


def _cycles(ep, sanitize=True):
    """The dispatch's session-26 cycles at ``ep`` ranks (brute force: the loops' passes)."""
    passes = max(len(range(lane, ep, 32)) for lane in range(32)) - 1
    return sum(ONCE.values()) - (0 if sanitize else ONCE["sanitize_cycles"]) + 138 * passes


def _before(kernel):
    """``kernel`` as it was before session 26's dispatch counts: their dispatch steps and
    dispatch table entries taken out (the combine untouched)."""
    chain = (tuple(s for s in kernel.chain[0] if s not in STEPS), kernel.chain[1])
    bare = dataclasses.replace(kernel, chain=chain)
    return bare.with_cycles(0, **dict.fromkeys(COUNTS, 0))


def test_the_one_sided_profiles_carry_the_three_dispatch_counts():
    for name in ("one-sided", "one-sided-1.3"):
        k = exchange_kernel(name)
        for count, value in COUNTS.items():
            assert k.cycle(count, 0) == value
            assert k.chain[0].count(("cycle", count)) == 1
        assert k.cycle("prepare_cycles", 1) == 294
        for count in ("release_cycles", "sanitize_cycles"):
            assert k.cycle(count, 1) == 0 and ("cycle", count) not in k.chain[1]
        # the combine's barrier loops have their own entry (session 27, moe: 123)
        assert k.cycle("lane_pass_cycles", 1) == 123
        params = {p.name: p for p in k.parameters()}
        assert params[f"{name}.prepare_cycles"].value == "89+294"
        for count, address in (("release_cycles", "0x5830-0x5bf0"),
                               ("sanitize_cycles", "0x0000-0x0270"),
                               ("prepare_cycles", "0x0000-0x0130"),
                               ("lane_pass_cycles", "0x5d30-0x5f10")):
            p = params[f"{name}.{count}"]
            assert p.unit == "cycles"
            assert "579435f9" in p.source and "cuobjdump" in p.source and address in p.source
    for name, k in EXCHANGE_KERNELS.items():
        if not name.startswith("one-sided"):
            assert all(k.cycle(c, 0) == 0 for c in COUNTS), name


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(["one-sided", "one-sided-1.3"]), st.sampled_from(["blackwell", "hopper"]),
       st.integers(1, 8), st.integers(1, 8), st.sampled_from([1, 8, 33, 64, 128]),
       st.integers(1, 3), st.booleans())
def test_the_dispatch_chain_pays_the_three_counts_once(name, arch, ranks, rounds, ep, payloads,
                                                       flushed):
    k = exchange_kernel(name)
    bare = _before(k)
    kw = {"ranks": ranks, "rounds": max(rounds, payloads), "ep": ep, "payloads": payloads,
          "l2_flushed": flushed, "slots": 8}
    cycle = EXCHANGE_LATENCY[arch]["cycle"].value
    added = k.chain_latency(0, arch, **kw)[0] - bare.chain_latency(0, arch, **kw)[0]
    assert added == pytest.approx(_cycles(ep) * cycle, rel=1e-9)
    assert k.chain_latency(1, arch, **kw)[0] == bare.chain_latency(1, arch, **kw)[0]


def test_the_collector_profile_pays_the_prepare_kernel_and_the_tail_not_the_sanitize_kernel():
    """aiconfigurator's collector calls moe_a2a_dispatch (prepare + dispatch kernels): its
    profile drops the sanitize kernel's read and cycles, and keeps the other two counts."""
    k = fidelity_heldout_moe._A2A_COLLECTOR
    assert k.cycle("sanitize_cycles", 0) == 0
    assert ("cycle", "sanitize_cycles") not in k.chain[0]
    assert k.cycle("prepare_cycles", 0) == 89 and k.cycle("release_cycles", 0) == 233
    assert k.cycle("lane_pass_cycles", 0) == 138
    one_sided = exchange_kernel("one-sided")
    # the same chain as the one-sided dispatch's less the sanitize kernel's two steps
    i = one_sided.chain[0].index(("cycle", "sanitize_cycles"))
    assert one_sided.chain[0][i - 1] == ("l2_hit", "one")
    assert list(k.chain[0]) == [s for j, s in enumerate(one_sided.chain[0]) if j not in (i - 1, i)]
    kw = {"ranks": 8, "rounds": 4, "ep": 8, "payloads": 2, "l2_flushed": False, "slots": 8}
    cycle = EXCHANGE_LATENCY["blackwell"]["cycle"].value
    hit = EXCHANGE_LATENCY["blackwell"]["l2_hit"].value
    gap = (one_sided.chain_latency(0, "blackwell", **kw)[0]
           - k.chain_latency(0, "blackwell", **kw)[0])
    assert gap == pytest.approx(hit + 164 * cycle, rel=1e-9)


@pytest.mark.parametrize("degraded", [False, True])
def test_a_one_token_dispatch_moves_by_the_three_counts(degraded):
    """blog18's EP8 one-token exchange on GB200: the dispatch 486 cycles (0.245 us) longer,
    intact or with a link cut; the combine does not move."""
    r = gb200_one_token("one-sided", degraded)
    r0 = gb200_one_token(_before(exchange_kernel("one-sided")), degraded)
    step = sum(ONCE.values()) * EXCHANGE_LATENCY["blackwell"]["cycle"].value
    assert_moves_only(r, r0, "dispatch", step)


@pytest.mark.parametrize("ep", [33, 64, 72])
def test_beyond_32_ranks_the_dispatch_pays_each_further_lane_pass(ep):
    """One BF16 token on GB200 NVL72 at EP33-72 (two or three lanes passes of the last
    block's per-peer loops): the dispatch moves by the once-counts and 138 cycles a further
    pass; the combine does not move."""
    f = topologies.build("gb200-nvl72")
    kw = {"dispatch_bytes": 2, "combine_bytes": 2, "routing": "balanced"}
    r = moe_exchange(f, "deepseek-v3", 1, ep, kernel="one-sided", **kw)
    r0 = moe_exchange(f, "deepseek-v3", 1, ep, kernel=_before(exchange_kernel("one-sided")), **kw)
    assert _cycles(ep) > sum(ONCE.values())
    assert_moves_only(r, r0, "dispatch", _cycles(ep) * EXCHANGE_LATENCY["blackwell"]["cycle"].value)


def test_bad_dispatch_counts_are_refused_by_name():
    k = _before(exchange_kernel("one-sided"))
    for count in COUNTS:
        for bad in (-1, 1.5, True, "89"):     # a wrong kind is a TypeError (session 31)
            with pytest.raises(ValueError if bad == -1 else TypeError, match=count):
                k.with_cycles(0, **{count: bad})
    for count in ("release_cycles", "sanitize_cycles"):
        # a chain step without its count in the dispatch's table
        with pytest.raises(ValueError, match=count):
            exchange_kernel("one-sided").with_cycles(0, **{count: 0})
