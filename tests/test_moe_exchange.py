"""MoE exchange kernels: routing against brute force, traffic structure, published measurements.

The published rows are the check set's ``moe dispatch`` / ``moe combine`` rows
(see :data:`ROWS`), each modelled in its source's own metric. They are checked
against the issue's bound (every row within 35%); rows the model does not yet
meet are marked ``xfail(strict=True)`` with the reason, so that a fix shows up
as an unexpected pass instead of staying hidden.
"""

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import analysis
import topologies
from analysis import expert_reach, moe_exchange, parse_routing
from fabric import EXCHANGE_KERNELS, RoutingError, SpecError, exchange_kernel

# -- published rows (check, never fit) -------------------------------------------------------

#: DeepEP FP8 dispatch bytes per token as DeepEP's normal-kernel tests count them:
#: 7168 x (1 + 4/128) (tests/legacy/test_internode.py fp8_factor; docs/legacy.md).
FP8_TOKEN = 7168 * 1.03125
BF16_TOKEN = 7168 * 2


def h800(nodes):
    """H800 nodes as DeepEP's docs describe them: 8 GPUs on NVSwitch, 8 NVLink4 per GPU
    (~160 GB/s, DeepSeek-V3 report s.3.2.2), one 400 Gb/s CX7 InfiniBand NIC per GPU on a
    rail-optimized network. H800 has H100's memory system, so the ``h100`` chip stands in."""
    return topologies.rail_optimized(nodes, 8, scaleup_links=8, nic_tech="ib-ndr",
                                     chip="h100", name=f"h800x{nodes}")


#: (id, system, ep, kernel, tokens per rank, phase, metric, measured, routing, dispatch B/elt)
#: metric "recv": received (token, rank) pairs incl. own x bytes per token / time
#: (DeepEP tests/legacy/test_intranode.py); "rdma": (token, node) pairs incl. own node x
#: bytes per token / time (tests/legacy/test_internode.py); "time": kernel time.
#: Sources: deepseek-ai/DeepEP docs/legacy.md (vendor) for deepep-*; NVIDIA/TensorRT-LLM
#: docs/source/blogs/tech_blog/blog18 (vendor; bench_moe_comm.py --perfect_router) for trtllm-*.
ROWS = [
    ("deepep-v1-ep8-normal-dispatch", 1, 8, "deepep-normal", 4096, "dispatch", "recv", 153e9),
    ("deepep-v1-ep8-normal-combine", 1, 8, "deepep-normal", 4096, "combine", "recv", 158e9),
    ("deepep-v1-ep16-normal-dispatch", 2, 16, "deepep-normal", 4096, "dispatch", "rdma", 43e9),
    ("deepep-v1-ep16-normal-combine", 2, 16, "deepep-normal", 4096, "combine", "rdma", 43e9),
    ("deepep-v1-ep32-normal-dispatch", 4, 32, "deepep-normal", 4096, "dispatch", "rdma", 58e9),
    ("deepep-v1-ep32-normal-combine", 4, 32, "deepep-normal", 4096, "combine", "rdma", 57e9),
    ("deepep-v1-ep8-ll-dispatch", 1, 8, "deepep-low-latency", 128, "dispatch", "time", 77e-6),
    ("deepep-v1-ep8-ll-combine", 1, 8, "deepep-low-latency", 128, "combine", "time", 114e-6),
    ("deepep-v1-ep128-ll-dispatch", 16, 128, "deepep-low-latency", 128, "dispatch", "time",
     192e-6),
    ("deepep-v1-ep128-ll-combine", 16, 128, "deepep-low-latency", 128, "combine", "time",
     369e-6),
] + [
    (f"trtllm-ep8-bs{bs}-{phase}", "nvl72", 8, "one-sided", bs, phase, "time", us * 1e-6)
    for bs, d, c in ((1, 18.9, 31.0), (16, 18.5, 32.6), (128, 31.7, 38.1), (512, 89.5, 91.7),
                     (2048, 311.8, 322.6))
    for phase, us in (("dispatch", d), ("combine", c))
]

