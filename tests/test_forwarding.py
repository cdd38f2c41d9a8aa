"""Forwarding tables: hop-by-hop lookup reproduces route; table sizes; per-dimension tables."""

import pytest
from routing_brute import memory_server

import topologies
from fabric import AddressMapError, RoutingError, forwarding_tables

SPECS = ["torus:4x4", "torus:3x4", "mesh:4x2", "hypermesh:4x2,connect=full/switch",
         "fattree:k=4", "leafspine:k=4,over=3", "rail:servers=2,gpus=2,spines=1",
         "switch:4,planes=2", "dragonfly:h=1"]


@pytest.fixture(scope="module", params=SPECS)
def case(request):
    f = topologies.build(request.param + ",chip=h100")
    return f, forwarding_tables(f)


def test_following_the_tables_gives_the_route(case):
    f, ft = case
    amap = f.address_map
    for a in f.endpoints:
        for b in f.endpoints:
            addr = amap.global_address(b, 4096)
            want = f.route(a, b) if a != b else [a]
            assert ft.forward(a, addr) == want


def test_host_memory_goes_to_the_hosts_nearest_chip_or_stays_local(case):
    # a host's DRAM: from another host's chip, to the host's nearest chip by its route (the
    # first at a tie); from a chip of the host, served where it is (its own link to its
    # host's memory, session 22)
    f, ft = case
    for h, chips in f.domains.items():
        (reg,) = [g for g in f.address_map.regions_of(h) if g.kind == "dram"]
        for src in f.endpoints:
            path = ft.forward(src, reg.base + 64)
            assert path == ([src] if src in chips else f.route(src, memory_server(f, h, src)))


def test_every_entry_points_out_of_its_node(case):
    f, ft = case
    r = f.router
    for node, table in ft.tables.items():
        i = f.node_index[node]
        for base, end, ports in table.entries:
            assert base < end
            assert all(r.link_tail[p] == i for p in ports)
        bases = [e[0] for e in table.entries]
        assert bases == sorted(bases)


def test_degraded_fat_tree_tables_follow_the_route():
    f = topologies.build("fattree:k=4,chip=h100").without(links=["agg0.0-core0",
                                                                 "edge1.1-agg1.0"])
    ft = forwarding_tables(f)
    for a in f.endpoints:
        for b in f.endpoints:
            if a != b:
                assert ft.forward(a, f.address_map.global_address(b, 0)) == f.route(a, b)


def test_fat_tree_table_sizes():
    # k=4, in address order chip0..15 HBM then host0..15 DRAM (host h -> chip h). edge0.0:
    # chip0, chip1, up (chips 2-15), host0, host1, up (hosts 2-15) = 6 entries; edge1.0:
    # up, chip2, chip3, up (chips 4-15 and hosts 0-1 merge), host2, host3, up = 7
    f = topologies.build("fattree:k=4,chip=h100")
    ft = forwarding_tables(f)
    assert ft.sizes["edge0.0"] == 6 and ft.sizes["edge1.0"] == 7
    (_, _, up), = [e for e in ft.tables["edge1.0"].entries if len(e[2]) > 1][:1]
    assert len(up) == 2


@pytest.mark.parametrize("spec,flat,per_dim", [
    ("sd200-ultra", 144, 16 + 16),        # 128 chips + 16 hosts; 8+4+4 plus the 16 hosts
    ("torus:4x4x4,chip=tpu-v4", 64 + 16, 12 + 16),
])
def test_owner_bits_per_dimension_tables(spec, flat, per_dim):
    f = topologies.build(spec)
    ft = forwarding_tables(f)
    assert ft.owner_shift is not None
    assert ft.max_entries == flat
    assert ft.per_dimension_entries == per_dim
    amap = f.address_map
    for v in f.endpoints[:: max(1, f.n_endpoints // 16)]:
        for b in f.endpoints:
            addr = amap.global_address(b, 123)
            assert ft.lookup_per_dimension(v, addr) == ft.tables[v].lookup(addr)


def test_refusals():
    f = topologies.build("torus:4x4,chip=h100").without(links=[("chip0", "chip1")])
    with pytest.raises(RoutingError, match="degraded dimension-order"):
        forwarding_tables(f)
    g = topologies.build("dragonfly:h=1,chip=h100").without(links=["r0.0-r0.1"])
    with pytest.raises(RoutingError, match="degraded minimal"):
        forwarding_tables(g)
    ft = forwarding_tables(topologies.build("fattree:k=4,chip=h100"))
    with pytest.raises(AddressMapError, match="no forwarding entry"):
        ft.tables["edge0.0"].lookup(1 << 56)
    with pytest.raises(RoutingError, match="per-dimension"):
        ft.lookup_per_dimension("edge0.0", 0)
