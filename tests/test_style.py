"""The paper style and the reproducible save helper."""

import configparser
import hashlib
import sys
import textwrap
from pathlib import Path

import matplotlib
import pytest
from hashseed import run_together

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from analysis import COLUMN_SIZES, FIGURE_FORMATS, paper_style, save_figure, style_path

ROOT = Path(__file__).resolve().parent.parent


def test_style_file_is_the_one_in_figures_styles():
    # In a source checkout the style is found in figures/styles; installed, in analysis/styles.
    path = style_path()
    assert path.name == "paper.mplstyle"
    assert path.read_bytes() == (ROOT / "figures" / "styles" / "paper.mplstyle").read_bytes()


def test_setup_cfg_ships_the_style_from_figures_styles():
    cfg = configparser.ConfigParser()
    cfg.read(ROOT / "setup.cfg")
    assert "analysis.styles" in [p.strip() for p in cfg["options"]["packages"].split(",")]
    assert "analysis.styles = figures/styles" in cfg["options"]["package_dir"]
    assert cfg["options.package_data"]["analysis.styles"].strip() == "*.mplstyle"


@pytest.mark.parametrize("column", ["single", "double"])
def test_paper_style_sets_size_and_restores(column):
    before = dict(matplotlib.rcParams)
    with paper_style(column):
        assert tuple(matplotlib.rcParams["figure.figsize"]) == COLUMN_SIZES[column]
        assert matplotlib.rcParams["text.usetex"] is False
        assert matplotlib.rcParams["font.size"] == 8
        colors = matplotlib.rcParams["axes.prop_cycle"].by_key()["color"]
        assert colors[:3] == ["#0072B2", "#D55E00", "#009E73"]  # Okabe-Ito
    assert dict(matplotlib.rcParams) == before


def test_paper_style_restores_after_an_exception():
    before = matplotlib.rcParams["font.size"]
    with pytest.raises(RuntimeError), paper_style():
        raise RuntimeError("boom")
    assert matplotlib.rcParams["font.size"] == before


@pytest.mark.parametrize("kwargs, match", [
    ({"column": "triple"}, "column must be one of"),
    ({"height": 0}, "height must be a finite number > 0 inches"),
])
def test_paper_style_rejects_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match), paper_style(**kwargs):
        pass


def test_style_path_unknown_name():
    with pytest.raises(ValueError, match="no figure style called 'nope'"):
        style_path("nope")


def test_save_figure_writes_each_format(tmp_path):
    fig, ax = plt.subplots()
    ax.plot([1, 2], [3, 4])
    paths = save_figure(fig, tmp_path / "sub" / "fig")
    assert [p.name for p in paths] == ["fig.pdf", "fig.svg", "fig.png"]
    assert paths[0].read_bytes().startswith(b"%PDF")
    assert b"<svg" in paths[1].read_bytes()
    assert paths[2].read_bytes().startswith(b"\x89PNG")


@pytest.mark.parametrize("formats", [(), ("jpg",), ("pdf", "eps")])
def test_save_figure_rejects_unknown_formats(tmp_path, formats):
    fig, _ = plt.subplots()
    # the first unknown one is named (was "formats must be a non-empty subset of (...)")
    with pytest.raises(ValueError, match="^formats must name one or more of pdf, svg, png, "
                                         "got formats=\\(\\)$" if not formats else
                                         "^each format must be one of pdf, svg, png, got '"):
        save_figure(fig, tmp_path / "f", formats=formats)


def test_saved_files_carry_no_date_or_version(tmp_path):
    fig, ax = plt.subplots()
    ax.plot([1, 2], [3, 4])
    pdf, svg, png = (p.read_bytes() for p in save_figure(fig, tmp_path / "f"))
    assert b"CreationDate" not in pdf and b"Matplotlib" not in pdf
    assert b"<dc:date>" not in svg and matplotlib.__version__.encode() not in svg
    assert b"tEXt" not in png and b"tIME" not in png


_SCRIPT = textwrap.dedent("""
    import sys
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np
    from analysis import paper_style, save_figure
    with paper_style("single"):
        fig, ax = plt.subplots()
        x = np.linspace(0, 1, 50)
        ax.plot(x, x ** 2, label="a")
        ax.scatter(x, np.sqrt(x), label="b")
        ax.legend(title="legend")
        ax.set_xlabel("size (B)")
        save_figure(fig, sys.argv[1])
""")


def _digests(stem):
    return {p.suffix: hashlib.sha256(p.read_bytes()).hexdigest()
            for p in stem.parent.glob(stem.name + ".*")}


def test_two_runs_give_identical_bytes(tmp_path):
    # Separate processes: a per-process random SVG salt or a timestamp would show up here.
    stems = [tmp_path / run / "fig" for run in ("a", "b")]
    for p in run_together([[sys.executable, "-c", _SCRIPT, str(stem)] for stem in stems]):
        assert p.returncode == 0, p.stderr
    digests = [_digests(stem) for stem in stems]
    assert set(digests[0]) == {".pdf", ".svg", ".png"}
    assert digests[0] == digests[1]


def test_save_figure_keeps_the_layout_engine(tmp_path):
    with paper_style():
        fig, ax = plt.subplots()
    ax.plot([1, 2], [3, 4])
    engine = fig.get_layout_engine()
    assert engine is not None  # the style turns constrained layout on
    save_figure(fig, tmp_path / "f")
    assert fig.get_layout_engine() is engine


def test_save_figure_draws_once_per_format_after_one_layout(tmp_path, monkeypatch):
    # Issue 16: savefig drew each file twice (a layout pass, then the file); the layout is
    # solved once for all formats, then each format draws once.
    from matplotlib.figure import Figure

    draws = []
    original = Figure.draw
    monkeypatch.setattr(Figure, "draw", lambda self, r: (draws.append(1), original(self, r)))
    with paper_style("single"):
        fig = Figure()
        fig.subplots().plot([0, 1], [1, 0])
        save_figure(fig, tmp_path / "f")
        assert fig.get_layout_engine() is not None   # restored
    assert len(draws) == len(FIGURE_FORMATS) + 1
