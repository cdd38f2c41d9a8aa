"""The serving check set, and how each row is expressed in the serving model.

The rows and their sources are also listed in docs/sources.md s.8.

``tests/data/serving.csv`` holds published serving points, copied unchanged from
the project's calibration set, each with its source:

* ``k2-*``: SemiAnalysis InferenceX article "b200-nvfp4-vs-h200-int4-kimi-k2-vllm-
  perf-per-dollar" (2026-05-26): Kimi K2.5 with vLLM 0.21.0, no speculative
  decoding, 8192 input and 1024 output tokens (the upper end of InferenceX's uniform draw:
  the model takes its means, :data:`INFERENCEX_RANGE_RATIO`), on one 8x H200 or 8x B200 node
  (TP=8) or 4 B200s per instance (TP=4, NVFP4), over concurrency. Per-GPU
  throughput counts **input + output tokens over all GPUs** (InferenceX).
* ``dsv3-72xh100-ep72``: lmsys blog 2025-05-05 (large-scale expert parallelism,
  vendor): DeepSeek-V3 decode on 9 nodes x 8 H100 (InfiniBand), prefill on other
  nodes (PD disaggregation), DeepEP low-latency dispatch in FP8 and combine in
  BF16, two-batch overlap, 256 sequences per GPU at a KV length of 2000; per-GPU
  throughput counts **output tokens per decode GPU**; the ITL (91.9 ms) is
  derived in the row as 256 / 2785.

**Check, never fit**: every setting below describes the measured deployment
(system, model and its weight format, layout, concurrency, lengths, what the
deployment runs: CUDA graphs, as vLLM and SGLang do for decode by default; for the
vLLM rows, vLLM's kernel list (``engine="vllm"``), every expert split over the
tensor-parallel GPUs (``etp``: vLLM's "TP=N" without expert parallelism) and the
TP all-reduces priced with the kernel vLLM launches for each size (:func:`vllm_all_reduce`:
FlashInfer's fused one-shot or two-shot kernel, vLLM's custom all-reduce, torch symmetric
memory, NCCL); for the
lmsys row SGLang's kernel list (``engine="sglang"``), the DeepEP
low-latency kernel, two-batch overlap (``overlap="two-batch"``), the expert balance EPLB
reaches at that scale (its blog's figure) and NCCL); everything else is the library's
default. The InferenceX rows are measured as its harness measures them (:func:`harness`:
the run's own request list, a closed loop with a drain, per-request mean TPOT, via
:func:`analysis.closed_loop_run`); the lmsys row is a steady decode batch.
No constant is chosen to make a row match.
Memory fit is not what these rows check (the deployments ran): ``usable_hbm=1``
refuses only what cannot fit at all.
"""

import csv
import os

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "data", "serving.csv")

#: The issue's tolerance: within 25% on both axes, in the source's own definition.
TOLERANCE = 0.25

#: 8-GPU HGX nodes: the presets (docs/sources.md s.1): NVSwitch with the GPUs' NVLinks
#: spread over the switch chips (H200: 18 NVLink4 over 4 NVSwitches as 5/4/4/5; B200: 18
#: NVLink5 over 2 NVSwitch chips, 9 each), and NVLink SHARP in the switches (multicast and
#: in-switch reduction, which torch's multimem all-reduce in vLLM needs). Until session 8
#: these were the same boards as spec strings without the in-switch reduction.
H200_NODE = "hgx-h200"
B200_NODE = "hgx-b200"
H100_72 = "rail:servers=9,gpus=8,chip=h100"

# DeepEP low-latency FP8 dispatch: 7168 FP8 values + one FP32 scale per 128 per token
# (deepseek-ai/DeepEP README, low-latency kernels), i.e. 1 + 4/128 bytes per element.
_FP8_DISPATCH = 1 + 4 / 128


#: The lmsys deployment's expert balance: its blog's figure "Effects of Scale and EPLB to
#: Balancedness" (lmsys blog 2025-05-05, public/images/blog/large_scale_ep/eplb-balancedness.png;
#: balancedness = mean over maximum of the GPUs' token counts of a MoE layer, simulated with
#: EPLB) reads about 0.81 at 72 GPUs with EPLB (0.48 at 64 without). A condition of the
#: deployment read off the source's plot (+-0.01), like its batch and KV length.
EPLB_BALANCE_72 = 0.81


