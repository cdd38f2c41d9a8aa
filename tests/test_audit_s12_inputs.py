"""Audit, session 12: hostile inputs to what session 11 added (serving API, rail specs,
runtime versions). Each test failed before its fix (noted), or pins a refusal that holds.
"""

import numpy as np
import pytest

import topologies
from analysis import _serving as S
from fabric import SpecError

SPEC = "switch:8,planes=2,links=9,tech=nvlink5,chip=b200"
PLAIN = ((0, 0.0),)


@pytest.fixture(scope="module")
def f8():
    return topologies.build(SPEC)


@pytest.mark.parametrize("kernels", [[True], [1e-6, False], ["1e-3"], [None]])
def test_eager_pass_refuses_a_bool_or_a_string_as_a_kernel_time(kernels):
    # before: [True] read as 1 s (1.000004 s), "1e-3" as 1 ms; a wrong kind is a TypeError
    # naming the position (a SpecError 'kernel_seconds must be numbers of seconds' before
    # session 34)
    with pytest.raises(TypeError, match=r"kernel_seconds\[\d\] must be a finite number >= 0 "):
        S.eager_pass_seconds(kernels)


def test_eager_pass_still_takes_numpy_seconds():
    a = S.eager_pass_seconds(np.array([1e-6, 2e-6]), launch=4e-6)
    assert a == S.eager_pass_seconds([1e-6, 2e-6], launch=4e-6)


def test_frontier_takes_numpy_batches_as_it_takes_numpy_n_batches(f8):
    # before: batches=[np.int64(4)] 'must be integers >= 1' (n_batches, isl take numpy ints)
    a = S.serving_frontier("kimi-k2", f8, isl=128, osl=64, speculative=PLAIN,
                           batches=[np.int64(4), np.int32(8)])
    b = S.serving_frontier("kimi-k2", f8, isl=128, osl=64, speculative=PLAIN, batches=[4, 8])
    assert a.points == b.points
    # a batch of the wrong kind is a TypeError, named by its position (session 31)
    with pytest.raises(TypeError, match=r"batches\[0\] must be an integer"):
        S.serving_frontier("kimi-k2", f8, isl=128, osl=64, speculative=PLAIN, batches=[4.0])


@pytest.mark.parametrize("value", ["no", 1, None])
def test_frontier_keep_all_must_be_a_bool(f8, value):
    # before: keep_all='no' read as True (every point kept), silently
    with pytest.raises(TypeError, match="keep_all must be True or False"):
        S.serving_frontier("kimi-k2", f8, isl=128, osl=64, speculative=PLAIN, n_batches=2,
                           keep_all=value)


def test_frontier_keep_all_takes_a_numpy_bool_as_its_bool(f8):
    # session 30 (lead's decision): numpy bools are flags everywhere, as numpy ints are counts
    def run(flag):
        return S.serving_frontier("kimi-k2", f8, isl=128, osl=64, speculative=PLAIN,
                                  batches=[4], layouts=["tp=8"], keep_all=flag).points
    assert run(np.True_) == run(True)


def test_frontier_that_fits_nothing_names_the_context_it_tried(f8):
    # before: 'fits no layout ... at context 192' (isl + osl) when context=10**7 was given
    with pytest.raises(SpecError, match="at context 10000000: "):
        S.serving_frontier("kimi-k2", f8, isl=128, osl=64, speculative=PLAIN, n_batches=2,
                           context=10**7)


@pytest.mark.parametrize("opt,msg", [
    ("pix=0", "pix \\(nic_share\\) must be an integer >= 1"),
    ("pix=3", "pix=3 GPUs per PCIe switch must divide gpus=8"),
    ("pix=1.5", "pix must be an integer"),
    ("pix=true", "pix must be an integer"),
    ("pix=99999999999999999999", "must divide gpus=8"),
])
def test_rail_pix_refusals_name_the_option(opt, msg):
    with pytest.raises(SpecError, match=msg):
        topologies.build(f"rail:servers=2,gpus=8,{opt}")


def test_grace_chip_with_an_odd_server_is_refused_by_name():
    with pytest.raises(SpecError, match="pairs 2 GPUs on a Grace CPU: gpus=3"):
        topologies.build("rail:servers=2,gpus=3,chip=gb200")
