"""Dispatch, session 27 (brief item 3): the one-sided exchange on a degraded fabric names the
problem when the failures part its EP ranks' load/store domain.

Before, on ``cluster-128`` with the link ``chip0-nvs0`` failed (chip0 keeps its NIC, so every
pair still has a route), ``moe_exchange(g, ..., 8, kernel="one-sided")`` raised "the 8 EP ranks
fill their 2 load/store domains unequally ([1, 7] ranks); the routing model needs equal nodes":
the routing model's limit, where the kernel cannot run at all (it works within one load/store
domain), and no word of the failure. Now a kernel that works within one domain is refused for
its reach before the equal-fill check, and both messages name what failed inside the domains the
ranks shared on the intact fabric. No number moves.
"""

import networkx as nx
import pytest
from degrade import built
from exchange_brute import domains
from hypothesis import given, settings
from hypothesis import strategies as st

import topologies
from analysis import NotApplicableError, moe_exchange
from fabric import FabricError, RoutingError, SpecError, exchange_kernel

KW = {"dispatch_bytes": 1, "combine_bytes": 2}


def test_one_sided_across_a_split_domain_is_refused_for_its_reach_naming_the_failure():
    g = topologies.build("cluster-128").without(links=["chip0-nvs0"])
    for kernel in ("one-sided", "one-sided-1.3"):
        with pytest.raises(NotApplicableError, match=(
                rf"^kernel '{kernel}' works within one load/store domain, but the 8 EP ranks "
                r"span 2 of cluster-128 without 1 link; on the intact fabric they share one "
                r"load/store domain, which the failures split: link chip0-nvs0 failed$")):
            moe_exchange(g, "deepseek-v3", 1, 8, kernel=kernel, **KW)


def test_a_scale_out_kernel_names_the_failure_that_split_the_domain_unequally():
    g = topologies.build("cluster-128").without(links=["chip0-nvs0"])
    for kernel in ("deepep-low-latency", "pplx"):
        with pytest.raises(SpecError, match=(
                r"fill their 2 load/store domains unequally \(\[1, 7\] ranks\); the routing "
                r"model needs equal nodes; on the intact fabric they share one load/store "
                r"domain, which the failures split: link chip0-nvs0 failed$")):
            moe_exchange(g, "deepseek-v3", 1, 8, kernel=kernel, **KW)


def test_a_failed_switch_and_ranks_already_apart():
    f = topologies.build("cluster-128")
    with pytest.raises(NotApplicableError, match=(
            r"span 8 of cluster-128 without 1 node; on the intact fabric they share one "
            r"load/store domain, which the failures split: node nvs0 failed$")):
        moe_exchange(f.without(chips=["nvs0"]), "deepseek-v3", 1, 8, kernel="one-sided", **KW)
    # two servers' ranks, one of which the failure parts: the intact fabric had them in two
    with pytest.raises(NotApplicableError, match=(
            r"span 3 of cluster-128 without 1 link; on the intact fabric they span 2 load/store "
            r"domains, which the failures split: link chip9-nvs1 failed$")):
        moe_exchange(f.without(links=["chip9-nvs1"]), "deepseek-v3", 1, 16,
                     kernel="one-sided", **KW)
    # apart on the intact fabric too: the kernel's reach alone, no failure to name
    with pytest.raises(NotApplicableError, match=r"span 2 of cluster-128$"):
        moe_exchange(f, "deepseek-v3", 1, 16, kernel="one-sided", **KW)
    # a failure outside the ranks' domain is not theirs to name
    with pytest.raises(NotApplicableError, match=r"span 2 of cluster-128 without 1 link$"):
        moe_exchange(f.without(links=["chip40-nvs5"]), "deepseek-v3", 1, 16,
                     kernel="one-sided", **KW)


def test_a_failed_rail_switch_is_named_as_the_lost_way_out():
    """Before: "... has no NIC with a link to the network", no cause (only a failed NIC or a
    failed NIC link was named, not the failed switch the NIC hung on)."""
    g = topologies.build("rail:servers=2,gpus=2,chip=h100").without(chips=["rail0"])
    with pytest.raises(RoutingError, match=r"rank 0 \('chip0'\) must reach ranks outside its "
                                           r"load/store domain but has no NIC with a link to the "
                                           r"network: node rail0 failed$"):
        moe_exchange(g, "deepseek-v3", 1, 4, kernel="deepep-low-latency", **KW)


SPECS = ("rail:servers=2,gpus=4,chip=h100", "rail:servers=3,gpus=2,chip=h100",
         "switch:8,planes=2,chip=h100", "dgx-h100")


@st.composite
def _case(draw):
    f = built(draw(st.sampled_from(SPECS)))
    G = f.graph
    inner = sorted((e for e in G.edges if "nic" not in (G.nodes[e[0]]["kind"],
                                                        G.nodes[e[1]]["kind"])), key=str)
    links = draw(st.lists(st.sampled_from(inner), max_size=3, unique_by=frozenset))
    switches = sorted(n for n in G if G.nodes[n]["kind"] == "switch")
    nodes = draw(st.lists(st.sampled_from(switches), max_size=1))
    links = [e for e in links if not set(e) & set(nodes)]
    try:
        g = f.without(links=links, chips=nodes)
    except FabricError:
        g = f
    chips = draw(st.permutations(list(g.endpoints)))
    return f, g, list(chips[:draw(st.integers(2, len(chips)))])


@settings(max_examples=30, deadline=None)
@given(_case(), st.sampled_from(["one-sided", "one-sided-1.3", "deepep-low-latency", "pplx"]))
def test_split_domains_against_brute_force(case, kernel):
    """On random failed links and switches: a one-domain kernel whose ranks lie in several
    domains (brute force) is refused for its reach, never for the fill; the failures are
    named exactly when they parted domains the ranks shared on the intact fabric, and only
    failures inside those domains are named."""
    f, g, chips = case
    one_domain = not exchange_kernel(kernel).scale_out
    now, before = domains(g), domains(f)        # brute force (tests/exchange_brute.py)
    held = {before[c] for c in chips}
    parted = len({now[c] for c in chips}) > len(held)
    counts = sorted(list(map(now.get, chips)).count(d) for d in {now[c] for c in chips})
    try:
        moe_exchange(g, "deepseek-v3", 1, chips, kernel=kernel, **KW)
    except RoutingError as e:
        msg = str(e)
        if "cut off" in msg:          # no path between two ranks (require_joined names it)
            comp = {n: i for i, c in enumerate(nx.connected_components(g.graph)) for n in c}
            assert len({comp[c] for c in chips}) > 1, msg
        # else a rank that must leave its domain lost its way out, or the routing policy has
        # no path (switch planes: a chip on one plane only, its peer on the other)
        assert msg.endswith(" failed"), msg           # what failed is named
        return
    except SpecError as e:
        msg = str(e)
        if one_domain:
            assert isinstance(e, NotApplicableError) and "works within one" in msg, msg
            assert len(counts) > 1
        else:
            assert "unequally" in msg and len(set(counts)) > 1, msg
        assert ("which the failures split" in msg) == parted, msg
        if parted:
            named = msg.rsplit(": ", 1)[1].removesuffix(" failed")
            for item in named.replace(" and ", ", ").split(", "):
                if item.endswith(" more"):
                    continue
                what, name = item.split(" ", 1)
                ends = name.split("-") if what == "link" else [name]
                assert all(before.get(x) in held for x in ends), (item, msg)
        return
    # it ran: one domain for the one-sided kernel, an equal fill for the scale-out one
    assert len(counts) == 1 if one_domain else len(set(counts)) == 1
