"""``cofabric scaling [--out DIR]``: the scaling study, a CSV and one figure per metric."""

from fabric._units import is_float

from ._cli import whole_number
from ._json_units import to_json

__all__ = []


def register(sub):
    import inspect

    from ._scaling import SCALING_FAMILIES, scaling_study

    p = sub.add_parser(
        "scaling", help="scaling study: each family from ~64 to ~16k chips, per-chip metrics",
        description="Build each family (" + ", ".join(SCALING_FAMILIES) + ") at about 64, "
                    "512, 4k and 16k chips and write DIR/scaling.csv (SI units named in the "
                    "columns), DIR/scaling.md and DIR/figures/scaling-<metric>.{pdf,svg,png}.")
    p.add_argument("--out", default="scaling", metavar="DIR",
                   help="output directory (default: scaling/)")
    # Given again, a list option adds to its list (as cost's --op/--size/--ranks do); the
    # defaults are scaling_study's own, used when the option is not given at all.
    sizes = inspect.signature(scaling_study).parameters["sizes"].default
    p.add_argument("--families", nargs="+", action="extend", metavar="FAMILY",
                   help="families to build (default: " + " ".join(SCALING_FAMILIES) + ")")
    p.add_argument("--sizes", nargs="+", action="extend", type=whole_number, metavar="N",
                   help="target chip counts (default: " + " ".join(map(str, sizes)) + ")")
    p.add_argument("--collective-limit", type=whole_number, default=20000, metavar="N",
                   help="evaluate collectives on fabrics up to N chips (default 20000: every "
                        "size)")
    p.add_argument("--decode-limit", type=whole_number, default=20000, metavar="N",
                   help="evaluate decode on fabrics up to N chips (default 20000: every size)")
    p.add_argument("--jobs", type=whole_number, default=2, metavar="N",
                   help="evaluate the points in N local processes, at most this machine's "
                        "processors (default 2; the rows are the same)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--json", action="store_true", help="print the rows as JSON")
    p.set_defaults(func=run)


def _markdown(rows):
    """scaling.md: the report's scaling table (its columns, labels and formats:
    :func:`analysis._report_scaling.scaling_columns`) with each row's spec and note, under a
    sentence saying what its times include. Its cells had read the CSV's column names and
    '2.67e+04' for dollars, and no runtime was named."""
    from ._report_scaling import scaling_placement, scaling_runtimes

    cols = _columns()
    lines = ["# Scaling study", "",
             (f"Per-chip metrics (SI units in scaling.csv); H100 chips throughout. "
              f"{scaling_runtimes()} {scaling_placement()} n/a: not evaluated (see note)."), "",
             "| " + " | ".join(c.label for c in cols) + " |", "|" + "---|" * len(cols)]
    lines += ["| " + " | ".join(_fmt(r.get(c.key), c.key) for c in cols) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def _columns():
    """scaling.md's columns: the report's scaling table's, with each row's spec and note."""
    from ._report_parts import Column
    from ._report_scaling import scaling_columns

    cols = list(scaling_columns())
    return cols[:1] + [Column("spec", "spec")] + cols[1:] + [Column("note", "note")]


def _fmt(v, key):
    """A cell of scaling.md: ``v`` of column ``key`` as the report's scaling table shows it
    (times and bandwidths in human units with four significant digits, dollars and watts
    with their units), 'n/a' where not evaluated."""
    col = next(c for c in _columns() if c.key == key)
    return "n/a" if v is None else col.fmt(v)


def run(args):
    import csv

    from ._cli_report import executor_for_jobs
    from ._report import output_dir
    from ._scaling import SCALING_METRICS, scaling_study
    from ._style import paper_style, save_figure

    out = output_dir(args.out, "scaling", parents=True, flags=True)   # before minutes of work, not after
    # scaling_study refuses bad arguments with SpecError (exit 2); any other ValueError
    # from the study itself is a bug and shows as one
    # a family or size given twice is studied once (as cost's --size list drops repeats):
    # twice, it built and evaluated the same fabric twice and wrote its rows twice
    given = {k: list(dict.fromkeys(v)) for k, v in (("families", args.families),
                                                      ("sizes", args.sizes)) if v is not None}
    rows = scaling_study(**given, collective_limit=args.collective_limit,
                         decode_limit=args.decode_limit, quiet=args.quiet,
                         executor=executor_for_jobs(args.jobs))
    out.mkdir(parents=True, exist_ok=True)
    keys = [k for k in rows[0] if k != "seconds"]     # run time: not a result (determinism)
    with open(out / "scaling.csv", "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(keys)
        for r in rows:
            # float() first: numpy 2's repr of its scalars is "np.float64(...)"
            w.writerow(["" if r[k] is None else repr(float(r[k])) if is_float(r[k])
                        else r[k] for k in keys])
    (out / "scaling.md").write_text(_markdown(rows), encoding="utf-8")
    for metric in SCALING_METRICS:
        name = f"scaling-{metric.removesuffix('_Bps').removesuffix('_s')}"
        with paper_style("single"):
            save_figure(_drawer(rows, metric)(), out / "figures" / name)
    if args.json:
        print(to_json(rows))
    else:
        print(f"wrote {out}/scaling.csv, scaling.md and {len(SCALING_METRICS)} figures")
    return 0


class _drawer:
    """A picklable figure-drawing callable for one metric."""

    def __init__(self, rows, metric):
        self.rows, self.metric = rows, metric

    def __call__(self):
        from matplotlib.figure import Figure

        from ._report_scaling import metric_runtime_label
        from ._scaling import DECODE_CHIPS, draw_scaling

        fig = Figure()
        ax = fig.subplots()
        # a figure read on its own says what its times include (as the report's panels do);
        # the decode step, which is not a collective, its collectives' runtime and where its
        # instance sits (a dragonfly's point moves with the groups its first chips span)
        under = metric_runtime_label(self.metric)
        if self.metric == "decode_step_s":
            ax.set_title(f"collectives: {under}\ninstance: the first {DECODE_CHIPS} chips "
                         "(what they span: scaling.md)", fontsize="small")
        elif under:
            ax.set_title(under, fontsize="small")
        draw_scaling(self.rows, self.metric, ax=ax, dodge=True)
        return fig
