"""Scale of every operation on every family (issue 16): time, peak memory, fitted exponent.

Each (operation, spec) runs in a fresh Python process, so its peak resident memory
(``ru_maxrss``) is its own; the time printed is the operation's wall time and CPU
time, the fabric's build is timed separately (``build``), and a case is stopped at
``--timeout`` seconds. The fitted exponent is the slope of log(CPU time) against
log(endpoints) over the sizes from 512 endpoints up (smaller ones are dominated by
fixed costs).

Operations: ``build`` (the builder), ``a2a`` (uniform all-to-all link loads,
``analysis.link_loads``), ``lp`` (the throughput LP of uniform traffic:
the symmetric reduction where it applies, else the general LP), ``glp`` (the general
throughput LP of uniform traffic by column generation, ``method="paths"``, whatever the
symmetry), ``metrics``
(``analysis.metrics``), ``ring`` (``analysis.cost`` of a 1 GiB ring all-reduce on
every rank), ``study`` (the scaling study's collectives on rail-optimized fabrics above
1,024 chips: ``analysis.cost`` at the hardware floor of a 1 GiB all-reduce by ring and by
multi-dimensional and a 1 MiB all-to-all by bruck, the candidates ``cofabric scaling``
tries there; the value is their three times), ``xlate`` (the first address translation, as in ``bench_address.py``; a
target only, not in the sweep).

Sizes: about 64, 512, 4k, 32k and 100k endpoints. The 100k-endpoint rows take
minutes in all and several GiB; they are opt-in (``--full``). ``--rustworkx`` adds the
side-by-side of generic-graph metrics against rustworkx's distance matrix (needs
``pip install rustworkx``).

Commands::

    python benchmarks/bench_scale.py                 # up to 32k endpoints
    python benchmarks/bench_scale.py --full          # and the 100k rows
    python benchmarks/bench_scale.py --only a2a,ring --families dragonfly --full
    python benchmarks/bench_scale.py --targets       # the issue's "done when" cases only
    python benchmarks/bench_scale.py --rustworkx     # generic graphs vs rustworkx
"""

import argparse
import json
import math
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

FAMILIES = {
    "torus": ["torus:4x4x4", "torus:8x8x8", "torus:16x16x16", "torus:32x32x32",
              "torus:48x48x48"],
    "hypermesh": ["hypermesh:4x4x4", "hypermesh:8x8x8", "hypermesh:16x16x16",
                  "hypermesh:32x32x32", "hypermesh:48x48x48"],
    "fattree": ["fattree:k=6", "fattree:k=12", "fattree:k=26", "fattree:k=50", "fattree:k=74"],
    "dragonfly": ["dragonfly:h=2", "dragonfly:h=3", "dragonfly:h=6", "dragonfly:h=9",
                  "dragonfly:h=13"],
    # the scaling study's rail-optimized families: 8-GPU servers, and 64-chip switched
    # domains joined by rails (64, 512, 4k, 16k chips; 32k with --full)
    "rail": ["rail:servers=8,gpus=8,chip=h100", "rail:servers=64,gpus=8,chip=h100",
             "rail:servers=512,gpus=8,chip=h100", "rail:servers=2048,gpus=8,chip=h100",
             "rail:servers=4096,gpus=8,chip=h100"],
    "domains": ["rail:servers=1,gpus=64,chip=h100", "rail:servers=8,gpus=64,chip=h100",
                "rail:servers=64,gpus=64,chip=h100", "rail:servers=256,gpus=64,chip=h100",
                "rail:servers=512,gpus=64,chip=h100"],
}
OPS = ("build", "a2a", "lp", "glp", "metrics", "ring", "study")

