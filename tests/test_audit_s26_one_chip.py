"""Audit, session 26: check() warns a host of ONE chip that maps none of its chips too.

Session 25's warning (``unreachable``, "host domain H maps none of its own chips' memory",
default_windows = false) left out hosts of one chip. Such a host has no aperture onto its own
chip either, so that chip cannot load or store its own memory through its domain
(:func:`fabric.access` refuses it: no window maps it). The lead decided (session 26): the same
rule for any host of one or more chips; a host that maps SOME of its chips is not warned (a
partition is a legitimate plan).
"""

import pytest
from cli_run import run_cli
from degrade import built

from fabric import AddressPlan, TranslationError, Window, access, check, error_findings
from fabric._units import GiB

ONE = "torus:2x2,chip=h100,hosts=1"          # four hosts of one chip each (hosts= chips a host)


def _warned(findings):
    return sorted(f.where for f in findings if f.severity == "warning"
                  and "maps none of its own chips" in f.message)


def _plan(f, picks):
    """No default windows; one 1 GiB window of each (host, target) in ``picks``."""
    return f.replace(address_plan=AddressPlan(default_windows=False, windows=[
        Window(h, (1 << 44) + k * (1 << 40), target=t, size=GiB, name=f"w{k}")
        for k, (h, t) in enumerate(picks)]))


def test_every_one_chip_host_that_maps_nothing_is_warned():
    f = built(ONE)
    g = _plan(f, [])
    found = check(g)
    assert error_findings(found) == []
    assert _warned(found) == sorted(f.domains) and len(f.domains) == 4
    for h, (chip,) in f.domains.items():
        (w,) = [x for x in found if x.where == h]
        assert w.code == "unreachable" and f"'{chip}'" in w.message
        assert "its chip cannot load or store its own memory" in w.message
        with pytest.raises(TranslationError, match="no window of this domain maps"):
            access(g, chip, g.address_map.global_address(chip, 0))


def test_a_window_onto_its_own_chip_clears_it_and_one_onto_another_does_not():
    f = built(ONE)
    (c0,) = f.domains["host0"]
    g = _plan(f, [("host0", c0), ("host1", c0)])
    assert _warned(check(g)) == ["host1", "host2", "host3"]
    access(g, c0, g.address_map.global_address(c0, 0))      # host0's own window: permitted


def test_a_host_mapping_some_of_its_chips_is_not_warned():
    f = built("torus:4x3,chip=h100,hosts=3")          # hosts of three chips
    h = f.host_of["chip0"]
    others = [x for x in f.domains if x != h]
    g = _plan(f, [(h, "chip0")] + [(x, f.domains[x][0]) for x in others])
    assert _warned(check(g)) == []
    mate = next(c for c in f.domains[h] if c != "chip0")
    with pytest.raises(TranslationError):                   # a partition: mate is unmapped
        access(g, "chip0", g.address_map.global_address(mate, 0))


def test_a_one_chip_host_whose_chip_failed_is_not_warned():
    g = _plan(built(ONE), []).without(chips=["chip0"])
    found = check(g)
    assert "host0" not in _warned(found) and len(_warned(found)) == 3


def test_check_command_prints_the_warning_for_a_one_chip_host(tmp_path):
    p = tmp_path / "one.toml"
    p.write_text('[system]\ntopology = "torus:2x2,chip=h100,hosts=1"\n\n'
                 "[address]\ndefault_windows = false\n")
    rc, out, err = run_cli(["check", str(p)])
    assert rc == 0, (out, err)          # warnings only: exit 0
    assert out.count("maps none of its own chips") == 4, out
