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
    loads = [0] * heads
    off = 0
    while off < nbytes:
        nelem = min(heads * chunk, nbytes - off)
        lc = chunk
        if nelem < heads * chunk:
            lc = chunk if not align else math.ceil(math.ceil(nelem / heads) / align) * align
        for j in range(heads):
            loads[j] += nelem + max(0, min(lc, nelem - j * lc))
        off += nelem
    return loads


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
