"""The tensor-parallel all-reduce a serving engine launches, by size: vLLM's dispatch.

An engine does not run one collective library: it picks a kernel per call from the
input's size, the GPU and the group size. :func:`vllm_all_reduce` reproduces vLLM's
choice and prices each kernel by its own steps on the fabric, through the collectives
model (:func:`analysis.cost`). It has the ``collective=`` signature of
:func:`analysis.decode_step` and :func:`analysis.serving_point`, so a decode step can be
priced as vLLM runs it::

    decode_step(..., engine="vllm", collective=vllm_all_reduce)

vLLM's order (vllm-project/vllm ``vllm/compilation/passes/fusion/allreduce_rms_fusion.py``,
``vllm/distributed/device_communicators/cuda_communicator.py``, ``custom_all_reduce.py``,
``all_reduce_utils.py``, ``symm_mem.py``, ``envs.py``; docs/sources.md s.8):

1. under the ``fuse_allreduce_rms`` compilation pass (on by default at -O2 on Hopper and
   Blackwell with TP > 1), FlashInfer's fused all-reduce + RMSNorm for inputs up to
   :data:`VLLM_FI_FUSION_MAX`: its one-shot (Lamport) kernel up to
   :data:`VLLM_FI_ONE_SHOT_MAX`, its two-shot kernel above (the ``"symmetric-memory"``
   runtime's ``"one-shot"`` and ``"two-shot"`` kernels);
2. vLLM's custom all-reduce below its ``max_size``: 8 MiB, or with torch symmetric memory
   enabled (``VLLM_ALLREDUCE_USE_SYMM_MEM``, default on) :data:`VLLM_CUSTOM_AR_MAX`; its
   1-stage or 2-stage kernel by vLLM's own size rule (:data:`fabric.VLLM_CUSTOM_ALLREDUCE`,
   priced by their loads and barriers);
3. torch symmetric memory below :data:`VLLM_SYMM_MEM_MAX`: PyTorch's multimem all-reduce
   (entry barrier, ``multimem.ld_reduce`` + ``multimem.st``, release barrier: the steps of
   the ``"symmetric-memory"`` runtime's ``"in-switch"`` kernel, with PyTorch's
   compare-and-swap barriers: :data:`fabric.TORCH_SYMM_MEM`) for the group sizes in
   :data:`VLLM_MULTIMEM_GROUPS`, else its two-shot (``"two-shot"``);
4. NCCL.

A tier whose kernel cannot run on the group (ranks in several load/store domains, no
reducing switch for multimem: vLLM disables that communicator) falls to the next. Not
priced: vLLM's copies into and out of the symmetric buffer (tier 3), the residual add and
RMSNorm fused into tier 1.

Blackwell chips take SM100's rows (B300 and GB300 are SM103, which vLLM's tables do not
list: an assumption).

>>> import topologies
>>> f = topologies.build("hgx-h200")
>>> ranks = list(f.endpoints)
>>> [vllm_all_reduce_kernel(f, n, ranks) for n in (229376, 917504, 117440512)]
['flashinfer one-shot', 'torch-symm-mem multimem', 'nccl']
>>> vllm_all_reduce_kernel(f, 229376, ranks, fuse_allreduce_rms=False)
'vllm-custom 1-stage'

TensorRT-LLM's own all-reduce op is taken as measured instead (:func:`trtllm_all_reduce`,
:data:`TRTLLM_ALLREDUCE_BF16`: NVIDIA's aiconfigurator timed TensorRT-LLM 1.2.0rc5's op on
one B200 and one H200 node): ``decode_step(engine="trtllm")``'s default on those chips
(:func:`analysis.engine_collective`, as vLLM's dispatch is ``engine="vllm"``'s).
"""

import functools
from typing import NamedTuple

import numpy as np

from fabric import TORCH_SYMM_MEM, VLLM_CUSTOM_ALLREDUCE, Parameter, SpecError
from fabric._fabric_arg import fabric_arg
from fabric._units import check_count, flag_of

from ._gemm_measured import lower_envelope, measured_chip
from ._runtime_cost import VLLM_ONE_STAGE_BELOW
from ._schedules import NotApplicableError

