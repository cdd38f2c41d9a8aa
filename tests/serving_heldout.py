"""The serving held-out set: published serving points the model is NOT developed against.

``tests/data/serving_heldout.csv`` holds published serving measurements that are not
in the check set (``tests/data/serving.csv``), each with its source, its definition of
tokens/s per GPU and per user, and a ``notes`` column saying how the rows of that source
were selected (every row of an expressible kind the source states in full, so that rows
are not chosen by agreement). Rows the model cannot express yet carry
``expressible=no`` and the reason (a missing feature, not a row to drop). Sources are
also listed in docs/sources.md s.8.

Each expressible row is expressed with the serving API the way the check set is
(``tests/serving_check.py``, whose public helpers are reused here):

* ``k2-*`` rows: the other rows of the same InferenceX article's tables (Kimi K2.5,
  vLLM 0.21.0, 8192 in / 1024 out, one 8-GPU node): :func:`serving_check.conditions`
  expresses them exactly as it expresses the check rows (the row id names the chip,
  weight format and TP size), and :func:`serving_check.model_point` runs them through the
  harness's closed loop as it runs the check rows.
* ``r1-h200-fp8-trtllm-maxtput-c1024``: TensorRT-LLM's DeepSeek-R1 "H200
  max-throughput" run: 8x H200, FP8 weights, attention data parallel over the 8 GPUs
  with experts EP8 (``tp=1,dp=8``), 1024 concurrent requests, 1024 in / 2048 out, no
  MTP, CUDA graphs, TensorRT-LLM's kernel list. Per GPU: output tokens over all GPUs;
  per user: trtllm-bench's "Per User Output Throughput", output tokens over the request
  latency with the time to first token included. trtllm-bench measured it as a closed loop
  (5,120 requests at 1024 concurrent), so it is scored by that run
  (:func:`trtllm_bench_run`: per attention-DP rank, whole prompts, ramp and drain; the mean
  over requests of ``osl / latency``), as are the other max-throughput rows
  (:data:`TRTLLM_BENCH_RUNS`); the batch-1 rows by the steady state (``osl / request_time``).
* ``...-doc-v1`` / ``-doc-v2``: the result blocks of two earlier versions of the same
  document whose figures differ from the rows' (earlier code states), expressed as the rows
  of their kind; the H200 max-throughput command there has ``--max_num_tokens 1127``:
  TensorRT-LLM admits a prompt only whole, so a rank runs 104 of its 128 requests and the
  rest wait (``ServingPoint.running``, ``queue_time``).

**Check, never fit**: nothing here is chosen to make a row match; the comparison is
reported, not tuned.
"""

import os

import fidelity
import serving_check as sc

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "data", "serving_heldout.csv")

#: How the rows' per-user figure is defined, by id prefix: ``"1/tpot"`` (InferenceX) or
#: ``"osl/request"`` (trtllm-bench: output tokens / request latency, first token included).
USER_DEFINITIONS = {"k2-": "1/tpot", "r1-": "osl/request"}


def load_rows(path=DATA):
    """All rows (expressible or not), as dicts in file order."""
    return sc.load_rows(path)


def expressible(rows=None):
    """The rows marked ``expressible=yes``."""
    return [r for r in (load_rows() if rows is None else rows) if r["expressible"] == "yes"]


#: Each max-throughput row's ``trtllm-bench --max_num_tokens`` (tokens per iteration per
#: rank), as its command states it in the rows' source (docs/source/blogs/
#: Best_perf_practice_on_DeepSeek-R1_in_TensorRT-LLM.md at 01c4ece9: "H200 max-throughput"
#: 1151; "B200 max-throughput for R1 with FP16 KV cache" 1536 and "... for R1-0528 with FP8
#: KV cache" 2048, both reproduced at b6261862). None of the three configurations enables
#: chunked prefill (MLA chunked context is not supported on Hopper, the same document).
TRTLLM_MAXTPUT_MAX_NUM_TOKENS = {
    "r1-h200-fp8-trtllm-maxtput-c1024": 1151,
    # two earlier versions of the document (session 18): the H200 command with 1127, the
    # B200 ones with the row's 1536
    "r1-h200-fp8-trtllm-maxtput-c1024-doc-v1": 1127,
    "r1-h200-fp8-trtllm-maxtput-c1024-doc-v2": 1127,
    "r1-b200-fp4-trtllm-maxtput-c3072-doc-v1": 1536,
    "r1-b200-fp4-trtllm-maxtput-c3072-doc-v2": 1536,
    "r1-b200-fp4-trtllm-maxtput-c3072": 1536,
    "r1-0528-b200-fp4-fp8kv-trtllm-maxtput-c7168": 2048,
}


