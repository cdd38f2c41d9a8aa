"""A brute force of ``analysis.moe_exchange``'s traffic: each pair of EP ranks' expected copies,
routed pair by pair along the paths the fabric's policy allows, and the stage times that follow.

It does not use the model's matrices, caches or router: load/store domains are the connected
components of the graph without NICs and message links; a pair's expected copies follow the
kernel's de-duplication (per expert: ``tokens x k / ep``; per rank: ``tokens x P(reach rank)``;
DeepEP normal: once per remote node to the rail peer, whose node then fans out over the
scale-up links, the rail's every source through its one forwarder there); only the ranks
that hold tokens send (the first ``sources`` EP ranks, or the positions it lists, or each its
own count of a list); the hypergeometric reach is written out
for uniform routing (``analysis.expert_reach`` for the others); every pair's bytes go along
``routing_brute.policy_paths``, evenly over them, or hop by hop in proportion to the links'
bandwidth where the router is weighted (switched fabrics); a link's time is its bytes over its
bandwidth at the load/store payload fraction (scale-up) or the NIC efficiency (network: the
busiest NIC port, or a routed link busier than every port). And the draws of those tests:
:func:`degraded` (a fabric with failed links, a failed chip, failed lanes) and :func:`ep_group`
(EP ranks filling their load/store domains equally). Used by
tests/test_ibgda_s26_exchange_brute.py, tests/test_ibgda_s27_sources.py and
tests/test_ibgda_s29_counts.py; routing ``"grouped"`` (the collector's generator, written out
token by token: :func:`grouped_expert_ids`) by tests/test_moe_s33_grouped.py.
"""
import itertools
import math

import networkx as nx
import pytest
from hypothesis import strategies as st
from routing_brute import policy_paths

from analysis import expert_reach
from analysis._moe_exchange import _link_efficiency
from fabric import EXCHANGE_NIC_EFFICIENCY, TECHNOLOGIES, FabricError
from fabric import transport as get_transport

MESSAGE = {n for n, t in TECHNOLOGIES.items() if t.carries == "messages"}
# the fabric families and shapes drawn (rail with and without PIX NICs, RoCE, several spines;
# DGX H100's NVSwitch bundles; fat tree; oversubscribed leaf/spine; dragonfly; an 8-GPU switch of
# two planes; hypermesh; torus; GB200 rail)
SPECS = ("rail:servers=2,gpus=4,chip=h100", "rail:servers=3,gpus=2,chip=h100",
         "rail:servers=4,gpus=2,spines=2,chip=h100", "rail:servers=2,gpus=4,chip=h100,pix=2",
         "rail:servers=2,gpus=4,chip=h100,nic=roce-400g", "rail:servers=2,gpus=4,chip=gb200",
         "dgx-h100", "fattree:k=4,chip=h100", "leafspine:k=4,over=3,chip=h100",
         "dragonfly:h=1,chip=h100", "switch:8,planes=2,chip=h100", "hypermesh:2x4,chip=h100",
         "torus:4x4,chip=h100")
KERNELS = ("pplx", "deepep-low-latency", "deepep-normal", "ncclep-low-latency", "one-sided")
PER_EXPERT = ("deepep-low-latency", "ncclep-low-latency", "pplx")
E, K = 256, 8          # deepseek-v3's routed experts and experts per token


def domains(g):
    """Chip -> load/store domain label: components without NICs and message links."""
    G = g.graph
    H = nx.Graph()
    H.add_nodes_from(n for n in G if G.nodes[n]["kind"] != "nic")
    H.add_edges_from((u, v) for u, v, d in G.edges(data=True)
                     if "nic" not in (G.nodes[u]["kind"], G.nodes[v]["kind"])
                     and (d.get("tech") or "") not in MESSAGE)
    return {n: i for i, comp in enumerate(nx.connected_components(H)) for n in comp}


@st.composite
def degraded(draw, f, links=3, chips=1, lanes=2):
    """``f`` with up to ``links`` failed links, ``chips`` failed chips and ``lanes`` failed lanes
    of its bundles (less what a drawn chip takes with it); ``f`` itself where the failure model
    refuses the draw."""
    edges = sorted(f.graph.edges(), key=str)
    cut = draw(st.lists(st.sampled_from(edges), max_size=links, unique_by=frozenset))
    dead = draw(st.lists(st.sampled_from(list(f.endpoints)), max_size=chips))
    cut = [e for e in cut if not set(e) & set(dead)]
    bundles = [e for e in edges if f.graph.edges[e].get("lanes", 1) > 1
               and not set(e) & set(dead) and frozenset(e) not in map(frozenset, cut)]
    thin = draw(st.lists(st.sampled_from(bundles), max_size=lanes, unique_by=frozenset)) \
        if bundles else []
    if cut or dead or thin:
        try:
            return f.without(links=cut, chips=dead, lanes=thin)
        except FabricError:
            return f
    return f


