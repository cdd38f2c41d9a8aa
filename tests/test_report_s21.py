"""Session 21 (report): where NCCL's time climbs back well above the model's own schedules at
a larger size (cluster-128's all-reduce at 16MiB: NCCL's tuner switches to NVLS-tree, 445.5us
under the runtime 'nccl' against 216.9us for the ideal runtime's hierarchical schedule), the
report says so, with the runtime of each number. Before, it listed only where NCCL comes out
below the model's schedules."""

from hypothesis import given
from hypothesis import strategies as st

import analysis._report_sweeps as sweeps
from analysis._report import build_report
from analysis._report_findings import (
    NCCL_ABOVE_IDEAL,
    nccl_above_ideal,
    nccl_above_ideal_findings,
)


def _rows(ratios, system="s", op="all-reduce", runs=None):
    return [{"system": system, "op": op, "size_bytes": 2 ** (10 + i), "ideal_time_s": 1e-5,
             "ideal_algorithm": "hierarchical", "nccl_time_s": x * 1e-5,
             "nccl": (runs or {}).get(i, "double-binary-tree/LL128"), "nccl_fixed_s": 5e-6}
            for i, x in enumerate(ratios)]


def _brute(rows):
    """The reference, by index: a size is flagged when its ratio is above the threshold and
    some smaller size's is at or below it; the size quoted beside them is the largest at or
    below it under the first flagged one."""
    out = []
    for key in dict.fromkeys((r["system"], r["op"]) for r in rows):
        curve = sorted((r for r in rows if (r["system"], r["op"]) == key),
                       key=lambda r: r["size_bytes"])
        ok = [r["nccl_time_s"] <= NCCL_ABOVE_IDEAL * r["ideal_time_s"] for r in curve]
        above = [r for i, r in enumerate(curve) if not ok[i] and any(ok[:i])]
        if above:
            first = curve.index(above[0])
            out.append((above, curve[max(i for i in range(first) if ok[i])]))
    return out


_RATIO = st.sampled_from([0.9, 1.0, 1.3, 1.5, 1.5000001, 2.0, 40.0])


@given(st.lists(_RATIO, min_size=1, max_size=8), st.lists(_RATIO, max_size=8))
def test_flagged_sizes_are_those_above_the_threshold_after_one_at_or_below(a, b):
    rows = _rows(a, "s") + _rows(b, "t", op="all-to-all")
    assert nccl_above_ideal(rows) == _brute(rows)
    found = nccl_above_ideal_findings(rows)
    assert len(found) == len(_brute(rows))


def test_a_ratio_that_only_falls_is_fixed_costs_and_not_said():
    # NCCL's launch and per-step costs shrink against the bytes: 40x, 9x, 2x, 1.3x, 1.1x
    assert nccl_above_ideal(_rows([40, 9, 2, 1.3, 1.1])) == []
    assert nccl_above_ideal_findings(_rows([40, 9, 2, 1.3, 1.1])) == []


def test_the_finding_names_both_runtimes_what_ran_and_the_fixed_part():
    rows = _rows([9, 1.31, 2.05, 1.41], system="cluster-128",
                 runs={2: "hierarchical/Simple", 3: "hierarchical/Simple"})
    (text,) = nccl_above_ideal_findings(rows)
    assert "cluster-128 all-reduce: at 4KiB 20.50us under the runtime 'nccl'" in text
    assert "(hierarchical/Simple, NCCL's NVLS-tree, 5.000us of it fixed)" in text
    assert "against 10.00us under the runtime 'ideal' (hierarchical), 2.05x" in text
    assert "at 2KiB it was 1.31x (double-binary-tree/LL128, 5.000us of it fixed" in text
    assert "changes from double-binary-tree/LL128 to hierarchical/Simple" in text
    assert "runtime 'nccl': NCCL 2." in text and "runtime 'ideal': the model's own" in text
    assert "8KiB" not in text      # 1.41x: not above the threshold


