"""Serving frontier, single-user speed, prefill and cost: closed forms and brute force."""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import analysis
import topologies
from analysis import (
    DEFINITIONS,
    TCO,
    candidate_layouts,
    cost_per_million_tokens,
    pareto_front,
    prefill_time,
    serving_cost,
    serving_frontier,
    serving_point,
    single_user_speed,
    tokens_per_s_per_mw,
)
from fabric import SpecError

B200_NODE = "switch:8,planes=2,links=9,tech=nvlink5,chip=b200"


@pytest.fixture(scope="module")
def node():
    return topologies.build(B200_NODE)


# -- Pareto front against brute force ---------------------------------------------------

@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 6), st.integers(0, 6)), min_size=1, max_size=25))
def test_pareto_front_brute_force(pairs):
    pts = [{"x": x, "y": y, "i": i} for i, (x, y) in enumerate(pairs)]
    front = pareto_front(pts, "x", "y")

    def dominated(p):
        return any((q["x"] >= p["x"] and q["y"] >= p["y"]) and (q["x"], q["y"]) != (p["x"], p["y"])
                   for q in pts)

    # exactly the non-dominated (x, y) values, each once
    expected = {(p["x"], p["y"]) for p in pts if not dominated(p)}
    assert {(p["x"], p["y"]) for p in front} == expected
    assert len(front) == len(expected)
    xs = [p["x"] for p in front]
    ys = [p["y"] for p in front]
    assert xs == sorted(xs, reverse=True) and ys == sorted(ys)


# -- one point: closed forms ----------------------------------------------------------

@pytest.mark.parametrize("mode", ["aggregated", "disaggregated"])
@pytest.mark.parametrize("k", [0, 2])
def test_point_closed_forms(node, mode, k):
    isl, osl, b = 2048, 512, 8
    # kimi-k2 has no MTP module: its draft is a separate model's, given as a cost
    p = serving_point("kimi-k2", node, isl=isl, osl=osl, batch=b, layout="tp=8",
                      draft_length=k, acceptance=0.7, mode=mode, draft_cost=0.05)
    e = osl / analysis.expected_cycles(osl, k, 0.7)        # 1 plain; a request's cycles
    assert p.tokens_per_cycle == pytest.approx(e)
    tok = p.cycle_time / e
    # the prompt's collectives as the point's steps price theirs: the default engine's rule
    # (analysis.engine_collective; on H200 and B200 TensorRT-LLM's measured all-reduce op)
    pre = prefill_time("kimi-k2", node, isl=isl, layout="tp=8",
                       collective=analysis.engine_collective("trtllm", node.chip))
    assert p.prefill_time == pytest.approx(pre.total)
    if mode == "aggregated":
        # the default engine (TensorRT-LLM) runs a prompt's chunk with the verification
        # step of the b users in one forward pass: 2048 tokens fit its 8192-token budget
        # beside 8 decodes, so each prompt rides on one step. Kimi K2's 2048-token prompt
        # on 8 B200 is memory-bound (it reads every weight; its FLOPs and the step's fit
        # under that read), so the step's whole weight read is what the prompt saves
        step = analysis.decode_step("kimi-k2", node, batch=b, context=isl + osl // 2,
                                    layout="tp=8", tokens_per_sequence=k + 1)
        w_b, c_b = step.breakdown.weights, step.breakdown.compute
        assert pre.compute + c_b <= pre.weights and w_b <= pre.weights
        # and the merged pass runs one set of kernel boundaries: the cheaper part's
        shared = w_b + min(step.breakdown.launch, pre.boundaries())
        assert p.shared_read == pytest.approx(shared)
        assert p.request_time == pytest.approx(b * (p.prefill_time - shared) + osl * tok)
        assert p.prefill_gpus == 0
        assert p.output_tokens_per_s_decode_gpu == pytest.approx(p.output_tokens_per_s_gpu)
    else:
        assert p.shared_read == 0.0
        assert p.request_time == pytest.approx(osl * tok)
        assert p.prefill_gpus == pytest.approx(b / p.request_time * p.prefill_time * 8)
        assert p.output_tokens_per_s_decode_gpu == pytest.approx(b / tok / 8)
    # a user's tokens come in R - TTFT (aggregated: its prompt's net addition to the step it
    # rides on) or R (disaggregated: the prefill ran elsewhere before); the definitions
    # differ by what they count
    ttft = p.prefill_time - p.shared_read if mode == "aggregated" else 0.0
    assert p.tokens_per_s_user == pytest.approx(osl / (p.request_time - ttft))
    assert p.total_tokens_per_s_gpu == pytest.approx(
        p.output_tokens_per_s_gpu * (isl + osl) / osl)
    assert p.tokens_per_s_gpu == p.total_tokens_per_s_gpu      # the default definition
    assert sum(p.breakdown.values()) == pytest.approx(p.tpot, rel=1e-12)
    assert p.fits and p.context == isl + osl // 2


