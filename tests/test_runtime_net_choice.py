"""NCCL's tuner chooses across nodes at its own graph speeds (session 20): the ring and the
tree on the ring graph its search over the NICs finds (nChannels x speed, caps x that
nChannels), NVLS-tree on the NVLS graph searched with the NICs (heads = NIC-local GPUs,
bwIntra / bwInter), each re-done here from the released code (NVIDIA/nccl src/graph/search.cc
ncclTopoCompute / ncclTopoSearchRecNet / ncclTopoSearchTryNvls, src/graph/tuning.cc
ncclTopoTuneModel), tag by tag, independently of analysis._runtime_cost; the time stays at the
fabric's rate."""

import math

import pytest
from degrade import built
from hypothesis import given, settings
from hypothesis import strategies as st

import topologies
from analysis import _runtime_cost as rc
from analysis import cost
from analysis._collectives import _GroupView, _resolve_ranks
from fabric import NCCL_RELEASE_DATES, runtime
from tests.test_runtime import _brute_net_graph, _ring_raises
from tests.test_runtime_nvls_choice import charge_nvls_channel

RELEASES = sorted(NCCL_RELEASE_DATES, key=lambda v: tuple(map(int, v.split("."))))


def _v(release):
    return tuple(map(int, release.split(".")))


def _place_heads(gpus, nics, link, top, intra, inter, most):
    """ncclTopoSearchRecNet's NVLS branch, channel by channel: channel c takes NIC c (net.bw
    and its PCIe path charged bwInter both ways), NIC c's local GPU c as head, then
    ncclTopoSearchTryNvls (charge_nvls_channel) charges every GPU's link from and to the
    switch bwIntra, twice for the head. Returns the heads placed before one does not fit
    (GB/s)."""
    nic = [top] * nics
    down, up = [link] * gpus, [link] * gpus
    k = 0
    while k < min(nics, most):
        if nic[k] < inter or not charge_nvls_channel(down, up, k, intra):
            break
        nic[k] -= inter
        k += 1
    return k


def brute_nvls_net_graph(release, arch, lanes, gpus, nics, net, pci):
    """(heads, bwIntra, bwInter) GB/s of the NVLS graph over the NICs, following
    ncclTopoCompute's control flow tag by tag (pass 1 from maxBw down, the NVLS comparison,
    pass 2 / 2.19.1's pass 3)."""
    v = _v(release)
    rt = runtime(f"nccl@{release}")
    speeds = [s / 1e9 for s in rt.search[("inter_speeds", arch)]]
    link = lanes * rt.search[("nvlink_bw", arch)] / 1e9
    top = min(net, pci) if pci else net
    most = min(32, gpus) if v >= (2, 25, 1) else rt.max_channels
    total = max(link, pci or 0.0)
    i = 0
    while i < len(speeds) - 1 and speeds[i] > top:
        i += 1
    g = (0, 0.0, 0.0)
    while True:
        k = _place_heads(gpus, nics, link, top, speeds[i], speeds[i], most)
        more = k > g[0] and k <= gpus
        better = v >= (2, 19, 0) and k * speeds[i] > g[0] * g[2]   # 2.18: heads only
        if more or better:
            g = (k, speeds[i], speeds[i])
        if g[0] and (g[0] == most or g[0] * g[2] >= total):
            break
        if i < len(speeds) - 1 and (g[0] == 0 or speeds[i + 1] / g[2] > 0.49):
            i += 1
            continue
        break
    if g[0] == 0:
        return g
    j = speeds.index(g[2])
    n, intra, inter = g
    while j > 0:
        if v >= (2, 19, 0):                  # raise bwInter alone, heads fixed
            if inter >= 2 * intra:
                break
            if _place_heads(gpus, nics, link, top, intra, speeds[j - 1], most) < n:
                break
            j -= 1
            inter = speeds[j]
        else:                                # 2.18: raise bwIntra (not the ring's pattern)
            if intra >= 2 * inter:
                break
            if _place_heads(gpus, nics, link, top, speeds[j - 1], inter, most) < n:
                break
            j -= 1
            intra = speeds[j]
    return n, intra, inter


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(RELEASES), st.sampled_from(["hopper", "blackwell"]),
       st.integers(1, 18), st.integers(2, 16), st.data())