__all__ = ["TRTLLM_ALLREDUCE_BF16", "TRTLLM_ALLREDUCE_CHIPS",
           "TRTLLM_ALLREDUCE_NODES", "VLLM_CUSTOM_AR_MAX", "VLLM_FI_FUSION_MAX",
           "VLLM_FI_ONE_SHOT_MAX", "VLLM_MULTIMEM_GROUPS", "VLLM_SYMM_MEM_MAX",
           "trtllm_all_reduce", "trtllm_all_reduce_time", "vllm_all_reduce",
           "vllm_all_reduce_kernel"]

_MiB = 1 << 20
_FI_SRC = ("vllm-project/vllm vllm/compilation/passes/fusion/allreduce_rms_fusion.py "
           "FI_ALLREDUCE_FUSION_MAX_SIZE_MB / _FI_ALLREDUCE_ONE_SHOT_MAX_SIZES_MB (the "
           "fuse_allreduce_rms pass the InferenceX Kimi K2.5 runs set)")
_UTILS_SRC = ("vllm-project/vllm vllm/distributed/device_communicators/all_reduce_utils.py "
              "(commit b250ac3d)")


def _table(name, rows, unit, source):
    return {(sm, g): Parameter(f"vllm.{name}.sm{sm}.tp{g}", v, unit, source)
            for sm, per in rows.items() for g, v in per.items()}


