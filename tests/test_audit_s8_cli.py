"""Audit (session 8): malformed system files and plans through the CLI and the API.

* ``topology = 5`` (or a list, or a table) in a system file was an internal error
  (exit 3, "TypeError: a spec must be a string") from ``check``, ``translate`` and
  ``route``; it is bad input: one line naming the file, exit 2.
* A region giving both ``owner`` and ``owners`` silently took ``owners`` (the file said
  two things; the plan kept one, and ``check`` called it clean).
* ``hbm_bytes`` below one 4 KiB page gave one "size 0 must be > 0" finding per chip,
  none naming the cause; now one finding names ``hbm_bytes``.
"""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import topologies
from analysis import parse_layout
from analysis._cli import main
from fabric import AddressMapError, AddressPlan, NodeError, SpecError, check

SYSTEM = '[system]\ntopology = "sd200-ultra"\n'
_TORUS = topologies.build("torus:4x4")


def _run(argv, capsys):
    rc = main(argv)
    out, err = capsys.readouterr()
    return rc, out, err


@pytest.mark.parametrize("value", ["5", '["sd200-ultra"]', "{ spec = 1 }", "true", "1.5"])
@pytest.mark.parametrize("command", [["check"], ["translate", "--host", "host0", "0x1000"],
                                     ["route", "0", "9"], ["latency", "--quiet"]])
def test_a_topology_that_is_not_a_string_is_one_line_and_exit_2(value, command, tmp_path,
                                                                   capsys):
    path = tmp_path / "s.toml"
    path.write_text(f"[system]\ntopology = {value}\n")
    rc, out, err = _run([command[0], str(path), *command[1:]], capsys)
    assert rc == 2 and out == "", err
    assert len(err.strip().splitlines()) == 1
    assert "topology must be a string" in err and str(path) in err
    assert "internal error" not in err


def test_a_region_with_owner_and_owners_is_a_finding(tmp_path, capsys):
    path = tmp_path / "s.toml"
    path.write_text(SYSTEM + '[[regions]]\nname = "pool"\nbase = "0x7f00_0000_0000"\n'
                    'size = "1GiB"\nkind = "dram"\nowner = "host0"\nowners = ["host1"]\n')
    found = check(topologies.load_system(path))
    assert [(x.code, x.severity) for x in found] == [("invalid", "error")]
    assert "owner = 'host0' and owners = ['host1']" in found[0].message
    assert found[0].where.endswith(":3 regions[0]")
    rc, out, _ = _run(["check", str(path)], capsys)
    assert rc == 1 and "give one of them" in out
    # either alone is clean
    for one in ('owner = "host0"', 'owners = ["host1"]'):
        path.write_text(SYSTEM + '[[regions]]\nname = "pool"\nbase = "0x7f00_0000_0000"\n'
                        f'size = "1GiB"\nkind = "dram"\n{one}\n')
        assert check(topologies.load_system(path)) == []


@pytest.mark.parametrize("hbm", [0, 1, 100, 4095])
def test_hbm_below_one_page_is_named_once(hbm):
    f = topologies.build("sd200-ultra").replace(address_plan=AddressPlan(hbm_bytes=hbm))
    found = check(f)
    assert len(found) == 1 and found[0].code == "invalid"
    assert f"hbm_bytes={hbm}" in found[0].message and "4 KiB" in found[0].message
    with pytest.raises(AddressMapError, match="hbm_bytes must be an int of at least one 4 KiB"):
        _ = f.address_map


def test_hbm_of_one_page_is_a_plan():
    f = topologies.build("torus:2x2").replace(address_plan=AddressPlan(hbm_bytes=4096,
                                                                       host_memory=0))
    assert check(f) == []
    assert [r.size for r in f.address_map.regions] == [4096] * 4


# -- digits that are not decimal digits ----------------------------------------------------
# str.isdigit() is True for superscripts ('²') that int() cannot read: each place that
# checked isdigit() and then called int() crashed (exit 3). Since session 15 a number in text
# is ASCII digits only (fabric._units.is_numeral): '٣' is no rank and no layout value.

@pytest.mark.parametrize("argv", [
    ["route", "sd200-ultra", "²", "1"], ["route", "sd200-ultra", "rank:³", "1"],
    ["cost", "torus:4x4", "--op", "all-reduce", "--size", "1MiB", "--ranks", "²"],
    ["cost", "torus:4x4", "--op", "all-reduce", "--size", "1MiB", "--ranks", "0-²"],
    ["cost", "torus:4x4", "--op", "all-reduce", "--size", "1MiB", "--fail-chip", "²"],
    ["decode", "sd200-ultra", "--model", "kimi-k2", "--layout", "tp=²"],
    ["decode", "sd200-ultra", "--model", "kimi-k2", "--layout", "tp=8,tp=4"],
])
def test_a_superscript_or_repeated_number_is_one_line_and_exit_2(argv, capsys):
    rc, out, err = _run(argv, capsys)
    assert rc == 2 and out == "", err
    assert len(err.strip().splitlines()) == 1 and "internal error" not in err


TOKENS = st.text(alphabet="0123456789²³¹٣ rank:chip-x", max_size=8)


@settings(max_examples=200, deadline=None)
@given(TOKENS)
def test_a_node_token_is_a_rank_a_name_or_a_named_error(token):
    """Reference: a token of ASCII decimal digits (after 'rank:') is that rank; a node name is
    that node; anything else is a NodeError, never another exception."""
    f = _TORUS
    text = token.removeprefix("rank:")
    if token in f.graph:
        want = token
    elif text.isascii() and text.isdecimal() and int(text) < f.n_endpoints:
        want = f.endpoints[int(text)]
    else:
        want = None
    if want is None:
        with pytest.raises(NodeError):
            f.node(token)
    else:
        assert f.node(token) == want


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["tp", "dp", "ep", "etp", "x"]),
                          st.text(alphabet="0123456789²٣", min_size=1, max_size=2)),
                max_size=3))
def test_a_layout_string_is_read_or_refused_by_name(parts):
    text = ",".join(f"{k}={v}" for k, v in parts)
    keys = [k for k, _ in parts]
    readable = all(k != "x" and v.isascii() and v.isdecimal() for k, v in parts) and len(set(keys)) == len(keys)
    try:
        layout = parse_layout(text, 64)
    except SpecError as e:
        if readable:        # refused for a value (tp=0, not dividing 64...), not for its text
            assert "cannot read" not in str(e) and "given twice" not in str(e)
        return
    assert readable
    for k, v in parts:
        assert getattr(layout, k) == int(v)


EXAMPLE = str(__import__("pathlib").Path(__file__).resolve().parent.parent / "examples"
              / "sd200-ultra.toml")


@pytest.mark.parametrize("argv", [
    ["metrics", EXAMPLE, "--quiet"],
    ["cost", EXAMPLE, "--op", "all-reduce", "--size", "1MiB"],
    ["decode", EXAMPLE, "--model", "kimi-k2"],
    ["export", EXAMPLE, "unused.json"],
])
def test_a_system_file_where_a_spec_goes_says_where_files_go(argv, capsys):
    rc, out, err = _run(argv, capsys)
    assert rc == 2 and out == ""
    assert len(err.strip().splitlines()) == 1
    assert "a system file (.toml) is not a spec" in err and "translate, route" in err
