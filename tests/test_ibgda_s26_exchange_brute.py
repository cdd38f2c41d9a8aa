"""Session 26 (ibgda, lead's hunt 17:37): ``analysis.moe_exchange`` on degraded fabrics of every
family the model routes.

The hunt's first property (per-link and per-NIC bytes and the stage times against a brute force
built from each pair of EP ranks' expected copies: tests/exchange_brute.py) now lives in
tests/test_ibgda_s27_sources.py, which draws the ranks that hold tokens too (all of them, this
session's draws, or fewer). Here: a failure that spares the EP group never makes the exchange
faster. Drawn: tests/exchange_brute.py's 13 fabric families and shapes, an EP group of equal ranks
per load/store domain, up to 2 failed links, 2 failed lanes and a failed chip outside the group,
every kernel that moves bytes, 1-512 tokens, uniform / balanced / node-limited routing, RDMA-only
transport. The hunt's scratch runs (about 2,300 draws) found no
exception: this pins it.
"""
from degrade import built
from exchange_brute import (
    KERNELS,
    PER_EXPERT,
    SPECS,
    ep_group,
)
from hypothesis import event, given, settings
from hypothesis import strategies as st

from analysis import moe_exchange
from analysis._schedules import NotApplicableError
from fabric import FabricError, RoutingError, SpecError


@st.composite
def _failure_of(draw):
    """An intact fabric, an EP group on it (as :func:`_cases` draws one) and failures that
    spare the group's chips: links, lanes, a chip outside the group."""
    f = built(draw(st.sampled_from(SPECS)))
    chips = draw(ep_group(f, mixed=False))
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
    rank cut off, a domain split unequally); the hunt's scratch runs (about 2,300
    draws) found no exception."""
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
