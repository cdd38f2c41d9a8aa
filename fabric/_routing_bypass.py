"""Local repair of failed links and nodes under dimension-order routing (private).

Used by :class:`fabric.Router` on a degraded grid; the rule and its reason are in the
docstring of :mod:`fabric._routing` ("Failures under dimension order").

A failed link whose two ends are alive gets one *bypass* per direction: the one
shortest path of the surviving graph from its tail to its head that the engine's hash
picks (:meth:`Engine.path`). A pair's route is its dimension-order route on the intact
grid with every failed link replaced by that link's bypass. So the closed form still
routes every pair: a *twin* :class:`~fabric._routing_dor.DimOrder` is built over the
surviving links plus one *virtual* link per failed link (ids ``2E`` and up), whose
latency is its bypass's latency; the loads the twin puts on a virtual link are added to
every link of its bypass.

Pairs a way of whose route crosses a failed node (or a live node left with no live
link) are found by a second twin over the intact grid (``flag``: those nodes' links
weigh 1, every other 0) and routed way by way (:meth:`Bypass._repaired`): every
combination of their ties, each run through such nodes replaced by its links'
stand-ins joined by shortest paths, consecutive equal stand-ins crossed once where
that leaves the run no shorter in hops and latency (:meth:`Bypass._expand`). Where
the failures split the live chips into groups (``failures.islands``, or a chip cut off
alone, ``failures.cut_off``), the pairs of each group of two or more live chips go to
their own twin, in which every node outside the group's component is failed
(:class:`Bypasses`). Pairs left with no way
(a failed link whose ends the failures disconnected, a run with no stand-in or no
path between its stand-ins) are routed whole by one shortest path of the surviving
graph.
"""

import itertools
import types

import numpy as np
import scipy.sparse as sp
from scipy.sparse import csgraph

from ._routing_dor import DimOrder

__all__ = []


