"""Structural metrics of a fabric: size, hops, bisection, injection, ports and cables.

Hop counts are links traversed between endpoints (chips), over distinct ordered
endpoint pairs. Each figure says how it was obtained: from the fabric's typed
structure (:attr:`fabric.Fabric.structure`) where it allows (a product of
per-dimension distances for a grid; one breadth-first search for a Clos or
switched structure, whose endpoints are all alike), else by a BFS from every
endpoint: chips on one switch folded into it, all sources at once on bitsets
(see :func:`_bfs_counts`). A dragonfly's hops are its routed ones (minimal routing
takes at most one global link, so a pair may be routed past a shorter path through a
third group): in closed form per group pair on an intact one
(:meth:`fabric.Router.hop_counts`). A degraded fabric (:attr:`fabric.Fabric.failures`)
never takes a structural shortcut: its structure describes the intact design.

Bisection is a balanced cut of the endpoints: the structure's cut where it has
one, a spectral cut otherwise, with switches and NICs placed on the side that
minimises the cut (an s-t minimum cut). On a degraded fabric every structural
cut is tried (each half of every even dimension of a grid, at every offset) with
the spectral one, and on a small one (at most :data:`EXHAUSTIVE_ENDPOINTS`
endpoints) every balanced split is. ``bisection_exact`` says whether the figure
is the proven minimum bisection (closed forms in docs/sources.md s.4, or the
exhaustive search) or only an upper bound on it.
"""

import dataclasses

import numpy as np
import scipy.sparse as sp
from scipy.sparse import csgraph

from fabric import Clos, Dragonfly, Grid, RoutingError, Switched
from fabric._fabric_arg import fabric_arg

__all__ = ["EXHAUSTIVE_ENDPOINTS", "Metrics", "bisection", "hop_distribution", "metrics"]

#: A degraded fabric with at most this many endpoints has its bisection found by trying
#: every balanced split (C(16, 8) / 2 = 6,435 splits; fewer where switches must be placed).
EXHAUSTIVE_ENDPOINTS = 16
#: ... and at most this many when switches or NICs must be placed (one max-flow per split).
EXHAUSTIVE_ENDPOINTS_WITH_SWITCHES = 10


@dataclasses.dataclass(frozen=True)
class Metrics:
    """Structural metrics of one fabric. Units: bytes/s per direction, hops are links.

    Attributes
    ----------
    spec : str
    endpoints, switches : int
    links : int
        Physical links (cables), parallel links counted one by one.
    diameter : int
        Largest hop count between two endpoints.
    avg_hops : float
        Mean hop count over distinct ordered endpoint pairs.
    bisection_links : int
        Links crossing the balanced cut.
    bisection_bandwidth : float
        Bytes/s per direction across that cut.
    bisection_exact : bool
        True where the cut is the family's proven minimum bisection.
    bisection_method : str
    injection_bandwidth : float
        Bytes/s per direction of an endpoint's own links (the smallest over endpoints).
    switch_ports : int
        Link ends at switches.
    ports : int
        Link ends at every node (2 x links).
    hops_method : str
    """

    spec: str
    endpoints: int
    switches: int
    links: int
    diameter: int
    avg_hops: float
    bisection_links: int
    bisection_bandwidth: float
    bisection_exact: bool
    bisection_method: str
    injection_bandwidth: float
    switch_ports: int
    ports: int
    hops_method: str

    def as_dict(self):
        """The metrics as a plain dict (JSON-ready)."""
        return dataclasses.asdict(self)


# -- hops --------------------------------------------------------------------------------

def _line_distances(s, connect):
    """Counts of hop distance over ordered coordinate pairs (self pairs included) on one line."""
    a = np.arange(s)
    diff = np.abs(a[:, None] - a[None, :])
    if connect == "full":
        d = (diff > 0).astype(np.int64)
    elif connect == "switch":
        d = 2 * (diff > 0).astype(np.int64)
    elif connect == "ring":
        d = np.minimum(diff, s - diff)
    else:  # line
        d = diff
    return np.bincount(d.ravel())


