"""Session 28 (reader, R28-1): a decode step's exchange kernel takes the tokens each EP rank
holds by one rule at every token count (``analysis._decode._rank_tokens``: the sequences over
the attention groups, each group's tokens over its ranks; the ranks that hold none do not
send, each sender at the most any holds).

Before, that rule held only below EP-many tokens; at ``tokens >= ep`` every rank was handed
``ceil(tokens / ep)``: less than the busiest rank where the groups hold unevenly (batch 9 with
one draft on tp=1,dp=8: group 0 holds 4 tokens, priced 3), and a share for ranks that hold
none (batch 1 with 7 drafts on dp=8: one token on each of 8 ranks, really 8 on one).
"""
import pytest
from decode_settings import decode_settings
from degrade import built

from analysis import _decode as D
from analysis._moe_exchange import moe_exchange

# (fabric, kernel, layout, batch, tokens a sequence): every case has tokens >= ep
CASES = [("hgx-b200", "one-sided", "tp=1,dp=8", 9, 2),           # group 0 holds 4, not 3
         ("hgx-b200", "one-sided", "tp=1,dp=8", 1, 8),           # one rank holds all 8
         ("hgx-b200", "one-sided", "tp=1,dp=8", 5, 2),           # 3 ranks hold none
         ("hgx-h200", "deepep-low-latency", "tp=2,dp=4", 3, 4),  # the last group holds none
         ("hgx-b200", "one-sided", "tp=1,dp=8", 16, 1)]          # even: 2 on every rank


@pytest.mark.parametrize("spec, kernel, layout, batch, q", CASES)
def test_the_exchange_is_the_holders_at_every_count(spec, kernel, layout, batch, q):
    f = built(spec)
    s = decode_settings(f, "deepseek-v3", batch, layout, ep_kernel=kernel,
                        tokens_per_sequence=q)
    ep = s.lay.ep
    assert batch * q >= ep
    held = D._rank_tokens(batch, q, s.lay.dp, s.lay.tp)
    ranks = [f.endpoints[i] for i in s.pos[:ep]]
    kw = {"kernel": s.kern, "dispatch_bytes": s.dispatch_b, "combine_bytes": s.combine_b,
          "runtime": s.runtime, "chip": s.chip, "collective": s.collective, "kernel_gap": 0.0,
          "nic_background": s.nic_background}
    # each rank its own count (session 29, ibgda: before, each holder the most any holds)
    want = moe_exchange(f, s.m, held, ranks, **kw)
    ex = D._communication(s, s.routing).exchange
    assert (ex.dispatch, ex.combine) == (want.dispatch, want.combine)
    assert ex.tokens_per_rank == max(held)


def test_the_busiest_group_sets_the_senders_tokens():
    # batch 9 with one draft on dp=8: the first group holds 2 sequences x 2 tokens; the old
    # rule's ceil(18 / 8) = 3 tokens a rank priced less than that rank sends
    f = built("hgx-b200")
    s = decode_settings(f, "deepseek-v3", 9, "tp=1,dp=8", ep_kernel="one-sided",
                        tokens_per_sequence=2)
    ex = D._communication(s, s.routing).exchange
    assert ex.tokens_per_rank == 4 == s.t_dp
