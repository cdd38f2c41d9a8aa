"""Brute force: does any single failed link make a collective faster under a runtime?

For every link of each fabric (the defaults are small; pass specs to scan others, e.g.
``sd200-ultra:chip=h100``, ~5 min), every op x size x runtime: the degraded time against the
intact one. A speed-up is counted as a violation only when the runtime ran the same schedule
and protocol on both fabrics and the schedule's own hardware floor (runtime "ideal", at the
size and at 1 GiB) did not get faster too: the property ``tests/test_runtime.py`` checks with
Hypothesis (see there why the wider property is not true). Prints the violations and a summary.

    PYTHONPATH=. python benchmarks/scan_degraded_runtime.py [spec ...]
"""

import itertools
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import analysis
import topologies
from analysis import NotApplicableError
from fabric import RoutingError, SpecError

SIZES = (8, 4096, 114688, 2**20, 2**26)
OPS = ("all-reduce", "all-gather", "reduce-scatter", "broadcast", "all-to-all")
RUNTIMES = ("ideal", "nccl", "symmetric-memory")


def _floor_faster(f, g, op, n, algorithm):
    try:
        t = [analysis.cost(x, op, m, algorithm=algorithm, runtime="ideal").time
             for x in (f, g) for m in (n, 2**30)]
    except NotApplicableError:
        return False
    return t[2] < t[0] * (1 - 1e-9) or t[3] < t[1] * (1 - 1e-9)


def scan(spec):
    f = topologies.build(spec)
    links = sorted({tuple(sorted((u, v))) for u, v in f.graph.edges()})
    checked = bad = other = 0
    for link in links:
        g = f.without(links=[link])
        for op, n, rt in itertools.product(OPS, SIZES, RUNTIMES):
            try:
                a = analysis.cost(f, op, n, runtime=rt)
                b = analysis.cost(g, op, n, runtime=rt)
            except (NotApplicableError, RoutingError, SpecError):
                continue
            checked += 1
            if b.time >= a.time * (1 - 1e-9):
                continue
            if ((a.algorithm, a.protocol) != (b.algorithm, b.protocol)
                    or _floor_faster(f, g, op, n, b.algorithm)):
                other += 1
                continue
            bad += 1
            print(f"  {spec} without {link}: {op} {n} B {rt}: {a.algorithm}/{a.protocol} "
                  f"{a.time * 1e6:.3f} -> {b.time * 1e6:.3f} us")
    return checked, bad, other


def main(specs):
    for spec in specs:
        t0 = time.perf_counter()
        checked, bad, other = scan(spec)
        print(f"{spec}: {checked} comparisons, {bad} violations, {other} faster with another "
              f"schedule/protocol or a faster floor; {time.perf_counter() - t0:.1f} s")


if __name__ == "__main__":
    main(sys.argv[1:] or ["torus:3x3", "dgx-h100", "rail:servers=2,gpus=4,nvls=1,chip=h100"])
