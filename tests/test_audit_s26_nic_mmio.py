"""Audit, session 26: a chip's load or store to its own NIC's registers is a load/store.

The address plan maps each NIC's registers (``nicK.mmio``), and a window onto them lets a
chip load or store there. But ``fabric.loadstore_domains`` puts a NIC in no load/store
domain ("a NIC turns memory transactions into messages"), so ``fabric.reach`` never chose
load/store for a NIC: ``route rail:servers=3,gpus=2,chip=h100 chip0 nic0`` (chip0's own NIC,
one PCIe link) was timed as an RDMA message (2,121.8 ns, the NIC's send and receive stages),
and ``--transport loadstore`` was refused as "crossing a NIC", though the path ends at it.
An MMIO access is a PCIe load or store (GPUs ring NIC doorbells that way). Lead's decision
(session 26): a NIC's registers are reached by load/store over its own load/store links
(from its chip: the route is that one link); from anywhere else as before (on a rail server
up/down routes chip1 -> nic0 through nic1 and the InfiniBand rails: a message).
"""

import pytest
from degrade import built
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fabric import AddressPlan, RoutingError, Window, access, access_to, reach

SPECS = ["rail:servers=3,gpus=2,chip=h100", "rail:servers=2,gpus=4,chip=h100,spines=2",
         "cluster-128"]


def _mmio(spec):
    """``spec`` with a window of every host onto every NIC's registers."""
    f = built(spec)
    nics = sorted(n for n in f.graph if f.graph.nodes[n]["kind"] == "nic")
    return f.replace(address_plan=AddressPlan(windows=[
        Window(h, (1 << 50) + (k << 36), size=1 << 21, target=f"{n}.mmio", name=f"m-{n}")
        for h in f.domains for k, n in enumerate(nics)])), nics


def _own_nic(f, chip):
    """The NICs a load/store link joins ``chip`` to."""
    G = f.graph
    return [n for n in G[chip] if G.nodes[n]["kind"] == "nic"
            and G.edges[chip, n]["carries"] == "loadstore"]


def test_a_chip_loads_its_own_nics_registers_over_pcie():
    f, _ = _mmio("rail:servers=3,gpus=2,chip=h100")
    assert reach(f, "chip0", "nic0") == "loadstore"                  # 'rdma' on 9f3470b
    for tr in ("native", "loadstore"):
        a = access_to(f, "chip0", "nic0", transport=tr)
        assert (a.transport, a.path, a.hops) == ("loadstore", ("chip0", "nic0"), 1)
    # one PCIe link each way and the load/store stages: no NIC send or receive
    assert a.total < access_to(f, "chip0", "nic0", transport="rdma").total / 4


def test_another_chip_reaches_the_nic_as_before():
    f, _ = _mmio("rail:servers=3,gpus=2,chip=h100")
    assert reach(f, "chip1", "nic0") == "rdma" and reach(f, "chip0", "nic2") == "rdma"
    a = access_to(f, "chip1", "nic0", transport="native")
    assert a.transport == "rdma" and "nic1" in a.path           # up/down: chips never forward
    for src, nic in (("chip1", "nic0"), ("chip0", "nic2")):
        with pytest.raises(RoutingError, match="only over its own load/store links"):
            access_to(f, src, nic, transport="loadstore")
    # a chip's own memory keeps its rule and message
    with pytest.raises(RoutingError, match="does not cross a NIC"):
        access_to(f, "chip0", "chip2", transport="loadstore")


def test_a_nic_issues_no_load_or_store():
    f, _ = _mmio("rail:servers=3,gpus=2,chip=h100")
    assert reach(f, "nic0", "chip0") == "rdma"


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(SPECS), st.data(), st.sampled_from(["load", "store"]))
def test_native_is_load_store_exactly_over_the_nics_own_link(spec, data, op):
    f, nics = _mmio(spec)
    chip = data.draw(st.sampled_from(list(f.endpoints)))
    nic = data.draw(st.sampled_from(nics))
    own = nic in _own_nic(f, chip)
    addr = f.address_map.region(f"{nic}.mmio").base + data.draw(st.integers(0, (1 << 21) - 64))
    a = access(f, chip, addr, op=op, transport="native")
    assert a.target == nic
    assert (a.transport == "loadstore") == own
    if own:
        assert a.path == (chip, nic) and a.hops == 1
    else:
        assert any(f.graph.nodes[n]["kind"] == "nic" for n in a.path[1:-1]) or \
            any(f.graph.edges[u, v]["carries"] == "messages"
                for u, v in zip(a.path, a.path[1:], strict=False))
