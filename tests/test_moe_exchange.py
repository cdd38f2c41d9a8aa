"""MoE exchange kernels: routing against brute force, traffic structure, bad input.

The published ``moe dispatch`` / ``moe combine`` rows of the check set are expressed
in ``tests/fidelity_moe.py`` and checked, row by row, by ``tests/test_fidelity.py``.
"""

import dataclasses
import itertools
import math

import fidelity
import fidelity_heldout_moe
import fidelity_moe
import numpy as np
import pytest
from degrade import built
from hypothesis import example, given, settings
from hypothesis import strategies as st
from routing_brute import exchange_network_brute_force

import analysis
import topologies
from analysis import NotApplicableError, expert_reach, model_config, moe_exchange, parse_routing
from fabric import (
    EXCHANGE_BLOCK_RATE,
    EXCHANGE_KERNELS,
    EXCHANGE_LATENCY,
    EXCHANGE_NIC_EFFICIENCY,
    RoutingError,
    SpecError,
    exchange_kernel,
    link_tech,
    peer_access_latency,
    runtime,
    transport,
)
from fabric._units import is_real

# -- published rows: tests/fidelity_moe.py expresses them for tests/test_fidelity.py ----------

h800 = fidelity_moe.h800_nodes


def test_every_moe_row_expressible():
    rows = [r for r in fidelity.load_rows() if r["op"].startswith("moe")]
    assert len(rows) == 20 and {r["id"] for r in rows} == set(fidelity_moe.CASES)
    for row in rows:
        got = fidelity_moe.CASES[row["id"]](row)
        assert got[0] > 0 and math.isfinite(got[0])
    assert set(fidelity_moe.KNOWN_MISSES) <= set(fidelity_moe.CASES)


def test_multinode_deepep_sends_once_per_node():
    """The published fact: a token crosses the network once per destination node, not once
    per destination GPU; per-GPU sending (pplx) puts more bytes through the NIC."""
    f = h800(4)
    kw = {"dispatch_bytes": 1, "combine_bytes": 2, "routing": "uniform"}
    normal = moe_exchange(f, "deepseek-v3", 4096, 32, kernel="deepep-normal", **kw)
    pplx = moe_exchange(f, "deepseek-v3", 4096, 32, kernel="pplx", **kw)
    ll = moe_exchange(f, "deepseek-v3", 4096, 32, kernel="deepep-low-latency", **kw)
    h = 7168
    sent = {nic: s for nic, (s, _) in normal.nic_bytes.items()}
    # (token, remote node) pairs: 4096 tokens x 3 remote nodes x P(node hit)
    p_node = expert_reach(256, 8, 32, 4)[1]
    assert max(sent.values()) == pytest.approx(4096 * 3 * p_node * h)
    assert (max(s for s, _ in normal.nic_bytes.values())
            < max(s for s, _ in pplx.nic_bytes.values())
            < max(s for s, _ in ll.nic_bytes.values()))
    assert normal.dispatch < pplx.dispatch
    # NVLink carries the fan-out: the forwarders' scale-up links are loaded
    assert normal.link_bytes and all(b > 0 for b in normal.link_bytes.values())


def test_small_batch_is_fixed_cost_bound():
    f = topologies.build("nvl72")
    r = moe_exchange(f, "deepseek-v3", 1, 8, kernel="one-sided", dispatch_bytes=2,
                     combine_bytes=2)
    # the wires carry one token in a fraction of the fixed cost; what moves it is one block
    # (the busiest token's copies at the block rate), itself well under the fixed cost
    ph = r.dispatch_phase
    assert ph.fixed > 10 * ph.scaleup
    assert ph.bottleneck == "block rate" and ph.fixed > 5 * ph.transfer
    assert r.dispatch > 5e-6                           # not the 0.4 us of a bare wire model


# -- routing against brute force --------------------------------------------------------------

