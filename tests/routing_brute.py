"""Brute-force routing for tests: enumerate the paths each policy allows with networkx.

Independent of fabric/_routing.py: paths are enumerated (coordinate stepping for dimension
order; for up/down and minimal a breadth-first search over (node, policy state) and every
shortest path back through its layers, checked against all simple paths filtered by the
policy's rule, :func:`simple_paths_reference`), the shortest kept; loads split a pair's
bytes evenly over its paths.
"""

import itertools

import networkx as nx
import numpy as np
from degrade import built


def built_h100(spec):
    """``topologies.build(spec + ",chip=h100")`` from the one build memo (degrade.built): the
    fabrics the routing property tests draw (a fabric is immutable, so one copy serves every
    test)."""
    return built(spec + ",chip=h100")


def _level(G, n):
    d = G.nodes[n]
    if d["kind"] == "chip":
        return -2
    if d["kind"] == "switch":
        return d.get("tier", 0)
    return -1


def _group(G, n):
    if G.nodes[n]["kind"] == "chip":
        (n,) = list(G[n])
    return int(n[1:].split(".")[0])


def _valley_free(G, p):
    lev = [_level(G, n) for n in p]
    steps = [b - a for a, b in itertools.pairwise(lev)]
    if any(s == 0 for s in steps):
        return False
    down = False
    for s in steps:
        if s < 0:
            down = True
        elif down:
            return False
    return True


def _shortest_of(paths):
    if not paths:
        return []
    m = min(len(p) for p in paths)
    return sorted(p for p in paths if len(p) == m)


def _dor_paths(f, s, t):
    G = f.graph
    shape = f.structure.shape
    connect = f.structure.connect
    at = {G.nodes[n]["coord"]: n for n in f.endpoints}
    options = []
    cur = list(G.nodes[s]["coord"])
    goal = G.nodes[t]["coord"]
    for d, (k, c) in enumerate(zip(shape, connect)):
        a, b = cur[d], goal[d]
        segs = []
        if a != b:
            def node(x, d=d):
                cc = list(cur)
                cc[d] = x
                return at[tuple(cc)]
            if c == "full":
                segs = [[node(a), node(b)]]
            elif c == "switch":
                (sw,) = [m for m in nx.common_neighbors(G, node(a), node(b))
                         if G.nodes[m]["kind"] == "switch"]
                segs = [[node(a), sw, node(b)]]
            elif c == "line":
                step = 1 if b > a else -1
                segs = [[node(x) for x in range(a, b + step, step)]]
            else:
                up = (b - a) % k
                down = (a - b) % k
                if up <= down:
                    segs.append([node((a + i) % k) for i in range(up + 1)])
                if down <= up:
                    segs.append([node((a - i) % k) for i in range(down + 1)])
            options.append(segs)
        cur[d] = b
    paths = []
    for combo in itertools.product(*options):
        p = [s]
        for seg in combo:
            p += seg[1:]
        paths.append(p)
    return paths or [[s]]


def _gone(f, g, s=None):
    """Nodes a route from ``s`` cannot pass on ``g``: the failed nodes and the live nodes left
    with no live link (names); where the failures split the live chips into groups
    (``g.failures.islands``, or a chip cut off alone, ``g.failures.cut_off``), every node
    outside ``s``'s component (so a chip cut off alone, and a switch left with only it, are
    failed nodes to the others)."""
    H = g.graph
    if (g.failures.islands or g.failures.cut_off) and s is not None and H.degree(s) > 0:
        comp = nx.node_connected_component(H, s)
        return {x for x in f.graph if x not in comp}
    return {x for x in f.graph if x not in H or (H.degree(x) == 0 and f.graph.degree(x) > 0)}


def _qualifies(f, g, u, v, a, b):
    """The live link ``a -> b`` is no wider and no faster than the failed ``u -> v``."""
    e, h = f.graph.edges[u, v], g.graph.edges[a, b]
    return h["bandwidth"] <= e["bandwidth"] and h["latency"] >= e["latency"]


