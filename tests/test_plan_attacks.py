"""The attack table of issue 12: each attack on an address plan is refused or flagged.

One test per attack named in the issue, and per variant found while fixing it. Each
asserts the finding's code *and* the objects it names (the window, the owner), or the
exception and its message; each failed before the fix (the issue's reproductions are
the first case of each group).
"""

import numpy as np
import pytest

import topologies
from fabric import (
    AddressMap,
    AddressMapError,
    AddressPlan,
    DomainLimits,
    Fabric,
    Grant,
    NodeError,
    Region,
    SymmetricHeap,
    TranslationError,
    Window,
    access,
    access_latencies,
    access_to,
    check,
    interleave_offset,
    interleave_target,
    parse_size,
    validate_address,
)
from fabric._units import GiB, MiB, TiB
from topologies import load_system


@pytest.fixture(scope="module")
def sd200():
    return topologies.build("sd200-ultra")


def _codes(found):
    return {f.code for f in found}


def _named(found, code):
    """The object part of each finding of ``code`` (its message up to the first colon)."""
    return sorted(f.message.split(":")[0] for f in found if f.code == code)


# -- 1. a chip failure must not move any window ------------------------------------------

def test_failure_keeps_windows_of_the_issue(sd200):
    g = sd200.without(chips=["chip9"])
    assert g.translate("host0", 0xA0_0000_0040).owner == "chip10"      # was chip11
    assert g.translate("host1", 0x70_0000_0000).owner == "chip15"      # was chip0
    found = check(g)
    assert _codes(found) == {"unreachable"}
    assert _named(found, "unreachable") == sorted(f"{h} window 'chip9'" for h in sd200.domains)
    assert all("'chip9'" in f.message and "failed" in f.message for f in found)


