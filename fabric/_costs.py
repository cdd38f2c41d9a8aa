"""Unit prices and powers of fabric hardware: cables by reach, transceivers, switches, NICs.

A :class:`HardwareCosts` is a *book* of unit inputs, every one a named
:class:`~fabric.Parameter` with its unit, year and source. The hardware layer
owns these numbers; :func:`analysis.bill_of_materials` counts the parts of a
fabric and multiplies. Prices move fast: each source below carries its year.

Reach classes (the medium of one physical link, chosen per link as the cheapest
whose reach covers the link's length, the rule of the Slim Fly cost script):

``trace``
    Both ends on one board (a server's baseboard): no cable, no transceiver;
    its SerDes power is part of the chips' own power.
``dac``
    Passive copper (direct-attach cable): at 100G-PAM4 reach <= 3 m, < 0.1 W
    (NVIDIA LinkX 100G-PAM4 product line overview, 2025).
``acc``
    Active (linear) copper: 3-5 m at 100G-PAM4, 1.5 W on an 800G end (same
    page), i.e. 1.875 mW per Gb/s per end.
``optics``
    A fibre with a transceiver at each end: multimode to 50 m, single-mode to
    2 km (same page). Power per end: 17 W per twin-port 800G OSFP on a switch
    (docs.nvidia.com .../800gmms4x00ns/specifications, max), 9 W per 400G
    OSFP/QSFP112 on a NIC or chip (.../400g100gpam4ovpub, max).

Books (:data:`COST_BOOKS`):

``street-2026`` (default)
    Street prices of May 2026 ("street estimates" attributed to FS, NADDOD and
    FiberMall, ifelsefi.github.io fat-tree vs Dragonfly+ calculator): 1.6T
    transceiver $3,600, 1.6T DAC $400, 1.6T ACC $1,100, MPO-12 patch cord $120,
    Quantum-X800 Q3400-RA switch (144 x 800G) $120,000 (range $60K-200K; the list
    price is not published). Prices are taken per Gb/s of the part's rate and
    scaled to each link's rate. Switch energy: Tomahawk 5 (51.2 Tb/s) about
    500 W (TechInsights, 2022), 9.77 pJ/bit; switch-box overhead (fans, CPU)
    is not included (system power NOT FOUND in readable sources). NIC: a
    ConnectX-7 400G single-port OSFP adapter (MCX75310AAS-NEAT) $2,188 (FS.com
    US web shop, Sep 2026, as collected in a public pricing note; NADDOD lists
    the same card at $1,599); its power is still a dated stand-in, 50 W
    (fabcalc 40GbE list, github.com/nicmcd/fabcalc, 2018: the ConnectX-7
    specifications page was not readable here, power NOT FOUND).
``freakonomics-2024``
    The "H100 Freakonomics" spreadsheet (Eugene Cheah, Aug 2024): a 64-port
    400G InfiniBand switch $36,000 (DERIVED: $288,000 / 8 switches) and
    InfiniBand connector + cable $1,280 per 400G link (DERIVED: $2,621,440 /
    2,048 links of the 128-node, two-tier row); every cable optical. Power
    and the rest as in ``street-2026``.
``kim-2008``
    Kim et al.'s cable model (Dragonfly, ISCA 2008, as quoted in
    nicmcd/fabcalc ``Kim08.py``): electrical $/Gb/s = 1.4 L + 2.16, optical
    $/Gb/s = 0.364 L + 9.7103 (L in m, active optical cable, transceivers
    included); power 0.5 W x 2 per electrical cable, 1.5 W x 2 per optical
    cable. The paper gives no router or NIC prices; those are as in
    ``street-2026``.
``slimfly-2014``
    The Slim Fly cost model (Besta and Hoefler, SC 2014, as quoted in a public
    topology-cost script, marked "OUR STANDARD DEFAULT" in SPCL's Python cost
    script): Mellanox FDR10/QDR 40 Gb/s cables, electrical $ = 40 (0.4079 L +
    0.5771), optical $ = 40 (0.0919 L + 7.2745) (L in m; the cheaper at each
    length); router $ = 350.4 k - 892.3 and 4 x 0.7 W = 2.8 W per port of
    radix k (40 Gb/s ports). Power of cables, NICs and the rest as in
    ``street-2026``.

Placement (used to find each link's length; Mudigonda et al., "Taming the
Flying Cable Monster", USENIX ATC 2011, as quoted in ``Costs.h``): a link inside
one rack is 2 m, between racks 4 m of overhead plus 0.6 m per rack of distance
(racks in one row). A rack holds whole host domains, up to the system's own
density when the fabric states one (:func:`rack_chips`, :data:`RACK_CHIPS`: 32
H100 GPUs in four DGX H100 systems per rack, 72 in a GB200 NVL72 rack, 64 TPU v4
chips per rack), else the book's ``layout.rack_chips`` (72, the densest
published rack, an assumption for a system that states none).

The facts and their sources, and the published figures the model is held to
(tests/test_bom.py), are listed in docs/sources.md s.10.

Examples
--------
>>> book = hardware_costs("kim-2008")
>>> round(book.cable_cost("acc", 100, 2.0), 2)          # (1.4 * 2 + 2.16) $/Gb/s x 100 Gb/s
496.0
>>> hardware_costs("street-2026").medium_for(2.0)
'dac'
>>> hardware_costs("abacus")
Traceback (most recent call last):
...
fabric.SpecError: unknown cost book 'abacus'; known: freakonomics-2024, kim-2008, slimfly-2014,
street-2026
"""

