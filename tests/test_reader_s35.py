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
"""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pytest

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
