"""An all-to-all across nodes queues NCCL's rounds on its p2p channels as in one node (session
26, runtime; ``analysis._runtime_cost.p2p_batches``).

NVIDIA/nccl ``src/include/channel.h`` ``ncclP2pChannelBaseForRound``: across nodes a round's
base is ``(round / L) x divUp(L, 8) + (round % L) / 8`` with ``L`` the largest node's ranks
(2.22-2.28.3) or the schedule group (``P2P_SCHEDULE_GROUP_SIZE`` 8, cut to its gcd with the
nodes' ranks, ``src/init.cc`` ``ncclP2pSchedule``, 2.28.7 on), bit-reversed from 2.28; a
message's parts take the channels after it (``src/include/device.h``
``ncclP2pChannelForPart``); ``src/enqueue.cc`` ``ncclAddWorkBatchToPlan`` opens a channel's
new batch at 8 works and, from 2.28.7 (session 29; read as from 2.29.2 before), at a round of
another round / 8 group. Before this
session every all-to-all across nodes was one batch: a 64-node all-to-all on 16 channels
queues 4 groups of rounds on each.
"""
import pytest
from degrade import built
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from p2p_groups import group_view, nccl_busiest_channel, nccl_message, rank_group, version

from analysis import cost
from analysis._collectives import _transport_spec
from analysis._runtime_cost import p2p_batch_chain, p2p_batches, p2p_channels, step_handoff
from fabric import runtime, transport

RELEASES = ["2.20.5", "2.22.3", "2.25.1", "2.28.3", "2.28.7", "2.29.2", "2.30.7"]


def _parts(nmin, nmax, chunk, multi, nbytes, release):
    # one peer message's channels (addP2pToPlan; before 2.22 not read, the replay's 1 batch
    # does not ask): in one node every peer has an LL buffer, across nodes the network's none
    if version(release) < (2, 22, 0):
        return 1
    return nccl_message(release, nbytes, nmin, nmax, chunk, multi, ll_buffer=not multi)[1]


def _brute(release, counts, p2pn, parts):
    # literal replay (tests/p2p_groups.py): every rank plans rounds 0..p-1, each message on
    # ``parts`` channels (an all-to-all's one size), so every rank's busiest channel is alike
    return nccl_busiest_channel(release, p2pn, counts, [(r, parts) for r in range(sum(counts))])


@pytest.mark.parametrize("release", RELEASES)
def test_64_nodes_of_8_queue_four_groups_on_each_of_16_channels(release):
    # 512 ranks, 64 bases (one per node or per schedule group of 8) on 16 p2p channels: every
    # channel holds the 8 rounds of 4 groups, 4 batches under either rule (rule 1: 32 works /
    # 8; rule 2: 4 round groups); one batch before 2.22 (not read)
    f = built("rail:servers=64,gpus=8,chip=h100")
    rt = runtime(f"nccl@{release}")
    view = group_view(f, "all-to-all")
    assert (view.n_nodes, p2p_channels(rt, view)[0]) == (64, 16)
    want = 1 if version(release) < (2, 22, 0) else 4
    assert p2p_batches(rt, view) == want


def test_2_22_to_2_27_reverse_the_part_not_the_base():
    # review S26-R2: in 2.22-2.27 ncclP2pChannelForPart is base + reverseBits(part) (the base
    # as it is); 2 nodes of 8, 16 ranks, a message of 2 parts: rounds 0-7 (base 0) on channels
    # {0, 8}, rounds 8-15 (base 1) on {1, 9}: 8 works a channel, one batch (adding the part
    # plainly would stack 16 works on channel 1: 2 batches)
    f = built("rail:servers=2,gpus=8,links=8,nic=ib-ndr,chip=h800")
    rt = runtime("nccl@2.27.7")
    view = group_view(f, "all-to-all")
    p2pn, nmax, nmin, chunk = p2p_channels(rt, view)
    nbytes = 256 * 1024
    assert (view.n_nodes, p2pn) == (2, 16)
    assert _parts(nmin, nmax, chunk, True, nbytes, "2.27.7") == 2
    assert p2p_batches(rt, view, nbytes) == 1 == _brute("2.27.7", [8, 8], 16, 2)


