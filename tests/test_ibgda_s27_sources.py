"""Session 27 (ibgda): ``moe_exchange(..., sources=)``, the EP ranks that hold tokens.

A decode batch smaller than the EP group leaves ranks without tokens: only the first
``sources`` EP ranks send in the dispatch and receive in the combine, every rank still holds
experts. Checked here: the traffic of every kernel family that moves bytes against the brute
force of tests/exchange_brute.py (each pair's expected copies from the sending ranks only,
routed pair by pair; the combine's pairs sent back), on intact and degraded fabrics; the
default and ``sources=ep`` equal to the model before the argument, field for field; the
collective kernel's matrix; the counts of what a rank receives; bad values refused by name.
"""
import dataclasses

import numpy as np
import pytest
from degrade import built
from exchange_brute import (
    KERNELS,
    PER_EXPERT,
    SPECS,
    assert_model_is_brute_force,
    degraded,
    ep_group,
    loads,
    pairs,
)
from fake_collective import Recorder
from hypothesis import event, given, settings
from hypothesis import strategies as st

import topologies
from analysis import moe_exchange
from analysis._moe_exchange import _network_port
from analysis._schedules import NotApplicableError
from fabric import (
    EXCHANGE_NIC_EFFICIENCY,
    MAX_BYTES,
    RoutingError,
    SpecError,
    chip_spec,
    exchange_kernel,
)


@st.composite
def _cases(draw):
    """A fabric (intact, or with up to 3 failed links, a failed chip, 2 failed lanes), an EP
    group, a kernel, tokens, routing, RDMA-only transport, and the ranks that hold tokens:
    every rank (``None``, session 26's draws) or fewer (when the group has more than one), the
    first so many or drawn positions."""
    g = draw(degraded(built(draw(st.sampled_from(SPECS)))))
    chips = draw(ep_group(g))
    kernel = draw(st.sampled_from(KERNELS))
    rdma = kernel in PER_EXPERT and draw(st.booleans())
    routing = draw(st.sampled_from(["uniform", "balanced", "node-limited:1", "node-limited:2"]))
    sources = draw(st.one_of(st.none(), st.integers(1, max(len(chips) - 1, 1)),
                             st.lists(st.integers(0, len(chips) - 1), min_size=1,
                                      max_size=max(len(chips) - 1, 1), unique=True)))
    return g, chips, kernel, draw(st.sampled_from([1, 3, 64])), routing, rdma, sources


@settings(max_examples=90, deadline=None)
@given(_cases())
def test_traffic_of_the_ranks_that_hold_tokens_is_the_brute_force(case):
    """Dispatch: link and NIC bytes and both stage times from the sending ranks' pairs only;
    combine: the stage times of those pairs sent back, at the combine's bytes. A draw the model
    refuses must be one the brute force cannot route either. (With every rank sending, this is
    session 26's hunt property, tests/test_ibgda_s26_exchange_brute.py, moved here.)"""
    g, chips, kernel, tokens, routing, rdma, sources = case
    try:
        r = moe_exchange(g, "deepseek-v3", tokens, chips, kernel=kernel, dispatch_bytes=1,
                         combine_bytes=2, routing=routing, transport="rdma" if rdma else None,
                         sources=sources)
    except RoutingError:
        event("refused: no route")
        with pytest.raises(LookupError):       # a refusal the brute force shares
            loads(g, chips, *pairs(g, chips, kernel, tokens, 1.0, routing, rdma))
        return
    except (NotApplicableError, SpecError):   # a kernel's reach, a routing's node split
        event("refused: reach or split")
        return
    event(f"compared: {kernel}, {'network' if r.nic_bytes else 'one domain'}")
    assert_model_is_brute_force(r, g, chips, *pairs(g, chips, kernel, tokens, r.dispatch_bytes,
                                                    routing, rdma, sources))


def _fields(r):
    return {f.name: getattr(r, f.name) for f in dataclasses.fields(r)}


@settings(max_examples=25, deadline=None)
@given(_cases())
def test_every_rank_holding_tokens_is_the_default_field_for_field(case):
    g, chips, kernel, tokens, routing, rdma, _ = case
    kw = {"kernel": kernel, "dispatch_bytes": 1, "combine_bytes": 2, "routing": routing,
          "transport": "rdma" if rdma else None}
    try:
        default = moe_exchange(g, "deepseek-v3", tokens, chips, **kw)
    except (RoutingError, NotApplicableError, SpecError) as e:
        with pytest.raises(type(e), match="."):
            moe_exchange(g, "deepseek-v3", tokens, chips, sources=len(chips), **kw)
        return
    every = moe_exchange(g, "deepseek-v3", tokens, chips, sources=len(chips), **kw)
    assert _fields(every) == _fields(default)
    assert repr(every) == repr(default)


