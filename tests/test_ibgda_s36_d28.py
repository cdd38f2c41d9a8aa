"""Session 36 (ibgda): DeepEP's low-latency kernels as deep_ep 1.2.1+d28bd67 builds them, the
build of NVIDIA's collector rows (``aic-deepep-*``; docs/sources.md s.7, session 36).

Three steps differ from de8cfca's profile (``deepep-low-latency``, the check set's build), each
read in the code and priced at the project's own latencies: the dispatch's grid (one token a
block up to 128 tokens: no later wave), the combine's TMA send (a warp's loads two at a time:
3 HBM loads after its first for a 14,336-B row, at least the phase's transfer) and its TMA
receive (``ExchangeKernel.reduce_stages``: one token's top-k ids, then its k copies through
3 stages, a floor under the receive copy, not added to it).
"""

import dataclasses
import math

import fidelity
import fidelity_heldout_moe
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import topologies
from analysis import moe_exchange
from fabric import EXCHANGE_LATENCY, SpecError, exchange_kernel

_V = exchange_kernel("deepep-low-latency@d28bd67")
_ROWS = {r["id"]: r for r in fidelity.heldout_rows()}


@pytest.mark.parametrize("k, stages, waves", [(8, 3, 3), (1, 3, 1), (9, 3, 3), (10, 3, 4),
                                              (8, 1, 8), (8, 8, 1)])
def test_receive_floor_is_the_top_k_load_and_one_l2_trip_per_stage_wave(k, stages, waves):
    kern = dataclasses.replace(exchange_kernel("deepep-low-latency"), name="x",
                               reduce_stages=stages)
    for arch, table in EXCHANGE_LATENCY.items():
        t, used = kern.receive_floor(arch, k)
        assert t == pytest.approx(table["hbm_load"].value + waves * table["l2_hit"].value)
        assert used == (table["hbm_load"], table["l2_hit"])
        t, used = kern.receive_floor(arch, k, l2_flushed=False)
        assert t == pytest.approx((1 + waves) * table["l2_hit"].value)
        assert used == (table["l2_hit"],)


def test_reduce_stages_is_a_count():
    kern = exchange_kernel("deepep-low-latency")
    assert kern.reduce_stages == 0 and kern.receive_floor("hopper", 8) == (0.0, ())
    with pytest.raises(SpecError, match=r"reduce_stages must be an int >= 0, got reduce_stages=-1"):
        dataclasses.replace(kern, name="x", reduce_stages=-1)
    for bad in (2.5, True, "3"):
        with pytest.raises(TypeError, match="reduce_stages must be an int >= 0"):
            dataclasses.replace(kern, name="x", reduce_stages=bad)
    assert "deepep-low-latency@d28bd67.reduce_stages" in {p.name for p in _V.parameters()}


def test_d28bd67_steps_on_one_h100_node():
    f = topologies.build("rail:servers=1,gpus=8,links=18,nic=ib-ndr,chip=h100")
    hbm, hit = (EXCHANGE_LATENCY["hopper"][n].value for n in ("hbm_load", "l2_hit"))

    def run(kern, tokens):
        return moe_exchange(f, "deepseek-v3", tokens, 8, kernel=kern, dispatch_bytes=1 + 4 / 128,
                            combine_bytes=2, routing="uniform")
    base, new = run("deepep-low-latency", 1), run(_V, 1)
    # 1 token: the warp's 7 chunks outlast the links (3 HBM loads after its first), and the
    # receiving group's top-k load + 3 stage waves outlast the chip-wide receive copy
    b, n = base.combine_phase, new.combine_phase
    assert b.transfer < 3 * hbm and n.transfer == pytest.approx(3 * hbm)
    assert b.local_copy < hbm + 3 * hit and n.local_copy == pytest.approx(hbm + 3 * hit)
    assert (n.fixed, n.chain) == (b.fixed, b.chain)
    assert new.dispatch == base.dispatch
    # 128 tokens: the links and the chip-wide copy bind; de8cfca's second dispatch wave is gone
    base, new = run("deepep-low-latency", 128), run(_V, 128)
    assert new.combine == base.combine
    assert new.dispatch_phase.fence == pytest.approx(base.dispatch_phase.fence / 2)
    assert new.dispatch_phase.chain < base.dispatch_phase.chain
    assert new.dispatch_phase.transfer == base.dispatch_phase.transfer


