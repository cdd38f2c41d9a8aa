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

Sizes the link formulation handles (measured, 2 shared cores; benchmarks/README.md):
variables = commodities x directed links (between forwarding nodes). ``torus:4x4x4``
(64 x 384 = 24,577 variables) and ``leafspine:k=32`` (512 endpoints, 32 x 1,024)
take 4-10 s; ``cluster-128`` (128 x 896 = 114,689) about 20 s. Above 2,000,000
variables ``method="auto"`` solves the same LP by column generation over per-source
routing trees (:func:`_column_generation`; ``method="paths"``): a master LP over the
trees found so far, priced by shortest paths under its duals, started from the
fabric's own routing and from multiplicative-weights trees, and stopped when its
optimum meets the dual (upper) bound within 1e-9. Where the fabric's routing is
optimal (uniform traffic on a dragonfly, bound by the chips' own links) the first
master proves it; where it is not (degraded fabrics) it may take many rounds.

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

from fabric import FabricError, Grid, SpecError
from fabric._arrays import traffic_values
from fabric._fabric_arg import fabric_arg
from fabric._units import check_choice, check_count, check_number

from ._lp_reduce import reduce_lp
from ._schedules import NotApplicableError
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
            raise SpecError(f"traffic is for {matrix.n} ranks, {fabric.name} has {n}")
        return matrix.dense()
    M = traffic_values(matrix, n,
                       f"matrix must be a traffic matrix ({n} x {n} bytes for {fabric.name})",
                       "matrix")
    np.fill_diagonal(M, 0.0)
    return M


def throughput(fabric, matrix, *, max_variables=None, method="auto"):
    """The max-concurrent-flow throughput of a traffic matrix on ``fabric``.

    Parameters
    ----------
    fabric : Fabric
        Degraded fabrics (``fabric.without(...)``) work too.
    matrix : TrafficMatrix or array_like
        ``n x n`` demands between ranks, bytes.
    max_variables : int, optional
        Refuse a problem whose link formulation (commodities x core links + 1
        variables, :attr:`Throughput.variables` of ``method="lp"``) is larger than
        this, whatever the method. Default: no limit, except 2,000,000 for
        ``method="lp"`` (HiGHS time and memory grow quickly beyond it).
    method : {"auto", "lp", "paths", "symmetric"}
        ``"symmetric"``: the one-commodity LP of uniform all-to-all on an intact
        hypermesh whose dimensions are rings or fully connected, or an intact
        switched, fat-tree, leaf-spine or rail-optimized fabric from the builders.
        ``"lp"``: the link formulation (one flow variable per commodity and link).
        ``"paths"``: column generation over per-source routing trees (same
        optimum, for large fabrics). ``"auto"``: symmetric where it applies, else
        the link formulation up to 2,000,000 variables and column generation above.

    Returns
    -------
    Throughput

    Raises
    ------
    SpecError
        For a wrong matrix, a matrix with no traffic, or a problem above ``max_variables``.
    FabricError
        If HiGHS reports the LP infeasible or fails (a pair with demand has no path).

    Examples
    --------
    >>> import topologies
    >>> from analysis import traffic
    >>> f = topologies.build("torus:4x4")
    >>> t = throughput(f, traffic(f, "all-to-all", 2**20))    # 1 MiB per ordered pair
    >>> t.k, t.time                     # demand multiple per second; seconds to deliver it
    (7629.39453125, 0.000131072)
    """
    fabric = fabric_arg(fabric)
    check_choice(method, "method", ("auto", "lp", "paths", "symmetric"))
    if max_variables is not None:
        # checked whichever path answers: 'x' raised "'>' not supported" only on the LP path,
        # and nan was accepted (no problem is above it)
        max_variables = check_count(max_variables, "max_variables", 1)
    uniform = isinstance(matrix, TrafficMatrix) and matrix.data is None
    if uniform and method in ("auto", "symmetric") and _link_orbits(fabric) is not None:
        return _symmetric(fabric, matrix.fill)
    if method == "symmetric":
        raise SpecError(f"method='symmetric' needs uniform all-to-all traffic on an intact "
                         f"grid of rings and fully connected lines or a switched fabric; "
                         f"{fabric.name} with "
                         f"{getattr(matrix, 'name', 'this matrix')} does not qualify")
    p = _core_problem(fabric, matrix)
    limit = max_variables if max_variables is not None else (
        _LP_MAX_VARIABLES if method == "lp" else None)
    if limit is not None and p.nvar > limit:
        raise SpecError(f"throughput LP for {fabric.name} would have {p.nvar} variables "
                         f"({p.C} commodities x {p.Lc} links), above max_variables={limit}")
    if method == "paths" or (method == "auto" and p.nvar > _AUTO_PATHS_ABOVE):
        k, core_flow, nvar, ncons = _column_generation(fabric, p)
        how = "paths"
    else:
        k, core_flow, nvar, ncons = _link_lp(p, fabric.name)
        how = "lp"
    if k <= 0:
        raise FabricError(f"throughput of {fabric.name} is zero: some demand cannot be routed")
    flow = np.zeros(len(p.cap))
    flow[p.core_link] = core_flow
    ep = p.ep
    for link, nb in ((p.out_link[ep], p.sent), (p.in_link[ep], p.recv)):
        m = link >= 0
        np.add.at(flow, link[m], k * nb[m])
    util = flow / p.cap
    k = float(k * p.cscale / p.dscale)
    return Throughput(k=k, time=1.0 / k, commodities=p.C, variables=nvar, constraints=ncons,
                      link_utilization=util, method=how)


# The link formulation's default size limit, and where "auto" switches to column generation:
# the same, so every problem the link LP solved before still is, the same way (column
# generation is fast where the fabric's routing is near optimal, slow to converge on
# degraded fabrics: dragonfly:h=2 less 5% of its router links 3 s against the link LP's 1.5 s)
_LP_MAX_VARIABLES = 2_000_000
_AUTO_PATHS_ABOVE = _LP_MAX_VARIABLES

# Column generation prices one column per (source, destination) pair, a path, instead of one
# per source, a routing tree, when the traffic has at most this many pairs per source (a
# permutation: a few): dragonfly:h=3 permutation 62 s by trees, 13 s by paths, same K.
_PAIR_COLUMNS = 4


@dataclasses.dataclass
class _Core:
    """The max-concurrent-flow problem on the core nodes (leaf chips folded), scaled."""

    cap: np.ndarray        # (L,) every directed link's bandwidth / cscale
    cscale: float
    dscale: float
    ep: np.ndarray         # endpoint node indices
    sent: np.ndarray       # (n,) scaled bytes each rank sends
    recv: np.ndarray
    out_link: np.ndarray   # (N,) a folded leaf chip's link out (-1: not folded)
    in_link: np.ndarray
    core_link: np.ndarray  # (Lc,) links between core nodes
    ct: np.ndarray         # (Lc,) core index of each core link's tail, head
    ch: np.ndarray
    Nc: int
    live: np.ndarray       # (C,) core indices of the commodities' sources
    Dn: np.ndarray         # (Nc, Nc) demand between core nodes (diagonal zero)

    @property
    def C(self):
        return len(self.live)

    @property
    def Lc(self):
        return len(self.core_link)

    @property
    def nvar(self):
        return self.C * self.Lc + 1

    def leaf_rows(self):
        """(bytes, capacity) of each folded leaf link: the row ``K * bytes <= capacity``."""
        nb = np.concatenate([self.sent, self.recv])
        link = np.concatenate([self.out_link[self.ep], self.in_link[self.ep]])
        m = (link >= 0) & (nb > 0)
        return nb[m], self.cap[link[m]]


def _core_problem(fabric, matrix):
    """Fold leaf chips into their neighbour, aggregate demands by source core node, scale.

    Commodities are aggregated by source (one per source node; a single-source
    multi-sink flow needs no split per destination), and a chip with a single
    link is folded into its neighbour: its commodity starts there and its own
    link gets a capacity row on the chip's total sent (received) bytes, which is
    exact since that link carries nothing else.
    """
    uniform = isinstance(matrix, TrafficMatrix) and matrix.data is None
    n = fabric.n_endpoints
    if uniform:
        if matrix.n != n:
            raise SpecError(f"traffic is for {matrix.n} ranks, {fabric.name} has {n}")
        M = None
        if not (matrix.fill > 0 and n > 1):
            raise SpecError("the traffic matrix carries no bytes")
    else:
        M = _as_matrix(fabric, matrix)
        if not M.any():
            raise SpecError("the traffic matrix carries no bytes")
    # first: a degraded fabric may have no links left to scale by
    _check_connected(fabric, M)
    r = fabric.router
    N = len(fabric.nodes)
    # Scale to O(1) numbers (bandwidths ~1e10 B/s against demands of bytes condition the LP
    # badly); K scales back by cscale / dscale.
    cscale = float(r.link_bandwidth.max())
    dscale = float(matrix.fill) if M is None else float(M.max())
    tail, head, cap = r.link_tail, r.link_head, r.link_bandwidth / cscale
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
    core_nodes = np.flatnonzero(~leaf)
    cidx = np.full(N, -1)
    cidx[core_nodes] = np.arange(len(core_nodes))
    Nc = len(core_nodes)
    src_core = cidx[nbr[ep]]
    if M is None:  # uniform: every ordered pair of ranks carries 1 (scaled)
        sent = np.full(n, n - 1.0)
        recv = sent.copy()
        cnt = np.bincount(src_core, minlength=Nc).astype(float)
        Dn = np.outer(cnt, cnt)
    else:
        M = M / dscale
        sent = M.sum(axis=1)
        recv = M.sum(axis=0)
        fold = sp.csr_matrix((np.ones(n), (src_core, np.arange(n))), shape=(Nc, n))
        Dn = np.asarray(fold @ (fold @ M.T).T)
    np.fill_diagonal(Dn, 0.0)  # chips on one switch: only their own links carry it
    live = np.flatnonzero(Dn.sum(axis=1) > 0)
    core_link = np.flatnonzero(~leaf[tail] & ~leaf[head])
    return _Core(cap=cap, cscale=cscale, dscale=dscale, ep=ep, sent=sent, recv=recv,
                 out_link=out_link, in_link=in_link, core_link=core_link,
                 ct=cidx[tail[core_link]], ch=cidx[head[core_link]], Nc=Nc, live=live, Dn=Dn)


def _link_lp(p, name):
    """The link formulation: one flow per (commodity, core link); ``(k, core flow, nvar, rows)``.

        maximize K
        subject to, for every commodity c and node v:
            sum of f_c on links out of v - sum of f_c on links into v = K * b_c(v)
        and for every directed link e:   sum over c of f_c(e) <= bandwidth(e)
        f >= 0
    """
    C, Lc, Nc, nvar = p.C, p.Lc, p.Nc, p.nvar
    ct, ch = p.ct, p.ch
    # conservation: for commodity c, node v: out - in - K b_c(v) = 0
    rows, cols, vals = [], [], []
    lk = np.arange(Lc)
    for c in range(C):
        base = c * Nc
        rows += [base + ct, base + ch]
        cols += [c * Lc + lk, c * Lc + lk]
        vals += [np.ones(Lc), -np.ones(Lc)]
    b = np.zeros((C, Nc))
    b[np.arange(C), p.live] = p.Dn[p.live].sum(axis=1)
    b -= p.Dn[p.live]
    rows.append(np.arange(C * Nc))
    cols.append(np.full(C * Nc, nvar - 1))
    vals.append(-b.ravel())
    A_eq = sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                         shape=(C * Nc, nvar))
    # capacity: sum_c f_c(e) <= cap(e); folded leaf links: K * bytes <= cap
    nb, lcap = p.leaf_rows()
    extra = len(nb)
    ub_rows = np.concatenate([np.tile(np.arange(Lc), C), Lc + np.arange(extra)])
    ub_cols = np.concatenate([np.arange(C * Lc), np.full(extra, nvar - 1)])
    ub_vals = np.concatenate([np.ones(C * Lc), nb])
    A_ub = sp.csr_matrix((ub_vals, (ub_rows, ub_cols)), shape=(Lc + extra, nvar))
    b_ub = np.concatenate([p.cap[p.core_link], lcap])
    cost = np.zeros(nvar)
    cost[-1] = -1.0
    res, x = _solve_reduced(cost, A_ub, b_ub, A_eq, np.zeros(C * Nc))
    if res.status != 0:
        raise FabricError(f"throughput LP for {name} failed: {res.message} (a pair "
                          "with demand may have no path)")
    return (float(x[-1]), x[:-1].reshape(C, Lc).sum(axis=0), nvar,
            A_eq.shape[0] + A_ub.shape[0])


