"""Audit, session 28 (reader's R28-7): an --out directory no one can write is refused before
the work, by one rule for report, figures and scaling (analysis._report.output_dir).

Session 27 made output_dir refuse an empty name, a NUL and an existing file; the parent checks
(a file on the way, a missing parent, a directory where none can be made) were the report's
only. So ``cofabric scaling --out afile/sub`` ran the whole study and then failed at mkdir,
and ``figures --out /proc/x`` built every figure first. Here the work is stubbed to raise:
a refusal after it started is an internal error (exit 3), not one line and exit 2.
"""

import functools
import os

import pytest
from cli_run import run_cli as cli

import analysis
from analysis import _report, _scaling

ARGS = {"report": ["torus:2x2", "--sizes", "1KiB", "--ops", "all-reduce"], "figures": [],
        "scaling": ["--families", "torus", "--sizes", "16"]}


def _stub(work):
    @functools.wraps(work)          # the CLI reads scaling_study's signature for its help
    def started(*a, **k):
        raise AssertionError("the work started")
    return started


@pytest.fixture
def no_work(monkeypatch):
    monkeypatch.setattr(_report, "build_report", _stub(_report.build_report))
    monkeypatch.setattr(analysis, "build_report", _stub(_report.build_report))
    monkeypatch.setattr(_scaling, "scaling_study", _stub(_scaling.scaling_study))


def _one_line(argv):
    rc, out, err = cli([*argv, "--quiet"])
    assert (rc, out, len(err.strip().splitlines())) == (2, "", 1), (argv, rc, err)
    return err


@pytest.mark.parametrize("cmd", sorted(ARGS))
@pytest.mark.parametrize("sub", ["sub", "sub/deeper"])
def test_a_path_through_a_file_is_refused_before_the_work(cmd, sub, tmp_path, monkeypatch,
                                                         no_work):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "afile").write_text("keep me")
    err = _one_line([cmd, *ARGS[cmd], "--out", f"afile/{sub}"])
    assert f"{tmp_path / 'afile'} is a file, not a directory" in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile"]


@pytest.mark.parametrize("cmd", ["report", "figures"])
def test_a_missing_parent_is_refused_where_the_command_makes_none(cmd, tmp_path, no_work):
    err = _one_line([cmd, *ARGS[cmd], "--out", str(tmp_path / "none" / "out")])
    assert f"{tmp_path / 'none'} does not exist" in err, err


def test_scaling_makes_missing_parents_so_asks_the_nearest_existing_one(tmp_path, no_work):
    # the study is stubbed: reaching it (exit 3, the stub's error) means --out was accepted
    rc, _, err = cli(["scaling", *ARGS["scaling"], "--out", str(tmp_path / "a" / "b"),
                      "--quiet"])
    assert rc == 3 and "the work started" in err, err
    assert list(tmp_path.iterdir()) == []           # the probe left nothing


@pytest.mark.skipif(not os.path.isdir("/proc") or not os.access("/proc", os.W_OK),
                    reason="needs a /proc that os.access calls writable (root on Linux)")
@pytest.mark.parametrize("cmd, out", [("figures", "/proc/x"), ("scaling", "/proc/x/y"),
                                      ("report", "/proc/x")])
def test_where_no_directory_can_be_made_is_refused_before_the_work(cmd, out, no_work):
    err = _one_line([cmd, *ARGS[cmd], "--out", out])
    assert f"cannot write the {cmd} to {out}: making a directory in /proc failed" in err, err
