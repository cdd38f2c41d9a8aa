"""Failures: a degraded copy of a fabric with some links and chips (or switches) removed.

The degraded fabric keeps its structure (:attr:`~fabric.Fabric.structure`) and
routing policy, and records what failed in :attr:`~fabric.Fabric.failures` (a
:class:`Failures`), so the same analyses run on it and show what a failure
costs, while no closed form or symmetry shortcut of the intact structure is
taken on it: a dimension-order route that would cross a dead link falls back to
a minimal detour (every shortest path of the surviving graph, ECMP), up/down
and minimal routing simply lose their dead paths, and a pair with no path left
raises :class:`~fabric.RoutingError` naming the pair.

Ranks are stable: a failed chip keeps its name and its rank, is listed in
``failures.chips`` and ``failures.ranks``, and asking for it (by name or rank)
is a :class:`~fabric.NodeError` that says it failed. The surviving chips keep
their names and ranks (``fabric.rank_of``); ``fabric.endpoints`` lists only the
live ones, in rank order, and is what an analysis runs over. The address
plan does not move: hardware failing does not reprogram it, so a degraded fabric
keeps the plan laid out over the intact fabric's chips and host domains (every
region and every window where it was; a surviving host's windows still translate
to the same owners), and windows onto a dead chip are ``unreachable`` findings of
:func:`fabric.check`.

Examples
--------
>>> import topologies
>>> f = topologies.build("torus:4x4")
>>> g = f.without(links=[("chip0", "chip1")])
>>> g.route("chip0", "chip2")
['chip0', 'chip3', 'chip2']
>>> f.route("chip0", "chip2")
['chip0', 'chip1', 'chip2']
>>> g.failures.links, g.failures.degraded, f.failures.degraded
((('chip0', 'chip1'),), True, False)
>>> h = f.without(chips=["chip5"])
>>> h.rank_of["chip6"], h.node(6)
(6, 'chip6')
>>> h.node(5)
Traceback (most recent call last):
...
fabric.NodeError: torus:4x4 without 1 node: rank 5 (chip5) has failed
>>> f.without(links=[("chip0", "chip5")])
Traceback (most recent call last):
...
fabric.NodeError: torus:4x4: cannot fail link ('chip0', 'chip5'): there is no such link
"""

import dataclasses
import types

import networkx as nx

from ._errors import AddressMapError, NodeError

__all__ = ["Failures", "without"]


@dataclasses.dataclass(frozen=True)
class Failures:
    """What has failed in a fabric (:attr:`fabric.Fabric.failures`); empty when intact.

    Attributes
    ----------
    links : tuple of (node, node)
        Failed links, as the pairs of their ends (every lane of a bundle).
    nodes : tuple
        Failed nodes of every kind (chips, switches, NICs), in the order given.
    ranks : mapping
        Failed chip -> the rank it had (and keeps: ranks are stable).
    lanes : tuple of ((node, node), int)
        Bundles that lost some of their lanes but still carry traffic: the link's
        ends and how many lanes failed (its bandwidth and ``lanes`` shrink in
        proportion). A bundle that loses every lane is a failed link instead.

    Examples
    --------
    >>> Failures().degraded, Failures(links=(("a", "b"),)).degraded
    (False, True)
    >>> Failures(lanes=((("a", "b"), 1),)).degraded
    True
    """

    links: tuple = ()
    nodes: tuple = ()
    ranks: types.MappingProxyType = dataclasses.field(
        default_factory=lambda: types.MappingProxyType({}))
    lanes: tuple = ()

    def __post_init__(self):
        object.__setattr__(self, "links", tuple(tuple(x) for x in self.links))
        object.__setattr__(self, "nodes", tuple(self.nodes))
        object.__setattr__(self, "ranks", types.MappingProxyType(dict(self.ranks)))
        object.__setattr__(self, "lanes", tuple((tuple(e), int(k)) for e, k in self.lanes))

    @property
    def degraded(self):
        """Whether anything has failed."""
        return bool(self.links or self.nodes or self.lanes)

    @property
    def chips(self):
        """The failed chips, in rank order."""
        return tuple(sorted(self.ranks, key=self.ranks.get))

    def __bool__(self):
        return self.degraded

    def plus(self, links=(), nodes=(), ranks=None, lanes=()):
        """These failures and more (a fabric degraded twice keeps both)."""
        return Failures(links=self.links + tuple(links), nodes=self.nodes + tuple(nodes),
                        ranks={**self.ranks, **(ranks or {})}, lanes=self.lanes + tuple(lanes))


def _link_pair(fabric, item):
    if isinstance(item, str):
        if "~" in item:
            parts = item.split("~")
        else:
            parts = item.split("-")
        if len(parts) != 2:
            raise NodeError(f"{fabric.name}: a failed link is written 'u-v' or 'u~v', got "
                            f"{item!r}")
        item = tuple(p.strip() for p in parts)
    try:
        u, v = item
    except (TypeError, ValueError):
        raise NodeError(f"{fabric.name}: a failed link is a pair of nodes, got {item!r}") from None
    try:
        a, b = fabric.node(u), fabric.node(v)
    except NodeError as e:
        raise NodeError(f"cannot fail link {item!r}: {e}") from None
    if not fabric.graph.has_edge(a, b):
        raise NodeError(f"{fabric.name}: cannot fail link {(a, b)!r}: there is no such link")
    return a, b


