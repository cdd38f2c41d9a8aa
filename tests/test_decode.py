"""The decode model against hand calculation on a small config, brute force and bad input."""

import dataclasses
import pathlib

import networkx as nx
import numpy as np
import pytest
from degrade import built
from hypothesis import given, settings
from hypothesis import strategies as st

import analysis
from analysis._decode import (
    DECODE_HBM_EFFICIENCY,
    GRAPH_KERNEL_OVERHEAD,
    KERNELS,
    Layout,
    decode_step,
    expected_active_experts,
    expected_max_active,
    expert_activation,
    parse_layout,
    step_kernel_lists,
)
from analysis._models import MODELS, load_model_toml
from fabric import ChipSpec, Fabric, FabricError, SpecError
from fabric._units import is_real

SMALL = load_model_toml(pathlib.Path(__file__).parent / "data" / "model_small.toml")
CHIP = ChipSpec("toy", 10**9, 1e9, 1e12, 1e9 / 3, "test: round numbers")


class _Res:
    def __init__(self, time):
        self.time = time


def fake_cost(fabric, op, nbytes, *, algorithm, ranks, transport):
    """A closed-form stand-in for analysis.cost: 1 us + nbytes at 1 GB/s."""
    assert op in ("all-to-all", "all-to-allv", "all-reduce", "all-gather", "reduce-scatter")
    assert transport in (None, "loadstore", "rdma")
    if op == "all-to-allv":                          # the busiest rank's send or receive
        nbytes = max(nbytes.sum(axis=0).max(), nbytes.sum(axis=1).max())
    if op in ("all-to-all", "all-gather", "reduce-scatter"):   # what a rank sends to others
        nbytes = nbytes * (len(ranks) - 1) / len(ranks)
    return _Res(1e-6 + nbytes / 1e9)


@pytest.fixture
def fab():
    G = nx.complete_graph(4)
    nx.set_node_attributes(G, "chip", "kind")
    nx.set_edge_attributes(G, 1e9, "bandwidth")
    nx.set_edge_attributes(G, 1e-7, "latency")
    return Fabric.from_graph(G, chip=CHIP, name="toy4")


def test_small_by_hand(fab):
    # the roofline at peak bandwidth (hbm_efficiency=1), eager launches, no kernel floors
    # and no GEMM fixed part: their own closed forms are test_kernel_floors_by_hand and
    # test_gemm_fixed_time_by_hand
    r = decode_step(SMALL, fab, batch=4, context=10, layout="tp=2,dp=2",
                    collective=fake_cost, cuda_graphs=False, hbm_efficiency=1.0,
                    kernel_floors={}, gemm_fixed_time=0.0)
    us = 1e-6
    # attention: 12416 weights (q,k,v,o of 4 heads x 16, 2 KV heads, + 2 norms) over tp=2,
    # 2 B each, at 1 GB/s; KV: 2 sequences x 11 tokens x 64 elements x 2 B, split 2 ways
    attention = 12416 * 2 / 2 / 1e9 + 2 * 11 * 64 * 2 / 2 / 1e9
    assert r.layers[0].attention == pytest.approx(attention)
    allreduce = 1 * us + 2 * 64 * 2 / 1e9               # 2 tokens x 64 x 2 B
    dense = attention + 24576 * 2 / 2 / 1e9 + 2 * allreduce + 12 * 4 * us
    assert r.layers[0].total == pytest.approx(dense)
    # MoE: 4 tokens, pick 2/8, each expert active with 1 - 0.75^4; 2 experts per chip
    active = 1 - 0.75 ** 4
    # busiest of 4 chips with 2 experts each: E[max] = P(max >= 1) + P(max >= 2)
    busiest = (1 - (1 - active) ** 8) + (1 - (1 - active ** 2) ** 4)
    ffn = ((64 * 8 + 8) + 6144) * 2 / 1e9 + busiest * 6144 * 2 / 1e9
    # 1 token per chip, to each of 3 remote chips with probability 1 - 0.75^2
    a2a = 1e-6 + 1 * 3 * (1 - 0.75 ** 2) * 64 * 2 / 1e9
    moe = attention + ffn + allreduce + 2 * a2a + 19 * 4 * us
    assert r.layers[1].ffn == pytest.approx(ffn)
    assert r.layers[1].dispatch == pytest.approx(a2a)
    assert r.layers[1].total == pytest.approx(moe)
    head = (100 * 64 + 64) * 2 / 2 / 1e9 + 3 * 4 * us
    assert r.head.total == pytest.approx(head)
    assert r.time == pytest.approx(dense + 3 * moe + head)
    assert r.layers[1].active_experts_chip == pytest.approx(busiest)
    assert r.tokens_per_s_user == pytest.approx(1 / r.time)
    assert r.tokens_per_s_system == pytest.approx(4 / r.time)
    assert r.layers[1].active_experts == pytest.approx(8 * active)


def test_breakdown_adds_up(fab):
    r = decode_step(SMALL, fab, batch=3, context=7, layout="tp=1", collective=fake_cost,
                    overlap=0.5, fusion_factor=2)
    b = r.breakdown
    assert b.attention + b.ffn + b.head + b.exposed_comm + b.launch == pytest.approx(b.total)
    assert b.total == pytest.approx(r.time)
    assert len(r.layers) == SMALL.layers


def test_overlap_and_fusion(fab):
    base = decode_step(SMALL, fab, batch=4, context=10, collective=fake_cost,
                       cuda_graphs=False)
    hidden = decode_step(SMALL, fab, batch=4, context=10, collective=fake_cost, overlap=1.0,
                         cuda_graphs=False)
    # local time per layer (> 13 us) exceeds the communication, so all of it hides
    assert hidden.breakdown.exposed_comm == 0
    assert base.time - hidden.time == pytest.approx(base.breakdown.exposed_comm)
    fused = decode_step(SMALL, fab, batch=4, context=10, collective=fake_cost, fusion_factor=10,
                        cuda_graphs=False)
    assert fused.breakdown.launch == pytest.approx(base.breakdown.launch / 10)
    kernels = len(KERNELS["gqa"]) * 4 + len(KERNELS["dense_ffn"]) + 3 * len(KERNELS["moe_ffn"])
    assert base.breakdown.launch == pytest.approx((kernels + 3) * 4e-6)


def test_cuda_graphs_pay_replay_not_launch(fab):
    """With CUDA graphs a kernel costs the graph-replay gap, over the graph kernel list."""
    # without kernel floors and GEMM fixed parts the two modes differ only in their
    # boundaries (the lists differ in their small kernels and GEMMs, so with those they
    # differ in them too)
    eager = decode_step(SMALL, fab, batch=4, context=10, collective=fake_cost,
                        cuda_graphs=False, kernel_floors={}, gemm_fixed_time=0.0)
    graph = decode_step(SMALL, fab, batch=4, context=10, collective=fake_cost, cuda_graphs=True,
                        kernel_floors={}, gemm_fixed_time=0.0)
    assert graph.cuda_graphs and not eager.cuda_graphs
    per_layer = [x.kernels for x in graph.layers]
    # GQA attention keeps the operator list; dense FFN and MoE FFN the graph lists (+2
    # exchange kernels of the all-to-all on 4 expert ranks)
    gqa = len(KERNELS["gqa"])
    lists = step_kernel_lists(SMALL, fab.chip, tp=graph.layout.tp, tokens=4)  # the step's
    assert per_layer == [gqa + len(lists["dense_ffn"])] + [
        gqa + len(lists["moe_ffn"]) + 2] * 3
    launch = (sum(per_layer) + len(KERNELS["head"])) * GRAPH_KERNEL_OVERHEAD.value
    assert graph.breakdown.launch == pytest.approx(launch)
    assert graph.time - graph.breakdown.launch == pytest.approx(
        eager.time - eager.breakdown.launch)
    half = decode_step(SMALL, fab, batch=4, context=10, collective=fake_cost, cuda_graphs=True,
                       graph_kernel_overhead=GRAPH_KERNEL_OVERHEAD.value / 2)
    assert half.breakdown.launch == pytest.approx(launch / 2)


def test_ep_kernel_goes_through_moe_exchange():
    import topologies
    f = topologies.build("nvl72")
    kw = {"batch": 64, "context": 1024, "layout": "tp=1,dp=8", "dispatch_bytes": 1,
          "combine_bytes": 2, "cuda_graphs": True}
    r = decode_step("deepseek-v3", f, ep_kernel="one-sided", **kw)
    # decode charges every exchange kernel its graph gap itself: the exchange without them
    x = analysis.moe_exchange(f, "deepseek-v3", 8, 8, kernel="one-sided", dispatch_bytes=1,
                              combine_bytes=2, kernel_gap=0.0)
    moe = r.layers[-1]
    assert moe.dispatch == pytest.approx(x.dispatch) and moe.combine == pytest.approx(x.combine)
    assert r.ep_kernel == "one-sided"
    # the one-sided kernels (3 for dispatch, 2 for combine) replace the collective's two
    lists = step_kernel_lists("deepseek-v3", f.chip, tp=1, tokens=8)
    assert moe.kernels == len(lists["mla"]) + len(lists["moe_ffn"]) + 5
    with pytest.raises(SpecError, match="uniform routing"):
        decode_step("deepseek-v3", f, ep_kernel="one-sided", skew=1.0, **kw)
    with pytest.raises(SpecError, match="unknown MoE exchange kernel"):
        decode_step("deepseek-v3", f, ep_kernel="smoke-signals", **kw)