@pytest.mark.parametrize("row_id", ["aic-deepep-h100-ep8-ll-bs1-combine",
                                    "aic-deepep-b200-ep8-ll-bs16-combine"])
def test_collector_rows_take_the_d28bd67_build(row_id):
    value, how = fidelity_heldout_moe.CASES[row_id](_ROWS[row_id])
    assert how.startswith("deepep-low-latency@d28bd67")
    chip = row_id.split("-")[2]
    f = (topologies.build("rail:servers=1,gpus=8,links=18,nic=ib-ndr,chip=h100")
         if chip == "h100" else fidelity_heldout_moe._b200())
    r = moe_exchange(f, "deepseek-v3", int(row_id.split("-bs")[1].split("-")[0]), 8,
                     kernel=_V, dispatch_bytes=1 + 4 / 128, combine_bytes=2, routing="uniform")
    gap = 0.0 if chip == "h100" else 0.55
    assert value == pytest.approx(r.combine * 1e6 - gap, rel=1e-9)


def _send_schedule(chunks):
    """d28bd67's combine send loop for one warp, event by event (loads take 1 unit; the rest
    is free): the first chunk's load before the loop, then each iteration issues the next
    chunk's load, waits for its own chunk's, stores it. Units from the first store to the last."""
    done = {0: 1.0}                      # load i completes at done[i]
    t = 0.0
    first = None
    for i in range(chunks):
        if i + 1 < chunks:
            done[i + 1] = t + 1.0         # issued now, before the wait
        t = max(t, done[i])               # mbarrier_wait, then the TMA store
        first = t if first is None else first
    return t - first


def _receive_schedule(copies, stages):
    """d28bd67's combine receive for one token: the TMA warp loads copy i into stage i % stages
    once the reduction warps freed it (copy i - stages reduced); each load takes 1 unit, the
    reductions are free. Units until the last copy is reduced."""
    reduced = []
    for i in range(copies):
        issue = reduced[i - stages] if i >= stages else 0.0
        reduced.append(max(issue + 1.0, reduced[-1] if reduced else 0.0))
    return reduced[-1]


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 64))
def test_send_rounds_follow_the_loop_schedule(chunks):
    # the variant's count, ceil(bytes / stage_vector) - 1 with 2,048-B chunks, is the loop's
    # dependent loads after the first store
    nbytes = chunks * 2048
    assert math.ceil(nbytes / _V.stage_vector[1]) - 1 == _send_schedule(chunks)


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 32), st.integers(1, 8))
def test_receive_waves_follow_the_stage_schedule(copies, stages):
    kern = dataclasses.replace(_V, name="x", reduce_stages=stages)
    hbm, hit = (EXCHANGE_LATENCY["hopper"][n].value for n in ("hbm_load", "l2_hit"))
    t, _ = kern.receive_floor("hopper", copies)
    assert t == pytest.approx(hbm + _receive_schedule(copies, stages) * hit)


def test_ncclep_takes_the_same_tma_terms():
    # NCCL EP 36191590's combine has DeepEP's TMA send and receive: at 1 token both bind
    f = topologies.build("rail:servers=1,gpus=8,links=18,nic=ib-ndr,chip=h100")
    hbm, hit = (EXCHANGE_LATENCY["hopper"][n].value for n in ("hbm_load", "l2_hit"))
    r = moe_exchange(f, "deepseek-v3", 1, 8, kernel="ncclep-low-latency", dispatch_bytes=2,
                     combine_bytes=2, routing="uniform")
    assert r.combine_phase.transfer == pytest.approx(3 * hbm)
    assert r.combine_phase.local_copy == pytest.approx(hbm + 3 * hit)
