"""Single-tier switched scale-up domains (NVL72 style) and dragonflies."""


import numpy as np

from fabric import Dragonfly, SpecError, Switched
from fabric._units import is_int, text_of

from ._common import (
    add_links,
    check_build,
    chip_graph,
    link_attrs,
    make_fabric,
    per_dim,
    positive_int,
    resolve_tech,
)

__all__ = ["dragonfly", "switched"]


def switched(n, planes=1, *, links=1, tech="nvlink5", reduction=False, chips_per_host=None,
             chip=None, name=None):
    """Build a single tier of switch planes that every chip links to (NVL72 style).

    Parameters
    ----------
    n : int
        Chips, >= 1.
    planes : int, default 1
        Switch planes; every chip has ``links`` links to every plane. The build is linear
        in its ``n x planes`` edges, as every builder's (~3 us and ~0.4 KiB an edge:
        ``switched(8, planes=10**6)``, within the limits, takes ~25 s and 2.9 GiB;
        benchmarks/README.md).
    links : int or sequence of int, default 1
        Links from each chip to each plane (one value, or one per plane: a DGX
        H100 spreads 18 NVLinks over its 4 NVSwitches as 5, 4, 4, 5).
    tech : default "nvlink5"
    reduction : bool, default False
        Whether the switches reduce in the network (NVLink SHARP); sets the
        switch node attribute ``reduction``.
    chips_per_host : int, optional
        Default: all chips in one host domain.
    chip, name
        As for the other builders.

    Returns
    -------
    fabric.Fabric
        ``structure=fabric.Switched(planes, links, reduction)``;
        ``family="switched"``; switches ``"sw{p}"`` (``tier=0``).

    Examples
    --------
    >>> f = switched(72, 18)
    >>> f.graph.number_of_edges(), f.graph.degree("chip0")
    (1296, 18)
    """
    n = positive_int(n, "n")
    planes = positive_int(planes, "planes")
    if isinstance(links, str) or is_int(links):
        # one count for every plane: checked once, repeated only after the size check (the
        # order of checks is per_dim's; a huge planes would not fit in memory)
        links = positive_int(links, "links")
    else:
        links = per_dim(links, planes, "links", positive_int)
    what = text_of(name, "name", optional=True) or (
        f"switch:{n}" + (f",planes={planes}" if planes != 1 else ""))
    # links are lanes: every chip has a bundle of links[p] lanes to plane p
    lanes = planes * links if isinstance(links, int) else sum(links)
    cph, t = check_build(n, n * lanes, what, n if chips_per_host is None else chips_per_host,
                         tech)
    if isinstance(links, int):
        links = (links,) * planes
    G, endpoints = chip_graph(n, cph)
    G.add_nodes_from((f"sw{p}" for p in range(planes)), kind="switch", tier=0,
                     reduction=bool(reduction))
    for p, k in enumerate(links):
        G.add_edges_from(((c, f"sw{p}") for c in endpoints), **link_attrs(t, k))
    return make_fabric(G, endpoints, name=what, family="switched",
                       params={"n": n, "planes": planes, "links": links, "chips_per_host": cph,
                               "reduction": bool(reduction)},
                       chip=chip, techs=(t,), structure=Switched(planes, links, reduction))


def dragonfly(h, *, a=None, p=None, tech="ib-ndr", global_tech=None, chips_per_host=None,
              chip=None, name=None):
    """Build a canonical dragonfly (Kim, Dally, Scott, Abts, ISCA 2008).

    Groups of ``a`` routers joined all-to-all by local links; each router has
    ``p`` chips and ``h`` global links; ``a*h + 1`` groups, so that every pair of
    groups is joined by exactly one global link. Balanced by default:
    ``a = 2p = 2h``, giving ``2h^2 + 1`` groups and router diameter 3.

    Global links are arranged consecutively: group ``G``'s global port ``t``
    (``0 <= t < a*h``, on router ``t // h``) leads to group ``t`` if ``t < G``,
    else ``t + 1``.

    Parameters
    ----------
    h : int
        Global links per router, >= 1.
    a, p : int, optional
        Routers per group and chips per router. Default ``2h`` and ``h``.
    tech : default "ib-ndr"
        Local and chip links.
    global_tech : optional
        Global links; default ``tech``.
    chips_per_host : int, optional
        Default ``p``: the chips of one router form a host.
    chip, name
        As for the other builders.

    Returns
    -------
    fabric.Fabric
        ``structure=fabric.Dragonfly(a, p, h, groups)``; ``family="dragonfly"``;
        routers ``"r{g}.{i}"`` (``kind="switch"``,
        ``tier=0``); chip ``r`` is on router ``(r // p) % a`` of group
        ``r // (a*p)``.

    Examples
    --------
    >>> f = dragonfly(2)
    >>> f.n_endpoints, f.params["groups"]
    (72, 9)
    """
    h = positive_int(h, "h")
    a = 2 * h if a is None else positive_int(a, "a")
    p = h if p is None else positive_int(p, "p")
    groups = a * h + 1
    n = groups * a * p
    what = text_of(name, "name", optional=True) or (
        f"dragonfly:h={h}" + (f",a={a}" if a != 2 * h else "")
        + (f",p={p}" if p != h else ""))
    cph, t = check_build(n, n + groups * a * (a - 1) // 2 + groups * a * h // 2, what,
                         p if chips_per_host is None else chips_per_host, tech)
    tg = resolve_tech(global_tech if global_tech is not None else tech, "global_tech")
    G, endpoints = chip_graph(n, cph)
    routers = [[f"r{g}.{i}" for i in range(a)] for g in range(groups)]
    for g in range(groups):
        G.add_nodes_from(routers[g], kind="switch", tier=0)
    # node indices: chips, then router i of group g at n + g*a + i (as added above)
    r = np.arange(n)
    chip_router = n + (r // (a * p)) * a + (r // p) % a
    li, lj = np.triu_indices(a, 1)
    gg = np.repeat(np.arange(groups), len(li))
    lu, lv = n + gg * a + np.tile(li, groups), n + gg * a + np.tile(lj, groups)
    # global port t of group g leads to group t if t < g, else t + 1; each link once, from
    # the lower-numbered group g, landing on the port of `other` that leads back: port g
    g2, port = (x.ravel() for x in np.meshgrid(np.arange(groups), np.arange(a * h),
                                               indexing="ij"))
    other = np.where(port < g2, port, port + 1)
    up = other > g2
    g2, port, other = g2[up], port[up], other[up]
    gu, gv = n + g2 * a + port // h, n + other * a + g2 // h
    u = np.concatenate([r, lu, gu])
    v = np.concatenate([chip_router, lv, gv])
    cls = np.r_[np.zeros(n + len(lu), dtype=np.int64), np.ones(len(gu), dtype=np.int64)]
    add_links(G, list(G.nodes), u, v, [link_attrs(t), link_attrs(tg)], cls)
    if G.number_of_edges() != n + groups * a * (a - 1) // 2 + groups * (groups - 1) // 2:
        raise SpecError(f"{what}: global links collided; choose other a, h")  # pragma: no cover
    return make_fabric(G, endpoints, name=what, family="dragonfly",
                       params={"a": a, "p": p, "h": h, "groups": groups, "chips_per_host": cph},
                       chip=chip, techs=(t, tg) if tg != t else (t,),
                       structure=Dragonfly(a, p, h, groups))
