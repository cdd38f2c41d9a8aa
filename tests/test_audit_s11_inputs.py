"""Audit, session 11: leftovers of session 10 on inputs (each failed before its fix).

* ``Router.unreachable_pairs(nodes)`` named its argument ``src`` in every refusal.
* ``analysis.cost(runtime=None)`` was refused ("unknown runtime None") while
  ``decode_step``, ``moe_exchange`` and ``cost``'s own ``transport=None`` read ``None`` as the
  default: ``None`` is now the default runtime, as everywhere.
"""

import numpy as np
import pytest

import analysis
import topologies
from analysis._collectives import default_runtime
from fabric import NodeError


@pytest.mark.parametrize("nodes,exc,says", [
    ([0, 10**6], NodeError, "nodes holds node index 1000000"),
    (["chip0", "chip1"], TypeError, "nodes must be node indices"),
    ([0.5, 1], TypeError, "nodes must be node indices"),
    (np.zeros((2, 2), dtype=np.int64), ValueError, "nodes must be a node index or"),
    ([-1, 0], NodeError, "nodes holds node index -1"),
])
def test_unreachable_pairs_names_its_own_argument(nodes, exc, says):
    f = topologies.build("torus:3x3").without(links=[("chip0", "chip1")])
    with pytest.raises(exc, match=says) as e:
        f.router.unreachable_pairs(nodes)
    assert "src" not in str(e.value)


@pytest.mark.parametrize("op", ["all-reduce", "send-recv"])
def test_cost_runtime_none_is_the_default_runtime(op):
    f = topologies.build("hgx-h200")
    a = analysis.cost(f, op, 2**20, runtime=None)
    b = analysis.cost(f, op, 2**20)
    assert (a.time, a.runtime, a.algorithm, a.protocol) == \
        (b.time, b.runtime, b.algorithm, b.protocol)
    assert a.runtime == default_runtime() == "nccl"
    (c,) = analysis.cost_sizes(f, op, [2**20], runtime=None)
    assert (c.time, c.runtime) == (b.time, b.runtime)
