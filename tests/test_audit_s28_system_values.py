"""Audit, session 28: hostile VALUES inside a system file, through the library and the CLI.

A fuzz (every field of every table x 70 values: negative, zero, nan, inf, 2**64, wrong types,
empty and unicode strings, unknown names; duplicates, overlaps, failed and cut-off targets;
about 3,500 files through read_system + check + access and through ``cofabric check``, ``route``,
``latency``, ``translate``) found no traceback and no exit 3. One message did not name its
field: a window past 2**62 bytes said "local base, global base, size or page size reach
beyond 2**62 bytes"; it now names the value that does. This file pins a sample: each bad value
is a finding of ``check`` that names the field (and the file's line where the reader knows
it), ``cofabric check`` exits 1 and prints it, and ``cofabric route`` refuses the file in one
line (exit 2) naming the same field.
"""

import math

import pytest
from cli_run import run_cli

import topologies
from fabric import check, read_system

BASE = """\
[system]
topology = "torus:4x4,chip=h100"

[address]
layout = "owner-bits"
width = 57

[[regions]]
name = "cxl.x"
base = "0x7f00_0000_0000"
size = "256GiB"
owner = "host0"
kind = "dram"

[[interleave]]
name = "pool"
owners = ["host0", "host1"]
granularity = "4KiB"
size = "1TiB"

[[windows]]
host = "host0"
name = "pool"
local_base = "0x1000_0000_0000"
target = "pool"

[heap]
size = "16GiB"
offset = "32GiB"
"""


def _toml(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf") if math.isinf(v) else repr(v)
    return repr(v).replace("'", '"') if isinstance(v, str) else str(v)


def _with(table, key, value):
    """BASE with ``key`` of its ``table`` set to ``value`` (the table's first entry)."""
    lines = BASE.splitlines()
    start = next(i for i, s in enumerate(lines) if s.strip("[]") == table)
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("[")), len(lines))
    body = [s for s in lines[start + 1:end] if not s.startswith(f"{key} =")]
    return "\n".join(lines[:start + 1] + [f"{key} = {_toml(value)}"] + body + lines[end:]) + "\n"


CASES = [
    ("regions", "size", -1, "size: a size is >= 0 bytes, got -1"),
    ("regions", "base", math.nan, ("base must be an integer or a string such as '0x4000_0000', "
                                   "got nan (a float)")),     # an address's kind (session 38)
    ("regions", "owner", "chip999", "owner 'chip999' is nobody"),
    ("interleave", "granularity", "1.5KiB", "interleave granularity must be a power of two"),
    ("interleave", "size", "0", "size 0 must be > 0"),
    ("windows", "local_base", 2**70, f"local_base = {2**70} reaches beyond 2**62 bytes"),
    ("windows", "target", "host99", "target 'host99' names no region"),
    ("windows", "host", "", "no host domain called ''"),
    ("windows", "page_size", True, ("page_size must be an integer or a string such as '16PiB', "
                                    "got True (a bool)")),     # kind_error's, session 35
    ("heap", "offset", "inf", "offset: cannot read size 'inf'"),
    # the key once, the value once: parse_size's sentence quotes it (session 36; was
    # "offset = 'inf': cannot read size 'inf'")
    ("address", "width", 1e300, "width must be an integer, got 1e+300 (a float)"),
    # kind_error's text since session 34, without the reader's 'width = 1e+300: ' (session 35)
    ("address", "layout", "é", "layout must be one of owner-bits, packed, explicit, got 'é'"),
    # choice_fault's sentence, check_choice's (session 38; was the tuple's repr, 'layout=é')
]


@pytest.mark.parametrize("table, key, value, said", CASES, ids=[f"{t}.{k}" for t, k, *_ in CASES])
def test_a_bad_value_is_named_by_check_and_refused_by_route_in_one_line(table, key, value, said,
                                                                         tmp_path):
    text = _with(table, key, value)
    s = read_system(text, "fz.toml", build=topologies.build)
    errors = [x for x in check(s) if x.severity == "error"]
    assert any(said in x.message for x in errors), [x.message for x in errors]
    path = tmp_path / "fz.toml"
    path.write_text(text, encoding="utf-8")
    rc, out, err = run_cli(["check", str(path)])
    assert rc == 1 and said in out and err == "", (rc, out, err)
    rc, out, err = run_cli(["route", str(path), "0", "5"])
    assert (rc, out, len(err.strip().splitlines())) == (2, "", 1) and said in err, err


def test_the_base_file_is_clean(tmp_path):
    """The sample's base is a good file: every finding above is the value's."""
    path = tmp_path / "fz.toml"
    path.write_text(BASE, encoding="utf-8")
    rc, out, err = run_cli(["check", str(path)])
    assert (rc, err) == (0, "") and out.endswith(": clean\n"), out
