"""Chip presets: HBM capacity and bandwidth, peak throughput, reduction rate.

Each figure is per chip, SI units: bytes, bytes/s, FLOP/s. ``peak_flops`` is the
**dense** (no 2:4 sparsity) BF16 tensor throughput; vendors often quote the
sparse figure, which is twice as large.

``tensor_flops`` holds the dense tensor-core peak of every math format the chip has
(``"bf16"``, ``"fp8"``, ``"fp4"``, ``"int8"``; the BF16 entry is ``peak_flops``), from
the vendor's datasheet table, whose figures are "with sparsity": each is halved here
(the datasheets' footnote, "Specifications 1/2 lower without sparsity"). A format the
chip has no tensor cores for is absent (Hopper and TPU v4: no FP4; TPU v4: no FP8);
:meth:`ChipSpec.gemm_flops` says what a GEMM of such a format runs at. Per chip:

* H100 / H200 / H800 SXM (the same GH100 tensor cores): FP8 1,979 and INT8 1,979
  TFLOPS/TOPS dense (datasheet 3,958 with sparsity). NVIDIA H100 datasheet table as
  reproduced by HPC Tech (archive-lib.hpctech.co.jp) and glennklockwood.com (FP8 and
  INT8 matrix 1,978.9); H200 datasheet "FP8 Tensor Core 3,958 TFLOPS*" (sparse), the
  H100's (second-hand: lzwjava.github.io H200 table); H800: the H100 die (above).
* H20: FP8 and INT8 296 TFLOPS/TOPS dense (2 x its 148 BF16, as on every Hopper part;
  INT8 296 second-hand: Chinese-market spec tables quoting NVIDIA, e.g.
  zangshuxian.com, willitrunai.com).
* B200 (HGX B200): FP4 9, FP8 4.5, INT8 4.5 PFLOPS/POPS dense (HGX B200 per-GPU
  datasheet 18 / 9 / 9 with sparsity; NVIDIA's GB200 NVL72 / HGX B200 specification
  table as reproduced by zdszero.github.io).
* GB200: FP4 10, FP8 5, INT8 5 PFLOPS/POPS dense (GB200 NVL72 per-GPU datasheet
  20 / 10 / 10 with sparsity; same table).
* B300 (HGX B300): FP4 13.5 PFLOPS dense (NVIDIA HGX B300 "144 PFLOPS | 108 PFLOPS"
  FP4 for 8 GPUs, sparse | dense; second-hand: fibermall.com's HGX B300 table; Verda
  quotes 14 per GPU), FP8 4.5 dense (72 PFLOPS sparse / 8 / 2). INT8 not given:
  Blackwell Ultra cut INT8 and the second-hand per-GPU figures disagree (HGX B300
  "2 POPS" / 8 vs Verda's 0.15 POPS dense).
* GB300: FP4 15 PFLOPS dense (GB300 NVL72 "1,440 | 1,080 PFLOPS" sparse | dense / 72;
  glennklockwood.com "1.1 EF dense FP4"; Verda 15 per GPU), FP8 5 dense (NVL72 "360 PF
  FP8" dense / 72), INT8 0.165 POPS dense (Verda's per-GPU table; NVL72 "INT8 24 POPS"
  sparse / 72 / 2 = 0.167, second-hand vendordeep.com).
* TPU v4: INT8 275 TOPS (Google: "275 TFLOPS (bf16 or int8)"); no FP8.
* sd200-chip: BF16 only (an assumed chip, see below).

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
from ._units import (
    GB,
    TB,
    GiB,
    check_choice,
    check_count,
    check_number,
    items_of,
    kind_error,
    lookup,
    show_value,
    text_of,
)

__all__ = ["CHIPS", "GENERATIONS", "MATH_FORMATS", "ChipSpec", "chip_spec"]

#: Math formats of tensor-core GEMMs, widest first (:attr:`ChipSpec.tensor_flops`).
MATH_FORMATS = ("bf16", "fp8", "fp4", "int8")

#: GPU generations a chip may state (:attr:`ChipSpec.generation`); ``None`` is "not a GPU
#: generation the runtimes know".
GENERATIONS = ("hopper", "blackwell")


def check_math_format(value, what="math format"):
    """``value`` where a math format is due (one of :data:`MATH_FORMATS`), else a TypeError
    (not a str) or a SpecError (another name) naming ``what``: the one check of a math format
    (the GEMM tables, :meth:`ChipSpec.peak`, a chip's ``tensor_flops`` and a weight format's
    ``math`` each spelt their own).

    >>> check_math_format("fp8")
    'fp8'
    >>> check_math_format("fp16")
    Traceback (most recent call last):
    ...
    fabric.SpecError: math format must be one of bf16, fp8, fp4, int8, got 'fp16'
    """
    return check_choice(value, what, MATH_FORMATS)


def check_generation(value, what="generation"):
    """``value`` where a GPU generation is due (one of :data:`GENERATIONS`, or None: none
    stated), else a TypeError (not a str) or a SpecError (another name) naming ``what``: the
    one check of a generation (a chip's and the GEMM tables').

    >>> check_generation("hopper"), check_generation(None)
    ('hopper', None)
    >>> check_generation("hoper")
    Traceback (most recent call last):
    ...
    fabric.SpecError: generation must be one of hopper, blackwell or None, got 'hoper'
    """
    return check_choice(value, what, GENERATIONS, optional=True)


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
    tensor_flops : tuple of (str, float)
        Dense tensor-core FLOP/s (OP/s for INT8) per math format, as ``(format, value)``
        pairs; the ``"bf16"`` entry is ``peak_flops`` (added if absent). Read it with
        :meth:`peak` / :meth:`gemm_flops`.
    tensor_source : str
        Where the ``tensor_flops`` figures other than BF16 come from.
    generation : str or None
        The NVIDIA GPU architecture (``"hopper"`` or ``"blackwell"``, as the chip's own
        source names it) by which runtimes index their tables (:func:`fabric.runtime_arch`);
        ``None`` for a chip that is neither (runtimes then take Hopper's tables, an
        assumption).
    grace_gpus : int
        GPUs that share one NVIDIA Grace CPU over NVLink-C2C on a Grace superchip (GB200,
        GB300: 2); 0 for a GPU on a PCIe host. The one record of a "Grace host": the host
        CPU is Arm, and the NICs hang off the Grace, which both GPUs of the superchip reach
        over C2C (read by :func:`topologies.rail_optimized`'s NIC attachment and the NCCL
        runtime, :mod:`analysis._collectives`).
    host_source : str
        Where ``grace_gpus`` comes from.
    sms : int
        The streaming multiprocessors the product enables (H100 SXM5: 132 of the GH100's 144),
        where a kernel sizes its grid from the device's count (DeepEP d28bd67's low-latency
        dispatch, :meth:`fabric.ExchangeKernel.send_waves`); ``0`` where no original figure is
        recorded, and such a kernel then keeps the grid its code was read for. Not among
        :meth:`parameters` (the figures every fabric built on the chip lists): the computation
        that sizes a grid from it lists ``<chip>.sms`` (:func:`analysis.moe_exchange`).
    sms_source : str
        Where ``sms`` comes from (needed with a nonzero ``sms``).
    """

    name: str
    hbm_bytes: int
    hbm_bandwidth: float
    peak_flops: float
    reduce_rate: float
    source: str
    generation: str | None = None
    tensor_flops: tuple = ()
    tensor_source: str = ""
    grace_gpus: int = 0
    host_source: str = ""
    sms: int = 0
    sms_source: str = ""

    def __post_init__(self):
        # labels of the wrong kind (name=5 named every Parameter '5.hbm_bytes')
        text_of(self.name, "chip name")
        # how the messages name the chip: quoted as every echoed value is (show_value), so a
        # 5000-character name is not a 5 KB line in each of them
        chip = f"chip {show_value(self.name)}"
        for field in ("source", "tensor_source", "host_source", "sms_source"):
            text_of(getattr(self, field), f"{chip}: {field}")
        # a figure of the wrong kind or out of range failed deep inside a model (a string) or
        # was silently read (True as 1 B/s, a negative HBM size)
        object.__setattr__(self, "hbm_bytes", check_count(
            self.hbm_bytes, "hbm_bytes", 1, f"an integer >= 1 ({chip})"))
        for field, unit in (("hbm_bandwidth", "B/s"), ("peak_flops", "FLOP/s"),
                            ("reduce_rate", "B/s")):
            object.__setattr__(self, field, check_number(
                field, getattr(self, field), 0, f" {unit}", strict=True,
                tail=f" ({chip})"))
        pairs = items_of(self.tensor_flops.items() if isinstance(self.tensor_flops, dict)
                         else self.tensor_flops)
        if pairs is None or not all(isinstance(p, (tuple, list)) and len(p) == 2 for p in pairs):
            raise SpecError(f"{chip}: tensor_flops must be (format, FLOP/s) pairs, "
                            f"got {show_value(self.tensor_flops)}")
        flops = dict(self.tensor_flops)
        if len(flops) != len(self.tensor_flops):
            raise SpecError(f"{chip}: tensor_flops names a format twice")
        for fmt, v in flops.items():
            check_math_format(fmt, f"{chip}: tensor_flops format")
            # a numpy float or a Fraction: the float it equals
            flops[fmt] = check_number(f"tensor_flops[{fmt!r}]", v, 0, " FLOP/s", strict=True,
                                      tail=f" ({chip})")
        if flops.get("bf16", self.peak_flops) != self.peak_flops:
            raise SpecError(f"{chip}: tensor_flops['bf16']={show_value(flops['bf16'])} "
                            f"disagrees with peak_flops={show_value(self.peak_flops)}")
        flops["bf16"] = self.peak_flops
        object.__setattr__(self, "tensor_flops",
                           tuple((f, flops[f]) for f in MATH_FORMATS if f in flops))
        object.__setattr__(self, "grace_gpus", check_count(
            self.grace_gpus, "grace_gpus", 0, f"an integer >= 0 ({chip})"))
        object.__setattr__(self, "sms", check_count(
            self.sms, "sms", 0, f"an integer >= 0 ({chip}; 0: not known)"))
        if self.sms and not self.sms_source:
            raise SpecError(f"{chip}: sms={self.sms} needs sms_source (where the count comes "
                            "from)")
        check_generation(self.generation, f"{chip}: generation")

    def peak(self, fmt):
        """Dense tensor-core FLOP/s of math format ``fmt``, or ``None`` if the chip has no
        tensor cores for it.

        >>> chip_spec("b200").peak("fp4") / 1e15, chip_spec("h100").peak("fp4")
        (9.0, None)
        """
        return dict(self.tensor_flops).get(check_math_format(fmt))

    def gemm_format(self, fmt):
        """The math format a GEMM of math format ``fmt`` runs in on this chip: ``fmt``
        itself where the chip has tensor cores for it, else ``"bf16"``: engines then run
        the quantized weights through a weight-only kernel that dequantizes them to BF16
        (vLLM's FP8 Marlin on GPUs without FP8, PR #5975: "fused dequantization kernel
        for FP8 to BF16/FP16"; its Marlin FP4 path on GPUs without FP4: "Weight-only FP4
        compression will be used leveraging the Marlin kernel"; TensorRT-LLM PR #14775:
        NVFP4 on Hopper as W4A16).

        >>> chip_spec("h200").gemm_format("fp4"), chip_spec("b200").gemm_format("fp4")
        ('bf16', 'fp4')
        """
        return fmt if self.peak(fmt) is not None else "bf16"

    def gemm_flops(self, fmt):
        """Dense FLOP/s of a GEMM of math format ``fmt``: the peak of
        :meth:`gemm_format`.

        >>> chip_spec("h100").gemm_flops("fp8") / 1e12, chip_spec("tpu-v4").gemm_flops("fp8") / 1e12
        (1978.9, 275.0)
        """
        return self.peak(self.gemm_format(fmt))

    def parameters(self):
        """The figures as :class:`~fabric.Parameter` records, for a report: capacity,
        bandwidth, BF16 peak, reduction rate, then the dense peak of each other math format
        the chip has (``<chip>.peak_flops.<format>``).

        >>> [p.name for p in chip_spec("h200").parameters()][2:]
        ['h200.peak_flops', 'h200.reduce_rate', 'h200.peak_flops.fp8', 'h200.peak_flops.int8']
        """
        return (
            Parameter(f"{self.name}.hbm_bytes", self.hbm_bytes, "B", self.source),
            Parameter(f"{self.name}.hbm_bandwidth", self.hbm_bandwidth, "B/s", self.source),
            Parameter(f"{self.name}.peak_flops", self.peak_flops, "FLOP/s", self.source),
            Parameter(f"{self.name}.reduce_rate", self.reduce_rate, "B/s", REDUCE_RATE_NOTE),
        ) + tuple(
            Parameter(f"{self.name}.peak_flops.{fmt}", v, "OP/s" if fmt == "int8" else "FLOP/s",
                      self.tensor_source)
            for fmt, v in self.tensor_flops if fmt != "bf16") + ((
            Parameter(f"{self.name}.grace_gpus", self.grace_gpus, "", self.host_source),)
            if self.grace_gpus else ())


