"""Only a Simple part's LAST slice is copied out after its bytes (session 38, runtime; session
37's Left 3: ``analysis._runtime_cost.p2p_drain`` had priced ``min(part, p2pChunkSize)`` a
part).

NCCL's ``runRecv`` walks a part one ``p2pChunkSize`` slice at a time (``ProtoSimple<1, 1>``),
copying each out once it is written, while the sender writes the next into another of the
buffer's steps: the earlier copies overlap the writes, and after the part's last byte only its
last slice, ``part - slice x floor((part - 1) / slice)``, is left. The parts are NCCL's own:
``ncclP2pPartBounds`` from 2.22 (``alignUp(divUp(bytes, parts), 4 KiB)``, the last the rest),
``calcP2pChunkSize``'s before.
"""
import pytest
from degrade import built
from p2p_groups import group_view

from analysis._runtime_cost import p2p_drain, p2p_protocol
from fabric import runtime

KiB, MiB = 1 << 10, 1 << 20


@pytest.mark.parametrize("release", ["nccl@2.21.5", "nccl@2.29.2"])
def test_a_part_of_many_slices_drains_its_last_one(release):
    # two H100s, 100 MiB: 16 parts of 6.25 MiB (calcP2pChunkSize's size before 2.22, the
    # 4 KiB-aligned sixteenth from 2.22), each 12 whole 512 KiB slices and a 256 KiB last one:
    # 16 x 256 KiB read and written at 3.35 TB/s (was 16 x 512 KiB, twice that)
    rt = runtime(release)
    view = group_view(built("dgx-h100"), "send-recv", ["chip0", "chip1"])
    assert p2p_protocol(rt, view, 100 * MiB, True) == ("Simple", 16)
    assert p2p_drain(rt, view, "send-recv", 100 * MiB) == 2 * 16 * 256 * KiB / 3.35e12


def test_the_parts_are_ncclp2ppartbounds():
    # 100 MiB + 64 KiB on 16 parts from 2.22: divUp = 6,557,696 B, already 4 KiB-aligned:
    # 16 parts of 12 slices + 256 KiB + 4 KiB (the parts' ends move by the 4 KiB); a part cut
    # equally would also be 12 slices + 260 KiB: the same here, while 100 MiB + 1 B gives the
    # first 15 parts 6,557,696 B each (the alignment's 4,095 B more than a sixteenth) and the
    # last the rest, 6,492,161 B
    rt = runtime("nccl@2.29.2")
    view = group_view(built("dgx-h100"), "send-recv", ["chip0", "chip1"])
    assert p2p_drain(rt, view, "send-recv", 100 * MiB + 64 * KiB) == (
        2 * 16 * 260 * KiB / 3.35e12)
    part = 6553600 + 4096                      # alignUp(divUp(100 MiB + 1, 16), 4 KiB)
    rest = 100 * MiB + 1 - 15 * part
    tail = part - 12 * 512 * KiB
    assert p2p_drain(rt, view, "send-recv", 100 * MiB + 1) == pytest.approx(
        2 * (15 * tail + (rest - 12 * 512 * KiB)) / 3.35e12, rel=1e-15)
