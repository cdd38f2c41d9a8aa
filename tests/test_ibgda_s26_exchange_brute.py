"""Session 26 (ibgda, lead's hunt 17:37): ``analysis.moe_exchange``'s per-link and per-NIC bytes
and its scale-up and network stage times, against a brute force built from each pair of EP
ranks' expected copies, on degraded fabrics of every family the model routes.

The reference (tests/exchange_brute.py, here with every EP rank sending) does not use the model's matrices, caches or router: load/store domains are the
connected components of the graph without NICs and message links; a pair's expected copies
follow the kernel's de-duplication (per expert: ``tokens x k / ep``; per rank: ``tokens x
P(reach rank)``; DeepEP normal: once per remote node to the rail peer, the peer's node then
fans out over the scale-up links); the hypergeometric reach is written out for uniform routing
(``analysis.expert_reach`` for the others); every pair's bytes go along the paths the fabric's
policy allows (tests/routing_brute.py ``policy_paths``), evenly over them, or hop by hop in
proportion to the links' bandwidth where the router is weighted (switched fabrics); a link's
time is its bytes over its bandwidth at the load/store payload fraction (scale-up) or the NIC
efficiency (network: the busiest NIC port, or a routed link busier than every port). A draw
the model refuses must be one the brute force cannot route either.

Drawn: 13 fabric families and shapes (rail with and without PIX NICs, RoCE, several spines;
DGX H100's NVSwitch bundles; fat tree; oversubscribed leaf/spine; dragonfly; an 8-GPU switch
of two planes; hypermesh; torus; GB200 rail), up to 3 failed links, a failed chip and 2 failed
lanes, an EP group of equal ranks per load/store domain in a drawn order, every kernel that
moves bytes, 1-64 tokens, uniform / balanced / node-limited routing, RDMA-only transport.
The hunt's scratch runs (1,500 draws) found the model and the brute force equal: this pins it.
"""
import pytest
from degrade import built
from exchange_brute import KERNELS, PER_EXPERT, reference, stage_times
from exchange_brute import domains as _domains
from hypothesis import event, given, settings
from hypothesis import strategies as st

from analysis import moe_exchange
from analysis._schedules import NotApplicableError
from fabric import FabricError, RoutingError, SpecError

SPECS = ("rail:servers=2,gpus=4,chip=h100", "rail:servers=3,gpus=2,chip=h100",
         "rail:servers=4,gpus=2,spines=2,chip=h100", "rail:servers=2,gpus=4,chip=h100,pix=2",
         "rail:servers=2,gpus=4,chip=h100,nic=roce-400g", "rail:servers=2,gpus=4,chip=gb200",
         "dgx-h100", "fattree:k=4,chip=h100", "leafspine:k=4,over=3,chip=h100",
         "dragonfly:h=1,chip=h100", "switch:8,planes=2,chip=h100", "hypermesh:2x4,chip=h100",
         "torus:4x4,chip=h100")


@st.composite
def _cases(draw):
    f = built(draw(st.sampled_from(SPECS)))
    edges = sorted(f.graph.edges(), key=str)
    links = draw(st.lists(st.sampled_from(edges), max_size=3, unique_by=frozenset))
    dead = draw(st.lists(st.sampled_from(list(f.endpoints)), max_size=1))
    links = [e for e in links if not set(e) & set(dead)]
    bundles = [e for e in edges if f.graph.edges[e].get("lanes", 1) > 1
               and not set(e) & set(dead) and frozenset(e) not in map(frozenset, links)]
    lanes = draw(st.lists(st.sampled_from(bundles), max_size=2, unique_by=frozenset)) \
        if bundles else []
    g = f
    if links or dead or lanes:
        try:
            g = f.without(links=links, chips=dead, lanes=lanes)
        except FabricError:
            g = f
    lab = _domains(g)
    by = {}
    for c in g.endpoints:
        by.setdefault(lab[c], []).append(c)
    doms = draw(st.permutations(sorted(by)))
    doms = doms[:len(doms) - draw(st.integers(0, len(doms) - 1))]     # all of them first
    per = draw(st.integers(1, min(len(by[d]) for d in doms)))
    chips = [c for d in doms for c in draw(st.permutations(by[d]))[:per]]
    chips = draw(st.permutations(chips))
    kernel = draw(st.sampled_from(KERNELS))
    rdma = kernel in PER_EXPERT and draw(st.booleans())
    routing = draw(st.sampled_from(["uniform", "balanced", "node-limited:1", "node-limited:2"]))
    return g, list(chips), kernel, draw(st.sampled_from([1, 3, 64])), routing, rdma


