"""The :class:`Fabric`: an immutable model of one interconnect.

A fabric holds a frozen networkx graph (the schema is in :mod:`fabric._schema`),
the rank order of its chips, its host domains, the chip it is built of, its
typed structure (:mod:`fabric._structure`, which structure-aware algorithms
dispatch on) and what has failed (:class:`~fabric.Failures`), the builder's
family and parameters (descriptive only), and the named parameters
(assumptions) it was built from. Everything derived
from these is computed lazily and cached on the instance; methods that change
something return a modified copy. What an analysis derives from a fabric is cached
outside it, in :func:`fabric._memo.fabric_memo` (one dict per fabric and analysis
module, gone with the fabric).
"""

import dataclasses
import itertools
import types
import typing
from collections.abc import Mapping
from functools import cached_property

import networkx as nx
import numpy as np

from ._arrays import integer_array, number_array
from ._chips import ChipSpec, chip_spec
from ._errors import GraphError, NodeError, SpecError
from ._fabric_arg import FabricBase, fabric_arg
from ._failures import Failures
from ._params import Parameter
from ._schema import default_endpoints, rank_name_faults, validate_graph
from ._structure import Clos, Dragonfly, Grid, Switched
from ._units import (
    check_count,
    is_int,
    is_numeral,
    items_of,
    kind_error,
    name_list,
    sequence_of,
    show_value,
    text_of,
)

_INT64 = np.dtype(np.int64)

__all__ = ["EdgeArrays", "Fabric"]

#: The types :attr:`Fabric.structure` may hold (besides ``None``).
STRUCTURES = (Grid, Clos, Switched, Dragonfly)


class EdgeArrays(typing.NamedTuple):
    """A fabric's edges as parallel numpy arrays (see :attr:`Fabric.edge_arrays`)."""

    u: np.ndarray
    v: np.ndarray
    bandwidth: np.ndarray
    latency: np.ndarray
    lanes: np.ndarray
    tech: np.ndarray
    carries: np.ndarray


def _frozen_mapping(mapping):
    return types.MappingProxyType(dict(mapping))


def _chip_name(chip):
    return "none" if chip is None else show_value(chip.name)


def _check_failed(fabric):
    """:class:`GraphError` unless a degraded fabric (``failures`` not empty) carries the fabric
    as built it was made from (``intact``: the degraded grid's bypasses and the bill of
    materials read it; a hand-made copy without one raised a bare AttributeError from the
    router), what failed was part of that fabric, and its graph has lost it (a failed link or
    node still in it was routed over). The failed chips' ranks are :func:`_check_ranks`'."""
    f = fabric.failures
    if fabric.intact is None:
        raise GraphError(f"failures mark {show_value(fabric.name)} degraded, but intact is "
                         f"None: a degraded copy carries the fabric as built it was made from "
                         f"(fabric.without makes both)")
    built = fabric.intact.graph       # what failed was part of it (a 'ghost' node was counted)
    for what, names in (("failures.ranks", f.ranks), ("failures.nodes", f.nodes),
                        ("failures.links", [n for e in f.links for n in e])):
        unknown = next((n for n in names if n not in built), None)
        if unknown is not None:
            raise GraphError(f"{what} names {show_value(unknown)}, no "
                             f"{'chip' if what == 'failures.ranks' else 'node'} of the fabric "
                             f"as built ({fabric.intact.name})")
    G = fabric.graph
    link = next((e for e in f.links if G.has_edge(*e)), None)
    if link is not None:
        raise GraphError(f"failed link {show_value(link)} is still an edge of the graph (a "
                         f"failed link is removed from it: fabric.without)")
    node = next((n for n in f.nodes if n in G), None)
    if node is not None:
        raise GraphError(f"failed node {show_value(node)} is still a node of the graph (a "
                         f"failed node is removed from it: fabric.without)")


