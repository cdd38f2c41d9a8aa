"""Review findings of session 14 (review): reproductions of confirmed findings.

A strict xfail is a finding still open (its reason says what and whose); a plain test is one
fixed and verified.
"""

import pytest

import topologies
from analysis import cost, decode_step, moe_exchange


def _same_run_and_floor_slower(f, g, op, n, rt):
    a, b = cost(f, op, n, runtime=rt), cost(g, op, n, runtime=rt)
    assert (a.algorithm, a.protocol) == (b.algorithm, b.protocol)
    floors = [cost(x, op, m, algorithm=b.algorithm, runtime="ideal").time
              for x in (f, g) for m in (n, 2**30)]
    assert floors[2] > floors[0] and floors[3] > floors[1]   # the hardware got slower
    return a.time, b.time


@pytest.mark.xfail(strict=True, reason=(
    "S14-R1 (runtime; review 07:21): one failed NVLink of gb200-nvl72 makes NCCL's 72-rank "
    "all-to-all faster with the same schedule and protocol while runtime 'ideal' gets slower: "
    "the ring search finds 34 channels with 17 lanes (32 with 18), p2pnChannels 32 -> 64, "
    "2.29+ batches ceil(72/32)=3 -> 2 (8 B 4.80 -> 4.20 us; 4 MiB 18.93 -> 15.87 us); the "
    "degraded rule's stated scope (same schedule and protocol: never faster) does not hold"))
@pytest.mark.parametrize("n", [8, 4 * 2**20])
def test_s14_r1_a_failed_nvlink_never_speeds_nccl_all_to_all_on_nvl72(n):
    f = topologies.build("gb200-nvl72")
    g = f.without(links=[("chip0", "sw0")])
    intact, degraded = _same_run_and_floor_slower(f, g, "all-to-all", n, "nccl")
    assert degraded >= intact * (1 - 1e-9), (intact, degraded)


@pytest.mark.xfail(strict=True, reason=(
    "S14-R1 (runtime; review 07:21), second path: nccl@2.20.5 72-rank all-gather, ring/LL128 "
    "on both, 16 MiB 198.17 -> 179.33 us without chip0-sw0: collective channels 24 -> 28 and "
    "the 2.20 split (addCBDCollToPlan) carries 13 -> 25 channels"))
def test_s14_r1_a_failed_nvlink_never_speeds_nccl_2_20_ring_all_gather_on_nvl72():
    f = topologies.build("gb200-nvl72")
    g = f.without(links=[("chip0", "sw0")])
    intact, degraded = _same_run_and_floor_slower(f, g, "all-gather", 2**24, "nccl@2.20.5")
    assert degraded >= intact * (1 - 1e-9), (intact, degraded)


@pytest.mark.xfail(strict=True, reason=(
    "S14-R1 (runtime; review 07:27), in the exchange and the decode step: gb200-nvl72 without "
    "chip0-sw0, moe_exchange all-to-allv EP 72 at 1 token 4.951 -> 4.360 us (dispatch), and "
    "kimi-k2's default decode step (tp=1,dp=72,ep=72, runtime nccl) at batch 16 8345.37 -> "
    "8273.90 us: each exchange one p2p batch step shorter"))
def test_s14_r1_a_failed_nvlink_never_speeds_the_exchange_or_the_decode_step_on_nvl72():
    f = topologies.build("gb200-nvl72")
    g = f.without(links=[("chip0", "sw0")])
    x, y = (moe_exchange(h, "deepseek-v3", 1, 72, kernel="all-to-allv", dispatch_bytes=1,
                         combine_bytes=2) for h in (f, g))
    assert y.dispatch >= x.dispatch * (1 - 1e-9) and y.combine >= x.combine * (1 - 1e-9)
    a, b = (decode_step("kimi-k2", h, batch=16, context=2048).time for h in (f, g))
    assert b >= a * (1 - 1e-12), (a, b)
