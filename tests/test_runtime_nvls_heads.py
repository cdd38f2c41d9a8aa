"""The busiest head inside an NCCL NVLS channel (session 19): a channel's last, partial loop
gives its heads uneven shares (src/device/all_reduce.h), and the rank of the largest share
carries the block plus that share on its links."""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import topologies
from analysis import cost
from analysis._runtime_cost import nvls_head_load
from fabric import NCCL_RELEASE_DATES, runtime

RELEASES = sorted(NCCL_RELEASE_DATES, key=lambda v: tuple(map(int, v.split("."))))


def _align(release):
    # the last chunk's alignment per head, read at each tag: whole chunks (2.18-2.19 loop),
    # NCCL_SIMPLE_ALIGNMENT 4096 B (2.20-2.21 computeCollLastChunkInfo), 16 B (2.22.3
    # all_reduce.h), 16384 B (2.23.4 on)
    v = tuple(map(int, release.split(".")))
    return 0 if v < (2, 20, 0) else 4096 if v < (2, 22, 0) else 16 if v < (2, 23, 0) else 16384


def _rank_loads(nbytes, heads, chunk, align):
    """Every rank's link bytes (one direction) over the channel's loops, from the kernel's
    per-head offsets: in each loop a rank carries the loop's bytes (the switch reads its data
    for every head and writes every head's result) plus what its own head reduces."""
    return _tree_loads(nbytes, heads, chunk, align)[0]


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(RELEASES), st.integers(2, 32), st.sampled_from([2**14, 2**15, 2**16, 2**17]),
       st.integers(1, 2**24))
def test_head_load_is_the_busiest_ranks_links_brute_force(release, heads, chunk, nbytes):
    want = max(_rank_loads(nbytes, heads, chunk, _align(release))) / (1 + 1 / heads)
    got = nvls_head_load(runtime(f"nccl@{release}"), nbytes, heads, chunk)
    assert got == pytest.approx(want, rel=1e-12)
    assert got >= nbytes * (1 - 1e-12)      # never below the even split


def test_the_azure_h100_16k_row_runs_on_one_head():
    # NCCL 2.18.5, 8 H100, 16 KiB all-reduce (azure-h100-nvls-ar-16k): the chunk is cut to
    # 16 KiB, so the whole message is channel 0's first block and head 0's one chunk; rank 0's
    # links carry 16 + 16 KiB where an even split over 8 heads would carry 18 KiB: the
    # transfer and the fill (3 x the iteration) run 32 / 18 as long as before
    f = topologies.build("dgx-h100")
    rt = "nccl@2.18.5"
    n = 2**14
    r = cost(f, "all-reduce", n, algorithm="in-switch", runtime=rt)
    big = cost(f, "all-reduce", 2**33, algorithm="in-switch", runtime=rt)
    per_byte = (big.time - big.fixed) / (2**33 + 2 * 16 * 8 * 2**17)
    assert r.time - r.fixed == pytest.approx(3 * 16 * (2 * n / (9 / 8)) * per_byte, rel=1e-6)
    assert runtime(rt).nvls["head_align"] == 0


# -- NVLS-tree at its busiest head (session 20) ---------------------------------------------


def _tree_align(release):
    # NVLS_TREE's last chunk per head, read at each tag: whole chunks (2.18-2.19 kernel
    # offsets), 4096 B (2.20-2.21 computeCollLastChunkInfo), 16 B (the kernel, from 2.22.3)
    v = tuple(map(int, release.split(".")))
    return 0 if v < (2, 20, 0) else 4096 if v < (2, 22, 0) else 16


def _tree_loads(nbytes, heads, chunk, align):
    """(every rank's link bytes, every head's NIC bytes) over the channel's loops from the
    kernel's per-head offsets: a rank's links carry the loop's bytes plus its own head's
    share (the switch side, as one-node NVLS); a head's NIC its share."""
    links, nics = [0] * heads, [0] * heads
    off = 0
    while off < nbytes:
        nelem = min(heads * chunk, nbytes - off)
        lc = chunk
        if nelem < heads * chunk:
            lc = chunk if not align else math.ceil(math.ceil(nelem / heads) / align) * align
        for j in range(heads):
            mine = max(0, min(lc, nelem - j * lc))
            links[j] += nelem + mine
            nics[j] += mine
        off += nelem
    return links, nics


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(RELEASES), st.integers(2, 16), st.sampled_from([2**15, 2**16, 2**17]),
       st.integers(1, 2**23))
def test_nvls_tree_head_loads_are_the_busiest_heads_brute_force(release, heads, chunk, nbytes):
    from analysis._runtime_cost import nvls_tree_head_loads
    links, nics = _tree_loads(nbytes, heads, chunk, _tree_align(release))
    switch, network = nvls_tree_head_loads(runtime(f"nccl@{release}"), nbytes, heads, chunk)
    assert switch == pytest.approx(max(links) / (1 + 1 / heads), rel=1e-12)
    assert network == pytest.approx(max(nics) * heads, rel=1e-12)
    assert min(switch, network) >= nbytes * (1 - 1e-12)    # never below the even split


def test_nvls_tree_32k_on_two_h100_nodes_rides_one_head_under_2_19():
    # NCCL 2.19.4, 2 x 8 H100, 8 heads, 32 KiB NVLS-tree all-reduce: 16 channels, chunk cut to
    # 32 KiB, so the message is channel 0's first block and head 0's whole chunk (the kernel's
    # offset (bid x nHeads + headRank) x chunkSize): head 0's NIC carries all 32 KiB where an
    # even split gives each 4 KiB (network bytes 8 x 32 KiB), its links 32 + 32 KiB against
    # 36 KiB (switch 32 KiB x 2 / 1.125). The NICs are the slower side: the bandwidth term is
    # 16 channels x 262,144 B / (8 x 49.68 GB/s NIC payload / share 1): 10.55 us, was 16 x
    # 32 KiB at the node's in-switch rate (1.87 us). Under 2.30.7 the heads split it evenly.
    from analysis._runtime_cost import nvls_tree_head_loads
    f = topologies.build("rail:servers=2,gpus=8,nvls=1,chip=h100")
    assert nvls_tree_head_loads(runtime("nccl@2.19.4"), 32768, 8, 32768) == (
        pytest.approx(65536 / 1.125), 262144)
    assert nvls_tree_head_loads(runtime("nccl@2.30.7"), 32768, 8, 32768) == (32768, 32768)
    c = cost(f, "all-reduce", 32768, runtime="nccl@2.19.4", algorithm="hierarchical")
    # the fill (nvls_tree_net_fill, unchanged): 2 network hops x min(write, send) of a chunk
    fill = 2.63808e-6
    assert c.time - c.fixed - fill == pytest.approx(16 * 262144 / (8 * 49.68461911693e9),
                                                    rel=1e-6)
