"""Schedules: byte counts every correct algorithm must move, compression, applicability."""

import numpy as np
import pytest

import topologies
from analysis import ALGORITHMS, NotApplicableError, schedule
from fabric import SpecError

FLAT = {op: [a for a in algs if a not in ("hierarchical", "in-switch")]
        for op, algs in ALGORITHMS.items()}


def _sent_received(s, p):
    """Bytes (per byte of size) each rank sends and receives over the whole schedule."""
    sent = np.zeros(p + len(s.switches))
    recv = np.zeros(p + len(s.switches))
    for st in s.steps:
        reps = 1 if s.pipeline is not None else st.repeat
        np.add.at(sent, st.src, st.fraction * reps)
        np.add.at(recv, st.dst, st.fraction * reps)
    return sent[:p], recv[:p]


# Bytes each rank must receive (or send) for the operation, exactly, for the
# bandwidth-optimal algorithms (Chan et al. 2007 / Thakur et al. 2005).
@pytest.mark.parametrize("p", [2, 8, 16])
@pytest.mark.parametrize("op, alg, send, recv", [
    ("all-reduce", "ring", lambda p: 2 * (p - 1) / p, lambda p: 2 * (p - 1) / p),
    ("all-reduce", "rabenseifner", lambda p: 2 * (p - 1) / p, lambda p: 2 * (p - 1) / p),
    ("all-reduce", "two-shot", lambda p: 2 * (p - 1) / p, lambda p: 2 * (p - 1) / p),
    ("all-reduce", "recursive-doubling", lambda p: np.log2(p), lambda p: np.log2(p)),
    ("all-reduce", "one-shot", lambda p: p - 1, lambda p: p - 1),
    ("all-gather", "ring", lambda p: (p - 1) / p, lambda p: (p - 1) / p),
    ("all-gather", "recursive-doubling", lambda p: (p - 1) / p, lambda p: (p - 1) / p),
    ("all-gather", "bruck", lambda p: (p - 1) / p, lambda p: (p - 1) / p),
    ("all-gather", "one-shot", lambda p: (p - 1) / p, lambda p: (p - 1) / p),
    ("reduce-scatter", "ring", lambda p: (p - 1) / p, lambda p: (p - 1) / p),
    ("reduce-scatter", "recursive-halving", lambda p: (p - 1) / p, lambda p: (p - 1) / p),
    ("reduce-scatter", "pairwise", lambda p: (p - 1) / p, lambda p: (p - 1) / p),
    ("reduce-scatter", "one-shot", lambda p: (p - 1) / p, lambda p: (p - 1) / p),
    ("all-to-all", "pairwise", lambda p: (p - 1) / p, lambda p: (p - 1) / p),
    ("all-to-all", "one-shot", lambda p: (p - 1) / p, lambda p: (p - 1) / p),
    ("all-to-all", "bruck", lambda p: np.log2(p) / 2, lambda p: np.log2(p) / 2),
])
def test_every_rank_moves_what_the_algorithm_must(p, op, alg, send, recv):
    s = schedule(op, alg, p)
    sent, received = _sent_received(s, p)
    np.testing.assert_allclose(sent, send(p), rtol=1e-12)
    np.testing.assert_allclose(received, recv(p), rtol=1e-12)


@pytest.mark.parametrize("p", [2, 5, 8, 12])
def test_broadcast_reaches_everyone_with_the_whole_buffer(p):
    for alg in ("binomial", "one-shot", "scatter-ring"):
        _, received = _sent_received(schedule("broadcast", alg, p), p)
        assert (received[1:] >= 1 - 1e-12).all(), alg
    # binomial: every non-root receives exactly once, the whole buffer
    _, received = _sent_received(schedule("broadcast", "binomial", p), p)
    np.testing.assert_allclose(received[1:], 1.0)


