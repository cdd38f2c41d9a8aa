"""Lower bounds on a collective's transfer time beyond one rank's links: cuts and flows.

:func:`analysis.cost` reports the largest lower bound the model can prove for the
fabric and the operation. Besides every rank's own links (the injection bound, in
:mod:`analysis._collectives`) two more are proved here, both over the links' raw
bandwidths:

* **host cuts**. Merge every chip of one host domain, with the NICs and switches
  that serve only that host's chips, into one node: whatever an algorithm does, the
  bytes that must cross the links leaving it give a time. Per direction, with
  ``h`` hosts each holding ``k`` of the group's ``p`` ranks: reduce-scatter
  ``(p-k)/p n`` out (the others' blocks need this host's contribution, which it may
  pre-reduce) and ``(p-k)/p n`` in; all-gather ``(p-k)/p n`` in and ``k/p n`` out;
  all-to-all ``k (p-k)/p n`` each way; broadcast and reduce ``n``; all-reduce
  ``2 (h-1)/h n`` each way when every host holds the same number of ranks (the
  hosts are then ``h`` nodes of an all-reduce, and each node of an all-reduce must
  send and receive ``2 (h-1)/h n``: Patarasuk and Yuan, J. Parallel Distrib.
  Comput. 69(2), 2009), else ``n`` (two parties: the host and the rest). Without
  in-network reduction; with it, all-reduce needs ``n`` each way.
* **max-concurrent-flow** (all-to-all, all-to-allv): the time the throughput LP
  (:func:`analysis.throughput`) proves for the operation's traffic matrix, routing
  being free. Solved when it is cheap: by the one-commodity reduction on
  chip-transitive fabrics, or a general LP of at most :data:`MAX_FLOW_VARIABLES`
  variables; otherwise omitted (the bound is then the injection and cut bounds).

Both are cached per fabric and group and scale linearly with the size.

Examples
--------
>>> import topologies
>>> f = topologies.build("cluster-128")
>>> per_byte = cut_seconds_per_byte(f, f.endpoint_indices, "all-reduce")
>>> round(per_byte * 2**30 * 1e3, 3)      # 2 (15/16) GiB over 8 NICs of 50 GB/s
5.033
"""

import weakref

import numpy as np

from fabric import FabricError

from ._throughput import throughput
from ._traffic import traffic as traffic_matrix

__all__ = []

#: Largest general throughput LP solved for a bound (variables; about a second on 2 cores).
MAX_FLOW_VARIABLES = 10_000

_CACHE = weakref.WeakKeyDictionary()


def _cache(fabric):
    c = _CACHE.get(fabric)
    if c is None:
        c = _CACHE[fabric] = {}
    return c


def _host_sets(fabric, idx):
    """Per host domain of the group: (node-index set merged with it, ranks it holds)."""
    G = fabric.graph
    nodes = fabric.nodes
    ni = fabric.node_index
    host_of = fabric.host_of
    group = {int(i) for i in idx}
    hosts = {}
    for i in idx:
        hosts.setdefault(host_of.get(nodes[int(i)]), set()).add(int(i))
    if None in hosts or len(hosts) < 2:
        return []
    owner = {i: h for h, members in hosts.items() for i in members}
    chips = {ni[n] for n, k in G.nodes(data="kind") if k == "chip"}
    out = {h: set(m) for h, m in hosts.items()}
    # a NIC or switch all of whose chip neighbours are of one host serves only that host;
    # one step further (a switch whose neighbours are such NICs) is left out: any set
    # holding the host's ranks and no other rank gives a valid cut
    for n in G.nodes:
        x = ni[n]
        if x in chips:
            continue
        mine = {owner.get(ni[m], "other") if ni[m] in group else
                ("chip" if ni[m] in chips else None) for m in G[n]}
        mine.discard(None)
        if len(mine) == 1:
            h = mine.pop()
            if h in out:
                out[h].add(x)
    return [(out[h], len(hosts[h])) for h in hosts]


def _cut_capacity(fabric, members):
    """Raw bytes/s out of and into a node set (edge bandwidth is per direction)."""
    ea = fabric.edge_arrays
    inside = np.zeros(len(fabric.nodes), dtype=bool)
    inside[list(members)] = True
    cross = inside[ea.u] != inside[ea.v]
    return float(np.asarray(ea.bandwidth, dtype=float)[cross].sum())


def cut_seconds_per_byte(fabric, idx, op, in_network=False):
    """Largest host-cut bound on ``op``'s transfer, seconds per byte of size (module doc).

    0 when the group lies in one host domain or some rank has none.
    """
    key = ("cut", np.asarray(idx).tobytes(), op, in_network)
    c = _cache(fabric)
    if key in c:
        return c[key]
    p = len(idx)
    sets = _host_sets(fabric, idx)
    h = len(sets)
    equal = h >= 2 and len({k for _, k in sets}) == 1
    best = 0.0
    for members, k in sets:
        cap = _cut_capacity(fabric, members)
        if cap <= 0:
            continue
        if op == "all-reduce":
            need = 1.0 if in_network else (2 * (h - 1) / h if equal else 1.0)
        elif op in ("reduce-scatter", "all-gather"):
            need = (p - k) / p
        elif op == "all-to-all":
            need = k * (p - k) / p
        elif op in ("broadcast", "reduce"):
            need = 1.0
        else:
            need = 0.0
        best = max(best, need / cap)
    c[key] = best
    return best


def flow_seconds_per_byte(fabric, idx, traffic=None):
    """Max-concurrent-flow time of all-to-all (or of ``traffic``) per byte of size, or 0.

    ``traffic``: a ``p x p`` matrix of fractions of the size (all-to-allv); default
    uniform all-to-all (``1/p`` of the size from every rank to every other).
    """
    tkey = None if traffic is None else np.ascontiguousarray(traffic, dtype=float).tobytes()
    key = ("flow", np.asarray(idx).tobytes(), tkey)
    c = _cache(fabric)
    if key in c:
        return c[key]
    p = len(idx)
    rank = {int(x): r for r, x in enumerate(fabric.endpoint_indices)}
    pos = np.array([rank.get(int(x), -1) for x in idx], dtype=np.int64)
    if p < 2 or (pos < 0).any():
        c[key] = 0.0
        return 0.0
    n = fabric.n_endpoints
    M = np.zeros((n, n))
    if traffic is None and p == n:
        M = traffic_matrix(fabric, "all-to-all", 1.0 / p)  # uniform: the symmetric LP applies
    elif traffic is None:
        block = np.full((p, p), 1.0 / p)
    else:
        block = np.array(traffic, dtype=float)
    if isinstance(M, np.ndarray):
        np.fill_diagonal(block, 0.0)
        M[np.ix_(pos, pos)] = block
    try:
        res = throughput(fabric, M, max_variables=MAX_FLOW_VARIABLES,
                         method="auto" if traffic is None else "lp")
        got = float(res.time)
    except (ValueError, FabricError):
        got = 0.0  # too large to solve here, or not routable: no flow bound
    c[key] = got
    return got
