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
"""

from fabric import TORCH_SYMM_MEM, VLLM_CUSTOM_ALLREDUCE, Parameter, SpecError
from fabric._units import flag_of

from ._runtime_cost import VLLM_ONE_STAGE_BELOW
from ._schedules import NotApplicableError

__all__ = ["VLLM_CUSTOM_AR_MAX", "VLLM_FI_FUSION_MAX", "VLLM_FI_ONE_SHOT_MAX",
           "VLLM_MULTIMEM_GROUPS", "VLLM_SYMM_MEM_MAX", "vllm_all_reduce",
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

_SM = {"hopper": 90, "blackwell": 100}


def _sm(fabric):
    chip = getattr(fabric, "chip", None)
    gen = getattr(chip, "generation", None)
    if gen not in _SM:
        raise SpecError(f"vLLM's all-reduce tables list Hopper (SM90) and Blackwell (SM100) "
                        f"chips; the fabric's chip is {getattr(chip, 'name', None)!r}")
    return _SM[gen]


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

    return list(resolve_ranks(fabric, ranks)[0])


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
        Passed to :func:`analysis.cost` for the operations NCCL runs.

    Examples
    --------
    >>> import topologies
    >>> f = topologies.build("hgx-b200")
    >>> r = vllm_all_reduce(f, "all-reduce", 917504, ranks=list(f.endpoints))
    >>> r.runtime, r.algorithm
    ('symmetric-memory', 'one-shot')
    """
    from fabric import runtime

    from ._closed_form import normalize_op
    from ._collectives import cost

    op = normalize_op(op)           # "allreduce", "AllReduce": the names cost() reads
    ranks = _ranks(fabric, ranks)
    if op != "all-reduce" or len(ranks) < 2:
        return cost(fabric, op, nbytes, algorithm="auto", runtime=runtime("nccl"), ranks=ranks,
                    transport=transport)
    return _run(fabric, nbytes, ranks, transport, fuse_allreduce_rms, symm_mem)[1]
