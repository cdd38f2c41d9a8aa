"""DeepEP low-latency's dispatch pays the cycles its compiled code schedules (session 24, moe).

Counted in deepseek-ai/DeepEP de8cfca's csrc/kernels/internode_ll.cu (the V1 low-latency
table's commit), dispatch<true, 3, 10, 7168> built as its setup.py does (nvcc 13.0, sm_90) and
read with cuobjdump: the stall counts between the loads the chain already charges, the same
method as pplx's counts (session 22). Per token of a block, in one load/store domain: the loop
top to x's load, the FP8 cast and the barrier to the slot atomic, the destination's address to
the heap base, to the first round: 478 cycles and four waited constant loads (send_cycles),
for the block's first token and for each later one (its waves). After the last copy's release:
the count warp's path to its release store of the count and the receiver's path to its
atomic: 165 cycles and three constant loads (count_cycles). Over the network the copies are
IBGDA puts (their own count) and none of this is charged.
"""

import dataclasses

import pytest
from moe_cycle_counts import cycles_without

import topologies
from analysis import moe_exchange
from fabric import EXCHANGE_LATENCY, exchange_kernel

_HOP = {name: p.value for name, p in EXCHANGE_LATENCY["hopper"].items()}
_FP8 = 1 + 4 / 128
_KERN = exchange_kernel("deepep-low-latency")
_NEW = {"loadstore_send_cycles", "further_wave_send_cycles", "loadstore_count_cycles"}


def _without(kern):
    """``kern`` as before session 24: no scheduled cycles, and only the constant loads it had."""
    dispatch = [s for s in kern.chain[0] if s[1] not in _NEW]
    for count, n in (("loadstore", 7), ("further_waves", 4)):
        for _ in range(n):
            dispatch.remove(("const_l1", count))
    return dataclasses.replace(kern, name=kern.name + "-s23",
                               cycles=cycles_without(kern, "send_cycles", "count_cycles"),
                               chain=(tuple(dispatch), kern.chain[1]))


def _h800(nodes):
    return topologies.build(f"rail:servers={nodes},gpus=8,links=8,nic=ib-ndr,chip=h800")


def _run(kern, nodes, ep, tokens, **kw):
    return moe_exchange(_h800(nodes), "deepseek-v3", tokens, ep, kernel=kern,
                        dispatch_bytes=_FP8, combine_bytes=2, **kw)


def test_the_counts_are_the_compiled_code_s():
    assert (_KERN.cycle("send_cycles", 0), _KERN.cycle("count_cycles", 0)) == (478, 165)
    src = dict(_KERN.sources)
    assert "de8cfca" in src["send_cycles"] and "0x22e0-0x2590" in src["send_cycles"]
    assert "0x4990-0x4ac0" in src["count_cycles"] and "0x5d80-0x5de0" in src["count_cycles"]
    names = {p.name: p for p in _KERN.parameters()}
    assert names["deepep-low-latency.send_cycles"].unit == "cycles"
    assert names["deepep-low-latency.count_cycles"].value == 165


