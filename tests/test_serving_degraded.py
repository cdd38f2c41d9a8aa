"""The serving layout search on degraded fabrics: instances that leave live chips idle.

A fabric with failed chips no longer tiles into copies of every divisor-sized instance
(a 72-chip rack without one chip has 71 live chips, a prime), so the search also tries
the intact system's instance sizes the live chips still hold; a point says how many live
chips no copy uses. The reference is a brute force over every layout of those sizes
(every tensor-parallel degree, whole experts or every expert split over the instance),
generated here without the search's own rules (HBM fit, heads, experts are left to the
model to refuse).
"""

import pathlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import analysis
import topologies
from analysis import (
    candidate_layouts,
    idle_chips,
    instance_sizes,
    prefill_time,
    serving_frontier,
    serving_point,
    single_user_speed,
)
from analysis._models import load_model_toml
from fabric import ChipSpec, SpecError

SMALL = load_model_toml(pathlib.Path(__file__).parent / "data" / "model_small.toml")
B200_NODE = "switch:8,planes=2,links=9,tech=nvlink5,chip=b200"
NO_SPEC = ((0, 0.0),)
#: A chip small and slow enough that the instance size matters for the small model: its
#: weights (509 KB) need 3 chips, and reading them (1 GB/s) outweighs the collectives.
TOY = ChipSpec("toy", 250_000, 1e9, 1e12, 1e9 / 3, "test: round numbers")


@pytest.fixture(scope="module")
def node():
    return topologies.build(B200_NODE)


def _sizes(fabric):
    """Instance sizes by their definition: they tile the intact or the live chips."""
    live = fabric.n_endpoints
    intact = live + len(fabric.failures.ranks)
    return [n for n in range(1, live + 1) if any(n * c in (live, intact)
                                                 for c in range(1, intact + 1))]


def _every_layout(fabric):
    """Every (tp, dp, etp) of the search's family on ``fabric``, by brute force."""
    out = []
    for n in _sizes(fabric):
        for tp in range(1, n + 1):
            if n % tp:
                continue
            out.append(f"tp={tp},dp={n // tp}")
            if n // tp == 1 and tp > 1:
                out.append(f"tp={tp},dp=1,etp={tp}")
    return out


def _dominated_by(p, front):
    return any(q.tokens_per_s_user >= p.tokens_per_s_user * (1 - 1e-12)
               and q.tokens_per_s_gpu >= p.tokens_per_s_gpu * (1 - 1e-12) for q in front)


@settings(max_examples=8, deadline=None)
@given(st.sets(st.integers(0, 7), min_size=1, max_size=4))
def test_search_finds_the_best_layout_of_a_brute_force_around_failed_chips(failed):
    f = topologies.build(B200_NODE).without(chips=[f"chip{i}" for i in sorted(failed)])
    live = f.n_endpoints
    kw = {"isl": 64, "osl": 32, "batches": (1, 2, 4), "speculative": NO_SPEC,
          "keep_all": True, "chip": TOY}
    brute = serving_frontier(SMALL, f, layouts=_every_layout(f), **kw)
    found = serving_frontier(SMALL, f, **kw)
    # every point of every layout is matched or beaten by a point of the search's frontier
    for p in brute.all_points:
        assert _dominated_by(p, found.points), (p.layout, p.batch)
    # the fastest single user is the brute force's fastest
    assert max(p.tokens_per_s_user for p in found.all_points) == pytest.approx(
        max(p.tokens_per_s_user for p in brute.all_points), rel=1e-12)
    # every point says which live chips its copies leave idle; per-GPU counts the instance
    for p in found.all_points:
        assert 1 <= p.chips <= live and p.idle_chips == live % p.chips
        assert p.output_tokens_per_s_decode_gpu == pytest.approx(
            p.batch * p.osl / p.request_time / p.chips, rel=1e-12)


def test_nvl72_without_one_chip_offers_an_eight_chip_instance():
    # audit 18:24: 71 live chips (a prime) offered only tp=1,dp=71
    rack = topologies.build("nvl72")
    broken = rack.without(chips=["chip3"])
    lays = candidate_layouts("kimi-k2", broken)
    assert "tp=8,dp=1,etp=8" in lays and "tp=1,dp=71" in lays
    assert set(candidate_layouts("kimi-k2", rack)) - set(lays) == {"tp=1,dp=72",
                                                                   "tp=2,dp=36",
                                                                   "tp=4,dp=18",
                                                                   "tp=8,dp=9"}
    assert idle_chips(broken, 8) == 7 and idle_chips(broken, 71) == 0
    assert instance_sizes(broken) == _sizes(broken)


