"""Audit, session 15: a collective's ranks must be joined, under every runtime (lead's decision).

Before: ranks that the failures split into groups (an island, ``failures.islands``, or a chip
cut off alone, ``failures.cut_off``) were refused only where a byte had to cross between
groups: an all-to-allv whose cut-off rank had no traffic was costed (``mesh:3x3`` without
chip3, chip4, chip5, ranks chip0, chip1, chip7: ideal 17.67 us, nccl 33.71 us, and NCCL's
model counted the island as a node of the communicator), ``peer_round_trip`` answered, and
``ring_search`` built a ring over them (reading its ranks by ``fabric.node`` alone, it also took
a rank twice, a switch, and a string letter by letter). No communicator joins ranks with no
path between them. Now ``resolve_ranks`` (analysis/_schedules.py), which every collective
entry reads its ranks through, refuses them by name (:func:`fabric._failures.require_joined`:
the RoutingError names the island or the chip cut off), before any runtime looks at them.
"""

import io
from contextlib import redirect_stderr, redirect_stdout

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from routing_brute import built_h100
from test_audit_s14_islands import GRIDS, OTHERS, _groups, _split, two_groups

import analysis
from analysis import NotApplicableError
from analysis._cli import main
from analysis._engine_allreduce import vllm_all_reduce, vllm_all_reduce_kernel
from fabric import NodeError, RoutingError, SpecError

RUNTIMES = ("ideal", "nccl", "nccl@2.20.5", "nccl@2.30.7", "symmetric-memory")

_build = built_h100                 # one cache of built fabrics (routing_brute)


def _island():
    return _build("mesh:3x3").without(chips=["chip3", "chip4", "chip5"])


ISLAND = r"chip6, chip7 and chip8 are cut off from the other live chips \(an island of 3\)"


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_an_all_to_allv_with_no_traffic_to_the_island_is_refused_by_name(runtime):
    g = _island()
    m = np.zeros((3, 3))
    m[0, 1] = m[1, 0] = 2**20          # chip7 (the island) sends and receives nothing
    with pytest.raises(RoutingError, match=ISLAND):
        analysis.cost(g, "all-to-allv", m, runtime=runtime, ranks=["chip0", "chip1", "chip7"])


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_a_rank_cut_off_alone_with_no_traffic_is_refused_by_name(runtime):
    g = _build("hypermesh:2x3,connect=switch").without(
        links=[("sw.d0.0", "chip0"), ("chip1", "sw.d1.1")])
    m = np.zeros((3, 3))
    m[0, 2] = 2**20                    # chip1 (cut off alone) sends and receives nothing
    with pytest.raises(RoutingError, match="chip1 is cut off from every other chip"):
        analysis.cost(g, "all-to-allv", m, runtime=runtime, ranks=["chip0", "chip1", "chip5"])


def test_every_entry_that_reads_a_collectives_ranks_refuses_split_ranks():
    g = _island()
    ranks = ["chip0", "chip1", "chip7"]
    calls = [
        lambda: analysis.cost(g, "all-reduce", 2**20, runtime="ideal", ranks=ranks),
        lambda: analysis.cost_sizes(g, "all-gather", [2**10, 2**20], runtime="nccl",
                                    ranks=ranks),
        lambda: analysis.applicable_algorithms(g, "all-reduce", ranks=ranks),
        lambda: analysis.peer_round_trip(g, ranks=ranks),
        lambda: analysis.communicator_channels(g, ranks=ranks),
        lambda: analysis.ring_search(g, ranks=ranks),
        lambda: vllm_all_reduce_kernel(g, 2**20, ranks=ranks),
        lambda: vllm_all_reduce(g, "all-reduce", 2**20, ranks=ranks),
    ]
    for call in calls:
        with pytest.raises(RoutingError, match=ISLAND):
            call()
    # every rank by default: the same
    for call in (lambda: analysis.peer_round_trip(g), lambda: analysis.ring_search(g),
                 lambda: analysis.cost(g, "all-reduce", 2**20, runtime="ideal")):
        with pytest.raises(RoutingError, match=ISLAND):
            call()
    # ranks inside one group are fine, on either side
    assert analysis.peer_round_trip(g, ranks=["chip0", "chip1"]) > 0
    assert analysis.peer_round_trip(g, ranks=["chip6", "chip7"]) > 0
    assert len(analysis.ring_search(g, ranks=["chip6", "chip7", "chip8"])) >= 1


