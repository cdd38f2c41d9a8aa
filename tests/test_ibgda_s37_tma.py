"""Session 37 (ibgda): the low-latency combine's TMA terms are written once
(``fabric._exchange._tma_combine``), for NCCL EP's kernel and DeepEP d28bd67's alike, and a
kernel states no staging round for a phase that has none.

Both codes send the combine's rows through shared memory with TMA (2,048-B chunks, two loads
in flight: 4,096 B per dependent load) but copy the dispatch with warps
(``UNROLLED_WARP_COPY``): :attr:`fabric.ExchangeKernel.stage_vector`'s dispatch entry is 0,
which its Parameter shows as ``none``; a chain that counts staging rounds in a phase whose
entry is 0 is refused, naming the entry. The times are those of any dispatch entry, which no
dispatch step counts.
"""

import dataclasses

import fidelity_heldout_moe
import pytest

import topologies
from analysis import moe_exchange
from fabric import SpecError, exchange_kernel


@pytest.mark.parametrize("kern", [exchange_kernel("ncclep-low-latency"),
                                  exchange_kernel("deepep-low-latency@d28bd67")],
                         ids=["ncclep", "d28bd67"])
def test_tma_kernels_stage_the_combine_only(kern):
    assert kern.stage_vector == (0, 4096) and kern.reduce_stages == 3
    (p,) = [p for p in kern.parameters() if p.name.endswith(".stage_vector")]
    assert (p.value, p.unit) == ("none+4096", "B")
    assert "none for the dispatch" in p.source and "UNROLLED_WARP_COPY" in p.source


def test_a_staging_round_in_a_phase_without_one_is_refused():
    """pplx stages a copy in both phases: a dispatch entry of 0 under its dispatch's staging
    steps names the entry; both entries 0 is not a pair (use ())."""
    pplx = exchange_kernel("pplx")
    with pytest.raises(SpecError, match="stage_rounds needs stage_vector .* in its dispatch "
                                        "entry"):
        dataclasses.replace(pplx, stage_vector=(0, 4096))
    with pytest.raises(SpecError, match="stage_vector must be .* not both 0"):
        dataclasses.replace(pplx, stage_vector=(0, 0))


def test_the_dispatch_entry_moves_no_time():
    nccl = exchange_kernel("ncclep-low-latency")
    fab = fidelity_heldout_moe._h100_nodes(1)        # the rows' node (cached)
    a, b = (moe_exchange(fab, "deepseek-v3", 16, 8, kernel=k, dispatch_bytes=1 + 4 / 128,
                         combine_bytes=2, l2_flushed=False)
            for k in (nccl, dataclasses.replace(nccl, stage_vector=(4096, 4096))))
    assert (a.dispatch, a.combine, a.dispatch_phase, a.combine_phase) == (
        b.dispatch, b.combine, b.dispatch_phase, b.combine_phase)


def test_a_generation_is_looked_up_once_and_bad_input_is_named():
    """older-a (session 37): receive_floor('volta') was a bare KeyError and l2_flushed='no'
    read as True; chain_latency and round_read_latency indexed the table alike (round_read_
    latency answered 0 for a generation without a row); exchange_kernel(5) and
    peer_access_latency(5) were SpecErrors where a wrong kind is a TypeError."""
    from fabric import peer_access_latency
    d28 = exchange_kernel("deepep-low-latency@d28bd67")
    one_sided = exchange_kernel("one-sided")
    for call in (lambda a: d28.receive_floor(a, 8),
                 lambda a: d28.chain_latency(0, a, ranks=8, rounds=1),
                 lambda a: one_sided.round_read_latency(8, 2, a, 4, 8, 0),
                 lambda a: one_sided.late_batches(8, 2, a),       # () silently for 'volta'
                 lambda a: one_sided.pointer_loads(8, a)):        # 8.0 silently
        with pytest.raises(SpecError, match="no measured exchange latencies: unknown "
                                            "architecture 'volta'; known: blackwell, hopper"):
            call("volta")
        with pytest.raises(TypeError, match="arch must be a str, got None"):
            call(None)
    with pytest.raises(TypeError, match="l2_flushed must be True or False, got 'no'"):
        d28.receive_floor("hopper", 8, l2_flushed="no")
    for bad in (5, None):
        with pytest.raises(TypeError, match="kernel must be a name"):
            exchange_kernel(bad)
    with pytest.raises(TypeError, match="arch must be a str, got 5"):
        peer_access_latency(5)
    with pytest.raises(SpecError, match="messages must be a finite number >= 0"):
        d28.qp_atomics(0, float("nan"))
    for bad, error in (("8", TypeError), (True, TypeError), (-1, SpecError)):
        with pytest.raises(error, match="ranks must be a finite number >= 0"):
            one_sided.pointer_loads(bad, "hopper")


