"""Pair-by-pair routing on an up/down state graph from small cones (private).

Under up/down routing (:func:`fabric._routing_engine.updown_graph`) a route climbs
over *up* states, takes one *turn* arc (a down link leaving an up state) and then
only descends over *down* states. So every shortest route from start state ``a``
to a down target state ``z`` lies in two cones, whatever the fabric's size:

* the up cone ``U(a)``: the up states ``a`` reaches by climbing (a chip's NIC,
  its rail switch, the spines), with the climbing distance ``du`` and path count;
* the down cone ``Dn(z)``: the down states from which ``z`` is reached by
  descending (the same switches above ``z``), with the distance ``dd`` and path
  count to ``z``,

joined by the turn arcs from ``U(a)`` into ``Dn(z)``. The distance is
``L = min du(x) + 1 + dd(y)`` over those turn arcs ``x -> y``; the turn arcs
reaching the minimum are the only ones on shortest routes, and every state on a
shortest route from ``a`` to ``z`` has all of its own shortest routes from ``a``
(and to ``z``) inside the two cones. Path counts on the pair's DAG then follow by
the Brandes recurrences restricted to it: ``h(u)``, the routes from ``u`` to
``z``, summed back from the optimal turn arcs over climbing arcs; ``s(y)``, the
routes from ``a`` to ``y``, summed forward from them over descending arcs. An
up state target (``z`` reached by climbing only) is the same with ``z`` itself as
the one exit.

These are the distances and counts the general engine reads from its full
per-state tables (one row of every state per distinct start and target), so the
DAG entries and the bytes on each arc, ``sigma(a, u) sigma(v, z) / sigma(a, z)``,
are the same numbers, computed in the same order; the work is the size of the two
cones per pair instead of the whole state graph per start and target. On a
rail-optimized cluster of 16k chips a cone holds a chip, its NIC, its server's
switch, its rail switch and the spines: tens of states out of 70,000.
"""

import numpy as np
import scipy.sparse as sp

__all__ = []  # private; the engine uses Cones and distinct

# Cone entries a store keeps across calls before starting again (about 64 MiB a store).
_STORE = 1 << 22

# Pair DAG entries kept across calls (16 bytes each: about 128 MiB), and the work (cone
# entries) of one batch of pairs.
_CACHE = 1 << 23
_BATCH = 1 << 22


def distinct(x):
    """The sorted distinct values of an integer array (``np.unique`` without its options).

    By sorting: numpy 2's ``np.unique`` hashes when asked for the values alone, which
    is several times slower on large integer arrays than sorting them.
    """
    x = np.sort(np.ravel(x))
    return x[np.r_[True, x[1:] != x[:-1]]] if len(x) else x


def _segments(counts):
    """For consecutive segments of these lengths: (segment of each element, offset in it)."""
    counts = np.asarray(counts, dtype=np.int64)
    seg = np.repeat(np.arange(len(counts)), counts)
    first = np.cumsum(counts) - counts
    return seg, np.arange(len(seg)) - first[seg]


def _index_in(sorted_keys, keys):
    """Index of each key in a sorted array of distinct keys, -1 where absent."""
    if len(sorted_keys) == 0:
        return np.full(len(keys), -1, dtype=np.int64)
    i = np.minimum(np.searchsorted(sorted_keys, keys), len(sorted_keys) - 1)
    return np.where(sorted_keys[i] == keys, i, -1)


def _csr(tail, head, arc, n):
    """Arcs ``tail -> head`` grouped by tail: (indptr, head, arc id)."""
    order = np.argsort(tail, kind="stable")
    return np.searchsorted(tail[order], np.arange(n + 1)), head[order], arc[order]


def _bfs_from(M, sources):
    """Hop distances from a set of states (all at distance 0) along the arcs of ``M``."""
    S = M.shape[0]
    dist = np.full(S, np.inf)
    front = np.zeros(S, dtype=bool)
    front[sources] = True
    MT = M.T.tocsr()
    d = 0
    while front.any():
        dist[front] = d
        front = (MT @ front.astype(np.float64) > 0) & ~np.isfinite(dist)
        d += 1
    return dist