def _check_ranks(ranks, endpoints, failed, graph):
    """:class:`GraphError` unless the live chips' ``ranks`` and the failed chips' (``failed``,
    ``failures.ranks``) hold each rank ``0..n-1`` once, and every node named by an int that
    is a rank is the chip of that rank (:func:`fabric._schema.rank_name_faults`). Every
    Fabric asks it, so a ``replace(ranks=...)`` or ``replace(endpoints=...)`` cannot give one
    rank two chips or let an int name reach another chip (``node(0)`` was chip1 after
    ``replace(ranks=(1, 0, 2, 3))`` of a graph whose chips are named by their ranks).
    """
    chips = list(endpoints) + list(failed)
    if len(set(chips)) != len(chips):
        seen = set()
        again = next(c for c in chips if c in seen or seen.add(c))
        raise GraphError(f"chip {show_value(again)} is named twice among the endpoints and "
                         f"the failed chips (failures.ranks): a chip holds one rank, live or "
                         f"failed")
    gone = [c for c in failed if c in graph]
    if gone:
        raise GraphError(f"chip {show_value(gone[0])} is in failures.ranks but still a node of "
                         f"the graph (a failed chip is removed from it: fabric.without)")
    chip_of = dict(zip(ranks, endpoints))
    chip_of.update((r, c) for c, r in failed.items())
    n = len(ranks) + len(failed)
    if len(chip_of) != n or not all(0 <= r < n for r in chip_of):
        held = sorted(list(ranks) + list(failed.values()))
        twice = [a for a, b in itertools.pairwise(held) if a == b]
        got = (f"rank {twice[0]} twice" if twice else
               f"rank {next(r for r in held if not 0 <= r < n)}")
        raise GraphError(f"ranks must hold each rank 0..{n - 1} once (the live chips' and "
                         f"the failed chips', failures.ranks), got {got}")
    faults = rank_name_faults(graph, chip_of)
    if faults:
        raise GraphError(f"invalid fabric graph: {faults[0]}")


def _check_domains(domains, graph=None):
    """``domains`` as ``{name: tuple of chips}``; :class:`GraphError` unless every host domain
    is named by a non-empty string and holds a sequence of at least one chip, each a node of
    ``graph`` (when given) in no other domain. Every Fabric asks it of its graph, so
    ``fabric.replace(domains=...)`` cannot name a node the graph lacks (it gave
    ``host_of['nope']`` and left every real chip homeless, checked without a word).

    A domain is looked up by name (host domains, grants, a region's owner): one named 5 or
    NaN would be checked clean and then found by no lookup. Its DRAM is reached through its
    chips (fabric._access.target_node), so a domain of none has memory nothing reaches
    (fabric.without drops a domain whose chips all failed).
    """
    if not isinstance(domains, Mapping):
        raise GraphError(f"domains must be a mapping of host domain name -> its chips, got "
                         f"{show_value(domains)}")
    out = {}
    for h, chips in domains.items():
        if not (isinstance(h, str) and h):
            raise GraphError(f"host domain {h!r} must be named by a non-empty string (a chip's "
                             "'host' attribute, or a key of domains=)")
        items = items_of(chips)
        if items is None:
            shown = (f"the string {chips!r}" if isinstance(chips, (str, bytes))
                     else show_value(chips))
            raise GraphError(f"host domain {h!r} must hold a sequence of chips, got {shown}")
        out[h] = tuple(items)
        if not out[h]:
            raise GraphError(f"host domain {h!r} holds no chip (its DRAM is reached through "
                             "its chips)")
    if graph is not None:
        listed = [n for chips in out.values() for n in chips]
        unknown = [n for n in listed if n not in graph]
        if unknown:
            raise GraphError(f"domains name nodes not in the graph: {unknown[:5]!r}")
        if len(listed) != len(set(listed)):
            raise GraphError("a chip is listed in more than one host domain")
    return out


