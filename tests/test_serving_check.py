"""The serving model against the published serving points (tests/data/serving.csv).

Each row is checked on both axes in its source's own definition (see
``tests/serving_check.py``): tokens/s per user and tokens/s per GPU. The issue's
tolerance is 25%; rows the model does not reach yet are listed in
:data:`OUTSIDE_25`, with why: their 25% check is a strict xfail (it fails the suite
when such a row comes within 25%), and they are held to a factor of four so that a
gross regression still fails (``benchmarks/bench_serving.py`` prints every row's error).
Nothing is fitted to these rows.
"""

from pathlib import Path

import pytest
import serving_check as sc
from hypothesis import given, settings
from hypothesis import strategies as st

ROWS = sc.load_rows()
_POINTS = {}


def point(row):
    """The model point of a row, computed once per session (the README test reuses them)."""
    if row["id"] not in _POINTS:
        _POINTS[row["id"]] = sc.model_point(row)
    return _POINTS[row["id"]]


#: Rows outside 25% today, and what the decode model lacks for them. The vLLM rows are
#: expressed as the deployments ran (tests/serving_check.py): CUDA graphs, vLLM's kernel list
#: and per-size all-reduce kernel (analysis.vllm_all_reduce), every expert split over the TP
#: ranks; the decode model
#: carries the sourced graph-replay kernel boundary (1.3 us), the minimum durations of the
#: small kernels (analysis.KERNEL_FLOORS: norm 2.9 us, elementwise 1.5 us, top-k 4.1 us, MoE
#: align 8.23 us, measured on GB200 in NVIDIA/Megatron-LM PRs #6453-#6463), the fixed part of
#: a weight GEMM (analysis.GEMM_FIXED_TIME, 2.6 us: vLLM PR #53534's B200 decode GEMM times),
#: the achieved HBM fraction (0.78) and, for the INT4 rows, the measured bandwidth of vLLM's
#: INT4 W4A16 MoE GEMMs (0.303 of peak: vLLM issue #32832, an H200 TP=8 trace of Kimi K2 INT4
#: at 16 concurrent requests, i.e. the configuration of k2-h200-int4-c16, which is therefore
#: no independent check of it; the other rows are). Every vLLM row is within 25% since session 8
#: took InferenceX's length draw (serving_check.INFERENCEX_RANGE_RATIO); since session 9 they are
#: measured as InferenceX's harness measures them (serving_check.harness: 10 x CONC requests of
#: its own draw in a closed loop, the drain, per-request mean TPOT; analysis.closed_loop_run);
#: k2-h200-int4-c16 (22% per user, 20% per GPU) is the closest to the line.
#: dsv3-72xh100-ep72 (SGLang two-batch, DeepEP low latency, EPLB, the prompts' KV inflow) left
#: this list in session 12 (models, review S11-R6): every FFN block is priced kernel by kernel,
#: so its memory-bound shared experts no longer hide under the compute-bound routed experts'
#: block roofline (MoE layer ffn 132.8 -> 140.6 us per micro-batch): 23.6% per user, 23.9%
#: per GPU (was 25.05% / 25.3%; model still fast: MLA decode kernel priced memory-bound,
#: routed experts at DeepGEMM's masked-layout mean, see docs/sources.md s.8). With serving's
#: decode context for the row (isl + osl // 2 = 2050, session 12; it had been pinned at 2000
#: from when its osl was 1): 74.2 ms per step, 23.6% per user, 23.8% per GPU. Session 13
#: (models): the routed experts at DeepGEMM's masked table for their rows per group (~160 per
#: expert per micro-batch on the busiest rank: the 256-row figure 0.449, not the 0.530 mean):
#: 75.9 ms per step, 20.8% per user, 21.1% per GPU. Session 15 (models): each exchange phase's
#: first kernel start is in its handshake (analysis._decode._held_exchange_starts): 75.6 ms per
#: step, 21.3% per user, 21.5% per GPU.
OUTSIDE_25 = {}


def test_rows_are_the_published_ones():
    assert len(ROWS) == 9 and len({r["id"] for r in ROWS}) == 9
    for r in ROWS:
        assert r["source"].strip() and float(r["tok_s_per_gpu"]) > 0
        assert float(r["tok_s_per_user"]) > 0


@pytest.mark.parametrize("row", ROWS, ids=[r["id"] for r in ROWS])
def test_row(row):
    p = point(row)
    kw = sc.conditions(row)
    assert p.definition == kw["definition"]
    user = sc.error(p.tokens_per_s_user, float(row["tok_s_per_user"]))
    gpu = sc.error(p.tokens_per_s_gpu, float(row["tok_s_per_gpu"]))
    tol = 3.0 if row["id"] in OUTSIDE_25 else sc.TOLERANCE
    assert user <= tol and gpu <= tol, (row["id"], p.tokens_per_s_user, p.tokens_per_s_gpu)


