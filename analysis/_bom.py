"""Bill of materials of a fabric: parts counted one way on every system, priced and powered.

Counting rules, the same for every fabric:

* A **link** is one lane of a graph edge (an edge with ``lanes=18`` is 18
  links). Each link is placed in a reach class (:data:`fabric.MEDIA`): a
  **board trace** when both ends are on one board, else a **cable** of the
  cheapest medium whose reach covers its length (passive copper, active
  copper, optics). Only cables are counted as cables.
* **Placement.** Chips and NICs sit with their host domain; hosts fill racks
  in rank order, whole hosts at a time, up to the system's rack density
  (:func:`fabric.rack_chips`: the fabric's own, else the book's). A
  switch whose neighbours are all chips of one host is on that host's board (a
  baseboard switch such as an HGX NVSwitch); a switch whose neighbours all sit
  in one rack is in that rack (top of rack); any other switch is in a network
  rack in the middle of the row. Lengths follow the book's layout constants.
* A **transceiver** is one end of an optical cable (two per optical cable).
* A **switch ASIC** count is ``ceil(capacity / asic capacity)`` per switch
  node, capacity the sum of its links' rates in one direction; a **switch
  box** is a switch node that is not on a board.
* A **switch port** is one link end at a switch; a **NIC** a ``kind="nic"`` node.

Costs and powers are the counts times the unit inputs of a
:class:`fabric.HardwareCosts` book (every input a sourced
:class:`fabric.Parameter`); the network's share of the system adds the rest of
the system per chip (the book's node price, the chip's power and its host's).

Examples
--------
>>> import topologies
>>> b = bill_of_materials(topologies.build("cluster-128"))
>>> b.cables, b.links["trace"], b.switch_boxes, b.nics
(256, 2432, 16, 128)
"""

import dataclasses
import math

import numpy as np

from fabric import MEDIA, Parameter, chip_power, hardware_costs, rack_chips
from fabric._fabric_arg import fabric_arg
from fabric._units import check_number

__all__ = ["BillOfMaterials", "bill_of_materials"]


@dataclasses.dataclass(frozen=True)
class BillOfMaterials:
    """Counts, cost (USD) and power (W) of a fabric's network parts.

    Attributes
    ----------
    system : str
    chips : int
    book : str
        The cost book's name.
    links : dict
        Links (lanes) per reach class, keys :data:`fabric.MEDIA`.
    link_gbps : dict
        Total rate per reach class, Gb/s in one direction.
    cables : int
        Links that are cables (not board traces).
    transceivers : int
    switch_asics, switch_boxes, switch_ports, nics : int
    cost_usd : dict
        Network cost by item: ``"cables"``, ``"transceivers"``, ``"switches"``, ``"nics"``.
    power_w : dict
        Network power by the same items, and ``"ports"``: the chips' own link
        ports (see :attr:`fabric.HardwareCosts.port_w_per_gbps`).
    system_usd_per_chip, system_w_per_chip : float
        The rest of the system per chip (the book's node price; the chip's and
        its host's power).
    parameters : tuple of Parameter
        Every unit input used.
    """

    system: str
    chips: int
    book: str
    links: dict
    link_gbps: dict
    cables: int
    transceivers: int
    switch_asics: int
    switch_boxes: int
    switch_ports: int
    nics: int
    cost_usd: dict
    power_w: dict
    system_usd_per_chip: float
    system_w_per_chip: float
    parameters: tuple = ()

    @property
    def cost_usd_total(self):
        """Network cost, USD."""
        return float(sum(self.cost_usd.values()))

    @property
    def power_w_total(self):
        """Network power, W."""
        return float(sum(self.power_w.values()))

    @property
    def cost_usd_per_chip(self):
        """Network cost per chip, USD."""
        return self.cost_usd_total / self.chips

    @property
    def power_w_per_chip(self):
        """Network power per chip, W."""
        return self.power_w_total / self.chips

    @property
    def cost_share(self):
        """The network's share of the system's cost (0-1)."""
        net = self.cost_usd_per_chip
        return net / (net + self.system_usd_per_chip)

    @property
    def power_share(self):
        """The network's share of the system's power (0-1)."""
        net = self.power_w_per_chip
        return net / (net + self.system_w_per_chip)

    def as_dict(self):
        """A JSON-ready dict; every numeric field names its unit."""
        return {
            "system": self.system, "chips": self.chips, "cost_book": self.book,
            "links_by_reach": dict(self.links),
            "link_gbps_by_reach": {k: float(v) for k, v in self.link_gbps.items()},
            "cables": self.cables, "transceivers": self.transceivers,
            "switch_asics": self.switch_asics, "switch_boxes": self.switch_boxes,
            "switch_ports": self.switch_ports, "nics": self.nics,
            "cost_usd_by_item": {k: float(v) for k, v in self.cost_usd.items()},
            "power_w_by_item": {k: float(v) for k, v in self.power_w.items()},
            "network_cost_usd": self.cost_usd_total,
            "network_power_w": self.power_w_total,
            "network_cost_usd_per_chip": self.cost_usd_per_chip,
            "network_power_w_per_chip": self.power_w_per_chip,
            "network_cost_share": self.cost_share,
            "network_power_share": self.power_share,
        }


