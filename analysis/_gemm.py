"""Published compute efficiencies of GEMMs, per chip generation, math format and GEMM kind.

The decode model prices a GEMM's FLOPs at the chip's dense tensor peak of the format it
runs in (``fabric.ChipSpec.gemm_flops``) times a compute efficiency. Where a published
measurement of that kind of GEMM, on the shapes the presets run, exists, the efficiency
is computed here from it; elsewhere it stays 1 (the roofline), and :func:`gemm_compute_efficiency`
says so by returning ``None``.

**FP8 on Hopper** (the only published table on DeepSeek shapes found): DeepGEMM's
README performance tables (deepseek-ai/DeepGEMM, README at commit 327ec92, 2025-04-09,
the last revision with the tables): "all shapes potentially used in DeepSeek-V3/R1
inference (including both prefilling and decoding, but without tensor parallelism) on
H800 SXM5 with NVCC 12.8", FP8 x FP8 with fine-grained scaling, one row per shape with the
achieved TFLOPS (:data:`DEEPGEMM_H800_FP8`). The efficiency of a kind of GEMM is read
only off the rows the tensor cores bound: a row counts when its arithmetic intensity,
``2 g M N K / (g (M K + N K) + 2 g M N)`` FLOP per byte (FP8 operands, BF16 output: the
bytes DeepGEMM's own "memory bandwidth" column divides by, to 0.3%), exceeds the H800's
ridge point ``1978.9 TFLOPS / 3.35 TB/s = 591`` FLOP/B; its value is the table's FLOPs
over its time (each compute-bound shape run once) divided by the dense FP8 peak, 1,978.9
TFLOPS (fabric ``h800``):

* ``dense`` (normal GEMMs: attention projections, dense FFNs, shared experts): the five
  M = 4096 rows above the ridge give 0.698;
* ``grouped`` (the masked grouped GEMMs DeepGEMM provides "during the inference decoding
  phase" for routed experts): the four rows above the ridge give 0.530 (the aggregate; the
  decode step takes the table by rows per group instead, :data:`GROUPED_GEMM_EFFICIENCY_BY_ROWS`:
  0.449 at 256 rows, 0.503 at 512, 0.561 at 1024, every row counted, since the 256-row
  rows reach neither roof);
* ``contiguous`` (the contiguous-layout grouped GEMMs, for routed experts "in training
  forward or inference prefilling"): all four rows are above the ridge and give 0.656
  (for prefill; the decode step uses ``dense`` and ``grouped``).

Memory-bound rows are left to the bandwidth side of the roofline: the normal-GEMM rows at
the decode batch sizes (M = 64, 128) give the streaming fraction of dense FP8 decode GEMMs on
Hopper (:data:`DECODE_GEMM_HBM_EFFICIENCY`, below). The H800 figures are taken for every Hopper chip
(H100, H200, H20, H800: the same GH100 tensor cores; an assumption for H20's cut-down
part) and for every FP8 GEMM of those kinds, whatever engine runs it (an assumption:
engines on Hopper call DeepGEMM or kernels of its class for these checkpoints).

**Not found, so 1**: FP4 (NVFP4) on Blackwell on DeepSeek shapes (the nearest published,
vLLM PR #20646's B200 NVFP4 CUTLASS GEMMs on Llama-3.1-8B shapes, 3.0-3.9 PFLOPS at M >= 8192
of the 9 dense: other shapes and an untuned kernel, not used), FP8 on Blackwell, BF16
anywhere, the attention kernel's score math. The routed experts' NVFP4 grouped GEMMs on B200
and GB200 from 16 rows per group take instead a measured time of TensorRT-LLM's whole CUTLASS
MoE module under ``engine="trtllm"`` in a CUDA graph (:data:`TRTLLM_B200_NVFP4_CUTLASS_MOE`,
:func:`grouped_gemm_rate`; session 21).

**Decode weight streaming** (the bandwidth side): dense NVFP4 GEMMs at decode size on
Blackwell stream their weights at a published 0.314 of peak (:data:`DECODE_GEMM_HBM_EFFICIENCY`,
from :data:`HELION_B200_NVFP4_CUTLASS`), dense FP8 GEMMs on Hopper at 0.836 (DeepGEMM's own
memory-bound rows at M = 64 and 128, by the same least-squares rule), not the decode default
0.78; grouped GEMMs keep the default (none published at decode size).

Examples
--------
>>> round(GEMM_COMPUTE_EFFICIENCY[("hopper", "fp8", "dense")].value, 3)
0.698
>>> gemm_compute_efficiency("blackwell", "fp4", "grouped") is None
True
"""

import itertools

from fabric import Parameter, chip_spec
from fabric._chips import check_generation, check_math_format
from fabric._units import check_choice, check_number

from ._gemm_measured import lower_envelope, measured_chip
from ._models import WEIGHT_FORMATS

__all__ = ["DECODE_GEMM_HBM_EFFICIENCY", "DECODE_GEMM_K_FLOOR", "DEEPGEMM_H800_FP8",
           "FLASHINFER_GB200_NVFP4_CUTLASS_M1", "GEMM_COMPUTE_EFFICIENCY", "GEMM_KINDS",
           "GROUPED_GEMM_EFFICIENCY_BY_ROWS", "GROUPED_GEMM_TIME_BY_ROWS",
           "HELION_B200_NVFP4_CUTLASS", "MEASURED_MOE_LOCAL_EXPERTS", "MEASURED_MOE_SHAPE",
           "MOE_BACKENDS", "TRTLLM_B200_NVFP4_CUTLASS_MOE", "TRTLLM_H200_FP8_BLOCK_CUTLASS_MOE",
           "TRTLLM_MOE_MODULE_BY_LAYOUT", "decode_gemm_hbm_efficiency", "decode_gemm_k_floor",
           "gemm_compute_efficiency", "grouped_gemm_efficiency", "grouped_gemm_rate",
           "moe_module_parameters", "moe_module_time"]

#: Kinds of GEMM with their own efficiency: plain GEMMs, the grouped GEMMs of the routed
#: experts in decode (masked layout) and in prefill (contiguous layout).
GEMM_KINDS = ("dense", "grouped", "contiguous")

_DEEPGEMM_SOURCE = ("deepseek-ai/DeepGEMM README performance tables at commit 327ec92 "
                    "(2025-04-09): FP8 GEMMs on DeepSeek-V3/R1 shapes, H800 SXM5, NVCC 12.8")