import dataclasses
from dataclasses import dataclass

from ._chips import ChipSpec, chip_spec
from ._errors import SpecError
from ._fabric_arg import fabric_arg
from ._params import Parameter
from ._units import kind_error, lookup

__all__ = ["CHIP_POWER", "COST_BOOKS", "MEDIA", "RACK_CHIPS", "HardwareCosts", "chip_power",
           "hardware_costs", "rack_chips"]

#: Reach classes, cheapest-first is decided per book; ``trace`` is on a board.
MEDIA = ("trace", "dac", "acc", "optics")

_LINKX = ("NVIDIA LinkX 100G-PAM4 product line overview (docs.nvidia.com/networking/display/"
          "400g100gpam4ovpub, 2025)")
_STREET = ("ifelsefi.github.io fat-tree vs Dragonfly+ calculator, May 2026 street estimates "
           "attributed to FS / NADDOD / FiberMall")
_FREAK = ("'H100 Freakonomics' spreadsheet, Eugene Cheah, Aug 2024 "
          "(substack.tech-talk-cto.com/p/h100-freakonomics-the-economical)")
_KIM = ("Kim, Dally, Scott, Abts, 'Technology-driven, highly-scalable dragonfly topology', "
        "ISCA 2008, cable model as quoted in github.com/nicmcd/fabcalc Kim08.py (2019)")
_MUDIGONDA = ("Mudigonda et al., 'Taming the Flying Cable Monster', USENIX ATC 2011, "
              "as quoted in a public Costs.h")
_SLIMFLY = ("Besta, Hoefler, 'Slim Fly: a cost effective low-diameter network topology', "
            "SC 2014, cost model as quoted in a public topology-cost script (SPCL's "
            "'OUR STANDARD DEFAULT')")
_FABCALC = "github.com/nicmcd/fabcalc 40GbE price list (FiberStore, 2018)"
_TH5 = "Tomahawk 5, 51.2 Tb/s, about 500 W (TechInsights / J. Byrne, 2022)"
_CX7_PRICE = ("FS.com US web shop, ConnectX-7 VPI 400G OSFP 1-port (MCX75310AAS-NEAT) $2,188, "
              "Sep 2026, as collected with NADDOD's $1,599 for the same card in a public "
              "pricing note ('Phase F1 - NIC, DPU and SmartNIC', 2026-09-15)")