def _racks(f, rack_chips):
    """Host -> rack index, hosts in rank order, whole hosts per rack; and the rack count."""
    host_rack, rack, used = {}, 0, 0
    for host, chips in f.domains.items():
        n = len(chips)
        if used and used + n > rack_chips:
            rack, used = rack + 1, 0
        host_rack[host] = rack
        used += n
        if used >= rack_chips:      # a host as big as a rack (or bigger) fills its own racks
            rack, used = rack + math.ceil(used / rack_chips), 0
    return host_rack, (rack + 1 if used else rack) or 1


def _place(f, rack_chips):
    """Node -> (rack, board); rack ``None`` is the network rack, board ``None`` no board."""
    G = f.graph
    host_rack, n_racks = _racks(f, rack_chips)
    place = {}
    for node, d in G.nodes(data=True):
        if d["kind"] != "switch" and d.get("host") in host_rack:
            place[node] = (host_rack[d["host"]], d["host"])
    for node, d in G.nodes(data=True):
        if node in place:
            continue
        near = [place[m] for m in G[node] if m in place]     # chips and NICs only
        only_chips = all(G.nodes[m]["kind"] == "chip" for m in G[node])
        if near and only_chips and len({p[1] for p in near}) == 1:
            place[node] = near[0]                            # on the host's board
        elif near and len({p[0] for p in near}) == 1:
            place[node] = (near[0][0], None)                 # top of rack
        else:
            place[node] = (None, None)                       # network rack
    return place, n_racks


def _length(book, a, b, n_racks):
    """Cable length (m) between two placements."""
    (ra, _), (rb, _) = a, b
    if ra is not None and ra == rb:
        return book.value("in_rack_m")
    middle = (n_racks - 1) / 2
    xa = middle if ra is None else ra
    xb = middle if rb is None else rb
    return book.value("inter_rack_m") + book.value("rack_pitch_m") * abs(xa - xb)


