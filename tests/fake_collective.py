"""A stand-in collective cost for decode tests that need a known closed form.

``linear_all_reduce`` is passed as ``decode_step(..., collective=...)``: 1 us plus
``nbytes`` at 1 GB/s, and only all-reduces may be asked for (an all-to-all reaching it
is a layout bug the test should see).
"""


class FakeResult:
    """The one field decode reads of a collective's cost: ``time`` in seconds."""

    def __init__(self, time):
        self.time = time


def linear_all_reduce(fabric, op, nbytes, *, algorithm, ranks, transport):
    """1 us + ``nbytes`` at 1 GB/s; only all-reduces may be asked for."""
    assert op == "all-reduce", op
    return FakeResult(1e-6 + float(nbytes) / 1e9)
