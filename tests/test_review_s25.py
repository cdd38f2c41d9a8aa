"""Review, session 25: lasting checks of what review re-derived on its own reading.

* The one-sided dispatch's slot claims (moe, train 1): flashinfer 579435f9
  moeA2ADispatchKernel<BlockPolicy, 8>, review's own sm_90a build (session 24's flags with
  -gencode compute_90a,sm_90a) and session 24's sm_100a build, walked by review's own walker
  (an explicit table of each slot's already-copied branch, the chain's trips and constant steps
  dropped, other constant loads at const_l1 where exposed) over all 128 patterns of new and
  repeated destination ranks: sm_90a 1,006.7 (every slot a new rank) - 1,031.7 cycles, sm_100a
  1,063.4 - 1,161.4. The least over both builds, over the 8 slots: 125 cycles a slot.
* The one-sided dispatch's payload loop (moe, train 2), the same builds, review's own branch
  tables: sm_100a first payload 463.9 (one valid slot) / 638.9 (eight), each further payload
  346 + 25 a pointer row after the first, each further round 97; sm_90a 438.9 / 616.9, each
  further payload 333 (one or two valid slots: Hopper loads slots 0 and 1's rows together) /
  385 / 511, each further round 100. The least of each term: (333, 25, 97, 105), 105 being the
  first payload's extra on sm_90a (438.9 - 333, its terminal BAR.SYNC's 6 stall cycles in).
* The one-sided combine's staging kernel (moe, train 2): moeA2APrepareCombineKernel<BlockPolicy>
  on sm_90a, block 0 thread 0, the 16-B path: 294.4 + 34 a round after the first: 294.
* pplx's count loop (ibgda, train 1, review S24-R4): 391 stall cycles on the NVLink-peer path,
  less 12 under the index load and 4 + 7 under the two waited peer-table LDCs, each charged
  const_l1: 368 + 2 x const_l1 a walked expert (tests/test_review_s24.py pins the 368).
* The router gate GEMM tables (models, train 2): every (256, 7168) bfloat16 row of
  aiconfigurator 095f58a5's b200_sxm and h200_sxm gemm/trtllm/1.2.0rc5/gemm_perf.parquet
  (74 and 21 rows, all kernel_source torch_flow) read by review with pyarrow; a few pinned.
* TensorRT-LLM's MLA generation op at 64 and 32 heads a GPU (models, train 2): all six tables'
  181 points equal aiconfigurator 095f58a5's generation_mla_perf.parquet rows (tp_size 2 and 4)
  to six significant digits; H200's 32-head table holds one outlier (batch 4, step 63: 1.06 ms
  against ~0.027 around it), which the lower envelope leaves unused.
* An RDMA atomic after writes on one queue pair (ibgda, train 2; lead's decision 14:31):
  NVSHMEM 3.2.5's put-with-signal writes its RDMA-write WQEs and then the signal's atomic WQE
  on one RC queue pair with no fence bit (valgur/NVSHMEM-archive 6d8ab15 ibgda_device.cuh),
  two RC queue pairs a peer by default (env_defs.h); DeepEP de8cfca's low-latency count and
  flag are one atomic per queue pair after its writes (internode_ll.cu l.154/221, 425/440).
  By hand: pplx's EP16 128-token dispatch sends 128 x 8 / 16 = 64 messages to each remote
  rank, 32 on the busiest queue pair, each waiting one round trip (two network steps).
* route and latency apply one span rule (audit, train 2; review S25-R1).
"""

import dataclasses

import pytest

import topologies
from analysis import moe_exchange
from fabric import EXCHANGE_KERNELS, EXCHANGE_LATENCY, exchange_kernel
from fabric._exchange import EXCHANGE_SYNC

#: review's walk (session 25): (least, most) cycles beyond the chain's loads over the 128
#: patterns, per build
_CLAIM_WALK = {"sm_90a": (1006.7, 1031.7), "sm_100a": (1063.4, 1161.4)}


