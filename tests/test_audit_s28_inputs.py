"""Audit, session 28: bad names given to the command line, pinned in process.

- A host domain named where a node is due (``route SRC``, ``cost --ranks``) said only "no node
  called 'host1'"; only ``--fail-chip`` said it was a host domain (session 26). The hint now
  lives in ``Fabric.node``, the one lookup (reader's R28-6 c).
- A NUL in a file name (which no shell can pass; in process it can) is refused by one check,
  ``fabric._system.file_name``, for every file read or written: ``cofabric export`` raised
  open's ValueError (exit 3, an internal error); --out and system files had their own copies
  (reader's R28-6 b).
- ``cofabric --version`` named the commit of any repository around an installed cofabric.
"""

import shutil
import subprocess

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
    assert "'host1' is a host domain, not a node" in err and "its chips (chip2 and chip3)" in err


def test_the_lookup_says_it():
    from degrade import built

    with pytest.raises(NodeError, match=r"'host0' is a host domain, not a node .*\(chip0 and chip1\)"):
        built(RAIL).node("host0")


def test_a_large_host_domain_is_named_in_one_list():
    """Its chips by fabric._units.name_list, the packages' one spelling of a list: an
    8-chip server names three and how many more, not every chip in a comma list."""
    from degrade import built

    with pytest.raises(NodeError, match=r"'host1' is a host domain, not a node .*: name its "
                                        r"chips \(chip8, chip9, chip10 and 5 more\)$"):
        built("rail:servers=2,gpus=8,chip=h100").node("host1")


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


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_the_commit_is_the_source_trees_own(tmp_path):
    """``cofabric --version`` (and every report's provenance) named the commit of any git
    repository holding the source tree: a cofabric installed into a ``.venv`` inside someone's
    project reported that project's commit as its own. Only the top of a checkout has one."""
    from analysis._provenance import _git_commit

    def git(*args):
        subprocess.run(["git", "-C", str(tmp_path), "-c", "user.email=a@b", "-c", "user.name=a",
                        *args], check=True, capture_output=True)

    git("init", "-q")
    git("commit", "-q", "--allow-empty", "-m", "someone else's project")
    site = tmp_path / ".venv" / "site-packages"
    site.mkdir(parents=True)
    assert _git_commit(site) is None
    assert _git_commit(tmp_path) is not None          # the top of a checkout: its commit


@pytest.mark.parametrize("argv, said", [
    (["throughput", "torus:2x2", "--", "--traffic=a\nb"], r"unrecognized arguments: --traffic=a\nb"),
    (["route", "torus:2x2", "0", "1", "x\ty"], r"unrecognized arguments: x\ty"),
])
def test_an_argument_argparse_quotes_stays_on_one_line(argv, said):
    """Two hostile slots at once (an argument after '--' and a newline in it): argparse's
    'unrecognized arguments' quotes the text as given, and a newline made it two lines."""
    assert _one_line(argv).strip().endswith(said)


NESTED = "x = " + "[" * 3000 + "]" * 3000 + "\n"


@pytest.mark.parametrize("argv, text, said", [
    (["check", "f.toml"], '[system]\ntopology = "torus:2x2"\n' + NESTED, "nested too deeply"),
    (["decode", "hgx-h200", "--model", "f.toml"], NESTED + '[attention]\ntype = "mla"\n',
     "nested too deeply"),
    (["decode", "hgx-h200", "--model", "f.toml"], "layers = " + "9" * 5000 + "\n",
     "f.toml: line 1: an integer of more than 4300 digits"),
])
def test_a_toml_file_python_cannot_read_is_one_line(argv, text, said, tmp_path, monkeypatch):
    """One TOML reader, fabric._system.read_toml, for system and model files: a model file
    with a 5000-digit integer (ValueError) or either file nested past the recursion limit
    (RecursionError) was an internal error, exit 3."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "f.toml").write_text(text, encoding="utf-8")
    assert said in _one_line(argv)


def test_a_toml_time_is_named_as_one():
    import topologies
    from fabric import read_system

    s = read_system('[system]\ntopology = "torus:2x2,chip=h100"\n[heap]\nsize = 07:32:00\n',
                    "f.toml", build=topologies.build)
    said = ("size must be an integer or a string such as '16PiB', got datetime.time(7, 32) "
            "(a time)")         # kind_error's sentence since session 35 (key and value once)
    assert [x.message for x in s.findings] == [said]
