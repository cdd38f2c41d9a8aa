"""Session 37 (reader): what a user reads when an argument is refused.

The output directory's messages said ``--out`` and ``--force`` to a library caller, who passed
``out`` and ``force`` (``write_figures('a file')``: "--out a file exists and is not a
directory"); now the library names its arguments and the CLI its flags. ``write_figures``
built the README report (seconds) before it refused an unknown figure name, and read
``names='latency'`` letter by letter: names are checked first, against README_FIGURES.
"""

import pytest
from cli_run import run_cli

import analysis
import analysis._report
from fabric import SpecError


@pytest.fixture
def no_report(monkeypatch):
    """A write_figures that would build the README report fails the test: a refusal comes
    first."""
    def built(*args, **kwargs):
        raise AssertionError("the report was built before the names were checked")

    monkeypatch.setattr(analysis._report, "build_report", built)


@pytest.mark.parametrize("names, error, said", [
    (["nope"], SpecError, r"^unknown figure\(s\) \['nope'\]; known: topology-sd200-ultra, "),
    (["topology-nvl72"], SpecError, r"^unknown figure\(s\) \['topology-nvl72'\]"),
    ("latency", TypeError, r"^names must be a sequence of figure names, got 'latency' \(a str\)"),
    ({"latency"}, TypeError, r"^names must be a sequence of figure names, got \{'latency'\}"),
    (None, TypeError, r"^names must be a sequence of figure names, got None"),
    ([5], TypeError, r"^each figure name must be a str, got 5 \(an int\)$"),
], ids=["unknown", "not-a-readme-figure", "str", "set", "None", "int"])
def test_write_figures_refuses_names_before_building_the_report(tmp_path, no_report, names,
                                                                error, said):
    with pytest.raises(error, match=said):
        analysis.write_figures(tmp_path / "figures", names=names, quiet=True)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("call, said", [
    (lambda p: analysis.write_figures(p / "afile", names=()),
     r"^out .*afile exists and is not a directory$"),
    (lambda p: analysis.check_report_dir(p / "afile"),
     r"^out .*afile exists and is not a directory$"),
    (lambda p: analysis.check_report_dir(""),
     r"^out is empty: name the directory to write, e.g. out='report'$"),
    (lambda p: analysis.write_figures(" ", names=()),
     r"^out is empty: name the directory to write, e.g. out='figures'$"),
    (lambda p: analysis.check_report_dir(p / "full"),
     r"full already holds files; pass force=True to replace it$"),
    (lambda p: analysis.check_report_dir(p / "full", force="no"),
     r"^force must be True or False, got 'no' \(a str\)$"),
], ids=["figures-file", "report-file", "report-empty", "figures-empty", "full", "force-str"])
def test_the_library_names_its_own_arguments(tmp_path, call, said):
    (tmp_path / "afile").write_text("x")
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "keep").write_text("x")
    with pytest.raises((SpecError, OSError, TypeError), match=said):
        call(tmp_path)
    assert (tmp_path / "full" / "keep").read_text() == "x"


@pytest.mark.parametrize("argv, said", [
    (["figures", "--out", "afile"], "error: --out afile exists and is not a directory\n"),
    (["report", "torus:2x2", "--out", "afile"],
     "error: --out afile exists and is not a directory\n"),
    (["scaling", "--out", "afile"], "error: --out afile exists and is not a directory\n"),
    (["report", "torus:2x2", "--out", "full"],
     "error: full already holds files; pass --force to replace it\n"),
    (["report", "torus:2x2", "--out", ""], "e.g. --out report\n"),
], ids=["figures", "report", "scaling", "report-full", "report-empty"])
def test_the_cli_names_its_flags(tmp_path, monkeypatch, argv, said):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "afile").write_text("x")
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "keep").write_text("x")
    rc, _, err = run_cli(argv + ["--quiet"])
    assert rc == 2 and err.count("\n") == 1 and err.endswith(said), err


@pytest.mark.parametrize("argv, said", [
    (["report", "torus:2x2", "--out", "a\nb", "--quiet"],
     "error: a\\nb already holds files; pass --force to replace it\n"),
    (["check", "a\nb.toml"], "error: a\\nb.toml: line 1, column 3: invalid TOML: "),
    (["check", "x\u200b.toml"], "error: x\\u200b.toml: line 1, column 3: invalid TOML: "),
], ids=["report-out", "check-file", "zero-width"])
def test_a_refusal_quoting_a_control_character_stays_one_line(tmp_path, monkeypatch, argv,
                                                              said):
    # the project's messages quote a file name as given; the CLI writes each character that
    # is not printable as its escape (argparse's refusals did already)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a\nb").mkdir()
    (tmp_path / "a\nb" / "keep").write_text("x")
    for name in ("a\nb.toml", "x\u200b.toml"):
        (tmp_path / name).write_text("[[\n")
    rc, _, err = run_cli(argv)
    assert rc == 2 and err.count("\n") == 1 and said in err, err
