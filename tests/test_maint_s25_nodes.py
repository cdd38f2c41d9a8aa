"""A group's per-node work (``_GroupView.node_transfer``, ``node_nets``, and NCCL's per-node
ring graph search ``nccl_view_net_graph``) is done once per node that needs it: the ranks are
grouped by node in one sort, a one-rank node's (empty) plan is made once, and the ring search
runs once per distinct node shape. Before, fattree:k=40's 16,000-rank ring all-reduce made
16,000 one-rank plans, compared every rank with every node label (256M comparisons, twice)
and ran the same search 64,000 times. The answers must be the per-node loop's (the code
before), on intact and degraded fabrics, for any group."""

import numpy as np
from degrade import group_on
from hypothesis import given, settings
from hypothesis import strategies as st

import analysis._collectives as coll
import analysis._runtime_cost as rc
import topologies
from analysis._collectives import _GroupView
from fabric import FabricError, runtime

SPECS = ("rail:servers=2,gpus=8,chip=h100", "rail:servers=4,gpus=4,chip=b200", "fattree:k=4",
         "hgx-b200", "nvl72", "switch:8,planes=2,chip=b200", "torus:4x4",
         "hypermesh:2x2x2,chip=h100")


def _view(f, nodes):
    idx = np.array([f.node_index[n] for n in nodes], dtype=np.int64)
    return _GroupView(f, "all-reduce", tuple(nodes), idx, None, None, True)


def _members(view):
    """The grouping before: one pass over the group per node label."""
    return [np.flatnonzero(view._dom == label) for label in np.unique(view._dom)]


def _node_transfer(view, algorithm, op=None):
    """node_transfer before: every node's plan, the first of the slowest kept."""
    best = None
    for keep in _members(view):
        t = view.transfer(algorithm, op, tuple(view.nodes[i] for i in keep), view.idx[keep])
        key = (t.per_byte, -len(keep))
        if best is None or key > best[0]:
            best = (key, t, len(keep))
    return best[1], best[2]


def _outcome(call):
    try:
        return call()
    except FabricError as e:
        return type(e), str(e)


@settings(max_examples=60, deadline=None)
@given(group_on(SPECS), st.sampled_from(["ring", "in-switch"]))
def test_per_node_work_is_the_per_node_loops(group, algorithm):
    f, nodes = group
    try:
        view = _view(f, nodes)
    except FabricError:
        return
    got, want = view._node_members(), _members(view)
    assert len(got) == len(want)
    assert all(np.array_equal(a, b) for a, b in zip(got, want))
    assert (_outcome(lambda: view.node_transfer(algorithm, "all-reduce"))
            == _outcome(lambda: _node_transfer(view, algorithm, "all-reduce")))
    nets = []
    for keep in want:     # node_nets before: the ranks of each node and their NICs
        G, nics = f.graph, set()
        for i in keep:
            r = view.nodes[i]
            for v, d in G[r].items():
                if d.get("tech") in coll.MESSAGE_TECHNOLOGIES:
                    nics.add((r, v))
                elif G.nodes[v].get("kind") == "nic" and any(
                        G.nodes[w].get("kind") != "chip" for w in G[v]):
                    nics.add(v)
        nets.append((len(keep), len(nics)))
    assert view.node_nets() == tuple(nets)
    for name in ("nccl", "nccl@2.27.3"):
        rt = runtime(name)
        pci = view.nic_pci_bw(rt)
        every = {rc.nccl_net_ring_graph(rt, view.arch, max(1, min(k, ppn)), ppn, view.lanes,
                                        view.nic_link_bandwidth, pci) for ppn, k in nets}
        assert rc.nccl_view_net_graph(rt, view) == (min(n for n, _ in every),
                                                    min(bw for _, bw in every))


def test_one_rank_nodes_make_one_plan_and_one_search(monkeypatch):
    """Fails before: one plan per one-rank node, one ring search per node."""
    # a fresh fabric: a shared one (degrade.built) may already hold plans from other tests
    f = topologies.build("fattree:k=8")             # 128 chips, one per node
    view = _view(f, f.endpoints)
    assert len(set(view._dom.tolist())) == 128
    plans, searches = [], []
    plan, search = coll._plan, rc.nccl_net_ring_graph
    monkeypatch.setattr(coll, "_plan", lambda *a: plans.append(a) or plan(*a))
    monkeypatch.setattr(rc, "nccl_net_ring_graph",
                        lambda *a: searches.append(a) or search(*a))
    t, ranks = view.node_transfer("ring", "all-reduce")
    assert (t.per_byte, t.step_loadstore, ranks) == (0.0, 0.0, 1)
    assert len(plans) == 1
    rc.nccl_view_net_graph(runtime("nccl"), view)
    assert len(searches) == 1


def test_a_mixed_group_plans_each_multi_rank_node_and_one_single():
    f = topologies.build("rail:servers=4,gpus=4,chip=b200")    # fresh: its memo is empty
    hosts = {}
    for c in f.endpoints:
        hosts.setdefault(int(coll._loadstore_domain(f)[f.node_index[c]]), []).append(c)
    groups = list(hosts.values())
    nodes = groups[0][:1] + groups[1] + groups[2][:1] + groups[3][:2]   # 1, 4, 1, 2 ranks
    view = _view(f, nodes)
    memo = coll.fabric_memo(f, coll.__name__)
    before = {k for k in memo if k[0] == "plan"}
    got = view.node_transfer("ring", "all-reduce")
    made = [k for k in memo if k[0] == "plan" and k not in before]
    assert sorted(len(k[3]) for k in made) == [1, 2, 4]      # one of the two one-rank nodes
    assert got == _node_transfer(view, "ring", "all-reduce")
