"""Session 35 (reader): the figure style's arguments are checked where they are given.

paper_style was a generator context manager, so ``paper_style(object())`` returned without a
word and its check ran only on entering the ``with`` block; a height of True drew 1-inch
figures, a str height failed on Python's ``'>' not supported``. style_path named an object's
repr as a style it could not find (a ValueError for a wrong kind); save_figure passed a None
or NUL path to Path() and open() (messages naming no argument), drew at the default dpi when
given 0 and at 1 dpi when given True, and read ``fig=None`` as an AttributeError.

A system file's value of the wrong kind said its key and value twice ('layout = 5: layout must
be a str, got 5 (an int)'): the reader's 'key = value: ' prefix before kind_error's sentence,
which names both; a size of the wrong kind named 'size' where the key was page_size, and a TOML
date had a sentence of its own. Now kind_error's sentence alone, with the kind the key takes.

The unit parsers' five remaining echoes of the text went through show_value (a 3 KB line
each), and parse_address names a wrong kind by kind_error (numpy's True was address 1).
"""

import re

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pytest

import fabric
import topologies
from analysis import paper_style, save_figure, style_path


class Odd:
    pass


@pytest.mark.parametrize("call, error, match", [
    (lambda: paper_style(Odd()), TypeError, r"^column must be a str, got <.*Odd object"),
    (lambda: paper_style(["single"]), TypeError, r"^column must be a str, got \['single'\]"),
    (lambda: paper_style(height=True), TypeError,
     r"^height must be a finite number > 0 inches, got height=True \(a bool\)$"),
    (lambda: paper_style(height="3"), TypeError, r"got height='3' \(a str\)$"),
    (lambda: paper_style(height=float("inf")), ValueError, r"got height=inf$"),
    (lambda: style_path(Odd()), TypeError, r"^style name must be a str, got <.*Odd object"),
    (lambda: style_path(None), TypeError, r"^style name must be a str, got None"),
], ids=["column-object", "column-list", "height-bool", "height-str", "height-inf",
        "style-object", "style-none"])
def test_style_arguments_are_refused_when_given(call, error, match):
    with pytest.raises(error, match=match):
        call()      # no `with`: the call itself refuses them


@pytest.fixture
def fig():
    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1])
    yield fig
    plt.close(fig)


@pytest.mark.parametrize("kwargs, error, match", [
    ({"path_stem": None}, TypeError, r"^path_stem must be a file name .* got None"),
    ({"path_stem": "a\0b"}, ValueError, r"^path_stem 'a\\x00b': no file is named with a NUL"),
    ({"dpi": True}, TypeError, r"^dpi must be a finite number > 0, got dpi=True \(a bool\)$"),
    ({"dpi": 0}, ValueError, r"^dpi must be a finite number > 0, got dpi=0$"),
    ({"formats": 5}, TypeError,
     r"^formats must be a format's name or a sequence of them, got 5 \(an int\)$"),
    ({"formats": [["png"]]}, TypeError, r"^each format must be a str, got \['png'\]"),
    ({"fig": None}, TypeError, r"^fig must be a matplotlib Figure, got None"),
], ids=["path-none", "path-nul", "dpi-bool", "dpi-zero", "formats-int", "formats-list",
        "fig-none"])
def test_save_figure_names_a_bad_argument(fig, tmp_path, monkeypatch, kwargs, error, match):
    monkeypatch.chdir(tmp_path)
    args = {"fig": fig, "path_stem": tmp_path / "f", "formats": ("png",)} | kwargs
    with pytest.raises(error, match=match):
        save_figure(args.pop("fig"), args.pop("path_stem"), **args)
    assert not list(tmp_path.iterdir())     # nothing written: not ./None, not a 0-dpi default


_HEAD = '[system]\ntopology = "dgx-h100"\n'
_WINDOW = '[[windows]]\nhost = "host0"\nlocal_base = 0\nsize = "1GiB"\nglobal_base = 0\n'


