"""Audit, session 16: a collective's size is at least one byte (session 15's open finding (b)).

Before: ``analysis.cost`` took any size > 0: ``cost(f, "all-reduce", 0.5)`` was costed, and
where NCCL's plan counts whole bytes (the p2p protocol plan, ``_runtime_cost._p2p_plan``:
``ceil(nbytes)``) a size below one byte was planned as one byte, silently. The CLI already
refused it ("size '0.5' is not a whole number of bytes"). No collective moves part of a byte,
and a size such as 0.5 is most likely a size in another unit (0.5 GiB). Now ``read_nbytes``
(every collective entry: ``cost``, ``cost_sizes``, vLLM's all-reduce) refuses a size below
one byte by name, and an all-to-allv matrix that moves less than one byte in all. A
fractional size of one byte or more is costed as given; where NCCL counts whole bytes it is
read at its ceiling (stated in ``cost``'s docstring).
"""

import numpy as np
import pytest

import analysis
import topologies
from analysis._collectives import read_nbytes
from analysis._engine_allreduce import vllm_all_reduce
from fabric._units import parse_size

_F = topologies.build("switch:8,chip=h100")


@pytest.mark.parametrize("nbytes", [0.5, 0.999, 1e-9, 5e-324, np.float64(0.25)])
def test_a_size_below_one_byte_is_refused_by_name(nbytes):
    with pytest.raises(ValueError, match=r"nbytes must be at least 1 byte .*got nbytes="):
        read_nbytes(nbytes)


@pytest.mark.parametrize("runtime", ["ideal", "nccl", "nccl@2.20.5", "symmetric-memory"])
@pytest.mark.parametrize("op", ["all-reduce", "all-gather", "send-recv", "all-to-all"])
def test_cost_refuses_half_a_byte_under_every_runtime(op, runtime):
    with pytest.raises(ValueError, match="at least 1 byte"):
        analysis.cost(_F, op, 0.5, runtime=runtime)
    assert analysis.cost(_F, op, 1, runtime=runtime).time > 0


def test_cost_sizes_refuses_a_sub_byte_size_among_others():
    with pytest.raises(ValueError, match="at least 1 byte"):
        analysis.cost_sizes(_F, "all-reduce", [4096, 0.5])


def test_vllm_all_reduce_refuses_half_a_byte():
    with pytest.raises(ValueError, match="at least 1 byte"):
        vllm_all_reduce(_F, "all-reduce", 0.5, ranks=_F.endpoints[:4])


def test_an_all_to_allv_matrix_of_less_than_one_byte_is_refused():
    m = np.full((4, 4), 0.05)
    np.fill_diagonal(m, 0)                       # 0.6 bytes in all
    with pytest.raises(ValueError, match="moves 0.6 bytes in all; at least 1 byte"):
        analysis.cost(_F, "all-to-allv", m, ranks=_F.endpoints[:4])
    assert analysis.cost(_F, "all-to-allv", m * 10, ranks=_F.endpoints[:4]).time > 0


@pytest.mark.parametrize("nbytes", [1, 1.0, 1.5, "1B", 2**20 + 0.5])
def test_one_byte_and_more_is_read_as_given(nbytes):
    assert read_nbytes(nbytes) == float(parse_size(nbytes) if isinstance(nbytes, str)
                                        else nbytes)
