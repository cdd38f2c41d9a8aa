"""Session 31 (R30-2): one conversion of who holds tokens, ``fabric._exchange.held_counts``.

``moe_exchange``, ``ExchangeKernel.receive_walk`` and ``busiest_token`` each turned their
``(tokens, sources)`` into the busiest rank's tokens and the tokens sent in all on their own,
with three different sets of accepted spellings. Now all three read them from one tuple of
each EP rank's count. Outputs are unchanged where a call was answered (a probe of ~10,000
random calls, /work/notes/ibgda.md); what changed: ``busiest_token`` refuses ``sources``
beyond its ``ep`` ranks by name (17 source ranks of 16 were answered), and takes the positions
or the per-rank counts ``moe_exchange`` takes, as ``receive_walk`` now does too.
"""
import pytest

from analysis._moe_exchange import busiest_token
from fabric import SpecError, exchange_kernel


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
