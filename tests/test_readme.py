"""The README's Python examples run as written (from the repository root)."""

import os
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BLOCKS = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), re.DOTALL)


def test_readme_has_examples():
    assert len(BLOCKS) >= 3


def test_readme_examples_run_in_order(monkeypatch):
    monkeypatch.chdir(ROOT)  # the examples name files relative to the repository root
    namespace = {}
    for block in BLOCKS:
        exec(compile(block, "README.md", "exec"), namespace)  # noqa: S102
    assert namespace["m"].diameter == 3


@pytest.mark.skipif(not (ROOT / ".ci" / "run").exists(), reason="no CI script")
def test_ci_runs_the_readme_test_command():
    ci = (ROOT / ".ci" / "run").read_text()
    assert "python -m pytest -q" in ci and os.access(ROOT / ".ci" / "run", os.R_OK)
