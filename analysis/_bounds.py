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
  pre-reduce) and ``k/p n`` in (its own blocks need everyone else's); all-gather
  ``(p-k)/p n`` in and ``k/p n`` out (each of its blocks leaves at least once);
  all-to-all ``k (p-k)/p n`` each way; broadcast and reduce ``n``; all-reduce
  ``2 (h-1)/h n`` each way when every host holds the same number of ranks and every
  host's cut has the same capacity (the hosts are then ``h`` equal nodes of an
  all-reduce, which together must move ``2 (h-1) n``: Patarasuk and Yuan, J. Parallel
  Distrib. Comput. 69(2), 2009); with unequal cuts (a degraded fabric) the larger of
  ``n`` over the smallest cut (a host must send its pre-reduced data and receive
  the result) and ``2 (h-1) n`` over the cuts' sum; else ``n`` (two parties: the
  host and the rest). Without in-network reduction; with it, all-reduce needs ``n``
  each way.
* **grid cuts**: on a hyper-mesh, torus or mesh, the chips below a coordinate on one
  dimension against the rest, for every dimension and coordinate (the bisection among
  them), with the same bytes per direction (all-reduce: ``n``, two parties).
* **max-concurrent-flow** (all-to-all, all-to-allv): the time the throughput LP
  (:func:`analysis.throughput`) proves for the operation's traffic matrix, routing
  being free. Solved when it is cheap: by the one-commodity reduction on
  chip-transitive fabrics, or a general LP of at most :data:`MAX_FLOW_VARIABLES`
  variables; otherwise omitted (the bound is then the injection and cut bounds).

Both are cached per fabric and group and scale linearly with the size. Sources:
docs/sources.md s.6.

Examples
--------
>>> import topologies
>>> f = topologies.build("cluster-128")
>>> per_byte = cut_seconds_per_byte(f, f.endpoint_indices, "all-reduce")
>>> round(per_byte * 2**30 * 1e3, 3)      # 2 (15/16) GiB over 8 NICs of 50 GB/s
5.033
"""


import numpy as np

from fabric import FabricError
from fabric._memo import fabric_memo

from ._throughput import throughput
from ._traffic import traffic as traffic_matrix

__all__ = []

#: Largest general throughput LP solved for a bound (variables; about a second on 2 cores).
MAX_FLOW_VARIABLES = 10_000


def _host_cuts(fabric, idx):
    """Per host domain of the group: (raw bytes/s leaving it, ranks it holds).

    A host's side of the cut is its ranks plus every NIC or switch all of whose chip
    neighbours are its own ranks (its NVSwitches and NICs); one step further (a switch
    whose neighbours are such NICs) is left out: any node set holding the host's ranks
    and no other rank gives a valid cut. Edge bandwidth is per direction, so the
    capacity is the same out and in.
    """
    G = fabric.graph
    nodes = fabric.nodes
    host_of = fabric.host_of
    hosts = {}
    for i in idx:
        hosts.setdefault(host_of.get(nodes[int(i)]), []).append(int(i))
    if None in hosts or len(hosts) < 2:
        return []
    label = np.full(len(nodes), -1, dtype=np.int64)
    names = list(hosts)
    for h, members in enumerate(hosts.values()):
        label[members] = h
    chip = np.array([k == "chip" for _, k in G.nodes(data="kind")], dtype=bool)
    ea = fabric.edge_arrays
    u, v = np.asarray(ea.u), np.asarray(ea.v)
    # non-chip nodes whose chip neighbours are all ranks of one host (and at least one)
    lo = np.full(len(nodes), np.iinfo(np.int64).max)
    hi = np.full(len(nodes), -2)
    for a, b in ((u, v), (v, u)):
        m = chip[b] & ~chip[a]
        lb = np.where(label[b[m]] >= 0, label[b[m]], -3)  # a chip outside the group: no host
        np.minimum.at(lo, a[m], lb)
        np.maximum.at(hi, a[m], lb)
    own = ~chip & (lo == hi) & (hi >= 0)
    label[own] = hi[own]
    bw = np.asarray(ea.bandwidth, dtype=float)
    cross = label[u] != label[v]
    cap = np.zeros(len(names))
    for a in (u, v):
        m = cross & (label[a] >= 0)
        np.add.at(cap, label[a[m]], bw[m])
    return [(float(cap[h]), len(hosts[names[h]])) for h in range(len(names))]


def _grid_cuts(fabric, idx):
    """Cuts of a grid across each dimension: (raw bytes/s across, ranks on the low side).

    For every dimension ``d`` and threshold ``c`` (``1 <= c < s_d``), the chips with
    coordinate ``< c`` on ``d`` against everything else (switches on the high side: any
    partition is a valid cut). Hyper-meshes, tori and meshes with chip coordinates only.
    """
    shape = fabric.params.get("shape") if fabric.family == "hypermesh" else None
    if not shape:
        return []
    G = fabric.graph
    coords = [G.nodes[n].get("coord") for n in fabric.nodes]
    chip = np.array([c is not None for c in coords])
    if not chip[np.asarray(idx)].all():
        return []
    C = np.array([c if c is not None else (0,) * len(shape) for c in coords], dtype=np.int64)
    ea = fabric.edge_arrays
    u, v = np.asarray(ea.u), np.asarray(ea.v)
    bw = np.asarray(ea.bandwidth, dtype=float)
    in_group = np.zeros(len(coords), dtype=bool)
    in_group[np.asarray(idx)] = True
    out = []
    for d, s in enumerate(shape):
        for c in range(1, int(s)):
            low = chip & (C[:, d] < c)
            k = int((low & in_group).sum())
            if 0 < k < len(idx):
                out.append((float(bw[low[u] != low[v]].sum()), k))
    return out


def cut_seconds_per_byte(fabric, idx, op, in_network=False):
    """Largest host-cut or grid-cut bound on ``op``'s transfer, seconds per byte of size
    (module doc); 0 when no cut applies (one host domain and no grid).
    """
    key = ("cut", np.asarray(idx).tobytes(), op, in_network)
    c = fabric_memo(fabric, __name__)
    if key in c:
        return c[key]
    p = len(idx)
    cuts = _host_cuts(fabric, idx)
    h = len(cuts)
    equal = h >= 2 and len({k for _, k in cuts}) == 1
    # Patarasuk and Yuan's 2 (h-1)/h n per node holds for every node only when the
    # nodes' capacities are equal: the sum over the h nodes is what must move, so with
    # unequal cuts (a degraded fabric) a node may send and receive only n (its
    # pre-reduced data out, the result in) and the bound is the larger of n over the
    # smallest cut and 2 (h-1) n over the cuts' sum.
    same = len({cap for cap, _ in cuts}) == 1
    two_party = [(cap, k, True) for cap, k in _grid_cuts(fabric, idx)]
    best = 0.0
    if op == "all-reduce" and equal and not in_network and not same:
        total = sum(cap for cap, _ in cuts)
        best = 2 * (h - 1) / total if total > 0 else 0.0
    for cap, k, halves in [(cap, k, False) for cap, k in cuts] + two_party:
        if cap <= 0:
            continue
        if op == "all-reduce":
            need = 1.0 if in_network or halves or not equal or not same else 2 * (h - 1) / h
        elif op in ("reduce-scatter", "all-gather"):
            need = max(p - k, k) / p
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
    c = fabric_memo(fabric, __name__)
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