@pytest.mark.parametrize("text, said", [
    ("[address]\nlayout = 5\n", "layout must be a str, got 5 (an int)"),
    ("[address]\ndefault_windows = 'yes'\n",
     "default_windows must be true or false, got 'yes' (a str)"),
    (_WINDOW + "page_size = true\n",
     "page_size must be an integer or a string such as '16PiB', got True (a bool)"),
    ("[address]\nhost_memory = 07:32:00\n",
     ("host_memory must be an integer or a string such as '16PiB', got datetime.time(7, 32) "
      "(a time)")),
    ("[[regions]]\nname = 'r'\nowner = ['chip0']\nbase = 0\nsize = '1GiB'\n",
     "owner must be a str, got ['chip0'] (a list)"),
    ("[[regions]]\nname = 'r'\nowner = 'chip0'\nbase = [0]\nsize = '1GiB'\n",
     "base must be an integer or a string such as '0x4000_0000', got [0] (a list)"),
], ids=["str", "bool", "size", "time", "owner", "address"])
def test_system_file_wrong_kind_says_key_and_value_once(text, said):
    findings = topologies.read_system(_HEAD + text).findings
    assert [f.message for f in findings] == [said]


_LONG = "1" * 3000


@pytest.mark.parametrize("call, match", [
    (lambda: fabric.parse_size(_LONG + "b"),
     r"^cannot read size '1{39}\.\.\. \(3003 characters\): a size is in bytes \(B\), not bits"),
    (lambda: fabric.parse_size("0." + _LONG + "B"),
     r"^size '0\.1{37}\.\.\. \(3005 characters\) is not a whole number of bytes$"),
    (lambda: fabric.parse_bandwidth(_LONG + "GB"), r"\(3004 characters\): the unit must end in"),
    (lambda: fabric.parse_bandwidth(_LONG + "/s"), r"\(3004 characters\): say B/s or b/s$"),
    (lambda: fabric.parse_time(_LONG + "xs"), r"\(3004 characters\): unit must be one of"),
], ids=["size-bits", "size-fraction", "bandwidth-unit", "bandwidth-bare", "time-unit"])
def test_unit_parsers_shorten_a_long_text(call, match):
    # these five echoed the text whole (a 3 KB line), as session 34 shortened every other
    with pytest.raises(fabric.SpecError, match=match):
        call()


@pytest.mark.parametrize("value, shown", [
    (True, r"True \(a bool\)"), (np.True_, r"(np\.True_|True) \(a bool_?\)"),  # numpy 2 | 1
    ([1], r"\[1\] \(a list\)"),
    (None, r"None \(a NoneType\)")])
def test_parse_address_names_a_wrong_kind(value, shown):
    # a bool was 'got a bool' (no value), a list 'got [1]' (no kind); numpy's True was read
    # as address 1 (numpy bools are flags: the lead's rule)
    with pytest.raises(TypeError, match=r"^address must be an integer or text such as "
                                        rf"'0x4000_0000', got {shown}$"):
        fabric.parse_address(value)


@pytest.mark.parametrize("call, match", [
    (lambda: fabric.format_address(True),
     r"^format_address: address must be an integer, got True \(a bool\)$"),
    (lambda: fabric.format_address(1.5),
     r"^format_address: address must be an integer, got 1\.5 \(a float\)$"),
    (lambda: fabric.format_size(10**6, binary="no"),
     r"^format_size: binary must be True, False or None, got 'no' \(a str\)$"),
], ids=["address-bool", "address-float", "binary-str"])
def test_formatters_name_a_wrong_kind(call, match):
    # format_address(True) printed '0x1', 1.5 raised Python's "Unknown format code 'x'";
    # format_size(binary='no') wrote binary prefixes (read by identity, not as a flag)
    with pytest.raises(TypeError, match=match):
        call()


@pytest.mark.parametrize("spec", [5, None, ["torus:4x4"]], ids=["int", "none", "list"])
def test_build_names_what_a_spec_may_be(spec):
    # was parse_spec's 'a spec must be a str': build takes a fabric.Fabric too
    with pytest.raises(TypeError, match=r"^spec must be a str \(a spec or a preset's name\) or "
                                        r"a fabric\.Fabric, got "):
        topologies.build(spec)


def test_grouped_gemm_rate_reads_its_chip():
    # a ChipSpec or a misspelt name was 'none published' (None), silently: the decode step
    # would then price the experts by the roofline instead of the measured rate
    import analysis

    assert analysis.grouped_gemm_rate(fabric.chip_spec("b200"), "fp4", 96) == \
        analysis.grouped_gemm_rate("b200", "fp4", 96) > 0
    with pytest.raises(fabric.SpecError, match="^unknown chip 'b2000'"):
        analysis.grouped_gemm_rate("b2000", "fp4", 96)


