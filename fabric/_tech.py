"""Link technologies: bandwidth per direction and per-hop latency, with sources.

A :class:`LinkTech` describes **one** physical link (one lane of a bundle in
the graph's ``lanes`` sense). Builders multiply ``bandwidth`` by the number of
links they bundle into an edge. ``latency`` is one way: the wire plus the
receiving port's forwarding (SerDes, switch or router pipeline).

Latency figures are hard to source; where a figure is an assumption the
``source`` says so, and the report lists it in its assumptions table.

Examples
--------
>>> link_tech("nvlink4").bandwidth
25000000000.0
>>> link_tech("warp-drive")
Traceback (most recent call last):
...
fabric.SpecError: unknown link technology 'warp-drive'; known: cofabric, ib-ndr, ici-v4, nvlink4, nvlink5, pcie5-x16, roce-400g
"""

from dataclasses import dataclass

from ._errors import SpecError
from ._params import Parameter
from ._schema import CARRIES, bandwidth_fault, latency_fault
from ._units import check_choice, kind_error, lookup, text_of

__all__ = ["TECHNOLOGIES", "LinkTech", "link_tech"]


@dataclass(frozen=True)
class LinkTech:
    """A link technology.

    Attributes
    ----------
    name : str
    bandwidth : float
        Bytes per second per direction of one link.
    latency : float
        Seconds, one way, of the link plus the receiving port's forwarding.
    source : str
        Citation for both figures (and "assumption" where one is).
    carries : {"loadstore", "messages"}, default "loadstore"
        What the link carries: memory transactions (load/store) as well as
        messages, or messages only (InfiniBand and RoCE: remote memory across
        them is reached by RDMA verbs, never by a load; DESIGN.md s.1). Builders
        copy it onto each edge (attribute ``carries``); load/store reach stops
        at a message-only link (:func:`fabric.reach`).
    """

    name: str
    bandwidth: float
    latency: float
    source: str
    carries: str = "loadstore"

    def __post_init__(self):
        text_of(self.name, "link technology name")
        text_of(self.source, f"link technology {self.name!r}: source")
        check_choice(self.carries, "carries", CARRIES)
        for key, fault in (("bandwidth", bandwidth_fault), ("latency", latency_fault)):
            why = fault(getattr(self, key))
            if why:
                raise SpecError(f"link technology {self.name!r}: {key} "
                                f"{getattr(self, key)!r}; {why}")

    def parameters(self):
        """The two figures as :class:`~fabric.Parameter` records, for a report."""
        return (Parameter(f"{self.name}.bandwidth", self.bandwidth, "B/s", self.source),
                Parameter(f"{self.name}.latency", self.latency, "s", self.source))


TECHNOLOGIES = {t.name: t for t in (
    LinkTech(
        "nvlink4", 25e9, 150e-9,
        "bandwidth: 18 links, 450 GB/s per direction per H100 (NVIDIA/nccl-tests issue 212, "
        "NVIDIA/nccl issue 1264); latency: assumption, the UALink 1.0 switch port-to-port "
        "target for a 25.6T switch (<=150 ns, second-hand), NVIDIA publishes no NVSwitch figure"),
    LinkTech(
        "nvlink5", 50e9, 150e-9,
        "bandwidth: 18 links, 900 GB/s per direction per GPU in GB200 NVL72 (NVIDIA product "
        "material, second-hand); latency: assumption as for nvlink4"),
    LinkTech(
        "ib-ndr", 50e9, 130e-9,
        "bandwidth: 400 Gb/s = 50 GB/s per direction (docs/sources.md s.1; DeepSeek-V3 report "
        "s.3.2.2); latency: assumption, NDR switch port-to-port of order 100-150 ns (vendor "
        "figures, second-hand)", carries="messages"),
    LinkTech(
        "roce-400g", 50e9, 600e-9,
        "bandwidth: 400 Gb/s = 50 GB/s per direction; latency: assumption, a deep-buffer "
        "Ethernet switch hop of several hundred ns (vendor figures, second-hand)",
        carries="messages"),
    LinkTech(
        "pcie5-x16", 64e9, 110e-9,
        "bandwidth: PCIe Gen5 x16, 32 GT/s x 16 lanes = 64 GB/s per direction before 128b/130b "
        "encoding; latency: PCIe Gen4/5 switch port to port about 100-120 ns (Broadcom/PCIe "
        "vendor figures, second-hand, docs/sources.md s.1)"),
    LinkTech(
        "ici-v4", 50e9, 250e-9,
        "bandwidth: TPU v4 ICI, 400 Gb/s per direction per link, 6 links per chip (Jouppi et "
        "al., ISCA 2023, via glennklockwood.com TPUv4 notes); latency: assumption, "
        "Google publishes no per-hop figure"),
    LinkTech(
        "cofabric", 64e9, 230e-9,
        "the seed system's Co-Fabric link. bandwidth: assumption, a PCIe Gen5 x16-class SerDes "
        "bundle (64 GB/s per direction), since the seed article gives no link bandwidth; "
        "latency: calibrated so that the 3-hop worst case of the 3D Hyper-Mesh equals the "
        "reported 0.69 us in-system latency (0.69 us / 3 = 230 ns per hop; seed article, "
        "unconfirmed elsewhere)"),
)}


def link_tech(name):
    """Return the :class:`LinkTech` called ``name`` (a ``LinkTech`` passes through).

    Parameters
    ----------
    name : str or LinkTech
        A technology of :data:`TECHNOLOGIES` (``"nvlink4"``, ``"nvlink5"``, ``"ib-ndr"``,
        ``"roce-400g"``, ``"pcie5-x16"``, ...).

    Returns
    -------
    LinkTech
        Its bandwidth in bytes/s per direction of one link, latency in seconds, what it
        carries, each a sourced figure.

    Raises
    ------
    SpecError
        For a name no technology has.
    TypeError
        For what is neither a name nor a ``LinkTech`` (None, a number).

    Examples
    --------
    >>> t = link_tech("nvlink4")
    >>> t.bandwidth, t.carries           # bytes/s per direction of one link
    (25000000000.0, 'loadstore')
    """
    if isinstance(name, LinkTech):
        return name
    if not isinstance(name, str):       # was "unknown link technology None" (chip_spec's twin)
        raise kind_error(name, "link technology", "a technology's name or a fabric.LinkTech")
    return lookup(TECHNOLOGIES, name, "link technology")
