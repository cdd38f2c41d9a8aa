"""Review, session 19: lasting checks of what the session's landings claimed."""

import topologies
from analysis import NotApplicableError
from analysis import _runtime_cost as rc
from analysis._collectives import _GroupView, _resolve_ranks
from fabric import RoutingError, runtime

# one NVSwitch node each (where NCCL's tuner reads its own ring / NVLS graph speeds), ranks
_NODES = (("dgx-h100", 4), ("dgx-h100", 8), ("hgx-b200", 8), ("nvl72", 8), ("gb200-nvl72", 4))
_RELEASES = ("2.18.5", "2.22.3", "2.27.7", "2.30.7")
_OPS = ("all-reduce", "all-gather", "reduce-scatter", "broadcast")
_SIZES = (4096, 2**20, 2**26, 2**32)


def _candidates(f, ranks, op, n, release):
    rt = runtime(f"nccl@{release}")
    try:
        nodes, idx = _resolve_ranks(f, f.endpoints[:ranks])
        view = _GroupView(f, op, nodes, idx, None, None, True)
        tried, _why = rc.nccl_candidates(rt, view, op, n, "auto", 1)
    except (NotApplicableError, RoutingError):
        return {}
    return {c.label: c for c in tried}


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
    compared = choices_moved = 0
    for case in cases:
        a, b = before[case], after[case]
        assert a.keys() == b.keys(), case
        for label, x in a.items():
            y = b[label]
            assert (x.time, x.channels, x.fixed) == (y.time, y.channels, y.fixed), (case, label)
            compared += 1
            choices_moved += x.choice != y.choice
    # the replacement reached the tuner (else the check would hold trivially)
    assert compared > 1000 and choices_moved > 100
