"""Audit, session 24: a degraded fabric's ideal cost is its schedule on brute-force routes.

Session 23 checked degraded routes and link loads against brute force; this checks what
``analysis.cost(runtime="ideal", algorithm=A)`` makes of them on the same random degraded
fabrics (tests/degrade.py: failed links and chips): the schedule of ``A``
(:func:`analysis._schedules.schedule`) evaluated step by step with every flow's bytes split
evenly over the paths its routing policy allows (routing_brute.policy_paths: dimension order
with its bypasses, up/down, minimal), each step's latency the slowest such path, its
transfer the busiest link at the transport's effective bandwidth, plus the transport's
overheads and the reduction; a pipelined schedule at the chunk count the result reports.
A hunt's record (no defect found: it passes on the parent too, ~2,000 draws on
dragonfly:h=2, leafspine:k=6, rail, fat-tree, tori and meshes with failed chips); what
it guards is that a later change to degraded routing moves a cost only with its routes.
"""

import itertools
import math

import networkx as nx
import numpy as np
import pytest
from degrade import built, degrade
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from routing_brute import path_latency, policy_paths

import analysis
from analysis import NotApplicableError
from analysis._collectives import _effective_bandwidth
from analysis._schedules import ALGORITHMS, schedule
from fabric import RoutingError
from fabric import transport as get_transport

SPECS = ("torus:4x3,chip=h100", "mesh:3x3,chip=h100", "hypermesh:3x2,connect=switch,chip=h100",
         "leafspine:k=4,chip=h100", "fattree:k=4,chip=h100", "dragonfly:h=1,chip=h100",
         "rail:servers=2,gpus=4,chip=h100", "switch:6,planes=2,chip=h100")
OPS = ("all-reduce", "all-gather", "reduce-scatter", "broadcast", "all-to-all")


def _brute_time(g, op, alg, nodes, n, chunks):
    """Seconds of ``alg``'s schedule on ``g`` by brute-force routes (module docstring)."""
    sched = schedule(op, alg, len(nodes), fabric=g, nodes=nodes)
    names = list(nodes) + list(sched.switches or ())
    dom, ni, r = g.loadstore_domains, g.node_index, g.router
    chip = {x for x in g.graph if g.graph.nodes[x]["kind"] == "chip"}
    paths = {}

    def of(a, b):
        if (a, b) not in paths:
            paths[a, b] = (policy_paths(g, a, b) if a in chip and b in chip
                           else sorted(nx.all_shortest_paths(g.graph, a, b)))
        return paths[a, b]

    steps = []
    for stp in sched.steps:
        gamma = 0.0 if sched.in_network else stp.reduce / g.chip.reduce_rate
        if not stp.n_flows:
            steps.append((stp.repeat, 0.0, 0.0, gamma, 0.0))
            continue
        src, dst = [names[i] for i in stp.src], [names[i] for i in stp.dst]
        ds, dd = dom[[ni[x] for x in src]], dom[[ni[x] for x in dst]]
        t = get_transport("loadstore" if ((ds >= 0) & (ds == dd)).all() else "rdma")
        load, lat = np.zeros(r.n_links), 0.0
        for a, b, frac in zip(src, dst, stp.fraction):
            ps = of(a, b)
            assert ps, (a, b)
            for p in ps:
                lat = max(lat, path_latency(g, p))
                for u, v in itertools.pairwise(p):
                    load[r.link_index(u, v)] += frac / len(ps)
        beta = float((load / _effective_bandwidth(g, t, sched.in_network)).max())
        if t.bounce:
            gamma += 2 * float(np.bincount(stp.src, weights=stp.fraction).max()) / t.copy_bandwidth
        over = t.per_message_overhead
        if t.kind == "message":
            over += (int(np.bincount(stp.src).max()) - 1) * t.software_post
        steps.append((stp.repeat, lat, over, gamma, beta))
    if sched.pipeline is not None and steps:
        _, lat, over, gamma, beta = steps[0]
        return (chunks + sched.pipeline) * (lat + over + max(beta, gamma) * n / chunks)
    return sum(rep * (lat + over + max(beta, gamma) * n) for rep, lat, over, gamma, beta in steps)


@st.composite
def cases(draw, specs=SPECS, max_links=3):
    """``(g, ranks, op)``: a fabric of ``specs`` with 1 to ``max_links`` links and up to 2
    chips failed, 2 to 8 of its live chips in a random order, and a collective."""
    f = built(draw(st.sampled_from(specs)))
    g = draw(degrade(f, max_links=max_links, max_chips=2, min_links=1))
    live = list(g.endpoints)
    k = draw(st.integers(2, min(8, len(live))))
    nodes = tuple(draw(st.permutations(live))[:k])
    return g, nodes, draw(st.sampled_from(OPS))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases(), st.sampled_from([64, 65536, 2**24]))
def test_ideal_cost_on_a_degraded_fabric_is_its_schedule_on_brute_force_routes(case, n):
    assert_cost_is_brute_force(case, n)


def assert_cost_is_brute_force(case, n):
    """Every algorithm of the case's op: cost(runtime='ideal') == :func:`_brute_time`."""
    g, nodes, op = case
    for alg in ALGORITHMS[op]:
        try:
            res = analysis.cost(g, op, n, algorithm=alg, runtime="ideal", ranks=nodes)
        except (NotApplicableError, RoutingError):
            continue
        want = _brute_time(g, op, alg, nodes, n, res.chunks)
        assert math.isclose(res.time, want, rel_tol=1e-9), (alg, res.time, want)


@pytest.mark.parametrize("spec, chips, links", [
    ("torus:4x4,chip=h100", ["chip5"], [("chip0", "chip1")]),
    ("leafspine:k=4,chip=h100", ["chip2"], [("leaf0", "spine0")]),
])
def test_a_ring_and_a_pairwise_exchange_by_hand_match(spec, chips, links):
    g = built(spec).without(chips=chips, links=links)
    nodes = tuple(g.endpoints[:6])
    for op, alg in (("all-reduce", "ring"), ("all-to-all", "pairwise")):
        res = analysis.cost(g, op, 2**20, algorithm=alg, runtime="ideal", ranks=nodes)
        assert res.time == pytest.approx(_brute_time(g, op, alg, nodes, 2**20, res.chunks),
                                         rel=1e-9)
