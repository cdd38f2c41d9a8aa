"""The rate of NCCL's Simple point-to-point copy-out is a named assumption with a Parameter of
its own (session 38, runtime; session 37's whole-diff read F12).

``analysis._runtime_cost.p2p_drain`` copies each Simple part's last chunk out of the
receiver's buffer at ``runtime.p2p["drain_hbm_share"]`` of the chip's datasheet HBM bandwidth
(1: the whole rate, no source for a thread block's copy rate): the share is listed with the
runtime's parameters under its own source, the drain reads it, and a share that cannot price
a copy is refused where the runtime is built.
"""
import dataclasses

import pytest
from degrade import built
from p2p_groups import group_view

from analysis._runtime_cost import p2p_drain
from fabric import SpecError, runtime

MiB = 1 << 20


@pytest.mark.parametrize("name", ["nccl", "nccl@2.22.3", "nccl@2.29.2"])
def test_the_drain_rate_is_a_parameter_with_its_own_source(name):
    ps = {p.name: p for p in runtime(name).parameters()}
    share = ps[f"{name}.p2p.drain_hbm_share"]
    assert (share.value, share.unit) == (1.0, "")
    assert share.source.startswith("ASSUMPTION")
    assert "ChipSpec.hbm_bandwidth" in share.source
    # its own source, not the p2p table's code reading
    assert share.source != ps[f"{name}.p2p.simple_slices"].source


def test_the_drain_reads_the_share():
    # dgx-h100, 16 MiB all-to-all: 7 x 2 MiB read and written at 3.35 TB/s (8.76 us); at
    # half the rate, twice that
    f = built("dgx-h100")
    rt = runtime("nccl")
    view = group_view(f, "all-to-all")
    half = dataclasses.replace(rt, name="half", p2p={**rt.p2p, "drain_hbm_share": 0.5})
    assert p2p_drain(rt, view, "all-to-all", 16 * MiB) == 2 * 7 * 2 * MiB / 3.35e12
    assert p2p_drain(half, view, "all-to-all", 16 * MiB) == 2 * 7 * 2 * MiB / (3.35e12 * 0.5)


@pytest.mark.parametrize("bad, error", [(0, SpecError), (-1, SpecError),
                                        (float("nan"), SpecError), (None, TypeError),
                                        ("1", TypeError), (True, TypeError)])
def test_a_share_that_cannot_price_a_copy_is_refused(bad, error):
    rt = runtime("nccl")
    with pytest.raises(error, match=r"drain_hbm_share must be a finite number > 0 \(a share "
                                    r"of its chip's HBM bandwidth, in the p2p table of runtime "
                                    r"'mine'\), got drain_hbm_share="):
        dataclasses.replace(rt, name="mine", p2p={**rt.p2p, "drain_hbm_share": bad})