#: trtllm-bench's own run of each max-throughput row: ``(--num_requests, --concurrency)`` as
#: the row's document version states them. A row measured by trtllm-bench with a stated
#: request count is scored by that closed loop, :func:`trtllm_bench_run` (lead's decision,
#: session 19; adopted in session 20 once the run priced fast enough for the suite): its
#: steady state is a diagnostic beside it (``benchmarks/bench_serving.py``).
#: Read in NVIDIA/TensorRT-LLM ``docs/source/blogs/Best_perf_practice_on_DeepSeek-R1_in_
#: TensorRT-LLM.md`` at 01c4ece911eb (code-index text 2425892213: H200 5120 @ 1024, B200
#: 49152 @ 3072, R1-0528 114688 @ 7168) and its two earlier stored versions (29438676838
#: 'v1', 1123666494 'v2': the same counts). The min-latency rows (10 @ 1) run MTP, which the
#: closed loop does not price (plain decoding only): not listed.
TRTLLM_BENCH_RUNS = {
    "r1-h200-fp8-trtllm-maxtput-c1024": (5120, 1024),
    "r1-h200-fp8-trtllm-maxtput-c1024-doc-v1": (5120, 1024),
    "r1-h200-fp8-trtllm-maxtput-c1024-doc-v2": (5120, 1024),
    "r1-b200-fp4-trtllm-maxtput-c3072": (49152, 3072),
    "r1-b200-fp4-trtllm-maxtput-c3072-doc-v1": (49152, 3072),
    "r1-b200-fp4-trtllm-maxtput-c3072-doc-v2": (49152, 3072),
    "r1-0528-b200-fp4-fp8kv-trtllm-maxtput-c7168": (114688, 7168),
}


#: The documents' own 'Total Latency (ms)' and 'Average request latency (ms)' of each trtllm-bench
#: run (the same result blocks as the rows' figures: 01c4ece9 text 2425892213, v1 29438676838,
#: v2 1123666494). With Little's law they give the requests in flight on average over the run,
#: ``requests x mean latency / total latency`` (:func:`requests_in_flight`): a check of the
#: closed loop's queueing and drain (a diagnostic in ``benchmarks/bench_serving.py``).
TRTLLM_BENCH_LATENCIES_MS = {
    "r1-h200-fp8-trtllm-maxtput-c1024": (912656.9938, 181540.5739),
    "r1-h200-fp8-trtllm-maxtput-c1024-doc-v1": (985713.3137, 195228.9468),
    "r1-h200-fp8-trtllm-maxtput-c1024-doc-v2": (993548.8470, 197768.0434),
    "r1-b200-fp4-trtllm-maxtput-c3072": (2766684.9197, 172321.7206),
    "r1-b200-fp4-trtllm-maxtput-c3072-doc-v1": (2795511.9559, 174119.3317),
    "r1-b200-fp4-trtllm-maxtput-c3072-doc-v2": (2826700.0758, 176064.1921),
    "r1-0528-b200-fp4-fp8kv-trtllm-maxtput-c7168": (5443839.8140, 332826.9898),
}


def requests_in_flight(requests, mean_latency, duration):
    """Requests in flight on average over a closed-loop run (Little's law): ``requests x
    mean latency / duration``.

    >>> round(requests_in_flight(5120, 181540.5739, 912656.9938), 1)
    1018.4
    """
    return requests * mean_latency / duration


