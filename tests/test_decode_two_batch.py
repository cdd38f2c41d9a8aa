"""The decode two-batch overlap schedule (``decode_step(overlap="two-batch")``).

The closed form of :data:`analysis.TWO_BATCH` (each exchange's transfer hides only under
the stage the other micro-batch runs between its send and its receive) is checked against
an event simulation of SGLang's stage executor (two micro-batches on one stream, B two stages
behind A, five stages per layer, a receive waiting for its send's transfer).
"""

import types

import pytest
from decode_settings import decode_settings
from degrade import built
from hypothesis import given, settings
from hypothesis import strategies as st

import analysis
import fabric
import topologies
from analysis import _decode as D
from fabric import SpecError
from fabric._units import is_real

H100_72 = "rail:servers=9,gpus=8,chip=h100"
#: TensorRT-LLM's fused all-reduce kernels (analysis._decode.FUSED_ALLREDUCE_KERNELS)
FUSED = ("allreduce_add_rmsnorm_quant", "allreduce_add_rmsnorm", "reduce_allreduce_add_rmsnorm")
TBO = {"layout": "tp=1,dp=72", "ep_kernel": "deepep-low-latency", "overlap": "two-batch",
       "dispatch_bytes": 1 + 4 / 128, "combine_bytes": 2.0}


@pytest.fixture(scope="module")
def fab():
    return topologies.build(H100_72)


# -- brute force: SGLang's executor order, simulated ---------------------------------------

def _simulate(stage, flight_d, flight_c, layers):
    """Stream time after ``layers`` layers of two micro-batches under SGLang's decode
    executor (``_execute_two_batch_raw`` with ``delta_stages=2``): A runs two stages alone,
    then A and B alternate one stage each, then B finishes. ``stage`` holds the durations of
    the kernels of one micro-batch's layer: s1, s2 (prepare, core), send_d, shared, recv_d,
    experts, send_c, recv_c, out. A receive starts no earlier than its send's end plus the
    transfer (the data in flight needs no SM)."""
    def ops(mb):
        for _ in range(layers):
            yield [("run", stage["s1"])]
            yield [("run", stage["s2"])]
            yield [("send", "d", stage["send_d"]), ("run", stage["shared"])]
            yield [("recv", "d", stage["recv_d"]), ("run", stage["experts"]),
                   ("send", "c", stage["send_c"])]
            yield [("recv", "c", stage["recv_c"]), ("run", stage["out"])]

    stages = {mb: list(ops(mb)) for mb in "ab"}
    t = 0.0
    sent = {}
    flight = {"d": flight_d, "c": flight_c}

    def run(mb, i):
        nonlocal t
        for op in stages[mb][i]:
            if op[0] == "run":
                t += op[1]
            elif op[0] == "send":
                t += op[2]
                sent[(mb, op[1])] = t
            else:
                t = max(t, sent.pop((mb, op[1])) + flight[op[1]]) + op[2]

    n = len(stages["a"])
    order = [("a", 0), ("a", 1)]
    for i in range(2, n):
        order += [("a", i), ("b", i - 2)]
    order += [("b", n - 2), ("b", n - 1)]
    for mb, i in order:
        run(mb, i)
    return t


durations = st.floats(0.0, 100.0, allow_nan=False)


@settings(max_examples=60, deadline=None)
@given(s1=durations, s2=durations, send_d=durations, shared=durations, recv_d=durations,
       experts=durations, send_c=durations, recv_c=durations, out=durations,
       flight_d=st.floats(0.0, 400.0), flight_c=st.floats(0.0, 400.0))
