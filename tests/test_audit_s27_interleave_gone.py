"""An interleave set with a failed member is gone as a whole (lead's decision, session 27).

check() reports a window onto such a set as ``unreachable`` (the window keeps its target;
the memory is gone). An access by address into ANY granule of the set, a live member's
too, raises the same named RoutingError (the set, the member that failed) instead of being
timed; so do the forwarding tables' walk, ``access_to`` / ``access_latencies`` where a chip's
memory is such a set, and ``cofabric route`` / ``latency`` (one line, exit 2).

The property draws random plans (1-2 sets of 2-4 members over chips and host DRAM) and
random failed chips (whole hosts too) on small fabrics of three routing policies; the
reference says by brute force which sets are gone (a member is a failed chip, or a host
whose every chip failed) and, for a live set, which node serves the granule and by which
policy paths (tests/routing_brute.py).
"""

import pytest
from cli_run import run_cli
from degrade import built
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st
from routing_brute import memory_server, policy_paths

from fabric import (
    AddressPlan,
    Region,
    RoutingError,
    Window,
    access,
    access_latencies,
    access_to,
    check,
    forwarding_tables,
)

SPECS = ("torus:4x4,hosts=4,chip=h100", "fattree:k=4,chip=h100,hosts=4",
         "rail:servers=3,gpus=2,chip=h100")
UNIT = 256 << 20            # a set's size per way: the CXL decoder unit


def _planned(spec, sets):
    """The intact fabric with ``sets`` (tuples (members, granularity)) interleaved over
    host DRAM / chips and mapped by a window of every host."""
    f = built(spec)
    regions = [Region(0, UNIT * len(m), tuple(m), kind="dram", granularity=gr, name=f"set{i}")
               for i, (m, gr) in enumerate(sets)]
    wins = [Window(h, (1 << 50) + (i << 40), target=r.name, size=r.size, name=f"w{i}")
            for h in sorted(f.domains) for i, r in enumerate(regions)]
    return f.replace(address_plan=AddressPlan(interleave=regions, windows=wins,
                                              hbm_bytes=16 << 30))


def _gone_members(f, members, dead):
    """Brute force: the members of a set that failed (a chip among ``dead``, or a host domain
    of the intact fabric ``f`` whose every chip is)."""
    return [m for m in members
            if m in dead or (m in f.domains and set(f.domains[m]) <= dead)]


@st.composite
def cases(draw):
    spec = draw(st.sampled_from(SPECS))
    f0 = built(spec)
    owners = list(f0.endpoints) + sorted(f0.domains)
    sets = tuple((tuple(draw(st.lists(st.sampled_from(owners), min_size=2, max_size=4,
                                      unique=True))),
                  draw(st.sampled_from((256, 1024, 4096))))
                 for _ in range(draw(st.integers(1, 2))))
    f = _planned(spec, sets)
    chips = draw(st.lists(st.sampled_from(list(f0.endpoints)), max_size=3, unique=True))
    if draw(st.booleans()):                     # a whole host too: its DRAM is gone
        chips += [c for c in f0.domains[draw(st.sampled_from(sorted(f0.domains)))]
                  if c not in chips]
    assume(chips and len(chips) < len(f0.endpoints))
    return f, f.without(chips=chips), sets, set(chips)


def _assert_names_the_set(e, reg, gone):
    msg = str(e)
    assert f"region {reg.name!r}" in msg and "gone as a whole" in msg, msg
    for m in gone:
        assert repr(m) in msg, (m, msg)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases(), st.data())
def test_an_access_into_a_set_with_a_failed_member_is_refused_like_check(case, data):
    f, g, sets, dead = case
    amap = g.address_map
    try:
        ft = forwarding_tables(g)
    except RoutingError:
        ft = None                   # a degraded dimension-order fabric: no destination tables
    found = check(g)
    for i, (members, gr) in enumerate(sets):
        gone = _gone_members(f, members, dead)
        reg = amap.region(f"set{i}")
        # check(): a window onto the set is an unreachable error iff a member failed
        wins = [x for x in found if x.code == "unreachable" and x.severity == "error"
                and f"region 'set{i}'" in x.message]
        assert bool(wins) == bool(gone), (members, dead, wins)
        for _ in range(3):
            src = data.draw(st.sampled_from(list(g.endpoints)))
            k = data.draw(st.integers(0, 3 * len(members) - 1))        # granule k
            addr = reg.base + k * gr + data.draw(st.integers(0, gr - 64))
            op = data.draw(st.sampled_from(("load", "store")))
            if gone:
                with pytest.raises(RoutingError) as e:
                    access(g, src, addr, op=op, transport="native")
                _assert_names_the_set(e.value, reg, gone)
                if ft is not None:
                    with pytest.raises(RoutingError) as e2:
                        ft.forward(src, addr)
                    assert str(e2.value) == str(e.value)
                continue
            owner = members[k % len(members)]
            srv = memory_server(g, owner, src)
            paths = policy_paths(g, src, srv) if srv != src else [[src]]
            if not paths:
                with pytest.raises(RoutingError) as e:
                    access(g, src, addr, op=op, transport="native")
                assert "gone as a whole" not in str(e.value)
                continue
            a = access(g, src, addr, op=op, transport="native")
            assert (a.target, list(a.path) in paths) == (srv, True), (a.path, paths[:3])


