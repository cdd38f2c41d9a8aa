"""One Hypothesis strategy for "a rank group of a perhaps degraded fabric, as a runtime sees it",
and one way to build that view (tests only; the point-to-point tests of sessions 24-28 use
them)."""

from degrade import built, degrade
from hypothesis import assume
from hypothesis import strategies as st

from analysis._collectives import _GroupView, resolve_ranks
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


def group_view(f, op="send-recv", ranks=None, M=None, transport=None):
    """The runtime's view of ``ranks`` (None: every endpoint) of ``f`` running ``op``
    (``analysis._collectives._GroupView``): ``M`` an all-to-allv's traffic matrix (normalised
    here to a total of 1), ``transport`` a transport spec or None (the fabric's own)."""
    nodes, idx = resolve_ranks(f, ranks)
    return _GroupView(f, op, nodes, idx, transport, None if M is None else M / M.sum(), True)
