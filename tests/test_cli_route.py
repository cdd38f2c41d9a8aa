"""``cofabric route | latency | throughput``."""

import json

import pytest

from analysis._cli import main


def _run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_route_text_and_json(capsys):
    code, out, _ = _run(capsys, "route", "sd200-ultra", "0", "127")
    assert code == 0 and "chip0 -> chip7 -> chip31 -> chip127" in out and "(3 hops)" in out
    code, out, _ = _run(capsys, "route", "sd200-ultra", "chip0", "chip127", "--op", "store",
                        "--json")
    d = json.loads(out)
    assert d["hops"] == 3 and d["breakdown_s"]["forward"] == pytest.approx(0.69e-6)
    assert d["total_s"] == pytest.approx(20e-9 + 690e-9 + 80 / 64e9 + 10e-9)


def test_latency_json(capsys):
    code, out, _ = _run(capsys, "latency", "sd200-ultra", "--transport", "rdma", "--op",
                        "store", "--json")
    d = json.loads(out)
    assert code == 0 and d["pairs"] == 128 * 127
    assert d["min_s"] <= d["p50_s"] <= d["p99_s"] <= d["max_s"]
    code, out, _ = _run(capsys, "latency", "tpu-v4-cube")
    assert code == 0 and "p99" in out


def test_throughput_and_failures(capsys):
    code, out, _ = _run(capsys, "throughput", "torus:4x4", "--traffic", "all-to-all",
                        "--bytes", "1", "--json")
    d = json.loads(out)
    assert code == 0 and d["throughput_k"] == pytest.approx(8e9)
    code, out, _ = _run(capsys, "throughput", "torus:4x4", "--bytes", "1", "--json",
                        "--fail-link", "chip0-chip1")
    assert json.loads(out)["throughput_k"] < 8e9
    code, out, _ = _run(capsys, "route", "torus:4x4", "0", "2", "--fail-link", "chip0-chip1",
                        "--json")
    # the failed link's bytes take its bypass, the rest of the route stays (local repair)
    assert json.loads(out)["path"] == ["chip0", "chip12", "chip13", "chip1", "chip2"]
    code, out, _ = _run(capsys, "latency", "fattree:k=4", "--fail-chip", "chip3", "--json")
    assert json.loads(out)["pairs"] == 15 * 14


@pytest.mark.parametrize("argv,msg", [
    (["route", "sd200-ultra", "0", "chip999"], "no node called 'chip999'"),
    (["latency", "sd200-ultra", "--transport", "pigeon"], "unknown transport 'pigeon'"),
    (["throughput", "torus:4x4", "--traffic", "tornado"], "unknown traffic 'tornado'"),
    (["route", "torus:4x4", "0", "1", "--fail-link", "chip0-chip5"], "no such link"),
    (["route", "mesh:3", "0", "2", "--fail-link", "chip1-chip2"], "no route from 'chip0'"),
])
def test_bad_input_is_one_line_and_status_2(capsys, argv, msg):
    code, _, err = _run(capsys, *argv)
    assert code == 2 and msg in err and err.count("\n") == 1
