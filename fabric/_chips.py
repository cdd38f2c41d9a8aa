"""Chip presets: HBM capacity and bandwidth, peak throughput, reduction rate.

Each figure is per chip, SI units: bytes, bytes/s, FLOP/s. ``peak_flops`` is the
**dense** (no 2:4 sparsity) BF16 tensor throughput; vendors often quote the
sparse figure, which is twice as large.

``reduce_rate`` is how many bytes per second of incoming data a chip can add
into a buffer during a reduction collective. A reduction reads two operands
and writes one, so it is bounded by HBM bandwidth / 3; no vendor publishes a
better figure for these chips, so every preset uses that bound (a model
assumption, listed by :meth:`ChipSpec.parameters`).

Sources (checked 2026-12-02; "second-hand" where the figure comes from a summary
of the vendor material rather than the vendor's own page):

* H100 SXM5: 80 GB HBM3, 3.35 TB/s, 989.4 TFLOPS dense BF16 (1,979 with
  sparsity). NVIDIA H100 datasheet table as reproduced by HPC Tech
  (archive-lib.hpctech.co.jp/gpuproduct/nvidia-h100.html: "Shown with sparsity.
  Specifications 1/2 lower without sparsity") and glennklockwood.com/garden/
  processors/h100 (BF16 matrix 989.4 TFLOPS).
* H200 SXM: 141 GB HBM3e, 4.8 TB/s; the same GH100 die as H100, so the same
  989.4 TFLOPS dense BF16 (second-hand: lzwjava.github.io H200 comparison table,
  hwcooling.net H200 article).
* B200 (HGX B200, 1000 W): 180 GB HBM3e usable per GPU (192 GB physical, 8
  stacks), 8 TB/s, 2.25 PFLOPS dense BF16 (4.5 sparse). Second-hand:
  glennklockwood.com/garden/processors/B200 (HGX variant table),
  server-parts.eu B200/HGX B200 comparison ("8 x 180GB, 1.44TB total"), Vultr's
  HGX B200 hardware overview (nvidia-smi reports 179 GB).
* H800 SXM: the H100 SXM5 die and memory (80 GB HBM3, 3.35 TB/s, 989.4 TFLOPS
  dense BF16) with its NVLink cut to 8 NVLink4 links (400 GB/s bidirectional,
  200 GB/s per direction). Second-hand: NVIDIA H800 product brief as reported by
  the DeepSeek-V3 technical report (s.3.2: H800 with NVLink 160 GB/s effective,
  DeepEP's README) and NVIDIA/nccl issue 892 (8 NVLinks per H800).
* H20: 96 GB HBM3, 4.0 TB/s, 148 TFLOPS dense BF16 (296 with sparsity), 18
  NVLink4 links (900 GB/s bidirectional). Second-hand: NVIDIA H20 specification
  as reproduced by SemiAnalysis and server vendors (no NVIDIA datasheet page).
* B300 (HGX B300, Blackwell Ultra): 288 GB HBM3e, 8 TB/s, 2.25 PFLOPS dense BF16
  (HGX B300: 18 PFLOPS dense FP16/BF16 for 8 GPUs per NVIDIA's HGX page, second-hand),
  18 NVLink5 links (NVIDIA/nccl issue 2140: "NVLink5 18 links per GPU").
* GB200 (one Blackwell GPU of a GB200 superchip): 186 GB HBM3e (13.4 TB over 72
  GPUs in GB200 NVL72), 8 TB/s, 2.5 PFLOPS dense BF16 (NVL72: 180 PFLOPS dense
  FP16/BF16). Second-hand: NVIDIA GB200 NVL72 product page as reproduced by
  glennklockwood.com/garden/processors/B200 and server vendors.
* GB300 (one Blackwell Ultra GPU of a GB300 NVL72): 279 GB HBM3e usable (288 GB
  physical, 12-high stacks; NVIDIA's rack figure "20 TB" / 72 = 278 GB), 8 TB/s
  (576 TB/s / 72), 2.5 PFLOPS dense BF16 (180 PFLOPS dense FP16/BF16 / 72), 18
  NVLink5 links (130 TB/s / 72 = 1.8 TB/s bidirectional). Second-hand: NVIDIA GB300
  NVL72 page as reproduced by glennklockwood.com/garden/processors/B300 ("20 TB HBM at
  576 TB/s", "18 NVLink Switches at 130 TB/s") and Verda's per-GPU table
  (verda.com/blog/gb300-nvl72-architecture: GB300 279 GB HBM3E, 8 TB/s, 2.5 PFLOPS
  FP16/BF16 dense).
* TPU v4: 32 GiB HBM2, 1,200 GB/s, 275 TFLOPS (bf16 or int8). Google Cloud TPU
  v4 documentation (cloud.google.com/tpu/docs/v4, "Key specifications") and
  Jouppi et al., ISCA 2023.
* sd200-chip: an **assumption**. The seed article names no chip. Capacity
  follows Inspur SD200's 4 TB of GPU memory over 64 GPUs (China Daily,
  2025-08-08, second-hand; docs/sources.md s.1), i.e. 64 GB per chip; bandwidth
  (1.6 TB/s) and throughput (300 TFLOPS dense BF16) are an assumed domestic
  accelerator of that memory class, not published figures.

Examples
--------
>>> chip_spec("h100").hbm_bytes
80000000000
>>> round(chip_spec("tpu-v4").reduce_rate / 1e9)
400
"""

