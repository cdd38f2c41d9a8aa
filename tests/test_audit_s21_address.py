"""Audit (session 21): hostile system files, read as the file says or refused by name.

Two faults of the system-file reader (``fabric/_system.py``), each test below failed on main
1abe6fd:

* An ``[[interleave]]`` set is placed by the layout, and the file gives it no base (``base``
  is not one of its keys). Under ``layout = "explicit"`` the layout places nothing, so the
  set kept the reader's placeholder base 0: ``cofabric check`` called the file clean and the
  set sat at global address 0x0, which the file never says. It is now an ``invalid``
  finding on that entry (an explicit set is a ``[[regions]]`` entry with ``owners``,
  ``granularity`` and ``base``), and the set is left out of the plan.
* A finding names the file line of its entry's table header, found by a line scan. A header
  written with a quoted name (``[["windows"]]``, valid TOML for ``[[windows]]``) was not
  seen, and a header-like line inside a multi-line string was taken for one, so a finding
  named another entry's line. Quoted names are now read, and where the headers the scan
  sees do not match the entries TOML read, no line is named (never a wrong one).
"""

import networkx as nx
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import topologies
from analysis._cli import main
from fabric import (
    AddressMapError,
    AddressPlan,
    Fabric,
    GraphError,
    NodeError,
    RoutingError,
    Window,
    access,
    access_to,
    check,
)
from topologies import read_system

TOP = '[system]\ntopology = "torus:2x2,chip=h100"\n'
SET = ('[[interleave]]\nname = "pool"\nowners = ["chip0", "chip1"]\ngranularity = "4KiB"\n'
       'size = "512MiB"\nkind = "dram"\n')
EXPLICIT = ('[address]\nlayout = "explicit"\nhost_memory = "0"\n'
            '[[regions]]\nname = "c0"\nbase = "0x1_0000_0000_0000"\nsize = "1GiB"\n'
            'owner = "chip0"\nkind = "hbm"\n')


def test_an_interleave_set_in_the_explicit_layout_is_refused_not_placed_at_zero():
    s = read_system(TOP + EXPLICIT + SET, "plan.toml")
    found = [f for f in check(s) if f.severity == "error"]
    assert [(f.code, f.where) for f in found] == [("invalid", "plan.toml:12 interleave[0]")]
    assert "[[regions]]" in found[0].message and "base" in found[0].message
    assert s.plan.interleave == ()
    assert all(r.base != 0 for r in s.fabric.address_map.regions)


def test_the_same_set_as_an_explicit_region_is_placed_at_its_base():
    region = SET.replace("[[interleave]]", "[[regions]]") + 'base = "0x2_0000_0000_0000"\n'
    s = read_system(TOP + EXPLICIT + region, "plan.toml")
    assert check(s) == []
    assert s.fabric.address_map.region("pool").base == 0x2_0000_0000_0000
    # the other layouts place an [[interleave]] set, as documented (the chips' own regions
    # leave room for their shares)
    s = read_system(TOP + '[address]\nhbm_bytes = "64GiB"\n' + SET, "plan.toml")
    assert check(s) == [] and s.fabric.address_map.region("pool").base > 0


