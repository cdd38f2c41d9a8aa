"""Every cofabric subcommand x hostile arguments: one line on stderr, exit 2, no traceback.

Session 27's CLI fuzz (13 subcommands, every slot, ~60 hostile values each) pinned as a fast
table: each slot of each subcommand's command line gets hostile values in turn (empty,
NaN, negative, overflowing, unknown names, a newline, a NUL, a fullwidth digit, an explicit
'--'), and failed-everything fabrics and broken system files are given whole. The CLI's
contract (analysis/_cli.py): bad input prints exactly one line on stderr and exits 2;
nothing is written to stdout. What the fuzz found: an option's explicit '--'
(``--algorithm=--``) reached the commands as [] on Python 3.11 (exit 3), a file name with a
newline printed two lines, a NUL in a file name raised ValueError (exit 3), and a progress
bar left its line above the error on a terminal.
"""

import pytest
from cli_run import run_cli as cli

from analysis import _progress

HOSTILE = ("", "nan", "-1", "1e400", "nope", "a\nb", "a\x00.toml", "\uff11", "torus:0x0")


def _system_files(tmp):
    files = {
        "garbled.toml": "[system\ntopology=",
        "empty.toml": "",
        "unknown.toml": '[system]\ntopology = "nope:1"\n',
        "unaligned.toml": '[system]\ntopology = "torus:4x4,chip=h100"\n[[windows]]\n'
                          'host = "host0"\nname = "w"\nlocal_base = "0x1001"\n'
                          'global_base = "0x3"\nsize = "4097"\n',
        "wide.toml": '[system]\ntopology = "torus:4x4,chip=h100"\n[address]\nwidth = 1000\n',
        "nosystem.toml": "[address]\nwidth = 57\n",
    }
    for name, text in files.items():
        (tmp / name).write_text(text)
    (tmp / "binary.toml").write_bytes(b"\xff\xfe\x00\x01" * 8)
    return sorted(str(tmp / n) for n in (*files, "binary.toml"))


#: command -> (a valid command line, its slots: positionals by name, options by flag)
COMMANDS = {
    "metrics": (["metrics", "torus:4x4", "--quiet"],
                ["spec", "--fail-link", "--fail-chip", "--fail-lane"]),
    "route": (["route", "torus:4x4,chip=h100", "0", "5"],
              ["system", "src", "dst", "--size", "--transport", "--op", "--fail-link",
               "--fail-chip", "--fail-lane"]),
    "latency": (["latency", "torus:4x4,chip=h100", "--quiet"],
                ["system", "--size", "--transport", "--op", "--fail-link", "--fail-chip"]),
    "throughput": (["throughput", "torus:2x2", "--quiet"],
                   ["system", "--traffic", "--bytes", "--seed", "--fail-chip"]),
    "translate": (["translate", "sd200-ultra", "--host", "host1", "0x1000"],
                  ["system", "--host", "address"]),
    "check": (["check", "examples/sd200-ultra.toml"], ["file"]),
    "cost": (["cost", "torus:4x4", "--op", "all-reduce", "--size", "1KiB"],
             ["system", "--op", "--size", "--algorithm", "--runtime", "--transport", "--ranks",
              "--fail-link"]),
    "export": (["export", "torus:2x2", "OUT/x.graphml"], ["system", "--format"]),
    "decode": (["decode", "hgx-h200", "--model", "deepseek-r1"],
               ["system", "--model", "--batch", "--context", "--layout", "--algorithm",
                "--graph-batch", "--runtime", "--ep-kernel", "--overlap", "--fusion",
                "--moe-hbm-efficiency", "--expert-balance", "--trtllm-release", "--skew",
                "--launch-overhead", "--hbm-efficiency", "--compute-efficiency",
                "--draft-length", "--acceptance", "--draft-cost"]),
    "serve": (["serve", "hgx-h200", "--model", "deepseek-r1", "--isl", "1024", "--osl", "1024",
               "--quiet"],
              ["system", "--model", "--isl", "--osl", "--layout", "--batches", "--chip-price",
               "--runtime", "--max-batched-tokens", "--micro-batches", "--fail-chip"]),
    "report": (["report", "torus:2x2", "--out", "OUT/report", "--quiet", "--sizes", "1KiB"],
               ["system", "--sizes", "--ops", "--jobs"]),
    "figures": (["figures", "--out", "OUT/figures", "--quiet"], []),
    "scaling": (["scaling", "--out", "OUT/scaling", "--quiet", "--families", "torus"],
                ["--families", "--sizes", "--collective-limit", "--decode-limit", "--jobs"]),
}
_POSITIONALS = {"metrics": ["spec"], "route": ["system", "src", "dst"], "latency": ["system"],
                "throughput": ["system"], "translate": ["system", "address"],
                "check": ["file"], "cost": ["system"], "export": ["system", "out"],
                "decode": ["system"], "serve": ["system"], "report": ["system"]}
_FLAGS = ("--quiet", "--json", "--force")


def _set(cmd, argv, slot, value):
    """``argv`` with ``slot`` (a positional's name or an option's flag) set to ``value``."""
    argv = list(argv)
    if slot.startswith("--"):
        if slot in argv:
            argv[argv.index(slot) + 1] = value
            return argv
        return [*argv, f"{slot}={value}"]
    where, i = [], 1
    while i < len(argv):
        if argv[i].startswith("--"):
            i += 1 if argv[i] in _FLAGS else 2
            continue
        where.append(i)
        i += 1
    argv[where[_POSITIONALS[cmd].index(slot)]] = value
    return argv


