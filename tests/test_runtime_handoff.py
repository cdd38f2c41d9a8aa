"""An NCCL ring or tree step between two GPUs over load/store pays the GPU side of its handoff.

NCCL's LL step hands its lines to the next rank by stores into that rank's buffer, which the
next rank's threads spin on (NVIDIA/nccl ``src/device/prims_ll.h`` ``storeLL`` / ``readLL``).
The tuner prices a step at its ``hwLat`` (0.6 us for LL on NVLink, no Blackwell figure in
any release); the model's time also floors a step at the path one way plus the GPU side of a
remote access, :func:`analysis._runtime_cost.step_handoff` (a measured peer load less its
links). The tuner's CHOICE is NCCL's and does not see it: checked here against the model
with the handoff taken out.
"""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import analysis
import fabric
import topologies
from analysis import _runtime_cost
from analysis._collectives import _GroupView


def _view(f, p):
    return _GroupView(f, "all-reduce", tuple(f.endpoints[:p]), f.endpoint_indices[:p], None, None,
                      True)


def test_a_blackwell_ll_step_pays_its_handoff():
    """GB200 tray (4 ranks, NCCL 2.25.1, ring/LL): each of the 6 steps costs the path one way
    (the fabric's step) + Blackwell's 1110.5 ns, not the tuner's 0.6 us."""
    f = topologies.build("gb200-nvl72")
    rt = fabric.runtime("nccl@2.25.1")
    r = analysis.cost(f, "all-reduce", 1024, algorithm="ring", runtime=rt, ranks=f.endpoints[:4])
    assert r.protocol == "LL"
    step = _view(f, 4).transfer("ring").step_loadstore
    handoff = fabric.peer_access_latency("blackwell")[0]
    assert handoff == pytest.approx(1110.5e-9, abs=0.1e-9)
    assert step + handoff > rt.hw_latency[("nvlink", "ring", "LL")]
    assert r.fixed == pytest.approx(rt.base_latency[("ring", "LL")] + 6 * (step + handoff),
                                    rel=1e-12)


def test_a_hopper_nvswitch_step_keeps_the_tuners_latency():
    """8 H100 through NVSwitch: the path one way + Hopper's 226.6 ns stays under NCCL's 0.6 us."""
    f = topologies.build("dgx-h100")
    rt = fabric.runtime("nccl@2.25.1")
    r = analysis.cost(f, "all-reduce", 1024, algorithm="ring", runtime=rt)
    step = _view(f, 8).transfer("ring").step_loadstore
    assert step + _runtime_cost.step_handoff("hopper") < rt.hw_latency[("nvlink", "ring", "LL")]
    assert r.fixed == pytest.approx(rt.base_latency[("ring", "LL")]
                                    + 14 * rt.hw_latency[("nvlink", "ring", "LL")], rel=1e-12)


_ONE_NODE = [("gb200-nvl72", 4), ("gb200-nvl72", 8), ("hgx-b200", 8), ("dgx-h100", 8),
             ("hgx-h20", 4)]
_STEPS = {"all-reduce": lambda p: 2 * (p - 1), "all-gather": lambda p: p - 1,
          "reduce-scatter": lambda p: p - 1, "broadcast": lambda p: p}


@settings(max_examples=25, deadline=None)
@given(case=st.sampled_from(_ONE_NODE), op=st.sampled_from(sorted(_STEPS)),
       e=st.integers(3, 26), release=st.sampled_from(["2.18.5", "2.25.1", "2.30.7"]))
def test_the_handoff_moves_the_time_not_the_choice(case, op, e, release):
    """Against the model with the handoff taken out (step_handoff -> 0): the same algorithm,
    protocol and channels; the time never faster; and on a ring the difference is its steps
    times the rise of one step, max(hwLat, step + handoff) - max(hwLat, step)."""
    spec, p = case
    f = topologies.build(spec)
    rt = fabric.runtime(f"nccl@{release}")
    ranks = f.endpoints[:p]
    got = analysis.cost(f, op, 2 ** e, runtime=rt, ranks=ranks)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_runtime_cost, "step_handoff", lambda arch: 0.0)
        ref = analysis.cost(f, op, 2 ** e, runtime=rt, ranks=ranks)
    assert (got.algorithm, got.protocol, got.channels) == (ref.algorithm, ref.protocol,
                                                          ref.channels)
    assert got.time >= ref.time
    if got.algorithm in ("ring", "multi-ring"):
        arch = fabric.runtime_arch(f)
        step = _view(f, p).transfer("ring").step_loadstore
        hw = rt.hw_latency[("nvlink", "tree" if op == "broadcast" and got.protocol == "Simple"
                            else "ring", got.protocol)]
        rise = max(hw, step + _runtime_cost.step_handoff(arch)) - max(hw, step)
        assert got.time - ref.time == pytest.approx(_STEPS[op](p) * rise, rel=1e-9, abs=1e-15)


