"""Bad input at every door: each CLI command and option, given what a careless or hostile
user types, prints exactly one line naming the problem and exits 2 (never a traceback, never
a silent answer); the Python API raises a documented error type for the same values.

The CLI runs in-process (``analysis._cli.main``) except for one test of the real entry
(``python -m analysis._cli``, two processes side by side), so the whole file takes a few seconds.
"""

import json
import math
import os
import pathlib
import sys

import pytest

import analysis
import fabric
import topologies
from analysis._cli import main
from fabric._units import is_real

ROOT = pathlib.Path(__file__).resolve().parent.parent


def _run(argv, capsys):
    try:
        rc = main(argv)
    except SystemExit as e:          # argparse refuses before a command runs
        rc = e.code
    out, err = capsys.readouterr()
    return rc, out, err


# (argv, a fragment the one line must contain)
BAD = [
    # specs: sizes, options, names, units, sanity
    (["metrics", "hypermesh:4x0x8"], "got shape[1]=0"),
    (["metrics", "hypermesh:4x-1x8"], "got shape[1]=-1"),
    (["metrics", "hypermesh"], "needs shape"),
    (["metrics", "fattree:k=7"], "even"),
    (["metrics", "fattree:k=nan"], "k must be an integer"),
    (["metrics", "fattree:k=1e3"], "k must be an integer"),
    (["metrics", "leafspine:k=16,over=inf"], "over must be an integer"),
    (["metrics", "leafspine:k=16,over=0"], "oversubscription"),
    (["metrics", "rail:servers=2,gpus=8,nic=bogus"], "unknown link technology 'bogus'"),
    (["metrics", "rail:servers=0,gpus=8"], "servers"),
    (["metrics", "switch:72,planes=0"], "planes"),
    (["metrics", "dragonfly:h=0"], "h must be"),
    (["metrics", "torus:4x4,chip=bogus"], "unknown chip 'bogus'"),
    (["metrics", "torus:4x4,tech=bogus"], "unknown link technology 'bogus'"),
    (["metrics", "torus:4x4,hosts=3"], "does not divide"),
    (["metrics", "torus:4x4,connect=ring"], "unknown option 'connect'"),
    (["metrics", "torus:4x4,,"], "key=value"),
    (["metrics", "torus:99999x99999x99999"], "the limit is"),
    (["metrics", "sd200-ultra:bogus=1"], "chip=<name>"),
    (["metrics", "nopreset"], "unknown topology family or preset 'nopreset'"),
    (["metrics", ""], "unknown topology family or preset ''"),
    # failures named wrongly, and failures that partition the fabric
    (["metrics", "torus:4x4", "--fail-link", "chip0"], "written 'u-v'"),
    (["metrics", "torus:4x4", "--fail-link", "chip0-chip5"], "no such link"),
    (["metrics", "torus:4x4", "--fail-link", "chip0-chip0"], "no such link"),
    (["metrics", "torus:4x4", "--fail-chip", "16"], "out of range"),
    (["metrics", "torus:4x4", "--fail-chip", "chip99"], "no node called 'chip99'"),
    (["metrics", "torus:4x4", "--fail-lane", "chip0-chip5"], "no such link"),
    (["metrics", "mesh:2", "--fail-link", "chip0-chip1"], "cut off from every other chip"),
    (["metrics", "mesh:3", "--fail-chip", "chip1"], "cut off from every other chip"),
    (["throughput", "mesh:3", "--fail-link", "chip0-chip1", "--fail-link", "chip1-chip2"],
     "no path joins them"),
    # route / latency / throughput: unreachable, failed, unknown, bad sizes
    (["route", "sd200-ultra", "0", "999"], "out of range"),
    (["route", "sd200-ultra", "chip0", "nochip"], "no node called 'nochip'"),
    (["route", "sd200-ultra", "0", "5", "--fail-chip", "chip5"], "has failed"),
    (["route", "cluster-128", "0", "127", "--transport", "loadstore"], "cannot reach"),
    (["route", "sd200-ultra", "0", "5", "--size", "0"], "size must be a positive integer"),
    (["route", "sd200-ultra", "0", "5", "--size", "nan"], "cannot read size 'nan'"),
    (["route", "sd200-ultra", "0", "5", "--size", "inf"], "cannot read size 'inf'"),
    (["route", "sd200-ultra", "0", "5", "--size", "1.5"], "not a whole number"),
    (["route", "sd200-ultra", "0", "5", "--size", "1Mb"], "not bits"),
    (["route", "sd200-ultra", "0", "5", "--size", "4XB"], "unknown prefix 'X'"),
    (["route", "sd200-ultra", "0", "5", "--size", "1e400"], "larger than the largest float"),
    (["route", "sd200-ultra", "0", "5", "--size", "1.7e308"], "at most 2**63 - 1 bytes"),
    (["route", "sd200-ultra", "0", "5", "--op", "read"], "invalid choice: 'read'"),
    (["latency", "sd200-ultra", "--size", "1.7e308"], "at most 2**63 - 1 bytes"),
    (["latency", "sd200-ultra", "--transport", "bogus"], "unknown transport 'bogus'"),
    (["throughput", "torus:4x4", "--bytes", "0"], "argument --bytes: size must be a positive"),
    (["throughput", "torus:4x4", "--bytes=-1KiB"], "argument --bytes: size must be a positive"),
    (["throughput", "torus:4x4", "--bytes", "1e400"], "larger than the largest float"),
    (["throughput", "torus:4x4", "--bytes", "1.7e308"], "at most 2**63 bytes"),
    (["throughput", "torus:4x4", "--seed", "abc"], "argument --seed: takes a whole number in ASCII digits 0-9, got 'abc'"),
    (["throughput", "torus:4x4", "--traffic", "tornado"], "unknown traffic 'tornado'"),
    (["throughput", "torus:4x4", "--traffic", "permutation", "--seed=-1"],
     "argument --seed: takes a whole number in ASCII digits 0-9, got '-1'"),   # exit 3 once (numpy); s19: the flag refuses it
    # cost: sizes, ranges, names, groups, transports, runtimes
    # --size 0 alone is an empty operation since session 31 (tests/test_runtime_s31_empty.py);
    # a range still starts above 0
    (["cost", "dgx-h100", "--op", "all-reduce", "--size", "0:1KiB"], "must be > 0 bytes"),
    (["cost", "dgx-h100", "--op", "send-recv", "--size", "0"],
     "send-recv of 0 bytes under the nccl runtime: NCCL queues a 0-byte send"),
    (["cost", "dgx-h100", "--op", "all-reduce", "--size", "-1"], ">= 0 bytes"),
    (["cost", "dgx-h100", "--op", "all-reduce", "--size", "1e400"],
     "larger than the largest float"),
    (["cost", "dgx-h100", "--op", "all-reduce", "--size", "1KiB:1GiB:x1"], "factor must be > 1"),
    (["cost", "dgx-h100", "--op", "all-reduce", "--size", "1GiB:1KiB:x2"], "STOP is below"),
    (["cost", "dgx-h100", "--op", "all-reduce", "--size", "1KiB:1GiB:+0"], "increment"),
    (["cost", "dgx-h100", "--op", "all-reduce", "--size", "1KiB:"], "1KiB:"),
    (["cost", "dgx-h100", "--op", "bogus", "--size", "1KiB"], "unknown collective operation 'bogus'"),
    (["cost", "dgx-h100", "--op=", "--size", "1KiB"], "--op needs at least one"),  # was exit 3
    (["cost", "dgx-h100", "--op", "all-reduce", "--size", "1KiB", "--ranks="],
     "ranks must name at least one rank"),  # was exit 3 (a plain ValueError)
    (["cost", "dgx-h100", "--op", "all-reduce", "--size", "1KiB", "--algorithm", "bogus"],
     "unknown algorithm 'bogus'"),
    (["cost", "dgx-h100", "--op", "all-reduce", "--size", "1KiB", "--runtime", "bogus"],
     "unknown runtime 'bogus'"),
    (["cost", "dgx-h100", "--op", "all-reduce", "--size", "1KiB", "--runtime", "nccl@1.0"],
     "outside the releases"),
    (["cost", "dgx-h100", "--op", "all-reduce", "--size", "1KiB", "--transport", "bogus"],
     "unknown transport 'bogus'"),
    (["cost", "cluster-128", "--op", "all-reduce", "--size", "1KiB", "--transport", "loadstore"],
     "cannot carry this group"),
    (["cost", "dgx-h100", "--op", "all-reduce", "--size", "1KiB", "--ranks", "0", "0"], "twice"),
    (["cost", "dgx-h100", "--op", "all-reduce", "--size", "1KiB", "--ranks", "0", "99"],
     "out of range"),
    (["cost", "dgx-h100", "--op", "all-reduce", "--size", "1KiB", "--ranks", "sw0"],
     "not a chip endpoint"),
    (["cost", "dgx-h100", "--op", "all-reduce", "--size", "1KiB", "--algorithm",
      "recursive-doubling", "--ranks", "0-2"], "power-of-two"),
    (["cost", "torus:4x4", "--op", "all-reduce", "--size", "1KiB", "--algorithm", "in-switch",
      "--runtime", "ideal"], "reduction=True"),
    # decode: names, layouts, fractions, NaN/inf
    (["decode", "sd200-ultra", "--model", "bogus"], "unknown model 'bogus'"),
    (["decode", "sd200-ultra", "--model", "/nonexistent.toml"], "No such file"),
    (["decode", "sd200-ultra", "--model", "kimi-k2", "--batch", "0"], "batch must be an integer >= 1"),
    (["decode", "sd200-ultra", "--model", "kimi-k2", "--context", "-5"], "context"),
    (["decode", "sd200-ultra", "--model", "kimi-k2", "--layout", "tp=3"], "does not divide"),
    (["decode", "sd200-ultra", "--model", "kimi-k2", "--layout", "bogus"], "cannot read 'bogus'"),
    (["decode", "sd200-ultra", "--model", "kimi-k2", "--runtime", "bogus"],
     "unknown runtime 'bogus'"),
    (["decode", "sd200-ultra", "--model", "kimi-k2", "--ep-kernel", "bogus"],
     "unknown MoE exchange kernel 'bogus'"),
    (["decode", "sd200-ultra", "--model", "kimi-k2", "--overlap", "2"], "overlap"),
    (["decode", "sd200-ultra", "--model", "kimi-k2", "--overlap", "nan"], "overlap"),
    (["decode", "sd200-ultra", "--model", "kimi-k2", "--fusion", "inf"], "finite number >= 1"),
    (["decode", "sd200-ultra", "--model", "kimi-k2", "--fusion", "nan"], "finite number >= 1"),
    (["decode", "sd200-ultra", "--model", "kimi-k2", "--fusion", "0"], "fusion_factor"),
    (["decode", "sd200-ultra", "--model", "kimi-k2", "--launch-overhead", "inf",
      "--no-cuda-graphs"], "launch_overhead must be a finite number"),
    (["decode", "sd200-ultra", "--model", "kimi-k2", "--hbm-efficiency", "0"], "hbm_efficiency"),
    (["decode", "sd200-ultra", "--model", "kimi-k2", "--moe-hbm-efficiency", "inf"],
     "moe_hbm_efficiency"),
    (["decode", "sd200-ultra", "--model", "kimi-k2", "--skew", "nan"], "skew"),
    (["decode", "sd200-ultra", "--model", "kimi-k2", "--draft-length", "3", "--acceptance",
      "1.5"], "acceptance"),
    (["decode", "mesh:2", "--model", "kimi-k2"], "names no chip"),
    # serve
    (["serve", "nvl72", "--model", "kimi-k2", "--isl", "0", "--osl", "1024"], "isl"),
    (["serve", "nvl72", "--model", "kimi-k2", "--isl", "1k", "--osl", "1024"],
     "argument --isl: takes a whole number in ASCII digits 0-9, got '1k'"),
    (["serve", "nvl72", "--model", "kimi-k2", "--isl", "1024", "--osl", "1024", "--batches",
      "4,,8"], "comma-separated integers"),
    (["serve", "nvl72", "--model", "kimi-k2", "--isl", "1024", "--osl", "1024", "--batches",
      "0"], "batches"),
    (["serve", "nvl72", "--model", "kimi-k2", "--isl", "1024", "--osl", "1024", "--chip-price",
      "-1"], "--chip-price must be a finite number"),
    (["serve", "nvl72", "--model", "kimi-k2", "--isl", "1024", "--osl", "1024", "--chip-price",
      "nan"], "--chip-price must be a finite number"),
    (["serve", "nvl72", "--model", "kimi-k2", "--isl", "1024", "--osl", "1024",
      "--micro-batches", "0"], "micro_batches"),
    # nothing fits: the line says why (it ended in ": " with no reason)
    (["serve", "hgx-h200", "--model", "kimi-k2", "--isl", "1024", "--osl", "1024", "--batches",
      "1", "--quiet"], "its weights (1028.9 GB) exceed 0.9 of the HBM of all 8 chips"),
    (["serve", "hgx-h200", "--model", "deepseek-v3", "--isl", "1024", "--osl", "1024",
      "--batches", "100000", "--quiet"], "every batch asked exceeds the largest that fits"),
    # addressing
    (["translate", "sd200-ultra", "--host", "nohost", "0x1000"], "no host domain called 'nohost'"),
    (["translate", "sd200-ultra", "--host", "host1", "-1"], "non-negative"),
    (["translate", "sd200-ultra", "--host", "host1", "0xZZ"], "not a number"),
    (["translate", "sd200-ultra", "--host", "host1", "0x" + "f" * 24], "address width"),
    (["check", "/dev/null"], "[system] table"),
    (["check", "nosuch.toml"], "No such file"),
    # export, scaling, report
    (["export", "nvl72", "/nonexistent/dir/x.graphml"], "No such file"),
    (["export", "nvl72", "x.txt"], "cannot tell the format"),
    (["scaling", "--families", "bogus", "--out", "unused"], "unknown families"),
    (["scaling", "--sizes", "0", "--out", "unused"], "chip count >= 2"),
    (["scaling", "--collective-limit", "-1", "--out", "unused"],
     "argument --collective-limit: takes a whole number in ASCII digits 0-9, got '-1'"),
    (["scaling", "--decode-limit", "-5", "--out", "unused"],
     "argument --decode-limit: takes a whole number in ASCII digits 0-9, got '-5'"),
    (["scaling", "--jobs", "0", "--out", "unused"], "--jobs"),
    (["report", "bogus", "--out", "unused"], "unknown topology family or preset 'bogus'"),
    (["figures", "--out", "/nonexistent-dir/x", "--quiet"], "/nonexistent-dir does not exist"),  # was made
    (["report", "sd200-ultra", "--ops", "bogus", "--out", "unused"], "unknown collective operation 'bogus'"),
    (["report", "sd200-ultra", "--sizes", "0", "--out", "unused"], "> 0 bytes"),
]


