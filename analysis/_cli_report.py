"""``cofabric report`` (the comparison report) and ``cofabric figures`` (the README's figures)."""

import json
import sys

from fabric._units import check_count

from ._cli import whole_number

__all__ = []

#: ``cofabric report``'s processes when ``--jobs`` is not given: the usable processors, at
#: most this many. Each worker holds its own fabrics and plans (~0.25 GB at the default
#: report's peak on the 2-core session machine, measured in benchmarks/README.md), and on
#: more cores the report's few long sweeps and 23 figures leave further workers idle.
DEFAULT_JOBS_CAP = 4


def register(sub):
    from analysis import DEFAULT_OPS, DEFAULT_SYSTEMS

    p = sub.add_parser(
        "report", help="write a comparison report (HTML, Markdown, CSV, figures)",
        description="Compare fabrics on the same work and write a report to DIR: index.html "
                    "(self-contained), report.md, one CSV per table and figures/ (PDF, SVG, "
                    "PNG). SYSTEM is a preset or a topology spec; with none, the default "
                    "comparison: " + ", ".join(DEFAULT_SYSTEMS) + " (one chip, so that the "
                    "fabrics are compared). The page opens with what was compared, under "
                    "which runtime, and the answer head to head ('In short'); on a terminal "
                    "the command prints the same.")
    p.add_argument("systems", nargs="*", metavar="SYSTEM", help="preset or topology spec")
    p.add_argument("--out", default="report", metavar="DIR",
                   help="output directory (default: report/)")
    p.add_argument("--sizes", nargs="+", action="extend", metavar="SIZE",
                   help="collective sizes per rank: sizes (4KiB) or ranges (1KiB:1GiB:x2); "
                        "default 1KiB:1GiB:x2")
    p.add_argument("--ops", nargs="+", action="extend", metavar="OP",
                   help="collective operations (default: " + ", ".join(DEFAULT_OPS) + ")")
    p.add_argument("--force", action="store_true", help="replace an existing report in DIR")
    p.add_argument("--quiet", action="store_true",
                   help="no progress bar, and on a terminal no summary: only the page's path")
    p.add_argument("--jobs", type=whole_number, default=None, metavar="N",
                   help="draw the figures in N local processes, each section's as soon as it "
                        "is built, at most the processors this process may use (the sweeps "
                        "run in this one, where they share the fabrics' routes); the files "
                        "are the same for any N (default: those processors, at most "
                        f"{DEFAULT_JOBS_CAP}; 1: all in this process)")
    p.add_argument("--json", action="store_true",
                   help="print the files written, the 'In short' paragraphs and the "
                        "findings as JSON")
    p.set_defaults(func=run_report)

    f = sub.add_parser(
        "figures", help="regenerate the figures the README shows",
        description="Write the README's figures (PDF, SVG, PNG) to DIR; the same inputs "
                    "and library versions give the same bytes (a PDF embeds its fonts as the "
                    "installed fonttools subsets them). They are figures of the default report with the "
                    "all-reduce sweep: the collective figure is the model's schedules with no "
                    "software costs (runtime 'ideal'); the symmetric-memory figure's left "
                    "panel 'ideal', its right panel NCCL's model against the symmetric-memory "
                    "kernels; the latency and link-utilization figures time loads and routed "
                    "link loads (no collective runtime). The report's captions say the same.")
    f.add_argument("--out", default="figures", metavar="DIR",
                   help="output directory (default: figures/)")
    f.add_argument("--quiet", action="store_true", help="no progress bar")
    f.add_argument("--json", action="store_true", help="print the files written as JSON")
    f.set_defaults(func=run_figures)


def usable_processors():
    """The processors this process may run on: its CPU affinity where the OS gives one
    (``taskset``, a container's cpuset), else ``os.cpu_count()``; at least 1."""
    import os

    try:
        return len(os.sched_getaffinity(0)) or 1
    except AttributeError:          # no affinity call on this OS (macOS, Windows)
        return os.cpu_count() or 1


