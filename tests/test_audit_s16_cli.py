"""Audit, session 16: ``cofabric cost``'s list options join when given again.

Before: ``--op``, ``--size`` and ``--ranks`` took the last occurrence only (argparse's default
for ``nargs="+"``), silently: ``cost torus:4 --op all-reduce --size 1KiB --ranks 0 1 --ranks 2``
costed a one-rank group (0 s). The repeatable failure options already append. Now each list
option given again adds to its list, so a rank named in both is the existing 'twice' error.
"""

import json

import pytest
from cli_run import run_cli as _run


def _json(argv):
    rc, out, err = _run(argv)
    assert rc == 0, err
    return json.loads(out)


BASE = ["cost", "torus:4"]


@pytest.mark.parametrize("split, joined", [
    (["--op", "all-reduce", "--size", "1KiB", "--ranks", "0", "1", "--ranks", "2", "3"],
     ["--op", "all-reduce", "--size", "1KiB", "--ranks", "0", "1", "2", "3"]),
    (["--op", "all-reduce", "--op", "all-gather", "--size", "1KiB"],
     ["--op", "all-reduce", "all-gather", "--size", "1KiB"]),
    (["--op", "all-reduce", "--size", "1KiB", "--size", "4KiB", "1MiB"],
     ["--op", "all-reduce", "--size", "1KiB", "4KiB", "1MiB"]),
])
def test_a_list_option_given_again_joins_its_lists(split, joined):
    assert _json(BASE + split + ["--json"]) == _json(BASE + joined + ["--json"])


def test_a_rank_in_two_lists_is_named_twice():
    rc, out, err = _run(BASE + ["--op", "all-reduce", "--size", "1KiB", "--ranks", "0", "1",
                                "--ranks", "1"])
    assert rc == 2 and out == "" and err.count("\n") == 1
    assert "ranks lists 'chip1' twice" in err
