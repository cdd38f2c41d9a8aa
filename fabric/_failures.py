"""Failures: a degraded copy of a fabric with some links and chips (or switches) removed.

The degraded fabric keeps its structure (:attr:`~fabric.Fabric.structure`) and
routing policy, and records what failed in :attr:`~fabric.Fabric.failures` (a
:class:`Failures`), so the same analyses run on it and show what a failure
costs, while no closed form or symmetry shortcut of the intact structure is
taken on it: under dimension order a failed link's bytes take its bypass (one
fixed shortest path of the surviving graph between its ends) and each link of a
route's run through failed chips by one fixed stand-in link no wider and no
faster (a neighbour's link where one qualifies, also between two failed
neighbours); every other hop of every route stays, so a failure never makes the
same work faster, and the degraded hops and latencies are local repair's, upper
bounds (``router.local_repair``; see "Failures under dimension order" in
:mod:`fabric._routing`), up/down and
minimal routing simply lose their dead paths, and a pair with no path left
raises :class:`~fabric.RoutingError` naming the pair.

Ranks are stable: a failed chip keeps its name and its rank, is listed in
``failures.chips`` and ``failures.ranks``, and asking for it (by name or rank)
is a :class:`~fabric.NodeError` that says it failed. A live chip that the failures
cut off from every other chip (its only link failed, or every switch it reaches
lost its other links) is not counted as failed: it is still a chip of the
fabric, and a pair it belongs to raises :class:`~fabric.RoutingError` ("no route
from 'a' to 'b'") followed by the cause, "chip0 is cut off from every other chip:
link chip0-sw0 failed" (``failures.cut_off``). To price the rest of the fabric,
fail that chip too (``without(chips=[...])``). A group of two or more live chips
cut off together is in ``failures.islands``: its chips route among themselves,
and a pair joining it to the other chips raises RoutingError naming the group
("chip0 and chip1 are cut off from the other live chips (an island of 2): node
chip2 failed"). The surviving chips keep
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
>>> g.route("chip0", "chip1")      # the failed link's bypass
['chip0', 'chip12', 'chip13', 'chip1']
>>> f.route("chip0", "chip2"), g.route("chip0", "chip2")   # the rest of the route stays
(['chip0', 'chip1', 'chip2'], ['chip0', 'chip12', 'chip13', 'chip1', 'chip2'])
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
from collections.abc import Mapping

import networkx as nx

from ._errors import AddressMapError, NodeError, RoutingError
from ._fabric_arg import fabric_arg
from ._units import (
    check_count,
    is_int,
    items_of,
    kind_error,
    name_list,
    sequence_of,
    show_value,
)

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
    cut_off : mapping
        Live chip -> the failed elements that cut it off from every other live chip
        (``"link a-b"``, ``"node x"``), in the order found. Such a chip is not failed
        (it keeps its rank and is in ``fabric.endpoints``), but no route joins it to
        any other chip; :meth:`explain` turns this into the cause a
        :class:`~fabric.RoutingError` states.

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
    cut_off: types.MappingProxyType = dataclasses.field(
        default_factory=lambda: types.MappingProxyType({}))
    islands: tuple = ()

    def __post_init__(self):
        # each field of its kind (Failures(links=5) was "'int' object is not iterable", a
        # link 'ab' the pair ('a', 'b'))
        pair = "a (node, node) pair"
        object.__setattr__(self, "links", tuple(
            _pair(x, "each of links", pair) for x in sequence_of(self.links, "links", "pairs")))
        object.__setattr__(self, "nodes", tuple(sequence_of(self.nodes, "nodes", "nodes")))
        for what in ("ranks", "cut_off"):
            if not isinstance(getattr(self, what), Mapping):
                raise kind_error(getattr(self, what), what, "a mapping")
        # a failed chip's rank is a count (-1 or 2.5 reached a bare StopIteration or a
        # misleading NodeError in the fabric holding it)
        object.__setattr__(self, "ranks", types.MappingProxyType(
            {c: check_count(r, f"ranks[{show_value(c)}]", 0) for c, r in self.ranks.items()}))
        lane = "a ((node, node), failed lanes) pair"
        object.__setattr__(self, "lanes", tuple(
            (_pair(e, "each lane's link", pair), check_count(k, "failed lanes", 1))
            for e, k in (_pair(x, "each of lanes", lane)
                         for x in sequence_of(self.lanes, "lanes", "pairs"))))
        object.__setattr__(self, "cut_off", types.MappingProxyType(
            {c: tuple(why) for c, why in dict(self.cut_off).items()}))
        object.__setattr__(self, "islands", tuple((tuple(cs), tuple(why))
                                                  for cs, why in self.islands))

    def explain(self, *nodes):
        """Why no route reaches ``nodes``: ``"; chip0 is cut off from every other chip:
        link chip0-sw0 failed"`` for each of them in :attr:`cut_off`, ``"; chip0 and chip1
        are cut off from the other live chips (an island of 2): node chip2 failed"`` for
        each group of :attr:`islands` one of them is in; when none of them is, but
        something failed, what failed (the failures left the routing policy no path
        between them, e.g. a GPU whose only NIC link failed still reaches its own server
        but no other); ``""`` when nothing failed.

        Examples
        --------
        >>> Failures(cut_off={"chip0": ["link chip0-sw0"]}).explain("chip1", "chip0")
        '; chip0 is cut off from every other chip: link chip0-sw0 failed'
        >>> Failures(links=[("chip8", "nic8")]).explain("chip7", "chip8")
        '; the failures leave the routing policy no path between them: link chip8-nic8 failed'
        >>> Failures(nodes=["chip2"], islands=[(["chip0", "chip1"], ["node chip2"])]).explain(
        ...     "chip5", "chip1")
        '; chip0 and chip1 are cut off from the other live chips (an island of 2): node chip2 failed'
        >>> Failures().explain("chip0")
        ''
        """
        out, told = [], set()
        for n in dict.fromkeys(nodes):
            why = self.cut_off.get(n)
            if why:
                out.append(f"; {n} is cut off from every other chip: {name_list(why)} failed")
                continue
            k = self._island_index().get(n)
            if k is not None and k not in told:
                told.add(k)
                chips, why = self.islands[k]
                out.append(f"; {name_list(map(str, chips))} are cut off from the other live "
                           f"chips (an island of {len(chips)}): {name_list(why)} failed")
        if not out and (self.links or self.nodes):
            what = [f"link {a}-{b}" for a, b in self.links] + [f"node {n}" for n in self.nodes]
            # not "no path": the graph still joins them (a cut-off chip or an island is
            # named above), through a chip that does not forward or a turn the policy forbids
            out.append(f"; the failures leave the routing policy no path between them: "
                       f"{name_list(what)} failed")
        return "".join(out)

    def inside(self, nodes):
        """What failed among ``nodes``, named as :meth:`explain` names it: the failed links
        with both ends in ``nodes`` and the failed nodes in it (at most four items, then
        ``"k more"``); ``""`` when none did.

        >>> Failures(links=[("chip0", "sw0"), ("chip9", "sw1")], nodes=["sw2"]).inside(
        ...     {"chip0", "sw0", "sw2"})
        'link chip0-sw0 and node sw2'
        >>> Failures(links=[("chip9", "sw1")]).inside({"chip0", "sw0"})
        ''
        """
        nodes = set(nodes)
        what = [f"link {a}-{b}" for a, b in self.links if a in nodes and b in nodes]
        what += [f"node {n}" for n in self.nodes if n in nodes]
        return name_list(what) if what else ""

    def _island_index(self):
        """Live chip -> the index of its group in :attr:`islands` (cached)."""
        got = self.__dict__.get("_islanded")
        if got is None:
            got = {c: k for k, (chips, _) in enumerate(self.islands) for c in chips}
            object.__setattr__(self, "_islanded", got)
        return got

    def group_of(self, chip):
        """Which group of live chips ``chip`` is in: ``0`` for the connected survivors (the
        component holding the most live chips), ``k + 1`` for ``islands[k]``, and
        ``("cut off", chip)`` for a chip of :attr:`cut_off` (alone). Two live chips a path
        of the surviving graph joins are in the same group, and only those.

        >>> f = Failures(nodes=["chip2"], islands=[(["chip0", "chip1"], ["node chip2"])],
        ...              cut_off={"chip9": ["node chip2"]})
        >>> f.group_of("chip1"), f.group_of("chip5"), f.group_of("chip9")
        (1, 0, ('cut off', 'chip9'))
        >>> f.group_of("chip2")
        Traceback (most recent call last):
        ...
        fabric.NodeError: chip2 has failed: it is in no group of live chips
        """
        if chip in self.ranks or chip in self.nodes:
            raise NodeError(f"{chip} has failed: it is in no group of live chips")
        if chip in self.cut_off:
            return ("cut off", chip)
        k = self._island_index().get(chip)
        return 0 if k is None else k + 1

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

    def plus(self, links=(), nodes=(), ranks=None, lanes=(), cut_off=None, islands=None):
        """These failures and more (a fabric degraded twice keeps both).

        ``cut_off`` and ``islands`` replace :attr:`cut_off` and :attr:`islands` when
        given (they are found anew on the degraded graph each time).
        """
        return Failures(links=self.links + tuple(links), nodes=self.nodes + tuple(nodes),
                        ranks={**self.ranks, **(ranks or {})}, lanes=self.lanes + tuple(lanes),
                        cut_off=self.cut_off if cut_off is None else cut_off,
                        islands=self.islands if islands is None else islands)


def _pair(value, what, due):
    """``value`` as a tuple of two items, else a TypeError naming ``what``."""
    items = items_of(value)
    if items is None or len(items) != 2:
        raise kind_error(value, what, due)
    return tuple(items)


def _failed_before(fabric, x):
    """The node ``x`` names if it failed before ``fabric`` was degraded, else ``None``."""
    if not fabric.failures.nodes:
        return None
    try:
        n = fabric.intact.node(x)
    except NodeError:
        return None
    return n if n in fabric.failures.nodes else None


def _link_pair(fabric, item, what="link"):
    if isinstance(item, str):
        if "~" in item:
            parts = item.split("~")
        else:
            parts = item.split("-")
        if len(parts) != 2:
            raise NodeError(f"{fabric.name}: a failed {what} is written 'u-v' or 'u~v', got "
                            f"{show_value(item)}")
        item = tuple(p.strip() for p in parts)
    try:
        u, v = item
    except (TypeError, ValueError):
        raise NodeError(f"{fabric.name}: a failed {what} is a pair of nodes, got "
                        f"{show_value(item)}") from None
    label = "a lane of link" if what == "lane" else "link"
    for x in (u, v):
        gone = _failed_before(fabric, x)
        if gone is not None:
            raise NodeError(f"{fabric.name}: cannot fail {label} {show_value(item)}: {gone} has "
                            f"already failed")
    try:
        a, b = fabric.node(u), fabric.node(v)
    except NodeError as e:
        raise NodeError(f"cannot fail {label} {show_value(item)}: {e}") from None
    if not fabric.graph.has_edge(a, b):
        if {a, b} in [set(e) for e in fabric.failures.links]:
            raise NodeError(f"{fabric.name}: cannot fail {label} {(a, b)!r}: it has already "
                            f"failed")
        raise NodeError(f"{fabric.name}: cannot fail {label} {(a, b)!r}: there is no such link")
    return a, b


def _names_a_node(fabric, x):
    """Whether ``x`` is the name of a node of ``fabric``, live or failed (not a rank)."""
    try:
        hash(x)
    except TypeError:           # unhashable: a list of items (a numpy array compared itself
        return False            # with each failed node: numpy's 'truth value ... ambiguous')
    return x in fabric.graph or x in fabric.failures.nodes


def _one_pair(fabric, x):
    """Whether ``x`` is one link given bare: a string, or a pair ``(u, v)`` of nodes or ranks
    (its first item no sequence, or both items names of nodes: networkx's grid nodes). A
    tuple holding a link's text (``'chip0-chip1'``, naming no node) is a sequence of links:
    ``('chip0-chip1', 'chip1-chip2')`` was read as one link between two nodes of those names."""
    return isinstance(x, str) or (isinstance(x, tuple) and len(x) == 2 and (
        not isinstance(x[0], (tuple, list)) or all(_names_a_node(fabric, y) for y in x))
        and not any(isinstance(y, str) and ("-" in y or "~" in y)
                    and not _names_a_node(fabric, y) for y in x))


def without(fabric, links=(), chips=(), lanes=()):
    """Return a degraded copy of ``fabric`` with ``links`` and ``chips`` removed.

    Parameters
    ----------
    fabric : Fabric
    links : sequence (not a set: an order is kept)
        Failed links, each a pair ``(u, v)`` of node names or ranks, or a string
        ``"u-v"`` / ``"u~v"``.
    chips : sequence (not a set)
        Failed nodes (names or ranks): chips, or switches; every link of a
        failed node fails with it.
    lanes : sequence (not a set)
        Failed lanes of bundled links, each written as a link; a link named ``k``
        times loses ``k`` lanes. The bundle keeps routing with ``lanes - k`` lanes and
        that fraction of its bandwidth (latency unchanged); losing every lane fails the
        link. Recorded in ``failures.lanes`` (or ``failures.links``), one entry per
        bundle when a fabric is degraded twice. Routes do not change (dimension order keeps
        its path; under ``"weighted"`` ECMP each hop splits by its own links, so the hops
        before a thinned bundle still send it its share), and a thinned bundle can drain
        slower than the link failed outright, which is routed around (dgx-h100, 4 of
        chip0-sw0's 5 lanes: all-to-all 77.8 us against 21.5 us; the rule and its reason:
        :class:`~fabric.Router`, ``fabric/_routing.py``).

    One link, lane or node may be given bare (not in a list): a string, a rank, a name of a
    node (a tuple such as networkx's grid nodes ``(0, 1)`` is that node, not ranks 0 and 1,
    as :meth:`~fabric.Fabric.node` reads a name before a rank), or a pair of them.

    Returns
    -------
    Fabric
        Same structure, parameters and policy; :attr:`~fabric.Fabric.failures`
        records what was removed, and the surviving chips keep their ranks.

    Raises
    ------
    NodeError
        If a link is not in the fabric or a node names nothing, if every chip
        would fail, or if something has already failed: a link, lane or node
        named twice, a link or node of a degraded ``fabric`` that failed before
        (or has a failed end), or more lanes than a bundle has left. The message
        names it and says "it has already failed". One call refuses what two would:
        a lane of a link it also fails, or a link or lane of a node it also fails (a
        failed node's links fail with it), with "(named twice: ...)".

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
    >>> g.without(links=["chip0-chip4"]).failures.lanes       # one lane of chip0-chip1 still down
    ((('chip0', 'chip1'), 1),)
    >>> f.without(links=["chip0-chip1"]).without(links=["chip1-chip0"])
    Traceback (most recent call last):
    ...
    fabric.NodeError: torus:4x4,links=2 without 1 link: cannot fail link ('chip1', 'chip0'): it has already failed
    """
    fabric = fabric_arg(fabric)
    if _one_pair(fabric, links):
        links = [links]  # one link given bare
    if isinstance(chips, str) or is_int(chips) or _names_a_node(fabric, chips):
        chips = [chips]  # one given bare (numpy's too; a node named by a tuple)
    if _one_pair(fabric, lanes):
        lanes = [lanes]
    pairs = "links, each a pair (u, v) of node names or ranks or a string 'u-v'"
    links = sequence_of(links, "links", pairs)
    lanes = sequence_of(lanes, "lanes", pairs)
    chips = sequence_of(chips, "chips", "node names or ranks")
    dead_links, named = [], set()
    for x in links:
        pair = _link_pair(fabric, x)
        if frozenset(pair) in named:    # named twice (u-v, v-u, or a rank): a mistake
            raise NodeError(f"{fabric.name}: cannot fail link {pair!r}: it has already failed "
                            f"(named twice)")
        named.add(frozenset(pair))
        dead_links.append(pair)
    lost = {}  # bundle -> lanes failed, in the order first named
    for x in lanes:
        a, b = _link_pair(fabric, x, "lane")
        key = (a, b) if (a, b) in lost or (b, a) not in lost else (b, a)
        lost[key] = lost.get(key, 0) + 1
    thin = []
    for (a, b), k in lost.items():
        if frozenset((a, b)) in named:  # as in two calls: a lane of a failed link
            raise NodeError(f"{fabric.name}: cannot fail a lane of link {(a, b)!r}: it has "
                            f"already failed (named twice: as a link and as a lane)")
        n = fabric.graph.edges[a, b].get("lanes", 1)
        if k > n:
            raise NodeError(f"{fabric.name}: cannot fail {k} lanes of link {(a, b)!r}: it has "
                            f"only {n} lane{'s' if n != 1 else ''} left; the link fails with "
                            f"its last lane and cannot fail again")
        if k == n:
            dead_links.append((a, b))
        else:
            thin.append(((a, b), k))
    dead_nodes = []
    for x in chips:
        gone = _failed_before(fabric, x)
        if gone is not None:
            raise NodeError(f"{fabric.name}: cannot fail {gone}: it has already failed")
        try:
            n = fabric.node(x)
        except NodeError as e:
            raise NodeError(f"cannot fail {show_value(x)}: {e}") from None
        if n in dead_nodes:             # named twice (name and rank): a mistake
            raise NodeError(f"{fabric.name}: cannot fail {n}: it has already failed "
                            f"(named twice)")
        dead_nodes.append(n)
    dead = set(dead_nodes)
    for label, pairs in (("link", [e for e in dead_links if frozenset(e) in named]),
                         ("a lane of link", lost)):
        for pair in pairs:              # as in two calls: a link of a failed node
            gone = next((x for x in pair if x in dead), None)
            if gone is not None:
                raise NodeError(f"{fabric.name}: cannot fail {label} {pair!r}: {gone} has "
                                f"already failed (named twice: a failed node's links fail "
                                f"with it)")
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
    cut = _cut_off(fabric, H, endpoints, dead_links, dead_nodes)
    failures = fabric.failures.plus(dead_links, dead_nodes,
                                    {n: rank_of[n] for n in dead_nodes if n in rank_of}, thin,
                                    cut_off=cut,
                                    islands=_islands(fabric, H, endpoints, dead_links, dead_nodes))
    if fabric.failures.lanes:           # degraded twice: one entry per bundle still alive
        failures = dataclasses.replace(failures, lanes=_merged_lanes(failures.lanes, H))
    # named by everything that has failed since the fabric was built, so that degrading in
    # two calls names the fabric as one call with both does; a name the user gave a
    # degraded fabric (not ours) keeps it, and this call's failures are added to it
    base, ours = fabric.name, _failed_suffix(fabric.failures)
    if fabric.intact is not None and ours and base.endswith(ours):
        name = base[:-len(ours)] + _failed_suffix(failures)
    else:
        name = base + _failed_suffix(Failures(links=dead_links, nodes=dead_nodes, lanes=thin))
    return fabric.replace(graph=H, endpoints=endpoints, ranks=ranks, name=name, domains=domains,
                          failures=failures,
                          intact=fabric if fabric.intact is None else fabric.intact,
                          address_plan=_pinned_plan(fabric) if dead_nodes else
                          fabric.address_plan)


def failure_label(before, after):
    """What ``after`` (``before.without(...)``) has failed beyond ``before``: "without 1 link
    and 1 node" ('' for nothing). A degraded fabric's name counts every failure since it was
    built, so the names' difference is no label when ``before`` is degraded too (failing a
    link of 'X without 1 link' read 'X without 2 links' whole; of 'X without 2 links', a chip
    read 'and 1 node').

    >>> import topologies
    >>> g = topologies.build("torus:4x4").without(links=[("chip0", "chip1")])
    >>> failure_label(g, g.without(links=[("chip2", "chip3")], chips=["chip9"]))
    'without 1 link and 1 node'
    """
    was = before.failures
    old = {frozenset(e) for e in was.links}
    thin = {frozenset(e): k for e, k in was.lanes}
    return _failed_suffix(Failures(
        links=tuple(e for e in after.failures.links if frozenset(e) not in old),
        nodes=tuple(n for n in after.failures.nodes if n not in was.nodes),
        lanes=tuple((e, k - thin.get(frozenset(e), 0)) for e, k in after.failures.lanes
                    if k > thin.get(frozenset(e), 0)))).strip()


def _failed_suffix(failures):
    """What a degraded fabric's name adds for ``failures``: " without 2 links and 1 node"
    ('' for none).

    >>> _failed_suffix(Failures(links=(("a", "b"),), nodes=("c", "d"), lanes=((("e", "f"), 2),)))
    ' without 1 link and 2 lanes and 2 nodes'
    """
    what = []
    for n, word in ((len(failures.links), "link"), (sum(k for _, k in failures.lanes), "lane"),
                    (len(failures.nodes), "node")):
        if n:
            what.append(f"{n} {word}{'s' if n != 1 else ''}")
    return f" without {' and '.join(what)}" if what else ""


def _merged_lanes(lanes, H):
    """``lanes`` with one entry per bundle (lanes lost summed), bundles gone from ``H`` dropped.

    >>> import networkx as nx
    >>> _merged_lanes(((("a", "b"), 1), (("c", "d"), 1), (("b", "a"), 2)), nx.path_graph("ab"))
    ((('a', 'b'), 3),)
    """
    out = {}
    for e, k in lanes:
        if H.has_edge(*e):
            key = next((x for x in out if set(x) == set(e)), tuple(e))
            out[key] = out.get(key, 0) + k
    return tuple(out.items())


def _cut_off(fabric, H, endpoints, dead_links, dead):
    """Live chips of ``H`` that no path joins to another live chip -> what cut them off.

    Only the nodes next to this call's failures (and the chips already cut off) can
    be newly alone, so the search starts there and stops as soon as a component
    shows two live chips: a partition into large parts costs little. The cause of
    a chip cut off now is every failed element that borders its component (failed links
    with an end in it; failed nodes next to it in the fabric as built), this call's and the
    earlier calls' (:func:`_bordering`), so that a fabric degraded in two calls names what
    one call with both names.
    """
    alive = set(endpoints)
    if len(alive) < 2:       # one chip left: nothing to be cut off from
        return {}
    G = fabric.graph
    seeds = [x for e in dead_links for x in e if x in H]
    seeds += [x for n in dead for x in G[n] if x in H]
    seeds += [c for c in fabric.failures.cut_off if c in H]
    cut, seen = {}, set()
    for s in dict.fromkeys(seeds):
        if s in seen:
            continue
        comp, stack, chips = {s}, [s], []
        while stack and len(chips) < 2:
            v = stack.pop()
            if v in alive:
                chips.append(v)
            for w in H[v]:
                if w not in comp:
                    comp.add(w)
                    stack.append(w)
        if len(chips) >= 2:
            continue                  # joined to another chip (the search stopped early)
        seen |= comp
        if len(chips) == 1:
            cut[chips[0]] = _bordering(fabric, comp, dead_links, dead)
    return {c: cut[c] for c in endpoints if c in cut}


def _bordering(fabric, comp, dead_links, dead):
    """Every failed element next to the node set ``comp``, those of earlier calls first:
    links with an end in it, nodes with a neighbour in it in the fabric as built. (This
    call's alone named an island made in two calls by the second call's failures only:
    fattree:k=4 without link edge3.1-agg3.0 and edge3.0, then without agg3.1, named 'node
    agg3.1' where one call with all three names the link too.)"""
    G = (fabric if fabric.intact is None else fabric.intact).graph
    links = list(fabric.failures.links) + list(dead_links)
    nodes = list(fabric.failures.nodes) + list(dead)
    return tuple(dict.fromkeys(
        [f"link {a}-{b}" for a, b in links if a in comp or b in comp]
        + [f"node {n}" for n in nodes if any(x in comp for x in G[n])]))


def _islands(fabric, H, endpoints, dead_links, dead):
    """:attr:`Failures.islands` of the surviving graph ``H``: the components holding two or
    more live chips, but the one holding the most (the lowest rank at a tie), each as its
    live chips in rank order and what borders it: every failed link with an end in it and
    failed node next to it, earlier calls' too (:func:`_bordering`). One pass over ``H``
    (connected components).

    >>> import topologies
    >>> g = topologies.build("mesh:4x4").without(chips=["chip2", "chip4", "chip5"])
    >>> g.failures.islands
    ((('chip0', 'chip1'), ('node chip2', 'node chip4', 'node chip5')),)
    """
    rank = {c: i for i, c in enumerate(endpoints)}
    groups = []
    for comp in nx.connected_components(H):
        chips = sorted((c for c in comp if c in rank), key=rank.get)
        if chips:
            groups.append((comp, chips))
    if len(groups) < 2:
        return ()
    groups.sort(key=lambda g: (-len(g[1]), rank[g[1][0]]))
    out = []
    for comp, chips in groups[1:]:
        if len(chips) >= 2:
            out.append((tuple(chips), _bordering(fabric, comp, dead_links, dead)))
    out.sort(key=lambda g: rank[g[0][0]])
    return tuple(out)


def require_joined(fabric, chips):
    """Raise :class:`~fabric.RoutingError` when the failures left no path between two of
    ``chips`` (live chip names): they are in different groups of live chips
    (:meth:`Failures.group_of`: the connected survivors, an island, a chip cut off alone).
    The message names the pair and the chips cut off (:meth:`Failures.explain`). For a check
    that comes before anything is routed (e.g. a runtime that first asks whether the chips
    share a load/store domain); a no-op on an intact fabric.

    >>> import topologies
    >>> g = topologies.build("mesh:3x3").without(chips=["chip3", "chip4", "chip5"])
    >>> require_joined(g, ["chip0", "chip2"])
    >>> require_joined(g, ["chip0", "chip2", "chip7"])
    Traceback (most recent call last):
    ...
    fabric.RoutingError: mesh:3x3 without 3 nodes: no route from 'chip0' to 'chip7'; chip6, chip7 and chip8 are cut off from the other live chips (an island of 3): node chip3, node chip4 and node chip5 failed
    """
    f = fabric.failures
    if not (f.islands or f.cut_off):
        return
    first = {}
    for c in chips:
        first.setdefault(f.group_of(c), c)
    if len(first) > 1:
        a, b = first.get(0, next(iter(first.values()))), None
        b = next(c for c in first.values() if c != a)
        raise RoutingError(f"{fabric.name}: no route from {a!r} to {b!r}{f.explain(a, b)}")


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