def hop_distribution(fabric):
    """Count endpoint pairs by hop distance.

    Parameters
    ----------
    fabric : fabric.Fabric
        Intact or degraded.

    Returns
    -------
    counts : numpy.ndarray of int64
        ``counts[h]`` is the number of distinct ordered endpoint pairs ``h``
        links apart (``counts[0]`` is 0) along the paths the fabric routes. On every
        intact fabric but a dragonfly that is the graph distance; on a dragonfly the
        minimal routes' (one global link at most: longer than the graph distance where a
        path through a third group is shorter); on a degraded fat-tree, rail or
        switched domain (up-down routing: chips never forward, paths valley-free) or
        a degraded grid (a failed link's bytes take its bypass, a failed chip's links
        their stand-ins) it is the routed hop count, which may exceed the graph distance:
        on a grid, local repair's, an upper bound on a fabric that re-routes globally
        (``fabric.router.local_repair``; a repaired route may pass its destination and
        turn back).
    method : str
        How the counts were obtained.

    Raises
    ------
    fabric.RoutingError
        If two endpoints are disconnected (or, under up-down routing, have no
        valley-free path left).

    Examples
    --------
    >>> import topologies
    >>> counts, method = hop_distribution(topologies.build("torus:4x4"))
    >>> counts.tolist(), method
    ([0, 64, 96, 64, 16], 'closed form: product of per-dimension distances')
    >>> counts, method = hop_distribution(topologies.build("torus:4x4").without(links=["chip0-chip1"]))
    >>> counts.tolist(), method
    ([0, 62, 88, 56, 20, 10, 4], 'exact: routed hops of the pairs the failed links touch (dimension order)')
    """
    fabric = fabric_arg(fabric)
    n = fabric.n_endpoints
    structure = None if fabric.failures.degraded else fabric.structure
    if isinstance(structure, Grid):
        counts = np.array([1], dtype=np.int64)
        for s, c in zip(structure.shape, structure.connect):
            counts = np.convolve(counts, _line_distances(s, c))
        counts[0] -= n  # drop the self pairs
        return counts, "closed form: product of per-dimension distances"
    if isinstance(fabric.structure, Dragonfly) and fabric.router.policy == "minimal":
        # one global link at most: the graph distance can undercount (a third group's
        # two global links); intact, the router counts the group pairs in closed form
        how = ("closed form: minimal routes per group pair" if not fabric.failures.degraded
               else "exact: routed hops of every pair (minimal)")
        return fabric.router.hop_counts(), how
    if fabric.failures.degraded and isinstance(fabric.structure, (Clos, Switched)):
        # chips never forward and paths are valley-free: after failures the graph
        # distance can undercount, or find a path through a chip that routing refuses
        return fabric.router.hop_counts(), "exact: routed hops of every pair (up-down)"
    if fabric.failures.degraded and isinstance(fabric.structure, Grid):
        # a failed link's bytes take its bypass (fabric._routing: failures under
        # dimension order), so a routed path can be longer than the graph distance
        if not fabric.failures.nodes and fabric.intact is not None:
            return _grid_counts_without_links(fabric), \
                "exact: routed hops of the pairs the failed links touch (dimension order)"
        return fabric.router.hop_counts(), "exact: routed hops of every pair (dimension order)"
    A = _adjacency(fabric)
    ep = fabric.endpoint_indices
    if isinstance(structure, (Clos, Switched)):
        dist = csgraph.shortest_path(A, unweighted=True, indices=ep[:1])[:, ep]
        if np.isinf(dist).any():
            raise RoutingError(f"{fabric.name}: some endpoints are disconnected"
                               f"{fabric.failures.explain(*fabric.failures.cut_off)}")
        counts = np.bincount(dist.astype(np.int64).ravel()) * n
        counts[0] = 0
        return counts, "exact: one BFS (all endpoints alike)"
    counts = _bfs_counts(A, ep)
    if counts is None:
        raise RoutingError(f"{fabric.name}: some endpoints are disconnected"
                               f"{fabric.failures.explain(*fabric.failures.cut_off)}")
    counts = counts[:max(1, len(np.trim_zeros(counts, "b")))]   # one live chip: [0]
    return counts, "exact: BFS from every endpoint"