@pytest.mark.parametrize("argv, fragment", BAD, ids=[" ".join(a)[:70] for a, _ in BAD])
def test_bad_input_is_one_line_and_exit_2(argv, fragment, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)         # nothing may be written where the tests run
    rc, out, err = _run(argv, capsys)
    lines = err.strip().splitlines()
    assert rc == 2, (rc, err)
    assert len(lines) == 1 and "Traceback" not in err, err
    assert fragment in lines[0], lines[0]
    assert out == ""
    assert not list(tmp_path.iterdir()), "bad input left files behind"


def _strict_json(text):
    def refuse(name):
        raise ValueError(f"not JSON: {name}")

    return json.loads(text, parse_constant=refuse)


def test_json_is_strict_even_for_a_one_rank_group(capsys):
    # A one-rank collective takes no time: its algorithm bandwidth is infinite, which
    # json.dumps writes as the non-JSON token Infinity. The CLI writes null.
    rc, out, _ = _run(["cost", "dgx-h100", "--op", "all-reduce", "--size", "1KiB",
                       "--ranks", "0", "--json"], capsys)
    assert rc == 0
    (row,) = _strict_json(out)
    assert row["time"] == 0.0 and row["algbw"] is None and row["units"]["algbw"] == "B/s"


def test_size_parsers_refuse_what_no_float_holds():
    for parse, text in ((fabric.parse_size, "1e400"), (fabric.parse_bandwidth, "1e400GB/s"),
                        (fabric.parse_time, "1e400s"), (fabric.parse_size, "1e302PiB")):
        with pytest.raises(fabric.SpecError, match="larger than the largest float"):
            parse(text)
    assert fabric.parse_size("1e300") == 10**300      # exact, as before


