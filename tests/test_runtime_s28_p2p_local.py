"""Across nodes, a point-to-point message to a peer of the sender's own node chooses its
protocol as in one node (session 28, runtime; ``analysis._runtime_cost.p2p_protocol(...,
local=)``, ``_p2p_messages``, used by ``_p2p``).

NCCL runs a p2p message LL only over a connection with an LL buffer (NVIDIA/nccl
``src/enqueue.cc``: ``info.protocol = (conn->buffs[NCCL_PROTO_LL] != nullptr) && ...`` up to
2.21, ``protoLL[dir] &= conn->conn.buffs[NCCL_PROTO_LL] != nullptr`` in ``addP2pToPlan`` from
2.22): a network peer's connection has none (``NCCL_ALLOC_P2P_NET_LL_BUFFERS`` off), a peer in
the node is reached over the P2P or SHM transport, which allocates every protocol's buffer
(``src/transport/p2p.cc``, ``shm.cc``). Until this session the model took one representative
message for a group across nodes, always Simple at the network's step: an all-to-all's
messages to the node's peers are LL up to the threshold (8 data bytes a 16-byte line on the
node's links), and an all-to-allv whose bytes stay in one node pays that node's step.
"""
import numpy as np
import pytest
from degrade import built
from p2p_groups import group_view

from analysis import cost
from analysis._runtime_cost import p2p_protocol
from fabric import runtime

KiB = 1024


def test_bytes_that_stay_in_one_node_pay_that_nodes_step():
    # two 8-GPU servers, an all-to-allv in which only rank 0 -> rank 1 (same server) carries
    # bytes: NCCL posts one message over NVLink's P2P connection, LL at 12,345 B. The model
    # priced it Simple at the network's ring step (14 us): now exactly what the server's own
    # 8 ranks pay for the same message
    f = built("rail:servers=2,gpus=8")
    M = np.zeros((16, 16))
    M[0, 1] = 12345.0
    ranks = list(f.endpoints)[:16]
    view = group_view(f, "all-to-allv", ranks, M)
    assert view.n_nodes == 2
    assert p2p_protocol(runtime("nccl"), view, 12345, local=True)[0] == "LL"
    assert p2p_protocol(runtime("nccl"), view, 12345)[0] == "Simple"
    c = cost(f, "all-to-allv", M, runtime="nccl", ranks=ranks)
    one = cost(f, "all-to-allv", M[:8, :8], runtime="nccl", ranks=ranks[:8])
    assert (c.protocol, c.channels) == (one.protocol, one.channels) == ("LL", 1)
    assert c.fixed == pytest.approx(one.fixed, rel=1e-12)
    assert c.time == pytest.approx(one.time, rel=1e-12)


@pytest.mark.parametrize("release", ["nccl@2.20.5", "nccl@2.25.1", "nccl"])
def test_an_all_to_alls_node_messages_cross_at_ll_rate(release):
    # two servers whose GPUs have one scale-up link each (the node's links, not the NIC, bind):
    # 128 KiB a rank, 8 KiB to each peer. The 7 messages to the server's peers run LL (their
    # bytes twice on the wire), the 8 to the other server's Simple; the wire matrix is routed
    # as the operation's traffic. Before, every message was priced Simple (n x per byte)
    f = built("rail:servers=2,gpus=8,links=1")
    n = 128 * KiB
    ranks = list(f.endpoints)[:16]
    view = group_view(f, "all-to-all", ranks)
    rt = runtime(release)
    per = n / 16
    assert p2p_protocol(rt, view, per, local=True)[0] == "LL"
    assert p2p_protocol(rt, view, per)[0] == "Simple"
    server = np.arange(16) // 8            # ranks 0-7 on the first server, 8-15 on the second
    same = server[:, None] == server[None, :]
    assert (view.same_node() == same).all()
    wire = np.full((16, 16), per) * np.where(same & ~np.eye(16, dtype=bool), 2.0, 1.0)
    c = cost(f, "all-to-all", n, runtime=release, ranks=ranks)
    t = view.transfer("scattered", "all-to-allv", traffic=wire / wire.sum())
    assert c.protocol == "Simple"
    assert c.time - c.fixed == pytest.approx(wire.sum() * t.per_byte, rel=1e-12)
    assert c.time - c.fixed > n * view.transfer("scattered", "all-to-all").per_byte * 1.05


def test_messages_of_one_protocol_keep_the_scalar_rule():
    # 1 MiB a rank (64 KiB a peer): every message Simple, local or not, so the all-to-all's
    # one-message rule stands (n x per byte)
    f = built("rail:servers=2,gpus=8,links=1")
    ranks = list(f.endpoints)[:16]
    view = group_view(f, "all-to-all", ranks)
    rt = runtime("nccl")
    assert p2p_protocol(rt, view, 65536, local=True)[0] == "Simple"
    c = cost(f, "all-to-all", 1 << 20, runtime="nccl", ranks=ranks)
    t = view.transfer("scattered", "all-to-all")
    assert c.time - c.fixed == pytest.approx((1 << 20) * t.per_byte, rel=1e-12)