def test_fewer_ranks_with_tokens_send_fewer_bytes_through_the_nics_and_forwarders():
    """Two 8-GPU servers, EP 16, the first 8 ranks (server 0) hold the tokens: DeepEP normal's
    forwarders in each server deliver for one source of their rail instead of two, so every
    scale-up link carries half; the NICs of server 0 only send and server 1's only receive."""
    f = topologies.build("rail:servers=2,gpus=8,links=8,nic=ib-ndr,chip=h100")
    kw = {"kernel": "deepep-normal", "dispatch_bytes": 1, "combine_bytes": 2}
    full = moe_exchange(f, "deepseek-v3", 64, 16, **kw)
    half = moe_exchange(f, "deepseek-v3", 64, 16, sources=8, **kw)
    assert set(half.link_bytes) == set(full.link_bytes)
    for e, b in full.link_bytes.items():
        assert half.link_bytes[e] == pytest.approx(b / 2, rel=1e-12)
    for nic, (sent, recv) in half.nic_bytes.items():
        full_sent, full_recv = full.nic_bytes[nic]
        assert (sent, recv) in ((full_sent, 0.0), (0.0, full_recv))
    assert sum(1 for s, _ in half.nic_bytes.values() if s) == 8


def test_the_combine_receives_at_the_ranks_that_hold_tokens():
    """One source (chip0 of server 0) and EP 16 over two servers: its dispatch only sends
    through its NIC (a background arriving on the NICs leaves it alone while the receivers'
    share stays below the port), and its combine receives everything back there, so the
    background slows the combine by ``B / (B - background)``, ``B`` the port's achieved rate."""
    f = topologies.build("rail:servers=2,gpus=8,links=8,nic=ib-ndr,chip=h100")
    kw = {"kernel": "deepep-low-latency", "dispatch_bytes": 1, "combine_bytes": 2,
          "sources": 1}
    _, rate = _network_port(f, "chip0", EXCHANGE_NIC_EFFICIENCY.value)
    quiet = moe_exchange(f, "deepseek-v3", 64, 16, **kw)
    busy = moe_exchange(f, "deepseek-v3", 64, 16, nic_background=rate / 2, **kw)
    assert busy.dispatch_phase.network == quiet.dispatch_phase.network
    assert busy.combine_phase.network == pytest.approx(2 * quiet.combine_phase.network,
                                                       rel=1e-12)


def test_the_collective_kernel_gets_the_senders_rows_and_their_transpose():
    spy = Recorder()
    f = topologies.build("dgx-h100")
    moe_exchange(f, "deepseek-v3", 4, 8, kernel="all-to-allv", dispatch_bytes=1,
                 combine_bytes=2, sources=3, collective=spy)
    (op_d, m_d), (op_c, m_c) = spy.calls
    assert op_d == op_c == "all-to-allv"
    assert m_d[3:].sum() == 0 and (m_d[:3] > 0).sum() == 3 * 7     # senders' rows, no self
    assert np.allclose(m_c, m_d.T * 2)


def test_what_a_rank_receives_scales_with_the_ranks_that_hold_tokens():
    """DeepEP low-latency's dispatch copies every received (token, expert) copy out of its
    receive buffer (read and write: 2 x received x bytes through HBM): a rank receives
    ``tokens x k / ep`` copies from each source, so ``sources / ep`` of the full group's; its
    combine's receive sum reads its own tokens' ``k`` partials and writes the sum, whatever
    the others hold."""
    f = topologies.build("dgx-h100")
    hbm = chip_spec("h100").hbm_bandwidth
    kw = {"kernel": "deepep-low-latency", "dispatch_bytes": 1, "combine_bytes": 2}
    b_d = 7168 + exchange_kernel("deepep-low-latency").message_header
    for sources in (1, 3, 8):
        r = moe_exchange(f, "deepseek-v3", 16, 8, sources=sources, **kw)
        assert r.dispatch_phase.local_copy == pytest.approx(
            2 * (16 * 8 * sources / 8) * b_d / hbm, rel=1e-12)
        assert r.combine_phase.local_copy == pytest.approx((16 * 8 + 16) * 7168 * 2 / hbm,
                                                           rel=1e-12)


def test_pplx_receive_walk_and_combine_copies_follow_the_received_copies():
    """pplx at 128 tokens on one server's 8 H100: 1,024 copies received over 132 blocks (8 a block) when
    every rank sends; with 2 sources, 256 (2 a block), what every rank holding 32 tokens
    gives: over RDMA alone (no load/store fences, whose share of peers differs) the dispatch's
    drain chain (the receive walk and copies) and the combine's interleaved chain (its
    copies sent back and their posts) equal that group's; the grids (sized by maxNumTokens:
    132 blocks both) do not move."""
    k = exchange_kernel("pplx")
    assert k.receive_walk(256, 8, 128, 8) == (255, 8)
    assert k.receive_walk(256, 8, 128, 8, sources=2) == (255, 2)
    f = topologies.build("rail:servers=2,gpus=8,links=8,nic=ib-ndr,chip=h100")
    kw = {"kernel": "pplx", "dispatch_bytes": 1, "combine_bytes": 2, "transport": "rdma"}
    full = moe_exchange(f, "deepseek-v3", 128, 8, **kw)
    two = moe_exchange(f, "deepseek-v3", 128, 8, sources=2, **kw)
    same = moe_exchange(f, "deepseek-v3", 32, 8, **kw)
    assert two.dispatch_phase.chain == same.dispatch_phase.chain < full.dispatch_phase.chain
    assert two.combine_phase.interleaved == same.combine_phase.interleaved \
        < full.combine_phase.interleaved