def test_api_refuses_sizes_that_would_overflow():
    f = topologies.build("sd200-ultra")
    with pytest.raises(fabric.SpecError, match="2\\*\\*63 - 1"):
        fabric.access(f, "chip0", f.address_map.regions_of("chip5")[0].base, size=2**63)
    for n in (2**64, 10**300, 1e300):
        with pytest.raises(fabric.SpecError, match="nbytes"):
            analysis.traffic(f, "all-to-all", n)
    for n in (math.nan, math.inf, -1, 0, "5", True):
        # a wrong kind ("5", True) is a TypeError (a SpecError before session 34)
        error = TypeError if n in ("5", True) and not isinstance(n, float) else fabric.SpecError
        with pytest.raises(error, match="nbytes must be a finite number > 0"):
            analysis.traffic(f, "all-to-all", n)


@pytest.mark.parametrize("kwargs, match", [
    ({"fusion_factor": math.inf}, "fusion_factor"),
    ({"launch_overhead": math.inf}, "launch_overhead"),
    ({"graph_kernel_overhead": math.inf}, "graph_kernel_overhead"),
    ({"graph_kernel_overhead": math.nan}, "graph_kernel_overhead"),
    ({"dispatch_bytes": -1}, "dispatch_bytes"),
    ({"dispatch_bytes": 0}, "dispatch_bytes"),
    ({"combine_bytes": math.nan}, "combine_bytes"),
    ({"combine_bytes": True}, "combine_bytes"),
])
def test_decode_step_refuses_non_finite_and_non_positive_settings(kwargs, match):
    f = topologies.build("sd200-ultra")
    # a value of the wrong kind (True) is a TypeError (STYLE's rule, session 32)
    error = fabric.SpecError if all(map(is_real, kwargs.values())) else TypeError
    with pytest.raises(error, match=match):
        analysis.decode_step("kimi-k2", f, batch=1, context=16, **kwargs)


