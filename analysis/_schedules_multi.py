"""Collectives that keep every link of a direct network busy: multi-ring, concurrent
multi-dimensional, and Swing.

These algorithms read the fabric (its graph, its grid, its router) to build their
schedule; like every algorithm they are :class:`~analysis.Schedule` objects of steps of
flows, evaluated by :func:`analysis.cost` through a transport and a runtime.

``multi-ring``
    ``k`` edge-disjoint Hamiltonian cycles of the group's chip-to-chip links, found by
    :func:`ring_search`, each run in both directions at once (a ring all-reduce per
    directed ring), each directed ring carrying a share of the data in proportion to
    its bottleneck bandwidth. Broadcast and reduce pipeline chunks along every directed
    ring opened at the root (rank 0). This is what NCCL does with its channels: it searches the
    topology graph for rings over the NVLinks (``src/graph/search.cc``) and runs one
    ring per channel, rings in both directions where the links allow. A group whose
    chips have no direct links to each other (NVSwitch planes, a fat-tree) gets one ring
    through the switches in locality order (host by host, see :func:`ring_search`), run
    in both directions.

``multi-dimensional``
    Reduce-scatter, all-gather, all-reduce and all-to-all on a grid (hyper-mesh,
    torus, mesh, mixed; or a cluster's two levels, inside hosts and across hosts)
    with the data split over *dimension orders*: a part that reduces along dimension
    0, then 1, then 2 runs at the same time as a part that starts on dimension 1, so
    every dimension's links work at once. The share of each order is chosen by a
    small linear program so that, phase by phase, the busiest dimension finishes as
    early as possible given each dimension's routed bandwidth (the load balancing of
    Themis, Rashidi et al., ISCA 2022, solved exactly for this phase structure).
    Within a phase a dimension runs as :func:`analysis.schedule`'s hierarchical
    algorithm does: direct on fully connected or switched lines, a bidirectional ring
    on rings (TPU tori), a ring along lines.

``swing``
    Swing all-reduce on tori (De Sensi et al., NSDI 2024): the bandwidth-optimal
    variant (reduce-scatter by halving, all-gather by doubling) in which, at step
    ``s`` of a dimension, rank ``r`` exchanges with the peer at signed distance
    ``rho(s) = (1 - (-2)^(s+1)) / 3`` (1, -1, 3, -5, 11, ...), added for even
    coordinates and subtracted for odd ones; dimensions alternate step by step; the
    multi-port version runs ``2 D`` collectives at once (each starting on a different
    dimension, in both mirror images), each on ``1 / (2 D)`` of the data. Every
    dimension's size must be a power of two.

Phases of concurrent dimensions are aligned: a step holds every dimension's work of
that phase. Where the dimensions of one phase need different numbers of ring steps
(``s - 1`` on a ring of ``s``), the step repeats as often as the longest ring and
every dimension spreads its bytes evenly over those repetitions; the step then pays
the longest ring's latencies and the busiest dimension's bytes, never less than that
dimension would take alone (a conservative model of rings of different lengths
running at once).

Sources of the facts used are listed in docs/sources.md s.6.

Examples
--------
>>> import topologies
>>> f = topologies.build("torus:4x4")
>>> rings = ring_search(f)
>>> len(rings), [len(r) for r in rings]
(2, [16, 16])
>>> from analysis import cost
>>> r = cost(f, "all-reduce", 2**30, algorithm="multi-dimensional", runtime="ideal")
>>> round(r.time / r.lower_bound, 3)
1.063
"""

import itertools

import numpy as np

from fabric import Clos, Dragonfly, Grid, Switched
from fabric._fabric_arg import fabric_arg
from fabric._memo import fabric_memo
from fabric._units import check_count

from ._schedules import (
    NotApplicableError,
    Step,
    group_grid,
    host_rings,
    register_algorithm,
    resolve_ranks,
)

__all__ = ["ring_search"]

#: Directed-ring, dimension-order and step limits of these builders (implementation limits).
MAX_ORDERS_DIMS = 4          # all permutations up to 4 dimensions (24 orders); rotations above
RING_SEARCH_ROTATIONS = 10   # Posa rotations allowed per node before a search attempt gives up
RING_SEARCH_ATTEMPTS = 2     # restarts (other start nodes) per cycle
ROTATION_WORK = 10_000_000   # ... and at most this many node moves by rotations, per cycle
MERGE_REPAIRS = 200          # split-and-repair exchanges tried when plain ones run out
SEARCH_ROUNDS = 16           # whole searches with other seeds (at least 2), on small graphs
SEARCH_WORK = 20_000         # ... as many as fit in this many node-degrees of work

# -- ring search ------------------------------------------------------------------------


