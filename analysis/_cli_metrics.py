"""``cofabric metrics SPEC [SPEC ...] [--json]``: structural metrics of fabrics."""


from fabric import format_bandwidth

from ._json_units import to_json

__all__ = []

DEFAULT_SPECS = ("sd200-ultra", "cluster-128")


def register(sub):
    p = sub.add_parser(
        "metrics", help="structural metrics of one or more fabrics",
        description="Structural metrics (endpoints, switches, links, diameter, mean hops, "
                    "bisection, injection bandwidth, ports) of each SPEC: a topology spec "
                    "such as torus:8x8x8 or a preset such as sd200-ultra. With no SPEC, the "
                    "default report's head-to-head pair: " + " versus ".join(DEFAULT_SPECS)
                    + " (a chip override, ':chip=', changes none of these metrics).")
    p.add_argument("specs", nargs="*", metavar="SPEC", help="topology spec or preset")
    p.add_argument("--fail-link", action="append", default=[], metavar="U-V",
                   help="remove the link between nodes U and V from every SPEC (repeatable)")
    p.add_argument("--fail-chip", action="append", default=[], metavar="NODE",
                   help="remove a chip or switch, by name or rank, from every SPEC (repeatable)")
    p.add_argument("--fail-lane", action="append", default=[], metavar="U-V",
                   help="fail one lane of the bundled link U-V in every SPEC (repeatable)")
    p.add_argument("--json", action="store_true", help="print a JSON list, one object per spec")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=run)


def run(args):
    import topologies
    from analysis import metrics

    from ._cli_route import degrade
    from ._progress import Progress

    specs = args.specs or list(DEFAULT_SPECS)
    fabrics, results = [], []
    # live: one large fabric (16k chips) is a few long steps
    with Progress(len(specs), "metrics", quiet=args.quiet, live=True) as bar:
        for s in specs:
            bar.stage(s)
            f = degrade(topologies.build(s), args)
            fabrics.append(f)
            results.append(metrics(f))
            bar.update()
        bar.stage("done")
    if args.json:
        out = []
        for f, m in zip(fabrics, results):
            d = m.as_dict()
            if f.failures.degraded:
                d["failed"] = {"links": [list(x) for x in f.failures.links],
                               "nodes": list(f.failures.nodes),
                               "chips": {c: r for c, r in f.failures.ranks.items()},
                               "lanes": [[list(e), k] for e, k in f.failures.lanes],
                               # the numbers here are ranks and lane counts, not SI units
                               "units": {"chips": "rank (stable: the intact fabric's)",
                                         "lanes": "failed lanes (count) of the link [u, v]"}}
                if f.router.local_repair:
                    d["failed"]["routing"] = f.router.LOCAL_REPAIR
            out.append(d)
        print(to_json(out))
        return 0
    from ._table import format_table

    headers = ["spec", "endpoints", "switches", "links", "diameter", "avg hops",
               "bisection links", "bisection bw", "injection bw"]
    rows = [[m.spec, m.endpoints, m.switches, m.links, m.diameter, round(m.avg_hops, 3),
             m.bisection_links if m.bisection_exact else f"<={m.bisection_links}",
             format_bandwidth(m.bisection_bandwidth, all_digits=True),
             format_bandwidth(m.injection_bandwidth, all_digits=True)]
            for m in results]
    print(format_table(headers, rows))
    for f in fabrics:
        if f.failures.chips:
            print(f"{f.name}: failed chips (they keep their ranks): "
                  + ", ".join(f"{c} (rank {f.failures.ranks[c]})" for c in f.failures.chips))
        if f.router.local_repair:
            print(f"{f.name}: {f.router.LOCAL_REPAIR}")
    print("bandwidths are bytes/s per direction; hops are links between chips (mean over "
          "distinct ordered pairs); '<=' marks a bisection that is an upper bound")
    return 0
