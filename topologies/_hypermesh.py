"""Direct networks of chips: 3D Hyper-Mesh (HyperX), torus, mesh, and per-line switches.

One builder makes them all: a network is the Cartesian product of one graph per
dimension, and each dimension's graph is a complete graph (``"full"``, as in
HyperX), a cycle (``"ring"``), a path (``"line"``), or a star around a switch
(``"switch"``). A torus is every dimension a ring, a mesh every dimension a line.
"""

import numpy as np

from fabric import CONNECT, Grid, SpecError
from fabric._structure import check_connect
from fabric._units import items_of, text_of

from ._common import (
    add_links,
    check_build,
    chip_graph,
    link_attrs,
    make_fabric,
    per_dim,
    positive_int,
    prod,
)

__all__ = ["CONNECT", "hypermesh", "mesh", "torus"]

# CONNECT is fabric.CONNECT (how a Grid's lines are joined), one tuple for the builder and Grid


def _links_per_line(s, connect):
    """Physical adjacencies on one line of ``s`` chips (edges; a 2-ring is one double edge)."""
    if s == 1:
        return 0
    return {"full": s * (s - 1) // 2, "ring": s if s > 2 else 1, "line": s - 1,
            "switch": s}[connect]


def _dims(shape):
    """``shape`` as a tuple of dimensions, each an integer >= 1; one given bare (not a
    sequence: an int, or a value its check names) is a one-dimensional shape."""
    items = items_of(shape)
    if items is None:
        return (positive_int(shape, "shape"),)
    # each dimension named by its position: shape[1]=0 (review S31-R1)
    return tuple(positive_int(s, f"shape[{i}]") for i, s in enumerate(items))


