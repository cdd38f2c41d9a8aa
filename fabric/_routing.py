"""Routing: which links a transaction crosses between two nodes of a fabric.

A :class:`Router` routes pairs of nodes of one :class:`~fabric.Fabric` by that
fabric's routing *policy*, chosen from its builder family:

``"dimension-order"`` (family ``hypermesh``: tori, meshes, hyper-meshes)
    Dimensions are corrected in a fixed order, 0 first. Along a ring the
    shorter way round is taken; when both ways are equally short (a ring of
    even size, half-way round) the two ways are equal-cost paths: ``loads``
    splits the bytes evenly between them and ``path`` takes the ``+`` way. A
    fully connected dimension is one hop, a per-line switch two. On a degraded
    fabric a pair whose dimension-order path crosses a dead link falls back to
    the minimal detour (all shortest paths of the surviving graph, ECMP); so
    does a pair with an end off the grid (a per-line switch).
``"up-down"`` (families ``fat_tree``, ``leaf_spine``, ``rail_optimized``, ``switched``)
    A path climbs towards the top tier, then only descends (valley-free), and
    is shortest among such paths; chips and NICs never forward. Levels: chip
    -2, NIC/host/memory -1, switch its ``tier``.
``"minimal"`` (family ``dragonfly``)
    Shortest paths that use at most one global (inter-group) link:
    local, global, local (Kim et al., ISCA 2008). There is no non-minimal
    (Valiant) fallback: on a degraded fabric a pair left with no minimal path
    raises :class:`~fabric.RoutingError`.
``"shortest"`` (any other graph)
    All shortest paths by hop count; every node forwards.

In every policy ECMP is over the equal-cost paths the policy allows, each
path carrying an equal share (``ecmp="all"``, the default), or one path per pair
chosen at each branch by a deterministic hash of (source, destination,
branching node) (``ecmp="hash"``); ``path`` always returns that hash choice.

Directed links (the contract every analysis uses): graph edge ``e`` (in
``fabric.graph.edges`` order) gives link ``2*e`` from ``u`` to ``v`` as the
edge is listed, and ``2*e+1`` back. Nodes are indices into ``fabric.nodes``.

How the batched forms work. The general engine builds a directed *state
graph* for the policy (a node may have several states, e.g. climbing or
descending) and runs, for a batch of sources at once, a breadth-first search
(:func:`scipy.sparse.csgraph.shortest_path`), path counts level by level
(sparse products) and the Brandes back-propagation of demand (Brandes, "On
variants of shortest-path betweenness centrality", Social Networks 2008), so an
edge ``u -> v`` on the shortest-path DAG of source ``s`` carries
``sigma_s(u) / sigma_s(v)`` of what flows through ``v``: equal weight per
path. Sources with a single way out (a chip on one edge switch) are merged into
that next node, so a fat-tree is routed from its edge switches. Dimension-order
routing is closed-form per dimension and accumulated with difference arrays.

Examples
--------
>>> import topologies
>>> f = topologies.build("torus:4x4")
>>> f.router.policy
'dimension-order'
>>> route(f, "chip0", "chip10")
['chip0', 'chip1', 'chip2', 'chip6', 'chip10']
"""

import numpy as np
import scipy.sparse as sp
from scipy.sparse import csgraph

from ._errors import NodeError, RoutingError

__all__ = ["ECMP_MODES", "POLICIES", "Router", "route", "route_many"]

POLICIES = ("dimension-order", "up-down", "minimal", "shortest")
ECMP_MODES = ("all", "hash")

_UPDOWN_FAMILIES = frozenset({"fat_tree", "leaf_spine", "rail_optimized", "switched"})
_DOR_FAMILIES = frozenset({"hypermesh", "torus", "mesh"})

# Work arrays of a batch are kept below about this many float64 entries (32 MiB).
_BLOCK = 1 << 22


def default_policy(fabric):
    """The policy name a fabric's family implies (see the module docstring)."""
    if fabric.family in _DOR_FAMILIES and "shape" in fabric.params:
        return "dimension-order"
    if fabric.family in _UPDOWN_FAMILIES:
        return "up-down"
    if fabric.family == "dragonfly":
        return "minimal"
    return "shortest"


def _mix(*keys):
    """A deterministic 64-bit hash of integer arrays (splitmix64 finaliser), as uint64."""
    with np.errstate(over="ignore"):
        x = np.uint64(0x9E3779B97F4A7C15)
        for k in keys:
            x = x ^ np.asarray(k).astype(np.uint64)
            x = x * np.uint64(0xBF58476D1CE4E5B9)
            x = x ^ (x >> np.uint64(31))
            x = x * np.uint64(0x94D049BB133111EB)
            x = x ^ (x >> np.uint64(29))
    return x


# -- the state graph of a policy -------------------------------------------------------


class _StateGraph:
    """A directed graph of routing states; each state is a node, each arc a directed link.

    ``node_states[n]`` lists the states of node ``n`` (-1 padded): column 0 is
    where a route from ``n`` starts; a route to ``n`` ends in whichever of its
    states is nearest. States of nodes in ``drop`` (leaf chips, routed at the
    ends by :class:`_Engine`) and the arcs touching them are left out.
    """

    def __init__(self, n_nodes, state_node, tail, head, link, node_states, drop=None):
        state_node = np.asarray(state_node, dtype=np.int64)
        tail = np.asarray(tail, dtype=np.int64)
        head = np.asarray(head, dtype=np.int64)
        link = np.asarray(link, dtype=np.int64)
        node_states = np.asarray(node_states, dtype=np.int64)
        if drop is not None and drop.any():
            keep_state = ~drop[state_node]
            new_id = np.full(len(state_node), -1, dtype=np.int64)
            new_id[keep_state] = np.arange(int(keep_state.sum()))
            keep_arc = keep_state[tail] & keep_state[head]
            tail, head, link = new_id[tail[keep_arc]], new_id[head[keep_arc]], link[keep_arc]
            state_node = state_node[keep_state]
            node_states = np.where(node_states >= 0, new_id[np.maximum(node_states, 0)], -1)
        self.n_nodes = n_nodes
        self.state_node = state_node
        self.n_states = len(self.state_node)
        order = np.lexsort((head, tail))
        self.tail = tail[order]
        self.head = head[order]
        self.link = link[order]
        self.node_states = node_states
        S = self.n_states
        self.indptr = np.searchsorted(self.tail, np.arange(S + 1))
        self.A = sp.csr_matrix((np.ones(len(self.tail)), (self.tail, self.head)), shape=(S, S))
        self.AT = self.A.T.tocsr()
        outdeg = np.diff(self.indptr)
        # A state with one way out: routes from it may start at the next state.
        self.single = np.where(outdeg == 1, self.indptr[:-1], -1)
        by_head = np.argsort(self.head, kind="stable")
        self.by_head = by_head
        self.head_sorted = self.head[by_head]
        self.head_starts = np.flatnonzero(np.r_[True, self.head_sorted[1:] != self.head_sorted[:-1]]
                                          if len(self.head_sorted) else [])
        self.head_groups = self.head_sorted[self.head_starts]