def _grid_counts_without_links(fabric):
    """Hop histogram of a grid that lost links only (every chip alive): the intact closed
    form, with the pairs whose dimension-order route may meet a failed link
    (``DimOrder.dead_candidates``, a superset) moved from their intact distance to their
    routed hops; the other pairs' routes did not change."""
    intact, r = fabric.intact, fabric.router
    counts = np.array([1], dtype=np.int64)
    for s, c in zip(intact.structure.shape, intact.structure.connect):
        counts = np.convolve(counts, _line_distances(s, c))
    counts[0] -= fabric.n_endpoints
    ep = fabric.endpoint_indices
    i, j = r._dor.dead_candidates(ep)
    if not len(i):
        return counts
    iep = intact.endpoint_indices
    before = np.bincount(intact.router.hops(iep[i], iep[j]), minlength=len(counts))
    after = r.hops(ep[i], ep[j])               # RoutingError when a pair has no route
    counts = np.pad(counts, (0, max(0, int(after.max()) + 1 - len(counts))))
    counts[:len(before)] -= before
    counts += np.bincount(after, minlength=len(counts))
    return counts[:max(1, len(np.trim_zeros(counts, "b")))]


# -- all-pairs BFS over endpoints ----------------------------------------------------------
#
# Endpoints of degree one (a chip on its switch) are folded into their neighbour, which
# then stands for ``a`` such chips (and ``c = 1`` if it is an endpoint itself): two folded
# chips on core nodes ``d`` apart are ``d + 2`` apart, a folded chip and a core endpoint
# ``d + 1``. The BFS runs between the core nodes only, from every core node that stands
# for an endpoint at once, one bit per source ("bit-parallel" BFS: row ``v`` of the
# bitset holds the sources within ``k`` hops of ``v``, and one level is
# ``R[v] |= OR of R[u] over the neighbours u of v``). A level costs (arcs x sources / 64)
# word operations, so graphs of large diameter go by one BFS per source instead.

_BITS_BLOCK = 1 << 12  # sources per bit-parallel sweep (64 words per row)
_GATHER = 1 << 22  # words per gathered block of neighbour rows (32 MiB)


def _fold_leaves(A, ep):
    """(core adjacency, folded chips per core node ``a``, ``c = 1`` for core endpoints)."""
    nv = A.shape[0]
    deg = np.diff(A.indptr)
    is_ep = np.zeros(nv, dtype=bool)
    is_ep[ep] = True
    leaf = is_ep & (deg == 1)
    first = (A.indices[np.minimum(A.indptr[:-1], len(A.indices) - 1)] if len(A.indices)
             else np.zeros(nv, dtype=np.int64))
    nbr = np.where(leaf, first, -1)
    # fold a leaf endpoint only into a neighbour that stays (not a leaf endpoint itself)
    fold = leaf & ~leaf[np.maximum(nbr, 0)]
    core = np.flatnonzero(~fold)
    cid = np.full(nv, -1, dtype=np.int64)
    cid[core] = np.arange(len(core))
    a = np.bincount(cid[nbr[fold]], minlength=len(core)).astype(np.int64)
    c = is_ep[core].astype(np.int64)
    return A[core][:, core].tocsr(), a, c


