"""Routing by address: per-node forwarding tables from address ranges to output ports.

Every node that forwards (chips in direct networks, switches, NICs) holds a
table: address range -> the output ports (directed links, contract numbering)
that lead towards the owner of that range. The tables are derived from the
fabric's address map (:attr:`Fabric.address_map`, public API only) and its
routing policy, so that following them hop by hop delivers a transaction along
exactly the path :func:`fabric.route` returns:

* a range is forwarded towards the node that owns it (a host's DRAM, the model
  having no host nodes, is local at every chip of that host and forwarded from
  any other node towards the live chip of that host nearest it, the first at a
  tie: :func:`fabric._access.target_node`; interleave sets are decoded into one
  target per granule at the requester and take no entries);
* the ports of an entry are the first links of the policy's equal-cost paths
  from this node to the owner, in the policy's order; where there are several,
  a transaction takes the one a hash of (source, destination, this node)
  picks (the same hash :meth:`Router.path` uses), except under dimension-order
  routing, which takes the first (the ``+`` way at a ring's tie);
* adjacent ranges (in address order) with the same ports merge into one entry,
  so a node's table size is the number of distinct runs.

Under the default owner-bits plan chip ``r``'s memory starts at ``r << k`` and
on a hyper-mesh whose sides are powers of two the owner ID's bits are the
chip's coordinates; dimension-order routing then needs, per node, only one
small table per dimension (the coordinate in that dimension -> port):
``sum(shape)`` entries instead of one per chip (:attr:`ForwardingTables.per_dimension_entries`).

Examples
--------
>>> import topologies
>>> f = topologies.build("sd200-ultra")
>>> ft = forwarding_tables(f)
>>> ft.max_entries, ft.per_dimension_entries   # flat: 128 chips + 16 hosts; per dimension
(144, 32)
>>> addr = f.address_map.global_address("chip127", 0)
>>> ft.forward("chip0", addr) == f.route("chip0", "chip127")
True
"""

import dataclasses

import numpy as np

from ._access import nearest, target_node, whole_set
from ._errors import AddressMapError, RoutingError
from ._fabric_arg import fabric_arg
from ._routing_engine import flow_hash
from ._structure import Grid

__all__ = ["ForwardingTable", "ForwardingTables", "forwarding_tables"]

# Above this many routing states the all-pairs state distances (S x S) are refused.
_MAX_STATES = 20_000


@dataclasses.dataclass(frozen=True)
class ForwardingTable:
    """One node's table: ``entries`` of ``(base, end, ports)``, sorted, end exclusive.

    ``ports`` is a tuple of directed links; ``()`` means the range is local
    (this node is its target).
    """

    node: object
    entries: tuple

    def __len__(self):
        return len(self.entries)

    def lookup(self, address):
        """The ports for ``address``; AddressMapError if no entry holds it."""
        bases = [e[0] for e in self.entries]
        i = int(np.searchsorted(bases, address, side="right")) - 1
        if i < 0 or address >= self.entries[i][1]:
            raise AddressMapError(f"node {self.node!r} has no forwarding entry for address "
                                  f"{address:#x}")
        return self.entries[i][2]


