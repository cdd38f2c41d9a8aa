"""Model against the check set: model / measured for every published row, then a summary.

The rows and their sources are ``tests/data/published.csv``; how each row is
expressed in the model is in ``tests/fidelity_*.py`` (see ``tests/fidelity.py``).
Nothing in the model is fitted to these rows.

Then the held-out rows (``tests/data/heldout.csv``: published measurements that
are not in the check set, checked and never fitted) with their own summary.

The last three lines are the summary over every expressible row of the check set:
geometric-mean error, rows within 25% and 35%, and the worst row. Run:

    python benchmarks/bench_fidelity.py
"""

import math
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "tests"))

import fidelity


def _line(r):
    model = f"{r.model:10.4g}" if math.isfinite(r.model) else f"{'-':>10}"
    err = f"{r.error * 100:7.1f}%" if math.isfinite(r.model) else f"{'n/a':>8}"
    ratio = f"{r.ratio:6.2f}" if math.isfinite(r.model) else f"{'-':>6}"
    return (f"{r.id:34s} {r.unit:5s} {model} {r.measured:10.4g} {ratio} {err}  {r.how}")


def _group(name, results):
    geo, in25, in35, worst, n = fidelity.summary(results)
    missing = len(results) - n
    if not n:
        return f"{name}: no expressible rows ({missing} not expressible)"
    return (f"{name}: geometric-mean error {geo * 100:.1f}% over {n} rows; within 25%: {in25}; "
            f"within 35%: {in35}; worst {worst.id} ({worst.error * 100:.0f}%)"
            + (f"; {missing} not expressible" if missing else ""))


HEADER = f"{'row':34s} {'unit':5s} {'model':>10} {'measured':>10} {'ratio':>6} {'error':>8}  how"


def heldout():
    """The held-out rows: model / measured per row and their summary (goal: 25%, 10%)."""
    results = fidelity.evaluate(fidelity.heldout_rows(), fidelity.HELDOUT_TOLERANCE)
    print("held-out rows (tests/data/heldout.csv; not in the check set, never fitted)")
    print(HEADER)
    for r in results:
        print(_line(r))
    print()
    for name, keep in (("held-out collective and send-recv rows", fidelity.is_collective),
                       ("held-out MoE rows", lambda r: not fidelity.is_collective(r))):
        group = [r for r in results if keep(r)]
        if group:
            print(_group(name, group))
    geo, in25, _, _, n = fidelity.summary(results)
    print(f"held-out goal (issue 10): every row within "
          f"{fidelity.HELDOUT_TOLERANCE:.0%} and geometric mean <= "
          f"{fidelity.HELDOUT_GEOMEAN:.0%}: {in25} of {n} within, geometric mean "
          f"{geo * 100:.1f}%")
    print()


def main():
    heldout()
    results = fidelity.evaluate()
    print("check set (tests/data/published.csv)")
    print(HEADER)
    for r in results:
        print(_line(r))
    print()
    print(_group("collective and send-recv rows",
                 [r for r in results if fidelity.is_collective(r)]))
    print(_group("MoE rows", [r for r in results if not fidelity.is_collective(r)]))
    geo, in25, in35, worst, n = fidelity.summary(results)
    missing = len(results) - n
    print(f"all rows: geometric-mean error {geo * 100:.1f}% over {n} of {len(results)} rows "
          f"({missing} not expressible)")
    print(f"within 25%: {in25} of {n}; within 35%: {in35} of {n}")
    if worst is None:
        print("worst row: none expressible")
    else:
        print(f"worst row: {worst.id}, model {worst.model:.4g} vs measured {worst.measured:.4g} "
              f"{worst.unit} (error {worst.error * 100:.1f}%)")


if __name__ == "__main__":
    main()
