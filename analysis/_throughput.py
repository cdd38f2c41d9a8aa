"""Throughput: the max-concurrent-flow of a traffic matrix under link capacities.

Throughput (Jyothi, Singla, Godfrey, Kolla, SC16; ankitsingla/topobench) is
the largest factor ``K`` such that every demand ``d(s, t)`` of the matrix can
be carried ``K`` times at once without exceeding any link's bandwidth, routing
being free (any split over any paths). With demands in bytes and bandwidth in
bytes per second, ``1 / K`` is the fastest time in which the whole matrix can
be delivered by fluid flows: ``time = 1 / K`` seconds.

The linear program, solved by scipy's HiGHS (``scipy.optimize.linprog``):

    maximize K
    subject to, for every commodity c and node v:
        sum of f_c on links out of v - sum of f_c on links into v = K * b_c(v)
    and for every directed link e:   sum over c of f_c(e) <= bandwidth(e)
    f >= 0

Commodities are aggregated by source (one per source node; a single-source
multi-sink flow needs no split per destination), and a chip with a single link
is folded into its neighbour: its commodity starts there and its own link gets
a capacity row on the chip's total sent (received) bytes, which is exact since
that link carries nothing else. So a fat-tree or leaf-spine LP has one
commodity per edge switch; a torus one per chip.

Uniform all-to-all on an intact hypermesh of rings and fully connected lines
(tori, HyperX, sd200-ultra), on a single-tier switched fabric (NVL72) or on
the fat-tree, leaf-spine and rail-optimized builders' fabrics is chip-transitive: the LP then reduces exactly to one commodity (see
:func:`_symmetric`), and that LP again by colour refinement (the symmetries fixing chip 0;
:mod:`analysis._lp_reduce`), so ``torus:32x32x32`` and ``fattree:k=74`` (101,306 hosts) take
a few seconds.

Sizes the general LP handles (measured, 2 shared cores; benchmarks/README.md):
variables = commodities x directed links (between forwarding nodes). ``torus:4x4x4``
(64 x 384 = 24,577 variables) and ``leafspine:k=32`` (512 endpoints, 32 x 1,024)
take 4-10 s; ``cluster-128`` (128 x 896 = 114,689) about 20 s. A 512-chip direct
network such as ``torus:8x8x8`` (512 x 3,072 = 1.6 M variables) is out of reach
except through the symmetric reduction; ``max_variables`` (default 2 M) refuses
larger problems up front with a clear error.

Examples
--------
>>> import topologies
>>> from analysis import traffic
>>> f = topologies.build("torus:4x4")
>>> res = throughput(f, traffic(f, "all-to-all", 1.0))
>>> round(res.k / bisection_bound(f, 1.0), 9)     # uniform on a torus meets the bisection bound
1.0
"""

import dataclasses

import numpy as np
import scipy.sparse as sp
from scipy.optimize import linprog

from fabric import FabricError, Grid

from ._lp_reduce import reduce_lp
from ._traffic import TrafficMatrix

__all__ = ["Throughput", "bisection_bound", "throughput"]


@dataclasses.dataclass(frozen=True)
class Throughput:
    """Result of :func:`throughput`.

    Attributes
    ----------
    k : float
        The max-concurrent-flow factor (1/s when demands are bytes).
    time : float
        ``1 / k``: seconds to deliver the whole matrix with optimal fluid routing.
    commodities, variables, constraints : int
        The LP's size.
    link_utilization : ndarray, shape (2E,)
        Flow / bandwidth per directed link at the optimum.
    method : str
        ``"lp"`` (the general LP) or ``"symmetric"`` (the one-commodity LP of a
        chip-transitive fabric under uniform traffic).
    """

    k: float
    time: float
    commodities: int
    variables: int
    constraints: int
    link_utilization: np.ndarray
    method: str = "lp"


def _as_matrix(fabric, matrix):
    n = fabric.n_endpoints
    if isinstance(matrix, TrafficMatrix):
        if matrix.n != n:
            raise ValueError(f"traffic is for {matrix.n} ranks, {fabric.name} has {n}")
        return matrix.dense()
    M = np.array(matrix, dtype=float)
    if M.shape != (n, n):
        raise ValueError(f"traffic matrix must be {n} x {n}, got shape {M.shape}")
    if (M < 0).any() or not np.isfinite(M).all():
        raise ValueError("traffic matrix entries must be finite and >= 0")
    np.fill_diagonal(M, 0.0)
    return M


