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

import topologies
from analysis._cli import main
from fabric import AddressMapError, AddressPlan, check

SYSTEM = '[system]\ntopology = "sd200-ultra"\n'


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
                    'size = "1GiB"\nowner = "host0"\nowners = ["host1"]\n')
    found = check(topologies.load_system(path))
    assert [(x.code, x.severity) for x in found] == [("invalid", "error")]
    assert "owner = 'host0' and owners = ['host1']" in found[0].message
    assert found[0].where.endswith(":3 regions[0]")
    rc, out, _ = _run(["check", str(path)], capsys)
    assert rc == 1 and "give one of them" in out
    # either alone is clean
    for one in ('owner = "host0"', 'owners = ["host1"]'):
        path.write_text(SYSTEM + '[[regions]]\nname = "pool"\nbase = "0x7f00_0000_0000"\n'
                        f'size = "1GiB"\n{one}\n')
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
