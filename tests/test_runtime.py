"""Communication runtimes (fabric._runtime) and collectives costed under them.

References: the hardware floor (runtime "ideal") is today's model and keeps its own
tests in test_collectives.py; here NCCL's tuner formulas are recomputed by hand from
the constants in NVIDIA/nccl src/graph/tuning.cc, and properties that must hold for
any fabric (monotone in size, never below the lower bound or the hardware floor) are
checked with Hypothesis.
"""

import dataclasses
import datetime
import functools
import itertools
import math
import re
import types

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import topologies
from analysis import (
    NotApplicableError,
    communicator_channels,
    cost,
    cost_sizes,
    host_launch_delay,
    ring_search,
    schedule,
)
from fabric import (
    NCCL_RELEASE_DATES,
    RUNTIMES,
    Parameter,
    RoutingError,
    Runtime,
    SpecError,
    runtime,
)

H100 = topologies.build("dgx-h100")


def test_profiles_and_parameters_have_sources():
    assert set(RUNTIMES) == {"ideal", "nccl", "symmetric-memory"}
    for name in ("nccl", "symmetric-memory"):
        ps = runtime(name).parameters()
        assert ps and all(isinstance(p, Parameter) and p.source for p in ps), name
    assert runtime(runtime("nccl")) is runtime("nccl")
    with pytest.raises(ValueError, match="unknown runtime 'mpi'"):
        runtime("mpi")
    assert isinstance(runtime("ideal"), Runtime)


def test_the_nvls_groups_byte_constants_are_bytes():
    """Review S20-R3: the 'nvls' group's chunks and last-loop alignments carry 'B' (as the p2p
    group's byte keys do); its channel counts, stage count and the SM100 tuning flag stay ''."""
    for name in ("nccl@2.18.5", "nccl"):
        units = {p.name.split(".nvls.")[1]: p.unit for p in runtime(name).parameters()
                 if ".nvls." in p.name}
        for key in ("chunk", "chunk_below.64", "chunk_below.2", "tree_chunk",
                    "tree_max_chunk_nodes4", "head_align", "tree_head_align"):
            assert units[key] == "B", (name, key)
        for key in ("channels.hopper", "channels_nodes.blackwell", "stages", "tree_sm100_tuning"):
            assert units[key] == "", (name, key)
    # review S21-R1: the search's speeds and the factors' seconds
    units = {p.name: p.unit for p in runtime("nccl").parameters()}
    for key in ("search.inter_speeds.hopper", "search.inter_speeds.blackwell",
                "search.pci_bw.pcie5-x16", "search.postset_more_bw"):
        assert units[f"nccl.{key}"] == "B/s", key
    for key in ("net_overhead", "collnet_arity_latency", "pat_rank_latency"):
        assert units[f"nccl.factors.{key}"] == "s", key
    assert units["nccl.factors.net_overhead_simple"] == units["nccl.search.lower_ratio"] == ""


def test_nccl_small_all_reduce_is_the_tuner_latency():
    # 8 ranks, one node: ring LL = base 6.6 us + 14 steps x 0.6 us (tuning.cc); tree LL
    # = 6.8 + 2 x 7 x 0.6 = 15.2 us; NVLS = 25 us: the tuner picks ring LL at 8 bytes
    r = cost(H100, "all-reduce", 8)
    assert (r.algorithm, r.protocol) == ("ring", "LL")
    want = 6.6e-6 + 14 * 0.6e-6
    assert r.fixed == pytest.approx(want, rel=1e-12)
    assert r.time == pytest.approx(want, rel=1e-3)
    labels = dict(c for c in r.candidates if isinstance(c[1], float))
    assert labels["tree/LL"] == pytest.approx(15.2e-6, rel=1e-3)
    assert labels["nvls/Simple"] == pytest.approx(25e-6, rel=1e-3)


def test_nccl_large_ring_is_the_protocol_bandwidth():
    # Simple ring: NCCL's SM90_NVLINK_BW 20.6 GB/s x 18 links = 370.8 GB/s bus bandwidth
    r = cost(H100, "all-reduce", 2**33, algorithm="ring")
    assert r.protocol == "Simple"
    assert r.busbw == pytest.approx(370.8e9, rel=2e-3)


def test_protocol_switch_points_and_the_ramp():
    sizes = [2**k for k in range(3, 34)]
    rs = cost_sizes(H100, "all-reduce", sizes, algorithm="ring")
    protos = [r.protocol for r in rs]
    assert protos[0] == "LL" and protos[-1] == "Simple"
    # LL gives way to LL128 / Simple once, never back
    first_not_ll = protos.index(next(p for p in protos if p != "LL"))
    assert "LL" not in protos[first_not_ll:]
    times = [r.time for r in rs]
    assert all(b >= a for a, b in itertools.pairwise(times))
    busbw = np.array([r.busbw for r in rs])
    half = sizes[int(np.argmax(busbw >= busbw[-1] / 2))]
    # half the large-message bandwidth is reached in the MiB range, not at 0.1-1 MiB as
    # on the hardware floor
    floor = np.array([r.busbw for r in cost_sizes(H100, "all-reduce", sizes,
                                                  algorithm="ring", runtime="ideal")])
    half_floor = sizes[int(np.argmax(floor >= floor[-1] / 2))]
    assert half >= 8 * 2**20 and half >= 16 * half_floor


def test_channels_are_trimmed_for_small_messages():
    # topoGetAlgoInfo: ring LL drops channels while n < nc * 512 threads * 8 * nRanks
    r = cost(H100, "all-reduce", 64 * 2**10, algorithm="ring")
    assert r.protocol == "LL" and r.channels == 2   # 65536 / (512 * 64) = 2
    # 1 MiB would take 32; NCCL's ring search gives an 8-GPU H100 node 24 channels
    # (nccl_switch_channels; NCCL's own log: '24 coll channels'), all of them used
    assert cost(H100, "all-reduce", 2**20, algorithm="ring").channels == 24


def test_ops_per_launch_shares_the_base_latency():
    one = cost(H100, "all-reduce", 1024, algorithm="ring", ranks=H100.endpoints[:4])
    many = cost(H100, "all-reduce", 1024, algorithm="ring", ranks=H100.endpoints[:4],
                ops_per_launch=100)
    assert one.time - many.time == pytest.approx(6.6e-6 * 0.99, rel=1e-9)
    with pytest.raises(ValueError, match="ops_per_launch"):
        cost(H100, "all-reduce", 1024, ops_per_launch=0)


def test_send_recv():
    r = cost(H100, "send-recv", 8, ranks=H100.endpoints[:2])
    assert r.op == "send-recv" and r.ranks == 2 and r.algorithm == "point-to-point"
    # kernel floor (Hopper 2.3 us, NVIDIA/nccl issue 1940) + one LL step (0.6 us)
    assert r.time == pytest.approx(2.9e-6, rel=1e-3)
    big = cost(H100, "send-recv", 2**30, ranks=H100.endpoints[:2])
    # the link's rate; then the receiver copies its 32 parts' last 512 KiB chunks out of its
    # buffer (read and written at the H100's 3.35 TB/s: +10.0 us, session 37): busbw 370.8 ->
    # 368.8 GB/s
    assert big.protocol == "Simple" and big.channels == 32
    assert big.time - big.fixed - 2 * 2**24 / 3.35e12 == pytest.approx(2**30 / 370.8e9,
                                                                      rel=1e-9)
    ideal = cost(H100, "send-recv", 2**20, ranks=H100.endpoints[:2], runtime="ideal")
    assert ideal.time < big.time and ideal.busbw == ideal.algbw


def test_symmetric_memory_runtime():
    r = cost(H100, "all-reduce", 1024, runtime="symmetric-memory")
    assert r.runtime == "symmetric-memory" and r.algorithm in ("one-shot", "in-switch")
    assert 2.3e-6 <= r.time < cost(H100, "all-reduce", 1024).time
    with pytest.raises(NotApplicableError, match="symmetric-memory runtime runs"):
        cost(H100, "all-reduce", 1024, algorithm="ring", runtime="symmetric-memory")
    cluster = topologies.build("rail:servers=2,gpus=8")
    with pytest.raises(NotApplicableError, match="load/store domains"):
        cost(cluster, "all-reduce", 1024, runtime="symmetric-memory")


def test_nccl_runs_other_schedules_with_its_step_costs():
    # rabenseifner on 8 ranks: 6 steps; LL: ring base 6.6 us + 6 x 0.6 us
    r = cost(H100, "all-reduce", 8, algorithm="rabenseifner")
    assert r.runtime == "nccl" and r.protocol == "LL"
    assert r.fixed == pytest.approx(6.6e-6 + 6 * 0.6e-6, rel=1e-12)
    with pytest.raises(NotApplicableError, match="power-of-two"):
        cost(H100, "all-reduce", 8, algorithm="rabenseifner", ranks=H100.endpoints[:6])


def _nvls_tree_candidate(f, n, release=None):
    """The NVLS-tree candidate (choice and time) of an all-reduce over all of ``f``."""
    from analysis import _runtime_cost as rc
    from analysis._collectives import _GroupView, _resolve_ranks
    rt = runtime("nccl" if release is None else f"nccl@{release}")
    nodes, idx = _resolve_ranks(f, list(f.endpoints))
    view = _GroupView(f, "all-reduce", nodes, idx, None, None, True)
    tried, _why = rc.nccl_candidates(rt, view, "all-reduce", n, "auto", 1)
    return next(c for c in tried if c.library == "nvls-tree")


def test_multi_node_nvls_tree_uses_nccl_caps():
    # 2 nodes x 8 H100, 8 NICs each: NCCL's tuner CHOOSES by an NVLS-tree capped at 8 x
    # perChMaxNVLSTreeBw 57.7 GB/s; the TIME is the schedule's (session 13): the nodes' NVLS
    # all-reduce binds (8 NICs x 49.6 GB/s carry n each way on 2 nodes)
    f = topologies.build("rail:servers=2,gpus=8,nvls=1,chip=h100")
    n = 2**33
    r = cost(f, "all-reduce", n)
    labels = dict(c for c in r.candidates if isinstance(c[1], float))
    assert "nvls-tree/Simple" in labels
    c = _nvls_tree_candidate(f, n)
    assert n / (c.choice - c.tuner_fixed) * 30 / 16 == pytest.approx(8 * 57.7e9, rel=1e-6)
    one = cost(topologies.build("rail:servers=1,gpus=8,nvls=1,chip=h100"), "all-reduce", n,
               algorithm="in-switch", runtime="ideal")
    assert n / (c.time - c.fixed) == pytest.approx(one.algbw, rel=0.01)
    roce = topologies.build("rail:servers=2,gpus=8,nvls=1,chip=h100,nic=roce-400g")
    assert cost(roce, "all-reduce", 8).time > cost(f, "all-reduce", 8).time * 0.99


@pytest.mark.parametrize("op", ["broadcast", "reduce"])
@pytest.mark.parametrize("p", [2, 3, 4, 5, 8])
def test_rooted_double_binary_tree_respects_its_lower_bound(op, p):
    # before the fix, the second tree of a 2-rank broadcast was rooted at rank 1 (no data):
    # 0.63x the lower bound
    r = cost(H100, op, 2**24, algorithm="double-binary-tree", ranks=H100.endpoints[:p],
             runtime="ideal")
    assert r.time >= r.lower_bound * (1 - 1e-12)
    s = schedule(op, "double-binary-tree", p)
    step = s.steps[0]
    if op == "broadcast":
        # rank 0 is the only rank that sends without receiving
        receivers = set(step.dst.tolist())
        assert 0 not in receivers and set(range(1, p)) <= receivers
    else:
        senders = set(step.src.tolist())
        assert 0 not in senders and set(range(1, p)) <= senders


@settings(max_examples=25, deadline=None)
@given(k=st.integers(3, 33), p=st.sampled_from([2, 4, 8]),
       op=st.sampled_from(["all-reduce", "all-gather", "reduce-scatter", "broadcast",
                           "reduce", "all-to-all", "send-recv"]),
       rt=st.sampled_from(["nccl", "symmetric-memory"]))
def test_runtime_never_beats_the_bound(k, p, op, rt):
    ranks = H100.endpoints[:p]
    n = float(2**k)
    # every op runs under both runtimes inside one H100 node (NCCL's ring broadcast /
    # reduce once raised here: their ring is the all-gather ring)
    r = cost(H100, op, n, runtime=rt, ranks=ranks)
    assert r.time >= r.lower_bound * (1 - 1e-9)
    if rt == "symmetric-memory":
        floor = cost(H100, op, n, runtime="ideal", ranks=ranks, algorithm=r.algorithm)
        assert r.time >= floor.time * (1 - 1e-9)
    bigger = cost(H100, op, 2 * n, runtime=rt, ranks=ranks)
    assert bigger.time >= r.time * (1 - 1e-9)
    assert math.isfinite(r.time) and r.fixed <= r.time


def test_nvls_heads_are_capped_at_nccl_arity():
    # 72 GPUs: NCCL's NVLS graph has min(72, NCCL_MAX_NVLS_ARITY=32) heads, busBw
    # 2 B eff (h-1)/(h+1) with B = 18 x 40.1 GB/s and eff = 0.74 (tuning.cc, search.cc)
    # (time = 25 us + (bytes + the NVLS pipeline fill) / busBw x 2(p-1)/p; the fill is two
    # iterations of 24 channels x heads x 128 KiB, see test_nvls_pipeline_fill)
    f = topologies.build("gb200-nvl72")
    n = 2**33
    r = cost(f, "all-reduce", n, algorithm="in-switch")
    want = 2 * 18 * 40.1e9 * 0.74 * 31 / 33
    assert r.time == pytest.approx(25e-6 + (n + 2 * 24 * 32 * 2**17) * (2 * 71 / 72) / want,
                                   rel=2e-3)
    ideal = cost(f, "all-reduce", n, algorithm="in-switch", runtime="ideal")
    assert r.busbw < ideal.busbw
    eight = cost(f, "all-reduce", n, algorithm="in-switch", ranks=f.endpoints[:8])
    want8 = 2 * 18 * 40.1e9 * 0.74 * 7 / 9
    assert eight.time == pytest.approx(25e-6 + (n + 2 * 24 * 8 * 2**17) * (2 * 7 / 8) / want8,
                                       rel=2e-3)


def test_nvls_pipeline_fill():
    # NCCL's one-node NVLS all-reduce (src/device/all_reduce.h): per channel, iterations of
    # heads x chunk through 3 warp groups (scatter, reduce-broadcast, gather); chunk from
    # src/enqueue.cc; 16 channels on Hopper (src/transport/nvls.cc). 4 MiB on 8 H100:
    # 64/8/2 x 16 x 8 x chunk all exceed 4 MiB down to 16 KiB: iteration = 2 MiB, so the
    # fill is 2 iterations = 4 MiB of transfer time, the run takes twice its bytes' time.
    n = 4 * 2**20
    r = cost(H100, "all-reduce", n, algorithm="in-switch")
    big = cost(H100, "all-reduce", 2**33, algorithm="in-switch")
    per_byte = (big.time - big.fixed) / (2**33 + 2 * 16 * 8 * 2**17)
    assert r.time - r.fixed == pytest.approx(2 * n * per_byte, rel=1e-6)
    # below one iteration the busiest channel's bytes pass the three stages in turn at one
    # channel's rate: 2.30.7's scheduler (src/enqueue.cc scheduleCollTasksToPlan) puts 64 KiB
    # (128 KiB of traffic, cells of 16 KiB, 32 KiB of traffic per channel at least) on 4 of
    # the 16 NVLS channels, 16 KiB each; and in the channel all 16 KiB go to one head (the
    # last chunk aligned up to 16 KiB, all_reduce.h): its rank's links carry 16 + 16 KiB
    # where an even split over 8 heads carries 16 x 9/8 (session 19)
    s = cost(H100, "all-reduce", 2**16, algorithm="in-switch")
    assert s.time - s.fixed == pytest.approx(3 * (2 * 2**14 / (9 / 8)) * 16 * per_byte,
                                             rel=1e-6)
    # the tuner compares NVLS without the fill (NCCL's own estimate): at 4 MiB it still
    # picks NVLS, which now costs more than its estimate
    auto = cost(H100, "all-reduce", n)
    assert auto.algorithm == "in-switch" and auto.time == r.time
    # the hardware floor and the other runtimes are untouched
    floor = cost(H100, "all-reduce", n, algorithm="in-switch", runtime="ideal")
    assert floor.time < r.time


def test_nccl_channels_use_the_searched_rings_on_a_direct_fabric():
    # NCCL's search (src/graph/search.cc) charges each channel's ring on its links and
    # places the next channel on links with bandwidth left: on a 4x4 torus the channels
    # run on the link-disjoint rings analysis.ring_search finds, not on one ring
    f = topologies.build("torus:4x4")
    assert len(ring_search(f)) >= 2
    big = 2**30
    r = cost(f, "all-reduce", big, runtime="nccl")
    one = cost(f, "all-reduce", big, runtime="ideal", algorithm="ring")
    rings = cost(f, "all-reduce", big, runtime="ideal", algorithm="multi-ring")
    assert r.algorithm == "multi-ring"
    # at 1 GiB NCCL's Simple protocol carries the searched rings' bandwidth (to 2%),
    # several times what one ring over one link per chip carries
    assert r.busbw == pytest.approx(rings.busbw, rel=0.02)
    assert r.busbw > 3 * one.busbw


# -- NCCL releases: the tuner constants each release had ----------------------------------


def test_nccl_release_profiles_carry_that_releases_constants():
    # values read from NVIDIA/nccl src/graph/tuning.cc at the release tags
    new, r20, r21, r25 = (runtime(n) for n in ("nccl", "nccl@2.20.5", "nccl@2.21.5",
                                               "nccl@2.25.1"))
    assert runtime("nccl", version="2.21.5") is r21
    assert runtime("nccl@2.30.7") is new and new.version == "2.30.7"
    nvls = ("nvlink", "nvls", "Simple")
    assert (r20.hw_latency[nvls], r21.hw_latency[nvls], new.hw_latency[nvls]) == (
        23e-6, 25e-6, 25e-6)
    nvls_tree_net = ("net", "nvls-tree", "Simple")
    assert (r21.hw_latency[nvls_tree_net], new.hw_latency[nvls_tree_net]) == (14e-6, 20.9e-6)
    assert r20.ll_max_bw[("hopper", 0)] == pytest.approx(87.7e9)
    assert r21.ll_max_bw[("hopper", 0)] == pytest.approx(141e9)
    # no Blackwell row before 2.25: a Blackwell GPU took the Hopper row
    assert r21.ring_ll128_bw[("blackwell", 0)] == r21.ring_ll128_bw[("hopper", 0)]
    assert r25.ring_ll128_bw[("blackwell", 0)] == pytest.approx(73.4e9)
    assert new.ring_ll128_bw[("blackwell", 0)] == pytest.approx(40e9)
    assert (r21.max_channels, r25.max_channels) == (32, 64)
    assert r21.name == "nccl@2.21.5" and r21 != new
    # every constant still a sourced Parameter, the release named in the changed ones
    ps = {p.name: p for p in r21.parameters()}
    assert "2.21.5" in ps["nccl@2.21.5.hw_latency.net.nvls-tree.Simple"].source
    for bad in ("nccl@2.18.1", "nccl@3.0", "nccl@two", "ideal@2.21.5"):
        with pytest.raises(ValueError):
            runtime(bad)


def test_nccl_release_changes_only_what_changed():
    # 2.21.5 and the newest release cost a one-node ring identically (same ring constants);
    # NVLS-tree on 2 nodes: 2.21.5 predicts a 14 us network step, the newest release 20.9 us.
    # The 2.28.9 value is a revision (src/device identical 2.28.7..2.28.9) but NVLS-tree's
    # all_reduce.h / common.h differ between 2.21.5 and 2.28.9: 2.21.5's run keeps its own
    # 14 us (strict rule, review R5); 2.28.7's run takes 20.9 us
    f = topologies.build("rail:servers=2,gpus=8,nvls=1,chip=h20,nic=ib-ndr")
    old = cost(f, "all-reduce", 8, algorithm="hierarchical", runtime="nccl@2.21.5")
    new = cost(f, "all-reduce", 8, algorithm="hierarchical")
    r21 = runtime("nccl@2.21.5")
    assert r21.hw_latency[("net", "nvls-tree", "Simple")] == 14e-6
    assert r21.timing.hw_latency[("net", "nvls-tree", "Simple")] == 14e-6
    assert runtime("nccl@2.28.7").timing.hw_latency[("net", "nvls-tree", "Simple")] == 20.9e-6
    assert old.fixed == pytest.approx(25e-6 + 2 * 14e-6, rel=1e-12)
    assert new.fixed == pytest.approx(25e-6 + 2 * 20.9e-6, rel=1e-12)
    assert old.runtime == "nccl@2.21.5" and new.runtime == "nccl"
    for n in (8, 4096, 2**20):
        a = cost(H100, "all-reduce", n, algorithm="ring", runtime="nccl@2.25.1")
        b = cost(H100, "all-reduce", n, algorithm="ring")
        assert a.time == b.time
    # 2.20.5 predicts ring LL at a quarter of the bus bandwidth under an 87.7 GB/s cap; 2.21
    # revised both, but all_reduce.h, all_gather.h, reduce_scatter.h and common.h changed
    # from 2.20.5 to 2.21.5 (CollNet paths, NVLS arity arrays): not the same files, so 2.20.5
    # is timed by its own (1/4, 87.7). Its NVLS step is 23 us (own: no revision)
    r20 = runtime("nccl@2.20.5")
    assert r20.hw_latency[("nvlink", "nvls", "Simple")] == 23e-6
    assert r20.timing.hw_latency[("nvlink", "nvls", "Simple")] == 23e-6
    assert r20.factors["ring_ll"] == 0.25 and r20.timing.factors["ring_ll"] == 0.25
    assert r20.timing.ll_max_bw[("hopper", 0)] == 87.7e9
    assert cost(H100, "all-reduce", 8, algorithm="in-switch",
                runtime="nccl@2.20.5").fixed == pytest.approx(23e-6)
    # the tree's Simple latencies changed with its device code in 2.19 and 2.23: own values
    assert r20.timing.hw_latency[("nvlink", "tree", "Simple")] == 28e-6
    assert r20.timing.base_latency == r20.base_latency
    # what the release runs stays its own: NVLS arity 8 and MAXCHANNELS 32 before 2.21 / 2.25
    assert r20.timing.factors["nvls_max_arity"] == 8 and r20.timing.max_channels == 32
    assert r20.timing.nvls == r20.nvls and runtime("nccl").timing is None


#: What the strict rule gives, read by hand from the identity table (git at the tags): which
#: releases' runs take which revisions. Everything else is timed by the release's own values.
_TAKEN_BY_HAND = {
    # 2.28.3: common.h, all_reduce.h, prims_simple.h ... identical 2.28.3..2.28.9 (NVLS-tree
    # NET latency, Blackwell NVLS-tree cap 43.8) and 2.28.3..2.28.7 for ring LL128 (34.6)
    "2.28.3": {("hw_latency", ("net", "nvls-tree", "Simple"), "2.28.9"),
               *(("nvls_tree_bw", ("blackwell", i), "2.28.9") for i in range(3)),
               *(("ring_ll128_bw", ("blackwell", i), "2.28.7") for i in range(3))},
    # 2.28.7: src/device identical to 2.28.9
    "2.28.7": {("hw_latency", ("net", "nvls-tree", "Simple"), "2.28.9"),
               *(("nvls_tree_bw", ("blackwell", i), "2.28.9") for i in range(3))},
}


def test_strict_rule_follows_the_identity_table():
    # deterministic: every release x every revision, and the hand-read outcome above (review
    # R5: the device code must be the same from the release's own tag to the change)
    from fabric import PREDICTION_KERNEL_FILES, PREDICTION_REVISIONS, revision_holds
    assert set(PREDICTION_KERNEL_FILES) == set(PREDICTION_REVISIONS)
    for release in NCCL_RELEASE_DATES:
        held = {r for r in PREDICTION_REVISIONS if revision_holds(release, r)}
        assert held == _TAKEN_BY_HAND.get(release, set()), release
        v = tuple(int(x) for x in release.split("."))
        for r in PREDICTION_REVISIONS:
            assert revision_holds(release, r) == _reference_holds(r, v), (release, r)
    # the rows review R5 named: 2.26.6 (check row h100-2x8-nic-ar) and 2.21.5 (held-out
    # nccl1244) are no longer timed by the NVLS-tree revisions
    for release in ("2.26.6", "2.21.5"):
        rt = runtime(f"nccl@{release}")
        for field in ("nvls_tree_bw", "hw_latency", "factors"):
            assert getattr(rt.timing, field) == getattr(rt, field), (release, field)