@settings(max_examples=60, deadline=None)
@given(_cases())
def test_link_and_nic_bytes_and_stage_times_are_the_brute_force(case):
    g, chips, kernel, tokens, routing, rdma = case
    try:
        r = moe_exchange(g, "deepseek-v3", tokens, chips, kernel=kernel, dispatch_bytes=1,
                         combine_bytes=2, routing=routing, transport="rdma" if rdma else None)
    except RoutingError:
        event("refused: no route")
        with pytest.raises(LookupError):       # a refusal the brute force shares
            reference(g, chips, kernel, tokens, 1.0, routing, rdma)
        return
    except (NotApplicableError, SpecError):   # a kernel's reach, a routing's node split
        event("refused: reach or split")
        return
    event(f"compared: {kernel}, {'network' if r.nic_bytes else 'one domain'}")
    links, nics, net_links = reference(g, chips, kernel, tokens, r.dispatch_bytes, routing, rdma)
    assert set(r.link_bytes) == set(links)
    for e, b in links.items():
        assert r.link_bytes[e] == pytest.approx(b, rel=1e-9)
    assert set(r.nic_bytes) == set(nics)
    for n, (sent, recv) in nics.items():
        assert r.nic_bytes[n] == pytest.approx((sent, recv), rel=1e-9)
    up_t, net_t = stage_times(g, links, nics, net_links)
    scale = r.combine_bytes / r.dispatch_bytes
    for ph, s in ((r.dispatch_phase, 1.0), (r.combine_phase, scale)):
        assert ph.scaleup == pytest.approx(up_t * s, rel=1e-9, abs=1e-18)
        assert ph.network == pytest.approx(net_t * s, rel=1e-9, abs=1e-18)


@st.composite
def _failure_of(draw):
    """An intact fabric, an EP group on it (as :func:`_cases` draws one) and failures that
    spare the group's chips: links, lanes, a chip outside the group."""
    f = built(draw(st.sampled_from(SPECS)))
    lab = _domains(f)
    by = {}
    for c in f.endpoints:
        by.setdefault(lab[c], []).append(c)
    doms = draw(st.permutations(sorted(by)))
    doms = doms[:len(doms) - draw(st.integers(0, len(doms) - 1))]
    per = draw(st.integers(1, min(len(by[d]) for d in doms)))
    chips = [c for d in doms for c in draw(st.permutations(by[d]))[:per]]
    edges = sorted(f.graph.edges(), key=str)
    links = draw(st.lists(st.sampled_from(edges), max_size=2, unique_by=frozenset))
    bundles = [e for e in edges if f.graph.edges[e].get("lanes", 1) > 1
               and frozenset(e) not in map(frozenset, links)]
    lanes = draw(st.lists(st.sampled_from(bundles), min_size=0 if links else 1, max_size=2,
                          unique_by=frozenset)) if bundles else []
    others = [c for c in f.endpoints if c not in chips]
    dead = draw(st.lists(st.sampled_from(others), max_size=1)) if others else []
    links = [e for e in links if not set(e) & set(dead)]
    lanes = [e for e in lanes if not set(e) & set(dead)]
    kernel = draw(st.sampled_from(KERNELS))
    rdma = kernel in PER_EXPERT and draw(st.booleans())
    routing = draw(st.sampled_from(["uniform", "balanced", "node-limited:2"]))
    return f, (links, lanes, dead), chips, kernel, draw(st.sampled_from([1, 3, 64, 512])), \
        routing, rdma


@settings(max_examples=40, deadline=None)
@given(_failure_of())
def test_a_failure_that_spares_the_group_never_makes_the_exchange_faster(case):
    """The same EP group, kernel, tokens and routing on the fabric with failed links, lanes or
    a chip outside the group: each phase takes no less time, or the model refuses by name (a
    rank cut off, a domain split unequally); the hunt's scratch runs (about 2,300 draws,
    /tmp/ibgda26/hunt/mono.py) found no exception."""
    f, (links, lanes, dead), chips, kernel, tokens, routing, rdma = case
    kw = {"kernel": kernel, "dispatch_bytes": 1, "combine_bytes": 2, "routing": routing,
          "transport": "rdma" if rdma else None}
    try:
        g = f.without(links=links, lanes=lanes, chips=dead)
    except FabricError:
        return
    try:
        intact = moe_exchange(f, "deepseek-v3", tokens, chips, **kw)
    except (RoutingError, NotApplicableError, SpecError):
        return
    try:
        degraded = moe_exchange(g, "deepseek-v3", tokens, chips, **kw)
    except (RoutingError, SpecError) as e:
        event("degraded: refused")
        assert str(e)                              # named, never a number
        return
    event("compared")
    assert degraded.dispatch >= intact.dispatch * (1 - 1e-12)
    assert degraded.combine >= intact.combine * (1 - 1e-12)
