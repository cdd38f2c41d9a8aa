"""Instances whose chips must reach each other pairwise, on fabrics where reachability is
not transitive.

A tensor-parallel group's all-reduce (a one-shot kernel reads every peer's buffer) and the
expert exchange (an all-to-all sends to every rank) move data between every pair of an
instance's chips. On a switch of several planes, two chips that each lost a DIFFERENT
plane's links each still reach every other chip but not each other; a GPU whose NIC link
failed reaches its own server only. Sharing a load/store domain therefore does not make
chips a group. The references here are brute forces over every set of live chips, with
reachability taken from ``fabric.route`` pair by pair.
"""

import functools
import itertools

import numpy as np
import pytest
from degrade import apart
from hypothesis import given, settings
from hypothesis import strategies as st

import analysis
import topologies
from analysis import idle_chips, instance_chips
from analysis._decode import collective_seconds
from fabric import FabricError, RoutingError, SpecError
from fabric._memo import fabric_memo

NODE = "switch:8,planes=2,links=9,tech=nvlink5,chip=b200"


class _Free:
    time = 0.0


def _free(fabric, op, nbytes, **kwargs):
    return _Free()


def _reaches(f, a, b):
    try:
        f.route(a, b)
        f.route(b, a)
    except RoutingError:
        return False
    return True


def _table(f):
    ends = f.endpoints
    n = len(ends)
    return [[i == j or _reaches(f, ends[i], ends[j]) for j in range(n)] for i in range(n)]


def _labels(f):
    return [int(f.loadstore_domains[f.node_index[c]]) for c in f.endpoints]


def _clique(R, sel):
    return all(R[a][b] for a, b in itertools.combinations(sel, 2))


def _counts(label, sel):
    out = {}
    for p in sel:
        out[label[p]] = out.get(label[p], 0) + 1
    return out


def _inside(label, sel, tp):
    return all(len({label[p] for p in sel[i:i + tp]}) == 1 for i in range(0, len(sel), tp))


def _fabric(kind, size, planes, lost, failed):
    """A switch of ``size`` chips and ``planes`` planes whose chips lost some planes'
    links (``lost``: (chip, plane) pairs), or a rail cluster of 3 servers of ``size`` GPUs
    whose chips lost their NIC or NVSwitch link (plane 0: NIC, 1: NVSwitch); without the
    ``failed`` chips."""
    if kind == "switch":
        f = topologies.build(f"switch:{size},planes={planes}")
    else:
        f = topologies.build(f"rail:servers=3,gpus={size}")
    chips = [c for c in f.endpoints if int(c[4:]) in failed][:f.n_endpoints - 1]
    links = []
    for c in f.endpoints:
        if c in chips:
            continue
        for nb in sorted(f.graph[c]):
            p = int(nb[2:]) if kind == "switch" else int(nb.startswith("nvs"))
            if (int(c[4:]), p) in lost:
                links.append((c, nb))
    return f.without(chips=chips, links=links)


_FABRICS = st.one_of(
    st.tuples(st.just("switch"), st.integers(3, 7), st.integers(2, 3),
              st.sets(st.tuples(st.integers(0, 6), st.integers(0, 2)), max_size=6),
              st.sets(st.integers(0, 6), max_size=2)),
    st.tuples(st.just("rail"), st.integers(2, 3), st.just(0),
              st.sets(st.tuples(st.integers(0, 8), st.integers(0, 1)), max_size=3),
              st.sets(st.integers(0, 8), max_size=1)))


def _most(R, label, live, n, ok):
    """Brute force: the most disjoint sets of ``n`` live chips joined pairwise by routes,
    each accepted by ``ok`` (its shape)."""

    @functools.cache
    def rec(rest):
        if len(rest) < n:
            return 0
        p, others = rest[0], rest[1:]
        best = rec(others)                          # p idle
        for more in itertools.combinations(others, n - 1):
            sel = (p,) + more
            if _clique(R, sel) and ok(sel):
                best = max(best, 1 + rec(tuple(x for x in others if x not in more)))
        return best

    return rec(tuple(range(live)))