class _Store:
    """Cones grown from roots over one kind of arc, cached across calls.

    ``adj`` is (indptr, neighbour, arc) in the direction a cone grows. For every
    entry (a state of a cone, with its distance from the root and path count) the
    store keeps the arcs of the cone's BFS DAG that reach it from one step further
    out (``far_ptr``: the entries nearer the root, ``near``, and the arc); the
    pair step walks them inwards. ``exits`` (same layout as ``adj``) lists per state
    the turn arcs into it, sorted per cone by a lower bound on the route length
    through them for starts at each level (``bounds``: a (levels, states) array of
    lower bounds on the climbing distance to each state).
    """

    def __init__(self, n_states, adj, exits=None, bounds=None):
        self.S = n_states
        self.indptr, self.nbr, self.arc = adj
        self.exits = exits
        self.bounds = bounds
        # cone * KB + bound is the sort key of a cone's exits (bounds are < KB)
        self.KB = 4 * n_states + 8
        self.M = sp.csr_matrix((np.ones(len(self.nbr)), self.nbr, self.indptr),
                               shape=(n_states, n_states))
        self.clear()

    def clear(self):
        S = self.S
        z = np.zeros(0, dtype=np.int64)
        self.cone_of = np.full(S, -1, dtype=np.int64)
        self.ptr = np.zeros(1, dtype=np.int64)       # entries of cone c: ptr[c]:ptr[c+1]
        self.state, self.key = z, z                  # key: cone * S + state, sorted
        self.dist, self.sig = np.zeros(0), np.zeros(0)
        self.far_ptr = np.zeros(1, dtype=np.int64)   # BFS-DAG arcs by their far entry
        self.near, self.arc_of = z, z
        self.e_entry, self.e_state, self.e_arc = z, z, z
        nq = 0 if self.bounds is None else len(self.bounds)
        self.q_exit = [z] * nq                       # exits sorted by (cone, bound)
        self.q_key = [z] * nq

    def find(self, cone, state):
        """Entry index of ``state`` in cone ``cone`` (arrays), -1 where absent."""
        return _index_in(self.key, cone * self.S + state)

    def ensure(self, roots):
        """Cone number of each root, growing the cones not cached yet."""
        roots = np.asarray(roots, dtype=np.int64)
        need = distinct(roots[self.cone_of[roots] < 0])
        if len(need):
            if len(self.state) > _STORE:
                self.clear()
                need = distinct(roots)
            self._grow(need)
        return self.cone_of[roots]

    def _grow(self, roots):
        S = self.S
        b = len(roots)
        c0 = len(self.ptr) - 1
        rows, cols = [np.arange(b)], [roots]
        dists, sigs = [np.zeros(b)], [np.ones(b)]
        seen = np.sort(np.arange(b) * S + roots)
        F = sp.csr_matrix((np.ones(b), (np.arange(b), roots)), shape=(b, S))
        d = 0
        while F.nnz:
            d += 1
            N = (F @ self.M).tocoo()
            k = N.row.astype(np.int64) * S + N.col
            pos = np.minimum(np.searchsorted(seen, k), len(seen) - 1)
            new = seen[pos] != k
            r, c, v = N.row[new].astype(np.int64), N.col[new].astype(np.int64), N.data[new]
            rows.append(r)
            cols.append(c)
            dists.append(np.full(len(r), float(d)))
            sigs.append(v)
            seen = np.sort(np.concatenate([seen, k[new]]))
            F = sp.csr_matrix((v, (r, c)), shape=(b, S))
        row, col = np.concatenate(rows), np.concatenate(cols)
        order = np.argsort(row * S + col)
        row, col = row[order], col[order]
        dist, sig = np.concatenate(dists)[order], np.concatenate(sigs)[order]
        base = len(self.state)
        key = (c0 + row) * S + col
        # BFS-DAG arcs of the new cones, grouped by their far entry
        deg = self.indptr[col + 1] - self.indptr[col]
        e, off = _segments(deg)
        a = self.indptr[col[e]] + off
        far = np.searchsorted(key, (c0 + row[e]) * S + self.nbr[a])
        good = dist[far] == dist[e] + 1
        e, a, far = e[good], a[good], far[good]
        order = np.argsort(far, kind="stable")
        self.near = np.r_[self.near, base + e[order]]
        self.arc_of = np.r_[self.arc_of, self.arc[a[order]]]
        self.far_ptr = np.r_[self.far_ptr,
                             self.far_ptr[-1] + np.cumsum(np.bincount(far, minlength=len(col)))]
        if self.exits is not None:
            xptr, xnbr, xarc = self.exits
            deg = xptr[col + 1] - xptr[col]
            e, off = _segments(deg)
            a = xptr[col[e]] + off
            n0 = len(self.e_entry)
            self.e_entry = np.r_[self.e_entry, base + e]
            self.e_state = np.r_[self.e_state, xnbr[a]]
            self.e_arc = np.r_[self.e_arc, xarc[a]]
            for q, lb in enumerate(self.bounds):
                bound = lb[xnbr[a]] + 1.0 + dist[e]
                ok = np.isfinite(bound)
                k = (c0 + row[e[ok]]) * self.KB + bound[ok].astype(np.int64)
                order = np.argsort(k, kind="stable")
                self.q_exit[q] = np.r_[self.q_exit[q], n0 + np.flatnonzero(ok)[order]]
                self.q_key[q] = np.r_[self.q_key[q], k[order]]
        self.ptr = np.r_[self.ptr, self.ptr[-1] + np.cumsum(np.bincount(row, minlength=b))]
        self.state = np.r_[self.state, col]
        self.dist = np.r_[self.dist, dist]
        self.sig = np.r_[self.sig, sig]
        self.key = np.r_[self.key, key]
        self.cone_of[roots] = c0 + np.arange(b)

    def inwards(self, pair, entry):
        """The BFS-DAG arcs reaching these (pair, entry) from one step further out.

        Returns (index into the inputs, nearer entry, arc id) per arc.
        """
        lo, hi = self.far_ptr[entry], self.far_ptr[entry + 1]
        i, off = _segments(hi - lo)
        j = lo[i] + off
        return i, self.near[j], self.arc_of[j]