def _main_component(g):
    """The largest component of the surviving graph (lowest node index at a tie)."""
    order = {n: i for i, n in enumerate(g.nodes)}
    comps = list(nx.connected_components(g.graph))
    return max(comps, key=lambda c: (len(c), -min(order[n] for n in c)))


def _far_standin(f, g, u, v, comp):
    """The live link of ``comp`` nearest the failed ``u -> v``: first by no wider and no
    faster (only those, when any), then by intact hops ``u`` to its tail plus its head to
    ``v``, then by the router's link index."""
    G0, H, r = f.graph, g.graph, g.router
    du = nx.single_source_shortest_path_length(G0, u)
    dv = nx.single_source_shortest_path_length(G0, v)
    links = [(a, b) for a, b in itertools.chain(H.edges, ((b, a) for a, b in H.edges))
             if a in comp]
    if not links:
        return None
    good = [e for e in links if _qualifies(f, g, u, v, *e)]
    big = len(G0) + 1
    return min(good or links,
               key=lambda e: (du.get(e[0], big) + dv.get(e[1], big), r.link_index(*e)))


def _standin(f, g, u, v, gone, home=None):
    """The stand-in link (names, directed) of the link ``u -> v`` of a run through failed
    nodes on ``g``, or ``None`` (``home``: the component the route is in, where the failures
    split the live chips; else the largest). A live ``u`` (the run's first link): ``u -> y`` for the
    live neighbour ``y`` of ``u`` first by (link wider than ``u``-``v``, of lower latency,
    ``y`` a neighbour of ``v``, sum of hop distances from ``y`` to ``v``'s other live
    neighbours on ``g`` (the node count where none leads), ``g``'s node index), among the
    links no wider and no faster when any; a live ``v`` (the last link) the mirror
    ``y -> v``; when the live end has no such link but the component does, and between two
    nodes a route cannot pass, :func:`_far_standin`."""
    G0, H = f.graph, g.graph
    order = {n: i for i, n in enumerate(g.nodes)}
    if u not in gone or v not in gone:
        p, x = (u, v) if u not in gone else (v, u)
        comp = nx.node_connected_component(H, p)
        ys = list(H[p])
        if not ys:
            return None
        good = [y for y in ys if _qualifies(f, g, u, v, *((p, y) if p == u else (y, p)))]
        anywhere = any(_qualifies(f, g, u, v, a, b) for a, b in
                       itertools.chain(H.edges, ((b, a) for a, b in H.edges)) if a in comp)
        if not good and anywhere:
            return _far_standin(f, g, u, v, comp)
        e = G0.edges[p, x]
        others = [q for q in G0[x] if q in H and q not in gone and q != p]

        def key(y):
            d = nx.single_source_shortest_path_length(H, y)
            return (H.edges[p, y]["bandwidth"] > e["bandwidth"],
                    H.edges[p, y]["latency"] < e["latency"], y in G0[x],
                    sum(d.get(q, len(g.nodes)) for q in others), order[y])

        y = min(good or ys, key=key)
        return (p, y) if p == u else (y, p)
    return _far_standin(f, g, u, v, _main_component(g) if home is None else home)


def _shortest_route(g, a, b, route):
    G = g.graph
    p = route(a, b)
    assert p[0] == a and p[-1] == b
    assert all(G.has_edge(x, y) for x, y in itertools.pairwise(p))
    assert len(p) - 1 == nx.shortest_path_length(G, a, b), (a, b, p)
    return p


def _tunnel(g, a, b):
    """The router's one shortest surviving path from ``a`` to ``b`` (names; the engine's
    hash choice, which a brute force cannot re-derive), checked to be shortest."""
    r = g.router
    idx = g.node_index

    def route(u, v):
        return [u] + [g.nodes[int(r.link_head[k])] for k in r._engine.path(idx[u], idx[v])]

    return [a] if a == b else _shortest_route(g, a, b, route)


