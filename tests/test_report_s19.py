"""Session 19, what a newcomer sees first: the report opens with what was compared, under
which runtime, and the answer head to head ("In short"), then the contents, then the
findings; its sections come in the order a reader needs them; the serving prose says where
its 490 tokens/s comes from; the CLI's help lists what the registries hold."""

import argparse
from types import SimpleNamespace

import pytest
from report_inputs import SMALL

import fabric
from analysis import MODELS
from analysis._cli import build_parser
from analysis._report import SECTIONS
from analysis._report_overview import _answer, _compared, _runtimes
from analysis._report_parts import (
    Column,
    Table,
    computed_bandwidth,
    computed_time,
    runtime_phrase,
)
from analysis._report_render import SHARED_ASSUMES, shared_assumption
from analysis._report_serving import (
    MATCHED_INTERACTIVITY,
    SPEED_RACE_ORIGIN,
    _serving_findings,
)


def test_the_first_screen_says_what_was_compared_the_runtime_and_the_answer(
        small_report, small_report_dir):
    html = (small_report_dir / "index.html").read_text(encoding="utf-8")
    # before: the findings (several screens) came first and the contents after them
    assert html.index('<h2 id="in-short">In short</h2>') < html.index("<nav>") \
        < html.index('<h2 id="findings">')
    assert '<li><a href="#findings">Findings</a></li>' in html
    md = (small_report_dir / "report.md").read_text(encoding="utf-8")
    assert md.index("## In short") < md.index("## Contents") < md.index("## Findings")
    contents = md[md.index("## Contents"):md.index("## Findings")]
    titles = ["Findings", *(s.title for s in small_report.sections)]
    assert [line.split("](")[0].split("[")[1] for line in contents.splitlines()[2:-1]] == titles
    assert "1. [Findings](#findings)" in contents and "(#all-to-all-and-link-utilization)" in contents
    compared, runtimes, answer = small_report.overview
    a, b = SMALL
    assert compared.startswith(f"Compared: {a} (27 chips) against {b} (16 chips)")
    for name in ("nccl", "ideal"):
        assert runtime_phrase(name).partition(": ")[2] in runtimes
    assert "access latency, all-to-all and failures" in runtimes
    # the answer's values are the tables' cells, in the tables' spelling
    tables = {t.name: t for t in small_report.tables}
    summary = {r["system"]: r for r in tables["summary"].rows}
    fair = {r["system"]: r for r in tables["fair"].rows if r["basis"] == "as built"}
    assert (f"bisection per chip {computed_bandwidth(summary[a]['bisection_per_chip_Bps'])} "
            f"against {computed_bandwidth(summary[b]['bisection_per_chip_Bps'])}") in answer
    assert (f"{computed_time(fair[a]['allreduce_1GiB_s'])} against "
            f"{computed_time(fair[b]['allreduce_1GiB_s'])} (") in answer
    assert answer.startswith(f"Head to head, {a} against {b}")


def _table(name, rows):
    return Table(name, "", (Column("system", "system"),), tuple(rows))


