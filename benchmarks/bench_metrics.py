"""Issue 2 targets: build + all metrics of large fabrics, and mean hops against networkx.

Run:  python benchmarks/bench_metrics.py
Each case runs in a fresh subprocess so that its peak memory (ru_maxrss) is its own.
"""

import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)  # run from a checkout without installing

CASES = [("fattree:k=48", 20.0, 2048), ("torus:32x32x32", 20.0, None), ("sd200-ultra", 0.5, None)]

_CHILD = r"""
import json, resource, sys, time
import topologies
from analysis import metrics
spec = sys.argv[1]
t0 = time.perf_counter()
f = topologies.build(spec)
t1 = time.perf_counter()
m = metrics(f)
t2 = time.perf_counter()
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"build": t1 - t0, "metrics": t2 - t1, "peak_mib": rss,
                  "endpoints": m.endpoints, "links": m.links}))
"""


def main():
    print(f"{'spec':16s} {'build s':>8s} {'metrics s':>9s} {'total s':>8s} {'target s':>8s} "
          f"{'peak MiB':>9s}")
    for spec, target, mem_target in CASES:
        out = subprocess.run([sys.executable, "-c", _CHILD, spec], capture_output=True,
                             text=True, check=True, cwd=ROOT).stdout
        r = json.loads(out)
        total = r["build"] + r["metrics"]
        mem = f"{r['peak_mib']:.0f}" + (f" (<{mem_target})" if mem_target else "")
        print(f"{spec:16s} {r['build']:8.2f} {r['metrics']:9.2f} {total:8.2f} {target:8.1f} "
              f"{mem:>9s}  {'OK' if total < target else 'MISSED'}")

    import networkx as nx

    import topologies
    from analysis import metrics
    f = topologies.build("torus:16x16x16")
    t0 = time.perf_counter()
    ours = metrics(f).avg_hops
    t1 = time.perf_counter()
    theirs = nx.average_shortest_path_length(f.graph)
    t2 = time.perf_counter()
    ratio = (t2 - t1) / (t1 - t0)
    print(f"torus:16x16x16 mean hops: cofabric {ours:.6f} in {t1 - t0:.3f} s (all metrics); "
          f"networkx {theirs:.6f} in {t2 - t1:.1f} s; speed-up {ratio:.0f}x (target >= 50x) "
          f"{'OK' if ratio >= 50 and abs(ours - theirs) < 1e-9 else 'MISSED'}")


if __name__ == "__main__":
    main()
