"""Named presets standing for real systems, each with its assumptions and sources.

A preset is a function with no required arguments that returns a Fabric. Every
figure it uses comes from :mod:`fabric._tech` and :mod:`fabric._chips` (with
their sources) or is a named :class:`fabric.Parameter` recorded in the fabric's
``assumptions``.
"""

from fabric import RACK_CHIPS, Parameter

from ._clos import rail_optimized
from ._hypermesh import hypermesh, torus
from ._switched import switched

__all__ = ["PRESETS", "cluster_128", "dgx_h100", "gb200_nvl72", "gb300_nvl72", "hgx_b200",
           "hgx_b300", "hgx_h20", "hgx_h200", "hgx_h800", "nvl72", "sd200_ultra", "tpu_v4_cube"]


def sd200_ultra():
    """The seed system: a 128-chip 3D Hyper-Mesh supernode with Co-Fabric links.

    Assumptions (the seed article gives only 128 chips, "3D Hyper-Mesh",
    Co-Fabric, 0.69 us in-system latency; none of it is confirmed elsewhere):

    * shape 8 x 4 x 4, every dimension fully connected (HyperX-like: "Hyper-Mesh"
      read as a mesh whose lines are all-to-all), so any chip reaches any other
      in at most 3 hops; 13 links per chip (7 + 3 + 3);
    * 16 host domains of 8 chips, one per line along dimension 0, as the
      addressing issue's "16 hosts" and 8-accelerator servers suggest;
    * links: the ``cofabric`` technology (64 GB/s per direction per link, an
      assumption; 230 ns per hop, calibrated so that the 3-hop worst-case
      one-way chip-to-chip path latency equals the reported 0.69 us);
    * chips: the ``sd200-chip`` assumption (see :mod:`fabric._chips`).

    >>> f = sd200_ultra()
    >>> f.n_endpoints, len(f.domains)
    (128, 16)
    """
    f = hypermesh((8, 4, 4), "full", tech="cofabric", chips_per_host=8, chip="sd200-chip",
                  name="sd200-ultra")
    extra = (
        Parameter("sd200-ultra.shape", "8x4x4 full", "",
                  "assumption: 128 chips (seed article) as a HyperX-like 3D Hyper-Mesh"),
        Parameter("sd200-ultra.in_system_latency", 0.69e-6, "s",
                  "seed article (unconfirmed): taken as the worst-case one-way path latency"),
        Parameter("sd200-ultra.chips_per_host", 8, "",
                  "assumption: 16 host domains of 8 chips"),
    )
    return f.replace(assumptions=f.assumptions + extra)


def cluster_128():
    """A loosely coupled cluster of the same size: 16 servers x 8 H100, rail-optimized, 400G.

    Each HGX H100 server joins its 8 GPUs with NVSwitch (18 NVLink4 links per
    GPU, 450 GB/s per direction; NVIDIA/nccl-tests issue 212); GPU i of every
    server has its own 400 Gb/s NIC (InfiniBand NDR, 50 GB/s; docs/sources.md s.1)
    on rail leaf i; 8 spines, non-blocking. The GPU-NIC link is PCIe Gen5 x16.

    >>> cluster_128().n_endpoints
    128
    """
    f = rail_optimized(16, 8, scaleup_tech="nvlink4", scaleup_links=18, nic_tech="ib-ndr",
                       pcie_tech="pcie5-x16", reduction=True, chip="h100", name="cluster-128")
    return _in_racks(f, "dgx-h100")


def _in_racks(f, system):
    """``f`` with the published rack density of ``system`` (:data:`fabric.RACK_CHIPS`)."""
    return f.replace(assumptions=f.assumptions + (RACK_CHIPS[system],))


