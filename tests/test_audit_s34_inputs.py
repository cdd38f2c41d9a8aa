"""Session 34 (audit): long values in errors; empty sequences (decisions in fabric/_errors.py).

An error quotes a user's very long text shortened, not in full. A 5000-character spec, node name, op or model name came back as a 5-10 KB error line (the
CLI's one line, the exception's text); twice where the spec and its part were both quoted.
Each place now quotes through ``fabric._units.show_value``, the one abbreviation (short
values unchanged). Probe: 324 CLI commands, 6 long values x 54 argument positions: 243 long
lines before, 0 after.
"""
import errno

import numpy as np
import pytest
from cli_run import run_cli

import topologies
from analysis import expected_max_active
from fabric import AddressPlan, SymmetricHeap, interleave_offset, interleave_target

LONG = "x" * 5000
T = "torus:4x4"
M = ["--model", "deepseek-v3"]

ARGVS = [
    ["metrics", LONG],                                       # unknown family (twice)
    ["metrics", "torus:" + LONG],                            # a shape
    ["metrics", "fattree:k=" + LONG],                        # an integer option
    ["metrics", "torus:4x4,links=2," + LONG],                # option needs key=value
    ["metrics", "torus:4x4,links=2,links=" + LONG],          # option twice
    ["metrics", f"torus:4x4,{LONG}=1"],                      # unknown option
    ["metrics", "torus:4x4,hosts=" + LONG],                  # a flag (bool option)
    ["metrics", "sd200-ultra:" + LONG],                      # a preset's option
    ["metrics", "sd200-ultra:chip=" + LONG],                 # a preset's chip
    ["metrics", T, "--fail-chip", LONG],
    ["metrics", T, "--fail-link", LONG],
    ["metrics", T, "--fail-link", "0-" + LONG],
    ["metrics", T, "--fail-lane", "0-" + LONG],
    ["route", T, "0", LONG],
    ["route", T, "0", "1", "--transport", LONG],
    ["route", T, "0", "1", "--size", "1" + LONG],            # a size's unit
    ["cost", T, "--op", LONG, "--size", "4KiB"],
    ["cost", T, "--op", "all-reduce", "--size", "4KiB", "--algorithm", LONG],
    ["cost", T, "--op", "all-reduce", "--size", "4KiB", "--runtime", LONG],
    ["cost", T, "--op", "all-reduce", "--size", "4KiB", "--runtime", "nccl@" + LONG],
    ["throughput", T, "--traffic", LONG, "--quiet"],
    ["decode", "hgx-h200", "--model", LONG],
    ["decode", "hgx-h200", *M, "--layout", LONG],
    ["decode", "hgx-h200", *M, "--ep-kernel", LONG],
    ["decode", "hgx-h200", *M, "--overlap", LONG],
    ["scaling", "--families", LONG, "--quiet"],
    ["check", LONG],                                         # a name the system refuses
]


@pytest.mark.parametrize("argv", ARGVS, ids=lambda a: " ".join(x[:24] for x in a))
def test_a_very_long_value_is_quoted_shortened(argv):
    rc, out, err = run_cli(argv)
    assert rc == 2 and out == ""
    assert err.count("\n") == 1 and len(err) < 400, err[:500]
    assert "... (" in err and "characters)" in err      # says it was shortened, and how long


def test_a_short_value_is_quoted_whole():
    rc, _, err = run_cli(["route", T, "0", "chip99"])
    # (session 38: the message names the argument, 'target:')
    assert rc == 2 and err == "cofabric route: error: torus:4x4: target: no node called 'chip99'\n"


def test_only_a_name_the_system_refused_for_its_length_is_shortened():
    from analysis._cli import _said

    long = "d/" * 100 + "x.toml"                         # a long path, shown whole
    assert _said(FileNotFoundError(errno.ENOENT, "No such file or directory", long)) \
        == f"{long}: No such file or directory"
    assert len(_said(OSError(errno.ENAMETOOLONG, "File name too long", "y" * 300))) < 100


def test_a_builders_long_value_is_quoted_shortened():
    for call in (lambda: topologies.switched(LONG),
                 lambda: topologies.torus((4, 4), links=list(range(5000)))):
        with pytest.raises(Exception) as e:
            call()
        assert len(str(e.value)) < 200 and "characters)" in str(e.value)


