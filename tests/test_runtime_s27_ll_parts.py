"""A point-to-point message's channels in NCCL 2.22-2.28: an LL message's parts come from the
LL step (session 27, runtime; ``analysis._runtime_cost.p2p_protocol``, ``p2p_ll_step``).

NVIDIA/nccl v2.22.3-1 .. v2.28.9-1 ``src/enqueue.cc`` ``addP2pToPlan``: the protocol first (LL
while the message is at most ``nChannelsMax x NCCL_P2P_LL_THRESHOLD``, 16 KiB, and the peer's
connection has an LL buffer), then ``stepSize = buffSizes[protocol] / NCCL_STEPS``, replaced by
``p2pChunkSize`` for Simple; ``nChannels = min(nChannelsMin, divUp(bytes, minPartSize))``,
doubled while a part exceeds ``maxPartSize`` (``stepSize / 8`` and ``x 32`` in one node). The
LL buffer is ``DEFAULT_LL_BUFFSIZE`` = NCCL_LL_LINES_PER_THREAD 8 x NCCL_LL_MAX_NTHREADS 512 x
NCCL_STEPS 8 x 16-byte lines (``src/init.cc``), so an LL step is 64 KiB and an LL message's
smallest part 8 KiB, where a Simple message's is p2pChunkSize / 8 (64 KiB over NVLink). From
2.29 every message's channels come from ``p2pChunkSize`` ("assume SIMPLE protocol to start
with"), the model's rule 2. Before this session the model reported ``nChannelsMax`` channels
for every 2.22-2.28 message (dgx-h100, 32 KiB: 32 where NCCL runs 4) and cut an all-to-all's
parts from the Simple step.
"""
from degrade import built
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from p2p_groups import LL_STEP, group_view, nccl_message, rank_group

from analysis import cost
from analysis._runtime_cost import p2p_channels, p2p_ll_step, p2p_protocol
from fabric import runtime

RULE1 = ["2.22.3", "2.25.1", "2.27.7", "2.28.3", "2.28.9"]
LATER = ["2.29.2", "2.30.7"]


def test_ll_step_is_the_ll_buffer_over_its_steps():
    for release in RULE1 + LATER:
        assert p2p_ll_step(runtime(f"nccl@{release}")) == LL_STEP == 65536


def test_dgx_h100_32k_runs_on_4_channels_not_32():
    # 8 H100: 32 p2p channels, 32 per peer, nChannelsMin 4. 32 KiB is LL (<= 32 x 16 KiB);
    # its parts of at least 8 KiB give min(4, 4) = 4 channels (the model said 32); 4 KiB one;
    # 2.29.2 cuts from the Simple step (64 KiB parts): one channel, and LL (<= 1 x 16 KiB)
    # only up to 16 KiB
    f = built("dgx-h100")
    view = group_view(f)
    rt = runtime("nccl@2.25.1")
    assert p2p_channels(rt, view)[:3] == (32, 32, 4)
    assert p2p_protocol(rt, view, 32768) == ("LL", 4)
    assert p2p_protocol(rt, view, 12288) == ("LL", 2)
    assert p2p_protocol(rt, view, 4096) == ("LL", 1)
    assert p2p_protocol(rt, view, 1 << 20) == ("Simple", 4)
    new = runtime("nccl@2.29.2")
    assert p2p_protocol(new, view, 32768) == ("Simple", 1)
    assert p2p_protocol(new, view, 16384) == ("LL", 1)
    # what cost() reports for the operation
    c = cost(f, "send-recv", 32768, runtime="nccl@2.25.1")
    assert (c.protocol, c.channels) == ("LL", 4)


_SPECS = ["dgx-h100", "hgx-h800", "switch:8,chip=h200", "switch:16,chip=b200", "mesh:3x3",
          "rail:servers=2,gpus=8,links=8,nic=ib-ndr,chip=h800", "nvl72:chip=h100"]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(group=rank_group(_SPECS), release=st.sampled_from(RULE1 + LATER),
       nbytes=st.one_of(st.sampled_from([0, 1, 8192, 8193, 16384, 65536, 65537, 1 << 20]),
                        st.integers(0, 1 << 22)), local=st.booleans())
def test_p2p_channels_follow_the_protocols_step(group, release, nbytes, local):
    # any rank set of a (possibly degraded) fabric, one node or several: the model's protocol
    # and channels are addP2pToPlan's, with an LL message's parts from the LL step in 2.22-2.28;
    # across nodes a message to a peer of the sender's node (local) may run LL (session 28)
    f, ranks, _nodes, _idx = group
    view = group_view(f, ranks=ranks)
    rt = runtime(f"nccl@{release}")
    _p2pn, nmax, nmin, chunk = p2p_channels(rt, view)
    multi = view.n_nodes > 1
    assert p2p_protocol(rt, view, nbytes, local) == nccl_message(
        release, nbytes, nmin, nmax, chunk, multi, ll_buffer=not multi or local)