def _joined(g, a, b, sts, merge):
    """The walk from ``a`` to ``b`` over the stand-ins ``sts`` in order, joined by shortest
    surviving paths; with ``merge``, consecutive equal stand-ins crossed once. ``None``
    when a stand-in is missing or a join has no path."""
    G = g.graph
    out, cur, prev = [a], a, None
    for st in sts:
        if st is None or not nx.has_path(G, cur, st[0]):
            return None
        if merge and st == prev:
            continue
        out += _tunnel(g, cur, st[0])[1:] + [st[1]]
        cur, prev = st[1], st
    if not nx.has_path(G, cur, b):
        return None
    return out + _tunnel(g, cur, b)[1:]


def degraded_dor_paths(f, g, s, t):
    """The paths dimension order takes from ``s`` to ``t`` on ``g``, a degraded copy of the
    grid ``f`` (names), each carrying an equal share, by the rule of fabric/_routing.py
    ("Failures under dimension order"): the intact fabric's dimension-order paths, each
    failed link on them replaced by its bypass and each run through failed nodes (or
    live nodes left with no live link; where the failures split the live chips,
    ``g.failures.islands`` or ``g.failures.cut_off``, every node outside the pair's
    component)
    ``p -> x1 ... xk -> q`` by the stand-ins of its links in order (:func:`_standin`),
    joined by shortest surviving paths; a path with a
    failed link whose ends the failures disconnected, or a run with a link with no
    stand-in or no path between its stand-ins, is dropped. With none left, the pair's one
    path (``g.route``) if any. A bypass is ``g.route(u, v)`` of the failed link ``u -> v``,
    checked here to be a shortest path of the surviving graph, so one bypass serves every
    pair that crossed the link; so are the paths between stand-ins and a pair's one path.
    Returns ``[]`` when ``s`` and ``t`` are disconnected.
    """
    G = g.graph
    if not nx.has_path(G, s, t):
        return []
    gone = _gone(f, g, s)
    home = (nx.node_connected_component(G, s) if g.failures.islands or g.failures.cut_off
            else None)
    out = []
    for p in _dor_paths(f, s, t):
        q = [p[0]]
        i = 0
        while i < len(p) - 1:
            a, b = p[i], p[i + 1]
            if b in gone:                   # a run through failed nodes
                j = i + 1
                while p[j] in gone:
                    j += 1
                run = list(itertools.pairwise(p[i:j + 1]))
                sts = [_standin(f, g, u, v, gone, home) for u, v in run]
                seg = _joined(g, a, p[j], sts, merge=True)
                if seg is not None:
                    hops, lat = len(seg) - 1, path_latency(g, seg)
                    if hops < len(run) or lat < path_latency(f, p[i:j + 1]) * (1 - 1e-12):
                        seg = None
                if seg is None:
                    seg = _joined(g, a, p[j], sts, merge=False)
                if seg is None:
                    break
                q += seg[1:]
                i = j
            elif G.has_edge(a, b):
                q.append(b)
                i += 1
            elif nx.has_path(G, a, b):
                q += _shortest_route(g, a, b, g.route)[1:]
                i += 1
            else:
                break
        else:
            out.append(q)
    return out or [_shortest_route(g, s, t, g.route)]


def assert_route_is_the_rule(f, g, s, t):
    """Assert that degraded fabric ``g`` (``f`` without its failures) routes ``s`` -> ``t`` as
    :func:`degraded_dor_paths` says: one of its paths, the longest one's hop count, the tie
    split's link loads; a pair the rule cannot route raises RoutingError."""
    import pytest

    from fabric import RoutingError
    want = degraded_dor_paths(f, g, s, t)
    r, i = g.router, g.node_index
    if not want:
        with pytest.raises(RoutingError):
            g.route(s, t)
        return
    assert g.route(s, t) in want
    assert int(r.hops(i[s], i[t])[0]) == max(len(p) for p in want) - 1
    ref = np.zeros(r.n_links)
    for p in want:
        for a, b in itertools.pairwise(p):
            ref[r.link_index(a, b)] += 1.0 / len(want)
    np.testing.assert_allclose(r.loads(i[s], i[t], 1.0), ref, atol=1e-12)