def test_nvls_net_graph_is_nccls_search_brute_force(release, arch, lanes, gpus, data):
    nics = data.draw(st.integers(1, gpus))
    net = data.draw(st.sampled_from([12.5, 25.0, 50.0, 100.0]))
    pci = data.draw(st.sampled_from([None, 24.0, 48.0]))
    got = rc.nccl_nvls_net_graph(runtime(f"nccl@{release}"), arch, lanes, gpus, nics,
                                 net * 1e9, pci * 1e9 if pci else None)
    want = brute_nvls_net_graph(release, arch, lanes, gpus, nics, net, pci)
    assert (got[0], got[1] / 1e9, got[2] / 1e9) == pytest.approx(want, rel=1e-12)


def test_nvls_net_graph_hand_counts():
    # 8 H100 with 8 x 400G NICs behind gen5 x16 (48 GB/s): 6 heads at 48 (7 x 48 > 18 x
    # 20.6 = 370.8 at the 7th), 7 at 45, 8 at 40 = the most heads: bwIntra 40, pass 2 raises
    # bwInter to 48 (2.19+); 2.18 keeps 40 / 40 (its pass 2 raises bwIntra: 9 x 42 > 370.8).
    # 4 NICs: 4 heads at 48 (nothing above 48 in sm90's inter array)
    def g(release, nics, arch="hopper"):
        h, a, b = rc.nccl_nvls_net_graph(runtime(f"nccl@{release}"), arch, 18, 8, nics, 50e9,
                                         48e9)
        return h, a / 1e9, b / 1e9
    assert g("2.30.7", 8) == (8, 40.0, 48.0)
    assert g("2.19.1", 8) == (8, 40.0, 48.0)
    assert g("2.18.5", 8) == (8, 40.0, 40.0)
    assert g("2.30.7", 4) == (4, 48.0, 48.0)


def _brute_tree_graph(speeds, n, ppn, nvl, speed):
    """(bwIntra, bwInter) GB/s of the tree graph on the ring's n channels: the first array
    speed not above the ring's, then pass 2 raising bwIntra while below 2 x bwInter and n
    chains NET -> GPU c mod ppn -> .. -> GPU (c - 1) mod ppn fit, charged channel by channel
    on every GPU's NVLink in (all but the first) and out (all but the last)."""
    def fits(s):
        gin, gout = [0.0] * ppn, [0.0] * ppn
        for c in range(n):
            first, last = c % ppn, (c - 1) % ppn
            for g in range(ppn):
                gin[g] += s if (g != first and ppn > 1) else 0
                gout[g] += s if (g != last and ppn > 1) else 0
        return all(x <= nvl + 1e-9 for x in gin + gout)
    j = next(i for i, x in enumerate(speeds) if x <= speed + 1e-9 or i == len(speeds) - 1)
    inter = intra = speeds[j]
    while j > 0 and intra < 2 * inter and fits(speeds[j - 1]):
        j -= 1
        intra = speeds[j]
    return intra, inter


def _view(f, op, ranks):
    nodes, idx = _resolve_ranks(f, list(ranks))
    return _GroupView(f, op, nodes, idx, None, None, True)


NET_SPECS = ["rail:servers=2,gpus=8,nvls=1,chip=h100", "rail:servers=4,gpus=8,nvls=1,chip=h100",
             "rail:servers=3,gpus=4,chip=gb200,scaleup=nvlink5,nvls=0,nic=ib-ndr",
             "rail:servers=2,gpus=8,nvls=1,chip=b200", "rail:servers=2,gpus=4,nvls=1,chip=gb200"]


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(NET_SPECS), st.sampled_from(["all-reduce", "all-gather"]),
       st.sampled_from(RELEASES), st.integers(10, 33))
