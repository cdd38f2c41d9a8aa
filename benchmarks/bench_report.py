"""Benchmark the report and the README figures against issue 6's targets.

Targets (2 cores): the default report, all figures included, under 60 s and
under 2 GB; ``cofabric figures`` under 30 s. Each command runs in a fresh
process (imports included, as a user runs it); peak memory is the child's
maximum resident set size.

Run: ``python benchmarks/bench_report.py [--repeat N]``
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run(argv):
    """Run ``cofabric argv`` in a fresh process; return (wall s, CPU s, peak RSS bytes).

    CPU time (user + system, the child and the workers it reaped) is what the run
    costs on an idle machine; wall time also counts waiting for other processes on a
    shared machine.
    """
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    code = "import sys; from analysis._cli import main; sys.exit(main(sys.argv[1:]))"
    start = time.perf_counter()
    # wait4 gives this child's own peak RSS (RUSAGE_CHILDREN would be the max over all)
    proc = subprocess.Popen([sys.executable, "-c", code, *argv], env=env,
                            stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"cofabric {' '.join(argv)} failed")
    return seconds, usage.ru_utime + usage.ru_stime, usage.ru_maxrss * 1024  # RSS in KiB


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    cases = [
        # the default runs in local processes (the usable processors, at most 4)
        ("default report", ["report", "--quiet"], 60.0, 2e9),
        ("default report --jobs 1", ["report", "--quiet", "--jobs", "1"], 60.0, 2e9),
        ("cofabric figures", ["figures", "--quiet"], 30.0, None),
    ]
    print(f"load average before: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(f"{'case':26s} {'wall':>7s} {'cpu':>7s} {'target':>7s} {'wall/target':>11s} "
          f"{'peak RSS':>9s}")
    for name, argv, t_target, m_target in cases:
        best_t, best_c, peak = float("inf"), float("inf"), 0
        for _ in range(args.repeat):
            with tempfile.TemporaryDirectory() as d:
                out = Path(d) / "out"
                t, c, m = run([*argv, "--out", str(out)])
            best_t, best_c, peak = min(best_t, t), min(best_c, c), max(peak, m)
        mem = f"{peak / 1e6:.0f} MB"
        if m_target:
            mem += f" ({peak / m_target:.2f} of {m_target / 1e9:.0f} GB)"
        print(f"{name:26s} {best_t:6.1f}s {best_c:6.1f}s {t_target:6.0f}s "
              f"{best_t / t_target:11.2f} {mem}")
    print(f"load average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