def test_ring_search_reads_its_ranks_as_cost_does():
    f = _build("torus:3x3")
    with pytest.raises(NodeError, match="ranks lists 'chip0' twice"):
        analysis.ring_search(f, ranks=["chip0", "chip0", "chip1"])
    with pytest.raises(TypeError, match="ranks must be a sequence"):
        analysis.ring_search(f, ranks="chip0")      # before: "no node called 'c'"
    with pytest.raises(SpecError, match="at least one rank"):
        analysis.ring_search(f, ranks=[])
    with pytest.raises(NodeError, match="is not a chip endpoint"):
        analysis.ring_search(_build("switch:4"), ranks=["chip0", "sw0"])
    assert [r.tolist() for r in analysis.ring_search(f, ranks=[0, 1, 2])] == [
        r.tolist() for r in analysis.ring_search(f, ranks=["chip0", "chip1", "chip2"])]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_split(GRIDS + OTHERS), st.sampled_from(RUNTIMES), st.data())
def test_ranks_spanning_groups_are_refused_and_ranks_inside_one_are_not(case, runtime, data):
    _, g = case
    groups = _groups(g)
    if len(groups) < 2:
        return
    i, j = two_groups(data, groups)
    mine = data.draw(st.lists(st.sampled_from(groups[i]), min_size=1, max_size=2, unique=True))
    ranks = data.draw(st.permutations(mine + [data.draw(st.sampled_from(groups[j]))]))
    p = len(ranks)
    if len(mine) == 2:                 # bytes only between the two ranks of one group
        m = np.zeros((p, p))
        m[ranks.index(mine[0]), ranks.index(mine[1])] = 2**20
    else:
        m = (np.ones((p, p)) - np.eye(p)) * 2**20
    op = data.draw(st.sampled_from(["all-to-allv", "all-reduce", "all-gather", "broadcast"]))
    n = m if op == "all-to-allv" else 2**20
    cut = groups[j]
    want = (f"{cut[0]} is cut off from every other chip" if len(cut) == 1 else
            f"(an island of {len(cut)})")
    with pytest.raises(RoutingError) as e:
        analysis.cost(g, op, n, runtime=runtime, ranks=ranks)
    assert want in str(e.value), str(e.value)
    inside = list(groups[i][:3])
    if len(inside) < 2:
        return
    try:
        analysis.cost(g, "all-reduce", 2**20, runtime=runtime, ranks=inside)
    except RoutingError as e:          # ranks inside one group are joined (the policy may
        assert "cut off from" not in str(e), str(e)   # still find no path: up/down on a rail)
    except NotApplicableError:
        pass


@pytest.mark.parametrize("runtime", ["ideal", "nccl", "symmetric-memory"])
@pytest.mark.parametrize("ranks", [[], ["--ranks", "chip0", "chip7"]])
def test_the_cli_refuses_split_ranks_in_one_line(runtime, ranks):
    out, err = io.StringIO(), io.StringIO()
    argv = (["cost", "mesh:3x3", "--op", "all-reduce", "--size", "1MiB", "--runtime", runtime,
             "--fail-chip", "chip3", "--fail-chip", "chip4", "--fail-chip", "chip5"] + ranks)
    with redirect_stdout(out), redirect_stderr(err):
        rc = main(argv)
    assert rc == 2 and not out.getvalue()
    lines = err.getvalue().splitlines()
    assert len(lines) == 1 and "Traceback" not in lines[0], lines
    assert lines[0].startswith("cofabric cost: error: mesh:3x3 without 3 nodes: no route from "
                               "'chip0' to 'chip")
    assert "chip6, chip7 and chip8 are cut off from the other live chips (an island of 3)" in (
        lines[0])
