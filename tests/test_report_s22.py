"""What a person reads, session 22: the CLI's headers say how the step's collectives were
priced, --max-batched-tokens' help gives each engine's own default, and the README names
only options its commands take."""

import io
import re
from contextlib import redirect_stdout
from pathlib import Path

from analysis import MIXED_STEP_BUDGET
from analysis._cli import build_parser, main

README = (Path(__file__).resolve().parent.parent / "README.md").read_text()

# a vLLM point: one layout, one batch, no exchange (the experts split over the TP ranks)
_VLLM = ["dgx-h100:chip=h200", "--model", "deepseek-v3", "--engine", "vllm"]
_SERVE = ["serve", *_VLLM, "--isl", "1024", "--osl", "1024", "--batches", "8",
          "--layout", "tp=8,dp=1,etp=8", "--no-speculative", "--quiet"]


def _cli(argv):
    out = io.StringIO()
    with redirect_stdout(out):
        assert main(argv) == 0
    return out.getvalue().splitlines()


def _subcommands():
    return next(a for a in build_parser()._actions if a.dest == "command").choices


def test_serve_names_vllms_own_all_reduce_dispatch():
    """serve --engine vllm said 'runtime nccl' while its TP all-reduces were priced by
    analysis.vllm_all_reduce (analysis.engine_collective's rule, which decode named)."""
    step = _cli(_SERVE)[2]
    assert ("TP all-reduces by vLLM's own dispatch (analysis.vllm_all_reduce), other "
            "collectives runtime nccl") in step, step
    assert "all-to-all, runtime nccl" not in step, step
    # an explicit runtime wins over the engine's dispatch, and is said so
    step = _cli([*_SERVE, "--runtime", "nccl"])[2]
    assert ", runtime nccl, CUDA graphs" in step, step
    assert "vllm_all_reduce" not in step, step


def test_decode_and_serve_say_the_collectives_in_the_same_words():
    said = _cli(["decode", *_VLLM, "--batch", "8", "--layout", "tp=8,dp=1,etp=8"])[1]
    assert said.startswith("TP all-reduces by vLLM's own dispatch (analysis.vllm_all_reduce), "
                           "other collectives runtime nccl, MoE exchange"), said


def test_max_batched_tokens_help_gives_each_engines_own_default():
    """The help said '8192' for every engine; it now reads each engine's sourced Parameter,
    and names the engines that refuse the option."""
    from analysis._cli_decode import ENGINES

    text = " ".join(_subcommands()["serve"].format_help().split())
    budgets = ", ".join(f"{e} {MIXED_STEP_BUDGET[e].value:g}" for e in ENGINES
                        if e in MIXED_STEP_BUDGET)
    assert f"(default the engine's own: {budgets}; sglang: a prompt runs as a pass of its own, " \
           f"the option is refused)" in text, text


# flags of another program the README quotes (TensorRT-LLM's own for its mixed layout)
_NOT_OURS = {"--tp", "--ep"}
# a span that opens with another program's name quotes that program's options (the
# Development section's `python -m pytest -q -n auto --dist loadfile`)
_OTHER_PROGRAMS = {"python", "python3", "pip"}


def test_readme_options_are_options_of_the_command_named():
    """An option the README shows in inline code is one of cofabric's, and of the subcommand
    the span names when it names one (the README promised `--micro-batches 2` beside
    decode's two-batch overlap; only serve takes it)."""
    subs = _subcommands()
    options = {n: {o for a in p._actions for o in a.option_strings} for n, p in subs.items()}
    every = set().union(*options.values())
    checked = 0
    for span in re.findall(r"`([^`\n]*--[^`\n]*)`", README):
        words = span.split()
        if words[0] in _OTHER_PROGRAMS:
            continue
        words = words[1:] if words[0] == "cofabric" else words
        known = options[words[0]] if words[0] in subs else every
        for w in words:
            flag = w.split("=")[0]
            if flag.startswith("--") and flag not in _NOT_OURS:
                assert flag in known, (span, flag)
                checked += 1
    assert checked > 30, checked