def test_the_collectors_build_is_a_library_kernel():
    """Lead's decision (session 37, option A): deep_ep 1.2.1+d28bd67 is the library's
    'deepep-low-latency@d28bd67' (the held-out aic-deepep rows name it), its build and pull
    requests dated in the module's docs; 'deepep-low-latency' stays de8cfca's."""
    import fabric._exchange as ex
    from fabric import EXCHANGE_KERNELS
    d28, de8 = EXCHANGE_KERNELS["deepep-low-latency@d28bd67"], EXCHANGE_KERNELS["deepep-low-latency"]
    assert (d28.send_grid, de8.send_grid, de8.stage_vector, de8.reduce_stages) == (2, 3, (), 0)
    for fact in ('"deepep-low-latency@d28bd67"', "2026-04-29", "c874cb7, 2025-07-14",
                 "c5facf5, 2025-08-07"):
        assert fact in ex.__doc__


def test_dedup_is_a_choice():
    """older-a's OLDER-A-15 (session 37): dedup asks the packages' one choice check."""
    pplx = exchange_kernel("pplx")
    with pytest.raises(SpecError, match="dedup must be one of node, rank, expert, collective, "
                                        "got 'nodes'"):
        dataclasses.replace(pplx, dedup="nodes")
    with pytest.raises(TypeError, match="dedup must be a str, got 5"):
        dataclasses.replace(pplx, dedup=5)


def test_d28bd67_grid_is_refused_where_it_does_not_hold():
    """Whole-diff read F1 (session 37): the build's grid is ceil(E / SMs) experts a block;
    send_grid 2 was applied to every expert count (kimi-k2's 384: 128 blocks where the code
    has 192). It holds for the 256 experts it was read for; other counts are refused. F5: its
    cycle counts are de8cfca's, said as an assumption."""
    d28 = exchange_kernel("deepep-low-latency@d28bd67")
    assert (d28.send_waves(256, 128), d28.send_waves(256, 129)) == (0, 1)
    # session 38: refused where the chip's SM count is not known (H200's ChipSpec.sms 0); on
    # H100 (132 SMs, ChipSpec.sms) the grid is now the code's (test_ibgda_s38)
    with pytest.raises(SpecError, match="2 experts a block\\) holds for 256 routed experts "
                                        "only, got 384"):
        moe_exchange(topologies.build("hgx-h200"), "kimi-k2", 16, 8, kernel=d28,
                     dispatch_bytes=1 + 4 / 128, combine_bytes=2)
    assert exchange_kernel("deepep-low-latency").send_waves(384, 128) == 0      # fixed 3
    src = {p.name: p.source for p in d28.parameters()}
    assert all("taken for d28bd67 as de8cfca's" in src[f"{d28.name}.{n}"]
               for n in ("send_cycles", "count_cycles", "chain"))
    with pytest.raises(SpecError, match="send_grid_experts must be"):
        dataclasses.replace(d28, send_grid_experts=(300, 256))
    with pytest.raises(SpecError, match="send_grid_experts needs send_grid"):
        dataclasses.replace(exchange_kernel("pplx"), send_grid_experts=(1, 8))
