"""The check set: published measurements, and how each row is expressed in the model.

``tests/data/published.csv`` holds 43 published measurements (collectives,
point-to-point, MoE dispatch/combine) with their sources, copied unchanged from
the project's calibration set. The rule that comes with them: **check, never
fit**. No constant of the model is chosen to make a row match; every constant
is a named ``fabric.Parameter`` with its own source.

How a row becomes a model figure
--------------------------------
Each ``tests/fidelity_<kind>.py`` module (found by name, so that independent
kinds of rows live in independent files) defines ``CASES``, a dict from a row's
``id`` to a function ``case(row) -> float`` that returns the model's figure in
the row's ``unit`` and ``metric`` (``busbw`` in GB/s = 1e9 B/s as nccl-tests
defines it, ``time`` / ``kernel time`` in microseconds, ``bandwidth`` /
``RDMA bandwidth`` in GB/s as the kernel's own benchmark counts bytes).
A module may also define ``TOLERANCE`` (dict id -> relative error) for rows
that are checked more tightly than the default :data:`TOLERANCE`.

* ``tests/fidelity_collectives.py``: collective and send-recv rows;
* ``tests/fidelity_moe.py``: MoE dispatch/combine rows;
* ``tests/fidelity_heldout_collectives.py``: the held-out collective rows (below).

Held-out rows
-------------
``tests/data/heldout.csv`` (same columns) holds published measurements that are
**not** in the check set: other systems, sizes and rank counts, each with its exact
source. They are expressed by the same case modules and checked the same way, with
the issue's tighter goal (:data:`HELDOUT_TOLERANCE`, :data:`HELDOUT_GEOMEAN`), and no
constant may change because of one of them: a row the model misses is recorded in its
module's ``KNOWN_MISSES`` with the reason.

A row that no module expresses is reported as not expressible (a missing
feature, never a row to drop).

Error measure
-------------
``ratio = model / measured``; a row's error is ``max(ratio, 1/ratio) - 1``
(symmetric: 2x too fast and 2x too slow are both 100%). The summary's
geometric-mean error is ``exp(mean(|ln ratio|)) - 1``.
"""

import csv
import dataclasses
import importlib
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "data", "published.csv")
HELDOUT = os.path.join(HERE, "data", "heldout.csv")

#: Default tolerance of one row (relative error, symmetric), from issue 10's "Done when".
TOLERANCE = 0.35
#: Geometric-mean error the collective / point-to-point rows must stay within (issue 10).
GEOMEAN_TOLERANCE = 0.15
#: Goal on the held-out rows (issue 10's second "Done when"): every row within 25% ...
HELDOUT_TOLERANCE = 0.25
#: ... and a geometric-mean error <= 10%.
HELDOUT_GEOMEAN = 0.10


def load_rows(path=DATA):
    """The check set's rows as dicts (columns as in the CSV), in file order."""
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


def heldout_rows():
    """The held-out rows (``tests/data/heldout.csv``) as dicts, in file order.

    A ``source`` written ``same`` (as in the check set: the row above's source) is
    replaced by that source, so that each row carries its own.
    """
    rows = load_rows(HELDOUT)
    for prev, row in zip([None] + rows, rows):
        if row["source"].strip() == "same" and prev is not None:
            row["source"] = prev["source"]
    return rows


def _case_modules():
    if HERE not in sys.path:
        sys.path.insert(0, HERE)
    names = sorted(f[:-3] for f in os.listdir(HERE)
                   if f.startswith("fidelity_") and f.endswith(".py"))
    return [importlib.import_module(n) for n in names]


def cases():
    """``(cases, tolerances)``: row id -> model function, and row id -> tolerance."""
    out, tol = {}, {}
    for mod in _case_modules():
        for rid, fn in getattr(mod, "CASES", {}).items():
            if rid in out:
                raise ValueError(f"row {rid!r} is expressed twice ({mod.__name__})")
            out[rid] = fn
        tol.update(getattr(mod, "TOLERANCE", {}))
    return out, tol