def test_the_report_says_it_in_the_findings_and_the_runtimes_caption(monkeypatch):
    """Through the report's own pipeline: NCCL's time at 64KiB made the ideal one's and at
    1MiB ten times it (a tuner's costly choice), the collectives findings and the runtimes
    table say it."""
    real = sweeps._runtime_rows

    def costly_middle(fabrics, ops, sizes):
        rows = real(fabrics, ops, sizes)
        for r in rows:
            if r["size_bytes"] in (2 ** 16, 2 ** 20):
                r["nccl_time_s"] = (10 if r["size_bytes"] == 2 ** 20 else 1) * r["ideal_time_s"]
                r["nccl"] = "hierarchical/Simple"
        return rows

    monkeypatch.setattr(sweeps, "_runtime_rows", costly_middle)
    rep = build_report(["torus:4x4"], sections=["collectives", "symmetric"],
                       sizes=["64KiB", "1GiB", "1MiB"], ops=["all-reduce"], quiet=True)
    said = [t for t in dict(rep.finding_groups)["Collectives"]
            if t.startswith("NCCL comes out more than 1.5x above the model's own schedules")]
    assert len(said) == 1 and "at 1MiB" in said[0] and "10.0x" in said[0], said
    assert "Assumes:" in said[0]
    sym = next(s for s in rep.sections if s.key == "symmetric")
    caption = next(t for t in sym.tables if t.name == "runtimes").caption
    assert "above them again at a larger size on torus:4x4 all-reduce at 1MiB" in caption


def _cli(argv):
    import io
    from contextlib import redirect_stdout

    from analysis._cli import main

    out = io.StringIO()
    with redirect_stdout(out):
        assert main(argv) == 0
    return out.getvalue().splitlines()


def test_decode_says_the_settings_it_was_given():
    """The header named the engine but not --overlap two-batch or --expert-balance, so a
    reader could not see that they took."""
    head = _cli(["decode", "dgx-h100:chip=h200", "--model", "deepseek-v3", "--batch", "8",
                 "--ep-kernel", "deepep-low-latency", "--engine", "sglang",
                 "--overlap", "two-batch", "--expert-balance", "0.81"])[1]
    assert head.endswith("; two-batch overlap, expert balance 0.81"), head
    plain = _cli(["decode", "dgx-h100:chip=h200", "--model", "deepseek-v3", "--batch", "8"])[1]
    assert plain.endswith("routed experts at 0.78"), plain


def test_serve_counts_one_point_in_the_singular():
    head = _cli(["serve", "dgx-h100:chip=h200", "--model", "deepseek-v3", "--isl", "1024",
                 "--osl", "1024", "--batches", "8", "--layout", "tp=8,dp=1,etp=8",
                 "--no-speculative", "--quiet"])[0]
    assert head.endswith("; 1 point over 1 layout"), head


def _subcommands():
    import argparse

    from analysis._cli import build_parser

    sub = next(a for a in build_parser()._actions
               if isinstance(a, argparse._SubParsersAction))
    return sub.choices


def test_every_subcommand_help_ends_with_an_example_the_readme_runs():
    """One example per subcommand (there were none), each a line of the README's command
    block, whose lines test_audit_docs runs (report, figures, scaling: their own tests)."""
    from test_audit_docs import _readme_commands

    readme = set(_readme_commands())
    for name, parser in _subcommands().items():
        example = parser.format_help().rstrip().splitlines()[-1]   # one line, unwrapped
        assert example.startswith(f"example: cofabric {name}"), (name, example)
        assert example.removeprefix("example: ") in readme, (name, example)


def test_every_option_with_a_default_says_it():
    """An option whose value is set when it is not given says so in its help ('(0)',
    'default 1MiB', 'the default'): --engine, --mode, --tier, --traffic, --seed and
    --micro-batches did not."""
    import argparse

    for name, parser in _subcommands().items():
        for a in parser._actions:
            if (not a.option_strings or a.help in (None, argparse.SUPPRESS)
                    or a.default in (None, False, [], argparse.SUPPRESS)):
                continue
            shown = f"{a.default:g}" if isinstance(a.default, float) else str(a.default)
            assert "default" in a.help or f"({shown})" in a.help, (name, a.option_strings)


