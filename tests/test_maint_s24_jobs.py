"""``cofabric report``'s default processes: the usable processors, at most DEFAULT_JOBS_CAP,
drawing the figures; the sweeps run in the command's own process.

The report was serial unless asked (``--jobs 1``), and took 63.6 s on the 2-core session
machine against a 60 s limit; the pool gives the same files (test_report.py checks
``--jobs 2`` against the serial small report byte for byte). Sweeps in a pool cost 2.3x their
CPU (every worker derives the same fabrics' routes and plans again), so they stay here."""

import os
import types

import pytest

from analysis import _cli_report
from analysis._cli import build_parser
from analysis._cli_report import DEFAULT_JOBS_CAP, executor_for_jobs, usable_processors


def _workers(pool):
    if pool is None:
        return 1
    n = pool._max_workers
    pool.shutdown()
    return n


@pytest.mark.parametrize("cpus", [1, 2, 3, 8, 64])
def test_no_jobs_is_the_usable_processors_up_to_the_cap(cpus, monkeypatch):
    monkeypatch.setattr(_cli_report, "usable_processors", lambda: cpus)
    assert _workers(executor_for_jobs(None)) == min(cpus, DEFAULT_JOBS_CAP)
    assert _workers(executor_for_jobs(1)) == 1                 # --jobs 1: serial
    assert _workers(executor_for_jobs(DEFAULT_JOBS_CAP + 3)) == min(cpus, DEFAULT_JOBS_CAP + 3)


def test_usable_processors_follow_the_affinity_not_the_machine(monkeypatch):
    # taskset or a container's cpuset gives this process fewer processors than the machine
    monkeypatch.setattr(os, "cpu_count", lambda: 64)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {3}, raising=False)
    assert usable_processors() == 1
    assert executor_for_jobs(None) is None
    monkeypatch.delattr(os, "sched_getaffinity", raising=False)    # an OS without the call
    assert usable_processors() == 64


def test_the_cli_default_is_no_count_and_help_says_so():
    parser = build_parser()
    args = parser.parse_args(["report", "torus:3x3"])
    assert args.jobs is None
    assert parser.parse_args(["report", "--jobs", "1"]).jobs == 1
    sub = next(a for a in parser._subparsers._group_actions[0].choices.values()
               if a.prog.endswith(" report"))
    text = " ".join(sub.format_help().split())
    assert f"at most {DEFAULT_JOBS_CAP}" in text and "1: all in this process" in text



@pytest.mark.parametrize("argv, pooled", [([], True), (["--jobs", "1"], False),
                                           (["--jobs", "3"], True)])
def test_the_sweeps_run_here_and_the_figures_in_the_pool(argv, pooled, monkeypatch, tmp_path):
    import concurrent.futures

    import analysis
    from analysis._cli import main

    monkeypatch.setattr(_cli_report, "usable_processors", lambda: 2)
    seen = {}

    def build(*args, **kwargs):
        seen["build"] = kwargs.get("executor")
        return types.SimpleNamespace(overview=(), findings=())

    def write(report, out, **kwargs):
        seen["write"] = kwargs.get("executor")
        return tmp_path / "index.html"

    monkeypatch.setattr(analysis, "build_report", build)
    monkeypatch.setattr(analysis, "write_report", write)
    assert main(["report", "torus:3x3", "--out", str(tmp_path / "r"), "--quiet", *argv]) == 0
    assert seen["build"] is None
    assert isinstance(seen["write"], concurrent.futures.ProcessPoolExecutor) == pooled
    if pooled:
        assert seen["write"]._max_workers == 2