def test_speculation_without_draft_cost_or_acceptance(node):
    kw = {"isl": 1024, "osl": 256, "batch": 4, "layout": "tp=8"}
    base = serving_point("kimi-k2", node, **kw)
    # acceptance 0: one token per cycle, and verifying 3 extra tokens costs time
    none = serving_point("kimi-k2", node, draft_length=3, acceptance=0.0, draft_cost=0.0, **kw)
    assert none.tokens_per_cycle == 1.0
    assert none.tpot >= base.tpot
    # acceptance 1, free draft: k+1 tokens per verification step
    full = serving_point("kimi-k2", node, draft_length=3, acceptance=1.0, draft_cost=0.0, **kw)
    assert full.tokens_per_cycle == 4.0
    assert full.cycle_time == pytest.approx(none.cycle_time)


def test_micro_batches_read_weights_twice(node):
    kw = {"isl": 1024, "osl": 256, "batch": 16, "layout": "tp=8"}
    one = serving_point("kimi-k2", node, **kw)
    two = serving_point("kimi-k2", node, micro_batches=2, **kw)
    half = analysis.decode_step("kimi-k2", node, batch=8, context=1024 + 128, layout="tp=8")
    assert two.cycle_time == pytest.approx(2 * half.time)
    assert two.resources["weights"] > one.resources["weights"]


def test_memory_fit_bounds_the_batch(node):
    # vLLM chunks an 8192-token prompt into what a step leaves, so memory is what binds
    # (TensorRT-LLM runs it only whole: beside no other request in its 8192-token budget)
    fr = serving_frontier("kimi-k2", node, isl=8192, osl=1024, layouts=("tp=8",),
                          speculative=((0, 0.0),), keep_all=True, engine="vllm")
    biggest = max(p.batch for p in fr.all_points)
    assert all(p.fits for p in fr.all_points)
    with pytest.raises(SpecError, match="usable"):
        serving_point("kimi-k2", node, isl=8192, osl=1024, batch=biggest + 1, layout="tp=8",
                      engine="vllm")


# -- layouts ---------------------------------------------------------------------------

def test_candidate_layouts_brute_force():
    f = topologies.build("nvl72")
    m = analysis.model_config("kimi-k2")
    got = candidate_layouts(m, f)
    want = []
    for n in range(1, 73):
        for tp in range(1, n + 1):
            if (72 % n == 0 and n % tp == 0 and m.attention.heads % tp == 0
                    and n <= m.routed_experts
                    and m.weight_bytes_total <= n * f.chip.hbm_bytes * 0.9):
                want.append(f"tp={tp},dp={n // tp}")
                if tp == n > 1:                     # every expert split over the n chips
                    want.append(f"tp={n},dp=1,etp={n}")
    assert got == want and len(got) >= 10