def test_cost_counts_one_rank_in_the_singular():
    foot = _cli(["cost", "dgx-h100", "--op", "all-reduce", "--size", "1KiB", "--ranks", "0"])
    assert "dgx-h100, 1 rank, runtime nccl;" in foot[-1], foot[-1]


def test_provenance_names_fonttools_and_why_a_commit_is_unknown():
    """fonttools subsets the fonts a PDF figure embeds: a fresh install that resolved 4.69.1
    wrote six README PDFs unlike figures/ (4.68.0 gives every byte), so a report's provenance
    names its release. Outside a git checkout the commit is unknown, and the line says why."""
    import dataclasses

    from analysis import LIBRARIES, provenance

    assert "fonttools" in LIBRARIES
    p = dataclasses.replace(provenance(), commit=None)
    assert "(commit unknown: not a git checkout);" in str(p)
    assert "fonttools " in str(p)


def test_readme_seed_decode_point_is_what_the_model_gives():
    """The README's closest point to the seed's 5.85 ms per token said 7.09 ms (benchmarks'
    session 7 figure); the model gives 7.07 ms. The point named there, to the digits shown."""
    import re
    from pathlib import Path

    import topologies
    from analysis import decode_step

    text = " ".join((Path(__file__).resolve().parent.parent / "README.md").read_text().split())
    said = re.search(r"the closest point \(10x kernel fusion, 8-way tensor parallelism, full "
                     r"overlap\) is ([\d.]+) ms, ([\d.]+) ms of it the weights read", text)
    r = decode_step("hypothetical-2.8t", topologies.build("sd200-ultra"), batch=1, context=4096,
                    layout="tp=8", fusion_factor=10, overlap=1)
    assert said and (said.group(1), said.group(2)) == (
        f"{r.time * 1e3:.2f}", f"{r.breakdown.weights * 1e3:.2f}"), said


def test_a_table_caption_stays_in_view_when_its_table_scrolls():
    """At 800 px the serving and cost tables are wider than the window and scroll in their
    box; their <caption>, as wide as the table, scrolled out of view with it (read in
    Chromium, session 21). The caption now follows the scrolling box, at the page's width."""
    from analysis._report_parts import Column, Table
    from analysis._report_render import _CSS, _html_table

    t = Table("t", "T", (Column("a", "a"),), ({"a": 1},), "What the table holds.")
    out = _html_table(t)
    box = out.index('<div class="wide">')
    end = out.index("</div>", box)
    assert "What the table holds." not in out[box:end]
    assert out.index('<p class="caption">What the table holds.</p>') > end
    assert "<caption>" not in out and "p.caption" in _CSS


def test_every_name_the_readme_points_to_exists():
    """A reader follows `analysis.X`, `fabric.X.Y` and `Class.attribute` from the README into
    the code: each names something that is there (78 dotted names and 13 class attributes at
    session 21, the figure-making ones among them)."""
    import dataclasses
    import importlib
    import re
    from pathlib import Path

    import analysis
    import fabric

    text = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    for name in set(re.findall(r"(?<![\w./])((?:analysis|fabric|topologies)(?:\.[A-Za-z_]\w*)+)",
                               text)):
        parts = name.split(".")
        obj = importlib.import_module(parts[0])
        for i, part in enumerate(parts[1:], 2):
            obj = (getattr(obj, part) if hasattr(obj, part)
                   else importlib.import_module(".".join(parts[:i])))
    for cls_name, attr in set(re.findall(r"`([A-Z][A-Za-z]+)\.([a-z_]\w*)", text)):
        cls = getattr(analysis, cls_name, None) or getattr(fabric, cls_name)
        fields = {f.name for f in dataclasses.fields(cls)} if dataclasses.is_dataclass(cls) else ()
        assert hasattr(cls, attr) or attr in fields, f"{cls_name}.{attr}"
    assert {"paper_style", "save_figure", "plot_collective_sweep"} <= set(analysis.__all__)