def without(fabric, links=(), chips=(), lanes=()):
    """Return a degraded copy of ``fabric`` with ``links`` and ``chips`` removed.

    Parameters
    ----------
    fabric : Fabric
    links : iterable
        Failed links, each a pair ``(u, v)`` of node names or ranks, or a string
        ``"u-v"`` / ``"u~v"``.
    chips : iterable
        Failed nodes (names or ranks): chips, or switches; every link of a
        failed node fails with it.
    lanes : iterable
        Failed lanes of bundled links, each written as a link; a link named ``k``
        times loses ``k`` lanes. The bundle keeps routing with ``lanes - k`` lanes and
        that fraction of its bandwidth (latency unchanged); losing every lane fails the
        link. Recorded in ``failures.lanes`` (or ``failures.links``).

    Returns
    -------
    Fabric
        Same structure, parameters and policy; :attr:`~fabric.Fabric.failures`
        records what was removed, and the surviving chips keep their ranks.

    Raises
    ------
    NodeError
        If a link is not in the fabric or a node names nothing, or if every
        chip would fail.

    Examples
    --------
    >>> import topologies
    >>> g = without(topologies.build("fattree:k=4"), links=["agg0.0-core0"], chips=[15])
    >>> g.name, g.n_endpoints
    ('fattree:k=4 without 1 link and 1 node', 15)
    >>> f = topologies.build("torus:4x4,links=2")          # 2 lanes per link
    >>> g = f.without(lanes=["chip0-chip1"])
    >>> g.failures.lanes, g.graph.edges["chip0", "chip1"]["lanes"]
    (((('chip0', 'chip1'), 1),), 1)
    >>> g.graph.edges["chip0", "chip1"]["bandwidth"] * 2 == f.graph.edges["chip0", "chip1"]["bandwidth"]
    True
    >>> f.without(lanes=["chip0-chip1"] * 2).failures.links
    (('chip0', 'chip1'),)
    """
    if isinstance(links, str) or (isinstance(links, tuple) and len(links) == 2
                                  and not isinstance(links[0], (tuple, list))):
        links = [links]  # one link given bare
    if isinstance(chips, (str, int)):
        chips = [chips]
    if isinstance(lanes, str) or (isinstance(lanes, tuple) and len(lanes) == 2
                                  and not isinstance(lanes[0], (tuple, list))):
        lanes = [lanes]
    dead_links, named = [], set()
    for pair in (_link_pair(fabric, x) for x in links):
        if frozenset(pair) not in named:        # named twice (u-v, v-u): one link fails
            named.add(frozenset(pair))
            dead_links.append(pair)
    lost = {}  # bundle -> lanes failed, in the order first named
    for x in lanes:
        a, b = _link_pair(fabric, x)
        key = (a, b) if (a, b) in lost or (b, a) not in lost else (b, a)
        lost[key] = lost.get(key, 0) + 1
    thin = []
    for (a, b), k in lost.items():
        if any({a, b} == set(e) for e in dead_links):
            continue  # the whole link failed anyway
        if k >= fabric.graph.edges[a, b].get("lanes", 1):
            dead_links.append((a, b))
        else:
            thin.append(((a, b), k))
    dead_nodes = []
    for x in chips:
        try:
            dead_nodes.append(fabric.node(x))
        except NodeError as e:
            raise NodeError(f"cannot fail {x!r}: {e}") from None
    dead_nodes = list(dict.fromkeys(dead_nodes))   # a node named twice (name, rank) fails once
    dead = set(dead_nodes)
    endpoints = tuple(n for n in fabric.endpoints if n not in dead)
    if not endpoints:
        raise NodeError(f"{fabric.name}: failing {len(dead)} nodes leaves no chip")
    H = nx.Graph(fabric.graph)
    for (a, b), k in thin:
        data = dict(H.edges[a, b])
        n = data.get("lanes", 1)
        data["bandwidth"] = data["bandwidth"] * (n - k) / n
        data["lanes"] = n - k
        H.add_edge(a, b, **data)
    H.remove_edges_from(dead_links)
    H.remove_nodes_from(dead)
    nx.freeze(H)
    domains = {h: tuple(c for c in cs if c not in dead) for h, cs in fabric.domains.items()}
    domains = {h: cs for h, cs in domains.items() if cs}
    rank_of = fabric.rank_of
    ranks = tuple(rank_of[n] for n in endpoints)
    thin = [(e, k) for e, k in thin if not dead & set(e)]
    failures = fabric.failures.plus(dead_links, dead_nodes,
                                    {n: rank_of[n] for n in dead_nodes if n in rank_of}, thin)
    what = []
    if dead_links:
        what.append(f"{len(dead_links)} link{'s' if len(dead_links) != 1 else ''}")
    if thin:
        n_lanes = sum(k for _, k in thin)
        what.append(f"{n_lanes} lane{'s' if n_lanes != 1 else ''}")
    if dead_nodes:
        what.append(f"{len(dead_nodes)} node{'s' if len(dead_nodes) != 1 else ''}")
    name = fabric.name + (f" without {' and '.join(what)}" if what else "")
    return fabric.replace(graph=H, endpoints=endpoints, ranks=ranks, name=name, domains=domains,
                          failures=failures,
                          address_plan=_pinned_plan(fabric) if dead_nodes else
                          fabric.address_plan)


def _pinned_plan(fabric):
    """The fabric's address plan laid out over the intact fabric's chips and host domains.

    A plan is laid out once, from the intact fabric: the degraded copy keeps every
    region and every window where it was, and failures only mark chips dead
    (:func:`fabric._plan.pin_placement`; ``fabric.check`` reports windows onto a
    dead chip as ``unreachable``).
    """
    from ._plan import pin_placement

    try:
        _ = fabric.address_map
    except AddressMapError:
        return fabric.address_plan      # no map to keep (e.g. no chip to size the HBM)
    return pin_placement(fabric)
