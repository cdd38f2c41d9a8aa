"""Scaling study: rows are the public metrics of the built fabrics; the CLI writes its files."""

import csv

import pytest

import topologies
from analysis import SCALING_FAMILIES, bill_of_materials, metrics, scaling_study
from analysis._cli import main


def test_rows_are_the_metrics_of_the_fabrics():
    rows = scaling_study(families=("torus", "fat-tree", "dragonfly"), sizes=(64,),
                         collective_limit=100, decode_limit=0)
    for r in rows:
        f = topologies.build(r["spec"])
        m = metrics(f)
        assert r["chips"] == f.n_endpoints
        assert r["bisection_per_chip_Bps"] == pytest.approx(m.bisection_bandwidth / r["chips"])
        assert r["network_cost_usd_per_chip"] == pytest.approx(
            bill_of_materials(f).cost_usd_per_chip)
        assert r["decode_step_s"] is None and "decode not evaluated" in r["note"]
        assert r["allreduce_1GiB_s"] > 0 and r["alltoall_1MiB_s"] > 0
    # a 3-D torus halves its bisection per chip each time its side doubles
    small, big = scaling_study(families=("torus",), sizes=(64, 512), collective_limit=0,
                               decode_limit=0)
    assert big["bisection_per_chip_Bps"] == pytest.approx(small["bisection_per_chip_Bps"] / 2)
    assert big["allreduce_1GiB_s"] is None


def test_sizes_are_near_the_targets():
    from analysis._scaling import _spec

    for fam in SCALING_FAMILIES:
        for n in (64, 512, 4096, 16384):
            chips = topologies.build(_spec(fam, n)).n_endpoints if n <= 512 else None
            if chips is not None:
                assert n / 2 <= chips <= 2 * n, (fam, n, chips)


def test_cli_writes_csv_and_figures_and_reruns_are_identical(tmp_path):
    # one run in two processes (the default --jobs 2), one serial: the same files (the
    # collectives and decode evaluated in a worker of the pool and here), and no run time in
    # the CSV (test_report_s23_cli: a metric not evaluated is an empty cell)
    argv = ["scaling", "--families", "torus", "--sizes", "64", "--collective-limit", "64",
            "--decode-limit", "64", "--quiet"]
    a, b = tmp_path / "a", tmp_path / "b"
    assert main([*argv, "--out", str(a)]) == 0
    assert main([*argv, "--jobs", "1", "--out", str(b)]) == 0
    files = {p.relative_to(a).as_posix(): p.read_bytes() for p in sorted(a.rglob("*")) if p.is_file()}
    assert files == {p.relative_to(b).as_posix(): p.read_bytes()
                     for p in sorted(b.rglob("*")) if p.is_file()}
    assert "figures/scaling-bisection_per_chip.png" in files
    text = (a / "scaling.csv").read_text()
    row = next(csv.DictReader(text.splitlines()))
    assert row["family"] == "torus" and row["allreduce_algorithm"] and row["decode_layout"]
    assert "seconds" not in row
    for metric in ("allreduce_1GiB_s", "alltoall_1MiB_s", "decode_step_s"):
        float(row[metric])                  # a number, not numpy's repr "np.float64(...)"
    assert main(["scaling", "--out", str(a), "--families", "mesh"]) == 2
    assert main(["scaling", "--out", str(a), "--sizes", "0", "--quiet"]) == 2
    with pytest.raises(SystemExit, match="2"):     # no sign on an integer flag (session 19)
        main(["scaling", "--out", str(a), "--sizes", "-5", "--quiet"])


@pytest.mark.parametrize("sizes", [[-5], [0], [64, 1]])
def test_bad_sizes_are_named(sizes):
    with pytest.raises(ValueError, match=r"sizes\[\d\] must be a chip count >= 2"):
        scaling_study(["torus"], sizes)


@pytest.mark.parametrize("sizes", [[True], [64.0]])
def test_sizes_of_the_wrong_kind_are_a_type_error(sizes):
    # session 31's rule (fabric._units.check_count): a wrong kind is a TypeError
    with pytest.raises(TypeError, match=r"sizes\[0\] must be a chip count >= 2"):
        scaling_study(["torus"], sizes)


