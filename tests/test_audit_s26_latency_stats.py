"""Audit, session 26: ``fabric.latency_stats`` refuses what is no latency.

``latency_stats`` (``cofabric latency``'s and the report's min / mean / p50 / p99 / max)
took any array: a NaN made every figure NaN, an infinity the mean and max, a negative value a
negative minimum, and ``[True]`` or ``None`` passed as 1.0 or NaN, all without a word. Bad
input gets a clear error naming the problem (the project's rule): a SpecError naming the
first value that is no latency, a TypeError (session 32, STYLE's rule) for input that holds
no numbers.
"""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fabric import SpecError, latency_stats


@pytest.mark.parametrize("bad, named", [
    ([1e-7, math.nan], "got nan"), ([math.inf], "got inf"), ([2e-7, -1e-9], "got -1e-09"),
    ([], "at least one")])
def test_what_is_no_latency_is_refused_by_name(bad, named):
    with pytest.raises(SpecError, match=named):
        latency_stats(bad)


@pytest.mark.parametrize("bad, named", [
    ([True, False], "numbers"), (None, "numbers"), (["1e-7"], "numbers"),
    ([1e-7, None], "numbers"), ([1e-7, True], r"latencies\[1\]=True \(a bool\)")])
def test_what_is_no_number_is_a_type_error(bad, named):
    # STYLE's rule (session 32; was a SpecError), and [1e-7, True] was read as 1 s
    with pytest.raises(TypeError, match=named):
        latency_stats(bad)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(0, 1e-3), min_size=1, max_size=40),
       st.sampled_from([None, math.nan, math.inf, -math.inf, -1e-9]))
def test_finite_latencies_are_summarised_and_one_bad_value_refuses_all(lat, bad):
    x = np.array(lat)
    st_ = latency_stats(lat)
    assert (st_.count, st_.min, st_.max) == (len(lat), x.min(), x.max())
    assert st_.mean == pytest.approx(x.mean(), rel=1e-12, abs=0)
    assert (st_.p50, st_.p99) == (np.percentile(x, 50), np.percentile(x, 99))
    with pytest.raises(TypeError if bad is None else SpecError):
        latency_stats(lat + [bad])
