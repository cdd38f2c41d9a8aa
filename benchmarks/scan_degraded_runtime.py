"""Brute force: does any single failed link or lane make a collective faster under a runtime?

For every link of each fabric (the defaults are small; pass specs to scan others, e.g.
``sd200-ultra:chip=h100``, ~5 min), every single lane of a bundled link and every pair of lanes
of one chip (``--lanes``; session 10), every op x size x runtime, over every rank and a few rank
subsets (``--subsets``; the first half, every other rank, the ranks away from the failure):
the degraded time against the intact one. A speed-up is counted as a violation only when the runtime ran the same schedule
and protocol on both fabrics and the schedule's own hardware floor (runtime "ideal", at the
size and at 1 GiB) did not get faster too: the property ``tests/test_runtime.py`` checks with
Hypothesis (see there why the wider property is not true). Prints the violations and a summary.

The scope is deliberate: a failure can move NCCL's own protocol threshold, and the other
protocol can be faster. Point-to-point runs LL while a message is at most p2p channels x 16 KiB
(2.22+), so 8 H200 on 4 planes (``switch:8,planes=4,links=5/4/4/5,tech=nvlink4,chip=h200``)
without two of chip5's lanes to sw0 have 16 p2p channels instead of 32 and send the 512 KiB
per peer of a 4 MiB all-to-all (nccl@2.22.3) as Simple: 22.70 us intact (LL) -> 22.20 us; at
2 MiB (LL on both) and 8 MiB (Simple on both) the failure is slower. Not counted here
(``tests/test_runtime.py::test_degraded_monotonicity_holds_per_algorithm_and_protocol_only``).

    PYTHONPATH=. python benchmarks/scan_degraded_runtime.py [--lanes] [--subsets] [--chips] [spec ...]

``--chips`` (session 13) adds every single failed chip and every pair of neighbouring failed
chips, the survivors' work on both fabrics (ranks: the surviving chips, and their subsets).

Channel counts (session 14, S14-R1): NCCL's own ring search can give a GPU that lost an
NVLink MORE channels (gb200-nvl72: 32 -> 34, p2p 32 -> 64), and what follows from the count
can be faster, as in NCCL itself. So under NCCL a speed-up with a different communicator
channel count (:func:`analysis.communicator_channels`, not the result's ``channels``) is
counted apart, as *channels*, not as a violation.

Lost lanes are how session 9's degraded-faster NCCL ring was found (a node without two of a
GPU's NVLinks: more bandwidth per channel); whole links of all ranks never showed it.

Routing policy (session 11): a whole failed link must never make the hardware floor itself
faster (runtime "ideal", any schedule: fabric/_routing.py, "Failures under dimension
order"; tests/test_audit_s11_routing.py). Such a case is counted apart, as a *floor*
violation, and printed: before session 11 the torus:3x3 default had 21 of them (a grid's
broken pairs re-routed over every shortest path, spreading what dimension order
concentrates), filed under "faster floor" and so never counted.
"""

import itertools
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import analysis
import topologies
from analysis import NotApplicableError
from fabric import RoutingError, SpecError

SIZES = (8, 4096, 114688, 2**20, 2**26)
OPS = ("all-reduce", "all-gather", "reduce-scatter", "broadcast", "reduce", "all-to-all",
       "send-recv")
RUNTIMES = ("ideal", "nccl", "symmetric-memory")


def _floor_faster(f, g, op, n, algorithm, ranks=None):
    try:
        t = [analysis.cost(x, op, m, algorithm=algorithm, runtime="ideal", ranks=ranks).time
             for x in (f, g) for m in (n, 2**30)]
    except NotApplicableError:
        return False
    return t[2] < t[0] * (1 - 1e-9) or t[3] < t[1] * (1 - 1e-9)


