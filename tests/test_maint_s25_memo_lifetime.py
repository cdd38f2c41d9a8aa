"""No per-fabric memo value keeps its fabric alive.

``fabric.fabric_memo`` holds every analysis's per-fabric caches in one
``weakref.WeakKeyDictionary`` keyed on the fabric (fabric/_memo.py: they go when the fabric
is collected). A value that references its key, directly or through the objects it holds (a
view, a traceback's frames, a degraded fabric's ``intact``), makes the entry immortal: the
fabric, its router and every memo of it stay for the life of the process (the scaling
study's workers kept every 16k-chip fabric they built so, through a cached error's
traceback: analysis._collectives._get_plan). Each fabric here is put
through every analysis that keeps a memo (the collectives under each runtime (with their lower
bounds), ring search, decode, the MoE exchange kernels, serving), then dropped: it must be
collected, and if it is not, the test names the memo entries that reach it.
"""

import gc
import types
import weakref

import numpy as np
import pytest

import analysis
import topologies
from analysis import NotApplicableError
from fabric import FabricError
from fabric._memo import _MEMOS

#: Every module that keeps a memo with ``fabric_memo(fabric, __name__)`` (grep fabric_memo):
#: the exercise below must reach each, or the test would pass without looking.
OWNERS = {"analysis._collectives", "analysis._schedules_multi", "analysis._bounds",
          "analysis._decode", "analysis._moe_exchange"}

_SKIP = (types.ModuleType, type, types.FunctionType, types.BuiltinFunctionType,
         types.CodeType)


def _reaches(value, target):
    """Whether ``target`` is reachable from ``value`` through the objects it holds (not
    through modules, classes or functions: their globals reach everything)."""
    seen, stack = set(), [value]
    while stack:
        obj = stack.pop()
        if obj is target:
            return True
        if id(obj) in seen or isinstance(obj, _SKIP):
            continue
        seen.add(id(obj))
        stack.extend(gc.get_referents(obj))
    return False


def _holders(f):
    """(owner, key) of every memo entry of ``f`` whose value reaches ``f``."""
    return [(owner, key) for owner, memo in _MEMOS.get(f, {}).items()
            for key, value in memo.items() if _reaches(value, f)]


def _try(call, *args, **kwargs):
    try:
        call(*args, **kwargs)
    except (FabricError, NotApplicableError, ValueError):
        pass


def _exercise(f):
    """Every analysis that keeps a per-fabric memo, on ``f``."""
    chips = list(f.endpoints)
    p = len(chips)
    for rt in ("ideal", "nccl", "symmetric-memory"):
        for op in ("all-reduce", "all-gather", "all-to-all", "broadcast"):
            _try(analysis.cost, f, op, 1 << 20, runtime=rt)
        _try(analysis.cost, f, "all-reduce", 1 << 20, runtime=rt, ranks=chips[:p // 2])
    for alg in ("ring", "multi-ring", "in-switch", "hierarchical", "double-binary-tree"):
        _try(analysis.cost, f, "all-reduce", 1 << 20, alg)
    m = np.full((p, p), 4096.0)
    np.fill_diagonal(m, 0.0)
    _try(analysis.cost, f, "all-to-allv", m, runtime="nccl")
    _try(analysis.ring_search, f)
    ep = min(8, p)
    for kernel in ("one-sided", "deepep-low-latency", "pplx", "all-to-allv"):
        _try(analysis.moe_exchange, f, "deepseek-v3", 16, ep, kernel=kernel, dispatch_bytes=1,
             combine_bytes=2)
    _try(analysis.decode_step, "deepseek-v3", f, batch=8, context=2048,
         layout=f"tp=1,dp={ep},ep={ep}")
    _try(analysis.decode_step, "kimi-k2", f, batch=1, context=4096,
         layout=f"tp={min(2, p)},dp={max(1, ep // 2)},ep={ep}", ep_kernel="deepep-low-latency")


def _built(spec, degraded):
    f = topologies.build(spec)
    if degraded:
        e = f.endpoints
        f = f.without(chips=[e[1]], links=[next(iter(f.graph.edges(e[-1])))])
    return f


SPECS = ("nvl72", "cluster-128", "torus:4x4x2,chip=h100", "rail:servers=2,gpus=8,chip=h100",
         "fattree:k=4,chip=h100")


@pytest.mark.parametrize("degraded", [False, True], ids=["intact", "degraded"])
@pytest.mark.parametrize("spec", SPECS)
def test_a_dropped_fabric_takes_its_memos_with_it(spec, degraded, frozen_heap):
    f = _built(spec, degraded)
    intact = getattr(f, "intact", None)
    _exercise(f)
    missed = OWNERS - set(_MEMOS.get(f, {}))
    assert not missed, f"the exercise no longer reaches the memos of {sorted(missed)}"
    held = _holders(f) + (_holders(intact) if intact is not None else [])
    shown = [(owner, key[:3] if isinstance(key, tuple) else key) for owner, key in held[:3]]
    assert not held, f"{len(held)} memo values reach their fabric, e.g. {shown}"
    refs = [weakref.ref(g) for g in (f, intact) if g is not None]
    del f, intact
    gc.collect()
    assert all(ref() is None for ref in refs), "a fabric outlived its last reference"


def test_a_value_that_holds_its_fabric_is_found(frozen_heap):
    """The check itself: a memo value holding its fabric (as a traceback's frames did) is
    named, and keeps the fabric alive."""
    f = topologies.build("torus:2x2")
    memo = analysis._collectives.fabric_memo(f, "test_maint_s25")
    memo["bad"] = (1.0, {"view": types.SimpleNamespace(fabric=f)})
    memo["good"] = (1.0, np.zeros(3))
    assert _holders(f) == [("test_maint_s25", "bad")]
    ref = weakref.ref(f)
    del f, memo
    gc.collect()
    assert ref() is not None
    _MEMOS.pop(ref())
    gc.collect()
    assert ref() is None