def bill_of_materials(f, book="street-2026", *, rack_chips_factor=1.0):
    """Count, price and power the network parts of fabric ``f`` (see the module docstring).

    Parameters
    ----------
    f : fabric.Fabric
    book : str or fabric.HardwareCosts, default "street-2026"
        Unit prices and powers (:data:`fabric.COST_BOOKS`).
    rack_chips_factor : float, default 1.0
        Scales the system's rack density (:func:`fabric.rack_chips`), for a
        sensitivity study; at least one host per rack is kept.

    Returns
    -------
    BillOfMaterials

    A degraded copy (:func:`fabric.without`) has the bill of the fabric as built
    (:attr:`fabric.Fabric.intact`, whose name the result carries): the parts bought do
    not change when a link, lane, chip or switch fails, and they stay in the rack and
    are counted, priced and powered as built. (The degraded graph no longer holds
    them, nor, after a failed chip, the placement of the hosts in racks.)

    Raises
    ------
    SpecError
        ``f`` is marked degraded but does not hold the fabric it was made from (it was
        not made by :func:`fabric.without`), or ``rack_chips_factor`` is not a
        positive number.

    Examples
    --------
    >>> import topologies
    >>> b = bill_of_materials(topologies.build("nvl72"))
    >>> b.links["dac"], b.switch_asics, b.switch_boxes
    (1296, 18, 18)
    >>> bill_of_materials(topologies.build("nvl72").without(chips=["sw3"])).switch_asics
    18
    """
    f = fabric_arg(f, "f")
    if f.failures:          # (a degraded Fabric carries its intact one: Fabric refuses it else)
        return bill_of_materials(f.intact, book, rack_chips_factor=rack_chips_factor)
    # a float: a Fraction has no :g format below
    rack_chips_factor = check_number("rack_chips_factor", rack_chips_factor, 0, strict=True)
    book = hardware_costs(book)
    G = f.graph
    density = rack_chips(f, book)
    if rack_chips_factor != 1.0:
        density = Parameter(density.name, density.value * rack_chips_factor, density.unit,
                            f"x{rack_chips_factor:g} of: {density.source}")
    place, n_racks = _place(f, density.value)
    links = dict.fromkeys(MEDIA, 0)
    gbps_by = dict.fromkeys(MEDIA, 0.0)
    cost = dict.fromkeys(("cables", "transceivers", "switches", "nics"), 0.0)
    power = dict.fromkeys((*cost, "ports"), 0.0)
    capacity = {}                     # switch node -> Gb/s one direction
    ports = 0
    transceivers = 0
    # The book's values and each kind of cable, looked up once (the loop runs per edge:
    # ~10^5 edges in the scaling study's fabrics); the sums are formed as before.
    xcvr_usd = book.value("transceiver_usd_per_gbps")
    port_w = book.value("port_w_per_gbps")
    acc_w_end = book.value("acc_w_per_gbps_end")
    cable_w = {m: book.value(f"{m}_w_per_cable") for m in MEDIA[1:]}
    xcvr_w = {True: book.value("transceiver_switch_w_per_gbps"),
              False: book.value("transceiver_end_w_per_gbps")}
    kind = dict(G.nodes(data="kind"))
    cables = {}                       # (racks of the ends, rate) -> (medium, one cable's USD)
    # Each sum is a local accumulator fed in edge order, as the dict entries were (the same
    # additions in the same order: the same floats).
    ports_w = cables_usd = cables_w = xcvr_usd_sum = xcvr_w_sum = 0.0
    for a, b, d in G.edges(data=True):
        lanes = int(d.get("lanes", 1))
        rate = d["bandwidth"] / lanes * 8 / 1e9           # Gb/s of one link
        pa, pb = place[a], place[b]
        ka, kb = kind[a], kind[b]
        sa, sb = ka == "switch", kb == "switch"
        if sa:
            capacity[a] = capacity.get(a, 0.0) + rate * lanes
            ports += lanes
        elif ka == "chip":
            ports_w += lanes * rate * port_w
        if sb:
            capacity[b] = capacity.get(b, 0.0) + rate * lanes
            ports += lanes
        elif kb == "chip":
            ports_w += lanes * rate * port_w
        if pa[1] is not None and pa[1] == pb[1]:
            links["trace"] += lanes
            gbps_by["trace"] += rate * lanes
            continue
        key = (pa[0], pb[0], rate)
        got = cables.get(key)
        if got is None:
            length = _length(book, pa, pb, n_racks)
            medium = book.medium_for(length, rate)
            got = cables[key] = medium, book.cable_cost(medium, rate, length)
        medium, usd = got
        links[medium] += lanes
        gbps_by[medium] += rate * lanes
        if medium == "trace":
            continue
        cables_usd += lanes * usd
        cables_w += lanes * cable_w[medium]
        if medium == "acc":
            cables_w += lanes * 2 * rate * acc_w_end
        if medium == "optics":
            transceivers += 2 * lanes
            xcvr_usd_sum += lanes * 2 * rate * xcvr_usd
            xcvr_w_sum += lanes * rate * xcvr_w[sa]
            xcvr_w_sum += lanes * rate * xcvr_w[sb]
    power["ports"] += ports_w
    cost["cables"] += cables_usd
    power["cables"] += cables_w
    cost["transceivers"] += xcvr_usd_sum
    power["transceivers"] += xcvr_w_sum
    cap = np.array(sorted(capacity.values()), dtype=float)
    asics = int(np.ceil(cap / book.value("switch_asic_gbps")).sum()) if cap.size else 0
    cost["switches"] = (float(cap.sum()) * book.value("switch_usd_per_gbps")
                        + len(capacity) * book.value("switch_usd_per_box"))
    power["switches"] = float(cap.sum()) * book.value("switch_w_per_gbps")
    boxes = sum(1 for s in capacity if place[s][1] is None)
    nics = sum(1 for _, k in G.nodes(data="kind") if k == "nic")
    cost["nics"] = nics * book.value("nic_usd")
    power["nics"] = nics * book.value("nic_w")
    chip_w = chip_power(f.chip)
    return BillOfMaterials(
        system=f.name, chips=f.n_endpoints, book=book.name, links=links, link_gbps=gbps_by,
        cables=sum(links[m] for m in MEDIA[1:]), transceivers=transceivers,
        switch_asics=asics, switch_boxes=boxes, switch_ports=ports, nics=nics,
        cost_usd=cost, power_w=power,
        system_usd_per_chip=book.value("node_usd_per_chip"),
        system_w_per_chip=chip_w.value + book.value("host_w_per_chip"),
        parameters=tuple(density if p.name == density.name else p
                         for p in book.parameters()) + (chip_w,))