def _cases():
    """Each slot with three of the hostile values (in turn, so every value meets every
    command), and every option with an explicit '--'."""
    out, k = [], 0
    for cmd, (argv, slots) in COMMANDS.items():
        for slot in slots:
            for j in range(3):
                out.append((cmd, slot, HOSTILE[(k + j) % len(HOSTILE)]))
            k += 1
            if slot.startswith("--"):
                out.append((cmd, slot, "--"))
    return out


def assert_one_line(argv, rc, out, err):
    assert rc == 2, (argv, rc, err)
    assert err.endswith("\n") and err.count("\n") == 1 and err.startswith("cofabric"), (argv, err)
    assert "Traceback" not in err and "internal error" not in err, (argv, err)
    assert out == "", (argv, out)


#: (command, slot, value) that is a valid input after all (the command runs): an empty
#: layout is the model's default layout (decode's without --layout; serve tries that one)
VALID = {("serve", "--layout", "")}


@pytest.mark.parametrize(("cmd", "slot", "value"), _cases())
def test_a_hostile_argument_is_one_line_and_exit_2(cmd, slot, value, tmp_path):
    argv = [a.replace("OUT", str(tmp_path)) for a in COMMANDS[cmd][0]]
    argv = _set(cmd, argv, slot, value)
    rc, out, err = cli(argv)
    if (cmd, slot, value) in VALID:
        assert rc == 0, (argv, err)
        return
    assert_one_line(argv, rc, out, err)


def test_broken_system_files_and_file_names_are_one_line(tmp_path):
    for path in [*_system_files(tmp_path), str(tmp_path), "/nonexistent/x.toml", "a\nb.toml",
                 "a\x00.toml", ""]:
        for argv in (["check", path], ["route", path, "0", "5"],
                     ["translate", path, "--host", "host0", "0x0"],
                     ["latency", path, "--quiet"],
                     ["decode", "hgx-h200", "--model", path]):
            rc, out, err = cli(argv)
            if argv[0] == "check" and path.endswith(("unaligned.toml", "wide.toml")):
                assert rc == 1 and "error" in out       # findings, not bad input
                continue
            assert_one_line(argv, rc, out, err)


def test_failed_everything_fabrics_are_one_line():
    every_chip = [a for c in range(4) for a in ("--fail-chip", f"chip{c}")]
    every_link = [a for u, v in (("chip0", "chip1"), ("chip0", "chip2"), ("chip1", "chip3"),
                                 ("chip2", "chip3")) for a in ("--fail-link", f"{u}-{v}")]
    for fail in (every_chip, every_link, every_chip[:6]):
        for argv in (["route", "torus:2x2", "0", "3"], ["latency", "torus:2x2", "--quiet"],
                     ["metrics", "torus:2x2", "--quiet"], ["throughput", "torus:2x2", "--quiet"],
                     ["cost", "torus:2x2", "--op", "all-reduce", "--size", "1KiB"]):
            argv = [*argv, *fail]
            rc, out, err = cli(argv)
            if rc == 0:
                # one chip left: its metrics and a one-rank collective (0 s) are answers
                assert len(fail) == 6 and argv[0] in ("metrics", "cost"), (argv, err)
                continue
            assert_one_line(argv, rc, out, err)


def test_an_option_given_an_explicit_double_dash_is_that_text():
    """Python 3.11's argparse handed ``--algorithm=--`` to the command as [] (exit 3)."""
    rc, out, err = cli(["cost", "torus:4x4", "--op", "all-reduce", "--size", "1KiB",
                        "--algorithm=--"])
    assert_one_line(None, rc, out, err)
    assert "unknown algorithm '--'" in err
    rc, out, err = cli(["decode", "hgx-h200", "--model", "deepseek-r1", "--batch=--"])
    assert_one_line(None, rc, out, err)
    assert "argument --batch" in err and "'--'" in err


def test_a_progress_bar_is_erased_before_the_error_line(monkeypatch):
    """On a terminal the bar's line is blanked when the command fails: the error's line is
    the only one left on the screen (a carriage return redraws a line)."""
    monkeypatch.setattr(_progress, "watched", lambda stream: True)
    rc, out, err = cli(["latency", "torus:4x4", "--fail-chip", "nope"])
    assert out == ""
    assert rc == 2 and "\r" in err                              # the bar was drawn
    screen = [line.rsplit("\r", 1)[-1] for line in err.split("\n")]
    assert [s for s in screen if s.strip()] == [
        "cofabric latency: error: cannot fail 'nope': torus:4x4: no node called 'nope'"]


@pytest.mark.parametrize("cmd", ["report", "figures", "scaling"])
def test_an_output_directory_no_one_can_write_is_refused_before_any_work(cmd, tmp_path):
    """One rule (analysis._report.output_dir): an empty --out, one holding a NUL (figures
    built every figure, then raised ValueError: exit 3) or naming a file is one line, exit 2,
    before the minutes of work (scaling's empty --out wrote into the current directory)."""
    file = tmp_path / "a-file"
    file.write_text("")
    for out in ("", " ", "a\x00b", str(file)):
        rc, stdout, err = cli([cmd, "--out", out, "--quiet"])
        assert_one_line([cmd, out], rc, stdout, err)
        assert "--out" in err