@pytest.mark.parametrize("granule", range(4))
def test_the_example_pool_with_a_dead_host_is_gone_at_every_granule(granule):
    """examples/sd200-ultra.toml's pool over host0..host3's DRAM, host2's chips failed: host0's
    window onto it is unreachable, and a load into host0's own granule (and every other) is
    refused naming the pool and host2, where it was timed (30 ns at chip0)."""
    import topologies

    f = topologies.load_system("examples/sd200-ultra.toml").fabric
    g = f.without(chips=[f"chip{c}" for c in range(16, 24)])
    pool = g.address_map.region("pool")
    assert any(x.code == "unreachable" and "'pool'" in x.message for x in check(g))
    with pytest.raises(RoutingError) as e:
        access(g, "chip0", pool.base + granule * pool.granularity + 8, op="load")
    _assert_names_the_set(e.value, pool, ["host2"])
    # the intact fabric times the same access
    assert access(f, "chip0", pool.base + granule * pool.granularity + 8).total > 0


def _pair_system(tmp_path):
    """torus:4x4,chip=h100 whose chip0 and chip1 hold only a set interleaved over them (the
    explicit layout): their memory, for access_to and access_latencies, is that set."""
    lines = ['[system]', 'topology = "torus:4x4,chip=h100"', '[address]',
             'layout = "explicit"']
    for k in range(2, 16):
        lines += ['[[regions]]', f'name = "chip{k}.hbm"', f'base = {k << 36}',
                  'size = "64GiB"', f'owner = "chip{k}"', 'kind = "hbm"']
    lines += ['[[regions]]', 'name = "pair"', f'base = {16 << 36}', 'size = "512MiB"',
              'owners = ["chip0", "chip1"]', 'granularity = "4KiB"', 'kind = "hbm"']
    for h in range(4):
        lines += ['[[windows]]', f'host = "host{h}"', 'name = "pair"',
                  f'local_base = {1 << 50}', 'target = "pair"']
    path = tmp_path / "pair.toml"
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def test_access_to_latencies_and_the_cli_agree_on_a_gone_set(tmp_path):
    import topologies

    system = _pair_system(tmp_path)
    f = topologies.load_system(system).fabric
    assert check(f) == []
    assert access_to(f, "chip5", "chip0").target == "chip0"        # intact: timed
    g = f.without(chips=["chip1"])
    with pytest.raises(RoutingError) as e1:
        access_to(g, "chip5", "chip0")                  # chip0 lives; its memory is gone
    with pytest.raises(RoutingError) as e2:
        access_latencies(g)
    _assert_names_the_set(e1.value, g.address_map.region("pair"), ["chip1"])
    assert str(e2.value) == str(e1.value)
    for argv in (["route", system, "chip5", "chip0", "--fail-chip", "chip1"],
                 ["latency", system, "--fail-chip", "chip1", "--quiet"]):
        rc, out, err = run_cli(argv)
        assert (rc, out) == (2, ""), (argv, rc, out)
        assert err == f"cofabric {argv[0]}: error: {e1.value}\n"
    rc, out, _ = run_cli(["route", system, "chip5", "chip0"])
    assert rc == 0 and "chip5 -> chip4 -> chip0" in out


@example(members=("chip0", "chip1", "chip2"), failed="chip2")
@given(members=st.permutations(["chip0", "chip1", "chip2", "chip3"]).map(lambda p: tuple(p[:3])),
       failed=st.sampled_from(["chip0", "chip1", "chip2", "chip3"]))
@settings(max_examples=12, deadline=None)
def test_every_granule_of_a_set_over_a_failed_chip_is_refused(members, failed):
    """Deterministic companion of the property (every draw under CI's profile hits it): each
    granule of a 3-way set over chips, one of them failed or not."""
    f = _planned("torus:4x4,hosts=4,chip=h100", ((members, 256),))
    g = f.without(chips=[failed])
    reg = g.address_map.region("set0")
    src = "chip5"
    for k in range(3):
        addr = reg.base + k * 256
        if failed in members:
            with pytest.raises(RoutingError) as e:
                access(g, src, addr)
            _assert_names_the_set(e.value, reg, [failed])
        else:
            assert access(g, src, addr).target == members[k]
