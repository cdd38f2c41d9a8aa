"""The network's whole-step sends: the closed forms against an event simulation (session 16).

``analysis._runtime_cost`` charges NCCL's store-and-forward at the network (every protocol's
step leaves for the network only when whole, ``src/transport/net.cc``) as one send per
network hop in series: on the ring the most network edges a chunk's 2(p - 1) (all-reduce) or
p - 1 steps cross (``nccl_ring_net_hops``), on the tree the hops up to the root and down
(``2 x nccl_tree_net_depth``). ``tests/store_forward_brute.py`` simulates the step
dependencies; the difference between its store-and-forward and cut-through passes is exactly
that count times one send, whenever writing a step takes no longer than sending one (tw <= t)
and NCCL's 8 steps of buffer are there; where writing takes longer the count is a lower bound
(a boundary rank's own sends then wait for its writes); the two fixed cases below show the
premises matter.
"""

import pytest
from degrade import built
from hypothesis import given, settings
from hypothesis import strategies as st
from store_forward_brute import chain_pass, ring_pass

from analysis._runtime_cost import nccl_ring_net_hops

_STEPS = {"all-reduce": lambda p: 2 * (p - 1), "all-gather": lambda p: p - 1,
          "reduce-scatter": lambda p: p - 1, "broadcast": lambda p: p - 1}


@st.composite
def _times(draw):
    t = draw(st.floats(0.01, 3.0))
    tw = draw(st.floats(0.0, 1.0)) * t
    lat_nvl = draw(st.floats(0.05, 1.0))
    return t, tw, lat_nvl, lat_nvl + draw(st.floats(0.0, 3.0))


@settings(max_examples=150, deadline=None)
@given(nodes=st.integers(2, 4), ppn=st.integers(1, 4), uneven=st.lists(st.integers(1, 4),
       min_size=4, max_size=4), even=st.booleans(), op=st.sampled_from(sorted(_STEPS)),
       times=_times())
def test_ring_fill_is_one_send_per_network_hop_on_a_chunks_path(nodes, ppn, uneven, even, op,
                                                                times):
    sizes = tuple([ppn] * nodes if even else uneven[:nodes])
    steps = _STEPS[op](sum(sizes))
    t, tw, lat_nvl, lat_net = times
    sf = ring_pass(sizes, steps, t, tw, lat_nvl, lat_net, True)
    ct = ring_pass(sizes, steps, t, tw, lat_nvl, lat_net, False)
    assert sf - ct == pytest.approx(nccl_ring_net_hops(op, sizes) * tw, rel=1e-9, abs=1e-12)


@settings(max_examples=150, deadline=None)
@given(classes=st.lists(st.booleans(), min_size=1, max_size=10), chunks=st.integers(1, 12),
       times=_times())
def test_chain_fill_is_one_send_per_network_hop(classes, chunks, times):
    t, tw, lat_nvl, lat_net = times
    sf = chain_pass(classes, chunks, t, tw, lat_nvl, lat_net, True)
    ct = chain_pass(classes, chunks, t, tw, lat_nvl, lat_net, False)
    assert sf - ct == pytest.approx(sum(classes) * tw, rel=1e-9, abs=1e-12)


@settings(max_examples=100, deadline=None)
@given(sizes=st.lists(st.integers(1, 4), min_size=2, max_size=4),
       op=st.sampled_from(sorted(_STEPS)), classes=st.lists(st.booleans(), min_size=1, max_size=8),
       chunks=st.integers(1, 12), t=st.floats(0.01, 3.0), slow=st.floats(1.0, 3.0),
       lat=st.floats(0.05, 1.0), extra=st.floats(0.0, 3.0))
def test_fill_is_at_least_one_send_per_hop_when_writes_are_slower(sizes, op, classes, chunks, t,
                                                                  slow, lat, extra):
    # tw >= t: the closed forms under-count, never over-count
    tw = slow * t
    steps = _STEPS[op](sum(sizes))
    ring = (ring_pass(tuple(sizes), steps, t, tw, lat, lat + extra, True)
            - ring_pass(tuple(sizes), steps, t, tw, lat, lat + extra, False))
    assert ring >= nccl_ring_net_hops(op, tuple(sizes)) * tw * (1 - 1e-9) - 1e-12
    chain = (chain_pass(classes, chunks, t, tw, lat, lat + extra, True)
             - chain_pass(classes, chunks, t, tw, lat, lat + extra, False))
    assert chain >= sum(classes) * tw * (1 - 1e-9) - 1e-12


