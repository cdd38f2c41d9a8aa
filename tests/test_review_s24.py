"""Review, session 24: lasting checks of the counts this session read from compiled code.

Each count below was re-derived by review on its own build (NVSHMEM 3.2.5's
libnvshmem_device.a sm_90 cubin; DeepEP de8cfca internode_ll.cu with its setup.py's flags;
NVIDIA/nccl 36191590 contrib/nccl_ep low_latency.cu as its Makefile compiles it, -dc), with
review's own control-bit decoder, path walker and scoreboard-aware summer, from the owners'
branch decisions (session 24):

* pplx's IBGDA post (ibgda): lane 0's amo_nonfetch<unsigned long> SIGNAL_SET path, 636
  instructions, 2,054 stall cycles, less 137 under the loads session 17 priced and 128 under
  the three loads session 24 added (dev_idx, nwqes, the CQ record's address): 1,789. Review
  S24-R2: qp_type (qp+0x4) shares dev_idx's 32-B sector at 3 of the 4 alignments of a 184-B
  rcs[] entry, so a post waits for 8 L2 trips and one L1 hit, not 9 L2 trips.
* DeepEP low-latency's dispatch (moe): 496 stall cycles per token less 18 under four waited
  constant loads = 478 + 4 x const_l1; the count's path 172 less 7 = 165 + 3 x const_l1.
* NCCL EP's own build of the same kernel (moe): 489 = 424 + 6 x const_l1; 321 = 282 + 3.
* pplx's count warp's loop per walked expert (ibgda, train 2): scatterKernel<10,true,true>
  0x2690-0x2f10, 101 instructions / 391 stall cycles on the NVLink-peer branch (the least),
  less 12 under the index load: 379.
* the one-sided combine's later pulled round on Blackwell (moe, train 2; flashinfer 579435f9
  moeA2ACombineKernel<bf16, BlockPolicy, 8>, sm_100a): 421.4 / 594.1 / 635.2 / 462.5 cycles
  beyond its trips for slots {0} / {0-6} / {0-7} / {0, 7} against 158.1 / 252.2 / 314.3 /
  220.2 charged by its round_reads entry: the least excess, 242 cycles.

A count changed without a new reading fails here; so does a cycle count of an exchange kernel
that arrives without the compiled code it was read from named in its source.
"""

import re

from fabric._exchange import EXCHANGE_KERNELS, _ibgda_post

#: (kernel, field): the value review re-derived in session 24
_REDERIVED = {
    ("pplx", "post_cycles"): 1789,
    ("deepep-low-latency", "send_cycles"): 478,
    ("deepep-low-latency", "count_cycles"): 165,
    ("ncclep-low-latency", "send_cycles"): 424,
    ("ncclep-low-latency", "count_cycles"): 282,
    # session 25 (ibgda, review S24-R4): the 4 + 7 stall cycles under the loop's two waited
    # peer-table LDCs (0x2a30, 0x2bf0) are charged as two const_l1 instead: 379 - 11
    ("pplx", "count_pass_cycles"): 368,
}


def test_s24_the_counts_read_from_compiled_code_are_the_rederived_ones():
    # the count in every phase's cycle table that holds it (ExchangeKernel.cycles, session 26)
    got = {key: {EXCHANGE_KERNELS[key[0]].cycle(key[1], phase) for phase in (0, 1)} - {0}
           for key in _REDERIVED}
    assert got == {key: {value} for key, value in _REDERIVED.items()}


def test_s24_r2_an_ibgda_post_waits_for_eight_l2_trips_and_one_l1_hit():
    for count in ("remote_signals", "posted_copies"):
        steps = _ibgda_post(count)
        assert steps.count(("l2_hit", count)) == 8
        assert steps.count(("l1_hit", count)) == 1
        assert steps.count(("l2_atomic", count)) == 2


def test_s24_each_waited_constant_load_counted_is_charged_once():
    # DeepEP: four waited LDCs on the sending warp's token (first token and every further
    # wave), three on the count's path; NCCL EP's build: six and three
    def const_steps(kernel, count):
        return sum(ph.count(("const_l1", count)) for ph in EXCHANGE_KERNELS[kernel].chain)

    assert const_steps("deepep-low-latency", "loadstore") == 4 + 3
    assert const_steps("deepep-low-latency", "further_waves") == 4
    assert const_steps("ncclep-low-latency", "loadstore") == 6 + 3


def test_s24_a_cycle_count_names_the_compiled_code_it_was_read_from():
    # every Parameter in cycles of an exchange kernel: its source names the disassembler and
    # at least one SASS address (a count, read from code, not a number chosen to fit)
    counted = [p for k in EXCHANGE_KERNELS.values() for p in k.parameters()
               if p.unit == "cycles"]
    assert len(counted) >= 15
    bare = sorted(p.name for p in counted
                  if "cuobjdump" not in p.source or not re.search(r"0x[0-9a-f]{3,}", p.source))
    assert bare == []


def test_s24_a_later_pulled_round_pays_the_least_excess_of_its_compiled_loop():
    # round_reads entries: (arch, ..., first_min, first_full, first_late, later_min,
    # later_full, later_late) hold loads only since session 27; the issued cycles are
    # round_cycles' per-slot-count tables (moe, session 27: the least excess over the patterns
    # of d or more valid slots). Review's session 27 walks of this loop (perd18_rv.py: session
    # 24's rules, the model's charges without cycle steps) give per d = 1..8 the least excess
    # 263.3 228.9 224.4 218.0 216.5 216.1 214.7 320.9 (d = 1 and 8 are this docstring's {0}
    # and {0-7}: 421.4 - 158.1, 635.2 - 314.3); round 1 (session 26's walk, r1walk_rv.py at
    # the model's cycle latencies) 323.7 265.2 243.7 245.1 227.6 207.1 193.6 360.0. Session 29
    # (moe): the entry re-read as the walks' slopes (tests/test_moe_s29_blackwell.py), the same
    # walks less its charges give the per-d least below (d = 8 unchanged but for rounding)
    (entry,) = [r for r in EXCHANGE_KERNELS["one-sided"].round_reads if r[0] == "blackwell"]
    assert [s for steps in entry[3:5] + entry[6:8] for s in steps if s[0] == "cycle"] == []
    later = (316.0, 282.9, 279.801, 274.701, 274.601, 275.501, 275.402, 383.0)
    first = (303.0, 247.458, 228.915, 233.271, 218.729, 201.187, 190.644, 360.0)
    (spent,) = [r for r in EXCHANGE_KERNELS["one-sided"].round_cycles if r[0] == "blackwell"]
    for table, walked in ((spent[4], later), (spent[3], first)):
        assert table == tuple(int(min(walked[d:])) for d in range(8)), table
    assert spent[4] == (274,) * 5 + (275, 275, 383) and spent[3] == (190,) * 7 + (360,)
