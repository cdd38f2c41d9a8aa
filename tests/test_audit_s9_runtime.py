"""Audit session 9: NCCL's per-channel speed never rises when a link or lane fails.

NCCL's bus bandwidth is channels x the graph's per-channel speed (bwIntra, found by the
topology search from its highest speed down, src/graph/search.cc). The model's per-channel
bandwidth is the schedule's B over the channel count; a failure that removes channels (lanes
of one rank, a link the ring does not use) faster than it lowers B used to RAISE the speed of
each channel, so a small message on fewer channels ran faster than intact. Reference: the intact fabric, same group, op, size and runtime; a speed-up
counts only where NCCL ran the same algorithm and protocol and the schedule's own hardware
floor (runtime "ideal", at the size and at 1 GiB) did not get faster too (a detour of
dimension-order routing can spread a hot spot: a true effect, s.3b), as in
benchmarks/scan_degraded_runtime.py.
"""

import pytest
from degrade import built
from hypothesis import given, settings
from hypothesis import strategies as st

import topologies
from analysis import NotApplicableError, cost
from analysis._collectives import communicator_channels
from fabric import FabricError, RoutingError, SpecError

H200_PLANES = "switch:8,planes=4,links=5/4/4/5,tech=nvlink4,chip=h200"


def test_two_lost_lanes_speed_a_small_all_reduce_only_by_nccls_channel_step():
    # audit s9 held this group at the intact fabric's per-channel rate (ring/LL on one channel,
    # 18.25 us intact, 17.89 us degraded before that cap). Lead's decision (session 19, board
    # 22:07): where the channels are NCCL's own search, a degraded group is priced as the
    # group built that way, and the never-faster property allows exactly NCCL's channel steps:
    # two of chip0's lanes lost, NCCL's ring search finds 16 channels where 18 lanes find 24,
    # so each channel's share of the ring's bandwidth rises from B/24 to B'/16, and the
    # transfer falls by exactly that ratio (the fixed part, the tuner's latency, is the same)
    f = topologies.build(H200_PLANES)
    g = f.without(lanes=[("chip0", "sw0"), ("chip0", "sw1")])
    assert (communicator_channels(f)[0], communicator_channels(g)[0]) == (24, 16)
    B = [cost(x, "all-reduce", 2**34, algorithm="ring", runtime="ideal").busbw for x in (f, g)]
    for n in (14336, 28672, 65536):
        a, b = cost(f, "all-reduce", n), cost(g, "all-reduce", n)
        assert (a.algorithm, a.protocol) == (b.algorithm, b.protocol) == ("ring", "LL")
        assert (a.channels, a.fixed) == (b.channels, b.fixed)
        assert (a.time - a.fixed) / (b.time - b.fixed) == pytest.approx(
            (B[1] / 16) / (B[0] / 24), rel=1e-3)


def test_a_link_the_ring_does_not_use_does_not_speed_it_up():
    # before: torus 4x4 without chip14-chip2 and chip4-chip8 (chip4 keeps 3 lanes: channels
    # 8 -> 6, the ring's bottleneck chip0-chip1 unchanged): 16.85 -> 15.04 us
    f = topologies.build("torus:4x4")
    g = f.without(links=[("chip14", "chip2"), ("chip4", "chip8")])
    kw = {"runtime": "nccl@2.29.2", "ranks": [0, 1, 3, 4, 11, 15]}
    a, b = cost(f, "all-gather", 32768, **kw), cost(g, "all-gather", 32768, **kw)
    assert (a.algorithm, a.protocol) == (b.algorithm, b.protocol)
    assert b.time >= a.time


def _floor_faster(f, g, op, n, algorithm, ranks):
    try:
        t = [cost(x, op, m, algorithm=algorithm, runtime="ideal", ranks=ranks).time
             for x in (f, g) for m in (n, 2**30)]
    except (NotApplicableError, RoutingError):
        return True
    return t[2] < t[0] * (1 - 1e-9) or t[3] < t[1] * (1 - 1e-9)


_SPECS = (H200_PLANES, "switch:8,planes=2,links=9,tech=nvlink5,chip=b200", "hgx-h200",
          "torus:4x4", "hypermesh:2x4", "rail:servers=2,gpus=4,chip=h100")


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(_SPECS), st.sampled_from(["all-reduce", "all-gather", "reduce-scatter"]),
       st.sampled_from(["nccl", "nccl@2.21.5", "nccl@2.29.2"]),
       st.sampled_from([64, 4096, 14336, 65536, 1 << 20, 1 << 26]), st.data())
def test_a_failure_never_speeds_up_the_same_nccl_choice(spec, op, runtime, n, data):
    f = built(spec)
    edges = sorted(tuple(sorted(e)) for e in f.graph.edges)
    bundles = [e for e in edges if f.graph.edges[e].get("lanes", 1) > 1]
    links = data.draw(st.lists(st.sampled_from(edges), max_size=2, unique=True))
    lanes = data.draw(st.lists(st.sampled_from(bundles), max_size=3)) if bundles else []
    lanes = [e for e in lanes if e not in links]
    ranks = data.draw(st.one_of(st.none(), st.lists(
        st.sampled_from(list(f.endpoints)), min_size=2, max_size=f.n_endpoints, unique=True)))
    try:
        g = f.without(links=links, lanes=lanes)
        a = cost(f, op, n, runtime=runtime, ranks=ranks)
        b = cost(g, op, n, runtime=runtime, ranks=ranks)
    except (FabricError, NotApplicableError, RoutingError, SpecError):
        return
    if (a.algorithm, a.protocol) != (b.algorithm, b.protocol) or _floor_faster(
            f, g, op, n, a.algorithm, ranks):
        return
    # NCCL's channel step (lead's decision, session 19): where its search gives the degraded
    # communicator other channels (a B200 GPU that lost 2 of 18 lanes: 24 -> 16), each channel's
    # share of the ring's bandwidth can rise, as in NCCL itself (its size is pinned by
    # test_two_lost_lanes_speed_a_small_all_reduce_only_by_nccls_channel_step); the property
    # holds where the communicator's channels are the same (communicator_channels' contract)
    if communicator_channels(f, ranks, runtime) != communicator_channels(g, ranks, runtime):
        return
    assert b.time >= a.time * (1 - 1e-12), (a, b)
