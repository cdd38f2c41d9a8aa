"""TensorRT-LLM's mixed expert layout (attention TP, routed experts etp x ep, shared TP).

``tp=T,dp=1,etp=E`` with ``E`` dividing ``T``: the routed experts spread over
``ep = T / E`` groups and split ``E`` ways inside each group, the shared experts split over
the ``T`` chips, every token on every chip (attention is tensor-parallel), the MoE output
all-reduced, no dispatch or combine (NVIDIA TensorRT-LLM tech blog 1, "Parallelism
Strategy": "MoE Sparse Experts: Mixed TP4 with Expert Parallelism 2 (EP2)", "MoE Shared
Experts: TP8"). Checked against hand counts and a brute-force expectation.
"""

import itertools
import pathlib

import networkx as nx
import pytest
from fake_collective import FakeResult
from fake_collective import linear_all_reduce as _cost
from hypothesis import given, settings
from hypothesis import strategies as st

import analysis
from analysis import decode_step, model_config
from analysis._models import load_model_toml
from fabric import ChipSpec, Fabric, SpecError

SMALL = load_model_toml(pathlib.Path(__file__).parent / "data" / "model_small.toml")
CHIP = ChipSpec("toy", 10**9, 1e9, 1e12, 1e9 / 3, "test: round numbers")


def _fabric(n):
    G = nx.complete_graph(n)
    nx.set_node_attributes(G, "chip", "kind")
    nx.set_edge_attributes(G, 1e9, "bandwidth")
    nx.set_edge_attributes(G, 1e-7, "latency")
    return Fabric.from_graph(G, chip=CHIP, name=f"toy{n}")


def _brute_max_active(p, groups, experts):
    """E[max over groups of the active experts a group holds], by enumeration of every
    activation pattern (experts independent, each active with probability ``p``;
    expert ``e`` in group ``e % groups``)."""
    total = 0.0
    for pattern in itertools.product((0, 1), repeat=experts):
        prob = 1.0
        for a in pattern:
            prob *= p if a else 1 - p
        counts = [sum(pattern[e] for e in range(experts) if e % groups == g)
                  for g in range(groups)]
        total += prob * max(counts)
    return total


def test_parse_mixed_layouts():
    assert str(analysis.parse_layout("tp=8,dp=1,etp=4", 8)) == "tp=8,dp=1,ep=2,etp=4"
    assert str(analysis.parse_layout("tp=8,dp=1,etp=2", 8)) == "tp=8,dp=1,ep=4,etp=2"
    with pytest.raises(SpecError, match="etp=3 .* etp dividing tp"):
        analysis.parse_layout("tp=8,dp=1,etp=3", 8)
    with pytest.raises(SpecError, match="etp=2 .* dp = 1"):
        analysis.parse_layout("tp=4,dp=2,etp=2", 8)
    with pytest.raises(SpecError, match="ep=4 must equal"):
        analysis.parse_layout("tp=8,dp=1,ep=4,etp=4", 8)


def test_mixed_layout_by_hand_and_brute_force():
    # SMALL: hidden 64, 8 routed experts (width 32: 6144 weights), top-2, 1 shared, 3 MoE
    # layers, BF16. tp=4, etp=2: two groups of 4 experts, each chip half of its group's.
    r = decode_step(SMALL, _fabric(4), batch=4, context=10, layout="tp=4,dp=1,etp=2",
                    collective=_cost, cuda_graphs=False, hbm_efficiency=1.0)
    assert str(r.layout) == "tp=4,dp=1,ep=2,etp=2"
    moe = r.layers[-1]
    p = 1 - 0.75 ** 4                                # an expert active among 4 tokens, top-2 of 8
    busiest = _brute_max_active(p, 2, 8)
    assert moe.active_experts_chip == pytest.approx(busiest, rel=1e-12)
    router, shared = 64 * 8 + 8, 6144
    assert moe.ffn_weights == pytest.approx(
        (router + shared / 4) * 2 / 1e9 + busiest * 6144 * 2 / 2 / 1e9, rel=1e-12)
    allreduce = 1e-6 + 4 * 64 * 2 / 1e9              # every token's activations, 4 ranks
    assert moe.dispatch == 0 and moe.combine == 0
    assert moe.comm == pytest.approx(2 * allreduce) == moe.tp_allreduce
    # memory: attention/dense/embedding/head over 4, router whole, shared over 4, each
    # chip 4 experts per MoE layer at half
    m = SMALL
    w = 2 * ((m.layers * m.attention_params + m.dense_layers * m.dense_ffn_params
              + m.embedding_params + m.head_params) / 4
             + m.moe_layers * (router + shared / 4)) + m.moe_layers * 4 * 6144 * 2 / 2
    kv = 4 * 11 * m.layers * m.attention.kv_elements_per_token * m.kv_cache_bytes / 2  # 2 KV heads
    assert r.hbm_per_chip == pytest.approx(w + kv, rel=1e-12)