def test_the_time_can_fall_at_the_tuners_protocol_switch():
    """Review S22-R1: the tuner switches LL -> LL128 where ITS times cross; the LL time also
    carries the 6 steps' handoff the tuner does not see (LL128's 1.9 us step is above it), so
    just past the switch the larger message is faster by about those 6 x 0.84 us (NCCL's own
    behaviour where its tuner mispredicts, as at a channel step). gb200-nvl72, 4 ranks, NCCL
    2.30.7, ring/LL at 5,096,608 B and ring/LL128 at 5,112,992 B (both on 32 channels)."""
    f = topologies.build("gb200-nvl72")
    ranks = f.endpoints[:4]
    sizes = (5_096_608, 5_112_992)

    def both():
        return [analysis.cost(f, "all-reduce", n, runtime="nccl@2.30.7", ranks=ranks)
                for n in sizes]

    a, b = both()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_runtime_cost, "step_handoff", lambda arch: 0.0)
        a0, b0 = both()
    assert [(c.protocol, c.channels) for c in (a, b, a0, b0)] == [("LL", 32), ("LL128", 32)] * 2
    step = _view(f, 4).transfer("ring").step_loadstore
    rise = step + _runtime_cost.step_handoff("blackwell") - 0.6e-6
    assert a.time - a0.time == pytest.approx(6 * rise, rel=1e-9)
    assert b.time == b0.time
    assert a.time - b.time > 5 * rise


def test_across_nodes_the_intra_node_steps_pay_it_on_blackwell_only():
    """Across nodes the plan's every step also crosses the network (no load/store step of its
    own), so the intra-node steps take the slowest node's own load/store step + the handoff:
    2 x 4 GB200, ring/LL all-reduce, 2 (p - 1) = 14 steps of which 2 (nodes - 1) + NCCL's
    extra are network steps; each intra step rises from max(0.6, netOverhead 1.0) to
    0.33 + 1.11 us. 2 x 8 H100: every cost unchanged (0.33 + 0.23 us is under 1.0)."""
    f = topologies.build("rail:servers=2,gpus=4,nvls=1,chip=gb200")
    rt = fabric.runtime("nccl@2.30.7")
    got = analysis.cost(f, "all-reduce", 1024, algorithm="ring", runtime=rt)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_runtime_cost, "step_handoff", lambda arch: 0.0)
        ref = analysis.cost(f, "all-reduce", 1024, algorithm="ring", runtime=rt)
    assert got.protocol == ref.protocol == "LL"
    node = topologies.build("gb200-nvl72")
    step = _view(node, 4).transfer("ring").step_loadstore
    before = max(rt.hw_latency[("nvlink", "ring", "LL")], rt.factors["net_overhead"])
    rise = step + _runtime_cost.step_handoff("blackwell") - before
    n_inter = 2 * (2 - 1) + rt.factors["ring_allreduce_extra_net_steps"]
    assert got.fixed - ref.fixed == pytest.approx((14 - n_inter) * rise, rel=1e-9)
    h = topologies.build("rail:servers=2,gpus=8,nvls=1,chip=h100")
    for op in ("all-reduce", "all-gather", "broadcast"):
        a = analysis.cost(h, op, 4096, runtime=rt)
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(_runtime_cost, "step_handoff", lambda arch: 0.0)
            b = analysis.cost(h, op, 4096, runtime=rt)
        assert (a.algorithm, a.protocol, a.time) == (b.algorithm, b.protocol, b.time)


def test_a_point_to_point_step_pays_it_too():
    """A p2p LL step is a store into the peer's buffer and its spin (sendrecv.h through
    prims_ll.h): floor + one step, the step max(hwLat, path one way + handoff). Blackwell
    (hgx-b200, 2 ranks): 3.0 + 0.33 + 1.11 us; Hopper (dgx-h100): 2.3 + 0.6 us, as before."""
    rt = fabric.runtime("nccl@2.30.7")
    for spec, arch, step in (("hgx-b200", "blackwell", None), ("dgx-h100", "hopper", 0.6e-6)):
        f = topologies.build(spec)
        r = analysis.cost(f, "send-recv", 1024, runtime=rt, ranks=f.endpoints[:2])
        assert r.protocol == "LL"
        if step is None:
            step = (_view(f, 2).transfer("point-to-point", "send-recv").step_loadstore
                    + _runtime_cost.step_handoff(arch))
            assert step > rt.hw_latency[("nvlink", "ring", "LL")]
        assert r.fixed == pytest.approx(rt.kernel_floor[arch] + step, rel=1e-12)