def test_the_cli_refuses_an_explicit_interleave_set_in_one_line(tmp_path, capsys):
    p = tmp_path / "plan.toml"
    p.write_text(TOP + EXPLICIT + SET)
    assert main(["check", str(p)]) == 1
    out = capsys.readouterr().out
    assert f"{p}:12 interleave[0]: error: invalid:" in out
    assert main(["translate", str(p), "--host", "host0", "0x0"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "interleave[0]" in err


HEADERS = ["[[windows]]", '[["windows"]]', "[['windows']]", "[[ windows ]]", '[[ "windows" ]]']


@st.composite
def files(draw):
    """A system file of 1-4 windows onto nothing (each a ``dangling-target`` finding), their
    headers in every spelling TOML allows, maybe after a multi-line string holding header-like
    lines. Returns ``(text, header line of each window, whether a decoy is present)``."""
    lines = TOP.splitlines()
    decoy = draw(st.booleans())
    if decoy:
        quote = draw(st.sampled_from(['"""', "'''"]))
        lines[1:1] = [f"name = {quote}", draw(st.sampled_from(HEADERS[:2] + ["[system]"])),
                      quote]
    at = []
    for i in range(draw(st.integers(1, 4))):
        if draw(st.booleans()):
            lines.append("# [[windows]] in a comment")
        lines.append(draw(st.sampled_from(HEADERS)))
        at.append(len(lines))
        lines += ['host = "host0"', f'name = "w{i}"', f'local_base = "0x{i + 1}000_0000_0000"',
                  f'target = "nowhere{i}"']
    return "\n".join(lines) + "\n", at, decoy


@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
@given(files())
def test_a_finding_names_its_own_entrys_line_or_none(case):
    text, at, decoy = case
    found = [f for f in check(read_system(text, "f.toml")) if f.code == "dangling-target"]
    assert len(found) == len(at)
    for f in found:
        i = int(f.message.split("window 'w")[1].split("'")[0])
        assert f.where in (f"f.toml:{at[i]} windows[{i}]", f"f.toml windows[{i}]"), (f.where, at)
        if not decoy:
            assert f.where == f"f.toml:{at[i]} windows[{i}]"


@pytest.mark.parametrize("header", HEADERS)
def test_a_quoted_header_is_read_as_its_table(header):
    text = TOP + f'{header}\nhost = "host0"\nname = "w"\nlocal_base = "0x1000_0000_0000"\n' \
        'target = "nowhere"\n'
    (f,) = check(read_system(text, "f.toml"))
    assert (f.code, f.where) == ("dangling-target", "f.toml:3 windows[0]")


# -- check()'s 'unreachable': every window no chip of its domain can use ---------------------

RAIL = "rail:servers=2,gpus=2,chip=h100"     # host0: chip0, chip1; host1: chip2, chip3


def _rail(windows):
    return topologies.build(RAIL).replace(address_plan=AddressPlan(windows=windows))


def test_a_window_onto_a_hosts_dram_behind_a_cut_off_chip_is_unreachable():
    # host1's DRAM is served by its first chip, chip2 (fabric/_access.py target_node); with
    # nic2 failed no chip of host0 reaches chip2. On main check() named only host0's default
    # window onto chip2, and the window onto host1's DRAM, whose every access fails, had none.
    f = _rail([Window("host0", 1 << 50, size=1 << 30, target="host1.dram", name="dram1")])
    g = f.without(chips=["nic2"])
    addr = g.address_map.region("host1.dram").base + 64
    for chip in g.domains["host0"]:
        with pytest.raises(RoutingError, match="no route from .* to 'chip2'"):
            access(g, chip, addr, transport="native")
    errors = [x.message for x in check(g) if x.severity == "error"]
    assert any(m.startswith("host0 window 'dram1': no route from any chip of host0 to 'chip2'")
               for m in errors), errors
    assert any(m.startswith("host0 window 'chip2': ") for m in errors)   # as before


@st.composite
def degraded_rails(draw):
    """A 3-server rail cluster whose hosts map every other host's DRAM, three NICs' registers
    and a second window onto each remote chip's HBM, with 1-3 NICs, links or chips failed."""
    f = topologies.build("rail:servers=3,gpus=2,chip=h100")
    hosts, wins = list(f.domains), []
    for h in hosts:
        targets = [f"{o}.dram" for o in hosts if o != h] + ["nic0.mmio", "nic3.mmio", "nic5.mmio"]
        targets += [c for o in hosts if o != h for c in f.domains[o]]
        for k, t in enumerate(targets):
            wins.append(Window(h, (1 << 50) + (k << 40), size=1 << 21, target=t, name=f"w-{t}"))
    f = f.replace(address_plan=AddressPlan(windows=wins))
    nodes = sorted(n for n in f.graph if not n.startswith("spine"))
    edges = sorted(f.graph.edges())
    dead = draw(st.lists(st.sampled_from(nodes), max_size=2, unique=True))
    cut = draw(st.lists(st.sampled_from(edges), max_size=2, unique=True))
    try:
        return f.without(chips=dead, links=[c for c in cut if not set(c) & set(dead)])
    except (NodeError, GraphError):
        return f.without(chips=dead[:1])


@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
@given(degraded_rails())
def test_a_window_no_chip_of_its_domain_can_use_has_an_unreachable_error(g):
    errors = {x.message.split(":")[0] for x in check(g)
              if x.code == "unreachable" and x.severity == "error"}
    for h, chips in g.domains.items():
        t = g.host_domains[h].table
        for w in g.address_plan.windows:
            if w.host != h:
                continue
            addr = int(t.global_base[t.names.index(w.name)])
            refused = []
            for chip in chips:
                try:
                    access(g, chip, addr, transport="native")
                    refused.append(False)
                except RoutingError:
                    refused.append(True)
            assert all(refused) == (f"{h} window {w.name!r}" in errors), (h, w.name, refused)


# -- a memory node's capacity ------------------------------------------------------------------

def _with_memory(capacity):
    G = nx.path_graph(["chip0", "chip1", "mem0"])
    nx.set_node_attributes(G, "chip", "kind")
    G.nodes["mem0"].update(kind="memory", capacity=capacity)
    nx.set_edge_attributes(G, 1e9, "bandwidth")
    nx.set_edge_attributes(G, 1e-7, "latency")
    return G


@pytest.mark.parametrize("capacity", ["1TiB", float("nan"), float("inf"), [1], 2**40 + 0.5,
                                      1.5e12, True, -4096, np.float64(4096)])
def test_a_memory_nodes_capacity_is_a_whole_number_of_bytes_or_refused(capacity):
    # on main: check() raised ValueError/OverflowError/TypeError for the first four (it never
    # raises for a bad plan), and 2**40 + 0.5 was truncated to 1 TiB with check() clean
    with pytest.raises(GraphError, match="node 'mem0' has capacity .* bytes, an integer >= 0"):
        Fabric.from_graph(_with_memory(capacity), chip="h100")


@pytest.mark.parametrize("capacity", [0, 4096, 2**40, np.int64(2**30)])
def test_a_whole_capacity_is_laid_out_as_given(capacity):
    f = Fabric.from_graph(_with_memory(capacity), chip="h100")
    assert check(f) == []
    sizes = [r.size for r in f.address_map.regions if r.owner == "mem0"]
    assert sizes == ([int(capacity)] if capacity else [])


# -- a host domain's name ------------------------------------------------------------------------

@pytest.mark.parametrize("host", [5, float("nan"), None, "", ("a",)])
def test_a_host_domain_is_named_by_a_string_or_refused(host):
    # on main, host=5 or NaN gave a fabric check() called clean whose every access from chip0
    # was refused: 'no host domain called 5; hosts: 5, hostB, default'
    G = nx.path_graph(["chip0", "chip1", "chip2"])
    nx.set_node_attributes(G, "chip", "kind")
    G.nodes["chip0"]["host"] = host
    G.nodes["chip1"]["host"] = "hostB"
    nx.set_edge_attributes(G, 1e9, "bandwidth")
    nx.set_edge_attributes(G, 1e-7, "latency")
    with pytest.raises(GraphError, match="host domain .* must be named by a non-empty string"):
        Fabric.from_graph(G, chip="h100")
    del G.nodes["chip0"]["host"]
    with pytest.raises(GraphError, match="host domain .* must be named by a non-empty string"):
        Fabric.from_graph(G, chip="h100", domains={host: ["chip0"], "hostB": ["chip1", "chip2"]})
    f = Fabric.from_graph(G, chip="h100")
    assert dict(f.domains) == {"default": ("chip0", "chip2"), "hostB": ("chip1",)}
    assert check(f) == [] and access_to(f, "chip2", "chip1").path[-1] == "chip1"


def test_a_host_domain_holds_chips_or_is_refused():
    G = nx.star_graph(["sw0", "chip0", "chip1", "chip2"])
    nx.set_node_attributes(G, "chip", "kind")
    G.nodes["sw0"]["kind"] = "switch"
    nx.set_edge_attributes(G, 1e9, "bandwidth")
    nx.set_edge_attributes(G, 1e-7, "latency")
    chips = ["chip0", "chip1", "chip2"]
    # on main an empty domain was accepted and check() called it clean; a window onto its
    # DRAM made access() and forwarding_tables() raise IndexError
    with pytest.raises(GraphError, match="host domain 'h' holds no chip"):
        Fabric.from_graph(G, chip="h100", domains={"h": [], "g": chips})
    # on main: 'domains name nodes not in the graph: ['c', 'h', 'i', 'p', '0']'
    with pytest.raises(GraphError, match="host domain 'h' .* got the string 'chip0chip1'"):
        Fabric.from_graph(G, chip="h100", domains={"h": "chip0chip1", "g": ["chip2"]})
    # a domain whose chips all failed is dropped by fabric.without, as before
    f = Fabric.from_graph(G, chip="h100", domains={"h": ["chip0"], "g": chips[1:]})
    assert dict(f.without(chips=["chip0"]).domains) == {"g": ("chip1", "chip2")}


def test_tuple_node_names_are_one_named_fault_not_interleave_sets():
    # networkx's own grid names its nodes (0, 0), (0, 1), ...: a Region reads a tuple owner as
    # an interleave set's owners, so on main check() reported chip (0, 0)'s memory as a set
    # over owners 0 and 0 ('an owner appears twice', 'owner 0 is nobody') and refused every
    # access with those words
    G = nx.grid_2d_graph(2, 2)
    nx.set_node_attributes(G, "chip", "kind")
    nx.set_edge_attributes(G, 1e9, "bandwidth")
    nx.set_edge_attributes(G, 1e-7, "latency")
    f = Fabric.from_graph(G, chip="h100")
    (finding,) = check(f)
    assert finding.code == "invalid" and "(0, 0)" in finding.message
    assert "convert_node_labels_to_integers" in finding.message
    with pytest.raises(AddressMapError, match="named by tuples"):
        access_to(f, (0, 0), (1, 1))
    g = Fabric.from_graph(nx.convert_node_labels_to_integers(G), chip="h100")
    assert check(g) == [] and access_to(g, 0, 3).target == 3
