"""Audit session 31: address plans on degraded fabrics, access by access, against a reference.

Session 30 left these unfuzzed: stores through read-only windows, grants, symmetric-heap
addresses and system-file plans through ``access``/``access_to``/``access_latencies`` with
failed links, chips, switches and NICs. Hypothesis draws a small fabric of each routing
policy (dimension order, up/down with NICs, switched, dragonfly), a random plan (owner-bits
or packed layout, interleave sets, plain and read-only regions, windows ``r``/``rw`` onto
chips, host DRAM, sets, regions and NIC registers, grants or none, a heap, default windows
on or off), random failures, and accesses through the requester's windows, into the heap
and at region ends. The reference is tests/access_brute.py, written from the docstrings
(fabric/_access.py ``access``, fabric/_domains.py's protection rules, fabric/_plan.py's
pinned placement): a linear scan over the domain's windows and the map's regions, the grant
rules, the CXL interleave formula, and tests/routing_brute.py for the serving chip
(``memory_server``) and the policy's paths (``policy_paths``). Every access either gives the
reference's target on one of the policy's paths, or raises the reference's error class with
a message naming the problem. Session 32 added what session 31 only probed: failed lanes of
bundled links (an access's serialization at the narrowest link, a bundle at its live lanes'
share of the intact bandwidth) and explicit-layout plans (each chip's, host's and NIC's
region at a drawn slot, the sets as regions with a base; the system file lists them all).

A fuzz of the same reference before this file (1,200 plans, ~60 k accesses) found no access answered wrongly; the refusal of a set a host may
not read read "window 'w' reaches region 'pair' [...) holds memory of 'chip16', which ..."
(two clauses run together), fixed in fabric/_domains.py ``DomainGrants.why_not``.
"""

from collections import Counter
from dataclasses import replace

import pytest
from access_brute import expected, live_bandwidth
from degrade import apart, built
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from routing_brute import path_latency

import topologies
from fabric import (
    TRANSPORTS,
    AddressPlan,
    DomainLimits,
    FabricError,
    Grant,
    NodeError,
    Region,
    RoutingError,
    SymmetricHeap,
    TranslationError,
    Window,
    access,
    access_latencies,
    access_to,
    check,
)
from fabric._units import GiB, MiB

SPECS = ("mesh:3x3,hosts=3,links=2,chip=h100", "torus:4x2,hosts=2,chip=h100",
         "switch:8,planes=2,links=2,hosts=4,chip=h100", "rail:servers=3,gpus=2,chip=h100",
         "dragonfly:a=2,p=1,h=1,chip=h100", "hypermesh:2x2x2,connect=switch,hosts=2,chip=h100")
