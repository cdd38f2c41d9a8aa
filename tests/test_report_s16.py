"""Session 16: one value, one text. A time or bandwidth the model computes reads the same in
the report's prose and in its tables (four significant digits, trailing zeros kept); the
serving section uses the report's formatter, not its own; units are spelled one way."""

import re

import pytest

import analysis
from analysis._report_parts import SEED_TPOT_TEXT, computed_bandwidth, computed_time

NODE = "switch:8,planes=2,links=9,tech=nvlink5,chip=b200"      # 450GB/s bisection per chip

#: A time or bandwidth as the format helpers write it (number, unit, no space).
_QUANTITY = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)(ns|us|ms|s|[kMGTP]?B/s)\b")
#: A number, one space, then a time, bandwidth or size unit: the spelling the report does not
#: use in its own text (quoted sources keep theirs; figures' axis labels are the figures').
_SPACED = re.compile(r"(?<![\w.])\d+(?:\.\d+)? (ns|us|µs|ms|s|[kMGTP]?[bB]/s|[KMGTP]iB|[kMGTP]?B)"
                     r"(?![\w/])")


def _texts(report):
    """Every sentence the report writes: findings, section text, titles, captions, headings."""
    out = list(report.findings)
    for s in report.sections:
        out += list(s.text)
        out += [t.title for t in s.tables] + [t.caption for t in s.tables]
        out += [c.label for t in s.tables for c in t.columns]
        out += [f.caption for f in s.figures]
    return [t for t in out if t]


def _cells(report):
    """The shown text of every table cell whose column prints a computed time or bandwidth."""
    return {c.fmt(row[c.key]) for s in report.sections for t in s.tables for c in t.columns
            if c.fmt in (computed_time, computed_bandwidth) for row in t.rows
            if row.get(c.key) is not None}


def _short(text):
    """The same value with its trailing zeros dropped ('450.0GB/s' -> '450GB/s')."""
    m = _QUANTITY.fullmatch(text)
    number, unit = m.groups()
    return (number.rstrip("0").rstrip(".") if "." in number else number) + unit


@pytest.fixture(scope="module")
def structure_latency_report():
    # not named small_report: that name makes conftest.py build its own report before the
    # first test (pytest_collection_modifyitems), unused by this file
    return analysis.build_report(["torus:4x4", "mesh:4x4", NODE],
                                 sections=("structure", "latency"), quiet=True)


def test_a_computed_value_reads_the_same_in_prose_and_in_the_tables(structure_latency_report):
    # session 15: the findings wrote nvl72's bisection per chip '450GB/s' (a value alone)
    # and the summary table '450.0GB/s' (a column): one value, two texts
    cells = _cells(structure_latency_report)
    assert "450.0GB/s" in cells                     # the case is in the report
    shortened = {_short(c) for c in cells} - cells
    assert "450GB/s" in shortened                   # the test can fail
    prose = " ".join(t for t in structure_latency_report.findings)
    assert "450.0GB/s" in prose
    for text in _texts(structure_latency_report):
        for m in _QUANTITY.finditer(text):
            assert m.group(0) not in shortened, (m.group(0), text)


@pytest.mark.parametrize("seconds, text", [(1 / 490, "2.041ms"), (6e-3, "6.000ms"),
                                           (0.15e-3, "150.0us"), (4.133e-5, "41.33us")])
def test_computed_times_keep_four_digits(seconds, text):
    # the serving section's own '_ms' wrote '2.04 ms', '6 ms', '0.15 ms', '0.0413 ms'
    assert computed_time(seconds) == text


def test_the_seed_claim_keeps_its_own_digits_in_the_helpers_spelling():
    assert SEED_TPOT_TEXT == "5.85ms"


def test_the_serving_section_spells_times_and_bandwidths_one_way():
    r = analysis.build_report([NODE], sections=("serving",), quiet=True)
    texts = _texts(r)
    assert any(SEED_TPOT_TEXT in t for t in texts)
    for text in texts:
        assert not _SPACED.search(text), (_SPACED.search(text).group(0), text)
    sec = next(s for s in r.sections if s.key == "serving")
    seed = next(t for t in sec.tables if t.name == "serving_seed")
    tpot = next(c for c in seed.columns if c.key == "tpot_s")
    assert tpot.fmt is computed_time