def throughput(fabric, matrix, *, max_variables=2_000_000, method="auto"):
    """The max-concurrent-flow throughput of a traffic matrix on ``fabric``.

    Parameters
    ----------
    fabric : Fabric
        Degraded fabrics (``fabric.without(...)``) work too.
    matrix : TrafficMatrix or array_like
        ``n x n`` demands between ranks, bytes.
    max_variables : int
        Refuse an LP with more variables than this (HiGHS time and memory grow
        quickly beyond it).
    method : {"auto", "lp", "symmetric"}
        ``"auto"`` uses the symmetric reduction when it applies (uniform
        all-to-all on an intact hypermesh whose dimensions are rings or fully
        connected, or an intact switched, fat-tree, leaf-spine or rail-optimized
        fabric from the builders), the general LP otherwise.

    Returns
    -------
    Throughput

    Raises
    ------
    ValueError
        For a wrong matrix, a matrix with no traffic, or an LP above ``max_variables``.
    FabricError
        If HiGHS reports the LP infeasible or fails (a pair with demand has no path).
    """
    uniform = isinstance(matrix, TrafficMatrix) and matrix.data is None
    if uniform and method in ("auto", "symmetric") and _link_orbits(fabric) is not None:
        return _symmetric(fabric, matrix.fill)
    if method == "symmetric":
        raise ValueError(f"method='symmetric' needs uniform all-to-all traffic on an intact "
                         f"grid of rings and fully connected lines or a switched fabric; "
                         f"{fabric.name} with "
                         f"{getattr(matrix, 'name', 'this matrix')} does not qualify")
    if method not in ("auto", "lp"):
        raise ValueError(f"method must be 'auto', 'lp' or 'symmetric', got {method!r}")
    M = _as_matrix(fabric, matrix)
    if not M.any():
        raise ValueError("the traffic matrix carries no bytes")
    r = fabric.router
    N = len(fabric.nodes)
    _check_connected(fabric, M)
    # Scale to O(1) numbers (bandwidths ~1e10 B/s against demands of bytes condition the LP
    # badly); K scales back by cscale / dscale.
    cscale = float(r.link_bandwidth.max())
    dscale = float(M.max())
    M = M / dscale
    tail, head, cap = r.link_tail, r.link_head, r.link_bandwidth / cscale
    L = len(tail)
    ep = fabric.endpoint_indices
    kinds = np.array([d.get("kind") == "chip" for _, d in fabric.graph.nodes(data=True)])
    deg = np.bincount(tail, minlength=N)
    leaf = kinds & (deg == 1)
    # two chips linked only to each other (mesh:2): folding each into the other would leave
    # no node to route between, so neither is folded
    both = leaf[tail] & leaf[head]
    leaf[tail[both]] = False
    nbr = np.arange(N)
    out_link = np.full(N, -1)
    in_link = np.full(N, -1)
    m = leaf[tail]
    nbr[tail[m]] = head[m]
    out_link[tail[m]] = np.flatnonzero(m)
    m = leaf[head]
    in_link[head[m]] = np.flatnonzero(m)
    # node-level demand between core nodes (leaf chips folded into their neighbour)
    src_core = nbr[ep]
    sent = M.sum(axis=1)
    recv = M.sum(axis=0)
    core_nodes = np.flatnonzero(~leaf)
    cidx = np.full(N, -1)
    cidx[core_nodes] = np.arange(len(core_nodes))
    Nc = len(core_nodes)
    fold = sp.csr_matrix((np.ones(len(ep)), (cidx[src_core], np.arange(len(ep)))),
                         shape=(Nc, len(ep)))
    Dn = np.asarray((fold @ sp.csr_matrix(M) @ fold.T).todense())
    np.fill_diagonal(Dn, 0.0)  # chips on one switch: only their own links carry it
    live = np.flatnonzero(Dn.sum(axis=1) > 0)
    C = len(live)
    core_link = np.flatnonzero(~leaf[tail] & ~leaf[head])
    Lc = len(core_link)
    nvar = C * Lc + 1
    if nvar > max_variables:
        raise ValueError(f"throughput LP for {fabric.name} would have {nvar} variables "
                         f"({C} commodities x {Lc} links), above max_variables={max_variables}")
    ct, ch = cidx[tail[core_link]], cidx[head[core_link]]
    # conservation: for commodity c, node v: out - in - K b_c(v) = 0
    rows, cols, vals = [], [], []
    lk = np.arange(Lc)
    for c in range(C):
        base = c * Nc
        rows += [base + ct, base + ch]
        cols += [c * Lc + lk, c * Lc + lk]
        vals += [np.ones(Lc), -np.ones(Lc)]
    b = np.zeros((C, Nc))
    b[np.arange(C), live] = Dn[live].sum(axis=1)
    b -= Dn[live]
    rows.append(np.arange(C * Nc))
    cols.append(np.full(C * Nc, nvar - 1))
    vals.append(-b.ravel())
    A_eq = sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                         shape=(C * Nc, nvar))
    # capacity: sum_c f_c(e) <= cap(e); folded leaf links: K * bytes <= cap
    ub_rows = [np.repeat(np.arange(Lc)[None, :], C, 0).ravel()]
    ub_cols = [np.arange(C * Lc)]
    ub_vals = [np.ones(C * Lc)]
    b_ub = list(cap[core_link])
    extra = 0
    for rank, node in enumerate(ep):
        for link, nb in ((out_link[node], sent[rank]), (in_link[node], recv[rank])):
            if link >= 0 and nb > 0:
                ub_rows.append(np.array([Lc + extra]))
                ub_cols.append(np.array([nvar - 1]))
                ub_vals.append(np.array([nb]))
                b_ub.append(cap[link])
                extra += 1
    A_ub = sp.csr_matrix((np.concatenate(ub_vals), (np.concatenate(ub_rows),
                                                    np.concatenate(ub_cols))),
                         shape=(Lc + extra, nvar))
    cost = np.zeros(nvar)
    cost[-1] = -1.0
    res, x = _solve_reduced(cost, A_ub, np.array(b_ub), A_eq, np.zeros(C * Nc))
    if res.status != 0:
        raise FabricError(f"throughput LP for {fabric.name} failed: {res.message} (a pair "
                          "with demand may have no path)")
    k = float(x[-1])
    if k <= 0:
        raise FabricError(f"throughput of {fabric.name} is zero: some demand cannot be routed")
    flow = np.zeros(L)
    flow[core_link] = x[:-1].reshape(C, Lc).sum(axis=0)
    for rank, node in enumerate(ep):
        if out_link[node] >= 0:
            flow[out_link[node]] += k * sent[rank]
        if in_link[node] >= 0:
            flow[in_link[node]] += k * recv[rank]
    util = flow / cap
    k = float(k * cscale / dscale)
    return Throughput(k, 1.0 / k, C, nvar, A_eq.shape[0] + A_ub.shape[0], util)