def _chip(name, hbm_bytes, hbm_bandwidth, peak_flops, source, generation=None, tensor=(),
          tensor_source="", grace_gpus=0, host_source="", sms=0, sms_source=""):
    return ChipSpec(name, hbm_bytes, hbm_bandwidth, peak_flops, hbm_bandwidth / 3, source,
                    generation, tuple(tensor), tensor_source, grace_gpus, host_source,
                    sms=sms, sms_source=sms_source)


_GRACE_SRC = ("NVIDIA GB200 / GB300 NVL72 (second-hand: elprocus.com 'NVIDIA GB200 AI Chip', "
              "hyper.ai 'NVIDIA Blackwell Superchip'): a Grace Blackwell superchip is one Grace "
              "CPU and two Blackwell GPUs joined by NVLink-C2C; an NVL72 rack holds 36 Grace CPUs "
              "and 72 GPUs (2 per Grace)")


_HOPPER_SRC = ("NVIDIA H100 SXM datasheet (via archive-lib.hpctech.co.jp, glennklockwood.com/"
               "garden/processors/h100): FP8 and INT8 Tensor Core 3,958 TFLOPS/TOPS with "
               "sparsity, 1/2 without: 1,978.9 dense")
#: Dense FP8 and INT8 tensor rates of the GH100 die (H100, H200, H800), per _HOPPER_SRC.
_GH100_TENSOR = (("fp8", 1978.9e12), ("int8", 1978.9e12))
_B200_SRC = ("NVIDIA HGX B200 per-GPU specifications (GB200 NVL72 / HGX B200 table, "
             "second-hand: zdszero.github.io): FP4 18, FP8/FP6 9, INT8 9 PFLOPS/POPS with "
             "sparsity, halved: 9 / 4.5 / 4.5 dense")