from dataclasses import dataclass

from ._errors import SpecError
from ._params import Parameter
from ._units import GB, TB, GiB

__all__ = ["CHIPS", "ChipSpec", "chip_spec"]

#: The reduction bound used for every preset: bytes reduced per byte of HBM traffic.
REDUCE_RATE_NOTE = "HBM bandwidth / 3: a reduction reads two operands and writes one (assumption)"


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
        Dense BF16 throughput in FLOP/s (not the 2:4-sparse figure).
    reduce_rate : float
        Bytes/s of incoming data reduced into a buffer (see module docstring).
    source : str
        Where ``hbm_bytes``, ``hbm_bandwidth`` and ``peak_flops`` come from.
    generation : str or None
        The NVIDIA GPU architecture (``"hopper"`` or ``"blackwell"``, as the chip's own
        source names it) by which runtimes index their tables (:func:`fabric.runtime_arch`);
        ``None`` for a chip that is neither (runtimes then take Hopper's tables, an
        assumption).
    """

    name: str
    hbm_bytes: int
    hbm_bandwidth: float
    peak_flops: float
    reduce_rate: float
    source: str
    generation: str | None = None

    def __post_init__(self):
        if self.generation not in (None, "hopper", "blackwell"):
            raise SpecError(f"chip {self.name!r}: generation must be 'hopper', 'blackwell' or "
                            f"None, got {self.generation!r}")

    def parameters(self):
        """The figures as :class:`~fabric.Parameter` records, for a report.

        >>> [p.unit for p in chip_spec("h200").parameters()]
        ['B', 'B/s', 'FLOP/s', 'B/s']
        """
        return (
            Parameter(f"{self.name}.hbm_bytes", self.hbm_bytes, "B", self.source),
            Parameter(f"{self.name}.hbm_bandwidth", self.hbm_bandwidth, "B/s", self.source),
            Parameter(f"{self.name}.peak_flops", self.peak_flops, "FLOP/s", self.source),
            Parameter(f"{self.name}.reduce_rate", self.reduce_rate, "B/s", REDUCE_RATE_NOTE),
        )


def _chip(name, hbm_bytes, hbm_bandwidth, peak_flops, source, generation=None):
    return ChipSpec(name, hbm_bytes, hbm_bandwidth, peak_flops, hbm_bandwidth / 3, source,
                    generation)


CHIPS = {c.name: c for c in (
    _chip("h100", 80 * GB, 3.35 * TB, 989.4e12,
          "NVIDIA H100 SXM5 datasheet (via archive-lib.hpctech.co.jp and glennklockwood.com/"
          "garden/processors/h100): 80 GB HBM3, 3.35 TB/s, 989.4 TFLOPS dense BF16 "
          "(1,979 with 2:4 sparsity)",
          generation="hopper"),
    _chip("h200", 141 * GB, 4.8 * TB, 989.4e12,
          "NVIDIA H200 SXM material (second-hand: lzwjava.github.io, hwcooling.net): 141 GB "
          "HBM3e, 4.8 TB/s; same GH100 die as H100, so 989.4 TFLOPS dense BF16",
          generation="hopper"),
    _chip("b200", 180 * GB, 8.0 * TB, 2.25e15,
          "NVIDIA HGX B200 at 1000 W (second-hand: glennklockwood.com/garden/processors/B200, "
          "server-parts.eu, Vultr HGX B200 overview): 180 GB HBM3e usable of 192 GB physical, "
          "8 TB/s, 2.25 PFLOPS dense BF16",
          generation="blackwell"),
    _chip("h800", 80 * GB, 3.35 * TB, 989.4e12,
          "NVIDIA H800 SXM: the H100 SXM5 die and memory (80 GB HBM3, 3.35 TB/s, 989.4 TFLOPS "
          "dense BF16) with 8 NVLink4 links (second-hand: DeepSeek-V3 report s.3.2, "
          "NVIDIA/nccl issue 892)",
          generation="hopper"),
    _chip("h20", 96 * GB, 4.0 * TB, 148e12,
          "NVIDIA H20 (second-hand: SemiAnalysis and vendor spec sheets): 96 GB HBM3, 4.0 TB/s, "
          "148 TFLOPS dense BF16 (296 sparse), 18 NVLink4 links",
          generation="hopper"),
    _chip("b300", 288 * GB, 8.0 * TB, 2.25e15,
          "NVIDIA HGX B300 (Blackwell Ultra; second-hand: NVIDIA HGX page as reproduced by "
          "vendors): 288 GB HBM3e, 8 TB/s, 2.25 PFLOPS dense BF16 per GPU (18 for 8 GPUs)",
          generation="blackwell"),
    _chip("gb200", 186 * GB, 8.0 * TB, 2.5e15,
          "NVIDIA GB200 NVL72, per Blackwell GPU (second-hand: NVIDIA GB200 NVL72 page via "
          "glennklockwood.com and vendors): 13.4 TB HBM3e / 72 = 186 GB, 8 TB/s, 180 PFLOPS "
          "dense FP16/BF16 / 72 = 2.5 PFLOPS",
          generation="blackwell"),
    _chip("gb300", 279 * GB, 8.0 * TB, 2.5e15,
          "NVIDIA GB300 NVL72, per Blackwell Ultra GPU (second-hand: NVIDIA GB300 NVL72 page "
          "via glennklockwood.com/garden/processors/B300, '20 TB HBM at 576 TB/s', and Verda's "
          "per-GPU table, verda.com/blog/gb300-nvl72-architecture): 279 GB HBM3e usable of 288 "
          "GB physical, 576 TB/s / 72 = 8 TB/s, 180 PFLOPS dense FP16/BF16 / 72 = 2.5 PFLOPS",
          generation="blackwell"),
    _chip("tpu-v4", 32 * GiB, 1.2 * TB, 275e12,
          "Google Cloud TPU v4 docs (cloud.google.com/tpu/docs/v4, key specifications); "
          "Jouppi et al., ISCA 2023: 32 GiB HBM2, 1,200 GB/s, 275 TFLOPS bf16"),
    _chip("sd200-chip", 64 * GB, 1.6 * TB, 300e12,
          "assumption: the seed article names no chip. Capacity follows Inspur SD200's 4 TB of "
          "GPU memory over 64 GPUs (China Daily, 2025-08-08, second-hand); bandwidth 1.6 TB/s "
          "and 300 TFLOPS dense BF16 are an assumed accelerator of that class, not published"),
)}


def chip_spec(name):
    """Return the :class:`ChipSpec` called ``name`` (a ``ChipSpec`` passes through).

    >>> chip_spec("b400")
    Traceback (most recent call last):
    ...
    fabric.SpecError: unknown chip 'b400'; known: b200, b300, gb200, gb300, h100, h20, h200, h800, sd200-chip, tpu-v4
    """
    if isinstance(name, ChipSpec):
        return name
    try:
        return CHIPS[name]
    except (KeyError, TypeError):
        raise SpecError(f"unknown chip {name!r}; known: " + ", ".join(sorted(CHIPS))) from None
