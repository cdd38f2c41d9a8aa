"""Tests for host domains, shadow windows, translation and protection.

Independent truth: a brute-force scan over the resolved windows (remote =
global_base + (local - local_base), Linux ntb.h) and the address map's regions.
"""

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import topologies
from fabric import (
    AddressMapError,
    AddressPlan,
    DomainLimits,
    Fabric,
    Grant,
    NodeError,
    Region,
    TranslationError,
    Window,
    check,
)
from fabric._units import GiB, KiB, MiB


@pytest.fixture(scope="module")
def sd200():
    return topologies.build("sd200-ultra")


def _small(n_chips=4, hosts=2, plan=None):
    G = nx.cycle_graph([f"chip{r}" for r in range(n_chips)])
    for r in range(n_chips):
        G.nodes[f"chip{r}"].update(kind="chip", host=f"host{r * hosts // n_chips}")
    nx.set_edge_attributes(G, 25e9, "bandwidth")
    nx.set_edge_attributes(G, 1e-7, "latency")
    f = Fabric.from_graph(G, chip="tpu-v4")            # 32 GiB HBM: windows are powers of two
    return f.replace(address_plan=plan) if plan is not None else f


def _brute(domain, a):
    for w in domain.windows:
        if w.local_base <= a < w.local_base + w.size:
            return w.global_base + (a - w.local_base)
    return None


def test_default_plan_every_host_sees_every_remote_chip(sd200):
    doms = sd200.host_domains
    assert len(doms) == 16
    for d in doms.values():
        assert d.n_entries == 120                        # 128 chips - 8 own
        targets = {w.name for w in d.windows}
        assert {f"chip{r}" for r in range(128)} <= targets
        # the own chips come first, at local slot 0..7
        own = [w for w in d.windows if w.name in d.chips]
        assert sorted(w.local_base >> 36 for w in own) == list(range(8))


def test_translate_scalar_and_batched_agree_with_brute_force(sd200):
    d = sd200.host_domains["host3"]
    rng = np.random.default_rng(0)
    wins = d.windows
    pick = rng.integers(0, len(wins), 3000)
    local = np.array([wins[i].local_base + int(rng.integers(0, wins[i].size)) for i in pick])
    tr = sd200.translate_many("host3", local)
    amap = sd200.address_map
    for k in range(0, 3000, 97):
        a = int(local[k])
        g = _brute(d, a)
        one = sd200.translate("host3", a)
        assert one.global_address == g == tr.global_address[k]
        loc = amap.lookup(g)
        assert (one.owner, one.offset) == (loc.owner, loc.offset)
        assert amap.owners[tr.owner[k]] == loc.owner and tr.offset[k] == loc.offset
        assert a in d.local_addresses(g)                 # local -> global -> local
    assert tr.ok.all()


def test_host_sees_remote_chip_at_its_shadow_window(sd200):
    # host1's local slot 0 is its own chip8; its first shadow window is chip0
    t = sd200.translate("host1", 0)
    assert (t.owner, t.offset, t.global_address) == ("chip8", 0, 8 << 36)
    t = sd200.translate("host1", (8 << 36) + 4096)
    assert (t.owner, t.offset) == ("chip0", 4096)


@pytest.mark.parametrize("address, msg", [
    ("banana", "'banana'"), (-4, "-4"), (1 << 57, "57-bit"),
    ((8 << 36) - 1, "in no window"),                     # the gap after chip7's 64 GB
])
def test_bad_local_addresses_refused(sd200, address, msg):
    with pytest.raises(TranslationError, match=msg):
        sd200.translate("host0", address)


def test_local_address_of_the_wrong_kind_is_a_type_error(sd200):
    # STYLE's rule (session 32): a float is no address at all, not an untranslatable one
    with pytest.raises(TypeError, match=r"local address must be an integer >= 0 .* got 1\.5 "
                       r"\(a float\)"):
        sd200.translate("host0", 1.5)


def test_batched_unmapped_raise_and_mask(sd200):
    local = np.array([0, (8 << 36) - 1, 1 << 50])
    with pytest.raises(TranslationError, match="2 of 3 addresses"):
        sd200.translate_many("host0", local)
    tr = sd200.translate_many("host0", local, unmapped="mask")
    assert tr.ok.tolist() == [True, False, False]
    for arr in (tr.global_address, tr.owner, tr.offset, tr.window):
        assert arr.tolist()[1:] == [-1, -1]
    with pytest.raises(TranslationError, match="negative"):
        sd200.translate_many("host0", np.array([-1]))
    with pytest.raises(TranslationError, match="wider"):
        sd200.translate_many("host0", np.array([1 << 57], dtype=np.uint64))


def test_unknown_host(sd200):
    with pytest.raises(NodeError, match="host99"):
        sd200.translate("host99", 0)


def test_modified_plan_is_a_modified_copy(sd200):
    f2 = sd200.replace(address_plan=AddressPlan(limits=DomainLimits(translation_entries=200)))
    assert f2.host_domains["host0"].n_entries == 120
    assert sd200.address_plan is None


def test_too_many_entries_refused(sd200):
    f = sd200.replace(address_plan=AddressPlan(limits=DomainLimits(translation_entries=100)))
    with pytest.raises(AddressMapError, match="too-many-entries.*120 translation entries"):
        _ = f.host_domains


