"""Bill of materials: counting rules by brute force, and the published cost checks it reproduces.

Published checks (each from the cost book's own unit inputs, never fitted to the row):

* "H100 Freakonomics" spreadsheet (Eugene Cheah, Aug 2024), the 2,048-node row
  (16,384 H100 on 8 rails, two tiers of 64-port 400G switches): 768 switches,
  switches $27,648,000, IB connector + cable $41,943,040. One rail plane is a
  radix-64 leaf-spine (64 leaves, 32 spines, 2,048 endpoints).
* The same spreadsheet's 65,536-node row prices 3 tiers at $3,800 per GPU of
  cables (our unit input, $1,280 per link, gives $3,840: 1.1 % over).
* Optics power of a 2,048-GPU two-tier cluster with every link optical, 9 W per
  400G NIC-side module and 17 W per twin-port 800G switch module: 70.7 kW, 34.5 W
  per GPU (DERIVED worked example on NVIDIA LinkX figures).
* Kim et al. (ISCA 2008) cable model: electrical 1.4 L + 2.16 and optical
  0.364 L + 9.7103 $/Gb/s cross over at 7.29 m (DERIVED).
* SC26 "Provisioning Networks for AI Supercomputers" Fig. 8-9: a 4K-GPU fat
  tree at 400 Gb/s per GPU costs $24 M, $5,859 per GPU (DERIVED). The paper's
  price table is not published; the Freakonomics book on a three-tier fat tree
  is held to it within 20 %.

Every figure of the cost references that the model can express is held here, with its source
and tolerance; those it cannot express are listed in docs/sources.md s.10 with the reason.
"""

import dataclasses
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import topologies
from analysis import bill_of_materials, metrics
from fabric import COST_BOOKS, MEDIA, SpecError, hardware_costs, link_tech
from fabric._units import is_real


def test_cluster_128_counts_cables_not_board_lanes():
    b = bill_of_materials(topologies.build("cluster-128"))
    # 16 servers x 8 GPUs x 18 NVLink lanes on the baseboard, and 128 PCIe GPU-NIC traces.
    assert b.links["trace"] == 16 * 8 * 18 + 128
    # 128 NIC-leaf cables and 128 leaf-spine cables: the "about 256".
    assert b.cables == 256
    # The 16 NVSwitch nodes are on boards: 16 network switch boxes (8 rails, 8 spines).
    assert b.switch_boxes == 16 and b.switch_asics == 32
    assert b.nics == 128 and b.transceivers == 2 * b.links["optics"]


def test_direct_network_has_no_switches():
    b = bill_of_materials(topologies.build("sd200-ultra"))
    assert b.switch_asics == b.switch_boxes == b.switch_ports == b.nics == 0
    # 8 chips per host fully connected on the board: 16 hosts x 28 links.
    assert b.links["trace"] == 16 * 28
    assert b.cost_usd["switches"] == 0 and b.cost_usd_per_chip > 0


@settings(max_examples=15, deadline=None)
@given(spec=st.sampled_from(["torus:4x4x4", "hypermesh:4x3,hosts=3", "fattree:k=4",
                             "leafspine:k=8,over=3", "rail:servers=3,gpus=4",
                             "switch:6,planes=3", "dragonfly:h=2", "nvl72", "cluster-128"]),
       book=st.sampled_from(sorted(COST_BOOKS)),
       scale=st.floats(0.25, 4.0))
def test_counts_and_linearity_by_brute_force(spec, book, scale):
    f = topologies.build(spec)
    b = bill_of_materials(f, book)
    lanes = sum(d.get("lanes", 1) for *_, d in f.graph.edges(data=True))
    assert sum(b.links[m] for m in MEDIA) == lanes
    assert b.cables == lanes - b.links["trace"]
    assert b.switch_ports == metrics(f).switch_ports
    switches = [n for n, k in f.graph.nodes(data="kind") if k == "switch"]
    assert b.switch_asics >= len(switches) >= b.switch_boxes
    # Every price scaled by one factor scales the network cost by it (power unchanged).
    costs = hardware_costs(book)
    usd = [fl for fl in costs.__dataclass_fields__ if "usd" in fl]
    scaled = costs.replace(**{fl: costs.value(fl) * scale for fl in usd})
    b2 = bill_of_materials(f, scaled)
    assert b2.cost_usd_total == pytest.approx(b.cost_usd_total * scale, rel=1e-9)
    assert b2.power_w_total == pytest.approx(b.power_w_total, rel=1e-12)


