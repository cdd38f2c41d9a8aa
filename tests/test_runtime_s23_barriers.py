"""A one-sided kernel's flag barrier is one handoff, the rule of an NCCL LL step (session 23).

Counted from the kernels' code: NCCL's symmetric kernels (``ncclLsaBarrierSession``),
FlashInfer's two-shot (``Barrier::sync``) and vLLM's custom all-reduce (``start_sync`` /
``end_sync``) each store a flag into every peer and spin on their own flags: the flags go one
way at once, so a barrier beyond the kernel floor's first costs the largest one-way path
between two ranks (plus the load/store transport's per-message overhead) plus
:func:`analysis._runtime_cost.step_handoff`, the GPU side of a measured peer load once.
PyTorch's ``sync_remote_blocks`` instead waits for a compare-and-swap on each peer's slot: one
peer round trip (:data:`fabric.TORCH_SYMM_MEM`), which vLLM's torch tier runs.

The references below are brute force over the routed pairs of the (possibly degraded) fabric.
"""

import itertools

import numpy as np
import pytest
from degrade import built
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import analysis
import fabric
import topologies
from analysis import _runtime_cost as rc
from analysis._collectives import _GroupView, resolve_ranks

KiB, MiB = 1024, 1 << 20


def _one_way(f, ranks):
    """The largest routed one-way latency between two of ``ranks`` (brute force)."""
    _nodes, idx = resolve_ranks(f, ranks)
    r = f.router
    return max(float(r.latency(np.array([a]), np.array([b]))[0])
               for a, b in itertools.permutations(idx, 2))


def _round_trip(f, ranks):
    _nodes, idx = resolve_ranks(f, ranks)
    r = f.router
    return max(float(r.latency(np.array([a]), np.array([b]))[0]
                     + r.latency(np.array([b]), np.array([a]))[0])
               for a, b in itertools.permutations(idx, 2))


def _overhead(f):
    """The load/store transport's per-message overhead (translation and check)."""
    return fabric.transport("loadstore").per_message_overhead


@st.composite
def boards(draw):
    """A one-node NVSwitch board (Hopper or Blackwell) or a direct mesh, with up to two chip
    links failed where every chip still reaches every other."""
    name = draw(st.sampled_from(["hgx-h200", "hgx-b200", "gb200-nvl72", "sd200-ultra",
                                 "dgx-h100"]))
    f = built(name)
    links = sorted({tuple(sorted((u, v))) for u, v in f.graph.edges()
                    if f.graph.nodes[u].get("kind") == "chip"})
    failed = draw(st.lists(st.sampled_from(links), max_size=2, unique=True))
    if failed:
        g = f.without(links=failed)
        try:
            chips = list(g.endpoints[:8])
            for a, b in itertools.permutations(chips, 2):
                g.route(a, b)
            f = g
        except fabric.RoutingError:
            pass
    return f


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(f=boards(), p=st.sampled_from([2, 4, 8]), kib=st.integers(1, 64 * 1024))
def test_bulk_symmetric_kernels_pay_one_handoff_per_further_barrier(f, p, kib):
    ranks = list(f.endpoints[:p])
    n = kib * KiB
    arch = fabric.runtime_arch(f)
    rt = fabric.runtime("symmetric-memory")
    floor = rt.kernel_floor[arch]
    handoff = fabric.peer_access_latency(arch)[0]
    trip = _round_trip(f, ranks) + handoff
    barrier = _one_way(f, ranks) + _overhead(f) + handoff
    r = analysis.cost(f, "all-reduce", n, ranks=ranks, runtime=rt, algorithm="two-shot")
    # two-shot: entry barrier (in the floor), exit barrier after the stores into peers: the
    # release fence's round trip, then one handoff
    assert r.fixed == pytest.approx(floor + barrier + trip, rel=1e-9)
    # vLLM's custom all-reduce: the same barrier (its end / middle sync), no release trip
    v = analysis.cost(f, "all-reduce", n, ranks=ranks, runtime=fabric.VLLM_CUSTOM_ALLREDUCE,
                      algorithm="one-shot" if p == 2 else "auto")
    assert v.fixed == pytest.approx(floor + barrier, rel=1e-9)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(f=boards(), p=st.sampled_from([4, 8]), kib=st.integers(1, 64 * 1024))
def test_torch_kernels_wait_a_round_trip_per_barrier(f, p, kib):
    ranks = list(f.endpoints[:p])
    n = kib * KiB
    arch = fabric.runtime_arch(f)
    handoff = fabric.peer_access_latency(arch)[0]
    trip = _round_trip(f, ranks) + handoff
    for alg in ("two-shot", "in-switch"):
        try:
            sym = analysis.cost(f, "all-reduce", n, ranks=ranks, runtime="symmetric-memory",
                                algorithm=alg)
        except analysis.NotApplicableError:
            with pytest.raises(analysis.NotApplicableError):
                analysis.cost(f, "all-reduce", n, ranks=ranks, runtime=fabric.TORCH_SYMM_MEM,
                              algorithm=alg)
            continue
        torch = analysis.cost(f, "all-reduce", n, ranks=ranks, runtime=fabric.TORCH_SYMM_MEM,
                              algorithm=alg)
        # the same kernel steps; only the further barrier differs: a round trip, not a handoff
        barrier = _one_way(f, ranks) + _overhead(f) + handoff
        assert torch.time - sym.time == pytest.approx(trip - barrier, rel=1e-9, abs=1e-15)
        assert torch.time > sym.time