def test_runtime_is_passed_to_the_collective(fab):
    seen = []

    def cost(fabric, op, nbytes, *, algorithm, ranks, transport, runtime=None):
        seen.append(runtime)
        return fake_cost(fabric, op, nbytes, algorithm=algorithm, ranks=ranks,
                         transport=transport)

    decode_step(SMALL, fab, batch=4, context=10, layout="tp=2,dp=2", collective=cost,
                runtime="nccl")
    assert seen and set(seen) == {"nccl"}
    r = decode_step(SMALL, fab, batch=4, context=10, layout="tp=2,dp=2", collective=cost)
    assert r.runtime is None and None in seen


def test_uniform_formula():
    assert expected_active_experts(256, 8, 64) == pytest.approx(256 * (1 - (1 - 8 / 256) ** 64))
    assert expected_active_experts(256, 8, 1) == pytest.approx(8)
    assert expected_active_experts(256, 8, 10**6) == pytest.approx(256)


def test_uniform_against_brute_force():
    rng = np.random.default_rng(0)
    E, k, T, trials = 16, 4, 5, 20000
    # each token picks k distinct experts: the first k of a random permutation
    picks = np.argsort(rng.random((trials, T, E)), axis=-1)[..., :k].reshape(trials, -1)
    hit = np.zeros((trials, E), dtype=bool)
    np.put_along_axis(hit, picks, True, axis=1)
    counts = hit.sum(axis=1)
    mean, sem = np.mean(counts), np.std(counts) / np.sqrt(trials)
    assert expected_active_experts(E, k, T) == pytest.approx(mean, abs=4 * sem)


@pytest.mark.parametrize("E, k, T, chips, skew", [
    (16, 4, 1, 4, 0.0), (16, 4, 5, 4, 0.0), (24, 2, 3, 8, 0.0), (16, 4, 5, 4, 1.0)])
def test_busiest_chip_against_brute_force(E, k, T, chips, skew):
    # Monte Carlo of the max over chips of distinct active experts, tokens drawing k
    # distinct experts with the model's pick probabilities (uniform: exact; skew: the
    # model's independent-pick approximation is what is being checked, so 5% tolerance)
    rng = np.random.default_rng(1)
    trials = 20000
    pick, active = expert_activation(E, k, T, skew)
    owner = np.arange(E) % chips
    if skew == 0:
        picks = np.argsort(rng.random((trials, T, E)), axis=-1)[..., :k].reshape(trials, -1)
        hit = np.zeros((trials, E), dtype=bool)
        np.put_along_axis(hit, picks, True, axis=1)
    else:
        hit = (rng.random((trials, T, E)) < pick).any(axis=1)
    per_chip = np.stack([hit[:, owner == c].sum(axis=1) for c in range(chips)], axis=1)
    sim = per_chip.max(axis=1).mean()
    assert expected_max_active(active, owner, chips) == pytest.approx(sim, rel=0.05)


def test_busiest_chip_at_batch_one_reads_a_whole_expert():
    # one token, 8 of 384 experts, 128 chips: almost surely some chip holds one active expert
    _, active = expert_activation(384, 8, 1)
    owner = np.arange(384) % 128
    assert expected_max_active(active, owner, 128) == pytest.approx(1.0, abs=0.25)
    assert np.bincount(owner, weights=active).max() < 0.2      # the mean would say 0.19


def test_skew_concentrates_load():
    _pick0, act0 = expert_activation(64, 4, 16)
    pick, act = expert_activation(64, 4, 16, skew=1.2)
    assert pick.sum() <= 4 + 1e-12 and pick[0] > pick[-1]
    assert act.sum() < act0.sum()                     # fewer distinct experts under skew
    with pytest.raises(SpecError, match="skew must be"):
        expert_activation(64, 4, 16, skew=-1)


def test_skew_slows_the_critical_chip(fab):
    # vLLM's exchange is the all-to-allv of the routed tokens (TensorRT-LLM's attention DP
    # gathers every token whatever the routing: tests/test_models_s23_adp.py)
    kw = {"batch": 64, "context": 10, "collective": fake_cost, "engine": "vllm"}
    uni = decode_step(SMALL, fab, **kw)
    hot = decode_step(SMALL, fab, skew=2.0, **kw)
    assert hot.layers[-1].dispatch > uni.layers[-1].dispatch


def test_monotone_in_context_and_bandwidth(fab):
    a = decode_step(SMALL, fab, batch=4, context=10, collective=fake_cost)
    b = decode_step(SMALL, fab, batch=4, context=10_000, collective=fake_cost)
    c = decode_step(SMALL, fab, batch=4, context=10, collective=fake_cost, hbm_efficiency=0.5)
    assert b.time > a.time and c.time > a.time


@pytest.mark.parametrize("text, n, expect", [
    (None, 128, Layout(1, 128, 128)),
    ("tp=8", 128, Layout(8, 16, 128)),
    ("ep=64", 128, Layout(1, 64, 64)),
    ("tp=4, ep=64", 128, Layout(4, 16, 64)),
    ({"tp": 2, "dp": 3}, 8, Layout(2, 3, 6)),
])
def test_parse_layout(text, n, expect):
    assert parse_layout(text, n) == expect


@pytest.mark.parametrize("text, match", [
    ("tp=3", "tp=3 does not divide the 128 chips"),
    ("tp=8,dp=32", "tp\\*dp=8\\*32=256 chips but the system has 128"),
    ("tp=2,dp=2,ep=8", "ep=8 must equal tp\\*dp"),
    ("pp=2", "cannot read 'pp=2'"),
    ("tp=0", "tp must be an integer >= 1"),
])
def test_bad_layouts(text, match):
    with pytest.raises(SpecError, match=match):
        parse_layout(text, 128)


def test_bad_input(fab):
    big = dataclasses.replace(SMALL, routed_experts=2, experts_per_token=2)
    with pytest.raises(SpecError, match="ep=4 expert ranks but small has only 2 routed experts"):
        decode_step(big, fab, batch=1, context=1, collective=fake_cost)
    with pytest.raises(SpecError, match="weights need 1028.9 GB but the 4 chips used have "
                                        "4.0 GB"):
        decode_step("kimi-k2", fab, batch=1, context=1, collective=fake_cost)
    with pytest.raises(SpecError, match="KV cache .* for 1 sequences x 10000000 tokens"):
        decode_step(SMALL, fab, batch=4, context=10**7, collective=fake_cost)
    with pytest.raises(SpecError, match="unknown model"):
        decode_step("nope", fab, batch=1, context=1, collective=fake_cost)
    with pytest.raises(SpecError,
                       match="unknown transport 'tcp'; known: loadstore, rdma, or native"):
        decode_step(SMALL, fab, batch=1, context=1, collective=fake_cost, transport="tcp")
    with pytest.raises(SpecError, match="overlap must be in"):
        decode_step(SMALL, fab, batch=1, context=1, collective=fake_cost, overlap=2)
    with pytest.raises(SpecError, match="batch must be an integer >= 1"):
        decode_step(SMALL, fab, batch=0, context=1, collective=fake_cost)
    with pytest.raises(TypeError, match="batch must be an int"):
        decode_step(SMALL, fab, batch=1.5, context=1, collective=fake_cost)
    with pytest.raises(SpecError, match="names no chip"):
        decode_step(SMALL, fab.replace(chip=None), batch=1, context=1, collective=fake_cost)


def test_heads_must_divide(fab):
    odd = dataclasses.replace(SMALL, attention=dataclasses.replace(SMALL.attention, heads=6,
                                                                    kv_heads=2))
    with pytest.raises(SpecError, match="tp=4 does not divide the 6 attention heads of small"):
        decode_step(odd, fab, batch=1, context=1, layout="tp=4", collective=fake_cost)


def test_without_collectives_model(fab, monkeypatch):
    monkeypatch.delattr(analysis, "cost", raising=False)
    with pytest.raises(FabricError, match="needs analysis.cost"):
        decode_step(SMALL, fab, batch=1, context=1)


def test_kimi_k2_on_sd200_ultra_by_parts():
    import topologies
    f = topologies.build("sd200-ultra")
    r = decode_step("kimi-k2", f, batch=1, context=4096, layout="tp=8", collective=fake_cost)
    m, c = MODELS["kimi-k2"], f.chip
    moe = r.layers[-1]
    # one token activates exactly k=8 experts; the critical chip reads at most one
    assert moe.active_experts == pytest.approx(8)
    # the MLA latent down-projections (q_a, kv_a and their norms) are whole on every rank
    att = m.attention
    rep = 7168 * att.q_lora_rank + att.q_lora_rank + 7168 * 576 + att.kv_lora_rank
    assert moe.attention_weights == pytest.approx(
        (rep + (m.attention_params - rep) / 8) / (c.hbm_bandwidth * DECODE_HBM_EFFICIENCY.value))
    # weights of one token's path over 1 B/weight at HBM speed are a floor for the step
    assert r.breakdown.weights > 0 and r.time > r.breakdown.weights / 128
    assert r.hbm_per_chip < c.hbm_bytes


