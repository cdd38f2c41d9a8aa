"""The address-plan checker: every fault of a plan, before hardware is programmed.

:func:`check` takes a :class:`~fabric.Fabric` (its ``address_plan``) or a
:class:`~fabric.System` read from a TOML file and returns *every*
:class:`~fabric.Finding`, in a deterministic order: the system file's own
faults, then the plan's fields, regions, windows and grants domain by domain,
the symmetric heap, round trips, and reachability. A clean plan gives ``[]``.

Codes (:data:`CODES`):

============================  ========  ===============================================
code                          severity  meaning
============================  ========  ===============================================
``invalid``                   error     a value no plan may have (unknown host, bad ways,
                                        a region its owner cannot hold: hbm on a switch)
``capacity``                  error     an owner's regions and interleave shares claim more
                                        memory than it has (a chip's HBM, a memory node's
                                        capacity; host DRAM has no hardware figure: unchecked)
``overlap``                   error     two regions, or two windows of one domain, overlap
``misaligned``                error     a base, size or page breaks its alignment rule
``out-of-range``              error     beyond the address width, or past the target region
``dangling-target``           error     a window onto no region
``alias``                     warning   two windows of one domain onto the same bytes
``isolation``                 error     a window onto a region the domain is not granted
``too-many-entries``          error     more shadow windows than translation entries
``symmetric-mismatch``        error     a heap that is not the same on every chip
``roundtrip``                 error     local -> global -> local (or global -> owner,
                                        offset -> global) does not return the address
``unreachable``               error     a window's target has failed (a dead chip), or
                                        no route reaches it from the domain
``unreachable``               warning   some chips of a domain reach a window's target
                                        and others do not, a domain is partitioned, a
                                        chip belongs to no host domain, or a host maps
                                        none of its chips (default_windows off)
============================  ========  ===============================================

``unreachable``: a window onto memory held by a failed chip (or a host domain
with no live chip) is reported first; failures never move windows. Then it asks
the routing model, ``fabric.router.reachable(src, dst)``, from every live chip
of each domain to each shadow-window target: a target no chip reaches is an
error; one that some chips reach and others do not is a warning naming the
chips whose loads and stores through the window fail (accesses are made per
chip, :func:`fabric.access`). A domain whose live chips (and host node) do not
all reach one another is a warning too: it is partitioned. Where the routing
model is not available (``fabric.router`` cannot be built) the check is
skipped: that is the documented hook, :func:`unreachable_findings`.

Examples
--------
>>> import topologies
>>> check(topologies.build("sd200-ultra"))
[]
>>> from fabric import AddressPlan, Window
>>> bad = AddressPlan(windows=[Window("host0", 0x1000, 4096, global_base=0x3000)])
>>> [f.code for f in check(topologies.build("sd200-ultra").replace(address_plan=bad))]
['misaligned', 'overlap', 'alias', 'roundtrip']
"""

import numpy as np

from ._address import Finding, interleave_offset, interleave_target, region_findings
from ._domains import (
    DomainLimits,
    DomainPlan,
    RegionIndex,
    WindowIndex,
    limits_problems,
    window_findings,
)
from ._errors import FabricError
from ._plan import (
    layout_regions,
    namespace_findings,
    owner_findings,
    placed_chips,
    placed_domains,
    placement_findings,
    plan_errors,
)
from ._symmetric import heap_findings
from ._units import format_address, kind_error, name_list, sequence_of, show_value

__all__ = ["CODES", "check", "error_findings", "unreachable_findings"]

CODES = ("invalid", "capacity", "overlap", "misaligned", "out-of-range", "dangling-target", "alias",
         "isolation", "too-many-entries", "symmetric-mismatch", "roundtrip", "unreachable")


