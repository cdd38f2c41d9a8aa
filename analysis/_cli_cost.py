"""``cofabric cost SYSTEM --op OP --size SIZE [...]``: collective costs on a fabric.

``--size`` takes sizes (``4096``, ``1MiB``), lists and ranges
``START:STOP[:STEP]`` as :func:`analysis.parse_sizes` reads them (the reader
``cofabric report --sizes`` uses too). ``--ranks`` takes ranks, chip names and
inclusive rank ranges ``A-B``. ``--fail-link U-V``, ``--fail-chip NODE`` and
``--fail-lane U-V`` (repeatable) cost on the degraded fabric (:func:`fabric.without`;
failed chips keep their ranks, and naming one in ``--ranks`` is an error).

Examples
--------
>>> from analysis._cli_cost import parse_ranks
>>> parse_ranks(["0-2", "chip7"])
[0, 1, 2, 'chip7']
"""

import math

from fabric import SpecError, nccl_release_dates
from fabric._units import is_numeral, show_value

from ._json_units import to_json
from ._sizes import parse_sizes

__all__ = []


def parse_ranks(tokens, fabric=None):
    """Ranks (ints) and chip names from tokens; ``A-B`` is the inclusive range of ranks. With
    ``fabric``, a range that ends past its last rank is refused before it is listed (``0-10**12``
    was a list of 10**12 ranks: a MemoryError, exit 3, or the machine's memory)."""
    out = []
    for tok in tokens:
        for part in str(tok).split(","):
            part = part.strip()
            if not part:
                continue
            a, sep, b = part.partition("-")
            if sep and is_numeral(a) and is_numeral(b):
                lo, hi = int(a), int(b)
                if hi < lo:
                    raise SpecError(f"rank range {show_value(part)} runs backwards")
                if fabric is not None and hi >= fabric.n_ranks:
                    fabric.node(hi)         # its NodeError: "rank hi is out of range 0..n-1"
                out += list(range(lo, hi + 1))
            elif is_numeral(part):
                out.append(int(part))
            else:
                out.append(part)
    return out


def register(sub):
    from ._cli_route import add_failure_options
    from ._collectives import ALGORITHMS

    algs = sorted({a for v in ALGORITHMS.values() for a in v})
    p = sub.add_parser(
        "cost", help="cost collective operations on a fabric",
        description="Cost a collective operation on SYSTEM (a topology spec or preset) at "
                    "one or more sizes: time, algorithm bandwidth and nccl-tests bus "
                    "bandwidth. Sizes follow nccl-tests (the per-rank buffer; all-gather: "
                    "the gathered output). Algorithms: auto, " + ", ".join(algs) + ".")
    p.add_argument("system", metavar="SYSTEM", help="topology spec or preset, e.g. dgx-h100")
    # the list options join when repeated (argparse's default kept the last list only, so
    # '--ranks 0 1 --ranks 2 3' costed ranks 2 and 3)
    p.add_argument("--op", required=True, nargs="+", action="extend", metavar="OP",
                   help="all-reduce, all-gather, reduce-scatter, broadcast, reduce, all-to-all, "
                        "send-recv")
    p.add_argument("--size", required=True, nargs="+", action="extend", metavar="SIZE",
                   help="sizes and ranges START:STOP[:xF|:+S], e.g. 1KiB:1GiB:x2; 0 is an "
                        "empty operation (0 s where the runtime launches nothing)")
    p.add_argument("--algorithm", default="auto",
                   help="algorithm (default auto: the runtime's choice)")
    releases = [r.name.removeprefix("nccl.release_date.") for r in nccl_release_dates()]
    p.add_argument("--runtime", default="nccl",
                   help="nccl (default: NCCL's algorithms, protocols and latencies), "
                        "symmetric-memory (one-sided load/store kernels) or ideal (the "
                        "model's schedules, no software costs); nccl@2.21.5 runs NCCL with the tuner constants of "
                        f"that release ({releases[0]} to {releases[-1]})")
    p.add_argument("--transport", default=None,
                   help="loadstore or rdma (default: load/store inside a load/store domain, "
                        "RDMA across NICs)")
    p.add_argument("--ranks", nargs="+", action="extend", metavar="RANK",
                   help="the group: ranks, chip names, ranges A-B (default: every chip); "
                        "--op, --size and --ranks given again add to their lists (an op or "
                        "size named twice is costed once, as report's --ops and --sizes)")
    add_failure_options(p)
    p.add_argument("--json", action="store_true",
                   help="print a JSON list of {op, size, runtime, algorithm, protocol, "
                        "transport, time, algbw, busbw, lower_bound}")
    p.set_defaults(func=run)


def _gap(r):
    return f"{r.time / r.lower_bound:.2f}" if r.lower_bound > 0 else "-"


def run(args):
    import topologies
    from analysis import cost_sizes, normalize_op
    from fabric import format_bandwidth, format_size, format_time

    from ._cli_route import degrade, print_repair_note
    from ._report_sweeps import check_ops

    fabric = degrade(topologies.build(args.system), args)
    # 0 is an empty operation: cost() answers it (0 s, or why the runtime launches a kernel)
    sizes = parse_sizes(args.size, zero=True)
    ranks = parse_ranks(args.ranks, fabric) if args.ranks else None
    ops = [normalize_op(o) for tok in args.op for o in tok.split(",") if o.strip()]
    if not ops:
        raise SpecError("--op needs at least one collective operation")
    if "all-to-allv" in ops:
        raise SpecError("all-to-allv takes a traffic matrix, not a size; use "
                         "analysis.cost(fabric, 'all-to-allv', matrix) from Python")
    ops = check_ops(ops)            # an op named twice once, in first-named order
    results = []
    for op in ops:
        results += cost_sizes(fabric, op, sizes, algorithm=args.algorithm,
                              runtime=args.runtime, ranks=ranks, transport=args.transport)
    if args.json:
        # a degraded grid's times are local repair's upper bounds: each row says so
        note = {"note": fabric.router.LOCAL_REPAIR} if fabric.router.local_repair else {}
        print(to_json([{"op": r.op, "size": int(r.size), "runtime": r.runtime,
                           "algorithm": r.algorithm, "protocol": r.protocol,
                           "transport": r.transport, "time": r.time, "algbw": r.algbw,
                           "busbw": r.busbw, "lower_bound": r.lower_bound, **note}
                          for r in results]))
        return 0
    from ._table import format_table

    def bw(v):      # a one-rank group moves nothing in no time: no bandwidth to show
        return format_bandwidth(v, all_digits=True) if math.isfinite(v) else "-"

    rows = [[r.op, format_size(r.size), r.algorithm + (f"/{r.protocol}" if r.protocol else ""),
             r.transport, format_time(r.time, all_digits=True), bw(r.algbw), bw(r.busbw), _gap(r)]
            for r in results]
    print(format_table(["op", "size", "algorithm", "transport", "time", "algbw", "busbw",
                        "x bound"], rows))
    first = results[0]
    from ._collectives import resolved_runtime_name
    ranks = f"{first.ranks} rank{'s' * (first.ranks != 1)}"
    print(f"{fabric.name}, {ranks}, runtime {resolved_runtime_name(args.runtime)}; bandwidths in bytes/s "
          f"(GB = 1e9); busbw is algbw times the nccl-tests factor; x bound: time over the "
          f"lower bound the model proves (injection, cuts, max-concurrent-flow)")
    print_repair_note(fabric)
    return 0