def _p(name, value, unit, source):
    return Parameter(f"cost.{name}", value, unit, source)


@dataclass(frozen=True)
class HardwareCosts:
    """Unit prices (USD) and powers (W) of fabric parts; every field a :class:`Parameter`.

    Prices and powers of cables and switches are per Gb/s of one direction of
    the part's rate, so that one book prices links of any rate; a cable's price
    is ``fixed + rate x (per_gbps + per_gbps_per_m x length)``.

    Attributes
    ----------
    name : str
    dac_reach_m, acc_reach_m, optics_reach_m : Parameter
        Longest cable of each medium (m).
    dac_usd_per_gbps, acc_usd_per_gbps, optics_usd_per_gbps : Parameter
        Cable price per Gb/s (optics: the fibre or the active optical cable).
    dac_usd_per_gbps_m, acc_usd_per_gbps_m, optics_usd_per_gbps_m : Parameter
        Length-proportional part, $ per Gb/s per m (Kim's model).
    optics_usd_per_cable : Parameter
        Fixed price per optical cable (a patch cord).
    transceiver_usd_per_gbps : Parameter
        One transceiver, per Gb/s (two per optical cable; zero where the
        cable price already includes them, as for active optical cables).
    dac_w_per_cable, acc_w_per_cable, acc_w_per_gbps_end, optics_w_per_cable : Parameter
        Cable power: per cable, and for active copper per Gb/s per end.
    transceiver_switch_w_per_gbps, transceiver_end_w_per_gbps : Parameter
        Transceiver power per Gb/s at a switch port and at a NIC or chip port.
    switch_usd_per_gbps, switch_w_per_gbps : Parameter
        Switch price and ASIC power per Gb/s of port capacity (one direction).
    switch_usd_per_box : Parameter
        A fixed part of each switch's price (Slim Fly's affine router price).
    switch_asic_gbps : Parameter
        Capacity of one switch ASIC (Gb/s, one direction).
    port_w_per_gbps : Parameter
        Power of a link's port on a chip (its SerDes), per Gb/s, so that direct
        networks, whose chips drive the links, are not counted as free. Part of
        it is already in the chip's own power (counted twice, a few percent of it).
    nic_usd, nic_w : Parameter
        One NIC.
    in_rack_m, inter_rack_m, rack_pitch_m : Parameter
        Cable lengths: within a rack; between racks, overhead plus pitch per rack.
    rack_chips : Parameter
        Chips per rack (whole host domains).
    node_usd_per_chip, host_w_per_chip : Parameter
        The rest of the system per chip (the chip and its share of the server;
        the host's CPU, memory, NIC share and power supply), for the network's
        share of the system. The chip's own power is :func:`chip_power`.
    """

    name: str
    dac_reach_m: Parameter
    acc_reach_m: Parameter
    optics_reach_m: Parameter
    dac_usd_per_gbps: Parameter
    acc_usd_per_gbps: Parameter
    optics_usd_per_gbps: Parameter
    dac_usd_per_gbps_m: Parameter
    acc_usd_per_gbps_m: Parameter
    optics_usd_per_gbps_m: Parameter
    optics_usd_per_cable: Parameter
    transceiver_usd_per_gbps: Parameter
    dac_w_per_cable: Parameter
    acc_w_per_cable: Parameter
    acc_w_per_gbps_end: Parameter
    optics_w_per_cable: Parameter
    transceiver_switch_w_per_gbps: Parameter
    transceiver_end_w_per_gbps: Parameter
    switch_usd_per_gbps: Parameter
    switch_w_per_gbps: Parameter
    switch_usd_per_box: Parameter
    switch_asic_gbps: Parameter
    port_w_per_gbps: Parameter
    nic_usd: Parameter
    nic_w: Parameter
    in_rack_m: Parameter
    inter_rack_m: Parameter
    rack_pitch_m: Parameter
    rack_chips: Parameter
    node_usd_per_chip: Parameter
    host_w_per_chip: Parameter

    def parameters(self):
        """Every unit input as a tuple of :class:`Parameter` (for an assumptions table)."""
        return tuple(getattr(self, f.name) for f in dataclasses.fields(self)
                     if f.name != "name")

    def value(self, field):
        """The value of one field (a float)."""
        return getattr(self, field).value

    def cable_cost(self, medium, gbps, length_m):
        """Price (USD) of one cable of ``medium`` at ``gbps`` Gb/s and ``length_m`` m.

        Transceivers are priced separately (:attr:`transceiver_usd_per_gbps`).
        """
        if medium == "trace":
            return 0.0
        fixed = self.value("optics_usd_per_cable") if medium == "optics" else 0.0
        return fixed + gbps * (self.value(f"{medium}_usd_per_gbps")
                               + self.value(f"{medium}_usd_per_gbps_m") * length_m)

    def medium_for(self, length_m, gbps=1.0):
        """The cheapest medium (with its transceivers) whose reach covers ``length_m``.

        Ties go to the simpler medium (copper before optics).
        """
        best = None
        for medium in MEDIA[1:]:
            if length_m > self.value(f"{medium}_reach_m"):
                continue
            cost = self.cable_cost(medium, gbps, length_m)
            if medium == "optics":
                cost += 2 * gbps * self.value("transceiver_usd_per_gbps")
            if best is None or cost < best[0]:
                best = (cost, medium)
        if best is None:
            raise SpecError(f"no medium in cost book {self.name!r} reaches {length_m} m")
        return best[1]

    def replace(self, **values):
        """A copy with some values changed (keeping each parameter's name and unit).

        >>> hardware_costs().replace(nic_usd=900.0).nic_usd.value
        900.0
        """
        changes = {}
        for field, value in values.items():
            old = getattr(self, field)
            changes[field] = Parameter(old.name, value, old.unit, "changed from: " + old.source)
        return dataclasses.replace(self, **changes)


