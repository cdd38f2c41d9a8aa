"""Tests for ``cofabric check`` and ``cofabric translate``: output, JSON, exit status."""

import json
from pathlib import Path

import pytest

from analysis._cli import main

DATA = Path(__file__).resolve().parent / "data"
EXAMPLE = str(Path(__file__).resolve().parent.parent / "examples" / "sd200-ultra.toml")


def test_check_clean_exit_0(capsys):
    assert main(["check", EXAMPLE]) == 0
    assert capsys.readouterr().out.strip().endswith(": clean")


def test_check_warnings_only_exit_0(capsys):
    assert main(["check", str(DATA / "addr_alias.toml"), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["errors"], out["warnings"]) == (0, 1)
    assert out["findings"][0]["code"] == "alias"


@pytest.mark.parametrize("name, code", [
    ("addr_overlap", "overlap"), ("addr_misaligned", "misaligned"),
    ("addr_out_of_range", "out-of-range"), ("addr_dangling", "dangling-target"),
    ("addr_isolation", "isolation"), ("addr_too_many_entries", "too-many-entries"),
    ("addr_symmetric_mismatch", "symmetric-mismatch"), ("addr_roundtrip", "roundtrip"),
    ("addr_invalid", "invalid"),
])
def test_check_errors_exit_1(name, code, capsys):
    path = str(DATA / f"{name}.toml")
    assert main(["check", path, "--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["file"] == path and out["errors"] >= 1
    assert code in {f["code"] for f in out["findings"]}
    assert set(out["findings"][0]) == {"code", "severity", "message", "where"}
    assert main(["check", path]) == 1
    text = capsys.readouterr().out
    assert f": error: {code}: " in text


@pytest.mark.parametrize("name, where", [
    ("addr_malformed", "line 7, column 8"),
    ("addr_no_topology", "needs a [system] table"),
    ("addr_bad_topology", "addr_bad_topology.toml:1 system"),
    ("does_not_exist", "No such file"),
])
def test_check_unreadable_exit_2_one_line(name, where, capsys):
    assert main(["check", str(DATA / f"{name}.toml")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("cofabric check: error:") and where in err


@pytest.mark.parametrize("system", ["sd200-ultra", "hypermesh:8x4x4,hosts=8,chip=sd200-chip",
                                    EXAMPLE])
def test_translate_json(system, capsys):
    assert main(["translate", system, "--host", "host1", "0x1000", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    # host1's local slot 0 is its first own chip, chip8 (8 chips per host)
    assert out["owner"] == "chip8" and out["offset"] == "0x1000"
    assert out["global"] == hex((8 << 36) + 0x1000) and out["local"] == "0x1000"
    for key in ("global", "offset", "local"):
        assert out[key].startswith("0x")


def test_translate_text_and_pool(capsys):
    assert main(["translate", EXAMPLE, "--host", "host0", "0x1000_0000_5003"]) == 0
    out = capsys.readouterr().out
    assert "-> global 0x180000005003" in out and "host1 offset 0x1003" in out


@pytest.mark.parametrize("argv, msg", [
    (["sd200-ultra", "--host", "host0", "zz"], "'zz'"),
    (["sd200-ultra", "--host", "host0", "-5"], "-5"),
    (["sd200-ultra", "--host", "host0", hex(1 << 57)], "57-bit"),
    (["sd200-ultra", "--host", "host0", "0x7f00000000"], "in no window"),
    (["sd200-ultra", "--host", "host99", "0"], "host99"),
    (["nonsense-spec", "--host", "host0", "0"], "nonsense"),
    ([EXAMPLE, "--host", "host0", "0x2000_0000_0000", "--write"], "read-only window"),
    ([str(DATA / "addr_invalid.toml"), "--host", "host0", "0"], "run cofabric check"),
    ([str(DATA / "addr_overlap.toml"), "--host", "host0", "0"], "overlap"),
])
def test_translate_refusals_exit_2(argv, msg, capsys):
    assert main(["translate", *argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("cofabric translate: error:") and msg in err
