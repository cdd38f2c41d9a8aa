"""Audit, session 29 (speed's finding, lead's go 02:06): ``cofabric``'s main() built the whole
parser (13 subcommands imported and registered, ~10 ms) on every call, and the suite calls it
in process ~2,000 times. It now reads its arguments with one parser built once a process
(analysis._cli._parser). These tests hold the shared parser to a fresh one's answers, calls
after calls: options that append to a default list, an error between calls, --help.
"""

import contextlib
import io

import pytest

from analysis import _cli

SEQUENCE = [
    ["route", "torus:2x2", "0", "1", "--fail-chip", "chip3", "--fail-link", "chip0-chip2"],
    ["route", "torus:2x2", "0", "1"],
    ["cost", "torus:2x2", "--op", "all-reduce", "all-gather", "--size", "1KiB", "--ranks", "0",
     "1"],
    ["cost", "torus:2x2", "--op", "broadcast", "--size", "2KiB"],
    ["route", "torus:2x2", "0"],                            # an error: dst missing
    ["report", "torus:2x2", "--sizes", "1KiB", "--ops", "all-reduce", "--out", "r"],
    ["report", "torus:2x2", "--out", "r"],
    ["latency", "torus:2x2", "--fail-lane", "chip0-chip1", "--fail-chip", "chip1"],
    ["latency", "torus:2x2"],
    ["decode", "hgx-h200", "--model", "deepseek-r1", "--no-cuda-graphs"],
    ["decode", "hgx-h200", "--model", "deepseek-r1"],
    ["route", "--help"],
    ["metrics", "torus:2x2", "--fail-chip", "chip0"],
    ["metrics", "torus:2x2"],
]


def _parsed(parser, argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            ns = parser.parse_args(argv)
        except SystemExit as e:
            return ("exit", e.code, out.getvalue(), err.getvalue())
    return ("args", {k: v for k, v in vars(ns).items() if k != "func"},
            getattr(ns.func, "__qualname__", None))


def test_the_shared_parser_answers_each_call_as_a_fresh_one():
    shared = _cli._parser()
    for argv in SEQUENCE:
        assert _parsed(shared, argv) == _parsed(_cli.build_parser(), argv), argv


def test_main_builds_the_parser_once_a_process(monkeypatch):
    builds = []
    real = _cli.build_parser
    monkeypatch.setattr(_cli, "build_parser", lambda: builds.append(1) or real())
    _cli._parser.cache_clear()
    try:
        with contextlib.redirect_stdout(io.StringIO()), \
                contextlib.redirect_stderr(io.StringIO()):
            assert _cli.main(["route", "torus:2x2", "0", "1"]) == 0
            assert _cli.main(["route", "torus:2x2", "0", "99"]) == 2
            with pytest.raises(SystemExit):
                _cli.main(["route", "torus:2x2"])
            assert _cli.main(["route", "torus:2x2", "0", "1", "--fail-chip", "chip3"]) == 0
        assert len(builds) == 1
    finally:
        _cli._parser.cache_clear()      # the next test builds its own, unpatched
