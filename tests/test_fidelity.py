"""The model against the check set (tests/data/published.csv), one test per row.

Each row's tolerance is the issue's: within 35% (symmetric relative error, see
``tests/fidelity.py``), unless its case module sets a tighter one. A row no
module expresses yet is an expected failure that says so (a missing feature).
"""

import csv
import math
from pathlib import Path

import fidelity
import pytest

ROWS = fidelity.load_rows()
CASES, _ = fidelity.cases()


def test_check_set_is_the_published_one():
    # 43 rows, each with a source and a positive value; ids unique
    assert len(ROWS) == 43
    assert len({r["id"] for r in ROWS}) == len(ROWS)
    for r in ROWS:
        assert r["source"].strip(), r["id"]
        assert float(r["value"]) > 0, r["id"]
        assert r["unit"] in ("GB/s", "us"), r["id"]


def test_every_case_names_a_row():
    # a case names a check-set row or a held-out row (tests/data/heldout.csv)
    ids = {r["id"] for r in ROWS} | {r["id"] for r in fidelity.heldout_rows()}
    assert set(CASES) <= ids, sorted(set(CASES) - ids)


def test_error_is_symmetric():
    assert fidelity.error(2.0, 1.0) == pytest.approx(1.0)
    assert fidelity.error(0.5, 1.0) == pytest.approx(1.0)
    assert fidelity.error(1.0, 1.0) == 0.0


def test_summary_geometric_mean():
    rs = [fidelity.Result("a", "x", "us", 1.0, 2.0, 0.35),
          fidelity.Result("b", "x", "us", 1.0, 0.5, 0.35),
          fidelity.Result("c", "x", "us", 1.0, math.nan, 0.35)]
    geo, in25, in35, worst, n = fidelity.summary(rs)
    assert in35 == 0
    assert n == 2 and geo == pytest.approx(1.0) and in25 == 0 and worst.id == "a"


@pytest.mark.parametrize("row", ROWS, ids=[r["id"] for r in ROWS])
def test_row(row):
    if row["id"] not in CASES:
        pytest.xfail(f"{row['id']}: not expressible in the model yet ({row['op']})")
    fidelity.check_row(row, fidelity.TOLERANCE)


def test_collective_rows_geometric_mean():
    """Issue 10: on the collective and send-recv rows, geometric-mean error <= 15%."""
    rows = [r for r in ROWS if fidelity.is_collective(r) and r["id"] in CASES]
    if not rows:
        pytest.skip("no collective rows expressed yet")
    results = fidelity.evaluate(rows)
    geo, *_, n = fidelity.summary(results)
    assert geo <= fidelity.GEOMEAN_TOLERANCE, f"geometric-mean error {geo:.1%}"
    # the README states this figure (it said 8.2% after session 34 moved it to 8.3%)
    readme = " ".join((Path(fidelity.HERE).parent / "README.md").read_text().split())
    assert (f"Against {n} published collective and send-recv measurements "
            f"(`tests/data/published.csv`) the nccl runtime's geometric-mean error is "
            f"{geo:.1%}") in readme


def test_csv_columns():
    with open(fidelity.DATA, newline="") as fh:
        header = next(csv.reader(fh))
    assert header == ["id", "system", "gpus", "op", "algorithm_or_kernel", "size", "metric",
                      "value", "unit", "source", "notes"]


def test_h800_sendrecv_runs_the_sources_four_ranks():
    # NVIDIA/nccl issue 1984 ran sendrecv_perf -g 4 on CUDA_VISIBLE_DEVICES=4,5,6,7: a ring of
    # 4 ranks (nccl-tests sendrecv.cu: send to rank + 1, receive from rank - 1), not the
    # CSV's gpus 2 (lead, session 33)
    row = next(r for r in ROWS if r["id"] == "h800-sendrecv-1k")
    assert fidelity.evaluate([row])[0].how.startswith("hgx-h800 4 ranks, ")
