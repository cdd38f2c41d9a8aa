"""Stand-in collective costs: for decode tests that need a known closed form, and for
exchange tests that read what the collectives model is handed.

``linear_all_reduce`` is passed as ``decode_step(..., collective=...)``: 1 us plus
``nbytes`` at 1 GB/s, and only all-reduces may be asked for (an all-to-all reaching it
is a layout bug the test should see). A :class:`Recorder` is passed as
``moe_exchange(..., collective=...)``: it keeps each call's operation and bytes.
"""
import numpy as np


class FakeResult:
    """The one field decode reads of a collective's cost: ``time`` in seconds."""

    def __init__(self, time):
        self.time = time


def linear_all_reduce(fabric, op, nbytes, *, algorithm, ranks, transport):
    """1 us + ``nbytes`` at 1 GB/s; only all-reduces may be asked for."""
    assert op == "all-reduce", op
    return FakeResult(1e-6 + float(nbytes) / 1e9)


class Recorder:
    """A collective cost that records each call as ``(op, nbytes)`` in :attr:`calls`
    (``nbytes`` a float array: one size, or an all-to-allv's matrix, row the sender) and
    answers ``time`` seconds."""

    def __init__(self, time=1e-6):
        self.time = time
        self.calls = []

    def __call__(self, fabric, op, nbytes, **kw):
        self.calls.append((op, np.asarray(nbytes, dtype=float)))
        return FakeResult(self.time)