def test_closed_form_is_the_event_simulation(s1, s2, send_d, shared, recv_d, experts, send_c,
                                             recv_c, out, flight_d, flight_c):
    stage = {"s1": s1, "s2": s2, "send_d": send_d, "shared": shared, "recv_d": recv_d,
             "experts": experts, "send_c": send_c, "recv_c": recv_c, "out": out}
    # per layer, in the steady state: every kernel of both micro-batches plus each receive's
    # wait, a transfer hiding under its window only
    per_layer = _simulate(stage, flight_d, flight_c, 4) - _simulate(stage, flight_d, flight_c, 3)
    phase = types.SimpleNamespace
    ex = types.SimpleNamespace(
        dispatch_phase=phase(fixed=send_d, local_copy=recv_d, transfer=flight_d),
        combine_phase=phase(fixed=send_c, local_copy=recv_c, transfer=flight_c))
    exposed = D._two_batch_exposed(None, ex, (shared + s1, s2))
    compute = s1 + s2 + shared + experts + out
    assert per_layer == pytest.approx(2 * (compute + exposed), rel=1e-9, abs=1e-9)


def test_simulation_by_hand():
    # stages 10 each; dispatch transfer 50 hides under shared 10 + the other's s1 10 -> waits
    # 30; combine transfer 5 hides under s2 -> no wait
    stage = {"s1": 10, "s2": 10, "send_d": 0, "shared": 10, "recv_d": 0, "experts": 10,
             "send_c": 0, "recv_c": 0, "out": 0}
    per_layer = _simulate(stage, 50, 5, 5) - _simulate(stage, 50, 5, 4)
    assert per_layer == pytest.approx(2 * (40 + 30))


# -- the decode step ----------------------------------------------------------------------

def test_attention_work_adds_up_to_the_attention_weights():
    for name in ("deepseek-v3", "kimi-k2"):
        m = analysis.model_config(name)
        att = m.attention
        norms = att.q_lora_rank + att.kv_lora_rank
        assert sum(D._attention_work(m).values()) + norms == att.params(m.hidden)
    from analysis._models import GQA

    g = types.SimpleNamespace(attention=GQA(64, 8, 128), hidden=8192)
    assert sum(D._attention_work(g).values()) == g.attention.params(8192)


def test_two_batch_exposes_less_than_the_whole_exchange_and_at_least_its_stream_work(fab):
    st_ = analysis.decode_step("deepseek-v3", fab, batch=128 * 72, context=2000, **TBO)
    moe = st_.layers[-1]
    ex = analysis.moe_exchange(fab, "deepseek-v3", 128, 72, kernel="deepep-low-latency",
                               dispatch_bytes=TBO["dispatch_bytes"], combine_bytes=2.0,
                               kernel_gap=0.0)
    on_stream = sum(p.fixed + p.local_copy for p in (ex.dispatch_phase, ex.combine_phase))
    assert on_stream - 1e-12 <= moe.exposed_comm <= moe.comm + 1e-12
    # dense layers have no exchange; their all-reduces (tp=1: none) are not hidden
    assert st_.layers[0].exposed_comm == st_.layers[0].comm
    # the two receives are launched apart from their sends: two more exchange kernels
    plain = analysis.decode_step("deepseek-v3", fab, batch=128 * 72, context=2000,
                                 **{**TBO, "overlap": 1.0})
    assert moe.kernels == plain.layers[-1].kernels + 2


def _tbo_settings(fab, **over):
    """decode's resolved settings for the check row's two-batch step (128 tokens per GPU,
    2000-token context), TensorRT-LLM kernel lists, compute at peak; ``over`` replaces
    any of :data:`TBO`."""
    return decode_settings(fab, "deepseek-v3", 128 * 72, context=2000,
                           **{"compute_efficiency": 1.0, **TBO, **over})