def test_the_decode_finding_names_each_systems_exchange_kernel():
    """The default-layout decode finding compared two systems' step times but named only the
    first one's MoE exchange kernel; the second's number rested on another kernel."""
    from analysis._report_findings import decode_findings
    from analysis._report_parts import DECODE_MODELS

    def row(system, kernel, t):
        return {"system": system, "model": DECODE_MODELS[0], "layout": "tp=1,dp=8,ep=8",
                "ep_kernel": kernel, "time_s": t, "tokens_per_s_user": 1 / t,
                "launch_s": 0.2 * t, "exposed_comm_s": 0.1 * t}

    text = decode_findings([row("a", "one-sided", 11.47e-3),
                            row("b", "deepep-low-latency", 11.07e-3)], ["a", "b"])[0]
    assert "11.47ms per token on a (87 tokens/s, MoE exchange one-sided) and 11.07ms on b " \
           "(90 tokens/s, MoE exchange deepep-low-latency)" in text, text
    assert "exposed communication 10%." in text, text


def _scaling_rows():
    base = {"bisection_per_chip_Bps": 256e9, "a2a_per_chip_Bps": 1.024e12,
            "allreduce_1GiB_s": 1.033e-3, "alltoall_1MiB_s": 4.044e-6, "decode_step_s": 10.02e-3,
            "network_cost_usd_per_chip": 26700.0, "network_power_w_per_chip": 472.8,
            "decode_instance": "8x8x2 block of 16x16x16"}
    return [{"family": "hyperx", "spec": "hypermesh:16x16x16,chip=h100", "chips": 4096, **base,
             "note": "all-reduce: best of multi-dimensional"},
            {"family": "torus", "spec": "torus:4x4x4,chip=h100", "chips": 64, **base,
             "allreduce_1GiB_s": None, "decode_step_s": None, "decode_instance": None, "note": "over the limit"}]


def test_scaling_md_shows_the_reports_columns_and_names_its_runtimes():
    """`cofabric scaling`'s scaling.md headed its columns with the CSV's keys, showed a
    network cost of $26,700 per chip as '2.67e+04' and named no runtime for its times."""
    from analysis._cli_scaling import _markdown

    text = _markdown(_scaling_rows())
    assert "runtime 'ideal'" in text and "runtime 'nccl'" in text, text
    assert ("| family | spec | chips | bisection / chip | all-to-all / chip | all-reduce 1GiB | "
            "all-to-all 1MiB | decode step | decode instance | network $ / chip | network W / chip | note |") \
        in text, text
    assert "| hyperx | hypermesh:16x16x16,chip=h100 | 4,096 | 256.0GB/s | 1.024TB/s | 1.033ms | " \
           "4.044us | 10.02ms | 8x8x2 block of 16x16x16 | $26,700 | 473 W | all-reduce: best of multi-dimensional |" \
           in text, text
    assert "| torus | torus:4x4x4,chip=h100 | 64 | 256.0GB/s | 1.024TB/s | n/a |" in text, text
    assert "e+0" not in text, text


def test_a_scaling_figure_says_what_its_times_include():
    """The standalone figures of `cofabric scaling` named no runtime (the report's panels
    did): a collective's says no software costs, the decode step's its collectives' NCCL,
    a structural metric nothing."""
    from analysis._cli_scaling import _drawer
    from analysis._style import paper_style

    rows = _scaling_rows()
    with paper_style("single"):
        titles = {m: _drawer(rows, m)().axes[0].get_title()
                  for m in ("alltoall_1MiB_s", "decode_step_s", "bisection_per_chip_Bps")}
    assert titles["alltoall_1MiB_s"] == "model's schedules, no software costs", titles
    assert titles["decode_step_s"].startswith("collectives: NCCL 2."), titles
    assert titles["bisection_per_chip_Bps"] == "", titles


def test_runtime_help_says_vllms_dispatch_is_the_default_under_engine_vllm():
    """--runtime's help said 'default: its default' (analysis.cost's), which under --engine
    vllm is not what prices the TP all-reduces."""
    for name in ("decode", "serve"):
        text = " ".join(_subcommands()[name].format_help().split())
        assert "default: nccl, except --engine vllm on hopper and blackwell chips, whose TP " \
               "all-reduces take vLLM's own dispatch, analysis.vllm_all_reduce)" in text, text


def test_a_missing_file_is_named_as_the_shell_names_it(tmp_path, capsys):
    """The CLI printed Python's "[Errno 2] No such file or directory: '...'" for a file
    that is not there; it now reads 'FILE: reason', one line, exit 2."""
    missing = str(tmp_path / "nosuch.toml")
    assert main(["check", missing]) == 2
    assert capsys.readouterr().err == f"cofabric check: error: {missing}: No such file or " \
                                      "directory\n"