def test_with_the_collectives_model():
    # integration: the default collective is analysis.cost; the layer's comm is the sum of
    # the calls it made (one TP all-reduce, dispatch and combine per MoE layer)
    import topologies
    f = topologies.build("sd200-ultra")
    calls = []

    def recording(fabric, op, nbytes, **kw):
        r = analysis.cost(fabric, op, nbytes, **kw)
        calls.append((op, r.time))
        return r

    r = decode_step("kimi-k2", f, batch=64, context=1024, layout="tp=8", collective=recording)
    default = decode_step("kimi-k2", f, batch=64, context=1024, layout="tp=8")
    # the same prices, but a caller's collective function is not known to hold its kernels'
    # starts (analysis._decode._held_starts): the default (analysis.cost under NCCL) holds those
    # of TensorRT-LLM's fused all-reduce kernels (61 attention blocks, 1 dense FFN) and of the
    # collective exchange's two kernels (60 MoE layers): 61 + 1 + 120 = 182 boundaries fewer
    assert [x.kind for x in r.layers].count("moe") == 60 and len(r.layers) == 61
    assert r.time - default.time == pytest.approx(182 * GRAPH_KERNEL_OVERHEAD.value, rel=1e-9)
    # the hyper-mesh is one direct load/store domain: each of the 16 TP groups is costed on
    # its own chips (slowest_group_seconds), then dispatch and combine
    ar = [t for op, t in calls if op == "all-reduce"]
    assert len(ar) == 128 // 8
    assert [op for op, _ in calls if op != "all-reduce"] == ["all-to-all", "all-to-all"]
    moe = r.layers[-1]
    assert moe.comm == pytest.approx(max(ar) + sum(t for op, t in calls if op != "all-reduce"))
    assert r.layers[0].tp_allreduce == pytest.approx(2 * max(ar))
    rdma = decode_step("kimi-k2", f, batch=64, context=1024, layout="tp=8", transport="rdma")
    assert rdma.layers[-1].comm > moe.comm


def test_all_to_allv_kernel_goes_through_the_collective(fab):
    """ep_kernel='all-to-allv' costs the exchange with the collective function given."""
    seen = []

    def cost(fabric, op, nbytes, *, algorithm, ranks, transport, **kw):
        seen.append(op)
        return fake_cost(fabric, op, nbytes, algorithm=algorithm, ranks=ranks,
                         transport=transport)

    r = decode_step(SMALL, fab, batch=4, context=10, collective=cost, ep_kernel="all-to-allv")
    assert "all-to-all" in seen and r.layers[-1].dispatch > 0
    import topologies
    f = topologies.build("hgx-h200")
    r = decode_step("deepseek-v3", f, batch=16, context=128, layout="tp=1",
                    ep_kernel="all-to-allv", runtime="nccl")
    assert r.layers[-1].dispatch > 0


# -- session 2: expert tensor parallelism, engine kernel lists, sourced defaults ------------

def test_expert_tensor_parallel_by_hand(fab):
    # "tp=2,dp=1,etp=2": every expert split over the 2 chips (vLLM's plain TP), no exchange;
    # each chip reads half of every active expert and computes all 4 tokens' share of it
    r = decode_step(SMALL, fab, batch=4, context=10, layout="tp=2,dp=1,etp=2",
                    collective=fake_cost, cuda_graphs=False, hbm_efficiency=1.0)
    assert str(r.layout) == "tp=2,dp=1,ep=1,etp=2"
    moe = r.layers[-1]
    active = 8 * (1 - 0.75 ** 4)                   # E (1 - (1 - k/E)^T), E=8, k=2, T=4
    assert moe.active_experts_chip == pytest.approx(active)
    ffn_w = ((64 * 8 + 8) + 6144 / 2) * 2 / 1e9 + active * 6144 * 2 / 2 / 1e9
    assert moe.ffn_weights == pytest.approx(ffn_w)
    allreduce = 1e-6 + 4 * 64 * 2 / 1e9             # 4 tokens x 64 x 2 B over the 2 ranks
    assert moe.dispatch == 0 and moe.combine == 0
    assert moe.comm == pytest.approx(2 * allreduce) == moe.tp_allreduce
    # whole experts over the same 2 chips read more at this batch (the busiest chip)
    ep = decode_step(SMALL, fab, batch=4, context=10, layout="tp=2,dp=1",
                     collective=fake_cost, cuda_graphs=False, hbm_efficiency=1.0)
    assert ep.layers[-1].ffn_weights > moe.ffn_weights


@pytest.mark.parametrize("layout, match", [
    ("tp=2,dp=2,etp=2", "etp=2 .* dp = 1"),
    ("tp=2,dp=1,etp=4", "etp=4 .* etp = tp"),
    ("tp=2,etp=x", "cannot read"),
])
def test_expert_tensor_parallel_refused(fab, layout, match):
    with pytest.raises(SpecError, match=match):
        decode_step(SMALL, fab, batch=4, context=10, layout=layout, collective=fake_cost)


def test_engine_kernel_lists(fab):
    from analysis._decode import ENGINE_KERNELS, VLLM_GRAPH_KERNELS
    base = {"batch": 4, "context": 10, "layout": "tp=2,dp=2", "collective": fake_cost}
    v = decode_step("kimi-k2", topologies_build("sd200-ultra"), batch=4, context=10,
                    layout="tp=8", collective=fake_cost, engine="vllm")
    t = decode_step("kimi-k2", topologies_build("sd200-ultra"), batch=4, context=10,
                    layout="tp=8", collective=fake_cost, engine="trtllm")
    exch = 2                                        # the collective all-to-all's two kernels
    assert v.layers[-1].kernels == (len(VLLM_GRAPH_KERNELS["mla"])
                                    + len(VLLM_GRAPH_KERNELS["moe_ffn"]) + exch)
    lists = step_kernel_lists("kimi-k2", "sd200-chip", tp=8, tokens=4)
    assert t.layers[-1].kernels == len(lists["mla"]) + len(lists["moe_ffn"]) + exch
    assert v.layers[-1].launch == pytest.approx(v.layers[-1].kernels
                                                * GRAPH_KERNEL_OVERHEAD.value)
    assert set(ENGINE_KERNELS) == {"trtllm", "vllm", "sglang"}
    with pytest.raises(SpecError, match="engine must be one of"):
        decode_step(SMALL, fab, engine="lmdeploy", **base)


def test_sourced_defaults(fab):
    r = decode_step(SMALL, fab, batch=4, context=10, collective=fake_cost)
    assert r.cuda_graphs                            # the serving frameworks replay graphs
    params = {p.name: p for p in r.parameters}
    assert params["decode.hbm_efficiency"].value == DECODE_HBM_EFFICIENCY.value == 0.78
    assert "Hazy Research" in params["decode.hbm_efficiency"].source
    assert params["decode.graph_kernel_overhead"].value == GRAPH_KERNEL_OVERHEAD.value == 1.3e-6
    # achieved bandwidth scales every HBM read; the roofline is hbm_efficiency=1
    peak = decode_step(SMALL, fab, batch=4, context=10, collective=fake_cost,
                       hbm_efficiency=1.0)
    assert r.breakdown.weights == pytest.approx(peak.breakdown.weights / 0.78)
    assert r.breakdown.kv_cache == pytest.approx(peak.breakdown.kv_cache / 0.78)


def topologies_build(name):
    import topologies
    return topologies.build(name)


@settings(max_examples=15, deadline=None)
@given(tokens=st.integers(1, 3))
def test_expert_tensor_parallel_reads_every_active_expert_brute_force(tokens):
    # with etp = tp (ep = 1) a chip reads 1/etp of every expert some token picked: the
    # expected number of distinct experts, enumerated over every routing of the tokens
    import itertools
    E, k = SMALL.routed_experts, SMALL.experts_per_token
    picks = list(itertools.combinations(range(E), k))
    total = 0
    for choice in itertools.product(picks, repeat=tokens):
        total += len(set().union(*choice))
    brute = total / len(picks) ** tokens
    G = nx.complete_graph(2)
    nx.set_node_attributes(G, "chip", "kind")
    nx.set_edge_attributes(G, 1e9, "bandwidth")
    nx.set_edge_attributes(G, 1e-7, "latency")
    f2 = Fabric.from_graph(G, chip=CHIP, name="toy2")
    r = decode_step(SMALL, f2, batch=tokens, context=1, layout="tp=2,dp=1,etp=2",
                    collective=fake_cost, hbm_efficiency=1.0)
    moe = r.layers[-1]
    assert moe.active_experts_chip == pytest.approx(brute)
    fixed = (SMALL.router_params + SMALL.shared_experts * SMALL.expert_params / 2) * 2
    assert moe.ffn_weights == pytest.approx(
        (fixed + brute * SMALL.routed_expert_bytes / 2) / CHIP.hbm_bandwidth)


# -- per-kernel minimum duration (min_kernel_time) ------------------------------------------

def _floor_steps(floor, **kw):
    import topologies
    f = topologies.build("hgx-h200")
    base = {"batch": 4, "context": 2048, "layout": "tp=8,dp=1,etp=8", "engine": "vllm"}
    base.update(kw)
    return (decode_step("kimi-k2", f, **base),
            decode_step("kimi-k2", f, min_kernel_time=floor, **base))


def test_min_kernel_time_zero_is_byte_identical_and_tiny_floor_changes_nothing():
    # every kernel is above a 1 ps floor: the step is unchanged, byte for byte
    a, b = _floor_steps(1e-12)
    assert repr(dataclasses.replace(a, parameters=())) == repr(
        dataclasses.replace(b, parameters=()))
    a0, b0 = _floor_steps(0.0)
    assert repr(a0) == repr(b0)
    assert b.time > 0 and any(p.name == "decode.min_kernel_time" for p in b.parameters)


