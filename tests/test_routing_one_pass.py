"""Dimension-order routing's one-pass forms equal the separate passes they stand for.

Session 21 (maint): :meth:`DimOrder.evaluate_timed` times one pass over a pair set's ways by
several ``with_latency`` twins (a degraded grid's hop twin and latency twin), and
:meth:`DimOrder.dead_and_path_links` finds the dead-route mask in the path pass; each must
give, byte for byte, what each twin's own :meth:`~DimOrder.evaluate` and
:meth:`~DimOrder.path_links_many` give, on intact and degraded grids, their bypass twins and
their failed-node twins, under both ECMP policies.
"""

import numpy as np
from degrade import built, degrade
from hypothesis import given, settings
from hypothesis import strategies as st

from fabric import Router
from fabric._routing_bypass import Bypasses

GRIDS = ("torus:4x3", "mesh:3x3", "torus:2x2x3", "hypermesh:3x2,connect=switch",
         "hypermesh:2x2x2,connect=switch/ring/full", "hypermesh:4x2,connect=full/line",
         "torus:3x2,links=2")


@st.composite
def routed(draw):
    g = draw(degrade(built(draw(st.sampled_from(GRIDS))), max_links=3, max_chips=1))
    return Router(g, ecmp="hash") if draw(st.booleans()) else g.router


def _orders(r):
    """The router's DimOrder and every twin of its bypasses, each with its twins by latency."""
    out = [(r._dor, ())]
    if r._dor.intact:
        return out
    byp = r._bypass
    twins = [byp._twin(label) for label in byp.labels] if isinstance(byp, Bypasses) else [byp]
    for b in twins:
        out.append((b.twin, (b.hop_twin,)))
        if b.thru is not None:
            out.append((b.thru, (b.flag,)))
    return out


def _same(x, y):
    return x.dtype == y.dtype and x.shape == y.shape and (x == y).all()


@settings(max_examples=30, deadline=None)
@given(routed())
def test_one_pass_gives_each_passes_own_result(r):
    for dor, others in _orders(r):
        n = len(dor.node_slot)
        s, d = (np.repeat(np.arange(n), n), np.tile(np.arange(n), n))
        hops, lats, dead = dor.evaluate_timed(s, d, (dor, *others))
        for t, lat in zip((dor, *others), lats, strict=True):
            h1, l1, d1 = t.evaluate(s, d)
            assert _same(hops, h1) and _same(lat, l1) and _same(dead, d1)
        for way in ("plus", "longest", "minus"):
            dead2, M = dor.dead_and_path_links(s, d, way)
            assert _same(dead2, dead)
            assert _same(M, dor.path_links_many(s, d, tie_way=way))