#: DeepGEMM's published FP8 GEMM measurements on H800 SXM5 (README at commit 327ec92,
#: 2025-04-09): ``kind -> ((groups, M per group, N, K, achieved TFLOPS), ...)``; "dense" is
#: the "Normal GEMMs for dense models" table, "grouped" the "Grouped GEMMs for MoE models
#: (masked layout)" table (the decoding one), "contiguous" the "Grouped GEMMs for MoE models
#: (contiguous layout)" table (training forward and prefill). Source data, never fitted.
DEEPGEMM_H800_FP8 = {
    "dense": (
        (1, 64, 2112, 7168, 206), (1, 64, 24576, 1536, 289), (1, 64, 32768, 512, 219),
        (1, 64, 7168, 16384, 336), (1, 64, 4096, 7168, 287), (1, 64, 7168, 2048, 295),
        (1, 128, 2112, 7168, 352), (1, 128, 24576, 1536, 535), (1, 128, 32768, 512, 358),
        (1, 128, 7168, 16384, 645), (1, 128, 4096, 7168, 533), (1, 128, 7168, 2048, 510),
        (1, 4096, 2112, 7168, 1127), (1, 4096, 24576, 1536, 1212),
        (1, 4096, 32768, 512, 775), (1, 4096, 7168, 16384, 1520),
        (1, 4096, 4096, 7168, 1410), (1, 4096, 7168, 2048, 1168),
    ),
    "grouped": (
        (1, 1024, 4096, 7168, 1233), (1, 1024, 7168, 2048, 925),
        (2, 512, 4096, 7168, 1040), (2, 512, 7168, 2048, 916),
        (4, 256, 4096, 7168, 932), (4, 256, 7168, 2048, 815),
    ),
    "contiguous": (
        (4, 8192, 4096, 7168, 1346), (4, 8192, 7168, 2048, 1214),
        (8, 4096, 4096, 7168, 1346), (8, 4096, 7168, 2048, 1214),
    ),
}


def _intensity(g, m, n, k):
    """FLOP per byte of a grouped FP8 GEMM: FP8 A and B read once, BF16 D written."""
    return 2 * g * m * n * k / (g * (m * k + n * k) + 2 * g * m * n)


def _table_efficiency(rows, chip):
    """The rows' FLOPs over their time, over the chip's dense FP8 peak, counting only the
    rows whose arithmetic intensity exceeds the chip's ridge point (compute-bound)."""
    peak = chip.peak("fp8")
    ridge = peak / chip.hbm_bandwidth
    flops = time = 0.0
    for g, m, n, k, tflops in rows:
        if _intensity(g, m, n, k) > ridge:
            f = 2 * g * m * n * k
            flops += f
            time += f / (tflops * 1e12)
    return flops / time / peak


def _deepgemm(kind):
    h800 = chip_spec("h800")
    rows = DEEPGEMM_H800_FP8[kind]
    used = sum(_intensity(*r[:4]) > h800.peak("fp8") / h800.hbm_bandwidth for r in rows)
    return Parameter(
        f"gemm.compute_efficiency.hopper.fp8.{kind}", _table_efficiency(rows, h800), "",
        f"{_DEEPGEMM_SOURCE}: achieved over dense FP8 peak (1,978.9 TFLOPS) of the {used} "
        f"compute-bound rows (intensity above the 591 FLOP/B ridge) of its "
        f"{ {'dense': 'normal', 'grouped': 'masked grouped'}.get(kind, kind + ' grouped')} "
        f"GEMM table, FLOPs over time; "
        f"taken for every Hopper chip (assumption)")


#: Published compute efficiencies by ``(generation, math format, kind)``; combinations
#: absent have none published on the presets' shapes (1 is used: the roofline).
GEMM_COMPUTE_EFFICIENCY = {("hopper", "fp8", kind): _deepgemm(kind) for kind in GEMM_KINDS}


def _check_format(generation, math):
    """Refuse a ``generation`` or math format the GEMM tables do not know, by name (a
    misspelt one is an error, not "none published")."""
    check_generation(generation)
    check_math_format(math)


def gemm_compute_efficiency(generation, math, kind):
    """The published compute efficiency (a :class:`~fabric.Parameter`) of a ``kind`` GEMM
    (``"dense"`` or ``"grouped"``) in math format ``math`` on a chip of ``generation``, or
    ``None`` where none is published (the decode model then uses 1).

    Parameters
    ----------
    generation : str or None
        The chip's GPU generation (``"hopper"``, ``"blackwell"``); None: no figure.
    math : str
        The GEMM's math format (``"bf16"``, ``"fp8"``, ``"fp4"``, ...).
    kind : str
        ``"dense"`` or ``"grouped"``.

    Examples
    --------
    >>> gemm_compute_efficiency("hopper", "fp8", "grouped").name
    'gemm.compute_efficiency.hopper.fp8.grouped'
    >>> gemm_compute_efficiency("hopper", "bf16", "dense") is None
    True

    A misspelt generation or format is an error, not "none published":

    >>> gemm_compute_efficiency("hoper", "fp8", "dense")
    Traceback (most recent call last):
    ...
    fabric.SpecError: generation must be one of hopper, blackwell or None, got 'hoper'
    """
    _check_format(generation, math)
    check_choice(kind, "GEMM kind", GEMM_KINDS)
    return GEMM_COMPUTE_EFFICIENCY.get((generation, math, kind))


def _grouped_by_rows():
    """DeepGEMM's masked grouped table by rows per group: at each ``M per group`` of the table,
    the FLOP-weighted efficiency of its rows at that M (their FLOPs over the sum of their
    times, over the H800's dense FP8 peak), as Parameters ``((M, Parameter), ...)`` by M."""
    h800 = chip_spec("h800")
    by_m = {}
    for g, m, n, k, tflops in DEEPGEMM_H800_FP8["grouped"]:
        f = 2 * g * m * n * k
        flops, time = by_m.get(m, (0.0, 0.0))
        by_m[m] = (flops + f, time + f / (tflops * 1e12))
    out = []
    for m in sorted(by_m):
        flops, time = by_m[m]
        out.append((m, Parameter(
            f"gemm.compute_efficiency.hopper.fp8.grouped.m{m}", flops / time / h800.peak("fp8"),
            "", f"{_DEEPGEMM_SOURCE}: masked grouped GEMM table (the decoding kernel), its rows "
            f"at {m} rows per group (N x K = 4096 x 7168 and 7168 x 2048): FLOPs over their "
            f"summed time over dense FP8 peak (1,978.9 TFLOPS), every row counted (at 256 rows "
            f"neither roof is reached: 0.62 of HBM, 0.41-0.47 of peak); linear in rows per "
            f"group between the table's, clamped outside (below 256 rows the 256-row figure: "
            f"an assumption, optimistic); taken for every Hopper chip (assumption)")))
    return tuple(out)