def test_two_batch_by_hand(fab):
    s = _tbo_settings(fab)
    mem = D._memory_fit(s)
    win_d, win_c = D._two_batch_windows(s, mem)
    m = s.m
    h, t = m.hidden, 128

    def k(name, params=0.0, part="attention"):
        return D._kernel_time(s, name, params, 2 * params * t, part)

    # the router gate's weights are BF16 (2 B each, MoEModel.part_bytes; DeepSeek-V3's others
    # FP8, 1 B)
    router = D._kernel_time(s, "router_gemm", (h * 256 + 256) * 2.0, 2 * (h * 256 + 256) * t,
                            "router")
    # TensorRT-LLM's MLA list: before the attention kernel, the fused A GEMM (q_a + kv_a),
    # the norm, q_b, the W_UK absorb, rope + cache write; the shared expert (3 h w weights)
    # (H100: FlashMLA's scheduler before the attention kernel and its combine after it,
    # TRTLLM_HOPPER_FLASHMLA)
    prepare = (k("fuse_a_gemm", h * 1536 + h * 576) + k("q_kv_rmsnorm")
               + k("uq_qr_gemm", 1536 * 128 * 192) + k("uk_bgemm", 512 * 128 * 128)
               + k("kv_cache_rope") + k("mla_metadata"))
    shared = k("shared_expert", 3 * h * 2048, "ffn")
    core = (D._kernel_time(s, "gen_attention", mem.kv_layer_chip,
                           t * m.attention.score_flops_per_token(2000), "scores")
            + k("mla_combine") + k("uv_gemm", 512 * 128 * 128) + k("wo_gemm", 128 * 128 * h)
            + k("allreduce_add_rmsnorm_quant") + router + k("topk"))
    assert win_d == pytest.approx(prepare + shared, rel=1e-12)
    assert win_c == pytest.approx(core, rel=1e-12)


def test_two_batch_window_reads_the_latent_down_projections_whole_under_tp(fab, monkeypatch):
    # under tp > 1 every rank runs q_a / kv_a whole (MLA.replicated_params, as att_w and the
    # memory fit count them); the dispatch's window must price the fused A GEMM whole too
    s = _tbo_settings(fab, layout="tp=2,dp=36")
    mem = D._memory_fit(s)
    whole_d, whole_c = D._two_batch_windows(s, mem)
    monkeypatch.setattr(D, "_REPLICATED_WORK", frozenset())
    split_d, split_c = D._two_batch_windows(s, mem)
    a = 7168 * (1536 + 576)               # DeepSeek-V3's q_a + kv_a weights
    t = s.t_dp

    def fuse_a(params):
        return D._kernel_time(s, "fuse_a_gemm", params * s.m.weight_bytes, 2 * params * t)

    assert whole_d - split_d == pytest.approx(fuse_a(a) - fuse_a(a / 2), rel=1e-9)
    assert whole_d > split_d and whole_c == split_c


@settings(max_examples=8, deadline=None)
@given(context=st.integers(500, 4000), extra=st.integers(1, 4000))
def test_longer_attention_hides_more(context, extra):
    # the combine's window is the other micro-batch's attention core: a longer context never
    # exposes more communication (the exchange itself does not change)
    f = built(H100_72)
    a = analysis.decode_step("deepseek-v3", f, batch=64 * 72, context=context, **TBO)
    b = analysis.decode_step("deepseek-v3", f, batch=64 * 72, context=context + extra, **TBO)
    assert b.layers[-1].exposed_comm <= a.layers[-1].exposed_comm + 1e-15
    assert b.layers[-1].comm == a.layers[-1].comm


def test_two_batch_bad_input(fab):
    with pytest.raises(SpecError, match="ep_kernel"):
        analysis.decode_step("deepseek-v3", fab, batch=9216, context=2000, layout="tp=1,dp=72",
                             overlap="two-batch")
    with pytest.raises(SpecError, match="overlap"):
        analysis.decode_step("deepseek-v3", fab, batch=9216, context=2000,
                             **{**TBO, "overlap": "two_batch"})
    with pytest.raises(SpecError, match="micro_batches=2"):
        analysis.serving_point("deepseek-v3", fab, isl=2000, osl=1, batch=9216, context=2000,
                               mode="disaggregated", micro_batches=1, **TBO)


def test_two_batch_parameter_names_its_source(fab):
    st_ = analysis.decode_step("deepseek-v3", fab, batch=9216, context=2000, **TBO)
    p = next(p for p in st_.parameters if p.name == "decode.overlap")
    assert p.value == "two-batch" and "sglang" in p.source.lower()


# -- expert balance (EPLB) ----------------------------------------------------------------

