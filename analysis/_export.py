"""Export a fabric's graph for other tools: GraphML and JSON (node-link).

networkx's writers need plain attribute values: GraphML takes strings, numbers and
booleans only, so a chip's ``coord`` tuple (and any other sequence) is written as
text, ``"1,0,3"``, and ``None`` values are left out. JSON keeps numbers, lists and
the graph's own metadata (name, family, endpoints in rank order, host domains).
Units are the graph's: bytes/s per direction, seconds one way.

Examples
--------
>>> import topologies
>>> d = node_link(topologies.build("torus:2x2"))
>>> d["graph"]["endpoints"], d["nodes"][0]["coord"]
(['chip0', 'chip1', 'chip2', 'chip3'], [0, 0])
>>> sorted(d["units"])
['bandwidth', 'coord', 'lanes', 'latency', 'tier']
"""

import json

from fabric._fabric_arg import fabric_arg
from fabric._units import check_choice

__all__ = ["EXPORT_FORMATS", "export_graph", "node_link"]

EXPORT_FORMATS = ("graphml", "json")

_UNITS = {"bandwidth": "B/s per direction", "latency": "s, one way",
          "lanes": "count of parallel lanes in the link", "tier": "switch tier (0 = edge)",
          "coord": "grid position, one index per dimension"}


def _plain(value):
    if isinstance(value, (tuple, list)):
        return [_plain(v) for v in value]
    if hasattr(value, "item"):          # numpy scalars
        return value.item()
    return value


def node_link(f):
    """The fabric as a JSON-ready node-link dict (networkx's node-link layout).

    Graph attributes: ``name``, ``family``, ``endpoints`` (rank order) and
    ``domains`` (host -> chips); ``units`` names the unit of every numeric node and edge attribute.

    Parameters
    ----------
    f : fabric.Fabric

    Returns
    -------
    dict

    Examples
    --------
    >>> import topologies
    >>> d = node_link(topologies.build("torus:2x2"))
    >>> len(d["nodes"]), len(d["links"]), d["units"]["bandwidth"]
    (4, 4, 'B/s per direction')
    """
    f = fabric_arg(f, "f")
    import networkx as nx

    d = nx.node_link_data(f.graph, edges="links")
    for item in d["nodes"] + d["links"]:
        for k in list(item):
            item[k] = _plain(item[k])
    d["graph"] = {"name": f.name, "family": f.family, "endpoints": list(f.endpoints),
                  "domains": {h: list(c) for h, c in f.domains.items()}}
    d["units"] = dict(_UNITS)
    return d


def _graphml_graph(f):
    import networkx as nx

    G = nx.Graph(name=f.name, family=f.family)
    for n, d in f.graph.nodes(data=True):
        G.add_node(n, **{k: (",".join(map(str, v)) if isinstance(v, (tuple, list)) else v)
                         for k, v in d.items() if v is not None}, rank=f.rank_of.get(n, -1))
    for u, v, d in f.graph.edges(data=True):
        G.add_edge(u, v, **{k: _plain(x) for k, x in d.items() if x is not None})
    return G


def export_graph(f, path, fmt=None):
    """Write fabric ``f``'s graph to ``path`` as GraphML or JSON (node-link).

    Parameters
    ----------
    f : fabric.Fabric
    path : str or os.PathLike
    fmt : {"graphml", "json"}, optional
        Default: from the file name's suffix.

    Raises
    ------
    ValueError
        For an unknown format.

    Examples
    --------
    >>> import os, tempfile, topologies
    >>> path = os.path.join(tempfile.mkdtemp(), "torus.graphml")
    >>> export_graph(topologies.build("torus:2x2"), path) == path
    True
    """
    import networkx as nx

    from fabric._system import file_name

    f = fabric_arg(f, "f")      # before the file is opened: a spec wrote an empty file
    file_name(path)             # a NUL: SpecError naming it, not open's ValueError
    what = "fmt"
    if fmt is None:
        fmt, what = str(path).rsplit(".", 1)[-1].lower(), "the path's suffix (fmt=None)"
    check_choice(fmt, what, EXPORT_FORMATS)
    if fmt == "json":
        with open(path, "w", encoding="utf-8") as fh:
            json.dump(node_link(f), fh, indent=1, sort_keys=True)
            fh.write("\n")
    else:
        nx.write_graphml(_graphml_graph(f), path)
    return path