def test_freakonomics_two_tier_row():
    plane = bill_of_materials(topologies.build("leafspine:k=64"), "freakonomics-2024")
    assert plane.chips == 2048 and plane.switch_boxes == 96
    assert 8 * plane.switch_boxes == 768
    assert 8 * plane.cost_usd["switches"] == pytest.approx(27_648_000, rel=1e-12)
    assert 8 * plane.cost_usd["transceivers"] == pytest.approx(41_943_040, rel=1e-12)


def _at(gbps):
    """InfiniBand NDR's link at another rate (Gb/s) (the cost books price per Gb/s)."""
    return dataclasses.replace(link_tech("ib-ndr"), bandwidth=gbps / 8 * 1e9)


# "H100 Freakonomics" (Cheah, Aug 2024), 8 rails of 64-port 400G switches; each row below is one
# rail plane times 8: (nodes, plane spec, switches, switch $, connector + cable $, tolerance on
# the cable $). The published cable column is held to the tolerance stated; switch counts and
# switch $ exactly (the $36,000 switch is DERIVED from the 64-node row itself, so only the other
# rows are independent checks of it).
FREAKONOMICS_ROWS = [
    # 64 nodes: one switch per rail. 675,840 is 528 links at $1,280; the model counts the 512
    # GPU links (-3.03 %): the spreadsheet's extra 16 are not explained.
    (64, "switch:64,tech=ib-ndr,hosts=1", 8, 288_000, 675_840, 0.031),
    # 128 nodes: per rail 4 leaves and 2 spines of radix 64 (exact: 2,048 links at $1,280).
    (128, "leafspine:k=64,leaves=4", 48, 1_728_000, 2_621_440, 1e-12),
    # 2,048 nodes: per rail a full radix-64 leaf-spine (64 leaves, 32 spines).
    (2048, "leafspine:k=64", 768, 27_648_000, 41_943_040, 1e-12),
    # 4,096 nodes: per rail a three-tier radix-64 fat tree of 4 pods (128 edge, 128 aggregation,
    # 64 core switches). 124,518,400 is 97,280 links; the model's 98,304 is +1.05 %.
    (4096, "fattree:k=64,pods=4", 2560, 92_160_000, 124_518_400, 0.011),
]


@pytest.mark.parametrize("nodes,plane,switches,switch_usd,cable_usd,tol", FREAKONOMICS_ROWS)
def test_freakonomics_rows(nodes, plane, switches, switch_usd, cable_usd, tol):
    b = bill_of_materials(topologies.build(plane), "freakonomics-2024")
    assert 8 * b.chips == 8 * nodes
    assert 8 * b.switch_boxes == switches
    assert 8 * b.cost_usd["switches"] == pytest.approx(switch_usd, rel=1e-12)
    links_usd = 8 * (b.cost_usd["cables"] + b.cost_usd["transceivers"])
    assert links_usd == pytest.approx(cable_usd, rel=tol)


def test_freakonomics_three_tier_cables_per_gpu():
    b = bill_of_materials(topologies.build("fattree:k=8"), "freakonomics-2024")
    per_gpu = (b.cost_usd["cables"] + b.cost_usd["transceivers"]) / b.chips
    assert per_gpu == pytest.approx(3800, rel=0.015)


def test_optics_power_of_a_2048_gpu_two_tier_cluster():
    b = bill_of_materials(topologies.build("leafspine:k=64"), "freakonomics-2024")
    assert b.power_w["transceivers"] == pytest.approx(70.7e3, rel=1e-3)
    assert b.power_w["transceivers"] / b.chips == pytest.approx(34.5, rel=1e-3)


def test_kim_crossover():
    kim = hardware_costs("kim-2008")
    assert kim.cable_cost("acc", 1, 10) == pytest.approx(1.4 * 10 + 2.16)
    assert kim.cable_cost("optics", 1, 10) == pytest.approx(0.364 * 10 + 9.7103)
    assert kim.medium_for(7.2) == "acc" and kim.medium_for(7.4) == "optics"
    crossover = (9.7103 - 2.16) / (1.4 - 0.364)
    assert crossover == pytest.approx(7.29, abs=0.005)