CHIPS = {c.name: c for c in (
    _chip("h100", 80 * GB, 3.35 * TB, 989.4e12,
          "NVIDIA H100 SXM5 datasheet (via archive-lib.hpctech.co.jp and glennklockwood.com/"
          "garden/processors/h100): 80 GB HBM3, 3.35 TB/s, 989.4 TFLOPS dense BF16 "
          "(1,979 with 2:4 sparsity)",
          generation="hopper", tensor=_GH100_TENSOR,
          tensor_source=_HOPPER_SRC, sms=132,
          sms_source="NVIDIA developer blog 'NVIDIA Hopper Architecture In-Depth' (2022-03-22): "
                     "'The H100 SXM5 GPU has 132 SMs, and the PCIe version has 114 SMs' (a "
                     "full GH100 has 144)"),
    _chip("h200", 141 * GB, 4.8 * TB, 989.4e12,
          "NVIDIA H200 SXM material (second-hand: lzwjava.github.io, hwcooling.net): 141 GB "
          "HBM3e, 4.8 TB/s; same GH100 die as H100, so 989.4 TFLOPS dense BF16",
          generation="hopper", tensor=_GH100_TENSOR,
          tensor_source="NVIDIA H200 SXM datasheet 'FP8 Tensor Core 3,958 TFLOPS' with "
                        "sparsity (second-hand: lzwjava.github.io), the H100's GH100 tensor "
                        "cores; " + _HOPPER_SRC),
    _chip("b200", 180 * GB, 8.0 * TB, 2.25e15,
          "NVIDIA HGX B200 at 1000 W (second-hand: glennklockwood.com/garden/processors/B200, "
          "server-parts.eu, Vultr HGX B200 overview): 180 GB HBM3e usable of 192 GB physical, "
          "8 TB/s, 2.25 PFLOPS dense BF16",
          generation="blackwell", tensor=(("fp8", 4.5e15), ("fp4", 9e15), ("int8", 4.5e15)),
          tensor_source=_B200_SRC),
    _chip("h800", 80 * GB, 3.35 * TB, 989.4e12,
          "NVIDIA H800 SXM: the H100 SXM5 die and memory (80 GB HBM3, 3.35 TB/s, 989.4 TFLOPS "
          "dense BF16) with 8 NVLink4 links (second-hand: DeepSeek-V3 report s.3.2, "
          "NVIDIA/nccl issue 892)",
          generation="hopper", tensor=_GH100_TENSOR,
          tensor_source="the H100 SXM5 die: " + _HOPPER_SRC, sms=132,
          sms_source="DeepSeek-V3 technical report (arXiv 2412.19437) s.3.5.1: 'we allocate 20 "
                     "out of the 132 SMs available in the H800 GPU'"),
    _chip("h20", 96 * GB, 4.0 * TB, 148e12,
          "NVIDIA H20 (second-hand: SemiAnalysis and vendor spec sheets): 96 GB HBM3, 4.0 TB/s, "
          "148 TFLOPS dense BF16 (296 sparse), 18 NVLink4 links",
          generation="hopper", tensor=(("fp8", 296e12), ("int8", 296e12)),
          tensor_source="NVIDIA H20 (second-hand: Chinese-market spec tables quoting NVIDIA, "
                        "zangshuxian.com 'INT8 296, FP16 148', willitrunai.com '296 INT8 "
                        "TOPS'): FP8 and INT8 296 dense, twice BF16 as on every Hopper part"),
    _chip("b300", 288 * GB, 8.0 * TB, 2.25e15,
          "NVIDIA HGX B300 (Blackwell Ultra; second-hand: NVIDIA HGX page as reproduced by "
          "vendors): 288 GB HBM3e, 8 TB/s, 2.25 PFLOPS dense BF16 per GPU (18 for 8 GPUs)",
          generation="blackwell", tensor=(("fp8", 4.5e15), ("fp4", 13.5e15)),
          tensor_source="NVIDIA HGX B300 (second-hand: fibermall.com HGX B300 table): FP4 "
                        "'144 PFLOPS | 108 PFLOPS' (sparse | dense) for 8 GPUs = 13.5 dense "
                        "per GPU (Verda's table: 14), FP8/FP6 72 PFLOPS sparse / 8 / 2 = 4.5 "
                        "dense; INT8 not given (cut on Blackwell Ultra; second-hand figures "
                        "disagree)"),
    _chip("gb200", 186 * GB, 8.0 * TB, 2.5e15,
          "NVIDIA GB200 NVL72, per Blackwell GPU (second-hand: NVIDIA GB200 NVL72 page via "
          "glennklockwood.com and vendors): 13.4 TB HBM3e / 72 = 186 GB, 8 TB/s, 180 PFLOPS "
          "dense FP16/BF16 / 72 = 2.5 PFLOPS",
          generation="blackwell", tensor=(("fp8", 5e15), ("fp4", 10e15), ("int8", 5e15)),
          tensor_source="NVIDIA GB200 NVL72 per-GPU specifications (second-hand: "
                        "zdszero.github.io's copy of NVIDIA's table): FP4 20, FP8/FP6 10, INT8 "
                        "10 PFLOPS/POPS with sparsity, halved: 10 / 5 / 5 dense",
          grace_gpus=2, host_source=_GRACE_SRC),
    _chip("gb300", 279 * GB, 8.0 * TB, 2.5e15,
          "NVIDIA GB300 NVL72, per Blackwell Ultra GPU (second-hand: NVIDIA GB300 NVL72 page "
          "via glennklockwood.com/garden/processors/B300, '20 TB HBM at 576 TB/s', and Verda's "
          "per-GPU table, verda.com/blog/gb300-nvl72-architecture): 279 GB HBM3e usable of 288 "
          "GB physical, 576 TB/s / 72 = 8 TB/s, 180 PFLOPS dense FP16/BF16 / 72 = 2.5 PFLOPS",
          generation="blackwell", tensor=(("fp8", 5e15), ("fp4", 15e15), ("int8", 0.165e15)),
          tensor_source="NVIDIA GB300 NVL72 (second-hand: glennklockwood.com/garden/processors/"
                        "B300 '1.1 EF dense FP4', '360 PF FP8'; Verda's per-GPU table, "
                        "verda.com/blog/gb300-nvl72-architecture: FP4 15, FP8 5 PFLOPS, INT8 "
                        "0.165 POPS dense): FP4 1,080 PFLOPS dense / 72 = 15, FP8 360 / 72 = 5",
          grace_gpus=2, host_source=_GRACE_SRC),
    _chip("tpu-v4", 32 * GiB, 1.2 * TB, 275e12,
          "Google Cloud TPU v4 docs (cloud.google.com/tpu/docs/v4, key specifications); "
          "Jouppi et al., ISCA 2023: 32 GiB HBM2, 1,200 GB/s, 275 TFLOPS bf16",
          tensor=(("int8", 275e12),),
          tensor_source="Google Cloud TPU v4 docs (cloud.google.com/tpu/docs/v4): '275 TFLOPS "
                        "(bf16 or int8)'; no FP8"),
    _chip("sd200-chip", 64 * GB, 1.6 * TB, 300e12,
          "assumption: the seed article names no chip. Capacity follows Inspur SD200's 4 TB of "
          "GPU memory over 64 GPUs (China Daily, 2025-08-08, second-hand); bandwidth 1.6 TB/s "
          "and 300 TFLOPS dense BF16 are an assumed accelerator of that class, not published"),
)}


def chip_spec(name):
    """Return the :class:`ChipSpec` called ``name`` (a ``ChipSpec`` passes through).

    Parameters
    ----------
    name : str or ChipSpec
        A chip of :data:`CHIPS` (``"h100"``, ``"b200"``, ``"gb200"``, ...).

    Returns
    -------
    ChipSpec
        Its HBM in bytes, HBM bandwidth in bytes/s, tensor peaks in FLOP/s, each sourced.

    Raises
    ------
    SpecError
        For a name no chip has.
    TypeError
        For what is neither a name nor a ``ChipSpec`` (None, a number).

    Examples
    --------
    >>> chip_spec("b400")
    Traceback (most recent call last):
    ...
    fabric.SpecError: unknown chip 'b400'; known: b200, b300, gb200, gb300, h100, h20, h200, h800, sd200-chip, tpu-v4
    >>> chip_spec(None)
    Traceback (most recent call last):
    ...
    TypeError: chip must be a chip name or a fabric.ChipSpec, got None (a NoneType)
    """
    if isinstance(name, ChipSpec):
        return name
    if not isinstance(name, str):
        raise kind_error(name, "chip", "a chip name or a fabric.ChipSpec")
    return lookup(CHIPS, name, "chip")