def test_an_empty_list_is_no_item_wherever_integers_go():
    # numpy reads [] as float64: the address family refused it (TypeError) while
    # expected_max_active answered it; now each answers empty, as lookup_many did
    pos, dev = interleave_target([], 4, 256)
    assert pos.dtype == dev.dtype == np.int64 and pos.shape == dev.shape == (0,)
    assert interleave_offset([], (), 4, 256).shape == (0,)
    f = topologies.build("torus:2x2,chip=h100")
    mem = f.replace(address_plan=AddressPlan(heap=SymmetricHeap(size=2**21))).symmetric_memory
    assert mem.addresses([], []).shape == (0,)
    assert expected_max_active([], [], 4) == 0.0
    # a float array with values stays a wrong kind
    with pytest.raises(TypeError, match="dtype float64"):
        interleave_target([0.0], 4, 256)


def _numbered_chips():
    """Four chips named "1".."4" (ranks 0..3) on one switch: names that read as other ranks."""
    import networkx as nx

    from fabric import Fabric

    G = nx.Graph()
    for n in "1234":
        G.add_node(n, kind="chip")
        G.add_edge(n, "sw", bandwidth=1e11, latency=1e-7)
    G.nodes["sw"]["kind"] = "switch"
    return Fabric.from_graph(G, name="numbered")


def test_a_failed_chip_named_by_a_numeral_is_not_the_rank_it_spells():
    # before: chip "2" (rank 1) failed, and node("2") answered rank 2's chip "3": a route
    # "from 2" silently left from chip 3
    from fabric import NodeError

    f = _numbered_chips()
    assert f.node("2") == "2" and f.node(2) == "3"
    g = f.without(chips=["2"])
    # (session 38: route names the argument, 'src: ')
    for call, arg in ((lambda: g.node("2"), ""), (lambda: g.route("2", "4"), "src: ")):
        with pytest.raises(NodeError, match=rf"^numbered without 1 node: {arg}2 \(rank 1\) "
                                            r"has failed$"):
            call()
    assert g.node("3") == "3" and g.node(2) == "3" and g.node("rank:2") == "3"


def test_an_access_no_path_reaches_names_its_address():
    # the brief: unreachable is an error naming the address (the forwarding tables' errors
    # did; access() named the chips only)
    from fabric import RoutingError, access

    f = topologies.build("torus:4x4,chip=h100")
    g = f.without(links=[("chip5", n) for n in f.graph["chip5"]])
    cut = g.address_map.regions_of("chip5")[0].base + 4096
    with pytest.raises(RoutingError, match=r"chip5 is cut off .* failed \(address 0xa000001000\)$"):
        access(g, "chip0", cut)
    gone = f.address_map.regions_of("chip6")[0].base + 64
    with pytest.raises(RoutingError, match=r"'chip6' of this address has failed, so no access "
                                           r"reaches it \(address 0xc000000040\)$"):
        access(g.without(chips=["chip6"]), "chip0", gone)


@pytest.mark.parametrize("nbytes, error", [(-1, "SpecError"), (float("nan"), "SpecError"),
                                           (0, "SpecError"), (True, "TypeError")])
def test_the_bisection_bound_checks_its_bytes(nbytes, error):
    # before: -1 gave a negative bound, nan a nan, 0 a ZeroDivisionError, True 1 byte
    from analysis import bisection_bound

    with pytest.raises(Exception, match="nbytes must be a finite number > 0 bytes") as e:
        bisection_bound(topologies.build("torus:4x4"), nbytes)
    assert type(e.value).__name__ == error


def test_the_bisection_bound_off_a_torus_is_not_applicable():
    # a FabricError (was a plain ValueError), still a ValueError
    from analysis import NotApplicableError, bisection_bound

    with pytest.raises(NotApplicableError, match="needs a dimension of even size"):
        bisection_bound(topologies.build("torus:3x3"))


