"""NCCL's channel rings over hosts of unequal size, and over a GPU that lost its network port.

NCCL searches its ring graph on every node and keeps the least node's channel count
(NVIDIA/nccl ``src/init.cc``: ``nChannels = min`` over the allgathered graphs); channel ``c``
enters a node at a GPU local to the channel's NIC and leaves it from the chain's last GPU
(``src/graph/search.cc`` 'NET n -> GPU a -> .. -> GPU x -> NET n', ``src/graph/connect.cc``
``ringRecv`` / ``ringSend``); a GPU without its own NIC rides inside the chain (PXN,
``src/graph/paths.cc``). :func:`analysis._schedules.host_rings` builds those rings; checked
here against a brute-force reading of the rings' properties on small degraded rail clusters.
"""

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import analysis
import topologies
from analysis._collectives import communicator_channels
from analysis._schedules import _host_groups, resolve_ranks
from analysis._schedules_multi import _channel_rings


def _has_port(G, chip):
    """Brute force: a NIC next to the chip that still has its network (rail) link."""
    return any(G.nodes[v].get("kind") == "nic" and any(w.startswith("rail") for w in G[v])
               for v in G[chip])


@st.composite
def degraded_rails(draw):
    servers = draw(st.sampled_from([2, 3]))
    gpus = draw(st.integers(2, 6))
    f = topologies.build(f"rail:servers={servers},gpus={gpus},chip=h100")
    chips = [f"chip{i}" for i in range(servers * gpus)]
    # every server keeps at least one GPU; some GPUs fail, some lose their NIC link
    failed = [c for c in chips if draw(st.booleans()) and draw(st.booleans())]
    for s in range(servers):
        mine = chips[s * gpus:(s + 1) * gpus]
        if all(c in failed for c in mine):
            failed.remove(mine[0])
    cut = [c for c in chips if c not in failed and draw(st.integers(0, 4)) == 0]
    for s in range(servers):        # ... and one GPU with its NIC (else the group splits)
        live = [c for c in chips[s * gpus:(s + 1) * gpus] if c not in failed]
        if all(c in cut for c in live):
            cut.remove(live[0])
    cut = [f"{c}-nic{c[4:]}" for c in cut]
    g = f.without(chips=failed, links=cut) if failed or cut else f
    return f, g, failed, cut


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(degraded_rails())
def test_channel_rings_enter_and_leave_every_host_at_ranks_with_a_port(case):
    _f, g, failed, cut = case
    nodes = resolve_ranks(g, None)[0]
    host_of = g.host_of
    hosts = {}
    for i, n in enumerate(nodes):
        hosts.setdefault(host_of[n], []).append(i)
    ports = {h: [i for i in r if _has_port(g.graph, nodes[i])] for h, r in hosts.items()}
    k = min(len(v) for v in ports.values())
    for rings in (_host_groups(g, nodes), _channel_rings(g, nodes)):
        if len(hosts) < 2 or min(len(r) for r in hosts.values()) < 2 or k < 2:
            assert rings is None or len(rings) == 1
            continue
        assert len(rings) == k
        exits = {h: set() for h in hosts}
        entries = {h: set() for h in hosts}
        for ring in rings:
            ring = [int(x) for x in ring]
            assert sorted(ring) == list(range(len(nodes)))     # every rank once
            runs = [ring[0:1]]
            for a in ring[1:]:
                if host_of[nodes[a]] == host_of[nodes[runs[-1][-1]]]:
                    runs[-1].append(a)
                else:
                    runs.append([a])
            if len(runs) > len(hosts):                          # the last run wraps round
                runs[0] = runs.pop() + runs[0]
            assert len(runs) == len(hosts)                       # each host's ranks together
            for run in runs:
                h = host_of[nodes[run[0]]]
                assert _has_port(g.graph, nodes[run[0]]) and _has_port(g.graph, nodes[run[-1]])
                entries[h].add(run[0])
                exits[h].add(run[-1])
        # the k rings enter (and leave) every host at k different ranks, hence NICs
        assert all(len(entries[h]) == len(exits[h]) == k for h in hosts)
    if not failed and not cut:
        # the fabric as built: the g rotations of every host's ranks, as before
        gpus = len(nodes) // len(hosts)
        block = np.arange(len(nodes)).reshape(len(hosts), gpus)
        want = [np.roll(block, -c, axis=1).ravel() for c in range(gpus)]
        assert [r.tolist() for r in _host_groups(g, nodes)] == [w.tolist() for w in want]