def test_the_answer_names_the_better_system_and_the_best_of_all():
    names = ["a", "b", "c"]
    tables = {
        "summary": _table("summary", [
            {"system": n, "diameter_hops": d, "bisection_per_chip_Bps": bw}
            for n, d, bw in (("a", 3, 64e9), ("b", 6, 25e9), ("c", 2, 450e9))]),
        "fair": _table("fair", [
            {"system": n, "basis": basis, "allreduce_1GiB_s": t}
            for n, basis, t in (("a", "as built", 3.7e-3), ("b", "as built", 5.764e-3),
                                ("c", "as built", 2.267e-3), ("a", "cost", 1e-3))]),
        "decode_best": _table("decode_best", [
            {"system": n, "model": "kimi-k2", "time_s": t}
            for n, t in (("a", 10.23e-3), ("b", 9.949e-3), ("c", 9.927e-3))]),
        "cost": _table("cost", [{"system": n, "network_cost_usd_per_chip": c}
                                for n, c in (("a", 636.0), ("b", 7738.0), ("c", 9300.0))]),
    }
    text = _answer(names, tables)
    assert "at most 3 against 6 hops" in text
    assert "64.00GB/s against 25.00GB/s (2.6x more)" in text
    # the 'cost' basis row of a is not the as-built one
    assert "takes 3.700ms against 5.764ms (1.56x faster)" in text
    assert "a kimi-k2 decode step (batch 1, each system at its best layout, its collectives " \
           "under the runtime 'nccl') takes 10.23ms " \
           "against 9.949ms (1.03x slower)" in text
    assert "$636 against $7,738 (12x cheaper)" in text
    assert ("Of all 3: most bisection per chip c (450.0GB/s); fastest 1GiB all-reduce c "
            "(2.267ms); fastest decode c (9.927ms; b 9.949ms, within 1%); cheapest network "
            "per chip a ($636).") in text       # b within 1% of c: named beside it (s21)
    # a table the report left out leaves its clause out; one system has no head to head
    assert "decode" not in _answer(names, {k: v for k, v in tables.items()
                                           if k != "decode_best"})
    assert _answer(["a"], tables) == ""


def _fab(n, chip):
    return SimpleNamespace(n_endpoints=n, chip=SimpleNamespace(name=chip) if chip else None)


def test_the_first_paragraph_says_whether_the_chips_differ():
    same = {"x:chip=h100": _fab(128, "h100"), "y": _fab(128, "h100"), "z": _fab(72, "h100")}
    text = _compared(same, ["structure", "chips"])
    assert text.startswith("Compared: x:chip=h100 (128 chips) against y (128 chips), with "
                           "z (72 chips) alongside; every system carries the same chip (h100)")
    assert "its own chip" in text
    mixed = {"x": _fab(128, "sd200-chip"), "y": _fab(128, "h100")}
    assert "mix chip and fabric" in _compared(mixed, [])
    assert _compared({"t": _fab(27, None), "u": _fab(16, None)}, []) == \
        "Compared: t (27 chips) against u (16 chips)."
    assert _compared({"t": _fab(27, None)}, []) == "One system: t (27 chips)."
    # a report of load/store sections only names no collective runtime
    assert _runtimes(["latency", "utilization"]).startswith(
        "Access latency and all-to-all price loads")
    assert _runtimes(["structure"]) == ""


def test_sections_come_in_the_order_a_reader_needs_them():
    # equal-cost, sensitivity and failure sections use the latency, collectives, all-to-all
    # and decode quantities: they came before the sections that introduce them
    at = SECTIONS.index
    for later in ("cost", "fair", "sensitivity", "failures"):
        for first in ("structure", "latency", "collectives", "utilization", "decode"):
            assert at(first) < at(later), (first, later)
    assert at("collectives") < at("symmetric") < at("decode") < at("serving")
    assert SECTIONS[0] == "structure" and set(SECTIONS[-3:]) == {"scaling", "topology", "chips"}


def test_the_speed_race_figure_says_where_it_comes_from():
    rows = [{"system": "a", "single_user_tokens_per_s": 300.0, "single_user_layout": "tp=8",
             "single_user_limiter": "weights read", **{f"usd_per_mtok_at_{x:g}": None
                                                      for x in MATCHED_INTERACTIVITY}}]
    seed = [{"case": "defaults", "tpot_s": 9e-3, "limiter": "launch/graph"},
            {"case": "fusion", "tpot_s": 5e-3, "limiter": "weights read"}]
    node = "switch:8,planes=2,links=9,tech=nvlink5,chip=b200"
    (line,) = [s for s in _serving_findings(rows, seed, node) if "490" in s]
    assert line.startswith(f"490 tokens/s for one user ({SPEED_RACE_ORIGIN}), ")


