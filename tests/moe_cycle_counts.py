"""Shared by the session-25 cycle-count tests (test_moe_s25_claim_cycles, _payload_cycles,
_prepare_cycles) and the other tests of ExchangeKernel.cycles: a kernel profile as it was
before a count (the count unset in both phases' cycle tables and its chain steps taken out),
and one BF16 token's exchange on EP8 of GB200 NVL72, intact or degraded."""
import dataclasses

import pytest

import topologies
from analysis import moe_exchange
from fabric import exchange_kernel


def cycles_without(kernel, *names):
    """``kernel``'s cycle tables (ExchangeKernel.cycles) without the counts ``names``, in both
    phases."""
    return tuple(tuple(e for e in table if e[0] not in names) for table in kernel.cycles)


def without_count(name, field, unset, steps, phases=(0, 1)):
    """Profile ``name`` with the cycle count ``field`` set to ``unset`` (none) and every chain
    step in ``steps`` removed, in ``phases`` (0 dispatch, 1 combine; both by default): the
    profile before the count."""
    k = exchange_kernel(name)
    chain = tuple(tuple(s for s in phase if i not in phases or s not in steps)
                  for i, phase in enumerate(k.chain))
    assert not unset
    cycles = tuple(t if i not in phases else t0
                   for i, (t, t0) in enumerate(zip(k.cycles, cycles_without(k, field))))
    return dataclasses.replace(k, chain=chain, cycles=cycles)


def gb200_one_token(kernel, degraded):
    """moe_exchange of one BF16 token a rank on EP8 of gb200-nvl72 (balanced routing, BF16 both
    ways); ``degraded`` cuts the link of the second endpoint that sorts first by name."""
    f = topologies.build("gb200-nvl72")
    if degraded:
        a = f.endpoints[1]
        f = f.without(links=[(a, min(f.graph.neighbors(a), key=str))])
    return moe_exchange(f, "deepseek-v3", 1, 8, kernel=kernel, dispatch_bytes=2, combine_bytes=2,
                        routing="balanced")


def assert_moves_only(r, r0, phase, seconds):
    """``phase`` ("dispatch" or "combine") of ``r`` is ``seconds`` longer than ``r0``'s, in its
    chain and in its time; the other phase is unchanged."""
    other = "combine" if phase == "dispatch" else "dispatch"
    assert (getattr(r, f"{phase}_phase").chain - getattr(r0, f"{phase}_phase").chain
            == pytest.approx(seconds, rel=1e-9))
    assert getattr(r, phase) - getattr(r0, phase) == pytest.approx(seconds, rel=1e-9)
    assert getattr(r, other) == getattr(r0, other)
