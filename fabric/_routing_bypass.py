"""Bypasses of failed links under dimension-order routing (private).

Used by :class:`fabric.Router` on a degraded grid; the rule and its reason are in the
docstring of :mod:`fabric._routing` ("Failures under dimension order").

A failed link whose two ends are alive gets one *bypass* per direction: the one
shortest path of the surviving graph from its tail to its head that the engine's hash
picks (:meth:`Engine.path`). A pair's route is its dimension-order route on the intact
grid with every failed link replaced by that link's bypass. So the closed form still
routes every pair: a *twin* :class:`~fabric._routing_dor.DimOrder` is built over the
surviving links plus one *virtual* link per failed link (ids ``2E`` and up), whose
latency is its bypass's latency; the loads the twin puts on a virtual link are added to
every link of its bypass. Pairs the twin cannot route (their dimension-order route
crosses a failed node, or a failed link whose ends the failures left disconnected) are
routed whole by one shortest path of the surviving graph.
"""

import types

import numpy as np
import scipy.sparse as sp

from ._routing_dor import DimOrder

__all__ = []


class Bypass:
    """The twin dimension-order routing of a degraded grid (see the module docstring)."""

    def __init__(self, router):
        f = router.fabric
        eng = router._engine
        idx = f.node_index
        n = router.n_links
        ends = []
        for a, b in f.failures.links:
            if a in idx and b in idx:
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
        self.hop_twin = DimOrder(proxy, np.concatenate([np.ones(n), v_hops]), ext_bw, n + V,
                                 None, single_path=single)

    def loads(self, s, d, w, out):
        """Add the loads of pairs the twin routes to ``out``; return the mask of the others."""
        ext = np.zeros(self.n + len(self.paths))
        _, _, dead = self.twin.evaluate(s, d, w, ext, want_latency=False)
        out += ext[:self.n]
        if len(self.paths):
            out += self.member.T @ ext[self.n:]
        return dead

    def evaluate(self, s, d, want_latency=True):
        """(hops, latency, routed-whole mask) as :meth:`DimOrder.evaluate`: the maximum over
        the ways of a tie, each bypass counted with its hops and latency."""
        _, hw, dead = self.hop_twin.evaluate(s, d)
        lat = self.twin.evaluate(s, d)[1] if want_latency else np.zeros(len(s))
        return np.rint(hw).astype(np.int64), lat, dead

    def bottleneck(self, s, d):
        """Narrowest link of the pairs' paths (every way of a tie, bypasses expanded): the
        per-dimension bottleneck of the live links, and the links of every bypass taken."""
        out = self.twin.bottleneck(s, d)
        if not len(self.paths):
            return out
        bw = self.bandwidth
        for way in ("plus", "minus"):     # every link of every combination of tie ways
            M = self._expanded(s, d, way)
            if M.shape[1]:
                b = np.where(M >= 0, bw[np.maximum(M, 0)], np.inf).min(axis=1)
                out = np.minimum(out, b)
        return out

    def path_links_many(self, s, d):
        """Links of the pairs' paths (virtual links expanded), (P, H) padded with -1; rows
        of pairs routed whole are meaningless (the caller replaces them)."""
        return self._expanded(s, d, "longest")

    def _expanded(self, s, d, way):
        M = self.twin.path_links_many(s, d, tie_way=way)
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
