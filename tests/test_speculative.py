"""Speculative decoding against hand calculation (Leviathan et al. 2023)."""

import pathlib

import networkx as nx
import numpy as np
import pytest

from analysis._decode import decode_step
from analysis._models import load_model_toml
from analysis._speculative import expected_accepted_tokens, speculative_decode, speculative_speedup
from fabric import ChipSpec, Fabric, SpecError
from fabric._units import is_real

SMALL = load_model_toml(pathlib.Path(__file__).parent / "data" / "model_small.toml")
CHIP = ChipSpec("toy", 10**9, 1e9, 1e12, 1e9 / 3, "test: round numbers")


class _Res:
    def __init__(self, time):
        self.time = time


def fake_cost(fabric, op, nbytes, *, algorithm, ranks, transport):
    """A closed-form stand-in for analysis.cost: 1 us + nbytes at 1 GB/s."""
    return _Res(1e-6 + float(np.max(np.sum(nbytes, axis=-1))) / 1e9)


@pytest.fixture
def fab():
    G = nx.complete_graph(4)
    nx.set_node_attributes(G, "chip", "kind")
    nx.set_edge_attributes(G, 1e9, "bandwidth")
    nx.set_edge_attributes(G, 1e-7, "latency")
    return Fabric.from_graph(G, chip=CHIP, name="toy4")


@pytest.mark.parametrize("k, a, expect", [
    (0, 0.7, 1.0),
    (1, 0.5, 1.5),                       # 1 + a
    (2, 0.5, 1.75),                      # 1 + a + a^2
    (4, 0.8, 1 + 0.8 + 0.64 + 0.512 + 0.4096),
    (5, 1.0, 6.0),
    (5, 0.0, 1.0),
])
def test_expected_tokens_is_a_geometric_sum(k, a, expect):
    assert expected_accepted_tokens(k, a) == pytest.approx(expect)


def test_leviathan_speedup_by_hand():
    # k=4, a=0.8, c=0.05: 3.3616 / 1.2
    assert speculative_speedup(4, 0.8, 0.05) == pytest.approx(3.3616 / 1.2)
    assert speculative_speedup(3, 0.6, 0.0) == pytest.approx(1 + 0.6 + 0.36 + 0.216)


def test_speculative_decode_by_hand(fab):
    kw = {"batch": 4, "context": 10, "layout": "tp=2,dp=2", "collective": fake_cost}
    r = speculative_decode(SMALL, fab, draft_length=3, acceptance=0.5, draft_cost=0.1, **kw)
    base = decode_step(SMALL, fab, **kw)
    verify = decode_step(SMALL, fab, tokens_per_sequence=4, **kw)
    assert r.base_time == pytest.approx(base.time)
    assert r.verify_time == pytest.approx(verify.time)
    assert verify.time >= base.time
    cycle = 3 * 0.1 * base.time + verify.time
    tokens = 1 + 0.5 + 0.25 + 0.125
    assert r.cycle_time == pytest.approx(cycle)
    assert r.tokens_per_s_user == pytest.approx(tokens / cycle)
    assert r.tokens_per_s_system == pytest.approx(4 * tokens / cycle)
    assert r.speedup == pytest.approx(tokens * base.time / cycle)
    assert r.speedup_bound == pytest.approx(4 * base.time / cycle)
    # a verification step no slower than a plain step recovers Leviathan's formula exactly
    assert r.speedup <= speculative_speedup(3, 0.5, 0.1) + 1e-12


def test_draft_time_in_seconds(fab):
    kw = {"batch": 1, "context": 10, "collective": fake_cost}
    r = speculative_decode(SMALL, fab, draft_length=2, acceptance=0.9, draft_time=1e-5, **kw)
    assert r.cycle_time == pytest.approx(2e-5 + r.verify_time)


@pytest.mark.parametrize("kw, match", [
    ({"draft_length": -1, "acceptance": 0.5, "draft_cost": 0.1}, "draft_length must be"),
    ({"draft_length": 2, "acceptance": 1.5, "draft_cost": 0.1}, "acceptance must be in"),
    ({"draft_length": 2, "acceptance": 0.5}, "exactly one of draft_time"),
    ({"draft_length": 2, "acceptance": 0.5, "draft_cost": 0.1, "draft_time": 1.0},
     "exactly one"),
    ({"draft_length": 2, "acceptance": 0.5, "draft_cost": -1}, "draft_cost must be"),
    # a bool is no cost (True read as 1), nor are nan / inf (session 14)
    ({"draft_length": 2, "acceptance": 0.5, "draft_cost": True}, "draft_cost must be"),
    ({"draft_length": 2, "acceptance": 0.5, "draft_cost": np.bool_(True)}, "draft_cost must"),
    ({"draft_length": 2, "acceptance": 0.5, "draft_cost": float("nan")}, "draft_cost must"),
    ({"draft_length": 2, "acceptance": 0.5, "draft_time": True}, "draft_time must be"),
    ({"draft_length": 2, "acceptance": 0.5, "draft_time": float("inf")}, "draft_time must"),
    ({"draft_length": True, "acceptance": 0.5, "draft_cost": 0.1}, "draft_length must be"),
    ({"draft_length": 2.0, "acceptance": 0.5, "draft_cost": 0.1}, "draft_length must be"),
    ({"draft_length": 2, "acceptance": 0.5, "draft_cost": 0.1, "tokens_per_sequence": 2},
     "tokens_per_sequence is set"),
])
def test_bad_input(fab, kw, match):
    # a draft length (a count) of the wrong kind is a TypeError (session 31), a draft cost or
    # time (a number) too (session 32)
    wrong = type(kw["draft_length"]) is not int or any(
        not is_real(kw[k]) for k in ("draft_cost", "draft_time") if k in kw)
    error = TypeError if wrong else SpecError
    with pytest.raises(error, match=match):
        speculative_decode(SMALL, fab, batch=1, context=1, collective=fake_cost, **kw)


@pytest.mark.parametrize("bad", [True, np.bool_(True), float("nan"), -0.5, float("inf"), "0.1"])
def test_leviathan_speedup_names_a_bad_draft_cost(bad):
    error = SpecError if is_real(bad) else TypeError        # STYLE's rule (session 32)
    with pytest.raises(error, match="draft_cost must be"):
        speculative_speedup(2, 0.5, bad)


def test_numpy_integers_are_draft_lengths(fab):
    """A numpy integer is a draft length (as a plain int; session 14: it was refused as
    'must be an integer'), a numpy float an acceptance and a cost."""
    kw = {"batch": 1, "context": 10, "collective": fake_cost}
    a = speculative_decode(SMALL, fab, draft_length=np.int64(2), acceptance=np.float32(0.5),
                           draft_cost=np.float64(0.1), **kw)
    b = speculative_decode(SMALL, fab, draft_length=2, acceptance=0.5, draft_cost=0.1, **kw)
    assert a == b and type(a.draft_length) is int
    assert expected_accepted_tokens(np.int32(3), 0.5) == expected_accepted_tokens(3, 0.5)
    assert speculative_speedup(np.int64(3), 0.5, np.float32(0.25)) == speculative_speedup(
        3, 0.5, 0.25)