def test_degraded_h200_node_reaches_the_brute_force_single_user_speed():
    # a real model on a node without one chip: the brute force over every layout (those
    # that do not fit refused by serving_point) against the search's single-user speed
    f = topologies.build("hgx-h200").without(chips=["chip5"])
    su = single_user_speed("deepseek-v3", f, speculative=NO_SPEC)
    speeds = []
    for lay in _every_layout(f):
        try:
            p = serving_point("deepseek-v3", f, isl=1024, osl=1024, batch=1, layout=lay)
        except SpecError:
            continue
        speeds.append(p.tokens_per_s_user)
    assert speeds and su.tokens_per_s == pytest.approx(max(speeds), rel=1e-12)
    assert su.point.idle_chips == 7 % su.point.chips


def test_intact_fabrics_keep_the_divisors(node):
    assert instance_sizes(node) == [1, 2, 4, 8]
    # failed links change no chip count: still tiled by divisors
    assert instance_sizes(node.without(links=[("chip0", "sw0")])) == [1, 2, 4, 8]
    # six live chips of eight: the intact sizes 1, 2, 4 and the live tilings 3, 6
    assert instance_sizes(node.without(chips=["chip0", "chip7"])) == [1, 2, 3, 4, 6]
    p = serving_point("kimi-k2", node, isl=1024, osl=256, batch=8, layout="tp=8")
    assert p.idle_chips == 0


def test_explicit_layouts_report_their_idle_chips(node):
    broken = node.without(chips=["chip2"])
    p = serving_point(SMALL, broken, isl=64, osl=32, batch=4, layout="tp=4,dp=1")
    assert (p.chips, p.idle_chips) == (4, 3)
    # an explicit layout of a size the search does not try is still priced, idle reported
    q = serving_point(SMALL, broken, isl=64, osl=32, batch=4, layout="tp=1,dp=5")
    assert (q.chips, q.idle_chips) == (5, 2)
    with pytest.raises(SpecError, match="tp\\*dp=2\\*4=8 chips but the system has 7"):
        serving_point(SMALL, broken, isl=64, osl=32, batch=4, layout="tp=2,dp=4")


def test_bad_input_on_a_degraded_fabric_errors_clearly():
    f = topologies.build("hgx-h200").without(chips=["chip0", "chip1", "chip2"])
    # five H200s cannot hold Kimi K2's weights: one line naming the reason
    with pytest.raises(SpecError, match="kimi-k2 fits no layout on .*: its weights"):
        serving_frontier("kimi-k2", f, isl=1024, osl=1024, speculative=NO_SPEC)
    with pytest.raises(SpecError, match="batches must be integers >= 1"):
        serving_frontier(SMALL, f, isl=64, osl=32, batches=(0,))


def test_prefill_and_decode_cost_collectives_on_the_live_chips(node):
    broken = node.without(chips=["chip1"])
    seen = []

    class _Res:
        time = 1e-6

    def fake(fabric, op, nbytes, *, algorithm, ranks, transport, **kw):
        seen.append((op, algorithm, tuple(ranks)))
        return _Res()

    algo = {"all-reduce": "ring", "all-to-all": "pairwise"}
    prefill_time(SMALL, broken, isl=64, layout="tp=4,dp=1", collective=fake, algorithm=algo)
    assert ("all-reduce", "ring", ("chip0", "chip2", "chip3", "chip4")) in seen
    seen.clear()
    analysis.decode_step(SMALL, broken, batch=4, context=8, layout="tp=2,dp=2",
                         collective=fake, algorithm=algo)
    assert {r for _, _, r in seen} <= {("chip0", "chip2"), ("chip0", "chip2", "chip3", "chip4")}
    assert seen and all(a == algo.get(op, "auto") for op, a, _ in seen)


def test_cli_serve_on_a_degraded_node_reports_idle_chips(capsys):
    import json

    from analysis._cli import main

    args = ["serve", B200_NODE, "--model", "deepseek-r1-nvfp4", "--isl", "1024", "--osl", "256",
            "--batches", "1", "--no-speculative", "--fail-chip", "chip5", "--quiet"]
    assert main(args + ["--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["failed_chips"] == [5]
    assert all(p["idle_chips"] == 7 % p["chips"] for p in out["frontier"])
    assert any(p["idle_chips"] for p in out["frontier"])    # the 4-chip instance, 3 idle
    assert main(args) == 0
    assert "idle chips" in capsys.readouterr().out
    # a chip that is not there: one line, exit 2
    assert main([a if a != "chip5" else "chip99" for a in args]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "chip99" in err
