"""Minimal routing on an intact dragonfly, route by route in closed form (private).

Groups whose routers are joined all-to-all, chips on one router each, and
exactly one global link between every two groups (Kim, Dally, Scott, Abts,
ISCA 2008: the builder's canonical dragonfly) make every minimal route
unique: from router ``R`` of group ``G`` to router ``S`` of group ``G'`` it is
the local link to the router ``X`` that holds the global link to ``G'`` (if
``R != X``), that global link to its landing router ``Y``, and the local link
to ``S`` (if ``Y != S``); inside a group, one local link. With the chips' own
links at both ends a route has at most five links, so any batch of pairs is
routed by table look-ups (every ECMP mode agrees: there is one path).

The hop histogram over every ordered chip pair adds up per group pair too: a route
from ``G`` to ``G'`` has 3 links plus one for ``R != X`` and one for ``Y != S``, so of its
``P_G P_G'`` pairs ``p_X p_Y`` take 3 links, ``p_X (P_G' - p_Y) + (P_G - p_X) p_Y`` take 4
and ``(P_G - p_X)(P_G' - p_Y)`` take 5; inside a group, two chips of one router 2 links
and of two routers 3.

Uniform all-to-all adds up per group pair instead: the global link from ``G``
to ``G'`` carries ``P_G P_G' w`` (``P`` chips per group), the local link from
``R`` to ``X`` carries ``p_R P_G' w`` for every ``G'`` whose global link ``X``
holds, the local link from ``Y`` to ``S`` carries ``P_G p_S w`` for every ``G``
whose global link lands on ``Y``, and each local link ``R -> S`` its own
group's ``p_R p_S w``.

:meth:`Minimal.build` checks these conditions on the links and returns None
when one fails (a degraded fabric, or a graph that only looks like a
dragonfly); :class:`fabric.Router` then uses the general engine.
"""

import numpy as np

__all__ = []


