"""Audit, session 19: integers written as text are read by one reader, ASCII only
(lead's decision).

``fabric._units.parse_integer`` reads ASCII decimal digits, with options for hex after
``0x`` (addresses), one ``_`` between two digits (addresses, sizes) and a leading ``-``
(``is_numeral``: specs, ranks, layouts). Before it, ``parse_address`` read ``int(text, 0)``
and every CLI integer flag argparse's ``int``: fullwidth and Arabic-Indic digits
('\uff18' as 8), ``0b``/``0o`` literals, ``+8``, ``1_0`` and ``0x_1`` were read, while
``parse_size`` and the spec parser took ASCII only. Each test below failed before the fix.
"""

import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from analysis._cli import build_parser, main
from fabric import SpecError, check
from fabric._units import is_numeral, parse_address, parse_size

TAKES = "takes a whole number in ASCII digits 0-9, got"

#: Every integer flag, after arguments that make the command fail fast if the flag's
#: value were read (an unknown system or model): the flag's refusal must come first.
FLAGS = [
    (["decode", "nosuch", "--model", "nosuch"], flag)
    for flag in ("--batch", "--context", "--graph-batch", "--draft-length")
] + [
    (["serve", "nosuch", "--model", "nosuch", "--isl", "8", "--osl", "8"], flag)
    for flag in ("--isl", "--osl", "--max-batched-tokens", "--micro-batches")
] + [
    (["scaling", "--families", "nosuch", "--out", "unused"], flag)
    for flag in ("--sizes", "--collective-limit", "--decode-limit", "--jobs")
] + [(["report", "nosuch", "--out", "unused"], "--jobs"), (["throughput", "nosuch"], "--seed")]

#: Read by int() as the number they denote (or, for 0b1, refused by int() only): each
#: is now refused by the flag, by name.
HOSTILE = ["\uff18", "\u0668", "+8", "1_0", "0b1", "0x8", "-1", " \u0663 "]


def _flag_id(case):
    return f"{case[0][0]}{case[1]}"


def _one_line_refusal(argv, capsys):
    """The CLI's refusal of argv: argparse's exit 2 with one line on stderr, returned."""
    with pytest.raises(SystemExit) as e:
        main(argv)
    err = capsys.readouterr().err
    assert e.value.code == 2 and err.count("\n") == 1
    return err


@pytest.mark.parametrize("builtin", [int, float])
def test_no_flag_reads_with_a_builtin_number_type(builtin):
    # a flag added later with type=int or type=float would read '\uff18' or '\u0663' again
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    found = [(name, a.option_strings) for name, p in sub.choices.items()
             for a in p._actions if a.type is builtin]
    assert found == []


@pytest.mark.parametrize("value", HOSTILE)
@pytest.mark.parametrize("case", FLAGS, ids=_flag_id)
def test_every_integer_flag_refuses_non_ascii_digits_signs_and_literals(case, value,
                                                                         capsys):
    prefix, flag = case
    err = _one_line_refusal(prefix + [f"{flag}={value}"], capsys)
    assert f"argument {flag}: {TAKES} {value!r}" in err


@pytest.mark.parametrize("case", FLAGS, ids=_flag_id)
def test_every_integer_flag_reads_ascii_digits(case):
    prefix, flag = case
    args = build_parser().parse_args(prefix + [flag, "8"])
    dest = flag.lstrip("-").replace("-", "_")
    assert getattr(args, dest) in (8, [8])


@pytest.mark.parametrize("batches", ["\u0668,16", "+8,16", "8,1_6", "8,-16", "8,0x10"])
def test_serve_batches_refuses_what_an_int_flag_refuses(batches, capsys):
    argv = ["serve", "nvl72", "--model", "kimi-k2", "--isl", "1024", "--osl", "1024",
            "--batches", batches]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert f"--batches must be comma-separated integers in ASCII digits 0-9, got {batches!r}" \
        in err


@pytest.mark.parametrize("text", [
    "\uff14\uff10\uff19\uff16", "0x\u0663", "\u0664\u0663", "0b101", "0o17", "0O17", "+12",
    "0x_1", "0x1__0", "1_", "_1", "1__0", "0777", "00", "0x", "-0b1", "0x1_", "1 000"])