#: Rows the model misses by more than 35% today, and why (kept visible, not loosened).
KNOWN_MISSES = {
    "trtllm-ep8-bs1-dispatch": "fixed cost: NCCL's LL step (7.2 us) against ~19 us measured",
    "trtllm-ep8-bs1-combine": "fixed cost: 7.2 us against ~31 us measured",
    "trtllm-ep8-bs16-dispatch": "fixed cost: 7.2 us against ~18 us measured",
    "trtllm-ep8-bs16-combine": "fixed cost: 7.2 us against ~31 us measured",
}


def model_row(row):
    """The model's figure for a row, in the row's own metric; and the MoEExchange."""
    _rid, system, ep, kernel, tokens, phase, metric, _ = row
    if system == "nvl72":
        f = topologies.build("nvl72")
        # TensorRT-LLM's benchmark: BF16 both ways, perfect router (min(k, ep) ranks each).
        r = moe_exchange(f, "deepseek-v3", tokens, ep, kernel=kernel, dispatch_bytes=2,
                         combine_bytes=2, routing="balanced")
    else:
        f = h800(system)
        # DeepEP's benchmark: top-min(nodes, 4) node groups for the normal kernels.
        routing = (f"node-limited:{min(system, 4)}" if kernel == "deepep-normal"
                   else "uniform")
        r = moe_exchange(f, "deepseek-v3", tokens, ep, kernel=kernel,
                         dispatch_bytes=1 + 4 / 128, combine_bytes=2, routing=routing)
    t = r.dispatch if phase == "dispatch" else r.combine
    per_token = FP8_TOKEN if phase == "dispatch" else BF16_TOKEN
    if metric == "time":
        return t, r
    copies = r.copies_rank if metric == "recv" else r.copies_node
    return copies * per_token / t, r


@pytest.mark.parametrize("row", [
    pytest.param(r, id=r[0], marks=[pytest.mark.xfail(strict=True, reason=KNOWN_MISSES[r[0]])]
                 if r[0] in KNOWN_MISSES else []) for r in ROWS])
def test_published_row_within_35_percent(row):
    model, _ = model_row(row)
    assert abs(model / row[-1] - 1) <= 0.35, (row[0], model, row[-1])


def test_every_moe_row_expressible():
    assert len(ROWS) == 20
    for row in ROWS:
        model, _r = model_row(row)
        assert model > 0 and math.isfinite(model)


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
    assert r.dispatch_phase.fixed > 10 * r.dispatch_phase.transfer
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


@pytest.mark.parametrize("bad", ["zipf", "node-limited:0", "uniform:3", 5])
def test_bad_routing(bad):
    with pytest.raises(SpecError, match="routing"):
        parse_routing(bad)


# -- structure and bad input ------------------------------------------------------------------

@pytest.mark.parametrize("kernel", sorted(EXCHANGE_KERNELS))
def test_every_kernel_runs_and_scales_with_bytes(kernel):
    f = h800(2)
    a = moe_exchange(f, "deepseek-v3", 256, 16, kernel=kernel, dispatch_bytes=1,
                     combine_bytes=2) if kernel != "one-sided" else None
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
    with pytest.raises(RoutingError, match="one load/store domain"):
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
    ({"kernel": "one-sided", "ep": 7}, "must divide"),
    ({"kernel": "one-sided", "ep": 100}, "ep must be between"),
])
def test_bad_input(kwargs, match):
    args = {"tokens_per_rank": 4, "ep": 8, "dispatch_bytes": 1, "combine_bytes": 2}
    args.update(kwargs)
    with pytest.raises(SpecError, match=match):
        moe_exchange(topologies.build("nvl72"), "deepseek-v3", **args)


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
