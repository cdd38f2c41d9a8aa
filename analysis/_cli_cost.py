"""``cofabric cost SYSTEM --op OP --size SIZE [...]``: collective costs on a fabric.

``--size`` takes sizes (``4096``, ``1MiB``) and ranges ``START:STOP[:STEP]``,
STOP included, STEP ``xF`` (multiply by F, the default ``x2``) or ``+S`` (add
S): ``1KiB:1GiB:x2`` is the 21 powers of two from 1 KiB to 1 GiB. ``--ranks``
takes ranks, chip names and inclusive rank ranges ``A-B``.

Examples
--------
>>> from analysis._cli_cost import parse_sizes
>>> parse_sizes(["1KiB:8KiB", "100"])
[1024, 2048, 4096, 8192, 100]
>>> parse_sizes(["1KiB:4KiB:+1KiB"])
[1024, 2048, 3072, 4096]
"""

import math

from fabric import SpecError

from ._json_units import to_json

__all__ = []

# A range longer than this is almost certainly a typo (``x1.0000001``).
MAX_SIZES = 10_000


def parse_sizes(tokens):
    """Sizes in bytes from size and range tokens (module docstring), in order.

    Raises
    ------
    ValueError
        Naming the token and the rule it breaks.
    """
    from fabric import parse_size

    out = []
    for tok in tokens:
        for part in str(tok).split(","):
            part = part.strip()
            if not part:
                continue
            if ":" not in part:
                out.append(_positive(parse_size(part), part))
                continue
            fields = part.split(":")
            if len(fields) not in (2, 3):
                raise SpecError(f"size range {part!r} must be START:STOP or START:STOP:STEP")
            try:
                start = _positive(parse_size(fields[0]), part)
                stop = _positive(parse_size(fields[1]), part)
            except SpecError as e:          # name the range, not only its empty field
                raise SpecError(f"size range {part!r}: {e}") from None
            step = fields[2].strip() if len(fields) == 3 else "x2"
            if stop < start:
                raise SpecError(f"size range {part!r}: STOP is below START")
            out += _expand(start, stop, step, part)
            if len(out) > MAX_SIZES:
                raise SpecError(f"size range {part!r} gives more than {MAX_SIZES} sizes")
    if not out:
        raise SpecError("--size needs at least one size")
    return out


def _positive(n, token):
    if n <= 0:
        raise SpecError(f"size {token!r} must be > 0 bytes")
    return n


def _expand(start, stop, step, token):
    from fabric import parse_size

    sizes = []
    if step.startswith(("x", "*")):
        try:
            factor = float(step[1:])
        except ValueError:
            raise SpecError(f"size range {token!r}: step {step!r} must be xF with a "
                             f"number F > 1") from None
        if not (math.isfinite(factor) and factor > 1):
            raise SpecError(f"size range {token!r}: the factor must be > 1, got {step!r}")
        k = 0
        while True:
            v = round(start * factor**k)
            if v > stop or len(sizes) > MAX_SIZES:
                break
            if not sizes or v != sizes[-1]:
                sizes.append(v)
            k += 1
    elif step.startswith("+"):
        inc = parse_size(step[1:])
        if inc <= 0:
            raise SpecError(f"size range {token!r}: the increment must be > 0, got {step!r}")
        v = start
        while v <= stop and len(sizes) <= MAX_SIZES:
            sizes.append(v)
            v += inc
    else:
        raise SpecError(f"size range {token!r}: step {step!r} must be xF (multiply) or +S "
                         f"(add)")
    return sizes


def parse_ranks(tokens):
    """Ranks (ints) and chip names from tokens; ``A-B`` is the inclusive range of ranks."""
    out = []
    for tok in tokens:
        for part in str(tok).split(","):
            part = part.strip()
            if not part:
                continue
            a, sep, b = part.partition("-")
            if sep and a.isdigit() and b.isdigit():
                lo, hi = int(a), int(b)
                if hi < lo:
                    raise SpecError(f"rank range {part!r} runs backwards")
                out += list(range(lo, hi + 1))
            elif part.isdigit():
                out.append(int(part))
            else:
                out.append(part)
    return out


def register(sub):
    from ._collectives import ALGORITHMS

    algs = sorted({a for v in ALGORITHMS.values() for a in v})
    p = sub.add_parser(
        "cost", help="cost collective operations on a fabric",
        description="Cost a collective operation on SYSTEM (a topology spec or preset) at "
                    "one or more sizes: time, algorithm bandwidth and nccl-tests bus "
                    "bandwidth. Sizes follow nccl-tests (the per-rank buffer; all-gather: "
                    "the gathered output). Algorithms: auto, " + ", ".join(algs) + ".")
    p.add_argument("system", metavar="SYSTEM", help="topology spec or preset, e.g. dgx-h100")
    p.add_argument("--op", required=True, nargs="+", metavar="OP",
                   help="all-reduce, all-gather, reduce-scatter, broadcast, reduce, all-to-all, "
                        "send-recv")
    p.add_argument("--size", required=True, nargs="+", metavar="SIZE",
                   help="sizes and ranges START:STOP[:xF|:+S], e.g. 1KiB:1GiB:x2")
    p.add_argument("--algorithm", default="auto",
                   help="algorithm (default auto: the runtime's choice)")
    p.add_argument("--runtime", default="nccl",
                   help="nccl (default: NCCL's algorithms, protocols and latencies), "
                        "symmetric-memory (one-sided load/store kernels) or ideal (the "
                        "hardware floor); nccl@2.21.5 runs NCCL with the tuner constants of "
                        "that release (2.19 to 2.30.7)")
    p.add_argument("--transport", default=None,
                   help="loadstore or rdma (default: load/store inside a load/store domain, "
                        "RDMA across NICs)")
    p.add_argument("--ranks", nargs="+", metavar="RANK",
                   help="the group: ranks, chip names, ranges A-B (default: every chip)")
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

    fabric = topologies.build(args.system)
    sizes = parse_sizes(args.size)
    ranks = parse_ranks(args.ranks) if args.ranks else None
    ops = [normalize_op(o) for tok in args.op for o in tok.split(",") if o.strip()]
    if "all-to-allv" in ops:
        raise SpecError("all-to-allv takes a traffic matrix, not a size; use "
                         "analysis.cost(fabric, 'all-to-allv', matrix) from Python")
    results = []
    for op in ops:
        results += cost_sizes(fabric, op, sizes, algorithm=args.algorithm,
                              runtime=args.runtime, ranks=ranks, transport=args.transport)
    if args.json:
        print(to_json([{"op": r.op, "size": int(r.size), "runtime": r.runtime,
                           "algorithm": r.algorithm, "protocol": r.protocol,
                           "transport": r.transport, "time": r.time, "algbw": r.algbw,
                           "busbw": r.busbw, "lower_bound": r.lower_bound}
                          for r in results]))
        return 0
    from ._table import format_table

    rows = [[r.op, format_size(r.size), r.algorithm + (f"/{r.protocol}" if r.protocol else ""),
             r.transport, format_time(r.time), format_bandwidth(r.algbw),
             format_bandwidth(r.busbw), _gap(r)] for r in results]
    print(format_table(["op", "size", "algorithm", "transport", "time", "algbw", "busbw",
                        "x bound"], rows))
    first = results[0]
    print(f"{fabric.name}, {first.ranks} ranks, runtime {first.runtime}; bandwidths in bytes/s "
          f"(GB = 1e9); busbw is algbw times the nccl-tests factor; x bound: time over the "
          f"lower bound the model proves (injection, cuts, max-concurrent-flow)")
    return 0