def test_the_premises_matter():
    # writing a step slower than sending it (tw > t): a boundary rank's own sends then wait
    # for its writes and the fill exceeds one send per hop; with 2 buffered steps instead of
    # NCCL's 8 the credits bind (the closed forms assume neither)
    sizes, steps = (2, 2, 2, 2), 14
    h = nccl_ring_net_hops("all-reduce", sizes)
    slow = (ring_pass(sizes, steps, 0.5, 3.0, 0.5, 2.0, True)
            - ring_pass(sizes, steps, 0.5, 3.0, 0.5, 2.0, False))
    assert slow > h * 3.0 * (1 + 1e-6)
    sizes, steps = (4, 1, 1, 3), 16
    h = nccl_ring_net_hops("all-reduce", sizes)
    assert (ring_pass(sizes, steps, 1.0, 0.9, 0.5, 3.0, True)
            - ring_pass(sizes, steps, 1.0, 0.9, 0.5, 3.0, False)) == pytest.approx(h * 0.9)
    tight = (ring_pass(sizes, steps, 1.0, 0.9, 0.5, 3.0, True, credits=2)
             - ring_pass(sizes, steps, 1.0, 0.9, 0.5, 3.0, False, credits=2))
    assert tight > h * 0.9 * (1 + 1e-6)


def _walk_depth(tree):
    # hops from the deepest node to the root, walking the parents
    best = 0
    for r in range(len(tree)):
        hops, x = 0, r
        while tree[x][0] != -1:
            x, hops = tree[x][0], hops + 1
        best = max(best, hops)
    return best


@settings(max_examples=200, deadline=None)
@given(hops=st.integers(1, 10), chunks=st.integers(1, 12), t=st.floats(0.01, 3.0),
       tw=st.floats(0.0, 3.0), lat=st.floats(0.05, 3.0))
def test_chain_fill_at_the_bottleneck_is_the_faster_stage_per_hop(hops, chunks, t, tw, lat):
    # session 17 (lead: let the simulation decide): against a cut-through pass whose step is
    # the slower of the write and the send (the schedule's bottleneck, which a bandwidth term
    # like NVLS-tree's min(in-switch, NICs) already charges), a chain of network hops that
    # writes each chunk whole and then sends it gains exactly the faster of the two per hop,
    # whichever is slower (with t as the reference step, tw > t gives only a lower bound: above)
    sf = chain_pass([True] * hops, chunks, t, tw, lat, lat, True)
    ct = chain_pass([True] * hops, chunks, max(t, tw), 0.0, lat, lat, False)
    assert sf - ct == pytest.approx(hops * min(t, tw), rel=1e-9, abs=1e-12)


@settings(max_examples=40, deadline=None)
@given(servers=st.integers(2, 9), gpus=st.sampled_from([2, 4, 8]),
       chip=st.sampled_from(["h100", "gb200", "b200"]),
       release=st.sampled_from(["2.19.4", "2.21.5", "2.26.6", "2.30.7"]),
       log2n=st.integers(3, 34), chunks=st.integers(1, 12), lat=st.floats(0.05, 3.0))
def test_nvls_tree_fill_is_the_chains_on_its_network_path(servers, gpus, chip, release, log2n,
                                                          chunks, lat):
    # session 17: NVLS-tree's heads relay a chunk up the heads' double binary tree and down
    # again over the network, every hop a whole Simple send (all_reduce.h NVLS_TREE; net.cc):
    # the simulated chain of those hops (the deeper tree's), each writing the chunk at the
    # node's in-switch rate (every channel's heads at once) and sending it at the NIC share,
    # gains exactly the model's fill over its cut-through pass at the slower stage
    import math

    from analysis import _runtime_cost as rc
    from analysis._collectives import _GroupView, _resolve_ranks
    from fabric import runtime
    f = built(f"rail:servers={servers},gpus={gpus},nvls=1,chip={chip}")
    nodes, idx = _resolve_ranks(f, list(f.endpoints))
    view = _GroupView(f, "all-reduce", nodes, idx, None, None, True)
    rt = runtime(f"nccl@{release}")
    n = 1 << log2n
    heads = min(gpus, view.nics_per_node)
    per_byte = view.node_transfer("in-switch", "all-reduce")[0].per_byte
    fill = rc.nvls_tree_net_fill(rt, view, n, heads, per_byte)
    hops = 2 * max(_walk_depth(t) for t in rc.nccl_dtree(servers))
    channels, chunk = rc.nvls_tree_chunking(rt, view, n, heads)
    if rt.split["rule"] == 0:
        # 2.18-2.19 split NVLS-tree inside the kernel: channel bid takes the bid-th block of
        # heads x chunk of each loop (all_reduce.h NVLS_TREE); the loop, channel by channel
        block, loop = heads * chunk, channels * heads * chunk
        busiest = max(sum(max(0, min(block, n - g - b * block)) for g in range(0, n, loop))
                      for b in range(channels))
    else:
        busiest, _ = rc.nccl_channel_split(rt, "all-reduce", "Simple", n, view.p, channels,
                                           channels)
    wire = min(chunk, 16 * math.ceil(math.ceil(busiest / heads) / 16))
    nics = max(1, min(view.nics_per_node, gpus))
    send = wire * math.ceil(channels * heads / nics) / view.nic_bandwidth
    write = channels * heads * wire * per_byte
    sf = chain_pass([True] * hops, chunks, send, write, lat, lat, True)
    ct = chain_pass([True] * hops, chunks, max(send, write), 0.0, lat, lat, False)
    assert fill > 0
    assert fill == pytest.approx(sf - ct, rel=1e-9)