def _all_links(fabric):
    ea = fabric.edge_arrays
    E = len(ea.u)
    tail = np.empty(2 * E, dtype=np.int64)
    head = np.empty(2 * E, dtype=np.int64)
    tail[0::2], head[0::2] = ea.u, ea.v
    tail[1::2], head[1::2] = ea.v, ea.u
    return tail, head


def _shortest_graph(fabric, drop=None):
    N = len(fabric.nodes)
    tail, head = _all_links(fabric)
    return _StateGraph(N, np.arange(N), tail, head, np.arange(len(tail)),
                       np.arange(N)[:, None], drop)


def _levels(fabric):
    level = np.empty(len(fabric.nodes))
    for i, (n, d) in enumerate(fabric.graph.nodes(data=True)):
        kind = d.get("kind")
        level[i] = (-2 if kind == "chip" else float(d.get("tier", 0)) if kind == "switch"
                    else -1)
    return level


def _updown_graph(fabric, drop=None):
    """States (n, up) = n and (n, down) = N + n; up arcs climb, down arcs descend."""
    N = len(fabric.nodes)
    tail, head = _all_links(fabric)
    lev = _levels(fabric)
    link = np.arange(len(tail))
    up = lev[head] > lev[tail]
    down = lev[head] < lev[tail]
    st_t = np.concatenate([tail[up], tail[down], N + tail[down]])
    st_h = np.concatenate([head[up], N + head[down], N + head[down]])
    st_l = np.concatenate([link[up], link[down], link[down]])
    states = np.stack([np.arange(N), N + np.arange(N)], axis=1)
    return _StateGraph(N, np.r_[np.arange(N), np.arange(N)], st_t, st_h, st_l, states, drop)


def _group_of(fabric):
    """Dragonfly group of each node (routers ``r{g}.{i}``; chips take their router's)."""
    N = len(fabric.nodes)
    group = np.full(N, -1, dtype=np.int64)
    idx = fabric.node_index
    for n, d in fabric.graph.nodes(data=True):
        if "group" in d:
            group[idx[n]] = int(d["group"])
        elif d.get("kind") == "switch" and isinstance(n, str) and n.startswith("r") and "." in n:
            group[idx[n]] = int(n[1:].split(".")[0])
    for n, d in fabric.graph.nodes(data=True):
        if group[idx[n]] < 0:
            gs = {int(group[idx[m]]) for m in fabric.graph[n] if group[idx[m]] >= 0}
            if len(gs) == 1:
                group[idx[n]] = gs.pop()
    return group


def _minimal_graph(fabric, drop=None):
    """Dragonfly minimal routing: phase 0 before the global hop, phase 1 after it."""
    N = len(fabric.nodes)
    tail, head = _all_links(fabric)
    link = np.arange(len(tail))
    g = _group_of(fabric)
    is_global = (g[tail] != g[head]) & (g[tail] >= 0) & (g[head] >= 0)
    loc = ~is_global
    st_t = np.concatenate([tail[loc], N + tail[loc], tail[is_global]])
    st_h = np.concatenate([head[loc], N + head[loc], N + head[is_global]])
    st_l = np.concatenate([link[loc], link[loc], link[is_global]])
    states = np.stack([np.arange(N), N + np.arange(N)], axis=1)
    return _StateGraph(N, np.r_[np.arange(N), np.arange(N)], st_t, st_h, st_l, states, drop)


# -- the general engine: BFS + path counts + Brandes accumulation ------------------------


