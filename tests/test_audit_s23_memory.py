"""Audit session 23: a host's DRAM pays the serving chip's own host link.

Until session 23 a chip's access to its own host's DRAM was a 30 ns local access: the PCIe or
NVLink-C2C link between the GPU and its host's memory had no time. Now the serving chip's load
of its host's memory is a measured figure by link kind (``fabric.HOST_MEMORY_LOAD``: nvbandwidth
``host_device_latency_sm``, GB200 over C2C 585.9 ns, H200 over PCIe 1191.19 ns), added after the
responder check; a posted store pays half. Checked: the stage is exactly what separates an
access to a host's DRAM from the same access to the serving chip's own memory, on random
fabrics and failures; it does not change which chip serves; chips with no measured link pay
nothing.
"""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_audit_s22_memory import _build, _dram  # every host with a window onto every DRAM

import topologies
from fabric import (
    HOST_MEMORY_LOAD,
    AddressPlan,
    FabricError,
    Window,
    access,
    access_to,
    chip_spec,
    host_link,
)

SPECS = ("switch:8,planes=2,hosts=4,chip=gb200", "torus:4x4,hosts=4,chip=h200",
         "rail:servers=3,gpus=2,chip=h100", "hypermesh:2x2x2,connect=switch,hosts=2,chip=b200",
         "mesh:3x3,hosts=3,chip=tpu-v4")

def test_each_kind_of_host_link_has_its_measured_load():
    assert host_link(chip_spec("gb200")) == host_link(chip_spec("gb300")) == "nvlink-c2c"
    assert {host_link(chip_spec(c)) for c in ("h100", "h200", "h800", "h20", "b200", "b300")} \
        == {"pcie"}
    assert host_link(chip_spec("tpu-v4")) is None and host_link(None) is None
    assert HOST_MEMORY_LOAD["nvlink-c2c"].value == pytest.approx(2343.55e-9 / 4)
    assert HOST_MEMORY_LOAD["pcie"].value == pytest.approx(1191.19e-9)
    for p in HOST_MEMORY_LOAD.values():
        assert p.unit == "s" and "host_device_latency_sm" in p.source


@pytest.mark.parametrize("spec, kind", [("gb200-nvl72", "nvlink-c2c"), ("hgx-h200", "pcie"),
                                        ("dgx-h100", "pcie"), ("sd200-ultra", None),
                                        ("tpu-v4-cube", None)])
def test_a_chip_pays_its_host_link_to_its_own_hosts_dram(spec, kind):
    # a local access: translation and check (30 ns) + the host link; a store pays it one way
    f = topologies.build(spec)
    h = next(iter(f.domains))
    chip = f.domains[h][-1]
    t = 0.0 if kind is None else HOST_MEMORY_LOAD[kind].value
    load = access(f, chip, _dram(f, h), op="load")
    store = access(f, chip, _dram(f, h), op="store")
    assert (load.target, load.hops) == (chip, 0)
    assert load.host_memory == pytest.approx(t) and store.host_memory == pytest.approx(t / 2)
    assert load.total == pytest.approx(30e-9 + t, rel=1e-12)
    assert store.total == pytest.approx(30e-9 + t / 2, rel=1e-12)
    assert sum(load.breakdown().values()) == pytest.approx(load.total, rel=1e-12)
    assert load.slowest == pytest.approx(load.total, rel=1e-12)


@st.composite
def degraded(draw):
    f = _build(draw(st.sampled_from(SPECS)))
    edges = sorted(f.graph.edges, key=str)
    links = draw(st.lists(st.sampled_from(edges), max_size=3, unique_by=frozenset))
    chips = draw(st.lists(st.sampled_from(f.endpoints), max_size=1))
    links = [e for e in links if not set(e) & set(chips)]
    try:
        g = f.without(links=links, chips=chips)
    except FabricError:
        g = f
    return g, draw(st.sampled_from(g.endpoints)), draw(st.sampled_from(sorted(g.domains)))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(degraded(), st.sampled_from(["load", "store"]))
def test_a_hosts_dram_costs_the_serving_chips_memory_plus_the_host_link(case, op):
    g, src, h = case
    try:
        a = access(g, src, _dram(g, h), op=op)
    except FabricError:
        return                                   # no chip of the host reached: named elsewhere
    b = access_to(g, src, a.target, op=op)       # the same path to the serving chip's HBM
    kind = host_link(g.chip)
    t = 0.0 if kind is None else HOST_MEMORY_LOAD[kind].value * (1 if op == "load" else 0.5)
    assert a.path == b.path and a.return_path == b.return_path
    assert a.host_memory == pytest.approx(t, rel=1e-12)
    assert a.total == pytest.approx(b.total + t, rel=1e-12)
    assert a.slowest == pytest.approx(b.slowest + t, rel=1e-12)
    assert sum(a.breakdown().values()) == pytest.approx(a.total, rel=1e-12)
    assert b.host_memory == 0.0


def test_a_hosts_storage_window_is_not_charged_its_dram_load():
    # found by the session's hunt: the first cut (c2f6108) charged every region a host domain
    # owns, so a window onto host0's storage (an NVMe controller memory buffer) paid the
    # DRAM load over PCIe (1221.2 ns instead of 30.0)
    f = topologies.build("hgx-h200")
    f = f.replace(address_plan=AddressPlan(storage=1 << 30, windows=(
        Window("host0", 1 << 50, size=1 << 21, target="host0.storage", name="nvme"),)))
    a = access(f, "chip0", f.address_map.region("host0.storage").base + 64)
    assert (a.target, a.host_memory) == ("chip0", 0.0)
    assert a.total == pytest.approx(30e-9, rel=1e-12)
    b = access(f, "chip0", _dram(f, "host0"))
    assert b.host_memory == pytest.approx(HOST_MEMORY_LOAD["pcie"].value)


@pytest.mark.parametrize("transport", ["rdma", "native"])
def test_a_message_to_a_hosts_dram_is_not_charged_the_gpus_host_link(transport):
    # found by the session's hunt: an RDMA access to another host's DRAM (cluster-128: chip0
    # to host1) paid the serving GPU's PCIe load (+1191.2 ns) on top of the receiving NIC's
    # own DMA over PCIe (nic_rx): the NIC reads and writes host memory itself
    f = topologies.build("cluster-128")
    f = f.replace(address_plan=AddressPlan(windows=(
        Window("host0", 1 << 50, size=1 << 21, target="host1.dram", name="w1"),)))
    for op in ("load", "store"):
        a = access(f, "chip0", _dram(f, "host1"), op=op, transport=transport)
        b = access_to(f, "chip0", a.target, op=op, transport=transport)
        assert (a.transport, a.target, a.host_memory) == ("rdma", "chip8", 0.0)
        assert a.total == pytest.approx(b.total, rel=1e-12)