_NVL72_RACK = ("GB200 NVL72: 72 GPUs in one rack (NVIDIA product material, second-hand via "
               "setloop.io)")
_SUPERPOD = ("NVIDIA DGX SuperPOD reference architecture with DGX H100 (RA-11333-001 V11, "
             "2023): 'rack design can support one, two, or four DGX H100 systems per rack'; "
             "its single-SU rack layout draws more than 40 kW per rack, i.e. four DGX H100 "
             "systems at 10.2 kW maximum each (DGX H100 datasheet, as quoted by "
             "supercluster.blog)")
_TPU_RACK = ("TPU v4: 4,096 chips in 64 racks (hpcwire.com, 2023-04-10); DERIVED 4096 / 64 "
             "= 64 chips per rack, one 4 x 4 x 4 cube")

#: Published rack densities (chips per rack) of real systems, for presets to record in
#: their fabric's ``assumptions`` (:func:`rack_chips` reads them from there).
RACK_CHIPS = {
    "dgx-h100": Parameter("cost.layout.rack_chips", 32, "chips",
                          _SUPERPOD + "; DERIVED 4 systems x 8 GPUs = 32 per rack"),
    "nvl72": Parameter("cost.layout.rack_chips", 72, "chips", _NVL72_RACK),
    "tpu-v4": Parameter("cost.layout.rack_chips", 64, "chips", _TPU_RACK),
}


