"""NCCL's tuner chooses NVLS (and the ring and tree it is compared with) at its own graph
speeds, per release (session 19): the NVLS graph search (src/graph/search.cc ncclTopoCompute,
ncclTopoSearchTryNvls) and the tuner's NVLS bandwidth (src/graph/tuning.cc ncclTopoTuneModel)
re-implemented here from the released code, tag by tag, independently of the profiles' factors;
the time stays at the fabric's rate."""

import pytest
from degrade import built
from hypothesis import given, settings
from hypothesis import strategies as st

import topologies
from analysis import _runtime_cost as rc
from analysis import cost
from fabric import NCCL_RELEASE_DATES, runtime

RELEASES = sorted(NCCL_RELEASE_DATES, key=lambda v: tuple(map(int, v.split("."))))


def _v(release):
    return tuple(map(int, release.split(".")))


def _sub_round(a, b):
    # search.cc SUB_ROUND: the link's remaining GB/s rounded to 1e-3 after each charge
    return round((a - b) * 1000) / 1000


def charge_nvls_channel(down, up, head, speed):
    """ncclTopoSearchTryNvls for one channel: every GPU's link from the switch (``down``),
    then to it (``up``), is charged the speed, twice for the ``head`` GPU (GB/s, SUB_ROUND);
    False, with the links charged so far, where one does not carry it."""
    for link in (down, up):
        for d in range(len(link)):
            charge = speed * (2 if d == head else 1)
            if link[d] < charge:
                return False
            link[d] = _sub_round(link[d], charge)
    return True


def _nvls_fits(lanes_gbs, gpus, heads, speed):
    """ncclTopoSearchTryNvls channel by channel: channel c's head is GPU c (GB/s)."""
    down = [lanes_gbs] * gpus
    up = [lanes_gbs] * gpus
    return all(charge_nvls_channel(down, up, c, speed) for c in range(heads))


def brute_nvls_graph(release, arch, lanes, gpus):
    """(heads, bwIntra, bwInter) in GB/s, following ncclTopoCompute's control flow for the NVLS
    pattern in one node (no NET nodes): the start index, pass 1 going down, pass 2."""
    v = _v(release)
    rt = runtime(f"nccl@{release}")
    speeds = [s / 1e9 for s in rt.search[("intra_speeds", arch)]]
    link = lanes * rt.search[("nvlink_bw", arch)] / 1e9
    heads = min(32, gpus) if v >= (2, 25, 1) else gpus
    total = link * gpus / (gpus - 1)          # not a ring: totalBw x ngpus / (ngpus - 1)
    i = 0
    while i < len(speeds) - 1 and (speeds[i] > link or speeds[i] * heads > total):
        i += 1
    # pass 1: a solution needs every channel (minChannels = maxChannels); go down until one
    while not _nvls_fits(link, gpus, heads, speeds[i]):
        if i == len(speeds) - 1:
            return heads, 0.0, 0.0
        i += 1
    g = [speeds[i], speeds[i]]                # the saved graph's bwIntra, bwInter
    t = [speeds[i], speeds[i]]                # the graph being searched

    def search():
        # a full graph at t's bwIntra (bwInter is not charged in one node); ncclTopoCompare-
        # Graphs keeps it for NVLS only when nChannels x bwInter grows, copying it whole
        if _nvls_fits(link, gpus, heads, t[0]) and t[1] > g[1]:
            g[:] = t

    # pass 2: from 2.19.1 NVLS raises bwInter alone while below 2 x bwIntra (2.19.1: its pass
    # 3, v2.19.1-1 search.cc l.973-980; its pass 2 skips NVLS); in 2.18 pass 2 raises bwIntra
    # of every pattern but the ring while below 2 x bwInter (v2.18.5-1 l.962-969)
    while i > 0:
        if v >= (2, 19, 0) and t[1] == g[1] and t[1] < 2 * t[0]:
            i -= 1
            t[1] = speeds[i]
            search()
        elif t[0] == g[0] and t[0] < 2 * t[1]:
            i -= 1
            t[0] = speeds[i]
            search()
        else:
            break
    return heads, g[0], g[1]