@pytest.mark.parametrize("rid", [
    pytest.param(rid, marks=pytest.mark.xfail(strict=True, raises=AssertionError, reason=why))
    for rid, why in sorted(OUTSIDE_25.items())])
def test_rows_listed_outside_within_25_percent(rid):
    # the check for the rows the model still misses: a strict xfail, so that a row
    # which comes within 25% on both axes fails here and must leave OUTSIDE_25
    row = next(r for r in ROWS if r["id"] == rid)
    p = point(row)
    user = sc.error(p.tokens_per_s_user, float(row["tok_s_per_user"]))
    gpu = sc.error(p.tokens_per_s_gpu, float(row["tok_s_per_gpu"]))
    assert max(user, gpu) <= sc.TOLERANCE, (rid, user, gpu)


#: How the README names the rows it quotes.
README_NAMES = {"k2-b200-nvfp4-tp4-c64": "vLLM's NVFP4 Kimi K2.5 on 4 B200 at 64 users",
                "dsv3-72xh100-ep72": "SGLang's wide-EP DeepSeek-V3 row",
                "k2-h200-int4-c16": "vLLM's Kimi K2.5 on 8 H200 at 16 concurrent users"}


def test_readme_states_the_check_rows_as_the_model_gives_them():
    """The README's 'How far the model is from published serving points today': the count
    within 25% and the two rows closest to the line, by their larger error, as computed (it
    said 20.6% for the DeepSeek-V3 row, 17.7% since session 15's recount)."""
    text = " ".join((Path(__file__).resolve().parent.parent / "README.md").read_text().split())
    errors = {}
    for row in ROWS:
        p = point(row)
        errors[row["id"]] = (sc.error(p.tokens_per_s_user, float(row["tok_s_per_user"])),
                             sc.error(p.tokens_per_s_gpu, float(row["tok_s_per_gpu"])))
    within = sum(max(e) <= sc.TOLERANCE for e in errors.values())
    first, second = sorted(errors, key=lambda rid: max(errors[rid]), reverse=True)[:2]
    axis = "per GPU" if errors[first][1] >= errors[first][0] else "per user"
    vllm_h200 = max(errors["k2-h200-int4-c16"])
    assert (f"serving points today ({within} of {len(ROWS)} within 25%; closest to the line, "
            f"{README_NAMES[first]}, {max(errors[first]):.1%} {axis}, then "
            f"{README_NAMES[second]}, {max(errors[second]):.1%}; "
            f"{README_NAMES['k2-h200-int4-c16']}, {vllm_h200:.0%},") in text

def test_vllm_rows_price_each_all_reduce_with_the_kernel_vllm_launches():
    # the rows' collective is the library's vLLM dispatch (analysis.vllm_all_reduce, tested
    # against vLLM's tables in tests/test_serving_vllm_allreduce.py); at the rows' sizes:
    # decode 57 / 229 / 917 KB (c4 / c16 / c64 at hidden 7168, BF16), prefill 112 MiB
    import analysis
    import topologies

    want = {sc.H200_NODE: ["flashinfer one-shot", "flashinfer one-shot",
                           "torch-symm-mem multimem", "nccl"],
            sc.B200_NODE: ["flashinfer one-shot"] * 3 + ["torch-symm-mem multimem"]}
    for spec, kernels in want.items():
        f = topologies.build(spec)
        got = [analysis.vllm_all_reduce_kernel(f, n, list(f.endpoints))
               for n in (57344, 229376, 917504, 117440512)]
        assert got == kernels, spec
    # NVFP4 rows, TP=4 on B200: FlashInfer's one-shot up to 4 MiB; prefill above torch
    # symmetric memory's 32 MiB: NCCL
    f = topologies.build(sc.B200_NODE)
    four = list(f.endpoints[:4])
    assert [analysis.vllm_all_reduce_kernel(f, n, four) for n in (917504, 117440512)] == \
        ["flashinfer one-shot", "nccl"]
    # vLLM's custom all-reduce runs in none of these rows at vLLM's defaults: its 1-stage
    # kernel only below 256 KiB at TP=8 on Hopper, sizes the fusion already takes
    assert sc.vllm_all_reduce is not None


@settings(max_examples=50, deadline=None)
@given(length=st.integers(1, 200_000), ratio=st.sampled_from([0.0, 0.5, 0.8, 0.9, 1.0]))
def test_inferencex_lengths_are_the_mean_of_its_draw(length, ratio):
    # InferenceX draws np.random.randint(int(L r), L + 1): every integer of the range alike
    draws = range(int(length * ratio), length + 1)
    mean = sum(draws) / len(draws)
    got = sc.inferencex_mean_length(length, ratio)
    assert abs(got - mean) <= 0.5 and (got - mean != -0.5)


def test_inferencex_rows_take_the_mean_lengths():
    for r in ROWS:
        if r["id"].startswith("k2-"):
            kw = sc.conditions(r)
            assert (kw["isl"], kw["osl"]) == (7373, 922), r["id"]    # 8192 / 1024 at 0.8
