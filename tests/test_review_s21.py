"""Review, session 21: lasting checks for what this session's reviews found.

S21-R1 (runtime's Parameters, after S20-R3): a Parameter whose value is a time or a rate
carries its unit. The check reads magnitudes, not names: a number strictly between 0 and
1e-3 is no ratio, count or byte size the runtimes hold (it is a time in seconds), and a
number of 1e9 or more is a rate (bytes or operations per second). Either with the unit ''
is a Parameter whose unit was left out (at 1abe6fd: nccl.factors.net_overhead 1e-06,
collnet_arity_latency 4e-07, pat_rank_latency 2.8e-06, search.inter_speeds.*,
search.pci_bw.*, search.postset_more_bw). Byte sizes and counts (16 .. 131072) cannot be
told apart by magnitude; test_runtime's per-key checks cover the byte groups.
"""

import numbers

from fabric import RUNTIMES, runtime
from fabric._exchange import EXCHANGE_KERNELS, EXCHANGE_LATENCY
from fabric._runtime import NCCL_RELEASE_DATES


def _numbers(value):
    if isinstance(value, (tuple, list)):
        for v in value:
            yield from _numbers(v)
    elif isinstance(value, numbers.Real) and not isinstance(value, bool):
        yield float(value)


def _parameters():
    names = list(RUNTIMES) + [f"nccl@{v}" for v in NCCL_RELEASE_DATES]
    for name in names:
        yield from runtime(name).parameters()
    for kernel in EXCHANGE_KERNELS.values():
        yield from kernel.parameters()
    for table in EXCHANGE_LATENCY.values():
        yield from table.values()


def test_s21_r1_a_time_or_a_rate_parameter_carries_its_unit():
    missing = sorted({p.name for p in _parameters() if not p.unit and any(
        0 < abs(x) < 1e-3 or abs(x) >= 1e9 for x in _numbers(p.value))})
    assert missing == []