@pytest.mark.parametrize("kwargs, match", [
    ({"runtime": "bogus"}, "unknown runtime 'bogus'"),
    ({"chip": "bogus"}, "unknown chip 'bogus'"),
])
def test_moe_exchange_refuses_unknown_names_even_where_unused(kwargs, match):
    # one-sided inside one NVLink domain uses neither the runtime nor the chip: a typo
    # must still not pass for a setting
    with pytest.raises(fabric.SpecError, match=match):
        analysis.moe_exchange(topologies.build("nvl72"), "deepseek-v3", 64, 8,
                              kernel="one-sided", dispatch_bytes=2, combine_bytes=2, **kwargs)


def test_scaling_study_refuses_bad_arguments_with_spec_error():
    with pytest.raises(fabric.SpecError, match="unknown families"):
        analysis.scaling_study(["bogus"])
    with pytest.raises(fabric.SpecError, match="decode_limit"):
        analysis.scaling_study(["torus"], [64], decode_limit=-1)


def test_the_real_entry_point_refuses_in_one_line_and_writes_strict_json():
    # two runs of `python -m analysis._cli`, started together (tests/hashseed.run_together)
    from hashseed import run_together

    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    cli = [sys.executable, "-m", "analysis._cli"]
    bad, ok = run_together([[*cli, "route", "sd200-ultra", "0", "5", "--size", "1e400"],
                            [*cli, "cost", "torus:4x4", "--op", "send-recv", "--size", "1KiB",
                             "--ranks", "0", "--json"]], env=env, cwd=ROOT, timeout=120)
    # bad input: exit 2, one line naming the problem, nothing on stdout
    assert bad.returncode == 2 and bad.stdout == ""
    assert len(bad.stderr.strip().splitlines()) == 1 and "largest float" in bad.stderr
    # JSON: strict (no NaN or Infinity), a one-rank send-recv has no bandwidth
    assert ok.returncode == 0, ok.stderr
    (row,) = _strict_json(ok.stdout)
    assert row["op"] == "send-recv" and row["algbw"] is None