@settings(max_examples=40, deadline=None)
@given(_FABRICS)
def test_instances_and_their_copies_are_the_brute_forces_pairwise_reaching_sets(case):
    _placements_are_the_brute_forces(_fabric(*case))


def _placements_are_the_brute_forces(f, full=True):
    """instance_chips and idle_chips against the brute force, every size, TP and domain
    rule. ``full``: also the collectives' verdict on the instance (no route where no set
    has the shape, free where it does) and the lowest-positions tie-break."""
    live = f.n_endpoints
    R, label = _table(f), _labels(f)
    for n in range(1, live + 1):
        sets = [s for s in itertools.combinations(range(live), n) if _clique(R, s)]
        for tp in [t for t in range(1, n + 1) if n % t == 0]:
            for equal in (False, True):
                keys = _shape_keys(sets, label, n, tp, equal)
                if not keys:
                    # no set of pairwise-reaching chips has the shape: the instance given
                    # (if any) cannot run, and costing its collectives says which pair
                    try:
                        sel = instance_chips(f, n, equal_domains=equal, tp=tp)
                    except SpecError as e:
                        assert equal and "equally" in str(e)
                        continue
                    assert not _clique(R, sel)
                    if full:
                        with pytest.raises(RoutingError,
                                           match="no route from .* must reach each other pairwise"):
                            collective_seconds(f, "all-to-all", 1024.0, sel, collective=_free)
                    continue
                sel = instance_chips(f, n, equal_domains=equal, tp=tp)
                assert len(set(sel)) == n and _clique(R, sel), (n, tp, equal, sel)
                assert not full or set(sel) <= set(range(live))
                c = _counts(label, sel)
                if equal:
                    assert not full or len(set(c.values())) == 1
                    got = (n // len(c) % tp != 0, len(c))
                else:
                    got = (not _inside(label, sel, tp), len(c))
                assert got == min(keys), (n, tp, equal, sel, got, min(keys))
                if full:
                    first = tuple(range(n))
                    if (_clique(R, first) and (not equal or len(set(_counts(label, first)
                                                                       .values())) == 1)):
                        cf = _counts(label, first)
                        key_first = ((n // len(cf) % tp != 0, len(cf)) if equal
                                     else (not _inside(label, first, tp), len(cf)))
                        if key_first == min(keys):
                            assert sel == first
                    assert collective_seconds(f, "all-to-all", 1024.0, sel,
                                              collective=_free) == 0
                # the copies: each shaped as the instance (c chips in each of d domains;
                # whole TP groups inside domains where the instance has them)
                copies = _most(R, label, live, n, _copy_rule(label, sel, n, tp, equal))
                assert idle_chips(f, n, equal_domains=equal, tp=tp) == live - copies * n, (
                    n, tp, equal, sel, copies)


def test_two_chips_that_lost_different_planes_are_never_one_group():
    # audit s7 section 7: chip2 lost plane 0, chip6 plane 1: each reaches the other six
    # chips, not each other. An 8-chip instance would need the pair: refused, naming it;
    # two 4-chip instances keep them apart (no chip idle)
    g = topologies.build(NODE).without(links=["chip2-sw0", "chip6-sw1"])
    assert [idle_chips(g, n, tp=tp) for n, tp in ((2, 2), (4, 4), (4, 1))] == [0, 0, 0]
    for lay in ("tp=8,dp=1,etp=8", "tp=4,dp=2", "tp=1,dp=8"):
        with pytest.raises(RoutingError, match="no route from 'chip2' to 'chip6'; the failures "
                                               "leave the routing policy no path between "
                                               "chip2 and chip6"):
            analysis.decode_step("kimi-k2.5-nvfp4", g, batch=8, context=2000, layout=lay)
    step = analysis.decode_step("kimi-k2.5-nvfp4", g, batch=8, context=2000, layout="tp=4,dp=1")
    assert step.instance == ("chip0", "chip1", "chip2", "chip3") and step.idle_chips == 0
    # chips 1, 2 lost plane 0 and 5, 6 plane 1: a 6-chip instance takes one side's pair
    h = topologies.build(NODE).without(links=["chip1-sw0", "chip2-sw0", "chip5-sw1",
                                              "chip6-sw1"])
    assert instance_chips(h, 6) == (0, 1, 2, 3, 4, 7)
    assert idle_chips(h, 6) == 2 and idle_chips(h, 4) == 0 and idle_chips(h, 4, tp=2) == 0


def test_serve_skips_the_layouts_that_need_an_unreachable_pair(capsys):
    from analysis._cli import main

    code = main(["serve", NODE, "--model", "kimi-k2.5-nvfp4", "--isl", "1000", "--osl", "1000",
                 "--fail-link", "chip2-sw0", "--fail-link", "chip6-sw1", "--no-speculative"])
    out = capsys.readouterr().out
    assert code == 0
    skipped = [line for line in out.splitlines() if line.startswith("skipped tp=")]
    assert {line.split(":")[0] for line in skipped if "between chip2 and chip6" in line} == {
        "skipped tp=1,dp=8", "skipped tp=2,dp=4", "skipped tp=4,dp=2", "skipped tp=8,dp=1",
        "skipped tp=8,dp=1,etp=8"}


def test_a_copy_search_over_its_budget_answers_with_copies_that_fit(monkeypatch):
    # past its budget the exact search answers with what it found or the copies placed one at
    # a time (_copies_one_at_a_time). The counts are cached per fabric, so the budgeted counts
    # must be computed afresh: the spy sees the one-at-a-time placement run once per size
    # (a cached count would not call it), and each answer is at least that placement's
    import analysis._decode as d

    h = topologies.build(NODE).without(links=["chip1-sw0", "chip2-sw0", "chip5-sw1",
                                              "chip6-sw1"])
    exact = [idle_chips(h, n) for n in (2, 3, 4)]
    placed = []
    one_at_a_time = d._copies_one_at_a_time

    def spy(fabric, groups, chips, rule):
        placed.append((chips, one_at_a_time(fabric, groups, chips, rule)))
        return placed[-1][1]

    monkeypatch.setattr(d, "_copies_one_at_a_time", spy)
    monkeypatch.setattr(d, "_COPY_SEARCH_BUDGET", 1)
    fabric_memo(h, d.__name__).pop("copies", None)                  # the counts are cached per fabric
    cheap = [idle_chips(h, n) for n in (2, 3, 4)]
    fabric_memo(h, d.__name__).pop("copies", None)
    assert exact == [0, 2, 0]
    assert [n for n, _ in placed] == [2, 3, 4]              # every count searched afresh
    assert all(e <= c <= 8 - n * k < 8                      # at least the placed copies
               for e, c, (n, k) in zip(exact, cheap, placed))


_ROUTED = ["mesh:3x3", "torus:3x3", "fattree:k=4", "dragonfly:h=1", "switch:5,planes=3",
           "rail:servers=2,gpus=3", "hypermesh:2x3"]


@settings(max_examples=25, deadline=None)
@given(st.sampled_from(_ROUTED), st.data())
def test_router_reachable_is_whether_route_finds_a_path(spec, data):
    # fabric.Router.reachable (a mask, never raising) against fabric.route pair by pair,
    # on every routing policy family, intact and with random failed links and chips
    f = topologies.build(spec)
    edges = sorted(tuple(sorted(e)) for e in f.graph.edges)
    links = data.draw(st.lists(st.sampled_from(edges), max_size=4, unique=True))
    chips = data.draw(st.lists(st.sampled_from(list(f.endpoints)), max_size=1, unique=True))
    try:
        g = f.without(links=apart(links, chips)[0], chips=chips)
    except FabricError:             # a failure the fabric refuses (e.g. no chip left)
        return
    ends = g.endpoints
    idx = g.endpoint_indices
    src, dst = zip(*[(i, j) for i in range(len(ends)) for j in range(len(ends)) if i != j])
    got = g.router.reachable([idx[i] for i in src], [idx[j] for j in dst]).tolist()
    want = []
    for i, j in zip(src, dst):
        try:
            g.route(ends[i], ends[j])
            want.append(True)
        except RoutingError:
            want.append(False)
    assert got == want


def test_a_gpu_whose_nic_link_failed_serves_only_instances_inside_its_server():
    # 16 servers of 8: chip3 reaches its 7 server mates only. By hand: an 8-chip instance
    # may be chip3's whole server (16 copies, none idle); an instance over 2, 3 or 4 servers
    # with whole TP groups cannot use chip3's server (7 chips reach the rest: no whole TP
    # group of 8), so 15 servers hold 7, 5 and 3 copies; any 16 pairwise-reaching chips
    # leave chip3 out (it reaches 7): 127 chips hold 7 copies
    g = topologies.build("rail:servers=16,gpus=8,chip=h100").without(links=[("chip3", "nic3")])
    assert instance_chips(g, 8, tp=8) == tuple(range(8))
    assert instance_chips(g, 16, tp=8) == tuple(range(8, 24))
    assert [idle_chips(g, n, tp=8) for n in (8, 16, 24, 32)] == [0, 16, 8, 32]
    assert idle_chips(g, 16, tp=8, equal_domains=True) == 16
    assert idle_chips(g, 16) == 16
    with pytest.raises(RoutingError, match="no route from 'chip3' to 'chip8'.*nic3"):
        collective_seconds(g, "all-to-all", 1024.0, range(16), collective=_free)


@settings(max_examples=15, deadline=None)
@given(_FABRICS)
def test_copies_past_the_search_budget_are_copies_that_fit(case):
    # with no budget the count comes from copies placed one at a time: never more copies
    # than the brute force's most (it may find fewer)
    import analysis._decode as d

    f = _fabric(*case)
    live = f.n_endpoints
    R, label = _table(f), _labels(f)
    old = d._SHAPE_BUDGET
    try:
        d._SHAPE_BUDGET = 0
        for n in range(2, live + 1):
            if not any(_clique(R, s) for s in itertools.combinations(range(live), n)):
                continue
            fabric_memo(f, d.__name__).pop("copies", None)
            got = live - idle_chips(f, n)
            most = _most(R, label, live, n, lambda s: True)
            if not d._pairwise_complete(f, n, d._usable_groups(f, n)):
                assert 0 < got <= most * n, (n, got, most)
    finally:
        d._SHAPE_BUDGET = old
        fabric_memo(f, d.__name__).pop("copies", None)


def test_copies_placed_one_at_a_time_take_the_most_constrained_chips_first(monkeypatch):
    # review S8-R7: 32 of 64 chips of a 4-plane switch lost 1-3 planes each; eight 8-chip
    # copies of pairwise-reaching chips exist (the exact search finds them), a greedy taking
    # the lowest chips first found seven. Past the search budget the count is a lower bound;
    # taking the chip with the fewest partners first finds all eight here (0 idle: the floor)
    import analysis._decode as d

    lost = {0: "1", 6: "3", 10: "10", 12: "0", 14: "031", 15: "20", 17: "1", 20: "321",
            22: "1", 25: "320", 26: "32", 28: "203", 29: "1", 30: "02", 32: "3", 33: "3",
            36: "0", 37: "2", 38: "1", 39: "320", 45: "031", 46: "120", 47: "23", 48: "1",
            49: "30", 50: "23", 53: "120", 54: "21", 55: "02", 56: "0", 58: "1", 60: "213",
            62: "032", 63: "0"}             # chip: the planes whose links it lost
    g = topologies.build("switch:64,planes=4").without(
        links=[(f"chip{c}", f"sw{p}") for c, planes in lost.items() for p in planes])
    monkeypatch.setattr(d, "_SHAPE_BUDGET", 0)          # the one-at-a-time answer
    fabric_memo(g, d.__name__).pop("copies", None)
    assert idle_chips(g, 8, tp=8) == 0 and idle_chips(g, 8) == 0
    fabric_memo(g, d.__name__).pop("copies", None)


def test_the_route_table_is_the_same_routed_in_blocks(monkeypatch):
    import analysis._decode as d

    g = topologies.build("rail:servers=3,gpus=3").without(
        links=[("chip1", "nic1"), ("chip4", "nvs1")], chips=["chip7"])
    whole = d._reach(g).copy()
    fabric_memo(g, d.__name__).pop("reach")
    import fabric._routing as routing

    monkeypatch.setattr(routing, "BLOCK", 5)           # the router asks one source at a time
    assert (d._reach(g) == whole).all() and not whole.all()
    fabric_memo(g, d.__name__).pop("reach")


def _copy_rule(label, sel, n, tp, equal):
    """Which sets of chips are copies of the instance ``sel``: the same count in every
    domain (``equal``), whole TP groups inside domains where the instance has them, or any."""
    if equal:
        cc = n // len(_counts(label, sel))
        return lambda s: set(_counts(label, s).values()) == {cc}
    if tp > 1 and _inside(label, sel, tp):
        return lambda s: all(x % tp == 0 for x in _counts(label, s).values())
    return lambda s: True


def _shape_keys(sets, label, n, tp, equal):
    """The (straddles a TP group, domains) key of every set in ``sets`` that has the shape
    (``equal``: the same chip count in every domain); fewer is better, in that order."""
    keys = []
    for s in sets:
        c = _counts(label, s)
        if equal and len(set(c.values())) != 1:
            continue
        keys.append((n // len(c) % tp != 0 if equal else any(x % tp for x in c.values()),
                     len(c)))
    return keys


def _best_keys(R, label, live, n, tp, equal):
    """Brute force: the best (shape, domains) key of every set of ``n`` live chips joined
    pairwise by routes, or None when none has the shape."""
    sets = [s for s in itertools.combinations(range(live), n) if _clique(R, s)]
    keys = _shape_keys(sets, label, n, tp, equal)
    return min(keys) if keys else None


@settings(max_examples=40, deadline=None)
@given(_FABRICS)
def test_the_best_instance_is_found_past_the_kept_cliques(case):
    # with one kept clique (_MAX_CLIQUES = 1) the search goes on through the others while no
    # placement meets the bound of the unconstrained placement: still the brute force's best
    import analysis._decode as d

    f = _fabric(*case)
    live = f.n_endpoints
    R, label = _table(f), _labels(f)
    old = d._MAX_CLIQUES
    try:
        d._MAX_CLIQUES = 1
        for n in range(2, live + 1):
            for tp in [t for t in range(1, n + 1) if n % t == 0]:
                for equal in (False, True):
                    want = _best_keys(R, label, live, n, tp, equal)
                    if want is None:
                        continue
                    sel = instance_chips(f, n, equal_domains=equal, tp=tp)
                    assert _clique(R, sel), (n, tp, equal, sel)
                    c = _counts(label, sel)
                    got = ((n // len(c) % tp != 0, len(c)) if equal
                           else (not _inside(label, sel, tp), len(c)))
                    assert got == want, (n, tp, equal, sel, got, want)
    finally:
        d._MAX_CLIQUES = old


def test_past_the_kept_cliques_the_search_stops_at_the_bound(monkeypatch):
    # review S8's 2^35-clique fabric (every chip misses only its twin): the first set found
    # already places the instance inside one domain (the bound): the search stops there
    import analysis._decode as d

    sets = [s for s in itertools.combinations(range(8), 4) if 0 in s]
    links = []
    for i, s in enumerate(sets):        # chip 2i keeps the planes of S_i, 2i+1 the others
        links += [(f"chip{2 * i}", f"sw{p}") for p in range(8) if p not in s]
        links += [(f"chip{2 * i + 1}", f"sw{p}") for p in s]
    g = topologies.build("switch:70,planes=8").without(links=links)
    seen = []
    real = d._place

    def counted(fabric, groups, chips, equal_domains, tp):
        seen.append(chips)
        return real(fabric, groups, chips, equal_domains, tp)

    monkeypatch.setattr(d, "_place", counted)
    sel = instance_chips(g, 8, tp=8)
    R = d._reach(g)
    assert R[np.ix_(sel, sel)].all() and len(sel) == 8
    # the bound's placement, then at most the kept cliques: never the 2^35
    assert len(seen) <= 1 + d._MAX_CLIQUES
