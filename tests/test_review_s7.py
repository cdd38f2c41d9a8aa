"""Review (session 7): a property the runtime model must keep, checked on a fixed grid.

Every ``nccl@<release>`` run is timed at or above the lower bound the model itself proves
(``CollectiveCost.lower_bound``: injection, cuts, max-concurrent-flow). The Hypothesis test in
tests/test_runtime.py checks this on random draws and so fails only when it happens to draw a
violating case (it did so at random for review R12: 2.18.x's NVLS-tree runs timed by
a mix of two tuner formulas, up to 15% under the bound; fixed by the runtime helper in a91ac5b,
whose own test covers that rail's all-reduce). This grid is deterministic: every release, six
operations, five fabrics, 8 B to 8 GiB.
"""

import pytest
from degrade import built

import analysis
from fabric import NCCL_RELEASE_DATES

SPECS = ("dgx-h100", "rail:servers=2,gpus=8,nvls=1,chip=h100",
         "rail:servers=4,gpus=4,nvls=1,chip=h20,nic=ib-ndr", "gb200-nvl72",
         "rail:servers=2,gpus=4,chip=h100")
OPS = ("all-reduce", "all-gather", "reduce-scatter", "broadcast", "all-to-all", "send-recv")

@pytest.mark.parametrize("spec, release", [
    (spec, rel) for spec in SPECS for rel in sorted(NCCL_RELEASE_DATES)])
def test_every_release_times_its_run_at_or_above_the_lower_bound(spec, release):
    f = built(spec)
    ranks = f.endpoints[:8] if spec == "gb200-nvl72" else None
    below = []
    for op in OPS:
        for k in range(3, 34, 2):
            r = analysis.cost(f, op, 2**k, runtime=f"nccl@{release}",
                              ranks=f.endpoints[:2] if op == "send-recv" else ranks)
            if r.time < r.lower_bound * (1 - 1e-9):
                below.append((op, k, r.algorithm, r.protocol, r.time, r.lower_bound))
    assert not below, below
