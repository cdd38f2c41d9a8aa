"""Audit, session 14: every JSON output about a degraded grid says its routes are local repairs.

``cofabric route`` and ``latency --json`` carried ``"note"`` (``Router.LOCAL_REPAIR``) where
``router.local_repair``, and every text output printed it, but ``throughput --json`` and
``cost --json`` did not (maint's finding, 07:44): a script reading the JSON got the upper
bounds without being told. Now ``throughput --json`` has ``"note"`` and each row of ``cost
--json`` has one, only where the grid's routes are local repairs (not on an intact grid, a
switched fabric, or a grid that lost only a lane of a bundle).
"""

import io
import json
from contextlib import redirect_stderr, redirect_stdout

import pytest

from analysis._cli import main
from fabric import Router


def _json(argv):
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        rc = main(argv)
    assert rc == 0, err.getvalue()
    return json.loads(out.getvalue())


@pytest.mark.parametrize("fail, noted", [
    (["--fail-chip", "chip4"], True), (["--fail-link", "chip0-chip1"], True), ([], False)])
def test_throughput_json_says_local_repair_where_it_applies(fail, noted):
    got = _json(["throughput", "torus:3x3", "--json"] + fail)
    assert ("note" in got) == noted
    if noted:
        assert got["note"] == Router.LOCAL_REPAIR


@pytest.mark.parametrize("argv, noted", [
    (["torus:3x3", "--fail-chip", "chip4"], True),
    (["torus:3x3", "--fail-link", "chip0-chip1"], True),
    (["torus:3x3"], False),
    (["torus:3x2,links=2", "--fail-lane", "chip0-chip1"], False),
    (["fattree:k=4", "--fail-link", "agg0.0-core0"], False)])
def test_cost_json_rows_say_local_repair_where_it_applies(argv, noted):
    rows = _json(["cost"] + argv + ["--op", "all-reduce,all-gather", "--size", "4KiB,1MiB",
                                    "--json"])
    assert len(rows) == 4
    for r in rows:
        assert ("note" in r) == noted, r
        if noted:
            assert r["note"] == Router.LOCAL_REPAIR
