"""Closed-form dimension-order routing on hyper-meshes, tori and meshes (private).

Used by :class:`fabric.Router` for the ``"dimension-order"`` policy; see the
docstring of :mod:`fabric._routing`.
"""

import copy

import numpy as np

from ._errors import RoutingError

__all__ = []


class DimOrder:
    """Closed-form dimension-order routing on a hypermesh / torus / mesh fabric."""

    def __init__(self, fabric, link_latency, link_bandwidth, n_links, fallback,
                 single_path=False):
        self.f = fabric
        self.single_path = single_path
        # path_links_many at a tie of two live ways: the + way ("plus"), the one of larger
        # latency ("longest") or the - way ("minus"); see fabric._routing_bypass
        self.tie_way = "plus"
        self.bandwidth = link_bandwidth
        self.fallback = fallback  # unused: fabric.Router detours dead pairs by its engine
        self.n_links = n_links
        shape, connect = fabric.structure.shape, fabric.structure.connect
        self.shape, self.connect = shape, connect
        self.ndim = len(shape)
        self._ring_tabs = {}            # _ring_steps, by dimension
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
        # per dimension: line index of each slot, and link tables
        self.line_of, self.tables = [], []
        coords = np.stack(np.unravel_index(np.arange(n), shape, order="F"), axis=1)
        self.coords = coords
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
        self._fill_tables(fabric, ea, coords)
        # intact: every adjacency of the grid is present (no failures), so no route is dead
        self.intact = all(bool((self._present(d) >= 0).all()) for d in range(self.ndim))
        self._set_latency(link_latency)

    def _present(self, d):
        """The link ids of dimension ``d``'s adjacencies (-1 where a link is missing)."""
        tab, s, c = self.tables[d], self.shape[d], self.connect[d]
        if s == 1:
            return np.zeros(0, dtype=np.int64)
        if c == "ring":
            return np.concatenate([tab["plus"].ravel(), tab["minus"].ravel()])
        if c == "line":
            return np.concatenate([tab["plus"][:, :-1].ravel(), tab["minus"][:, 1:].ravel()])
        if c == "full":
            off = ~np.eye(s, dtype=bool)
            return tab["pair"][:, off].ravel()
        return np.concatenate([tab["up"].ravel(), tab["down"].ravel()])

    def _set_latency(self, lat):
        """What depends on the link latencies: each dimension's one latency (when all its
        links have the same) and the latency prefix sums along ring/line directions."""
        self.lat = lat
        self.lat0 = np.append(lat, 0.0)  # index -1 (no link) reads 0 s, even with no links
        self.uniform_lat = []
        for d in range(self.ndim):
            present = self._present(d)
            lats = lat[present[present >= 0]]
            self.uniform_lat.append(float(lats[0]) if len(lats) and (lats == lats[0]).all()
                                    else None)
        # prefix sums of latency (and, once, of dead links) along ring/line directions
        for tab in self.tables:
            if "plus" in tab:
                for key in ("plus", "minus"):
                    t2 = np.concatenate([tab[key], tab[key]], axis=1)
                    la = self.lat0[t2]  # -1 (no link): the appended 0
                    z = np.zeros((t2.shape[0], 1))
                    tab[key + "_lat"] = np.concatenate([z, np.cumsum(la, axis=1)], axis=1)
                    if key + "_dead" not in tab:
                        dead = (t2 < 0).astype(np.float64)
                        tab[key + "_dead"] = np.concatenate([z, np.cumsum(dead, axis=1)],
                                                            axis=1)

    def with_latency(self, link_latency):
        """The same routing over the same links, timed by other link latencies: what the
        constructor builds from the same arguments but ``link_latency`` (and the default
        :attr:`tie_way`), sharing the link tables instead of building them again."""
        twin = copy.copy(self)
        twin.tie_way = "plus"
        twin.tables = [dict(tab) for tab in self.tables]
        twin.__dict__.pop("_dim_bw", None)
        twin._set_latency(link_latency)
        return twin

    def _fill_tables(self, fabric, ea, coords):
        """Enter every link in its dimension's table (vectorised over the links)."""
        ns = self.node_slot
        u, v = np.asarray(ea.u, dtype=np.int64), np.asarray(ea.v, dtype=np.int64)
        su, sv = ns[u], ns[v]
        e = np.arange(len(u), dtype=np.int64)
        # chip-chip links: the one dimension the two coordinates differ in
        ib = np.flatnonzero((su >= 0) & (sv >= 0))
        cu, cv = coords[su[ib]], coords[sv[ib]]
        differ = cu != cv
        one = differ.sum(axis=1) == 1
        ib, cu, cv, differ = ib[one], cu[one], cv[one], differ[one]
        dims = np.argmax(differ, axis=1) if len(ib) else np.zeros(0, dtype=np.int64)
        for d in range(self.ndim):
            m = dims == d
            if not m.any():
                continue
            ee = ib[m]
            tab, s = self.tables[d], self.shape[d]
            line = self.line_of[d][su[ee]]
            p, q = cu[m, d], cv[m, d]
            if "pair" in tab:
                tab["pair"][line, p, q] = 2 * ee
                tab["pair"][line, q, p] = 2 * ee + 1
                continue
            for a, b, l_ab, l_ba in ((p, q, 2 * ee, 2 * ee + 1), (q, p, 2 * ee + 1, 2 * ee)):
                fwd = b == (a + 1) % s
                if self.connect[d] != "ring":
                    fwd &= b == a + 1
                tab["plus"][line[fwd], a[fwd]] = l_ab[fwd]
                tab["minus"][line[fwd], b[fwd]] = l_ba[fwd]
        # chip-switch links: a line's switch is known by the chips still linked to it, which
        # differ in one coordinate, the switch's dimension (not by its name, nor by the order
        # edges are listed). A switch with fewer than two chips left serves no pair of its
        # line; its entries stay -1 (dead).
        ic = np.flatnonzero((su >= 0) != (sv >= 0))
        if not len(ic) or "switch" not in self.connect:
            return
        chip_up = su[ic] >= 0
        chip_slot = np.where(chip_up, su[ic], sv[ic])
        sw = np.where(chip_up, v[ic], u[ic])
        l_up = np.where(chip_up, 2 * e[ic], 2 * e[ic] + 1)
        l_dn = np.where(chip_up, 2 * e[ic] + 1, 2 * e[ic])
        sw_dim = np.full(len(fabric.nodes), -1, dtype=np.int64)
        order = np.argsort(sw, kind="stable")
        for grp in np.split(order, np.flatnonzero(np.diff(sw[order])) + 1):
            cs = coords[chip_slot[grp]]
            differ = np.flatnonzero((cs != cs[0]).any(axis=0))
            if len(differ) == 1 and self.connect[int(differ[0])] == "switch":
                sw_dim[sw[grp[0]]] = int(differ[0])
        dsw = sw_dim[sw]
        for d, c in enumerate(self.connect):
            if c != "switch":
                continue
            m = dsw == d
            tab = self.tables[d]
            line = self.line_of[d][chip_slot[m]]
            pos = self.coords[chip_slot[m], d]
            tab["switch"][line] = sw[m]
            tab["up"][line, pos] = l_up[m]
            tab["down"][line, pos] = l_dn[m]

    def next_hops(self, nodes, targets, link_index):
        """First links of the dimension-order paths from nodes to targets (ties: both ways).

        ``nodes`` and ``targets`` are node indices; ``link_index(u, v)`` numbers the directed
        link between two node names. Returns ``{(v, t): (link, ...)}``; a per-line switch
        forwards to the chip of its line at the target's coordinate.
        """
        dor = self
        f = self.f
        out = {}
        chips = [v for v in nodes if dor.node_slot[v] >= 0]
        if chips:
            V = np.repeat(np.array(chips), len(targets))
            T = np.tile(np.array(targets), len(chips))
            keep = V != T
            V, T = V[keep], T[keep]
            M = dor.path_links_many(V, T)
            first = M[:, 0]
            alt = np.full(len(V), -1)
            a_slot, b_slot = dor._slots(V), dor._slots(T)
            moved = np.zeros(len(V), dtype=bool)
            for d, line, a, b in dor._segments(a_slot, b_slot):
                here = (a != b) & ~moved
                moved |= a != b
                if dor.connect[d] == "ring":
                    _, _, fp = dor._ring_moves(d, a, b)
                    tie = here & (fp == 0.5)
                    alt = np.where(tie, dor.tables[d]["minus"][line, a], alt)
            for v, t, p, q in zip(V.tolist(), T.tolist(), first.tolist(), alt.tolist()):
                out[(v, t)] = (p,) if q < 0 or q == p else (p, q)
        # per-line switches: forward to the chip of the line at the target's coordinate
        G = f.graph
        idx = f.node_index
        for v in nodes:
            if dor.node_slot[v] >= 0:
                continue
            name = f.nodes[v]
            nbrs = {}
            dims = set()
            for m in G[name]:
                c = G.nodes[m].get("coord")
                if c is not None:
                    nbrs[tuple(c)] = idx[m]
            cs = list(nbrs)
            for d in range(len(dor.shape)):
                if len({c[d] for c in cs}) > 1:
                    dims.add(d)
            if len(dims) != 1:
                continue
            (d,) = dims
            by_coord = {c[d]: m for c, m in nbrs.items()}
            for t in targets:
                ct = G.nodes[f.nodes[t]].get("coord")
                m = by_coord.get(ct[d]) if ct is not None else None
                if m is not None:
                    out[(v, t)] = (link_index(name, f.nodes[m]),)
        return out

    # --- pairs that can meet a missing link ----------------------------------------

    def _damaged_lines(self, d):
        """Lines of dimension ``d`` (indices of ``line_of[d]``) missing a link of the grid
        (a failed link, or a link of a failed chip): the only lines a dead route runs
        along."""
        tab, s, c = self.tables[d], self.shape[d], self.connect[d]
        if s == 1:
            return np.zeros(0, dtype=np.int64)
        if c == "ring":
            bad = (tab["plus"] < 0).any(axis=1) | (tab["minus"] < 0).any(axis=1)
        elif c == "line":
            bad = (tab["plus"][:, :-1] < 0).any(axis=1) | (tab["minus"][:, 1:] < 0).any(axis=1)
        elif c == "full":
            bad = (tab["pair"][:, ~np.eye(s, dtype=bool)] < 0).any(axis=1)
        else:
            bad = (tab["up"] < 0).any(axis=1) | (tab["down"] < 0).any(axis=1)
        return np.flatnonzero(bad)

    def dead_candidates(self, nodes):
        """Ordered pairs ``(i, j)`` of positions in ``nodes`` (distinct node indices) whose
        dimension-order route may meet a missing link: a superset of the pairs
        :meth:`evaluate` flags dead, enumerated without visiting the others.

        A route moves along dimension ``k`` on the line through the slot whose coordinates
        below ``k`` are the destination's and above ``k`` the source's (:meth:`_segments`),
        so it meets a missing link of dimension ``k`` only on a damaged line
        (:meth:`_damaged_lines`) and only if it moves there: the sources sharing the line's
        coordinates above ``k``, the destinations sharing those below ``k``, with different
        coordinates ``k``. Pairs with an end off the grid are all candidates (the fallback
        routes them). Returns two int64 arrays, each pair once, sorted by ``(i, j)``.
        """
        nodes = np.asarray(nodes, dtype=np.int64)
        n = len(nodes)
        slots = self.node_slot[nodes]
        on = np.flatnonzero(slots >= 0)
        off = np.flatnonzero(slots < 0)
        codes = []
        if len(off):
            every = np.arange(n, dtype=np.int64)
            codes += [(off[:, None] * n + every[None, :]).ravel(),
                      (every[:, None] * n + off[None, :]).ravel()]
        if not self.intact and len(on):
            sl = slots[on]
            coords = self.coords[sl]
            for k in range(self.ndim):
                lines = self._damaged_lines(k)
                if not len(lines):
                    continue
                stride, ck = int(self.strides[k]), coords[:, k]
                base = sl - ck * stride                   # every coordinate but k
                low = base % stride                       # the coordinates below k
                high = base - low                         # the coordinates above k
                # a damaged line is its slots' common base: (coordinates below, above k)
                rep = np.flatnonzero(np.isin(self.line_of[k], lines))
                for key in np.unique(rep - self.coords[rep, k] * stride).tolist():
                    ms = high == key - key % stride       # sources: above k on the line
                    md = low == key % stride              # destinations: below k on it
                    ii, jj = np.nonzero(ck[ms][:, None] != ck[md][None, :])   # moves on k
                    codes.append(on[ms][ii] * n + on[md][jj])
        if not codes:
            empty = np.zeros(0, dtype=np.int64)
            return empty, empty.copy()
        code = np.unique(np.concatenate(codes))
        i, j = code // n, code % n
        keep = i != j
        return i[keep], j[keep]

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
        mm, fp = self._ring_steps(d)
        return delta, mm[delta], fp[delta]

    def _ring_steps(self, d):
        """Ring dimension ``d``'s ``-`` steps and ``+`` fraction by the ``+`` step count
        ``delta`` (0..s-1), tabulated once (:meth:`_ring_moves` looks them up)."""
        tabs = self._ring_tabs
        if d not in tabs:
            s = self.shape[d]
            delta = np.arange(s, dtype=np.int64)
            fp = np.where(2 * delta < s, 1.0, np.where(2 * delta == s, 0.5, 0.0))
            tabs[d] = ((s - delta) % s, np.where(delta == 0, 0.0, fp))
        return tabs[d]

    def _dead_ways(self, tab, line, a, start_m, mp, mm, fp, move):
        """A ring/line move's dead ways: ``(dp, dm, fp, lost)``, whether the ``+`` / ``-``
        way crosses a missing link, the ``+`` fraction once ECMP drops a tie's dead way,
        and the moving pairs whose used way is dead (their route is dead)."""
        dp = self._seg_sum(tab, "plus_dead", line, a, mp) > 0
        dm = self._seg_sum(tab, "minus_dead", line, start_m, mm) > 0
        tie = fp == 0.5
        fp = np.where(tie & dp & ~dm, 0.0, np.where(tie & dm & ~dp, 1.0, fp))
        return dp, dm, fp, move & (((fp > 0) & dp) | ((fp < 1) & dm))

    def _seg_sum(self, tab, key, line, start, m):
        P = tab[key]
        return P[line, start + m] - P[line, start]

    def evaluate(self, src, dst, w=None, out=None, want_latency=True):
        """Hops, latency (max over the tie ways), dead-path flag; loads into ``out`` if given."""
        hops, lats, dead = self.evaluate_timed(src, dst, (self,) if want_latency else (), w, out)
        return hops, lats[0] if want_latency else np.zeros(len(src)), dead

    def evaluate_timed(self, src, dst, timings, w=None, out=None):
        """:meth:`evaluate` with one latency per routing of ``timings`` (this routing or its
        :meth:`with_latency` twins: the same links and ways, other link latencies), the
        pairs' ways found once for all: ``(hops, [latency, ...], dead)``."""
        for t in timings:
            if t.line_of is not self.line_of:
                raise ValueError("evaluate_timed: a timing that is not a with_latency twin")
        a_slot, b_slot = self._slots(src), self._slots(dst)
        P = len(src)
        hops = np.zeros(P, dtype=np.int64)
        lats = [np.zeros(P) for _ in timings]
        dead = self._off(src, dst)
        intact = self.intact
        pending = []  # load contributions, applied only for pairs with no dead link
        for d, line, a, b in self._segments(a_slot, b_slot):
            tab, s, c = self.tables[d], self.shape[d], self.connect[d]
            move = a != b
            if c in ("ring", "line"):
                mp, mm, fp = self._ring_moves(d, a, b)
                start_m = (a - mm + 1) % s if c == "ring" else a - mm + 1
                start_m = np.where(mm > 0, start_m, 0)
                if not intact:
                    _, _, fp, lost = self._dead_ways(tab, line, a, start_m, mp, mm, fp, move)
                    dead |= lost
                if self.single_path:  # ecmp="hash": only the path's way, + at a tie
                    fp = np.where(fp == 0.5, 1.0, fp)
                steps = np.where(fp > 0, mp, mm) * move
                hops += steps
                use_p = use_m = None
                for t, lat in zip(timings, lats, strict=True):
                    ulat = t.uniform_lat[d]
                    if ulat is not None and intact:
                        lat += steps * ulat
                    else:
                        if use_p is None:
                            use_p, use_m = fp > 0, fp < 1
                        ttab = t.tables[d]
                        lp = self._seg_sum(ttab, "plus_lat", line, a, mp)
                        lm = self._seg_sum(ttab, "minus_lat", line, start_m, mm)
                        lat += np.where(use_p & use_m, np.maximum(lp, lm),
                                        np.where(use_p, lp, lm)) * move
                if w is not None:
                    pending.append((d, "ring", line, a, start_m, mp, mm, fp, move))
            elif c == "full":
                lk = tab["pair"][line, a, b]
                if not intact:
                    dead |= move & (lk < 0)
                hops += move
                if timings:
                    on = move & (lk >= 0)
                    for t, lat in zip(timings, lats, strict=True):
                        lat += np.where(on, t.lat0[lk], 0.0)
                if w is not None:
                    pending.append((d, "links", lk, move))
            else:  # switch
                up = tab["up"][line, a]
                dn = tab["down"][line, b]
                if not intact:
                    dead |= move & ((up < 0) | (dn < 0))
                hops += 2 * move
                for t, lat in zip(timings, lats, strict=True):
                    lat += np.where(move, t.lat0[up] + t.lat0[dn], 0.0)
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
        return hops, lats, dead

    def bottleneck(self, src, dst):
        """Narrowest link bandwidth per pair, over its dimension-order path (both ways of a tie).

        Where each dimension's links share one bandwidth (every builder's grid, intact):
        the per-dimension minimum over the moved dimensions. Where they differ (a lane
        lost, a system file's own links): the pair's own links, so a narrower link
        elsewhere on the dimension does not narrow a pair that does not cross it.
        """
        if not hasattr(self, "_dim_bw"):
            self._dim_bw, self._dim_even = [], []
            for tab in self.tables:
                ids = np.concatenate([np.asarray(v).ravel() for k, v in tab.items()
                                      if k in ("plus", "minus", "pair", "up", "down")])
                bw = self.bandwidth[ids[ids >= 0]]
                self._dim_bw.append(float(bw.min()) if len(bw) else np.inf)
                self._dim_even.append(not len(bw) or float(bw.max()) == float(bw.min()))
        if not all(self._dim_even):
            out = np.full(len(src), np.inf)
            for way in ("plus", "minus"):
                M = self.path_links_many(src, dst, tie_way=way)
                if M.shape[1]:
                    out = np.minimum(out, np.where(M >= 0, self.bandwidth[M], np.inf).min(axis=1))
            return out
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
            first = line[sel] * width + start[sel]
            past = first + m[sel]
            wts = wt[sel]
            diff = (np.bincount(first, weights=wts, minlength=L * width)
                    - np.bincount(past, weights=wts, minlength=L * width))
            acc = np.cumsum(diff.reshape(L, width), axis=1)[:, :2 * s]
            # The sum of a run's + and - weights is not always exactly 0 in floating point:
            # a slot no run covers (an integer count of 0) carries exactly 0, not a residue.
            runs = (np.bincount(first, minlength=L * width)
                    - np.bincount(past, minlength=L * width))
            acc[np.cumsum(runs.reshape(L, width), axis=1)[:, :2 * s] == 0] = 0.0
            acc = acc[:, :s] + acc[:, s:]
            tl = tab[key]
            valid = tl >= 0
            out += np.bincount(tl[valid], weights=acc[valid], minlength=self.n_links)

    def path_links_many(self, src, dst, tie_way=None, ties=None):
        """Links of the dimension-order path of each pair, as a (P, H) array padded with -1.

        A dead link of the path is left out (-1; the caller detours such pairs).
        ``tie_way`` overrides :attr:`tie_way` (which way of a tie of two live ways);
        ``ties``, a (P, ndim) boolean array, chooses the way of every tie instead (``+``
        where True), dead or alive (see :meth:`ties`).
        """
        return self._path_links(src, dst, tie_way, ties, False)[1]

    def dead_and_path_links(self, src, dst, tie_way=None):
        """``(evaluate(src, dst)[2], path_links_many(src, dst, tie_way))`` from one pass
        over the pairs' segments."""
        return self._path_links(src, dst, tie_way, None, True)

    def _path_links(self, src, dst, tie_way, ties, want_dead):
        """``(dead, links)``: :meth:`path_links_many`'s array and, with ``want_dead``,
        :meth:`evaluate`'s dead-route mask by the same rule (else None)."""
        tie_way = self.tie_way if tie_way is None else tie_way
        a_slot, b_slot = self._slots(src), self._slots(dst)
        P = len(src)
        cols = []
        dead = self._off(src, dst) if want_dead else None
        find_dead = want_dead and not self.intact
        for d, line, a, b in self._segments(a_slot, b_slot):
            tab, s, c = self.tables[d], self.shape[d], self.connect[d]
            move = a != b
            if c == "full":
                lk = tab["pair"][line, a, b]
                if find_dead:
                    dead |= move & (lk < 0)
                cols.append(np.where(move, lk, -1))
            elif c == "switch":
                up, dn = tab["up"][line, a], tab["down"][line, b]
                if find_dead:
                    dead |= move & ((up < 0) | (dn < 0))
                cols.append(np.where(move, up, -1))
                cols.append(np.where(move, dn, -1))
            else:
                mp, mm, fp = self._ring_moves(d, a, b)
                plus = fp >= 0.5
                dp = dm = np.zeros(P, dtype=bool)
                start_m = np.where(mm > 0, (a - mm + 1) % s if c == "ring" else a - mm + 1, 0)
                if ties is not None:     # under single_path a tie takes the + way
                    plus = np.where((fp == 0.5) & (not self.single_path), ties[:, d], plus)
                elif not self.intact:
                    dp, dm, _, lost = self._dead_ways(tab, line, a, start_m, mp, mm, fp, move)
                    plus = np.where(fp == 0.5, ~dp, plus)
                    if find_dead:
                        dead |= lost
                both = (fp == 0.5) & ~dp & ~dm & (ties is None)
                if tie_way == "longest" and not self.single_path:
                    # both ways alive: the one of larger latency (+ when equal), the way
                    # latency() reports (a bypassed way is the longer)
                    lp = self._seg_sum(tab, "plus_lat", line, a, mp)
                    lm = self._seg_sum(tab, "minus_lat", line, start_m, mm)
                    plus = np.where(both, lp >= lm, plus)
                elif tie_way == "minus" and not self.single_path:
                    plus = np.where(both, False, plus)
                steps = np.where(plus, mp, mm) * move
                K = int(steps.max()) if P else 0
                if K:                    # the k-th step's link, k < K, all steps at once
                    k = np.arange(K)
                    # the - table then the + table, flat: one look-up per step
                    pm = np.concatenate([tab["minus"].ravel(), tab["plus"].ravel()])
                    at = (line + plus * len(tab["plus"]))[:, None] * s + (
                        a[:, None] + np.where(plus, 1, -1)[:, None] * k) % s
                    cols.append(np.where(k < steps[:, None], pm[at], -1))
        if not cols:
            return dead, np.full((P, 0), -1, dtype=np.int64)
        M = np.concatenate([c if c.ndim == 2 else c[:, None] for c in cols], axis=1)
        # move each row's links to the front, in order (every other entry is -1): the
        # links in row order, each row's run placed at the start of its output row
        valid = M >= 0
        count = valid.sum(axis=1)
        width = int(count.max()) if P else 0
        out = np.full((P, width), -1, dtype=np.int64)
        start = np.cumsum(count) - count
        at = np.arange(int(count.sum())) + np.repeat(np.arange(P) * width - start, count)
        out.ravel()[at] = M[valid]
        return dead, out

    def ties(self, src, dst):
        """Where each pair splits between the two ways round a ring: a (P, ndim) boolean
        array, True in the ring dimensions the pair moves half-way round (all False under
        ``single_path``, which takes the ``+`` way), dead ways or not."""
        out = np.zeros((len(src), self.ndim), dtype=bool)
        if self.single_path:
            return out
        for d, _line, a, b in self._segments(self._slots(src), self._slots(dst)):
            if self.connect[d] == "ring":
                out[:, d] = (a != b) & (self._ring_moves(d, a, b)[2] == 0.5)
        return out

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
