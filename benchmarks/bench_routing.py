"""Routing, access latency, link loads and throughput against the issue-4 targets.

Run: ``python benchmarks/bench_routing.py`` (prints one line per figure; about a minute), or
``python benchmarks/bench_routing.py degraded_grid`` (or any part's name) for one part.

Targets (issue 4):
  * link loads of uniform all-to-all on fattree:k=32 (8,192 hosts): < 10 s
  * all chip-pair routes and latencies on sd200-ultra: < 0.2 s
  * link loads of all-to-all on torus:16x16x16 >= 50x faster than routing each pair
    with networkx shortest paths and accumulating in Python, same loads, side by side
  * throughput LP on a 512-endpoint fabric: < 60 s

The networkx baseline routes each pair on a layered copy of the torus (layer d holds
the links of dimension d, and a free step leads from layer d to layer d + 1), so that
``networkx.all_shortest_paths`` returns exactly the dimension-order paths (both ways
round at a tie) and its loads equal cofabric's. A full networkx all-to-all
(16.7 M pairs) would take days, so it runs on a random sample of pairs; cofabric
routes the same sample (loads compared to 1e-9) and the whole all-to-all, and the
ratio is per pair. For reference the cheapest networkx route (one bidirectional-BFS
``shortest_path`` per pair on the plain torus, whose tie-breaks and so loads differ) is
timed too.
"""

import sys
import time
from pathlib import Path

import networkx as nx
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import itertools

import topologies
from analysis import link_loads, throughput, traffic
from fabric import Router, access_latencies


def timed(fn, *args, **kw):
    t = time.perf_counter()
    out = fn(*args, **kw)
    return out, time.perf_counter() - t


def fat_tree():
    f = topologies.build("fattree:k=32")
    t = traffic(f, "all-to-all", 1.0)
    ll, dt = timed(link_loads, f, t)
    n = f.n_endpoints
    print(f"fattree:k=32 ({n} hosts) uniform all-to-all link loads: {dt:.2f} s "
          f"(target < 10 s); total {ll.loads.sum():.4e} B, max link {ll.max_load:.0f} B")
    return dt


def sd200():
    f = topologies.build("sd200-ultra")

    def all_pairs():
        r = Router(f)  # fresh: routing tables built inside the timing
        ep = f.endpoint_indices
        s, d = np.meshgrid(ep, ep, indexing="ij")
        s, d = s.ravel(), d.ravel()
        hops = r.hops(s, d)
        lat = r.latency(s, d)
        loads = r.loads(s, d, 1.0)
        links = r.path_links_many(s, d)
        return hops, lat, loads, links

    (hops, lat, _loads, _links), dt = timed(all_pairs)
    (_, _, _acc), dt2 = timed(access_latencies, f, op="load")
    print(f"sd200-ultra all {len(hops)} chip-pair routes (paths, hops, latency, loads): "
          f"{dt:.3f} s (target < 0.2 s); max path latency {lat.max() * 1e9:.1f} ns over "
          f"{hops.max()} hops; + load access latencies of all pairs {dt2:.3f} s")
    return dt


def _layered(f):
    """A directed graph whose shortest paths are the torus's dimension-order paths."""
    G = f.graph
    ndim = len(f.params["shape"])
    H = nx.DiGraph()
    for u, v in G.edges:
        cu, cv = G.nodes[u]["coord"], G.nodes[v]["coord"]
        d = next(i for i in range(ndim) if cu[i] != cv[i])
        H.add_edge((u, d), (v, d))
        H.add_edge((v, d), (u, d))
    for n in f.endpoints:
        for d in range(ndim - 1):
            H.add_edge((n, d), (n, d + 1))
    return H, ndim


def torus(samples=200, seed=0):
    f = topologies.build("torus:16x16x16")
    r = f.router
    n = f.n_endpoints
    ep = f.endpoint_indices
    t = traffic(f, "all-to-all", 1.0)
    _full, dt_full = timed(r.loads_matrix, t)
    rng = np.random.default_rng(seed)
    i = rng.integers(0, n, samples)
    j = rng.integers(0, n, samples)
    keep = i != j
    i, j = i[keep], j[keep]
    mine, dt_mine = timed(r.loads, ep[i], ep[j], 1.0)
    H, ndim = _layered(f)

    def baseline():
        out = np.zeros(r.n_links)
        for a, b in zip(i, j):
            s, d = f.endpoints[a], f.endpoints[b]
            paths = list(nx.all_shortest_paths(H, (s, 0), (d, ndim - 1)))
            for p in paths:
                for (u, du), (v, dv) in itertools.pairwise(p):
                    if u != v:
                        out[r.link_index(u, v)] += 1.0 / len(paths)
        return out

    def plain():
        # the cheapest networkx way: one bidirectional-BFS shortest path per pair on the plain
        # torus; its paths break ties differently, so its loads differ (same total)
        out = np.zeros(r.n_links)
        for a, b in zip(i, j):
            p = nx.shortest_path(f.graph, f.endpoints[a], f.endpoints[b])
            for u, v in itertools.pairwise(p):
                out[r.link_index(u, v)] += 1.0
        return out

    plain_loads, dt_plain = timed(plain)
    ref, dt_nx = timed(baseline)
    same = np.allclose(mine, ref, atol=1e-9)
    per_nx = dt_nx / len(i)
    per_full = dt_full / (n * (n - 1))
    print(f"torus:16x16x16 all-to-all link loads ({n * (n - 1)} pairs): cofabric {dt_full:.2f} s")
    print(f"  sample of {len(i)} pairs: networkx {dt_nx:.2f} s, cofabric {dt_mine * 1e3:.1f} ms, "
          f"same loads: {same}; sample ratio {dt_nx / dt_mine:.0f}x")
    print(f"  per pair: networkx {per_nx * 1e3:.2f} ms, cofabric all-to-all "
          f"{per_full * 1e9:.0f} ns: {per_nx / per_full:.0f}x (target >= 50x); networkx full "
          f"all-to-all extrapolated {per_nx * n * (n - 1) / 3600:.0f} h")
    per_plain = dt_plain / len(i)
    print(f"  cheaper baseline, nx.shortest_path on the plain torus (different tie-breaks, "
          f"same total {plain_loads.sum() == mine.sum()}): {per_plain * 1e3:.3f} ms per pair: "
          f"{per_plain / per_full:.0f}x")
    return per_nx / per_full, same


