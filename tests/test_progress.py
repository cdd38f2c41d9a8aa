"""The progress bar: drawn on terminals only, silent in pipes and with quiet."""

import io
import os
import subprocess
import sys

import pytest

from analysis import Progress


class _Tty(io.StringIO):
    def isatty(self):
        return True


def test_silent_when_stream_is_not_a_terminal():
    out = io.StringIO()
    with Progress(5, "work", stream=out) as bar:
        for _ in range(5):
            bar.update()
    assert out.getvalue() == ""
    assert bar.done == 5


def test_draws_on_a_terminal_and_ends_the_line():
    out = _Tty()
    with Progress(4, "work", stream=out, width=4, min_interval=0) as bar:
        for _ in range(4):
            bar.update()
    text = out.getvalue()
    assert text.endswith("\n")
    assert text.count("\n") == 1
    frames = text.strip("\n").split("\r")[1:]
    assert frames[0].startswith("work [....] 0/4")
    assert frames[-1].startswith("work [####] 4/4")


def test_quiet_wins_over_a_terminal_and_over_enabled():
    out = _Tty()
    with Progress(2, stream=out, enabled=True, quiet=True) as bar:
        bar.update(2)
    assert out.getvalue() == ""


def test_throttles_redraws_but_always_draws_the_end():
    out = _Tty()
    with Progress(1000, stream=out, min_interval=3600) as bar:
        for _ in range(1000):
            bar.update()
    frames = out.getvalue().strip("\n").split("\r")[1:]
    assert len(frames) <= 3
    assert "1000/1000" in frames[-1]


@pytest.mark.parametrize("kwargs, error", [({"total": -1}, ValueError), ({"total": 2.5}, TypeError),
                                           ({"total": True}, TypeError),
                                           ({"total": 3, "width": 0}, ValueError)])
def test_rejects_bad_arguments(kwargs, error):
    # a count of the wrong kind is a TypeError (session 31)
    with pytest.raises(error):
        Progress(**kwargs)


def test_in_a_pipe_stderr_stays_empty():
    code = ("from analysis import Progress\n"
            "with Progress(3, 'x') as b:\n"
            "    b.update(3)\n")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=root,
                         check=True)
    assert res.stderr == ""


class _NotebookStream(io.StringIO):
    """Stands for ipykernel's OutStream: not a terminal, but a notebook renders '\\r'."""


_NotebookStream.__module__ = "ipykernel.iostream"


def test_draws_in_a_notebook_and_not_in_a_plain_pipe():
    from analysis._progress import watched

    assert watched(_NotebookStream()) and not watched(io.StringIO())
    out = _NotebookStream()
    with Progress(2, "nb", stream=out, min_interval=0) as bar:
        bar.update(2)
    assert "nb [" in out.getvalue() and "2/2" in out.getvalue()


def test_live_bar_redraws_while_one_step_runs_and_shows_the_stage():
    import time

    out = _Tty()
    with Progress(1, "lp", stream=out, live=True, live_interval=0.01) as bar:
        bar.stage("solving")
        time.sleep(0.1)            # one long step: the thread keeps drawing
        bar.update()
    frames = out.getvalue().strip("\n").split("\r")[1:]
    assert sum("solving" in f for f in frames) >= 3
    assert frames[-1].rstrip().endswith("solving") and "1/1" in frames[-1]
    assert not bar._thread.is_alive()


class _Terminal(io.StringIO):
    def isatty(self):
        return True


@pytest.mark.parametrize("argv,desc", [
    (["latency", "torus:2x2x2"], "latency ["),
    (["metrics", "torus:2x2x2", "fattree:k=4"], "metrics ["),
    (["throughput", "torus:2x2x2"], "throughput ["),
    (["serve", "sd200-ultra", "--model", "kimi-k2", "--isl", "1024", "--osl", "128",
      "--layout", "tp=8", "--batches", "1", "--no-speculative"], "serve ["),
])
def test_long_commands_draw_a_bar_on_a_terminal_and_not_with_quiet(monkeypatch, capsys,
                                                                   argv, desc):
    from analysis._cli import main

    term = _Terminal()
    monkeypatch.setattr(sys, "stderr", term)
    assert main(argv) == 0
    drawn = term.getvalue()
    assert desc in drawn and "done" in drawn and drawn.endswith("\n")
    term2 = _Terminal()
    monkeypatch.setattr(sys, "stderr", term2)
    assert main([*argv, "--quiet"]) == 0
    assert term2.getvalue() == ""