def _sum_by(keys, values):
    """Distinct keys and the sum of the values of each."""
    uk, inv = np.unique(keys, return_inverse=True)
    return uk, np.bincount(np.ravel(inv), weights=values, minlength=len(uk))


def _walk_in(store, pair, entry, value):
    """Sums values over the BFS DAGs of a store's cones, inwards to their roots.

    Starts from values on (pair, entry); farthest entries first, sums them per
    (pair, entry) and passes each sum on over the DAG arcs reaching that entry from
    one step further out. Returns the steps, (pair, nearer entry, arc, far entry,
    value passed) per arc, and the (pair, sum) reaching the roots.
    """
    E = max(len(store.state), 1)
    k, v = pair * E + entry, value
    steps = []
    while len(k):
        k, v = _sum_by(k, v)
        ent = k % E
        d = store.dist[ent]
        top = d == d.max()
        fk, fv, fe = k[top], v[top], ent[top]
        if d.max() == 0:
            return steps, fk // E, fv
        i, near, arc = store.inwards(fk // E, fe)
        pr = fk[i] // E
        steps.append((pr, near, arc, fe[i], fv[i]))
        k = np.r_[k[~top], pr * E + near]
        v = np.r_[v[~top], fv[i]]
    return steps, np.zeros(0, dtype=np.int64), np.zeros(0)


class Cones:
    """Pair routing over an up/down :class:`~fabric._routing_engine._StateGraph` by cones.

    ``sg.phase`` marks up (0) and down (1) states, ``sg.level`` their node's level.
    See the module docstring.
    """

    def __init__(self, sg):
        self.sg = sg
        S = sg.n_states
        ph = sg.phase
        t, h = sg.tail, sg.head
        arcs = np.arange(len(t))
        up = (ph[t] == 0) & (ph[h] == 0)
        down = (ph[t] == 1) & (ph[h] == 1)
        turn = (ph[t] == 0) & (ph[h] == 1)
        self.up = _Store(S, _csr(t[up], h[up], arcs[up], S))
        # A start at level l climbs to x in at least lb[l][x] hops: the climbing distance
        # to x from the nearest up state of that level. It bounds a turn arc's route
        # length from below, so a pair looks only at the turn arcs that can be optimal.
        upstate = np.flatnonzero(ph == 0)
        levels = np.unique(sg.level[upstate])
        self.level_class = np.zeros(S, dtype=np.int64)
        self.level_class[upstate] = np.searchsorted(levels, sg.level[upstate])
        lb = np.array([_bfs_from(self.up.M, upstate[sg.level[upstate] == lv]) for lv in levels])
        # down cones grow against the arcs (from the target towards the switches above
        # it); their exits are the turn arcs into each state, listed by head
        self.down = _Store(S, _csr(h[down], t[down], arcs[down], S),
                           exits=_csr(h[turn], t[turn], arcs[turn], S), bounds=lb)
        self.unit = 64.0
        self._clear_cache()

    # -- pair DAGs, cached across calls (a fabric is immutable) ------------------------

    def _clear_cache(self):
        self.c_key = np.zeros(0, dtype=np.int64)    # a * S + z, sorted
        self.c_ptr = np.zeros(1, dtype=np.int64)
        self.c_L = np.zeros(0)
        self.c_arc = np.zeros(0, dtype=np.int64)
        self.c_lev = np.zeros(0, dtype=np.int32)    # small whole numbers, kept exactly
        self.c_frac = np.zeros(0)

    def _lookup(self, keys):
        return _index_in(self.c_key, keys)

    def prepare(self, a, z):
        """Route the state pairs not cached yet and cache their DAGs; return their keys."""
        S = self.sg.n_states
        keys = np.asarray(a, dtype=np.int64) * S + np.asarray(z, dtype=np.int64)
        miss = distinct(keys[self._lookup(keys) < 0])
        if not len(miss):
            return keys
        step = max(1, int(_BATCH // self.unit))
        parts = [self._compute(miss[i:i + step] // S, miss[i:i + step] % S)
                 for i in range(0, len(miss), step)]
        counts = np.concatenate([np.bincount(pr, minlength=len(L))
                                 for pr, _, _, _, L in parts])
        n_new = int(counts.sum())
        if len(self.c_arc) + n_new > _CACHE:
            self._clear_cache()
            if len(miss) < len(distinct(keys)):
                return self.prepare(a, z)        # this call's cached pairs went too
        old_counts = np.diff(self.c_ptr)
        all_keys = np.r_[self.c_key, miss]
        order = np.argsort(all_keys, kind="stable")
        all_counts = np.r_[old_counts, counts]
        starts = np.r_[self.c_ptr[:-1], len(self.c_arc) + np.cumsum(counts) - counts][order]
        seg, off = _segments(all_counts[order])
        e = starts[seg] + off
        self.c_arc = np.concatenate([self.c_arc] + [p[1] for p in parts])[e]
        self.c_lev = np.concatenate([self.c_lev] + [p[2].astype(np.int32) for p in parts])[e]
        self.c_frac = np.concatenate([self.c_frac] + [p[3] for p in parts])[e]
        self.c_L = np.concatenate([self.c_L] + [p[4] for p in parts])[order]
        self.c_key = all_keys[order]
        self.c_ptr = np.r_[0, np.cumsum(all_counts[order])]
        return keys

    def cost(self, starts, targets):
        """Mean work per pair (cone entries and arcs) over sample start and target states."""
        cu = self.up.ensure(starts)
        cd = self.down.ensure(targets)
        up, dn = self.up, self.down
        u = (up.ptr[cu + 1] - up.ptr[cu]) + (up.far_ptr[up.ptr[cu + 1]] - up.far_ptr[up.ptr[cu]])
        d = (dn.ptr[cd + 1] - dn.ptr[cd]) + (dn.far_ptr[dn.ptr[cd + 1]] - dn.far_ptr[dn.ptr[cd]])
        self.unit = max(float(u.mean() + d.mean()), 1.0)
        return self.unit

    def _exits(self, a, z):
        """The ways out of each pair's up cone towards ``z`` that can be on a shortest route.

        Returns (exit pair, up entry, down entry (-1: the target itself, an up
        state), down-store exit (-1 likewise), value, L):
        value = du(x) + 1 + dd(y) for a turn arc ``x -> y`` into ``Dn(z)``, du(z)
        for an up-state target; L the least value per pair (the distance). Turn arcs
        whose lower bound exceeds the pair's distance found so far are not looked at.
        """
        P = len(a)
        up, dn = self.up, self.down
        cu = up.ensure(a)
        isdown = self.sg.phase[z] == 1
        pd = np.flatnonzero(isdown)
        cd = np.full(P, -1, dtype=np.int64)
        cd[pd] = dn.ensure(z[pd])
        L = np.full(P, np.inf)
        pu = np.flatnonzero(~isdown)
        zpos = up.find(cu[pu], z[pu])
        ok = zpos >= 0
        pu, zpos = pu[ok], zpos[ok]
        L[pu] = up.dist[zpos]
        got = [(pu, zpos, np.full(len(pu), -1, dtype=np.int64),
                np.full(len(pu), -1, dtype=np.int64), up.dist[zpos])]
        KB = dn.KB
        q_of = self.level_class[a]
        for q in distinct(q_of[pd]):
            pq = pd[q_of[pd] == q]
            key, order = dn.q_key[q], dn.q_exit[q]
            base = cd[pq] * KB
            lo = np.searchsorted(key, base)
            end = np.searchsorted(key, base + KB)
            live = lo < end
            pq, base, lo, end = pq[live], base[live], lo[live], end[live]
            v = int((key[lo] - base).min()) if len(pq) else 0
            while len(pq):
                hi = np.searchsorted(key, base + v, side="right")
                seg, off = _segments(hi - lo)
                p_e = pq[seg]
                ex = order[lo[seg] + off]
                xpos = up.find(cu[p_e], dn.e_state[ex])
                ok = xpos >= 0
                p_e, ex, xpos = p_e[ok], ex[ok], xpos[ok]
                ypos = dn.e_entry[ex]
                val = up.dist[xpos] + 1.0 + dn.dist[ypos]
                np.minimum.at(L, p_e, val)
                got.append((p_e, xpos, ypos, ex, val))
                v += 1
                # pairs with turn arcs left whose bound can still reach their distance
                keep = (hi < end) & (L[pq] >= v)
                pq, base, lo, end = pq[keep], base[keep], hi[keep], end[keep]
        p_x, xpos, ypos, ex, val = (np.concatenate(c) for c in zip(*got))
        return p_x, xpos, ypos, ex, val, L

    def dist(self, a, z):
        """Hop distance from start state ``a[i]`` to state ``z[i]`` (inf if none)."""
        if len(a) == 0:
            return np.zeros(0)
        pos = self._lookup(self.prepare(a, z))
        return self.c_L[pos]

    def targets(self, a, cd):
        """Per pair, the nearest state of core node ``cd[i]`` and its distance (inf if none).

        Ties go to the first of the node's states, as in the general engine.
        """
        cand = self.sg.node_states[cd]  # (P, m), -1 padded
        P, m = cand.shape
        dd = np.full((P, m), np.inf)
        r, k = np.nonzero(cand >= 0)
        c = cand[r, k]
        # an up state is reached only by climbing: look it up in the start's up cone first
        isup = self.sg.phase[c] == 0
        ok = ~isup
        ok[isup] = self.up.find(self.up.ensure(a[r[isup]]), c[isup]) >= 0
        r, k, c = r[ok], k[ok], c[ok]
        if len(r):
            dd[r, k] = self.dist(a[r], c)
        k = np.argmin(dd, axis=1)
        return cand[np.arange(P), k], dd[np.arange(P), k]

    def dag(self, a, z):
        """The arcs on the shortest routes of each state pair ``a[i] -> z[i]``.

        Same entries as :meth:`fabric._routing_engine.Engine._pair_dag` (pair, tail,
        head, arc, level, fraction), in the same order, plus the distance of each pair.
        """
        pos = self._lookup(self.prepare(a, z))
        seg, off = _segments(self.c_ptr[pos + 1] - self.c_ptr[pos])
        e = self.c_ptr[pos[seg]] + off
        arc = self.c_arc[e]
        return (seg, self.sg.tail[arc], self.sg.head[arc], arc, self.c_lev[e].astype(float),
                self.c_frac[e], self.c_L[pos])

    def _compute(self, a, z):
        """(pair, arc, level, fraction, L) of each pair's DAG, sorted by pair and arc.

        Walks only the pairs' DAGs: from the optimal turn arcs down the up cone
        (routes to ``z``, h) and along the down cone (routes from ``a``, s).
        """
        sg = self.sg
        up, dn = self.up, self.down
        a = np.asarray(a, dtype=np.int64)
        z = np.asarray(z, dtype=np.int64)
        P = len(a)
        p_x, xpos, ypos, ex, val, L = self._exits(a, z)
        opt = val == L[p_x]
        p_x, xpos, ypos, ex = p_x[opt], xpos[opt], ypos[opt], ex[opt]
        turn = ypos >= 0
        # up part: h(x) = routes from x to z, from the optimal exits inwards to the root
        hv = np.where(turn, dn.sig[np.maximum(ypos, 0)], 1.0)
        steps, root_p, root_v = _walk_in(up, p_x, xpos, hv)
        sig_az = np.zeros(P)
        sig_az[root_p] = root_v
        up_parts = [(pr, arc, up.dist[near], up.sig[near] * fv / sig_az[pr])
                    for pr, near, arc, _, fv in steps]
        # turn arcs on the routes
        t_pr, t_x, t_y = p_x[turn], xpos[turn], ypos[turn]
        t_part = (t_pr, dn.e_arc[ex[turn]], up.dist[t_x],
                  up.sig[t_x] * dn.sig[t_y] / sig_az[t_pr])
        # down part: s(y) = routes from a to y, from the optimal turns along the down cone
        steps, _, _ = _walk_in(dn, t_pr, t_y, up.sig[t_x])
        down_parts = [(pr, arc, L[pr] - dn.dist[fe], fv * dn.sig[near] / sig_az[pr])
                      for pr, near, arc, fe, fv in steps]
        pr, arc, lev, frac = (np.concatenate(c) for c in
                              zip(*(up_parts + [t_part] + down_parts)))
        order = np.argsort(pr * max(len(sg.tail), 1) + arc, kind="stable")
        return pr[order], arc[order], lev[order], frac[order], L
