"""A MoE exchange kernel's further barrier in one load/store domain is one store-and-spin
handoff, priced by the symmetric-memory runtime's own rule (session 23, moe; lead 09:00:
analysis._moe_exchange._further_barrier reuses analysis._runtime_cost.flag_barrier).

DeepEP's notify barrier (deepseek-ai/DeepEP ebfe47e csrc/kernels/utils.cuh barrier_device): an
atomic on the rank's own slot, fence.acq_rel.sys, an atomic on each peer's slot whose result is
discarded (ATOM ... PT, RZ as compiled), then a spin on its own slots: a flag sent one way. Only
deepep-normal pays a further barrier (syncs (2, 2)); the one-sided kernels' one barrier a phase
is the kernel floor's.
"""

import dataclasses

import pytest

import topologies
from analysis import moe_exchange
from analysis._collectives import _GroupView
from analysis._runtime_cost import flag_barrier
from fabric import EXCHANGE_KERNELS, EXCHANGE_LATENCY, exchange_kernel, runtime


def _barrier(f):
    v = _GroupView(f, "all-reduce", tuple(f.endpoints), f.endpoint_indices, None, None, True)
    return flag_barrier(runtime("symmetric-memory"), v)


def _fabrics():
    h800 = topologies.build("rail:servers=1,gpus=8,links=8,nic=ib-ndr,chip=h800")
    b200 = topologies.build("hgx-b200")
    a = b200.endpoints[0]
    cut = b200.without(links=[(a, min(b200.graph.neighbors(a), key=str))])
    return {"h800": h800, "b200": b200, "b200-degraded": cut}


@pytest.mark.parametrize("name", ["h800", "b200", "b200-degraded"])
def test_deepep_normal_second_barrier_is_the_runtimes_flag_barrier(name):
    """Per phase the second synchronisation costs the runtime's flag barrier over the EP
    ranks (Hopper 556.6 ns, Blackwell 1440.5 ns on an 8-GPU NVSwitch board; on a degraded
    board the routed path, never shorter) plus DeepEP's own two steps before its flag goes
    out (the own slot's atomic the fence waits for, the peer pointer's L2 reload; review
    S23-R9); the first stays the kernel floor. The parent priced it as a path round trip
    with no GPU side (600 ns on both)."""

    f = _fabrics()[name]
    k = exchange_kernel("deepep-normal")
    one = dataclasses.replace(k, syncs=(1, 1))
    kw = {"dispatch_bytes": 1 + 4 / 128, "combine_bytes": 2, "routing": "uniform"}
    r, r1 = (moe_exchange(f, "deepseek-v3", 128, 8, kernel=x, **kw) for x in (k, one))
    arch = "hopper" if name == "h800" else "blackwell"
    lat = EXCHANGE_LATENCY[arch]
    assert k.sync_steps == (("l2_atomic", 1), ("l2_hit", 1))
    want = _barrier(f) + lat["l2_atomic"].value + lat["l2_hit"].value
    for a, b in ((r.dispatch_phase, r1.dispatch_phase), (r.combine_phase, r1.combine_phase)):
        assert a.fixed - b.fixed == pytest.approx(want, rel=1e-12)
    if name == "h800":
        assert round(_barrier(f) * 1e9, 1) == 556.6
    elif name == "b200":
        assert round(_barrier(f) * 1e9, 1) == 1440.5
    else:
        assert _barrier(f) >= _barrier(_fabrics()["b200"])
    names = {p.name for p in r.parameters}
    assert any(n.endswith("peer_load") for n in names)


def test_only_kernels_with_a_second_barrier_pay_it(monkeypatch):
    """The one-sided, low-latency and pplx kernels synchronise once a phase (their kernel
    floor): they never ask for the further-barrier rule."""
    import analysis._moe_exchange as mx
    assert [n for n, k in EXCHANGE_KERNELS.items() if max(k.syncs) > 1] == ["deepep-normal"]

    def refuse(*a):
        raise AssertionError("further barrier asked for")
    monkeypatch.setattr(mx, "_further_barrier", refuse)
    f = _fabrics()["b200"]
    for kern in ("one-sided", "one-sided-1.3", "deepep-low-latency", "pplx"):
        moe_exchange(f, "deepseek-v3", 4, 8, kernel=kern, dispatch_bytes=2, combine_bytes=2,
                     routing="uniform")
    with pytest.raises(AssertionError, match="further barrier"):
        moe_exchange(f, "deepseek-v3", 4, 8, kernel="deepep-normal", dispatch_bytes=2,
                     combine_bytes=2, routing="uniform")


def test_sync_steps_are_validated_and_sourced():
    k = exchange_kernel("deepep-normal")
    p = next(p for p in k.parameters() if p.name == "deepep-normal.sync_steps")
    assert p.value == "l2_atomic x 1, l2_hit x 1"
    assert "barrier_device" in p.source and "ATOM.E.ADD.STRONG.SYS PT, RZ" in p.source
    for bad in [(("l2_atomic", 0),), (("peer_load", 1),)]:
        with pytest.raises(ValueError, match="sync_steps"):
            dataclasses.replace(k, sync_steps=bad)
    # session 38: a wrong kind (a bool or float count, a bare pair, a list) is a TypeError
    for bad in [(("l2_hit", True),), ("l2_hit", 1), [("l2_hit", 1)], (("l2_hit", 1.0),)]:
        with pytest.raises(TypeError, match="sync_steps"):
            dataclasses.replace(k, sync_steps=bad)