#: Compute efficiency of the decode step's grouped (routed-expert) GEMMs by rows per group
#: ``M`` (token-expert pairs per active expert), ``(generation, math) -> ((M, Parameter),
#: ...)``: DeepGEMM's masked table on H800 (256, 512 and 1024 rows per group: 0.449, 0.503,
#: 0.561), every row counted (the 256-row ones reach neither roof, so the ridge rule of
#: :data:`GEMM_COMPUTE_EFFICIENCY` would drop the slowest shape the decode kernel runs).
#: :func:`grouped_gemm_efficiency` interpolates in ``M``.
GROUPED_GEMM_EFFICIENCY_BY_ROWS = {("hopper", "fp8"): _grouped_by_rows()}


def grouped_gemm_efficiency(generation, math, rows):
    """Compute efficiency of a grouped GEMM of ``rows`` rows per group (tokens per expert) in
    math format ``math`` on a chip of ``generation``: linear in ``rows`` between the rows of
    :data:`GROUPED_GEMM_EFFICIENCY_BY_ROWS`, the end figures outside them; ``None`` where
    none is published. Time per group ``~ rows / efficiency`` still grows with ``rows``.

    Parameters
    ----------
    generation, math : str
        As for :func:`gemm_compute_efficiency`.
    rows : float
        Rows per group (tokens per expert), > 0.

    Returns
    -------
    float or None
        A fraction of the format's peak FLOP/s.

    Examples
    --------
    >>> [round(grouped_gemm_efficiency("hopper", "fp8", m), 3) for m in (64, 256, 384, 1024, 4096)]
    [0.449, 0.449, 0.476, 0.561, 0.561]
    >>> grouped_gemm_efficiency("blackwell", "fp4", 256) is None
    True
    """
    _check_format(generation, math)
    rows = check_number("rows", rows, 0, " rows per group")     # an average: need not be whole
    table = GROUPED_GEMM_EFFICIENCY_BY_ROWS.get((generation, math))
    if table is None:
        return None
    return _interpolate([(m, p.value) for m, p in table], rows)


def _interpolate(pts, x):
    """Linear in ``x`` between the points ``((x, y), ...)`` (sorted by x), the end values
    outside them."""
    if x <= pts[0][0]:
        return pts[0][1]
    for (m0, e0), (m1, e1) in itertools.pairwise(pts):
        if x <= m1:
            return e0 + (e1 - e0) * (x - m0) / (m1 - m0)
    return pts[-1][1]


#: TensorRT-LLM's own NVFP4 MoE module on B200 with its CUTLASS backend (the default MoE
#: backend of the PyTorch flow through 2025), on DeepSeek-V3/R1 shapes, as aiconfigurator
#: measured it: ai-dynamo/aiconfigurator (snapshot 095f58a5), ``aic-core/src/
#: aiconfigurator_core/systems/data/b200_sxm/moe/trtllm/1.2.0rc5/moe_perf.parquet`` (added in
#: 217a5739b, 2025-12-22, "add b200 trtllm 1.2.0rc5 data"): framework TRTLLM 1.2.0rc5, device
#: "NVIDIA B200", kernel_source ``moe_torch_flow_cutlass``, moe_dtype nvfp4, hidden 7168,
#: inter 2048, top-8, 256 experts, moe_tp 1, moe_ep 8 (one GPU holding its 32 local experts),
#: distribution balanced. What is timed (the same in every collector version that can have
#: written these rows: collector/trtllm/collect_moe.py at 8f277a2f6, 2025-12-12, and
#: collect_moe_v3.py at 923caba90 and 86911fab0, which names the CUTLASS rows
#: ``moe_torch_flow_cutlass``): ``create_moe(..., moe_backend="cutlass")``, then
#: ``moe.forward`` of ``num_tokens`` BF16 tokens with their router logits (routing, FP4
#: activation quantization, permute, the two grouped GEMMs, finalize) under a CUDA graph, 3
#: warm-ups and 6 timed runs, the mean. ``num_tokens`` is what enters one rank's MoE (under
#: attention data parallelism every rank's tokens). ``(num_tokens, milliseconds)`` from 512
#: tokens (16 rows per local expert); below, a layer's time is its weight read and launches,
#: not a rate to carry. Source data, never fitted to a row of the check or held-out sets.
TRTLLM_B200_NVFP4_CUTLASS_MOE = (
    (512, 0.3001919984817505), (768, 0.33906133969624835), (1024, 0.3104106585184733),
    (1536, 0.32977066437403363), (2048, 0.3336160182952881), (3072, 0.3571840127309163),
    (4096, 0.3943733374277751), (6144, 0.6459253231684366), (8192, 0.6581973234812418),
    (12288, 0.9178240299224854), (16384, 1.1814506848653157))

#: The same module on one H200 with FP8 block-scaled experts (DeepSeek-R1's FP8 checkpoint), as
#: aiconfigurator measured it: ``aic-core/src/aiconfigurator_core/systems/data/h200_sxm/moe/
#: trtllm/1.2.0rc5/moe_perf.parquet`` (the data added in 13669a172, 2025-12-22, "delete 0.20.0
#: database and add new data from 1.2.0rc5", collected by collector/trtllm/collect_moe.py at
#: 8f277a2f6: ``moe_backend="cutlass"``, its kernel_source then named ``moe_torch_flow``),
#: device "NVIDIA H200", moe_dtype fp8_block, the same shape, EP8 and balanced routing, and the
#: same timing. ``(num_tokens, milliseconds)`` from 512 tokens.
TRTLLM_H200_FP8_BLOCK_CUTLASS_MOE = (
    (512, 0.4185119867324829), (768, 0.4456533193588257), (1024, 0.4737279812494914),
    (1536, 0.522325317064921), (2048, 0.568613330523173), (3072, 0.713818629582723),
    (4096, 0.7936480045318604), (6144, 1.221728006998698), (8192, 1.404080073038737),
    (12288, 2.064730644226074), (16384, 2.7250452041625977), (20480, 3.3902079264322915),
    (32768, 5.387125651041667), (65536, 10.985098520914713))

#: Local experts a chip holds in the measured MoE module tables (256 experts over EP8): the
#: step takes a table only where a chip holds at least as many (review S21-R4, lead's decision:
#: with fewer, e.g. EP72's 3.6, the module's fixed part, its kernels' launches and floors inside
#: the measured time, would shrink with the FLOPs carried as a rate).
MEASURED_MOE_LOCAL_EXPERTS = 32

