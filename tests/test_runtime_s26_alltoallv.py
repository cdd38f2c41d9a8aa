"""An all-to-allv's point-to-point messages are its pairs' bytes (session 26, runtime;
``analysis._runtime_cost._p2p``).

For an all-to-allv ``cost`` takes the traffic matrix's total as ``n`` (the all-to-all's ``n`` is
one rank's bytes), so ``n / p`` is a rank's bytes, not one message: NCCL's protocol (LL or
Simple), the message's channels and the rounds queued on them were chosen for a message ``p``
times too large. The per-peer message is now the mean pair, ``n / p / p``: a uniform matrix
costs exactly what the all-to-all of the same per-peer bytes costs.
"""
import numpy as np
import pytest
from degrade import built
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from p2p_groups import rank_group

from analysis import cost
from fabric import RoutingError

_SPECS = ["nvl72", "dgx-h100", "sd200-ultra", "rail:servers=4,gpus=8,chip=h100", "hgx-b200",
          "switch:8,chip=h200", "fattree:k=4"]


@pytest.mark.parametrize("spec, size", [("nvl72", 1 << 20), ("dgx-h100", 65536),
                                        ("sd200-ultra", 1 << 20)])
def test_uniform_matrix_costs_the_all_to_all(spec, size):
    # e.g. nvl72 at 1 MiB a rank: 14.6 KB messages run LL (the all-to-all's choice); the
    # matrix's total / 72 (1 MiB) took Simple and read 18.3 us against the all-to-all's 13.9
    f = built(spec)
    p = f.n_endpoints
    a = cost(f, "all-to-allv", np.full((p, p), size / p), algorithm="scattered", runtime="nccl")
    b = cost(f, "all-to-all", size, algorithm="scattered", runtime="nccl")
    assert a.time == pytest.approx(b.time, rel=1e-12)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(group=rank_group(_SPECS), size=st.sampled_from([64, 4096, 65536, 1 << 20, 1 << 24]),
       release=st.sampled_from(["nccl@2.20.5", "nccl@2.25.1", "nccl@2.29.2", "nccl"]))
def test_uniform_all_to_allv_is_the_all_to_all(group, size, release):
    # any rank subset of a (possibly degraded) fabric, any release: the same p2p candidate
    f, ranks, _nodes, _idx = group
    p = len(ranks)
    try:
        a = cost(f, "all-to-allv", np.full((p, p), size / p), algorithm="scattered",
                 runtime=release, ranks=ranks)
    except RoutingError:   # the failures cut a drawn rank off: refused by name
        assume(False)
    b = cost(f, "all-to-all", size, algorithm="scattered", runtime=release, ranks=ranks)
    assert a.time == pytest.approx(b.time, rel=1e-12)
    assert a.protocol == b.protocol