def run_in_flight(run, output_lens):
    """:func:`requests_in_flight` of a :class:`analysis.ClosedLoopRun`: each request's latency
    its time to first token plus ``(out - 1)`` TPOTs."""
    lat = [t + (p or 0.0) * (o - 1) for t, p, o in zip(run.ttfts, run.tpots, output_lens,
                                                      strict=True)]
    return requests_in_flight(run.requests, sum(lat) / len(lat), run.duration)

def trtllm_bench_kwargs(row):
    """``(model, system, closed_loop_run keyword arguments)`` of a row's trtllm-bench run
    (:data:`TRTLLM_BENCH_RUNS`): its stated requests at its concurrency, every prompt and
    output at the row's lengths (the synthetic datasets' ``--input-stdev 0 --output-stdev
    0``), under the row's steady conditions otherwise."""
    n, c = TRTLLM_BENCH_RUNS[row["id"]]
    kw = conditions(row)
    isl, osl = kw.pop("isl"), kw.pop("osl")
    for steady in ("batch", "mode"):
        kw.pop(steady)
    return kw.pop("model"), kw.pop("system"), {
        **kw, "input_lens": [isl] * n, "output_lens": [osl] * n, "concurrency": c}


_RUNS = {}


def trtllm_bench_run(row):
    """The row's trtllm-bench run as :func:`analysis.closed_loop_run` prices it: per-GPU
    output tokens over the run, per-user ``request_tokens_per_s_user`` (trtllm-bench's 'Per
    User Output Throughput'). Identical runs (the same command in several versions of the
    document: 7 rows, 4 distinct runs) are priced once per process: the key is everything
    the run is given (model, system and every keyword, the request lengths in order; a
    TensorRT-LLM release by its modelled code state, :func:`analysis.trtllm_code_state`)."""
    import analysis
    import topologies

    model, system, kw = trtllm_bench_kwargs(row)
    # releases of one modelled code state price the same run (analysis.trtllm_code_state)
    key = (repr(model), system, tuple(sorted(
        (k, tuple(v) if isinstance(v, list) else analysis.trtllm_code_state(v)
         if k == "trtllm_release" else v) for k, v in kw.items())))
    if key not in _RUNS:
        _RUNS[key] = analysis.closed_loop_run(model, topologies.build(system), **kw)
    return _RUNS[key]


#: The source's word on the TensorRT-LLM code each TensorRT-LLM row ran, by the one rule of the
#: NCCL rows (``fidelity_collectives.model``, :func:`fabric.nccl_release_on`; lead's decision,
#: session 26): a release the source states (``"stated"``), else the newest release published
#: on or before the source's date (``"date"``, :func:`analysis.trtllm_release_on`), else none
#: (``"undated"``: the newest modelled, :data:`analysis.TRTLLM_NEWEST`, said in the row's
#: text). ``row id -> (kind, release or ISO date or None, what it is)``.
_DOC_V1 = ("date", "2025-04-10", ("the document's publication: NVIDIA/TensorRT-LLM README, "
           "'Latest News' [04/10] 'TensorRT-LLM DeepSeek R1 performance benchmarking best "
           "practices now published' (its first version, code-index stored text 29438676838)"))
_DOC_V2 = ("date", "2025-04-18", ("the document's version holding the block (code-index stored "
           "text 1123666494): NVIDIA/TensorRT-LLM PR #3693 'doc: Update DeepSeek perf docs' "
           "(review of 2025-04-18) adds a section after this version's H200 max-throughput "
           "block (Total Latency 993548.8470 ms), which the version ends with"))
_B6261862 = ("stated", "0.20.0", ("the document: 'The results are reproduced with TensorRT LLM "
             "commit b6261862419c...', a commit of the release/0.20 branch (TensorRT-LLM's "
             "CI: 'LLM/release-0.20/L0_PostMerge' build 35 of that commit, images of "
             "2025-05-29): 0.20.0, its branch's release"))
