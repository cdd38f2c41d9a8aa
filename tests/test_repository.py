"""Repository hygiene: no merge left half-done in a file a user reads or runs."""

import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parent.parent
TEXT = {".py", ".md", ".cfg", ".csv", ".txt", ".toml", ".ini", ".json", ".yml", ".yaml", ""}
SKIP = {".git", ".hypothesis", "__pycache__", "report", "build", "dist"}
MARKER = re.compile(r"^(<{7} |>{7} )", re.MULTILINE)    # "=======" is also a Markdown rule


def _files():
    for p in sorted(ROOT.rglob("*")):
        rel = p.relative_to(ROOT).parts
        if any(part in SKIP or part.startswith((".venv", "venv", ".ci-venv")) for part in rel):
            continue
        if p.is_file() and p.suffix in TEXT and p.stat().st_size < 2_000_000:
            yield p


def test_no_merge_conflict_markers():
    bad = []
    for p in _files():
        try:
            text = p.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        for m in MARKER.finditer(text):
            bad.append(f"{p.relative_to(ROOT)}:{text.count(chr(10), 0, m.start()) + 1}")
    assert not bad, "merge conflict markers left in: " + ", ".join(bad)
