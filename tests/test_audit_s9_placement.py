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
    _clique,
    _copy_rule,
    _counts,
    _inside,
    _labels,
    _most,
    _shape_keys,
    _table,
)

import topologies
from analysis import idle_chips, instance_chips
from fabric import SpecError

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
    R, label = _table(f), _labels(f)
    idx = f.endpoint_indices
    pairs = list(itertools.product(range(live), repeat=2))
    both = (f.router.reachable([idx[i] for i, _ in pairs], [idx[j] for _, j in pairs])
            & f.router.reachable([idx[j] for _, j in pairs], [idx[i] for i, _ in pairs]))
    assert both.tolist() == [R[i][j] for i, j in pairs]
    for n in range(1, live + 1):
        sets = [s for s in itertools.combinations(range(live), n) if _clique(R, s)]
        for tp in [t for t in range(1, n + 1) if n % t == 0]:
            for equal in (False, True):
                keys = _shape_keys(sets, label, n, tp, equal)
                if not keys:
                    try:
                        sel = instance_chips(f, n, equal_domains=equal, tp=tp)
                    except SpecError as e:
                        assert equal and "equally" in str(e)
                        continue
                    assert not _clique(R, sel)
                    continue
                sel = instance_chips(f, n, equal_domains=equal, tp=tp)
                assert len(set(sel)) == n and _clique(R, sel), (n, tp, equal, sel)
                c = _counts(label, sel)
                got = ((n // len(c) % tp != 0, len(c)) if equal
                       else (not _inside(label, sel, tp), len(c)))
                assert got == min(keys), (n, tp, equal, sel)
                copies = _most(R, label, live, n, _copy_rule(label, sel, n, tp, equal))
                assert idle_chips(f, n, equal_domains=equal, tp=tp) == live - copies * n, (
                    n, tp, equal, sel, copies)
