"""One Hypothesis strategy for "this fabric with some random failures" (tests only).

``degrade(f, max_links=2, max_chips=1)`` draws up to ``max_links`` distinct links and up to
``max_chips`` chips of ``f`` and fails them, less the drawn links of a drawn chip (one call
refuses them as named twice: :func:`apart`); a draw the failure model refuses (every chip)
leaves ``f`` as it was.
"""

import functools

from hypothesis import strategies as st

import topologies
from fabric import FabricError


@functools.cache
def built(spec):
    """``topologies.build(spec)``, built once per test process (a fabric is never changed in
    place: failures give a new one), for the strategies' intact fabrics."""
    return topologies.build(spec)


def apart(links, chips=(), lanes=()):
    """``(links, lanes)`` less what one ``without`` call refuses as named twice beside
    ``chips``: a link or lane with an end among the chips (a failed node's links fail with
    it), a lane of one of the links (tests/test_audit_s17_failures.py). The degraded graph
    is the one the whole draw meant."""
    dead = set(chips)
    links = [e for e in links if not dead & set(e)]
    named = {frozenset(e) for e in links}
    return links, [e for e in lanes if not dead & set(e) and frozenset(e) not in named]


@st.composite
def degrade(draw, f, max_links=2, max_chips=1, min_links=0):
    edges = sorted(f.graph.edges(), key=str)
    links = draw(st.lists(st.sampled_from(edges), min_size=min_links, max_size=max_links,
                          unique_by=frozenset))
    chips = draw(st.lists(st.sampled_from(list(f.endpoints)), max_size=max_chips))
    links, _ = apart(links, chips)
    if links or chips:
        try:
            return f.without(links=links, chips=chips)
        except FabricError:
            pass
    return f


@st.composite
def group_on(draw, specs, max_links=3, max_chips=1):
    """``(f, nodes)``: a fabric of ``specs``, perhaps degraded, and an ordered group of
    1..all of its endpoints (the rank groups the per-node properties draw)."""
    f = draw(degrade(built(draw(st.sampled_from(specs))), max_links=max_links,
                     max_chips=max_chips))
    chips = list(f.endpoints)
    size = draw(st.integers(1, len(chips)))
    return f, draw(st.permutations(chips))[:size]