# The "done when" cases: (operation, spec); "glp" is the general LP.
TARGETS = [("a2a", "torus:32x32x32"), ("a2a", "hypermesh:32x32x32"), ("a2a", "fattree:k=74"),
           ("a2a", "dragonfly:h=13"), ("lp", "torus:32x32x32"), ("lp", "fattree:k=74"),
           ("metrics", "dragonfly:h=13"), ("ring", "hypermesh:48x48x48"),
           ("ring", "dragonfly:h=13"), ("glp", "dragonfly:h=6"),
           ("xlate", "fattree:k=26,chip=h100"),
           # the scaling study's collectives on rail-optimized fabrics of 4k and 16k chips
           ("ring", "rail:servers=512,gpus=8,chip=h100"),
           ("study", "rail:servers=512,gpus=8,chip=h100"),
           ("study", "rail:servers=2048,gpus=8,chip=h100"),
           ("study", "rail:servers=64,gpus=64,chip=h100"),
           ("study", "rail:servers=256,gpus=64,chip=h100")]
# peak memory allowed per target (the first translation's is 2 GB, the others' 8 GB)
LIMIT = {"xlate": 2e9}

_CHILD = r"""
import json, sys, time
op, spec = sys.argv[1], sys.argv[2]
import analysis, topologies
t0, c0 = time.perf_counter(), time.process_time()
f = topologies.build(spec)
build = (time.perf_counter() - t0, time.process_time() - c0)
t0, c0 = time.perf_counter(), time.process_time()
if op == "build":
    value = f.graph.number_of_edges()
elif op == "a2a":
    value = analysis.link_loads(f, analysis.traffic(f, "all-to-all", 1.0)).max_load
elif op in ("lp", "glp"):
    r = analysis.throughput(f, analysis.traffic(f, "all-to-all", 1.0),
                            method="paths" if op == "glp" else "auto")
    value = [r.k, r.method]
elif op == "xlate":  # the first translation (bench_address.py: a window per remote chip)
    import fabric
    f = f.replace(address_plan=fabric.AddressPlan(
        limits=fabric.DomainLimits(translation_entries=8192)))
    value = f.translate("host4000", 0x20_0000_0040).owner
elif op == "metrics":
    m = analysis.metrics(f)
    value = [m.avg_hops, m.diameter, m.hops_method]
elif op == "study":
    value = [analysis.cost(f, "all-reduce", 2**30, algorithm=a, runtime="ideal").time
             for a in ("ring", "multi-dimensional")]
    value.append(analysis.cost(f, "all-to-all", 2**20, algorithm="bruck", runtime="ideal").time)
elif op == "ring":
    try:  # the hardware floor, where runtimes are modelled
        value = analysis.cost(f, "all-reduce", 2**30, algorithm="ring", runtime="ideal").time
    except TypeError:
        value = analysis.cost(f, "all-reduce", 2**30, algorithm="ring").time
wall, cpu = time.perf_counter() - t0, time.process_time() - c0
if op == "build":
    wall, cpu = build
# VmHWM: this process image's peak (ru_maxrss would carry a parent's peak over fork/exec)
peak = next(int(line.split()[1]) * 1024 for line in open("/proc/self/status")
            if line.startswith("VmHWM"))
print(json.dumps({"n": f.n_endpoints, "wall": wall, "cpu": cpu, "build": build[0],
                  "peak": peak, "value": value}))
"""


def run(op, spec, timeout):
    """One case in a fresh process: dict with n, wall, cpu, build, peak, value (or error)."""
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    try:
        p = subprocess.run([sys.executable, "-c", _CHILD, op, spec], check=False, capture_output=True,
                           text=True, timeout=timeout, env=env, cwd=ROOT)
    except subprocess.TimeoutExpired:
        return {"error": f"over {timeout:.0f} s"}
    if p.returncode != 0:
        last = (p.stderr.strip().splitlines() or ["?"])[-1]
        return {"error": last[:100]}
    return json.loads(p.stdout.strip().splitlines()[-1])


def _fmt(r):
    if "error" in r:
        return r["error"]
    return (f"{r['wall']:8.2f} s wall {r['cpu']:8.2f} s cpu {r['peak'] / 2**30:6.2f} GiB"
            f"  (build {r['build']:.2f} s)  -> {r['value']}")