def test_frontier_points_dominate_the_rest(node):
    fr = serving_frontier("kimi-k2", node, isl=1024, osl=1024, n_batches=5, keep_all=True)
    assert fr.evaluated == len(fr.all_points) > len(fr.points) >= 2
    for q in fr.all_points:
        assert not any(p.tokens_per_s_user > q.tokens_per_s_user
                       and p.tokens_per_s_gpu > q.tokens_per_s_gpu for p in fr.all_points
                       if q in fr.points)
        assert any(p.tokens_per_s_user >= q.tokens_per_s_user
                   and p.tokens_per_s_gpu >= q.tokens_per_s_gpu for p in fr.points)
    assert fr.definition_text == DEFINITIONS["total-per-gpu"]
    best = fr.at_interactivity(fr.points[-1].tokens_per_s_user)
    assert best is fr.points[-1]
    assert fr.at_interactivity(1e9) is None


def test_definition_changes_only_the_y(node):
    kw = {"isl": 4096, "osl": 512, "batches": (1, 8), "layouts": ("tp=8",),
          "speculative": ((0, 0.0),)}
    a = serving_frontier("kimi-k2", node, definition="output-per-gpu", **kw)
    b = serving_frontier("kimi-k2", node, definition="total-per-gpu", **kw)
    for p, q in zip(a.points, b.points):
        assert q.tokens_per_s_gpu == pytest.approx(p.tokens_per_s_gpu * (4096 + 512) / 512)


def test_degraded_fabric_is_an_input(node):
    whole = serving_point("kimi-k2", node, isl=1024, osl=256, batch=8, layout="tp=8")
    broken = node.without(links=[("chip0", "sw0")])
    p = serving_point("kimi-k2", broken, isl=1024, osl=256, batch=8, layout="tp=8")
    assert p.tpot >= whole.tpot


# -- prefill ---------------------------------------------------------------------------

def test_prefill_flops_by_hand(node):
    m = analysis.model_config("deepseek-v3")
    isl = 1000
    p = prefill_time(m, node, isl=isl, layout="tp=8")
    att = m.attention
    pairs = isl * (isl + 1) // 2
    by_hand = (2 * (m.active_params - m.head_params) * isl + 2 * m.head_params
               + m.layers * 2 * att.heads * (att.qk_nope_head_dim + att.qk_rope_head_dim
                                            + att.v_head_dim) * pairs)
    assert p.flops == by_hand
    # each GEMM at its format's peak (FP8 here; scores, router, head BF16) times its
    # published efficiency (FP8 on Hopper 0.656-0.698, BF16 none: 1): between the FP8
    # roofline and the BF16 one of all FLOPs (by parts: tests/test_serving_prefill_gemm.py)
    bf16, fp8 = node.chip.gemm_flops("bf16"), node.chip.gemm_flops("fp8")
    assert by_hand / (8 * fp8) < p.compute < by_hand / (8 * bf16)
    # the pass's roofline, communication, and the launches its eager pass leaves exposed
    # (those before its first long kernel: tests/test_serving_eager.py)
    assert p.total == pytest.approx(max(p.compute, p.weights) + p.comm
                                    + p.exposed_launch(max(p.compute, p.weights) + p.comm))
    # GPU-side boundaries (1521 kernels x 1.3 us) and the launches before the first heavy one
    assert 0 < p.total - max(p.compute, p.weights) - p.comm < p.kernels() * p.boundary + 1e-4
    # one chip: no communication
    single = topologies.build("switch:1,chip=b200")
    with pytest.raises(SpecError):
        prefill_time("kimi-k2", single, isl=0)


# -- single-user speed -----------------------------------------------------------------

def test_single_user_speed_is_the_fastest_batch_one_point(node):
    s = single_user_speed("kimi-k2", node, isl=1024, osl=1024)
    fr = serving_frontier("kimi-k2", node, isl=1024, osl=1024, batches=(1,), keep_all=True)
    assert s.tokens_per_s == pytest.approx(max(p.tokens_per_s_user for p in fr.all_points))
    assert s.limiter == max(s.shares, key=s.shares.get)
    assert sum(s.shares.values()) == pytest.approx(s.tpot, rel=1e-12)
    assert s.point.batch == 1


