"""``cofabric route | latency | throughput``: routes, access latency and throughput of a fabric.

``cofabric route SYSTEM SRC DST [--op load|store] [--size B] [--transport T] [--json]``
    the path, hops and the latency breakdown of one access from SRC to DST's memory: the
    one path the routing's hash chooses among the pair's equal-cost paths, and (where
    they price differently) the slowest of them, which ``latency`` counts.
``cofabric latency SYSTEM [--transport loadstore|rdma] [--op] [--size] [--json]``
    min, mean, p50, p99 and max access latency over all ordered chip pairs, each pair at
    the slowest of its equal-cost paths (``fabric.access_latencies``).
``cofabric throughput SYSTEM --traffic all-to-all [--bytes B] [--json]``
    max-concurrent-flow throughput and the drain time under the routing policy.

Each takes ``--fail-link U-V``, ``--fail-chip NODE`` and ``--fail-lane U-V`` (one lane of
a bundled link; each repeatable) to evaluate a degraded fabric.
"""

import argparse

from ._cli import whole_number
from ._json_units import to_json

__all__ = []


def _size(text):
    """A payload size: ``4096``, ``4KiB``, ``1MB`` (the units :func:`fabric.parse_size` reads)."""
    from fabric import FabricError, parse_size
    from fabric._units import show_value

    bad = "size must be a positive integer (bytes, or with a unit: 4KiB, 1MB)"
    if text.strip().startswith("-"):    # the reader's own rule (>= 0) would read as a second one
        raise argparse.ArgumentTypeError(f"{bad}, got {show_value(text)}")
    try:
        size = parse_size(text)
    except (FabricError, ValueError) as e:       # the reader's message names the value
        raise argparse.ArgumentTypeError(f"{bad}: {e}") from None
    if size <= 0:
        raise argparse.ArgumentTypeError(f"{bad}, got {show_value(text)}")
    return size


def _add_access(p):
    """Options of one access, shared by ``route`` and ``latency``."""
    p.add_argument("--op", choices=("load", "store"), default="load",
                   help="a load (a round trip: request out, data back) or a store (one way); "
                        "default load")
    p.add_argument("--size", type=_size, default=64,
                   help="payload: bytes or a size with a unit (64, 4KiB, 1MB; default 64), "
                        "into the target's memory from its first byte: at most that memory "
                        "(one granule of an interleave share) and one window's span, "
                        "else one line naming the limit and exit 2. A fabric with no chip "
                        "type (torus:4x4, not torus:4x4,chip=h100) knows no memory size: "
                        "the size is timed as a transfer, unchecked, and the output says so")
    p.add_argument("--transport", default="native",
                   help="loadstore, rdma, or native (default: load/store where it reaches, "
                        "RDMA across a NIC or an InfiniBand/RoCE link; fabric.reach)")


def _add_common(p):
    p.add_argument("system", metavar="SYSTEM",
                   help="topology spec, preset or system file (.toml), e.g. sd200-ultra")
    add_failure_options(p)
    p.add_argument("--json", action="store_true", help="print JSON")


def add_failure_options(p):
    """``--fail-link``, ``--fail-chip``, ``--fail-lane`` (read by :func:`degrade`)."""
    p.add_argument("--fail-link", action="append", default=[], metavar="U-V",
                   help="remove the link between nodes U and V (repeatable)")
    p.add_argument("--fail-chip", action="append", default=[], metavar="NODE",
                   help="remove a chip or switch, by name or rank (repeatable)")
    p.add_argument("--fail-lane", action="append", default=[], metavar="U-V",
                   help="fail one lane of the bundled link U-V: it keeps the other lanes' "
                        "share of its bandwidth (repeatable; the last lane fails the link)")


def degrade(f, args):
    """``f`` without what ``--fail-link/--fail-chip/--fail-lane`` name (``f`` if nothing)."""
    if args.fail_link or args.fail_chip or args.fail_lane:
        f = f.without(links=args.fail_link, chips=args.fail_chip, lanes=args.fail_lane)
    return f


def print_repair_note(f):
    """Say under a text output when ``f``'s routes are local repairs around failures
    (``fabric.router.local_repair``: hops, latencies and times are upper bounds)."""
    if f.router.local_repair:
        print(f"note: {f.router.LOCAL_REPAIR}")


