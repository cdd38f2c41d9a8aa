"""The packages' source files and their syntax trees, each parsed once per test run.

test_imports.py and test_records.py walk every statement of every module (at collection and
in their tests); parsing the ~90 files takes most of a second, so they share one parse.
The trees are read, never changed. :func:`spelled` is the guards' one search of the source text
("no package module spells this check again beside its one helper").
"""

import ast
import functools
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parent.parent
PACKAGES = ("fabric", "topologies", "analysis")
FILES = tuple(p for pkg in PACKAGES for p in sorted((ROOT / pkg).glob("*.py")))


@functools.cache
def tree(path):
    """The syntax tree of one source file."""
    return ast.parse(path.read_text(), str(path))


@functools.cache
def text(path):
    """The source text of one file."""
    return path.read_text()


def spelled(pattern):
    """Every match of the regular expression ``pattern`` in the packages' modules, as
    ``"path: matched text"`` (path relative to the repository): what a guard against a check
    spelled again by hand finds."""
    found = re.compile(pattern)
    return [f"{p.relative_to(ROOT)}: {m.group(0)}" for p in FILES for m in found.finditer(text(p))]