def test_cost_refuses_a_negative_traffic_matrix_and_a_non_bool_overlap():
    import numpy as np

    f = topologies.build("dgx-h100")
    # an all-negative matrix divided by its negative total used to pass for a valid one
    for bad in (-np.ones((8, 8)), np.full((8, 8), np.nan)):
        with pytest.raises(ValueError, match="finite byte counts >= 0"):
            analysis.cost(f, "all-to-allv", bad)
    with pytest.raises(TypeError, match="overlap must be True or False"):
        analysis.cost(f, "all-reduce", 1024, overlap="yes")


@pytest.mark.parametrize("runtime", ["nccl", "nccl@2.21.5", "symmetric-memory", "ideal"])
def test_a_one_rank_group_names_the_runtime_asked_for(runtime):
    r = analysis.cost(topologies.build("dgx-h100"), "all-reduce", 1024, ranks=[0],
                      runtime=runtime)
    assert r.runtime == runtime and r.time == 0.0


@pytest.mark.parametrize("argv, fragment", [
    (["report", "--out", "afile/sub"], "afile is a file, not a directory"),
    (["report", "--out", "afile"], "exists and is not a directory"),
    (["scaling", "--out", "afile"], "exists and is not a directory"),   # before the study
    (["figures", "--out", "afile"], "exists and is not a directory"),   # before the report
    (["export", "nvl72", "afile/x.json"], "Not a directory"),
])
def test_an_output_path_through_a_file_is_one_line(argv, fragment, capsys, tmp_path,
                                                   monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "afile").write_text("keep me")
    rc, out, err = _run([*argv, "--quiet"] if argv[0] != "export" else argv, capsys)
    assert rc == 2 and len(err.strip().splitlines()) == 1 and fragment in err, err
    assert out == ""
    assert (tmp_path / "afile").read_text() == "keep me"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile"]


