"""Audit, session 30: dimension order's ring loads (fabric._routing_dor.DimOrder._ring_loads,
difference arrays and a cumulative sum) leave no float residue on links no pair crosses. On
main e92a1e3 runs of different weights that overlap left ~1e-16 of a load on links past them
(61 links in 30 random 6-pair batches on torus:8); ibgda's brute test (test_ibgda_s29_counts)
set such links aside. Against tests/routing_brute.py: every link the brute-force paths of no
pair cross carries exactly 0, on intact and degraded rings, tori, meshes and hyper-meshes.
"""

import numpy as np
from degrade import built, degrade
from hypothesis import given, settings
from hypothesis import strategies as st
from routing_brute import brute_loads, degraded_dor_paths

SPECS = ("torus:8", "torus:4x3", "mesh:4x3", "hypermesh:3x2", "torus:3x2x2",
         "hypermesh:2x2x2,connect=switch/ring/full")


@st.composite
def batches(draw):
    """A drawn grid (perhaps degraded) and 2-8 pairs of its live chips with weights spread
    over twelve decades, from a drawn numpy seed: Hypothesis's own float and pair draws favour
    simple repeated values, whose runs cancel exactly."""
    f = built(draw(st.sampled_from(SPECS)))
    g = draw(degrade(f, max_links=2, max_chips=1))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    chips = list(g.endpoints)
    k = int(rng.integers(2, 9))
    pairs = [(chips[a], chips[b]) for a, b in rng.integers(0, len(chips), (k, 2))]
    weights = rng.random(k) * 10.0 ** rng.integers(-3, 9, k)
    keep = [j for j, (s, t) in enumerate(pairs) if degraded_dor_paths(f, g, s, t)]
    return f, g, [pairs[j] for j in keep], weights[keep]


@settings(max_examples=25, deadline=None)
@given(batches())
def test_links_no_pair_crosses_carry_exactly_zero(case):
    f, g, pairs, weights = case
    if not pairs:
        return
    i = g.node_index
    got = g.router.loads([i[s] for s, _ in pairs], [i[t] for _, t in pairs], weights)
    want = brute_loads(g, pairs, "dimension-order", weights,
                       paths=lambda s, t: degraded_dor_paths(f, g, s, t))
    assert got[want == 0].tolist() == [0.0] * int((want == 0).sum())
    # a crossed link's load is a cumulative sum along its line: exact to the line's largest
    # load's rounding, not to its own (16384.1 - 16384 is 0.1 to ~1e-12)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12 * want.max())