def known_misses():
    """Row id -> reason, for rows a case module declares missed today (``KNOWN_MISSES``).

    ``tests/test_fidelity.py`` reports them as expected failures, and fails when one
    comes within its tolerance, so that a stale entry cannot hide a fix.
    """
    out = {}
    for mod in _case_modules():
        out.update(getattr(mod, "KNOWN_MISSES", {}))
    return out


def error(model, measured):
    """Symmetric relative error: ``max(r, 1/r) - 1`` for ``r = model / measured``."""
    r = model / measured
    return max(r, 1 / r) - 1


@dataclasses.dataclass(frozen=True)
class Result:
    id: str
    op: str
    unit: str
    measured: float
    model: float        # nan when the row is not expressible
    tolerance: float
    how: str = ""       # what the model ran (algorithm, runtime), from the case if it says

    @property
    def ratio(self):
        return self.model / self.measured

    @property
    def error(self):
        return error(self.model, self.measured) if math.isfinite(self.model) else math.inf


def evaluate(rows=None, tolerance=TOLERANCE):
    """Every row's model figure against its measurement, in file order.

    ``tolerance`` is the default for rows whose module sets none (the held-out rows
    pass :data:`HELDOUT_TOLERANCE`).
    """
    rows = load_rows() if rows is None else rows
    fns, tol = cases()
    out = []
    for row in rows:
        fn = fns.get(row["id"])
        model, how = math.nan, "not expressible yet"
        if fn is not None:
            got = fn(row)
            model, how = (got if isinstance(got, tuple) else (got, ""))
        out.append(Result(row["id"], row["op"], row["unit"], float(row["value"]),
                          float(model), tol.get(row["id"], tolerance), how))
    return out


def check_row(row, tolerance):
    """Assert one row within its tolerance, or xfail it when it is a declared known miss.

    A known miss that comes within its tolerance fails, so the list cannot go stale.
    Returns nothing; raises ``AssertionError`` or ``pytest.xfail``'s exception.
    """
    import pytest

    fns, tol = cases()
    got = fns[row["id"]](row)
    model = got[0] if isinstance(got, tuple) else got
    measured = float(row["value"])
    tol = tol.get(row["id"], tolerance)
    assert math.isfinite(model) and model > 0, (row["id"], model)
    err = error(model, measured)
    misses = known_misses()
    if row["id"] in misses:
        assert err > tol, (f"{row['id']} is now within {tol:.0%} ({err:.0%}): remove it from "
                           f"KNOWN_MISSES")
        pytest.xfail(f"{row['id']}: known miss, {err:.0%}: {misses[row['id']]}")
    assert err <= tol, (f"{row['id']}: model {model:.4g} vs measured {measured:.4g} {row['unit']} "
                        f"({err:.0%} > {tol:.0%}); source: {row['source']}")


def geometric_mean_error(errors):
    """Geometric mean of ``1 + error`` over ``errors`` (each ``max(r, 1/r) - 1``), minus 1:
    the one summary figure of every check and held-out set.

    >>> round(geometric_mean_error([0.0, 0.21]), 3)
    0.1
    """
    return math.expm1(sum(math.log1p(e) for e in errors) / len(errors))


def summary(results):
    """(geometric-mean error, rows within 25%, rows within 35%, worst Result, rows counted)."""
    done = [r for r in results if math.isfinite(r.model)]
    if not done:
        return math.nan, 0, 0, None, 0
    geo = geometric_mean_error([r.error for r in done])
    worst = max(done, key=lambda r: r.error)
    return (geo, sum(r.error <= 0.25 for r in done), sum(r.error <= 0.35 for r in done),
            worst, len(done))


def is_collective(row_or_result):
    """Collective and point-to-point rows (the ``runtime`` helper's), not MoE rows."""
    op = row_or_result["op"] if isinstance(row_or_result, dict) else row_or_result.op
    return not op.startswith("moe")
