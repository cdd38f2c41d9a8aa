"""A brute-force reference of one access through an address plan (tests only).

Written from the docstrings, not the implementation: the grant rules of fabric/_domains.py
(:func:`granted`), and what ``fabric.access`` answers on a (possibly degraded) fabric
(:func:`expected`): a linear scan over the requester's windows and the map's regions, the
CXL interleave formula, the span rules, the pinned placement's failed owners, and
tests/routing_brute.py for the serving chip and the policy's paths; a link's bandwidth after
failed lanes (:func:`live_bandwidth`).
"""

from routing_brute import memory_server, policy_paths

from fabric import AddressMapError, RoutingError, TranslationError


def homes(f):
    """Owner -> its host domain, as ``f``'s plan places them (the intact fabric's)."""
    out = {}
    for h, chips in f.domains.items():
        out.update({h: h, **{c: h for c in chips}})
    return out


def granted(plan, home, host, reg, op):
    """Whether ``host`` may ``op`` ("read"/"write") region ``reg`` by the grant rules: no
    grants, or its own memory, or a grant of "*", the region's name, an owner or the owner's
    host domain (``home``: owner -> domain); a set when every owner in it is."""
    if plan.grants is None or all(home.get(o) == host for o in reg.owners):
        return True
    mine = [g for g in plan.grants if g.host == host and (op == "read" or g.permissions == "rw")]
    return any(g.target in ("*", reg.name) for g in mine) or all(
        home.get(o) == host or any(g.target in (o, home.get(o)) for g in mine)
        for o in reg.owners)


def live_bandwidth(f, lost, link):
    """The bandwidth of ``link`` of the intact fabric ``f`` once it lost ``lost[frozenset(link)]``
    of its ``lanes`` (fabric.without: the live lanes' share of the bundle's bandwidth)."""
    data = f.graph.edges[link]
    return data["bandwidth"] * (1 - lost[frozenset(link)] / data.get("lanes", 1))


def _gone(g, owner):
    """An owner of address space that no longer serves it: a failed node, a host domain
    with no live chip."""
    return owner not in g.graph and owner not in g.domains


def expected(f, g, src, a, op, size):
    """``("ok", serving node, policy paths)`` or ``(error class, words its message holds)``
    for ``access(g, src, a, op, size)`` (``f``: ``g`` intact; the windows are the domain's
    resolved ones, which tests/test_plan_properties.py holds against the plan)."""
    plan, home = g.address_plan, homes(f)
    host = g.host_of[src]
    regs = [r for r in g.address_map.regions if r.base <= a < r.end]
    if not regs:
        return AddressMapError, ["not mapped"]
    reg = regs[0]
    wins = [w for w in g.host_domains[host].windows
            if w.global_base <= a < w.global_base + w.size]
    if not wins:
        return TranslationError, [f"host {host}", "no window"]

    def permits(w):
        return granted(plan, home, host, reg, "read") and (op == "load" or (
            w.permissions == reg.permissions == "rw" and granted(plan, home, host, reg, "write")))

    if not any(permits(w) for w in wins):
        return TranslationError, [f"host {host}"]
    last, end = a + size - 1, reg.end
    if reg.ways > 1:
        end = reg.base + ((a - reg.base) // reg.granularity + 1) * reg.granularity
    if last >= end:
        return AddressMapError, ["runs past the end of", repr(reg.name)]
    if not any(permits(w) and last < w.global_base + w.size for w in wins):
        return TranslationError, [f"host {host}", "runs past the end of window"]
    o = a - reg.base
    owner = reg.owners[(o // reg.granularity) % reg.ways] if reg.ways > 1 else reg.owner
    gone = [x for x in reg.owners if _gone(g, x)]
    if reg.ways > 1 and gone:
        return RoutingError, [repr(reg.name), repr(gone[0]), "gone as a whole"]
    if gone:
        return RoutingError, [repr(owner), "has failed"]
    server = memory_server(g, owner, src)
    paths = policy_paths(g, src, server)
    if not paths:
        return RoutingError, ["no route", repr(src)]
    return "ok", server, paths
