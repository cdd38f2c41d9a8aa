"""Session 34 (audit): long values in errors; empty sequences (decisions in fabric/_errors.py).

An error quotes a user's very long text shortened, not in full. A 5000-character spec, node name, op or model name came back as a 5-10 KB error line (the
CLI's one line, the exception's text); twice where the spec and its part were both quoted.
Each place now quotes through ``fabric._units.show_value``, the one abbreviation (short
values unchanged). Probe: 324 CLI commands, 6 long values x 54 argument positions: 243 long
lines before, 0 after.
"""
import errno

import numpy as np
import pytest
from cli_run import run_cli

import topologies
from analysis import expected_max_active
from fabric import AddressPlan, SymmetricHeap, interleave_offset, interleave_target

LONG = "x" * 5000
T = "torus:4x4"
M = ["--model", "deepseek-v3"]

ARGVS = [
    ["metrics", LONG],                                       # unknown family (twice)
    ["metrics", "torus:" + LONG],                            # a shape
    ["metrics", "fattree:k=" + LONG],                        # an integer option
    ["metrics", "torus:4x4,links=2," + LONG],                # option needs key=value
    ["metrics", "torus:4x4,links=2,links=" + LONG],          # option twice
    ["metrics", f"torus:4x4,{LONG}=1"],                      # unknown option
    ["metrics", "torus:4x4,hosts=" + LONG],                  # a flag (bool option)
    ["metrics", "sd200-ultra:" + LONG],                      # a preset's option
    ["metrics", "sd200-ultra:chip=" + LONG],                 # a preset's chip
    ["metrics", T, "--fail-chip", LONG],
    ["metrics", T, "--fail-link", LONG],
    ["metrics", T, "--fail-link", "0-" + LONG],
    ["metrics", T, "--fail-lane", "0-" + LONG],
    ["route", T, "0", LONG],
    ["route", T, "0", "1", "--transport", LONG],
    ["route", T, "0", "1", "--size", "1" + LONG],            # a size's unit
    ["cost", T, "--op", LONG, "--size", "4KiB"],
    ["cost", T, "--op", "all-reduce", "--size", "4KiB", "--algorithm", LONG],
    ["cost", T, "--op", "all-reduce", "--size", "4KiB", "--runtime", LONG],
    ["cost", T, "--op", "all-reduce", "--size", "4KiB", "--runtime", "nccl@" + LONG],
    ["throughput", T, "--traffic", LONG, "--quiet"],
    ["decode", "hgx-h200", "--model", LONG],
    ["decode", "hgx-h200", *M, "--layout", LONG],
    ["decode", "hgx-h200", *M, "--ep-kernel", LONG],
    ["decode", "hgx-h200", *M, "--overlap", LONG],
    ["scaling", "--families", LONG, "--quiet"],
    ["check", LONG],                                         # a name the system refuses
]


@pytest.mark.parametrize("argv", ARGVS, ids=lambda a: " ".join(x[:24] for x in a))
def test_a_very_long_value_is_quoted_shortened(argv):
    rc, out, err = run_cli(argv)
    assert rc == 2 and out == ""
    assert err.count("\n") == 1 and len(err) < 400, err[:500]
    assert "... (" in err and "characters)" in err      # says it was shortened, and how long


def test_a_short_value_is_quoted_whole():
    rc, _, err = run_cli(["route", T, "0", "chip99"])
    assert rc == 2 and err == "cofabric route: error: torus:4x4: no node called 'chip99'\n"


def test_only_a_name_the_system_refused_for_its_length_is_shortened():
    from analysis._cli import _said

    long = "d/" * 100 + "x.toml"                         # a long path, shown whole
    assert _said(FileNotFoundError(errno.ENOENT, "No such file or directory", long)) \
        == f"{long}: No such file or directory"
    assert len(_said(OSError(errno.ENAMETOOLONG, "File name too long", "y" * 300))) < 100


def test_a_builders_long_value_is_quoted_shortened():
    for call in (lambda: topologies.switched(LONG),
                 lambda: topologies.torus((4, 4), links=list(range(5000)))):
        with pytest.raises(Exception) as e:
            call()
        assert len(str(e.value)) < 200 and "characters)" in str(e.value)


def test_an_empty_list_is_no_item_wherever_integers_go():
    # numpy reads [] as float64: the address family refused it (TypeError) while
    # expected_max_active answered it; now each answers empty, as lookup_many did
    pos, dev = interleave_target([], 4, 256)
    assert pos.dtype == dev.dtype == np.int64 and pos.shape == dev.shape == (0,)
    assert interleave_offset([], (), 4, 256).shape == (0,)
    f = topologies.build("torus:2x2,chip=h100")
    mem = f.replace(address_plan=AddressPlan(heap=SymmetricHeap(size=2**21))).symmetric_memory
    assert mem.addresses([], []).shape == (0,)
    assert expected_max_active([], [], 4) == 0.0
    # a float array with values stays a wrong kind
    with pytest.raises(TypeError, match="dtype float64"):
        interleave_target([0.0], 4, 256)