def _check_connected(fabric, M):
    """Raise FabricError naming a pair with demand and no path (a degraded fabric)."""
    from scipy.sparse.csgraph import connected_components

    r = fabric.router
    N = len(fabric.nodes)
    A = sp.csr_matrix((np.ones(r.n_links), (r.link_tail, r.link_head)), shape=(N, N))
    _, comp = connected_components(A, directed=False)
    c = comp[fabric.endpoint_indices]
    bad = np.argwhere((M > 0) & (c[:, None] != c[None, :]))
    if len(bad):
        a, b = (fabric.endpoints[int(x)] for x in bad[0])
        raise FabricError(f"throughput of {fabric.name} is zero: {a} sends to {b} and no path "
                          f"joins them")


def _solve_reduced(cost, A_ub, b_ub, A_eq, b_eq):
    """Solve ``min cost x`` (x >= 0) by HiGHS, on the colour-refined LP when it is smaller.

    The reduction (:mod:`analysis._lp_reduce`) is exact: the same optimum, and the
    class values spread back over the variables form an optimal solution. A fabric
    with symmetry under its traffic (a dragonfly's routers under uniform traffic,
    say) folds its commodities onto a few classes. Returns ``(result, x)``.
    """
    reduced = reduce_lp(cost, A_ub, b_ub, A_eq, b_eq)
    if reduced is not None and reduced[-1] < 0.5 * len(cost):
        c2, Au, bu, Ae, be, col_class, _ = reduced
        res = linprog(c2, A_ub=Au, b_ub=bu, A_eq=Ae, b_eq=be, bounds=(0, None),
                      method="highs-ipm")
        return res, (res.x[col_class] if res.status == 0 else None)
    res = linprog(cost, A_ub=A_ub, b_ub=b_ub, A_eq=A_eq, b_eq=b_eq, bounds=(0, None),
                  method="highs-ipm")
    return res, res.x


def _link_orbits(fabric):
    """Orbits of the directed links under automorphisms transitive on the chips, or None.

    :attr:`fabric.Router.link_orbits`: translations of a hypermesh of rings and
    fully connected lines, permutations of a single-tier switched fabric and of
    the fat-tree, leaf-spine and rail-optimized builders' fabrics; ``None`` on a
    degraded fabric or where no group is known. Links of one orbit share one
    bandwidth.
    """
    return fabric.router.link_orbits