def load_rows(path=DATA):
    """The rows as dicts, in file order."""
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


def _runtime(name="nccl"):
    """``{"runtime": name}`` where the collectives model has runtimes, else nothing."""
    import inspect

    import analysis

    return ({"runtime": name} if "runtime" in inspect.signature(analysis.cost).parameters
            else {})


def vllm_all_reduce(fabric, op, nbytes, **kw):
    """The rows' ``collective=``: :func:`analysis.vllm_all_reduce`, the kernel vLLM launches
    for each TP all-reduce's size (FlashInfer's fused one-shot / two-shot kernel, vLLM's custom
    all-reduce, torch symmetric memory, NCCL: the library's tables, docs/sources.md s.8), at
    vLLM's defaults (``fuse_allreduce_rms`` on, as the InferenceX runs set it; torch
    symmetric memory on). A condition of the deployment read from the code it ran."""
    import analysis

    return analysis.vllm_all_reduce(fabric, op, nbytes, **kw)


#: InferenceX draws each request's input and output lengths uniformly from the integers
#: ``[int(L x r), L]`` (SemiAnalysisAI/InferenceX ``utils/bench_serving/benchmark_serving.py``
#: ``sample_random_requests``), ``r`` = 0.8: ``.github/workflows/benchmark-tmpl.yml`` sets
#: ``env: RANDOM_RANGE_RATIO: 0.8`` unconditionally since commit d053ae24e (2026-01-21), still
#: at 2dca60196 (the last commit before the article, 2026-05-31), and the kimik2.5 scripts
#: pass it as ``--random-range-ratio``; the published runs do not restate it. A row's "8192 in / 1024 out" is the upper end; the model takes the
#: mean of each draw (docs/sources.md s.8). A condition of the measurement, like its
#: concurrency.
INFERENCEX_RANGE_RATIO = 0.8