@settings(max_examples=80, deadline=None)
@given(data=st.data())
def test_identity_from_a_release_implies_identity_from_every_later_one(data):
    # property: "identical all the way from the release" is inherited by every release after
    # it (before the change); and a release never takes a revision its predecessor with the
    # same own value could not, unless the identity table says so
    from fabric import PREDICTION_REVISIONS, revision_holds
    tags = sorted(NCCL_RELEASE_DATES, key=lambda t: [int(x) for x in t.split(".")])
    rev = data.draw(st.sampled_from(sorted(PREDICTION_REVISIONS, key=repr)))
    i = data.draw(st.integers(0, len(tags) - 1))
    j = data.draw(st.integers(i, len(tags) - 1))
    if revision_holds(tags[i], rev):
        assert revision_holds(tags[j], rev) or (
            tuple(int(x) for x in tags[j].split(".")) >= tuple(int(x) for x in rev[2].split(".")))
    # a version between two tags stands for the earlier tag
    num = [tuple(int(x) for x in t.split(".")) for t in tags]
    mid = (num[i][0], num[i][1], num[i][2] + 1)
    if (i + 1 == len(tags) or mid < num[i + 1]) and mid < tuple(int(x) for x in rev[2].split(".")):
        assert revision_holds(".".join(map(str, mid)), rev) == revision_holds(tags[i], rev)


def test_identity_table_matches_git_at_the_tags():
    # the checked-in evidence is what git says; the project names no clone's place: the
    # environment does (the lead's landing sets it), else the test skips and says how to run it
    import os
    git_dir = os.environ.get("COFABRIC_NCCL_GIT", "")
    if not os.path.isdir(git_dir):
        pytest.skip("no NVIDIA/nccl clone: set COFABRIC_NCCL_GIT to the git directory of one "
                    "(github.com/NVIDIA/nccl) to check the table against its tags")
    import nccl_device_identity

    from fabric._runtime import _DEVICE_IDENTITY
    got = {k: " ".join(v) for k, v in nccl_device_identity.table(git_dir).items()}
    assert got == _DEVICE_IDENTITY


@functools.cache
def _split_fabric(spec):
    return topologies.build(spec)


@settings(max_examples=30, deadline=None)
@given(release=st.sampled_from(["2.18.5", "2.20.5", "2.21.5", "2.23.4", "2.25.1", "2.26.6",
                                "2.28.3", "2.29.2"]),
       spec=st.sampled_from(["dgx-h100", "rail:servers=2,gpus=8,nvls=1,chip=h100",
                             "rail:servers=4,gpus=4,nvls=1,chip=h20,nic=ib-ndr", "gb200-nvl72"]),
       k=st.integers(3, 31),
       op=st.sampled_from(["all-reduce", "all-gather", "reduce-scatter", "broadcast",
                           "send-recv", "all-to-all"]))
def test_a_release_chooses_by_its_tables_and_is_timed_by_the_newest(release, spec, k, op):
    # brute force of the split: the release with its own tables for both (timing=None) makes
    # the choice; its timing runtime alone prices every candidate; the split must take the
    # first's pair at the second's time, and list the second's times
    f = _split_fabric(spec)
    ranks = f.endpoints[:8] if spec == "gb200-nvl72" else None
    rt = runtime(f"nccl@{release}")
    own = dataclasses.replace(rt, name=rt.name + " (own tables)", timing=None)
    timed = dataclasses.replace(rt.timing, timing=None)
    n = 2**k
    split = cost(f, op, n, runtime=rt, ranks=ranks)
    chose = cost(f, op, n, runtime=own, ranks=ranks)
    times = cost(f, op, n, runtime=timed, ranks=ranks)
    assert (split.algorithm, split.protocol, split.channels) == (
        chose.algorithm, chose.protocol, chose.channels)
    assert split.candidates == times.candidates
    label = next(lab for lab, t in chose.candidates if t == chose.time)
    assert split.time == dict(times.candidates)[label]
    assert split.time >= split.lower_bound * (1 - 1e-9)


@settings(max_examples=15, deadline=None)
@given(release=st.sampled_from(["2.18.5", "2.19.3", "2.20.5", "2.21.5", "2.23.4", "2.25.1", "2.28.3",
                                "2.29.2"]),
       k=st.integers(3, 30), op=st.sampled_from(["all-reduce", "all-gather"]))
def test_every_release_stays_above_the_bound(release, k, op):
    r = cost(H100, op, 2**k, runtime=f"nccl@{release}")
    assert r.time >= r.lower_bound * (1 - 1e-9)
    assert r.time >= cost(H100, op, 2**k, runtime="ideal").time * (1 - 1e-9) or (
        r.algorithm == "in-switch")


def _head_bytes(nelem, heads, chunk, align):
    """One NVLS loop of ``nelem`` bytes on a channel, as bytes of an even split loading the
    busiest rank's links as much (session 19): head j takes the j-th share of ``chunk`` bytes
    (a full block), or in a partial block of alignUp(ceil(nelem / heads), align) (whole chunks
    where ``align`` is 0); a rank's links carry the block plus its own head's share, an even
    split nelem x (1 + 1/heads)."""
    if nelem >= heads * chunk:
        lc = chunk
    else:
        lc = chunk if not align else math.ceil(math.ceil(nelem / heads) / align) * align
    shares = [max(0, min(lc, nelem - j * lc)) for j in range(heads)]
    return (nelem + max(shares)) / (1 + 1 / heads)


def _flow_shop(items, stages):
    """Makespan of items through identical stages in order (brute force)."""
    done = [0.0] * stages
    for t in items:
        for j in range(stages):
            done[j] = max(done[j], done[j - 1] if j else 0.0) + t
    return done[-1]


@settings(max_examples=25, deadline=None)
@given(n=st.integers(1, 2**31), ranks=st.sampled_from([4, 8]))
def test_nvls_fill_is_the_pipeline_makespan(n, ranks):
    # chunk per NCCL's src/enqueue.cc rule; the busiest channel of the scheduler's split
    # (scheduleCollTasksToPlan, nccl_channel_split) runs iterations of heads x chunk bytes
    # (the last one partial) through 3 stages at one channel's rate (1/16 of the bus):
    # simulated, against the model's time
    from analysis._runtime_cost import nccl_channel_split
    from fabric import runtime
    nodes = H100.endpoints[:ranks]
    r = cost(H100, "all-reduce", n, algorithm="in-switch", ranks=nodes)
    big = cost(H100, "all-reduce", 2**33, algorithm="in-switch", ranks=nodes)
    per_byte = (big.time - big.fixed) / (2**33 + 2 * 16 * ranks * 2**17)
    ops, chunk = 16 * ranks, 2**17
    for k, c in ((64, 2**16), (8, 2**15), (2, 2**14)):
        if n < k * ops * chunk and chunk > c:
            chunk = c
    busiest, _ = nccl_channel_split(runtime("nccl"), "all-reduce", "Simple", n, ranks, 16, 16)
    full, rest = divmod(busiest, ranks * chunk)
    items = [16 * ranks * chunk * per_byte] * full + (
        [16 * _head_bytes(rest, ranks, chunk, 16384) * per_byte] if rest else [])
    assert r.time - r.fixed == pytest.approx(_flow_shop(items, 3), rel=1e-9)


def _nvls_kernel_channels(n, channels, heads, chunk):
    # NCCL 2.18-2.19's one-node NVLS all-reduce loop, warp group by warp group
    # (src/collectives/device/all_reduce.h): channel bid takes, in each loop of
    # channels x heads x chunk, the block at bid x heads x chunk
    out = []
    for bid in range(channels):
        items, grid = [], 0
        while grid < n:
            offset = grid + bid * heads * chunk
            nelem = min(heads * chunk, n - offset)
            if nelem > 0:
                items.append(nelem)
            grid += channels * heads * chunk
        out.append(items)
    return out


@settings(max_examples=25, deadline=None)
@given(n=st.integers(1, 2**27), ranks=st.sampled_from([4, 8]))
def test_nvls_2_18_runs_its_busiest_channel_as_the_kernel_splits_it(n, ranks):
    # NCCL 2.18.5 splits NVLS inside the kernel: below one loop some channels carry nothing.
    # The time (less the latency) is the slowest channel's pipeline: its iterations through
    # the 3 warp groups at one channel's rate (1/16 of the bus), simulated from the kernel's
    # loop, against the model
    nodes = H100.endpoints[:ranks]
    rt = "nccl@2.18.5"
    r = cost(H100, "all-reduce", n, algorithm="in-switch", ranks=nodes, runtime=rt)
    big = cost(H100, "all-reduce", 2**33, algorithm="in-switch", ranks=nodes, runtime=rt)
    per_byte = (big.time - big.fixed) / (2**33 + 2 * 16 * ranks * 2**17)
    ops, chunk = 16 * ranks, 2**17
    for k, c in ((64, 2**16), (8, 2**15), (2, 2**14)):
        if n < k * ops * chunk and chunk > c:
            chunk = c
    slowest = max(_flow_shop([16 * _head_bytes(b, ranks, chunk, 0) * per_byte
                              for b in items], 3)
                  for items in _nvls_kernel_channels(n, 16, ranks, chunk))
    assert r.time - r.fixed == pytest.approx(slowest, rel=1e-9)


def test_nvls_channel_split_by_release():
    # 8 H100, 256 KiB (the Azure ND H100 v5 row, NCCL 2.18.5): chunk 16 KiB, a loop of
    # 16 channels x 8 heads x 16 KiB = 2 MiB, so channels 0 and 1 carry 128 KiB each; from
    # 2.20 the scheduler spreads it over all 16 (addCBDCollToPlan, 4 KiB-aligned shares)
    from analysis._runtime_cost import nvls_channel_split
    from fabric import runtime
    view = types.SimpleNamespace(arch="hopper", p=8)
    assert nvls_channel_split(runtime("nccl@2.18.5"), view, 2**18, 8) == (2**17, 2)
    assert nvls_channel_split(runtime("nccl@2.19.4"), view, 2**14, 8) == (2**14, 1)
    assert nvls_channel_split(runtime("nccl@2.20.5"), view, 2**18, 8) == (2**14, 16)
    old = cost(H100, "all-reduce", 2**18, algorithm="in-switch", runtime="nccl@2.18.5")
    new = cost(H100, "all-reduce", 2**18, algorithm="in-switch", runtime="nccl@2.20.5")
    # the same 23 us latency in both; 2.18.5's transfer and fill run on 2 channels of 16,
    # 128 KiB each, full blocks of 8 heads x 16 KiB (even); 2.20.5's 16 KiB per channel is a
    # partial block whose last chunk, 2 KiB aligned up to 4 KiB, goes to 4 heads: 16 + 4 KiB on
    # the busiest rank's links against 16 x 9/8 (session 19)
    assert old.fixed == pytest.approx(new.fixed, rel=1e-12)
    even = 2**17 / ((2**14 + 2**12) / (9 / 8))
    assert (old.time - old.fixed) == pytest.approx(even * (new.time - new.fixed), rel=1e-9)


def test_nvls_gather_and_scatter_by_release():
    # NCCL 2.18's tuner leaves all-gather and reduce-scatter to the ring (src/graph/tuning.cc
    # l.166-169 at v2.18.5-1), so NCCL_ALGO=NVLS finds no algorithm; 2.19 offers NVLS for both
    from analysis import NotApplicableError
    for op in ("all-gather", "reduce-scatter"):
        with pytest.raises(NotApplicableError, match="NCCL 2.18.5 has no NVLS"):
            cost(H100, op, 2**20, algorithm="in-switch", runtime="nccl@2.18.5")
        assert cost(H100, op, 2**30, runtime="nccl@2.18.5").algorithm == "ring"
        # 2.19.4's kernel (all_gather.h / reduce_scatter.h NVLS): channel bid takes the bid-th
        # chunk of each loop of channels x chunk of a rank's count. 1 MiB over 8 H100: a rank's
        # 128 KiB, chunk 16 KiB (cut on the whole 1 MiB), a loop of 16 x 16 KiB = 256 KiB: 8
        # channels carry 16 KiB each, twice the even share, so the transfer doubles; 2.20.5's
        # scheduler spreads it over all 16 (8 KiB shares, 4 KiB-aligned)
        old = cost(H100, op, 2**20, algorithm="in-switch", runtime="nccl@2.19.4")
        new = cost(H100, op, 2**20, algorithm="in-switch", runtime="nccl@2.20.5")
        assert old.fixed == pytest.approx(new.fixed, rel=1e-12)
        assert old.time - old.fixed == pytest.approx(2 * (new.time - new.fixed), rel=1e-9)


def test_runtime_arch_follows_the_chip_or_the_links():
    from fabric import runtime_arch
    assert runtime_arch(topologies.build("hgx-b200")) == "blackwell"
    assert runtime_arch(topologies.build("gb200-nvl72")) == "blackwell"
    assert runtime_arch(H100) == "hopper"
    assert runtime_arch(topologies.build("torus:4x4")) == "hopper"


@settings(max_examples=20, deadline=None)
@given(p=st.integers(2, 16), k=st.integers(10, 30), op=st.sampled_from(["broadcast", "reduce"]),
       rt=st.sampled_from(["ideal", "nccl"]))
def test_double_binary_tree_rooted_ops_hold_their_bound_at_any_rank_count(p, k, op, rt):
    # issue 10 item 3 (fixed in session 1), re-checked over random rank counts across two
    # NVLink nodes: a rooted double binary tree never beats its own lower bound
    f = _two_nodes()
    r = cost(f, op, 2**k, algorithm="double-binary-tree", ranks=f.endpoints[:p], runtime=rt)
    assert r.time >= r.lower_bound * (1 - 1e-12)


@functools.cache
def _two_nodes():
    return topologies.build("rail:servers=2,gpus=8,nvls=1,chip=h100")


def test_nvls_bus_bandwidth_is_flat_beyond_nccl_arity():
    # issue 10 item 3 (in-switch scaling): under NCCL, NVLS over more than 32 ranks keeps 32
    # heads, so its bus bandwidth no longer grows with the rank count (the ideal schedule's
    # n(1 + 1/p) still does)
    f = topologies.build("gb200-nvl72")
    bus = [cost(f, "all-reduce", 2**33, algorithm="in-switch", ranks=f.endpoints[:p]).busbw
           for p in (33, 48, 64, 72)]
    assert max(bus) <= min(bus) * 1.005
    ideal = [cost(f, "all-reduce", 2**33, algorithm="in-switch", ranks=f.endpoints[:p],
                  runtime="ideal").busbw for p in (33, 72)]
    assert ideal[1] > ideal[0] * 1.02


def test_nccl_releases_before_2_28_7_keep_nvls_off_on_two_gpus():
    # src/transport/nvls.cc ncclNvlsInit: gpuCount <= 2 -> no NVLS (2.18.1-2.28.3), < 2 from
    # 2.28.7; NCCL_ALGO=NVLS then leaves no algorithm and tuning.cc sets the ring available
    two = H100.endpoints[:2]
    old = cost(H100, "all-reduce", 2**32, algorithm="in-switch", ranks=two, runtime="nccl@2.23.4")
    ring = cost(H100, "all-reduce", 2**32, algorithm="ring", ranks=two, runtime="nccl@2.23.4")
    assert old.algorithm == "ring" and old.time == ring.time
    new = cost(H100, "all-reduce", 2**32, algorithm="in-switch", ranks=two)
    assert new.algorithm == "in-switch"
    three = cost(H100, "all-reduce", 2**32, algorithm="in-switch", ranks=H100.endpoints[:3],
                 runtime="nccl@2.23.4")
    assert three.algorithm == "in-switch"
    # the ideal runtime is not NCCL: its in-switch schedule runs on 2 ranks
    assert cost(H100, "all-reduce", 2**32, algorithm="in-switch", ranks=two,
                runtime="ideal").algorithm == "in-switch"


# --- which NCCL release a dated measurement stands for (fabric.nccl_release_on) -------------

def test_release_on_a_date_is_the_newest_tagged_by_then():
    from fabric import NCCL_NEWEST, NCCL_RELEASE_DATES, nccl_release_dates, nccl_release_on
    # a tag's own day counts; the day before it still has the previous release
    assert nccl_release_on("2024-09-16") == "2.23.4"
    assert nccl_release_on("2024-09-15") == "2.22.3"
    # a date between two tags takes the earlier one
    assert nccl_release_on("2024-05-10") == "2.21.5"
    # the highest version, not the latest tag: 2.18.6 was tagged after 2.19.3
    assert nccl_release_on("2023-10-12") == "2.19.3"
    # the newest tag and any later date: the newest release modelled
    assert nccl_release_on("2030-01-01") == ".".join(map(str, NCCL_NEWEST))
    # every tagged release is reproduced, and the table holds both ends
    assert {"2.18.3", "2.30.7"} <= set(NCCL_RELEASE_DATES)
    for v in NCCL_RELEASE_DATES:
        assert runtime(f"nccl@{v}").version == v
    params = nccl_release_dates()
    assert {p.name.rsplit("release_date.", 1)[1]: p.value for p in params} == NCCL_RELEASE_DATES
    assert all(p.unit == "date" and "git tag" in p.source for p in params)


def test_release_on_a_date_before_the_oldest_is_an_error():
    from fabric import SpecError, nccl_release_on
    with pytest.raises(SpecError, match="2.18.3, is of 2023-06-14"):
        nccl_release_on("2023-06-13")
    with pytest.raises(SpecError, match="not an ISO date"):
        nccl_release_on("May 2024")
    assert runtime("nccl", date="2023-06-14").name == "nccl@2.18.3"
    with pytest.raises(SpecError, match="not both"):
        runtime("nccl", version="2.21.5", date="2024-05-10")


@settings(max_examples=60, deadline=None)
@given(st.dates(min_value=datetime.date(2023, 6, 14), max_value=datetime.date(2027, 12, 31)),
       st.integers(0, 400))
def test_release_on_a_date_against_the_tag_table(day, later):
    # brute force over the tag table: the release is tagged on or before the day, no
    # higher version is, and a later day never gives an older release
    from fabric import NCCL_RELEASE_DATES, nccl_release_on
    key = lambda v: tuple(map(int, v.split(".")))
    got = nccl_release_on(day.isoformat())
    tagged = [v for v, d in NCCL_RELEASE_DATES.items() if datetime.date.fromisoformat(d) <= day]
    assert got in tagged and all(key(v) <= key(got) for v in tagged)
    after = nccl_release_on((day + datetime.timedelta(days=later)).isoformat())
    assert key(after) >= key(got)


# --- a failed link never makes a collective faster (brute force over single-link failures) --

_SMALL = {s: topologies.build(s) for s in ("torus:3x3", "dgx-h100",
                                           "rail:servers=2,gpus=4,nvls=1,chip=h100")}
_SMALL_LINKS = {s: sorted({tuple(sorted((u, v))) for u, v in f.graph.edges()})
                for s, f in _SMALL.items()}


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(sorted(_SMALL)), st.integers(0, 10**6),
       st.sampled_from(["all-reduce", "all-gather", "reduce-scatter", "broadcast",
                        "all-to-all"]),
       st.sampled_from([8, 4096, 114688, 2**20, 2**26]),
       st.sampled_from(["ideal", "nccl", "symmetric-memory"]))
def test_a_failed_link_never_makes_a_collective_faster(spec, pick, op, n, rt):
    # The property that holds: with the same schedule and protocol on both fabrics, the
    # degraded time is never below the intact one, unless the schedule's own hardware floor
    # got faster (shortest-path routing around the failed link can unload a link the
    # schedule shared: the ideal runtime shows it too). Where the runtime picks another
    # schedule or protocol the property is not true of NCCL itself: its point-to-point
    # protocol follows a size threshold per channel, so a group left with fewer channels
    # switches to Simple sooner (8 H200 on 4 planes without two of chip5's lanes, all-to-all
    # 4 MiB, 2.22.3: LL 22.70 -> Simple 22.20 us), or with more channels (the ring search's
    # 17-lane count above its 18-lane one) stays LL longer: the scope is pinned by
    # test_degraded_monotonicity_holds_per_algorithm_and_protocol_only; and under NCCL the
    # communicator's channel count must be the same too (more channels after a lost lane can
    # speed the same schedule and protocol: test_nccl_can_gain_channels_from_a_lost_lane).
    # Brute force: any single link of a small fabric.
    f = _SMALL[spec]
    links = _SMALL_LINKS[spec]
    g = f.without(links=[links[pick % len(links)]])
    try:
        a = cost(f, op, n, runtime=rt)
        b = cost(g, op, n, runtime=rt)
    except (NotApplicableError, RoutingError):
        return  # the failure disconnects the group, or the operation does not apply
    if (a.algorithm, a.protocol) != (b.algorithm, b.protocol):
        return
    if rt == "nccl" and communicator_channels(f) != communicator_channels(g):
        return  # outside the scope: test_nccl_can_gain_channels_from_a_lost_lane
    try:  # the schedule's hardware floor (NCCL's ring broadcast has none under "ideal")
        floor = [cost(x, op, m, algorithm=b.algorithm, runtime="ideal").time
                 for x in (f, g) for m in (n, 2**30)]
    except NotApplicableError:
        floor = None
    if floor and (floor[2] < floor[0] * (1 - 1e-9) or floor[3] < floor[1] * (1 - 1e-9)):
        return
    assert b.time >= a.time * (1 - 1e-9), (spec, links[pick % len(links)], a, b)


def test_degraded_monotonicity_holds_per_algorithm_and_protocol_only():
    # The degraded-fabric rule (tests/test_audit_s9_runtime.py, benchmarks/
    # scan_degraded_runtime.py) compares a failure against the intact fabric only where NCCL
    # ran the same algorithm and protocol. Its scope, pinned: a failure can move NCCL's own
    # protocol threshold (enqueue.cc: LL while a message <= p2p channels x 16 KiB, 2.22+), and
    # the other protocol can then be faster (review s10). (a) 8 H200 on 4 planes without two
    # of chip5's lanes: ring search 24 -> 16 collective channels, p2p 32 -> 16, 512 KiB per
    # peer over 16 x 16 KiB: Simple at full rate beat LL at half on twice the channels,
    # 22.70 -> 22.20 us, until session 37: the Simple run also copies each part's last
    # chunk out of the receiver's buffer (p2p_drain, 3.5 MiB at the H200's 4.8 TB/s,
    # +1.5 us), 22.70 -> 23.73 us, so the protocol moves but the failure is no longer
    # faster there. (b) 8 B200 on 2 planes without one lane of chip5: 17 lanes find 17
    # channels at 40 GB/s (no DupChannels below 50 GB/s) where 18 find 8 at 90 doubled to
    # 16, so 34 collective channels > 32, p2p 32 -> 64, and 768 KiB runs LL: 7.49 -> 5.91 us.
    # At sizes where both run one protocol, the failure is never faster. The scope also needs
    # the same communicator channel count: see test_nccl_can_gain_channels_from_a_lost_lane.
    cases = (("switch:8,planes=4,links=5/4/4/5,tech=nvlink4,chip=h200", [("chip5", "sw0")] * 2,
              "2.22.3", "all-to-all", None, 4 * 2**20, ("LL", "Simple"), (2**21, 2**23), False),
             ("switch:8,planes=2,links=9,tech=nvlink5,chip=b200", [("chip5", "sw0")],
              "2.26.6", "send-recv", ["chip5", "chip6"], 786432, ("Simple", "LL"),
              (2**18, 2**22), True))
    for spec, lanes, rel, op, ranks, n, protos, same, faster in cases:
        f = topologies.build(spec)
        g = f.without(lanes=lanes)
        kw = {"runtime": f"nccl@{rel}", "ranks": ranks}
        a, b = cost(f, op, n, **kw), cost(g, op, n, **kw)
        assert (a.protocol, b.protocol) == protos, spec
        assert (b.time < a.time) == faster, spec          # outside the rule's scope
        for m in same:
            a, b = cost(f, op, m, **kw), cost(g, op, m, **kw)
            assert (a.algorithm, a.protocol) == (b.algorithm, b.protocol), (spec, m)
            assert b.time >= a.time, (spec, m)            # inside it


@pytest.mark.parametrize("op, n, rel, run, chans", [
    ("all-to-all", 8, "nccl", ("scattered", "LL"), ((32, 32), (34, 64))),
    ("all-to-all", 4 * 2**20, "nccl", ("scattered", "Simple"), ((32, 32), (34, 64))),
    ("all-gather", 2**24, "nccl@2.20.5", ("ring", "LL128"), ((24, 32), (28, 32)))])
def test_nccl_can_gain_channels_from_a_lost_lane(op, n, rel, run, chans):
    # review S14-R1 (lead 08:17: the scope, not the model): gb200-nvl72 without chip0-sw0. NCCL's
    # ring search over a GPU's NVSwitch link (search.cc, sm100 speeds ... 45, 40 ...) finds 16
    # channels at 45 GB/s on 18 lanes (720 GB/s) but 17 at 40 on 17 (680 > 15 x 45), doubled:
    # 32 -> 34; p2pnChannels (pow2) 32 -> 64, so 2.29+'s 72-rank all-to-all runs in 2 batches
    # instead of 3, and 2.20's split carries more channels. Same schedule and protocol, the
    # 'ideal' floor slower, NCCL faster: outside the degraded rule's scope (same schedule,
    # protocol AND communicator channel count), as in NCCL itself
    f = topologies.build("gb200-nvl72")
    g = f.without(links=[("chip0", "sw0")])
    a, b = cost(f, op, n, runtime=rel), cost(g, op, n, runtime=rel)
    assert (a.algorithm, a.protocol) == (b.algorithm, b.protocol) == run
    assert (communicator_channels(f, runtime=rel), communicator_channels(g, runtime=rel)) == chans
    assert b.time < a.time * (1 - 1e-3)
    floors = [cost(x, op, m, algorithm=run[0], runtime="ideal").time
              for x in (f, g) for m in (n, 2**30)]
    assert floors[2] > floors[0] and floors[3] > floors[1]   # the hardware got slower


