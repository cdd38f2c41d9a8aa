"""Review, session 10: faults the reviewer confirmed that no other test pins down.

S10-R4 (models, da8b5d4): ``decode_step(graph_batch=)`` documents that a padded graph's
expert exchange moves the padded rows ("the TP all-reduces and the exchange ... at
ceil(graph_batch / dp) x tokens_per_sequence tokens"). Nothing tested the exchange-kernel
path: computing its tokens from the real batch instead of the padded one passed every decode
and serving test.
"""

import pytest

import topologies
from analysis import decode_step


@pytest.mark.parametrize("kernel", ["one-sided", "deepep-low-latency", "deepep-normal", "pplx"])
def test_a_padded_graph_exchanges_its_padded_rows(kernel):
    # the exchange depends on tokens only: a step of 20 real sequences replayed from a
    # 64-sequence graph dispatches and combines what a step of 64 real sequences does, and
    # more than the unpadded step of 20
    f = topologies.build("nvl72")
    kw = {"context": 1024, "layout": "tp=1,dp=8,ep=8", "ep_kernel": kernel}
    padded = decode_step("kimi-k2", f, batch=20, graph_batch=64, **kw).layers[-1]
    real = decode_step("kimi-k2", f, batch=64, **kw).layers[-1]
    unpadded = decode_step("kimi-k2", f, batch=20, **kw).layers[-1]
    assert (padded.dispatch, padded.combine) == (real.dispatch, real.combine)
    assert padded.dispatch > unpadded.dispatch and padded.combine > unpadded.combine
