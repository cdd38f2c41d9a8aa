"""Best algorithm against the lower bound at 1 GiB (issue 13): the figures of its "Done when".

For each fabric, all-reduce and all-to-all at 1 GiB with ``algorithm="auto"`` (every
algorithm over every transport the fabric allows) on the hardware floor
(``runtime="ideal"`` once analysis.cost takes a runtime), and the ratio of the time to
the lower bound the model proves (injection, host cuts, max-concurrent-flow for
all-to-all). Targets: sd200-ultra all-reduce <= 1.15 and all-to-all <= 1.1;
tpu-v4-cube all-reduce <= 1.2; the same on shapes that are not presets. Run:

    python benchmarks/bench_gap_to_bound.py [SPEC ...]
"""

import inspect
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import topologies
from analysis import cost

CASES = ["sd200-ultra", "tpu-v4-cube", "hypermesh:4x4x8", "torus:4x4x8", "torus:6x6x6",
         "torus:8x8x8", "hypermesh:8x8x8", "cluster-128", "nvl72"]


def main(cases):
    kw = {"runtime": "ideal"} if "runtime" in inspect.signature(cost).parameters else {}
    print("runtime:", kw.get("runtime", "none (this version's cost is the hardware floor)"))
    for spec in cases:
        f = topologies.build(spec)
        for op in ("all-reduce", "all-to-all"):
            t = time.perf_counter()
            r = cost(f, op, 2**30, **kw)
            print(f"{spec:16s} {op:11s} {r.algorithm:28s} {r.transport:10s} "
                  f"time {r.time * 1e3:8.3f} ms  bound {r.lower_bound * 1e3:8.3f} ms  "
                  f"best/bound {r.time / r.lower_bound:.3f}  ({time.perf_counter() - t:.1f} s)")


if __name__ == "__main__":
    main(sys.argv[1:] or CASES)