class Bypass:
    """The twin dimension-order routing of a degraded grid (see the module docstring)."""

    def __init__(self, router, keep=None):
        f = router.fabric
        eng = router._engine
        idx = f.node_index
        n = router.n_links
        # keep: the live nodes (a mask over fabric.nodes) of the one component whose pairs
        # this twin routes, every other node passed as failed (Bypasses); None: all
        self.keep = keep
        ends = []
        for a, b in f.failures.links:
            if a in idx and b in idx and (keep is None or (keep[idx[a]] and keep[idx[b]])):
                ends.append((idx[a], idx[b]))
        ends = sorted(set(ends))
        if ends:
            u = np.array([a for a, _ in ends], dtype=np.int64)
            v = np.array([b for _, b in ends], dtype=np.int64)
            ok = eng.reachable(u, v) & eng.reachable(v, u)
            u, v = u[ok], v[ok]
        else:
            u = v = np.zeros(0, dtype=np.int64)
        # bypass of virtual directed link n + 2k (u[k] -> v[k]) and n + 2k + 1 (back)
        self.paths = []
        for a, b in zip(u.tolist(), v.tolist(), strict=True):
            self.paths.append(np.asarray(eng.path(a, b), dtype=np.int64))
            self.paths.append(np.asarray(eng.path(b, a), dtype=np.int64))
        V = len(self.paths)
        self.n = n
        lat = router.link_latency
        bw = self.bandwidth = router.link_bandwidth
        v_lat = np.array([lat[p].sum() for p in self.paths])
        v_hops = np.array([float(len(p)) for p in self.paths])
        # a virtual link's bandwidth is not its dimension's: the per-dimension bottleneck
        # ignores it (inf), and bottleneck() reads the bypass links themselves
        v_bw = np.full(V, np.inf)
        rows = np.repeat(np.arange(V), [len(p) for p in self.paths])
        cols = np.concatenate(self.paths) if V else np.zeros(0, dtype=np.int64)
        self.member = sp.csr_matrix((np.ones(len(cols)), (rows, cols)), shape=(V, n))
        ea = f.edge_arrays
        proxy = types.SimpleNamespace(
            name=f.name, graph=f.graph, structure=f.structure, nodes=f.nodes,
            node_index=f.node_index,
            edge_arrays=types.SimpleNamespace(
                u=np.concatenate([np.asarray(ea.u, dtype=np.int64), u]),
                v=np.concatenate([np.asarray(ea.v, dtype=np.int64), v])))
        single = router.ecmp == "hash"
        ext_bw = np.concatenate([bw, v_bw])
        self.twin = DimOrder(proxy, np.concatenate([lat, v_lat]), ext_bw, n + V, None,
                             single_path=single)
        # a pair's path() at a tie whose ways now differ: the longer, so that one access
        # (fabric.access) takes what latency() and hops() report (the larger over the ways)
        self.twin.tie_way = "longest"
        # the same routes with each link weighted by the hops it stands for
        self.hop_twin = self.twin.with_latency(np.concatenate([np.ones(n), v_hops]))
        self.router = router
        self.thru = None
        G0 = f.intact.graph
        dead = [x for x in f.failures.nodes if x not in idx and x in G0]
        isolated = [x for x in f.nodes if f.graph.degree(x) == 0 and G0.degree(x) > 0
                    or (keep is not None and not keep[idx[x]])]
        if dead or isolated:
            self._failed_nodes(router, u, v, dead, isolated)

    # -- failed nodes: stand-in links ------------------------------------------------

    def _failed_nodes(self, router, u, v, dead, isolated):
        """Build the routes through failed nodes (see the module docstring): ``thru``, a
        twin of the intact grid (failed nodes as nodes ``N`` and up, their links and those
        of live nodes left with no live link as virtual links after the bypasses'),
        ``flag``, the same twin weighting only those links (a pair whose used ways cross
        one has latency > 0 there), and the stand-in of each of those links."""
        f = router.fabric
        G0 = f.intact.graph
        idx = dict(f.node_index)
        N = len(f.nodes)
        for j, x in enumerate(dead):
            idx[x] = N + j
        gone = set(dead) | set(isolated)
        self.gone = np.zeros(N + len(dead), dtype=bool)
        self.gone[[idx[x] for x in gone]] = True
        xe = [(a, b) for a, b in G0.edges if a in gone or b in gone]
        xu = np.array([idx[a] for a, _ in xe], dtype=np.int64)
        xv = np.array([idx[b] for _, b in xe], dtype=np.int64)
        n, V = self.n, len(self.paths)
        self.nx0 = n + V                     # first link id of a failed node
        lat = np.repeat([float(G0.edges[e]["latency"]) for e in xe], 2)
        bw = np.repeat([float(G0.edges[e]["bandwidth"]) for e in xe], 2)
        ea = self.twin.f.edge_arrays
        ends_u = np.concatenate([ea.u, xu])
        ends_v = np.concatenate([ea.v, xv])
        if self.keep is not None:
            # a live link outside the component is one of the links above (xe): its live
            # id leaves the tables (both ends one chip: no dimension's link)
            m = np.flatnonzero(self.gone[ea.u] | self.gone[ea.v])
            ends_v = ends_v.copy()
            ends_v[m] = ends_u[m]
        self.tail = np.ravel(np.column_stack([ends_u, ends_v]))
        self.head = np.ravel(np.column_stack([ends_v, ends_u]))
        proxy = types.SimpleNamespace(
            name=f.name, graph=G0, structure=f.structure, nodes=tuple(f.nodes) + tuple(dead),
            node_index=idx, edge_arrays=types.SimpleNamespace(u=ends_u, v=ends_v))
        n_ext = n + V + 2 * len(xe)
        single = router.ecmp == "hash"
        ext_lat = np.concatenate([self.twin.lat, lat])
        ext_bw = np.concatenate([self.twin.bandwidth, bw])
        self.thru = DimOrder(proxy, ext_lat, ext_bw, n_ext, None, single_path=single)
        mark = np.zeros(n_ext)
        mark[self.nx0:] = 1.0
        self.flag = self.thru.with_latency(mark)
        self.standin = self._standins(router, G0, xe, idx, ext_lat, ext_bw)
        self._tunnels = {}

    def _standins(self, router, G0, xe, idx, ext_lat, ext_bw):
        """``{(a, b): link}``: the stand-in (a live link id) of each direction ``a -> b`` of
        the links ``xe`` (node indices as in ``thru``), by the rule of fabric/_routing.py.
        A link from a live ``p`` to a node routes cannot pass, ``x``: ``p -> y`` for the
        live neighbour ``y`` of ``p`` first by (a link wider than ``p``-``x``, a link of
        lower latency, ``y`` a neighbour of ``x``, the sum of its hop distances to ``x``'s
        other live neighbours (the live node count where none leads), node index), among
        the links no wider and no faster when any (the link back, ``y -> p``, mirrors it);
        when ``p`` has none such but its component has, and for a link between two such
        nodes, the nearest of the component's links (:meth:`_far`)."""
        f = router.fabric
        H = f.graph
        live = f.node_index
        N = len(f.nodes)
        gone = self.gone
        tail, head = router.link_tail, router.link_head
        lbw, llat = router.link_bandwidth, router.link_latency
        _, comp = csgraph.connected_components(
            sp.csr_matrix((np.ones(len(tail)), (tail, head)), shape=(N, N)), directed=False)
        sizes = np.bincount(comp, minlength=1)
        main = int(np.argmax(sizes))          # the largest (lowest label at a tie)
        if self.keep is not None:             # the component routed (Bypasses)
            main = int(comp[np.flatnonzero(self.keep)[0]])
        names = self.thru.f.nodes
        ends = [(idx[a], idx[b]) for a, b in xe]
        cand = sorted({live[y] for a, b in ends for p in (a, b) if not gone[p]
                       for y in H[f.nodes[p]]})
        dist = {}
        if cand:
            adj = sp.csr_matrix((np.ones(len(tail)), (tail, head)), shape=(N, N))
            D = csgraph.shortest_path(adj, directed=True, unweighted=True, indices=cand)
            D[~np.isfinite(D)] = N
            dist = {c: D[k] for k, c in enumerate(cand)}
        # which directed links qualify for which bandwidth/latency (a failed link's class)
        out = {}
        for k, (a, b) in enumerate(ends):
            k_bw, k_lat = float(ext_bw[self.nx0 + 2 * k]), float(ext_lat[self.nx0 + 2 * k])
            ok = (lbw <= k_bw) & (llat >= k_lat)
            for t, h in ((a, b), (b, a)):
                if gone[t] and gone[h]:
                    out[(t, h)] = self._far(router, t, h, ok, comp[tail] == main)
                    continue
                p, x = (t, h) if not gone[t] else (h, t)
                pn, xname = names[p], names[x]
                ys = [live[y] for y in H[pn]]
                if not ys:
                    continue
                lid = [router.link_index(pn, f.nodes[y]) if p == t
                       else router.link_index(f.nodes[y], pn) for y in ys]
                good = [y for y, li in zip(ys, lid, strict=True) if ok[li]]
                incomp = comp[tail] == comp[p]
                if not good and (ok & incomp).any():
                    out[(t, h)] = self._far(router, t, h, ok, incomp)
                    continue
                e = G0.edges[pn, xname]
                others = [live[q] for q in G0[xname] if q in live and not gone[live[q]]
                          and live[q] != p]
                near = set(G0[xname])

                def key(y, pn=pn, e=e, others=others, near=near):
                    g = H.edges[pn, f.nodes[y]]
                    return (g["bandwidth"] > e["bandwidth"], g["latency"] < e["latency"],
                            f.nodes[y] in near, float(dist[y][others].sum()), y)

                y = min(good or ys, key=key)
                out[(t, h)] = (router.link_index(pn, f.nodes[y]) if p == t
                               else router.link_index(f.nodes[y], pn))
        return out

    def _far(self, router, u, v, ok, incomp):
        """The live link nearest the failed ``u -> v`` (``thru`` node indices) among those
        with ``incomp`` (its component's): first the links ``ok`` (no wider, no faster)
        when any, then by hops on the intact grid from ``u`` to its tail plus from its head
        to ``v``, then by link id; ``None`` when the component has no link."""
        if not incomp.any():
            return None
        G0d = self._intact_dist()
        du, dv = G0d(u), G0d(v)
        tail, head = router.link_tail, router.link_head
        pick = incomp & ok if (incomp & ok).any() else incomp
        cost = du[tail] + dv[head]
        cost = np.where(pick, cost, np.inf)
        return int(np.argmin(cost))           # the lowest id at a tie

    def _intact_dist(self):
        """Hop distance on the intact grid from a ``thru`` node index (an array over the
        ``thru`` node indices), cached."""
        if not hasattr(self, "_d0"):
            thru = self.thru
            M = len(thru.f.nodes)
            G0 = thru.f.graph
            ix = thru.f.node_index
            uu = [ix[a] for a, _ in G0.edges]
            vv = [ix[b] for _, b in G0.edges]
            adj = sp.csr_matrix((np.ones(len(uu)), (uu, vv)), shape=(M, M))
            self._d0, self._d0adj = {}, adj
        cache, adj = self._d0, self._d0adj

        def get(x):
            if x not in cache:
                d = csgraph.shortest_path(adj, directed=False, unweighted=True, indices=[x])[0]
                d[~np.isfinite(d)] = len(d) + 1
                cache[x] = d
            return cache[x]

        return get

    def _tunnel(self, a, b):
        """Links of the one shortest surviving path from ``a`` to ``b`` (the engine's hash
        choice), ``[]`` when ``a == b``, ``None`` when none."""
        key = (a, b)
        if key not in self._tunnels:
            eng = self.router._engine
            if a == b:
                self._tunnels[key] = []
            elif not eng.reachable(np.array([a]), np.array([b]))[0]:
                self._tunnels[key] = None
            else:
                self._tunnels[key] = [int(k) for k in eng.path(a, b)]
        return self._tunnels[key]

    def _flagged(self, s, d):
        """Pairs a way of whose route (as the policy uses them) crosses a failed node."""
        if self.thru is None:
            return np.zeros(len(s), dtype=bool)
        return (self.flag.evaluate(s, d)[1] > 0) & ~self.twin._off(s, d)

    def _expand(self, s, t, row):
        """The live links of one way (a ``thru`` link row), or ``None`` when the way is
        dead: a failed link whose ends are disconnected, a run with a link with no
        stand-in or no path between its stand-ins."""
        row = [k for k in row if k >= 0]
        tail, head = self.tail, self.head
        if not row or tail[row[0]] != s or head[row[-1]] != t or any(
                head[a] != tail[b] for a, b in itertools.pairwise(row)):
            return None
        out, i, n, x0 = [], 0, self.n, self.nx0
        while i < len(row):
            k = row[i]
            if k < n:
                out.append(k)
            elif k < x0:
                out.extend(self.paths[k - n].tolist())
            else:                            # a run through failed nodes, p -> x ... y -> q
                j = i                        # (it ends at the first node a route can pass:
                while self.gone[head[row[j]]]:   # a route may cross two runs apart)
                    j += 1
                    if j == len(row):        # it ends at a node left with no live link
                        return None
                run = row[i:j + 1]
                sls = [self.standin.get((int(tail[k2]), int(head[k2]))) for k2 in run]
                if None in sls:
                    return None
                seg = self._joined(int(tail[row[i]]), int(head[row[j]]), sls, merge=True)
                if seg is not None and (len(seg) < len(run) or self.router.link_latency[
                        seg].sum() < self.thru.lat[run].sum() * (1 - 1e-12)):
                    seg = None               # shorter than the run: cross each stand-in
                if seg is None:
                    seg = self._joined(int(tail[row[i]]), int(head[row[j]]), sls, merge=False)
                if seg is None:
                    return None
                out += seg
                i = j
            i += 1
        return out

    def _joined(self, p, q, sls, merge):
        """The live links of a run from ``p`` to ``q`` repaired by its stand-ins ``sls``, in
        order, joined by tunnels; with ``merge``, consecutive equal stand-ins share one
        crossing. ``None`` when a tunnel is missing."""
        out, cur, prev = [], p, None
        lt, lh = self.router.link_tail, self.router.link_head
        for sl in sls:
            if merge and sl == prev:
                continue
            mid = self._tunnel(cur, int(lt[sl]))
            if mid is None:
                return None
            out += mid + [sl]
            cur, prev = int(lh[sl]), sl
        mid = self._tunnel(cur, q)
        return None if mid is None else out + mid

    def _repaired(self, s, d):
        """The ways of pairs crossing a failed node: ``(pair, weight, links)`` lists (the
        weights of a pair's live ways sum to 1), every way of every tie enumerated."""
        thru = self.thru
        nd = thru.ndim
        tied = thru.ties(s, d)
        tmask = tied.astype(np.int64) @ (1 << np.arange(nd, dtype=np.int64))
        ways = []
        for c in range(2 ** nd):
            sel = np.flatnonzero((c & ~tmask) == 0)
            if not len(sel):
                continue
            choice = ((c >> np.arange(nd)) & 1).astype(bool)
            M = thru.path_links_many(s[sel], d[sel],
                                     ties=np.broadcast_to(choice, (len(sel), nd)))
            for i, row in zip(sel.tolist(), M.tolist(), strict=True):
                links = self._expand(int(s[i]), int(d[i]), row)
                if links is not None:
                    ways.append((i, 0.5 ** int(tmask[i]).bit_count(), links))
        total = np.zeros(len(s))
        for i, wt, _ in ways:
            total[i] += wt
        return [(i, wt / total[i], np.array(links, dtype=np.int64))
                for i, wt, links in ways], total == 0

    def loads(self, s, d, w, out):
        """Add the loads of pairs the twin routes to ``out``; return the mask of the others."""
        flag = self._flagged(s, d)
        ext = np.zeros(self.n + len(self.paths))
        _, _, dead = self.twin.evaluate(s, d, np.where(flag, 0.0, w), ext, want_latency=False)
        out += ext[:self.n]
        if len(self.paths):
            out += self.member.T @ ext[self.n:]
        if flag.any():
            at = np.flatnonzero(flag)
            ways, none = self._repaired(s[at], d[at])
            if ways:
                links = np.concatenate([k for _, _, k in ways])
                wts = np.concatenate([np.full(len(k), w[at[i]] * wt) for i, wt, k in ways])
                out += np.bincount(links, weights=wts, minlength=self.n)
            dead[at] = none
        return dead

    def evaluate(self, s, d, want_latency=True):
        """(hops, latency, routed-whole mask) as :meth:`DimOrder.evaluate`: the maximum over
        the ways of a tie, each bypass counted with its hops and latency."""
        # the twin's ways once, timed by hops and (when wanted) by latency
        timings = (self.hop_twin, self.twin) if want_latency else (self.hop_twin,)
        _, lats, dead = self.twin.evaluate_timed(s, d, timings)
        hw, lat = lats[0], lats[1] if want_latency else np.zeros(len(s))
        hops = np.rint(hw).astype(np.int64)
        flag = self._flagged(s, d)
        if flag.any():
            at = np.flatnonzero(flag)
            ways, none = self._repaired(s[at], d[at])
            h, t = np.zeros(len(at), dtype=np.int64), np.zeros(len(at))
            ll = self.router.link_latency
            for i, _, k in ways:
                h[i] = max(h[i], len(k))
                if want_latency:
                    t[i] = max(t[i], float(ll[k].sum()))
            hops[at], lat[at], dead[at] = h, t, none
        return hops, lat, dead

    def bottleneck(self, s, d):
        """Narrowest link of the pairs' paths (every way of a tie, bypasses expanded): the
        per-dimension bottleneck of the live links, and the links of every bypass taken."""
        out = self.twin.bottleneck(s, d)
        if len(self.paths):
            bw = self.bandwidth
            for way in ("plus", "minus"):     # every link of every combination of tie ways
                M = self._expanded(s, d, way)
                if M.shape[1]:
                    b = np.where(M >= 0, bw[np.maximum(M, 0)], np.inf).min(axis=1)
                    out = np.minimum(out, b)
        flag = self._flagged(s, d)
        if flag.any():
            at = np.flatnonzero(flag)
            b = np.full(len(at), np.inf)
            for i, _, k in self._repaired(s[at], d[at])[0]:
                if len(k):
                    b[i] = min(b[i], float(self.bandwidth[k].min()))
            out[at] = b
        return out

    def path_links_many(self, s, d):
        """Links of the pairs' paths (virtual links expanded), (P, H) padded with -1; rows
        of pairs routed whole are meaningless (the caller replaces them). A pair crossing a
        failed node: its way of largest latency (the first enumerated, all ``+``, when equal)."""
        M = self._expanded(s, d, "longest")
        flag = self._flagged(s, d)
        if not flag.any():
            return M
        at = np.flatnonzero(flag)
        return self._longest_ways(M, at, self._repaired(s[at], d[at])[0])

    def dead_and_path_links(self, s, d):
        """``(evaluate(s, d)[2], path_links_many(s, d))``, the pairs crossing a failed node
        flagged and repaired once for both (what the router's ``path_links_many`` asks)."""
        dead, M = self.twin.dead_and_path_links(s, d, "longest")
        M = self._expand_virtual(M)
        flag = self._flagged(s, d)
        if flag.any():
            at = np.flatnonzero(flag)
            ways, none = self._repaired(s[at], d[at])
            dead[at] = none
            M = self._longest_ways(M, at, ways)
        return dead, M

    def _longest_ways(self, M, at, ways):
        """``M`` with the rows ``at`` (pairs crossing a failed node) replaced by each pair's
        repaired way of largest latency (``ways``: :meth:`_repaired`'s, rows into ``at``)."""
        best, lat = {}, self.router.link_latency
        for i, _, k in ways:
            t = float(lat[k].sum())
            if i not in best or t > best[i][0]:
                best[i] = (t, k)
        width = max([M.shape[1]] + [len(k) for _, k in best.values()])
        M = np.pad(M, ((0, 0), (0, width - M.shape[1])), constant_values=-1)
        for i, (_, k) in best.items():
            M[at[i]] = -1
            M[at[i], :len(k)] = k
        return M

    def _expanded(self, s, d, way):
        return self._expand_virtual(self.twin.path_links_many(s, d, tie_way=way))

    def _expand_virtual(self, M):
        """``M`` (the twin's links) with each virtual link replaced by its bypass."""
        if not len(self.paths) or not (M >= self.n).any():
            return M
        rows = []
        for row in M:
            parts = [self.paths[k - self.n] if k >= self.n else np.array([k])
                     for k in row[row >= 0].tolist()]
            rows.append(np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64))
        width = max(len(r) for r in rows)
        out = np.full((len(rows), width), -1, dtype=np.int64)
        for i, r in enumerate(rows):
            out[i, :len(r)] = r
        return out


