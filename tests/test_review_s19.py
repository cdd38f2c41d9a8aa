"""Review, session 19: lasting checks of what the session's landings claimed."""

from tuner_basis import candidates as _candidates
from tuner_basis import same_times_moved_choices

import topologies
from analysis import _runtime_cost as rc

# one NVSwitch node each (where NCCL's tuner reads its own ring / NVLS graph speeds), ranks
_NODES = (("dgx-h100", 4), ("dgx-h100", 8), ("hgx-b200", 8), ("nvl72", 8), ("gb200-nvl72", 4))
_RELEASES = ("2.18.5", "2.22.3", "2.27.7", "2.30.7")
_OPS = ("all-reduce", "all-gather", "reduce-scatter", "broadcast")
_SIZES = (4096, 2**20, 2**26, 2**32)


def test_s19_the_tuners_graph_speeds_choose_but_never_time(monkeypatch):
    # runtime's 905b264 (session 19): NCCL chooses NVLS, ring and tree at its own graph
    # speeds, and the times stay at the fabric's rate ('times unchanged'). So any other graph
    # speed may change which candidate is picked, never a candidate's time, channels or fixed
    # part: the tuner's basis is replaced by an arbitrary one and every candidate compared.
    fabrics = {spec: topologies.build(spec) for spec, _ in _NODES}
    cases = [(spec, ranks, op, n, rel) for spec, ranks in _NODES for op in _OPS
             for n in _SIZES for rel in _RELEASES]
    before = {c: _candidates(fabrics[c[0]], *c[1:]) for c in cases}
    monkeypatch.setattr(rc, "_tuner_graph", lambda rt, view, B, nc: (0.37 * B, max(1, nc // 3)))
    monkeypatch.setattr(rc, "nccl_nvls_tuner_bw", lambda rt, view, op: 3.1e9)
    after = {c: _candidates(fabrics[c[0]], *c[1:]) for c in cases}
    pairs = same_times_moved_choices(before, after)
    compared, choices_moved = len(pairs), sum(m for _, m in pairs)
    # the replacement reached the tuner (else the check would hold trivially)
    assert compared > 1000 and choices_moved > 100
