"""The graph attribute schema of a fabric, and its one validator.

A fabric's graph is a plain, undirected :class:`networkx.Graph` with one edge
per physical adjacency.

Node attributes
    ``kind`` (required)
        one of ``"chip"`` (an accelerator: an endpoint, and a router in direct
        topologies), ``"switch"``, ``"host"`` (CPU / root complex), ``"nic"``,
        ``"memory"``.
    ``host`` (optional)
        the name of the host domain the node belongs to.
    ``coord`` (optional)
        integer coordinates of a chip in a mesh-like topology.
    ``tier`` (optional)
        the level of a switch (0 nearest the endpoints).
    ``capacity`` (optional, memory nodes)
        bytes of memory, an integer >= 0 (not a bool, not a float): the size of the
        node's ``dram`` region in an address plan (``fabric._plan.layout_regions``).

Edge attributes
    ``bandwidth`` (required)
        bytes per second **per direction** of the whole bundle, from
        :data:`MIN_BANDWIDTH` (1 byte/s) to :data:`MAX_BANDWIDTH` (1e18).
    ``latency`` (required)
        seconds, one way: the link plus the receiving port's forwarding; from 0 to
        :data:`MAX_LATENCY` (1 s).
    ``lanes`` (optional, default 1)
        how many parallel physical links are bundled into this edge. A lane is a
        link: a fabric's links are its edges' lanes (what ``metrics`` counts), at
        most :data:`MAX_LINKS` in all.
    ``tech`` (optional)
        the name of the link technology.
    ``carries`` (optional)
        what the link carries: ``"loadstore"`` (memory transactions and
        messages: NVLink, Co-Fabric, PCIe, ICI) or ``"messages"`` (messages
        only: InfiniBand, RoCE). Default: the technology's
        :attr:`~fabric.LinkTech.carries` when ``tech`` names a known one, else
        ``"loadstore"``. Builders set it from the link technology.
"""


from ._errors import GraphError
from ._units import flag_of, is_finite, is_int, is_real, kind_error, one_of

__all__ = ["CARRIES", "MAX_BANDWIDTH", "MAX_BYTES", "MAX_LATENCY", "MAX_LINKS", "MIN_BANDWIDTH", "NODE_KINDS",
           "validate_graph"]

NODE_KINDS = frozenset({"chip", "switch", "host", "nic", "memory"})
#: What a link may carry (edge attribute ``carries``, :attr:`fabric.LinkTech.carries`).
CARRIES = ("loadstore", "messages")
#: The most links (lanes, summed over the edges) a fabric may have: the size beyond which a
#: build or a graph is refused as not sane for an analytical model on one machine (the
#: builders' limit, topologies._common). It also keeps the bisection's lane-weighted
#: max-flow (analysis._metrics, int32 capacities summing to at most 2 x (links + 1)) exact.
MAX_LINKS = 2**24
#: The slowest and the fastest link a fabric may have, bytes/s per direction. Outside them the
#: model's float arithmetic overflows: bytes up to 2**63 over a bandwidth, ratios of
#: bandwidths, products with channel, NIC and lane counts (1e-300 B/s raised from an int() of
#: inf in the ideal schedule's chunking, 1e300 B/s in NCCL's p2p channel count). No
#: interconnect is near either: a 1200-baud serial line moves 150 B/s, an 18-lane NVLink5
#: bundle 9e11 B/s (1e18 leaves a factor of a million).
MIN_BANDWIDTH = 1.0
MAX_BANDWIDTH = 1e18
#: The largest payload, in bytes, an access (fabric.access) or a collective (analysis.cost)
#: takes: an int64, as the batched paths hold sizes (8 EiB; no memory is near it).
MAX_BYTES = 2**63 - 1
#: The longest one-way latency a link may have, seconds: no interconnect is near it (a
#: geostationary satellite hop is 0.27 s), and far above it the model's sums of latencies over
#: hops and steps overflow floats (1.5e308 s gave an infinite time).
MAX_LATENCY = 1.0


def _positive_number(value):
    return is_finite(value) and value > 0


def bandwidth_fault(value):
    """What is wrong with ``value`` as a link's bandwidth (bytes/s per direction), or None:
    the one rule of the schema, :class:`~fabric.LinkTech` and ``analysis.scale_links``."""
    if _positive_number(value) and MIN_BANDWIDTH <= value <= MAX_BANDWIDTH:
        return None
    return f"it must be a number from {MIN_BANDWIDTH:g} to {MAX_BANDWIDTH:g} bytes/s"


def latency_fault(value):
    """What is wrong with ``value`` as a link's one-way latency (seconds), or None."""
    if is_real(value) and 0 <= value <= MAX_LATENCY:
        return None
    return f"it must be a number from 0 to {MAX_LATENCY:g} seconds"


def default_endpoints(G):
    """The rank order of a graph given without one: every ``kind="chip"`` node, in the
    graph's node order (what :func:`validate_graph` checks and ``Fabric.from_graph`` uses)."""
    return [n for n, k in G.nodes(data="kind") if k == "chip"]


