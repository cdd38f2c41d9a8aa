"""``cofabric report`` draws each section's figures as soon as the section is built (on its
process pool), not after the whole build: the build (~23 s CPU, serial) and the drawing
(~28 s CPU) overlap. ``--jobs 1`` draws them after the build in this process, as before; the
files are the same (test_report.py checks ``--jobs 2`` against the serial small report byte
for byte; here a three-section report, jobs 1 against 2). Nothing is left beside the report,
however the run ends."""

import hashlib

import pytest

import analysis
import analysis._report as report_module
from analysis._cli import main
from analysis._report_render import FigureDrawing

SECTIONS = ("structure", "latency", "topology")


def _digests(d):
    return {str(p.relative_to(d)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(d.rglob("*")) if p.is_file()}


def test_on_section_sees_each_section_as_it_is_built():
    seen = []
    r = analysis.build_report(["torus:3x3"], sections=SECTIONS, quiet=True,
                              on_section=seen.append)
    assert [s.key for s in seen] == [s.key for s in r.sections]
    assert all(a is b for a, b in zip(seen, r.sections))


@pytest.fixture
def small_cli(monkeypatch):
    """The CLI's report of torus:3x3 with three sections; records how many figures had
    started drawing when the last section began to build."""
    build, topology = analysis.build_report, report_module.topology_section
    started, at_topology = [], []

    def section(self, s, _orig=FigureDrawing.section):
        started.extend(f.name for f in s.figures)
        return _orig(self, s)

    def topology_section(fabrics):
        at_topology.append(len(started))
        return topology(fabrics)

    monkeypatch.setattr(analysis, "build_report",
                        lambda *a, **k: build(*a, sections=SECTIONS, **k))
    monkeypatch.setattr(report_module, "topology_section", topology_section)
    monkeypatch.setattr(FigureDrawing, "section", section)
    return started, at_topology


def test_figures_start_drawing_while_the_report_builds(small_cli, tmp_path):
    started, at_topology = small_cli
    out1, out2 = tmp_path / "serial", tmp_path / "pooled"
    assert main(["report", "torus:3x3", "--out", str(out1), "--quiet", "--jobs", "1"]) == 0
    assert started == [] and at_topology == [0]           # serial: drawn after the build
    assert main(["report", "torus:3x3", "--out", str(out2), "--quiet", "--jobs", "2"]) == 0
    # the latency figure was drawing before the topology section was built
    assert at_topology[1] >= 1 and "latency" in started[:at_topology[1]]
    assert _digests(out1) == _digests(out2)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pooled", "serial"]


def test_a_failed_build_leaves_nothing_beside_the_report(small_cli, tmp_path, monkeypatch,
                                                          capsys):
    def broken(fabrics):
        raise RuntimeError("topology broke")

    monkeypatch.setattr(report_module, "topology_section", broken)
    assert main(["report", "torus:3x3", "--out", str(tmp_path / "r"), "--quiet",
                 "--jobs", "2"]) != 0
    assert "topology broke" in capsys.readouterr().err
    started, _ = small_cli
    assert "latency" in started                      # figures were drawing when it failed
    assert list(tmp_path.iterdir()) == []