def _chip_adjacency(fabric, nodes):
    """Neighbour sets (positions) of the group over direct chip-to-chip links, and bandwidths."""
    G = fabric.graph
    pos = {n: i for i, n in enumerate(nodes)}
    adj = [set() for _ in nodes]
    bw = {}
    for i, n in enumerate(nodes):
        for m, d in G[n].items():
            j = pos.get(m)
            if j is not None and j != i:
                adj[i].add(j)
                bw[(i, j)] = float(d.get("bandwidth", 0.0))
    return adj, bw


def _hamiltonian_cycle(adj, start, rng):
    """A Hamiltonian cycle of the graph ``adj`` (list of int arrays), or None.

    Extension-rotation search (Posa 1976; the heuristic analysed by Angluin and
    Valiant 1979): extend the path from its end to the unvisited neighbour with the
    fewest unvisited neighbours (Warnsdorff's rule); when the end has none, rotate:
    for a neighbour ``path[i]`` of the end, reverse ``path[i+1:]``, so ``path[i+1]``
    becomes the end. A full path closes when its end is adjacent to its start.
    Deterministic for a given ``rng``; gives up after a number of rotations
    proportional to the size (:data:`RING_SEARCH_ROTATIONS`), and at most
    :data:`ROTATION_WORK` node moves (a rotation moves up to ``n``).
    """
    n = len(adj)
    # Python lists: the loop reads a few small neighbour lists per step, where numpy's
    # per-call cost dominated; the same steps, the same rng draws, the same cycle
    nbs = [a.tolist() for a in adj]
    path = [start] + [0] * (n - 1)
    pos = [-1] * n
    free = [len(a) for a in nbs]
    pos[start], length = 0, 1
    for u in set(nbs[start]):
        free[u] -= 1
    budget = min(RING_SEARCH_ROTATIONS * n, max(100, ROTATION_WORK // n))
    while budget > 0:
        nb = nbs[path[length - 1]]
        if length < n:
            unv = [u for u in nb if pos[u] < 0]
            if unv:
                least = min(free[u] for u in unv)
                best = [u for u in unv if free[u] == least]
                v = best[int(rng.integers(len(best)))] if len(best) > 1 else best[0]
                path[length], pos[v] = v, length
                length += 1
                for u in set(nbs[v]):
                    free[u] -= 1
                continue
        elif any(pos[u] == 0 for u in nb):
            return np.array(path, dtype=np.int64)
        # rotate about a neighbour path[i] of the end (not its predecessor)
        i_all = [i for i in (pos[u] for u in nb) if 0 <= i < length - 2]
        if not i_all:
            return None
        budget -= 1
        # path[0] stays ``start`` (a rotation reverses path[i+1:], i >= 0): a full path
        # looks for a rotation that closes it
        if length == n:
            near = nbs[start]
            good = [i for i in i_all if path[i + 1] in near]
        else:
            good = [i for i in i_all if free[path[i + 1]] > 0]
        pick = good if good else i_all
        i = pick[int(rng.integers(len(pick)))]
        path[i + 1:length] = path[i + 1:length][::-1]
        for k in range(i + 1, length):
            pos[path[k]] = k
    return None


def _search(adj_sets, seed):
    """Edge-disjoint Hamiltonian cycles of ``adj_sets``: the most that any of a few
    seeded rounds of :func:`_search_once` finds (a cycle found first can leave a
    complement with no Hamiltonian cycle; another round chooses differently)."""
    n = len(adj_sets)
    if n < 3:
        return []
    most = min(len(a) for a in adj_sets) // 2
    work = n * max(len(a) for a in adj_sets)
    rounds = max(2, min(SEARCH_ROUNDS, SEARCH_WORK // max(work, 1)))
    best = []
    for r in range(rounds):
        got = _search_once(adj_sets, np.random.default_rng([seed, r]))
        if len(got) > len(best):
            best = got
        if len(best) >= most:
            break
    return best


def _search_once(adj_sets, rng):
    """Edge-disjoint Hamiltonian cycles of ``adj_sets``, found one after another."""
    n = len(adj_sets)
    full = [set(a) for a in adj_sets]
    adj_sets = [set(a) for a in adj_sets]
    cycles = []
    while min(len(a) for a in adj_sets) >= 2:
        adj = [np.array(sorted(a), dtype=np.int64) for a in adj_sets]
        found = None
        for attempt in range(RING_SEARCH_ATTEMPTS):
            start = 0 if attempt == 0 else int(rng.integers(n))
            found = _hamiltonian_cycle(adj, start, rng)
            if found is not None:
                break
        if found is None and cycles:
            found = _factor_and_merge(adj_sets, cycles)
        if found is None:
            break
        k = int(np.argmin(found))
        cycles.append(np.roll(found, -k))  # start every ring at its lowest position
        # what is left: every edge on no cycle (an exchange may have changed earlier ones)
        adj_sets = [set(a) for a in full]
        for c in cycles:
            for a, b in zip(c.tolist(), np.roll(c, -1).tolist()):
                adj_sets[a].discard(b)
                adj_sets[b].discard(a)
    return cycles


def _two_factor(adj_sets):
    """A 2-factor (every node on one cycle of it) of a regular graph of even degree, as
    each node's two neighbours on it; None if the degree is odd or no factor is found.

    Petersen's theorem, constructively: orient every edge along an Euler circuit of its
    component (in-degree = out-degree = d/2 everywhere); a perfect matching of the
    bipartite graph (out-copy of u) - (in-copy of v) per oriented edge u -> v gives
    every node one edge out and one in (Hopcroft-Karp).
    """
    import networkx as nx

    degs = {len(a) for a in adj_sets}
    if len(degs) != 1 or degs.pop() % 2:
        return None
    n = len(adj_sets)
    G = nx.Graph()
    G.add_nodes_from(range(n))
    G.add_edges_from((u, v) for u, a in enumerate(adj_sets) for v in a if u < v)
    # integer labels (out-copy u, in-copy n + u): the matching must not depend on hashing
    B = nx.Graph()
    top = list(range(n))
    B.add_nodes_from(range(2 * n))
    for comp in nx.connected_components(G):
        H = G.subgraph(comp)
        if H.number_of_edges() == 0:
            return None
        B.add_edges_from((u, n + v) for u, v in nx.eulerian_circuit(H, source=min(comp)))
    match = nx.bipartite.hopcroft_karp_matching(B, top_nodes=top)
    nb = [[] for _ in range(n)]
    for u in range(n):
        got = match.get(u)
        if got is None:
            return None
        v = got - n
        nb[u].append(v)
        nb[v].append(u)
    if any(len(x) != 2 or x[0] == x[1] for x in nb):
        return None  # a 2-cycle (u -> v -> u) is not a cycle of the simple graph
    return nb


def _cycle_order(nb):
    """Successor of every node on the single cycle given by neighbour pairs, or None."""
    n = len(nb)
    nxt = np.full(n, -1, dtype=np.int64)
    prev, u = nb[0][1], 0
    for _ in range(n):
        v = nb[u][0] if nb[u][0] != prev else nb[u][1]
        nxt[u] = v
        prev, u = u, v
    return nxt if u == 0 and (nxt >= 0).all() else None


def _retie(nb, a, b, c, d):
    """The exchange on a 4-cycle ``a b c d``: edges ``ab``, ``cd`` of the neighbour table
    ``nb`` become ``bc``, ``da`` (``a`` trades ``b`` for ``d``, ``b`` trades ``a`` for ``c``, ...).

    A cycle's neighbour pair (a list) keeps the traded neighbour's place; a set of
    spare edges loses the old neighbour and gains the new one.
    """
    for k, old, new in ((a, b, d), (b, a, c), (c, d, b), (d, c, a)):
        x = nb[k]
        if isinstance(x, set):
            x.discard(old)
            x.add(new)
        else:
            x[x.index(old)] = new


def _factor_and_merge(adj_sets, cycles):
    """One more Hamiltonian cycle: a 2-factor of the remaining graph, its cycles merged
    by exchanges with the cycles already found; None if they cannot all be merged.

    An exchange takes a 4-cycle ``u v w x`` of the graph whose edges ``uv`` and ``wx``
    lie on two different cycles of the factor, and trades them for ``vw``, ``xu``, which
    joins the factor's two cycles into one. ``vw`` and ``xu`` come from the edges left
    over (on no cycle), which take ``uv``, ``wx`` instead; or from a Hamiltonian cycle
    ``A`` traversed ``v -> w`` and ``u -> x`` (or both reversed), which stays one cycle
    with ``uv, wx`` instead. The edge sets stay disjoint, and each exchange removes one
    cycle of the factor. When none is left and unused edges exist, an exchange with ``A``
    traversed the other way (``v -> w``, ``x -> u``: ``A`` splits in two) is kept if a
    4-cycle of ``A``'s two pieces and unused edges joins ``A`` again (at most
    :data:`MERGE_REPAIRS` tries).
    """
    n = len(adj_sets)
    fnb = _two_factor(adj_sets)
    if fnb is None:
        return None
    parent = list(range(n))

    def find(a):
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        return a

    for u in range(n):
        for v in fnb[u]:
            ru, rv = find(u), find(v)
            if ru != rv:
                parent[ru] = rv
    pieces = len({find(u) for u in range(n)})
    anb = []
    for c in cycles:
        nbs = [[0, 0] for _ in range(n)]
        for a, b in zip(c.tolist(), np.roll(c, -1).tolist()):
            nbs[a][1] = b
            nbs[b][0] = a
        anb.append(nbs)
    nxts = [_cycle_order(x) for x in anb]

    free = [set(a) - set(f) for a, f in zip(adj_sets, fnb)]  # edges on neither

    def squares(u, v, nb):
        """``(x, w)`` of each 4-cycle ``u v w x`` with ``vw``, ``xu`` edges of ``nb`` and
        ``wx`` an edge of the factor on another of its pieces than ``uv``."""
        for x in nb[u]:
            for w in nb[v]:
                if w in (u, x) or x == v or x not in fnb[w] or find(u) == find(w):
                    continue
                yield x, w

    def exchange(u):
        for v in fnb[u]:
            # first with edges on no cycle: any 4-cycle joining two pieces will do
            for x, w in squares(u, v, free):
                _retie(fnb, u, v, w, x)
                _retie(free, v, w, x, u)
                parent[find(u)] = find(w)
                return True
            for j, nbs in enumerate(anb):
                nxt = nxts[j]
                for x, w in squares(u, v, nbs):
                    if not ((nxt[v] == w and nxt[u] == x) or (nxt[w] == v and nxt[x] == u)):
                        continue
                    # the factor trades uv, wx for vw, xu; A the other way round
                    _retie(fnb, u, v, w, x)
                    _retie(nbs, v, w, x, u)
                    parent[find(u)] = find(w)
                    nxts[j] = _cycle_order(nbs)
                    return True
        return False

    def labels(nbs):
        lab = np.full(n, -1, dtype=np.int64)
        k = 0
        for s0 in range(n):
            prev, u = -1, s0
            while lab[u] < 0:
                lab[u] = k
                a_, b_ = nbs[u]
                prev, u = u, (a_ if a_ != prev else b_)
            k += lab[s0] == k
        return lab

    def split_and_repair(u):
        """An exchange with A traversed against it (A splits in two), kept only if a
        4-cycle of A's two pieces and unused edges joins A again."""
        for v in fnb[u]:
            for j, nbs in enumerate(anb):
                nxt = nxts[j]
                for x, w in squares(u, v, nbs):
                    if not ((nxt[v] == w and nxt[x] == u) or (nxt[w] == v and nxt[u] == x)):
                        continue
                    tried[0] += 1
                    if tried[0] > MERGE_REPAIRS:
                        return False
                    a2 = [list(e) for e in nbs]
                    _retie(a2, v, w, x, u)
                    lab = labels(a2)
                    for a in range(n):
                        for b in a2[a]:
                            for d in free[a]:
                                if lab[d] == lab[a] or d == b:
                                    continue
                                for c in free[b]:
                                    if c == a or c not in a2[d] or lab[c] == lab[a]:
                                        continue
                                    # join A: ab, cd to the unused edges, bc, da to A
                                    _retie(a2, a, b, c, d)
                                    _retie(free, b, c, d, a)
                                    _retie(fnb, u, v, w, x)
                                    anb[j] = a2
                                    nxts[j] = _cycle_order(a2)
                                    parent[find(u)] = find(w)
                                    return True
        return False

    tried = [0]
    while pieces > 1:
        before = pieces
        for u in range(n):
            while pieces > 1 and exchange(u):
                pieces -= 1
            if pieces == 1:
                break
        if pieces == before and any(free):
            for u in range(n):
                if split_and_repair(u):
                    pieces -= 1
                    break
        if pieces == before:
            break
    if pieces > 1 or any(x is None for x in nxts):
        return None
    for j, c in enumerate(cycles):  # the cycles found before changed: write them back
        nxt = nxts[j]
        order = np.empty(n, dtype=np.int64)
        order[0] = 0
        for i in range(1, n):
            order[i] = nxt[order[i - 1]]
        c[:] = order
    order = np.empty(n, dtype=np.int64)
    nxt = _cycle_order(fnb)
    if nxt is None:
        return None
    order[0] = 0
    for i in range(1, n):
        order[i] = nxt[order[i - 1]]
    return order


def _locality_order(fabric, nodes):
    """The group's chips grouped by host domain (else by the node they attach to), groups in
    breadth-first order of the fabric from the first rank, ranks in order within a group.

    The order is read on the fabric as built (``fabric.intact`` of a degraded copy): where
    chips sit does not move when a link fails, and an order re-read on the degraded graph
    could be a better ring the intact fabric was never given, so losing a link made the
    ring faster (audit s11: torus 4x4 without 3 links, a broadcast over 7 ranks 1244 ->
    966 us under runtime "ideal"). A failed link on the ring takes its bypass."""
    import networkx as nx

    G = (fabric.intact or fabric).graph
    host_of = fabric.host_of
    # breadth-first discovery order from the first rank (nx.bfs_tree's node order, read
    # without building the tree)
    seen = {nodes[0]: 0}
    for _, n in nx.bfs_edges(G, nodes[0]):
        seen[n] = len(seen)
    far = len(seen)

    def group(n):
        h = host_of.get(n)
        if h is not None:
            return ("host", h)
        return ("node", min(G[n], key=lambda m: seen.get(m, far), default=n))

    first = {}
    for n in nodes:
        g = group(n)
        first[g] = min(first.get(g, far), seen.get(n, far))
    keyed = sorted(range(len(nodes)), key=lambda i: (first[group(nodes[i])], i))
    return np.array(keyed, dtype=np.int64)


def _channel_rings(fabric, nodes):
    """Rings through switches: the locality order, and on a group spread over host domains,
    NCCL's channel rings over them in that order (:func:`analysis._schedules.host_rings`:
    ring ``c`` enters and leaves every host from its ``c``-th rank, so each ring crosses
    between hosts on other chips, hence other NICs)."""
    order = _locality_order(fabric, nodes)
    host_of = fabric.host_of
    hosts = [host_of.get(nodes[i]) for i in order]
    runs = []
    for i, h in enumerate(hosts):
        if i == 0 or h != hosts[i - 1] or h is None:
            runs.append([])
        runs[-1].append(int(order[i]))
    if None in hosts:
        return [order]
    rings = host_rings(fabric, nodes, runs)
    return [order] if rings is None else rings


def ring_search(fabric, ranks=None, *, seed=0):
    """Edge-disjoint rings over every rank of a group, found on the fabric graph.

    On the group's direct chip-to-chip links, Hamiltonian cycles are found one after
    another by an extension-rotation search, each removing its links from the graph
    for the next, until no further cycle is found (at most half the smallest
    degree). A group with no Hamiltonian cycle of direct links (chips joined through
    switches: NVSwitch planes, a fat-tree) gets one ring that visits each host domain's
    ranks together (else each switch's), host after host in breadth-first order of the
    fabric from the first rank, so that the ring crosses between hosts as few times as
    it can; with ``g >= 2`` ranks in every host, ``g`` such rings, ring ``c`` leaving
    each host from its ``c``-th rank (NCCL's channels, one per NIC). Degraded
    fabrics work: failed links are simply absent.

    Parameters
    ----------
    fabric : Fabric
    ranks : sequence, optional
        The group's chips in rank order (default: every endpoint), read as
        :func:`analysis.cost` reads them (a rank named twice, a node that is not a chip,
        or ranks the failures left with no path between them are refused by name).
    seed : int, default 0
        Seeds the search's tie-breaking; same seed, same rings.

    Returns
    -------
    tuple of ndarray
        Each ring as rank positions ``0..p-1`` in ring order, starting at its lowest
        (read-only: the rings are cached per fabric and shared).

    Examples
    --------
    >>> import topologies
    >>> [len(r) for r in ring_search(topologies.build("sd200-ultra"))]
    [128, 128, 128, 128, 128, 128]
    >>> len(ring_search(topologies.build("nvl72")))   # through the switches: one per rank
    4
    >>> len(ring_search(topologies.build("fattree:k=4")))   # no host domains: one ring
    1
    """
    fabric = fabric_arg(fabric)
    seed = check_count(seed, "seed", 0)         # ("object of type 'Odd' has no len()")
    nodes = resolve_ranks(fabric, ranks)[0]     # read as cost reads a collective's ranks
    return _rings(fabric, nodes, seed)[0]


def _rings(fabric, nodes, seed=0):
    cache = fabric_memo(fabric, __name__)
    key = (nodes, seed)
    if key not in cache:
        adj, bw = _chip_adjacency(fabric, nodes)
        cycles = _search(adj, seed)
        if cycles:
            bottleneck = [min(min(bw[(int(a), int(b))], bw[(int(b), int(a))])
                              for a, b in zip(c, np.roll(c, -1))) for c in cycles]
        else:
            cycles = _channel_rings(fabric, nodes) if len(nodes) > 1 else []
            bottleneck = [1.0] * len(cycles)
        for c in cycles:                # shared by every later caller: read-only
            c.flags.writeable = False
        cache[key] = (tuple(cycles), tuple(bottleneck))
    return cache[key]


def _multi_ring_rooted(op, p, cycles, bottleneck):
    """Broadcast / reduce pipelined along every ring in both directions from rank 0.

    Each directed ring, opened at the root, is a path of ``p - 1`` hops carrying its
    share of the data chunk by chunk (broadcast: away from the root; reduce: towards it,
    each rank adding its own before passing on); the pipeline fills in ``p - 2`` stages.
    """
    total = 2 * sum(bottleneck)
    src, dst, frac = [], [], []
    for c, b in zip(cycles, bottleneck):
        c = np.roll(c, -int(np.flatnonzero(c == 0)[0]))
        for path in (c, np.roll(c[::-1], 1)):  # both directions, root first
            a_, b_ = path[:-1], path[1:]
            if op == "reduce":
                a_, b_ = b_, a_
            src.append(a_)
            dst.append(b_)
            frac.append(np.full(p - 1, b / total))
    reduce = 1.0 if op == "reduce" else 0.0
    step = Step(src=np.concatenate(src), dst=np.concatenate(dst), fraction=np.concatenate(frac),
                reduce=reduce,
                label=f"pipeline stage ({2 * len(cycles)} directed paths from the root)")
    return (step,), max(p - 2, 0)


def _multi_ring(op, p, fabric, nodes):
    if op not in ("all-reduce", "reduce-scatter", "all-gather", "broadcast", "reduce"):
        raise NotApplicableError(f"multi-ring does not apply to {op}")
    if fabric is None:
        raise NotApplicableError("multi-ring needs a fabric to search for rings on")
    cycles, bottleneck = _rings(fabric, nodes)
    if op in ("broadcast", "reduce"):
        return _multi_ring_rooted(op, p, cycles, bottleneck)
    total = 2 * sum(bottleneck)
    src, dst, frac = [], [], []
    for c, b in zip(cycles, bottleneck):
        for ring in (c, c[::-1]):  # both directions
            src.append(ring)
            dst.append(np.roll(ring, -1))
            frac.append(np.full(p, b / total / p))
    src, dst, frac = np.concatenate(src), np.concatenate(dst), np.concatenate(frac)
    k = 2 * len(cycles)
    rs = Step(src=src, dst=dst, fraction=frac, reduce=1.0 / p, repeat=p - 1,
              label=f"reduce-scatter ({k} directed rings)")
    ag = Step(src=rs.src, dst=rs.dst, fraction=rs.fraction, repeat=p - 1,
              label=f"all-gather ({k} directed rings)")
    return {"all-reduce": (rs, ag), "reduce-scatter": (rs,), "all-gather": (ag,)}[op], None


# -- grids ------------------------------------------------------------------------------


def _grid(fabric, nodes, algorithm="this algorithm"):
    """(shape, per-dimension kind, grid, connect) of a hypermesh group, or of a cluster's two
    levels (:func:`analysis._schedules.group_grid`; ``algorithm`` names the schedule in its
    errors).

    ``grid[slot]`` is the rank position of the chip at grid slot ``slot`` (dimension 0
    fastest). Kinds: ``"direct"``, ``"bidirectional ring"``, ``"ring"``.
    """
    shape, connect, grid = group_grid(fabric, nodes, algorithm)
    if connect is None:
        return shape, ("direct", "ring"), grid, ("host", "hosts")
    kinds = tuple("direct" if c in ("full", "switch") else
                  "bidirectional ring" if c == "ring" and s > 2 else "ring"
                  for c, s in zip(connect, shape))
    return shape, kinds, grid, tuple(connect)


def _lines(shape, grid, d):
    """Rank positions of every line along dimension ``d``: array (lines, shape[d])."""
    strides = np.cumprod((1,) + tuple(shape[:-1]))
    slots = np.arange(len(grid))
    base = slots[(slots // strides[d]) % shape[d] == 0]
    return grid[base[:, None] + np.arange(shape[d])[None, :] * strides[d]]


def _dim_flows(L, kind, s, a2a):
    """One dimension's phase at one byte of data per rank: (src, dst, fraction, repeat)."""
    if kind == "direct" or a2a:
        a = np.repeat(L, s, axis=1).ravel()
        b = np.tile(L, (1, s)).ravel()
        return a, b, np.full(len(a), 1.0 / s), 1
    nxt = np.roll(L, -1, axis=1).ravel()
    if kind == "bidirectional ring":
        prv = np.roll(L, 1, axis=1).ravel()
        return (np.concatenate([L.ravel(), L.ravel()]), np.concatenate([nxt, prv]),
                np.full(2 * L.size, 0.5 / s), s - 1)
    return L.ravel(), nxt, np.full(L.size, 1.0 / s), s - 1


def _dim_cost(fabric, nodes, flows):
    """Seconds per byte of data per rank of one dimension's phase, from the router's loads."""
    src, dst, frac, repeat = flows
    ni = fabric.node_index
    idx = np.array([ni[n] for n in nodes], dtype=np.int64)
    r = fabric.router
    loads = r.loads(idx[src], idx[dst], frac)
    keep = src != dst
    if not keep.any():
        return 0.0
    return repeat * float((loads / r.link_bandwidth).max())


def _orders(dims):
    if len(dims) <= MAX_ORDERS_DIMS:
        return list(itertools.permutations(dims))
    return [tuple(dims[i:] + dims[:i]) for i in range(len(dims))]


def _shares(orders, shape, cost, a2a, pipelined=False):
    """Share of each dimension order, from a small linear program.

    Variables: the shares ``w_o`` (summing to 1) and one time ``t_k`` per phase. The
    load of dimension ``d`` in phase ``k`` is ``c_d * sum over orders o with o[k] = d
    of w_o * rest(o, k)``, where ``rest`` is the fraction of the data left after the
    phases before (``1 / s`` per reduce-scatter phase; 1 for all-to-all) and ``c_d``
    the dimension's routed seconds per byte. Phases in sequence: minimise the sum of
    ``t_k`` with ``t_k`` at least every dimension's load in phase ``k``. Pipelined
    (every phase at once, each on its own chunk): minimise one ``t`` at least every
    dimension's load summed over the phases.
    """
    K, O = len(orders[0]), len(orders)
    dims = sorted(set(orders[0]))
    rest = np.ones((O, K))
    if not a2a:
        for i, o in enumerate(orders):
            for k in range(1, K):
                rest[i, k] = rest[i, k - 1] / shape[o[k - 1]]
    T = 1 if pipelined else K
    rows = []
    for k in range(T):
        for d in dims:
            row = np.zeros(O + T)
            for i, o in enumerate(orders):
                for j in (range(K) if pipelined else (k,)):
                    if o[j] == d:
                        row[i] += cost[d] * rest[i, j]
            row[O + k] = -1.0
            rows.append(row)
    from scipy.optimize import linprog  # at call time: ~0.25 s of importing analysis

    c = np.concatenate([np.zeros(O), np.ones(T)])
    # the times in units of the costliest dimension: a cost is ~1e-12 s a byte, below HiGHS's
    # absolute tolerances, so in seconds every share vector looked optimal (scaling the t
    # columns too kept them in seconds: hypermesh:4x4's pipelined shares came back (1, 0))
    A = np.array(rows)
    A[:, :O] /= max(cost.values()) or 1.0
    res = linprog(c, A_ub=A, b_ub=np.zeros(len(rows)),
                  A_eq=np.concatenate([np.ones(O), np.zeros(T)])[None, :], b_eq=[1.0],
                  bounds=(0, None), method="highs")
    if res.status != 0:
        w = np.full(O, 1.0 / O)
    else:
        w = np.maximum(res.x[:O], 0.0)
        w[w < 1e-9] = 0.0
        w /= w.sum()
    return w, rest


def _multi_dimensional(op, p, fabric, nodes, pipelined=False):
    if op not in ("all-reduce", "reduce-scatter", "all-gather", "all-to-all"):
        raise NotApplicableError(f"multi-dimensional does not apply to {op}")
    if fabric is None:
        raise NotApplicableError("multi-dimensional needs a fabric")
    shape, kinds, grid, _ = _grid(fabric, nodes)
    dims = [d for d, s in enumerate(shape) if s > 1]
    if not dims:
        return ()
    a2a = op == "all-to-all"
    lines = {d: _lines(shape, grid, d) for d in dims}
    unit = {d: _dim_flows(lines[d], kinds[d], shape[d], a2a) for d in dims}
    cost = {d: _dim_cost(fabric, nodes, unit[d]) for d in dims}
    orders = _orders(dims)
    w, rest = _shares(orders, shape, cost, a2a, pipelined)
    phases = []
    for k in range(len(dims)):
        x = {d: sum(w[i] * rest[i, k] for i, o in enumerate(orders) if o[k] == d)
             for d in dims}
        active = [d for d in dims if x[d] > 0]
        R = max(unit[d][3] for d in active)
        src, dst, frac, red = [], [], [], 0.0
        for d in active:
            s_, d_, f_, rep = unit[d]
            src.append(s_)
            dst.append(d_)
            frac.append(f_ * x[d] * rep / R)
            red += x[d] * (shape[d] - 1) / shape[d] / R
        what = "+".join(str(d) for d in active)
        phases.append((np.concatenate(src), np.concatenate(dst), np.concatenate(frac), red, R,
                       what))
    if a2a:
        return tuple(Step(src=s_, dst=d_, fraction=f_, repeat=R,
                          label=f"forward phase {k} (dims {what})")
                     for k, (s_, d_, f_, _, R, what) in enumerate(phases)), None
    rs = [Step(src=s_, dst=d_, fraction=f_, reduce=red, repeat=R,
               label=f"reduce-scatter phase {k} (dims {what})")
          for k, (s_, d_, f_, red, R, what) in enumerate(phases)]
    ag = [Step(src=st.src, dst=st.dst, fraction=st.fraction, repeat=st.repeat,
               label=st.label.replace("reduce-scatter", "all-gather"))
          for st in reversed(rs)]
    return {"all-reduce": tuple(rs + ag), "reduce-scatter": tuple(rs),
            "all-gather": tuple(ag)}[op], None


def _pipelined(steps, label):
    """One pipeline stage holding every sub-step of ``steps``, each on its own chunk.

    A step repeated ``r`` times is ``r`` sub-steps; in the steady state of a
    pipeline over chunks, every sub-step works on a different chunk at once, so a
    stage carries the whole schedule's bytes per chunk, and the pipeline fills and
    drains in (sub-steps - 1) stages.
    """
    reps = [st.repeat for st in steps]
    step = Step(src=np.concatenate([st.src for st in steps]),
                dst=np.concatenate([st.dst for st in steps]),
                fraction=np.concatenate([st.fraction * r for st, r in zip(steps, reps)]),
                reduce=sum(st.reduce * r for st, r in zip(steps, reps)), label=label)
    return (step,), sum(reps) - 1


def _multi_dimensional_pipelined(op, p, fabric, nodes):
    """All-reduce of :func:`_multi_dimensional`, its phases pipelined over chunks.

    The reduce-scatter phases of one chunk run while the all-gather phases of
    earlier chunks do, so the chips' reductions overlap the all-gather's transfers
    (NCCL pipelines its ring the same way, chunk by chunk).
    """
    if op != "all-reduce":
        raise NotApplicableError(f"multi-dimensional-pipelined is an all-reduce, not {op}")
    steps, _ = _multi_dimensional(op, p, fabric, nodes, pipelined=True)
    if not steps:
        return (), None
    return _pipelined(steps, "pipeline stage (every phase, each on its own chunk)")


# -- Swing ------------------------------------------------------------------------------


#: How a :class:`fabric.Grid` joins the chips of one line, in words (for messages).
_CONNECT_WORDS = {"full": "all-to-all (every pair linked)", "ring": "a ring",
                  "line": "a line without wrap-around", "switch": "a switch per line"}


def _not_a_grid(fabric):
    """What ``fabric`` is, for a reader told that a schedule needs a torus."""
    st, name = fabric.structure, fabric.name
    if isinstance(st, Clos):
        return (f"{name} is a {st.tiers}-tier Clos network ({st.groups} {st.group} of "
                f"{st.group_size}): its chips reach each other through switches, not a torus")
    if isinstance(st, Switched):
        return (f"{name} is a switched domain (every chip linked to {st.planes} switch "
                f"plane{'s' if st.planes != 1 else ''}), not a torus")
    if isinstance(st, Dragonfly):
        return f"{name} is a dragonfly (groups of routers), not a torus"
    return f"{name} has no grid structure (no chip coordinates), so it is not known as a torus"


def _rho(s):
    return (1 - (-2) ** (s + 1)) // 3


def _swing(op, p, fabric, nodes):
    if op not in ("all-reduce", "reduce-scatter", "all-gather"):
        raise NotApplicableError(f"swing does not apply to {op}")
    if fabric is None:
        raise NotApplicableError("swing needs a fabric (a torus)")
    if not isinstance(fabric.structure, Grid):
        raise NotApplicableError(f"swing runs on tori (a grid of chips whose every dimension "
                                 f"is a ring of direct links); {_not_a_grid(fabric)}")
    shape, _kinds, grid, connect = _grid(fabric, nodes, "swing")
    dims = [d for d, s in enumerate(shape) if s > 1]
    not_rings = [d for d in dims if connect[d] != "ring"]
    if not_rings:
        kinds = {connect[d] for d in not_rings}
        if len(not_rings) == len(dims) and len(kinds) == 1:
            what = f"every dimension is {_CONNECT_WORDS[kinds.pop()]}, none a ring"
        else:
            what = ", ".join(f"dimension {d} ({shape[d]} chips) is {_CONNECT_WORDS[connect[d]]}"
                             for d in not_rings) + ", not a ring"
        raise NotApplicableError(
            f"swing runs on tori (a grid of chips whose every dimension is a ring of direct "
            f"links); {fabric.name} is a grid of {'x'.join(map(str, shape))} chips in which "
            f"{what}")
    if any(shape[d] & (shape[d] - 1) for d in dims):
        raise NotApplicableError(
            f"swing (bandwidth-optimal) needs every torus dimension a power of two, got "
            f"{'x'.join(map(str, shape))}")
    strides = np.cumprod((1,) + tuple(shape[:-1]))
    slots = np.arange(p)
    coord = {d: (slots // strides[d]) % shape[d] for d in dims}
    logs = {d: int(shape[d]).bit_length() - 1 for d in dims}
    total = sum(logs.values())
    ports = [(d0, sign) for d0 in range(len(dims)) for sign in (1, -1)]
    share = 1.0 / len(ports)
    per_step = [([], []) for _ in range(total)]
    for d0, sign in ports:
        seq, count = [], {d: 0 for d in dims}
        j = d0
        while len(seq) < total:
            d = dims[j % len(dims)]
            if count[d] < logs[d]:
                seq.append((d, count[d]))
                count[d] += 1
            j += 1
        for t, (d, k) in enumerate(seq):
            c = coord[d]
            delta = np.where(c % 2 == 0, 1, -1) * sign * _rho(k)
            peer = slots + (((c + delta) % shape[d]) - c) * strides[d]
            per_step[t][0].append(grid[slots])
            per_step[t][1].append(grid[peer])
    rs = []
    for t, (s_, d_) in enumerate(per_step):
        f = share / 2 ** (t + 1)
        rs.append(Step(src=np.concatenate(s_), dst=np.concatenate(d_), fraction=f,
                       reduce=f * len(ports),
                       label=f"reduce-scatter step {t}"))
    ag = [Step(src=st.src, dst=st.dst, fraction=st.fraction,
               label=st.label.replace("reduce-scatter", "all-gather"))
          for st in reversed(rs)]
    return {"all-reduce": tuple(rs + ag), "reduce-scatter": tuple(rs),
            "all-gather": tuple(ag)}[op], None


register_algorithm("multi-ring", _multi_ring)
register_algorithm("multi-dimensional", _multi_dimensional)
register_algorithm("multi-dimensional-pipelined", _multi_dimensional_pipelined)
register_algorithm("swing", _swing)
