"""Collective cost engine: timings against the issue's performance targets.

Targets (issue 5):
* every operation x every applicable algorithm x 31 sizes (1 KiB to 1 GiB) on
  ``sd200-ultra`` and on ``cluster-128``: under 5 s together;
* ring all-reduce over every rank of ``fattree:k=40`` (16,000 ranks) on the fabric: under 10 s;
* ring search (edge-disjoint Hamiltonian cycles, issue 13) on ``torus:16x16x16`` and on
  ``fattree:k=16``: under 10 s each.

Each timing starts from freshly built fabrics (no cached routing). Run:

    python benchmarks/bench_collectives.py
"""

import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import topologies
from analysis import ALGORITHMS, NotApplicableError, cost, ring_search

# 31 sizes from 1 KiB to 1 GiB, geometrically spaced (powers of two give only 21)
SIZES = [round(x) for x in np.geomspace(2**10, 2**30, 31)]


def sweep(fabric):
    """Cost every op x algorithm x size; return (evaluations, not-applicable pairs)."""
    done, skipped = 0, 0
    p = fabric.n_endpoints
    for op, algs in ALGORITHMS.items():
        for alg in algs:
            for size in SIZES:
                nbytes = np.full((p, p), size / p) if op == "all-to-allv" else size
                try:
                    cost(fabric, op, nbytes, algorithm=alg)
                except NotApplicableError:
                    skipped += 1
                    break
                done += 1
    return done, skipped


class RouterClock:
    """Count and time the Router calls a run makes (the routing contract's cost)."""

    def __init__(self, fabric):
        self.calls, self.seconds = 0, 0.0
        router = fabric.router
        for name in ("loads", "loads_grouped", "latency"):
            setattr(router, name, self._wrap(getattr(router, name)))

    def _wrap(self, fn):
        def timed(*args, **kwargs):
            t = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self.calls += 1
                self.seconds += time.perf_counter() - t
        return timed

    def __str__(self):
        return f"{self.calls} Router calls took {self.seconds:.2f} s"


def router_detail():
    """The Router calls behind the targets, each from a fresh Router."""
    from fabric import Router

    f = topologies.build("fattree:k=40")
    ep = f.endpoint_indices
    r = Router(f)
    t = time.perf_counter()
    r.loads(ep, np.roll(ep, -1), 1.0)
    a = time.perf_counter() - t
    t = time.perf_counter()
    r.latency(ep, np.roll(ep, -1))
    b = time.perf_counter() - t
    print(f"  fattree:k=40 ring ({len(ep)} pairs), fresh Router: loads {a:.2f} s, "
          f"then latency {b:.2f} s")
    f = topologies.build("cluster-128")
    ep = f.endpoint_indices
    n = len(ep)
    s = np.concatenate([ep] * (n - 1))
    d = np.concatenate([np.roll(ep, -k) for k in range(1, n)])
    g = np.repeat(np.arange(n - 1), n)
    t = time.perf_counter()
    grouped = Router(f).loads_grouped(s, d, 1.0, g, n - 1)
    a = time.perf_counter() - t
    r = Router(f)
    t = time.perf_counter()
    each = [r.loads(s[g == k], d[g == k], 1.0) for k in range(n - 1)]
    b = time.perf_counter() - t
    same = np.allclose(grouped, each, rtol=1e-12, atol=1e-9)
    print(f"  cluster-128 {n - 1} pairwise shifts, fresh Router: one loads_grouped {a:.2f} s, "
          f"{n - 1} loads calls {b:.2f} s (same loads: {same})")


def main():
    t0 = time.perf_counter()
    total = 0
    for name in ("sd200-ultra", "cluster-128"):
        f = topologies.build(name)
        t = time.perf_counter()
        clock = RouterClock(f)
        done, skipped = sweep(f)
        total += done
        print(f"{name}: {done} evaluations ({skipped} op/algorithm pairs not applicable) "
              f"in {time.perf_counter() - t:.2f} s; {clock}")
    elapsed = time.perf_counter() - t0
    print(f"all ops x algorithms x 31 sizes, both fabrics: {elapsed:.2f} s "
          f"(target < 5 s: {'met' if elapsed < 5 else 'NOT met'}; {elapsed / 5:.2f} of target)")
    symmetric()


def symmetric():
    """The same sweep under the symmetric-memory runtime (its algorithms, LL and bulk kernels
    with their barriers, fences and peer round trips): sd200-ultra and one cluster-128 server
    (the runtime needs one load/store domain)."""
    from analysis._runtime_cost import SYMMETRIC_ALGORITHMS
    t0 = time.perf_counter()
    done = 0
    for name in ("sd200-ultra", "cluster-128"):
        f = topologies.build(name)
        ranks = f.endpoints if name == "sd200-ultra" else f.endpoints[:8]
        p = len(ranks)
        for op, algs in SYMMETRIC_ALGORITHMS.items():
            for alg in ("auto",) + algs:
                for size in SIZES:
                    nbytes = np.full((p, p), size / p) if op == "all-to-allv" else size
                    try:
                        cost(f, op, nbytes, algorithm=alg, runtime="symmetric-memory",
                             ranks=ranks[:2] if op == "send-recv" else ranks)
                    except NotApplicableError:
                        break
                    done += 1
    elapsed = time.perf_counter() - t0
    print(f"symmetric-memory runtime, all ops x algorithms (and auto) x 31 sizes, sd200-ultra "
          f"and a cluster-128 server: {done} evaluations in {elapsed:.2f} s "
          f"(target < 5 s: {'met' if elapsed < 5 else 'NOT met'})")

    t = time.perf_counter()
    f = topologies.build("fattree:k=40")
    clock = RouterClock(f)
    r = cost(f, "all-reduce", 2**30, algorithm="ring")
    elapsed = time.perf_counter() - t
    print(f"ring all-reduce, fattree:k=40, {r.ranks} ranks, 1 GiB: {elapsed:.2f} s "
          f"(target < 10 s: {'met' if elapsed < 10 else 'NOT met'}); time {r.time * 1e3:.1f} ms, "
          f"busbw {r.busbw / 1e9:.1f} GB/s; {clock}")
    router_detail()
    rings()


def rings():
    """Ring search (issue 13): rings found and seconds, from a freshly built fabric."""
    for spec in ("torus:16x16x16", "fattree:k=16", "torus:8x8x8", "sd200-ultra"):
        f = topologies.build(spec)
        t = time.perf_counter()
        found = ring_search(f)
        elapsed = time.perf_counter() - t
        print(f"ring search, {spec} ({f.n_endpoints} ranks): {len(found)} ring(s) in "
              f"{elapsed:.2f} s (target < 10 s: {'met' if elapsed < 10 else 'NOT met'})")


if __name__ == "__main__":
    main()
