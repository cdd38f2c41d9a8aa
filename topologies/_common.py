"""Pieces every builder shares: parameter checks, link attributes, host grouping, the Fabric."""

import math

import networkx as nx
import numpy as np

from fabric import Fabric, SpecError, chip_spec, link_tech
from fabric._schema import MAX_LINKS
from fabric._units import check_count, is_numeral, items_of, shorten, show_count, show_value

# A size beyond which a build is refused as not sane for an analytical model on one machine;
# links are lanes (a bundle of k lanes is k links, as metrics counts them), the graph
# schema's limit fabric._schema.MAX_LINKS.
MAX_ENDPOINTS = 2**20


def positive_int(value, name, minimum=1, rule=None):
    """Return ``value`` as an int >= ``minimum``: a spec's text (a numeral) is read, other text
    is a SpecError (a spec's wrong value); any other value goes to
    :func:`fabric._units.check_count` (a wrong kind a TypeError, out of range a SpecError)."""
    if isinstance(value, str):
        if not is_numeral(value.strip()):
            raise SpecError(f"{name} must be {rule or f'an integer >= {minimum}'}, got "
                            f"{name}={show_value(value)}")
        value = int(value)
    return check_count(value, name, minimum, rule)


def per_dim(value, ndim, name, check):
    """Broadcast one value to every dimension (one given bare, checked once), or check a
    sequence of ``ndim`` values; ``check(value, label)`` names the value ``name`` or, in a
    sequence, ``name[i]`` (review S31-R1)."""
    values = items_of(value)
    if values is None:
        return (check(value, name),) * ndim
    if len(values) != ndim:
        raise SpecError(f"{name} needs 1 or {ndim} values (one per dimension), "
                        f"got {len(values)}: {show_value(values)}")
    return tuple(check(v, f"{name}[{i}]") for i, v in enumerate(values))


def check_size(endpoints, links, what):
    """Refuse a build beyond :data:`MAX_ENDPOINTS` endpoints or ``MAX_LINKS`` links.

    ``what`` (the spec or the name the user gave) and a count too long for a line are
    abbreviated (:func:`fabric._units.shorten`, :func:`fabric._units.show_count`): a shape
    of 2000 dimensions is a 4000-character spec and a 1200-digit count.

    >>> check_size(2**21, 0, "torus:2048x1024")
    Traceback (most recent call last):
    ...
    fabric.SpecError: torus:2048x1024 has 2,097,152 endpoints; the limit is 1,048,576
    """
    label = shorten(what)
    for count, unit, limit in ((endpoints, "endpoints", MAX_ENDPOINTS),
                               (links, "links", MAX_LINKS)):
        if count > limit:
            raise SpecError(f"{label} has {show_count(count)} {unit}; the limit is {limit:,}")


def link_attrs(tech, lanes=1):
    """Edge attributes for a bundle of ``lanes`` links of technology ``tech``."""
    return {"bandwidth": tech.bandwidth * lanes, "latency": tech.latency, "lanes": lanes,
            "tech": tech.name, "carries": tech.carries}


def resolve_tech(tech, name="tech"):
    """``link_tech(tech)``, its error (a SpecError for an unknown name, a TypeError for another
    kind) led by the keyword that gave it."""
    try:
        return link_tech(tech)
    except (SpecError, TypeError) as e:
        raise type(e)(f"{name}: {e}") from None


def hosts_of(n, chips_per_host, what):
    """Check that ``chips_per_host`` divides ``n``; return it."""
    chips_per_host = positive_int(chips_per_host, "chips_per_host")
    if n % chips_per_host:
        raise SpecError(f"chips_per_host={chips_per_host} does not divide the {n} chips of {what}")
    return chips_per_host


def check_build(n, links, what, chips_per_host, tech, tech_name="tech"):
    """The checks every builder makes before it builds ``n`` chips and ``links`` links (lanes:
    a bundle of k lanes counts k), in
    this order, which decides the error a spec wrong in several ways reports: the size
    (:func:`check_size`: endpoints, then links), ``chips_per_host`` (:func:`hosts_of`), the
    link technology (:func:`resolve_tech`, its errors prefixed by ``tech_name``).

    Returns ``(chips_per_host, tech)``: the int and the :class:`~fabric.LinkTech`.

    >>> check_build(8, 16, "torus:2x4", 2, "nvlink5")[0]
    2
    >>> check_build(8, 16, "torus:2x4", 3, "no-such-tech")
    Traceback (most recent call last):
    ...
    fabric.SpecError: chips_per_host=3 does not divide the 8 chips of torus:2x4
    """
    check_size(n, links, what)
    chips_per_host = hosts_of(n, chips_per_host, what)
    return chips_per_host, resolve_tech(tech, tech_name)


