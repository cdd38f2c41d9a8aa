"""Tests for fabric.check: every code on a broken file, clean plans clean, never a crash."""

from pathlib import Path

import pytest
from degrade import degrade
from hypothesis import given, settings
from hypothesis import strategies as st

import topologies
from fabric import (
    CODES,
    AddressMapError,
    AddressPlan,
    DomainLimits,
    Grant,
    Region,
    RoutingError,
    SymmetricHeap,
    Window,
    check,
    error_findings,
    route,
)
from fabric._units import GiB, MiB
from topologies import load_system

DATA = Path(__file__).resolve().parent / "data"
EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "sd200-ultra.toml"


@pytest.fixture(scope="module")
def sd200():
    return topologies.build("sd200-ultra")


@pytest.mark.parametrize("name, codes", [
    ("addr_overlap", {"overlap", "roundtrip", "alias"}),
    ("addr_misaligned", {"misaligned", "alias"}),
    ("addr_out_of_range", {"out-of-range", "alias"}),
    ("addr_dangling", {"dangling-target"}),
    ("addr_alias", {"alias"}),
    ("addr_isolation", {"isolation", "unreachable"}),
    ("addr_too_many_entries", {"too-many-entries"}),
    ("addr_symmetric_mismatch", {"symmetric-mismatch"}),
    ("addr_roundtrip", {"overlap", "roundtrip", "unreachable"}),
    ("addr_invalid", {"invalid", "unreachable"}),
])
def test_each_broken_file_gives_its_codes(name, codes):
    found = check(load_system(DATA / f"{name}.toml"))
    assert {f.code for f in found} == codes
    for f in found:
        assert f.code in CODES and f.severity in ("error", "warning")
        assert f.message and f.where
    # findings in a file point into it (file-level faults and window/region faults)
    assert any(f.where.startswith(str(DATA / name)) for f in found)


def test_isolation_file_names_both_windows():
    found = error_findings(check(load_system(DATA / "addr_isolation.toml")))
    assert sorted(f.message.split(":")[0] for f in found) == ["host0 window 'chip16'",
                                                              "host0 window 'chip8'"]


def test_every_finding_is_reported_not_the_first():
    found = check(load_system(DATA / "addr_too_many_entries.toml"))
    assert len(found) == 16                                 # one per host domain
    found = check(load_system(DATA / "addr_symmetric_mismatch.toml"))
    assert len(found) == 128                                # chip5 mismatched, all too small
    assert sum("offset 0x800000000" in f.message for f in found) == 1     # chip5 at 32 GiB


@pytest.mark.parametrize("path", [DATA / "addr_clean.toml", EXAMPLE])
def test_clean_files_are_clean(path):
    assert check(load_system(path)) == []


@pytest.mark.parametrize("spec", ["sd200-ultra", "dgx-h100", "cluster-128", "nvl72",
                                  "tpu-v4-cube"])
def test_default_plan_is_clean_on_presets(spec):
    f = topologies.build(spec)
    assert check(f) == []
    assert f.host_domains                                   # and the strict build agrees


def test_a_fabric_without_a_chip_needs_the_hbm_size():
    f = topologies.build("fattree:k=4")
    assert [x.code for x in check(f)] == ["invalid"]
    assert "hbm_bytes" in check(f)[0].message
    assert check(f.replace(address_plan=AddressPlan(hbm_bytes=16 * GiB))) == []


def test_warnings_only_is_not_an_error(sd200):
    plan = AddressPlan(windows=[Window("host0", 1 << 44, target="chip9", size=GiB)])
    found = check(sd200.replace(address_plan=plan))
    assert [f.code for f in found] == ["alias"] and error_findings(found) == []
    assert sd200.replace(address_plan=plan).host_domains["host0"].n_entries == 121


def test_unreachable_asks_the_router(sd200):
    cut = sd200.without(links=list(sd200.graph.edges("chip127")))
    found = check(cut)
    assert {f.code for f in found} == {"unreachable"}
    errors = error_findings(found)
    assert len(errors) == 15                                # every other host loses chip127
    assert all("'chip127'" in f.message for f in errors)
    # its own host: the domain is split, and chip127's windows onto the other 120 chips fail
    # (one warning for them all, not one per window)
    warns = [f for f in found if f.severity == "warning"]
    assert [f.where for f in warns] == ["host15", "host15 window 'chip0'"]
    assert "host domain host15 is partitioned" in warns[0].message
    assert "chip127 of host15 has no route to 'chip0', 'chip1', 'chip2' and 117 more" \
        in warns[1].message