def rack_chips(f, book="street-2026"):
    """Chips per rack for fabric ``f``: its own stated density, else the book's (a Parameter).

    A fabric states its rack density by carrying a :class:`Parameter` named
    ``cost.layout.rack_chips`` in its ``assumptions`` (presets of real systems take
    theirs from :data:`RACK_CHIPS`); a fabric that states none is laid out at the
    book's ``layout.rack_chips``.

    Parameters
    ----------
    f : Fabric
        The fabric (a built one: a preset's name or spec is refused).
    book : str or HardwareCosts
        The cost book whose ``layout.rack_chips`` a fabric without its own density takes
        (:data:`COST_BOOKS`).

    Returns
    -------
    Parameter
        Chips per rack, with its source.

    Raises
    ------
    TypeError
        When ``f`` is not a :class:`Fabric`.

    Examples
    --------
    >>> import topologies
    >>> rack_chips(topologies.build("dgx-h100")).value
    32
    >>> rack_chips(topologies.build("torus:4x4")).source[:10]
    'assumption'
    """
    # the one fabric check: a preset's name, None or a parsed spec was once read as a
    # fabric stating no density (the book's 72 chips a rack); now a TypeError
    f = fabric_arg(f, "f")
    book = hardware_costs(book)
    own = [p for p in f.assumptions if p.name == book.rack_chips.name]
    return own[-1] if own else book.rack_chips


def _street(name="street-2026", **overrides):
    book = {
        "dac_reach_m": _p("dac.reach", 3.0, "m", _LINKX + ": 30AWG < 2 m, 26AWG to 3 m"),
        "acc_reach_m": _p("acc.reach", 5.0, "m", _LINKX + ": LACC 3, 4, 5 m"),
        "optics_reach_m": _p("optics.reach", 2000.0, "m",
                          _LINKX + ": single-mode 100 m / 500 m / 2 km SKUs"),
        "dac_usd_per_gbps": _p("dac.price", 400 / 1600, "USD/(Gb/s)",
                            _STREET + ": 1.6T passive DAC $400"),
        "acc_usd_per_gbps": _p("acc.price", 1100 / 1600, "USD/(Gb/s)",
                            _STREET + ": 1.6T ACC $1,100"),
        "optics_usd_per_gbps": _p("optics.price", 0.0, "USD/(Gb/s)",
                               "fibre priced per cable (patch cord), not per Gb/s"),
        "dac_usd_per_gbps_m": _p("dac.price_per_m", 0.0, "USD/(Gb/s m)",
                              "street prices are per part, not per length"),
        "acc_usd_per_gbps_m": _p("acc.price_per_m", 0.0, "USD/(Gb/s m)",
                              "street prices are per part, not per length"),
        "optics_usd_per_gbps_m": _p("optics.price_per_m", 0.0, "USD/(Gb/s m)",
                                 "street prices are per part, not per length"),
        "optics_usd_per_cable": _p("optics.cable", 120.0, "USD",
                                _STREET + ": MPO-12 APC single-mode patch $120"),
        "transceiver_usd_per_gbps": _p("transceiver.price", 3600 / 1600, "USD/(Gb/s)",
                                    _STREET + ": 1.6T XDR transceiver $3,600"),
        "dac_w_per_cable": _p("dac.power", 0.1, "W", _LINKX + ": passive copper < 0.1 W"),
        "acc_w_per_cable": _p("acc.cable_power", 0.0, "W", "per end instead (acc.power)"),
        "acc_w_per_gbps_end": _p("acc.power", 1.5 / 800, "W/(Gb/s)",
                              _LINKX + ": LACC 1.5 W on the 800G end"),
        "optics_w_per_cable": _p("optics.cable_power", 0.0, "W", "a passive fibre draws nothing"),
        "transceiver_switch_w_per_gbps": _p(
            "transceiver.switch_power", 17 / 800, "W/(Gb/s)",
            "NVIDIA 800G twin-port OSFP MMS4X00-NS, max 17 W (docs.nvidia.com/networking/"
            "display/800gmms4x00ns/specifications, 2025)"),
        "transceiver_end_w_per_gbps": _p(
            "transceiver.end_power", 9 / 400, "W/(Gb/s)",
            "NVIDIA 400G OSFP/QSFP112 (NIC side), max 9 W (" + _LINKX + ")"),
        "switch_usd_per_gbps": _p("switch.price", 120_000 / (144 * 800), "USD/(Gb/s)",
                               _STREET + ": Q3400-RA, 144 x 800G, $120K (range $60K-200K)"),
        "switch_w_per_gbps": _p("switch.power", 500 / 51_200, "W/(Gb/s)",
                             _TH5 + "; ASIC only, box overhead not found"),
        "switch_usd_per_box": _p("switch.price_per_box", 0.0, "USD",
                              "street prices are per Gb/s of the switch; no fixed part"),
        "switch_asic_gbps": _p("switch.asic_capacity", 51_200.0, "Gb/s",
                            _TH5 + "; also Quantum-2 and Spectrum-4 (64 x 800G)"),
        "port_w_per_gbps": _p("port.power", 500 / 51_200, "W/(Gb/s)",
                              "assumption: a chip's link port draws what a switch port does "
                              "per bit (" + _TH5 + ", 9.77 pJ/bit with its SerDes)"),
        "nic_usd": _p("nic.price", 2188.0, "USD", _CX7_PRICE),
        "nic_w": _p("nic.power", 50.0, "W",
                 _FABCALC + ": NIC 50 W (ConnectX-7 power NOT FOUND: its specifications "
                 "page was not readable; a dated stand-in)"),
        "in_rack_m": _p("layout.in_rack", 2.0, "m", _MUDIGONDA + ": intra-rack overhead 2 m"),
        "inter_rack_m": _p("layout.inter_rack", 4.0, "m", _MUDIGONDA + ": inter-rack overhead 4 m"),
        "rack_pitch_m": _p("layout.rack_pitch", 0.6, "m", _MUDIGONDA + ": rack 0.6 m wide"),
        "rack_chips": _p("layout.rack_chips", 72, "chips",
                      "assumption for a system that states no rack density: the densest "
                      "published rack, " + _NVL72_RACK),
        "node_usd_per_chip": _p("system.node_per_chip", 310_000 / 8, "USD",
                             _FREAK + ": H100 node $310,000 for 8 GPUs (used for every chip: "
                             "an assumption for chips other than the H100)"),
        "host_w_per_chip": _p("system.host_power_per_chip", 575.0, "W",
                           "SemiAnalysis '100,000 H100 Clusters' (2024) as summarized by "
                           "apetops-us.com: about 575 W per GPU for CPU, NIC and power supply "
                           "on top of the GPU"),
    }
    book.update(overrides)
    return HardwareCosts(name=name, **book)