class Bypasses:
    """The twins of a grid the failures split into groups of live chips
    (:attr:`fabric.Failures.islands`, :attr:`fabric.Failures.cut_off`): one :class:`Bypass`
    per component holding two or more live chips, each passing every node outside its
    component as failed (a chip cut off alone among them), so a pair inside one group is
    routed by the same rule as on a grid left in one piece; a pair joining two groups is
    routed whole (and the router then finds no path). The survivors' group, the first, is
    the component of the first live chip in rank order that is in no island and not cut
    off; there is none when every live chip is cut off alone (then only pairs of a chip
    with itself, no hop, are routed). Same methods as :class:`Bypass`; each twin is built
    when a pair of its group is first asked."""

    def __init__(self, router):
        f = router.fabric
        N = len(f.nodes)
        tail, head = router.link_tail, router.link_head
        _, self.comp = csgraph.connected_components(
            sp.csr_matrix((np.ones(len(tail)), (tail, head)), shape=(N, N)), directed=False)
        idx = f.node_index
        grouped = {c for cs, _ in f.failures.islands for c in cs} | set(f.failures.cut_off)
        first = next((c for c in f.endpoints if c not in grouped), None)
        self.labels = ([int(self.comp[idx[first]])] if first is not None else []) + [
            int(self.comp[idx[cs[0]]]) for cs, _ in f.failures.islands]
        self.router = router
        self.n = router.n_links
        self._twins = {}
        # whether a component is one of the groups (np.isin by a look-up)
        self._grouped = np.zeros(int(self.comp.max(initial=-1)) + 1, dtype=bool)
        self._grouped[self.labels] = True

    def _twin(self, label):
        if label not in self._twins:
            self._twins[label] = Bypass(self.router, keep=self.comp == label)
        return self._twins[label]

    def _groups(self, s, d):
        """``(twin, rows)`` for each group's pairs; the rows of the pairs joining two
        groups (or a group of one chip) last, with twin ``None``. A pair ``s == d`` goes
        with the survivors' group."""
        cs, cd = self.comp[s], self.comp[d]
        same = (cs == cd) & self._grouped[cs]
        out = []
        for label in self.labels:
            rows = np.flatnonzero(same & (cs == label))
            if label == self.labels[0]:
                rows = np.union1d(rows, np.flatnonzero(s == d))
            if len(rows):
                out.append((self._twin(label), rows))
        rest = np.flatnonzero(~same & (s != d))
        if len(rest):
            out.append((None, rest))
        return out

    def loads(self, s, d, w, out):
        dead = np.zeros(len(s), dtype=bool)
        for twin, rows in self._groups(s, d):
            if twin is None:
                dead[rows] = True
            else:
                dead[rows] = twin.loads(s[rows], d[rows], w[rows], out)
        return dead

    def evaluate(self, s, d, want_latency=True):
        hops = np.zeros(len(s), dtype=np.int64)
        lat = np.zeros(len(s))
        dead = np.zeros(len(s), dtype=bool)
        for twin, rows in self._groups(s, d):
            if twin is None:
                dead[rows] = True
            else:
                hops[rows], lat[rows], dead[rows] = twin.evaluate(s[rows], d[rows],
                                                                  want_latency)
        return hops, lat, dead

    def bottleneck(self, s, d):
        out = np.full(len(s), np.inf)
        for twin, rows in self._groups(s, d):
            if twin is not None:
                out[rows] = twin.bottleneck(s[rows], d[rows])
        return out

    def path_links_many(self, s, d):
        parts = [(rows, twin.path_links_many(s[rows], d[rows]))
                 for twin, rows in self._groups(s, d) if twin is not None]
        return self._joined_rows(len(s), parts)

    def dead_and_path_links(self, s, d):
        dead = np.zeros(len(s), dtype=bool)
        parts = []
        for twin, rows in self._groups(s, d):
            if twin is None:
                dead[rows] = True
            else:
                dead[rows], M = twin.dead_and_path_links(s[rows], d[rows])
                parts.append((rows, M))
        return dead, self._joined_rows(len(s), parts)

    @staticmethod
    def _joined_rows(n, parts):
        width = max([M.shape[1] for _, M in parts], default=0)
        out = np.full((n, width), -1, dtype=np.int64)
        for rows, M in parts:
            out[rows, :M.shape[1]] = M
        return out
