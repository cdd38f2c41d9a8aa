"""The model against held-out published measurements (tests/data/heldout.csv).

The held-out rows are not in the check set (other systems, sizes, rank counts); they
are checked, never fitted. Goal (issue 10): every row within 25% and a geometric-mean
error <= 10%. Rows missed today are strict expected failures (``KNOWN_MISSES`` of their
case module), so a row that starts to pass must be taken off the list.
"""


import fidelity
import pytest

ROWS = fidelity.heldout_rows()
CASES, _ = fidelity.cases()


def test_heldout_rows_are_not_in_the_check_set():
    checked = {r["id"] for r in fidelity.load_rows()}
    ids = [r["id"] for r in ROWS]
    assert len(set(ids)) == len(ids)
    assert not set(ids) & checked
    # nor the same measurement under another name: (source, op, gpus, size) differ
    key = lambda r: (r["source"], r["op"], r["gpus"], r["size"])
    assert not {key(r) for r in ROWS} & {key(r) for r in fidelity.load_rows()}


def test_heldout_rows_are_well_formed():
    assert len(ROWS) >= 9
    sources = set()
    for r in ROWS:
        assert r["source"].strip(), r["id"]
        assert float(r["value"]) > 0, r["id"]
        assert r["unit"] in ("GB/s", "us"), r["id"]
        assert r["metric"] in ("busbw", "time", "algbw", "kernel time", "bandwidth",
                               "RDMA bandwidth"), r["id"]
        sources.add(r["source"])
    assert len(sources) >= 2  # more than one independent source


@pytest.mark.parametrize("row", ROWS, ids=[r["id"] for r in ROWS])
def test_heldout_row(row):
    assert row["id"] in CASES, f"{row['id']}: held-out row not expressed by any case module"
    fidelity.check_row(row, fidelity.HELDOUT_TOLERANCE)


@pytest.mark.xfail(strict=True, reason="issue 10's held-out goal (geometric-mean error <= 10%) "
                   "is not met today; figures in benchmarks/README.md (bench_fidelity.py)")
def test_heldout_geometric_mean_goal():
    results = fidelity.evaluate(ROWS, fidelity.HELDOUT_TOLERANCE)
    geo, *_ = fidelity.summary(results)
    assert geo <= fidelity.HELDOUT_GEOMEAN, f"held-out geometric-mean error {geo:.1%}"