def degraded_dor_hops(f, g):
    """Hop histogram of dimension order on ``g``, a degraded copy of the grid ``f``, by
    :func:`degraded_dor_paths` over every ordered pair of live chips (the longer way of a
    tie counts): ``counts[h]`` pairs route over ``h`` hops, as ``hop_distribution`` gives."""
    routed = {}
    for s, t in itertools.permutations(g.endpoints, 2):
        h = max(len(p) for p in degraded_dor_paths(f, g, s, t)) - 1
        routed[h] = routed.get(h, 0) + 1
    return [routed.get(h, 0) for h in range(max(routed) + 1)]


def minimal_hops(g):
    """Hop histogram of a (degraded) dragonfly's minimal routing over every ordered pair of
    live chips, one search per source instead of one path enumeration per pair: a pair's hops
    are its :func:`policy_distances` under ``"minimal"`` (one global link at most), or, where
    no such path is left, the surviving graph's shortest distance (:func:`policy_paths`'s
    fallback); None when some pair has no path at all. 72 searches on dragonfly:h=2 where
    :func:`policy_paths` over its 5,112 pairs takes ~15 s
    (tests/test_audit_s26_dragonfly_hops.py holds the two to each other on small degraded
    dragonflies)."""
    counts = {}
    for s in g.endpoints:
        minimal, graph = policy_distances(g, s, "minimal"), None
        for t in g.endpoints:
            if t == s:
                continue
            d = minimal.get(t)
            if d is None:
                graph = graph or nx.single_source_shortest_path_length(g.graph, s)
                d = graph.get(t)
                if d is None:
                    return None
            counts[d] = counts.get(d, 0) + 1
    return [counts.get(h, 0) for h in range(max(counts) + 1)] if counts else []


def _step(G, policy):
    """The policy's rule as a state machine over one hop ``(a, b, state) -> state or None``:
    up/down's state is whether a down step was taken (a valley-free path never goes up after
    it, nor along a level); minimal's the global hops taken (at most one). ``None`` for
    up/down or minimal refuses the hop."""
    if policy == "up-down":
        def step(a, b, down):
            d = _level(G, b) - _level(G, a)
            return None if d == 0 or (down and d > 0) else (down or d < 0)
        return step, False
    if policy == "minimal":
        def step(a, b, hops):
            hops += _group(G, a) != _group(G, b)
            return None if hops > 1 else hops
        return step, 0
    return (lambda a, b, x: x), 0


def _layered_shortest(G, s, t, step, start, cutoff):
    """Every shortest path from ``s`` to ``t`` of at most ``cutoff`` hops through no chip but
    its ends, each hop allowed by ``step`` (:func:`_step`): a breadth-first search over (node,
    state) pairs, then every path back through the layers' predecessors. A shortest such
    path is simple (a node met twice, the second time in a state no freer than the first,
    could be cut out), so these are the shortest of the allowed simple paths."""
    chip = {n for n in G if G.nodes[n]["kind"] == "chip"}
    layer, preds, seen = [(s, start)], {}, {(s, start)}
    for _ in range(cutoff):
        nxt = {}
        for u in layer:
            if u[0] in chip and u[0] != s:
                continue                        # a path passes through no other chip
            for v in G[u[0]]:
                x = step(u[0], v, u[1])
                if x is None or (v, x) in seen:
                    continue
                nxt.setdefault((v, x), []).append(u)
        seen.update(nxt)
        preds.update(nxt)
        layer = sorted(nxt, key=str)
        ends = [u for u in layer if u[0] == t]
        if ends:
            break
    else:
        return []

    def back(u):
        if u == (s, start):
            return [[s]]
        return [p + [u[0]] for w in preds[u] for p in back(w)]

    return sorted(p for u in ends for p in back(u))