def _freakonomics():
    return _street(
        "freakonomics-2024",
        switch_usd_per_gbps=_p("switch.price", 36_000 / (64 * 400), "USD/(Gb/s)",
                               _FREAK + ": DERIVED $288,000 / 8 switches = $36,000 per "
                               "64-port 400G switch"),
        # The spreadsheet prices a link as one item (connector + cable); it is put on the
        # transceiver pair so that a 400G optical link costs exactly $1,280.
        transceiver_usd_per_gbps=_p("transceiver.price", 1280 / 400 / 2, "USD/(Gb/s)",
                                    _FREAK + ": DERIVED $2,621,440 / 2,048 links = $1,280 "
                                    "per 400G link (connector + cable), half per end"),
        optics_usd_per_cable=_p("optics.cable", 0.0, "USD", _FREAK + ": included in the link"),
        dac_reach_m=_p("dac.reach", 0.0, "m", _FREAK + ": every link is an optical IB link"),
        acc_reach_m=_p("acc.reach", 0.0, "m", _FREAK + ": every link is an optical IB link"),
    )


def _kim():
    el = "electrical $/Gb/s = 1.4 L + 2.16"
    op = "optical (AOC, transceivers included) $/Gb/s = 0.364 L + 9.7103"
    return _street(
        "kim-2008",
        dac_reach_m=_p("dac.reach", 0.0, "m", _KIM + ": one electrical medium (taken as ACC)"),
        acc_reach_m=_p("acc.reach", 1000.0, "m",
                       _KIM + ": the cheaper of electrical and optical is used at any length"),
        acc_usd_per_gbps=_p("acc.price", 2.16, "USD/(Gb/s)", _KIM + ": " + el),
        acc_usd_per_gbps_m=_p("acc.price_per_m", 1.4, "USD/(Gb/s m)", _KIM + ": " + el),
        optics_usd_per_gbps=_p("optics.price", 9.7103, "USD/(Gb/s)", _KIM + ": " + op),
        optics_usd_per_gbps_m=_p("optics.price_per_m", 0.364, "USD/(Gb/s m)", _KIM + ": " + op),
        optics_usd_per_cable=_p("optics.cable", 0.0, "USD", _KIM + ": none"),
        transceiver_usd_per_gbps=_p("transceiver.price", 0.0, "USD/(Gb/s)",
                                    _KIM + ": active optical cable, included"),
        acc_w_per_gbps_end=_p("acc.power", 0.0, "W/(Gb/s)", _KIM + ": per cable instead"),
        acc_w_per_cable=_p("acc.cable_power", 1.0, "W", _KIM + ": electrical 0.5 W x 2"),
        optics_w_per_cable=_p("optics.cable_power", 3.0, "W", _KIM + ": optical 1.5 W x 2"),
        transceiver_switch_w_per_gbps=_p("transceiver.switch_power", 0.0, "W/(Gb/s)",
                                         _KIM + ": in the cable's power"),
        transceiver_end_w_per_gbps=_p("transceiver.end_power", 0.0, "W/(Gb/s)",
                                      _KIM + ": in the cable's power"),
    )


