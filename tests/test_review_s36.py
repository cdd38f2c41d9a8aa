"""Session 36 (review): one rule shortens an address in a message (fabric.format_address).

validate_address shortened a refused address itself (hex longer than 60 characters: its first
20 and the bit count) beside format_address's own rule (more than 256 bits: its first 18), so
a 233- to 256-bit address read '0x400000000000000000... (251 bits)' there and whole everywhere
else; format_address's rule is now the one.
"""
import pytest

from fabric import AddressMapError, format_address
from fabric._address import validate_address


@pytest.mark.parametrize("value", [2**250, 2**256 - 1, 2**5000])
def test_a_refused_address_reads_as_format_address_writes_it(value):
    with pytest.raises(AddressMapError) as e:
        validate_address(value)
    assert str(e.value) == (f"address {format_address(value)} is wider than the 57-bit address "
                            "width (max 0x1ffffffffffffff)")