#: A DeepSeek-V3 expert's GEMM FLOPs per token-expert pair (gate and up 7168 x 2 x 2048, down
#: 2048 x 7168; two FLOPs a multiply-add).
_DSV3_PAIR_FLOPS = 2 * 3 * 7168 * 2048


_CUTLASS_MOE_SOURCES = {
    "b200": ("fp4", "NVFP4, B200", "b200_sxm/moe/trtllm/1.2.0rc5/moe_perf.parquet (217a5739b)"),
    "h200": ("fp8", "FP8 block-scaled, H200",
             "h200_sxm/moe/trtllm/1.2.0rc5/moe_perf.parquet (13669a172)")}


def _cutlass_moe_times(table=TRTLLM_B200_NVFP4_CUTLASS_MOE, chip="b200"):
    """A measured MoE module table (:data:`TRTLLM_B200_NVFP4_CUTLASS_MOE`,
    :data:`TRTLLM_H200_FP8_BLOCK_CUTLASS_MOE`) by rows per local expert (``tokens x 8 / 256``),
    each time no longer than any larger measurement's (the lower envelope: the B200 table's
    768-token time, above its 1024-token one, is taken at the latter's), as Parameters
    ``((rows, Parameter), ...)``: seconds for the 32 local experts of uniform routing."""
    fmt, what, path = _CUTLASS_MOE_SOURCES[chip]
    out, floor = [], float("inf")
    for tokens, ms in reversed(table):
        floor = min(floor, ms)
        rows = tokens * 8 // 256
        out.append((rows, Parameter(
            f"gemm.grouped_time.{chip}.{fmt}.m{rows}", floor * 1e-3, "s",
            f"ai-dynamo/aiconfigurator {path}: TensorRT-LLM 1.2.0rc5 MoE, CUTLASS backend, "
            f"{what}, DeepSeek "
            f"shape (H 7168, I 2048, 256 experts, top-8, EP8: 32 local), balanced routing, "
            f"{tokens} tokens = {rows} rows per local expert: {ms:.4f} ms"
            + (f", taken at {floor:.4f} ms (a larger batch's time, the lower envelope)"
               if floor < ms else "")
            + "; the whole module (routing, quantization, finalize included); as a rate: the "
            "32 local experts' GEMM FLOPs over this time, linear in time between the table's "
            "rows, the last rate above, none below 16 rows; for the rows' mid-2025 CUTLASS MoE "
            "an optimistic figure (the backend's later releases are faster: 1.3.0rc10, 1.3.0rc20 "
            "in the same repository); taken for "
            + ("B200 and GB200 (the same GPU)" if chip == "b200" else "H200")
            + f" and every {fmt.upper()} grouped GEMM TensorRT-LLM runs on them in a CUDA graph "
            "where a chip holds at least the table's 32 local experts (EP8 of 256; fewer keep "
            "the step's pricing), whatever its shape (assumption); the module's own kernels "
            "are charged nothing beyond it (analysis.TRTLLM_MOE_MODULE_KERNELS)")))
    return tuple(reversed(out))


#: Measured time of the decode step's grouped (routed-expert) GEMMs by rows per group where a
#: published measurement of the whole MoE kernel on the chip gives it: ``(chip name, math) ->
#: ((rows, Parameter seconds), ...)``, each row's time that of 32 groups (the table's local
#: experts); :func:`grouped_gemm_rate` turns it into FLOP/s. Chips are named: a B300 or GB300
#: (the same generation, a faster part: aiconfigurator's own B300 runs of the kernel take 0.6-0.8
#: of the B200's time) keeps the step's pricing without a published figure.
GROUPED_GEMM_TIME_BY_ROWS = {
    **{(chip, "fp4"): _cutlass_moe_times() for chip in ("b200", "gb200")},
    ("h200", "fp8"): _cutlass_moe_times(TRTLLM_H200_FP8_BLOCK_CUTLASS_MOE, "h200")}


def grouped_gemm_rate(chip, math, rows):
    """Achieved FLOP/s of the routed experts' grouped GEMMs at ``rows`` rows per group in math
    format ``math`` on chip ``chip`` (its name) from :data:`GROUPED_GEMM_TIME_BY_ROWS`: the
    DeepSeek-shaped experts' FLOPs of 32 groups of ``rows`` rows over the time of 32 such
    groups, that time linear in ``rows`` between the table's rows (never less at more rows),
    the last row's rate above; ``None`` below the table's first row or where none is published.

    Parameters
    ----------
    chip : str or fabric.ChipSpec
        The chip (``"b200"``, ``"h200"`` ...; :func:`fabric.chip_spec` reads it).
    math : str
        The math format.
    rows : float
        Rows per group (tokens per expert).

    Returns
    -------
    float or None
        FLOP/s.

    Examples
    --------
    >>> [round(grouped_gemm_rate("b200", "fp4", m) / 1e12, 1) for m in (16, 24, 96, 512, 4096)]
    [150.2, 217.9, 757.5, 1221.5, 1221.5]
    >>> grouped_gemm_rate("b200", "fp4", 15.9) is None
    True
    >>> grouped_gemm_rate("b300", "fp4", 96) is None, grouped_gemm_rate("b200", "fp8", 96) is None
    (True, True)
    """
    check_math_format(math)
    rows = check_number("rows", rows, 0, " rows per group")     # an average: need not be whole
    chip = measured_chip(chip)         # a ChipSpec or a misspelt name was 'none published'
    table = GROUPED_GEMM_TIME_BY_ROWS.get((chip, math))
    if table is None or rows < table[0][0]:
        return None
    last, t_last = table[-1][0], table[-1][1].value
    if rows >= last:
        return 32 * last * _DSV3_PAIR_FLOPS / t_last
    return 32 * rows * _DSV3_PAIR_FLOPS / _interpolate([(m, p.value) for m, p in table], rows)


