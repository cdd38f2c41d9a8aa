"""Session 38 (ibgda): ExchangeKernel's tuple fields refuse a wrong kind with a TypeError.

STYLE's rule: a value of the wrong kind is a TypeError, a value of the right kind that breaks
the rule a ValueError (SpecError). Until session 38 every tuple field of ExchangeKernel
(send_grid_experts, stage_vector, count_grid, release_fence, chain, cycles ...) answered a
str, None, a list or an item of the wrong kind with a SpecError, and count_grid=None on a
kernel whose chain counts with it was refused as a missing count_grid.
"""
import dataclasses

import pytest

from fabric import SpecError, exchange_kernel

_PPLX = exchange_kernel("pplx")
_D28 = exchange_kernel("deepep-low-latency@d28bd67")

# (kernel, field, a wrong kind, a wrong value of the right kind)
_FIELDS = [
    (_D28, "send_grid_experts", "256", (300, 256)),
    (_D28, "stage_vector", None, (0, 0)),
    (_PPLX, "count_grid", None, (0, 132)),
    (_PPLX, "release_fence", (1, 0), (True,)),
    (_PPLX, "kernels", [1, 1], (-1, 1)),
    (_PPLX, "qp_signals", "each", ("every", "")),
    (_PPLX, "chain", ("l2_hit", ()), ((),)),
    (_PPLX, "sync_steps", (("l2_hit", "1"),), (("l2_hit", 0),)),
    (_PPLX, "cycles", ((), [("stage_cycles", 35)]), ((),)),
]


@pytest.mark.parametrize("kernel, field, kind, value", _FIELDS,
                         ids=[f[1] for f in _FIELDS])
def test_a_wrong_kind_is_a_type_error_and_a_wrong_value_a_spec_error(kernel, field, kind,
                                                                      value):
    with pytest.raises(TypeError, match=field) as e:
        dataclasses.replace(kernel, **{field: kind})
    assert not isinstance(e.value, SpecError)
    with pytest.raises(SpecError, match=field):
        dataclasses.replace(kernel, **{field: value})


def test_the_message_names_the_field_the_value_and_its_kind():
    with pytest.raises(TypeError, match=r"^send_grid_experts must be \(\) or two ints 1 <= "
                                        r"fewest <= most \(the routed experts send_grid holds "
                                        r"for\), got None \(a NoneType\)$"):
        dataclasses.replace(_D28, send_grid_experts=None)
    with pytest.raises(TypeError, match=r"^each of stage_vector must be an int, got 4096\.0 "
                                        r"\(a float\)$"):
        dataclasses.replace(_D28, stage_vector=(0, 4096.0))
    # an unhashable name in a cycle table gave a bare "unhashable type: 'list'"
    with pytest.raises(TypeError, match=r"^each name of the combine's cycles must be a str, "
                                        r"got \['stage_cycles'\] \(a list\)$"):
        dataclasses.replace(_PPLX, cycles=((), ((["stage_cycles"], 35),)))


