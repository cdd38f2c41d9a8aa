"""Audit, session 26: failing a host domain by name says what to fail instead.

The model has no host nodes: a host domain is its chips. ``without(chips=["host0"])`` (``cofabric
... --fail-chip host0``) answered "no node called 'host0'", true but no help: the name is a
host's, listed by the fabric's domains. Now the error says it is a host domain and names its
chips, which fail it.
"""

import pytest
from cli_run import run_cli
from degrade import built

from fabric import NodeError


def test_failing_a_host_names_its_chips():
    f = built("rail:servers=2,gpus=2,chip=h100")
    with pytest.raises(NodeError, match=r"'host1' is a host domain, not a node .*: name its "
                                        r"chips \(chip2 and chip3\)"):
        f.without(chips=["host1"])
    g = f.without(chips=list(f.domains["host1"]))          # what it says to do
    assert "host1" not in g.domains
    with pytest.raises(NodeError, match="no node called 'host9'"):   # an unknown name as before
        f.without(chips=["host9"])


def test_the_cli_says_it_in_one_line():
    rc, out, err = run_cli(["route", "rail:servers=2,gpus=2,chip=h100", "0", "1",
                            "--fail-chip", "host1"])
    assert rc == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert "host domain" in err and "chip2 and chip3" in err
