"""The serving layout search on degraded fabrics: instances that leave live chips idle.

A fabric with failed chips no longer tiles into copies of every divisor-sized instance
(a 72-chip rack without one chip has 71 live chips, a prime), so the search also tries
the intact system's instance sizes the live chips still hold; a point says how many live
chips no copy uses. The reference is a brute force over every layout of those sizes
(every tensor-parallel degree, whole experts or every expert split over the instance),
generated here without the search's own rules (HBM fit, heads, experts are left to the
model to refuse).
"""

import functools
import itertools
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
from fabric import ChipSpec, RoutingError, SpecError

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
    with pytest.raises(SpecError, match=r"batches\[0\] must be an integer >= 1"):
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
    # both attention groups all-reduce (the slowest sets the step), the exchange spans all 4
    assert {r for _, _, r in seen} == {("chip0", "chip2"), ("chip3", "chip4"),
                                       ("chip0", "chip2", "chip3", "chip4")}
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


# -- which live chips an instance takes ---------------------------------------------------

def _fabric(kind, size, failed_chips, cut):
    """A small rail cluster (``size`` GPUs per server, 3 servers) or an NVLink switch node,
    without some chips and with some chips' scale-up links cut."""
    f = topologies.build(f"rail:servers=3,gpus={size}" if kind == "rail"
                         else f"switch:{size * 2},chip=b200")
    chips = [c for c in f.endpoints if int(c[4:]) in failed_chips]
    if len(chips) == f.n_endpoints:
        chips = chips[1:]
    links = []
    for c in f.endpoints:
        if int(c[4:]) in cut and c not in chips:
            links += [(c, n) for n in f.graph[c] if not n.startswith("nic")][:1]
    return f.without(chips=chips, links=links)


def _alone(f):
    """Brute force: the live chips (positions) from which no route reaches another live chip."""
    ends = f.endpoints
    return {i for i, a in enumerate(ends)
            if not any(_reaches(f, a, b) for b in ends if b != a)}


def _usable(f, n):
    """The positions an instance of ``n`` chips can use: every live chip but one that reaches
    no other (for ``n >= 2``, while the others hold the instance)."""
    alone = _alone(f) if n >= 2 else set()
    rest = set(range(f.n_endpoints)) - alone
    return rest if len(rest) >= n else set(range(f.n_endpoints))


def _subsets_by_size(f):
    """Brute force over every set of live chips an instance of its size can use (see
    :func:`_usable`): per size, the fewest domains any set spans, and the fewest an equal set
    (the same chips in every domain it touches) spans."""
    import numpy as np

    label = [int(f.loadstore_domains[f.node_index[c]]) for c in f.endpoints]
    live = f.n_endpoints
    masks = np.arange(1, 1 << live)
    bits = (masks[:, None] >> np.arange(live)) & 1                  # every set of live chips
    onehot = np.array(label)[:, None] == np.array(sorted(set(label)))[None, :]
    counts = bits @ onehot                                          # chips per domain
    spans = (counts > 0).sum(axis=1)
    top = counts.max(axis=1)
    equal = (counts == top[:, None]).sum(axis=1) == spans           # every touched domain alike
    size = bits.sum(axis=1)
    fewest, fewest_equal = {}, {}
    for n in range(1, live + 1):
        bad = sorted(set(range(live)) - _usable(f, n))
        ok = (size == n) & (bits[:, bad].sum(axis=1) == 0 if bad else True)
        fewest[n] = int(spans[ok].min())
        if (ok & equal).any():
            fewest_equal[n] = int(spans[ok & equal].min())
    return label, fewest, fewest_equal


@functools.cache
def _most_copies(slots, d):
    """Exhaustively: the most disjoint copies of d distinct domains with one piece each."""
    best = 0
    for pick in itertools.combinations([i for i, s in enumerate(slots) if s], d):
        rest = list(slots)
        for i in pick:
            rest[i] -= 1
        best = max(best, 1 + _most_copies(tuple(sorted(rest)), d))
    return best


