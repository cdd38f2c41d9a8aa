import functools
import os

import pytest
from hypothesis import settings
from report_inputs import COMMAND, OPS, SIZES, SMALL

# CI (CI=true) replays the same Hypothesis examples on every run, so a landing is never failed by
# a newly drawn example; a developer's run explores (random seed, local example database).
settings.register_profile("ci", derandomize=True, database=None, deadline=None)
settings.register_profile("dev", deadline=None)
settings.load_profile("ci" if os.environ.get("CI") else "dev")


def pytest_configure(config):
    # The cyclic garbage collector's youngest generation is examined every 10,000 container
    # allocations instead of CPython's 700: the tests allocate millions of short-lived objects
    # that reference counting frees anyway, and each young pass promotes what is alive at
    # that instant, so old-generation passes over the run's whole heap followed. Collector
    # time, one process, CI=true: 16 heavy test files 6.0 -> 3.7 s CPU; the whole suite (with
    # frozen_heap) 25.0 -> 10.2 s (automatic full collections ~29 x 0.45 s -> ~10). Only
    # when garbage is found moves: nothing a test checks.
    import gc

    gc.set_threshold(10_000, 10, 10)


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    # Collecting a module imports it, and pytest rewrites its asserts first: millions of
    # short-lived syntax-tree objects made in a process that already holds every imported
    # package, so the cyclic garbage collector's passes over that heap took 5.6 of 18.9 s
    # CPU of collecting the suite (one process; every xdist worker collects every file).
    # Syntax trees hold no reference cycles (reference counting frees them): the collector
    # is paused while a node collects and resumed as it was (nested nodes leave it to the
    # outermost), so the tests, the small report's build and its writer run with it on.
    import gc

    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


@pytest.fixture(autouse=True)
def _close_figures():
    """Close every matplotlib figure a test opened."""
    yield
    import sys
    if "matplotlib.pyplot" in sys.modules:
        sys.modules["matplotlib.pyplot"].close("all")


@pytest.fixture
def frozen_heap():
    """Every object older than the test frozen while it runs (``gc.freeze``), so its
    ``gc.collect()`` walks only what the test made: a full collection over the whole run's
    heap took ~0.45 s in one process (44 of them, 19.6 s CPU in the run; tests that check a
    fabric was freed called it 15 times). Freezing only ever keeps objects alive (a frozen
    object's references count as roots), so an assertion that something WAS collected
    cannot pass because of it."""
    import gc

    gc.freeze()
    yield
    gc.unfreeze()


#: The small report, built once per run when a selected test asks for it. In one process:
#: built before the first test (pytest_collection_modifyitems), then written by a forked
#: process while the tests run ("report", "out", "writer"; the files are the same as written
#: here, which test_report.py's CLI test checks against its own --jobs 2 run byte for byte).
#: Under pytest-xdist every worker collects every test, but the files that read it
#: (SMALL_REPORT_FILES) are one work unit of ``--dist loadfile`` (pytest_xdist_make_scheduler):
#: the one worker that runs them builds and writes it when their first test asks.
_SMALL_REPORT = {}

#: The test files whose tests read the small report (fixtures ``small_report``,
#: ``small_report_dir``); test_report.py checks that no other file does.
SMALL_REPORT_FILES = ("test_browser.py", "test_report.py", "test_report_s19.py",
                      "test_report_s20.py")
_SMALL_REPORT_UNIT = "tests/(the small report's files)"


def _build_small_report():
    from analysis import build_report
    return build_report(SMALL, ops=OPS, sizes=SIZES, quiet=True, command=COMMAND)


def _write_small_report(report, out):
    from analysis import write_report
    write_report(report, out, quiet=True)


@functools.cache
def small_report_scheduling():
    """pytest-xdist's ``loadfile`` scheduling with SMALL_REPORT_FILES as one work unit (each
    other file its own, as loadfile does)."""
    from xdist.scheduler import LoadFileScheduling

    class SmallReportTogether(LoadFileScheduling):
        def _split_scope(self, nodeid):
            scope = super()._split_scope(nodeid)
            if scope in {f"tests/{name}" for name in SMALL_REPORT_FILES}:
                return _SMALL_REPORT_UNIT
            return scope

    return SmallReportTogether


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    # the xdist controller: every worker would otherwise build the report its files read
    if config.getvalue("dist") == "loadfile":
        return small_report_scheduling()(config, log)
    return None


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items):
    # trylast: after -k / -m deselect their items
    import multiprocessing

    wanted = {"small_report", "small_report_dir"}
    if config.option.collectonly or hasattr(config, "workerinput") or not any(
            wanted & set(getattr(item, "fixturenames", ())) for item in items):
        return              # (an xdist worker: the fixtures build and write it, if it runs them)
    if "fork" not in multiprocessing.get_all_start_methods():
        return              # (e.g. on Windows: the fixtures build and write it)
    import contextlib
    import tempfile
    from pathlib import Path

    # a report that fails to build here is built again by the fixture, so that its error
    # fails the tests that need it (with its traceback), not the whole run
    with contextlib.suppress(Exception):
        _SMALL_REPORT["report"] = _build_small_report()
    if "report" not in _SMALL_REPORT:
        return
    _SMALL_REPORT["tmp"] = Path(tempfile.mkdtemp(prefix="cofabric-small-report-"))
    _SMALL_REPORT["out"] = _SMALL_REPORT["tmp"] / "report"
    # forked: the child writes the report object built here (no pickling), so another core
    # writes while this one runs tests
    writer = multiprocessing.get_context("fork").Process(
        target=_write_small_report, args=(_SMALL_REPORT["report"], _SMALL_REPORT["out"]),
        daemon=True)
    writer.start()
    _SMALL_REPORT["writer"] = writer


def pytest_sessionfinish(session):
    import shutil

    writer = _SMALL_REPORT.get("writer")
    if writer is not None and writer.is_alive():    # the run stopped before it was needed
        writer.terminate()
        writer.join()
    if "tmp" in _SMALL_REPORT:
        shutil.rmtree(_SMALL_REPORT["tmp"], ignore_errors=True)


@pytest.fixture(scope="session")
def small_report():
    """The small report (report_inputs.py), built once per run: its every section runs the
    scaling study, the slowest part of any report, so the files that read it share one."""
    if "report" in _SMALL_REPORT:
        return _SMALL_REPORT["report"]
    return _build_small_report()


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
    # no writer, or it failed: written here, where a failure shows its traceback
    small_report = request.getfixturevalue("small_report")
    _write_small_report(small_report, out := tmp_path_factory.mktemp("rep") / "report")
    return out
