"""Review, session 20: lasting checks of what the session's landings claimed."""

from tuner_basis import candidates as _candidates
from tuner_basis import same_times_moved_choices

import topologies
from analysis import _runtime_cost as rc

# groups across nodes searched over their NICs (NCCL's NET ring graph; NVLS-tree's graph over
# the NICs where the nodes have NVLink switches with NVLS), ranks
_GROUPS = (("rail:servers=2,gpus=8,nvls=1,chip=h100", 16), ("rail:servers=2,gpus=8", 16),
           ("rail:servers=4,gpus=4", 16), ("rail:servers=2,gpus=8,chip=b200", 16),
           ("cluster-128", 32), ("cluster-128", 128))
_RELEASES = ("2.18.5", "2.19.3", "2.23.4", "2.26.6", "2.30.7")
_OPS = ("all-reduce", "all-gather", "reduce-scatter", "broadcast")
_SIZES = (4096, 2**18, 2**24, 2**30)


def test_s20_nccls_graph_speeds_across_nodes_choose_but_never_time(monkeypatch):
    # runtime's b4e9fc9 (session 20): across nodes NCCL chooses ring and tree on its NET ring
    # graph and NVLS-tree on its NVLS graph searched with the NICs, and 'times unchanged': the
    # time stays at the fabric's rate. So another basis for the tuner may change which
    # candidate is picked, never a candidate's time, channels or fixed part (session 19's
    # test_review_s19 holds the same for one NVSwitch node). NVLS-tree's basis keeps its zero
    # (NCCL without NVLS there), so the candidates offered stay the same.
    fabrics = {spec: topologies.build(spec) for spec, _ in _GROUPS}
    cases = [(spec, ranks, op, n, rel) for spec, ranks in _GROUPS for op in _OPS
             for n in _SIZES for rel in _RELEASES]
    before = {c: _candidates(fabrics[c[0]], *c[1:]) for c in cases}
    nvls_tree = rc.nccl_nvls_tree_tuner_bus
    monkeypatch.setattr(rc, "_tuner_graph", lambda rt, view, B, nc: (0.37 * B, max(1, nc // 3)))
    monkeypatch.setattr(rc, "nccl_nvls_tuner_bw", lambda rt, view, op: 3.1e9)
    monkeypatch.setattr(rc, "nccl_nvls_tree_tuner_bus",
                        lambda rt, view: 2.3e9 if nvls_tree(rt, view) else 0.0)
    after = {c: _candidates(fabrics[c[0]], *c[1:]) for c in cases}
    pairs = same_times_moved_choices(before, after)
    compared, moved = len(pairs), {"ring": 0, "tree": 0, "nvls-tree": 0}
    for label, m in pairs:
        moved[label.split("/")[0]] += m
    # the replacement reached the tuner for each family (else the check would hold trivially)
    assert compared > 1500 and min(moved.values()) > 10, moved