#: TensorRT-LLM's MoE module on one GPU at decode token counts, by the experts' layout over
#: eight GPUs, as aiconfigurator measured it: ``{(chip, math, backend): {(moe_tp, moe_ep):
#: ((num_tokens, milliseconds), ...)}}``, every measured count below the rate tables' 512
#: tokens, DeepSeek's expert shape (:data:`MEASURED_MOE_SHAPE`), distribution balanced (the
#: collector's ``balanced_logits``: below 32 tokens token ``i``'s ``j``-th expert is ``(32 i /
#: tokens + 32 j) mod 256``, so one token puts one expert on each of 8 ranks, 2 on each of 4),
#: one GPU holding rank 0's ``256 / moe_ep`` experts at ``1 / moe_tp`` of their width. Sources:
#: ai-dynamo/aiconfigurator (snapshot 095f58a5) ``aic-core/src/aiconfigurator_core/systems/
#: data/{b200_sxm,h200_sxm}/moe/trtllm/1.2.0rc5/moe_perf.parquet`` (217a5739b, 13669a172),
#: TensorRT-LLM 1.2.0rc5, collector/trtllm/collect_moe.py at 8f277a2f6 (``create_moe`` with
#: ``reduce_results=False``, ``moe.forward`` of ``num_tokens`` BF16 tokens and their router
#: logits under a CUDA graph, 3 warm-ups and 6 timed runs, the mean): ``("b200", "fp4",
#: "trtllm")`` kernel_source
#: ``moe_torch_flow_min_latency`` (the collector's comment: "trtllm gen"; ``moe_backend=
#: "trtllm"``, NVFP4, DeepSeek's grouped routing ``DeepseekV3Gate(n_group 8, topk_group 4)``,
#: ``do_finalize=False``: the finalize left to the MoE all-reduce after it); ``("b200", "bf16",
#: "cutlass")`` kernel_source ``moe_torch_flow_cutlass``, moe_dtype bfloat16 (the NVFP4
#: checkpoint's BF16 MTP layers); ``("h200", "fp8", "cutlass")`` kernel_source ``moe_torch_flow``
#: (CUTLASS, moe_dtype fp8_block: DeepSeek-R1's FP8 block-scaled checkpoint). TensorRT-LLM's
#: 2025 decoder layer takes the CUTLASS min-latency branch only for NVFP4 experts
#: (``min_latency_mode``: at most 128 tokens, the fused MoE all-reduce and ``is_nvfp4``;
#: ``DeepseekV3DecoderLayer.forward``, code-index text 1539226111), so BF16 and FP8 experts ran
#: the general path 1.2.0rc5 times. ``num_tokens``: what enters the rank's MoE (attention TP: the
#: group's tokens; attention DP with the allgather: every rank's). Source data, never fitted
#: to a row of the check or held-out sets. NOT taken: the same file's B200 NVFP4 CUTLASS rows
#: (``moe_torch_flow_cutlass``, e.g. moe_tp 2 x moe_ep 4: 68.5 us at 1 token, 98.9 at 4).
#: 1.2.0rc5's CUTLASS MoE has no min-latency branch (its strides function throws "Min latency
#: mode is no longer supported"), which TensorRT-LLM's 2025 CUTLASS runs at decode token counts
#: (:data:`analysis.TRTLLM_MIN_LATENCY_TOKENS`) with fewer kernels; tech blog 1's ladder
#: (CUTLASS EP4TP2 253 -> TRTLLM backend EP2TP4 299 tok/s/user at MTP 3, 1.72 ms a cycle)
#: puts that 2025 module about 30 us a layer faster than 1.2.0rc5's at 4 tokens (59.5 us
#: between these two tables' modules): a later, slower kernel, not the rows'.
TRTLLM_MOE_MODULE_BY_LAYOUT = {
    ("b200", "fp4", "trtllm"): {
        (1, 8): ((1, 0.041952), (2, 0.044736), (4, 0.0523573), (8, 0.063984), (16, 0.0878667), (32, 0.144251), (48, 0.156896), (64, 0.151061), (80, 0.158725), (96, 0.169349), (128, 0.179189), (160, 0.191893), (192, 0.205616), (256, 0.202203), (320, 0.221072), (384, 0.238336)),
        (2, 4): ((1, 0.0256053), (2, 0.029776), (4, 0.044944), (8, 0.0603893), (16, 0.085936), (32, 0.141013), (48, 0.14864), (64, 0.152949), (80, 0.159792), (96, 0.166939), (128, 0.159792), (160, 0.168805), (192, 0.177371), (256, 0.177168), (320, 0.182939), (384, 0.189141)),
        (4, 2): ((1, 0.0230667), (2, 0.0253813), (4, 0.0393867), (8, 0.0554187), (16, 0.086368), (32, 0.138277), (48, 0.14248), (64, 0.14456), (80, 0.149984), (96, 0.153003), (128, 0.154037), (160, 0.161915), (192, 0.167296), (256, 0.164901), (320, 0.170741), (384, 0.176976)),
        (8, 1): ((1, 0.0218293), (2, 0.0231413), (4, 0.0254133), (8, 0.037312), (16, 0.059936), (32, 0.0968427), (48, 0.100965), (64, 0.103451), (80, 0.107232), (96, 0.10904), (128, 0.111035), (160, 0.115387), (192, 0.118171), (256, 0.120219), (320, 0.124027), (384, 0.12704)),
    },
    ("b200", "bf16", "cutlass"): {
        (1, 8): ((1, 0.051904), (2, 0.0726827), (4, 0.099232), (8, 0.149739), (16, 0.249467), (32, 0.441504), (48, 0.443797), (64, 0.441968), (80, 0.450336), (96, 0.447691), (128, 0.448549), (160, 0.449381), (192, 0.452437), (256, 0.458821), (320, 0.464784), (384, 0.464581)),
        (2, 4): ((1, 0.0502987), (2, 0.0681707), (4, 0.0932587), (8, 0.150395), (16, 0.245275), (32, 0.440779), (48, 0.443488), (64, 0.445237), (80, 0.445536), (96, 0.445749), (128, 0.450811), (160, 0.451339), (192, 0.452976), (256, 0.458501), (320, 0.462752), (384, 0.466987)),
        (4, 2): ((1, 0.0538827), (2, 0.0682613), (4, 0.094352), (8, 0.15184), (16, 0.246789), (32, 0.444485), (48, 0.445632), (64, 0.445925), (80, 0.446747), (96, 0.4504), (128, 0.451941), (160, 0.459547), (192, 0.462928), (256, 0.468283), (320, 0.47888), (384, 0.481936)),
        (8, 1): ((1, 0.0582827), (2, 0.071264), (4, 0.0992213), (8, 0.158741), (16, 0.257323), (32, 0.461552), (48, 0.459557), (64, 0.463755), (80, 0.474192), (96, 0.474331), (128, 0.481477), (160, 0.488053), (192, 0.492741), (256, 0.499109), (320, 0.509115), (384, 0.519029)),
    },
    ("h200", "fp8", "cutlass"): {
        (1, 8): ((1, 0.0538667), (2, 0.064576), (4, 0.0872427), (8, 0.131168), (16, 0.225067), (32, 0.373483), (48, 0.376619), (64, 0.375637), (80, 0.377845), (96, 0.380357), (128, 0.381824), (160, 0.385136), (192, 0.389211), (256, 0.391403), (320, 0.401952), (384, 0.406816)),
        (2, 4): ((1, 0.0630133), (2, 0.0714133), (4, 0.0933707), (8, 0.143355), (16, 0.216171), (32, 0.380853), (48, 0.382027), (64, 0.383952), (80, 0.388069), (96, 0.391029), (128, 0.393067), (160, 0.397536), (192, 0.401963), (256, 0.411952), (320, 0.425467), (384, 0.43192)),
        (4, 2): ((1, 0.0845707), (2, 0.092048), (4, 0.111077), (8, 0.163205), (16, 0.246539), (32, 0.419445), (48, 0.421621), (64, 0.427205), (80, 0.430645), (96, 0.434139), (128, 0.442416), (160, 0.450293), (192, 0.457397), (256, 0.470907), (320, 0.490016), (384, 0.503099)),
        (8, 1): ((1, 0.127227), (2, 0.136773), (4, 0.15504), (8, 0.214443), (16, 0.310293), (32, 0.507381), (48, 0.515541), (64, 0.527851), (80, 0.534907), (96, 0.537632), (128, 0.550091), (160, 0.568725), (192, 0.584763), (256, 0.6072), (320, 0.653835), (384, 0.688731)),
    },
}

