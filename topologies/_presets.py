"""Named presets standing for real systems, each with its assumptions and sources.

A preset is a function with no required arguments that returns a Fabric. Every
figure it uses comes from :mod:`fabric._tech` and :mod:`fabric._chips` (with
their sources) or is a named :class:`fabric.Parameter` recorded in the fabric's
``assumptions``.
"""

from fabric import Parameter

from ._clos import rail_optimized
from ._hypermesh import hypermesh, torus
from ._switched import switched

__all__ = ["PRESETS", "cluster_128", "dgx_h100", "nvl72", "sd200_ultra", "tpu_v4_cube"]


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
    return rail_optimized(16, 8, scaleup_tech="nvlink4", scaleup_links=18, nic_tech="ib-ndr",
                          pcie_tech="pcie5-x16", reduction=True, chip="h100",
                          name="cluster-128")


def dgx_h100():
    """One DGX H100: 8 H100 GPUs on 4 NVSwitch chips with NVLink SHARP.

    18 NVLink4 links per GPU (25 GB/s per direction each, 450 GB/s per GPU;
    NVIDIA/nccl-tests issue 212) spread over the four NVSwitches as 5, 4, 4, 5
    (NVIDIA DGX H100 user guide, second-hand). The switches support in-network
    reduction (NVLink SHARP; nccl-tests issue 212 reports ~480 GB/s busbw).

    >>> dgx_h100().graph.degree("sw0", weight="lanes")
    40
    """
    return switched(8, 4, links=(5, 4, 4, 5), tech="nvlink4", reduction=True, chip="h100",
                    name="dgx-h100")


def nvl72():
    """GB200 NVL72: 72 GPUs, 18 NVLink5 links each, one to each of 18 NVSwitch planes.

    900 GB/s per direction per GPU (NVIDIA product material, second-hand); host
    domains of 4 GPUs (a compute tray: 2 Grace CPUs, 4 Blackwell GPUs);
    NVLink SHARP in the switches.

    >>> nvl72().params["planes"]
    18
    """
    return switched(72, 18, tech="nvlink5", reduction=True, chips_per_host=4, chip="b200",
                    name="nvl72")


def tpu_v4_cube():
    """One TPU v4 cube: 4 x 4 x 4 chips as a 3D torus over ICI (Jouppi et al., ISCA 2023).

    Six ICI links per chip; within a 64-chip cube the wrap-around links pass
    through the optical circuit switches, modelled as direct links. Hosts of 4
    chips (a TPU v4 tray).

    >>> tpu_v4_cube().graph.number_of_edges()
    192
    """
    return torus((4, 4, 4), tech="ici-v4", chips_per_host=4, chip="tpu-v4", name="tpu-v4-cube")


PRESETS = {
    "sd200-ultra": sd200_ultra,
    "cluster-128": cluster_128,
    "dgx-h100": dgx_h100,
    "nvl72": nvl72,
    "tpu-v4-cube": tpu_v4_cube,
}