def test_tenant_partition_grants():
    # host0 may read chip2 (host1's) but not write it; chip3 is not granted at all
    plan = AddressPlan(grants=[Grant("host0", "chip2", "r")])
    f = _small(plan=plan)
    d = f.host_domains["host0"]
    w = {w.name: w for w in d.windows}
    assert f.translate("host0", w["chip2"].local_base + 8).owner == "chip2"
    with pytest.raises(TranslationError, match="may only read"):
        f.translate("host0", w["chip2"].local_base + 8, op="write")
    with pytest.raises(TranslationError, match="not granted"):
        f.translate("host0", w["chip3"].local_base)
    with pytest.raises(TranslationError, match="not granted"):
        f.translate_many("host0", np.array([w["chip0"].local_base, w["chip3"].local_base]))
    # own chips are always granted, read and write
    assert f.translate("host0", w["chip1"].local_base, op="write").owner == "chip1"
    tr = f.translate_many("host0", np.array([w["chip0"].local_base, w["chip3"].local_base]),
                          unmapped="mask")
    assert tr.ok.tolist() == [True, False]


def test_read_only_window_and_read_only_region():
    extra = Region(1 << 45, 1 * GiB, "host1", kind="storage", permissions="r", name="rom")
    plan = AddressPlan(regions=[extra], windows=[
        Window("host0", 1 << 44, target="chip2", size=4 * MiB, permissions="r", name="ro"),
        Window("host0", 1 << 43, target="rom", name="rom"),
    ])
    f = _small(plan=plan)
    assert f.translate("host0", (1 << 44) + 5).owner == "chip2"
    with pytest.raises(TranslationError, match="read-only window 'ro'"):
        f.translate("host0", (1 << 44) + 5, op="write")
    with pytest.raises(TranslationError, match="read-only region 'rom'"):
        f.translate("host0", (1 << 43) + 5, op="write")
    with pytest.raises(TranslationError, match="read-only"):
        f.translate_many("host0", np.array([(1 << 44) + 5]), op="write")


def test_window_onto_interleave_set():
    pool = Region(0, 4 * GiB, ("host0", "host1"), kind="dram", granularity=4 * KiB,
                  name="pool")
    plan = AddressPlan(interleave=[pool], windows=[Window("host0", 1 << 45, target="pool")])
    f = _small(plan=plan)
    t = f.translate("host0", (1 << 45) + 3 * 4096 + 9)
    assert (t.owner, t.offset, t.region) == ("host1", 4096 + 9, "pool")
    tr = f.translate_many("host0", np.array([(1 << 45) + 3 * 4096 + 9, 0]))
    assert f.address_map.owners[tr.owner[0]] == "host1" and tr.offset[0] == 4096 + 9


@pytest.mark.parametrize("window, code", [
    (Window("host0", 1 << 44, 4096, global_base=(1 << 47) + 4096 * 5), "dangling-target"),
    (Window("host0", 1 << 44, 64 * GiB, target="chip2"), "out-of-range"),
    (Window("host0", (1 << 44) + 4096, 8192, target="chip2", page_size=4096), "misaligned"),
    (Window("host0", 4096, 4096, target="chip2", page_size=4096), "overlap"),
    (Window("host0", 1 << 44, 4096, target="chip2", page_size=3000), "invalid"),
    (Window("hostX", 1 << 44, 4096, target="chip2"), "invalid"),
    (Window("host0", 1 << 44, 4096, target="chipX"), "dangling-target"),
])
def test_bad_windows_refused(window, code):
    f = _small(plan=AddressPlan(windows=[window]))
    with pytest.raises(AddressMapError, match=code):
        _ = f.host_domains


# -- property-based: random window plans ---------------------------------------------

@st.composite
def _window_plans(draw):
    n = draw(st.integers(1, 8))
    wins = []
    for i in range(n):
        page = draw(st.sampled_from([4096, 8192, 65536]))
        pages = draw(st.integers(1, 16))
        local = draw(st.integers(0, 64)) * 65536 + (1 << 44)
        chip = draw(st.integers(0, 3))
        off = draw(st.integers(0, 32)) * page
        wins.append(Window("host0", local, pages * page, target=f"chip{chip}",
                           target_offset=off, page_size=page, name=f"w{i}"))
    return wins


@settings(max_examples=120, deadline=None)
@given(_window_plans(), st.lists(st.integers(0, 80 * 65536), min_size=1, max_size=40))
def test_random_window_plans(wins, offsets):
    f = _small(plan=AddressPlan(windows=wins, limits=DomainLimits(alignment="page")))
    try:
        d = f.host_domains["host0"]
    except AddressMapError as e:
        # refused: some window must really overlap another locally (the only fault
        # these plans can have); brute-force check
        spans = [(w.local_base, w.local_base + w.size) for w in wins]
        assert any(a0 < b1 and b0 < a1 for i, (a0, a1) in enumerate(spans)
                   for b0, b1 in spans[i + 1:]), str(e)
        return
    local = np.array([(1 << 44) + o for o in offsets])
    tr = d.translate_many(local, unmapped="mask")
    for k, a in enumerate(local.tolist()):
        g = _brute(d, a)
        if g is None:
            assert not tr.ok[k]
            with pytest.raises(TranslationError):
                d.translate(a)
        else:
            assert tr.global_address[k] == g == d.translate(a).global_address
            assert a in d.local_addresses(g)
            loc = f.address_map.lookup(g)
            assert f.address_map.owners[tr.owner[k]] == loc.owner
            assert tr.offset[k] == loc.offset


def test_failed_chip_keeps_addresses_with_the_original_map(sd200):
    g = sd200.without(chips=["chip5"])  # ranks renumbered, addresses pinned
    assert g.address_map.region("chip6.hbm").base == 6 << 36
    assert g.address_plan.chips == sd200.endpoints          # laid out from the intact fabric
    assert g.host_domains["host1"].n_entries == 120         # the window onto chip5 stays
    # ... and is the one finding of each host: its target has failed
    found = check(g)
    assert {f.code for f in found} == {"unreachable"}
    assert sorted(f.message.split(":")[0] for f in found) == sorted(
        f"{h} window 'chip5'" for h in sd200.domains)