@pytest.mark.parametrize("p", [3, 6, 7, 12])
def test_bruck_and_ring_work_for_any_p(p):
    for op, alg in (("all-gather", "bruck"), ("all-gather", "ring"), ("all-to-all", "bruck"),
                    ("all-reduce", "ring")):
        s = schedule(op, alg, p)
        sent, _ = _sent_received(s, p)
        if op == "all-gather":
            np.testing.assert_allclose(sent, (p - 1) / p)
    assert len(schedule("all-gather", "bruck", p).steps) == int(np.ceil(np.log2(p)))


def test_ring_over_16384_ranks_is_two_steps_sharing_flows():
    s = schedule("all-reduce", "ring", 16384)
    assert [st.repeat for st in s.steps] == [16383, 16383]
    assert s.steps[0].src is s.steps[1].src  # routed once
    assert s.steps[0].reduce == pytest.approx(1 / 16384)
    assert s.steps[1].reduce == 0


def test_double_binary_tree_halves_the_data_and_balances_reduction():
    s = schedule("all-reduce", "double-binary-tree", 16)
    assert s.pipeline == 2 * 4 and len(s.steps) == 1  # 16 ranks: NCCL btree of height 4
    st = s.steps[0]
    # every non-root of each tree sends one half-chunk up and receives one down
    assert st.fraction.max() == 0.5
    # mirrored (even p) or shifted (odd p), a rank is interior in at most one tree:
    # it reduces at most two half-chunks per stage
    assert st.reduce == 1.0
    assert schedule("reduce", "double-binary-tree", 15).steps[0].reduce == 1.0


@pytest.mark.parametrize("op, alg, p", [
    ("all-reduce", "recursive-doubling", 12), ("all-reduce", "rabenseifner", 6),
    ("reduce-scatter", "recursive-halving", 10), ("all-gather", "recursive-doubling", 3),
    ("broadcast", "scatter-recursive-doubling", 12)])
def test_power_of_two_only_algorithms_say_so(op, alg, p):
    with pytest.raises(NotApplicableError, match=f"power-of-two.*p={p}"):
        schedule(op, alg, p)


def test_algorithm_of_another_op_and_unknown_names():
    with pytest.raises(NotApplicableError, match="bruck is not an algorithm for all-reduce"):
        schedule("all-reduce", "bruck", 8)
    with pytest.raises(SpecError, match="unknown algorithm 'warp'"):
        schedule("all-reduce", "warp", 8)
    with pytest.raises(SpecError, match="unknown collective operation"):
        schedule("all-shuffle", "ring", 8)


def test_in_switch_needs_reducing_switches():
    with pytest.raises(NotApplicableError, match="reduction=True; torus:4x4 has none"):
        schedule("all-reduce", "in-switch", 16, fabric=topologies.build("torus:4x4"))
    f = topologies.build("cluster-128")
    with pytest.raises(NotApplicableError, match="linked to every rank"):
        schedule("all-reduce", "in-switch", 128, fabric=f)
    s = schedule("all-reduce", "in-switch", 8, fabric=f, nodes=f.endpoints[:8])
    assert s.switches == ("nvs0",)


def test_in_switch_splits_by_link_bandwidth():
    f = topologies.build("dgx-h100")  # 5, 4, 4, 5 NVLinks to the four NVSwitches
    s = schedule("all-reduce", "in-switch", 8, fabric=f)
    shares = {sw: s.steps[0].fraction[(s.steps[0].src == 0) & (s.steps[0].dst == 8 + i)].sum()
              for i, sw in enumerate(s.switches)}
    assert shares["sw0"] == pytest.approx(5 / 18 * 9 / 8)
    assert shares["sw1"] == pytest.approx(4 / 18 * 9 / 8)


