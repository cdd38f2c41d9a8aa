"""Chip presets against their published figures (sources in fabric/_chips.py)."""

from types import SimpleNamespace

import pytest

import topologies
from fabric import CHIPS, ChipSpec, SpecError, chip_spec, runtime_arch
from fabric._units import GB, TB, GiB


@pytest.mark.parametrize("name, hbm, bw, flops", [
    # vendor figures, exact (no tolerance: these are the datasheet numbers)
    ("h100", 80 * GB, 3.35 * TB, 989.4e12),
    ("h200", 141 * GB, 4.8 * TB, 989.4e12),
    ("b200", 180 * GB, 8.0 * TB, 2.25e15),
    ("tpu-v4", 32 * GiB, 1.2 * TB, 275e12),
])
def test_published_figures(name, hbm, bw, flops):
    c = chip_spec(name)
    assert c.hbm_bytes == hbm
    assert c.hbm_bandwidth == pytest.approx(bw, rel=1e-12)
    assert c.peak_flops == pytest.approx(flops, rel=1e-12)


@pytest.mark.parametrize("name", sorted(CHIPS))
def test_reduce_rate_is_a_third_of_hbm_bandwidth(name):
    c = chip_spec(name)
    assert c.reduce_rate == pytest.approx(c.hbm_bandwidth / 3)
    assert c.source
    params = c.parameters()
    assert [p.name for p in params] == [f"{name}.{f}" for f in
                                        ("hbm_bytes", "hbm_bandwidth", "peak_flops",
                                         "reduce_rate")]
    assert "two operands" in params[-1].source


def test_seed_chip_is_marked_as_assumption():
    assert chip_spec("sd200-chip").source.startswith("assumption")


def test_passthrough_and_unknown():
    c = ChipSpec("x", 1, 2.0, 3.0, 1.0, "test")
    assert chip_spec(c) is c
    with pytest.raises(SpecError, match="unknown chip 'a100'; known: b200, b300, gb200, gb300, h100"):
        chip_spec("a100")
    with pytest.raises(SpecError):
        chip_spec(None)


def test_gb300_nvl72_against_the_rack_figures():
    # NVIDIA GB300 NVL72 (second-hand, fabric/_chips.py): "20 TB HBM at 576 TB/s",
    # "18 NVLink Switches at 130 TB/s" (bidirectional), 180 PFLOPS dense FP16/BF16, 72 GPUs.
    # Tolerance 1% on capacity and NVLink: the rack figures are rounded ("20 TB", "130 TB/s").
    import topologies

    f = topologies.build("gb300-nvl72")
    c = f.chip
    assert c is chip_spec("gb300") and f.n_endpoints == 72
    assert 72 * c.hbm_bytes == pytest.approx(20e12, rel=0.01)
    assert 72 * c.hbm_bandwidth == pytest.approx(576 * TB, rel=1e-12)
    assert 72 * c.peak_flops == pytest.approx(180e15, rel=1e-12)
    per_gpu = sum(d["bandwidth"] for _, _, d in f.graph.edges("chip0", data=True))
    assert 72 * 2 * per_gpu == pytest.approx(130e12, rel=0.01)
    assert f.params["planes"] == 18 and len(f.domains) == 18
    # the same NVLink domain as GB200 NVL72; only the chip differs
    g = topologies.build("gb200-nvl72")
    assert sorted(f.graph.degree(weight="lanes")) == sorted(g.graph.degree(weight="lanes"))
    assert c.hbm_bytes > chip_spec("gb200").hbm_bytes
    # one Oberon rack of 72, as GB200 NVL72 (its rack density Parameter)
    assert [p.value for p in f.assumptions if p.name == "cost.layout.rack_chips"] == [72]


def test_every_nvidia_chip_states_its_generation_and_runtimes_read_it():
    # H-series are Hopper, B- and GB-series Blackwell (each chip's own source names it); the
    # runtimes' tables are indexed by it, so a new chip cannot fall back silently to Hopper
    for name, chip in CHIPS.items():
        want = ("hopper" if name.startswith("h") else
                "blackwell" if name.startswith(("b", "gb")) else None)
        assert chip.generation == want, name
        if want is not None:
            assert runtime_arch(SimpleNamespace(chip=chip)) == want, name
    assert runtime_arch(topologies.build("gb300-nvl72")) == "blackwell"
    assert runtime_arch(topologies.build("dgx-h100")) == "hopper"


def test_chip_generation_is_checked():
    with pytest.raises(SpecError, match="generation"):
        ChipSpec("x", 1, 2.0, 3.0, 1.0, "test", generation="ampere")
