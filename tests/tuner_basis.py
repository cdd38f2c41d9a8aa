"""NCCL's candidates for a group, and the check that the tuner's basis chooses but never times.

Shared by the reviews of sessions 19 (one NVSwitch node) and 20 (groups across nodes): both
replace the speeds NCCL's tuner reads by arbitrary ones and require every candidate's time,
channels and fixed part to stay, while the choices move.
"""

from analysis import NotApplicableError
from analysis import _runtime_cost as rc
from analysis._collectives import _GroupView, _resolve_ranks
from fabric import RoutingError, runtime


def candidates(f, ranks, op, n, release):
    """NCCL's candidates (label -> candidate) for the first ``ranks`` endpoints of ``f``;
    empty where the group cannot run ``op``."""
    rt = runtime(f"nccl@{release}")
    try:
        nodes, idx = _resolve_ranks(f, f.endpoints[:ranks])
        view = _GroupView(f, op, nodes, idx, None, None, True)
        tried, _why = rc.nccl_candidates(rt, view, op, n, "auto", 1)
    except (NotApplicableError, RoutingError):
        return {}
    return {c.label: c for c in tried}


def same_times_moved_choices(before, after):
    """Assert that every case offers the same candidates with the same time, channels and
    fixed part in ``before`` and ``after``; return ``(label, choice moved)`` per candidate."""
    out = []
    for case, a in before.items():
        b = after[case]
        assert a.keys() == b.keys(), case
        for label, x in a.items():
            y = b[label]
            assert (x.time, x.channels, x.fixed) == (y.time, y.channels, y.fixed), (case, label)
            out.append((label, x.choice != y.choice))
    return out