def test_a_partitioned_host_is_not_clean():
    # chips 0-2 lose their NIC links and chip3 its NVSwitch link: chips 0-2 reach each other
    # but not chip3 (their own host) nor host1; chip3 reaches host1. Before, check said only
    # that host1 cannot reach chips 0-2, and nothing about host0's own chips.
    f = topologies.build("rail:servers=2,gpus=4,chip=h100").without(
        links=[("chip0", "nic0"), ("chip1", "nic1"), ("chip2", "nic2"), ("chip3", "nvs0")])
    found = check(f)
    warns = [(x.where, x.message) for x in found if x.severity == "warning"]
    assert warns[0] == ("host0", "host domain host0 is partitioned: chip0, chip1 and chip2 "
                        "have no route to chip3 of the same domain; loads and stores between "
                        "them fail" + f.failures.explain("chip0", "chip1", "chip2", "chip3"))
    assert warns[1][0] == "host0 window 'chip4'"
    assert warns[1][1].startswith("host0 window 'chip4': chip0, chip1 and chip2 of host0 have "
                                  "no route to 'chip4', 'chip5', 'chip6' and 'chip7' (chip3 has)")
    assert [x.where for x in error_findings(found)] == [
        "host1 window 'chip0'", "host1 window 'chip1'", "host1 window 'chip2'"]


_REACH_SPECS = ("rail:servers=2,gpus=4,chip=h100", "switch:4,planes=2", "torus:3x2,links=2",
                "hypermesh:2x3,connect=switch", "rail:servers=2,gpus=2", "mesh:3x2",
                "hypermesh:2x2x2,connect=switch/ring/full")


@st.composite
def _degraded_with_plans(draw):
    f = topologies.build(draw(st.sampled_from(_REACH_SPECS)))
    f = f.replace(address_plan=AddressPlan(hbm_bytes=16 * GiB))
    return draw(degrade(f, max_links=4, max_chips=0, min_links=1))


def _reaches(f, a, b):
    try:
        route(f, a, b)
        return True
    except RoutingError:
        return False


@settings(max_examples=40, deadline=None)
@given(_degraded_with_plans())
def test_unreachable_findings_are_brute_force_reachability(f):
    # brute force: fabric.route for every (live chip of a domain, chip of another domain) pair
    # (the default plan gives every domain a window onto every other domain's chip) and for
    # every pair of one domain's chips
    found = [x for x in check(f) if x.code == "unreachable"]
    want_errors, want_warn = set(), {}
    for h, members in f.domains.items():
        chips = [c for c in members if c in f.node_index]
        parted = any(not _reaches(f, a, b) for a in chips for b in chips if a != b)
        cuts = set()
        for t in (c for g, m in f.domains.items() if g != h for c in m if c in f.node_index):
            lacking = tuple(c for c in chips if not _reaches(f, c, t))
            if len(lacking) == len(chips):
                want_errors.add(f"{h} window {t!r}")
            elif lacking:
                cuts.add(lacking)
        want_warn[h] = (parted, cuts)
    assert {x.where for x in found if x.severity == "error"} == want_errors
    assert len(want_errors) == len(error_findings(found))
    for h, (parted, cuts) in want_warn.items():
        mine = [x for x in found if x.severity == "warning" and x.where.split()[0] == h]
        assert sum(x.where == h for x in mine) == parted
        windows = [x.message for x in mine if x.where != h]
        assert len(windows) == len(cuts)
        for cut in cuts:
            names = ", ".join(cut[:-1]) + " and " + cut[-1] if len(cut) > 1 else cut[0]
            assert sum(f": {names} of {h} ha" in m for m in windows) == 1


def test_unreachable_hook_skips_without_a_router(sd200, monkeypatch):
    import fabric._check as chk

    class NoRouter:
        def __getattr__(self, name):
            if name == "router":
                raise ImportError("no routing module")
            return getattr(sd200, name)

    assert chk.unreachable_findings(NoRouter(), [], {}, {}) == []