def _column_generation(fabric, p, gap=1e-9, max_rounds=300):
    """The same LP by column generation over routing trees; ``(k, core flow, columns, rows)``.

    Dantzig-Wolfe decomposition of the link formulation by commodity. The flows
    of source ``s`` that deliver its demands ``d_s(t)`` once form a polytope whose
    vertices are routing trees: one path from ``s`` to each destination, carrying
    all of ``d_s(t)`` (a flow splits into paths per destination, and choosing one
    path per destination is a product of simplices, whose vertices are those
    choices). The master LP over the trees found so far,

        maximize K
        subject to   K - sum_j lambda_sj <= 0                       for each source s
                     sum_{s,j} lambda_sj load_sj(e) <= bandwidth(e)  for each core link e
                     K * bytes(l) <= bandwidth(l)                   for each folded leaf link l
                     K, lambda >= 0,

    gives a feasible K (a lower bound). Its duals -- ``y_e`` on the links, ``pi_s``
    on the sources, ``z`` on the leaf rows -- price new trees: the cheapest tree of
    ``s`` under ``y`` is its shortest-path tree, of cost
    ``SPT_s(y) = sum_t d_s(t) dist_y(s, t)``, and it enters when ``SPT_s(y) < pi_s``.
    Any ``y, z >= 0`` also give an upper bound (weak duality of the link LP):
    ``K <= (sum_e bandwidth(e) y_e + sum_l bandwidth(l) z_l)
    / (sum_s SPT_s(y) + sum_l bytes(l) z_l)``. Trees are added until the two
    bounds meet within ``gap`` (relative); K is the master's optimum, so it is
    feasible: flows that carry it exist (:attr:`Throughput.link_utilization`).

    Sparse traffic (at most :data:`_PAIR_COLUMNS` destinations per source on
    average, e.g. a permutation) is decomposed by (source, destination) pair
    instead: one row ``K - sum_j lambda_pj <= 0`` per pair ``p``, columns its
    paths carrying ``d_p``, priced by the same shortest paths (a path enters when
    ``d_p dist_y(p) < pi_p``); the bound is the same. The master then mixes paths
    per destination directly, where a tree couples a source's destinations.
    """
    from scipy.sparse.csgraph import dijkstra

    name = fabric.name
    C, Lc, Nc = p.C, p.Lc, p.Nc
    ct, ch = p.ct, p.ch
    cap = p.cap[p.core_link]
    D = p.Dn[p.live]
    nb, lcap = p.leaf_rows()
    # the leaf rows bound K alone: only the tightest matters (its dual z carries all)
    kleaf = float((lcap / nb).min()) if len(nb) else None
    if C == 0:  # every chip on one switch: only the leaf links bound K
        return kleaf, np.zeros(Lc), 1, 1
    key = ct * Nc + ch
    korder = np.argsort(key, kind="stable")
    skey = key[korder]
    if len(skey) > 1 and (skey[1:] == skey[:-1]).any():  # pragma: no cover (graphs are simple)
        raise FabricError(f"throughput of {name}: parallel links between one pair of nodes")
    inv_cap = cap.min() / cap  # per-byte time, in (0, 1]
    ps, pt = np.nonzero(D > 0)
    per_pair = len(ps) <= _PAIR_COLUMNS * C
    R = len(ps) if per_pair else C  # commodities of the master: pairs, or sources

    def graph(w):
        return sp.csr_matrix((w, (ct, ch)), shape=(Nc, Nc))

    def trees(w):
        """Each source's shortest-path tree under w: (source, link, load) triples."""
        _, pred = dijkstra(graph(w), indices=p.live, return_predecessors=True)
        pred = pred.astype(np.int64)
        # depth in the tree by pointer jumping, then subtree demands level by level
        has = pred >= 0
        nxt = np.where(has, pred, np.arange(Nc)[None, :])
        dep = has.astype(np.int64)
        while True:
            up = np.take_along_axis(nxt, nxt, 1)
            dep = dep + np.take_along_axis(dep, nxt, 1) * (nxt != up)
            if (up == nxt).all():
                break
            nxt = up
        sub = D.copy()
        for level in range(int(dep.max()), 0, -1):
            s, t = np.nonzero(dep == level)
            np.add.at(sub, (s, pred[s, t]), sub[s, t])
        s, t = np.nonzero(has & (sub > 0))
        link = korder[np.searchsorted(skey, pred[s, t] * Nc + t)]
        return s, link, sub[s, t]

    def paths(w):
        """Each pair's shortest path under w: (pair, link, demand) triples, hop by hop."""
        _, pred = dijkstra(graph(w), indices=p.live, return_predecessors=True)
        pred = pred.astype(np.int64)
        src = p.live[ps]
        cur = pt.copy()
        pair = np.arange(len(ps))
        got_p, got_l = [], []
        act = np.flatnonzero(cur != src)
        while len(act):
            prev = pred[ps[act], cur[act]]
            got_p.append(pair[act])
            got_l.append(korder[np.searchsorted(skey, prev * Nc + cur[act])])
            cur[act] = prev
            act = act[cur[act] != src[act]]
        pr = np.concatenate(got_p) if got_p else np.zeros(0, dtype=np.int64)
        link = np.concatenate(got_l) if got_l else np.zeros(0, dtype=np.int64)
        return pr, link, D[ps[pr], pt[pr]]

    columns = paths if per_pair else trees

    # master columns, grouped by source: col_src (per column), and its (link, load) entries
    col_src, ent_col, ent_link, ent_load = [], [], [], []
    n_cols = 0

    def add(s, link, load, which):
        nonlocal n_cols
        keep = np.isin(s, which)
        s, link, load = s[keep], link[keep], load[keep]
        new = np.full(R, -1)
        new[which] = n_cols + np.arange(len(which))
        col_src.append(np.asarray(which))
        ent_col.append(new[s])
        ent_link.append(link)
        ent_load.append(load)
        n_cols += len(which)

    def warm_start(rounds=12):
        """Min-hop trees, and multiplicative-weights (Garg-Koenemann) averages: trees under
        lengths that grow with congestion; each source's average over the rounds is a flow
        that spreads its demand (one column per source)."""
        add(*columns(inv_cap), np.arange(R))
        length = inv_cap.copy()
        acc = []
        for _ in range(rounds):
            s, link, load = columns(length)
            acc.append((s, link, load))
            rho = np.bincount(link, weights=load, minlength=Lc) / cap
            length = length * np.exp(rho / rho.max())
        s = np.concatenate([a[0] for a in acc])
        link = np.concatenate([a[1] for a in acc])
        load = np.concatenate([a[2] for a in acc]) / rounds
        avg = sp.coo_matrix((load, (s, link)), shape=(R, Lc)).tocsr()
        avg.sum_duplicates()
        s = np.repeat(np.arange(R), np.diff(avg.indptr))
        add(s, avg.indices.astype(np.int64), avg.data, np.arange(R))

    # the first master holds the fabric's own routing only (often optimal, and a small LP);
    # the warm-start columns come in if it is not
    routed = None if per_pair else _routed_columns(fabric, p)
    if routed is not None:
        add(*routed, np.arange(C))
        warmed = False
    else:
        warm_start()
        warmed = True
    n_rows = R + Lc + (kleaf is not None)
    def bound(y, z):
        """Upper bound on K from duals y (links), z (leaf bound): exact shortest paths."""
        dist = dijkstra(graph(y), indices=p.live)
        spt = np.where(D > 0, D * np.where(np.isfinite(dist), dist, 0.0), 0.0).sum(axis=1)
        denom = float(spt.sum()) + z
        num = float(cap @ y) + (kleaf * z if kleaf is not None else 0.0)
        return num / denom if denom > 0 else np.inf

    alpha = 0.5
    best = center = None
    master = _Master(R, Lc, cap, kleaf)
    done = 0  # columns already in the master
    for _ in range(max_rounds):
        srcs = np.concatenate(col_src)
        ec, el, ew = (np.concatenate(x) for x in (ent_col, ent_link, ent_load))
        new = ec >= done
        master.add(srcs[done:], ec[new] - done, el[new], ew[new])
        done = n_cols
        res = master.solve()
        if res.status != 0:
            raise FabricError(f"throughput LP for {name} failed: {res.message} (a pair "
                              "with demand may have no path)")
        lower = float(res.x[0])
        dual = np.maximum(res.duals, 0.0)
        pi, y = dual[:R], dual[R:R + Lc]
        z = float(dual[R + Lc]) if kleaf is not None else 0.0
        up = bound(y, z)
        if center is None or up < center[2]:
            center = (y, z, up)
        best = (lower, res)
        if center[2] <= lower * (1 + gap):
            break
        if not warmed:
            warm_start()
            warmed = True
            continue
        # new trees, priced at a point between the best bound's duals and the master's
        # (Wentges smoothing: fewer rounds than the master's duals alone), ties broken
        # towards fewer bytes-per-bandwidth hops; entered only if they improve the master
        found = False
        for a_ in (alpha, 0.0) if alpha > 0 else (0.0,):
            ys = a_ * center[0] + (1 - a_) * y
            if a_ > 0:
                zs = a_ * center[1] + (1 - a_) * z
                us = bound(ys, zs)
                if us < center[2]:
                    center = (ys, zs, us)
            s, link, load = columns(ys + 1e-9 * max(float(ys.max()), 1e-300) * inv_cap)
            price = np.bincount(s, weights=load * y[link], minlength=R)
            better = np.flatnonzero(price < pi - 1e-9 * max(float(pi.max()), 1e-300))
            if len(better):
                found = True
                break
        if not found:
            if center[2] <= lower * (1 + gap):
                break
            raise FabricError(f"throughput of {name}: column generation stalled with bounds "
                              f"{lower * p.cscale / p.dscale:.9g} <= K <= "
                              f"{center[2] * p.cscale / p.dscale:.9g}")  # pragma: no cover
        add(s, link, load, better)
    else:
        raise FabricError(f"throughput of {name}: column generation did not converge in "
                          f"{max_rounds} rounds (bounds {lower * p.cscale / p.dscale:.9g} <= "
                          f"K <= {center[2] * p.cscale / p.dscale:.9g})")  # pragma: no cover
    lower, res = best
    lam = res.x[1:]
    flow = np.bincount(np.concatenate(ent_link),
                       weights=np.concatenate(ent_load) * lam[np.concatenate(ent_col)],
                       minlength=Lc)
    return lower, flow, n_cols + 1, n_rows


