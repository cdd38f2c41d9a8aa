"""A pulled round's issued cycles, one count per number of valid slots (session 27, moe; lead's
decision 20:00, review S27-R1).

Sessions 24 and 26 put one count per loop in round_reads' *_min and *_full ends: the least excess
of the compiled loop's walk over the model's charges over all 128 slot patterns. But the ends
stand for one pattern each ({0} and all top-k valid, every perfect-router token at EP >= 8), and
the 1.3 round-1 count took the pointer rows' most favourable line sharing without the rows that
lie on lines read before (review S27-R1). ExchangeKernel.round_cycles holds, per (arch, top_k,
input_bytes), a round-1 and a later-round table over d = 1 .. top_k valid slots: per d the least
excess over the patterns of d or more valid slots and, where the per-rank pointer rows share
constant lines, over their placements; rounded down, 0 below zero; linear between slot counts in
the token's expected distinct ranks (round_read_latency). The walks (session 27's) are recorded here per d; the tables must be their suffix minima.
"""

import dataclasses
import itertools

import fidelity_heldout_moe
import fidelity_moe
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from analysis import moe_exchange
from fabric import EXCHANGE_LATENCY, exchange_kernel

_BW = {n: p.value for n, p in EXCHANGE_LATENCY["blackwell"].items()}
#: per (kernel, input-bytes key): the least walked excess (cycles) per number of valid slots
#: 1 .. 8, round 1 then a later round, over the patterns of exactly that many valid slots (and
#: the pointer rows' placements in 1.3's round 1)
#: (session 29: against the entries re-read as the walks' slopes, tests/test_moe_s29_blackwell.py;
#: session 27's were against the entries read by inspection)
_LEAST = {
    ("one-sided", 0): ((303.0, 247.458, 228.915, 233.271, 218.729, 201.187, 190.644, 360.0),
                       (316.0, 282.9, 279.801, 274.701, 274.601, 275.501, 275.402, 383.0)),
    ("one-sided-1.3", 0): ((430.8, 253.917, 326.829, 342.844, 362.858, 389.873, 431.283, 475.996),
                           (592.0, 535.0, 567.0, 594.0, 629.0, 672.698, 729.094, 788.792)),
    ("one-sided-1.3", 1): ((898.8, 526.6, 514.298, 646.298, 779.694, 920.09, 1162.686, 1348.082),
                           (926.0, 638.0, 625.698, 761.698, 891.094, 1031.49, 1189.886, 1375.282)),
}
_WIDTH = {0: 2, 1: 1}                      # the key -> an input width it serves


def _table(name, key):
    return next((e[3], e[4]) for e in exchange_kernel(name).round_cycles
                if e[0] == "blackwell" and e[2] == key)


@pytest.mark.parametrize("name,key", sorted(_LEAST))
def test_each_table_is_the_suffix_minimum_of_the_walks(name, key):
    """Per d the least over d or more valid slots (a lower bound for every token, never less
    for more slots), rounded down, 0 below zero; all top-k valid is the walk itself."""
    for walked, table in zip(_LEAST[(name, key)], _table(name, key)):
        assert table == tuple(max(int(min(walked[d:])), 0) for d in range(8))
        assert all(a <= b for a, b in itertools.pairwise(table))
        assert table[7] == max(int(walked[7]), 0)
        assert all(t <= w or w < 0 for t, w in zip(table, walked))


def test_no_round_reads_entry_carries_cycles_and_only_blog18_has_a_hopper_table():
    # session 28: blog18's sm_90a entry has its own table (tests/test_moe_s28_hopper.py); 1.3's
    # sm_90a loops are not walked
    for name, arches in (("one-sided", {"blackwell", "hopper"}), ("one-sided-1.3", {"blackwell"})):
        k = exchange_kernel(name)
        assert not any(n == "cycle" for e in k.round_reads for part in (e[3], e[4], e[6], e[7])
                       for n, _ in part)
        assert {e[0] for e in k.round_cycles} == arches
        p = next(p for p in k.parameters() if p.name == f"{name}.round_cycles")
        assert p.unit == "cycles" and "cuobjdump" in p.source and "session 27" in p.source.lower()
    src13 = dict(exchange_kernel("one-sided-1.3").sources)["round_cycles"]
    assert "S27-R1" in src13 and "0xf80" in src13 and "0x380" in src13


def _reference(table, rounds, distinct):
    """Cycles by hand: round 1's table once, a later round's for each further round, each at
    the distinct ranks by numpy's linear interpolation over 1 .. 8 (clamped)."""
    if rounds < 1:
        return 0.0
    d = np.arange(1, 9)
    first, later = (float(np.interp(distinct, d, t)) for t in table)
    return first + (rounds - 1) * later


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(sorted(_LEAST)), st.integers(0, 9), st.floats(0.5, 9.0),
       st.floats(0.0, 2.0))
def test_the_pull_pays_the_tables_at_its_distinct_ranks(case, rounds, distinct, late):
    """round_read_latency less the same kernel without round_cycles is the tables' cycles at
    the token's distinct ranks (any rounds, ranks, late trips); more ranks never cost less."""
    name, key = case
    k = exchange_kernel(name)
    bare = dataclasses.replace(k, round_cycles=())
    w = _WIDTH[key]
    late = min(late, len(k.late_batches(8, w, "blackwell")))
    got = (k.round_read_latency(8, w, "blackwell", rounds, distinct, late)[0]
           - bare.round_read_latency(8, w, "blackwell", rounds, distinct, late)[0])
    want = _reference(_table(name, key), rounds, distinct) * _BW["cycle"]
    assert got == pytest.approx(want, rel=1e-9, abs=1e-18)
    more = k.round_read_latency(8, w, "blackwell", rounds, distinct + 0.5, late)[0]
    assert more >= k.round_read_latency(8, w, "blackwell", rounds, distinct, late)[0] - 1e-18