@pytest.mark.parametrize("plan, code", [
    (AddressPlan(layout="sparse"), "invalid"),
    (AddressPlan(width=99), "invalid"),
    (AddressPlan(limits=DomainLimits(page_size=5000)), "invalid"),
    (AddressPlan(limits=DomainLimits(alignment="bytes")), "invalid"),
    (AddressPlan(limits=DomainLimits(translation_entries=-1)), "invalid"),
    (AddressPlan(width=40), "out-of-range"),
    (AddressPlan(regions=[Region(4096, 4096, "host0", kind="dram", name="x")]), "overlap"),
    (AddressPlan(grants=[Grant("host0", "chip999")]), "invalid"),
    (AddressPlan(grants=[Grant("host77", "chip9")]), "invalid"),
    (AddressPlan(grants=[Grant("host0", "chip9", "x")]), "invalid"),
    (AddressPlan(windows=[Window("host0", 1 << 44, 4096, global_base=9 << 36,
                                 permissions="wx")]), "invalid"),
    (AddressPlan(windows=[Window("host0", 1 << 44, 4096)]), "invalid"),
    (AddressPlan(windows=[Window("host0", 1 << 44, global_base=0)]), "invalid"),
    (AddressPlan(windows=[Window("host0", 1 << 44, 4096, global_base=0, target="chip9")]),
     "invalid"),
    (AddressPlan(windows=[Window("host0", (1 << 57) - 4096, 8192, target="chip9",
                                 page_size=4096)]), "out-of-range"),
    (AddressPlan(windows=[Window("host0", 1 << 44, 0, target="chip9")]), "invalid"),
    (AddressPlan(heap=SymmetricHeap(GiB, offset=63 * GiB)), "symmetric-mismatch"),
    (AddressPlan(heap=SymmetricHeap(GiB, chips={"chip999": {}})), "invalid"),
])
def test_adversarial_plans_through_the_api(sd200, plan, code):
    found = check(sd200.replace(address_plan=plan))
    assert code in {f.code for f in found}, found
    with pytest.raises(AddressMapError):                    # the strict build refuses too
        f = sd200.replace(address_plan=plan)
        _ = f.host_domains, f.symmetric_memory


def test_check_refuses_what_is_not_a_system():
    with pytest.raises(TypeError, match="Fabric or a fabric.System"):
        check("sd200-ultra")


# -- never a crash; the checker and the strict build agree ------------------------------

_addr = st.one_of(st.integers(-4096, 1 << 58), st.sampled_from([0, 4096, 1 << 36, 9 << 36]))


@st.composite
def _plans(draw):
    wins = []
    for i in range(draw(st.integers(0, 4))):
        target = draw(st.one_of(st.none(), st.sampled_from(["chip3", "chip9", "host1.dram",
                                                            "nothing"])))
        wins.append(Window(
            draw(st.sampled_from(["host0", "host1", "hostX"])), draw(_addr),
            size=draw(st.one_of(st.none(), st.sampled_from([0, 4096, 2 * MiB, GiB, 3000]))),
            global_base=None if target else draw(_addr), target=target,
            page_size=draw(st.one_of(st.none(), st.sampled_from([4096, 2 * MiB, 3000]))),
            permissions=draw(st.sampled_from(["r", "rw", "x"])), name=f"w{i}"))
    grants = draw(st.one_of(st.none(), st.lists(st.builds(
        Grant, st.sampled_from(["host0", "host1", "hostX"]),
        st.sampled_from(["chip9", "*", "host1", "zzz"]), st.sampled_from(["r", "rw", "-"])),
        max_size=3)))
    heap = draw(st.one_of(st.none(), st.builds(
        SymmetricHeap, st.sampled_from([0, GiB, 3 * MiB, 80 * GiB]),
        st.sampled_from([0, GiB, 63 * GiB, 5]))))
    return AddressPlan(windows=wins, grants=grants, heap=heap,
                       default_windows=draw(st.booleans()),
                       limits=DomainLimits(translation_entries=draw(st.sampled_from([4, 1024])),
                                           alignment=draw(st.sampled_from([None, "page"]))))


@settings(max_examples=60, deadline=None)
@given(_plans())
def test_random_plans_never_crash_and_agree_with_the_strict_build(plan):
    f = topologies.build("dgx-h100").replace(address_plan=plan)
    found = check(f)
    blocking = [x for x in found if x.severity == "error" and x.code != "isolation"]
    try:
        _ = f.host_domains, f.symmetric_memory
        built = True
    except AddressMapError:
        built = False
    assert built == (not blocking), found
