"""``cofabric export SYSTEM OUT [--format graphml|json]``: a fabric's graph for other tools."""

__all__ = []


def register(sub):
    p = sub.add_parser("export", help="write a fabric's graph as GraphML or JSON (node-link)",
                       description="Write the graph of SYSTEM to OUT as GraphML or JSON "
                                   "(networkx node-link). Edge bandwidth in B/s per "
                                   "direction, latency in s.")
    p.add_argument("system", metavar="SYSTEM", help="topology spec or preset, e.g. nvl72")
    p.add_argument("out", metavar="OUT", help="output file (.graphml or .json)")
    p.add_argument("--format", choices=("graphml", "json"), default=None,
                   help="default: from OUT's suffix")
    p.set_defaults(func=run)


def run(args):
    import topologies

    from ._export import export_graph

    f = topologies.build(args.system)
    fmt = args.format or args.out.rsplit(".", 1)[-1].lower()
    if fmt not in ("graphml", "json"):
        from fabric import SpecError
        from fabric._units import show_value

        raise SpecError(f"cannot tell the format of OUT {show_value(args.out)}: name it "
                        ".graphml or .json, or pass --format")
    export_graph(f, args.out, fmt)
    print(f"wrote {args.out} ({fmt}, {f.graph.number_of_nodes()} nodes, "
          f"{f.graph.number_of_edges()} edges)")
    return 0