TRTLLM_ROW_RELEASES = {
    **{f"r1-b200-fp4-trtllm-bs1-mtp{k}": (
        "date", "2025-05-16", ("tech blog 1's date in NVIDIA/TensorRT-LLM's README tech-blog "
        "list ('[05/16] Pushing Latency Boundaries: Optimizing DeepSeek-R1 Performance on "
        "NVIDIA B200 GPUs'); its table repeats a ladder state 'before GTC 2025'")) for k in range(6)},
    "r1-h200-fp8-trtllm-minlat-mtp3-c1": _DOC_V1,     # the same block in every version
    "r1-b200-fp4-trtllm-minlat-mtp3-c1": _DOC_V2,     # its figure first in version 2
    "r1-b200-fp4-trtllm-minlat-mtp3-c1-doc-v1": _DOC_V1,
    "r1-h200-fp8-trtllm-maxtput-c1024-doc-v1": _DOC_V1,
    "r1-b200-fp4-trtllm-maxtput-c3072-doc-v1": _DOC_V1,
    "r1-h200-fp8-trtllm-maxtput-c1024-doc-v2": _DOC_V2,
    "r1-b200-fp4-trtllm-maxtput-c3072-doc-v2": _DOC_V2,
    "r1-b200-fp4-trtllm-maxtput-c3072": _B6261862,
    "r1-0528-b200-fp4-fp8kv-trtllm-maxtput-c7168": _B6261862,
    "r1-h200-fp8-trtllm-maxtput-c1024": (
        "undated", None, ("the block (--max_num_tokens 1151, the version read at 01c4ece9) "
        "states no release and its version of the document is not dated here")),
}


def trtllm_release_of(row):
    """``(release or None, text)``: the TensorRT-LLM release a TensorRT-LLM row runs with
    (:data:`TRTLLM_ROW_RELEASES`) and how it was chosen, e.g. 'TensorRT-LLM 0.20.0rc2 (tagged
    by 2025-05-16)', as a collective row says its NCCL release."""
    from analysis import TRTLLM_NEWEST, trtllm_release_on

    kind, value, _ = TRTLLM_ROW_RELEASES[row["id"]]
    if kind == "stated":
        return value, f"TensorRT-LLM {value}"
    if kind == "date":
        release = trtllm_release_on(value)
        return release, f"TensorRT-LLM {release} (tagged by {value})"
    return None, f"TensorRT-LLM {TRTLLM_NEWEST} (undated: the newest modelled)"


def _trtllm_maxtput(row, system, model):
    return {"system": system, "model": model, "layout": "tp=1,dp=8",
            "isl": int(row["isl"]), "osl": int(row["osl"]), "batch": int(row["concurrency"]),
            "mode": "aggregated", "definition": "output-per-gpu", "usable_hbm": 1.0,
            "cuda_graphs": True, "engine": "trtllm",
            "max_batched_tokens": TRTLLM_MAXTPUT_MAX_NUM_TOKENS[row["id"]],
            **_release_kwargs(row)}


def _release_kwargs(row):
    """``{"trtllm_release": ...}`` of a TensorRT-LLM row (:func:`trtllm_release_of`), or
    nothing for an undated one (the newest modelled)."""
    release, _ = trtllm_release_of(row)
    return {} if release is None else {"trtllm_release": release}


def _r1_0528_nvfp4_fp8kv():
    """DeepSeek-R1-0528 NVFP4 with its FP8 KV cache: the ``deepseek-r1-nvfp4`` config (R1-0528
    keeps DeepSeek-R1's architecture) with one byte per cached element, as the row's source
    runs it (``kv_cache_dtype: fp8``; the nvidia/DeepSeek-R1-0528-FP4 checkpoint enables FP8
    KV by default)."""
    import dataclasses

    from analysis import model_config

    return dataclasses.replace(model_config("deepseek-r1-nvfp4"),
                               name="deepseek-r1-0528-nvfp4-fp8kv", kv_cache_bytes=1.0)


