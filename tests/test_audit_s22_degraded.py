"""Audit session 22: one graph, one price on degraded fabrics.

A chip cut off by all its links (alive, isolated) and the same chip failed leave the other chips
the same surviving graph, so work over the other chips should cost the same. It did on switched
domains, rail clusters and dragonflies; on a degraded grid it did not until session 23, because
the shortest paths that join a repair's stand-in links are the router's one hash-chosen path,
hashed over the degraded graph's node indices: a failed chip leaves the graph and shifts every
later index, a cut-off one keeps its own. Since session 23 (lead's decision) the hash takes the
intact fabric's indices (``fabric._routing_engine.flow_keys``; tests/test_audit_s23_degraded.py).
"""

import pytest

import topologies
from analysis import cost


def _pair(spec, chip, links=()):
    f = topologies.build(spec)
    cut = f.without(links=[(chip, n) for n in f.graph[chip]] + list(links))
    gone = f.without(chips=[chip], links=list(links))
    return cut, gone, [c for c in f.endpoints if c != chip]


@pytest.mark.parametrize("spec", ["hgx-h200", "nvl72", "rail:servers=2,gpus=4,chip=h100",
                                  "dragonfly:h=1,chip=h100"])
def test_a_chip_cut_off_costs_the_others_what_the_chip_failed_does(spec):
    cut, gone, others = _pair(spec, "chip2")
    for op in ("all-reduce", "all-to-all"):
        for rt in ("ideal", "nccl"):
            a = cost(cut, op, 2**26, runtime=rt, ranks=others)
            b = cost(gone, op, 2**26, runtime=rt, ranks=others)
            assert a.time == pytest.approx(b.time, rel=1e-12), (spec, op, rt)


def test_on_a_grid_a_chip_cut_off_costs_what_the_chip_failed_does():
    # torus 4x4 minus chip4 and link chip1-chip2: ideal all-reduce of 64 MiB over the other 15
    # chips 2639.1 us with chip4 cut off, 2380.5 us with it failed until session 23 (tunnel
    # chip3 -> chip9: 3-15-11-10-9 against 3-2-6-5-9, both 4 hops); 2639.1 us both since
    cut, gone, others = _pair("torus:4x4,chip=h100", "chip4", [("chip1", "chip2")])
    a = cost(cut, "all-reduce", 2**26, runtime="ideal", ranks=others)
    b = cost(gone, "all-reduce", 2**26, runtime="ideal", ranks=others)
    assert a.time == pytest.approx(b.time, rel=1e-12)