def _symmetric(fabric, fill):
    """Max-concurrent-flow of uniform traffic on a chip-transitive fabric: one commodity.

    Let a group of automorphisms act transitively on the chips (the traffic is
    invariant under it). Averaging any optimal flow over the group gives an
    optimal invariant flow, in which chip c's commodity is the image of chip
    0's. The load of link e is then the sum over chips of f_0 on the links
    mapped onto e: ``(n / |O|) * sum_{e' in O} f_0(e')`` for e's orbit O. So it
    is enough to route chip 0's commodity under one capacity row per orbit.
    """
    orbit = _link_orbits(fabric)
    r = fabric.router
    N = len(fabric.nodes)
    n = fabric.n_endpoints
    L = r.n_links
    n_orb = int(orbit.max()) + 1
    cap = np.zeros(n_orb)
    cap[orbit] = r.link_bandwidth  # one bandwidth per orbit (checked by link_orbits)
    cscale = cap.max()
    cap = cap / cscale
    nvar = L + 1
    src = int(fabric.endpoint_indices[0])
    b = np.zeros(N)
    b[fabric.endpoint_indices] = -1.0
    b[src] = n - 1
    rows = np.concatenate([r.link_tail, r.link_head, np.arange(N)])
    cols = np.concatenate([np.arange(L), np.arange(L), np.full(N, L)])
    vals = np.concatenate([np.ones(L), -np.ones(L), -b])
    A_eq = sp.csr_matrix((vals, (rows, cols)), shape=(N, nvar))
    size = np.bincount(orbit, minlength=n_orb)
    A_ub = sp.csr_matrix((n / size[orbit], (orbit, np.arange(L))), shape=(n_orb, nvar))
    cost = np.zeros(nvar)
    cost[-1] = -1.0
    # what is left of the symmetry (the automorphisms fixing chip 0: reflections, permuted
    # dimensions, pods, ...) shrinks the LP further, exactly (see analysis._lp_reduce)
    reduced = reduce_lp(cost, A_ub, cap, A_eq, np.zeros(N))
    if reduced is not None:
        c2, Au2, bu2, Ae2, be2, col_class, _ = reduced
        res = linprog(c2, A_ub=Au2, b_ub=bu2, A_eq=Ae2, b_eq=be2, bounds=(0, None),
                      method="highs")
        x = res.x[col_class] if res.status == 0 else None
    else:
        res = linprog(cost, A_ub=A_ub, b_ub=cap, A_eq=A_eq, b_eq=np.zeros(N), bounds=(0, None),
                      method="highs")
        x = res.x
    if res.status != 0 or x[-1] <= 0:
        raise FabricError(f"symmetric throughput LP for {fabric.name} failed: {res.message}")
    k = float(x[-1] * cscale / fill)
    used = np.bincount(orbit, weights=x[:-1], minlength=n_orb) * n / size
    util = (used / cap)[orbit]
    return Throughput(k, 1.0 / k, 1, nvar, A_eq.shape[0] + A_ub.shape[0], util, "symmetric")


def bisection_bound(fabric, nbytes=1.0):
    """Throughput bound of uniform all-to-all on a k-ary n-cube torus from its bisection.

    Cutting a torus of even side ``k`` in half across one dimension cuts
    ``2 k^(n-1)`` links (docs/sources.md s.4); each half sends ``(N/2)^2 nbytes``
    across the cut in each direction, so ``K <= 2 k^(n-1) B / ((N/2)^2 nbytes)``
    with ``B`` the per-direction link bandwidth. With sides of different sizes the
    narrowest such cut over the even dimensions is used (a ring of 2 is one edge
    of double bandwidth, cut once per line).

    Raises
    ------
    ValueError
        If the fabric is not a torus (hypermesh with rings of even size) with uniform links.

    Examples
    --------
    >>> import topologies
    >>> bisection_bound(topologies.build("torus:4x4"), 1.0)   # 8 links x 64 GB/s / 8**2 B
    8000000000.0
    """
    structure = fabric.structure
    if not isinstance(structure, Grid) or any(c != "ring" for c in structure.connect):
        raise ValueError(f"bisection_bound is for tori; {fabric.name} is "
                         f"{type(structure).__name__ if structure else 'a graph'}")
    if fabric.failures.degraded:
        raise ValueError(f"bisection_bound is the intact torus's closed form; {fabric.name} "
                         "is degraded")
    shape = structure.shape
    N = int(np.prod(shape))
    f = fabric
    best = None
    for d, s in enumerate(shape):
        if s % 2:
            continue
        # a cut across dimension d: 2 links per ring of that dimension (1 edge for a 2-ring)
        cut_edges = (2 if s > 2 else 1) * N // s
        r = f.router
        links = [k for k in range(0, r.n_links, 2)
                 if np.count_nonzero(np.subtract(*(f.graph.nodes[x]["coord"]
                                                   for x in r.link_name(k)))) == 1
                 and np.flatnonzero(np.subtract(*(f.graph.nodes[x]["coord"]
                                                  for x in r.link_name(k))))[0] == d]
        bws = r.link_bandwidth[links]
        if not (bws == bws[0]).all():
            raise ValueError("bisection_bound assumes one bandwidth per dimension")
        bound = cut_edges * float(bws[0]) / ((N / 2) ** 2 * nbytes)
        best = bound if best is None else min(best, bound)
    if best is None:
        raise ValueError(f"bisection_bound needs a dimension of even size, got {shape}")
    return best
