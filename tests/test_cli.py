"""The CLI's error contract: bad input is one line and exit 2, a bug is exit 3 (``--debug``
shows its traceback), ``--version`` names the code; ``--fail-*`` runs on degraded fabrics."""

import json

import pytest

import analysis
import fabric
from analysis._cli import EXIT_BUG, main


@pytest.mark.parametrize("argv, message", [
    (["route", "sd200-ultra", "0", "5", "--transport", "xyz"], "unknown transport 'xyz'"),
    (["route", "sd200-ultra", "0", "5", "--size", "-3"], "size must be a positive int"),
    (["throughput", "torus:4x4", "--bytes", "12XB"], "unknown prefix 'X'"),
    (["throughput", "torus:4x4", "--traffic", "nope"], "unknown traffic 'nope'"),
    (["latency", "torus:4x4", "--fail-link", "chip0-chip9"], "there is no such link"),
    (["metrics", "torus:4x4", "--fail-chip", "chip99"], "no node called 'chip99'"),
    (["cost", "dgx-h100", "--op", "all-reduce", "--size", "1ZB"], "unknown prefix 'Z'"),
    (["report", "--jobs", "0", "--out", "unused"], "--jobs must be an integer >= 1"),
    (["metrics", "--bogus"], "unrecognized arguments: --bogus"),
])
def test_bad_input_is_one_line_and_exit_2(argv, message, capsys):
    try:
        rc = main(argv)
    except SystemExit as e:  # argparse
        rc = e.code
    err = capsys.readouterr().err
    assert rc == 2 and message in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_a_bug_shows_as_a_bug(monkeypatch, capsys):
    def broken(f):
        return 1 / 0

    monkeypatch.setattr(analysis, "metrics", broken)
    assert main(["metrics", "torus:4x4"]) == EXIT_BUG
    err = capsys.readouterr().err
    assert "internal error (a bug in cofabric" in err and "ZeroDivisionError" in err
    assert "--debug" in err and len(err.strip().splitlines()) == 1
    with pytest.raises(ZeroDivisionError):
        main(["--debug", "metrics", "torus:4x4"])


def test_version_names_version_commit_and_libraries(capsys):
    with pytest.raises(SystemExit) as e:
        main(["--version"])
    assert e.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith(f"cofabric {fabric.__version__} (commit ")
    for lib in analysis.LIBRARIES:
        assert lib in out
    p = analysis.provenance().as_dict()
    assert set(p) == {"version", "commit", "python", "libraries"}
    assert set(p["libraries"]) == set(analysis.LIBRARIES)


def test_setup_cfg_reads_the_one_version():
    import configparser
    import pathlib

    cfg = configparser.ConfigParser()
    cfg.read(pathlib.Path(__file__).resolve().parent.parent / "setup.cfg")
    assert cfg["metadata"]["version"] == "attr: fabric.__version__"


def test_metrics_with_a_failed_chip_reports_it(capsys):
    assert main(["metrics", "torus:4x4", "--fail-chip", "5", "--json"]) == 0
    (m,) = json.loads(capsys.readouterr().out)
    assert m["endpoints"] == 15 and m["failed"]["chips"] == {"chip5": 5}
    assert m["hops_method"] != "closed form: product of per-dimension distances"


def test_route_to_a_failed_rank_is_bad_input(capsys):
    assert main(["route", "sd200-ultra", "0", "5", "--fail-chip", "chip5"]) == 2
    assert "rank 5 (chip5) has failed" in capsys.readouterr().err
    assert main(["route", "sd200-ultra", "0", "127", "--fail-chip", "chip3", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["target"] == "chip127"


def test_fail_lane_thins_a_bundle(capsys):
    assert main(["metrics", "torus:4x4,links=2", "--fail-lane", "chip0-chip1", "--json"]) == 0
    (d,) = json.loads(capsys.readouterr().out)
    assert d["failed"]["lanes"] == [[["chip0", "chip1"], 1]] and d["failed"]["links"] == []
    assert d["bisection_links"] == 15
    assert main(["route", "torus:4x4,links=2", "0", "1", "--fail-lane", "chip0-chip1",
                 "--fail-lane", "chip1-chip0"]) == 0
    out = capsys.readouterr().out  # both lanes gone: the link failed, the route detours
    assert "without 1 link:" in out and "path: chip0 -> chip1 " not in out and "(3 hops)" in out
    assert main(["latency", "torus:4x4", "--fail-lane", "chip0-chip9"]) == 2
    assert "no such link" in capsys.readouterr().err