#: Largest input (bytes) of FlashInfer's fused all-reduce + RMSNorm under vLLM's
#: ``fuse_allreduce_rms``, by (SM version, TP size).
VLLM_FI_FUSION_MAX = _table("fi_fusion_max", {
    90: {2: 64 * _MiB, 4: 2 * _MiB, 8: _MiB // 2},
    100: {2: 64 * _MiB, 4: 32 * _MiB, 8: 1 * _MiB}}, "B", _FI_SRC)
#: Largest input (bytes) it runs with the one-shot (Lamport) kernel; two-shot above.
VLLM_FI_ONE_SHOT_MAX = _table("fi_one_shot_max", {
    90: {2: 32 * _MiB, 4: 2 * _MiB, 8: _MiB // 2},
    100: {2: 32 * _MiB, 4: 4 * _MiB, 8: 1 * _MiB}}, "B", _FI_SRC)
#: vLLM's custom all-reduce runs on inputs BELOW this many bytes: ``CustomAllreduce``'s
#: ``max_size`` 8 MiB (``custom_all_reduce.py``), lowered, when torch symmetric memory is
#: enabled, to ``CUSTOM_ALL_REDUCE_MAX_SIZES`` (``all_reduce_utils.py``). Key ``(sm, tp)``;
#: ``(None, None)``: without symmetric memory.
VLLM_CUSTOM_AR_MAX = {
    (None, None): Parameter("vllm.custom_ar_max", 8 * _MiB, "B",
                            "vllm-project/vllm vllm/distributed/device_communicators/"
                            "custom_all_reduce.py CustomAllreduce(max_size=8192 * 1024)"),
    **_table("custom_ar_max_symm_mem", {
        90: {2: 64 * _MiB, 4: 32 * _MiB, 6: _MiB // 2, 8: _MiB // 4},
        100: {2: 2 * _MiB, 4: 2 * _MiB, 6: 1 * _MiB, 8: 1 * _MiB}}, "B",
        _UTILS_SRC + " CUSTOM_ALL_REDUCE_MAX_SIZES ('Max size for each world size in case "
        "symmetric memory is available'); envs.py VLLM_ALLREDUCE_USE_SYMM_MEM default '1'")}
#: torch symmetric memory runs on inputs BELOW this many bytes (``SymmMemCommunicator``).
VLLM_SYMM_MEM_MAX = _table("symm_mem_max", {
    90: {2: 64 * _MiB, 4: 32 * _MiB, 6: 64 * _MiB, 8: 64 * _MiB},
    100: {2: 8 * _MiB, 4: 32 * _MiB, 6: 128 * _MiB, 8: 128 * _MiB}}, "B",
    _UTILS_SRC + " SYMM_MEM_ALL_REDUCE_MAX_SIZES")
#: TP sizes at which vLLM's torch symmetric-memory all-reduce is the multimem kernel (else
#: two-shot), by SM version.
VLLM_MULTIMEM_GROUPS = {90: (4, 6, 8), 100: (6, 8)}

#: The SM version of vLLM's tables each chip generation reads (the one list of the
#: generations vLLM's dispatch applies to: ``analysis.engine_collective``'s rule for
#: ``engine="vllm"``, the texts that name them).
VLLM_SM_VERSIONS = {"hopper": 90, "blackwell": 100}


def _vllm_chips():
    """vLLM's generations as texts say them: ``'Hopper (SM90) and Blackwell (SM100)'``."""
    return " and ".join(f"{gen.capitalize()} (SM{sm})" for gen, sm in VLLM_SM_VERSIONS.items())


def _sm(fabric):
    chip = getattr(fabric, "chip", None)
    gen = getattr(chip, "generation", None)
    if gen not in VLLM_SM_VERSIONS:
        raise SpecError(f"vLLM's all-reduce tables list {_vllm_chips()} "
                        f"chips; the fabric's chip is {getattr(chip, 'name', None)!r}")
    return VLLM_SM_VERSIONS[gen]


def _choices(fabric, nbytes, ranks, fuse_allreduce_rms, symm_mem):
    """vLLM's tiers for an all-reduce of ``nbytes``, in its order: ``(label, cost kwargs)``."""
    from fabric import runtime

    from ._collectives import read_nbytes

    fuse_allreduce_rms = flag_of(fuse_allreduce_rms, "fuse_allreduce_rms")
    symm_mem = flag_of(symm_mem, "symm_mem")
    sm, tp = _sm(fabric), len(ranks)
    size = read_nbytes(nbytes)
    out = []
    fi = VLLM_FI_FUSION_MAX.get((sm, tp))
    if fuse_allreduce_rms and fi is not None and size <= fi.value:
        one = size <= VLLM_FI_ONE_SHOT_MAX[(sm, tp)].value
        out.append((f"flashinfer {'one-shot' if one else 'two-shot'}",
                    {"runtime": runtime("symmetric-memory"),
                     "algorithm": "one-shot" if one else "two-shot"}))
    ca = VLLM_CUSTOM_AR_MAX[(None, None)].value
    if symm_mem and (sm, tp) in VLLM_CUSTOM_AR_MAX:
        ca = min(ca, VLLM_CUSTOM_AR_MAX[(sm, tp)].value)
    if tp in VLLM_ONE_STAGE_BELOW and size < ca:
        one = size < VLLM_ONE_STAGE_BELOW[tp]
        out.append((f"vllm-custom {'1-stage' if one else '2-stage'}",
                    {"runtime": VLLM_CUSTOM_ALLREDUCE,
                     "algorithm": "one-shot" if one else "two-shot"}))
    sym = VLLM_SYMM_MEM_MAX.get((sm, tp))
    if symm_mem and sym is not None and size < sym.value:
        multi = tp in VLLM_MULTIMEM_GROUPS[sm]
        out.append((f"torch-symm-mem {'multimem' if multi else 'two-shot'}",
                    {"runtime": TORCH_SYMM_MEM,
                     "algorithm": "in-switch" if multi else "two-shot"}))
    out.append(("nccl", {"runtime": runtime("nccl"), "algorithm": "auto"}))
    return out


def _run(fabric, nbytes, ranks, transport, fuse_allreduce_rms, symm_mem):
    from ._collectives import cost

    for label, kw in _choices(fabric, nbytes, ranks, fuse_allreduce_rms, symm_mem):
        try:
            return label, cost(fabric, "all-reduce", nbytes, ranks=ranks, transport=transport,
                               **kw)
        except NotApplicableError:
            if label == "nccl":
                raise
    raise AssertionError("unreachable: NCCL is the last tier")


def _ranks(fabric, ranks):
    """The group's chip names, read as :func:`analysis.cost` reads ``ranks`` (a string or a
    number is no group; repeats, unknown ranks and an empty group are refused by name)."""
    from ._collectives import resolve_ranks

    return list(resolve_ranks(fabric_arg(fabric), ranks)[0])


def vllm_all_reduce_kernel(fabric, nbytes, ranks=None, *, transport=None,
                           fuse_allreduce_rms=True, symm_mem=True):
    """Which kernel vLLM runs for a TP all-reduce of ``nbytes`` (bytes per rank) over
    ``ranks`` (default: every chip) on ``fabric``: ``"flashinfer one-shot"``,
    ``"flashinfer two-shot"``, ``"vllm-custom 1-stage"``, ``"vllm-custom 2-stage"``,
    ``"torch-symm-mem multimem"``, ``"torch-symm-mem two-shot"`` or ``"nccl"`` (module
    docstring). ``fuse_allreduce_rms=False``: the compilation pass off; ``symm_mem=False``:
    ``VLLM_ALLREDUCE_USE_SYMM_MEM=0``.

    Parameters
    ----------
    fabric : fabric.Fabric
    nbytes : float
        Bytes per rank.
    ranks : sequence of int or str, optional
        The tensor-parallel group (ranks or names); default every chip.
    transport : str, optional
        As :func:`analysis.cost` takes it.
    fuse_allreduce_rms, symm_mem : bool
        vLLM's two switches, as above.

    Returns
    -------
    str

    Examples
    --------
    >>> import topologies
    >>> f = topologies.build("hgx-b200")
    >>> vllm_all_reduce_kernel(f, 6 << 20, list(f.endpoints[:4]))   # 6 MiB at TP=4
    'flashinfer two-shot'
    >>> vllm_all_reduce_kernel(f, 6 << 20, list(f.endpoints[:4]), fuse_allreduce_rms=False)
    'torch-symm-mem two-shot'
    """
    return _run(fabric, nbytes, _ranks(fabric, ranks), transport, fuse_allreduce_rms,
                symm_mem)[0]


def vllm_all_reduce(fabric, op, nbytes, *, algorithm="auto", ranks=None, transport=None,
                    fuse_allreduce_rms=True, symm_mem=True, **kwargs):
    """Cost of a collective as vLLM runs it (a ``collective=`` function for
    :func:`analysis.decode_step` / :func:`analysis.serving_point`): a tensor-parallel
    all-reduce with the kernel vLLM launches for its size (module docstring,
    :func:`vllm_all_reduce_kernel`), any other operation through NCCL. ``algorithm`` and a
    ``runtime`` passed by the caller are not used: vLLM chooses.

    Returns the :class:`analysis.CollectiveCost` of that kernel.

    Parameters
    ----------
    fabric : fabric.Fabric
    op : str
        The operation (:func:`normalize_op` reads it).
    nbytes : float
        Bytes per rank.
    algorithm : str
        Not used (vLLM chooses).
    ranks, transport, fuse_allreduce_rms, symm_mem
        As for :func:`vllm_all_reduce_kernel`.
    **kwargs
        Not used (a ``runtime`` passed by the caller: vLLM chooses its kernels, and NCCL at
        :func:`analysis.cost`'s own settings for the other operations), as for
        :func:`trtllm_all_reduce`.

    Examples
    --------
    >>> import topologies
    >>> f = topologies.build("hgx-b200")
    >>> r = vllm_all_reduce(f, "all-reduce", 917504, ranks=list(f.endpoints))
    >>> r.runtime, r.algorithm
    ('symmetric-memory', 'one-shot')
    """
    from fabric import runtime

    from ._closed_form import normalize_algorithm, normalize_op
    from ._collectives import cost

    op = normalize_op(op)           # "allreduce", "AllReduce": the names cost() reads
    normalize_algorithm(algorithm)  # not used, but a wrong one is refused as cost refuses it
    ranks = _ranks(fabric, ranks)
    if op != "all-reduce" or len(ranks) < 2:
        return cost(fabric, op, nbytes, algorithm="auto", runtime=runtime("nccl"), ranks=ranks,
                    transport=transport)
    return _run(fabric, nbytes, ranks, transport, fuse_allreduce_rms, symm_mem)[1]

#: TensorRT-LLM 1.2.0rc5's own tensor-parallel all-reduce op, BF16, on one node, ``{(chip,
#: ranks): ((elements, milliseconds), ...)}``: ai-dynamo/aiconfigurator (snapshot 095f58a5)
#: ``aic-core/src/aiconfigurator_core/systems/data/{b200_sxm,h200_sxm}/comm/trtllm/1.2.0rc5/
#: custom_allreduce_perf.parquet`` (blobs 7c04325, e45e6df; the data added in 217a5739b and
#: 13669a172, 2025-12-22), rows framework TRTLLM, op all_reduce, kernel_source TRTLLM,
#: implementation trtllm, allreduce_dtype bfloat16; columns num_gpus, message_size (elements),
#: latency (ms). What is timed (collector/collect_all_reduce.py at ab8eab515, 2025-12-22, the
#: timing unchanged at 095f58a5's collector/network/collect_all_reduce.py): TensorRT-LLM's
#: ``AllReduce(mapping)`` module with ``AllReduceParams(strategy=AUTO, fusion_op=NONE)`` on a
#: ``[1, n]`` input (``[n // 4096, 4096]`` above 4096 elements), five such ops captured back to
#: back in one CUDA graph, 3 warm-up replays, then 20 replays between two CUDA events on rank
#: 0, the time divided by 100: each op's kernel with its graph boundary. The same sweep
#: re-collected for 1.3.0rc10 and 1.3.0rc20 with the all-reduce autotuner off (aiconfigurator
#: #1062) agrees at 8 GPUs and 4096-16384 elements within 0.3 us (B200 5.6-6.1 us, H200
#: 3.5-3.9 us). Source data, never fitted to a row. The rows it prices ran TensorRT-LLM
#: 0.18-0.20 (2025); the table is 1.2.0rc5's (assumed no slower than theirs).
TRTLLM_ALLREDUCE_BF16 = {
    ("b200", 2): ((128, 0.0044944), (256, 0.0045008), (512, 0.00458304), (1024, 0.0049536), (2048, 0.00483808), (4096, 0.00494816), (8192, 0.00521376), (16384, 0.0051136), (32768, 0.00512832), (65536, 0.005256), (131072, 0.00532032), (262144, 0.00566144), (524288, 0.00635616), (1048576, 0.00818464), (2097152, 0.01148832), (4194304, 0.02050656), (8388608, 0.05628896), (16777216, 0.0863024), (33554432, 0.15499232), (67108864, 0.28157408), (134217728, 0.53184128), (268435456, 0.98601341), (536870912, 1.89648315)),
    ("b200", 4): ((128, 0.00455168), (256, 0.00466432), (512, 0.00473728), (1024, 0.0052), (2048, 0.0050688), (4096, 0.0052752), (8192, 0.00542816), (16384, 0.00538048), (32768, 0.00541984), (65536, 0.00575104), (131072, 0.00629312), (262144, 0.0075936), (524288, 0.0098432), (1048576, 0.01447584), (2097152, 0.02383936), (4194304, 0.04954816), (8388608, 0.07827136), (16777216, 0.12262432), (33554432, 0.18660864), (67108864, 0.35560352), (134217728, 0.68160545), (268435456, 1.30612061), (536870912, 2.58004761)),
    ("b200", 8): ((128, 0.00481632), (256, 0.00498016), (512, 0.00535936), (1024, 0.00564512), (2048, 0.00557792), (4096, 0.0057296), (8192, 0.00599616), (16384, 0.0057696), (32768, 0.00591776), (65536, 0.00657856), (131072, 0.00806976), (262144, 0.01124256), (524288, 0.01716064), (1048576, 0.02467072), (2097152, 0.0315088), (4194304, 0.07381536), (8388608, 0.1031296), (16777216, 0.17043327), (33554432, 0.2796464), (67108864, 0.39952415), (134217728, 0.72265732), (268435456, 1.34217926), (536870912, 2.60010254)),
    ("h200", 2): ((128, 0.00301888), (256, 0.00304096), (512, 0.00308096), (1024, 0.0033008), (2048, 0.00329152), (4096, 0.00336384), (8192, 0.00882432), (16384, 0.00342048), (32768, 0.0072672), (65536, 0.003648), (131072, 0.00406368), (262144, 0.00492544), (524288, 0.0065168), (1048576, 0.00947456), (2097152, 0.01664672), (4194304, 0.03311648), (8388608, 0.07856064), (16777216, 0.14348864), (33554432, 0.25103584), (67108864, 0.46659103), (134217728, 0.88818977), (268435456, 1.70653275), (536870912, 3.30799774)),
    ("h200", 4): ((128, 0.00307168), (256, 0.00315296), (512, 0.00317568), (1024, 0.00353952), (2048, 0.00348512), (4096, 0.00352224), (8192, 0.00349696), (16384, 0.003712), (32768, 0.00986944), (65536, 0.00942816), (131072, 0.00976064), (262144, 0.0110432), (524288, 0.01312352), (1048576, 0.02085632), (2097152, 0.0349056), (4194304, 0.06046496), (8388608, 0.09823936), (16777216, 0.17550848), (33554432, 0.32344479), (67108864, 0.61701473), (134217728, 1.18870621), (268435456, 2.31993378), (536870912, 4.55485718)),
    ("h200", 8): ((128, 0.00349696), (256, 0.00345216), (512, 0.00359776), (1024, 0.003896), (2048, 0.00383392), (4096, 0.00386016), (8192, 0.00391584), (16384, 0.00441888), (32768, 0.0050192), (65536, 0.0067648), (131072, 0.01015744), (262144, 0.01621824), (524288, 0.01961344), (1048576, 0.02867232), (2097152, 0.04483872), (4194304, 0.07825248), (8388608, 0.12217024), (16777216, 0.19661152), (33554432, 0.31968288), (67108864, 0.56400673), (134217728, 1.05375488), (268435456, 2.03898331), (536870912, 4.00103638)),
}

#: The chips (names) :data:`TRTLLM_ALLREDUCE_BF16` measured: where ``engine="trtllm"`` takes
#: :func:`trtllm_all_reduce` (:func:`analysis.engine_collective`).
TRTLLM_ALLREDUCE_CHIPS = frozenset(chip for chip, _ in TRTLLM_ALLREDUCE_BF16)

def _aic_system(chip):
    """aiconfigurator's system folder (``b200_sxm``) holding ``chip``'s sweep."""
    return f"{chip}_sxm"


#: each (chip, ranks) sweep as ``(bytes, seconds)``, the lower envelope
_TRTLLM_AR_ENV = {key: [(2 * n, t) for n, t in lower_envelope(points)]
                  for key, points in TRTLLM_ALLREDUCE_BF16.items()}


def trtllm_all_reduce_time(chip, ranks, nbytes):
    """Seconds of TensorRT-LLM's all-reduce op of ``nbytes`` (bytes per rank, BF16: two bytes an
    element) among ``ranks`` GPUs of one node of chip ``chip`` (a ChipSpec or a name), as measured
    (:data:`TRTLLM_ALLREDUCE_BF16`): the lower envelope in the size (a smaller message is
    never dearer than a larger one's measurement: the Hopper sweeps' isolated highs, e.g.
    H200 2 GPUs 8.82 us at 8192 elements between 3.36 and 3.42, are read as noise; a step
    that every larger size keeps, H200 4 GPUs from 32768 elements, stays), linear in the
    size between its points; ``None`` where nothing was measured (another chip or group
    size, or outside 256 B - 1 GiB).

    Parameters
    ----------
    chip : str, fabric.ChipSpec or None
        The chip, or a name of :data:`fabric.CHIPS` (``"b200"``, ``"h200"``:
        :data:`TRTLLM_ALLREDUCE_BF16`; a misspelt name is refused; None: no chip, nothing
        measured): ``analysis._gemm_measured.measured_chip``, every measured table's rule.
    ranks : int
        GPUs in the group (2, 4 or 8 measured).
    nbytes : float
        Bytes per rank (BF16 elements x 2).

    Returns
    -------
    float or None
        Seconds of one op, None where nothing was measured.

    Examples
    --------
    >>> round(trtllm_all_reduce_time("b200", 8, 14336) * 1e6, 2)
    5.76
    >>> round(trtllm_all_reduce_time("h200", 2, 16384) * 1e6, 2)   # 8.82 us measured
    3.42
    >>> trtllm_all_reduce_time("gb200", 8, 14336) is None
    True
    """
    from ._collectives import read_nbytes

    chip = measured_chip(chip, optional=True)
    env = _TRTLLM_AR_ENV.get((chip, check_count(ranks, "ranks", 1)))
    size = read_nbytes(nbytes)
    if env is None or not env[0][0] <= size <= env[-1][0]:
        return None
    return float(np.interp(size, [x for x, _ in env], [t for _, t in env]))


def trtllm_all_reduce_parameters(chip, ranks, nbytes):
    """The measured points :func:`trtllm_all_reduce_time` reads for an all-reduce of
    ``nbytes`` (bytes per rank) among ``ranks`` GPUs of chip ``chip`` (a ChipSpec or a name), as
    Parameters (seconds, the lower envelope's): the one point at a measured size, else the
    two around it; ``()`` where nothing was measured. For a step's list of the figures it
    used, as the MLA, GEMM and MoE-module tables give theirs.

    >>> [(p.name, round(p.value * 1e6, 2)) for p in trtllm_all_reduce_parameters("b200", 8, 14336)]
    [('decode.trtllm_allreduce.b200.tp8.e4096', 5.73), ('decode.trtllm_allreduce.b200.tp8.e8192', 5.77)]
    >>> trtllm_all_reduce_parameters("gb200", 8, 14336)
    ()
    """
    from ._collectives import read_nbytes

    if trtllm_all_reduce_time(chip, ranks, nbytes) is None:     # its checks, its range
        return ()
    chip = measured_chip(chip)
    env = _TRTLLM_AR_ENV[(chip, ranks)]
    size = read_nbytes(nbytes)
    sizes = [x for x, _ in env]
    i = int(np.searchsorted(sizes, size))
    used = (i,) if sizes[i] == size else (i - 1, i)
    measured = dict(TRTLLM_ALLREDUCE_BF16[(chip, ranks)])
    out = []
    for j in used:
        x, t = env[j]
        ms = measured[x // 2]
        out.append(Parameter(
            f"decode.trtllm_allreduce.{chip}.tp{ranks}.e{x // 2}", t, "s",
            f"TensorRT-LLM 1.2.0rc5's all-reduce op (analysis.TRTLLM_ALLREDUCE_BF16: "
            f"ai-dynamo/aiconfigurator 095f58a5 {_aic_system(chip)} comm/trtllm/1.2.0rc5/"
            f"custom_allreduce_perf.parquet): {ranks} GPUs, {x // 2} BF16 elements: {ms:.6g} ms"
            + (f", taken at {t * 1e3:.6g} ms (a larger size's time, the lower envelope)"
               if t < ms * 1e-3 else "")
            + "; linear in the size between the measured points; its node's symmetric-memory "
            "difference added on another or a degraded fabric (analysis.trtllm_all_reduce)"))
    return tuple(out)


#: The node each :data:`TRTLLM_ALLREDUCE_BF16` sweep ran on, as a preset: an 8-GPU HGX B200 /
#: H200 server (aiconfigurator's ``b200_sxm`` / ``h200_sxm`` systems).
TRTLLM_ALLREDUCE_NODES = {"b200": "hgx-b200", "h200": "hgx-h200"}


@functools.cache
def _node(chip):
    """The node ``chip``'s sweep ran on, built once a process (its routing caches warm)."""
    import topologies

    return topologies.build(TRTLLM_ALLREDUCE_NODES[chip])


@functools.lru_cache(maxsize=256)
def _node_cost(chip, ranks, nbytes):
    """Seconds of the ``symmetric-memory`` runtime's all-reduce of ``nbytes`` among the first
    ``ranks`` GPUs of the node ``chip``'s sweep ran on (:data:`TRTLLM_ALLREDUCE_NODES`)."""
    from fabric import runtime

    from ._collectives import cost

    node = _node(chip)
    return cost(node, "all-reduce", nbytes, ranks=list(node.endpoints[:ranks]),
                runtime=runtime("symmetric-memory")).time


def trtllm_all_reduce(fabric, op, nbytes, *, algorithm="auto", ranks=None, transport=None,
                      **kwargs):
    """Cost of a collective as TensorRT-LLM runs it (``decode_step(engine="trtllm")``'s
    ``collective`` on the chips its op was measured on, :func:`analysis.engine_collective`;
    or a ``collective=`` function a caller passes): a tensor-parallel all-reduce at
    TensorRT-LLM's own measured op (:func:`trtllm_all_reduce_time`; TensorRT-LLM 1.2.0rc5)
    where the group's chip, size and bytes were measured and the group lies in one
    load/store domain, every other operation and case through :func:`analysis.cost` at its
    default runtime. The op was measured on one healthy node (:data:`TRTLLM_ALLREDUCE_NODES`);
    another fabric, or a degraded one, carries its difference through the model: the time
    is the measured op plus the ``symmetric-memory`` runtime's cost of the all-reduce (the
    op's class, one-shot / two-shot load/store kernels) on ``fabric``'s group less its cost
    on the measured node (equal on that node; a failed link that slows the group slows the
    op by as much). Its time holds the kernel's start and graph boundary (five ops back to
    back a graph, per op), as the runtimes' floors do
    (:func:`analysis._decode.collective_holds_starts`). Named ASSUMPTIONS: the step's fused
    all-reduce + residual add + RMSNorm kernel takes no less than the plain all-reduce
    measured (its norm keeps the norm floor the step charges it); rows of 2025 code
    (TensorRT-LLM 0.18-0.20) ran the op no faster than 1.2.0rc5 (the 1.3.0rc10 and 1.3.0rc20
    sweeps of the same collector agree with it).

    Returns the :class:`analysis.CollectiveCost` of the measured op (the symmetric-memory
    runtime's cost with its time and bandwidths replaced, its algorithm ``"trtllm
    measured"``), or of :func:`analysis.cost`.

    Parameters
    ----------
    fabric, op, nbytes, ranks, transport
        As for :func:`vllm_all_reduce` (``nbytes`` bytes per rank; ``ranks`` default every
        chip).
    algorithm : str
        For the operations :func:`analysis.cost` prices (``"auto"``: the fastest).
    **kwargs
        Not used (a ``runtime`` passed by the caller: TensorRT-LLM chooses its kernels).

    Examples
    --------
    >>> import topologies
    >>> f = topologies.build("hgx-b200")
    >>> r = trtllm_all_reduce(f, "all-reduce", 14336, ranks=list(f.endpoints))
    >>> r.algorithm, round(r.time * 1e6, 2)
    ('trtllm measured', 5.76)
    """
    import dataclasses

    from fabric import runtime

    from ._closed_form import normalize_algorithm, normalize_op
    from ._collectives import cost, read_nbytes

    op = normalize_op(op)
    algorithm = normalize_algorithm(algorithm)  # cost's reading, also where the op is measured
    ranks = _ranks(fabric, ranks)
    spec = getattr(fabric, "chip", None)
    chip = getattr(spec, "name", None)
    measured = op == "all-reduce" and len(ranks) > 1 and np.ndim(nbytes) == 0
    if measured:
        nbytes = read_nbytes(nbytes)    # one reading, cost's: '14KiB' is 14336 for the op too
    t = trtllm_all_reduce_time(spec, len(ranks), nbytes) if measured else None
    own = None
    if t is not None:
        try:
            own = cost(fabric, op, nbytes, algorithm="auto", runtime=runtime("symmetric-memory"),
                       ranks=ranks, transport=transport)
        except NotApplicableError:      # a group across load/store domains: not the node's op
            own = None
    if own is None:
        return cost(fabric, op, nbytes, algorithm=algorithm, ranks=ranks, transport=transport)
    t += own.time - _node_cost(chip, len(ranks), float(nbytes))
    scale = own.time / t
    return dataclasses.replace(own, time=t, algbw=own.algbw * scale, busbw=own.busbw * scale,
                               algorithm="trtllm measured", candidates=())


class EngineAllReduce(NamedTuple):
    """An engine's own TP all-reduce :func:`analysis.engine_collective` may choose."""

    function: object
    phrase: str         # how a CLI header says what prices the TP all-reduces
    source: str         # the source a step's parameter table gives


#: The engines' own all-reduces (:func:`analysis.engine_collective`'s choices beside
#: ``analysis.cost``), by the label output names them by: the one list a step's parameter
#: table, the CLI headers and ``collective_holds_starts`` read.
ENGINE_ALL_REDUCES = {
    "analysis.vllm_all_reduce": EngineAllReduce(
        function=vllm_all_reduce, phrase="vLLM's own dispatch (analysis.vllm_all_reduce)",
        source=("vLLM's per-size TP all-reduce dispatch at vLLM's defaults "
                "(analysis.vllm_all_reduce; -O2 fuse_allreduce_rms on "
                + "/".join(f"SM{sm}" for sm in VLLM_SM_VERSIONS.values())
                + ", vllm-project/vllm vllm/config/vllm.py; docs/sources.md s.8): decode_step's "
                "default for engine='vllm' on "
                + " and ".join(gen.capitalize() for gen in VLLM_SM_VERSIONS)
                + ", or the caller's")),
    "analysis.trtllm_all_reduce": EngineAllReduce(
        function=trtllm_all_reduce,
        phrase="TensorRT-LLM's measured op (analysis.trtllm_all_reduce)",
        source=("TensorRT-LLM 1.2.0rc5's own all-reduce op as measured "
                "(analysis.trtllm_all_reduce, TRTLLM_ALLREDUCE_BF16: ai-dynamo/aiconfigurator "
                "095f58a5 " + " / ".join(_aic_system(c) for c in sorted(TRTLLM_ALLREDUCE_CHIPS))
                + " comm/trtllm/1.2.0rc5/custom_allreduce_perf."
                "parquet), other collectives analysis.cost: decode_step's default for "
                "engine='trtllm' on "
                + " and ".join(c.upper() for c in sorted(TRTLLM_ALLREDUCE_CHIPS))
                + ", or the caller's")),
}


def engine_all_reduce_label(fn):
    """The label of :data:`ENGINE_ALL_REDUCES` whose function ``fn`` is, else None.

    >>> engine_all_reduce_label(trtllm_all_reduce), engine_all_reduce_label(len)
    ('analysis.trtllm_all_reduce', None)
    """
    return next((label for label, e in ENGINE_ALL_REDUCES.items() if e.function is fn), None)