def test_failure_keeps_every_window_of_every_surviving_host(sd200):
    g = sd200.without(chips=["chip3", "chip64", "chip127"])
    for h in ("host0", "host7", "host15"):
        before, after = sd200.host_domains[h].windows, g.host_domains[h].windows
        assert [(w.name, w.local_base, w.global_base, w.size) for w in after] == \
            [(w.name, w.local_base, w.global_base, w.size) for w in before]
        a = np.array([w.local_base + w.size // 2 for w in before])
        t0, t1 = sd200.translate_many(h, a), g.translate_many(h, a)
        assert (t0.global_address == t1.global_address).all()
        assert [sd200.address_map.owners[o] for o in t0.owner] == \
            [g.address_map.owners[o] for o in t1.owner]


def test_failing_a_whole_host_keeps_the_others_windows(sd200):
    g = sd200.without(chips=[f"chip{r}" for r in range(8, 16)])       # all of host1
    assert "host1" not in g.host_domains
    with pytest.raises(NodeError, match="host1"):
        g.translate("host1", 0)
    assert g.translate("host0", 0x80_0000_0000).owner == "chip8"       # slot 8: chip8 still
    found = check(g)
    assert _codes(found) == {"unreachable"}
    # every other host's windows onto chip8..15 and nothing else (host1's DRAM has no window)
    assert len(found) == 15 * 8
    assert all("which has failed" in f.message for f in found)


def test_failure_keeps_user_windows_and_explicit_layout(sd200):
    plan = AddressPlan(layout="packed", windows=[
        Window("host0", 1 << 50, target="chip20", size=32 * GiB, name="far")])
    f = sd200.replace(address_plan=plan)
    g = f.without(chips=["chip5", "chip20"])
    assert g.translate("host0", (1 << 50) + 64) == f.translate("host0", (1 << 50) + 64)
    assert g.address_map.region("chip21.hbm") == f.address_map.region("chip21.hbm")
    assert "host0 window 'far'" in _named(check(g), "unreachable")


# -- 2. target_offset ------------------------------------------------------------------

@pytest.mark.parametrize("offset", [TiB, TiB + 4096, -2097152, 1 << 70])
def test_target_offset_outside_the_target_is_flagged(sd200, offset):
    plan = AddressPlan(windows=[Window("host0", 1 << 50, target="host5.dram",
                                       target_offset=offset, size=2 * MiB, name="w")])
    f = sd200.replace(address_plan=plan)
    found = check(f)
    assert _named(found, "out-of-range") == ["window 'w' of host 'host0'"]
    assert "target_offset" in found[0].message and "host5.dram" in found[0].message
    with pytest.raises(AddressMapError, match="target_offset"):
        _ = f.host_domains


def test_target_offset_with_global_base_is_refused(sd200):
    plan = AddressPlan(windows=[Window("host0", 1 << 50, 2 * MiB, global_base=5 << 36,
                                       target_offset=4096, name="w")])
    found = check(sd200.replace(address_plan=plan))
    assert _named(found, "invalid") == ["window 'w' of host 'host0'"]
    assert "global_base" in found[0].message and "target_offset" in found[0].message


def test_target_offset_inside_the_target_is_clean(sd200):
    plan = AddressPlan(windows=[Window("host0", 1 << 50, target="host5.dram",
                                       target_offset=TiB - 2 * MiB, name="w")])
    f = sd200.replace(address_plan=plan)
    assert _codes(check(f)) <= {"alias"}
    t = f.translate("host0", (1 << 50) + 5)
    assert (t.owner, t.offset) == ("host5", TiB - 2 * MiB + 5)


def test_target_offset_in_a_system_file_is_flagged_with_its_line(tmp_path):
    p = tmp_path / "s.toml"
    p.write_text('[system]\ntopology = "sd200-ultra"\n\n[[windows]]\nhost = "host0"\n'
                 'local_base = "0x4_0000_0000_0000"\ntarget = "host5.dram"\n'
                 'target_offset = "1TiB"\nsize = "2MiB"\n')
    found = check(load_system(p))
    assert [f.code for f in found] == ["out-of-range"]
    assert found[0].where.startswith(f"{p}:4")
    p.write_text(p.read_text().replace('"1TiB"', "-2097152"))
    found = check(load_system(p))
    assert [f.code for f in found] == ["invalid"] and "-2097152" in found[0].message
    assert found[0].where.startswith(f"{p}:4")


# -- 3. names are one namespace ---------------------------------------------------------

def _named_domains():
    f = topologies.build("torus:2x2,chip=h100")
    return Fabric.from_graph(f.graph, domains={"chip3": ["chip0", "chip1"],
                                               "hostB": ["chip2", "chip3"]}, chip="h100")


def test_domain_named_like_a_chip_is_refused():
    f = _named_domains()
    found = check(f)
    bad = [x for x in found if x.code == "invalid"]
    assert len(bad) == 1
    assert "host domain 'chip3'" in bad[0].message and "chip 'chip3'" in bad[0].message
    assert "hostB" in bad[0].message                  # the chip's own domain is named too
    with pytest.raises(AddressMapError, match="host domain 'chip3'"):
        _ = f.address_map
    # and hostB is no longer flagged on its own chip
    assert not any(x.code == "isolation" for x in found)


@pytest.mark.parametrize("name, other", [("chip5", "chip 'chip5'"),
                                          ("host3", "host domain 'host3'")])
def test_region_named_like_an_owner_is_refused(sd200, name, other):
    plan = AddressPlan(regions=[Region(1 << 52, GiB, "host0", kind="storage", name=name)])
    f = sd200.replace(address_plan=plan)
    found = check(f)
    bad = [x for x in found if x.code == "invalid"]
    assert len(bad) == 1 and f"region {name!r}" in bad[0].message and other in bad[0].message
    with pytest.raises(AddressMapError, match=f"region {name!r}"):
        _ = f.address_map


def test_grant_target_cannot_be_shadowed(sd200):
    # a region named like an owner would have captured the grant of that owner
    plan = AddressPlan(regions=[Region(1 << 52, GiB, "host0", kind="storage", name="chip9")],
                       grants=[Grant("host0", "chip9", "r")])
    assert "invalid" in _codes(check(sd200.replace(address_plan=plan)))


@pytest.mark.parametrize("owner", ["ghost", "", None, ()])
def test_region_owned_by_nobody_is_refused(sd200, owner):
    plan = AddressPlan(regions=[Region(1 << 52, GiB, owner, kind="storage", name="orphan")])
    f = sd200.replace(address_plan=plan)
    found = check(f)
    bad = [x for x in found if x.code == "invalid"]
    assert bad and all("'orphan'" in x.message and "nobody" in x.message for x in bad)
    with pytest.raises(AddressMapError, match="nobody"):
        _ = f.address_map


def test_region_owned_by_nobody_refused_by_the_map_alone():
    with pytest.raises(AddressMapError, match="nobody"):
        AddressMap([Region(0, 4096, "")])


# -- 4. an owner grant covers only that owner's memory ----------------------------------

def _set_plan(owners, grants, name="pair"):
    pool = Region(0, 2 * 256 * MiB, owners, kind="hbm", granularity=4096, name=name)
    # each chip's own region leaves 1 GB of its 64 GB for its share of the set (capacity)
    return AddressPlan(hbm_bytes=63 * 10**9, default_windows=False, interleave=[pool],
                       grants=grants,
                       windows=[Window("host0", 1 << 50, target=name, name="w")])


def test_owner_grant_does_not_cover_an_interleave_set_of_other_owners(sd200):
    f = sd200.replace(address_plan=_set_plan(("chip8", "chip16"), [Grant("host0", "chip8")]))
    found = check(f)
    assert _named(found, "isolation") == ["host0 window 'w'"]
    msg = next(x.message for x in found if x.code == "isolation")
    assert "'chip16'" in msg and "'chip8'" not in msg.split("holds memory of")[1]
    with pytest.raises(TranslationError, match="'chip16'"):
        f.translate("host0", (1 << 50) + 4096)          # stripe 1 lives on chip16
    with pytest.raises(TranslationError, match="'chip16'"):
        f.translate("host0", 1 << 50)                   # and chip8's stripe too: the set


def _bare(found):
    """The findings less the warnings of hosts that map none of their own chips (session 25:
    with the default windows off, every host of these plans but what they list)."""
    return [f for f in found if "maps none of its own chips" not in f.message]


@pytest.mark.parametrize("grants", [
    [Grant("host0", "chip8"), Grant("host0", "chip16")],
    [Grant("host0", "pair")],
    [Grant("host0", "*")],
    [Grant("host0", "host1"), Grant("host0", "host2")],
])
def test_interleave_set_granted_in_full_is_clean(sd200, grants):
    f = sd200.replace(address_plan=_set_plan(("chip8", "chip16"), grants))
    assert _bare(check(f)) == []
    assert f.translate("host0", (1 << 50) + 4096).owner == "chip16"


def test_domain_grant_covers_a_set_wholly_its_own_only(sd200):
    f = sd200.replace(address_plan=_set_plan(("chip8", "chip9"), [Grant("host0", "host1")]))
    assert _bare(check(f)) == []
    f = sd200.replace(address_plan=_set_plan(("chip8", "chip16"), [Grant("host0", "host1")]))
    assert _named(check(f), "isolation") == ["host0 window 'w'"]


def test_read_grant_of_one_owner_does_not_allow_writes_to_the_set(sd200):
    grants = [Grant("host0", "chip8", "rw"), Grant("host0", "chip16", "r")]
    f = sd200.replace(address_plan=_set_plan(("chip8", "chip16"), grants))
    found = check(f)
    assert _named(found, "isolation") == ["host0 window 'w'"]
    assert "'chip16'" in found[0].message
    assert f.translate("host0", 1 << 50).owner == "chip8"
    with pytest.raises(TranslationError, match="'chip16'"):
        f.translate("host0", 1 << 50, op="write")


# -- 5. every public addressing function validates its inputs ---------------------------

# STYLE's rule (session 32): an input of the wrong KIND is a TypeError, one out of range the
# address domain's error (AddressMapError; NodeError for a rank; TranslationError for a
# host-local address).

@pytest.mark.parametrize("offset, error", [
    (-1, AddressMapError), (np.array([0, -5]), AddressMapError), (1 << 62, AddressMapError),
    (True, TypeError), (1.5, TypeError), (256.0, TypeError), ("256", TypeError),
    (np.array([1.0]), TypeError), (np.array([True]), TypeError)])
def test_interleave_target_refuses_bad_offsets(offset, error):
    with pytest.raises(error, match="interleave offset must be") as e:
        interleave_target(offset, 4, 256)
    assert type(e.value) is error


@pytest.mark.parametrize("ways, gran, error", [
    (True, 256, TypeError), (4, True, TypeError), (4.0, 256, TypeError), (4, 256.0, TypeError),
    (5, 256, AddressMapError), (4, 512 + 256, AddressMapError)])
def test_interleave_refuses_bad_ways_and_granularity(ways, gran, error):
    with pytest.raises(error, match="ways|granularity") as e:
        interleave_target(0, ways, gran)
    assert type(e.value) is error


@pytest.mark.parametrize("pos, dev, error", [
    (-1, 0, AddressMapError), (4, 0, AddressMapError), (0, -1, AddressMapError),
    (np.array([0, 4]), 0, AddressMapError),
    (True, 0, TypeError), (0, 2.0, TypeError), (0, False, TypeError)])
def test_interleave_offset_refuses_bad_inputs(pos, dev, error):
    with pytest.raises(error, match="position|device offset") as e:
        interleave_offset(pos, dev, 4, 256)
    assert type(e.value) is error


@pytest.mark.parametrize("bad", [True, False, 4096.0, None, 1.5, [4096], b"0x10"])
def test_address_inputs_of_the_wrong_kind_are_type_errors(sd200, bad):
    for ask in (validate_address, sd200.address_map.lookup,
                lambda a: sd200.translate("host0", a)):
        with pytest.raises(TypeError, match="address must be an integer >= 0 or a string"):
            ask(bad)


@pytest.mark.parametrize("bad", [-1, "-1", "0xZZ", 1 << 57])
def test_address_inputs_out_of_range_keep_their_domain_error(sd200, bad):
    with pytest.raises(AddressMapError, match="address"):
        validate_address(bad)
    with pytest.raises(AddressMapError):
        sd200.address_map.lookup(bad)
    with pytest.raises(TranslationError):
        sd200.translate("host0", bad)


def test_global_address_refuses_bool_and_negative_offsets(sd200):
    for bad, error in ((True, TypeError), (1.0, TypeError), (-1, AddressMapError),
                       (64 * 10**9, AddressMapError)):
        with pytest.raises(error, match="offset must be an integer in") as e:
            sd200.address_map.global_address("chip3", bad)
        assert type(e.value) is error


def test_symmetric_memory_refuses_bad_inputs(sd200):
    f = sd200.replace(address_plan=AddressPlan(heap=SymmetricHeap(GiB, offset=32 * GiB)))
    mem = f.symmetric_memory
    for rank, off, error in [(True, 0, TypeError), (0.0, 0, TypeError), (-1, 0, NodeError),
                             (128, 0, NodeError), (0, True, TypeError), (0, 1.0, TypeError),
                             (0, -1, AddressMapError), (0, GiB, AddressMapError)]:
        # one answer whether asked one at a time or as arrays (and a peer by its rank)
        asks = [(mem.address, (rank, off)), (mem.addresses, ([rank], [off]))]
        if off == 0:
            asks.append((mem.peer_address, (mem.address(0), rank)))
        for ask, args in asks:
            with pytest.raises(error, match="rank|offset") as e:
                ask(*args)
            assert type(e.value) is error
    with pytest.raises(TypeError, match="offset must be integers .* dtype float64"):
        mem.addresses([0, 1], [0.0, 1.0])
    with pytest.raises(TypeError, match="rank must be integers .* dtype bool"):
        mem.addresses(np.array([True]), 0)


def test_a_sequence_holding_a_bool_is_refused_not_read_as_1(sd200):
    # numpy reads [0, True] as the ints [0, 1]: rank 1's heap, address 1 (session 32)
    mem = sd200.replace(address_plan=AddressPlan(heap=SymmetricHeap(GiB, offset=32 * GiB))) \
        .symmetric_memory
    asks = [(lambda: mem.addresses([0, True], [0, 0]), r"rank\[1\]=True"),
            (lambda: mem.addresses([0, 1], [[0], [np.False_]]), r"offset\[1\]\[0\]=np\.False_"),
            (lambda: sd200.address_map.lookup_many([4096, True]), r"address\[1\]=True"),
            (lambda: sd200.translate_many("host0", (True, 0)), r"local address\[0\]=True"),
            (lambda: interleave_target([0, True], 4, 256), r"interleave offset\[1\]=True")]
    for ask, named in asks:
        with pytest.raises(TypeError, match=named):
            ask()
    assert mem.addresses([0, 1], [0, 0]).tolist() == [mem.address(0), mem.address(1)]
    # the vectorized queries' one node check the same (a flag was node 1)
    with pytest.raises(TypeError, match=r"dst\[0\] must be an integer, got dst\[0\]=True"):
        sd200.router.latency([0, 1], [True, 2])
    assert sd200.node_indices((0, 1)).tolist() == [0, 1]
    i = sd200.endpoint_indices
    with pytest.raises(TypeError, match=r"group\[1\] must be an integer, got group\[1\]=True"):
        sd200.router.loads_grouped(i[:2], i[-2:], 1000.0, [0, True], 2)


def test_translate_many_refuses_bool_and_float_arrays(sd200):
    for bad in (np.array([True]), np.array([4096.0])):
        with pytest.raises(TypeError, match="local addresses must be integers, got an array "
                                            "of dtype"):
            sd200.translate_many("host0", bad)
    for bad in (np.array([-1]), np.array([1 << 57])):
        with pytest.raises(TranslationError):
            sd200.translate_many("host0", bad)
    with pytest.raises(ValueError, match="op"):
        sd200.translate("host0", 0, op="exec")


# -- 6. access is translated and permission-checked before it is timed ------------------

def _partition(sd200):
    plan = AddressPlan(default_windows=False, grants=[Grant("host1", "chip0", "r")],
                       windows=[Window("host1", 1 << 44, target="chip0", size=32 * GiB,
                                       permissions="r", name="ro")])
    return sd200.replace(address_plan=plan)


def test_access_refuses_a_store_the_protection_model_refuses(sd200):
    f = _partition(sd200)
    g = f.address_map.global_address("chip0", 64)
    assert access(f, "chip8", g, op="load").target == "chip0"
    with pytest.raises(TranslationError, match="read-only window 'ro'"):
        access(f, "chip8", g, op="store")
    with pytest.raises(TranslationError, match="no window"):
        access(f, "chip8", f.address_map.global_address("chip16", 0))
    with pytest.raises(TranslationError, match="read-only"):
        access_to(f, "chip8", "chip0", op="store")
    with pytest.raises(TranslationError):
        access_latencies(f, op="load")


def test_access_refused_by_grants_with_a_window(sd200):
    # the window exists but the grant does not: the responder refuses
    plan = AddressPlan(grants=[Grant("host1", "chip0", "r")])
    f = sd200.replace(address_plan=plan)
    g = f.address_map.global_address("chip0", 0)
    assert access(f, "chip8", g, op="load").total > 0
    with pytest.raises(TranslationError, match="may only read"):
        access(f, "chip8", g, op="store")
    with pytest.raises(TranslationError, match="not granted"):
        access(f, "chip8", f.address_map.global_address("chip16", 0), op="load")


def test_access_of_the_default_plan_is_timed_as_before(sd200):
    a = access(sd200, "chip0", sd200.address_map.global_address("chip127", 0), op="store")
    assert (a.target, a.hops, round(a.total * 1e9, 1)) == ("chip127", 3, 721.2)


def test_cli_route_refuses_what_the_plan_refuses(tmp_path, capsys):
    from analysis._cli import main

    p = tmp_path / "s.toml"
    p.write_text('[system]\ntopology = "sd200-ultra"\n[address]\ndefault_windows = false\n'
                 '[[grants]]\nhost = "host1"\ntarget = "chip0"\npermissions = "r"\n'
                 '[[windows]]\nhost = "host1"\nname = "ro"\nlocal_base = "0x1000_0000_0000"\n'
                 'target = "chip0"\nsize = "32GiB"\npermissions = "r"\n')
    assert main(["route", str(p), "chip8", "chip0", "--op", "load", "--json"]) == 0
    capsys.readouterr()
    assert main(["route", str(p), "chip8", "chip0", "--op", "store"]) == 2
    err = capsys.readouterr().err
    assert "read-only window 'ro'" in err and err.count("\n") == 1
    assert main(["latency", str(p)]) == 2


# -- 7. the smaller items ---------------------------------------------------------------

def test_huge_integers_stay_out_of_messages(sd200):
    huge = 10**5000
    for plan in (AddressPlan(width=huge), AddressPlan(host_memory=huge),
                 AddressPlan(regions=[Region(huge, 4096, "host0", kind="storage", name="x")]),
                 AddressPlan(windows=[Window("host0", huge, 4096, global_base=0, name="w")]),
                 AddressPlan(limits=DomainLimits(translation_entries=-huge))):
        found = check(sd200.replace(address_plan=plan))
        assert found and all(len(f.message) < 400 for f in found), found


def test_huge_integer_in_a_system_file_is_one_clear_error(tmp_path):
    from fabric import SpecError

    p = tmp_path / "s.toml"
    p.write_text('[system]\ntopology = "sd200-ultra"\n[address]\nwidth = ' + "9" * 5000 + "\n")
    with pytest.raises(SpecError, match="line 4.*4300 digits"):
        load_system(p)
    p.write_text('[system]\ntopology = "sd200-ultra"\n[address]\nhost_memory = "'
                 + "9" * 5000 + 'B"\n')
    found = check(load_system(p))
    assert [f.code for f in found] == ["invalid"] and len(found[0].message) < 400


@pytest.mark.parametrize("text", ["-4KiB", "-1B", "-0.5GiB", -4096])
def test_negative_sizes_say_so(text):
    with pytest.raises(ValueError, match=">= 0 bytes"):
        parse_size(text)


def test_utf8_byte_order_mark_is_accepted(tmp_path):
    p = tmp_path / "bom.toml"
    p.write_bytes(b"\xef\xbb\xbf" + b'[system]\ntopology = "sd200-ultra"\n\n[[windows]]\n'
                  b'host = "host99"\nlocal_base = 0\nsize = 4096\nglobal_base = 0\n')
    found = check(load_system(p))
    assert [f.code for f in found] == ["invalid"]
    assert found[0].where.startswith(f"{p}:4")                   # lines still right


def test_duplicate_window_names_are_refused(sd200):
    wins = [Window("host0", 1 << 50, target="chip9", size=32 * GiB, name="twin"),
            Window("host0", 1 << 51, target="chip10", size=32 * GiB, name="twin")]
    f = sd200.replace(address_plan=AddressPlan(windows=wins))
    found = check(f)
    assert _named(found, "invalid") == ["window 'twin' of host 'host0'"]
    assert "used twice" in found[0].message
    with pytest.raises(AddressMapError, match="twin"):
        _ = f.host_domains
    # the same name on two hosts is fine
    wins[1] = Window("host1", 1 << 51, target="chip10", size=32 * GiB, name="twin")
    found = check(sd200.replace(address_plan=AddressPlan(windows=wins)))
    assert _codes(found) == {"alias"}           # onto bytes a default window maps: a warning


def test_window_named_like_a_default_window_is_refused(sd200):
    plan = AddressPlan(windows=[Window("host0", 1 << 50, target="chip9", size=32 * GiB,
                                       name="chip9")])
    found = check(sd200.replace(address_plan=plan))
    assert "host0 window 'chip9'" in _named(found, "invalid")


def test_example_file_tenant_partition_is_clean():
    from pathlib import Path

    path = Path(__file__).resolve().parent.parent / "examples" / "sd200-ultra.toml"
    text = path.read_text()
    a, b = text.index("# --- tenant partition ---"), text.index("# --- end ---")
    block = "\n".join(line[2:] if line.startswith("# ") else line.lstrip("#")
                      for line in text[a:b].splitlines()[1:])
    assert "default_windows = true" in text
    partition = text.replace("default_windows = true", "default_windows = false") + "\n" + block
    from fabric import read_system

    s = read_system(partition, "tenant.toml", build=topologies.build)
    assert _bare(check(s)) == []          # and a warning a host (test_audit_s25_unmapped)
    f = s.fabric
    assert f.translate("host1", 0x1000_0000_0000 + 64).owner == "chip0"
    with pytest.raises(TranslationError, match="read-only"):
        f.translate("host1", 0x1000_0000_0000, op="write")
    # the suggestion with the default windows left on is what the comment warns about
    noisy = read_system(text + "\n" + block, "noisy.toml", build=topologies.build)
    assert {f.code for f in check(noisy) if f.severity == "error"} == {"isolation"}


@pytest.mark.parametrize("size, base, ok", [
    (4 * 256 * MiB, 0, True), (8 * 256 * MiB, 0, True), (2 * 256 * MiB, 0, False),
    (4 * 256 * MiB + 16384, 0, False), (4 * 256 * MiB, 128 * MiB, False),
])
def test_cxl_rule_base_and_size_in_units_of_256_mib_times_ways(size, base, ok):
    reg = Region((1 << 40) + base, size, ("a", "b", "c", "d"), kind="dram", granularity=4096)
    if ok:
        AddressMap([reg])
    else:
        with pytest.raises(AddressMapError, match="256MiB"):
            AddressMap([reg])


def test_windows_and_grants_of_a_failed_host_are_no_fault(sd200):
    # variant: a host whose chips all fail takes its windows and grants with it
    plan = AddressPlan(windows=[Window("host1", 1 << 50, target="chip20", size=32 * GiB,
                                       name="w")],
                       grants=[Grant("host1", "chip20"), Grant("host0", "*")])
    f = sd200.replace(address_plan=plan)
    g = f.without(chips=[f"chip{r}" for r in range(8, 16)])
    assert g.translate("host0", 0x80_0000_0000) == f.translate("host0", 0x80_0000_0000)
    assert "host1" not in g.host_domains
    assert {x.code for x in check(g) if x.severity == "error"} <= {"unreachable", "isolation"}
    assert not any("'w'" in x.message for x in check(g))


def test_access_onto_a_failed_chip_says_it_failed(sd200):
    g = sd200.without(chips=["chip9"])
    from fabric import RoutingError

    with pytest.raises(RoutingError, match="'chip9' of this address has failed"):
        access(g, "chip0", sd200.address_map.global_address("chip9", 0))
    # a host whose chips all failed: its DRAM is gone with it
    plan = AddressPlan(windows=[Window("host0", 1 << 50, target="host1.dram", name="d")])
    g = sd200.replace(address_plan=plan).without(chips=[f"chip{r}" for r in range(8, 16)])
    with pytest.raises(RoutingError, match="'host1' of this address has failed"):
        access(g, "chip0", g.address_map.global_address("host1", 0))


def test_a_region_called_star_is_refused(sd200):
    # '*' in a grant means every region: a region of that name would be ambiguous
    plan = AddressPlan(regions=[Region(1 << 52, GiB, "host0", kind="storage", name="*")])
    found = check(sd200.replace(address_plan=plan))
    assert any(f.code == "invalid" and "region '*'" in f.message for f in found)


def test_a_domain_named_like_a_region_is_refused(sd200):
    pool = Region(0, 2 * 256 * MiB, ("host0", "host1"), kind="dram", granularity=4096,
                  name="host2")
    found = check(sd200.replace(address_plan=AddressPlan(interleave=[pool])))
    assert any(f.code == "invalid" and "region 'host2'" in f.message
               and "host domain 'host2'" in f.message for f in found)


@pytest.mark.parametrize("call", [
    lambda f: f.translate("host0", 10**5000),
    lambda f: f.translate("host0", "9" * 5000),
    lambda f: f.address_map.lookup(-10**5000),
    lambda f: f.address_map.global_address("chip1", 10**5000),
    lambda f: interleave_target(10**5000, 4, 256),
    lambda f: access(f, "chip0", 10**5000),
    lambda f: f.translate("x" * 5000, 0),
])
def test_huge_values_through_the_api_give_short_messages(sd200, call):
    from fabric import FabricError

    with pytest.raises(FabricError) as e:
        call(sd200)
    assert len(str(e.value)) < 400
