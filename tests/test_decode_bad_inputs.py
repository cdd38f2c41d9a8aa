"""Bad inputs to decode's routing arithmetic get a SpecError naming them (session 14's sweep of
numpy scalars, bools, nan / inf, zero, negative and huge values): a bool is not a Zipf
exponent or a token count (True read as 1), a negative token count made an expert more than
certainly active, an empty list broke in numpy's broadcasting. Numpy numbers are numbers."""

import math

import numpy as np
import pytest

import analysis
import topologies
from fabric import SpecError
from fabric._units import is_real


@pytest.mark.parametrize("name, bad", [
    ("skew", True), ("skew", np.bool_(True)), ("skew", math.nan), ("skew", -0.5),
    ("skew", "1"), ("tokens", True), ("tokens", -3), ("tokens", np.int64(-3)),
    ("tokens", math.inf), ("tokens", []), ("tokens", "8"), ("experts", 0), ("experts", 2.5),
    ("experts", True), ("experts", 10**30), ("k", -1), ("k", 300), ("k", 1.5), ("k", True),
])
def test_expert_activation_names_a_bad_input(name, bad):
    kw = {"experts": 256, "k": 8, "tokens": 16, "skew": 0.0, name: bad}
    # a count (experts, k) of the wrong kind is a TypeError (lead, session 31), a number
    # (skew, tokens) too (session 32)
    error = TypeError if (name in ("experts", "k") and bad in (2.5, 1.5, True)) or (
        name in ("skew", "tokens") and not is_real(bad)) else SpecError
    with pytest.raises(error, match=f"^{name} must be|^experts=.*array"):
        analysis.expert_activation(**kw)
    with pytest.raises(error, match=f"^{name} must be|^experts=.*array"):
        analysis.expected_active_experts(**kw)


def test_numpy_numbers_route_as_plain_ones():
    plain = analysis.expected_active_experts(256, 8, 16, 0.5)
    assert analysis.expected_active_experts(np.int64(256), np.int32(8), np.int64(16),
                                            np.float32(0.5)) == plain
    assert analysis.expected_active_experts(256, 8, 16.0, 0.5) == plain
    assert analysis.expected_active_experts(256, 8, 0, 0.0) == 0.0


@pytest.mark.parametrize("bad", [True, np.bool_(True), math.nan, -1.0, math.inf, "0.5"])
def test_decode_step_names_a_bad_skew(bad):
    f = topologies.build("hgx-h200")
    with pytest.raises(SpecError if is_real(bad) else TypeError, match="skew must be"):
        analysis.decode_step("deepseek-r1", f, batch=8, context=1024, layout="tp=8", skew=bad)