def test_a_node_named_by_a_tuple_fails_as_one_node():
    # networkx's grid nodes are tuples: without(chips=(0, 1)) failed ranks 0 and 1 (nodes
    # (0, 0) and (0, 1)); a bare pair of such nodes was read as two links, refused as
    # "cannot fail link ((0, 0), (0, 0))"
    import networkx as nx

    from fabric import Fabric

    G = nx.grid_2d_graph(2, 3)
    nx.set_node_attributes(G, "chip", "kind")
    nx.set_edge_attributes(G, 1e11, "bandwidth")
    nx.set_edge_attributes(G, 1e-7, "latency")
    f = Fabric.from_graph(G, name="grid")
    assert f.without(chips=(0, 1)).failures.nodes == ((0, 1),)
    assert f.without(links=((0, 1), (1, 1))).failures.links == (((0, 1), (1, 1)),)
    assert f.without(lanes=((0, 1), (1, 1))).failures.links == (((0, 1), (1, 1)),)
    assert f.without(chips=[0, 1]).failures.nodes == ((0, 0), (0, 1))     # a list: ranks


def test_a_graph_whose_int_names_are_other_ranks_is_refused_naming_the_fix():
    # lead's decision (board 15:06): networkx's star (hub 0, chips 1..4 = ranks 0..3) was
    # accepted, and node(1) answered chip 2, route(1, 2) ran [2, 0, 3], without(chips=[0])
    # failed chip 1 (no int could name the hub)
    import networkx as nx

    from fabric import Fabric, GraphError, NodeError

    G = nx.star_graph(4)
    nx.set_node_attributes(G, "chip", "kind")
    G.nodes[0]["kind"] = "switch"
    nx.set_edge_attributes(G, 1e11, "bandwidth")
    nx.set_edge_attributes(G, 1e-7, "latency")
    with pytest.raises(GraphError, match=r"node 0 is named by an int, which cofabric reads as "
                                         r"rank 0, the chip 1 \(and 3 more such: 1, 2, 3\): "
                                         r"name the nodes with strings \(networkx.relabel_nodes"
                                         r"\(G, str\)\), or with ints equal to their ranks$"):
        Fabric.from_graph(G)
    # ints equal to their ranks stay (every node a chip, in order), and one past the ranks
    H = nx.relabel_nodes(G, {0: 4, 1: 0, 2: 1, 3: 2, 4: 3})
    f = Fabric.from_graph(H)
    assert f.node(2) == 2
    with pytest.raises(NodeError, match=r"rank 4 is out of range 0..3 \(an int is read as a "
                                        r"rank, so it does not name node 4: relabel"):
        f.node(4)                                       # the hub: no int names it


def test_no_builder_preset_or_system_file_names_a_node_by_another_rank():
    from degrade import built

    from fabric import validate_graph
    from topologies import PRESETS, load_system
    from topologies._spec import _EXAMPLES

    fabrics = [built(s) for s in [*PRESETS, *_EXAMPLES.values()]]
    fabrics += [load_system(p).fabric for p in ("examples/sd200-ultra.toml",
                                                 "tests/data/addr_clean.toml")]
    for f in fabrics:
        validate_graph(f.graph, f.endpoints)


def test_a_route_the_policy_lacks_is_not_called_no_path():
    # chip0's only NIC link failed: the graph still joins chip0 and chip4 (through chip1's
    # NIC), but GPUs do not forward; the message said "the failures leave no path"
    import networkx as nx

    from fabric import RoutingError

    g = topologies.build("rail:servers=2,gpus=4").without(links=["nic0-rail0"])
    assert nx.has_path(g.graph, "chip0", "chip4")
    with pytest.raises(RoutingError, match=r"; the failures leave the routing policy no path "
                                           r"between them: link nic0-rail0 failed$"):
        g.route("chip0", "chip4")


def test_a_rank_of_5000_digits_is_refused_in_one_short_line():
    # reader's find (board 15:27): str() of the rank raised Python's 4300-digit ValueError
    from fabric import NodeError

    f = topologies.build("torus:2x2")
    for call in (lambda: f.node(10**5000), lambda: f.without(chips=[10**5000])):
        with pytest.raises(NodeError, match=r"rank 1000000000.*\(5001 digits\) is out of range") \
                as e:
            call()
        assert len(str(e.value)) < 200