def processes_for_jobs(jobs, default=DEFAULT_JOBS_CAP):
    """How many processes ``--jobs jobs`` runs: at most :func:`usable_processors` (a pool
    forks every worker at its first task: ``--jobs 1000`` forked 1000 copies of a ~0.7 GB
    process; the files are the same for any count); ``jobs=None`` is the usable
    processors, at most ``default``; bad counts are bad input."""
    if jobs is None:
        jobs = default
    else:           # 2.5 was 2 processes; the CLI's --jobs is a whole number already
        jobs = check_count(jobs, "--jobs", 1)
    return min(jobs, usable_processors())


def executor_for_jobs(jobs, default=DEFAULT_JOBS_CAP):
    """A process pool of :func:`processes_for_jobs` workers, or None for one (serial)."""
    jobs = processes_for_jobs(jobs, default)
    if jobs == 1:
        return None
    import concurrent.futures

    return concurrent.futures.ProcessPoolExecutor(jobs)


def _command(args):
    # The options that change the content (not where it goes or how fast it is made).
    words = ["cofabric", "report", *args.systems]
    if args.sizes:
        words += ["--sizes", *args.sizes]
    if args.ops:
        words += ["--ops", *args.ops]
    return " ".join(words)


def run_report(args):
    from pathlib import Path

    from analysis import DEFAULT_SYSTEMS, build_report, write_report

    from ._report import report_dir
    from ._report_render import FigureDrawing

    out = report_dir(args.out, args.force, flags=True)  # fail before computing, not after
    systems = tuple(args.systems or DEFAULT_SYSTEMS)
    # The sweeps run here: their points share the fabrics' routes and plans, which a pool's
    # workers would each derive again (2.3x the sections' CPU, measured in
    # benchmarks/README.md). The figures are drawn apart, on the pool, each section's as soon
    # as it is built (the workers fork at the first, after the fabrics are built), while the
    # later sections compute.
    executor = executor_for_jobs(args.jobs)
    drawing = None
    try:
        if executor is not None:
            drawing = FigureDrawing(executor, systems, Path(out).resolve().parent)
        report = build_report(systems, sizes=args.sizes, ops=args.ops, quiet=args.quiet,
                              command=_command(args),
                              on_section=drawing.section if drawing else None)
        index = write_report(report, args.out, force=args.force, quiet=args.quiet,
                             executor=executor, drawing=drawing)
    finally:
        if executor is not None:        # first: a figure still drawing writes its files
            executor.shutdown(cancel_futures=True)
        if drawing is not None:
            drawing.close()
    if args.json:
        files = sorted(str(p) for p in index.parent.rglob("*") if p.is_file())
        print(json.dumps({"index": str(index), "files": files,
                          "overview": list(report.overview),
                          "findings": list(report.findings)}, indent=2))
    else:
        print(index)
        if not args.quiet and sys.stdout.isatty():
            print(terminal_summary(report, index))
    return 0


def terminal_summary(report, index):
    """What ``cofabric report`` prints on a terminal after the path: the page's 'In short'
    paragraphs and where the findings are (it printed every finding, some 30,000
    characters, which scrolled the answer away).

    >>> from analysis._report_parts import Report
    >>> print(terminal_summary(Report(("a",), (("S", ("x.", "y.")),), (), "c", ("A.",)), "r/i"))
    In short:
      A.
    2 findings: r/i (or report.md beside it)
    """
    import textwrap

    lines = ["In short:"] if report.overview else []
    for p in report.overview:
        lines += textwrap.wrap(p, 96, initial_indent="  ", subsequent_indent="  ")
    lines.append(f"{len(report.findings)} findings: {index} (or report.md beside it)")
    return "\n".join(lines)


def run_figures(args):
    from analysis import write_figures

    from ._report import output_dir

    output_dir(args.out, "figures", flags=True)     # refused in the command's words (--out)
    files = write_figures(args.out, quiet=args.quiet)
    if args.json:
        print(json.dumps([str(p) for p in files], indent=2))
    else:
        print("\n".join(str(p) for p in files))
    return 0
