"""Every collective / send-recv row (check set and held-out) runs with one NCCL release rule.

A row whose source states its release runs with it; a row whose source states none runs
with the newest release tagged on or before the source's date (fabric.nccl_release_on).
No row runs with an unstated default.
"""

import fidelity
import fidelity_collectives
import pytest

ROWS = fidelity.load_rows() + fidelity.heldout_rows()
CASES, _ = fidelity.cases()
COLLECTIVE = [r for r in ROWS if fidelity.is_collective(r) and r["id"] in CASES]


def test_model_needs_a_release_or_a_date():
    with pytest.raises(ValueError, match="one of the two"):
        fidelity_collectives.model("dgx-h100", "all-reduce", 1024)
    with pytest.raises(ValueError, match="one of the two"):
        fidelity_collectives.model("dgx-h100", "all-reduce", 1024, nccl="2.21.5",
                                   date="2024-05-10")


def test_source_dates_are_iso_and_after_the_oldest_release():
    from fabric import nccl_release_on
    for key, (day, what) in fidelity_collectives.SOURCE_DATES.items():
        assert what.strip(), key
        nccl_release_on(day)  # raises on a malformed date or one before 2.18.3


@pytest.mark.parametrize("row", COLLECTIVE, ids=[r["id"] for r in COLLECTIVE])
def test_every_row_names_its_release(row):
    r = fidelity.evaluate([row])[0]
    assert "NCCL 2." in r.how, (row["id"], r.how)
    stated = [w for w in (row["notes"] + " " + row["source"]).replace(";", " ").split()
              if w.startswith("2.") and w[2:3].isdigit()]
    if "(tagged by" not in r.how:
        return
    # a row run by its source's date must not be one whose row states a release
    assert not stated, (row["id"], stated)


def test_a_stated_release_is_kept():
    # the Azure ND H200 v5 page states NCCL 2.20.5: its rows run with 2.20.5 whatever the date
    row = next(r for r in ROWS if r["id"] == "azure-h200-nvls-ar-1k")
    assert "NCCL 2.20.5" in fidelity.evaluate([row])[0].how


@pytest.mark.parametrize("row_id", ["hfplaybook-h100-ar-minlat",
                                    "hfplaybook-h100-alltoall-minlat"])
def test_the_playbook_latency_chart_runs_its_recipes_image(row_id):
    # the playbook's latency chart links aws-samples/awsome-distributed-training's nccl-tests
    # container sbatch; that image over the playbook's date builds NCCL v2.27.7-1 (and
    # nccl-tests v2.16.9): the rows' software (lead, session 33), not the date rule's 2.28.7
    row = next(r for r in ROWS if r["id"] == row_id)
    how = fidelity.evaluate([row])[0].how
    assert how.endswith("NCCL 2.27.7") and "tagged by" not in how, how


@pytest.mark.parametrize("size", [8, 1024, 65536, 4 * 2**20, 3 * 2**30])
def test_a_harness_copy_adds_one_copy_kernel(size):
    # copy_before (the tritondist rows' clone) adds exactly one copy kernel to the collective's
    # time: a kernel boundary plus the message read and written at the streaming HBM rate
    import analysis
    import fabric
    import topologies
    f = topologies.build("dgx-h100")
    plain, _ = fidelity_collectives.model("dgx-h100", "all-reduce", size, metric="time",
                                          nccl="2.27.6")
    copied, how = fidelity_collectives.model("dgx-h100", "all-reduce", size, metric="time",
                                             nccl="2.27.6", copy_before=True)
    h100 = fabric.chip_spec("h100")
    expect = analysis.GRAPH_KERNEL_OVERHEAD.value + 2 * size / (
        h100.hbm_bandwidth * analysis.DECODE_HBM_EFFICIENCY.value)
    assert f.chip.hbm_bandwidth == h100.hbm_bandwidth
    assert copied - plain == pytest.approx(expect * 1e6, rel=1e-9)
    assert "copy kernel" in how
    with pytest.raises(ValueError, match="time rows"):
        fidelity_collectives.model("dgx-h100", "all-reduce", size, nccl="2.27.6",
                                   copy_before=True)


def test_an_eager_loop_with_one_device_a_process_adds_its_host_time():
    # hfplaybook-h100-alltoall-minlat ran nccl-tests -g 1 -n 100 with no -G or -z: the loop
    # reports max(c, g) + min(c, g) / n per iteration, host-bound here (g < c), not g alone
    import fidelity_heldout_collectives

    import analysis
    import fabric
    import topologies
    g = analysis.cost(topologies.build("dgx-h100"), "all-to-all", 128,
                      runtime="nccl@2.27.7").time
    c = fabric.runtime("nccl@2.27.7").host_launch
    assert g < c
    value, how = fidelity_heldout_collectives.CASES["hfplaybook-h100-alltoall-minlat"](None)
    assert value == pytest.approx((c + g / 100) * 1e6, rel=1e-12)
    assert "eager loop -g 1 -n 100" in how


@pytest.mark.parametrize("row_id, spec, nccl, devices, algorithm", [
    ("gb200-tray-ring-1k", "gb200-nvl72", "2.25.1", 4, "ring"),      # -g 4 -n 40, time
    ("azure-h100-nvls-ar-1k", "dgx-h100", "2.18.5", 8, "in-switch"),  # -g 8 -n 40, busbw
])
def test_an_eager_loop_of_one_process_driving_n_devices_is_the_whole_loop(
        row_id, spec, nccl, devices, algorithm):
    # cost()'s further-device delay plus the loop's one-device excess is nccl-tests' loop for
    # h = N c, written out here: max(h, g) + min(h, g) / n, the fill counted once
    import fidelity_heldout_collectives

    import analysis
    import fabric
    import topologies
    f = topologies.build(spec)
    g = analysis.cost(f, "all-reduce", 1024, algorithm=algorithm, runtime=f"nccl@{nccl}",
                      ranks=f.endpoints[:devices])
    h = devices * fabric.runtime(f"nccl@{nccl}").host_launch
    t = max(h, g.time) + min(h, g.time) / 40
    row = dict(fidelity_collectives.CASES, **fidelity_heldout_collectives.CASES)[row_id]
    value, how = row(None)
    want = t * 1e6 if row_id.startswith("gb200") else g.busbw * g.time / t / 1e9
    assert value == pytest.approx(want, rel=1e-12)
    assert f"eager loop -g {devices} -n 40" in how


def test_an_eager_loop_is_not_a_blocking_one():
    with pytest.raises(ValueError, match="does not block"):
        fidelity_collectives.model("dgx-h100", "all-reduce", 8, nccl="2.27.7", eager_loop=20,
                                   blocking=True)


def test_blackwell_16m_gather_runs_the_protocol_of_its_release():
    # the _AIC_16M_MISS text rests on it: NCCL 2.29.2 lowered Blackwell's per-channel ring
    # LL128 cap (src/graph/tuning.cc, 2 x 36.7 -> 34.5 GB/s), so 8-GPU all-gather at 16 MiB on
    # B200 moves from ring/LL128 (2.28.9: the collector measures 53.2 us) to ring/Simple
    # (2.29.2: 103.9 us); 2.29.7's cap (40) picks LL128 again
    protocol = {rel: fidelity_collectives.model("hgx-b200", "all-gather", 16 * 2**20, ranks=8,
                                                metric="time", nccl=rel)[1].split(",")[1]
                for rel in ("2.28.9", "2.29.2", "2.29.7")}
    assert protocol == {"2.28.9": " ring/LL128", "2.29.2": " ring/Simple",
                        "2.29.7": " ring/LL128"}