def test_kernel_floors_are_their_own_share_not_compute(node):
    # the kernels' minimum durations and GEMM fixed parts sit inside attention/ffn/head;
    # the shares report them apart, so "compute" is only time beyond the memory roofline
    on = single_user_speed("kimi-k2", node, isl=1024, osl=1024, speculative=((0, 0.0),))
    off = single_user_speed("kimi-k2", node, isl=1024, osl=1024, speculative=((0, 0.0),),
                            kernel_floors={}, gemm_fixed_time=0.0)
    assert off.shares["kernel floors"] == 0.0 and on.shares["kernel floors"] > 0
    assert on.shares["compute"] == pytest.approx(off.shares["compute"], abs=1e-12)
    assert sum(on.shares.values()) == pytest.approx(on.tpot, rel=1e-12)


# -- cost ------------------------------------------------------------------------------

def test_cost_closed_forms():
    # $ per Mtok = $/GPU-h / (tok/s/GPU x 3600 / 1e6)
    assert cost_per_million_tokens(2000.0, 2.17) == pytest.approx(2.17 / 7.2)
    assert tokens_per_s_per_mw(1500.0, 1.5) == pytest.approx(1e6)
    assert TCO["H200"].usd_per_gpu_hour["own-hyperscaler"] == 1.41
    assert TCO["GB200 NVL72"].all_in_kw_per_gpu == 2.10
    with pytest.raises(SpecError, match="tokens_per_s_gpu"):
        cost_per_million_tokens(0.0, 1.0)


def test_serving_cost_paths():
    usd, kw, params, how = serving_cost(topologies.build("nvl72"), tier="rent-3yr")
    assert (usd, kw) == (3.30, 2.10) and "GB200 NVL72" in how and params
    for preset, product in (("gb200-nvl72", "GB200 NVL72"), ("gb300-nvl72", "GB300 NVL72")):
        usd, kw, _, how = serving_cost(topologies.build(preset))
        assert (usd, kw) == (TCO[product].usd_per_gpu_hour["own-hyperscaler"],
                             TCO[product].all_in_kw_per_gpu) and how.endswith(
            f"{product}, own-hyperscaler")
    sd = topologies.build("sd200-ultra")
    with pytest.raises(SpecError, match="chip_price"):
        serving_cost(sd, chip_price=-1.0)
    usd, kw, params, how = serving_cost(sd, chip_price=20_000.0, kw_per_gpu=1.0)
    bom = analysis.bill_of_materials(sd)
    hours = 4 * 8760
    assert usd == pytest.approx((20_000 + bom.cost_usd_per_chip) / hours + 1.0 * 0.087)
    with pytest.raises(SpecError, match="tier"):
        serving_cost(sd, tier="spot")


def test_chip_price_path_agrees_with_the_table_for_h100():
    # An independent check of the BOM path: an H100 cluster priced from the cost book's
    # node price, its network and its IT power lands within 25% of the analyst's table.
    f = topologies.build("cluster-128")
    table, _, _, _ = serving_cost(f)
    usd, _kw, _, how = serving_cost(f, chip_price=analysis.bill_of_materials(f)
                                   .system_usd_per_chip)
    assert "network" in how and table == 1.30
    assert usd == pytest.approx(table, rel=0.25)


# -- errors ----------------------------------------------------------------------------

@pytest.mark.parametrize("kw, match", [
    ({"isl": 0}, "isl must be"),
    ({"mode": "mixed"}, "mode must be one of"),
    ({"definition": "per-chip"}, "definition must be one of"),
    ({"batch": 3, "micro_batches": 0}, "micro_batches"),
    ({"layout": "tp=3"}, "tp=3"),
])
def test_bad_input(node, kw, match):
    args = {"isl": 1024, "osl": 128, "batch": 1, "layout": "tp=8"}
    args.update(kw)
    with pytest.raises(SpecError, match=match):
        serving_point("kimi-k2", node, **args)


