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


@pytest.fixture(scope="session")
def small_report():
    """The small report (report_inputs.py), built once per run: its every section runs the
    scaling study, the slowest part of any report, so the files that read it share one."""
    from analysis import build_report
    return build_report(SMALL, ops=OPS, sizes=SIZES, quiet=True, command=COMMAND)


@pytest.fixture(scope="session")
def small_report_dir(small_report, tmp_path_factory):
    """``small_report`` written once; shared, so a test that adds or changes a file there
    works on its own copy (shutil.copytree)."""
    from analysis import write_report
    out = tmp_path_factory.mktemp("rep") / "report"
    write_report(small_report, out, quiet=True)
    return out