def _slimfly():
    el = "electrical $ = 40 (0.4079 L + 0.5771)"
    op = "optical $ = 40 (0.0919 L + 7.2745)"
    return _street(
        "slimfly-2014",
        dac_reach_m=_p("dac.reach", 0.0, "m", _SLIMFLY + ": one electrical medium (taken as ACC)"),
        acc_reach_m=_p("acc.reach", 1000.0, "m",
                       _SLIMFLY + ": the cheaper of electrical and optical at any length"),
        acc_usd_per_gbps=_p("acc.price", 0.5771, "USD/(Gb/s)", _SLIMFLY + ": " + el),
        acc_usd_per_gbps_m=_p("acc.price_per_m", 0.4079, "USD/(Gb/s m)", _SLIMFLY + ": " + el),
        optics_usd_per_gbps=_p("optics.price", 7.2745, "USD/(Gb/s)", _SLIMFLY + ": " + op),
        optics_usd_per_gbps_m=_p("optics.price_per_m", 0.0919, "USD/(Gb/s m)",
                                 _SLIMFLY + ": " + op),
        optics_usd_per_cable=_p("optics.cable", 0.0, "USD", _SLIMFLY + ": none"),
        transceiver_usd_per_gbps=_p("transceiver.price", 0.0, "USD/(Gb/s)",
                                    _SLIMFLY + ": in the optical cable's price"),
        switch_usd_per_gbps=_p("switch.price", 350.4 / 40, "USD/(Gb/s)",
                               _SLIMFLY + ": router $ = 350.4 k - 892.3, 40 Gb/s ports"),
        switch_usd_per_box=_p("switch.price_per_box", -892.3, "USD",
                              _SLIMFLY + ": router $ = 350.4 k - 892.3"),
        switch_w_per_gbps=_p("switch.power", 4 * 0.7 / 40, "W/(Gb/s)",
                             _SLIMFLY + ": router 4 lanes x 0.7 W = 2.8 W per 40 Gb/s port"),
    )


COST_BOOKS = {b.name: b for b in (_street(), _freakonomics(), _kim(), _slimfly())}


def hardware_costs(name="street-2026"):
    """Return the cost book called ``name`` (a :class:`HardwareCosts` passes through).

    Parameters
    ----------
    name : str or HardwareCosts
        A cost book of :data:`COST_BOOKS` (``"street-2026"``, ``"freakonomics-2024"``,
        ``"kim-2008"``, ``"slimfly-2014"``).

    Returns
    -------
    HardwareCosts
        Its sourced unit prices in US dollars and powers in watts.

    Examples
    --------
    >>> hardware_costs("street-2026").name
    'street-2026'
    """
    if isinstance(name, HardwareCosts):
        return name
    return lookup(COST_BOOKS, name, "cost book")