def test_channels_do_not_follow_rank_order_or_unused_lanes():
    # audit's case: decode's TP all-reduce (114688 B) on 8 chips of an sd200-ultra; chip0 losing
    # its link to chip1 made it faster (channels counted from rank 0's lanes, which the rings
    # do not all use). Now the rings' own lanes set the channels.
    f = topologies.build("sd200-ultra:chip=h100")
    g = f.without(links=[("chip0", "chip1")])
    for ranks in (slice(0, 8), slice(1, 9)):
        a = cost(f, "all-reduce", 114688, ranks=f.endpoints[ranks])
        b = cost(g, "all-reduce", 114688, ranks=g.endpoints[ranks])
        if (a.algorithm, a.protocol) == (b.algorithm, b.protocol):
            assert b.time >= a.time * (1 - 1e-12)
    # the same group listed in another order costs the same
    r = list(g.endpoints[:8])
    assert cost(g, "all-reduce", 114688, ranks=r).time == pytest.approx(
        cost(g, "all-reduce", 114688, ranks=r[::-1]).time, rel=1e-12)


def test_nvls_tree_skips_a_node_left_without_its_switch():
    # a GPU cut from its node's NVSwitch is a node of one GPU: NVLS-tree does not apply
    # (it needs several GPUs in every node), the others still do (was: division by zero)
    f = topologies.build("rail:servers=2,gpus=4,nvls=1,chip=h100")
    g = f.without(links=[("chip0", "nvs0")])
    r = cost(g, "all-reduce", 2**26)
    assert r.algorithm != "hierarchical" and math.isfinite(r.time)


# --- one process driving several devices (nccl-tests -g N): further host launches ---------

def _timed_loop(gpu_time, c, devices, iterations, blocking=False):
    """Brute force of nccl-tests' timed loop driven by one host thread: event by event,
    launch k of device i issued at the host's running clock (every launch takes c, in
    turn), a device's kernel starts once it is launched and its previous kernel ended,
    and the collective ends gpu_time after its last device's kernel started; blocking
    (-z 1): the host first waits for the previous iteration's end. Returns the reported
    time per iteration (elapsed at the end / iterations)."""
    host, end = 0.0, 0.0
    for _k in range(iterations):
        if blocking:
            host = max(host, end)
        starts = []
        for _i in range(devices):
            host += c
            starts.append(max(host, end))
        end = max(starts) + gpu_time
    return end / iterations


@settings(max_examples=40, deadline=None)
@given(g=st.floats(0.0, 200e-6), c=st.floats(0.0, 10e-6), devices=st.integers(1, 9),
       iterations=st.integers(1, 60))
def test_blocking_loop_pays_every_launch(g, c, devices, iterations):
    # -z 1: the simulated loop against the one-process-per-device non-blocking baseline
    # (whose one launch hides under the GPU once g >= c)
    sim = _timed_loop(g, c, devices, iterations, blocking=True) - g
    got = host_launch_delay(g, c, devices, iterations, blocking=True)
    assert math.isclose(got, sim, rel_tol=1e-9, abs_tol=1e-15)
    assert got == devices * c


@settings(max_examples=40, deadline=None)
@given(g=st.floats(0.0, 200e-6), c=st.floats(0.0, 10e-6), devices=st.integers(1, 9),
       iterations=st.integers(1, 60))
def test_host_launch_delay_matches_the_simulated_timed_loop(g, c, devices, iterations):
    sim = _timed_loop(g, c, devices, iterations) - _timed_loop(g, c, 1, iterations)
    got = host_launch_delay(g, c, devices, iterations)
    assert math.isclose(got, sim, rel_tol=1e-9, abs_tol=1e-15)
    # bounds: never more than launches that do not overlap at all; at least the host's
    # excess over the GPU once host-bound; more devices never cost less
    assert got <= (devices - 1) * c * (1 + 1e-12) + 1e-18
    assert got >= devices * c - max(g, c) - 1e-15
    assert host_launch_delay(g, c, devices + 1, iterations) >= got - 1e-18


@settings(max_examples=25, deadline=None)
@given(devices=st.integers(1, 8), ops=st.integers(1, 100),
       size=st.sampled_from([8, 1024, 65536, 2**20, 2**30]),
       op=st.sampled_from(["all-reduce", "all-gather", "send-recv"]),
       iterations=st.integers(1, 50), degraded=st.booleans())
def test_devices_per_process_adds_the_timed_loops_host_launches(devices, ops, size, op,
                                                                iterations, degraded):
    f = topologies.build("dgx-h100")
    if degraded:   # a fabric that lost one NVSwitch link of rank 0 (first-class input)
        f = f.without(links=[("chip0", "sw1")])
    ranks = f.endpoints[:max(4, devices)]    # -g N drives N of the operation's ranks
    one = cost(f, op, size, ranks=ranks, ops_per_launch=ops)
    many = cost(f, op, size, ranks=ranks, ops_per_launch=ops,
                devices_per_process=devices, iterations=iterations)
    c = runtime("nccl").host_launch
    # brute force: the simulated loop, ops operations per launch on the GPU, per operation
    extra = (_timed_loop(one.time * ops, c, devices, iterations)
             - _timed_loop(one.time * ops, c, 1, iterations)) / ops
    assert math.isclose(many.time - one.time, extra, rel_tol=1e-9, abs_tol=1e-15)
    assert math.isclose(many.fixed - one.fixed, extra, rel_tol=1e-9, abs_tol=1e-15)
    assert math.isclose(many.busbw * many.time, one.busbw * one.time, rel_tol=1e-9)
    assert (many.algorithm, many.protocol) == (one.algorithm, one.protocol)
    ideal = cost(f, op, size, ranks=ranks, runtime="ideal",
                 devices_per_process=devices, iterations=iterations)
    assert ideal.time == cost(f, op, size, ranks=ranks, runtime="ideal").time


def test_host_launches_hide_under_a_long_gpu_time_and_show_on_a_short_one():
    # closed form on two cases: 8 devices x 3.0 us = 24 us of host time per iteration
    f = topologies.build("dgx-h100")
    c = runtime("nccl").host_launch
    big = cost(f, "all-reduce", 2**30)                      # ms of GPU time: hidden
    assert cost(f, "all-reduce", 2**30, devices_per_process=8, iterations=40).time == \
        pytest.approx(big.time + 7 * c / 40, rel=1e-12)
    small = cost(f, "all-reduce", 8)                        # ~15 us < 24 us: host-bound
    t8 = cost(f, "all-reduce", 8, devices_per_process=8, iterations=40).time
    assert t8 == pytest.approx(8 * c + small.time / 40 - c / 40, rel=1e-12)


def test_host_launch_is_a_sourced_parameter():
    (p,) = [p for p in runtime("nccl@2.25.1").parameters()
            if p.name.endswith(".host_launch")]
    assert p.value == 3.0e-6 and p.unit == "s" and "tritonbench" in p.source
    assert not [p for p in runtime("ideal").parameters() if "host_launch" in p.name]
    # one-sided kernels are launched by the host too: the same sourced figure
    (q,) = [p for p in runtime("symmetric-memory").parameters()
            if p.name.endswith(".host_launch")]
    assert (q.value, q.source) == (p.value, p.source)


def test_symmetric_memory_kernels_pay_the_host_launches_of_one_process():
    f = topologies.build("dgx-h100")
    one = cost(f, "all-reduce", 1024, runtime="symmetric-memory")
    many = cost(f, "all-reduce", 1024, runtime="symmetric-memory", devices_per_process=8,
                iterations=40)
    c = runtime("symmetric-memory").host_launch
    assert many.time - one.time == pytest.approx(
        host_launch_delay(one.time, c, 8, 40), rel=1e-12)
    assert many.time > one.time


@pytest.mark.parametrize("bad, error", [(0, SpecError), (-1, SpecError), (1.5, TypeError),
                                        (True, TypeError), ("4", TypeError)])
def test_devices_per_process_rejects_bad_input(bad, error):
    # a count of the wrong kind is a TypeError, one out of range a SpecError (session 31)
    f = topologies.build("dgx-h100")
    with pytest.raises(error, match="devices_per_process"):
        cost(f, "all-reduce", 1024, devices_per_process=bad)
    with pytest.raises(error, match="iterations"):
        cost(f, "all-reduce", 1024, devices_per_process=2, iterations=bad)


@pytest.mark.parametrize("bad", [1, 0, "yes", None])
def test_blocking_must_be_a_bool(bad):
    f = topologies.build("dgx-h100")
    with pytest.raises(TypeError, match="blocking"):
        cost(f, "all-reduce", 1024, blocking=bad)


def test_blocking_adds_every_launch_and_ideal_ignores_it():
    f = topologies.build("dgx-h100")
    c = runtime("nccl").host_launch
    base = cost(f, "all-reduce", 1024, ranks=f.endpoints[:4], ops_per_launch=100)
    z = cost(f, "all-reduce", 1024, ranks=f.endpoints[:4], ops_per_launch=100,
             devices_per_process=4, blocking=True)
    assert z.time == pytest.approx(base.time + 4 * c / 100, rel=1e-12)
    one = cost(f, "all-reduce", 1024, blocking=True)
    assert one.time == pytest.approx(cost(f, "all-reduce", 1024).time + c, rel=1e-12)
    assert cost(f, "all-reduce", 1024, runtime="ideal", blocking=True).time == \
        cost(f, "all-reduce", 1024, runtime="ideal").time


@pytest.mark.parametrize("kw, exc, says", [
    ({"gpu_time": float("nan")}, SpecError, "gpu_time must be a finite number >= 0 seconds, got gpu_time=(nan|inf)$"),
    ({"gpu_time": float("inf")}, SpecError, "gpu_time must be a finite number >= 0 seconds, got gpu_time=(nan|inf)$"),
    ({"gpu_time": -1e-6}, SpecError, "gpu_time must be a finite number >= 0 seconds, got gpu_time=-1e-06$"),
    ({"gpu_time": "1e-6"}, TypeError, r"gpu_time must be a finite number >= 0 seconds, got gpu_time=\'1e-6\' \(a str\)$"),
    ({"gpu_time": True}, TypeError, r"gpu_time must be a finite number >= 0 seconds, got gpu_time=True \(a bool\)$"),
    ({"host_launch": float("nan")}, SpecError, "host_launch must be a finite number >= 0 seconds, got host_launch=nan$"),
    ({"host_launch": -3e-6}, SpecError, "host_launch must be a finite number >= 0 seconds, got host_launch=-3e-06$"),
    ({"host_launch": None}, TypeError, r"host_launch must be a finite number >= 0 seconds, got host_launch=None \(a NoneType\)$"),
    ({"devices": 0}, SpecError, "devices must be an integer >= 1"),
    ({"devices": -3, "blocking": True}, SpecError, "devices must be an integer >= 1"),
    ({"devices": 2.5}, TypeError, "devices must be an integer >= 1"),
    ({"devices": True}, TypeError, "devices must be an integer >= 1"),
    ({"iterations": 0}, SpecError, "iterations must be an integer >= 1"),
    ({"iterations": 0.5}, TypeError, "iterations must be an integer >= 1"),
    ({"iterations": True}, TypeError, "iterations must be an integer >= 1"),
    ({"blocking": "no"}, TypeError, "blocking must be True or False"),
    ({"blocking": 1}, TypeError, "blocking must be True or False"),
])
def test_host_launch_delay_rejects_bad_input(kw, exc, says):
    # public: a clear error naming the argument, never a silent number (NaN, a negative
    # delay from devices=-3) nor a ZeroDivisionError (iterations=0)
    args = {"gpu_time": 20e-6, "host_launch": 3e-6, "devices": 4, "iterations": 20,
            "blocking": False}
    args.update(kw)
    with pytest.raises(exc, match=says):
        host_launch_delay(**args)


def test_host_launch_delay_takes_numpy_scalars():
    want = host_launch_delay(23e-6, 3e-6, 8, 40)
    assert host_launch_delay(np.float64(23e-6), np.float64(3e-6), np.int64(8),
                             np.int32(40), np.bool_(False)) == want


@functools.cache
def _gb200_nvl72():
    return topologies.build("gb200-nvl72")


@pytest.mark.parametrize("size, protocol", [
    (4 * 1024, "LL"), (256 * 1024, "LL"), (4 * 2**20, "LL"),
    (16 * 2**20, "LL128"), (64 * 2**20, "Simple")])
def test_nccl_2_25_1_picks_on_a_gb200_tray(size, protocol):
    # NCCL 2.25.1 (tag v2.25.1-1), ring forced on one GB200 tray (4 GPUs), worked by hand
    # from its code: src/graph/tuning.cc enables LL128 on sm100 within a node (protoEnable,
    # `case 100`) and gives Blackwell ring LL min(282 GB/s, busBw / 2), base + per-step
    # NVLink latency LL 6.6 + 0.6, LL128 14.0 + 1.9, Simple 8.4 + 3.4 us; src/enqueue.cc
    # takes the least time over every enabled protocol (no LL size threshold for
    # collectives). With the tray's 720 GB/s busBw: LL wins to 4 MiB (32.5 us against 34.9
    # for LL128 and 37.5 for Simple), LL128 at 16 MiB, Simple at 64 MiB.
    f = _gb200_nvl72()
    r = cost(f, "all-reduce", size, algorithm="ring", runtime="nccl@2.25.1",
             ranks=f.endpoints[:4])
    assert r.protocol == protocol
    if size == 4 * 2**20:
        # the tuner's 32.5 us chose LL; the time also pays each of the 6 steps' handoff
        # (session 22, analysis._runtime_cost.step_handoff): 0.33 us path + 1.11 us Blackwell
        # GPU side = 1.44 us a step where the tuner has 0.6
        assert r.time == pytest.approx(32.5e-6 + 6 * (0.33e-6 + 1110.5e-9 - 0.6e-6), rel=5e-3)


def _reference_holds(revision, v):
    """Brute force of the strict identity rule from the raw table: list every modelled tag, take
    the one the release stands for and the first carrying the change, and check every file of
    the revision's kernel at every tag in between, pair by pair."""
    from fabric._runtime import _DEVICE_IDENTITY, NCCL_RELEASE_DATES, PREDICTION_KERNEL_FILES
    tags = sorted(NCCL_RELEASE_DATES, key=lambda t: [int(x) for x in t.split(".")])
    num = {t: tuple(int(x) for x in t.split(".")) for t in tags}
    first = tuple(int(x) for x in revision[2].split("."))
    change = next(t for t in tags if num[t] >= first)
    mine = [t for t in tags if num[t] <= v]
    if not mine or num[change] <= v:
        return False
    ok = True
    for t in tags[tags.index(mine[-1]):tags.index(change)]:
        for f in PREDICTION_KERNEL_FILES[revision][1]:
            ok = ok and t in _DEVICE_IDENTITY.get((f, change), "").split()
    return ok


def _reference_timed(history, revisions, field, key, v, formulas=()):
    """Brute force of the timing rule: every later value reachable from the release's own
    through sourced revisions whose kernel is identical from the release on
    (:func:`_reference_holds`), the last of them; for a part of a formula, no later than the
    first change of any part of it that is not taken."""
    def taken(f, k, first):
        rev = (f, k, ".".join(str(x) for x in first))
        return rev in revisions and _reference_holds(rev, v)
    values = [(first, val) for first, val in history[(field, key)]]
    own = [i for i, (first, _val) in enumerate(values) if first <= v]
    if not own:
        return None
    group = next((g for g in formulas if (field, key) in g), {(field, key)})
    unsourced = [first for f, k in group for first, _val in history.get((f, k), ())
                 if first > v and not taken(f, k, first)]
    i = own[-1]
    out = values[i][1]
    for j in range(i + 1, len(values)):
        if any(values[j][0] >= u for u in unsourced) or not taken(field, key, values[j][0]):
            break
        out = values[j][1]
    return out


def test_prediction_revisions_are_change_points_with_sources():
    from fabric import PREDICTION_FIELDS, PREDICTION_REVISIONS
    from fabric._runtime import _NCCL_HISTORY
    points = {(f, k, ".".join(map(str, first))) for (f, k), steps in _NCCL_HISTORY.items()
              for first, _v in steps[1:]}
    points |= {(f, k, ".".join(map(str, steps[0][0]))) for (f, k), steps in _NCCL_HISTORY.items()}
    for rev, src in PREDICTION_REVISIONS.items():
        assert rev in points, rev
        assert "NVIDIA/nccl" in src and ("src/device" in src or "release notes" in src), rev
    assert set(PREDICTION_FIELDS) == {f for f, _k, _v in PREDICTION_REVISIONS}
    # base latencies and the tree correction: no sourced revision, so never taken from later
    assert "base_latency" not in PREDICTION_FIELDS and "tree_correction" not in PREDICTION_FIELDS


@settings(max_examples=60, deadline=None)
@given(release=st.sampled_from(sorted(NCCL_RELEASE_DATES)), data=st.data())
def test_timing_takes_sourced_revisions_only(release, data):
    from fabric import PREDICTION_REVISIONS
    from fabric._runtime import _FORMULAS, _NCCL_HISTORY, _parse_version
    rt = runtime(f"nccl@{release}")
    if rt.timing is None:       # the newest release: its own tables time it
        return
    v = _parse_version(release)
    (field, key) = data.draw(st.sampled_from(sorted(_NCCL_HISTORY, key=repr)))
    if field == "max_channels":
        assert rt.timing.max_channels == rt.max_channels
        return
    table = getattr(rt.timing, field)
    if v < (2, 25, 0) and isinstance(key, tuple) and key[0] == "blackwell":
        # no Blackwell row before 2.25: the Hopper row, timed as the Hopper row is
        assert table[key] == table[("hopper", key[1])]
    elif v < (2, 25, 0) and field == "search" and isinstance(key, tuple) and key[1] == "blackwell":
        # nor sm100 search arrays / NVLink bandwidth: sm90's (search.cc, topo.h)
        assert table[key] == table[(key[0], "hopper")]
    else:
        assert table[key] == _reference_timed(_NCCL_HISTORY, PREDICTION_REVISIONS, field, key, v,
                                              _FORMULAS)
    # what it runs (channels, NVLS pipeline) is the release's own in every case
    assert rt.timing.nvls == rt.nvls and rt.timing.max_channels == rt.max_channels


# -- symmetric-memory kernels: barriers, release fences, late pulls (NCCL src/device/symmetric)


def _brute_peer_trip(f, nodes):
    """Largest there-and-back path latency over the group's ordered pairs, pair by pair,
    plus the peer access remainder (fabric.peer_access_latency)."""
    from fabric import peer_access_latency, runtime_arch
    idx = [f.node_index[n] for n in nodes]
    worst = 0.0
    for a in idx:
        for b in idx:
            if a != b:
                there = float(np.asarray(f.router.latency([a], [b]))[0])
                back = float(np.asarray(f.router.latency([b], [a]))[0])
                worst = max(worst, there + back)
    return worst + peer_access_latency(runtime_arch(f))[0]


_SYM_SPECS = ["dgx-h100", "hgx-h200", "gb200-nvl72", "sd200-ultra", "mesh:2x2"]


@settings(max_examples=30, deadline=None)
@given(spec=st.sampled_from(_SYM_SPECS), k=st.integers(3, 30), fail=st.booleans(),
       op=st.sampled_from(["all-reduce", "all-gather", "reduce-scatter", "broadcast",
                           "reduce", "all-to-all"]))
def test_symmetric_kernels_pay_barrier_fence_and_late_pull(spec, k, fail, op):
    from analysis import _runtime_cost as rc
    from analysis._collectives import _GroupView, _resolve_ranks
    from fabric import peer_access_latency
    f = _split_fabric(spec)
    if fail:
        u, v = next((u, v) for u, v in f.graph.edges() if f.graph.nodes[u].get("kind") == "chip")
        f = f.without(links=[(u, v)])
    ranks = f.endpoints[:8]
    n = 2**k
    nodes, idx = _resolve_ranks(f, ranks)
    view = _GroupView(f, op, nodes, idx, None, None, True)
    trip = view.peer_trip()
    assert trip == pytest.approx(_brute_peer_trip(f, nodes), rel=1e-12)
    rt = runtime("symmetric-memory")
    tried, _why = rc.symmetric_candidates(rt, view, op, n, "auto", 1)
    floor = rt.kernel_floor[view.arch]
    for c in tried:
        t = view.transfer(c.schedule, op)
        data = t.data_time(n)
        if c.library == "one-shot":
            # Lamport: the pushed data is its own flag: no barrier, no fence, full payload
            assert c.protocol == "Lamport"
            assert c.time == pytest.approx(floor + data, rel=1e-12) and c.fixed == floor
            continue
        loads, stores = rc._PEER_ACCESS[(op, c.schedule)]
        # each further barrier: one handoff (a flag stored into every peer, the path one way,
        # + the GPU side of a peer load; session 23), not a flag round trip
        barrier = (view.transfer("one-shot", "all-gather").step_loadstore
                   + peer_access_latency(view.arch)[0])
        want = floor + max(1, t.phases - 1) * barrier
        want += trip * (int(loads) + int(stores))
        assert c.time == pytest.approx(want + data, rel=1e-12)
        assert c.fixed == pytest.approx(want - (trip if loads else 0.0), rel=1e-12)
    best = cost(f, op, n, runtime="symmetric-memory", ranks=ranks)
    assert best.time == pytest.approx(min(c.time for c in tried), rel=1e-12)
    assert best.time >= best.lower_bound * (1 - 1e-9)


def test_symmetric_collective_fence_is_the_moe_release_fence():
    # one mechanism: the release fence a symmetric collective pays after its stores is the
    # one the MoE exchange model charges TensorRT-LLM's dispatch (fence.release.sys)
    from analysis import moe_exchange
    from analysis._collectives import _GroupView, _resolve_ranks
    for spec in ("gb200-nvl72", "dgx-h100"):
        f = _split_fabric(spec)
        ranks = f.endpoints[:8]
        r = moe_exchange(f, "deepseek-v3", 4, ranks, kernel="one-sided", dispatch_bytes=2,
                         combine_bytes=2)
        nodes, idx = _resolve_ranks(f, ranks)
        view = _GroupView(f, "all-reduce", nodes, idx, None, None, True)
        assert r.dispatch_phase.fence == pytest.approx(view.peer_trip(), rel=1e-12)
        assert r.dispatch_phase.fence > 0


def test_symmetric_small_messages_stay_at_the_kernel_floor():
    # 8 bytes: the one-shot push-and-poll (the kind of kernel issue 1940 timed) costs its
    # floor, no fence
    for spec, floor in (("dgx-h100", 2.3e-6), ("gb200-nvl72", 3.0e-6)):
        r = cost(_split_fabric(spec), "all-reduce", 8, runtime="symmetric-memory",
                 ranks=_split_fabric(spec).endpoints[:8])
        assert r.protocol == "Lamport" and r.algorithm == "one-shot"
        assert floor <= r.time < floor * 1.01
    # a bulk kernel costs at least one barrier and one fence more than the floor
    big = cost(H100, "all-reduce", 2**24, algorithm="two-shot", runtime="symmetric-memory")
    assert big.protocol == "Simple" and big.fixed > 2.3e-6 + 0.8e-6


def test_block_rate_does_not_bind_a_symmetric_collective():
    # why the symmetric runtime charges no per-block rate while the MoE model does: a
    # collective kernel spreads its bytes over up to 64 blocks (NVIDIA/nccl
    # src/include/sym_kernels.h ncclSymkMaxBlocks), and 64 blocks at NCCL's per-block rate
    # (fabric.EXCHANGE_BLOCK_RATE) exceed every preset chip's scale-up bandwidth; a MoE
    # kernel that gives a token one block is held to one block's rate
    from analysis import MESSAGE_TECHNOLOGIES
    from fabric import EXCHANGE_BLOCK_RATE, runtime_arch
    from topologies import PRESETS
    for name in PRESETS:
        f = _split_fabric(name)
        G = f.graph
        cap = 64 * EXCHANGE_BLOCK_RATE[runtime_arch(f)].value
        for c in f.endpoints[:4]:
            scale_up = sum(d["bandwidth"] for v, d in G[c].items()
                           if G.nodes[v].get("kind") != "nic"
                           and d.get("tech") not in MESSAGE_TECHNOLOGIES)
            assert scale_up < cap, (name, c, scale_up, cap)


@settings(max_examples=25, deadline=None)
@given(spec=st.sampled_from(["dgx-h100", "gb200-nvl72", "rail:servers=2,gpus=4", "mesh:3x3"]),
       fail=st.booleans(), data=st.data())