def _help(command):
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return {a.dest: a.help for a in sub.choices[command]._actions}


@pytest.mark.parametrize("command", ["decode", "serve"])
def test_model_and_kernel_help_lists_the_registries(command):
    # decode's --model listed 3 of the 9 models, serve's 6
    helps = _help(command)
    assert all(name in helps["model"].split(", ") for name in MODELS), helps["model"]
    assert all(name in helps["ep_kernel"] for name in fabric.EXCHANGE_KERNELS)


@pytest.mark.parametrize("command", ["route", "latency"])
def test_every_option_has_help(command):
    missing = [d for d, h in _help(command).items() if not h and d != "help"]
    assert not missing, missing


def test_a_clause_every_finding_of_a_group_shares_is_said_once(small_report, small_report_dir):
    # before: the MoE decode group repeated one 730-character 'Assumes:' four times, the
    # symmetric-memory group one 210-character clause six times
    html = (small_report_dir / "index.html").read_text(encoding="utf-8")
    md = (small_report_dir / "report.md").read_text(encoding="utf-8")
    shared = [(g, shared_assumption(g)) for _, g in small_report.finding_groups]
    shared = [(g, s, a) for g, (s, a) in shared if a]
    assert shared, "the small report has a group whose findings share their clause"
    for group, sentences, assumes in shared:
        assert all(f.endswith(" Assumes: " + assumes) for f in group)   # findings stay whole
        # once per group that shares it (two groups may share the same clause)
        assert md.count(f"{SHARED_ASSUMES} {assumes}") == sum(a == assumes for *_, a in shared)
        assert md.count("Assumes: " + assumes) == 0
        assert all(f"- {s}\n" in md for s in sentences)
    assert html.count(f'<p class="assumes">{SHARED_ASSUMES} ') == len(shared)


def test_cli_report_json_and_terminal_carry_the_overview(monkeypatch, capsys, small_report,
                                                         small_report_dir, tmp_path):
    import json

    import analysis
    from analysis._cli import main
    from analysis._cli_report import terminal_summary

    monkeypatch.setattr(analysis, "build_report", lambda *a, **k: small_report)
    monkeypatch.setattr(analysis, "write_report", lambda *a, **k: small_report_dir / "index.html")
    assert main(["report", "torus:2x2", "--out", str(tmp_path / "x"), "--json", "--quiet"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["overview"] == list(small_report.overview)
    assert out["findings"] == list(small_report.findings)
    # on a terminal: the answer, not 30,000 characters of findings
    text = terminal_summary(small_report, "r/index.html")
    assert text.startswith("In short:\n  Compared: ")
    assert text.endswith(f"{len(small_report.findings)} findings: r/index.html (or report.md "
                         "beside it)")
    assert small_report.findings[0] not in text


@pytest.mark.parametrize("jobs", [2, 10**6])
def test_jobs_is_capped_at_the_processors(jobs, monkeypatch):
    # a pool forks all its workers at the first task: --jobs 1000 forked 1000 processes of
    # ~0.7 GB (audit 22:11); the files are the same for any count, so the pool takes at most
    # the machine's processors (nothing is forked here: no task is submitted)
    import os

    from analysis._cli_report import executor_for_jobs

    for cpus in (1, 2, 8):
        monkeypatch.setattr(os, "cpu_count", lambda c=cpus: c)
        # the processors this process may use (its affinity, where the OS has one)
        monkeypatch.setattr(os, "sched_getaffinity", lambda pid, c=cpus: set(range(c)),
                            raising=False)
        pool = executor_for_jobs(jobs)
        expected = min(jobs, cpus)
        if expected == 1:
            assert pool is None
        else:
            assert pool._max_workers == expected
            pool.shutdown()
    with pytest.raises(fabric.SpecError, match="--jobs must be"):
        executor_for_jobs(0)