def policy_distances(f, s, policy):
    """Links of the policy's shortest allowed path from chip ``s`` to every node it reaches
    (a dict), through no other chip: one breadth-first search over (node, state) pairs by
    :func:`_step`'s rule (up/down, minimal; any other policy: the graph's shortest paths,
    through chips too, as :func:`brute_paths` takes them)."""
    G = f.graph
    if policy not in ("up-down", "minimal"):
        return nx.single_source_shortest_path_length(G, s)
    step, start = _step(G, policy)
    dist, layer, seen, k = {s: 0}, [(s, start)], {(s, start)}, 0
    while layer:
        k += 1
        nxt = []
        for u, x in layer:
            if u != s and G.nodes[u]["kind"] == "chip":
                continue                        # a path passes through no other chip
            for v in G[u]:
                y = step(u, v, x)
                if y is None or (v, y) in seen:
                    continue
                seen.add((v, y))
                nxt.append((v, y))
                dist.setdefault(v, k)
        layer = nxt
    return dist


def brute_paths(f, s, t, policy, cutoff=8):
    """All paths the policy allows from node ``s`` to node ``t`` (names): the shortest of
    them (:func:`_layered_shortest`; :func:`simple_paths_reference` is the same set by every
    simple path, far slower: 0.46 s a pair on dragonfly:h=2)."""
    G = f.graph
    if s == t:
        return [[s]]
    if policy == "dimension-order":
        return _dor_paths(f, s, t)
    if policy == "shortest":
        return sorted(nx.all_shortest_paths(G, s, t))
    return _layered_shortest(G, s, t, *_step(G, policy), cutoff)


def simple_paths_reference(f, s, t, policy, cutoff=8):
    """:func:`brute_paths` by enumeration: every simple path of at most ``cutoff`` hops through
    no other chip, filtered by the policy's rule, the shortest kept (the reference the
    layered search is checked against: tests/test_audit_s25_brute.py)."""
    G = f.graph
    paths = []
    for p in nx.all_simple_paths(G, s, t, cutoff=cutoff):
        if any(G.nodes[n]["kind"] == "chip" for n in p[1:-1]):
            continue
        if policy == "up-down" and not _valley_free(G, p):
            continue
        if policy == "minimal":
            hops = sum(_group(G, a) != _group(G, b) for a, b in itertools.pairwise(p))
            if hops > 1:
                continue
        paths.append(p)
    return _shortest_of(paths)


def brute_loads(f, pairs, policy, nbytes=1.0, paths=None):
    """Per directed link loads (contract numbering) of the pairs, ECMP even over paths.

    ``nbytes``: one figure for every pair or one per pair; ``paths(s, t)``: the pair's paths
    (default :func:`brute_paths` under ``policy``)."""
    r = f.router
    out = np.zeros(r.n_links)
    if paths is None:
        def paths(s, t):
            return brute_paths(f, s, t, policy)
    for (s, t), w in zip(pairs, np.broadcast_to(nbytes, len(pairs)), strict=True):
        ps = paths(s, t)
        for p in ps:
            for a, b in itertools.pairwise(p):
                out[r.link_index(a, b)] += w / len(ps)
    return out


def path_latency(f, p):
    G = f.graph
    return sum(G.edges[a, b]["latency"] for a, b in itertools.pairwise(p))


