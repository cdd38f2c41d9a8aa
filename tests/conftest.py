import pytest


@pytest.fixture(autouse=True)
def _close_figures():
    """Close every matplotlib figure a test opened."""
    yield
    import sys
    if "matplotlib.pyplot" in sys.modules:
        sys.modules["matplotlib.pyplot"].close("all")
