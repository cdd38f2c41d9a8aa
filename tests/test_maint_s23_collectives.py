"""Session 23 (maint): a collective step's cached link loads are sparse; a group's node ranks are found once.

The per-fabric memo of analysis._collectives kept one dense row over every directed link
per distinct step; a decode layout search on the scaling study's 16k-chip hypermesh held
~240 of them (10 MB each, 2.5 GB). Each step now keeps its loaded links and their bytes,
and its bottleneck is found among them exactly as ``argmax`` finds it over the dense row.
"""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import topologies
from analysis import cost
from analysis._collectives import _busiest, _effective_bandwidth, _step_transport
from analysis._schedules import schedule
from fabric._memo import fabric_memo


def _dense_busiest(row, bw):
    """The rule before: argmax over the dense row's seconds per byte."""
    per = row / bw
    j = int(np.argmax(per))
    return j, float(per[j]), float(row[j])


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 40).flatmap(lambda n: st.tuples(
    st.lists(st.sampled_from([0.0, 0.0, 1.0, 2.0, 3.0, 0.5, 1e-300, 7.25]), min_size=n,
             max_size=n),
    st.lists(st.sampled_from([1.0, 2.0, 4.0, 0.5, 3.0]), min_size=n, max_size=n))))
def test_busiest_of_the_sparse_loads_is_the_dense_rows_argmax(case):
    """Ties (first link wins), a row with nothing loaded (link 0), tiny loads: the sparse
    rule gives the dense rule's link, seconds per byte and bytes, bit for bit."""
    row, bw = (np.array(x) for x in case)
    links = np.flatnonzero(row)
    assert _busiest(links, row[links], bw, len(row)) == _dense_busiest(row, bw)


def test_the_memo_keeps_only_the_links_a_step_loads():
    """On a 512-chip hypermesh (110k directed links) a ring over 8 chips loads a few dozen
    links a step: the memo holds those, not a row over every link (it held 11 dense rows
    here, 9.7 MB, before)."""
    f = topologies.build("hypermesh:8x8x8")
    n_links = f.router.n_links
    for op in ("all-reduce", "all-to-all", "all-gather"):
        cost(f, op, 2**20, "auto", runtime="ideal", ranks=list(f.endpoints[:8]))
    cached = fabric_memo(f, "analysis._collectives")["loads"]
    assert len(cached) >= 2
    held = 0
    for links, unit in cached.values():
        assert links.dtype.kind == "i" and len(links) == len(unit)
        assert (np.diff(links) > 0).all() and (unit != 0).all()
        held += links.nbytes + unit.nbytes
    assert held < n_links * 8        # less than one dense row, for every step together


def test_bottlenecks_match_a_dense_recount_on_a_degraded_fabric():
    """Each step's bottleneck link and its bytes equal the dense row's argmax, the row
    recounted here from the router (a torus with a failed link: detoured, uneven loads)."""
    f = topologies.build("torus:4x4").without(links=[("chip0", "chip1")])
    r = f.router
    c = cost(f, "all-to-all", 2**20, "pairwise", runtime="ideal")
    ni = f.node_index
    sched = schedule("all-to-all", "pairwise", f.n_endpoints, fabric=f,
                     nodes=tuple(f.endpoints))
    idx = np.array([ni[e] for e in f.endpoints])
    for step, got in zip(sched.steps, c.steps):
        s, d = idx[step.src], idx[step.dst]
        t = _step_transport(f, None, s, d)
        bw = _effective_bandwidth(f, t, False)
        uniform = bool((step.fraction == step.fraction[0]).all())
        row = (r.loads(s, d, 1.0) * step.fraction[0] if uniform
               else r.loads(s, d, step.fraction))
        j, _, unit = _dense_busiest(row, bw)
        assert got.bottleneck == (f.nodes[int(r.link_tail[j])], f.nodes[int(r.link_head[j])])
        assert got.link_bytes == unit * 2**20


def test_a_groups_node_ranks_are_found_once_and_read_only():
    """A runtime asks a group view for its ranks per node about ten times a cost; the count
    is one of the group's facts (found once per fabric and ranks), the same read-only array
    for every view of the group, equal to counting the ranks' load/store domains."""
    from analysis._collectives import _GroupView, _loadstore_domain

    f = topologies.build("rail:servers=3,gpus=4")
    nodes = tuple(f.endpoints[1:10])
    idx = np.array([f.node_index[n] for n in nodes])
    a = _GroupView(f, "all-reduce", nodes, idx, None, None, True)
    b = _GroupView(f, "all-gather", nodes, idx, None, None, True)
    assert a.node_ranks() is b.node_ranks()
    assert not a.node_ranks().flags.writeable
    dom = np.asarray(_loadstore_domain(f))[idx]
    assert a.node_ranks().tolist() == np.unique(dom, return_counts=True)[1].tolist() == [3, 4, 2]


def test_a_fabric_whose_algorithm_was_refused_is_freed(frozen_heap):
    """A refusal (NotApplicableError) is cached per fabric; it was cached with its traceback,
    whose frames hold the fabric, so the fabric, its router and its memos were never freed
    (the scaling study's workers grew by each 16k-chip fabric). Asked again, the refusal says
    the same, and each raise is a fresh exception (a cached one gathered every raise's
    frames)."""
    import gc
    import weakref

    from analysis import NotApplicableError

    f = topologies.build("torus:4x4")
    seen = []
    for _ in range(2):
        try:
            cost(f, "all-reduce", 2**20, "in-switch", runtime="ideal")
        except NotApplicableError as e:
            seen.append(e)
    cost(f, "all-reduce", 2**20, "auto", runtime="nccl")
    assert len(seen) == 2 and seen[0] is not seen[1] and str(seen[0]) == str(seen[1])
    del seen
    ref = weakref.ref(f)
    del f
    gc.collect()
    assert ref() is None