def acceptance_for(draft_length, mean_accepted):
    """The per-drafted-token acceptance ``a`` whose expected tokens per verification
    cycle, ``(1 - a^(k+1)) / (1 - a)`` (:func:`analysis.expected_accepted_tokens`),
    equals a source's stated mean accepted tokens per step (bisection; the source's
    figure is a condition of its run, read, not fitted to its throughput).

    >>> round(acceptance_for(1, 1.92), 6)
    0.92
    """
    from analysis import expected_accepted_tokens

    if not 1 <= mean_accepted <= draft_length + 1:
        raise ValueError(f"mean accepted {mean_accepted} outside [1, {draft_length + 1}]")
    lo, hi = 0.0, 1.0
    for _ in range(100):
        mid = (lo + hi) / 2
        if expected_accepted_tokens(draft_length, mid) < mean_accepted:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def _trtllm_min_latency(row, system, model, layout, draft_length, acceptance=None, pdl=False,
                        moe_backend="cutlass"):
    """TensorRT-LLM at batch 1: attention TP8 with the routed experts ``etp x ep``
    (``--tp 8 --ep N``: ``etp = 8 / N``), MTP drafts, CUDA graphs, TensorRT-LLM's kernel
    list, its own all-reduce op (blog 1, modules 9 and 13) at its measured time (the
    engine's default on B200 and H200, :func:`analysis.engine_collective` ->
    :func:`analysis.trtllm_all_reduce`, session 36; until then the rows asked the
    ``symmetric-memory`` runtime, the op's class, priced by its kernels' steps: B200 TP8
    3.14 us where TensorRT-LLM's op measures 5.76, H200 2.57 vs 3.90). ``acceptance`` None: the library's default. ``pdl``:
    the run launched its kernels with Programmatic Dependent Launch (``TRTLLM_ENABLE_PDL=1``
    in its command, or PDL enabled in its software state), ``analysis.PDL_HIDDEN_GAP``.
    ``moe_backend``: the run's TensorRT-LLM MoE backend (``moe_backend: TRTLLM`` in its
    options: ``"trtllm"``; else the default CUTLASS), ``analysis.moe_module_time``."""
    kw = {"system": system, "model": model, "layout": layout, "isl": int(row["isl"]),
          "osl": int(row["osl"]), "batch": int(row["concurrency"]), "mode": "aggregated",
          "definition": "output-per-gpu", "usable_hbm": 1.0, "cuda_graphs": True,
          "engine": "trtllm", "draft_length": draft_length,
          "pdl": pdl, "moe_backend": moe_backend, **_release_kwargs(row)}
    if acceptance is not None:
        kw["acceptance"] = acceptance
    return kw


#: Mean accepted tokens per step of TensorRT-LLM tech blog 1's "Autoregressive MTP Layers"
#: table, by MTP depth (the table's "Acceptance Rate" column, the target's token included).
BLOG1_ACCEPTED = {0: 1.0, 1: 1.92, 2: 2.58, 3: 2.82, 4: 2.99, 5: 3.01}


def _blog1(row):
    k = int(row["id"].rsplit("-mtp", 1)[1])
    a = acceptance_for(k, BLOG1_ACCEPTED[k]) if k else None
    # the table's MTP 3 row (253 tok/s/user) is the development ladder's "Introduce EP4TP2
    # for better workload balance" state (253, `--tp 8 --ep 4`): experts TP2 x EP4; the
    # ladder's "Enable PDL" (168 -> 173) comes before it: PDL on
    return _trtllm_min_latency(row, sc.B200_NODE, "deepseek-r1-nvfp4", "tp=8,dp=1,etp=2", k, a,
                               pdl=True)