@pytest.mark.parametrize("family", sorted(SCALING_FAMILIES))
def test_candidates_hold_the_best_algorithm_at_64_chips(family):
    """Above 64 chips the study takes the best of CANDIDATES instead of ``auto`` (every
    applicable algorithm and transport); at 64 chips both must give the same time."""
    from analysis._scaling import ALLREDUCE_BYTES, ALLTOALL_BYTES, _best, _spec

    f = topologies.build(_spec(family, 64))
    for op, nbytes in (("all-reduce", ALLREDUCE_BYTES), ("all-to-all", ALLTOALL_BYTES)):
        t_auto, alg, how = _best(f, op, nbytes, family, auto_limit=10**9)
        t_cand, alg_c, how_c = _best(f, op, nbytes, family, auto_limit=0)
        assert how == "auto" and how_c.startswith("best of ")
        assert t_cand == pytest.approx(t_auto, rel=1e-12), (op, alg, alg_c)


def test_a_family_keeps_its_colour_and_says_what_was_not_evaluated():
    from matplotlib.figure import Figure

    from analysis import paper_style
    from analysis._scaling import draw_scaling

    def row(fam, n, v):
        return {"family": fam, "chips": n, "allreduce_1GiB_s": v}

    rows = [row("torus", 64, 1e-3), row("torus", 512, 2e-3), row("rail", 64, 1e-3),
            row("rail", 512, None), row("domains", 64, None)]
    with paper_style("single"):
        full = draw_scaling(rows, "allreduce_1GiB_s", ax=Figure().subplots())
        alone = draw_scaling(rows[:2], "allreduce_1GiB_s", ax=Figure().subplots())
    colour = {ln.get_label(): ln.get_color() for ln in full.get_lines()}
    assert set(colour) == {"torus", "rail (to 64 chips)", "domains (not evaluated)"}
    # the colour is the family's, not its position among the families drawn
    assert alone.get_lines()[0].get_color() == colour["torus"]
    assert len(set(colour.values())) == 3


def test_the_reports_study_runs_once_a_process_for_its_inputs(monkeypatch):
    # the test suite builds the report's scaling section twice in one process (the small
    # report, then its CLI run): the study (about 6 s of CPU) runs once for the same
    # arguments, again when any of them changes, and a caller changing the rows it was handed
    # does not change what the next caller reads
    from analysis import _report_scaling as rs

    calls = []

    def study(families, sizes, **kw):      # the real study, on one small fabric
        calls.append((families, sizes, kw))
        return scaling_study(("torus",), (8,), collective_limit=0, decode_limit=0,
                             book=kw["book"])

    monkeypatch.setattr(rs, "scaling_study", study)
    monkeypatch.setattr(rs, "_STUDIES", {})
    first = rs.scaling_report_section(quiet=True)[0].tables[0].rows
    assert len(calls) == 1 and calls[0][:2] == (tuple(SCALING_FAMILIES), rs.REPORT_SIZES)
    assert [r["spec"] for r in first] == ["torus:2x2x2,chip=h100"]
    assert "seconds" not in first[0]                    # a run time, not a result
    expected = dict(first[0])
    first[0]["chips"] = -1
    again = rs.scaling_report_section(quiet=True)[0].tables[0].rows
    assert len(calls) == 1 and again == (expected,)
    # every argument is in the key: another size, limit or router limit runs it again
    monkeypatch.setattr(rs, "REPORT_SIZES", (64, 512))
    rs.scaling_report_section(quiet=True)
    monkeypatch.setattr(rs, "REPORT_EVALUATED_LIMIT", 64)
    rs.scaling_report_section(quiet=True)
    monkeypatch.setattr(rs, "REPORT_ROUTER_LIMIT", ({"rail": 32, "domains": 64}, "why"))
    rs.scaling_report_section(quiet=True)
    rs.scaling_report_section(quiet=True)
    assert [(c[1], c[2]["collective_limit"], c[2]["decode_limit"],
             c[2]["router_limit"][0]["rail"]) for c in calls] == [
        ((64, 512, 4096), 512, 512, 64), ((64, 512), 512, 512, 64), ((64, 512), 64, 64, 64),
        ((64, 512), 64, 64, 32)]
