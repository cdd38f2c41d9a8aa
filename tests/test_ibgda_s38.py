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
