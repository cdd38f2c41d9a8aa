"""Graph export: GraphML and JSON node-link round trips keep every node, edge and number."""

import json

import networkx as nx
import pytest

import topologies
from analysis import export_graph, node_link
from analysis._cli import main


@pytest.mark.parametrize("spec", ["torus:3x2", "hypermesh:2x2x2", "cluster-128", "nvl72",
                                  "dragonfly:h=1"])
def test_round_trip(spec, tmp_path):
    f = topologies.build(spec)
    export_graph(f, tmp_path / "g.graphml")
    export_graph(f, tmp_path / "g.json")
    G = nx.read_graphml(tmp_path / "g.graphml")
    H = nx.node_link_graph(json.loads((tmp_path / "g.json").read_text()), edges="links")
    for g in (G, H):
        assert set(g.nodes) == set(map(str, f.graph.nodes))
        assert g.number_of_edges() == f.graph.number_of_edges()
        for u, v, d in f.graph.edges(data=True):
            assert g.edges[str(u), str(v)]["bandwidth"] == d["bandwidth"]
            assert g.edges[str(u), str(v)]["latency"] == d["latency"]
    for n in f.endpoints:
        assert G.nodes[n]["rank"] == f.rank_of[n]
        if "coord" in f.graph.nodes[n]:
            assert G.nodes[n]["coord"] == ",".join(map(str, f.graph.nodes[n]["coord"]))
    assert node_link(f)["graph"]["endpoints"] == list(f.endpoints)


def test_cli_export(tmp_path, capsys):
    assert main(["export", "torus:2x2", str(tmp_path / "t.graphml")]) == 0
    assert "4 nodes" in capsys.readouterr().out
    assert main(["export", "torus:2x2", str(tmp_path / "t.txt")]) == 2
    assert "name it .graphml or .json" in capsys.readouterr().err


def test_bad_format(tmp_path):
    # was "format must be one of ('graphml', 'json')" for both
    with pytest.raises(ValueError, match="^fmt must be one of graphml, json, got 'gexf'$"):
        export_graph(topologies.build("torus:2x2"), tmp_path / "x", "gexf")
    with pytest.raises(ValueError, match=r"^the path's suffix \(fmt=None\) must be one of "
                                         "graphml, json, got 'txt'$"):
        export_graph(topologies.build("torus:2x2"), tmp_path / "x.txt")


@pytest.mark.parametrize("spec", ["sd200-ultra", "cluster-128", "nvl72", "dragonfly:h=2",
                                  "torus:4x4"])
def test_every_numeric_attribute_of_the_json_export_has_a_unit(spec):
    d = node_link(topologies.build(spec))
    numeric = {k for item in d["nodes"] + d["links"] for k, v in item.items()
               if isinstance(v, (int, float, list)) and not isinstance(v, bool)}
    assert numeric <= set(d["units"]), sorted(numeric - set(d["units"]))
