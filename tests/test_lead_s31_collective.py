"""``collective=`` must be a cost function or None (analysis._moe_exchange.check_collective).

Session 31: ``moe_exchange(..., kernel="one-sided", collective="1")`` answered as if the
argument were not there (the kernel prices no collective), and ``decode_step(...,
collective="1")`` failed inside the model with "'str' object is not callable", naming
nothing. A value no call could use is now a TypeError naming it, whether or not a
collective is priced; a cost function (the test's spy) is still used as before.
"""
import math

import pytest

import analysis
import topologies

BAD = ["nccl", 1, math.nan, True, ("ring",)]
EXCHANGE = {"dispatch_bytes": 7168, "combine_bytes": 14336}


@pytest.fixture(scope="module")
def nvl72():
    return topologies.build("nvl72")


@pytest.mark.parametrize("kernel", ["one-sided", "all-to-allv"])
@pytest.mark.parametrize("bad", BAD, ids=repr)
def test_moe_exchange_refuses_a_collective_that_is_not_a_cost_function(nvl72, kernel, bad):
    with pytest.raises(TypeError, match=r"collective must be a cost function .* got "):
        analysis.moe_exchange(nvl72, "deepseek-v3", 4, 8, kernel=kernel, collective=bad,
                              **EXCHANGE)


@pytest.mark.parametrize("layout", ["tp=1,dp=8,ep=8", "tp=8"])
@pytest.mark.parametrize("bad", BAD, ids=repr)
def test_decode_step_refuses_a_collective_that_is_not_a_cost_function(nvl72, layout, bad):
    with pytest.raises(TypeError, match=r"collective must be a cost function .* got "):
        analysis.decode_step("deepseek-v3", nvl72, batch=1, context=128, layout=layout,
                             collective=bad)


def test_a_runtime_name_given_as_collective_points_at_runtime(nvl72):
    with pytest.raises(TypeError, match=r"a runtime by name is runtime='nccl'"):
        analysis.decode_step("deepseek-v3", nvl72, batch=1, context=128, layout="tp=8",
                             collective="nccl")


def test_other_strings_get_no_runtime_hint(nvl72):
    with pytest.raises(TypeError, match=r"got '1' \(a str\)$"):
        analysis.moe_exchange(nvl72, "deepseek-v3", 4, 8, kernel="one-sided", collective="1",
                              **EXCHANGE)


def test_a_cost_function_is_still_called(nvl72):
    calls = []

    def spy(fabric, op, nbytes, **kw):
        calls.append(op)
        return analysis.cost(fabric, op, nbytes, **kw)

    r = analysis.moe_exchange(nvl72, "deepseek-v3", 4, 8, kernel="all-to-allv",
                              collective=spy, **EXCHANGE)
    assert calls and r.dispatch > 0
