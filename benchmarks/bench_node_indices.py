"""Cost of one ``Fabric.node_indices`` call by the kind of input the router and transport pass.

Run: ``python benchmarks/bench_node_indices.py`` (a few seconds). One line per input kind:
the least of 9 repeats of this process's CPU time (steadier than wall time on a shared
machine), microseconds a call. The suite calls it ~10-14 k times per sixteenth
of its files (session 30's count: one index ~50%, one-dimensional int64 arrays ~45%, lists and
numpy integers the rest), so run it on two trees to compare them.
"""

import sys
import time
import timeit
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import topologies


def cases(n):
    return [
        ("int", 5),
        ("numpy int64", np.int64(5)),
        ("int64 array, 1", np.array([5])),
        ("int64 array, 2", np.array([5, 7])),
        ("int64 array, 16", np.arange(16) % n),
        ("int64 array, 64", np.arange(64) % n),
        ("int64 array, 4096", np.arange(4096) % n),
        ("list of 8", list(range(8))),
        ("int out of range (error)", n),
        ("a name (error)", "x"),
    ]


def main():
    f = topologies.build("torus:8x8")
    n = len(f.nodes)
    for label, x in cases(n):
        def call(x=x):
            try:
                f.node_indices(x, "src")
            except (TypeError, ValueError):     # NodeError is a ValueError
                pass
        number = 5000
        timer = timeit.Timer(call, timer=time.process_time)
        t = min(timer.repeat(number=number, repeat=9)) / number
        print(f"{label:26s} {t * 1e6:7.2f} us")


if __name__ == "__main__":
    main()
