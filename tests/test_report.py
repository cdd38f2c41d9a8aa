"""The comparison report: content from the numbers, files, safety, determinism, CLI."""

import csv
import hashlib
import html
import re

import matplotlib

matplotlib.use("Agg")
import pytest
from report_inputs import CLI, COMMAND, OPS, SMALL  # small_report's inputs (conftest.py)

import analysis
import fabric
import topologies
from analysis import build_report, check_report_dir, write_figures, write_report
from analysis._cli import main
from analysis._report_render import findings_as_shown


@pytest.fixture(scope="module")
def tiny_report():
    """One section, one figure: for the tests of writing, not of content."""
    return build_report(["torus:4x4"], sections=("structure",), quiet=True)


def _digests(root):
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def test_findings_state_the_computed_numbers(small_report):
    m = {s: analysis.metrics(topologies.build(s)) for s in SMALL}
    first = small_report.findings[0]
    assert f"at most {m['torus:3x3x3'].diameter} hops" in first
    assert f"({m['torus:3x3x3'].avg_hops:.2f} on average)" in first
    assert f"up to {m['fattree:k=4'].diameter} ({m['fattree:k=4'].avg_hops:.2f}" in first
    bis = small_report.findings[1]
    a = m["torus:3x3x3"].bisection_bandwidth / 27
    b = m["fattree:k=4"].bisection_bandwidth / 16
    assert f"{max(a, b) / min(a, b):.2g}x" in bis


def test_summary_rows_are_the_metrics(small_report):
    summary = next(t for t in small_report.tables if t.name == "summary")
    assert [r["system"] for r in summary.rows] == list(SMALL)
    for row in summary.rows:
        m = analysis.metrics(topologies.build(row["system"]))
        assert row["diameter_hops"] == m.diameter
        assert row["bisection_bandwidth_Bps"] == m.bisection_bandwidth
        assert row["links"] == m.links