PAGE = 2 * MiB
#: Each chip's own region leaves 16 GiB of its 80 GB (h100) for its shares of the sets.
HBM = 64 * GiB
SETTINGS = settings(max_examples=20, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@st.composite
def plans(draw, f):
    """A plan on ``f`` (module docstring) that check() finds no blocking fault in."""
    chips, hosts = list(f.endpoints), sorted(f.domains)
    nics = sorted(n for n in f.graph if f.graph.nodes[n]["kind"] == "nic")
    sets = []
    for i in range(draw(st.integers(0, 2))):
        owners = draw(st.permutations(chips + hosts))[:draw(st.sampled_from([2, 4]))]
        sets.append(Region(0, len(owners) * 256 * MiB, tuple(owners), kind="dram",
                           granularity=draw(st.sampled_from([256, 4096])), name=f"set{i}",
                           permissions=draw(st.sampled_from(["rw", "r"]))))
    extra = []
    for i in range(draw(st.integers(0, 2))):
        o = draw(st.sampled_from(chips + hosts))
        extra.append(Region((1 << 52) + (i << 40), 512 * MiB, o,
                            kind=draw(st.sampled_from(["dram", "mmio"])) if o in chips
                            else "dram", permissions=draw(st.sampled_from(["r", "rw"])),
                            name=f"x{i}"))
    named = [r.name for r in sets + extra]
    targets = named * 3 + chips + [f"{c}.hbm" for c in chips] + [f"{h}.dram" for h in hosts] \
        + nics
    wins = [Window(draw(st.sampled_from(hosts)), (1 << 50) + (i << 40),
                   size=draw(st.sampled_from([None, PAGE, 4 * PAGE])),
                   target=draw(st.sampled_from(targets)),
                   target_offset=draw(st.sampled_from([None, 0, PAGE])), page_size=PAGE,
                   permissions=draw(st.sampled_from(["r", "rw"])), name=f"w{i}")
            for i in range(draw(st.integers(0, 5)))]
    grant_targets = ["*"] + named + chips + hosts + [f"{c}.hbm" for c in chips] + nics
    grants = draw(st.one_of(st.none(), st.lists(st.builds(
        Grant, st.sampled_from(hosts), st.sampled_from(grant_targets),
        st.sampled_from(["r", "rw"])), max_size=5)))
    heap = draw(st.one_of(st.none(), st.builds(
        SymmetricHeap, st.integers(1, 4).map(lambda k: k * PAGE),
        offset=st.integers(0, 3).map(lambda k: k * PAGE))))
    layout = draw(st.sampled_from(["owner-bits", "packed", "explicit"]))
    if layout == "explicit":
        # only the listed regions, where they say: each chip's HBM, each host's DRAM and
        # each NIC's registers at a drawn slot (not rank order), the sets at their own base
        own = [(f"{c}.hbm", c, HBM, "hbm") for c in chips] \
            + [(f"{h}.dram", h, 1 << 30, "dram") for h in hosts] \
            + [(f"{n}.mmio", n, 32 * MiB, "mmio") for n in nics]
        slots = draw(st.permutations(range(len(own))))
        extra = [Region((k + 1) << 40, size, o, kind=kind, name=name)
                 for k, (name, o, size, kind) in zip(slots, own)] + extra + \
            [replace(r, base=(1 << 53) + (k << 40)) for k, r in enumerate(sets)]
        sets = []
    return AddressPlan(hbm_bytes=HBM, interleave=sets, regions=extra, windows=wins,
                       grants=grants, heap=heap, default_windows=draw(st.booleans()),
                       layout=layout, limits=DomainLimits(alignment="page", translation_entries=64))


def _toml(spec, plan):
    """The system file of ``plan`` on ``spec`` (fabric/_system.py's format, plain integers)."""
    def q(x):
        return f'"{x}"'

    # an empty list of grants (nothing but a host's own memory) is a key before any table
    lines = ["grants = []"] if plan.grants is not None and not plan.grants else []
    lines += ["[system]", f"topology = {q(spec)}", "[address]", f"layout = {q(plan.layout)}",
             f"hbm_bytes = {plan.hbm_bytes}",
             f"default_windows = {str(plan.default_windows).lower()}", "[limits]",
             f"alignment = {q(plan.limits.alignment)}",
             f"translation_entries = {plan.limits.translation_entries}"]
    for r in plan.regions:
        lines += ["[[regions]]", f"name = {q(r.name)}", f"base = {r.base}", f"size = {r.size}",
                  f"kind = {q(r.kind)}", f"permissions = {q(r.permissions)}"]
        lines += [f"owners = [{', '.join(map(q, r.owners))}]", f"granularity = {r.granularity}"] \
            if r.ways > 1 else [f"owner = {q(r.owner)}"]
    for r in plan.interleave:
        lines += ["[[interleave]]", f"name = {q(r.name)}",
                  f"owners = [{', '.join(map(q, r.owners))}]", f"granularity = {r.granularity}",
                  f"size = {r.size}", f"kind = {q(r.kind)}", f"permissions = {q(r.permissions)}"]
    for w in plan.windows:
        lines += ["[[windows]]", f"host = {q(w.host)}", f"name = {q(w.name)}",
                  f"local_base = {w.local_base}", f"target = {q(w.target)}",
                  f"page_size = {w.page_size}", f"permissions = {q(w.permissions)}"]
        lines += [f"{k} = {getattr(w, k)}" for k in ("size", "target_offset")
                  if getattr(w, k) is not None]
    for g in plan.grants or ():
        lines += ["[[grants]]", f"host = {q(g.host)}", f"target = {q(g.target)}",
                  f"permissions = {q(g.permissions)}"]
    if plan.heap is not None:
        lines += ["[heap]", f"size = {plan.heap.size}", f"offset = {plan.heap.offset}"]
    return "\n".join(lines) + "\n"


@st.composite
def cases(draw):
    """``(f, g, lost)``: a fabric with a random plan (perhaps read from its system file) and
    the same with up to 3 failed links, a failed chip, a failed switch or NIC and up to 4
    failed lanes (``lost``: link -> lanes it lost)."""
    spec = draw(st.sampled_from(SPECS))
    plan = draw(plans(built(spec)))
    if draw(st.booleans()):
        f = topologies.read_system(_toml(spec, plan)).fabric
        assert f.address_plan == plan                     # the file says what the plan does
    else:
        f = built(spec).replace(address_plan=plan)
    G = f.graph
    links = draw(st.lists(st.sampled_from(sorted(G.edges, key=str)), max_size=3,
                          unique_by=frozenset))
    nodes = draw(st.lists(st.sampled_from(f.endpoints), max_size=1))
    others = sorted(n for n in G if G.nodes[n]["kind"] != "chip")
    nodes += draw(st.lists(st.sampled_from(others), max_size=1)) if others else []
    # failed lanes of bundles (mesh, torus, switch 2 lanes, rail 3 and 18): a bundle named
    # k times loses k lanes and k/lanes of its bandwidth, all of them fails the link
    bundles = [e for e in sorted(G.edges, key=str) if G.edges[e].get("lanes", 1) > 1]
    lanes = draw(st.lists(st.sampled_from(bundles), max_size=4)) if bundles else []
    links, lanes = apart(links, nodes, lanes)
    try:
        g = f.without(links=links, chips=nodes, lanes=lanes)
    except FabricError:                                   # every chip of a host gone etc.
        return f, f, Counter()
    return f, g, Counter(frozenset(e) for e in lanes)


# -- the check ------------------------------------------------------------------------------

def assert_is_the_reference(f, g, src, a, op, size, transport, lost):
    want = expected(f, g, src, a, op, size)
    try:
        got = access(g, src, a, op=op, size=size, transport=transport)
    except FabricError as e:
        if want[0] == "ok":
            # load/store asked across a NIC: refused by name (fabric.reach), not timed
            assert transport == "loadstore" and isinstance(e, RoutingError), (want, e)
            assert f"transport 'loadstore' cannot reach '{want[1]}' from '{src}'" in str(e)
            return None
        assert isinstance(e, want[0]), (want, e)
        for words in want[1]:
            assert words in str(e), (words, str(e))
        return None
    assert want[0] == "ok", (want, got)
    assert got.target == want[1] and list(got.path) in [list(p) for p in want[2]]
    assert (got.address, got.op, got.size) == (a, op, size)
    assert got.forward == pytest.approx(path_latency(g, got.path), rel=1e-12, abs=0)
    # serialization at the narrowest link of the path, a bundle at its live lanes' share of
    # the intact bandwidth (fabric/_access.py, fabric.without)
    t = TRANSPORTS[got.transport]
    wire = t.wire_bytes(size) if op == "store" else t.packets(size) * t.header
    bw = min((live_bandwidth(f, lost, e) for e in zip(got.path, got.path[1:])), default=None)
    assert got.serialization == (0 if bw is None else pytest.approx(wire / bw, rel=1e-12, abs=0))
    assert sum(got.breakdown().values()) == pytest.approx(got.total, rel=1e-12, abs=0)
    assert got.total <= got.slowest * (1 + 1e-12)
    return got


def _addresses(g, src, data):
    """Addresses to try from ``src``: through its host's windows (first byte, middle, last
    cache line, last byte), into a rank's heap, at a region's first and last byte."""
    wins = list(g.host_domains[g.host_of[src]].windows)
    out = []
    for w in data.draw(st.lists(st.sampled_from(wins), min_size=1, max_size=4)) if wins else ():
        out += [w.global_base + x for x in (0, w.size // 2, w.size - 64, w.size - 1)]
    mem = g.symmetric_memory
    if mem is not None:
        for r in data.draw(st.lists(st.integers(0, mem.n_ranks - 1), max_size=2)):
            off = data.draw(st.sampled_from([0, mem.heap.size // 2, mem.heap.size - 1]))
            name = next(c for c, k in {**g.failures.ranks, **g.rank_of}.items() if k == r)
            want = g.address_map.region(f"{name}.hbm").base + mem.heap.offset + off
            if name in g.failures.ranks:           # a failed chip keeps its rank and region
                with pytest.raises(NodeError, match="has failed"):
                    mem.address(r, off)
            else:
                assert mem.address(r, off) == want and mem.locate(want) == (r, off)
            out.append(want)
    r = data.draw(st.sampled_from(g.address_map.regions))
    return out + [r.base, r.end - 1]


@SETTINGS
@given(cases(), st.data())
def test_an_access_on_a_degraded_fabric_is_the_reference_or_names_its_refusal(case, data):
    f, g, lost = case
    for src in data.draw(st.lists(st.sampled_from(g.endpoints), min_size=1, max_size=3)):
        for a in _addresses(g, src, data):
            assert_is_the_reference(
                f, g, src, a, data.draw(st.sampled_from(["load", "store"])),
                data.draw(st.sampled_from([1, 64, 4096, 1 << 22])),
                data.draw(st.sampled_from(["loadstore", "native", "rdma"])), lost)


@SETTINGS
@given(cases(), st.sampled_from(["load", "store"]), st.sampled_from([1, 64, 1 << 22]),
       st.sampled_from(["loadstore", "native"]), st.data())
def test_latencies_are_each_pairs_access_or_refused_when_one_is(case, op, size, transport, data):
    # access_latencies checks every pair up front (fabric/_access.py _permit_all): it must
    # refuse exactly when one pair's access_to does, and else time each pair as access_to's
    # slowest; access_to is access at the first byte of the target's memory
    f, g, lost = case
    chips = data.draw(st.lists(st.sampled_from(g.endpoints), min_size=2, max_size=4,
                               unique=True)) if g.n_endpoints > 1 else []
    if not chips:
        return
    per, refused = {}, []
    for s in chips:
        for d in chips:
            if s == d:
                continue
            reg = g.address_map.region(f"{d}.hbm")
            try:
                a = access_to(g, s, d, op=op, size=size, transport=transport)
            except FabricError as e:
                refused.append(e)             # size fits: every chip's region is 64 GiB
                assert_is_the_reference(f, g, s, reg.base, op, size, transport, lost)
                continue
            assert a == assert_is_the_reference(f, g, s, reg.base, op, size, transport, lost)
            per[s, d] = a.slowest
    try:
        i, j, lat = access_latencies(g, op=op, size=size, transport=transport, chips=chips)
    except FabricError as e:
        assert refused, e
        assert any(isinstance(e, type(x)) for x in refused), (e, refused)
        return
    assert not refused, refused
    assert {(chips[x], chips[y]): t for x, y, t in zip(i.tolist(), j.tolist(), lat.tolist())} \
        == per


def test_a_refused_interleave_set_is_named_in_one_sentence():
    # found by this session's fuzz: why_not's "region 'pair' [...) holds memory of ..." was
    # pasted after "reaches", two clauses run together without a comma or a verb
    f = built("switch:8,planes=2,hosts=4,chip=h100")
    pool = Region(0, 2 * 256 * MiB, ("chip1", "chip5"), kind="dram", granularity=4096,
                  name="pair")
    f = f.replace(address_plan=AddressPlan(
        hbm_bytes=HBM, interleave=[pool], grants=[Grant("host0", "chip2", "rw")],
        windows=[Window("host0", 1 << 50, target="pair", page_size=PAGE, name="w")]))
    iso = next(x for x in check(f) if x.code == "isolation" and "'w'" in x.where + x.message)
    with pytest.raises(TranslationError) as e:
        f.translate("host0", (1 << 50) + 4096)
    for msg in (iso.message, str(e.value)):
        assert "reaches region 'pair' [0x" in msg
        assert "), which holds memory of 'chip5' that host0 may not read (grant" in msg
