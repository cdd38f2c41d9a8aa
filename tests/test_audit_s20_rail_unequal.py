"""Audit, session 20: NCCL's rings across a rail cluster that lost a GPU or a GPU's NIC link.

NCCL's network rings are rail-aligned channel by channel: a channel leaves a node and enters
the next through NICs of one rail, its chain starting and ending at those NICs' local GPUs
(NVIDIA/nccl ``src/graph/search.cc``, ``crossNic`` 0; runtime's reading, board 01:28). So a
node that lost one of its 8 GPUs still sends every channel through a rail, its remaining 7
NICs carrying the channels its 8 carried: the ring's time rises by at most 8/7, and a GPU
whose own NIC link failed is left out of the network hops (its channels leave through
another NIC). The model's ring schedules (the rank-order ring, its rotations, the
multi-ring search) routed the cross-node steps rank to rank: on 8 + 7 ranks they fell back
to one ring, and a step whose GPU lost its NIC link had no route (strict xfails, with the
numbers as of 6d1c65d). Session 21 (runtime): the channel rings over hosts of unequal size
(the least host's count, each entering and leaving a host at ranks that kept their
network port: analysis._schedules.host_rings) pass the first two; the third passes with
NCCL's per-node graphs (every node keeps the least node's channels, src/init.cc: 15 ranks
of the intact cluster are 7 + 8 and get 28 channels, as NCCL's Postset doubles 14 below
16; without chip6's NIC link 24).
"""

import pytest

import analysis
import topologies
from analysis._collectives import communicator_channels

GiB = 2**30


@pytest.mark.parametrize("runtime", ["nccl", "ideal"])
@pytest.mark.parametrize("spec", ["rail:servers=2,gpus=8,chip=h100",
                                  "rail:servers=4,gpus=8,chip=h100"])
def test_a_rail_cluster_that_lost_a_gpu_runs_its_ring_at_most_8_over_7_slower(spec, runtime):
    f = topologies.build(spec)
    g = f.without(chips=["chip0"])
    a = analysis.cost(f, "all-reduce", GiB // 4, runtime=runtime)
    b = analysis.cost(g, "all-reduce", GiB // 4, runtime=runtime)
    assert b.time <= a.time * 8 / 7


@pytest.mark.parametrize("chip", ["h100", "gb200"])
def test_a_gpu_that_lost_its_nic_link_still_joins_a_collective_across_nodes(chip):
    f = topologies.build(f"rail:servers=2,gpus=8,chip={chip}")
    g = f.without(links=["chip6-nic6"])
    a = analysis.cost(f, "all-reduce", GiB // 4)
    assert analysis.cost(g, "all-reduce", GiB // 4).time >= a.time


def test_a_lost_nic_link_never_raises_the_communicators_channels():
    f = topologies.build("rail:servers=2,gpus=8,chip=h100")
    g = f.without(links=["chip6-nic6"])
    ranks = list(range(1, 16))
    assert communicator_channels(g, ranks)[0] <= communicator_channels(f, ranks)[0]