def test_parse_address_refuses_what_is_not_ascii_decimal_or_hex(text):
    with pytest.raises(SpecError, match="is not a number: ASCII digits 0-9, or hex after 0x"):
        parse_address(text)


@pytest.mark.parametrize("text, value", [
    ("0x4000_0000", 2**30), (" 4096 ", 4096), ("0X1F", 31), ("0", 0), ("0x0", 0),
    ("1_024", 1024), ("0xdead_BEEF", 0xDEADBEEF), ("0x" + "f" * 40, 16**40 - 1)])
def test_parse_address_reads_ascii_decimal_and_hex(text, value):
    assert parse_address(text) == value


def test_translate_refuses_fullwidth_digits(capsys):
    assert main(["translate", "hgx-h200", "--host", "host0", "\uff14\uff10\uff19\uff16"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "is not a number: ASCII digits 0-9" in err


def test_a_system_file_address_in_fullwidth_digits_is_a_finding(tmp_path):
    import topologies

    p = tmp_path / "plan.toml"
    p.write_text('[system]\ntopology = "torus:2x2,hosts=2,chip=h100"\n[[windows]]\n'
                 'host = "host0"\nname = "w"\nlocal_base = "0x\uff11000_0000"\n'
                 'target = "chip1"\nsize = "4KiB"\npage_size = "4KiB"\n')
    found = [f.message for f in check(topologies.load_system(str(p))) if f.code == "invalid"]
    assert any("local_base" in m and "is not a number" in m for m in found), found


@pytest.mark.parametrize("text", ["1_", "1__000", "1.5_KiB", "1_KiB", "1._5KiB", "_1KiB"])
def test_parse_size_groups_digits_as_addresses_do(text):
    with pytest.raises(SpecError, match="expected a number and a unit"):
        parse_size(text)


@pytest.mark.parametrize("text, value", [("1_024", 1024), ("1_000.2_5kB", 1000250),
                                         ("1.5KiB", 1536), (".5_0KiB", 512)])
def test_parse_size_reads_grouped_digits(text, value):
    assert parse_size(text) == value


# ----------------------------------------------------------------------------------------
# parse_integer against a reference written from its docstring: a walk over the text's
# characters, no regular expression

_ALPHABET = "0123456789abcdefABCDEFxXob_+- \u0663\uff18"


def _reference(text, hex, grouping, signed):
    t = text.strip()
    negative = signed and t.startswith("-")
    if negative:
        t = t[1:]
    digits = string.digits
    base = 10
    if hex and t[:2] in ("0x", "0X"):
        t, digits, base = t[2:], string.hexdigits, 16
    groups = t.split("_")
    if not grouping and len(groups) > 1:
        return None
    if any(g == "" or any(c not in digits for c in g) for g in groups):
        return None
    t = "".join(groups)
    if hex and base == 10 and len(t) > 1 and t[0] == "0":
        return None                  # 0777 would be octal in C: refused where hex is read
    value = 0
    for c in t:
        value = value * base + int(c, 16)
    return -value if negative else value


_texts = st.one_of(
    st.text(_ALPHABET, max_size=8),
    st.builds(lambda sign, prefix, groups, pad: pad + sign + prefix + "_".join(groups) + pad,
              st.sampled_from(["", "-", "+"]), st.sampled_from(["", "0x", "0X", "0b", "0"]),
              st.lists(st.text("0123456789abcdefF", min_size=0, max_size=3), min_size=1,
                       max_size=3),
              st.sampled_from(["", " "])))


@settings(max_examples=300, deadline=None)
@given(_texts, st.booleans(), st.booleans(), st.booleans())
def test_parse_integer_is_its_documented_rule(text, hex, grouping, signed):
    from fabric._units import parse_integer

    expected = _reference(text, hex, grouping, signed)
    if expected is None:
        with pytest.raises(SpecError, match="is not a number: ASCII digits 0-9"):
            parse_integer(text, "n", hex=hex, grouping=grouping, signed=signed)
    else:
        assert parse_integer(text, "n", hex=hex, grouping=grouping, signed=signed) == expected
    # is_numeral is the same rule with a sign, on text without surrounding spaces
    assert is_numeral(text) == (text == text.strip()
                                and _reference(text, False, False, True) is not None)


# ----------------------------------------------------------------------------------------
# numbers that are not counts (lead, session 19: floats too): one reader, parse_real

REAL_TAKES = "takes a number in ASCII digits 0-9, one '.', an exponent, got"

#: Every float flag, after arguments that make the command fail fast if it were read.
REAL_FLAGS = [
    (["decode", "nosuch", "--model", "nosuch"], flag)
    for flag in ("--skew", "--launch-overhead", "--hbm-efficiency", "--compute-efficiency",
                 "--acceptance", "--draft-cost", "--fusion", "--moe-hbm-efficiency",
                 "--expert-balance")
] + [(["serve", "nosuch", "--model", "nosuch", "--isl", "8", "--osl", "8"], flag)
     for flag in ("--draft-cost", "--chip-price", "--fusion")]


@pytest.mark.parametrize("value", ["\u0663", "\uff10.5", "0\u066b5", "0x1p3", "1e1_0", ""])
@pytest.mark.parametrize("case", REAL_FLAGS, ids=_flag_id)
def test_every_number_flag_refuses_other_scripts_digits(case, value, capsys):
    prefix, flag = case
    err = _one_line_refusal(prefix + [f"{flag}={value}"], capsys)
    assert f"argument {flag}: {REAL_TAKES} {value!r}" in err


@pytest.mark.parametrize("value, read", [("0.5", 0.5), ("1e-3", 1e-3), ("1_0.2_5", 10.25),
                                         (" .5 ", 0.5), ("-2", -2.0), ("+3.", 3.0)])
@pytest.mark.parametrize("case", REAL_FLAGS[:2], ids=_flag_id)
def test_number_flags_read_ascii_decimals(case, value, read):
    prefix, flag = case
    args = build_parser().parse_args(prefix + [f"{flag}={value}"])
    assert getattr(args, flag.lstrip("-").replace("-", "_")) == read


def test_nan_and_inf_still_reach_the_api_that_names_them(capsys):
    assert main(["decode", "sd200-ultra", "--model", "kimi-k2", "--skew", "nan"]) == 2
    assert "skew" in capsys.readouterr().err


def test_overlap_refuses_other_scripts_digits(capsys):
    with pytest.raises(SystemExit):
        main(["decode", "nosuch", "--model", "nosuch", "--overlap", "\u0660.5"])
    assert "argument --overlap: expected a fraction in [0, 1]" in capsys.readouterr().err


def test_a_size_range_factor_is_ascii_as_its_sizes():
    from analysis import parse_sizes

    assert parse_sizes("1KiB:4KiB:x2") == [1024, 2048, 4096]
    with pytest.raises(SpecError, match=r"step 'x\u0662' must be xF with a number F > 1"):
        parse_sizes("1KiB:4KiB:x\u0662")


@settings(max_examples=200, deadline=None)
@given(st.text("0123456789._eE+- \u0663\uff15", max_size=8))
def test_parse_real_reads_what_float_reads_in_ascii_and_nothing_else(text):
    from fabric._units import parse_real

    try:
        value = parse_real(text, "x")
    except SpecError:
        return
    assert text.isascii() and value == float(text)      # float() agrees on what was read


@pytest.mark.parametrize("argv, flag, value", [
    (["report", "--sizes", "-1KiB"], "--sizes", "-1KiB"),
    (["cost", "nvl72", "--op", "all-reduce", "--size", "-1KiB"], "--size", "-1KiB"),
    (["decode", "nvl72", "--model", "kimi-k2", "--skew", "-1e3"], "--skew", "-1e3"),
])
def test_a_value_taken_for_an_option_is_named_with_the_way_to_pass_it(argv, flag, value,
                                                                      capsys):
    # argparse alone says only 'expected one argument' for a value starting with '-'
    err = _one_line_refusal(argv, capsys)
    assert f"got {value!r}, which reads as an option" in err and f"write {flag}={value}" in err
