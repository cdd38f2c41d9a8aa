"""Tests for the symmetric heap: computed addresses, peer addresses, refusals.

Independent truth: NVSHMEM's rule (docs/sources.md s.3) written out by hand,
peer = peer heap base + (address - local heap base), and the address map's own
lookup of the computed address.
"""

import numpy as np
import pytest

import topologies
from fabric import AddressMapError, AddressPlan, NodeError, SymmetricHeap, check
from fabric._units import GB, GiB, MiB


@pytest.fixture(scope="module")
def mem():
    f = topologies.build("sd200-ultra")
    f = f.replace(address_plan=AddressPlan(heap=SymmetricHeap(16 * GiB, offset=32 * GiB)))
    return f, f.symmetric_memory


def test_address_is_computed_and_lands_on_the_rank(mem):
    f, m = mem
    assert m.stride == 1 << 36                          # owner-bits: a shift
    for rank in (0, 1, 77, 127):
        a = m.address(rank, 4096)
        assert a == (rank << 36) + 32 * GiB + 4096
        loc = f.address_map.lookup(a)
        assert (loc.owner, loc.offset) == (f"chip{rank}", 32 * GiB + 4096)
    r = np.arange(128)
    assert np.array_equal(m.addresses(r, 8), (r << 36) + 32 * GiB + 8)


def test_peer_address_by_hand(mem):
    _, m = mem
    a = m.address(3, 12345)
    for peer in (0, 3, 127):
        assert m.peer_address(a, peer) == m.bases[peer] + (a - m.bases[3])
    assert m.locate(a) == (3, 12345)


@pytest.mark.parametrize("address", [
    (3 << 36) + 32 * GiB - 1,                          # just below rank 3's heap
    (3 << 36) + 48 * GiB,                              # one past its end
    0,
])
def test_outside_the_heap_has_no_peer_address(mem, address):
    _, m = mem
    with pytest.raises(AddressMapError, match="no peer address"):
        m.peer_address(address, 5)


def test_bad_rank_and_offset(mem):
    _, m = mem
    with pytest.raises(NodeError):
        m.address(128, 0)
    with pytest.raises(NodeError):
        m.peer_address(m.address(0, 0), -1)
    with pytest.raises(AddressMapError, match="outside"):
        m.address(0, 16 * GiB)


def test_no_heap_no_memory():
    assert topologies.build("sd200-ultra").symmetric_memory is None


@pytest.mark.parametrize("heap, code", [
    (SymmetricHeap(16 * GiB, offset=56 * GiB), "symmetric-mismatch"),   # past 64 GB
    (SymmetricHeap(16 * GiB, offset=1 * MiB), "misaligned"),
    (SymmetricHeap(3 * MiB), "misaligned"),
    (SymmetricHeap(16 * GiB, chips={"chip5": {"offset": 2 * GiB}}), "symmetric-mismatch"),
    (SymmetricHeap(16 * GiB, chips={"chip5": {"size": 8 * GiB}}), "symmetric-mismatch"),
    (SymmetricHeap(16 * GiB, alignment=3000), "invalid"),
    (SymmetricHeap(0), "invalid"),
])
def test_bad_heaps(heap, code):
    f = topologies.build("sd200-ultra").replace(address_plan=AddressPlan(heap=heap))
    assert code in [x.code for x in check(f)]
    with pytest.raises(AddressMapError):
        _ = f.symmetric_memory


def test_packed_layout_heap_has_per_rank_bases():
    f = topologies.build("sd200-ultra").replace(address_plan=AddressPlan(
        layout="packed", alignment=GiB, heap=SymmetricHeap(2 * GiB)))
    m = f.symmetric_memory
    # 64 GB padded to 60 GiB = 64.42 GB per chip: still evenly spaced
    assert m.stride == -(-64 * GB // GiB) * GiB
    assert m.peer_address(m.address(2, 5), 9) == m.address(9, 5)