@settings(max_examples=10, deadline=None)
@given(st.floats(min_value=1e-3, max_value=1.0))
def test_min_kernel_time_tiny_kernels_cost_n_floors(floor):
    # closed form: with a floor far above every block's roofline, each layer's local time is
    # exactly its kernel count x floor (plus the unchanged boundaries and communication)
    a, b = _floor_steps(floor)
    for la, lb in zip(a.layers, b.layers):
        assert lb.attention == pytest.approx(_n_att(a) * floor)
        assert lb.ffn == pytest.approx((lb.kernels - _n_att(a)) * floor)
        assert lb.launch == la.launch and lb.comm == la.comm


def _n_att(step):
    from analysis._decode import VLLM_GRAPH_KERNELS
    return len(VLLM_GRAPH_KERNELS["mla"])


@pytest.mark.parametrize("bad", [-1e-6, float("nan"), float("inf"), "1us"])
def test_min_kernel_time_refuses_bad_input(bad):
    import topologies
    with pytest.raises(SpecError if is_real(bad) else TypeError, match="min_kernel_time"):  # kind: TypeError (s32)
        decode_step("kimi-k2", topologies.build("hgx-h200"), batch=1, context=16,
                    min_kernel_time=bad)


# -- routed experts' grouped-GEMM bandwidth (moe_hbm_efficiency) ------------------------------

def test_vllm_int4_moe_efficiency_is_the_published_trace_in_this_accounting():
    # vLLM issue #32832: Kimi K2 INT4 W4A16, TP=8 on 8x H200, 16 concurrent requests, the MoE
    # layer's two grouped GEMMs take 234 us. Re-derive the fraction through the model's own
    # byte accounting (uniform routing, 1/8 of each active expert per chip).
    from analysis._decode import VLLM_INT4_MOE_HBM_EFFICIENCY
    from fabric import chip_spec
    m = MODELS["kimi-k2.5-int4"]
    active = 384 * (1 - (1 - 8 / 384) ** 16)
    assert expected_active_experts(384, 8, 16) == pytest.approx(active)
    per_chip = active * 3 * 7168 * 2048 / 8 * (4 / 8 + 16 / 8 / 32)
    assert per_chip == pytest.approx(active * m.routed_expert_bytes / 8)
    frac = per_chip / 234e-6 / chip_spec("h200").hbm_bandwidth
    assert VLLM_INT4_MOE_HBM_EFFICIENCY.value == pytest.approx(frac, abs=5e-4)
    assert "32832" in VLLM_INT4_MOE_HBM_EFFICIENCY.source
    # the independent corroboration quoted in the docstring (FlagGems PR #3609: vLLM Marlin
    # W4A16 MoE on one H20, 256 experts top-8, 7168 x 2048, group-128 scales assumed)
    per_expert = 3 * 7168 * 2048 * (0.5 + 2 / 128)
    h20 = [expected_active_experts(256, 8, t) * per_expert / ms / 1e-3
           / chip_spec("h20").hbm_bandwidth
           for t, ms in ((1, 0.143), (16, 1.395), (64, 2.973))]
    assert [round(x, 2) for x in h20] == [0.32, 0.41, 0.42]


def _moe_steps(model="kimi-k2.5-int4", **kw):
    import topologies
    f = topologies.build("hgx-h200")
    base = {"batch": 16, "context": 2048, "layout": "tp=8,dp=1,etp=8", "engine": "vllm",
            "runtime": "symmetric-memory"}
    base.update(kw)
    return f, base, decode_step(model, f, **base)


def test_int4_default_applies_only_to_vllm_graphs_on_int4_experts():
    from analysis._decode import VLLM_INT4_MOE_HBM_EFFICIENCY as E
    f, base, d = _moe_steps()
    explicit = decode_step("kimi-k2.5-int4", f, moe_hbm_efficiency=E.value, **base)
    assert repr(dataclasses.replace(d, parameters=())) == repr(
        dataclasses.replace(explicit, parameters=()))
    par = {p.name: p for p in d.parameters}["decode.moe_hbm_efficiency"]
    assert par.value == E.value and "32832" in par.source
    # every other case reads the routed experts at the step's own fraction
    for model, kw in (("kimi-k2.5-int4", {"engine": "trtllm"}),
                      ("kimi-k2.5-int4", {"cuda_graphs": False}),
                      ("kimi-k2.5-nvfp4", {}), ("kimi-k2", {})):
        f, base, d = _moe_steps(model, **kw)
        same = decode_step(model, f, moe_hbm_efficiency=DECODE_HBM_EFFICIENCY.value, **base)
        assert d.time == pytest.approx(same.time, rel=1e-12), (model, kw)
        assert [x.ffn_weights for x in d.layers] == pytest.approx(
            [x.ffn_weights for x in same.layers], rel=1e-12)


@settings(max_examples=12, deadline=None)
@given(st.floats(min_value=0.05, max_value=1.0))
def test_moe_hbm_efficiency_scales_only_the_routed_read(eff):
    # closed form: ffn_weights = fixed / (peak x hbm) + busiest x expert / etp / (peak x eff)
    f, base, _ = _moe_steps()
    d = decode_step("kimi-k2.5-int4", f, moe_hbm_efficiency=eff, hbm_efficiency=1.0, **base)
    m, peak = MODELS["kimi-k2.5-int4"], f.chip.hbm_bandwidth
    moe = d.layers[-1]
    fixed = (m.router_params + m.shared_experts * m.expert_params / 8) * m.weight_bytes
    assert moe.ffn_weights == pytest.approx(
        fixed / peak + moe.active_experts_chip * m.routed_expert_bytes / 8 / (peak * eff))
    assert d.layers[0].ffn_weights == pytest.approx(m.dense_ffn_params * m.weight_bytes / 8
                                                     / peak)


@pytest.mark.parametrize("bad", [0.0, -0.1, 1.5, float("nan"), "0.3", True])
def test_moe_hbm_efficiency_refuses_bad_input(bad):
    import topologies
    with pytest.raises(SpecError if is_real(bad) else TypeError, match="moe_hbm_efficiency"):
        decode_step("kimi-k2", topologies.build("hgx-h200"), batch=1, context=16,
                    moe_hbm_efficiency=bad)


# -- per-kernel minimum durations (kernel_floors) -------------------------------------------

def test_every_listed_kernel_has_a_class():
    from analysis._decode import ENGINE_KERNELS, KERNEL_CLASSES
    names = {n for lists in (KERNELS, *ENGINE_KERNELS.values()) for ks in lists.values()
             for n in ks}
    assert names <= set(KERNEL_CLASSES), names - set(KERNEL_CLASSES)


def test_kernel_floors_by_hand(fab):
    # eager GQA layer: attn_norm (norm), rope, kv_cache_write, residual_add (elementwise) run
    # their floors beyond the boundary; the GEMMs and attention keep the roofline
    from analysis._decode import EMPTY_KERNEL_TIME, KERNEL_FLOORS
    kw = {"batch": 4, "context": 10, "layout": "tp=2,dp=2", "collective": fake_cost,
          "cuda_graphs": False, "hbm_efficiency": 1.0, "gemm_fixed_time": 0.0}
    off = decode_step(SMALL, fab, kernel_floors={}, **kw)
    on = decode_step(SMALL, fab, **kw)
    e = EMPTY_KERNEL_TIME.value
    norm = KERNEL_FLOORS["norm"].value - e
    elem = KERNEL_FLOORS["elementwise"].value - e
    topk = KERNEL_FLOORS["topk"].value - e
    assert on.layers[0].attention - off.layers[0].attention == pytest.approx(norm + 3 * elem)
    # dense FFN: ffn_norm, act_mul, residual_add; MoE FFN: ffn_norm, topk, expert_act,
    # shared_act, residual_add (dispatch and combine are timed by the exchange)
    assert on.layers[0].ffn - off.layers[0].ffn == pytest.approx(norm + 2 * elem)
    assert on.layers[1].ffn - off.layers[1].ffn == pytest.approx(norm + topk + 3 * elem)
    assert on.layers[1].kernel_floor == pytest.approx(2 * norm + topk + 6 * elem)
    assert on.head.kernel_floor == pytest.approx(norm)   # final_norm; lm_head, sample: none
    assert on.time - off.time == pytest.approx(
        sum(x.kernel_floor for x in on.layers) + on.head.kernel_floor)
    b = on.breakdown
    assert b.attention + b.ffn + b.head + b.exposed_comm + b.launch == pytest.approx(on.time)
    # a floor below an empty kernel adds nothing; no floors is the roofline, byte for byte
    low = decode_step(SMALL, fab, kernel_floors={"norm": e / 2}, **kw)
    assert repr(dataclasses.replace(low, parameters=())) == repr(
        dataclasses.replace(off, parameters=()))


#: Weights each MLA attention GEMM of the kernel lists reads (kimi-k2 / DeepSeek-V3
#: shapes, written out here independently of analysis._decode): name -> works.
_MLA_GEMMS = {
    "fuse_a_gemm": ("q_a", "kv_a"), "fused_qkv_a_proj": ("q_a", "kv_a"),
    "q_a_proj": ("q_a",), "kv_a_proj": ("kv_a",),
    "uq_qr_gemm": ("q_b",), "q_b_proj": ("q_b",),
    "uk_bgemm": ("w_uk",), "w_uk_bmm": ("w_uk",), "q_absorb": ("w_uk",),
    "uv_gemm": ("w_uv",), "w_uv_bmm": ("w_uv",), "v_absorb": ("w_uv",),
    "wo_gemm": ("o",), "o_proj": ("o",),
}