def test_a_bad_access_size_names_the_value_once(capsys):
    """'--size=-1' said "got '-1'" twice (the flag's message, then the size reader's)."""
    import pytest

    from analysis._cli import main

    for value in ("-1", "abc", "0"):
        with pytest.raises(SystemExit) as e:
            main(["latency", "sd200-ultra", f"--size={value}"])
        err = capsys.readouterr().err
        assert e.value.code == 2 and err.count("\n") == 1, err
        assert err.count(repr(value)) == 1, err


def test_report_quiet_says_it_also_drops_the_terminal_summary():
    """On a terminal 'cofabric report --quiet' prints only the page's path (run under
    script(1), session 21), while its help said only 'no progress bar'."""
    import argparse

    quiet = next(a for a in _subcommands()["report"]._actions if "--quiet" in a.option_strings)
    assert "summary" in quiet.help and argparse.SUPPRESS != quiet.help


def test_serve_says_what_its_cost_columns_rest_on():
    """'cost: TCO table: H200, own-hyperscaler' named the table but not the price the $/Mtok
    column divides by, nor the columns' units."""
    last = _cli(["serve", "dgx-h100:chip=h200", "--model", "deepseek-v3", "--isl", "1024",
                 "--osl", "1024", "--batches", "8", "--layout", "tp=8,dp=1,etp=8",
                 "--no-speculative", "--quiet"])[-1]
    assert last == ("cost: TCO table: H200, own-hyperscaler: $1.41 per GPU-hour, 1.73 kW per "
                    "GPU; $/Mtok = $ per million tokens, Mtok/s/MW = million tokens/s per "
                    "megawatt"), last


def test_in_short_names_a_system_within_one_percent_beside_the_best():
    """After train 1 the default report's 'In short' said 'fastest decode cluster-128
    (9.949ms)' with nvl72:chip=h100 at 9.962ms: an order of 0.1% is not an answer, so the
    close one is named beside it."""
    from analysis._report_overview import _answer
    from analysis._report_parts import Table

    def table(name, key, values):
        return Table(name, "", (), tuple({"system": n, "model": "m", key: v}
                                         for n, v in values.items()), "")

    names = ["a", "b", "c", "d"]
    text = _answer(names, {"decode_best": table(
        "decode_best", "time_s", {"a": 10.26e-3, "b": 9.949e-3, "c": 9.962e-3, "d": 11.29e-3})})
    assert "fastest decode b (9.949ms; c 9.962ms, within 1%)." in text, text
    text = _answer(names, {"decode_best": table(
        "decode_best", "time_s", {"a": 10.26e-3, "b": 9.949e-3, "c": 10.2e-3, "d": 11.29e-3})})
    assert "fastest decode b (9.949ms)." in text, text


def test_serve_says_what_each_decode_step_runs():
    """serve printed neither its engine, exchange kernel and runtime nor --overlap two-batch
    or --expert-balance, so a reader could not see that they took."""
    lines = _cli(["serve", "dgx-h100:chip=h200", "--model", "deepseek-v3", "--isl", "1024",
                  "--osl", "1024", "--batches", "8", "--layout", "tp=1,dp=8", "--quiet",
                  "--no-speculative", "--ep-kernel", "deepep-low-latency", "--engine", "sglang",
                  "--overlap", "two-batch", "--micro-batches", "2", "--expert-balance", "0.81"])
    assert lines[2] == ("decode step: sglang kernels, MoE exchange (where a layout has one) "
                        "deepep-low-latency, runtime nccl, CUDA graphs, 2 micro-batches; "
                        "two-batch overlap, expert balance 0.81"), lines[2]