_EXPRESSIONS = {
    "r1-h200-fp8-trtllm-minlat-mtp3-c1": lambda r: _trtllm_min_latency(
        r, sc.H200_NODE, "deepseek-r1", "tp=8,dp=1,etp=2", 3),
    # `export TRTLLM_ENABLE_PDL=1` in the B200 min-latency command (not in the H200 one)
    "r1-b200-fp4-trtllm-minlat-mtp3-c1": lambda r: _trtllm_min_latency(
        r, sc.B200_NODE, "deepseek-r1-nvfp4", "tp=8,dp=1,etp=4", 3, pdl=True,
        moe_backend="trtllm"),
    **{f"r1-b200-fp4-trtllm-bs1-mtp{k}": _blog1 for k in range(6)},
    "r1-h200-fp8-trtllm-maxtput-c1024": lambda r: _trtllm_maxtput(r, sc.H200_NODE, "deepseek-r1"),
    # the earlier versions of the document (session 18)
    **{f"r1-h200-fp8-trtllm-maxtput-c1024-doc-v{v}": (
        lambda r: _trtllm_maxtput(r, sc.H200_NODE, "deepseek-r1")) for v in (1, 2)},
    **{f"r1-b200-fp4-trtllm-maxtput-c3072-doc-v{v}": (
        lambda r: _trtllm_maxtput(r, sc.B200_NODE, "deepseek-r1-nvfp4")) for v in (1, 2)},
    # `--ep 4` with `export TRTLLM_ENABLE_PDL=1` (experts TP2 x EP4)
    "r1-b200-fp4-trtllm-minlat-mtp3-c1-doc-v1": lambda r: _trtllm_min_latency(
        r, sc.B200_NODE, "deepseek-r1-nvfp4", "tp=8,dp=1,etp=2", 3, pdl=True),
    "r1-b200-fp4-trtllm-maxtput-c3072": lambda r: _trtllm_maxtput(r, sc.B200_NODE,
                                                                   "deepseek-r1-nvfp4"),
    "r1-0528-b200-fp4-fp8kv-trtllm-maxtput-c7168": lambda r: _trtllm_maxtput(
        r, sc.B200_NODE, _r1_0528_nvfp4_fp8kv()),
}


def conditions(row):
    """The ``analysis.serving_point`` keyword arguments that describe a held-out row."""
    if row["expressible"] != "yes":
        raise ValueError(f"{row['id']} is not expressible yet: {row['notes']}")
    if row["id"].startswith("k2-"):
        return sc.conditions(row)
    if row["id"] in _EXPRESSIONS:
        return _EXPRESSIONS[row["id"]](row)
    raise ValueError(f"no expression for held-out row {row['id']}")


def model_point(row):
    """The model's figures for a held-out row as its source measured it: the InferenceX rows
    as its harness measures them (:func:`serving_check.model_point`), the rows trtllm-bench
    measured with a stated request count as that run (:func:`trtllm_bench_run`), both an
    :class:`analysis.ClosedLoopRun`; the others an :class:`analysis.ServingPoint` (the
    steady state; :func:`steady_point` of any row)."""
    if row["id"].startswith("k2-"):
        return sc.model_point(row)
    if row["id"] in TRTLLM_BENCH_RUNS:
        return trtllm_bench_run(row)
    return steady_point(row)


def steady_point(row):
    """The steady state of a non-InferenceX row (:func:`analysis.serving_point` under its
    :func:`conditions`): the score of the rows no closed loop measured, a diagnostic beside
    the trtllm-bench runs."""
    import analysis
    import topologies

    kw = conditions(row)
    fab = topologies.build(kw.pop("system"))
    return analysis.serving_point(kw.pop("model"), fab, **kw)


def user_definition(row):
    """How the row's source defines tokens/s per user (see :data:`USER_DEFINITIONS`)."""
    return next(v for k, v in USER_DEFINITIONS.items() if row["id"].startswith(k))


def model_values(row, point):
    """``(tokens/s per user, tokens/s per GPU)`` of ``point`` in the row's own definitions."""
    if user_definition(row) == "osl/request":
        # a run: trtllm-bench's mean over requests of output tokens / request latency
        run = getattr(point, "request_tokens_per_s_user", None)
        user = run if run is not None else point.osl / point.request_time
    else:
        user = point.tokens_per_s_user
    return user, point.tokens_per_s_gpu


def errors(row, point):
    """``(per-user error, per-GPU error)``: :func:`serving_check.error` on each axis."""
    user, gpu = model_values(row, point)
    return (sc.error(user, float(row["tok_s_per_user"])),
            sc.error(gpu, float(row["tok_s_per_gpu"])))


def geometric_mean_error(pairs):
    """Geometric mean of ``1 + error`` over every axis of every pair, minus 1
    (:func:`fidelity.geometric_mean_error` over both axes).

    >>> round(geometric_mean_error([(0.0, 0.21)]), 3)
    0.1
    """
    return fidelity.geometric_mean_error([e for pair in pairs for e in pair])
