"""``cofabric cost``: size ranges, ranks, JSON, and one-line errors."""

import json

import pytest

from analysis import cost
from analysis._cli import main
from analysis._cli_cost import parse_ranks, parse_sizes


@pytest.mark.parametrize("tokens, sizes", [
    (["1KiB:1GiB:x2"], [2**k for k in range(10, 31)]),
    (["1KiB:1GiB"], [2**k for k in range(10, 31)]),
    (["1KiB:10KiB:x4"], [1024, 4096]),
    (["1KiB:4KiB:+1KiB"], [1024, 2048, 3072, 4096]),
    (["4096", "1MiB"], [4096, 2**20]),
    (["1KiB,2KiB"], [1024, 2048]),
    (["1000:1000"], [1000]),
])
def test_parse_sizes(tokens, sizes):
    assert parse_sizes(tokens) == sizes


@pytest.mark.parametrize("tokens, match", [
    (["0"], "must be > 0"), (["1GiB:1KiB"], "STOP is below START"),
    (["1KiB:1GiB:x1"], "factor must be > 1"), (["1KiB:1GiB:y2"], "must be xF"),
    (["1KiB:2KiB:3KiB:4KiB"], "START:STOP"), (["1KiB:1TiB:+1"], "more than"),
    (["lots"], "cannot read size"),
])
def test_parse_sizes_refuses(tokens, match):
    with pytest.raises(ValueError, match=match):
        parse_sizes(tokens)


def test_parse_ranks():
    assert parse_ranks(["0-3", "7", "chip9"]) == [0, 1, 2, 3, 7, "chip9"]
    with pytest.raises(ValueError, match="backwards"):
        parse_ranks(["5-2"])


def test_json_matches_the_library(capsys):
    assert main(["cost", "dgx-h100", "--op", "all-reduce", "all-gather",
                 "--size", "1KiB:1MiB:x32", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [(r["op"], r["size"]) for r in rows] == [
        ("all-reduce", 1024), ("all-reduce", 32768), ("all-reduce", 1048576),
        ("all-gather", 1024), ("all-gather", 32768), ("all-gather", 1048576)]
    import topologies
    f = topologies.build("dgx-h100")
    for r in rows:
        assert set(r) == {"op", "size", "runtime", "algorithm", "protocol", "transport", "time",
                          "algbw", "busbw", "lower_bound", "units"}
        assert r["units"] == {"size": "B", "time": "s", "algbw": "B/s", "busbw": "B/s",
                              "lower_bound": "s"}
        want = cost(f, r["op"], r["size"])
        assert r["runtime"] == "nccl" and r["protocol"] == want.protocol
        assert r["time"] == want.time and r["algorithm"] == want.algorithm
        assert r["busbw"] == want.busbw and r["transport"] == want.transport
        assert r["lower_bound"] == want.lower_bound <= r["time"]


def test_table_and_options(capsys):
    assert main(["cost", "cluster-128", "--op", "all-reduce", "--size", "1MiB",
                 "--algorithm", "ring", "--transport", "rdma", "--ranks", "0-7"]) == 0
    out = capsys.readouterr().out
    assert "ring" in out and "rdma" in out and "8 ranks" in out


@pytest.mark.parametrize("argv, match", [
    (["cost", "dgx-h100", "--op", "all-reduce", "--size", "-5"], "size"),
    (["cost", "dgx-h100", "--op", "all-shuffle", "--size", "1MiB"], "unknown collective"),
    (["cost", "dgx-h100", "--op", "all-reduce", "--size", "1MiB", "--algorithm", "warp"],
     "unknown algorithm"),
    (["cost", "dgx-h100", "--op", "all-reduce", "--size", "1MiB", "--ranks", "0", "0"],
     "twice"),
    (["cost", "dgx-h100", "--op", "all-reduce", "--size", "1MiB", "--ranks", "0-8"],
     "out of range"),
    (["cost", "cluster-128", "--op", "all-reduce", "--size", "1MiB", "--transport",
      "loadstore"], "cannot carry"),
    (["cost", "dgx-h100", "--op", "all-reduce", "--size", "1MiB", "--transport", "smoke"],
     "unknown transport"),
    (["cost", "nosuch:3", "--op", "all-reduce", "--size", "1MiB"], ""),
    (["cost", "dgx-h100", "--op", "all-to-allv", "--size", "1MiB"], "traffic matrix"),
])
def test_errors_are_one_line_exit_2(argv, match, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("cofabric cost: error:")
    assert match in err


def test_runtime_flag(capsys):
    assert main(["cost", "dgx-h100", "--op", "all-reduce", "--size", "1KiB", "--runtime",
                 "ideal", "--json"]) == 0
    ideal = json.loads(capsys.readouterr().out)[0]
    assert main(["cost", "dgx-h100", "--op", "all-reduce", "--size", "1KiB", "--json"]) == 0
    nccl = json.loads(capsys.readouterr().out)[0]
    assert ideal["runtime"] == "ideal" and ideal["protocol"] is None
    assert nccl["runtime"] == "nccl" and nccl["time"] > 10 * ideal["time"]


def test_unknown_runtime_is_one_line(capsys):
    assert main(["cost", "dgx-h100", "--op", "all-reduce", "--size", "1KiB", "--runtime",
                 "mpi"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "unknown runtime 'mpi'" in err[0]


def test_runtime_flag_takes_an_nccl_release(capsys):
    # NCCL 2.23.4 does not enable NVLS on a node of 2 GPUs (nvls.cc; from 2.28.7 it does), so
    # asked for NVLS it runs the ring: the release reaches the model
    argv = ["cost", "dgx-h100", "--op", "all-reduce", "--size", "4294967296", "--ranks", "0-1",
            "--algorithm", "in-switch", "--json", "--runtime"]
    assert main(argv + ["nccl@2.23.4"]) == 0
    old = json.loads(capsys.readouterr().out)[0]
    assert main(argv + ["nccl"]) == 0
    new = json.loads(capsys.readouterr().out)[0]
    assert old["runtime"] == "nccl@2.23.4" and new["runtime"] == "nccl"
    assert (old["algorithm"], new["algorithm"]) == ("ring", "in-switch")
    for bad in ("nccl@2.1", "nccl@x.y", "ideal@2.21.5"):
        assert main(argv + [bad]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("cofabric cost: error:")


def test_a_version_that_stands_for_a_tag_is_named_both_ways(capsys):
    # audit s10: `--runtime nccl@2.28.5` printed 'nccl@2.28.3' (cost) or 'nccl@2.28.5'
    # (decode), each hiding the other; both now print what ran and what was asked.
    assert main(["cost", "dgx-h100", "--op", "all-reduce", "--size", "1KiB", "--runtime",
                 "nccl@2.28.5"]) == 0
    assert "runtime nccl@2.28.3 (for nccl@2.28.5);" in capsys.readouterr().out
    assert main(["decode", "nvl72", "--model", "kimi-k2", "--runtime",
                 "nccl@2.28.5"]) == 0
    assert "runtime nccl@2.28.3 (for nccl@2.28.5)," in capsys.readouterr().out
    assert main(["cost", "dgx-h100", "--op", "all-reduce", "--size", "1KiB", "--runtime",
                 "nccl@2.21.5"]) == 0
    assert "runtime nccl@2.21.5;" in capsys.readouterr().out