WINDOW = '[system]\ntopology = "torus:2x2,chip=h100"\n[[windows]]\nhost = "{H}"\nname = "{N}"\n' \
    'local_base = "0x1000_0000_0000"\ntarget = "{T}"\n'


@pytest.mark.parametrize("table", [
    '[system]\ntopology = "{L}"\n',
    WINDOW.replace("{H}", "host0").replace("{N}", "{L}").replace("{T}", "nope"),
    WINDOW.replace("{H}", "{L}").replace("{N}", "w").replace("{T}", "chip1"),
], ids=["topology", "window", "host"])
def test_a_system_files_long_name_is_quoted_shortened(tmp_path, table):
    # a 5000-character topology, window or host name: a 5 KB error or finding line
    p = tmp_path / "s.toml"
    p.write_text(table.replace("{L}", LONG))
    rc, out, err = run_cli(["check", str(p)])
    assert rc in (1, 2) and max(len(x) for x in (out + err).splitlines()) < 600
    assert "(5000 characters)" in out + err or "(5002 characters)" in out + err


@pytest.mark.parametrize("text", [
    'name = "m"\n[attention]\ntype = "{L}"\n',            # attention.type
    '[attention]\ntype = "mla"\n{L} = 1\n',               # an unknown key
], ids=["attention-type", "unknown-key"])
def test_a_model_files_long_text_is_quoted_shortened(tmp_path, text):
    # a 5000-character value or key of a model file came back whole: a 5 KB error line
    from analysis import load_model_toml
    from fabric import SpecError
    p = tmp_path / "m.toml"
    p.write_text(text.replace("{L}", LONG))
    with pytest.raises(SpecError) as e:
        load_model_toml(p)
    assert len(str(e.value)) < 400 and "characters)" in str(e.value), str(e.value)[:300]


@pytest.mark.parametrize("call", ["write_figures", "export_graph", "load_system"])
@pytest.mark.parametrize("path", [None, 5, object()], ids=["None", "int", "object"])
def test_a_file_name_of_another_kind_is_refused_and_nothing_is_written(tmp_path, monkeypatch,
                                                                       call, path):
    # its str() named the file: write_figures(out=None) wrote figures/ into ./None, an
    # object() into './<object object at 0x...>'; load_system(5) read a file called '5'
    import analysis
    monkeypatch.chdir(tmp_path)
    (tmp_path / "5").write_text("[system]\ntopology = 'torus:2x2'\n")
    run = {"write_figures": lambda: analysis.write_figures(path, names=()),
           "export_graph": lambda: analysis.export_graph(topologies.build("torus:2x2"), path),
           "load_system": lambda: topologies.load_system(path)}[call]
    with pytest.raises(TypeError, match="must be a file name"):
        run()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["5"]


@pytest.mark.parametrize("kw", [{"fraction": float("nan")}, {"top_k": -1}, {"tokens": 0},
                                {"experts": 0}, {"skew": -1}, {"placement": "x"}],
                         ids=lambda kw: next(iter(kw)))
def test_a_traffic_keyword_the_pattern_does_not_use_is_still_checked(kw):
    # traffic(4, "shift", fraction=nan) was built as if the nan were not there
    from analysis import traffic
    from fabric import SpecError
    with pytest.raises(SpecError, match=next(iter(kw))):
        traffic(4, "shift", 1.0, **kw)


@pytest.mark.parametrize("hot", [[99], [1.5], []], ids=["past-the-ranks", "fraction", "empty"])
def test_hot_ranks_given_with_another_pattern_are_checked_too(hot):
    # traffic(4, "shift", hot=[99]) was built as if hot were not given (review, session 35);
    # the default (rank 0) is no given value: a fabric without chip 0 still builds
    from analysis import traffic
    from fabric import NodeError
    # [1.5], a wrong kind, is a TypeError since session 35 (reader; was a NodeError)
    with pytest.raises(TypeError if hot == [1.5] else NodeError, match="hot"):
        traffic(4, "shift", 1.0, hot=hot)
    f = topologies.build("torus:2x2").without(chips=[0])
    assert traffic(f, "all-to-all", 1.0).n == 3