@pytest.mark.parametrize("where, hot, match", [
    (16, [0, True], r"^hot\[1\] must be a rank \(an integer\), got True \(a bool\)$"),
    (16, [[1, 2]], r"^hot\[0\] must be a rank \(an integer\), got \[1, 2\] \(a list\)$"),
    (16, 1.5, r"^hot must be a rank \(an integer\), or a sequence of them, got 1\.5"),
    (16, ["chip2"], r"^hot\[0\] must be a rank \(an integer\), got 'chip2' \(a str\)$"),
    ("torus:4x4", [0, np.True_], r"^hot\[1\] must be a rank \(an integer\) or a chip's name, "),
    ("torus:4x4", np.array([1.0]), r"^hot\[0\] must be a rank \(an integer\) or a chip's name, "),
], ids=["bool-in-list", "nested", "float", "name-without-fabric", "numpy-bool", "float-array"])
def test_hot_of_the_wrong_kind_is_a_type_error(where, hot, match):
    # review S35-R1: a wrong kind was a NodeError, and [0, True] / [[1, 2]] with n ranks were
    # read as ranks 0 and 1 (numpy's asarray) without a word
    import analysis

    base = where if isinstance(where, int) else topologies.build(where)
    with pytest.raises(TypeError, match=match):
        analysis.traffic(base, "hotspot", hot=hot)


def test_hot_out_of_range_is_quoted_shortened():
    import analysis

    with pytest.raises(fabric.NodeError, match=r"^hot ranks must lie in 0\.\.15, got \[100, 101, "
                                               r".*\.\.\. \(\d+ characters\)$"):
        analysis.traffic(16, "hotspot", hot=list(range(100, 1100)))


@pytest.mark.parametrize("call", [
    lambda s: __import__("analysis").metrics(s),
    lambda s: __import__("analysis").cost(s, "all-reduce", 1024),
    lambda s: __import__("analysis").link_loads(s, __import__("analysis").traffic(4, "shift")),
    lambda s: __import__("analysis").bill_of_materials(s),
    lambda s: __import__("analysis").peer_round_trip(s),
    lambda s: fabric.access_to(s, 0, 1),
    lambda s: fabric.rack_chips(s),
    lambda s: __import__("analysis").export_graph(s, "nothing-written.json"),
], ids=["metrics", "cost", "link_loads", "bill_of_materials", "peer_round_trip",
        "access_to", "rack_chips", "export_graph"])
def test_a_spec_where_a_fabric_is_due_says_what_builds_it(call, tmp_path, monkeypatch):
    # analysis.metrics('torus:4x4') raised "'str' object has no attribute 'graph'" (audit
    # 17:45); rack_chips('dgx-h100') gave the book's 72 chips a rack, not the preset's 32;
    # export_graph(spec, 'x.json') wrote an empty file, then failed
    monkeypatch.chdir(tmp_path)
    with pytest.raises(TypeError, match=r"must be a fabric\.Fabric \(topologies\.build makes "
                                        r"one from a spec or a preset's name\), got 'dgx-h100'"):
        call("dgx-h100")
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("name", ["x" * 5000, "../styles/paper"], ids=["long", "path"])
def test_style_path_matches_names_not_paths(name):
    # a 5000-character name was the OS's 'File name too long' naming the checkout (audit
    # 17:45); a name with a directory in it was joined to the path and could reach a file
    with pytest.raises(ValueError, match=r"^no figure style called ('x{39}\.\.\. \(5002 "
                                         r"characters\)|'\.\./styles/paper'): looked in"):
        style_path(name)


@pytest.mark.parametrize("where, hot, said", [
    (16, [1, 1], "hot lists 1 twice; each hot rank takes its share once"),
    ("torus:4x4", ["chip1", 1], "hot lists 'chip1' twice (as 'chip1' and 1); each hot rank"),
], ids=["n", "name-and-rank"])
def test_a_hot_rank_given_twice_is_refused(where, hot, said):
    # audit 17:52, a silent wrong: hot=[1, 1] wrote cell 1 twice while the share was split in
    # two, so every source lost a quarter of its bytes (the matrix summed to 12.25, not 16)
    import analysis

    base = where if isinstance(where, int) else topologies.build(where)
    with pytest.raises(fabric.NodeError, match="^" + re.escape(said)):
        analysis.traffic(base, "hotspot", 1.0, hot=hot)
    assert analysis.traffic(base, "hotspot", 1.0, hot=[1, 2]).dense().sum() == 16.0


def test_a_mapping_is_no_hot_list():
    # review's nit: hot={1: 2} was read as [1], its keys
    import analysis

    with pytest.raises(TypeError, match=r"^hot must be a rank \(an integer\), or a sequence of "
                                        r"them, got \{1: 2\} \(a dict\)$"):
        analysis.traffic(16, "hotspot", 1.0, hot={1: 2})
