"""Session 31 (R30-2): one conversion of who holds tokens, ``fabric._exchange.held_counts``.

``moe_exchange``, ``ExchangeKernel.receive_walk`` and ``busiest_token`` each turned their
``(tokens, sources)`` into the busiest rank's tokens and the tokens sent in all on their own,
with three different sets of accepted spellings. Now all three read them from one tuple of
each EP rank's count. Outputs are unchanged where a call was answered (a probe of ~10,000
random calls); what changed: ``busiest_token`` refuses ``sources``
beyond its ``ep`` ranks by name (17 source ranks of 16 were answered), and takes the positions
or the per-rank counts ``moe_exchange`` takes, as ``receive_walk`` now does too.
"""
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from analysis._moe_exchange import busiest_token
from fabric import SpecError, exchange_kernel
from fabric._exchange import held_counts


def test_busiest_token_refuses_more_source_ranks_than_ep():
    with pytest.raises(SpecError, match=r"sources must be an int from 1 to the 16 EP ranks"):
        busiest_token(256, 8, 16, 1, "uniform", 5, 17)


def test_every_spelling_of_the_same_holders_answers_alike():
    """Two of 8 ranks hold 4 tokens each: the first two by count, by positions, or as each
    rank's count; the busiest token and the receive walk read the same max (4) and sum (8)."""
    pplx = exchange_kernel("pplx")
    for routing in ("uniform", "balanced"):
        want = busiest_token(256, 8, 8, 1, routing, 4, 2)
        assert busiest_token(256, 8, 8, 1, routing, 4, [5, 1]) == want
        assert busiest_token(256, 8, 8, 1, routing, [0, 4, 0, 0, 0, 4, 0, 0], None) == want
    want = pplx.receive_walk(256, 8, 4, 8, sources=2)
    assert pplx.receive_walk(256, 8, 4, 8, sources=[5, 1]) == want
    assert pplx.receive_walk(256, 8, [0, 4, 0, 0, 0, 4, 0, 0], 8) == want


@st.composite
def _holders(draw):
    """An EP size, one count, and the ranks holding it spelled as None, an int or positions."""
    ep = draw(st.sampled_from([1, 2, 4, 8, 16]))
    tokens = draw(st.integers(1, 40))
    form = draw(st.sampled_from(["all", "first", "positions"]))
    if form == "all":
        return ep, tokens, None, set(range(ep))
    if form == "first":
        n = draw(st.integers(1, ep))
        return ep, tokens, n, set(range(n))
    pos = draw(st.lists(st.integers(0, ep - 1), min_size=1, max_size=ep, unique=True))
    return ep, tokens, pos, set(pos)


@settings(max_examples=40)
@given(_holders())
def test_one_count_and_its_holders_read_as_each_ranks_count(case):
    """Every spelling of who holds one count is the list of each rank's count, for the
    conversion and for both functions that read it (the per-rank list is their brute force)."""
    ep, tokens, sources, holding = case
    counts = [tokens if r in holding else 0 for r in range(ep)]
    assert held_counts(tokens, ep, sources) == tuple(counts)
    pplx = exchange_kernel("pplx")
    assert pplx.receive_walk(256, 8, tokens, ep, sources) == pplx.receive_walk(256, 8, counts, ep)
    assert busiest_token(256, 8, ep, 1, "uniform", tokens, sources) == busiest_token(
        256, 8, ep, 1, "uniform", counts, None)