def test_net_choice_is_nccls_tuner_on_its_graphs(spec, op, release, log_n):
    # the tuner re-done by hand across nodes: the ring's busBw = the NET ring graph's
    # nChannels x speed (bwIntra = bwInter for the ring), its LL128 cap that nChannels x
    # perChMaxRingLL128Bw; the tree's caps the same nChannels; NVLS-tree heads x bw from the
    # brute-force NVLS graph with NICs and the release's form; the pick is the least choice
    f = built(spec)
    rt = runtime(f"nccl@{release}")
    view = _view(f, op, f.endpoints)
    n = float(2**log_n)
    tried, _why = rc.nccl_candidates(rt, view, op, n, "auto", 1)
    by = {(c.library, c.protocol): c for c in tried}
    q = rt.search
    ppn = round(view.ppn)
    nics = max(1, min(view.nics_per_node, ppn))
    pci = view.nic_pci_bw(rt)
    g_n, g_bw = _brute_net_graph(nics, ppn, view.lanes, q[("nvlink_bw", view.arch)] / 1e9,
                                 view.nic_link_bandwidth / 1e9, pci / 1e9 if pci else None,
                                 [s / 1e9 for s in q[("inter_speeds", view.arch)]],
                                 rt.max_channels, _ring_raises(release))
    p = view.p
    nsteps = 2 * (p - 1) if op == "all-reduce" else p - 1
    ring = by[("ring", "Simple")]
    assert ring.choice - ring.tuner_fixed == pytest.approx(n / (g_n * g_bw * 1e9 * p / nsteps),
                                                     rel=1e-9)
    ll128 = by[("ring", "LL128")]
    idx = min(view.n_nodes, 3) - 1
    bus = min(g_n * g_bw * 1e9 * rt.factors["ring_ll128"],
              g_n * rt.ring_ll128_bw[(view.arch, idx)])
    assert ll128.choice - ll128.tuner_fixed == pytest.approx(n / (bus * p / nsteps), rel=1e-9)
    # the tree on the same graph; on 2 nodes its bwIntra raised by the tree's pass 2
    t_intra, t_inter = _brute_tree_graph([s / 1e9 for s in q[("inter_speeds", view.arch)]],
                                         g_n, ppn, view.lanes * q[("nvlink_bw", view.arch)] / 1e9,
                                         g_bw)
    t_bw = (t_intra if view.n_nodes <= 2 else t_inter) * 1e9
    for proto in ("LL128", "Simple") if op == "all-reduce" else ():
        tree = by[("tree", proto)]
        bus = rc._tree_busbw(rt, view, proto, g_n * t_bw, g_n) * rc._tree_correction(rt, proto, n)
        assert tree.choice - tree.tuner_fixed == pytest.approx(n / (bus * 0.5), rel=1e-9)
    nt = by.get(("nvls-tree", "Simple"))
    if nt is not None:
        heads, intra, inter = brute_nvls_net_graph(
            release, view.arch, view.lanes, ppn, nics, view.nic_link_bandwidth / 1e9,
            pci / 1e9 if pci else None)
        v, nn = _v(release), view.n_nodes
        if v < (2, 19, 0):
            bw = intra if nn <= 2 else inter
            ratio = 0.7 * nn / (2 * (nn - 1))
        elif v < (2, 28, 0):
            bw = min(intra, inter if nn <= 2 else inter / 2)
            ratio = 5 / 6
        else:
            eff = {"hopper": 0.85, "blackwell": 0.74}[view.arch]
            bw = min(intra * eff * (heads - 1) / heads * 2, inter * (2 if nn <= 2 else 1),
                     rt.nvls_tree_bw[(view.arch, idx)] / 1e9)
            ratio = p / nsteps
        corr = 1.0
        if v >= (2, 29, 0) and view.arch == "blackwell" and not view.arm_host:
            corr = rc._tree_correction(rt, "Simple", n, limit=24)
        assert nt.choice - nt.tuner_fixed == pytest.approx(n / (heads * bw * 1e9 * ratio * corr),
                                                     rel=1e-9)
    r = cost(f, op, n, runtime=f"nccl@{release}")
    best = min(tried, key=lambda c: (c.choice, c.time))
    assert (r.algorithm, r.protocol) == (best.schedule, best.protocol)


def test_four_h100_nodes_pick_nvls_tree_over_the_capped_tree():
    # 4 x 8 H100 (8 x 400G per node), all-reduce 16 MiB, 2.30.7: the NET ring graph is 8
    # channels x 48 GB/s (no DupChannels below 50 GB/s with more than 4), so the tree's LL128
    # cap is 8 x perChMaxTreeLL128Bw(Hopper, 4 nodes) 29.0 = 232 GB/s (the model had capped
    # on comm's 16 channels, 464), and NVLS-tree's 8 heads x min(40 x .85 x 7/8 x 2, 48,
    # 45.5) = 364 GB/s wins: NCCL runs NVLS-tree; the times are unchanged
    f = topologies.build("rail:servers=4,gpus=8,nvls=1,chip=h100")
    view = _view(f, "all-reduce", f.endpoints)
    rt = runtime("nccl@2.30.7")
    assert rc.nccl_view_net_graph(rt, view) == (8, 48e9)
    assert rc.nccl_nvls_tree_tuner_bus(rt, view) == pytest.approx(8 * 45.5e9, rel=1e-9)
    r = cost(f, "all-reduce", 16 * 2**20, runtime="nccl@2.30.7")
    assert (r.algorithm, r.protocol) == ("hierarchical", "Simple")
    tree = cost(f, "all-reduce", 16 * 2**20, runtime="nccl@2.30.7", algorithm="tree")
    assert tree.protocol == "LL128" and not math.isclose(tree.time, r.time)


