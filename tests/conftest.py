import os

import pytest
from hypothesis import settings

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
