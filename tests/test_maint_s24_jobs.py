"""``cofabric report``'s default processes: the usable processors, at most DEFAULT_JOBS_CAP.

The report was serial unless asked (``--jobs 1``), and took 63.6 s on the 2-core session
machine against a 60 s limit; the pool gives the same files (test_report.py checks
``--jobs 2`` against the serial small report byte for byte)."""

import os

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
    assert f"at most {DEFAULT_JOBS_CAP}" in text and "1: serially" in text