def dgx_h100():
    """One DGX H100: 8 H100 GPUs on 4 NVSwitch chips with NVLink SHARP.

    18 NVLink4 links per GPU (25 GB/s per direction each, 450 GB/s per GPU;
    NVIDIA/nccl-tests issue 212) spread over the four NVSwitches as 5, 4, 4, 5
    (NVIDIA DGX H100 user guide, second-hand). The switches support in-network
    reduction (NVLink SHARP; nccl-tests issue 212 reports ~480 GB/s busbw).

    >>> dgx_h100().graph.degree("sw0", weight="lanes")
    40
    """
    return _in_racks(switched(8, 4, links=(5, 4, 4, 5), tech="nvlink4", reduction=True,
                              chip="h100", name="dgx-h100"), "dgx-h100")


def nvl72():
    """GB200 NVL72's NVLink domain: 72 GPUs, 18 NVLink5 links each, one to each of 18 NVSwitch
    planes.

    900 GB/s per direction per GPU (NVIDIA product material, second-hand); host
    domains of 4 GPUs (a compute tray's GPUs); NVLink SHARP in the switches. The GPUs
    are ``b200`` figures, a GPU on a PCIe host (no Grace: its host memory over the
    PCIe figure, :data:`fabric.HOST_MEMORY_LOAD`); :func:`gb200_nvl72` has the Grace
    superchip's own.

    >>> nvl72().params["planes"]
    18
    """
    return _in_racks(switched(72, 18, tech="nvlink5", reduction=True, chips_per_host=4,
                              chip="b200", name="nvl72"), "nvl72")


def hgx_h200():
    """An HGX H200 server: 8 H200 GPUs on 4 NVSwitch chips with NVLink SHARP.

    The DGX H100 board with H200 GPUs: 18 NVLink4 links per GPU (25 GB/s per
    direction each, 450 GB/s; NVIDIA/nccl-tests issue 272 runs all_reduce_perf on
    8x H200 "connected via NVLINK4") spread 5, 4, 4, 5 over the four NVSwitches
    (as the DGX H100 user guide gives for that board, second-hand); chips
    ``h200`` (:mod:`fabric._chips`).

    >>> hgx_h200().chip.name
    'h200'
    """
    return switched(8, 4, links=(5, 4, 4, 5), tech="nvlink4", reduction=True, chip="h200",
                    name="hgx-h200")


def hgx_h800():
    """An HGX H800 server: 8 H800 GPUs with 8 NVLink4 links each (200 GB/s per direction).

    H800 is H100 with its NVLink cut to 8 links (NVIDIA/nccl issue 892 logs "16 coll
    channels" on 8x H800; DeepEP states ~160 GB/s of NVLink per H800). The 8 links
    are spread 2 per NVSwitch over the board's four NVSwitches (an assumption: the
    HGX board has four, and no source gives the H800 split). The switches reduce in
    the network: NVIDIA/nccl issue 1374 reports 215 GB/s all-reduce busbw on 8x
    H800, above the 164.8 GB/s a ring can reach over 8 links (NVLink SHARP at work).

    >>> f = hgx_h800()
    >>> f.graph.degree("chip0", weight="lanes")
    8
    """
    return switched(8, 4, links=(2, 2, 2, 2), tech="nvlink4", reduction=True, chip="h800",
                    name="hgx-h800")


def hgx_h20():
    """An HGX H20 server: 8 H20 GPUs, 18 NVLink4 links each, on 4 NVSwitch chips.

    18 NVLink4 per GPU on NVSwitch (deepseek-ai/DeepEP issue 303 describes the
    system; the H20 keeps the full 900 GB/s bidirectional NVLink, second-hand),
    spread 5, 4, 4, 5 as on the HGX H100 board (assumption); chips ``h20``.

    >>> hgx_h20().n_endpoints
    8
    """
    return switched(8, 4, links=(5, 4, 4, 5), tech="nvlink4", reduction=True, chip="h20",
                    name="hgx-h20")


def hgx_b200():
    """An HGX B200 server: 8 B200 GPUs, 18 NVLink5 links each, on 2 NVSwitch chips.

    18 NVLink5 links per GPU, 50 GB/s per direction each (900 GB/s; NVIDIA/nccl issue
    1807 reports NCCL's detected maxBw 721.8 = 18 x SM100_NVLINK_BW 40.1), 9 to each
    of the board's two NVSwitch chips (NVIDIA HGX B200 material, second-hand);
    NVLink SHARP in the switches; chips ``b200``.

    >>> hgx_b200().graph.degree("sw0", weight="lanes")
    72
    """
    return switched(8, 2, links=(9, 9), tech="nvlink5", reduction=True, chip="b200",
                    name="hgx-b200")