#: TensorRT-LLM's MoE backends the module tables hold (``decode_step(moe_backend=...)``): its
#: CUTLASS backend (the PyTorch flow's default) and its TRTLLM backend (trtllm-gen kernels,
#: Blackwell).
MOE_BACKENDS = ("cutlass", "trtllm")

#: The expert shape :data:`TRTLLM_MOE_MODULE_BY_LAYOUT` was measured at: ``(hidden, expert
#: width, routed experts, experts per token)``, DeepSeek-V3/R1's.
MEASURED_MOE_SHAPE = (7168, 2048, 256, 8)

#: Each chip's key into :data:`TRTLLM_MOE_MODULE_BY_LAYOUT` (GB200: the B200's GPU).
_MOE_MODULE_CHIPS = {"b200": "b200", "gb200": "b200", "h200": "h200"}

_MODULE_SOURCES = {
    ("b200", "fp4", "trtllm"): ("b200_sxm", "217a5739b",
                                "TRTLLM backend (trtllm-gen, min-latency mode), NVFP4"),
    ("b200", "bf16", "cutlass"): ("b200_sxm", "217a5739b", "CUTLASS backend, BF16"),
    ("h200", "fp8", "cutlass"): ("h200_sxm", "13669a172", "CUTLASS backend, FP8 block-scaled"),
}


_MOE_MODULE_ENVELOPES = {(key, lay): lower_envelope(pts)
                         for key, table in TRTLLM_MOE_MODULE_BY_LAYOUT.items()
                         for lay, pts in table.items()}


def _module_key(chip, math, backend, shape, etp, ep, tokens):
    """The table key and envelope :func:`moe_module_time` reads, or None."""
    check_choice(backend, "moe_backend", MOE_BACKENDS)
    check_math_format(math)
    check_number("tokens", tokens)
    chip = measured_chip(chip)          # a misspelt name was 'none measured', silently
    key = (_MOE_MODULE_CHIPS.get(chip), math, backend)
    env = _MOE_MODULE_ENVELOPES.get((key, (etp, ep)))
    if env is None or tuple(shape) != MEASURED_MOE_SHAPE or not env[0][0] <= tokens <= env[-1][0]:
        return None
    return key, env


def moe_module_time(chip, math, shape, etp, ep, tokens, backend="cutlass"):
    """Seconds of TensorRT-LLM's MoE module (``backend``: :data:`MOE_BACKENDS`) on one GPU of
    ``chip`` (or its name) for ``tokens`` tokens entering the rank's MoE, experts in math format
    ``math`` of ``shape`` ``(hidden, expert width, routed experts, experts per token)``, laid
    out ``etp`` x ``ep`` (expert tensor x expert parallel), from
    :data:`TRTLLM_MOE_MODULE_BY_LAYOUT`: the lower envelope, linear in ``tokens`` between the
    measured counts; None where nothing was measured (another chip, format, backend, shape or
    layout, ``tokens`` outside 1-384).

    Parameters
    ----------
    chip : str or fabric.ChipSpec
        The chip or its name (``"b200"``, ``"h200"``, ``"gb200"``; a chip of the user's own
        making by its name: None, nothing measured).
    math : str
        The experts' math format.
    shape : tuple of int
        ``(hidden, expert width, routed experts, experts per token)``.
    etp, ep : int
        Expert tensor- and expert-parallel ranks.
    tokens : float
        Tokens entering the rank's MoE.
    backend : str
        ``"cutlass"`` or ``"trtllm"`` (:data:`MOE_BACKENDS`).

    Returns
    -------
    float or None
        Seconds.

    Examples
    --------
    >>> ds = (7168, 2048, 256, 8)
    >>> round(moe_module_time("gb200", "fp4", ds, 4, 2, 4, backend="trtllm") * 1e6, 1)
    39.4
    >>> round(moe_module_time("h200", "fp8", ds, 2, 4, 3) * 1e6, 1)   # between 2 and 4
    82.4
    >>> [moe_module_time(*a) for a in (("b200", "fp4", ds, 2, 4, 1),   # CUTLASS: not taken
    ...                                ("h200", "fp8", ds, 1, 72, 1),
    ...                                ("h200", "fp8", ds, 2, 4, 4, "trtllm"))]
    [None, None, None]
    """
    found = _module_key(chip, math, backend, shape, etp, ep, tokens)
    return None if found is None else _interpolate(found[1], tokens)