def error_findings(findings):
    """The findings of severity ``"error"`` (a list).

    Parameters
    ----------
    findings : sequence of Finding
        As :func:`check` returns them.

    Returns
    -------
    list of Finding

    Raises
    ------
    TypeError
        For anything but a sequence of :class:`~fabric.Finding` (a str, a number, a set,
        whose order is its hashes').

    Examples
    --------
    >>> from fabric import Finding
    >>> error_findings([Finding(code="overlap", severity="error", message="...", where="a"),
    ...                 Finding(code="alias", severity="warning", message="...", where="b")])
    [Finding(code='overlap', severity='error', message='...', where='a')]
    """
    out = []
    for f in sequence_of(findings, "findings", "Finding records"):
        if not isinstance(f, Finding):      # 'x' read letter by letter: no 'severity'
            raise kind_error(f, "each of findings", "a fabric.Finding")
        if f.severity == "error":
            out.append(f)
    return out


def _limits_findings(plan):
    return [Finding(code="invalid", severity="error", message=f"limits: {m}",
                    where=(plan.limits and plan.limits.where)
                    or "limits") for m in limits_problems(plan.limits or DomainLimits())]


def _unpack(system):
    from ._fabric import Fabric

    if isinstance(system, Fabric):
        return system, []
    fabric = getattr(system, "fabric", None)
    if isinstance(fabric, Fabric):
        return fabric, list(getattr(system, "findings", ()))
    raise kind_error(system, "check()'s system", "a fabric.Fabric or a fabric.System")


def check(system):
    """Every finding of an address plan (a list of :class:`~fabric.Finding`; empty when clean).

    Parameters
    ----------
    system : Fabric or System
        A fabric (its ``address_plan``; None is the default plan) or a system read
        by :func:`fabric.load_system` (whose file-level findings come first).

    Never raises for a bad plan: every fault is a finding.

    Examples
    --------
    >>> import topologies
    >>> spec = '[system]\\ntopology = "hypermesh:4x4,hosts=4,chip=h100"\\n'
    >>> check(topologies.read_system(spec))
    []
    >>> bad = spec + ('[[windows]]\\nhost = "host0"\\nname = "w"\\nlocal_base = "0x1000_0000_0000"\\n'
    ...               'target = "chip999"\\nsize = "1GiB"\\n')
    >>> [(x.code, x.severity) for x in check(topologies.read_system(bad))]
    [('dangling-target', 'error')]
    """
    fabric, findings = _unpack(system)
    plan = fabric.plan
    fatal = [Finding(code="invalid", severity="error", message=f"address plan: {m}",
                     where="address plan")
             for m in plan_errors(fabric, plan)]
    fatal += _limits_findings(plan)
    if fatal:
        return findings + fatal
    regions = layout_regions(fabric, plan)
    findings += region_findings(regions, plan.width)
    findings += placement_findings(fabric, plan)
    findings += namespace_findings(fabric, plan, regions)
    findings += owner_findings(fabric, plan, regions)
    dp = DomainPlan(fabric, regions, plan, placed_chips(fabric, plan),
                    placed_domains(fabric, plan))
    findings += dp.findings + dp.name_findings()
    tables, targets = {}, {}
    for h in fabric.domains:
        grants = dp.grants(h)
        tables[h] = dp.table(h)
        f, targets[h] = window_findings(tables[h], regions, dp.index, grants, plan,
                                        dp.alignment)
        findings += f
    if plan.heap is not None:
        findings += heap_findings(plan.heap, fabric, regions)
    for h in fabric.domains:
        findings += _roundtrip(tables[h], targets[h], regions, plan.width, dp.index)
    findings += homeless_findings(fabric)
    findings += unmapped_findings(fabric, plan, regions, targets)
    findings += unreachable_findings(fabric, regions, tables, targets, dp.index)
    return findings