@st.composite
def ep_group(draw, g, mixed=True):
    """EP ranks of ``g``: one to all of its load/store domains in a drawn order, the same drawn
    number of chips from each (the routing model's equal fill), in domain order or, with
    ``mixed``, in a drawn order."""
    lab = domains(g)
    by = {}
    for c in g.endpoints:
        by.setdefault(lab[c], []).append(c)
    doms = draw(st.permutations(sorted(by)))
    doms = doms[:len(doms) - draw(st.integers(0, len(doms) - 1))]     # all of them first
    per = draw(st.integers(1, min(len(by[d]) for d in doms)))
    chips = [c for d in doms for c in draw(st.permutations(by[d]))[:per]]
    return list(draw(st.permutations(chips))) if mixed else chips


def _miss(total, subset, k):
    if subset >= total or k > total - subset:
        return 0.0
    return math.prod((total - subset - i) / (total - i) for i in range(k))


def _split(g, paths, nbytes):
    """Bytes per directed link of one pair sent along ``paths`` by the fabric's ECMP rule."""
    out = {}
    if g.router.ecmp != "weighted":
        for p in paths:
            for u, v in itertools.pairwise(p):
                out[u, v] = out.get((u, v), 0.0) + nbytes / len(paths)
        return out
    G, nxt = g.graph, {}
    for p in paths:
        for u, v in itertools.pairwise(p):
            nxt.setdefault(u, set()).add(v)
    flow = {paths[0][0]: nbytes}
    for u in sorted({n for p in paths for n in p}, key=lambda n: next(
            p.index(n) for p in paths if n in p)):
        if u in nxt and u in flow:
            w = {v: float(G.edges[u, v]["bandwidth"]) for v in nxt[u]}
            for v in sorted(w):
                part = flow[u] * w[v] / sum(w.values())
                out[u, v] = out.get((u, v), 0.0) + part
                flow[v] = flow.get(v, 0.0) + part
    return out


def port(g, chip):
    """The chip's way onto the network: a NIC with a link beyond the chip (the widest by its
    narrowest link), else the chip itself when it has message links; None without either."""
    G = g.graph
    nics = [n for n in G[chip] if G.nodes[n]["kind"] == "nic" and set(G[n]) - {chip}]
    if nics:
        return max(sorted(nics), key=lambda n: min(float(d["bandwidth"])
                                                   for _, _, d in G.edges(n, data=True)))
    own = [n for n in G[chip] if (G.edges[chip, n].get("tech") or "") in MESSAGE]
    return chip if own else None


