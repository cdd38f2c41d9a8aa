"""aiconfigurator's EP16/EP32 NVLinkOneSided rows as held-out rows (session 32, moe).

NVIDIA's collector (ai-dynamo/aiconfigurator collector/slurm_comm_collector/
collect_trtllm_alltoall.py at cef980f2b) routes with ``generate_balanced_expert_ids``: at
``ep >= top_k`` token ``i`` of EVERY rank goes to the ``top_k`` consecutive ranks of group
``i mod (ep / top_k)``, slot ``k`` to the group's ``k``-th rank; and it logs rank 0's time
only (``run_benchmark``: results logged on rank 0). The model's ``"balanced"`` routing is the
perfect router's rotation (token ``t`` of rank ``r`` to ranks ``(t k + r + i) mod ep``,
:func:`analysis._moe_exchange.reach_distribution`). The rows are carried where the two agree
for what the model prices: rank 0's own tokens and every rank's received copies (token
counts that ``ep / top_k`` divides); the 1-token rows stayed out (``LEFT_OUT``) until session 33
priced every EP16/EP32 row with the generator itself (routing ``"grouped"``).
"""

import fidelity
import fidelity_heldout_moe
import numpy as np
import pytest

from analysis._moe_exchange import busiest_token

K, E = 8, 256


def _collector(ep, tokens):
    """``[rank, token, slot] -> destination rank`` under the collector's generator (every
    rank alike)."""
    t = np.arange(tokens)[:, None]
    dest = (t % (ep // K)) * K + np.arange(K)[None, :]
    return np.broadcast_to(dest, (ep, tokens, K))


def _rotation(ep, tokens):
    """``[rank, token, slot] -> destination rank`` under the perfect router's rotation."""
    r = np.arange(ep)[:, None, None]
    t = np.arange(tokens)[None, :, None]
    return (t * K + r + np.arange(K)[None, None, :]) % ep


def _received(dest, ep):
    return np.bincount(dest.ravel(), minlength=ep)


def _busiest(dest):
    """``(all, remote)`` distinct ranks of the busiest token over every rank and token."""
    ep = dest.shape[0]
    own = np.arange(ep)[:, None, None]
    remote = (dest != own).sum(axis=2)            # the K slots name K distinct ranks here
    return float(K), float(remote.max())


@pytest.mark.parametrize("ep", [16, 32])
@pytest.mark.parametrize("tokens", [16, 128, 2048])
def test_rank_zero_and_receivers_agree_where_the_rows_are_carried(ep, tokens):
    col, rot = _collector(ep, tokens), _rotation(ep, tokens)
    assert np.array_equal(col[0], rot[0])        # rank 0: the rotation's own tokens
    assert (_received(col, ep) == tokens * K).all()
    assert (_received(rot, ep) == tokens * K).all()
    # the busiest token the model charges (every rank alike) is the collector's busiest
    assert busiest_token(E, K, ep, 1, "balanced", tokens) == _busiest(col) == _busiest(rot)


@pytest.mark.parametrize("ep", [16, 32])
def test_one_token_is_not_the_rotation(ep):
    """At 1 token rank 0 receives a copy from every rank (the rotation: 8), the ranks of the
    other groups none, and their token reaches 8 peers where the model's busiest has 7."""
    col, rot = _collector(ep, 1), _rotation(ep, 1)
    assert _received(col, ep)[0] == ep and _received(col, ep)[K:].sum() == 0
    assert (_received(rot, ep) == K).all()
    assert busiest_token(E, K, ep, 1, "balanced", 1) == (8.0, 7.0) != _busiest(col)


def test_the_carried_rows_are_priced_with_the_collectors_generator():
    """Session 33: every EP16/EP32 row, 1 token included, is priced with routing 'grouped' (the
    generator itself, tests/test_moe_s33_grouped.py); at the token counts session 32 carried
    under 'balanced' both give the same figure."""
    rows = [r for r in fidelity.heldout_rows() if r["id"].startswith("aic-trtllm-ep")]
    wide = {}
    for r in rows:
        ep, bs = int(r["gpus"]), int(r["id"].split("-bs")[1].split("-")[0])
        assert r["id"] in fidelity_heldout_moe.CASES
        if ep > K:
            wide.setdefault(ep, set()).add(bs)
            model, how = fidelity_heldout_moe.CASES[r["id"]](r)
            assert "grouped, L2 warm" in how, r["id"]
            if bs > 1:
                phase = r["id"].rsplit("-", 1)[1]
                assert model == fidelity_heldout_moe._aic(bs, phase, "balanced")(r)[0], r["id"]
    assert wide == {16: {1, 16, 128, 2048}, 32: {1, 16, 128, 2048}}
