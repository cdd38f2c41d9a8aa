"""The general routing engine behind :class:`fabric.Router` (private).

A policy is a directed *state graph* (:class:`_StateGraph`); :class:`Engine`
routes pairs over it with ECMP in one of two ways that give the same loads:

* per source: breadth-first distances, path counts and the Brandes
  back-propagation of demand, batched over sources (many destinations per source:
  traffic matrices);
* pair by pair: each distinct (start state, target state) pair over its own
  shortest-path DAG, from distance and path-count tables from and to each state
  that the engine caches across calls (few destinations per source: rings,
  shifts, the steps of a schedule, and :meth:`Engine.loads_grouped`).

The weighted split (``ecmp="weighted"``) runs pair by pair, or swept per target
state for traffic matrices. See the docstring of :mod:`fabric._routing` for the
policies and the method.
"""

import numpy as np
import scipy.sparse as sp
from scipy.sparse import csgraph

from ._errors import RoutingError
from ._routing_updown import Cones, distinct

__all__ = []

# Work arrays of a batch are kept below about this many float64 entries (32 MiB).
BLOCK = 1 << 22

# The per-state tables an engine caches (distances and path counts from and to each state
# routed so far) are kept below about this many float64 entries per table (64 MiB; four
# tables, so at most 256 MiB per router).
_TABLE = 1 << 23

# An up/down state graph of at least this many states routes pairs from cones
# (:mod:`fabric._routing_updown`: the same DAGs and numbers, without the per-state tables)
# when the cones of a pair hold at most 1/CONE_RATIO of its states. Below that the tables
# are small, and the engine keeps to them.
CONE_STATES = 1 << 13
CONE_RATIO = 8

# A pair DAG's candidate arcs (each state on a pair's shortest paths, once per out-arc) are
# tested this many at a time: a switch state's every arc for every pair is millions of
# entries, and work arrays this small stay in the cache instead of being faulted in afresh.
_DAG_CHUNK = 1 << 16


def flow_hash(*keys):
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


def flow_keys(fabric):
    """Each node's key in :func:`flow_hash` (an int64 array over ``fabric.nodes``): its index
    in the intact fabric (:attr:`fabric.Fabric.intact`), so that a failure, which drops nodes
    and shifts later indices, does not re-hash the flows it leaves alone, and a failed chip
    and the same chip cut off by all its links leave the other chips the same hash choices.
    On an intact fabric, the node's own index; a node the intact fabric lacks (a graph
    replaced by hand) is keyed after all of its nodes, in graph order."""
    base = fabric.intact
    if base is None:
        return np.arange(len(fabric.nodes), dtype=np.int64)
    idx = base.node_index
    extra = iter(range(len(idx), len(idx) + len(fabric.nodes)))
    return np.array([idx[n] if n in idx else next(extra) for n in fabric.nodes], dtype=np.int64)


# -- the state graph of a policy -------------------------------------------------------


class _StateGraph:
    """A directed graph of routing states; each state is a node, each arc a directed link.

    ``node_states[n]`` lists the states of node ``n`` (-1 padded): column 0 is
    where a route from ``n`` starts; a route to ``n`` ends in whichever of its
    states is nearest. States of nodes in ``drop`` (leaf chips, routed at the
    ends by :class:`Engine`) and the arcs touching them are left out.
    """

    def __init__(self, n_nodes, state_node, tail, head, link, node_states, drop=None,
                 phase=None, level=None):
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
            if phase is not None:
                phase = np.asarray(phase)[keep_state]
            if level is not None:
                level = np.asarray(level)[keep_state]
            node_states = np.where(node_states >= 0, new_id[np.maximum(node_states, 0)], -1)
        self.n_nodes = n_nodes
        self.state_node = state_node
        self.n_states = len(self.state_node)
        # up/down graphs: 0 for a climbing state, 1 for a descending one (None elsewhere)
        self.phase = None if phase is None else np.asarray(phase, dtype=np.int8)
        self.level = None if level is None else np.asarray(level, dtype=float)
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


def all_links(fabric):
    ea = fabric.edge_arrays
    E = len(ea.u)
    tail = np.empty(2 * E, dtype=np.int64)
    head = np.empty(2 * E, dtype=np.int64)
    tail[0::2], head[0::2] = ea.u, ea.v
    tail[1::2], head[1::2] = ea.v, ea.u
    return tail, head


