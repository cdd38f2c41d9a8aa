"""Audit session 10: what an owner holds (session 9's two open address-side questions).

Before: a plan could interleave a set over chips whose whole HBM the layout already maps
(hgx-h200 with a 512 MiB pool over chip0/chip1: each chip "served" 141 GB + 256 MiB, and
``check`` called it clean), or give an HBM region (or any memory) to a switch or a NIC,
whose accesses were then timed to the switch, silently. Now :func:`fabric.check` reports
both (``capacity`` and ``invalid``) and ``Fabric.address_map`` refuses them, as it refuses
every other error of a plan (fabric._plan, "Owners hold what their regions say").

The reference below is written from that docstring: the kind table, and an owner's
memory counted byte by byte (every granule of a set decoded with the CXL formula).
"""

import networkx as nx
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import topologies
from analysis._cli import main
from fabric import AddressMapError, AddressPlan, Fabric, Region, check
from fabric._domains import domain_of
from fabric._plan import layout_regions

MiB, GiB = 1 << 20, 1 << 30
H100_HBM = 80 * 10**9
MEM_CAPACITY = 4 * GiB

# The kinds each owner may hold, as the module docstring states them.
ALLOWED = {"hbm": {"chip"}, "dram": {"chip", "domain", "memory"},
           "storage": {"domain", "memory"}}
KIND_OF = {"c0": "chip", "c1": "chip", "c2": "chip", "c3": "chip", "h0": "domain",
           "h1": "domain", "sw": "switch", "nic0": "nic", "mem0": "memory"}


def _small_fabric():
    """Four h100 chips in two host domains (h0 has a host node of its name), a switch,
    a NIC and a 4 GiB memory node."""
    G = nx.Graph()
    for i in range(4):
        G.add_node(f"c{i}", kind="chip", host=f"h{i // 2}")
        G.add_edge(f"c{i}", "sw")
    G.nodes["sw"]["kind"] = "switch"
    G.add_node("nic0", kind="nic")
    G.add_node("mem0", kind="memory", capacity=MEM_CAPACITY)
    G.add_node("h0", kind="host", host="h0")
    G.add_edges_from([("nic0", "sw"), ("mem0", "sw"), ("h0", "c0")])
    nx.set_edge_attributes(G, 50e9, "bandwidth")
    nx.set_edge_attributes(G, 1e-7, "latency")
    return Fabric.from_graph(G, endpoints=[f"c{i}" for i in range(4)], chip="h100")


FABRIC = _small_fabric()


