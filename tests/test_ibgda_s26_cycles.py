"""Session 26 (ibgda): an exchange kernel's cycle counts are one table per phase
(``ExchangeKernel.cycles``: name -> cycles for the dispatch, and for the combine) with one
registry of what each name is and which chain steps charge it (``fabric._exchange._CYCLE_COUNTS``),
instead of one dataclass field per count.

The property checks the registry's steps against a reference written out here from the
formulas the chain charged before (one field per count): for every kernel that carries counts,
drawn values in each phase and drawn call arguments, a chain prices exactly the reference's
cycles more than the same kernel without its cycle steps."""
import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fabric import EXCHANGE_LATENCY, SpecError, exchange_kernel
from fabric._exchange import _CYCLE_COUNTS, _CYCLE_STEPS


def _reference(step, value, kw, rows):
    """The cycles the chain step ``step`` charges for the phase's count ``value`` (the
    formulas of the fields before session 26, fabric/_exchange.py at b346d99)."""
    ls = kw["loadstore"]
    further = max(kw["serial_copies"] - 1, 0)

    def per_payload():
        return value[0] + value[1] * max(rows - 1.0, 0.0)

    return {
        "put_round_cycles": lambda: kw["put_rounds"] * value if ls else 0,
        "walk_cycles": lambda: kw["walk_slots"] * value,
        "walk_wrap_cycles": lambda: kw["walk_wraps"] * value,
        "walked_token_cycles": lambda: kw["walked_tokens"] * value if ls else 0,
        "walk_token_cycles": lambda: kw["walk_tokens"] * value,
        "loadstore_send_cycles": lambda: value if ls else 0,
        "further_wave_send_cycles": lambda: kw["further_waves"] * value if ls else 0,
        "loadstore_count_cycles": lambda: value if ls else 0,
        "reduce_pass_cycles": lambda: kw["reduce_loads"] // kw["slots"] * value,
        "reduce_cycles": lambda: kw["reduce_loads"] * value,
        "remote_signal_cycles": lambda: kw["remote_signals"] * value,
        "posted_copy_cycles": lambda: kw["posted_copies"] * value,
        "count_pass_cycles": lambda: 0 if ls else kw["count_passes"] * value,
        "claim_cycles": lambda: kw["slots"] * value,
        "prepare_cycles": lambda: value,
        "release_cycles": lambda: value,
        "sanitize_cycles": lambda: value,
        "lane_pass_cycles": lambda: (-(-kw["ep"] // 32) - 1) * value,
        "walk_token_round_cycles": lambda: kw["walk_token_rounds"] * value,
        "payload_cycles": lambda: (kw["payloads"] * per_payload()
                                   + value[2] * max(kw["rounds"] - kw["payloads"], 0) + value[3]),
        "small_payload_cycles": per_payload,
        "copy_cycles": lambda: value[0],
        "further_copy_cycles": lambda: further * (value[0] + value[1]),
        "stage_round_cycles": lambda: kw["stage_rounds"] * value,
        "further_stage_round_cycles": lambda: further * kw["stage_rounds"] * value,
        "loadstore_stage_round_cycles": lambda: kw["stage_rounds"] * value if ls else 0,
    }[step]()


_STEPS = {"put_round_cycles", "walk_cycles", "walk_wrap_cycles", "walked_token_cycles",
          "walk_token_cycles", "loadstore_send_cycles", "further_wave_send_cycles",
          "loadstore_count_cycles", "reduce_pass_cycles", "reduce_cycles",
          "remote_signal_cycles", "posted_copy_cycles", "count_pass_cycles", "claim_cycles",
          "prepare_cycles", "release_cycles", "sanitize_cycles",
          "lane_pass_cycles", "walk_token_round_cycles", "payload_cycles", "small_payload_cycles",
          "copy_cycles", "further_copy_cycles", "stage_round_cycles",
          "further_stage_round_cycles", "loadstore_stage_round_cycles"}
_KERNELS = ("pplx", "one-sided", "one-sided-1.3", "deepep-low-latency", "ncclep-low-latency")


def test_the_reference_names_registered_steps_and_every_count_has_one():
    assert _STEPS <= set(_CYCLE_STEPS)
    assert {_CYCLE_STEPS[s][0] for s in _STEPS} == set(_CYCLE_COUNTS)


def _draw_value(draw, name):
    parts = _CYCLE_COUNTS[name].parts
    if parts:
        return tuple(draw(st.integers(0, 3000)) for _ in parts)
    return draw(st.integers(1, 3000))


@st.composite
def _case(draw):
    name = draw(st.sampled_from(_KERNELS))
    kern = exchange_kernel(name)
    tables = tuple({n: _draw_value(draw, n) for n, _ in table} for table in kern.cycles)
    kw = {"ranks": draw(st.integers(1, 8)), "rounds": draw(st.integers(1, 6)),
          "ep": draw(st.sampled_from([1, 8, 33, 128])),
          "remote_signals": draw(st.integers(0, 12)), "serial_copies": draw(st.integers(0, 9)),
          "posted_copies": draw(st.integers(0, 9)), "walk_slots": draw(st.integers(0, 300)),
          "walk_tokens": draw(st.integers(0, 9)), "reduce_loads": draw(st.integers(0, 64)),
          "loadstore": draw(st.booleans()), "put_rounds": draw(st.integers(0, 30)),
          "stage_rounds": draw(st.integers(0, 4)), "walked_tokens": draw(st.integers(0, 200)),
          "further_waves": draw(st.integers(0, 3)), "walk_token_rounds": draw(st.integers(0, 9)),
          "payloads": draw(st.integers(1, 2)), "slots": draw(st.integers(1, 8)),
          "walk_wraps": draw(st.integers(0, 31)), "count_passes": draw(st.integers(0, 12)),
          "l2_flushed": draw(st.booleans())}
    kw["rounds"] = max(kw["rounds"], kw["payloads"])
    return name, tables, kw, draw(st.sampled_from(["hopper", "blackwell"]))


@settings(max_examples=60, deadline=None)
@given(_case())
def test_each_phase_charges_its_own_table_as_the_reference(case):
    name, tables, kw, arch = case
    base = exchange_kernel(name)
    kern = dataclasses.replace(base, cycles=tables)

    def bare_of(chain):
        return tuple(tuple(s for s in ph if not (s[0] == "cycle" and s[1] in _STEPS))
                     for ph in chain)
    kept = tuple({n: v for n, v in t.items() if not any(
        _CYCLE_STEPS[s][0] == n for s in _STEPS)} for t in tables)
    bare = dataclasses.replace(base, cycles=kept, chain=bare_of(base.chain),
                               interleaved_chain=bare_of(base.interleaved_chain))
    cycle = EXCHANGE_LATENCY[arch]["cycle"].value
    for phase in (0, 1):
        for interleaved in (False, True):
            chain = (kern.interleaved_chain if interleaved else kern.chain)[phase]
            rows = kern.pointer_loads(kw["ranks"], arch)
            want = sum(_reference(s[1], tables[phase][_CYCLE_STEPS[s[1]][0]], kw, rows)
                       for s in chain if s[0] == "cycle" and s[1] in _STEPS)
            got = (kern.chain_latency(phase, arch, interleaved=interleaved, **kw)[0]
                   - bare.chain_latency(phase, arch, interleaved=interleaved, **kw)[0])
            assert got == pytest.approx(want * cycle, rel=1e-9, abs=1e-15), (phase, interleaved)


def test_a_count_in_one_phase_is_not_the_other_phases():
    """The combine's chain step reads the combine's table: the one-sided dispatch's slot claims
    do not price a combine step, and pplx's staging rounds cost 89 cycles in the dispatch, 35 in
    the combine."""
    k = exchange_kernel("one-sided")
    with pytest.raises(ValueError, match="claim_cycles needs claim_cycles .* in the combine's"):
        dataclasses.replace(k, chain=(k.chain[0], k.chain[1] + (("cycle", "claim_cycles"),)))
    ok = dataclasses.replace(k, chain=(k.chain[0], k.chain[1] + (("cycle", "claim_cycles"),)),
                             cycles=(dict(k.cycles[0]), {**dict(k.cycles[1]), "claim_cycles": 7}))
    cyc = EXCHANGE_LATENCY["hopper"]["cycle"].value
    kw = {"ranks": 2, "rounds": 1, "slots": 4}
    assert (ok.chain_latency(1, "hopper", **kw)[0] - k.chain_latency(1, "hopper", **kw)[0]
            == pytest.approx(4 * 7 * cyc, rel=1e-9))
    assert ok.chain_latency(0, "hopper", **kw)[0] == k.chain_latency(0, "hopper", **kw)[0]
    p = exchange_kernel("pplx")
    assert (p.cycle("stage_cycles", 0), p.cycle("stage_cycles", 1)) == (89, 35)
    kw = {"stage_rounds": 3}
    for phase, step, cycles in ((1, "stage_round_cycles", 35),):
        one = p.with_cycles(phase, stage_cycles=cycles + 1)
        assert (one.chain_latency(phase, "hopper", 0, 0, **kw)[0]
                - p.chain_latency(phase, "hopper", 0, 0, **kw)[0]) == pytest.approx(3 * cyc,
                                                                                    rel=1e-9)
    assert p.with_cycles(1, stage_cycles=99).chain_latency(
        0, "hopper", 0, 0, loadstore=True, interleaved=True, **kw)[0] == p.chain_latency(
        0, "hopper", 0, 0, loadstore=True, interleaved=True, **kw)[0]


def test_tables_are_kept_sorted_without_empty_counts():
    k = exchange_kernel("deepep-low-latency")
    same = dataclasses.replace(k, cycles=((("send_cycles", 478), ("count_cycles", 165),
                                           ("claim_cycles", 0)), {}))
    assert same == k and same.cycles == ((("count_cycles", 165), ("send_cycles", 478)), ())
    assert k.with_cycles(0, send_cycles=478) == k
    assert k.cycle("payload_cycles", 0) == () and k.cycle("claim_cycles", 1) == 0


def test_parameters_show_one_value_or_dispatch_plus_combine():
    p = {q.name: q for q in exchange_kernel("pplx").parameters()}
    assert p["pplx.stage_cycles"].value == "89+35"          # the phases differ
    assert p["pplx.post_cycles"].value == 1789              # both phases 1,789
    assert p["pplx.copy_cycles"].value == "206+77+208"      # one phase, three parts
    assert all(q.unit == "cycles" for n, q in p.items() if n.endswith("_cycles"))
    names = {n for t in exchange_kernel("pplx").cycles for n, _ in t}
    assert {n for n in p if n.endswith("_cycles")} == {f"pplx.{n}" for n in names}


def test_bad_tables_are_refused_by_name():
    k = exchange_kernel("one-sided")
    with pytest.raises(ValueError, match="cycles must be a \\(dispatch, combine\\) pair"):
        dataclasses.replace(k, cycles=({"claim_cycles": 125},))
    with pytest.raises(ValueError, match="the dispatch's cycles: unknown cycle count 'clam_cycles'"):
        k.with_cycles(0, clam_cycles=125)
    # session 38: a list is a wrong kind (a TypeError, STYLE)
    with pytest.raises(TypeError, match="the combine's cycles must be \\(name, cycles\\) pairs"):
        dataclasses.replace(k, cycles=(k.cycles[0], [("prepare_cycles", 294)]))
    with pytest.raises(ValueError, match="the dispatch's cycles name claim_cycles twice"):
        dataclasses.replace(k, cycles=((("claim_cycles", 1), ("claim_cycles", 2)), k.cycles[1]))
    with pytest.raises(ValueError, match="payload_cycles must be \\(\\) or four ints"):
        k.with_cycles(0, payload_cycles=(1, 2))
    with pytest.raises(SpecError, match="unknown cycle count 'walk'"):
        k.cycle("walk", 0)


def test_a_phase_is_0_or_1_and_a_mapping_is_a_table():
    k = exchange_kernel("pplx")
    for bad in (2, -1, True, 1.0, "combine", None):
        # a phase of the wrong kind is a TypeError, 2 or -1 a SpecError (session 31)
        error = SpecError if type(bad) is int else TypeError
        with pytest.raises(error, match="phase must be 0 \\(dispatch\\) or 1 \\(combine\\)"):
            k.cycle("stage_cycles", bad)
        with pytest.raises(error, match="phase must be 0 \\(dispatch\\) or 1 \\(combine\\)"):
            k.with_cycles(bad, stage_cycles=1)
    import types
    proxy = types.MappingProxyType(dict(k.cycles[1]))
    assert dataclasses.replace(k, cycles=(k.cycles[0], proxy)) == k
