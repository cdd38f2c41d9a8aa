"""Chip presets against their published figures (sources in fabric/_chips.py)."""

import re
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
    assert [p.name for p in params][:4] == [f"{name}.{f}" for f in
                                            ("hbm_bytes", "hbm_bandwidth", "peak_flops",
                                             "reduce_rate")]
    assert "two operands" in params[3].source
    # then one Parameter per further math format, with its datasheet source
    formats = [p for p in params[4:] if p.name != f"{name}.grace_gpus"]
    assert [(p.name, p.value) for p in formats] == [
        (f"{name}.peak_flops.{f}", v) for f, v in c.tensor_flops if f != "bf16"]
    assert all(p.source == c.tensor_source and p.source for p in formats)
    # and a Grace superchip's pairing, with its source (ChipSpec.grace_gpus)
    grace = [p for p in params if p.name == f"{name}.grace_gpus"]
    assert [p.value for p in grace] == ([c.grace_gpus] if c.grace_gpus else [])
    assert all(p.source == c.host_source and p.source for p in grace)


def test_seed_chip_is_marked_as_assumption():
    assert chip_spec("sd200-chip").source.startswith("assumption")


def test_passthrough_and_unknown():
    c = ChipSpec("x", 1, 2.0, 3.0, 1.0, "test")
    assert chip_spec(c) is c
    with pytest.raises(SpecError, match="unknown chip 'a100'; known: b200, b300, gb200, gb300, h100"):
        chip_spec("a100")
    # what is no name is a wrong kind (STYLE: a TypeError), not an unknown chip
    for value, shown in ((None, "None (a NoneType)"), (5, "5 (an int)"), (True, "True (a bool)")):
        with pytest.raises(TypeError, match=r"^chip must be a chip name or a fabric\.ChipSpec, "
                                            rf"got {re.escape(shown)}$"):
            chip_spec(value)


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


# Dense tensor-core peaks per math format, from each vendor table's "with sparsity" figure
# halved (datasheet footnote "Specifications 1/2 lower without sparsity"); sources in
# fabric/_chips.py. Exact: these are the tables' numbers (1e-12 relative).
_SPARSE = {   # chip: {format: datasheet figure WITH sparsity, FLOP/s or OP/s}
    "h100": {"bf16": 1978.8e12, "fp8": 3957.8e12, "int8": 3957.8e12},
    "h200": {"bf16": 1978.8e12, "fp8": 3957.8e12, "int8": 3957.8e12},
    "h800": {"bf16": 1978.8e12, "fp8": 3957.8e12, "int8": 3957.8e12},
    "h20": {"bf16": 296e12, "fp8": 592e12, "int8": 592e12},
    "b200": {"bf16": 4.5e15, "fp8": 9e15, "fp4": 18e15, "int8": 9e15},       # HGX B200 per GPU
    "gb200": {"bf16": 5e15, "fp8": 10e15, "fp4": 20e15, "int8": 10e15},      # GB200 NVL72 per GPU
    "b300": {"bf16": 36e15 / 8, "fp8": 72e15 / 8},                          # HGX B300 / 8 GPUs
    "gb300": {"bf16": 360e15 / 72, "fp8": 720e15 / 72},                     # GB300 NVL72 / 72
}
_DENSE_AS_PUBLISHED = {   # figures published as dense already
    "b300": {"fp4": 108e15 / 8},          # HGX B300 "144 | 108 PFLOPS" (sparse | dense), 8 GPUs
    "gb300": {"fp4": 1080e15 / 72, "int8": 0.165e15},   # NVL72 "1,440 | 1,080"; Verda per GPU
    "tpu-v4": {"bf16": 275e12, "int8": 275e12},         # TPU v4: no sparsity figure
}


@pytest.mark.parametrize("name", sorted(set(_SPARSE) | set(_DENSE_AS_PUBLISHED)))
def test_tensor_peaks_round_trip_the_datasheets(name):
    c = chip_spec(name)
    want = {f: v / 2 for f, v in _SPARSE.get(name, {}).items()}
    want.update(_DENSE_AS_PUBLISHED.get(name, {}))
    got = dict(c.tensor_flops)
    assert set(got) == set(want) | {"bf16"}
    for f, v in want.items():
        assert got[f] == pytest.approx(v, rel=1e-3 if name.startswith("h") else 1e-12), f
        assert c.peak(f) == got[f]
    assert got["bf16"] == c.peak_flops
    # every narrower float format is at least as fast as BF16 (the tensor cores' rule)
    assert all(got[f] >= got["bf16"] for f in ("fp8", "fp4") if f in got)


def test_gemm_format_falls_back_to_bf16_without_tensor_cores_of_the_format():
    # Hopper has no FP4 tensor cores: an NVFP4 GEMM runs weight-only (dequantized to BF16)
    for name in ("h100", "h200", "h800", "h20"):
        c = chip_spec(name)
        assert c.peak("fp4") is None and c.gemm_format("fp4") == "bf16"
        assert c.gemm_flops("fp4") == c.peak_flops
        assert c.gemm_format("fp8") == "fp8"
        assert c.gemm_flops("fp8") == pytest.approx(2 * c.peak_flops, rel=1e-4)
    for name in ("b200", "b300", "gb200", "gb300"):
        c = chip_spec(name)
        assert c.gemm_format("fp4") == "fp4" and c.gemm_flops("fp4") >= 4 * c.peak_flops
    for name in ("tpu-v4", "sd200-chip"):   # no FP8 tensor cores
        assert chip_spec(name).gemm_flops("fp8") == chip_spec(name).peak_flops
    with pytest.raises(SpecError, match="math format"):
        chip_spec("h100").peak("fp16")


def test_tensor_flops_are_checked():
    base = ("x", 1, 2.0, 3.0, 1.0, "test", None)
    assert dict(ChipSpec(*base).tensor_flops) == {"bf16": 3.0}
    with pytest.raises(SpecError, match="format must be one of"):
        ChipSpec(*base, (("fp6", 6.0),))
    with pytest.raises(SpecError, match=r"^tensor_flops\[.fp8.\] must be a finite number > 0 "
                                        r"FLOP/s \(chip .x.\), got "):
        ChipSpec(*base, (("fp8", 0.0),))
    with pytest.raises(TypeError, match="must be a finite number > 0 FLOP/s"):  # a wrong kind (s32)
        ChipSpec(*base, (("fp8", True),))
    with pytest.raises(SpecError, match="disagrees with peak_flops"):
        ChipSpec(*base, (("bf16", 4.0),))
    with pytest.raises(SpecError, match="twice"):
        ChipSpec(*base, (("fp8", 6.0), ("fp8", 7.0)))