@dataclasses.dataclass(frozen=True, eq=False)
class ForwardingTables:
    """The forwarding tables of every node of a fabric.

    Attributes
    ----------
    fabric : Fabric
    tables : dict
        Node -> :class:`ForwardingTable`.
    policy : str
    per_dimension : dict or None
        Under dimension-order routing with the owner-bits plan on a grid of
        power-of-two sides: node -> tuple over dimensions of dicts
        ``coordinate -> ports``; otherwise None.
    owner_shift : int or None
        ``k`` of the owner-bits plan (chip ``r``'s memory at ``r << k``), if it holds.
    """

    fabric: object
    tables: dict
    policy: str
    per_dimension: dict = None
    owner_shift: int = None
    extra_entries: int = 0

    @property
    def sizes(self):
        """Node -> number of (merged) entries."""
        return {n: len(t) for n, t in self.tables.items()}

    @property
    def max_entries(self):
        return max(self.sizes.values(), default=0)

    @property
    def total_entries(self):
        return sum(self.sizes.values())

    @property
    def per_dimension_entries(self):
        """Entries per node with per-dimension tables (sum of the sides, plus the
        merged entries for non-chip ranges such as host DRAM), or None."""
        if self.per_dimension is None:
            return None
        shape = self.fabric.structure.shape
        return int(sum(shape)) + self.extra_entries

    def lookup_per_dimension(self, node, address):
        """Ports at ``node`` for ``address`` with the per-dimension tables.

        A chip's own memory is decoded by the owner-bits shift and looked up per
        dimension; the ranges that are not a chip's memory (host DRAM, NIC registers)
        keep flat entries (:attr:`per_dimension_entries` counts them) and are looked up
        there, and an address in an interleave set is decoded to the owner of its
        granule first, as :meth:`forward` does.

        Raises
        ------
        RoutingError
            Without per-dimension tables, or for an address in an interleave set a member
            of which has failed (:func:`fabric._access.whole_set`).
        AddressMapError
            If no region holds the address.
        """
        if self.per_dimension is None:
            raise RoutingError("per-dimension tables need dimension-order routing on a grid "
                               "of power-of-two sides and the owner-bits plan")
        f = self.fabric
        amap = f.address_map
        loc = amap.lookup(address)
        address = loc.address       # as read: '0x10' is 16
        reg = amap.region(loc.region)
        whole_set(f, reg, address)
        key = address
        if reg.ways > 1:
            target = target_node(f, loc.owner, node)
            key = self._entry_address(target)
            reg = amap.lookup(key)
            reg = amap.region(reg.region)
        owner = key >> self.owner_shift
        if not (reg.ways == 1 and f.rank_of.get(reg.owner) == owner):
            return self.tables[node].lookup(key)        # not a chip's memory: flat entries
        shape = f.structure.shape
        here = f.graph.nodes[node].get("coord")
        bits = 0
        for d, s in enumerate(shape):
            c = (owner >> bits) & (s - 1)
            bits += int(s).bit_length() - 1
            if here is None or c != here[d]:
                return self.per_dimension[node][d][c]
        return ()

    def _entry_address(self, target):
        """An address of a plain range served by node ``target`` (its entries lead there)."""
        f = self.fabric
        for reg in f.address_map.regions:
            if reg.ways != 1:
                continue
            try:
                if target_node(f, reg.owner) == target:
                    return reg.base
            except (RoutingError, AddressMapError):
                continue
        raise RoutingError(f"{f.name}: no forwarding entry leads to {target!r} (it serves no "
                           "plain address range)")

    def forward(self, src, address, max_hops=None):
        """Follow the tables hop by hop from ``src``; return the nodes visited.

        An address in an interleave set is decoded at ``src`` to the owner of its
        granule, and the walk then follows the entries of that owner's own memory; a set
        one of whose members has failed is gone as a whole (:func:`fabric._access.whole_set`).

        Raises
        ------
        RoutingError
            If a table has no port towards the address (no route: a degraded fabric),
            or the walk loops, or the address lies in an interleave set a member of which
            has failed. The walk ends only at the address's owner.
        """
        f = self.fabric
        a = f.node(src)
        amap = f.address_map
        loc = amap.lookup(address)
        address = loc.address       # as read: '0x10' is 16
        whole_set(f, amap.region(loc.region), address)
        target = target_node(f, loc.owner, a)
        plain = amap.region(loc.region).ways == 1
        host = f.domains.get(loc.owner, ()) if plain and loc.owner not in f.graph else ()
        key = address
        if amap.region(loc.region).ways > 1:
            # an interleave set takes no entries: the requester decodes the granule's owner
            # (module docstring) and the transaction follows that owner's own entries
            key = self._entry_address(target)
        idx = f.node_index
        s, t = idx[a], idx[target]
        r = f.router
        path = [a]
        limit = max_hops or len(f.nodes)
        cur = a
        for _ in range(limit + 1):
            try:
                ports = self.tables[cur].lookup(key)
            except AddressMapError:
                ports = None
            if not ports:
                if ports is not None and (cur == target or cur in host):
                    return path     # the owner, or a chip of the host whose DRAM it is
                # No entry, or a local one short of the owner (a range no route reaches
                # is left out and its neighbours' entries merge over it): no route on a
                # degraded fabric, never an arrival at the wrong node.
                raise RoutingError(f"{f.name}: no route from {a!r} to {target!r} (address "
                                   f"{address:#x}): the tables lose it at {cur!r}"
                                   f"{f.failures.explain(a, target)}")
            if len(ports) == 1 or self.policy == "dimension-order":
                port = ports[0]
            else:
                k = r._engine.key       # the router's own hash keys (intact indices)
                port = ports[int(flow_hash(k[s], k[t], k[idx[cur]])[()] % np.uint64(len(ports)))]
            cur = f.nodes[int(r.link_head[port])]
            path.append(cur)
        try:
            f.route(a, target)
        except RoutingError:
            # no route: the entries merged over the range that none reaches send it round
            raise RoutingError(f"{f.name}: no route from {a!r} to {target!r} (address "
                               f"{address:#x}): the tables loop on it"
                               f"{f.failures.explain(a, target)}") from None
        raise RoutingError(f"{f.name}: forwarding from {a!r} to {address:#x} loops")