def test_the_cli_spells_its_times_as_the_report_does(capsys):
    # cofabric serve printed its per-token parts with its own '{ms:.2f} ms' and decode its
    # HBM as '{GB:.1f} GB': the format helpers' spelling, four digits side by side
    from analysis._cli import main

    assert main(["serve", NODE, "--model", "kimi-k2", "--isl", "512", "--osl", "128",
                 "--batches", "1", "--layout", "tp=8", "--no-speculative", "--quiet"]) == 0
    line = next(ln for ln in capsys.readouterr().out.splitlines()
                if ln.startswith("single user:"))
    parts = dict(p.rsplit(" ", 1) for p in line.split("per token: ")[1].split(", "))
    assert not _SPACED.search(line), line
    # every part at four digits; speed_limits' 'compute' here is a float residue
    # (4.3e-19 s), which read 'compute 4.337e-10ns' at e337109: left out (shown_parts)
    assert all(_QUANTITY.fullmatch(v) for v in parts.values()), parts
    for name in ("weights read", "kernel floors", "communication"):
        assert len(_QUANTITY.fullmatch(parts[name]).group(1).replace(".", "")) == 4, parts
    assert main(["decode", NODE, "--model", "kimi-k2", "--layout", "tp=8"]) == 0
    out = capsys.readouterr().out
    assert not _SPACED.search(out) and not re.search(r"\d GB\b", out), out


def test_the_report_text_spells_units_one_way(structure_latency_report):
    # 'a 1 GiB all-reduce in 1.947ms', 'A 64 B remote load ... 951.5ns': sizes were spaced
    # where the report wrote them by hand, unspaced where format_size wrote them
    texts = _texts(structure_latency_report)
    assert any("64B" in t for t in texts)
    for text in texts:
        assert not _SPACED.search(text), (_SPACED.search(text).group(0), text)


@pytest.mark.parametrize("nbytes, text", [(10**6, "1MB"), (2**20, "1MiB"), (1536, "1.5KiB"),
                                          (80 * 10**9, "80GB"), (4096, "4KiB"), (64, "64B"),
                                          (12345678901, "11.5GiB")])
def test_a_size_is_written_exactly_where_a_prefix_can(nbytes, text):
    # cofabric cost --size 1MB printed '976.6KiB' (binary prefixes always): not the size
    # asked for, and not exact; the report's parameter table had its own rule for this
    from analysis._report_parts import fmt_value
    from fabric import format_size

    assert format_size(nbytes) == text
    assert fmt_value(nbytes, "B") == text


def test_the_cost_cli_shows_the_size_asked_for(capsys):
    from analysis._cli import main

    assert main(["cost", "torus:4x4", "--op", "all-reduce", "--size", "1MB"]) == 0
    row = capsys.readouterr().out.splitlines()[2].split()
    assert row[:2] == ["all-reduce", "1MB"], row


def test_route_and_latency_write_their_payload_as_a_size(capsys):
    # 'load of 64 B from chip0': the byte count by hand, spaced
    from analysis._cli import main

    assert main(["route", "torus:4x4", "0", "5"]) == 0
    assert "load of 64B from chip0 to chip5" in capsys.readouterr().out
    assert main(["latency", "torus:4x4", "--size", "1MB"]) == 0
    assert "load of 1MB," in capsys.readouterr().out


def test_the_serving_findings_leave_out_a_part_the_total_cannot_see():
    from analysis._report_serving import _parts_text

    shares = {"weights read": 4e-3, "communication": 3e-3, "launch/graph": 1e-3,
              "compute": 4.3e-19, "KV read": 2e-6, "draft": 0.0}
    text = _parts_text(shares)
    assert "compute" not in text and "draft" not in text and "KV read 2.000us" in text, text
