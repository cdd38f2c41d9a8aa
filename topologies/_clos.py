"""Indirect networks of switches: k-ary fat-tree, leaf-spine, rail-optimized GPU clusters."""

import numpy as np

from fabric import Clos, SpecError, chip_spec
from fabric._units import text_of

from ._common import (
    add_links,
    check_build,
    chip_graph,
    link_attrs,
    make_fabric,
    positive_int,
    resolve_tech,
)

__all__ = ["fat_tree", "leaf_spine", "rail_optimized"]


def fat_tree(k, *, pods=None, tech="ib-ndr", chips_per_host=1, chip=None, name=None):
    """Build a three-tier k-ary fat-tree (Al-Fares, Loukissas, Vahdat, SIGCOMM 2008).

    ``k`` pods, each with ``k/2`` edge and ``k/2`` aggregation switches of radix
    ``k``; ``(k/2)^2`` core switches; ``k^3/4`` endpoints, ``5k^2/4`` switches,
    ``3k^3/4`` links, full bisection.

    With ``pods=P`` (a divisor of ``k``, >= 2) only ``P`` pods are built, as a
    cluster smaller than a full tree is (a 4,096-endpoint tree of radix-64
    switches has 4 pods): ``P k^2/4`` endpoints, ``P k/2`` edge and aggregation
    switches, ``P k/4`` cores of full radix (each core takes ``k/P`` links from
    every pod), still full bisection.

    Parameters
    ----------
    k : int
        Switch radix, even and >= 2.
    pods : int, optional
        Pods built; default ``k`` (the full tree).
    tech : str or fabric.LinkTech, default "ib-ndr"
        Technology of every link (400 Gb/s InfiniBand NDR by default).
    chips_per_host : int, default 1
        Consecutive endpoints grouped into one host domain.
    chip : str or fabric.ChipSpec, optional
    name : str, optional

    Returns
    -------
    fabric.Fabric
        ``structure=fabric.Clos(3, k, k*k//4, "pods", full_bisection=True)``;
        ``family="fat_tree"``, ``params={"k": k, "chips_per_host": ...}``. Chips
        ``"chip{r}"``; switches ``"edge{p}.{i}"`` (``tier=0``), ``"agg{p}.{i}"``
        (``tier=1``) and ``"core{j}"`` (``tier=2``). Chip ``r`` is in pod
        ``r // (k*k//4)`` on edge switch ``(r % (k*k//4)) // (k//2)``; aggregation
        switch ``i`` of every pod links to cores ``i*k/2 .. i*k/2 + k/2 - 1``.

    Examples
    --------
    >>> f = fat_tree(4)
    >>> f.n_endpoints, f.graph.number_of_nodes() - f.n_endpoints, f.graph.number_of_edges()
    (16, 20, 48)
    >>> f = fat_tree(8, pods=2)
    >>> f.n_endpoints, f.graph.number_of_nodes() - f.n_endpoints, max(d for _, d in f.graph.degree)
    (32, 20, 8)
    >>> fat_tree(5)
    Traceback (most recent call last):
    ...
    fabric.SpecError: fat-tree k must be even and >= 2, got k=5
    """
    k = positive_int(k, "k")
    if k % 2:
        raise SpecError(f"fat-tree k must be even and >= 2, got k={k}")
    P = k if pods is None else positive_int(pods, "pods")
    if P < 2 or k % P:
        raise SpecError(f"fat-tree pods must divide k={k} and be >= 2, got pods={P}")
    h = k // 2
    n = P * h * h
    cores = P * h // 2
    what = text_of(name, "name", optional=True) or (
        f"fattree:k={k}" + (f",pods={P}" if P != k else ""))
    cph, t = check_build(n, 3 * n, what, chips_per_host, tech)
    attrs = link_attrs(t)
    G, endpoints = chip_graph(n, cph)
    G.add_nodes_from((f"edge{p}.{i}" for p in range(P) for i in range(h)), kind="switch", tier=0)
    G.add_nodes_from((f"agg{p}.{i}" for p in range(P) for i in range(h)), kind="switch", tier=1)
    G.add_nodes_from((f"core{j}" for j in range(cores)), kind="switch", tier=2)
    # node indices: chips, then edge{p}.{i}, agg{p}.{i}, core{j}, as added above
    nodes = list(G.nodes)
    edge0, agg0, core0 = n, n + P * h, n + 2 * P * h
    r = np.arange(n)
    p, i, j = (a.ravel() for a in np.meshgrid(np.arange(P), np.arange(h), np.arange(h),
                                              indexing="ij"))
    u = np.concatenate([r, edge0 + p * h + i, agg0 + p * h + i])
    # aggregation switch i of a pod: cores (i*h + j) mod cores, j < h (all distinct, as h <= cores)
    v = np.concatenate([edge0 + (r // (h * h)) * h + (r % (h * h)) // h, agg0 + p * h + j,
                        core0 + (i * h + j) % cores])
    add_links(G, nodes, u, v, [attrs])
    params = {"k": k, "chips_per_host": cph}
    if P != k:
        params["pods"] = P
    return make_fabric(G, endpoints, name=what, family="fat_tree",
                       params=params, chip=chip, techs=(t,),
                       structure=Clos(3, P, h * h, "pods", full_bisection=True))


def leaf_spine(k, oversubscription=1, *, leaves=None, tech="ib-ndr", chips_per_host=1,
               chip=None, name=None):
    """Build a two-tier leaf-spine of radix-``k`` switches.

    Each leaf splits its ``k`` ports into ``down = k*r/(r+1)`` endpoint ports and
    ``up = k/(r+1)`` spine ports for an oversubscription ratio ``r``; there are
    ``k`` leaves (a spine's ``k`` ports reach each leaf once) and ``up`` spines.
    At ``r = 1``: ``k^2/2`` endpoints and ``3k/2`` switches at full bisection.

    With ``leaves=L`` fewer than ``k``, the ``L * up`` uplinks fill
    ``L * up / k`` spines of full radix, each leaf sending ``up / spines``
    parallel links (lanes) to each spine (a 128-endpoint rail of radix-64
    switches: 4 leaves, 2 spines).

    Parameters
    ----------
    k : int
        Switch radix, >= 2.
    oversubscription : int, default 1
        Ratio of a leaf's down to up ports; ``k`` must split into whole ports.
    leaves : int, optional
        Leaves built, default ``k``; ``leaves * up`` must fill whole spines that
        each leaf reaches equally.
    tech, chips_per_host, chip, name
        As for :func:`fat_tree`.

    Returns
    -------
    fabric.Fabric
        ``structure=fabric.Clos(2, k, down, "leaves")``; ``family="leaf_spine"``;
        leaves ``"leaf{i}"`` (``tier=0``) and spines
        ``"spine{j}"`` (``tier=1``); chip ``r`` hangs off leaf ``r // down``.

    Examples
    --------
    >>> f = leaf_spine(8)
    >>> f.n_endpoints, len([n for n, d in f.graph.nodes(data="kind") if d == "switch"])
    (32, 12)
    >>> leaf_spine(8, 3).n_endpoints
    48
    >>> f = leaf_spine(64, leaves=4)
    >>> f.n_endpoints, f.graph.degree("spine0"), f.graph["leaf0"]["spine1"]["lanes"]
    (128, 4, 16)
    """
    k = positive_int(k, "k", minimum=2)
    r = positive_int(oversubscription, "oversubscription")
    if k % (r + 1):
        raise SpecError(f"leaf-spine radix k={k} cannot split into down:up = {r}:1 ports "
                        f"(k must be a multiple of {r + 1})")
    up = k // (r + 1)
    down = k - up
    L = k if leaves is None else positive_int(leaves, "leaves")
    spines = L * up // k
    if L > k or spines < 1 or (L * up) % k or up % spines:
        raise SpecError(f"leaf-spine leaves={L} must be at most k={k} and fill whole spines "
                        f"of radix {k} that each leaf reaches equally ({up} uplinks per leaf)")
    lanes = up // spines
    n = L * down
    what = text_of(name, "name", optional=True) or (
        f"leafspine:k={k}" + (f",over={r}" if r != 1 else "")
        + (f",leaves={L}" if L != k else ""))
    cph, t = check_build(n, n + L * up, what, chips_per_host, tech)
    attrs = link_attrs(t)
    G, endpoints = chip_graph(n, cph)
    G.add_nodes_from((f"leaf{i}" for i in range(L)), kind="switch", tier=0)
    G.add_nodes_from((f"spine{j}" for j in range(spines)), kind="switch", tier=1)
    G.add_edges_from(((f"chip{c}", f"leaf{c // down}") for c in range(n)), **attrs)
    G.add_edges_from(((f"leaf{i}", f"spine{j}") for i in range(L) for j in range(spines)),
                     **link_attrs(t, lanes))
    params = {"k": k, "oversubscription": r, "down": down, "up": up, "chips_per_host": cph}
    if L != k:
        params["leaves"] = L
    return make_fabric(G, endpoints, name=what, family="leaf_spine", params=params,
                       chip=chip, techs=(t,), structure=Clos(2, L, down, "leaves"))


def rail_optimized(servers, gpus_per_server=8, *, spines=None, scaleup_tech="nvlink4",
                   scaleup_links=18, nic_tech="ib-ndr", pcie_tech="pcie5-x16",
                   reduction=False, chip=None, name=None, nic_share=None):
    """Build a rail-optimized cluster of multi-GPU servers (the DGX SuperPOD pattern).

    Each server's GPUs join one scale-up switch node (the NVSwitch chips of an
    HGX board, modelled as one switch with an ``scaleup_links`` bundle per GPU:
    equal bandwidth, the plane structure is not modelled). GPU ``i`` of every
    server has its own NIC (PCIe to the GPU) that links to rail leaf ``i``; every
    rail leaf has as many uplinks as downlinks (non-blocking), spread evenly over
    the spines.

    Parameters
    ----------
    servers : int
        Number of servers, >= 1.
    gpus_per_server : int, default 8
        GPUs (and rails) per server.
    spines : int, optional
        Spine switches; must divide ``servers`` (each leaf sends ``servers /
        spines`` links to each spine). Default: the largest divisor of
        ``servers`` not above ``gpus_per_server``.
    scaleup_tech, scaleup_links
        Scale-up link technology and links per GPU (H100: 18 NVLink4 links,
        450 GB/s per direction; NVIDIA/nccl-tests issue 212). ``"nvlink4"`` whatever the
        chip: ``chip`` does not change it (a B200 or GB200 server's is ``"nvlink5"``:
        spec ``scaleup=nvlink5``).
    nic_tech : default "ib-ndr"
        NIC-to-leaf and leaf-to-spine links (400 Gb/s).
    pcie_tech : default "pcie5-x16"
        GPU-to-NIC link.
    reduction : bool, default False
        Whether the scale-up switch reduces in the network (NVLink SHARP).
    chip, name
        As for :func:`fat_tree`: the GPUs' memory and FLOP/s, never the links
        (``scaleup_tech`` and ``nic_tech`` set those).
    nic_share : int, optional
        GPUs (and as many NICs) that reach one another's NICs at the best path type: under
        one PCIe switch of the server board, or on one Grace CPU. 1 when each GPU and its NIC
        sit alone under a switch (HGX H100: ``nvidia-smi topo -m`` shows every GPU PIX to one
        NIC, NVIDIA/nccl issue 1264), 2 when two GPUs and two NICs share one (a B200 board
        whose GPU0 and GPU1 are PIX to NIC0 and NIC1; not every B200 server:
        vllm-project/vllm issue 16336 shows one with a NIC per GPU). Default: the chip's
        ``grace_gpus`` on a Grace superchip (GB200 / GB300: 2, the two GPUs of one Grace,
        whose NICs hang off that Grace and which both reach over NVLink-C2C: NCCL's
        PATH_P2C, NVIDIA/nccl v2.27.3-1 ``src/graph/paths.cc`` l.669-681), else 1. Must
        divide ``gpus_per_server``. Recorded on every NIC as ``pix`` (the chips that reach
        it so) when above 1; traffic still leaves a GPU through its own NIC. Read by the
        NCCL runtime's tree pattern (``analysis._collectives._GroupView``).

    Returns
    -------
    fabric.Fabric
        ``structure=fabric.Clos(3, servers, gpus_per_server, "servers")``;
        ``family="rail_optimized"``; chips ``"chip{r}"`` (server ``r //
        gpus_per_server``), NICs ``"nic{r}"`` (``kind="nic"``), scale-up
        switches ``"nvs{s}"`` (``tier=0``), rail leaves ``"rail{i}"``
        (``tier=1``), spines ``"spine{j}"`` (``tier=2``). One host domain per
        server.

    Examples
    --------
    >>> f = rail_optimized(4, 8)
    >>> f.n_endpoints, len(f.domains), f.graph.degree("rail0")
    (32, 4, 8)
    """
    servers = positive_int(servers, "servers")
    g = positive_int(gpus_per_server, "gpus_per_server")
    if spines is None:
        spines = max(d for d in range(1, min(servers, g) + 1) if servers % d == 0)
    spines = positive_int(spines, "spines")
    if servers % spines:
        raise SpecError(f"spines={spines} must divide servers={servers} so that every rail "
                        "leaf reaches every spine equally")
    n = servers * g
    what = text_of(name, "name", optional=True) or f"rail:servers={servers},gpus={g}"
    # a server is a host domain: g always divides n, so check_build's host check passes;
    # links are lanes: each chip's scale-up bundle of scaleup_links, its PCIe and NIC links,
    # the rail-spine bundles (servers lanes per rail)
    scaleup_links = positive_int(scaleup_links, "scaleup_links")
    _, ts = check_build(n, n * (scaleup_links + 2) + g * servers, what, g, scaleup_tech,
                        "scaleup_tech")
    tn = resolve_tech(nic_tech, "nic_tech")
    tp = resolve_tech(pcie_tech, "pcie_tech")
    if nic_share is None:
        grace = chip_spec(chip).grace_gpus if chip is not None else 0
        share = grace or 1
        if g % share:
            raise SpecError(f"chip {chip_spec(chip).name!r} pairs {share} GPUs on a Grace CPU: "
                            f"gpus={g} must be a multiple of {share} (or give pix=1)")
    else:
        share = positive_int(nic_share, "nic_share")
    if g % share:
        raise SpecError(f"pix={share} GPUs per PCIe switch must divide gpus={g}")
    G, endpoints = chip_graph(n, g)
    G.add_nodes_from((f"nvs{s}" for s in range(servers)), kind="switch", tier=0,
                     reduction=bool(reduction))
    G.add_nodes_from((f"nic{r}" for r in range(n)), kind="nic")
    G.add_nodes_from((f"rail{i}" for i in range(g)), kind="switch", tier=1)
    G.add_nodes_from((f"spine{j}" for j in range(spines)), kind="switch", tier=2)
    for r in range(n):
        G.nodes[f"nic{r}"]["host"] = f"host{r // g}"
        if share > 1:
            first = r - r % share
            G.nodes[f"nic{r}"]["pix"] = tuple(f"chip{q}" for q in range(first, first + share))
    G.add_edges_from(((f"chip{r}", f"nvs{r // g}") for r in range(n)),
                     **link_attrs(ts, scaleup_links))
    G.add_edges_from(((f"chip{r}", f"nic{r}") for r in range(n)), **link_attrs(tp))
    G.add_edges_from(((f"nic{r}", f"rail{r % g}") for r in range(n)), **link_attrs(tn))
    G.add_edges_from(((f"rail{i}", f"spine{j}") for i in range(g) for j in range(spines)),
                     **link_attrs(tn, servers // spines))
    return make_fabric(G, endpoints, name=what, family="rail_optimized",
                       params={"servers": servers, "gpus_per_server": g, "spines": spines,
                               "scaleup_links": scaleup_links, "chips_per_host": g,
                               **({"nic_share": share} if share > 1 else {})},
                       chip=chip, techs=(ts, tn, tp), structure=Clos(3, servers, g, "servers"))