def _brute(E, k, ep, nodes, m=None):
    """Exact P(rank 0 hit), P(node 0 hit) by enumerating every choice."""
    per_rank, per_node = E // ep, E // nodes
    hit_r = hit_n = total = 0
    node_sets = [None] if m is None or m >= nodes else list(
        itertools.combinations(range(nodes), m))
    for ns in node_sets:
        pool = (range(E) if ns is None else
                [e for e in range(E) if e // per_node in ns])
        for pick in itertools.combinations(pool, k):
            total += 1
            hit_r += any(e // per_rank == 0 for e in pick)
            hit_n += any(e // per_node == 0 for e in pick)
    return hit_r / total, hit_n / total


@settings(max_examples=25, deadline=None)
@given(st.sampled_from([(8, 4, 2), (8, 8, 2), (12, 6, 3), (12, 4, 2), (16, 8, 4)]),
       st.integers(1, 4), st.integers(1, 3))
def test_reach_matches_enumeration(shape, k, m):
    E, ep, nodes = shape
    k = min(k, E // nodes)
    for routing, mm in (("uniform", None), (f"node-limited:{m}", m)):
        if mm is not None and mm * (E // nodes) < k:
            continue
        got = expert_reach(E, k, ep, nodes, routing)
        want = _brute(E, k, ep, nodes, mm)
        assert got == pytest.approx(want, abs=1e-12)


def test_balanced_routing():
    assert expert_reach(256, 8, 64, 8, "balanced") == (8 / 64, pytest.approx(15 / 8 / 8))
    assert expert_reach(256, 8, 4, 1, "balanced") == (1.0, 1.0)


@pytest.mark.parametrize("bad", ["zipf", "node-limited:0", "uniform:3", 0, {"a": 1},
                                 ("node-limited", 0), {"max_nodes": 0}, ("a", "b", "c")])
def test_bad_routing(bad):
    with pytest.raises(SpecError, match="routing|max_nodes"):
        parse_routing(bad)


@pytest.mark.parametrize("bad, match", [
    (True, r"routing must be a name .* got True \(a bool\)"), (2.5, r"got 2\.5 \(a float\)"),
    (None, r"got None \(a NoneType\)"), ([2], r"got \[2\] \(a list\)"),
    (("node-limited", 2.5), r"routing\[1\] must be an integer >= 1"),
    (("node-limited", "3"), r"routing\[1\]='3' \(a str\)"),
    ({"max_nodes": 2.5}, r"max_nodes must be an integer >= 1 .* got max_nodes=2\.5")])
def test_routing_of_the_wrong_kind_is_a_type_error(bad, match):
    # STYLE's rule (session 32): was a SpecError ('routing must be a string') or, for a
    # pair's/dict's float M, "node-limited routing needs M >= 1"
    with pytest.raises(TypeError, match=match):
        parse_routing(bad)


# -- structure and bad input ------------------------------------------------------------------

@pytest.mark.parametrize("kernel", sorted(EXCHANGE_KERNELS))
def test_every_kernel_runs_and_scales_with_bytes(kernel):
    f = h800(2)
    a = moe_exchange(f, "deepseek-v3", 256, 16, kernel=kernel, dispatch_bytes=1,
                     combine_bytes=2) if exchange_kernel(kernel).scale_out else None
    if a is None:
        f = topologies.build("nvl72")
        a = moe_exchange(f, "deepseek-v3", 256, 16, kernel=kernel, dispatch_bytes=1,
                         combine_bytes=2)
    assert a.combine > a.dispatch > 0                  # BF16 back, FP8 out
    assert a.kernel == kernel


def test_per_element_and_per_token_bytes_agree():
    f = topologies.build("nvl72")
    a = moe_exchange(f, "deepseek-v3", 64, 8, kernel="one-sided", dispatch_bytes=2,
                     combine_bytes=2)
    b = moe_exchange(f, "deepseek-v3", 64, 8, kernel="one-sided", dispatch_bytes=14336,
                     combine_bytes=14336)
    assert a.dispatch == b.dispatch and a.combine == b.combine


def test_one_sided_cannot_leave_the_domain():
    # not a RoutingError: every pair has a route; the kernel does not reach (audit s16)
    with pytest.raises(NotApplicableError, match="one load/store domain"):
        moe_exchange(h800(2), "deepseek-v3", 8, 16, kernel="one-sided", dispatch_bytes=1,
                     combine_bytes=2)


def test_rank_without_nic_cannot_reach_other_domains():
    f = topologies.build("switch:8").without(links=())   # one domain: no network at all
    r = moe_exchange(f, "deepseek-v3", 8, 8, kernel="deepep-low-latency", dispatch_bytes=1,
                     combine_bytes=2)
    assert not r.nic_bytes


def test_degraded_fabric_is_slower():
    f = topologies.build("dgx-h100")
    g = f.without(links=[("chip0", "sw0")])
    kw = {"dispatch_bytes": 1, "combine_bytes": 2, "kernel": "one-sided"}
    assert (moe_exchange(g, "deepseek-v3", 1024, 8, **kw).dispatch
            > moe_exchange(f, "deepseek-v3", 1024, 8, **kw).dispatch)


@pytest.mark.parametrize("kwargs, match", [
    ({"kernel": "nope"}, "unknown MoE exchange kernel"),
    ({"kernel": "one-sided", "dispatch_bytes": 0}, "dispatch_bytes"),
    ({"kernel": "one-sided", "tokens_per_rank": 0}, "tokens_per_rank"),
    ({"kernel": "one-sided", "ep": 72, "model": "tiny"}, "only"),
    ({"kernel": "one-sided", "ep": 100}, "ep must be between"),
])
def test_bad_input(kwargs, match):
    args = {"tokens_per_rank": 4, "ep": 8, "dispatch_bytes": 1, "combine_bytes": 2,
            "model": "deepseek-v3"}
    args.update(kwargs)
    if args["model"] == "tiny":
        args["model"] = dataclasses.replace(model_config("deepseek-v3"), routed_experts=64)
    model = args.pop("model")
    with pytest.raises(SpecError, match=match):
        moe_exchange(topologies.build("nvl72"), model, **args)


def test_ep_that_does_not_divide_the_experts():
    """72 ranks, 256 experts: every rank holds 256/72 experts on average."""
    f = topologies.build("nvl72")
    r = moe_exchange(f, "deepseek-v3", 4, 72, kernel="one-sided", dispatch_bytes=1,
                     combine_bytes=2)
    p_rank = expert_reach(256, 8, 72, 1)[0]
    assert r.copies_rank == pytest.approx(4 * 72 * p_rank)
    assert expert_reach(256, 8, 64, 1)[0] > p_rank > expert_reach(256, 8, 128, 1)[0]


def test_unequal_nodes_refused():
    with pytest.raises(SpecError, match="unequally"):
        moe_exchange(h800(2), "deepseek-v3", 4, [0, 1, 2, 3, 4, 5, 8, 9],
                     kernel="pplx", dispatch_bytes=1, combine_bytes=2)


def test_profiles_have_sources():
    for k in EXCHANGE_KERNELS.values():
        for p in k.parameters():
            assert p.source, p.name
    assert exchange_kernel(EXCHANGE_KERNELS["pplx"]) is EXCHANGE_KERNELS["pplx"]


def test_deterministic():
    f = h800(2)
    a = moe_exchange(f, "deepseek-v3", 512, 16, kernel="deepep-normal", dispatch_bytes=1,
                     combine_bytes=2)
    b = moe_exchange(f, "deepseek-v3", 512, 16, kernel="deepep-normal", dispatch_bytes=1,
                     combine_bytes=2)
    assert a == b
    assert list(np.round(sorted(a.link_bytes.values()), 3)) == list(
        np.round(sorted(b.link_bytes.values()), 3))
    assert analysis.MoEExchange is type(a)


def test_pure_rdma_low_latency_sends_intranode_copies_through_the_nic():
    f = h800(1)
    kw = {"dispatch_bytes": 1, "combine_bytes": 2, "kernel": "deepep-low-latency"}
    nvl = moe_exchange(f, "deepseek-v3", 128, 8, **kw)
    rdma = moe_exchange(f, "deepseek-v3", 128, 8, transport="rdma", **kw)
    assert not nvl.nic_bytes and rdma.nic_bytes
    sent = max(s for s, _ in rdma.nic_bytes.values())
    assert sent == pytest.approx(128 * 8 * 7 / 8 * (7168 + 16))   # every remote copy
    assert rdma.dispatch > nvl.dispatch
    with pytest.raises(SpecError, match="RDMA alone"):
        moe_exchange(f, "deepseek-v3", 128, 8, transport="rdma", **{**kw, "kernel":
                                                                      "deepep-normal"})
    with pytest.raises(RoutingError, match="loadstore"):
        moe_exchange(h800(2), "deepseek-v3", 128, 16, transport="loadstore", **kw)


def test_chips_cabled_straight_into_the_network():
    f = topologies.build("fattree:k=4")                # 16 chips, each its own domain
    # (single-path network: session 25's queue-pair rule would otherwise set the time, 16
    # atomics after writes on each queue pair, test_ibgda_s25_qp)
    r = moe_exchange(f, "deepseek-v3", 64, 16, kernel="pplx", dispatch_bytes=1,
                     combine_bytes=2, adaptive_routing=False)
    assert r.nodes == 16 and len(r.nic_bytes) == 16 and r.bottleneck_dispatch == "network"


def test_routing_spellings():
    assert parse_routing("node_limited=3") == ("node-limited", 3)
    assert parse_routing(("node-limited", 2)) == ("node-limited", 2)


@settings(max_examples=15, deadline=None)
@given(st.sampled_from([(2, 4), (2, 8), (4, 4), (4, 8)]), st.sampled_from([1, 7, 64]),
       st.sampled_from(["uniform", "node-limited:1", "node-limited:2"]))
def test_bytes_are_conserved_and_ordered(shape, tokens, routing):
    """On a rail cluster every NIC byte sent is received somewhere; each scale-up copy
    crosses exactly two links (GPU to switch, switch to GPU); a node-deduplicating kernel
    never puts more through a NIC than a rank-deduplicating one, nor that more than one
    sending every (token, expert) copy (pplx with its 4-B index, DeepEP low-latency with
    its 16-B header)."""
    nodes, gpus = shape
    f = topologies.rail_optimized(nodes, gpus, scaleup_links=8, chip="h100")
    ep = nodes * gpus
    kw = {"dispatch_bytes": 1, "combine_bytes": 2, "routing": routing}
    per_rank = dataclasses.replace(exchange_kernel("pplx"), name="per-rank", dedup="rank",
                                   message_header=0)
    out = {k if isinstance(k, str) else k.name:
           moe_exchange(f, "deepseek-v3", tokens, ep, kernel=k, **kw)
           for k in ("deepep-normal", per_rank, "pplx", "deepep-low-latency")}
    for r in out.values():
        sent = sum(s for s, _ in r.nic_bytes.values())
        recv = sum(v for _, v in r.nic_bytes.values())
        assert sent == pytest.approx(recv)
    # each copy inside a node is one GPU->switch->GPU path; every rank sends
    # copies / ep to each rank, (gpus - 1) of them in its own node
    r = out["per-rank"]
    inside = ep * (gpus - 1) * (r.copies_rank / ep) * 7168
    assert sum(r.link_bytes.values()) == pytest.approx(2 * inside)
    r = out["pplx"]                     # one message per (token, expert): token + 4-B index
    inside = ep * (gpus - 1) * (r.copies_expert / ep) * (7168 + 4)
    assert sum(r.link_bytes.values()) == pytest.approx(2 * inside)
    nic = {k: sum(s for s, _ in r.nic_bytes.values()) for k, r in out.items()}
    assert nic["deepep-normal"] <= nic["per-rank"] * (1 + 1e-12)
    assert nic["per-rank"] <= nic["pplx"] * (1 + 1e-12)
    assert nic["pplx"] <= nic["deepep-low-latency"] * (1 + 1e-12)



@settings(max_examples=12, deadline=None)
@given(st.sampled_from([(2, 4), (2, 8), (4, 4)]), st.sampled_from([1, 7, 128]),
       st.sampled_from(["deepep-normal", "deepep-low-latency", "pplx"]), st.booleans())
def test_network_time_is_busiest_nic_at_its_achieved_rate(shape, tokens, kernel, degraded):
    """Brute force: the network stage is the largest over NICs of max(sent, received)
    bytes over the NIC's narrowest link x the achieved fraction of line rate (47 of 50
    GB/s per NDR NIC) on an intact rail cluster; with a network link cut (rail0-spine0)
    the survivors can be busier than any NIC: the busiest link of the traffic spread
    equally over every shortest NIC-to-NIC path (networkx, no GPU in between)."""
    nodes, gpus = shape
    f = topologies.rail_optimized(nodes, gpus, scaleup_links=8, chip="h100")
    if degraded:
        f = f.without(links=[("rail0", "spine0")])
    r = moe_exchange(f, "deepseek-v3", tokens, nodes * gpus, kernel=kernel, dispatch_bytes=1,
                     combine_bytes=2)
    G = f.graph
    eff = EXCHANGE_NIC_EFFICIENCY.value
    worst = 0.0
    for nic, (sent, recv) in r.nic_bytes.items():
        line = min(float(d["bandwidth"]) for _, _, d in G.edges(nic, data=True))
        worst = max(worst, max(sent, recv) / (line * eff))
    if not degraded:
        assert r.dispatch_phase.network == pytest.approx(worst, rel=1e-12)
    # every ordered pair of ranks in different servers (deepep-normal: rail peers only)
    # carries the same bytes, sent / destinations, over its shortest paths
    links = exchange_network_brute_force(f, r, kernel, nodes, gpus, eff)
    assert links >= worst * (1 - 1e-12)
    assert r.dispatch_phase.network == pytest.approx(links, rel=1e-12)
    assert EXCHANGE_NIC_EFFICIENCY in r.parameters
    # 400 Gb/s NDR: 47 GB/s of payload per NIC, below the 50 GB/s line rate
    assert 50e9 * EXCHANGE_NIC_EFFICIENCY.value == pytest.approx(47e9)


def test_nic_cut_off_from_the_network_is_no_way_out():
    """A rank whose NIC lost its network link cannot send over RDMA (it used to count
    the dead-end NIC at its PCIe rate); kernels that stay inside the node still run."""
    g = topologies.rail_optimized(2, 4, scaleup_links=8, chip="h100").without(
        links=[("nic0", "rail0")])
    kw = {"dispatch_bytes": 1, "combine_bytes": 2}
    with pytest.raises(RoutingError, match="no NIC with a link to the network"):
        moe_exchange(g, "deepseek-v3", 128, 8, kernel="deepep-low-latency", **kw)
    assert moe_exchange(g, "deepseek-v3", 128, 4, kernel="one-sided", **kw).dispatch > 0


# -- the cached per-unit link loads (a decode sweep routes each pattern once) ------------------

def _direct_link_bytes(f, ranks, per_pair):
    """Reference: route the one-sided dispatch matrix (per_pair bytes between every two EP
    ranks of one domain) on the fabric directly, no cache."""
    n = f.n_endpoints
    m = np.zeros((n, n))
    for a in ranks:
        for b in ranks:
            if a != b:
                m[a, b] = per_pair
    loads = f.router.loads_matrix(m)
    return {f.router.link_name(k): float(loads[k]) for k in np.flatnonzero(loads > 0)}


@settings(max_examples=12, deadline=None)
@given(st.sampled_from([1, 3, 64, 1000]), st.sampled_from([1, 2, 7168 * 2 + 5]),
       st.sampled_from([2, 4, 8]), st.booleans(), st.sampled_from(["uniform", "balanced"]))
def test_cached_link_loads_match_direct_routing(tokens, nbytes, ep, degraded, routing):
    """Link bytes and times from the cache equal routing the traffic matrix itself (to
    1e-12), on an intact and a degraded fabric, and a warm cache (after other batches and
    bytes) gives the same numbers as a cold one."""
    def fab():
        f = topologies.build("dgx-h100")
        return f.without(links=[("chip1", "sw2")]) if degraded else f
    kw = {"kernel": "one-sided", "dispatch_bytes": nbytes, "combine_bytes": 2,
          "routing": routing}
    warm = fab()
    for t in (5, 17):                          # other batches fill the cache first
        moe_exchange(warm, "deepseek-v3", t, ep, **{**kw, "dispatch_bytes": 1})
    got = moe_exchange(warm, "deepseek-v3", tokens, ep, **kw)
    cold_f = fab()
    cold = moe_exchange(cold_f, "deepseek-v3", tokens, ep, **kw)
    per_pair = got.copies_rank / ep * got.dispatch_bytes
    ref = _direct_link_bytes(cold_f, range(ep), per_pair)
    assert set(got.link_bytes) == set(ref)
    for link, b in ref.items():
        assert got.link_bytes[link] == pytest.approx(b, rel=1e-12)
    for a, b in ((got.dispatch, cold.dispatch), (got.combine, cold.combine)):
        assert a == pytest.approx(b, rel=1e-12)
    # the bottleneck link (largest time, not always most bytes) is one of the loaded links
    assert any(got.dispatch_phase.scaleup_bytes == pytest.approx(b, rel=1e-12)
               for b in ref.values())


# -- pulled combine: dependent round trips ------------------------------------------------------

def _loop_steps(nbytes, threads, vector):
    """Brute force: the steps of the slowest thread of a block whose thread t loads the
    vectors at offsets t*vector, t*vector + threads*vector, ... below nbytes."""
    return max(len(range(t * vector, nbytes, threads * vector)) for t in range(threads))


def _kernel_rounds(nbytes, threads=256):
    """Brute force: the rounds of TensorRT-LLM's one-sided copy loops over a token of
    ``nbytes`` (integer): the vector is picked as the kernels do (``% 16 == 0`` -> 16 B,
    else ``% 8`` -> 8, ``% 4`` -> 4, ``% 2`` -> 2, else 1), then the slowest thread's steps."""
    if nbytes % 16 == 0:
        vector = 16
    elif nbytes % 8 == 0:
        vector = 8
    elif nbytes % 4 == 0:
        vector = 4
    elif nbytes % 2 == 0:
        vector = 2
    else:
        vector = 1
    return _loop_steps(nbytes, threads, vector)


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 70000), st.sampled_from([32, 128, 256]), st.sampled_from([4, 8, 16]))
def test_pull_rounds_match_the_kernel_loop(nbytes, threads, vector):
    assert analysis.pull_rounds(nbytes, threads, vector) == _loop_steps(nbytes, threads, vector)


@settings(max_examples=10, deadline=None)
@given(st.sampled_from([1, 4, 64, 2048]), st.sampled_from([2, 7168 * 2, 7168 * 4 + 3]),
       st.booleans())
def test_pulled_combine_pays_its_round_trips(tokens, nbytes, degraded):
    """The one-sided combine's transfer is the larger of its bandwidth time started one
    round trip late and rounds x that round trip (the fabric's largest round trip between the
    EP ranks, brute force over every pair with the router, + the rest of Hopper's measured
    peer load: 826.6 ns less the 4 x 150 ns NVSwitch path), on an intact and a degraded
    fabric; dispatch (a push) pays none."""
    f = built("dgx-h100")
    if degraded:
        f = f.without(links=[("chip0", "sw0")])
    r = moe_exchange(f, "deepseek-v3", tokens, 8, kernel="one-sided", dispatch_bytes=2,
                     combine_bytes=nbytes, routing="balanced")
    rt = max(float(f.router.latency([a], [b])[0] + f.router.latency([b], [a])[0])
             for a in f.endpoint_indices for b in f.endpoint_indices if a != b)
    k = exchange_kernel("one-sided")
    rounds = _kernel_rounds(int(r.combine_bytes), k.pull_threads)
    access = EXCHANGE_LATENCY["hopper"]["peer_load"].value - 4 * link_tech("nvlink4").latency
    rate = EXCHANGE_BLOCK_RATE["hopper"].value          # NCCL's 44 GiB/s per block
    c = r.combine_phase
    # each round a round trip (two: slot 7 of the perfect router is a first-time rank at
    # EP8), and the 7 remote sources' bytes at one block's rate
    trips = 1 + _rotation_late_valid(8, 8, 7)
    assert trips == 2
    # the later batch reads its slots' pointer rows for the first time in round 1: one
    # constant L1.5 fetch (session 21)
    fetch = (trips - 1) * EXCHANGE_LATENCY["hopper"]["const_l15"].value
    # the loop's other dependent loads per round (session 22): every slot a distinct rank
    reads = _round_reads_ref("one-sided", "hopper", 2, rounds, 8, float(trips - 1))
    assert c.pull_latency == pytest.approx(
        rounds * trips * (rt + access) + fetch + reads + 7 * r.combine_bytes / rate, rel=1e-12)
    streamed = max(c.scaleup, c.network) + rt + access
    assert c.transfer == pytest.approx(max(streamed, c.pull_latency), rel=1e-12)
    assert c.transfer >= rt + access                   # no byte back before one round trip
    assert (c.bottleneck == "round trips") == (c.pull_latency > streamed)
    assert r.dispatch_phase.pull_latency == 0.0
    d = r.dispatch_phase                                # a push: links or one block's token
    assert d.transfer == pytest.approx(
        max(d.scaleup, d.network, 7 * r.dispatch_bytes / rate), rel=1e-12)
    # other kernels push: no round-trip floor
    pplx = moe_exchange(f, "deepseek-v3", tokens, 8, kernel="pplx", dispatch_bytes=2,
                        combine_bytes=nbytes, routing="balanced")
    assert pplx.combine_phase.pull_latency == 0.0


def test_pull_profile_is_validated():
    with pytest.raises(ValueError, match="both"):
        dataclasses.replace(exchange_kernel("one-sided"), pull_vector=0)
    with pytest.raises(TypeError, match="staging_copy"):
        dataclasses.replace(exchange_kernel("one-sided"), staging_copy="yes")


# -- kernel boundaries inside a phase ------------------------------------------------------------

def _brute_round_trip(f, ep):
    """Largest there-and-back router latency over the first ``ep`` ranks' ordered pairs."""
    eps = [f.endpoint_indices[r] for r in range(ep)]
    src = [a for a in eps for b in eps if a != b]
    dst = [b for a in eps for b in eps if a != b]
    # one router call per direction over every ordered pair (the same per-pair latencies)
    return float(np.max(np.asarray(f.router.latency(src, dst), dtype=float)
                        + np.asarray(f.router.latency(dst, src), dtype=float)))


@settings(max_examples=15, deadline=None)
@given(st.sampled_from(sorted(set(EXCHANGE_KERNELS) - {"all-to-allv"})),
       st.sampled_from([0.0, 1.3e-6, 5e-6]), st.sampled_from([1, 64]))
def test_fixed_cost_is_handshakes_plus_kernel_gaps(kernel, gap, tokens):
    """fixed = barriers + (kernels - 1) x gap + serial chain, per phase, for every kernel:
    across the network each barrier is one NCCL LL step over the NET hop (DeepEP normal's
    notify kernels synchronise twice per phase, session 16; in one domain a further barrier
    is one store-and-spin handoff, the runtime's flag barrier, session 23); the gap adds to the time one for one (nothing else moves); only
    a phase with a counted chain (one-sided's two, pplx's two) has one."""
    from fabric import EXCHANGE_SYNC, runtime, runtime_arch
    f = h800(2) if exchange_kernel(kernel).scale_out else built("dgx-h100")
    ep = 16 if exchange_kernel(kernel).scale_out else 8
    kw = {"kernel": kernel, "dispatch_bytes": 1, "combine_bytes": 2}
    r = moe_exchange(f, "deepseek-v3", tokens, ep, kernel_gap=gap, **kw)
    r0 = moe_exchange(f, "deepseek-v3", tokens, ep, kernel_gap=0.0, **kw)
    k = exchange_kernel(kernel)
    if r.nodes > 1:
        barrier = EXCHANGE_SYNC["base"].value + EXCHANGE_SYNC["network"].value
    else:
        barrier = runtime("symmetric-memory").kernel_floor[runtime_arch(f)]
    further = barrier if r.nodes > 1 else _brute_round_trip(f, ep)
    for ph, ph0, n, syncs, steps in (
            (r.dispatch_phase, r0.dispatch_phase, k.kernels[0], k.syncs[0], k.chain[0]),
            (r.combine_phase, r0.combine_phase, k.kernels[1], k.syncs[1], k.chain[1])):
        assert syncs == (2 if kernel == "deepep-normal" else 1)
        assert ph.kernel_gaps == pytest.approx((n - 1) * gap, abs=1e-18)
        assert ph.fixed == pytest.approx(barrier + (syncs - 1) * further + (n - 1) * gap
                                         + ph.chain + ph.fence, rel=1e-12)
        assert ph.time - ph0.time == pytest.approx((n - 1) * gap, abs=1e-15)
        assert (ph.chain > 0) == bool(steps)
        # across the network the phase's release is inside EXCHANGE_SYNC; only a combine whose
        # blocks fence each copy to a load/store peer on their chain (pplx) pays those there
        assert ph.fence == 0.0 or r.nodes == 1 or (ph is r.combine_phase and k.combine_blocks)


@settings(max_examples=12, deadline=None)
@given(st.sampled_from(["dgx-h100", "hgx-b200", "gb200-nvl72"]), st.booleans(),
       st.sampled_from([(1, 1), (2, 1), (1, 3), (0, 2)]),
       st.sampled_from(["one-sided", "pplx", "deepep-low-latency"]))
def test_barrier_inside_a_domain_is_the_symmetric_memory_kernel_floor(system, degraded, syncs,
                                                                      kernel):
    """One concept, one place: inside one load/store domain a phase's launch and first
    barrier cost runtime('symmetric-memory').kernel_floor for the GPU generation (2.3 us
    Hopper, 3 us Blackwell), each further barrier the runtime's flag barrier (session 23: one
    store-and-spin handoff, the largest one-way path + the load/store per-message overhead +
    the GPU side of a peer load), checked against all-pairs router latencies (brute force) on
    intact and degraded fabrics."""
    from fabric import runtime
    f = built(system)
    if degraded:
        a = f.endpoints[0]
        f = f.without(links=[(a, min(f.graph.neighbors(a), key=str))])
    k = dataclasses.replace(exchange_kernel(kernel), syncs=syncs)
    r = moe_exchange(f, "deepseek-v3", 4, 8, kernel=k, dispatch_bytes=1, combine_bytes=2,
                     kernel_gap=0.0)
    floor = runtime("symmetric-memory").kernel_floor
    arch = "blackwell" if system != "dgx-h100" else "hopper"
    arch_floor = floor[arch]
    eps = [f.endpoint_indices[i] for i in range(8)]
    one_way = max(float(f.router.latency([a], [b])[0]) for a in eps for b in eps if a != b)
    rt = one_way + transport("loadstore").per_message_overhead + peer_access_latency(arch)[0]
    for ph, n in ((r.dispatch_phase, syncs[0]), (r.combine_phase, syncs[1])):
        want = 0.0 if n == 0 else arch_floor + (n - 1) * rt
        assert ph.fixed - ph.chain - ph.fence == pytest.approx(want, rel=1e-12, abs=1e-18)
    assert any(p.name.startswith("symmetric-memory.kernel_floor") for p in r.parameters)


def test_default_kernel_gap_is_the_graph_overhead_and_bad_gap_refused():
    f = topologies.build("dgx-h100")
    kw = {"kernel": "one-sided", "dispatch_bytes": 2, "combine_bytes": 2}
    r = moe_exchange(f, "deepseek-v3", 4, 8, **kw)
    assert r.dispatch_phase.kernel_gaps == pytest.approx(2 * analysis.GRAPH_KERNEL_OVERHEAD.value)
    assert analysis.GRAPH_KERNEL_OVERHEAD in r.parameters
    with pytest.raises(SpecError, match="kernel_gap"):
        moe_exchange(f, "deepseek-v3", 4, 8, kernel_gap=-1.0, **kw)


def test_handshake_constants_are_the_nccl_runtimes_own():
    """One concept, one place: the exchange's network handshake reads NCCL's tuner
    constants from the ``nccl`` runtime profile, not a copy of them."""
    from fabric import EXCHANGE_SYNC, runtime

    rt = runtime("nccl")
    assert EXCHANGE_SYNC["base"].value == rt.base_latency[("ring", "LL")]
    assert EXCHANGE_SYNC["network"].value == rt.hw_latency[("net", "ring", "LL")]
    names = {p.name for p in rt.parameters()}
    assert {p.name for p in EXCHANGE_SYNC.values()} <= names


# -- the one-sided combine's staging copy ---------------------------------------------------------

def _perfect_router_busiest(ep, tokens, k, sources=None):
    """The largest number of distinct ranks, own included and not, that any token of the
    ``sources`` ranks (default: all) reaches under ``--perfect_router``: brute force."""
    most_all = most_remote = 0
    for r in range(ep) if sources is None else sources:
        for t in range(tokens):
            ranks = {(t * k + j + r) % ep for j in range(k)}
            most_all = max(most_all, len(ranks))
            most_remote = max(most_remote, len(ranks - {r}))
    return most_all, most_remote


def _rotation_late_valid(ep, k, slot):
    """1 if top-k ``slot`` names a rank none of the earlier slots names for every token of
    the perfect router's rotation (token t of rank r: slot j on rank (t k + r + j) mod ep),
    0 if for none: brute force over one rotation period of every rank."""
    valid = {((t * k + r + slot) % ep) not in {(t * k + r + j) % ep for j in range(slot)}
             for r in range(ep) for t in range(ep)}
    assert len(valid) == 1
    return int(valid.pop())


# -- the combine loop's other dependent loads per round (session 22) -------------------------------

#: The scoreboard walk's totals per round of each compiled combine loop (session 22; the source
#: texts of ``round_reads``): (later rounds, round 1) x (only slot 0 valid, the first batch
#: valid, then each later batch valid in turn), as counts of l2_hit / const_l15 / const_l1 /
#: l1_hit on the round's critical chain besides its peer loads; (session 26) blog18's round 1
#: with the set-up after the barrier: the output row's L1.5 fetch (one more c15). The cycles the
#: compiled loops issue beyond them (sessions 24 and 26; per valid-slot count since session 27):
#: _CYCLES below.
_WALK = {
    # (session 29) the sm_100a chains read as the walk's slopes too: a later round l1 2 + c1 2
    # with slot 0 alone and l1 4 + c1 3 with slots 0-6 (slot 0's target-rank load and row, the
    # stride and size loads return before their consumers issue), round 1 c1 3 with slot 0 alone
    ("one-sided", "blackwell", 2): (
        ({"l1": 2, "c1": 2}, {"l1": 4, "c1": 3}, {"l1": 4, "c1": 6}),
        ({"l2": 2, "c15": 2, "c1": 3, "l1": 1}, {"l2": 2, "c15": 4, "c1": 3, "l1": 2},
         {"l2": 2, "c15": 5, "c1": 5, "l1": 2})),
    # (session 28) the sm_90a chains read as the walk's slopes; the late batch (slots 4-7) is
    # charged its least: with slot 4 its only valid slot it adds no load to either chain, so its
    # steps are empty (the third tuple the second's) and the full batch's loads are in the
    # all-8 cycle count
    ("one-sided", "hopper", 2): (
        ({"l1": 3, "c1": 1}, {"l1": 3, "c1": 1}, {"l1": 3, "c1": 1}),
        ({"l2": 2, "c15": 1, "l1": 2}, {"l2": 2, "c15": 2, "l1": 2},
         {"l2": 2, "c15": 3, "l1": 2})),
    # (session 29) TensorRT-LLM 1.3's sm_100a chains as slopes (round 1 with every valid row
    # alone on a line no load read before); each late batch charged its least
    ("one-sided-1.3", "blackwell", 2): (
        ({"l1": 2, "c1": 1}, {"l1": 2, "c1": 1}, {"l1": 2, "c1": 1}),
        ({"l2": 2, "c15": 1, "l1": 1, "c1": 2}, {"l2": 2, "c15": 2, "l1": 1, "c1": 2},
         {"l2": 2, "c15": 3, "l1": 1, "c1": 2})),
    ("one-sided-1.3", "blackwell", 1): (
        ({"l1": 4, "c1": 2}, {"l1": 4, "c1": 2}, {"l1": 4, "c1": 4}, {"l1": 4, "c1": 5}),
        ({"l2": 2, "c1": 2, "c15": 2, "l1": 2}, {"l2": 2, "c1": 2, "c15": 2, "l1": 2},
         {"l2": 2, "c1": 3, "c15": 3, "l1": 2}, {"l2": 2, "c1": 3, "c15": 4, "l1": 2})),
}
_WALK[("one-sided-1.3", "hopper", 2)] = (
    ({"l1": 2, "c1": 1}, {"l1": 2, "c1": 1}, {"l1": 3, "c1": 5}),
    ({"l2": 2, "c15": 1}, {"l2": 2, "c15": 1}, {"l2": 2, "c15": 4, "l1": 1}))
_WALK[("one-sided-1.3", "hopper", 1)] = (
    ({"l1": 2, "c1": 2}, {"l1": 4, "c1": 6}),
    ({"l2": 2, "c15": 2}, {"l2": 2, "c15": 6, "l1": 2}))
_WALK_NAMES = {"l2": "l2_hit", "c15": "const_l15", "c1": "const_l1", "l1": "l1_hit"}
#: (session 27) the cycles the compiled loops issue beyond those loads, per count of valid slots
#: 1 .. 8 (the least over the patterns of that many or more slots and the pointer rows'
#: placements; session 27): (round 1, a later round)
_CYCLES = {
    ("one-sided", "blackwell", 2): ((190, 190, 190, 190, 190, 190, 190, 360),
                                    (274, 274, 274, 274, 274, 275, 275, 383)),
    ("one-sided", "hopper", 2): ((160, 160, 160, 203, 203, 350, 591, 730),
                                 (244, 244, 244, 244, 248, 326, 498, 567)),
    ("one-sided-1.3", "blackwell", 2): ((253, 253, 326, 342, 362, 389, 431, 475),
                                        (535, 535, 567, 594, 629, 672, 729, 788)),
    ("one-sided-1.3", "blackwell", 1): ((514, 514, 514, 646, 779, 920, 1162, 1348),
                                        (625, 625, 625, 761, 891, 1031, 1189, 1375)),
}


def _round_reads_ref(kernel, arch, element, rounds, distinct, late):
    """Seconds the walk's chains add to a pull of ``rounds`` rounds beyond the peer trips and
    what the combine chain (round 1: two L2 metadata loads, one L1.5 row) and the late batches'
    row fetch (``late`` x one L1.5) charge: the walk's totals by hand, between its only-slot-0
    and first-batch-valid ends linear in the token's distinct ranks, each later batch's part
    weighted by the trips it makes (0 .. 1 each, in turn)."""
    if (kernel, arch, element) not in _WALK or rounds < 1:
        return 0.0
    lat = EXCHANGE_LATENCY[arch]

    def cost(counts):
        return sum(n * lat[_WALK_NAMES[key]].value for key, n in counts.items())

    v = min(max((distinct - 1) / 7, 0.0), 1.0)
    d = min(max(distinct, 1.0), 8.0)
    total = 0.0
    for i, (walk, times) in enumerate(zip(_WALK[(kernel, arch, element)], (rounds - 1, 1))):
        t = (1 - v) * cost(walk[0]) + v * cost(walk[1])
        for j in range(len(walk) - 2):
            t += min(max(late - j, 0.0), 1.0) * (cost(walk[j + 2]) - cost(walk[j + 1]))
        if (kernel, arch, element) in _CYCLES:
            per = _CYCLES[(kernel, arch, element)][1 - i]
            lo = int(d)
            cyc = per[lo - 1] + (d - lo) * (per[min(lo, 7)] - per[lo - 1])
            t += cyc * lat["cycle"].value
        total += times * t
    charged = 2 * lat["l2_hit"].value + (1 + late) * lat["const_l15"].value
    return total - charged


def _perfect_router_received(ep, tokens, k):
    """Slots each rank receives under TensorRT-LLM's ``--perfect_router`` (bench_moe_comm.py:
    slot ``j`` of token ``t`` on rank ``r`` goes to rank ``(t*k + j + r) % ep``), one per
    (token, target rank) as the dispatch de-duplicates, own rank included: brute force."""
    received = [0] * ep
    for r in range(ep):
        for t in range(tokens):
            for q in {(t * k + j + r) % ep for j in range(k)}:
                received[q] += 1
    return received


def _staging_slot(hidden, wire, source=2):
    """Brute force over one valid slot of TensorRT-LLM's prepare-combine kernel (256
    threads, payload outside the workspace): bytes read, bytes written and the slowest
    thread's rounds. ``wire`` (bytes per element) below ``source`` (the BF16 MoE output) is
    the low-precision path: per round each thread loads ``vec`` source elements (the widest
    of 16, 8, 4, 2, 1 dividing ``hidden``), syncs, casts and stores ``vec`` FP8 bytes;
    otherwise a byte copy of the token at the combine's own bytes in 16-B vectors.
    ``wire`` above 16 is bytes per token (a plain copy)."""
    threads = 256
    if wire <= 16 and wire < source:
        vec = next(v for v in (16, 8, 4, 2, 1) if hidden % v == 0)
        read = written = 0
        for t in range(threads):
            for e in range(t * vec, hidden, threads * vec):
                read += vec * source
                written += vec * wire
        rounds = max(len(range(t * vec, hidden, threads * vec)) for t in range(threads))
        return read, written, rounds
    nbytes = wire * hidden if wire <= 16 else wire
    moved = sum(min(16, nbytes - o) for t in range(threads)
                for o in range(t * 16, nbytes, threads * 16))
    return moved, moved, _loop_steps(nbytes, threads, 16)


@settings(max_examples=14, deadline=None)
@given(st.sampled_from([2, 4, 8, 16, 32, 64]), st.sampled_from([1, 3, 16, 128]),
       st.sampled_from([1, 2, 4, 7168 * 2 + 16]), st.booleans())
def test_one_sided_combine_stages_every_received_copy_through_hbm(ep, tokens, nbytes, degraded):
    """TensorRT-LLM's prepare-combine kernel stages every valid received slot of the MoE
    output into the symmetric buffer (read + write through HBM) before the combine's
    barrier: the combine's copy is slots received x (bytes read + bytes written) per slot /
    HBM bandwidth for every rank (brute force over the perfect router and over the
    kernel's per-slot loop: a plain copy reads and writes the combine bytes, the FP8
    low-precision cast reads the BF16 output and writes FP8), a local cost that a cut
    scale-up link does not change; the dispatch stages nothing, and the copy adds to the
    time one for one."""
    from fabric import chip_spec
    f = fidelity_moe.nvl72()
    if degraded:
        a = f.endpoints[0]
        f = f.without(links=[(a, min(f.graph.neighbors(a), key=str))])
    kw = {"dispatch_bytes": 2, "combine_bytes": nbytes, "routing": "balanced"}
    r = moe_exchange(f, "deepseek-v3", tokens, ep, kernel="one-sided", **kw)
    received = _perfect_router_received(ep, tokens, model_config("deepseek-v3").experts_per_token)
    assert len(set(received)) == 1               # every rank receives the same
    read, written, _ = _staging_slot(7168, nbytes)
    want = received[0] * (read + written) / chip_spec(f.chip).hbm_bandwidth
    assert r.combine_phase.local_copy == pytest.approx(want, rel=1e-12)
    assert r.dispatch_phase.local_copy == 0.0
    bare = dataclasses.replace(exchange_kernel("one-sided"), staging_copy=False)
    r0 = moe_exchange(f, "deepseek-v3", tokens, ep, kernel=bare, **kw)
    assert r.combine - r0.combine == pytest.approx(want, rel=1e-9)
    assert r.dispatch == r0.dispatch
    assert "one-sided.staging_copy" in [p.name for p in r.parameters]


def _warp_loop_passes(ep, lanes=32):
    """Brute force: the passes of the slowest lane of one warp whose lane l walks the EP
    ranks l, l + lanes, l + 2 lanes, ... below ep (the barriers' per-peer loops)."""
    return max(sum(1 for _ in range(lane, ep, lanes)) for lane in range(lanes))


def _pointer_groups(slot_ranks, together):
    """Brute force of the dispatch's pointer-row loads as compiled (session 21 SASS): walking
    the token's top-k slots in order, a slot whose rank an earlier slot holds is skipped (its
    pointer is never loaded); the valid slots among the first ``together`` slots load their
    rows together (one wait), every later valid slot waits for the one before. Returns the
    number of waits."""
    seen, waits, first_group = set(), 0, False
    for slot, rank in enumerate(slot_ranks):
        if rank in seen:
            continue
        seen.add(rank)
        if slot < together:
            first_group = True
        else:
            waits += 1
    return waits + first_group


def _brute_chain(ep, k, nbytes, table, l2_flushed=True, together=1):
    """One block's serial chain counted by hand from TensorRT-LLM's kernels (579435f9): the
    prepare kernel bumps the epoch (a dependent load), the dispatch loads the expert ids, claims one slot per distinct target rank of its token
    under the perfect router (enumerated), copies the token in 256 x 16 B rounds (a load
    each) and then its two small payloads (expert ids, router weights: one round each),
    then the counter atomic and two counter reads; the combine reads the counters, stages
    the token in rounds of L2 loads, then reads the token's routing metadata (L2). Beyond 32
    ranks each further pass of the barriers' one-warp per-peer loops (brute-force lane loop)
    adds a counter load and a flag poll to the dispatch, a flag poll to the combine (L2).
    Session 21: before each of its three payloads the dispatch loads each valid slot's
    pointer row from the kernel's parameters (:func:`_pointer_groups`, ``together`` slots at
    once: 2 on Hopper, 1 on Blackwell): the first payload's rows from the constant L1.5, the
    two small payloads' from the constant L1; the combine one L1.5 fetch before round 1.
    Session 22 (the claim loop's SASS): each slot after the first loads its expert id after the
    previous slot's atomic (an L1 hit), and each valid slot reloads the counters' base from the
    parameters (a constant-L1 hit) before its atomic. Session 25 (the same loop's issue
    cycles): each of the k slots schedules 125 cycles beyond those loads; the payload loop
    333 a payload plus 25 per pointer-row wait after its first, 97 per round after a payload's
    first and 105 once. Session 26 (the same builds): the dispatch's prepare kernel 89 cycles,
    its last block from the copy's barrier to the release fence 233, the sanitize kernel 164,
    each once, and its per-peer loops 138 per further lane pass; session 27: the combine
    barrier's two loops 123 per further lane pass."""
    first = table["hbm_load" if l2_flushed else "l2_hit"].value
    targets = len({(0 * k + j + 0) % ep for j in range(k)})     # token 0 of rank 0
    waits = _pointer_groups([(0 * k + j + 0) % ep for j in range(k)], together)
    pointers = waits * (table["const_l15"].value + 2 * table["const_l1"].value)
    rounds = _loop_steps(nbytes, 256, 16)
    payloads = [nbytes, k * 4, k * 4]        # hidden, token_selected_experts, token_final_scales
    copy_rounds = sum(_loop_steps(b, 256, 16) for b in payloads)
    epoch = first                            # prepare kernel: flag_val = flag_val + 1 (cold)
    claims = ((k - 1) * table["l1_hit"].value + table["const_l15"].value
              + (targets - 1) * table["const_l1"].value + k * 125 * table["cycle"].value)
    # before each payload's rows its bytes per token (a constant load, waited): the first
    # payload's line from the L1.5, the two small payloads' from the constant L1
    sizes = table["const_l15"].value + 2 * table["const_l1"].value
    per_payload = 333 + 25 * (waits - 1)
    claims += (3 * per_payload + 97 * (rounds - 1) + 105) * table["cycle"].value
    claims += (89 + 233 + 164) * table["cycle"].value
    dispatch = (epoch + first + targets * table["l2_atomic"].value + claims + sizes
                + copy_rounds * first
                + table["l2_atomic"].value + 2 * table["l2_hit"].value + pointers)
    # prepare-combine: epoch bump (L2, read by the dispatch barrier), counters, staging rounds;
    # combine kernel: the token's routing metadata before its first pull, two dependent loads
    # as compiled (send_indices, then target_ranks predicated on it: session 17's SASS)
    # session 25: the staging kernel's own code beyond those loads, 294 cycles
    combine = (table["l2_hit"].value + table["l2_hit"].value + rounds * table["l2_hit"].value
               + 294 * table["cycle"].value
               + 2 * table["l2_hit"].value + table["const_l15"].value)
    passes = _warp_loop_passes(ep) - 1
    return (dispatch + passes * (2 * table["l2_hit"].value + 138 * table["cycle"].value),
            combine + passes * (table["l2_hit"].value + 123 * table["cycle"].value))


@settings(max_examples=14, deadline=None)
@given(st.sampled_from([2, 4, 8, 16, 32, 64]), st.sampled_from([1, 16, 512]), st.booleans(),
       st.sampled_from(["gb200-nvl72", "nvl72:chip=h100"]), st.booleans())
def test_one_sided_phase_is_the_sum_of_its_counted_pieces(ep, tokens, degraded, system,
                                                          l2_flushed):
    """Every piece counted from TensorRT-LLM's code, against its own reference, over EP
    widths, token counts, Blackwell and Hopper racks, intact or degraded: dispatch = kernel
    floor (push + barrier) + 2 graph nodes (prepare, sanitize) + one block's serial chain
    (brute-force count x the generation's published latencies) + the push; combine = kernel
    floor (barrier + pull) + 1 graph node (prepare) + its chain + max(the pull's bandwidth
    time, rounds x (the worst EP pair's round trip + the rest of a measured peer load)) +
    the staging copy."""
    from fabric import chip_spec, runtime
    f = built(system)
    if degraded:
        a = f.endpoints[1]
        f = f.without(links=[(a, min(f.graph.neighbors(a), key=str))])
    r = moe_exchange(f, "deepseek-v3", tokens, ep, kernel="one-sided", dispatch_bytes=2,
                     combine_bytes=2, routing="balanced", l2_flushed=l2_flushed)
    arch = "blackwell" if system == "gb200-nvl72" else "hopper"
    table = EXCHANGE_LATENCY[arch]
    floor = runtime("symmetric-memory").kernel_floor[arch]
    node = analysis.GRAPH_KERNEL_OVERHEAD.value
    chain_d, chain_c = _brute_chain(ep, 8, 7168 * 2, table, l2_flushed,
                                    together=2 if arch == "hopper" else 1)
    d, c = r.dispatch_phase, r.combine_phase
    tech = "nvlink5" if arch == "blackwell" else "nvlink4"
    access = table["peer_load"].value - 4 * link_tech(tech).latency
    pairs = np.array(list(itertools.permutations([f.endpoint_indices[i] for i in range(ep)], 2)))
    # every ordered pair's router latency there and back, worst pair
    rt = float(np.max(f.router.latency(pairs[:, 0], pairs[:, 1])
                      + f.router.latency(pairs[:, 1], pairs[:, 0])))
    assert d.chain == pytest.approx(chain_d, rel=1e-12)
    assert c.chain == pytest.approx(chain_c, rel=1e-12)
    # the dispatch's fence.release.sys after its recv_counters stores: one peer round trip;
    # the combine has no fence
    assert d.fence == pytest.approx(rt + access, rel=1e-12)
    assert c.fence == 0.0
    assert d.fixed == pytest.approx(floor + 2 * node + chain_d + rt + access, rel=1e-12)
    assert c.fixed == pytest.approx(floor + 1 * node + chain_c, rel=1e-12)
    rounds = analysis.pull_rounds(7168 * 2, 256, 16)
    # one block per token: the busiest token's remote copies (brute force over the perfect
    # router: the dispatch waits for every rank's blocks, the combine for its own) at NCCL's
    # per-block rate
    rate = EXCHANGE_BLOCK_RATE[arch].value
    block_d = _perfect_router_busiest(ep, tokens, 8)[1] * 7168 * 2 / rate
    block = _perfect_router_busiest(ep, tokens, 8, sources=[0])[1] * 7168 * 2 / rate
    # a late slot 7 also reads its destination's pointer row for the first time in round 1:
    # one constant L1.5 fetch (session 21, review S21-R2)
    late = _rotation_late_valid(ep, 8, 7) if arch == "blackwell" else float(
        any(_rotation_late_valid(ep, 8, s) for s in (4, 5, 6, 7)))
    distinct = _perfect_router_busiest(ep, tokens, 8, sources=[0])[0]
    reads = _round_reads_ref("one-sided", arch, 2, rounds, distinct, late)
    pull = rounds * (1 + late) * (rt + access) + late * table["const_l15"].value + reads + block
    assert c.pull_latency == pytest.approx(pull, rel=1e-12)
    copy = 2 * tokens * min(8, ep) * 7168 * 2 / chip_spec(f.chip).hbm_bandwidth
    assert c.local_copy == pytest.approx(copy, rel=1e-12)
    assert d.time == pytest.approx(d.fixed + max(d.scaleup, block_d), rel=1e-12)
    assert c.time == pytest.approx(c.fixed + max(c.scaleup + rt + access, pull) + copy,
                                   rel=1e-12)
    names = {p.name for p in r.parameters}
    assert {f"exchange.latency.{arch}.{n}" for n in ("hbm_load", "l2_atomic", "l2_hit",
                                                      "peer_load")} - (
        set() if l2_flushed else {f"exchange.latency.{arch}.hbm_load"}) <= names


def test_chain_latencies_are_sourced_per_generation():
    """Each latency is a Parameter in seconds with a source, for both generations; the
    Blackwell HBM and L1 figures say they are carried from Hopper."""
    for table in EXCHANGE_LATENCY.values():
        assert set(table) == {"hbm_load", "l2_hit", "l2_atomic", "l1_hit", "const_l1",
                              "const_l15", "shared_load", "peer_load", "cycle"}
        for name, p in table.items():
            # one clock cycle (the unit of compiled stall counts, session 22); a memory access
            # takes more
            low = 0.1e-9 if name == "cycle" else 10e-9
            assert p.unit == "s" and low < p.value < 5e-6 and len(p.source) > 60
        assert table["cycle"].value < table["const_l1"].value
    assert EXCHANGE_LATENCY["blackwell"]["cycle"].source.startswith("assumption")
    # session 30: a B200 pointer chase (markdewing/AI_kernels), no longer Hopper's carried
    assert "markdewing/AI_kernels" in EXCHANGE_LATENCY["blackwell"]["hbm_load"].source
    assert EXCHANGE_LATENCY["blackwell"]["l1_hit"].source.startswith("assumption")
    for name in ("const_l1", "const_l15", "shared_load"):
        assert EXCHANGE_LATENCY["blackwell"][name].source.startswith("assumption")
        assert "mt4g" in EXCHANGE_LATENCY["hopper"][name].source
    # the sourced orders hold: L1 hit < L2 hit < HBM load < peer load; the constant L1 hit
    # below the L1.5's, and that below an L2 hit
    for table in EXCHANGE_LATENCY.values():
        assert (table["l1_hit"].value < table["l2_hit"].value < table["hbm_load"].value
                < table["peer_load"].value)
        assert table["const_l1"].value < table["const_l15"].value < table["l2_hit"].value


def test_warm_l2_prices_the_first_touches_as_l2_hits_and_bad_flag_refused():
    """l2_flushed=False (a decode step: the token was just written) makes exactly the
    chain's HBM loads L2 hits: epoch + expert ids + rounds + 2 small payloads of them in the
    dispatch, none in the combine."""
    f = fidelity_moe.nvl72()
    kw = {"kernel": "one-sided", "dispatch_bytes": 2, "combine_bytes": 2, "routing": "balanced"}
    cold = moe_exchange(f, "deepseek-v3", 4, 8, **kw)
    warm = moe_exchange(f, "deepseek-v3", 4, 8, l2_flushed=False, **kw)
    t = EXCHANGE_LATENCY["blackwell"]
    want = (1 + 1 + 4 + 2) * (t["hbm_load"].value - t["l2_hit"].value)
    assert cold.dispatch - warm.dispatch == pytest.approx(want, rel=1e-9)
    assert cold.combine == warm.combine
    with pytest.raises(TypeError, match="l2_flushed"):
        moe_exchange(f, "deepseek-v3", 4, 8, l2_flushed="no", **kw)


@pytest.mark.parametrize("chain, match", [
    ((("hbm_load", "one"),), "pair"),
    (((("dram", "one"),), ()), "chain step"),
    (((("peer_load", "one"),), ()), "chain step"),
    (((("l2_hit", "twice"),), ()), "chain step"),
])
def test_chain_profile_is_validated(chain, match):
    with pytest.raises(ValueError, match=match):
        dataclasses.replace(exchange_kernel("one-sided"), chain=chain)
    with pytest.raises(ValueError, match="rounds"):
        dataclasses.replace(exchange_kernel("pplx"), chain=((("l2_hit", "rounds"),), ()))


# -- release fences ------------------------------------------------------------------------------

@settings(max_examples=20, deadline=None)
@given(st.sampled_from(["dgx-h100", "hgx-b200", "gb200-nvl72", "nvl72:chip=h100"]),
       st.booleans(), st.sampled_from(["one-sided", "deepep-low-latency", "deepep-normal",
                                       "pplx"]),
       st.sampled_from([1, 2, 5, 8]), st.sampled_from([1, 64]))
def test_release_fence_is_one_peer_round_trip(system, degraded, kernel, ep, tokens):
    """A phase that releases pushed peer stores before its flag pays one peer round trip:
    the worst EP pair's router latency there and back (brute force over ordered pairs) plus
    the rest of a measured peer load (closed form: peer_load - 4 x link latency); a phase
    without a fence in the kernel's code (the one-sided combine) pays nothing, nor does a
    single rank; switching the fence off lowers the phase by exactly that much. A combine
    whose blocks send their copies one after another, each released by its own fence (pplx:
    ``combine_blocks``), pays one per copy to another rank of its slowest block: the
    expected largest of Binomial(copies of the fullest blocks, (ep - 1) / ep) over them,
    between its copies (interleaved: a floor of the transfer, lead's rule S17-R1)."""
    f = built(system)
    if degraded:
        a = f.endpoints[1]
        f = f.without(links=[(a, min(f.graph.neighbors(a), key=str))])
    k = exchange_kernel(kernel)
    kw = {"dispatch_bytes": 1, "combine_bytes": 2, "kernel_gap": 0.0}
    r = moe_exchange(f, "deepseek-v3", tokens, ep, kernel=k, **kw)
    r0 = moe_exchange(f, "deepseek-v3", tokens, ep,
                      kernel=dataclasses.replace(k, release_fence=(False, False)), **kw)
    arch = "hopper" if system in ("dgx-h100", "nvl72:chip=h100") else "blackwell"
    tech = "nvlink5" if arch == "blackwell" else "nvlink4"
    access = EXCHANGE_LATENCY[arch]["peer_load"].value - 4 * link_tech(tech).latency
    trip = _brute_round_trip(f, ep) + access if ep > 1 else 0.0
    from analysis._moe_exchange import expected_max
    fences = [1.0, 1.0]
    if k.combine_blocks and ep > 1:
        copies = tokens * 8                                 # deepseek-v3: top-8
        blocks = min(k.combine_blocks, 256 * tokens)
        most = -(-copies // blocks)
        full = copies - (most - 1) * blocks
        p = (ep - 1) / ep
        pmf = [math.comb(most, j) * p ** j * (1 - p) ** (most - j) for j in range(most + 1)]
        fences[1] = expected_max(pmf, full)
    for ph, ph0, fenced, n in ((r.dispatch_phase, r0.dispatch_phase, k.release_fence[0],
                                fences[0]),
                               (r.combine_phase, r0.combine_phase, k.release_fence[1],
                                fences[1])):
        want = trip * n if fenced else 0.0
        if k.combine_blocks and ph is r.combine_phase:
            # pplx: each fenced copy is first the put's warp copy, one dependent L2 load per
            # 512 B of the BF16 token (session 18), each with the cycles its compiled loop
            # schedules beyond the load (put_cycles, session 22), so the fence and the copy go
            # together
            if k.put_vector and ep > 1:
                lat = EXCHANGE_LATENCY[arch]
                want = (trip + math.ceil(2 * 7168 / k.put_vector)
                        * (lat["l2_hit"].value + k.cycle("put_cycles", 1) * lat["cycle"].value)) * n
                if k.cycle("copy_cycles", 1):
                    # session 23: its put path and signal, and the signal's peer pointer
                    # reloaded from L2 after the fence
                    want += (lat["l2_hit"].value + k.cycle("copy_cycles", 1)[2] * lat["cycle"].value) * n
            # its fences run between its copies: the transfer's floor, not the fixed time
            assert ph.fence == 0.0 and ph.fixed == pytest.approx(ph0.fixed, rel=1e-12)
            assert ph.interleaved - ph0.interleaved == pytest.approx(want, rel=1e-12,
                                                                     abs=1e-15)
            assert ph.transfer == pytest.approx(max(ph0.transfer, ph.interleaved), rel=1e-12)
            continue
        assert ph.fence == pytest.approx(want, rel=1e-12, abs=1e-18)
        assert ph.fixed - ph0.fixed == pytest.approx(want, rel=1e-12, abs=1e-15)
        assert ph.time - ph0.time == pytest.approx(want, rel=1e-12, abs=1e-15)
    assert k.release_fence == {"one-sided": (True, False)}.get(kernel, (True, True))
    if any(k.release_fence):
        assert f"{kernel}.release_fence" in {p.name for p in k.parameters()}


def test_release_fence_not_charged_across_the_network_and_validated():
    """Across the network (or over RDMA alone) the handshake is EXCHANGE_SYNC's assumption,
    which stands for the whole ordering: no fence is added there."""
    for kernel in ("deepep-low-latency", "deepep-normal"):
        r = moe_exchange(h800(2), "deepseek-v3", 64, 16, kernel=kernel, dispatch_bytes=1,
                         combine_bytes=2)
        assert r.nodes == 2
        assert r.dispatch_phase.fence == r.combine_phase.fence == 0.0
    kw = {"kernel": "deepep-low-latency", "dispatch_bytes": 1, "combine_bytes": 2}
    nvl = moe_exchange(h800(1), "deepseek-v3", 64, 8, **kw)
    r = moe_exchange(h800(1), "deepseek-v3", 64, 8, transport="rdma", **kw)
    assert nvl.dispatch_phase.fence > 0 and nvl.combine_phase.fence > 0
    assert r.dispatch_phase.fence == r.combine_phase.fence == 0.0
    for bad, error in (((True,), ValueError), ((1, 0), TypeError), ([True, False], TypeError),
                       ("yes", TypeError)):   # session 38: a wrong kind is a TypeError (STYLE)
        with pytest.raises(error, match="release_fence"):
            dataclasses.replace(exchange_kernel("one-sided"), release_fence=bad)


# -- one block per token -------------------------------------------------------------------------

def test_block_rate_is_nccls_per_block_figure():
    """The per-block rate is NCCL's own smBw for its symmetric load/store kernels
    (src/sym_kernels.cc: 44 GiB/s Hopper non-all-reduce, 55 GiB/s Blackwell)."""
    assert EXCHANGE_BLOCK_RATE["hopper"].value == 44 * 2**30
    assert EXCHANGE_BLOCK_RATE["blackwell"].value == 55 * 2**30
    for p in EXCHANGE_BLOCK_RATE.values():
        assert p.unit == "B/s" and "sym_kernels.cc" in p.source
        # the borrowed figure is for NCCL's 512-thread blocks; TensorRT-LLM's have 256: the
        # Parameter states the assumption that bridges them
        assert "ASSUMPTION" in p.source and "512" in p.source and "256" in p.source


def _count_pmfs(E, k, ep):
    """Exact distributions of the distinct ranks (own included, and not) that ``k`` distinct
    uniform experts of ``E`` reach, ``E / ep`` per rank: dynamic programming over the ranks
    with integer counts (each rank contributes 0 experts, or m >= 1 of its s, in C(s, m)
    ways), an enumeration independent of the model's inclusion-exclusion."""
    s = E // ep
    # ways[(hit_all, hit_remote, chosen)]
    ways = {(0, 0, 0): 1}
    for rank in range(ep):
        nxt = {}
        for (a, b, c), w in ways.items():
            for m in range(min(s, k - c) + 1):
                key = (a + (m > 0), b + (m > 0 and rank > 0), c + m)
                nxt[key] = nxt.get(key, 0) + w * math.comb(s, m)
        ways = nxt
    total = math.comb(E, k)
    pa, pr = [0.0] * (k + 1), [0.0] * (k + 1)
    for (a, b, c), w in ways.items():
        if c == k:
            pa[a] += w / total
            pr[b] += w / total
    return pa, pr


def _emax(pmf, n):
    """E[max of n iid draws] from the definition: sum over j of P(max >= j)."""
    cdf = list(itertools.accumulate(pmf))
    return sum(1 - min(1.0, cdf[j - 1]) ** n for j in range(1, len(pmf)))


@settings(max_examples=20, deadline=None)
@given(st.sampled_from(["dgx-h100", "gb200-nvl72", "nvl72:chip=h100"]), st.booleans(),
       st.sampled_from([2, 4, 8, 16]), st.sampled_from([1, 2, 16, 512]),
       st.sampled_from(["balanced", "uniform"]))
def test_one_block_moves_its_token_at_the_block_rate(system, degraded, ep, tokens, routing):
    """One-sided (one block per token): the dispatch's transfer is the larger of the links'
    time and the busiest token's remote copies at one block's rate (the kernel ends with its
    slowest block, and the dispatch's closing barrier waits for every rank's blocks: the
    busiest of tokens x ep tokens; the combine's blocks pull the rank's own tokens: the
    busiest of its tokens). The reference: the perfect router brute-forced token by token,
    and for uniform routing the exact distinct-rank distribution by dynamic programming over
    the ranks (integer counts) and the expected maximum from its definition. The pulled
    combine adds its busiest token's bytes at the block's rate to its round trips;
    switching it off (block_per_token=False) gives the links alone, on intact and degraded
    racks."""
    f = built(system)
    if degraded:
        a = f.endpoints[1]
        f = f.without(links=[(a, min(f.graph.neighbors(a), key=str))])
    ep = min(ep, f.n_endpoints)
    kw = {"dispatch_bytes": 1, "combine_bytes": 2, "routing": routing, "kernel_gap": 0.0}
    k = exchange_kernel("one-sided")
    r = moe_exchange(f, "deepseek-v3", tokens, ep, kernel=k, **kw)
    r0 = moe_exchange(f, "deepseek-v3", tokens, ep,
                      kernel=dataclasses.replace(k, block_per_token=False), **kw)
    arch = "blackwell" if system == "gb200-nvl72" else "hopper"
    rate = EXCHANGE_BLOCK_RATE[arch].value
    experts, topk = 256, 8
    if routing == "balanced":
        remote_d = _perfect_router_busiest(ep, tokens, topk)[1]
        remote_c = _perfect_router_busiest(ep, tokens, topk, sources=[0])[1]
    else:
        pr = _count_pmfs(experts, topk, ep)[1]
        remote_d, remote_c = _emax(pr, tokens * ep), _emax(pr, tokens)
    d, d0 = r.dispatch_phase, r0.dispatch_phase
    block = remote_d * r.dispatch_bytes / rate
    assert d.transfer == pytest.approx(max(d0.transfer, block), rel=1e-9)
    assert (d.bottleneck == "block rate") == (block > d0.transfer)
    c, c0 = r.combine_phase, r0.combine_phase
    assert c.pull_latency - c0.pull_latency == pytest.approx(
        remote_c * r.combine_bytes / rate, rel=1e-9)
    assert r.dispatch >= r0.dispatch and r.combine >= r0.combine


@settings(max_examples=30, deadline=None)
@given(st.sampled_from([(8, 2), (8, 4), (12, 3), (12, 4), (16, 4), (16, 8)]),
       st.integers(1, 4), st.integers(1, 3))
def test_reach_distribution_matches_enumeration(shape, k, m):
    """The distinct ranks a token reaches (own included, and not: rank 0 sending), against
    every k-subset enumerated, uniform and node-limited (M nodes chosen, then k experts among
    theirs; 2 nodes of ep / 2 ranks, or 1 for odd ep); its means are expert_reach's."""
    from analysis._moe_exchange import reach_distribution
    E, ep = shape
    nodes = 2 if ep % 2 == 0 else 1        # the ranks fill their nodes equally
    per_rank, per_node = E // ep, E // nodes
    for mm in (None, m):
        if mm is not None and mm * per_node < k:
            continue
        routing = "uniform" if mm is None else f"node-limited:{mm}"
        node_sets = ([None] if mm is None or mm >= nodes
                     else list(itertools.combinations(range(nodes), mm)))
        pa, pr = [0] * (k + 1), [0] * (k + 1)
        total = 0
        for ns in node_sets:
            pool = range(E) if ns is None else [e for e in range(E) if e // per_node in ns]
            for pick in itertools.combinations(pool, k):
                ranks = {e // per_rank for e in pick}
                pa[len(ranks)] += 1
                pr[len(ranks - {0})] += 1
                total += 1
        got_a, got_r = reach_distribution(E, k, ep, nodes, routing)
        want_a = [x / total for x in pa] + [0.0] * (len(got_a) - len(pa))
        want_r = [x / total for x in pr] + [0.0] * (len(got_r) - len(pr))
        assert got_a == pytest.approx(want_a[:len(got_a)], abs=1e-12)
        assert got_r == pytest.approx(want_r[:len(got_r)], abs=1e-12)
        assert sum(want_a[len(got_a):]) == sum(want_r[len(got_r):]) == 0
        p_rank = expert_reach(E, k, ep, nodes, routing)[0]
        assert sum(j * p for j, p in enumerate(got_a)) == pytest.approx(ep * p_rank, abs=1e-12)
        assert sum(j * p for j, p in enumerate(got_r)) == pytest.approx((ep - 1) * p_rank,
                                                                        abs=1e-12)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(0, 5), min_size=1, max_size=5), st.integers(1, 4))
def test_expected_max_matches_enumeration(weights, n):
    """The expected largest of n draws against every n-tuple enumerated."""
    from analysis._moe_exchange import expected_max
    if not sum(weights):
        weights = [*weights[:-1], 1]
    pmf = [w / sum(weights) for w in weights]
    want = sum(math.prod(pmf[j] for j in tup) * max(tup)
               for tup in itertools.product(range(len(pmf)), repeat=n))
    assert expected_max(pmf, n) == pytest.approx(want, abs=1e-12)
    with pytest.raises(ValueError, match="n must be"):
        expected_max(pmf, 0)


@settings(max_examples=30, deadline=None)
@given(st.sampled_from([2, 3, 4, 6, 8, 12, 16, 32, 64]), st.sampled_from([1, 2, 4, 6, 8]),
       st.integers(1, 40))
def test_busiest_token_under_the_perfect_router(ep, k, tokens):
    """Balanced routing: the busiest token of every rank's first `tokens` tokens, against the
    perfect router brute-forced (bench_moe_comm.py's schedule); it reaches at least the
    average and never more than min(k, ep) ranks (ep - 1 remote)."""
    from analysis._moe_exchange import busiest_token
    got = busiest_token(256, k, ep, 1, "balanced", tokens, ep)
    assert got == _perfect_router_busiest(ep, tokens, k)
    assert got == busiest_token(256, k, ep, 1, "balanced", tokens, 1)   # same for every rank
    p_rank = expert_reach(256, k, ep, 1, "balanced")[0]
    assert ep * p_rank <= got[0] <= min(k, ep)
    assert got[1] <= min(k, ep - 1)


@settings(max_examples=20, deadline=None)
@given(st.sampled_from([(256, 8, 8), (256, 8, 16), (256, 8, 72), (160, 6, 7), (64, 4, 64)]),
       st.integers(1, 5000))
def test_busiest_token_grows_with_tokens_to_the_largest_reach(shape, tokens):
    """Uniform routing: the busiest token's count is at least the mean, grows with the
    number of tokens and never passes min(k, ep) (ep - 1 remote); one token is the mean."""
    from analysis._moe_exchange import busiest_token
    E, k, ep = shape
    p_rank = expert_reach(E, k, ep, 1)[0]
    one = busiest_token(E, k, ep, 1, "uniform", 1)
    assert one == pytest.approx((ep * p_rank, (ep - 1) * p_rank), rel=1e-9)
    a, b = busiest_token(E, k, ep, 1, "uniform", tokens)
    a2, b2 = busiest_token(E, k, ep, 1, "uniform", tokens + 1)
    assert one[0] - 1e-9 <= a <= a2 + 1e-12 <= min(k, ep) + 1e-9
    assert one[1] - 1e-9 <= b <= b2 + 1e-12 <= min(k, ep - 1) + 1e-9


def test_block_rate_only_for_block_per_token_kernels():
    """DeepEP and pplx spread a token over many warps and SMs: no block floor; the profile
    flag is validated."""
    f = topologies.build("dgx-h100")
    for kernel in ("deepep-low-latency", "deepep-normal", "pplx"):
        assert not exchange_kernel(kernel).block_per_token
        r = moe_exchange(f, "deepseek-v3", 1, 8, kernel=kernel, dispatch_bytes=1,
                         combine_bytes=2)
        assert r.dispatch_phase.bottleneck != "block rate"
        assert "exchange.block_rate.hopper" not in {p.name for p in r.parameters}
    r = moe_exchange(f, "deepseek-v3", 1, 8, kernel="one-sided", dispatch_bytes=2,
                     combine_bytes=2, routing="balanced")
    assert r.dispatch_phase.bottleneck == "block rate"
    assert "exchange.block_rate.hopper" in {p.name for p in r.parameters}
    with pytest.raises(TypeError, match="block_per_token"):
        dataclasses.replace(exchange_kernel("one-sided"), block_per_token=1)


# -- which transport a published row used, from the row itself -----------------------------------

def _nic_line_rate(f, chip):
    """Bytes/s of the chip's NIC: the narrowest link on its way to the network."""
    G = f.graph
    nic = next(nb for nb in G.neighbors(chip) if G.nodes[nb].get("kind") == "nic")
    return min(float(d["bandwidth"]) for _, _, d in G.edges(nic, data=True))


@pytest.mark.parametrize("row_id, table, nvlink", [
    ("deepep-v1-ep8-ll-dispatch", "published", True),
    ("deepep-v1-ep8-ll-combine", "published", True),
    ("deepep-feb25-ep8-ll-rdma-dispatch", "heldout", False),
    ("deepep-feb25-ep8-ll-rdma-combine", "heldout", False),
])
def test_deepep_ep8_low_latency_transport_follows_from_the_row(row_id, table, nvlink):
    """DeepEP's low-latency table is headed 'pure RDMA', but its EP8 row of 77 / 114 us was
    published on 2025-06-05 (DeepEP de8cfca, with the news 'low-latency kernels now leverage
    NVLink as much as possible', #173; NVLink on by default since aae9fa9, 2025-05-23): the
    remote bytes it moved per second, by DeepEP's own byte count (tests/test_low_latency.py:
    every (token, expert) copy, FP8 hidden + scales + 16 B; BF16 combine), exceed what the
    rank's one 400 Gb/s NIC can carry, so the row cannot have gone through the NIC and the
    model costs it over NVLink (one node, no transport override); the February 2025 pure-RDMA
    table's EP8 row (163 / 318 us) stays under the line rate and is costed over RDMA."""
    rows = fidelity.load_rows() if table == "published" else fidelity.heldout_rows()
    row = next(r for r in rows if r["id"] == row_id)
    seconds = float(row["value"]) * 1e-6
    tokens, k, hidden, ep = 128, 8, 7168, 8
    per_copy = hidden + hidden / 128 * 4 + 16 if "dispatch" in row_id else hidden * 2
    remote = tokens * k * (ep - 1) / ep * per_copy        # uniform: 7 of 8 copies leave
    f = h800(1)
    line = _nic_line_rate(f, f.endpoints[0])
    assert line == pytest.approx(50e9)                    # 400 Gb/s
    assert (remote / seconds > line) == nvlink
    cases = fidelity_moe.CASES if table == "published" else fidelity_heldout_moe.CASES
    _, how = cases[row_id](row)
    assert ("over rdma" not in how) == nvlink
    assert how.endswith("scale-up") == nvlink and how.endswith("network") != nvlink


def test_busiest_token_takes_every_routing_spelling():
    """The one-block-per-token floors accept routing in any spelling parse_routing takes
    (a dict, an int, a tuple), with the same result as the normalised string."""
    f = fidelity_moe.nvl72()
    kw = {"kernel": "one-sided", "dispatch_bytes": 2, "combine_bytes": 2}
    want = moe_exchange(f, "deepseek-v3", 4, 8, routing="node-limited:2", **kw)
    for spelling in ({"max_nodes": 2}, 2, ("node-limited", 2)):
        r = moe_exchange(f, "deepseek-v3", 4, 8, routing=spelling, **kw)
        assert (r.dispatch, r.combine) == (want.dispatch, want.combine)
    from analysis._moe_exchange import busiest_token
    assert busiest_token(256, 8, 8, 1, {"max_nodes": 2}, 3) == busiest_token(
        256, 8, 8, 1, "node-limited:2", 3)
    for bad in (0, -1):
        with pytest.raises(ValueError, match="tokens must be"):
            busiest_token(256, 8, 8, 1, "uniform", bad)
    for bad in (1.5, True):                     # another kind: a TypeError (session 31 rule)
        with pytest.raises(TypeError, match="tokens must be"):
            busiest_token(256, 8, 8, 1, "uniform", bad)


@pytest.mark.parametrize("args, match", [
    ((256, 8, 0, 1), "ep must be an int >= 1"),            # was ZeroDivisionError
    ((256, 0, 8, 1), "k must be an int >= 1"),             # was quietly (0, 0)
    ((256, 8, -8, 1), "ep must be an int >= 1"),           # was quietly (0, 0)
    ((4, 8, 8, 1), "exceed the 4 experts"),                 # was ZeroDivisionError
    ((256, 8, 8, 3), "do not fill nodes=3 nodes equally"),  # was a pool of 8 // 3 ranks
    ((256.5, 8, 8, 1), "experts must be an int"),          # was a fractional answer
    ((256, 8, 512, 1), "ep=512 ranks exceed the 256 experts"),
])
def test_reach_helpers_refuse_counts_they_cannot_take(args, match):
    # a count of the wrong kind (256.5) is a TypeError, a bad value a SpecError (session 31)
    error = TypeError if args[0] == 256.5 else SpecError
    """The public reach helpers (review, session 7) name the bad count instead of dividing by
    zero or answering quietly for an impossible rank layout."""
    from analysis._moe_exchange import busiest_token, reach_distribution
    for call in (lambda: reach_distribution(*args, "node-limited:2"),
                 lambda: busiest_token(*args, "uniform", 4),
                 lambda: expert_reach(*args, "balanced")):
        with pytest.raises(error, match=match):
            call()


@pytest.mark.parametrize("pmf", [[], [0.5, 0.7], [-1.0, 2.0], [float("nan")], [0.2, 0.2]])
def test_expected_max_refuses_what_is_not_a_distribution(pmf):
    """expected_max took any list: [0.5, 0.7] gave 0.875 and [nan] gave 0.0 (review)."""
    from analysis._moe_exchange import expected_max
    with pytest.raises(ValueError, match="pmf must be"):
        expected_max(pmf, 3)


# -- TensorRT-LLM's low-precision (FP8) combine ----------------------------------------------------

@settings(max_examples=16, deadline=None)
@given(st.sampled_from([2, 8, 32, 64]), st.sampled_from([1, 16, 512]),
       st.sampled_from([1024, 2880, 4096, 7168]), st.booleans())
def test_fp8_combine_casts_in_staging_and_pulls_fp8(ep, tokens, hidden, degraded):
    """``use_low_precision`` (moeAlltoAllKernels.cu): the prepare-combine pass casts the BF16
    MoE output to FP8 (reads 2 B, writes 1 B per element: no scale, no amax pass, no extra
    kernel) and the combine pulls FP8. Against the brute-force slot loop and against a BF16
    combine of the same case: the staging copy is received x (2h + h) / HBM; the cast's
    rounds (16 elements per thread per round) are the chain's staging rounds and equal the
    pulled rounds of an h-byte token; the links carry half the BF16 combine's bytes; kernels,
    barriers, release fences and the dispatch are the same."""
    from fabric import chip_spec
    m = dataclasses.replace(model_config("deepseek-v3"), name=f"dsv3-h{hidden}", hidden=hidden)
    f = fidelity_moe.nvl72()
    if degraded:
        a = f.endpoints[0]
        f = f.without(links=[(a, min(f.graph.neighbors(a), key=str))])
    kw = {"dispatch_bytes": 2, "routing": "balanced"}
    fp8 = moe_exchange(f, m, tokens, ep, kernel="one-sided", combine_bytes=1, **kw)
    bf16 = moe_exchange(f, m, tokens, ep, kernel="one-sided", combine_bytes=2, **kw)
    received = _perfect_router_received(ep, tokens, m.experts_per_token)[0]
    read, written, cast_rounds = _staging_slot(hidden, 1)
    assert (read, written) == (2 * hidden, hidden)
    hbm = chip_spec(f.chip).hbm_bandwidth
    assert fp8.combine_phase.local_copy == pytest.approx(received * 3 * hidden / hbm, rel=1e-12)
    assert bf16.combine_phase.local_copy == pytest.approx(received * 4 * hidden / hbm, rel=1e-12)
    # the cast's rounds = the pulled rounds of an FP8 token = the chain's staging rounds
    assert cast_rounds == analysis.pull_rounds(hidden, 256, 16) == _loop_steps(hidden, 256, 16)
    chain, _ = exchange_kernel("one-sided").chain_latency(1, "blackwell", 0, cast_rounds,
                                                          ep=ep)
    assert fp8.combine_phase.chain == pytest.approx(chain, rel=1e-12)
    assert fp8.combine_phase.scaleup_bytes == pytest.approx(bf16.combine_phase.scaleup_bytes / 2,
                                                            rel=1e-12)
    assert fp8.combine_phase.fence == bf16.combine_phase.fence == 0.0
    assert fp8.dispatch == bf16.dispatch
    assert fp8.combine <= bf16.combine
    assert "one-sided.staging_source_bytes" in {p.name for p in fp8.parameters}


def test_staging_source_bytes_is_validated_and_sourced():
    k = exchange_kernel("one-sided")
    p = next(p for p in k.parameters() if p.name == "one-sided.staging_source_bytes")
    assert p.value == 2 and p.unit == "B" and "use_low_precision" in p.source
    assert "no scale" in p.source
    for bad in (-1, True, "2", float("nan"), float("inf")):
        # a wrong kind is a TypeError (STYLE's rule, session 32)
        with pytest.raises(ValueError if is_real(bad) else TypeError, match="staging_source_bytes"):
            dataclasses.replace(k, staging_source_bytes=bad)
    # without the staging pass there is nothing to cast: the figure is unused, not listed
    bare = dataclasses.replace(k, staging_copy=False)
    assert "one-sided.staging_source_bytes" not in {p.name for p in bare.parameters()}
    f = fidelity_moe.nvl72()
    kw = {"dispatch_bytes": 2, "combine_bytes": 1, "routing": "balanced"}
    r0 = moe_exchange(f, "deepseek-v3", 16, 8, kernel=bare, **kw)
    assert r0.combine_phase.local_copy == 0.0


@settings(max_examples=25, deadline=None)
@given(st.integers(512, 9000), st.sampled_from([1, 2]), st.sampled_from([1, 16]))
def test_odd_token_sizes_narrow_the_copy_vector(hidden, element, tokens):
    """moeAlltoAllKernels.cu picks each copy loop's vector by the token's byte alignment
    (16, 8, 4, 2 or 1 B): a hidden size 16 B does not divide takes more rounds, in the
    dispatch's copy (chain), the staging pass (chain) and the pulled combine alike. Against
    the brute-force loop count, for any hidden size and BF16/FP8 tokens."""
    m = dataclasses.replace(model_config("deepseek-v3"), name=f"dsv3-h{hidden}", hidden=hidden)
    f = fidelity_moe.nvl72()
    r = moe_exchange(f, m, tokens, 8, kernel="one-sided", dispatch_bytes=element,
                     combine_bytes=element, routing="balanced")
    k = exchange_kernel("one-sided")
    rounds = _kernel_rounds(hidden * element)
    want_d, _ = k.chain_latency(0, "blackwell", 8, rounds, slots=8)
    want_c, _ = k.chain_latency(1, "blackwell", 8, rounds, slots=8)
    assert r.dispatch_phase.chain == pytest.approx(want_d, rel=1e-12)
    assert r.combine_phase.chain == pytest.approx(want_c, rel=1e-12)
    access = EXCHANGE_LATENCY["blackwell"]["peer_load"].value - 4 * link_tech("nvlink5").latency
    from analysis import peer_round_trip
    trip = peer_round_trip(f, f.endpoints[:8]) + access
    block = 7 * hidden * element / EXCHANGE_BLOCK_RATE["blackwell"].value
    fetch = EXCHANGE_LATENCY["blackwell"]["const_l15"].value     # slot 7's row, round 1
    # the loop's other dependent loads (session 22; read on the 16-B path, charged per round)
    reads = _round_reads_ref("one-sided", "blackwell", 2, rounds, 8, 1.0)
    assert r.combine_phase.pull_latency == pytest.approx(2 * rounds * trip + fetch + reads
                                                         + block, rel=1e-12)


@settings(max_examples=20, deadline=None)
@given(st.lists(st.sampled_from([0.5, 1.0, 2.0, 1 / 16, 1 / 32, 448, 1000, 4097]), min_size=1,
                max_size=3), st.sampled_from([1, 64]))
def test_dispatch_payloads_are_copied_one_after_the_other(parts, tokens):
    """TensorRT-LLM's dispatch copies a token payload by payload (nvlink_one_sided.py: hidden,
    [scale factors], slots, [scales]; moeA2ADispatchKernel loops over payloads, each in its own
    rounds): with dispatch_bytes given as the token's payloads the chain's copy rounds are the
    sum of each payload's rounds (brute-force loop count), the traffic is their total (the same
    phase times as one payload of that size but for the chain), and one payload given alone is
    the plain number."""
    h = 7168
    f = fidelity_moe.nvl72()
    kw = {"combine_bytes": 2, "routing": "balanced"}
    r = moe_exchange(f, "deepseek-v3", tokens, 8, kernel="one-sided", dispatch_bytes=tuple(parts),
                     **kw)
    sizes = [p * h if p <= 16 else p for p in parts]
    total = sum(sizes)
    assert r.dispatch_bytes == pytest.approx(total, rel=1e-12)
    rounds = sum(_kernel_rounds(math.ceil(b)) for b in sizes)
    want, _ = exchange_kernel("one-sided").chain_latency(0, "blackwell", 8, rounds,
                                                         payloads=len(parts), slots=8)
    assert r.dispatch_phase.chain == pytest.approx(want, rel=1e-12)
    one = moe_exchange(f, "deepseek-v3", tokens, 8, kernel="one-sided", dispatch_bytes=total, **kw)
    d, d1 = r.dispatch_phase, one.dispatch_phase
    assert d.scaleup == pytest.approx(d1.scaleup, rel=1e-12)
    assert d.transfer == pytest.approx(d1.transfer, rel=1e-12)
    assert d.fixed - d.chain == pytest.approx(d1.fixed - d1.chain, rel=1e-12)
    assert r.combine == one.combine
    alone = moe_exchange(f, "deepseek-v3", tokens, 8, kernel="one-sided",
                         dispatch_bytes=(parts[0],), **kw)
    plain = moe_exchange(f, "deepseek-v3", tokens, 8, kernel="one-sided",
                         dispatch_bytes=parts[0], **kw)
    assert alone.dispatch == plain.dispatch and alone.combine == plain.combine


@pytest.mark.parametrize("bad", [(), [], (1, 0), (1, -2), (1, float("nan")), (True,), ("1",)])
def test_bad_dispatch_payloads_refused(bad):
    error = SpecError if all(map(is_real, bad)) else TypeError      # a wrong kind (s32)
    with pytest.raises(error, match="dispatch_bytes"):
        moe_exchange(fidelity_moe.nvl72(), "deepseek-v3", 4, 8, kernel="one-sided",
                     dispatch_bytes=bad, combine_bytes=2)


def test_post_quantized_rows_send_values_and_scale_factors_apart():
    """The held-out post-quant rows are expressed as the benchmark sends them: NVFP4 = 3584 B
    of values + 448 B of scale factors, MXFP8 = 7168 + 224 (blog18's byte counts), two
    payloads: one more cold HBM load in the dispatch chain than one 4032-B payload, one
    more constant-L1 read of each of the token's 8 destinations' pointer rows (session 21) and
    of the payload's bytes per token before them (session 22), and the payload loop's cycles
    for one more payload, 333 + 25 per pointer row after the first (session 25)."""
    from fidelity_heldout_moe import MXFP8_TOKEN, NVFP4_TOKEN
    assert tuple(p * 7168 for p in NVFP4_TOKEN) == (3584, 448)
    assert tuple(p * 7168 for p in MXFP8_TOKEN) == (7168, 224)
    f = fidelity_moe.nvl72()
    kw = {"combine_bytes": 2, "routing": "balanced"}
    apart = moe_exchange(f, "deepseek-v3", 1, 32, kernel="one-sided", dispatch_bytes=NVFP4_TOKEN,
                         **kw)
    one = moe_exchange(f, "deepseek-v3", 1, 32, kernel="one-sided", dispatch_bytes=4032, **kw)
    hbm = EXCHANGE_LATENCY["blackwell"]["hbm_load"].value
    const = EXCHANGE_LATENCY["blackwell"]["const_l1"].value
    cycle = EXCHANGE_LATENCY["blackwell"]["cycle"].value
    assert apart.dispatch - one.dispatch == pytest.approx(
        hbm + (8 + 1) * const + (333 + 7 * 25) * cycle, rel=1e-9)



def _without_pointer_steps(kernel):
    """The profile with its pointer-table steps taken out of both chains (the model before
    session 21's count)."""
    k = exchange_kernel(kernel)
    # the pointer rows' loads only: the slot claims' counter-base reloads and the payloads'
    # size loads (session 22) stay
    rows = ("pointer_rows", "pointer_rereads")
    chain = (tuple(step for step in k.chain[0] if step[1] not in rows),
             tuple(step for step in k.chain[1] if step != ("const_l15", "one")))
    return dataclasses.replace(k, chain=chain)


@pytest.mark.parametrize("system,ep,parts", [
    ("gb200-nvl72", 2, 2), ("gb200-nvl72", 8, 2), ("gb200-nvl72", 64, (0.5, 1 / 16)),
    ("nvl72:chip=h100", 8, 2), ("nvl72:chip=h100", 4, (0.5, 1 / 16))])
def test_dispatch_loads_each_destinations_pointer_row_in_turn(system, ep, parts):
    """Session 21, TensorRT-LLM's compiled dispatch (flashinfer 579435f9 and 5e891c6b, sm_100a
    and sm_90a): before each payload's first load the block reads every valid slot's
    destination pointer from the kernel's parameters (constant bank 0), each after the one
    before returns (Hopper: slots 0 and 1 together). Under the perfect router (brute force
    of the slots' ranks, :func:`_pointer_groups`) the dispatch is longer than the same profile
    without these steps by waits x (one L1.5 fetch for the first payload + one constant-L1
    hit for each later payload: the given parts after the first and the two small payloads),
    the combine by one L1.5 fetch before its first pulled round; both phases' Parameters list
    the constant-cache latencies."""
    f = topologies.build(system)
    arch = "blackwell" if system == "gb200-nvl72" else "hopper"
    table = EXCHANGE_LATENCY[arch]
    kw = {"dispatch_bytes": parts, "combine_bytes": 2, "routing": "balanced"}
    r = moe_exchange(f, "deepseek-v3", 1, ep, kernel="one-sided", **kw)
    r0 = moe_exchange(f, "deepseek-v3", 1, ep, kernel=_without_pointer_steps("one-sided"), **kw)
    # the busiest token of the dispatch's barrier: every rank's token 0 (the rotation is the same)
    waits = max(_pointer_groups([(j + src) % ep for j in range(8)], 2 if arch == "hopper" else 1)
                for src in range(ep))
    payloads = (len(parts) if isinstance(parts, tuple) else 1) + 2
    want = waits * (table["const_l15"].value + (payloads - 1) * table["const_l1"].value)
    assert r.dispatch - r0.dispatch == pytest.approx(want, rel=1e-9)
    assert r.combine - r0.combine == pytest.approx(table["const_l15"].value, rel=1e-9)
    names = {p.name for p in r.parameters}
    assert {f"exchange.latency.{arch}.const_l1", f"exchange.latency.{arch}.const_l15"} <= names


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 7), min_size=1, max_size=8), st.sampled_from(["blackwell", "hopper"]))
def test_pointer_loads_are_the_compiled_waits_or_fewer(slot_ranks, arch):
    """The model's count of a payload's waited pointer loads (ExchangeKernel.pointer_loads, from
    the token's distinct destinations) equals the compiled schedule's waits (brute force over
    the slots) whenever slots 0 and 1 hold different ranks (always on Blackwell), and is
    never more: a lower bound when a Hopper token repeats slot 0's rank in slot 1."""
    k = exchange_kernel("one-sided")
    together = dict(k.pointer_overlap).get(arch, 1)
    brute = _pointer_groups(slot_ranks, together)
    model = k.pointer_loads(len(set(slot_ranks)), arch)
    assert model <= brute
    if arch == "blackwell" or len(slot_ranks) < 2 or slot_ranks[0] != slot_ranks[1]:
        assert model == brute


@pytest.mark.parametrize("bad, error", [
    ((("hopper", 0),), ValueError), ((("volta", 2),), ValueError),
    ((("hopper", 2), ("hopper", 3)), ValueError),
    # session 38: a wrong kind (a bool or float count, a bare pair) is a TypeError (STYLE)
    ((("hopper", True),), TypeError), (("hopper", 2), TypeError), ((("hopper", 2.0),), TypeError)])
def test_bad_pointer_overlap_refused(bad, error):
    with pytest.raises(error, match="pointer_overlap"):
        dataclasses.replace(exchange_kernel("one-sided"), pointer_overlap=bad)


def test_pointer_overlap_is_a_sourced_parameter():
    params = {p.name: p for p in exchange_kernel("one-sided").parameters()}
    assert params["one-sided.pointer_overlap"].value == "hopper: first 2 rows together"
    assert "sm_90a" in params["one-sided.pointer_overlap"].source
    assert "LDC.64" in params["one-sided.chain"].source
    with pytest.raises(SpecError, match="payloads"):
        exchange_kernel("one-sided").chain_latency(0, "blackwell", 8, 4, payloads=0)


# -- pplx: one message per (token, expert), staged through the symmetric send buffer ---------------

@settings(max_examples=20, deadline=None)
@given(st.sampled_from([(1, 4), (2, 2), (2, 4)]), st.sampled_from([(8, 2), (8, 3), (16, 4)]),
       st.integers(1, 9))
def test_pplx_sends_one_message_per_token_and_expert(shape, experts_k, tokens):
    """Brute force of pplx-kernels' send loop (perplexityai/pplx-kernels 7af3059
    internode_scatter.cu; 2bd6e30 intra/internode_dispatch.cu): warp j of a token's block puts
    the token + a 4-B source index to the rank of its j-th expert, so two experts on one rank
    are two messages. Every k-subset of the experts (uniform routing, exact) is enumerated;
    the model's NIC bytes (across nodes) and link bytes (inside, two links per copy) are the
    expected bytes of that loop."""
    nodes, gpus = shape
    E, k = experts_k
    ep = nodes * gpus
    m = dataclasses.replace(model_config("deepseek-v3"), routed_experts=E, experts_per_token=k)
    f = topologies.rail_optimized(nodes, gpus, scaleup_links=8, chip="h100")
    r = moe_exchange(f, m, tokens, ep, kernel="pplx", dispatch_bytes=1, combine_bytes=2)
    per_rank = E // ep
    msg = m.hidden + 4
    subsets = list(itertools.combinations(range(E), k))
    # expected messages from one source rank to each destination rank, per token
    count = np.zeros(ep)
    for experts in subsets:
        for e in experts:                       # one put per (token, expert), no de-dup
            count[e // per_rank] += 1
    count /= len(subsets)
    src = 0
    remote = sum(count[d] for d in range(ep) if d // gpus != src // gpus)
    local = sum(count[d] for d in range(ep) if d // gpus == src // gpus and d != src)
    sent = [s for s, _ in r.nic_bytes.values()]
    if nodes > 1:
        assert max(sent) == pytest.approx(tokens * remote * msg, rel=1e-9)
        assert min(sent) == pytest.approx(tokens * remote * msg, rel=1e-9)
    else:
        assert not any(sent)
    assert sum(r.link_bytes.values()) == pytest.approx(2 * ep * tokens * local * msg, rel=1e-9)
    assert r.dispatch_bytes == msg and r.copies_expert == tokens * k


@settings(max_examples=15, deadline=None)
@given(st.sampled_from([1, 2]), st.sampled_from([1, 16, 128]), st.sampled_from([1, 1 + 4 / 128, 2]))
def test_pplx_stages_tokens_through_its_send_buffer(nodes, tokens, dispatch_bytes):
    """pplx's NVSHMEM kernels copy each own token into the local symmetric send buffer before
    its puts (dispatch: read + write of tokens x message bytes) and each received copy's
    expert output before it goes back (combine: read + write of tokens x k x combine bytes),
    on top of the receive parts' copies; nothing else changes."""
    f = h800(nodes)
    kw = {"dispatch_bytes": dispatch_bytes, "combine_bytes": 2}
    ep = 8 * nodes
    pplx = exchange_kernel("pplx")
    bare = dataclasses.replace(pplx, send_staging=False, staging_copy=False)
    r = moe_exchange(f, "deepseek-v3", tokens, ep, kernel=pplx, **kw)
    b = moe_exchange(f, "deepseek-v3", tokens, ep, kernel=bare, **kw)
    hbm = f.chip.hbm_bandwidth
    h = 7168
    msg = (dispatch_bytes * h) + 4
    assert r.dispatch_phase.local_copy - b.dispatch_phase.local_copy == pytest.approx(
        2 * tokens * msg / hbm, rel=1e-12)
    assert r.combine_phase.local_copy - b.combine_phase.local_copy == pytest.approx(
        2 * tokens * 8 * 2 * h / hbm, rel=1e-12)
    for ph in ("dispatch_phase", "combine_phase"):
        x, y = getattr(r, ph), getattr(b, ph)
        assert (x.fixed, x.transfer) == (y.fixed, y.transfer)
        assert x.time - y.time == pytest.approx(x.local_copy - y.local_copy, rel=1e-9)
    # the receive copies themselves: every (token, expert) copy in, k partials + the sum out
    assert b.dispatch_phase.local_copy == pytest.approx(2 * tokens * 8 * msg / hbm, rel=1e-12)
    assert b.combine_phase.local_copy == pytest.approx((tokens * 8 + tokens) * 2 * h / hbm,
                                                       rel=1e-12)


def test_send_staging_is_validated():
    with pytest.raises(TypeError, match="send_staging"):
        dataclasses.replace(exchange_kernel("pplx"), send_staging=1)
    names = [p.name for p in exchange_kernel("pplx").parameters()]
    assert {"pplx.send_staging", "pplx.staging_copy", "pplx.message_header"} <= set(names)
    assert exchange_kernel("pplx").dedup == "expert"


@pytest.mark.parametrize("arch", ["volta", "", "Hopper", None, 3, ("hopper",)])
def test_peer_access_latency_refuses_unknown_architectures(arch):
    """An architecture without a measured peer load is a SpecError naming it and the known
    ones (review s10 nit: it was a bare KeyError); the two known ones still answer. A name of
    the wrong kind is a TypeError (STYLE's rule; session 37, older-a's OLDER-A-5)."""
    from fabric import peer_access_latency
    if not isinstance(arch, str):
        with pytest.raises(TypeError, match="arch must be a str"):
            peer_access_latency(arch)
        return
    with pytest.raises(SpecError, match="no measured peer-load latency.*known: blackwell, hopper"):
        peer_access_latency(arch)
    for known in ("hopper", "blackwell"):
        rest, params = peer_access_latency(known)
        assert rest > 0 and params[0] is EXCHANGE_LATENCY[known]["peer_load"]


# -- background NIC traffic (a disaggregated decode's KV inflow beside the exchange) -----------

def _port_brute(sent, recv, bw, background, steps=4000):
    """Reference for one NIC port: time-step the port (``steps`` steps of the receive side's
    unshared time); in each step the background that arrived (at ``background`` bytes/s,
    evenly) is carried first, the rest of the step's ``bw x dt`` bytes go to the exchange.
    The exchange is done when its ``recv`` bytes are in; its ``sent`` bytes leave at ``bw``
    (the background only arrives). Exact to one step."""
    if recv == 0:
        return sent / bw
    dt = recv / bw / steps
    t, got, owed = 0.0, 0.0, 0.0
    while got < recv:
        owed += background * dt
        carried = min(owed, bw * dt)
        owed -= carried
        got += bw * dt - carried
        t += dt
    # the last step overshoots by at most one step
    return max(sent / bw, t)


def _slow_nic(f, nic, bandwidth):
    """``f`` with ``nic``'s network link at ``bandwidth`` B/s (a degraded port)."""
    import fabric
    G = f.graph.copy()
    (leaf,) = [v for v in G.neighbors(nic) if G.nodes[v].get("kind") != "chip"]
    G.edges[nic, leaf]["bandwidth"] = bandwidth
    return fabric.Fabric.from_graph(G, endpoints=list(f.endpoints), name=f"{f.name}-slow-{nic}",
                                    chip=f.chip)


_BG_KERNELS = ["deepep-normal", "deepep-low-latency", "pplx"]


@settings(max_examples=20, deadline=None)
@given(st.sampled_from([(2, 4), (2, 8), (4, 4)]), st.sampled_from([1, 7, 128]),
       st.sampled_from(_BG_KERNELS), st.sampled_from(["intact", "slow-nic", "cut-spine"]))
def test_zero_background_is_todays_exchange(shape, tokens, kernel, fab):
    """nic_background=0 gives every figure of the call without it, field for field, on intact
    and degraded fabrics (a slow NIC, a cut network link) and inside one domain."""
    nodes, gpus = shape
    f = topologies.rail_optimized(nodes, gpus, scaleup_links=8, chip="h100")
    if fab == "slow-nic":
        f = _slow_nic(f, "nic1", 20e9)
    elif fab == "cut-spine":
        f = f.without(links=[("rail0", "spine0")])
    kw = {"kernel": kernel, "dispatch_bytes": 1, "combine_bytes": 2}
    for ep in (nodes * gpus, gpus):
        assert moe_exchange(f, "deepseek-v3", tokens, ep, **kw, nic_background=0) == \
            moe_exchange(f, "deepseek-v3", tokens, ep, **kw)
        assert moe_exchange(f, "deepseek-v3", tokens, ep, **kw, nic_background=0.0) == \
            moe_exchange(f, "deepseek-v3", tokens, ep, **kw)


@settings(max_examples=20, deadline=None)
@given(st.sampled_from([(2, 4), (2, 8), (4, 4)]), st.sampled_from([1, 7, 128]),
       st.sampled_from(_BG_KERNELS), st.sampled_from([0.0, 1e9, 5.3e9, 20e9, 40e9]),
       st.booleans())
def test_background_shares_the_nic_port(shape, tokens, kernel, background, slow):
    """Brute force: each NIC port time-stepped with the background carried as it arrives
    (:func:`_port_brute`); the network stage is the busiest port, the combine's the same at
    its bytes; everything else (fixed, copies, scale-up) is untouched. Intact rail cluster
    and one with a slow NIC (nic1 at 20 GB/s: 18.8 GB/s achieved, so 20 and 40 GB/s of
    background are refused for it, naming the NIC)."""
    nodes, gpus = shape
    f = topologies.rail_optimized(nodes, gpus, scaleup_links=8, chip="h100")
    if slow:
        f = _slow_nic(f, "nic1", 20e9)
    kw = {"kernel": kernel, "dispatch_bytes": 1, "combine_bytes": 2}
    base = moe_exchange(f, "deepseek-v3", tokens, nodes * gpus, **kw)
    eff = EXCHANGE_NIC_EFFICIENCY.value
    G = f.graph
    lines = {nic: min(float(d["bandwidth"]) for _, _, d in G.edges(nic, data=True))
             for nic in base.nic_bytes}
    if background >= min(lines.values()) * eff:
        with pytest.raises(SpecError, match="nic_background=.* fills .* of 'nic1'"):
            moe_exchange(f, "deepseek-v3", tokens, nodes * gpus, **kw, nic_background=background)
        return
    r = moe_exchange(f, "deepseek-v3", tokens, nodes * gpus, **kw, nic_background=background)
    scale = r.combine_bytes / r.dispatch_bytes
    for phase, s in ((r.dispatch_phase, 1.0), (r.combine_phase, scale)):
        worst = max(_port_brute(s * sent, s * recv, lines[nic] * eff, background)
                    for nic, (sent, recv) in base.nic_bytes.items())
        assert phase.network == pytest.approx(worst, rel=2e-3)
        assert worst >= phase.network * (1 - 1e-12)   # the time-stepped port overshoots
    for a, b in ((r.dispatch_phase, base.dispatch_phase), (r.combine_phase, base.combine_phase)):
        assert (a.fixed, a.scaleup, a.local_copy) == (b.fixed, b.scaleup, b.local_copy)
        assert a.time - a.transfer == pytest.approx(b.time - b.transfer, rel=1e-12)
        assert a.transfer >= b.transfer
        pipelined = exchange_kernel(kernel).pipelined
        # a block's serial work between its copies (interleaved) is a floor of the transfer,
        # and so is the busiest queue pair's atomics after writes (session 25)
        assert a.transfer == pytest.approx(max(max(a.scaleup, a.network) if pipelined
                                               else a.scaleup + a.network, a.interleaved,
                                               a.queue_pair), rel=1e-12)
    assert r.nic_bytes == base.nic_bytes      # the exchange's own bytes do not change


@settings(max_examples=15, deadline=None)
@given(st.sampled_from([(2, 4), (2, 8)]), st.sampled_from([1, 16, 256]),
       st.sampled_from(_BG_KERNELS), st.sampled_from(["intact", "slow-nic", "cut-spine"]),
       st.lists(st.floats(0, 18e9), min_size=2, max_size=5))
def test_exchange_time_never_falls_with_more_background(shape, tokens, kernel, fab, rates):
    """More background on the NICs never makes a phase faster (intact, slow NIC, cut spine
    link); where the network sets the phase it is strictly slower."""
    nodes, gpus = shape
    f = topologies.rail_optimized(nodes, gpus, scaleup_links=8, chip="h100")
    if fab == "slow-nic":
        f = _slow_nic(f, "nic0", 20e9)
    elif fab == "cut-spine":
        f = f.without(links=[("rail0", "spine0")])
    kw = {"kernel": kernel, "dispatch_bytes": 1, "combine_bytes": 2}
    prev, prev_rate = None, None
    for rate in sorted(rates):
        r = moe_exchange(f, "deepseek-v3", tokens, nodes * gpus, **kw, nic_background=rate)
        if prev is not None:
            assert r.dispatch >= prev.dispatch and r.combine >= prev.combine
            assert r.dispatch_phase.network >= prev.dispatch_phase.network
            if rate > prev_rate + 1e6 and fab != "cut-spine" and prev.bottleneck_dispatch == "network":
                assert r.dispatch > prev.dispatch
        prev, prev_rate = r, rate


def test_background_leaves_a_domain_alone_and_bad_input_refused():
    """An exchange inside one NVLink domain uses no NIC: a background changes nothing. A
    background that is not bytes/s >= 0 is refused; so is one given to the collective kernel
    (the collectives model has no background traffic), and one that fills a NIC."""
    f = topologies.build("dgx-h100")
    kw = {"kernel": "deepep-low-latency", "dispatch_bytes": 1, "combine_bytes": 2}
    assert moe_exchange(f, "deepseek-v3", 128, 8, **kw, nic_background=40e9) == \
        moe_exchange(f, "deepseek-v3", 128, 8, **kw)
    g = topologies.rail_optimized(2, 4, scaleup_links=8, chip="h100")
    for bad in (-1.0, float("nan"), float("inf"), True, "5e9", None):
        with pytest.raises(SpecError if is_real(bad) else TypeError, match="nic_background must be a finite number >= 0 bytes/s"):
            moe_exchange(g, "deepseek-v3", 128, 8, **kw, nic_background=bad)
    with pytest.raises(SpecError, match="collectives model"):
        moe_exchange(g, "deepseek-v3", 128, 8, kernel="all-to-allv", dispatch_bytes=1,
                     combine_bytes=2, nic_background=1e9)
    assert moe_exchange(g, "deepseek-v3", 128, 8, kernel="all-to-allv", dispatch_bytes=1,
                        combine_bytes=2, nic_background=0) is not None
    # 400 Gb/s NDR: 47 GB/s achieved; 47 GB/s of background leaves nothing for the exchange
    with pytest.raises(SpecError, match="fills the 47 GB/s"):
        moe_exchange(g, "deepseek-v3", 128, 8, **kw, nic_background=47e9)
    # 5.3 GB/s of KV (the lmsys row's ~360 MB per 68 ms step) on 47 GB/s: x 47 / 41.7
    a = moe_exchange(g, "deepseek-v3", 128, 8, **kw)
    b = moe_exchange(g, "deepseek-v3", 128, 8, **kw, nic_background=5.3e9)
    assert b.dispatch_phase.network == pytest.approx(a.dispatch_phase.network * 47 / 41.7)


@settings(max_examples=10, deadline=None)
@given(st.sampled_from([(2, 4), (2, 8)]), st.sampled_from([8, 64, 512]),
       st.sampled_from(["deepep-low-latency", "deepep-normal"]),
       st.sampled_from([0.0, 2e9, 9e9]), st.booleans())
def test_decode_step_passes_the_background_to_its_exchange(shape, batch, kernel, rate, slow):
    """decode_step(nic_background=r): each MoE layer's dispatch and combine are the exchange
    kernel's own with that background (moe_exchange at the step's tokens per rank, ranks
    and bytes, no kernel gap: the step charges them), on an intact rail cluster and one
    with a slow NIC (B200s: DeepSeek-V3 fits on 8); r = 0 is the step without it, field for field; more background
    never makes the step faster."""
    nodes, gpus = shape
    f = topologies.rail_optimized(nodes, gpus, scaleup_links=8, chip="b200")
    if slow:
        f = _slow_nic(f, "nic0", 20e9)
    ep = nodes * gpus
    kw = {"batch": batch * ep, "context": 1000, "layout": f"tp=1,dp={ep}", "ep_kernel": kernel,
          "dispatch_bytes": 1, "combine_bytes": 2}
    base = analysis.decode_step("deepseek-v3", f, **kw)
    st_ = analysis.decode_step("deepseek-v3", f, **kw, nic_background=rate)
    if rate == 0:
        assert st_ == base
        return
    ex = moe_exchange(f, "deepseek-v3", batch, list(base.instance), kernel=kernel,
                      dispatch_bytes=1, combine_bytes=2, kernel_gap=0.0, nic_background=rate)
    moe = st_.layers[-1]
    assert (moe.dispatch, moe.combine) == pytest.approx((ex.dispatch, ex.combine), rel=1e-12)
    assert st_.time >= base.time and moe.dispatch >= base.layers[-1].dispatch
    assert any(p.name == "decode.nic_background" and p.value == rate for p in st_.parameters)


def test_decode_step_background_needs_an_exchange_kernel():
    """A background beside the experts' all-to-all through the collectives model is refused
    (no background there); bad values are refused; a step without an exchange (etp=8) is not
    slowed by one."""
    f = topologies.rail_optimized(2, 4, scaleup_links=8, chip="b200")
    kw = {"batch": 64, "context": 1000, "layout": "tp=1,dp=8"}
    with pytest.raises(SpecError, match="collectives model"):
        analysis.decode_step("deepseek-v3", f, **kw, nic_background=1e9)
    with pytest.raises(SpecError, match="collectives model"):
        analysis.decode_step("deepseek-v3", f, **kw, ep_kernel="all-to-allv", nic_background=1e9)
    for bad in (-1, float("nan"), True, "1e9"):
        with pytest.raises(SpecError if is_real(bad) else TypeError, match="nic_background must be a finite number >= 0 bytes/s"):
            analysis.decode_step("deepseek-v3", f, **kw, ep_kernel="deepep-low-latency",
                                 nic_background=bad)
    one = {"batch": 8, "context": 1000, "layout": "tp=8,etp=8"}      # experts split, no exchange
    assert analysis.decode_step("deepseek-v3", f, **one, nic_background=5e9).time == \
        analysis.decode_step("deepseek-v3", f, **one).time



@settings(max_examples=40, deadline=None)
@given(st.integers(1, 128), st.sampled_from(["hopper", "blackwell"]), st.integers(0, 8),
       st.integers(1, 6), st.booleans())
def test_one_sided_chain_counts_the_barriers_lane_passes(ep, arch, ranks, rounds, flushed):
    """moeAlltoAllKernels.cu runs both barriers' per-peer work in one warp (lane l takes
    peers l, l + 32, ...): each pass beyond the first (the floor and the single counter read
    hold it) adds the dispatch's counter load and flag poll and the combine's flag poll, one
    L2 latency each, and the cycles the loops issue a further pass (lane_pass_cycles): the
    dispatch's three 138 (session 26), the combine's two 123 (session 27). Against the
    brute-force lane loop, for any EP size up to
    TensorRT-LLM's MAX_RANKS (128) and either generation."""
    from fabric._exchange import lane_passes
    k = exchange_kernel("one-sided")
    extra = _warp_loop_passes(ep) - 1
    assert lane_passes(ep) == extra
    l2 = EXCHANGE_LATENCY[arch]["l2_hit"].value
    cyc = EXCHANGE_LATENCY[arch]["cycle"].value
    for phase, per_pass in ((0, 2 * l2 + 138 * cyc), (1, l2 + 123 * cyc)):
        base, _ = k.chain_latency(phase, arch, ranks, rounds, flushed)
        t, used = k.chain_latency(phase, arch, ranks, rounds, flushed, ep=ep)
        assert t - base == pytest.approx(per_pass * extra, abs=1e-15)
        assert EXCHANGE_LATENCY[arch]["l2_hit"] in used
    # at most 32 ranks one pass: the chain is the one every session before 13 charged
    if ep <= 32:
        assert k.chain_latency(0, arch, ranks, rounds, flushed, ep=ep) == k.chain_latency(
            0, arch, ranks, rounds, flushed)


@pytest.mark.parametrize("bad", [0, -1, 2.0, True, "64", None, np.int64(0)])
def test_lane_passes_refuses_a_bad_rank_count(bad):
    from fabric._exchange import lane_passes
    # a wrong kind is a TypeError, 0 or -1 a SpecError (session 31)
    error = TypeError if bad in (2.0, "64", None) or bad is True else SpecError
    with pytest.raises(error, match="ep must be an int >= 1"):
        lane_passes(bad)


def test_lane_passes_takes_numpy_integers():
    """A numpy integer rank count is an integer (review S13, 05:02 nit)."""
    from fabric._exchange import lane_passes
    assert [lane_passes(np.int64(e)) for e in (32, 33, 128)] == [0, 1, 3]
    assert isinstance(lane_passes(np.int32(64)), int)


@pytest.mark.parametrize("tokens", [1, 16, 128])
def test_one_sided_ep64_pays_one_more_lane_pass_than_ep32(tokens):
    """On GB200 NVL72 with the perfect router the phases at EP32 and EP64 share every term at
    a given batch but the barriers' lane passes and the links' load: EP64 is one pass more, so
    its chain is 2 L2 latencies and the loops' 138 cycles (session 26) longer in the dispatch
    and 1 L2 latency and the loops' 123 cycles (session 27) in the combine."""
    f = fidelity_moe.nvl72()
    kw = {"dispatch_bytes": 2, "combine_bytes": 2, "routing": "balanced"}
    r32 = moe_exchange(f, "deepseek-v3", tokens, 32, kernel="one-sided", **kw)
    r64 = moe_exchange(f, "deepseek-v3", tokens, 64, kernel="one-sided", **kw)
    l2 = EXCHANGE_LATENCY["blackwell"]["l2_hit"].value
    cyc = EXCHANGE_LATENCY["blackwell"]["cycle"].value
    d, c = 2 * l2 + 138 * cyc, l2 + 123 * cyc
    assert r64.dispatch_phase.chain - r32.dispatch_phase.chain == pytest.approx(d, rel=1e-9)
    assert r64.combine_phase.chain - r32.combine_phase.chain == pytest.approx(c, rel=1e-9)
    assert r64.dispatch_phase.fixed - r32.dispatch_phase.fixed == pytest.approx(d, rel=1e-9)
    assert r64.combine_phase.fixed - r32.combine_phase.fixed == pytest.approx(c, rel=1e-9)


@pytest.mark.parametrize("ep,phase", [(2, "dispatch"), (4, "combine"), (8, "dispatch")])
def test_collector_interval_counts_one_boundary_per_kernel(ep, phase):
    """aiconfigurator's collector replays a one-op graph back to back: each replay holds its
    2 kernels and one boundary before each (session 14). The kernel floor is a per-op time
    of NCCL's back-to-back loop (it holds the first kernel's GPU-side start) and the second
    kernel pays one GRAPH_KERNEL_OVERHEAD, so a replay is the phase time itself: no extra
    replay boundary on top (it would count the first kernel's start twice). The timer
    starts on an idle stream, so the first of the 10 replays' launches is exposed
    (LAUNCH_OVERHEAD) and the other nine hide behind the replays before them."""
    rows = [r for r in fidelity.heldout_rows()
            if r["id"] == f"aic-trtllm-ep{ep}-bs1-nvfp4-{phase}"]
    assert len(rows) == 1
    value, _ = fidelity_heldout_moe.CASES[rows[0]["id"]](rows[0])
    r = moe_exchange(fidelity_moe.nvl72(), "deepseek-v3", 1, ep,
                     kernel=fidelity_heldout_moe._A2A_COLLECTOR,
                     dispatch_bytes=fidelity_heldout_moe.NVFP4_TOKEN, combine_bytes=2,
                     routing="balanced", l2_flushed=False)
    ph = r.dispatch_phase if phase == "dispatch" else r.combine_phase
    assert ph.time > analysis.LAUNCH_OVERHEAD.value          # GPU-bound: launches hide
    want = (analysis.LAUNCH_OVERHEAD.value + 10 * ph.time) / 10
    assert value == pytest.approx(want * 1e6, rel=1e-12)
    # the phase's own boundaries: the floor's (the first kernel's start) + one gap
    assert ph.kernel_gaps == pytest.approx(analysis.GRAPH_KERNEL_OVERHEAD.value)


@given(ep=st.sampled_from([8, 16, 32, 64]), tokens=st.sampled_from([1, 16, 128, 512, 2048]),
       phase=st.sampled_from(["dispatch", "combine"]))
@settings(max_examples=25, deadline=None)
def test_kernel_span_rows_leave_out_the_floors_graph_gap(ep, tokens, phase):
    """blog18's rows are CUPTI spans, from the phase's first kernel's start to its last
    kernel's end. The kernel floor is a CUDA-graph loop's per-op time (one intra-graph
    dispatch gap + the kernel; NCCL #1940 via nccl-tests issue 333), so the span holds the
    phase less that gap: PDL_HIDDEN_GAP (0.55 us, GB200) on Blackwell, nothing on Hopper
    (no published gap). Reference: the phase time from moe_exchange, less the gap by hand;
    flashinfer PR #3697's rows (timing not stated) keep the whole phase."""
    row_id = f"trtllm-ep{ep}-bs{tokens}-{phase}"
    cases = fidelity_moe.CASES if ep == 8 else fidelity_heldout_moe.CASES
    value, how = cases[row_id]({"gpus": ep})
    f = built("gb200-nvl72")
    r = moe_exchange(f, "deepseek-v3", tokens, ep, kernel="one-sided", dispatch_bytes=2,
                     combine_bytes=2, routing="balanced")
    t = r.dispatch if phase == "dispatch" else r.combine
    gap = analysis.PDL_HIDDEN_GAP.value
    assert gap == pytest.approx(0.55e-6)
    assert value == pytest.approx((t - gap) * 1e6, rel=1e-12)
    assert "CUPTI span" in how
    floor = runtime("symmetric-memory").kernel_floor["blackwell"]
    assert 0 < gap < floor            # the span keeps the kernel's part of the floor
    # a degraded GB200 rack is still Blackwell: the same gap
    g = f.without(links=[("chip0", "sw0")])
    assert fidelity_moe.kernel_span(t, g) == pytest.approx(t - gap, rel=1e-12)
    # Hopper: no published gap, nothing left out
    assert fidelity_moe.kernel_span(t, fidelity_moe.h800_nodes(1)) == t
    if ep == 32 and tokens == 1 and phase == "combine":
        # 1.3's BF16 loop pays blog18's trips; only its other per-round loads differ
        fi, _ = fidelity_heldout_moe.CASES["fi3697-trtllm-ep32-bs1-bf16-combine"]({"gpus": 32})
        own = (_round_reads_ref("one-sided-1.3", "blackwell", 2, 4, 8, 1.0)
               - _round_reads_ref("one-sided", "blackwell", 2, 4, 8, 1.0))
        assert fi == pytest.approx((t + own) * 1e6, rel=1e-12)


@pytest.mark.parametrize("row_id", [f"deepep-v2-b200-ep8-{sm}sm-{ph}" for sm in (64, 24)
                                    for ph in ("dispatch", "combine")]
                         + [f"deepep-v2-b200-2node-{ph}" for ph in ("dispatch", "combine")])
def test_deepep_v2_rows_are_one_kernels_duration(row_id):
    """DeepEP V2's README rows (b306af0) come from tests/elastic/test_ep.py, which times a phase
    with bench_kineto(kernel_names=('dispatch_impl', 'dispatch_copy_epilogue_impl')) and prints
    bytes / t for t = the comm kernel's mean duration alone (bench_kineto averages one named
    kernel; the epilogue is timed apart; V2 has no separate notify kernel). So no boundary
    between kernels is inside the row (kernel_gap=0), and in one NVLink domain the floor's
    graph gap before the kernel is left out as for any kernel span; across the network the
    handshake is EXCHANGE_SYNC, not the graph-loop floor, and keeps its whole figure.
    Reference: moe_exchange with kernel_gap=0 and the bytes of the row by hand."""
    row = next(r for r in fidelity.heldout_rows() if r["id"] == row_id)
    value, how = fidelity_heldout_moe.CASES[row_id](row)
    phase = row_id.rsplit("-", 1)[1]
    two = "2node" in row_id
    f = fidelity_heldout_moe._b200_nodes(2) if two else topologies.build("hgx-b200")
    ep = 16 if two else 8
    r = moe_exchange(f, "deepseek-v3", 8192, ep, kernel="deepep-normal",
                     dispatch_bytes=1 + 4 / 128, combine_bytes=2, routing="uniform",
                     kernel_gap=0)
    ph = r.dispatch_phase if phase == "dispatch" else r.combine_phase
    assert ph.kernel_gaps == 0
    t = ph.time if two else ph.time - analysis.PDL_HIDDEN_GAP.value
    copies = r.copies_node if two else r.copies_rank
    per_token = fidelity_moe.FP8_TOKEN if phase == "dispatch" else fidelity_moe.BF16_TOKEN
    assert value == pytest.approx(copies * per_token / t / 1e9, rel=1e-12)
    assert "kineto" in how
    # the default (V1's two dispatch kernels) would have charged a boundary the row lacks
    d = moe_exchange(f, "deepseek-v3", 8192, ep, kernel="deepep-normal",
                     dispatch_bytes=1 + 4 / 128, combine_bytes=2, routing="uniform")
    assert d.dispatch_phase.kernel_gaps == pytest.approx(analysis.GRAPH_KERNEL_OVERHEAD.value)


@pytest.mark.parametrize("nodes", [1, 2, 4])
def test_deepep_normal_phases_count_the_v1_notify_kernels(nodes):
    """DeepEP V1 (ebfe47e, the legacy table's code; the same at dd758ca): each phase runs a
    notify kernel before its data kernel (dispatch: (cached_)notify_dispatch / cached_notify;
    combine: cached_notify_combine / cached_notify, 'Launch barrier and reset queue head and
    tail'), and each notify kernel synchronises the ranks twice ('barrier before cleaning',
    'barrier after cleaning'). So both phases pay: the first sync (the kernel floor in one
    node, one EXCHANGE_SYNC across the network) + one further sync (in one node one
    store-and-spin handoff, the runtime's flag barrier: the one-way path of the NVSwitch, its
    load/store per-message overhead and the GPU side of a peer load; session 23; another
    EXCHANGE_SYNC across) + one boundary between the two kernels; in one node the release
    fence too. Reference by hand from the Parameters."""
    k = exchange_kernel("deepep-normal")
    assert k.kernels == (2, 2) and k.syncs == (2, 2)
    f = h800(nodes)
    ep = 8 * nodes
    r = moe_exchange(f, "deepseek-v3", 4096, ep, kernel="deepep-normal",
                     dispatch_bytes=1 + 4 / 128, combine_bytes=2,
                     routing=f"node-limited:{min(nodes, 4)}")
    gap = analysis.GRAPH_KERNEL_OVERHEAD.value
    if nodes == 1:
        floor = runtime("symmetric-memory").kernel_floor["hopper"]
        # GPU -> NVSwitch -> GPU one way (half the symmetric round trip), the transport's
        # per-message overhead, and the GPU side of a measured peer load (step_handoff)
        one_way = analysis.peer_round_trip(f, list(f.endpoints[:ep])) / 2
        handoff = peer_access_latency("hopper")[0]
        barrier = one_way + transport("loadstore").per_message_overhead + handoff
        assert round(barrier * 1e9, 1) == 556.6
        # DeepEP's own steps before its flag: the own slot's atomic, the peer pointer's reload
        lat = EXCHANGE_LATENCY["hopper"]
        want = floor + barrier + lat["l2_atomic"].value + lat["l2_hit"].value + gap
        for ph in (r.dispatch_phase, r.combine_phase):
            assert ph.fence > 0
            assert ph.fixed == pytest.approx(want + ph.fence, rel=1e-12)
    else:
        from fabric import EXCHANGE_SYNC
        sync = EXCHANGE_SYNC["base"].value + EXCHANGE_SYNC["network"].value
        for ph in (r.dispatch_phase, r.combine_phase):
            assert ph.fixed == pytest.approx(2 * sync + gap, rel=1e-12)
    for ph in (r.dispatch_phase, r.combine_phase):
        assert ph.kernel_gaps == pytest.approx(gap)


# -- the pulled round's late slot (TensorRT-LLM's compiled top-8 combine, session 17) -------------

def _late_brute(E, ep, nodes, m, slot):
    """P(top-k ``slot`` names a first-time rank) by enumeration: the first ``slot + 1`` slots
    of a uniform ordered draw are a uniform ``(slot + 1)``-subset of the token's pool (every
    expert, or the experts of ``m`` of the ``nodes`` nodes, every node set alike) with a
    uniform member last; count the (node set, subset, last member) triples whose last member's
    rank holds no other member."""
    per_rank, per_node = E // ep, E // nodes
    node_sets = [None] if m is None or m >= nodes else list(
        itertools.combinations(range(nodes), m))
    valid = total = 0
    for ns in node_sets:
        pool = range(E) if ns is None else [e for e in range(E) if e // per_node in ns]
        for pick in itertools.combinations(pool, slot + 1):
            for last in pick:
                total += 1
                valid += all(e // per_rank != last // per_rank for e in pick if e != last)
    return valid / total


@settings(max_examples=30, deadline=None)
@given(st.sampled_from([(8, 4, 2), (8, 8, 2), (12, 6, 3), (12, 4, 2), (16, 8, 4), (16, 4, 1)]),
       st.integers(0, 5), st.integers(1, 3))
def test_late_slot_validity_matches_enumeration(shape, slot, m):
    """The chance that one token's late slot holds a rank its earlier slots do not (so the
    combine loads it): the closed form against enumeration, uniform and node-limited, and the
    perfect router's rotation brute force."""
    from analysis._moe_exchange import _late_slot_valid
    E, ep, nodes = shape
    k = slot + 1
    for routing, mm in (("uniform", None), (f"node-limited:{m}", m)):
        if mm is not None and mm * (E // nodes) < k:
            continue
        got = _late_slot_valid(E, k, ep, nodes, routing, slot)
        assert got == pytest.approx(_late_brute(E, ep, nodes, mm, slot), abs=1e-12)
    assert _late_slot_valid(E, k, ep, nodes, "balanced", slot) == _rotation_late_valid(ep, k, slot)


def _block_time_brute(cases, tokens):
    """Expected wait of the slowest of ``tokens`` independent blocks, each token's wait drawn
    from ``cases`` ((wait, probability) pairs): enumerate every pattern of the tokens."""
    total = 0.0
    for pattern in itertools.product(cases, repeat=tokens):
        total += math.prod(p for _, p in pattern) * max(w for w, _ in pattern)
    return total


def _falling(n, j):
    return math.prod(n - i for i in range(j))


@settings(max_examples=20, deadline=None)
@given(st.sampled_from([2, 4, 8, 16, 32, 64]), st.integers(1, 5),
       st.sampled_from(["balanced", "uniform"]), st.sampled_from([1, 2]), st.booleans())
def test_top8_pulled_round_pays_a_second_round_trip_for_a_valid_last_slot(ep, tokens, routing,
                                                                          element, degraded):
    """moeA2ACombineKernel<bf16, BlockPolicy, 8> as compiled (flashinfer 579435f9, nvcc 13.0
    -O3 sm_100a): each round issues slots 0-6's peer loads, waits for them at the first
    reduction, then loads slot 7: a second peer round trip in every round of a token whose
    slot 7 is valid. The slowest of the rank's blocks sets the phase: against the per-token
    probability (the perfect router's rotation brute force; uniform: C(E - E/ep, 7) /
    C(E - 1, 7)) and an enumeration of the blocks' patterns, on an intact or degraded GB200
    rack. Without the late slot (a top-4 kernel's schedule) the pull is one trip per round."""
    f = fidelity_moe.nvl72()
    if degraded:
        a = f.endpoints[0]
        f = f.without(links=[(a, min(f.graph.neighbors(a), key=str))])
    kw = {"dispatch_bytes": 2, "combine_bytes": element, "routing": routing}
    # the trips alone: the loop's other per-round loads (round_reads) are tested apart
    k = dataclasses.replace(exchange_kernel("one-sided"), round_reads=(), round_cycles=())
    r = moe_exchange(f, "deepseek-v3", tokens, ep, kernel=k, **kw)
    r0 = moe_exchange(f, "deepseek-v3", tokens, ep,
                      kernel=dataclasses.replace(k, late_pulls=()), **kw)
    access = EXCHANGE_LATENCY["blackwell"]["peer_load"].value - 4 * link_tech("nvlink5").latency
    trip = _brute_round_trip(f, ep) + access
    local = EXCHANGE_LATENCY["blackwell"]["l2_hit"].value
    if routing == "balanced":
        # token t's own slot is (-8 t) mod ep: never slot 7 (ep even), and slots 0-6 always hold
        # a peer's valid slot
        q = float(_rotation_late_valid(ep, 8, 7))
        late = [(trip * (1 + q), 1.0)]
        one = [(trip, 1.0)]
    else:
        # slot 7 valid: its rank's other experts all missed by slots 0-6; a batch whose valid
        # slots are all the own rank's (g experts) waits for a local load (session 23)
        E, g = 256, 256 // ep
        q = math.comb(E - g, 7) / math.comb(E - 1, 7)
        own7 = _falling(E - g, 7) / _falling(E, 7) * g / (E - 7)     # slot 7 the own rank's first
        own06 = _falling(g, 7) / _falling(E, 7)                       # slots 0-6 all the own rank's
        late = [(2 * trip, q - own7 - own06 * (E - g) / (E - 7)),
                (trip + local, own7 + own06 * (E - g) / (E - 7)),
                (local, own06 * (g - 7) / (E - 7)),
                (trip, 1 - q - own06 * (g - 7) / (E - 7))]
        own8 = _falling(g, 8) / _falling(E, 8)
        one = [(trip, 1 - own8), (local, own8)]
    rounds = _loop_steps(7168 * element, 256, 16)
    extra = rounds * (_block_time_brute(late, tokens) - _block_time_brute(one, tokens))
    # the slowest block's expected late batches with a valid slot per round, each reading slot
    # 7's pointer row for the first time in round 1: one constant L1.5 fetch each (session 21)
    extra += (1 - (1 - q) ** tokens) * EXCHANGE_LATENCY["blackwell"]["const_l15"].value
    c, c0 = r.combine_phase, r0.combine_phase
    assert c.pull_latency - c0.pull_latency == pytest.approx(extra, rel=1e-9, abs=1e-15)
    assert c.transfer == pytest.approx(max(c0.transfer, c.pull_latency), rel=1e-12)
    assert r.dispatch == r0.dispatch
    assert "one-sided.late_pulls" in {p.name for p in r.parameters}


def test_late_pulls_profile_is_validated_and_sourced():
    k = exchange_kernel("one-sided")
    assert k.late_pulls == (("blackwell", 8, 0, ((7,),)), ("hopper", 8, 0, ((4, 5, 6, 7),)))
    assert (k.late_batches(8, 2, "blackwell") == k.late_batches(8, 1, "blackwell") == ((7,),)
            and k.late_batches(4, 2, "blackwell") == ())
    assert k.late_batches(8, 2, "hopper") == ((4, 5, 6, 7),)
    p = next(p for p in k.parameters() if p.name == "one-sided.late_pulls")
    assert "579435f9" in p.source and "SASS" in p.source and "sm_90a" in p.source
    assert p.value == ("blackwell, top-8, any input: slots 7; "
                       "hopper, top-8, any input: slots 4,5,6,7")
    ok = ("", 8, 0, ((7,),))
    for bad in [(("", 8, 0, ((8,),)),), (("", 8, 0, ((0,),)),), (("", 8, 0, ((-1,),)),),
                ((8, 7),), ((8, 0, ((7,),)),), ok, (ok, ("", 8, 0, ((6,),))),
                (("", 8.0, 0, ((7,),)),), (("", True, 0, ((0,),)),), (("", 8, -1, ((7,),)),),
                (("", 8, 0, ()),), (("", 8, 0, ((),)),), (("", 8, 0, ((7,), (7,))),),
                (("", 8, 0, (7,)),), (("", 8, 1.0, ((7,),)),), (("ampere", 8, 0, ((7,),)),),
                ((None, 8, 0, ((7,),)),)]:
        # session 38: one entry given bare (its items are no entries), or a key's arch,
        # top_k or input_bytes of another kind, is a wrong kind
        kind = bad is ok or any(len(e) >= 3 and (type(e[0]) is not str or any(
            type(x) is not int for x in e[1:3])) for e in bad)
        with pytest.raises(TypeError if kind else ValueError, match="late_pulls"):
            dataclasses.replace(k, late_pulls=bad)
    with pytest.raises(ValueError, match="late_pulls needs a pulling combine"):
        dataclasses.replace(exchange_kernel("pplx"), late_pulls=(ok,))
    # a top-4 model's combine pays one trip per round
    m = dataclasses.replace(model_config("deepseek-v3"), name="dsv3-top4", experts_per_token=4)
    f = fidelity_moe.nvl72()
    a = moe_exchange(f, m, 1, 8, kernel=k, dispatch_bytes=2, combine_bytes=2, routing="balanced")
    b = moe_exchange(f, m, 1, 8, kernel=dataclasses.replace(k, late_pulls=()), dispatch_bytes=2,
                     combine_bytes=2, routing="balanced")
    assert a.combine == b.combine


# -- TensorRT-LLM 1.3's combine loop: its round's loads in batches (session 18) ------------------

def _late_trips_brute(E, ep, nodes, m, k, batches):
    """Distribution of the later batches holding a first-time rank, by enumeration of every
    ordered draw of ``k`` distinct experts from the token's pool (every expert, or those of
    ``m`` of the ``nodes`` nodes, each node set alike); the rotation's 'balanced' case is
    covered apart."""
    per_rank, per_node = E // ep, E // nodes
    node_sets = [None] if m is None or m >= nodes else list(
        itertools.combinations(range(nodes), m))
    counts = [0] * (len(batches) + 1)
    for ns in node_sets:
        pool = range(E) if ns is None else [e for e in range(E) if e // per_node in ns]
        for draw in itertools.permutations(pool, k):
            ranks = [e // per_rank for e in draw]
            fresh = [ranks[i] not in ranks[:i] for i in range(k)]
            counts[sum(any(fresh[s] for s in b) for b in batches)] += 1
    total = sum(counts)
    return [c / total for c in counts]


@settings(max_examples=12, deadline=None)
@given(st.sampled_from([(8, 4, 2), (8, 8, 2), (12, 6, 3), (12, 4, 2), (16, 8, 4), (10, 5, 1)]),
       st.sampled_from([((1, 2), (3,)), ((2,), (1, 3)), ((1,), (2,), (3,)), ((3,),)]),
       st.integers(1, 3))
def test_late_trips_match_enumeration(shape, batches, m):
    """The per-token distribution of extra trips per round (an exact walk over the slots) equals
    enumeration of every ordered expert draw (uniform and node-limited), and the rotation's
    deterministic count; one slot alone is the closed form."""
    from analysis._moe_exchange import _late_slot_valid, _late_trips
    E, ep, nodes = shape
    k = 4
    for routing, mm in (("uniform", None), (f"node-limited:{m}", m)):
        if mm is not None and (mm >= nodes or mm * (E // nodes) < k):
            continue
        got = _late_trips(E, k, ep, nodes, routing, batches)
        assert list(got) == pytest.approx(_late_trips_brute(E, ep, nodes, mm, k, batches),
                                          abs=1e-12)
        if len(batches) == 1 and len(batches[0]) == 1:
            assert got[1] == _late_slot_valid(E, k, ep, nodes, routing, batches[0][0])
    rot = _late_trips(E, k, ep, nodes, "balanced", batches)
    want = sum(any(_rotation_late_valid(ep, k, s) for s in b) for b in batches)
    assert rot[want] == 1.0 and sum(rot) == 1.0


@settings(max_examples=15, deadline=None)
@given(st.lists(st.floats(0.0, 1.0), min_size=2, max_size=4), st.integers(1, 4))
def test_slowest_block_late_rounds_match_enumeration(weights, tokens):
    """E[max over tokens of the extra trips] from the distribution against enumerating every
    tokens' pattern."""
    from analysis._moe_exchange import _late_rounds
    total = sum(weights)
    dist = [w / total for w in weights] if total > 0 else [1.0] + [0.0] * (len(weights) - 1)
    want = sum(math.prod(dist[j] for j in pat) * max(pat)
               for pat in itertools.product(range(len(dist)), repeat=tokens))
    assert _late_rounds(tuple(dist), tokens) == pytest.approx(want, abs=1e-12)


@pytest.mark.parametrize("element, trips", [(2, 2), (1, 3)])
def test_trtllm_1_3_combine_round_trips_by_input_width(element, trips):
    """TensorRT-LLM 1.3's combine loop as compiled (flashinfer 5e891c6b, sm_100a): a BF16 round
    waits for slot 0 before five of its loads (two trips), an FP8 round for slot 0 and then for
    slots 1-3 (three). At EP32 under the perfect router every slot is valid, so the pull is
    rounds x trips round trips plus the block-rate bytes; blog18's kernel pays two for both, and
    nothing but the pull differs between the profiles. At one token the perfect router puts
    slot 0 on the own rank: FP8's first batch is slot 0 alone, a local load (an L2 hit) where
    the others wait for a peer (session 23)."""
    f = fidelity_moe.nvl72()
    kw = {"dispatch_bytes": (0.5, 1 / 16), "combine_bytes": element, "routing": "balanced"}
    # the trips alone: the loops' other per-round loads (round_reads) are tested apart
    k13, k = (dataclasses.replace(exchange_kernel(n), round_reads=(), round_cycles=())
              for n in ("one-sided-1.3", "one-sided"))
    new = moe_exchange(f, "deepseek-v3", 1, 32, kernel=k13, **kw)
    old = moe_exchange(f, "deepseek-v3", 1, 32, kernel=k, **kw)
    flat = moe_exchange(f, "deepseek-v3", 1, 32, kernel=dataclasses.replace(k, late_pulls=()),
                        **kw)
    rounds = _loop_steps(7168 * element, 256, 16)
    # each later batch reads its slots' pointer rows for the first time in round 1: one
    # constant L1.5 fetch per later batch (session 21)
    fetch = EXCHANGE_LATENCY["blackwell"]["const_l15"].value
    trip = (old.combine_phase.pull_latency - flat.combine_phase.pull_latency - fetch) / rounds
    assert trip > 1e-6
    own = rounds * (trip - EXCHANGE_LATENCY["blackwell"]["l2_hit"].value) if trips == 3 else 0.0
    assert new.combine_phase.pull_latency - flat.combine_phase.pull_latency == pytest.approx(
        (trips - 1) * (rounds * trip + fetch) - own, rel=1e-12)
    assert new.dispatch == old.dispatch
    assert new.combine_phase.fixed == old.combine_phase.fixed
    assert "one-sided-1.3.late_pulls" in {p.name for p in new.parameters}
    src = next(p.source for p in new.parameters if p.name == "one-sided-1.3.late_pulls")
    assert "5e891c6b" in src and "SASS" in src


@pytest.mark.parametrize("ep", [4, 6, 8])
@pytest.mark.parametrize("routing", ["balanced", "uniform"])
def test_hopper_round_waits_for_slots_4_to_7(ep, routing):
    """blog18's combine compiled for sm_90a (flashinfer 579435f9, nvcc 13.0): a round issues
    slots 0-3's peer loads, its first reduction waits for them, then slots 4-7's go out: a
    second trip whenever any of slots 4-7 is valid, where Blackwell's schedule waits for slot 7
    alone. On an 8 x H800 node the pull's extra over one trip per round is rounds x trip x the
    slowest block's chance of it: under the perfect router's rotation (brute force) a token's
    slots 4..ep-1 are its own ranks' first slots, so EP6 pays it on Hopper and not on Blackwell;
    uniform from the exact per-token distribution (checked against enumeration above), where a
    batch whose valid slots are all the own rank's waits for a local load (session 23:
    _round_wait, checked against enumeration in tests/test_moe_s23_own_batches.py; here the
    batches the profile hands it)."""
    from analysis._moe_exchange import _late_rounds, _late_trips, _round_wait
    f = fidelity_moe.h800_nodes(1)
    kw = {"dispatch_bytes": 2, "combine_bytes": 2, "routing": routing}
    # the trips alone: the loop's other per-round loads (round_reads) are tested apart
    k = dataclasses.replace(exchange_kernel("one-sided"), round_reads=(), round_cycles=())
    tokens = 2
    r = moe_exchange(f, "deepseek-v3", tokens, ep, kernel=k, **kw)
    flat = moe_exchange(f, "deepseek-v3", tokens, ep,
                        kernel=dataclasses.replace(k, late_pulls=()), **kw)
    rounds = _loop_steps(7168 * 2, 256, 16)
    trip = _brute_round_trip(f, ep) + EXCHANGE_LATENCY["hopper"]["peer_load"].value - 4 * link_tech(
        "nvlink4").latency
    if routing == "balanced":
        late = float(any(_rotation_late_valid(ep, 8, s) for s in (4, 5, 6, 7)))
        assert late == float(ep > 4)
    else:
        late = _late_rounds(_late_trips(256, 8, ep, 1, "uniform", ((4, 5, 6, 7),)), tokens)
        assert late > 1 - (1 - _late_trips(256, 8, ep, 1, "uniform", ((7,),))[1]) ** tokens
    got = r.combine_phase.pull_latency - flat.combine_phase.pull_latency
    fetch = EXCHANGE_LATENCY["hopper"]["const_l15"].value   # the later batch's rows, round 1
    local = EXCHANGE_LATENCY["hopper"]["l2_hit"].value
    assert k.late_batches(8, 2, "hopper") == ((4, 5, 6, 7),)
    waits = [_round_wait(256, 8, ep, 1, routing, b, tokens, trip, local)
             for b in (((4, 5, 6, 7),), ())]
    if routing == "balanced":
        assert waits == [None, None]        # the rotation's own slot never stands alone
    waits = [trip * (1 + late) if waits[0] is None else waits[0],
             trip if waits[1] is None else waits[1]]
    assert got == pytest.approx(rounds * (waits[0] - waits[1]) + fetch * late, rel=1e-9,
                                abs=1e-15)
    assert r.dispatch == flat.dispatch


@pytest.mark.parametrize("element", [1, 2])
@pytest.mark.parametrize("routing", ["balanced", "uniform"])
def test_trtllm_1_3_combine_on_hopper(element, routing):
    """TensorRT-LLM 1.3's combine loop compiled for sm_90a (flashinfer 5e891c6b, nvcc 13.0,
    session 19): a BF16 round issues slot 0's peer load and waits for it (the next slot's
    address waits on the scoreboard slot 0's load shares with the pointer-table loads) before
    slots 1-7's go out; an FP8 round issues all eight before its first wait. So on an 8 x H800
    node the FP8 pull is one trip per round (the Blackwell read, up to three, does not apply)
    and the BF16 pull's extra over one trip per round is rounds x trip x the slowest block's
    chance that any of slots 1-7 is a first-time rank: the perfect router's rotation always
    (slot 1), uniform routing from the exact per-token distribution (checked against
    enumeration above). Blackwell keeps its batches. At EP8 the rotation puts every token's
    slot 0 on its own rank, so the BF16 round's first wait is a local load (an L2 hit), not a
    peer trip (session 23); uniform: _round_wait over the profile's batches."""
    from analysis._moe_exchange import _late_rounds, _late_trips, _round_wait
    k13 = exchange_kernel("one-sided-1.3")
    assert k13.late_batches(8, 1, "hopper") == ()
    assert k13.late_batches(8, 2, "hopper") == ((1, 2, 3, 4, 5, 6, 7),)
    assert k13.late_batches(8, 1, "blackwell") == ((1, 2, 3), (4, 5, 6, 7))
    assert k13.late_batches(8, 2, "blackwell") == ((1, 4, 5, 6, 7),)
    p = next(p for p in k13.parameters() if p.name == "one-sided-1.3.late_pulls")
    assert "hopper, top-8, 2-B input: slots 1,2,3,4,5,6,7" in p.value
    assert "sm_90a" in p.source and "sm_103a" in p.source
    f = fidelity_moe.h800_nodes(1)
    ep, tokens = 8, 2
    kw = {"dispatch_bytes": 2, "combine_bytes": element, "routing": routing}
    k13 = dataclasses.replace(k13, round_reads=(), round_cycles=())   # the trips alone
    r = moe_exchange(f, "deepseek-v3", tokens, ep, kernel=k13, **kw)
    flat = moe_exchange(f, "deepseek-v3", tokens, ep,
                        kernel=dataclasses.replace(k13, late_pulls=()), **kw)
    rounds = _loop_steps(7168 * element, 256, 16)
    trip = _brute_round_trip(f, ep) + EXCHANGE_LATENCY["hopper"]["peer_load"].value - 4 * link_tech(
        "nvlink4").latency
    if element == 1:
        late = 0.0
    elif routing == "balanced":
        late = 1.0
    else:
        late = _late_rounds(_late_trips(256, 8, ep, 1, "uniform", ((1, 2, 3, 4, 5, 6, 7),)),
                            tokens)
        assert 0.99 < late < 1.0
    got = r.combine_phase.pull_latency - flat.combine_phase.pull_latency
    fetch = EXCHANGE_LATENCY["hopper"]["const_l15"].value   # the later batch's rows, round 1
    local = EXCHANGE_LATENCY["hopper"]["l2_hit"].value
    if element == 2 and routing == "balanced":
        assert _round_wait(256, 8, ep, 1, routing, ((1, 2, 3, 4, 5, 6, 7),), tokens, trip,
                           local) == local + trip
        want = rounds * local + fetch * late            # slot 0 local, then slots 1-7's trip
    elif element == 2:
        wait = _round_wait(256, 8, ep, 1, routing, ((1, 2, 3, 4, 5, 6, 7),), tokens, trip, local)
        flat_wait = _round_wait(256, 8, ep, 1, routing, (), tokens, trip, local)
        assert wait < trip * (1 + late)
        want = rounds * (wait - (trip if flat_wait is None else flat_wait)) + fetch * late
    else:
        want = 0.0
    assert got == pytest.approx(want, rel=1e-9, abs=1e-15)
    assert r.dispatch == flat.dispatch


@settings(max_examples=30, deadline=None)
@given(st.sampled_from(sorted(_WALK)), st.integers(0, 6), st.floats(1.0, 8.0),
       st.floats(0.0, 2.0))
@example(("one-sided-1.3", "hopper", 2), 1, 1.0, 0.0)      # ibgda's random draw, session 23
def test_round_reads_are_the_walks_totals(key, rounds, distinct, late):
    """Each compiled combine loop's other dependent loads per round (session 22's scoreboard
    walk of the SASS): the profile's round_reads entry prices, for any rounds, distinct ranks
    and expected late trips, the walk's totals less what the chain and the late rows' fetch
    already charge (reference: the totals by hand, _round_reads_ref); more rounds, ranks or
    late trips never cost less."""
    kernel, arch, element = key
    k = exchange_kernel(kernel)
    late = min(late, len(k.late_batches(8, element, arch)))
    got, used = k.round_read_latency(8, element, arch, rounds, distinct, late)
    assert got == pytest.approx(_round_reads_ref(kernel, arch, element, rounds, distinct, late),
                                rel=1e-12, abs=1e-18)
    # a Parameter is used iff its steps cost something: nothing without a round; a round can
    # cost nothing (the Hopper 1.3 BF16 walk's round 1 with slot 0 alone: no step beyond the
    # chain's), and then names no Parameter (main 2674374 named the later rounds' at rounds=1)
    assert got >= 0.0 and (got == 0.0) == (used == ())
    assert rounds > 0 or got == 0.0
    assert set(used) <= set(EXCHANGE_LATENCY[arch].values())
    for more in ((rounds + 1, distinct, late), (rounds, min(distinct + 1, 8.0), late),
                 (rounds, distinct, min(late + 0.5, len(k.late_batches(8, element, arch))))):
        assert k.round_read_latency(8, element, arch, *more)[0] >= got - 1e-18


def test_round_reads_move_the_blog18_one_token_combine():
    """blog18's combine at EP8 and one token on GB200 (perfect router: 8 distinct ranks, slot 7
    valid, 4 rounds): beyond its peer trips and what was charged before, the walk's chains add
    2 const_l15 + 5 const_l1 + 2 l1_hit in round 1 and 9 const_l1 + 4 l1_hit in each later
    round, 666.7 ns to the pull, and (session 26) the output row's const_l15 in round 1, 53.0 ns
    more; and the cycles the compiled loop issues beyond those loads with all 8 slots valid
    (session 27's round_cycles: 360 in round 1, 320 in each later round), 666.7 ns more; since
    session 29 (the chains read as the walk's slopes) 6 const_l1 + 4 l1_hit and 383 cycles in
    each later round (the same walk, so the same sum but for the table's rounding); the
    dispatch, the EP2 combine's late part (slot 7 repeats a rank) and a kernel without the
    entries are unchanged. The trtllm-ep8-bs1-combine row moves by the same amount."""
    f = fidelity_moe.nvl72()
    kw = {"dispatch_bytes": 2, "combine_bytes": 2, "routing": "balanced"}
    k = exchange_kernel("one-sided")
    bare = dataclasses.replace(k, round_reads=(), round_cycles=())
    r, r0 = (moe_exchange(f, "deepseek-v3", 1, 8, kernel=x, **kw) for x in (k, bare))
    lat = EXCHANGE_LATENCY["blackwell"]
    want = (3 * lat["const_l15"].value + 5 * lat["const_l1"].value + 2 * lat["l1_hit"].value
            + 360 * lat["cycle"].value
            + 3 * (6 * lat["const_l1"].value + 4 * lat["l1_hit"].value
                   + 383 * lat["cycle"].value))
    assert r.combine_phase.pull_latency - r0.combine_phase.pull_latency == pytest.approx(
        want, rel=1e-12)
    # 666.7 before session 24, 1033.4 before 26, 1183.9 before 27, 1386.4 before 29
    assert round(want * 1e9, 1) == 1387.8
    assert r.combine - r0.combine == pytest.approx(want, rel=1e-9)
    assert r.dispatch == r0.dispatch
    assert {"one-sided.round_reads", "one-sided.round_cycles"} <= {p.name for p in r.parameters}
    assert "one-sided.round_reads" not in {p.name for p in r0.parameters}
    row, _ = fidelity_moe.CASES["trtllm-ep8-bs1-combine"]({"gpus": 8})
    assert row == pytest.approx(fidelity_moe.kernel_span(r.combine, f) * 1e6, rel=1e-12)
    # EP2: two distinct ranks, no late trip: the ends' interpolation at 1/7 of the way
    e2, e20 = (moe_exchange(f, "deepseek-v3", 1, 2, kernel=x, **kw) for x in (k, bare))
    assert e2.combine - e20.combine == pytest.approx(
        _round_reads_ref("one-sided", "blackwell", 2, 4, 2, 0.0), rel=1e-9)
    # pplx pushes: no pull, nothing read
    p = moe_exchange(f, "deepseek-v3", 1, 8, kernel="pplx", **kw)
    assert "pplx.round_reads" not in {x.name for x in p.parameters}


def test_round_reads_profile_is_validated_and_sourced():
    k = exchange_kernel("one-sided")
    p = next(p for p in k.parameters() if p.name == "one-sided.round_reads")
    assert "scoreboard" in p.source and "579435f9" in p.source and "sm_90a" in p.source
    assert p.value.startswith("blackwell, top-8, any input: round 1 1 const_l15 + 3 const_l1 + 1 "
                              "l1_hit")
    p13 = next(p for p in exchange_kernel("one-sided-1.3").parameters()
               if p.name == "one-sided-1.3.round_reads")
    assert "5e891c6b" in p13.source and "1-B input" in p13.value
    ok = ("", 8, 0, (), (), (), (), (), ())
    for bad in [ok[:8], ("", 8, 0, (("l1_hit", -1),), (), (), (), (), ()),
                ("", 8, 0, (("peer_load", 1),), (), (), (), (), ()),
                ("", 8, 0, (("l1_hit", float("inf")),), (), (), (), (), ()),
                ("", 8, 0, (("l1_hit", True),), (), (), (), (), ()),
                ("", 8, 0, (), (), ((("l1_hit", 1),),), (), (), ()),
                ("", 8, 0, (), (), (("l1_hit", 1),), (), (), (("l1_hit", 1),)),
                ("ampere", 8, 0, (), (), (), (), (), ()), ("", 0, 0, (), (), (), (), (), ()),
                ("", 8, -1, (), (), (), (), (), ()), ("", 8.0, 0, (), (), (), (), (), ())]:
        # session 38: a key's top_k of another kind (8.0) is a wrong kind
        with pytest.raises(TypeError if type(bad[1]) is not int else ValueError,
                           match="round_reads"):
            dataclasses.replace(k, round_reads=(bad,))
    with pytest.raises(TypeError, match="round_reads"):   # session 38: one entry bare, a kind
        dataclasses.replace(k, round_reads=ok)
    with pytest.raises(ValueError, match="twice"):
        dataclasses.replace(k, round_reads=(ok, ok))
    with pytest.raises(ValueError, match="round_reads needs a pulling combine"):
        dataclasses.replace(exchange_kernel("pplx"), round_reads=(ok,))
    # an empty entry prices nothing; a top-4 token has no entry
    e = dataclasses.replace(k, round_reads=(ok,), round_cycles=())
    assert e.round_read_latency(8, 2, "blackwell", 4, 8, 1.0) == (0.0, ())
    assert k.round_read_latency(4, 2, "blackwell", 4, 4, 0.0) == (0.0, ())


@pytest.mark.parametrize("ep,top_k", [(2, 8), (4, 8), (8, 8), (16, 4)])
def test_dispatch_slot_claims_load_each_expert_id_after_the_last_atomic(ep, top_k):
    """Session 22, the scoreboard walk of moeA2ADispatchKernel's slot claims (flashinfer
    579435f9, sm_100a, thread 0): each slot after the first loads its expert id only after the
    previous slot's atomic result (an L1 hit: the ids' sector came with slot 0's load), and each
    slot that claims a rank reloads the counters' base from the parameters first (a constant-L1
    hit). Against the profile without those two steps: (top_k - 1) x l1_hit + the busiest
    dispatch token's distinct ranks (perfect router, brute force) x const_l1, on GB200; the
    combine is unchanged; a bad slot count is refused."""
    m = dataclasses.replace(model_config("deepseek-v3"), name=f"dsv3-top{top_k}",
                            experts_per_token=top_k)
    f = fidelity_moe.nvl72()
    k = exchange_kernel("one-sided")
    # the claims' steps: the id loads, then the base reloads (the first from the L1.5)
    chain = list(k.chain[0])
    i = chain.index(("l1_hit", "further_slots"))
    assert chain[i + 1:i + 3] == [("const_l15", "one"), ("const_l1", "further_ranks")]
    del chain[i:i + 3]
    bare = dataclasses.replace(k, chain=(tuple(chain), k.chain[1]))
    kw = {"dispatch_bytes": 2, "combine_bytes": 2, "routing": "balanced"}
    r, r0 = (moe_exchange(f, m, 1, ep, kernel=x, **kw) for x in (k, bare))
    lat = EXCHANGE_LATENCY["blackwell"]
    ranks = _perfect_router_busiest(ep, 1, top_k)[0]
    # the first claim's base load is the kernel's first read of its constant line: the L1.5
    # (review S22-R6)
    want = ((top_k - 1) * lat["l1_hit"].value + lat["const_l15"].value
            + (ranks - 1) * lat["const_l1"].value)
    assert r.dispatch - r0.dispatch == pytest.approx(want, rel=1e-9)
    assert r.combine == r0.combine
    for bad in (0, 1.5, True, -8):     # a wrong kind is a TypeError (session 31)
        with pytest.raises(SpecError if type(bad) is int else TypeError, match="slots"):
            k.chain_latency(0, "blackwell", 8, 4, slots=bad)


@pytest.mark.parametrize("parts", [2, (0.5, 1 / 16), (0.5, 1 / 16, 1 / 32)])
def test_dispatch_waits_for_each_payloads_size_before_its_rows(parts):
    """Session 22 (the walk of the dispatch's payload loop, 579435f9 sm_100a and sm_90a,
    5e891c6b): before a payload's pointer rows the block loads the payload's bytes per token
    from the parameters and waits for it: the first payload's line from the L1.5, every later
    payload's (the given parts after the first, then the two small payloads) a constant-L1 hit.
    Against the profile without those steps, on GB200 at EP8; the combine is unchanged."""
    f = fidelity_moe.nvl72()
    k = exchange_kernel("one-sided")
    # the size loads: the L1.5 fetch right after the pointer-free claims' base reloads, the
    # further payloads' and the two small payloads' constant-L1 hits
    chain = list(k.chain[0])
    i = chain.index(("const_l1", "further_payloads"))
    assert chain[i - 1] == ("const_l15", "one")
    del chain[i - 1:i + 1]
    chain = [s for s in chain if s != ("const_l1", "one")]
    bare = dataclasses.replace(k, chain=(tuple(chain), k.chain[1]))
    kw = {"dispatch_bytes": parts, "combine_bytes": 2, "routing": "balanced"}
    r, r0 = (moe_exchange(f, "deepseek-v3", 1, 8, kernel=x, **kw) for x in (k, bare))
    lat = EXCHANGE_LATENCY["blackwell"]
    given = len(parts) if isinstance(parts, tuple) else 1
    want = lat["const_l15"].value + (given - 1 + 2) * lat["const_l1"].value
    assert r.dispatch - r0.dispatch == pytest.approx(want, rel=1e-9)
    assert r.combine == r0.combine