def exchange_network_brute_force(f, r, kernel, nodes, gpus, efficiency):
    """Seconds of an MoE exchange's network stage by brute force: its busiest link.

    Each ordered pair of ranks in different servers (``deepep-normal``: rail peers only)
    carries the bytes its NIC sends divided by its destinations, split evenly over every
    shortest path that passes through no other GPU; a link's time is its load at
    ``efficiency`` of its bandwidth. ``r`` is the :func:`analysis.moe_exchange` result on
    ``f`` (``nodes`` servers of ``gpus`` ranks).
    """
    G, chips = f.graph, f.endpoints
    loads = {}
    for a, b in itertools.permutations(range(len(chips)), 2):
        if a // gpus == b // gpus or (kernel == "deepep-normal" and a % gpus != b % gpus):
            continue
        dests = nodes - 1 if kernel == "deepep-normal" else (nodes - 1) * gpus
        nbytes = r.nic_bytes[f"nic{a}"][0] / dests
        H = G.subgraph(n for n in G if G.nodes[n]["kind"] != "chip" or n in (chips[a],
                                                                                chips[b]))
        paths = list(nx.all_shortest_paths(H, chips[a], chips[b]))
        for path in paths:
            for u, v in itertools.pairwise(path):
                loads[u, v] = loads.get((u, v), 0.0) + nbytes / len(paths)
    return max(load / (float(G.edges[e]["bandwidth"]) * efficiency)
               for e, load in loads.items())


def draw_pair(g, data):
    """Two distinct live endpoints of ``g`` drawn from ``data`` (Hypothesis ``st.data()``), or
    None when fewer than two are alive."""
    from hypothesis import strategies as st

    if g.n_endpoints < 2:
        return None
    return tuple(data.draw(st.lists(st.sampled_from(g.endpoints), min_size=2, max_size=2,
                                    unique=True)))


def assert_a_drawn_pair_is_the_rule(case, data):
    """:func:`assert_route_is_the_rule` for one pair of the degraded fabric's live endpoints
    drawn from ``data`` (:func:`draw_pair`); ``case`` is ``(f, g)``. Nothing to check when
    fewer than two endpoints are alive."""
    f, g = case
    pair = draw_pair(g, data)
    if pair is not None:
        assert_route_is_the_rule(f, g, *pair)



def policy_paths(g, s, t):
    """Every path ``g``'s routing policy may take from ``s`` to ``t`` (names), by brute force:
    dimension order by :func:`degraded_dor_paths` (from ``g.intact`` when degraded); up/down
    the valley-free paths through no other chip (enumerated on the graph without the other
    chips, as :func:`brute_paths` keeps them); minimal its paths, or the surviving graph's
    shortest ones where a degraded dragonfly has none; shortest all shortest paths. ``[]``
    where the policy has no route."""
    G = g.graph
    if s == t:
        return [[s]]
    policy = g.router.policy
    if policy == "dimension-order":
        f = g.intact if g.failures.degraded else g
        return degraded_dor_paths(f, g, s, t) if g.failures.degraded else _dor_paths(g, s, t)
    if not nx.has_path(G, s, t):
        return []

    class _View:
        graph = G.subgraph([n for n in G if G.nodes[n]["kind"] != "chip" or n in (s, t)])

    if policy == "shortest":
        return sorted(nx.all_shortest_paths(G, s, t))
    paths = brute_paths(_View, s, t, policy)
    if not paths and policy == "minimal":
        paths = sorted(nx.all_shortest_paths(G, s, t))
    return paths


def memory_server(g, owner, src):
    """The node that serves ``owner``'s memory to chip ``src`` on ``g``, by the rule of
    fabric/_access.py target_node: a node its own; a host's DRAM the requester itself when
    it is a chip of that host, else the live chip of the host with the least policy path
    latency from ``src`` (the slowest of its :func:`policy_paths`), the first in domain
    order within 1e-9 of the least; with none routed, the host's first live chip."""
    if owner in g.graph:
        return owner
    chips = list(g.domains[owner])
    if src in chips:
        return src
    lat = {}
    for c in chips:
        paths = policy_paths(g, src, c)
        if paths:
            lat[c] = max(path_latency(g, p) for p in paths)
    if not lat:
        return chips[0]
    least = min(lat.values())
    return next(c for c in lat if lat[c] <= least * (1 + 1e-9))
