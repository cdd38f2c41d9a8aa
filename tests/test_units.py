import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fabric import (
    GiB,
    KiB,
    format_bandwidth,
    format_size,
    format_time,
    parse_address,
    parse_bandwidth,
    parse_size,
    parse_time,
)


@pytest.mark.parametrize("text, expected", [
    ("96GiB", 96 * 2**30), ("4 kB", 4000), ("1.5KiB", 1536), ("64B", 64), ("2TB", 2 * 10**12),
    ("1_024", 1024), ("0x10", None), (4096, 4096),
])
def test_parse_size(text, expected):
    if expected is None:
        with pytest.raises(ValueError, match="0x10"):
            parse_size(text)
    else:
        assert parse_size(text) == expected


@pytest.mark.parametrize("bad", ["12Gb", "1.5B", "GiB", "3 parsecs", "-4KiB", 1.5])
def test_parse_size_refuses(bad):
    with pytest.raises(ValueError):
        parse_size(bad)


@pytest.mark.parametrize("text, expected", [
    ("400Gb/s", 50e9), ("50GB/s", 50e9), ("25 GB/s", 25e9), ("1.6TB/s", 1.6e12),
    ("8Mib/s", 2**20), (1e9, 1e9),
])
def test_parse_bandwidth(text, expected):
    assert parse_bandwidth(text) == pytest.approx(expected, rel=1e-15)


@pytest.mark.parametrize("bad", ["400G", "400Gb", "400/s", "fast"])
def test_parse_bandwidth_refuses(bad):
    with pytest.raises(ValueError):
        parse_bandwidth(bad)


@pytest.mark.parametrize("text, expected", [
    ("0.69us", 0.69e-6), ("120ns", 120e-9), ("5.85ms", 5.85e-3), ("2s", 2.0), ("1µs", 1e-6),
])
def test_parse_time(text, expected):
    assert parse_time(text) == expected


def test_parse_time_refuses_unit():
    with pytest.raises(ValueError, match="unit must be one of"):
        parse_time("3 fortnights")


@pytest.mark.parametrize("text, expected", [
    ("0x4000_0000", 2**30), ("4096", 4096), ("0o10", 8), (17, 17),
])
def test_parse_address(text, expected):
    assert parse_address(text) == expected


@pytest.mark.parametrize("bad, exc", [("banana", ValueError), ("-1", ValueError),
                                      (-5, ValueError), (True, TypeError), (1.5, ValueError)])
def test_parse_address_refuses(bad, exc):
    with pytest.raises(exc):
        parse_address(bad)


def test_format():
    assert format_size(3 * GiB) == "3GiB"
    assert format_size(1536) == "1.5KiB"
    assert format_size(3 * 10**9, binary=False) == "3GB"
    assert format_bandwidth(450e9) == "450GB/s"
    assert format_time(0.69e-6) == "690ns"
    assert format_time(5.85e-3) == "5.85ms"
    assert format_time(0) == "0s"


@given(st.integers(min_value=0, max_value=2**60))
def test_size_round_trip_in_bytes(n):
    assert parse_size(f"{n}B") == n


@given(st.integers(min_value=1, max_value=10**6))
def test_kib_is_binary(n):
    assert parse_size(f"{n}KiB") == n * KiB


@given(st.floats(min_value=1e-12, max_value=10, allow_nan=False))
def test_format_time_parses_back(t):
    assert math.isclose(parse_time(format_time(t)), t, rel_tol=1e-3)