@pytest.mark.parametrize("experts_tokens", [(256, 64), (256, 128), (256, 256)])
@pytest.mark.parametrize("flushed", [True, False])
def test_one_node_pays_the_cycles_per_wave_and_once_for_the_count(experts_tokens, flushed):
    """deepseek-v3 (256 experts): 86 blocks; 64 tokens one wave, 128 two, 256 three."""
    experts, tokens = experts_tokens
    waves = _KERN.send_waves(experts, tokens)
    assert waves == -(-tokens // 86) - 1
    new, old = (_run(k, 1, 8, tokens, l2_flushed=flushed) for k in (_KERN, _without(_KERN)))
    per_wave = _KERN.cycle("send_cycles", 0) * _HOP["cycle"] + 4 * _HOP["const_l1"]
    count = _KERN.cycle("count_cycles", 0) * _HOP["cycle"] + 3 * _HOP["const_l1"]
    assert new.dispatch_phase.chain - old.dispatch_phase.chain == pytest.approx(
        (1 + waves) * per_wave + count, rel=1e-9)
    assert new.dispatch - old.dispatch == pytest.approx((1 + waves) * per_wave + count, rel=1e-9)
    assert new.dispatch_phase.transfer == old.dispatch_phase.transfer
    assert new.dispatch_phase.local_copy == old.dispatch_phase.local_copy
    assert new.combine == old.combine


@pytest.mark.parametrize("nodes, ep, transport", [(2, 16, None), (1, 8, "rdma"), (4, 32, None)])
def test_over_the_network_nothing_moves(nodes, ep, transport):
    new, old = (_run(k, nodes, ep, 128, transport=transport) for k in (_KERN, _without(_KERN)))
    assert new.dispatch == old.dispatch and new.combine == old.combine


_NCCL = exchange_kernel("ncclep-low-latency")


def _nccl_without():
    """NCCL EP's profile before session 24: no cycles, its constant loads removed."""
    dispatch = [s for s in _NCCL.chain[0] if s[1] not in _NEW]
    for _ in range(9):
        dispatch.remove(("const_l1", "loadstore"))
    return dataclasses.replace(_NCCL, name="ncclep-s23",
                               cycles=cycles_without(_NCCL, "send_cycles", "count_cycles"),
                               chain=(tuple(dispatch), _NCCL.chain[1]))


def test_ncclep_pays_its_own_builds_cycles():
    """NCCL EP 36191590's low_latency.cu, rebuilt and walked the same way (BF16, ep_bench's
    shape): 424 cycles + 6 constant loads on a sending warp's token, 282 + 3 on the count's
    path; one wave (its grid gives every token a block), so no further-wave cycles."""
    assert (_NCCL.cycle("send_cycles", 0), _NCCL.cycle("count_cycles", 0)) == (424, 282)
    src = dict(_NCCL.sources)
    assert "36191590" in src["send_cycles"] and "0x27c0-0x2870" in src["send_cycles"]
    assert "0x8930-0x8990" in src["count_cycles"] and "de8cfca" not in src["count_cycles"]
    assert not any(s[1] == "further_wave_send_cycles" for ph in _NCCL.chain for s in ph)
    h100 = topologies.build("rail:servers=1,gpus=8,links=18,nic=ib-ndr,chip=h100")
    new, old = (moe_exchange(h100, "deepseek-v3", 128, 8, kernel=k, dispatch_bytes=2,
                             combine_bytes=2, l2_flushed=False)
                for k in (_NCCL, _nccl_without()))
    added = (_NCCL.cycle("send_cycles", 0) + _NCCL.cycle("count_cycles", 0)) * _HOP["cycle"] + 9 * _HOP["const_l1"]
    assert new.dispatch - old.dispatch == pytest.approx(added, rel=1e-9)
    assert new.combine == old.combine
    two = topologies.build("rail:servers=2,gpus=8,links=18,nic=ib-ndr,chip=h100")
    new, old = (moe_exchange(two, "deepseek-v3", 128, 16, kernel=k, dispatch_bytes=2,
                             combine_bytes=2) for k in (_NCCL, _nccl_without()))
    assert new.dispatch == old.dispatch


def test_the_row_moves_closer():
    """deepep-v1-ep8-ll-dispatch's case (one node of H800, 128 tokens, uniform): the count adds
    to a row the model misses fast (77 us measured)."""
    new, old = (_run(k, 1, 8, 128) for k in (_KERN, _without(_KERN)))
    assert old.dispatch < new.dispatch < 77e-6


def test_the_new_counts_need_their_fields():
    bare = _without(_KERN)
    for count, field in (("further_wave_send_cycles", "send_cycles"),
                         ("loadstore_count_cycles", "count_cycles")):
        chain = (bare.chain[0] + (("cycle", count),), bare.chain[1])
        with pytest.raises(ValueError, match=f"counted in {count} needs {field}"):
            dataclasses.replace(bare, name="x", chain=chain)
        dataclasses.replace(bare, name="x", chain=chain,
                            cycles=({field: 1}, ()))   # with it: accepted
    with pytest.raises(ValueError, match="count_cycles must be an int >= 0"):
        dataclasses.replace(_KERN, name="x").with_cycles(0, count_cycles=-1)
    with pytest.raises(TypeError, match="count_cycles must be an int >= 0"):   # session 31
        dataclasses.replace(_KERN, name="x").with_cycles(0, count_cycles=True)
