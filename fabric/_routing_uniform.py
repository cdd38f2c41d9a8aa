"""Uniform all-to-all link loads from the structure a builder knows (private).

Used by :meth:`fabric.Router.loads_all_to_all`. Two exact methods, each tested
against the general engine (:mod:`fabric._routing_engine`) on random small
shapes:

Orbits of a symmetry group.
    Let a group of automorphisms of the fabric act transitively on the
    endpoints and map routes onto routes (the policy is defined by the graph
    alone, so every automorphism that keeps node kinds, levels and link
    bandwidths does). Under uniform all-to-all, source ``s = g(0)`` loads link
    ``e`` as source 0 loads ``g^-1(e)``. Summing over the sources,

        load(e) = (n / |O|) * sum over e' in O of load_0(e')

    for the orbit ``O`` of ``e`` (n endpoints): one source is routed instead of
    ``n``. Groups used: the translations ``c -> c + t (mod shape)`` of an
    intact hypermesh whose dimensions are rings or fully connected (a link's
    orbit is its dimension and its step ``head - tail mod size``); any
    permutation of the chips of a single-tier switched fabric (orbit: switch
    plane and direction); the fat-tree, leaf-spine and rail-optimized builders'
    permutations of pods, leaves, servers, switches within a tier group and GPU
    indices with their rails (orbit: the pair of levels a link joins).
    Equivariance of the route choice fails for ``ecmp="hash"`` outside dimension
    order (the hash names nodes), so that case is not reduced.

One global link per pair of groups (dragonfly, minimal routing).
    Every minimal route is unique; the loads add up per group pair
    (:mod:`fabric._routing_dragonfly`).

Neither method runs on a degraded fabric: a failed link breaks the symmetry
and the uniqueness the formulas use, and the general engine routes it.
"""

import numpy as np

from ._structure import Clos, Grid, Switched

__all__ = []


def degraded(fabric):
    """Whether links or nodes of ``fabric`` have failed (no symmetry shortcut may run)."""
    return fabric.failures.degraded


def _levels(fabric):
    kinds = fabric.graph.nodes
    return np.fromiter((-2 if kinds[n]["kind"] == "chip" else
                        -1 if kinds[n]["kind"] == "nic" else kinds[n].get("tier", 0)
                        for n in fabric.nodes), dtype=np.int64, count=len(fabric.nodes))


def link_orbits(fabric, tail, head, bandwidth):
    """Orbit number of each directed link under a group transitive on the endpoints, or None.

    See the module docstring for the groups. Links of one orbit share one
    bandwidth (checked: None otherwise).
    """
    if degraded(fabric):
        return None
    orbit = _orbits_by_structure(fabric, tail, head)
    if orbit is None:
        return None
    first = np.zeros(int(orbit.max()) + 1 if len(orbit) else 0)
    first[orbit] = bandwidth
    if (first[orbit] != bandwidth).any():
        return None  # the links of an orbit must be alike
    return orbit


def _orbits_by_structure(fabric, tail, head):
    structure = fabric.structure
    if isinstance(structure, Clos):
        if not structure.symmetric:
            return None
        level = _levels(fabric)
        key = (level[tail] + 2) * 16 + (level[head] + 2)
        return np.unique(key, return_inverse=True)[1].ravel()
    if isinstance(structure, Switched):
        G = fabric.graph
        chip = np.fromiter((G.nodes[n]["kind"] == "chip" for n in fabric.nodes), dtype=bool,
                           count=len(fabric.nodes))
        up = chip[tail] & ~chip[head]
        down = ~chip[tail] & chip[head]
        if not (up | down).all():
            return None
        key = np.where(up, 2 * head, 2 * tail + 1)
        return np.unique(key, return_inverse=True)[1].ravel()
    if not isinstance(structure, Grid) or not structure.all_connect("ring", "full"):
        return None
    shape = np.array(structure.shape, dtype=np.int64)
    n = int(np.prod(shape))
    if len(fabric.nodes) != n or not (fabric.endpoint_indices == np.arange(n)).all():
        return None
    # chips are the only nodes, in rank order (the builder's contract), rank = coordinate
    # with dimension 0 fastest
    C = np.stack(np.unravel_index(np.arange(n), tuple(shape), order="F"), axis=1)
    delta = (C[head] - C[tail]) % shape
    moved = delta != 0
    if (moved.sum(axis=1) != 1).any():
        return None
    dim = np.argmax(moved, axis=1)
    step = delta[np.arange(len(dim)), dim]
    key = dim * int(shape.max()) + step
    return np.unique(key, return_inverse=True)[1].ravel()


def orbit_loads(orbit, load0, n):
    """``(n / |O|) * sum_{e' in O} load0(e')`` for every link (see the module docstring)."""
    n_orb = int(orbit.max()) + 1 if len(orbit) else 0
    size = np.bincount(orbit, minlength=n_orb)
    total = np.bincount(orbit, weights=load0, minlength=n_orb)
    return (n * total / np.maximum(size, 1))[orbit]