def shortest_graph(fabric, drop=None):
    N = len(fabric.nodes)
    tail, head = all_links(fabric)
    return _StateGraph(N, np.arange(N), tail, head, np.arange(len(tail)),
                       np.arange(N)[:, None], drop)


def _levels(fabric):
    level = np.empty(len(fabric.nodes))
    for i, (n, d) in enumerate(fabric.graph.nodes(data=True)):
        kind = d.get("kind")
        level[i] = (-2 if kind == "chip" else float(d.get("tier", 0)) if kind == "switch"
                    else -1)
    return level


def updown_graph(fabric, drop=None):
    """States (n, up) = n and (n, down) = N + n; up arcs climb, down arcs descend."""
    N = len(fabric.nodes)
    tail, head = all_links(fabric)
    lev = _levels(fabric)
    link = np.arange(len(tail))
    up = lev[head] > lev[tail]
    down = lev[head] < lev[tail]
    st_t = np.concatenate([tail[up], tail[down], N + tail[down]])
    st_h = np.concatenate([head[up], N + head[down], N + head[down]])
    st_l = np.concatenate([link[up], link[down], link[down]])
    states = np.stack([np.arange(N), N + np.arange(N)], axis=1)
    return _StateGraph(N, np.r_[np.arange(N), np.arange(N)], st_t, st_h, st_l, states, drop,
                       phase=np.r_[np.zeros(N), np.ones(N)], level=np.r_[lev, lev])


def group_of(fabric):
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


def minimal_graph(fabric, drop=None):
    """Dragonfly minimal routing: phase 0 before the global hop, phase 1 after it."""
    N = len(fabric.nodes)
    tail, head = all_links(fabric)
    link = np.arange(len(tail))
    g = group_of(fabric)
    is_global = (g[tail] != g[head]) & (g[tail] >= 0) & (g[head] >= 0)
    loc = ~is_global
    st_t = np.concatenate([tail[loc], N + tail[loc], tail[is_global]])
    st_h = np.concatenate([head[loc], N + head[loc], N + head[is_global]])
    st_l = np.concatenate([link[loc], link[loc], link[is_global]])
    states = np.stack([np.arange(N), N + np.arange(N)], axis=1)
    return _StateGraph(N, np.r_[np.arange(N), np.arange(N)], st_t, st_h, st_l, states, drop)


def _slots(S, pr, tail, head, *extra):
    """One slot per distinct (pair, state) of a batch of pair DAGs (compact work arrays).

    Returns the slots of the arcs' tails and heads, of each ``(pair, state)`` array
    pair in ``extra``, and the number of slots.
    """
    keys = [pr * S + tail, pr * S + head] + [p * S + x for p, x in extra]
    uniq = distinct(np.concatenate(keys))
    slots = [np.searchsorted(uniq, k) for k in keys]
    return slots[0], slots[1], slots[2:], len(uniq)


# -- the general engine: BFS + path counts + Brandes accumulation ------------------------