def _brute_step(r, model, lists, ep, floors, mkt, boundary, fusion, gemm_fixed, chip=None,
                context=512, per_kernel=True, engine=None):
    """The step re-added kernel by kernel: each kernel costs its boundary plus
    max(its roofline (+ the fixed part, for a GEMM), its floor beyond an empty kernel);
    fusion divides all but the roofline. A head block's heavy kernels share its roofline
    evenly; an FFN block's each run at their own (session 12: its share of its group of
    weights, the router, shared or routed experts, review S11-R6); an attention block's
    each run at their own (session 7: a projection
    GEMM max(weights / bw, FLOPs / peak), the attention kernel max(KV read, score FLOPs /
    BF16 peak)), with the norms' weights read on top."""
    from analysis import gemm_compute_efficiency
    from analysis._decode import _HEAVY, DECODE_HBM_EFFICIENCY, EMPTY_KERNEL_TIME, KERNEL_CLASSES

    def one(n, r_i):
        f_i = max(max(0.0, floors.get(KERNEL_CLASSES[n], 0.0) - EMPTY_KERNEL_TIME.value), mkt)
        fixed = gemm_fixed if KERNEL_CLASSES[n] == "gemm" else 0.0
        return boundary / fusion + r_i + (max(r_i + fixed, f_i) - r_i) / fusion

    def cost(names, roofline):
        heavy = [n for n in names if KERNEL_CLASSES[n] in _HEAVY]
        return sum(one(n, roofline / len(heavy) if KERNEL_CLASSES[n] in _HEAVY else 0.0)
                   for n in names)

    att_m, tp = model.attention, r.layout.tp
    t = -(-r.batch // r.layout.dp) * r.tokens_per_sequence
    h = model.hidden
    qk = att_m.qk_nope_head_dim + att_m.qk_rope_head_dim
    work = {"q_a": h * att_m.q_lora_rank, "kv_a": h * (att_m.kv_lora_rank + att_m.qk_rope_head_dim),
            "q_b": att_m.q_lora_rank * att_m.heads * qk / tp,
            "w_uk": att_m.kv_lora_rank * att_m.heads * att_m.qk_nope_head_dim / tp,
            "w_uv": att_m.kv_lora_rank * att_m.heads * att_m.v_head_dim / tp,
            "o": att_m.heads * att_m.v_head_dim * h / tp}
    # the projections stream at their format's published decode rate where there is one
    # (analysis._gemm.DECODE_GEMM_HBM_EFFICIENCY: FP8 on Hopper), else the decode default
    from analysis._gemm import decode_gemm_hbm_efficiency
    pub = decode_gemm_hbm_efficiency(chip.generation,
                                     chip.gemm_format(model.math_format("attention")))
    bw = chip.hbm_bandwidth * (DECODE_HBM_EFFICIENCY.value if pub is None else pub.value)
    eff = gemm_compute_efficiency(chip.generation, chip.gemm_format(model.math_format(
        "attention")), "dense")
    f_att = chip.peak(chip.gemm_format(model.math_format("attention"))) * (
        1.0 if eff is None else eff.value)
    scores = t * att_m.score_flops_per_token(context) / tp / chip.peak("bf16")
    kv_scale = 1.0
    if engine == "trtllm" and chip.generation == "hopper":
        # TensorRT-LLM's FlashMLA on Hopper: KV at 3000 GB/s of the H800's 3.35 TB/s (not
        # 0.78 of peak), scores at 660 of 989.4 BF16 TFLOPS (FlashMLA README)
        kv_scale = DECODE_HBM_EFFICIENCY.value / (3000e9 / 3.35e12)
        scores /= 660e12 / 989.4e12

    def attention_cost(names, x):
        total, reads = 0.0, 0.0
        for n in names:
            cls = KERNEL_CLASSES[n]
            if cls == "attention":
                r_i = max(x.kv_cache * kv_scale, scores)
                reads += x.kv_cache
            elif cls in _HEAVY:
                p = sum(work[w] for w in _MLA_GEMMS[n])
                r_i = max(p * model.weight_bytes / bw, 2 * p * t / f_att)
                reads += p * model.weight_bytes / bw
            else:
                r_i = 0.0
            total += one(n, r_i)
        return total + max(0.0, x.attention_weights + x.kv_cache - reads)

    def rate(part, kind="dense"):
        fmt = chip.gemm_format(model.math_format(part))
        e = gemm_compute_efficiency(chip.generation, fmt, kind)
        return chip.peak(fmt) * (1.0 if e is None else e.value)

    def ffn_groups(x):
        # (read, compute) seconds per group of weights: a dense FFN whole; a MoE block's
        # router and shared experts by hand (tokens of the rank; the router at 0.78 of HBM,
        # the shared experts at their format's published decode rate where there is one),
        # its routed experts the rest of the layer's totals
        if x.kind == "dense":
            return {"dense": (x.ffn_weights, x.ffn_compute)}
        lay = r.layout
        tokens, sh = (t, lay.tp) if lay.etp > 1 else (t / lay.tp, 1)
        hbm = chip.hbm_bandwidth * DECODE_HBM_EFFICIENCY.value
        pub_ffn = decode_gemm_hbm_efficiency(chip.generation,
                                             chip.gemm_format(model.math_format("ffn")))
        ffn_bw = hbm if pub_ffn is None else chip.hbm_bandwidth * pub_ffn.value
        router = (model.router_params * model.part_bytes("router") / hbm,
                  tokens * 2 * model.router_params / rate("router"))
        shared = (model.shared_experts * model.shared_expert_bytes / sh / ffn_bw,
                  tokens * 2 * model.shared_experts * model.expert_params / sh / rate("ffn"))
        return {"router": router, "shared": shared,
                "routed": (x.ffn_weights - router[0] - shared[0],
                           x.ffn_compute - router[1] - shared[1])}

    def group_of(n):
        if KERNEL_CLASSES[n] == "moe_gemm":
            return "routed"
        if KERNEL_CLASSES[n] != "gemm":
            return None
        return "router" if n == "router_gemm" else "shared" if "shared" in n else "dense"

    def ffn_cost(names, groups):
        # every GEMM kernel at its own roofline: its share of its group (gate/up 2/3 of a
        # gated FFN, down 1/3, a fused kernel all), scaled to add up to 1 over the list
        def share(n):
            return (2 / 3 if n.endswith(("gate_up", "gate_up_proj", "gemm1")) else
                    1 / 3 if n.endswith(("down", "down_proj", "gemm2")) else 1.0)
        present = {}
        for n in names:
            if group_of(n):
                present[group_of(n)] = present.get(group_of(n), 0.0) + share(n)
        total = sum(max(rd, c) for rd, c in groups.values())    # the group rooflines
        for n in names:
            g = group_of(n)
            f_n = share(n) / present[g] if g else 0.0
            r_i = max(f_n * groups[g][0], f_n * groups[g][1]) if g else 0.0
            total += one(n, r_i) - r_i
        return total

    kind = model.attention.kind
    att = list(lists.get(kind, KERNELS[kind]))
    moe = [n for n in lists["moe_ffn"] if n not in ("dispatch", "combine")]
    moe += ["exchange"] * (2 if ep > 1 else 0)
    total = 0.0
    for x in r.layers:
        ffn = list(lists["dense_ffn"]) if x.kind == "dense" else moe
        total += ((attention_cost(att, x) if per_kernel else
                   cost(att, max(x.attention_weights + x.kv_cache, x.attention_compute)))
                  + ffn_cost(ffn, ffn_groups(x)) + x.exposed_comm)
    return total + cost(KERNELS["head"], max(r.head.weights, r.head.compute))


@settings(max_examples=25, deadline=None)
@given(batch=st.integers(1, 96),
       layout=st.sampled_from(["tp=8,dp=1,etp=8", "tp=8", "tp=4,dp=2", "tp=1,dp=16",
                               "tp=2,dp=4"]),
       engine=st.sampled_from(["trtllm", "vllm", "sglang"]), graphs=st.booleans(),
       floors=st.dictionaries(st.sampled_from(["norm", "elementwise", "topk", "moe_align",
                                               "gemm", "attention", "other"]),
                              st.floats(0.0, 2e-5)),
       mkt=st.sampled_from([0.0, 1e-6, 3e-5]), fusion=st.sampled_from([1.0, 2.5]),
       gemm_fixed=st.sampled_from([0.0, 2.6e-6, 1e-5]))
def test_step_is_the_sum_of_its_counted_kernels(batch, layout, engine, graphs, floors, mkt,
                                                fusion, gemm_fixed):
    # attention DP (tp=1) on 16 H200s: kimi-k2's FP8 release with its BF16 router gates, head
    # and embedding (session 26, MoEModel.part_bytes) needs 141.1 GB a chip at tp=1,dp=8
    f = topologies_build("switch:16,chip=h200" if layout == "tp=1,dp=16" else "hgx-h200")
    # (the brute force prices the attention kernel at its roofline: TensorRT-LLM's MLA op
    # measured at 16 heads a GPU, session 24, kimi-k2 at tp=4, is taken out; its own tests are
    # tests/test_models_s24_mla_heads.py; so is kimi-k2's router at the measured Linear,
    # session 26, tests/test_models_s26_k2_router.py)
    from unittest import mock
    with mock.patch.object(analysis._decode._Settings, "mla_measured",
                           new=property(lambda s: None)), \
            mock.patch.object(analysis._decode._Settings, "router_measured",
                              new=property(lambda s: None)):
        r = decode_step("kimi-k2", f, batch=batch, context=512, layout=layout, engine=engine,
                        cuda_graphs=graphs, kernel_floors=floors, min_kernel_time=mkt,
                        fusion_factor=fusion, collective=fake_cost, overlap=0.5,
                        gemm_fixed_time=gemm_fixed)
    lists = step_kernel_lists("kimi-k2", f.chip, engine=engine, cuda_graphs=graphs,
                              tp=r.layout.tp, tokens=-(-batch // r.layout.dp))
    boundary = GRAPH_KERNEL_OVERHEAD.value if graphs else 4e-6
    m = MODELS["kimi-k2"]
    assert r.time == pytest.approx(
        _brute_step(r, m, lists, r.layout.ep, floors, mkt, boundary, fusion, gemm_fixed,
                    chip=f.chip, engine=engine), rel=1e-12)


@pytest.mark.parametrize("bad, match", [
    ({"nonsense": 1e-6}, "unknown kernel class"), ({"norm": -1e-6}, "kernel_floors"),
    ({"norm": float("nan")}, "kernel_floors"), ({"norm": "3us"}, "kernel_floors"),
    (3e-6, r"mapping .*, got 3e-06 \(a float\)$")])
def test_kernel_floors_refuse_bad_input(fab, bad, match):
    # a number's kind (session 32), the mapping's (session 33: was a SpecError)
    error = TypeError if bad in ({"norm": "3us"}, 3e-6) else SpecError
    with pytest.raises(error, match=match):
        decode_step(SMALL, fab, batch=1, context=4, collective=fake_cost, kernel_floors=bad)


def test_kernel_floor_parameters_are_reported_with_sources(fab):
    from analysis._decode import EMPTY_KERNEL_TIME, KERNEL_FLOORS
    r = decode_step(SMALL, fab, batch=1, context=4, collective=fake_cost)
    params = {p.name: p for p in r.parameters}
    for p in (EMPTY_KERNEL_TIME, *KERNEL_FLOORS.values()):
        # the Megatron campaign's, and the DSA indexer's own (TensorRT-LLM PR #14133)
        want = "TensorRT-LLM PR #14133" if p.name.endswith(".indexer") else "Megatron-LM"
        assert params[p.name] == p and want in p.source
    user = decode_step(SMALL, fab, batch=1, context=4, collective=fake_cost,
                       kernel_floors={"norm": 5e-6})
    names = {p.name: p for p in user.parameters}
    assert names["decode.kernel_floor.norm"].source == "user"
    assert "decode.kernel_floor.topk" not in names


def test_gemm_fixed_time_is_the_published_intercept():
    # vLLM PR #53534: B200 BF16 decode GEMMs at M = 1 under CUDA-graph replay (cuBLAS, us);
    # a least-squares line through time against weight bytes: the slope is the streaming
    # bandwidth (independently 0.78 of the B200's peak, DECODE_HBM_EFFICIENCY), the intercept
    # the fixed part of a replayed call; minus the boundary the model charges.
    from analysis._decode import GEMM_FIXED_TIME
    from fabric import chip_spec
    shapes = [(3072, 7168, 10.26), (3584, 7168, 12.31), (6288, 7168, 15.45), (7168, 8448, 26.19),
              (10240, 7168, 29.52), (16896, 7168, 40.57), (20480, 7168, 51.28)]
    x = np.array([n * k * 2 for n, k, _ in shapes], dtype=float)
    y = np.array([t * 1e-6 for _, _, t in shapes])
    slope, intercept = np.polyfit(x, y, 1)
    assert 1 / slope / chip_spec("b200").hbm_bandwidth == pytest.approx(
        DECODE_HBM_EFFICIENCY.value, abs=0.01)
    assert intercept - GRAPH_KERNEL_OVERHEAD.value == pytest.approx(GEMM_FIXED_TIME.value,
                                                                    abs=0.01e-6)


def test_gemm_fixed_time_by_hand(fab):
    # every weight GEMM of the eager lists takes the fixed part whatever its size: GQA
    # qkv_proj and o_proj; dense gate_up and down; MoE router, shared gate_up and down; the
    # head's lm_head. Routed experts and attention do not.
    kw = {"batch": 4, "context": 10, "layout": "tp=2,dp=2", "collective": fake_cost,
          "cuda_graphs": False, "kernel_floors": {}}
    off = decode_step(SMALL, fab, gemm_fixed_time=0.0, **kw)
    on = decode_step(SMALL, fab, gemm_fixed_time=5e-6, **kw)
    assert on.layers[0].attention - off.layers[0].attention == pytest.approx(2 * 5e-6)
    assert on.layers[0].ffn - off.layers[0].ffn == pytest.approx(2 * 5e-6)
    assert on.layers[1].ffn - off.layers[1].ffn == pytest.approx(3 * 5e-6)
    assert on.head.kernel_floor == pytest.approx(5e-6)
    assert on.time - off.time == pytest.approx(5e-6 * (4 * 2 + 2 + 3 * 3 + 1))
    with pytest.raises(SpecError, match="gemm_fixed_time"):
        decode_step(SMALL, fab, gemm_fixed_time=-1e-6, **kw)


@settings(max_examples=12, deadline=None)
@given(chip=st.sampled_from(("h200", "b200")), batch=st.sampled_from((1, 64, 128)),
       context=st.sampled_from((0, 1024, 4096)), layout=st.sampled_from(("tp=8,dp=1",
                                                                          "tp=1,dp=8")))
def test_trtllm_fp8_kv_runs_the_mla_scores_in_fp8(chip, batch, context, layout):
    # TensorRT-LLM's MLA generation kernel over an FP8 KV cache computes in FP8 (deepseek_v3
    # README, 'FP8 KV Cache and MLA'): the scores' compute moves from the BF16 to the FP8
    # peak, by hand; the weights, the KV bytes and every other engine stay as they were
    import topologies
    from analysis._decode import TRTLLM_FP8_MLA_KV_BYTES
    from fabric import chip_spec

    fab = topologies.build(f"switch:8,chip={chip}")
    fp8kv = dataclasses.replace(MODELS["deepseek-r1-nvfp4"], name="r1-fp8kv",
                                kv_cache_bytes=TRTLLM_FP8_MLA_KV_BYTES)
    kw = {"batch": batch, "context": context, "layout": layout, "engine": "trtllm"}
    with pytest.MonkeyPatch.context() as mp:
        # FlashMLA's BF16 rates (MLA_DECODE_EFFICIENCY) would apply to the rule-off step on
        # Hopper: left out of both, so that only the FP8 arithmetic differs
        mp.setattr(analysis._decode, "MLA_DECODE_EFFICIENCY", {})
        on = analysis.decode_step(fp8kv, fab, **kw)
        mp.setattr(analysis._decode, "TRTLLM_FP8_MLA_KV_BYTES", 0.5)       # rule off
        off = analysis.decode_step(fp8kv, fab, **kw)
    c = chip_spec(chip)
    lay = analysis.parse_layout(layout, 8)
    t = -(-batch // lay.dp)
    scores = fp8kv.attention.score_flops_per_token(context) / lay.tp
    expect = t * scores * (1 / c.peak("bf16") - 1 / c.peak("fp8"))
    got = off.layers[-1].attention_compute - on.layers[-1].attention_compute
    assert got == pytest.approx(expect, rel=1e-9, abs=1e-15)
    assert on.layers[-1].kv_cache == off.layers[-1].kv_cache
    assert on.layers[-1].attention_weights == off.layers[-1].attention_weights
    assert on.layers[-1].attention <= off.layers[-1].attention
    assert ("decode.attention_scores_format", "fp8") in {
        (p.name, p.value) for p in on.parameters}
    # 16-bit KV, or another engine: BF16 scores, bit for bit the rule-off step
    for other in (dataclasses.replace(fp8kv, kv_cache_bytes=2.0),):
        a = analysis.decode_step(other, fab, **kw)
        assert "decode.attention_scores_format" not in {p.name for p in a.parameters}
    v = analysis.decode_step(fp8kv, fab, **{**kw, "engine": "vllm"})
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(analysis._decode, "TRTLLM_FP8_MLA_KV_BYTES", 0.5)
        v_off = analysis.decode_step(fp8kv, fab, **{**kw, "engine": "vllm"})
    assert v.time == v_off.time


def test_nvfp4_decode_gemm_fraction_is_the_published_line():
    # helion PR #3046's B200 CUTLASS NVFP4 decode GEMMs: an independent least-squares line
    # (numpy) through time against bytes at 0.5625 B/weight gives the same fraction of 8 TB/s
    from analysis._gemm import DECODE_GEMM_HBM_EFFICIENCY, HELION_B200_NVFP4_CUTLASS

    x = np.array([n * k * 0.5625 for n, k, _ in HELION_B200_NVFP4_CUTLASS])
    y = np.array([t * 1e-6 for *_, t in HELION_B200_NVFP4_CUTLASS])
    slope, intercept = np.polyfit(x, y, 1)
    frac = DECODE_GEMM_HBM_EFFICIENCY[("blackwell", "fp4")].value
    assert frac == pytest.approx(1 / slope / 8e12, rel=1e-9)
    assert 3.5e-6 < intercept < 4.2e-6          # the same fixed part as GEMM_FIXED_TIME's fit
    # flashinfer issue #1732 (CUDA-graph timing, M=1, N=K=8192): 1.78 TB/s on 0.5 B/weight
    assert intercept + 8192 * 8192 * 0.5625 * slope == pytest.approx(8192 * 8192 * 0.5 / 1.78e12,
                                                                     rel=0.02)


def _with_and_without_gemm_rates(m, fab, kw):
    """The decode step with the published dense-GEMM streaming rates and without any."""
    on = analysis.decode_step(m, fab, **kw)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(analysis._gemm, "DECODE_GEMM_HBM_EFFICIENCY", {})
        off = analysis.decode_step(m, fab, **kw)
    return on, off


def _gemm_read_rates(c, key, eff):
    """(whether the published rate of ``key`` applies to chip ``c``, the default read
    bandwidth, the dense GEMMs' read bandwidth) under a user's ``eff`` or the default 0.78."""
    from analysis._gemm import DECODE_GEMM_HBM_EFFICIENCY

    applies = c.generation == key[0] and eff is None
    bw = c.hbm_bandwidth * (0.78 if eff is None else eff)
    return applies, bw, (c.hbm_bandwidth * DECODE_GEMM_HBM_EFFICIENCY[key].value if applies
                         else bw)


@settings(max_examples=10, deadline=None)
@given(chip=st.sampled_from(("b200", "h200", "gb200")), batch=st.sampled_from((1, 32, 256)),
       layout=st.sampled_from(("tp=8,dp=1,etp=2", "tp=8,dp=1", "tp=1,dp=8")),
       eff=st.sampled_from((None, 1.0)))
def test_nvfp4_dense_gemms_stream_at_their_published_rate(chip, batch, layout, eff):
    # deepseek-r1-nvfp4: its dense FFNs and shared experts run NVFP4 GEMMs; on Blackwell they
    # read their weights at the published 0.314 of peak, everything else as before; on Hopper
    # (W4A16, BF16 math) or under a user's hbm_efficiency nothing changes
    import topologies
    from analysis._decode import _shared_split
    from fabric import chip_spec

    fab = topologies.build(f"switch:8,chip={chip}")
    m = MODELS["deepseek-r1-nvfp4"]
    kw = {"batch": batch, "context": 1024, "layout": layout, "engine": "trtllm"}
    if eff is not None:
        kw["hbm_efficiency"] = eff
    on, off = _with_and_without_gemm_rates(m, fab, kw)
    c = chip_spec(chip)
    applies, bw, ffn_bw = _gemm_read_rates(c, ("blackwell", "fp4"), eff)
    lay = analysis.parse_layout(layout, 8)
    dense_on, dense_off = on.layers[0], off.layers[0]
    assert dense_on.ffn_weights == pytest.approx(m.dense_ffn_bytes / lay.tp / ffn_bw, rel=1e-12)
    assert dense_off.ffn_weights == pytest.approx(m.dense_ffn_bytes / lay.tp / bw, rel=1e-12)
    shared = m.shared_experts * m.shared_expert_bytes / _shared_split(lay)
    assert on.layers[-1].ffn_weights - off.layers[-1].ffn_weights == pytest.approx(
        shared * (1 / ffn_bw - 1 / bw), rel=1e-9, abs=1e-15)
    assert on.layers[-1].attention_weights == off.layers[-1].attention_weights   # BF16
    assert on.head.weights == off.head.weights
    names = {p.name for p in on.parameters}
    assert ("gemm.decode_hbm_efficiency.blackwell.fp4" in names) == applies


def test_fp8_hopper_decode_gemm_fraction_is_deepgemms_line():
    # DeepGEMM's README normal-GEMM rows at M = 64 and 128 (H800, kernel-only): an
    # independent least-squares line (numpy) through time (FLOPs / achieved TFLOPS) against
    # bytes (FP8 A and B, BF16 D) gives the fraction of the H800's 3.35 TB/s
    from analysis._gemm import DECODE_GEMM_HBM_EFFICIENCY, DEEPGEMM_H800_FP8

    rows = [r for r in DEEPGEMM_H800_FP8["dense"] if r[1] <= 128]
    assert len(rows) == 12
    x = np.array([m * k + n * k + 2 * m * n for _, m, n, k, _ in rows], dtype=float)
    y = np.array([2 * m * n * k / (tf * 1e12) for _, m, n, k, tf in rows])
    slope, intercept = np.polyfit(x, y, 1)
    frac = DECODE_GEMM_HBM_EFFICIENCY[("hopper", "fp8")].value
    assert frac == pytest.approx(1 / slope / 3.35e12, rel=1e-9)
    # every row memory-bound (below the H800's FP8 ridge) and the fixed part a kernel's
    ridge = 1978.9e12 / 3.35e12
    assert all(2 * m * n * k / xi < ridge for (_, m, n, k, _), xi in zip(rows, x, strict=True))
    assert 2.0e-6 < intercept < 3.0e-6


@settings(max_examples=10, deadline=None)
@given(chip=st.sampled_from(("h200", "h20", "b200")),
       batch=st.sampled_from((1, 32, 256)),
       layout=st.sampled_from(("tp=8,dp=1", "tp=1,dp=8", "tp=4,dp=2")),
       eff=st.sampled_from((None, 1.0)), failed=st.sampled_from((None, "chip8")))
def test_fp8_dense_gemms_stream_at_deepgemms_rate_on_hopper(chip, batch, layout, eff, failed):
    # deepseek-r1 (FP8 block-128): on Hopper its attention projections, dense FFNs and shared
    # experts read their weights at DeepGEMM's 0.836 of peak; the routed experts (grouped), the
    # KV cache and the head as before; on Blackwell (no published FP8 decode figure) or under a
    # user's hbm_efficiency nothing changes
    import topologies
    from analysis._decode import _shared_split
    from fabric import SpecError, chip_spec

    fab = topologies.build(f"switch:9,chip={chip}")
    if failed:
        fab = fab.without(chips=[failed])
    m = MODELS["deepseek-r1"]
    kw = {"batch": batch, "context": 1024, "layout": layout, "engine": "trtllm"}
    if eff is not None:
        kw["hbm_efficiency"] = eff
    try:
        on, off = _with_and_without_gemm_rates(m, fab, kw)
    except SpecError as e:       # H20's 96 GB hold no FP8 R1 at tp=1 or 4
        assert chip == "h20" and "a chip needs" in str(e)
        return
    c = chip_spec(chip)
    applies, bw, gemm_bw = _gemm_read_rates(c, ("hopper", "fp8"), eff)
    lay = analysis.parse_layout(layout, 8)
    tp = lay.tp
    att_bytes = (m.attention_params if tp == 1 else m.attention_params_per_rank(tp)) * (
        m.weight_bytes) / (tp if tp == 1 else 1)
    for lo, lf in zip(on.layers, off.layers, strict=True):
        assert lo.attention_weights == pytest.approx(att_bytes / gemm_bw, rel=1e-12)
        assert lf.attention_weights == pytest.approx(att_bytes / bw, rel=1e-12)
        assert lo.kv_cache == lf.kv_cache
    assert on.layers[0].ffn_weights == pytest.approx(m.dense_ffn_bytes / tp / gemm_bw,
                                                     rel=1e-12)
    shared = m.shared_experts * m.shared_expert_bytes / _shared_split(lay)
    assert on.layers[-1].ffn_weights - off.layers[-1].ffn_weights == pytest.approx(
        shared * (1 / gemm_bw - 1 / bw), rel=1e-9, abs=1e-15)
    assert on.head.weights == off.head.weights
    names = {p.name for p in on.parameters}
    assert ("gemm.decode_hbm_efficiency.hopper.fp8" in names) == applies


@settings(max_examples=25, deadline=None)
@given(system=st.sampled_from(("mesh:3x4,chip=b200", "mesh:5x2,chip=b200", "torus:3x4,chip=b200",
                               "hypermesh:2x4,chip=b200", "switch:8,planes=2,chip=b200",
                               "rail:servers=3,gpus=4", "nvl72")),
       size=st.sampled_from((1, 2, 3, 4, 6)), offset=st.integers(0, 5),
       nbytes=st.sampled_from((1 << 10, 1 << 20)))
def test_slowest_group_is_the_brute_force_maximum(system, size, offset, nbytes):
    # review R1 (session 7): the groups step together, so the charge is the slowest group's;
    # on an intact direct topology (mesh, torus, hyper-mesh) groups of one "shape" differ
    # (a group wrapping a row is hops apart): brute force costs every group
    from analysis._decode import collective_seconds, slowest_group_seconds

    fab = built(system)
    n = fab.n_endpoints
    count = (n - offset) // size
    if count < 1:
        return
    positions = tuple(range(offset, offset + count * size))
    brute = max(collective_seconds(fab, "all-reduce", nbytes, positions[i:i + size],
                                   runtime="ideal")
                for i in range(0, len(positions), size))
    got = slowest_group_seconds(fab, "all-reduce", nbytes, positions, size, runtime="ideal")
    assert got == pytest.approx(brute, rel=1e-12)


def test_slowest_group_refuses_a_partial_or_empty_group():
    import topologies
    from analysis._decode import slowest_group_seconds

    fab = topologies.build("switch:8,chip=b200")
    with pytest.raises(SpecError, match="whole, non-zero number of groups of 2"):
        slowest_group_seconds(fab, "all-reduce", 1024, [], 2)
    with pytest.raises(SpecError, match="whole, non-zero number of groups of 4"):
        slowest_group_seconds(fab, "all-reduce", 1024, range(6), 4)


def test_attention_block_is_its_kernels_rooflines_summed():
    # DeepSeek-V3 (128 heads) at 64 sequences a rank verifying 2 tokens each, 4096 tokens of
    # context: the MLA kernel is compute-bound while the projections stream weights; run one
    # after another
    # they cannot overlap, so the block is the sum of each kernel's own roofline (brute
    # force), longer than the old max of the block's sums
    f = topologies_build("hgx-h200")
    kw = {"batch": 512, "context": 4096, "layout": "tp=1,dp=8", "collective": fake_cost,
          "tokens_per_sequence": 2}          # a verification step: 2 queries per sequence
    # (the routed experts at DeepGEMM's table, as the brute force prices them: TensorRT-LLM's
    # measured CUTLASS module on H200, session 21, is taken out; tests/test_decode_fp4_moe_time.py)
    from unittest import mock

    from analysis import GROUPED_GEMM_TIME_BY_ROWS
    no_module = mock.patch.dict(GROUPED_GEMM_TIME_BY_ROWS, clear=True)
    # (and the MLA op measured at one token a sequence, since session 24 a q > 1 step's floor:
    # tests/test_models_s24_mla_heads.py)
    no_op = mock.patch.object(analysis._decode._Settings, "mla_measured",
                              new=property(lambda s: None))
    # (and the router GEMM's measured Linear above 16 rows a rank, session 25:
    # tests/test_models_s25_router.py)
    no_router = mock.patch.object(analysis._decode._Settings, "router_measured",
                                  new=property(lambda s: None))
    no_module.start()
    no_op.start()
    no_router.start()
    try:
        r = decode_step("deepseek-v3", f, **kw)
    finally:
        no_router.stop()
        no_op.stop()
        no_module.stop()
    lists = step_kernel_lists("deepseek-v3", f.chip, tp=1, tokens=128)
    from analysis._decode import GEMM_FIXED_TIME, KERNEL_FLOORS
    floors = {k: p.value for k, p in KERNEL_FLOORS.items()}
    args = (r, MODELS["deepseek-v3"], lists, r.layout.ep, floors, 0.0,
            GRAPH_KERNEL_OVERHEAD.value, 1.0, GEMM_FIXED_TIME.value)
    brute = _brute_step(*args, chip=f.chip, context=4096, engine="trtllm")
    assert r.time == pytest.approx(brute, rel=1e-12)
    # the old rule (the block's max shared evenly) is shorter by what the kernels cannot
    # overlap: 61 layers of it here
    old = _brute_step(*args, chip=f.chip, context=4096, per_kernel=False, engine="trtllm")
    assert r.time - old > 61 * 1e-6


def test_trtllm_flashmla_on_hopper_only():
    # TensorRT-LLM runs FlashMLA on Hopper (its deepseek_v3 README): the MLA kernel reads KV at
    # FlashMLA's 3000 GB/s of 3.35 TB/s and computes at 660 of 989.4 TFLOPS; vLLM and SGLang
    # steps, Blackwell, and a user's hbm_efficiency are untouched by it
    import topologies
    from analysis._decode import MLA_DECODE_EFFICIENCY

    mem, comp = MLA_DECODE_EFFICIENCY["hopper"]
    assert mem.value == pytest.approx(3000 / 3350) and comp.value == pytest.approx(660 / 989.4)
    kw = {"batch": 8, "context": 2048, "layout": "tp=8", "collective": fake_cost}
    h = topologies_build("hgx-h200")
    names = {p.name for p in decode_step("deepseek-v3", h, engine="trtllm", **kw).parameters}
    assert {mem.name, comp.name} <= names
    for engine in ("vllm", "sglang"):
        names = {p.name for p in decode_step("deepseek-v3", h, engine=engine, **kw).parameters}
        assert mem.name not in names
    b = topologies.build("switch:8,chip=b200")
    assert mem.name not in {p.name for p in decode_step("deepseek-v3", b, **kw).parameters}
    user = decode_step("deepseek-v3", h, engine="trtllm", hbm_efficiency=0.9, **kw)
    assert mem.name not in {p.name for p in user.parameters}


def test_flashmla_rates_are_the_h800_figures_and_bf16_only():
    # review R13: the rates are FlashMLA's over the H800's own peaks; they are the BF16
    # kernel's, so an FP8 KV cache (FP8 MLA arithmetic) keeps the defaults
    from analysis._decode import MLA_DECODE_EFFICIENCY, TRTLLM_FP8_MLA_KV_BYTES
    from fabric import chip_spec

    h800 = chip_spec("h800")
    mem, comp = MLA_DECODE_EFFICIENCY["hopper"]
    assert mem.value == pytest.approx(3000e9 / h800.hbm_bandwidth, rel=1e-12)
    assert comp.value == pytest.approx(660e12 / h800.peak("bf16"), rel=1e-12)
    fp8kv = dataclasses.replace(MODELS["deepseek-v3"], name="v3-fp8kv",
                                kv_cache_bytes=TRTLLM_FP8_MLA_KV_BYTES)
    r = decode_step(fp8kv, topologies_build("hgx-h200"), batch=8, context=2048, layout="tp=8",
                    engine="trtllm", collective=fake_cost)
    names = {p.name for p in r.parameters}
    assert mem.name not in names and "decode.attention_scores_format" in names


# -- the MoE block's weight reads: one rule ---------------------------------------------------

@pytest.mark.parametrize("model,spec,kw", [
    # FP8 on Hopper: the shared experts at DeepGEMM's decode rate, the rest at the step's
    ("deepseek-v3", "hgx-h200", {"layout": "tp=8,dp=1"}),
    ("kimi-k2.5-int4", "hgx-h200", {"layout": "tp=8,dp=1,etp=8", "engine": "vllm",
                                    "runtime": "symmetric-memory", "batch": 16}),  # moe_eff
    ("kimi-k2", "hgx-h200", {"layout": "tp=2,dp=4", "moe_hbm_efficiency": 0.5}),
    ("deepseek-r1-nvfp4", "hgx-b200", {"layout": "tp=8,dp=1,etp=4"}),   # NVFP4 shared: 0.314
    ("deepseek-r1-nvfp4", "hgx-b200", {"layout": "tp=1,dp=8", "moe_hbm_efficiency": 0.6}),
])
def test_moe_weight_reads_are_each_stream_at_its_own_bandwidth(model, spec, kw):
    # router GEMM at the step's bandwidth, shared experts at their dense-GEMM rate (the
    # published NVFP4 streaming on Blackwell, FP8 on Hopper), routed experts at the
    # grouped-GEMM rate
    import topologies
    from analysis._decode import DECODE_HBM_EFFICIENCY, VLLM_INT4_MOE_HBM_EFFICIENCY
    from analysis._gemm import DECODE_GEMM_HBM_EFFICIENCY
    f = topologies.build(spec)
    kw = {"batch": 64, "context": 2048, **kw}
    d = decode_step(model, f, **kw)
    m, chip, lay = MODELS[model], f.chip, d.layout
    sh = lay.tp if lay.etp > 1 else 1
    hbm = DECODE_HBM_EFFICIENCY.value
    # the shared experts' published dense-GEMM rate: NVFP4 on Blackwell, FP8 on Hopper
    ffn = (DECODE_GEMM_HBM_EFFICIENCY[("blackwell", "fp4")].value
           if model == "deepseek-r1-nvfp4" else
           DECODE_GEMM_HBM_EFFICIENCY[("hopper", "fp8")].value if model in ("deepseek-v3",
                                                                           "kimi-k2")
           else hbm)
    moe = kw.get("moe_hbm_efficiency") or (
        VLLM_INT4_MOE_HBM_EFFICIENCY.value if kw.get("engine") == "vllm" else hbm)
    layer = d.layers[-1]
    want = (m.router_params * m.part_bytes("router") / (chip.hbm_bandwidth * hbm)
            + m.shared_experts * m.expert_params * m.ffn_bytes_per_weight / sh
            / (chip.hbm_bandwidth * ffn)
            + layer.active_experts_chip * m.routed_expert_bytes / lay.etp
            / (chip.hbm_bandwidth * moe))
    assert layer.ffn_weights == pytest.approx(want, rel=1e-12)


def test_decode_parameters_say_whether_runtime_and_ep_kernel_were_given():
    # the Assumptions table reads these rows: a given value is the user's, a default is
    # named (analysis.cost's runtime read from its signature), never a contradiction
    import topologies
    from analysis._collectives import default_runtime
    f = topologies.build("nvl72")

    def rows(**kw):
        r = analysis.decode_step("deepseek-v3", f, batch=8, context=1024, layout="tp=8,ep=8",
                                 **kw)
        return {p.name: (p.value, p.source) for p in r.parameters}

    given = rows(ep_kernel="one-sided", runtime="nccl@2.25.1")
    assert given["decode.ep_kernel"] == ("one-sided", "user")
    assert given["decode.runtime"] == ("nccl@2.25.1", "user")
    default = rows()
    assert default["decode.ep_kernel"][0] == "collective"
    assert default["decode.ep_kernel"][1].startswith("not given")
    want = "not given: analysis.cost's default runtime"
    assert default["decode.runtime"] == (default_runtime(), want)