def test_single_gpu_nodes_batch_by_round_group_from_2_28_7():
    # fattree:k=8: 128 one-GPU nodes on 4 p2p channels; from 2.28.7 the schedule group is
    # gcd(8, 1) = 1, so every round has its own base and rounds 4 apart share a channel: 32
    # works a channel, 16 round / 8 groups under rule 2 (2.28.7 on; session 29: the round-epoch
    # test is in v2.28.7-1's addWorkBatchToPlan, not only from 2.29.2). 2.28.3: a node's base
    # is its (one) rank's round, reversed, rule 1: 4 batches of 8
    f = built("fattree:k=8")
    view = group_view(f, "all-to-all")
    assert (view.n_nodes, view.p) == (128, 128)
    assert p2p_channels(runtime("nccl@2.29.2"), view)[0] == 4
    assert p2p_batches(runtime("nccl@2.28.3"), view) == 4
    assert p2p_batches(runtime("nccl@2.28.7"), view) == 16
    assert p2p_batches(runtime("nccl@2.29.2"), view) == 16


def test_the_cost_pays_each_further_batch_across_nodes():
    # the all-to-all's fixed part: the kernel floor and the first batch's step (the message
    # step holds the operation's every message: one whole overhead and a post for each further
    # one, each message once), then per further batch the larger of NCCL's network step
    # (tuning.cc hwLat) and the path with its first message's whole overhead less the post
    # already counted, and the counted chain (session 24's rule, now across nodes too)
    f = built("rail:servers=64,gpus=8,chip=h100")
    rt = runtime("nccl")
    view = group_view(f, "all-to-all")
    n = 1024.0 * view.p
    from analysis._runtime_cost import _p2p
    (c,) = _p2p(rt, view, "all-to-all", n, "scattered")
    t = view.transfer("scattered", "all-to-all")
    assert t.step_loadstore == 0.0
    rdma = transport("rdma")
    latency = max(st.latency for st in t.plan.steps if st.link >= 0)
    assert {st.transport for st in t.plan.steps if st.link >= 0} == {"rdma"}
    step = max(rt.hw_latency[("net", "ring", c.protocol)], t.step_message)
    further = max(rt.hw_latency[("net", "ring", c.protocol)],
                  latency + rdma.per_message_overhead - rdma.software_post)
    assert t.step_message > further      # 504 remote messages' overheads in one step
    k = _brute("2.30.7", [8] * 64, 16, 1)
    assert k == 4
    assert c.fixed == pytest.approx(rt.kernel_floor[view.arch] + step
                                    + (k - 1) * (further + p2p_batch_chain(view.arch)),
                                    rel=1e-12)
    whole = cost(f, "all-to-all", n, algorithm="scattered", runtime="nccl")
    assert whole.time >= c.fixed


def test_one_node_and_grouped_send_recv_keep_their_steps():
    # in one node a further batch's step is the first's (a load/store step has no per-message
    # overheads); grouped send/recv operations each pay their own message step
    from analysis._runtime_cost import _p2p
    rt = runtime("nccl")
    f = built("sd200-ultra:chip=h100")
    view = group_view(f, "all-to-all")
    (c,) = _p2p(rt, view, "all-to-all", 1024.0 * view.p, "scattered")
    t = view.transfer("scattered", "all-to-all")
    step = max(rt.hw_latency[(view.intra_hw, "ring", c.protocol)],
               t.step_loadstore + step_handoff(view.arch))
    k = p2p_batches(rt, view, 1024.0)
    assert k == 4
    assert c.fixed == pytest.approx(rt.kernel_floor[view.arch] + k * step
                                    + (k - 1) * p2p_batch_chain(view.arch), rel=1e-12)
    g = built("rail:servers=2,gpus=8,chip=h100")
    v2 = group_view(g, "all-to-all", [g.endpoints[0], g.endpoints[8]])
    (s,) = _p2p(rt, v2, "send-recv", 1024.0, "point-to-point", ops=10)
    t2 = v2.transfer("point-to-point", "send-recv")
    step2 = max(rt.hw_latency[("net", "ring", s.protocol)], t2.step_message)
    assert s.fixed == pytest.approx((rt.kernel_floor[v2.arch] + 10 * step2
                                     + 9 * p2p_batch_chain(v2.arch)) / 10, rel=1e-12)