@pytest.mark.parametrize("bad", [
    ("blackwell", 8, 0, (1,) * 7, (1,) * 8), ("blackwell", 8, 0, (1,) * 8, (-1,) + (1,) * 7),
    ("blackwell", 8, 0, (1,) * 8, (True,) * 8), ("blackwell", 8, 0, (1.5,) * 8, (1,) * 8),
    ("blackwell", 8, 0, [1] * 8, (1,) * 8), ("volta", 8, 0, (1,) * 8, (1,) * 8),
    ("blackwell", 8, 0, (1,) * 8)])
def test_a_bad_entry_is_refused_by_name(bad):
    with pytest.raises(ValueError, match="round_cycles"):
        dataclasses.replace(exchange_kernel("one-sided"), round_cycles=(bad,))


def test_an_entry_needs_a_pulling_combine_and_one_key_once():
    ok = ("blackwell", 8, 0, (1,) * 8, (2,) * 8)
    with pytest.raises(ValueError, match="round_cycles needs a pulling combine"):
        dataclasses.replace(exchange_kernel("pplx"), round_cycles=(ok,))
    with pytest.raises(ValueError, match="twice"):
        dataclasses.replace(exchange_kernel("one-sided"), round_cycles=(ok, ok))
    # a table alone (no round_reads entry) still prices; a top-4 token has none
    k = dataclasses.replace(exchange_kernel("one-sided"), round_reads=(), round_cycles=(ok,))
    got, used = k.round_read_latency(8, 2, "blackwell", 3, 8, 0.0)
    assert got == pytest.approx(5 * _BW["cycle"], rel=1e-12)
    assert used == (EXCHANGE_LATENCY["blackwell"]["cycle"],)
    assert k.round_read_latency(4, 2, "blackwell", 3, 4, 0.0) == (0.0, ())


def _session26(name):
    """The profile with sessions 24-26's one count in both ends of round_reads (blog18's 193 /
    242; 1.3's BF16 189 / 372 and FP8 0 / 226) for the tables (today's entries otherwise)."""
    old = {("one-sided", 0): (193, 242), ("one-sided-1.3", 0): (189, 372),
           ("one-sided-1.3", 1): (0, 226)}
    k = exchange_kernel(name)
    rows = []
    for e in k.round_reads:
        first, later = old.get((name, e[2]), (0, 0)) if e[0] == "blackwell" else (0, 0)
        add1 = (("cycle", first),) if first else ()
        add2 = (("cycle", later),) if later else ()
        rows.append((*e[:3], e[3] + add1, e[4] + add1, e[5], e[6] + add2, e[7] + add2, e[8]))
    return dataclasses.replace(k, round_reads=tuple(rows), round_cycles=())


@pytest.mark.parametrize("ep,want", [(8, 167 + 3 * 141), (16, 167 + 3 * 141),
                                     (2, -3 + 3 * (274 - 242)), (4, -3 + 3 * (274 - 242))])
def test_blog18_one_token_combines_move_by_the_tables(ep, want):
    """GB200, one BF16 token (4 rounds), perfect router: at EP >= 8 all 8 slots are valid
    (round 1 360 for 193, later 383 for 242; session 27: 320); at EP2 / EP4 two / four (190
    for 193 and 274 for 242; session 27: 193 and 214): the combine moves by exactly that, the
    dispatch not at all."""
    f = fidelity_moe.nvl72()
    kw = {"dispatch_bytes": 2, "combine_bytes": 2, "routing": "balanced"}
    new, old = (moe_exchange(f, "deepseek-v3", 1, ep, kernel=x, **kw)
                for x in (exchange_kernel("one-sided"), _session26("one-sided")))
    assert new.combine - old.combine == pytest.approx(want * _BW["cycle"], rel=1e-9, abs=1e-15)
    assert new.dispatch == old.dispatch


@pytest.mark.parametrize("width,rounds,want", [(2, 4, (475 - 189) + 3 * (788 - 372)),
                                               (1, 2, 1348 + (1375 - 226))])
def test_the_fi3697_rows_move_by_the_tables_at_all_eight_slots(width, rounds, want):
    """flashinfer PR #3697's EP32 one-token combines (TensorRT-LLM 1.3): the tables at all 8
    slots for session 26's counts (session 29's entries hold fewer loads, the tables more
    cycles); both stay fast."""
    f = fidelity_moe.nvl72()
    kw = {"dispatch_bytes": 0.5 + 1 / 16, "combine_bytes": width, "routing": "balanced"}
    new, old = (moe_exchange(f, "deepseek-v3", 1, 32, kernel=x, **kw)
                for x in (exchange_kernel("one-sided-1.3"), _session26("one-sided-1.3")))
    assert new.combine - old.combine == pytest.approx(want * _BW["cycle"], rel=1e-9)
    rid = {2: "fi3697-trtllm-ep32-bs1-bf16-combine", 1: "fi3697-trtllm-ep32-bs1-fp8-combine"}
    got, _ = fidelity_heldout_moe.CASES[rid[width]]({"gpus": 32})
    assert got < {2: 28.45, 1: 17.95}[width]