def size_note(f, size, target="any target"):
    """One line saying that ``size`` was not checked against a memory, on a fabric that
    knows none (no chip type: ``fabric.access_to`` times any size); None where it was."""
    from fabric import format_size
    from fabric._access import checks_accesses

    if checks_accesses(f):
        return None
    return (f"{f.name} gives no chip type, so no memory size is known: {format_size(size)} "
            f"was timed as a transfer, not checked against the memory of {target}")


def _route_json_keys():
    """What ``route --json`` prints, every key with its unit (the route command's help)."""
    from fabric import Access

    return ("With --json: system, src, target, op, transport (names); size_bytes (bytes); "
            "path and return_path (node names, the request's and a load's reply's; a store "
            "has none); hops (links crossed, a count); per_hop (each link: from, to, latency_s "
            "in seconds); breakdown_s (seconds per stage, in order: "
            + ", ".join(Access.STAGES) + "; they sum to total_s; see fabric.Access; "
            "host_memory is 0 here: DST's own memory, not a host's DRAM); total_s "
            "(seconds, the path printed); slowest_total_s (seconds, the slowest equal-cost "
            "path); note (text, on a degraded grid only: its times are upper bounds); size_note "
            "(text, on a fabric with no chip type only: the size was not checked against "
            "a memory).")


