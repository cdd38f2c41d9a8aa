"""One reader of message sizes: ``cofabric cost --size``, ``cofabric report --sizes`` and
``analysis.report(sizes=)`` accept the same tokens and refuse the same ones with the same
message (they had two parsers with different rules: the report's had no size cap, so
``1:1TiB:+1`` never returned, and refused ``1KiB:1GiB`` and ``x1.5``)."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import analysis
from analysis import _cli_cost, _report
from analysis._cli import main
from analysis._sizes import MAX_SIZES, parse_sizes
from fabric import SpecError


def test_one_parser():
    assert _cli_cost.parse_sizes is analysis.parse_sizes is _report.parse_sizes is parse_sizes


# "0" alone: `cofabric cost` answers an empty operation since session 31 (lead 07:30; the
# report still refuses it: tests/test_runtime_s31_empty.py); a range from 0 both refuse
BAD = ["0:1KiB", "-1KiB", "1.5", "12 parsecs", "1Kib", "1GiB:1KiB", "1KiB:1GiB:x1",
       "1KiB:1GiB:xnan", "1KiB:1GiB:xinf", "1KiB:1GiB:y2", "1KiB:2KiB:3KiB:4KiB",
       "1KiB:", ":1KiB", "1:1TiB:+1", "1:1TiB:x1.0000001", "1:10:+0", "1:10:+-1",
       ",", "1:1e400"]


@pytest.mark.parametrize("token", BAD)
def test_both_clis_refuse_a_bad_size_with_the_same_line(token, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SpecError) as want:
        parse_sizes([token])
    lines = []
    for argv in (["cost", "torus:3x3", "--op", "all-reduce", f"--size={token}"],
                 ["report", "torus:3x3", "--quiet", f"--sizes={token}"]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "Traceback" not in err
        lines.append(err.split(": error: ", 1)[1])
    assert lines[0] == lines[1] == str(want.value) + "\n"
    assert list(tmp_path.iterdir()) == []          # the report wrote nothing


@settings(max_examples=60, deadline=None)
@given(start=st.integers(1, 5000), span=st.integers(0, 100_000),
       mul=st.sampled_from(["x2", "x3", "x1.5", "x10", "+1000", "+7", None]))
def test_a_range_is_its_brute_force(start, span, mul):
    stop = start + span
    token = f"{start}:{stop}" + (f":{mul}" if mul else "")
    mul = mul or "x2"
    if mul[0] == "+":
        want = list(range(start, stop + 1, int(mul[1:])))
    else:
        f = float(mul[1:])
        want, k = set(), 0
        while round(start * f ** k) <= stop:
            want.add(round(start * f ** k))
            k += 1
        want = sorted(want)
    if len(want) > MAX_SIZES:
        with pytest.raises(SpecError, match="more than"):
            parse_sizes(token)
    else:
        assert parse_sizes(token) == want
        assert parse_sizes([token, str(start), f"{stop},{start}"]) == sorted({*want, stop})


def test_units_and_order():
    assert parse_sizes(["1MB", "1MiB", "1kB,1KiB", 64]) == [64, 1000, 1024, 10**6, 2**20]
    assert parse_sizes(["1KiB:1GiB"]) == [2 ** k for k in range(10, 31)]
    with pytest.raises(SpecError, match="at least one size"):
        parse_sizes([])
    with pytest.raises(TypeError, match="bool"):
        parse_sizes([True])
