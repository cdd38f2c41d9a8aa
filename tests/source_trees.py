"""The packages' source files and their syntax trees, each parsed once per test run.

test_imports.py and test_records.py walk every statement of every module (at collection and
in their tests); parsing the ~90 files takes most of a second, so they share one parse.
The trees are read, never changed.
"""

import ast
import functools
import pathlib

ROOT = pathlib.Path(__file__).resolve().parent.parent
PACKAGES = ("fabric", "topologies", "analysis")
FILES = tuple(p for pkg in PACKAGES for p in sorted((ROOT / pkg).glob("*.py")))


@functools.cache
def tree(path):
    """The syntax tree of one source file."""
    return ast.parse(path.read_text(), str(path))