def exponent(points):
    """Least-squares slope of log(cpu) against log(n) over points with n >= 512."""
    pts = [(math.log(n), math.log(max(c, 1e-3))) for n, c in points if n >= 512]
    if len(pts) < 2:
        return None
    mx = sum(x for x, _ in pts) / len(pts)
    my = sum(y for _, y in pts) / len(pts)
    sxx = sum((x - mx) ** 2 for x, _ in pts)
    return sum((x - mx) * (y - my) for x, y in pts) / sxx if sxx else None


def rustworkx_side_by_side(sizes=(1024, 4096, 8192), degree=8):
    """Generic-graph hop counts: cofabric's metrics BFS against rustworkx.distance_matrix."""
    import networkx as nx
    import numpy as np
    import rustworkx as rx

    from analysis._metrics import hop_distribution
    from fabric import Fabric

    print(f"\ngeneric graphs (random {degree}-regular, every node a chip), same graph, one run:")
    for n in sizes:
        G = nx.random_regular_graph(degree, n, seed=1)
        nx.set_node_attributes(G, "chip", "kind")
        nx.set_edge_attributes(G, 25e9, "bandwidth")
        nx.set_edge_attributes(G, 1e-7, "latency")
        f = Fabric.from_graph(G)
        f.edge_arrays  # noqa: B018 (built outside the timing, as rustworkx's graph is)
        t = time.perf_counter()
        counts, _ = hop_distribution(f)
        ours = time.perf_counter() - t
        R = rx.networkx_converter(G)
        t = time.perf_counter()
        D = np.asarray(rx.distance_matrix(R))
        theirs = time.perf_counter() - t
        ref = np.bincount(D.astype(np.int64).ravel())
        ref[0] = 0
        same = bool((counts[:len(ref)] == ref).all() and counts[len(ref):].sum() == 0)
        print(f"  n={n:6d}  cofabric {ours:7.3f} s  rustworkx distance_matrix {theirs:7.3f} s  "
              f"ratio {theirs / ours:6.1f}x  same counts: {same}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--full", action="store_true", help="include the ~100k-endpoint sizes")
    ap.add_argument("--only", default=",".join(OPS), help="operations, comma separated")
    ap.add_argument("--families", default=",".join(FAMILIES), help="families, comma separated")
    ap.add_argument("--timeout", type=float, default=180.0, help="seconds per case")
    ap.add_argument("--targets", action="store_true", help="run the issue's target cases only")
    ap.add_argument("--rustworkx", action="store_true", help="generic graphs vs rustworkx")
    args = ap.parse_args(argv)
    if args.rustworkx:
        rustworkx_side_by_side()
        return
    if args.targets:
        for op, spec in TARGETS:
            r = run(op, spec, args.timeout)
            # the target counts the build too: a user asks for the figure from the spec
            ok = ("error" not in r and r["wall"] + r["build"] < 60
                  and r["peak"] < LIMIT.get(op, 8 * 2**30))
            print(f"{op:8s} {spec:22s} {_fmt(r)}  {'MET' if ok else 'NOT MET'}", flush=True)
        return
    ops = [o for o in args.only.split(",") if o]
    for fam in [f for f in args.families.split(",") if f]:
        specs = FAMILIES[fam] if args.full else FAMILIES[fam][:4]
        for op in ops:
            pts = []
            failed = None
            for spec in specs:
                if failed:  # larger sizes of this family would fail too: not run
                    print(f"{op:8s} {spec:22s} n={'?':>7}  out of reach (not run: {failed} "
                          "failed)", flush=True)
                    continue
                r = run(op, spec, args.timeout)
                print(f"{op:8s} {spec:22s} n={r.get('n', '?')!s:>7}  {_fmt(r)}", flush=True)
                if "error" in r:
                    failed = spec
                    continue
                pts.append((r["n"], r["cpu"]))
            e = exponent(pts)
            print(f"{op:8s} {fam:22s} fitted exponent (cpu ~ n^e, n >= 512): "
                  f"{'n/a' if e is None else f'{e:.2f}'}", flush=True)


if __name__ == "__main__":
    main()
