"""Chip presets: HBM capacity and bandwidth, peak throughput, reduction rate.

Each figure is per chip, SI units: bytes, bytes/s, FLOP/s. ``reduce_rate`` is
how many bytes per second of incoming data a chip can add into a buffer during
a reduction collective; a reduction reads two operands and writes one, so it
is bounded by HBM bandwidth / 3 (the default where no better figure exists).

Examples
--------
>>> chip_spec("h100").hbm_bytes
80000000000
"""

from dataclasses import dataclass

from ._errors import SpecError
from ._params import Parameter
from ._units import GB, TB, GiB

__all__ = ["ChipSpec", "CHIPS", "chip_spec"]


@dataclass(frozen=True)
class ChipSpec:
    """An accelerator's memory and compute figures.

    Attributes
    ----------
    name : str
    hbm_bytes : int
        HBM capacity in bytes.
    hbm_bandwidth : float
        HBM bandwidth in bytes/s.
    peak_flops : float
        Dense BF16 throughput in FLOP/s.
    reduce_rate : float
        Bytes/s of incoming data reduced into a buffer (see module docstring).
    source : str
    """

    name: str
    hbm_bytes: int
    hbm_bandwidth: float
    peak_flops: float
    reduce_rate: float
    source: str

    def parameters(self):
        """The figures as :class:`~fabric.Parameter` records, for a report."""
        return (
            Parameter(f"{self.name}.hbm_bytes", self.hbm_bytes, "B", self.source),
            Parameter(f"{self.name}.hbm_bandwidth", self.hbm_bandwidth, "B/s", self.source),
            Parameter(f"{self.name}.peak_flops", self.peak_flops, "FLOP/s", self.source),
            Parameter(f"{self.name}.reduce_rate", self.reduce_rate, "B/s",
                      "HBM bandwidth / 3: a reduction reads two operands and writes one"),
        )


def _chip(name, hbm_bytes, hbm_bandwidth, peak_flops, source):
    return ChipSpec(name, hbm_bytes, hbm_bandwidth, peak_flops, hbm_bandwidth / 3, source)


CHIPS = {c.name: c for c in (
    _chip("h100", 80 * GB, 3.35 * TB, 989e12,
          "NVIDIA H100 SXM5 datasheet: 80 GB HBM3, 3.35 TB/s, 989 TFLOPS dense BF16"),
    _chip("h200", 141 * GB, 4.8 * TB, 989e12,
          "NVIDIA H200 SXM datasheet: 141 GB HBM3e, 4.8 TB/s, 989 TFLOPS dense BF16"),
    _chip("b200", 180 * GB, 8.0 * TB, 2.25e15,
          "NVIDIA HGX B200 material (second-hand): 180 GB HBM3e, 8 TB/s, 2.25 PFLOPS dense BF16"),
    _chip("tpu-v4", 32 * GiB, 1.2 * TB, 275e12,
          "Jouppi et al., ISCA 2023; Cloud TPU v4 docs: 32 GiB HBM2, 1.2 TB/s, 275 TFLOPS BF16"),
    _chip("sd200-chip", 64 * GB, 1.6 * TB, 300e12,
          "assumption: the seed article names no chip. Capacity follows Inspur SD200's 4 TB of "
          "GPU memory over 64 GPUs (China Daily, 2025-08-08, second-hand); bandwidth and "
          "throughput are an assumed domestic accelerator of that class"),
)}


def chip_spec(name):
    """Return the :class:`ChipSpec` called ``name`` (a ``ChipSpec`` passes through)."""
    if isinstance(name, ChipSpec):
        return name
    try:
        return CHIPS[name]
    except (KeyError, TypeError):
        raise SpecError(f"unknown chip {name!r}; known: " + ", ".join(sorted(CHIPS))) from None