class Minimal:
    """Unique minimal routes of an intact dragonfly (see the module docstring)."""

    @classmethod
    def build(cls, fabric, tail, head, group):
        if fabric.failures.degraded:
            return None
        G = fabric.graph
        N = len(fabric.nodes)
        chip = np.fromiter((G.nodes[n]["kind"] == "chip" for n in fabric.nodes), dtype=bool,
                           count=N)
        ep = fabric.endpoint_indices
        if not chip[ep].all() or int(chip.sum()) != len(ep) or (group < 0).any():
            return None
        if (np.bincount(tail, minlength=N)[chip] != 1).any():
            return None
        chip_up = chip[tail]
        if chip[head[chip_up]].any():
            return None
        rr = ~chip[tail] & ~chip[head]
        gl = rr & (group[tail] != group[head])
        lo = rr & ~gl
        n_groups = int(group.max()) + 1
        routers = np.flatnonzero(~chip)
        per_group = np.bincount(group[routers], minlength=n_groups)
        lk = np.flatnonzero(lo)
        if len(lk) != int((per_group * (per_group - 1)).sum()):
            return None
        if len(np.unique(tail[lk] * N + head[lk])) != len(lk):
            return None
        gk = np.flatnonzero(gl)
        gpair = group[tail[gk]] * n_groups + group[head[gk]]
        if len(gk) != n_groups * (n_groups - 1) or len(np.unique(gpair)) != len(gk):
            return None
        return cls(N, chip, tail, head, group, n_groups, routers, per_group, lk, gk, gpair)

    def __init__(self, N, chip, tail, head, group, n_groups, routers, per_group, lk, gk, gpair):
        self.n_links = len(tail)
        self.group = group
        self.n_groups = n_groups
        up = np.flatnonzero(chip[tail])
        down = np.flatnonzero(chip[head])
        self.router_of = np.arange(N, dtype=np.int64)
        self.router_of[tail[up]] = head[up]
        self.up = np.full(N, -1, dtype=np.int64)
        self.up[tail[up]] = up
        self.down = np.full(N, -1, dtype=np.int64)
        self.down[head[down]] = down
        # routers numbered within their group
        order = np.lexsort((routers, group[routers]))
        r_sorted = routers[order]
        start = np.r_[0, np.cumsum(per_group)[:-1]]
        self.local_id = np.full(N, -1, dtype=np.int64)
        self.local_id[r_sorted] = np.arange(len(r_sorted)) - start[group[r_sorted]]
        a = int(per_group.max()) if len(per_group) else 0
        self.local = np.full((n_groups, a, a), -1, dtype=np.int64)
        self.local[group[tail[lk]], self.local_id[tail[lk]], self.local_id[head[lk]]] = lk
        self.glob = np.full(n_groups * n_groups, -1, dtype=np.int64)
        self.glob[gpair] = gk
        self.gtail = np.full(n_groups * n_groups, -1, dtype=np.int64)
        self.gtail[gpair] = tail[gk]
        self.ghead = np.full(n_groups * n_groups, -1, dtype=np.int64)
        self.ghead[gpair] = head[gk]
        self.tail, self.head, self.chip = tail, head, chip
        self._lk, self._gk = lk, gk

    def _local(self, u, v):
        """Local link from router u to router v of the same group; -1 where u == v."""
        g = self.group[u]
        lk = self.local[g, self.local_id[u], self.local_id[v]]
        return np.where(u == v, -1, lk)

    def links(self, src, dst):
        """The links of each pair's route in order: an int64 (P, 5) array, -1 for no link."""
        P = len(src)
        M = np.full((P, 5), -1, dtype=np.int64)
        move = src != dst
        R, S = self.router_of[src], self.router_of[dst]
        M[:, 0] = np.where(move, self.up[src], -1)
        M[:, 4] = np.where(move, self.down[dst], -1)
        gR, gS = self.group[R], self.group[S]
        same = move & (gR == gS) & (R != S)
        M[same, 1] = self._local(R[same], S[same])
        far = move & (gR != gS)
        key = gR[far] * self.n_groups + gS[far]
        X, Y = self.gtail[key], self.ghead[key]
        M[far, 1] = self._local(R[far], X)
        M[far, 2] = self.glob[key]
        M[far, 3] = self._local(Y, S[far])
        return M

    def loads(self, src, dst, w, out):
        M = self.links(src, dst)
        ok = M >= 0
        out += np.bincount(M[ok], weights=np.broadcast_to(w[:, None], M.shape)[ok],
                           minlength=self.n_links)
        return out

    def loads_grouped(self, src, dst, w, group, n_groups):
        M = self.links(src, dst)
        ok = M >= 0
        key = (group[:, None] * self.n_links + M)[ok]
        out = np.bincount(key, weights=np.broadcast_to(w[:, None], M.shape)[ok],
                          minlength=n_groups * self.n_links)
        return out.reshape(n_groups, self.n_links)

    def measure(self, src, dst, latency, bandwidth=None):
        """(hops, latency, narrowest bandwidth) of each pair's route."""
        M = self.links(src, dst)
        ok = M >= 0
        safe = np.maximum(M, 0)
        hops = ok.sum(axis=1).astype(np.int64)
        lat = np.where(ok, latency[safe], 0.0).sum(axis=1)
        bw = (np.where(ok, bandwidth[safe], np.inf).min(axis=1) if bandwidth is not None
              else np.full(len(src), np.inf))
        return hops, lat, bw

    def hop_counts(self):
        """``counts[h]``: ordered pairs of distinct chips whose route has ``h`` links (int64,
        length 6; module docstring)."""
        chip, group = self.chip, self.group
        N = len(chip)
        p = np.bincount(self.router_of[chip], minlength=N)          # chips per router
        P = np.bincount(group, weights=p, minlength=self.n_groups).astype(np.int64)
        counts = np.zeros(6, dtype=np.int64)
        counts[2] = int((p * (p - 1)).sum())
        counts[3] = int((P * P).sum() - (p * p).sum())
        gi, gj = np.nonzero(~np.eye(self.n_groups, dtype=bool))
        key = gi * self.n_groups + gj
        px, py = p[self.gtail[key]], p[self.ghead[key]]
        Pi, Pj = P[gi], P[gj]
        counts[3] += int((px * py).sum())
        counts[4] = int((px * (Pj - py) + (Pi - px) * py).sum())
        counts[5] = int(((Pi - px) * (Pj - py)).sum())
        return counts

    def all_to_all(self, n, w):
        """Uniform all-to-all loads, ``w`` bytes per ordered chip pair (module docstring)."""
        tail, head, chip, group = self.tail, self.head, self.chip, self.group
        N = len(chip)
        out = np.zeros(self.n_links)
        out[chip[tail]] = (n - 1) * w
        out[chip[head]] = (n - 1) * w
        p = np.bincount(self.router_of[chip], minlength=N).astype(float)  # chips per router
        P = np.bincount(group, weights=p, minlength=self.n_groups)  # chips per group
        gk, lk = self._gk, self._lk
        gt, gh = group[tail[gk]], group[head[gk]]
        out[gk] = P[gt] * P[gh] * w
        beyond = np.bincount(tail[gk], weights=P[gh], minlength=N)
        arriving = np.bincount(head[gk], weights=P[gt], minlength=N)
        u, v = tail[lk], head[lk]
        out[lk] = (p[u] * p[v] + p[u] * beyond[v] + arriving[u] * p[v]) * w
        return out
