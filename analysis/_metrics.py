"""Structural metrics of a fabric: size, hops, bisection, injection, ports and cables.

Hop counts are links traversed between endpoints (chips), over distinct ordered
endpoint pairs. Each figure says how it was obtained: from the fabric's typed
structure (:attr:`fabric.Fabric.structure`) where it allows (a product of
per-dimension distances for a grid; one breadth-first search for a Clos or
switched structure, whose endpoints are all alike), else by a BFS from every
endpoint. A degraded fabric (:attr:`fabric.Fabric.failures`) never takes a
structural shortcut: its structure describes the intact design.

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

    Returns
    -------
    counts : numpy.ndarray of int64
        ``counts[h]`` is the number of distinct ordered endpoint pairs ``h``
        links apart (``counts[0]`` is 0).
    method : str
        How the counts were obtained.

    Raises
    ------
    fabric.RoutingError
        If two endpoints are disconnected.

    Examples
    --------
    >>> import topologies
    >>> counts, method = hop_distribution(topologies.build("torus:4x4"))
    >>> counts.tolist(), method
    ([0, 64, 96, 64, 16], 'closed form: product of per-dimension distances')
    >>> counts, method = hop_distribution(topologies.build("torus:4x4").without(links=["chip0-chip1"]))
    >>> counts.tolist(), method
    ([0, 62, 96, 66, 16], 'exact: BFS from every endpoint')
    """
    n = fabric.n_endpoints
    structure = None if fabric.failures.degraded else fabric.structure
    if isinstance(structure, Grid):
        counts = np.array([1], dtype=np.int64)
        for s, c in zip(structure.shape, structure.connect):
            counts = np.convolve(counts, _line_distances(s, c))
        counts[0] -= n  # drop the self pairs
        return counts, "closed form: product of per-dimension distances"
    A = _adjacency(fabric)
    ep = fabric.endpoint_indices
    if isinstance(structure, (Clos, Switched)):
        dist = csgraph.shortest_path(A, unweighted=True, indices=ep[:1])[:, ep]
        if np.isinf(dist).any():
            raise RoutingError(f"{fabric.name}: some endpoints are disconnected")
        counts = np.bincount(dist.astype(np.int64).ravel()) * n
        counts[0] = 0
        return counts, "exact: one BFS (all endpoints alike)"
    counts = np.zeros(1, dtype=np.int64)
    for start in range(0, n, 256):
        dist = csgraph.shortest_path(A, unweighted=True, indices=ep[start:start + 256])[:, ep]
        if np.isinf(dist).any():
            raise RoutingError(f"{fabric.name}: some endpoints are disconnected")
        c = np.bincount(dist.astype(np.int64).ravel())
        if len(c) > len(counts):
            counts = np.pad(counts, (0, len(c) - len(counts)))
        counts[:len(c)] += c
    counts[0] = 0
    return counts, "exact: BFS from every endpoint"


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
        if weight == "lanes":
            cap = e.lanes
        else:
            # Integer capacities for the max-flow solver: bandwidth in units of 1/1000 of
            # the slowest link. The cut found is exact for these capacities; the figure
            # reported is the true bandwidth of that cut, so it is always a valid cut.
            cap = np.maximum(np.rint(e.bandwidth / e.bandwidth.min() * 1000), 1)
        node_side = _place_free(nv, e, node_side, cap.astype(np.int64))
    crossing = node_side[e.u] != node_side[e.v]
    return int(e.lanes[crossing].sum()), float(e.bandwidth[crossing].sum())


def _place_free(nv, e, node_side, cap):
    """s-t minimum cut: endpoints fixed to their sides, free nodes placed optimally."""
    s, t = nv, nv + 1
    a_nodes = np.flatnonzero(node_side == 1)
    b_nodes = np.flatnonzero(node_side == 0)
    big = int(cap.sum()) + 1
    if 2 * big >= 2**31:
        raise OverflowError("link capacities too large for the max-flow solver")
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
    return links, bw, exact, method


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
