"""Review, session 22: lasting checks for what this session's reviews found.

Byte sizes (left by session 21's review: tests/test_review_s21.py reads magnitudes, and a byte
size of 16 .. 131072 cannot be told from a count by its value). A Parameter whose name says it
is a size in bytes (its last part ends in ``bytes``, ``chunk`` or ``align``: NCCL's chunk and
alignment sizes, a model's weight / KV / activation bytes, an exchange kernel's staging and
walk-slot bytes) carries the unit ``B``. At session 22's start every such Parameter of the
runtimes (every modelled NCCL release), the exchange kernels, the exchange latency tables, the
model configs and the chips did; the check keeps a new one from arriving without it.
"""

import re

from analysis._models import MODELS
from fabric import RUNTIMES, runtime
from fabric._chips import CHIPS
from fabric._exchange import EXCHANGE_KERNELS, EXCHANGE_LATENCY
from fabric._runtime import NCCL_RELEASE_DATES

_BYTE_NAME = re.compile(r"(bytes|chunk|align)$")


def _parameters():
    for name in list(RUNTIMES) + [f"nccl@{v}" for v in NCCL_RELEASE_DATES]:
        yield from runtime(name).parameters()
    for kernel in EXCHANGE_KERNELS.values():
        yield from kernel.parameters()
    for table in EXCHANGE_LATENCY.values():
        yield from table.values()
    for model in MODELS.values():
        yield from model.parameters()
    for chip in CHIPS.values():
        yield from chip.parameters()


def test_s22_a_byte_size_parameter_carries_the_unit_b():
    named = [p for p in _parameters() if _BYTE_NAME.search(p.name.rsplit(".", 1)[-1])]
    assert len({p.name for p in named}) >= 20          # the rule reads real names
    assert sorted({(p.name, p.unit) for p in named if p.unit != "B"}) == []