def brute_nvls_alg_bw(release, arch, lanes, gpus, op):
    """The tuner's NVLS algBw (GB/s) for a one-node group of ``gpus`` ranks, tag by tag."""
    v = _v(release)
    heads, intra, inter = brute_nvls_graph(release, arch, lanes, gpus)
    if intra == 0:
        return 0.0
    ppn, p = float(gpus), gpus
    ar = op == "all-reduce"
    if v >= (2, 28, 3):
        eff = {"hopper": 0.85, "blackwell": 0.74}[arch]
        bw = intra * eff * (heads - 1) / heads * (2.0 if ar else (ppn - 1) / ppn)
        bw = min(bw, inter)
        return heads * bw * (p / (2 * (p - 1)) if ar else 1.0)
    if v < (2, 19, 0):
        assert ar                              # 2.18: NVLS all-reduce only
        return heads * intra * 5 / 6
    if ar:
        return heads * min(intra, inter) * 5 / 6
    if v >= (2, 27, 3):
        bw = min(intra * (ppn - 1) / ppn, inter * 0.9)
    else:
        bw = min(intra, inter)
    return heads * bw * (5 / 6 if v < (2, 23, 4) else 1.0)


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(RELEASES), st.sampled_from(["hopper", "blackwell"]),
       st.integers(1, 18), st.integers(2, 72))
def test_nvls_graph_is_nccls_search_brute_force(release, arch, lanes, gpus):
    heads, intra, inter = rc.nccl_nvls_graph(runtime(f"nccl@{release}"), arch, lanes, gpus)
    want = brute_nvls_graph(release, arch, lanes, gpus)
    assert (heads, intra / 1e9, inter / 1e9) == pytest.approx(want, rel=1e-12)


def test_nvls_tuner_bandwidth_hand_count():
    # session 18's reading: NCCL's tuner busBw for one-node NVLS
    # all-reduce at 2.30.7: 8 H100 8 x min(2 x .85 x 40 x 7/8, 60) = 476; 8 B200
    # 8 x min(2 x .74 x 80 x 7/8, 90) = 720; 4 Blackwell 4 x min(99.9, 90) = 360; 72 GB200
    # (32 heads) 32 x min(2 x .74 x 20 x 31/32, 40) = 917.6 GB/s; 2.18.5 on 8 H100 (20.0 GB/s
    # NVLinks, no efficiency): 8 x 40 x 5/6 = 266.7 GB/s algBw
    rt = runtime("nccl")

    def bus(spec, ranks, release="2.30.7"):
        f = topologies.build(spec)
        view = _view(f, f.endpoints[:ranks])
        alg = rc.nccl_nvls_tuner_bw(runtime(f"nccl@{release}"), view, "all-reduce")
        return alg * 2 * (ranks - 1) / ranks / 1e9

    assert bus("dgx-h100", 8) == pytest.approx(476.0, rel=1e-6)
    assert bus("hgx-b200", 8) == pytest.approx(720.0, rel=1e-6)
    assert bus("gb200-nvl72", 4) == pytest.approx(360.0, rel=1e-6)
    assert bus("gb200-nvl72", 72) == pytest.approx(917.6, rel=1e-4)
    assert bus("dgx-h100", 8, "2.18.5") * 8 / 14 == pytest.approx(266.67, rel=1e-4)
    assert rt.factors["nvls_tuner_efficiency"] == 1


def _view(f, ranks):
    from analysis._collectives import _GroupView, _resolve_ranks
    nodes, idx = _resolve_ranks(f, list(ranks))
    return _GroupView(f, "all-reduce", nodes, idx, None, None, True)


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(["dgx-h100", "hgx-h800", "hgx-b200", "nvl72"]), st.integers(2, 8),
       st.sampled_from(["all-reduce", "all-gather", "reduce-scatter"]),
       st.sampled_from(RELEASES), st.integers(10, 33))