class _Engine:
    """ECMP routing over a policy's :class:`_StateGraph` (see the module docstring).

    Chips with a single link (a host on its edge switch) are routed at the
    ends: their link is added to every route, and the state graph holds only
    the nodes that can forward, which is what keeps a fat-tree small.
    """

    def __init__(self, fabric, builder, link_tail, link_head, link_latency, names):
        self.f = fabric
        N = len(fabric.nodes)
        deg = np.bincount(link_tail, minlength=N)
        kinds = np.array([d.get("kind") == "chip" for _, d in fabric.graph.nodes(data=True)],
                         dtype=bool)
        self.leaf = kinds & (deg == 1)
        self.leaf_out = np.full(N, -1, dtype=np.int64)
        self.leaf_in = np.full(N, -1, dtype=np.int64)
        self.leaf_nbr = np.arange(N, dtype=np.int64)
        lo = np.flatnonzero(self.leaf[link_tail])
        self.leaf_out[link_tail[lo]] = lo
        self.leaf_nbr[link_tail[lo]] = link_head[lo]
        li = np.flatnonzero(self.leaf[link_head])
        self.leaf_in[link_head[li]] = li
        self.sg = builder(fabric, self.leaf)
        self.link_latency = link_latency
        self.arc_lat = link_latency[self.sg.link]
        self.n_links = len(link_tail)
        self.names = names

    def _ends(self, src, dst):
        """Replace leaf chips by their neighbour: (core src, core dst, first link, last link)."""
        pre = np.where(self.leaf[src], self.leaf_out[src], -1)
        post = np.where(self.leaf[dst], self.leaf_in[dst], -1)
        return self.leaf_nbr[src], self.leaf_nbr[dst], pre, post

    def dist(self, states):
        """Hop distances from a batch of start states, shape (b, S); inf where unreachable."""
        D = csgraph.shortest_path(self.sg.A, directed=True, unweighted=True,
                                  indices=np.asarray(states))
        return np.atleast_2d(D)

    def _raise(self, s, d):
        raise RoutingError(f"{self.f.name}: no route from {self.names[int(s)]!r} to "
                           f"{self.names[int(d)]!r}")

    def _start(self, cs, src, dst):
        st = self.sg.node_states[cs, 0]
        if (st < 0).any():
            i = int(np.flatnonzero(st < 0)[0])
            self._raise(src[i], dst[i])
        return st

    def _targets(self, D, rows, cd, src, dst):
        """Per pair, the nearest state of the destination node; raise if unreachable."""
        cand = self.sg.node_states[cd]  # (P, m)
        dd = np.where(cand >= 0, D[rows[:, None], np.maximum(cand, 0)], np.inf)
        k = np.argmin(dd, axis=1)
        best = dd[np.arange(len(k)), k]
        bad = ~np.isfinite(best)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            self._raise(src[i], dst[i])
        return cand[np.arange(len(k)), k], best

    def _sigma(self, D, starts):
        b, S = D.shape
        sigma = np.zeros((b, S))
        sigma[np.arange(b), starts] = 1.0
        finite = np.isfinite(D)
        maxd = int(D[finite].max()) if finite.any() else 0
        At = self.sg.AT
        for lev in range(maxd):
            M = np.where(D == lev, sigma, 0.0)
            T = (At @ M.T).T
            sigma += np.where(D == lev + 1, T, 0.0)
        return sigma, maxd

    def _batches(self, n, per_row):
        step = max(1, _BLOCK // max(per_row, 1))
        for i in range(0, n, step):
            yield slice(i, min(n, i + step))

    def _groups(self, start):
        """Pairs grouped by start state: (unique states, pair order, group bounds, inverse)."""
        uniq, inv = np.unique(start, return_inverse=True)
        order = np.argsort(inv, kind="stable")
        bounds = np.searchsorted(inv[order], np.arange(len(uniq) + 1))
        return uniq, order, bounds, inv

    def loads(self, src, dst, w, out):
        """Add the bytes of pairs (src[i] -> dst[i], w[i]) to ``out`` (per directed link)."""
        keep = (src != dst) & (w != 0)
        src, dst, w = src[keep], dst[keep], w[keep]
        if len(src) == 0:
            return out
        us, inv_s = np.unique(src, return_inverse=True)
        ud, inv_d = np.unique(dst, return_inverse=True)
        order = np.argsort(inv_s, kind="stable")
        bounds = np.searchsorted(inv_s[order], np.arange(len(us) + 1))
        for bs in self._batches(len(us), len(ud)):
            sel = order[bounds[bs.start]:bounds[bs.stop]]
            b = bs.stop - bs.start
            block = np.bincount((inv_s[sel] - bs.start) * len(ud) + inv_d[sel], weights=w[sel],
                                minlength=b * len(ud)).reshape(b, len(ud))
            self.loads_rows(us[bs], ud, block, out)
        return out

    def loads_rows(self, src, dst, block, out):
        """Add the loads of a demand block: ``block[i, j]`` bytes from ``src[i]`` to ``dst[j]``.

        The block is reduced to the start states of the sources (rows merged by
        a sparse product) before the per-source work, so chips sharing an edge
        switch are routed once.
        """
        sg = self.sg
        block = np.where(src[:, None] == dst[None, :], 0.0, block)
        cs, cd, pre, post = self._ends(src, dst)
        rs, csum = block.sum(axis=1), block.sum(axis=0)
        m = pre >= 0
        out += np.bincount(pre[m], weights=rs[m], minlength=self.n_links)
        m = post >= 0
        out += np.bincount(post[m], weights=csum[m], minlength=self.n_links)
        live = rs > 0
        if not live.any():
            return out
        src, cs, block = src[live], cs[live], block[live]
        start = sg.node_states[cs, 0]
        if (start < 0).any():
            i = int(np.flatnonzero(start < 0)[0])
            self._raise(src[i], dst[int(np.flatnonzero(block[i])[0])])
        uniq, inv = np.unique(start, return_inverse=True)
        agg = sp.csr_matrix((np.ones(len(inv)), (inv, np.arange(len(inv)))),
                            shape=(len(uniq), len(inv)))
        cand = sg.node_states[cd]  # (n_dst, m)
        width = max(sg.n_states, len(sg.tail), len(dst) * cand.shape[1])
        for bs in self._batches(len(uniq), 3 * width):
            batch = uniq[bs]
            b = len(batch)
            AD = agg[bs] @ block  # (b, n_dst) demand from each start state
            D = self.dist(batch)
            dd = np.where(cand[None, :, :] >= 0, D[:, np.maximum(cand, 0)], np.inf)
            k = np.argmin(dd, axis=2)
            best = np.take_along_axis(dd, k[:, :, None], axis=2)[:, :, 0]
            bad = (AD > 0) & ~np.isfinite(best)
            if bad.any():
                i, j = (int(x[0]) for x in np.nonzero(bad))
                row = int(np.flatnonzero(inv == bs.start + i)[0])
                self._raise(src[row], dst[j])
            dem = np.zeros((b, sg.n_states))
            for kk in range(cand.shape[1]):
                colmask = cand[:, kk] >= 0
                if not colmask.any():
                    continue
                Mk = np.where(k == kk, AD, 0.0)[:, colmask]
                scatter = sp.csr_matrix(
                    (np.ones(int(colmask.sum())),
                     (np.arange(int(colmask.sum())), cand[colmask, kk])),
                    shape=(int(colmask.sum()), sg.n_states))
                dem += (scatter.T @ Mk.T).T
            self._brandes(D, batch, dem, out)
        return out

    def _brandes(self, D, batch, dem, out):
        """Back-propagate the demand ``dem`` (b, S) over each start's shortest-path DAG."""
        sg = self.sg
        sigma, maxd = self._sigma(D, batch)
        A = sg.A
        safe = np.where(sigma > 0, sigma, 1.0)
        for lev in range(maxd, 0, -1):
            R = np.where(D == lev, dem / safe, 0.0)
            P = (A @ R.T).T
            dem += np.where(D == lev - 1, sigma * P, 0.0)
        R = dem / safe
        R[np.arange(len(batch)), batch] = 0.0  # demand to the start itself goes nowhere
        on_dag = D[:, sg.head] == D[:, sg.tail] + 1
        arc = np.where(on_dag, sigma[:, sg.tail] * R[:, sg.head], 0.0).sum(axis=0)
        out += np.bincount(sg.link, weights=arc, minlength=self.n_links)

    def _along(self, D, values, bw=False):
        """Per start state and state, the worst over the ECMP paths of a path quantity.

        ``bw=False``: the largest sum of ``values`` (latency); ``bw=True``: the
        smallest of ``values`` (the narrowest link's bandwidth).
        """
        sg = self.sg
        if bw:
            acc = np.where(D == 0, np.inf, np.inf)
            pick, combine, empty = np.minimum, np.minimum, np.inf
        else:
            acc = np.where(D == 0, 0.0, -np.inf)
            pick, combine, empty = np.maximum, np.add, -np.inf
        finite = np.isfinite(D)
        maxd = int(D[finite].max()) if finite.any() else 0
        if len(sg.head_sorted) == 0:
            return acc
        t = sg.tail[sg.by_head]
        h = sg.head_sorted
        al = values[sg.link][sg.by_head]
        cols = sg.head_groups
        for lev in range(1, maxd + 1):
            valid = (D[:, t] == lev - 1) & (D[:, h] == lev)
            cand = np.where(valid, combine(acc[:, t], al), empty)
            m = pick.reduceat(cand, sg.head_starts, axis=1)
            acc[:, cols] = np.where(D[:, cols] == lev, m, acc[:, cols])
        return acc

    def hops_latency(self, src, dst, want_latency=True, bandwidth=None):
        """Hops, largest ECMP latency and (if ``bandwidth`` is given) narrowest link of each pair."""
        sg = self.sg
        P = len(src)
        hops = np.zeros(P, dtype=np.int64)
        lat = np.zeros(P)
        bw = np.full(P, np.inf)
        cs, cd, pre, post = self._ends(src, dst)
        same = src == dst
        hops += ((pre >= 0) & ~same).astype(np.int64) + ((post >= 0) & ~same)
        ll = self.link_latency
        for lk in (pre, post):
            use = (lk >= 0) & ~same
            lat += np.where(use, ll[np.maximum(lk, 0)], 0.0)
            if bandwidth is not None:
                bw = np.where(use, np.minimum(bw, bandwidth[np.maximum(lk, 0)]), bw)
        inner = np.flatnonzero((cs != cd) & ~same)
        if len(inner) == 0:
            return hops, lat, bw
        start = self._start(cs[inner], src[inner], dst[inner])
        uniq, order, bounds, inv = self._groups(start)
        width = max(sg.n_states, len(sg.tail))
        for bs in self._batches(len(uniq), 3 * width):
            batch = uniq[bs]
            sel = order[bounds[bs.start]:bounds[bs.stop]]
            rows = inv[sel] - bs.start
            D = self.dist(batch)
            idx = inner[sel]
            tstate, best = self._targets(D, rows, cd[idx], src[idx], dst[idx])
            hops[idx] += best.astype(np.int64)
            if want_latency:
                lat[idx] += self._along(D, self.link_latency)[rows, tstate]
            if bandwidth is not None:
                bw[idx] = np.minimum(bw[idx], self._along(D, bandwidth, bw=True)[rows, tstate])
        return hops, lat, bw

    def path(self, s, t):
        """The hash-chosen shortest path from node s to node t, as a list of links."""
        sg = self.sg
        if s == t:
            return []
        src, dst = np.array([s]), np.array([t])
        cs, cd, pre, post = self._ends(src, dst)
        links = [int(pre[0])] if pre[0] >= 0 else []
        tail = [int(post[0])] if post[0] >= 0 else []
        if cs[0] == cd[0]:
            return links + tail
        start = int(self._start(cs, src, dst)[0])
        D = self.dist([start])
        tstate, _ = self._targets(D, np.zeros(1, dtype=np.int64), cd, src, dst)
        tstate = int(tstate[0])
        Dt = csgraph.shortest_path(sg.AT, directed=True, unweighted=True, indices=[tstate])[0]
        cur = start
        while cur != tstate:
            arcs = np.arange(sg.indptr[cur], sg.indptr[cur + 1])
            arcs = arcs[Dt[sg.head[arcs]] == Dt[cur] - 1]
            pick = int(_mix(s, t, sg.state_node[cur])[()] % np.uint64(len(arcs)))
            a = arcs[pick]
            cur = int(sg.head[a])
            links.append(int(sg.link[a]))
        return links + tail

    def hash_steps(self, src, dst):
        """The hash-chosen paths of many pairs, hop by hop (vectorised over pairs).

        Yields ``(pairs, links)``: at each step, the indices (into ``src``) of
        the pairs that take a hop and the directed link each takes, in path order.
        """
        sg = self.sg
        allidx = np.flatnonzero(src != dst)
        src, dst = src[allidx], dst[allidx]
        cs, cd, pre, post = self._ends(src, dst)
        m = pre >= 0
        if m.any():
            yield allidx[m], pre[m]
        inner = np.flatnonzero(cs != cd)
        if len(inner):
            start = self._start(cs[inner], src[inner], dst[inner])
            tstate = np.empty(len(inner), dtype=np.int64)
            uniq, order, bounds, inv = self._groups(start)
            for bs in self._batches(len(uniq), sg.n_states):
                sel = order[bounds[bs.start]:bounds[bs.stop]]
                D = self.dist(uniq[bs])
                ii = inner[sel]
                tstate[sel], _ = self._targets(D, inv[sel] - bs.start, cd[ii], src[ii], dst[ii])
            deg = np.diff(sg.indptr)
            maxdeg = int(deg.max()) if len(deg) else 0
            cols = np.arange(maxdeg)[None, :]
            tu, torder, tbounds, tinv = self._groups(tstate)
            for bs in self._batches(len(tu), sg.n_states):
                sel = torder[tbounds[bs.start]:tbounds[bs.stop]]
                Dt = np.atleast_2d(csgraph.shortest_path(sg.AT, directed=True, unweighted=True,
                                                         indices=tu[bs]))
                row = tinv[sel] - bs.start
                cur = start[sel].copy()
                goal = tstate[sel]
                ii = inner[sel]
                s_, t_ = src[ii], dst[ii]
                active = np.flatnonzero(cur != goal)
                while len(active):
                    c, r = cur[active], row[active]
                    ok = cols < deg[c][:, None]
                    offs = np.where(ok, sg.indptr[c][:, None] + cols, 0)
                    good = ok & (Dt[r[:, None], sg.head[offs]] == (Dt[r, c] - 1)[:, None])
                    cnt = good.sum(axis=1)
                    pick = (_mix(s_[active], t_[active], sg.state_node[c])
                            % cnt.astype(np.uint64)).astype(np.int64)
                    rank = np.cumsum(good, axis=1) - 1
                    col = np.argmax(good & (rank == pick[:, None]), axis=1)
                    arc = offs[np.arange(len(active)), col]
                    yield allidx[ii[active]], sg.link[arc]
                    cur[active] = sg.head[arc]
                    active = active[cur[active] != goal[active]]
        m = post >= 0
        if m.any():
            yield allidx[m], post[m]

    def hash_loads(self, src, dst, w, out):
        """Loads when each pair takes its one hash-chosen path (vectorised over pairs)."""
        for pairs, links in self.hash_steps(src, dst):
            out += np.bincount(links, weights=w[pairs], minlength=self.n_links)
        return out


# -- dimension-order routing on hyper-meshes ---------------------------------------------


class _DimOrder:
    """Closed-form dimension-order routing on a hypermesh / torus / mesh fabric."""

    def __init__(self, fabric, link_latency, link_bandwidth, n_links, fallback):
        self.f = fabric
        self.bandwidth = link_bandwidth
        self.fallback = fallback  # an _Engine for detours on degraded fabrics
        self.n_links = n_links
        shape = tuple(int(s) for s in fabric.params["shape"])
        connect = fabric.params.get("connect", "full")
        if isinstance(connect, str):
            connect = (connect,) * len(shape)
        self.shape, self.connect = shape, tuple(connect)
        self.ndim = len(shape)
        self.strides = np.cumprod((1,) + shape[:-1]).astype(np.int64)
        n = int(np.prod(shape))
        self.n_slots = n
        N = len(fabric.nodes)
        idx = fabric.node_index
        self.slot_node = np.full(n, -1, dtype=np.int64)
        self.node_slot = np.full(N, -1, dtype=np.int64)
        for node, c in fabric.graph.nodes(data="coord"):
            if c is None or fabric.graph.nodes[node].get("kind") != "chip":
                continue
            slot = int(np.dot(np.asarray(c, dtype=np.int64), self.strides))
            self.slot_node[slot] = idx[node]
            self.node_slot[idx[node]] = slot
        ea = fabric.edge_arrays
        lat = link_latency
        self.lat = lat
        # per dimension: line index of each slot, and link tables
        self.line_of, self.tables = [], []
        coords = np.stack(np.unravel_index(np.arange(n), shape, order="F"), axis=1)
        self.coords = coords
        ns = self.node_slot
        for d, (s, c) in enumerate(zip(shape, self.connect)):
            base = np.arange(n) - coords[:, d] * self.strides[d]
            lines, line_of = np.unique(base, return_inverse=True)
            self.line_of.append(line_of)
            L = len(lines)
            tab = {}
            if c in ("ring", "line"):
                plus = np.full((L, s), -1, dtype=np.int64)
                minus = np.full((L, s), -1, dtype=np.int64)
                tab["plus"], tab["minus"] = plus, minus
            elif c == "full":
                tab["pair"] = np.full((L, s, s), -1, dtype=np.int64)
            elif c == "switch":
                tab["up"] = np.full((L, s), -1, dtype=np.int64)
                tab["down"] = np.full((L, s), -1, dtype=np.int64)
                tab["switch"] = np.full(L, -1, dtype=np.int64)
            else:
                raise RoutingError(f"{fabric.name}: unknown connect {c!r} in dimension {d}")
            self.tables.append(tab)
        for e in range(len(ea.u)):
            u, v = int(ea.u[e]), int(ea.v[e])
            su, sv = ns[u], ns[v]
            if su >= 0 and sv >= 0:
                diff = np.flatnonzero(coords[su] != coords[sv])
                if len(diff) != 1:
                    continue
                d = int(diff[0])
                tab, s = self.tables[d], shape[d]
                line = self.line_of[d][su]
                p, q = int(coords[su, d]), int(coords[sv, d])
                if "pair" in tab:
                    tab["pair"][line, p, q] = 2 * e
                    tab["pair"][line, q, p] = 2 * e + 1
                    continue
                for (a, b, l_ab, l_ba) in ((p, q, 2 * e, 2 * e + 1), (q, p, 2 * e + 1, 2 * e)):
                    if b == (a + 1) % s and (self.connect[d] == "ring" or b == a + 1):
                        tab["plus"][line, a] = l_ab
                        tab["minus"][line, b] = l_ba
            elif su >= 0 or sv >= 0:
                chip_end, sw, l_up, l_dn = ((su, v, 2 * e, 2 * e + 1) if su >= 0
                                            else (sv, u, 2 * e + 1, 2 * e))
                for d, c in enumerate(self.connect):
                    if c == "switch":
                        tab = self.tables[d]
                        line = self.line_of[d][chip_end]
                        if tab["switch"][line] in (-1, sw):
                            tab["switch"][line] = sw
                            p = int(coords[chip_end, d])
                            tab["up"][line, p] = l_up
                            tab["down"][line, p] = l_dn
                            break
        # intact: every adjacency of the grid is present (no failures), so no route is dead
        self.intact = True
        self.uniform_lat = []
        for d, tab in enumerate(self.tables):
            s, c = shape[d], self.connect[d]
            if s == 1:
                present = np.zeros(0, dtype=np.int64)
            elif c == "ring":
                present = np.concatenate([tab["plus"].ravel(), tab["minus"].ravel()])
            elif c == "line":
                present = np.concatenate([tab["plus"][:, :-1].ravel(), tab["minus"][:, 1:].ravel()])
            elif c == "full":
                off = ~np.eye(s, dtype=bool)
                present = tab["pair"][:, off].ravel()
            else:
                present = np.concatenate([tab["up"].ravel(), tab["down"].ravel()])
            self.intact &= bool((present >= 0).all())
            lats = lat[present[present >= 0]]
            self.uniform_lat.append(float(lats[0]) if len(lats) and (lats == lats[0]).all()
                                    else None)
        # prefix sums of latency and of dead links along ring/line directions
        for d, tab in enumerate(self.tables):
            if "plus" in tab:
                for key in ("plus", "minus"):
                    t2 = np.concatenate([tab[key], tab[key]], axis=1)
                    dead = (t2 < 0).astype(np.float64)
                    la = np.where(t2 >= 0, lat[np.maximum(t2, 0)], 0.0)
                    z = np.zeros((t2.shape[0], 1))
                    tab[key + "_lat"] = np.concatenate([z, np.cumsum(la, axis=1)], axis=1)
                    tab[key + "_dead"] = np.concatenate([z, np.cumsum(dead, axis=1)], axis=1)

    # --- per-dimension segments -----------------------------------------------------

    def _slots(self, nodes):
        """Grid slots of nodes; off-grid nodes (per-line switches) map to slot 0, see _off."""
        return np.maximum(self.node_slot[nodes], 0)

    def _off(self, src, dst):
        """Pairs with an end off the grid: routed by the fallback (shortest paths)."""
        return (self.node_slot[src] < 0) | (self.node_slot[dst] < 0)

    def _segments(self, a_slot, b_slot):
        """Yield, per dimension, (d, line, a, b) of the pairs' dimension-order moves."""
        cur = a_slot.copy()
        for d in range(self.ndim):
            a = self.coords[cur, d]
            b = self.coords[b_slot, d]
            line = self.line_of[d][cur]
            yield d, line, a, b
            cur = cur + (b - a) * self.strides[d]

    def _ring_moves(self, d, a, b):
        """Steps and direction fractions along ring/line dimension d: (m_plus, m_minus, fp)."""
        s = self.shape[d]
        if self.connect[d] == "line":
            mp = np.maximum(b - a, 0)
            mm = np.maximum(a - b, 0)
            fp = (b > a).astype(float)
            return mp, mm, fp
        delta = (b - a) % s
        mp = delta
        mm = (s - delta) % s
        fp = np.where(2 * delta < s, 1.0, np.where(2 * delta == s, 0.5, 0.0))
        fp = np.where(delta == 0, 0.0, fp)
        return mp, mm, fp

    def _seg_sum(self, tab, key, line, start, m):
        P = tab[key]
        return P[line, start + m] - P[line, start]

    def evaluate(self, src, dst, w=None, out=None, want_latency=True):
        """Hops, latency (max over the tie ways), dead-path flag; loads into ``out`` if given."""
        a_slot, b_slot = self._slots(src), self._slots(dst)
        P = len(src)
        hops = np.zeros(P, dtype=np.int64)
        lat = np.zeros(P)
        dead = self._off(src, dst)
        intact = self.intact
        pending = []  # load contributions, applied only for pairs with no dead link
        for d, line, a, b in self._segments(a_slot, b_slot):
            tab, s, c = self.tables[d], self.shape[d], self.connect[d]
            move = a != b
            ulat = self.uniform_lat[d]
            if c in ("ring", "line"):
                mp, mm, fp = self._ring_moves(d, a, b)
                start_m = (a - mm + 1) % s if c == "ring" else a - mm + 1
                start_m = np.where(mm > 0, start_m, 0)
                if not intact:
                    dp = self._seg_sum(tab, "plus_dead", line, a, mp) > 0
                    dm = self._seg_sum(tab, "minus_dead", line, start_m, mm) > 0
                    # ECMP drops a dead way at a tie; otherwise a dead way is a dead route
                    tie = fp == 0.5
                    fp = np.where(tie & dp & ~dm, 0.0, np.where(tie & dm & ~dp, 1.0, fp))
                    dead |= move & (((fp > 0) & dp) | ((fp < 1) & dm))
                steps = np.where(fp > 0, mp, mm) * move
                hops += steps
                if want_latency:
                    if ulat is not None and intact:
                        lat += steps * ulat
                    else:
                        use_p, use_m = fp > 0, fp < 1
                        lp = self._seg_sum(tab, "plus_lat", line, a, mp)
                        lm = self._seg_sum(tab, "minus_lat", line, start_m, mm)
                        lat += np.where(use_p & use_m, np.maximum(lp, lm),
                                        np.where(use_p, lp, lm)) * move
                if w is not None:
                    pending.append((d, "ring", line, a, start_m, mp, mm, fp, move))
            elif c == "full":
                lk = tab["pair"][line, a, b]
                if not intact:
                    dead |= move & (lk < 0)
                hops += move
                if want_latency:
                    lat += np.where(move & (lk >= 0), self.lat[np.maximum(lk, 0)], 0.0)
                if w is not None:
                    pending.append((d, "links", lk, move))
            else:  # switch
                up = tab["up"][line, a]
                dn = tab["down"][line, b]
                if not intact:
                    dead |= move & ((up < 0) | (dn < 0))
                hops += 2 * move
                if want_latency:
                    lat += np.where(move, self.lat[np.maximum(up, 0)]
                                    + self.lat[np.maximum(dn, 0)], 0.0)
                if w is not None:
                    pending.append((d, "links", up, move))
                    pending.append((d, "links", dn, move))
        if w is not None:
            ok = ~dead
            for item in pending:
                if item[1] == "links":
                    _, _, lk, move = item
                    m = move & ok
                    out += np.bincount(lk[m], weights=w[m], minlength=self.n_links)
                else:
                    _, _, line, a, start_m, mp, mm, fp, move = item
                    self._ring_loads(item[0], line, a, start_m, mp, mm, fp, w * (move & ok), out)
        return hops, lat, dead

    def bottleneck(self, src, dst):
        """Narrowest link bandwidth per pair: per-dimension minimum over the moved dimensions.

        Exact when each dimension's links share one bandwidth (every builder
        does that); otherwise the dimension's narrowest link is taken, which
        can only under-estimate the path's bandwidth.
        """
        if not hasattr(self, "_dim_bw"):
            self._dim_bw = []
            for tab in self.tables:
                ids = np.concatenate([np.asarray(v).ravel() for k, v in tab.items()
                                      if k in ("plus", "minus", "pair", "up", "down")])
                ids = ids[ids >= 0]
                self._dim_bw.append(float(self.bandwidth[ids].min()) if len(ids) else np.inf)
        a_slot, b_slot = self._slots(src), self._slots(dst)
        out = np.full(len(src), np.inf)
        for d, _line, a, b in self._segments(a_slot, b_slot):
            out = np.where(a != b, np.minimum(out, self._dim_bw[d]), out)
        return out

    def _ring_loads(self, d, line, a, start_m, mp, mm, fp, w, out):
        tab, s = self.tables[d], self.shape[d]
        L = tab["plus"].shape[0]
        width = 2 * s + 1
        for key, start, m, frac in (("plus", a, mp, fp), ("minus", start_m, mm, 1.0 - fp)):
            wt = w * frac
            sel = (wt != 0) & (m > 0)
            if not sel.any():
                continue
            base = line[sel] * width
            diff = (np.bincount(base + start[sel], weights=wt[sel], minlength=L * width)
                    - np.bincount(base + start[sel] + m[sel], weights=wt[sel],
                                  minlength=L * width))
            acc = np.cumsum(diff.reshape(L, width), axis=1)[:, :2 * s]
            acc = acc[:, :s] + acc[:, s:]
            tl = tab[key]
            valid = tl >= 0
            out += np.bincount(tl[valid], weights=acc[valid], minlength=self.n_links)

    def path_links_many(self, src, dst):
        """Links of the dimension-order path of each pair, as a (P, H) array padded with -1.

        Pairs whose path crosses a dead link get -1 everywhere (the caller detours them).
        """
        a_slot, b_slot = self._slots(src), self._slots(dst)
        P = len(src)
        cols = []
        for d, line, a, b in self._segments(a_slot, b_slot):
            tab, s, c = self.tables[d], self.shape[d], self.connect[d]
            move = a != b
            if c == "full":
                cols.append(np.where(move, tab["pair"][line, a, b], -1))
            elif c == "switch":
                cols.append(np.where(move, tab["up"][line, a], -1))
                cols.append(np.where(move, tab["down"][line, b], -1))
            else:
                mp, mm, fp = self._ring_moves(d, a, b)
                plus = fp >= 0.5
                if not self.intact:
                    dp = self._seg_sum(tab, "plus_dead", line, a, mp) > 0
                    plus = np.where(fp == 0.5, ~dp, plus)
                steps = np.where(plus, mp, mm) * move
                sign = np.where(plus, 1, -1)
                for k in range(int(steps.max()) if P else 0):
                    pos = (a + sign * k) % s
                    lk = np.where(plus, tab["plus"][line, pos], tab["minus"][line, pos])
                    cols.append(np.where(k < steps, lk, -1))
        if not cols:
            return np.full((P, 0), -1, dtype=np.int64)
        M = np.stack(cols, axis=1)
        # move each row's links to the front, in order
        valid = M >= 0
        order = np.argsort(~valid, axis=1, kind="stable")
        M = np.take_along_axis(M, order, axis=1)
        width = int(valid.sum(axis=1).max()) if P else 0
        return M[:, :width]

    def path(self, s, t):
        a_slot, b_slot = self._slots(np.array([s])), self._slots(np.array([t]))
        links = []
        for d, line, a, b in self._segments(a_slot, b_slot):
            tab, sz, c = self.tables[d], self.shape[d], self.connect[d]
            line, a, b = int(line[0]), int(a[0]), int(b[0])
            if a == b:
                continue
            if c in ("ring", "line"):
                mp, mm, fp = self._ring_moves(d, np.array([a]), np.array([b]))
                plus = fp[0] >= 0.5
                if fp[0] == 0.5:  # tie: + unless + is dead and - alive
                    dp = self._seg_sum(tab, "plus_dead", line, a, int(mp[0])) > 0
                    plus = not dp
                steps, key, dirn = (int(mp[0]), "plus", 1) if plus else (int(mm[0]), "minus", -1)
                p = a
                for _ in range(steps):
                    links.append(int(tab[key][line, p]))
                    p = (p + dirn) % sz
            elif c == "full":
                links.append(int(tab["pair"][line, a, b]))
            else:
                links += [int(tab["up"][line, a]), int(tab["down"][line, b])]
        return links


# -- the router --------------------------------------------------------------------------


class Router:
    """Routes pairs of nodes of one fabric by its policy (see the module docstring).

    Get one from :attr:`fabric.Fabric.router` (cached), or construct one to
    choose the policy or the ECMP mode.

    Parameters
    ----------
    fabric : Fabric
    policy : str, optional
        One of :data:`POLICIES`. Default: the one the fabric's family implies.
    ecmp : {"all", "hash"}
        ``"all"``: every equal-cost path carries an equal share of a pair's
        bytes. ``"hash"``: each pair uses one path, chosen at every branch by a
        deterministic hash of (source, destination, branching node), as a
        switch hashes a flow's header with its own seed.

    Attributes
    ----------
    link_tail, link_head : ndarray of int64, shape (2E,)
        Node indices of each directed link's ends.
    link_bandwidth : ndarray, shape (2E,)
        Bytes per second of each directed link.
    link_latency : ndarray, shape (2E,)
        Seconds, one way.

    Examples
    --------
    >>> import topologies
    >>> f = topologies.build("fattree:k=4")
    >>> r = f.router
    >>> r.policy, len(r.link_tail) == 2 * f.graph.number_of_edges()
    ('up-down', True)
    >>> i = f.endpoint_indices
    >>> int(r.hops(i[:1], i[-1:])[0])
    6
    >>> loads = r.loads(i[:1], i[-1:], 1000.0)   # four equal-cost paths, 250 B each
    >>> sorted(set(loads[loads > 0].round(3).tolist()))
    [250.0, 500.0, 1000.0]
    """

    def __init__(self, fabric, policy=None, ecmp="all"):
        if policy is None:
            policy = default_policy(fabric)
        if policy not in POLICIES:
            raise ValueError(f"policy must be one of {', '.join(POLICIES)}, got {policy!r}")
        if ecmp not in ECMP_MODES:
            raise ValueError(f"ecmp must be one of {', '.join(ECMP_MODES)}, got {ecmp!r}")
        if policy == "dimension-order" and "shape" not in fabric.params:
            raise RoutingError(f"{fabric.name}: dimension-order routing needs a hypermesh "
                               f"fabric with params['shape']")
        self.fabric = fabric
        self.policy = policy
        self.ecmp = ecmp
        ea = fabric.edge_arrays
        self.link_tail, self.link_head = _all_links(fabric)
        self.link_bandwidth = np.repeat(np.asarray(ea.bandwidth, dtype=float), 2)
        self.link_latency = np.repeat(np.asarray(ea.latency, dtype=float), 2)
        for a in (self.link_tail, self.link_head, self.link_bandwidth, self.link_latency):
            a.flags.writeable = False
        self.n_links = len(self.link_tail)
        self._names = fabric.nodes
        builders = {"up-down": _updown_graph, "minimal": _minimal_graph,
                    "shortest": _shortest_graph, "dimension-order": _shortest_graph}
        self._engine = _Engine(fabric, builders[policy], self.link_tail, self.link_head,
                               self.link_latency, self._names)
        self._dor = (_DimOrder(fabric, self.link_latency, self.link_bandwidth, self.n_links,
                               self._engine)
                     if policy == "dimension-order" else None)

    def __repr__(self):
        return f"Router({self.fabric.name!r}, policy={self.policy!r}, ecmp={self.ecmp!r})"

    # -- input handling --------------------------------------------------------------

    def _nodes(self, x, what):
        a = np.asarray(x)
        if a.dtype.kind not in "iu":
            raise TypeError(f"{what} must be node indices (integers), got dtype {a.dtype}")
        a = np.atleast_1d(a).astype(np.int64, copy=False)
        N = len(self._names)
        if a.size and (a.min() < 0 or a.max() >= N):
            bad = int(a[(a < 0) | (a >= N)][0])
            raise NodeError(f"{self.fabric.name}: {what} holds node index {bad}, "
                            f"outside 0..{N - 1}")
        return a

    def _pairs(self, src, dst, nbytes=None):
        s = self._nodes(src, "src")
        d = self._nodes(dst, "dst")
        try:
            s, d = np.broadcast_arrays(s, d)
        except ValueError:
            raise ValueError(f"src and dst must have the same length, got {s.shape} and "
                             f"{d.shape}") from None
        if nbytes is None:
            return s, d
        w = np.asarray(nbytes, dtype=float)
        if w.ndim and w.shape != s.shape:
            raise ValueError(f"nbytes must be a scalar or have the length of src ({len(s)}), "
                             f"got shape {w.shape}")
        if (w < 0).any() or not np.isfinite(w).all():
            raise ValueError("nbytes must be finite and >= 0")
        return s, d, np.broadcast_to(w, s.shape)

    # -- the contract ----------------------------------------------------------------

    def _dor_split(self, s, d):
        """Evaluate dimension-order routing; return (hops, lat, dead mask)."""
        return self._dor.evaluate(s, d)

    def loads(self, src, dst, nbytes):
        """Bytes each directed link carries when every pair ``src[i] -> dst[i]`` sends ``nbytes``.

        Parameters
        ----------
        src, dst : array_like of int
            Node indices (``fabric.node_index``); broadcast against each other.
        nbytes : float or array_like
            Bytes per pair (a scalar or one per pair). A pair with ``src == dst``
            loads no link.

        Returns
        -------
        ndarray, shape (2E,)
        """
        s, d, w = self._pairs(src, dst, nbytes)
        out = np.zeros(self.n_links)
        w = np.ascontiguousarray(w, dtype=float)
        if self._dor is not None:
            step = max(1, _BLOCK // 8)
            for i in range(0, len(s), step):
                ss, dd, ww = s[i:i + step], d[i:i + step], w[i:i + step]
                _, _, dead = self._dor.evaluate(ss, dd, ww, out, want_latency=False)
                if dead.any():
                    self._engine.loads(ss[dead], dd[dead], ww[dead], out)
            return out
        if self.ecmp == "hash":
            return self._engine.hash_loads(s, d, w, out)
        return self._engine.loads(s, d, w, out)

    def loads_matrix(self, matrix):
        """Link loads of a traffic matrix between endpoints (rank x rank, bytes).

        ``matrix`` is a dense array, a scipy sparse matrix, or an object with
        ``shape`` and ``rows(start, stop)`` returning a dense block of rows; it is
        processed in blocks of rows so a large uniform matrix need not be stored.
        """
        n = self.fabric.n_endpoints
        shape = getattr(matrix, "shape", None)
        if shape is None or tuple(shape) != (n, n):
            raise ValueError(f"matrix must be {n} x {n} (ranks of {self.fabric.name}), "
                             f"got shape {shape}")
        ep = self.fabric.endpoint_indices
        out = np.zeros(self.n_links)
        step = max(1, _BLOCK // max(n, 1))
        for r0 in range(0, n, step):
            r1 = min(n, r0 + step)
            if hasattr(matrix, "rows"):
                block = np.asarray(matrix.rows(r0, r1), dtype=float)
            elif sp.issparse(matrix):
                block = matrix[r0:r1].toarray()
            else:
                block = np.asarray(matrix[r0:r1], dtype=float)
            if (block < 0).any() or not np.isfinite(block).all():
                raise ValueError("traffic matrix entries must be finite and >= 0")
            if self._dor is None and self.ecmp == "all":
                self._engine.loads_rows(ep[r0:r1], ep, block, out)
                continue
            rr, cc = np.nonzero(block)
            if len(rr):
                out += self.loads(ep[r0 + rr], ep[cc], block[rr, cc])
        return out

    def hops(self, src, dst):
        """Hops (links crossed) from ``src[i]`` to ``dst[i]``, as an int64 array."""
        s, d = self._pairs(src, dst)
        return self._hops_latency(s, d, want_latency=False)[0]

    def latency(self, src, dst):
        """One-way path latency in seconds: the sum of link latencies along the path.

        Where the ECMP paths of a pair differ in latency, the largest is returned.
        """
        s, d = self._pairs(src, dst)
        return self._hops_latency(s, d)[1]

    def _hops_latency(self, s, d, want_latency=True):
        hops, lat, _ = self._measure(s, d, want_latency)
        return hops, lat

    def _measure(self, s, d, want_latency=True, want_bandwidth=False):
        bwarr = self.link_bandwidth if want_bandwidth else None
        if self._dor is not None:
            hops = np.zeros(len(s), dtype=np.int64)
            lat = np.zeros(len(s))
            bw = np.full(len(s), np.inf)
            dead = np.zeros(len(s), dtype=bool)
            step = max(1, _BLOCK // 8)
            for i in range(0, len(s), step):
                sl = slice(i, i + step)
                hops[sl], lat[sl], dead[sl] = self._dor.evaluate(s[sl], d[sl],
                                                                 want_latency=want_latency)
                if want_bandwidth:
                    bw[sl] = self._dor.bottleneck(s[sl], d[sl])
            if dead.any():
                h2, l2, b2 = self._engine.hops_latency(s[dead], d[dead], want_latency, bwarr)
                hops[dead], lat[dead], bw[dead] = h2, l2, b2
            return hops, lat, bw
        return self._engine.hops_latency(s, d, want_latency, bwarr)

    def bottleneck(self, src, dst):
        """Bandwidth (B/s) of the narrowest link on the pair's paths (the worst ECMP path).

        ``inf`` for a pair with ``src == dst``.
        """
        s, d = self._pairs(src, dst)
        return self._measure(s, d, want_latency=False, want_bandwidth=True)[2]

    def path_links(self, src, dst):
        """The directed links of :meth:`path`, in order."""
        s, d = self._pairs(src, dst)
        if s.size != 1:
            raise ValueError("path_links routes one pair; use loads/hops for many")
        s, d = int(s[0]), int(d[0])
        if s == d:
            return []
        if self._dor is not None:
            _, _, dead = self._dor.evaluate(np.array([s]), np.array([d]))
            if not dead[0]:
                return self._dor.path(s, d)
        return self._engine.path(s, d)

    def path_links_many(self, src, dst):
        """The directed links of :meth:`path` for many pairs: an int64 (P, H) array, -1 padded.

        Row ``i`` holds the links of the path from ``src[i]`` to ``dst[i]`` in
        order; ``H`` is the longest path's hop count.
        """
        s, d = self._pairs(src, dst)
        if self._dor is not None:
            _, _, dead = self._dor.evaluate(s, d, want_latency=False)
            M = self._dor.path_links_many(s, d)
            if dead.any():
                rest = self._engine_paths(s[dead], d[dead])
                width = max(M.shape[1], rest.shape[1])
                M = np.pad(M, ((0, 0), (0, width - M.shape[1])), constant_values=-1)
                M[dead] = np.pad(rest, ((0, 0), (0, width - rest.shape[1])), constant_values=-1)
            return M
        return self._engine_paths(s, d)

    def _engine_paths(self, s, d):
        steps = list(self._engine.hash_steps(s, d))
        count = np.zeros(len(s), dtype=np.int64)
        for pairs, _ in steps:
            count[pairs] += 1
        M = np.full((len(s), int(count.max()) if len(s) else 0), -1, dtype=np.int64)
        pos = np.zeros(len(s), dtype=np.int64)
        for pairs, links in steps:
            M[pairs, pos[pairs]] = links
            pos[pairs] += 1
        return M

    def path(self, src, dst):
        """The nodes of the deterministic path from ``src`` to ``dst`` (node indices in, names out).

        For dimension-order routing the dimension-order path (``+`` way at a
        tie); otherwise the equal-cost path chosen by the deterministic hash.
        """
        links = self.path_links(src, dst)
        s = int(self._nodes(src, "src")[0])
        nodes = [self._names[s]]
        nodes += [self._names[int(self.link_head[k])] for k in links]
        return nodes

    def link_index(self, u, v):
        """The directed link from node ``u`` to node ``v`` (names or ranks), or NodeError."""
        f = self.fabric
        a, b = f.node(u), f.node(v)
        G = f.graph
        if not G.has_edge(a, b):
            raise NodeError(f"{f.name}: there is no link between {a!r} and {b!r}")
        e = self._edge_number[(a, b) if (a, b) in self._edge_number else (b, a)]
        ia = f.node_index[a]
        return 2 * e if int(f.edge_arrays.u[e]) == ia else 2 * e + 1

    @property
    def _edge_number(self):
        if not hasattr(self, "_edge_no"):
            self._edge_no = {(a, b): e for e, (a, b) in enumerate(self.fabric.graph.edges)}
        return self._edge_no

    def link_name(self, k):
        """``(tail, head)`` node names of directed link ``k``."""
        return self._names[int(self.link_tail[k])], self._names[int(self.link_head[k])]


def route(fabric, src, dst):
    """The path from ``src`` to ``dst`` on ``fabric`` by its routing policy.

    Parameters
    ----------
    fabric : Fabric
    src, dst : node name or rank
        Anything :meth:`Fabric.node` accepts (``"chip3"``, ``3``, ``"rank:3"``).

    Returns
    -------
    list
        Node names from ``src`` to ``dst``.

    Raises
    ------
    NodeError
        If ``src`` or ``dst`` names no node.
    RoutingError
        If no path remains between them.

    Examples
    --------
    >>> import topologies
    >>> route(topologies.build("sd200-ultra"), 0, 127)
    ['chip0', 'chip7', 'chip31', 'chip127']
    """
    a, b = fabric.node(src), fabric.node(dst)
    idx = fabric.node_index
    return fabric.router.path(idx[a], idx[b])


def route_many(fabric, src, dst):
    """Hops and one-way latency (s) of many pairs (names or ranks): ``(hops, latency)`` arrays.

    Examples
    --------
    >>> import topologies
    >>> f = topologies.build("sd200-ultra")
    >>> h, t = route_many(f, [0, 0], [1, 127])
    >>> h.tolist(), (t * 1e9).round().tolist()
    ([1, 3], [230.0, 690.0])
    """
    idx = fabric.node_index
    s = np.array([idx[fabric.node(x)] for x in src], dtype=np.int64)
    d = np.array([idx[fabric.node(x)] for x in dst], dtype=np.int64)
    return fabric.router._hops_latency(s, d)