def _owner_shift(fabric, amap):
    """``k`` if every chip r's memory starts at ``r << k`` (the owner-bits plan), else None."""
    bases = []
    for r, chip in enumerate(fabric.endpoints):
        regs = [g for g in amap.regions_of(chip) if g.ways == 1]
        if len(regs) != 1:
            return None
        bases.append(regs[0].base)
    if len(bases) < 2 or bases[1] <= 0 or bases[1] & (bases[1] - 1):
        return None
    k = int(bases[1]).bit_length() - 1
    if any(b != r << k for r, b in enumerate(bases)):
        return None
    return k


def _serving(v, group, lat):
    """The node of ``group`` (node indices: a host's live chips in domain order, or one
    owner) that serves its range at node ``v``: ``v`` itself if it is one of them, else
    the nearest that ``v`` has a route to (``lat``: path latency by (node, chip), the rule
    of :func:`fabric._access.target_node`), else the first (no route: no entry)."""
    if v in group:
        return v
    if len(group) == 1:
        return group[0]
    cands = [t for t in group if (v, t) in lat]
    if not cands:
        return group[0]
    return cands[nearest([lat[v, t] for t in cands])]


def _host_latencies(fabric, nodes, ranges, hops):
    """Path latency from each node to each chip of a host of two or more chips that the
    routing policy routes it to (the hosts' DRAM ranges), by ``(node, chip)``."""
    chips = sorted({t for _, _, g, _ in ranges if len(g) > 1 for t in g})
    pairs = [(v, t) for v in nodes for t in chips if v != t and hops.get((v, t)) is not None]
    if not pairs:
        return {}
    s, d = np.array(pairs, dtype=np.int64).T
    r = fabric.router
    ok = r.reachable(s, d)          # a next hop from a node need not be a route from it
    pairs = [p for p, k in zip(pairs, ok.tolist(), strict=True) if k]
    return dict(zip(pairs, r.latency(s[ok], d[ok]).tolist(), strict=True)) if pairs else {}


def _tables(fabric, nodes, targets, ranges, hops, lat):
    """Each node's table: the ranges in address order, equal next hops merged into one entry.

    A range whose target has no route from the node gets no entry (the entries on
    either side of it may then merge). Next hops are read once per (node, target)
    and interned, so the merging runs on integer ids.
    """
    ids = {None: -1, (): 0}
    ports = [None, ()]
    tpos = {t: j for j, t in enumerate(targets)}
    groups = [g for _, _, g, _ in ranges]
    rt0 = np.array([tpos[g[0]] for g in groups], dtype=np.int64)
    many = {}                       # host DRAM: the target depends on the node
    for k, g in enumerate(groups):
        if len(g) > 1:
            many.setdefault(g, []).append(k)
    base = [b for b, _, _, _ in ranges]
    end = [e for _, e, _, _ in ranges]
    tables = {}
    for v in nodes:
        rt = rt0
        for g, at in many.items():
            t = _serving(v, g, lat)
            if t != g[0]:
                if rt is rt0:
                    rt = rt0.copy()
                rt[at] = tpos[t]
        got = [hops.get((v, t)) for t in targets]
        if v in tpos:
            got[tpos[v]] = ()
        row = [ids.get(p, -2) for p in got]
        for j in [j for j, i in enumerate(row) if i == -2]:  # next hops not seen before
            p = got[j]
            i = ids.get(p)
            if i is None:
                i = ids[p] = len(ports) - 1
                ports.append(p)
            row[j] = i
        per = np.asarray(row, dtype=np.int64)[rt]
        keep = np.flatnonzero(per >= 0)
        if len(keep):
            pk = per[keep]
            start = np.flatnonzero(np.r_[True, pk[1:] != pk[:-1]])
            last = np.r_[start[1:], len(pk)] - 1
            entries = tuple((base[keep[a]], end[keep[b]], ports[pk[a] + 1])
                            for a, b in zip(start.tolist(), last.tolist()))
        else:
            entries = ()
        tables[fabric.nodes[v]] = ForwardingTable(node=fabric.nodes[v], entries=entries)
    return tables