def rank_name_faults(G, chip_of_rank):
    """The faults of nodes named by an int that is another chip's rank (``chip_of_rank``:
    rank -> its chip, a mapping or the endpoints in rank order, ranks ``0..n-1``).

    cofabric reads an int as a rank wherever a node is asked for (``Fabric.node``: route,
    access, ``without``, ranks; fabric/_errors.py), so a node named ``k`` that is not the
    rank-``k`` chip could not be named, and naming it would reach that chip silently:
    networkx's ``star_graph`` (hub 0, chips 1..n: ``node(1)`` was chip 2, ``without(chips=
    [0])`` failed chip 1) or any graph whose switches are numbered among its chips (session
    34). Ints equal to their ranks, and ints past the last rank (a NodeError when asked
    for), are no fault. :func:`validate_graph` and every Fabric (its ranks, failed chips'
    too) ask it.
    """
    n_ranks = len(chip_of_rank)
    bad = [n for n in G if is_int(n) and 0 <= n < n_ranks and chip_of_rank[n] != n]
    if not bad:
        return []
    n = bad[0]
    more = (f" (and {len(bad) - 1} more such: {', '.join(map(repr, bad[1:4]))}"
            f"{', ...' if len(bad) > 4 else ''})") if len(bad) > 1 else ""
    fault = (f"node {n!r} is named by an int, which cofabric reads as rank {n}, the chip "
             f"{chip_of_rank[n]!r}{more}: name the nodes with strings (networkx.relabel_nodes(G, "
             "str)), or with ints equal to their ranks")
    return [fault]


def validate_graph(G, endpoints=None, *, ranks=True):
    """Check ``G`` against the schema; raise :class:`GraphError` naming every fault.

    Parameters
    ----------
    G : networkx.Graph
        The graph to check. Directed graphs and multigraphs are refused: an edge
        stands for a bundle of parallel links, counted by its ``lanes``.
    endpoints : sequence, optional
        Endpoint nodes that must exist, be chips, and be connected to each
        other. Default: every node of kind ``"chip"``. Their order is the rank order: a
        node named by an int ``k`` must be the rank-``k`` chip, or past the last rank (an
        int is read as a rank wherever a node is asked for).
    ranks : bool, optional
        Whether to check that int rule (:func:`rank_name_faults`); ``Fabric.from_graph``
        passes False, as its constructor asks it of every Fabric (one pass over the nodes).

    Raises
    ------
    GraphError
        With a message that names each offending node or edge (the first ten).

    Examples
    --------
    >>> import networkx as nx
    >>> G = nx.Graph()
    >>> G.add_node("a", kind="chip"); G.add_node("b", kind="chip")
    >>> G.add_edge("a", "b", latency=1e-7)
    >>> validate_graph(G)
    Traceback (most recent call last):
    ...
    fabric.GraphError: invalid fabric graph: edge ('a', 'b') has no 'bandwidth'
    """
    import networkx as nx

    if not isinstance(G, nx.Graph):
        raise kind_error(G, "a fabric graph", "a networkx.Graph")
    ranks = flag_of(ranks, "ranks")
    if G.is_directed() or G.is_multigraph():
        raise GraphError("a fabric graph must be an undirected nx.Graph (no DiGraph or "
                         "MultiGraph): bundle parallel links into one edge with 'lanes'")
    faults = []
    links = 0
    for n, data in G.nodes(data=True):
        kind = data.get("kind")
        if kind is None:
            faults.append(f"node {n!r} has no 'kind'")
        elif kind not in NODE_KINDS:
            faults.append(f"node {n!r} has kind {kind!r}; it must be {one_of(NODE_KINDS)}")
        cap = data.get("capacity")
        if kind == "memory" and cap is not None and not (is_int(cap) and cap >= 0):
            # read as the size of the node's region: a float, a string or a bool would be
            # truncated, or raise far from here
            faults.append(f"node {n!r} has capacity {cap!r}; it must be bytes, an integer >= 0")
    for u, v, data in G.edges(data=True):
        if u == v:
            faults.append(f"edge ({u!r}, {v!r}) is a self-loop")
        # A key present with the value None is as missing as an absent key:
        # both are refused, never skipped.
        for key in ("bandwidth", "latency"):
            if data.get(key) is None:
                faults.append(f"edge ({u!r}, {v!r}) has no {key!r}")
        bw = data.get("bandwidth")
        if bw is not None and bandwidth_fault(bw):
            faults.append(f"edge ({u!r}, {v!r}) has bandwidth {bw!r}; {bandwidth_fault(bw)}")
        lat = data.get("latency")
        if lat is not None and latency_fault(lat):
            faults.append(f"edge ({u!r}, {v!r}) has latency {lat!r}; {latency_fault(lat)}")
        lanes = data.get("lanes", 1)
        if not (is_int(lanes) and lanes >= 1):
            faults.append(f"edge ({u!r}, {v!r}) has lanes {lanes!r}; it must be an integer >= 1")
        else:
            links += int(lanes)
        carries = data.get("carries", "loadstore")
        if carries not in CARRIES:
            faults.append(f"edge ({u!r}, {v!r}) has carries {carries!r}; it must be "
                          f"{one_of(CARRIES)}")
    if links > MAX_LINKS:
        faults.append(f"the graph has {links:,} links (its edges' lanes); "
                      f"the limit is {MAX_LINKS:,}")
    if endpoints is None:
        endpoints = default_endpoints(G)
    else:
        seen = set()
        for n in endpoints:
            if n not in G:
                faults.append(f"endpoint {n!r} is not a node of the graph")
            elif G.nodes[n].get("kind") != "chip":
                faults.append(f"endpoint {n!r} has kind {G.nodes[n].get('kind')!r}, not 'chip'")
            if n in seen:
                faults.append(f"endpoint {n!r} is listed twice")
            seen.add(n)
    if not faults:
        endpoints = list(endpoints)
        if not endpoints:
            faults.append("the graph has no endpoints (no node of kind 'chip')")
        else:
            reach = nx.node_connected_component(G, endpoints[0])
            for n in endpoints:
                if n not in reach:
                    faults.append(f"endpoint {n!r} is disconnected from endpoint {endpoints[0]!r}")
            if ranks:
                faults += rank_name_faults(G, endpoints)
    if faults:
        more = f" (and {len(faults) - 10} more)" if len(faults) > 10 else ""
        raise GraphError("invalid fabric graph: " + "; ".join(faults[:10]) + more)
