"""Audit (session 8): the address side against brute-force references.

* Forwarding by address reaches the owner of every byte of an interleave set: the
  requester decodes the granule (CXL formula) and the transaction then follows the
  owner's entries. ``ForwardingTables.forward`` used to say "no route ... the tables
  lose it" for any address in a set, on an intact fabric.
* A symmetric heap with a per-chip override stays valid when that chip fails (the
  override named "a chip that is not of the fabric" and ``symmetric_memory`` was refused).

The references below are written from the documentation: the CXL interleave formula,
"a host's memory is reached through its first chip" (session 22: through the chip itself from
a chip of the host, else its nearest chip: routing_brute.memory_server), and the routing
policy's path.
"""

import functools

import pytest
from degrade import built, degrade
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from routing_brute import built_h100, memory_server

import topologies
from fabric import (
    AddressPlan,
    DomainLimits,
    Region,
    RoutingError,
    SymmetricHeap,
    Window,
    access,
    check,
    forwarding_tables,
)
from fabric._units import GiB, MiB

# A chip's own region leaves 1 GB of its 80 GB (h100) for its share of a set (session 10: a
# chip gives no more memory than it has; the pools here take at most 256 MiB a chip).
HBM_BYTES = 79 * 10**9

SETTINGS = settings(max_examples=30, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])

# destination-routed families (forwarding tables exist intact; up/down ones degraded too)
SPECS = ["fattree:k=4", "leafspine:k=4,over=3", "rail:servers=2,gpus=2,spines=1",
         "switch:4,planes=2", "torus:4x2", "hypermesh:2x2x2", "dragonfly:h=1"]


