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
    """.ci/run runs the README's test command as written (the part after its last ``&&``)."""
    ci = (ROOT / ".ci" / "run").read_text()
    block = re.search(r"```sh\n(.*?)```", (ROOT / "README.md").read_text(), re.DOTALL)
    command = block.group(1).splitlines()[1].rsplit("&&", 1)[1].strip()
    assert command.startswith("python -m pytest")
    assert command in ci.splitlines() and os.access(ROOT / ".ci" / "run", os.R_OK)


def test_plain_pytest_runs_the_readme_test_command(pytestconfig):
    """setup.cfg's addopts carry the README command's options, so a plain ``python -m pytest``
    (a newcomer's, newcomer-check's) runs on every core as the README's does (one process took
    271-279 s, at the 5-minute budget); .ci/run's oldest-libraries step installs pytest-xdist
    for them. A run that names one file stays in its own process (the root's conftest.py,
    which pytest reads for any path: a module's doctests too)."""
    import configparser
    import shlex
    from types import SimpleNamespace

    root = [m for m in pytestconfig.pluginmanager.get_plugins()
            if Path(getattr(m, "__file__", None) or ".").resolve() == ROOT / "conftest.py"]
    assert len(root) == 1, "pytest did not read the root's conftest.py"
    pytest_xdist_auto_num_workers = root[0].pytest_xdist_auto_num_workers

    cfg = configparser.ConfigParser()
    cfg.read(ROOT / "setup.cfg")
    block = re.search(r"```sh\n(.*?)```", (ROOT / "README.md").read_text(), re.DOTALL)
    readme = shlex.split(block.group(1).splitlines()[1].rsplit("&&", 1)[1])
    assert readme[:4] == ["python", "-m", "pytest", "-q"]
    addopts = " ".join(shlex.split(cfg["tool:pytest"]["addopts"]))
    assert " ".join(readme[4:]) in addopts
    oldest = [line for line in (ROOT / ".ci" / "run").read_text().splitlines()
              if "install -q $oldest" in line]
    assert len(oldest) == 1 and "pytest-xdist" in oldest[0].split()

    def workers(*args):
        config = SimpleNamespace(args=list(args), invocation_params=SimpleNamespace(dir=ROOT))
        return pytest_xdist_auto_num_workers(config)

    assert workers("tests/test_readme.py") == 0 and workers("fabric/_units.py") == 0
    assert workers("tests/test_readme.py::test_readme_has_examples") == 0
    assert workers("tests/test_readme.py", "tests/test_cli.py") is None    # xdist's count
    assert workers("tests") is None and workers(*cfg["tool:pytest"]["testpaths"].split()) is None


def _chip_table():
    text = (ROOT / "README.md").read_text()
    head = "| chip | HBM | HBM TB/s | BF16 | FP8 | FP4 | INT8 |"
    rows = text[text.index(head):].split("\n\n")[0].splitlines()[2:]
    return [[c.strip() for c in r.strip("|").split("|")] for r in rows]


def _shown(value, text):
    """``value`` written to the digits ``text`` shows equals ``text``."""
    decimals = len(text.partition(".")[2])
    return f"{value:.{decimals}f}" == text


def test_readme_chip_table_is_what_the_chips_carry():
    """Every cell of the README's chip table is the chip's figure to the digits shown (the
    table was written by hand; nothing held it to fabric._chips)."""
    import fabric

    rows = _chip_table()
    assert len(rows) >= 8
    for chips, hbm, tbs, *peaks in rows:
        for name in re.findall(r"`([^`]+)`", chips):
            spec = fabric.chip_spec(name)
            assert fabric.parse_size(hbm.replace(" ", "")) == spec.hbm_bytes, (name, hbm)
            assert _shown(spec.hbm_bandwidth / 1e12, tbs), (name, tbs)
            for fmt, shown in zip(("bf16", "fp8", "fp4", "int8"), peaks):
                peak = dict(spec.tensor_flops).get(fmt)
                assert (shown == "-") == (peak is None), (name, fmt, shown)
                assert shown == "-" or _shown(peak / 1e15, shown), (name, fmt, shown, peak)


def test_readme_symmetric_memory_ratios_are_what_the_model_gives():
    """'symmetric-memory kernels against NCCL on 8 H100 are 6.6x faster at 1 KiB, 3.0x at
    1 MiB and even at 1 GiB' (the README's summary of the seed's 3.5x)."""
    import topologies
    from analysis import cost

    text = " ".join((ROOT / "README.md").read_text().split())
    f = topologies.build("dgx-h100")
    r = [cost(f, "all-reduce", s).time / cost(f, "all-reduce", s, runtime="symmetric-memory").time
         for s in ("1KiB", "1MiB", "1GiB")]
    assert (f"against NCCL on 8 H100 are {r[0]:.1f}x faster at 1 KiB, {r[1]:.1f}x at 1 MiB "
            "and even at 1 GiB") in text
    assert abs(r[2] - 1) < 0.05


def _headings_and_links():
    """The README's headings and its links to its own headings, code blocks left out (a
    ``# comment`` in a code block is not a heading)."""
    text = re.sub(r"```.*?```", "", (ROOT / "README.md").read_text(), flags=re.DOTALL)
    headings = re.findall(r"^#+ (.+)$", text, re.MULTILINE)
    return headings, re.findall(r"\]\(#([^)]+)\)", text)


def test_readme_opens_with_the_two_setup_commands():
    """A newcomer's first two commands stay the README's first code block, above every
    section (session 20 put the sections in a newcomer's order)."""
    text = (ROOT / "README.md").read_text()
    first = re.search(r"```sh\n(.*?)```", text, re.DOTALL)
    assert first.group(1).splitlines() == [
        'python3 -m venv .venv && . .venv/bin/activate && pip install . && cofabric report',
        ('python3 -m venv .venv && . .venv/bin/activate && pip install ".[test]" && '
         'python -m pytest -q -n auto --dist loadfile')]
    assert first.start() < text.index("\n## ")


def test_readme_links_to_its_own_headings_resolve():
    """Every ``](#anchor)`` names a heading as GitHub anchors it; the newcomer's path (what
    it answers, the tour) comes before the Reference, which holds the long parts."""
    from analysis._report_render import md_anchor

    headings, links = _headings_and_links()
    anchors = {md_anchor(h) for h in headings}
    assert links and not set(links) - anchors, sorted(set(links) - anchors)
    order = [h.split(":")[0] for h in headings]
    assert order.index("What cofabric answers") < order.index("A short tour") < order.index(
        "Reference") < order.index("Runtimes") < order.index("Serving")
