"""Audit (session 17): the one-sided kernels' chain counts against brute force.

Session 16 priced pplx-kernels' serial sends as chain counts (fabric/_exchange.py):
``ExchangeKernel.count_walk`` (the dispatch's count warps: block ``b`` of ``B`` signals experts
``b, b + B, ...`` one after another, a NIC post when the expert's rank is outside the sender's
load/store domain), ``serial_copies`` (combine block ``b`` sends copies ``b, b + B, ...``), ``lane_passes`` (one
warp's loop over the EP ranks) and, from 09dc968, ``ExchangeKernel.combine_posts`` (the
combine's NIC posts: its blocks' first signals, then one per copy across the network). Each is checked here against a
simulation written without the model's code, on uneven expert counts, uneven and scattered
domains, and grids of one block up to the 132-block cap.
"""

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fabric import exchange_kernel
from fabric._exchange import lane_passes, serial_copies

SETTINGS = settings(max_examples=200, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


def _owners(experts, ep):
    """Expert -> EP rank: ranks hold consecutive experts, ``experts // ep`` each, the last
    rank the rest (pplx-kernels' numLocalExperts blocks; uneven counts go to the end)."""
    size = max(experts // ep, 1)
    out = []
    for r in range(ep):
        end = experts if r == ep - 1 else min(experts, (r + 1) * size)
        out += [r] * max(0, end - len(out))
    return out


def _walk_brute(experts, k, tokens, domains, warps=10, most=132):
    """(remote signals, signals) of the slowest count warp, by walking every sender rank and
    every block of the grid."""
    blocks = min(max(math.ceil(experts / warps), tokens * k), most)
    owner = _owners(experts, len(domains))
    # each block's experts, the same for every sender (listed once, not once per sender)
    by_block = [[e for e in range(experts) if e % blocks == b] for b in range(blocks)]
    worst = (0, 0)
    for sender in range(len(domains)):
        for mine in by_block:
            if not mine:
                continue
            remote = sum(1 for e in mine if domains[owner[e]] != domains[sender])
            worst = max(worst, (remote, len(mine)))
    return worst


@st.composite
def _exchange(draw):
    experts = draw(st.integers(1, 400))
    k = draw(st.integers(1, min(experts, 16)))
    ep = draw(st.integers(1, min(experts, 48)))
    tokens = draw(st.sampled_from([1, 2, 3, 7, 16, 64, 128, 512]))
    kind = draw(st.sampled_from(["one", "each", "nodes", "scattered"]))
    if kind == "one":
        domains = [0] * ep
    elif kind == "each":
        domains = list(range(ep))
    elif kind == "nodes":
        per = draw(st.integers(1, ep))
        domains = [r // per for r in range(ep)]
    else:
        domains = draw(st.lists(st.integers(0, 3), min_size=ep, max_size=ep))
    return experts, k, tokens, domains


@given(_exchange())
@SETTINGS
def test_count_walk_is_the_slowest_count_warp_by_brute_force(case):
    experts, k, tokens, domains = case
    assert exchange_kernel("pplx").count_walk(experts, k, tokens, domains) == \
        _walk_brute(experts, k, tokens, domains)


@given(_exchange())
@SETTINGS
def test_count_walk_signals_nothing_remote_inside_one_domain(case):
    experts, k, tokens, domains = case
    remote, passes = exchange_kernel("pplx").count_walk(experts, k, tokens, [7] * len(domains))
    assert remote == 0 and passes == math.ceil(experts / min(max(math.ceil(experts / 10),
                                                                 tokens * k), 132))


@given(st.integers(0, 5000), st.integers(1, 200))
@SETTINGS
def test_serial_copies_is_the_busiest_block_by_brute_force(copies, blocks):
    busiest = max(len(range(b, copies, blocks)) for b in range(blocks))
    assert serial_copies(copies, blocks) == busiest


@given(st.integers(1, 1000))
@SETTINGS
def test_lane_passes_are_the_warp_loops_further_passes(ep):
    passes = max(len(range(lane, ep, 32)) for lane in range(32))
    assert lane_passes(ep) == max(passes - 1, 0)


@given(st.integers(0, 3000), st.integers(1, 132), _exchange(), st.sampled_from([1, 10, 32]))
@SETTINGS
def test_combine_posts_are_the_slowest_blocks_posts_by_brute_force(copies, blocks, case, warps):
    """gatherKernel by hand: block ``b``'s warps first signal ranks ``b x warps + w`` (a NIC
    post when the rank is outside the sender's domain; the warps post at once, the copy loop
    waits for all: one post on the chain), then every copy's signal is a post when the EP
    ranks span domains; the slowest block over every sender rank and block."""
    domains = case[3]
    ep = len(domains)
    spans = len(set(domains)) > 1
    worst = 0
    for sender in range(ep):
        for b in range(blocks):
            sync = [r for r in range(b * warps, (b + 1) * warps) if r < ep]
            first = any(domains[r] != domains[sender] for r in sync)
            mine = len(range(b, copies, blocks))
            worst = max(worst, (first + mine) if spans else 0)
    assert exchange_kernel("pplx").combine_posts(copies, blocks, domains) == worst


@pytest.mark.parametrize("spec, ep", [("dgx-h100", 8), ("rail:servers=2,gpus=8,chip=h100", 16)])
def test_a_pplx_exchange_takes_many_tokens_per_rank(spec, ep):
    """Every other kernel answers at any token count; pplx's combine raised OverflowError
    from 16,979 tokens per rank, in one node and across nodes. The time stays finite and
    grows with the tokens."""
    import analysis
    import topologies
    f = topologies.build(spec)
    times = [analysis.moe_exchange(f, "deepseek-v3", t, ep, kernel="pplx", dispatch_bytes=1,
                                   combine_bytes=2).combine for t in (16978, 16979, 10**6)]
    assert all(math.isfinite(x) for x in times) and times[0] <= times[1] < times[2]