def grouped_expert_ids(t, ep):
    """The top-K expert ids, slot by slot, of token ``t`` (of any rank) under NVIDIA's
    aiconfigurator collector's ``generate_balanced_expert_ids`` (collect_trtllm_alltoall.py,
    cef980f2b), written out: at ``ep >= K`` slot ``k``'s expert is ``target_rank x
    experts_per_rank + offset`` with ``target_rank = (t mod (ep // K)) x K + k`` and ``offset =
    (t // (ep // K)) mod experts_per_rank``; else ``(k mod ep) x experts_per_rank + (t + k //
    ep) mod experts_per_rank``; ``experts_per_rank = E // ep``."""
    per_rank = E // ep
    if ep >= K:
        groups = ep // K
        return [((t % groups) * K + k) * per_rank + (t // groups) % per_rank for k in range(K)]
    return [(k % ep) * per_rank + (t + k // ep) % per_rank for k in range(K)]


def grouped_ranks(t, ep):
    """The ranks token ``t`` reaches under the collector's generator: each expert id over
    ``experts_per_rank`` (:func:`grouped_expert_ids`)."""
    return {e // (E // ep) for e in grouped_expert_ids(t, ep)}


def pairs(g, chips, kernel, tokens, nbytes, routing, rdma, sources=None):
    """``(scale-up pairs, network pairs)``: ``{(i, j): bytes}`` of the dispatch from EP rank
    ``i`` to ``j`` (positions in ``chips``), the ranks holding tokens sending: all (``None``),
    the first ``sources`` (an int) or the positions ``sources`` lists, ``tokens`` each; or,
    ``tokens`` a list, each EP rank its own count (0: none)."""
    lab = domains(g)
    dom = [lab[c] for c in chips]
    ep, nodes = len(chips), len(set(dom))
    if isinstance(tokens, int):
        senders = (range(ep) if sources is None else range(sources)
                   if isinstance(sources, int) else set(sources))
        held = [tokens if i in senders else 0 for i in range(ep)]
    else:
        held = list(tokens)
    if routing == "uniform":
        p_rank, p_node = 1 - _miss(E, E / ep, K), 1 - _miss(E, E / nodes, K)
    elif routing != "grouped":
        p_rank, p_node = expert_reach(E, K, ep, nodes, routing)
    up, net = {}, {}
    local = {i: [j for j in range(ep) if dom[j] == dom[i]].index(i) for i in range(ep)}
    for i, j in itertools.permutations(range(ep), 2):
        if kernel == "deepep-normal":
            if dom[i] == dom[j]:
                # forwarder i delivers, for every source of its rail (its own included)
                rail = sum(held[s] for s in range(ep) if local[s] == local[i])
                if rail:
                    up[i, j] = rail * p_rank * nbytes
            elif local[i] == local[j] and held[i]:
                net[i, j] = held[i] * p_node * nbytes
            continue
        if not held[i]:
            continue
        if routing == "grouped":
            # the collector's generator token by token: one copy per (token, rank)
            per = sum(j in grouped_ranks(t, ep) for t in range(held[i]))
            if per:
                (up if dom[i] == dom[j] and not rdma else net)[i, j] = per * nbytes
            continue
        per = held[i] * K / ep if kernel in PER_EXPERT else held[i] * p_rank
        (up if dom[i] == dom[j] and not rdma else net)[i, j] = per * nbytes
    return up, net


def loads(g, chips, up, net):
    """``(link bytes, NIC (sent, received), network link bytes)`` of pair matrices; raises
    LookupError where a pair has no path or a rank no way onto the network."""
    def route(pairs):
        out = {}
        for (i, j), b in pairs.items():
            paths = policy_paths(g, chips[i], chips[j])
            if not paths:
                raise LookupError(f"no path {chips[i]} -> {chips[j]}")
            for e, x in _split(g, paths, b).items():
                out[e] = out.get(e, 0.0) + x
        return out

    nics = {}
    for i, c in enumerate(chips):
        sent = sum(b for (a, _), b in net.items() if a == i)
        recv = sum(b for (_, a), b in net.items() if a == i)
        if sent or recv:
            p = port(g, c)
            if p is None:
                raise LookupError(f"{c} has no way onto the network")
            nics[p] = (sent, recv)
    return route(up), nics, route(net)


def reference(g, chips, kernel, tokens, nbytes, routing, rdma, sources=None):
    """:func:`loads` of the dispatch's :func:`pairs`."""
    return loads(g, chips, *pairs(g, chips, kernel, tokens, nbytes, routing, rdma, sources))


def reverse(pairs):
    """The combine's pairs: the dispatch's sent back."""
    return {(j, i): b for (i, j), b in pairs.items()}


def stage_times(g, links, nics, net_links):
    """``(scale-up seconds, network seconds)`` of :func:`loads`' link and NIC bytes."""
    G = g.graph
    ls = get_transport("loadstore")
    payload = ls.max_payload / (ls.max_payload + ls.header)
    up_t = max((b / (float(G.edges[e]["bandwidth"])
                     * _link_efficiency(G.edges[e].get("tech") or "", payload))
                for e, b in links.items()), default=0.0)
    eff = EXCHANGE_NIC_EFFICIENCY.value

    def port_rate(n):
        if G.nodes[n]["kind"] == "nic":
            return min(float(d["bandwidth"]) for _, _, d in G.edges(n, data=True)) * eff
        return sum(float(G.edges[n, m]["bandwidth"]) for m in G[n]
                   if (G.edges[n, m].get("tech") or "") in MESSAGE) * eff
    ports = max((max(s, v) / port_rate(n) for n, (s, v) in nics.items()), default=0.0)
    routed = max((b / (float(G.edges[e]["bandwidth"]) * eff) for e, b in net_links.items()),
                 default=0.0)
    return up_t, (routed if routed > ports * (1 + 1e-9) else ports)


def assert_model_is_brute_force(r, g, chips, up, net):
    """``analysis.moe_exchange``'s result ``r`` against the dispatch pairs ``up``, ``net``
    (:func:`pairs`): its link and NIC bytes, its dispatch's scale-up and network times, and its
    combine's, the pairs sent back (:func:`reverse`) at the combine's bytes."""
    links, nics, net_links = loads(g, chips, up, net)
    assert set(r.link_bytes) == set(links)
    for e, b in links.items():
        assert r.link_bytes[e] == pytest.approx(b, rel=1e-9)
    assert set(r.nic_bytes) == set(nics)
    for n, (sent, recv) in nics.items():
        assert r.nic_bytes[n] == pytest.approx((sent, recv), rel=1e-9)
    scale = r.combine_bytes / r.dispatch_bytes
    back = stage_times(g, *loads(g, chips, reverse(up), reverse(net)))
    for ph, (up_t, net_t), s in ((r.dispatch_phase, stage_times(g, links, nics, net_links), 1),
                                 (r.combine_phase, back, scale)):
        assert ph.scaleup == pytest.approx(up_t * s, rel=1e-9, abs=1e-18)
        assert ph.network == pytest.approx(net_t * s, rel=1e-9, abs=1e-18)