def forwarding_tables(fabric):
    """Derive every node's forwarding table from the address map and the routing policy.

    Parameters
    ----------
    fabric : Fabric
        Intact fabrics, or degraded ones under up/down routing; on a degraded
        hyper-mesh or dragonfly the detours depend on the source, which
        destination tables cannot express, so it is refused.

    Returns
    -------
    ForwardingTables

    Raises
    ------
    RoutingError
        For a degraded fabric under dimension-order or minimal routing, or a
        fabric too large for the all-pairs state distances.
    AddressMapError
        If the fabric has no valid address map.

    Examples
    --------
    >>> import topologies
    >>> t = forwarding_tables(topologies.build("sd200-ultra"))
    >>> t.policy, t.max_entries          # entries of the largest table (one per chip)
    ('dimension-order', 144)
    """
    fabric = fabric_arg(fabric)
    r = fabric.router
    if not r.destination_routed:
        raise RoutingError(f"{fabric.name}: forwarding tables for a degraded {r.policy} "
                           "fabric are not derived (its detours depend on the source)")
    amap = fabric.address_map
    idx = fabric.node_index
    ranges = []  # (base, end, target node index)
    for reg in amap.regions:
        if reg.ways != 1:
            continue
        try:
            target = target_node(fabric, reg.owner)
        except RoutingError:
            continue  # memory of a failed chip (or of a host left without one): no entry
        # a host's DRAM: local at each of its chips, else towards the first it reaches
        group = (tuple(idx[c] for c in fabric.domains[reg.owner])
                 if reg.owner not in fabric.graph and reg.owner in fabric.domains
                 else (idx[target],))
        ranges.append((reg.base, reg.base + reg.size, group, reg.owner in fabric.rank_of))
    ranges.sort()
    targets = sorted({t for _, _, group, _ in ranges for t in group})
    nodes = list(range(len(fabric.nodes)))
    hops = r.next_hops(nodes, targets, max_states=_MAX_STATES)
    lat = _host_latencies(fabric, nodes, ranges, hops)
    tables = _tables(fabric, nodes, targets, ranges, hops, lat)
    per_dim, extra = None, 0
    shape = fabric.structure.shape if isinstance(fabric.structure, Grid) else ()
    # the owner-bits test reads every chip's regions: only where it can matter
    k = _owner_shift(fabric, amap) if r.policy == "dimension-order" else None
    if (r.policy == "dimension-order" and k is not None
            and all(c in ("ring", "line", "full") for c in fabric.structure.connect)
            and all(s & (s - 1) == 0 for s in shape)):
        # every forwarding node is a chip; its table for dimension d maps the destination's
        # coordinate in d to the first hop towards any chip that differs from it first in d
        per_dim = {}
        at = {tuple(c): idx[u] for u, c in fabric.graph.nodes(data="coord")
              if c is not None and fabric.graph.nodes[u].get("kind") == "chip"}
        for v in fabric.endpoint_indices.tolist():
            here = list(fabric.graph.nodes[fabric.nodes[v]]["coord"])
            dims = []
            for d, side in enumerate(shape):
                table = {}
                for c in range(side):
                    coord = list(here)
                    coord[d] = c
                    tn = at.get(tuple(coord), -1)
                    table[c] = () if tn == v else hops.get((v, tn), ())
                dims.append(table)
            per_dim[fabric.nodes[v]] = tuple(dims)
        # ranges not owned by chips (host DRAM, NIC registers) keep flat entries
        for v in fabric.endpoint_indices.tolist():
            runs, last = 0, object()
            for _, _, group, is_chip in ranges:
                if is_chip:
                    continue
                t = _serving(v, group, lat)
                ports = () if t == v else hops.get((v, t))
                runs += ports != last
                last = ports
            extra = max(extra, runs)
    return ForwardingTables(fabric=fabric, tables=tables, policy=r.policy, per_dimension=per_dim,
                            owner_shift=k, extra_entries=extra)