def test_the_ring_graph_keeps_its_duplicated_speed_before_2_19_3():
    # 2 nodes' worth of search: 2 NICs of 100 GB/s, 2 Hopper GPUs with 4 NVLinks (82.4 GB/s):
    # pass 1 fits 2 channels at 48 (48 x (k - k // 2) <= 82.4), 96 >= the total: stop;
    # DupChannels 4 x 24; from 2.19.3 pass 2 raises the ring while 4 channels fit: 30, then 40
    # (40 x 2 = 80 <= 82.4; 42 x 2 = 84 does not): 4 x 40. In 2.18.x / 2.19.1 DupChannels
    # runs last and pass 2 skips the ring (search.cc v2.18.5-1 l.962-996): 4 x 24
    def g(release):
        n, bw = rc.nccl_net_ring_graph(runtime(f"nccl@{release}"), "hopper", 2, 2, 4, 100e9,
                                       None)
        return n, bw / 1e9
    assert g("2.30.7") == (4, 40.0) and g("2.19.3") == (4, 40.0)
    assert g("2.19.1") == (4, 24.0) and g("2.18.5") == (4, 24.0)


def test_two_gb200_trays_choose_the_tree_at_its_raised_bwintra():
    # 2 x 4 GB200 with 4 x 400G NICs (48 GB/s behind PCIe), 2.27.3: the NET ring graph is 8 x
    # 24 GB/s (24 x 8 = 192 beats 47.9 x 4); the tree graph on its 8 channels starts at 24 and
    # its pass 2 raises bwIntra while below 2 x 24 and 8 chains fit the 18 x 40.1 GB/s NVLinks:
    # 30, 40, 42, 45.1, 47.9; on 2 nodes the tuner reads bwIntra: the tree's Simple busBw is
    # 8 x min(47.9 x .92, perChMaxTreeBw 82.8 at 2.27.3) = 352.5 GB/s (it was the ring's 192 x
    # .92). At 1 GiB NCCL's tuner runs the tree (algBw x .5: 176 GB/s), not NVLS-tree (4 heads
    # at 47.9 / 47.9: 4 x 47.9 x 5/6 = 160 GB/s), which the model picked on main
    f = topologies.build("rail:servers=2,gpus=4,nvls=1,chip=gb200")
    rt = runtime("nccl@2.27.3")
    view = _view(f, "all-reduce", f.endpoints)
    assert rc.nccl_view_net_graph(rt, view) == (8, 24e9)
    assert rc.nccl_net_tree_graph(rt, "blackwell", 8, 4, 18, 24e9) == (47.9e9, 24e9)
    assert rc._tuner_graph(rt, view, 1.0, 1) == (8 * 24e9, 8)
    assert rc._tree_speed_ratio(rt, view) == pytest.approx(47.9 / 24, rel=1e-12)
    assert rc._tree_busbw(rt, view, "Simple", 8 * 47.9e9, 8) == pytest.approx(8 * 47.9e9 * .92)
    r = cost(f, "all-reduce", 2**30, runtime="nccl@2.27.3")
    assert (r.algorithm, r.protocol) == ("double-binary-tree", "Simple")


def test_two_nodes_of_four_h100_raise_the_tree_too():
    # review S20-R2: Hopper moves where the NET ring graph runs below sm90's top speed: 4 H100
    # and 4 x 400G NICs a node give 8 channels x 24 GB/s (2 a NIC, 192 > 4 x 48), and the
    # tree's pass 2 raises its bwIntra to 48 (48 x (8 - 8 // 4) = 288 <= 18 x 20.6):
    # at 1 MiB NCCL runs tree/LL128 rather than ring/LL128; 8 H100 a node stay at 48 (no raise)
    f = topologies.build("rail:servers=2,gpus=4")
    rt = runtime("nccl@2.30.7")
    view = _view(f, "all-reduce", f.endpoints)
    assert rc.nccl_view_net_graph(rt, view) == (8, 24e9)
    assert rc._tree_speed_ratio(rt, view) == 2.0
    r = cost(f, "all-reduce", 2**20, runtime="nccl@2.30.7")
    assert (r.algorithm, r.protocol) == ("double-binary-tree", "LL128")
    eight = topologies.build("rail:servers=2,gpus=8")
    assert rc._tree_speed_ratio(rt, _view(eight, "all-reduce", eight.endpoints)) == 1.0