def moe_module_parameters(chip, math, shape, etp, ep, tokens, backend="cutlass"):
    """The measurements :func:`moe_module_time` read for these arguments, as Parameters (the
    two measured counts around ``tokens``, or the one at it); ``()`` where it reads none.

    Parameters
    ----------
    chip, math, shape, etp, ep, tokens, backend
        As for :func:`moe_module_time`.

    Returns
    -------
    tuple of fabric.Parameter

    Examples
    --------
    >>> [p.name for p in moe_module_parameters("h200", "fp8", (7168, 2048, 256, 8), 2, 4, 3)]
    ['gemm.moe_module_time.h200.fp8.cutlass.etp2.ep4.t2', 'gemm.moe_module_time.h200.fp8.cutlass.etp2.ep4.t4']
    """
    found = _module_key(chip, math, backend, shape, etp, ep, tokens)
    if found is None:
        return ()
    key, env = found
    raw = dict(TRTLLM_MOE_MODULE_BY_LAYOUT[key][(etp, ep)])
    xs = [x for x, _ in env]
    used = [x for x in xs if x == tokens] or [max(x for x in xs if x < tokens),
                                              min(x for x in xs if x > tokens)]
    system, commit, what = _MODULE_SOURCES[key]
    out = []
    for x in used:
        t, ms = dict(env)[x], raw[x]
        out.append(Parameter(
            f"gemm.moe_module_time.{'.'.join(key)}.etp{etp}.ep{ep}.t{x}", t, "s",
            f"ai-dynamo/aiconfigurator {system}/moe/trtllm/1.2.0rc5/moe_perf.parquet "
            f"({commit}): TensorRT-LLM 1.2.0rc5 MoE module, {what}, DeepSeek shape (H 7168, "
            f"I 2048, 256 experts, top-8), moe_tp {etp}, moe_ep {ep}, balanced routing, {x} "
            f"tokens: {ms:.6g} ms"
            + (f", taken at {t * 1e3:.6g} ms (a larger count's time, the lower envelope)"
               if t < ms * 1e-3 else "")
            + "; the whole module (routing, activation quantization, expert maps, the two "
            "grouped GEMMs and their activation, the finalize unless left to the all-reduce) "
            "under a CUDA graph; linear in tokens between the measured counts; taken under "
            "engine='trtllm' in a CUDA graph where each rank's MoE sees every token of its "
            "instance (assumptions: the rows' 2025 module no faster than 1.2.0rc5's; routing "
            "as balanced as the measurement's)"))
    return tuple(out)


#: Published decode-size timings of dense NVFP4 GEMMs on B200 (CUTLASS kernels, W4A4, the
#: class TensorRT-LLM's ``nvfp4_gemm`` and vLLM's NVFP4 linear call): pytorch/helion PR #3046
#: (2026-07-13, "Add pretuned NVFP4 decode GEMV benchmark vs vLLM CUTLASS", its ``cutlass
#: (us)`` column, ``fp4in`` rows): ``(N, K, microseconds)`` per decode GEMM. Source data,
#: never fitted to a row of the check or held-out sets.
HELION_B200_NVFP4_CUTLASS = ((4096, 4096, 9.22), (6144, 4096, 10.72), (28672, 4096, 23.54),
                             (8192, 8192, 21.27), (10240, 8192, 21.08), (8192, 28672, 59.40))

#: Bytes per NVFP4 weight a GEMM reads (4 bits plus one FP8 scale per 16 weights): the
#: format's own figure, ``analysis.WEIGHT_FORMATS["nvfp4"]``.
_NVFP4_BYTES = WEIGHT_FORMATS["nvfp4"].bytes_per_weight


def _decode_fp4_fraction():
    """Least squares of :data:`HELION_B200_NVFP4_CUTLASS` time against weight bytes: the
    slope's bandwidth over the B200's HBM bandwidth (the intercept is reported in the
    source text)."""
    xs = [n * k * _NVFP4_BYTES for n, k, _ in HELION_B200_NVFP4_CUTLASS]
    ys = [t * 1e-6 for *_, t in HELION_B200_NVFP4_CUTLASS]
    frac, slope, intercept = _streaming_fraction("b200", xs, ys)
    return Parameter(
        "gemm.decode_hbm_efficiency.blackwell.fp4", frac, "",
        f"pytorch/helion PR #3046 (2026-07-13): B200 CUTLASS NVFP4 (W4A4) decode GEMMs, 6 "
        f"shapes 9.2-59.4 us; least squares time = {intercept * 1e6:.2f} us + bytes / "
        f"{1 / slope / 1e12:.2f} TB/s at 0.5625 B/weight: {frac:.3f} of 8 TB/s (the intercept "
        f"agrees with decode.gemm_fixed_time's 3.90 us fit); checked against flashinfer issue "
        f"#1732 (CUTLASS NVFP4 M=1 N=K=8192 under do_bench_cudagraph, 1.78 TB/s on 0.5 "
        f"B/weight = 18.9 us; the line gives 18.9 us); vLLM PR #20646: flat in M up to 512. "
        f"Taken for every Blackwell chip and for dense NVFP4 GEMMs at any decode M "
        f"(assumptions); not for grouped GEMMs (none published)")


#: DeepGEMM's normal-GEMM rows at the decode batch sizes of its table (M = 64 and 128: every one
#: below the H800's ridge, memory-bound), the rows :data:`GEMM_COMPUTE_EFFICIENCY` leaves out.
_DEEPGEMM_DECODE_M = (64, 128)


def _streaming_fraction(chip, bytes_, seconds):
    """``(fraction of chip's peak HBM bandwidth, slope, intercept)`` of the least-squares line
    of a GEMM table's ``seconds`` against the ``bytes_`` each GEMM reads and writes."""
    slope, intercept = _least_squares(bytes_, seconds)
    return 1 / slope / chip_spec(chip).hbm_bandwidth, slope, intercept


def _least_squares(xs, ys):
    """``(slope, intercept)`` of the least-squares line through ``(xs, ys)``."""
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    slope = (sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True))
             / sum((x - mx) ** 2 for x in xs))
    return slope, my - slope * mx


def _decode_fp8_hopper_fraction():
    """Least squares of DeepGEMM's decode-size normal GEMMs (:data:`DEEPGEMM_H800_FP8`
    ``"dense"`` rows at M = 64 and 128) time against bytes (FP8 A and B, BF16 D: the table's
    own "memory bandwidth" convention): the slope's bandwidth over the H800's HBM bandwidth."""
    rows = [r for r in DEEPGEMM_H800_FP8["dense"] if r[1] in _DEEPGEMM_DECODE_M]
    xs = [g * (m * k + n * k) + 2 * g * m * n for g, m, n, k, _ in rows]
    ys = [2 * g * m * n * k / (tf * 1e12) for g, m, n, k, tf in rows]
    frac, slope, intercept = _streaming_fraction("h800", xs, ys)
    return Parameter(
        "gemm.decode_hbm_efficiency.hopper.fp8", frac, "",
        f"{_DEEPGEMM_SOURCE}: the {len(rows)} normal-GEMM rows at M = 64 and 128 (all "
        f"memory-bound: intensity below the 591 FLOP/B ridge), least squares time = "
        f"{intercept * 1e6:.2f} us + bytes / {1 / slope / 1e12:.2f} TB/s (FP8 operands, BF16 "
        f"output): {frac:.3f} of the H800's 3.35 TB/s (the kernel-only intercept agrees with "
        f"decode.gemm_fixed_time's 2.60 us); taken for every Hopper chip and for dense FP8 GEMMs "
        f"at any decode M (assumptions: DeepGEMM's smallest tile is 64 rows, so M < 64 runs the "
        f"same kernel); not for grouped GEMMs (its grouped rows are M >= 256 per group)")


