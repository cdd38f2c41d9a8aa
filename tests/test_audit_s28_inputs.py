"""Audit, session 28: bad names given to the command line, pinned in process.

- A host domain named where a node is due (``route SRC``, ``cost --ranks``) said only "no node
  called 'host1'"; only ``--fail-chip`` said it was a host domain (session 26). The hint now
  lives in ``Fabric.node``, the one lookup (reader's R28-6 c).
- A NUL in a file name (which no shell can pass; in process it can) is refused by one check,
  ``fabric._system.file_name``, for every file read or written: ``cofabric export`` raised
  open's ValueError (exit 3, an internal error); --out and system files had their own copies
  (reader's R28-6 b).
"""

import pytest
from cli_run import run_cli

from fabric import NodeError, SpecError
from fabric._system import file_name

RAIL = "rail:servers=2,gpus=2,chip=h100"


def _one_line(argv):
    rc, out, err = run_cli(argv)
    assert (rc, out, len(err.strip().splitlines())) == (2, "", 1), (argv, rc, err)
    return err


@pytest.mark.parametrize("argv", [
    ["route", RAIL, "host1", "0"],
    ["route", RAIL, "0", "host1"],
    ["route", RAIL, "0", "1", "--fail-chip", "host1"],
    ["cost", RAIL, "--op", "all-reduce", "--size", "1KiB", "--ranks", "host1"],
])
def test_a_host_domain_where_a_node_is_due_names_its_chips(argv):
    err = _one_line(argv)
    assert "'host1' is a host domain, not a node" in err and "its chips (chip2, chip3)" in err


def test_the_lookup_says_it():
    from degrade import built

    with pytest.raises(NodeError, match=r"'host0' is a host domain, not a node .*\(chip0, chip1\)"):
        built(RAIL).node("host0")


@pytest.mark.parametrize("argv", [
    ["export", "torus:2x2", "a\x00b.json"],
    ["check", "a\x00b.toml"],
    ["route", "a\x00b.toml", "0", "1"],
    ["report", "torus:2x2", "--out", "a\x00b", "--quiet"],
])
def test_a_nul_in_a_file_name_is_one_line(argv, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    err = _one_line(argv)
    assert "no file is named with a NUL character" in err, err
    assert list(tmp_path.iterdir()) == []


def test_file_name_names_what_it_refuses():
    assert file_name("x.toml") == "x.toml"
    with pytest.raises(SpecError, match=r"^--out 'a\\x00': no file is named with a NUL"):
        file_name("a\x00", "--out")