def test_peer_round_trip_is_the_longest_same_domain_pair(spec, fail, data):
    # brute force over the ordered pairs that share a load/store domain, pair by pair
    from analysis import peer_round_trip
    f = _split_fabric(spec)
    if fail:
        u, v = next((u, v) for u, v in f.graph.edges() if f.graph.nodes[u].get("kind") == "chip")
        f = f.without(links=[(u, v)])
    k = data.draw(st.integers(2, min(8, len(f.endpoints))))
    ranks = data.draw(st.permutations(f.endpoints))[:k]
    dom = f.loadstore_domains
    idx = [f.node_index[r] for r in ranks]
    want = 0.0
    for a in idx:
        for b in idx:
            if a != b and dom[a] == dom[b]:
                there = float(np.asarray(f.router.latency([a], [b]))[0])
                back = float(np.asarray(f.router.latency([b], [a]))[0])
                want = max(want, there + back)
    assert peer_round_trip(f, ranks) == pytest.approx(want, rel=1e-12)


def test_every_bulk_symmetric_kernel_says_how_it_touches_its_peers():
    # each two-shot / in-switch kernel the runtime runs names its loads and stores (the
    # late first byte and the release fence follow from them): no silent default
    from analysis._runtime_cost import _PEER_ACCESS, SYMMETRIC_ALGORITHMS
    bulk = {(op, a) for op, algs in SYMMETRIC_ALGORITHMS.items() for a in algs
            if a not in ("one-shot", "point-to-point")}
    assert bulk == set(_PEER_ACCESS)
    assert all(loads or stores for loads, stores in _PEER_ACCESS.values())


@pytest.mark.parametrize("release", sorted(NCCL_RELEASE_DATES))
def test_every_release_times_nvls_tree_above_the_lower_bound(release):
    # review R12: 2.18.x's NVLS-tree run was timed by a mix of its own 0.7 nodes/(2(nodes-1))
    # ratio and 2.28's network factors (a formula no release had), 15% below the bound; parts
    # of one formula are revised together (fabric._runtime._FORMULAS)
    f = _split_fabric("rail:servers=2,gpus=8,nvls=1,chip=h100")
    for k in range(10, 34, 2):
        for alg in ("auto", "hierarchical"):
            r = cost(f, "all-reduce", 2**k, algorithm=alg, runtime=f"nccl@{release}")
            assert r.time >= r.lower_bound * (1 - 1e-9), (release, k, alg, r.time, r.lower_bound)


# -- point-to-point protocol: NCCL's p2p channels, not the collective ones (session 8) ------