def test_d28bd67_takes_its_grid_from_the_chips_sms_where_known():
    """deepep-low-latency@d28bd67's dispatch grid is ceil(E / ceil(E / SMs)) blocks
    (num_warp_groups). With the chip's SM count (ChipSpec.sms: H100 132) kimi-k2's 384 experts
    are priced with the code's 128 blocks, 3 experts a block (they were refused: the kernel's
    fallback send_grid 2 would give 192); where the count is not known the refusal stands."""
    import fidelity_heldout_moe

    from analysis import moe_exchange
    from fabric import chip_spec
    assert (chip_spec("h100").sms, chip_spec("h800").sms, chip_spec("h200").sms) == (132, 132, 0)
    assert [_D28.send_waves(384, t, sms=132) for t in (128, 129, 257)] == [0, 1, 2]
    assert [_D28.send_waves(e, 129, sms=132) for e in (64, 160, 256, 1024)] == [2, 1, 1, 1]
    kw = {"dispatch_bytes": 1 + 4 / 128, "combine_bytes": 2}
    fab = fidelity_heldout_moe._h100_nodes(1)
    r = moe_exchange(fab, "kimi-k2", 129, 8, kernel=_D28, **kw)
    # the same kernel with a fixed grid of 3 experts a block (128 blocks): the same phase
    fixed = dataclasses.replace(_D28, send_grid=3, send_grid_experts=(), send_grid_sms=False)
    f = moe_exchange(fab, "kimi-k2", 129, 8, kernel=fixed, **kw)
    assert (r.dispatch, r.combine) == (f.dispatch, f.combine)
    two = dataclasses.replace(_D28, send_grid_experts=(), send_grid_sms=False)   # 192 blocks
    assert r.dispatch > moe_exchange(fab, "kimi-k2", 129, 8, kernel=two, **kw).dispatch
    assert {p.name: p.value for p in r.parameters}["h100.sms"] == 132
    assert moe_exchange(fab, "deepseek-v3", 129, 8, kernel=_D28, **kw).dispatch == moe_exchange(
        fab, "deepseek-v3", 129, 8, kernel=dataclasses.replace(_D28, send_grid_sms=False),
        **kw).dispatch                                 # 256 experts: 2 a block either way


@pytest.mark.parametrize("bad, error", [(True, TypeError), (float("nan"), TypeError),
                                        (2.5, TypeError), ("132", TypeError), (None, TypeError),
                                        (-1, SpecError)])
def test_a_chips_sm_count_is_checked(bad, error):
    from fabric import chip_spec
    with pytest.raises(error, match=r"sms must be an integer >= 0 \(chip 'h100'"):
        dataclasses.replace(chip_spec("h100"), sms=bad)
    with pytest.raises(SpecError, match="sms=132 needs sms_source"):
        dataclasses.replace(chip_spec("h100"), sms_source="")
    with pytest.raises(SpecError, match="send_grid_sms needs send_grid"):
        dataclasses.replace(_PPLX, send_grid_sms=True)
    with pytest.raises(TypeError, match="send_grid_sms must be True or False"):
        dataclasses.replace(_D28, send_grid_sms="yes")


def test_a_routing_pairs_name_of_another_kind_is_a_type_error():
    """parse_routing wrote a pair's name into text unchecked: (None, 2) was read as 'None:2'
    and refused as an unknown routing (a SpecError), (5, None) named the pair 'routing'."""
    from analysis import parse_routing
    assert parse_routing(("node-limited", 2)) == ("node-limited", 2)
    for bad in ((None, 2), (5, None), (["uniform"], None)):
        with pytest.raises(TypeError, match=r"^routing\[0\] \(the routing's name\) must be a "
                                            r"str, got "):
            parse_routing(bad)


def test_a_slot_tables_key_of_another_kind_is_a_type_error():
    k = exchange_kernel("one-sided")
    ok = ("", 8, 0, ((7,),))
    for bad, part in ((("", 8.0, 0, ((7,),)), "each top_k and input_bytes of late_pulls"),
                      ((None, 8, 0, ((7,),)), "each arch of late_pulls")):
        with pytest.raises(TypeError, match=f"^{part} must be "):
            dataclasses.replace(k, late_pulls=(bad,))
    assert dataclasses.replace(k, late_pulls=(ok,)).late_pulls == (ok,)


@pytest.mark.parametrize("bad, error", [(-5, SpecError), (1.5, TypeError), (True, TypeError),
                                        (None, TypeError), (float("nan"), TypeError)])
def test_send_waves_checks_its_tokens(bad, error):
    """W-2 (session 38's whole-diff read): tokens was read unchecked (-5 gave -1 waves, 1.5 and
    True 0, None / nan bare errors); 0 tokens send no later wave."""
    k = exchange_kernel("deepep-low-latency")
    with pytest.raises(error, match=r"^tokens must be an integer >= 0, got tokens="):
        k.send_waves(256, bad)
    assert (k.send_waves(256, 0), k.send_waves(256, 128), k.send_waves(256, 300)) == (0, 1, 3)