def test_s25_the_slot_claims_pay_the_least_walked_cycles_a_slot():
    least = min(lo for lo, _ in _CLAIM_WALK.values())
    for name in ("one-sided", "one-sided-1.3"):
        kern = EXCHANGE_KERNELS[name]
        assert kern.cycle("claim_cycles", 0) == int(least // 8) == 125
        # once a token's dispatch, on the dispatch chain only
        assert sum(ph.count(("cycle", "claim_cycles")) for ph in kern.chain[:1]) == 1
        assert all(("cycle", "claim_cycles") not in ph for ph in kern.chain[1:])
    src = dict(EXCHANGE_KERNELS["one-sided"].sources)["claim_cycles"]
    for text in ("579435f9", "sm_90a", "sm_100a", "1,006.7", "1,063.4", "cuobjdump"):
        assert text in src


def test_s25_a_slot_claim_adds_its_cycles_for_each_top_k_slot():
    kern = exchange_kernel("one-sided")
    one = dataclasses.replace(kern, name="one-sided-one-cycle-claims").with_cycles(0, claim_cycles=1)
    cycle = EXCHANGE_LATENCY["blackwell"]["cycle"].value
    for ranks, slots in ((1, 1), (2, 4), (8, 8)):
        kw = {"ranks": ranks, "rounds": 1, "slots": slots}
        with_claims = kern.chain_latency(0, "blackwell", **kw)[0]
        least = one.chain_latency(0, "blackwell", **kw)[0]
        assert with_claims - least == pytest.approx(slots * 124 * cycle, rel=1e-9)
        # the combine claims nothing
        assert (kern.chain_latency(1, "blackwell", **kw)[0]
                == one.chain_latency(1, "blackwell", **kw)[0])


#: review's payload-loop walks (session 25): per build (first payload with one valid slot, a
#: further payload with one, a pointer row after the first, a further round)
_PAYLOAD_WALK = {"sm_100a": (463.9, 346, 25, 97), "sm_90a": (438.9, 333, 26, 100)}


def test_s25_the_payload_loop_and_the_staging_kernel_pay_the_least_walked_terms():
    kern = EXCHANGE_KERNELS["one-sided"]
    least = tuple(min(w[i] for w in _PAYLOAD_WALK.values()) for i in (1, 2, 3))
    once = min(w[0] - w[1] for w in _PAYLOAD_WALK.values())
    assert kern.cycle("payload_cycles", 0) == (*map(int, least), int(once)) == (333, 25, 97, 105)
    assert kern.cycle("prepare_cycles", 1) == int(294.4) == 294
    for field, texts in (("payload_cycles", ("463.9", "438.9", "333", "0x1d90", "0x1840")),
                         ("prepare_cycles", ("294.4", "0x0df0"))):
        src = dict(kern.sources)[field]
        assert all(t in src for t in texts), (field, texts)


def test_s25_the_mla_op_at_64_and_32_heads_is_aiconfigurators():
    from analysis import _mla_measured as mla

    # (table, batch, step): milliseconds of the parquet rows (review's pyarrow read)
    for name, b, step, ms in (("TRTLLM_B200_MLA_GENERATION_BF16_64_HEADS", 1, 1, 0.010752),
                              ("TRTLLM_B200_MLA_GENERATION_BF16_64_HEADS", 1024, 16383, 3.40621),
                              ("TRTLLM_B200_MLA_GENERATION_FP8KV_64_HEADS", 512, 32767, 1.63169),
                              ("TRTLLM_H200_MLA_GENERATION_BF16_32_HEADS", 4, 63, 1.06212),
                              ("TRTLLM_H200_MLA_GENERATION_BF16_32_HEADS", 4, 127, 0.0272693)):
        table = getattr(mla, name)
        assert dict(table[b])[step] == ms
        assert sum(len(v) for v in table.values()) == 181


def test_s25_the_router_gemm_rows_are_aiconfigurators():
    from analysis._gemm_measured import TRTLLM_B200_GEMM_BF16, TRTLLM_H200_GEMM_BF16

    b200 = dict(TRTLLM_B200_GEMM_BF16[(256, 7168)])
    h200 = dict(TRTLLM_H200_GEMM_BF16[(256, 7168)])
    assert (len(b200), len(h200)) == (74, 21)
    # milliseconds, as the parquet rows hold them (review's pyarrow read)
    for table, m, ms in ((b200, 1, 0.00544213), (b200, 17, 0.00550187), (b200, 49, 0.0070944),
                         (b200, 4353, 0.0142304), (b200, 32768, 0.099776),
                         (h200, 1, 0.00597973), (h200, 256, 0.00776747),
                         (h200, 8192, 0.0435275)):
        assert table[m] == pytest.approx(ms, rel=1e-6)


def test_s25_atomics_after_writes_on_one_queue_pair_by_hand():
    pplx, deepep = exchange_kernel("pplx"), exchange_kernel("deepep-low-latency")
    assert (pplx.qp_signals, pplx.qp_per_peer) == (("each", "each"), 2)
    assert deepep.qp_signals == ("last", "last")
    assert exchange_kernel("one-sided").qp_atomics(0, 64.0) == 0
    messages = 128 * 8 / 16                     # to each remote rank at EP16, 128 tokens
    assert pplx.qp_atomics(0, messages) == 32
    f = topologies.build("rail:servers=2,gpus=8,links=18,nic=ib-ndr,chip=h100")
    kw = {"kernel": "pplx", "dispatch_bytes": 1 + 4 / 128, "combine_bytes": 2,
          "routing": "uniform"}
    on = moe_exchange(f, "deepseek-v3", 128, 16, **kw)
    off = moe_exchange(f, "deepseek-v3", 128, 16, adaptive_routing=False, **kw)
    trip = 2 * EXCHANGE_SYNC["network"].value
    # and the queue pair's own 32 writes at the NIC's 47 GB/s (session 32)
    assert on.dispatch_phase.queue_pair == pytest.approx(32 * trip + 32 * on.dispatch_bytes
                                                         / 47e9, rel=1e-12)
    assert on.dispatch_phase.bottleneck == "queue pair"
    assert off.dispatch_phase.queue_pair == 0.0
    assert on.dispatch > off.dispatch


def test_s25_r1_route_and_latency_refuse_the_same_span():
    from fabric import AddressPlan, TranslationError, Window, access_latencies, access_to

    f = topologies.build("torus:2x2,chip=h100,hosts=2")
    page = 4096
    plan = dataclasses.replace(f.address_plan or AddressPlan(), hbm_bytes=8 * page,
                               layout="packed", default_windows=False, windows=tuple(
                                   Window(h, (1 << 40) + k * (1 << 30), size=2 * page,
                                          target=c, page_size=page, name=f"w{h}-{c}")
                                   for h in f.host_domains for k, c in enumerate(f.endpoints)))
    f = f.replace(address_plan=plan)
    assert access_to(f, "chip0", "chip3", size=2 * page).size == 2 * page
    access_latencies(f, size=2 * page)
    for call in (lambda: access_to(f, "chip0", "chip3", size=2 * page + 1),
                 lambda: access_latencies(f, size=2 * page + 1)):
        with pytest.raises(TranslationError, match="runs past the end of window"):
            call()
