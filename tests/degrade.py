"""One Hypothesis strategy for "this fabric with some random failures" (tests only).

``degrade(f, max_links=2, max_chips=1)`` draws up to ``max_links`` distinct links and up to
``max_chips`` chips of ``f`` and fails them; a draw the failure model refuses (a chip whose
link is also drawn and is thereby named twice, say) leaves ``f`` as it was.
"""

from hypothesis import strategies as st

from fabric import FabricError


@st.composite
def degrade(draw, f, max_links=2, max_chips=1, min_links=0):
    edges = sorted(f.graph.edges(), key=str)
    links = draw(st.lists(st.sampled_from(edges), min_size=min_links, max_size=max_links,
                          unique_by=frozenset))
    chips = draw(st.lists(st.sampled_from(list(f.endpoints)), max_size=max_chips))
    if links or chips:
        try:
            return f.without(links=links, chips=chips)
        except FabricError:
            pass
    return f