def failures(f, lanes=False, chips=False):
    """``(label, without-kwargs)`` for every single link, with ``lanes`` every single lane
    of a bundled link and every pair of lanes of one chip's bundles, and with ``chips``
    every single chip and every pair of neighbouring chips (session 13)."""
    links = sorted({tuple(sorted((u, v))) for u, v in f.graph.edges()})
    out = [(f"link {u}-{v}", {"links": [(u, v)]}) for u, v in links]
    if chips:
        ends = list(f.endpoints)
        out += [(f"chip {c}", {"chips": [c]}) for c in ends]
        out += [(f"chips {u},{v}", {"chips": [u, v]}) for u, v in links
                if u in f.graph and v in f.graph and f.graph.nodes[u]["kind"] == "chip"
                and f.graph.nodes[v]["kind"] == "chip"]
    if lanes:
        bundled = [e for e in links if f.graph.edges[e].get("lanes", 1) > 1]
        out += [(f"lane {u}-{v}", {"lanes": [(u, v)]}) for u, v in bundled]
        for chip in f.endpoints:
            mine = [e for e in bundled if chip in e]
            for a, b in itertools.combinations_with_replacement(mine, 2):
                if a == b and f.graph.edges[a]["lanes"] < 3:
                    continue            # two lanes of a 2-lane bundle is the link
                out.append((f"lanes {a[0]}-{a[1]}, {b[0]}-{b[1]}", {"lanes": [a, b]}))
    return out


def rank_sets(f, subsets=False, failed=(), survivors=None):
    """Every rank (None; with failed chips, ``survivors``: the same work on both fabrics), and
    with ``subsets`` the first half, every other rank and the ranks that are not an end of the
    failure (each of at least 2 ranks)."""
    out = [None if survivors is None else list(survivors)]
    if subsets:
        chips = list(f.endpoints if survivors is None else survivors)
        away = [c for c in chips if c not in failed]
        for group in (chips[:len(chips) // 2], chips[::2], away):
            if len(group) >= 2 and group not in out and len(group) < len(chips):
                out.append(group)
    return out


def scan(spec, lanes=False, subsets=False, chips=False):
    f = topologies.build(spec)
    checked = bad = other = floor = channels = 0
    for label, kw in failures(f, lanes, chips):
        try:
            g = f.without(**kw)
        except (SpecError, RoutingError):
            continue
        ends = {n for e in kw.get("links", []) + kw.get("lanes", []) for n in e}
        survivors = list(g.endpoints) if "chips" in kw else None
        if survivors is not None and len(survivors) < 2:
            continue
        for ranks in rank_sets(f, subsets, ends, survivors):
            for op, n, rt in itertools.product(OPS, SIZES, RUNTIMES):
                try:
                    a = analysis.cost(f, op, n, runtime=rt, ranks=ranks)
                    b = analysis.cost(g, op, n, runtime=rt, ranks=ranks)
                except (NotApplicableError, RoutingError, SpecError):
                    continue
                checked += 1
                if b.time >= a.time * (1 - 1e-9):
                    continue
                group = "all ranks" if ranks is None else f"ranks {','.join(ranks)}"
                if rt == "ideal" and ("links" in kw or "chips" in kw):   # the routing's property
                    floor += 1
                    print(f"  FLOOR {spec} without {label}, {group}: {op} {n} B: "
                          f"{a.algorithm} {a.time * 1e6:.3f} -> {b.algorithm} "
                          f"{b.time * 1e6:.3f} us")
                    continue
                if ((a.algorithm, a.protocol) != (b.algorithm, b.protocol)
                        or _floor_faster(f, g, op, n, b.algorithm, ranks)):
                    other += 1
                    continue
                if rt.startswith("nccl") and (analysis.communicator_channels(f, ranks, rt)
                                              != analysis.communicator_channels(g, ranks, rt)):
                    channels += 1       # NCCL's search found other channel counts (S14-R1)
                    continue
                bad += 1
                print(f"  {spec} without {label}, {group}: {op} {n} B {rt}: "
                      f"{a.algorithm}/{a.protocol} {a.time * 1e6:.3f} -> {b.time * 1e6:.3f} us")
    return checked, bad, other, floor, channels


def main(argv):
    lanes = "--lanes" in argv
    subsets = "--subsets" in argv
    chips = "--chips" in argv
    specs = [a for a in argv if not a.startswith("--")]
    for spec in specs or ["torus:3x3", "dgx-h100", "rail:servers=2,gpus=4,nvls=1,chip=h100"]:
        t0 = time.perf_counter()
        checked, bad, other, floor, channels = scan(spec, lanes, subsets, chips)
        print(f"{spec}: {checked} comparisons, {bad} violations, {floor} floor violations "
              f"(a failed link or chip made runtime 'ideal' faster), {other} faster with another "
              f"schedule/protocol or a faster floor, {channels} faster under NCCL with other "
              f"communicator channel counts; {time.perf_counter() - t0:.1f} s")


if __name__ == "__main__":
    main(sys.argv[1:])