class Engine:
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
        leaf = kinds & (deg == 1)
        # two chips joined only to each other (a user's two-chip graph, or what failures
        # leave of one) are both kept: each is the other's only neighbour, which a leaf's
        # route must go through, so neither may be left out of the state graph
        lo = np.flatnonzero(leaf[link_tail])
        leaf[link_tail[lo[leaf[link_head[lo]]]]] = False
        self.leaf = leaf
        self.leaf_out = np.full(N, -1, dtype=np.int64)
        self.leaf_in = np.full(N, -1, dtype=np.int64)
        self.leaf_nbr = np.arange(N, dtype=np.int64)
        lo = np.flatnonzero(self.leaf[link_tail])
        self.leaf_out[link_tail[lo]] = lo
        self.leaf_nbr[link_tail[lo]] = link_head[lo]
        li = np.flatnonzero(self.leaf[link_head])
        self.leaf_in[link_head[li]] = li
        self.sg = builder(fabric, self.leaf)
        # shortest paths: one state per node and every link both ways, so a pair is routed
        # exactly when its ends are connected (reachable() by component labels)
        self._symmetric = builder is shortest_graph
        self._labels = None
        self.link_latency = link_latency
        self.arc_lat = link_latency[self.sg.link]
        self.n_links = len(link_tail)
        self.names = names
        self.key = flow_keys(fabric)          # the hash's node keys (intact indices)
        self.outdeg = np.diff(self.sg.indptr)
        # per-state tables, [forward, reverse]: row of each state, distances, path counts
        S = self.sg.n_states
        self._row = [np.full(S, -1, dtype=np.int64), np.full(S, -1, dtype=np.int64)]
        self._D = [np.zeros((0, S)), np.zeros((0, S))]
        self._sig = [np.zeros((0, S)), np.zeros((0, S))]
        self._cones = None  # decided on first use (:meth:`_pair_unit`)

    def _pair_unit(self):
        """Work per distinct state pair routed pair by pair: its cones, or a state row.

        Decides once whether to route pairs from cones (:data:`CONE_STATES`).
        """
        if self._cones is None:
            sg = self.sg
            self._cones = (False, sg.n_states)
            if sg.phase is not None and sg.n_states >= CONE_STATES:
                ep = np.asarray(self.f.endpoint_indices, dtype=np.int64)
                ep = ep[np.linspace(0, len(ep) - 1, min(len(ep), 32)).astype(np.int64)]
                st = sg.node_states[self.leaf_nbr[ep]]
                starts, targets = st[:, 0][st[:, 0] >= 0], st[:, 1][st[:, 1] >= 0]
                if len(starts) and len(targets):
                    cones = Cones(sg)
                    unit = cones.cost(starts, targets)
                    if CONE_RATIO * unit <= sg.n_states:
                        self._cones = (cones, unit)
        return self._cones[1]

    @property
    def cones(self):
        """The cone router (:class:`fabric._routing_updown.Cones`) if pairs use it, else None."""
        self._pair_unit()
        return self._cones[0] or None

    def _pair_batches(self, n):
        """Slices of ``n`` state pairs (or starts) small enough for one pair-by-pair block."""
        return self._batches(n, 4 * self._pair_unit())

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
        a, b = self.names[int(s)], self.names[int(d)]
        raise RoutingError(f"{self.f.name}: no route from {a!r} to {b!r}"
                           f"{self.f.failures.explain(a, b)}")

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

    def reachable(self, src, dst):
        """Which pairs the policy can route (a boolean mask; never raises)."""
        ok = np.ones(len(src), dtype=bool)
        cs, cd, _, _ = self._ends(src, dst)
        inner = np.flatnonzero((cs != cd) & (src != dst))
        if not len(inner):
            return ok
        st = self.sg.node_states[cs[inner], 0]
        ok[inner[st < 0]] = False
        inner, st = inner[st >= 0], st[st >= 0]
        if self._symmetric:
            if self._labels is None:
                self._labels = csgraph.connected_components(self.sg.A, directed=False)[1]
            end = self.sg.node_states[cd[inner], 0]
            ok[inner] = (end >= 0) & (self._labels[st] == self._labels[np.maximum(end, 0)])
            return ok
        uniq, order, bounds, inv = self._groups(st)
        for bs in self._batches(len(uniq), self.sg.n_states):
            sel = order[bounds[bs.start]:bounds[bs.stop]]
            D = self.dist(uniq[bs])
            idx = inner[sel]
            cand = self.sg.node_states[cd[idx]]
            dd = np.where(cand >= 0, D[(inv[sel] - bs.start)[:, None], np.maximum(cand, 0)],
                          np.inf)
            ok[idx] = np.isfinite(dd.min(axis=1))
        return ok

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
        step = max(1, int(BLOCK // max(per_row, 1)))
        for i in range(0, n, step):
            yield slice(i, min(n, i + step))

    def _groups(self, start):
        """Pairs grouped by start state: (unique states, pair order, group bounds, inverse)."""
        uniq, inv = np.unique(start, return_inverse=True)
        order = np.argsort(inv, kind="stable")
        bounds = np.searchsorted(inv[order], np.arange(len(uniq) + 1))
        return uniq, order, bounds, inv

    def _counts(self, src, dst, group=None):
        """(distinct inner node pairs, distinct sources, per group summed) of a batch."""
        cs, cd, _, _ = self._ends(src, dst)
        m = cs != cd
        N = len(self.names)
        g = 0 if group is None else group[m].astype(np.int64) * N
        return len(distinct(cs[m] * N + cd[m])), len(distinct(g + cs[m]))

    def loads(self, src, dst, w, out):
        """Add the bytes of pairs (src[i] -> dst[i], w[i]) to ``out`` (per directed link).

        Pair by pair (:meth:`loads_grouped`) when the batch has few distinct
        destinations per source, else by the per-source Brandes sweep; both
        give the same loads.
        """
        keep = (src != dst) & (w != 0)
        src, dst, w = src[keep], dst[keep], w[keep]
        if len(src) == 0:
            return out
        if self._pairs_cheaper(*self._counts(src, dst)):
            out += self.loads_grouped(src, dst, w, np.zeros(len(src), dtype=np.int64), 1)[0]
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

    # -- pair by pair: cached per-state tables, the shortest-path DAG of each pair -------

    def _count(self, D, starts, reverse):
        """Shortest-path counts from (``reverse``: to) each start state, level by level."""
        b = len(starts)
        sigma = np.zeros(D.shape)
        sigma[np.arange(b), starts] = 1.0
        finite = np.isfinite(D)
        maxd = int(D[finite].max()) if finite.any() else 0
        M = self.sg.A if reverse else self.sg.AT
        for lev in range(maxd):
            T = (M @ np.where(D == lev, sigma, 0.0).T).T
            sigma += np.where(D == lev + 1, T, 0.0)
        return sigma

    def _tables(self, states, reverse):
        """Rows of the cached distance and path-count tables for these states.

        Forward tables hold distances and path counts from a state, reverse ones
        to it. A fabric is immutable, so they are kept across calls (up to
        :data:`_TABLE` entries per table; beyond that the cache starts again).
        """
        k = int(reverse)
        row = self._row[k]
        need = distinct(states[row[states] < 0])
        if len(need):
            S = self.sg.n_states
            if (len(self._D[k]) + len(need)) * S > _TABLE:
                row[:] = -1
                self._D[k] = np.zeros((0, S))
                self._sig[k] = np.zeros((0, S))
                need = distinct(states)
            G = self.sg.AT if reverse else self.sg.A
            Ds, sigs = [self._D[k]], [self._sig[k]]
            for bs in self._batches(len(need), 4 * S):
                D = np.atleast_2d(csgraph.shortest_path(G, directed=True, unweighted=True,
                                                        indices=need[bs]))
                Ds.append(D)
                sigs.append(self._count(D, need[bs], reverse))
            row[need] = len(self._D[k]) + np.arange(len(need))
            self._D[k] = np.concatenate(Ds)
            self._sig[k] = np.concatenate(sigs)
        return row[states]

    def _pair_targets(self, start, cd, src, dst):
        """Per pair, the nearest state of the destination node from the start state."""
        cones = self.cones
        if cones is not None:
            z, best = cones.targets(start, cd)
            bad = ~np.isfinite(best)
            if bad.any():
                i = int(np.flatnonzero(bad)[0])
                self._raise(src[i], dst[i])
            return z
        ia = self._tables(start, False)
        return self._targets(self._D[0], ia, cd, src, dst)[0]

    def _pair_dag(self, a, z):
        """The arcs on the shortest paths of each state pair ``a[i] -> z[i]``.

        An arc ``u -> v`` is on them when ``d(a, u) + 1 + d(v, z) = d(a, z)``;
        it carries ``sigma(a, u) sigma(v, z) / sigma(a, z)`` of the pair's bytes:
        equal weight per path, as the Brandes accumulation gives.

        Returns
        -------
        pair, tail, head, arc : ndarray of int64
            The pair (index into ``a``), tail and head states and arc of each entry.
        level : ndarray
            ``d(a, tail)``.
        frac : ndarray
            Fraction of the pair's bytes on the arc.
        """
        cones = self.cones
        if cones is not None:
            return cones.dag(a, z)[:6]
        sg = self.sg
        ia, iz = self._tables(a, False), self._tables(z, True)
        Da, Dz = self._D[0][ia], self._D[1][iz]
        L = Da[np.arange(len(a)), z]
        pp, u = np.nonzero((Da + Dz == L[:, None]) & (Dz > 0))
        # Each (pair, state) entry once per out-arc of the state, in order, a run of entries
        # of about _DAG_CHUNK arcs at a time; per-entry values are spread with np.repeat and
        # a pair's row is read by flat index (the same elements as Da[pr, v]).
        deg = self.outdeg[u]
        start, lev_u, dz_u = sg.indptr[u], Da[pp, u], Dz[pp, u] - 1
        Daf, Dzf, S = Da.ravel(), Dz.ravel(), Da.shape[1]
        ends = np.cumsum(deg)
        cuts = np.searchsorted(ends, np.arange(_DAG_CHUNK, int(ends[-1]) if len(u) else 0,
                                               _DAG_CHUNK), side="right")
        runs = [(lo, hi) for lo, hi in zip([0, *cuts.tolist()], [*cuts.tolist(), len(u)])
                if hi > lo] or [(0, 0)]       # no entry: one empty run gives the dtypes
        parts = []
        for lo, hi in runs:
            d = deg[lo:hi]
            arc = np.repeat(start[lo:hi] - (np.cumsum(d) - d), d) + np.arange(int(d.sum()))
            pr, v, lev = np.repeat(pp[lo:hi], d), sg.head[arc], np.repeat(lev_u[lo:hi], d)
            flat = pr * S + v
            ok = (Daf[flat] == lev + 1) & (Dzf[flat] == np.repeat(dz_u[lo:hi], d))
            parts.append((pr[ok], np.repeat(u[lo:hi], d)[ok], v[ok], arc[ok], lev[ok]))
        pr, uu, v, arc, lev = (np.concatenate(x) for x in zip(*parts))
        Sa, Sz = self._sig[0], self._sig[1]
        frac = Sa[ia[pr], uu] * Sz[iz[pr], v] / Sa[ia[pr], z[pr]]
        return pr, uu, v, arc, lev, frac

    def _by_start(self, start):
        """Index arrays of the pairs, a few distinct start states at a time.

        Few enough that their tables and a pair block's work arrays fit
        :data:`_TABLE` and :data:`BLOCK`. All at once under cones, which batch their
        own work and keep every pair's DAG for the calls that follow.
        """
        if self.cones is not None:
            yield np.arange(len(start))
            return
        uniq, order, bounds, _ = self._groups(start)
        for bs in self._pair_batches(len(uniq)):
            yield order[bounds[bs.start]:bounds[bs.stop]]

    def _pairs_cheaper(self, n_pairs, n_source_rows):
        """Whether routing pair by pair costs less than the per-source Brandes sweep.

        Pair by pair costs about a state row per distinct (start, target) pair;
        the sweep a few passes over all states and arcs per distinct source (per
        group, for a grouped call).
        """
        sg = self.sg
        return n_pairs * self._pair_unit() <= 2 * n_source_rows * (sg.n_states + len(sg.tail))

    def _core(self, src, dst, w, group):
        """Pairs reduced to their start and target states, with the end links' loads.

        Returns (end link loads as (group, link, bytes) triples, start, target,
        group, bytes) of the pairs that cross the state graph.
        """
        cs, cd, pre, post = self._ends(src, dst)
        ends = []
        for lk in (pre, post):
            m = lk >= 0
            ends.append((group[m], lk[m], w[m]))
        inner = np.flatnonzero(cs != cd)
        src, dst, w, group = src[inner], dst[inner], w[inner], group[inner]
        start = self._start(cs[inner], src, dst)
        z = np.empty(len(inner), dtype=np.int64)
        cd = cd[inner]
        for sel in self._by_start(start):
            z[sel] = self._pair_targets(start[sel], cd[sel], src[sel], dst[sel])
        return ends, start, z, group, w

    def _weighted(self, a, pr, uu, v, arc, lev, bandwidth):
        """Per-hop weighted split over a pair DAG: each arc's fraction of its pair's bytes.

        At every state the bytes that reach it leave over its next hops on the
        pair's DAG in proportion to the hops' link bandwidth (weighted-cost
        multipathing, Zhou et al., EuroSys 2014), level by level from the start.
        """
        S = self.sg.n_states
        bw = bandwidth[self.sg.link[arc]]
        key = pr * S + uu
        _, inv = np.unique(key, return_inverse=True)
        inv = np.ravel(inv)
        ratio = bw / np.bincount(inv, weights=bw)[inv]
        order = np.argsort(lev, kind="stable")
        cuts = np.searchsorted(lev[order], np.arange(int(lev.max(initial=0)) + 2))
        iu, iv, (ia0,), n_slots = _slots(S, pr, uu, v, (np.arange(len(a)), a))
        flow = np.zeros(n_slots)
        flow[ia0] = 1.0
        frac = np.empty(len(arc))
        for i in range(len(cuts) - 1):
            sel = order[cuts[i]:cuts[i + 1]]
            f = flow[iu[sel]] * ratio[sel]
            np.add.at(flow, iv[sel], f)
            frac[sel] = f
        return frac

    def _weighted_sweep(self, start, z, w, bandwidth):
        """Link loads of the per-hop weighted split, swept per target state.

        Which next hops a state uses towards ``z`` depends only on the state and
        ``z`` (those one step nearer ``z``), so the bytes of every source bound for
        ``z`` are split together, farthest states first. Used when the pairs have
        many sources per target (a traffic matrix), where :meth:`_weighted` per pair
        would repeat the same work.
        """
        sg = self.sg
        S, A = sg.n_states, len(sg.tail)
        out = np.zeros(self.n_links)
        uz, inv = np.unique(z, return_inverse=True)
        inv = np.ravel(inv)
        bwa = bandwidth[sg.link]
        by_tail = sp.csr_matrix((np.ones(A), (sg.tail, np.arange(A))), shape=(S, A))
        by_head = sp.csr_matrix((np.ones(A), (sg.head, np.arange(A))), shape=(S, A))
        for bs in self._batches(len(uz), 6 * max(S, A)):
            iz = self._tables(uz[bs], True)
            Dz = self._D[1][iz]  # (b, S): distance to each target
            m = (inv >= bs.start) & (inv < bs.stop)
            flow = np.zeros((len(iz), S))
            np.add.at(flow, (inv[m] - bs.start, start[m]), w[m])
            Dt = Dz[:, sg.tail]
            wt = np.where(Dz[:, sg.head] == Dt - 1, bwa, 0.0)  # (b, A): next hops
            tot = (by_tail @ wt.T).T  # (b, S)
            ratio = wt / np.where(tot > 0, tot, 1.0)[:, sg.tail]
            finite = np.isfinite(Dz)
            carried = np.zeros(A)
            for lev in range(int(Dz[finite].max()) if finite.any() else 0, 0, -1):
                af = np.where(Dt == lev, flow[:, sg.tail] * ratio, 0.0)
                flow += (by_head @ af.T).T
                carried += af.sum(axis=0)
            out += np.bincount(sg.link, weights=carried, minlength=self.n_links)
        return out

    def loads_grouped(self, src, dst, w, group, n_groups, bandwidth=None):
        """Per group, the bytes each directed link carries: an (n_groups, 2E) array.

        Pairs are reduced to distinct (start state, target state) pairs, each
        routed once over its own shortest-path DAG (:meth:`_pair_dag`), and the
        groups' demands applied to all of them at once (a sparse product).
        With ``bandwidth`` (per directed link) the bytes split hop by hop in
        proportion to it (:meth:`_weighted`) instead of equally per path.
        """
        nL = self.n_links
        out = np.zeros(n_groups * nL)
        keep = (src != dst) & (w != 0)
        src, dst, w, group = src[keep], dst[keep], w[keep], group[keep]
        if len(src) == 0:
            return out.reshape(n_groups, nL)
        ends, start, z, group, w = self._core(src, dst, w, group)
        for g, lk, ww in ends:
            out += np.bincount(g * nL + lk, weights=ww, minlength=n_groups * nL)
        out = out.reshape(n_groups, nL)
        if len(start) == 0:
            return out
        S = self.sg.n_states
        keys, inv = np.unique(start * S + z, return_inverse=True)
        inv = np.ravel(inv)
        if bandwidth is not None and not self._pairs_cheaper(len(keys),
                                                             len(distinct(group * S + z))):
            for g in distinct(group):
                m = group == g
                out[g] += self._weighted_sweep(start[m], z[m], w[m], bandwidth)
            return out
        W = sp.csr_matrix((w, (group, inv)), shape=(n_groups, len(keys)))
        if self.cones is not None:
            W = W.tocsc()  # many column blocks: slice them without a pass over all of W
        a_all, z_all = keys // S, keys % S
        for bs in self._pair_batches(len(keys)):
            pr, uu, v, arc, lev, frac = self._pair_dag(a_all[bs], z_all[bs])
            if bandwidth is not None:
                frac = self._weighted(a_all[bs], pr, uu, v, arc, lev, bandwidth)
            F = sp.csr_matrix((frac, (pr, self.sg.link[arc])), shape=(bs.stop - bs.start, nL))
            out += (W[:, bs] @ F).toarray()
        return out

    def pair_hops_latency(self, src, dst, want_latency=True, bandwidth=None):
        """:meth:`hops_latency` pair by pair, over each pair's shortest-path DAG."""
        P = len(src)
        hops = np.zeros(P, dtype=np.int64)
        lat = np.zeros(P)
        bw = np.full(P, np.inf)
        same = src == dst
        cs, cd, pre, post = self._ends(src, dst)
        ll = self.link_latency
        # index -1 (no such link) reads the appended 0 s / inf B/s (also on a fabric left
        # with no links at all)
        ll0 = np.append(ll, 0.0)
        bw0 = None if bandwidth is None else np.append(bandwidth, np.inf)
        for lk in (pre, post):
            use = (lk >= 0) & ~same
            hops += use
            lat += np.where(use, ll0[lk], 0.0)
            if bandwidth is not None:
                bw = np.where(use, np.minimum(bw, bw0[lk]), bw)
        inner = np.flatnonzero((cs != cd) & ~same)
        if len(inner) == 0:
            return hops, lat, bw
        s_, d_ = src[inner], dst[inner]
        start = self._start(cs[inner], s_, d_)
        z = np.empty(len(inner), dtype=np.int64)
        cdi = cd[inner]
        for sel in self._by_start(start):
            z[sel] = self._pair_targets(start[sel], cdi[sel], s_[sel], d_[sel])
        S = self.sg.n_states
        keys, inv = np.unique(start * S + z, return_inverse=True)
        inv = np.ravel(inv)
        a_all, z_all = keys // S, keys % S
        n = len(keys)
        khops = np.zeros(n)
        klat = np.zeros(n)
        kbw = np.full(n, np.inf)
        cones = self.cones
        for bs in self._pair_batches(n):
            a, t = a_all[bs], z_all[bs]
            if cones is not None:
                if not want_latency and bandwidth is None:
                    khops[bs] = cones.dist(a, t)
                    continue
                pr, uu, v, arc, lev, _, khops[bs] = cones.dag(a, t)
            else:
                ia = self._tables(a, False)  # first: it may replace the table arrays
                khops[bs] = self._D[0][ia, t]
                if not want_latency and bandwidth is None:
                    continue
                pr, uu, v, arc, lev, _ = self._pair_dag(a, t)
            order = np.argsort(lev, kind="stable")
            pr, uu, v, arc, lev = pr[order], uu[order], v[order], arc[order], lev[order]
            cuts = np.searchsorted(lev, np.arange(int(lev.max(initial=0)) + 2))
            r = np.arange(len(a))
            links = self.sg.link[arc]
            # (pair, state) -> one slot each, for the states on the pairs' DAGs
            iu, iv, (ia0, it), n_slots = _slots(S, pr, uu, v, (r, a), (r, t))
            if want_latency:
                acc = np.full(n_slots, -np.inf)
                acc[ia0] = 0.0
                al = ll[links]
                for i in range(len(cuts) - 1):
                    sl = slice(cuts[i], cuts[i + 1])
                    np.maximum.at(acc, iv[sl], acc[iu[sl]] + al[sl])
                klat[bs] = acc[it]
            if bandwidth is not None:
                acc = np.full(n_slots, np.inf)
                ab = bandwidth[links]
                for i in range(len(cuts) - 1):
                    sl = slice(cuts[i], cuts[i + 1])
                    np.minimum.at(acc, iv[sl], np.minimum(acc[iu[sl]], ab[sl]))
                kbw[bs] = acc[it]
        hops[inner] += khops[inv].astype(np.int64)
        lat[inner] += klat[inv]
        bw[inner] = np.minimum(bw[inner], kbw[inv])
        return hops, lat, bw

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
        if self._pairs_cheaper(*self._counts(src[src != dst], dst[src != dst])):
            return self.pair_hops_latency(src, dst, want_latency, bandwidth)
        sg = self.sg
        P = len(src)
        hops = np.zeros(P, dtype=np.int64)
        lat = np.zeros(P)
        bw = np.full(P, np.inf)
        cs, cd, pre, post = self._ends(src, dst)
        same = src == dst
        hops += ((pre >= 0) & ~same).astype(np.int64) + ((post >= 0) & ~same)
        ll0 = np.append(self.link_latency, 0.0)  # index -1 (no link): 0 s, inf B/s
        bw0 = None if bandwidth is None else np.append(bandwidth, np.inf)
        for lk in (pre, post):
            use = (lk >= 0) & ~same
            lat += np.where(use, ll0[lk], 0.0)
            if bandwidth is not None:
                bw = np.where(use, np.minimum(bw, bw0[lk]), bw)
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

    def next_hops(self, nodes, targets, max_states):
        """First links of the policy's equal-cost paths from each node to each target.

        Returns ``{(v, t): (link, ...)}`` (node indices). Needs all-pairs state distances:
        refused (RoutingError) above ``max_states`` states.
        """
        eng = self
        sg = eng.sg
        if sg.n_states > max_states:
            raise RoutingError(f"{self.f.name}: forwarding tables need all-pairs state "
                               f"distances, refused above {max_states} states ({sg.n_states})")
        D = csgraph.shortest_path(sg.A, directed=True, unweighted=True)
        out = {}
        T = np.asarray(targets, dtype=np.int64)
        cd = eng.leaf_nbr[T]
        cand = sg.node_states[cd]  # (T, m), -1 padded
        for v in nodes:
            if eng.leaf[v]:
                out.update(dict.fromkeys([(v, t) for t in T[T != v].tolist()],
                                         (int(eng.leaf_out[v]),)))
                continue
            last = cd == v  # targets hanging off this node: their own link
            for t in T[last & (T != v)].tolist():
                out[(v, t)] = (int(eng.leaf_in[t]),)
            x = sg.node_states[v, 0]
            if x < 0:
                continue
            dd = np.where(cand >= 0, D[x, np.maximum(cand, 0)], np.inf)
            k = np.argmin(dd, axis=1)
            y = cand[np.arange(len(T)), k]
            dist = dd[np.arange(len(T)), k]
            ok = np.isfinite(dist) & ~last & (T != v)
            if not ok.any():
                continue
            arcs = np.arange(sg.indptr[x], sg.indptr[x + 1])
            valid = D[sg.head[arcs]][:, y[ok]] == (dist[ok] - 1)[None, :]  # (deg, T_ok)
            patterns, inverse = np.unique(valid.T, axis=0, return_inverse=True)
            ports = [tuple(int(q) for q in sg.link[arcs[row]]) for row in patterns]
            out.update(zip([(v, t) for t in T[ok].tolist()],
                           [ports[j] for j in np.ravel(inverse).tolist()]))
        return out

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
        if self.cones is None:
            # the cached per-state tables (the same distances; a path per pair of a group
            # asks again from the same states)
            rows = self._tables(np.array([start]), False)
            tstate, _ = self._targets(self._D[0], rows, cd, src, dst)
            tstate = int(tstate[0])
            row = self._tables(np.array([tstate]), True)[0]     # may grow self._D[1]
            Dt = self._D[1][row]
        else:
            D = self.dist([start])
            tstate, _ = self._targets(D, np.zeros(1, dtype=np.int64), cd, src, dst)
            tstate = int(tstate[0])
            Dt = csgraph.shortest_path(sg.AT, directed=True, unweighted=True,
                                       indices=[tstate])[0]
        cur = start
        while cur != tstate:
            arcs = np.arange(sg.indptr[cur], sg.indptr[cur + 1])
            arcs = arcs[Dt[sg.head[arcs]] == Dt[cur] - 1]
            key = self.key
            pick = int(flow_hash(key[s], key[t], key[sg.state_node[cur]])[()]
                       % np.uint64(len(arcs)))
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
                    key = self.key
                    pick = (flow_hash(key[s_[active]], key[t_[active]], key[sg.state_node[c]])
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