def test_batch_set_by_sweep_not_decode_kwargs(node):
    with pytest.raises(SpecError, match="set by the serving sweep"):
        serving_frontier("kimi-k2", node, isl=10, osl=10, context=5, tokens_per_sequence=2)
    assert math.isfinite(serving_point("kimi-k2", node, isl=10, osl=10, batch=1,
                                       layout="tp=8").tpot)


def test_prefill_with_experts_split_pays_two_allreduces_per_moe_layer(node):
    # tp=8 with whole experts (ep=8): one all-reduce + dispatch + combine per MoE layer;
    # every expert split (etp=8, ep=1): two all-reduces, no exchange
    m = analysis.model_config("kimi-k2")
    split = prefill_time(m, node, isl=256, layout="tp=8,dp=1,etp=8", runtime="ideal")
    ar = analysis.cost(node, "all-reduce", 256 * m.hidden * m.activation_bytes,
                       ranks=list(range(8)), runtime="ideal").time
    assert split.comm == pytest.approx((m.dense_layers * 2 + m.moe_layers * 2) * ar)


def test_points_name_expert_split_layouts_apart():
    # the expert-parallel and the expert-split layout of the same tp and dp are different
    # deployments: their points carry different labels, and the label re-parses to its layout
    node = topologies.build("switch:8,planes=2,links=9,tech=nvlink5,chip=b200")
    kw = {"isl": 256, "osl": 64, "batch": 4, "runtime": "ideal"}
    ep = analysis.serving_point("kimi-k2.5-int4", node, layout="tp=8,dp=1", **kw)
    split = analysis.serving_point("kimi-k2.5-int4", node, layout="tp=8,dp=1,etp=8", **kw)
    assert (ep.layout, split.layout) == ("tp=8,dp=1", "tp=8,dp=1,etp=8")
    again = analysis.serving_point("kimi-k2.5-int4", node, layout=split.layout, **kw)
    assert again.tpot == split.tpot != ep.tpot


def _cycles_by_enumeration(r, k, a):
    """Expected cycles to emit ``r`` tokens, by walking every outcome sequence: a cycle emits
    1 + (the run of accepted drafts, at most k) tokens, capped at what is left."""
    if r <= 0:
        return 0.0
    total = 0.0
    for j in range(1, k + 2):
        pj = a ** (j - 1) * (1 - a) if j <= k else a ** k
        if pj:
            total += pj * (1 + _cycles_by_enumeration(r - j, k, a))
    return total


@settings(max_examples=150, deadline=None)
@given(osl=st.integers(1, 9), k=st.integers(0, 4), a=st.floats(0.0, 1.0))
def test_expected_cycles_match_every_outcome_sequence(osl, k, a):
    # the engine stops a request at its length: the last cycle's surplus drafts are dropped
    # (audit S9 5); exact against the enumeration of every acceptance sequence
    assert analysis.expected_cycles(osl, k, a) == pytest.approx(
        _cycles_by_enumeration(osl, k, a), rel=1e-9, abs=1e-12)


@settings(max_examples=40, deadline=None)
@given(k=st.integers(1, 5), a=st.floats(0.05, 0.99))
def test_expected_cycles_tend_to_osl_over_e_and_never_undercount(k, a):
    e = analysis.expected_accepted_tokens(k, a)
    for osl in (1, 7, 64, 1024, 200_000):
        n = analysis.expected_cycles(osl, k, a)
        assert n >= osl / e - 1e-9 and n >= 1
    big = analysis.expected_cycles(200_000, k, a)
    assert big - 200_000 / e < 1.0          # the surplus is at most one cycle's worth
    assert analysis.expected_cycles(200_001, k, a) - big == pytest.approx(1 / e, rel=1e-6)


@settings(max_examples=60, deadline=None)
@given(osl=st.integers(1, 80), extra=st.integers(0, 200), a=st.floats(0.0, 1.0))
def test_drafts_beyond_the_request_change_no_cycle_count(osl, extra, a):
    """A cycle never emits more than the request has left, so every draft length k >= osl
    gives the cycles of k = osl (the longer drafts are discarded), exactly, up to a draft
    length no list could hold (session 14: 10**30 drafts ran out of memory)."""
    want = analysis.expected_cycles(osl, osl, a)
    assert analysis.expected_cycles(osl, osl + extra, a) == want
    assert analysis.expected_cycles(osl, 10**30, a) == want