def test_a_rail_cluster_minus_a_gpu_runs_seven_channel_rings():
    """rail 2 x 8 H100 without chip0 (8 + 7 ranks): 7 rings, ring c entering host0 at its c-th
    rank (chip c+1) and host1 at chip 8+c; before, one ring carried every cross-node byte
    (256 MiB all-reduce under ideal 5108.1 us, 3.8 x the intact 1336.5 us)."""
    f = topologies.build("rail:servers=2,gpus=8,chip=h100")
    g = f.without(chips=["chip0"])
    nodes = resolve_ranks(g, None)[0]
    rings = analysis.ring_search(g)
    assert len(rings) == 7
    names = [[nodes[int(i)] for i in r] for r in rings]
    assert names[0][:2] == ["chip1", "chip2"] and names[0][7] == "chip8"
    assert names[6][0] == "chip7" and names[6][6] == "chip6" and names[6][7] == "chip14"
    a = analysis.cost(f, "all-reduce", 2**28, runtime="ideal").time
    b = analysis.cost(g, "all-reduce", 2**28, runtime="ideal").time
    assert a < b <= a * 8 / 7


def test_a_gpu_without_its_nic_rides_inside_every_ring():
    """chip6 lost its NIC link (rail 2 x 8): 7 rings, none entering or leaving host0 at chip6;
    under NCCL the 16-rank all-reduce runs (it raised 'no route from chip13 to chip6')."""
    f = topologies.build("rail:servers=2,gpus=8,chip=h100")
    g = f.without(links=["chip6-nic6"])
    nodes = resolve_ranks(g, None)[0]
    rings = analysis.ring_search(g)
    assert len(rings) == 7
    for r in rings:
        names = [nodes[int(i)] for i in r]
        assert "chip6" not in (names[0], names[7], names[8], names[15])
    a = analysis.cost(f, "all-reduce", 2**28)
    b = analysis.cost(g, "all-reduce", 2**28)
    assert a.time < b.time <= a.time * 8 / 7


def test_every_node_keeps_the_least_nodes_channels():
    """NCCL allgathers every node's ring graph and keeps the least nChannels and speed
    (src/init.cc). rail 2 x 8 H100 without chip0: node0's 7 GPUs and 7 NICs search 7 x 48 GB/s
    (one channel a NIC), node1 8 x 48: 7, doubled by Postset to 14 and, at 48 > 45 GB/s and
    below 16, to 28 (the average of 7.5 NICs a node gave 8 -> 16). Without chip6's NIC link
    node0 has 7 NICs for 8 GPUs: 28; intact: 16."""
    f = topologies.build("rail:servers=2,gpus=8,chip=h100")
    assert communicator_channels(f) == (16, 16)
    assert communicator_channels(f.without(chips=["chip0"]), list(range(1, 16))) == (28, 32)
    assert communicator_channels(f, list(range(1, 16))) == (28, 32)
    g = f.without(links=["chip6-nic6"])
    assert communicator_channels(g) == (28, 32)
    assert communicator_channels(g, list(range(1, 16))) == (24, 32)     # node0: 6 NICs


def test_rings_of_equal_loads_are_a_tie_whatever_the_last_bit():
    """Review S21-R5: on 7 + 8 ranks the both-way rings' seconds per byte came out below the
    one-way rings' in the last bit only (the same loads summed in another order), so NCCL's
    ring took the both-way schedule, whose steps put two network sends on one rank (a 4.14 us
    message step where the one-way rings' is 2.34 us): a broadcast of 1 MiB read 103.5 us on
    ring/LL. A tie within float rounding keeps the ring (ncclTopoCompareGraphs: nChannels x
    bwIntra), as 16 ranks do where the two are equal to the bit."""
    from analysis import _runtime_cost as rc
    from analysis._collectives import _GroupView
    from fabric import runtime

    f = topologies.build("rail:servers=2,gpus=8,chip=h100")
    g = f.without(chips=["chip0"])
    nodes, idx = resolve_ranks(g, None)
    v = _GroupView(g, "broadcast", nodes, idx, None, None, True)
    a, b = v.transfer("ring", "all-gather"), v.transfer("multi-ring", "all-gather")
    assert abs(a.per_byte - b.per_byte) <= 1e-12 * a.per_byte
    assert rc._ring_graph(runtime("nccl"), v, "broadcast")[0] == "ring"
    r = analysis.cost(g, "broadcast", 2**20)
    assert (r.algorithm, r.protocol) == ("ring", "LL") and r.time < 85e-6