def _nccl_p2p_protocol_brute(fabric, ranks, nbytes, release, ll_bytes=False):
    """NCCL's LL / Simple choice for one p2p message (``ll_bytes``: the bytes of it that run
    LL, chunk by chunk before 2.22), transliterated from NVIDIA/nccl
    (src/enqueue.cc addP2pToPlan / calcP2pChunkSize, src/graph/paths.cc
    ncclTopoGetNchannels / ncclTopoComputeP2pChannels, src/init.cc computeBuffSizes), with the
    facts read straight from the graph, peer by peer: the release's own code path (2.18-2.21
    per chunk, 2.22-2.28 thresholdLL, 2.29+ per-message channels)."""
    from analysis._collectives import MESSAGE_TECHNOLOGIES
    v = tuple(int(x) for x in release.split("."))
    G = fabric.graph
    dom = dict(zip(fabric.nodes, fabric.loadstore_domains))
    n = len(ranks)
    n_nodes = len({dom[r] for r in ranks})
    multi = n_nodes > 1

    def lanes(r):
        return sum(d.get("lanes", 1) for w, d in G[r].items()
                   if G.nodes[w].get("kind") != "nic" and d.get("tech") not in MESSAGE_TECHNOLOGIES)

    def nics(r):
        return {w for w, d in G[r].items() if G.nodes[w].get("kind") == "nic"} | {
            (r, w) for w, d in G[r].items() if d.get("tech") in MESSAGE_TECHNOLOGIES}

    maxch = 64 if v >= (2, 25, 0) else 32
    all_nics = set().union(*(nics(r) for r in ranks))
    per_node_nics = max(1, round(len(all_nics) / n_nodes)) if all_nics else 0
    search = min(lanes(r) for r in ranks) if not multi else max(1, per_node_nics)
    nchannels = max(1, min(maxch, 2 * int(search)))          # comm->nChannels
    ups = [[(w, d) for w, d in G[r].items() if G.nodes[w].get("kind") != "nic"
            and d.get("tech") not in MESSAGE_TECHNOLOGIES] for r in ranks]
    from fabric import runtime_arch
    rel = runtime(f"nccl@{release}")
    arch = runtime_arch(fabric)
    switched = all(all(G.nodes[w].get("kind") == "switch"
                       and str(d.get("tech", "")).startswith("nvlink") for w, d in u) for u in ups)
    if not multi and switched and all(ups):
        # one NVSwitch node: NCCL's ring search (session 9) with the release's constants and
        # MAXCHANNELS, raised to the release's NVLS channels on a reducing switch
        reduces = all(G.nodes[w].get("reduction") for u in ups for w, _d in u)
        nchannels = _brute_switch_channels(
            min(lanes(r) for r in ranks), rel.search[("nvlink_bw", arch)] / 1e9,
            [x / 1e9 for x in rel.search[("intra_speeds", arch)]], rel.max_channels,
            rel.nvls[("channels", arch)] if reduces else 0, _ring_raises(release))
    elif multi and switched and all_nics:
        # several nodes: NCCL's ring search over the NICs (session 10), the release's constants
        local = min(per_node_nics, math.ceil(n / n_nodes))
        net = min(sum(e["bandwidth"] for w2, e in G[w].items() if w2 != rr)
                  if not isinstance(w, tuple) else G[w[0]][w[1]]["bandwidth"]
                  for rr in ranks for w in nics(rr)) / 1e9
        techs = {str(d.get("tech")) for rr in ranks for w, d in G[rr].items()
                 if G.nodes[w].get("kind") == "nic"}
        pci = 48.0 if techs and techs <= {"pcie5-x16"} else None
        q = rel.search
        nchannels = _brute_net_channels(
            local, round(n / n_nodes), min(lanes(r) for r in ranks), q[("nvlink_bw", arch)] / 1e9,
            net, pci, [x / 1e9 for x in q[("inter_speeds", arch)]], arch,
            q["postset_more_rule"], rel.max_channels, q["postset_more_below"],
            _ring_raises(release))
    p2pn_pre = min(nchannels, maxch)
    p2pn = 1
    while p2pn < p2pn_pre:
        p2pn *= 2
    ppn = n / n_nodes
    pci = all(d.get("tech") == "pcie5-x16" or d.get("tech") in MESSAGE_TECHNOLOGIES
              for r in ranks for _w, d in G[r].items())
    counts = []
    for r in ranks:
        for peer in ranks:
            if peer == r:
                continue
            if dom[peer] == dom[r]:
                # paths.cc: PATH_NVL -> 2 x path bw / NVLink bw; the path's narrowest link
                # (a direct link, or each GPU's links into the switches); through a GPU: 2
                ups_r = [w for w, d in G[r].items() if G.nodes[w].get("kind") != "nic"
                         and d.get("tech") not in MESSAGE_TECHNOLOGIES]
                ups_p = [w for w, d in G[peer].items() if G.nodes[w].get("kind") != "nic"
                         and d.get("tech") not in MESSAGE_TECHNOLOGIES]
                if G.has_edge(r, peer):
                    k = G[r][peer].get("lanes", 1)
                elif ups_r and ups_p and all(G.nodes[w].get("kind") == "switch"
                                             for w in ups_r + ups_p):
                    k = min(lanes(r), lanes(peer))
                else:
                    k = 1
                counts.append(2 if pci else 2 * max(1, k))
            else:
                local = max(1, per_node_nics // max(1, round(ppn))) if per_node_nics else 0
                if v < (2, 29, 0):
                    m = 2
                    while m * n > p2pn_pre * 4 and m > 1:
                        m //= 2
                    counts.append(max(local, 1, m))
                else:
                    bw = min(sum(e["bandwidth"] for w2, e in G[w].items() if w2 != rr)
                             if not isinstance(w, tuple) else G[w[0]][w[1]]["bandwidth"]
                             for rr in ranks for w in nics(rr))
                    gbs = int(local * bw / 1e9) if local else 0
                    counts.append(max(local, -(-gbs // 14)) if local else 2)
    least = min(counts)
    per_peer = 1
    while per_peer < least:
        per_peer *= 2
    if v >= (2, 29, 0) and multi:
        while per_peer * -(-n // 8) > p2pn and per_peer > 1:
            per_peer //= 2
    else:
        per_peer = min(per_peer, p2pn)
    nmax = nmin = per_peer
    while nmin * n > p2pn and nmin > 1:
        nmin //= 2
    chip = str(getattr(getattr(fabric, "chip", None), "name", ""))
    if multi:
        step = 131072 * (2 if v >= (2, 29, 0) and chip.startswith("gb") else 1)
    else:
        step = 131072 if pci else 524288
    lo = step // 2 if multi else step // 8
    hi = step if multi else step * 32
    b = nbytes
    if multi:
        # a peer in another node is reached by the network transport, whose p2p connections
        # share their buffers (net.cc sendSetup: no graph -> shared) and have no LL buffer
        # unless NCCL_ALLOC_P2P_NET_LL_BUFFERS=1 (init.cc, default 0): addP2pToPlan's LL
        # needs conn->buffs[NCCL_PROTO_LL], so every such message runs Simple
        return 0 if ll_bytes else "Simple"
    if v < (2, 22, 0):
        # scheduleP2pTasksToPlan: chunks of calcP2pChunkSize, each its own addP2pToPlan
        size, ch = max(lo, -(-b // nmin)), nmin
        while size > hi and ch <= nmax / 2:
            ch *= 2
            size = -(-b // ch)
        size = -(-size // lo) * lo
        protos, left, ll = [], b, 0
        while True:
            c = min(left, size)
            protos.append("LL" if c <= 16384 else "Simple")
            ll += c if c <= 16384 else 0
            left -= c
            if left <= 0:
                break
        return ll if ll_bytes else protos[0]
    if v < (2, 29, 0):
        proto = "LL" if b <= nmax * 16384 else "Simple"
    elif b == 0:
        proto = "LL"
    else:
        ch = min(nmin, -(-b // lo))
        part = max(lo, -(-b // ch))
        while part > hi and ch <= nmax / 2:
            ch *= 2
            part = -(-b // ch)
        proto = "LL" if b <= ch * 16384 else "Simple"
    if ll_bytes:
        return b if proto == "LL" else 0
    return proto


@functools.cache
def _p2p_fabric(spec, cut):
    """``spec``, with its ``cut``-th scale-up link (chip to chip or switch, sorted) removed
    (None: intact)."""
    f = topologies.build(spec)
    if cut is None:
        return f
    G = f.graph
    links = sorted((a, b) for a, b, d in G.edges(data=True)
                   if G.nodes[a].get("kind") != "nic" and G.nodes[b].get("kind") != "nic"
                   and d.get("tech", "").startswith(("nvlink", "pcie")))
    return f.without(links=[links[cut % len(links)]])


@settings(max_examples=60, deadline=None)
@given(spec=st.sampled_from(["rail:servers=2,gpus=4,chip=h100", "rail:servers=2,gpus=8,chip=h100",
                             "dgx-h100", "rail:servers=4,gpus=4,nvls=1,chip=h20,nic=ib-ndr",
                             "gb200-nvl72", "rail:servers=2,gpus=4,chip=gb200"]),
       cut=st.one_of(st.none(), st.integers(0, 10**6)),
       release=st.sampled_from(["2.18.5", "2.21.5", "2.23.4", "2.26.6", "2.28.9", "2.29.2",
                                "2.30.7"]),
       k=st.integers(0, 26), frac=st.floats(0.5, 2.0), op=st.sampled_from(["send-recv", "all-to-all"]),
       data=st.data())
def test_p2p_protocol_is_nccls_per_peer_rule(spec, cut, release, k, frac, op, data):
    # the LL / Simple choice of a send-recv or all-to-all message against a transliteration of
    # NCCL's code with its p2p channels read from the graph, on intact and degraded fabrics
    # (the symptom: a degraded rail's all-to-all was faster than the intact one's because the
    # model took the collective channel count)
    f = _p2p_fabric(spec, cut)
    live = [c for c in f.endpoints if c not in f.failures.cut_off]
    if len(live) < 2:
        return
    if op == "send-recv":
        ranks = data.draw(st.lists(st.sampled_from(live), min_size=2, max_size=2, unique=True))
    else:
        m = data.draw(st.integers(2, min(len(live), 16)))
        ranks = sorted(data.draw(st.lists(st.sampled_from(live), min_size=m, max_size=m,
                                          unique=True)), key=list(f.endpoints).index)
    n = max(1, int(2**k * frac)) * (1 if op == "send-recv" else len(ranks))
    try:
        r = cost(f, op, n, ranks=ranks, runtime=f"nccl@{release}")
    except (NotApplicableError, RoutingError):
        return
    per_peer = n if op == "send-recv" else n // len(ranks)
    assert r.protocol == _nccl_p2p_protocol_brute(f, ranks, per_peer, release), (
        spec, cut, release, n, len(ranks))


def test_degraded_rail_all_to_all_is_not_faster_than_intact():
    # the symptom that started it: rail 2 x 4 H100 without chip5-nvs1, all-to-all 1 MiB was
    # 23.9 us against 26.5 us intact (the intact fabric's 8 collective channels kept 128 KiB
    # per peer on LL). NCCL's p2p rule runs Simple on both (newest: 1 channel per message
    # across nodes, 16 KiB threshold)
    f = topologies.build("rail:servers=2,gpus=4,chip=h100")
    d = f.without(links=[("chip5", "nvs1")])
    for rel in ("nccl", "nccl@2.26.6", "nccl@2.21.5"):
        a = cost(f, "all-to-all", 2**20, runtime=rel)
        b = cost(d, "all-to-all", 2**20, runtime=rel)
        assert a.protocol == b.protocol == "Simple"
        assert a.time <= b.time


@pytest.mark.parametrize("release", ["2.18.5", "2.21.5", "2.26.6", "2.30.7"])
def test_p2p_to_a_network_peer_runs_simple_hand_count(release):
    # NCCL's p2p connection to a peer in another node is the network transport's, with shared
    # buffers and no LL buffer unless NCCL_ALLOC_P2P_NET_LL_BUFFERS=1 (default 0; net.cc
    # sendProxyConnect 'Only allocate dedicated buffers for ring/tree, not for p2p'): an 8-byte
    # send-recv between two HGX H100 nodes is Simple, one network ring step (tuning.cc hwLat
    # net ring Simple 14 us) after Hopper's kernel floor 2.3 us; the same pair inside a node
    # keeps LL (NVLink ring LL step 0.6 us)
    f = topologies.build("rail:servers=2,gpus=8,nvls=1,chip=h100")
    rt = runtime(f"nccl@{release}")
    assert rt.p2p["net_ll_buffers"] == 0
    net = cost(f, "send-recv", 8, ranks=["chip0", "chip8"], runtime=f"nccl@{release}")
    assert net.protocol == "Simple"
    assert net.fixed == pytest.approx(2.3e-6 + 14.0e-6, rel=1e-12)
    one = cost(f, "send-recv", 8, ranks=["chip0", "chip1"], runtime=f"nccl@{release}")
    assert one.protocol == "LL"
    assert one.fixed == pytest.approx(2.3e-6 + 0.6e-6, rel=1e-12)
    # an all-to-all over both nodes: the network peers' Simple bounds it
    a2a = cost(f, "all-to-all", 16 * 64, runtime=f"nccl@{release}")
    assert a2a.protocol == "Simple"


def test_revision_holds_refuses_what_is_not_a_revision():
    from fabric import PREDICTION_REVISIONS, revision_holds
    with pytest.raises(SpecError, match="is not a revision of fabric.PREDICTION_REVISIONS"):
        revision_holds("2.28.7", ("hw_latency",))
    with pytest.raises(SpecError, match="not of the form"):
        revision_holds("abc", next(iter(PREDICTION_REVISIONS)))


# -- NCCL's simple TREE graph (x .85, tuning.cc from 2.26.2) ---------------------------------


def _shared_nic_rail(servers, gpus, shared):
    """A rail fabric whose NIC ``nic{a}`` is also cabled to chip ``a + 1`` for every ``a`` in
    ``shared`` (two GPUs of a server reaching one NIC directly, as on a PCIe switch)."""
    import networkx as nx

    from topologies._common import make_fabric
    base = topologies.build(f"rail:servers={servers},gpus={gpus},chip=h100")
    G = nx.Graph(base.graph)
    attrs = dict(base.graph.edges["chip0", "nic0"])
    for a in shared:
        G.add_edge(f"chip{a + 1}", f"nic{a}", **attrs)
    return make_fabric(G, base.endpoints, name=base.name + "+shared", family=base.family,
                       params=dict(base.params), chip=base.chip, techs=(),
                       structure=base.structure)


def _domain_members(f, ranks):
    """The ranks (chip numbers) of each load/store domain of ``f``, read from the graph."""
    dom = f.loadstore_domains
    index = {v: i for i, v in enumerate(f.graph.nodes)}
    members = {}
    for r in ranks:
        members.setdefault(dom[index[f"chip{r}"]], []).append(r)
    return members


@settings(max_examples=40, deadline=None)
@given(servers=st.integers(1, 4), gpus=st.integers(1, 4), data=st.data(), fail=st.booleans())
def test_simple_tree_pattern_follows_nccls_search_brute_force(servers, gpus, data, fail):
    # reference from the construction, not the graph: NCCL's tree search (search.cc,
    # v2.27.3-1) ends on the simple TREE pattern when some node of several has one rank, or
    # no NIC that two of its ranks reach directly; one node never (no NIC in NCCL's system)
    from analysis._collectives import _GroupView, _resolve_ranks
    n = servers * gpus
    pairs = [s * gpus + 2 * k for s in range(servers) for k in range(gpus // 2)]
    shared = data.draw(st.sets(st.sampled_from(pairs)) if pairs else st.just(set()))
    f = _shared_nic_rail(servers, gpus, sorted(shared))
    ranks = sorted(data.draw(st.sets(st.integers(0, n - 1), min_size=2, max_size=n)
                             if n >= 2 else st.just({0})))
    if len(ranks) < 2:
        return
    if fail:   # a degraded fabric: one rank's NVSwitch link gone (it may become its own node)
        r = data.draw(st.sampled_from(ranks))
        f = f.without(links=[(f"chip{r}", f"nvs{r // gpus}")])
    members = _domain_members(f, ranks)
    want = len(members) > 1 and any(
        len(rs) == 1 or not any(a in shared and a in rs and a + 1 in rs for a in rs)
        for rs in members.values())
    nodes, idx = _resolve_ranks(f, [f"chip{r}" for r in ranks])
    view = _GroupView(f, "all-reduce", nodes, idx, None, None, True)
    assert view.simple_tree == want


@settings(max_examples=80, deadline=None)
@given(servers=st.integers(1, 4), gpus=st.sampled_from([2, 4, 8]), share=st.sampled_from([1, 2, 4]),
       chip=st.sampled_from(["b200", "gb200", "gb300"]), data=st.data())
def test_simple_tree_pattern_reads_the_nics_pcie_switch(servers, gpus, share, chip, data):
    # rail pix=k: k GPUs and k NICs under one PCIe switch (a B200 board with GPU0 / GPU1 PIX
    # to NIC0 / NIC1). NCCL's balanced tree (search.cc v2.27.3-1) completes in a node when two
    # of its ranks reach one NIC at PIX; reference from the construction (blocks of k chips,
    # the failed links), not the graph's attributes. A Grace superchip (GB200 / GB300, no pix
    # given): blocks of its two GPUs, which reach their Grace's NICs at PATH_P2C (paths.cc
    # l.669-681), the rail's default. Degraded fabrics: a chip's NVSwitch link (it becomes
    # its own node) or its PCIe link (it reaches no NIC at PIX); a failure never turns the
    # simple TREE into the balanced one
    from analysis._collectives import _GroupView, _resolve_ranks
    if chip != "b200":
        share = 2                       # one Grace CPU, two Blackwell GPUs (a GB superchip)
    if gpus % share:
        return
    n = servers * gpus
    f0 = topologies.build(f"rail:servers={servers},gpus={gpus},chip={chip}"
                          + (f",pix={share}" if chip == "b200" else ""))
    ranks = sorted(data.draw(st.sets(st.integers(0, n - 1), min_size=min(2, n), max_size=n)))
    if len(ranks) < 2:
        return
    nvs_cut = data.draw(st.sets(st.sampled_from(ranks), max_size=2))
    pci_cut = data.draw(st.sets(st.sampled_from(ranks), max_size=2))
    links = ([(f"chip{r}", f"nvs{r // gpus}") for r in sorted(nvs_cut)]
             + [(f"chip{r}", f"nic{r}") for r in sorted(pci_cut)])
    f = f0.without(links=links) if links else f0
    if len({f.failures.group_of(f"chip{r}") for r in ranks}) > 1:
        return                          # a rank cut off: no communicator joins it (refused)
    members = _domain_members(f, ranks)

    def balanced(rs):
        blocks = {}
        for r in rs:
            if r not in pci_cut:
                blocks.setdefault(r // share, []).append(r)
        return any(len(b) >= 2 for b in blocks.values())

    want = len(members) > 1 and any(len(rs) == 1 or not balanced(rs) for rs in members.values())

    def view(fab):
        nodes, idx = _resolve_ranks(fab, [f"chip{r}" for r in ranks])
        return _GroupView(fab, "all-reduce", nodes, idx, None, None, True)

    assert view(f).simple_tree == want
    assert view(f).simple_tree or not view(f0).simple_tree


def test_rail_pix2_runs_the_balanced_tree(monkeypatch):
    # 2 servers of 8 B200, two GPUs and two NICs per PCIe switch: NCCL 2.27.3's tree has no
    # x .85 (its 16 GiB Simple time equals 2.25.1's, which had no factor); one NIC per GPU
    # (pix=1, the default) keeps it. The network's whole-step sends (session 16) are taken out:
    # they follow the channels per NIC, which differ between the two releases' searches
    _no_ll_fill(monkeypatch)
    big = 16 * 2**30
    times = {}
    for pix in (1, 2):
        f = topologies.build(f"rail:servers=2,gpus=8,chip=b200,pix={pix}")
        for rel in ("2.25.1", "2.27.3"):
            r = cost(f, "all-reduce", big, algorithm="double-binary-tree", runtime=f"nccl@{rel}")
            assert r.protocol == "Simple"
            times[pix, rel] = r.busbw
    assert times[2, "2.27.3"] == pytest.approx(times[2, "2.25.1"], rel=1e-12)
    assert times[1, "2.27.3"] == pytest.approx(0.85 * times[1, "2.25.1"], rel=1e-3)
    with pytest.raises(SpecError, match="pix=3"):
        topologies.build("rail:servers=2,gpus=8,pix=3")


def test_simple_tree_pattern_on_a_grace_host_follows_the_superchip_pairs():
    # GB200: the CX-7s hang off the Grace; NCCL gives both GPUs of a superchip PATH_P2C to
    # them (paths.cc l.669-681 at v2.27.3-1), so the balanced tree completes where a node's
    # ranks include both GPUs of one Grace (review S9-R2), and not where they sit on two
    # Graces (ranks 0 and 2 of a four-GPU tray: the simple TREE, x .85 from 2.26.2); a node
    # holding one rank of the group is the simple TREE (search.cc). The pairing is the
    # chip's fact (ChipSpec.grace_gpus), the rail's default NIC attachment
    from analysis._collectives import _GroupView, _resolve_ranks
    from fabric import chip_spec
    spec = "rail:servers=3,gpus=4,chip=gb200,scaleup=nvlink5,nvls=0,nic=ib-ndr"
    f = topologies.build(spec)
    assert chip_spec("gb200").grace_gpus == chip_spec("gb300").grace_gpus == 2
    assert chip_spec("b200").grace_gpus == chip_spec("h100").grace_gpus == 0
    assert any(p.name == "gb200.grace_gpus" and p.source for p in chip_spec("gb200").parameters())

    def view(ranks, fab=f):
        nodes, idx = _resolve_ranks(fab, [f"chip{r}" for r in ranks])
        return _GroupView(fab, "all-reduce", nodes, idx, None, None, True)

    assert view(range(12)).arm_host
    assert view(range(12)).simple_tree is False
    assert view([0, 1, 4, 5]).simple_tree is False
    assert view([0, 1, 4]).simple_tree is True       # host1 holds one rank
    assert view([0, 2, 4, 6]).simple_tree is True    # each node: one GPU of each Grace
    assert view([0, 2, 4, 5]).simple_tree is True    # host0 on two Graces
    # pix=1 states a NIC per GPU with nothing shared: the simple TREE even with pairs
    assert view([0, 1, 4, 5], topologies.build(spec + ",pix=1")).simple_tree is True
    split = [f"chip{r}" for r in (0, 2, 4, 6, 8, 10)]
    pair = [f"chip{r}" for r in (0, 1, 4, 5, 8, 9)]
    t = {(g[1], rel): cost(f, "all-reduce", 16 * 2**30, algorithm="double-binary-tree",
                           runtime=f"nccl@{rel}", ranks=g).busbw
         for g in (split, pair) for rel in ("2.25.1", "2.27.3")}
    assert t["chip2", "2.27.3"] == pytest.approx(0.85 * t["chip2", "2.25.1"], rel=1e-3)
    assert t["chip1", "2.27.3"] > 0.95 * t["chip1", "2.25.1"]
    with pytest.raises(SpecError, match="pairs 2 GPUs on a Grace"):
        topologies.build("rail:servers=2,gpus=3,chip=gb200")
    assert topologies.build("rail:servers=2,gpus=3,chip=gb200,pix=1").n_endpoints == 6
    h100 = topologies.build("rail:servers=3,gpus=4,chip=h100,nvls=0,nic=ib-ndr")
    nodes, idx = _resolve_ranks(h100, [f"chip{r}" for r in range(12)])
    assert _GroupView(h100, "all-reduce", nodes, idx, None, None, True).simple_tree is True
    new = cost(f, "all-reduce", 16 * 2**30, algorithm="double-binary-tree", runtime="nccl@2.27.3")
    old = cost(f, "all-reduce", 16 * 2**30, algorithm="double-binary-tree", runtime="nccl@2.25.1")
    assert new.busbw > 0.95 * old.busbw               # no x .85 on the Grace host


def test_simple_tree_pattern_costs_the_tree_85_percent_from_2_26():
    # 3 rail servers of 4 H100 (a NIC per GPU): NCCL 2.27.3's tree busBw is the 2.25.1 form
    # x .85 (tuning.cc l.284); the tree's Simple time at 16 GiB is bandwidth-bound, so the
    # bus bandwidths differ by that factor to within the latency's share
    f = topologies.build("rail:servers=3,gpus=4,chip=h100,nvls=0,nic=ib-ndr")
    assert runtime("nccl@2.25.1").factors["tree_simple_pattern"] == 1.0
    assert runtime("nccl@2.26.2").factors["tree_simple_pattern"] == 0.85
    new = cost(f, "all-reduce", 16 * 2**30, algorithm="double-binary-tree", runtime="nccl@2.26.2")
    old = cost(f, "all-reduce", 16 * 2**30, algorithm="double-binary-tree", runtime="nccl@2.25.1")
    assert new.protocol == old.protocol == "Simple"
    assert new.busbw == pytest.approx(0.85 * old.busbw, rel=1e-3)
    # the same servers with every NIC shared by two GPUs: the balanced tree, no factor
    shared = _shared_nic_rail(3, 4, [0, 2, 4, 6, 8, 10])
    a = cost(shared, "all-reduce", 16 * 2**30, algorithm="double-binary-tree",
             runtime="nccl@2.26.2")
    b = cost(shared, "all-reduce", 16 * 2**30, algorithm="double-binary-tree",
             runtime="nccl@2.25.1")
    assert a.time == pytest.approx(b.time, rel=1e-12)
    # one node: no NIC in NCCL's system, the balanced chain: no factor
    one = topologies.build("rail:servers=1,gpus=8,chip=h100,nvls=0")
    a = cost(one, "all-reduce", 2**30, algorithm="double-binary-tree", runtime="nccl@2.26.2")
    b = cost(one, "all-reduce", 2**30, algorithm="double-binary-tree", runtime="nccl@2.25.1")
    assert a.time == pytest.approx(b.time, rel=1e-12)


def test_nvls_off_over_several_hosts_in_2_20_only():
    # transliteration of nvls.cc ncclNvlsInit per release tag: 2.20.3 / 2.20.5 return with NVLS
    # off when 'comm->nNodes > 1 || comm->MNNVL' (nNodes counts hosts); 2.19 and 2.21+ do not.
    # Every release x one-host, multi-host-one-domain (MNNVL) and multi-node groups, intact and
    # degraded: NVLS / NVLS-tree is a candidate exactly when the rule allows it
    from analysis import _runtime_cost as rc
    from analysis._collectives import _GroupView, _resolve_ranks
    rail = topologies.build("rail:servers=2,gpus=8,nvls=1,chip=h100")
    nvl72 = topologies.build("gb200-nvl72")
    groups = [(H100, H100.endpoints), (rail, rail.endpoints), (nvl72, nvl72.endpoints[:8]),
              (rail.without(links=[("chip1", "nvs0")]), rail.endpoints)]
    for f, ranks in groups:
        nodes, idx = _resolve_ranks(f, ranks)
        view = _GroupView(f, "all-reduce", nodes, idx, None, None, True)
        hosts = len({f.host_of[n] for n in nodes})
        for v in NCCL_RELEASE_DATES:
            ver = tuple(int(x) for x in v.split("."))
            rt = runtime(f"nccl@{v}")
            tried, why = rc.nccl_candidates(rt, view, "all-reduce", 2**30, "auto", 1)
            nvls = {c.library for c in tried} & {"nvls", "nvls-tree"}
            off = (2, 20, 0) <= ver < (2, 21, 0) and hosts > 1
            if off:
                assert not nvls, (f.name, v)
                assert any("hosts" in w for _a, w in why), (f.name, v)
                forced = cost(f, "all-reduce", 2**30, algorithm="in-switch" if view.n_nodes == 1
                              else "hierarchical", runtime=rt, ranks=ranks)
                assert forced.algorithm in ("ring", "multi-ring"), (f.name, v)
            elif view.ppn >= rt.factors["nvls_min_gpus"] and int(view.node_ranks().min()) >= 2:
                assert nvls, (f.name, v)


@settings(max_examples=60, deadline=None)
@given(spec=st.sampled_from(["rail:servers=2,gpus=4,chip=h100", "dgx-h100",
                             "rail:servers=4,gpus=4,nvls=1,chip=h20,nic=ib-ndr", "gb200-nvl72"]),
       cut=st.one_of(st.none(), st.integers(0, 10**6)),
       release=st.sampled_from(["2.18.5", "2.20.5", "2.21.5", "2.23.4", "2.29.2", "2.30.7"]),
       k=st.integers(12, 30), extra=st.integers(0, 40000), data=st.data())
def test_p2p_ll_bytes_follow_nccls_chunks(spec, cut, release, k, extra, data):
    # before 2.22 every chunk of a message chooses LL or Simple by its own size (enqueue.cc
    # addP2pToPlan per chunk of calcP2pChunkSize): a trailing chunk of at most 16 KiB runs LL
    # and crosses at LL's 8-of-16 bytes; from 2.22 the whole message or none. Brute force
    # against the chunk-by-chunk transliteration, on intact and degraded fabrics
    from analysis import _runtime_cost as rc
    from analysis._collectives import _GroupView, _resolve_ranks
    f = _p2p_fabric(spec, cut)
    live = [c for c in f.endpoints if c not in f.failures.cut_off]
    if len(live) < 2:
        return
    ranks = data.draw(st.lists(st.sampled_from(live), min_size=2, max_size=2, unique=True))
    n = 2**k + extra
    try:
        r = cost(f, "send-recv", n, ranks=ranks, runtime=f"nccl@{release}")
    except (NotApplicableError, RoutingError):
        return
    rt = runtime(f"nccl@{release}")
    nodes, idx = _resolve_ranks(f, ranks)
    view = _GroupView(f, "send-recv", nodes, idx, None, None, True)
    ll = rc.p2p_ll_bytes(rt, view, n)
    assert ll == _nccl_p2p_protocol_brute(f, ranks, n, release, ll_bytes=True)
    t = view.transfer("point-to-point", "send-recv")
    # the LL bytes twice on the wire; the Simple parts' last chunks copied out after them
    # (p2p_drain, held against its brute force in tests/test_runtime_s37_drain.py)
    want = r.fixed + n * t.per_byte * (1 + ll / n) + rc.p2p_drain(rt, view, "send-recv", n)
    assert r.time == pytest.approx(want, rel=1e-9)
    if tuple(int(x) for x in release.split(".")) >= (2, 22, 0):
        assert ll in (0, n)


def test_p2p_trailing_chunk_runs_ll_before_2_22():
    # one node of H100 (p2pChunkSize 512 KiB, smallest part 64 KiB, 16 channels at least):
    # 1 MiB + 8 KiB to one peer under 2.21.5 is cut into chunks of calcP2pChunkSize =
    # alignUp(max(64 KiB, divUp(n, 16)), 64 KiB) = 128 KiB: 8 of them and an 8 KiB remainder,
    # its own operation, which runs LL (2 x its bytes on the wire); 2.22.3 decides once
    f = topologies.build("dgx-h100")
    n = 2**20 + 8192
    old = cost(f, "send-recv", n, ranks=f.endpoints[:2], runtime="nccl@2.21.5")
    new = cost(f, "send-recv", n, ranks=f.endpoints[:2], runtime="nccl@2.22.3")
    assert old.protocol == new.protocol == "Simple"
    base = cost(f, "send-recv", n - 8192, ranks=f.endpoints[:2], runtime="nccl@2.21.5")
    # less the Simple bytes' copy-out after them (p2p_drain: 1 MiB of Simple chunks in all
    # three, the 8 KiB LL remainder none in 2.21.5; session 37)
    drain = 2 * 2**20 / f.chip.hbm_bandwidth
    per_byte = (base.time - base.fixed - drain) / (n - 8192)
    assert old.time - old.fixed - drain == pytest.approx(per_byte * (n + 8192), rel=1e-9)
    assert new.time - new.fixed - 2 * n / f.chip.hbm_bandwidth == pytest.approx(
        per_byte * n, rel=1e-9)



def _ring_raises(release):
    # the ring graph's pass-2 raise ('increase bw for Ring'): from v2.19.3-1; in 2.18.x and
    # 2.19.1 DupChannels runs last and pass 2 skips the ring (search.cc v2.18.5-1 l.962-996)
    return tuple(map(int, release.split("."))) >= (2, 19, 3)


def _brute_search_speeds(speeds, place, start, total, maxch, raise_=True):
    """``(channels, speed)`` of NCCL's ring search over a speed array as search.cc's
    ncclTopoCompute runs it, shared by the one-node and the network brute forces: start at the
    first speed not above ``start`` (the last if none), place channels at each speed
    (``place(speed, at_least)``: how many fit, 0 if fewer than ``at_least``), keep a strictly
    better channels x speed, stop once it reaches ``total``, lower the speed while next / best
    > .49; then ncclTopoDupChannels (x 2 at most maxch / 2, the speed divided, unless below
    25 GB/s or below 50 with more than 4 channels) and pass 2 (raise the speed while the
    channels still fit; not with ``raise_`` False: 2.18.x, 2.19.1). ``(0, 0.0)`` when no
    channel fits."""
    i = 0
    while i < len(speeds) - 1 and speeds[i] > start + 1e-9:
        i += 1
    best = (0, 0.0)
    while True:
        k = place(speeds[i])
        if k * speeds[i] > best[0] * best[1] + 1e-9:
            best = (k, speeds[i])
        if best[0] and best[0] * best[1] >= total - 1e-9:
            break
        if i < len(speeds) - 1 and (best[0] == 0 or speeds[i + 1] / best[1] > 0.49):
            i += 1
            continue
        break
    n, bw = best
    if n and bw >= 25 and not (bw < 50 and n > 4):
        d = min(2 * n, maxch // 2)
        bw /= -(-d // n)
        n = d
        if not raise_:
            return n, bw
        j = 0
        while j < len(speeds) - 1 and speeds[j] > bw + 1e-9:
            j += 1
        while j > 0 and place(speeds[j - 1], n) >= n:
            j -= 1
            n, bw = place(speeds[j]), speeds[j]
    return n, bw


def _brute_switch_channels(lanes, per_link, speeds, maxch=64, nvls=0, raise_=True):
    """NCCL's ring search on an NVSwitch node, step by step as search.cc runs it: every speed
    of the array is searched by placing channels one at a time (each charging the speed on
    every GPU's link), the best graph kept by nChannels x speed, then DupChannels, pass 2 and
    connect.cc's Postset; independent of analysis._runtime_cost."""
    total = lanes * per_link

    def place(speed, at_least=0):
        left, k = total, 0
        while left + 1e-9 >= speed and k < maxch // 2:
            left -= speed
            k += 1
        return k if k >= at_least else 0

    n, _bw = _brute_search_speeds(speeds, place, total, total, maxch, raise_)
    if n == 0:
        return 1
    out = min(maxch, 2 * n)
    return max(out, min(maxch, nvls)) if nvls else out


@settings(max_examples=40, deadline=None)
@given(lanes=st.integers(1, 24), arch=st.sampled_from(["hopper", "blackwell"]),
       nvls=st.sampled_from([0, 16, 24, 32]))
def test_switch_channels_follow_nccls_ring_search_brute_force(lanes, arch, nvls):
    from analysis._runtime_cost import nccl_switch_channels
    rt = runtime("nccl")
    per = rt.search[("nvlink_bw", arch)] / 1e9
    speeds = [x / 1e9 for x in rt.search[("intra_speeds", arch)]]
    want = _brute_switch_channels(lanes, per, speeds, rt.max_channels, nvls)
    assert nccl_switch_channels(rt, lanes, arch, nvls or False) == want


def test_switch_channels_are_nccls_logged_counts():
    # NCCL's own INFO lines: 8 H100 of an AWS p5 node, '24 coll channels ... 32 p2p channels,
    # 32 p2p channels per peer' (NCCL 2.28+ logs in public repositories); 8 H800, '16 coll
    # channels' (NVIDIA/nccl issue 892). The model's view of the same groups, intact and with
    # one NVLink lane of a GPU gone (the least-connected GPU decides)
    from analysis import _runtime_cost as rc
    from analysis._collectives import _GroupView, _resolve_ranks
    for spec, coll, p2p in (("dgx-h100", 24, 32), ("hgx-h800", 16, 16)):
        f = topologies.build(spec)
        nodes, idx = _resolve_ranks(f, f.endpoints)
        view = _GroupView(f, "all-reduce", nodes, idx, None, None, True)
        assert view.channels == coll
        p2pn, per_peer, _nmin, _chunk = rc.p2p_channels(runtime("nccl"), view)
        assert (p2pn, per_peer) == (p2p, p2p)
    f = topologies.build("gb200-nvl72")
    nodes, idx = _resolve_ranks(f, f.endpoints[:4])
    assert _GroupView(f, "all-reduce", nodes, idx, None, None, True).channels == 32


@settings(max_examples=20, deadline=None)
@given(spec=st.sampled_from(["dgx-h100", "hgx-h800", "hgx-b200"]),
       release=st.sampled_from(["2.21.5", "2.27.7", "2.30.7"]), data=st.data())
def test_switch_channels_on_a_degraded_node_follow_its_least_connected_gpu(spec, release, data):
    # degraded fabrics are first-class: lanes lost on one GPU's switch bundles lower the
    # channels of the whole node (every ring channel crosses every GPU: the least-connected
    # GPU decides); reference: the step-by-step search on the counted lanes, raised to the
    # NVLS channels in 2.20-2.27 only (connect.cc; session 16)
    from analysis._collectives import _GroupView, _resolve_ranks
    from fabric import runtime_arch
    f = topologies.build(spec)
    G = f.graph
    chip = data.draw(st.sampled_from(list(f.endpoints)))
    bundles = sorted(v for v in G[chip] if G.nodes[v].get("kind") == "switch")
    lost = []
    for v in bundles:
        k = data.draw(st.integers(0, G[chip][v].get("lanes", 1) - 1))
        lost += [(chip, v)] * k
    d = f.without(lanes=lost) if lost else f
    nodes, idx = _resolve_ranks(d, d.endpoints)
    view = _GroupView(d, "all-reduce", nodes, idx, None, None, True)
    least = min(sum(e.get("lanes", 1) for w, e in d.graph[r].items()
                    if d.graph.nodes[w].get("kind") == "switch") for r in d.endpoints)
    rt = runtime(f"nccl@{release}")
    arch = runtime_arch(d)
    reduces = all(d.graph.nodes[w].get("reduction") for r in d.endpoints for w in d.graph[r]
                  if d.graph.nodes[w].get("kind") == "switch")
    raises = release != "2.30.7"
    want = _brute_switch_channels(least, rt.search[("nvlink_bw", arch)] / 1e9,
                                  [x / 1e9 for x in rt.search[("intra_speeds", arch)]],
                                  rt.max_channels,
                                  rt.nvls[("channels", arch)] if reduces and raises else 0,
                                  _ring_raises(release))
    # (not monotone in the lanes: the search keeps the best channels x speed, so 11 NVLink4
    # lanes give 15 x 15 GB/s -> 30 channels, more than 18 lanes' 24)
    assert view.nccl_channels(rt) == want


def _p2p_time(f, ranks, n, release):
    r = cost(f, "send-recv", n, ranks=ranks, runtime=f"nccl@{release}")
    return r.time, r.protocol


@settings(max_examples=40, deadline=None)
@given(spec=st.sampled_from(["dgx-h100", "hgx-h20", "hgx-b200", "gb200-nvl72",
                             "torus:4x4,tech=nvlink4", "mesh:2x4,tech=nvlink4",
                             "rail:servers=2,gpus=4,chip=h100",
                             "rail:servers=2,gpus=4,scaleup=pcie5-x16,chip=h100",
                             "rail:servers=2,gpus=8,chip=h100,nic=roce-400g",
                             "rail:servers=2,gpus=4,chip=gb200",
                             "switch:8,planes=2,chip=h100"]),
       cut=st.one_of(st.none(), st.integers(0, 10**6)),
       release=st.sampled_from(["2.22.3", "2.23.4", "2.27.3", "2.28.7", "2.29.2", "2.30.7"]),
       k=st.integers(3, 27), data=st.data())
def test_send_recv_time_is_not_decreasing_in_size(spec, cut, release, k, data):
    # a larger message to one peer never takes less time: in particular across NCCL's LL ->
    # Simple switch (enqueue.cc addP2pToPlan), where LL's doubled bytes stop and a Simple step
    # (a flag round and a system fence, prims_simple.h postPeer: tuning.cc ring Simple
    # hwLatency) starts. Found by bisection on the protocol; intact and degraded fabrics.
    # Rule 0 (until 2.21: a trailing chunk of <= 16 KiB runs LL on its own) is a true
    # sawtooth in size and is left out (test_p2p_ll_bytes_follow_nccls_chunks).
    f = _p2p_fabric(spec, cut)
    live = [c for c in f.endpoints if c not in f.failures.cut_off]
    if len(live) < 2:
        return
    ranks = data.draw(st.lists(st.sampled_from(live), min_size=2, max_size=2, unique=True))
    lo, hi = 1, 2**k
    try:
        (t_lo, p_lo), (t_hi, p_hi) = (_p2p_time(f, ranks, lo, release),
                                      _p2p_time(f, ranks, hi, release))
    except (NotApplicableError, RoutingError):
        return
    assert t_lo <= t_hi
    if p_lo == p_hi:
        return
    while hi - lo > 1:          # the last size still on the small-size protocol
        mid = (lo + hi) // 2
        if _p2p_time(f, ranks, mid, release)[1] == p_lo:
            lo = mid
        else:
            hi = mid
    a, b = _p2p_time(f, ranks, lo, release), _p2p_time(f, ranks, hi, release)
    assert a[1] == "LL" and b[1] == "Simple"
    assert a[0] <= b[0], (spec, cut, release, ranks, lo, a, b)


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_a_release_is_the_tag_it_stands_for(data):
    # one identity (audit s9 design question): an untagged version's constants, the revisions
    # that time its run and the kernels it is checked against are all one tag's: the latest
    # of its series not after it, or the series' first tag before that (nccl@2.28 was 2.28's
    # constants checked against 2.27.7's kernels)
    from fabric import PREDICTION_REVISIONS, release_tag, revision_holds
    tags = sorted(NCCL_RELEASE_DATES, key=lambda t: [int(x) for x in t.split(".")])
    t = data.draw(st.sampled_from(tags))
    a, b, c = (int(x) for x in t.split("."))
    v = data.draw(st.sampled_from([f"{a}.{b}", f"{a}.{b}.0", f"{a}.{b}.{c + 1}",
                                   f"{a}.{b}.{c + 7}", t]))
    if not (2, 18, 3) <= tuple(int(x) for x in (v.split(".") + ["0"])[:3]) <= (2, 30, 7):
        with pytest.raises(SpecError):
            runtime(f"nccl@{v}")
        return
    tag = release_tag(v)
    same = [u for u in tags if u.split(".")[:2] == [str(a), str(b)]]
    below = [u for u in same if [int(x) for x in u.split(".")] <= [int(x) for x in
                                                                   (v.split(".") + ["0"])[:3]]]
    assert tag == (below[-1] if below else same[0])
    r, s = runtime(f"nccl@{v}"), runtime(f"nccl@{tag}")
    fields = ("base_latency", "hw_latency", "ll_max_bw", "ring_ll128_bw", "tree_bw",
              "tree_ll128_bw", "nvls_tree_bw", "factors", "nvls", "p2p", "max_channels")
    for f in fields:
        assert getattr(r, f) == getattr(s, f), f
        assert getattr(r.timing or r, f) == getattr(s.timing or s, f), f
    for rev in sorted(PREDICTION_REVISIONS, key=repr):
        assert revision_holds(v, rev) == revision_holds(tag, rev), rev


def test_untagged_2_28_is_2_28_3_throughout():
    from fabric import PREDICTION_REVISIONS, release_tag, revision_holds
    assert release_tag("2.28") == "2.28.3"
    assert runtime("nccl@2.28").name == "nccl@2.28.3"
    assert [revision_holds("2.28", r) for r in sorted(PREDICTION_REVISIONS, key=repr)] == [
        revision_holds("2.28.3", r) for r in sorted(PREDICTION_REVISIONS, key=repr)]


# -- NCCL's collective channels across nodes (session 10) -------------------------------------


def _brute_net_channels(nics, ppn, lanes, nvlink_gbs, net_gbs, pci_gbs, speeds, arch, rule,
                        maxch=64, below=16, raise_=True):
    """:func:`_brute_net_graph`'s channels after connect.cc's Postset (x 2; x 2 again above 45
    GB/s below ``below`` channels); 1 where no speed fits."""
    n, bw = _brute_net_graph(nics, ppn, lanes, nvlink_gbs, net_gbs, pci_gbs, speeds, maxch,
                             raise_)
    if n == 0:
        return 1
    out = min(maxch, 2 * n)
    if (rule == 2 or (rule == 1 and arch == "hopper")) and bw > 45 + 1e-9 and out < below:
        out = min(maxch, 2 * out)
    return out


def _brute_net_graph(nics, ppn, lanes, nvlink_gbs, net_gbs, pci_gbs, speeds, maxch=64,
                     raise_=True):
    """NCCL's ring search over the NICs, channel by channel as search.cc places them: channel c
    starts at NIC c mod nics (ncclTopoSearchRecNet's round robin), skipped while its net.bw or
    PCIe link is below the speed (each charged the speed), enters at GPU c mod ppn, and charges
    the speed on every GPU's NVLink in (all but the first) and out (all but the last); the best
    nChannels x speed over the speeds (lower while next / best > .49), DupChannels, pass 2:
    ``(nChannels, speed)`` in GB/s; independent of analysis._runtime_cost."""
    nvl = lanes * nvlink_gbs
    cap = min(net_gbs, pci_gbs) if pci_gbs else net_gbs

    def place(s, at_least=0):
        left = [cap] * nics
        gin, gout = [0.0] * ppn, [0.0] * ppn
        k = 0
        while k < maxch // 2:
            n = next((m for m in [(k + i) % nics for i in range(nics)]
                      if left[m] + 1e-9 >= s), None)
            if n is None:
                break
            first, last = k % ppn, (k - 1) % ppn
            ok = all((gin[g] + (s if g != first else 0)) <= nvl + 1e-9
                     and (gout[g] + (s if g != last else 0)) <= nvl + 1e-9 for g in range(ppn)) \
                if ppn > 1 else True
            if not ok:
                break
            left[n] -= s
            for g in range(ppn):
                gin[g] += s if g != first else 0
                gout[g] += s if g != last else 0
            k += 1
        return k if k >= at_least else 0

    return _brute_search_speeds(speeds, place, cap, max(nvl, pci_gbs or 0), maxch, raise_)


@settings(max_examples=80, deadline=None)
@given(arch=st.sampled_from(["hopper", "blackwell"]), ppn=st.integers(1, 8), data=st.data(),
       release=st.sampled_from(["2.18.5", "2.19.3", "2.21.5", "2.24.3", "2.25.1", "2.27.3",
                                "2.27.5", "2.27.6", "2.29.7", "2.30.7"]))
def test_net_channels_follow_nccls_search_brute_force(arch, ppn, data, release):
    from analysis._runtime_cost import nccl_net_channels
    rt = runtime(f"nccl@{release}")
    nics = data.draw(st.integers(1, ppn))
    lanes = data.draw(st.integers(1, 18))
    net = data.draw(st.sampled_from([12.5, 25.0, 50.0, 100.0]))
    pci = data.draw(st.sampled_from([None, 24.0, 48.0]))
    q = rt.search
    want = _brute_net_channels(nics, ppn, lanes, q[("nvlink_bw", arch)] / 1e9, net, pci,
                               [x / 1e9 for x in q[("inter_speeds", arch)]], arch,
                               q["postset_more_rule"], rt.max_channels, q["postset_more_below"],
                               _ring_raises(release))
    got = nccl_net_channels(rt, arch, nics, ppn, lanes, net * 1e9, pci * 1e9 if pci else None)
    assert got == want, (arch, ppn, nics, lanes, net, pci, release)
    # the graph itself (session 20: the tuner's busBw and caps rest on it)
    from analysis._runtime_cost import nccl_net_ring_graph
    g_n, g_bw = nccl_net_ring_graph(rt, arch, nics, ppn, lanes, net * 1e9,
                                    pci * 1e9 if pci else None)
    b_n, b_bw = _brute_net_graph(nics, ppn, lanes, q[("nvlink_bw", arch)] / 1e9, net, pci,
                                 [x / 1e9 for x in q[("inter_speeds", arch)]], rt.max_channels,
                                 _ring_raises(release))
    assert (g_n, g_bw / 1e9) == (b_n, pytest.approx(b_bw, rel=1e-12))


def test_net_channels_hand_counts():
    # worked by hand from NCCL's code (notes s9 / s10): 8 x 400G per H100 node: 8 channels at
    # 48 GB/s (no dup: below 50 with more than 4), Postset 16; GB200 trays, 4 NICs: 2.27.3's
    # sm100 speeds start at 47.9 and 24 x 8 = 192 beats 47.9 x 4, no dup below 25, Postset
    # 16 (was 8 = 2 x NICs); 8 NICs: 16 at 24 -> 32 under 2.27.3, 8 at 48 -> 16 under 2.30.7
    def ch(spec, release):
        f = topologies.build(spec)
        return cost(f, "all-reduce", 16 * 2**30, runtime=f"nccl@{release}").channels

    gb = "rail:servers=3,gpus={},chip=gb200,scaleup=nvlink5,nvls=0,nic=ib-ndr"
    assert ch("rail:servers=2,gpus=8,chip=h100", "2.27.3") == 16
    assert ch("rail:servers=4,gpus=8,chip=h100", "2.26.6") == 16
    assert ch(gb.format(4), "2.27.3") == 16
    assert ch(gb.format(8), "2.27.3") == 32
    assert ch(gb.format(8), "2.30.7") == 16


def test_search_constants_by_release():
    # git show v<tag>-1:src/graph/search.cc / topo.h / connect.cc at the tags (review 21:10)
    def q(rel):
        return runtime(f"nccl@{rel}").search

    assert 22e9 not in q("2.19.1")[("inter_speeds", "hopper")]
    assert 22e9 in q("2.19.3")[("inter_speeds", "hopper")]
    assert q("2.19.4")[("nvlink_bw", "hopper")] == 20.0e9
    assert q("2.20.3")[("nvlink_bw", "hopper")] == 20.6e9
    assert q("2.27.3")[("inter_speeds", "blackwell")][:2] == (47.9e9, 45.0e9)
    assert q("2.27.5")[("inter_speeds", "blackwell")][:2] == (48.0e9, 45.1e9)
    assert q("2.27.6")[("inter_speeds", "blackwell")][:2] == (96.0e9, 48.0e9)
    assert q("2.29.7")[("inter_speeds", "blackwell")][:3] == (96.0e9, 80.0e9, 48.0e9)
    assert q("2.30.3")[("inter_speeds", "blackwell")][:3] == (96.0e9, 86.0e9, 80.0e9)
    assert (q("2.27.3")[("nvlink_bw", "blackwell")], q("2.27.5")[("nvlink_bw", "blackwell")]) == (
        40.0e9, 40.1e9)
    assert [(q(r)["postset_more_rule"], q(r)["postset_more_below"])
            for r in ("2.18.5", "2.19.4", "2.20.3", "2.24.3", "2.25.1")] == [
        (1, 17), (1, 17), (1, 16), (1, 16), (2, 16)]
    # before 2.25 a Blackwell GPU searches with sm90's arrays and NVLink bandwidth
    assert q("2.24.3")[("intra_speeds", "blackwell")] == q("2.24.3")[("intra_speeds", "hopper")]
    assert q("2.24.3")[("nvlink_bw", "blackwell")] == 20.6e9


@settings(max_examples=40, deadline=None)
@given(spec=st.sampled_from(["sd200-ultra:chip=h100", "nvl72:chip=h100", "dgx-h100",
                             "torus:4x4,tech=nvlink4", "hgx-b200"]),
       p=st.sampled_from([2, 4, 8]), transport=st.sampled_from(["loadstore", "rdma"]),
       op=st.sampled_from(["all-reduce", "all-gather", "reduce-scatter", "broadcast"]),
       algorithm=st.sampled_from(["ring", "multi-ring", "double-binary-tree"]),
       n=st.sampled_from([64, 1024, 14336]))
def test_nccl_in_one_node_is_not_below_its_schedules_floor_at_small_sizes(
        spec, p, transport, op, algorithm, n):
    # report's 20:30 finding: a one-node group over transport='rdma' floored NCCL's per-step
    # latency with the load/store step only (0 there), so NCCL's prediction fell below the
    # hardware schedule it runs (sd200-ultra:chip=h100, 8 ranks, 14 KiB all-reduce: 16.6 us
    # against the schedule's 34.1 us). Latency-bound sizes: NCCL's time is never below the
    # floor of the schedule it runs on the same transport
    f = topologies.build(spec)
    ranks = list(f.endpoints[:p])
    try:
        r = cost(f, op, n, ranks=ranks, transport=transport, algorithm=algorithm)
        floor = cost(f, op, n, ranks=ranks, transport=transport, algorithm=r.algorithm,
                     runtime="ideal")
    except (NotApplicableError, RoutingError, SpecError):
        return
    assert r.time >= floor.time * (1 - 1e-9), (r.time, floor.time, r.protocol)


# -- NCCL's per-size channels and its split of an operation over them (audit s10 (b)) ------


def _brute_channels_threads(proto, nc, n, nranks, ring):
    """NVIDIA/nccl src/enqueue.cc topoGetAlgoInfo's ring/tree channel and thread tuning, as
    written (identical at every tag 2.18.3-2.30.7): thresholds NCCL_LL_THREAD_THRESHOLD 8
    (x nRanks for the ring, tuning.cc), LL128 8, Simple 64; maxThreads LL 512, LL128 640,
    Simple 512. Independent of analysis._runtime_cost."""
    nt = {"LL": 512, "LL128": 640, "Simple": 512}[proto]
    thr = {"LL": 8, "LL128": 8, "Simple": 64}[proto] * (nranks if ring and proto == "LL" else 1)
    while n < nc * nt * thr:
        if nc >= 2:
            nc -= 1
        elif nt % 128 == 0:
            nt //= 2
        else:
            break
    return nc, nt


def _div_up(x, y):
    """NCCL's divUp for non-negative integers."""
    return (x + y - 1) // y


def _brute_channel_counts(version, op, proto, count, es, nranks, used, nc):
    """Bytes on each channel NCCL puts one operation on, transliterated per release from
    NVIDIA/nccl src/enqueue.cc (the test's own reading of each tag, not rt.split): 2.20-2.21
    addCBDCollToPlan over computeCollAlignCount; 2.22+ scheduleCollTasksToPlan for one task
    starting on channel 0. ``count`` in elements of ``es`` bytes (the per-rank count)."""
    if used == 1:
        return [count * es]
    if version < (2, 20, 0):
        return [count * es / used] * used       # the model's stated reading (kernel split)
    if version < (2, 22, 0):
        nthreads = {"LL": 512, "LL128": 640, "Simple": 512}[proto]
        align = {"Simple": 32 * 8 * 16, "LL": 8 * nthreads, "LL128": 480 * (nthreads // 32)}
        align_count = align[proto] // es
        total_bytes, total_count = count * es, count
        max_bytes = _div_up(_div_up(total_bytes, used), 16) * 16
        out = []
        for _c in range(used):
            if total_bytes == 0:
                break
            enq = min(max_bytes, total_bytes)
            work = min(_div_up(_div_up(enq, es), align_count) * align_count, total_count)
            out.append(work * es)
            total_bytes -= work * es
            total_count -= work
        return out
    min_traffic = 512 if version < (2, 23, 0) else (16 << 10 if version < (2, 29, 0) else 32 << 10)
    per_byte = {"all-reduce": 2, "all-gather": nranks, "reduce-scatter": nranks}.get(op, 1)
    traffic = count * es * per_byte
    if proto == "LL" and version >= (2, 26, 0):
        traffic *= 4
        per_byte *= 4
    if version >= (2, 23, 0):
        traffic = max(min_traffic, traffic)
    if version >= (2, 29, 0):
        per_channel = _div_up(traffic // used, 16) * 16
    else:
        per_channel = max(min_traffic, traffic // used)
    cell = 16 if version < (2, 23, 0) else _div_up(_div_up(min_traffic, per_byte), 16) * 16
    per_cell = cell // es
    cells = _div_up(count * es, cell)
    cell_traffic = cell * per_byte
    per = min(cells, _div_up(per_channel, cell_traffic))
    channel, current = 0, 0
    if channel + 1 == nc:
        lo = cells
    elif version < (2, 23, 0):
        lo = min(cells, (per_channel - current) // cell_traffic)
    else:
        lo = min(cells, _div_up(per_channel - current, cell_traffic))
    mid = (cells - lo) // per
    hi = (cells - lo) % per
    n_ch = (1 if lo else 0) + mid + (1 if hi else 0)
    if nc < channel + n_ch:
        mid = nc - channel - 2
        per = (cells - lo) // (mid + 1)
        hi = per + (cells - lo) % (mid + 1)
    if hi == 0 and mid != 0:
        hi = per
        mid -= 1
    if lo == 0:
        channel += 1
        if mid == 0:
            lo, hi = hi, 0
        else:
            lo = per
            mid -= 1
    count_mid = per * per_cell if mid else 0
    count_lo, count_hi = lo * per_cell, hi * per_cell
    if count_hi:
        count_hi -= cells * per_cell - count
    else:
        count_lo -= cells * per_cell - count
    out = ([count_lo] if count_lo else []) + [count_mid] * mid + ([count_hi] if hi else [])
    return [c * es for c in out]


_TAGS = sorted(NCCL_RELEASE_DATES, key=lambda v: tuple(map(int, v.split("."))))


@settings(max_examples=400, deadline=None)
@given(release=st.sampled_from(_TAGS),
       op=st.sampled_from(["all-reduce", "all-gather", "reduce-scatter", "broadcast"]),
       proto=st.sampled_from(["LL", "LL128", "Simple"]), nranks=st.integers(2, 72),
       es=st.sampled_from([1, 2, 4]), count=st.integers(1, 2**22), nc=st.integers(1, 64),
       data=st.data())
def test_nccl_channel_split_is_nccls_scheduler(release, op, proto, nranks, es, count, nc, data):
    # the busiest channel's bytes and the channels carrying any, against a literal
    # transliteration of each release's scheduler (counts in elements of 1, 2 or 4 bytes)
    from analysis._runtime_cost import nccl_channel_split
    used = data.draw(st.integers(1, nc))
    version = tuple(map(int, release.split(".")))
    gather = op in ("all-gather", "reduce-scatter")
    n = count * es * (nranks if gather else 1)
    want = _brute_channel_counts(version, op, proto, count, es, nranks, used, nc)
    assert sum(want) == pytest.approx(count * es, rel=1e-12)
    busiest, carrying = nccl_channel_split(runtime(f"nccl@{release}"), op, proto, n, nranks,
                                           used, nc)
    assert busiest == pytest.approx(max(want), rel=1e-12)
    # at most the communicator's channels (2.22's floored first channel can spill onto one
    # more than the picked count: NCCL's own rounding)
    assert carrying == len([w for w in want if w > 0]) <= nc
    # never less than an even split over the channels that carry bytes (not over the picked
    # count: 2.22's floored first channel can leave every picked channel below count / used
    # and spill the rest onto one more, e.g. count 262145 over 4 picked channels of 5 -> 65536)
    assert busiest >= count * es / carrying * (1 - 1e-12)


_SAW_FABRICS = ("gb200-nvl72", "dgx-h100", "hgx-h20", "rail:servers=2,gpus=4,chip=h100")


@functools.cache
def _saw_fabric(spec):
    return topologies.build(spec)


@settings(max_examples=60, deadline=None)
@given(spec=st.sampled_from(_SAW_FABRICS),
       release=st.sampled_from(["2.19.3", "2.20.5", "2.21.5", "2.22.3", "2.25.1", "2.27.6",
                                "2.29.2", "2.30.7"]),
       op=st.sampled_from(["all-reduce", "all-gather", "reduce-scatter", "broadcast"]),
       p=st.sampled_from([4, 8]), data=st.data())
def test_nccl_time_falls_with_size_only_where_nccls_busiest_channel_does(spec, release, op, p,
                                                                          data):
    # NCCL's own non-monotonicity (audit s10 (b)): at a channel step (topoGetAlgoInfo) the
    # busiest channel's bytes fall, and so does a channel-bound time (nvl72 tp=8: 57 KB 1
    # channel 23.8 us > 72 KB 2 channels 20.7 us). Per ring / tree candidate, over a sweep of
    # sizes: the channels are the brute force's, the transfer is the busiest channel's
    # bytes at the candidate's per-channel rate (Simple and LL128: exactly (choice -
    # tuner_fixed) x nc x busiest / count), and the time falls between two sizes only where the busiest
    # channel's bytes fall. Intact and degraded fabrics
    from degrade import degrade

    from analysis import _runtime_cost as rc
    from analysis._collectives import _GroupView, _resolve_ranks
    f = data.draw(degrade(_saw_fabric(spec), max_links=1, max_chips=0))
    live = [c for c in f.endpoints if c not in f.failures.cut_off][:p]
    if len(live) < 2:
        return
    version = tuple(map(int, release.split(".")))
    rt = runtime(f"nccl@{release}")
    try:
        nodes, idx = _resolve_ranks(f, live)
        view = _GroupView(f, op, nodes, idx, None, None, True)
    except (NotApplicableError, RoutingError):
        return
    nr = len(live)
    gather = op in ("all-gather", "reduce-scatter")
    start = data.draw(st.integers(1, 3000))
    sizes = [nr * (start + 517 * i) for i in range(40)]
    prev = {}

    def bare(n):
        # the candidates without the network's whole-step sends (sessions 15-16, checked on
        # their own): the transfer is then exactly the busiest channel's bytes; and with the
        # tuner choosing on the fabric's own rate (session 19: in one NVSwitch node it chooses
        # on its ring graph's quantized speed, rc._tuner_graph, checked on its own), so the
        # choice and the time share their basis here (the choice's fixed part is the tuner's,
        # Candidate.tuner_fixed: the time's also pays each step's handoff, session 22)
        saved, graph = rc.net_store_forward, rc._tuner_graph
        try:
            rc.net_store_forward = lambda *a: 0.0
            rc._tuner_graph = lambda rt, view, B, nc: (B, nc)
            return {(c.library, c.protocol): c for c in rc.nccl_candidates(
                rt, view, op, n, "auto", 1)[0]}
        finally:
            rc.net_store_forward, rc._tuner_graph = saved, graph

    for n in sizes:
        try:
            tried, _why = rc.nccl_candidates(rt, view, op, n, "auto", 1)
        except (NotApplicableError, RoutingError):
            return
        big = {k: c for k, c in bare(2**34).items() if c.library in ("ring", "tree")}
        plain = bare(n)
        for c in tried:
            if c.library not in ("ring", "tree") or c.schedule == "multi-ring":
                continue
            nc = big[(c.library, c.protocol)].channels
            ring = c.library == "ring"
            used, _nt = _brute_channels_threads(c.protocol, nc, n, nr, ring)
            count = n // nr if gather else n
            counts = _brute_channel_counts(version, op if ring else "all-reduce", c.protocol,
                                           count, 1, nr, used, nc)
            busiest = max(counts)
            assert c.channels == len([x for x in counts if x > 0]), (c.label, n)
            # a tree's time follows its schedule, its choice the tuner's .5 (session 13): the
            # two differ by one factor at every size (read where every channel is used)
            sched = 1.0
            if not ring:
                b = big[(c.library, c.protocol)]
                bused, _ = _brute_channels_threads(c.protocol, nc, 2**34, nr, False)
                bcounts = _brute_channel_counts(version, "all-reduce", c.protocol, 2**34, 1, nr,
                                                bused, nc)
                sched = (b.time - b.fixed) / (
                    (b.choice - b.tuner_fixed) * nc * max(bcounts) / 2**34)
            if c.protocol != "LL":
                c0 = plain[(c.library, c.protocol)]
                assert c0.time - c0.fixed == pytest.approx(
                    (c0.choice - c0.tuner_fixed) * nc * busiest / count * sched, rel=1e-9), (
                    c.label, n)
            key = (c.library, c.protocol)
            if key in prev:
                t0, b0 = prev[key]
                if c.time < t0 * (1 - 1e-12):
                    assert busiest < b0, (c.label, n)
            prev[key] = (c.time, busiest)


def test_the_sawtooth_of_nvl72_tp8_is_nccls_channel_step():
    # audit s10 (b): on an NVL72 tray group of 8, 57 KB runs ring/LL on one channel, 72 KB
    # on two (65536 = 2 channels x 512 threads x 8 B x 8 ranks): 2.30.7 puts 9 of 18 cells
    # of 4 KiB on the first channel (36864 B), so 72 KB is faster than 57 KB, by NCCL's rule
    f = topologies.build("gb200-nvl72")
    a = cost(f, "all-reduce", 57000, ranks=f.endpoints[:8])
    b = cost(f, "all-reduce", 72000, ranks=f.endpoints[:8])
    assert (a.algorithm, a.protocol, a.channels) == ("ring", "LL", 1)
    assert (b.algorithm, b.protocol, b.channels) == ("ring", "LL", 2)
    assert b.time < a.time
    assert a.fixed == pytest.approx(b.fixed, rel=1e-12)
    # transfer per busiest byte is the same on one channel and on two
    assert (b.time - b.fixed) / 36864 == pytest.approx((a.time - a.fixed) / 57000, rel=1e-9)


_TREE_BASIS_FABRICS = ("torus:3x3x3", "torus:4x4", "sd200-ultra:chip=h100", "dgx-h100",
                       "rail:servers=2,gpus=4,chip=h100", "hgx-h800")


@functools.cache
def _tree_basis_fabric(spec):
    return topologies.build(spec)


@settings(max_examples=40, deadline=None)
@given(spec=st.sampled_from(_TREE_BASIS_FABRICS), data=st.data(), fail=st.booleans(),
       release=st.sampled_from(["2.20.5", "2.25.1", "2.30.7"]))
def test_tree_bandwidth_basis_is_the_ring_graphs(spec, data, fail, release):
    # NCCL's tuner builds the tree's bandwidth on the graph its topology search finds for the
    # ring (tree graph searched at the ring's channels, src/init.cc; tuning.cc busBw =
    # nChannels x bw): the tree's basis is the same ring graph the ring candidate uses, the
    # faster of the rank-order ring and the link-disjoint multi-ring, and at equal bandwidth in
    # one node the one whose channels cross fewer links (search.cc ncclTopoCompareGraphs:
    # nChannels x bwIntra, then nHops). Brute force: both ring schedules evaluated directly,
    # their hops walked path by path (fabric.route), NCCL's order of comparison.
    from analysis._collectives import _GroupView, _resolve_ranks
    from analysis._runtime_cost import _tree_graph
    f = _tree_basis_fabric(spec)
    eps = list(f.endpoints)
    ranks = data.draw(st.lists(st.sampled_from(eps), min_size=2, max_size=min(len(eps), 12),
                               unique=True))
    if fail:   # a degraded fabric: one link of a member gone
        a = data.draw(st.sampled_from(ranks))
        f = f.without(links=[(a, data.draw(st.sampled_from(sorted(f.graph.neighbors(a)))))])
    rt = runtime(f"nccl@{release}")
    try:
        nodes, idx = _resolve_ranks(f, ranks)
        view = _GroupView(f, "all-reduce", nodes, idx, None, None, True)
        t, B, nc = _tree_graph(rt, view)
    except (NotApplicableError, RoutingError):
        return
    best = None
    for sched in ("ring", "multi-ring"):
        try:
            tt = view.transfer(sched, "all-reduce")
        except (NotApplicableError, KeyError):
            continue
        if best is None or tt.per_byte < best.per_byte or (
                tt.per_byte == best.per_byte and view.n_nodes == 1
                and _walked_hops(f, ranks, rt, view, True)
                < _walked_hops(f, ranks, rt, view, False) * (1 - 1e-6)):
            best = tt
    p = len(ranks)
    assert t.per_byte == best.per_byte
    assert t.step_loadstore == best.step_loadstore
    assert B == pytest.approx((2 * (p - 1) / p) / best.per_byte, rel=1e-12)
    assert nc >= 1


def _walked_hops(f, ranks, rt, view, multi):
    """NCCL's nHops of a ring graph by hand: channels x the links of one ring, each flow of the
    ring schedule's step walked with fabric.route and weighted by its share of a ring (the
    rank-order ring, its per-host rotations, or ring_search's rings in both directions)."""
    from analysis._runtime_cost import comm_channels
    nodes = [f.node(r) for r in ranks]
    p = len(ranks)
    step = schedule("all-gather", "multi-ring" if multi else "ring", p, fabric=f,
                    nodes=tuple(nodes)).steps[0]
    links = p * sum(w * (len(f.route(nodes[a], nodes[b])) - 1)
                    for a, b, w in zip(step.src, step.dst, step.fraction))
    nc = comm_channels(rt, view)
    if multi and view.ring_channels():
        nc = max(1, min(view.ring_channels(), rt.max_channels))
    return nc * links


def test_ring_graph_tie_goes_to_fewer_hops_and_keeps_the_ring_label():
    # NCCL (search.cc ncclTopoCompareGraphs): at equal nChannels x bwIntra the graph of fewer
    # hops. mesh:4x4, 13 ranks in a scrambled order (review S13-R1): the rank-order ring's
    # steps cross 34 links, the locality ring ring_search finds 26, same seconds per byte:
    # the multi-ring, on its 0.72 us steps (rank-order ring: 0.95 us)
    f = topologies.build("mesh:4x4,chip=h100")
    ranks = ["chip1", "chip14", "chip10", "chip6", "chip12", "chip9", "chip2", "chip11",
             "chip13", "chip7", "chip0", "chip8", "chip5"]
    assert sum(len(f.route(a, b)) - 1 for a, b in zip(ranks, ranks[1:] + ranks[:1])) == 34
    (ring,) = ring_search(f, ranks)
    assert sum(len(f.route(ranks[a], ranks[b])) - 1
               for a, b in zip(ring, np.roll(ring, -1))) == 26
    r = cost(f, "all-reduce", 1024, ranks=ranks, runtime="nccl")
    assert (r.algorithm, r.protocol) == ("multi-ring", "LL")
    # a full tie (same rings, same hops) keeps the rank-order ring's label: one H100 node
    # (the multi-ring there is the locality ring through the switches, the rank order)
    assert cost(H100, "all-reduce", 2**20, runtime="nccl", algorithm="ring").algorithm == "ring"
    assert cost(H100, "all-gather", 1024, runtime="nccl").algorithm == "ring"


def test_tree_on_one_direct_node_is_nccls_chain_latency():
    # sd200-ultra (128 chips, one load/store domain: NCCL's nNodes 1): the tree is a chain of
    # 127 NVLink steps each way; its LL latency is NCCL's 6.8 + 254 x 0.6 us (tuning.cc), as
    # the ring's 6.6 + 254 x 0.6, both on the multi-ring graph's 0.6 us steps
    f = _tree_basis_fabric("sd200-ultra:chip=h100")
    r = cost(f, "all-reduce", 8, runtime="nccl")
    labels = dict(c for c in r.candidates if isinstance(c[1], float))
    assert (r.algorithm, r.protocol) == ("multi-ring", "LL")
    assert r.fixed == pytest.approx(6.6e-6 + 254 * 0.6e-6, rel=1e-12)
    assert labels["tree/LL"] == pytest.approx(6.8e-6 + 254 * 0.6e-6, rel=1e-3)


# treeCorrectionFactor's Simple row (NVIDIA/nccl src/graph/tuning.cc, powers of two from 64 B)
_SIMPLE_TREE_CORRECTION = (.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8,
                           .7, .7, .8, .9, .9, .9)


@settings(max_examples=30, deadline=None)
@given(chip=st.sampled_from(["b200", "gb200", "h100"]), servers=st.integers(2, 3),
       release=st.sampled_from(["2.27.3", "2.28.9", "2.29.2", "2.30.7"]),
       log_n=st.integers(3, 33), data=st.data())
def test_nvls_tree_size_correction_on_blackwell_x86_from_2_29(chip, servers, release, log_n,
                                                              data):
    # tuning.cc ncclTopoGetAlgoTime from v2.29.2-1: NVLS-tree all-reduce bandwidth x
    # treeCorrectionFactor[Simple][log2i(n >> 6)] for 0 <= log2i < 24, on Blackwell with an x86
    # host only (GB200's Grace host is Arm; H100 is not Blackwell); earlier releases never
    from analysis._collectives import _GroupView, _resolve_ranks
    from analysis._runtime_cost import _nccl_nvls_tree
    f = _tree_basis_fabric(f"rail:servers={servers},gpus=4,nvls=1,chip={chip}")
    n = 2 ** log_n + data.draw(st.integers(0, 2 ** log_n - 1))
    nodes, idx = _resolve_ranks(f, None)
    view = _GroupView(f, "all-reduce", nodes, idx, None, None, True)
    rt = runtime(f"nccl@{release}")
    off = dataclasses.replace(rt, name=rt.name + "-nocorr", factors={
        **rt.factors, "nvls_tree_correction_blackwell_x86": 0})
    try:
        (c,), (c0,) = _nccl_nvls_tree(rt, view, n, 1), _nccl_nvls_tree(off, view, n, 1)
    except NotApplicableError:
        return
    k = (n >> 6).bit_length() - 1 if n >> 6 else -1
    corr = _SIMPLE_TREE_CORRECTION[k] if 0 <= k < 24 else 1.0
    applies = chip == "b200" and tuple(map(int, release.split("."))) >= (2, 29, 2)
    assert c.fixed == c0.fixed
    # the network's whole-chunk sends (session 17, nvls_tree_net_fill) are not the bandwidth's:
    # the same in both, outside the correction
    from analysis._runtime_cost import nvls_tree_net_fill
    per_byte = view.node_transfer("in-switch", "all-reduce")[0].per_byte
    fill = nvls_tree_net_fill(rt, view, n, c.channels, per_byte)
    assert fill == nvls_tree_net_fill(off, view, n, c0.channels, per_byte) > 0
    assert (c.time - c.fixed - fill) == pytest.approx(
        (c0.time - c0.fixed - fill) / (corr if applies else 1.0), rel=1e-12)
    # the tuner's choice carries it too (the time is the schedule's since session 13)
    assert (c.choice - c.tuner_fixed) == pytest.approx(
        (c0.choice - c0.tuner_fixed) / (corr if applies else 1.0), rel=1e-12)


@pytest.mark.parametrize("split, named", [
    ({"rule": 7}, "split rule must be 0, 1 or 2"),
    ({}, "needs its channel-split table"),
    ({"min_traffic": 0}, "'min_traffic' >= 1"),
    ({"ll_traffic": 0}, "'ll_traffic' >= 1"),
    ({"cell": -16}, "'cell' >= 0"),
    ({"round16": 2}, "'round16' 0 or 1"),
    ({"min_traffic": float("nan")}, "'min_traffic' >= 1"),
    ({"rule": 1}, "'byte_align' >= 1"),
])
def test_a_hand_built_runtime_with_a_bad_split_is_refused(split, named):
    # audit s12: a hand-built Runtime with an unusable split table failed deep inside cost
    # (ZeroDivisionError, KeyError) or was silently read as another rule
    rt = runtime("nccl")
    table = {} if split == {} else {**rt.split, **split}
    if "byte_align" in named:   # rule 1 without its keys
        table = {"rule": 1}
    with pytest.raises(SpecError, match=re.escape(named)):
        dataclasses.replace(rt, name="hand-built", split=table)
    # a valid hand-built copy still costs
    ok = dataclasses.replace(rt, name="hand-built-ok", split=dict(rt.split))
    assert cost(H100, "all-reduce", 1 << 20, runtime=ok).time > 0


def _brute_p2p_batches(release, p, p2pn, nmin):
    # literal reading of NCCL's one-node p2p schedule (v2.22.3-1 .. v2.30.7-1): round r's base
    # is r (2.22-2.27) or reverseBits(r, log2Up(p2pnChannels)) (2.28 on, src/include/channel.h),
    # its parts on channels (base + part) & (p2pnChannels - 1); rounds are added in order; a
    # channel opens a new batch at 8 works, at a round already in the batch, and from 2.28.7 at
    # a round of another round // 8 group (src/enqueue.cc addWorkBatchToPlan, v2.28.7-1 l.138)
    v = tuple(map(int, release.split(".")))
    if v < (2, 22, 0):
        return 1
    bits = max(0, (p2pn - 1).bit_length())
    batches = {}
    for r in range(p):
        base = int(format(r % (1 << bits), f"0{bits}b")[::-1] or "0", 2) if v >= (2, 28, 0) else r
        for part in range(nmin):
            c = (base + part) & (p2pn - 1)
            cur = batches.setdefault(c, [[]])[-1]
            new = (len(cur) == 8 or r in cur
                   or (v >= (2, 28, 7) and any(r // 8 != q // 8 for q in cur)))
            if new:
                batches[c].append([r])
            else:
                cur.append(r)
    return max(len(b) for b in batches.values())


@settings(max_examples=40, deadline=None)
@given(spec=st.sampled_from(["sd200-ultra:chip=h100", "tpu-v4-cube", "nvl72", "dgx-h100",
                             "torus:4x4x4"]),
       release=st.sampled_from(["2.20.5", "2.22.3", "2.25.1", "2.28.3", "2.29.2", "2.30.7"]),
       data=st.data())
def test_all_to_all_batches_follow_nccls_p2p_schedule_brute_force(spec, release, data):
    # one node: the busiest p2p channel's batches (run in series) against a literal replay of
    # NCCL's round -> channel -> batch placement; the kernel pays one p2p step per batch and
    # each batch after the first its counted chain (session 24, p2p_batch_chain)
    from analysis._collectives import _GroupView, _resolve_ranks
    from analysis._runtime_cost import _p2p, p2p_batch_chain, p2p_batches, p2p_channels
    f = _tree_basis_fabric(spec)
    eps = list(f.endpoints)
    ranks = data.draw(st.lists(st.sampled_from(eps), min_size=2, max_size=len(eps), unique=True))
    nodes, idx = _resolve_ranks(f, ranks)
    view = _GroupView(f, "all-to-all", nodes, idx, None, None, True)
    rt = runtime(f"nccl@{release}")
    if view.n_nodes > 1:
        return
    p2pn, _nmax, nmin, _chunk = p2p_channels(rt, view)
    want = _brute_p2p_batches(release, len(ranks), p2pn, nmin)
    if tuple(map(int, release.split("."))) < (2, 28, 0) and len(ranks) <= p2pn:
        want = 1   # 2.22-2.27's part placement not transliterated; rounds have channels of their own
    assert p2p_batches(rt, view) == want
    (c,) = _p2p(rt, view, "all-to-all", 1024.0 * len(ranks), "scattered")
    t = view.transfer("scattered", "all-to-all")
    # a load/store step also pays its handoff (session 22, analysis._runtime_cost.step_handoff)
    from analysis._runtime_cost import step_handoff
    ls = t.step_loadstore + step_handoff(view.arch) if t.step_loadstore > 0 else 0.0
    step = max(rt.hw_latency[(view.intra_hw, "ring", c.protocol)], ls, t.step_message)
    assert c.fixed == pytest.approx(rt.kernel_floor[view.arch] + want * step
                                    + (want - 1) * p2p_batch_chain(view.arch), rel=1e-12)


# -- NVLS-tree's network bandwidth is the NVLS graph's search speed (session 13) ------------


@settings(max_examples=60, deadline=None)
@given(arch=st.sampled_from(["hopper", "blackwell"]),
       release=st.sampled_from(["2.18.5", "2.20.5", "2.25.1", "2.26.6", "2.27.3", "2.28.3",
                                "2.30.7"]),
       net=st.floats(0.05e9, 120e9), pci=st.sampled_from([None, 24e9, 48e9, 64e9]))
def test_nvls_net_speed_is_nccls_search_speed_brute_force(arch, release, net, pci):
    # NCCL's NVLS graph (src/graph/search.cc ncclTopoCompute / ncclTopoSearchRecNet at
    # v2.26.6-1): the fastest inter speed a head's NIC and its PCIe path both carry; the
    # slowest speed when none fits. Reference: every speed tried in turn.
    from analysis._runtime_cost import nccl_nvls_net_speed
    rt = runtime(f"nccl@{release}")
    speeds = rt.search[("inter_speeds", arch)]
    path = min(net, pci) if pci else net
    fits = [s for s in speeds if s <= path * (1 + 1e-9)]
    want = max(fits) if fits else min(speeds)
    assert nccl_nvls_net_speed(rt, arch, net, pci) == want


def test_nvls_tree_two_h100_nodes_at_2_26_hand_count():
    # NCCL 2.26.6 (tuning.cc ncclTopoTuneModel): NVLS_TREE bw = min(bwIntra, bwInter) of the
    # NVLS graph, 8 heads (one per NIC); NDR net.bw 50 GB/s behind PCIe Gen5 x16 (48 GB/s).
    # Session 13 took both speeds as 48 (busBw 384, algBw 320 GB/s); the graph is searched
    # with the NVLinks too (session 20: search.cc ncclTopoSearchTryNvls charges a head's link
    # (heads + 1) x bwIntra): 9 x 48 > 18 x 20.6 = 370.8, so 8 heads first fit at 40, pass 2
    # raises bwInter alone to 48: busBw 8 x min(40, 48) = 320 GB/s, algBw x 5/6 = 266.7 GB/s
    # (the tuner's CHOICE; the time is the schedule's since session 13)
    f = topologies.build("rail:servers=2,gpus=8,nvls=1,chip=h100")
    n = 8 * 2**30
    c = _nvls_tree_candidate(f, n, "2.26.6")
    assert n / (c.choice - c.tuner_fixed) == pytest.approx(8 * 40e9 * 5 / 6, rel=1e-9)
    assert c.channels == 8


def test_nvls_tree_runs_its_busiest_channel_as_2_19_splits_it():
    # NCCL 2.19.4's NVLS_TREE kernel loops as its NVLS one (src/device/all_reduce.h: channel bid
    # takes the bid-th block of nHeads x chunk of each loop of nChannels x nHeads x chunk).
    # 2 x 8 H100, 16 channels, 8 heads; chunk 32 KiB at 256 KiB and at 1 MiB (both below one
    # loop of 16 x 8 x 32 KiB = 4 MiB): 256 KiB sits on channel 0, 1 MiB on channels 0-3,
    # 256 KiB each, so both take the same time (the tuner still prices them apart)
    from analysis._runtime_cost import _nvls_split
    from fabric import runtime
    f = topologies.build("rail:servers=2,gpus=8,nvls=1,chip=h100")
    view = types.SimpleNamespace(p=16)
    rt = runtime("nccl@2.19.4")
    assert _nvls_split(rt, view, 2**20, 8, 16, 2**15) == (2**18, 4)
    assert _nvls_split(rt, view, 2**18, 8, 16, 2**15) == (2**18, 1)
    small = _nvls_tree_candidate(f, 2**18, "2.19.4")
    big = _nvls_tree_candidate(f, 2**20, "2.19.4")
    assert big.time == pytest.approx(small.time, rel=1e-12)
    assert big.choice > small.choice


@settings(max_examples=30, deadline=None)
@given(servers=st.integers(2, 4), gpus=st.sampled_from([2, 4, 8]),
       nic=st.sampled_from(["ib-ndr", "roce-400g"]),
       release=st.sampled_from(["2.20.5", "2.21.5", "2.23.4", "2.25.1", "2.26.6", "2.27.7"]),
       k=st.integers(20, 34))
def test_nvls_tree_never_beats_its_graph_speed(servers, gpus, nic, release, k):
    # 2.20-2.27: the tuner's algBw <= heads x graph speed x (1 on 2 nodes, 1/2 on more) x 5/6,
    # whatever the size, NIC or node count (the graph speed is the search's, brute force above)
    f = topologies.build(f"rail:servers={servers},gpus={gpus},nvls=1,chip=h100,nic={nic}")
    rt = runtime(f"nccl@{release}")
    try:
        r = _nvls_tree_candidate(f, 2**k, release)
    except (NotApplicableError, StopIteration):
        return
    speeds = rt.search[("inter_speeds", "hopper")]
    speed = max(s for s in speeds if s <= 48e9 * (1 + 1e-9))
    heads = min(gpus, 8)
    bound = heads * speed * (1.0 if servers <= 2 else 0.5) * 5 / 6
    assert 2**k / (r.choice - r.tuner_fixed) <= bound * (1 + 1e-9)


# -- NCCL's tree timed by the schedule it runs (lead's decision, session 13) -----------------


def test_nccl_btree_is_the_diagram_in_trees_cc():
    # NVIDIA/nccl src/graph/trees.cc (every tag 2.18.3-2.30.7): the comment's 14-rank btree,
    # and the double tree's mirror (12 ranks: the second root is 11, the mirror of 0) and
    # shift (13 ranks: root of the second tree is 1)
    from analysis._runtime_cost import nccl_btree, nccl_dtree
    edges = {(0, 8), (8, 4), (8, 12), (4, 2), (4, 6), (12, 10), (12, 13), (2, 1), (2, 3),
             (6, 5), (6, 7), (10, 9), (10, 11)}
    got = {(u, r) for r in range(14) for u in [nccl_btree(14, r)[0]] if u != -1}
    assert got == edges
    _t0, t1 = nccl_dtree(12)
    assert [r for r in range(12) if t1[r][0] == -1] == [11]
    assert set(t1[3][1]) == {1, 7}           # 8 -> 3 mirrored, its children 4, 10 -> 7, 1
    _t0, t1 = nccl_dtree(13)
    assert [r for r in range(13) if t1[r][0] == -1] == [1]
    assert t1[1][1] == (9,)                  # 0 -> 8 shifted by one


def _simulate_tree_allreduce(trees, n_nodes, share=0.5):
    """Brute force: run reduce-up then broadcast-down on each tree, message by message, with
    each node holding a distinct vector; count what every node sends and receives (per byte
    of the all-reduce) and check that every node ends with the sum."""
    sent = [0.0] * n_nodes
    recv = [0.0] * n_nodes
    for tree in trees:
        parent = [tree[r][0] for r in range(n_nodes)]
        roots = [r for r in range(n_nodes) if parent[r] == -1]
        assert len(roots) == 1
        for r in range(n_nodes):
            for c in tree[r][1]:
                assert parent[c] == r
        # breadth-first order from the root (every node reached once: a spanning tree)
        order, seen = [roots[0]], {roots[0]}
        for r in order:
            for c in tree[r][1]:
                assert c not in seen
                seen.add(c)
                order.append(c)
        assert len(order) == n_nodes
        acc = [1 << r for r in range(n_nodes)]
        for r in reversed(order):          # reduce: children before their parent
            if parent[r] != -1:
                acc[parent[r]] += acc[r]
                sent[r] += share
                recv[parent[r]] += share
        have = [None] * n_nodes
        have[roots[0]] = acc[roots[0]]
        for r in order:                    # broadcast: parent before its children
            for c in tree[r][1]:
                have[c] = have[r]
                sent[r] += share
                recv[c] += share
        assert all(v == (1 << n_nodes) - 1 for v in have)
    return max(max(sent), max(recv))


@pytest.mark.parametrize("n_nodes", range(1, 34))
def test_tree_net_share_is_the_simulated_schedule(n_nodes):
    from analysis._runtime_cost import nccl_dtree, nccl_tree_net_share
    want = _simulate_tree_allreduce(nccl_dtree(n_nodes), n_nodes)
    assert nccl_tree_net_share(n_nodes) == want


def test_nccl1801_tree_timed_by_its_schedule_hand_count():
    # 3 GB200 partitions of 4, 4 NDR NICs each (49.6 GB/s payload), NCCL 2.27.3 forced tree:
    # each of the two trees is a chain over the 3 nodes, the busiest node sends 1.5 n, so
    # algBw = 4 x 49.6 / 1.5 x .92 (the tuner's tree factor); the tuner's own .5 gave 2 n
    f = topologies.build("rail:servers=3,gpus=4,chip=gb200,scaleup=nvlink5,nvls=0,nic=ib-ndr")
    n = 16 * 2**30
    r = cost(f, "all-reduce", n, algorithm="double-binary-tree", runtime="nccl@2.27.3")
    alg = n / (r.time - r.fixed)
    assert alg == pytest.approx(4 * 49.58e9 / 1.5 * 0.92, rel=0.01)


@settings(max_examples=40, deadline=None)
@given(servers=st.integers(1, 5), gpus=st.sampled_from([1, 2, 3, 4, 8]),
       chip=st.sampled_from(["h100", "gb200"]),
       release=st.sampled_from(["2.18.5", "2.21.5", "2.25.1", "2.27.3", "2.30.7"]),
       k=st.integers(10, 34))
def test_tree_schedule_time_keeps_above_the_lower_bound(servers, gpus, chip, release, k):
    if servers * gpus < 2 or (chip == "gb200" and gpus % 2):
        return   # a GB200 node holds whole superchips (2 GPUs each)
    f = topologies.build(f"rail:servers={servers},gpus={gpus},chip={chip}")
    try:
        r = cost(f, "all-reduce", 2**k, algorithm="double-binary-tree",
                 runtime=f"nccl@{release}")
    except NotApplicableError:
        return
    assert r.time >= r.lower_bound * (1 - 1e-9), (servers, gpus, chip, release, k)


@pytest.mark.parametrize("servers, share", [(2, 1.0), (3, 1.5), (4, 2.0), (5, 2.0)])
def test_nvls_tree_timed_by_its_schedule(servers, share):
    # connect.cc connectNvls: the heads form NCCL's double binary tree over the nodes (channel
    # c on tree c % 2); a node's NICs carry share x n each way, its NVLS the in-switch
    # all-reduce: the time's algBw is the smaller of the two (session 13)
    from analysis._collectives import _GroupView, _resolve_ranks
    f = topologies.build(f"rail:servers={servers},gpus=8,nvls=1,chip=h100")
    n = 2**33
    nodes, idx = _resolve_ranks(f, list(f.endpoints))
    view = _GroupView(f, "all-reduce", nodes, idx, None, None, True)
    one = cost(topologies.build("rail:servers=1,gpus=8,nvls=1,chip=h100"), "all-reduce", n,
               algorithm="in-switch", runtime="ideal")
    c = _nvls_tree_candidate(f, n, "2.26.6")
    want = min(one.algbw, 8 * view.nic_bandwidth / share)
    assert n / (c.time - c.fixed) == pytest.approx(want, rel=0.01)


@pytest.mark.parametrize("spec, link, sizes", [
    ("rail:servers=2,gpus=4,nvls=1,chip=h100", ("chip0", "nvs0"), (8, 1024, 4096)),
    ("rail:servers=4,gpus=8,nvls=1,chip=h100", ("chip5", "nvs0"), (1024, 4096, 16384))])
def test_a_failed_nvlink_never_speeds_the_timed_tree(spec, link, sizes):
    # review S13-R3 / lowlat 05:12: the schedule's algBw per channel is held at the intact
    # fabric's and the tuner's caps come after it in algBw terms, so losing a link can only
    # slow the tree (before the fix: 4 KiB 22.85 -> 20.69 us and 37.65 -> 35.39 us)
    f = topologies.build(spec)
    g = f.without(links=[link])
    for n in sizes:
        a = cost(f, "all-reduce", n, algorithm="double-binary-tree")
        b = cost(g, "all-reduce", n, algorithm="double-binary-tree")
        assert b.time >= a.time * (1 - 1e-12), (spec, n, a.time, b.time)


def test_tree_time_keeps_the_tuners_ll_cap_hand_count():
    # review s13 (test gap of the S13-R3 fix): the tree's TIME is the schedule's algBw with the
    # tuner's refinements, then the tuner's caps in algBw terms (busBw x .5). cluster-128
    # (16 H100 servers x 8, a simple TREE graph), 128 KiB, tree/LL: llMaxBw's several-node
    # x86 row (20.4 GB/s at 3+ nodes, tuning.cc llMaxBws) binds: algBw = 20.4 x .85 x .5 x
    # the size correction LL[log2i(128 KiB >> 6) = 11] = .5 = 4.335 GB/s, 30.24 us past the
    # fixed 55.2 us (without the cap the schedule alone gives ~6.9 us: 62.1 us in all)
    f = topologies.build("cluster-128")
    n = 128 * 1024
    rt = runtime("nccl@2.30.7")
    r = cost(f, "all-reduce", n, runtime="nccl@2.30.7", algorithm="double-binary-tree")
    assert r.protocol == "LL"
    want = (rt.ll_max_bw[("x86", 2)] * rt.factors["tree_simple_pattern"] * 0.5
            * rt.tree_correction["LL"][11])
    assert want == pytest.approx(4.335e9, rel=1e-12)
    # plus the network's LL store-and-forward (session 15, net_store_forward): 16 channels
    # of 8 KiB (16 KiB of lines each), two per NIC (8 NICs), 8 hops (tree depth 4 over 16
    # nodes, up and down) at one NIC's payload rate
    fill = 8 * 2 * 16384 / _view(f).nic_bandwidth
    assert fill == pytest.approx(5.276e-6, rel=1e-3)
    assert n / (r.time - r.fixed - fill) == pytest.approx(want, rel=1e-9)
    assert r.fixed == pytest.approx(55.2e-6, rel=1e-12)


def _view(f, ranks=None, op="all-reduce"):
    from analysis._collectives import _GroupView, _resolve_ranks
    nodes, idx = _resolve_ranks(f, list(f.endpoints if ranks is None else ranks))
    return _GroupView(f, op, nodes, idx, None, None, True)


def _no_ll_fill(monkeypatch):
    from analysis import _runtime_cost as rc
    monkeypatch.setattr(rc, "net_store_forward", lambda *a: 0.0)


def test_ll_network_store_forward_hand_count(monkeypatch):
    # NCCL 2.20.5 (nccl1469's release), 16 HGX H100 nodes, one 400G NIC per GPU: a 4 KiB
    # all-reduce runs tree/LL on one channel; the network proxy sends each LL step whole
    # (net.cc sendProxyProgress: every line's two flags first), so each of the 8 network
    # hops (the double binary tree over 16 nodes is 4 deep: up, then down) adds the step's
    # 4 KiB as 512 16-byte lines = 8 KiB at one NIC's payload rate
    f = topologies.build("rail:servers=16,gpus=8,nvls=1,chip=h100")
    a = cost(f, "all-reduce", 4096, runtime="nccl@2.20.5")
    assert (a.algorithm, a.protocol, a.channels) == ("double-binary-tree", "LL", 1)
    hop = 8192 / _view(f).nic_bandwidth
    assert hop == pytest.approx(0.165e-6, rel=1e-2)
    _no_ll_fill(monkeypatch)
    b = cost(f, "all-reduce", 4096, runtime="nccl@2.20.5")
    assert a.time - b.time == pytest.approx(8 * hop, rel=1e-9)
    # the time only: the tuner's choice, its channels and the fixed part are NCCL's own
    assert (b.algorithm, b.protocol, b.channels, b.fixed) == (
        a.algorithm, a.protocol, a.channels, a.fixed)


def test_tree_ll128_and_simple_network_store_forward_hand_count(monkeypatch):
    # session 16: net.cc sends LL128 and Simple steps whole too (the proxy isends a step once
    # the GPU posts its tail, after the whole step: prims_ll128.h postSend, prims_simple.h).
    # cluster-128 (16 H100 nodes x 8, a 400G NIC per GPU), 2.30.7, the tree over 16 nodes is 4
    # deep: 8 network hops in series (up, then down), 16 channels, two per NIC
    f = topologies.build("cluster-128")
    nic = _view(f).nic_bandwidth
    # 1 GiB tree/Simple: a step of 512 KiB (DEFAULT_BUFFSIZE 4 MiB / NCCL_STEPS 8)
    a = cost(f, "all-reduce", 2**30, runtime="nccl@2.30.7", algorithm="double-binary-tree")
    # 1 MiB tree/LL128: the busiest channel's 64 KiB; calcCollChunking (from 2.22 per channel
    # part: 65536 B, one channel; nsteps 1 + 4 + 0.8 = 5.8, ppn 8) halves the 576,000 B chunk
    # to 72,000 (64 x 5.8 / 8 = 46.4 > 0) and then to 18,000 (16 x 5.8 / 8 = 11.6 > 3), sent
    # as 10 warp slices of 2048 B
    b = cost(f, "all-reduce", 2**20, runtime="nccl@2.30.7", algorithm="double-binary-tree")
    assert (a.protocol, a.channels, b.protocol, b.channels) == ("Simple", 16, "LL128", 16)
    _no_ll_fill(monkeypatch)
    a0 = cost(f, "all-reduce", 2**30, runtime="nccl@2.30.7", algorithm="double-binary-tree")
    b0 = cost(f, "all-reduce", 2**20, runtime="nccl@2.30.7", algorithm="double-binary-tree")
    assert a.time - a0.time == pytest.approx(8 * 524288 * 2 / nic, rel=1e-9)
    assert a.time - a0.time == pytest.approx(168.8e-6, rel=1e-3)
    assert b.time - b0.time == pytest.approx(8 * 10 * 2048 * 2 / nic, rel=1e-9)
    # the time only: the choice, the channels and the fixed part are NCCL's own
    for x, y in ((a, a0), (b, b0)):
        assert (x.algorithm, x.protocol, x.channels, x.fixed) == (
            y.algorithm, y.protocol, y.channels, y.fixed)


def test_simple_network_step_on_an_arm_host_in_2_18(monkeypatch):
    # NCCL 2.18's init.cc gives an Arm host a 1 MiB Simple buffer (DEFAULT_BUFFSIZE_ARM), a
    # 128 KiB step; from 2.19 every host 4 MiB, a 512 KiB step. Two GB200 trays (a Grace host:
    # Arm) of 4 GPUs, 4 NICs each: the tree over 2 nodes is 1 deep, 2 hops
    f = topologies.build("rail:servers=2,gpus=4,chip=gb200")
    nic = _view(f).nic_bandwidth
    got = {}
    for rel in ("2.18.5", "2.19.3"):
        r = cost(f, "all-reduce", 2**30, runtime=f"nccl@{rel}", algorithm="double-binary-tree")
        assert r.protocol == "Simple"
        got[rel] = r
    with monkeypatch.context() as m:
        _no_ll_fill(m)
        base = {rel: cost(f, "all-reduce", 2**30, runtime=f"nccl@{rel}",
                          algorithm="double-binary-tree") for rel in got}
    for rel, step in (("2.18.5", 131072), ("2.19.3", 524288)):
        per_nic = math.ceil(got[rel].channels / 4)
        assert got[rel].time - base[rel].time == pytest.approx(2 * step * per_nic / nic,
                                                               rel=1e-9), rel


def test_ll_network_fill_never_falls_where_the_busiest_channel_rises():
    # report / lead 10:33 (main red at 977b26d): rail 2 x 4 H100, 2.22.3, 8-rank ring/LL,
    # 157176 -> 161312 B: the cell split carries 5 then 4 channels while the busiest
    # channel's bytes rise 39296 -> 40336; the fill shared by the CARRYING channels per NIC
    # fell (5 on 4 NICs -> 4) and with it the time (40.05 -> 39.58 us). Shared by the
    # channels NCCL picks for the size (4 at both), the time rises with the busiest channel
    from analysis import _runtime_cost as rc
    f = topologies.build("rail:servers=2,gpus=4,chip=h100")
    view = _view(f)
    rt = runtime("nccl@2.22.3")

    def ring_ll(n):
        return next(c for c in rc.nccl_candidates(rt, view, "all-reduce", n, "auto", 1)[0]
                    if (c.library, c.protocol) == ("ring", "LL"))

    a, b = ring_ll(157176), ring_ll(161312)
    assert (a.channels, b.channels) == (5, 4)
    assert b.time > a.time


def _ring_net_hops_brute(op, sizes):
    # walk every chunk's path on the ring of nodes' rank chains, node by node
    ring = [k for k, s in enumerate(sizes) for _ in range(s)]
    p = len(ring)
    steps = 2 * (p - 1) if op == "all-reduce" else p - 1
    return max(sum(ring[(r + i) % p] != ring[(r + i + 1) % p] for i in range(steps))
               for r in range(p))


def _tree_depth_brute(tree):
    # breadth first from the root down the children lists
    root = next(r for r, (up, _ds) in enumerate(tree) if up == -1)
    depth, level, seen = 0, [root], {root}
    while True:
        nxt = [d for r in level for d in tree[r][1]]
        assert not seen & set(nxt)
        if not nxt:
            break
        seen |= set(nxt)
        depth, level = depth + 1, nxt
    assert seen == set(range(len(tree)))
    return depth


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(1, 9), min_size=1, max_size=12),
       st.sampled_from(("all-reduce", "all-gather", "reduce-scatter", "broadcast")))
def test_ring_net_hops_brute_force(sizes, op):
    from analysis._runtime_cost import nccl_ring_net_hops
    want = _ring_net_hops_brute(op, sizes) if len(sizes) > 1 else 0
    assert nccl_ring_net_hops(op, tuple(sizes)) == want


@pytest.mark.parametrize("n_nodes", range(1, 40))
def test_tree_net_depth_brute_force(n_nodes):
    from analysis._runtime_cost import nccl_dtree, nccl_tree_net_depth
    want = max(_tree_depth_brute(t) for t in nccl_dtree(n_nodes)) if n_nodes > 1 else 0
    assert nccl_tree_net_depth(n_nodes) == want


def _nvls_tree_chunk_brute(release, nodes, channels, heads, n):
    # NCCL's calcCollChunking lines for NVLS_TREE on Hopper: 2.18-2.21 from the 512 KiB Simple
    # step (DEFAULT_BUFFSIZE 4 MiB / NCCL_STEPS), 2.22 on NCCL_NVLS_CHUNKSIZE 128 KiB; from 2.20
    # at most 64 KiB on 4+ nodes; then 256 / 128 / 64 / 32 KiB below 32 / 16 / 4 / 1 x
    # channels x heads x chunk
    v = tuple(map(int, release.split(".")))
    chunk = 131072 if v >= (2, 22) else 524288
    if v >= (2, 20) and nodes >= 4:
        chunk = min(chunk, 65536)
    ops = channels * heads
    if n < 32 * ops * chunk and chunk > 262144:
        chunk = 262144
    if n < 16 * ops * chunk and chunk > 131072:
        chunk = 131072
    if n < 4 * ops * chunk and chunk > 65536:
        chunk = 65536
    if n < 1 * ops * chunk and chunk > 32768:
        chunk = 32768
    return chunk


def _tree_ll128_chunk_brute(release, nodes, ranks, n, channels, data):
    # NCCL's calcCollChunking lines for the tree in LL128: 120 x 640 words of 8 B a step, 15 of
    # every 16 data; halve while bytes / (channels x chunk) < nsteps x 64 / ppn and > 131072,
    # then x 16 and > 32768; from 2.22 called per channel part (its bytes, one channel)
    chunk = 120 * 640 * 8 // 16 * 15
    ppn = ranks / nodes
    nsteps = 1 + (nodes.bit_length() - 1) + 0.1 * ppn
    nbytes, nch = (data, 1) if tuple(map(int, release.split("."))) >= (2, 22) else (n, channels)
    for lim, floor in ((64, 131072), (16, 32768)):
        while nbytes // (nch * chunk) < nsteps * lim / ppn and chunk > floor:
            chunk //= 2
    return chunk


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 5), st.sampled_from((1, 2, 4, 8)),
       st.sampled_from(("2.18.3", "2.20.5", "2.23.4", "2.27.3", "2.30.7")),
       st.integers(3, 22), st.sampled_from(("all-reduce", "all-gather")),
       st.booleans())
def test_ll_network_store_forward_brute_force(servers, gpus, release, log2n, op, degrade):
    # every LL ring / tree candidate across nodes pays, per network hop in series (walked on
    # the ring, or down the trees), its busiest channel's step (at most 32 KiB of data) as
    # 16-byte lines of 8 data bytes, times the picked channels per NIC, at one NIC's
    # payload rate; so do LL128 (the step: the ring's 576,000 B chunk, the tree's by
    # calcCollChunking's lines, as warp slices of 2048 B per 1920 B) and Simple (the tree's
    # 512 KiB step; the ring's first slice of its step, prims_simple.h) candidates (session
    # 16); one-node groups pay nothing; degraded fabrics alike
    from analysis import _runtime_cost as rc
    if servers * gpus < 2:
        return
    f = topologies.build(f"rail:servers={servers},gpus={gpus},nvls=1,chip=h100")
    if degrade and gpus > 1:     # chip1 off the NVLink switch: it reaches its peers by NIC
        f = f.without(links=[("chip1", "nvs0")])
    rt = runtime(f"nccl@{release}")
    n = 1 << log2n
    view = _view(f, op=op)
    if op == "all-gather":
        n -= n % view.p or 0
        n = max(n, view.p)
    got, _why = rc.nccl_candidates(rt, view, op, n, "auto", 1)
    saved = rc.net_store_forward
    try:
        rc.net_store_forward = lambda *a: 0.0
        base, _why = rc.nccl_candidates(rt, view, op, n, "auto", 1)
    finally:
        rc.net_store_forward = saved
    base = {(c.library, c.protocol): c for c in base}
    sizes = [int(k) for k in view.node_ranks()]
    nics = max(1, min(view.nics_per_node, math.ceil(view.ppn)))
    for c in got:
        b = base[(c.library, c.protocol)]
        assert (c.choice, c.fixed, c.channels) == (b.choice, b.fixed, b.channels)
        if c.library == "nvls-tree" and view.n_nodes > 1:
            # session 17: NVLS-tree's heads send each chunk whole up the tree and down
            # (all_reduce.h NVLS_TREE in ProtoSimple<1, 1>; net.cc), 2 x depth hops, every
            # NVLS channel's heads on the node's NICs; per hop the faster of the chunk's write
            # and its send (tests/test_runtime_store_forward.py)
            hops = 2 * max(_tree_depth_brute(t) for t in rc.nccl_dtree(view.n_nodes))
            heads = c.channels
            chunk = _nvls_tree_chunk_brute(release, view.n_nodes, 16, heads, n)
            if release.startswith(("2.18.", "2.19.")):
                # 2.18-2.19 split inside the kernel (session 18): in every loop of the 16
                # channels, channel k takes the k-th block of heads x chunk bytes
                block, per = heads * chunk, [0] * 16
                for start in range(0, n, 16 * block):
                    for k in range(16):
                        lo = start + k * block
                        per[k] += max(0, min(n, lo + block) - lo)
                busiest = max(per)
            else:
                busiest, _carrying = rc.nccl_channel_split(rt, "all-reduce", "Simple", n,
                                                           view.p, 16, 16)
            wire = min(chunk, 16 * math.ceil(math.ceil(busiest / heads) / 16))
            send = wire * math.ceil(16 * heads / nics) / view.nic_bandwidth
            # the heads' write of every channel's chunk at the node's in-switch rate
            write = 16 * heads * wire * view.node_transfer("in-switch", "all-reduce")[0].per_byte
            want = hops * min(send, write)
            assert want > 0
            assert c.time - b.time == pytest.approx(want, rel=1e-9, abs=1e-15), (c, want)
            continue
        if view.n_nodes == 1 or c.library not in ("ring", "tree"):
            assert c.time == b.time
            continue
        if c.library == "ring":
            hops = _ring_net_hops_brute(op, sizes)
        else:
            hops = 2 * max(_tree_depth_brute(t) for t in rc.nccl_dtree(view.n_nodes))
        proto = c.protocol
        picked = rc._channels_used(rt, proto, rc.comm_channels(rt, view), n,
                                   view.p if (c.library, proto) == ("ring", "LL") else 1)
        busiest, _carrying = rc.nccl_channel_split(
            rt, op if c.library == "ring" else "all-reduce", proto, n, view.p, picked,
            rc.comm_channels(rt, view))
        data = math.ceil(busiest / view.p) if (c.library, op) == ("ring", "all-reduce") else (
            math.ceil(busiest))
        if proto == "LL":
            wire = 16 * math.ceil(min(32768, data) / 8)
        elif proto == "LL128":
            chunk = 576000 if c.library == "ring" else _tree_ll128_chunk_brute(
                release, view.n_nodes, view.p, n, picked, data)
            wire = 2048 * math.ceil(min(chunk, data) / 1920)
        elif c.library == "tree":
            wire = min(524288, data)
        else:   # the ring's chunk of 4 steps in slices of 2 (all-reduce, all-gather)
            d = min(data, 4 * 524288)
            wire = min(d, max(16 * math.ceil(d / 32), 2 * 524288 // 32))
        want = hops * wire * math.ceil(picked / nics) / view.nic_bandwidth
        assert want > 0
        assert c.time - b.time == pytest.approx(want, rel=1e-9, abs=1e-15), (c, want)


_TREE_STAGE_FABRICS = ("dgx-h100", "hgx-b200", "rail:servers=2,gpus=4,chip=h100",
                       "rail:servers=3,gpus=4,nvls=1,chip=gb200", "cluster-128", "torus:4x4")


@settings(max_examples=60, deadline=None)
@given(spec=st.sampled_from(_TREE_STAGE_FABRICS), release=st.sampled_from(sorted(NCCL_RELEASE_DATES)),
       proto=st.sampled_from(["LL", "LL128", "Simple"]),
       B=st.floats(1e6, 1e14), nc=st.floats(0.25, 64.0))
def test_tree_busbw_is_the_factors_then_the_caps(spec, release, proto, B, nc):
    # one list of the tuner's tree refinements (_tree_stages): the bus bandwidth is the basis
    # times the factors, capped: _tree_busbw(B) = min(B x _tree_factor, _tree_busbw(inf));
    # brute force: NCCL's lines (tuning.cc ncclTopoTuneModel), transliterated here
    from analysis._collectives import _GroupView, _resolve_ranks
    from analysis._runtime_cost import _nodes_index, _tree_busbw, _tree_factor
    f = _tree_basis_fabric(spec)
    rt = runtime(f"nccl@{release}")
    nodes, idx = _resolve_ranks(f, list(f.endpoints))
    view = _GroupView(f, "all-reduce", nodes, idx, None, None, True)
    got = _tree_busbw(rt, view, proto, B, nc)
    assert got == pytest.approx(min(B * _tree_factor(rt, view, proto),
                                    _tree_busbw(rt, view, proto, math.inf, nc)), rel=1e-12)
    k = (view.arch, _nodes_index(view.n_nodes))
    fac = rt.factors
    bw = min(B * 0.92, nc * rt.tree_bw[k])
    if proto == "LL":
        bw = min(bw / 3.8, rt.ll_max_bw[k if view.n_nodes == 1 else ("x86", k[1])])
    elif proto == "LL128":
        bw = min(bw * (7 / 9 if view.n_nodes == 1 else 120 / 128), nc * rt.tree_ll128_bw[k])
    if view.simple_tree:
        bw *= fac["tree_simple_pattern"]   # .85 from 2.26.2, 1 before
    assert fac["tree_simple_pattern"] in (0.85, 1.0)
    assert (fac["tree_allreduce"], fac["tree_ll"], fac["tree_ll128_one_node"],
            fac["tree_ll128_nodes"]) == (0.92, 1 / 3.8, 7 / 9, 120 / 128)
    assert got == pytest.approx(bw, rel=1e-12)


def test_nvls_tree_network_store_forward_hand_count(monkeypatch):
    # session 17: NVLS-tree's heads send each chunk whole over the network (all_reduce.h
    # NVLS_TREE runs ProtoSimple<1, 1>: one chunk a step; net.cc sendProxyProgress waits for the
    # GPU's tail), one send per network hop up the heads' tree and down, at one NIC's payload
    # rate shared by every NVLS channel's head on it, unless the heads' write of the chunks
    # through the node's switch is faster (then that: the faster of write and send per hop).
    # Two HGX H100 nodes (8 heads, 8 NICs, 16 multi-node NVLS channels) at 8 GiB, NCCL 2.26.6:
    # a 128 KiB chunk (NCCL_NVLS_CHUNKSIZE), 2 hops, 16 chunks per NIC (42.2 us a send; the
    # write of 16 x 8 chunks at the node's 280 GB/s in-switch all-reduce takes 59.9 us); four
    # nodes at 2.21.5: 64 KiB (the 4-node cap), 4 hops; two nodes at 2.19.4: the 512 KiB
    # Simple step, no cap. Two GB200 trays at 2.30.7 (ncclNvlsTreeSm100Tuning: 32 channels,
    # 256 KiB): the write, 32 x 4 chunks at the tray's 252 GB/s (133.1 us), beats the send of
    # 32 chunks (168.8 us)
    from analysis import _runtime_cost as rc
    n = 8 * 2**30
    got = {}
    for chip, servers, gpus, release in (("h100", 2, 8, "2.26.6"), ("h100", 4, 8, "2.21.5"),
                                         ("h100", 2, 8, "2.19.4"), ("gb200", 2, 4, "2.30.7")):
        f = topologies.build(f"rail:servers={servers},gpus={gpus},nvls=1,chip={chip}")
        c = _nvls_tree_candidate(f, n, release)
        with monkeypatch.context() as m:
            m.setattr(rc, "nvls_tree_net_fill", lambda *a: 0.0)
            c0 = _nvls_tree_candidate(f, n, release)
        assert (c.choice, c.fixed, c.channels) == (c0.choice, c0.fixed, c0.channels) == (
            c.choice, c.fixed, gpus)
        got[release] = c.time - c0.time
        nic = _view(f).nic_bandwidth
        switch = 1 / _view(f).node_transfer("in-switch", "all-reduce")[0].per_byte
    assert got["2.26.6"] == pytest.approx(2 * 131072 * 16 / nic, rel=1e-9)
    assert got["2.21.5"] == pytest.approx(4 * 65536 * 16 / nic, rel=1e-9)
    assert got["2.19.4"] == pytest.approx(2 * 524288 * 16 / nic, rel=1e-9)
    assert switch == pytest.approx(252.144e9, rel=1e-6)
    assert got["2.30.7"] == pytest.approx(2 * 32 * 4 * 262144 / switch, rel=1e-9)
    assert 32 * 4 * 262144 / switch < 262144 * 32 / nic


@pytest.mark.parametrize("spec, release, want", [
    # nvls.cc ncclNvlsTreeSm100Tuning (v2.30.3-1 .. v2.30.7-1): 2 nodes, NIC >= 48 GB/s: 32
    # channels, cap 128 KiB; <= 4 GPUs a node: chunk and cap 256 KiB; <= 8 GPUs behind a PCIe
    # switch with a NIC under 96 GB/s: cap 64 KiB. More nodes, NIC 48-96 GB/s: 24 channels, cap
    # 64 KiB behind a PCIe switch (128 KiB on a Grace host, whose NICs hang off the CPU)
    ("rail:servers=2,gpus=4,nvls=1,chip=gb200", "2.30.7", (32, 262144)),
    ("rail:servers=2,gpus=8,nvls=1,chip=b200", "2.30.7", (32, 65536)),
    ("rail:servers=4,gpus=8,nvls=1,chip=b200", "2.30.7", (24, 65536)),
    ("rail:servers=3,gpus=4,nvls=1,chip=gb200", "2.30.7", (24, 131072)),
    # before 2.30: NVLS_NCHANNELS_SM100 32 across nodes, NCCL_NVLS_CHUNKSIZE 128 KiB
    ("rail:servers=2,gpus=4,nvls=1,chip=gb200", "2.29.7", (32, 131072)),
    ("rail:servers=4,gpus=8,nvls=1,chip=b200", "2.29.7", (32, 65536)),
    # Hopper: never tuned
    ("rail:servers=2,gpus=8,nvls=1,chip=h100", "2.30.7", (16, 131072))])
def test_nvls_tree_chunking_of_blackwell_across_nodes_from_2_30(spec, release, want):
    from analysis._runtime_cost import nvls_tree_chunking
    f = topologies.build(spec)
    v = _view(f)
    heads = min(int(v.ppn), v.nics_per_node)
    assert nvls_tree_chunking(runtime(f"nccl@{release}"), v, 8 * 2**30, heads) == want


def test_nccl_time_falls_at_a_protocol_switch_the_tuner_makes_blind_to_the_ll_fill():
    # session 15 (lead): the tuner does not see the network's store-and-forward, so it keeps
    # an algorithm up to a size whose time carries the fill and then switches: the picked time
    # falls with size there, while each candidate's own time does not. Session 16: every
    # protocol's step goes whole, so session 15's example (rail 2 x 4 broadcast, ring/LL ->
    # ring/LL128) no longer falls; session 17: NVLS-tree's chunks go whole too, so session 16's
    # (cluster-128 tree/LL128 -> NVLS-tree at 39.9 / 47.5 MB) no longer falls either. The tree
    # does, one byte past where the tuner leaves LL (its step's 16-byte lines, 8 hops) for LL128
    # (session 20: LL128's cap on the NET ring graph's 8 channels, not comm's 16, moves the
    # switch from 202,061 B to 207,226 B)
    f = topologies.build("cluster-128")
    a = cost(f, "all-reduce", 207225)
    b = cost(f, "all-reduce", 207226)
    assert (a.algorithm, a.protocol) == ("double-binary-tree", "LL")
    assert (b.algorithm, b.protocol) == ("double-binary-tree", "LL128")
    assert b.time < a.time
    assert round(a.time * 1e6, 2) == 113.56 and round(b.time * 1e6, 2) == 108.65
    ta, tb = dict(a.candidates), dict(b.candidates)
    assert ta.keys() == tb.keys()
    for label, t in ta.items():
        assert tb[label] >= t * (1 - 1e-12), label
    # the tuner's pick at the smaller size is not its fastest candidate: it is blind to the fill
    assert min(ta.values()) < a.time
    # and the NVLS-tree points of session 16's example now carry their own fill (8 hops of 16
    # x 64 KiB per NIC at 49.68 GB/s, 168.8 us) and, since session 18, run at their busiest
    # channel's bytes: 2.30.7's cells put 182 of 2897 16-KiB cells on the first of 16 channels
    # (2,981,888 B against a mean of 2,965,820), 599.8 -> 601.1 us
    c = cost(f, "all-reduce", 47453120)
    assert (c.algorithm, round(c.time * 1e6, 1)) == ("hierarchical", 601.1)


def test_ring_channels_rise_to_nvls_only_in_2_20_to_2_27():
    # connect.cc ncclTopoPostset raises the ring channels to the NVLS channels ('if
    # (comm->nChannels < comm->nvlsChannels) copyChannels') at v2.20.3-1 .. v2.27.7-1 only:
    # absent in 2.18-2.19, removed in 2.28.3 ('Decreased max CTA count from 32 to 16 on
    # Blackwell'). An HGX H100 whose chip0 lost its NVLinks to two of the four NVSwitches
    # (9 of 18 lanes): the ring search gives 12 channels, NVLS runs 16
    f = topologies.build("dgx-h100")
    sw = sorted(f.graph["chip0"])[:2]
    g = f.without(links=[("chip0", s) for s in sw])
    got = {rel: cost(g, "all-reduce", 2**20, runtime=f"nccl@{rel}", algorithm="ring").channels
           for rel in ("2.19.4", "2.20.3", "2.27.7", "2.28.3", "2.30.7")}
    assert got == {"2.19.4": 12, "2.20.3": 16, "2.27.7": 16, "2.28.3": 12, "2.30.7": 12}
    # NVLS needs 3 GPUs in the node before 2.28.7 (nvls.cc): two ranks are not raised
    two = cost(g, "all-reduce", 2**20, ranks=["chip0", "chip1"], runtime="nccl@2.21.5",
               algorithm="ring")
    assert two.channels < 16


def test_multi_node_ring_channels_rise_to_nvls_in_2_20_to_2_27():
    # across nodes too: connect.cc raises the ring's channels to NVLS's (2.20.3-2.27.7), and a
    # multi-node Blackwell communicator runs NVLS_NCHANNELS_SM100 32 from 2.25 (nvls.cc): two
    # GB200 trays with NVLS on (4 NICs: the ring search gives 16) ran 32 channels in 2.25-2.27
    # and 16 again from 2.28.3 (its release notes: 'Decreased max CTA count from 32 to 16 on
    # Blackwell'); NVLS off (nvls=0), or two GPUs per node before 2.28.7, raises nothing
    def channels(spec, rel):
        f = topologies.build(spec)
        return cost(f, "all-reduce", 2**26, runtime=f"nccl@{rel}", algorithm="ring").channels

    rels = ("2.21.5", "2.25.1", "2.27.3", "2.28.3", "2.30.7")
    on = {r: channels("rail:servers=2,gpus=4,nvls=1,chip=gb200", r) for r in rels}
    assert on == {"2.21.5": 16, "2.25.1": 32, "2.27.3": 32, "2.28.3": 16, "2.30.7": 16}
    off = {r: channels("rail:servers=2,gpus=4,nvls=0,chip=gb200", r) for r in rels}
    assert set(off.values()) == {16}
    assert channels("rail:servers=2,gpus=2,nvls=1,chip=gb200", "2.25.1") < 32


def test_degraded_fabric_examples_in_cost_docstring():
    # audit 16:09 (session 17): the two ways a failure can make NCCL faster that cost()'s
    # Returns names, pinned so the text cannot go stale. (1) fewer channels: ring/LL at the
    # tuner's llMaxBw cap whatever the channels, its network fill shared by fewer per NIC
    f = topologies.build("rail:servers=2,gpus=8,chip=h100,nvls=1")
    g = f.without(lanes=[("chip0", "nvs0")] * 3)
    a = cost(f, "all-gather", 16 * 2**20, runtime="nccl@2.19.4")
    b = cost(g, "all-gather", 16 * 2**20, runtime="nccl@2.19.4")
    assert (a.channels, b.channels) == (32, 16)
    ll_a, ll_b = dict(a.candidates)["ring/LL"], dict(b.candidates)["ring/LL"]
    assert (round(ll_a * 1e6, 1), round(ll_b * 1e6, 1)) == (437.2, 431.9)
    assert (a.protocol, b.protocol) == ("LL128", "LL128") and b.time > a.time
    # (2) the pick moves to a candidate the tuner had passed over
    # (session 19: the tuner chooses at its graphs' speeds, so the example moved)
    f = topologies.build("hgx-b200")
    g = f.without(lanes=[("chip0", "sw0")] * 4)
    ranks = f.endpoints[:4]
    a = cost(f, "all-reduce", 4 * 2**20, runtime="nccl@2.18.5", ranks=ranks)
    b = cost(g, "all-reduce", 4 * 2**20, runtime="nccl@2.18.5", ranks=ranks)
    assert (a.algorithm, b.algorithm, b.protocol) == ("in-switch", "ring", "LL128")
    assert (round(a.time * 1e6, 2), round(b.time * 1e6, 2)) == (42.63, 42.45)
    assert round(dict(a.candidates)["ring/LL128"] * 1e6, 2) == 34.87
