"""Docs and determinism as a new user meets them: every public function shows an example
(doctests run in the suite), the README's commands run as written and its inline figures
are what the code gives, and the CLI's JSON does not depend on the hash seed."""

import ast
import inspect
import io
import re
import shlex
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest
from hashseed import same_output_under_hash_seeds

import analysis
import fabric
import topologies
from analysis._cli import main

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()

#: Public functions still without a doctest example, and why. Shrink it: the test fails
#: when one of these gains an example (take it off) or a new function has none.
NO_EXAMPLE_YET = set()      # none since session 37 (unreachable_findings the last)


#: Public functions whose docstring has no numpydoc ``Parameters`` section naming every
#: parameter (STYLE: numpydoc; DESIGN: every number with its unit), 115 at session 35's
#: start. Shrink it: the test fails when one of these gains a full section (take it off) or
#: a function outside it lacks one (a new function, or a keyword added without its entry).
NO_PARAMETERS_YET = set()       # none since session 35
_SECTION = re.compile(r"^Parameters\n-+\n(.*?)(?=^\S[^\n]*\n-+\n|\Z)", re.DOTALL | re.MULTILINE)


def _undocumented(obj):
    """The parameters of ``obj`` its docstring's Parameters section does not name."""
    found = _SECTION.search(inspect.getdoc(obj) or "")
    named = set()
    for line in (found.group(1).splitlines() if found else ()):
        if line and not line[0].isspace():          # "name : type" or "a, b : type"
            named.update(n.strip().lstrip("*") for n in line.split(":")[0].split(","))
    return [p.name for p in inspect.signature(obj).parameters.values()
            if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD) and p.name not in named]

def _public_functions():
    for mod in (fabric, topologies, analysis):
        for name in mod.__all__:
            obj = getattr(mod, name)
            if inspect.isfunction(obj):
                yield f"{mod.__name__}.{name}", obj


def test_every_public_function_has_a_docstring_and_an_example():
    missing, stale = [], []
    for name, obj in _public_functions():
        doc = inspect.getdoc(obj) or ""
        assert doc.strip(), f"{name} has no docstring"
        has = ">>>" in doc
        if not has and name not in NO_EXAMPLE_YET:
            missing.append(name)
        if has and name in NO_EXAMPLE_YET:
            stale.append(name)
    assert not missing, f"public functions without an example: {missing}"
    assert not stale, f"these have an example now; take them off NO_EXAMPLE_YET: {stale}"


def test_every_public_function_names_its_parameters():
    missing = {name: gaps for name, obj in _public_functions()
               if (gaps := _undocumented(obj)) and name not in NO_PARAMETERS_YET}
    stale = [name for name, obj in _public_functions()
             if name in NO_PARAMETERS_YET and not _undocumented(obj)]
    assert not missing, f"public functions with parameters their docstring does not list: {missing}"
    assert not stale, f"these list every parameter now; take them off NO_PARAMETERS_YET: {stale}"
    assert NO_PARAMETERS_YET <= {name for name, _ in _public_functions()}

def _readme_lines():
    for block in re.findall(r"```python\n(.*?)```", README, re.DOTALL):
        yield from block.splitlines()


_LITERAL = re.compile(r"#\s*(\([^)]*\)|\['[^\]]*\]|[-+]?\d[\d.]*e[-+]?\d+)")


def _close(a, b):
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b))
    if isinstance(a, float) or isinstance(b, float):
        return abs(a - b) <= 0.005 * max(abs(a), abs(b))      # the README shows 3 digits
    return a == b


def test_readme_inline_figures_are_what_the_code_gives(monkeypatch):
    """``expr  # 4.99e11 B/s`` in the README: the value shown is the value computed (to the
    3 digits shown). A stale figure misleads a reader who never runs the line."""
    monkeypatch.chdir(ROOT)
    ns, checked = {}, 0
    for block in re.findall(r"```python\n(.*?)```", README, re.DOTALL):
        lines = block.splitlines()
        for st in ast.parse(block).body:
            code = ast.get_source_segment(block, st)
            comment = lines[st.end_lineno - 1].partition("  #")[2]
            m = _LITERAL.match("#" + comment.split(":")[0]) if comment else None
            if not (isinstance(st, ast.Expr) and m):
                exec(compile(ast.Module([st], []), "README.md", "exec"), ns)  # noqa: S102
                continue
            value = eval(compile(ast.Expression(st.value), "README.md", "eval"), ns)
            shown = ast.literal_eval(m.group(1))
            assert _close(shown, value), f"README: {code} shows {shown}, gives {value}"
            checked += 1
    assert checked >= 5, checked


def _readme_commands():
    out = []
    for block in re.findall(r"```(?:sh|console)\n(.*?)```", README, re.DOTALL):
        for line in block.replace("\\\n", " ").splitlines():
            line = line.strip().removeprefix("$ ").split("  #")[0].strip()
            if line.startswith("cofabric "):
                out.append(line)
    return out


# report, figures and scaling write many files and take a minute or more: their own tests
# (test_report.py, test_plots.py, test_scaling.py) run them
SLOW = ("report", "figures", "scaling")


@pytest.mark.parametrize("command", [c for c in _readme_commands()
                                     if shlex.split(c)[1] not in SLOW])
def test_readme_commands_run_as_written(command, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        rc = main(shlex.split(command)[1:])
    assert rc == 0, err.getvalue()
    assert out.getvalue().strip()


def test_readme_lists_the_slow_commands_it_does_not_run_here():
    names = {shlex.split(c)[1] for c in _readme_commands()}
    assert set(SLOW) <= names


_DETERMINISM = r"""
import io, contextlib, sys
from analysis._cli import main
commands = [
    ["metrics", "dragonfly:h=2", "--json"],
    ["metrics", "torus:4x4", "--json", "--fail-link", "chip0-chip1"],
    ["route", "cluster-128", "0", "127", "--json", "--fail-chip", "spine0"],
    ["throughput", "torus:4x4", "--traffic", "permutation", "--seed", "3", "--json"],
    ["cost", "dgx-h100", "--op", "all-reduce", "all-to-all", "--size", "1KiB:1MiB:x8",
     "--json"],
    ["decode", "cluster-128", "--model", "deepseek-v3", "--batch", "16", "--ep-kernel",
     "deepep-low-latency", "--json"],
    ["serve", "dgx-h100:chip=h200", "--model", "deepseek-r1-nvfp4", "--isl", "1024", "--osl",
     "1024", "--batches", "1,8", "--json", "--quiet"],
    ["check", "tests/data/addr_overlap.toml", "--json"],
    ["check", "tests/data/addr_isolation.toml", "--json"],
]
for argv in commands:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        rc = main(argv)
    sys.stdout.write(f"{argv} -> {rc}\n{out.getvalue()}")
"""


def test_json_output_does_not_depend_on_the_hash_seed():
    """Byte for byte across processes with different string hashing (set and dict order
    of names must never reach the output)."""
    out = same_output_under_hash_seeds(_DETERMINISM)
    assert out.count("-> 0") == 7 and out.count("-> 1") == 2
