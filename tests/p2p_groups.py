"""One Hypothesis strategy for "a rank group of a perhaps degraded fabric, as a runtime sees it"
(tests only; the point-to-point properties of sessions 26-27 draw it)."""

from degrade import built, degrade
from hypothesis import assume
from hypothesis import strategies as st

from analysis._collectives import resolve_ranks
from fabric import RoutingError


@st.composite
def rank_group(draw, specs, max_ranks=None, max_links=2, max_chips=1):
    """``(f, ranks, nodes, idx)``: a fabric of ``specs`` with up to ``max_links`` links and
    ``max_chips`` chips failed, 2..``max_ranks`` (default all) distinct endpoints of it, and
    their resolved group (``analysis._collectives.resolve_ranks``); a draw whose failures cut a
    rank off (refused by name, no group) is rejected."""
    f = draw(degrade(built(draw(st.sampled_from(specs))), max_links=max_links,
                     max_chips=max_chips))
    eps = list(f.endpoints)
    top = len(eps) if max_ranks is None else min(len(eps), max_ranks)
    ranks = draw(st.lists(st.sampled_from(eps), min_size=2, max_size=top, unique=True))
    try:
        nodes, idx = resolve_ranks(f, ranks)
    except RoutingError:
        assume(False)
    return f, ranks, nodes, idx
