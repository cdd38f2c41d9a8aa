"""Audit session 33: a runtime holds every key its cost reads, checked when it is built.

A Runtime made by ``dataclasses.replace`` without a key of one of its tables was accepted and
failed with a bare KeyError deep in analysis._runtime_cost: of the "nccl" profile's 219
table keys (its split table aside), dropping any of 115 raised KeyError from ``cost`` on
hgx-h200 / hgx-b200 / cluster-128 / gb200-nvl72 (a probe; the others are
read on paths that sweep did not take). Now the runtime refuses itself: a library runtime holds every key of
the "nccl" profile's tables (every "nccl@<version>" profile holds the same), a one-sided one
its kernel floor per architecture; a table that is not a dict is a TypeError.
"""
import dataclasses
import re

import pytest

from fabric import SpecError, runtime
from fabric._runtime import TORCH_SYMM_MEM, VLLM_CUSTOM_ALLREDUCE

_NCCL = runtime("nccl")
_TABLES = [(f.name, key) for f in dataclasses.fields(_NCCL) if f.name != "split"
           and isinstance(getattr(_NCCL, f.name), dict) for key in getattr(_NCCL, f.name)]


def _without(rt, field, key, **kw):
    table = {k: v for k, v in getattr(rt, field).items() if k != key}
    return dataclasses.replace(rt, **{field: table, **kw})


def test_a_library_runtime_missing_any_key_is_refused_by_name():
    assert len(_TABLES) >= 219
    for field, key in _TABLES:
        with pytest.raises(SpecError, match=rf"^runtime 'mine': its {field} table misses "
                                            rf"{re.escape(repr(key))}: a library runtime"):
            _without(_NCCL, field, key, name="mine")


@pytest.mark.parametrize("rt", [runtime("symmetric-memory"), VLLM_CUSTOM_ALLREDUCE,
                                TORCH_SYMM_MEM], ids=lambda rt: rt.name)
def test_a_one_sided_runtime_needs_its_kernel_floor_per_architecture(rt):
    with pytest.raises(SpecError, match="kernel_floor table misses 'blackwell': a one-sided"):
        _without(rt, "kernel_floor", "blackwell")
    with pytest.raises(TypeError, match="kernel_floor must be a dict, got None"):
        dataclasses.replace(rt, kernel_floor=None)


def test_every_shipped_profile_holds_its_keys():
    for rt in (runtime("ideal"), _NCCL, runtime("nccl", "2.18.3"), runtime("nccl", "2.25.1"),
               runtime("symmetric-memory"), VLLM_CUSTOM_ALLREDUCE, TORCH_SYMM_MEM):
        assert dataclasses.replace(rt) == rt
    assert dataclasses.replace(runtime("ideal"), factors={}).kind == "ideal"   # reads none
