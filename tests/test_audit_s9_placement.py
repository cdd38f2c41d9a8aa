"""Audit session 9: instance placement on direct fabrics (torus, mesh, hyper-mesh) and a
dragonfly with failed chips and links, against the brute force of
tests/test_decode_placement.py (which draws switches and rails only).

Reference: every set of live chips joined pairwise by routes (fabric.route both ways); the
instance is one of the best-keyed such sets (fewest straddling TP groups, then fewest
load/store domains); idle chips are what the most disjoint such copies leave over. Also
Router.reachable against fabric.route pair by pair, both ways.
"""

import itertools

from degrade import degrade
from hypothesis import given, settings
from hypothesis import strategies as st
from test_decode_placement import (
    _placements_are_the_brute_forces,
    _table,
)

import topologies

_SPECS = ("torus:2x3", "torus:3x3", "hypermesh:2x3", "mesh:2x4", "dragonfly:h=1",
          "hypermesh:2x2x2,connect=switch/ring/full")


def _fabrics():
    """A fabric of ``_SPECS`` with up to 5 failed links and 2 failed chips (tests/degrade.py)."""
    return st.sampled_from(_SPECS).map(topologies.build).flatmap(
        lambda f: degrade(f, max_links=5, max_chips=2))


@settings(max_examples=20, deadline=None)
@given(_fabrics())
def test_placement_on_direct_fabrics_is_the_brute_force(f):
    live = f.n_endpoints
    R = _table(f)
    idx = f.endpoint_indices
    pairs = list(itertools.product(range(live), repeat=2))
    both = (f.router.reachable([idx[i] for i, _ in pairs], [idx[j] for _, j in pairs])
            & f.router.reachable([idx[j] for _, j in pairs], [idx[i] for i, _ in pairs]))
    assert both.tolist() == [R[i][j] for i, j in pairs]
    _placements_are_the_brute_forces(f, full=False)