def chip_graph(n, chips_per_host, coords=None):
    """A new graph of chips ``chip0..chip{n-1}`` with their host domains (and coordinates),
    and the list of their names in rank order: ``(G, endpoints)``."""
    G = nx.Graph()
    for r in range(n):
        attrs = {"kind": "chip", "host": f"host{r // chips_per_host}"}
        if coords is not None:
            attrs["coord"] = coords[r]
        G.add_node(f"chip{r}", **attrs)
    return G, [f"chip{r}" for r in range(n)]


def add_links(G, nodes, u, v, attrs, cls=None):
    """Add edges ``(nodes[u[k]], nodes[v[k]])`` to ``G`` in order ``k``, from index arrays.

    The result is the graph ``G.add_edges_from`` would make with the same edges
    in the same order (same adjacency order, so the same ``G.edges`` order and
    link numbering; tested), built in bulk: each node's neighbour dict at once,
    instead of one networkx call per edge (7.8 M edges for ``hypermesh:48x48x48``).
    Edges of one class share one attribute dict ``attrs[cls[k]]``, as the
    builders' graphs are frozen and read-only.

    Parameters
    ----------
    G : networkx.Graph
        A new graph whose nodes (all of ``nodes``) are added and that has no edges.
    nodes : sequence
        Node names; ``u`` and ``v`` index into it.
    u, v : array_like of int
    attrs : sequence of dict
        Edge attributes per class.
    cls : array_like of int, optional
        The class of each edge (default: all class 0).
    """
    u = np.asarray(u, dtype=np.int64)
    v = np.asarray(v, dtype=np.int64)
    if type(G) is not nx.Graph or G.number_of_edges():  # pragma: no cover (builder misuse)
        raise TypeError("add_links fills a new, empty networkx.Graph")
    if len(u) == 0:
        return G
    shared = np.empty(len(attrs), dtype=object)
    for i, a in enumerate(attrs):
        shared[i] = dict(a)
    cls = np.zeros(len(u), dtype=np.int64) if cls is None else np.asarray(cls, dtype=np.int64)
    k = np.arange(len(u), dtype=np.int64)
    tails = np.concatenate([u, v])
    heads = np.concatenate([v, u])
    kk = np.concatenate([k, k])
    order = np.lexsort((kk, tails))  # by node, then by the order the edges were added
    tails, heads, kk = tails[order], heads[order], kk[order]
    names = np.empty(len(nodes), dtype=object)
    names[:] = list(nodes)
    head_names = names[heads].tolist()
    edge_attrs = shared[cls[kk]].tolist()
    bounds = np.flatnonzero(np.r_[True, tails[1:] != tails[:-1], True])
    adj = G._adj  # networkx's dict-of-dicts adjacency (see the docstring)
    for a, b in zip(bounds[:-1].tolist(), bounds[1:].tolist()):
        adj[names[tails[a]]].update(zip(head_names[a:b], edge_attrs[a:b]))
    return G


def make_fabric(G, endpoints, *, name, family, params, chip, techs, structure, extra=()):
    """Freeze ``G`` and wrap it; builders make valid graphs by construction (tested)."""
    nx.freeze(G)
    domains = {}
    for n in endpoints:
        domains.setdefault(G.nodes[n]["host"], []).append(n)
    assumptions = []
    for t in techs:
        for p in t.parameters():
            if p not in assumptions:
                assumptions.append(p)
    if chip is not None:
        chip = chip_spec(chip)
        assumptions.extend(chip.parameters())
    assumptions.extend(extra)
    return Fabric(G, tuple(endpoints), name=name, family=family, params=params,
                  domains=domains, chip=chip, assumptions=tuple(assumptions),
                  structure=structure)


def prod(values):
    return math.prod(values)