class _Master:
    """The master LP of :func:`_column_generation`, grown by columns and re-solved warm.

    Variables: ``K`` then the columns; rows: one per source (``K - sum lambda <= 0``),
    one per core link (capacity), and ``K <= kleaf`` if there are folded leaf links.
    Minimises ``-K``. With scipy's HiGHS object (``scipy.optimize._highspy``) new
    columns are added to the solved model and the simplex restarts from its basis;
    without it (another scipy), the whole master is re-solved by ``linprog``.
    """

    def __init__(self, C, Lc, cap, kleaf):
        self.C, self.Lc = C, Lc
        self.b = np.concatenate([np.zeros(C), cap] + ([[kleaf]] if kleaf is not None else []))
        self.n_rows = len(self.b)
        self.blocks = []  # CSC blocks of columns, K first
        k_rows = np.r_[np.arange(C), [C + Lc] if kleaf is not None else []].astype(np.int64)
        self._push(sp.csc_matrix((np.ones(len(k_rows)), (k_rows, np.zeros(len(k_rows)))),
                                 shape=(self.n_rows, 1)))
        try:
            from scipy.optimize._highspy import _core
        except ImportError:  # pragma: no cover (another scipy: re-solve from scratch)
            _core = None
        self.hc = _core
        self.h = None

    def _push(self, block):
        self.blocks.append(block)
        if getattr(self, "h", None) is not None:
            hc = self.hc
            n = block.shape[1]
            self.h.addCols(n, np.zeros(n), np.zeros(n), np.full(n, hc.kHighsInf), block.nnz,
                           block.indptr[:-1].astype(np.int32), block.indices.astype(np.int32),
                           block.data)

    def add(self, src, col, link, load):
        """Columns ``0..len(src)-1`` of source ``src[j]``; entries (col, link, load)."""
        n = len(src)
        if not n:
            return
        rows = np.concatenate([src, self.C + link])
        cols = np.concatenate([np.arange(n), col])
        vals = np.concatenate([-np.ones(n), load])
        self._push(sp.csc_matrix((vals, (rows, cols)), shape=(self.n_rows, n)))

    def solve(self):
        """A result with ``status`` (0: optimal), ``message``, ``x`` and ``duals`` (>= 0)."""
        if self.hc is None:
            from scipy.optimize import linprog  # at call time: ~0.25 s of importing analysis

            A = sp.hstack(self.blocks).tocsc()
            cost = np.zeros(A.shape[1])
            cost[0] = -1.0
            r = linprog(cost, A_ub=A, b_ub=self.b, bounds=(0, None), method="highs")
            x = r.x if r.status == 0 else None
            duals = -r.ineqlin.marginals if r.status == 0 else None
            return _Solved(status=r.status, message=r.message, x=x, duals=duals)
        hc = self.hc
        if self.h is None:
            A = sp.hstack(self.blocks).tocsc()
            A.sort_indices()
            h = hc._Highs()
            h.setOptionValue("output_flag", False)
            h.setOptionValue("presolve", "off")
            lp = hc.HighsLp()
            n = A.shape[1]
            lp.num_col_, lp.num_row_ = n, self.n_rows
            cost = np.zeros(n)
            cost[0] = -1.0
            lp.col_cost_, lp.col_lower_ = cost, np.zeros(n)
            lp.col_upper_ = np.full(n, hc.kHighsInf)
            lp.row_lower_ = np.full(self.n_rows, -hc.kHighsInf)
            lp.row_upper_ = self.b
            lp.a_matrix_.format_ = hc.MatrixFormat.kColwise
            lp.a_matrix_.num_col_, lp.a_matrix_.num_row_ = n, self.n_rows
            lp.a_matrix_.start_ = A.indptr.astype(np.int32)
            lp.a_matrix_.index_ = A.indices.astype(np.int32)
            lp.a_matrix_.value_ = A.data
            h.passModel(lp)
            self.h = h
        self.h.run()
        status = self.h.getModelStatus()
        if status != hc.HighsModelStatus.kOptimal:
            return _Solved(status=2, message=f"HiGHS: {status}", x=None, duals=None)
        sol = self.h.getSolution()
        return _Solved(status=0, message="optimal", x=np.asarray(sol.col_value),
                       duals=-np.asarray(sol.row_dual))


