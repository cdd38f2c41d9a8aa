"""Session 37 (reader): what a user reads when an argument is refused.

The output directory's messages said ``--out`` and ``--force`` to a library caller, who passed
``out`` and ``force`` (``write_figures('a file')``: "--out a file exists and is not a
directory"); now the library names its arguments and the CLI its flags. ``write_figures``
built the README report (seconds) before it refused an unknown figure name, and read
``names='latency'`` letter by letter: names are checked first, against README_FIGURES.
"""

import re

import pytest
from cli_run import run_cli

import analysis
import analysis._report
import fabric
from fabric import SpecError


@pytest.fixture
def no_report(monkeypatch):
    """A write_figures that would build the README report fails the test: a refusal comes
    first."""
    def built(*args, **kwargs):
        raise AssertionError("the report was built before the names were checked")

    monkeypatch.setattr(analysis._report, "build_report", built)


@pytest.mark.parametrize("names, error, said", [
    (["nope"], SpecError, r"^unknown figure\(s\) \['nope'\]; known: collective-all-reduce, "),
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


def test_one_byte_count_rule_on_a_router():
    # loads/loads_grouped said "nbytes must be finite and >= 0" (a ValueError),
    # loads_all_to_all check_number's sentence (a SpecError): one text and class now
    import numpy as np

    import topologies
    r = topologies.build("torus:2x2").router
    said = r"^nbytes must be a finite number >= 0 bytes, got nbytes"
    for call in (lambda: r.loads([0], [1], -1), lambda: r.loads_all_to_all(-1),
                 lambda: r.loads([0, 1], [1, 2], [1, np.inf]), lambda: r.loads(0, 1, np.array(-1.0))):
        with pytest.raises(SpecError, match=said):
            call()


def test_a_transport_is_named_for_its_bounce_once_and_counts_bytes():
    from fabric import transport
    t = transport("rdma").with_bounce()
    assert (t.name, t.with_bounce().name, t.with_bounce(False).name) == \
        ("rdma+bounce", "rdma+bounce", "rdma")      # were 'rdma+bounce+bounce', 'rdma+bounce'
    assert not t.with_bounce(False).bounce
    with pytest.raises(SpecError, match=r"^size must be an integer >= 0, got size=-1$"):
        t.wire_bytes(-1)                            # was 25 bytes
    with pytest.raises(TypeError, match=r"^size must be an integer >= 0, got size=True"):
        t.packets(True)


@pytest.mark.parametrize("build", ["torus", "mesh", "hypermesh", "fat_tree", "leaf_spine",
                                   "rail_optimized", "switched", "dragonfly"])
def test_a_builder_refuses_a_name_that_is_not_text(build):
    # name=5 reached a length test ("object of type 'int' has no len()"), name=0 built a fabric
    # named for its spec (``0 or spec``)
    import topologies
    args = {"torus": ((2, 2),), "mesh": ((2, 2),), "hypermesh": ((2, 2),), "fat_tree": (2,),
            "leaf_spine": (2,), "rail_optimized": (1,), "switched": (2,), "dragonfly": (1,)}
    for name in (5, 0):
        with pytest.raises(TypeError, match=rf"^name must be a str or None, got {name} \(an int\)$"):
            getattr(topologies, build)(*args[build], name=name)
    assert getattr(topologies, build)(*args[build], name="mine").name == "mine"


def test_records_and_lookups_refuse_a_wrong_kind_by_name():
    # each was an AttributeError, IndexError or "'int' object is not iterable" naming nothing,
    # or silently a wrong answer (link_name(-1) the last link, Failures(links=['ab']) the
    # pair ('a', 'b'))
    import fabric
    import topologies
    from fabric import Failures, Finding, SymmetricMemory, error_findings
    f = topologies.build("torus:2x2,chip=h100")
    cases = [
        (lambda: Failures(links=5), TypeError, r"^links must be a sequence of pairs, got 5"),
        (lambda: Failures(links=["ab"]), TypeError,
         r"^each of links must be a \(node, node\) pair, got 'ab' \(a str\)$"),
        (lambda: Failures(ranks=5), TypeError, r"^ranks must be a mapping, got 5 \(an int\)$"),
        (lambda: Failures(lanes=[(("a", "b"), 0)]), SpecError, r"^failed lanes must be an "),
        (lambda: f.router.link_name(-1), fabric.SpecError,     # (session 38: was NodeError)
         r"^k must be a link index in \[0, 8\) \(the router's directed links\), got k=-1$"),
        (lambda: f.router.link_name("x"), TypeError, r"^k must be a link index in \[0, 8\) "),
        (lambda: error_findings("x"), TypeError,
         r"^findings must be a sequence of Finding records, got 'x' \(a str\)$"),
        (lambda: error_findings([5]), TypeError, r"^each of findings must be a fabric.Finding"),
        (lambda: SymmetricMemory(None, f, None), TypeError,
         r"^address_map must be a fabric.AddressMap, got None \(a NoneType\)$"),
    ]
    for call, error, said in cases:
        with pytest.raises(error, match=said):
            call()
    x = Finding(code="overlap", severity="error", message="m", where="w")
    assert error_findings(iter([x])) == [x]
    assert Failures(links=[("a", "b")], lanes=[(("a", "c"), 2)]).lanes == ((("a", "c"), 2),)
    assert f.router.link_name(0) == ("chip0", "chip1")


def test_export_quotes_a_long_out_shortened(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    rc, _, err = run_cli(["export", "torus:2x2", "x" * 5000])      # was a 5 KB line
    assert rc == 2 and err.count("\n") == 1 and len(err) < 200, err
    assert "cannot tell the format of OUT 'xxx" in err and "(5002 characters)" in err


def test_a_refused_address_is_said_once():
    # "local address 'x' is refused: address 'x' is not a number" quoted it twice (a 5000-
    # character address twice shortened); now the argument's name and parse_address's sentence
    from fabric import AddressMapError
    from fabric._address import validate_address
    with pytest.raises(AddressMapError, match=r"^local address: address 'x' is not a number: "):
        validate_address("x", what="local address")
    rc, _, err = run_cli(["translate", "sd200-ultra", "--host", "host1", "0xZ"])
    assert rc == 2 and err.count("0xZ") == 1, err


def test_a_chips_own_messages_quote_its_name_shortened():
    import dataclasses

    from fabric import chip_spec
    h100 = chip_spec("h100")
    for kw in ({"hbm_bytes": -1}, {"tensor_flops": 5}, {"generation": "x"}):
        with pytest.raises((SpecError, TypeError)) as e:
            dataclasses.replace(h100, name="x" * 5000, **kw)       # were 5 KB lines
        assert len(str(e.value)) < 300 and "(5002 characters)" in str(e.value), str(e.value)
    with pytest.raises(SpecError, match=r"^hbm_bytes must be an integer >= 1 \(chip 'h100'\)"):
        dataclasses.replace(h100, hbm_bytes=0)                      # a short name as before


def test_an_owner_of_several_regions_none_its_own_is_said_one_way():
    # the default window's, the heap's and access's sentences were three (access named no
    # region; the heap's chip unquoted)
    import topologies
    from fabric import AddressPlan, GiB, Region, SymmetricHeap, access_to, check
    f = topologies.build("torus:2x2,chip=h100")
    base = f.address_map.region("chip3.hbm").base
    kept = [r for r in f.address_map.regions if r.owner != "chip3"]
    two = [Region(base=base + i * GiB, size=GiB, owner="chip3", kind="hbm", name=n)
           for i, n in enumerate(("c3a", "c3b"))]
    said = "'chip3' holds 2 HBM regions ('c3a' and 'c3b') and none is named 'chip3.hbm', so "
    for heap, default_windows in ((SymmetricHeap(size=GiB), True), (None, False)):
        g = f.replace(address_plan=AddressPlan(layout="explicit", regions=kept + two, heap=heap,
                                               default_windows=default_windows))
        found = [x.message for x in check(g) if x.code == "invalid"]
        assert len(found) == (2 if heap else 0) and all(said in m for m in found), found
    with pytest.raises(fabric.AddressMapError, match=re.escape(said) + "its memory is no one"):
        access_to(g, "chip0", "chip3")


def test_a_rank_range_running_backwards_is_quoted_shortened():
    rc, _, err = run_cli(["cost", "torus:2x2", "--op", "all-reduce", "--size", "1KiB",
                          "--ranks", "9" * 4000 + "-1"])         # was a 4 KB line
    assert rc == 2 and err.count("\n") == 1 and len(err) < 200, err[:300]
    assert "rank range '99999" in err and "(4004 characters) runs backwards" in err, err


def test_an_algorithm_or_axis_name_is_quoted_shortened():
    # register_algorithm and parameter_grid quoted a user's name whole (5 KB lines)
    for call in (lambda: analysis.register_algorithm("x" * 5000, None),
                 lambda: analysis.parameter_grid(**{"x" * 5000: []})):
        with pytest.raises(ValueError) as e:
            call()
        assert len(str(e.value)) < 150 and "(5002 characters)" in str(e.value), str(e.value)
