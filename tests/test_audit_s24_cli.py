"""Audit, session 24: ``cofabric route --json`` says what each key is, with its unit.

Session 23 added ``host_memory`` to ``breakdown_s`` (a host's DRAM over the serving chip's
host link); nothing named the JSON's keys: ``route --help`` said only "print JSON" and the
README nothing. Now the route command's help lists every key with its unit (the stages from
``fabric.Access.STAGES``, the order :meth:`fabric.Access.breakdown` gives), and the README's
paragraph on it names every key. The tests take the keys from real output (a load, a store,
RDMA, a degraded grid with its note), so a key added later without a word fails here.
"""

import json
import pathlib
import re

import pytest
from cli_run import run_cli

from fabric import Access

ROOT = pathlib.Path(__file__).resolve().parents[1]

RUNS = (["route", "sd200-ultra", "0", "127"],
        ["route", "sd200-ultra", "0", "127", "--op", "store"],
        ["route", "cluster-128", "0", "127", "--transport", "rdma"],
        ["route", "torus:4x4", "0", "5", "--fail-link", "chip0-chip1"])


def _keys(obj):
    """Every key of a JSON object and of the objects inside it."""
    if isinstance(obj, dict):
        return set(obj) | {k for v in obj.values() for k in _keys(v)}
    if isinstance(obj, list):
        return {k for v in obj for k in _keys(v)}
    return set()


@pytest.fixture(scope="module")
def keys():
    found = set()
    for argv in RUNS:
        rc, out, _err = run_cli(argv + ["--json"])
        assert rc == 0, argv
        found |= _keys(json.loads(out))
    assert {"note", "host_memory", "latency_s"} <= found     # the runs reach every kind
    return found


def _words(text):
    return set(re.findall(r"[A-Za-z_]+", text))


def test_route_help_names_every_json_key(keys):
    rc, text, _err = run_cli(["route", "--help"])
    assert rc == 0
    assert keys <= _words(text), sorted(keys - _words(text))


def test_the_help_lists_the_stages_in_breakdown_order():
    rc, text, _err = run_cli(["route", "--help"])
    assert rc == 0 and ", ".join(Access.STAGES) in " ".join(text.split())
    rc, out, _err = run_cli(["route", "sd200-ultra", "0", "127", "--json"])
    assert rc == 0
    assert tuple(json.loads(out)["breakdown_s"]) == Access.STAGES


def test_the_readme_paragraph_on_route_json_names_every_key(keys):
    text = (ROOT / "README.md").read_text()
    (para,) = [p for p in text.split("\n\n") if p.startswith("`cofabric route --json`")]
    assert keys <= _words(para), sorted(keys - _words(para))
