"""Report, session 23: what a newcomer met trying hostile inputs and reading the report.

* ``throughput --bytes -1`` said "a size is >= 0 bytes" and ``--bytes 0`` "nbytes must be a
  finite number > 0": two rules, neither naming the option. ``latency --size -1`` said the
  size "must be a positive integer" and then "a size is >= 0 bytes".
* ``report --out /proc/x`` (as root) built the whole report, then failed naming a temporary
  directory the user never gave (``/proc/.x.tmp-qc4nwfin``).
* The collectives finding with the software read "all-reduce takes 1KiB: ...; 1MiB: ...".
"""

import csv
import os

import pytest

from analysis._cli import main


def _err(argv, capsys):
    """(exit status, stderr) of the CLI, argparse's own refusals (SystemExit) included."""
    try:
        rc = main(argv)
    except SystemExit as e:
        rc = e.code
    err = capsys.readouterr().err
    return rc, err


@pytest.mark.parametrize("value", ["-1", "0", " -5", "-1KiB"])
def test_throughput_bytes_one_rule_naming_the_option(value, capsys):
    rc, err = _err(["throughput", "torus:2x2", f"--bytes={value}", "--quiet"], capsys)
    assert rc == 2 and err.count("\n") == 1, err
    assert "argument --bytes: size must be a positive integer" in err, err
    assert ">= 0" not in err and "nbytes" not in err, err


def test_throughput_bytes_still_reads_units(capsys):
    assert main(["throughput", "torus:2x2", "--bytes", "2KiB", "--quiet", "--json"]) == 0
    assert '"bytes_per_pair": 2048' in capsys.readouterr().out


def test_latency_negative_size_states_one_rule(capsys):
    rc, err = _err(["latency", "torus:2x2", "--size=-1"], capsys)
    assert rc == 2 and err.count("\n") == 1, err
    assert "size must be a positive integer" in err and ">= 0" not in err, err


@pytest.mark.skipif(not os.path.isdir("/proc") or os.access("/proc", os.W_OK) is False,
                    reason="needs a /proc that os.access calls writable (root on Linux)")
def test_report_out_where_no_directory_can_be_made_fails_before_building():
    from analysis import check_report_dir

    with pytest.raises(OSError, match=r"cannot write the report to /proc/x: making a "
                                      r"directory in /proc failed") as e:
        check_report_dir("/proc/x")
    assert ".tmp-" not in str(e.value) and ".probe-" not in str(e.value)
    assert not [n for n in os.listdir("/proc") if n.startswith(".x.")]


def test_report_out_probe_leaves_nothing_behind(tmp_path):
    from analysis import check_report_dir

    check_report_dir(tmp_path / "report")
    assert list(tmp_path.iterdir()) == []


def test_nccl_collectives_finding_reads_at_each_size():
    from analysis._report_findings import runtime_findings

    def row(system, size, t):
        return {"system": system, "op": "all-reduce", "size_bytes": size, "ranks": 8,
                "nccl": "ring/LL", "nccl_time_s": t, "ideal_time_s": t / 2}

    (text,) = runtime_findings([row("a", 1024, 2e-5), row("a", 2 ** 20, 4e-5)], ["a"])
    assert "all-reduce takes, at 1KiB: a 20.00us (ring/LL); at 1MiB: a 40.00us (ring/LL)." \
        in text, text


def test_scaling_studies_a_family_or_size_given_twice_once(tmp_path):
    # `--families torus torus --sizes 64 64` built and evaluated torus:4x4x4 four times and
    # wrote four identical rows
    out = tmp_path / "s"
    assert main(["scaling", "--families", "torus", "torus", "--sizes", "64", "64",
                 "--collective-limit", "0", "--decode-limit", "0", "--jobs", "1",
                 "--quiet", "--out", str(out)]) == 0
    with open(out / "scaling.csv", encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert [(r["family"], r["spec"], r["chips"]) for r in rows] == [
        ("torus", "torus:4x4x4,chip=h100", "64")]
    # a metric not evaluated is an empty cell, not 'None'
    assert rows[0]["allreduce_1GiB_s"] == rows[0]["decode_step_s"] == ""


def test_an_empty_file_name_is_quoted_as_the_shell_does(capsys):
    # `cofabric check ""` printed "error: : No such file or directory"
    rc, err = _err(["check", ""], capsys)
    assert rc == 2 and err == "cofabric check: error: '': No such file or directory\n", err
