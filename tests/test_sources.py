"""The project carries its own sources: every citation of ``docs/sources.md`` names a section
that exists there, and nothing cites a file the project does not ship."""

import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parent.parent
SOURCES = ROOT / "docs" / "sources.md"
CITED = re.compile(r"docs/sources\.md\s+s\.(\d+)")
#: Files a user of the project does not have; a citation of one is a dead end.
FOREIGN = ("REFERENCES.md", "../shared/", "/work/shared")


def _project_files():
    for sub in ("fabric", "topologies", "analysis", "tests", "benchmarks", "examples", "docs"):
        for path in sorted((ROOT / sub).rglob("*")):
            if path.suffix in (".py", ".md") and path.is_file():
                yield path
    yield ROOT / "README.md"


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


def test_no_citation_of_a_file_outside_the_project():
    me = pathlib.Path(__file__).resolve()
    bad = [f"{path.relative_to(ROOT)}: {word}" for path in _project_files() if path != me
           for word in FOREIGN if word in path.read_text()]
    assert not bad, bad