@settings(max_examples=25, deadline=None)
@given(st.sampled_from(["rail", "nvl"]), st.integers(2, 4),
       st.sets(st.integers(0, 11), max_size=4), st.sets(st.integers(0, 11), max_size=2))
def test_instance_chips_spans_the_fewest_domains_a_brute_force_finds(kind, size, failed, cut):
    from analysis import instance_chips

    f = _fabric(kind, size, failed, cut)
    live = f.n_endpoints
    label, fewest, fewest_equal = _subsets_by_size(f)
    for n in range(1, live + 1):
        for equal in (False, True):
            best = (fewest_equal if equal else fewest).get(n)
            if best is None:        # no set of live chips holds the instance equally
                with pytest.raises(SpecError, match="fills no set of .* domains equally"):
                    instance_chips(f, n, equal_domains=equal)
                assert idle_chips(f, n, equal_domains=equal) == live
                continue
            sel = instance_chips(f, n, equal_domains=equal)
            assert len(set(sel)) == n and set(sel) <= set(range(live))
            counts = {}
            for p in sel:
                counts[label[p]] = counts.get(label[p], 0) + 1
            assert len(counts) == best                  # no layout of fewer domains missed
            if equal:
                assert len(set(counts.values())) == 1
            # where the first n live chips already do as well (an intact fabric), they stay
            first = {}
            for p in range(n):
                first[label[p]] = first.get(label[p], 0) + 1
            usable = _usable(f, n)
            if (len(first) == best and (not equal or len(set(first.values())) == 1)
                    and usable.issuperset(range(n))):
                assert sel == tuple(range(n))
            assert usable.issuperset(sel)       # never a chip cut off, while others hold it
            # idle chips: what the most copies of the same shape leave over
            if equal:
                c = n // len(counts)
                sizes = [sum(label[p] == x for p in usable) for x in sorted(set(label))]
                copies = _most_copies(tuple(sorted(s // c for s in sizes)), len(counts))
            else:
                copies = len(usable) // n
            assert idle_chips(f, n, equal_domains=equal) == live - copies * n


@settings(max_examples=6, deadline=None)
@given(st.integers(2, 4), st.sets(st.integers(0, 11), min_size=1, max_size=3))
def test_an_exchange_kernel_runs_wherever_equal_domains_hold_the_instance(size, failed):
    # end to end: an expert-parallel decode step with DeepEP's low-latency kernel answers
    # exactly when some set of live chips fills its domains equally, on the chips chosen
    f = _fabric("rail", size, failed, set())
    _, _, fewest_equal = _subsets_by_size(f)
    for n in range(2, min(f.n_endpoints, SMALL.routed_experts) + 1):
        kw = {"batch": n, "context": 8, "layout": f"tp=1,dp={n}",
              "ep_kernel": "deepep-low-latency", "chip": "h100"}
        if n not in fewest_equal:
            with pytest.raises(SpecError, match="equally"):
                analysis.decode_step(SMALL, f, **kw)
            continue
        st_ = analysis.decode_step(SMALL, f, **kw)
        want = analysis.instance_chips(f, n, equal_domains=True)
        assert st_.instance == tuple(f.endpoints[p] for p in want)
        assert st_.idle_chips == idle_chips(f, n, equal_domains=True)
        assert st_.layers[-1].dispatch > 0


def test_wide_expert_parallelism_leaves_a_damaged_domain_idle():
    # audit late shift: 64 EP ranks on a 9 x 8 H100 rail cluster without chip5 took the first
    # 64 live chips across the damaged domain; now 8 whole intact domains, as intact
    f = topologies.build("rail:servers=9,gpus=8,chip=h100")
    broken = f.without(chips=["chip5"])
    kw = {"isl": 2000, "osl": 100, "batch": 64, "ep_kernel": "deepep-low-latency"}
    for lay in ("tp=1,dp=64", "tp=8,dp=8"):
        intact = serving_point("deepseek-v3", f, layout=lay, **kw)
        degraded = serving_point("deepseek-v3", broken, layout=lay, **kw)
        assert degraded.tokens_per_s_user == pytest.approx(intact.tokens_per_s_user, rel=1e-12)
        assert degraded.tokens_per_s_gpu == pytest.approx(intact.tokens_per_s_gpu, rel=1e-12)
        assert (intact.idle_chips, degraded.idle_chips) == (8, 7)
    step = analysis.decode_step("deepseek-v3", broken, batch=64, context=2000,
                                layout="tp=8,dp=8", ep_kernel="deepep-low-latency")
    assert not {f"chip{i}" for i in range(8)} & set(step.instance)
    assert step.instance[:8] == tuple(f"chip{i}" for i in range(8, 16))  # one whole domain
    fr = serving_frontier("deepseek-v3", broken, isl=2000, osl=100, batches=(64,),
                          speculative=NO_SPEC, layouts=("tp=1,dp=64", "tp=8,dp=8"),
                          ep_kernel="deepep-low-latency")
    assert fr.points and not fr.skipped


# -- tensor-parallel groups inside one domain ---------------------------------------------

def _aligned_splits(sizes, n, tp):
    """Every way to take ``n`` chips as a multiple of ``tp`` from each domain (``sizes``:
    live chips per domain), by exhaustion."""
    ranges = [range(0, s + 1, tp) for s in sizes]
    return [t for t in itertools.product(*ranges) if sum(t) == n]


@functools.cache
def _most_aligned_copies(sizes, n, tp):
    """Exhaustively: the most disjoint instances of ``n`` chips, each taking a multiple of
    ``tp`` chips from every domain."""
    best = 0
    for t in _aligned_splits(sizes, n, tp):
        rest = tuple(sorted(s - x for s, x in zip(sizes, t)))
        best = max(best, 1 + _most_aligned_copies(rest, n, tp))
    return best


@settings(max_examples=25, deadline=None)
@given(st.sampled_from(["rail", "nvl"]), st.integers(2, 4),
       st.sets(st.integers(0, 11), max_size=4), st.sets(st.integers(0, 11), max_size=2))
def test_tp_groups_stay_inside_a_domain_whenever_a_brute_force_can_place_them(
        kind, size, failed, cut):
    # review 2a: rail:servers=3,gpus=4, tp=2 x dp=3 with an exchange kernel put the TP group
    # (chip2, chip4) across two servers, priced as one inside a server, and left 6 of 12 idle
    from analysis import instance_chips

    f = _fabric(kind, size, failed, cut)
    live = f.n_endpoints
    label = [int(f.loadstore_domains[f.node_index[c]]) for c in f.endpoints]
    doms = sorted(set(label))
    _, fewest, fewest_equal = _subsets_by_size(f)
    for n in range(2, live + 1):
        usable = _usable(f, n)
        sizes = [sum(label[p] == x for p in usable) for x in doms]
        for tp in [t for t in range(2, n + 1) if n % t == 0]:
            for equal in (False, True):
                splits = _aligned_splits(sizes, n, tp)
                if equal:
                    splits = [t for t in splits if len({x for x in t if x}) == 1]
                    if n not in fewest_equal:
                        with pytest.raises(SpecError, match="equally"):
                            instance_chips(f, n, equal_domains=True, tp=tp)
                        continue
                sel = instance_chips(f, n, equal_domains=equal, tp=tp)
                assert len(set(sel)) == n and usable.issuperset(sel)
                inside = all(len({label[p] for p in sel[i:i + tp]}) == 1
                             for i in range(0, n, tp))
                counts = {}
                for p in sel:
                    counts[label[p]] = counts.get(label[p], 0) + 1
                if splits:      # a placement with every TP group inside a domain exists
                    assert inside, (n, tp, equal, sel)
                    assert len(counts) == min(sum(x > 0 for x in t) for t in splits)
                else:           # none does: the fewest domains, as without tp
                    assert len(counts) == (fewest_equal if equal else fewest)[n]
                if equal:
                    assert len(set(counts.values())) == 1
                    c = n // len(counts)
                    copies = _most_copies(tuple(sorted(s // c for s in sizes)), len(counts))
                elif splits:
                    copies = _most_aligned_copies(tuple(sorted(sizes)), n, tp)
                else:
                    copies = len(usable) // n
                assert idle_chips(f, n, equal_domains=equal, tp=tp) == live - copies * n


@settings(max_examples=8, deadline=None)
@given(st.sampled_from(["rail", "nvl"]), st.integers(2, 4),
       st.sets(st.integers(0, 11), max_size=3), st.sets(st.integers(0, 11), max_size=2),
       st.sampled_from([2, 4]))
def test_the_tp_all_reduce_is_the_slowest_groups(kind, size, failed, cut, tp):
    # the ranks step together: the step pays its slowest TP group's all-reduce (a brute
    # force over every group of the instance), not its first group's
    from analysis._decode import collective_seconds

    f = _fabric(kind, size, failed, cut)
    for dp in (1, 2, 3):
        n = tp * dp
        if n > f.n_endpoints or n > SMALL.routed_experts:
            continue
        try:
            st_ = analysis.decode_step(SMALL, f, batch=n, context=8,
                                       layout=f"tp={tp},dp={dp}", chip="h100", runtime="nccl")
        except RoutingError:        # the instance needs a chip cut off from the others
            pos = analysis.instance_chips(f, n, tp=tp)
            assert not all(_reaches(f, f.endpoints[a], f.endpoints[b])
                           for a in pos for b in pos if a != b)
            continue
        pos = [f.endpoints.index(c) for c in st_.instance]
        nbytes = n // dp * SMALL.hidden * SMALL.activation_bytes    # one group's tokens
        want = max(collective_seconds(f, "all-reduce", nbytes, pos[i:i + tp], runtime="nccl")
                   for i in range(0, n, tp))
        assert st_.layers[-1].tp_allreduce == pytest.approx(want, rel=1e-12)


def test_review_2a_rail_tp2_dp3_keeps_its_groups_in_servers():
    f = topologies.build("rail:servers=3,gpus=4,chip=b200")
    st_ = analysis.decode_step("deepseek-v3", f, batch=12, context=2000, layout="tp=2,dp=3,ep=6",
                               ep_kernel="deepep-low-latency", runtime="nccl")
    assert st_.instance == ("chip0", "chip1", "chip4", "chip5", "chip8", "chip9")
    assert st_.idle_chips == 0                      # two copies: was one, 6 of 12 idle


# -- a chip cut off from the others ---------------------------------------------------------

def test_cli_serve_skips_the_layouts_that_need_a_cut_off_chip(capsys):
    # review 2b: one cut link made the whole frontier exit 2
    import json

    from analysis._cli import main

    args = ["serve", "switch:8,chip=b200", "--fail-link", "chip3-sw0", "--model",
            "kimi-k2.5-nvfp4", "--isl", "1024", "--osl", "256", "--batches", "1,8",
            "--no-speculative", "--quiet"]
    assert main(args + ["--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["frontier"] and all(p["chips"] == 4 for p in out["frontier"])
    eight = [s for s in out["layouts_skipped"] if "cannot reach" in s]
    assert {s.split(": ")[0] for s in eight} == {"tp=1,dp=8", "tp=2,dp=4", "tp=4,dp=2",
                                                 "tp=8,dp=1", "tp=8,dp=1,etp=8"}
    assert all("chip3 is cut off" in s and "chip3-sw0" in s for s in eight)
    assert not set(out["layouts_searched"]) & {s.split(": ")[0] for s in eight}
    assert main(args) == 0
    text = capsys.readouterr().out
    assert text.count("chip3 is cut off") == 5
    # a model that needs all 8 chips: no layout is feasible, one line and exit 2
    assert main([a if a != "kimi-k2.5-nvfp4" else "deepseek-v3" for a in args]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "chip3 is cut off" in err and "every layout" in err


def _reaches(f, a, b):
    try:
        f.route(a, b)
    except RoutingError:
        return False
    return True


@settings(max_examples=10, deadline=None)
@given(st.integers(2, 4), st.sets(st.integers(0, 7), min_size=1, max_size=2))
def test_a_frontier_searches_exactly_the_layouts_whose_chips_reach_each_other(size, cut):
    # brute force: a layout is evaluated iff every pair of its instance's chips has a route
    # (the fabric's own reachability), else it is skipped naming the cut-off chip
    f = _fabric("nvl", size, set(), cut)
    dead = {c for c in f.endpoints if int(c[4:]) in cut}
    lays = [f"tp=1,dp={n},ep={n}" for n in (1, 2, f.n_endpoints)]
    fr = serving_frontier(SMALL, f, isl=16, osl=8, batches=(1,), speculative=NO_SPEC,
                          layouts=lays, chip="h100") if len(dead) < f.n_endpoints - 1 else None
    if fr is None:
        return
    for lay in lays:
        n = int(lay.split(",")[1][3:])
        chips = [f.endpoints[p] for p in analysis.instance_chips(f, n, equal_domains=False)]
        ok = all(_reaches(f, a, b) for a in chips for b in chips if a != b)
        if ok:
            assert lay in fr.layouts
        else:
            assert lay not in fr.layouts
            (why,) = [s for s in fr.skipped if s.startswith(f"{lay}: ")]
            assert "cannot reach" in why and "cut off" in why


def test_review_r4_a_cut_off_chip_serves_no_copy_of_a_multi_chip_instance():
    # switch:8 without link chip3-sw0: chip3 reaches no other chip, so 4-chip instances fit
    # once in the 7 others (4 idle, whatever the TP degree: tp=1 said 0), 2-chip ones 3 times
    f = topologies.build("switch:8,chip=h100").without(links=[("chip3", "sw0")])
    assert set(f.failures.cut_off) == {"chip3"}
    for layout in ("tp=1,dp=4", "tp=2,dp=2", "tp=4,dp=1"):
        st_ = analysis.decode_step(SMALL, f, batch=4, context=8, layout=layout)
        assert "chip3" not in st_.instance and st_.idle_chips == 4, layout
    assert [idle_chips(f, n) for n in (1, 2, 4, 8)] == [0, 2, 4, 0]


# -- which layouts cannot run: decided on the fabric's structure (session 8, task 2) ------

@st.composite
def _degraded_small(draw):
    """A small fabric with random failed links: a 2-plane switch (non-transitive
    reachability when chips lose different planes), a 2x4 rail (a GPU whose NIC link
    failed still reaches its own server only), or a one-plane switch (a cut-off chip)."""
    spec = draw(st.sampled_from(["switch:4,planes=2,chip=h100", "switch:6,planes=2,chip=h100",
                                 "rail:servers=2,gpus=4,chip=h100", "switch:6,chip=h100"]))
    f = topologies.build(spec)
    links = sorted({tuple(sorted((u, v))) for u, v in f.graph.edges()
                    if u.startswith("chip") or v.startswith("chip")})
    failed = draw(st.lists(st.sampled_from(links), min_size=1, max_size=3, unique=True))
    return f.without(links=failed)


@settings(max_examples=25, deadline=None)
@given(_degraded_small())
def test_a_layout_is_skipped_for_reach_iff_a_brute_force_finds_a_pair_without_a_route(f):
    # reference: fabric.route over every ordered pair of the instance decode places
    # (instance_chips; no exchange kernel here, so no equal-domain rule), nothing else
    if f.n_endpoints < 2:
        return
    lays = [f"tp=1,dp={n},ep={n}" for n in range(2, f.n_endpoints + 1)
            if n <= SMALL.routed_experts] + [f"tp=2,dp={n // 2}" for n in (2, 4)
                                             if n <= f.n_endpoints]
    for lay in lays:
        L = analysis.parse_layout(lay, f.n_endpoints)
        try:                            # one layout at a time: its own reason
            fr = serving_frontier(SMALL, f, isl=16, osl=8, batches=(1,), speculative=NO_SPEC,
                                  layouts=[lay], chip="h100")
            skipped = dict(s.split(": ", 1) for s in fr.skipped)
        except SpecError as e:          # refused: the reason is the message
            skipped = {str(L): str(e)}
        try:
            pos = analysis.instance_chips(f, L.chips, tp=L.tp)
        except SpecError:
            continue
        chips = [f.endpoints[p] for p in pos]
        bad = [(a, b) for a in chips for b in chips if a != b and not _reaches(f, a, b)]
        why = skipped.get(str(L), "")
        if not bad:
            assert "cannot reach" not in why, (lay, why)
            continue
        assert "cannot reach" in why, (lay, why, bad)
        # the reason names a pair the brute force confirms, and what failed
        named = [(a, b) for a, b in bad if f"between {a} and {b}" in why
                 or (f"{a} is cut off" in why or f"{b} is cut off" in why)]
        assert named, (lay, why, bad)
        failed = [f"link {a}-{b}" for a, b in f.failures.links]
        assert any(x in why for x in failed), (lay, why)
        if any(c in f.failures.cut_off for c in chips):
            assert "is cut off from every other chip" in why


def test_the_reach_reason_comes_from_the_failures_not_the_error_text():
    # non-transitive reachability: chip1 lost plane 0, chip2 plane 1; each reaches chip0 and
    # chip3, not each other; the reason names them and the two failed links
    from analysis._serving import _unreached_reason

    f = topologies.build("switch:4,planes=2,chip=h100").without(
        links=[("chip1", "sw0"), ("chip2", "sw1")])
    why = _unreached_reason(f, [0, 1, 2, 3])
    assert why == ("its instance needs chips that cannot reach each other: the failures "
                   "leave the routing policy no path between chip1 and chip2: link chip1-sw0 "
                   "and link chip2-sw1 failed")
    assert _unreached_reason(f, [0, 1, 3]) is None
    g = topologies.build("switch:4,chip=h100").without(links=[("chip3", "sw0")])
    assert _unreached_reason(g, [0, 3]) == ("its instance needs a chip that cannot reach the "
                                            "others: chip3 is cut off from every other chip: "
                                            "link chip3-sw0 failed")


@settings(max_examples=10, deadline=None)
@given(_degraded_small(), st.sampled_from([None, "deepep-low-latency"]),
       st.sampled_from(["tp=1,dp=2,ep=2", "tp=1,dp=4,ep=4", "tp=2,dp=2,ep=4", "tp=2,dp=1"]))
def test_the_sweep_places_the_instance_decode_places(f, kernel, lay):
    # the serving sweep's reach reason looks at the instance decode_step runs on: the same
    # chips wherever decode_step runs (a drift between the two rules fails here)
    from analysis._serving import _Sweep

    L = analysis.parse_layout(lay, max(f.n_endpoints, 1))
    if L.chips > f.n_endpoints:
        return
    kw = {"chip": "h100", **({"ep_kernel": kernel} if kernel else {})}
    try:
        st_ = analysis.decode_step(SMALL, f, batch=L.chips, context=8, layout=lay, **kw)
    except (RoutingError, SpecError):
        return
    sw = _Sweep(SMALL, f, isl=16, osl=8, mode="aggregated", definition="total-per-gpu",
                prefill_efficiency=0.4, usable_hbm=0.9, decode_kwargs=kw)
    equal = kernel is not None and L.ep > 1 and L.etp == 1
    pos = analysis.instance_chips(f, L.chips, equal_domains=equal, tp=L.tp)
    assert tuple(f.endpoints[p] for p in pos) == st_.instance
    with pytest.raises(RoutingError, match="internal inconsistency"):
        sw.unreached(lay)           # every pair routes: not a reason to skip