# SC26 "Provisioning Networks for AI Supercomputers" (artifact tommasobo/SC26_ProvisioningAINetworks,
# scripts/fig08_09_cluster_params_cost.py): network cost of a 4K-GPU fat tree by link speed per
# GPU, 4 / 12 / 24 / 36 / 66 M$; DERIVED per GPU (/4096) 977 / 2,930 / 5,859 / 8,789 / 16,113.
# How they were made is not published: every version of the script on both branches (main
# 900c48b, dev 4197f19; first commit 90231b1, 2026-04-23) has them as the literal array
# TIER_COST_M = [4, 12, 24, 36, 66], the artifact's own status table calls them "hardcoded
# derived ... cost arrays, no independent numeric regeneration claim", and no README, report
# or appendix source gives unit prices or a price source. The Freakonomics book (400G-era
# prices, linear per Gb/s) on a 4,096-endpoint, three-tier radix-64 fat tree is held to them
# within 15 % at 200 and 400 Gb/s (model +13.5 % at both); not at 100, 800 and 1,600 Gb/s
# (+70 %, +51 %, +65 %): the published $ per Gb/s per GPU falls above 400 Gb/s (10.99, 10.07
# against 14.65) and is lower at 100 Gb/s (9.77). A switch ASIC of fixed capacity (51.2 Tb/s:
# radix 512 / 256 / 128 / 64 / 32 at 100-1,600 Gb/s, so 2 / 2 / 2 / 3 / 3 tiers for 4,096
# GPUs) moves the model the other way (+9 %, -28 %, -28 %, +51 %, +65 %: more tiers at the
# high speeds); only a price per Gb/s that falls with the speed, which no source gives, would
# follow the figures. Those three are strict xfails: they fail the day the model matches.
SC26 = [(100, 977), (200, 2930), (400, 5859), (800, 8789), (1600, 16113)]
_SC26_NOT_HELD = ("the published $/Gb/s falls with speed; the artifact gives no unit prices "
                  "(model +51-70 %)")


@pytest.mark.parametrize("gbps,per_gpu", [
    p if p[0] in (200, 400) else pytest.param(*p, marks=pytest.mark.xfail(
        strict=True, reason=_SC26_NOT_HELD)) for p in SC26])
def test_sc26_4k_gpu_fat_tree_per_gpu_cost(gbps, per_gpu):
    f = topologies.fat_tree(64, pods=4, tech=_at(gbps))
    b = bill_of_materials(f, "freakonomics-2024")
    assert b.chips == 4096
    assert b.cost_usd_per_chip == pytest.approx(per_gpu, rel=0.15)


@pytest.mark.parametrize("radix,usd,watts", [(64, 21_533, 179.2), (36, 11_722, 100.8)])
def test_slim_fly_router_price_and_power(radix, usd, watts):
    """Slim Fly (SC14) router $ = 350.4 k - 892.3, 2.8 W per port: DERIVED k=64 $21,533 and
    179.2 W, k=36 $11,722 and 100.8 W (to the dollar as printed)."""
    b = bill_of_materials(topologies.switched(radix, tech=_at(40), chips_per_host=1),
                          "slimfly-2014")
    assert b.switch_boxes == 1
    assert b.cost_usd["switches"] == pytest.approx(usd, abs=0.5)
    assert b.power_w["switches"] == pytest.approx(watts, rel=1e-9)


def test_slim_fly_cables_and_crossover():
    """Slim Fly 40 Gb/s cables: DERIVED 2 m electrical $55.72, 10 m optical $327.74, and the
    electrical/optical crossover (7.2745 - 0.5771) / (0.4079 - 0.0919) = 21.2 m."""
    sf = hardware_costs("slimfly-2014")
    assert sf.cable_cost("acc", 40, 2) == pytest.approx(55.72, abs=0.005)
    assert sf.cable_cost("optics", 40, 10) == pytest.approx(327.74, abs=0.005)
    assert sf.medium_for(21.1, 40) == "acc" and sf.medium_for(21.3, 40) == "optics"


