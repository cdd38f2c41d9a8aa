"""The report says which runtime each collective figure, table and finding uses (issue 10)."""

import pytest

from analysis._report import build_report


@pytest.fixture(scope="module")
def report():
    # a load/store-only fabric (no NIC) against one with NICs; few sizes to stay fast
    return build_report(["torus:4x4", "rail:servers=2,gpus=4"],
                        sections=["collectives", "symmetric"],
                        sizes=["1KiB", "1MiB", "1GiB"], ops=["all-reduce", "all-to-all"],
                        quiet=True)


def _section(report, key):
    return next(s for s in report.sections if s.key == key)


def test_every_collective_finding_names_its_runtime(report):
    groups = dict(report.finding_groups)
    for text in groups["Collectives"] + groups["Symmetric memory"]:
        assert "runtime '" in text, text
    # the software-included comparison is there: NCCL on both systems, at each size
    nccl = [t for t in groups["Collectives"] if "runtime 'nccl'" in t]
    assert nccl and "torus:4x4" in nccl[0] and "rail:servers=2,gpus=4" in nccl[0]
    assert any("runtime 'symmetric-memory'" in t for t in groups["Symmetric memory"])


def test_tables_and_figures_state_the_runtime(report):
    for key in ("collectives", "symmetric"):
        sec = _section(report, key)
        for t in sec.tables:
            if t.rows and t.name != "not_applicable":  # reasons, no figures
                assert "runtime '" in t.caption or "runtime '" in t.title, t.name
        for fig in sec.figures:
            assert "runtime '" in fig.caption, fig.name


def test_best_rows_use_the_native_transport(report):
    # a fabric without NICs has no RDMA to send messages: its best rows are load/store
    best = next(t for t in _section(report, "collectives").tables
                if t.name == "collectives_best")
    torus = [r for r in best.csv_rows if r["system"] == "torus:4x4"]
    assert torus and {r["transport"] for r in torus} == {"loadstore"}


def test_nicless_systems_compare_only_offered_transports(report):
    # the torus has no NIC: its findings compare symmetric memory with message passing over
    # its own load/store fabric and name RDMA only as a what-if
    groups = dict(report.finding_groups)
    mine = [t for t in groups["Symmetric memory"] if "torus:4x4" in t]
    assert mine
    for t in mine:
        if "RDMA" in t:
            assert "what-if" in t, t
    assert any("same load/store fabric" in t for t in mine)