def hypermesh(shape, connect="full", *, links=1, tech="cofabric", chips_per_host=None,
              chip=None, name=None):
    """Build a direct network of chips on a grid of ``shape``.

    Parameters
    ----------
    shape : sequence of int
        Chips per dimension, each >= 1. Chip ranks run with dimension 0 fastest:
        the chip at coordinate ``c`` has rank ``c[0] + s0 * (c[1] + s1 * c[2] ...)``.
    connect : str or sequence of str, default "full"
        Per dimension (one value for all): ``"full"`` joins every pair of chips
        on a line (HyperX); ``"ring"`` joins neighbours and wraps round (a ring
        of 2 is one edge of two links); ``"line"`` joins neighbours without
        wrapping; ``"switch"`` gives each line one switch that every chip on the
        line links to.
    links : int or sequence of int, default 1
        Parallel physical links per adjacency, per dimension.
    tech : str or fabric.LinkTech, default "cofabric"
        The link technology (see :data:`fabric.TECHNOLOGIES`).
    chips_per_host : int, optional
        Chips per host domain; consecutive ranks share a host. Default
        ``shape[0]``: one host per line along dimension 0.
    chip : str or fabric.ChipSpec, optional
    name : str, optional
        Default: a spec string such as ``"hypermesh:4x4x8"``.

    Returns
    -------
    fabric.Fabric
        ``structure=fabric.Grid(shape, connect, links)``; ``family="hypermesh"``,
        ``params`` holds ``shape``, ``connect``, ``links`` and ``chips_per_host``. Chips are ``"chip{r}"`` with node attributes
        ``kind="chip"``, ``host="host{h}"`` and ``coord`` (a tuple); switches
        of ``connect="switch"`` lines are ``"sw.d{d}.{j}"`` (``kind="switch"``,
        ``tier=0``), line ``j`` counted in rank order of its first chip.

    Raises
    ------
    SpecError
        For a size < 1, an unknown connection, a host size that does not
        divide the chips, or a network too large to be sane.

    Examples
    --------
    >>> f = hypermesh((4, 4, 8))
    >>> f.n_endpoints, f.graph.number_of_edges()
    (128, 832)
    >>> torus((4, 4)).graph.degree("chip0")
    4
    """
    shape = _dims(shape)
    if not shape:
        raise SpecError("shape needs at least one dimension")
    ndim = len(shape)
    connect = per_dim(connect, ndim, "connect", check_connect)
    links = per_dim(links, ndim, "links", positive_int)
    n = prod(shape)
    # links are lanes: each adjacency a bundle of k (a 2-ring's one edge of 2k, as built below)
    n_links = sum(_links_per_line(s, c) * (n // s) * (2 * k if (c == "ring" and s == 2) else k)
                  for s, c, k in zip(shape, connect, links))
    what = text_of(name, "name", optional=True) or "hypermesh:" + "x".join(map(str, shape))
    cph, t = check_build(n, n_links, what, shape[0] if chips_per_host is None else chips_per_host,
                         tech)

    coords = np.stack(np.unravel_index(np.arange(n), shape, order="F"), axis=1)
    G, endpoints = chip_graph(n, cph, coords=[tuple(c) for c in coords.tolist()])
    strides = np.cumprod((1,) + shape[:-1])
    nodes = list(endpoints)
    us, vs, classes, attrs = [], [], [], []
    for d, (s, c, k) in enumerate(zip(shape, connect, links)):
        if s == 1:
            continue
        base = np.flatnonzero(coords[:, d] == 0)  # first chip of each line, in rank order
        step = int(strides[d])
        if c == "switch":
            # switch j of this dimension serves the line starting at base[j]
            sw = len(nodes) + np.arange(len(base))
            switches = [f"sw.d{d}.{j}" for j in range(len(base))]
            G.add_nodes_from(switches, kind="switch", tier=0)
            nodes += switches
            us.append((base[:, None] + step * np.arange(s)[None, :]).ravel())
            vs.append(np.repeat(sw, s))
            lanes = k
        else:
            if c == "full":
                ii, jj = np.triu_indices(s, 1)
            elif c == "line" or s == 2:
                ii, jj = np.arange(s - 1), np.arange(1, s)
            else:  # ring of 3 or more
                ii, jj = np.arange(s), (np.arange(s) + 1) % s
            # offsets (i, j) in order, each over every line
            us.append((ii[:, None] * step + base[None, :]).ravel())
            vs.append((jj[:, None] * step + base[None, :]).ravel())
            lanes = 2 * k if (c == "ring" and s == 2) else k
        classes.append(np.full(len(us[-1]), len(attrs), dtype=np.int64))
        attrs.append(link_attrs(t, lanes))
    if us:
        add_links(G, nodes, np.concatenate(us), np.concatenate(vs), attrs,
                  np.concatenate(classes))
    params = {"shape": shape, "connect": connect, "links": links, "chips_per_host": cph}
    return make_fabric(G, endpoints, name=what, family="hypermesh", params=params, chip=chip,
                       techs=(t,), structure=Grid(shape, connect, links))


def torus(shape, *, links=1, tech="cofabric", chips_per_host=None, chip=None, name=None):
    """A torus: :func:`hypermesh` with every dimension a ring.

    Parameters
    ----------
    shape : sequence of int
        Chips per dimension, each >= 1 (ranks with dimension 0 fastest).
    links, tech, chips_per_host, chip, name
        As for :func:`hypermesh`: parallel links per adjacency (per dimension), the link
        technology, chips per host domain, the chip, the fabric's name.

    Returns
    -------
    fabric.Fabric

    Examples
    --------
    >>> torus((8, 8, 8)).graph.number_of_edges()
    1536
    """
    shape = _dims(shape)
    name = text_of(name, "name", optional=True) or "torus:" + "x".join(map(str, shape))
    return hypermesh(shape, "ring", links=links, tech=tech, chips_per_host=chips_per_host,
                     chip=chip, name=name)


def mesh(shape, *, links=1, tech="cofabric", chips_per_host=None, chip=None, name=None):
    """A mesh: :func:`hypermesh` with every dimension a line.

    Parameters
    ----------
    shape, links, tech, chips_per_host, chip, name
        As for :func:`torus`.

    Examples
    --------
    >>> mesh((4, 4, 4)).graph.number_of_edges()
    144
    """
    shape = _dims(shape)
    name = text_of(name, "name", optional=True) or "mesh:" + "x".join(map(str, shape))
    return hypermesh(shape, "line", links=links, tech=tech, chips_per_host=chips_per_host,
                     chip=chip, name=name)