def hgx_b300():
    """An HGX B300 server: 8 B300 GPUs, 18 NVLink5 links each, on 2 NVSwitch chips.

    "NVLink5 18 links per GPU" (NVIDIA/nccl issue 2140); the board as HGX B200
    (two NVSwitch chips, 9 links to each; assumption); NVLink SHARP (the same issue
    runs NCCL's NVLS algorithm on it); chips ``b300``.

    >>> hgx_b300().chip.name
    'b300'
    """
    return switched(8, 2, links=(9, 9), tech="nvlink5", reduction=True, chip="b300",
                    name="hgx-b300")


def gb200_nvl72():
    """GB200 NVL72 with its own chips: :func:`nvl72` with ``gb200`` GPUs (186 GB, 2.5 PFLOPS).

    The NVLink domain is the same as ``nvl72`` (72 GPUs, 18 NVLink5 links each, one
    to each of 18 NVSwitch planes; compute trays of 4 GPUs as host domains). The
    ``nvl72`` preset keeps the ``b200`` chip figures it had.

    >>> gb200_nvl72().chip.name
    'gb200'
    """
    return _in_racks(switched(72, 18, tech="nvlink5", reduction=True, chips_per_host=4,
                              chip="gb200", name="gb200-nvl72"), "nvl72")


def gb300_nvl72():
    """GB300 NVL72: 72 Blackwell Ultra GPUs (``gb300``: 279 GB, 8 TB/s, 2.5 PFLOPS) on NVLink5.

    The NVLink domain of GB200 NVL72: 18 NVLink5 links per GPU, one to each of 18
    NVSwitch planes, 900 GB/s per direction per GPU (NVIDIA: "130 TB/s" of NVLink over
    72 GPUs = 1.8 TB/s bidirectional per GPU, second-hand via
    glennklockwood.com/garden/processors/B300 and Verda's GB300 NVL72 article);
    compute trays of 4 GPUs (2 Grace CPUs, 4 GPUs) as host domains; NVLink SHARP in
    the switches (as GB200 NVL72: an assumption, no GB300 NVLS measurement found). One
    rack of 72 GPUs, the GB200 NVL72 density (GB300 NVL72 "maintains compatibility with
    the GB200 NVL72 Oberon rack", glennklockwood.com/garden/processors/B300, second-hand).

    >>> f = gb300_nvl72()
    >>> f.chip.name, f.n_endpoints, f.params["planes"]
    ('gb300', 72, 18)
    """
    return _in_racks(switched(72, 18, tech="nvlink5", reduction=True, chips_per_host=4,
                              chip="gb300", name="gb300-nvl72"), "nvl72")


def tpu_v4_cube():
    """One TPU v4 cube: 4 x 4 x 4 chips as a 3D torus over ICI (Jouppi et al., ISCA 2023).

    Six ICI links per chip; within a 64-chip cube the wrap-around links pass
    through the optical circuit switches, modelled as direct links. Hosts of 4
    chips (a TPU v4 tray).

    >>> tpu_v4_cube().graph.number_of_edges()
    192
    """
    return _in_racks(torus((4, 4, 4), tech="ici-v4", chips_per_host=4, chip="tpu-v4",
                           name="tpu-v4-cube"), "tpu-v4")


PRESETS = {
    "sd200-ultra": sd200_ultra,
    "cluster-128": cluster_128,
    "dgx-h100": dgx_h100,
    "nvl72": nvl72,
    "tpu-v4-cube": tpu_v4_cube,
    "hgx-h200": hgx_h200,
    "hgx-h800": hgx_h800,
    "hgx-h20": hgx_h20,
    "hgx-b200": hgx_b200,
    "hgx-b300": hgx_b300,
    "gb200-nvl72": gb200_nvl72,
    "gb300-nvl72": gb300_nvl72,
}