def test_expert_balance_prices_the_busiest_rank_at_mean_over_balance(fab):
    # the routed experts' compute is mean / balance token-expert pairs on the busiest rank
    kw = {"batch": 256 * 72, "context": 100, "layout": "tp=1,dp=72",
          "ep_kernel": "deepep-low-latency"}
    rr = analysis.decode_step("deepseek-v3", fab, **kw).layers[-1]
    b = analysis.decode_step("deepseek-v3", fab, expert_balance=0.8, **kw).layers[-1]
    m = analysis.model_config("deepseek-v3")
    peak = fabric.chip_spec("h100").gemm_flops(m.math_format("experts"))
    mean = 256 * 8                       # token-expert pairs per rank
    busiest_rr = 4 * (256 * 72 * 8 / 256)  # round-robin: 256 experts over 72, 4 on the busiest

    def seconds(pairs):                  # DeepGEMM's masked table at pairs / 4 rows per group
        eff = analysis.grouped_gemm_efficiency("hopper", "fp8", pairs / 4)
        return pairs * 2 * m.expert_params / (peak * eff)
    assert b.ffn_compute - rr.ffn_compute == pytest.approx(
        seconds(mean / 0.8) - seconds(busiest_rr), rel=1e-9)


def test_expert_balance_one_is_round_robin_when_placement_is_even():
    # 256 experts over 64 ranks: uniform routing loads every rank alike, balance 1
    f = topologies.build("rail:servers=8,gpus=8,chip=h100")
    kw = {"batch": 64 * 64, "context": 100, "layout": "tp=1,dp=64",
          "ep_kernel": "deepep-low-latency"}
    a = analysis.decode_step("deepseek-v3", f, **kw)
    b = analysis.decode_step("deepseek-v3", f, expert_balance=1.0, **kw)
    assert b.layers[-1].ffn_compute == pytest.approx(a.layers[-1].ffn_compute, rel=1e-12)


@settings(max_examples=10, deadline=None)
@given(lo=st.floats(0.05, 1.0), hi=st.floats(0.05, 1.0))
def test_worse_balance_is_never_faster(lo, hi):
    lo, hi = sorted((lo, hi))
    f = built(H100_72)
    kw = {"batch": 256 * 72, "context": 100, "layout": "tp=1,dp=72",
          "ep_kernel": "deepep-low-latency"}
    a = analysis.decode_step("deepseek-v3", f, expert_balance=lo, **kw)
    b = analysis.decode_step("deepseek-v3", f, expert_balance=hi, **kw)
    assert a.time >= b.time


def test_expert_balance_bad_input(fab):
    kw = {"batch": 72, "context": 100, "layout": "tp=1,dp=72"}
    for bad in (0, 1.5, float("nan"), True):
        with pytest.raises(SpecError if is_real(bad) else TypeError, match="expert_balance"):
            analysis.decode_step("deepseek-v3", fab, expert_balance=bad, **kw)
    with pytest.raises(SpecError, match="expert_balance"):
        analysis.decode_step("deepseek-v3", fab, batch=8, context=100, layout="tp=8,dp=1,etp=8",
                             expert_balance=0.9)


def test_cli_two_batch_and_expert_balance(capsys):
    import json

    from analysis._cli import main

    args = ["decode", H100_72, "--model", "deepseek-v3", "--batch", "9216", "--context", "2000",
            "--layout", "tp=1,dp=72", "--ep-kernel", "deepep-low-latency", "--json"]
    assert main(args + ["--overlap", "two-batch", "--expert-balance", "0.81"]) == 0
    data = json.loads(capsys.readouterr().out)
    r = analysis.decode_step("deepseek-v3", topologies.build(H100_72), batch=9216, context=2000,
                             layout="tp=1,dp=72", ep_kernel="deepep-low-latency",
                             overlap="two-batch", expert_balance=0.81)
    assert data["time"] == pytest.approx(r.time, rel=1e-12)
    with pytest.raises(SystemExit) as e:
        main(args + ["--overlap", "two_batch"])
    assert e.value.code == 2


