"""Audit, session 11: hostile address plans (the engineer checking a plan before programming).

A system file is TOML, and TOML has floats: ``local_base = 18014398509481985.0`` (2**54 + 1,
not 4 KiB aligned) reached the plan as 2**54, so ``check`` said the plan was clean and
``translate`` answered at an address the file does not hold. A float holds every whole
number only below 2**53; at or above it an address or a size given as a float is refused
with a message naming the key (the CLI: a finding and exit 1 for ``check``, one line and
exit 2 for ``translate``), and ``fabric.parse_address`` refuses such a float too. Floats
below 2**53 are exact and keep working. Each test failed before the fix.

Session 38 (OLDER-A-18, lead's decision): an address is an integer or address text; a float
is refused BY KIND in the API (parse_address, as validate_address) and the system file alike,
whatever its size: the tests of the float addresses below now pin that refusal, named by the
key. Sizes keep reals (a float size past 2**53 is still refused by its exactness).
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import topologies
from analysis._cli import main
from fabric import check
from fabric._units import parse_address

HEAD = '[system]\ntopology = "hypermesh:4x4,hosts=4,chip=h100"\n\n'


def _window(local_base, size='"4KiB"'):
    return (HEAD + '[[windows]]\nhost = "host0"\nname = "w"\n'
            f'local_base = {local_base}\ntarget = "chip15"\nsize = {size}\n'
            'page_size = "4KiB"\n')


def _run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_a_float_window_base_past_2_53_is_refused_not_rounded(tmp_path, capsys):
    path = tmp_path / "plan.toml"
    path.write_text(_window("18014398509481985.0"))       # 2**54 + 1: misaligned
    found = check(topologies.read_system(path.read_text()))
    bad = [f for f in found if f.severity == "error"]
    said = "local_base must be an integer or a string such as '0x4000_0000', got "
    assert bad and said + "1.8014398509481984e+16 (a float)" in bad[0].message
    code, out, _ = _run(capsys, "check", str(path))
    assert code == 1 and said in out
    code, out, err = _run(capsys, "translate", str(path), "--host", "host0", "0x40000000000000")
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and "local_base" in lines[0], err


@pytest.mark.parametrize("text", [
    HEAD + '[[regions]]\nbase = 1.8014398509481984e16\nsize = "4KiB"\nowner = "chip0"\n'
           'kind = "mmio"\n',
    HEAD + '[[regions]]\nbase = "0x40_0000_0000_0000"\nsize = 1.8014398509481984e16\n'
           'owner = "chip0"\nkind = "mmio"\n',
    _window('"0x40_0000_0000_0000"', size="9.007199254740993e15"),
])
def test_float_addresses_and_sizes_past_2_53_are_named(text):
    bad = [f for f in check(topologies.read_system(text)) if f.severity == "error"]
    # a float address by its kind (session 38), a float size past 2**53 by its exactness
    assert any("2**53" in f.message or "(a float)" in f.message for f in bad), \
        [f.message for f in bad]


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**62 // 4096), st.booleans())
def test_a_float_base_is_refused_by_kind_and_an_int_read_exactly(pages, as_float):
    """Brute force: an integer base is read as that very number; a float one is refused by
    its kind, whatever its size (it was read below 2**53, refused by exactness above)."""
    base = pages * 4096
    written = repr(float(base)) if as_float else str(base)
    s = topologies.read_system(_window(written))
    refused = [f.message for f in check(s) if "local_base must be an integer" in f.message]
    if as_float:
        assert refused == [("local_base must be an integer or a string such as '0x4000_0000', "
                            f"got {float(base)!r} (a float)")]
    else:
        assert not refused
        (w,) = [w for w in s.fabric.address_plan.windows if w.name == "w"]
        assert w.local_base == base


@pytest.mark.parametrize("value", [4096.0, 2.0**53, 18014398509481985.0, np.float64(2.0**60),
                                   np.float32(2.0**60)])
def test_parse_address_refuses_a_float_by_kind(value):
    with pytest.raises(TypeError, match=r"^address must be an integer or text such as "
                                        r"'0x4000_0000', got .* \(a float(32|64)?\)$"):
        parse_address(value)
    assert parse_address(np.int64(4096)) == parse_address(4096) == 4096
