"""Session 35 (ibgda): held-out DeepEP low-latency rows from NVIDIA's collector, and the B200
nodes of the held-out MoE harness.

``aic-deepep-{h100,h200}-ep8-ll-bs{1,16,128}-*`` (tests/data/heldout.csv; docs/sources.md s.7):
DeepEP's own low-latency test on every GPU of one HGX node, priced as the check set's DeepEP rows
(uniform routing, FP8 + scales out, BF16 back; since session 36 the build the collector ran,
``deepep-low-latency@d28bd67``) on that row's own chip: an
H200 row on an H100 node would give another figure (its copies read HBM3e) and nothing else
would say so. ``_b200_nodes``: the rail builder's scale-up is NVLink4 unless told, whatever the
chip; B200 carries 18 NVLink5 links, 900 GB/s a GPU.
"""

import fidelity
import fidelity_heldout_moe
import pytest
from fidelity_moe import kernel_span

import topologies
from analysis import moe_exchange
from fabric import exchange_kernel

_ROWS = {r["id"]: r for r in fidelity.heldout_rows()}
#: the collector's build, deep_ep 1.2.1+d28bd67 (session 36: test_ibgda_s36_d28)
_KERNEL = exchange_kernel("deepep-low-latency@d28bd67")


@pytest.mark.parametrize("chip", ["h100", "h200"])
def test_collector_ll_rows_are_priced_on_their_own_chip(chip):
    fabric = topologies.build(f"rail:servers=1,gpus=8,links=18,nic=ib-ndr,chip={chip}")
    for tokens in (1, 16, 128):
        r = moe_exchange(fabric, "deepseek-v3", tokens, 8, kernel=_KERNEL,
                         dispatch_bytes=1 + 4 / 128, combine_bytes=2, routing="uniform")
        for phase, seconds in (("dispatch", r.dispatch), ("combine", r.combine)):
            row_id = f"aic-deepep-{chip}-ep8-ll-bs{tokens}-{phase}"
            value, _ = fidelity_heldout_moe.CASES[row_id](_ROWS[row_id])
            assert value == pytest.approx(seconds * 1e6, rel=1e-12), row_id


@pytest.mark.parametrize("chip, ep, spec", [("b200", 8, "hgx-b200"), ("gb200", 4, "gb200-nvl72"),
                                            ("b300", 8, "hgx-b300"), ("gb300", 4, "gb300-nvl72")])
def test_collector_ll_blackwell_rows_are_kernel_spans(chip, ep, spec):
    # one Blackwell kernel's Kineto duration leaves out the floor's graph gap (0.55 us)
    fabric = topologies.build(spec)
    for tokens in (1, 16, 128):
        r = moe_exchange(fabric, "deepseek-v3", tokens, ep, kernel=_KERNEL,
                         dispatch_bytes=1 + 4 / 128, combine_bytes=2, routing="uniform")
        for phase, seconds in (("dispatch", r.dispatch), ("combine", r.combine)):
            row_id = f"aic-deepep-{chip}-ep{ep}-ll-bs{tokens}-{phase}"
            value, _ = fidelity_heldout_moe.CASES[row_id](_ROWS[row_id])
            assert value == pytest.approx(kernel_span(seconds, fabric) * 1e6, rel=1e-12), row_id
            assert value == pytest.approx(seconds * 1e6 - 0.55, rel=1e-9), row_id


def test_b200_nodes_carry_nvlink5():
    f = fidelity_heldout_moe._b200_nodes(1)
    scaleup = [d for u, v, d in f.graph.edges("chip0", data=True) if d["tech"].startswith("nvlink")]
    assert [d["tech"] for d in scaleup] == ["nvlink5"]
    assert sum(d["bandwidth"] for d in scaleup) == pytest.approx(900e9)