def inferencex_mean_length(length, ratio=INFERENCEX_RANGE_RATIO):
    """Mean of InferenceX's uniform integer draw over ``[int(length x ratio), length]``,
    rounded half up to a whole token (``serving_point`` takes integer lengths)."""
    return int((int(length * ratio) + length + 1) // 2)


#: InferenceX's benchmark run, read in SemiAnalysisAI/InferenceX at 5481fbfc6 (the last commit
#: before the article, 2026-05-26): ``benchmarks/single_node/kimik2.5_{int4_h200,int4_b200,
#: fp4_b200}.sh`` run ``--num-prompts $(( CONC * 10 )) --max-concurrency $CONC`` through
#: ``benchmarks/benchmark_lib.sh`` (``--request-rate inf --ignore-eos``, warmup before the
#: timer, no ``--seed``: ``utils/bench_serving/benchmark_serving.py``'s default 0, which seeds
#: ``np.random`` before it draws the input lengths, then the output lengths). A condition of
#: the measurement, like its concurrency (docs/sources.md s.8).
INFERENCEX_PROMPTS_PER_CONCURRENCY = 10
INFERENCEX_SEED = 0


def inferencex_requests(isl, osl, concurrency, ratio=INFERENCEX_RANGE_RATIO,
                        seed=INFERENCEX_SEED):
    """The request list InferenceX's harness sends: ``10 x concurrency`` requests whose
    input and output lengths are its uniform integer draws, in its order (numpy's legacy
    ``RandomState(seed)`` stream, as ``np.random.seed(seed)`` gives; the prefix draw of size 0
    takes nothing from it). Returns ``(input_lens, output_lens)``.

    >>> ins, outs = inferencex_requests(8192, 1024, 4)
    >>> len(ins), min(ins) >= 6553, max(outs) <= 1024
    (40, True, True)
    """
    import numpy as np

    rng = np.random.RandomState(seed)
    n = INFERENCEX_PROMPTS_PER_CONCURRENCY * concurrency
    ins = rng.randint(int(isl * ratio), isl + 1, size=n).tolist()
    outs = rng.randint(int(osl * ratio), osl + 1, size=n).tolist()
    return ins, outs


def harness(row):
    """How a row was measured, as :func:`analysis.closed_loop_run` keyword arguments: the
    InferenceX rows' request list (:func:`inferencex_requests`), concurrency and vLLM's step
    budget (``vllm serve`` default :data:`analysis.VLLM_MAX_BATCHED_TOKENS`; the NVFP4
    script passes ``--max-num-batched-tokens $((ISL * 2))``); None for the lmsys row (a
    steady decode batch, measured as such)."""
    import analysis

    if row["id"].startswith("dsv3-"):
        return None
    isl, osl, conc = int(row["isl"]), int(row["osl"]), int(row["concurrency"])
    ins, outs = inferencex_requests(isl, osl, conc)
    budget = 2 * isl if "nvfp4" in row["id"] else analysis.VLLM_MAX_BATCHED_TOKENS.value
    return {"input_lens": ins, "output_lens": outs, "concurrency": conc,
            "max_batched_tokens": budget}


def _inferencex(row):
    rid = row["id"]
    system = H200_NODE if "-h200-" in rid else B200_NODE
    nvfp4 = "nvfp4" in rid
    model = "kimi-k2.5-nvfp4" if nvfp4 else "kimi-k2.5-int4"
    # vLLM "TP=N" without expert parallelism splits every expert over the N GPUs
    layout = "tp=4,dp=1,etp=4" if "-tp4-" in rid else "tp=8,dp=1,etp=8"
    return {"system": system, "model": model, "layout": layout,
            "isl": inferencex_mean_length(int(row["isl"])),
            "osl": inferencex_mean_length(int(row["osl"])),
            "batch": int(row["concurrency"]), "mode": "aggregated",
            "usable_hbm": 1.0, "definition": "total-per-gpu", "cuda_graphs": True,
            "engine": "vllm", "collective": vllm_all_reduce}


def _lmsys(row):
    # osl 100 and kv_inflow: the authors' decode benchmark (sglang issue #6017, "Benchmark for
    # decode": bench_one_batch_server --input-len 2000 --output-len 100) retires a request
    # every 100 steps, and each new one's 2000-token KV cache arrives from the prefill nodes
    # over the decode GPUs' NICs (Mooncake, --disaggregation-ib-device: DeepEP's NICs); in
    # disaggregated mode the output length enters through that rate and the decode context:
    # a sequence's cache runs 2000..2099 tokens over its 100 steps, so the mean context is
    # serving's own rule, isl + osl // 2 = 2050 (the row pinned 2000 while its osl was 1)
    return {"system": H100_72, "model": "deepseek-v3", "layout": "tp=1,dp=72", "isl": 2000,
            "osl": 100, "batch": 256 * 72, "mode": "disaggregated",
            "kv_inflow": True,
            "definition": "output-per-decode-gpu", "usable_hbm": 1.0, "micro_batches": 2,
            "overlap": "two-batch", "dispatch_bytes": _FP8_DISPATCH, "combine_bytes": 2.0,
            "ep_kernel": "deepep-low-latency", "cuda_graphs": True, "engine": "sglang",
            "expert_balance": EPLB_BALANCE_72, **_runtime()}


def conditions(row):
    """The serving_point keyword arguments that describe a row's deployment."""
    return _lmsys(row) if row["id"].startswith("dsv3-") else _inferencex(row)


def model_point(row):
    """The model's figures for a row: an :class:`analysis.ClosedLoopRun` of the row's harness
    (:func:`harness`) under its conditions, or for a steady-batch row the
    :class:`analysis.ServingPoint`. Both carry ``tokens_per_s_user``, ``tokens_per_s_gpu``,
    ``tpot`` and ``definition``."""
    import analysis
    import topologies

    kw = conditions(row)
    fab = topologies.build(kw.pop("system"))
    model = kw.pop("model")
    run = harness(row)
    if run is None:
        return analysis.serving_point(model, fab, **kw)
    for steady in ("isl", "osl", "batch", "mode"):     # the run's own lengths and concurrency
        kw.pop(steady)
    return analysis.closed_loop_run(model, fab, **kw, **run)


def error(model, measured):
    """Symmetric relative error ``max(r, 1/r) - 1``, ``r = model / measured``."""
    r = model / measured
    return max(r, 1 / r) - 1
