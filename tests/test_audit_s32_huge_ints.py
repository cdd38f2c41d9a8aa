"""Audit session 32: an int too large for a float is refused by name, not an OverflowError.

A keyword fuzz of decode_step and moe_exchange (``10**400`` among the hostile values) raised
``OverflowError: int too large to convert to float`` from every number check, naming no
parameter: ``is_real(v) and math.isfinite(v)`` asks ``math.isfinite`` to convert the int. The
same idiom sat in 22 number checks (chips, transports, exchange kernels, the graph schema, the
models, scale_links/equalize, traffic's skew, cost's nbytes, expert_activation,
closed_form, host_launch_delay) and a runtime's split table; they now ask
:func:`fabric._units.is_finite`, whose answer for such an int is False, so each check says what
it says of nan.
"""
import dataclasses
import re

import networkx as nx
import pytest

import topologies
from analysis import closed_form, cost, decode_step, expert_activation, moe_exchange, traffic
from analysis._collectives import host_launch_delay
from analysis._fair import equalize, scale_links
from analysis._models import WEIGHT_FORMATS, model_config
from fabric import CHIPS, Fabric, FabricError, exchange_kernel, runtime
from fabric._transport import transport
from fabric._units import is_finite

HUGE = 10**400
_F = topologies.build("switch:8,chip=h100")


def test_is_finite():
    assert [is_finite(x) for x in (3, 10**308, 2.5, float("nan"), float("-inf"), HUGE, -HUGE,
                                   True, "3", None)] == [True, True, True] + [False] * 7


def _graph(bandwidth):
    G = nx.path_graph(["chip0", "chip1"])
    nx.set_node_attributes(G, "chip", "kind")
    nx.set_edge_attributes(G, bandwidth, "bandwidth")
    nx.set_edge_attributes(G, 1e-7, "latency")
    return G


CASES = {
    "decode overlap": lambda: decode_step("deepseek-v3", _F, batch=1, context=128, overlap=HUGE),
    "decode launch_overhead": lambda: decode_step("deepseek-v3", _F, batch=1, context=128,
                                                  launch_overhead=HUGE),
    "exchange kernel_gap": lambda: moe_exchange(_F, "deepseek-v3", 4, 8, kernel="pplx",
                                                dispatch_bytes=1, combine_bytes=2,
                                                kernel_gap=HUGE),
    "exchange dispatch_bytes": lambda: moe_exchange(_F, "deepseek-v3", 4, 8, kernel="pplx",
                                                    dispatch_bytes=HUGE, combine_bytes=2),
    "exchange nic_background": lambda: moe_exchange(_F, "deepseek-v3", 4, 8, kernel="pplx",
                                                    dispatch_bytes=1, combine_bytes=2,
                                                    nic_background=HUGE),
    "model weight_bytes": lambda: dataclasses.replace(model_config("deepseek-v3"),
                                                      weight_bytes=HUGE, weight_format=None),
    "weight format bits": lambda: dataclasses.replace(WEIGHT_FORMATS["fp8"], bits=HUGE),
    "chip hbm_bandwidth": lambda: dataclasses.replace(CHIPS["h100"], hbm_bandwidth=HUGE),
    "transport nic_tx": lambda: dataclasses.replace(transport("rdma"), nic_tx=HUGE),
    "kernel staging bytes": lambda: dataclasses.replace(exchange_kernel("one-sided"),
                                                        staging_source_bytes=HUGE),
    "graph bandwidth": lambda: Fabric.from_graph(_graph(HUGE)),
    "scale_links": lambda: scale_links(_F, bandwidth=HUGE),
    "equalize target": lambda: equalize(_F, HUGE),
    "cost nbytes": lambda: cost(_F, "all-reduce", HUGE),
    "host_launch_delay": lambda: host_launch_delay(HUGE, 3e-6, 1),
    "closed_form alpha": lambda: closed_form("all-reduce", "ring", 8, 1024, HUGE, 1e-9),
    "expert_activation skew": lambda: expert_activation(16, 2, 4, skew=HUGE),
    "expert_activation tokens": lambda: expert_activation(16, 2, HUGE),
    "traffic skew": lambda: traffic(8, "moe", 1.0, experts=16, top_k=2, tokens=4, skew=HUGE),
    "runtime split table": lambda: dataclasses.replace(
        runtime("nccl"), name="hand-built", split={**runtime("nccl").split, "min_traffic": HUGE}),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_an_int_beyond_a_float_is_refused_by_name(case):
    with pytest.raises((FabricError, ValueError)) as e:
        CASES[case]()
    assert "int too large" not in str(e.value) and str(HUGE)[:20] in str(e.value)


def test_one_number_check_names_a_huge_int_briefly():
    # review S32-R2: the decode/serving/speculative models and traffic share fabric._units'
    # check_number / check_fraction (traffic re-spelled them); a huge int is named in brief
    from analysis import _decode, _serving, _speculative, _traffic
    from fabric import SpecError, _units

    for mod in (_decode, _serving, _speculative, _traffic):
        assert mod.check_number is _units.check_number
        assert mod.check_fraction is _units.check_fraction
    with pytest.raises(SpecError, match=r"^launch must be a finite number >= 0, got "
                                        r"launch=1000000000\d*\.\.\. \(401 digits\)$"):
        _units.check_number("launch", HUGE)
    with pytest.raises(SpecError, match=r"^overlap must be in \[0, 1\], got overlap=-10+\.\.\. "):
        _units.check_fraction("overlap", -HUGE, 0, 1)


#: "a real number and finite" spelled by hand: is_real(x) then math.isfinite(x) within a few
#: lines (the overflow at 10**400 lived in exactly this spelling).
_BY_HAND = r"is_real\((\w+)\)[^\n]*(?:\n[^\n]*){0,2}?math\.isfinite\(\1\)"


def test_no_package_module_spells_the_finite_test_again():
    from source_trees import spelled

    assert spelled(_BY_HAND) == []
    for old in ("ok = (is_real(value) and math.isfinite(value)",
                "if not is_real(skew) or not (\n            math.isfinite(skew) and skew >= 0):",
                "if not is_real(v):\n    raise TypeError(v)\nif not math.isfinite(v):"):
        assert re.search(_BY_HAND, old), old