@dataclasses.dataclass
class _Solved:
    status: int
    message: str
    x: np.ndarray
    duals: np.ndarray


def _routed_columns(fabric, p, max_entries=20_000_000):
    """The fabric's own routing of each source's demands, as one master column per source.

    A column may be any flow delivering the source's demands once (a point of the
    polytope of :func:`_column_generation`, not only a vertex). Where the fabric's
    routing (minimal routing on a dragonfly, up/down on a Clos) is already
    optimal, the first master proves it. Returns ``(source, link, load)`` or
    None where the router does not route between the core nodes.
    """
    r = fabric.router
    out_s, out_l, out_w = [], [], []
    cpos = np.full(r.n_links, -1)
    cpos[p.core_link] = np.arange(p.Lc)
    node = np.full(p.Nc, -1)  # node index of each core index
    node[p.ct] = r.link_tail[p.core_link]
    node[p.ch] = r.link_head[p.core_link]
    step = max(1, max_entries // max(r.n_links, 1))
    for lo in range(0, p.C, step):
        src = p.live[lo:lo + step]
        g, t = np.nonzero(p.Dn[src] > 0)
        try:
            loads = r.loads_grouped(node[src[g]], node[t], p.Dn[src[g], t], g, len(src))
        except FabricError:
            return None
        g2, link = np.nonzero(loads > 0)
        keep = cpos[link] >= 0
        out_s.append(lo + g2[keep])
        out_l.append(cpos[link[keep]])
        out_w.append(loads[g2[keep], link[keep]])
    return np.concatenate(out_s), np.concatenate(out_l), np.concatenate(out_w)


def _check_connected(fabric, M):
    """Raise FabricError naming a pair with demand and no path (a degraded fabric).

    ``M`` is the demand matrix, or None for uniform traffic (every pair).
    """
    from scipy.sparse.csgraph import connected_components

    r = fabric.router
    N = len(fabric.nodes)
    A = sp.csr_matrix((np.ones(r.n_links), (r.link_tail, r.link_head)), shape=(N, N))
    _, comp = connected_components(A, directed=False)
    c = comp[fabric.endpoint_indices]
    if M is None:
        other = np.flatnonzero(c != c[0])
        bad = [(0, other[0])] if len(other) else []
    else:
        bad = np.argwhere((M > 0) & (c[:, None] != c[None, :]))
    if len(bad):
        a, b = (fabric.endpoints[int(x)] for x in bad[0])
        raise FabricError(f"throughput of {fabric.name} is zero: {a} sends to {b} and no path "
                          f"joins them{fabric.failures.explain(a, b)}")


def _solve_reduced(cost, A_ub, b_ub, A_eq, b_eq):
    """Solve ``min cost x`` (x >= 0) by HiGHS, on the colour-refined LP when it is smaller.

    The reduction (:mod:`analysis._lp_reduce`) is exact: the same optimum, and the
    class values spread back over the variables form an optimal solution. A fabric
    with symmetry under its traffic (a dragonfly's routers under uniform traffic,
    say) folds its commodities onto a few classes. Returns ``(result, x)``.
    """
    from scipy.optimize import linprog  # at call time: ~0.25 s of importing analysis

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
    from scipy.optimize import linprog  # at call time: ~0.25 s of importing analysis

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
    return Throughput(k=k, time=1.0 / k, commodities=1, variables=nvar,
                      constraints=A_eq.shape[0] + A_ub.shape[0], link_utilization=util,
                      method="symmetric")


def bisection_bound(fabric, nbytes=1.0):
    """Throughput bound of uniform all-to-all on a k-ary n-cube torus from its bisection.

    Cutting a torus of even side ``k`` in half across one dimension cuts
    ``2 k^(n-1)`` links (docs/sources.md s.4); each half sends ``(N/2)^2 nbytes``
    across the cut in each direction, so ``K <= 2 k^(n-1) B / ((N/2)^2 nbytes)``
    with ``B`` the per-direction link bandwidth. With sides of different sizes the
    narrowest such cut over the even dimensions is used (a ring of 2 is one edge
    of double bandwidth, cut once per line).

    Parameters
    ----------
    fabric : fabric.Fabric
        An intact torus.
    nbytes : float
        Bytes each rank sends each other rank.

    Returns
    -------
    float
        The bound on ``K``: whole all-to-alls (``nbytes`` from every rank to every other)
        per second.

    Raises
    ------
    NotApplicableError
        If the fabric is not an intact torus (hypermesh of rings) with a dimension of even
        size and one link bandwidth per dimension (a SpecError, so a ValueError).
    TypeError, SpecError
        If ``nbytes`` is not a finite number > 0 (``-1`` gave a negative bound, nan a nan).

    Examples
    --------
    >>> import topologies
    >>> bisection_bound(topologies.build("torus:4x4"), 1.0)   # 8 links x 64 GB/s / 8**2 B
    8000000000.0
    """
    fabric = fabric_arg(fabric)
    nbytes = check_number("nbytes", nbytes, 0, " bytes", strict=True)
    structure = fabric.structure
    if not isinstance(structure, Grid) or any(c != "ring" for c in structure.connect):
        raise NotApplicableError(f"bisection_bound is for tori; {fabric.name} is "
                                 f"{type(structure).__name__ if structure else 'a graph'}")
    if fabric.failures.degraded:
        raise NotApplicableError(f"bisection_bound is the intact torus's closed form; "
                                 f"{fabric.name} is degraded")
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
            raise NotApplicableError("bisection_bound assumes one bandwidth per dimension")
        bound = cut_edges * float(bws[0]) / ((N / 2) ** 2 * nbytes)
        best = bound if best is None else min(best, bound)
    if best is None:
        raise NotApplicableError(f"bisection_bound needs a dimension of even size, got {shape}")
    return best