@st.composite
def plans(draw):
    layout = draw(st.sampled_from(["owner-bits", "packed", "explicit"]))
    hbm = draw(st.sampled_from([None, H100_HBM - GiB, H100_HBM - 256 * MiB, H100_HBM,
                                H100_HBM + 4096]))
    owners = sorted(KIND_OF)
    sets = []
    for i in range(draw(st.integers(0, 3))):
        ways = draw(st.sampled_from([1, 2, 4]))
        who = tuple(draw(st.permutations(owners))[:ways])
        sets.append(Region(0 if layout != "explicit" else (1 << 48) + i * (1 << 40),
                           ways * 256 * MiB * draw(st.integers(1, 3)), who,
                           kind=draw(st.sampled_from(["hbm", "dram", "storage", "mmio"])),
                           granularity=draw(st.sampled_from([4096, 16384])), name=f"set{i}"))
    regions = []
    for i in range(draw(st.integers(0, 2))):
        regions.append(Region((1 << 50) + i * (1 << 40),
                              draw(st.sampled_from([4096, 256 * MiB, 2 * GiB,
                                                    81 * 10**9 // 4096 * 4096])),
                              draw(st.sampled_from(owners)),
                              kind=draw(st.sampled_from(["hbm", "dram", "storage", "mmio"])),
                              name=f"r{i}"))
    return AddressPlan(layout=layout, hbm_bytes=hbm, host_memory=GiB, interleave=sets,
                       regions=regions)


def _reference(plan):
    """(regions of a kind their owner cannot hold, owners given too much, plan-wide fault)."""
    regions = layout_regions(FABRIC, plan)
    wrong, held = set(), {}
    for r in regions:
        if r.kind not in ALLOWED:
            continue
        bad = [o for o in r.owners if KIND_OF[o] not in ALLOWED[r.kind]]
        if bad:
            wrong.add(r.name)
        for pos, o in enumerate(r.owners):
            if o in bad:
                continue
            if r.ways == 1:
                held[o] = held.get(o, 0) + r.size
            else:       # count the bytes that decode to this owner, granule by granule
                g = r.granularity
                starts = np.arange(0, r.size, g, dtype=np.int64)
                held[o] = held.get(o, 0) + int(((starts // g) % r.ways == pos).sum()) * g
    whole = None
    if plan.layout != "explicit" and plan.hbm_bytes is not None:
        whole = plan.hbm_bytes - plan.hbm_bytes % 4096
    cap = {**{c: H100_HBM for c in FABRIC.endpoints}, "mem0": MEM_CAPACITY}
    too_much = {o for o, n in held.items() if o in cap and n > cap[o]}
    plan_wide = whole is not None and whole > H100_HBM
    if plan_wide:
        too_much -= set(FABRIC.endpoints)
    return wrong, too_much, plan_wide


def _found(findings):
    wrong = {x.where for x in findings if x.code == "invalid" and "which holds no" in x.message}
    too_much = {x.message.split("'")[1] for x in findings
                if x.code == "capacity" and x.where != "address plan"}
    plan_wide = any(x.code == "capacity" and x.where == "address plan" for x in findings)
    return wrong, too_much, plan_wide


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(plans())
def test_owner_findings_match_a_byte_count_reference(plan):
    f = FABRIC.replace(address_plan=plan)
    found = check(f)
    want = _reference(plan)
    assert _found(found) == want
    # the plan is refused exactly where check() finds an error: by the map (an owner's
    # regions), or by a host domain whose default window has no one target (session 35:
    # an owner holding two HBM regions, none named '<owner>.hbm'); a clean owner side builds
    errors = [x for x in found if x.severity == "error"]
    if errors:
        with pytest.raises(AddressMapError):
            _ = f.address_map
            for host in f.domains:
                domain_of(f, host)
    elif not any(want[:2]) and not want[2]:
        assert len(f.address_map) == len(layout_regions(FABRIC, plan))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(plans(), st.lists(st.sampled_from(["c1", "c2", "c3", "nic0"]), min_size=1,
                         max_size=2, unique=True))
def test_failures_do_not_change_what_an_owner_holds(plan, dead):
    # the hardware as built holds the memory; a failed chip or NIC still owns its regions
    f = FABRIC.replace(address_plan=plan)
    g = f.without(chips=dead)
    assert _found(check(g)) == _found(check(f))


def test_a_pool_over_chips_on_top_of_their_whole_hbm_is_a_capacity_error():
    # the repro: hgx-h200, a 512 MiB pool over chip0/chip1 next to their full 141 GB regions
    f = topologies.build("hgx-h200")
    pool = Region(0, 512 * MiB, ("chip0", "chip1"), granularity=4096, name="pool")
    g = f.replace(address_plan=AddressPlan(interleave=[pool]))
    found = check(g)
    assert [(x.code, x.where) for x in found] == [("capacity", "chip0"), ("capacity", "chip1")]
    assert "141GB (141000000000 bytes) of HBM of its chip (h200)" in found[0].message
    assert "268.4MB of 'pool' (1/2 of the set)" in found[0].message
    with pytest.raises(AddressMapError, match="capacity: chip 'chip0'"):
        g.translate("host0", 0)
    # making room with hbm_bytes is clean, and the pool's second granule is on chip1
    ok = f.replace(address_plan=AddressPlan(hbm_bytes=140 * 10**9, interleave=[pool]))
    assert check(ok) == []
    base = ok.address_map.region("pool").base
    assert ok.address_map.lookup(base + 4096).owner == "chip1"


def test_hbm_bytes_above_the_chip_is_one_finding():
    f = topologies.build("sd200-ultra").replace(address_plan=AddressPlan(hbm_bytes=65 * 10**9))
    found = [x for x in check(f) if x.code == "capacity"]
    assert len(found) == 1 and "hbm_bytes=65000000000" in found[0].message


@pytest.mark.parametrize("region, who", [
    (Region(1 << 50, GiB, "nvs0", name="x"), "switch 'nvs0'"),
    (Region(1 << 50, GiB, "nic0", kind="dram", name="x"), "nic 'nic0'"),
    (Region(1 << 50, GiB, "host1", name="x"), "host domain 'host1'"),
    (Region(1 << 50, GiB, "chip3", kind="storage", name="x"), "chip 'chip3'"),
])
def test_a_region_its_owner_cannot_hold_is_invalid(region, who):
    f = topologies.build("rail:servers=2,gpus=4,chip=h100")
    g = f.replace(address_plan=AddressPlan(regions=[region]))
    found = check(g)
    assert [(x.code, x.where) for x in found] == [("invalid", "x")]
    assert who in found[0].message and "which holds no" in found[0].message
    with pytest.raises(AddressMapError, match="which holds no"):
        _ = g.address_map
    # registers may be anywhere
    mmio = Region(1 << 50, GiB, region.owner, kind="mmio", name="x")
    assert check(f.replace(address_plan=AddressPlan(regions=[mmio]))) == []


def test_a_dram_set_over_a_nic_and_a_host(tmp_path, capsys):
    path = tmp_path / "s.toml"
    path.write_text('[system]\ntopology = "rail:servers=2,gpus=4,chip=h100"\n'
                    '[[interleave]]\nname = "pool"\nowners = ["nic0", "host1"]\n'
                    'granularity = "4KiB"\nsize = "512MiB"\n')
    assert main(["check", str(path)]) == 1
    out, _ = capsys.readouterr()
    assert "interleaved over nic 'nic0', which holds no dram" in out
    rc = main(["translate", str(path), "--host", "host0", "0x0"])
    out, err = capsys.readouterr()
    assert rc == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert "which holds no dram" in err and "Traceback" not in err


@pytest.mark.parametrize("addresses", [
    np.uint64(1 << 63),                                     # a 0-d array
    np.array([[1, 1 << 63]], dtype=np.uint64),              # 2-D: the flat argmax indexed rows
    np.array([[5], [1 << 60]], dtype=np.uint64),
])
def test_too_wide_unsigned_arrays_are_named_at_any_shape(addresses):
    # before: IndexError ('too many indices for array', 'index 1 is out of bounds for axis 0')
    f = topologies.build("sd200-ultra")
    with pytest.raises(AddressMapError, match="wider than the 57-bit address width"):
        f.address_map.lookup_many(addresses, unmapped="mask")
    from fabric import TranslationError
    with pytest.raises(TranslationError, match="wider than the 57-bit address width"):
        f.host_domains["host0"].translate_many(addresses)
    # in range, any shape answers in that shape
    ok = np.array([[5, 7]], dtype=np.uint64)
    assert f.address_map.lookup_many(ok).owner.shape == (1, 2)


# -- a pinned placement that is not the fabric's (chips / domains of AddressPlan) ----------

def test_a_plan_pinned_on_one_fabric_given_to_another_is_invalid():
    # before: clean apart from 128 'unreachable' chips "which has failed"; hgx-h200's chip
    # slots were sd200-ultra's
    g = topologies.build("sd200-ultra").without(chips=["chip9"])
    h = topologies.build("hgx-h200").replace(address_plan=g.address_plan)
    found = check(h)
    bad = [x for x in found if x.code == "invalid" and x.where == "address plan"]
    assert len(bad) == 2 and "'chip8', 'chip9', 'chip10' and 117 more are not a chip" \
        in bad[0].message and "'host1'" in bad[1].message
    assert not any("has failed" in x.message for x in found)
    with pytest.raises(AddressMapError, match="the plan's chips are not the chips of"):
        h.translate("host0", 0)


@pytest.mark.parametrize("chips, says", [
    (("chip0", "chip1", "bogus"), "'bogus' is not a chip of it"),         # was: 'has failed'
    (("chip0",), "'chip1', 'chip2', 'chip3' and 4 more are not placed"),  # was: clean
    (("chip1", "chip0") + tuple(f"chip{r}" for r in range(2, 8)), "the order differs"),
])
def test_placed_chips_must_be_the_fabrics(chips, says):
    f = topologies.build("hgx-h200").replace(address_plan=AddressPlan(chips=chips))
    found = check(f)
    assert any(x.code == "invalid" and says in x.message for x in found), found
    assert not any("has failed" in x.message for x in found)


@pytest.mark.parametrize("domains, says", [
    ({"host0": ("chip0",)}, "'host0' holds other chips"),                 # was: clean
    ({"hostX": tuple(f"chip{r}" for r in range(8))}, "'hostX' is not a host domain"),
])
def test_placed_domains_must_be_the_fabrics(domains, says):
    f = topologies.build("hgx-h200").replace(address_plan=AddressPlan(domains=domains))
    assert any(x.code == "invalid" and says in x.message for x in check(f))


@pytest.mark.parametrize("kw", [{"chips": "chip0"}, {"chips": [["chip0"]]}, {"chips": 5},
                                {"domains": {"host0": 5}}, {"domains": [("host0",)]},
                                {"domains": {"host0": [["chip0"]]}}])
def test_placement_of_the_wrong_shape_is_a_named_type_error(kw):
    # before: check raised "unhashable type: 'list'", or read a string letter by letter
    with pytest.raises(TypeError, match="AddressPlan (chips|domains)"):
        AddressPlan(**kw)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(["sd200-ultra", "rail:servers=2,gpus=4,chip=h100",
                        "torus:4x4,hosts=2,chip=h100"]), st.data())
def test_the_placement_fabric_without_pins_is_always_the_fabrics(spec, data):
    f = topologies.build(spec)
    dead = data.draw(st.lists(st.sampled_from(list(f.endpoints[1:])), min_size=1, max_size=3,
                              unique=True))
    g = f.without(chips=dead)
    assert g.address_plan.chips is not None
    assert not [x for x in check(g) if x.where == "address plan"]
    # dropping or renaming any one placed chip is found
    chips = list(g.address_plan.chips)
    i = data.draw(st.integers(0, len(chips) - 1))
    wrong = chips[:i] + chips[i + 1:] if data.draw(st.booleans()) else \
        chips[:i] + ["nobody"] + chips[i + 1:]
    h = g.replace(address_plan=g.address_plan.replace(chips=tuple(wrong)))
    assert [x.where for x in check(h) if x.code == "invalid"
            and "the plan's chips" in x.message] == ["address plan"]


# -- a load/store refusal names the right cause -------------------------------------------

def test_a_cut_off_chip_is_no_route_not_a_nic_in_the_way():
    # before: "transport 'loadstore' cannot reach 'chip1' from 'chip0': load/store does not
    # cross a NIC ... every path between them does; use transport='rdma'" with no path at all
    from fabric import RoutingError, access_latencies, access_to
    f = topologies.build("torus:3x3,chip=h100")
    g = f.without(links=[("chip0", "chip1"), ("chip0", "chip2"), ("chip0", "chip3"),
                         ("chip0", "chip6")])
    for call in (lambda: access_latencies(g), lambda: access_to(g, "chip0", "chip1")):
        with pytest.raises(RoutingError, match="no route from 'chip0' to 'chip1'; chip0 is cut off"):
            call()
    # a NIC in the way is still said so
    with pytest.raises(RoutingError, match="does not cross a NIC"):
        access_to(topologies.build("rail:servers=2,gpus=4,chip=h100"), "chip0", "chip4")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(["torus:3x3,chip=h100", "rail:servers=2,gpus=4,chip=h100",
                        "hypermesh:2x2x2,chip=h100", "switch:4,planes=2,chip=h100"]), st.data())
def test_loadstore_refusals_blame_a_missing_route_exactly_when_there_is_none(spec, data):
    from fabric import FabricError, RoutingError, access_to
    f = topologies.build(spec)
    edges = sorted(f.graph.edges, key=str)
    try:
        g = f.without(links=data.draw(st.lists(st.sampled_from(edges), max_size=5,
                                               unique=True)))
    except FabricError:
        return
    a, b = data.draw(st.lists(st.sampled_from(list(g.endpoints)), min_size=2, max_size=2,
                              unique=True))
    try:
        g.route(a, b)
        routed = True
    except RoutingError:
        routed = False
    try:
        access_to(g, a, b, transport="loadstore")
    except RoutingError as e:
        assert ("no route" in str(e)) == (not routed), str(e)
        return
    assert routed