def test_hierarchical_phases_on_a_hypermesh():
    f = topologies.build("hypermesh:4x2")
    s = schedule("all-reduce", "hierarchical", 8, fabric=f)
    labels = [st.label for st in s.steps]
    assert labels == ["reduce-scatter dim 0 (direct)", "reduce-scatter dim 1 (direct)",
                      "all-gather dim 1 (direct)", "all-gather dim 0 (direct)"]
    sent, _ = _sent_received(s, 8)
    # 3/4 n, then 1/8 n, each way: 2 (1 - 1/8) n, the all-reduce optimum
    np.testing.assert_allclose(sent, 2 * 7 / 8)


def test_hierarchical_on_a_torus_uses_rings_and_on_a_cluster_hosts():
    s = schedule("all-gather", "hierarchical", 16, fabric=topologies.build("torus:4x4"))
    assert all("(bidirectional ring)" in st.label for st in s.steps)
    assert [st.repeat for st in s.steps] == [3, 3]
    sent, received = _sent_received(s, 16)
    np.testing.assert_allclose(sent, 15 / 16)
    np.testing.assert_allclose(received, 15 / 16)
    s = schedule("all-gather", "hierarchical", 16, fabric=topologies.build("mesh:4x4"))
    assert all("dim" in st.label and "(ring)" in st.label for st in s.steps)
    f = topologies.build("cluster-128")
    s = schedule("reduce-scatter", "hierarchical", 128, fabric=f)
    assert [st.label for st in s.steps] == ["reduce-scatter dim 0 (direct)",
                                            "reduce-scatter dim 1 (ring)"]
    sent, _ = _sent_received(s, 128)
    np.testing.assert_allclose(sent, 127 / 128)


def test_hierarchical_refuses_a_partial_group():
    f = topologies.build("torus:4x4")
    with pytest.raises(NotApplicableError, match="whole 4x4 grid"):
        schedule("all-reduce", "hierarchical", 4, fabric=f, nodes=f.endpoints[:4])


def test_all_to_allv_from_a_traffic_matrix():
    M = np.arange(16, dtype=float).reshape(4, 4)
    for alg in ("pairwise", "one-shot"):
        s = schedule("all-to-allv", alg, 4, traffic=M)
        sent, received = _sent_received(s, 4)
        np.testing.assert_allclose(sent, M.sum(axis=1) - np.diag(M))
        np.testing.assert_allclose(received, M.sum(axis=0) - np.diag(M))
    with pytest.raises(ValueError, match="4 x 4"):
        schedule("all-to-allv", "pairwise", 4, traffic=np.ones((3, 3)))
    with pytest.raises(ValueError, match=">= 0"):
        schedule("all-to-allv", "pairwise", 2, traffic=-np.ones((2, 2)))


def test_one_rank_is_empty():
    for op, algs in FLAT.items():
        kw = {"traffic": np.ones((1, 1)) * 0} if op == "all-to-allv" else {}
        if kw:
            continue
        for alg in algs:
            assert schedule(op, alg, 1).steps == ()


def test_flow_limit_is_a_clear_error():
    with pytest.raises(NotApplicableError, match="limit"):
        schedule("all-to-all", "one-shot", 16384)


def test_ring_on_a_cluster_runs_one_ring_per_gpu_of_a_server():
    # NCCL's channels: ring c enters every server at its c-th GPU, so inter-server
    # traffic leaves from all 8 GPUs (8 NICs), not one.
    f = topologies.build("cluster-128")
    s = schedule("all-reduce", "ring", 128, fabric=f)
    st = s.steps[0]
    host = np.arange(128) // 8
    cross = host[st.src] != host[st.dst]
    assert sorted(set((st.src[cross] % 8).tolist())) == list(range(8))
    np.testing.assert_allclose(st.fraction[cross], 1 / (8 * 128))
    sent, _ = _sent_received(s, 128)
    np.testing.assert_allclose(sent, 2 * 127 / 128)
    # inside one host domain every rotation is the same ring: one ring
    one = schedule("all-reduce", "ring", 8, fabric=f, nodes=f.endpoints[:8])
    assert one.steps[0].n_flows == 8