def test_one_token_answers_take_one_cycle_with_or_without_drafts(node):
    # audit S9 5's repro: a 1-token answer looked faster with 3 drafts (0.339 cycles)
    kw = {"isl": 1000, "osl": 1, "batch": 4, "layout": "tp=8"}
    plain = serving_point("deepseek-v3", node, **kw)
    drafted = serving_point("deepseek-v3", node, draft_length=3, acceptance=0.8, **kw)
    assert drafted.tokens_per_cycle == 1.0
    assert drafted.tpot > plain.tpot


@pytest.mark.parametrize("osl, k, a, wrong_kind, match", [
    (-3, 3, 0.8, False, "osl must be an integer >= 0"), (2.5, 3, 0.8, True, "osl must be"),
    (None, 3, 0.8, True, "osl must be"), ("100", 3, 0.8, True, "osl must be"),
    (True, 3, 0.8, True, "osl must be"),
    (10, -1, 0.8, False, "draft_length must be"), (10, 1.5, 0.8, True, "draft_length must be"),
    (10, 2, 1.5, False, "acceptance must be"), (10, 2, float("nan"), False, "acceptance must be"),
])
def test_expected_cycles_names_a_bad_argument(osl, k, a, wrong_kind, match):
    # review S9-R4: the public function read -3 as an IndexError, 2.5 as a sequence error;
    # a count of the wrong kind is a TypeError, a bad value a SpecError (session 31)
    from fabric import SpecError

    with pytest.raises(TypeError if wrong_kind else SpecError, match=match):
        analysis.expected_cycles(osl, k, a)


# -- hbm_efficiency: None is the published rates, a given value every read's (S12-R2) -------

def test_hbm_efficiency_not_given_is_decodes_published_rates():
    # serving passes hbm_efficiency through to decode_step only when the caller gives it: not
    # given, the decode steps take their kernels' published streaming rates (DeepGEMM's FP8
    # GEMMs on Hopper) and the prompt pass reads at decode's 0.78; given 0.78, every decode
    # read runs at 0.78 (slower here) and the prompt pass is unchanged
    # (since session 22 a published-rate step under trtllm also takes TensorRT-LLM's measured
    # attention GEMMs, slower than DeepGEMM's rate here: the rate's comparison is made without
    # them, and the measured GEMMs make the default slower still)
    from unittest import mock

    from analysis import _decode as D
    f = topologies.build("switch:8,chip=h200")
    kw = {"isl": 1024, "osl": 1024, "batch": 16, "layout": "tp=8", "engine": "trtllm"}
    measured = serving_point("deepseek-r1", f, **kw)
    # (and since session 24 the MLA generation op measured at 16 heads a GPU: held out the
    # same way)
    with mock.patch.object(D._Settings, "attention_gemm_measured", lambda s, name: None), \
            mock.patch.object(D._Settings, "mla_measured", new=property(lambda s: None)):
        default = serving_point("deepseek-r1", f, **kw)
        given_ = serving_point("deepseek-r1", f, hbm_efficiency=0.78, **kw)
        none = serving_point("deepseek-r1", f, hbm_efficiency=None, **kw)
    assert none.tpot == default.tpot and none.request_time == default.request_time
    assert given_.tpot > default.tpot
    assert measured.tpot > default.tpot
    assert given_.prefill_time == pytest.approx(default.prefill_time, rel=1e-12)
    p_none = prefill_time("deepseek-r1", f, isl=1024, layout="tp=8")
    p_78 = prefill_time("deepseek-r1", f, isl=1024, layout="tp=8", hbm_efficiency=0.78)
    p_1 = prefill_time("deepseek-r1", f, isl=1024, layout="tp=8", hbm_efficiency=1.0)
    assert p_none.weights == p_78.weights == pytest.approx(p_1.weights / 0.78, rel=1e-12)
