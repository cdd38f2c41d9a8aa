"""Every numeric field of every command's JSON output says its unit.

A numeric field (int or float, not bool) passes if a word of its name is a unit
(``UNIT_TOKENS``: ``total_s``, ``network_power_w_per_chip``), if the object holding it is
named with a unit (``breakdown_s: {"forward": ...}``), or if a ``units`` map in its
object or any enclosing object names it (counts say ``"count"``). The test runs every command that prints JSON on a small system and walks the whole
output, so a field added later without a unit fails here.
"""

import json

import pytest

from analysis._cli import build_parser, main

#: Name endings that carry the unit (SI, as the CSV columns of the report use).
UNIT_TOKENS = {"s", "seconds", "bytes", "Bps", "bps", "usd", "w", "W", "hops", "x", "hz",
               "flops", "pct"}


def _has_unit(name):
    """True if one ``_``-separated word of ``name`` is a unit (``network_power_w_per_chip``)."""
    return any(tok in UNIT_TOKENS for tok in name.split("_"))


def _number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _offenders(obj, path="", units=frozenset(), named=False):
    """Dotted paths of numeric leaves with no unit in their name nor in a units map.

    ``named``: the enclosing field's name carries the unit (every number below it has it).
    """
    out = []
    if isinstance(obj, dict):
        here = units | set((obj.get("units") or {}).keys())
        for k, v in obj.items():
            if k == "units":
                continue
            p = f"{path}.{k}" if path else k
            ok = (named or _has_unit(k) or k in here
                  or (k == "value" and isinstance(obj.get("unit"), str)))  # a Parameter
            if _number(v):
                if not ok:
                    out.append(p)
            else:
                out += _offenders(v, p, here, ok)
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            if _number(v):
                if not named:
                    out.append(f"{path}[{i}]")
            else:
                out += _offenders(v, f"{path}[{i}]", units, named)
    return out


def _commands(tmp):
    """argv of every command that prints JSON, on inputs small enough for the suite."""
    return {
        "metrics": ["metrics", "torus:3x3", "fattree:k=4", "--json"],
        "cost": ["cost", "torus:3x3", "--op", "all-reduce", "all-to-all", "--size", "1KiB",
                 "1MiB", "--json"],
        "route": ["route", "torus:3x3", "chip0", "chip4", "--json"],
        "latency": ["latency", "torus:3x3", "--json"],
        "throughput": ["throughput", "torus:3x3", "--traffic", "all-to-all", "--json"],
        "decode": ["decode", "nvl72", "--model", "kimi-k2",
                   "--json"],
        "decode-speculative": ["decode", "nvl72", "--model", "kimi-k2",
                               "--draft-length", "2", "--acceptance", "0.6",
                               "--draft-cost", "0.05", "--json"],
        "serve": ["serve", "nvl72", "--model", "kimi-k2", "--isl", "1024", "--osl", "256",
                  "--layout", "tp=8,dp=9,ep=72", "--batches", "1,8", "--json"],
        "check": ["check", "examples/sd200-ultra.toml", "--json"],
        "translate": ["translate", "sd200-ultra", "--host", "host0", "0x1000", "--json"],
        "scaling": ["scaling", "--out", str(tmp / "scaling"), "--families", "torus",
                    "--sizes", "64", "--collective-limit", "0", "--decode-limit", "0",
                    "--quiet", "--json"],
    }


def test_every_command_with_json_is_covered(tmp_path):
    """A new command with a --json flag must be added to _commands."""
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    with_json = {name for name, p in sub.choices.items()
                 if any("--json" in a.option_strings for a in p._actions)}
    covered = {argv[0] for argv in _commands(tmp_path).values()}
    # report/figures print the paths they wrote (strings only); checked below
    assert with_json - covered <= {"report", "figures"}, with_json - covered


@pytest.mark.parametrize("name", sorted(_commands(__import__("pathlib").Path("."))))
def test_numeric_json_fields_carry_units(name, tmp_path, capsys, monkeypatch):
    argv = _commands(tmp_path)[name]
    if argv[0] not in {a for a in build_parser()._subparsers._group_actions[0].choices}:
        pytest.skip(f"no {argv[0]} command")
    code = main(argv)
    out = capsys.readouterr().out
    assert code in (0, 1), out
    data = json.loads(out)
    bad = _offenders(data)
    assert not bad, f"{name}: numeric fields without a unit: {bad[:20]}"


def test_the_walker_finds_unitless_fields():
    assert _offenders({"time": 1.0, "time_s": 1.0}) == ["time"]
    assert _offenders({"units": {"time": "s"}, "rows": [{"time": 1.0}]}) == []
    assert _offenders({"rows": [{"pairs": 3, "ok": True, "name": "x"}]}) == ["rows[0].pairs"]
    assert _offenders({"sizes": [1, 2]}) == ["sizes[0]", "sizes[1]"]
    assert _offenders({"units": {"sizes": "B"}, "sizes": [1, 2]}) == []
    assert _offenders({"breakdown_s": {"forward": 1e-7}, "cost_usd_per_chip": 3.0}) == []
    assert _offenders({"parameters": [{"value": 3.0, "unit": "B/s"}, {"value": 1}]}) == [
        "parameters[1].value"]