def test_assumptions_list_every_parameter_of_every_system(small_report_dir):
    with open(small_report_dir / "assumptions.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    import fabric

    # the fabrics' own parameters, plus the transports the latency section used: load/store,
    # and RDMA where load/store does not reach every chip (the fat-tree's InfiniBand links
    # carry messages only: fabric.reach)
    def transports(f):
        names = ("loadstore",) if fabric.reach(f, 0, f.n_endpoints - 1) == "loadstore" \
            else ("loadstore", "rdma")
        return sum(len(fabric.transport(t).parameters()) for t in names)

    # and the cost book and chip power the cost section used
    cost = len(analysis.bill_of_materials(topologies.build(SMALL[0])).parameters)
    expected = sum(len(topologies.build(s).assumptions) + transports(topologies.build(s)) + cost
                   for s in SMALL)
    assert len(rows) == expected
    assert {r["parameter"] for r in rows} >= {"loadstore.requester_translation",
                                              "loadstore.responder_check"}
    assert set(rows[0]) == {"system", "parameter", "value", "unit", "source"}
    assert all(r["source"] for r in rows)


def test_every_file_is_written(small_report, small_report_dir):
    names = {p.name for p in small_report_dir.iterdir()}
    assert {"index.html", "report.md", "summary.csv", "assumptions.csv", "figures"} <= names
    for fig in small_report.figures:
        for ext in ("pdf", "svg", "png"):
            assert (small_report_dir / "figures" / f"{fig.name}.{ext}").stat().st_size > 0
        assert f"(figures/{fig.name}.svg)" in (small_report_dir / "report.md").read_text()


def test_html_is_self_contained_with_every_figure_inline(small_report, small_report_dir):
    text = (small_report_dir / "index.html").read_text()
    assert text.count("<svg") == len(small_report.figures)
    # No network: no scripts, stylesheets, images or fonts fetched from anywhere.
    assert not re.search(r"<script|<link|<img|<iframe|@import|url\(\s*['\"]?http", text)
    hrefs = re.findall(r'href="([^"#][^"]*)"', text)
    assert all(not h.startswith(("http:", "https:", "//")) for h in hrefs)
    ids = re.findall(r'\bid="([^"]+)"', text)
    assert len(ids) == len(set(ids)), "element ids must be unique across inline SVGs"
    # every finding on the page: each sentence, and an assumption clause that every
    # sentence of its group shares (session 19), or the trailing assumptions the clauses
    # share (session 20), said once under the group
    for _, group in small_report.finding_groups:
        sentences, note = findings_as_shown(group)
        for finding in sentences:
            assert html.escape(finding) in text
        if note:
            assert text.count(f'<p class="assumes">{html.escape(note)}</p>') >= 1


def test_writing_twice_gives_identical_bytes(tmp_path):
    rep = build_report(["torus:4x4x2"], sections=("structure", "latency"), quiet=True)
    write_report(rep, tmp_path / "a", quiet=True)
    write_report(build_report(["torus:4x4x2"], sections=("structure", "latency"), quiet=True),
                 tmp_path / "b", quiet=True)
    digests = _digests(tmp_path / "a")
    assert len(digests) > 8 and digests == _digests(tmp_path / "b")


def test_refuses_to_overwrite_without_force(tiny_report, tmp_path):
    out = tmp_path / "r"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    with pytest.raises(FileExistsError, match="pass force=True to replace it"):
        write_report(tiny_report, out, quiet=True)
    assert (out / "keep.txt").read_text() == "mine"
    write_report(tiny_report, out, force=True, quiet=True)
    assert not (out / "keep.txt").exists() and (out / "index.html").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r"]


def test_a_failure_leaves_nothing_behind(tiny_report, tmp_path):
    small_report = tiny_report
    def boom():
        raise RuntimeError("drawing failed")

    broken = small_report.figures[0].__class__(name="x", title="x", caption="", draw=boom)
    sections = small_report.sections[:1] + (
        small_report.sections[0].__class__(key="b", title="b", figures=(broken,)),)
    bad = small_report.__class__(small_report.systems, (), sections, "cmd")
    with pytest.raises(RuntimeError, match="drawing failed"):
        write_report(bad, tmp_path / "r", quiet=True)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("make, exc", [
    (lambda p: p / "missing" / "r", FileNotFoundError),
    (lambda p: (p / "file").write_text("x") and p / "file", FileExistsError),
])
def test_check_report_dir_rejects_bad_targets(tmp_path, make, exc):
    with pytest.raises(exc):
        check_report_dir(make(tmp_path))


@pytest.mark.parametrize("kwargs, match", [
    ({"systems": ["warp:9"]}, "unknown topology family"),
    ({"systems": []}, "at least one system"),
    ({"systems": ["torus:3x3", "torus:3x3"]}, "distinct"),
    ({"systems": ["torus:3x3"], "sections": ["gossip"]}, "unknown report section"),
])
def test_build_report_rejects_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        build_report(quiet=True, **kwargs)


def test_cli_report_writes_and_refuses(tmp_path, capsys, small_report_dir):
    out = tmp_path / "rep"
    out.mkdir()
    (out / "old.txt").write_text("x")
    args = ["report", *CLI, "--out", str(out), "--quiet"]
    assert main(args) == 2                          # a directory that holds files: refused
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--force" in err
    # in two processes: the same files (and nothing else) as the small report written
    # serially in this process (conftest.py: the same inputs and command)
    assert main([*args, "--force", "--jobs", "2"]) == 0
    assert capsys.readouterr().out.strip() == str(out / "index.html")
    assert _digests(out) == _digests(small_report_dir)
    assert main(args) == 2                          # the report it wrote: refused too
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--force" in err
    assert COMMAND in (out / "index.html").read_text()
    assert COMMAND == ("cofabric report torus:3x3x3 fattree:k=4 --sizes 1KiB:1MiB:x32 "
                       "--ops all-reduce")


@pytest.mark.parametrize("argv, match", [
    (["report", "nope:3"], "unknown topology family"),
    (["report", "torus:3x3", "--jobs", "0"], "--jobs must be"),
    (["report", "torus:3x3", "--out", "/nonexistent-dir/x"], "does not exist"),
    (["report", "torus:3x3", "--ops", "all-reduce", "gossip"], "unknown collective operation"),
    (["report", "torus:3x3", "--ops", "all-to-allv"], "needs a traffic matrix"),
    (["report", "torus:3x3", "--sizes", "12 parsecs"], "cannot read size"),
    (["report", "torus:3x3", "--sizes", "1MiB:1KiB:x2"], "STOP is below START"),
    (["report", "torus:3x3", "--sizes", "1KiB:1MiB:x1"], "factor must be > 1"),
    (["report", "torus:3x3", "--sizes", "0"], "must be > 0"),
])
def test_cli_bad_input_is_one_line_exit_2(argv, match, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(argv + ["--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and match in err
    assert list(tmp_path.iterdir()) == []


def test_figures_command_is_deterministic(tmp_path):
    names = ("latency",)
    a = write_figures(tmp_path / "a", names, quiet=True)
    write_figures(tmp_path / "b", names, quiet=True)
    assert len(a) == 3 * len(names)
    assert _digests(tmp_path / "a") == _digests(tmp_path / "b")


def test_committed_readme_figures_are_listed():
    from pathlib import Path

    figures = Path(__file__).resolve().parent.parent / "figures"
    for name in analysis.README_FIGURES:
        for ext in ("pdf", "svg", "png"):
            assert (figures / f"{name}.{ext}").is_file(), f"run `cofabric figures`: {name}.{ext}"


@pytest.mark.parametrize("text, sizes", [
    (["1KiB:8KiB:x2"], [1024, 2048, 4096, 8192]),
    (["1KiB:4KiB:+1KiB", "1KiB"], [1024, 2048, 3072, 4096]),
    ("64", [64]),
])
def test_parse_sizes(text, sizes):
    assert analysis.parse_sizes(text) == sizes


def _brute_all_to_all(name):
    """All-to-all drain time by routing each pair's path(s) one at a time (independent of
    the batched computation the report uses)."""
    import numpy as np

    f = topologies.build(name)
    r = f.router
    total = np.zeros(r.n_links)
    ep = f.endpoint_indices
    for s in ep:
        for d in ep:
            if s != d:
                total += r.loads(np.array([s]), np.array([d]), 1.0)
    return (len(ep) - 1) / float((total / r.link_bandwidth).max())


@pytest.mark.parametrize("name", ["torus:3x3x3", "fattree:k=4"])
def test_all_to_all_throughput_matches_pair_by_pair_routing(small_report, name):
    table = next(t for t in small_report.tables if t.name == "all_to_all")
    row = next(r for r in table.rows if r["system"] == name)
    assert row["a2a_throughput_per_chip_Bps"] == pytest.approx(_brute_all_to_all(name), rel=1e-12)


def test_torus_all_to_all_meets_the_bisection_bound(small_report):
    # Uniform all-to-all on a k-ary n-cube is bisection bound (docs/sources.md s.4): half the
    # chips send N/2 bytes each across the cut of 2 k^(n-1) links per direction.
    table = next(t for t in small_report.tables if t.name == "all_to_all")
    row = next(r for r in table.rows if r["system"] == "torus:3x3x3")
    # 3x3x3 has odd k: no exact bisection; check instead against 4x4x4 below.
    assert row["a2a_throughput_per_chip_Bps"] > 0
    rep = build_report(["torus:4x4x4"], sections=("utilization",), quiet=True)
    got = rep.tables[0].rows[0]["a2a_throughput_per_chip_Bps"]
    f = topologies.build("torus:4x4x4")
    bw = f.graph.edges["chip0", "chip1"]["bandwidth"]
    n, cut = 64, 2 * 4 ** 2
    # bytes per pair = 1: (n/2)*(n/2) bytes cross each way over `cut` links
    bound = (n - 1) / ((n / 2) * (n / 2) / (cut * bw))
    assert got == pytest.approx(bound, rel=1e-9)


def test_failure_rows_compare_like_with_like(small_report):
    table = next(t for t in small_report.tables if t.name == "failures")
    fat = [r for r in table.rows if r["system"] == "fattree:k=4"]
    chip = next(r for r in fat if r["failure"] == "one chip" and r["metric"] == "all-to-all time")
    # On a fat-tree chips do not forward: losing one changes nothing for the others.
    assert chip["change"] == pytest.approx(0.0, abs=1e-9)
    link = next(r for r in fat if r["failure"] == "one link" and r["metric"] == "all-to-all time")
    assert link["degraded"] >= link["healthy"]
    assert {r["failure"] for r in table.rows} == {"one link", "one chip"}


def test_latency_rows_match_hand_calculation():
    import fabric

    rep = build_report(["sd200-ultra", "cluster-128"], sections=("latency",), quiet=True)
    rows = {(r["system"], r["op"]): r for r in rep.tables[0].rows}
    # sd200-ultra worst store: 20 ns translation + 3 x 230 ns + (64+16) B / 64 GB/s + 10 ns check
    assert rows["sd200-ultra", "store"]["max_s"] == pytest.approx(
        20e-9 + 3 * 230e-9 + 80 / 64e9 + 10e-9, rel=1e-12)
    # cluster-128: inside a server load/store through NVSwitch (2 x 150 ns, 450 GB/s) ...
    assert rows["cluster-128", "store"]["min_s"] == pytest.approx(
        20e-9 + 2 * 150e-9 + 80 / 450e9 + 10e-9, rel=1e-12)
    # ... and RDMA across servers: the slowest pair is what fabric.access gives for it
    f = topologies.build("cluster-128")
    far = fabric.access(f, "chip0", f.address_map.global_address("chip127", 0), op="store",
                        size=64, transport="rdma")
    assert rows["cluster-128", "store"]["max_s"] == pytest.approx(far.total, rel=1e-12)
    assert rows["cluster-128", "store"]["transport"] == "load/store in a host, RDMA across hosts"
    assert all(r["pairs"] == 128 * 127 for r in rows.values())


def test_decode_section_is_the_decode_model():
    rep = build_report(["sd200-ultra", "tpu-v4-cube"], sections=("decode",), quiet=True)
    section = rep.sections[0]
    rows = {(r["model"], r["system"]): r for r in section.tables[0].rows}
    # sd200-ultra is one load/store domain: one-sided exchange kernels, CUDA graphs
    step = analysis.decode_step(analysis.model_config("kimi-k2"),
                                topologies.build("sd200-ultra"), batch=1, context=4096,
                                ep_kernel="one-sided", cuda_graphs=True)
    row = rows["kimi-k2", "sd200-ultra"]
    assert row["time_s"] == step.time
    assert row["ep_kernel"] == "one-sided" and rows["kimi-k2", "tpu-v4-cube"]["ep_kernel"]
    parts = sum(row[f"{k}_s"] for k in ("attention", "ffn", "head", "exposed_comm", "launch"))
    assert parts == pytest.approx(row["time_s"], rel=1e-12)
    # 2.8T of weights do not fit 64 x 32 GiB: left out, and the report says why
    assert ("hypothetical-2.8t", "tpu-v4-cube") not in rows
    assert any("hypothetical-2.8t on tpu-v4-cube" in t and "HBM" in t for t in section.text)
    (assumptions,) = [t for t in rep.tables if t.name == "assumptions"]
    params = {r["parameter"] for r in assumptions.csv_rows if r["system"] == "sd200-ultra"}
    assert {p.name for p in step.parameters} <= params
    # the tornado: one parameter at a time around one base step, at the best layout of the
    # tensor-parallel search (at tp=1 the fabric what-ifs would reach no TP collective)
    best, _ = analysis.best_decode_layout("kimi-k2", topologies.build("sd200-ultra"), batch=1,
                                          context=4096, ep_kernel="one-sided",
                                          cuda_graphs=True)
    sens = {r["parameter"]: r for r in section.tables[1].rows}
    assert {r["layout"] for r in sens.values()} == {str(best.layout)}
    assert str(best.layout) in section.tables[1].title
    assert str(best.layout) in section.figures[1].caption
    assert sens["kernel fusion factor"]["value_low"] == best.time  # fusion 1 is the base
    assert sens["kernel fusion factor"]["value_high"] < best.time
    assert sens["HBM bandwidth"]["value_low"] > best.time > sens["HBM bandwidth"]["value_high"]
    assert any("most sensitive to" in f for f in rep.findings)
    # the prose follows the decode model's Parameters (value and source), not a stale copy
    text = " ".join(section.text)
    g, h = analysis.GRAPH_KERNEL_OVERHEAD, analysis.DECODE_HBM_EFFICIENCY
    assert f"{fabric.format_time(g.value)} [{g.source.split(':')[0]}]" in text
    assert f"{h.value:.0%} [{h.source.split(':')[0]}]" in text
    for q in (analysis.KERNEL_FLOORS["norm"], analysis.GEMM_FIXED_TIME):
        assert f"{fabric.format_time(q.value)} [{q.source.split(':')[0]}]" in text
    assert "derived from" not in text
    # issue 10: the figures name the runtime of the tensor-parallel collectives
    from analysis._report_parts import default_runtime
    for fig in section.figures:
        assert f"runtime '{default_runtime()}'" in fig.caption, fig.name


def test_csv_tables_are_tidy_and_exact(small_report, small_report_dir):
    with open(small_report_dir / "latency.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    # every field, not only the shown columns; one row per system x transport x op
    assert {"system", "transport", "op", "size_bytes", "pairs", "p99_s"} <= set(rows[0])
    assert len(rows) == 2 * len(SMALL)
    shown = next(t for t in small_report.tables if t.name == "latency").rows
    assert [float(r["max_s"]) for r in rows] == [r["max_s"] for r in shown]  # repr round-trips
    with open(small_report_dir / "collectives.csv", newline="") as fh:
        coll = list(csv.DictReader(fh))
    assert {r["op"] for r in coll} == set(OPS)
    assert all(float(r["time_s"]) >= float(r["lower_bound_s"]) for r in coll)


def test_default_report_shows_scaling_curves_that_state_their_assumptions(small_report):
    groups = dict(small_report.finding_groups)
    assert "Scaling" in groups and len(groups["Scaling"]) >= 3
    for sentence in groups["Scaling"]:
        assert "Assumes:" in sentence and "cofabric scaling" in sentence
    assert "scaling" in [f.name for f in small_report.figures]
    table = next(t for t in small_report.tables if t.name == "scaling")
    families = {r["family"] for r in table.rows}
    assert families == {"hyperx", "torus", "fat-tree", "rail", "dragonfly", "domains"}
    assert max(r["chips"] for r in table.rows) >= 4000


def test_assumptions_say_a_shared_fact_once_and_cut_a_citation_at_its_full_stop():
    from analysis._report_sections import _by_source

    src = "the seed's link. bandwidth: assumed 64 GB/s; latency: calibrated 230 ns"
    rows = [{"system": "a", "parameter": f"link.{w}", "value": v, "unit": u, "source": src}
            for w, v, u in (("bandwidth", 64e9, "B/s"), ("latency", 230e-9, "s"))]
    rows.append({"system": "a", "parameter": "cost.switch.power", "value": 0.0098,
                 "unit": "W/(Gb/s)", "source": "Tomahawk 5 estimate (2022)"})
    out = _by_source(rows, ["a"])
    first = out[0]
    assert first["source"] == ("the seed's link: bandwidth: assumed 64 GB/s; latency: "
                               "calibrated 230 ns")
    assert first["parameters"].count("assumed 64 GB/s") == 0       # said once, in the source
    assert out[1]["parameters"] == "cost.switch.power = 0.0098 W/(Gb/s)"


def test_findings_name_their_layout_and_say_assumption_once(small_report):
    text = "\n".join(small_report.findings)
    assert "assumption: assumption" not in text
    from analysis._report_findings import decode_findings
    rows = [{"system": s, "model": "kimi-k2", "layout": "tp=1,dp=8,ep=8", "time_s": 8e-3,
             "tokens_per_s_user": 125.0, "launch_s": 1e-3, "exposed_comm_s": 1e-3,
             "ep_kernel": "one-sided"} for s in ("a", "b")]
    (f,) = decode_findings(rows, ["a", "b"])
    assert "kimi-k2 at batch 1, at the default layout (tp=1,dp=8,ep=8;" in f, f


def test_decode_figure_labels_the_seed_line_after_the_parts():
    import matplotlib

    matplotlib.use("Agg")
    from analysis import _report_decode

    rows = [{"model": "m", "system": s, **{f"{k}_s": 1e-3 for k in _report_decode._DECODE_PARTS}}
            for s in ("a", "b")]
    fig = _report_decode._draw_decode(rows)
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert labels[:-1] == [_report_decode._DECODE_LABELS[k] for k in _report_decode._DECODE_PARTS]
    assert labels[-1].startswith("seed: 5.85ms")


#: Figures that show no collective, so run under no communication runtime: structure,
#: cost, latency of one access, routed flows, drawings.
_NO_RUNTIME = ("hops", "cost-power", "cost-sensitivity", "latency", "link-utilization",
               "failures", "topology-")


def test_every_figure_with_collectives_names_its_runtime(small_report):
    # issue 10: the report says which runtime each figure uses; analysis.cost's default is
    # named as the runtime it is (read from cost's signature), not as "the default"
    from analysis._report_parts import default_runtime

    seen = set()
    for sec in small_report.sections:
        for fig in sec.figures:
            if fig.name.startswith(_NO_RUNTIME):
                continue
            seen.add(fig.name)
            assert "runtime '" in fig.caption, fig.name
            if sec.key in ("fair", "sensitivity", "decode", "scaling", "serving"):
                assert f"runtime '{default_runtime()}'" in fig.caption, fig.name
            assert "default runtime" not in fig.caption, fig.name
    assert {"fair", "sensitivity", "scaling"} <= seen, seen   # decode: its own test
    for t in small_report.tables:
        assert "analysis.cost's default runtime" not in t.caption, t.name
        if t.name in ("fair", "sensitivity", "decode_best", "scaling"):
            assert f"runtime '{default_runtime()}'" in t.caption, t.name
    runtimes = [t for t in small_report.tables if t.name == "runtimes"]
    assert runtimes and "the other tables of this report use it" not in runtimes[0].caption


#: Figures and tables that show no time or rate: nothing for a runtime to price (hop counts,
#: prices and powers, drawings, parameter lists, the reasons an algorithm does not apply).
_UNTIMED_FIGURES = ("hops", "cost-power", "cost-sensitivity", "topology-")
_UNTIMED_TABLES = ("cost", "cost_sensitivity", "not_applicable", "assumptions",
                   "runtime_parameters")


def test_every_timed_figure_and_table_names_its_runtime_or_that_none_applies(small_report):
    # issue 10: the report says which runtime each figure uses; the latency, link-utilization
    # and failure figures (a load's own costs, routed link loads) said neither (session 16)
    from analysis._report_parts import NO_RUNTIME

    def names(text):
        return "runtime '" in text or NO_RUNTIME in text

    figures = [f for s in small_report.sections for f in s.figures
               if not f.name.startswith(_UNTIMED_FIGURES)]
    tables = [t for s in small_report.sections for t in s.tables
              if t.rows and t.name not in _UNTIMED_TABLES]
    assert {"latency", "link-utilization", "failures", "collective-all-reduce"} <= \
        {f.name for f in figures}
    assert {"summary", "latency", "all_to_all", "failures", "scaling"} <= {t.name for t in tables}
    for f in figures:
        assert names(f.caption), f.name
    for t in tables:
        assert names(t.title + " " + t.caption), t.name
    # and the findings of the sections whose times are no collective's say so too
    groups = dict(small_report.finding_groups)
    for g in ("Access latency", "All-to-all", "Failures"):
        assert groups[g] and all(NO_RUNTIME in f for f in groups[g]), g


def test_the_files_that_read_the_small_report_are_the_listed_ones(request):
    # conftest.py: the small report's files are one work unit of pytest-xdist's loadfile
    # (one worker builds and writes it); a file it does not list would build its own
    from pathlib import Path

    from conftest import SMALL_REPORT_FILES

    wanted = {"small_report", "small_report_dir"}
    readers = {item.path.name for item in request.session.items
               if wanted & set(getattr(item, "fixturenames", ()))}
    assert readers <= set(SMALL_REPORT_FILES)        # (of the selected tests)
    tests = Path(__file__).resolve().parent
    assert all("small_report" in (tests / name).read_text() for name in SMALL_REPORT_FILES)


def test_xdist_loadfile_runs_the_small_reports_files_as_one_unit():
    pytest.importorskip("xdist")
    from types import SimpleNamespace

    from conftest import SMALL_REPORT_FILES, pytest_xdist_make_scheduler, small_report_scheduling

    def config(dist):
        return SimpleNamespace(getvalue={"dist": dist, "tx": ["2*popen"]}.get)

    sched = pytest_xdist_make_scheduler(config("loadfile"), None)
    assert isinstance(sched, small_report_scheduling())
    split = sched._split_scope
    units = {split(f"tests/{name}::test_x[a::b]") for name in SMALL_REPORT_FILES}
    assert len(units) == 1 and len(SMALL_REPORT_FILES) > 1
    assert split("tests/test_scaling.py::test_x[a::b]") == "tests/test_scaling.py"
    assert split("analysis/_report.py::analysis._report.build_report") == "analysis/_report.py"
    assert split("tests/sub/test_report.py::test_x") == "tests/sub/test_report.py"
    for dist in ("load", "loadscope", "worksteal", "each"):     # xdist's own scheduling
        assert pytest_xdist_make_scheduler(config(dist), None) is None


def test_collecting_pauses_the_garbage_collector_and_restores_it():
    # conftest.py pauses the cyclic garbage collector while a node collects (assertion
    # rewriting's syntax trees); the tests must run with it as it was
    import gc

    from conftest import pytest_make_collect_report

    assert gc.isenabled()                   # this test runs after collection
    outer, inner = pytest_make_collect_report(None), pytest_make_collect_report(None)
    next(outer)
    assert not gc.isenabled()
    next(inner)                             # a node inside another: left to the outer one
    with pytest.raises(StopIteration):
        next(inner)
    assert not gc.isenabled()
    with pytest.raises(StopIteration):
        outer.send(None)
    assert gc.isenabled()
    gc.disable()                            # paused by someone else: left paused
    try:
        node = pytest_make_collect_report(None)
        next(node)
        with pytest.raises(StopIteration):
            next(node)
        assert not gc.isenabled()
    finally:
        gc.enable()