@settings(max_examples=12, deadline=None)
@given(tp=st.sampled_from([2, 4]), etp_exp=st.integers(0, 2))
def test_every_expert_active_reads_the_same_bytes_per_chip(tp, etp_exp):
    # At a batch where every expert is active, every split of the routed experts over
    # the tp chips reads E / tp of them per chip, whatever etp x ep is.
    etp = min(2 ** etp_exp, tp)
    lay = f"tp={tp},dp=1,etp={etp}" if etp > 1 else f"tp={tp},dp=1"
    r = decode_step(SMALL, _fabric(8), batch=2000, context=10, layout=lay,
                    collective=lambda *a, **k: FakeResult(0.0), cuda_graphs=False,
                    hbm_efficiency=1.0)
    routed = r.layers[-1].ffn_weights - (64 * 8 + 8 + 6144 / (tp if etp > 1 else 1)) * 2 / 1e9
    assert routed == pytest.approx(8 / tp * 6144 * 2 / 1e9, rel=1e-9)


def test_mixed_layout_in_serving_without_exchange():
    import topologies

    b200 = topologies.build("switch:8,planes=2,links=9,tech=nvlink5,chip=b200")
    p = analysis.serving_point("deepseek-r1-nvfp4", b200, isl=1024, osl=2048, batch=1,
                               layout="tp=8,dp=1,etp=4", draft_length=3, acceptance=0.9,
                               cuda_graphs=True, engine="trtllm", definition="output-per-gpu")
    assert p.layout == "tp=8,dp=1,etp=4" and p.fits
    st_ = decode_step("deepseek-r1-nvfp4", b200, batch=1, context=2048, layout=p.layout,
                      cuda_graphs=True, engine="trtllm")
    assert all(x.dispatch == 0 and x.combine == 0 for x in st_.layers)
    # the prefill of a mixed layout all-reduces twice per layer and exchanges nothing:
    # the same as plain tensor parallelism over the same 8 chips
    plain = analysis.prefill_time("deepseek-r1-nvfp4", b200, isl=1024, layout="tp=8,dp=1,etp=8")
    mixed = analysis.prefill_time("deepseek-r1-nvfp4", b200, isl=1024, layout="tp=8,dp=1,etp=4")
    assert mixed.comm == pytest.approx(plain.comm, rel=1e-12)


def test_ffn_weight_bytes_read_in_decode():
    # deepseek-r1-nvfp4 reads its dense FFNs and shared experts as NVFP4 (0.5625 B), the
    # same config with them at BF16 reads 2 B: the difference is exactly those weights.
    import dataclasses

    import topologies

    b200 = topologies.build("switch:8,planes=2,links=9,tech=nvlink5,chip=b200")
    m = model_config("deepseek-r1-nvfp4")
    bf = dataclasses.replace(m, ffn_weight_bytes=None, ffn_format=None)
    kw = {"batch": 1, "context": 1024, "layout": "tp=8,dp=1,etp=8",
          "collective": lambda *a, **k: FakeResult(0), "cuda_graphs": False, "hbm_efficiency": 1.0}
    a, b = decode_step(m, b200, **kw), decode_step(bf, b200, **kw)
    bw = b200.chip.hbm_bandwidth
    per_chip = (m.dense_layers * m.dense_ffn_params
                + m.moe_layers * m.shared_experts * m.expert_params) / 8 * (2 - 0.5625)
    assert b.breakdown.weights - a.breakdown.weights == pytest.approx(per_chip / bw, rel=1e-9)
    assert b.hbm_per_chip - a.hbm_per_chip == pytest.approx(per_chip, rel=1e-9)


def test_cli_names_no_exchange_for_a_mixed_layout(capsys):
    from analysis._cli import main

    assert main(["decode", "hgx-b200", "--model", "deepseek-r1-nvfp4", "--layout",
                 "tp=8,dp=1,etp=4", "--context", "1024"]) == 0
    out = capsys.readouterr().out
    assert "layout tp=8,dp=1,ep=2,etp=4" in out
    assert "MoE exchange none (experts split over the ranks, output all-reduced)" in out