def test_sglang_kernel_list_recount(fab):
    # recount by class (the list's docstring): attention 16 = 3 norms, 5 quantize + rotary +
    # cache write (elementwise), 5 GEMMs, 1 attention; MoE 13 = 1 norm, 1 top-k, 6 elementwise,
    # 3 GEMMs, 2 masked grouped GEMMs (+ the exchange's kernels); dense 6
    from collections import Counter

    from analysis._decode import KERNEL_CLASSES
    from analysis._decode import SGLANG_GRAPH_KERNELS as S

    count = {k: Counter(KERNEL_CLASSES[n] for n in v) for k, v in S.items()}
    assert count["mla"] == {"norm": 3, "elementwise": 7, "gemm": 5, "attention": 1}
    assert count["moe_ffn"] == {"norm": 1, "topk": 1, "elementwise": 6, "gemm": 3,
                                "moe_gemm": 2}
    assert count["dense_ffn"] == {"norm": 1, "elementwise": 3, "gemm": 2}
    st_ = analysis.decode_step("deepseek-v3", fab, batch=9216, context=2000, engine="sglang",
                               **TBO)
    # DeepEP low-latency: one kernel per phase, plus each phase's receive under two-batch
    assert st_.layers[-1].kernels == 16 + 13 + 2 + 2
    assert st_.layers[0].kernels == 16 + 6


@pytest.mark.parametrize("model,spec,engine,fmt,layout", [
    ("deepseek-v3", H100_72, "trtllm", None, None),  # FlashMLA's rates (Hopper, BF16 KV)
    ("deepseek-v3", H100_72, "sglang", None, None),
    ("deepseek-v3", H100_72, "trtllm", 1.0, None),   # a user's compute efficiency
    ("kimi-k2.5-nvfp4", "rail:servers=9,gpus=8,chip=h200", "trtllm", None, "tp=1,dp=64"),
    ("deepseek-r1-nvfp4", "rail:servers=9,gpus=8,chip=b200", "trtllm", None, None),
    ("deepseek-v3", "rail:servers=9,gpus=8,chip=b200", "vllm", None, None),
    # attention tp > 1: TensorRT-LLM's fused all-reduce kernel after attention starts inside
    # its priced all-reduce (session 16: no boundary in the stream, nor in the window)
    ("deepseek-v3", H100_72, "trtllm", None, "tp=2,dp=36"),
    ("deepseek-r1-nvfp4", "rail:servers=9,gpus=8,chip=b200", "trtllm", None, "tp=8,dp=9"),
])
def test_two_batch_prices_the_attention_kernels_as_the_single_batch_pass(model, spec, engine,
                                                                          fmt, layout):
    # one attention pricing: the two-batch windows' attention stages are the single-batch
    # block's kernels (each at its roofline, fixed part and floor), plus the boundaries the
    # stream charges them (none for a kernel whose start its priced all-reduce holds: the
    # fused all-reduce kernels at tp > 1, counted here by hand), less the norms' weights
    # (read by no GEMM; the block counts them, the stages do not)
    f = topologies.build(spec)
    kw = {**TBO, "engine": engine, "compute_efficiency": fmt}
    if layout is not None:
        kw["layout"] = layout
    step = analysis.decode_step(model, f, batch=128 * 72, context=2000, **kw)
    s = decode_settings(f, model, 128 * 72, context=2000, **kw)
    mem = D._memory_fit(s)
    prepare, core = D._two_batch_attention_stages(s, mem)
    names = D._attention_names(s)
    m, tp = s.m, s.lay.tp
    work = D._attention_work(m)
    gemm_params = sum(w / (1 if g in D._REPLICATED_WORK else tp) for g, w in work.items())
    rank_params = m.attention_params / tp if tp == 1 else m.attention_params_per_rank(tp)
    norms = max(0.0, (rank_params - gemm_params) * m.weight_bytes / s.part_bw("attention"))
    moe = step.layers[-1]
    held = sum(n in FUSED for n in names) if tp > 1 else 0
    assert held == (1 if layout in ("tp=2,dp=36", "tp=8,dp=9") else 0)
    # TensorRT-LLM's measured MLA generation op on B200 (session 21): its two kernels at the
    # op's time, no boundary of their own (128 heads a GPU, BF16 KV: the tp=1 B200 case; since
    # session 24 also 16 heads a GPU: tp=8)
    measured = s.mla_measured
    assert (measured is not None) == (spec.endswith("chip=b200") and engine == "trtllm"
                                      and (layout is None or layout.startswith("tp=8,")))
    held += 2 if measured is not None else 0
    # and its measured attention GEMMs (session 22): each at least its measured time, no
    # boundary of its own (B200 BF16 attention under trtllm: the fused A at 128 and 1024 rows a
    # rank, the query up-, output projections and W_UK / W_UV at 128 and 16 heads a GPU)
    gemm = {n: s.attention_gemm_measured(n) for n in names}
    assert sum(t is not None for t in gemm.values()) == (
        5 if spec.endswith("chip=b200") and engine == "trtllm" else 0)
    held += sum(t is not None for t in gemm.values())
    want = moe.attention - norms + (len(names) - held) * s.per_kernel / s.fusion_factor
    assert prepare + core == pytest.approx(want, rel=1e-9)
    # and the core stage rebuilt from its kernels: the attention kernel at the rates the
    # single-batch pass uses (s.kv_bw / s.scores_flops), the projections by _kernel_time
    at = next(i for i, n in enumerate(names) if D.KERNEL_CLASSES[n] == "attention")
    read = mem.kv_layer_chip / s.kv_bw()
    flops = s.t_dp * m.attention.score_flops_per_token(2000) / tp
    r = max(read, flops / s.scores_flops(), measured or 0.0)
    alone = r + (0.0 if measured is not None else
                 (D._kernel_overhead(s, names[at], r) + s.per_kernel) / s.fusion_factor)
    rest = 0.0
    for n in names[at + 1:]:
        p = D._attention_gemm_params(s, n) if D.KERNEL_CLASSES[n] in D._HEAVY else 0.0
        if gemm[n] is not None:     # TensorRT-LLM's measured GEMM: that time at least, no more
            rest += max(p * m.weight_bytes / s.part_bw("attention"),
                        2 * p * s.t_dp / s.gemm_flops("attention"), gemm[n])
            continue
        rest += D._kernel_time(s, n, p * m.weight_bytes, 2 * p * s.t_dp) - (
            s.per_kernel if tp > 1 and n in FUSED else 0.0)     # a held start: no boundary
    assert core == pytest.approx(alone + rest, rel=1e-12)