def test_json_of_a_degraded_fabric_says_the_unit_of_every_number(capsys):
    """`metrics --fail-*` adds a `failed` object whose ranks and lane counts had no unit."""
    from test_cli_json_units import _offenders

    rc, out, _ = _run(["metrics", "switch:8,planes=2,links=4", "--fail-lane", "chip0-sw0",
                       "--fail-chip", "chip3", "--fail-link", "chip1-sw1", "--json"], capsys)
    assert rc == 0
    (m,) = _strict_json(out)
    assert m["failed"]["chips"] == {"chip3": 3} and m["failed"]["lanes"] == [[["chip0", "sw0"], 1]]
    assert _offenders([m]) == []


def test_decode_header_says_a_forced_transport_does_not_steer_the_exchange_kernel(capsys):
    rc, out, _ = _run(["decode", "cluster-128", "--model", "deepseek-v3", "--batch", "8",
                       "--ep-kernel", "deepep-normal", "--transport", "loadstore"], capsys)
    assert rc == 0
    assert "transport loadstore (collectives; deepep-normal picks its own)" in out.splitlines()[0]


def test_traffic_refuses_fractional_hot_ranks_and_negative_seeds():
    # a wrong kind, a TypeError since session 35 (was a NodeError)
    with pytest.raises(TypeError, match=r"hot\[0\] must be a rank \(an integer\)"):
        analysis.traffic(8, "hotspot", 1.0, hot=[1.5])       # was truncated to rank 1
    with pytest.raises(TypeError, match=r"hot\[0\] must be a rank \(an integer\)"):
        analysis.traffic(8, "hotspot", 1.0, hot=[True])
    # a wrong kind is a TypeError, a wrong value a SpecError (lead, session 31)
    for seed, error in ((-1, fabric.SpecError), (1.5, TypeError), ("x", TypeError),
                        (True, TypeError)):
        with pytest.raises(error, match="seed"):
            analysis.traffic(8, "permutation", 1.0, seed=seed)
    assert analysis.traffic(8, "hotspot", 1.0, hot=3).total == 8.0


def test_cost_table_shows_no_infinite_bandwidth(capsys):
    rc, out, err = _run(["cost", "dgx-h100", "--op", "send-recv", "--size", "1KiB", "--ranks",
                         "0"], capsys)
    assert rc == 0 and "inf" not in out, err   # it printed 'infPB/s' for a one-rank group