def register(sub):
    p = sub.add_parser("route", help="path and latency breakdown of one access",
                       description="Route one access from SRC to DST's memory and break "
                                   "its latency down by stage, on the one path the "
                                   "routing chooses among the pair's equal-cost paths; "
                                   "where those paths price differently, also the "
                                   "slowest of them (what 'cofabric latency' counts). "
                                   + _route_json_keys())
    _add_common(p)
    p.add_argument("src", metavar="SRC", help="requesting chip (name or rank)")
    p.add_argument("dst", metavar="DST", help="target chip (name or rank)")
    _add_access(p)
    p.set_defaults(func=run_route)

    p = sub.add_parser("latency", help="access latency over all chip pairs",
                       description="Min, mean, p50, p99 and max access latency over every "
                                   "ordered pair of distinct chips, each pair at the slowest "
                                   "of its equal-cost paths ('cofabric route' prices the one "
                                   "path it prints, and shows this figure where it differs).")
    _add_common(p)
    _add_access(p)
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=run_latency)

    p = sub.add_parser("throughput", help="max-concurrent-flow throughput of a traffic pattern",
                       description="Throughput (max-concurrent-flow LP, optimal routing) and "
                                   "drain time under the fabric's routing policy.")
    _add_common(p)
    p.add_argument("--traffic", default="all-to-all",
                   help="all-to-all (the default), permutation, shift, hotspot or moe")
    # the size rule of route and latency: one line naming --bytes, whatever is wrong with it
    p.add_argument("--bytes", type=_size, default="1MiB", metavar="SIZE",
                   help="bytes per pair: bytes or a size with a unit (default 1MiB)")
    p.add_argument("--seed", type=whole_number, default=0, help="seed for permutation and moe (0)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=run_throughput)


def _fabric(args):
    from ._cli_addr import fabric_of

    # a system file brings its address plan: route and latency time only accesses that
    # the plan's windows and grants permit (fabric.access_to refuses the others)
    return degrade(fabric_of(args.system), args)


def run_route(args):
    from fabric import access_to, format_size, format_time

    f = _fabric(args)
    a = access_to(f, args.src, args.dst, op=args.op, size=args.size, transport=args.transport)
    unchecked = size_note(f, a.size, repr(a.target))
    if args.json:
        out = {"system": f.name, "src": a.src, "target": a.target, "op": a.op,
               "size_bytes": a.size, "transport": a.transport, "path": list(a.path),
               "return_path": list(a.return_path), "hops": a.hops,
               "per_hop": [{"from": u, "to": v, "latency_s": t} for u, v, t in a.per_hop],
               "breakdown_s": a.breakdown(), "total_s": a.total,
               "slowest_total_s": a.slowest}
        if f.router.local_repair:
            out["note"] = f.router.LOCAL_REPAIR
        if unchecked:
            out["size_note"] = unchecked
        print(to_json(out))
        return 0
    print(f"{f.name}: {a.op} of {format_size(a.size)} from {a.src} to {a.target} ({a.transport})")
    print("path: " + " -> ".join(map(str, a.path)) + f"  ({a.hops} hops)")
    for u, v, t in a.per_hop:
        print(f"  {u} -> {v}: {format_time(t, all_digits=True)}")
    for k, v in a.breakdown().items():
        if v:
            print(f"{k:>14}: {format_time(v, all_digits=True)}")
    print(f"{'total':>14}: {format_time(a.total, all_digits=True)}")
    if a.slowest > a.total * (1 + 1e-12):
        print(f"slowest equal-cost path: {format_time(a.slowest, all_digits=True)} (what "
              "cofabric latency counts for this pair)")
    if unchecked:
        print(f"note: {unchecked}")
    print_repair_note(f)
    return 0


def run_latency(args):
    from fabric import access_latencies, format_size, format_time, latency_stats

    from ._progress import Progress

    # a live bar: every ordered pair is one call (16k chips: 268M pairs, minutes)
    with Progress(2, "latency", quiet=args.quiet, live=True) as bar:
        bar.stage("building the fabric")
        f = _fabric(args)
        bar.update()
        n = f.n_endpoints
        bar.stage(f"latency of {n * (n - 1):,} chip pairs")
        _, _, lat = access_latencies(f, op=args.op, size=args.size, transport=args.transport)
        bar.update()
        bar.stage("done")
    st = latency_stats(lat)
    unchecked = size_note(f, args.size)
    fields = ("min", "mean", "p50", "p99", "max")
    if args.json:
        out = {"system": f.name, "transport": args.transport, "op": args.op,
               "size_bytes": args.size, "pairs": st.count}
        out.update({f"{k}_s": getattr(st, k) for k in fields})
        if f.router.local_repair:
            out["note"] = f.router.LOCAL_REPAIR
        if unchecked:
            out["size_note"] = unchecked
        print(to_json(out))
        return 0
    print(f"{f.name}: {args.op} of {format_size(args.size)}, {args.transport}, {st.count} chip pairs")
    for k in fields:
        print(f"{k:>5}: {format_time(getattr(st, k), all_digits=True)}")
    if unchecked:
        print(f"note: {unchecked}")
    print_repair_note(f)
    return 0


def run_throughput(args):
    from analysis import link_loads, throughput, traffic
    from fabric import format_bandwidth, format_size, format_time

    from ._progress import Progress

    # a live bar: the LP is one long call, so the elapsed time ticks from a thread
    with Progress(3, "throughput", quiet=args.quiet, live=True) as bar:
        bar.stage("building the fabric")
        f = _fabric(args)
        nbytes = args.bytes
        t = traffic(f, args.traffic, nbytes, seed=args.seed)
        bar.update()
        bar.stage("solving the max-concurrent-flow problem")
        res = throughput(f, t)
        bar.update()
        bar.stage("routing the traffic (drain time)")
        ll = link_loads(f, t)
        bar.update()
        bar.stage("done")
    total = t.total
    if args.json:
        out = {"system": f.name, "traffic": t.name, "bytes_per_pair": nbytes,
               "total_bytes": total, "throughput_k": res.k, "optimal_time_s": res.time,
               "routed_drain_time_s": ll.drain_time, "bottleneck": list(ll.bottleneck),
               "lp_variables": res.variables, "lp_commodities": res.commodities}
        if f.router.local_repair:
            out["note"] = f.router.LOCAL_REPAIR
        print(to_json(out))
        return 0
    print(f"{f.name}: {t.name}, {format_size(nbytes)} per pair, {format_size(total)} in all")
    print(f"throughput (optimal routing): K = {res.k:.6g}/s, all delivered in "
          f"{format_time(res.time, all_digits=True)} ({format_bandwidth(total * res.k, all_digits=True)} aggregate)")
    print(f"drain time with {f.router.policy} routing: {format_time(ll.drain_time, all_digits=True)} "
          f"(bottleneck: {' '.join(map(str, ll.bottleneck))})")
    print_repair_note(f)
    return 0