def test_two_batch_attention_kernel_runs_at_flashmla_rates_under_trtllm_on_hopper(fab):
    # before: the two-batch window priced TensorRT-LLM's Hopper MLA kernel at the defaults
    # (0.78 of HBM, BF16 peak) while the single-batch pass used FlashMLA's published rates
    s = _tbo_settings(fab, compute_efficiency=None)
    assert s.mla_kernel is not None
    mem = D._memory_fit(s)
    h800 = fabric.chip_spec("h800")
    bw = s.chip.hbm_bandwidth * (3000e9 / h800.hbm_bandwidth)          # FlashMLA README
    peak = s.chip.peak("bf16") * (660e12 / h800.peak("bf16"))
    kv = mem.kv_layer_chip
    flops = 128 * s.m.attention.score_flops_per_token(2000)
    r = max(kv / bw, flops / peak)
    gen = r + D._kernel_overhead(s, "gen_attention", r) + s.per_kernel
    default = D._kernel_time(s, "gen_attention", kv, flops, "scores")
    h, t = s.m.hidden, 128

    def k(name, params=0.0, part="attention"):
        return D._kernel_time(s, name, params, 2 * params * t, part)

    router = D._kernel_time(s, "router_gemm", (h * 256 + 256) * 2.0, 2 * (h * 256 + 256) * t,
                            "router")                 # BF16 router weights (part_bytes)
    core = (gen + k("mla_combine") + k("uv_gemm", 512 * 128 * 128)
            + k("wo_gemm", 128 * 128 * h)
            + k("allreduce_add_rmsnorm_quant") + router + k("topk"))
    assert D._two_batch_windows(s, mem)[1] == pytest.approx(core, rel=1e-12)
    assert abs(gen - default) > 1e-7                  # the two rates differ by > 0.1 us


