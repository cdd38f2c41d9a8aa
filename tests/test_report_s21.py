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
