"""The project carries its own sources: every citation of ``docs/sources.md`` names a section
that exists there, and nothing cites a file the project does not ship."""

import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parent.parent
SOURCES = ROOT / "docs" / "sources.md"
CITED = re.compile(r"docs/sources\.md\s+s\.(\d+)")
#: Files a user of the project does not have; a citation of one is a dead end: the shared
#: brief's files, this machine's /work/ (notes, venv, mirrors), a session's notes (notes/moe.md
#: of session N: the fact and its original source belong in the text) and /tmp/ (probes and
#: outputs of a past session). A report written to /tmp (``--out /tmp/x``) is an output named,
#: not a file cited.
FOREIGN = re.compile(r"REFERENCES\.md|\.\./shared/|/work/|(?<![\w-])notes/[\w./-]+|/tmp/")
OUTPUT = re.compile(r"--out\s+/tmp/")


def _project_files():
    """The project's text: code, docs, and the data and settings files that carry sources
    (tests/data's csv and toml rows name theirs)."""
    for sub in ("fabric", "topologies", "analysis", "tests", "benchmarks", "examples", "docs"):
        for path in sorted((ROOT / sub).rglob("*")):
            if path.suffix in (".py", ".md", ".csv", ".toml") and path.is_file():
                yield path
    for name in ("README.md", "setup.cfg", "pyproject.toml"):
        yield ROOT / name


def test_sources_has_numbered_sections():
    sections = re.findall(r"^## s\.(\d+) ", SOURCES.read_text(), flags=re.MULTILINE)
    assert sections == [str(i) for i in range(1, len(sections) + 1)]


def test_every_citation_names_an_existing_section():
    sections = set(re.findall(r"^## s\.(\d+) ", SOURCES.read_text(), flags=re.MULTILINE))
    cited = {}
    for path in _project_files():
        for n in CITED.findall(path.read_text()):
            cited.setdefault(n, []).append(path.relative_to(ROOT).as_posix())
    assert cited, "no file cites docs/sources.md"
    missing = {n: files for n, files in cited.items() if n not in sections}
    assert not missing, f"citations of sections docs/sources.md does not have: {missing}"


def _foreign(path):
    """The citations of files outside the project in ``path``, each with its line."""
    text = path.read_text()
    name = path.relative_to(ROOT).as_posix()
    text = OUTPUT.sub(lambda m: m.group()[:-len("/tmp/")], text)
    return [f"{name}:{text.count(chr(10), 0, m.start()) + 1}: {m.group()}"
            for m in FOREIGN.finditer(text)]


def test_no_citation_of_a_file_outside_the_project():
    me = pathlib.Path(__file__).resolve()
    bad = [hit for path in _project_files() if path != me for hit in _foreign(path)]
    assert not bad, bad
