"""Audit, session 20: a degraded rail cluster is priced as the rail cluster built that way.

Session 19's oracle (tests/test_audit_s19_degraded.py) for switched nodes, extended to
rail-optimized clusters (``rail:servers=S,gpus=G``: each server's GPUs on one scale-up
switch, GPU ``i`` of every server through its own NIC to rail leaf ``i``, every rail leaf to
every spine by a bundle of ``S / spines`` lanes; H100, B200 and GB200 GPUs, whose two GPUs
per Grace CPU reach each other's NICs: ``pix=2``). Three failures leave a graph that a spec
builds:

- every GPU loses ``k`` of its scale-up lanes: the cluster built with ``links=L-k``;
- the last ``k`` GPUs of every server fail (with or without their NICs): ``gpus=G-k``;
- the last ``m x spines`` servers fail (GPUs, NICs, scale-up switch) and every rail-spine
  bundle loses ``m`` lanes: ``servers=S-m x spines`` (its bundles are one lane per server
  per spine).

Every higher layer must give the same answer on the two: a quantity taken from the
fabric as built (``fabric.intact``, the builder's ``params``) instead of the live graph
shows up as a difference. Checked: every collective under NCCL (several releases, across
servers) and the ideal runtime, every exchange kernel, a decode step, a serving point
and a prefill.

Not expressible as a spec, so not checked here (the never-faster properties of
tests/test_audit_s9_runtime.py and tests/test_degraded_properties.py cover them): a
spine lost, or a rail-spine link or lane lost (a built cluster's bundles are
``servers / spines`` lanes: fewer spines means wider bundles, never narrower ones); a
single NIC lost (every built GPU has its NIC); a scale-up switch lost (no spec builds a
server whose GPUs reach one another only through their NICs).
"""

from built_oracle import collective_alike, decode_serving_prefill_alike, exchange_alike
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import topologies
from fabric import EXCHANGE_KERNELS


def _spec(servers, gpus, links, spines, tail):
    return f"rail:servers={servers},gpus={gpus},links={links},spines={spines},{tail}"


@st.composite
def pairs(draw):
    """(degraded rail cluster, the cluster built so, what was failed)."""
    servers = draw(st.sampled_from([2, 4]))
    spines = draw(st.sampled_from([d for d in (1, 2, 4) if servers % d == 0]))
    chip = draw(st.sampled_from(["h100", "b200", "gb200"]))
    # a GB200 server pairs its GPUs on a Grace CPU (two NICs under it: pix=2), so it keeps
    # an even number of GPUs
    pair = 2 if chip == "gb200" else 1
    gpus = draw(st.sampled_from([2, 4] if pair == 2 else [2, 3, 4]))
    links = draw(st.integers(2, 18))
    tail = (f"chip={chip},nvls={draw(st.sampled_from([0, 1]))},"
            f"nic={draw(st.sampled_from(['ib-ndr', 'roce-400g']))}")
    f = topologies.build(_spec(servers, gpus, links, spines, tail))
    kinds = (["lanes"] + (["gpus"] if gpus > pair else [])
             + (["servers"] if servers > spines else []))
    kind = draw(st.sampled_from(kinds))
    if kind == "lanes":
        k = draw(st.integers(1, links - 1))
        lost = [f"chip{r}-nvs{r // gpus}" for r in range(servers * gpus)]
        return (f.without(lanes=lost * k),
                topologies.build(_spec(servers, gpus, links - k, spines, tail)), kind)
    if kind == "gpus":
        k = pair * draw(st.integers(1, gpus // pair - 1))
        dead = [s * gpus + i for s in range(servers) for i in range(gpus - k, gpus)]
        nics = [f"nic{r}" for r in dead] if draw(st.booleans()) else []
        return (f.without(chips=[f"chip{r}" for r in dead] + nics),
                topologies.build(_spec(servers, gpus - k, links, spines, tail)), kind)
    m = draw(st.integers(1, servers // spines - 1))
    gone = range(servers - m * spines, servers)
    dead = ([f"chip{s * gpus + i}" for s in gone for i in range(gpus)]
            + [f"nic{s * gpus + i}" for s in gone for i in range(gpus)]
            + [f"nvs{s}" for s in gone])
    bundles = [f"rail{i}-spine{j}" for i in range(gpus) for j in range(spines)]
    return (f.without(chips=dead, lanes=bundles * m),
            topologies.build(_spec(servers - m * spines, gpus, links, spines, tail)), kind)


def _pruned(f):
    """f's graph without what no chip can use: a NIC whose GPU failed, and then a rail leaf
    left with no NIC (kinds and lanes kept for the comparison)."""
    G = f.graph.copy()
    for _ in range(2):
        G.remove_nodes_from([n for n in list(G) if G.nodes[n]["kind"] != "chip"
                             and not any(G.nodes[m]["kind"] in ("chip", "nic")
                                         for m in G[n])
                             and G.nodes[n].get("tier", 1) < 2])
    return G


@settings(max_examples=20, deadline=None)
@given(pairs())
def test_the_pairs_are_one_graph(pair):
    # the oracle's premise: up to names, the degraded cluster is the one built so
    import networkx as nx

    g, h, _ = pair
    assert nx.is_isomorphic(
        _pruned(g), _pruned(h),
        node_match=lambda a, b: (a["kind"], a.get("tier")) == (b["kind"], b.get("tier")),
        edge_match=lambda a, b: (a["lanes"], a["bandwidth"], a["latency"]) ==
        (b["lanes"], b["bandwidth"], b["latency"]))


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pairs(), st.sampled_from(["all-reduce", "all-gather", "reduce-scatter", "all-to-all",
                                 "broadcast"]),
       st.sampled_from([4096, 2**20, 2**28]),
       st.sampled_from(["nccl", "nccl@2.18.3", "nccl@2.23.4", "ideal"]))
def test_a_collective_on_a_degraded_rail_cluster_is_the_cluster_built_so(pair, op, size,
                                                                       runtime):
    g, h, _ = pair
    assert collective_alike(g, h, op, size, runtime)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pairs(), st.sampled_from(list(EXCHANGE_KERNELS)), st.sampled_from([1, 128, 4096]),
       st.sampled_from(["uniform", "balanced"]))
def test_an_exchange_on_a_degraded_rail_cluster_is_the_cluster_built_so(pair, kernel, tokens,
                                                                       routing):
    g, h, _ = pair
    assert exchange_alike(g, h, kernel, tokens, routing)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pairs(), st.sampled_from([1, 64]), st.sampled_from(["dp", "tp2", "server"]))
def test_decode_serving_and_prefill_on_a_degraded_rail_cluster_are_the_cluster_built_so(
        pair, batch, shape):
    g, h, _ = pair
    n, gpus = h.n_endpoints, h.params["gpus_per_server"]
    tp = {"dp": 1, "tp2": 2 if n % 2 == 0 else 1, "server": gpus}[shape]
    assert decode_serving_prefill_alike(g, h, batch, f"tp={tp},dp={n // tp}")
