"""Session 38 (inputs): sourced chip power for the Blackwell chips.

CHIP_POWER had no gb200, b300 or gb300: each was priced at an H100's 700 W (an
assumption), so a bill of materials' system power per chip of nvl72, hgx-b300 and
gb300-nvl72 was 500-700 W short. NVIDIA's own system files (docs/sources.md s.10) give
1,200 W (GB200, a GPU), 1,100 W (HGX B300) and 1,400 W (GB300, a GPU). H800 and H20 have
no vendor figure and stay the assumption.
"""
import pytest

import topologies
from analysis import bill_of_materials
from fabric import CHIP_POWER, chip_power, hardware_costs


@pytest.mark.parametrize("chip, watts", [("gb200", 1200.0), ("b300", 1100.0),
                                         ("gb300", 1400.0)])
def test_a_blackwell_chip_has_its_vendors_power_not_the_h100_assumption(chip, watts):
    p = chip_power(chip)
    assert (p.name, p.value, p.unit) == (f"chip.{chip}.power", watts, "W")
    assert "assumption" not in p.source and "datasheet" in p.source
    assert CHIP_POWER[chip] is p


def test_a_bill_of_materials_takes_the_chips_own_power():
    book = hardware_costs("street-2026")
    b = bill_of_materials(topologies.build("hgx-b300"), book)
    assert b.system_w_per_chip == CHIP_POWER["b300"].value + book.value("host_w_per_chip")
    assert CHIP_POWER["b300"] in b.parameters