# -- monotone in the efficiencies (review S11-R6) -------------------------------------------

_B200_9 = topologies.build("switch:9,chip=b200")            # a spare chip for a failed one
_H200_9 = topologies.build("switch:9,chip=h200")
# any given efficiency, the default's value too (S12-R2: a given hbm_efficiency is every
# read's; only hbm_efficiency=None lets FlashMLA, DeepGEMM's FP8 and Helion's NVFP4 kernels
# take their published rates)
_EFF = st.floats(0.05, 1.0) | st.just(D.DECODE_HBM_EFFICIENCY.value)


@settings(max_examples=40, deadline=None)
@given(model=st.sampled_from(("deepseek-v3", "deepseek-r1-nvfp4", "kimi-k2")),
       system=st.sampled_from(("b200", "h200", "b200-failed", "h100x72")),
       layout=st.sampled_from(("tp=1,dp={n}", "tp=2,dp={h}", "tp=8,dp={e}")),
       per_rank=st.sampled_from((1, 8, 64, 128, 512)), context=st.integers(1, 8000),
       engine=st.sampled_from(("trtllm", "sglang", "vllm")),
       overlap=st.sampled_from(("two-batch", 0.0, 0.6)),
       balance=st.sampled_from((None, 0.8)),
       hbm=st.tuples(_EFF, _EFF), compute=st.tuples(_EFF, _EFF),
       which=st.sampled_from(("hbm", "compute", "both")))
def test_higher_efficiency_never_slows_a_step(model, system, layout, per_rank, context, engine,
                                              overlap, balance, hbm, compute, which):
    # S11-R6: raising hbm_efficiency or compute_efficiency shortens (or keeps) every kernel
    # of the stream, and in the single-stream two-batch schedule (and under a fractional
    # overlap) a shorter kernel never delays the end: no layer and no step gets slower
    f = {"b200": _B200_9, "h200": _H200_9, "h100x72": built(H100_72),
         "b200-failed": _B200_9.without(chips=["chip3"])}[system]
    n = 72 if system == "h100x72" else 8
    lay = layout.format(n=n, h=n // 2, e=n // 8)
    (h_lo, h_hi), (c_lo, c_hi) = sorted(hbm), sorted(compute)
    if which == "hbm":
        c_hi = c_lo
    elif which == "compute":
        h_hi = h_lo
    kw = {"batch": per_rank * n, "context": context, "layout": lay, "engine": engine,
          "ep_kernel": "deepep-low-latency", "overlap": overlap, "expert_balance": balance}
    try:
        slow = analysis.decode_step(model, f, hbm_efficiency=h_lo, compute_efficiency=c_lo,
                                    **kw)
    except SpecError as e:          # the model does not fit this layout's chips
        assert "a chip needs" in str(e)
        return
    fast = analysis.decode_step(model, f, hbm_efficiency=h_hi, compute_efficiency=c_hi, **kw)
    for a, b in zip(fast.layers, slow.layers, strict=True):
        assert a.total <= b.total * (1 + 1e-12)
    assert fast.time <= slow.time * (1 + 1e-12)


def test_higher_efficiency_never_slows_the_check_rows_two_batch_layer():
    # the review's case (S11-R6): the dsv3 check row's micro-batch on 72 H100 at hbm_efficiency
    # 0.6 -> 1.0 went 551.0 -> 560.1 us per MoE layer (attention -96 us, exposed +105 us)
    f = topologies.build(H100_72)
    kw = {**TBO, "batch": 128 * 72, "context": 2000, "engine": "sglang",
          "cuda_graphs": True, "expert_balance": 0.81}
    slow = analysis.decode_step("deepseek-v3", f, hbm_efficiency=0.6, **kw).layers[-1]
    fast = analysis.decode_step("deepseek-v3", f, hbm_efficiency=1.0, **kw).layers[-1]
    assert fast.attention < slow.attention and fast.ffn <= slow.ffn
    assert fast.total <= slow.total
