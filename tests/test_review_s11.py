"""Review, session 11: faults the reviewer confirmed that no other test pins down.

S11-R1 (moe, e4163a9): the NVIDIA NCCL EP held-out rows add one blocking host launch
(ep_bench records its start event on an idle stream, then calls the eager API, which
launches one kernel per call on its low-latency path). Both rows stay strict misses with or
without the launch, so dropping it passed every test.
"""

import fidelity
import fidelity_heldout_moe
import pytest

from analysis import moe_exchange
from fabric import runtime


@pytest.mark.parametrize("phase", ["dispatch", "combine"])
def test_ncclep_rows_add_one_blocking_launch_to_the_kernel(phase):
    # the row is the kernel's time (the deepep-low-latency exchange of ep_bench's defaults:
    # one H100 node, EP8, 128 tokens per rank, BF16 both ways, uniform top-8) plus the host
    # path of one cuLaunchKernel, which the timing loop's idle stream exposes
    row_id = f"ncclep-h100-ep8-ll-{phase}"
    row = next(r for r in fidelity.heldout_rows() if r["id"] == row_id)
    value, how = fidelity_heldout_moe.CASES[row_id](row)
    r = moe_exchange(fidelity_heldout_moe._h100_nodes(1), "deepseek-v3", 128, 8,
                     kernel="deepep-low-latency", dispatch_bytes=2, combine_bytes=2,
                     routing="uniform")
    kernel = r.dispatch if phase == "dispatch" else r.combine
    launch = runtime("nccl").host_launch
    assert launch > 0
    assert value * 1e-6 == pytest.approx(kernel + launch, rel=1e-12)
    assert f"host launch {launch * 1e6:.1f} us" in how
