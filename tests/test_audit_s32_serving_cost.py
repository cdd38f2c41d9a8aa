"""Audit session 32: ``serving_cost``'s ``gpu`` is checked whatever prices the system.

A keyword fuzz: ``gpu=[1]`` raised "unhashable type: 'list'" (no name), and with
``chip_price`` given, ``gpu`` was never read: ``gpu="nope"`` or ``gpu="H200"`` beside a chip
price answered the chip price's cost as if no gpu had been named. Now a gpu that is not a row
of the TCO table is named, and gpu with chip_price (two prices for one system) is refused.
"""
import pytest

import topologies
from analysis import serving_cost
from fabric import SpecError

_F = topologies.build("hgx-h200")


@pytest.mark.parametrize("gpu", [[1], "nope", 5])
@pytest.mark.parametrize("price", [None, 25_000])
def test_an_unknown_gpu_is_named(gpu, price):
    # a wrong kind is a TypeError (a choice asks text_of first; session 36: was a SpecError)
    error, match = ((SpecError, r"^gpu must be one of H100, H200, .*, got ") if gpu == "nope"
                    else (TypeError, r"^gpu must be a str, got "))
    with pytest.raises(error, match=match):
        serving_cost(_F, gpu=gpu, chip_price=price)


def test_gpu_and_chip_price_are_two_prices():
    with pytest.raises(SpecError, match="give gpu .* or chip_price .*, not both: got gpu='H100'"):
        serving_cost(_F, gpu="H100", chip_price=25_000)
    assert serving_cost(_F, gpu="H100")[3] == "TCO table: H100, own-hyperscaler"
    assert serving_cost(_F, chip_price=25_000)[3].startswith("chip price $25,000")