def _bfs_counts(A, ep):
    """Counts of ordered endpoint pairs by hop distance, or None if some are disconnected."""
    A = sp.coo_matrix(A)
    keep = A.row != A.col  # self loops are no hops
    nv = A.shape[0]
    A = sp.csr_matrix((np.ones(int(keep.sum())), (A.row[keep], A.col[keep])), shape=(nv, nv))
    A.data[:] = 1  # parallel entries summed: back to one arc
    Ac, a, c = _fold_leaves(A, ep)
    src = np.flatnonzero(a + c > 0)  # core nodes standing for endpoints
    counts = np.zeros(2, dtype=np.int64)
    # pairs inside one core node: its folded chips with each other and with itself
    counts = _add(counts, 2, int((a * (a - 1)).sum()))
    counts = _add(counts, 1, int((2 * a * c).sum()))
    if len(src) < 2:
        return counts
    d0 = csgraph.shortest_path(Ac, unweighted=True, indices=[int(src[0])])[0]
    if not np.isfinite(d0[src]).all():
        return None
    # cost of the two ways: bit-parallel levels (about the diameter, between the
    # eccentricity e of one source and 2e) against one BFS per source
    ecc = int(d0[np.isfinite(d0)].max())
    arcs, T = Ac.nnz, len(src)
    bitset = 1.5 * (ecc + 1) * (arcs + Ac.shape[0]) * ((T + 63) // 64)
    per_source = 4.0 * T * (arcs + Ac.shape[0] + T)
    if bitset > per_source:
        return _per_source_counts(Ac, src, a, c, counts)
    return _bitset_counts(Ac, src, a, c, counts)


def _add(counts, d, value):
    if value == 0:
        return counts
    if d >= len(counts):
        counts = np.pad(counts, (0, d + 1 - len(counts)))
    counts[d] += value
    return counts


def _pair_terms(counts, d, a_u, c_u, A_d, C_d):
    """Add the pairs between core nodes ``d`` apart: sums over rows of the frontier weights."""
    counts = _add(counts, d + 2, int((a_u * A_d).sum()))
    counts = _add(counts, d + 1, int((a_u * C_d + c_u * A_d).sum()))
    return _add(counts, d, int((c_u * C_d).sum()))


def _per_source_counts(Ac, src, a, c, counts):
    """One BFS per source core node (256 at a time): for graphs of large diameter."""
    for s0 in range(0, len(src), 256):
        rows = src[s0:s0 + 256]
        D = csgraph.shortest_path(Ac, unweighted=True, indices=rows)[:, src]
        if np.isinf(D).any():
            return None
        D = D.astype(np.int64)
        w_a, w_c = a[src], c[src]
        maxd = int(D.max())
        for d in range(1, maxd + 1):
            m = D == d
            counts = _pair_terms(counts, d, a[rows], c[rows], m @ w_a, m @ w_c)
    return counts


def _popcount(words):
    """Set bits per element of an unsigned integer array: ``np.bitwise_count`` (numpy >= 2),
    else the bytes unpacked (numpy 1.26, the oldest setup.cfg allows)."""
    if hasattr(np, "bitwise_count"):
        return np.bitwise_count(words)
    w = np.ascontiguousarray(words)
    bits = np.unpackbits(w.view(np.uint8).reshape(*w.shape, w.itemsize), axis=-1)
    return bits.sum(axis=-1, dtype=np.int64)


def _bitset_counts(Ac, src, a, c, counts):
    """Bit-parallel BFS from every source core node, ``_BITS_BLOCK`` sources per sweep."""
    n = Ac.shape[0]
    indptr, indices = Ac.indptr, Ac.indices
    deg = np.diff(indptr)
    has = np.flatnonzero(deg > 0)
    is_src = np.zeros(n, dtype=bool)
    is_src[src] = True
    rows_src = src  # rows whose frontier weights count
    for b0 in range(0, len(src), _BITS_BLOCK):
        cols = src[b0:b0 + _BITS_BLOCK]
        nb = len(cols)
        W = (nb + 63) // 64
        R = np.zeros((n, W), dtype=np.uint64)
        bit = np.arange(nb)
        R[cols, bit // 64] = np.left_shift(np.uint64(1), (bit % 64).astype(np.uint64))
        # weight classes of the sources in this block: one mask per distinct (a, c)
        key = a[cols] * 2 + c[cols]
        masks = []
        for k in np.unique(key):
            m = np.zeros(W, dtype=np.uint64)
            sel = np.flatnonzero(key == k)
            np.bitwise_or.at(m, sel // 64, np.left_shift(np.uint64(1),
                                                          (sel % 64).astype(np.uint64)))
            masks.append((int(k) // 2, int(k) % 2, m))
        full = np.zeros(W, dtype=np.uint64)
        for _, _, m in masks:
            full |= m
        d = 0
        while True:
            new = _bitset_level(R, indptr, indices, has)
            if np.array_equal(new, R):  # no row reached a new source: done
                break
            front = new[rows_src] & ~R[rows_src]
            R = new
            d += 1
            A_d = np.zeros(len(rows_src), dtype=np.int64)
            C_d = np.zeros(len(rows_src), dtype=np.int64)
            for wa, wc, m in masks:
                pc = _popcount(front & m).sum(axis=1, dtype=np.int64)
                A_d += wa * pc
                C_d += wc * pc
            counts = _pair_terms(counts, d, a[rows_src], c[rows_src], A_d, C_d)
        if ((R[rows_src] & full) != full).any():
            return None
    return counts


def _bitset_level(R, indptr, indices, has):
    """One BFS level on bitsets: ``out[v] = R[v] | OR of R[u] over the neighbours u of v``."""
    out = R.copy()
    W = R.shape[1]
    step = max(1, _GATHER // max(W, 1))
    # rows with neighbours, in blocks of about ``step`` gathered neighbour rows
    ends = indptr[has + 1]
    i = 0
    while i < len(has):
        limit = indptr[has[i]] + step
        j = max(i + 1, int(np.searchsorted(ends, limit, side="right")))
        rows = has[i:j]
        lo, hi = indptr[rows[0]], indptr[rows[-1] + 1]
        seg = indptr[rows] - lo
        # rows in ``has`` are increasing, so their neighbour lists are contiguous only if no
        # row without neighbours lies between them; those contribute nothing to [lo, hi)
        out[rows] |= np.bitwise_or.reduceat(R[indices[lo:hi]], seg, axis=0)
        i = j
    return out


def _adjacency(fabric):
    e = fabric.edge_arrays
    nv = len(fabric.nodes)
    ones = np.ones(len(e.u))
    A = sp.coo_matrix((ones, (e.u, e.v)), shape=(nv, nv))
    return (A + A.T).tocsr()


# -- bisection ---------------------------------------------------------------------------

def _endpoint_split(fabric):
    """Balanced splits of the endpoints to try: (list of side-A masks over positions, method,
    exact)."""
    n = fabric.n_endpoints
    ranks = np.asarray(fabric.ranks, dtype=np.int64)  # stable ranks: structure is by rank
    degraded = fabric.failures.degraded
    match fabric.structure:
        case Grid(shape=shape, connect=connect):
            coords = np.stack(np.unravel_index(ranks, shape, order="F"), axis=1)
            if degraded:  # every half of every even dimension, at every offset
                sides = [(coords[:, d] - o) % s < s // 2 for d, s in enumerate(shape)
                         if s % 2 == 0 for o in range(s // 2)]
            else:
                sides = [coords[:, d] < s // 2 for d, s in enumerate(shape) if s % 2 == 0]
            if sides:
                exact = all(c in ("full", "ring", "line") for c in connect) and \
                    all(s % 2 == 0 or s == 1 for s in shape)
                return sides, "structural: halve the best dimension", exact and not degraded
        case Clos(groups=groups, group_size=size, group=what, full_bisection=full):
            if groups % 2 == 0:
                return ([ranks // size < groups // 2], f"structural: half the {what}",
                        full and not degraded)
        case Switched():
            return [ranks < (n + len(fabric.failures.ranks)) // 2], \
                "structural: half the chips", not degraded
        case Dragonfly():
            return [ranks < (n + len(fabric.failures.ranks)) // 2], \
                "structural: groups in rank order", False
    return [_spectral_split(fabric)], "spectral cut", False


def _spectral_split(fabric):
    """Split endpoints at the median of the Fiedler vector (a heuristic balanced cut)."""
    from scipy.sparse.linalg import eigsh

    A = _adjacency(fabric)
    L = csgraph.laplacian(A).astype(float)
    nv = L.shape[0]
    if nv <= 400:
        _, vecs = np.linalg.eigh(L.toarray())
    else:
        rng = np.random.default_rng(0)  # deterministic start vector
        _, vecs = eigsh(L, k=2, sigma=-1e-3, which="LM", v0=rng.random(nv))
    fiedler = vecs[:, 1][fabric.endpoint_indices]
    order = np.lexsort((np.arange(len(fiedler)), fiedler))  # ties by rank: deterministic
    side = np.zeros(fabric.n_endpoints, dtype=bool)
    side[order[: fabric.n_endpoints // 2]] = True
    return side


def _cut(fabric, side_a, weight):
    """Place non-endpoint nodes to minimise the cut's ``weight`` ("lanes" or "bandwidth").

    Returns (links, bandwidth) of the cut found.
    """
    e = fabric.edge_arrays
    nv = len(fabric.nodes)
    node_side = np.full(nv, -1, dtype=np.int8)
    node_side[fabric.endpoint_indices] = np.where(side_a, 1, 0)
    if (node_side < 0).any():
        cap = e.lanes if weight == "lanes" else _bandwidth_caps(e)[0]
        node_side = _place_free(nv, e, node_side, cap.astype(np.int64))
    crossing = node_side[e.u] != node_side[e.v]
    return int(e.lanes[crossing].sum()), float(e.bandwidth[crossing].sum())


def _bandwidth_caps(e):
    """Integer capacities of the bandwidth-weighted cut's max-flow, and whether they are
    coarse: bandwidth in units of 1/1000 of the slowest link, or, where those would overflow
    the solver's int32 (links of very unequal bandwidth), of the total / _MAX_CAPACITY, each
    at least 1: then a link far slower than the unit counts as one unit, and the switches'
    placement found may not be the least-bandwidth one. Either way the cut found is exact for
    these capacities and the figure reported is the true bandwidth of that cut: a valid cut."""
    cap = np.maximum(np.rint(e.bandwidth / e.bandwidth.min() * 1000), 1)
    if not _overflows(cap):
        return cap, False
    return np.maximum(np.rint(e.bandwidth / (e.bandwidth.sum() / _MAX_CAPACITY)), 1), True


#: The most the bandwidth-weighted cut's integer capacities sum to (a unit of the total /
#: 2**29, each at least 1, with at most fabric._schema.MAX_LINKS = 2**24 edges: below 2**30,
#: so that _place_free's 2 x (sum + 1) fits the max-flow solver's int32).
_MAX_CAPACITY = 2**29


def _overflows(cap):
    """Whether integer capacities ``cap`` are too large for :func:`_place_free`'s int32
    max-flow (its source and sink links carry their sum + 1, and the flow up to twice it)."""
    return 2 * (float(cap.sum()) + 1) >= 2**31


def _place_free(nv, e, node_side, cap):
    """s-t minimum cut: endpoints fixed to their sides, free nodes placed optimally."""
    s, t = nv, nv + 1
    a_nodes = np.flatnonzero(node_side == 1)
    b_nodes = np.flatnonzero(node_side == 0)
    if _overflows(cap):
        raise OverflowError("link capacities too large for the max-flow solver")
    big = int(cap.sum()) + 1
    rows = np.concatenate([e.u, e.v, np.full(len(a_nodes), s), b_nodes])
    cols = np.concatenate([e.v, e.u, a_nodes, np.full(len(b_nodes), t)])
    caps = np.concatenate([cap, cap, np.full(len(a_nodes), big),
                           np.full(len(b_nodes), big)]).astype(np.int32)
    C = sp.csr_matrix((caps, (rows, cols)), shape=(nv + 2, nv + 2))
    C.sum_duplicates()
    flow = csgraph.maximum_flow(C, s, t).flow
    residual = (C - flow).tocsr()
    residual.data = np.where(residual.data > 0, 1, 0)
    residual.eliminate_zeros()
    reach = csgraph.breadth_first_order(residual, s, directed=True, return_predecessors=False)
    side = np.zeros(nv + 2, dtype=np.int8)
    side[reach] = 1
    return side[:nv]


def bisection(fabric):
    """Links and bandwidth across a balanced cut of the endpoints.

    Parameters
    ----------
    fabric : fabric.Fabric

    Returns
    -------
    links : int
    bandwidth : float
        Bytes/s per direction.
    exact : bool
        Whether the figure is the family's proven minimum bisection.
    method : str

    Examples
    --------
    >>> import topologies
    >>> bisection(topologies.build("torus:4x4x4"))[:3]
    (32, 2048000000000.0, True)
    """
    fabric = fabric_arg(fabric)
    if fabric.n_endpoints < 2:
        return 0, 0.0, True, "one endpoint"
    if fabric.failures.degraded and _exhaustive_ok(fabric):
        return _exhaustive_bisection(fabric)
    sides, method, exact = _endpoint_split(fabric)
    if fabric.failures.degraded and method != "spectral cut":
        sides = sides + [_spectral_split(fabric)]
        method += ", or a spectral cut"
    # The fewest links and the least bandwidth may cross at different cuts (a slow
    # PCIe hop versus a NIC link): each figure is the minimum over its own cuts.
    links = min(_cut(fabric, side, "lanes")[0] for side in sides)
    bw = min(_cut(fabric, side, "bandwidth")[1] for side in sides)
    if _coarse(fabric):
        exact, method = False, method + _COARSE
    return links, bw, exact, method


#: What a bisection's method adds where the switches' placement used coarse capacities.
_COARSE = (", switches placed at a coarse bandwidth unit (links of very unequal bandwidth): "
           "an upper bound")


def _coarse(fabric):
    """Whether the bandwidth-weighted cut places free nodes (switches, NICs) at a coarse unit
    (:func:`_bandwidth_caps`)."""
    return len(fabric.nodes) > fabric.n_endpoints and _bandwidth_caps(fabric.edge_arrays)[1]


def _exhaustive_ok(fabric):
    n = fabric.n_endpoints
    free = len(fabric.nodes) > n
    return n <= (EXHAUSTIVE_ENDPOINTS_WITH_SWITCHES if free else EXHAUSTIVE_ENDPOINTS)


def _balanced_splits(n):
    """Every balanced split of ``n`` positions (side A holds ``n // 2``, position 0 on side B
    when the sides are equal so that each cut is listed once), as a bool array."""
    import itertools

    half = n // 2
    pool = range(1, n) if 2 * half == n else range(n)
    combos = np.array(list(itertools.combinations(pool, half)), dtype=np.int64)
    sides = np.zeros((len(combos), n), dtype=bool)
    if len(combos):
        sides[np.arange(len(combos))[:, None], combos] = True
    return sides


def _exhaustive_bisection(fabric):
    """The minimum balanced cut by trying every split of the endpoints (small fabrics)."""
    sides = _balanced_splits(fabric.n_endpoints)
    e = fabric.edge_arrays
    if len(fabric.nodes) == fabric.n_endpoints:  # every node an endpoint: vectorized
        pos = np.full(len(fabric.nodes), -1, dtype=np.int64)
        pos[fabric.endpoint_indices] = np.arange(fabric.n_endpoints)
        crossing = sides[:, pos[e.u]] != sides[:, pos[e.v]]
        links = int((crossing @ e.lanes).min())
        bw = float((crossing @ e.bandwidth).min())
    else:
        links = min(_cut(fabric, side, "lanes")[0] for side in sides)
        bw = min(_cut(fabric, side, "bandwidth")[1] for side in sides)
        if _coarse(fabric):
            return links, bw, False, "every balanced split" + _COARSE
    return links, bw, True, "exact: every balanced split"


# -- all together ------------------------------------------------------------------------

def metrics(fabric):
    """Compute every structural metric of ``fabric``.

    Parameters
    ----------
    fabric : fabric.Fabric

    Returns
    -------
    Metrics

    Examples
    --------
    >>> import topologies
    >>> m = metrics(topologies.build("fattree:k=4"))
    >>> m.endpoints, m.switches, m.links, m.diameter, m.bisection_links
    (16, 20, 48, 6, 8)
    """
    fabric = fabric_arg(fabric)
    G = fabric.graph
    e = fabric.edge_arrays
    kinds = [G.nodes[n]["kind"] for n in fabric.nodes]
    is_switch = np.array([k == "switch" for k in kinds], dtype=bool)
    links = int(e.lanes.sum())
    counts, hops_method = hop_distribution(fabric)
    pairs = counts.sum()
    diameter = int(np.flatnonzero(counts)[-1]) if pairs else 0
    avg = float((np.arange(len(counts)) * counts).sum() / pairs) if pairs else 0.0
    b_links, b_bw, b_exact, b_method = bisection(fabric)
    nv = len(fabric.nodes)
    inj = np.bincount(e.u, weights=e.bandwidth, minlength=nv) + \
        np.bincount(e.v, weights=e.bandwidth, minlength=nv)
    lanes_at = np.bincount(e.u, weights=e.lanes, minlength=nv) + \
        np.bincount(e.v, weights=e.lanes, minlength=nv)
    return Metrics(
        spec=fabric.name,
        endpoints=fabric.n_endpoints,
        switches=int(is_switch.sum()),
        links=links,
        diameter=diameter,
        avg_hops=avg,
        bisection_links=b_links,
        bisection_bandwidth=b_bw,
        bisection_exact=b_exact,
        bisection_method=b_method,
        injection_bandwidth=float(inj[fabric.endpoint_indices].min()),
        switch_ports=int(lanes_at[is_switch].sum()),
        ports=2 * links,
        hops_method=hops_method,
    )