_SPECS = ["rail:servers=2,gpus=8,links=8,nic=ib-ndr,chip=h800", "rail:servers=3,gpus=8,chip=h100",
          "rail:servers=20,gpus=8,chip=h100",
          "rail:servers=40,gpus=4,chip=h100", "rail:servers=6,gpus=2", "fattree:k=4",
          "fattree:k=8", "dgx-h100", "sd200-ultra:chip=h100"]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(group=rank_group(_SPECS), release=st.sampled_from(RELEASES),
       per_peer=st.sampled_from([0, 1024, 65536, 1 << 18, 1 << 20, 1 << 24, 1 << 27]))
def test_batches_follow_nccls_placement_brute_force(group, release, per_peer):
    # any subset of ranks of a (possibly degraded) fabric, one node or many: the model's count
    # equals the literal replay for the release's rules and the message's parts
    f, ranks, _nodes, _idx = group
    view = group_view(f, "all-to-all", ranks)
    rt = runtime(f"nccl@{release}")
    p2pn, nmax, nmin, chunk = p2p_channels(rt, view)
    parts = _parts(nmin, nmax, chunk, view.n_nodes > 1, per_peer, release)
    counts = [int(c) for c in view.node_ranks()]
    assert sum(counts) == len(ranks)
    assert p2p_batches(rt, view, per_peer) == _brute(release, counts, p2pn, parts)


def test_whole_fabrics_match_the_replay_in_every_release():
    # every rank of each fabric (where the parts' placement matters most: review S26-R2's
    # 2-node H800 case is one of them), every release, messages of 1 to 32 parts
    for spec in ("rail:servers=2,gpus=8,links=8,nic=ib-ndr,chip=h800",
                 "rail:servers=20,gpus=8,chip=h100", "rail:servers=40,gpus=4,chip=h100",
                 "fattree:k=4", "dgx-h100", "sd200-ultra:chip=h100", "switch:16,chip=b200"):
        f = built(spec)
        view = group_view(f, "all-to-all")
        counts = [int(c) for c in view.node_ranks()]
        for release in RELEASES:
            rt = runtime(f"nccl@{release}")
            p2pn, nmax, nmin, chunk = p2p_channels(rt, view)
            for per_peer in (1024, 1 << 18, 1 << 20, 1 << 25, 1 << 29):
                parts = _parts(nmin, nmax, chunk, view.n_nodes > 1, per_peer, release)
                assert p2p_batches(rt, view, per_peer) == _brute(release, counts, p2pn, parts), (
                    spec, release, per_peer, parts)


def test_further_batches_over_rdma_pay_each_message_once():
    # 128 ranks of one node forced over RDMA (bench_decode's transport='rdma'): the step holds
    # one message's whole overhead and 126 posts; 4 batches are 127 messages, each posted once,
    # and 4 of them first in their batch (whole overheads): the step + 3 x (path + whole - post)
    from analysis._runtime_cost import _p2p
    rt = runtime("nccl")
    f = built("sd200-ultra:chip=h100")
    view = group_view(f, "all-to-all", transport=_transport_spec("rdma"))
    (c,) = _p2p(rt, view, "all-to-all", 1024.0 * view.p, "scattered")
    t = view.transfer("scattered", "all-to-all")
    (st,) = [s for s in t.plan.steps if s.link >= 0]
    rdma = transport("rdma")
    assert st.overhead == pytest.approx(rdma.per_message_overhead + 126 * rdma.software_post)
    k = p2p_batches(rt, view, 1024.0)
    assert k == 4
    first = st.latency + rdma.per_message_overhead - rdma.software_post
    step = max(rt.hw_latency[(view.intra_hw, "ring", c.protocol)], t.step_message)
    further = max(rt.hw_latency[(view.intra_hw, "ring", c.protocol)], first)
    assert c.fixed == pytest.approx(rt.kernel_floor[view.arch] + step
                                    + (k - 1) * (further + p2p_batch_chain(view.arch)),
                                    rel=1e-12)
    # every message's whole overhead or post counted once: 4 whole, 123 posts, 4 paths
    assert c.fixed == pytest.approx(rt.kernel_floor[view.arch] + k * st.latency
                                    + k * rdma.per_message_overhead + 123 * rdma.software_post
                                    + (k - 1) * p2p_batch_chain(view.arch), rel=1e-12)
