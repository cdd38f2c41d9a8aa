"""Audit session 9: the serving search's arguments.

A bad argument gets an error naming it, never a silently rounded value or a false reason.
"""

import numpy as np
import pytest
from degrade import degrade
from hypothesis import given, settings
from hypothesis import strategies as st

import topologies
from analysis import serving_cost, serving_frontier, serving_point, single_user_speed
from fabric import SpecError

NODE = "switch:8,planes=2,links=9,tech=nvlink5,chip=b200"
PLAIN = ((0, 0.0),)


@pytest.fixture(scope="module")
def node():
    return topologies.build(NODE)


@pytest.fixture(scope="module")
def hgx():
    return topologies.build("hgx-h200")


@pytest.mark.parametrize("setting, error, match", [
    ((1.5, 0.8), TypeError, "draft_length must be an integer >= 0, got draft_length=1.5"),
    ((True, 0.8), TypeError, "draft_length must be an integer >= 0, got draft_length=True"),
    (("3", 0.8), TypeError, "draft_length must be an integer >= 0, got draft_length='3'"),
    ((1, "0.8"), TypeError, "acceptance must be in \\[0, 1\\], got acceptance='0.8'"),
    (1, SpecError, "a speculative setting is a \\(draft_length, acceptance\\) pair, got 1"),
])
def test_a_speculative_setting_is_never_rounded(hgx, setting, error, match):
    # before: int(1.5) and int(True) ran draft length 1 silently; int("3") ran 3. A count of
    # the wrong kind is a TypeError (lead, session 31; was a SpecError)
    with pytest.raises(error, match=match):
        serving_frontier("deepseek-v3", hgx, isl=1000, osl=100, batches=(4,),
                         layouts=["tp=8"], speculative=(setting,))


def test_serving_point_names_a_float_draft_length(hgx):
    # before: TypeError "tokens_per_sequence must be an int, got float 2.5"
    with pytest.raises(TypeError, match="draft_length must be an integer >= 0, got "
                                        "draft_length=1.5"):
        serving_point("deepseek-v3", hgx, isl=1000, osl=100, batch=4, layout="tp=8",
                      draft_length=1.5)


def test_numpy_speculative_settings_are_read_as_plain_numbers(hgx):
    kw = {"isl": 1000, "osl": 100, "batches": (4,), "layouts": ["tp=8"]}
    a = serving_frontier("deepseek-v3", hgx, speculative=((np.int64(1), np.float64(0.8)),), **kw)
    b = serving_frontier("deepseek-v3", hgx, speculative=((1, 0.8),), **kw)
    assert a.points == b.points and type(a.points[0].draft_length) is int


@pytest.mark.parametrize("layouts", [[], (), "tp=8"])
def test_no_layouts_is_not_blamed_on_the_weights(node, layouts):
    # before: layouts=[] said "its weights (594.2 GB) exceed 0.9 of the HBM of all 8 chips"
    # (594 GB < 0.9 x 8 x 180 GB); a string was read character by character; a string is a
    # wrong kind, a TypeError (session 36: was a SpecError)
    error, match = ((TypeError, "layouts must be a sequence of layouts") if layouts == "tp=8"
                    else (SpecError, "layouts must be a non-empty sequence of layouts"))
    with pytest.raises(error, match=match):
        serving_frontier("kimi-k2.5-nvfp4", node, isl=100, osl=10, layouts=layouts,
                         speculative=PLAIN)
    with pytest.raises(error, match=match):
        single_user_speed("kimi-k2.5-nvfp4", node, layouts=layouts, speculative=PLAIN)


def test_layouts_may_be_a_generator(node):
    a = serving_frontier("kimi-k2.5-nvfp4", node, isl=100, osl=10, batches=(2,),
                         layouts=(x for x in ["tp=8"]), speculative=PLAIN)
    b = serving_frontier("kimi-k2.5-nvfp4", node, isl=100, osl=10, batches=(2,),
                         layouts=["tp=8"], speculative=PLAIN)
    assert a.points and a.points == b.points and a.layouts == b.layouts


@pytest.mark.parametrize("n, error", [(1, SpecError), (True, TypeError), (0, SpecError),
                                      (-1, SpecError), (1.5, TypeError)])
def test_n_batches_is_named(node, n, error):
    # before: 1 (and True) ZeroDivisionError in the grid's thinning; 0 and -1 said the weights
    # and one sequence's KV cache exceed a chip; 1.5 "'float' object cannot be interpreted"
    with pytest.raises(error, match="n_batches must be an integer >= 2"):
        serving_frontier("kimi-k2.5-nvfp4", node, isl=100, osl=10, n_batches=n,
                         speculative=PLAIN)


def test_usable_hbm_true_is_not_one(node):
    with pytest.raises(TypeError, match="usable_hbm must be in \\(0, 1\\], got usable_hbm=True"):
        serving_frontier("kimi-k2.5-nvfp4", node, isl=100, osl=10, usable_hbm=True,
                         speculative=PLAIN)


# -- section 8: the price of a system does not change when parts of it fail ---------------

_PRICED = ["nvl72", "gb200-nvl72", "gb300-nvl72", "dgx-h100", "rail:servers=2,gpus=4,chip=h200"]


@settings(max_examples=25, deadline=None)
@given(st.sampled_from(_PRICED), st.sampled_from(["own-hyperscaler", "own-neocloud",
                                                   "rent-3yr"]), st.data())
def test_a_failure_never_changes_the_price_of_a_gpu_hour(spec, tier, data):
    # before: the rack presets were priced by fabric.name, which a failure renames
    # ("nvl72 without 1 link"): one failed link priced an NVL72 as loose B200s ($2.21 ->
    # $1.95 per GPU-hour), a GB200/GB300 NVL72 by the chip-price path ($2.21/$2.65 -> $1.50),
    # so `cofabric serve nvl72 --fail-link chip0-sw0` showed a CHEAPER $/Mtok (3.223 -> 2.851)
    f = topologies.build(spec)
    g = data.draw(degrade(f, max_links=2, max_chips=1, min_links=0))
    assert serving_cost(g, tier=tier) == serving_cost(f, tier=tier)