_TDP = ("per-GPU TDP table citing datasheets (lynx-cortex.pages.dev): A100 400 W, H100 700 W, "
        "B200 1000 W, MI300X 750 W")

_AIC = ("V: NVIDIA's own system file, ai-dynamo/aiconfigurator 095f58a5 "
        "aic-core/src/aiconfigurator_core/systems/")

#: Chip power (W) by chip name; a chip not listed is taken at the H100's 700 W (assumption;
#: H800 and H20 have no vendor figure: docs/sources.md s.10).
CHIP_POWER = {
    "a100": Parameter("chip.a100.power", 400.0, "W", _TDP),
    "h100": Parameter("chip.h100.power", 700.0, "W", _TDP),
    "h200": Parameter("chip.h200.power", 700.0, "W", _TDP + "; H200 taken as the H100 "
                      "(same GH100 die; assumption)"),
    "b200": Parameter("chip.b200.power", 1000.0, "W", _TDP),
    "mi300x": Parameter("chip.mi300x.power", 750.0, "W", _TDP),
    "gb200": Parameter("chip.gb200.power", 1200.0, "W", _AIC + "gb200.yaml (power: 1200 a GPU, "
                       "citing NVIDIA's Blackwell datasheet, nvdam.widen.net/s/wwnsxrhm2w/"
                       "blackwell-datasheet-3384703; since 2025-08-11); the GPU's own share: the "
                       "superchip's Grace CPU is host power, not chip power"),
    "b300": Parameter("chip.b300.power", 1100.0, "W", _AIC + "b300_sxm.yaml (power: 1100, "
                      "'configurable up to 1,100 W', HGX B300, citing NVIDIA's Blackwell Ultra "
                      "datasheet, resources.nvidia.com/en-us-blackwell-architecture/"
                      "blackwell-ultra-datasheet; 2026-04-16)"),
    "gb300": Parameter("chip.gb300.power", 1400.0, "W", _AIC + "gb300.yaml (power: 1400 a GPU, "
                       "citing NVIDIA's Blackwell Ultra datasheet, resources.nvidia.com/"
                       "en-us-blackwell-architecture/blackwell-ultra-datasheet; 2026-02-12)"),
}


def chip_power(chip):
    """The chip's power as a :class:`Parameter` (``chip`` a name, a ChipSpec or None).

    Parameters
    ----------
    chip : str, ChipSpec or None
        A chip's name (of :data:`CHIP_POWER` or :data:`fabric.CHIPS`) or spec; a chip of no
        published power (None too) takes an H100's 700 W, a Parameter that says it is an
        assumption.

    Returns
    -------
    Parameter
        Watts, with its source.

    Raises
    ------
    SpecError
        For a name no chip has (a misspelt chip is not priced as an H100).
    TypeError
        For what is neither a name, a ``ChipSpec`` nor None.

    Examples
    --------
    >>> chip_power("b200").value, chip_power("sd200-chip").source[:10]
    (1000.0, 'assumption')
    >>> chip_power("b20O")
    Traceback (most recent call last):
    ...
    fabric.SpecError: unknown chip 'b20O'; known: b200, b300, gb200, gb300, h100, h20, h200, h800, sd200-chip, tpu-v4
    """
    if isinstance(chip, str) and chip in CHIP_POWER:
        return CHIP_POWER[chip]
    if chip is not None and not isinstance(chip, (str, ChipSpec)):
        raise kind_error(chip, "chip", "a chip name, a fabric.ChipSpec or None")
    name = "unknown" if chip is None else chip_spec(chip).name
    if name in CHIP_POWER:
        return CHIP_POWER[name]
    return Parameter(f"chip.{name}.power", 700.0, "W",
                     "assumption: no published power for this chip; taken as an H100 (700 W)")