#: Published fractions of peak HBM bandwidth at which the weight reads of DENSE decode GEMMs
#: stream, by ``(generation, math format)``, where they differ from
#: ``analysis.DECODE_HBM_EFFICIENCY`` (0.78, measured for BF16 on H100 and, through
#: ``decode.gemm_fixed_time``'s fit, on B200). NVFP4 on Blackwell streams at about 0.31 (the
#: reason is not measured; NVIDIA/cutlass issue #2973 reports that FP4 GEMMs with microscaling
#: "appear to have some limits on their tile shape", which leaves a decode-size GEMM few CTAs).
#: FP8 on Hopper streams at about 0.84: DeepGEMM's own decode-size rows (the kernel TensorRT-LLM
#: and SGLang run for block-scaled FP8 checkpoints on Hopper).
DECODE_GEMM_HBM_EFFICIENCY = {("blackwell", "fp4"): _decode_fp4_fraction(),
                              ("hopper", "fp8"): _decode_fp8_hopper_fraction()}


def decode_gemm_hbm_efficiency(generation, math):
    """The published fraction of peak HBM bandwidth (a :class:`~fabric.Parameter`) at which
    a dense decode GEMM of math format ``math`` streams its weights on a chip of
    ``generation``, or ``None`` where none differs from the decode default.

    Parameters
    ----------
    generation : str
        The chip's GPU generation (``"hopper"``, ``"blackwell"``: ``fabric.GENERATIONS``).
    math : str
        The GEMM's math format (``"bf16"``, ``"fp8"``, ``"fp4"``, ...).

    Examples
    --------
    >>> round(decode_gemm_hbm_efficiency("blackwell", "fp4").value, 3)
    0.314
    >>> round(decode_gemm_hbm_efficiency("hopper", "fp8").value, 3)
    0.836
    >>> decode_gemm_hbm_efficiency("hopper", "bf16") is None
    True
    """
    _check_format(generation, math)
    return DECODE_GEMM_HBM_EFFICIENCY.get((generation, math))


#: Published M = 1 kernel times of dense NVFP4 GEMMs with a small N on a Blackwell GPU (CUTLASS
#: backend, W4A4): flashinfer-ai/flashinfer PR #2540 (merged 2026-02-21), "MMFP4 Benchmark
#: Results", table "GB200 Non-Autotune", its ``cutlass_time`` column at ``m = 1``:
#: ``(N, K, microseconds)``. Timed by flashinfer's ``benchmarks/flashinfer_benchmark.py``
#: (mm_fp4 routine): the kernel replayed from a CUDA graph with a cold L2, the time either the
#: kernel's own span (CUPTI, the script's default) or one graph replay (CUDA events), at most
#: the 0.55 us intra-graph dispatch gap apart. Source data, never fitted to a row of the check
#: or held-out sets.
FLASHINFER_GB200_NVFP4_CUTLASS_M1 = ((512, 7168, 9.312), (896, 1024, 4.720), (896, 5120, 7.888),
                                     (1024, 7168, 9.600), (1280, 8192, 10.448),
                                     (1792, 5120, 8.416), (2560, 8192, 11.440))


def _k_floor_fp4():
    """Least squares of :data:`FLASHINFER_GB200_NVFP4_CUTLASS_M1` kernel time against K:
    ``(intercept, slope)`` Parameters, seconds and seconds per element of K."""
    xs = [float(k) for _, k, _ in FLASHINFER_GB200_NVFP4_CUTLASS_M1]
    ys = [t * 1e-6 for *_, t in FLASHINFER_GB200_NVFP4_CUTLASS_M1]
    slope, intercept = _least_squares(xs, ys)
    source = (f"flashinfer-ai/flashinfer PR #2540 (2026-02-21), 'GB200 Non-Autotune' mm_fp4 "
              f"table, CUTLASS column at M = 1, N = 512-2560 (7 shapes, 4.7-11.4 us, CUDA "
              f"graph, cold L2, flashinfer_benchmark.py): least squares time = "
              f"{intercept * 1e6:.2f} us + {slope * 1024e6:.3f} us per 1024 of K, kernel-only; "
              f"taken for every Blackwell chip and every dense NVFP4 GEMM (assumptions)")
    return (Parameter("gemm.decode_k_floor.blackwell.fp4.intercept", intercept, "s", source),
            Parameter("gemm.decode_k_floor.blackwell.fp4.slope", slope, "s", source
                      + "; per element of the reduction dimension K"))


#: The K-loop floor of dense decode GEMMs, by ``(generation, math format)``: a dense GEMM's
#: kernel time at decode size is at least ``intercept + slope x K`` (K its reduction
#: dimension), whatever its bytes. Where published: NVFP4 on Blackwell. At a small N the
#: published M = 1 times are set by K, not by the bytes read (512 x 7168, 2.1 MB: 9.3 us;
#: 1792 x 5120, 5.2 MB: 8.4 us): such a GEMM has few CTAs (N over the tile width) and each
#: runs the whole K loop, so it does not stream at :data:`DECODE_GEMM_HBM_EFFICIENCY`'s rate,
#: which :data:`HELION_B200_NVFP4_CUTLASS` measured at N >= 4096 (there the line in bytes
#: is the longer one: 4096 x 4096 9.22 us against the floor's 7.2 us). A mean line
#: (residuals -0.50 to +0.77 us), not a bound.
DECODE_GEMM_K_FLOOR = {("blackwell", "fp4"): _k_floor_fp4()}


def decode_gemm_k_floor(generation, math):
    """The published K-loop floor ``(intercept, slope)`` (two :class:`~fabric.Parameter`,
    seconds and seconds per element of K) of a dense decode GEMM of math format ``math`` on a
    chip of ``generation`` (:data:`DECODE_GEMM_K_FLOOR`), or ``None`` where none is published.

    Parameters
    ----------
    generation, math : str
        As for :func:`decode_gemm_hbm_efficiency`.

    Examples
    --------
    >>> a, b = decode_gemm_k_floor("blackwell", "fp4")
    >>> round((a.value + b.value * 7168) * 1e6, 2)      # 512 x 7168 measured 9.31 us
    9.81
    >>> decode_gemm_k_floor("hopper", "fp8") is None
    True
    """
    _check_format(generation, math)
    return DECODE_GEMM_K_FLOOR.get((generation, math))