def _ref_owner(reg, address):
    """The owner of ``address`` in interleave set ``reg`` (CXL: (o // g) % ways)."""
    return reg.owners[((address - reg.base) // reg.granularity) % reg.ways]


def _ref_node(f, owner, src=None):
    """The node serving an owner: a chip itself, a host domain through its first chip; to a
    requester ``src``, routing_brute.memory_server's (its own host's DRAM at itself)."""
    if src is not None:
        return memory_server(f, owner, src)
    return owner if owner in f.graph else f.domains[owner][0]


@st.composite
def interleaved_fabrics(draw):
    spec = draw(st.sampled_from(SPECS))
    f = built_h100(spec)
    ways = draw(st.sampled_from([2, 3, 4]))
    pool = list(f.endpoints) + list(f.domains)
    owners = tuple(draw(st.permutations(pool))[:ways])
    gran = draw(st.sampled_from([256, 4096, 16384]))
    size = ways * 256 * MiB
    plan = AddressPlan(host_memory=GiB, hbm_bytes=HBM_BYTES, interleave=[
        Region(0, size, owners, kind="dram", granularity=gran, name="pool")])
    g = f.replace(address_plan=plan)
    fail = []
    if g.router.policy == "up-down":
        # a degraded up/down fabric keeps destination tables: fail a random link or two
        edges = sorted(g.graph.edges(), key=str)
        fail = draw(st.lists(st.sampled_from(edges), max_size=2, unique=True))
    if fail:
        g = g.without(links=fail)
    offsets = draw(st.lists(st.integers(0, size - 1), min_size=1, max_size=4))
    src = draw(st.sampled_from(list(g.endpoints)))
    return g, offsets, src


@SETTINGS
@given(interleaved_fabrics())
def test_forwarding_reaches_the_owner_of_every_granule(case):
    f, offsets, src = case
    ft = forwarding_tables(f)
    reg = f.address_map.region("pool")
    for off in offsets:
        address = reg.base + off
        node = _ref_node(f, _ref_owner(reg, address), src)
        try:
            want = f.route(src, node) if node != src else [src]
        except RoutingError:
            with pytest.raises(RoutingError):
                ft.forward(src, address)
            continue
        assert ft.forward(src, address) == want
        # the same walk as towards the first byte of the owner's own memory
        own = next(r for r in f.address_map.regions_of(node) if r.ways == 1)
        assert ft.forward(src, own.base) == want


def test_forwarding_into_an_interleave_set_on_the_seed_system():
    f = topologies.build("sd200-ultra").replace(address_plan=AddressPlan(
        hbm_bytes=63 * 10**9, interleave=[
        Region(0, 2 * 256 * MiB, ("chip0", "chip9"), kind="hbm", granularity=4096,
               name="pool")]))
    assert check(f) == []
    ft = forwarding_tables(f)
    base = f.address_map.region("pool").base
    assert ft.forward("chip5", base) == f.route("chip5", "chip0")
    assert ft.forward("chip5", base + 4096) == f.route("chip5", "chip9")
    assert ft.forward("chip9", base + 4096 + 17) == ["chip9"]


@pytest.mark.parametrize("override", [{"offset": GiB, "size": GiB},      # the same as all
                                      {"offset": 2 * GiB, "size": GiB}])  # a mismatch
def test_a_heap_override_of_a_failed_chip_is_no_fault(override):
    f = topologies.build("sd200-ultra").replace(address_plan=AddressPlan(
        heap=SymmetricHeap(GiB, offset=GiB, chips={"chip3": override})))
    intact = {x.code for x in check(f)}
    assert intact == (set() if override["offset"] == GiB else {"symmetric-mismatch"})
    g = f.without(chips=["chip3"])
    codes = {x.code for x in check(g)}
    assert codes == {"unreachable"}          # the windows onto chip3; not the override
    mem = g.symmetric_memory
    assert mem.address(4, 0) == f.address_map.global_address("chip4", GiB)
    with pytest.raises(Exception, match="rank 3 .chip3. has failed"):
        mem.address(3, 0)
    # an override of a chip the plan never had is still refused by name
    h = f.replace(address_plan=f.address_plan.replace(heap=SymmetricHeap(
        GiB, offset=GiB, chips={"chip999": {"offset": GiB}})))
    assert any(x.code == "invalid" and "chip999" in x.message for x in check(h))


@pytest.mark.parametrize("chips, match", [
    (["chip0", "chip0"], "lists 'chip0' twice"),          # was: a 30 ns "pair"
    ([0, "chip0", 1], "lists 'chip0' twice"),
    (["chip0", "rank:1", 1], "lists 'chip1' twice"),
])
def test_latencies_are_over_distinct_chips(chips, match):
    from fabric import NodeError, access_latencies
    f = topologies.build("sd200-ultra")
    with pytest.raises(NodeError, match=match):
        access_latencies(f, chips=chips)


def test_latencies_of_a_nic_say_it_is_not_a_chip():
    from fabric import NodeError, access_latencies
    f = topologies.build("cluster-128")
    with pytest.raises(NodeError, match="'nic0' is a nic, not a chip"):
        access_latencies(f, chips=["chip0", "nic0"])


@SETTINGS
@given(st.sampled_from(["sd200-ultra", "cluster-128"]), st.data())
def test_latencies_over_chosen_chips_are_the_single_accesses(spec, data):
    """Brute force: every ordered pair of the chosen chips is the access_to of that pair."""
    from fabric import access_latencies, access_to
    f = built(spec)
    chips = data.draw(st.lists(st.sampled_from(list(f.endpoints)), min_size=2, max_size=4,
                               unique=True))
    op = data.draw(st.sampled_from(["load", "store"]))
    s, d, lat = access_latencies(f, op=op, chips=chips, transport="rdma")
    assert len(lat) == len(chips) * (len(chips) - 1)
    for i, j, t in zip(s.tolist(), d.tolist(), lat.tolist(), strict=True):
        assert i != j
        want = access_to(f, chips[i], chips[j], op=op, transport="rdma").total
        assert t == pytest.approx(want, rel=1e-12)


# -- per-dimension tables: every mapped address, not only a chip's memory ----------------
# lookup_per_dimension shifted any address into a "chip index": host3's DRAM on sd200-ultra
# went towards chip16 (the flat table and forward(): chip24, host3's first chip), and an
# unmapped address answered () ("arrived").

DOR_SPECS = ["torus:4x4", "hypermesh:4x4", "mesh:4x2", "hypermesh:2x2x2"]


@functools.cache
def _dor(spec):
    f = built_h100(spec).replace(address_plan=AddressPlan(
        host_memory=GiB, hbm_bytes=HBM_BYTES, interleave=[Region(
            0, 2 * 256 * MiB, ("chip1", "host0"), kind="dram", granularity=4096,
            name="pool")]))
    return f, forwarding_tables(f)


@SETTINGS
@given(st.sampled_from(DOR_SPECS), st.data())
def test_per_dimension_lookup_is_the_first_hop_of_the_route(spec, data):
    f, ft = _dor(spec)
    assert ft.per_dimension is not None
    regions = f.address_map.regions
    reg = data.draw(st.sampled_from(regions))
    address = reg.base + data.draw(st.integers(0, reg.size - 1))
    node = data.draw(st.sampled_from(list(f.endpoints)))
    owner = reg.owner if reg.ways == 1 else _ref_owner(reg, address)
    target = _ref_node(f, owner, node)
    ports = ft.lookup_per_dimension(node, address)
    if target == node:
        assert ports == ()
        return
    r = f.router
    first = f.route(node, target)[1]
    assert [f.nodes[int(r.link_tail[p])] for p in ports] == [node] * len(ports)
    assert f.nodes[int(r.link_head[ports[0]])] == first


@pytest.mark.parametrize("address", [1 << 56, (1 << 36) - 4096])
def test_per_dimension_lookup_of_an_unmapped_address_is_refused(address):
    from fabric import AddressMapError
    ft = forwarding_tables(topologies.build("sd200-ultra"))
    with pytest.raises(AddressMapError, match="not mapped"):
        ft.lookup_per_dimension("chip0", address)


# -- translate, route, reverse: one round trip against a linear-scan reference -----------

RT_SPECS = ["torus:4x4,hosts=4", "rail:servers=2,gpus=4", "fattree:k=4"]
PAGE = 2 * MiB


@st.composite
def round_trips(draw):
    f = built_h100(draw(st.sampled_from(RT_SPECS)))
    hosts = list(f.domains)
    targets = [f"{c}.hbm" for c in f.endpoints] + [f"{h}.dram" for h in hosts] + ["pool"] * 12
    wins = []
    for i in range(draw(st.integers(0, 3))):
        wins.append(Window(draw(st.sampled_from(hosts)), (1 << 50) + i * (1 << 40),
                           size=draw(st.integers(1, 8)) * PAGE,
                           target=draw(st.sampled_from(targets)),
                           target_offset=draw(st.integers(0, 16)) * PAGE, page_size=PAGE,
                           permissions=draw(st.sampled_from(["r", "rw"])), name=f"w{i}"))
    pool = Region(0, 2 * 256 * MiB, tuple(draw(st.permutations(list(f.endpoints) + hosts))[:2]),
                  kind="dram", granularity=draw(st.sampled_from([256, 4096])), name="pool")
    f = f.replace(address_plan=AddressPlan(host_memory=GiB, hbm_bytes=HBM_BYTES,
                                           interleave=[pool], windows=wins,
                                           limits=DomainLimits(alignment="page")))
    f = draw(degrade(f))
    return f, draw(st.randoms(use_true_random=False))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(round_trips())
def test_translate_route_and_back_agree_with_a_linear_scan(case):
    f, rng = case
    regions = f.address_map.regions
    try:
        ft = forwarding_tables(f)
    except RoutingError:
        ft = None               # a degraded dimension-order fabric: no destination tables
    for _ in range(6):
        h = rng.choice(sorted(f.domains))
        dom = f.host_domains[h]
        mine = [x for x in dom.windows if x.name.startswith("w")]     # the plan's own
        w = rng.choice(mine if mine and rng.random() < 0.7 else dom.windows)
        a = w.local_base + rng.randrange(w.size)
        # reference: the one window holding a (linear scan), then the one region
        (hit,) = [x for x in dom.windows if x.local_base <= a < x.local_base + x.size]
        g = hit.global_base + (a - hit.local_base)
        (reg,) = [r for r in regions if r.base <= g < r.base + r.size]
        o = g - reg.base
        if reg.ways == 1:
            owner, offset = reg.owner, o
        else:
            gr = reg.granularity
            owner = reg.owners[(o // gr) % reg.ways]
            offset = (o // (gr * reg.ways)) * gr + o % gr
        t = f.translate(h, a)
        assert (t.global_address, t.owner, t.offset) == (g, owner, offset)
        # back: the global address and the owner's offset lead to the same byte
        assert a in dom.local_addresses(g)
        assert f.address_map.global_address(owner, offset, region=reg.name) == g
        # route: the access goes from a chip of the host to the node serving the owner (one
        # byte, the reference's: 64 B from a random byte may run into the next granule or
        # past a window, which fabric.access refuses; tests/test_audit_s24_span.py)
        src = rng.choice(list(f.domains[h]))
        # a failed owner's memory is gone; an interleave set with a failed member is gone as
        # a whole, every granule of it (a live member's too: decided in session 27)
        dead = any(o in f.failures.ranks or (o in dict(f.address_plan.domains or ())
                                             and o not in f.domains) for o in reg.owners)
        if dead:
            with pytest.raises(RoutingError, match="has failed"):
                access(f, src, g, size=1, transport="native")
            if ft is not None:
                with pytest.raises(RoutingError, match="has failed"):
                    ft.forward(src, g)
            continue
        node = _ref_node(f, owner, src)
        try:
            want = f.route(src, node) if node != src else [src]
        except RoutingError:
            with pytest.raises(RoutingError):
                access(f, src, g, size=1, transport="native")
            continue
        assert list(access(f, src, g, size=1, transport="native").path) == want
        if ft is not None:
            assert ft.forward(src, g) == want


def test_translating_through_a_failed_host_says_it_failed():
    import numpy as np

    from fabric import NodeError
    f = topologies.build("sd200-ultra")
    g = f.without(chips=[f"chip{i}" for i in range(8)])         # all of host0
    for call in (lambda: g.translate("host0", 0x1000),
                 lambda: g.translate_many("host0", np.array([0x1000]))):
        with pytest.raises(NodeError, match="host domain 'host0' has failed: every chip"):
            call()
    with pytest.raises(NodeError, match="no host domain called 'host99'"):
        g.translate("host99", 0x1000)
    # the other hosts translate as on the intact fabric (windows do not move)
    assert g.translate("host1", 0x1000) == f.translate("host1", 0x1000)