def test_the_barrier_counts_on_hopper_and_blackwell():
    """8 GPUs through NVSwitch (2 x 150 ns + 30 ns one way): Hopper 330 + 226.6 ns, under the
    old 'flag round trip' of 2 x 330 ns; Blackwell 330 + 1110.5 ns. Torch's CAS: 600 + the
    same GPU side."""
    for name, handoff in (("hgx-h200", 226.6e-9), ("hgx-b200", 1110.5e-9)):
        f = topologies.build(name)
        v = _GroupView(f, "all-reduce", tuple(f.endpoints), f.endpoint_indices, None, None, True)
        assert rc.flag_barrier(fabric.runtime("symmetric-memory"), v) == pytest.approx(
            330e-9 + handoff, abs=0.1e-9)
        assert rc.flag_barrier(fabric.VLLM_CUSTOM_ALLREDUCE, v) == pytest.approx(
            330e-9 + handoff, abs=0.1e-9)
        assert rc.flag_barrier(fabric.TORCH_SYMM_MEM, v) == pytest.approx(600e-9 + handoff,
                                                                           abs=0.1e-9)
    # the one rule: an NCCL LL ring step on the same board pays the same handoff
    f = topologies.build("hgx-b200")
    v = _GroupView(f, "all-reduce", tuple(f.endpoints), f.endpoint_indices, None, None, True)
    assert rc._intra_step(v.transfer("ring"), 1, rc.step_handoff("blackwell")) == \
        pytest.approx(rc.flag_barrier(fabric.runtime("symmetric-memory"), v), rel=1e-12)


def test_vllm_torch_tier_runs_pytorchs_kernel():
    """vLLM's tier 3 (torch symmetric memory) is priced as PyTorch's kernels, whose barrier is
    a compare-and-swap round trip: hgx-h200 TP8 at 1 MiB (multimem) and hgx-b200 TP4 at 16 MiB
    without the fused pass (two-shot)."""
    for name, tp, n, fuse, alg in (("hgx-h200", 8, MiB, True, "in-switch"),
                                   ("hgx-b200", 4, 16 * MiB, False, "two-shot")):
        f = topologies.build(name)
        ranks = list(f.endpoints[:tp])
        kernel = analysis.vllm_all_reduce_kernel(f, n, ranks, fuse_allreduce_rms=fuse)
        assert kernel.startswith("torch-symm-mem")
        got = analysis.vllm_all_reduce(f, "all-reduce", n, ranks=ranks, fuse_allreduce_rms=fuse)
        assert got.runtime == "torch-symm-mem"
        want = analysis.cost(f, "all-reduce", n, ranks=ranks, runtime=fabric.TORCH_SYMM_MEM,
                             algorithm=alg)
        assert got.time == want.time
        sym = analysis.cost(f, "all-reduce", n, ranks=ranks, runtime="symmetric-memory",
                            algorithm=alg)
        assert got.time > sym.time


def test_torch_runtime_refuses_what_it_does_not_run():
    f = topologies.build("hgx-h200")
    rt = fabric.TORCH_SYMM_MEM
    with pytest.raises(analysis.NotApplicableError, match="runs all-reduce only, not all-gather"):
        analysis.cost(f, "all-gather", MiB, runtime=rt)
    with pytest.raises(analysis.NotApplicableError, match="two-shot, in-switch for all-reduce, "
                                                          "not one-shot"):
        analysis.cost(f, "all-reduce", MiB, runtime=rt, algorithm="one-shot")
    g = topologies.build("rail:servers=2,gpus=4,chip=h100")
    with pytest.raises(analysis.NotApplicableError, match="several load/store domains"):
        analysis.cost(g, "all-reduce", MiB, runtime=rt)
    assert "torch-symm-mem" not in fabric.RUNTIMES
    # the auto choice is the faster of its two kernels
    auto = analysis.cost(f, "all-reduce", MiB, runtime=rt)
    assert auto.time == min(analysis.cost(f, "all-reduce", MiB, runtime=rt, algorithm=a).time
                            for a in ("two-shot", "in-switch"))


def test_the_lamport_one_shot_has_no_barrier():
    """The Lamport one-shot's data is its own flag: the kernel floor, no further barrier."""
    f = topologies.build("hgx-b200")
    r = analysis.cost(f, "all-reduce", 4 * KiB, runtime="symmetric-memory", algorithm="one-shot")
    assert r.fixed == fabric.runtime("symmetric-memory").kernel_floor["blackwell"]