def test_tomahawk5_power_per_800g_port():
    """DERIVED: a Tomahawk 5 (51.2 Tb/s, about 500 W) switch draws 500 / 64 = 7.8 W per 800G
    port before optics; one ASIC for 64 x 800G."""
    b = bill_of_materials(topologies.switched(64, tech=_at(800), chips_per_host=1))
    assert b.switch_asics == 1
    assert b.power_w["switches"] / 64 == pytest.approx(7.8, abs=0.05)


def test_switches_and_nics_share_of_an_h100_cluster_power():
    """"Network switches and NICs about 5-10 % of IT load" (a per-GPU TDP table citing
    datasheets, lynx-cortex.pages.dev), held on a 1,024-GPU rail-optimized H100 cluster: the
    switches' and NICs' power over the system's (chip 700 W, host 575 W, and the network)."""
    b = bill_of_materials(topologies.build("rail:servers=128,chip=h100"))
    share = (b.power_w["switches"] + b.power_w["nics"]) / b.chips / (
        b.system_w_per_chip + b.power_w_per_chip)
    assert 0.05 <= share <= 0.10


def test_shares_and_json_units():
    b = bill_of_materials(topologies.build("nvl72"))
    assert 0 < b.cost_share < 1 and 0 < b.power_share < 1
    d = b.as_dict()
    for key, value in d.items():
        if isinstance(value, float):
            assert any(u in key for u in ("usd", "_w", "share", "gbps")), key
    assert math.isclose(d["network_cost_usd_per_chip"] * 72, d["network_cost_usd"])


@pytest.mark.parametrize("factor", [0, -1.0, float("nan"), float("inf"), "2"])
def test_rack_density_factor_must_be_positive(factor):
    error = SpecError if is_real(factor) else TypeError        # a wrong kind (s32)
    with pytest.raises(error, match="rack_chips_factor must be a finite number > 0, got "):
        bill_of_materials(topologies.build("torus:2x2"), rack_chips_factor=factor)


def test_unknown_book():
    with pytest.raises(SpecError, match="unknown cost book 'abacus'"):
        bill_of_materials(topologies.build("torus:2x2"), "abacus")


def test_rack_density_is_the_systems_own():
    """Presets of real systems state their published rack density (fabric.RACK_CHIPS): DGX
    H100 servers four per rack (32 GPUs, DGX SuperPOD RA-11333), NVL72 72, TPU v4 64; a
    fabric that states none is laid out at the book's. Placement follows: cluster-128's 16
    servers fill 4 racks of 32 GPUs, with the rail switches in a network rack."""
    from fabric import RACK_CHIPS, rack_chips

    assert rack_chips(topologies.build("cluster-128")).value == 32
    assert rack_chips(topologies.build("nvl72:chip=h100")) is RACK_CHIPS["nvl72"]
    assert rack_chips(topologies.build("tpu-v4-cube")).value == 64
    book = hardware_costs("street-2026")
    assert rack_chips(topologies.build("torus:4x4")) is book.rack_chips
    f = topologies.build("cluster-128")
    b = bill_of_materials(f)
    assert RACK_CHIPS["dgx-h100"] in b.parameters and book.rack_chips not in b.parameters
    # Halving the density doubles the racks; the farthest servers' links get longer, so
    # cables and transceivers together cannot cost less (each link takes the cheapest
    # medium that reaches, and a longer link has fewer media to choose from).
    half = bill_of_materials(f, rack_chips_factor=0.5)
    link_usd = [x.cost_usd["cables"] + x.cost_usd["transceivers"] for x in (b, half)]
    assert link_usd[1] > link_usd[0] and half.links["optics"] > b.links["optics"] == 0
    assert any(p.name == "cost.layout.rack_chips" and p.value == 16 for p in half.parameters)


@settings(max_examples=15, deadline=None)
@given(servers=st.integers(1, 12), per_rack=st.integers(1, 6))
def test_racks_hold_whole_hosts_up_to_the_density(servers, per_rack):
    """Brute force: hosts of 8 chips at a density of 8 x per_rack chips fill
    ceil(servers / per_rack) racks, each with at most per_rack hosts."""
    from analysis._bom import _racks

    f = topologies.build(f"rail:servers={servers}")
    host_rack, n = _racks(f, 8 * per_rack)
    assert n == math.ceil(servers / per_rack)
    counts = {}
    for r in host_rack.values():
        counts[r] = counts.get(r, 0) + 1
    assert max(counts.values()) <= per_rack
