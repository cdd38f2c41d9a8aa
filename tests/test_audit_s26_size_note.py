"""Audit, session 26: ``route|latency --size`` on a fabric that knows no memory says so.

Session 25 made ``fabric.access_to`` / ``access_latencies`` (``cofabric route|latency
--size``) refuse a size larger than the target's memory. A fabric with no chip type
(``torus:4x4``, not ``torus:4x4,chip=h100``) has no memory size and no address map, so
``route torus:4x4 0 3 --size 1TiB`` was timed with nothing to say that the size had not been
checked. The lead decided (session 26): the size is still timed (it is a transfer), and the
output says, in one line, that no memory size is known so the size was not checked against
a target; ``--help`` says so. The JSON carries the line as ``size_note``, only there.
"""

import json

import pytest
from cli_run import run_cli

import topologies
from fabric._access import checks_accesses

NOTE = "no memory size is known"

# (argv, whether the fabric knows a memory size): chip-less specs, a degraded one, presets,
# a chip type given on the spec
CASES = [
    (["route", "torus:4x4", "0", "3", "--size", "1TiB"], False),
    (["route", "fattree:k=4", "0", "5"], False),
    (["route", "torus:4x4", "0", "5", "--fail-link", "chip0-chip1"], False),
    (["latency", "torus:4x4", "--quiet", "--size", "1TiB"], False),
    (["latency", "switch:6", "--quiet"], False),
    (["route", "torus:4x4,chip=h100", "0", "3", "--size", "1GiB"], True),
    (["route", "sd200-ultra", "0", "127"], True),
    (["latency", "torus:2x2,chip=h100", "--quiet"], True),
]


@pytest.mark.parametrize("argv, known", CASES)
def test_the_text_says_once_when_the_size_was_not_checked(argv, known):
    rc, out, err = run_cli(argv)
    assert rc == 0, err
    lines = [ln for ln in out.splitlines() if NOTE in ln]
    assert len(lines) == (0 if known else 1), out
    if not known:
        assert lines[0].startswith("note: ") and "not checked against the memory of" in lines[0]
        size = argv[argv.index("--size") + 1] if "--size" in argv else "64B"
        assert f" {size} was timed" in lines[0], lines[0]


@pytest.mark.parametrize("argv, known", CASES)
def test_the_json_carries_size_note_only_where_the_size_was_not_checked(argv, known):
    rc, out, err = run_cli(argv + ["--json"])
    assert rc == 0, err
    got = json.loads(out)
    assert ("size_note" in got) == (not known), got
    if not known:
        assert NOTE in got["size_note"]
        assert got["size_bytes"] == (2**40 if "1TiB" in argv else 64)


def test_route_names_the_target_it_did_not_check():
    rc, out, _err = run_cli(["route", "torus:4x4", "0", "3", "--size", "1TiB"])
    assert rc == 0
    (line,) = [ln for ln in out.splitlines() if NOTE in ln]
    assert line.endswith("the memory of 'chip3'") and "torus:4x4 gives no chip type" in line


def test_a_fabric_with_a_memory_still_refuses_the_size():
    """The note is no excuse: where a memory size is known, 1 TiB into it is one line, exit 2."""
    rc, out, err = run_cli(["route", "torus:4x4,chip=h100", "0", "3", "--size", "1TiB"])
    assert rc == 2 and out == "" and len(err.strip().splitlines()) == 1, err


@pytest.mark.parametrize("command", ["route", "latency"])
def test_help_says_a_size_on_a_fabric_with_no_chip_type_is_unchecked(command):
    rc, text, _err = run_cli([command, "--help"])
    text = " ".join(text.split())
    assert rc == 0 and "no chip type" in text and "knows no memory size" in text
    assert "timed as a transfer, unchecked" in text


@pytest.mark.parametrize("spec, known", [("torus:4x4", False), ("torus:4x4,chip=h100", True),
                                         ("fattree:k=4", False), ("sd200-ultra", True),
                                         ("rail:servers=2,gpus=2,chip=h100", True)])
def test_checks_accesses_is_false_only_without_a_memory_size(spec, known):
    f = topologies.build(spec)
    assert checks_accesses(f) is known
    assert checks_accesses(f.without(links=[next(iter(f.graph.edges))])) is known