def _roundtrip(table, target, regions, width, rindex):
    """Round trips of three addresses per window: its first, middle and last byte.

    Local -> global goes through the same window finder the translator uses; back
    to local through the window the address was taken from. Global -> (owner,
    offset) -> global goes through the CXL interleave formula and its inverse.
    """
    out = []
    n = len(table)
    if n == 0:
        return out
    lb, sz, gb = table.local_base, table.size, table.global_base
    live = np.flatnonzero((sz > 0) & (target >= 0) & (lb >= 0) & (lb + sz <= (1 << width)))
    if len(live) == 0:
        return out
    src = np.repeat(live, 3)
    a = np.stack([lb[live], lb[live] + sz[live] // 2, lb[live] + sz[live] - 1], axis=1).ravel()
    index = WindowIndex(lb[live], sz[live], width)
    pos = index.find(a)
    found = pos < len(live)
    j = np.where(found, live[index.order[np.minimum(pos, len(live) - 1)]], -1)
    inside = found & (a < np.where(j >= 0, lb[j] + sz[j], 0))
    g = a + (gb[j] - lb[j])
    back = g - (gb[src] - lb[src])
    bad = ~inside | (back != a)
    reported = set()
    for k in np.flatnonzero(bad).tolist():
        i = int(src[k])
        if i in reported:
            continue
        reported.add(i)
        if not inside[k]:
            msg = (f"local address {format_address(int(a[k]))} of this window translates "
                   "through no window")
        else:
            # the address is in another window too: the finder took that one (a local
            # overlap); say where this window would have taken it, not a back-mapping that
            # may be a negative number
            mine = int(a[k] + gb[i] - lb[i])
            msg = (f"local address {format_address(int(a[k]))} translates through window "
                   f"{show_value(table.names[j[k]])} to {format_address(int(g[k]))}, not through "
                   f"this window to {format_address(mine)} (the windows overlap locally)")
        out.append(Finding(code="roundtrip", severity="error", message=f"{table.label(i)}: {msg}",
                           where=table.where(i)))
    # global -> (owner, device offset) -> global, for windows onto interleave sets
    ok = ~bad
    tgt = target[src]
    for t in np.unique(tgt[ok & rindex.interleaved[tgt]]).tolist():
        reg = regions[t]
        if reg.granularity is None:
            continue
        m = ok & (tgt == t)
        off = gb[src[m]] - lb[src[m]] + a[m] - reg.base
        try:
            p, dev = interleave_target(off, reg.ways, reg.granularity)
            again = interleave_offset(p, dev, reg.ways, reg.granularity)
        except FabricError:
            continue   # bad ways or granularity: reported as invalid already
        share = reg.size // reg.ways
        wrong = (again != off) | (dev >= share)
        for k in np.flatnonzero(wrong).tolist()[:1]:
            i = int(src[m][k])
            out.append(Finding(
                code="roundtrip", severity="error",
                message=f"{table.label(i)}: offset {int(off[k])} into {reg} lands on "
                f"{show_value(reg.owners[int(p[k])])} at device offset {int(dev[k])}, outside its "
                f"{share}-byte share, or does not map back", where=table.where(i)))
    return out


def homeless_findings(fabric):
    """An ``unreachable`` warning for each chip in no host domain (``Fabric.from_graph``'s
    ``domains`` may leave one out): it has no address space, so it makes no load or store
    (:func:`fabric.access` refuses it); its own memory stays mapped and reachable."""
    return [Finding(code="unreachable", severity="warning",
                    message=f"chip {show_value(c)} belongs to no host domain: it has no "
                    "address space, so no load or store is made from it (its own memory stays "
                    "mapped)", where=c)
            for c in fabric.endpoints if c not in fabric.host_of]


def unmapped_findings(fabric, plan, regions, targets):
    """An ``unreachable`` warning for each host domain of one or more chips that maps none of
    its own chips' memory: with ``default_windows = false`` a host has only the windows the
    plan lists (no apertures onto its own chips), and the default windows map only a chip's
    own HBM region (an explicit layout may give its chips none, their memory in a set of
    several owners), so its chips cannot load or store one another's memory, nor one chip
    its own (:func:`fabric.access` refuses it: no window maps it). A warning, as a tenant
    may mean it; a host mapping some of its chips is not warned (a partition is a plan),
    nor, with the default windows, a host whose chips hold no memory at all. ``targets[h]``:
    the region index of each of host ``h``'s windows."""
    out = []
    for h, chips in placed_domains(fabric, plan).items():
        if not chips or h not in targets:
            continue
        own = set(chips)
        tgt = targets[h]
        if any(own.intersection(regions[t].owners) for t in tgt[tgt >= 0].tolist()):
            continue
        if plan.default_windows is not False and not any(own.intersection(r.owners)
                                                         for r in regions):
            continue        # the defaults map every chip's own HBM: these chips hold none
        cannot, fix = (("its chip cannot load or store its own memory", "add a window onto it")
                       if len(chips) == 1 else
                       ("its chips cannot load or store one another's memory",
                        "add a window onto each chip they share"))
        if plan.default_windows is False:
            why = "with default_windows = false it has only the windows the plan lists"
        elif any(r.kind == "hbm" and r.ways == 1 and r.owner in own for r in regions):
            # their own HBM regions are there, but no window onto them stands (a region
            # beyond the address width, say: an error of its own, which is the fix)
            why = "the default windows onto its chips' own HBM regions are refused"
            fix = "see the errors on those regions"
        else:
            why = ("the default windows map each chip's own HBM region, and these chips own "
                   "none (their memory is in regions of several owners or of another kind)")
        out.append(Finding(code="unreachable", severity="warning",
                           message=f"host domain {h} maps none of its own chips' memory "
                           f"({name_list([show_value(c) for c in chips])}): {why}, so {cannot} "
                           f"({fix})",
                           where=h))
    return out


def failed_nodes(fabric):
    """The nodes a degraded fabric has lost (a set): recorded failures, and placed chips gone."""
    dead = set(fabric.failures.nodes)
    plan = fabric.plan
    if plan.chips is not None:
        # a placed chip gone from the graph; a name that never was a chip is not a failure
        # (placement_findings reports it)
        built = fabric.intact or fabric
        dead.update(c for c in plan.chips if c not in fabric.graph and c in built.graph)
    return dead


def _node_for(fabric, owner, dead):
    """The live node that serves an owner's memory, or None when it has failed."""
    if owner in dead:
        return None
    if owner in fabric.graph:
        return owner
    chips = [c for c in fabric.domains.get(owner, ()) if c not in dead and c in fabric.graph]
    return chips[0] if chips else None


def _unit_for(fabric, owner, dead, idx):
    """``(label, live nodes, whether a host's)`` serving an owner's memory (:func:`fabric._access.target_node`):
    a node itself, or a host domain's live chips (the first one a requester reaches
    serves its DRAM); None when it has failed or is not in the graph."""
    if owner in dead:
        return None
    if owner in fabric.graph:
        return (show_value(owner), (owner,), False) if owner in idx else None
    chips = tuple(c for c in fabric.domains.get(owner, ()) if c not in dead and c in idx)
    if not chips:
        return None
    label = (show_value(chips[0]) if len(chips) == 1
             else f"any chip of {owner} ({name_list([show_value(c) for c in chips])})")
    return label, chips, True


def _cut_members(reg, h, own, ok, col, fabric, dead, idx):
    """What an ``unreachable`` error on a window onto an interleave set adds: the members
    (other than ``h``'s own) that no chip of host domain ``h`` reaches, and that the set is
    partly unreachable when others remain (lead's decision, session 28: an access into a
    reachable member's granule is served, the cut-off members' raise "no route"); '' for a
    region of one owner. ``ok[:, col[unit]]``: which of ``h``'s chips reach each unit."""
    units = {o: _unit_for(fabric, o, dead, idx) for o in reg.owners}
    if reg.ways < 2 or None in units.values():
        return ""           # one owner; or a member failed: the set is gone (an error above)
    lost = [o for o in reg.owners if o not in own and not ok[:, col[units[o]]].any()]
    if len(lost) == reg.ways:
        return (f"; interleave set {show_value(reg.name)} is unreachable from {h}: no member's "
                "granules are served")
    return (f"; interleave set {show_value(reg.name)} is partly unreachable from {h}: its "
            f"granules on {name_list([show_value(o) for o in lost])} ({len(lost)} of its "
            f"{reg.ways} members) fail, the other members' are served")


def _partition_findings(fabric, router, h, chips, members):
    """A ``warning`` when the live members of host domain ``h`` (its chips, and its host
    node where it is one) do not all reach one another: loads and stores inside the
    domain fail between the parts (a degraded fabric; the plan itself is not at fault)."""
    if len(members) < 2:
        return []
    idx = fabric.node_index
    m = np.array([idx[c] for c in members], dtype=np.int64)
    ok = router.reachable(np.repeat(m, len(m)), np.tile(m, len(m))).reshape(len(m), len(m))
    if ok.all():
        return []
    i = int(np.flatnonzero(~ok.all(axis=1))[0])
    rest = np.flatnonzero(~ok[i])
    part = np.flatnonzero(ok[i])            # what the first member lacking a route reaches
    if ok[np.ix_(part, rest)].any():        # not a clean split: name that member alone
        part = np.array([i])
    a = [members[k] for k in part.tolist()]
    b = [members[k] for k in rest.tolist()]
    verb = "has" if len(a) == 1 else "have"
    return [Finding(code="unreachable", severity="warning",
                    message=f"host domain {h} is partitioned: {name_list(a)} {verb} no route to "
                    f"{name_list(b)} of the same domain; loads and stores between them fail"
                    f"{fabric.failures.explain(*a, *b)}", where=h)]


def unreachable_findings(fabric, regions, tables, targets, index=None):
    """``unreachable`` findings: window targets that have failed or that no route reaches.

    A window onto memory held by a failed chip (or by a host domain with no live
    chip left) is unreachable: failures do not move windows, they only mark chips
    dead. Otherwise the hook between addressing and routing asks ``fabric.router``
    (the routing model's :class:`~fabric.Router`) whether each live chip of a domain
    reaches each shadow-window target: none of them is an ``error``, some of them a
    ``warning`` naming the chips that do not; a domain whose live members do not all
    reach one another is a ``warning`` (partitioned). An error on a window onto an interleave
    set whose members are alive also names the members no chip of the domain reaches and says
    the set is partly unreachable (an access into another member's granule is served; lead's
    decision, session 28). When the router cannot be built
    (the routing module is absent, or raises while building) there is nothing to ask.

    Parameters
    ----------
    fabric : Fabric
        Read through its attributes (``domains``, ``node_index``, ``failures``, ``router``),
        not checked to be a :class:`~fabric.Fabric`: a stand-in whose ``router`` cannot be
        built is how the hook's skip is exercised (``tests/test_check.py``).
    regions : sequence of Region
        The plan's regions (:attr:`fabric.Fabric.address_map`'s ``regions``).
    tables : dict
        Host domain -> its windows' table (:class:`~fabric.HostDomain`'s ``table``), as
        :func:`fabric.check` builds it.
    targets : dict
        Host domain -> an int array: each window's target region (a position in
        ``regions``), -1 for none.
    index : RegionIndex, optional
        The regions' lookup index; built here when not given.

    Returns
    -------
    list of Finding

    Examples
    --------
    What :func:`fabric.check` passes, read from a fabric's public faces (a window's target is
    the region its global base falls in):

    >>> import topologies
    >>> f = topologies.build("torus:2x2,hosts=2,chip=h100").without(chips=["chip3"])
    >>> tables = {h: d.table for h, d in f.host_domains.items()}
    >>> targets = {h: f.address_map.lookup_many(t.global_base, unmapped="mask").region
    ...            for h, t in tables.items()}
    >>> found = unreachable_findings(f, f.address_map.regions, tables, targets)
    >>> [(x.severity, x.where) for x in found]
    [('error', "host0 window 'chip3'"), ('error', "host1 window 'chip3'")]
    """
    if index is None:
        index = RegionIndex(regions, dict(fabric.domains))
    dead = failed_nodes(fabric)
    out = []
    if dead:
        for h, table in tables.items():
            tgt = targets[h]
            for i in np.flatnonzero(tgt >= 0).tolist():
                reg = regions[tgt[i]]
                gone = [o for o in reg.owners if _node_for(fabric, o, dead) is None
                        and (o in dead or o in index.domain_index)]
                if gone:
                    out.append(Finding(code="unreachable", severity="error",
                                       message=f"{table.label(i)}: reaches {reg}, held by "
                                       f"{', '.join(map(show_value, gone))}, which has failed "
                                       "(the window keeps its target; the memory is gone)",
                                       where=table.where(i)))
    try:
        router = fabric.router
    except (ImportError, AttributeError, NotImplementedError):
        return out
    except FabricError as e:
        return out + [Finding(code="unreachable", severity="error",
                              message=f"routing model could not be built: {e}",
                              where=fabric.name)]
    idx = fabric.node_index
    for h, table in tables.items():
        chips = [c for c in fabric.domains[h] if c in idx]
        if not chips:
            continue
        src = np.array([idx[c] for c in chips], dtype=np.int64)
        members = chips + ([h] if h in idx and h not in chips else [])
        out += _partition_findings(fabric, router, h, chips, members)
        tgt = targets[h]
        own = set(fabric.domains[h]) | {h}
        pairs = {}          # unit -> the first window onto memory it serves (warnings)
        serves = {}         # unit -> every window onto memory it serves (errors)
        # the windows onto target regions that are not (wholly) the domain's own. A unit is
        # what serves an owner's memory: the node itself, or for another host's DRAM any of
        # that host's live chips (the first one a requester reaches serves it:
        # fabric._access.target_node), so windows onto different regions may share a unit:
        # the route is asked once per unit, each window gets its error
        foreign = (tgt >= 0) & (index.home[tgt] != index.domain_index.get(h, -3))
        regs, first = np.unique(tgt[foreign], return_index=True)
        where = np.flatnonzero(foreign)[first]
        nodes_of = {t: [u for u in (_unit_for(fabric, o, dead, idx) for o in regions[t].owners
                                    if o not in own) if u is not None]
                    for t in regs.tolist()}
        for t, i in zip(regs.tolist(), where.tolist(), strict=True):
            for unit in nodes_of[t]:
                pairs.setdefault(unit, i)
                serves.setdefault(unit, {i: None})
        for i in np.flatnonzero(foreign).tolist():
            for unit in nodes_of[int(tgt[i])]:
                serves[unit][i] = None
        if not pairs:
            continue
        units = list(pairs)
        col = {u: j for j, u in enumerate(units)}
        members = [m for _, m, _ in units]
        flat = [n for m in members for n in m]
        dst = np.array([idx[n] for n in flat], dtype=np.int64)
        reach = router.reachable(np.repeat(src, len(dst)), np.tile(dst, len(src)))
        reach = reach.reshape(len(src), len(dst))
        starts = np.cumsum([0] + [len(m) for m in members])
        ok = np.logical_or.reduceat(reach, starts[:-1], axis=1)
        partly = {}                     # the chips lacking a route -> the targets they lack
        for j in np.flatnonzero(~ok.all(axis=0)).tolist():
            unit = units[j]
            if not ok[:, j].any():
                why = fabric.failures.explain(*unit[1], *chips)
                out += [Finding(code="unreachable", severity="error",
                                message=f"{table.label(w)}: no route from any chip of {h} to "
                                f"{unit[0]}{why}" + _cut_members(regions[int(tgt[w])], h, own,
                                                                 ok, col, fabric, dead, idx),
                                where=table.where(w)) for w in serves[unit]]
            else:
                cut = tuple(c for c, r in zip(chips, ok[:, j].tolist(), strict=True) if not r)
                partly.setdefault(cut, []).append(j)
        for cut, js in partly.items():
            i = pairs[units[js[0]]]
            by = chips[int(np.argmax(ok[:, js[0]]))]
            lost = [units[j][0] for j in js]
            verb = "has" if len(cut) == 1 else "have"
            windows = ("this window" if len(js) == 1
                       else f"the windows onto these {len(js)} targets")
            # the other windows onto memory these targets serve fail from the same chips (a
            # host's chips serve its DRAM: every window onto it is named)
            also = list(dict.fromkeys(table.names[w] for j in js for w in serves[units[j]]
                                      if w != pairs[units[j]] or units[j][2]))
            if also:
                windows += (f" (and through window{'s' if len(also) > 1 else ''} "
                            f"{name_list([show_value(n) for n in also])}, onto memory "
                            f"{'it serves' if len(js) == 1 else 'they serve'})")
            out.append(Finding(code="unreachable", severity="warning",
                               message=f"{table.label(i)}: {name_list(cut)} of {h} {verb} no route "
                               f"to {name_list(lost)} ({by} has): loads and stores through "
                               f"{windows} from {'it' if len(cut) == 1 else 'them'} fail"
                               f"{fabric.failures.explain(*cut, *units[js[0]][1])}",
                               where=table.where(i)))
    return out