@dataclasses.dataclass(frozen=True, eq=False)
class Fabric(FabricBase):
    """An interconnect model: a graph of chips, switches and links, plus its metadata.

    Build one with a builder from :mod:`topologies` (``topologies.build("torus:4x4x4")``)
    or from your own graph with :meth:`Fabric.from_graph`. Do not call the
    constructor directly unless you pass an already validated, frozen graph.

    Attributes
    ----------
    graph : networkx.Graph
        Frozen; attribute schema in :mod:`fabric._schema`.
    endpoints : tuple
        The live chip nodes in rank order. On an intact fabric rank ``r`` is
        ``endpoints[r]``; on a degraded one failed chips are missing and keep
        their ranks (:attr:`rank_of`, :attr:`failures`). Analyses run over
        these, position ``i`` being ``endpoints[i]``.
    name : str
        A label, e.g. the spec string it was built from.
    family : str
        The builder family (``"hypermesh"``, ``"fat_tree"``, ...), or ``"graph"``
        for a user graph: a label. Algorithms dispatch on :attr:`structure`.
    params : mapping
        The builder's parameters, read-only (descriptive).
    domains : mapping
        Host domain name -> tuple of its chips, in rank order.
    chip : ChipSpec or None
        The accelerator the fabric is built of, if known.
    assumptions : tuple of Parameter
        Every named number the builder used, with unit and source.
    address_plan : AddressPlan or None
        The global address plan (:class:`~fabric.AddressPlan`); ``None`` means the
        default plan. See :attr:`address_map`, :attr:`host_domains`, :meth:`translate`.
    structure : Grid, Clos, Switched, Dragonfly or None
        What the builder knows about the fabric's shape (:mod:`fabric._structure`);
        ``None`` for a user's graph. It describes the intact design.
    failures : Failures
        What has failed (:func:`fabric.without`); empty on an intact fabric.
    ranks : tuple of int or None
        The stable rank of each of :attr:`endpoints`; ``None`` means ``0..n-1``.
    intact : Fabric or None
        On a degraded copy (:func:`fabric.without`), the fabric as built that it was
        made from (what :func:`analysis.bill_of_materials` prices); ``None`` on an
        intact fabric.

    Examples
    --------
    >>> import networkx as nx
    >>> G = nx.path_graph(3)
    >>> nx.set_node_attributes(G, "chip", "kind")
    >>> nx.set_edge_attributes(G, 25e9, "bandwidth"); nx.set_edge_attributes(G, 1e-7, "latency")
    >>> f = Fabric.from_graph(G)
    >>> f.endpoints, f.rank_of[2], dict(f.domains)
    ((0, 1, 2), 2, {'default': (0, 1, 2)})
    """

    graph: nx.Graph
    endpoints: tuple
    name: str = "graph"
    family: str = "graph"
    params: types.MappingProxyType = dataclasses.field(
        default_factory=lambda: _frozen_mapping({}))
    domains: types.MappingProxyType = dataclasses.field(
        default_factory=lambda: _frozen_mapping({}))
    chip: ChipSpec = None
    assumptions: tuple = ()
    address_plan: object = None
    structure: object = None
    failures: Failures = dataclasses.field(default_factory=Failures)
    ranks: tuple = None
    intact: object = None

    def __post_init__(self):
        # Normalise containers so that a Fabric is hashable-free but immutable in practice.
        # a sequence in rank order (a set gave ranks in its hashes' order)
        object.__setattr__(self, "endpoints", tuple(sequence_of(self.endpoints, "endpoints",
                                                                "chip nodes in rank order")))
        if not isinstance(self.failures, Failures):
            raise kind_error(self.failures, "failures", "a Failures")
        if self.ranks is None:
            n = len(self.endpoints)
            object.__setattr__(self, "ranks", tuple(range(n)))
            # a degraded copy's failed chips keep their ranks: 0..n-1 for the live ones then
            # gives a failed chip's rank twice ('got rank 0 twice', ranks the caller never gave)
            taken = {c: r for c, r in self.failures.ranks.items() if r < n}
            if taken:
                raise GraphError(f"ranks=None numbers the {n} live chips 0..{n - 1}, but the "
                                 f"failed chips keep their ranks (failures.ranks holds "
                                 f"{show_value(taken)}): give each live chip its rank, "
                                 f"ranks=...")
        else:
            # (a bare int() truncated 2.5, kept -5 and read a set in its hashes' order)
            ranks = tuple(sequence_of(self.ranks, "ranks", "ranks (ints >= 0)"))
            if not all(type(r) is int and r >= 0 for r in ranks):     # (each replace() asks)
                ranks = tuple(check_count(r, f"ranks[{i}]", 0, error=GraphError)
                              for i, r in enumerate(ranks))
            object.__setattr__(self, "ranks", ranks)
            if len(self.ranks) != len(self.endpoints):
                raise GraphError(f"ranks has {len(self.ranks)} entries for "
                                 f"{len(self.endpoints)} endpoints")
        _check_ranks(self.ranks, self.endpoints, self.failures.ranks, self.graph)
        if self.structure is not None and not isinstance(self.structure, STRUCTURES):
            raise kind_error(self.structure, "structure", f"one of "
                             f"{', '.join(c.__name__ for c in STRUCTURES)} or None")
        if self.intact is not None:
            fabric_arg(self.intact, "intact")
        if self.failures.degraded or self.failures.ranks:
            _check_failed(self)
        if self.address_plan is not None:   # ({} was read as the default plan)
            from ._plan import plan_arg  # (_plan imports this module)
            plan_arg(self.address_plan, "address_plan")
        # the labels and records a replace() may be handed (from_graph's are checked too)
        text_of(self.name, "name")
        text_of(self.family, "family")
        if not isinstance(self.params, Mapping):
            raise kind_error(self.params, "params", "a mapping of labels")
        object.__setattr__(self, "params", _frozen_mapping(self.params))
        object.__setattr__(self, "domains",
                           _frozen_mapping(_check_domains(self.domains, self.graph)))
        assumptions = items_of(self.assumptions)
        if assumptions is None or not all(isinstance(a, Parameter) for a in assumptions):
            raise kind_error(self.assumptions, "assumptions", "a sequence of fabric.Parameter")
        object.__setattr__(self, "assumptions", tuple(assumptions))
        if self.chip is not None:
            object.__setattr__(self, "chip", chip_spec(self.chip))
        if self.intact is not None and self.intact.chip != self.chip:
            # the same machine as built (bill_of_materials prices the intact one): a
            # replace(chip=...) of a degraded copy priced the old chip's power
            raise GraphError(f"a degraded copy is built of its intact fabric's chip "
                             f"({_chip_name(self.intact.chip)}), got chip "
                             f"{_chip_name(self.chip)}: swap both with with_chip")
        if not nx.is_frozen(self.graph):
            raise GraphError("Fabric needs a frozen graph; use Fabric.from_graph(G)")

    @classmethod
    def from_graph(cls, G, endpoints=None, *, name="graph", domains=None, chip=None,
                   assumptions=(), family="graph", params=None, structure=None):
        """Validate a user's graph and wrap it in a Fabric.

        The graph is copied and frozen; the caller's graph is not changed.

        Parameters
        ----------
        G : networkx.Graph
            Nodes and edges following the schema in :mod:`fabric._schema`.
        endpoints : sequence, optional
            Chip nodes in rank order. Default: every ``kind="chip"`` node in the
            graph's node order.
        name : str
        domains : mapping of str to sequence, optional
            Host domains. Default: chips grouped by their ``host`` attribute;
            chips without one form a domain called ``"default"``.
        chip : str or ChipSpec, optional
        assumptions : sequence of Parameter
        family, params
            For builders: the topology family and its parameters (labels).
        structure : Grid, Clos, Switched, Dragonfly or None
            For builders: the typed structure (:mod:`fabric._structure`). A user
            graph leaves it ``None`` (routed by shortest paths).

        Raises
        ------
        GraphError
            Naming the node or edge that breaks the schema, or a disconnected endpoint.
        """
        if endpoints is not None:     # a set: its hashes' order, not a rank order
            endpoints = sequence_of(endpoints, "endpoints", "chip nodes in rank order")
        validate_graph(G, endpoints, ranks=False)     # (the constructor checks the ranks)
        H = G.copy()
        for _, _, data in H.edges(data=True):
            data.setdefault("lanes", 1)
        if endpoints is None:
            endpoints = default_endpoints(H)
        endpoints = tuple(endpoints)
        if domains is None:
            grouped = {}
            for n in endpoints:
                grouped.setdefault(H.nodes[n].get("host", "default"), []).append(n)
            domains = grouped
        nx.freeze(H)       # (the constructor checks given domains against H)
        return cls(H, endpoints, name=name, family=family, params=params or {},
                   domains=domains, chip=chip, assumptions=assumptions, structure=structure)

    def replace(self, **changes):
        """Return a copy with some fields replaced (caches are not carried over)."""
        return dataclasses.replace(self, **changes)

    def with_chip(self, chip):
        """A copy on another chip (a name or a :class:`~fabric.ChipSpec`) whose figures replace
        the old chip's in :attr:`assumptions` (``replace(chip=...)`` keeps them as given): the
        one swap of a preset's ``:chip=`` and a system file's ``chip``. A degraded copy's
        :attr:`intact` fabric is swapped too: it is the same machine as built (what
        :func:`analysis.bill_of_materials` prices), so it holds the same chips.

        >>> import topologies
        >>> f = topologies.build("dgx-h100").with_chip("b200")
        >>> f.chip.name, [p.name for p in f.assumptions if p.name.startswith(("h100.", "b200."))][:2]
        ('b200', ['b200.hbm_bytes', 'b200.hbm_bandwidth'])
        >>> topologies.build("dgx-h100").without(chips=["chip3"]).with_chip("b200").intact.chip.name
        'b200'
        """
        chip = chip_spec(chip)
        old = set(self.chip.parameters()) if self.chip is not None else set()
        kept = tuple(p for p in self.assumptions if p not in old)
        # (the intact fabric kept the old chip: bill_of_materials priced the degraded copy's
        # parts with the old chip's power)
        intact = None if self.intact is None else self.intact.with_chip(chip)
        return self.replace(chip=chip, assumptions=kept + tuple(chip.parameters()),
                            intact=intact)

    def __repr__(self):
        return (f"Fabric({self.name!r}, family={self.family!r}, "
                f"endpoints={len(self.endpoints)}, nodes={self.graph.number_of_nodes()}, "
                f"edges={self.graph.number_of_edges()})")

    # -- derived, cached -------------------------------------------------------------

    @property
    def n_endpoints(self):
        """The number of endpoints (ranks)."""
        return len(self.endpoints)

    @cached_property
    def nodes(self):
        """All nodes, in the graph's order; ``nodes[i]`` has index ``i``."""
        return tuple(self.graph.nodes)

    @cached_property
    def node_index(self):
        """Node -> its integer index in :attr:`nodes`."""
        return {n: i for i, n in enumerate(self.nodes)}

    def node_indices(self, x, what="nodes"):
        """``x`` (a node index or a one-dimensional sequence of them) as an int64 array, checked:
        the one check of the vectorized queries (the router's, :func:`fabric.loadstore_reaches`),
        where numpy would read -1 as the last node and fail deep inside on 2**63 or a float.

        Raises
        ------
        SpecError
            For an array of two or more dimensions.
        TypeError
            For indices that are not integers (a sequence holding a bool among its ints too).
        NodeError
            For an index outside ``0..len(nodes) - 1``, naming ``what`` and the index.

        >>> import topologies
        >>> topologies.build("torus:2x2").node_indices([0, -1], "src")
        Traceback (most recent call last):
        ...
        fabric.NodeError: torus:2x2: src holds node index -1, outside 0..3
        """
        n = len(self.nodes)
        # Fast paths for the common calls (one index; a one-dimensional int64 array, returned
        # as is, as the general path returns it), taken only when the answer is valid: any
        # other input, or an index out of range, goes the general way to the same error.
        if is_int(x):
            if 0 <= x < n:
                return np.array((x,), dtype=np.int64)
        elif type(x) is np.ndarray and x.dtype is _INT64 and x.ndim == 1 and x.size:
            if x.size <= 16:                # a numpy reduction costs more than this below ~16
                v = x.tolist()
                if min(v) >= 0 and max(v) < n:
                    return x
            elif x.view(np.uint64).max() < n:   # a negative index reads as >= 2**63
                return x
        try:
            a = np.asarray(x)
        except (TypeError, ValueError, OverflowError):      # ragged, or no array at all
            a = np.asarray(x, dtype=object)
        if a.ndim > 1:
            raise SpecError(f"{what} must be a node index or a one-dimensional sequence of "
                             f"them, got an array of shape {a.shape}")
        if a.size == 0:                     # [] reads as float64: an empty query all the same
            return np.zeros(0, dtype=np.int64)
        integer_array(a, what, "node indices (integers)")     # its dtype (an ndarray: as is)
        if not isinstance(x, np.ndarray):
            number_array(x, what)           # [0, True]: numpy reads the flag as node 1
        a = np.atleast_1d(a)
        # one reduction: a negative index reads as 2**64 + it on uint64, so >= n as well
        if a.astype(np.int64, copy=False).view(np.uint64).max() >= n:
            bad = int(a[(a < 0) | (a >= n)][0])
            raise NodeError(f"{self.name}: {what} holds node index {bad}, outside 0..{n - 1}")
        return a.astype(np.int64, copy=False)

    @cached_property
    def rank_of(self):
        """Live endpoint node -> its rank (stable under failures; see :attr:`ranks`)."""
        return dict(zip(self.endpoints, self.ranks))

    @cached_property
    def _node_of_rank(self):
        return dict(zip(self.ranks, self.endpoints))

    @property
    def n_ranks(self):
        """Ranks of the intact fabric: live endpoints plus failed chips."""
        return len(self.endpoints) + len(self.failures.ranks)

    @cached_property
    def endpoint_indices(self):
        """Node indices of the endpoints, in rank order, as a read-only ``int64`` array."""
        idx = self.node_index
        out = np.fromiter((idx[n] for n in self.endpoints), dtype=np.int64,
                          count=len(self.endpoints))
        out.flags.writeable = False
        return out

    @cached_property
    def edge_arrays(self):
        """The edges as parallel arrays, edge ``e`` in :attr:`graph` ``.edges`` order.

        Read from the graph's adjacency in bulk (no Python per edge): an
        undirected graph lists edge ``(n, m)`` under the first of its ends in node
        order, at ``m``'s place among ``n``'s neighbours, which is the order kept.

        Returns
        -------
        EdgeArrays
            ``u``, ``v`` (node indices, ``int64``; ``u`` is the endpoint listed
            first), ``bandwidth`` (B/s per direction), ``latency`` (s), ``lanes``
            (``int64``), ``tech`` (the link technology's name) and ``carries``
            (the edge's own ``carries`` attribute; both ``""`` if none, object
            arrays), each of length E. Read-only.

        Examples
        --------
        >>> import topologies
        >>> f = topologies.build("torus:3x3")
        >>> e = f.edge_arrays
        >>> [(f.nodes[a], f.nodes[b]) for a, b in zip(e.u[:2], e.v[:2])] == list(f.graph.edges)[:2]
        True
        """
        G = self.graph
        N = len(self.nodes)
        idx = self.node_index
        deg = np.fromiter((len(nbrs) for _, nbrs in G.adjacency()), dtype=np.int64, count=N)
        total = int(deg.sum())
        heads = np.fromiter(map(idx.__getitem__, itertools.chain.from_iterable(
            nbrs for _, nbrs in G.adjacency())), dtype=np.int64, count=total)
        tails = np.repeat(np.arange(N, dtype=np.int64), deg)
        keep = heads >= tails  # listed under the first end in node order (a self loop once)
        u, v = tails[keep], heads[keep]
        data = list(itertools.compress(itertools.chain.from_iterable(
            nbrs.values() for _, nbrs in G.adjacency()), keep.tolist()))
        # builders share one attribute dict among the links of a class: read each dict once
        ids = np.fromiter(map(id, data), dtype=np.uint64, count=len(data))
        _, first, inv = np.unique(ids, return_index=True, return_inverse=True)
        inv = np.ravel(inv)
        reps = [data[i] for i in first.tolist()]
        bw = np.array([d["bandwidth"] for d in reps], dtype=float)[inv]
        lat = np.array([d["latency"] for d in reps], dtype=float)[inv]
        lanes = np.array([d.get("lanes", 1) for d in reps], dtype=np.int64)[inv]
        tech = np.array([d.get("tech", "") or "" for d in reps], dtype=object)[inv]
        carries = np.array([d.get("carries", "") or "" for d in reps], dtype=object)[inv]
        for arr in (u, v, bw, lat, lanes, tech, carries):
            arr.flags.writeable = False
        return EdgeArrays(u=u, v=v, bandwidth=bw, latency=lat, lanes=lanes, tech=tech,
                          carries=carries)

    @cached_property
    def loadstore_domains(self):
        """Load/store domain of every node (-1 for a NIC); see :func:`fabric.loadstore_domains`."""
        from ._transport import loadstore_domains

        return loadstore_domains(self)

    @cached_property
    def host_of(self):
        """Chip -> host domain name."""
        return {n: h for h, chips in self.domains.items() for n in chips}

    def node(self, x, what=None):
        """Resolve ``x`` to a node: a node of the graph, a rank (int), or ``"rank:N"``.

        Ranks are stable: on a degraded fabric rank ``r`` is still the chip that had
        it on the intact one. ``what`` (a non-empty str) names the argument ``x`` was given
        as (``"src"``), for the message of a call that takes two nodes
        (:func:`fabric.route`, :func:`fabric.access_to`, :func:`fabric.reach`).

        Raises
        ------
        NodeError
            If ``x`` names no node and no rank, or names a failed chip (by name or
            rank): the message says it failed.
        """
        failed = self.failures.ranks
        at = self.name
        if what is not None:        # a label of the message: text, and some ('' said ': : ')
            if not text_of(what, "what").strip():     # ('' wrote ': : ', '  ' ':   :')
                raise SpecError(f"what must name the argument x was given as, got "
                                f"{show_value(what)}")
            at = f"{at}: {what}"
        if isinstance(x, str) and x in self.graph:
            # the name as a str (numpy's str_ was kept: failures.ranks then quoted
            # np.str_('chip4'))
            return x if type(x) is str else str(x)
        if isinstance(x, str):
            # a failed node's name is read as that name, as it was while the node lived: a
            # chip named "2" (rank 1) that failed is not rank 2's chip
            if x in failed:
                raise NodeError(f"{at}: {x} (rank {failed[x]}) has failed")
            if x in self.failures.nodes:
                raise NodeError(f"{at}: {x} has failed")
            text = x.removeprefix("rank:")
            if is_numeral(text) and not text.startswith("-"):
                x = int(text)
            elif x in self.domains:         # route, latency, cost --ranks, --fail-chip
                raise NodeError(f"{at}: {show_value(x)} is a host domain, not a node (the "
                                f"model has no host nodes): name its chips "
                                f"({name_list(self.domains[x])})")
            elif self.intact is not None and x in self.intact.domains:     # every chip failed
                raise NodeError(f"{at}: {show_value(x)} is a host domain whose chips have "
                                f"all failed ({name_list(self.intact.domains[x])})")
            else:
                raise NodeError(f"{at}: no node called {show_value(x)}")
        if is_int(x):
            x = int(x)
            node = self._node_of_rank.get(x)
            if node is not None:
                return node
            for chip, r in failed.items():
                if r == x:
                    raise NodeError(f"{at}: rank {x} ({chip}) has failed")
            # a node named by this int past the ranks (from_graph keeps it) is not reached by
            # it: an int is a rank (fabric._errors); say so rather than only "out of range"
            named = (f" (an int is read as a rank, so it does not name node {x}: relabel the "
                     "graph's nodes with strings)" if x in self.graph else "")
            raise NodeError(f"{at}: rank {show_value(x)} is out of range "
                            f"0..{self.n_ranks - 1}{named}")
        try:
            if x in self.graph:
                return x
            dead = x in failed or x in self.failures.nodes
        except TypeError:
            dead = False
        if dead:
            raise NodeError(f"{at}: {show_value(x)} has failed")
        raise NodeError(f"{at}: no node called {show_value(x)}")

    # -- routing (fabric/_routing.py, fabric/_failures.py) -----------------------------

    @cached_property
    def router(self):
        """The :class:`~fabric.Router` for this fabric's default routing policy (cached)."""
        from ._routing import Router

        return Router(self)

    def route(self, src, dst):
        """The path from ``src`` to ``dst`` (names or ranks); see :func:`fabric.route`."""
        from ._routing import route

        return route(self, src, dst)

    def without(self, links=(), chips=(), lanes=()):
        """A degraded copy with failed links, chips and lanes; see :func:`fabric.without`."""
        from ._failures import without

        return without(self, links=links, chips=chips, lanes=lanes)

    # -- addressing (fabric/_address.py, _domains.py, _symmetric.py) -------------------

    @cached_property
    def plan(self):
        """The :class:`~fabric.AddressPlan` in force: :attr:`address_plan`, or the default
        plan ``AddressPlan()`` when that is None (checked when the fabric was made).

        >>> import topologies
        >>> from fabric import AddressPlan
        >>> topologies.build("torus:4x4").plan == AddressPlan()
        True
        """
        from ._plan import AddressPlan

        return AddressPlan() if self.address_plan is None else self.address_plan

    @cached_property
    def address_map(self):
        """The global :class:`~fabric.AddressMap` of :attr:`plan` (cached).

        Raises :class:`~fabric.AddressMapError` naming every fault of an invalid plan;
        :func:`fabric.check` lists them as findings instead.
        """
        from ._plan import plan_regions

        return plan_regions(self, self.plan)

    @cached_property
    def host_domains(self):
        """Host domain name -> :class:`~fabric.HostDomain` (windows, grants, translator).

        A :class:`~fabric.HostDomains` mapping: each host's domain is built, and its
        windows checked, the first time it is looked up, in time and memory
        proportional to that host's windows.
        """
        from ._domains import build_domains
        from ._plan import placed_chips, placed_domains

        plan = self.plan
        return build_domains(self, self.address_map, plan, placed_chips(self, plan),
                             placed_domains(self, plan))

    @cached_property
    def symmetric_memory(self):
        """The plan's :class:`~fabric.SymmetricMemory`, or None when it has no heap."""
        from ._symmetric import build_symmetric

        return build_symmetric(self, self.address_map, self.plan)

    def translate(self, host, local_address, op="read"):
        """Translate ``host``'s local address to a :class:`~fabric.Translation`.

        Raises :class:`~fabric.TranslationError` for an address in no window or an
        access not granted; see :meth:`fabric.HostDomain.translate`.

        >>> import topologies
        >>> t = topologies.build("sd200-ultra").translate("host1", 0x80_0000_1000)
        >>> t.owner, hex(t.global_address)     # host1's first shadow window: chip0
        ('chip0', '0x1000')
        """
        from ._domains import domain_of

        return domain_of(self, host).translate(local_address, op)   # NodeError naming the hosts

    def translate_many(self, host, local_addresses, op="read", *, unmapped="raise"):
        """Vectorized :meth:`translate` of a numpy array; see
        :meth:`fabric.HostDomain.translate_many`."""
        from ._domains import domain_of

        return domain_of(self, host).translate_many(local_addresses, op, unmapped=unmapped)