def lp():
    cases = (("leafspine:k=32", "lp"), ("leafspine:k=32", "auto"), ("torus:8x8x8", "auto"),
             ("torus:4x4x4", "lp"), ("torus:16x16x16", "auto"), ("cluster-128", "lp"),
             ("cluster-128", "auto"), ("fattree:k=32", "auto"))
    for spec, method in cases:
        f = topologies.build(spec)
        res, dt = timed(throughput, f, traffic(f, "all-to-all", 1.0), method=method)
        print(f"throughput LP {spec} ({f.n_endpoints} endpoints, {res.method}, "
              f"{res.commodities} commodities, {res.variables} variables): {dt:.1f} s "
              f"(target < 60 s for 512 endpoints); K = {res.k:.6g}/s")


def forwarding():
    from fabric import forwarding_tables

    for spec in ("sd200-ultra", "fattree:k=8,chip=h100", "cluster-128"):
        f = topologies.build(spec)
        ft, dt = timed(forwarding_tables, f)
        print(f"forwarding tables {spec}: {dt:.2f} s; largest table {ft.max_entries} entries, "
              f"all nodes {ft.total_entries}; per-dimension: {ft.per_dimension_entries}")


def degraded_grid(reps=7):
    """One pair at a time on degraded grids (what the routing property tests do), and every
    pair's path at once: CPU seconds, the least of ``reps`` runs (this machine is shared)."""
    def least(fn):
        best = float("inf")
        for _ in range(reps):
            t = time.process_time()
            fn()
            best = min(best, time.process_time() - t)
        return best

    for spec, links, chips in (("torus:4x4x4", [("chip0", "chip1"), ("chip5", "chip21")],
                                ["chip42"]),
                               ("torus:4x4", [("chip0", "chip1")], [])):
        g = topologies.build(spec).without(links=links, chips=chips)
        r = g.router
        ep = g.endpoint_indices
        pairs = [(a, b) for a in ep for b in ep if a != b][::7][:100]
        r.latency([pairs[0][0]], [pairs[0][1]])      # the bypass twins built once, untimed
        path = least(lambda r=r, pairs=pairs: [r.path_links(a, b) for a, b in pairs]) / len(pairs)
        lat = least(lambda r=r, pairs=pairs: [r.latency(a, b) for a, b in pairs]) / len(pairs)
        print(f"degraded {spec} ({len(links)} links, {len(chips)} chip failed), one pair at a "
              f"time: path_links {path * 1e6:.0f} us, latency {lat * 1e6:.0f} us")
    f = topologies.build("torus:16x16").without(links=[("chip0", "chip1")])
    dor = f.router._dor
    ep = np.asarray(f.endpoint_indices)
    s, d = np.repeat(ep, len(ep)), np.tile(ep, len(ep))
    dt = least(lambda: dor.path_links_many(s, d))
    print(f"degraded torus:16x16 dimension-order paths of all {len(s)} pairs: {dt * 1e3:.1f} ms")


def int_matrix():
    """Router.loads_matrix of an all-to-all given as an int64 matrix (4,096 ranks: 134 MB)
    against the same matrix as floats: time and the peak of memory numpy allocates
    (tracemalloc), the matrix itself not counted. The int matrix was converted whole to
    floats before its first block (session 33's note); it is read a block at a time."""
    import tracemalloc

    f = topologies.build("torus:16x16x16")
    r = f.router
    n = f.n_endpoints
    r.loads_matrix(np.eye(n)[::-1])         # the router's own tables, built once, not counted
    for dtype in (np.int64, np.float64):
        m = np.ones((n, n), dtype=dtype)
        np.fill_diagonal(m, 0)
        tracemalloc.start()
        loads, dt = timed(r.loads_matrix, m)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        print(f"torus:16x16x16 loads_matrix of a {n} x {n} {np.dtype(dtype).name} all-to-all: "
              f"{dt:.2f} s, peak {peak / 2**20:.0f} MiB beside the matrix "
              f"({m.nbytes / 2**20:.0f} MiB); total {loads.sum():.4e} B")


if __name__ == "__main__":
    # python benchmarks/bench_routing.py [part ...]: every part, or the ones named
    parts = {"fat_tree": fat_tree, "sd200": sd200, "torus": torus, "lp": lp,
             "forwarding": forwarding, "degraded_grid": degraded_grid, "int_matrix": int_matrix}
    for name in sys.argv[1:] or parts:
        parts[name]()
