"""Session 27 (models): a decode step with fewer tokens than expert ranks sends from the
ranks that hold tokens (``moe_exchange(sources=)``, ibgda's), not one token from every rank.

Before, ``_communication`` handed ``moe_exchange`` ``max(1, ceil(tokens / ep))`` tokens on
every EP rank: at batch 1 on ep 8, eight tokens' bytes and the busiest of eight draws, an
upper bound (session 26's docstring said so). Now the sequences fill the attention groups
and each group's tokens its ranks (``analysis._decode._rank_tokens``), and only those ranks
send.
"""
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import analysis
from analysis import _decode as D
from analysis._moe_exchange import moe_exchange
from fabric import FabricError
from tests.decode_settings import decode_settings
from tests.degrade import built, degrade


def _round_robin(batch, q, dp, tp):
    """Brute force: sequence i to group i mod dp, a group's j-th token to its rank j mod tp."""
    held = [0] * (dp * tp)
    per_group = [0] * dp
    for i in range(batch):
        per_group[i % dp] += 1
    for g, n in enumerate(per_group):
        for j in range(n * q):
            held[g * tp + j % tp] += 1
    return held


@settings(max_examples=200, deadline=None)
@given(batch=st.integers(1, 40), q=st.integers(1, 6), dp=st.integers(1, 9),
       tp=st.integers(1, 8))
def test_rank_tokens_are_round_robin(batch, q, dp, tp):
    held = D._rank_tokens(batch, q, dp, tp)
    assert held == _round_robin(batch, q, dp, tp)
    assert sum(held) == batch * q


CASES = [("hgx-b200", "one-sided", "tp=1,dp=8", 1), ("hgx-b200", "one-sided", "tp=1,dp=8", 3),
         ("hgx-h200", "deepep-low-latency", "tp=2,dp=4", 1),
         ("hgx-h200", "deepep-low-latency", "tp=2,dp=4", 5),
         ("cluster-128", "deepep-low-latency", "tp=1,dp=128", 2),
         ("cluster-128", "deepep-normal", "tp=8,dp=16", 3)]     # holders 0, 8, 16: not a prefix


@pytest.mark.parametrize("spec, kernel, layout, batch", CASES)
def test_the_exchange_is_the_holders(spec, kernel, layout, batch):
    f = built(spec)
    s = decode_settings(f, "deepseek-v3", batch, layout, ep_kernel=kernel)
    ex = D._communication(s, s.routing).exchange
    ep = s.lay.ep
    ranks = [f.endpoints[i] for i in s.pos[:ep]]
    held = _round_robin(batch, 1, s.lay.dp, s.lay.tp)
    holders = [i for i, n in enumerate(held) if n]
    kw = {"kernel": s.kern, "dispatch_bytes": s.dispatch_b, "combine_bytes": s.combine_b,
          "runtime": s.runtime, "chip": s.chip, "collective": s.collective, "kernel_gap": 0.0,
          "nic_background": s.nic_background}
    want = moe_exchange(f, s.m, max(held), ranks, sources=holders, **kw)
    assert (ex.dispatch, ex.combine) == (want.dispatch, want.combine)
    every = moe_exchange(f, s.m, 1, ranks, **kw)        # the old upper bound
    assert ex.dispatch <= every.dispatch and ex.combine <= every.combine
    if spec == "hgx-b200" and batch == 1:   # one rank's token, not one on each of eight
        assert ex.dispatch < every.dispatch - 0.5e-6


@settings(max_examples=10, deadline=None)
@given(data=st.data(), batch=st.integers(1, 7))
def test_fewer_holders_never_cost_more_on_degraded_fabrics(data, batch):
    f = data.draw(degrade(built("hgx-b200"), max_links=2, max_chips=0))
    kw = {"context": 2048, "layout": "tp=1,dp=8", "ep_kernel": "one-sided"}
    try:
        few = analysis.decode_step("deepseek-v3", f, batch=batch, **kw).layers[-1]
        full = analysis.decode_step("deepseek-v3", f, batch=8, **kw).layers[-1]
    except FabricError as e:    # failures that part the chips are refused by name
        assert "failures" in str(e) or "domain" in str(e)
        return
    assert few.dispatch <= full.dispatch and few.combine <= full.combine


def test_the_instance_keeps_its_rank_order(monkeypatch):
    # the holders go by their EP positions: the ranks (and so the experts' placement, each
    # rank's rail peer) stay in the instance's order, not holders first (ibgda 20:40)
    import analysis._moe_exchange as X

    seen = []
    real = X.moe_exchange

    def spy(fabric, model, tokens, ep, **kw):
        seen.append((list(ep), tokens, kw.get("sources")))
        return real(fabric, model, tokens, ep, **kw)

    monkeypatch.setattr(X, "moe_exchange", spy)
    f = built("cluster-128")
    s = decode_settings(f, "deepseek-v3", 3, "tp=8,dp=16", ep_kernel="deepep-normal")
    D._communication(s, s.routing)
    # each EP rank's own count in that order (session 29: was sources=[0, 8, 16])
    held = [1 if i in (0, 8, 16) else 0 for i in range(128)]
    assert seen == [([f.endpoints[i] for i in s.pos[:128]], held, None)]