def test_nvls_choice_is_nccls_tuner_comparison_brute_force(spec, ranks, op, release, log_n):
    # the tuner's comparison re-done by hand: NVLS at lat + n / algBw with algBw from the
    # brute-force graph and tuning.cc's formula of the release; the ring (and the tree, on
    # the ring's graph) at its ring graph's nChannels x bwIntra; the pick is the least choice
    from analysis._collectives import _GroupView, _resolve_ranks
    f = built(spec)
    rt = runtime(f"nccl@{release}")
    nodes, idx = _resolve_ranks(f, list(f.endpoints[:ranks]))
    view = _GroupView(f, op, nodes, idx, None, None, True)
    n = float(2**log_n)
    tried, _why = rc.nccl_candidates(rt, view, op, n, "auto", 1)
    by = {(c.library, c.protocol): c for c in tried}
    lanes = view.lanes
    nvls = by.get(("nvls", "Simple"))
    if nvls is not None:
        alg = brute_nvls_alg_bw(release, view.arch, lanes, ranks, op) * 1e9
        assert nvls.choice - nvls.tuner_fixed == pytest.approx(n / alg, rel=1e-9)
    g_n, g_bw = rc.nccl_switch_ring_graph(rt, lanes, view.arch)
    ring = by[("ring", "Simple")]
    nsteps = 2 * (ranks - 1) if op == "all-reduce" else ranks - 1
    assert ring.choice - ring.tuner_fixed == pytest.approx(n / (g_n * g_bw * ranks / nsteps),
                                                     rel=1e-9)
    r = cost(f, op, n, runtime=f"nccl@{release}", ranks=f.endpoints[:ranks])
    best = min(tried, key=lambda c: (c.choice, c.time))
    assert (r.algorithm, r.protocol) == (best.schedule, best.protocol)


def test_four_h100_choose_the_ring_as_nccls_tuner_does():
    # 4 of a DGX H100's GPUs, all-reduce: the NVLS graph has 4 heads at the top speed,
    # 60 GB/s (5 x 60 <= 18 x 20.6), so the tuner's NVLS is 4 x min(2 x .85 x 60 x 3/4, 60) =
    # 240 GB/s busBw, 160 algBw at 2.30.7 (4 x 60 x 5/6 = 200 algBw at 2.25.1), against the
    # ring graph's 12 x 30 = 360 GB/s busBw, 240 algBw: NCCL runs the ring (the model chose
    # NVLS, at its continuous 2 x 370.8 x .85 x 3/5 = 378 GB/s). At 8 GiB the forced NVLS
    # runs faster than the ring NCCL picks: the tuner's numbers are its estimate (the time
    # stays the fabric's)
    f = topologies.build("dgx-h100")
    for release in ("2.25.1", "2.30.7"):
        for n in (64 * 2**20, 8 * 2**30):
            r = cost(f, "all-reduce", n, runtime=f"nccl@{release}", ranks=f.endpoints[:4])
            assert (r.algorithm, r.protocol) == ("ring", "Simple")
        forced = cost(f, "all-reduce", n, runtime=f"nccl@{release}", ranks=f.endpoints[:4],
                      algorithm="in-switch")
        assert forced.algorithm == "in-switch" and forced.time < r.time


def test_no_nvls_where_its_graph_search_finds_no_speed():
    # chip0 of a DGX H100 left with one NVLink (20.6 GB/s): 9 x the slowest sm90 speed (3 GB/s)
    # does not fit, so NCCL's NVLS graph has no channels and its tuner no NVLS bandwidth: auto
    # runs the ring and names why, NVLS forced finds no algorithm
    from analysis import NotApplicableError
    f = topologies.build("dgx-h100")
    g = f
    for sw, k in (("sw0", 4), ("sw1", 4), ("sw2", 4), ("sw3", 5)):
        g = g.without(lanes=[("chip0", sw)] * k)
    r = cost(g, "all-reduce", 2**30)
    assert r.algorithm == "ring"
    with pytest.raises(NotApplicableError, match="NVLS graph search finds no speed at which 8 "
                       "heads fit on the least-connected GPU's 1 NVLink "):
        cost(g, "all-reduce", 2**30, algorithm="in-switch")