def test_a_batch_too_large_for_every_rank_fits_when_few_hold_it():
    f = topologies.build("dgx-h100")
    kw = {"kernel": "deepep-low-latency", "dispatch_bytes": 2, "combine_bytes": 2}
    tokens = 2 * MAX_BYTES // (8 * 7 * 7168 * 2)       # p_rank < 1: ~1.3x the limit at 8
    with pytest.raises(SpecError, match="over 8 EP ranks moves"):
        moe_exchange(f, "deepseek-v3", tokens, 8, **kw)
    r = moe_exchange(f, "deepseek-v3", tokens, 8, sources=1, **kw)
    assert r.dispatch > 0
    with pytest.raises(SpecError, match=r"over 8 EP ranks \(2 holding tokens\) moves"):
        moe_exchange(f, "deepseek-v3", 8 * tokens, 8, sources=2, **kw)


_SOURCES_RULE = (r"sources must be an int from 1 to the 8 EP ranks .* or the positions 0\.\.7 "
                 r"of those that do, each once")


@pytest.mark.parametrize("bad, error, match", [
    *[(v, SpecError, _SOURCES_RULE) for v in (0, 9, -1, [], [8], [1, 1])],
    ([-1], SpecError, r"sources\[0\] must be a position 0\.\.7 of the EP ranks, got sources\[0\]=-1"),
    # another kind: a TypeError (session 31, lead's rule), the same rule named
    *[(v, TypeError, _SOURCES_RULE) for v in (2.0, 1.5, True, "2", "01")],
    *[([v], TypeError, r"sources\[0\] must be a position 0\.\.7") for v in (True, 1.0, "chip0")],
])
def test_sources_must_be_an_int_from_one_to_the_ep_ranks(bad, error, match):
    f = topologies.build("dgx-h100")
    with pytest.raises(error, match=match):
        moe_exchange(f, "deepseek-v3", 4, 8, kernel="pplx", dispatch_bytes=1,
                     combine_bytes=2, sources=bad)


def test_positions_of_the_ranks_holding_tokens_are_the_first_so_many_in_any_order():
    f = topologies.build("rail:servers=2,gpus=8,links=8,nic=ib-ndr,chip=h100")
    for kernel in ("pplx", "deepep-normal", "all-to-allv"):
        kw = {"kernel": kernel, "dispatch_bytes": 1, "combine_bytes": 2}
        first = moe_exchange(f, "deepseek-v3", 4, 16, sources=3, **kw)
        assert _fields(moe_exchange(f, "deepseek-v3", 4, 16, sources=[2, 0, 1], **kw)) \
            == _fields(first)
        assert _fields(moe_exchange(f, "deepseek-v3", 4, 16, sources=range(16), **kw)) \
            == _fields(moe_exchange(f, "deepseek-v3", 4, 16, **kw))


def test_positions_keep_each_holders_rail_peer():
    """DeepEP normal across two 8-GPU servers with two spines: chip3 alone holds tokens. Named
    by its position, it keeps its place in the EP order, so its copies cross the network once,
    on its own rail to chip11, and chip11 fans them out; moving it first in ``ep`` (and
    ``sources=1``) instead makes it the first server's local rank 0, paired with chip8, a path
    over a spine between rails."""
    f = topologies.build("rail:servers=2,gpus=8,spines=2,chip=h100")
    kw = {"kernel": "deepep-normal", "dispatch_bytes": 1, "combine_bytes": 2}
    kept = moe_exchange(f, "deepseek-v3", 2, 16, sources=[3], **kw)
    assert {n for n, (sent, _) in kept.nic_bytes.items() if sent} == {"nic3"}
    assert {n for n, (_, recv) in kept.nic_bytes.items() if recv} == {"nic11"}
    moved = [3] + [r for r in range(16) if r != 3]
    first = moe_exchange(f, "deepseek-v3", 2, moved, sources=1, **kw)
    assert {n for n, (_, recv) in first.nic_bytes.items() if recv} == {"nic8"}


def test_receive_walk_refuses_sources_beyond_its_ranks():
    with pytest.raises(SpecError, match="sources must be an int from 1 to the 8 EP ranks"):
        exchange_kernel("pplx").receive_walk(256, 8, 4, 8, sources=9)
