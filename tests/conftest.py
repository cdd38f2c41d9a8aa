import os

import pytest
from hypothesis import settings
from report_inputs import COMMAND, OPS, SIZES, SMALL

# CI (CI=true) replays the same Hypothesis examples on every run, so a landing is never failed by
# a newly drawn example; a developer's run explores (random seed, local example database).
settings.register_profile("ci", derandomize=True, database=None, deadline=None)
settings.register_profile("dev", deadline=None)
settings.load_profile("ci" if os.environ.get("CI") else "dev")


@pytest.fixture(autouse=True)
def _close_figures():
    """Close every matplotlib figure a test opened."""
    yield
    import sys
    if "matplotlib.pyplot" in sys.modules:
        sys.modules["matplotlib.pyplot"].close("all")


#: The small report, built once per run when a selected test asks for it: built before the
#: first test (pytest_collection_modifyitems), then written by a forked process while the
#: tests run ("report", "out", "writer"; the files are the same as written here, which
#: test_report.py's CLI test checks against its own --jobs 2 run byte for byte). Under
#: pytest-xdist every worker collects every test: the first worker to claim the run's shared
#: directory (made by the controller, pytest_configure_node) builds and writes it there for all
#: ("shared"); another worker builds the report object only if one of its tests reads it, and
#: reads the files written there ("wait"; a worker that finds them unwritten writes its own).
_SMALL_REPORT = {}
_SHARED_KEY = "cofabric_small_report"


def _build_small_report():
    from analysis import build_report
    return build_report(SMALL, ops=OPS, sizes=SIZES, quiet=True, command=COMMAND)


def _write_small_report(report, out, done=None):
    """Write the report to ``out``; with ``done``, leave "ok" (or "failed") there after it."""
    from analysis import write_report
    try:
        write_report(report, out, quiet=True)
    except BaseException:
        if done is not None:
            (done / "failed").touch()
        raise
    if done is not None:
        (done / "ok").touch()


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node):
    # the xdist controller: one directory per run, shared by its workers (removed at its end)
    import tempfile
    from pathlib import Path

    if "shared" not in _SMALL_REPORT:
        _SMALL_REPORT["shared"] = Path(tempfile.mkdtemp(prefix="cofabric-small-report-"))
    node.workerinput[_SHARED_KEY] = str(_SMALL_REPORT["shared"])


def _claim(shared):
    """True for the one worker that creates ``shared``/claim (holding its process id)."""
    try:
        fd = os.open(shared / "claim", os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        return False
    with os.fdopen(fd, "w") as fh:
        fh.write(str(os.getpid()))
    return True


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items):
    # trylast: after -k / -m deselect their items
    import multiprocessing

    wanted = {"small_report", "small_report_dir"}
    if config.option.collectonly or not any(
            wanted & set(getattr(item, "fixturenames", ())) for item in items):
        return
    if "fork" not in multiprocessing.get_all_start_methods():
        return              # (e.g. on Windows: the fixtures build and write it)
    import contextlib
    import tempfile
    from pathlib import Path

    shared = getattr(config, "workerinput", {}).get(_SHARED_KEY)
    if shared is not None:
        shared = Path(shared)
        if not _claim(shared):
            _SMALL_REPORT["wait"] = shared       # another worker builds and writes it
            return
    # a report that fails to build here is built again by the fixture, so that its error
    # fails the tests that need it (with its traceback), not the whole run
    with contextlib.suppress(Exception):
        _SMALL_REPORT["report"] = _build_small_report()
    if "report" not in _SMALL_REPORT:
        if shared is not None:
            (shared / "failed").touch()
        return
    report = _SMALL_REPORT["report"]
    if shared is None:
        _SMALL_REPORT["tmp"] = Path(tempfile.mkdtemp(prefix="cofabric-small-report-"))
        _SMALL_REPORT["out"] = _SMALL_REPORT["tmp"] / "report"
    else:
        _SMALL_REPORT["out"] = shared / "report"
    # forked: the child writes the report object built here (no pickling); the suite is
    # one process (or one per worker), so another core writes while this one runs tests
    writer = multiprocessing.get_context("fork").Process(
        target=_write_small_report, args=(report, _SMALL_REPORT["out"], shared), daemon=True)
    writer.start()
    _SMALL_REPORT["writer"] = writer


def pytest_sessionfinish(session):
    import shutil

    writer = _SMALL_REPORT.get("writer")
    if writer is not None and writer.is_alive():
        if _SHARED_KEY in getattr(session.config, "workerinput", {}):
            writer.join(timeout=900)    # another worker may still read what it writes
        else:                           # the run stopped before it was needed
            writer.terminate()
            writer.join()
    for key in ("tmp", "shared"):       # ("shared": the controller's, after every worker)
        if key in _SMALL_REPORT:
            shutil.rmtree(_SMALL_REPORT[key], ignore_errors=True)


@pytest.fixture(scope="session")
def small_report():
    """The small report (report_inputs.py), built once per run: its every section runs the
    scaling study, the slowest part of any report, so the files that read it share one."""
    if "report" in _SMALL_REPORT:
        return _SMALL_REPORT["report"]
    return _build_small_report()


def _written_by_another_worker(shared, timeout=900):
    """``shared``/report once the worker that claimed it has written it; None if it failed,
    its worker is gone, or ``timeout`` seconds pass."""
    import contextlib
    import time

    end = time.monotonic() + timeout
    pid = None
    while time.monotonic() < end:
        if (shared / "ok").exists():
            return shared / "report"
        if (shared / "failed").exists():
            return None
        if pid is None:
            with contextlib.suppress(OSError, ValueError):
                pid = int((shared / "claim").read_text())
        if pid is not None:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                return (shared / "report") if (shared / "ok").exists() else None
            except PermissionError:
                pass
        time.sleep(0.2)
    return None


@pytest.fixture(scope="session")
def small_report_dir(request, tmp_path_factory):
    """``small_report`` written once; shared, so a test that adds or changes a file there
    works on its own copy (shutil.copytree)."""
    writer = _SMALL_REPORT.get("writer")
    if writer is not None:
        writer.join(timeout=900)
        if writer.exitcode == 0:
            return _SMALL_REPORT["out"]
        if writer.is_alive():
            writer.terminate()
            writer.join()
    elif "wait" in _SMALL_REPORT and (out := _written_by_another_worker(_SMALL_REPORT["wait"])):
        return out
    # no writer, or it failed: written here, where a failure shows its traceback
    small_report = request.getfixturevalue("small_report")
    _write_small_report(small_report, out := tmp_path_factory.mktemp("rep") / "report")
    return out
